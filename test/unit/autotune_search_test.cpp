//===- autotune_search_test.cpp - config spaces and the search ------------===//
//
// This file tests the autotuner's GPU-free parts: SearchSpace (parsing,
// pinning, configs, neighbors) and the search strategy on synthetic
// objectives with a known optimum, rejected regions and failures.
//
//===----------------------------------------------------------------------===//

#include "autotune/Bench.h"
#include "autotune/Search.h"
#include "autotune/Space.h"
#include "autotune/Tuner.h"
#include "autotune/Worker.h"

#include "runtime/Nvrtc.h"

#include <kite/cache.hpp>
#include <kite/runtime.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <set>
#include <thread>

using json = nlohmann::json;
using namespace kite::autotune;

namespace {

/// A space shaped like a row kernel's: two block sizes, warps, pid type,
/// one reduction chunk.
json rowSpace() {
  return json::parse(R"({
    "default": {"block_sizes": [4, 64], "num_warps": 4, "pid_type": "flat",
                "reduction_loops": [null], "loop_orders": [[1, 0]], "l2_groupings": [1]},
    "parameters": [
      {"key": "block_sizes", "index": 0, "values": [1,2,4,8,16,32,64,128], "default": 2},
      {"key": "block_sizes", "index": 1, "values": [16,32,64,128,256,512,1024], "default": 2},
      {"key": "num_warps", "values": [1,2,4,8,16,32], "default": 2},
      {"key": "pid_type", "values": ["flat","persistent_blocked","persistent_interleaved"], "default": 0},
      {"key": "reduction_loops", "index": 0, "values": [256,512,1024,null], "default": 3}
    ]})");
}

TEST(SearchSpace, BuildsConfigsFromPoints) {
  SearchSpace space(rowSpace());
  EXPECT_EQ(space.size(), 5u);
  EXPECT_EQ(space.cardinality(), 8u * 7 * 6 * 3 * 4);
  Point d = space.defaults();
  EXPECT_EQ(d, (Point{2, 2, 2, 0, 3}));
  EXPECT_EQ(space.config(d), rowSpace()["default"]);
  Point p = {7, 0, 5, 2, 1};
  json c = space.config(p);
  EXPECT_EQ(c["block_sizes"], json::parse("[128, 16]"));
  EXPECT_EQ(c["num_warps"], 32);
  EXPECT_EQ(c["pid_type"], "persistent_interleaved");
  EXPECT_EQ(c["reduction_loops"], json::parse("[512]"));
  EXPECT_EQ(c["loop_orders"], json::parse("[[1, 0]]")); // not a parameter: the default's
  EXPECT_EQ(space.parameters()[1].name(), "block_sizes[1]");
}

TEST(SearchSpace, NeighborsStayInRange) {
  SearchSpace space(rowSpace());
  Point corner = {0, 0, 0, 0, 0};
  std::vector<Point> n = space.neighbors(corner, 1);
  EXPECT_EQ(n.size(), 5u); // one step up in each parameter, none below 0
  for (const Point &q : n) {
    int changed = 0;
    for (size_t i = 0; i < q.size(); ++i)
      changed += q[i] != corner[i];
    EXPECT_EQ(changed, 1);
  }
  EXPECT_EQ(space.neighbors(space.defaults(), 2).size(), 4u + 4 + 4 + 2 + 2);
  for (const Point &q : space.pairNeighbors(space.defaults()))
    for (size_t i = 0; i < q.size(); ++i)
      EXPECT_TRUE(q[i] >= 0 && q[i] < (int)space.parameters()[i].values.size());
}

TEST(SearchSpace, PinnedKeysLeaveTheSpace) {
  SearchSpace space(rowSpace());
  space.pin(json::parse(R"({"num_warps": 8, "block_sizes": [2, 128]})"));
  EXPECT_EQ(space.size(), 2u); // pid_type and reduction_loops[0]
  json c = space.config(space.defaults());
  EXPECT_EQ(c["num_warps"], 8);
  EXPECT_EQ(c["block_sizes"], json::parse("[2, 128]"));
  try {
    space.pin(json::parse(R"({"num_wraps": 8})"));
    FAIL() << "an unknown pinned key must be an error";
  } catch (const kite::Error &e) {
    EXPECT_NE(std::string(e.what()).find("'num_wraps' is not a config key"), std::string::npos)
        << e.what();
  }
}

TEST(SearchSpace, MalformedSpacesAreErrors) {
  auto message = [](const char *text) {
    try {
      SearchSpace space(json::parse(text));
    } catch (const kite::Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("[]").find("malformed config space"), std::string::npos);
  EXPECT_NE(message(R"({"default": {}, "parameters": [{"key": "num_warps", "values": []}]})")
                .find("num_warps has no values"),
            std::string::npos);
  EXPECT_NE(message(R"({"default": {"block_sizes": [1]}, "parameters": [
                        {"key": "block_sizes", "index": 3, "values": [1, 2]}]})")
                .find("block_sizes[3] has no entry"),
            std::string::npos);
}

TEST(SearchSpace, StartsAreThePointsOfTheCompilersStarts) {
  json text = rowSpace();
  // The default itself, a start two keys away, the same again, and one
  // whose value the space lacks (the nearest is taken).
  text["starts"] = json::parse(R"([
    {"block_sizes": [4, 64], "num_warps": 4},
    {"block_sizes": [8, 64], "pid_type": "persistent_interleaved"},
    {"block_sizes": [8, 64], "pid_type": "persistent_interleaved"},
    {"num_warps": 12}])");
  SearchSpace space(text);
  EXPECT_EQ(space.starts(), (std::vector<Point>{{3, 2, 2, 2, 3}, {2, 2, 4, 0, 3}}));
  // A pinned key keeps its pinned value in every start.
  space.pin(json::parse(R"({"pid_type": "flat"})"));
  EXPECT_EQ(space.starts(), (std::vector<Point>{{3, 2, 2, 3}, {2, 2, 4, 3}}));
  EXPECT_TRUE(SearchSpace(rowSpace()).starts().empty());
  text["starts"] = json::parse(R"({"num_warps": 8})");
  EXPECT_THROW(SearchSpace{text}, kite::Error);
  text["starts"] = json::parse(R"([8])");
  EXPECT_THROW(SearchSpace{text}, kite::Error);
}

/// A synthetic kernel: time is a bowl around `opt` in index space with an
/// interaction between the two block sizes, rejected where the tile is too
/// big, failing at one pid type for big tiles.
struct Bowl {
  Point opt = {5, 3, 3, 1, 1};
  std::set<Point> seen;
  int calls = 0, repeats = 0;

  Evaluation at(const Point &p) {
    if (!seen.insert(p).second)
      ++repeats;
    if (p[0] + p[1] > 11)
      return {Evaluation::Status::rejected, 0, "config does not fit: too many registers"};
    if (p[3] == 2 && p[0] >= 6)
      return {Evaluation::Status::failed, 0, "CUDA_ERROR_ILLEGAL_ADDRESS"};
    double t = 1.0;
    for (size_t i = 0; i < p.size(); ++i)
      t += 0.05 * (p[i] - opt[i]) * (p[i] - opt[i]);
    t += 0.02 * std::abs((p[0] - opt[0]) - (p[1] - opt[1]));
    return {Evaluation::Status::ok, t, ""};
  }
  EvaluateFn fn() {
    return [this](const std::vector<Point> &points) {
      ++calls;
      std::vector<Evaluation> out;
      for (const Point &p : points)
        out.push_back(at(p));
      return out;
    };
  }
};

TEST(Search, QuickFindsTheOptimumOfABowl) {
  SearchSpace space(rowSpace());
  Bowl bowl;
  SearchOptions o;
  o.effort = Effort::quick;
  o.budgetSeconds = 60;
  SearchResult r = search(space, bowl.fn(), o);
  ASSERT_FALSE(r.best.empty());
  EXPECT_EQ(r.best[0].first, bowl.opt);
  EXPECT_DOUBLE_EQ(r.best[0].second, 1.0);
  EXPECT_EQ(bowl.repeats, 0) << "no point is evaluated twice";
  EXPECT_LT(r.stats.tried, (int)space.cardinality() / 10) << "a search, not a sweep";
  EXPECT_EQ(r.stats.tried, (int)bowl.seen.size());
  for (size_t i = 1; i < r.best.size(); ++i)
    EXPECT_LE(r.best[i - 1].second, r.best[i].second);
}

TEST(SearchSpace, NearestMapsConfigsOfOtherShapes) {
  SearchSpace space(rowSpace());
  // Values the space has are taken as they are.
  json c = json::parse(R"({"block_sizes": [8, 256], "num_warps": 16,
                           "pid_type": "persistent_blocked", "reduction_loops": [512]})");
  EXPECT_EQ(space.nearest(c), (Point{3, 4, 4, 1, 1}));
  // Numbers it lacks map to the nearest on a log scale (3 -> 4, 2048 ->
  // 1024); unknown strings, missing keys and short lists keep the default.
  c = json::parse(R"({"block_sizes": [3], "num_warps": 64, "pid_type": "xyz"})");
  EXPECT_EQ(space.nearest(c), (Point{2, 2, 5, 0, 3}));
  EXPECT_EQ(space.nearest(json::parse("{}")), space.defaults());
  EXPECT_EQ(space.nearest(json::parse(R"({"block_sizes": [1, 2048]})")), (Point{0, 6, 2, 0, 3}));
}

TEST(Search, WarmStartsAreTriedFirstAndDescendedFrom) {
  SearchSpace space(rowSpace());
  Bowl bowl;
  std::vector<std::vector<Point>> batches;
  EvaluateFn inner = bowl.fn();
  EvaluateFn record = [&](const std::vector<Point> &points) {
    batches.push_back(points);
    return inner(points);
  };
  SearchOptions o;
  o.effort = Effort::quick;
  o.budgetSeconds = 60;
  Point near = {5, 3, 3, 1, 0}; // one step from the optimum
  o.warmStarts = {near};
  SearchResult r = search(space, record, o);
  ASSERT_FALSE(batches.empty());
  EXPECT_EQ(batches[0], (std::vector<Point>{space.defaults(), near}));
  // The first descent starts at the warm start: its neighbors come next.
  ASSERT_GE(batches.size(), 2u);
  EXPECT_NE(std::find(batches[1].begin(), batches[1].end(), bowl.opt), batches[1].end());
  ASSERT_FALSE(r.best.empty());
  EXPECT_EQ(r.best[0].first, bowl.opt);
}

TEST(Search, FullIsAtLeastAsGoodAsQuickAndCountsFailures) {
  SearchSpace space(rowSpace());
  Bowl quickBowl, fullBowl;
  fullBowl.opt = quickBowl.opt = {7, 4, 0, 2, 0}; // near the rejected and failing regions
  SearchOptions o;
  o.effort = Effort::quick;
  int failures = 0;
  o.onFailure = [&](const Point &, const Evaluation &e) {
    ++failures;
    EXPECT_EQ(e.message, "CUDA_ERROR_ILLEGAL_ADDRESS");
  };
  SearchResult quick = search(space, quickBowl.fn(), o);
  o.effort = Effort::full;
  SearchResult full = search(space, fullBowl.fn(), o);
  ASSERT_FALSE(quick.best.empty());
  ASSERT_FALSE(full.best.empty());
  EXPECT_LE(full.best[0].second, quick.best[0].second);
  EXPECT_GE(full.stats.tried, quick.stats.tried);
  EXPECT_GT(quick.stats.rejected + full.stats.rejected, 0);
  EXPECT_EQ(failures, quick.stats.failed + full.stats.failed);
  // The optimum itself fails (pid 2 with a big tile): the best is valid.
  EXPECT_NE(full.best[0].first, fullBowl.opt);
}

TEST(Search, FullEvaluatesEverythingQuickDoes) {
  SearchSpace space(rowSpace());
  for (Point opt : {Point{5, 3, 3, 1, 1}, Point{0, 6, 5, 0, 3}, Point{7, 0, 1, 2, 2}}) {
    Bowl quickBowl, fullBowl;
    quickBowl.opt = fullBowl.opt = opt;
    SearchOptions o;
    o.effort = Effort::quick;
    search(space, quickBowl.fn(), o);
    o.effort = Effort::full;
    search(space, fullBowl.fn(), o);
    for (const Point &p : quickBowl.seen)
      EXPECT_TRUE(fullBowl.seen.count(p)) << "full skipped a point quick evaluated";
  }
}

TEST(Search, QuickStopsEarlierThanFullOnASlowKernel) {
  SearchSpace space(rowSpace());
  Bowl quickBowl, fullBowl;
  auto slow = [](Bowl &bowl) -> EvaluateFn {
    return [&bowl](const std::vector<Point> &points) {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      return bowl.fn()(points);
    };
  };
  SearchOptions o;
  o.budgetSeconds = 1.0;
  o.effort = Effort::quick;
  SearchResult quick = search(space, slow(quickBowl), o);
  o.effort = Effort::full;
  SearchResult full = search(space, slow(fullBowl), o);
  EXPECT_LT(quick.stats.tried, full.stats.tried);
  EXPECT_LT(quick.stats.seconds, 0.4 * o.budgetSeconds + 0.2) << "quick's soft limit";
  EXPECT_LE(full.best[0].second, quick.best[0].second);
}

TEST(Search, NoneEvaluatesTheDefaultOnly) {
  SearchSpace space(rowSpace());
  Bowl bowl;
  SearchOptions o;
  o.effort = Effort::none;
  SearchResult r = search(space, bowl.fn(), o);
  EXPECT_EQ(r.stats.tried, 1);
  ASSERT_EQ(r.best.size(), 1u);
  EXPECT_EQ(r.best[0].first, space.defaults());
}

TEST(Search, StopsAtTheBudget) {
  SearchSpace space(rowSpace());
  Bowl bowl;
  EvaluateFn slow = [&](const std::vector<Point> &points) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return bowl.fn()(points);
  };
  SearchOptions o;
  o.effort = Effort::full;
  o.budgetSeconds = 0.25;
  auto start = std::chrono::steady_clock::now();
  SearchResult r = search(space, slow, o);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 0.25 + 0.35) << "at most one batch past the budget";
  EXPECT_LE(bowl.calls, 4);
  EXPECT_FALSE(r.best.empty());
}

TEST(Search, ProgressAfterEveryBatch) {
  SearchSpace space(rowSpace());
  Bowl bowl;
  SearchOptions o;
  std::vector<int> tried;
  o.progress = [&](const SearchStats &s) { tried.push_back(s.tried); };
  SearchResult r = search(space, bowl.fn(), o);
  ASSERT_EQ((int)tried.size(), bowl.calls);
  EXPECT_TRUE(std::is_sorted(tried.begin(), tried.end()));
  EXPECT_EQ(tried.back(), r.stats.tried);
}

/// A worker that is not one (it exits at once, or echoes the request back)
/// gives a clear error, not a hang or a crash.
TEST(Search, FinalistsAreRankedByTheirMedianOverRounds) {
  // The second finalist has the single fastest round but the slower median.
  std::vector<std::vector<double>> times = {
      {1.00, 1.01, 0.99, 1.00, 1.02}, {0.90, 1.05, 1.06, 1.04, 1.07}, {}, {0.98, 0.97, 0.99}};
  auto best = fastestByMedian(times);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->first, 3u);
  EXPECT_DOUBLE_EQ(best->second, 0.98);
  // Even counts take the mean of the middle two; ties keep the earlier one.
  best = fastestByMedian({{2.0, 1.0}, {1.5, 1.5}});
  ASSERT_TRUE(best);
  EXPECT_EQ(best->first, 0u);
  EXPECT_DOUBLE_EQ(best->second, 1.5);
  EXPECT_FALSE(fastestByMedian({{}, {}}));
  EXPECT_FALSE(fastestByMedian({}));
}

TEST(Worker, ABrokenWorkerIsAnErrorNotAHang) {
  kite::KernelPlan plan;
  plan.name = "k";
  plan.kernelName = "kite_k";
  plan.arch = "sm_90a";
  plan.binary = {0x7f, 'E', 'L', 'F'};
  // A "worker" that sends every frame straight back.
  std::string echo = (std::filesystem::temp_directory_path() /
                      ("kite-echo-worker-" + std::to_string(::getpid())))
                         .string();
  {
    std::ofstream f(echo);
    f << "#!/bin/sh\nexec cat\n";
  }
  std::filesystem::permissions(echo, std::filesystem::perms::owner_all);
  for (std::string exe : {std::string("/bin/true"), echo, std::string("/nonexistent/kite")}) {
    WorkerBench bench(BenchSettings{}, 0, exe);
    auto start = std::chrono::steady_clock::now();
    try {
      bench.setReference(plan, plan.args);
      ADD_FAILURE() << exe << ": no error";
    } catch (const kite::Error &e) {
      std::string what = e.what();
      EXPECT_NE(what.find("benchmark worker"), std::string::npos) << exe << ": " << what;
      if (exe == echo)
        EXPECT_NE(what.find("serves --kite-autotune-worker"), std::string::npos) << what;
      if (exe == "/bin/true")
        EXPECT_NE(what.find("exited with status 0"), std::string::npos) << what;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(s, 10.0) << exe;
  }
  std::filesystem::remove(echo);
}

// A benchmark runs a plan with the scalar values asked for: a plan's specs
// keep only the values it is specialized on, and the others come from what
// was given (bench, autotune and inspect --emit=roofline all go through
// benchArgs).
TEST(Bench, ArgsCarryTheGivenScalarValues) {
  kite::KernelPlan plan;
  plan.name = "k";
  plan.args = {kite::ArgSpec::tensor("x", kite::f32, {4, 8}),
               kite::ArgSpec::scalar("window", kite::i64),
               kite::ArgSpec::scalar("flag", kite::boolean, 1.0)};
  std::vector<kite::ArgSpec> given = plan.args;
  given[1].value = 64;
  std::vector<kite::ArgSpec> args = benchArgs(plan, given);
  ASSERT_EQ(args.size(), 3u);
  ASSERT_TRUE(args[1].value.has_value());
  EXPECT_EQ(*args[1].value, 64);
  EXPECT_EQ(*args[2].value, 1.0);
  EXPECT_EQ(args[0], plan.args[0]);
  // Nothing given: nothing invented here (PlanBench's placeholder applies).
  EXPECT_FALSE(benchArgs(plan, plan.args)[1].value.has_value());
  // A value that contradicts the plan's specialization, or another shape
  // of arguments, is an error.
  given[2].value = 0.0;
  EXPECT_THROW(benchArgs(plan, given), kite::Error);
  EXPECT_THROW(benchArgs(plan, {plan.args[0]}), kite::Error);
  std::vector<kite::ArgSpec> swapped = {plan.args[1], plan.args[0], plan.args[2]};
  EXPECT_THROW(benchArgs(plan, swapped), kite::Error);
}

/// The benchmark's fill and compare kernels compile with NVRTC (no GPU).
TEST(Bench, HelperKernelsCompile) {
  if (!kite::runtime::nvrtcAvailable())
    GTEST_SKIP() << "NVRTC is not available: " << kite::runtime::nvrtcUnavailableReason();
  std::vector<uint8_t> cubin = compileBenchHelpers("sm_90a");
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin[0], 0x7f); // an ELF
  EXPECT_EQ(cubin[1], 'E');
}

} // namespace

namespace {

kite::cache::Entry tunedEntry(std::string kernel, std::string irHash, std::string arch,
                              std::vector<kite::ArgSpec> args, std::string config) {
  kite::cache::Entry e;
  e.kernel = kernel;
  e.irHash = irHash;
  e.kiteVersion = kite::cache::kite_version();
  e.target = {arch, 132, 13000, 13000};
  e.source = kite::cache::Source::tuned;
  kite::KernelPlan &p = e.plan;
  p.name = kernel;
  p.kernelName = "kite_" + kernel;
  p.arch = arch;
  p.binary.assign(64, 7);
  p.block = {128, 1, 1};
  p.grid = {1, 1, 1};
  p.args = std::move(args);
  p.config = config;
  p.key = kernel + config + std::to_string(p.args[0].sizes[0]);
  e.config = config;
  e.timeMs = 0.1;
  return e;
}

} // namespace

TEST(Tuner, NearbyTunedConfigsComeNearestFirst) {
  namespace fs = std::filesystem;
  using kite::ArgSpec;
  fs::path dir = fs::temp_directory_path() / ("kite-nearby-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto x = [](int64_t rows, int64_t cols, kite::DType t = kite::DType::bf16) {
    return std::vector<ArgSpec>{ArgSpec::tensor("x", t, {rows, cols}, {}, 16)};
  };
  using kite::cache::store;
  store(tunedEntry("softmax", "h1", "sm_90a", x(4096, 4096), R"({"num_warps":8})"), dir);
  store(tunedEntry("softmax", "h1", "sm_90a", x(4096, 1024), R"({"num_warps":2})"), dir);
  store(tunedEntry("softmax", "h1", "sm_90a", x(64, 64), R"({"num_warps":1})"), dir);
  // Not candidates: another IR, another architecture, another dtype, another kernel.
  store(tunedEntry("softmax", "h2", "sm_90a", x(4096, 2048), R"({"num_warps":4})"), dir);
  store(tunedEntry("softmax", "h1", "sm_80", x(4096, 2048), R"({"num_warps":16})"), dir);
  store(tunedEntry("softmax", "h1", "sm_90a", x(4096, 2048, kite::DType::f32), R"({"num_warps":32})"),
        dir);
  store(tunedEntry("layernorm", "h1", "sm_90a", x(4096, 2048), R"({"num_warps":4})"), dir);
  kite::KernelSource k{nullptr, "softmax", "", "h1", ""};
  std::vector<std::string> got =
      nearbyTunedConfigs(k, x(4096, 2048), "sm_90a", 2, dir);
  // 4096x1024 and 4096x4096 are both one doubling away (in that order of
  // the cache's listing, stable); 64x64 is far.
  ASSERT_EQ(got.size(), 2u);
  std::set<std::string> two(got.begin(), got.end());
  EXPECT_EQ(two, (std::set<std::string>{R"({"num_warps":8})", R"({"num_warps":2})"}));
  got = nearbyTunedConfigs(k, x(4096, 2048), "sm_90a", 10, dir);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2], R"({"num_warps":1})");
  EXPECT_TRUE(nearbyTunedConfigs(k, x(4096, 2048), "sm_89", 10, dir).empty());
  fs::remove_all(dir);
}
