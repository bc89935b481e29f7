//===- Launch.h - The loaded-module cache -----------------------*- C++ -*-===//
//
// This file declares the control of the loaded-module cache behind
// kite::run_plan, for the tools that load many plans (the autotuner tries
// hundreds of configs and should not keep every module loaded).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_LAUNCH_H
#define KITE_RUNTIME_LAUNCH_H

#include <kite/runtime.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kite::runtime {

/// The number of loaded plans, over all contexts.
size_t moduleCacheSize();
/// Unloads the plan with this key from every context; returns whether one
/// was loaded. Must not race with a launch of the same plan.
bool evictPlan(std::string_view key);
/// Unloads every plan. Must not race with launches.
void clearModuleCache();

/// A __device__ variable with C linkage in a plan's module on `device`
/// (loaded if it is not): its bytes, read after the context's work is done,
/// or set to zero. A traced plan's timeline (kite_trace_len, kite_trace)
/// is read this way. Throws kite::Error naming the variable if the module
/// has none of that name.
std::vector<uint8_t> readPlanGlobal(const KernelPlan &plan, std::string_view name,
                                    int device = 0);
void zeroPlanGlobal(const KernelPlan &plan, std::string_view name, int device = 0);

/// Outputs filled with 0xFF bytes (NaN for floats, -1 for integers) before
/// each launch, so a kernel that leaves an element unwritten fails its
/// checks. Off by default; on with KITE_POISON_OUTPUTS=1 or this call.
bool poisonOutputs();
void setPoisonOutputs(bool on);
void poison(const Tensor &t, Stream stream);

/// Poisons (or not) the outputs of this thread's launches while it lives,
/// whatever the process-wide setting; scopes nest. The tuner's checked runs
/// poison theirs: a candidate that leaves an element unwritten would
/// otherwise read back whatever the allocator's recycled block held (often
/// the previous candidate's correct result) and pass.
class PoisonOutputsScope {
public:
  explicit PoisonOutputsScope(bool on);
  ~PoisonOutputsScope();
  PoisonOutputsScope(const PoisonOutputsScope &) = delete;
  PoisonOutputsScope &operator=(const PoisonOutputsScope &) = delete;

private:
  int previous_;
};

} // namespace kite::runtime

#endif // KITE_RUNTIME_LAUNCH_H
