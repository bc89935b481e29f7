//===- CompilerHook.h - How the runtime reaches the compiler ----*- C++ -*-===//
//
// This file declares the one seam between the runtime and the compiler.
// kite_runtime has no LLVM, MLIR or Clang in it; the compiler library
// (kite_compiler) installs a function here that turns a captured kernel, the
// launch's argument specs and the options into a KernelPlan. The launch front
// door calls compileKernel on a cache miss; with no compiler installed, that
// is an error telling the user to link the compiler or ship a cache.
//
// The compiler installs itself from a static initializer in one of its
// object files:
//
//   static const kite::runtime::CompilerRegistration registration{
//       [](const kite::KernelSource &k, const std::vector<kite::ArgSpec> &args,
//          const kite::Options &o) { return compileToPlan(k, args, o); }};
//
// Static libraries drop unreferenced objects, so that object must be linked
// whole (a shared library, an OBJECT library, or --whole-archive), or the
// application must reference a symbol in it.
//
// The autotuner plugs in the same way (setTuner): Options::Tuning::tune on a
// cache miss calls it, and the runtime stores the entry it returns.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_COMPILERHOOK_H
#define KITE_RUNTIME_COMPILERHOOK_H

#include <kite/cache.hpp>
#include <kite/runtime.hpp>

#include <cstdint>

#include <functional>
#include <vector>

namespace kite::runtime {

/// Compiles a captured kernel for one specialization; throws kite::Error
/// (a located diagnostic rendered as text) for a kernel it cannot compile.
using CompileFn = std::function<KernelPlan(const KernelSource &, const std::vector<ArgSpec> &,
                                           const Options &)>;

/// Installs the compiler (replacing any earlier one); an empty function
/// uninstalls it.
void setCompiler(CompileFn compile);
bool hasCompiler();

/// Compiles through the installed compiler. Without one, throws:
/// "kite::launch(softmax): kernel softmax is not compiled for these arguments
/// (x=bf16[8,8]) and the kite compiler is not linked in; ...".
KernelPlan compileKernel(const KernelSource &kernel, const std::vector<ArgSpec> &args,
                         const Options &options);

/// Installs a compiler from a static initializer.
struct CompilerRegistration {
  explicit CompilerRegistration(CompileFn compile) { setCompiler(std::move(compile)); }
};

/// How many times compileKernel has called the installed compiler in this
/// process (failed compiles included). An application that runs from a
/// bundle or a warm cache directory shows 0.
uint64_t compileCount();

/// Autotunes a kernel for one specialization on the launch's GPU (`target`)
/// and returns the winner as a cache entry (source tuned, with its plan,
/// config, time, configs searched and seconds spent). Throws kite::Error.
using TuneFn = std::function<cache::Entry(const KernelSource &, const std::vector<ArgSpec> &,
                                          const Options &, const cache::Target &)>;

/// Installs the autotuner (replacing any earlier one); an empty function
/// uninstalls it.
void setTuner(TuneFn tune);
bool hasTuner();
/// Tunes through the installed autotuner; throws kite::Error without one.
cache::Entry tuneKernel(const KernelSource &kernel, const std::vector<ArgSpec> &args,
                        const Options &options, const cache::Target &target);

/// Installs an autotuner from a static initializer.
struct TunerRegistration {
  explicit TunerRegistration(TuneFn tune) { setTuner(std::move(tune)); }
};

} // namespace kite::runtime

#endif // KITE_RUNTIME_COMPILERHOOK_H
