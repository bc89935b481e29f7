//===- Registry.cpp - Captured kernels and the compiler hook --------------===//
//
// This file implements the two process-wide registries of the runtime: the
// kernels captured at build time (filled by generated code at static
// initialization, looked up by the kernel function's address) and the
// compiler and autotuner hooks (CompilerHook.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/CompilerHook.h"

#include <fmt/format.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

using namespace kite;
using namespace kite::runtime;

//===----------------------------------------------------------------------===//
// Captured kernels
//===----------------------------------------------------------------------===//

namespace {

struct KernelRegistry {
  std::shared_mutex mutex;
  // Entries are never removed, so the pointers lookup_kernel returns stay
  // valid; a re-registration overwrites in place.
  std::unordered_map<const void *, std::unique_ptr<KernelSource>> kernels;
};

KernelRegistry &kernelRegistry() {
  // A function-local static: registrations run from other translation
  // units' static initializers, in any order.
  static KernelRegistry *registry = new KernelRegistry();
  return *registry;
}

} // namespace

void kite::register_kernel(const KernelSource &source) {
  if (!source.function)
    throw Error(fmt::format("kite::register_kernel: kernel '{}' has no function address",
                            source.name));
  KernelRegistry &r = kernelRegistry();
  std::unique_lock lock(r.mutex);
  auto &slot = r.kernels[source.function];
  if (slot)
    *slot = source;
  else
    slot = std::make_unique<KernelSource>(source);
}

const KernelSource *kite::lookup_kernel(const void *function) {
  KernelRegistry &r = kernelRegistry();
  std::shared_lock lock(r.mutex);
  auto it = r.kernels.find(function);
  return it == r.kernels.end() ? nullptr : it->second.get();
}

//===----------------------------------------------------------------------===//
// The compiler hook
//===----------------------------------------------------------------------===//

namespace {

struct CompilerSlot {
  std::mutex mutex;
  CompileFn compile;
  TuneFn tune;
  std::atomic<uint64_t> compiles{0};
};

CompilerSlot &compilerSlot() {
  static CompilerSlot *slot = new CompilerSlot();
  return *slot;
}

} // namespace

void kite::runtime::setCompiler(CompileFn compile) {
  CompilerSlot &s = compilerSlot();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.compile = std::move(compile);
}

bool kite::runtime::hasCompiler() {
  CompilerSlot &s = compilerSlot();
  std::lock_guard<std::mutex> lock(s.mutex);
  return bool(s.compile);
}

KernelPlan kite::runtime::compileKernel(const KernelSource &kernel,
                                        const std::vector<ArgSpec> &args,
                                        const Options &options) {
  CompileFn compile;
  {
    CompilerSlot &s = compilerSlot();
    std::lock_guard<std::mutex> lock(s.mutex);
    compile = s.compile;
  }
  if (!compile) {
    std::vector<std::string> specs;
    std::string argFlags;
    for (const ArgSpec &a : args) {
      specs.push_back(a.str());
      argFlags += fmt::format(" --arg {}", a.str());
    }
    throw Error(fmt::format(
        "kite::launch({0}): kernel {0} is not compiled for these arguments ({1}) and the kite "
        "compiler is not linked in; link kite_compiler into the application, or ship a kite "
        "cache that holds this specialization (kite autotune {2}{3})",
        kernel.name, fmt::join(specs, ", "), kernel.file.empty() ? "<kernel file>" : kernel.file,
        argFlags));
  }
  compilerSlot().compiles.fetch_add(1, std::memory_order_relaxed);
  return compile(kernel, args, options);
}

uint64_t kite::runtime::compileCount() {
  return compilerSlot().compiles.load(std::memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// The autotuner hook
//===----------------------------------------------------------------------===//

void kite::runtime::setTuner(TuneFn tune) {
  CompilerSlot &s = compilerSlot();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.tune = std::move(tune);
}

bool kite::runtime::hasTuner() {
  CompilerSlot &s = compilerSlot();
  std::lock_guard<std::mutex> lock(s.mutex);
  return bool(s.tune);
}

cache::Entry kite::runtime::tuneKernel(const KernelSource &kernel,
                                       const std::vector<ArgSpec> &args, const Options &options,
                                       const cache::Target &target) {
  TuneFn tune;
  {
    CompilerSlot &s = compilerSlot();
    std::lock_guard<std::mutex> lock(s.mutex);
    tune = s.tune;
  }
  if (!tune)
    throw Error(fmt::format("kite::launch({}): Options::Tuning::tune needs the autotuner, which "
                            "is not linked in",
                            kernel.name));
  return tune(kernel, args, options, target);
}
