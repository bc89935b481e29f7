//===- runtime_resources_test.cpp - ptxas reports and occupancy -----------===//
//
// The resource report of `kite inspect --emit=resources`: reading ptxas's
// verbose report, and the theoretical occupancy from per-SM limits, checked
// against hand-computed cases.
//
//===----------------------------------------------------------------------===//

#include "runtime/Resources.h"

#include <gtest/gtest.h>

using namespace kite::runtime;

namespace {

const char *kReport = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'kite_other' for 'sm_90a'
ptxas info    : Function properties for kite_other
ptxas         .     8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 16 registers
ptxas info    : Compiling entry function 'kite_softmax' for 'sm_90a'
ptxas info    : Function properties for kite_softmax
ptxas         .     24 bytes stack frame, 12 bytes spill stores, 20 bytes spill loads
ptxas info    : Used 48 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 3.682 ms
)";

TEST(Resources, ReadsTheEntrysOwnFigures) {
  std::optional<KernelResources> r = parsePtxasReport(kReport, "kite_softmax");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->registers, 48);
  EXPECT_EQ(r->stackBytes, 24);
  EXPECT_EQ(r->spillStores, 12);
  EXPECT_EQ(r->spillLoads, 20);
  EXPECT_EQ(r->staticShared, 1024);
  EXPECT_EQ(r->barriers, 1);
  std::optional<KernelResources> other = parsePtxasReport(kReport, "kite_other");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->registers, 16);
  EXPECT_EQ(other->stackBytes, 8);
  EXPECT_EQ(other->staticShared, 0);
  EXPECT_FALSE(parsePtxasReport(kReport, "kite_missing"));
  EXPECT_FALSE(parsePtxasReport("", "kite_softmax"));
}

TEST(Resources, OccupancyOnHopper) {
  SmLimits h = smLimits("sm_90a");
  EXPECT_TRUE(h.known);
  KernelResources r;
  // 48 registers x 256 threads: 12288 registers a block, 5 blocks, 40 warps.
  r.registers = 48;
  Occupancy o = theoreticalOccupancy(r, 256, 0, h);
  EXPECT_EQ(o.blocksPerSM, 5);
  EXPECT_EQ(o.warpsPerSM, 40);
  EXPECT_EQ(o.limiter, "registers");
  // 32 registers x 128 threads: 16 blocks by registers, 16 by warps.
  r.registers = 32;
  o = theoreticalOccupancy(r, 128, 0, h);
  EXPECT_EQ(o.warpsPerSM, 64);
  EXPECT_DOUBLE_EQ(o.fraction(), 1.0);
  // 100 KB of dynamic shared memory: 2 blocks (228 KB an SM, 1 KB reserved each).
  o = theoreticalOccupancy(r, 128, 100 * 1024, h);
  EXPECT_EQ(o.blocksPerSM, 2);
  EXPECT_EQ(o.limiter, "shared memory");
  // Tiny blocks: the 32-block limit.
  r.registers = 8;
  o = theoreticalOccupancy(r, 32, 0, h);
  EXPECT_EQ(o.blocksPerSM, 32);
  EXPECT_EQ(o.limiter, "blocks");
  // 232 registers round up per warp to 7424; 4 warps: 2 blocks.
  r.registers = 232;
  o = theoreticalOccupancy(r, 128, 49152, h);
  EXPECT_EQ(o.blocksPerSM, 2);
  EXPECT_EQ(o.warpsPerSM, 8);
}

TEST(Resources, OtherArchitectures) {
  EXPECT_EQ(smLimits("sm_80").sharedBytes, 167936);
  EXPECT_EQ(smLimits("sm_86").maxWarps, 48);
  EXPECT_FALSE(smLimits("sm_100a").known);
}

} // namespace
