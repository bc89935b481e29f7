//===- DynamicShapes.cpp - sizes taken at launch --------------------------===//
//
// This file implements the analyses of lowering/DynamicShapes.h.
//
//===----------------------------------------------------------------------===//

#include "lowering/DynamicShapes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;
using namespace kite;

namespace {

int64_t normalDim(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

/// The rank of a tensor value: its type's, else `fallback`.
int64_t rankOf(Value tensor, int64_t fallback) {
  auto t = dyn_cast<kite::TensorType>(tensor.getType());
  return t && t.hasRank() ? t.getRank() : fallback;
}

/// The tensor dim each subscript position indexes (-1 for a new axis).
SmallVector<int64_t> indexedDims(ArrayRef<Subscript> subs) {
  SmallVector<int64_t> dims;
  int64_t d = 0;
  for (const Subscript &s : subs)
    dims.push_back(s.kind == Subscript::Kind::NewAxis ? -1 : d++);
  return dims;
}

/// The tensor a load, store or atomic accesses, with its subscripts in
/// `subs`; null for any other op.
Value accessOf(Operation *op, SmallVector<Subscript> &subs) {
  if (auto l = dyn_cast<LoadOp>(op))
    return subs = l.getSubscripts(), l.getTensor();
  if (auto st = dyn_cast<StoreOp>(op))
    return subs = st.getSubscripts(), st.getTensor();
  if (auto a = dyn_cast<AtomicOp>(op))
    return subs = a.getSubscripts(), a.getTensor();
  return Value();
}

} // namespace

std::optional<SizeOrigin> kite::sizeOrigin(Value tensor, int64_t dim) {
  if (dim < 0)
    return std::nullopt;
  if (isa<BlockArgument>(tensor))
    return SizeOrigin{tensor, dim};
  if (auto like = tensor.getDefiningOp<EmptyLikeOp>())
    return sizeOrigin(like.getSource(), dim);
  if (auto empty = tensor.getDefiningOp<EmptyOp>()) {
    if (dim >= (int64_t)empty.getSizes().size())
      return std::nullopt;
    return sizeOriginOf(empty.getSizes()[dim]);
  }
  return std::nullopt;
}

std::optional<SizeOrigin> kite::sizeOriginOf(Value size) {
  if (auto s = size.getDefiningOp<SizeOp>())
    return sizeOrigin(s.getTensor(), normalDim(s.getDim(), rankOf(s.getTensor(), 0)));
  if (isa<BlockArgument>(size) && size.getType().isInteger(64))
    return SizeOrigin{size, -1};
  return std::nullopt;
}

std::optional<SizeOrigin> kite::boundingSize(Value end) {
  if (std::optional<SizeOrigin> o = sizeOriginOf(end))
    return o;
  // A minimum is at most either operand.
  if (auto min = end.getDefiningOp<arith::MinSIOp>()) {
    if (std::optional<SizeOrigin> o = boundingSize(min.getLhs()))
      return o;
    return boundingSize(min.getRhs());
  }
  // A tile's begin and (clamped) end are at most its loop's end.
  auto query = end.getDefiningOp<SpanQueryOp>();
  if (!query || (query.getField() != SpanField::begin && query.getField() != SpanField::end))
    return std::nullopt;
  auto [loop, d] = getSpanLoop(query.getSpan());
  if (!loop)
    return std::nullopt;
  return boundingSize(loop.getUpperBounds()[d]);
}

int64_t kite::sizeBound(Value tensor, int64_t dim) {
  std::optional<SizeOrigin> o = sizeOrigin(tensor, dim);
  auto arg = o ? dyn_cast<BlockArgument>(o->first) : BlockArgument();
  if (!arg || o->second < 0)
    return 0;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func)
    return 0;
  auto bounds = func.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(), "kite.bounds");
  if (!bounds || o->second >= (int64_t)bounds.size())
    return 0;
  return bounds[o->second];
}

std::optional<int64_t> kite::sizeUpperBound(Value size) {
  if (std::optional<int64_t> c = getConstantIntValue(size))
    return c;
  std::optional<SizeOrigin> o = sizeOriginOf(size);
  if (!o || o->second < 0)
    return std::nullopt;
  int64_t bound = sizeBound(o->first, o->second);
  return bound > 0 ? std::optional(bound) : std::nullopt;
}

int64_t kite::wholeExtent(Value tensor, int64_t dim) {
  auto type = dyn_cast<kite::TensorType>(tensor.getType());
  if (!type || !type.hasRank() || dim < 0 || dim >= type.getRank())
    return ShapedType::kDynamic;
  int64_t size = type.getShape()[dim];
  if (!ShapedType::isDynamic(size))
    return size;
  int64_t bound = sizeBound(tensor, dim);
  return bound > 0 ? bound : ShapedType::kDynamic;
}

std::optional<int64_t> kite::spanStartToSize(Value span, Value tensor, int64_t dim) {
  auto [loop, d] = getSpanLoop(span);
  if (!loop)
    return std::nullopt;
  std::optional<int64_t> start = getConstantIntValue(loop.getLowerBounds()[d]);
  std::optional<SizeOrigin> end = sizeOriginOf(loop.getUpperBounds()[d]);
  std::optional<SizeOrigin> whole = sizeOrigin(tensor, dim);
  if (!start || !end || !whole || *end != *whole)
    return std::nullopt;
  return start;
}

bool kite::spanRunsToSize(Value span, Value tensor, int64_t dim) {
  auto [loop, d] = getSpanLoop(span);
  if (!loop)
    return false;
  int64_t size = cast<kite::TensorType>(tensor.getType()).getShape()[dim];
  if (ShapedType::isDynamic(size))
    return spanStartToSize(span, tensor, dim).has_value(); // the same size, taken at launch
  return getConstantIntValue(loop.getUpperBounds()[d]) == size;
}

std::vector<std::vector<DynamicDim>> kite::dynamicDims(func::FuncOp captured,
                                                       ArrayRef<int64_t> ranks) {
  size_t n = captured.getNumArguments();
  if (captured.isExternal()) // a declaration (of rank forms): nothing known
    return std::vector<std::vector<DynamicDim>>(n);
  Block &entry = captured.getBody().front();
  // One (argument, dim) is a node. Per node: whether its size can be taken
  // at launch at all (`safe`), whether the kernel loops over it, sizes an
  // output by it or spans it whole (`driven`; `whole` for the last), and
  // the ends of the loops whose tiles index it.
  struct Node {
    bool safe = false, driven = false, whole = false, topLoop = false;
    // Whether the size's divisor class can change the code: it is a
    // tensor's last dim, or a loop to it indexes one (vector widths); and
    // whether an output has it inside (its strides: see DynamicDim).
    bool classSensitive = false, innerOfOutput = false;
    llvm::SetVector<Value> indexedBy;
  };
  // A tensor's rank: its type's, else an argument's launch rank, an
  // output's from what it is made like or sized by; -1 where not known.
  std::function<int64_t(Value)> knownRank = [&](Value tensor) -> int64_t {
    int64_t r = rankOf(tensor, -1);
    if (r >= 0)
      return r;
    if (auto arg = dyn_cast<BlockArgument>(tensor))
      return arg.getOwner() == &entry && arg.getArgNumber() < ranks.size()
                 ? ranks[arg.getArgNumber()]
                 : -1;
    if (auto like = tensor.getDefiningOp<EmptyLikeOp>())
      return knownRank(like.getSource());
    if (auto empty = tensor.getDefiningOp<EmptyOp>())
      return empty.getSizes().size();
    return -1;
  };
  // Whether a span subscripts some tensor's last (contiguous) dim.
  auto indexesLastDim = [&](Value span) {
    for (Operation *user : span.getUsers()) {
      SmallVector<Subscript> subs;
      Value tensor = accessOf(user, subs);
      if (!tensor)
        continue;
      int64_t rank = knownRank(tensor);
      SmallVector<int64_t> dims = indexedDims(subs);
      for (auto [s, d] : llvm::zip(subs, dims))
        if (s.kind == Subscript::Kind::Span && s.value == span && (rank < 0 || d == rank - 1))
          return true;
    }
    return false;
  };
  std::vector<std::vector<Node>> nodes(n);
  for (BlockArgument arg : entry.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (i >= ranks.size() || ranks[i] < 1)
      continue;
    nodes[i].resize(ranks[i]);
    for (int64_t dim = 0; dim < ranks[i]; ++dim) {
      Node &node = nodes[i][dim];
      // The tensors that share the size (the argument, outputs made like
      // it or sized by it), each with the dim that has it, and the i64
      // values that are that size.
      llvm::SetVector<std::pair<Value, int64_t>> tensors;
      llvm::SetVector<Value> sizes;
      tensors.insert({arg, dim});
      bool ok = true;
      auto sizeUseOk = [&](OpOperand &use) {
        Operation *user = use.getOwner();
        unsigned k = use.getOperandNumber();
        auto isEnd = [&](auto loop) {
          return k >= loop.getLowerBounds().size() &&
                 k < loop.getLowerBounds().size() + loop.getUpperBounds().size();
        };
        bool end = false;
        if (auto loop = dyn_cast<TileForOp>(user)) {
          end = isEnd(loop);
          if (end)
            node.classSensitive |=
                indexesLastDim(loop.getSpans()[k - loop.getLowerBounds().size()]);
        } else if (auto loop = dyn_cast<GridForOp>(user)) {
          end = isEnd(loop);
        }
        if (end) {
          // A top-level loop over the size makes it dynamic; a nested one
          // only allows it (K of a product stays static, so that its two
          // operands' K provably agree).
          bool top = isa<func::FuncOp>(user->getParentOp());
          node.driven |= top;
          node.topLoop |= top;
          return true;
        }
        if (isa<TileForOp, GridForOp>(user))
          return false;
        if (isa<BlockSizeOp>(user))
          return true;
        if (auto empty = dyn_cast<EmptyOp>(user)) {
          tensors.insert({empty.getResult(), int64_t(k)});
          node.driven = true;
          return true;
        }
        return false;
      };
      for (size_t t = 0; t < tensors.size() && ok; ++t) {
        auto [tensor, tdim] = tensors[t];
        int64_t rank = rankOf(tensor, ranks[i]);
        node.classSensitive |= rank < 0 || tdim == rank - 1;
        node.innerOfOutput |= t > 0 && tdim > 0;
        for (OpOperand &use : tensor.getUses()) {
          Operation *user = use.getOwner();
          if (auto s = dyn_cast<SizeOp>(user)) {
            if (normalDim(s.getDim(), rank) == tdim)
              sizes.insert(s.getResult());
          } else if (auto like = dyn_cast<EmptyLikeOp>(user)) {
            tensors.insert({like.getResult(), tdim});
            node.driven = true;
          } else if (isa<DTypeOfOp, func::ReturnOp>(user)) {
          } else if (SmallVector<Subscript> subs;
                     accessOf(user, subs) == tensor &&
                     use.getOperandNumber() == (isa<LoadOp>(user) ? 0u : 1u)) {
            SmallVector<int64_t> dims = indexedDims(subs);
            auto it = llvm::find(dims, tdim);
            // An `all` (or a missing subscript) spans the whole dim: a
            // tile shape taken at launch, which only a reduction looped
            // over chunks can take (the caller checks; `whole`).
            if (it == dims.end() || subs[it - dims.begin()].kind == Subscript::Kind::All) {
              node.whole = node.driven = true;
            } else if (subs[it - dims.begin()].kind == Subscript::Kind::Span) {
              auto [loop, d] = getSpanLoop(subs[it - dims.begin()].value);
              if (loop)
                node.indexedBy.insert(loop.getUpperBounds()[d]);
              else
                ok = false;
            }
          } else {
            ok = false; // a reshape, a view, anything else
          }
          if (!ok)
            break;
        }
        for (size_t v = 0; v < sizes.size() && ok; ++v)
          for (OpOperand &use : sizes[v].getUses())
            if (!(ok &= sizeUseOk(use)))
              break;
      }
      node.safe = ok;
    }
  }
  // Dynamic: a safe dim the kernel loops over (or sizes an output by), and
  // a safe dim indexed only by tiles of loops over dynamic dims (y's rows in
  // `x[tm, tn] + y[tm, tn]`), or up to a tile's end in one (k's keys in
  // causal attention, `tile(range(0, tq.end()))`). A dim indexed by tiles of a loop with a
  // static end stays static (K of `x[tm, tk] @ y[tk, tn]` when the kernel
  // loops to a specialized K).
  std::vector<std::vector<bool>> dynamic(n);
  for (size_t i = 0; i < n; ++i)
    for (const Node &node : nodes[i])
      dynamic[i].push_back(node.safe && node.driven);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      for (size_t d = 0; d < nodes[i].size(); ++d) {
        const Node &node = nodes[i][d];
        if (dynamic[i][d] || !node.safe || node.indexedBy.empty())
          continue;
        bool all = llvm::all_of(node.indexedBy, [&](Value end) {
          std::optional<SizeOrigin> o = boundingSize(end);
          auto arg = o ? dyn_cast<BlockArgument>(o->first) : BlockArgument();
          if (!arg || o->second < 0 || arg.getArgNumber() >= n)
            return false;
          const std::vector<bool> &dims = dynamic[arg.getArgNumber()];
          return o->second < (int64_t)dims.size() && dims[o->second];
        });
        if (all)
          dynamic[i][d] = changed = true;
      }
    }
  }
  std::vector<std::vector<DynamicDim>> result(n);
  for (size_t i = 0; i < n; ++i)
    for (size_t d = 0; d < nodes[i].size(); ++d) {
      const Node &node = nodes[i][d];
      result[i].push_back({dynamic[i][d], node.whole, node.topLoop,
                           !node.classSensitive, node.innerOfOutput});
    }
  return result;
}

SmallVector<StrideFact> kite::argStrides(func::FuncOp kernel, unsigned arg) {
  auto strides = kernel.getArgAttrOfType<DenseI64ArrayAttr>(arg, "kite.strides");
  auto type = dyn_cast<kite::TensorType>(kernel.getArgument(arg).getType());
  if (!strides || !type || !type.hasRank() || (int64_t)strides.size() != type.getRank())
    return {};
  auto divisors = kernel.getArgAttrOfType<DenseI64ArrayAttr>(arg, "kite.divisors");
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<StrideFact> facts(shape.size());
  int64_t inner = 1; // what the product of the dims inside is a multiple of
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    int64_t s = strides[d];
    if (ShapedType::isDynamic(s))
      facts[d].divisor = inner;
    else
      facts[d] = {s, s};
    bool dynamic = divisors && d < (int64_t)divisors.size() && divisors[d] != 0;
    inner *= dynamic ? divisors[d] : std::max<int64_t>(shape[d], 1);
  }
  return facts;
}
