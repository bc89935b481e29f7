//===- DLPack.cpp - Exchanging tensors through DLPack ---------------------===//
//
// This file implements kite::from_dlpack and kite::to_dlpack, the zero-copy
// exchange with PyTorch, JAX, CuPy and any other DLPack producer or consumer.
// Imported memory is owned through the producer's deleter, which runs once,
// when the last kite handle drops; exported tensors keep kite's storage alive
// until the consumer calls the deleter kite installs.
//
//===----------------------------------------------------------------------===//

#include "runtime/TensorInfo.h"

#include <kite/runtime.hpp>

#include <dlpack/dlpack.h>
#include <fmt/format.h>

using namespace kite;
using namespace kite::runtime;

namespace {

// DLPack 0.8 added kDLBool (6); Debian 12 ships the 0.6 header.
constexpr uint8_t kDLBoolCode = 6;
#if defined(DLPACK_VERSION) && DLPACK_VERSION >= 80
static_assert(kDLBool == kDLBoolCode);
#endif
// DLPack 1.1's 8-bit float codes (PyTorch exports float8_e4m3fn and
// float8_e5m2 with them).
constexpr uint8_t kDLFloat8E4M3FNCode = 10;
constexpr uint8_t kDLFloat8E5M2Code = 12;
#if defined(DLPACK_VERSION) && DLPACK_VERSION >= 110
static_assert(kDLFloat8_e4m3fn == kDLFloat8E4M3FNCode && kDLFloat8_e5m2 == kDLFloat8E5M2Code);
#endif

DLDataType toDLDataType(DType t) {
  auto dt = [](uint8_t code, uint8_t bits) { return DLDataType{code, bits, 1}; };
  switch (t) {
  case DType::f16: return dt(kDLFloat, 16);
  case DType::bf16: return dt(kDLBfloat, 16);
  case DType::f32: return dt(kDLFloat, 32);
  case DType::f64: return dt(kDLFloat, 64);
  case DType::i8: return dt(kDLInt, 8);
  case DType::i32: return dt(kDLInt, 32);
  case DType::i64: return dt(kDLInt, 64);
  case DType::boolean: return dt(kDLBoolCode, 8);
  case DType::e4m3: return dt(kDLFloat8E4M3FNCode, 8);
  case DType::e5m2: return dt(kDLFloat8E5M2Code, 8);
  }
  throw Error("kite::to_dlpack: unknown dtype");
}

std::string dlTypeName(DLDataType t) {
  const char *code = "code?";
  switch (t.code) {
  case kDLInt: code = "int"; break;
  case kDLUInt: code = "uint"; break;
  case kDLFloat: code = "float"; break;
  case kDLOpaqueHandle: code = "opaque"; break;
  case kDLBfloat: code = "bfloat"; break;
  case kDLComplex: code = "complex"; break;
  case kDLBoolCode: code = "bool"; break;
  case kDLFloat8E4M3FNCode: code = "float8_e4m3fn"; break;
  case kDLFloat8E5M2Code: code = "float8_e5m2"; break;
  default: return fmt::format("type code {} with {} bits", int(t.code), int(t.bits));
  }
  std::string s = fmt::format("{}{}", code, int(t.bits));
  if (t.lanes != 1)
    s += fmt::format("x{}", int(t.lanes));
  return s;
}

DType fromDLDataType(DLDataType t) {
  if (t.lanes != 1)
    throw Error(fmt::format("kite::from_dlpack: vector dtype {} ({} lanes) has no kite "
                            "counterpart",
                            dlTypeName(t), int(t.lanes)));
  switch (t.code) {
  case kDLFloat:
    if (t.bits == 16) return DType::f16;
    if (t.bits == 32) return DType::f32;
    if (t.bits == 64) return DType::f64;
    break;
  case kDLBfloat:
    if (t.bits == 16) return DType::bf16;
    break;
  case kDLInt:
    if (t.bits == 8) return DType::i8;
    if (t.bits == 32) return DType::i32;
    if (t.bits == 64) return DType::i64;
    break;
  case kDLBoolCode:
    if (t.bits == 8) return DType::boolean;
    break;
  case kDLFloat8E4M3FNCode:
    if (t.bits == 8) return DType::e4m3;
    break;
  case kDLFloat8E5M2Code:
    if (t.bits == 8) return DType::e5m2;
    break;
  default: break;
  }
  throw Error(fmt::format("kite::from_dlpack: dtype {} has no kite counterpart (kite has f16, "
                          "bf16, f32, f64, i8, i32, i64, bool, float8_e4m3fn and float8_e5m2)",
                          dlTypeName(t)));
}

const char *dlDeviceName(int type) {
  switch (type) {
  case kDLCPU: return "CPU";
  case kDLCUDA: return "CUDA";
  case kDLCUDAHost: return "CUDA host (pinned)";
  case kDLOpenCL: return "OpenCL";
  case kDLVulkan: return "Vulkan";
  case kDLMetal: return "Metal";
  case kDLVPI: return "VPI";
  case kDLROCM: return "ROCm";
  case kDLROCMHost: return "ROCm host";
  case kDLExtDev: return "ExtDev";
  case kDLCUDAManaged: return "CUDA managed";
  default: return nullptr;
  }
}

/// What an exported tensor owns: the kite tensor (its storage stays alive)
/// and the arrays the DLTensor points into.
struct ExportContext {
  DLManagedTensor managed{};
  Tensor tensor;
  std::vector<int64_t> sizes, strides;
};

} // namespace

Tensor kite::from_dlpack(DLManagedTensor *managed) {
  if (!managed)
    throw Error("kite::from_dlpack: null DLManagedTensor");
  const DLTensor &t = managed->dl_tensor;
  Device device;
  switch (t.device.device_type) {
  case kDLCPU:
  case kDLCUDAHost: // pinned host memory: a CPU tensor the GPU can also read
    device = Device::cpu();
    break;
  case kDLCUDA:
  case kDLCUDAManaged:
    device = Device::cuda(t.device.device_id);
    break;
  default: {
    const char *name = dlDeviceName(t.device.device_type);
    throw Error(fmt::format("kite::from_dlpack: {} tensors are not supported (kite takes CPU, "
                            "CUDA host, CUDA and CUDA managed memory)",
                            name ? std::string(name)
                                 : fmt::format("device type {}", int(t.device.device_type))));
  }
  }
  DType dtype = fromDLDataType(t.dtype);
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
    throw Error(fmt::format("kite::from_dlpack: malformed tensor (ndim {}, shape {})", t.ndim,
                            t.shape ? "set" : "null"));
  std::vector<int64_t> sizes(t.shape, t.shape + t.ndim);
  checkedNumel(sizes, "kite::from_dlpack");
  // Null strides mean compact row-major (DLPack < 1.2 allows it).
  std::vector<int64_t> strides;
  if (t.strides)
    strides.assign(t.strides, t.strides + t.ndim);
  void *data = static_cast<char *>(t.data) + t.byte_offset;
  // Ownership passes only now that nothing can fail: the deleter runs once,
  // with the last handle.
  return Tensor::from_blob(data, std::move(sizes), std::move(strides), dtype, device,
                           [managed](void *) {
                             if (managed->deleter)
                               managed->deleter(managed);
                           });
}

DLManagedTensor *kite::to_dlpack(const Tensor &tensor) {
  if (!tensor.defined())
    throw Error("kite::to_dlpack: the tensor is undefined");
  Device device = tensor.device();
  auto ctx = std::make_unique<ExportContext>();
  ctx->tensor = tensor;
  ctx->sizes = tensor.sizes();
  ctx->strides = tensor.strides();
  DLTensor &t = ctx->managed.dl_tensor;
  if (device.is_cpu())
    t.device = DLDevice{kDLCPU, 0};
  else if (device.is_cuda())
    t.device = DLDevice{kDLCUDA, device.index};
  else
    throw Error(fmt::format("kite::to_dlpack: device {} cannot be exported", to_string(device)));
  t.dtype = toDLDataType(tensor.dtype());
  // data points at the storage's start and byte_offset at the first element,
  // as DLPack asks (some consumers require an aligned data pointer).
  const std::shared_ptr<Storage> &storage = tensor.storage();
  int64_t offsetBytes = tensor.storage_offset() * element_size(tensor.dtype());
  if (storage && storage->data) {
    t.data = storage->data;
    t.byte_offset = uint64_t(offsetBytes);
  } else {
    t.data = tensor.data_ptr();
    t.byte_offset = 0;
  }
  t.ndim = int32_t(ctx->sizes.size());
  t.shape = ctx->sizes.data();
  t.strides = ctx->strides.data();
  ctx->managed.manager_ctx = ctx.get();
  ctx->managed.deleter = [](DLManagedTensor *self) {
    delete static_cast<ExportContext *>(self->manager_ctx);
  };
  return &ctx.release()->managed;
}
