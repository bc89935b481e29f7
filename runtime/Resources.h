//===- Resources.h - what a compiled kernel uses of an SM -------*- C++ -*-===//
//
// This file declares the resource report of a compiled kernel: registers,
// spills, stack, static shared memory and barriers, read from ptxas's
// verbose report (NVRTC with --ptxas-options=-v puts it in the program
// log, so no GPU is needed), and the theoretical occupancy that follows from
// them and the launch, from the architecture's published per-SM limits.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_RESOURCES_H
#define KITE_RUNTIME_RESOURCES_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kite::runtime {

struct KernelResources {
  int registers = 0;          // per thread
  int64_t stackBytes = 0;     // per thread
  int64_t spillStores = 0;    // bytes
  int64_t spillLoads = 0;     // bytes
  int64_t staticShared = 0;   // bytes per block
  int barriers = 0;
};

/// Reads `entry`'s figures from a ptxas -v report; nullopt if the report
/// does not mention it.
std::optional<KernelResources> parsePtxasReport(std::string_view log, std::string_view entry);

/// Per-SM limits of a compute capability (sm_80, sm_86, sm_89, sm_90;
/// others get sm_90's, and `known` is false).
struct SmLimits {
  int maxWarps = 64;
  int maxBlocks = 32;
  int registers = 65536;
  int registerUnit = 256;       // allocated per warp in units of this
  int64_t sharedBytes = 233472; // usable per SM
  int64_t sharedReserved = 1024; // per block, by the system
  bool known = true;
};
SmLimits smLimits(std::string_view arch);

struct Occupancy {
  int blocksPerSM = 0;
  int warpsPerSM = 0;
  int maxWarpsPerSM = 0;
  std::string limiter; // "registers", "shared memory", "warps", "blocks"
  double fraction() const { return maxWarpsPerSM ? double(warpsPerSM) / maxWarpsPerSM : 0; }
};
Occupancy theoreticalOccupancy(const KernelResources &r, int threadsPerBlock,
                               int64_t dynamicShared, const SmLimits &limits);

/// What a kernel's machine code holds of the instructions that decide its
/// speed, counted in its disassembly (nvdisasm -c or cuobjdump -sass):
/// static counts, each instruction once however often it runs.
struct SassSummary {
  int64_t instructions = 0;       // all but NOPs
  int64_t warpgroupMma = 0;       // HGMMA, QGMMA, IGMMA, BGMMA (Hopper's wgmma)
  int64_t registerA = 0;          // of those, with the A operand in registers
  int64_t warpMma = 0;            // HMMA, IMMA, DMMA (mma.sync)
  int64_t tmaCopies = 0;          // UTMALDG, UTMASTG, UTMAREDG, UBLKCP
  int64_t asyncCopies = 0;        // LDGSTS (cp.async)
  int64_t localAccesses = 0;      // LDL, STL (spills and local arrays)
  int64_t gpuFences = 0;          // MEMBAR at GPU or system scope
  std::vector<int> setmaxnreg;    // USETMAXREG's register counts, in code order
};
SassSummary summarizeSass(std::string_view sass);
/// One line, e.g. "4959 instructions: 32 warpgroup MMAs (16 with A from
/// registers), 128 TMA copies, setmaxnreg 40 and 232, no local memory, no
/// GPU-scope fences".
std::string describe(const SassSummary &s);

} // namespace kite::runtime

#endif // KITE_RUNTIME_RESOURCES_H
