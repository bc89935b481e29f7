//===- launch_gpu_test.cpp - kite::launch on the GPU ----------------------===//
//
// softmax and add (examples/, captured by kite_add_kernels) launched through
// kite::launch and compared with reference mode; the plan cache (a second
// launch with the same shapes compiles nothing, new shapes compile once);
// and the front door's overhead over run_plan for a cached tiny kernel.
// Skips without a GPU.
//
//===----------------------------------------------------------------------===//

#include "lowering/Compiler.h"
#include "runtime/CompilerHook.h"

#include "../reference/compare.hpp"

#include <kite/runtime.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>

// The kernels (examples/softmax.kite.cpp, examples/add.kite.cpp).
kite::Tensor softmax(kite::Tensor x);
kite::Tensor add(kite::Tensor x, kite::Tensor y);

using namespace kite;
using kite_test::allClose;
using kite_test::toleranceFor;

namespace {

/// Wraps the real compiler, counting its calls.
std::atomic<int> gCompiles{0};

class LaunchGpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (!gpu_available())
      GTEST_SKIP() << "no CUDA GPU (" << gpu_unavailable_reason() << ")";
    runtime::setCompiler([](const KernelSource &k, const std::vector<ArgSpec> &args,
                            const Options &o) {
      ++gCompiles;
      return compileToPlan(k, args, o);
    });
  }
};

} // namespace

TEST_F(LaunchGpu, SoftmaxMatchesReferenceMode) {
  for (std::vector<int64_t> sizes : {std::vector<int64_t>{1000, 4097}, {37, 129}, {1, 7}}) {
    Tensor x = randn(sizes, bf16, /*seed=*/3);
    Tensor expected = softmax(x);
    Tensor y = launch(softmax, cuda::to_device(x));
    EXPECT_TRUE(allClose(cuda::to_host(y), expected, toleranceFor(bf16)))
        << "softmax " << kite_test::formatSizes(sizes);
  }
}

TEST_F(LaunchGpu, AddMatchesReferenceMode) {
  for (DType t : {f32, bf16}) {
    Tensor x = randn({123, 77}, t, 1), y = randn({123, 77}, t, 2);
    Tensor expected = add(x, y);
    Options options; // with a stream and Options
    Tensor out = launch(add, options, cuda::to_device(x), cuda::to_device(y));
    EXPECT_TRUE(allClose(cuda::to_host(out), expected, toleranceFor(t))) << dtype_name(t);
  }
}

TEST_F(LaunchGpu, SameShapesCompileNothing) {
  Tensor x = cuda::to_device(randn({61, 203}, f32, 4));
  Tensor y = cuda::to_device(randn({61, 203}, f32, 5));
  int before = gCompiles.load();
  Tensor a = launch(add, x, y);
  EXPECT_EQ(gCompiles.load(), before + 1) << "the first launch compiles";
  Tensor b = launch(add, x, y);
  Tensor c = launch(add, cuda::clone(x), y); // equal specs, other tensors
  EXPECT_EQ(gCompiles.load(), before + 1) << "launches with the same shapes compile nothing";
  Tensor z = cuda::to_device(randn({62, 203}, f32, 6));
  launch(add, z, z);
  EXPECT_EQ(gCompiles.load(), before + 2) << "a new shape is a new specialization";
  cuda::synchronize();
  EXPECT_TRUE(allClose(cuda::to_host(b), cuda::to_host(a), {0, 0}));
  EXPECT_TRUE(allClose(cuda::to_host(c), cuda::to_host(a), {0, 0}));
}

TEST_F(LaunchGpu, CpuArgumentNextToACudaOneIsNamedBeforeCompiling) {
  // A CPU tensor next to a CUDA one is rejected by name, before compiling.
  Tensor x = cuda::to_device(randn({8, 8}, f32, 1));
  Tensor cpu = randn({8, 8}, f32, 2);
  int before = gCompiles.load();
  try {
    launch(add, x, cpu);
    FAIL() << "expected a kite::Error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("argument 'y' must be a CUDA tensor"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(gCompiles.load(), before);
}

TEST_F(LaunchGpu, FrontDoorOverheadOverRunPlan) {
  constexpr int kLaunches = 20000;
  Tensor x = cuda::to_device(randn({16, 16}, f32, 7));
  Tensor y = cuda::to_device(randn({16, 16}, f32, 8));
  launch(add, x, y); // compile and load
  cuda::synchronize();

  auto time = [&](auto &&body) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kLaunches; ++i)
      body();
    cuda::synchronize();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
               .count() /
           kLaunches;
  };
  double viaLaunch = time([&] { (void)launch(add, x, y); });

  const KernelSource *k = lookup_kernel(&add);
  ASSERT_NE(k, nullptr);
  std::vector<ArgSpec> specs = {ArgSpec::of("x", x), ArgSpec::of("y", y)};
  KernelPlan plan = compileToPlan(*k, specs, Options{});
  KernelArg args[] = {x, y};
  Tensor result;
  double viaRunPlan = time([&] { run_plan(plan, args, std::span<Tensor>(&result, 1)); });
  // Run again now that everything is warm, in the other order.
  viaLaunch = std::min(viaLaunch, time([&] { (void)launch(add, x, y); }));

  std::printf("launch overhead over %d launches of add [16, 16] f32: kite::launch %.2f us, "
              "run_plan %.2f us, front door %.2f us per launch\n",
              kLaunches, viaLaunch, viaRunPlan, viaLaunch - viaRunPlan);
  RecordProperty("launch_us", std::to_string(viaLaunch));
  RecordProperty("run_plan_us", std::to_string(viaRunPlan));
  EXPECT_LT(viaLaunch, viaRunPlan + 5.0) << "the front door should add well under 5 us";
}
