//===- SplitMaskedLoops.cpp - the kite-split-masked-loops pass ------------===//
//
// This file implements `kite-split-masked-loops` (see Passes.td): a nested
// tile loop whose body selects on an index condition is split where that
// condition holds on whole tiles, and the select is dropped there.
//
//   for tk in tile(range(0, tq.end()))           split = (tq.begin + 1) / bk * bk
//     s = where(tq.index() >= tk.index(), x, -inf) for tk in [0, split):  s = x
//                                                 for tk in [split, tq.end()): as before
//
// Bounds. Every element of an index tile lies in [lo(t), hi(t)], both affine
// in the iteration t of the loop: `span_index` of the loop's own tile is in
// [lower + bk t, lower + bk t + bk - 1], of a tile defined outside it in
// [begin, begin + block - 1] (its block, padding included: a padded lane
// never decides where the loop splits), a scalar defined outside it is
// itself; shape ops keep bounds, `add` and `sub` combine them, a constant
// factor scales them. A comparison `x >= y` holds on the whole tile iff
// lo(x) - hi(y) >= 0: one affine inequality d0 + d1 t >= 0, true on a
// prefix of the iterations (d1 < 0), a suffix (d1 > 0) or all or none
// (d1 = 0); `and` intersects them. The interval [t0, t1) is computed
// before the loop with integer arithmetic, clamped to the loop's full
// tiles; the loop becomes up to three loops over [lower, lower + t0 bk),
// [.., lower + t1 bk), [.., upper), chained through their carried values,
// and in the middle one the wheres on that condition become their true
// operands. Every tile of the split loops is one of the original loop's,
// so masks and bounds stay as they were; the first two hold full tiles
// only (marked kite.full_tiles: emission masks nothing past their ends),
// and a partial last tile runs in the third. Where the loop's bounds are
// multiples of its block size (IndexRanges::divisorOf: a causal key loop
// over [0, tq.end()) at a sequence length that query and key tiles
// divide), it has no partial tile: the third is marked too, and dropped
// where nothing is left for it.
//
// A loop with no such where whose body reduces over its tiles has its
// partial last tile peeled the same way: [lower, last full tile) marked
// kite.full_tiles, then the rest as before.
//
// Each loop after the first reloads the tiles it reads that were loaded
// before the loops from tensors the kernel never writes (attention's query
// tile), rather than holding them in registers across the loops before it:
// a peeled attention kept its query tile live across the full-tile loop to
// stage it again for the last tile. The copy is marked kite.reload, so that
// CSE does not merge it back.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "lowering/IndexRange.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <numeric>

namespace kite {
#define GEN_PASS_DEF_KITESPLITMASKEDLOOPS
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

namespace {

/// c + sum(coeff * value) + perIter * t, with values defined before the
/// loop and t the loop's iteration.
struct Affine {
  SmallVector<std::pair<Value, int64_t>> terms;
  int64_t c = 0;
  int64_t perIter = 0;

  Affine operator+(const Affine &o) const {
    Affine r = *this;
    r.terms.append(o.terms.begin(), o.terms.end());
    r.c += o.c;
    r.perIter += o.perIter;
    return r;
  }
  Affine scaled(int64_t k) const {
    Affine r = *this;
    for (auto &term : r.terms)
      term.second *= k;
    r.c *= k;
    r.perIter *= k;
    return r;
  }
  Affine operator-(const Affine &o) const { return *this + o.scaled(-1); }
};

/// Every element of an index tile lies in [lo, hi].
struct Bounds {
  Affine lo, hi;
};

/// `d(t) >= 0` for every element of the tile at iteration t.
using Inequality = Affine;

class MaskAnalysis {
public:
  MaskAnalysis(TileForOp loop, OpBuilder &before) : loop(loop), before(before) {
    std::optional<int64_t> b = getConstantIntValue(loop.getBlockSizes()[0]);
    bk = b.value_or(0);
  }

  /// The inequalities whose conjunction says `cond` holds on the whole
  /// tile, or nullopt where the condition is not of that form.
  std::optional<SmallVector<Inequality>> wholeTile(Value cond) {
    if (bk <= 0)
      return std::nullopt;
    Operation *def = cond.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (auto b = dyn_cast<BinaryOp>(def); b && b.getKind() == BinaryKind::and_) {
      auto l = wholeTile(b.getLhs()), r = wholeTile(b.getRhs());
      if (!l || !r)
        return std::nullopt;
      l->append(r->begin(), r->end());
      return l;
    }
    auto c = dyn_cast<CompareOp>(def);
    if (!c)
      return std::nullopt;
    auto x = bounds(c.getLhs()), y = bounds(c.getRhs());
    if (!x || !y)
      return std::nullopt;
    Affine one;
    one.c = 1;
    switch (c.getKind()) {
    case CompareKind::ge: return SmallVector<Inequality>{x->lo - y->hi};
    case CompareKind::gt: return SmallVector<Inequality>{x->lo - y->hi - one};
    case CompareKind::le: return SmallVector<Inequality>{y->lo - x->hi};
    case CompareKind::lt: return SmallVector<Inequality>{y->lo - x->hi - one};
    default: return std::nullopt;
    }
  }

  int64_t blockSize() const { return bk; }

private:
  bool definedOutside(Value v) {
    return !loop->isAncestor(v.getParentRegion()->getParentOp());
  }

  std::optional<Bounds> bounds(Value v) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    std::optional<Bounds> b = compute(v);
    memo[v] = b;
    return b;
  }

  std::optional<Bounds> compute(Value v) {
    if (v.getType().isInteger(64) && definedOutside(v)) {
      Affine a;
      if (std::optional<int64_t> k = getConstantIntValue(v))
        a.c = *k;
      else
        a.terms.push_back({v, 1});
      return Bounds{a, a};
    }
    Operation *def = v.getDefiningOp();
    if (!def || !isa<TileType>(v.getType()) ||
        !cast<TileType>(v.getType()).getElementType().isInteger(64))
      return std::nullopt;
    if (auto idx = dyn_cast<SpanIndexOp>(def))
      return spanBounds(idx.getSpan());
    if (isa<UnsqueezeOp, SqueezeOp, TransposeOp, PermuteOp, ReshapeOp, ExpandOp>(def))
      return bounds(def->getOperand(0));
    auto bin = dyn_cast<BinaryOp>(def);
    if (!bin)
      return std::nullopt;
    auto l = bounds(bin.getLhs()), r = bounds(bin.getRhs());
    if (!l || !r)
      return std::nullopt;
    switch (bin.getKind()) {
    case BinaryKind::add: return Bounds{l->lo + r->lo, l->hi + r->hi};
    case BinaryKind::sub: return Bounds{l->lo - r->hi, l->hi - r->lo};
    case BinaryKind::mul: {
      // By a constant: lo and hi scale (and swap for a negative factor).
      auto constant = [](const Bounds &b) -> std::optional<int64_t> {
        if (b.lo.terms.empty() && b.hi.terms.empty() && !b.lo.perIter && !b.hi.perIter &&
            b.lo.c == b.hi.c)
          return b.lo.c;
        return std::nullopt;
      };
      std::optional<int64_t> k = constant(*r);
      const Bounds *other = &*l;
      if (!k) {
        k = constant(*l);
        other = &*r;
      }
      if (!k)
        return std::nullopt;
      Affine lo = other->lo.scaled(*k), hi = other->hi.scaled(*k);
      return *k >= 0 ? Bounds{lo, hi} : Bounds{hi, lo};
    }
    default: return std::nullopt;
    }
  }

  std::optional<Bounds> spanBounds(Value span) {
    if (span == loop.getSpans()[0]) {
      // [lower + bk t, lower + bk t + bk - 1]
      Affine lo;
      if (std::optional<int64_t> k = getConstantIntValue(loop.getLowerBounds()[0]))
        lo.c = *k;
      else
        lo.terms.push_back({loop.getLowerBounds()[0], 1});
      lo.perIter = bk;
      Affine hi = lo;
      hi.c += bk - 1;
      return Bounds{lo, hi};
    }
    if (!definedOutside(span))
      return std::nullopt;
    auto [outer, dim] = getSpanLoop(span);
    if (!outer)
      return std::nullopt;
    std::optional<int64_t> block = getConstantIntValue(outer.getBlockSizes()[dim]);
    if (!block)
      return std::nullopt;
    // [begin, begin + block - 1], every lane of the tile.
    Value begin = before.create<SpanQueryOp>(loop.getLoc(), before.getI64Type(),
                                             SpanField::begin, span);
    Affine lo;
    lo.terms.push_back({begin, 1});
    Affine hi = lo;
    hi.c += *block - 1;
    return Bounds{lo, hi};
  }

  TileForOp loop;
  OpBuilder &before;
  int64_t bk = 0;
  DenseMap<Value, std::optional<Bounds>> memo;
};

/// Builds i64 arithmetic before the loop.
struct Arith {
  OpBuilder &b;
  Location loc;

  Value constant(int64_t v) { return b.create<arith::ConstantIntOp>(loc, v, 64); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubIOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); }
  Value min(Value x, Value y) { return b.create<arith::MinSIOp>(loc, x, y); }
  Value max(Value x, Value y) { return b.create<arith::MaxSIOp>(loc, x, y); }
  Value floorDiv(Value x, int64_t d) { return floorDiv(x, constant(d)); }
  Value floorDiv(Value x, Value d) { return b.create<arith::FloorDivSIOp>(loc, x, d); }
  Value ceilDiv(Value x, Value d) { return b.create<arith::CeilDivSIOp>(loc, x, d); }
  /// The loop-invariant part of `a` (its terms and constant).
  Value invariant(const Affine &a) {
    Value r = constant(a.c);
    for (auto [v, k] : a.terms)
      r = add(r, k == 1 ? v : mul(v, constant(k)));
    return r;
  }
};

/// The iterations [t0, t1) where `ineqs` all hold, clamped to [0, full]
/// (the loop's full tiles); whether t0 can be above 0 and t1 below the
/// loop's end.
struct Interval {
  Value t0, t1;
  bool hasBefore = false, hasAfter = false;
};

Interval solve(ArrayRef<Inequality> ineqs, Value full, Arith &a) {
  Interval r;
  Value zero = a.constant(0);
  r.t0 = zero;
  r.t1 = full;
  for (const Inequality &d : ineqs) {
    Value d0 = a.invariant(d);
    if (d.perIter < 0) {
      // d0 + d1 t >= 0  <=>  t <= floor(d0 / -d1)
      r.t1 = a.min(r.t1, a.add(a.floorDiv(d0, -d.perIter), a.constant(1)));
      r.hasAfter = true;
    } else if (d.perIter > 0) {
      // t >= ceil(-d0 / d1)
      r.t0 = a.max(r.t0, a.ceilDiv(a.sub(zero, d0), a.constant(d.perIter)));
      r.hasBefore = true;
    } else {
      // All iterations or none.
      Value holds = a.b.create<arith::CmpIOp>(a.loc, arith::CmpIPredicate::sge, d0, zero);
      r.t1 = a.b.create<arith::SelectOp>(a.loc, holds, r.t1, zero);
      r.hasAfter = true;
    }
  }
  r.t0 = a.min(a.max(r.t0, zero), full);
  r.t1 = a.min(a.max(r.t1, r.t0), full);
  return r;
}

/// Replaces the wheres on `cond` in `loop` by their true operands.
void foldWheres(TileForOp loop, Value cond) {
  SmallVector<WhereOp> wheres;
  loop.walk([&](WhereOp w) {
    if (w.getCondition() == cond && w.getTrueValue().getType() == w.getType())
      wheres.push_back(w);
  });
  for (WhereOp w : wheres) {
    w.getResult().replaceAllUsesWith(w.getTrueValue());
    w->erase();
  }
}

/// A copy of `loop` before `loop` over [lower, upper) carrying `init`.
TileForOp cloneOver(TileForOp loop, OpBuilder &b, Value lower, Value upper, ValueRange init,
                    IRMapping &map) {
  auto copy = cast<TileForOp>(b.clone(*loop, map));
  copy.getLowerBoundsMutable().assign(lower);
  copy.getUpperBoundsMutable().assign(upper);
  copy.getInitArgsMutable().assign(init);
  return copy;
}

/// Whether the kernel around `op` writes `tensor` anywhere.
bool written(Operation *op, Value tensor) {
  auto func = op->getParentOfType<func::FuncOp>();
  WalkResult w = func.walk([&](Operation *user) {
    if ((isa<StoreOp>(user) && cast<StoreOp>(user).getTensor() == tensor) ||
        (isa<AtomicOp>(user) && cast<AtomicOp>(user).getTensor() == tensor))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return w.wasInterrupted();
}

/// Makes `later` (a loop after others over the same tiles) load again, just
/// before it, the tiles it reads that are loads in its block from tensors
/// the kernel never writes (see the file comment).
void reloadInvariants(TileForOp later) {
  Block *block = later->getBlock();
  SmallVector<LoadOp> loads;
  later.getBodyRegion().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (auto load = v.getDefiningOp<LoadOp>();
          load && load->getBlock() == block && !llvm::is_contained(loads, load))
        loads.push_back(load);
  });
  OpBuilder b(later);
  for (LoadOp load : loads) {
    if (written(later, load.getTensor()))
      continue;
    Operation *copy = b.clone(*load);
    copy->setAttr("kite.reload", b.getUnitAttr());
    load.getResult().replaceUsesWithIf(copy->getResult(0), [&](OpOperand &use) {
      return later->isProperAncestor(use.getOwner());
    });
  }
}

/// Whether every tile of `loop` (one dimension, a constant block size) is
/// whole: the block size divides its extent, constant bounds' exactly, or
/// else both bounds.
bool wholeTiles(TileForOp loop) {
  std::optional<int64_t> bk = getConstantIntValue(loop.getBlockSizes()[0]);
  if (!bk || *bk <= 0)
    return false;
  Value lower = loop.getLowerBounds()[0], upper = loop.getUpperBounds()[0];
  std::optional<int64_t> lo = getConstantIntValue(lower), hi = getConstantIntValue(upper);
  if (lo && hi)
    return (*hi - *lo) % *bk == 0;
  IndexRanges ranges;
  return std::gcd(ranges.divisorOf(lower), ranges.divisorOf(upper)) % *bk == 0;
}

LogicalResult split(TileForOp loop) {
  // The first where whose condition has whole-tile bounds.
  OpBuilder before(loop);
  MaskAnalysis analysis(loop, before);
  Value cond;
  std::optional<SmallVector<Inequality>> ineqs;
  loop.getBodyBlock()->walk([&](WhereOp w) {
    if (cond || w.getTrueValue().getType() != w.getType())
      return;
    if (auto found = analysis.wholeTile(w.getCondition())) {
      cond = w.getCondition();
      ineqs = std::move(found);
    }
  });
  if (!cond)
    return failure();
  Arith a{before, loop.getLoc()};
  Value lower = loop.getLowerBounds()[0], upper = loop.getUpperBounds()[0];
  Value bk = loop.getBlockSizes()[0];
  bool whole = wholeTiles(loop);
  // Split at tile boundaries no further than the last full tile: the head
  // and the middle loop hold full tiles only (kFullTilesAttrName: emission
  // masks nothing past their ends), a partial last tile stays in the tail.
  Value full = a.max(a.floorDiv(a.sub(upper, lower), bk), a.constant(0));
  Interval range = solve(*ineqs, full, a);
  // (Clamped to `upper`, which they never pass, so that what bounds the
  // original loop's end visibly bounds theirs: kite-check-bounds then
  // checks a dynamic tensor's size at launch rather than per element.)
  Value begin = a.min(a.add(lower, a.mul(range.t0, bk)), upper);
  Value end = a.min(a.add(lower, a.mul(range.t1, bk)), upper);

  // [lower, begin) as the original, [begin, end) without the wheres, then
  // [end, upper) as the original (the original loop itself, last).
  ValueRange carried = loop.getInitArgs();
  SmallVector<Value> init(carried.begin(), carried.end());
  UnitAttr fullTiles = before.getUnitAttr();
  if (range.hasBefore) {
    IRMapping map;
    TileForOp head = cloneOver(loop, before, lower, begin, init, map);
    head->setAttr(kFullTilesAttrName, fullTiles);
    init.assign(head.getResults().begin(), head.getResults().end());
  }
  IRMapping map;
  TileForOp middle = cloneOver(loop, before, range.hasBefore ? begin : lower, end, init, map);
  middle->setAttr(kFullTilesAttrName, fullTiles);
  foldWheres(middle, map.lookupOrDefault(cond));
  if (range.hasBefore)
    reloadInvariants(middle);
  loop.getLowerBoundsMutable().assign(end);
  loop.getInitArgsMutable().assign(middle.getResults());
  if (!range.hasAfter && whole) {
    // Nothing follows [begin, end): it ends at upper.
    loop.getResults().replaceAllUsesWith(middle.getResults());
    loop->erase();
  } else {
    // [end, upper) starts at a tile boundary, so with whole tiles from
    // lower to upper its tiles are whole too.
    if (whole)
      loop->setAttr(kFullTilesAttrName, fullTiles);
    reloadInvariants(loop);
  }
  return success();
}

/// Peels the partial last tile off a loop with no where to split on whose
/// body reduces over tiles (a row's max or sum: masked lanes there cost a
/// select per element in every iteration, as do a product's masked
/// operands): [lower, lower + full tiles) runs marked full tiles, the rest
/// (at most one tile) as before. A loop whose tiles are all full by its
/// constant bounds, or with no reduction (a product's K loop, which
/// kite-matmul-mainloop turns into a pipelined main loop), stays whole.
LogicalResult peel(TileForOp loop) {
  if (loop->hasAttr(kFullTilesAttrName))
    return failure();
  bool reduces = false;
  loop.getBodyBlock()->walk([&](ReduceOp) { reduces = true; });
  if (!reduces)
    return failure();
  Value lower = loop.getLowerBounds()[0], upper = loop.getUpperBounds()[0];
  if (!getConstantIntValue(loop.getBlockSizes()[0]))
    return failure();
  if (wholeTiles(loop)) {
    // No partial tile to peel (emission already sees constant bounds).
    if (!getConstantIntValue(lower) || !getConstantIntValue(upper))
      loop->setAttr(kFullTilesAttrName, UnitAttr::get(loop.getContext()));
    return failure();
  }
  OpBuilder before(loop);
  Arith a{before, loop.getLoc()};
  Value bk = loop.getBlockSizes()[0];
  Value full = a.max(a.floorDiv(a.sub(upper, lower), bk), a.constant(0));
  // Clamped to `upper` as the splits are (see `split`).
  Value end = a.min(a.add(lower, a.mul(full, bk)), upper);
  IRMapping map;
  TileForOp whole = cloneOver(loop, before, lower, end, loop.getInitArgs(), map);
  whole->setAttr(kFullTilesAttrName, before.getUnitAttr());
  loop.getLowerBoundsMutable().assign(end);
  loop.getInitArgsMutable().assign(whole.getResults());
  reloadInvariants(loop);
  return success();
}

struct KiteSplitMaskedLoopsPass
    : public kite::impl::KiteSplitMaskedLoopsBase<KiteSplitMaskedLoopsPass> {
  void runOnOperation() override {
    SmallVector<TileForOp> loops;
    // Post-order: a loop's inner loops are split before it is.
    getOperation().walk([&](TileForOp loop) {
      if (!loop.isTopLevel() && loop.getNumDims() == 1)
        loops.push_back(loop);
    });
    for (TileForOp loop : loops)
      if (failed(split(loop)))
        (void)peel(loop);
  }
};

} // namespace
