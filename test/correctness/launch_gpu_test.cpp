//===- launch_gpu_test.cpp - kite::launch on the GPU ----------------------===//
//
// softmax and add (examples/, captured by kite_add_kernels) launched through
// kite::launch and compared with reference mode; the plan cache (a second
// launch with the same shapes compiles nothing, new shapes compile once);
// dynamic shapes (a plan per shape class: rows, columns, attention's
// sequence length, matmul's M and N, and the sweeps of the serving
// patterns); and the front door's overhead over run_plan for a cached tiny
// kernel.
// Skips without a GPU.
//
//===----------------------------------------------------------------------===//

#include "autotune/Timeline.h"
#include "lowering/Compiler.h"
#include "runtime/CompilerHook.h"
#include "runtime/Driver.h"
#include "runtime/Launch.h"
#include "runtime/PlanLog.h"

#include "../reference/compare.hpp"

#include <kite/runtime.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <cstdio>
#include <random>

// The kernels (examples/softmax.kite.cpp, examples/add.kite.cpp,
// examples/matmul.kite.cpp, examples/attention.kite.cpp).
kite::Tensor softmax(kite::Tensor x);
kite::Tensor add(kite::Tensor x, kite::Tensor y);
kite::Tensor matmul(kite::Tensor x, kite::Tensor y);
kite::Tensor attention(kite::Tensor q, kite::Tensor k, kite::Tensor v);

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

// A traced plan (kite bench --timeline) records each program's start and end
// once, in that order on one SM, and the kernel's entry once per block;
// flat and persistent, and its outputs stay right.
TEST_F(LaunchGpu, TracedPlanRecordsEveryProgramOnce) {
  Tensor x = randn({1000, 129}, f32, 1), y = randn({1000, 129}, f32, 2);
  Tensor expected = add(x, y);
  Tensor dx = cuda::to_device(x), dy = cuda::to_device(y);
  const KernelSource *k = lookup_kernel(&add);
  ASSERT_NE(k, nullptr);
  std::vector<ArgSpec> specs = {ArgSpec::of("x", dx), ArgSpec::of("y", dy)};
  for (std::string config : {R"({"block_sizes":[8,32],"num_warps":2})",
                             R"({"block_sizes":[8,32],"pid_type":"persistent_interleaved"})"}) {
    SCOPED_TRACE(config);
    CompileOptions traced;
    traced.trace = true;
    KernelPlan plan = compileToPlan(*k, specs, Options{{}, config}, traced);
    EXPECT_NE(plan.key, compileToPlan(*k, specs, Options{{}, config}).key);
    autotune::clearTrace(plan);
    KernelArg args[] = {dx, dy};
    Tensor out;
    run_plan(plan, args, std::span<Tensor>(&out, 1));
    cuda::synchronize();
    EXPECT_TRUE(allClose(cuda::to_host(out), expected, toleranceFor(f32)));
    autotune::Trace trace = autotune::readTrace(plan);
    const std::vector<autotune::TraceRecord> &records = trace.records;
    ASSERT_EQ(records.size(), trace.recorded) << "records dropped";
    // 125 x 5 tiles of 8 x 32; one warpgroup a program.
    const int64_t programs = 125 * 5;
    std::map<int64_t, std::pair<uint64_t, uint64_t>> seen; // start, end clocks
    std::map<int64_t, uint32_t> sm;
    int entries = 0;
    for (const autotune::TraceRecord &r : records) {
      EXPECT_EQ(r.warpgroup, 0u);
      EXPECT_FALSE(r.producer);
      if (r.event == autotune::kTraceEntry) {
        ++entries;
        continue;
      }
      ASSERT_GE(r.program, 0);
      ASSERT_LT(r.program, programs);
      auto &[start, end] = seen[r.program];
      if (r.event == autotune::kTraceProgramStart) {
        EXPECT_EQ(start, 0u) << "program " << r.program << " started twice";
        start = r.clock;
        sm[r.program] = r.sm;
      } else if (r.event == autotune::kTraceProgramEnd) {
        EXPECT_EQ(end, 0u) << "program " << r.program << " ended twice";
        end = r.clock;
        EXPECT_EQ(sm[r.program], r.sm);
      }
    }
    EXPECT_EQ(int64_t(seen.size()), programs);
    for (auto &[p, se] : seen)
      EXPECT_LE(se.first, se.second) << "program " << p;
    // A block a program, or as many persistent blocks as the SMs hold.
    if (plan.persistent) {
      EXPECT_GE(entries, 1);
      EXPECT_LE(entries, programs);
    } else {
      EXPECT_EQ(entries, programs);
    }
    std::string summary = autotune::summarizeTrace(records);
    EXPECT_NE(summary.find(std::to_string(programs) + " programs complete"), std::string::npos)
        << summary;
  }
}

// A dropped output's memory stays with kite: the next launch of the same
// shape on the same stream gets the block back from the device's block cache
// (no driver call, nothing in the stream), and a synchronization does not
// hand it to the system (the pool's release threshold is unlimited; the
// default pool's is 0). empty_cache gives it back; live tensors stay.
TEST_F(LaunchGpu, FreedOutputsStayInThePoolAcrossASynchronization) {
  runtime::DeviceContext &dc = runtime::DeviceContext::get(0);
  if (!dc.pool())
    GTEST_SKIP() << "no memory pool support on this device";
  auto pool = [&](CUmemPool_attribute a) {
    cuuint64_t v = 0;
    runtime::check(runtime::cu().cuMemPoolGetAttribute(dc.pool(), a, &v),
                   "reading a memory pool attribute");
    return v;
  };
  const cuuint64_t outBytes = cuuint64_t(256) << 20; // whole chunks of the pool
  Tensor xHost = randn({8192, 8192}, f32, 5);
  Tensor x = cuda::to_device(xHost);
  Tensor y = cuda::to_device(randn({8192, 8192}, f32, 6));
  const void *first = nullptr;
  {
    Tensor out = launch(add, x, y);
    first = out.data_ptr();
  }
  cuda::synchronize();
  cuuint64_t kept = dc.blocks().bytes() + pool(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) -
                    pool(CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
  EXPECT_GE(kept, outBytes) << "kept " << kept << " bytes after a synchronization";
  {
    Tensor again = launch(add, x, y);
    EXPECT_EQ(again.data_ptr(), first) << "the same shape on the same stream reuses the block";
  }
  cuda::empty_cache();
  EXPECT_EQ(dc.blocks().bytes(), 0u);
  EXPECT_LT(pool(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
            pool(CU_MEMPOOL_ATTR_USED_MEM_CURRENT) + outBytes);
  EXPECT_TRUE(allClose(cuda::to_host(x), xHost, toleranceFor(f32)));
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

// Dynamic shapes: one plan per shape class (sizes 0 and 1, then the
// largest power of two up to 16 dividing the size), each launch correct
// against reference mode with poisoned outputs, and a second pass over the
// same sizes compiles nothing.
TEST_F(LaunchGpu, DynamicShapesServeEverySizeWithAPlanPerClass) {
  Options options;
  options.static_shapes = false;
  options.tuning = Options::Tuning::never; // hermetic: compile, no cache directory
  runtime::setPoisonOutputs(true);
  std::vector<std::string> events;
  set_plan_observer([&](const PlanEvent &e) { events.push_back(runtime::formatPlanEvent(e)); });
  std::vector<int64_t> rows;
  for (int64_t r = 1; r <= 70; ++r)
    rows.push_back(r);
  for (int64_t r : {127, 128, 129, 1000, 1023, 1024, 4096, 4097})
    rows.push_back(r);

  auto pass = [&](bool check) {
    for (int64_t r : rows) {
      Tensor x = randn({r, 1000}, bf16, /*seed=*/uint64_t(r));
      Tensor y = launch(softmax, options, cuda::to_device(x));
      if (check)
        EXPECT_TRUE(allClose(cuda::to_host(y), softmax(x), toleranceFor(bf16)))
            << "softmax rows " << r;
      Tensor a = randn({r, 77}, f32, 1), b = randn({r, 77}, f32, 2);
      Tensor sum = launch(add, options, cuda::to_device(a), cuda::to_device(b));
      if (check)
        EXPECT_TRUE(allClose(cuda::to_host(sum), add(a, b), toleranceFor(f32))) << "add rows " << r;
    }
    for (int64_t m : {1, 2, 3, 7, 16, 33, 100, 128, 129, 300, 1000}) {
      Tensor a = randn({m, 256}, bf16, 7), b = randn({256, 192}, bf16, 8);
      Tensor c = launch(::matmul, options, cuda::to_device(a), cuda::to_device(b));
      if (check)
        EXPECT_TRUE(allClose(cuda::to_host(c), ::matmul(a, b), toleranceFor(bf16, 16)))
            << "matmul m " << m;
    }
  };
  uint64_t before = compile_count();
  pass(true);
  uint64_t compiles = compile_count() - before;
  // softmax and add: rows of 1, and any other count (?*, a row count's
  // divisibility changes nothing); matmul: M of 1, then a plan per bucket of
  // M (128, 256, 512, 1024).
  EXPECT_LE(compiles, 9u);
  EXPECT_GE(compiles, 3u);
  pass(false);
  EXPECT_EQ(compile_count() - before, compiles) << "the same sizes again compile nothing";
  set_plan_observer({});
  runtime::setPoisonOutputs(false);
  for (const std::string &e : events)
    std::printf("%s\n", e.c_str());
  ASSERT_FALSE(events.empty());

  // Rows that do not match are refused at launch, as a static plan's
  // compile refuses them.
  Tensor x64 = cuda::to_device(randn({64, 77}, f32, 1));
  Tensor y32 = cuda::to_device(randn({32, 77}, f32, 2));
  try {
    launch(add, options, x64, y32);
    ADD_FAILURE() << "a launch whose y has fewer rows than x ran";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("but x.size(0) = 64 is more than y.size(0) = 32"),
              std::string::npos)
        << e.what();
  }
  // The first compile says why: the kernel's first launch in this process,
  // or (where a test before this one in the same process launched softmax)
  // the nearest plan already held.
  EXPECT_TRUE(events.front().find("first launch of softmax") != std::string::npos ||
              events.front().find("nearest held plan") != std::string::npos)
      << events.front();
}

TEST_F(LaunchGpu, DynamicShapesTakeSizesInsideATensor) {
  // Sizes that are not a tensor's outermost: attention's sequence length
  // (dim 1 of [B*H, S, D], the batch stride D * S computed in the kernel),
  // add's columns and matmul's N. Every size against reference mode, outputs
  // poisoned; one plan per shape class, none for a second pass.
  Options options;
  options.static_shapes = false;
  options.tuning = Options::Tuning::never;
  runtime::setPoisonOutputs(true);
  std::vector<int64_t> lengths = {1, 2, 3, 7, 16, 63, 64, 65, 100, 129, 256, 300, 1000, 1024};
  auto pass = [&](bool check) {
    for (int64_t s : lengths) {
      Tensor q = randn({4, s, 64}, bf16, uint64_t(s)), k = randn({4, s, 64}, bf16, uint64_t(s) + 1),
             v = randn({4, s, 64}, bf16, uint64_t(s) + 2);
      Tensor o = launch(::attention, options, cuda::to_device(q), cuda::to_device(k),
                        cuda::to_device(v));
      if (check)
        EXPECT_TRUE(allClose(cuda::to_host(o), ::attention(q, k, v), toleranceFor(bf16, 4)))
            << "attention S " << s;
      Tensor a = randn({33, s}, f32, 1), b = randn({33, s}, f32, 2);
      Tensor sum = launch(add, options, cuda::to_device(a), cuda::to_device(b));
      if (check)
        EXPECT_TRUE(allClose(cuda::to_host(sum), add(a, b), toleranceFor(f32))) << "add cols " << s;
      Tensor x = randn({100, 128}, bf16, 7), y = randn({128, s}, bf16, 8);
      Tensor c = launch(::matmul, options, cuda::to_device(x), cuda::to_device(y));
      if (check)
        EXPECT_TRUE(allClose(cuda::to_host(c), ::matmul(x, y), toleranceFor(bf16, 16)))
            << "matmul n " << s;
    }
  };
  uint64_t before = compile_count();
  pass(true);
  uint64_t compiles = compile_count() - before;
  // attention: S of 1, then a plan per bucket of S (128 to 1024; its class
  // changes nothing with D = 64): 5; add: columns of 1, then classes ?, ?2,
  // ?4, ?8, ?16: 6; matmul: N of 1, then per bucket of N a multiple of 8 and
  // the rest, as met: 7. (Fewer where a test before this one in the same
  // process left some of those plans held.)
  EXPECT_LE(compiles, 18u);
  pass(false);
  EXPECT_EQ(compile_count() - before, compiles) << "the same sizes again compile nothing";
  runtime::setPoisonOutputs(false);

  // A key sequence shorter than the queries' is refused at launch.
  Tensor q = cuda::to_device(randn({4, 100, 64}, bf16, 1));
  Tensor k = cuda::to_device(randn({4, 50, 64}, bf16, 2));
  try {
    launch(::attention, options, q, k, k);
    ADD_FAILURE() << "a launch whose k is shorter than q ran";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("but q.size(1) = 100 is more than k.size(1) = 50"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(LaunchGpu, DynamicShapesSweepsCompileAFewPlansPerKernel) {
  // The serving patterns: attention over 500 random sequence lengths from 1
  // to 8192, softmax over every row length from 1 to 8192, and matmul with
  // M from 1 to 4096 at N = K = 4096 (prefill and decode). Every launch runs; the first lengths of each (where reference
  // mode is quick) are checked against it, outputs poisoned. Each kernel
  // compiles a plan per shape class it meets, at most 16.
  Options options;
  options.static_shapes = false;
  options.tuning = Options::Tuning::never;
  runtime::setPoisonOutputs(true);
  std::mt19937_64 rng(2026);
  std::vector<int64_t> lengths;
  for (int i = 0; i < 500; ++i)
    lengths.push_back(int64_t(rng() % 8192) + 1);
  uint64_t before = compile_count();
  int checked = 0;
  for (int64_t s : lengths) {
    Tensor q = randn({2, s, 64}, bf16, uint64_t(s)), k = randn({2, s, 64}, bf16, uint64_t(s) + 1),
           v = randn({2, s, 64}, bf16, uint64_t(s) + 2);
    Tensor o = launch(::attention, options, cuda::to_device(q), cuda::to_device(k),
                      cuda::to_device(v));
    if (s <= 512 && checked < 20) {
      ++checked;
      EXPECT_TRUE(allClose(cuda::to_host(o), ::attention(q, k, v), toleranceFor(bf16, 4)))
          << "attention S " << s;
    }
  }
  cuda::synchronize();
  uint64_t attentionPlans = compile_count() - before;
  EXPECT_LE(attentionPlans, 16u);
  EXPECT_GE(checked, 5);

  // Softmax over every row length from 1 to 8192: the row, spanned whole
  // (x[tn, all]), is held whole as a tile as long as the length's bucket
  // (128, 256, ... 8192), masked past the length: 1, then a plan per
  // bucket for multiples of 8 and one for the rest, 15 in all.
  before = compile_count();
  checked = 0;
  for (int64_t n = 1; n <= 8192; ++n) {
    Tensor x = randn({4, n}, bf16, uint64_t(n));
    Tensor y = launch(softmax, options, cuda::to_device(x));
    if (n <= 40 || n % 997 == 0 || n == 2048 || n == 2049 || n == 8192) {
      ++checked;
      EXPECT_TRUE(allClose(cuda::to_host(y), softmax(x), toleranceFor(bf16))) << "softmax n " << n;
    }
  }
  cuda::synchronize();
  uint64_t softmaxPlans = compile_count() - before;
  EXPECT_LE(softmaxPlans, 15u);

  Tensor w = cuda::to_device(randn({4096, 4096}, bf16, 9));
  Tensor x = randn({4096, 4096}, bf16, 10);
  Tensor xd = cuda::to_device(x);
  before = compile_count();
  // The first m rows of a contiguous [4096, 4096] tensor, without a copy.
  auto rows = [](const Tensor &t, int64_t m) {
    return Tensor::from_blob(t.data_ptr(), {m, t.size(1)}, {}, t.dtype(), t.device());
  };
  Tensor wHost = cuda::to_host(w);
  for (int64_t m = 1; m <= 4096; ++m) {
    Tensor c = launch(::matmul, options, rows(xd, m), w);
    if (m == 1 || m == 2 || m == 3 || m == 17 || m == 128) {
      Tensor expected = ::matmul(rows(x, m), wHost);
      EXPECT_TRUE(allClose(cuda::to_host(c), expected, toleranceFor(bf16, 64))) << "matmul m " << m;
    }
  }
  cuda::synchronize();
  uint64_t matmulPlans = compile_count() - before;
  EXPECT_LE(matmulPlans, 7u) << "M of 1, then a plan per bucket of M (128 to 4096)";
  std::printf("dynamic shapes: attention over %zu lengths in %llu plans, softmax over 8192 row "
              "lengths in %llu plans, matmul over 4096 values of M in %llu plans\n",
              lengths.size(), (unsigned long long)attentionPlans,
              (unsigned long long)softmaxPlans, (unsigned long long)matmulPlans);
  runtime::setPoisonOutputs(false);
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

  // A dynamic-shapes plan: the class hash, the static sizes' check, the
  // grid and the output's size evaluated at launch.
  Options dynamic;
  dynamic.static_shapes = false;
  launch(add, dynamic, x, y);
  cuda::synchronize();
  double viaDynamic = time([&] { (void)launch(add, dynamic, x, y); });
  viaDynamic = std::min(viaDynamic, time([&] { (void)launch(add, dynamic, x, y); }));

  std::printf("launch overhead over %d launches of add [16, 16] f32: kite::launch %.2f us, "
              "run_plan %.2f us, front door %.2f us per launch; with dynamic shapes "
              "kite::launch %.2f us (%+.2f us)\n",
              kLaunches, viaLaunch, viaRunPlan, viaLaunch - viaRunPlan, viaDynamic,
              viaDynamic - viaLaunch);
  RecordProperty("dynamic_launch_us", std::to_string(viaDynamic));
  RecordProperty("launch_us", std::to_string(viaLaunch));
  RecordProperty("run_plan_us", std::to_string(viaRunPlan));
  EXPECT_LT(viaLaunch, viaRunPlan + 5.0) << "the front door should add well under 5 us";
}

TEST_F(LaunchGpu, StagedOperandsReadMisalignedAndStridedViews) {
  // Operands TMA cannot read in place are staged: each launch first copies
  // them into rows padded to 16 bytes (kite_stage_rows), and the main loop's
  // tensor maps cover the copies. x is 2 bytes off a 16-byte boundary,
  // with rows of 2202 bytes (a warp's run of 2048 bytes and a partial one;
  // row starts at every even offset from a 16-byte boundary); y is columns
  // 1 to 203 of a [1101, 260] tensor, so its rows (406 bytes) start 520
  // bytes apart, 2 bytes off, with gaps between them that the copy must
  // skip.
  if (device_properties(0).arch() != "sm_90a")
    GTEST_SKIP() << "TMA main loops need sm_90a";
  runtime::setPoisonOutputs(true);
  constexpr int64_t M = 300, K = 1101, N = 203;
  Tensor xBig = randn({M * K + 8}, bf16, 31), yBig = randn({K, 260}, bf16, 32);
  auto view = [](const Tensor &t, int64_t offset, std::vector<int64_t> sizes,
                 std::vector<int64_t> strides) {
    return Tensor::from_blob(static_cast<char *>(t.data_ptr()) + offset * element_size(t.dtype()),
                             std::move(sizes), std::move(strides), t.dtype(), t.device());
  };
  Tensor xd = cuda::to_device(xBig), yd = cuda::to_device(yBig);
  Tensor x = view(xd, 1, {M, K}, {K, 1}), y = view(yd, 1, {K, N}, {260, 1});
  Tensor expected = ::matmul(view(xBig, 1, {M, K}, {K, 1}).contiguous(),
                             view(yBig, 1, {K, N}, {260, 1}).contiguous());
  const KernelSource *k = lookup_kernel(&::matmul);
  ASSERT_NE(k, nullptr);
  std::vector<ArgSpec> specs = {ArgSpec::of("x", x), ArgSpec::of("y", y)};
  for (const char *config :
       {R"({"block_sizes":[128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})",
        R"({"block_sizes":[64,256,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"})"}) {
    Options o;
    o.config = config;
    KernelPlan plan = compileToPlan(*k, specs, o);
    int stagedMaps = 0;
    for (const ParamSpec &p : plan.params)
      if (p.kind == ParamSpec::Kind::argTensorMap)
        stagedMaps += TensorMapSpec::decode(p.bytes).staged;
    EXPECT_EQ(stagedMaps, 2) << config;
    KernelArg args[] = {x, y};
    for (int rep = 0; rep < 2; ++rep) { // the second reuses the copies' blocks
      Tensor c = run_plan(plan, args)[0];
      EXPECT_TRUE(allClose(cuda::to_host(c), expected, toleranceFor(bf16, 64))) << config;
    }
    // No rows: no tile to copy, so nothing is staged or encoded (TMA
    // refuses a map over a zero-size dim) and the result is [0, N].
    Tensor none = view(xd, 1, {0, K}, {K, 1});
    std::vector<ArgSpec> noneSpecs = {ArgSpec::of("x", none), ArgSpec::of("y", y)};
    KernelPlan empty = compileToPlan(*k, noneSpecs, o);
    KernelArg noneArgs[] = {none, y};
    Tensor c = run_plan(empty, noneArgs)[0];
    EXPECT_EQ(c.sizes(), (std::vector<int64_t>{0, N})) << config;
  }
  runtime::setPoisonOutputs(false);
}

TEST_F(LaunchGpu, TensorMapEncodingCostPerLaunch) {
  // The same tiny product with TMA copies (two tensor maps encoded by
  // run_plan at each launch) and with thread copies: the host time of
  // enqueueing launches, so the difference is the encoding's cost.
  if (device_properties(0).arch() != "sm_90a")
    GTEST_SKIP() << "TMA main loops need sm_90a";
  constexpr int kLaunches = 500;
  Tensor x = cuda::to_device(randn({64, 64}, bf16, 9));
  Tensor y = cuda::to_device(randn({64, 64}, bf16, 10));
  const KernelSource *k = lookup_kernel(&::matmul);
  ASSERT_NE(k, nullptr);
  std::vector<ArgSpec> specs = {ArgSpec::of("x", x), ArgSpec::of("y", y)};
  auto planFor = [&](const char *indexing) {
    Options o;
    o.config = std::string(R"({"block_sizes":[64,64,64],"num_warps":8,"num_stages":2,)") +
               R"("tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":")" +
               indexing + "\"}";
    return compileToPlan(*k, specs, o);
  };
  KernelPlan tma = planFor("tma"), pointer = planFor("pointer");
  auto hasMap = [](const KernelPlan &p) {
    for (const ParamSpec &s : p.params)
      if (s.kind == ParamSpec::Kind::argTensorMap)
        return true;
    return false;
  };
  ASSERT_TRUE(hasMap(tma));
  ASSERT_FALSE(hasMap(pointer));
  KernelArg args[] = {x, y};
  Tensor a, b;
  run_plan(tma, args, std::span<Tensor>(&a, 1));
  run_plan(pointer, args, std::span<Tensor>(&b, 1));
  cuda::synchronize();
  EXPECT_TRUE(allClose(cuda::to_host(a), cuda::to_host(b), {0, 0})) << "TMA and pointer copies";

  auto enqueue = [&](const KernelPlan &plan) {
    double best = 1e9;
    for (int round = 0; round < 5; ++round) {
      Tensor out;
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kLaunches; ++i)
        run_plan(plan, args, std::span<Tensor>(&out, 1));
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() -
                                                             start)
                      .count() /
                  kLaunches;
      cuda::synchronize();
      best = std::min(best, us);
    }
    return best;
  };
  double withMaps = enqueue(tma), without = enqueue(pointer);
  // Tensors that change at every launch: 16 inputs in turn, more than the
  // thread's cache of encoded maps holds, so every map is encoded.
  std::vector<Tensor> xs;
  for (int i = 0; i < 16; ++i)
    xs.push_back(cuda::to_device(randn({64, 64}, bf16, 100 + i)));
  double fresh = 1e9;
  for (int round = 0; round < 5; ++round) {
    Tensor out;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kLaunches; ++i) {
      KernelArg a[] = {xs[i % xs.size()], y};
      run_plan(tma, a, std::span<Tensor>(&out, 1));
    }
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count() /
        kLaunches;
    cuda::synchronize();
    fresh = std::min(fresh, us);
  }
  // A map encoded for one tensor never serves another: each input's
  // product, through the cache, equals the pointer plan's.
  for (int i : {0, 7, 15, 7}) {
    KernelArg a[] = {xs[i], y};
    Tensor viaMaps, viaPointers;
    run_plan(tma, a, std::span<Tensor>(&viaMaps, 1));
    run_plan(pointer, a, std::span<Tensor>(&viaPointers, 1));
    cuda::synchronize();
    EXPECT_TRUE(allClose(cuda::to_host(viaMaps), cuda::to_host(viaPointers), {0, 0}))
        << "input " << i;
  }
  std::printf("run_plan host time per launch (%d launches, best of 5): with 2 tensor maps %.2f "
              "us (the same tensors: maps from the thread's cache), %.2f us (new tensors: "
              "encoded), without maps %.2f us\n",
              kLaunches, withMaps, fresh, without);
  RecordProperty("tma_launch_us", std::to_string(withMaps));
  RecordProperty("tma_encoding_launch_us", std::to_string(fresh));
  RecordProperty("pointer_launch_us", std::to_string(without));
  EXPECT_LT(withMaps, without + 5.0) << "encoding two tensor maps should cost well under 5 us";
}
