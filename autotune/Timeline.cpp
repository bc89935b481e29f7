//===- Timeline.cpp - where a traced kernel's time goes -------------------===//
//
// This file implements the decoding and summary of a traced kernel's
// timeline (autotune/Timeline.h).
//
//===----------------------------------------------------------------------===//

#include "autotune/Timeline.h"

#include "runtime/Launch.h"

#include <kite/kite.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

using namespace kite::autotune;

void kite::autotune::clearTrace(const KernelPlan &plan, int device) {
  runtime::zeroPlanGlobal(plan, "kite_trace_len", device);
}

Trace kite::autotune::readTrace(const KernelPlan &plan, int device) {
  std::vector<uint8_t> len = runtime::readPlanGlobal(plan, "kite_trace_len", device);
  std::vector<uint8_t> buf = runtime::readPlanGlobal(plan, "kite_trace", device);
  uint32_t n = 0;
  if (len.size() != sizeof n)
    throw Error(fmt::format("the timeline of {}: kite_trace_len has {} bytes, not {}", plan.name,
                            len.size(), sizeof n));
  std::memcpy(&n, len.data(), sizeof n);
  std::vector<uint64_t> words(buf.size() / 8);
  std::memcpy(words.data(), buf.data(), words.size() * 8);
  return {decodeTrace(words, n), n};
}

std::vector<TraceRecord> kite::autotune::decodeTrace(std::span<const uint64_t> words,
                                                     uint64_t count) {
  std::vector<TraceRecord> out;
  count = std::min<uint64_t>(count, words.size() / 2);
  out.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t tag = words[2 * i + 1];
    TraceRecord r;
    r.clock = words[2 * i];
    uint32_t pid = uint32_t(tag);
    r.program = pid == 0xFFFFFFFFu ? -1 : int64_t(pid);
    r.warpgroup = uint32_t(tag >> 32) & 0x7F;
    r.producer = (tag >> 32) & 0x80;
    r.event = uint32_t(tag >> 40) & 0xFF;
    r.sm = uint32_t(tag >> 48) & 0xFFFF;
    out.push_back(r);
  }
  return out;
}

namespace {

/// Cycles of one phase over programs.
struct Phase {
  std::string name;
  std::vector<double> cycles;
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5));
  return v[i];
}

constexpr uint32_t kTraceIteration = 64;

bool isLoopStart(uint32_t e) { return e >= 2 && e < kTraceProgramEnd && e % 2 == 0; }
bool isLoopEnd(uint32_t e) { return e >= 3 && e < kTraceProgramEnd && e % 2 == 1; }
bool isIteration(uint32_t e) { return e >= kTraceIteration; }
/// The loop an event belongs to (its number in the program's body).
uint32_t loopOf(uint32_t e) { return isIteration(e) ? e - kTraceIteration : (e - 2) / 2; }

/// The phase between two consecutive events of one program; "" for a
/// loop's start and end with nothing between (its whole-loop phase counts
/// it).
std::string phaseName(uint32_t from, uint32_t to) {
  auto what = [](uint32_t e) -> std::string {
    if (e == kTraceProgramStart)
      return "start";
    if (e == kTraceProgramEnd)
      return "end";
    if (isIteration(e))
      return fmt::format("loop {} iteration", loopOf(e));
    return fmt::format("loop {} {}", loopOf(e), isLoopStart(e) ? "start" : "end");
  };
  if (isLoopStart(from) && to == from + 1)
    return "";
  if (isLoopStart(from) && isIteration(to) && loopOf(to) == loopOf(from))
    return fmt::format("loop {} start -> first iteration", loopOf(from));
  if (isIteration(from) && from == to)
    return fmt::format("loop {} iteration", loopOf(from));
  if (isIteration(from) && isLoopEnd(to) && loopOf(to) == loopOf(from))
    return fmt::format("loop {} last iteration -> end", loopOf(from));
  return what(from) + " -> " + what(to);
}

} // namespace

std::string kite::autotune::summarizeTrace(std::span<const TraceRecord> records,
                                           double clockMHz) {
  // Per (warpgroup, program): its events in clock order; per (sm,
  // warpgroup): its programs' starts and ends and its entries.
  std::set<uint32_t> producers;
  std::map<std::pair<uint32_t, int64_t>, std::vector<TraceRecord>> programs;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<TraceRecord>> lanes;
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> smSpan;
  for (const TraceRecord &r : records) {
    if (r.producer)
      producers.insert(r.warpgroup);
    if (r.program >= 0)
      programs[{r.warpgroup, r.program}].push_back(r);
    if (r.event == kTraceEntry || r.event == kTraceProgramStart || r.event == kTraceProgramEnd)
      lanes[{r.sm, r.warpgroup}].push_back(r);
    auto [it, fresh] = smSpan.try_emplace(r.sm, r.clock, r.clock);
    if (!fresh) {
      it->second.first = std::min(it->second.first, r.clock);
      it->second.second = std::max(it->second.second, r.clock);
    }
  }
  // Phases, in the order they first appear, per warpgroup.
  std::map<uint32_t, std::vector<Phase>> phases;
  auto add = [&](uint32_t wg, const std::string &name, double cycles) {
    std::vector<Phase> &list = phases[wg];
    auto it = std::find_if(list.begin(), list.end(), [&](const Phase &p) { return p.name == name; });
    if (it == list.end()) {
      list.push_back({name, {}});
      it = list.end() - 1;
    }
    it->cycles.push_back(cycles);
  };
  size_t complete = 0;             // warpgroups' timelines
  std::set<int64_t> completePrograms; // programs with at least one
  for (auto &[key, evs] : programs) {
    std::stable_sort(evs.begin(), evs.end(),
                     [](const TraceRecord &a, const TraceRecord &b) { return a.clock < b.clock; });
    bool sameSm = std::all_of(evs.begin(), evs.end(),
                              [&](const TraceRecord &r) { return r.sm == evs.front().sm; });
    if (!sameSm || evs.front().event != kTraceProgramStart ||
        evs.back().event != kTraceProgramEnd)
      continue; // dropped records, or not one program's
    ++complete;
    completePrograms.insert(key.second);
    for (size_t i = 0; i + 1 < evs.size(); ++i) {
      std::string name = phaseName(evs[i].event, evs[i + 1].event);
      if (!name.empty())
        add(key.first, name, double(evs[i + 1].clock - evs[i].clock));
    }
    // Each loop whole, and its iterations in this program.
    for (size_t i = 0; i < evs.size(); ++i) {
      if (!isLoopStart(evs[i].event))
        continue;
      int iterations = 0;
      for (size_t j = i + 1; j < evs.size(); ++j) {
        if (isIteration(evs[j].event) && loopOf(evs[j].event) == loopOf(evs[i].event))
          ++iterations;
        if (evs[j].event == evs[i].event + 1) {
          add(key.first, fmt::format("loop {} (start -> end)", loopOf(evs[i].event)),
              double(evs[j].clock - evs[i].clock));
          if (iterations > 0)
            add(key.first, fmt::format("loop {} iterations recorded", loopOf(evs[i].event)),
                double(iterations));
          break;
        }
      }
    }
    add(key.first, "program (start -> end)", double(evs.back().clock - evs.front().clock));
  }
  // Between programs on one SM: the kernel's entry to its first program,
  // and one program's end to the next event (the next program's start, or
  // a new block's entry). Only where programs do not overlap there.
  bool overlapping = false;
  for (auto &[key, evs] : lanes) {
    std::stable_sort(evs.begin(), evs.end(),
                     [](const TraceRecord &a, const TraceRecord &b) { return a.clock < b.clock; });
    int open = 0;
    for (size_t i = 0; i < evs.size(); ++i) {
      if (evs[i].event == kTraceProgramStart && ++open > 1)
        overlapping = true;
      if (evs[i].event == kTraceProgramEnd)
        --open;
      if (i + 1 == evs.size())
        continue;
      const TraceRecord &a = evs[i], &b = evs[i + 1];
      if (a.event == kTraceEntry && b.event == kTraceProgramStart)
        add(key.second, "entry -> first start", double(b.clock - a.clock));
      if (a.event == kTraceProgramEnd && b.event != kTraceProgramEnd)
        add(key.second, "end -> next start (same SM)", double(b.clock - a.clock));
    }
  }
  std::string out;
  out += fmt::format("{} records, {} programs complete ({} warpgroup timelines), {} SMs\n",
                     records.size(), completePrograms.size(), complete, smSpan.size());
  if (overlapping)
    out += "programs overlap on an SM (more than one resident): the gaps between programs "
           "mix them\n";
  std::string unit = clockMHz > 0 ? fmt::format("   (us at {:.0f} MHz)", clockMHz) : "";
  for (auto &[wg, list] : phases) {
    out += fmt::format("{:<12}", producers.count(wg) ? std::string("producer")
                                                     : fmt::format("warpgroup {}", wg));
    out += fmt::format("{:>33}{:>10}{:>10}{:>8}{}\n", "median cycles", "p10", "p90", "n", unit);
    for (const Phase &p : list) {
      double med = percentile(p.cycles, 0.5);
      out += fmt::format("  {:<32}{:>11.0f}{:>10.0f}{:>10.0f}{:>8}", p.name, med,
                         percentile(p.cycles, 0.1), percentile(p.cycles, 0.9), p.cycles.size());
      if (clockMHz > 0)
        out += fmt::format("{:>10.2f}", med / clockMHz);
      out += "\n";
    }
  }
  if (!smSpan.empty()) {
    std::vector<double> busy;
    for (auto &[sm, span] : smSpan)
      busy.push_back(double(span.second - span.first));
    out += fmt::format("SM busy (first to last record): median {:.0f} cycles, max {:.0f}",
                       percentile(busy, 0.5), percentile(busy, 1.0));
    if (clockMHz > 0)
      out += fmt::format(" ({:.2f} and {:.2f} us)", percentile(busy, 0.5) / clockMHz,
                         percentile(busy, 1.0) / clockMHz);
    out += "\n";
  }
  return out;
}

double kite::autotune::estimateClockMHz(std::span<const TraceRecord> records, double ms) {
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> span;
  for (const TraceRecord &r : records) {
    auto [it, fresh] = span.try_emplace(r.sm, r.clock, r.clock);
    if (!fresh) {
      it->second.first = std::min(it->second.first, r.clock);
      it->second.second = std::max(it->second.second, r.clock);
    }
  }
  uint64_t longest = 0;
  for (auto &[sm, s] : span)
    longest = std::max(longest, s.second - s.first);
  return ms > 0 && longest > 0 ? double(longest) / (ms * 1e3) : 0;
}
