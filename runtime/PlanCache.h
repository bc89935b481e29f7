//===- PlanCache.h - Where kite::launch gets a new plan from ----*- C++ -*-===//
//
// This file declares the lookup chain behind kite::launch for a
// specialization it has no plan for yet: the loaded bundles, then the cache
// directory, then the autotuner (Options::Tuning::tune) or the compiler,
// whose plan is stored in the cache directory. kite::detail::launch keeps
// the plans this returns in memory, so this runs once per specialization.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_PLANCACHE_H
#define KITE_RUNTIME_PLANCACHE_H

#include <kite/cache.hpp>
#include <kite/runtime.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace kite::runtime {

/// Where a resolved plan came from.
enum class PlanOrigin : uint8_t { bundle, directory, tuned, compiled };
/// "bundle", "cache directory", "autotuner", "compiler".
std::string_view originName(PlanOrigin origin);

struct ResolvedPlan {
  KernelPlan plan;
  PlanOrigin origin = PlanOrigin::compiled;
};

/// A plan for `kernel` and the launch's argument specs (scalars with their
/// values) on `target`, by Options::tuning:
///   cached  bundles, then the cache directory (tuned over default entries,
///           or pinned entries of exactly options.config), else compile and
///           store a default (or pinned) entry;
///   tune    as cached, but only a tuned entry answers, and a miss calls the
///           autotuner and stores its winner (without an autotuner: a
///           one-time warning, then as cached); with options.config, as cached;
///   never   compile; no bundle, no cache directory, nothing stored.
/// A target whose nvrtcVersion is 0 accepts entries of any NVRTC version.
/// Cache problems (corrupt files, failed writes) are reported, never thrown;
/// compile errors are thrown.
ResolvedPlan resolvePlan(const KernelSource &kernel, const std::vector<ArgSpec> &args,
                         const Options &options, const cache::Target &target);

} // namespace kite::runtime

#endif // KITE_RUNTIME_PLANCACHE_H
