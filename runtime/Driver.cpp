//===- Driver.cpp - The CUDA driver API, loaded at run time ---------------===//
//
// This file implements loading the CUDA driver with dlopen, resolving its
// entry points (through cuGetProcAddress where the driver has it, so each
// name gets the ABI of the prototype this build's cuda.h declares), the checked-call
// helper, and the RAII owners of contexts, modules and events.
//
// "No GPU" is a state, not an error: a missing libcuda.so.1, the toolkit's
// stub library (CUDA_ERROR_STUB_LIBRARY) or a driver without devices
// (CUDA_ERROR_NO_DEVICE) leave gpu_available() false, and only GPU
// operations throw.
//
//===----------------------------------------------------------------------===//

#include "runtime/Driver.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string_view>
#include <thread>
#include <type_traits>

using namespace kite;
using namespace kite::runtime;

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

namespace {

#define KITE_STRINGIFY_EXPANDED(x) KITE_STRINGIFY(x)
#define KITE_STRINGIFY(x) #x

/// Names for the results kite reports itself, for drivers that cannot name
/// them (the stub library answers every call with CUDA_ERROR_STUB_LIBRARY).
const char *knownErrorName(CUresult r) {
  switch (r) {
  case CUDA_SUCCESS: return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
  case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_DEINITIALIZED: return "CUDA_ERROR_DEINITIALIZED";
  case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
  case CUDA_ERROR_NO_BINARY_FOR_GPU: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
  default: return nullptr;
  }
}

using GetProcAddressFn = decltype(&::cuGetProcAddress); // cuGetProcAddress_v2

/// The ABI version to ask cuGetProcAddress for: CUDA_VERSION, except for
/// entry points whose newest ABI is newer than the prototype cuda.h
/// declares under the plain name. CUDA 13.0 added cuCtxSynchronize and
/// cuCtxGetDevice versions that take a context; asked for at 13000 the
/// driver returns those, and a call through the one-argument prototype
/// passes garbage as the context (cuCtxSynchronize then crashed in
/// empty_cache). The static_asserts tie each pin to the prototype.
static_assert(std::is_same_v<decltype(&::cuCtxSynchronize), PFN_cuCtxSynchronize_v2000>);
static_assert(std::is_same_v<decltype(&::cuCtxGetDevice), PFN_cuCtxGetDevice_v2000>);
int abiVersion(std::string_view name) {
  if (name == "cuCtxSynchronize" || name == "cuCtxGetDevice")
    return 2000;
  return CUDA_VERSION;
}

} // namespace

std::unique_ptr<Driver> Driver::load(const char *library) {
  std::unique_ptr<Driver> d(new Driver());
  dlerror();
  d->handle_ = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!d->handle_) {
    const char *err = dlerror();
    d->reason_ = fmt::format("{} could not be loaded ({}): no NVIDIA driver is installed here",
                             library, err ? err : "unknown dlopen error");
    return d;
  }

  // cuInit and the error names first, straight from the library: the stub
  // library and old drivers are diagnosed before anything else is resolved.
  auto cuInitFn = reinterpret_cast<decltype(&::cuInit)>(dlsym(d->handle_, "cuInit"));
  d->api_.cuGetErrorName =
      reinterpret_cast<decltype(&::cuGetErrorName)>(dlsym(d->handle_, "cuGetErrorName"));
  d->api_.cuGetErrorString =
      reinterpret_cast<decltype(&::cuGetErrorString)>(dlsym(d->handle_, "cuGetErrorString"));
  if (!cuInitFn) {
    d->reason_ = fmt::format("{} has no cuInit: it is not a CUDA driver", library);
    return d;
  }
  CUresult init = cuInitFn(0);
  if (init == CUDA_ERROR_STUB_LIBRARY) {
    d->reason_ = fmt::format("{} is the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY "
                             "from cuInit), not a driver",
                             library);
    return d;
  }
  if (init == CUDA_ERROR_NO_DEVICE) {
    d->reason_ = "the CUDA driver found no device (CUDA_ERROR_NO_DEVICE from cuInit)";
    return d;
  }
  if (init != CUDA_SUCCESS) {
    d->reason_ = fmt::format("cuInit failed with {}", d->describe(init));
    return d;
  }

  // Everything else through cuGetProcAddress (CUDA 12+ drivers), asking for
  // the version of each entry point that this build's cuda.h declares; older
  // drivers by the versioned symbol names the cuda.h macros expand to.
  auto getProc =
      reinterpret_cast<GetProcAddressFn>(dlsym(d->handle_, "cuGetProcAddress_v2"));
  std::string missing;
  auto resolve = [&](void **slot, const char *name, const char *versionedName) {
    *slot = nullptr;
    if (getProc) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      if (getProc(name, slot, abiVersion(name), CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) !=
              CUDA_SUCCESS ||
          status != CU_GET_PROC_ADDRESS_SUCCESS)
        *slot = nullptr;
    }
    if (!*slot)
      *slot = dlsym(d->handle_, versionedName);
    if (!*slot)
      missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
#define KITE_RESOLVE_ENTRY(name)                                                                   \
  resolve(reinterpret_cast<void **>(&d->api_.name), #name, KITE_STRINGIFY_EXPANDED(name));
  KITE_CUDA_DRIVER_FUNCTIONS(KITE_RESOLVE_ENTRY)
#undef KITE_RESOLVE_ENTRY

  if (d->api_.cuDriverGetVersion)
    d->api_.cuDriverGetVersion(&d->version_);
  if (!missing.empty()) {
    d->reason_ = fmt::format("the CUDA driver (version {}.{}) lacks {}; kite needs a CUDA 12 or "
                             "newer driver",
                             d->version_ / 1000, d->version_ % 1000 / 10, missing);
    return d;
  }
  CUresult count = d->api_.cuDeviceGetCount(&d->deviceCount_);
  if (count != CUDA_SUCCESS || d->deviceCount_ == 0) {
    d->reason_ = count != CUDA_SUCCESS
                     ? fmt::format("cuDeviceGetCount failed with {}", d->describe(count))
                     : std::string("the CUDA driver reports no device");
    d->deviceCount_ = 0;
    return d;
  }
  d->available_ = true;
  return d;
}

Driver::~Driver() {
  // The process's driver is never destroyed (see get()); one loaded by a test
  // is closed again.
  if (handle_)
    dlclose(handle_);
}

Driver &Driver::get() {
  // Leaked on purpose: tensors in static storage free device memory during
  // static destruction, which must still find the entry points.
  static Driver *driver = Driver::load("libcuda.so.1").release();
  return *driver;
}

void Driver::throwUnavailable() const {
  throw Error(fmt::format("no CUDA GPU: {}; reference mode and kite compile still work", reason_));
}

std::string Driver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (api_.cuGetErrorName && api_.cuGetErrorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (api_.cuGetErrorString && api_.cuGetErrorString(result, &text) != CUDA_SUCCESS)
    text = nullptr;
  if (!name)
    name = knownErrorName(result);
  std::string s = name ? std::string(name) : fmt::format("CUDA error {}", int(result));
  if (text)
    s += fmt::format(" ({})", text);
  return s;
}

//===----------------------------------------------------------------------===//
// Checked calls
//===----------------------------------------------------------------------===//

void kite::runtime::throwCudaError(CUresult result, std::string_view what) {
  throw Error(fmt::format("CUDA error {} while {}", Driver::get().describe(result), what));
}

void kite::runtime::warnOnError(CUresult result, std::string_view what) noexcept {
  if (result == CUDA_SUCCESS || result == CUDA_ERROR_DEINITIALIZED)
    return;
  std::fprintf(stderr, "kite: warning: CUDA error %s while %.*s\n",
               Driver::get().describe(result).c_str(), int(what.size()), what.data());
}

//===----------------------------------------------------------------------===//
// Public queries
//===----------------------------------------------------------------------===//

bool kite::gpu_available() { return Driver::get().available(); }

std::string kite::gpu_unavailable_reason() { return Driver::get().unavailableReason(); }

int kite::device_count() { return Driver::get().deviceCount(); }

const DeviceProperties &kite::device_properties(int ordinal) {
  return DeviceContext::get(ordinal).properties();
}

std::string DeviceProperties::arch() const {
  // The architecture-specific ("a") targets exist for 9.0 and 10.x/12.x; kite
  // wants them on 9.0 for wgmma and setmaxnreg.
  bool accelerated = computeMajor == 9 && computeMinor == 0;
  return fmt::format("sm_{}{}{}", computeMajor, computeMinor, accelerated ? "a" : "");
}

//===----------------------------------------------------------------------===//
// Devices and contexts
//===----------------------------------------------------------------------===//

DeviceContext &DeviceContext::get(int ordinal) {
  // Created once per ordinal and kept (leaked) for the process, for the same
  // reason as the driver: memory freed at exit needs its context. Lookups are
  // lock-free: this is on the launch path.
  constexpr int kMaxDevices = 64;
  static std::atomic<DeviceContext *> devices[kMaxDevices];
  if (ordinal >= 0 && ordinal < kMaxDevices)
    if (DeviceContext *d = devices[ordinal].load(std::memory_order_acquire)) [[likely]]
      return *d;

  Driver &driver = Driver::get();
  driver.require();
  if (ordinal < 0 || ordinal >= driver.deviceCount())
    throw Error(fmt::format("no CUDA device cuda:{}: this machine has {} (cuda:0 to cuda:{})",
                            ordinal, driver.deviceCount(), driver.deviceCount() - 1));
  if (ordinal >= kMaxDevices)
    throw Error(fmt::format("cuda:{}: kite supports at most {} devices", ordinal, kMaxDevices));
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (DeviceContext *d = devices[ordinal].load(std::memory_order_acquire))
    return *d;
  auto *d = new DeviceContext(ordinal);
  devices[ordinal].store(d, std::memory_order_release);
  return *d;
}

DeviceContext::DeviceContext(int ordinal) {
  const DriverApi &api = cu();
  check(api.cuDeviceGet(&device_, ordinal), "getting device cuda:{}", ordinal);
  check(api.cuDevicePrimaryCtxRetain(&context_, device_),
        "retaining the primary context of cuda:{}", ordinal);

  props_.ordinal = ordinal;
  char name[256] = {};
  check(api.cuDeviceGetName(name, sizeof(name) - 1, device_), "reading the name of cuda:{}",
        ordinal);
  props_.name = name;
  auto attr = [&](CUdevice_attribute a, const char *what) {
    int v = 0;
    check(api.cuDeviceGetAttribute(&v, a, device_), "reading {} of cuda:{}", what, ordinal);
    return v;
  };
  props_.computeMajor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "the capability");
  props_.computeMinor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "the capability");
  props_.smCount = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "the SM count");
  props_.maxThreadsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block");
  props_.warpSize = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, "the warp size");
  props_.maxSharedMemoryPerBlock =
      attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared memory per block");
  props_.maxSharedMemoryPerBlockOptin =
      attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "opt-in shared memory per block");
  props_.maxSharedMemoryPerSm =
      attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "shared memory per SM");
  props_.l2CacheBytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "the L2 size");
  props_.memoryPools = attr(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, "memory pool support") != 0;
  props_.driverVersion = Driver::get().version();
  if (props_.memoryPools) {
    CUmemPoolProps pp = {};
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    pp.location.id = ordinal;
    check(api.cuMemPoolCreate(&pool_, &pp), "creating a memory pool on cuda:{}", ordinal);
    cuuint64_t keepAll = ~cuuint64_t(0);
    check(api.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepAll),
          "setting the release threshold of the memory pool on cuda:{}", ordinal);
  }
}

DeviceContext::~DeviceContext() {
  if (context_)
    warnOnError(Driver::get().api().cuDevicePrimaryCtxRelease(device_),
                "releasing a primary context");
}

ContextScope::ContextScope(CUcontext context) {
  const DriverApi &api = Driver::get().api();
  check(api.cuCtxGetCurrent(&previous_), "reading the current CUDA context");
  if (previous_ != context) {
    check(api.cuCtxSetCurrent(context), "making a CUDA context current");
    // A thread with no context keeps kite's (as the CUDA runtime API does),
    // so its later launches find it current; another context is restored.
    changed_ = previous_ != nullptr;
  }
}

ContextScope::~ContextScope() {
  if (changed_)
    warnOnError(Driver::get().api().cuCtxSetCurrent(previous_), "restoring the CUDA context");
}

//===----------------------------------------------------------------------===//
// Modules and events
//===----------------------------------------------------------------------===//

Module::Module(const void *image, std::string_view what) {
  check(cu().cuModuleLoadData(&module_, image), "loading the module of {}", what);
}

Module::~Module() {
  if (module_)
    warnOnError(Driver::get().api().cuModuleUnload(module_), "unloading a module");
}

Module &Module::operator=(Module &&o) noexcept {
  if (this != &o) {
    if (module_)
      warnOnError(Driver::get().api().cuModuleUnload(module_), "unloading a module");
    module_ = o.module_;
    o.module_ = nullptr;
  }
  return *this;
}

CUfunction Module::function(const char *name) const {
  CUfunction f = nullptr;
  CUresult r = cu().cuModuleGetFunction(&f, module_, name);
  if (r == CUDA_ERROR_NOT_FOUND)
    throw Error(fmt::format("the kernel binary has no entry point '{}' (is it declared "
                            "extern \"C\" __global__?)",
                            name));
  check(r, "looking up entry point '{}'", name);
  return f;
}

Event::Event(unsigned flags) { check(cu().cuEventCreate(&event_, flags), "creating an event"); }

Event::~Event() {
  if (event_)
    warnOnError(Driver::get().api().cuEventDestroy(event_), "destroying an event");
}

void Event::record(Stream stream) {
  check(cu().cuEventRecord(event_, toCU(stream)), "recording an event");
}

void Event::synchronize() { check(cu().cuEventSynchronize(event_), "waiting for an event"); }

bool Event::waitFor(double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    CUresult r = cu().cuEventQuery(event_);
    if (r != CUDA_ERROR_NOT_READY) {
      check(r, "waiting for an event");
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10000));
  }
}

float Event::elapsedMsSince(const Event &start) const {
  float ms = 0;
  check(cu().cuEventElapsedTime(&ms, start.event_, event_), "reading an event's elapsed time");
  return ms;
}
