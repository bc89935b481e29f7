//===- bench_examples.cpp - kite_bench: example kernels timed on the GPU --===//
//
// kite_bench compiles the memory-bound example kernels of
// /work/shared/GPU.md's table (and matmul) at the table's shapes, runs them
// on the GPU and times them with CUDA events: warm-up launches, then the
// median of many launches, with L2 flushed (a 256 MiB memset, then the L2's
// persisting lines reset: autotune::timeLaunches) before each timed launch. Each kernel is tried under its default config and a few
// alternatives; the fastest four are timed again in interleaved rounds (the
// card slows as it heats under tensor-core work, so the first config timed
// after the compiles would otherwise win by its place), the fastest by its
// median over the rounds is reported, and timed once more so that the run
// shows its own noise. --plans writes each row's winner for
// torch_baseline.py to time beside PyTorch in one process. The device-to-device copy bandwidth (a 1 GiB
// cuMemcpyDtoD, median) is measured in the same run as the roofline.
//
//   kite_bench [--json PATH] [--runs N] [--warmup N] [--quick] [--config JSON] [--filter S]
//              [--samples DIR] [--plans DIR] [--tune quick|full|quick,full [--budget S]]
//
// --tune replaces the fixed config list by the autotuner (autotune/Tuner.h)
// at each effort: the winner is timed like any config, and the line shows
// how long the tuning took and how many configs it tried.
//
// One line per kernel on stdout; JSON (for bench/report.py) to --json.
// Without a GPU it says so and exits 0 (writing {"gpu": false, ...}).
//
// The kernels' captured IR comes from examples_ir.h (test/correctness's
// `examples_ir` target), compiled to plans with kite::compileToPlan.
//
//===----------------------------------------------------------------------===//

#include "autotune/Parallel.h"
#include "autotune/Search.h"
#include "autotune/Tuner.h"
#include "autotune/Worker.h"
#include "lowering/Compiler.h"
#include "runtime/Driver.h"
#include "runtime/Launch.h"

#include <kite/runtime.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "examples_ir.h"

using namespace kite;
using json = nlohmann::json;
namespace rt = kite::runtime;

namespace {

/// The fastest configs of a row re-timed in interleaved rounds.
constexpr size_t kFinalists = 4;
constexpr int kFinalRounds = 5;

struct Settings {
  std::string jsonPath;
  int runs = 100;
  int warmup = 10;
  bool quick = false; // default configs only
  std::string config;  // --config: this config only, on every selected row
  bool compileOnly = false;
  std::string filter;
  std::string samplesDir;        // --samples: rows of inputs and outputs for the cross-check
  std::string plansDir;          // --plans: each row's winning plan, for torch_baseline.py
  std::vector<std::string> tune; // efforts, in order
  double budget = 0;             // 0: the effort's default
};

CUdeviceptr dptr(const Tensor &t) { return reinterpret_cast<CUdeviceptr>(t.data_ptr()); }

/// One launch argument on the device: a tensor or a scalar.
struct DevArg {
  std::string name;
  std::optional<Tensor> tensor;
  double scalar = 0;
  DType scalarType = DType::f64;
};

/// A device tensor of `sizes` filled with random values: one host chunk of
/// up to 4M elements (randn, or randint for integers) of whole rows (the
/// last dim), copied to the device and repeated over the whole tensor by
/// device copies, so that 8192x32768 inputs take no minute of host RNG.
Tensor randomDevice(const std::vector<int64_t> &sizes, DType dtype, uint64_t seed,
                    int64_t intHigh = 0) {
  Tensor dev = cuda::empty(sizes, dtype);
  int64_t cols = sizes.empty() ? 1 : sizes.back();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < sizes.size(); ++i)
    rows *= sizes[i];
  int64_t chunkRows = std::max<int64_t>(1, std::min<int64_t>(rows, (4 << 20) / std::max<int64_t>(cols, 1)));
  std::vector<int64_t> chunkSizes = {chunkRows, cols};
  Tensor host = intHigh > 0 ? randint(0, intHigh, chunkSizes, dtype, seed) : randn(chunkSizes, dtype, seed);
  Tensor chunk = cuda::to_device(host);
  size_t rowBytes = size_t(cols) * element_size(dtype);
  for (int64_t r = 0; r < rows; r += chunkRows) {
    int64_t n = std::min(chunkRows, rows - r);
    rt::check(rt::cu().cuMemcpyDtoDAsync(dptr(dev) + r * rowBytes, dptr(chunk), n * rowBytes, nullptr),
              "filling a benchmark input");
  }
  cuda::synchronize();
  return dev;
}

/// A benchmark: an example kernel at one shape.
struct Bench {
  std::string name;   // the kernel's name shared with torch_baseline.py ("softmax")
  std::string file;   // example file stem
  std::string kernel; // kernel name in that file
  std::string dtype, shape; // name + " " + shape is the key shared with torch_baseline.py
  double bytes = 0;   // read + write
  double flops = 0;   // matmul only
  std::function<std::vector<DevArg>()> inputs;
  std::vector<std::string> configs; // the first is "" (default)
  std::vector<ArgSpec> specs;       // what `inputs` makes, for --compile-only
  std::map<std::string, std::pair<int64_t, int64_t>> intRanges; // index inputs, for tuning
  int64_t rows = 0;   // row-wise kernels: the row count (inputs and outputs whose
                      // dim 0 has it are sampled by rows for the cross-check)
  bool sampleWhole = false; // cross-checked on whole inputs and output (a histogram)
  bool sweep = false; // one of issue 5's sweep shapes (not GPU.md's table)
  std::string key() const { return name + " " + shape; }
};

std::vector<std::string> rowConfigs() {
  std::vector<std::string> c = {""};
  for (int b : {1, 2, 4})
    for (int w : {4, 8, 16})
      c.push_back(R"({"block_sizes":[)" + std::to_string(b) + R"(],"num_warps":)" + std::to_string(w) + "}");
  return c;
}

/// A row-wise example at [n, m]: its inputs (x first) and argument specs.
Bench rowBench(const std::string &name, const std::string &kernel, int64_t n, int64_t m, bool sweep) {
  auto T = [](std::string nm, Tensor t) { return DevArg{std::move(nm), std::move(t)}; };
  auto S = [](std::string nm, double v) { return DevArg{std::move(nm), std::nullopt, v, DType::f64}; };
  auto t = [](const char *nm, DType d, std::vector<int64_t> s) { return ArgSpec::tensor(nm, d, s, {}, 16); };
  auto eps = [](double v) { return ArgSpec::scalar("eps", DType::f64, v); };
  std::string shape = std::to_string(n) + "x" + std::to_string(m);
  Bench b;
  b.name = name;
  b.file = name;
  b.kernel = kernel;
  b.dtype = "bf16";
  b.rows = n;
  b.sweep = sweep;
  b.configs = rowConfigs();
  double x = double(n) * m;
  if (name == "add") {
    b.dtype = "f32";
    b.bytes = 3.0 * x * 4;
    b.inputs = [=] { return std::vector<DevArg>{T("x", randomDevice({n, m}, f32, 1)), T("y", randomDevice({n, m}, f32, 2))}; };
    b.specs = {t("x", f32, {n, m}), t("y", f32, {n, m})};
    b.configs = {"", R"({"block_sizes":[8,256],"num_warps":4})", R"({"block_sizes":[4,512],"num_warps":4})",
                 R"({"block_sizes":[16,256],"num_warps":8})", R"({"block_sizes":[2,1024],"num_warps":8})"};
  } else if (name == "softmax") {
    b.bytes = 2.0 * x * 2;
    b.inputs = [=] { return std::vector<DevArg>{T("x", randomDevice({n, m}, bf16, 3))}; };
    b.specs = {t("x", bf16, {n, m})};
  } else if (name == "layernorm") {
    shape += " (+w, b)";
    b.bytes = 2.0 * x * 2 + 2.0 * m * 2 + 2.0 * n * 4;
    b.inputs = [=] {
      return std::vector<DevArg>{T("x", randomDevice({n, m}, bf16, 4)), T("weight", randomDevice({m}, bf16, 5)),
                                 T("bias", randomDevice({m}, bf16, 6)), S("eps", 1e-5)};
    };
    b.specs = {t("x", bf16, {n, m}), t("weight", bf16, {m}), t("bias", bf16, {m}), eps(1e-5)};
  } else if (name == "rmsnorm") {
    shape += " (+w)";
    b.bytes = 2.0 * x * 2 + 1.0 * m * 2;
    b.inputs = [=] {
      return std::vector<DevArg>{T("x", randomDevice({n, m}, bf16, 7)), T("weight", randomDevice({m}, bf16, 8)),
                                 S("eps", 1e-6)};
    };
    b.specs = {t("x", bf16, {n, m}), t("weight", bf16, {m}), eps(1e-6)};
  } else if (name == "sum") {
    b.dtype = "f32";
    b.bytes = x * 4 + 1.0 * n * 4;
    b.inputs = [=] { return std::vector<DevArg>{T("x", randomDevice({n, m}, f32, 9))}; };
    b.specs = {t("x", f32, {n, m})};
  } else if (name == "cross_entropy") {
    b.bytes = x * 2 + 1.0 * n * 8 + 1.0 * n * 4;
    b.inputs = [=] {
      return std::vector<DevArg>{T("logits", randomDevice({n, m}, bf16, 10)),
                                 T("target", randomDevice({n}, DType::i64, 11, m))};
    };
    b.specs = {t("logits", bf16, {n, m}), t("target", DType::i64, {n})};
    b.intRanges["target"] = {0, m};
  }
  b.shape = shape;
  return b;
}

/// Row scans (examples/cumsum.kite.cpp) of x [n, m]: cumsum_rows against
/// torch.cumsum(x, 1), or (`cummax`) cummax_rows, values and i64 positions,
/// against torch.cummax(x, 1). The shape names a dtype other than bf16.
Bench scanBench(int64_t n, int64_t m, bool cummax = false, DType dtype = bf16) {
  Bench b;
  b.name = cummax ? "cummax" : "cumsum";
  b.file = "cumsum";
  b.kernel = cummax ? "cummax_rows" : "cumsum_rows";
  b.dtype = dtype_name(dtype);
  b.rows = n;
  b.shape = std::to_string(n) + "x" + std::to_string(m) + (dtype == bf16 ? "" : " " + b.dtype);
  double e = element_size(dtype);
  b.bytes = double(n) * m * (cummax ? e + e + 8 : e + e);
  b.inputs = [=] { return std::vector<DevArg>{DevArg{"x", randomDevice({n, m}, dtype, 31)}}; };
  b.specs = {ArgSpec::tensor("x", dtype, {n, m}, {}, 16)};
  b.configs = {""};
  for (int w : {4, 8, 16, 32})
    b.configs.push_back(R"({"block_sizes":[1],"num_warps":)" + std::to_string(w) + "}");
  for (int w : {8, 16})
    b.configs.push_back(R"({"block_sizes":[2],"num_warps":)" + std::to_string(w) + "}");
  return b;
}

/// Inverted dropout (examples/random.kite.cpp) of bf16 x [n, m] with p =
/// 0.1, against torch.nn.functional.dropout. The masks differ (another
/// generator), so there is no cross-check of values.
Bench dropoutBench(int64_t n, int64_t m) {
  Bench b;
  b.name = b.kernel = "dropout";
  b.file = "random";
  b.dtype = "bf16";
  b.shape = std::to_string(n) + "x" + std::to_string(m);
  b.bytes = 2.0 * n * m * 2;
  b.inputs = [=] {
    return std::vector<DevArg>{DevArg{"x", randomDevice({n, m}, bf16, 32)},
                               DevArg{"p", std::nullopt, 0.1, DType::f64},
                               DevArg{"seed", std::nullopt, 1234, DType::i64}};
  };
  b.specs = {ArgSpec::tensor("x", bf16, {n, m}, {}, 16), ArgSpec::scalar("p", DType::f64, 0.1),
             ArgSpec::scalar("seed", DType::i64, 1234)};
  b.configs = {"", R"({"block_sizes":[8,256],"num_warps":4})", R"({"block_sizes":[4,512],"num_warps":4})",
               R"({"block_sizes":[16,256],"num_warps":8})"};
  return b;
}

/// A histogram (examples/histogram.kite.cpp) of n int32 values into
/// `bins` bins, against torch.bincount(x, minlength=bins).
Bench histogramBench(int64_t n, int64_t bins) {
  Bench b;
  b.name = b.file = b.kernel = "histogram";
  b.dtype = "i32";
  b.shape = std::to_string(n) + " into " + std::to_string(bins);
  b.bytes = 4.0 * n;
  b.inputs = [=] {
    return std::vector<DevArg>{DevArg{"x", randomDevice({n}, DType::i32, 33, bins)},
                               DevArg{"bins", std::nullopt, double(bins), DType::i64}};
  };
  b.specs = {ArgSpec::tensor("x", DType::i32, {n}, {}, 16),
             ArgSpec::scalar("bins", DType::i64, double(bins))};
  b.intRanges["x"] = {0, bins};
  b.sampleWhole = true;
  b.configs = {"", R"({"block_sizes":[1024],"privatize_atomics":false})"};
  for (const char *pid : {"persistent_interleaved", "persistent_blocked"})
    for (int bs : {2048, 8192})
      for (int w : {4, 8, 16})
        b.configs.push_back(R"({"block_sizes":[)" + std::to_string(bs) + R"(],"num_warps":)" +
                            std::to_string(w) + R"(,"pid_type":")" + pid + "\"}");
  return b;
}

/// Atomic adds of gathered rows: index_add_rows
/// (test/correctness/kernels/atomics.kite.cpp) of f32 src [n, c] into
/// `rows` rows at idx, against torch's zeros.index_add_(0, idx, src).
Bench indexAddBench(int64_t n, int64_t c, int64_t rows) {
  Bench b;
  b.name = "index_add";
  b.file = "atomics";
  b.kernel = "index_add_rows";
  b.dtype = "f32";
  b.shape = std::to_string(n) + "x" + std::to_string(c) + " into " + std::to_string(rows);
  b.bytes = 4.0 * n * c + 8.0 * n + 4.0 * rows * c;
  b.inputs = [=] {
    return std::vector<DevArg>{DevArg{"idx", randomDevice({n}, DType::i64, 35, rows)},
                               DevArg{"src", randomDevice({n, c}, DType::f32, 36)},
                               DevArg{"rows", std::nullopt, double(rows), DType::i64}};
  };
  b.specs = {ArgSpec::tensor("idx", DType::i64, {n}, {}, 16),
             ArgSpec::tensor("src", DType::f32, {n, c}, {}, 16),
             ArgSpec::scalar("rows", DType::i64, double(rows))};
  b.intRanges["idx"] = {0, rows};
  b.sampleWhole = true;
  b.configs = {"", R"({"block_sizes":[16,128],"num_warps":4})",
               R"({"block_sizes":[32,128],"num_warps":8})"};
  return b;
}

/// Row sorts (sort_rows, descending) and top-k (topk_rows, k given) of x
/// [n, m] (examples/topk.kite.cpp), against torch.sort(x, 1, descending)
/// and torch.topk(x, k, 1).
Bench sortBench(int64_t n, int64_t m, DType dtype, int64_t k) {
  Bench b;
  b.name = k ? "topk" : "sort";
  b.file = "topk";
  b.kernel = k ? "topk_rows" : "sort_rows";
  b.dtype = dtype_name(dtype);
  b.rows = n;
  b.shape = std::to_string(n) + "x" + std::to_string(m) + " " + b.dtype +
            (k ? " k" + std::to_string(k) : "");
  int64_t out = k ? k : m;
  b.bytes = double(n) * m * element_size(dtype) + double(n) * out * (element_size(dtype) + 8);
  b.inputs = [=] {
    std::vector<DevArg> in = {DevArg{"x", randomDevice({n, m}, dtype, 34)}};
    if (k)
      in.push_back(DevArg{"k_", std::nullopt, double(k), DType::i64});
    return in;
  };
  b.specs = {ArgSpec::tensor("x", dtype, {n, m}, {}, 16)};
  if (k)
    b.specs.push_back(ArgSpec::scalar("k_", DType::i64, double(k)));
  b.configs = {""};
  for (int w : {4, 8, 16, 32})
    b.configs.push_back(R"({"block_sizes":[1],"num_warps":)" + std::to_string(w) + "}");
  return b;
}

/// A bf16 matrix product: matmul, matmul_bias_relu (x [M, K], y [K, N],
/// bias [N]), matmul_epilogue (also residual [M, N] and scale 0.5), bmm
/// (a [B, M, K], b [B, K, N]) or linear (x [M, K], w [N, K], bias [N]:
/// torch.nn.functional.linear). The shape text is "MxNxK", or "BxMxNxK"
/// for bmm.
Bench productBench(const std::string &name, int64_t M, int64_t N, int64_t K, int64_t B) {
  auto T = [](std::string nm, Tensor t) { return DevArg{std::move(nm), std::move(t)}; };
  auto t = [](const char *nm, std::vector<int64_t> s) { return ArgSpec::tensor(nm, bf16, s, {}, 16); };
  Bench b;
  b.name = b.file = b.kernel = name;
  if (name == "matmul_epilogue")
    b.file = "matmul_bias_relu";
  b.dtype = "bf16";
  b.shape = (name == "bmm" ? std::to_string(B) + "x" : "") + std::to_string(M) + "x" +
            std::to_string(N) + "x" + std::to_string(K);
  b.bytes = 2.0 * B * (double(M) * K + double(K) * N + double(M) * N);
  b.flops = 2.0 * B * M * N * K;
  if (name == "bmm") {
    b.inputs = [=] {
      return std::vector<DevArg>{T("a", randomDevice({B, M, K}, bf16, 12)), T("b", randomDevice({B, K, N}, bf16, 13))};
    };
    b.specs = {t("a", {B, M, K}), t("b", {B, K, N})};
  } else if (name == "linear") {
    b.inputs = [=] {
      return std::vector<DevArg>{T("x", randomDevice({M, K}, bf16, 12)), T("w", randomDevice({N, K}, bf16, 13)),
                                 T("bias", randomDevice({N}, bf16, 14))};
    };
    b.specs = {t("x", {M, K}), t("w", {N, K}), t("bias", {N})};
    b.bytes += 2.0 * N;
  } else {
    b.inputs = [=] {
      std::vector<DevArg> in = {T("x", randomDevice({M, K}, bf16, 12)), T("y", randomDevice({K, N}, bf16, 13))};
      if (name == "matmul_bias_relu" || name == "matmul_epilogue")
        in.push_back(T("bias", randomDevice({N}, bf16, 14)));
      if (name == "matmul_epilogue") {
        in.push_back(T("residual", randomDevice({M, N}, bf16, 15)));
        in.push_back(DevArg{"scale", std::nullopt, 0.5, DType::f64});
      }
      return in;
    };
    b.specs = {t("x", {M, K}), t("y", {K, N})};
    if (name == "matmul_bias_relu" || name == "matmul_epilogue") {
      b.specs.push_back(t("bias", {N}));
      b.bytes += 2.0 * N;
    }
    if (name == "matmul_epilogue") {
      b.specs.push_back(t("residual", {M, N}));
      b.specs.push_back(ArgSpec::scalar("scale", DType::f64, 0.5));
      b.bytes += 2.0 * M * N;
    }
  }
  const char *pre = name == "bmm" ? R"({"block_sizes":[1,)" : R"({"block_sizes":[)";
  // The default (TMA copies for two consumer warpgroups, 128x256x64, L2
  // groups of 8 tile rows), then its neighbours, each one change away: one
  // consumer, smaller tiles for few rows, 256x128 tiles, no grouping
  // (which alone cost 13% at 4096^3 on the H200), thread copies, no warp
  // specialization. (Two programs an SM, 64x128 tiles with 4 stages and
  // min_programs_per_sm 2, lost to these on every row on the H200.)
  const std::string ws = R"(,"tensor_cores":true,"wgmma":true,"warp_specialize":true)";
  const std::string tma = ws + R"(,"indexing":"tma")";
  const std::string grouped = R"(,"l2_groupings":[8])";
  b.configs = {"", std::string(pre) + R"(128,128,64],"num_warps":8,"num_stages":4)" + tma + grouped + "}",
               std::string(pre) + R"(64,128,64],"num_warps":8,"num_stages":6)" + tma + grouped + "}",
               std::string(pre) + R"(256,128,64],"num_warps":12,"num_stages":4)" + tma + grouped + "}",
               std::string(pre) + R"(128,256,64],"num_warps":12,"num_stages":4)" + tma + "}",
               std::string(pre) + R"(128,256,64],"num_warps":12,"num_stages":4)" + ws + grouped + "}",
               std::string(pre) + R"(256,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true)" + grouped + "}"};
  // Two programs an SM of 128 x 128 tiles, one computing warpgroup and a
  // producer each, 3 stages (99 KB of shared memory a program): one
  // program's epilogue and tile start run under the other's products.
  b.configs.push_back(std::string(pre) + R"(128,128,64],"num_warps":8,"num_stages":3,"min_programs_per_sm":2)" + tma +
                      grouped + "}");
  b.configs.push_back(std::string(pre) + R"(128,128,64],"num_warps":8,"num_stages":3,"min_programs_per_sm":2)" + tma +
                      R"(,"generic_mainloop":true)" + grouped + "}");
  // Clusters of two programs (cluster_size 2) on the product loop as
  // kernel code: neighbouring row tiles (L2 groups) share y's tile, which
  // the producers multicast; without groups, neighbouring column tiles
  // share x's. (1.7x slower on the H200 while each remote arrival carried
  // a GPU-wide fence; without it, on an H100, as fast as without clusters.)
  const std::string cluster = tma + R"(,"generic_mainloop":true,"cluster_size":2)";
  b.configs.push_back(std::string(pre) + R"(128,256,64],"num_warps":12,"num_stages":4,"pid_type":"persistent_interleaved")" +
                      cluster + grouped + "}");
  b.configs.push_back(std::string(pre) + R"(128,256,64],"num_warps":12,"num_stages":4,"pid_type":"persistent_interleaved")" +
                      cluster + "}");
  // Fewer 128 x 128 tiles than SMs (128 x 8192 x 8192): K split over 2
  // programs a 128 x 128 tile, or 4 a 128 x 256 one; or 128 x 64 tiles in
  // clusters, a pair sharing x's tile, or 64 x 128 ones, a pair sharing y's.
  if (B * ((M + 127) / 128) * ((N + 127) / 128) < 132) {
    b.configs.push_back(std::string(pre) + R"(128,64,64],"num_warps":12,"num_stages":6)" + cluster + "}");
    b.configs.push_back(std::string(pre) + R"(64,128,64],"num_warps":8,"num_stages":6,"loop_orders":[[0,1]])" +
                        cluster + "}");
    b.configs.push_back(std::string(pre) + R"(128,128,64],"num_warps":12,"num_stages":4,"split_k":2)" + tma + "}");
    b.configs.push_back(std::string(pre) + R"(128,256,64],"num_warps":12,"num_stages":4,"split_k":4)" + tma + "}");
  }
  return b;
}

/// An FP8 product with per-tensor scales (examples/scaled_matmul.kite.cpp):
/// x [M, K] and w [N, K] in e4m3, scales 0.5 and 0.25, bf16 out;
/// torch_baseline.py times torch._scaled_mm on the same shapes (w^T: its
/// column-major second operand). Shape text "MxNxK".
Bench scaledProductBench(int64_t M, int64_t N, int64_t K) {
  auto T = [](std::string nm, Tensor t) { return DevArg{std::move(nm), std::move(t)}; };
  auto S = [](std::string nm, double v) { return DevArg{std::move(nm), std::nullopt, v, DType::f32}; };
  auto t = [](const char *nm, std::vector<int64_t> s) { return ArgSpec::tensor(nm, e4m3, s, {}, 16); };
  Bench b;
  b.name = b.file = b.kernel = "scaled_matmul";
  b.dtype = "e4m3";
  b.shape = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  b.bytes = double(M) * K + double(N) * K + 2.0 * M * N;
  b.flops = 2.0 * M * N * K;
  b.inputs = [=] {
    return std::vector<DevArg>{T("x", randomDevice({M, K}, e4m3, 15)), T("w", randomDevice({N, K}, e4m3, 16)),
                               S("scale_x", 0.5), S("scale_w", 0.25)};
  };
  b.specs = {t("x", {M, K}), t("w", {N, K}), ArgSpec::scalar("scale_x", DType::f32, 0.5),
             ArgSpec::scalar("scale_w", DType::f32, 0.25)};
  // The default (two consumers, 128 x 256 tiles, 128-deep K stages by TMA)
  // and its neighbours: one consumer, 256 x 128 tiles, fewer stages.
  const std::string tma =
      R"(,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","l2_groupings":[8])";
  b.configs = {"", R"({"block_sizes":[128,128,128],"num_warps":8,"num_stages":5)" + tma + "}",
               R"({"block_sizes":[256,128,128],"num_warps":12,"num_stages":4)" + tma + "}",
               R"({"block_sizes":[128,256,128],"num_warps":12,"num_stages":3)" + tma + "}"};
  return b;
}

/// Flash attention forward (examples/attention.kite.cpp, or with `causal`
/// examples/causal_attention.kite.cpp) on q, k, v of [B*H, S, D] bf16 (or
/// f16: the shape text starts with "f16");
/// torch_baseline.py times scaled_dot_product_attention (is_causal for
/// the causal one) on the same tensors as [B, H, S, D]. Sampled by (batch,
/// head) slices for the cross-check. Causal FLOPs count half the scores.
/// A sweep row tries the default and three full configs.
Bench attentionBench(int64_t B, int64_t H, int64_t S, int64_t D, bool causal = false,
                     DType dt = bf16, bool sweep = false) {
  auto T = [](std::string nm, Tensor t) { return DevArg{std::move(nm), std::move(t)}; };
  auto t = [dt](const char *nm, std::vector<int64_t> s) { return ArgSpec::tensor(nm, dt, s, {}, 16); };
  Bench b;
  b.name = b.file = b.kernel = causal ? "causal_attention" : "attention";
  b.dtype = dt == f16 ? "f16" : "bf16";
  b.sweep = sweep;
  b.shape = std::string(dt == f16 ? "f16 " : "") + "B" + std::to_string(B) + " H" +
            std::to_string(H) + " S" + std::to_string(S) + " D" + std::to_string(D);
  int64_t BH = B * H;
  b.bytes = 4.0 * BH * S * D * 2;
  b.flops = (causal ? 2.0 : 4.0) * BH * S * S * D; // q k^T and p v
  b.inputs = [=] {
    return std::vector<DevArg>{T("q", randomDevice({BH, S, D}, dt, 21)), T("k", randomDevice({BH, S, D}, dt, 22)),
                               T("v", randomDevice({BH, S, D}, dt, 23))};
  };
  b.specs = {t("q", {BH, S, D}), t("k", {BH, S, D}), t("v", {BH, S, D})};
  b.rows = BH;
  // The default (sm_90a: a producer warpgroup copying k and v by TMA into
  // rings of 2 stages, two computing warpgroups of 64 query rows taking
  // turns, 128 x 128 tiles, the second product a tile late), then the same
  // with exp2 by the hardware's ex2 alone (fast_math), its neighbours (3
  // stages, 64-key tiles, no pingpong, one computing warpgroup), and the
  // best configs without a producer (one staging buffer each for k and v,
  // refilled after its product).
  const std::string wg = R"("tensor_cores":true,"wgmma":true,"fast_math":true)";
  const std::string ws = wg + R"(,"warp_specialize":true,"overlap_products":true)";
  // Persistent programs: the producer copies the next program's q, k and
  // v while this one finishes (1% faster at S1024 on an H100; slower at
  // S4096, and for causal, whose static assignment of programs to SMs is
  // unbalanced).
  const std::string persistent = R"(,"pid_type":"persistent_interleaved")";
  // Persistent programs that take the next program id as they finish one:
  // no static assignment to unbalance causal attention's programs.
  const std::string dynamic = R"(,"pid_type":"persistent_dynamic")";
  // Two programs an SM, one computing warpgroup each: one program's start
  // and end run under the other's products.
  const std::string twoPerSm =
      "{" + ws + R"(,"block_sizes":[1,64,64],"num_warps":8,"num_stages":2,"min_programs_per_sm":2})";
  // Programs in groups of 16 heads, each group's query tiles longest first
  // (causal: the last wave runs the shortest), its k and v 16 heads' worth.
  const std::string grouped =
      "{" + ws + R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"pingpong":true,"l2_groupings":[16]})";
  // The same groups, taken as programs finish (H100, causal S1024 D128:
  // 0.087 ms against the default's 0.095).
  const std::string groupedDynamic =
      "{" + ws + R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"pingpong":true,"l2_groupings":[16])" +
      dynamic + "}";
  // Three programs an SM of 64 x 64 tiles, one computing warpgroup and a
  // producer each, 80 registers a thread at launch (H100, causal S1024 D64:
  // 0.063 ms against the default's 0.071). At D128 ptxas cannot fit a
  // product's registers in 80.
  const std::string threePerSm =
      "{" + ws + R"(,"block_sizes":[1,64,64],"num_warps":8,"num_stages":3,"min_programs_per_sm":3})";
  if (sweep) {
    b.configs = {"", "{" + ws + R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"pingpong":true})",
                 "{" + ws + R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"pingpong":true)" + persistent + "}",
                 "{" + ws + R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"pingpong":true)" + dynamic + "}",
                 twoPerSm, grouped, groupedDynamic,
                 "{" + wg + R"(,"block_sizes":[1,64,128],"num_warps":4,"num_stages":1})",
                 "{" + wg + R"(,"block_sizes":[1,64,128],"num_warps":4,"num_stages":1)" + dynamic + "}"};
    if (D <= 64)
      b.configs.push_back(threePerSm);
    return b;
  }
  b.configs = {"",
               "{" + ws + R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"pingpong":true})",
               "{" + ws + R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"pingpong":true)" + persistent + "}",
               "{" + ws + R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"pingpong":true)" + dynamic + "}",
               "{" + ws + R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2})",
               "{" + ws + R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":3,"pingpong":true})",
               "{" + ws + R"(,"block_sizes":[1,128,64],"num_warps":12,"num_stages":3,"pingpong":true})",
               "{" + ws + R"(,"block_sizes":[1,64,128],"num_warps":8,"num_stages":2})",
               "{" + wg + R"(,"block_sizes":[1,64,128],"num_warps":4,"num_stages":1})",
               "{" + wg + R"(,"block_sizes":[1,64,64],"num_warps":4,"num_stages":1})",
               twoPerSm, grouped, groupedDynamic};
  if (D <= 64)
    b.configs.push_back(threePerSm);
  // Clusters of two programs on neighbouring query tiles, k and v
  // multicast (not causal: there, no key tile is the same for both).
  if (!causal)
    b.configs.push_back("{" + ws +
                        R"(,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"pingpong":true,"cluster_size":2})");
  return b;
}

/// GPU.md's table, then issue 5's sweeps (softmax 4096 x {1024, 4096,
/// 16384, 65536}; layernorm and rmsnorm 16384 x {768, 4096, 12288};
/// cross-entropy 4096 x {32000, 128256}; add f32 at 2^20 and 2^28
/// elements), the matrix products and GPU.md's attention.
std::vector<Bench> benches() {
  const int64_t N = 8192, M = 8192, V = 32768, MM = 4096;
  std::vector<Bench> b;
  b.push_back(rowBench("add", "add", N, M, false));
  b.push_back(rowBench("softmax", "softmax", N, M, false));
  // layernorm writes the output, mean and rstd (as native_layer_norm);
  // F.layer_norm, which torch_baseline.py times, the output only. The
  // example's layer_norm writes the output only, but at 8192x8192 with 8
  // warps, keep_loads and streaming ptxas gives it 80 registers where
  // layernorm gets 64 (3 programs per SM, not 4): 0.0754 ms against 0.0696
  // (H200, separate runs), and 0.0702 at its best config.
  b.push_back(rowBench("layernorm", "layernorm", N, M, false));
  b.push_back(rowBench("rmsnorm", "rmsnorm", N, M, false));
  b.push_back(rowBench("sum", "sum_kernel", N, M, false));
  b.push_back(rowBench("cross_entropy", "cross_entropy", N, V, false));
  b.push_back(productBench("matmul", MM, MM, MM, 1));
  for (int64_t m : {1024, 4096, 16384, 65536})
    b.push_back(rowBench("softmax", "softmax", 4096, m, true));
  for (const char *k : {"layernorm", "rmsnorm"})
    for (int64_t m : {768, 4096, 12288})
      b.push_back(rowBench(k, k, 16384, m, true));
  for (int64_t m : {32000, 128256})
    b.push_back(rowBench("cross_entropy", "cross_entropy", 4096, m, true));
  b.push_back(rowBench("add", "add", 1024, 1024, true));
  b.push_back(rowBench("add", "add", 16384, 16384, true));
  // Rows that are not 16-byte multiples: every access element by element.
  b.push_back(rowBench("add", "add", 8192, 8191, true));
  b.push_back(rowBench("softmax", "softmax", 8192, 4097, true));
  // Issue 6's matrix products (M x N x K; bmm: batch x M x N x K).
  b.push_back(productBench("matmul", 8192, 8192, 8192, 1));
  b.push_back(productBench("matmul", 4097, 4095, 4096, 1));
  b.push_back(productBench("matmul", 16384, 1024, 4096, 1));
  b.push_back(productBench("matmul", 1024, 16384, 8192, 1));
  b.push_back(productBench("matmul", 128, 8192, 8192, 1));
  b.push_back(productBench("matmul_bias_relu", 4096, 4096, 4096, 1));
  b.push_back(productBench("matmul_epilogue", 4096, 4096, 4096, 1));
  b.push_back(productBench("bmm", 1024, 1024, 1024, 64));
  b.push_back(productBench("linear", 4096, 4096, 4096, 1));
  b.push_back(productBench("linear", 8192, 8192, 8192, 1));
  // Issue 24's FP8 product (per-tensor scales), against torch._scaled_mm.
  b.push_back(scaledProductBench(8192, 8192, 8192));
  b.push_back(attentionBench(4, 32, 4096, 128));
  b.push_back(attentionBench(4, 32, 4096, 128, /*causal=*/true));
  // Issue 22's attention sweep: bf16 and f16, head dims 64 and 128, B4 H32
  // at S 1024, 4096, 16384 and B1 H32 S32768, non-causal and causal (the
  // two rows above are its bf16 D128 S4096 ones).
  for (DType dt : {bf16, f16})
    for (int64_t D : {64, 128})
      for (auto [B, S] : {std::pair<int64_t, int64_t>{4, 1024}, {4, 4096}, {4, 16384}, {1, 32768}})
        for (bool causal : {false, true})
          if (!(dt == bf16 && D == 128 && S == 4096))
            b.push_back(attentionBench(B, 32, S, D, causal, dt, /*sweep=*/true));
  // Issue 25's operations.
  b.push_back(scanBench(8192, 8192));
  b.push_back(scanBench(4096, 32000));
  b.push_back(scanBench(8192, 8192, false, DType::f32));
  b.push_back(scanBench(4096, 32000, false, DType::f32));
  b.push_back(scanBench(8192, 8192, /*cummax=*/true));
  b.push_back(dropoutBench(8192, 8192));
  b.push_back(histogramBench(16 << 20, 256));
  b.push_back(indexAddBench(1 << 18, 128, 4096));
  for (auto [n, m] : {std::pair<int64_t, int64_t>{8192, 8192}, {4096, 32000}})
    for (DType dt : {bf16, f32}) {
      b.push_back(sortBench(n, m, dt, 0));
      for (int64_t k : {8, 64})
        b.push_back(sortBench(n, m, dt, k));
    }
  return b;
}

/// --filter's comma-separated terms: a kernel runs if its "name shape"
/// contains one of the plain terms (any, where there are none) and none of
/// the terms written with a leading '-' ("-S16384,-S32768": all but the
/// long attention rows). torch_baseline.py reads the filter the same way.
bool selected(const std::string &filter, const Bench &b) {
  bool anyPlain = false, plainMatch = false;
  const std::string key = b.key();
  for (size_t at = 0; at <= filter.size();) {
    size_t comma = std::min(filter.find(',', at), filter.size());
    std::string part = filter.substr(at, comma - at);
    at = comma + 1;
    if (part.empty())
      continue;
    if (part[0] == '-') {
      if (part.size() > 1 && key.find(part.substr(1)) != std::string::npos)
        return false;
      continue;
    }
    anyPlain = true;
    plainMatch |= key.find(part) != std::string::npos;
  }
  return !anyPlain || plainMatch;
}

/// Writes the first `rows` rows of the row inputs of `args` (x, y, logits,
/// target; the others, weights and biases, whole) and of `output` into
/// `path`, one after another, and returns their layout (name, dtype, shape,
/// byte offset) for torch_baseline.py to read back.
json writeSample(const std::string &path, const Bench &b, const std::vector<DevArg> &args, const Tensor &output,
                 int64_t rows) {
  // --samples names a folder, made here if it is not there yet.
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::ofstream f(path, std::ios::binary);
  json layout = {{"file", path}, {"rows", rows}, {"inputs", json::array()}};
  int64_t offset = 0;
  auto put = [&](const std::string &name, const Tensor &t) {
    std::vector<int64_t> sizes = t.sizes();
    bool byRow = b.rows > 0 && (name == "x" || name == "y" || name == "logits" || name == "target" || name == "out" ||
                 name == "q" || name == "k" || name == "v");
    if (byRow && !sizes.empty() && sizes[0] == b.rows)
      sizes[0] = std::min(rows, sizes[0]);
    int64_t n = 1;
    for (int64_t d : sizes)
      n *= d;
    std::vector<char> host(size_t(n * element_size(t.dtype())));
    rt::check(rt::cu().cuMemcpyDtoHAsync(host.data(), dptr(t), host.size(), nullptr), "copying a benchmark sample");
    cuda::synchronize();
    f.write(host.data(), (std::streamsize)host.size());
    json e = {{"name", name}, {"dtype", dtype_name(t.dtype())}, {"shape", sizes}, {"offset", offset}};
    offset += (int64_t)host.size();
    return e;
  };
  for (const DevArg &a : args) {
    if (a.tensor)
      layout["inputs"].push_back(put(a.name, *a.tensor));
    else
      layout["inputs"].push_back({{"name", a.name}, {"scalar", a.scalar}});
  }
  layout["output"] = put("out", output);
  if (!f)
    throw Error("could not write " + path);
  return layout;
}

/// The row's key as a file name: anything not a letter or digit becomes '_'.
std::string fileStem(const Bench &b) {
  std::string file = b.key();
  for (char &c : file)
    if (!std::isalnum((unsigned char)c))
      c = '_';
  return file;
}

/// --plans: the row's plan (kite::serialize's bytes) in DIR/<row>.plan and
/// DIR/<row>.json with what torch_baseline.py needs to make its arguments
/// (the row's key, the plan file, each argument's scalar value or the range
/// of an integer input's values); returns that JSON.
json writePlan(const std::string &dir, const Bench &b, const std::vector<DevArg> &args, const KernelPlan &plan) {
  std::string file = fileStem(b);
  std::filesystem::create_directories(dir);
  std::string planPath = dir + "/" + file + ".plan";
  std::vector<uint8_t> bytes = serialize(plan);
  std::ofstream(planPath, std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()), (std::streamsize)bytes.size());
  json j = {{"key", b.key()}, {"plan", planPath}, {"config", plan.config}, {"args", json::array()}};
  for (const DevArg &a : args) {
    json e = {{"name", a.name}};
    if (!a.tensor)
      e["value"] = a.scalar;
    else if (auto it = b.intRanges.find(a.name); it != b.intRanges.end())
      e["int_range"] = {it->second.first, it->second.second};
    j["args"].push_back(e);
  }
  std::ofstream(dir + "/" + file + ".json") << j.dump(2) << "\n";
  return j;
}

/// The configs a row tries: its list, or with --quick its default alone,
/// or with --config that one alone.
std::vector<std::string> configsOf(const Bench &b, const Settings &s) {
  if (!s.config.empty())
    return {s.config};
  if (s.quick)
    return {b.configs.empty() ? std::string() : b.configs.front()}; // as resize(1)
  return b.configs;
}

/// --compile-only: every config of every benchmark through the compiler and
/// NVRTC for sm_90a at the benchmark shapes (no GPU needed). Returns 1 if a
/// default config fails.
int compileOnly(const Settings &s);

const char *irOf(const std::string &file) {
  for (const auto &e : kite_test_ir::kFiles)
    if (file == e.name)
      return e.text;
  return nullptr;
}

std::string oneLine(std::string s) {
  for (char &c : s)
    if (c == '\n')
      c = ' ';
  return s.size() > 300 ? s.substr(0, 300) + "..." : s;
}

int parseArgs(int argc, char **argv, Settings &s) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    // --flag=value as well as --flag value (a filter may start with '-').
    std::optional<std::string> inlineValue;
    if (size_t eq = a.find('='); a.starts_with("--") && eq != std::string::npos) {
      inlineValue = a.substr(eq + 1);
      a.resize(eq);
    }
    auto value = [&](const char *flag) -> std::string {
      if (inlineValue)
        return *inlineValue;
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kite_bench: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--json")
      s.jsonPath = value("--json");
    else if (a == "--runs")
      s.runs = std::max(1, std::stoi(value("--runs")));
    else if (a == "--warmup")
      s.warmup = std::max(0, std::stoi(value("--warmup")));
    else if (a == "--filter")
      s.filter = value("--filter");
    else if (a == "--samples")
      s.samplesDir = value("--samples");
    else if (a == "--plans")
      s.plansDir = value("--plans");
    else if (a == "--quick")
      s.quick = true;
    else if (a == "--config")
      s.config = value("--config");
    else if (a == "--compile-only")
      s.compileOnly = true;
    else if (a == "--tune") {
      std::string list = value("--tune");
      for (size_t at = 0; at <= list.size();) {
        size_t comma = std::min(list.find(',', at), list.size());
        std::string e = list.substr(at, comma - at);
        if (!autotune::parseEffort(e)) {
          std::fprintf(stderr, "kite_bench: --tune takes quick, full or quick,full, not '%s'\n", e.c_str());
          return 2;
        }
        s.tune.push_back(e);
        at = comma + 1;
      }
    } else if (a == "--budget")
      s.budget = std::stod(value("--budget"));
    else if (a == "-h" || a == "--help") {
      std::puts("usage: kite_bench [--json PATH] [--runs N (100)] [--warmup N (10)] [--quick] [--filter S]\n"
                "                  [--compile-only] [--samples DIR] [--plans DIR]\n"
                "  Times the memory-bound example kernels and matmul on GPU 0 (CUDA events, median,\n"
                "  L2 flushed before each run) and the 1 GiB device-to-device copy bandwidth.\n"
                "  --quick: default configs only (also with --compile-only); --config JSON: that config\n"
                "  only, on every selected row (one the row's kernel turns down fails the row);\n"
                "  --filter S[,S...]: only kernels\n"
                "  whose \"name shape\" contains an S (an S written -S: none that contain it);\n"
                "  --samples DIR: write the first rows of each row-wise kernel's inputs and first output\n"
                "  to DIR, for torch_baseline.py --check-against to compare with PyTorch;\n"
                "  --plans DIR: write each row's fastest plan (DIR/<row>.plan, kite::serialize's bytes) and\n"
                "  its arguments (DIR/<row>.json), for torch_baseline.py --kite-plans to time beside PyTorch;\n"
                "  --compile-only: compile every config for sm_90a at the benchmark shapes (no GPU).\n"
                "  --tune quick|full|quick,full [--budget S]: autotune each kernel at each effort\n"
                "  instead of trying the fixed configs.");
      std::exit(0);
    } else {
      std::fprintf(stderr, "kite_bench: unknown argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  return 0;
}

void writeJson(const Settings &s, const json &j) {
  if (s.jsonPath.empty())
    return;
  std::ofstream f(s.jsonPath);
  f << j.dump(2) << "\n";
  if (!f)
    std::fprintf(stderr, "kite_bench: could not write %s\n", s.jsonPath.c_str());
}

/// One config's plan, or why it did not compile.
struct Compiled {
  std::optional<KernelPlan> plan;
  std::string error;
};

/// Every config of a row compiled at once, a thread per config up to the
/// machine's cores: NVRTC and ptxas take most of a sweep's time (attention
/// S1024 D64's 20 configs: 9.4 s one after another on 2 cores, 5.1 s on
/// both), the timing a fraction of it. compileToPlan is thread-safe (the
/// autotuner compiles its batches the same way).
std::vector<Compiled> compileConfigs(const KernelSource &source, const std::vector<ArgSpec> &specs,
                                     const std::vector<std::string> &configs, const CompileOptions &target) {
  std::vector<Compiled> out(configs.size());
  autotune::parallelFor(configs.size(), autotune::hardwareThreads(), [&](size_t i) {
    try {
      out[i].plan = compileToPlan(source, specs, Options{{}, configs[i]}, target);
    } catch (const std::exception &e) {
      out[i].error = e.what();
    }
  });
  return out;
}

int compileOnly(const Settings &s) {
  int rc = 0;
  for (Bench b : benches()) {
    if (!selected(s.filter, b))
      continue;
    b.configs = configsOf(b, s);
    const char *ir = irOf(b.file);
    if (!ir) {
      std::printf("%-14s no captured IR for %s\n", b.name.c_str(), b.file.c_str());
      rc = 1;
      continue;
    }
    KernelSource source{nullptr, b.kernel, ir, "bench", b.file};
    std::vector<Compiled> compiled = compileConfigs(source, b.specs, b.configs, CompileOptions{"sm_90a"});
    for (size_t i = 0; i < b.configs.size(); ++i) {
      const std::string &config = b.configs[i];
      const char *shown = config.empty() ? "default" : config.c_str();
      if (const std::optional<KernelPlan> &plan = compiled[i].plan) {
        std::printf("%-14s %-40s ok: grid [%u,%u,%u] block [%u,%u,%u] shared %u B, %zu B cubin\n", b.name.c_str(),
                    shown, plan->grid[0], plan->grid[1], plan->grid[2], plan->block[0], plan->block[1],
                    plan->block[2], plan->dynamicSharedBytes, plan->binary.size());
      } else {
        std::printf("%-14s %-40s rejected: %s\n", b.name.c_str(), shown, oneLine(compiled[i].error).c_str());
        if (config.empty())
          rc = 1;
      }
    }
    std::fflush(stdout);
  }
  return rc;
}

} // namespace

int main(int argc, char **argv) {
  if (std::optional<int> worker = autotune::maybeRunWorker(argc, argv))
    return *worker;
  Settings s;
  if (int rc = parseArgs(argc, argv, s))
    return rc;
  if (s.compileOnly)
    return compileOnly(s);
  json out;
  if (!gpu_available()) {
    std::string reason = gpu_unavailable_reason();
    std::printf("kite_bench: no CUDA GPU (%s); nothing measured.\n", reason.c_str());
    out = {{"gpu", false}, {"reason", reason}, {"kernels", json::array()}};
    writeJson(s, out);
    return 0;
  }
  try {
    rt::setPoisonOutputs(false); // a poison memset would be inside the timed interval
    const DeviceProperties &props = device_properties(0);
    rt::ContextScope scope(rt::DeviceContext::get(0));
    out["gpu"] = true;
    out["device"] = props.name;
    out["arch"] = props.arch();
    out["driver"] = props.driverVersion;
    out["runs"] = s.runs;
    out["warmup"] = s.warmup;
    out["l2_flush_bytes"] = 256 << 20;
    std::printf("kite_bench on %s (%s), median of %d runs after %d warm-up, L2 flushed\n", props.name.c_str(),
                props.arch().c_str(), s.runs, s.warmup);

    Tensor flush = cuda::empty({256 << 20}, DType::i8);

    // The roofline: a 1 GiB device-to-device copy, read + write.
    double copyGBs = 0;
    {
      const int64_t bytes = int64_t(1) << 30;
      Tensor src = cuda::zeros({bytes}, DType::i8), dst = cuda::empty({bytes}, DType::i8);
      double ms = autotune::timeLaunches(
          [&] {
            rt::check(rt::cu().cuMemcpyDtoDAsync(dptr(dst), dptr(src), bytes, nullptr), "copying 1 GiB");
          },
          nullptr, 5, std::max(s.runs, 50));
      copyGBs = 2.0 * bytes / (ms * 1e-3) / 1e9;
      out["copy"] = {{"bytes", bytes}, {"ms", ms}, {"gbps", copyGBs}};
      std::printf("%-14s %-18s %9.3f ms %8.0f GB/s (read + write; the roofline below)\n", "copy d2d", "1 GiB", ms,
                  copyGBs);
    }
    std::fflush(stdout);

    out["kernels"] = json::array();
    for (const Bench &b : benches()) {
      if (!selected(s.filter, b))
        continue;
      json k = {{"name", b.name}, {"key", b.key()}, {"sweep", b.sweep}, {"kernel", b.kernel}, {"file", b.file}, {"dtype", b.dtype},
                {"shape", b.shape}, {"bytes", b.bytes}, {"flops", b.flops}};
      try {
        const char *ir = irOf(b.file);
        if (!ir)
          throw Error("no captured IR for " + b.file + " in examples_ir.h");
        std::vector<DevArg> args = b.inputs();
        std::vector<ArgSpec> specs;
        std::vector<KernelArg> kargs;
        for (const DevArg &a : args) {
          if (a.tensor) {
            specs.push_back(ArgSpec::of(a.name, *a.tensor));
            kargs.emplace_back(*a.tensor);
          } else {
            specs.push_back(ArgSpec::scalar(a.name, a.scalarType, a.scalar));
            kargs.push_back(KernelArg::scalar(a.scalarType, a.scalar));
          }
        }
        KernelSource source{nullptr, b.kernel, ir, "bench", b.file};
        std::vector<std::string> configs = configsOf(b, s);
        // --tune: the autotuner's winner at each effort instead.
        json tunings = json::array();
        for (const std::string &effort : s.tune) {
          autotune::TuneRequest request;
          request.kernel = source;
          request.args = specs;
          request.space = configSpaceOf(source, specs);
          request.compile = [&](const std::string &config) {
            return compileToPlan(source, specs, Options{{}, config});
          };
          autotune::TuneOptions options;
          options.effort = *autotune::parseEffort(effort);
          options.budgetSeconds = s.budget;
          options.store = false;
          options.bench.intRanges = b.intRanges;
          options.log = [](const std::string &line) { std::fprintf(stderr, "%s\n", line.c_str()); };
          autotune::TuneResult r = autotune::tune(request, options);
          // Every config timed, as [config, search ms, finalists' re-timed
          // ms or null], to see what the search saw.
          json timed = json::array();
          for (const auto &t : r.timed)
            timed.push_back({t.config, t.ms, t.finalMs > 0 ? json(t.finalMs) : json(nullptr)});
          tunings.push_back({{"effort", effort}, {"config", r.config}, {"tune_ms", r.ms},
                             {"seconds", r.seconds}, {"tried", r.stats.tried},
                             {"rejected", r.stats.rejected}, {"failed", r.stats.failed},
                             {"wrong", r.stats.wrong}, {"timed", timed}});
          std::printf("%-14s %-18s tuned (%s): %.4f ms in %.1f s, %d configs (%d rejected, %d failed)\n",
                      b.name.c_str(), b.shape.c_str(), effort.c_str(), r.ms, r.seconds, r.stats.tried,
                      r.stats.rejected, r.stats.failed);
          std::fflush(stdout);
          configs.push_back(r.config);
        }
        if (!s.tune.empty()) {
          k["tuning"] = tunings;
          configs.erase(configs.begin() + 1, configs.end() - (long)s.tune.size());
        }
        json tried = json::array();
        std::optional<KernelPlan> bestPlan;
        double bestMs = INFINITY, defaultMs = NAN;
        std::string bestConfig;
        std::vector<std::string> timed; // resolved configs already timed
        struct Candidate {
          size_t entry; // in `tried`
          std::string config;
          KernelPlan plan;
          double ms;
          bool slow;
        };
        std::vector<Candidate> candidates;
        std::vector<Compiled> compiled = compileConfigs(source, specs, configs, CompileOptions{});
        for (size_t i = 0; i < configs.size(); ++i) {
          const std::string &config = configs[i];
          json c = {{"config", config.empty() ? "default" : config}};
          try {
            if (!compiled[i].plan)
              throw Error(compiled[i].error);
            KernelPlan plan = std::move(*compiled[i].plan);
            c["resolved"] = plan.config;
            c["grid"] = plan.grid;
            c["persistent"] = plan.persistent;
            c["block"] = plan.block;
            if (std::find(timed.begin(), timed.end(), plan.config) != timed.end()) {
              c["skipped"] = "the same resolved config as one above";
              tried.push_back(c);
              continue;
            }
            timed.push_back(plan.config);
            std::vector<Tensor> results(plan.results.size());
            auto launch = [&] { run_plan(plan, kargs, results); };
            // A slow kernel (matmul on CUDA cores) gets fewer runs, never under 50.
            double once = autotune::timeLaunches(launch, nullptr, 1, 1);
            bool slow = once > 10.0;
            double ms = autotune::timeLaunches(launch, &flush, slow ? 2 : s.warmup, slow ? std::min(s.runs, 50) : s.runs);
            c["ms"] = ms;
            if (config.empty())
              defaultMs = ms;
            candidates.push_back({tried.size(), config.empty() ? "default" : config, std::move(plan), ms, slow});
          } catch (const std::exception &e) {
            c["error"] = oneLine(e.what());
          }
          tried.push_back(c);
        }
        // The fastest few again, interleaved (as the tuner re-times its
        // finalists): on tensor-core kernels the card slows as it heats, so
        // a config timed first, after the compiles left it idle, would win
        // by its place in the list. Each round times every finalist; a
        // finalist's time is its median over the rounds.
        auto faster = [](const Candidate &a, const Candidate &b) { return a.ms < b.ms; };
        std::sort(candidates.begin(), candidates.end(), faster);
        candidates.resize(std::min<size_t>(candidates.size(), kFinalists));
        if (candidates.size() > 1 && !candidates.front().slow) {
          std::vector<std::vector<double>> rounds(candidates.size());
          for (int round = 0; round < kFinalRounds; ++round)
            for (size_t i = 0; i < candidates.size(); ++i) {
              std::vector<Tensor> results(candidates[i].plan.results.size());
              rounds[i].push_back(autotune::timeLaunches(
                  [&] { run_plan(candidates[i].plan, kargs, results); }, &flush, 2,
                  std::max(5, s.runs / kFinalRounds)));
            }
          for (size_t i = 0; i < candidates.size(); ++i) {
            candidates[i].ms = autotune::medianOf(rounds[i]);
            tried[candidates[i].entry]["final_ms"] = candidates[i].ms;
            tried[candidates[i].entry]["final_rounds"] = rounds[i];
          }
          std::stable_sort(candidates.begin(), candidates.end(), faster);
        }
        if (!candidates.empty()) {
          bestMs = candidates.front().ms;
          bestConfig = candidates.front().config;
          bestPlan = std::move(candidates.front().plan);
        }
        k["configs"] = tried;
        // Each effort's winner as timed here (identical configs share a time).
        for (json &t : tunings) {
          std::string resolved;
          for (const json &c : tried)
            if (c.value("config", "") == t["config"].get<std::string>()) {
              if (c.contains("ms"))
                t["ms"] = c["ms"];
              resolved = c.value("resolved", "");
            }
          if (!t.contains("ms"))
            for (const json &c : tried)
              if (c.contains("ms") && c.value("resolved", "") == resolved && !resolved.empty())
                t["ms"] = c["ms"];
        }
        if (!tunings.empty())
          k["tuning"] = tunings;
        if (!bestPlan)
          throw Error("no config compiled and ran (see configs)");
        // The winner again: the same version timed twice shows the noise.
        std::vector<Tensor> results(bestPlan->results.size());
        bool slow = bestMs > 10.0;
        double again = autotune::timeLaunches([&] { run_plan(*bestPlan, kargs, results); }, &flush, slow ? 2 : s.warmup,
                              slow ? std::min(s.runs, 50) : s.runs);
        if (!s.samplesDir.empty() && (b.rows > 0 || b.sampleWhole) && !results.empty())
          k["sample"] = writeSample(s.samplesDir + "/" + fileStem(b) + ".bin", b, args, results[0], 4);
        if (!s.plansDir.empty())
          k["plan"] = writePlan(s.plansDir, b, args, *bestPlan);
        double gbps = b.bytes / (bestMs * 1e-3) / 1e9;
        k["ms"] = bestMs;
        k["repeat_ms"] = again;
        k["default_ms"] = std::isnan(defaultMs) ? json(nullptr) : json(defaultMs);
        k["config"] = bestConfig;
        k["resolved_config"] = bestPlan->config;
        k["gbps"] = gbps;
        k["pct_copy"] = 100.0 * gbps / copyGBs;
        k["roofline_ms"] = b.bytes / (copyGBs * 1e9) * 1e3;
        if (b.flops > 0)
          k["tflops"] = b.flops / (bestMs * 1e-3) / 1e12;
        std::printf("%-14s %-18s %9.3f ms %8.0f GB/s %5.1f%% of copy  (again %.3f ms; default %.3f ms; best %s)",
                    b.name.c_str(), b.shape.c_str(), bestMs, gbps, 100.0 * gbps / copyGBs, again, defaultMs,
                    bestConfig.c_str());
        if (b.flops > 0)
          std::printf(" %.1f TFLOP/s", b.flops / (bestMs * 1e-3) / 1e12);
        std::printf("\n");
      } catch (const std::exception &e) {
        k["error"] = oneLine(e.what());
        std::printf("%-14s %-18s FAILED: %s\n", b.name.c_str(), b.shape.c_str(), oneLine(e.what()).c_str());
      }
      std::fflush(stdout);
      out["kernels"].push_back(k);
      cuda::synchronize();
    }
  } catch (const std::exception &e) {
    std::printf("kite_bench: FAILED: %s\n", e.what());
    out["error"] = oneLine(e.what());
    writeJson(s, out);
    return 1;
  }
  writeJson(s, out);
  return 0;
}
