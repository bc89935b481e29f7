//===- runtime_dlpack_test.cpp - DLPack exchange without a GPU ------------===//
//
// This file tests kite::to_dlpack and kite::from_dlpack on CPU tensors of
// every dtype: values, sizes, strides and offsets survive both directions,
// nothing is copied, each side's deleter runs exactly once (when the last
// handle drops), and what kite cannot take is refused with a message that
// names it (leaving the tensor with its owner). CUDA tensors are only
// wrapped, never touched, so their descriptors are checked here too.
//
//===----------------------------------------------------------------------===//

#include <kite/runtime.hpp>

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cstring>

using namespace kite;

namespace {

const DType kAllDTypes[] = {f16, bf16, f32, f64, i8, i32, i64, boolean, e4m3, e5m2};

/// Writes value v as element i of a buffer of `dtype`.
void put(void *buffer, DType dtype, int64_t i, double v) {
  switch (dtype) {
  case DType::f16: static_cast<half *>(buffer)[i] = half(float(v)); break;
  case DType::bf16: static_cast<bfloat16 *>(buffer)[i] = bfloat16(float(v)); break;
  case DType::f32: static_cast<float *>(buffer)[i] = float(v); break;
  case DType::f64: static_cast<double *>(buffer)[i] = v; break;
  case DType::i8: static_cast<int8_t *>(buffer)[i] = int8_t(v); break;
  case DType::i32: static_cast<int32_t *>(buffer)[i] = int32_t(v); break;
  case DType::i64: static_cast<int64_t *>(buffer)[i] = int64_t(v); break;
  case DType::boolean: static_cast<bool *>(buffer)[i] = v != 0; break;
  case DType::e4m3: static_cast<float8_e4m3 *>(buffer)[i] = float8_e4m3(float(v)); break;
  case DType::e5m2: static_cast<float8_e5m2 *>(buffer)[i] = float8_e5m2(float(v)); break;
  }
}

/// Element i's value in the test pattern (exact in every dtype).
double pattern(DType dtype, int64_t i) {
  if (dtype == e4m3 || dtype == e5m2) return double(i % 16 - 8);
  return dtype == boolean ? double(i % 3 == 0) : double(i % 50 - 20);
}

/// A producer's tensor: a buffer with a byte offset, strides and a deleter
/// that counts its calls.
struct Foreign {
  std::vector<uint8_t> buffer;
  std::vector<int64_t> shape, strides;
  int deleted = 0;
  DLManagedTensor managed{};
};

void foreignDeleter(DLManagedTensor *self) { ++static_cast<Foreign *>(self->manager_ctx)->deleted; }

DLDataType dlType(DType t) {
  switch (t) {
  case DType::f16: return {kDLFloat, 16, 1};
  case DType::bf16: return {kDLBfloat, 16, 1};
  case DType::f32: return {kDLFloat, 32, 1};
  case DType::f64: return {kDLFloat, 64, 1};
  case DType::i8: return {kDLInt, 8, 1};
  case DType::i32: return {kDLInt, 32, 1};
  case DType::i64: return {kDLInt, 64, 1};
  case DType::boolean: return {6 /* kDLBool */, 8, 1};
  case DType::e4m3: return {10 /* kDLFloat8_e4m3fn */, 8, 1};
  case DType::e5m2: return {12 /* kDLFloat8_e5m2 */, 8, 1};
  }
  return {};
}

/// A [3, 4] view with strides [1, 3] (column-major) starting 5 elements into
/// its buffer, element (r, c) = pattern(dtype, r + 3c).
void makeForeign(Foreign &f, DType dtype) {
  int64_t elem = element_size(dtype);
  f.buffer.assign(size_t((5 + 12) * elem), 0xAB);
  for (int64_t i = 0; i < 12; ++i)
    put(f.buffer.data() + 5 * elem, dtype, i, pattern(dtype, i));
  f.shape = {3, 4};
  f.strides = {1, 3};
  DLTensor &t = f.managed.dl_tensor;
  t.data = f.buffer.data();
  t.byte_offset = uint64_t(5 * elem);
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = dlType(dtype);
  t.shape = f.shape.data();
  t.strides = f.strides.data();
  f.managed.manager_ctx = &f;
  f.managed.deleter = foreignDeleter;
}

std::vector<double> expectedForeignValues(DType dtype) {
  std::vector<double> v;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 4; ++c)
      v.push_back(pattern(dtype, r + 3 * c));
  return v;
}

TEST(RuntimeDLPack, ImportEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    Foreign f;
    makeForeign(f, dtype);
    {
      Tensor t = from_dlpack(&f.managed);
      EXPECT_EQ(t.dtype(), dtype);
      EXPECT_EQ(t.sizes(), (std::vector<int64_t>{3, 4}));
      EXPECT_EQ(t.strides(), (std::vector<int64_t>{1, 3}));
      EXPECT_TRUE(t.device().is_cpu());
      EXPECT_EQ(t.data_ptr(), f.buffer.data() + 5 * element_size(dtype)) << "no copy";
      EXPECT_EQ(t.to_doubles(), expectedForeignValues(dtype));
      Tensor copy = t;
      t = Tensor();
      EXPECT_EQ(f.deleted, 0) << "a handle is still alive";
    }
    EXPECT_EQ(f.deleted, 1) << "the deleter runs once, with the last handle";
  }
}

TEST(RuntimeDLPack, ExportEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    // A kite tensor owning its memory through a counting deleter.
    int freed = 0;
    int64_t elem = element_size(dtype);
    auto *buffer = new uint8_t[size_t(24 * elem)];
    for (int64_t i = 0; i < 24; ++i)
      put(buffer, dtype, i, pattern(dtype, i));
    Tensor base = Tensor::from_blob(buffer, {4, 6}, {}, dtype, Device::cpu(), [&freed](void *p) {
      ++freed;
      delete[] static_cast<uint8_t *>(p);
    });
    Tensor view = base.transpose(0, 1); // [6, 4], strides [1, 6]
    std::vector<double> values = view.to_doubles();

    DLManagedTensor *dl = to_dlpack(view);
    const DLTensor &t = dl->dl_tensor;
    EXPECT_EQ(t.device.device_type, kDLCPU);
    EXPECT_EQ(t.dtype.code, dlType(dtype).code);
    EXPECT_EQ(t.dtype.bits, dlType(dtype).bits);
    EXPECT_EQ(t.dtype.lanes, 1);
    ASSERT_EQ(t.ndim, 2);
    EXPECT_EQ(std::vector<int64_t>(t.shape, t.shape + 2), (std::vector<int64_t>{6, 4}));
    EXPECT_EQ(std::vector<int64_t>(t.strides, t.strides + 2), (std::vector<int64_t>{1, 6}));
    EXPECT_EQ(static_cast<char *>(t.data) + t.byte_offset, view.data_ptr());

    // The export keeps the storage alive after kite's handles go.
    base = Tensor();
    view = Tensor();
    EXPECT_EQ(freed, 0);

    // Back into kite: the same memory, values and strides.
    {
      Tensor back = from_dlpack(dl);
      EXPECT_EQ(back.dtype(), dtype);
      EXPECT_EQ(back.sizes(), (std::vector<int64_t>{6, 4}));
      EXPECT_EQ(back.strides(), (std::vector<int64_t>{1, 6}));
      EXPECT_EQ(back.to_doubles(), values);
      EXPECT_EQ(freed, 0);
    }
    EXPECT_EQ(freed, 1) << "the storage is freed once, when the DLPack side lets go";
  }
}

TEST(RuntimeDLPack, ExportThenConsumerDeletes) {
  int freed = 0;
  auto *data = new float[8]();
  Tensor t = Tensor::from_blob(data, {8}, {}, f32, Device::cpu(), [&freed](void *p) {
    ++freed;
    delete[] static_cast<float *>(p);
  });
  DLManagedTensor *dl = to_dlpack(t);
  t = Tensor();
  EXPECT_EQ(freed, 0);
  dl->deleter(dl);
  EXPECT_EQ(freed, 1);
}

TEST(RuntimeDLPack, ZeroDimAndContiguousNullStrides) {
  Foreign f;
  makeForeign(f, f32);
  f.managed.dl_tensor.strides = nullptr; // compact row-major
  Tensor t = from_dlpack(&f.managed);
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{4, 1}));
  t = Tensor();
  EXPECT_EQ(f.deleted, 1);

  Tensor scalar = kite::full(std::vector<int64_t>{}, 2.5, f64);
  DLManagedTensor *dl = to_dlpack(scalar);
  EXPECT_EQ(dl->dl_tensor.ndim, 0);
  Tensor back = from_dlpack(dl);
  EXPECT_EQ(back.dim(), 0);
  EXPECT_EQ(back.item<double>(), 2.5);
}

TEST(RuntimeDLPack, CudaDescriptors) {
  // No GPU is needed: CUDA memory is wrapped, never read.
  Foreign f;
  makeForeign(f, bf16);
  f.managed.dl_tensor.device = {kDLCUDA, 1};
  Tensor t = from_dlpack(&f.managed);
  EXPECT_EQ(t.device(), Device::cuda(1));
  DLManagedTensor *dl = to_dlpack(t);
  EXPECT_EQ(dl->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(dl->dl_tensor.device.device_id, 1);
  dl->deleter(dl);
  t = Tensor();
  EXPECT_EQ(f.deleted, 1);
}

void expectRefused(Foreign &f, const std::string &message) {
  try {
    from_dlpack(&f.managed);
    ADD_FAILURE() << "accepted: " << message;
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
  EXPECT_EQ(f.deleted, 0) << "a refused tensor stays with its owner";
}

TEST(RuntimeDLPack, Refusals) {
  Foreign f;
  makeForeign(f, f32);
  f.managed.dl_tensor.dtype = {kDLUInt, 8, 1};
  expectRefused(f, "kite::from_dlpack: dtype uint8 has no kite counterpart (kite has f16, bf16, "
                   "f32, f64, i8, i32, i64, bool, float8_e4m3fn and float8_e5m2)");
  f.managed.dl_tensor.dtype = {kDLComplex, 64, 1};
  expectRefused(f, "kite::from_dlpack: dtype complex64 has no kite counterpart (kite has f16, "
                   "bf16, f32, f64, i8, i32, i64, bool, float8_e4m3fn and float8_e5m2)");
  f.managed.dl_tensor.dtype = {12 /* kDLFloat8_e5m2 */, 16, 1};
  expectRefused(f, "kite::from_dlpack: dtype float8_e5m216 has no kite counterpart (kite has f16, "
                   "bf16, f32, f64, i8, i32, i64, bool, float8_e4m3fn and float8_e5m2)");
  f.managed.dl_tensor.dtype = {kDLFloat, 32, 4};
  expectRefused(f, "kite::from_dlpack: vector dtype float32x4 (4 lanes) has no kite counterpart");
  f.managed.dl_tensor.dtype = {kDLFloat, 32, 1};
  f.managed.dl_tensor.device = {kDLVulkan, 0};
  expectRefused(f, "kite::from_dlpack: Vulkan tensors are not supported (kite takes CPU, CUDA "
                   "host, CUDA and CUDA managed memory)");
  f.managed.dl_tensor.device = {kDLCPU, 0};
  try {
    from_dlpack(nullptr);
    ADD_FAILURE();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), "kite::from_dlpack: null DLManagedTensor");
  }
  EXPECT_THROW(to_dlpack(Tensor()), Error);
}

} // namespace
