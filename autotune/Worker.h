//===- Worker.h - benchmarking in a worker process --------------*- C++ -*-===//
//
// This file declares WorkerBench: a PlanBench in a child process, so that a
// candidate that faults (an illegal address poisons the CUDA context for
// good) or hangs costs a restarted worker, not the tuning or the
// application. The parent never touches the GPU for benchmarking.
//
// The worker is the same executable started with `--kite-autotune-worker`
// (the parent finds itself through /proc/self/exe); executables that tune
// call `maybeRunWorker(argc, argv)` first thing in main. Messages over the
// child's stdin and stdout are frames: u32 kind, u32 JSON length, u64 blob
// length, the JSON text, the blob (a serialized KernelPlan).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_AUTOTUNE_WORKER_H
#define KITE_AUTOTUNE_WORKER_H

#include "autotune/Bench.h"

#include <optional>
#include <string>

namespace kite::autotune {

class WorkerBench {
public:
  /// `executable`: the program to start as the worker (empty: this one).
  WorkerBench(BenchSettings settings, int device = 0, std::string executable = {});
  ~WorkerBench();
  WorkerBench(const WorkerBench &) = delete;
  WorkerBench &operator=(const WorkerBench &) = delete;

  /// Starts the worker (if needed) and gives it the reference plan and the
  /// arguments to run with (benchArgs: the plan's specs with the scalars'
  /// values); the worker makes the inputs from them. Throws kite::Error if
  /// the reference itself fails.
  void setReference(const KernelPlan &plan, std::vector<ArgSpec> args);
  /// As PlanBench::evaluate. A worker that dies or exceeds `timeoutSeconds`
  /// gives a failed evaluation saying so, and is restarted for the next.
  Evaluation evaluate(const KernelPlan &plan, bool injectFault = false,
                      double timeoutSeconds = 60, double cutoffMs = 0);
  /// As PlanBench::time; nullopt if the worker died.
  std::optional<double> time(const KernelPlan &plan, int runs);
  /// Workers started so far (1 if none died).
  int starts() const { return starts_; }

private:
  struct Process;
  BenchSettings settings_;
  int device_;
  std::string executable_;
  std::unique_ptr<Process> process_;
  std::optional<KernelPlan> reference_;
  std::vector<ArgSpec> args_; // what the reference and candidates run with
  int starts_ = 0;

  void start();
  void stop();
};

/// If argv asks for a worker (`--kite-autotune-worker`), runs one on stdin
/// and stdout until its parent closes them, and returns its exit code.
std::optional<int> maybeRunWorker(int argc, char **argv);

} // namespace kite::autotune

#endif // KITE_AUTOTUNE_WORKER_H
