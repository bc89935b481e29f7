//===- PlanLog.h - Why a launch got a new plan ------------------*- C++ -*-===//
//
// This file declares what kite::launch reports when it has no plan for a
// launch's arguments: the reason (what differs from the plans held), the
// compile count, the observer (kite::set_plan_observer) and the KITE_LOG
// lines. Private to runtime/.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_PLANLOG_H
#define KITE_RUNTIME_PLANLOG_H

#include <kite/runtime.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kite::runtime {

/// What `specs` has that none of the `held` plans' specs has, against the
/// nearest of them (fewest differing fields): "first launch of softmax in
/// this process" when none is held, else one clause per differing field,
/// e.g. "x: sizes [4096,8192] (nearest held plan: [8192,8192]); 2 plans
/// held".
std::string specializationChange(std::string_view kernel, std::span<const ArgSpec> specs,
                                 std::span<const std::vector<ArgSpec> *const> held);

/// One stderr line for an event: "kite: compiled softmax(x=bf16[4096,8192]:align16)
/// in 412.3 ms by the compiler: x: sizes ...".
std::string formatPlanEvent(const PlanEvent &event);

/// Reports a new plan: counts it if compiled, calls the observer, and
/// prints it where KITE_LOG asks (`compile`: compiles; `plans`: every new
/// plan; a comma-separated list).
void notePlan(const PlanEvent &event);

} // namespace kite::runtime

#endif // KITE_RUNTIME_PLANLOG_H
