//===- IndexRange.h - bounds of the integer scalars of a kernel -*- C++ -*-===//
//
// This file declares IndexRanges: for an integer scalar of a specialized
// kernel (a constant, a loop variable, a tile's begin or end, arithmetic on
// them), an interval [lo, hi] that holds every value it takes. Run-time
// scalars (kernel parameters that are not specialized, loop-carried values)
// are unbounded, so a subscript built from them cannot be proven in bounds.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_INDEXRANGE_H
#define KITE_LOWERING_INDEXRANGE_H

#include "ir/KiteDialect.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <limits>

namespace kite {

/// A closed interval of int64 values; `full()` is every value.
struct IndexRange {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();

  static IndexRange full() { return {}; }
  static IndexRange exactly(int64_t v) { return {v, v}; }
  bool isConstant() const { return lo == hi; }
  bool operator==(const IndexRange &) const = default;
};

/// The [begin, end) a loop dimension runs over, as ranges of its bounds.
struct LoopExtent {
  IndexRange lower, upper;
};

class IndexRanges {
public:
  /// The range of an integer scalar value (any other value: full()).
  IndexRange of(mlir::Value v);

  /// The bounds of the loop dimension a `!kite.span` block argument (or a
  /// grid_for index) belongs to; nullopt if `span` is not a loop variable.
  std::optional<LoopExtent> extentOf(mlir::Value span);

  /// A number that divides every value the integer scalar `v` takes, as
  /// large as the rules know (1 at worst); 0 if `v` is always 0. A tile's
  /// begin is its loop's lower bound plus a multiple of the block size, its
  /// end that or the upper bound: so where a loop's bounds and block sizes
  /// are multiples of 128 (a causal key loop ending at a query tile's end,
  /// `tile(range(0, tq.end()))` at a sequence length of 1024), so are the
  /// bounds of a loop over [0, tq.end()), and its tiles are all whole.
  int64_t divisorOf(mlir::Value v);

  /// For an integer tile, an interval holding every element (an integer
  /// scalar: of()): a tile loop's indices lie in its bounds (past the upper
  /// one, in a partial tile, by less than the block size); views keep their
  /// operand's; elementwise sums and differences add the intervals; full()
  /// where unknown. A comparison of index tiles inside int32 is emitted on
  /// 32-bit values (causal attention's mask).
  IndexRange elementsOf(mlir::Value v);

private:
  IndexRange compute(mlir::Value v, int depth);
  IndexRange get(mlir::Value v, int depth);
  int64_t divisor(mlir::Value v, int depth);
  IndexRange elements(mlir::Value v, int depth);

  llvm::DenseMap<mlir::Value, IndexRange> memo_;
  llvm::DenseMap<mlir::Value, int64_t> divisors_;
};

} // namespace kite

#endif // KITE_LOWERING_INDEXRANGE_H
