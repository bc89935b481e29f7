//===- Nvrtc.h - CUDA C++ to cubin or PTX with NVRTC ------------*- C++ -*-===//
//
// This file declares kite's NVRTC front: compile one CUDA C++ source (a
// generated kernel) to a cubin or to PTX for a target such as sm_90a. NVRTC is
// dlopen'd on first use (libnvrtc.so.13, else libnvrtc.so), so an application
// that ships its cubins in a kite cache never loads it; and it needs no GPU.
//
// The device tile library (runtime/device/*.cuh) is embedded in kite_runtime
// and passed to NVRTC as in-memory headers. CUDA's own headers
// (cuda_fp16.h, cuda_bf16.h, <cuda/std/...>) come from an include directory
// found at run time (cudaIncludeDirs()).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_NVRTC_H
#define KITE_RUNTIME_NVRTC_H

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kite::runtime {

/// How to compile; the defaults are what kite's generated kernels want.
struct NvrtcOptions {
  std::string standard = "c++17"; // -std=
  bool defaultDevice = true;      // -default-device: unannotated functions are __device__
  bool lineinfo = true;           // -lineinfo: source lines for Nsight and sanitizers
  /// More options, passed as they are ("--Ofast-compile", "-DBLOCK_M=64", ...).
  std::vector<std::string> extra;
  /// More in-memory headers {include name, text}, besides the device library.
  std::vector<std::pair<std::string, std::string>> headers;
};

/// A compiled binary and NVRTC's log (warnings; empty when there are none).
struct NvrtcOutput {
  std::vector<uint8_t> binary;       // the cubin, or the PTX text with its NUL
  std::string log;
  std::vector<std::string> options;  // what NVRTC was given, for inspection
};

/// Compiles `source` to a cubin for `arch` ("sm_90a"). `name` names the
/// program in errors and the saved source file. A compile error throws a
/// kite::Error with NVRTC's log and the path where the source was saved.
NvrtcOutput compileToCubin(std::string_view source, std::string_view name,
                           std::string_view arch = "sm_90a", const NvrtcOptions &options = {});
/// Compiles `source` to PTX for `arch` ("sm_90a" or "compute_90a": PTX
/// always targets the virtual architecture).
NvrtcOutput compileToPtx(std::string_view source, std::string_view name,
                         std::string_view arch = "sm_90a", const NvrtcOptions &options = {});

/// Whether NVRTC loads (never throws), and why not.
bool nvrtcAvailable();
std::string nvrtcUnavailableReason();
/// NVRTC's version as {major, minor}; throws if NVRTC does not load.
std::pair<int, int> nvrtcVersion();

/// The CUDA include directories handed to NVRTC (for cuda_fp16.h and
/// friends, and CCCL's <cuda/std/...>): the first of $CUDA_HOME/include,
/// $CUDA_PATH/include, the include directory beside the loaded NVRTC library
/// and /usr/local/cuda/include that holds cuda_fp16.h, plus its cccl/
/// subdirectory. Empty when none is found (kernels that include no CUDA
/// header still compile).
const std::vector<std::string> &cudaIncludeDirs();

/// Where a failing source is saved: failed/ in the cache directory
/// (cache::directory(): $KITE_CACHE_DIR, else ~/.cache/kite), else
/// <temp>/kite/failed (the first that can be created).
std::filesystem::path failedSourceDir();

/// KITE_CUDA_OVERRIDE: a directory of hand-edited kernels (empty when the
/// variable is unset). A plan whose kernel symbol is `kite_softmax`
/// compiles `<dir>/kite_softmax.cu`, where that file exists, instead of the
/// generated source; its launch parameters (grid, block, shared memory,
/// arguments) stay the generated plan's, so an edit must keep the
/// signature. While it is set, launches neither read nor write the cache
/// (an edited cubin must not be served later under the generated plan's key).
std::filesystem::path cudaOverrideDir();
/// The override's text for `symbol` (nullopt: compile the generated
/// source). Reports each override it takes on stderr, once per symbol.
std::optional<std::string> cudaOverride(std::string_view symbol);

} // namespace kite::runtime

#endif // KITE_RUNTIME_NVRTC_H
