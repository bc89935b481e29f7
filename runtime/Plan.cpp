//===- Plan.cpp - Kernel plans: checks and byte form ----------------------===//
//
// This file implements the plan types' helpers (ArgSpec's text form and
// constructors), the plan's self-consistency check, and its byte form for
// the on-disk cache.
//
// The byte form is little-endian and self-checking:
//
//   "KITEPLAN"  u32 format version  u64 payload size  payload  u64 FNV-1a(payload)
//
// A reader checks the magic, the version, the size and the checksum before
// it parses, bounds-checks every read while it parses, and validates the
// result, so a truncated, corrupt or foreign buffer is an Error that says
// which, never a crash and never a partial plan.
//
//===----------------------------------------------------------------------===//

#include "runtime/ByteIO.h"
#include "runtime/TensorInfo.h"

#include <kite/runtime.hpp>

#include <fmt/format.h>

#include <limits>


using namespace kite;
using namespace kite::runtime;

//===----------------------------------------------------------------------===//
// ArgSpec
//===----------------------------------------------------------------------===//

std::vector<int64_t> ArgSpec::effective_strides() const {
  if (!strides.empty())
    return strides;
  std::vector<int64_t> s(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    s[i] = stride;
    // Sizes no tensor has (a corrupt cache entry's) saturate rather than
    // overflow; validate_plan rejects them.
    if (__builtin_mul_overflow(stride, sizes[i], &stride))
      stride = std::numeric_limits<int64_t>::max();
  }
  return s;
}

bool ArgSpec::is_contiguous() const {
  if (strides.empty())
    return true;
  std::vector<int64_t> contiguous = ArgSpec::tensor("", dtype, sizes).effective_strides();
  for (size_t d = 0; d < sizes.size() && d < strides.size(); ++d)
    if (sizes[d] != 1 && strides[d] != contiguous[d])
      return false;
  return strides.size() == sizes.size();
}

namespace {

std::string formatValue(double v) {
  // The range check first: converting inf, NaN or a value past int64 to
  // int64_t is undefined.
  if (v > -9.2e18 && v < 9.2e18 && v == double(int64_t(v)))
    return fmt::format("{}", int64_t(v));
  return fmt::format("{}", v);
}

} // namespace

std::string ArgSpec::str() const {
  std::string s = fmt::format("{}={}", name, dtype_name(dtype));
  if (kind == Kind::tensor) {
    std::vector<std::string> dims;
    for (size_t d = 0; d < sizes.size(); ++d)
      dims.push_back(!is_dynamic(d)        ? fmt::format("{}", sizes[d])
                     : divisors[d] == 1  ? std::string("?") + bound_text(bound(d))
                     : divisors[d] == -1 ? std::string("?*") + bound_text(bound(d))
                                         : fmt::format("?{}{}", divisors[d], bound_text(bound(d))));
    s += fmt::format("[{}]", fmt::join(dims, ","));
    if (!strides.empty() && strides != ArgSpec::tensor("", dtype, sizes).effective_strides())
      s += fmt::format(":strides[{}]", fmt::join(strides, ","));
    // The compiler reads no alignment as 16 bytes: a spec with none (0 or
    // 1) must say so, or its plan would assume 16-byte vectors.
    s += fmt::format(":align{}", std::max<int64_t>(alignment, 1));
    if (index32)
      s += ":idx32";
  } else if (value) {
    s += ":" + formatValue(*value);
  }
  return s;
}

ArgSpec ArgSpec::tensor(std::string name, DType dtype, std::vector<int64_t> sizes,
                        std::vector<int64_t> strides, int64_t alignment) {
  ArgSpec a;
  a.kind = Kind::tensor;
  a.name = std::move(name);
  a.dtype = dtype;
  a.sizes = std::move(sizes);
  a.strides = std::move(strides);
  a.alignment = alignment;
  return a;
}

ArgSpec ArgSpec::scalar(std::string name, DType type, std::optional<double> value) {
  ArgSpec a;
  a.kind = Kind::scalar;
  a.name = std::move(name);
  a.dtype = type;
  a.value = value;
  return a;
}

ArgSpec ArgSpec::of(std::string name, const Tensor &t) {
  auto address = reinterpret_cast<uintptr_t>(t.data_ptr());
  int64_t alignment = 16;
  while (alignment > 1 && address % alignment != 0)
    alignment /= 2;
  return tensor(std::move(name), t.dtype(), t.sizes(), t.strides(), alignment);
}

//===----------------------------------------------------------------------===//
// Launch expressions
//===----------------------------------------------------------------------===//

namespace {

int arity(LaunchExpr::Op op) {
  using Op = LaunchExpr::Op;
  return op == Op::constant || op == Op::argSize || op == Op::argScalar ? 0 : 2;
}

/// A well-formed program leaves one value; "" or what is wrong.
std::string checkExpr(const LaunchExpr &e, std::span<const ArgSpec> args) {
  int depth = 0;
  for (const LaunchExpr::Term &t : e.terms) {
    using Op = LaunchExpr::Op;
    if (uint8_t(t.op) > uint8_t(Op::max))
      return fmt::format("unknown operation {}", int(t.op));
    if (t.op == Op::argSize || t.op == Op::argScalar) {
      if (t.index >= args.size())
        return fmt::format("reads argument {}, but there are {}", t.index, args.size());
      const ArgSpec &a = args[t.index];
      if (t.op == Op::argSize && (!a.is_tensor() || t.dim >= a.sizes.size()))
        return fmt::format("reads size {} of argument '{}', which has no such dim", t.dim,
                           a.name);
      if (t.op == Op::argScalar &&
          (a.is_tensor() || (a.dtype != DType::i64 && a.dtype != DType::i32)))
        return fmt::format("reads argument '{}' as an integer scalar", a.name);
    }
    depth += 1 - arity(t.op);
    if (depth < 1)
      return "an operation lacks operands";
  }
  return depth == 1 ? "" : fmt::format("leaves {} values, not one", depth);
}

} // namespace

std::string LaunchExpr::str(const std::vector<std::string> &names) const {
  std::vector<std::string> stack;
  auto name = [&](uint32_t i) {
    return i < names.size() ? names[i] : fmt::format("#{}", i);
  };
  for (const Term &t : terms) {
    if (arity(t.op) == 0) {
      stack.push_back(t.op == Op::constant  ? fmt::format("{}", t.value)
                      : t.op == Op::argSize ? fmt::format("{}.size({})", name(t.index), t.dim)
                                            : name(t.index));
      continue;
    }
    if (stack.size() < 2)
      return "<malformed>";
    std::string b = std::move(stack.back());
    stack.pop_back();
    std::string a = std::move(stack.back());
    stack.pop_back();
    switch (t.op) {
    case Op::add: stack.push_back(fmt::format("({} + {})", a, b)); break;
    case Op::sub: stack.push_back(fmt::format("({} - {})", a, b)); break;
    case Op::mul: stack.push_back(fmt::format("{} * {}", a, b)); break;
    case Op::ceildiv: stack.push_back(fmt::format("ceildiv({}, {})", a, b)); break;
    case Op::floordiv: stack.push_back(fmt::format("{} / {}", a, b)); break;
    case Op::min: stack.push_back(fmt::format("min({}, {})", a, b)); break;
    case Op::max: stack.push_back(fmt::format("max({}, {})", a, b)); break;
    default: return "<malformed>";
    }
  }
  return stack.size() == 1 ? stack.front() : "<malformed>";
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

namespace {

bool isScalarType(DType t) {
  return t == DType::i64 || t == DType::i32 || t == DType::f64 || t == DType::f32 ||
         t == DType::boolean;
}

/// The largest constant parameter kite accepts (CUDA's whole parameter
/// space is 32 KB on Volta and newer).
constexpr size_t kMaxConstantBytes = 4096;
/// A workspace parameter's bytes a program (a split K loop's partial sums of a
/// 256 x 256 f32 tile take 256 KiB).
constexpr uint32_t kMaxWorkspaceBytes = 1u << 20;

} // namespace

void kite::validate_plan(const KernelPlan &plan) {
  auto fail = [&](std::string why) {
    throw Error(fmt::format("kite plan '{}' is invalid: {}", plan.name, why));
  };
  if (plan.kernelName.empty())
    fail("no kernel entry point name");
  if (plan.binary.empty())
    fail("no binary");
  for (int i = 0; i < 3; ++i)
    if (plan.block[i] == 0)
      fail(fmt::format("block dimension {} is 0", i));
  if (plan.persistent && (plan.grid[1] != 1 || plan.grid[2] != 1))
    fail(fmt::format("a persistent plan loops over grid x only, but its grid is [{}, {}, {}]",
                     plan.grid[0], plan.grid[1], plan.grid[2]));
  if (plan.clusterSize != 1 && plan.clusterSize != 2)
    fail(fmt::format("cluster size {} (1 or 2)", plan.clusterSize));
  if (plan.clusterSize != 1 && (!plan.gridExpr.empty() || plan.grid[0] % plan.clusterSize != 0 ||
                                plan.grid[1] != 1 || plan.grid[2] != 1))
    fail(fmt::format("a plan of clusters of {} programs needs a constant grid [x, 1, 1] whose x "
                     "is a multiple of it, but its grid is [{}, {}, {}]{}",
                     plan.clusterSize, plan.grid[0], plan.grid[1], plan.grid[2],
                     plan.gridExpr.empty() ? "" : " computed at launch"));
  for (size_t i = 0; i < plan.args.size(); ++i) {
    const ArgSpec &a = plan.args[i];
    if (!a.divisors.empty()) {
      if (!a.is_tensor() || a.divisors.size() != a.sizes.size())
        fail(fmt::format("argument '{}' has {} divisors for {} sizes", a.name,
                         a.divisors.size(), a.sizes.size()));
      for (size_t d = 0; d < a.sizes.size(); ++d) {
        int64_t v = a.divisors[d];
        if (v != 0 && ((v != -1 && (v > 16 || !std::has_single_bit(uint64_t(v)))) ||
                       a.sizes[d] != -1))
          fail(fmt::format("argument '{}' has a dynamic dim {} of size {} and divisor {} (a "
                           "dynamic size is -1 with a divisor of 1, 2, 4, 8 or 16, or -1 for "
                           "any)",
                           a.name, d, a.sizes[d], v));
      }
      if (!a.strides.empty())
        fail(fmt::format("argument '{}' has dynamic sizes and strides; a tensor with dynamic "
                         "sizes is contiguous",
                         a.name));
    }
    if (a.index32 && a.divisors.empty())
      fail(fmt::format("argument '{}' has 32-bit offsets (idx32) without dynamic sizes", a.name));
    if (!a.bounds.empty() && a.bounds.size() != a.sizes.size())
      fail(fmt::format("argument '{}' has {} bounds for {} sizes", a.name, a.bounds.size(),
                       a.sizes.size()));
    for (size_t d = 0; d < a.bounds.size(); ++d) {
      int64_t b = a.bounds[d];
      if (b != 0 && (!a.is_dynamic(d) ||
                     (b != -1 && (b < ArgSpec::kMinBound || b > ArgSpec::kMaxBound ||
                                  !std::has_single_bit(uint64_t(b))))))
        fail(fmt::format("argument '{}' has bound {} on dim {} (a dynamic dim's bucket is a "
                         "power of two from {} to {}, or -1)",
                         a.name, b, d, ArgSpec::kMinBound, ArgSpec::kMaxBound));
    }
    if (a.kind == ArgSpec::Kind::tensor) {
      int64_t numel = 1;
      for (size_t d = 0; d < a.sizes.size(); ++d) {
        int64_t s = a.is_dynamic(d) ? 1 : a.sizes[d];
        if (s < 0)
          fail(fmt::format("argument '{}' has a negative size in {}", a.name,
                           shapeString(a.sizes)));
        if (__builtin_mul_overflow(numel, s, &numel) || numel > (int64_t(1) << 48))
          fail(fmt::format("argument '{}' has sizes {} larger than any GPU memory", a.name,
                           shapeString(a.sizes)));
      }
      if (!a.strides.empty() && a.strides.size() != a.sizes.size())
        fail(fmt::format("argument '{}' has {} sizes but {} strides", a.name, a.sizes.size(),
                         a.strides.size()));
      if (a.alignment < 0 || (a.alignment > 1 && !std::has_single_bit(uint64_t(a.alignment))))
        fail(fmt::format("argument '{}' has alignment {}, not a power of two", a.name,
                         a.alignment));
    } else {
      if (!isScalarType(a.dtype))
        fail(fmt::format("scalar argument '{}' has type {}; scalars are i64, i32, f64, f32 or "
                         "bool",
                         a.name, dtype_name(a.dtype)));
      if (!a.sizes.empty() || !a.strides.empty())
        fail(fmt::format("scalar argument '{}' has sizes or strides", a.name));
    }
  }
  for (const OutputSpec &o : plan.outputs) {
    size_t dynamic = 0;
    for (int64_t s : o.sizes) {
      dynamic += s == -1;
      if (s < -1)
        fail(fmt::format("output '{}' has a negative size in {}", o.name, shapeString(o.sizes)));
    }
    if (dynamic != o.sizeExprs.size())
      fail(fmt::format("output '{}' has {} dynamic sizes but {} size expressions", o.name,
                       dynamic, o.sizeExprs.size()));
    for (const LaunchExpr &e : o.sizeExprs)
      if (std::string why = checkExpr(e, plan.args); !why.empty())
        fail(fmt::format("a size expression of output '{}' {}", o.name, why));
  }
  for (const LaunchCheck &c : plan.checks)
    for (const LaunchExpr *e : {&c.lhs, &c.rhs})
      if (std::string why = checkExpr(*e, plan.args); !why.empty())
        fail(fmt::format("the launch check '{}' {}", c.message, why));
  if (plan.gridExpr.size() > 1)
    fail(fmt::format("{} grid expressions (at most one: grid x)", plan.gridExpr.size()));
  for (const LaunchExpr &e : plan.gridExpr) {
    if (std::string why = checkExpr(e, plan.args); !why.empty())
      fail("the grid expression " + why);
    if (plan.grid[1] != 1 || plan.grid[2] != 1)
      fail("a plan with a grid expression has a grid of [n, 1, 1]");
  }
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const ParamSpec &p = plan.params[i];
    auto needArg = [&](bool tensor) {
      if (p.index >= plan.args.size())
        fail(fmt::format("parameter {} reads argument {}, but there are {}", i, p.index,
                         plan.args.size()));
      const ArgSpec &a = plan.args[p.index];
      if (a.is_tensor() != tensor)
        fail(fmt::format("parameter {} reads argument '{}' as a {}, but it is a {}", i, a.name,
                         tensor ? "tensor" : "scalar", a.is_tensor() ? "tensor" : "scalar"));
      return &a;
    };
    switch (p.kind) {
    case ParamSpec::Kind::argData: needArg(true); break;
    case ParamSpec::Kind::argScalar: needArg(false); break;
    case ParamSpec::Kind::argSize:
    case ParamSpec::Kind::argStride:
      if (p.dim >= needArg(true)->sizes.size())
        fail(fmt::format("parameter {} reads dimension {} of argument '{}', which has {}", i,
                         p.dim, plan.args[p.index].name, plan.args[p.index].sizes.size()));
      break;
    case ParamSpec::Kind::outputData:
      if (p.index >= plan.outputs.size())
        fail(fmt::format("parameter {} reads output {}, but there are {}", i, p.index,
                         plan.outputs.size()));
      break;
    case ParamSpec::Kind::argTensorMap: {
      const ArgSpec *a = needArg(true);
      TensorMapSpec m;
      try {
        m = TensorMapSpec::decode(p.bytes);
      } catch (const Error &e) {
        fail(fmt::format("parameter {}: {}", i, e.what()));
      }
      if (m.rank != a->sizes.size())
        fail(fmt::format("parameter {} tiles argument '{}' in {} dims, but it has {}", i, a->name,
                         int(m.rank), a->sizes.size()));
      if (m.swizzle > 3)
        fail(fmt::format("parameter {} has swizzle mode {} (0 to 3 allowed)", i, int(m.swizzle)));
      for (int d = 0; d < m.rank; ++d)
        if (m.box[d] < 1 || m.box[d] > 256)
          fail(fmt::format("parameter {} has a copy box of {} elements in dim {} (1 to 256 allowed)",
                           i, m.box[d], d));
      if (!m.rowSplits.empty()) {
        if (m.rank < 2)
          fail(fmt::format("parameter {} splits the rows of a tensor of rank {} (rank 2 or more "
                           "allowed)",
                           i, int(m.rank)));
        if (m.rowStep < 1)
          fail(fmt::format("parameter {} steps its row blocks by 0 rows", i));
        for (const TensorMapSpec::RowSplit &s : m.rowSplits)
          if (s.count < 1 || s.count > 256 || s.stride < 1)
            fail(fmt::format("parameter {} has a row split of {} rows by a stride of {} (1 to "
                             "256 rows, a stride of at least 1 allowed)",
                             i, s.count, s.stride));
      }
      break;
    }
    case ParamSpec::Kind::workspace:
      if (p.index == 0 || p.index > kMaxWorkspaceBytes || p.dim > 1)
        fail(fmt::format("workspace parameter {} has {} bytes a program (1 to {} allowed) and "
                         "zeroed flag {} (0 or 1)",
                         i, p.index, kMaxWorkspaceBytes, p.dim));
      break;
    case ParamSpec::Kind::constant:
      if (p.bytes.empty() || p.bytes.size() > kMaxConstantBytes)
        fail(fmt::format("constant parameter {} has {} bytes (1 to {} allowed)", i,
                         p.bytes.size(), kMaxConstantBytes));
      break;
    default: fail(fmt::format("parameter {} has unknown kind {}", i, int(p.kind)));
    }
    if (p.kind != ParamSpec::Kind::constant && p.kind != ParamSpec::Kind::argTensorMap &&
        !p.bytes.empty())
      fail(fmt::format("parameter {} is not a constant but has bytes", i));
  }
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const ResultSpec &r = plan.results[i];
    if (r.kind == ResultSpec::Kind::arg) {
      if (r.index >= plan.args.size() || !plan.args[r.index].is_tensor())
        fail(fmt::format("result {} returns argument {}, which is not a tensor argument", i,
                         r.index));
    } else if (r.kind == ResultSpec::Kind::output) {
      if (r.index >= plan.outputs.size())
        fail(fmt::format("result {} returns output {}, but there are {}", i, r.index,
                         plan.outputs.size()));
    } else {
      fail(fmt::format("result {} has unknown kind {}", i, int(r.kind)));
    }
  }
}

//===----------------------------------------------------------------------===//
// Byte form
//===----------------------------------------------------------------------===//

namespace {

constexpr FrameKind kPlanFrame{"KITEPLAN", kPlanFormatVersion, "kite plan", "plan",
                               "recompile the kernel (or re-tune the cache entry)"};
constexpr uint8_t kLastDType = uint8_t(DType::e5m2);

void writeExprs(ByteWriter &w, const std::vector<LaunchExpr> &exprs) {
  w.u64(exprs.size());
  for (const LaunchExpr &e : exprs) {
    w.u64(e.terms.size());
    for (const LaunchExpr::Term &t : e.terms) {
      w.u8(uint8_t(t.op));
      w.u32(t.index);
      w.u32(t.dim);
      w.i64(t.value);
    }
  }
}

std::vector<LaunchExpr> readExprs(ByteReader &r, const char *what) {
  std::vector<LaunchExpr> exprs(r.count(what, 8));
  for (LaunchExpr &e : exprs) {
    e.terms.resize(r.count("launch expression terms", 17));
    for (LaunchExpr::Term &t : e.terms) {
      t.op = r.enumeration<LaunchExpr::Op>("launch expression operation",
                                           uint8_t(LaunchExpr::Op::max));
      t.index = r.u32("launch expression index");
      t.dim = r.u32("launch expression dim");
      t.value = r.i64("launch expression value");
    }
  }
  return exprs;
}

} // namespace

std::vector<uint8_t> kite::serialize(const KernelPlan &plan) {
  ByteWriter w;
  w.str(plan.key);
  w.str(plan.name);
  w.str(plan.kernelName);
  w.str(plan.arch);
  w.u8(uint8_t(plan.binaryKind));
  w.bytes(plan.binary.data(), plan.binary.size());
  for (uint32_t g : plan.grid)
    w.u32(g);
  for (uint32_t b : plan.block)
    w.u32(b);
  w.u32(plan.dynamicSharedBytes);
  w.u8(plan.persistent);
  w.u32(plan.clusterSize);
  w.u64(plan.args.size());
  for (const ArgSpec &a : plan.args) {
    w.u8(uint8_t(a.kind));
    w.str(a.name);
    w.u8(uint8_t(a.dtype));
    w.i64s(a.sizes);
    w.i64s(a.strides);
    w.i64(a.alignment);
    w.u8(a.value.has_value());
    w.f64(a.value.value_or(0.0));
    w.i64s(a.divisors);
    w.i64s(a.bounds);
    w.u8(a.index32);
  }
  w.u64(plan.outputs.size());
  for (const OutputSpec &o : plan.outputs) {
    w.str(o.name);
    w.u8(uint8_t(o.dtype));
    w.i64s(o.sizes);
    w.u8(o.zeroed);
    writeExprs(w, o.sizeExprs);
  }
  w.u64(plan.params.size());
  for (const ParamSpec &p : plan.params) {
    w.u8(uint8_t(p.kind));
    w.u32(p.index);
    w.u32(p.dim);
    w.bytes(p.bytes.data(), p.bytes.size());
  }
  w.u64(plan.results.size());
  for (const ResultSpec &r : plan.results) {
    w.u8(uint8_t(r.kind));
    w.u32(r.index);
  }
  w.str(plan.config);
  w.u8(plan.dynamicShapes);
  writeExprs(w, plan.gridExpr);
  w.u64(plan.checks.size());
  for (const LaunchCheck &c : plan.checks) {
    writeExprs(w, {c.lhs, c.rhs});
    w.str(c.message);
  }
  return frame(kPlanFrame, w.out);
}

KernelPlan kite::deserialize(std::span<const uint8_t> bytes) {
  std::span<const uint8_t> payload = unframe(kPlanFrame, bytes);
  ByteReader r(payload, kFrameHeaderBytes, kPlanFrame.what);
  KernelPlan plan;
  plan.key = r.str("key");
  plan.name = r.str("name");
  plan.kernelName = r.str("kernel name");
  plan.arch = r.str("arch");
  plan.binaryKind = r.enumeration<KernelPlan::Binary>("binary kind", 1);
  plan.binary = r.bytes("binary");
  for (uint32_t &g : plan.grid)
    g = r.u32("grid");
  for (uint32_t &b : plan.block)
    b = r.u32("block");
  plan.dynamicSharedBytes = r.u32("dynamic shared bytes");
  plan.persistent = r.u8("persistent flag") != 0;
  plan.clusterSize = r.u32("cluster size");
  // Each count is checked against the smallest encoding of its record.
  plan.args.resize(r.count("arguments", 43));
  for (ArgSpec &a : plan.args) {
    a.kind = r.enumeration<ArgSpec::Kind>("argument kind", 1);
    a.name = r.str("argument name");
    a.dtype = r.enumeration<DType>("argument dtype", kLastDType);
    a.sizes = r.i64s("argument sizes");
    a.strides = r.i64s("argument strides");
    a.alignment = r.i64("argument alignment");
    bool hasValue = r.u8("argument value flag") != 0;
    double value = r.f64("argument value");
    if (hasValue)
      a.value = value;
    a.divisors = r.i64s("argument divisors");
    a.bounds = r.i64s("argument bounds");
    a.index32 = r.u8("argument 32-bit index flag") != 0;
  }
  plan.outputs.resize(r.count("outputs", 18));
  for (OutputSpec &o : plan.outputs) {
    o.name = r.str("output name");
    o.dtype = r.enumeration<DType>("output dtype", kLastDType);
    o.sizes = r.i64s("output sizes");
    o.zeroed = r.u8("output zeroed flag") != 0;
    o.sizeExprs = readExprs(r, "output size expressions");
  }
  plan.params.resize(r.count("parameters", 17));
  for (ParamSpec &p : plan.params) {
    p.kind = r.enumeration<ParamSpec::Kind>("parameter kind", uint8_t(ParamSpec::Kind::workspace));
    p.index = r.u32("parameter index");
    p.dim = r.u32("parameter dim");
    p.bytes = r.bytes("parameter bytes");
  }
  plan.results.resize(r.count("results", 5));
  for (ResultSpec &res : plan.results) {
    res.kind = r.enumeration<ResultSpec::Kind>("result kind", 1);
    res.index = r.u32("result index");
  }
  plan.config = r.str("config");
  plan.dynamicShapes = r.u8("dynamic shapes flag") != 0;
  plan.gridExpr = readExprs(r, "grid expressions");
  plan.checks.resize(r.count("launch checks", 24));
  for (LaunchCheck &c : plan.checks) {
    std::vector<LaunchExpr> sides = readExprs(r, "launch check sides");
    if (sides.size() != 2)
      r.fail(fmt::format("a launch check has {} sides, not 2", sides.size()));
    c.lhs = sides[0];
    c.rhs = sides[1];
    c.message = r.str("launch check message");
  }
  if (r.remaining() != 0)
    r.fail(fmt::format("{} unread bytes at the end of the payload", r.remaining()));
  try {
    validate_plan(plan);
  } catch (const Error &e) {
    throw Error(fmt::format("kite plan: corrupt buffer: {}", e.what()));
  }
  return plan;
}

std::vector<uint8_t> kite::TensorMapSpec::encode() const {
  std::vector<uint8_t> out = {rank, swizzle, uint8_t(staged ? 1 : 0), uint8_t(rowSplits.size())};
  auto put = [&](uint32_t v) {
    for (int b = 0; b < 4; ++b)
      out.push_back(uint8_t(v >> (8 * b)));
  };
  for (int d = 0; d < rank; ++d)
    put(box[d]);
  for (const RowSplit &s : rowSplits) {
    put(s.count);
    put(s.stride);
  }
  if (!rowSplits.empty())
    put(rowStep);
  return out;
}

kite::TensorMapSpec kite::TensorMapSpec::decode(std::span<const uint8_t> bytes) {
  TensorMapSpec m;
  size_t splits = bytes.size() >= 4 ? bytes[3] : 0;
  size_t want = bytes.size() >= 4 ? 4 + 4 * size_t(bytes[0]) + (splits ? 8 * splits + 4 : 0) : 0;
  if (bytes.size() < 4 || bytes[0] < 1 || bytes[0] > 5 || bytes.size() != want)
    throw Error(fmt::format("a tensor-map parameter needs 4 + 4 x rank bytes with a rank of 1 to "
                            "5, and 8 per row split and 4 more with splits, got {} bytes",
                            bytes.size()));
  if (bytes[2] > 1 || splits > 3)
    throw Error(fmt::format("a tensor-map parameter's third and fourth bytes are its staged flag "
                            "(0 or 1) and its number of row splits (0 to 3), got {} and {}",
                            bytes[2], bytes[3]));
  size_t at = 4;
  auto get = [&] {
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b)
      v |= uint32_t(bytes[at + b]) << (8 * b);
    at += 4;
    return v;
  };
  m.rank = bytes[0];
  m.swizzle = bytes[1];
  m.staged = bytes[2] == 1;
  for (int d = 0; d < m.rank; ++d)
    m.box[d] = get();
  for (size_t i = 0; i < splits; ++i) {
    RowSplit s;
    s.count = get();
    s.stride = get();
    m.rowSplits.push_back(s);
  }
  if (splits)
    m.rowStep = get();
  return m;
}
