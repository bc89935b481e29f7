//===- TypeInference.cpp - dtype and shape inference ----------------------===//
//
// This file implements the type rules of the kite dialect and their
// application to a whole kernel. The rules follow PyTorch eager: dtype
// promotion by category (bool < integer < float) with scalars as weak types,
// true division, integer sums in i64, right-aligned broadcasting.
//
//===----------------------------------------------------------------------===//

#include "lowering/TypeInference.h"
#include "lowering/DynamicShapes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace kite;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

namespace {

enum class Category { Bool, Int, Float };

Category categoryOf(Type t) {
  if (t.isInteger(1))
    return Category::Bool;
  if (t.isSignlessInteger())
    return Category::Int;
  return Category::Float;
}

Type defaultFloat(MLIRContext *ctx) { return Float32Type::get(ctx); }

Type tileElem(Type t) { return getElementTypeOrNull(t); }

} // namespace

Type kite::promoteTypes(Type a, Type b) {
  if (!a || !b)
    return {};
  if (a == b)
    return a;
  Category ca = categoryOf(a), cb = categoryOf(b);
  if (ca != cb)
    return ca > cb ? a : b;
  if (ca == Category::Int)
    return a.getIntOrFloatBitWidth() >= b.getIntOrFloatBitWidth() ? a : b;
  // Floats: two of one width (f16 and bf16, e4m3 and e5m2) meet in f32;
  // otherwise the wider wins.
  if (a.getIntOrFloatBitWidth() == b.getIntOrFloatBitWidth())
    return defaultFloat(a.getContext());
  return a.getIntOrFloatBitWidth() >= b.getIntOrFloatBitWidth() ? a : b;
}

Type kite::promoteOperands(Type a, Type b) {
  bool aTile = isa<TileType>(a), bTile = isa<TileType>(b);
  Type ea = tileElem(a), eb = tileElem(b);
  if (!ea || !eb)
    return {};
  if (aTile == bTile)
    return promoteTypes(ea, eb);
  // One tile, one weak scalar: the scalar wins only with a higher category,
  // and then gives that category's default (i64, f32).
  Type tile = aTile ? ea : eb, scalar = aTile ? eb : ea;
  Category ct = categoryOf(tile), cs = categoryOf(scalar);
  if (cs <= ct)
    return tile;
  if (cs == Category::Float)
    return defaultFloat(tile.getContext());
  return IntegerType::get(tile.getContext(), 64);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> kite::broadcastShapes(ArrayRef<int64_t> a,
                                                      ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1)
      out[i] = db;
    else if (db == 1)
      out[i] = da;
    else if (ShapedType::isDynamic(da))
      out[i] = db;
    else if (ShapedType::isDynamic(db) || da == db)
      out[i] = da;
    else
      return failure();
  }
  return out;
}

int64_t kite::getStaticDim(Value dim) {
  if (isa<SpanType>(dim.getType())) {
    auto arg = cast<BlockArgument>(dim);
    auto loop = cast<TileForOp>(arg.getOwner()->getParentOp());
    return getStaticDim(loop.getBlockSizes()[arg.getArgNumber()]);
  }
  if (std::optional<int64_t> c = getConstantIntValue(dim))
    return *c;
  return ShapedType::kDynamic;
}

namespace {

/// True if two tile types could become equal once dynamic dims and unknown
/// element types are filled in.
bool compatibleTypes(Type a, Type b) {
  auto ta = dyn_cast<TileType>(a), tb = dyn_cast<TileType>(b);
  if (!ta || !tb)
    return a == b;
  if (ta.hasElementType() && tb.hasElementType() &&
      ta.getElementType() != tb.getElementType())
    return false;
  if (!ta.hasRank() || !tb.hasRank())
    return true;
  if (ta.getRank() != tb.getRank())
    return false;
  for (auto [x, y] : llvm::zip(ta.getShape(), tb.getShape()))
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return false;
  return true;
}

/// Shape of a tile or scalar (rank 0); nullopt if unranked.
std::optional<SmallVector<int64_t>> shapeOf(Type t) {
  if (auto tile = dyn_cast<TileType>(t)) {
    if (!tile.hasRank())
      return std::nullopt;
    return SmallVector<int64_t>(tile.getShape());
  }
  if (auto tensor = dyn_cast<kite::TensorType>(t)) {
    if (!tensor.hasRank())
      return std::nullopt;
    return SmallVector<int64_t>(tensor.getShape());
  }
  return SmallVector<int64_t>();
}

TileType makeTile(MLIRContext *ctx, std::optional<SmallVector<int64_t>> shape,
                  Type elem) {
  if (shape)
    return TileType::get(ctx, ArrayRef<int64_t>(*shape), elem);
  return TileType::get(ctx, std::nullopt, elem);
}

/// Normalizes a possibly negative dim; nullopt if out of range.
std::optional<int64_t> normDim(int64_t d, int64_t rank) {
  if (d < -rank || d >= rank)
    return std::nullopt;
  return d < 0 ? d + rank : d;
}

Type dtypeOf(Value dtype) {
  if (auto c = dtype.getDefiningOp<DTypeConstOp>())
    return c.getDtype();
  return {};
}

//===----------------------------------------------------------------------===//
// The rules, one per op
//===----------------------------------------------------------------------===//

class Inferrer {
public:
  explicit Inferrer(MLIRContext *ctx) : ctx(ctx) {}

  /// In the final round, loop-carried types must match exactly; before it,
  /// a dim that later folds to a constant may still be dynamic.
  bool strict = true;

  LogicalResult inferBlock(Block &block) {
    for (Operation &op : block)
      if (failed(infer(&op)))
        return failure();
    return success();
  }

private:
  MLIRContext *ctx;

  Type i64() { return IntegerType::get(ctx, 64); }
  Type i1() { return IntegerType::get(ctx, 1); }

  void set(Value v, Type t) { v.setType(t); }

  /// Elementwise result: broadcast shape of all operands, `elem`.
  FailureOr<Type> elementwise(Operation *op, ArrayRef<Type> operands,
                              Type elem) {
    std::optional<SmallVector<int64_t>> shape = SmallVector<int64_t>();
    for (Type t : operands) {
      std::optional<SmallVector<int64_t>> s = shapeOf(t);
      if (!s || !shape) {
        shape = std::nullopt;
        continue;
      }
      FailureOr<SmallVector<int64_t>> b = broadcastShapes(*shape, *s);
      if (failed(b)) {
        InFlightDiagnostic d = op->emitError() << "shapes do not broadcast:";
        for (Type o : operands)
          d << " " << o;
        return failure();
      }
      shape = *b;
    }
    return Type(makeTile(ctx, shape, elem));
  }

  LogicalResult infer(Operation *op);
  LogicalResult inferTensorOp(Operation *op);
  LogicalResult inferControlFlow(Operation *op);
  LogicalResult inferAccess(Operation *op);
  LogicalResult inferElementwise(Operation *op);
  LogicalResult inferReductionOrProduct(Operation *op);
  LogicalResult inferShapeOp(Operation *op);
  LogicalResult inferLoop(Operation *op, ValueRange inits, Block &body,
                          unsigned numIndices);
  LogicalResult inferSubscript(Operation *op, Value tensor,
                               ArrayRef<Subscript> subs,
                               std::optional<SmallVector<int64_t>> &shape);
  /// `outElem`: the result's element type where the op names one.
  FailureOr<Type> inferMatmul(Operation *op, Type lhs, Type rhs,
                              Type acc, int64_t rank, Type outElem = {});
};

LogicalResult Inferrer::inferLoop(Operation *op, ValueRange inits, Block &body,
                                  unsigned numIndices) {
  for (auto [i, init] : llvm::enumerate(inits))
    set(body.getArgument(numIndices + i), init.getType());
  if (failed(inferBlock(body)))
    return failure();
  Operation *term = body.getTerminator();
  for (auto [i, init] : llvm::enumerate(inits)) {
    Type carried = init.getType();
    Type next = term->getOperand(i).getType();
    if (carried != next && (strict || !compatibleTypes(carried, next)))
      return op->emitError()
             << "a variable carried by this loop changes type from " << carried
             << " to " << next
             << "; give it its final dtype and shape before the loop (e.g. "
                "with .to() or zeros(..., dtype))";
    set(op->getResult(i), carried);
  }
  return success();
}

LogicalResult
Inferrer::inferSubscript(Operation *op, Value tensor, ArrayRef<Subscript> subs,
                         std::optional<SmallVector<int64_t>> &shape) {
  auto tensorType = cast<kite::TensorType>(tensor.getType());
  if (!tensorType.hasRank()) {
    shape = std::nullopt;
    return success();
  }
  ArrayRef<int64_t> sizes = tensorType.getShape();
  SmallVector<int64_t> out;
  int64_t dim = 0;
  bool gathered = false;
  for (size_t p = 0; p < subs.size(); ++p) {
    const Subscript &s = subs[p];
    if (s.kind == Subscript::Kind::NewAxis) {
      out.push_back(1);
      continue;
    }
    if (dim >= (int64_t)sizes.size())
      return op->emitError() << "too many subscripts (" << subs.size()
                             << ") for a tensor of rank " << sizes.size();
    switch (s.kind) {
    case Subscript::Kind::All:
      out.push_back(wholeExtent(tensor, dim));
      break;
    case Subscript::Kind::Span:
      out.push_back(getStaticDim(s.value));
      break;
    case Subscript::Kind::Scalar:
      break;
    case Subscript::Kind::Gather: {
      // Adjacent tensor indices broadcast together (PyTorch's advanced
      // indexing); their shape takes the place of the dims they index.
      if (gathered)
        return op->emitError() << "tensor-valued indices must be adjacent in a "
                                  "subscript";
      gathered = true;
      SmallVector<int64_t> group;
      size_t q = p;
      for (; q < subs.size() && subs[q].kind == Subscript::Kind::Gather; ++q) {
        std::optional<SmallVector<int64_t>> g = shapeOf(subs[q].value.getType());
        if (!g) {
          shape = std::nullopt;
          return success();
        }
        FailureOr<SmallVector<int64_t>> b = broadcastShapes(group, *g);
        if (failed(b))
          return op->emitError() << "tensor-valued indices do not broadcast "
                                    "together";
        group = *b;
      }
      if (dim + (int64_t)(q - p) > (int64_t)sizes.size())
        return op->emitError() << "too many subscripts (" << subs.size()
                               << ") for a tensor of rank " << sizes.size();
      out.append(group);
      dim += q - p - 1;
      p = q - 1;
      break;
    }
    default:
      break;
    }
    ++dim;
  }
  for (; dim < (int64_t)sizes.size(); ++dim)
    out.push_back(wholeExtent(tensor, dim));
  shape = out;
  return success();
}

FailureOr<Type> Inferrer::inferMatmul(Operation *op, Type lhs, Type rhs,
                                      Type acc, int64_t rank, Type outElem) {
  std::optional<SmallVector<int64_t>> a = shapeOf(lhs), b = shapeOf(rhs);
  Type ea = tileElem(lhs), eb = tileElem(rhs);
  Type elem = promoteTypes(ea, eb);
  if (acc)
    elem = tileElem(acc);
  else if (outElem)
    elem = outElem;
  else if (rank == 2 && ea && eb && isNarrowFloat(ea) &&
           isNarrowFloat(eb) && isa<DotOp>(op))
    elem = defaultFloat(ctx);
  if (!a || !b)
    return Type(makeTile(ctx, std::nullopt, elem));
  if ((int64_t)a->size() != rank || (int64_t)b->size() != rank)
    return op->emitError() << "expects rank-" << rank << " operands, got "
                           << lhs << " and " << rhs;
  int64_t k1 = (*a)[rank - 1], k2 = (*b)[rank - 2];
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2)
    return op->emitError() << "inner dimensions differ: " << lhs << " and "
                           << rhs;
  SmallVector<int64_t> out(a->begin(), a->end() - 1);
  out.push_back((*b)[rank - 1]);
  if (rank == 3) {
    FailureOr<SmallVector<int64_t>> batch =
        broadcastShapes({(*a)[0]}, {(*b)[0]});
    if (failed(batch))
      return op->emitError() << "batch dimensions differ: " << lhs << " and "
                             << rhs;
    out[0] = (*batch)[0];
  }
  if (acc) {
    std::optional<SmallVector<int64_t>> c = shapeOf(acc);
    if (c) {
      FailureOr<SmallVector<int64_t>> bc = broadcastShapes(*c, out);
      if (failed(bc) || bc->size() != out.size())
        return op->emitError() << "accumulator " << acc
                               << " does not match the product's shape";
      out = *bc;
    }
  }
  return Type(makeTile(ctx, out, elem));
}

/// Tensors the kernel makes (outputs, reshaped views) and specialized scalars.
LogicalResult Inferrer::inferTensorOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](EmptyOp e) -> LogicalResult {
        SmallVector<int64_t> shape;
        for (Value s : e.getSizes())
          shape.push_back(getConstantIntValue(s).value_or(ShapedType::kDynamic));
        set(e.getResult(), kite::TensorType::get(ctx, ArrayRef<int64_t>(shape),
                                                 dtypeOf(e.getDtype())));
        return success();
      })
      .Case([&](EmptyLikeOp e) -> LogicalResult {
        set(e.getResult(), e.getSource().getType());
        return success();
      })
      .Case([&](TensorReshapeOp r) -> LogicalResult {
        auto src = cast<kite::TensorType>(r.getSource().getType());
        SmallVector<int64_t> shape;
        int64_t known = 1, inferred = -1;
        // Products of sizes saturate: a size no tensor has (a bad spec, a
        // fuzzer's) must give an error, not overflow.
        auto times = [](int64_t a, int64_t b) {
          int64_t r;
          return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
        };
        for (auto [i, s] : llvm::enumerate(r.getSizes())) {
          int64_t v = getConstantIntValue(s).value_or(ShapedType::kDynamic);
          if (v == -1) {
            if (inferred >= 0)
              return r.emitError() << "only one size of a reshape may be -1";
            inferred = i;
          } else if (v < 0 && !ShapedType::isDynamic(v)) {
            return r.emitError() << "a reshape size must be -1 or at least 0, not " << v;
          } else if (!ShapedType::isDynamic(v)) {
            known = times(known, v);
          }
          shape.push_back(v);
        }
        if (src.hasStaticShape()) {
          int64_t numel = 1;
          for (int64_t d : src.getShape())
            numel = times(numel, d);
          if (inferred >= 0 && known > 0)
            shape[inferred] = numel / known;
          int64_t total = 1;
          bool allStatic = true;
          for (int64_t d : shape) {
            allStatic &= !ShapedType::isDynamic(d);
            if (!ShapedType::isDynamic(d))
              total = times(total, d);
          }
          if (allStatic && total != numel)
            return r.emitError() << "cannot reshape a tensor of " << numel
                                 << " elements into " << total;
        }
        set(r.getResult(), kite::TensorType::get(ctx, ArrayRef<int64_t>(shape),
                                                 src.getElementType()));
        return success();
      })
      .Case([&](SpecializeOp s) -> LogicalResult {
        set(s.getResult(), s.getValue().getType());
        return success();
      });
}

/// Loops and branches: carried values and results from their bodies.
LogicalResult Inferrer::inferControlFlow(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](TileForOp loop) -> LogicalResult {
        return inferLoop(loop, loop.getInitArgs(), *loop.getBodyBlock(),
                         loop.getNumDims());
      })
      .Case([&](GridForOp loop) -> LogicalResult {
        return inferLoop(loop, loop.getInitArgs(), *loop.getBodyBlock(),
                         loop.getNumDims());
      })
      .Case([&](scf::ForOp loop) -> LogicalResult {
        return inferLoop(loop, loop.getInitArgs(), *loop.getBody(), 1);
      })
      .Case([&](scf::IfOp ifOp) -> LogicalResult {
        if (failed(inferBlock(*ifOp.thenBlock())))
          return failure();
        if (ifOp.elseBlock() && failed(inferBlock(*ifOp.elseBlock())))
          return failure();
        for (unsigned i = 0; i < ifOp.getNumResults(); ++i) {
          Type t = ifOp.thenYield().getOperand(i).getType();
          Type e = ifOp.elseYield().getOperand(i).getType();
          if (t != e)
            return ifOp.emitError()
                   << "a variable assigned in this if has type " << t
                   << " in one branch and " << e << " in the other";
          set(ifOp.getResult(i), t);
        }
        return success();
      });
}

/// Loads, stores and atomics, and a span's indices.
LogicalResult Inferrer::inferAccess(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](SpanIndexOp s) -> LogicalResult {
        set(s.getResult(),
            makeTile(ctx, SmallVector<int64_t>{getStaticDim(s.getSpan())}, i64()));
        return success();
      })
      .Case([&](LoadOp load) -> LogicalResult {
        std::optional<SmallVector<int64_t>> shape;
        if (failed(inferSubscript(load, load.getTensor(), load.getSubscripts(),
                                  shape)))
          return failure();
        set(load.getResult(),
            makeTile(ctx, shape, getElementTypeOrNull(load.getTensor().getType())));
        return success();
      })
      .Case<StoreOp, AtomicOp>([&](auto store) -> LogicalResult {
        std::optional<SmallVector<int64_t>> shape;
        if (failed(inferSubscript(store, store.getTensor(),
                                  store.getSubscripts(), shape)))
          return failure();
        std::optional<SmallVector<int64_t>> value =
            shapeOf(store.getValue().getType());
        if (shape && value) {
          // The value broadcasts to the subscript's shape. A dim not known
          // yet (an output's size before the prologue folds) fits anything;
          // a later round, with static shapes, decides.
          bool fits = value->size() <= shape->size();
          for (size_t i = 0; fits && i < value->size(); ++i) {
            int64_t v = (*value)[value->size() - 1 - i];
            int64_t t = (*shape)[shape->size() - 1 - i];
            fits = v == t || v == 1 || ShapedType::isDynamic(v) || ShapedType::isDynamic(t);
          }
          if (!fits) {
            auto dims = [](ArrayRef<int64_t> s) {
              std::string text;
              for (auto [i, d] : llvm::enumerate(s))
                text += (i ? ", " : "") +
                        (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
              return text;
            };
            store.emitError() << "cannot store a value of shape [" << dims(*value)
                              << "] into a subscript of shape [" << dims(*shape) << "]";
            return failure();
          }
        }
        return success();
      });
}

/// Elementwise ops: broadcast shapes, PyTorch's type promotion.
LogicalResult Inferrer::inferElementwise(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](UnaryOp u) -> LogicalResult {
        Type in = tileElem(u.getOperand().getType());
        Type elem = in;
        switch (u.getKind()) {
        case UnaryKind::neg:
        case UnaryKind::abs:
        case UnaryKind::relu:
        case UnaryKind::floor:
        case UnaryKind::ceil:
        case UnaryKind::not_:
          break;
        default: // transcendental: integers compute in the default float
          if (in && categoryOf(in) != Category::Float)
            elem = defaultFloat(ctx);
        }
        FailureOr<Type> t = elementwise(u, {u.getOperand().getType()}, elem);
        if (failed(t))
          return failure();
        set(u.getResult(), *t);
        return success();
      })
      .Case([&](BinaryOp b) -> LogicalResult {
        Type lhs = b.getLhs().getType(), rhs = b.getRhs().getType();
        Type elem = promoteOperands(lhs, rhs);
        if (elem && b.getKind() == BinaryKind::div &&
            categoryOf(elem) != Category::Float)
          elem = defaultFloat(ctx);
        FailureOr<Type> t = elementwise(b, {lhs, rhs}, elem);
        if (failed(t))
          return failure();
        set(b.getResult(), *t);
        return success();
      })
      .Case([&](CompareOp c) -> LogicalResult {
        FailureOr<Type> t =
            elementwise(c, {c.getLhs().getType(), c.getRhs().getType()}, i1());
        if (failed(t))
          return failure();
        set(c.getResult(), *t);
        return success();
      })
      .Case([&](WhereOp w) -> LogicalResult {
        Type elem = promoteOperands(w.getTrueValue().getType(),
                                    w.getFalseValue().getType());
        FailureOr<Type> t = elementwise(
            w,
            {w.getCondition().getType(), w.getTrueValue().getType(),
             w.getFalseValue().getType()},
            elem);
        if (failed(t))
          return failure();
        set(w.getResult(), *t);
        return success();
      })
      .Case([&](RandomOp r) -> LogicalResult {
        Type elem = r.getKind() == RandomKind::bits ? i64() : Type(Float32Type::get(ctx));
        set(r.getResult(), makeTile(ctx, shapeOf(r.getOffsets().getType()), elem));
        return success();
      })
      .Case([&](CastOp c) -> LogicalResult {
        set(c.getResult(), makeTile(ctx, shapeOf(c.getSource().getType()),
                                    dtypeOf(c.getDtype())));
        return success();
      });
}

/// Reductions and matrix products.
LogicalResult Inferrer::inferReductionOrProduct(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ReduceOp r) -> LogicalResult {
        std::optional<SmallVector<int64_t>> shape =
            shapeOf(r.getOperand().getType());
        if (shape) {
          std::optional<int64_t> d = normDim(r.getDim(), shape->size());
          if (!d)
            return r.emitError() << "dimension " << r.getDim()
                                 << " is out of range for a tile of rank "
                                 << shape->size();
          if (r.getKeepdim())
            (*shape)[*d] = 1;
          else
            shape->erase(shape->begin() + *d);
        }
        Type in = tileElem(r.getOperand().getType());
        Type elem = in;
        switch (r.getKind()) {
        case ReduceKind::sum:
        case ReduceKind::prod:
          if (in && categoryOf(in) != Category::Float)
            elem = i64();
          break;
        case ReduceKind::mean:
          if (in && categoryOf(in) != Category::Float)
            return r.emitError() << "mean needs a floating-point tile, got "
                                 << r.getOperand().getType()
                                 << "; convert it with .to(f32)";
          break;
        case ReduceKind::argmax:
        case ReduceKind::argmin:
          elem = i64();
          break;
        default:
          break;
        }
        set(r.getResult(), makeTile(ctx, shape, elem));
        return success();
      })
      .Case([&](SortOp c) -> LogicalResult {
        std::optional<SmallVector<int64_t>> shape = shapeOf(c.getOperand().getType());
        if (shape) {
          std::optional<int64_t> d = normDim(c.getDim(), shape->size());
          if (!d)
            return c.emitError() << "dimension " << c.getDim()
                                 << " is out of range for a tile of rank " << shape->size();
          if (Value k = c.getK()) {
            llvm::APInt v;
            (*shape)[*d] = matchPattern(k, m_ConstantInt(&v)) ? v.getSExtValue()
                                                               : ShapedType::kDynamic;
          }
        }
        set(c.getValues(), makeTile(ctx, shape, tileElem(c.getOperand().getType())));
        set(c.getIndices(), makeTile(ctx, shape, i64()));
        return success();
      })
      .Case([&](ScanOp c) -> LogicalResult {
        std::optional<SmallVector<int64_t>> shape = shapeOf(c.getOperand().getType());
        if (shape && !normDim(c.getDim(), shape->size()))
          return c.emitError() << "dimension " << c.getDim()
                               << " is out of range for a tile of rank " << shape->size();
        Type elem = tileElem(c.getOperand().getType());
        if (elem && categoryOf(elem) != Category::Float &&
            (c.getKind() == ScanKind::sum || c.getKind() == ScanKind::prod))
          elem = i64();
        set(c.getResult(), makeTile(ctx, shape, elem));
        if (Value idx = c.getIndices())
          set(idx, makeTile(ctx, shape, i64()));
        return success();
      })
      .Case([&](AssociativeScanOp c) -> LogicalResult {
        // One shape for all operands; the combine function runs on rank-0
        // tiles of their dtypes and must give those dtypes back.
        std::optional<SmallVector<int64_t>> shape = shapeOf(c.getOperands()[0].getType());
        for (Value v : c.getOperands()) {
          std::optional<SmallVector<int64_t>> s = shapeOf(v.getType());
          if (shape && s && *s != *shape)
            return c.emitError() << "associative_scan of tiles of different shapes: "
                                 << c.getOperands()[0].getType() << " and " << v.getType();
        }
        if (shape && !normDim(c.getDim(), shape->size()))
          return c.emitError() << "dimension " << c.getDim()
                               << " is out of range for a tile of rank " << shape->size();
        size_t n = c.getOperands().size();
        Block &body = c.getCombine().front();
        for (auto [i, arg] : llvm::enumerate(body.getArguments()))
          set(arg, makeTile(ctx, SmallVector<int64_t>(),
                            tileElem(c.getOperands()[i % n].getType())));
        if (failed(inferBlock(body)))
          return failure();
        WalkResult outside = body.walk([&](Operation *inner) {
          for (Value v : inner->getOperands()) {
            std::optional<SmallVector<int64_t>> s = shapeOf(v.getType());
            if (c.getCombine().isAncestor(v.getParentRegion()) || !isa<TileType>(v.getType()) ||
                !s || s->empty())
              continue;
            c.emitError() << "the combine function of associative_scan uses a tile of rank "
                          << s->size() << " from outside it; it may use only its arguments, "
                             "scalars and one-element tiles";
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
        if (outside.wasInterrupted())
          return failure();
        for (auto [i, v] : llvm::enumerate(c.getYield().getValues())) {
          Type want = tileElem(c.getOperands()[i].getType());
          Type have = tileElem(v.getType());
          if (want && have && want != have)
            return c.emitError() << "the combine function of associative_scan returns " << have
                                 << " for tensor " << i << ", whose dtype is " << want
                                 << "; cast it back (.to(...)) in the combine function";
          std::optional<SmallVector<int64_t>> s = shapeOf(v.getType());
          if (s && !s->empty())
            return c.emitError() << "the combine function of associative_scan returns a tile "
                                    "of rank "
                                 << s->size() << " for tensor " << i
                                 << "; it must return one element (rank 0)";
        }
        for (auto [operand, result] : llvm::zip(c.getOperands(), c.getResults()))
          set(result, makeTile(ctx, shapeOf(operand.getType()), tileElem(operand.getType())));
        return success();
      })
      .Case([&](DotOp d) -> LogicalResult {
        FailureOr<Type> t = inferMatmul(d, d.getLhs().getType(),
                                        d.getRhs().getType(), {}, 2);
        if (failed(t))
          return failure();
        set(d.getResult(), *t);
        return success();
      })
      .Case([&](AddmmOp d) -> LogicalResult {
        FailureOr<Type> t = inferMatmul(d, d.getLhs().getType(),
                                        d.getRhs().getType(),
                                        d.getAcc().getType(), 2);
        if (failed(t))
          return failure();
        set(d.getResult(), *t);
        return success();
      })
      .Case([&](BmmOp d) -> LogicalResult {
        FailureOr<Type> t = inferMatmul(d, d.getLhs().getType(),
                                        d.getRhs().getType(), {}, 3,
                                        d.getOutDtype().value_or(Type()));
        if (failed(t))
          return failure();
        set(d.getResult(), *t);
        return success();
      })
      .Case([&](BaddbmmOp d) -> LogicalResult {
        FailureOr<Type> t = inferMatmul(d, d.getLhs().getType(),
                                        d.getRhs().getType(),
                                        d.getAcc().getType(), 3);
        if (failed(t))
          return failure();
        set(d.getResult(), *t);
        return success();
      })
      .Case([&](MatmulOp m) -> LogicalResult {
        std::optional<SmallVector<int64_t>> a = shapeOf(m.getLhs().getType()),
                                            b = shapeOf(m.getRhs().getType());
        Type elem = promoteTypes(tileElem(m.getLhs().getType()),
                                 tileElem(m.getRhs().getType()));
        if (!a || !b) {
          set(m.getResult(), makeTile(ctx, std::nullopt, elem));
          return success();
        }
        // torch.matmul: 1-D operands gain and lose a dim; batch dims broadcast.
        SmallVector<int64_t> sa = *a, sb = *b;
        bool va = sa.size() == 1, vb = sb.size() == 1;
        if (va)
          sa.insert(sa.begin(), 1);
        if (vb)
          sb.push_back(1);
        FailureOr<SmallVector<int64_t>> batch = broadcastShapes(
            ArrayRef<int64_t>(sa).drop_back(2), ArrayRef<int64_t>(sb).drop_back(2));
        if (failed(batch))
          return m.emitError() << "batch dimensions do not broadcast";
        SmallVector<int64_t> out = *batch;
        if (!va)
          out.push_back(sa[sa.size() - 2]);
        if (!vb)
          out.push_back(sb.back());
        set(m.getResult(), makeTile(ctx, out, elem));
        return success();
      });
}

/// Constants, index ranges and shape ops.
LogicalResult Inferrer::inferShapeOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](FullOp f) -> LogicalResult {
        SmallVector<int64_t> shape;
        for (Value d : f.getDims())
          shape.push_back(getStaticDim(d));
        set(f.getResult(), makeTile(ctx, shape, dtypeOf(f.getDtype())));
        return success();
      })
      .Case([&](ArangeOp a) -> LogicalResult {
        std::optional<int64_t> b = getConstantIntValue(a.getBegin());
        std::optional<int64_t> e = getConstantIntValue(a.getEnd());
        int64_t n = b && e ? *e - *b : ShapedType::kDynamic;
        set(a.getResult(), makeTile(ctx, SmallVector<int64_t>{n}, i64()));
        return success();
      })
      .Case([&](UnsqueezeOp u) -> LogicalResult {
        std::optional<SmallVector<int64_t>> s = shapeOf(u.getOperand().getType());
        if (s) {
          std::optional<int64_t> d = normDim(u.getDim(), s->size() + 1);
          if (!d)
            return u.emitError() << "dimension " << u.getDim()
                                 << " is out of range for unsqueeze of rank "
                                 << s->size();
          s->insert(s->begin() + *d, 1);
        }
        set(u.getResult(), makeTile(ctx, s, tileElem(u.getOperand().getType())));
        return success();
      })
      .Case([&](SqueezeOp q) -> LogicalResult {
        std::optional<SmallVector<int64_t>> s = shapeOf(q.getOperand().getType());
        if (s) {
          std::optional<int64_t> d = normDim(q.getDim(), s->size());
          if (!d)
            return q.emitError() << "dimension " << q.getDim()
                                 << " is out of range for a tile of rank "
                                 << s->size();
          if ((*s)[*d] == 1)
            s->erase(s->begin() + *d); // PyTorch: a no-op when not size 1
        }
        set(q.getResult(), makeTile(ctx, s, tileElem(q.getOperand().getType())));
        return success();
      })
      .Case([&](TransposeOp t) -> LogicalResult {
        std::optional<SmallVector<int64_t>> s = shapeOf(t.getOperand().getType());
        if (s) {
          std::optional<int64_t> a = normDim(t.getDim0(), s->size());
          std::optional<int64_t> b = normDim(t.getDim1(), s->size());
          if (!a || !b)
            return t.emitError() << "transpose dims out of range for rank "
                                 << s->size();
          std::swap((*s)[*a], (*s)[*b]);
        }
        set(t.getResult(), makeTile(ctx, s, tileElem(t.getOperand().getType())));
        return success();
      })
      .Case([&](PermuteOp p) -> LogicalResult {
        std::optional<SmallVector<int64_t>> s = shapeOf(p.getOperand().getType());
        if (s) {
          SmallVector<int64_t> out;
          for (int64_t d : p.getDims())
            out.push_back((*s)[*normDim(d, s->size())]);
          s = out;
        }
        set(p.getResult(), makeTile(ctx, s, tileElem(p.getOperand().getType())));
        return success();
      })
      .Case([&](ReshapeOp r) -> LogicalResult {
        SmallVector<int64_t> shape;
        for (Value d : r.getDims())
          shape.push_back(getStaticDim(d));
        std::optional<SmallVector<int64_t>> src = shapeOf(r.getOperand().getType());
        auto minusOne = llvm::find(shape, -1);
        if (minusOne != shape.end()) {
          int64_t numel = 1, known = 1;
          bool staticSrc = src.has_value();
          if (src)
            for (int64_t d : *src) {
              staticSrc &= !ShapedType::isDynamic(d);
              numel *= d;
            }
          for (int64_t d : shape)
            if (d != -1)
              known *= d;
          *minusOne = staticSrc && known > 0 && !ShapedType::isDynamic(known)
                          ? numel / known
                          : ShapedType::kDynamic;
        }
        set(r.getResult(),
            makeTile(ctx, shape, tileElem(r.getOperand().getType())));
        return success();
      })
      .Case([&](ExpandOp e) -> LogicalResult {
        std::optional<SmallVector<int64_t>> src = shapeOf(e.getOperand().getType());
        SmallVector<int64_t> shape;
        for (Value d : e.getDims())
          shape.push_back(getStaticDim(d));
        if (src) {
          size_t off = shape.size() - src->size();
          for (size_t i = 0; i < src->size(); ++i)
            if (shape[off + i] == -1)
              shape[off + i] = (*src)[i];
        }
        set(e.getResult(), makeTile(ctx, shape, tileElem(e.getOperand().getType())));
        return success();
      })
      .Case([&](UnrealizedConversionCastOp c) -> LogicalResult {
        // The frontend reconciles a loop-carried variable's captured types
        // with casts; once types are inferred they are the identity.
        if (c.getNumOperands() == 1 && c.getNumResults() == 1 &&
            isa<TileType>(c.getOperand(0).getType()))
          set(c.getResult(0), c.getOperand(0).getType());
        return success();
      });
}

LogicalResult Inferrer::infer(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<EmptyOp, EmptyLikeOp, TensorReshapeOp, SpecializeOp>(
          [&](Operation *o) { return inferTensorOp(o); })
      .Case<TileForOp, GridForOp, scf::ForOp, scf::IfOp>(
          [&](Operation *o) { return inferControlFlow(o); })
      .Case<SpanIndexOp, LoadOp, StoreOp, AtomicOp>(
          [&](Operation *o) { return inferAccess(o); })
      .Case<UnaryOp, BinaryOp, CompareOp, WhereOp, CastOp, RandomOp>(
          [&](Operation *o) { return inferElementwise(o); })
      .Case<ReduceOp, ScanOp, AssociativeScanOp, SortOp, DotOp, AddmmOp, BmmOp, BaddbmmOp,
            MatmulOp>(
          [&](Operation *o) { return inferReductionOrProduct(o); })
      .Case<FullOp, ArangeOp, UnsqueezeOp, SqueezeOp, TransposeOp, PermuteOp, ReshapeOp, ExpandOp, UnrealizedConversionCastOp>(
          [&](Operation *o) { return inferShapeOp(o); })
      .Default([&](Operation *other) -> LogicalResult {
        // Scalar arith/math, constants, dtype values, sizes, block sizes and
        // span queries have fixed types; regions of other ops are walked.
        for (Region &region : other->getRegions())
          for (Block &block : region)
            if (failed(inferBlock(block)))
              return failure();
        return success();
      });
}

} // namespace

LogicalResult kite::inferTypes(func::FuncOp func, bool strict) {
  Inferrer inferrer(func.getContext());
  inferrer.strict = strict;
  if (failed(inferrer.inferBlock(func.getBody().front())))
    return failure();
  SmallVector<Type> results;
  func.walk([&](func::ReturnOp ret) {
    results.assign(ret.getOperandTypes().begin(), ret.getOperandTypes().end());
  });
  func.setFunctionType(FunctionType::get(
      func.getContext(), func.getBody().front().getArgumentTypes(), results));
  return success();
}
