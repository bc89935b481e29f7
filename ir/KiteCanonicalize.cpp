//===- KiteCanonicalize.cpp - canonicalization patterns of kite ops -------===//
//
// This file implements the kite ops' canonicalization patterns: rewrites
// that give the same values bit for bit and leave less work per element.
//
// A positive scale moves out of a max: rounding is monotone, so for a
// constant c > 0, max_i(x_i * c) is max_i(x_i) * c exactly, NaN and
// infinities included. `amax(x * c)` becomes `amax(x) * c`, one multiply per
// row instead of one per element; `x * c` stays only where something else
// reads it, and there `x * c - m` can contract into one fused multiply-add
// (a softmax over scaled scores). A scaled operand of a `where` whose other
// branch is a constant that survives the scale (0 or an infinity) takes the
// scale after the select, so a masked max sees the same rule.
//
//===----------------------------------------------------------------------===//

#include "ir/KiteDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace kite;

namespace {

/// The value of a constant float scalar, if `v` is one.
std::optional<double> constantFloat(Value v) {
  FloatAttr attr;
  if (isa<TileType>(v.getType()) || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  return attr.getValueAsDouble();
}

/// A tile `x` times a constant scalar `c` with 0 < c < inf, both floats of
/// the product's element type, as (x, c); null if `v` is not one.
std::pair<Value, Value> positiveScale(Value v) {
  auto mul = v.getDefiningOp<BinaryOp>();
  if (!mul || mul.getKind() != BinaryKind::mul)
    return {};
  Type elem = getElementTypeOrNull(mul.getType());
  if (!elem || !isa<FloatType>(elem))
    return {};
  for (auto [x, c] : {std::pair(mul.getLhs(), mul.getRhs()), std::pair(mul.getRhs(), mul.getLhs())}) {
    std::optional<double> scale = constantFloat(c);
    if (isa<TileType>(x.getType()) && getElementTypeOrNull(x.getType()) == elem && scale &&
        *scale > 0 && std::isfinite(*scale))
      return {x, c};
  }
  return {};
}

/// amax(x * c) -> amax(x) * c and amin likewise, for a constant c > 0.
struct HoistScaleOutOfExtreme : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp r, PatternRewriter &rewriter) const override {
    if (r.getKind() != ReduceKind::amax && r.getKind() != ReduceKind::amin)
      return failure();
    auto [x, c] = positiveScale(r.getOperand());
    if (!x || getElementTypeOrNull(r.getType()) != getElementTypeOrNull(x.getType()))
      return failure();
    auto extreme = rewriter.create<ReduceOp>(r.getLoc(), r.getType(), r.getKindAttr(), x,
                                             r.getDimAttr(), r.getKeepdimAttr(), r.getLocalAttr());
    rewriter.replaceOpWithNewOp<BinaryOp>(r, r.getType(), BinaryKind::mul, extreme, c);
    return success();
  }
};

/// where(m, x * c, k) -> where(m, x, k) * c (either branch) for a constant
/// c > 0 and a constant k in {0, inf, -inf}, which the scale keeps as it is;
/// only when nothing else reads x * c.
struct SinkScaleThroughWhere : OpRewritePattern<WhereOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WhereOp w, PatternRewriter &rewriter) const override {
    Type elem = getElementTypeOrNull(w.getType());
    if (!elem)
      return failure();
    for (bool scaledIsTrue : {true, false}) {
      Value scaled = scaledIsTrue ? w.getTrueValue() : w.getFalseValue();
      Value other = scaledIsTrue ? w.getFalseValue() : w.getTrueValue();
      auto [x, c] = positiveScale(scaled);
      std::optional<double> k = constantFloat(other);
      if (!x || !scaled.hasOneUse() || getElementTypeOrNull(scaled.getType()) != elem || !k ||
          !(*k == 0 || std::isinf(*k)))
        continue;
      Value t = scaledIsTrue ? x : other, f = scaledIsTrue ? other : x;
      auto select = rewriter.create<WhereOp>(w.getLoc(), w.getType(), w.getCondition(), t, f);
      rewriter.replaceOpWithNewOp<BinaryOp>(w, w.getType(), BinaryKind::mul, select, c);
      return success();
    }
    return failure();
  }
};

} // namespace

void ReduceOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<HoistScaleOutOfExtreme>(context);
}

void WhereOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<SinkScaleThroughWhere>(context);
}
