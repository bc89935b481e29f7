//===- Bench.h - timing and checking candidate plans ------------*- C++ -*-===//
//
// This file declares PlanBench: on one GPU, it makes random inputs for a
// kernel's argument specs (on the device: a 1 GB tensor takes milliseconds),
// runs a reference plan once and keeps its outputs, then for each
// candidate plan launches it once, compares its outputs with the
// reference's on the device, and times it (CUDA events, the L2 flushed
// before every run, median).
//
// A candidate that faults leaves the CUDA context unusable; PlanBench
// reports it (Evaluation::Status::failed, "CUDA_ERROR_ILLEGAL_ADDRESS ...")
// and `broken()` turns true: the caller must start over in a fresh process
// (autotune/Worker.h does).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_AUTOTUNE_BENCH_H
#define KITE_AUTOTUNE_BENCH_H

#include "autotune/Search.h"

#include <kite/runtime.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kite::autotune {

struct BenchSettings {
  /// Timed runs: at least minRuns, more until about targetMs of kernel time,
  /// at most maxRuns.
  int warmup = 2;
  int minRuns = 5;
  int maxRuns = 200;
  double targetMs = 30;
  bool flushL2 = true;
  uint64_t seed = 1;
  /// Integer inputs are uniform in [lo, hi) (default [0, 1): all zeros, a
  /// safe index for any table); floating inputs are standard normal.
  std::map<std::string, std::pair<int64_t, int64_t>> intRanges;
};

/// The comparison of one output with the reference's.
struct Mismatch {
  uint64_t count = 0;  // elements beyond tolerance
  double maxError = 0; // the largest |a - b|
};

/// What a benchmark runs `plan` with: its argument specs (what it was
/// compiled for), each run-time scalar given the value the user asked for in
/// `given` (the same arguments, in order; a plan's specs keep values only of
/// the scalars it is specialized on). A scalar without a value runs as 0
/// (integers, bools) or 1e-5 (floats). Throws kite::Error if `given` does
/// not match the plan's arguments.
std::vector<ArgSpec> benchArgs(const KernelPlan &plan, const std::vector<ArgSpec> &given);

class PlanBench {
public:
  /// `specs`: the arguments to run with (benchArgs).
  PlanBench(std::vector<ArgSpec> specs, BenchSettings settings, int device = 0);
  ~PlanBench();
  PlanBench(const PlanBench &) = delete;
  PlanBench &operator=(const PlanBench &) = delete;

  /// Runs `plan` once and keeps its outputs as the reference. Throws
  /// kite::Error if it fails.
  void setReference(const KernelPlan &plan);

  /// Runs, checks and times a candidate. `injectFault` (a test hook) makes
  /// the launch write through a bad pointer. A candidate whose warm-up runs
  /// take longer than `cutoffMs` each (0: no cutoff) gets that time without
  /// the timed runs: it cannot win, and timing it would spend the budget.
  Evaluation evaluate(const KernelPlan &plan, bool injectFault = false, double cutoffMs = 0);
  /// The reference plan's results (after setReference), on the device.
  const std::vector<Tensor> &referenceResults() const;
  /// The arguments the plans run with, and the tensors made for them.
  const std::vector<ArgSpec> &specs() const;
  const std::vector<Tensor> &inputs() const;
  /// Times a plan again with `runs` runs (no check); the median in ms.
  double time(const KernelPlan &plan, int runs);
  /// Launches a plan once, with the L2 flushed before it as for a timed
  /// run, and waits for it (a traced plan's timeline: one launch's
  /// records); returns its time in ms.
  double runOnce(const KernelPlan &plan);

  /// True after a fault: this process can launch nothing more.
  bool broken() const { return broken_; }

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool broken_ = false;
};

/// Waits for the work queued on the default stream of the current context;
/// throws kite::Error, instead of waiting forever, where it has not finished
/// within a minute (a kernel that deadlocks).
void synchronizeLaunches();

/// Times `launch` with CUDA events on the default stream of the current
/// context: `warmup` launches, then `runs` launches, each after `flush` (if
/// given) is overwritten and the L2's persisting lines are reset, outside the
/// timed interval, emptying the L2.
/// Returns the median in ms. A launch that runs for a minute is a hang: a
/// kite::Error, not a wait without end.
double timeLaunches(const std::function<void()> &launch, const Tensor *flush, int warmup,
                    int runs);

/// Bytes the tensor arguments of a launch (`args`, concrete specs) and the
/// plan's outputs hold: what a memory-bound kernel moves at least once (for
/// GB/s).
uint64_t bytesMoved(const KernelPlan &plan, std::span<const ArgSpec> args);

/// The cubin of PlanBench's fill and compare kernels for `arch` (NVRTC, no
/// GPU needed); throws kite::Error naming the NVRTC error.
std::vector<uint8_t> compileBenchHelpers(std::string_view arch);

/// The device-to-device copy bandwidth of GPU `device` in GB/s (a 1 GiB
/// cuMemcpyDtoD, median of 10), measured once per process.
double copyBandwidthGBs(int device = 0);

} // namespace kite::autotune

#endif // KITE_AUTOTUNE_BENCH_H
