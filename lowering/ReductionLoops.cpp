//===- ReductionLoops.cpp - looped reductions -----------------------------===//
//
// This file implements `kite-reduction-loops` (see Passes.td): for each
// reduction dimension the config gives a chunk size, the whole-row values of
// that dimension are no longer held in registers; every reduction over the
// dimension and every store of a whole-row value becomes a sequential loop
// over chunks that recomputes the value from its loads, chunk by chunk.
//
// Softmax over rows of 65536 with chunk 4096, schematically:
//
//   %row = load x[%tn, all]                 %a = tile_for %tc in [0, 65536) step 4096
//   %m   = reduce amax %row                        iter_args(%a = full(-inf, [1, 4096])) {
//   %e   = exp(%row - %m)          ==>        yield maximum(%a, load x[%tn, %tc]) }
//   %s   = reduce sum %e                    %m = reduce amax %a
//   store %e / %s, out[%tn, all]            %s = ... the same for sum of exp(load - %m)
//                                           tile_for ... { store exp(load - %m) / %s }
//
// A reduction's loop combines chunks elementwise into a chunk-shaped
// accumulator and reduces it once after the loop, so a chunk costs no
// cross-thread step. Each loop reloads its inputs (memory traffic grows with
// the number of reductions, as in Helion's looped reductions); the loads of
// later passes usually hit in L2.
//
// One pair shares a pass: `amax(x)` and `sum(exp(x - amax(x)))`, the
// statistics of softmax, logsumexp and cross-entropy. Their loop carries a
// running max per thread (a `local` amax of each chunk: no cross-thread
// step) and chunk-shaped sums that are rescaled by exp(old max - new max)
// as that max grows (online softmax); after the loop one cross-thread amax
// gives the row max and each thread's sums are rescaled to it. Softmax reads
// its row twice and cross-entropy once.
//
//===----------------------------------------------------------------------===//

#include "lowering/Config.h"
#include "lowering/DynamicShapes.h"
#include "lowering/Passes.h"
#include "lowering/TypeInference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace kite {
#define GEN_PASS_DEF_KITEREDUCTIONLOOPS
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

namespace {

/// For each value of one block that depends on the reduction dimension: the
/// axis of its shape that is that dimension.
using AxisMap = llvm::DenseMap<Value, int64_t>;

int64_t normalizeDim(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

int64_t rankOf(Value v) {
  auto t = dyn_cast<TileType>(v.getType());
  return t && t.hasRank() ? t.getRank() : 0;
}

int64_t extentAt(Value v, int64_t axis) {
  auto t = dyn_cast<TileType>(v.getType());
  if (!t || !t.hasRank() || axis < 0 || axis >= t.getRank())
    return 1;
  return t.getShape()[axis];
}

/// The tensor dims of a subscript op that are taken whole (`all`, or
/// trailing dims not subscripted), with the result axis each becomes.
/// Returns false if the subscript has gathers (their axes are not tracked).
bool wholeDims(Operation *op, Value tensor, ArrayRef<Subscript> subs,
               SmallVectorImpl<std::pair<int64_t, int64_t>> &dims) {
  auto type = cast<kite::TensorType>(tensor.getType());
  if (!type.hasRank())
    return false;
  int64_t dim = 0, axis = 0;
  for (const Subscript &s : subs) {
    switch (s.kind) {
    case Subscript::Kind::NewAxis:
      ++axis;
      continue;
    case Subscript::Kind::All:
      dims.push_back({dim, axis});
      ++axis;
      break;
    case Subscript::Kind::Span:
      ++axis;
      break;
    case Subscript::Kind::Scalar:
      break;
    case Subscript::Kind::Gather:
      return false;
    }
    ++dim;
  }
  for (; dim < type.getRank(); ++dim, ++axis)
    dims.push_back({dim, axis});
  return true;
}

class Rewriter {
public:
  /// The dimension of `size`; for ShapedType::kDynamic, the dimension of
  /// the size taken at launch that dynamicReductionOrigin finds.
  Rewriter(func::FuncOp kernel, int64_t size, int64_t chunk)
      : kernel(kernel), size(size), chunk(chunk), b(kernel.getContext()) {
    if (ShapedType::isDynamic(size))
      origin = dynamicReductionOrigin(kernel);
  }

  LogicalResult run() {
    for (Block *block : blocks())
      if (failed(rewriteBlock(*block)))
        return failure();
    return success();
  }

  /// True if run() would succeed; changes nothing and reports nothing.
  bool supported() {
    quiet = true;
    for (Block *block : blocks()) {
      AxisMap axes;
      SmallVector<Operation *> sinks;
      if (failed(analyze(*block, axes, sinks)))
        return false;
    }
    return true;
  }

private:
  func::FuncOp kernel;
  int64_t size, chunk;
  std::optional<SizeOrigin> origin; // of a dynamic size
  IRRewriter b;
  bool quiet = false;

  /// Whether dim `dim` of `tensor` is the dimension looped over.
  bool isDim(Value tensor, int64_t dim) {
    auto type = cast<kite::TensorType>(tensor.getType());
    int64_t n = type.getShape()[dim];
    if (!ShapedType::isDynamic(size))
      return n == size;
    return ShapedType::isDynamic(n) && origin && sizeOrigin(tensor, dim) == origin;
  }
  /// The size as an i64 value at the insertion point.
  Value sizeValue(Location loc) {
    if (!ShapedType::isDynamic(size))
      return i64(loc, size);
    if (origin->second < 0)
      return origin->first; // a scalar
    return b.create<SizeOp>(loc, origin->first, b.getI64IntegerAttr(origin->second));
  }
  /// Whether the last chunk can be partial.
  bool partialChunk() { return ShapedType::isDynamic(size) || size % chunk != 0; }

  /// The blocks holding loads of the dimension.
  SetVector<Block *> blocks() {
    SetVector<Block *> result;
    kernel.walk([&](LoadOp load) {
      if (isSource(load))
        result.insert(load->getBlock());
    });
    return result;
  }

  /// The result axes at which a load reads the whole dimension (none for a
  /// load with gathers).
  SmallVector<int64_t> sourceAxes(LoadOp load) {
    SmallVector<std::pair<int64_t, int64_t>> dims;
    SmallVector<int64_t> axes;
    if (!wholeDims(load, load.getTensor(), load.getSubscripts(), dims))
      return axes;
    for (auto [dim, axis] : dims)
      if (isDim(load.getTensor(), dim))
        axes.push_back(axis);
    return axes;
  }
  bool isSource(LoadOp load) { return !sourceAxes(load).empty(); }

  LogicalResult unsupported(Operation *op, StringRef why) {
    if (!quiet)
      emitConfigRejection(op) << "config does not fit kernel '" << kernel.getSymName()
                      << "': reduction_loops cannot loop over the dimension of size "
                      << (ShapedType::isDynamic(size) ? std::string("taken at launch")
                                                      : std::to_string(size))
                      << " here: " << why << " (use null for this reduction)";
    return failure();
  }

  /// Marks the values of `block` that depend on the dimension, checking that
  /// every use is one this pass can rewrite; collects the sinks (reductions
  /// over the dimension, stores of whole-row values) in order.
  LogicalResult analyze(Block &block, AxisMap &axes, SmallVectorImpl<Operation *> &sinks) {
    for (Operation &op : block) {
      if (auto load = dyn_cast<LoadOp>(&op)) {
        for (Value i : load.getIndices())
          if (axes.count(i))
            return unsupported(load, "a load is indexed by a whole-row value");
        SmallVector<int64_t> whole = sourceAxes(load);
        if (whole.size() > 1)
          return unsupported(load, "the load reads two dimensions of that size");
        if (!whole.empty()) {
          if (load.getMask())
            return unsupported(load, "the load has a mask");
          axes[load.getResult()] = whole.front();
        }
        continue;
      }
      bool uses = llvm::any_of(op.getOperands(), [&](Value v) { return axes.count(v); });
      if (!uses) {
        // Nested regions may not use the row either.
        WalkResult w = op.walk([&](Operation *inner) {
          for (Value v : inner->getOperands())
            if (axes.count(v))
              return WalkResult::interrupt();
          return WalkResult::advance();
        });
        if (w.wasInterrupted())
          return unsupported(&op, "a whole-row value is used inside a nested region");
        continue;
      }
      if (failed(propagate(&op, axes, sinks)))
        return failure();
    }
    return success();
  }

  LogicalResult propagate(Operation *op, AxisMap &axes, SmallVectorImpl<Operation *> &sinks) {
    // Elementwise ops: the result axis of the dimension, right-aligned.
    auto elementwise = [&](Value result, ValueRange operands) -> LogicalResult {
      int64_t rank = rankOf(result);
      std::optional<int64_t> axis;
      for (Value v : operands) {
        auto it = axes.find(v);
        if (it == axes.end())
          continue;
        int64_t a = it->second + (rank - rankOf(v));
        if (axis && *axis != a)
          return unsupported(op, "two whole-row values meet at different axes");
        axis = a;
      }
      for (Value v : operands) {
        if (axes.count(v))
          continue;
        int64_t a = *axis - (rank - rankOf(v));
        if (a >= 0 && extentAt(v, a) != 1)
          return unsupported(op, "a whole-row value meets a value of the same size that "
                                 "does not come from a load of the row");
      }
      axes[result] = *axis;
      return success();
    };
    if (auto u = dyn_cast<UnaryOp>(op))
      return elementwise(u.getResult(), u.getOperand());
    if (auto c = dyn_cast<CastOp>(op))
      return elementwise(c.getResult(), c.getSource());
    if (auto bin = dyn_cast<BinaryOp>(op))
      return elementwise(bin.getResult(), {bin.getLhs(), bin.getRhs()});
    if (auto cmp = dyn_cast<CompareOp>(op))
      return elementwise(cmp.getResult(), {cmp.getLhs(), cmp.getRhs()});
    if (auto w = dyn_cast<WhereOp>(op))
      return elementwise(w.getResult(),
                         {w.getCondition(), w.getTrueValue(), w.getFalseValue()});
    if (auto rnd = dyn_cast<RandomOp>(op))
      return elementwise(rnd.getResult(), rnd.getOffsets());
    if (auto so = dyn_cast<SortOp>(op)) {
      int64_t axis = axes.lookup(so.getOperand());
      if (normalizeDim(so.getDim(), rankOf(so.getOperand())) == axis)
        return unsupported(op, "a sort along the dimension needs the whole row");
      axes[so.getValues()] = axis;
      axes[so.getIndices()] = axis;
      return success();
    }
    if (auto sc = dyn_cast<ScanOp>(op)) {
      if (normalizeDim(sc.getDim(), rankOf(sc.getOperand())) == axes.lookup(sc.getOperand()))
        return unsupported(op, "a scan along the dimension needs the whole row");
      if (Value idx = sc.getIndices())
        axes[idx] = axes.lookup(sc.getOperand());
      return elementwise(sc.getResult(), sc.getOperand());
    }
    if (auto r = dyn_cast<ReduceOp>(op)) {
      int64_t axis = axes.lookup(r.getOperand());
      int64_t dim = normalizeDim(r.getDim(), rankOf(r.getOperand()));
      if (dim == axis) {
        switch (r.getKind()) {
        case ReduceKind::argmax:
        case ReduceKind::argmin:
          return unsupported(op, "argmax and argmin need the whole row");
        default:
          break;
        }
        sinks.push_back(op);
        return success();
      }
      axes[r.getResult()] = dim < axis && !r.getKeepdim() ? axis - 1 : axis;
      return success();
    }
    if (auto u = dyn_cast<UnsqueezeOp>(op)) {
      int64_t axis = axes.lookup(u.getOperand());
      int64_t dim = normalizeDim(u.getDim(), rankOf(u.getOperand()) + 1);
      axes[u.getResult()] = dim <= axis ? axis + 1 : axis;
      return success();
    }
    if (auto s = dyn_cast<SqueezeOp>(op)) {
      int64_t axis = axes.lookup(s.getOperand());
      int64_t dim = normalizeDim(s.getDim(), rankOf(s.getOperand()));
      if (dim == axis)
        return unsupported(op, "squeezes the dimension");
      axes[s.getResult()] = dim < axis ? axis - 1 : axis;
      return success();
    }
    if (auto store = dyn_cast<StoreOp>(op)) {
      if (!axes.count(store.getValue()) || store.getMask() ||
          llvm::any_of(store.getIndices(), [&](Value v) { return axes.count(v); }))
        return unsupported(op, "a whole-row value is used as a store index or mask");
      SmallVector<std::pair<int64_t, int64_t>> dims;
      if (!wholeDims(store, store.getTensor(), store.getSubscripts(), dims))
        return unsupported(op, "the store has tensor-valued indices");
      int64_t targetRank = 0;
      {
        // The rank of the subscript's shape: the value broadcasts into it.
        int64_t axis = 0;
        for (const Subscript &s : store.getSubscripts())
          axis += s.kind != Subscript::Kind::Scalar;
        auto type = cast<kite::TensorType>(store.getTensor().getType());
        targetRank = axis + type.getRank() -
                     (int64_t)llvm::count_if(store.getSubscripts(), [](const Subscript &s) {
                       return s.kind != Subscript::Kind::NewAxis;
                     });
      }
      int64_t axis = axes.lookup(store.getValue()) + targetRank - rankOf(store.getValue());
      bool found = llvm::any_of(dims, [&](std::pair<int64_t, int64_t> d) {
        return d.second == axis && isDim(store.getTensor(), d.first);
      });
      if (!found)
        return unsupported(op, "the row is stored into a subscript that does not take the "
                               "dimension whole");
      sinks.push_back(op);
      return success();
    }
    return unsupported(op, ("'" + op->getName().getStringRef() + "' uses a whole-row value").str());
  }

  /// The ops of `block` that `root` depends on through whole-row values, in
  /// block order (root excluded).
  SmallVector<Operation *> slice(Operation *root, const AxisMap &axes) {
    llvm::SmallPtrSet<Operation *, 16> seen;
    SmallVector<Operation *> work{root};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      for (Value v : op->getOperands())
        if (axes.count(v))
          if (Operation *def = v.getDefiningOp(); def && seen.insert(def).second)
            work.push_back(def);
    }
    SmallVector<Operation *> ordered(seen.begin(), seen.end());
    llvm::sort(ordered, [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
    return ordered;
  }

  Value i64(Location loc, int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, v, 64);
  }

  /// `shape` as i64 constants, the dims operand of kite.full and kite.expand.
  SmallVector<Value> dimValues(Location loc, ArrayRef<int64_t> shape) {
    SmallVector<Value> dims;
    for (int64_t d : shape)
      dims.push_back(i64(loc, d));
    return dims;
  }

  /// A subscript op's indices and layout with the whole dimension of the
  /// row replaced by `span`, every dim made explicit.
  void chunkSubscript(Operation *op, Value tensor, ArrayRef<Subscript> subs, Value span,
                      SmallVectorImpl<Value> &indices, SmallVectorImpl<int32_t> &layout) {
    auto type = cast<kite::TensorType>(tensor.getType());
    int64_t dim = 0;
    auto add = [&](Value v) {
      layout.push_back((int32_t)indices.size());
      indices.push_back(v);
    };
    for (const Subscript &s : subs) {
      switch (s.kind) {
      case Subscript::Kind::NewAxis:
        layout.push_back(kSubscriptNewAxis);
        continue;
      case Subscript::Kind::All:
        if (isDim(tensor, dim))
          add(span);
        else
          layout.push_back(kSubscriptAll);
        break;
      default:
        add(s.value);
      }
      ++dim;
    }
    for (; dim < type.getRank(); ++dim) {
      if (isDim(tensor, dim))
        add(span);
      else
        layout.push_back(kSubscriptAll);
    }
  }

  /// Clones `ops` (a slice) into the current insertion point, loads reading
  /// chunk `span` of the dimension.
  void cloneSlice(ArrayRef<Operation *> ops, Value span, IRMapping &map) {
    for (Operation *op : ops) {
      if (auto load = dyn_cast<LoadOp>(op); load && isSource(load)) {
        SmallVector<Value> indices;
        SmallVector<int32_t> layout;
        chunkSubscript(load, load.getTensor(), load.getSubscripts(), span, indices, layout);
        for (Value &v : indices)
          v = map.lookupOrDefault(v);
        auto chunked = b.create<LoadOp>(load.getLoc(), load.getType(),
                                        map.lookupOrDefault(load.getTensor()), indices,
                                        Value(), b.getDenseI32ArrayAttr(layout));
        map.map(load.getResult(), chunked.getResult());
        continue;
      }
      b.clone(*op, map);
    }
  }

  static std::optional<BinaryKind> combineKind(ReduceKind k) {
    switch (k) {
    case ReduceKind::sum:
    case ReduceKind::mean:
      return BinaryKind::add;
    case ReduceKind::amax:
      return BinaryKind::maximum;
    case ReduceKind::amin:
      return BinaryKind::minimum;
    case ReduceKind::prod:
      return BinaryKind::mul;
    default:
      return std::nullopt;
    }
  }

  static double identity(ReduceKind k) {
    switch (k) {
    case ReduceKind::amax:
      return -std::numeric_limits<double>::infinity();
    case ReduceKind::amin:
      return std::numeric_limits<double>::infinity();
    case ReduceKind::prod:
      return 1.0;
    default:
      return 0.0;
    }
  }

  /// The loop over chunks, at `at`, with `inits` carried.
  TileForOp chunkLoop(Location loc, ValueRange inits) {
    Value zero = i64(loc, 0), upper = sizeValue(loc), step = i64(loc, chunk);
    return b.create<TileForOp>(loc, ValueRange{zero}, ValueRange{upper}, ValueRange{step},
                               inits);
  }

  /// A reduction becomes a loop that combines each chunk elementwise into a
  /// chunk-shaped accumulator (no cross-thread step per chunk), then one
  /// reduction of the accumulator after the loop. Lanes of a last, partial
  /// chunk hold the reduction's identity.
  void rewriteReduce(ReduceOp r, const AxisMap &axes) {
    Location loc = r.getLoc();
    auto resultType = cast<TileType>(r.getType());
    Type elem = resultType.getElementType();
    // 16- and 8-bit floats accumulate in f32 across chunks.
    Type accElem = isNarrowFloat(elem) ? b.getF32Type() : elem;
    auto operandType = cast<TileType>(r.getOperand().getType());
    int64_t dim = normalizeDim(r.getDim(), operandType.getRank());
    SmallVector<int64_t> chunkShape(operandType.getShape());
    chunkShape[dim] = chunk;
    auto accType = TileType::get(b.getContext(), chunkShape, accElem);
    b.setInsertionPoint(r);
    Value accDType = b.create<DTypeConstOp>(loc, TypeAttr::get(accElem));
    SmallVector<Value> dims = dimValues(loc, chunkShape);
    Value init;
    ReduceKind kind = r.getKind();
    if (accElem.isIntOrIndex()) {
      double id = identity(kind);
      int64_t v = std::isinf(id) ? (id < 0 ? std::numeric_limits<int64_t>::min()
                                           : std::numeric_limits<int64_t>::max())
                                 : (int64_t)id;
      if (accElem.isInteger(1))
        v = kind == ReduceKind::amin || kind == ReduceKind::prod;
      init = b.create<arith::ConstantIntOp>(loc, v, 64);
    } else {
      init = b.create<arith::ConstantFloatOp>(loc, APFloat(identity(kind)), b.getF64Type());
    }
    Value acc0 = b.create<FullOp>(loc, accType, dims, init, accDType);
    TileForOp loop = chunkLoop(loc, acc0);
    Block *body = loop.getBodyBlock();
    b.setInsertionPointToStart(body);
    IRMapping map;
    Value span = loop.getSpans()[0];
    cloneSlice(slice(r, axes), span, map);
    Value operand = map.lookupOrDefault(r.getOperand());
    if (accElem != operandType.getElementType())
      operand = b.create<CastOp>(loc, accType, operand, accDType);
    if (partialChunk()) {
      // The last chunk is partial: its lanes past the row hold the identity.
      auto i1 = b.getI1Type();
      Value index = b.create<SpanIndexOp>(
          loc, TileType::get(b.getContext(), {chunk}, b.getI64Type()), span);
      Value valid = b.create<CompareOp>(loc, TileType::get(b.getContext(), {chunk}, i1),
                                        CompareKindAttr::get(b.getContext(), CompareKind::lt),
                                        index, sizeValue(loc));
      SmallVector<int64_t> shape = {chunk};
      for (int64_t d = dim + 1; d < operandType.getRank(); ++d) {
        shape.push_back(1);
        valid = b.create<UnsqueezeOp>(loc, TileType::get(b.getContext(), shape, i1), valid,
                                      b.getI64IntegerAttr(-1));
      }
      operand = b.create<WhereOp>(loc, accType, valid, operand, init);
    }
    Value next = b.create<BinaryOp>(
        loc, accType, BinaryKindAttr::get(b.getContext(), *combineKind(kind)),
        body->getArgument(1), operand);
    b.create<YieldOp>(loc, next);
    b.setInsertionPointAfter(loop);
    ReduceKind finalKind = kind == ReduceKind::mean ? ReduceKind::sum : kind;
    auto reducedType = TileType::get(b.getContext(), resultType.getShape(), accElem);
    Value result = b.create<ReduceOp>(loc, reducedType,
                                      ReduceKindAttr::get(b.getContext(), finalKind),
                                      loop.getResult(0), r.getDimAttr(), r.getKeepdimAttr());
    if (kind == ReduceKind::mean)
      result = b.create<BinaryOp>(
          loc, reducedType, BinaryKindAttr::get(b.getContext(), BinaryKind::div), result,
          ShapedType::isDynamic(size)
              ? sizeValue(loc)
              : b.create<arith::ConstantFloatOp>(loc, APFloat((double)size), b.getF64Type())
                    .getResult());
    if (accElem != elem)
      result = b.create<CastOp>(loc, resultType, result,
                                b.create<DTypeConstOp>(loc, TypeAttr::get(elem)));
    r.getResult().replaceAllUsesWith(result);
    r.erase();
  }

  /// The sum of `exp(x - amax(x))` over the dimension (softmax's and
  /// logsumexp's statistics) when `r` is that sum: the amax it subtracts,
  /// whose operand is the same whole-row value.
  ReduceOp softmaxMaxOf(ReduceOp r, const AxisMap &axes) {
    if (r.getKind() != ReduceKind::sum)
      return {};
    auto e = r.getOperand().getDefiningOp<UnaryOp>();
    if (!e || e.getKind() != UnaryKind::exp)
      return {};
    auto d = e.getOperand().getDefiningOp<BinaryOp>();
    if (!d || d.getKind() != BinaryKind::sub || !axes.count(d.getLhs()))
      return {};
    Value m = d.getRhs();
    if (auto u = m.getDefiningOp<UnsqueezeOp>())
      m = u.getOperand();
    auto max = m.getDefiningOp<ReduceOp>();
    if (!max || max.getKind() != ReduceKind::amax || max.getOperand() != d.getLhs() ||
        !isa<FloatType>(cast<TileType>(max.getType()).getElementType()))
      return {};
    auto rank = [](Value v) { return cast<TileType>(v.getType()).getRank(); };
    if (normalizeDim(max.getDim(), rank(max.getOperand())) !=
            normalizeDim(r.getDim(), rank(r.getOperand())) ||
        axes.lookup(d.getLhs()) != normalizeDim(max.getDim(), rank(max.getOperand())))
      return {};
    // The subtracted max must broadcast back over the dimension unchanged.
    if (!max.getKeepdim()) {
      auto u = d.getRhs().getDefiningOp<UnsqueezeOp>();
      if (!u || normalizeDim(u.getDim(), rank(u.getResult())) !=
                    normalizeDim(max.getDim(), rank(max.getOperand())))
        return {};
    } else if (d.getRhs() != max.getResult()) {
      return {};
    }
    return max;
  }

  /// `max = amax(x)` and `sum = sum(exp(x - max))` in one pass over the
  /// chunks (online softmax): a running max `m` per thread (a `local` amax:
  /// the max of the elements the thread has seen, with no cross-thread step
  /// in the loop) and chunk-shaped partial sums `s`, rescaled by
  /// exp(m_old - m_new) when that max grows:
  ///
  ///   m' = maximum(m, local amax(chunk));  s' = s * exp(m - m') + exp(chunk - m')
  ///
  /// then, once: max = amax(m broadcast over the chunk) (each thread's m
  /// across its lanes), sum = reduce sum(s * exp(m - max)). Lanes past the
  /// row read -inf; a max that is still -inf is subtracted as 0, so the
  /// terms and scales are exp(-inf) = 0, never exp(-inf - -inf).
  void rewriteSoftmaxStats(ReduceOp max, ReduceOp sum, const AxisMap &axes) {
    Location loc = max.getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = max.getOperand();
    auto xType = cast<TileType>(x.getType());
    int64_t rank = xType.getRank();
    int64_t dim = normalizeDim(max.getDim(), rank);
    Type f32 = b.getF32Type();
    SmallVector<int64_t> chunkShape(xType.getShape()), rowShape(xType.getShape());
    chunkShape[dim] = chunk;
    rowShape[dim] = 1;
    auto chunkType = TileType::get(ctx, chunkShape, f32);
    auto rowType = TileType::get(ctx, rowShape, f32);
    auto i1Row = TileType::get(ctx, rowShape, b.getI1Type());
    b.setInsertionPoint(max);
    Value f32Type = b.create<DTypeConstOp>(loc, TypeAttr::get(f32));
    auto constant = [&](double v) {
      return b.create<arith::ConstantFloatOp>(loc, APFloat(v), b.getF64Type()).getResult();
    };
    double inf = std::numeric_limits<double>::infinity();
    auto fullOf = [&](ArrayRef<int64_t> shape, double v) {
      return b.create<FullOp>(loc, TileType::get(ctx, shape, f32), dimValues(loc, shape),
                              constant(v), f32Type)
          .getResult();
    };
    auto binary = [&](BinaryKind k, Type t, Value l, Value r) {
      return b.create<BinaryOp>(loc, t, BinaryKindAttr::get(ctx, k), l, r).getResult();
    };
    auto compare = [&](CompareKind k, Type t, Value l, Value r) {
      return b.create<CompareOp>(loc, t, CompareKindAttr::get(ctx, k), l, r).getResult();
    };
    auto exp = [&](Type t, Value v) {
      return b.create<UnaryOp>(loc, t, UnaryKindAttr::get(ctx, UnaryKind::exp), v).getResult();
    };

    Value m0 = fullOf(rowShape, -inf), s0 = fullOf(chunkShape, 0.0);
    TileForOp loop = chunkLoop(loc, ValueRange{m0, s0});
    Block *body = loop.getBodyBlock();
    b.setInsertionPointToStart(body);
    IRMapping map;
    Value span = loop.getSpans()[0];
    cloneSlice(slice(max, axes), span, map);
    Value c = map.lookupOrDefault(x);
    if (xType.getElementType() != f32)
      c = b.create<CastOp>(loc, chunkType, c, f32Type);
    if (partialChunk()) {
      Value index = b.create<SpanIndexOp>(loc, TileType::get(ctx, {chunk}, b.getI64Type()), span);
      Value valid = compare(CompareKind::lt, TileType::get(ctx, {chunk}, b.getI1Type()), index,
                            sizeValue(loc));
      SmallVector<int64_t> shape = {chunk};
      for (int64_t d = dim + 1; d < rank; ++d) {
        shape.push_back(1);
        valid = b.create<UnsqueezeOp>(loc, TileType::get(ctx, shape, b.getI1Type()), valid,
                                      b.getI64IntegerAttr(-1));
      }
      c = b.create<WhereOp>(loc, chunkType, valid, c, constant(-inf));
    }
    Value mOld = body->getArgument(1), sOld = body->getArgument(2);
    Value chunkMax = b.create<ReduceOp>(loc, rowType, ReduceKindAttr::get(ctx, ReduceKind::amax),
                                        c, b.getI64IntegerAttr(dim), b.getUnitAttr(),
                                        /*local=*/b.getUnitAttr());
    Value mNew = binary(BinaryKind::maximum, rowType, mOld, chunkMax);
    // What is subtracted: the max, or 0 while it is -inf (then every lane
    // seen is -inf, and exp(-inf - 0) = 0 where exp(-inf - -inf) is NaN).
    // One select per thread, none per lane: the old sums scale by 1 while
    // the max stays, by 0 while it was -inf (they are 0 then).
    auto finite = [&](Value m) {
      Value unset = compare(CompareKind::eq, i1Row, m, constant(-inf));
      return b.create<WhereOp>(loc, rowType, unset, constant(0.0), m).getResult();
    };
    Value base = finite(mNew);
    Value scale = exp(rowType, binary(BinaryKind::sub, rowType, mOld, base));
    Value term = exp(chunkType, binary(BinaryKind::sub, chunkType, c, base));
    Value sNew = binary(BinaryKind::add, chunkType, binary(BinaryKind::mul, chunkType, sOld, scale),
                        term);
    b.create<YieldOp>(loc, ValueRange{mNew, sNew});

    b.setInsertionPointAfter(loop);
    // The row max: each thread's max over its lanes, then across threads.
    Value mThread = loop.getResult(0);
    Value mLanes = b.create<ExpandOp>(loc, chunkType, mThread, dimValues(loc, chunkShape));
    Value mRow = b.create<ReduceOp>(loc, rowType, ReduceKindAttr::get(ctx, ReduceKind::amax),
                                    mLanes, b.getI64IntegerAttr(dim), b.getUnitAttr());
    // Each thread's sums, rescaled from its max to the row's (by 0 where
    // the thread saw only -inf).
    Value toRow = exp(rowType, binary(BinaryKind::sub, rowType, mThread, finite(mRow)));
    Value sRow = binary(BinaryKind::mul, chunkType, loop.getResult(1), toRow);
    // The max, in the shape and dtype the amax had.
    auto maxType = cast<TileType>(max.getType());
    Value m = mRow;
    if (!max.getKeepdim())
      m = b.create<SqueezeOp>(loc, TileType::get(ctx, maxType.getShape(), f32), m,
                              b.getI64IntegerAttr(dim));
    if (maxType.getElementType() != f32)
      m = b.create<CastOp>(loc, maxType, m,
                           b.create<DTypeConstOp>(loc, TypeAttr::get(maxType.getElementType())));
    // The sum of the partial sums, likewise.
    auto sumType = cast<TileType>(sum.getType());
    Value s = b.create<ReduceOp>(loc, TileType::get(ctx, sumType.getShape(), f32),
                                 ReduceKindAttr::get(ctx, ReduceKind::sum), sRow,
                                 sum.getDimAttr(), sum.getKeepdimAttr());
    if (sumType.getElementType() != f32)
      s = b.create<CastOp>(loc, sumType, s,
                           b.create<DTypeConstOp>(loc, TypeAttr::get(sumType.getElementType())));
    max.getResult().replaceAllUsesWith(m);
    sum.getResult().replaceAllUsesWith(s);
    max.erase();
    sum.erase();
  }

  void rewriteStore(StoreOp store, const AxisMap &axes) {
    Location loc = store.getLoc();
    b.setInsertionPoint(store);
    TileForOp loop = chunkLoop(loc, {});
    b.setInsertionPointToStart(loop.getBodyBlock());
    IRMapping map;
    Value span = loop.getSpans()[0];
    cloneSlice(slice(store, axes), span, map);
    SmallVector<Value> indices;
    SmallVector<int32_t> layout;
    chunkSubscript(store, store.getTensor(), store.getSubscripts(), span, indices, layout);
    b.create<StoreOp>(loc, map.lookupOrDefault(store.getValue()), store.getTensor(), indices,
                      Value(), b.getDenseI32ArrayAttr(layout));
    store.erase();
  }

  LogicalResult rewriteBlock(Block &block) {
    AxisMap axes;
    SmallVector<Operation *> sinks;
    if (failed(analyze(block, axes, sinks)))
      return failure();
    // Softmax's statistics (amax, then the sum of exp(x - amax)) share one
    // pass; each other reduction and store gets a pass of its own.
    llvm::DenseMap<Operation *, ReduceOp> fusedWith; // max -> its sum
    llvm::SmallPtrSet<Operation *, 4> fusedSums;
    for (Operation *sink : sinks)
      if (auto r = dyn_cast<ReduceOp>(sink))
        if (ReduceOp max = softmaxMaxOf(r, axes);
            max && llvm::is_contained(sinks, max.getOperation()) && !fusedWith.count(max)) {
          fusedWith[max] = r;
          fusedSums.insert(r);
        }
    for (Operation *sink : sinks) {
      if (fusedSums.count(sink))
        continue;
      if (auto it = fusedWith.find(sink); it != fusedWith.end())
        rewriteSoftmaxStats(cast<ReduceOp>(sink), it->second, axes);
      else if (auto r = dyn_cast<ReduceOp>(sink))
        rewriteReduce(r, axes);
      else
        rewriteStore(cast<StoreOp>(sink), axes);
    }
    // The whole-row ops are dead now; erase them last to first.
    SmallVector<Operation *> dead;
    for (Operation &op : block)
      if (llvm::any_of(op.getResults(), [&](Value v) { return axes.count(v); }))
        dead.push_back(&op);
    for (Operation *op : llvm::reverse(dead)) {
      if (!op->use_empty())
        return op->emitError() << "internal error: reduction_loops left a use of a "
                                  "whole-row value";
      op->erase();
    }
    return success();
  }
};

} // namespace

SmallVector<int64_t> kite::reductionDims(func::FuncOp kernel) {
  SmallVector<int64_t> sizes;
  kernel.walk([&](LoadOp load) {
    if (isa<func::FuncOp>(load->getParentOp()))
      return; // the host prologue
    SmallVector<std::pair<int64_t, int64_t>> dims;
    if (!wholeDims(load, load.getTensor(), load.getSubscripts(), dims))
      return;
    auto type = cast<kite::TensorType>(load.getTensor().getType());
    for (auto [dim, axis] : dims) {
      int64_t n = type.getShape()[dim];
      if (!llvm::is_contained(sizes, n))
        sizes.push_back(n);
    }
  });
  return sizes;
}

std::optional<SizeOrigin> kite::dynamicReductionOrigin(Operation *root) {
  std::optional<SizeOrigin> found;
  root->walk([&](LoadOp load) {
    if (isa<func::FuncOp>(load->getParentOp()) || found)
      return;
    SmallVector<std::pair<int64_t, int64_t>> dims;
    if (!wholeDims(load, load.getTensor(), load.getSubscripts(), dims))
      return;
    auto type = cast<kite::TensorType>(load.getTensor().getType());
    for (auto [dim, axis] : dims)
      if (ShapedType::isDynamic(type.getShape()[dim]) && !found)
        found = sizeOrigin(load.getTensor(), dim);
  });
  return found;
}

int64_t kite::dynamicReductionBound(Operation *root) {
  std::optional<SizeOrigin> origin = dynamicReductionOrigin(root);
  if (!origin || origin->second < 0)
    return 0;
  int64_t bound = sizeBound(origin->first, origin->second);
  return bound > 0 ? bound : 0;
}

bool kite::reductionLoopSupported(func::FuncOp kernel, int64_t size) {
  return Rewriter(kernel, size, 1).supported();
}

namespace {

struct ReductionLoopsPass : kite::impl::KiteReductionLoopsBase<ReductionLoopsPass> {
  void runOnOperation() override {
    FailureOr<ConfiguredKernel> found = configuredKernel(getOperation());
    if (failed(found))
      return signalPassFailure();
    if (!found->config)
      return; // no config applied: nothing to do
    func::FuncOp func = found->kernel;
    SmallVector<int64_t> dims = reductionDims(func);
    // A row of a length taken at launch in a bucket is held whole (as long
    // as the bucket) unless the config chunks it more finely.
    int64_t bound = dynamicReductionBound(func);
    for (auto [i, chunk] : llvm::enumerate(found->config->reduction_loops)) {
      if (!chunk || i >= dims.size())
        continue; // the whole row in registers
      int64_t held = ShapedType::isDynamic(dims[i]) ? bound : dims[i];
      if (held > 0 && *chunk >= held)
        continue;
      if (failed(Rewriter(func, dims[i], *chunk).run()) || failed(inferTypes(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
