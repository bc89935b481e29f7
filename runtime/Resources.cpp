//===- Resources.cpp - what a compiled kernel uses of an SM ---------------===//
//
// This file implements the ptxas report reader, the occupancy calculation
// and the SASS instruction counts (see Resources.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/Resources.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>

using namespace kite::runtime;

namespace {

/// The number before `unit` in `text` ("32 registers" -> 32), if any.
std::optional<int64_t> before(const std::string &text, const std::string &unit) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex("([0-9]+) " + unit)))
    return std::stoll(m[1].str());
  return std::nullopt;
}

} // namespace

std::optional<KernelResources> kite::runtime::parsePtxasReport(std::string_view log,
                                                                std::string_view entry) {
  // ptxas -v prints, per entry:
  //   ptxas info    : Function properties for kite_softmax
  //   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes smem
  std::string text(log);
  std::string header = "Function properties for " + std::string(entry);
  size_t at = text.find(header);
  if (at == std::string::npos)
    return std::nullopt;
  size_t end = text.find("Function properties for ", at + header.size());
  std::string block = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
  KernelResources r;
  std::optional<int64_t> regs = before(block, "registers");
  if (!regs)
    return std::nullopt;
  r.registers = (int)*regs;
  r.stackBytes = before(block, "bytes stack frame").value_or(0);
  r.spillStores = before(block, "bytes spill stores").value_or(0);
  r.spillLoads = before(block, "bytes spill loads").value_or(0);
  r.staticShared = before(block, "bytes smem").value_or(0);
  r.barriers = (int)before(block, "barriers").value_or(0);
  return r;
}

SmLimits kite::runtime::smLimits(std::string_view arch) {
  SmLimits l; // sm_90
  if (arch.starts_with("sm_80")) {
    l.sharedBytes = 167936;
  } else if (arch.starts_with("sm_86") || arch.starts_with("sm_89")) {
    l.maxWarps = 48;
    l.maxBlocks = arch.starts_with("sm_86") ? 16 : 24;
    l.sharedBytes = 101376;
  } else if (!arch.starts_with("sm_90")) {
    l.known = false;
  }
  return l;
}

Occupancy kite::runtime::theoreticalOccupancy(const KernelResources &r, int threadsPerBlock,
                                              int64_t dynamicShared, const SmLimits &limits) {
  Occupancy o;
  o.maxWarpsPerSM = limits.maxWarps;
  int warps = std::max(1, (threadsPerBlock + 31) / 32);
  struct Limit {
    int blocks;
    const char *name;
  };
  Limit byWarps{limits.maxWarps / warps, "warps"};
  Limit byBlocks{limits.maxBlocks, "blocks"};
  int regsPerWarp = (r.registers * 32 + limits.registerUnit - 1) / limits.registerUnit *
                    limits.registerUnit;
  Limit byRegs{regsPerWarp > 0 ? limits.registers / (regsPerWarp * warps) : limits.maxBlocks,
               "registers"};
  int64_t shared = r.staticShared + dynamicShared + limits.sharedReserved;
  Limit byShared{(int)std::min<int64_t>(limits.sharedBytes / shared, limits.maxBlocks),
                 "shared memory"};
  Limit least = byWarps;
  for (const Limit &l : {byBlocks, byRegs, byShared})
    if (l.blocks < least.blocks)
      least = l;
  o.blocksPerSM = std::max(0, least.blocks);
  o.warpsPerSM = o.blocksPerSM * warps;
  o.limiter = least.name;
  return o;
}

SassSummary kite::runtime::summarizeSass(std::string_view sass) {
  // An instruction line, in both disassemblers' formats:
  //   /*0c10*/                   WARPGROUP.ARRIVE ;
  //   /*11f0*/              @!P0 SYNCS.ARRIVE.TRANS64.RED.A1T0 RZ, [R7+URZ], RZ ;
  static const std::regex line(R"(^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[0-9T]+\s+)?([A-Z][A-Z0-9_]*)(\S*)\s*(.*)$)");
  static const std::regex registerA(R"(^R[0-9]+, R[0-9]+,)");
  static const std::regex hex(R"(0x([0-9a-f]+)\s*;)");
  SassSummary s;
  std::istringstream in{std::string(sass)};
  std::string text;
  std::smatch m;
  while (std::getline(in, text)) {
    if (!std::regex_match(text, m, line))
      continue;
    std::string op = m[1].str(), modifiers = m[2].str(), operands = m[3].str();
    if (op == "NOP")
      continue;
    ++s.instructions;
    if (op == "HGMMA" || op == "QGMMA" || op == "IGMMA" || op == "BGMMA") {
      ++s.warpgroupMma;
      s.registerA += std::regex_search(operands, registerA);
    } else if (op == "HMMA" || op == "IMMA" || op == "DMMA") {
      ++s.warpMma;
    } else if (op == "UTMALDG" || op == "UTMASTG" || op == "UTMAREDG" || op == "UBLKCP") {
      ++s.tmaCopies;
    } else if (op == "LDGSTS") {
      ++s.asyncCopies;
    } else if (op == "LDL" || op == "STL") {
      ++s.localAccesses;
    } else if (op == "MEMBAR") {
      s.gpuFences += modifiers.find(".GPU") != std::string::npos ||
                     modifiers.find(".SYS") != std::string::npos;
    } else if (op == "USETMAXREG") {
      std::smatch h;
      if (std::regex_search(operands, h, hex))
        s.setmaxnreg.push_back((int)std::stol(h[1].str(), nullptr, 16));
    }
  }
  return s;
}

std::string kite::runtime::describe(const SassSummary &s) {
  auto count = [](int64_t n, const char *one, const char *many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::vector<std::string> parts;
  if (s.warpgroupMma)
    parts.push_back(count(s.warpgroupMma, "warpgroup MMA", "warpgroup MMAs") + " (" +
                    std::to_string(s.registerA) + " with A from registers)");
  if (s.warpMma)
    parts.push_back(count(s.warpMma, "warp MMA", "warp MMAs"));
  if (s.tmaCopies)
    parts.push_back(count(s.tmaCopies, "TMA copy", "TMA copies"));
  if (s.asyncCopies)
    parts.push_back(count(s.asyncCopies, "cp.async copy", "cp.async copies"));
  if (!s.setmaxnreg.empty()) {
    std::string counts;
    for (size_t i = 0; i < s.setmaxnreg.size(); ++i)
      counts += (i == 0 ? "" : i + 1 == s.setmaxnreg.size() ? " and " : ", ") +
                std::to_string(s.setmaxnreg[i]);
    parts.push_back("setmaxnreg " + counts);
  }
  parts.push_back(s.localAccesses
                      ? count(s.localAccesses, "local-memory access", "local-memory accesses")
                      : "no local memory");
  parts.push_back(s.gpuFences ? count(s.gpuFences, "GPU-scope fence", "GPU-scope fences")
                              : "no GPU-scope fences");
  std::string out = count(s.instructions, "instruction", "instructions") + ":";
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i == 0 ? " " : ", ") + parts[i];
  return out;
}
