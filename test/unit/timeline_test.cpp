//===- timeline_test.cpp - a traced kernel's records, summarized ----------===//
//
// decodeTrace and summarizeTrace (autotune/Timeline.h) on records made
// here as a traced kernel writes them: the phases of each program, the gaps
// between programs on one SM, and records that do not make a program.
//
//===----------------------------------------------------------------------===//

#include "autotune/Timeline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace kite::autotune;

namespace {

/// Two words as kite_device::trace_event writes them.
void push(std::vector<uint64_t> &w, uint64_t clock, uint32_t sm, uint32_t event,
          uint32_t warpgroup, int64_t pid) {
  w.push_back(clock);
  w.push_back(uint64_t(uint32_t(pid)) | uint64_t(warpgroup) << 32 | uint64_t(event) << 40 |
              uint64_t(sm) << 48);
}

/// The line of a phase in a summary ("" if none).
std::string row(const std::string &summary, const std::string &phase) {
  size_t at = summary.find("  " + phase + " ");
  if (at == std::string::npos)
    return "";
  return summary.substr(at, summary.find('\n', at) - at);
}

} // namespace

TEST(Timeline, DecodesTheFieldsOfARecord) {
  std::vector<uint64_t> w;
  push(w, 1234, 131, 3, 0x82, 77);
  push(w, 99, 5, 0, 1, -1);
  std::vector<TraceRecord> r = decodeTrace(w, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].clock, 1234u);
  EXPECT_EQ(r[0].sm, 131u);
  EXPECT_EQ(r[0].event, 3u);
  EXPECT_EQ(r[0].warpgroup, 2u);
  EXPECT_TRUE(r[0].producer);
  EXPECT_EQ(r[0].program, 77);
  EXPECT_EQ(r[1].program, -1);
  EXPECT_FALSE(r[1].producer);
  // A count past the words keeps what is there.
  EXPECT_EQ(decodeTrace(w, 10).size(), 2u);
}

TEST(Timeline, SummarizesPhasesAndGapsPerWarpgroup) {
  // One SM runs programs 0 and 1 after each other (a block each: entries),
  // one loop each; warpgroup 0 computes, warpgroup 2 is the producer.
  std::vector<uint64_t> w;
  for (int p = 0; p < 2; ++p) {
    uint64_t base = 10000 * p;
    push(w, base + 0, 7, kTraceEntry, 0, -1);
    push(w, base + 100, 7, kTraceProgramStart, 0, p);
    push(w, base + 400, 7, 2, 0, p);         // loop 0 starts
    push(w, base + 8400, 7, 3, 0, p);        // and ends
    push(w, base + 9000, 7, kTraceProgramEnd, 0, p);
    push(w, base + 50, 7, kTraceProgramStart, 0x82, p);
    push(w, base + 60, 7, 2, 0x82, p);
    push(w, base + 5060, 7, 3, 0x82, p);
    push(w, base + 5070, 7, kTraceProgramEnd, 0x82, p);
  }
  std::vector<TraceRecord> r = decodeTrace(w, w.size() / 2);
  std::string s = summarizeTrace(r);
  EXPECT_NE(s.find("18 records, 2 programs complete (4 warpgroup timelines), 1 SMs"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("warpgroup 0"), std::string::npos) << s;
  EXPECT_NE(s.find("producer"), std::string::npos) << s;
  EXPECT_NE(row(s, "loop 0 (start -> end)").find("8000"), std::string::npos) << s;
  EXPECT_NE(row(s, "start -> loop 0 start").find("300"), std::string::npos) << s;
  EXPECT_NE(row(s, "loop 0 end -> end").find("600"), std::string::npos) << s;
  EXPECT_NE(row(s, "program (start -> end)").find("8900"), std::string::npos) << s;
  EXPECT_NE(row(s, "entry -> first start").find("100"), std::string::npos) << s;
  // Program 0's end (9000) to the next block's entry (10000).
  EXPECT_NE(row(s, "end -> next start (same SM)").find("1000"), std::string::npos) << s;
  EXPECT_EQ(s.find("overlap"), std::string::npos) << s;
  EXPECT_NE(s.find("SM busy (first to last record): median 19000"), std::string::npos) << s;
}

TEST(Timeline, SkipsProgramsWithMissingRecordsAndSaysWhenProgramsOverlap) {
  std::vector<uint64_t> w;
  // Program 0 lacks its end (dropped); programs 1 and 2 overlap on SM 3.
  push(w, 0, 3, kTraceProgramStart, 0, 0);
  push(w, 10, 3, 2, 0, 0);
  push(w, 100, 3, kTraceProgramStart, 0, 1);
  push(w, 150, 3, kTraceProgramStart, 0, 2);
  push(w, 300, 3, kTraceProgramEnd, 0, 1);
  push(w, 350, 3, kTraceProgramEnd, 0, 2);
  std::string s = summarizeTrace(decodeTrace(w, w.size() / 2));
  EXPECT_NE(s.find("2 programs complete"), std::string::npos) << s;
  EXPECT_NE(s.find("programs overlap on an SM"), std::string::npos) << s;
  EXPECT_NE(row(s, "program (start -> end)").find("200"), std::string::npos) << s;
}

TEST(Timeline, SplitsALoopIntoItsFirstSteadyAndLastIterations) {
  // Loop 0 starts at 100; iterations (its main loop's, after a peeled first
  // one) at 1100, 1600, 2100; it ends at 3100.
  std::vector<uint64_t> w;
  push(w, 0, 2, kTraceProgramStart, 1, 5);
  push(w, 100, 2, 2, 1, 5);
  push(w, 1100, 2, 64, 1, 5);
  push(w, 1600, 2, 64, 1, 5);
  push(w, 2100, 2, 64, 1, 5);
  push(w, 3100, 2, 3, 1, 5);
  push(w, 3200, 2, kTraceProgramEnd, 1, 5);
  std::string s = summarizeTrace(decodeTrace(w, w.size() / 2));
  EXPECT_NE(s.find("warpgroup 1"), std::string::npos) << s;
  EXPECT_NE(row(s, "loop 0 start -> first iteration").find("1000"), std::string::npos) << s;
  EXPECT_NE(row(s, "loop 0 iteration").find("500"), std::string::npos) << s;
  // Two steady iterations (1100 -> 1600 -> 2100): n is 2.
  EXPECT_TRUE(row(s, "loop 0 iteration").ends_with(" 2")) << s;
  EXPECT_NE(row(s, "loop 0 last iteration -> end").find("1000"), std::string::npos) << s;
  EXPECT_NE(row(s, "loop 0 (start -> end)").find("3000"), std::string::npos) << s;
  EXPECT_NE(row(s, "loop 0 iterations recorded").find(" 3 "), std::string::npos) << s;
  EXPECT_NE(row(s, "program (start -> end)").find("3200"), std::string::npos) << s;
}

TEST(Timeline, EstimatesTheClockFromTheLongestSmSpan) {
  // SM 0 spans 1,500,000 cycles, SM 1 less; over 1 ms: 1500 MHz.
  std::vector<uint64_t> w;
  push(w, 1000, 0, kTraceProgramStart, 0, 0);
  push(w, 1501000, 0, kTraceProgramEnd, 0, 0);
  push(w, 7, 1, kTraceProgramStart, 0, 1);
  push(w, 900007, 1, kTraceProgramEnd, 0, 1);
  std::vector<TraceRecord> r = decodeTrace(w, w.size() / 2);
  EXPECT_DOUBLE_EQ(estimateClockMHz(r, 1.0), 1500.0);
  EXPECT_EQ(estimateClockMHz(r, 0.0), 0.0);
  EXPECT_EQ(estimateClockMHz({}, 1.0), 0.0);
  // The summary's microsecond column at that clock: 1,500,000 cycles, 1000 us.
  std::string s = summarizeTrace(r, 1500.0);
  EXPECT_NE(s.find("us at 1500 MHz"), std::string::npos) << s;
}
