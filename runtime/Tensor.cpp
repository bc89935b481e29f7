//===- Tensor.cpp - Device tensors, memory and copies ---------------------===//
//
// This file implements device tensors: stream-ordered allocation (freed on
// the allocating stream when the last handle drops), zero-fill, and the
// copies between host and device. Device tensors are ordinary kite::Tensors
// made with Tensor::from_blob on a CUDA device; their deleter owns the
// allocation.
//
//===----------------------------------------------------------------------===//

#include "runtime/Driver.h"
#include "runtime/Memory.h"
#include "runtime/TensorInfo.h"

#include <new>

using namespace kite;
using namespace kite::runtime;

//===----------------------------------------------------------------------===//
// Describing tensors
//===----------------------------------------------------------------------===//

std::string kite::runtime::shapeString(std::span<const int64_t> sizes) {
  return fmt::format("[{}]", fmt::join(sizes, ", "));
}

std::string kite::runtime::describe(const Tensor &t) {
  if (!t.defined())
    return "an undefined tensor";
  Device d = t.device();
  std::vector<int64_t> sizes = t.sizes();
  std::string where = d.is_cpu() ? "a CPU" : "a CUDA";
  std::string s = fmt::format("{} tensor {} {}", where, shapeString(sizes), dtype_name(t.dtype()));
  if (d.is_cuda() && d.index != 0)
    s += fmt::format(" on cuda:{}", d.index);
  return s;
}

int64_t kite::runtime::byteSize(const Tensor &t) { return t.numel() * element_size(t.dtype()); }

int64_t kite::runtime::checkedNumel(std::span<const int64_t> sizes, std::string_view what) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0)
      throw Error(fmt::format("{}: sizes {} have a negative size", what, shapeString(sizes)));
    n *= s;
  }
  return n;
}

//===----------------------------------------------------------------------===//
// Device memory
//===----------------------------------------------------------------------===//

namespace {

/// Drops a device allocation made on `stream`: into the device's block
/// cache, or freed on the stream when the cache keeps enough of its size.
/// Runs in a Storage's destructor, possibly during static destruction:
/// never throws.
void freeDevice(DeviceContext *device, CUstream stream, CUdeviceptr ptr, size_t bytes) noexcept {
  if (device->pool()) {
    try {
      if (device->blocks().put(stream, bytes, ptr))
        return;
    } catch (...) { // out of host memory: free it instead
    }
  }
  const DriverApi &api = Driver::get().api();
  CUcontext previous = nullptr;
  if (api.cuCtxGetCurrent(&previous) != CUDA_SUCCESS)
    previous = nullptr;
  bool changed = previous != device->context();
  if (changed && api.cuCtxSetCurrent(device->context()) != CUDA_SUCCESS)
    return; // the driver is shutting down; the process frees everything
  if (device->pool())
    warnOnError(api.cuMemFreeAsync(ptr, stream), "freeing device memory (cuMemFreeAsync)");
  else
    warnOnError(api.cuMemFree(ptr), "freeing device memory (cuMemFree)");
  if (changed)
    api.cuCtxSetCurrent(previous);
}

DeviceContext &cudaDevice(Device device, std::string_view what) {
  if (!device.is_cuda())
    throw Error(fmt::format("{}: the device must be a CUDA device, got {}", what,
                            to_string(device)));
  return DeviceContext::get(device.index);
}

/// A host buffer for copies, 64-byte aligned, owned by the returned tensor.
Tensor hostBuffer(int64_t bytes, const std::vector<int64_t> &sizes,
                  const std::vector<int64_t> &strides, DType dtype) {
  void *p = bytes > 0 ? ::operator new(size_t(bytes), std::align_val_t(64)) : nullptr;
  return Tensor::from_blob(p, sizes, strides, dtype, Device::cpu(), [](void *q) {
    if (q)
      ::operator delete(q, std::align_val_t(64));
  });
}

Tensor allocate(const std::vector<int64_t> &sizes, DType dtype, Stream stream, Device device,
                std::string_view what, bool zeroed = false) {
  DeviceContext &dc = cudaDevice(device, what);
  ContextScope scope(dc);
  return allocateDevice(dc, sizes, dtype, stream, zeroed, what);
}

CUdeviceptr devicePtr(const Tensor &t) { return reinterpret_cast<CUdeviceptr>(t.data_ptr()); }

/// Frees every block the device's cache keeps (each on its stream), waits
/// for the device and returns the pool's unused memory to the system. The
/// device's context must be current.
void releaseCached(DeviceContext &dc, std::string_view what) {
  const DriverApi &api = cu();
  for (auto [stream, ptr] : dc.blocks().drain())
    check(api.cuMemFreeAsync(ptr, stream), "{}: freeing cached device memory", what);
  check(api.cuCtxSynchronize(), "{}: synchronizing cuda:{}", what, dc.ordinal());
  check(api.cuMemPoolTrimTo(dc.pool(), 0), "{}: releasing cached memory of cuda:{}", what,
        dc.ordinal());
}

} // namespace

Tensor kite::runtime::allocateDevice(DeviceContext &dc, const std::vector<int64_t> &sizes,
                                     DType dtype, Stream stream, bool zeroed,
                                     std::string_view what) {
  int64_t bytes = checkedNumel(sizes, what) * element_size(dtype);
  const DriverApi &api = cu();
  CUdeviceptr ptr = 0;
  if (bytes > 0) {
    auto alloc = [&] {
      return dc.pool()
                 ? api.cuMemAllocFromPoolAsync(&ptr, size_t(bytes), dc.pool(), toCU(stream))
                 : api.cuMemAlloc(&ptr, size_t(bytes));
    };
    CUresult r = CUDA_SUCCESS;
    if (dc.pool())
      ptr = dc.blocks().take(toCU(stream), size_t(bytes));
    if (!ptr)
      r = alloc();
    if (r == CUDA_ERROR_OUT_OF_MEMORY && dc.pool()) {
      // What the cache and the pool keep goes back; then one more try.
      releaseCached(dc, what);
      r = alloc();
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      throw Error(fmt::format("{}: out of device memory allocating {} {} ({} bytes) on cuda:{}",
                              what, shapeString(sizes), dtype_name(dtype), bytes, dc.ordinal()));
    check(r, "{}: allocating {} bytes on cuda:{}", what, bytes, dc.ordinal());
  }
  // The deleter captures two words (the stream; the size and the device's
  // ordinal, below 64, packed), so std::function stores it inline: no heap
  // allocation per output on the launch path.
  CUstream s = toCU(stream);
  uint64_t sizeAndDevice = uint64_t(bytes) << 8 | uint64_t(dc.ordinal());
  auto release = [s, sizeAndDevice](void *p) {
    freeDevice(&DeviceContext::get(int(sizeAndDevice & 0xff)), s,
               reinterpret_cast<CUdeviceptr>(p), size_t(sizeAndDevice >> 8));
  };
  static_assert(sizeof(release) <= 2 * sizeof(void *), "stored inline by std::function");
  std::function<void(void *)> deleter;
  if (ptr)
    deleter = release;
  Tensor t = Tensor::from_blob(reinterpret_cast<void *>(ptr), sizes, {}, dtype,
                               Device::cuda(dc.ordinal()), std::move(deleter));
  if (zeroed && bytes > 0)
    check(api.cuMemsetD8Async(ptr, 0, size_t(bytes), toCU(stream)), "{}: zero-filling {} bytes",
          what, bytes);
  return t;
}

Tensor kite::cuda::empty(const std::vector<int64_t> &sizes, DType dtype, Stream stream,
                         Device device) {
  return allocate(sizes, dtype, stream, device, "kite::cuda::empty");
}

Tensor kite::cuda::zeros(const std::vector<int64_t> &sizes, DType dtype, Stream stream,
                         Device device) {
  return allocate(sizes, dtype, stream, device, "kite::cuda::zeros", /*zeroed=*/true);
}

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

Tensor kite::cuda::to_device(const Tensor &host, Stream stream, Device device) {
  constexpr std::string_view what = "kite::cuda::to_device";
  if (!host.defined() || !host.device().is_cpu())
    throw Error(fmt::format("{}: expects a CPU tensor, got {}", what, describe(host)));
  Tensor src = host.is_contiguous() ? host : host.contiguous();
  Tensor dev = allocate(src.sizes(), src.dtype(), stream, device, what);
  if (int64_t bytes = byteSize(src)) {
    ContextScope scope(DeviceContext::get(device.index));
    // From pageable memory the driver stages the bytes before returning, so
    // `src` may be dropped right after the call.
    check(cu().cuMemcpyHtoDAsync(devicePtr(dev), src.data_ptr(), size_t(bytes), toCU(stream)),
          "{}: copying {} bytes to cuda:{}", what, bytes, device.index);
  }
  return dev;
}

Tensor kite::cuda::to_host(const Tensor &dev, Stream stream) {
  constexpr std::string_view what = "kite::cuda::to_host";
  if (!dev.defined() || !dev.device().is_cuda())
    throw Error(fmt::format("{}: expects a CUDA tensor, got {}", what, describe(dev)));
  DeviceContext &dc = DeviceContext::get(dev.device().index);
  std::vector<int64_t> sizes = dev.sizes(), strides = dev.strides();
  int64_t numel = dev.numel();
  int64_t elem = element_size(dev.dtype());
  if (numel == 0)
    return hostBuffer(0, sizes, {}, dev.dtype());

  // Copy the span of memory the view covers, then make it contiguous on the
  // host: any non-negative strides (transposed, sliced, expanded) work
  // without a device kernel.
  bool contiguous = dev.is_contiguous();
  int64_t spanElems = 1;
  if (!contiguous) {
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (strides[d] < 0)
        throw Error(fmt::format("{}: negative strides {} are not supported", what,
                                shapeString(strides)));
      spanElems += (sizes[d] - 1) * strides[d];
    }
  }
  int64_t bytes = (contiguous ? numel : spanElems) * elem;
  Tensor host = hostBuffer(bytes, sizes, contiguous ? std::vector<int64_t>{} : strides,
                           dev.dtype());
  {
    ContextScope scope(dc);
    check(cu().cuMemcpyDtoHAsync(host.data_ptr(), devicePtr(dev), size_t(bytes), toCU(stream)),
          "{}: copying {} bytes from cuda:{}", what, bytes, dc.ordinal());
    check(cu().cuStreamSynchronize(toCU(stream)), "{}: waiting for the copy", what);
  }
  return contiguous ? host : host.contiguous();
}

Tensor kite::cuda::clone(const Tensor &dev, Stream stream) {
  constexpr std::string_view what = "kite::cuda::clone";
  if (!dev.defined() || !dev.device().is_cuda())
    throw Error(fmt::format("{}: expects a CUDA tensor, got {}", what, describe(dev)));
  if (!dev.is_contiguous())
    throw Error(fmt::format("{}: expects a contiguous tensor, got strides {}", what,
                            shapeString(dev.strides())));
  Tensor out = allocate(dev.sizes(), dev.dtype(), stream, dev.device(), what);
  if (int64_t bytes = byteSize(dev)) {
    ContextScope scope(DeviceContext::get(dev.device().index));
    check(cu().cuMemcpyDtoDAsync(devicePtr(out), devicePtr(dev), size_t(bytes), toCU(stream)),
          "{}: copying {} bytes", what, bytes);
  }
  return out;
}

void kite::cuda::empty_cache(Device device) {
  DeviceContext &dc = cudaDevice(device, "cuda::empty_cache");
  if (!dc.pool())
    return;
  ContextScope scope(dc);
  releaseCached(dc, "cuda::empty_cache");
}

void kite::cuda::synchronize(Stream stream) {
  const DriverApi &api = cu();
  // The null stream belongs to the current context; use cuda:0's if the
  // thread has none.
  CUcontext current = nullptr;
  check(api.cuCtxGetCurrent(&current), "reading the current CUDA context");
  if (!current && !stream.handle) {
    ContextScope scope(DeviceContext::get(0));
    check(api.cuStreamSynchronize(nullptr), "synchronizing the default stream");
    return;
  }
  check(api.cuStreamSynchronize(toCU(stream)), "synchronizing a stream");
}
