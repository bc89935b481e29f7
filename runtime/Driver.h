//===- Driver.h - The CUDA driver API, loaded at run time -------*- C++ -*-===//
//
// This file declares kite's access to the CUDA driver: the entry points it
// uses, resolved from a dlopen'd libcuda.so.1 (so kite binaries start, and
// compile and run reference mode, on machines without a driver); the one
// checked-call helper for driver results; and RAII owners for the driver
// state kite holds (primary contexts, the current-context scope, modules,
// events).
//
// cuda.h is included for its types only: no object here references a driver
// symbol, and kite never links libcuda (nor its stub).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_DRIVER_H
#define KITE_RUNTIME_DRIVER_H

#include <kite/runtime.hpp>

#include "runtime/BlockCache.h"

#include <cuda.h>
#include <fmt/format.h>

#include <memory>
#include <string>

namespace kite::runtime {

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

// Each entry point kite uses, by its unversioned name. cuda.h maps some names
// to versioned symbols by macro (cuMemAlloc -> cuMemAlloc_v2); the members
// below are declared through those macros, so `api.cuMemAlloc(...)` calls the
// versioned entry point with the signature this header declares.
#define KITE_CUDA_DRIVER_FUNCTIONS(X)                                                              \
  X(cuGetErrorName)                                                                                \
  X(cuGetErrorString)                                                                              \
  X(cuDriverGetVersion)                                                                            \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDeviceGetName)                                                                               \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuDevicePrimaryCtxRelease)                                                                     \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxGetCurrent)                                                                               \
  X(cuCtxGetDevice)                                                                                \
  X(cuCtxSynchronize)                                                                              \
  X(cuCtxResetPersistingL2Cache)                                                                   \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemFreeAsync)                                                                                \
  X(cuMemPoolCreate)                                                                               \
  X(cuMemPoolSetAttribute)                                                                         \
  X(cuMemPoolGetAttribute)                                                                         \
  X(cuMemAllocFromPoolAsync)                                                                       \
  X(cuMemPoolTrimTo)                                                                               \
  X(cuMemcpyHtoDAsync)                                                                             \
  X(cuMemcpyDtoHAsync)                                                                             \
  X(cuMemcpyDtoDAsync)                                                                             \
  X(cuMemsetD8Async)                                                                               \
  X(cuStreamCreate)                                                                                \
  X(cuStreamDestroy)                                                                               \
  X(cuStreamSynchronize)                                                                           \
  X(cuModuleLoadData)                                                                              \
  X(cuModuleGetFunction)                                                                           \
  X(cuModuleGetGlobal)                                                                             \
  X(cuModuleUnload)                                                                                \
  X(cuFuncGetAttribute)                                                                            \
  X(cuFuncSetAttribute)                                                                            \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                                  \
  X(cuOccupancyMaxActiveClusters)                                                                  \
  X(cuLaunchKernel)                                                                                \
  X(cuTensorMapEncodeTiled)                                                                        \
  X(cuEventCreate)                                                                                 \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuEventQuery)                                                                                  \
  X(cuEventElapsedTime)                                                                            \
  X(cuEventDestroy)                                                                                \
  X(cuPointerGetAttribute)

/// The resolved entry points (all non-null once a Driver is available).
struct DriverApi {
#define KITE_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  KITE_CUDA_DRIVER_FUNCTIONS(KITE_DECLARE_ENTRY)
#undef KITE_DECLARE_ENTRY
};

//===----------------------------------------------------------------------===//
// The driver library
//===----------------------------------------------------------------------===//

/// A loaded (or failed-to-load) CUDA driver. The process-wide one is
/// Driver::get(); tests can load another library with Driver::load.
class Driver {
public:
  /// The process's driver, loaded from libcuda.so.1 on first use. It is never
  /// unloaded: device memory may be freed during static destruction.
  static Driver &get();
  /// Loads the driver from `library` (dlopen), calls cuInit and resolves the
  /// entry points. Never throws: a failure is recorded as the reason.
  static std::unique_ptr<Driver> load(const char *library);

  ~Driver();
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

  bool available() const { return available_; }
  /// Why the driver is unusable ("" when available).
  const std::string &unavailableReason() const { return reason_; }
  /// Throws the no-GPU kite::Error unless available.
  void require() const {
    if (!available_) [[unlikely]]
      throwUnavailable();
  }
  [[noreturn]] void throwUnavailable() const;

  const DriverApi &api() const { return api_; }
  int version() const { return version_; }   // cuDriverGetVersion, e.g. 13000
  int deviceCount() const { return deviceCount_; }
  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", also for a driver that
  /// cannot name it (the stub).
  std::string describe(CUresult result) const;

private:
  Driver() = default;
  void *handle_ = nullptr;
  bool available_ = false;
  std::string reason_;
  DriverApi api_;
  int version_ = 0;
  int deviceCount_ = 0;
};

/// The process's entry points; throws the no-GPU error without a driver.
inline const DriverApi &cu() {
  Driver &d = Driver::get();
  d.require();
  return d.api();
}

//===----------------------------------------------------------------------===//
// Checked calls
//===----------------------------------------------------------------------===//

[[noreturn]] void throwCudaError(CUresult result, std::string_view what);

/// The one checked-call helper: throws a kite::Error naming the driver error
/// (cuGetErrorName) and what kite was doing. The message is only formatted
/// on failure, so this is free on the launch path.
template <class... Args>
inline void check(CUresult result, fmt::format_string<Args...> what, Args &&...args) {
  if (result != CUDA_SUCCESS) [[unlikely]]
    throwCudaError(result, fmt::format(what, std::forward<Args>(args)...));
}

/// For destructors and deleters, which must not throw: reports a failure on
/// stderr, except that a driver already shut down at process exit
/// (CUDA_ERROR_DEINITIALIZED) is expected and silent.
void warnOnError(CUresult result, std::string_view what) noexcept;

//===----------------------------------------------------------------------===//
// Devices and contexts
//===----------------------------------------------------------------------===//

/// One device with its retained primary context (the context the CUDA runtime
/// API uses too, so kite interoperates with cudaMalloc'd memory and streams)
/// and its properties. One per ordinal, created on first use, kept for the
/// process.
class DeviceContext {
public:
  /// Throws the no-GPU error, or a kite::Error for a bad ordinal.
  static DeviceContext &get(int ordinal);

  ~DeviceContext();
  DeviceContext(const DeviceContext &) = delete;
  DeviceContext &operator=(const DeviceContext &) = delete;

  int ordinal() const { return props_.ordinal; }
  CUdevice device() const { return device_; }
  CUcontext context() const { return context_; }
  const DeviceProperties &properties() const { return props_; }
  /// kite's stream-ordered memory pool on this device (null without memory
  /// pool support). It keeps what is freed for reuse (release threshold: no
  /// limit), as PyTorch's caching allocator does: with the default pool's
  /// threshold of 0, every synchronization returned the memory, and the next
  /// launch's output mapped fresh pages on the GPU's timeline (tens of
  /// microseconds for 128 MiB).
  CUmemoryPool pool() const { return pool_; }
  /// Dropped tensors' blocks, reused by later allocations of their size on
  /// their stream before the pool is asked (with a pool only).
  BlockCache &blocks() { return blocks_; }

private:
  explicit DeviceContext(int ordinal);
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUmemoryPool pool_ = nullptr; // never destroyed: tensors may be freed at exit
  BlockCache blocks_;
  DeviceProperties props_;
};

/// Makes a context current on this thread for a scope. A different context
/// that was current is restored on exit; a thread that had none keeps this
/// one (as with the CUDA runtime API), so the steady state is one cheap
/// cuCtxGetCurrent.
class ContextScope {
public:
  explicit ContextScope(CUcontext context);
  explicit ContextScope(const DeviceContext &device) : ContextScope(device.context()) {}
  ~ContextScope();
  ContextScope(const ContextScope &) = delete;
  ContextScope &operator=(const ContextScope &) = delete;

private:
  CUcontext previous_ = nullptr;
  bool changed_ = false;
};

//===----------------------------------------------------------------------===//
// Modules and events
//===----------------------------------------------------------------------===//

/// A loaded module (cubin or PTX), unloaded on destruction.
class Module {
public:
  Module() = default;
  /// Loads `image` into the current context; `what` names it in errors. PTX
  /// must be NUL-terminated.
  Module(const void *image, std::string_view what);
  ~Module();
  Module(Module &&o) noexcept : module_(o.module_) { o.module_ = nullptr; }
  Module &operator=(Module &&o) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  CUmodule get() const { return module_; }
  /// The entry point `name`; throws naming the kernel if it is missing.
  CUfunction function(const char *name) const;

private:
  CUmodule module_ = nullptr;
};

/// A CUDA event (timing enabled unless flags say otherwise), destroyed on
/// destruction. The current context must be the one to record it in.
class Event {
public:
  explicit Event(unsigned flags = CU_EVENT_DEFAULT);
  ~Event();
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;

  CUevent get() const { return event_; }
  void record(Stream stream = {});
  void synchronize();
  /// Waits up to `seconds` for the work before the event; false if it has
  /// not finished by then (a kernel that never ends keeps the device busy).
  bool waitFor(double seconds);
  /// Milliseconds from `start` to this event (both recorded and complete).
  float elapsedMsSince(const Event &start) const;

private:
  CUevent event_ = nullptr;
};

inline CUstream toCU(Stream s) { return static_cast<CUstream>(s.handle); }

} // namespace kite::runtime

#endif // KITE_RUNTIME_DRIVER_H
