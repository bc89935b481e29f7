//===- Tuner.cpp - autotuning a kernel for one specialization -------------===//
//
// This file implements tune (see Tuner.h).
//
//===----------------------------------------------------------------------===//

#include "autotune/Tuner.h"
#include "autotune/Parallel.h"
#include "autotune/Worker.h"

#include <kite/cache.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <map>
#include <mutex>
#include <variant>

using json = nlohmann::json;
using namespace kite;
using namespace kite::autotune;

namespace {

/// The finalists' re-timing: the search's best few, timed in rounds.
constexpr size_t kFinalists = 4;
constexpr int kFinalRounds = 5, kRunsPerRound = 12;

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// Either benchmark: in a worker process or in this one.
class AnyBench {
public:
  AnyBench(const TuneOptions &o) {
    if (o.isolate)
      worker = std::make_unique<WorkerBench>(o.bench, o.device, o.workerExecutable);
    else
      settings = o.bench, device = o.device;
  }
  void setReference(const KernelPlan &plan, const std::vector<ArgSpec> &given) {
    std::vector<ArgSpec> args = benchArgs(plan, given);
    if (worker)
      return worker->setReference(plan, std::move(args));
    local = std::make_unique<PlanBench>(std::move(args), settings, device);
    local->setReference(plan);
  }
  Evaluation evaluate(const KernelPlan &plan, bool fault, double timeoutSeconds, double cutoffMs) {
    if (worker)
      return worker->evaluate(plan, fault, timeoutSeconds, cutoffMs);
    if (local->broken())
      return Evaluation{Evaluation::Status::failed, 0,
                        "an earlier candidate faulted and this process cannot use the GPU any "
                        "more (tune with isolation to survive faults)"};
    return local->evaluate(plan, fault, cutoffMs);
  }
  std::optional<double> time(const KernelPlan &plan, int runs) {
    if (worker)
      return worker->time(plan, runs);
    if (local->broken())
      return std::nullopt;
    return local->time(plan, runs);
  }
  int starts() const { return worker ? worker->starts() : 1; }

private:
  std::unique_ptr<WorkerBench> worker;
  std::unique_ptr<PlanBench> local;
  BenchSettings settings;
  int device = 0;
};

/// Compile times seen so far (seconds), shared by the compiling threads.
class CompileTimes {
public:
  explicit CompileTimes(double first) : seen{first} {}
  void add(double s) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.push_back(s);
  }
  /// The median: a typical compile, which a few huge tiles (NVRTC can take
  /// tens of seconds on one) do not move.
  double typical() {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<double> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2];
  }

private:
  std::mutex mutex;
  std::vector<double> seen;
};

/// Compiles `configs` on `threads` threads; each result is a plan or the
/// evaluation that says why there is none. With `maySkip`, a compile is not
/// started when a typical compile so far (`times`, updated here) would end
/// past the deadline: NVRTC cannot be interrupted.
std::vector<std::variant<KernelPlan, Evaluation>>
compileAll(const TuneRequest &request, const std::vector<std::string> &configs, int threads,
           std::chrono::steady_clock::time_point deadline, CompileTimes &times, bool maySkip) {
  std::vector<std::variant<KernelPlan, Evaluation>> out(configs.size());
  parallelFor(configs.size(), threads, [&](size_t i) {
    auto begin = std::chrono::steady_clock::now();
    if (maySkip &&
        begin + std::chrono::milliseconds((int64_t)(times.typical() * 1000)) > deadline) {
      out[i] = Evaluation{Evaluation::Status::skipped, 0, "out of time"};
      return;
    }
    try {
      out[i] = request.compile(configs[i]);
    } catch (const ConfigRejected &e) {
      out[i] = Evaluation{Evaluation::Status::rejected, 0, e.what()};
    } catch (const std::exception &e) {
      out[i] = Evaluation{Evaluation::Status::failed, 0, e.what()};
    }
    times.add(since(begin));
  });
  return out;
}

std::string firstLine(const std::string &s) {
  size_t nl = s.find('\n');
  std::string line = s.substr(0, nl);
  // Messages name the kernel's whole compile context; the tail says why.
  if (size_t at = line.rfind(": config does not fit"); at != std::string::npos)
    line = line.substr(at + 2);
  return line;
}

} // namespace

std::vector<std::string> kite::autotune::nearbyTunedConfigs(const KernelSource &kernel,
                                                           const std::vector<ArgSpec> &args,
                                                           const std::string &arch, size_t most,
                                                           const std::filesystem::path &dir,
                                                           bool dynamic) {
  std::vector<std::string> configs;
  for (const cache::NearbyConfig &c :
       cache::nearby_tuned_configs(kernel.name, kernel.irHash, arch, args, dynamic, most, dir))
    configs.push_back(c.config);
  return configs;
}

TuneResult kite::autotune::tune(const TuneRequest &request, const TuneOptions &options) {
  auto start = std::chrono::steady_clock::now();
  auto log = [&](const std::string &line) {
    if (options.log)
      options.log(line);
  };
  SearchSpace space(json::parse(request.space));
  if (!request.pinned.empty()) {
    json pinned = json::parse(request.pinned, nullptr, false);
    if (pinned.is_discarded())
      throw Error("kite autotune: the pinned config is not JSON: " + request.pinned);
    space.pin(pinned);
  }
  int threads = options.threads > 0 ? options.threads : hardwareThreads();
  std::string name(request.kernel.name);

  // The reference: the default config (with the pinned keys).
  std::string defaultConfig = space.configText(space.defaults());
  KernelPlan reference;
  double referenceCompile = 0; // seconds
  try {
    auto begin = std::chrono::steady_clock::now();
    reference = request.compile(defaultConfig);
    referenceCompile = since(begin);
  } catch (const std::exception &e) {
    throw Error(fmt::format("kite autotune: {}: the default config {} does not compile:\n{}",
                            name, defaultConfig, e.what()));
  }
  AnyBench bench(options);
  bench.setReference(reference, request.args);

  TuneResult result;
  result.bytes = bytesMoved(reference, request.args);

  // The defaults leave room, within quick's 30 s and full's 3 minutes, for
  // compiles in flight at the deadline and the winners' re-timing (on the
  // H200 a quick matmul tune took 32.6 s with a 25 s budget). A kernel whose
  // default config takes NVRTC long (attention: seconds) gets room for a few
  // rounds of parallel compiles: 4 (quick) or 20 (full) times that.
  double budget = options.budgetSeconds > 0 ? options.budgetSeconds
                  : options.effort == Effort::full ? std::max(160.0, 20 * referenceCompile)
                                                   : std::max(20.0, 4 * referenceCompile);
  // Candidates still compiling or waiting at the deadline are skipped.
  auto deadline = start + std::chrono::milliseconds((int64_t)(budget * 1000));
  auto grace = deadline + std::chrono::milliseconds((int64_t)(budget * 500));
  std::map<Point, KernelPlan> plans;
  int evaluations = 0;
  double bestMs = 0; // the fastest candidate so far
  // The reference's compile first: the worker's start and CUDA's
  // initialization (seconds on a fresh machine) are not compile time, and
  // counting them skipped every candidate of a quick tune there.
  CompileTimes compileTimes(referenceCompile);
  EvaluateFn evaluate = [&](const std::vector<Point> &points) {
    std::vector<std::string> configs;
    for (const Point &p : points)
      configs.push_back(space.configText(p));
    // Until something ran, nothing is skipped (the search needs a winner).
    auto compiled = compileAll(request, configs, threads, deadline, compileTimes,
                               /*maySkip=*/!plans.empty());
    std::vector<Evaluation> out;
    for (size_t i = 0; i < points.size(); ++i) {
      if (auto *e = std::get_if<Evaluation>(&compiled[i])) {
        e->message = firstLine(e->message);
        out.push_back(*e);
        continue;
      }
      KernelPlan &plan = std::get<KernelPlan>(compiled[i]);
      // A compiled candidate costs only its timing: it is timed up to half
      // the budget past the deadline (compiles of slow kernels, started in
      // parallel before it, all end after it).
      if (std::chrono::steady_clock::now() > grace && !plans.empty()) {
        out.push_back(Evaluation{Evaluation::Status::skipped, 0, "out of time"});
        continue;
      }
      bool fault = options.injectFaultAt && *options.injectFaultAt == evaluations;
      ++evaluations;
      // Ten times slower than the best so far cannot win: such a candidate
      // is timed by its warm-up runs alone, and one that hangs is killed
      // after seconds, not minutes.
      double cutoffMs = bestMs > 0 ? 10 * bestMs : 0;
      double timeoutSeconds = bestMs > 0 ? std::clamp(10 + 0.02 * cutoffMs, 10.0, 60.0) : 60;
      Evaluation e = bench.evaluate(plan, fault, timeoutSeconds, cutoffMs);
      if (e.status == Evaluation::Status::ok) {
        result.timed.push_back({configs[i], e.ms, 0});
        plans[points[i]] = std::move(plan);
        bestMs = bestMs > 0 ? std::min(bestMs, e.ms) : e.ms;
      }
      out.push_back(std::move(e));
    }
    return out;
  };

  SearchOptions search;
  auto addWarmStart = [&](Point p) {
    if (p != space.defaults() &&
        std::find(search.warmStarts.begin(), search.warmStarts.end(), p) ==
            search.warmStarts.end())
      search.warmStarts.push_back(std::move(p));
  };
  // Winners for nearby shapes from the cache start the search beside the
  // default.
  try {
    for (const std::string &c :
         nearbyTunedConfigs(request.kernel, request.args,
                            cache::compiler_target(options.device).arch, 3, {},
                            reference.dynamicShapes)) {
      json config = json::parse(c, nullptr, false);
      if (config.is_discarded())
        continue;
      addWarmStart(space.nearest(config));
    }
  } catch (const std::exception &e) {
    log(fmt::format("kite autotune: {}: the cache's nearby winners are not usable ({})", name,
                    firstLine(e.what())));
  }
  // Then the compiler's starts: configs far from the default that win at
  // some shapes (three programs an SM of smaller tiles, say).
  for (Point &p : space.starts())
    addWarmStart(std::move(p));
  result.warmStarts = (int)search.warmStarts.size();
  if (!search.warmStarts.empty())
    log(fmt::format("kite autotune: {}: starting beside {} configs (tuned for nearby shapes, or "
                    "the compiler's starts)",
                    name, search.warmStarts.size()));
  search.effort = options.effort;
  search.budgetSeconds = budget;
  search.seed = std::hash<std::string>{}(name);
  search.progress = [&](const SearchStats &s) {
    log(fmt::format("kite autotune: {}: {} configs tried ({} rejected, {} failed, {} wrong), "
                    "best {:.4f} ms, {:.1f} s",
                    name, s.tried, s.rejected, s.failed, s.wrong, s.bestMs, since(start)));
  };
  search.onFailure = [&](const Point &p, const Evaluation &e) {
    std::string line = space.configText(p) + ": " + firstLine(e.message);
    result.failures.push_back(line);
    log(fmt::format("kite autotune: {}: {} config {}", name,
                    e.status == Evaluation::Status::wrong ? "wrong output from" : "failed",
                    line));
  };
  SearchResult found = kite::autotune::search(space, evaluate, search);
  if (found.best.empty())
    throw Error(fmt::format("kite autotune: {}: no config ran ({} tried, {} rejected, {} "
                            "failed, {} wrong)",
                            name, found.stats.tried, found.stats.rejected, found.stats.failed,
                            found.stats.wrong));

  // Re-time the finalists, interleaved: each round times every finalist
  // once, so drift in clocks or in the memory system hits them all alike,
  // and a finalist's time is its median over the rounds. The search timed
  // each candidate once, and the fastest of many single timings is partly
  // the luckiest.
  std::vector<std::vector<double>> rounds(std::min<size_t>(found.best.size(), kFinalists));
  for (int round = 0; round < kFinalRounds; ++round)
    for (size_t i = 0; i < rounds.size(); ++i)
      if (std::optional<double> ms = bench.time(plans.at(found.best[i].first), kRunsPerRound))
        rounds[i].push_back(*ms);
  for (size_t i = 0; i < rounds.size(); ++i) {
    std::string config = space.configText(found.best[i].first);
    for (TuneResult::Timed &t : result.timed)
      if (t.config == config)
        t.finalMs = medianOf(rounds[i]);
  }
  Point winner = found.best[0].first;
  double winnerMs = found.best[0].second;
  if (std::optional<std::pair<size_t, double>> f = fastestByMedian(rounds)) {
    winner = found.best[f->first].first;
    winnerMs = f->second;
  }
  Point def = space.defaults();
  if (plans.count(def))
    result.defaultMs = bench.time(plans.at(def), 50).value_or(0);

  result.config = space.configText(winner);
  result.ms = winnerMs;
  result.plan = plans.at(winner);
  result.stats = found.stats;
  result.seconds = since(start);
  result.workerStarts = bench.starts();

  if (options.store) {
    cache::Entry entry;
    entry.kernel = name;
    entry.irHash = std::string(request.kernel.irHash);
    entry.target = cache::compiler_target(options.device);
    entry.source = cache::Source::tuned;
    entry.pinnedConfig = request.pinned;
    entry.plan = result.plan;
    entry.config = result.config;
    entry.timeMs = result.ms;
    entry.configsSearched = (uint32_t)found.stats.tried;
    entry.tuningSeconds = result.seconds;
    cache::store(entry);
  }
  return result;
}
