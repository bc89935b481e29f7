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
#include <string_view>

namespace kite::runtime {

/// The number of loaded plans, over all contexts.
size_t moduleCacheSize();
/// Unloads the plan with this key from every context; returns whether one
/// was loaded. Must not race with a launch of the same plan.
bool evictPlan(std::string_view key);
/// Unloads every plan. Must not race with launches.
void clearModuleCache();

/// Outputs filled with 0xFF bytes (NaN for floats, -1 for integers) before
/// each launch, so a kernel that leaves an element unwritten fails its
/// checks. Off by default; on with KITE_POISON_OUTPUTS=1 or this call.
bool poisonOutputs();
void setPoisonOutputs(bool on);
void poison(const Tensor &t, Stream stream);

} // namespace kite::runtime

#endif // KITE_RUNTIME_LAUNCH_H
