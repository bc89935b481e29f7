//===- Elementwise.cpp - elementwise and shape ops --------------------------===//
//
// This file implements the dispatch over tile ops and the elementwise
// ones: unary and binary math, comparisons, where, casts, random draws,
// full, arange, span indices, and shape ops (unsqueeze, squeeze, transpose, permute,
// expand, reshape).
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

#include "lowering/Config.h"
#include "lowering/LaunchArg.h"
#include "lowering/TypeInference.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult Emitter::emitOp(Operation *op) {
  if (isa<DTypeConstOp, DTypeOfOp, BlockSizeOp>(op))
    return success(); // compile-time only
  if (directLhs.contains(op) || streamedConverts.contains(op)) {
    // A shared left operand copied straight into shared memory
    // (planDirectLhs), or a streamed one's conversion (planStreamedLhs):
    // its shape and layout, no registers.
    Value v = op->getResult(0);
    auto [ctx, dims] = layoutOf(v);
    if (auto load = dyn_cast<LoadOp>(op)) {
      SmallVector<int64_t> shape;
      SmallVector<std::string> extents;
      if (failed(subscriptShape(load, load.getTensor(), load.getSubscripts(),
                                tensors[load.getTensor()].elem, shape, extents)))
        return failure();
      for (auto [d, e] : llvm::zip(dims, extents))
        d.extent = e;
    } else {
      for (auto [d, from] : llvm::zip(dims, tiles[op->getOperand(0)].dims))
        d.extent = from.extent;
    }
    tiles[v] = undeclared(cast<TileType>(v.getType()).getElementType(), ctx, dims);
    return success();
  }
  if (Operation *twin = reloadTwins.lookup(op)) {
    // A reload whose tile is staged already (planRestaging): its twin's.
    for (auto [r, t] : llvm::zip(op->getResults(), twin->getResults()))
      tiles[r] = tiles[t];
    return success();
  }
  lineDirective(op);
  if (op->getDialect() && (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))) {
    bool allScalar = llvm::all_of(op->getResultTypes(),
                                  [](Type t) { return t.isIntOrFloat(); });
    if (allScalar)
      return emitScalarOp(op);
  }
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](SizeOp s) -> LogicalResult {
        auto t = cast<kite::TensorType>(s.getTensor().getType());
        int64_t d = s.getDim() < 0 ? s.getDim() + t.getRank() : s.getDim();
        scalars[s.getResult()] = tensors[s.getTensor()].size(d);
        return success();
      })
      .Case([&](SpecializeOp s) {
        scalars[s.getResult()] = scalar(s.getValue());
        return success();
      })
      .Case<EmptyOp, EmptyLikeOp, TensorReshapeOp>(
          [&](Operation *t) { return emitTensorOp(t); })
      .Case([&](TileForOp loop) { return emitNestedTileFor(loop); })
      .Case([&](GridForOp loop) { return emitNestedGridFor(loop); })
      .Case([&](scf::ForOp loop) { return emitScfFor(loop); })
      .Case([&](scf::IfOp i) { return emitScfIf(i); })
      .Case<SpanQueryOp, SpanIndexOp>([&](Operation *s) { return emitSpanOp(s); })
      .Case([&](LoadOp l) {
        if (prefetches.count(l))
          return emitPrefetchedLoad(l);
        return emitAccess(l, l.getTensor(), l.getSubscripts(), l.getMask(), {},
                          l.getResult(), std::nullopt);
      })
      .Case([&](StoreOp s) {
        return emitAccess(s, s.getTensor(), s.getSubscripts(), s.getMask(),
                          s.getValue(), {}, std::nullopt);
      })
      .Case([&](AtomicOp a) -> LogicalResult {
        // The GPU's atomics (kite_device.cuh's atomic_add, atomic_max,
        // atomic_min) take these element types; reference mode takes any.
        Type elem = getElementTypeOrNull(a.getTensor().getType());
        if (elem && !(elem.isF16() || elem.isBF16() || elem.isF32() || elem.isF64() ||
                      elem.isInteger(32) || elem.isInteger(64)))
          return a.emitError() << "atomics into tensors of dtype " << dtypeName(elem)
                               << " do not run on the GPU (they take f16, bf16, f32, f64, i32 "
                                  "and i64 tensors): accumulate into one of those and convert "
                                  "afterwards";
        return emitAccess(a, a.getTensor(), a.getSubscripts(), a.getMask(),
                          a.getValue(), {}, a.getKind());
      })
      .Case([&](UnaryOp u) { return emitUnary(u); })
      .Case([&](BinaryOp b) { return emitBinary(b); })
      .Case([&](CompareOp c) {
        Type lhs = getElementTypeOrNull(c.getLhs().getType());
        Type rhs = getElementTypeOrNull(c.getRhs().getType());
        Type common = promoteOperands(c.getLhs().getType(), c.getRhs().getType());
        if (!common)
          common = lhs ? lhs : rhs;
        std::string ct = computeType(common);
        auto fits32 = [&](Value v) {
          IndexRange r = indexRanges.elementsOf(v);
          return r.lo >= INT32_MIN && r.hi <= INT32_MAX;
        };
        if (common.isInteger(64) && fits32(c.getLhs()) && fits32(c.getRhs()))
          ct = "int";
        static const char *syms[] = {"==", "!=", "<", "<=", ">", ">="};
        std::string sym = syms[(int)c.getKind()];
        return emitElementwise(
            c, {c.getLhs(), c.getRhs()},
            [&](ArrayRef<std::string> a) {
              return llvm::formatv("cvt<{0}>({1}) {2} cvt<{0}>({3})", ct, a[0], sym,
                                   a[1])
                  .str();
            },
            IntegerType::get(op->getContext(), 1));
      })
      .Case([&](WhereOp w) {
        Type out = getElementTypeOrNull(w.getType());
        std::string ct = cType(out);
        return emitElementwise(
            w, {w.getCondition(), w.getTrueValue(), w.getFalseValue()},
            [&](ArrayRef<std::string> a) {
              return llvm::formatv("cvt<bool>({0}) ? cvt<{1}>({2}) : cvt<{1}>({3})", a[0],
                                   ct, a[1], a[2])
                  .str();
            },
            out);
      })
      .Case([&](CastOp c) {
        return emitElementwise(
            c, {c.getSource()}, [&](ArrayRef<std::string> a) { return a[0]; },
            getElementTypeOrNull(c.getType()));
      })
      .Case([&](ReduceOp r) { return emitReduce(r); })
      .Case([&](ScanOp s) { return emitScan(s); })
      .Case([&](AssociativeScanOp s) { return emitAssociativeScan(s); })
      .Case([&](SortOp s) { return emitSort(s); })
      .Case([&](RandomOp r) {
        static const char *fns[] = {"k_rand_uniform", "k_rand_normal", "k_rand_bits"};
        std::string fn = fns[(int)r.getKind()];
        // One memo of Philox words for all of the thread's elements.
        std::string memo = fresh("rng");
        line("RandomMemo " + memo + ";");
        return emitElementwise(
            r, {r.getSeed(), r.getOffsets()},
            [&](ArrayRef<std::string> a) {
              return llvm::formatv("{0}(cvt<i64>({1}), cvt<i64>({2}), {3})", fn, a[0], a[1], memo)
                  .str();
            },
            getElementTypeOrNull(r.getType()));
      })
      .Case([&](DotOp d) { return emitMatmul(d, {}, d.getLhs(), d.getRhs(), 2); })
      .Case([&](AddmmOp d) { return emitMatmul(d, d.getAcc(), d.getLhs(), d.getRhs(), 2); })
      .Case([&](BmmOp d) { return emitMatmul(d, {}, d.getLhs(), d.getRhs(), 3); })
      .Case([&](BaddbmmOp d) {
        return emitMatmul(d, d.getAcc(), d.getLhs(), d.getRhs(), 3);
      })
      .Case([&](MatmulOp m) -> LogicalResult {
        auto l = cast<TileType>(m.getLhs().getType());
        auto r = cast<TileType>(m.getRhs().getType());
        if (l.getRank() == 2 && r.getRank() == 2)
          return emitMatmul(m, {}, m.getLhs(), m.getRhs(), 2);
        if (l.getRank() == 3 && r.getRank() == 3)
          return emitMatmul(m, {}, m.getLhs(), m.getRhs(), 3);
        return m.emitError() << "matmul of ranks " << l.getRank() << " and "
                             << r.getRank() << " is not supported on the GPU yet; "
                                               "use dot/bmm";
      })
      .Case([&](FullOp f) { return emitFull(f); })
      .Case([&](ConvertLayoutOp c) {
        auto [ctx, dims] = layoutOf(c.getResult());
        tiles[c.getResult()] = convert(tiles[c.getSource()], ctx, dims);
        return success();
      })
      .Case([&](ArangeOp a) -> LogicalResult {
        auto type = cast<TileType>(a.getType());
        auto [ctx, dims] = layoutOf(a.getResult());
        if (paddedSize(type.getShape()[0]) != type.getShape()[0])
          dims[0].extent = std::to_string(type.getShape()[0]);
        Tile t = declare(type.getElementType(), ctx, dims);
        forEach(t, [&](ArrayRef<std::string> k) {
          line(llvm::formatv("{0}[{1}] = {2} + {3};", t.name, flat(t, k),
                             scalar(a.getBegin()), coord(t, 0, k[0])));
        });
        tiles[a.getResult()] = t;
        return success();
      })
      .Case<UnsqueezeOp, SqueezeOp, TransposeOp, PermuteOp, ReshapeOp, ExpandOp>(
          [&](Operation *s) { return emitShape(s); })
      .Default([&](Operation *other) {
        return other->emitError() << "kite cannot generate CUDA for '"
                                  << other->getName() << "' yet";
      });
}
//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

/// A unary op: one math function per element.
LogicalResult Emitter::emitUnary(UnaryOp u) {
  Type out = getElementTypeOrNull(u.getType());
  std::string ct = computeType(out);
  std::string fn;
  switch (u.getKind()) {
  case UnaryKind::neg: fn = "-"; break;
  case UnaryKind::exp: fn = fastMath && ct == "float" ? "__expf" : "k_exp"; break;
  case UnaryKind::exp2: fn = fastMath && ct == "float" ? "k_exp2_ftz" : "k_exp2"; break;
  case UnaryKind::log: fn = "k_log"; break;
  case UnaryKind::log2: fn = "k_log2"; break;
  case UnaryKind::sqrt: fn = "k_sqrt"; break;
  case UnaryKind::rsqrt: fn = "k_rsqrt"; break;
  case UnaryKind::abs: fn = "k_abs"; break;
  case UnaryKind::sin: fn = "k_sin"; break;
  case UnaryKind::cos: fn = "k_cos"; break;
  case UnaryKind::tanh: fn = "k_tanh"; break;
  case UnaryKind::erf: fn = "k_erf"; break;
  case UnaryKind::sigmoid: fn = "k_sigmoid"; break;
  case UnaryKind::relu: fn = "k_relu"; break;
  case UnaryKind::silu: fn = "k_silu"; break;
  case UnaryKind::gelu: fn = "k_gelu"; break;
  case UnaryKind::floor: fn = "k_floor"; break;
  case UnaryKind::ceil: fn = "k_ceil"; break;
  case UnaryKind::not_: fn = out.isInteger(1) ? "!" : "~"; break;
  }
  return emitElementwise(
      u, {u.getOperand()},
      [&](ArrayRef<std::string> a) {
        return llvm::formatv("{0}(cvt<{1}>({2}))", fn, ct, a[0]).str();
      },
      out);
}

/// A binary op, with division by a value broadcast along the result as one
/// reciprocal per divisor element and multiplies.
LogicalResult Emitter::emitBinary(BinaryOp b) {
  Type out = getElementTypeOrNull(b.getType());
  // Operands compute in the result's compute type (for comparisons
  // and bitwise ops on booleans this is bool/int).
  std::string ct = computeType(out);
  auto infix = [&](StringRef sym) {
    return [=](ArrayRef<std::string> a) {
      return llvm::formatv("cvt<{0}>({1}) {2} cvt<{0}>({3})", ct, a[0], sym, a[1])
          .str();
    };
  };
  auto fn = [&](StringRef name) {
    return [=](ArrayRef<std::string> a) {
      return llvm::formatv("{2}(cvt<{0}>({1}), cvt<{0}>({3}))", ct, a[0], name, a[1])
          .str();
    };
  };
  std::function<std::string(ArrayRef<std::string>)> expr;
  switch (b.getKind()) {
  case BinaryKind::add: expr = infix("+"); break;
  case BinaryKind::sub: expr = infix("-"); break;
  case BinaryKind::mul: expr = infix("*"); break;
  case BinaryKind::div: expr = infix("/"); break;
  case BinaryKind::mod: expr = fn("k_mod"); break;
  case BinaryKind::pow: expr = fn("k_pow"); break;
  case BinaryKind::maximum: expr = fn("k_maximum"); break;
  case BinaryKind::minimum: expr = fn("k_minimum"); break;
  case BinaryKind::and_: expr = infix("&"); break;
  case BinaryKind::or_: expr = infix("|"); break;
  case BinaryKind::xor_: expr = infix("^"); break;
  }
  // Division by a value broadcast along the result (softmax's `e /
  // sum`): one reciprocal per divisor element, then multiplies, as
  // Triton's default division does (within 1.5 ulp in f32).
  auto lhsTile = tiles.find(b.getLhs()), rhsTile = tiles.find(b.getRhs());
  if (b.getKind() == BinaryKind::div && ct == "float" && lhsTile != tiles.end() &&
      rhsTile != tiles.end() && rhsTile->second.regCount < lhsTile->second.regCount) {
    Tile divisor = rhsTile->second;
    Tile rcp = declare(Float32Type::get(b->getContext()), divisor.ctx, divisor.dims);
    forEach(rcp, [&](ArrayRef<std::string> k) {
      line(llvm::formatv("{0}[{1}] = 1.0f / cvt<float>({2}[{1}]);", rcp.name, flat(rcp, k),
                         divisor.name));
    });
    tiles[b.getRhs()] = rcp;
    LogicalResult r = emitElementwise(b, {b.getLhs(), b.getRhs()}, infix("*"), out);
    tiles[b.getRhs()] = divisor;
    return r;
  }
  return emitElementwise(b, {b.getLhs(), b.getRhs()}, expr, out);
}

LogicalResult Emitter::emitElementwise(
    Operation *op, ArrayRef<Value> operands,
    llvm::function_ref<std::string(ArrayRef<std::string>)> expr, Type resultElem) {
  auto [ctx, dims] = layoutOf(op->getResult(0));
  // Extents: from whichever operand has that dim.
  for (size_t i = 0; i < dims.size(); ++i) {
    dims[i].extent = "";
    for (Value v : operands) {
      auto it = tiles.find(v);
      if (it == tiles.end())
        continue;
      int64_t j = (int64_t)i - ((int64_t)dims.size() - it->second.rank());
      if (j >= 0 && it->second.dims[j].padded == dims[i].padded &&
          !it->second.dims[j].extent.empty()) {
        dims[i].extent = it->second.dims[j].extent;
        break;
      }
    }
  }
  Tile r = declare(resultElem, ctx, dims);
  SmallVector<std::optional<Tile>> ins;
  for (Value v : operands) {
    if (auto it = tiles.find(v); it != tiles.end())
      ins.push_back(readableAt(it->second, r, r.rank() - it->second.rank()));
    else
      ins.push_back(std::nullopt);
  }
  forEach(r, [&](ArrayRef<std::string> k) {
    SmallVector<std::string> args;
    for (auto [v, in] : llvm::zip(operands, ins))
      args.push_back(in ? at(*in, k, r.rank() - in->rank()) : scalar(v));
    line(llvm::formatv("{0}[{1}] = cvt<{2}>({3});", r.name, flat(r, k),
                       cType(resultElem), expr(args)));
  });
  tiles[op->getResult(0)] = r;
  return success();
}

LogicalResult Emitter::emitFull(FullOp op) {
  auto type = cast<TileType>(op.getType());
  SmallVector<std::string> extents;
  for (auto [d, size] : llvm::zip(op.getDims(), type.getShape())) {
    if (isa<SpanType>(d.getType())) {
      const SpanVars &sv = spans[d];
      extents.push_back(sv.exact ? "" : sv.valid);
    } else {
      extents.push_back(paddedSize(size) != size ? std::to_string(size) : "");
    }
  }
  auto [ctx, dims] = layoutOf(op.getResult());
  for (size_t i = 0; i < dims.size(); ++i)
    dims[i].extent = extents[i];
  Tile t = declare(type.getElementType(), ctx, dims);
  line("#pragma unroll");
  line(llvm::formatv("for (int q = 0; q < {0}; ++q) {1}[q] = cvt<{2}>({3});", t.regCount,
                     t.name, cType(t.elem), scalar(op.getValue())));
  tiles[op.getResult()] = t;
  return success();
}

LogicalResult Emitter::emitShape(Operation *op) {
  Value in = op->getOperand(0);
  Tile src = tiles[in];
  auto type = cast<TileType>(op->getResult(0).getType());
  if (auto u = dyn_cast<UnsqueezeOp>(op)) {
    int64_t d = u.getDim() < 0 ? u.getDim() + src.rank() + 1 : u.getDim();
    Tile t = src;
    t.dims.insert(t.dims.begin() + d, Dim());
    tiles[u.getResult()] = t;
    return success();
  }
  if (auto s = dyn_cast<SqueezeOp>(op)) {
    int64_t d = s.getDim() < 0 ? s.getDim() + src.rank() : s.getDim();
    Tile t = src;
    if (t.dims[d].padded == 1)
      t.dims.erase(t.dims.begin() + d);
    tiles[s.getResult()] = t;
    return success();
  }
  if (auto tr = dyn_cast<TransposeOp>(op)) {
    int64_t a = tr.getDim0() < 0 ? tr.getDim0() + src.rank() : tr.getDim0();
    int64_t b = tr.getDim1() < 0 ? tr.getDim1() + src.rank() : tr.getDim1();
    Tile t = src;
    std::swap(t.dims[a], t.dims[b]);
    tiles[tr.getResult()] = t;
    return success();
  }
  if (auto p = dyn_cast<PermuteOp>(op)) {
    Tile t = src;
    for (auto [i, d] : llvm::enumerate(p.getDims()))
      t.dims[i] = src.dims[d < 0 ? d + src.rank() : d];
    tiles[p.getResult()] = t;
    return success();
  }
  if (auto e = dyn_cast<ExpandOp>(op))
    return emitElementwise(
        e, {e.getOperand()}, [](ArrayRef<std::string> a) { return a[0]; }, src.elem);
  // Reshape: through shared memory in logical row-major order.
  auto srcType = cast<TileType>(in.getType());
  SmallVector<int64_t> padded;
  for (int64_t d : type.getShape())
    padded.push_back(paddedSize(d));
  auto [ctx, dims] = layoutOf(op->getResult(0));
  for (size_t i = 0; i < dims.size(); ++i)
    if (padded[i] != type.getShape()[i])
      dims[i].extent = std::to_string(type.getShape()[i]);
  Tile dst = declare(src.elem, ctx, dims);
  int64_t numel = 1;
  for (int64_t d : type.getShape())
    numel *= d;
  std::string buf = fresh("s");
  line("{");
  ++indent;
  line(llvm::formatv("{0}* {1} = {2};", cType(src.elem), buf, smem(src.elem, numel)));
  auto logical = [&](const Tile &t, ArrayRef<int64_t> sizes, ArrayRef<std::string> k,
                     std::string &cond) {
    std::string idx = "0";
    int64_t stride = 1;
    SmallVector<std::string> conds;
    for (int64_t i = t.rank() - 1; i >= 0; --i) {
      std::string c = coord(t, i, k[i]);
      idx = llvm::formatv("{0} + {1} * {2}", idx, c, stride);
      if (paddedSize(sizes[i]) != sizes[i])
        conds.push_back(llvm::formatv("{0} < {1}", c, sizes[i]));
      stride *= sizes[i];
    }
    cond = llvm::join(conds, " && ");
    return idx;
  };
  line(sync());
  std::string own = owner(src);
  forEach(src, [&](ArrayRef<std::string> k) {
    std::string cond;
    std::string idx = logical(src, srcType.getShape(), k, cond);
    if (!own.empty())
      cond = cond.empty() ? own : own + " && " + cond;
    line(llvm::formatv("{0}{1}[{2}] = {3}[{4}];", cond.empty() ? "" : "if (" + cond + ") ",
                       buf, idx, src.name, flat(src, k)));
  });
  line(sync());
  forEach(dst, [&](ArrayRef<std::string> k) {
    std::string cond;
    std::string idx = logical(dst, type.getShape(), k, cond);
    line(llvm::formatv("{0}[{1}] = {2}{3}[{4}]{5};", dst.name, flat(dst, k),
                       cond.empty() ? "" : "(" + cond + ") ? ", buf, idx,
                       cond.empty() ? "" : " : cvt<" + cType(src.elem) + ">(0)"));
  });
  line(sync());
  --indent;
  line("}");
  tiles[op->getResult(0)] = dst;
  return success();
}
