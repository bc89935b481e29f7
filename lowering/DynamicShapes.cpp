//===- DynamicShapes.cpp - sizes taken at launch --------------------------===//
//
// This file implements the analyses of lowering/DynamicShapes.h.
//
//===----------------------------------------------------------------------===//

#include "lowering/DynamicShapes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

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

std::vector<bool> kite::dynamicLeadingDims(func::FuncOp captured, ArrayRef<int64_t> ranks) {
  Block &entry = captured.getBody().front();
  size_t n = captured.getNumArguments();
  // Per argument: whether its outermost dim can be dynamic at all (`safe`),
  // whether the kernel loops over it or sizes an output by it (`driven`),
  // and the loops whose tiles index it (their ends).
  std::vector<bool> safe(n, false), driven(n, false);
  std::vector<llvm::SetVector<Value>> indexedBy(n);
  for (BlockArgument arg : entry.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (i >= ranks.size() || ranks[i] < 1)
      continue;
    int64_t rank = ranks[i];
    // The tensors that share the arg's outermost size (it, and outputs made
    // like it or sized by it), and the i64 values that are that size.
    llvm::SetVector<Value> tensors, sizes;
    tensors.insert(arg);
    bool ok = true;
    auto sizeUseOk = [&](OpOperand &use) {
      Operation *user = use.getOwner();
      unsigned k = use.getOperandNumber();
      auto isEnd = [&](auto loop) {
        return isa<func::FuncOp>(loop->getParentOp()) && k >= loop.getLowerBounds().size() &&
               k < loop.getLowerBounds().size() + loop.getUpperBounds().size();
      };
      bool end = false;
      if (auto loop = dyn_cast<TileForOp>(user))
        end = isEnd(loop);
      else if (auto loop = dyn_cast<GridForOp>(user))
        end = isEnd(loop);
      if (end) {
        driven[i] = true;
        return true;
      }
      if (isa<TileForOp, GridForOp>(user))
        return false;
      if (isa<BlockSizeOp>(user))
        return true;
      if (auto empty = dyn_cast<EmptyOp>(user)) {
        if (k != 0) // only an output's outermost dim may be dynamic
          return false;
        tensors.insert(empty.getResult());
        driven[i] = true;
        return true;
      }
      return false;
    };
    for (size_t t = 0; t < tensors.size() && ok; ++t) {
      Value tensor = tensors[t];
      for (OpOperand &use : tensor.getUses()) {
        Operation *user = use.getOwner();
        if (auto s = dyn_cast<SizeOp>(user)) {
          if (normalDim(s.getDim(), rank) == 0)
            sizes.insert(s.getResult());
        } else if (auto like = dyn_cast<EmptyLikeOp>(user)) {
          tensors.insert(like.getResult());
          driven[i] = true;
        } else if (isa<DTypeOfOp, func::ReturnOp>(user)) {
        } else if (isa<LoadOp, StoreOp, AtomicOp>(user) &&
                   use.getOperandNumber() == (isa<LoadOp>(user) ? 0u : 1u)) {
          SmallVector<Subscript> subs = isa<LoadOp>(user)  ? cast<LoadOp>(user).getSubscripts()
                                        : isa<StoreOp>(user) ? cast<StoreOp>(user).getSubscripts()
                                                           : cast<AtomicOp>(user).getSubscripts();
          SmallVector<int64_t> dims = indexedDims(subs);
          auto it = llvm::find(dims, 0);
          // An `all` (or a missing subscript) spans the whole dim: its tile
          // shape would be dynamic.
          ok &= it != dims.end() && subs[it - dims.begin()].kind != Subscript::Kind::All;
          if (ok && subs[it - dims.begin()].kind == Subscript::Kind::Span) {
            auto [loop, d] = getSpanLoop(subs[it - dims.begin()].value);
            if (loop)
              indexedBy[i].insert(loop.getUpperBounds()[d]);
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
    safe[i] = ok;
  }
  // Dynamic: a safe dim the kernel loops over (or sizes an output by), and
  // a safe dim indexed only by tiles of loops over dynamic dims (y's rows in
  // `x[tm, tn] + y[tm, tn]`). A dim indexed by tiles of a loop with a
  // static end stays static (y's rows, K, in `x[tm, tk] @ y[tk, tn]`).
  std::vector<bool> dynamic(n, false);
  for (size_t i = 0; i < n; ++i)
    dynamic[i] = safe[i] && driven[i];
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (dynamic[i] || !safe[i] || indexedBy[i].empty())
        continue;
      bool all = llvm::all_of(indexedBy[i], [&](Value end) {
        std::optional<SizeOrigin> o = sizeOriginOf(end);
        auto arg = o ? dyn_cast<BlockArgument>(o->first) : BlockArgument();
        return arg && o->second == 0 && arg.getArgNumber() < n && dynamic[arg.getArgNumber()];
      });
      if (all)
        dynamic[i] = changed = true;
    }
  }
  return dynamic;
}
