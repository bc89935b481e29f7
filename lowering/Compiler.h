//===- Compiler.h - captured kernel to launchable plan ----------*- C++ -*-===//
//
// This file declares kite's compiler entry points, the `kite_compiler`
// library: captured IR (MLIR text, as `kite compile` wrote it) plus launch
// arguments and a config become CUDA C++ (lowerToCuda) and then a
// KernelPlan with a cubin (compileToPlan), which kite_runtime runs without
// any compiler. Linking kite_compiler installs compileToPlan as the
// runtime's compiler (runtime/CompilerHook.h).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_COMPILER_H
#define KITE_LOWERING_COMPILER_H

#include "lowering/EmitCuda.h"

#include <kite/cache.hpp>
#include <kite/runtime.hpp>

namespace kite {

struct CompileOptions {
  /// The GPU target; empty: the current device's, else sm_90a.
  std::string arch;
  /// `#line` directives to the kernel's source in the CUDA, so that with
  /// NVRTC's -lineinfo Nsight Compute's source view and compute-sanitizer
  /// reports name the .kite.cpp lines (golden tests of the CUDA turn them
  /// off).
  bool lineDirectives = true;
  /// Timeline events in the kernel (EmitOptions::trace; `kite bench
  /// --timeline`). A traced plan's key says so.
  bool trace = false;
};

/// Lowers kernel `name` of captured IR `ir` for `args` and `config` (JSON;
/// empty for the default: the speculative one, or where emission turns it
/// down the plain one) to CUDA. Throws kite::Error with the diagnostics
/// (at the kernel's source lines) if the kernel cannot be compiled for these
/// arguments.
CudaKernel lowerToCuda(std::string_view ir, std::string_view name,
                       const std::vector<ArgSpec> &args, std::string_view config,
                       const CompileOptions &options = {});

/// Whether kernel `name` of `ir` lowers for `args` under its speculative
/// default config (defaultConfig): true where it equals the plain one or
/// emission accepts it, false where emission turns it down, so that the
/// default is the plain one. Throws kite::Error if the kernel cannot be
/// lowered at all for these arguments.
bool speculativeDefaultFits(std::string_view ir, std::string_view name,
                            const std::vector<ArgSpec> &args, const CompileOptions &options = {});

/// The specs a plan for a launch's `args` is compiled for: scalars keep a
/// value only where the kernel specializes them, and with
/// options.static_shapes = false each size the kernel can take at launch
/// becomes its divisor class (`x=bf16[?16,4096]`; lowering/DynamicShapes.h).
std::vector<ArgSpec> planSpecs(const KernelSource &kernel, const std::vector<ArgSpec> &args,
                               const Options &options);

/// lowerToCuda for planSpecs(args), then NVRTC, packaged as a plan. Throws
/// kite::Error.
KernelPlan compileToPlan(const KernelSource &kernel, const std::vector<ArgSpec> &args,
                         const Options &options, const CompileOptions &compile = {});

/// The config space of a kernel for these arguments, as JSON text (see
/// lowering/ConfigSpace.h for its form), with the default config for `arch`
/// (empty: the first GPU's, or sm_90a without one). Throws kite::Error.
std::string configSpaceOf(const KernelSource &kernel, const std::vector<ArgSpec> &args,
                          std::string_view arch = "");

/// The autotuner as kite::launch runs it for Options::Tuning::tune: tunes on
/// random inputs of these specs and returns the winner as a cache entry.
/// The environment steers it: KITE_AUTOTUNE_EFFORT (none, quick (default),
/// full), KITE_AUTOTUNE_BUDGET (seconds), KITE_AUTOTUNE_WORKER (a `kite`
/// executable to benchmark in, so that a faulting candidate cannot break
/// the application's CUDA context; without it, benchmarks run in-process),
/// KITE_AUTOTUNE_VERBOSE=1 (progress on stderr).
cache::Entry tuneForLaunch(const KernelSource &kernel, const std::vector<ArgSpec> &args,
                           const Options &options, const cache::Target &target);

/// Installs compileToPlan as the runtime's compiler and tuneForLaunch as its
/// autotuner. Linking kite_compiler does this at start-up; call it to be
/// explicit.
void installCompiler();

} // namespace kite

#endif // KITE_LOWERING_COMPILER_H
