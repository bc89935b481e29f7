//===- AssignLayouts.cpp - the kite-assign-layouts pass -------------------===//
//
// This file implements layout assignment: every tile value gets a
// `#kite.blocked` layout in its type, each store and atomic the layout it
// iterates in (`kite.layout`), and a `kite.convert_layout` goes wherever a
// value's layout is not one its user can read. CUDA emission reads these and
// decides none. With bulk_stores (sm_90+), unmasked stores are also marked
// `kite.bulk_store`.
//
// The rules (the ones emission has always followed):
// - Each top-level loop has a main context, the thread arrangement of its
//   largest tile (`contextFor`: threads from the innermost dim out, each
//   holding runs of 16 bytes of the kernel's narrowest element along the
//   innermost dim, at most `inner_threads` there). A fresh tile (a load, a
//   constant, an index range, a product without an accumulator, a reshape,
//   an `if`'s result) lies in it if its padded shape fits (right-aligned,
//   each dim equal or 1), else in the context of its own shape.
// - An elementwise result takes the layout of its largest operand of the
//   same shape; a reduction's result is its operand's layout without the
//   reduced dim; shape ops move dims; a product's result is its
//   accumulator's; a loop-carried value keeps its initializer's.
// - An operand is readable by its user if it is replicated everywhere (all
//   dims unit) or lies in the user's context with each of its non-unit dims
//   along the same context dim as the user's dim there (broadcasting
//   aligned from the right); otherwise it is converted to that, unless it
//   is computed in the user's block from index ranges and constants alone
//   through elementwise and shape ops (a causal mask, position offsets):
//   then those ops are computed again in the layout the user reads
//   (`remake`), which moves no data.
//
//===----------------------------------------------------------------------===//

#include "lowering/Config.h"
#include "lowering/DynamicShapes.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

namespace kite {
#define GEN_PASS_DEF_KITEASSIGNLAYOUTS
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

namespace {

SmallVector<int64_t> paddedShape(Type t) {
  SmallVector<int64_t> padded;
  for (int64_t d : cast<TileType>(t).getShape())
    padded.push_back(paddedSize(d));
  return padded;
}

class Assigner {
public:
  Assigner(func::FuncOp kernel, const Config &config, StringRef arch) : kernel(kernel) {
    numThreads = (int64_t)llvm::bit_floor((uint64_t)std::max<int64_t>(computeThreads(config, kernel), 32));
    tensorCores = config.tensor_cores;
    wgmma = tensorCores && config.wgmma && hasWgmma(arch) && numThreads % 128 == 0;
    bulkStores = config.bulk_stores && hasBulkCopies(arch);
    // 8-bit products on wgmma outside the main loop: only where a producer
    // streams both operands (generic_mainloop, warp_specialize, TMA).
    streamsEightBit = wgmma && config.generic_mainloop && config.warp_specialize &&
                      config.indexing == "tma";
    innerThreads = config.inner_threads.value_or(0);
    int64_t narrowest = 0;
    kernel.walk([&](Operation *op) {
      auto visit = [&](Type t) {
        if (auto tt = dyn_cast<kite::TensorType>(t))
          if (int64_t b = elementBytes(tt.getElementType()))
            narrowest = narrowest ? std::min(narrowest, b) : b;
      };
      for (Type t : op->getResultTypes())
        visit(t);
      for (Region &r : op->getRegions())
        for (Block &b : r)
          for (BlockArgument a : b.getArguments())
            visit(a.getType());
    });
    if (narrowest) {
      vecElems = std::clamp<int64_t>(16 / narrowest, 1, 8);
      narrowestBytes = narrowest;
    }
  }

  LogicalResult run();

private:
  func::FuncOp kernel;
  int64_t numThreads = 128, vecElems = 4, innerThreads = 0;
  int64_t narrowestBytes = 4; // of the kernel's tensors' elements
  bool tensorCores = false;
  bool wgmma = false; // products may run on wgmma (sm_90a, whole warpgroups)
  bool streamsEightBit = false; // plain 8-bit product loops may run as kernel code
  bool bulkStores = false; // unmasked stores marked kite.bulk_store (bulk_stores, sm_90+)
  BlockedLayoutAttr main; // the current top-level loop's context

  // Layouts -----------------------------------------------------------------

  BlockedLayoutAttr contextFor(ArrayRef<int64_t> shape);
  int64_t accessRun(Operation *loop);
  std::optional<BlockedLayoutAttr> fit(ArrayRef<int64_t> padded, BlockedLayoutAttr ctx);
  BlockedLayoutAttr layoutFor(ArrayRef<int64_t> padded);
  static BlockedLayoutAttr layoutOf(Value v) {
    return cast<BlockedLayoutAttr>(cast<TileType>(v.getType()).getLayout());
  }
  static int64_t registers(BlockedLayoutAttr l);
  std::optional<BlockedLayoutAttr> mmaLayout(ArrayRef<int64_t> padded);
  bool onTensorCores(Operation *product, Value lhs, Value rhs);
  bool onWgmma(Value rhs);
  /// For a tensor-core product with operands `lhs` and `rhs` (their
  /// layouts assigned): nothing if it runs on mma.sync, else whether wgmma
  /// reads its left operand from shared memory (kSharedLhsAttrName).
  std::optional<bool> wgmmaLhsShared(Operation *product, Value lhs, Value rhs);
  /// `v` readable at the elements of a `r` tile (dims aligned at `offset`),
  /// through a conversion inserted before `user` if needed.
  Value readableAt(Value v, BlockedLayoutAttr r, int64_t offset, Operation *user);
  /// `v` in exactly layout `l` (a loop's carried values, an `if`'s results:
  /// their types must agree): readableAt, then a conversion before `user`
  /// if the layouts still differ (one between layouts that read alike
  /// moves no data).
  Value inLayout(Value v, BlockedLayoutAttr l, Operation *user);
  /// True if `v` is a constant used once, which is then made as `type`.
  static bool madeAs(Value v, TileType type);
  /// True if `v` is a load used once, by the elementwise `user` in its
  /// block, that reads as well in `type`'s layout, which it then takes.
  static bool loadedAs(Value v, TileType type, Operation *user);
  /// True if `v` is computed from index ranges, constants and scalars
  /// alone, by at most `budget` elementwise and shape ops.
  static bool remakeable(Value v, int &budget);
  /// `v` (remakeable) computed again as `type`, its ops cloned at `b`.
  Value remake(Value v, TileType type, OpBuilder &b);
  /// `v` as `type` for `user`: remade if cheap, else a conversion at `b`.
  Value convert(Value v, TileType type, Operation *user, OpBuilder &b);
  /// Ops remake made (laid out already: assignOp leaves them), and ops
  /// whose results it replaced for some user (erased at the end if dead).
  DenseSet<Operation *> remade;
  SmallVector<Operation *> replaced;
  /// Operand `i` of `user` made readable (replaced by its conversion).
  void makeReadable(Operation *user, unsigned i, BlockedLayoutAttr r, int64_t offset);
  static void setLayout(Value v, BlockedLayoutAttr l) {
    v.setType(cast<TileType>(v.getType()).withLayout(l));
  }

  // Ops ---------------------------------------------------------------------

  LogicalResult assignBlock(Block &block);
  LogicalResult assignOp(Operation *op);
  LogicalResult assignLoop(Operation *loop, MutableOperandRange inits,
                           Block::BlockArgListType iterArgs, ResultRange results, Block &body);
  LogicalResult assignIf(scf::IfOp op);
  void assignElementwise(Operation *op);
  void assignReduce(ReduceOp op);
  LogicalResult assignShape(Operation *op);
  LogicalResult assignAccess(Operation *op, Value tensor, ArrayRef<Subscript> subs,
                             Value mask, Value value, Value result);
  std::optional<SmallVector<int64_t>> accessShape(Value tensor, ArrayRef<Subscript> subs);
};

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

/// The context of a tile of (padded) `shape`: threads from the innermost
/// dim out, `vecElems` contiguous elements per run along the innermost.
BlockedLayoutAttr Assigner::contextFor(ArrayRef<int64_t> shape) {
  int64_t r = shape.size();
  SmallVector<int64_t> vec(r, 1), threads(r, 1), dims;
  int64_t remaining = numThreads;
  for (int64_t d = r - 1; d >= 0; --d) {
    int64_t v = d == r - 1 ? std::min<int64_t>(shape[d], vecElems) : 1;
    vec[d] = v;
    int64_t limit = remaining;
    if (d == r - 1 && innerThreads > 0)
      limit = std::min(limit, innerThreads);
    threads[d] = std::max<int64_t>(1, std::min(shape[d] / v, limit));
    remaining /= threads[d];
  }
  for (int64_t d = 0; d < r; ++d)
    dims.push_back(shape[d] == 1 ? -1 : d);
  return BlockedLayoutAttr::get(kernel.getContext(), shape, vec, threads, dims);
}

/// `ctx` with the dims of a tile of `padded` shape (right-aligned), if it
/// fits.
std::optional<BlockedLayoutAttr> Assigner::fit(ArrayRef<int64_t> padded,
                                               BlockedLayoutAttr ctx) {
  int64_t off = (int64_t)ctx.getShape().size() - (int64_t)padded.size();
  if (off < 0)
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (size_t i = 0; i < padded.size(); ++i) {
    if (padded[i] == 1)
      dims.push_back(-1);
    else if (padded[i] == ctx.getShape()[off + i])
      dims.push_back(off + i);
    else
      return std::nullopt;
  }
  return ctx.withDims(dims);
}

BlockedLayoutAttr Assigner::layoutFor(ArrayRef<int64_t> padded) {
  if (main)
    if (std::optional<BlockedLayoutAttr> l = fit(padded, main))
      return *l;
  return contextFor(padded);
}

int64_t Assigner::registers(BlockedLayoutAttr l) {
  int64_t n = 1;
  for (int64_t c : l.getDims())
    if (c >= 0)
      n *= l.getShape()[c] / l.getThreads()[c];
  return n;
}

/// The tensor cores' layout of a [.., M, N] tile (leading dims 1), if it
/// has one: `mma.sync` m16n8k16's accumulator, and with N = K its left
/// operand. Lanes 4g..4g+3 of a warp hold row g of the warp's 8-row groups,
/// 2 adjacent columns each per 8 (vec 2 on 4 threads); rows go over the
/// program's threads / 4, so each thread holds 2 or more rows, and the rows
/// a thread holds in pairs form the 16-row tiles the instruction computes
/// (its rows are a permutation of the tile's, which the product does not
/// see).
std::optional<BlockedLayoutAttr> Assigner::mmaLayout(ArrayRef<int64_t> padded) {
  int64_t r = padded.size();
  if (r < 2 || llvm::any_of(padded.drop_back(2), [](int64_t d) { return d != 1; }))
    return std::nullopt;
  int64_t rowThreads = numThreads / 4, m = padded[r - 2], n = padded[r - 1];
  if (rowThreads < 8 || m < 2 * rowThreads || n < 8)
    return std::nullopt;
  SmallVector<int64_t> vec(r, 1), threads(r, 1), dims(r, -1);
  vec[r - 1] = 2;
  threads[r - 2] = rowThreads;
  threads[r - 1] = 4;
  dims[r - 2] = r - 2;
  dims[r - 1] = r - 1;
  return BlockedLayoutAttr::get(kernel.getContext(), padded, vec, threads, dims);
}

/// True if a matrix product runs on the tensor cores from registers: 16-bit
/// float operands of one type, one matrix each, a result and left operand
/// with the tensor cores' layout, and K a multiple of 16.
bool Assigner::onTensorCores(Operation *product, Value lhs, Value rhs) {
  auto a = cast<TileType>(lhs.getType()), b = cast<TileType>(rhs.getType());
  Type elem = a.getElementType();
  bool half = elem == b.getElementType() && (elem.isBF16() || elem.isF16());
  // 8-bit floats only in a plain product loop that runs as kernel code
  // (generic_mainloop) with its operands streamed into shared memory by
  // the producer, on wgmma: no register fragments of 8-bit A exist, nor an
  // mma.sync path for them.
  bool eightBit = isFloat8(elem) && isFloat8(b.getElementType()) && streamsEightBit;
  if (eightBit) {
    auto loop = dyn_cast<TileForOp>(product->getParentOp());
    eightBit = loop && whyNotPlainProductLoop(loop).empty() && streamsAsKeyLoop(loop) &&
               !loop->hasAttr("kite.mainloop") && onWgmma(rhs);
  }
  if (!tensorCores || !(half || eightBit) || a.getRank() != b.getRank() ||
      (a.getRank() != 2 && a.getRank() != 3))
    return false;
  // A K loop kite-matmul-mainloop marked runs as a kite_gemm.cuh main loop.
  if (auto loop = dyn_cast<TileForOp>(product->getParentOp()))
    if (loop->hasAttr("kite.mainloop"))
      return false;
  SmallVector<int64_t> pa = paddedShape(a), pb = paddedShape(b);
  int64_t r = pa.size();
  return pa[r - 1] % 16 == 0 && pb[r - 2] == pa[r - 1] && mmaLayout(pa) &&
         mmaLayout(paddedShape(product->getResult(0).getType()));
}

/// True if a tensor-core product with right operand `rhs` (its layout
/// assigned) runs on wgmma: the config allows it, and the staged operand
/// fills whole 128-byte swizzle rows (64 elements of 16 bits along its
/// rows: K when staged along K, else N; 128 of 8 bits, along K) with N at
/// most 256.
bool Assigner::onWgmma(Value rhs) {
  auto type = cast<TileType>(rhs.getType());
  SmallVector<int64_t> padded = paddedShape(type);
  int64_t r = padded.size(), k = padded[r - 2], n = padded[r - 1];
  bool alongK = stagedAlongK(layoutOf(rhs), r);
  // 8-bit operands: K-major only.
  if (isFloat8(type.getElementType()) && !alongK)
    return false;
  return wgmma && n <= 256 && (alongK ? k : n) % swizzleRowElems(type.getElementType()) == 0;
}

/// A left operand defined outside the nearest loop around the product is
/// read from shared memory, staged before that loop: only a nested tile
/// loop's emission does that, with K in whole 64-element swizzle rows; a
/// product in any other loop with an invariant left operand runs on
/// mma.sync.
std::optional<bool> Assigner::wgmmaLhsShared(Operation *product, Value lhs, Value rhs) {
  if (!onWgmma(rhs))
    return std::nullopt;
  Operation *loop = product->getParentOp();
  while (loop && !isa<TileForOp, GridForOp, scf::ForOp, scf::WhileOp>(loop))
    loop = loop->getParentOp();
  if (!loop || loop->isAncestor(lhs.getParentRegion()->getParentOp()))
    return false;
  auto tileLoop = dyn_cast<TileForOp>(loop);
  SmallVector<int64_t> padded = paddedShape(lhs.getType());
  if (!tileLoop || tileLoop.isTopLevel() ||
      padded.back() % swizzleRowElems(cast<TileType>(lhs.getType()).getElementType()) != 0)
    return std::nullopt;
  return true;
}

/// A conversion goes right before its user when the value is defined in
/// the user's block, else right after the definition (out of the loops
/// around the user: a loop-invariant operand converts once). A value
/// converted to one layout twice is converted once; a constant used once is
/// made in the layout its user reads.
Value Assigner::readableAt(Value v, BlockedLayoutAttr r, int64_t offset, Operation *user) {
  BlockedLayoutAttr o = layoutOf(v);
  if (o.readableAt(r, offset))
    return v;
  SmallVector<int64_t> dims;
  for (auto [j, c] : llvm::enumerate(o.getDims())) {
    int64_t i = (int64_t)j + offset;
    dims.push_back(o.tileShape()[j] == 1 ? -1 : r.getDims()[i]);
  }
  auto type = cast<TileType>(v.getType()).withLayout(r.withDims(dims));
  if (madeAs(v, type) || loadedAs(v, type, user))
    return v;
  for (Operation *u : v.getUsers())
    if (auto c = dyn_cast<ConvertLayoutOp>(u); c && c.getType() == type)
      if (Operation *at = c->getBlock()->findAncestorOpInBlock(*user))
        if (c->isBeforeInBlock(at))
          return c;
  OpBuilder b(user);
  if (v.getParentBlock() != user->getBlock()) {
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(v.getParentBlock());
  }
  return convert(v, type, user, b);
}

Value Assigner::inLayout(Value v, BlockedLayoutAttr l, Operation *user) {
  v = readableAt(v, l, 0, user);
  if (layoutOf(v) == l)
    return v;
  auto type = cast<TileType>(v.getType()).withLayout(l);
  if (madeAs(v, type))
    return v;
  OpBuilder b(user);
  return convert(v, type, user, b);
}

/// At most this many ops are computed again for one user.
constexpr int kRemakeOps = 8;

Value Assigner::convert(Value v, TileType type, Operation *user, OpBuilder &b) {
  int budget = kRemakeOps;
  if (v.getParentBlock() == user->getBlock() && remakeable(v, budget)) {
    OpBuilder before(user);
    replaced.push_back(v.getDefiningOp());
    return remake(v, type, before);
  }
  return b.create<ConvertLayoutOp>(user->getLoc(), type, v);
}

/// An op remake may compute again: pure, one tile result, no regions.
static bool cheapToRemake(Operation *op) {
  return isa_and_nonnull<SpanIndexOp, ArangeOp, FullOp, UnaryOp, BinaryOp, CompareOp, WhereOp,
                         CastOp, RandomOp, ExpandOp, UnsqueezeOp, SqueezeOp, TransposeOp, PermuteOp,
                         ConvertLayoutOp>(op) &&
         op->getNumResults() == 1 && op->getNumRegions() == 0;
}

bool Assigner::remakeable(Value v, int &budget) {
  Operation *def = v.getDefiningOp();
  if (!cheapToRemake(def) || --budget < 0)
    return false;
  for (Value o : def->getOperands())
    if (isa<TileType>(o.getType()) && !remakeable(o, budget))
      return false;
  return true;
}

/// Each operand of a remade op lies where the op, in layout `r`, reads it:
/// through a shape op, its dims moved back; elementwise, broadcast from the
/// right (its unit dims replicated).
Value Assigner::remake(Value v, TileType type, OpBuilder &b) {
  Operation *def = v.getDefiningOp();
  if (isa<ConvertLayoutOp>(def))
    return remake(def->getOperand(0), type, b);
  auto r = cast<BlockedLayoutAttr>(type.getLayout());
  SmallVector<int64_t> out(r.getDims());
  int64_t rank = out.size();
  auto norm = [](int64_t d, int64_t n) { return d < 0 ? d + n : d; };
  SmallVector<Value> operands;
  for (Value o : def->getOperands()) {
    auto t = dyn_cast<TileType>(o.getType());
    if (!t) {
      operands.push_back(o);
      continue;
    }
    SmallVector<int64_t> dims(out);
    if (auto u = dyn_cast<UnsqueezeOp>(def)) {
      dims.erase(dims.begin() + norm(u.getDim(), rank));
    } else if (auto sq = dyn_cast<SqueezeOp>(def)) {
      dims.insert(dims.begin() + norm(sq.getDim(), t.getRank()), -1);
    } else if (auto tr = dyn_cast<TransposeOp>(def)) {
      std::swap(dims[norm(tr.getDim0(), rank)], dims[norm(tr.getDim1(), rank)]);
    } else if (auto pe = dyn_cast<PermuteOp>(def)) {
      for (auto [i, d] : llvm::enumerate(pe.getDims()))
        dims[norm(d, rank)] = out[i];
    } else {
      SmallVector<int64_t> padded = paddedShape(t);
      int64_t offset = rank - t.getRank();
      dims.assign(t.getRank(), -1);
      for (int64_t j = 0; j < t.getRank(); ++j)
        dims[j] = padded[j] == 1 ? -1 : out[j + offset];
    }
    operands.push_back(remake(o, t.withLayout(r.withDims(dims)), b));
  }
  Operation *clone = b.clone(*def);
  clone->setOperands(operands);
  clone->getResult(0).setType(type);
  remade.insert(clone);
  return clone->getResult(0);
}

bool Assigner::madeAs(Value v, TileType type) {
  if (!isa_and_nonnull<FullOp>(v.getDefiningOp()) || !v.hasOneUse())
    return false;
  v.setType(type);
  return true;
}

/// A load read straight into the layout its one user reads it in moves no
/// data through shared memory (a conversion would: a barrier either side,
/// and for a product's accumulator layout, scalar reads of it). Where the
/// new layout still reads the tensor's rows at least 16 contiguous bytes a
/// warp (a product's accumulator layout: 4 lanes of bf16 pairs, 8 rows an
/// instruction, the other half of each 32-byte sector read by the next
/// column chunk's load from L1), that is the better way: a residual or a
/// bias added to a product's sums. Masked and gathered loads, whose masks
/// and indices were laid out for the load, and loads in other blocks keep
/// their layout.
bool Assigner::loadedAs(Value v, TileType type, Operation *user) {
  auto load = v.getDefiningOp<LoadOp>();
  if (!load || !v.hasOneUse() || load.getMask() || load->getBlock() != user->getBlock() ||
      !isa<UnaryOp, BinaryOp, CompareOp, WhereOp, CastOp>(user))
    return false;
  ArrayRef<Subscript> subs = load.getSubscripts();
  if (subs.empty() || llvm::any_of(subs, [](const Subscript &s) {
        return s.kind == Subscript::Kind::Gather;
      }))
    return false;
  if (subs.back().kind != Subscript::Kind::Span && subs.back().kind != Subscript::Kind::All)
    return false;
  auto l = cast<BlockedLayoutAttr>(type.getLayout());
  int64_t c = l.getDims().empty() ? -1 : l.getDims().back();
  int64_t bytes = elementBytes(type.getElementType());
  if (c < 0 || bytes <= 0 || l.threadStride(c) != 1)
    return false;
  int64_t run = l.getVec()[c] * bytes, lanes = std::min<int64_t>(l.getThreads()[c], 32);
  if (run < 4 || run * lanes < 16)
    return false;
  v.setType(type);
  return true;
}

void Assigner::makeReadable(Operation *user, unsigned i, BlockedLayoutAttr r, int64_t offset) {
  Value v = user->getOperand(i);
  if (isa<TileType>(v.getType()))
    user->setOperand(i, readableAt(v, r, offset, user));
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

/// The padded shape of the largest tile in `loop`.
SmallVector<int64_t> largestTileShape(Operation *loop) {
  SmallVector<int64_t> biggest;
  int64_t biggestCount = 0;
  loop->walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (isa<TileType>(t)) {
        SmallVector<int64_t> padded = paddedShape(t);
        int64_t n = 1;
        for (int64_t d : padded)
          n *= d;
        if (n > biggestCount) {
          biggestCount = n;
          biggest = padded;
        }
      }
  });
  if (biggest.empty())
    biggest.push_back(1);
  return biggest;
}

/// The run of elements (of the kernel's narrowest type) that a thread of
/// `loop`'s context should hold along the innermost dim: `vecElems`,
/// unless no global access in the loop can move more than `w < vecElems`
/// of them at once (rows whose stride, start or length is not a multiple
/// of a vector, 4097 columns), in which case `w`: with scalar accesses a
/// warp's lanes then touch consecutive elements (one 64-byte segment of
/// bf16 per access) instead of one element per 16-byte run (512 bytes,
/// 8 times the L2 transactions for stores). Accesses that do not index a
/// contiguous innermost dim by a tile do not count; the operands of a K
/// loop that kite-matmul-mainloop marked are copied by the main loop, not
/// in this layout.
int64_t Assigner::accessRun(Operation *loop) {
  int64_t widest = 0;
  bool any = false;
  loop->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->hasAttr("kite.mainloop"))
      return WalkResult::skip();
    Value tensor;
    SmallVector<Subscript> subs;
    if (auto l = dyn_cast<LoadOp>(op))
      tensor = l.getTensor(), subs = l.getSubscripts();
    else if (auto st = dyn_cast<StoreOp>(op))
      tensor = st.getTensor(), subs = st.getSubscripts();
    else if (auto a = dyn_cast<AtomicOp>(op))
      tensor = a.getTensor(), subs = a.getSubscripts();
    else
      return WalkResult::advance();
    auto type = dyn_cast<kite::TensorType>(tensor.getType());
    int64_t bytes = type && type.hasElementType() ? elementBytes(type.getElementType()) : 0;
    if (!bytes || subs.empty() || subs.back().kind == Subscript::Kind::Scalar ||
        subs.back().kind == Subscript::Kind::Gather ||
        subs.back().kind == Subscript::Kind::NewAxis)
      return WalkResult::advance();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t rank = shape.size();
    // Strides and alignment: a parameter's as specialized; anything else
    // (an output kite allocates) is dense and aligned.
    // (A stride taken at launch counts as what it is a multiple of.)
    SmallVector<int64_t> strides(rank, 1);
    int64_t align = 16;
    auto arg = dyn_cast<BlockArgument>(tensor);
    auto func = loop->getParentOfType<func::FuncOp>();
    SmallVector<StrideFact> facts;
    if (arg && arg.getOwner()->isEntryBlock())
      facts = argStrides(func, arg.getArgNumber());
    if (!facts.empty()) {
      strides.clear();
      for (const StrideFact &f : facts)
        strides.push_back(f.divisor);
      if (auto a = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), "kite.align"))
        align = a.getInt();
    } else if (arg || llvm::any_of(shape, ShapedType::isDynamic)) {
      return WalkResult::advance(); // unknown: it could vectorize
    } else {
      for (int64_t d = rank - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    if ((int64_t)strides.size() != rank || rank == 0 || strides[rank - 1] != 1)
      return WalkResult::advance();
    int64_t w = 16 / bytes;
    auto divides = [&](int64_t m) {
      if (m <= 0)
        return; // a size or stride taken at launch: not known here
      while (w > 1 && m % w != 0)
        w /= 2;
    };
    divides(align / bytes);
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (shape[d] != 1)
        divides(strides[d]);
    if (!ShapedType::isDynamic(shape[rank - 1]))
      divides(shape[rank - 1]);
    else if (auto d = arg ? func.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(),
                                                                      "kite.divisors")
                          : DenseI64ArrayAttr())
      divides(d.asArrayRef().back());
    any = true;
    widest = std::max(widest, w * bytes / narrowestBytes);
    return WalkResult::advance();
  });
  if (!any)
    return vecElems;
  return std::clamp<int64_t>(widest, 1, vecElems);
}

LogicalResult Assigner::run() {
  // Emission's order: the prologue (outside any loop), then the loops.
  Block &entry = kernel.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(entry))
    if (!isa<TileForOp, GridForOp>(op) && failed(assignOp(&op)))
      return failure();
  for (Operation &op : entry) {
    if (!isa<TileForOp, GridForOp>(op))
      continue;
    int64_t kernelRun = vecElems;
    vecElems = accessRun(&op);
    main = contextFor(largestTileShape(&op));
    op.setAttr(kLayoutAttrName, main);
    if (failed(assignBlock(op.getRegion(0).front())))
      return failure();
    vecElems = kernelRun;
  }
  // Conversions that a loop's second layout round left without users, and
  // ops remake left without users (or made for a round a later one undid).
  kernel.walk([](ConvertLayoutOp c) {
    if (c->use_empty())
      c->erase();
  });
  SmallVector<Operation *> dead(replaced);
  dead.append(remade.begin(), remade.end());
  DenseSet<Operation *> erased;
  while (!dead.empty()) {
    Operation *op = dead.pop_back_val();
    if (erased.contains(op) || !op->use_empty() || !cheapToRemake(op))
      continue;
    for (Value o : op->getOperands())
      if (Operation *def = o.getDefiningOp(); def && isa<TileType>(o.getType()))
        dead.push_back(def);
    erased.insert(op);
    op->erase();
  }
  return success();
}

LogicalResult Assigner::assignBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block))
    if (failed(assignOp(&op)))
      return failure();
  return success();
}

/// A loop's carried values (its region's iter_args and its results) take
/// the layout the body yields them in: the body is laid out with them in
/// their initializers' layouts, then again in the layouts it yielded (its
/// conversions undone first) until they agree, at most twice more. The
/// initializers and yields are then made readable in them.
LogicalResult Assigner::assignLoop(Operation *loop, MutableOperandRange inits,
                                   Block::BlockArgListType iterArgs, ResultRange results,
                                   Block &body) {
  SmallVector<BlockedLayoutAttr> want;
  for (OpOperand &init : inits)
    want.push_back(isa<TileType>(init.get().getType()) ? layoutOf(init.get())
                                                        : BlockedLayoutAttr());
  Operation *yield = body.getTerminator();
  for (int round = 0;; ++round) {
    for (auto [l, arg, res] : llvm::zip(want, iterArgs, results)) {
      if (!l)
        continue;
      setLayout(arg, l);
      setLayout(res, l);
    }
    if (failed(assignBlock(body)))
      return failure();
    bool changed = false;
    for (auto [i, l] : llvm::enumerate(want)) {
      if (!l)
        continue;
      BlockedLayoutAttr yielded = layoutOf(yield->getOperand(i));
      if (!yielded.readableAt(l, 0) && round < 2) {
        l = yielded;
        changed = true;
      }
    }
    if (!changed)
      break;
    body.walk([](ConvertLayoutOp c) {
      c.getResult().replaceAllUsesWith(c.getSource());
      c->erase();
    });
  }
  for (auto [i, init] : llvm::enumerate(inits))
    if (want[i]) {
      yield->setOperand(i, inLayout(yield->getOperand(i), want[i], yield));
      init.set(inLayout(init.get(), want[i], loop));
    }
  return success();
}

LogicalResult Assigner::assignIf(scf::IfOp op) {
  for (Value res : op.getResults())
    if (isa<TileType>(res.getType()))
      setLayout(res, layoutFor(paddedShape(res.getType())));
  for (Region *region : {&op.getThenRegion(), &op.getElseRegion()}) {
    if (region->empty())
      continue;
    if (failed(assignBlock(region->front())))
      return failure();
    Operation *yield = region->front().getTerminator();
    for (auto [i, res] : llvm::enumerate(op.getResults()))
      if (isa<TileType>(res.getType()))
        yield->setOperand(i, inLayout(yield->getOperand(i), layoutOf(res), yield));
  }
  return success();
}

void Assigner::assignElementwise(Operation *op) {
  Value result = op->getResult(0);
  SmallVector<int64_t> padded = paddedShape(result.getType());
  // Like the largest operand of the same shape computed in this iteration,
  // if any, else the largest loop-carried one (whose layout follows what
  // the loop computes: assignLoop).
  std::optional<BlockedLayoutAttr> base;
  std::pair<bool, int64_t> baseRank;
  for (Value v : op->getOperands()) {
    if (!isa<TileType>(v.getType()) || paddedShape(v.getType()) != padded)
      continue;
    std::pair<bool, int64_t> rank{!isa<BlockArgument>(v), registers(layoutOf(v))};
    if (!base || rank > baseRank) {
      base = layoutOf(v);
      baseRank = rank;
    }
  }
  BlockedLayoutAttr r = base ? *base : layoutFor(padded);
  setLayout(result, r);
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (auto t = dyn_cast<TileType>(op->getOperand(i).getType()))
      makeReadable(op, i, r, (int64_t)padded.size() - t.getRank());
}

void Assigner::assignReduce(ReduceOp op) {
  BlockedLayoutAttr src = layoutOf(op.getOperand());
  int64_t rank = src.getDims().size();
  int64_t dim = op.getDim() < 0 ? op.getDim() + rank : op.getDim();
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != dim)
      dims.push_back(src.getDims()[i]);
    else if (op.getKeepdim())
      dims.push_back(-1);
  }
  setLayout(op.getResult(), src.withDims(dims));
}

LogicalResult Assigner::assignShape(Operation *op) {
  Value in = op->getOperand(0);
  BlockedLayoutAttr src = layoutOf(in);
  SmallVector<int64_t> dims(src.getDims());
  int64_t rank = dims.size();
  auto norm = [&](int64_t d, int64_t r) { return d < 0 ? d + r : d; };
  if (auto u = dyn_cast<UnsqueezeOp>(op)) {
    dims.insert(dims.begin() + norm(u.getDim(), rank + 1), -1);
  } else if (auto s = dyn_cast<SqueezeOp>(op)) {
    int64_t d = norm(s.getDim(), rank);
    if (src.tileShape()[d] == 1)
      dims.erase(dims.begin() + d);
  } else if (auto t = dyn_cast<TransposeOp>(op)) {
    std::swap(dims[norm(t.getDim0(), rank)], dims[norm(t.getDim1(), rank)]);
  } else if (auto p = dyn_cast<PermuteOp>(op)) {
    for (auto [i, d] : llvm::enumerate(p.getDims()))
      dims[i] = src.getDims()[norm(d, rank)];
  } else {
    // A reshape goes through shared memory into a fresh layout.
    setLayout(op->getResult(0), layoutFor(paddedShape(op->getResult(0).getType())));
    return success();
  }
  if (dims.size() != paddedShape(op->getResult(0).getType()).size())
    return op->emitError() << "internal error: cannot lay out the result of this shape op";
  setLayout(op->getResult(0), src.withDims(dims));
  return success();
}

/// The block size of tile loop variable `span`, or nullopt.
std::optional<int64_t> spanBlockSize(Value span) {
  auto [loop, dim] = getSpanLoop(span);
  if (!loop)
    return std::nullopt;
  return getConstantIntValue(loop.getBlockSizes()[dim]);
}

/// The shape the subscripts of an access of `tensor` select (emission's
/// iteration shape), or nullopt if a span's block size is unknown.
std::optional<SmallVector<int64_t>> Assigner::accessShape(Value tensor,
                                                          ArrayRef<Subscript> subs) {
  auto t = cast<kite::TensorType>(tensor.getType());
  SmallVector<int64_t> shape;
  size_t td = 0;
  for (size_t p = 0; p < subs.size(); ++p) {
    const Subscript &s = subs[p];
    switch (s.kind) {
    case Subscript::Kind::NewAxis:
      shape.push_back(1);
      continue;
    case Subscript::Kind::All:
      shape.push_back(wholeExtent(tensor, td));
      break;
    case Subscript::Kind::Span: {
      std::optional<int64_t> bs = spanBlockSize(s.value);
      if (!bs)
        return std::nullopt;
      shape.push_back(*bs);
      break;
    }
    case Subscript::Kind::Scalar:
      break;
    case Subscript::Kind::Gather: {
      // Adjacent gathers broadcast together into one group of dims.
      SmallVector<int64_t> group;
      size_t q = p;
      for (; q < subs.size() && subs[q].kind == Subscript::Kind::Gather; ++q) {
        auto g = cast<TileType>(subs[q].value.getType());
        if ((int64_t)group.size() < g.getRank())
          group.insert(group.begin(), g.getRank() - group.size(), 1);
        int64_t off = group.size() - g.getRank();
        for (int64_t i = 0; i < g.getRank(); ++i)
          if (g.getShape()[i] != 1)
            group[off + i] = g.getShape()[i];
        ++td;
      }
      shape.append(group);
      p = q - 1;
      continue;
    }
    }
    ++td;
  }
  for (; td < t.getShape().size(); ++td)
    shape.push_back(wholeExtent(tensor, td));
  for (int64_t &d : shape)
    d = paddedSize(d);
  return shape;
}

LogicalResult Assigner::assignAccess(Operation *op, Value tensor, ArrayRef<Subscript> subs,
                                     Value mask, Value value, Value result) {
  BlockedLayoutAttr t;
  if (result) {
    t = layoutFor(paddedShape(result.getType()));
    setLayout(result, t);
  } else {
    std::optional<SmallVector<int64_t>> shape = accessShape(tensor, subs);
    if (!shape)
      return op->emitError() << "internal error: the access's shape is not static";
    if (isa<TileType>(value.getType()) && paddedShape(value.getType()) == *shape)
      t = layoutOf(value);
    else
      t = layoutFor(*shape);
    op->setAttr(kLayoutAttrName, t);
  }
  int64_t rank = t.getDims().size();
  // Gathers are read where their group's dims are.
  int64_t rd = 0;
  for (size_t p = 0; p < subs.size(); ++p) {
    if (subs[p].kind == Subscript::Kind::Gather) {
      size_t q = p;
      int64_t groupRank = 0;
      for (; q < subs.size() && subs[q].kind == Subscript::Kind::Gather; ++q)
        groupRank = std::max(groupRank, cast<TileType>(subs[q].value.getType()).getRank());
      for (size_t m = p; m < q; ++m) {
        Value g = subs[m].value;
        int64_t r = cast<TileType>(g.getType()).getRank();
        Value readable = readableAt(g, t, rd + groupRank - r, op);
        op->replaceUsesOfWith(g, readable);
      }
      rd += groupRank;
      p = q - 1;
    } else if (subs[p].kind != Subscript::Kind::Scalar) {
      ++rd;
    }
  }
  if (mask && isa<TileType>(mask.getType()))
    op->replaceUsesOfWith(
        mask, readableAt(mask, t, rank - cast<TileType>(mask.getType()).getRank(), op));
  if (value && isa<TileType>(value.getType()))
    op->replaceUsesOfWith(
        value, readableAt(value, t, rank - cast<TileType>(value.getType()).getRank(), op));
  return success();
}

LogicalResult Assigner::assignOp(Operation *op) {
  if (remade.contains(op))
    return success();
  // A product on the tensor cores takes their layout and reads its left
  // operand and accumulator in it; any other is its accumulator's layout.
  auto product = [&](Value acc) {
    Value result = op->getResult(0);
    unsigned lhs = acc ? 1 : 0;
    if (onTensorCores(op, op->getOperand(lhs), op->getOperand(lhs + 1))) {
      BlockedLayoutAttr r = *mmaLayout(paddedShape(result.getType()));
      setLayout(result, r);
      makeReadable(op, lhs, *mmaLayout(paddedShape(op->getOperand(lhs).getType())), 0);
      if (acc)
        makeReadable(op, 0, r, 0);
      std::optional<bool> shared = wgmmaLhsShared(op, op->getOperand(lhs), op->getOperand(lhs + 1));
      StringRef instr = shared ? kWgmma : kMmaSync;
      op->setAttr(kMmaAttrName, StringAttr::get(op->getContext(), instr));
      if (shared && *shared)
        op->setAttr(kSharedLhsAttrName, UnitAttr::get(op->getContext()));
      else
        op->removeAttr(kSharedLhsAttrName);
      return;
    }
    op->removeAttr(kMmaAttrName);
    op->removeAttr(kSharedLhsAttrName);
    setLayout(result, acc ? layoutOf(acc) : layoutFor(paddedShape(result.getType())));
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](TileForOp l) {
        return assignLoop(l, l.getInitArgsMutable(), l.getRegionIterArgs(), l.getResults(),
                          *l.getBodyBlock());
      })
      .Case([&](GridForOp l) {
        return assignLoop(l, l.getInitArgsMutable(), l.getRegionIterArgs(), l.getResults(),
                          *l.getBodyBlock());
      })
      .Case([&](scf::ForOp l) {
        return assignLoop(l, l.getInitArgsMutable(), l.getRegionIterArgs(), l.getResults(),
                          *l.getBody());
      })
      .Case([&](scf::IfOp i) { return assignIf(i); })
      .Case([&](LoadOp l) {
        return assignAccess(l, l.getTensor(), l.getSubscripts(), l.getMask(), {}, l.getResult());
      })
      .Case([&](StoreOp s) {
        if (bulkStores && !s.getMask())
          s->setAttr(kBulkStoreAttrName, UnitAttr::get(s.getContext()));
        return assignAccess(s, s.getTensor(), s.getSubscripts(), s.getMask(), s.getValue(), {});
      })
      .Case([&](AtomicOp a) {
        return assignAccess(a, a.getTensor(), a.getSubscripts(), a.getMask(), a.getValue(), {});
      })
      .Case<UnaryOp, BinaryOp, CompareOp, WhereOp, CastOp, ExpandOp, RandomOp>(
          [&](Operation *e) {
        assignElementwise(e);
        return success();
      })
      .Case([&](ScanOp s) {
        // The operand's layout, for the values and positions alike.
        setLayout(s.getResult(), layoutOf(s.getOperand()));
        if (Value idx = s.getIndices())
          setLayout(idx, layoutOf(s.getOperand()));
        return success();
      })
      .Case([&](AssociativeScanOp s) {
        // Every operand and result in the first operand's layout; the
        // combine function's rank-0 values held whole by every thread.
        BlockedLayoutAttr l = layoutOf(s.getOperands()[0]);
        for (unsigned i = 1; i < s->getNumOperands(); ++i)
          makeReadable(s, i, l, 0);
        for (Value r : s.getResults())
          setLayout(r, l);
        Block &body = s.getCombine().front();
        for (BlockArgument a : body.getArguments())
          setLayout(a, l.withDims({}));
        return assignBlock(body);
      })
      .Case([&](ReduceOp r) {
        assignReduce(r);
        return success();
      })
      .Case([&](SortOp s) {
        // The operand's layout, or (top-k: fewer elements along the dim) a
        // fresh one; the values and positions alike.
        BlockedLayoutAttr l = layoutOf(s.getOperand());
        if (s.getK())
          l = layoutFor(paddedShape(s.getValues().getType()));
        setLayout(s.getValues(), l);
        setLayout(s.getIndices(), l);
        return success();
      })
      .Case<UnsqueezeOp, SqueezeOp, TransposeOp, PermuteOp, ReshapeOp>(
          [&](Operation *s) { return assignShape(s); })
      .Case<DotOp, BmmOp, MatmulOp>([&](Operation *) {
        product({});
        return success();
      })
      .Case([&](AddmmOp m) {
        product(m.getAcc());
        return success();
      })
      .Case([&](BaddbmmOp m) {
        product(m.getAcc());
        return success();
      })
      .Case<FullOp, ArangeOp, SpanIndexOp>([&](Operation *o) {
        setLayout(o->getResult(0), layoutFor(paddedShape(o->getResult(0).getType())));
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        for (Type t : other->getResultTypes())
          if (isa<TileType>(t))
            return other->emitError() << "internal error: kite-assign-layouts has no "
                                         "layout rule for '"
                                      << other->getName() << "'";
        return success();
      });
}

struct KiteAssignLayoutsPass
    : public kite::impl::KiteAssignLayoutsBase<KiteAssignLayoutsPass> {
  using KiteAssignLayoutsBase::KiteAssignLayoutsBase;
  void runOnOperation() override {
    FailureOr<ConfiguredKernel> found = configuredKernel(getOperation());
    if (failed(found))
      return signalPassFailure();
    if (!found->config) {
      found->kernel.emitError() << "kite-assign-layouts needs a configured kernel "
                                   "(run kite-apply-config first)";
      return signalPassFailure();
    }
    if (failed(Assigner(found->kernel, *found->config, arch).run()))
      return signalPassFailure();
  }
};

} // namespace
