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

// Lines as nvdisasm -c prints them (sm_90a), with the labels, line-info
// comments and predicates that come between.
const char *kSass = R"(	.target	sm_90a
.text.kite_attention:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   USETMAXREG.DEALLOC.CTAPOOL 0x28 ;
	//## File "kite_gemm.cuh", line 982
        /*0020*/                   NOP ;
        /*0030*/               @P0 BRA `(.L_x_1) ;
.L_x_1:
        /*0040*/                   USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xe8 ;
        /*0050*/              @!P0 UTMALDG.3D [UR8], [UR4], desc[UR6] ;
        /*0060*/                   UTMALDG.2D [UR8], [UR4] ;
        /*0070*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR16], RZ, !UPT ;
        /*0080*/                   HGMMA.64x128x16.F32.BF16 R88, R152, gdesc[UR16].tnspB, R88, gsb0 ;
        /*0090*/                   QGMMA.64x256x32.F32.E4M3.E4M3 R24, gdesc[UR12], R24 ;
        /*00a0*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*00b0*/                   LDGSTS.E.BYPASS.128 [R3], desc[UR4][R6.64] ;
        /*00c0*/                   STL [R1], R2 ;
        /*00d0*/                   LDL R2, [R1] ;
        /*00e0*/                   MEMBAR.ALL.CTA ;
        /*00f0*/              @!P6 MEMBAR.ALL.GPU ;
        /*0100*/                   EXIT ;
)";

TEST(Resources, CountsTheMachineCodesInstructions) {
  SassSummary s = summarizeSass(kSass);
  EXPECT_EQ(s.instructions, 16); // the NOP not counted
  EXPECT_EQ(s.warpgroupMma, 3);
  EXPECT_EQ(s.registerA, 1);
  EXPECT_EQ(s.warpMma, 1);
  EXPECT_EQ(s.tmaCopies, 2);
  EXPECT_EQ(s.asyncCopies, 1);
  EXPECT_EQ(s.localAccesses, 2);
  EXPECT_EQ(s.gpuFences, 1);
  EXPECT_EQ(s.setmaxnreg, (std::vector<int>{40, 232}));
  EXPECT_EQ(describe(s), "16 instructions: 3 warpgroup MMAs (1 with A from registers), 1 warp "
                         "MMA, 2 TMA copies, 1 cp.async copy, setmaxnreg 40 and 232, 2 "
                         "local-memory accesses, 1 GPU-scope fence");
  SassSummary none = summarizeSass("not a disassembly\n");
  EXPECT_EQ(none.instructions, 0);
  EXPECT_EQ(describe(none), "0 instructions: no local memory, no GPU-scope fences");
}

TEST(Resources, OtherArchitectures) {
  EXPECT_EQ(smLimits("sm_80").sharedBytes, 167936);
  EXPECT_EQ(smLimits("sm_86").maxWarps, 48);
  EXPECT_FALSE(smLimits("sm_100a").known);
}

} // namespace
