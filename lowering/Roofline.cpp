//===- Roofline.cpp - bytes and FLOPs of a lowered kernel -----------------===//
//
// Implements estimateWork (Roofline.h). Trip counts come from the constant
// bounds and block sizes of the enclosing tile_for and grid loops, as
// fractions: a loop over n elements in tiles of b runs n / b tiles' worth,
// so a tile op's padded (static) shape times its trips counts the elements
// inside the bounds, the work a problem has rather than what its masked
// edge tiles execute (x[1, 4096] @ w on 64-row tiles is 2 x 4096 x 4096
// FLOPs, not 64 times that), as PyTorch's benchmarks count 2 M N K.
//
//===----------------------------------------------------------------------===//

#include "lowering/Roofline.h"
#include "lowering/Config.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace kite;

namespace {

double numel(Type t) {
  if (auto tile = dyn_cast<TileType>(t); tile && tile.hasStaticShape()) {
    double n = 1;
    for (int64_t d : tile.getShape())
      n *= (double)d;
    return n;
  }
  return 1;
}

Type elementOf(Type t) {
  if (auto tile = dyn_cast<TileType>(t))
    return tile.hasElementType() ? tile.getElementType() : Type();
  return t;
}

/// A size taken at launch counts as 1 (as a loop over it counts once).
double tensorBytes(kite::TensorType t) {
  if (!t.hasRank() || !t.hasElementType() || !t.getElementType().isIntOrFloat())
    return 0;
  double n = 1;
  for (int64_t d : t.getShape())
    n *= ShapedType::isDynamic(d) ? 1.0 : (double)d;
  return n * std::max<unsigned>(1, t.getElementType().getIntOrFloatBitWidth() / 8);
}

} // namespace

WorkEstimate kite::estimateWork(func::FuncOp kernel) {
  WorkEstimate w;
  bool dynamic = false;
  for (BlockArgument a : kernel.getArguments())
    if (auto t = dyn_cast<kite::TensorType>(a.getType())) {
      w.bytes += tensorBytes(t);
      dynamic |= t.hasRank() && !t.hasStaticShape();
    }
  kernel.walk([&](Operation *op) {
    if (isa<EmptyOp, EmptyLikeOp>(op))
      w.bytes += tensorBytes(cast<kite::TensorType>(op->getResult(0).getType()));
  });

  // Executions of an op: the product of its loops' (fractional) trip counts.
  auto trips = [&](Operation *op) {
    double n = 1;
    for (Operation *p = op->getParentOp(); p && !isa<func::FuncOp>(p); p = p->getParentOp()) {
      auto count = [&](ValueRange lbs, ValueRange ubs, auto blockOf) {
        for (size_t d = 0; d < lbs.size(); ++d) {
          std::optional<int64_t> lb = getConstantIntValue(lbs[d]);
          std::optional<int64_t> ub = getConstantIntValue(ubs[d]);
          std::optional<int64_t> bs = blockOf(d);
          if (!lb || !ub || !bs || *bs < 1) {
            w.caveat = "a loop with bounds that are not constants is counted once";
            continue;
          }
          n *= (double)std::max<int64_t>(0, *ub - *lb) / (double)*bs;
        }
      };
      if (auto t = dyn_cast<TileForOp>(p))
        count(t.getLowerBounds(), t.getUpperBounds(),
              [&](size_t d) { return getConstantIntValue(t.getBlockSizes()[d]); });
      else if (auto g = dyn_cast<GridForOp>(p))
        count(g.getLowerBounds(), g.getUpperBounds(),
              [](size_t) { return std::optional<int64_t>(1); });
    }
    return n;
  };

  kernel.walk([&](Operation *op) {
    if (op->getNumResults() != 1)
      return;
    Type result = op->getResult(0).getType();
    Type elem = elementOf(result);
    if (!elem || !isa<FloatType>(elem))
      return;
    double per = 0, matmul = 0;
    bool eightBit = false;
    if (Value lhsValue = matrixProductLhs(op)) {
      auto lhs = dyn_cast<TileType>(lhsValue.getType());
      double k = lhs && lhs.hasStaticShape() && lhs.getRank() ? (double)lhs.getShape().back() : 1;
      matmul = 2 * numel(result) * k;
      per = matmul;
      eightBit = lhs && lhs.hasElementType() && isFloat8(lhs.getElementType());
    } else if (auto r = dyn_cast<ReduceOp>(op)) {
      per = numel(r.getOperand().getType());
    } else if (isa<UnaryOp, BinaryOp, WhereOp>(op)) {
      per = numel(result);
    } else {
      return;
    }
    double n = trips(op);
    w.flops += per * n;
    w.matmulFlops += matmul * n;
    if (eightBit)
      w.matmul8Flops += matmul * n;
  });
  if (dynamic) // explains the loop caveat too
    w.caveat = "sizes taken at launch count as 1 (and a loop over one as one tile)";
  return w;
}
