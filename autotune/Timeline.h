//===- Timeline.h - where a traced kernel's time goes -----------*- C++ -*-===//
//
// This file declares the reading of a traced kernel's timeline (`kite bench
// --timeline`; EmitOptions::trace). A traced kernel records, per warpgroup,
// the SM's clock at its entry, at each program's start and end, and around
// each loop directly in a program's body (kite_device::trace_event). The
// summary gives each phase's cycles (median, 10th and 90th percentile over
// programs), the gap between one program's end and the next one's start on
// the same SM, and how long each SM was busy: what a program's fixed cost
// is made of, which a time per launch cannot say.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_AUTOTUNE_TIMELINE_H
#define KITE_AUTOTUNE_TIMELINE_H

#include <kite/runtime.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kite::autotune {

/// One record of kite_trace: the SM's clock and what happened where.
struct TraceRecord {
  uint64_t clock = 0;
  uint32_t sm = 0, event = 0, warpgroup = 0;
  bool producer = false; // the producer warpgroup's thread
  int64_t program = -1;  // -1: the kernel's entry
};

/// The events (kite_device::trace_event): the kernel's entry, a program's
/// start and end; between them 2 + 2i and 3 + 2i for the start and end of
/// the program body's i-th loop and 64 + i for the top of its iterations.
constexpr uint32_t kTraceEntry = 0, kTraceProgramStart = 1, kTraceProgramEnd = 31;

/// A traced plan's records on `device`: clearTrace before the launch (the
/// kernel's count of records back to 0), readTrace after it: the records
/// kept, and how many the kernel made (more where it ran out of room).
/// Throws kite::Error if the plan is not traced.
struct Trace {
  std::vector<TraceRecord> records;
  uint64_t recorded = 0;
};
void clearTrace(const KernelPlan &plan, int device = 0);
Trace readTrace(const KernelPlan &plan, int device = 0);

/// Decodes `count` records from kite_trace's words (two a record).
std::vector<TraceRecord> decodeTrace(std::span<const uint64_t> words, uint64_t count);

/// The summary table: per warpgroup, each phase between consecutive events
/// of a program ("loop 0 start -> first iteration", "loop 0 iteration",
/// "loop 0 last iteration -> end", ...), each loop whole and its iterations
/// recorded, the whole program, and between programs on one SM; `clockMHz`
/// > 0 adds a microsecond column at that clock.
std::string summarizeTrace(std::span<const TraceRecord> records, double clockMHz = 0);

/// The SM clock a launch of `ms` ran at, estimated from its records: the
/// longest span of clocks on one SM over the launch's time (a little high:
/// the launch's time includes the programs' start and end). 0 if unknown.
double estimateClockMHz(std::span<const TraceRecord> records, double ms);

} // namespace kite::autotune

#endif // KITE_AUTOTUNE_TIMELINE_H
