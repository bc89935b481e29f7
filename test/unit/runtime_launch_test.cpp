//===- runtime_launch_test.cpp - Launch-time checks, registries -----------===//
//
// This file tests what a launch checks before it touches the GPU (the
// arguments against the plan's specs, with the exact messages), the
// captured-kernel registry, and the compiler hook with and without a
// compiler. No GPU is needed: "CUDA tensors" here wrap addresses that are
// never dereferenced.
//
//===----------------------------------------------------------------------===//

#include "runtime/CompilerHook.h"
#include "runtime/Launch.h"
#include "runtime/PlanLog.h"

#include <kite/runtime.hpp>

#include <gtest/gtest.h>

#include <thread>

using namespace kite;
using namespace kite::runtime;

namespace {

/// A device tensor descriptor over a fake, 256-byte aligned address.
Tensor fakeCuda(std::vector<int64_t> sizes, DType dtype, std::vector<int64_t> strides = {},
                int device = 0, uintptr_t address = 0x7f0000000000) {
  return Tensor::from_blob(reinterpret_cast<void *>(address), std::move(sizes),
                           std::move(strides), dtype, Device::cuda(device));
}

KernelPlan softmaxPlan() {
  KernelPlan p;
  p.key = "softmax-test";
  p.name = "softmax";
  p.kernelName = "softmax_kernel";
  p.binary = {0};
  p.args = {ArgSpec::tensor("x", bf16, {8, 8}, {}, 16), ArgSpec::scalar("n", i64),
            ArgSpec::scalar("causal", boolean, 1.0)};
  return p;
}

std::string argError(const KernelPlan &plan, std::vector<KernelArg> args) {
  try {
    validate_args(plan, args);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(RuntimeLaunch, ValidArguments) {
  Tensor x = fakeCuda({8, 8}, bf16);
  std::vector<KernelArg> args = {x, int64_t(3), true};
  EXPECT_EQ(validate_args(softmaxPlan(), args), 0);
  Tensor x1 = fakeCuda({8, 8}, bf16, {}, 1);
  args = {x1, int64_t(3), true};
  EXPECT_EQ(validate_args(softmaxPlan(), args), 1) << "the launch device is the tensors'";
  // Strides of size-1 dimensions do not matter.
  KernelPlan p = softmaxPlan();
  p.args[0] = ArgSpec::tensor("x", bf16, {1, 8});
  Tensor row = fakeCuda({1, 8}, bf16, {1000, 1});
  args = {row, int64_t(3), true};
  EXPECT_NO_THROW(validate_args(p, args));
}

TEST(RuntimeLaunch, ArgumentMessages) {
  KernelPlan p = softmaxPlan();
  Tensor cpu = kite::zeros({8, 8}, bf16);
  EXPECT_EQ(argError(p, {cpu, int64_t(3), true}),
            "kite::launch(softmax): argument 'x' must be a CUDA tensor, got a CPU tensor [8, 8] "
            "bf16");
  Tensor x = fakeCuda({8, 8}, bf16);
  EXPECT_EQ(argError(p, {x, int64_t(3)}),
            "kite::launch(softmax): expected 3 arguments (x, n, causal), got 2");
  EXPECT_EQ(argError(p, {x, int64_t(3), true, 1.0}),
            "kite::launch(softmax): expected 3 arguments (x, n, causal), got 4");
  Tensor f = fakeCuda({8, 8}, f32);
  EXPECT_EQ(argError(p, {f, int64_t(3), true}),
            "kite::launch(softmax): argument 'x' must be bf16, got a CUDA tensor [8, 8] f32");
  Tensor v = fakeCuda({64}, bf16);
  EXPECT_EQ(argError(p, {v, int64_t(3), true}),
            "kite::launch(softmax): argument 'x' must have 2 dimensions, got a CUDA tensor [64] "
            "bf16");
  Tensor wide = fakeCuda({8, 16}, bf16);
  EXPECT_EQ(argError(p, {wide, int64_t(3), true}),
            "kite::launch(softmax): argument 'x' must have sizes [8, 8] (the plan is specialized "
            "for them), got a CUDA tensor [8, 16] bf16");
  Tensor transposed = fakeCuda({8, 8}, bf16, {1, 8});
  EXPECT_EQ(argError(p, {transposed, int64_t(3), true}),
            "kite::launch(softmax): argument 'x' must have strides [8, 1] (the plan is "
            "specialized for them), got strides [1, 8]");
  Tensor unaligned = fakeCuda({8, 8}, bf16, {}, 0, 0x7f0000000002);
  EXPECT_EQ(argError(p, {unaligned, int64_t(3), true}),
            "kite::launch(softmax): argument 'x' must be 16-byte aligned (the plan is specialized "
            "for it), got address 0x7f0000000002 (storage offset 0)");
  EXPECT_EQ(argError(p, {int64_t(1), int64_t(3), true}),
            "kite::launch(softmax): argument 'x' must be a tensor, got a scalar i64");
  Tensor undefined;
  EXPECT_EQ(argError(p, {undefined, int64_t(3), true}),
            "kite::launch(softmax): argument 'x' must be a tensor, got an undefined tensor");
  EXPECT_EQ(argError(p, {x, 3.0f, true}),
            "kite::launch(softmax): argument 'n' must be a scalar i64, got a scalar f32");
  EXPECT_EQ(argError(p, {x, 3, true}),
            "kite::launch(softmax): argument 'n' must be a scalar i64, got a scalar i32");
  EXPECT_EQ(argError(p, {x, x, true}),
            "kite::launch(softmax): argument 'n' must be a scalar i64, got a CUDA tensor [8, 8] "
            "bf16");
  EXPECT_EQ(argError(p, {x, int64_t(3), false}),
            "kite::launch(softmax): argument 'causal' is specialized to true in this plan, got "
            "false");
}

TEST(RuntimeLaunch, TensorsOnTwoDevices) {
  KernelPlan p;
  p.name = "add";
  p.args = {ArgSpec::tensor("x", f32, {4}), ArgSpec::tensor("y", f32, {4})};
  Tensor x = fakeCuda({4}, f32, {}, 0), y = fakeCuda({4}, f32, {}, 1);
  EXPECT_EQ(argError(p, {x, y}),
            "kite::launch(add): argument 'y' is on cuda:1, but argument 'x' is on cuda:0; all "
            "tensors of a launch must be on one device");
  Tensor cpu = kite::zeros({4}, f32);
  EXPECT_EQ(argError(p, {x, cpu}),
            "kite::launch(add): argument 'y' must be a CUDA tensor, got a CPU tensor [4] f32");
}

TEST(RuntimeLaunch, RunPlanChecksBeforeTheGpu) {
  // The argument check comes first, so its message is the same with or
  // without a GPU, and nothing is launched.
  KernelPlan p = softmaxPlan();
  Tensor cpu = kite::zeros({8, 8}, bf16);
  try {
    run_plan(p, {cpu, int64_t(3), true});
    FAIL() << "run_plan accepted a CPU tensor";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), "kite::launch(softmax): argument 'x' must be a CUDA tensor, "
                                     "got a CPU tensor [8, 8] bf16");
  }
}

TEST(RuntimeLaunch, SpecializationHash) {
  Tensor x = fakeCuda({8, 8}, bf16);
  auto hash = [](std::vector<KernelArg> args) { return specialization_hash(args); };
  uint64_t base = hash({x, int64_t(3), true});
  Tensor same = fakeCuda({8, 8}, bf16, {}, 0, 0x7f0000001000);
  EXPECT_EQ(hash({same, int64_t(4), true}), base) << "addresses and scalar values do not matter";
  Tensor f = fakeCuda({8, 8}, f32), wide = fakeCuda({8, 16}, bf16);
  Tensor t = fakeCuda({8, 8}, bf16, {1, 8});
  Tensor unaligned = fakeCuda({8, 8}, bf16, {}, 0, 0x7f0000000002);
  Tensor other = fakeCuda({8, 8}, bf16, {}, 1);
  EXPECT_NE(hash({f, int64_t(3), true}), base);
  EXPECT_NE(hash({wide, int64_t(3), true}), base);
  EXPECT_NE(hash({t, int64_t(3), true}), base);
  EXPECT_NE(hash({unaligned, int64_t(3), true}), base);
  EXPECT_NE(hash({other, int64_t(3), true}), base);
  EXPECT_NE(hash({x, 3, true}), base) << "the scalar's type";
  EXPECT_NE(hash({x, int64_t(3), false}), base) << "a bool's value";
  EXPECT_NE(hash({x, int64_t(3)}), base);
  // Strides of size-1 dimensions do not matter.
  Tensor row = fakeCuda({1, 8}, bf16), oddRow = fakeCuda({1, 8}, bf16, {1000, 1});
  EXPECT_EQ(hash({row}), hash({oddRow}));
}

// A plan for dynamic shapes: its rows are any multiple of 16 (at least 2),
// and a launch's hash is its shape class.
TEST(RuntimeLaunch, DynamicShapesArgumentsAndClasses) {
  KernelPlan p = softmaxPlan();
  p.dynamicShapes = true;
  p.args[0] = ArgSpec::tensor("x", bf16, {-1, 8}, {}, 16);
  p.args[0].divisors = {16, 0};
  Tensor rows4096 = fakeCuda({4096, 8}, bf16), rows32 = fakeCuda({32, 8}, bf16);
  EXPECT_EQ(argError(p, {rows4096, int64_t(3), true}), "");
  EXPECT_EQ(argError(p, {rows32, int64_t(3), true}), "");
  Tensor rows24 = fakeCuda({24, 8}, bf16), wide = fakeCuda({32, 16}, bf16);
  EXPECT_EQ(argError(p, {rows24, int64_t(3), true}),
            "kite::launch(softmax): argument 'x' must have sizes [?16,8]:align16 (the plan's "
            "shape class: ? and ?* are any size of at least 2, ?N a multiple of N, <=B a size "
            "above B/2 up to B), got a CUDA tensor [24, 8] bf16");
  EXPECT_NE(argError(p, {wide, int64_t(3), true}), "");
  Tensor one = fakeCuda({1, 8}, bf16);
  EXPECT_NE(argError(p, {one, int64_t(3), true}), "") << "a size of 1 is its own class";
  Tensor strided = fakeCuda({32, 8}, bf16, {16, 1});
  EXPECT_NE(argError(p, {strided, int64_t(3), true}), "") << "dynamic tensors are contiguous";

  // A launch check: y's rows (here: n) must cover the loop over x's.
  using Op = LaunchExpr::Op;
  p.checks = {LaunchCheck{LaunchExpr{{{Op::argSize, 0, 0, 0}}}, LaunchExpr{{{Op::argScalar, 1, 0, 0}}},
                          "k.kite.cpp:3:4: a loop's tiles index dimension 0 of 'y' up to its end"}};
  EXPECT_EQ(argError(p, {rows32, int64_t(32), true}), "");
  EXPECT_EQ(argError(p, {rows32, int64_t(31), true}),
            "kite::launch(softmax): k.kite.cpp:3:4: a loop's tiles index dimension 0 of 'y' up "
            "to its end, but x.size(0) = 32 is more than n = 31");
  p.checks.clear();

  auto hash = [](std::vector<KernelArg> args) { return specialization_hash(args, true); };
  uint64_t base = hash({rows4096, int64_t(3), true});
  EXPECT_EQ(hash({fakeCuda({16 * 255, 8}, bf16), int64_t(3), true}), base)
      << "one key: multiples of 16 in one bucket";
  EXPECT_EQ(hash({fakeCuda({16 * 7, 8}, bf16), int64_t(3), true}),
            hash({rows32, int64_t(3), true}));
  EXPECT_NE(hash({rows32, int64_t(3), true}), base)
      << "another bucket: a plan that holds rows of that length whole needs it (one that "
         "does not serves several keys)";
  EXPECT_NE(hash({rows24, int64_t(3), true}), base) << "multiples of 8";
  EXPECT_NE(hash({one, int64_t(3), true}), base);
  EXPECT_NE(hash({wide, int64_t(3), true}), base) << "inner sizes count as classes too";
  EXPECT_NE(hash({strided, int64_t(3), true}), base);
  EXPECT_NE(specialization_hash(std::vector<KernelArg>{rows4096, int64_t(3), true}), base)
      << "static and dynamic launches never share a key";
  EXPECT_NE(specialization_hash(std::vector<KernelArg>{rows4096, int64_t(3), true}),
            specialization_hash(std::vector<KernelArg>{rows32, int64_t(3), true}));

  // A plan with 32-bit offsets refuses a tensor too large for them; the
  // hash tells such tensors apart.
  p.args[0].index32 = true;
  Tensor huge = fakeCuda({int64_t(1) << 26, 8}, bf16);
  EXPECT_EQ(argError(p, {rows4096, int64_t(3), true}), "");
  EXPECT_EQ(argError(p, {huge, int64_t(3), true}),
            "kite::launch(softmax): argument 'x' has 536870912 elements, too many for the "
            "plan's 32-bit offsets (it was compiled for fewer than 536870912)");
  EXPECT_NE(hash({huge, int64_t(3), true}),
            hash({fakeCuda({int64_t(1) << 22, 8}, bf16), int64_t(3), true}));
}

//===----------------------------------------------------------------------===//
// Registries
//===----------------------------------------------------------------------===//

Tensor capturedKernel(Tensor x) { return x; }
Tensor otherKernel(Tensor x) { return x; }

const KernelRegistration kRegistration{KernelSource{
    reinterpret_cast<const void *>(&capturedKernel), "capturedKernel",
    "kite.kernel @capturedKernel() {}", "ir-hash-1", "kernels/captured.kite.cpp"}};

// A PoisonOutputsScope overrides the process-wide setting on its thread
// only, and restores what it found (scopes nest).
TEST(RuntimeLaunch, PoisonOutputsScopeIsPerThreadAndNests) {
  setPoisonOutputs(false);
  EXPECT_FALSE(poisonOutputs());
  {
    PoisonOutputsScope on(true);
    EXPECT_TRUE(poisonOutputs());
    bool other = true;
    std::thread([&] { other = poisonOutputs(); }).join();
    EXPECT_FALSE(other) << "another thread keeps the process-wide setting";
    {
      PoisonOutputsScope off(false);
      EXPECT_FALSE(poisonOutputs());
    }
    EXPECT_TRUE(poisonOutputs());
  }
  EXPECT_FALSE(poisonOutputs());
  setPoisonOutputs(true);
  {
    PoisonOutputsScope off(false);
    EXPECT_FALSE(poisonOutputs());
  }
  EXPECT_TRUE(poisonOutputs());
  setPoisonOutputs(false);
}

TEST(RuntimeRegistry, LookupByFunctionAddress) {
  const KernelSource *k = lookup_kernel(&capturedKernel);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->name, "capturedKernel");
  EXPECT_EQ(k->ir, "kite.kernel @capturedKernel() {}");
  EXPECT_EQ(lookup_kernel(&otherKernel), nullptr);
  // A second registration replaces the first; the pointer stays valid.
  register_kernel(KernelSource{reinterpret_cast<const void *>(&capturedKernel), "capturedKernel",
                               "kite.kernel @capturedKernel() { v2 }", "ir-hash-2", ""});
  EXPECT_EQ(lookup_kernel(&capturedKernel), k);
  EXPECT_EQ(k->irHash, "ir-hash-2");
}

TEST(RuntimeRegistry, CompilerHook) {
  setCompiler({});
  EXPECT_FALSE(hasCompiler());
  KernelSource source{reinterpret_cast<const void *>(&capturedKernel), "softmax", "", "",
                      "kernels/softmax.kite.cpp"};
  std::vector<ArgSpec> args = {ArgSpec::tensor("x", bf16, {8, 8}), ArgSpec::scalar("eps", f32)};
  try {
    compileKernel(source, args, Options{});
    FAIL() << "compiled without a compiler";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "kite::launch(softmax): kernel softmax is not compiled for these arguments "
              "(x=bf16[8,8]:align1, eps=f32) and the kite compiler is not linked in; link kite_compiler "
              "into the application, or ship a kite cache that holds this specialization (kite "
              "autotune kernels/softmax.kite.cpp --arg x=bf16[8,8]:align1 --arg eps=f32)");
  }

  int calls = 0;
  setCompiler([&](const KernelSource &k, const std::vector<ArgSpec> &a, const Options &) {
    ++calls;
    KernelPlan p;
    p.name = std::string(k.name);
    p.args = a;
    return p;
  });
  EXPECT_TRUE(hasCompiler());
  KernelPlan p = compileKernel(source, args, Options{});
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(p.name, "softmax");
  EXPECT_EQ(p.args, args);
  setCompiler({});
}

// What a launch reports when it gets a new plan: the reason names what no
// held plan matched, against the nearest one.
TEST(PlanLog, ReasonNamesWhatTheNearestHeldPlanLacks) {
  std::vector<ArgSpec> a = {ArgSpec::tensor("x", bf16, {8192, 8192}, {}, 16),
                            ArgSpec::scalar("k", i64, 8.0)};
  std::vector<ArgSpec> sizes = {ArgSpec::tensor("x", bf16, {4096, 8192}, {}, 16),
                                ArgSpec::scalar("k", i64, 8.0)};
  std::vector<ArgSpec> far = {ArgSpec::tensor("x", f16, {4096, 8192}, {}, 8),
                              ArgSpec::scalar("k", i64, 4.0)};
  EXPECT_EQ(specializationChange("topk", a, {}), "first launch of topk in this process");

  std::vector<const std::vector<ArgSpec> *> held = {&far, &sizes};
  EXPECT_EQ(specializationChange("topk", a, held),
            "x: sizes [8192,8192] (nearest held plan: [4096,8192]); 2 plans held");
  held = {&far};
  EXPECT_EQ(specializationChange("topk", a, held),
            "x: dtype bf16 (nearest held plan: f16); x: sizes [8192,8192] (nearest held plan: "
            "[4096,8192]); x: 16-byte aligned (nearest held plan: 8); k: value 8 (nearest held "
            "plan: 4); 1 plan held");
  std::vector<ArgSpec> strided = {ArgSpec::tensor("x", bf16, {8192, 8192}, {1, 8192}, 16),
                                  ArgSpec::scalar("k", i64, 8.0)};
  held = {&a};
  EXPECT_EQ(specializationChange("topk", strided, held),
            "x: strides [1,8192] (nearest held plan: [8192,1]); 1 plan held");
  EXPECT_EQ(specializationChange("topk", a, held),
            "the same arguments with another config or tuning mode; 1 plan held");
  // A dynamic-shapes plan held: any size of its class fits; else its class
  // is named.
  std::vector<ArgSpec> rows = {ArgSpec::tensor("x", bf16, {-1, 8192}, {}, 16),
                               ArgSpec::scalar("k", i64, 8.0)};
  rows[0].divisors = {16, 0};
  held = {&rows};
  EXPECT_EQ(specializationChange("topk", a, held),
            "the same arguments with another config or tuning mode; 1 plan held");
  std::vector<ArgSpec> odd = {ArgSpec::tensor("x", bf16, {4097, 8192}, {}, 16),
                              ArgSpec::scalar("k", i64, 8.0)};
  EXPECT_EQ(specializationChange("topk", odd, held),
            "x: sizes [4097,8192] (nearest held plan: [?16,8192]); 1 plan held");
}

TEST(PlanLog, ObserverSeesEveryPlanAndCountsCompiles) {
  std::vector<ArgSpec> args = {ArgSpec::tensor("x", bf16, {8, 8}, {}, 16)};
  std::vector<std::string> seen;
  set_plan_observer([&](const PlanEvent &e) { seen.push_back(formatPlanEvent(e)); });
  uint64_t before = compile_count();
  notePlan(PlanEvent{"softmax", args, PlanEvent::Source::bundle, "first launch", 0.5});
  EXPECT_EQ(compile_count(), before) << "a plan from a bundle is not a compile";
  notePlan(PlanEvent{"softmax", args, PlanEvent::Source::compiler, "x: sizes", 412.3});
  notePlan(PlanEvent{"softmax", args, PlanEvent::Source::autotuner, "x: dtype", 9000});
  EXPECT_EQ(compile_count(), before + 2);
  set_plan_observer({});
  notePlan(PlanEvent{"softmax", args, PlanEvent::Source::compiler, "unobserved", 1});
  EXPECT_EQ(compile_count(), before + 3);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], "kite: loaded softmax(x=bf16[8,8]:align16) in 0.5 ms from a loaded "
                     "bundle: first launch");
  EXPECT_EQ(seen[1], "kite: compiled softmax(x=bf16[8,8]:align16) in 412.3 ms from the "
                     "compiler: x: sizes");
  EXPECT_EQ(seen[2], "kite: compiled softmax(x=bf16[8,8]:align16) in 9000.0 ms from the "
                     "autotuner: x: dtype");
}

} // namespace

TEST(RuntimeLaunch, ScalarArgumentsTakeTheirTypeFromADouble) {
  struct Case {
    DType type;
    double in, out;
  };
  for (Case c : {Case{DType::f64, 2.5, 2.5}, Case{DType::f32, 0.25, 0.25}, Case{DType::i32, -7.9, -7},
                 Case{DType::boolean, 3.0, 1}, Case{DType::i64, 1e12 + 0.5, 1e12}, Case{DType::i8, 5.0, 5}}) {
    KernelArg a = KernelArg::scalar(c.type, c.in);
    EXPECT_EQ(a.kind, ArgSpec::Kind::scalar);
    // Types the launch has no scalar form for pass as i64.
    EXPECT_EQ(a.type, c.type == DType::i8 ? DType::i64 : c.type) << dtype_name(c.type);
    EXPECT_EQ(a.scalar_as_double(), c.out) << dtype_name(c.type);
  }
}
