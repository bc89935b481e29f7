//===- Tuner.h - autotuning a kernel for one specialization -----*- C++ -*-===//
//
// This file declares `tune`: the autotuner's entry point. Given a captured
// kernel, its argument specs, its config space (from the compiler, as JSON)
// and a compile function (config -> plan), it compiles batches of candidate
// configs in parallel (NVRTC in a thread pool), benchmarks them one at a
// time on the GPU in a worker process (autotune/Worker.h), checks each
// one's outputs against the default config's, searches (autotune/Search.h)
// under a wall-clock budget, re-times the best few, and stores the winner
// with its cubin in the cache (include/kite/cache.hpp).
//
// autotune/ has no LLVM or MLIR in it: the compiler reaches it only through
// the space's JSON and the compile function.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_AUTOTUNE_TUNER_H
#define KITE_AUTOTUNE_TUNER_H

#include "autotune/Bench.h"
#include "autotune/Search.h"

#include <kite/runtime.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kite::autotune {

struct TuneRequest {
  KernelSource kernel;
  std::vector<ArgSpec> args;
  /// The compiler's config space (lowering/ConfigSpace.h).
  std::string space;
  /// Compiles one config (JSON); throws kite::Error. A kite::ConfigRejected
  /// is a rejection (the config does not fit this kernel), anything else a
  /// failure.
  std::function<KernelPlan(const std::string &config)> compile;
  /// Keys the user fixed (a partial config, JSON); empty: none.
  std::string pinned;
};

struct TuneOptions {
  Effort effort = Effort::quick;
  /// Seconds; 0: the effort's default (quick 20, full 160, or 4 and 20
  /// times the default config's compile where that is longer).
  double budgetSeconds = 0;
  /// Compile threads; 0: one per hardware thread.
  int threads = 0;
  /// Benchmark in a worker process (a faulting candidate costs a restart);
  /// false: in this process (a fault ends the tuning).
  bool isolate = true;
  std::string workerExecutable; // empty: this executable
  BenchSettings bench;
  int device = 0;
  /// Store the winner in the cache directory.
  bool store = true;
  /// One line per batch (configs tried, failures, best so far) and one per
  /// failed candidate.
  std::function<void(const std::string &line)> log;
  /// Test hook: the evaluation with this index (0 = the first candidate
  /// after the reference) runs with a bad pointer and faults.
  std::optional<int> injectFaultAt;
};

struct TuneResult {
  std::string config; // the winner
  double ms = 0;      // its median time
  double defaultMs = 0;
  KernelPlan plan;
  SearchStats stats;
  double seconds = 0;          // the whole tuning, compiles included
  uint64_t bytes = 0;          // arguments + outputs
  std::vector<std::string> failures; // "config: why" for failed and wrong ones
  int workerStarts = 0;
  int warmStarts = 0; // configs the search began with beside the default (cached winners for
                      // nearby shapes, the compiler's starts)
  /// Every config that ran, in the order timed: the search's time and, for
  /// the finalists, the median of their re-timing rounds (else 0).
  struct Timed {
    std::string config;
    double ms = 0;
    double finalMs = 0;
  };
  std::vector<Timed> timed;
};

/// Configs of tuned entries in the cache directory `dir` (default: the
/// cache's) for the same kernel and IR on `arch`, whose arguments have the
/// same names, dtypes and ranks as `args` but other sizes: the `most`
/// nearest (by the sum of |log2| of the size ratios), nearest first
/// (cache::nearby_tuned_configs; plans of the given shape mode).
std::vector<std::string> nearbyTunedConfigs(const KernelSource &kernel,
                                            const std::vector<ArgSpec> &args,
                                            const std::string &arch, size_t most,
                                            const std::filesystem::path &dir = {},
                                            bool dynamicShapes = false);

/// Tunes; throws kite::Error when nothing runs (the default config fails).
TuneResult tune(const TuneRequest &request, const TuneOptions &options);

} // namespace kite::autotune

#endif // KITE_AUTOTUNE_TUNER_H
