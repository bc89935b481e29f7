//===- InspectReport.h - every stage of one kernel's compilation -*- C++ -*-===//
//
// What `kite inspect` learns about one kernel for one set of arguments and
// one config: the source, each IR stage, the CUDA, PTX and SASS, the
// resources, the config and its space, and the roofline figures. Each
// `--emit=` prints one field; `--html` renders them all on one page
// (Html.cpp). Plain strings and numbers: no MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_TOOLS_KITE_INSPECTREPORT_H
#define KITE_TOOLS_KITE_INSPECTREPORT_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kite::cli {

struct InspectReport {
  std::string kernel; // the kernel's name
  std::string file;   // the .kite.cpp path as given
  std::string args;   // the --arg list, space-separated
  std::string arch;   // e.g. sm_90a

  std::string source; // the .kite.cpp file's text

  std::string config;       // the resolved config (JSON)
  std::string configSource; // where it came from (default, pinned, tuned: ...)
  std::string configSpace;  // the config space (JSON: {"default":..., "parameters":[...]})

  /// IR stages in pipeline order: the captured IR, then the IR after each
  /// pass (name: the pass's argument, e.g. "kite-specialize").
  struct Stage {
    std::string name;
    std::string text;
  };
  std::vector<Stage> stages;

  /// The CUDA C++ with `#line N "FILE"` directives: the lines after a
  /// directive came from line N of the source, until the next directive.
  std::string cuda;
  std::string launch; // "8192 programs of 256 threads, 1024 bytes of dynamic shared memory"
  /// The grid and block of the plan `kite bench` ran (a persistent plan's
  /// grid[0] counts program ids; the launch sizes its grid to the device).
  std::array<uint32_t, 3> benchGrid = {0, 0, 0}, benchBlock = {0, 0, 0};
  bool benchPersistent = false;

  /// PTX (NVRTC with -lineinfo: `.file` and `.loc` name source lines), or
  /// empty with a note saying why.
  std::string ptx, ptxNote;
  /// SASS (nvdisasm or cuobjdump), or empty with a note saying why.
  std::string sass, sassNote;

  /// Resource rows (name, value): registers, spills, shared memory,
  /// occupancy...; a note when they could not be had.
  std::vector<std::pair<std::string, std::string>> resources;
  std::string resourcesNote;

  struct Roofline {
    double bytes = 0; // the least traffic: every input read once, every output written once
    double flops = 0; // floating-point operations, from the IR
    /// Device ceilings: measured copy bandwidth (GB/s) and peak TFLOP/s of
    /// the kernel's math (0: unknown).
    double peakGBs = 0, peakTFlops = 0;
    std::optional<double> measuredMs; // with a GPU
    std::string timeline;             // kite bench --timeline: the traced plan's summary
    /// kite bench --checksum: per result, FNV-1a (64 bits) of its bytes.
    std::vector<std::string> checksums;
    std::string bound; // "memory" or "compute" (from the ceilings), or ""
    std::string note;  // what is missing and why
  } roofline;
};

} // namespace kite::cli

#endif // KITE_TOOLS_KITE_INSPECTREPORT_H
