//===- PlanLog.cpp - Why a launch got a new plan --------------------------===//
//
// This file implements the reason, count, observer and KITE_LOG lines of
// the plans kite::launch gets for new specializations (runtime/PlanLog.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/PlanLog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

using namespace kite;

namespace {

/// A spec's sizes as its text form has them: "[8192,8192]", "[?16,4096]".
std::string shapeText(const ArgSpec &a) {
  std::string s = a.str();
  size_t open = s.find('['), close = s.find(']');
  return open == std::string::npos || close == std::string::npos
             ? "[]"
             : s.substr(open, close - open + 1);
}

/// The fields of one argument that a held plan's spec differs in, as
/// clauses ("x: dtype f16 (nearest held plan: bf16)").
void describeDifferences(const ArgSpec &now, const ArgSpec &held,
                         std::vector<std::string> &clauses) {
  const std::string &name = now.name;
  if (now.kind != held.kind) {
    clauses.push_back(fmt::format("{}: a {} (nearest held plan: a {})", name,
                                  now.is_tensor() ? "tensor" : "scalar",
                                  held.is_tensor() ? "tensor" : "scalar"));
    return;
  }
  if (now.dtype != held.dtype)
    clauses.push_back(fmt::format("{}: dtype {} (nearest held plan: {})", name,
                                  dtype_name(now.dtype), dtype_name(held.dtype)));
  if (!now.is_tensor()) {
    if (held.value && now.value != held.value)
      clauses.push_back(fmt::format("{}: value {} (nearest held plan: {})", name,
                                    now.value ? fmt::format("{}", *now.value) : "?",
                                    *held.value));
    return;
  }
  // A held dynamic-shapes plan answers any size of its class.
  bool sizesFit = now.sizes.size() == held.sizes.size();
  for (size_t d = 0; sizesFit && d < now.sizes.size(); ++d)
    sizesFit = held.size_in_class(d, now.sizes[d]);
  if (!sizesFit)
    clauses.push_back(fmt::format("{}: sizes [{}] (nearest held plan: {})", name,
                                  fmt::join(now.sizes, ","), shapeText(held)));
  else if (held.divisors.empty() && now.effective_strides() != held.effective_strides())
    clauses.push_back(fmt::format("{}: strides [{}] (nearest held plan: [{}])", name,
                                  fmt::join(now.effective_strides(), ","),
                                  fmt::join(held.effective_strides(), ",")));
  if (std::max<int64_t>(now.alignment, 1) != std::max<int64_t>(held.alignment, 1))
    clauses.push_back(fmt::format("{}: {}-byte aligned (nearest held plan: {})", name,
                                  std::max<int64_t>(now.alignment, 1),
                                  std::max<int64_t>(held.alignment, 1)));
}

struct Observer {
  std::mutex mutex;
  PlanObserver observer;
};

Observer &observerSlot() {
  static Observer o;
  return o;
}

std::atomic<uint64_t> gCompiles{0};

/// KITE_LOG, read once: which events go to stderr.
struct LogFlags {
  bool compiles = false, plans = false;
};

const LogFlags &logFlags() {
  static const LogFlags flags = [] {
    LogFlags f;
    const char *env = std::getenv("KITE_LOG");
    std::string_view list = env ? env : "";
    while (!list.empty()) {
      size_t comma = list.find(',');
      std::string_view item = list.substr(0, comma);
      if (item == "compile")
        f.compiles = true;
      else if (item == "plans")
        f.compiles = f.plans = true;
      else if (!item.empty())
        std::fprintf(stderr,
                     "kite: KITE_LOG: unknown item '%.*s' (known: compile, plans); ignored\n",
                     int(item.size()), item.data());
      if (comma == std::string_view::npos)
        break;
      list.remove_prefix(comma + 1);
    }
    return f;
  }();
  return flags;
}

std::string_view sourceName(PlanEvent::Source s) {
  switch (s) {
  case PlanEvent::Source::bundle: return "a loaded bundle";
  case PlanEvent::Source::cache_directory: return "the cache directory";
  case PlanEvent::Source::autotuner: return "the autotuner";
  case PlanEvent::Source::compiler: return "the compiler";
  }
  return "?";
}

} // namespace

std::string kite::runtime::specializationChange(
    std::string_view kernel, std::span<const ArgSpec> specs,
    std::span<const std::vector<ArgSpec> *const> held) {
  if (held.empty())
    return fmt::format("first launch of {} in this process", kernel);
  std::vector<std::string> best;
  bool found = false;
  for (const std::vector<ArgSpec> *h : held) {
    std::vector<std::string> clauses;
    if (h->size() != specs.size()) {
      clauses.push_back(fmt::format("{} arguments (held plan: {})", specs.size(), h->size()));
    } else {
      for (size_t i = 0; i < specs.size(); ++i)
        describeDifferences(specs[i], (*h)[i], clauses);
    }
    if (!found || clauses.size() < best.size()) {
      best = std::move(clauses);
      found = true;
    }
  }
  if (best.empty()) // the same specs under another config or tuning mode
    best.push_back("the same arguments with another config or tuning mode");
  return fmt::format("{}; {} plan{} held", fmt::join(best, "; "), held.size(),
                     held.size() == 1 ? "" : "s");
}

std::string kite::runtime::formatPlanEvent(const PlanEvent &e) {
  std::vector<std::string> args;
  for (const ArgSpec &a : e.args)
    args.push_back(a.str());
  return fmt::format("kite: {} {}({}) in {:.1f} ms from {}: {}",
                     e.compiled() ? "compiled" : "loaded", e.kernel, fmt::join(args, ", "),
                     e.milliseconds, sourceName(e.source), e.reason);
}

void kite::runtime::notePlan(const PlanEvent &event) {
  if (event.compiled())
    gCompiles.fetch_add(1, std::memory_order_relaxed);
  const LogFlags &flags = logFlags();
  if (flags.plans || (flags.compiles && event.compiled()))
    std::fprintf(stderr, "%s\n", formatPlanEvent(event).c_str());
  PlanObserver observer;
  {
    Observer &o = observerSlot();
    std::lock_guard<std::mutex> lock(o.mutex);
    observer = o.observer;
  }
  if (observer)
    observer(event);
}

void kite::set_plan_observer(PlanObserver observer) {
  Observer &o = observerSlot();
  std::lock_guard<std::mutex> lock(o.mutex);
  o.observer = std::move(observer);
}

uint64_t kite::compile_count() { return gCompiles.load(std::memory_order_relaxed); }
