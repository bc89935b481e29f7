//===- Layout.h - how a tile's elements map to the hardware -----*- C++ -*-===//
//
// This file declares kite's layout algebra: where each element of a tile
// lives (which register of which lane of which warp, or which word of shared
// memory), the layouts the tensor cores and kite's loads fix, and how data
// moves from one layout to another.
//
// A distributed layout is linear over GF(2), as Triton's linear layouts
// are: a tile's dims are powers of two, and the element that register `r`
// of lane `l` of warp `w` holds is the XOR of one basis coordinate per set
// bit of `r`, `l` and `w`. Every layout kite uses is one of these: blocked
// runs of contiguous elements spread over threads, the mma.sync and wgmma
// accumulator and operand fragments, and the slices of any of them along a
// reduced dim. A zero basis is a replica (the bit selects the same element:
// threads past a small tile, or the lanes a row vector is broadcast over).
// So equality, slicing and conversion planning are the same code for all
// of them, and none of it needs a GPU (test/unit/layout_test.cpp).
//
// Shared memory is a row-major buffer with an XOR swizzle of 16-byte chunks
// (`SharedLayout`); `bankConflicts` counts what a warp's access to it costs,
// so a conversion through shared memory can pick a conflict-free swizzle.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_IR_LAYOUT_H
#define KITE_IR_LAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace kite::layout {

/// A coordinate in a tile: one index per dim, outermost first.
using Coord = llvm::SmallVector<int64_t, 4>;

/// The hardware index spaces a distributed tile is spread over.
enum class HwDim { Register = 0, Lane = 1, Warp = 2 };
constexpr int kNumHwDims = 3;
constexpr int64_t kWarpSize = 32;

/// A distributed layout of a tile of power-of-two `shape`.
///
/// `bases(Register)[b]` is the coordinate register bit `b` selects, and
/// likewise for lanes and warps; a thread holds `numRegisters()` elements.
/// The lane bases number exactly 5 (a warp has 32 lanes; zero bases where
/// lanes replicate). Every element of the shape is held by some
/// (register, lane, warp): the bases span the shape.
class LinearLayout {
public:
  using Bases = llvm::SmallVector<Coord, 8>;

  /// Checks the invariants above; nullopt (with `error` set, if given) when
  /// they do not hold.
  static std::optional<LinearLayout> get(llvm::ArrayRef<int64_t> shape,
                                         std::array<Bases, kNumHwDims> bases,
                                         std::string *error = nullptr);

  //===--------------------------------------------------------------------===//
  // The layouts kite uses
  //===--------------------------------------------------------------------===//

  /// Runs of `vec[d]` contiguous elements per thread along each dim; the
  /// threads (lane bits, then warp bits, `numThreads` in all, a power of
  /// two) fill the dims in `order` (innermost first), `threads[d]` along
  /// dim d, thread-index stride growing in that order; threads past the
  /// product of `threads` are replicas. A thread's registers run
  /// row-major over its elements: the last dim's fastest, within a dim
  /// first inside a run, then run after run. This is the layout of kite's
  /// loads and elementwise code (`#kite.blocked`).
  static LinearLayout blocked(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> vec,
                              llvm::ArrayRef<int64_t> threads, llvm::ArrayRef<int64_t> order,
                              int64_t numThreads);

  /// The accumulator of mma.sync m16n8k16 over an [M, N] tile (the last two
  /// dims of `shape`; leading dims must be 1), `warpsM` x `warpsN` warps
  /// (warp bits over M first): lane l of a 16x8 block holds rows l/4 and
  /// l/4 + 8, columns 2(l%4) and +1. Register order: the 4 values of a
  /// block (c0..c3), then the blocks along N, then along M. Two adjacent
  /// 8-column blocks are then, register for register, the A operand of a
  /// 16-deep K step (`mmaOperand(0, ...)`), as FlashAttention-2 uses.
  static LinearLayout mmaAccumulator(llvm::ArrayRef<int64_t> shape, int64_t warpsM,
                                     int64_t warpsN);

  /// Operand `opIdx` (0: A, [M, K]; 1: B, [K, N]) of mma.sync m16n8k16 over
  /// the last two dims of `shape`, with the warps of `warpsM` x `warpsN`
  /// (A is replicated over the N warps, B over the M warps). A: lane l holds
  /// rows l/4, l/4 + 8 and columns 2(l%4), +1, +8, +9 of each 16x16 block,
  /// registers a0..a7 in PTX's order, then blocks along K, then along M. B:
  /// rows (K) 2(l%4), +1, +8, +9 and column l/4 of each 16x8 block, b0..b3,
  /// then blocks along K, then along N.
  static LinearLayout mmaOperand(int opIdx, llvm::ArrayRef<int64_t> shape, int64_t warpsM,
                                 int64_t warpsN);

  /// The accumulator of wgmma m64nNk16 over the last two dims [M, N] of
  /// `shape` with `warpgroups` warpgroups along M (4 * warpgroups warps):
  /// warp w of a warpgroup holds rows 16w..16w+15 of its 64, in mma.sync's
  /// fragment order, registers over N first, then over the 64-row blocks.
  /// Its 16-bit form is wgmma's register A operand.
  static LinearLayout wgmmaAccumulator(llvm::ArrayRef<int64_t> shape, int64_t warpgroups);

  //===--------------------------------------------------------------------===//
  // Queries
  //===--------------------------------------------------------------------===//

  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  int64_t rank() const { return shape_.size(); }
  const Bases &bases(HwDim d) const { return bases_[(int)d]; }
  int64_t numRegisters() const { return int64_t(1) << bases(HwDim::Register).size(); }
  int64_t numWarps() const { return int64_t(1) << bases(HwDim::Warp).size(); }
  int64_t numThreads() const { return kWarpSize * numWarps(); }

  /// The coordinate register `reg` of lane `lane` of warp `warp` holds.
  Coord apply(int64_t reg, int64_t lane, int64_t warp) const;
  /// The coordinate of thread `thread` (lane thread % 32, warp thread / 32).
  Coord apply(int64_t reg, int64_t thread) const {
    return apply(reg, thread % kWarpSize, thread / kWarpSize);
  }

  /// Some (register, lane, warp) that holds `c`: the one with the lowest
  /// warp, then lane, then register. The shape must contain `c`.
  std::array<int64_t, kNumHwDims> holderOf(llvm::ArrayRef<int64_t> c) const;

  /// The registers of one thread that hold distinct elements (a zero
  /// register basis, or two that XOR to another's, makes duplicates).
  bool registersDistinct() const;

  /// The layout of the tile with dim `dim` removed, as a reduction along it
  /// leaves each thread's result (a row sum of an accumulator: its slice).
  /// Register bases that become zero or repeat are dropped (a thread keeps
  /// one copy); lane and warp bases that become zero are replicas.
  LinearLayout slice(int64_t dim) const;

  /// The layout with a unit dim inserted at `dim` (unsqueeze).
  LinearLayout unsqueeze(int64_t dim) const;

  /// The same elements with the dims permuted: result dim i is dim
  /// `perm[i]` of this one (transpose, permute).
  LinearLayout permute(llvm::ArrayRef<int64_t> perm) const;

  bool operator==(const LinearLayout &) const = default;

  /// A one-line form, as the IR prints it:
  /// `[16, 64] reg=[[0,1],[0,2]] lane=[...] warp=[...]`.
  std::string str() const;

private:
  LinearLayout() = default;
  llvm::SmallVector<int64_t, 4> shape_;
  std::array<Bases, kNumHwDims> bases_;
};

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

/// How data in layout `from` reaches layout `to` (same shape).
struct ConversionPlan {
  enum class Kind {
    /// The same layout: nothing to do.
    None,
    /// Each thread already holds its elements of `to`: registers are
    /// renamed (a free re-interpretation, as an mma accumulator becoming
    /// the next product's A operand).
    Registers,
    /// Each element of `to` is held in the same warp: warp shuffles.
    WarpShuffle,
    /// Through shared memory with a barrier.
    SharedMemory,
  } kind;
  /// Kind::Registers: for each register of `to`, the register of `from`
  /// (in the same thread) that holds its element.
  llvm::SmallVector<int64_t> registerMap;
};

ConversionPlan planConversion(const LinearLayout &from, const LinearLayout &to);

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

/// A row-major buffer over the last two dims of a tile (leading dims
/// outermost), rows of `rowElems` elements (the tile's last dim plus
/// padding), whose 16-byte chunks are XOR-swizzled: in row r, logical chunk c
/// is stored at chunk c ^ ((r / perPhase) % maxPhase) (maxPhase 1: no
/// swizzle).
struct SharedLayout {
  llvm::SmallVector<int64_t, 4> shape;
  int64_t elemBytes = 4;
  int64_t rowElems = 0; // 0: the last dim's size
  int64_t perPhase = 1;
  int64_t maxPhase = 1;

  /// The element offset of coordinate `c` in the buffer.
  int64_t offset(llvm::ArrayRef<int64_t> c) const;
  /// Elements the buffer spans.
  int64_t sizeElems() const;
};

/// Shared-memory wavefronts a warp needs to access its elements of
/// `dist` in `shared`, each thread `vecElems` contiguous registers (along
/// the last dim) per access, over all of a thread's registers, divided by
/// the fewest possible for that many bytes (1.0: conflict-free). 32 banks of
/// 4 bytes; an access of 8 or 16 bytes per thread is served a half or a
/// quarter warp at a time.
double bankConflicts(const LinearLayout &dist, const SharedLayout &shared,
                     int64_t vecElems);

/// A buffer (a swizzle (perPhase, maxPhase), or rows padded by rowElems) for
/// moving a tile from `from` to `to` through shared memory, each side
/// accessing `fromVec` and `toVec` elements at a time, that minimizes the
/// sum of both sides' bankConflicts (the unswizzled, unpadded buffer when
/// nothing does better).
SharedLayout chooseSharedLayout(const LinearLayout &from, int64_t fromVec,
                                const LinearLayout &to, int64_t toVec, int64_t elemBytes);

} // namespace kite::layout

#endif // KITE_IR_LAYOUT_H
