//===- IndexRange.cpp - bounds of the integer scalars of a kernel ---------===//
//
// This file implements IndexRanges (see IndexRange.h): interval arithmetic
// over the arith ops, loop variables and tile queries a kernel computes its
// indices with. Every rule over-approximates; an overflow, an op it does
// not know, or an expression deeper than kMaxDepth gives full().
//
//===----------------------------------------------------------------------===//

#include "lowering/IndexRange.h"
#include "lowering/DynamicShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace kite;

namespace {

/// Expressions deeper than this are not followed: a 20,000-term sum must
/// not recurse 20,000 frames deep.
constexpr int kMaxDepth = 64;

using Wide = __int128;

/// [lo, hi] from wide corners, or full() if any corner leaves int64.
IndexRange fromWide(Wide lo, Wide hi) {
  constexpr Wide kMin = std::numeric_limits<int64_t>::min();
  constexpr Wide kMax = std::numeric_limits<int64_t>::max();
  if (lo < kMin || hi > kMax || lo > hi)
    return IndexRange::full();
  return {(int64_t)lo, (int64_t)hi};
}

bool isFull(const IndexRange &r) { return r == IndexRange::full(); }

IndexRange add(IndexRange a, IndexRange b) {
  if (isFull(a) || isFull(b))
    return IndexRange::full();
  return fromWide((Wide)a.lo + b.lo, (Wide)a.hi + b.hi);
}

IndexRange sub(IndexRange a, IndexRange b) {
  if (isFull(a) || isFull(b))
    return IndexRange::full();
  return fromWide((Wide)a.lo - b.hi, (Wide)a.hi - b.lo);
}

IndexRange mul(IndexRange a, IndexRange b) {
  if (isFull(a) || isFull(b))
    return IndexRange::full();
  Wide c[] = {(Wide)a.lo * b.lo, (Wide)a.lo * b.hi, (Wide)a.hi * b.lo, (Wide)a.hi * b.hi};
  return fromWide(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}

/// a / b rounding as `round` does, for a divisor range that excludes 0.
template <class Round> IndexRange div(IndexRange a, IndexRange b, Round round) {
  if (isFull(a) || b.lo <= 0 && b.hi >= 0)
    return IndexRange::full();
  Wide c[] = {round(a.lo, b.lo), round(a.lo, b.hi), round(a.hi, b.lo), round(a.hi, b.hi)};
  return fromWide(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}

Wide truncDiv(Wide a, Wide b) { return a / b; }
Wide floorDiv(Wide a, Wide b) {
  Wide q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
Wide ceilDiv(Wide a, Wide b) {
  Wide q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

/// a % b (C's sign rule: the result has a's sign, |result| < |b|).
IndexRange rem(IndexRange a, IndexRange b) {
  if (b.lo <= 0 && b.hi >= 0)
    return IndexRange::full();
  Wide m = std::max<Wide>(b.lo < 0 ? -(Wide)b.lo : b.lo, b.hi < 0 ? -(Wide)b.hi : b.hi) - 1;
  Wide lo = a.lo >= 0 ? 0 : -m, hi = a.hi <= 0 ? 0 : m;
  if (a.lo >= 0 && a.hi <= m)
    return a; // smaller than every divisor: unchanged
  return fromWide(lo, hi);
}

IndexRange join(IndexRange a, IndexRange b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

/// Every value of an integer type of `width` bits (signed).
IndexRange ofWidth(unsigned width) {
  if (width == 1)
    return {0, 1};
  if (width >= 64)
    return IndexRange::full();
  return {-(int64_t(1) << (width - 1)), (int64_t(1) << (width - 1)) - 1};
}

/// A loop variable running over [lower, upper): [lower.lo, upper.hi - 1].
IndexRange variableOf(const LoopExtent &e) {
  if (isFull(e.lower) || isFull(e.upper) || e.upper.hi == std::numeric_limits<int64_t>::min())
    return IndexRange::full();
  return {e.lower.lo, std::max(e.lower.lo, e.upper.hi - 1)};
}

} // namespace

IndexRange IndexRanges::of(Value v) { return get(v, 0); }

IndexRange IndexRanges::get(Value v, int depth) {
  if (!v || depth > kMaxDepth)
    return IndexRange::full();
  if (auto it = memo_.find(v); it != memo_.end())
    return it->second;
  IndexRange r = compute(v, depth);
  memo_[v] = r;
  return r;
}

std::optional<LoopExtent> IndexRanges::extentOf(Value span) {
  auto arg = dyn_cast_or_null<BlockArgument>(span);
  if (!arg)
    return std::nullopt;
  Operation *owner = arg.getOwner()->getParentOp();
  unsigned n = arg.getArgNumber();
  auto dimOf = [&](auto loop) -> std::optional<LoopExtent> {
    if (n >= loop.getNumDims())
      return std::nullopt; // loop-carried
    return LoopExtent{of(loop.getLowerBounds()[n]), of(loop.getUpperBounds()[n])};
  };
  if (auto t = dyn_cast_or_null<TileForOp>(owner))
    return dimOf(t);
  if (auto g = dyn_cast_or_null<GridForOp>(owner))
    return dimOf(g);
  if (auto f = dyn_cast_or_null<scf::ForOp>(owner)) {
    if (arg != f.getInductionVar())
      return std::nullopt;
    return LoopExtent{of(f.getLowerBound()), of(f.getUpperBound())};
  }
  return std::nullopt;
}

IndexRange IndexRanges::compute(Value v, int depth) {
  Type type = v.getType();
  if (!type.isIntOrIndex())
    return IndexRange::full();
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  IndexRange typeRange = ofWidth(width);

  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      return typeRange; // a run-time scalar parameter
    if (std::optional<LoopExtent> e = extentOf(v))
      return variableOf(*e);
    return typeRange; // loop-carried
  }

  Operation *op = v.getDefiningOp();
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant)))
    return width == 1 ? IndexRange::exactly(constant.getZExtValue())
                      : IndexRange::exactly(constant.getSExtValue());
  auto operand = [&](unsigned i) { return get(op->getOperand(i), depth + 1); };
  auto binary = [&](auto f) { return f(operand(0), operand(1)); };

  IndexRange r =
      llvm::TypeSwitch<Operation *, IndexRange>(op)
          .Case([&](arith::AddIOp) { return binary(add); })
          .Case([&](arith::SubIOp) { return binary(sub); })
          .Case([&](arith::MulIOp) { return binary(mul); })
          .Case([&](arith::DivSIOp) {
            return div(operand(0), operand(1), truncDiv);
          })
          .Case([&](arith::FloorDivSIOp) {
            return div(operand(0), operand(1), floorDiv);
          })
          .Case([&](arith::CeilDivSIOp) {
            return div(operand(0), operand(1), ceilDiv);
          })
          .Case([&](arith::RemSIOp) { return binary(rem); })
          .Case([&](arith::MinSIOp) {
            IndexRange a = operand(0), b = operand(1);
            return IndexRange{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
          })
          .Case([&](arith::MaxSIOp) {
            IndexRange a = operand(0), b = operand(1);
            return IndexRange{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
          })
          .Case([&](arith::SelectOp) { return join(operand(1), operand(2)); })
          .Case([&](arith::AndIOp) {
            // x & c with c >= 0 lies in [0, c].
            IndexRange a = operand(0), b = operand(1);
            if (b.isConstant() && b.lo >= 0)
              return IndexRange{0, b.lo};
            if (a.isConstant() && a.lo >= 0)
              return IndexRange{0, a.lo};
            return IndexRange::full();
          })
          .Case([&](arith::ExtSIOp) { return operand(0); })
          .Case([&](arith::ExtUIOp e) {
            IndexRange a = operand(0);
            unsigned from = e.getIn().getType().getIntOrFloatBitWidth();
            return a.lo >= 0 ? a : IndexRange{0, from >= 63 ? INT64_MAX : (int64_t(1) << from) - 1};
          })
          .Case([&](arith::IndexCastOp) { return operand(0); })
          .Case([&](arith::TruncIOp) {
            IndexRange a = operand(0);
            IndexRange t = ofWidth(width);
            return a.lo >= t.lo && a.hi <= t.hi ? a : t;
          })
          .Case([&](SpecializeOp) { return operand(0); })
          .Case([&](BlockSizeOp b) {
            int64_t lo = std::max<int64_t>(1, b.getMin() ? (int64_t)*b.getMin() : 1);
            int64_t hi = b.getMax() ? (int64_t)*b.getMax() : INT64_MAX;
            return IndexRange{lo, std::max(lo, hi)};
          })
          .Case([&](SizeOp) {
            // A size taken at launch in a bucket is at most its upper end,
            // which the launch checks (sizeUpperBound).
            std::optional<int64_t> bound = sizeUpperBound(v);
            return IndexRange{0, bound ? *bound : INT64_MAX};
          })
          .Case([&](SpanQueryOp q) {
            std::optional<LoopExtent> e = extentOf(q.getSpan());
            if (!e)
              return IndexRange::full();
            IndexRange var = variableOf(*e);
            switch (q.getField()) {
            case SpanField::begin:
              return var;
            case SpanField::end:
              // min(begin + block, upper): at most upper, at least lower.
              return isFull(var) ? IndexRange::full() : IndexRange{e->lower.lo, e->upper.hi};
            case SpanField::id:
            case SpanField::count:
              return isFull(var) ? IndexRange::full()
                                 : fromWide(0, std::max<Wide>(0, (Wide)e->upper.hi - e->lower.lo));
            case SpanField::block_size: {
              auto arg = cast<BlockArgument>(q.getSpan());
              if (auto loop = dyn_cast<TileForOp>(arg.getOwner()->getParentOp()))
                return get(loop.getBlockSizes()[arg.getArgNumber()], depth + 1);
              return IndexRange::full();
            }
            }
            return IndexRange::full();
          })
          .Default([&](Operation *) { return typeRange; });
  // Within the type, whatever the rule said.
  if (r.lo < typeRange.lo || r.hi > typeRange.hi)
    return typeRange;
  return r;
}

int64_t IndexRanges::divisorOf(Value v) { return divisor(v, 0); }

int64_t IndexRanges::divisor(Value v, int depth) {
  if (!v || depth > kMaxDepth || !v.getType().isIntOrIndex())
    return 1;
  if (auto it = divisors_.find(v); it != divisors_.end())
    return it->second;
  // gcd(0, d) = d: a value that is always 0 is a multiple of everything.
  auto gcd = [](int64_t a, int64_t b) { return std::gcd(a, b); };
  auto of = [&](Value w) { return divisor(w, depth + 1); };
  int64_t d = 1;
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant))) {
    int64_t c = constant.getSExtValue();
    d = c == std::numeric_limits<int64_t>::min() ? 1 : std::abs(c);
  } else if (Operation *op = v.getDefiningOp()) {
    auto both = [&] { return gcd(of(op->getOperand(0)), of(op->getOperand(1))); };
    d = llvm::TypeSwitch<Operation *, int64_t>(op)
            .Case<arith::AddIOp, arith::SubIOp, arith::MinSIOp, arith::MaxSIOp>(
                [&](Operation *) { return both(); })
            .Case([&](arith::MulIOp) {
              int64_t a = of(op->getOperand(0)), b = of(op->getOperand(1));
              if (a == 0 || b == 0)
                return int64_t(0);
              Wide p = (Wide)a * b;
              return p > std::numeric_limits<int64_t>::max() ? std::max(a, b) : (int64_t)p;
            })
            .Case([&](arith::SelectOp) { return gcd(of(op->getOperand(1)), of(op->getOperand(2))); })
            .Case<arith::ExtSIOp, arith::IndexCastOp, SpecializeOp>(
                [&](Operation *) { return of(op->getOperand(0)); })
            .Case([&](SpanQueryOp q) -> int64_t {
              auto [loop, n] = getSpanLoop(q.getSpan());
              if (!loop)
                return 1;
              // begin: lower + t * block; end: min(begin + block, upper).
              int64_t block = of(loop.getBlockSizes()[n]);
              int64_t begin = gcd(of(loop.getLowerBounds()[n]), block);
              switch (q.getField()) {
              case SpanField::begin: return begin;
              case SpanField::end: return gcd(begin, of(loop.getUpperBounds()[n]));
              case SpanField::block_size: return block;
              default: return 1;
              }
            })
            .Default([](Operation *) { return int64_t(1); });
  }
  divisors_[v] = d;
  return d;
}

IndexRange IndexRanges::elementsOf(Value v) { return elements(v, 0); }

IndexRange IndexRanges::elements(Value v, int depth) {
  if (!v || depth > kMaxDepth)
    return IndexRange::full();
  if (v.getType().isIntOrIndex())
    return get(v, depth);
  auto tile = dyn_cast<TileType>(v.getType());
  Operation *op = v.getDefiningOp();
  if (!tile || !tile.getElementType().isIntOrIndex() || !op)
    return IndexRange::full();
  auto operand = [&](unsigned i) { return elements(op->getOperand(i), depth + 1); };
  return llvm::TypeSwitch<Operation *, IndexRange>(op)
      .Case([&](SpanIndexOp s) {
        // begin + [0, block), begin a value of the loop's variable.
        auto [loop, n] = getSpanLoop(s.getSpan());
        std::optional<LoopExtent> e = extentOf(s.getSpan());
        if (!loop || !e)
          return IndexRange::full();
        IndexRange block = get(loop.getBlockSizes()[n], depth + 1);
        if (isFull(block) || block.hi < 1)
          return IndexRange::full();
        return add(variableOf(*e), IndexRange{0, block.hi - 1});
      })
      .Case<UnsqueezeOp, SqueezeOp, ExpandOp, ReshapeOp, TransposeOp, PermuteOp,
            ConvertLayoutOp>([&](Operation *) { return operand(0); })
      .Case([&](BinaryOp b) {
        switch (b.getKind()) {
        case BinaryKind::add: return add(operand(0), operand(1));
        case BinaryKind::sub: return sub(operand(0), operand(1));
        default: return IndexRange::full();
        }
      })
      .Default([](Operation *) { return IndexRange::full(); });
}
