//===- Launch.cpp - Running kernel plans ----------------------------------===//
//
// This file implements kite::run_plan: the argument check against the plan's
// specs, the loaded-module cache keyed by (CUDA context, plan key), output
// allocation, parameter packing and cuLaunchKernel.
//
// The launch path is lean by construction: everything derived from the plan
// (the function handle, the parameter layout with constants already in
// place) is computed once, when the plan is loaded. A steady-state launch is
// a lock-free device lookup, one hash lookup, the argument checks (no
// allocation), the outputs' allocations, a copy of the parameter template
// into a stack buffer, and cuLaunchKernel. Error messages are built only when
// a check fails.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include "runtime/Launch.h"

#include "runtime/CompilerHook.h"
#include "runtime/Driver.h"
#include "runtime/Memory.h"
#include "runtime/PlanCache.h"
#include "runtime/PlanLog.h"
#include "runtime/TensorInfo.h"

#include <nvtx3/nvToolsExt.h>

#include <cxxabi.h>
#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

using namespace kite;
using namespace kite::runtime;

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

double KernelArg::scalar_as_double() const {
  switch (type) {
  case DType::f64:
  case DType::f32: return value.f;
  default: return double(value.i);
  }
}

KernelArg KernelArg::scalar(DType type, double v) {
  switch (type) {
  case DType::f64: return KernelArg(v);
  case DType::f32: return KernelArg(float(v));
  case DType::i32: return KernelArg(int(v));
  case DType::boolean: return KernelArg(v != 0);
  default: return KernelArg(int64_t(v));
  }
}

namespace {

std::string describeArg(const KernelArg &a) {
  if (a.kind == ArgSpec::Kind::scalar)
    return fmt::format("a scalar {}", dtype_name(a.type));
  return a.tensor ? describe(*a.tensor) : std::string("a null tensor reference");
}

std::string formatScalar(const KernelArg &a) {
  if (a.type == DType::boolean)
    return a.value.i ? "true" : "false";
  if (a.type == DType::f64 || a.type == DType::f32)
    return fmt::format("{}", a.value.f);
  return fmt::format("{}", a.value.i);
}

std::string formatSpecValue(const ArgSpec &s) {
  if (s.dtype == DType::boolean)
    return *s.value != 0 ? "true" : "false";
  return fmt::format("{}", *s.value);
}

/// The tensor's sizes equal the spec's; strides equal the spec's effective
/// strides except in dimensions of size 1, where they do not matter.
/// Allocation-free (this runs on every launch).
std::vector<std::string> argNames(const KernelPlan &plan) {
  std::vector<std::string> names;
  for (const ArgSpec &a : plan.args)
    names.push_back(a.name);
  return names;
}

/// A tensor's alignment class: the largest power of two up to 16 dividing
/// its address (as ArgSpec::of records it).
int64_t alignmentClass(const Tensor &t) {
  auto address = reinterpret_cast<uintptr_t>(t.data_ptr());
  int64_t alignment = 16;
  while (alignment > 1 && address % uint64_t(alignment) != 0)
    alignment /= 2;
  return alignment;
}

bool sizesMatch(const Tensor &t, const ArgSpec &s) {
  for (size_t d = 0; d < s.sizes.size(); ++d)
    if (!s.size_fits(d, t.size(int64_t(d))))
      return false;
  return true;
}

bool stridesMatch(const Tensor &t, const ArgSpec &s) {
  if (s.strides.empty()) {
    int64_t expected = 1;
    for (size_t d = s.sizes.size(); d-- > 0;) {
      int64_t size = t.size(int64_t(d)); // the spec's, or a dynamic dim's
      if (size != 1 && t.stride(int64_t(d)) != expected)
        return false;
      expected *= size;
    }
    return true;
  }
  for (size_t d = 0; d < s.sizes.size(); ++d)
    if (s.sizes[d] != 1 && t.stride(int64_t(d)) != s.strides[d])
      return false;
  return true;
}

} // namespace

int kite::validate_args(const KernelPlan &plan, std::span<const KernelArg> args) {
  auto fail = [&](std::string why) -> void {
    throw Error(fmt::format("kite::launch({}): {}", plan.name, why));
  };
  if (args.size() != plan.args.size()) {
    std::vector<std::string> names;
    for (const ArgSpec &s : plan.args)
      names.push_back(s.name);
    fail(fmt::format("expected {} argument{} ({}), got {}", plan.args.size(),
                     plan.args.size() == 1 ? "" : "s", fmt::join(names, ", "), args.size()));
  }
  int ordinal = -1;
  size_t firstTensor = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg &a = args[i];
    const ArgSpec &s = plan.args[i];
    if (!s.is_tensor()) {
      if (a.kind != ArgSpec::Kind::scalar || a.type != s.dtype)
        fail(fmt::format("argument '{}' must be a scalar {}, got {}", s.name, dtype_name(s.dtype),
                         describeArg(a)));
      if (s.value && a.scalar_as_double() != *s.value)
        fail(fmt::format("argument '{}' is specialized to {} in this plan, got {}", s.name,
                         formatSpecValue(s), formatScalar(a)));
      continue;
    }
    if (a.kind != ArgSpec::Kind::tensor || !a.tensor || !a.tensor->defined())
      fail(fmt::format("argument '{}' must be a tensor, got {}", s.name, describeArg(a)));
    const Tensor &t = *a.tensor;
    Device device = t.device();
    if (!device.is_cuda())
      fail(fmt::format("argument '{}' must be a CUDA tensor, got {}", s.name, describe(t)));
    if (ordinal < 0) {
      ordinal = device.index;
      firstTensor = i;
    } else if (device.index != ordinal) {
      fail(fmt::format("argument '{}' is on cuda:{}, but argument '{}' is on cuda:{}; all "
                       "tensors of a launch must be on one device",
                       s.name, device.index, plan.args[firstTensor].name, ordinal));
    }
    if (t.dtype() != s.dtype)
      fail(fmt::format("argument '{}' must be {}, got {}", s.name, dtype_name(s.dtype),
                       describe(t)));
    if (size_t(t.dim()) != s.sizes.size())
      fail(fmt::format("argument '{}' must have {} dimension{}, got {}", s.name, s.sizes.size(),
                       s.sizes.size() == 1 ? "" : "s", describe(t)));
    if (!sizesMatch(t, s)) {
      if (s.divisors.empty())
        fail(fmt::format("argument '{}' must have sizes {} (the plan is specialized for them), "
                         "got {}",
                         s.name, shapeString(s.sizes), describe(t)));
      fail(fmt::format("argument '{}' must have sizes {} (the plan's shape class: ? and ?* are "
                       "any size of at least 2, ?N a multiple of N, <=B a size above B/2 up "
                       "to B), got {}",
                       s.name, s.str().substr(s.str().find('[')), describe(t)));
    }
    if (s.index32 && !ArgSpec::fits_index32(t.numel()))
      fail(fmt::format("argument '{}' has {} elements, too many for the plan's 32-bit offsets "
                       "(it was compiled for fewer than {})",
                       s.name, t.numel(), int64_t(1) << 29));
    if (!stridesMatch(t, s))
      fail(fmt::format("argument '{}' must have strides {} (the plan is specialized for them), "
                       "got strides {}",
                       s.name, shapeString(s.effective_strides()), shapeString(t.strides())));
    if (s.alignment > 1 && reinterpret_cast<uintptr_t>(t.data_ptr()) % uint64_t(s.alignment) != 0)
      fail(fmt::format("argument '{}' must be {}-byte aligned (the plan is specialized for it), "
                       "got address {} (storage offset {})",
                       s.name, s.alignment, t.data_ptr(), t.storage_offset()));
  }
  for (const LaunchCheck &c : plan.checks) [[unlikely]] {
    int64_t lhs = evaluate(c.lhs, args), rhs = evaluate(c.rhs, args);
    if (lhs > rhs) {
      std::vector<std::string> names = argNames(plan);
      fail(fmt::format("{}, but {} = {} is more than {} = {}", c.message, c.lhs.str(names), lhs,
                       c.rhs.str(names), rhs));
    }
  }
  return ordinal < 0 ? 0 : ordinal;
}

namespace {

struct Hasher {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(uint64_t v) {
    // FNV-1a over the 8 bytes, then a final avalanche in value().
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  uint64_t value() const {
    uint64_t x = h;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
  }
};

} // namespace

namespace {

/// Runs a launch expression with `size(index, dim)` and `scalar(index)`
/// reading its operands (each returns nullopt for an operand it lacks).
template <class SizeOf, class ScalarOf>
int64_t run(const LaunchExpr &expr, SizeOf size, ScalarOf scalar) {
  int64_t stack[16];
  int depth = 0;
  auto fail = [&](const char *why) -> void {
    throw Error(fmt::format("kite: cannot evaluate launch expression {}: {}", expr.str(), why));
  };
  for (const LaunchExpr::Term &t : expr.terms) {
    using Op = LaunchExpr::Op;
    int64_t v = 0;
    switch (t.op) {
    case Op::constant: v = t.value; break;
    case Op::argSize: {
      std::optional<int64_t> s = size(t.index, t.dim);
      if (!s)
        fail("no such argument size");
      v = *s;
      break;
    }
    case Op::argScalar: {
      std::optional<int64_t> s = scalar(t.index);
      if (!s)
        fail("no such scalar argument");
      v = *s;
      break;
    }
    default: {
      if (depth < 2)
        fail("an operation lacks operands");
      int64_t b = stack[--depth], a = stack[--depth];
      switch (t.op) {
      case Op::add: v = a + b; break;
      case Op::sub: v = a - b; break;
      case Op::mul: v = a * b; break;
      case Op::ceildiv:
      case Op::floordiv:
        if (b <= 0)
          fail("a division by a number that is not positive");
        v = t.op == Op::floordiv ? (a >= 0 ? a / b : -((-a + b - 1) / b))
                                 : (a >= 0 ? (a + b - 1) / b : -(-a / b));
        break;
      case Op::min: v = std::min(a, b); break;
      case Op::max: v = std::max(a, b); break;
      default: fail("an unknown operation");
      }
    }
    }
    if (depth == 16)
      fail("deeper than 16 values");
    stack[depth++] = v;
  }
  if (depth != 1)
    fail("it does not leave one value");
  return stack[0];
}

} // namespace

int64_t kite::evaluate(const LaunchExpr &expr, std::span<const KernelArg> args) {
  return run(
      expr,
      [&](uint32_t i, uint32_t d) -> std::optional<int64_t> {
        if (i >= args.size() || !args[i].tensor || d >= size_t(args[i].tensor->dim()))
          return std::nullopt;
        return args[i].tensor->size(int64_t(d));
      },
      [&](uint32_t i) -> std::optional<int64_t> {
        if (i >= args.size() || args[i].kind != ArgSpec::Kind::scalar)
          return std::nullopt;
        return args[i].value.i;
      });
}

int64_t kite::evaluate(const LaunchExpr &expr, std::span<const ArgSpec> specs) {
  return run(
      expr,
      [&](uint32_t i, uint32_t d) -> std::optional<int64_t> {
        if (i >= specs.size() || !specs[i].is_tensor() || d >= specs[i].sizes.size() ||
            specs[i].is_dynamic(d))
          return std::nullopt;
        return specs[i].sizes[d];
      },
      [&](uint32_t i) -> std::optional<int64_t> {
        if (i >= specs.size() || specs[i].is_tensor() || !specs[i].value)
          return std::nullopt;
        return int64_t(*specs[i].value);
      });
}

uint64_t kite::specialization_hash(std::span<const KernelArg> args) {
  return specialization_hash(args, false);
}

uint64_t kite::specialization_hash(std::span<const KernelArg> args, bool dynamic_shapes) {
  Hasher hash;
  hash.add(uint64_t(dynamic_shapes));
  hash.add(args.size());
  for (const KernelArg &a : args) {
    hash.add(uint64_t(a.kind));
    if (a.kind == ArgSpec::Kind::scalar) {
      hash.add(uint64_t(a.type));
      if (a.type == DType::boolean)
        hash.add(uint64_t(a.value.i != 0));
      continue;
    }
    if (!a.tensor || !a.tensor->defined()) {
      hash.add(~uint64_t(0));
      continue;
    }
    const Tensor &t = *a.tensor;
    Device device = t.device();
    hash.add(uint64_t(t.dtype()));
    hash.add(uint64_t(device.kind) << 32 | uint32_t(device.index));
    int64_t rank = t.dim();
    hash.add(uint64_t(rank));
    if (dynamic_shapes && t.is_contiguous()) {
      // The shape class: 0, 1, or a divisor class (tagged apart from sizes).
      hash.add(uint64_t(1) << 63);
      // With the bucket a held row of that length has: plans that keep the
      // dim unbucketed serve several keys (the launch finds them by
      // servesExactly the first time a key appears).
      for (int64_t d = 0; d < rank; ++d) {
        int64_t size = t.size(d);
        hash.add(size <= 1 ? uint64_t(size)
                           : (uint64_t(1) << 62) | uint64_t(ArgSpec::size_bound(size)) << 8 |
                                 uint64_t(ArgSpec::size_divisor(size)));
      }
      hash.add(ArgSpec::fits_index32(t.numel()));
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        int64_t size = t.size(d);
        hash.add(uint64_t(size));
        hash.add(size == 1 ? 0 : uint64_t(t.stride(d)));
      }
    }
    hash.add(uint64_t(alignmentClass(t)));
  }
  return hash.value();
}

//===----------------------------------------------------------------------===//
// Loaded plans and the module cache
//===----------------------------------------------------------------------===//

namespace {

/// A plan loaded into one context: the function and the parameter layout.
struct LoadedPlan {
  struct Slot {
    ParamSpec::Kind kind;
    DType type; // argScalar: the scalar's type
    uint32_t index, dim;
    uint32_t offset;
    TensorMapSpec map; // argTensorMap
  };
  Module module;
  CUfunction function = nullptr;
  /// kite_stage_rows, where a tensor map is staged (TensorMapSpec::staged).
  CUfunction stage = nullptr;
  /// Whether a launch allocates memory for its parameters: staged tensor
  /// maps' copies or workspaces.
  bool scratch = false;
  std::vector<Slot> slots;
  /// The parameter buffer with constants in place; copied per launch.
  std::vector<uint8_t> image;
  bool emptyGrid = false;
  /// The grid launched: the plan's, or for a persistent plan as many
  /// programs as the device holds at once (at most the plan's grid[0]).
  std::array<uint32_t, 3> grid = {1, 1, 1};
  /// A persistent plan's programs the device holds at once (the most a
  /// launch of a plan with a grid expression runs).
  uint64_t residentPrograms = UINT32_MAX;
  /// "softmax {config}", registered once in the NVTX domain "kite": every
  /// launch is a range of that name in Nsight Systems.
  nvtxStringHandle_t nvtxName = nullptr;
};

/// The NVTX domain of kite's launch ranges. Without a profiler attached,
/// NVTX calls are no-ops after the first.
nvtxDomainHandle_t nvtxDomain() {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("kite");
  return domain;
}

/// An NVTX range for the scope of a launch.
struct NvtxRange {
  explicit NvtxRange(nvtxStringHandle_t name) {
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = name;
    nvtxDomainRangePushEx(nvtxDomain(), &a);
  }
  ~NvtxRange() { nvtxDomainRangePop(nvtxDomain()); }
  NvtxRange(const NvtxRange &) = delete;
  NvtxRange &operator=(const NvtxRange &) = delete;
};

/// What a tensor map's encoding reads that varies between launches (the
/// interleave, element strides, L2 promotion and fill are always the same).
struct TensorMapKey {
  CUtensorMapDataType type{};
  int rank = 0, swizzle = 0;
  void *data = nullptr;
  cuuint64_t dims[5] = {}, strides[4] = {};
  cuuint32_t box[5] = {};
  bool operator==(const TensorMapKey &) const = default;
};

/// The tensor maps this thread encoded last: a launch that passes the same
/// tensor as a recent one (weights, a KV cache, a caching allocator's
/// block) copies its 128 bytes instead of asking the driver again. The
/// encoding is a pure function of the key (no context), so an entry never
/// goes stale.
class TensorMapCache {
public:
  const CUtensorMap *find(const TensorMapKey &k) const {
    for (const Entry &e : entries_)
      if (e.used && e.key == k)
        return &e.map;
    return nullptr;
  }
  void insert(const TensorMapKey &k, const CUtensorMap &map) {
    Entry &e = entries_[next_];
    next_ = (next_ + 1) % entries_.size();
    e = {k, map, true};
  }

private:
  struct Entry {
    TensorMapKey key;
    CUtensorMap map;
    bool used = false;
  };
  std::array<Entry, 8> entries_{};
  size_t next_ = 0;
};

/// Writes the CUtensorMap of the tensor at `data` with `sizes` and `strides`
/// (elements, outermost first) tiled by `spec` to `dst` (128 bytes): dims
/// innermost first, zero fill past the tensor's bounds.
void encodeTensorMap(uint8_t *dst, void *data, const int64_t *sizes, const int64_t *strides,
                     DType dtype, const TensorMapSpec &spec, const KernelPlan &plan) {
  CUtensorMapDataType type;
  switch (dtype) {
  case DType::bf16: type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; break;
  case DType::f16: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
  case DType::f32: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
  case DType::f64: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT64; break;
  case DType::i32: type = CU_TENSOR_MAP_DATA_TYPE_INT32; break;
  case DType::i64: type = CU_TENSOR_MAP_DATA_TYPE_INT64; break;
  case DType::i8:
  case DType::e4m3:
  case DType::e5m2: type = CU_TENSOR_MAP_DATA_TYPE_UINT8; break; // bytes, as copied
  default:
    throw Error(fmt::format("kite::launch: {} cannot copy {} tensors by TMA", plan.name,
                            dtype_name(dtype)));
  }
  const int rank = spec.rank;
  const uint64_t elem = uint64_t(element_size(dtype));
  TensorMapKey k;
  k.type = type;
  k.rank = rank;
  k.swizzle = spec.swizzle & 3;
  k.data = data;
  const cuuint32_t elementStrides[5] = {1, 1, 1, 1, 1};
  if (spec.rowSplits.empty()) {
    for (int d = 0; d < rank; ++d) {
      int src = rank - 1 - d; // CUDA lists dims innermost first
      k.dims[d] = cuuint64_t(sizes[src]);
      k.box[d] = spec.box[src];
      if (d > 0)
        k.strides[d - 1] = cuuint64_t(strides[src]) * elem;
    }
  } else {
    // Row blocks (TensorMapSpec::rowSplits): the rows folded into one dim,
    // split into the map's dims, a block a copy.
    int64_t rows = 1;
    for (int d = 0; d + 1 < rank; ++d) {
      if (d + 2 < rank && strides[d] != strides[d + 1] * sizes[d + 1])
        throw Error(fmt::format("kite::launch: {} copies the rows of a tensor in blocks, which "
                                "needs its dims before the last contiguous; dim {} has stride {}, "
                                "not {}",
                                plan.name, d, strides[d], strides[d + 1] * sizes[d + 1]));
      rows *= sizes[d];
    }
    const uint64_t rowBytes = uint64_t(strides[rank - 2]) * elem;
    k.rank = int(spec.rowSplits.size()) + 2;
    k.dims[0] = cuuint64_t(sizes[rank - 1]);
    k.box[0] = spec.box[rank - 1];
    int64_t reach = 0; // the last row of a block, from its first
    for (size_t i = 0; i < spec.rowSplits.size(); ++i) {
      const TensorMapSpec::RowSplit &s = spec.rowSplits[i];
      k.dims[i + 1] = s.count;
      k.box[i + 1] = s.count;
      k.strides[i] = s.stride * rowBytes;
      reach += int64_t(s.count - 1) * s.stride;
    }
    // First rows whose block lies inside the tensor. (A tensor too short
    // for any block gets one, which the kernel never copies: it copies
    // blocks of whole tiles only.)
    k.dims[k.rank - 1] = cuuint64_t(rows > reach ? (rows - 1 - reach) / spec.rowStep + 1 : 1);
    k.box[k.rank - 1] = 1;
    k.strides[k.rank - 2] = spec.rowStep * rowBytes;
  }
  thread_local TensorMapCache cache;
  if (const CUtensorMap *hit = cache.find(k)) {
    std::memcpy(dst, hit, sizeof(*hit));
    return;
  }
  static const CUtensorMapSwizzle swizzles[] = {
      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
      CU_TENSOR_MAP_SWIZZLE_128B};
  CUtensorMap map;
  check(cu().cuTensorMapEncodeTiled(&map, type, cuuint32_t(k.rank), k.data, k.dims, k.strides,
                                    k.box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                    swizzles[k.swizzle], CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "encoding the TMA descriptor of a {}-D {} tensor for {}", rank, dtype_name(dtype),
        plan.name);
  cache.insert(k, map);
  std::memcpy(dst, &map, sizeof(map));
}

/// kite_stage_rows's parameter (kite_gemm.cuh's KiteStageRows, field for
/// field): the rows of a tensor (all dims but the last, `outer` of them,
/// with their sizes and byte strides, outermost first) copied to `dst`, one
/// every `pitch` bytes (a multiple of 16), the bytes past `rowBytes` zero.
struct StageRowsParams {
  const void *src;
  void *dst;
  int64_t rowBytes, pitch, rows;
  int64_t sizes[4], strides[4];
  int32_t outer;
};

/// The strides, in elements, of stageRows' copy of `t`: its rows padded to
/// 16 bytes, the dims before them packed.
void stagedStrides(const Tensor &t, DType dtype, int64_t *strides) {
  const int rank = int(t.dim());
  const int64_t elem = element_size(dtype);
  strides[rank - 1] = 1;
  for (int d = rank - 2; d >= 0; --d)
    strides[d] = d == rank - 2 ? (t.size(rank - 1) * elem + 15) / 16 * 16 / elem
                               : strides[d + 1] * t.size(d + 1);
}

/// A staged tensor map's tensor: `t` copied on `stream` into a buffer whose
/// rows are padded to 16-byte multiples. Returns the buffer (which must
/// live until the launch that reads it is enqueued) and writes the copy's
/// strides, in elements, to `strides`.
Tensor stageRows(DeviceContext &dc, const LoadedPlan &lp, const Tensor &t, DType dtype,
                 Stream stream, int64_t *strides, const KernelPlan &plan) {
  const int rank = int(t.dim());
  const int64_t elem = element_size(dtype);
  StageRowsParams p{};
  p.outer = rank - 1;
  p.rowBytes = t.size(rank - 1) * elem;
  p.pitch = (p.rowBytes + 15) / 16 * 16;
  p.rows = 1;
  for (int d = 0; d < rank - 1; ++d) {
    p.sizes[d] = t.size(d);
    p.strides[d] = t.stride(d) * elem;
    p.rows *= t.size(d);
  }
  stagedStrides(t, dtype, strides);
  Tensor buffer = allocateDevice(dc, {p.rows * p.pitch}, DType::i8, stream, false,
                                 "kite::launch: the padded copy of an operand");
  p.src = t.data_ptr();
  p.dst = buffer.data_ptr();
  if (p.rows > 0 && p.pitch > 0) {
    // A warp a run of 128 chunks of 16 bytes of one row (kite_gemm.cuh's
    // KITE_STAGE_UNROLL), 8 warps a block, at most 8 blocks an SM, each
    // looping over runs.
    const int64_t runs = p.rows * ((p.pitch / 16 + 127) / 128);
    int64_t blocks = std::min<int64_t>((runs + 7) / 8,
                                       int64_t(std::max(dc.properties().smCount, 1)) * 8);
    void *params[] = {&p};
    check(cu().cuLaunchKernel(lp.stage, uint32_t(blocks), 1, 1, 256, 1, 1, 0, toCU(stream), params,
                              nullptr),
          "launching kite_stage_rows of {} (a padded copy of {} rows of {} bytes)", plan.name,
          p.rows, p.rowBytes);
  }
  return buffer;
}

size_t scalarBytes(DType t) {
  switch (t) {
  case DType::i64:
  case DType::f64: return 8;
  case DType::i32:
  case DType::f32: return 4;
  default: return 1;
  }
}

/// Whether a device of compute capability major.minor runs a binary for
/// `arch` ("sm_90a", "sm_80", "compute_90"). Architecture-specific targets
/// ("a") run on exactly their capability; family ones ("f") on the same
/// major with a minor at least theirs; plain cubins likewise; PTX on any
/// capability at least its own (the driver compiles it).
bool archRuns(std::string_view arch, int major, int minor) {
  bool ptx = arch.starts_with("compute_");
  std::string_view digits = arch.substr(ptx ? 8 : arch.starts_with("sm_") ? 3 : 0);
  char suffix = 0;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    suffix = digits.back();
    digits.remove_suffix(1);
  }
  if (digits.size() < 2)
    return true; // not a form kite knows: let the driver decide
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return true;
    value = value * 10 + (c - '0');
  }
  int archMajor = value / 10, archMinor = value % 10;
  if (suffix == 'a')
    return major == archMajor && minor == archMinor;
  if (ptx)
    return major > archMajor || (major == archMajor && minor >= archMinor);
  return major == archMajor && minor >= archMinor;
}

std::unique_ptr<LoadedPlan> loadPlan(DeviceContext &dc, const KernelPlan &plan) {
  validate_plan(plan);
  const DeviceProperties &props = dc.properties();
  std::string device = fmt::format("cuda:{} ({}, sm_{}{})", dc.ordinal(), props.name,
                                   props.computeMajor, props.computeMinor);
  auto fail = [&](std::string why) -> void {
    throw Error(fmt::format("kite::launch({}): {}", plan.name, why));
  };
  if (!plan.arch.empty() && !archRuns(plan.arch, props.computeMajor, props.computeMinor))
    fail(fmt::format("the plan's binary is {} for {}, which {} cannot run; compile the kernel for "
                     "this GPU ({})",
                     plan.binaryKind == KernelPlan::Binary::ptx ? "PTX" : "a cubin", plan.arch,
                     device, props.arch()));
  for (int i = 1; i < 3; ++i)
    if (plan.grid[i] > 65535)
      fail(fmt::format("grid dimension {} is {}, past CUDA's limit of 65535", "xyz"[i],
                       plan.grid[i]));

  auto lp = std::make_unique<LoadedPlan>();
  std::string what = fmt::format("kernel {} ({}) on {}", plan.name, plan.kernelName, device);
  if (plan.binaryKind == KernelPlan::Binary::ptx && plan.binary.back() != 0) {
    std::string ptx(plan.binary.begin(), plan.binary.end()); // the driver wants a C string
    lp->module = Module(ptx.c_str(), what);
  } else {
    lp->module = Module(plan.binary.data(), what);
  }
  lp->function = lp->module.function(plan.kernelName.c_str());
  lp->nvtxName = nvtxDomainRegisterStringA(
      nvtxDomain(), (plan.name + (plan.config.empty() ? "" : " " + plan.config)).c_str());

  const DriverApi &api = cu();
  auto attribute = [&](CUfunction_attribute a, const char *name) {
    int v = 0;
    check(api.cuFuncGetAttribute(&v, a, lp->function), "reading {} of {}", name, what);
    return v;
  };
  int maxThreads = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "the thread limit");
  int registers = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, "the register count");
  int staticShared = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "the static shared memory");
  uint64_t threads = uint64_t(plan.block[0]) * plan.block[1] * plan.block[2];
  if (threads > uint64_t(maxThreads))
    fail(fmt::format("the plan launches {} threads per block, but kernel {} allows at most {} on "
                     "{} (it uses {} registers per thread)",
                     threads, plan.kernelName, maxThreads, device, registers));
  uint64_t shared = uint64_t(staticShared) + plan.dynamicSharedBytes;
  if (shared > uint64_t(props.maxSharedMemoryPerBlockOptin))
    fail(fmt::format("the plan needs {} bytes of shared memory per block ({} static + {} "
                     "dynamic), but {} allows at most {}",
                     shared, staticShared, plan.dynamicSharedBytes, device,
                     props.maxSharedMemoryPerBlockOptin));
  if (shared > uint64_t(props.maxSharedMemoryPerBlock))
    check(api.cuFuncSetAttribute(lp->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 int(plan.dynamicSharedBytes)),
          "allowing {} bytes of dynamic shared memory for {}", plan.dynamicSharedBytes, what);

  // The parameter layout: each parameter 8-byte aligned (tensor maps
  // 64-byte aligned) in one buffer, so the launch copies the template and
  // patches the run-time values.
  uint32_t offset = 0;
  for (const ParamSpec &p : plan.params) {
    LoadedPlan::Slot slot{p.kind, DType::f32, p.index, p.dim, offset, {}};
    size_t size = 8;
    if (p.kind == ParamSpec::Kind::argScalar) {
      slot.type = plan.args[p.index].dtype;
      size = scalarBytes(slot.type);
    } else if (p.kind == ParamSpec::Kind::constant) {
      size = p.bytes.size();
    } else if (p.kind == ParamSpec::Kind::argTensorMap) {
      offset = (offset + 63) / 64 * 64;
      slot.offset = offset;
      slot.type = plan.args[p.index].dtype;
      slot.map = TensorMapSpec::decode(p.bytes);
      size = sizeof(CUtensorMap);
    }
    lp->slots.push_back(slot);
    offset += uint32_t((size + 7) / 8 * 8);
  }
  if (std::any_of(lp->slots.begin(), lp->slots.end(), [](const LoadedPlan::Slot &s) {
        return s.kind == ParamSpec::Kind::argTensorMap && s.map.staged;
      }))
    lp->stage = lp->module.function("kite_stage_rows");
  lp->scratch = lp->stage || std::any_of(lp->slots.begin(), lp->slots.end(), [](const auto &s) {
                  return s.kind == ParamSpec::Kind::workspace;
                });
  lp->image.assign(offset, 0);
  for (size_t i = 0; i < plan.params.size(); ++i)
    if (plan.params[i].kind == ParamSpec::Kind::constant)
      std::memcpy(lp->image.data() + lp->slots[i].offset, plan.params[i].bytes.data(),
                  plan.params[i].bytes.size());
  lp->emptyGrid = plan.gridExpr.empty() && (plan.grid[0] == 0 || plan.grid[1] == 0 ||
                                             plan.grid[2] == 0);
  lp->grid = plan.grid;
  if (plan.persistent && !lp->emptyGrid) {
    // The kernel loops over its program ids by gridDim.x: every SM gets as
    // many programs as it holds at once. Fewer leave SMs idle (one program
    // per SM ran RMS norm 16384x768 at a half of its speed with 128-thread
    // programs, a sixth with 32); more queue behind the resident ones and
    // run their share after them.
    uint64_t programs = 0;
    if (plan.clusterSize > 1) {
      // Whole clusters: as many as the device holds at once (an SM's
      // programs of a cluster sit in one GPC, so this can be fewer than
      // the SMs' count over the cluster size).
      CUlaunchConfig lc{};
      lc.gridDimX = plan.grid[0];
      lc.gridDimY = lc.gridDimZ = 1;
      lc.blockDimX = threads;
      lc.blockDimY = lc.blockDimZ = 1;
      lc.sharedMemBytes = plan.dynamicSharedBytes;
      int clusters = 0;
      check(api.cuOccupancyMaxActiveClusters(&clusters, lp->function, &lc),
            "reading the cluster occupancy of {}", what);
      programs = uint64_t(std::max(clusters, 1)) * plan.clusterSize;
    } else {
      int perSM = 0;
      check(api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, lp->function, int(threads),
                                                            plan.dynamicSharedBytes),
            "reading the occupancy of {}", what);
      programs = uint64_t(std::max(perSM, 1)) * uint64_t(std::max(props.smCount, 1));
    }
    lp->residentPrograms = programs;
    lp->grid[0] = uint32_t(std::min<uint64_t>(programs, plan.grid[0]));
  }
  return lp;
}

class ModuleCache {
public:
  const LoadedPlan &get(DeviceContext &dc, const KernelPlan &plan) {
    if (plan.key.empty()) [[unlikely]]
      throw Error(fmt::format("kite::launch({}): the plan has no key; the compiler gives every "
                              "plan one (kernel IR hash, specialization, config)",
                              plan.name));
    std::lock_guard<std::mutex> lock(mutex_);
    auto &plans = contexts_[dc.context()];
    auto it = plans.find(plan.key);
    if (it != plans.end()) [[likely]] {
      // A cheap guard on the key contract (one key, one plan).
      if (it->second->slots.size() != plan.params.size()) [[unlikely]]
        throw Error(fmt::format("kite::launch({}): two different plans share the key '{}'",
                                plan.name, plan.key));
      return *it->second;
    }
    // Loading happens under the lock: it is rare, and two threads must not
    // load one plan twice.
    return *plans.emplace(plan.key, loadPlan(dc, plan)).first->second;
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    for (auto &[ctx, plans] : contexts_)
      n += plans.size();
    return n;
  }

  bool evict(std::string_view key) {
    std::lock_guard<std::mutex> lock(mutex_);
    bool found = false;
    for (auto &[ctx, plans] : contexts_) {
      auto it = plans.find(std::string(key));
      if (it == plans.end())
        continue;
      ContextScope scope(ctx);
      plans.erase(it);
      found = true;
    }
    return found;
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto &[ctx, plans] : contexts_) {
      ContextScope scope(ctx);
      plans.clear();
    }
    contexts_.clear();
  }

private:
  std::mutex mutex_;
  std::unordered_map<CUcontext, std::unordered_map<std::string, std::unique_ptr<LoadedPlan>>>
      contexts_;
};

ModuleCache &moduleCache() {
  // Leaked: modules must not be unloaded after the driver shut down at exit.
  static ModuleCache *cache = new ModuleCache();
  return *cache;
}

} // namespace

size_t kite::runtime::moduleCacheSize() { return moduleCache().size(); }
bool kite::runtime::evictPlan(std::string_view key) { return moduleCache().evict(key); }
void kite::runtime::clearModuleCache() { moduleCache().clear(); }

void kite::preload_plan(const KernelPlan &plan, int device) {
  DeviceContext &dc = DeviceContext::get(device);
  ContextScope scope(dc);
  moduleCache().get(dc, plan);
}

namespace {
/// The address and size of a plan's __device__ variable `name`.
std::pair<CUdeviceptr, size_t> planGlobal(const LoadedPlan &lp, const KernelPlan &plan,
                                          std::string_view name) {
  CUdeviceptr address = 0;
  size_t bytes = 0;
  std::string n(name);
  CUresult r = cu().cuModuleGetGlobal(&address, &bytes, lp.module.get(), n.c_str());
  if (r == CUDA_ERROR_NOT_FOUND)
    throw Error(fmt::format("the kernel binary of {} has no device variable '{}'", plan.name, n));
  check(r, "looking up device variable '{}' of {}", n, plan.name);
  return {address, bytes};
}
} // namespace

std::vector<uint8_t> kite::runtime::readPlanGlobal(const KernelPlan &plan, std::string_view name,
                                                   int device) {
  DeviceContext &dc = DeviceContext::get(device);
  ContextScope scope(dc);
  auto [address, bytes] = planGlobal(moduleCache().get(dc, plan), plan, name);
  std::vector<uint8_t> out(bytes);
  check(cu().cuCtxSynchronize(), "waiting for the device before reading '{}'", name);
  check(cu().cuMemcpyDtoHAsync(out.data(), address, bytes, nullptr), "reading '{}'", name);
  check(cu().cuCtxSynchronize(), "reading '{}'", name);
  return out;
}

void kite::runtime::zeroPlanGlobal(const KernelPlan &plan, std::string_view name, int device) {
  DeviceContext &dc = DeviceContext::get(device);
  ContextScope scope(dc);
  auto [address, bytes] = planGlobal(moduleCache().get(dc, plan), plan, name);
  check(cu().cuMemsetD8Async(address, 0, bytes, nullptr), "zeroing '{}'", name);
  check(cu().cuCtxSynchronize(), "zeroing '{}'", name);
}

//===----------------------------------------------------------------------===//
// Launching
//===----------------------------------------------------------------------===//

namespace {

/// A buffer on the stack for the common case, on the heap past it.
template <class T, size_t N> class SmallBuffer {
public:
  explicit SmallBuffer(size_t n) : size_(n) {
    if (n > N) {
      heap_.resize(n);
      data_ = heap_.data();
    } else {
      data_ = local_.data();
    }
  }
  T &operator[](size_t i) { return data_[i]; }
  T *data() { return data_; }
  size_t size() const { return size_; }

private:
  std::array<T, N> local_; // default-initialized: no per-launch zeroing
  std::vector<T> heap_;
  T *data_;
  size_t size_;
};

} // namespace

namespace {
std::atomic<int> gPoison{-1};   // -1: not read from the environment yet
thread_local int tPoison = -1;  // a PoisonOutputsScope's setting; -1: none
} // namespace

bool kite::runtime::poisonOutputs() {
  if (tPoison >= 0) [[unlikely]]
    return tPoison;
  int p = gPoison.load(std::memory_order_relaxed);
  if (p < 0) [[unlikely]] {
    const char *env = std::getenv("KITE_POISON_OUTPUTS");
    p = env && *env && std::string_view(env) != "0";
    gPoison.store(p, std::memory_order_relaxed);
  }
  return p;
}

void kite::runtime::setPoisonOutputs(bool on) { gPoison.store(on, std::memory_order_relaxed); }

kite::runtime::PoisonOutputsScope::PoisonOutputsScope(bool on) : previous_(tPoison) {
  tPoison = on;
}

kite::runtime::PoisonOutputsScope::~PoisonOutputsScope() { tPoison = previous_; }

void kite::runtime::poison(const Tensor &t, Stream stream) {
  int64_t bytes = t.numel() * element_size(t.dtype());
  if (bytes > 0)
    check(cu().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(t.data_ptr()), 0xFF, size_t(bytes),
                               reinterpret_cast<CUstream>(stream.handle)),
          "kite::launch: poisoning an output of {} bytes", bytes);
}

void kite::run_plan(const KernelPlan &plan, std::span<const KernelArg> args,
                    std::span<Tensor> results, Stream stream) {
  int ordinal = validate_args(plan, args);
  if (results.size() != plan.results.size()) [[unlikely]]
    throw Error(fmt::format("kite::launch({}): the kernel returns {} value{}, but {} result "
                            "slot{} were given",
                            plan.name, plan.results.size(), plan.results.size() == 1 ? "" : "s",
                            results.size(), results.size() == 1 ? "" : "s"));
  DeviceContext &dc = DeviceContext::get(ordinal);
  ContextScope scope(dc);
  const LoadedPlan &lp = moduleCache().get(dc, plan);
  NvtxRange range(lp.nvtxName);

  SmallBuffer<Tensor, 4> outputs(plan.outputs.size());
  for (size_t j = 0; j < plan.outputs.size(); ++j) {
    const OutputSpec &o = plan.outputs[j];
    if (!o.sizeExprs.empty()) [[unlikely]] {
      // Sizes from the arguments (a dynamic-shapes plan, a scalar size).
      std::vector<int64_t> sizes = o.sizes;
      size_t next = 0;
      for (int64_t &size : sizes)
        if (size == -1) {
          size = evaluate(o.sizeExprs[next++], args);
          if (size < 0)
            throw Error(fmt::format("kite::launch({}): output '{}' would have size {} ({} = {})",
                                    plan.name, o.name, size,
                                    o.sizeExprs[next - 1].str(argNames(plan)), size));
        }
      outputs[j] = allocateDevice(dc, sizes, o.dtype, stream, o.zeroed, "kite::launch: output");
    } else {
      outputs[j] = allocateDevice(dc, o.sizes, o.dtype, stream, o.zeroed, "kite::launch: output");
    }
    if (poisonOutputs() && !o.zeroed) [[unlikely]]
      poison(outputs[j], stream);
  }

  // The programs launched (a workspace is sized by them).
  std::array<uint32_t, 3> grid = lp.grid;
  bool empty = lp.emptyGrid;
  if (!plan.gridExpr.empty()) {
    int64_t programs = evaluate(plan.gridExpr[0], args);
    if (programs > int64_t(INT32_MAX))
      throw Error(fmt::format("kite::launch({}): {} programs ({}) are more than a grid holds",
                              plan.name, programs, plan.gridExpr[0].str(argNames(plan))));
    programs = std::min<int64_t>(programs, int64_t(lp.residentPrograms));
    grid[0] = uint32_t(std::max<int64_t>(programs, 0));
    empty = programs <= 0;
  }

  // Padded copies of the tensors of staged tensor maps, and workspaces,
  // alive until the launch that reads them is enqueued (their blocks are
  // stream-ordered).
  SmallBuffer<Tensor, 2> scratch(lp.scratch ? lp.slots.size() : 0);
  // Parameters: the template (constants in place), then the run-time values.
  // An empty grid launches nothing, so it needs none (no staging copy, no
  // tensor map over a tensor with no elements).
  alignas(16) SmallBuffer<uint8_t, 512> buffer(lp.image.size());
  SmallBuffer<void *, 64> pointers(lp.slots.size());
  if (!lp.image.empty())
    std::memcpy(buffer.data(), lp.image.data(), lp.image.size());
  for (size_t i = 0; i < (empty ? 0 : lp.slots.size()); ++i) {
    const LoadedPlan::Slot &slot = lp.slots[i];
    uint8_t *dst = buffer.data() + slot.offset;
    pointers[i] = dst;
    switch (slot.kind) {
    case ParamSpec::Kind::argData: {
      void *p = args[slot.index].tensor->data_ptr();
      std::memcpy(dst, &p, sizeof(p));
      break;
    }
    case ParamSpec::Kind::outputData: {
      void *p = outputs[slot.index].data_ptr();
      std::memcpy(dst, &p, sizeof(p));
      break;
    }
    case ParamSpec::Kind::argScalar: {
      const KernelArg &a = args[slot.index];
      switch (slot.type) {
      case DType::i64: std::memcpy(dst, &a.value.i, 8); break;
      case DType::f64: std::memcpy(dst, &a.value.f, 8); break;
      case DType::i32: {
        int32_t v = int32_t(a.value.i);
        std::memcpy(dst, &v, 4);
        break;
      }
      case DType::f32: {
        float v = float(a.value.f);
        std::memcpy(dst, &v, 4);
        break;
      }
      default: *dst = a.value.i != 0; break;
      }
      break;
    }
    case ParamSpec::Kind::argSize: {
      int64_t v = args[slot.index].tensor->size(slot.dim);
      std::memcpy(dst, &v, 8);
      break;
    }
    case ParamSpec::Kind::argStride: {
      int64_t v = args[slot.index].tensor->stride(slot.dim);
      std::memcpy(dst, &v, 8);
      break;
    }
    case ParamSpec::Kind::argTensorMap: {
      const Tensor &t = *args[slot.index].tensor;
      // A tensor with no elements has no tiles to copy (a loop over its
      // rows runs no iteration, one over K adds nothing), and TMA refuses
      // a map over a zero-size dim: the map stays unencoded.
      if (t.numel() == 0) [[unlikely]]
        break;
      int64_t sizes[5], strides[5]; // validate_plan: the map's rank (1 to 5) is the tensor's
      for (int d = 0; d < slot.map.rank; ++d) {
        sizes[d] = t.size(d);
        strides[d] = t.stride(d);
      }
      void *data = t.data_ptr();
      if (slot.map.staged) [[unlikely]] {
        // One copy a tensor, however many maps view it.
        size_t j = 0;
        while (j < i && !(lp.slots[j].kind == ParamSpec::Kind::argTensorMap &&
                          lp.slots[j].map.staged && lp.slots[j].index == slot.index))
          ++j;
        if (j < i) {
          stagedStrides(t, slot.type, strides);
        } else {
          scratch[i] = stageRows(dc, lp, t, slot.type, stream, strides, plan);
          j = i;
        }
        data = scratch[j].data_ptr();
      }
      encodeTensorMap(dst, data, sizes, strides, slot.type, slot.map, plan);
      break;
    }
    case ParamSpec::Kind::workspace: {
      uint64_t programs = uint64_t(grid[0]) * grid[1] * grid[2];
      scratch[i] = allocateDevice(dc, {int64_t(programs * slot.index)}, DType::i8, stream,
                                  slot.dim != 0, "kite::launch: a workspace");
      void *p = scratch[i].data_ptr();
      std::memcpy(dst, &p, sizeof(p));
      break;
    }
    case ParamSpec::Kind::constant: break;
    }
  }

  if (!empty) [[likely]]
    check(cu().cuLaunchKernel(lp.function, grid[0], grid[1], grid[2], plan.block[0],
                              plan.block[1], plan.block[2], plan.dynamicSharedBytes, toCU(stream),
                              pointers.data(), nullptr),
          "launching kernel {} ({}) with grid [{}, {}, {}] and block [{}, {}, {}]", plan.name,
          plan.kernelName, grid[0], grid[1], grid[2], plan.block[0], plan.block[1],
          plan.block[2]);

  for (size_t r = 0; r < plan.results.size(); ++r) {
    const ResultSpec &spec = plan.results[r];
    results[r] = spec.kind == ResultSpec::Kind::arg ? *args[spec.index].tensor
                                                    : outputs[spec.index];
  }
}

std::vector<Tensor> kite::run_plan(const KernelPlan &plan, std::span<const KernelArg> args,
                                   Stream stream) {
  std::vector<Tensor> results(plan.results.size());
  run_plan(plan, args, results, stream);
  return results;
}

//===----------------------------------------------------------------------===//
// kite::launch: captured kernel -> cached plan -> run_plan
//===----------------------------------------------------------------------===//
//
// Each captured kernel has a plan map keyed by specialization_hash(args)
// (mixed with the options that change the plan: config and tuning policy);
// a key holds the few plans that share it (plans that differ only in a
// specialized scalar's value). A hit is a shared lock on the kernel table,
// one lock and hash lookup in the kernel's map, a scalar check per
// candidate, and run_plan: nothing allocates but run_plan's outputs. A miss
// checks the arguments against the kernel's parameters (before any compile,
// so a CPU tensor is reported by name), then resolves a plan (one at a time
// per kernel): loaded bundles, the cache directory, else the autotuner or
// the compiler hook (PlanCache.h); the plan is kept here for later launches.

namespace {

struct KernelPlans {
  const KernelSource *source = nullptr;
  std::vector<std::string> argNames; // from KernelSource::argNames or the IR
  std::mutex mutex;                  // guards `plans`
  std::unordered_map<uint64_t, std::vector<std::unique_ptr<KernelPlan>>> plans;
  /// Dynamic-shapes plans, each with the launch options' tag and device it
  /// was made for, and keys whose launches a held one of them serves (a
  /// front-door key is finer than a shape class: see specialization_hash).
  struct Held {
    const KernelPlan *plan;
    uint64_t options;
    int device;
  };
  std::vector<Held> dynamicPlans;
  std::unordered_map<uint64_t, const KernelPlan *> aliases;
  std::mutex compileMutex; // one compile at a time per kernel
};

struct LaunchTable {
  std::shared_mutex mutex;
  std::unordered_map<const void *, std::unique_ptr<KernelPlans>> kernels;
};

LaunchTable &launchTable() {
  static LaunchTable *table = new LaunchTable();
  return *table;
}

/// "softmax" for a function address, if the dynamic symbol table knows it
/// (for the "not captured" message); else the address.
std::string functionName(const void *function) {
  Dl_info info{};
  if (dladdr(function, &info) && info.dli_sname) {
    int status = 0;
    char *demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    std::string name = status == 0 && demangled ? demangled : info.dli_sname;
    std::free(demangled);
    return name;
  }
  return fmt::format("the kernel at {}", function);
}

/// The `kite.name` attributes of kernel `name`'s parameters in captured IR,
/// in order: the text from `func.func @name(` to the signature's closing
/// parenthesis (skipping nested parentheses, strings and `loc(...)`).
std::vector<std::string> argNamesFromIR(std::string_view ir, std::string_view name) {
  std::vector<std::string> names;
  std::string header = fmt::format("func.func @{}(", name);
  size_t pos = ir.find(header);
  if (pos == std::string_view::npos)
    return names;
  pos += header.size();
  int depth = 1;
  static constexpr std::string_view kAttr = "kite.name = \"";
  for (size_t i = pos; i < ir.size() && depth > 0; ++i) {
    char c = ir[i];
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (c == '"') {
      size_t end = i + 1;
      while (end < ir.size() && ir[end] != '"')
        end += ir[end] == '\\' ? 2 : 1;
      i = end;
    } else if (ir.compare(i, kAttr.size(), kAttr) == 0) {
      size_t start = i + kAttr.size();
      size_t end = ir.find('"', start);
      if (end == std::string_view::npos)
        break;
      names.emplace_back(ir.substr(start, end - start));
      i = end;
    }
  }
  return names;
}

std::vector<std::string> splitNames(std::string_view list) {
  std::vector<std::string> names;
  while (!list.empty()) {
    size_t comma = list.find(',');
    names.emplace_back(list.substr(0, comma));
    if (comma == std::string_view::npos)
      break;
    list.remove_prefix(comma + 1);
  }
  return names;
}

KernelPlans &kernelPlans(const void *function) {
  LaunchTable &t = launchTable();
  {
    std::shared_lock lock(t.mutex);
    auto it = t.kernels.find(function);
    if (it != t.kernels.end()) [[likely]]
      return *it->second;
  }
  const KernelSource *source = lookup_kernel(function);
  if (!source)
    throw Error(fmt::format(
        "kite::launch({0}): this kernel was not captured at build time, so kite has no IR "
        "for it; add the file that defines it to kite_add_kernels(<target> <file>.kite.cpp) "
        "in CMake (and check that it is marked KITE_KERNEL)",
        functionName(function)));
  auto plans = std::make_unique<KernelPlans>();
  plans->source = source;
  plans->argNames = !source->argNames.empty() ? splitNames(source->argNames)
                                              : argNamesFromIR(source->ir, source->name);
  std::unique_lock lock(t.mutex);
  auto &slot = t.kernels[function];
  if (!slot)
    slot = std::move(plans);
  return *slot;
}

std::string argName(const KernelPlans &k, size_t i) {
  return i < k.argNames.size() ? k.argNames[i] : fmt::format("#{}", i);
}

/// The checks that need no plan: the count, and every tensor defined, on a
/// CUDA device, all on one device. Run before compiling. Returns the
/// tensors' device ordinal (0 if there are none).
int checkArgs(const KernelPlans &k, std::span<const KernelArg> args) {
  std::string_view name = k.source->name;
  if (!k.argNames.empty() && args.size() != k.argNames.size())
    throw Error(fmt::format("kite::launch({}): expected {} argument{} ({}), got {}", name,
                            k.argNames.size(), k.argNames.size() == 1 ? "" : "s",
                            fmt::join(k.argNames, ", "), args.size()));
  int ordinal = -1;
  size_t first = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg &a = args[i];
    if (a.kind != ArgSpec::Kind::tensor)
      continue;
    if (!a.tensor || !a.tensor->defined())
      throw Error(fmt::format("kite::launch({}): argument '{}' must be a tensor, got {}", name,
                              argName(k, i), describeArg(a)));
    Device device = a.tensor->device();
    if (!device.is_cuda())
      throw Error(fmt::format("kite::launch({}): argument '{}' must be a CUDA tensor, got {} "
                              "(copy it with kite::cuda::to_device, or call the kernel "
                              "directly to run it in reference mode)",
                              name, argName(k, i), describe(*a.tensor)));
    if (ordinal < 0) {
      ordinal = device.index;
      first = i;
    } else if (device.index != ordinal) {
      throw Error(fmt::format("kite::launch({}): argument '{}' is on cuda:{}, but argument "
                              "'{}' is on cuda:{}; all tensors of a launch must be on one "
                              "device",
                              name, argName(k, i), device.index, argName(k, first), ordinal));
    }
  }
  return ordinal < 0 ? 0 : ordinal;
}

/// Specialized scalars (the only thing plans under one hash may differ in,
/// bar hash collisions, which run_plan's validate_args reports).
bool scalarsMatch(const KernelPlan &plan, std::span<const KernelArg> args) {
  if (plan.args.size() != args.size())
    return false;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSpec &s = plan.args[i];
    if (!s.is_tensor() && s.value && args[i].scalar_as_double() != *s.value)
      return false;
    // A dynamic-shapes key is a shape class: its plans may still hold
    // some sizes static (specialize(x.size(d)), a size emission needs).
    if (plan.dynamicShapes && s.is_tensor() && args[i].tensor &&
        (size_t(args[i].tensor->dim()) != s.sizes.size() || !sizesMatch(*args[i].tensor, s)))
      return false;
  }
  return true;
}

const KernelPlan *findPlan(KernelPlans &k, uint64_t key, std::span<const KernelArg> args) {
  std::lock_guard<std::mutex> lock(k.mutex);
  if (auto it = k.plans.find(key); it != k.plans.end())
    for (const std::unique_ptr<KernelPlan> &p : it->second)
      if (scalarsMatch(*p, args))
        return p.get();
  if (auto it = k.aliases.find(key); it != k.aliases.end() && scalarsMatch(*it->second, args))
    return it->second;
  return nullptr;
}

/// Whether dynamic-shapes plan `plan` serves `args` exactly as the plan
/// compiled for them would: each size in its dim's class (divisor class and
/// bucket, not only a multiple), the same strides, alignment class and
/// specialized scalars.
bool servesExactly(const KernelPlan &plan, std::span<const KernelArg> args) {
  if (!plan.dynamicShapes || plan.args.size() != args.size())
    return false;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSpec &s = plan.args[i];
    const KernelArg &a = args[i];
    if (s.kind != a.kind)
      return false;
    if (!s.is_tensor()) {
      if (s.dtype != a.type || (s.value && a.scalar_as_double() != *s.value))
        return false;
      continue;
    }
    const Tensor &t = *a.tensor;
    if (t.dtype() != s.dtype || size_t(t.dim()) != s.sizes.size())
      return false;
    for (size_t d = 0; d < s.sizes.size(); ++d)
      if (!s.size_in_class(d, t.size(int64_t(d))))
        return false;
    if (!s.divisors.empty() && s.index32 != ArgSpec::fits_index32(t.numel()))
      return false;
    if (!stridesMatch(t, s) || alignmentClass(t) != std::max<int64_t>(s.alignment, 1))
      return false;
  }
  return true;
}

PlanEvent::Source planSource(runtime::PlanOrigin origin) {
  switch (origin) {
  case runtime::PlanOrigin::bundle: return PlanEvent::Source::bundle;
  case runtime::PlanOrigin::directory: return PlanEvent::Source::cache_directory;
  case runtime::PlanOrigin::tuned: return PlanEvent::Source::autotuner;
  case runtime::PlanOrigin::compiled: return PlanEvent::Source::compiler;
  }
  return PlanEvent::Source::compiler;
}

uint64_t mix(uint64_t h, uint64_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

} // namespace

void kite::detail::launch(const void *function, const Options &options,
                          std::span<const KernelArg> args, std::span<Tensor> results) {
  KernelPlans &k = kernelPlans(function);
  uint64_t key = specialization_hash(args, !options.static_shapes);
  uint64_t optionsTag = uint64_t(options.tuning);
  if (!options.config.empty())
    optionsTag = mix(optionsTag, std::hash<std::string_view>{}(options.config));
  key = mix(key, optionsTag);

  const KernelPlan *plan = findPlan(k, key, args);
  if (!plan) [[unlikely]] {
    int ordinal = checkArgs(k, args);
    std::lock_guard<std::mutex> compileLock(k.compileMutex);
    plan = findPlan(k, key, args); // compiled by another thread meanwhile?
    if (!plan && !options.static_shapes) {
      // A new front-door key of a shape class held already.
      std::lock_guard<std::mutex> lock(k.mutex);
      for (const KernelPlans::Held &h : k.dynamicPlans)
        if (h.options == optionsTag && h.device == ordinal && servesExactly(*h.plan, args)) {
          k.aliases[key] = plan = h.plan;
          break;
        }
    }
    if (!plan) {
      std::vector<ArgSpec> specs;
      specs.reserve(args.size());
      for (size_t i = 0; i < args.size(); ++i) {
        const KernelArg &a = args[i];
        if (a.kind == ArgSpec::Kind::tensor)
          specs.push_back(ArgSpec::of(argName(k, i), *a.tensor));
        else
          specs.push_back(ArgSpec::scalar(argName(k, i), a.type, a.scalar_as_double()));
      }
      cache::Target target;
      if (options.tuning != Options::Tuning::never)
        target = cache::device_target(ordinal);
      auto start = std::chrono::steady_clock::now();
      runtime::ResolvedPlan resolved = runtime::resolvePlan(*k.source, specs, options, target);
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      auto compiled = std::make_unique<KernelPlan>(std::move(resolved.plan));
      if (compiled->results.size() != results.size())
        throw Error(fmt::format("kite::launch({}): the compiled kernel returns {} value{}, but "
                                "its C++ signature returns {}; was the registration generated "
                                "from another version of the kernel?",
                                k.source->name, compiled->results.size(),
                                compiled->results.size() == 1 ? "" : "s", results.size()));
      std::lock_guard<std::mutex> lock(k.mutex);
      std::vector<const std::vector<ArgSpec> *> held;
      for (const auto &[h, list] : k.plans)
        for (const std::unique_ptr<KernelPlan> &p : list)
          held.push_back(&p->args);
      std::string reason = runtime::specializationChange(k.source->name, specs, held);
      runtime::notePlan(PlanEvent{k.source->name, specs, planSource(resolved.origin), reason, ms});
      plan = compiled.get();
      if (plan->dynamicShapes)
        k.dynamicPlans.push_back({plan, optionsTag, ordinal});
      k.plans[key].push_back(std::move(compiled));
    }
  }
  run_plan(*plan, args, results, options.stream);
}
