//===- autotune_gpu_test.cpp - the autotuner on the GPU -------------------===//
//
// softmax (examples/, captured by kite_add_kernels) tuned with effort quick
// into a fresh cache directory, with one candidate made to fault on purpose:
// the fault is reported and skipped, the worker restarts, the tuning ends
// with a winner at least as fast as the default config, and that winner
// computes softmax. Then a second process launches softmax from the cache:
// it compiles nothing, and its first launch is fast. And dynamic shapes in a
// bundle: a fresh process runs softmax over every row length from 1 to
// 8192, matmul over every M from 1 to 4096 (N = K = 4096) and attention over
// 500 random sequence lengths from 1 to 8192 from a bundle of one plan per
// shape class, compiling nothing. Skips without a GPU.
//
//===----------------------------------------------------------------------===//

#include "autotune/Tuner.h"
#include "autotune/Worker.h"
#include "lowering/Compiler.h"
#include "runtime/CompilerHook.h"
#include "runtime/Driver.h"

#include "../reference/compare.hpp"

#include <kite/c_api.h>
#include <kite/cache.hpp>
#include <kite/runtime.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <unistd.h>

kite::Tensor softmax(kite::Tensor x);
kite::Tensor window_sum(kite::Tensor x, int64_t window, double scale);
kite::Tensor matmul(kite::Tensor x, kite::Tensor y);
kite::Tensor attention(kite::Tensor q, kite::Tensor k, kite::Tensor v);

using namespace kite;
namespace fs = std::filesystem;

namespace {

const std::vector<int64_t> kSizes = {512, 3000};

std::string gSelf; // this executable, for the second process

fs::path freshDir(const char *name) {
  fs::path dir = fs::temp_directory_path() / fmt::format("kite-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// The second process: launch softmax from the cache in `dir`, print what
/// it took, and exit.
int childLaunch(const char *dir) {
  cache::set_directory(dir);
  Tensor host = randn(kSizes, bf16, 9);
  Tensor x = cuda::to_device(host);
  cuda::synchronize(); // the context exists; what follows is the launch
  auto start = std::chrono::steady_clock::now();
  Tensor y = launch(softmax, x);
  cuda::synchronize();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  bool ok = (bool)kite_test::allClose(cuda::to_host(y), softmax(host), kite_test::toleranceFor(bf16));
  std::printf("compiles=%llu first_launch_ms=%.3f correct=%d\n",
              (unsigned long long)runtime::compileCount(), ms, ok ? 1 : 0);
  return 0;
}

/// The first `n` elements of contiguous tensor `t` as a contiguous tensor of
/// `sizes` (a prefix, without a copy).
Tensor prefix(const Tensor &t, std::vector<int64_t> sizes) {
  return Tensor::from_blob(t.data_ptr(), std::move(sizes), {}, t.dtype(), t.device());
}

/// The serving sweeps' attention lengths: 500 random ones from 1 to 8192.
std::vector<int64_t> attentionLengths() {
  std::mt19937_64 rng(2026);
  std::vector<int64_t> lengths;
  for (int i = 0; i < 500; ++i)
    lengths.push_back(int64_t(rng() % 8192) + 1);
  return lengths;
}

/// The second process of the dynamic-shapes bundle test: load the bundle,
/// point the cache at an empty directory, run softmax (static_shapes =
/// false) over every row length from 1 to 8192, matmul over every M from 1
/// to 4096 and attention over 500 sequence lengths, and print the compiles.
int childDynamicBundle(const char *bundle, const char *emptyDir) {
  load_bundle(bundle);
  cache::set_directory(emptyDir);
  Options options;
  options.static_shapes = false;
  Tensor host = randn({2, 8192}, bf16, 3);
  Tensor all = cuda::to_device(host);
  int wrong = 0;
  for (int64_t n = 1; n <= 8192; ++n) {
    // The first 2 * n elements, as a contiguous [2, n] tensor.
    Tensor x = Tensor::from_blob(all.data_ptr(), {2, n}, {}, bf16, all.device());
    Tensor y = launch(softmax, options, x);
    if (n == 1 || n == 7 || n == 1000 || n == 8192) {
      Tensor xh = Tensor::from_blob(host.data_ptr(), {2, n}, {}, bf16);
      wrong += !kite_test::allClose(cuda::to_host(y), softmax(xh), kite_test::toleranceFor(bf16));
    }
  }
  Tensor wHost = randn({4096, 4096}, bf16, 5), xHost = randn({4096, 4096}, bf16, 6);
  Tensor w = cuda::to_device(wHost), xAll = cuda::to_device(xHost);
  for (int64_t m = 1; m <= 4096; ++m) {
    Tensor c = launch(::matmul, options, prefix(xAll, {m, 4096}), w);
    if (m == 1 || m == 3 || m == 130)
      wrong += !kite_test::allClose(cuda::to_host(c), ::matmul(prefix(xHost, {m, 4096}), wHost),
                                    kite_test::toleranceFor(bf16, 64));
  }
  Tensor qHost = randn({2 * 8192 * 64}, bf16, 7), kHost = randn({2 * 8192 * 64}, bf16, 8),
         vHost = randn({2 * 8192 * 64}, bf16, 9);
  Tensor q = cuda::to_device(qHost), k = cuda::to_device(kHost), v = cuda::to_device(vHost);
  int checked = 0;
  for (int64_t s : attentionLengths()) {
    Tensor o = launch(::attention, options, prefix(q, {2, s, 64}), prefix(k, {2, s, 64}),
                      prefix(v, {2, s, 64}));
    if (s <= 300 && checked++ < 5)
      wrong += !kite_test::allClose(cuda::to_host(o),
                                    ::attention(prefix(qHost, {2, s, 64}), prefix(kHost, {2, s, 64}),
                                              prefix(vHost, {2, s, 64})),
                                    kite_test::toleranceFor(bf16, 4));
  }
  cuda::synchronize();
  std::printf("compiles=%llu wrong=%d\n", (unsigned long long)runtime::compileCount(), wrong);
  return 0;
}

/// Runs `command` (this executable as a second process) and returns what
/// it printed; a failure to start or a non-zero exit fails the test.
std::string runChild(const std::string &command) {
  std::string out;
  FILE *p = ::popen(command.c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "cannot run " << command;
    return out;
  }
  char line[512] = {0};
  while (std::fgets(line, sizeof line, p))
    out += line;
  EXPECT_EQ(::pclose(p), 0) << out;
  return out;
}

class AutotuneGpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (!gpu_available())
      GTEST_SKIP() << "no CUDA GPU (" << gpu_unavailable_reason() << ")";
  }
};

TEST_F(AutotuneGpu, TunesSoftmaxSurvivesAFaultAndServesASecondProcess) {
  const KernelSource *source = lookup_kernel(softmax);
  ASSERT_NE(source, nullptr);
  fs::path dir = freshDir("autotune");
  cache::set_directory(dir.string());
  std::vector<ArgSpec> specs = {ArgSpec::tensor("x", bf16, kSizes, {}, 16)};

  autotune::TuneRequest request;
  request.kernel = *source;
  request.args = specs;
  request.space = configSpaceOf(*source, specs);
  request.compile = [&](const std::string &config) {
    return compileToPlan(*source, specs, Options{{}, config});
  };
  autotune::TuneOptions options;
  options.effort = autotune::Effort::quick;
  options.budgetSeconds = 20;
  options.injectFaultAt = 2;
  std::vector<std::string> lines;
  options.log = [&](const std::string &l) {
    lines.push_back(l);
    std::fprintf(stderr, "%s\n", l.c_str());
  };
  autotune::TuneResult r = autotune::tune(request, options);

  // The faulting candidate is reported and skipped; the worker restarted.
  EXPECT_GE(r.stats.failed, 1);
  ASSERT_FALSE(r.failures.empty());
  bool faultReported = false;
  for (const std::string &f : r.failures)
    faultReported |= f.find("ILLEGAL_ADDRESS") != std::string::npos ||
                     f.find("worker died") != std::string::npos;
  EXPECT_TRUE(faultReported) << r.failures[0];
  EXPECT_GE(r.workerStarts, 2);
  EXPECT_GT(r.stats.tried, 10);
  EXPECT_GT(r.ms, 0);
  EXPECT_GT(r.defaultMs, 0);
  EXPECT_LE(r.ms, r.defaultMs * 1.05) << "the winner is no slower than the default";
  EXPECT_LT(r.seconds, 60);
  EXPECT_FALSE(lines.empty());
  // Every config that ran is listed with its time; the winner was a
  // finalist, and its time is its re-timed median.
  int ran = r.stats.tried - r.stats.rejected - r.stats.failed - r.stats.wrong;
  EXPECT_EQ((int)r.timed.size(), ran);
  int finalists = 0;
  bool winnerListed = false;
  for (const autotune::TuneResult::Timed &t : r.timed) {
    EXPECT_GT(t.ms, 0) << t.config;
    finalists += t.finalMs > 0;
    winnerListed |= t.config == r.config && t.finalMs == r.ms;
  }
  EXPECT_GE(finalists, 1);
  EXPECT_LE(finalists, 4);
  EXPECT_TRUE(winnerListed) << r.config;

  // The winner computes softmax.
  Tensor host = randn(kSizes, bf16, 5);
  std::vector<Tensor> got = run_plan(r.plan, {cuda::to_device(host)});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(kite_test::allClose(cuda::to_host(got[0]), softmax(host),
                                  kite_test::toleranceFor(bf16)));

  // It is in the cache, as a tuned entry.
  bool tuned = false;
  for (const cache::Listed &l : cache::list(dir))
    tuned |= l.entry && l.entry->kernel == "softmax" && l.entry->source == cache::Source::tuned &&
             l.entry->config == r.config;
  EXPECT_TRUE(tuned);

  // A second process compiles nothing and launches at once.
  std::string out = runChild(fmt::format("'{}' --launch-child '{}'", gSelf, dir.string()));
  unsigned long long compiles = 99;
  double ms = -1;
  int correct = 0;
  const char *at = std::strstr(out.c_str(), "compiles=");
  ASSERT_NE(at, nullptr) << out;
  ASSERT_EQ(std::sscanf(at, "compiles=%llu first_launch_ms=%lf correct=%d", &compiles, &ms, &correct),
            3)
      << out;
  std::fprintf(stderr, "second process: %s", at);
  EXPECT_EQ(compiles, 0u);
  EXPECT_EQ(correct, 1);
  EXPECT_LT(ms, 10.0) << "the first launch from a warm cache";
  fs::remove_all(dir);
}

// Dynamic shapes shipped in a bundle: one plan per shape class of softmax's
// row length (1; then per bucket a held row's length has, 128 to 8192, a
// multiple of 8 and an odd length) put in a cache directory by launches,
// exported as a bundle; a fresh process that loads it runs every row length
// from 1 to 8192 without compiling.
TEST_F(AutotuneGpu, DynamicShapesBundleServesEveryLengthWithoutCompiling) {
  fs::path dir = freshDir("dynbundle"), empty = freshDir("dynbundle-empty");
  cache::set_directory(dir.string());
  Options options;
  options.static_shapes = false;
  std::vector<int64_t> lengths = {1};
  for (int64_t b = ArgSpec::kMinBound; b <= 8192; b *= 2) {
    lengths.push_back(b);
    lengths.push_back(b - 1);
  }
  for (int64_t n : lengths) {
    Tensor x = cuda::to_device(randn({2, n}, bf16, uint64_t(n)));
    launch(softmax, options, x);
  }
  // matmul: M of 1, then one per bucket of M (any M of a bucket: its
  // divisibility changes nothing); attention the same for its length.
  Tensor w = cuda::to_device(randn({4096, 4096}, bf16, 5));
  std::vector<int64_t> buckets = {1};
  for (int64_t b = ArgSpec::kMinBound; b <= 8192; b *= 2)
    buckets.push_back(b);
  for (int64_t m : buckets)
    if (m <= 4096)
      launch(::matmul, options, cuda::to_device(randn({m, 4096}, bf16, 6)), w);
  for (int64_t s : buckets) {
    Tensor q = cuda::to_device(randn({2, s, 64}, bf16, uint64_t(s)));
    launch(::attention, options, q, q, q);
  }
  cuda::synchronize();
  std::map<std::string, size_t> plans;
  std::vector<cache::Entry> entries;
  for (const cache::Listed &l : cache::list(dir))
    if (l.entry) {
      entries.push_back(*l.entry);
      ++plans[l.entry->kernel];
    }
  EXPECT_EQ(plans["softmax"], lengths.size()) << "a plan per class";
  EXPECT_EQ(plans["matmul"], 7u);
  EXPECT_EQ(plans["attention"], 8u);
  fs::path bundle = dir / "softmax.kitebundle";
  cache::write_bundle(bundle, entries);

  std::string out = runChild(fmt::format("'{}' --dynamic-bundle-child '{}' '{}'", gSelf,
                                         bundle.string(), empty.string()));
  const char *at = std::strstr(out.c_str(), "compiles=");
  ASSERT_NE(at, nullptr) << out;
  unsigned long long compiles = 99;
  int wrong = -1;
  ASSERT_EQ(std::sscanf(at, "compiles=%llu wrong=%d", &compiles, &wrong), 2) << out;
  std::fprintf(stderr, "bundle process: %s", at);
  EXPECT_EQ(compiles, 0u) << "every size is served by the bundle's classes";
  EXPECT_EQ(wrong, 0);
  fs::remove_all(dir);
  fs::remove_all(empty);
}

// A candidate slower than the cutoff is timed by its warm-up runs alone and
// says so; in the worker, the cutoff travels with the request.
TEST_F(AutotuneGpu, CandidatesSlowerThanTheCutoffAreNotTimedFurther) {
  const KernelSource *source = lookup_kernel(softmax);
  ASSERT_NE(source, nullptr);
  std::vector<ArgSpec> specs = {ArgSpec::tensor("x", bf16, kSizes, {}, 16)};
  KernelPlan plan = compileToPlan(*source, specs, Options{});
  autotune::WorkerBench worker(autotune::BenchSettings{});
  worker.setReference(plan, plan.args);
  autotune::Evaluation timed = worker.evaluate(plan, false, 60, 0);
  ASSERT_EQ(timed.status, autotune::Evaluation::Status::ok) << timed.message;
  EXPECT_GT(timed.ms, 0);
  EXPECT_TRUE(timed.message.empty()) << timed.message;
  autotune::Evaluation cut = worker.evaluate(plan, false, 60, 1e-6);
  ASSERT_EQ(cut.status, autotune::Evaluation::Status::ok) << cut.message;
  EXPECT_GT(cut.ms, 0);
  EXPECT_NE(cut.message.find("slower than the cutoff"), std::string::npos) << cut.message;
}

// A candidate that leaves rows of its output unwritten is wrong, even right
// after a correct candidate whose freed result the allocator may hand back
// (its checked run's outputs are poisoned). The half grid launches the
// first 256 of softmax's 512 row programs.
TEST_F(AutotuneGpu, ACandidateThatLeavesOutputUnwrittenIsWrong) {
  const KernelSource *source = lookup_kernel(softmax);
  ASSERT_NE(source, nullptr);
  std::vector<ArgSpec> specs = {ArgSpec::tensor("x", bf16, kSizes, {}, 16)};
  KernelPlan plan = compileToPlan(*source, specs, Options{});
  ASSERT_FALSE(plan.persistent);
  ASSERT_TRUE(plan.gridExpr.empty());
  ASSERT_EQ(plan.grid[0], 512u) << "one program a row";
  KernelPlan half = plan;
  half.grid[0] /= 2;
  half.key += "/half-grid"; // another loaded module: the cache keeps the grid

  autotune::PlanBench bench(autotune::benchArgs(plan, specs), autotune::BenchSettings{});
  bench.setReference(plan);
  for (int round = 0; round < 2; ++round) {
    autotune::Evaluation whole = bench.evaluate(plan);
    EXPECT_EQ(whole.status, autotune::Evaluation::Status::ok) << whole.message;
    autotune::Evaluation partial = bench.evaluate(half);
    EXPECT_EQ(partial.status, autotune::Evaluation::Status::wrong) << partial.message;
    EXPECT_NE(partial.message.find(fmt::format("{} of {} elements differ", 256 * 3000, 512 * 3000)),
              std::string::npos)
        << partial.message;
  }
}

// kite/c_api.h: a plan written to a file, read back through libkite_c.so
// and run on device addresses, returns softmax of its input (as DLPack),
// on a stream of its own.
TEST_F(AutotuneGpu, TheCInterfaceRunsAPlanFromItsFile) {
  const KernelSource *source = lookup_kernel(softmax);
  ASSERT_NE(source, nullptr);
  std::vector<ArgSpec> specs = {ArgSpec::tensor("x", bf16, kSizes, {}, 16)};
  KernelPlan plan = compileToPlan(*source, specs, Options{});
  fs::path dir = freshDir("capi");
  fs::path file = dir / "softmax.plan";
  std::vector<uint8_t> bytes = serialize(plan);
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));

  char error[512] = "";
  kite_plan *p = kite_plan_read(file.c_str(), error, sizeof error);
  ASSERT_NE(p, nullptr) << error;
  ASSERT_EQ(kite_plan_num_results(p), 1);
  Tensor host = randn(kSizes, bf16, 5);
  Tensor x = cuda::to_device(host);
  uint64_t tensors[1] = {uint64_t(reinterpret_cast<uintptr_t>(x.data_ptr()))};
  double scalars[1] = {0};
  CUstream stream = nullptr;
  ASSERT_EQ(runtime::cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  DLManagedTensor *out = nullptr;
  ASSERT_EQ(kite_plan_run(p, 0, uint64_t(reinterpret_cast<uintptr_t>(stream)), 1, tensors, scalars,
                          &out, 1, error, sizeof error),
            0)
      << error;
  ASSERT_EQ(runtime::cu().cuStreamSynchronize(stream), CUDA_SUCCESS);
  {
    // Dropped while its stream lives: a result is freed on the stream it
    // was allocated on.
    Tensor y = from_dlpack(out);
    EXPECT_EQ(y.sizes(), kSizes);
    EXPECT_TRUE(kite_test::allClose(cuda::to_host(y), softmax(host), kite_test::toleranceFor(bf16)));
  }
  ASSERT_EQ(runtime::cu().cuStreamSynchronize(stream), CUDA_SUCCESS);
  // The launch's own checks, through the interface: a wrong argument count.
  EXPECT_EQ(kite_plan_run(p, 0, 0, 2, tensors, scalars, nullptr, 0, error, sizeof error), -1);
  EXPECT_NE(std::string(error).find("the plan takes 1 arguments, 2 were given"), std::string::npos)
      << error;
  runtime::cu().cuStreamDestroy(stream);
  kite_plan_free(p);
  fs::remove_all(dir);
}

TEST_F(AutotuneGpu, LaunchWithTuningTunesOnceAndCachesTheWinner) {
  fs::path dir = freshDir("launch-tune");
  cache::set_directory(dir.string());
  ::setenv("KITE_AUTOTUNE_BUDGET", "8", 1);
  ::setenv("KITE_AUTOTUNE_WORKER", gSelf.c_str(), 1); // this binary serves as the worker
  Tensor host = randn({300, 1000}, bf16, 21);
  Tensor x = cuda::to_device(host);
  Options tune;
  tune.tuning = Options::Tuning::tune;
  auto start = std::chrono::steady_clock::now();
  Tensor y = launch(softmax, tune, x);
  cuda::synchronize();
  double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(kite_test::allClose(cuda::to_host(y), softmax(host), kite_test::toleranceFor(bf16)));
  int tuned = 0;
  for (const cache::Listed &l : cache::list(dir))
    tuned += l.entry && l.entry->kernel == "softmax" && l.entry->source == cache::Source::tuned &&
             l.entry->configsSearched > 1 && l.entry->timeMs.value_or(0) > 0;
  EXPECT_EQ(tuned, 1);
  // The same shapes again: the plan is in memory; no second tuning.
  start = std::chrono::steady_clock::now();
  Tensor y2 = launch(softmax, tune, x);
  cuda::synchronize();
  double second = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(second, 0.05) << "first launch (tuning) took " << first << " s";
  EXPECT_TRUE(kite_test::allClose(cuda::to_host(y2), softmax(host), kite_test::toleranceFor(bf16)));
  ::unsetenv("KITE_AUTOTUNE_BUDGET");
  ::unsetenv("KITE_AUTOTUNE_WORKER");
  fs::remove_all(dir);
}

// The scalars given to a benchmark reach the kernel: the reference run's
// output is window_sum with those values (in this process), and in a worker
// a window of every column takes far longer than a window of a few (a
// placeholder of 0 would make both empty).
TEST_F(AutotuneGpu, BenchmarksRunWithTheScalarsGiven) {
  const KernelSource *source = lookup_kernel(window_sum);
  ASSERT_NE(source, nullptr);
  const int64_t rows = 4096, cols = 16384;
  std::vector<ArgSpec> specs = {ArgSpec::tensor("x", f32, {rows, cols}, {}, 16),
                                ArgSpec::scalar("window", i64), ArgSpec::scalar("scale", f64)};
  KernelPlan plan = compileToPlan(*source, specs, Options{});
  ASSERT_FALSE(plan.args[1].value.has_value()) << "window is a run-time scalar";

  auto given = [&](int64_t window, double scale) {
    std::vector<ArgSpec> g = specs;
    g[1].value = (double)window;
    g[2].value = scale;
    return autotune::benchArgs(plan, g);
  };
  {
    autotune::PlanBench bench(given(100, 3.0), autotune::BenchSettings{});
    bench.setReference(plan);
    Tensor x = cuda::to_host(bench.inputs()[0]);
    Tensor got = cuda::to_host(bench.referenceResults()[0]);
    EXPECT_TRUE(kite_test::allClose(got, window_sum(x, 100, 3.0), kite_test::toleranceFor(f32)));
  }
  auto timeIt = [&](int64_t window) {
    autotune::WorkerBench worker(autotune::BenchSettings{}, 0, gSelf);
    worker.setReference(plan, given(window, 1.0));
    std::optional<double> ms = worker.time(plan, 20);
    return ms.value_or(-1);
  };
  double narrow = timeIt(16), wide = timeIt(cols);
  ASSERT_GT(narrow, 0);
  EXPECT_GT(wide, 3 * narrow) << "window " << cols << ": " << wide << " ms, window 16: " << narrow
                              << " ms";
}

} // namespace

int main(int argc, char **argv) {
  if (std::optional<int> worker = autotune::maybeRunWorker(argc, argv))
    return *worker;
  if (argc == 3 && std::strcmp(argv[1], "--launch-child") == 0)
    return childLaunch(argv[2]);
  if (argc == 4 && std::strcmp(argv[1], "--dynamic-bundle-child") == 0)
    return childDynamicBundle(argv[2], argv[3]);
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  gSelf = n > 0 ? std::string(self, (size_t)n) : argv[0];
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
