//===- examples_gpu_test.cpp - every example on the GPU vs reference mode -===//
//
// This file runs each example kernel through the whole compiler (captured IR
// -> kite-lower -> CUDA -> NVRTC -> plan) on the GPU and compares it with the
// same kernel run natively in reference mode, on fresh random inputs, at
// sizes that are not multiples of any block size, under several configs,
// with outputs poisoned (0xFF bytes) before every launch. It also compiles
// every example's CUDA with NVRTC for sm_90a under a sweep of configs, which
// needs no GPU.
//
//===----------------------------------------------------------------------===//

#include "lowering/Compiler.h"
#include "runtime/Launch.h"
#include "runtime/Nvrtc.h"

#include "../reference/compare.hpp"

#include <kite/runtime.hpp>

#include <algorithm>
#include <functional>
#include <sstream>
#include <map>

// The kernels, compiled natively for reference mode.
#include "../../examples/add.kite.cpp"
#include "../../examples/any_rank.kite.cpp"
#include "../../examples/attention.kite.cpp"
#include "../../examples/bmm.kite.cpp"
#include "../../examples/causal_attention.kite.cpp"
#include "../../examples/cross_entropy.kite.cpp"
#include "../../examples/cumsum.kite.cpp"
#include "../../examples/embedding.kite.cpp"
#include "../../examples/exp.kite.cpp"
#include "../../examples/histogram.kite.cpp"
#include "../../examples/layernorm.kite.cpp"
#include "../../examples/linear.kite.cpp"
#include "../../examples/long_sum.kite.cpp"
#include "../../examples/matmul.kite.cpp"
#include "../../examples/matmul_bias_relu.kite.cpp"
#include "../../examples/mlp.kite.cpp"
#include "../../examples/random.kite.cpp"
#include "../../examples/rmsnorm.kite.cpp"
#include "../../examples/sampling.kite.cpp"
#include "../../examples/scaled_matmul.kite.cpp"
#include "../../examples/softmax.kite.cpp"
#include "../../examples/sum.kite.cpp"
#include "../../examples/swiglu.kite.cpp"
#include "kernels/masked_loops.kite.cpp"
#include "kernels/sorts.kite.cpp"
#include "kernels/atomics.kite.cpp"
#include "kernels/fp8.kite.cpp"
#include "kernels/stores.kite.cpp"
#include "../../examples/topk.kite.cpp"
#include "../../examples/welford.kite.cpp"

// The captured IR of every example file, by file stem (generated at build
// time by `kite compile`).
#include "examples_ir.h"

using namespace kite;
using kite_test::allClose;
using kite_test::Tolerance;

namespace {

/// One launch argument: a host tensor (copied to the GPU) or a scalar.
struct Arg {
  std::string name;
  std::optional<Tensor> tensor;
  double scalar = 0;
  DType scalarType = DType::f64;
};

/// A test case: an example kernel, a way to make inputs of a given size, the
/// reference call, and tolerance.
struct Case {
  std::string file, kernel;
  std::vector<int64_t> sizes; // the problem sizes to run
  std::function<std::vector<Arg>(int64_t size, uint64_t seed)> inputs;
  std::function<std::vector<Tensor>(const std::vector<Arg> &)> reference;
  std::vector<std::string> configs;
  double scale = 1.0; // typical output magnitude for the tolerance
  std::string label;  // the test's name, if not the kernel's
  bool exact = false; // outputs must match reference mode bit for bit
};

Arg T(std::string name, Tensor t) { return Arg{std::move(name), std::move(t)}; }
Arg S(std::string name, double v, DType type) { return Arg{std::move(name), std::nullopt, v, type}; }

std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }
template <class... Ts> std::vector<Tensor> many(std::tuple<Ts...> t) {
  return std::apply([](auto &...x) { return std::vector<Tensor>{x...}; }, t);
}

std::string ir(const std::string &file) {
  for (const auto &e : kite_test_ir::kFiles)
    if (file == e.name)
      return e.text;
  ADD_FAILURE() << "no captured IR for " << file;
  return "";
}

std::vector<ArgSpec> specsOf(const std::vector<Arg> &args, const std::vector<Tensor> &device) {
  std::vector<ArgSpec> specs;
  size_t t = 0;
  for (const Arg &a : args) {
    if (a.tensor)
      specs.push_back(ArgSpec::of(a.name, device[t++]));
    else
      specs.push_back(ArgSpec::scalar(a.name, a.scalarType, a.scalar));
  }
  return specs;
}

std::vector<Case> cases() {
  const DType bf = DType::bf16, f = DType::f32;
  std::vector<Case> c;
  c.push_back({"add", "add", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 129}, f, s)), T("y", randn({n, 129}, f, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(add(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[1,1]})", R"({"block_sizes":[8,32],"num_warps":2})",
                R"({"block_sizes":[16,64],"num_warps":8})", R"({"block_sizes":[4,128],"loop_orders":[[0,1]]})",
                R"({"block_sizes":[32,16],"num_warps":1})", R"({"block_sizes":[8,32],"pid_type":"xyz"})",
                R"({"block_sizes":[8,32],"pid_type":"persistent_interleaved"})",
                R"({"block_sizes":[8,32],"pid_type":"persistent_blocked"})",
                R"({"block_sizes":[8,32],"pid_type":"persistent_dynamic"})"}});
  // Any rank (tile(x.sizes())): n picks the rank, 1 to 6, and the sizes.
  auto anyRankShape = [](int64_t n) -> std::vector<int64_t> {
    switch (n) {
    case 1: return {1};
    case 7: return {7, 3, 5};
    case 1000: return {2, 1000, 3, 3};
    default: return {3, 2, 1, n, 1, 3};
    }
  };
  c.push_back({"any_rank", "add_any", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn(anyRankShape(n), f, s)),
                                         T("y", randn(anyRankShape(n), f, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(add_any(*a[0].tensor, *a[1].tensor)); },
               // Block sizes differ by rank: the default's, with other launches
               // (xyz only fits ranks up to 3).
               {"", R"({"num_warps":2})", R"({"num_warps":16})", R"({"num_warps":1,"pid_type":"xyz"})",
                R"({"num_warps":8,"pid_type":"persistent_interleaved"})",
                R"({"pid_type":"persistent_blocked"})"}});
  c.push_back({"exp", "exp_kernel", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) { return std::vector<Arg>{T("x", randn({n, 3}, bf, s))}; },
               [](const std::vector<Arg> &a) { return one(exp_kernel(*a[0].tensor)); },
               {"", R"({"block_sizes":[1]})", R"({"block_sizes":[32],"num_warps":1})",
                R"({"block_sizes":[256]})", R"({"block_sizes":[1024],"num_warps":8})"}});
  c.push_back({"softmax", "softmax", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) { return std::vector<Arg>{T("x", randn({37, n}, bf, s))}; },
               [](const std::vector<Arg> &a) { return one(softmax(*a[0].tensor)); },
               {"", R"({"block_sizes":[1]})", R"({"block_sizes":[2],"num_warps":2})",
                R"({"block_sizes":[4],"num_warps":8})", R"({"block_sizes":[1],"num_warps":1})",
                R"({"block_sizes":[2],"pid_type":"persistent_interleaved"})", R"({"block_sizes":[1],"reduction_loops":[256]})", R"({"block_sizes":[2],"num_warps":2,"reduction_loops":[64]})",
                R"({"block_sizes":[4],"num_warps":4,"inner_threads":32,"fast_math":true})",
                R"({"block_sizes":[2],"num_warps":2,"inner_threads":8,"reduction_loops":[256],"fast_math":true})"}});
  c.push_back({"softmax", "softmax_two_pass", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) { return std::vector<Arg>{T("x", randn({19, n}, f, s))}; },
               [](const std::vector<Arg> &a) { return one(softmax_two_pass(*a[0].tensor)); },
               {"", R"({"block_sizes":[1,64]})", R"({"block_sizes":[2,256],"num_warps":2})",
                R"({"block_sizes":[4,32],"num_warps":8})", R"({"block_sizes":[1,1024]})"}});
  // layernorm and layer_norm: x [13, n], weight and bias [n], eps.
  auto layerNormInputs = [=](int64_t n, uint64_t s) {
    return std::vector<Arg>{T("x", randn({13, n}, bf, s)), T("weight", randn({n}, bf, s + 1)),
                            T("bias", randn({n}, bf, s + 2)), S("eps", 1e-5, DType::f64)};
  };
  c.push_back({"layernorm", "layernorm", {1, 7, 1000, 4097}, layerNormInputs,
               [](const std::vector<Arg> &a) {
                 return many(layernorm(*a[0].tensor, *a[1].tensor, *a[2].tensor, a[3].scalar));
               },
               {"", R"({"block_sizes":[1]})", R"({"block_sizes":[2],"num_warps":2})",
                R"({"block_sizes":[1],"num_warps":8})", R"({"block_sizes":[2],"num_warps":16})", R"({"block_sizes":[4],"num_warps":8})", R"({"block_sizes":[8],"num_warps":4})", R"({"block_sizes":[1],"reduction_loops":[128]})", R"({"block_sizes":[4],"num_warps":8,"reduction_loops":[512]})",
                R"({"block_sizes":[8],"num_warps":4,"inner_threads":32})",
                R"({"block_sizes":[2],"num_warps":4,"early_loads":true})",
                R"({"block_sizes":[1],"num_warps":8,"reduction_loops":[256],"l2_hints":"reuse","early_loads":true})"}});
  c.push_back({"layernorm", "layer_norm", {1, 7, 1000, 4097}, layerNormInputs,
               [](const std::vector<Arg> &a) {
                 return one(layer_norm(*a[0].tensor, *a[1].tensor, *a[2].tensor, a[3].scalar));
               },
               {"", R"({"block_sizes":[1],"num_warps":8})", R"({"block_sizes":[2],"num_warps":16})",
                R"({"block_sizes":[4],"num_warps":4,"reduction_loops":[256]})",
                R"({"block_sizes":[4],"num_warps":4,"reduction_loops":[256],"l2_hints":"keep_loads","streaming":true})",
                R"({"block_sizes":[2],"num_warps":4,"early_loads":true})",
                R"({"block_sizes":[1],"num_warps":8,"reduction_loops":[512],"l2_hints":"reuse"})",
                // Too big at 4097 columns (8 rows of 8192 in registers): rejected there.
                R"({"block_sizes":[8],"num_warps":4,"inner_threads":32,"early_loads":true})",
                R"({"block_sizes":[1],"num_warps":8,"l2_hints":"keep_loads","streaming":true,"min_programs_per_sm":4})"}});
  c.push_back({"rmsnorm", "rmsnorm", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({13, n}, bf, s)), T("weight", randn({n}, bf, s + 1)),
                                         S("eps", 1e-6, DType::f64)};
               },
               [](const std::vector<Arg> &a) { return one(rmsnorm(*a[0].tensor, *a[1].tensor, a[2].scalar)); },
               {"", R"({"block_sizes":[1]})", R"({"block_sizes":[2],"num_warps":2})",
                R"({"block_sizes":[1],"num_warps":8})", R"({"block_sizes":[2],"num_warps":16})", R"({"block_sizes":[4],"num_warps":8})", R"({"block_sizes":[16],"num_warps":4})", R"({"block_sizes":[1],"reduction_loops":[256]})", R"({"block_sizes":[2],"num_warps":16,"reduction_loops":[1024]})",
                R"({"block_sizes":[2],"num_warps":1,"inner_threads":16,"reduction_loops":[256]})",
                R"({"block_sizes":[1],"num_warps":16,"early_loads":true})",
                R"({"block_sizes":[2],"num_warps":4,"reduction_loops":[256],"early_loads":true})"}});
  c.push_back({"sum", "sum_kernel", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) { return std::vector<Arg>{T("x", randn({21, n}, f, s))}; },
               [](const std::vector<Arg> &a) { return one(sum_kernel(*a[0].tensor)); },
               {"", R"({"block_sizes":[1]})", R"({"block_sizes":[2],"num_warps":2})",
                R"({"block_sizes":[1],"num_warps":8})", R"({"block_sizes":[2],"num_warps":16})", R"({"block_sizes":[4],"num_warps":8})", R"({"block_sizes":[8],"num_warps":2})",
                R"({"block_sizes":[1],"reduction_loops":[64]})", R"({"block_sizes":[4],"num_warps":2,"reduction_loops":[512]})",
                R"({"block_sizes":[8],"num_warps":4,"inner_threads":16})"}, 30.0});
  c.push_back({"long_sum", "long_sum", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) { return std::vector<Arg>{T("x", randn({21, n}, f, s))}; },
               [](const std::vector<Arg> &a) { return one(long_sum(*a[0].tensor)); },
               {"", R"({"block_sizes":[1,64]})", R"({"block_sizes":[2,256],"num_warps":2})",
                R"({"block_sizes":[4,32],"num_warps":8})", R"({"block_sizes":[1,1024]})"}, 30.0});
  c.push_back({"cross_entropy", "cross_entropy", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("logits", randn({17, n}, bf, s)),
                                         T("target", randint(0, n, {17}, DType::i64, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(cross_entropy(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[1]})", R"({"block_sizes":[2],"num_warps":2})",
                R"({"block_sizes":[1],"num_warps":8})", R"({"block_sizes":[2],"num_warps":16})", R"({"block_sizes":[4],"num_warps":8})", R"({"block_sizes":[8]})", R"({"block_sizes":[1],"reduction_loops":[256]})", R"({"block_sizes":[2],"num_warps":8,"reduction_loops":[2048]})",
                R"({"block_sizes":[4],"num_warps":4,"inner_threads":32,"fast_math":true})",
                R"({"block_sizes":[1],"num_warps":16,"reduction_loops":[512],"fast_math":true})",
                R"({"block_sizes":[2],"num_warps":8,"early_loads":true})",
                R"({"block_sizes":[1],"num_warps":4,"reduction_loops":[256],"early_loads":true})"}});
  c.push_back({"embedding", "embedding", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("ids", randint(0, 1000, {n}, DType::i64, s)),
                                         T("weight", randn({1000, 33}, f, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(embedding(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[1,1]})", R"({"block_sizes":[16,16],"num_warps":2})",
                R"({"block_sizes":[64,32],"num_warps":8})", R"({"block_sizes":[4,64]})"}});
  c.push_back({"swiglu", "swiglu", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("a", randn({n, 67}, bf, s)), T("b", randn({n, 67}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(swiglu(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[1,1]})", R"({"block_sizes":[8,32],"num_warps":2})",
                R"({"block_sizes":[16,128],"num_warps":8})", R"({"block_sizes":[2,64]})"}});
  // Two product loops a tile (the gate and the up-projection), on the
  // main loop and as ordinary kernel code (both sums carried in
  // registers), in flat and persistent programs.
  c.push_back({"swiglu", "swiglu_up", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 136}, bf, s)), T("w1", randn({136, 264}, bf, s + 1)),
                                         T("w3", randn({136, 264}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) { return one(swiglu_up(*a[0].tensor, *a[1].tensor, *a[2].tensor)); },
               {"", R"({"block_sizes":[128,256,64,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[128,128,64,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true})",
                R"({"block_sizes":[128,256,64,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_dynamic"})",
                R"({"block_sizes":[64,128,64,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"})"},
               100.0});
  c.push_back({"matmul", "matmul", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 77}, bf, s)), T("y", randn({77, 65}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::matmul(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[16,16,16]})", R"({"block_sizes":[32,64,8],"num_warps":2})",
                R"({"block_sizes":[64,32,32],"num_warps":8})", R"({"block_sizes":[1,128,64]})",
                R"({"block_sizes":[16,16,16],"l2_groupings":[4]})",
                R"({"block_sizes":[16,32,16],"pid_type":"xyz"})",
                R"({"block_sizes":[16,16,32],"pid_type":"persistent_blocked","l2_groupings":[2]})",
                R"({"block_sizes":[32,16,16],"pid_type":"persistent_interleaved","loop_orders":[[0,1]]})",
                R"({"block_sizes":[64,64,32],"num_warps":4,"tensor_cores":true})",
                R"({"block_sizes":[16,16,16],"num_warps":1,"tensor_cores":true})",
                R"({"block_sizes":[128,64,32],"num_warps":8,"tensor_cores":true,"pid_type":"persistent_interleaved"})",
                R"({"block_sizes":[64,64,64],"num_warps":4,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[64,128,64],"num_warps":4,"num_stages":3,"tensor_cores":true,"wgmma":true,"pid_type":"persistent_dynamic"})",
                R"({"block_sizes":[64,64,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})"}, 10.0});
  // Rows of 264 and 136 elements: the pipelined main loop copies 16 bytes
  // at a time (above, rows of 77 and 65 are read by shifted 16-byte loads),
  // with partial tiles along M, N and K.
  c.push_back({"matmul", "matmul", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 264}, bf, s)), T("y", randn({264, 136}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::matmul(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[128,128,32],"num_warps":8,"num_stages":3,"tensor_cores":true})",
                R"({"block_sizes":[64,64,64],"num_warps":4,"num_stages":4,"tensor_cores":true})",
                R"({"block_sizes":[64,128,32],"num_warps":4,"num_stages":2,"tensor_cores":true,"l2_groupings":[4]})",
                R"({"block_sizes":[16,16,16],"num_warps":1,"num_stages":5,"tensor_cores":true})",
                R"({"block_sizes":[128,256,32],"num_warps":8,"num_stages":3,"tensor_cores":true,"pid_type":"persistent_interleaved"})",
                R"({"block_sizes":[32,32,128],"num_warps":2,"num_stages":2,"tensor_cores":true})",
                R"({"block_sizes":[128,256,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[64,64,64],"num_warps":4,"num_stages":3,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[128,128,64],"num_warps":4,"num_stages":2,"tensor_cores":true,"wgmma":true,"l2_groupings":[2]})",
                R"({"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[64,256,64],"num_warps":8,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[64,256,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[256,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","l2_groupings":[4]})",
                R"({"block_sizes":[128,64,64],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})"},
               10.0, "matmul_aligned"});
  // generic_mainloop: the product loop as ordinary kernel code, both
  // operands streamed by the producer's TMA (the left one in 8-row boxes in
  // the A fragments' row order), the sums in registers; K = 264 ends in a
  // partial K tile, N = 136 in a partial column tile; flat and persistent
  // programs, one and two consumers, and without a producer (A from
  // registers).
  c.push_back({"matmul", "matmul", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 264}, bf, s)), T("y", randn({264, 136}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::matmul(*a[0].tensor, *a[1].tensor)); },
               {R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true})",
                R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"})",
                R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_dynamic"})",
                R"({"block_sizes":[64,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true})",
                R"({"block_sizes":[128,128,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"})",
                R"({"block_sizes":[128,128,64],"num_warps":4,"num_stages":2,"tensor_cores":true,"wgmma":true,"generic_mainloop":true})"},
               10.0, "matmul_generic"});
  // Clusters of two programs (cluster_size 2) on the product loop as
  // kernel code: by default neighbouring column tiles (N = 200: 2 tiles of
  // 128 or 4 of 64, the last partial) share x's tile, which the producers
  // multicast (8-row boxes, or 64-row blocks where the tile starts on a
  // multiple of 8 rows); with l2_groupings or loop_orders [[0, 1]],
  // neighbouring row tiles share y's (rejected where the rows make an odd
  // number of tiles: at 1, 7 and 300 rows of 128).
  c.push_back({"matmul", "matmul", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 264}, bf, s)), T("y", randn({264, 200}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::matmul(*a[0].tensor, *a[1].tensor)); },
               {R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"cluster_size":2})",
                R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved","cluster_size":2})",
                R"({"block_sizes":[64,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"cluster_size":2})",
                R"({"block_sizes":[128,64,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved","cluster_size":2})",
                R"({"block_sizes":[64,64,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"cluster_size":2})",
                R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved","l2_groupings":[2],"cluster_size":2})",
                R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"loop_orders":[[0,1]],"cluster_size":2})"},
               10.0, "matmul_cluster"});
  // Rows of 203 and 301 elements (odd: every 2-byte shift occurs) on the
  // main loops: aligned 16-byte loads shifted into place, partial chunks at
  // the rows' ends and the last row's end read element by element; with
  // indexing "tma", TMA from staged copies padded to 16-byte rows.
  c.push_back({"matmul", "matmul", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 203}, bf, s)), T("y", randn({203, 301}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::matmul(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[128,128,32],"num_warps":8,"num_stages":3,"tensor_cores":true})",
                R"({"block_sizes":[64,64,64],"num_warps":4,"num_stages":4,"tensor_cores":true})",
                R"({"block_sizes":[16,16,16],"num_warps":1,"num_stages":2,"tensor_cores":true})",
                R"({"block_sizes":[128,256,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[64,64,64],"num_warps":4,"num_stages":3,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[256,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[64,256,64],"num_warps":8,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[256,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[64,256,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})"},
               10.0, "matmul_unaligned"});
  // Only the right operand's rows (203 elements) are not 16-byte multiples:
  // the warp-specialized producer copies A by cp.async and B by shifted
  // loads, with odd and even counts of K steps.
  c.push_back({"matmul", "matmul", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 264}, bf, s)), T("y", randn({264, 203}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::matmul(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[256,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[128,128,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[64,64,64],"num_warps":8,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true})"},
               10.0, "matmul_unaligned_rhs"});
  // K split over 2, 3 or 4 programs a tile (split_k): K = 1000 is 16 tiles
  // of 64 with a partial last one, so the shares are uneven and, split 3
  // ways, the last is short; the tile's last program adds the shares and
  // runs the epilogue (bias and relu), on TMA and cp.async main loops.
  c.push_back({"matmul_bias_relu", "matmul_bias_relu", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 1000}, bf, s)), T("y", randn({1000, 264}, bf, s + 1)),
                                         T("bias", randn({264}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) {
                 return one(matmul_bias_relu(*a[0].tensor, *a[1].tensor, *a[2].tensor));
               },
               {R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","split_k":2})",
                R"({"block_sizes":[64,128,64],"num_warps":8,"num_stages":6,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","split_k":4})",
                R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"split_k":3})",
                R"({"block_sizes":[128,128,32],"num_warps":8,"num_stages":3,"tensor_cores":true,"split_k":2})"},
               30.0, "matmul_bias_relu_split_k"});
  c.push_back({"matmul_bias_relu", "matmul_bias_relu", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 264}, bf, s)), T("y", randn({264, 136}, bf, s + 1)),
                                         T("bias", randn({136}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) {
                 return one(matmul_bias_relu(*a[0].tensor, *a[1].tensor, *a[2].tensor));
               },
               {"", R"({"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[64,128,64],"num_warps":8,"num_stages":6,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","l2_groupings":[8]})"},
               10.0, "matmul_bias_relu_aligned"});
  c.push_back({"matmul_bias_relu", "matmul_bias_relu", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 264}, bf, s)), T("y", randn({264, 136}, bf, s + 1)),
                                         T("bias", randn({136}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) {
                 return one(matmul_bias_relu(*a[0].tensor, *a[1].tensor, *a[2].tensor));
               },
               {R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"})"},
               10.0, "matmul_bias_relu_generic"});
  // The richer epilogue (bias, gelu, scale, residual): the residual and
  // the bias read straight into the sums' layout, on the default config,
  // the generic and the TMA main loops, and a residual whose rows are odd
  // (N = 137: element loads, realigned exchange stores).
  for (int64_t cols : {136, 137})
    c.push_back({"matmul_bias_relu", "matmul_epilogue", {1, 7, 129, 300},
                 [=](int64_t n, uint64_t s) {
                   return std::vector<Arg>{T("x", randn({n, 264}, bf, s)), T("y", randn({264, cols}, bf, s + 1)),
                                           T("bias", randn({cols}, bf, s + 2)),
                                           T("residual", randn({n, cols}, bf, s + 3)),
                                           S("scale", 0.75, DType::f64)};
                 },
                 [](const std::vector<Arg> &a) {
                   return one(matmul_epilogue(*a[0].tensor, *a[1].tensor, *a[2].tensor,
                                              *a[3].tensor, a[4].scalar));
                 },
                 {"", R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"})",
                  R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                  R"({"block_sizes":[64,128,64],"num_warps":4,"num_stages":3,"tensor_cores":true})"},
                 10.0, cols % 2 ? "matmul_epilogue_odd" : "matmul_epilogue"});
  // 16-bit products with a K-major right operand (torch.nn.Linear's
  // weight): rows of 264 elements on the TMA main loop (BKMajor), one and
  // two consumers, persistent programs and split K; the per-product paths
  // (mma.sync, wgmma from registers); as kernel code (generic_mainloop,
  // the default), in clusters too; f16; rows of 77 elements, which the
  // TMA main loop reads from padded copies.
  // linear on x [n, k], w [cols, k] and bias [cols] of `dt`.
  auto linearCase = [&](DType dt, int64_t k, int64_t cols, std::vector<std::string> configs,
                        std::string label, double scale = 10.0) {
    c.push_back({"linear", "linear", {1, 7, 129, 300},
                 [=](int64_t n, uint64_t s) {
                   return std::vector<Arg>{T("x", randn({n, k}, dt, s)), T("w", randn({cols, k}, dt, s + 1)),
                                           T("bias", randn({cols}, dt, s + 2))};
                 },
                 [](const std::vector<Arg> &a) { return one(linear(*a[0].tensor, *a[1].tensor, *a[2].tensor)); },
                 std::move(configs), scale, std::move(label)});
  };
  for (DType dt : {bf, DType::f16})
    linearCase(dt, 264, 200,
               {"", R"({"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[64,128,64],"num_warps":8,"num_stages":6,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","l2_groupings":[8],"pid_type":"persistent_interleaved"})",
                R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","split_k":2})",
                R"({"block_sizes":[64,64,64],"num_warps":4,"num_stages":3,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[64,64,32],"num_warps":4,"num_stages":2,"tensor_cores":true})",
                R"({"block_sizes":[32,32,16],"num_warps":2})",
                R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true})",
                R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_dynamic"})",
                R"({"block_sizes":[64,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved","l2_groupings":[4]})",
                R"({"block_sizes":[128,64,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved","cluster_size":2})",
                R"({"block_sizes":[64,64,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"cluster_size":2})"},
               dt == bf ? "linear" : "linear_f16");
  // Few tiles and a long K (decode shapes): by default 64 x 128 tiles with
  // K split 4 ways (split_k_reduce), rows past M zero-filled, N not a
  // multiple of the tile; the same split with w MN-major.
  linearCase(bf, 2048, 200,
             {"", R"({"block_sizes":[64,128,64],"num_warps":8,"num_stages":6,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","split_k":8})"},
             "linear_decode", 50.0);
  c.push_back({"matmul", "matmul", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 2048}, bf, s)), T("y", randn({2048, 200}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::matmul(*a[0].tensor, *a[1].tensor)); },
               {""}, 50.0, "matmul_decode"});
  linearCase(bf, 77, 99,
             {"", R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
              R"({"block_sizes":[64,128,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
              R"({"block_sizes":[64,64,64],"num_warps":4,"num_stages":2,"tensor_cores":true,"wgmma":true})"},
             "linear_unaligned");
  c.push_back({"linear", "bmm_nt", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("a", randn({3, n, 136}, bf, s)), T("b", randn({3, 72, 136}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(bmm_nt(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[1,128,64,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[1,64,128,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[1,64,64,64],"num_warps":4,"num_stages":3,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[1,128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"})",
                R"({"block_sizes":[1,128,64,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"cluster_size":2})"},
               10.0, "bmm_nt"});
  // FP8 products with a K-major right operand: 16-byte rows (K = 272, two
  // 128-deep stages and a partial one) on the TMA main loop, with one and
  // two consumers and e4m3 x e5m2, and as kernel code (generic_mainloop:
  // flat and persistent programs, clusters); rows of 77 bytes on the
  // CUDA-core path.
  const DType e4 = DType::e4m3, e5 = DType::e5m2;
  // scaled_matmul on x [n, k] and w [cols, k] of `dt` with scales `sx`, `sw`.
  auto scaledCase = [&](DType dt, int64_t k, int64_t cols, double sx, double sw,
                        std::vector<int64_t> sizes, std::vector<std::string> configs,
                        double scale, std::string label) {
    c.push_back({"scaled_matmul", "scaled_matmul", std::move(sizes),
                 [=](int64_t n, uint64_t s) {
                   return std::vector<Arg>{T("x", randn({n, k}, dt, s)), T("w", randn({cols, k}, dt, s + 1)),
                                           S("scale_x", sx, f), S("scale_w", sw, f)};
                 },
                 [](const std::vector<Arg> &a) {
                   return one(scaled_matmul(*a[0].tensor, *a[1].tensor, float(a[2].scalar), float(a[3].scalar)));
                 },
                 std::move(configs), scale, std::move(label)});
  };
  scaledCase(e4, 272, 200, 0.5, 0.25, {1, 7, 129, 300},
             {"", R"({"block_sizes":[128,128,128],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
              R"({"block_sizes":[128,256,128],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
              R"({"block_sizes":[64,128,128],"num_warps":8,"num_stages":6,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","l2_groupings":[8]})",
              R"({"block_sizes":[64,64,32],"num_warps":4})",
              R"({"block_sizes":[128,256,128],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","generic_mainloop":true,"pid_type":"persistent_interleaved","l2_groupings":[8]})",
              R"({"block_sizes":[64,128,128],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","generic_mainloop":true})",
              R"({"block_sizes":[128,128,128],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","generic_mainloop":true,"cluster_size":2})"},
             2.0, "scaled_matmul_e4m3");
  c.push_back({"scaled_matmul", "scaled_matmul_rowwise", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 256}, e4, s)), T("w", randn({136, 256}, e5, s + 1)),
                                         T("scale_x", rand({n}, f, s + 2)), T("scale_w", rand({136}, f, s + 3))};
               },
               [](const std::vector<Arg> &a) {
                 return one(scaled_matmul_rowwise(*a[0].tensor, *a[1].tensor, *a[2].tensor, *a[3].tensor));
               },
               {"", R"({"block_sizes":[128,256,128],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[64,128,128],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[128,128,64],"num_warps":8,"num_stages":2,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[64,64,32],"num_warps":4})",
                R"({"block_sizes":[128,128,128],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","generic_mainloop":true,"pid_type":"persistent_dynamic"})",
                R"({"block_sizes":[128,256,128],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","generic_mainloop":true,"pid_type":"persistent_interleaved"})"},
               4.0, "scaled_matmul_rowwise_mixed"});
  // Few tiles and a long K in 8 bits: by default 64 x 128 tiles on the main
  // loop with K split (split_k_reduce), 128-deep K tiles.
  scaledCase(e4, 2048, 200, 0.5, 0.25, {1, 7, 129, 300},
             {"", R"({"block_sizes":[64,128,128],"num_warps":8,"num_stages":6,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","split_k":4})"},
             8.0, "scaled_matmul_decode");
  scaledCase(e5, 77, 65, 1.0, 1.0, {1, 7, 129},
             {"", R"({"block_sizes":[16,16,16]})", R"({"block_sizes":[32,32,32],"num_warps":4})",
              R"({"block_sizes":[64,64,64],"num_warps":4,"num_stages":2})",
              R"({"block_sizes":[16,64,32],"num_warps":4})"},
             9.0, "scaled_matmul_unaligned");
  c.push_back({"matmul_bias_relu", "matmul_bias_relu", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 77}, bf, s)), T("y", randn({77, 65}, bf, s + 1)),
                                         T("bias", randn({65}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) {
                 return one(matmul_bias_relu(*a[0].tensor, *a[1].tensor, *a[2].tensor));
               },
               {"", R"({"block_sizes":[16,16,16]})", R"({"block_sizes":[32,64,8],"num_warps":2})",
                R"({"block_sizes":[64,32,32],"num_warps":8})", R"({"block_sizes":[8,8,128]})",
                R"({"block_sizes":[32,64,16],"num_warps":2,"tensor_cores":true})",
                R"({"block_sizes":[128,128,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true})"}, 10.0});
  c.push_back({"bmm", "bmm", {1, 7, 129},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("a", randn({3, n, 40}, bf, s)), T("b", randn({3, 40, 33}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::bmm(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[1,16,16,16]})", R"({"block_sizes":[2,32,32,8],"num_warps":2})",
                R"({"block_sizes":[1,64,32,64],"num_warps":8})", R"({"block_sizes":[4,8,8,8]})",
                R"({"block_sizes":[1,16,16,16],"tensor_cores":true})",
                R"({"block_sizes":[1,64,32,32],"num_warps":4,"num_stages":3,"tensor_cores":true})",
                R"({"block_sizes":[1,64,64,64],"num_warps":4,"num_stages":3,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[1,128,128,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[1,64,64,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})"}, 10.0});
  // Rows of 136 and 72 elements: TMA boxes over 3-D tensor maps.
  c.push_back({"bmm", "bmm", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("a", randn({3, n, 136}, bf, s)), T("b", randn({3, 136, 72}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::bmm(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[1,128,64,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[1,128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[1,128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true})",
                R"({"block_sizes":[1,64,128,64],"num_warps":8,"num_stages":5,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})"},
               10.0, "bmm_aligned"});
  // generic_mainloop on batched operands: 3-D tensor maps, the batch a
  // unit dim of the streamed tiles; then in clusters of two programs
  // (cluster_size 2): neighbouring column tiles (N = 72: 2 tiles of 64)
  // share a's tile of their batch.
  c.push_back({"bmm", "bmm", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("a", randn({3, n, 136}, bf, s)), T("b", randn({3, 136, 72}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::bmm(*a[0].tensor, *a[1].tensor)); },
               {R"({"block_sizes":[1,128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true})",
                R"({"block_sizes":[1,128,64,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_dynamic"})",
                R"({"block_sizes":[1,128,64,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"cluster_size":2})",
                R"({"block_sizes":[1,128,64,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved","cluster_size":2})",
                R"({"block_sizes":[1,64,64,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"cluster_size":2})",
                R"({"block_sizes":[1,64,64,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved","cluster_size":2})",
                R"({"block_sizes":[1,128,64,64],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"cluster_size":2})"},
               10.0, "bmm_generic"});
  // Rows of 77 elements on both sides (the right operand's 99 too): with
  // indexing "tma" the TMA main loop reads staged, padded copies of both
  // 3-D operands (by default and with "pointer", shifted loads).
  c.push_back({"bmm", "bmm", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("a", randn({3, n, 77}, bf, s)), T("b", randn({3, 77, 99}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::bmm(*a[0].tensor, *a[1].tensor)); },
               {"", R"({"block_sizes":[1,128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[1,64,128,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
                R"({"block_sizes":[1,128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"pointer"})"},
               10.0, "bmm_staged"});
  // generic_mainloop on rows that are not 16-byte multiples (77 elements
  // of K, 99 of N): the producer's TMA reads padded copies that the launch
  // makes (one a tensor, though the left operand has two maps), flat and
  // persistent programs, one and two consumers.
  c.push_back({"matmul", "matmul", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 77}, bf, s)), T("y", randn({77, 99}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::matmul(*a[0].tensor, *a[1].tensor)); },
               {R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"})",
                R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_dynamic"})",
                R"({"block_sizes":[64,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true})"},
               10.0, "matmul_generic_staged"});
  c.push_back({"bmm", "bmm", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("a", randn({3, n, 77}, bf, s)), T("b", randn({3, 77, 99}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::bmm(*a[0].tensor, *a[1].tensor)); },
               {R"({"block_sizes":[1,128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"})",
                R"({"block_sizes":[1,64,128,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true})"},
               10.0, "bmm_generic_staged"});
  // Stream-K (stream_k): more tiles than the SMs hold at once, not a whole
  // number of waves, so that the last wave's K iterations are shared out
  // (at 300 rows, 3 x 90 tiles of 128 x 128 against 132 programs: 264
  // whole, 6 tiles' 5 K iterations (the last partial) over 10 programs,
  // some tiles in 3 parts; at 129 rows 180 tiles, 48 shared by 86). The
  // tile's last part adds the others' sums in K order and runs the
  // epilogue: plain, with bias and relu, batched, K-major, 8-bit with
  // scales, and from padded copies (odd rows).
  const std::string sk = R"("tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","generic_mainloop":true,"pid_type":"persistent_interleaved","stream_k":true)";
  const std::vector<std::string> skConfigs = {
      R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":4,)" + sk + "}",
      R"({"block_sizes":[128,256,64],"num_warps":12,"num_stages":3,"l2_groupings":[8],)" + sk + "}",
      R"({"block_sizes":[64,128,64],"num_warps":8,"num_stages":4,)" + sk + "}"};
  c.push_back({"matmul", "matmul", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 264}, bf, s)), T("y", randn({264, 11520}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::matmul(*a[0].tensor, *a[1].tensor)); },
               skConfigs, 10.0, "matmul_stream_k"});
  c.push_back({"matmul_bias_relu", "matmul_bias_relu", {129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 1000}, bf, s)), T("y", randn({1000, 11520}, bf, s + 1)),
                                         T("bias", randn({11520}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) {
                 return one(matmul_bias_relu(*a[0].tensor, *a[1].tensor, *a[2].tensor));
               },
               {skConfigs[0]}, 30.0, "matmul_bias_relu_stream_k"});
  c.push_back({"bmm", "bmm", {129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("a", randn({3, n, 264}, bf, s)), T("b", randn({3, 264, 3840}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::bmm(*a[0].tensor, *a[1].tensor)); },
               {R"({"block_sizes":[1,128,128,64],"num_warps":12,"num_stages":4,)" + sk + "}"}, 10.0,
               "bmm_stream_k"});
  linearCase(bf, 264, 11520, {skConfigs[0], skConfigs[2]}, "linear_stream_k");
  scaledCase(e4, 528, 11520, 0.5, 0.25, {129, 300},
             {R"({"block_sizes":[128,128,128],"num_warps":12,"num_stages":4,)" + sk + "}"}, 2.0,
             "scaled_matmul_stream_k");
  c.push_back({"matmul", "matmul", {129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 777}, bf, s)), T("y", randn({777, 11521}, bf, s + 1))};
               },
               [](const std::vector<Arg> &a) { return one(::matmul(*a[0].tensor, *a[1].tensor)); },
               {skConfigs[0]}, 20.0, "matmul_stream_k_staged"});
  c.push_back({"attention", "attention", {1, 7, 129},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("q", randn({3, n, 32}, bf, s)), T("k", randn({3, n, 32}, bf, s + 1)),
                                         T("v", randn({3, n, 32}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) {
                 return one(attention(*a[0].tensor, *a[1].tensor, *a[2].tensor));
               },
               {"", R"({"block_sizes":[1,16,16]})", R"({"block_sizes":[1,32,64],"num_warps":2})",
                R"({"block_sizes":[2,64,32],"num_warps":8})", R"({"block_sizes":[1,8,128]})",
                R"({"block_sizes":[1,32,64],"num_warps":2,"early_loads":true})",
                R"({"block_sizes":[1,16,16],"tensor_cores":true})",
                R"({"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true})",
                R"({"block_sizes":[1,32,64],"num_warps":8,"tensor_cores":true,"early_loads":true})",
                R"({"block_sizes":[2,16,16],"tensor_cores":true})",
                R"({"block_sizes":[1,32,32],"num_warps":4,"tensor_cores":true,"min_programs_per_sm":4})",
                // Several 16-byte runs a thread along p's masked key dim.
                R"({"block_sizes":[1,16,64],"tensor_cores":true,"inner_threads":2})",
                // Both products on the tensor cores from registers (kite.mma),
                // with partial query and key tiles.
                R"({"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true})",
                R"({"block_sizes":[1,64,16],"num_warps":4,"tensor_cores":true})",
                R"({"block_sizes":[1,128,32],"num_warps":8,"tensor_cores":true,"early_loads":true})",
                R"({"block_sizes":[1,128,64],"num_warps":4,"tensor_cores":true})",
                R"({"block_sizes":[1,64,16],"num_warps":4,"tensor_cores":true,"num_stages":3})"}});
  // Head dim 128: both products on wgmma (k^T staged K-major, v MN-major)
  // by default on sm_90a, with one or two warpgroups, one or two m64
  // blocks a warpgroup, and mma.sync for comparison.
  c.push_back({"attention", "attention", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("q", randn({2, n, 128}, bf, s)), T("k", randn({2, n, 128}, bf, s + 1)),
                                         T("v", randn({2, n, 128}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) {
                 return one(attention(*a[0].tensor, *a[1].tensor, *a[2].tensor));
               },
               {"", R"({"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[1,64,16],"num_warps":4,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[1,128,64],"num_warps":8,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[1,128,32],"num_warps":4,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[1,64,128],"num_warps":4,"tensor_cores":true,"wgmma":true,"early_loads":true})",
                R"({"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":false})",
                // k and v copied one or two key tiles ahead (kite.prefetch).
                R"({"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2})",
                R"({"block_sizes":[1,128,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":3})",
                R"({"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":false,"num_stages":2})",
                // The second product one key tile late (kite-overlap-products).
                R"({"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2,"overlap_products":true})",
                R"({"block_sizes":[1,128,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":3,"overlap_products":true})",
                R"({"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2,"overlap_products":true})",
                R"({"block_sizes":[1,128,128],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":2,"overlap_products":true})",
                // exp2 as the hardware's ex2 alone (fast_math).
                R"({"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2,"fast_math":true})",
                // A producer warpgroup copies k and v by TMA into rings of
                // one to three stages (warp_specialize): one or two
                // computing warpgroups, partial key tiles zeroed past
                // their extent.
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true})",
                R"({"block_sizes":[1,64,128],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true})",
                R"({"block_sizes":[1,128,64],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":3,"warp_specialize":true,"fast_math":true})",
                R"({"block_sizes":[1,64,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":1,"warp_specialize":true})",
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"pid_type":"persistent_interleaved"})",
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true})",
                R"({"block_sizes":[1,64,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":1,"warp_specialize":true,"overlap_products":true})",
                // The two computing warpgroups taking turns (pingpong).
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true})",
                R"({"block_sizes":[1,128,64],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":3,"warp_specialize":true,"overlap_products":true,"pingpong":true,"pid_type":"persistent_interleaved"})",
                // Programs taking the next id as they finish one, passed
                // from the producer to the computing threads.
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"fast_math":true,"pid_type":"persistent_dynamic"})",
                // Two programs an SM, one computing warpgroup each.
                R"({"block_sizes":[1,64,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"fast_math":true,"min_programs_per_sm":2})",
                // The output's rows through shared memory, a bulk copy a
                // row (bulk_stores), partial query tiles' rows skipped.
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"bulk_stores":true})",
                R"({"block_sizes":[1,128,64],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"fast_math":true,"pid_type":"persistent_interleaved","bulk_stores":true})",
                R"({"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2,"bulk_stores":true})"},
               1.0, "attention_d128"});
  // Clusters of two programs (cluster_size 2) on neighbouring query tiles:
  // the producers multicast k and v, each copying half of a tile's boxes
  // into both programs' rings, whose stages both programs' warps release;
  // a persistent program's q stays its own ring. 129 and 500 end in a
  // partial query tile (whose pair is whole); 64-row query tiles do not
  // pair at 129 (3 tiles), and the config is rejected there.
  c.push_back({"attention", "attention", {129, 256, 500},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("q", randn({2, n, 128}, bf, s)), T("k", randn({2, n, 128}, bf, s + 1)),
                                         T("v", randn({2, n, 128}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) {
                 return one(attention(*a[0].tensor, *a[1].tensor, *a[2].tensor));
               },
               {R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"cluster_size":2})",
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"fast_math":true,"pid_type":"persistent_interleaved","cluster_size":2})",
                R"({"block_sizes":[1,128,64],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":3,"warp_specialize":true,"overlap_products":true,"pingpong":true,"cluster_size":2})",
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"fast_math":true,"cluster_size":2})",
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"bulk_stores":true,"cluster_size":2})",
                R"({"block_sizes":[1,64,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"min_programs_per_sm":2,"cluster_size":2})",
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":3,"warp_specialize":true,"overlap_products":true,"pingpong":true,"cluster_size":2})",
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"pid_type":"persistent_interleaved","cluster_size":2})"},
               1.0, "attention_cluster"});
  // Causal: key loops that end at the query tile's end, the mask an index
  // comparison made in the scores' layout; query and key tiles of equal and
  // of different sizes (the diagonal inside a key tile, or across two). At
  // 256 every key loop's bounds are multiples of 128, so the diagonal loop
  // of 128-key tiles runs as whole tiles (no key masks; with pingpong its
  // warpgroups take turns).
  c.push_back({"causal_attention", "causal_attention", {1, 7, 129, 256, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("q", randn({2, n, 128}, bf, s)), T("k", randn({2, n, 128}, bf, s + 1)),
                                         T("v", randn({2, n, 128}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) {
                 return one(causal_attention(*a[0].tensor, *a[1].tensor, *a[2].tensor));
               },
               {"", R"({"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":false})",
                R"({"block_sizes":[1,64,128],"num_warps":4,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[1,128,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":3})",
                R"({"block_sizes":[1,32,16],"num_warps":2,"tensor_cores":true})",
                R"({"block_sizes":[1,16,16]})",
                R"({"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2,"overlap_products":true})",
                R"({"block_sizes":[1,128,32],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":3,"overlap_products":true})",
                R"({"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2,"overlap_products":true,"fast_math":true})",
                // The split key loops share their rings (warp_specialize).
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true})",
                R"({"block_sizes":[1,128,64],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":3,"warp_specialize":true})",
                R"({"block_sizes":[1,64,128],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"pid_type":"persistent_blocked"})",
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"fast_math":true})",
                R"({"block_sizes":[1,128,64],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true})",
                // Persistent: the producer copies q too (a ring of two stages).
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"fast_math":true,"pid_type":"persistent_interleaved"})",
                // Persistent programs taking the next id as they finish one
                // (with a producer, and without).
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"fast_math":true,"pid_type":"persistent_dynamic"})",
                R"({"block_sizes":[1,64,128],"num_warps":4,"tensor_cores":true,"wgmma":true,"fast_math":true,"pid_type":"persistent_dynamic"})",
                // Two programs an SM, one computing warpgroup each.
                R"({"block_sizes":[1,64,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"fast_math":true,"min_programs_per_sm":2})",
                // Groups of 2 heads, each group's query tiles longest first.
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"l2_groupings":[2]})",
                // The output by bulk copies (bulk_stores).
                R"({"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"bulk_stores":true})",
                R"({"block_sizes":[1,128,64],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"fast_math":true,"pid_type":"persistent_interleaved","bulk_stores":true})"},
               1.0, "causal_attention_d128"});
  // Key loops split where an index condition holds on whole tiles
  // (kite-split-masked-loops): a band over every column (three loops), a
  // suffix from the row tile's begin, a condition constant along the loop;
  // tiles of equal and different sizes, partial ones at every edge.
  const std::vector<std::string> maskedConfigs = {
      "", R"({"block_sizes":[16,16]})", R"({"block_sizes":[32,64],"num_warps":2})",
      R"({"block_sizes":[64,32]})", R"({"block_sizes":[128,16],"num_warps":8})",
      R"({"block_sizes":[8,128]})"};
  // Products stored from the accumulator layout: lanes exchange pairs of
  // columns (groups of 4 lanes for bf16, of 2 for f32) and store 16 bytes
  // each, rows past M masked; with N not a multiple of the tile, partial
  // column tiles keep the direct store.
  const std::vector<std::string> storeConfigs = {
      "", R"({"block_sizes":[16,64],"num_warps":2,"tensor_cores":true})",
      R"({"block_sizes":[64,128],"num_warps":4,"tensor_cores":true})",
      R"({"block_sizes":[64,128],"num_warps":4,"tensor_cores":true,"wgmma":true})",
      R"({"block_sizes":[128,64],"num_warps":8,"tensor_cores":true,"wgmma":true})"};
  for (const char *kernel : {"product_f32", "product_bf16"}) {
    for (bool partialN : {false, true}) {
      c.push_back({"stores", kernel, {1, 7, 129, 300},
                   [=](int64_t n, uint64_t s) {
                     return std::vector<Arg>{T("x", randn({n, 64}, bf, s)),
                                             T("y", randn({64, partialN ? n + 8 : 128}, bf, s + 1))};
                   },
                   [=](const std::vector<Arg> &a) {
                     return one(std::string(kernel) == "product_f32"
                                    ? product_f32(*a[0].tensor, *a[1].tensor)
                                    : product_bf16(*a[0].tensor, *a[1].tensor));
                   },
                   storeConfigs, 8.0,
                   std::string(kernel) + (partialN ? "_partial_n" : "")});
    }
  }
  c.push_back({"masked_loops", "band_sum", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, n + 5}, bf, s)), S("window", 40, DType::i64)};
               },
               [](const std::vector<Arg> &a) {
                 return one(band_sum(*a[0].tensor, (int64_t)a[1].scalar));
               },
               maskedConfigs, 10.0});
  c.push_back({"masked_loops", "upper_sum", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) { return std::vector<Arg>{T("x", randn({n, n + 3}, bf, s))}; },
               [](const std::vector<Arg> &a) { return one(upper_sum(*a[0].tensor)); },
               maskedConfigs, 20.0});
  c.push_back({"masked_loops", "limited_sum", {1, 7, 129, 300},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, n}, bf, s)), S("limit", double(n / 2 + 1), DType::i64)};
               },
               [](const std::vector<Arg> &a) {
                 return one(limited_sum(*a[0].tensor, (int64_t)a[1].scalar));
               },
               maskedConfigs, 20.0});
  // Two chained products: the hidden dim's partial last tile is masked in
  // the second product's K.
  c.push_back({"mlp", "mlp", {1, 7, 129},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 64}, bf, s)), T("w1", randn({64, 200}, bf, s + 1)),
                                         T("w2", randn({200, 48}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) { return one(mlp(*a[0].tensor, *a[1].tensor, *a[2].tensor)); },
               {"", R"({"block_sizes":[16,16]})", R"({"block_sizes":[64,32],"num_warps":4,"tensor_cores":true})",
                R"({"block_sizes":[64,64],"num_warps":4,"tensor_cores":true,"early_loads":true})",
                R"({"block_sizes":[128,16],"num_warps":8,"tensor_cores":true})",
                R"({"block_sizes":[32,32],"num_warps":4,"tensor_cores":true})",
                R"({"block_sizes":[64,64],"num_warps":4,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[128,64],"num_warps":8,"tensor_cores":true,"wgmma":true})",
                R"({"block_sizes":[64,64],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2})",
                R"({"block_sizes":[64,32],"num_warps":4,"tensor_cores":true,"num_stages":3})",
                R"({"block_sizes":[64,64],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2,"overlap_products":true})",
                R"({"block_sizes":[128,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":3,"overlap_products":true})"},
               40.0});
  // A producer warpgroup copying both weights by TMA (warp_specialize): the
  // hidden loop's partial last tile (296 = 4 x 64 + 40) zeroed past its
  // extent, with and without the second product a tile late.
  c.push_back({"mlp", "mlp", {1, 7, 129},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 128}, bf, s)), T("w1", randn({128, 296}, bf, s + 1)),
                                         T("w2", randn({296, 128}, bf, s + 2))};
               },
               [](const std::vector<Arg> &a) { return one(mlp(*a[0].tensor, *a[1].tensor, *a[2].tensor)); },
               {"", R"({"block_sizes":[64,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true})",
                R"({"block_sizes":[128,64],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":3,"warp_specialize":true})",
                R"({"block_sizes":[128,64],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true})",
                R"({"block_sizes":[128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true})",
                // Persistent: the producer copies x too (a ring of two stages).
                R"({"block_sizes":[64,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"pid_type":"persistent_interleaved"})",
                // The output by bulk copies (bulk_stores).
                R"({"block_sizes":[128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"bulk_stores":true})"},
               40.0, "mlp_producer"});
  // Scans: whole rows (shuffles within a warp with inner_threads 32 or one
  // warp, shared memory across warps otherwise), column tiles with a carry,
  // the running max of bf16 with NaNs in it (exact).
  // (A row of 4097 pads to 8192: at most 128 registers a thread needs 2
  // warps a row; smaller configs are rejected there, with their reason.)
  const std::vector<std::string> rowScanConfigs = {
      "", R"({"block_sizes":[1],"num_warps":1})", R"({"block_sizes":[1],"num_warps":2})",
      R"({"block_sizes":[2],"num_warps":4})", R"({"block_sizes":[1],"num_warps":8})",
      R"({"block_sizes":[4],"num_warps":16})", R"({"block_sizes":[1],"num_warps":32})",
      R"({"block_sizes":[8],"num_warps":4,"inner_threads":32})",
      R"({"block_sizes":[2],"num_warps":4,"inner_threads":8})",
      R"({"block_sizes":[2],"num_warps":8,"inner_threads":64})"};
  c.push_back({"cumsum", "cumsum_rows", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) { return std::vector<Arg>{T("x", randn({13, n}, bf, s))}; },
               [](const std::vector<Arg> &a) { return one(cumsum_rows(*a[0].tensor)); },
               rowScanConfigs, 64.0});
  c.push_back({"cumsum", "cumsum_long", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) { return std::vector<Arg>{T("x", randn({13, n}, f, s))}; },
               [](const std::vector<Arg> &a) { return one(cumsum_long(*a[0].tensor)); },
               {"", R"({"block_sizes":[1,1]})", R"({"block_sizes":[2,64],"num_warps":1})",
                R"({"block_sizes":[4,256],"num_warps":4})", R"({"block_sizes":[8,1024],"num_warps":8})",
                R"({"block_sizes":[16,32],"num_warps":4})"},
               64.0});
  c.push_back({"cumsum", "cummax_rows", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 Tensor x = randn({13, n}, bf, s);
                 x.data<bfloat16>()[5 * n + n / 2] = bfloat16(NAN);
                 return std::vector<Arg>{T("x", x)};
               },
               [](const std::vector<Arg> &a) { return many(cummax_rows(*a[0].tensor)); },
               rowScanConfigs, 1.0, "", /*exact=*/true});
  // User combine functions (associative_scan): a linear recurrence over
  // pairs of floats, and a segmented integer sum (exact).
  c.push_back({"cumsum", "linear_recurrence", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("a", rand({13, n}, bf, s)),
                                         T("b", randn({13, n}, f, s + 1))};
               },
               [](const std::vector<Arg> &a) {
                 return one(linear_recurrence(*a[0].tensor, *a[1].tensor));
               },
               rowScanConfigs, 64.0});
  c.push_back({"cumsum", "forward_fill", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 // Mostly zeros, in bf16: the fill only selects (exact).
                 Tensor x = randn({13, n}, f, s);
                 float *p = x.data<float>();
                 for (int64_t i = 0; i < 13 * n; ++i)
                   if (i % 5 != 0)
                     p[i] = 0;
                 return std::vector<Arg>{T("x", x.to(bf))};
               },
               [](const std::vector<Arg> &a) { return one(forward_fill(*a[0].tensor)); },
               rowScanConfigs, 1.0, "", /*exact=*/true});
  c.push_back({"cumsum", "segment_sums", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{
                     T("x", randint(-1000, 1000, {13, n}, DType::i32, s)),
                     T("starts", randint(0, 2, {13, n}, DType::i32, s + 1).to(DType::boolean))};
               },
               [](const std::vector<Arg> &a) {
                 return one(segment_sums(*a[0].tensor, *a[1].tensor));
               },
               rowScanConfigs, 1.0, "", /*exact=*/true});
  // Random numbers: the same bits as reference mode under every config.
  c.push_back({"random", "random_draws", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 // Offsets past 32 bits, negative ones, and repeats.
                 Tensor off = randint(-(int64_t(1) << 40), int64_t(1) << 40, {n, 37}, DType::i64, s);
                 return std::vector<Arg>{T("offsets", off), S("seed", double(s * 977 + 3), DType::i64)};
               },
               [](const std::vector<Arg> &a) {
                 return many(random_draws(*a[0].tensor, (int64_t)a[1].scalar));
               },
               {"", R"({"block_sizes":[1,1]})", R"({"block_sizes":[8,32],"num_warps":2})",
                R"({"block_sizes":[64,64],"num_warps":8})", R"({"block_sizes":[2,128],"num_warps":1})"},
               1.0, "", /*exact=*/true});
  c.push_back({"random", "dropout", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n, 129}, bf, s)), S("p", 0.25, DType::f64),
                                         S("seed", double(s), DType::i64)};
               },
               [](const std::vector<Arg> &a) {
                 return one(dropout(*a[0].tensor, a[1].scalar, (int64_t)a[2].scalar));
               },
               {"", R"({"block_sizes":[1,1]})", R"({"block_sizes":[8,32],"num_warps":2})",
                R"({"block_sizes":[16,64],"num_warps":8})", R"({"block_sizes":[4,128],"num_warps":4})"}});
  c.push_back({"random", "add_noise", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({n * 3}, f, s)), S("sigma", 0.5, DType::f64),
                                         S("seed", double(s), DType::i64)};
               },
               [](const std::vector<Arg> &a) {
                 return one(add_noise(*a[0].tensor, a[1].scalar, (int64_t)a[2].scalar));
               },
               {"", R"({"block_sizes":[1]})", R"({"block_sizes":[32],"num_warps":1})",
                R"({"block_sizes":[256]})", R"({"block_sizes":[1024],"num_warps":8})"}});
  // Atomic adds into few bins: private copies in shared memory (default),
  // global atomics, persistent programs that flush once.
  const std::vector<std::string> histogramConfigs = {
      "", R"({"block_sizes":[1024],"privatize_atomics":false})",
      R"({"block_sizes":[64],"num_warps":1})",
      R"({"block_sizes":[4096],"num_warps":8,"pid_type":"persistent_interleaved"})",
      R"({"block_sizes":[256],"num_warps":2,"pid_type":"persistent_blocked"})",
      R"({"block_sizes":[512],"num_warps":4,"pid_type":"persistent_dynamic"})"};
  c.push_back({"histogram", "histogram", {1, 7, 1000, 40097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randint(-3, 259, {n}, DType::i32, s)),
                                         S("bins", 256, DType::i64)};
               },
               [](const std::vector<Arg> &a) {
                 return one(histogram(*a[0].tensor, (int64_t)a[1].scalar));
               },
               histogramConfigs, 1.0, "", /*exact=*/true});
  // Sorts and top-k: ties (values rounded to quarters) and a NaN, exact.
  auto sortRows = [](int64_t rows, int64_t n, DType dtype, uint64_t s) {
    Tensor x = randn({rows, n}, DType::f32, s);
    float *p = x.data<float>();
    for (int64_t i = 0; i < rows * n; ++i)
      p[i] = std::round(p[i] * 4) / 4;
    p[(rows / 2) * n + n / 3] = NAN;
    return x.to(dtype);
  };
  const std::vector<std::string> sortConfigs = {
      "", R"({"block_sizes":[1],"num_warps":1})", R"({"block_sizes":[2],"num_warps":8})",
      R"({"block_sizes":[4],"num_warps":4})", R"({"block_sizes":[1],"num_warps":32})",
      R"({"block_sizes":[1],"num_warps":4})", R"({"block_sizes":[2],"num_warps":16})",
      R"({"block_sizes":[1],"num_warps":8,"pid_type":"persistent_interleaved"})"};
  c.push_back({"topk", "sort_rows", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) { return std::vector<Arg>{T("x", sortRows(13, n, f, s))}; },
               [](const std::vector<Arg> &a) { return many(sort_rows(*a[0].tensor)); },
               sortConfigs, 1.0, "", /*exact=*/true});
  c.push_back({"topk", "topk_rows", {8, 9, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", sortRows(11, n, bf, s)), S("k_", 8, DType::i64)};
               },
               [](const std::vector<Arg> &a) {
                 return many(topk_rows(*a[0].tensor, (int64_t)a[1].scalar));
               },
               sortConfigs, 1.0, "", /*exact=*/true});
  // Orders, dims and dtypes past the examples': signed zeros, infinities,
  // integer extremes; k below its power of two (3), the select path (64),
  // and k past a quarter of the line (bitonic or radix sort, then the
  // first k).
  auto edgyRows = [](int64_t rows, int64_t n, DType dtype, uint64_t s) {
    Tensor x = randn({rows, n}, DType::f32, s);
    float *p = x.data<float>();
    for (int64_t i = 0; i < rows * n; ++i)
      p[i] = std::round(p[i] * 4) / 4;
    const float special[] = {-0.0f, 0.0f, INFINITY, -INFINITY, NAN, -0.0f, 1e30f, -1e30f};
    for (int64_t i = 0; i < rows * n; i += 5)
      p[i] = special[(i / 5 + s) % 8];
    if (dtype == DType::i32 || dtype == DType::i64) {
      for (int64_t i = 0; i < rows * n; ++i)
        p[i] = std::isnan(p[i]) ? 0.0f : std::clamp(p[i] * 1e3f, -2e9f, 2e9f);
    }
    return x.to(dtype);
  };
  c.push_back({"sorts", "sort_rows_ascending", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", edgyRows(5, n, DType::f16, s))};
               },
               [](const std::vector<Arg> &a) { return many(sort_rows_ascending(*a[0].tensor)); },
               sortConfigs, 1.0, "sort_rows_ascending_f16", /*exact=*/true});
  // 8-bit float keys (radix keys of 8 bits; infinities become NaN in e4m3).
  for (DType dtype : {DType::e4m3, DType::e5m2})
    c.push_back({"sorts", "sort_rows_ascending", {1, 7, 1000, 4097},
                 [=](int64_t n, uint64_t s) {
                   return std::vector<Arg>{T("x", edgyRows(5, n, dtype, s))};
                 },
                 [](const std::vector<Arg> &a) { return many(sort_rows_ascending(*a[0].tensor)); },
                 sortConfigs, 1.0, std::string("sort_rows_ascending_") + dtype_name(dtype),
                 /*exact=*/true});
  c.push_back({"sorts", "sort_rows_ascending", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", edgyRows(5, n, DType::i32, s))};
               },
               [](const std::vector<Arg> &a) { return many(sort_rows_ascending(*a[0].tensor)); },
               sortConfigs, 1.0, "sort_rows_ascending_i32", /*exact=*/true});
  for (int64_t k : {3, 64, 300})
    c.push_back({"sorts", "smallest_k", {300, 1000, 4097},
                 [=](int64_t n, uint64_t s) {
                   return std::vector<Arg>{T("x", edgyRows(6, n, f, s)), S("k_", double(k), DType::i64)};
                 },
                 [](const std::vector<Arg> &a) {
                   return many(smallest_k(*a[0].tensor, (int64_t)a[1].scalar));
                 },
                 sortConfigs, 1.0, "smallest_k" + std::to_string(k), /*exact=*/true});
  c.push_back({"sorts", "sort_columns", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", edgyRows(n, 9, bf, s))};
               },
               [](const std::vector<Arg> &a) { return many(sort_columns(*a[0].tensor)); },
               {"", R"({"block_sizes":[1],"num_warps":4})", R"({"block_sizes":[2],"num_warps":8})",
                R"({"block_sizes":[1],"num_warps":16})", R"({"block_sizes":[2],"num_warps":16})",
                R"({"block_sizes":[1],"num_warps":8,"pid_type":"persistent_interleaved"})"},
               1.0, "", /*exact=*/true});
  // Atomics into gathered rows in every float dtype: small integers, so
  // that sums are exact in any order, and NaN for max and min.
  auto scatterInputs = [](int64_t n, DType dtype, uint64_t s, bool nan) {
    int64_t rows = std::max<int64_t>(1, n / 4);
    Tensor idx = randint(0, rows, {n}, DType::i64, s);
    Tensor src = nan ? randint(1, 10, {n, 7}, DType::f32, s + 1) : randint(-4, 5, {n, 7}, DType::f32, s + 1);
    if (nan)
      for (int64_t i = 3; i < n * 7; i += 97)
        src.data<float>()[i] = NAN;
    return std::vector<Arg>{T("idx", idx), T("src", src.to(dtype)), S("rows", double(rows), DType::i64)};
  };
  const std::vector<std::string> scatterConfigs = {
      "", R"({"block_sizes":[1,1]})", R"({"block_sizes":[16,8],"num_warps":2})",
      R"({"block_sizes":[64,8],"num_warps":8,"privatize_atomics":false})",
      R"({"block_sizes":[32,8],"num_warps":4,"pid_type":"persistent_interleaved"})"};
  for (DType dtype : {bf, DType::f16, f, DType::f64}) {
    std::string name = dtype_name(dtype);
    c.push_back({"atomics", "index_add_rows", {1, 7, 1000, 4097},
                 [=](int64_t n, uint64_t s) { return scatterInputs(n, dtype, s, false); },
                 [](const std::vector<Arg> &a) {
                   return one(index_add_rows(*a[0].tensor, *a[1].tensor, (int64_t)a[2].scalar));
                 },
                 scatterConfigs, 1.0, "index_add_rows_" + name, /*exact=*/true});
    c.push_back({"atomics", "weighted_histogram", {1, 7, 1000, 40097},
                 [=](int64_t n, uint64_t s) {
                   // Small integer weights: sums exact in any order.
                   return std::vector<Arg>{
                       T("x", randint(-3, 67, {n}, DType::i32, s)),
                       T("w", randint(-4, 5, {n}, DType::f32, s + 1).to(dtype)),
                       S("bins", 64, DType::i64)};
                 },
                 [](const std::vector<Arg> &a) {
                   return one(weighted_histogram(*a[0].tensor, *a[1].tensor,
                                                 (int64_t)a[2].scalar));
                 },
                 histogramConfigs, 1.0, "weighted_histogram_" + name, /*exact=*/true});
    c.push_back({"atomics", "index_max_min_rows", {1, 7, 1000, 4097},
                 [=](int64_t n, uint64_t s) { return scatterInputs(n, dtype, s, true); },
                 [](const std::vector<Arg> &a) {
                   return many(index_max_min_rows(*a[0].tensor, *a[1].tensor, (int64_t)a[2].scalar));
                 },
                 scatterConfigs, 1.0, "index_max_min_rows_" + name, /*exact=*/true});
  }
  // 8-bit float conversions, bit for bit: floats at every rounding edge
  // (ties, the largest values and past them, subnormals, infinities, NaN)
  // and over a wide exponent range; every e4m3 code widened and narrowed.
  auto fp8Edges = [](int64_t n, uint64_t s) {
    const float edges[] = {0.0f, -0.0f, 1.0f, 1.0625f, 1.1875f, 448.0f, 464.0f, 465.0f, 480.0f,
                           -500.0f, 1e9f, INFINITY, -INFINITY, NAN, 57344.0f, 61439.0f, 61440.0f,
                           -65536.0f, 0x1p-9f, 0x1p-10f, 0x3p-10f, 0x1p-16f, 0x1p-17f, 0x3p-17f,
                           0x1p-6f, 0x1p-14f, 0x1.fp-7f, 3.0f, -3.0f};
    Tensor x = randn({n, 64}, DType::f32, s);
    Tensor e = randint(-18, 19, {n, 64}, DType::i32, s + 1);
    float *p = x.data<float>();
    for (int64_t i = 0; i < n * 64; ++i)
      p[i] = i < (int64_t)std::size(edges) ? edges[i] : std::ldexp(p[i], e.data<int32_t>()[i]);
    return std::vector<Arg>{T("x", x)};
  };
  c.push_back({"fp8", "quantize_both", {1, 7, 1000},
               fp8Edges,
               [](const std::vector<Arg> &a) { return many(quantize_both(*a[0].tensor)); },
               {"", R"({"block_sizes":[1,64],"num_warps":2})", R"({"block_sizes":[16,16]})"},
               1.0, "", /*exact=*/true});
  c.push_back({"fp8", "widen", {1, 7, 1000},
               [](int64_t n, uint64_t) {
                 std::vector<float8_e4m3> codes(size_t(n * 256));
                 for (size_t i = 0; i < codes.size(); ++i)
                   codes[i] = float8_e4m3::from_bits(uint8_t(i % 256));
                 return std::vector<Arg>{T("q", from_vector<float8_e4m3>(codes, {n, 256}))};
               },
               [](const std::vector<Arg> &a) { return many(widen(*a[0].tensor)); },
               {"", R"({"block_sizes":[2,128],"num_warps":4})"},
               1.0, "", /*exact=*/true});
  // The top-k sampler: topk, softmax, cumsum, rand and a search in one
  // kernel; the tokens match reference mode exactly.
  c.push_back({"sampling", "sample_topk", {64, 100, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("logits", randn({37, n}, bf, s)), S("k_", 50, DType::i64),
                                         S("temperature", 0.8, DType::f64),
                                         S("seed", double(s), DType::i64)};
               },
               [](const std::vector<Arg> &a) {
                 return one(sample_topk(*a[0].tensor, (int64_t)a[1].scalar, a[2].scalar,
                                        (int64_t)a[3].scalar));
               },
               sortConfigs, 1.0, "", /*exact=*/true});
  c.push_back({"welford", "welford", {1, 7, 1000, 4097},
               [=](int64_t n, uint64_t s) {
                 return std::vector<Arg>{T("x", randn({11, n}, bf, s)), T("weight", randn({n}, bf, s + 1)),
                                         T("bias", randn({n}, bf, s + 2)), S("eps", 1e-5, DType::f64)};
               },
               [](const std::vector<Arg> &a) {
                 return one(welford(*a[0].tensor, *a[1].tensor, *a[2].tensor, a[3].scalar));
               },
               {"", R"({"block_sizes":[1,64,64]})", R"({"block_sizes":[2,256,128],"num_warps":2})",
                R"({"block_sizes":[4,32,16],"num_warps":8})", R"({"block_sizes":[1,1024,1024]})"}});
  return c;
}

void PrintTo(const Case &c, std::ostream *os) { *os << c.kernel; }

class ExampleTest : public ::testing::TestWithParam<Case> {};

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return info.param.label.empty() ? info.param.kernel : info.param.label;
}

/// Configs around the default one: block sizes scaled by powers of two,
/// other warp counts and pid types, chosen by a seeded generator.
std::vector<std::string> generatedConfigs(const std::string &defaultConfig, uint64_t seed,
                                          int count) {
  // The default's block sizes, from its JSON ("block_sizes":[a,b,...]).
  std::vector<int64_t> base;
  size_t at = defaultConfig.find("\"block_sizes\":[");
  if (at != std::string::npos) {
    std::string list = defaultConfig.substr(at + 15, defaultConfig.find(']', at) - at - 15);
    std::stringstream ss(list);
    for (std::string v; std::getline(ss, v, ',');)
      if (!v.empty())
        base.push_back(std::stoll(v));
  }
  static const char *pids[] = {"flat", "persistent_interleaved", "persistent_blocked",
                               "persistent_dynamic"};
  std::vector<std::string> out;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int i = 0; i < count; ++i) {
    std::string bs;
    for (int64_t b : base) {
      int shift = int(next() % 5) - 2; // x1/4 .. x4
      int64_t v = shift >= 0 ? b << shift : std::max<int64_t>(1, b >> -shift);
      bs += (bs.empty() ? "" : ",") + std::to_string(std::min<int64_t>(v, 1024));
    }
    int warps = 1 << int(next() % 5);
    out.push_back("{\"block_sizes\":[" + bs + "],\"num_warps\":" + std::to_string(warps) +
                  ",\"pid_type\":\"" + pids[next() % 4] + "\"}");
  }
  return out;
}

/// The specs of case `c` at its largest size, with 16-byte aligned tensors
/// (as device allocations are).
std::vector<ArgSpec> largestSpecs(const Case &c) {
  std::vector<Arg> args = c.inputs(c.sizes.back(), 1);
  std::vector<Tensor> host;
  for (const Arg &a : args)
    if (a.tensor)
      host.push_back(*a.tensor);
  std::vector<ArgSpec> specs = specsOf(args, host);
  for (auto &s : specs)
    if (s.is_tensor())
      s.alignment = 16;
  return specs;
}

/// At least 20 configs of every example lower and compile with NVRTC for
/// sm_90a: the test's own configs, then generated ones (a generated config
/// the compiler rejects with a reason, e.g. too many registers per thread,
/// does not count).
TEST_P(ExampleTest, CompilesUnderTwentyConfigs) {
  const Case &c = GetParam();
  if (!runtime::nvrtcAvailable())
    GTEST_SKIP() << "NVRTC is not available: " << runtime::nvrtcUnavailableReason();
  std::string text = ir(c.file);
  std::vector<ArgSpec> specs = largestSpecs(c);
  CudaKernel def = lowerToCuda(text, c.kernel, specs, "", CompileOptions{"sm_90a"});
  std::string defaultConfig = def.source.substr(def.source.find("// config: ") + 11);
  defaultConfig = defaultConfig.substr(0, defaultConfig.find('\n'));
  std::vector<std::string> configs = c.configs;
  for (const std::string &g : generatedConfigs(defaultConfig, std::hash<std::string>{}(c.kernel), 100))
    configs.push_back(g);
  int compiled = 0, rejected = 0;
  for (const std::string &config : configs) {
    if (compiled >= 20)
      break;
    KernelSource source{nullptr, c.kernel, text, "test", c.file};
    try {
      KernelPlan plan = compileToPlan(source, specs, Options{{}, config}, CompileOptions{"sm_90a"});
      EXPECT_EQ(plan.binary.at(0), 0x7f) << config; // an ELF cubin
      ++compiled;
    } catch (const Error &e) {
      std::string what = e.what();
      // Only reasoned rejections of a config are acceptable.
      EXPECT_NE(what.find("config does not fit"), std::string::npos) << config << "\n" << what;
      ++rejected;
    }
  }
  EXPECT_GE(compiled, 20) << rejected << " configs rejected";
}

/// A case's arguments on the GPU: the device tensors, their specs and the
/// launch's arguments (which refer to `device`).
struct DeviceArgs {
  std::vector<Tensor> device;
  std::vector<ArgSpec> specs;
  std::vector<KernelArg> kargs;
  explicit DeviceArgs(const std::vector<Arg> &args) {
    for (const Arg &a : args)
      if (a.tensor)
        device.push_back(cuda::to_device(*a.tensor));
    specs = specsOf(args, device);
    size_t t = 0;
    for (const Arg &a : args) {
      if (a.tensor)
        kargs.emplace_back(device[t++]);
      else if (a.scalarType == DType::f64)
        kargs.emplace_back(a.scalar);
      else if (a.scalarType == DType::f32)
        kargs.emplace_back((float)a.scalar);
      else
        kargs.emplace_back((int64_t)a.scalar);
    }
  }
  DeviceArgs(const DeviceArgs &) = delete;
};

/// How close case `c`'s output must be to reference mode's `expected`.
Tolerance outputTolerance(const Case &c, const Tensor &expected) {
  if (c.exact)
    return {0, 0};
  if (expected.dtype() == DType::f32 && c.file != "add")
    return {2e-4, 2e-4 * c.scale}; // reductions in another order
  return kite_test::toleranceFor(expected.dtype(), c.scale);
}

/// On the GPU: matches reference mode at every size and config.
TEST_P(ExampleTest, MatchesReferenceOnGpu) {
  const Case &c = GetParam();
  if (!gpu_available())
    GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  runtime::setPoisonOutputs(true);
  std::string text = ir(c.file);
  uint64_t seed = 1234;
  for (int64_t n : c.sizes) {
    std::vector<Arg> args = c.inputs(n, seed++);
    std::vector<Tensor> expected = c.reference(args);
    DeviceArgs d(args);
    const std::vector<ArgSpec> &specs = d.specs;
    const std::vector<KernelArg> &kargs = d.kargs;
    int ran = 0;
    // KITE_TEST_CONFIGS="c1|c2": only these configs (to bisect a failure).
    std::vector<std::string> configs = c.configs;
    if (const char *only = std::getenv("KITE_TEST_CONFIGS")) {
      configs.clear();
      for (std::string rest = only; !rest.empty();) {
        size_t bar = rest.find('|');
        configs.push_back(rest.substr(0, bar));
        rest = bar == std::string::npos ? "" : rest.substr(bar + 1);
      }
    }
    for (const std::string &config : configs) {
      // Under compute-sanitizer, the default config is enough.
      if (std::getenv("KITE_SANITIZE_DEFAULT_ONLY") && !config.empty())
        continue;
      SCOPED_TRACE(c.kernel + " size " + std::to_string(n) + ", config " +
                   (config.empty() ? "default" : config));
      KernelSource source{nullptr, c.kernel, text, "test", c.file};
      KernelPlan plan;
      try {
        plan = compileToPlan(source, specs, Options{{}, config});
      } catch (const Error &e) {
        // A config too big for this size is rejected with its reason
        // (registers per thread, shared memory); the default never is.
        std::string what = e.what();
        ASSERT_FALSE(config.empty()) << what;
        ASSERT_NE(what.find("config does not fit"), std::string::npos) << what;
        continue;
      }
      ++ran;
      std::vector<Tensor> got = run_plan(plan, kargs);
      cuda::synchronize();
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(allClose(cuda::to_host(got[i]), expected[i], outputTolerance(c, expected[i])))
            << "output " << i;
      }
    }
    if (!std::getenv("KITE_SANITIZE_DEFAULT_ONLY") && !std::getenv("KITE_TEST_CONFIGS")) {
      EXPECT_GE(ran, std::min<int>(5, configs.size())) << c.kernel << " at size " << n << ": too few configs fit";
    }
  }
}

/// Dynamic shapes: every example's plan for the shape class of its largest
/// size (Options::static_shapes = false: sizes taken at launch where the
/// kernel allows) lowers and compiles with NVRTC for sm_90a, under the
/// test's first two configs that fit. The default config always lowers, so
/// a case whose configs all need static sizes (clusters) compiles it after
/// theirs are rejected.
TEST_P(ExampleTest, CompilesWithDynamicShapes) {
  const Case &c = GetParam();
  if (!runtime::nvrtcAvailable())
    GTEST_SKIP() << "NVRTC is not available: " << runtime::nvrtcUnavailableReason();
  std::string text = ir(c.file);
  std::vector<ArgSpec> specs = largestSpecs(c);
  std::vector<std::string> configs = c.configs;
  if (std::find(configs.begin(), configs.end(), std::string()) == configs.end())
    configs.push_back(std::string());
  int compiled = 0;
  for (const std::string &config : configs) {
    if (compiled >= 2)
      break;
    KernelSource source{nullptr, c.kernel, text, "test", c.file};
    Options options{{}, config};
    options.static_shapes = false;
    try {
      KernelPlan plan = compileToPlan(source, specs, options, CompileOptions{"sm_90a"});
      EXPECT_EQ(plan.binary.at(0), 0x7f) << config;
      EXPECT_TRUE(plan.dynamicShapes);
      ++compiled;
    } catch (const Error &e) {
      std::string what = e.what();
      EXPECT_FALSE(config.empty()) << what;
      EXPECT_NE(what.find("config does not fit"), std::string::npos) << config << "\n" << what;
    }
  }
  EXPECT_GE(compiled, 1);
}

/// On the GPU: at every size, the example's dynamic-shapes plan (default
/// config) matches reference mode, outputs poisoned.
TEST_P(ExampleTest, DynamicShapesMatchReferenceOnGpu) {
  const Case &c = GetParam();
  if (!gpu_available())
    GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  runtime::setPoisonOutputs(true);
  std::string text = ir(c.file);
  uint64_t seed = 4321;
  for (int64_t n : c.sizes) {
    SCOPED_TRACE(c.kernel + " size " + std::to_string(n) + ", dynamic shapes");
    std::vector<Arg> args = c.inputs(n, seed++);
    std::vector<Tensor> expected = c.reference(args);
    DeviceArgs d(args);
    const std::vector<ArgSpec> &specs = d.specs;
    const std::vector<KernelArg> &kargs = d.kargs;
    KernelSource source{nullptr, c.kernel, text, "test", c.file};
    Options options;
    options.static_shapes = false;
    KernelPlan plan = compileToPlan(source, specs, options);
    std::vector<Tensor> got = run_plan(plan, kargs);
    cuda::synchronize();
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(allClose(cuda::to_host(got[i]), expected[i], outputTolerance(c, expected[i])))
          << "output " << i;
    }
  }
  runtime::setPoisonOutputs(false);
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTest, ::testing::ValuesIn(cases()), caseName);

} // namespace
