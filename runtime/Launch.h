//===- Launch.h - The loaded-module cache -----------------------*- C++ -*-===//
//
// This file declares the control of the loaded-module cache behind
// kite::run_plan, for the tools that load many plans (the autotuner tries
// hundreds of configs and should not keep every module loaded).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_LAUNCH_H
#define KITE_RUNTIME_LAUNCH_H

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

} // namespace kite::runtime

#endif // KITE_RUNTIME_LAUNCH_H
