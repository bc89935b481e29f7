//===- Products.cpp - matrix products ---------------------------------------===//
//
// This file implements matrix products: a K loop that kite-matmul-mainloop
// marked, as one call of a kite_gemm.cuh main loop, and any other product on
// operands staged in shared memory (mma_tile on tensor cores, or a loop over
// K).
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

#include "lowering/Config.h"
#include "lowering/TypeInference.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

/// A K loop that kite-matmul-mainloop marked: one call of a kite_gemm.cuh
/// main loop leaves the tile's f32 sums in shared memory; the loop's result
/// is the initial accumulator plus them, in the accumulator's layout.
LogicalResult Emitter::emitMainloop(TileForOp loop, DictionaryAttr plan) {
  Block *body = loop.getBodyBlock();
  Operation *product = body->getTerminator()->getOperand(0).getDefiningOp();
  // kite-matmul-mainloop marked the loop: both operands are loads of
  // (specialized, so strided) kernel parameters by spans.
  ProductOperand a = *productOperand(product->getOperand(1));
  ProductOperand b = *productOperand(product->getOperand(2));
  auto aType = cast<TileType>(a.value.getType()), bType = cast<TileType>(b.value.getType());
  int64_t rank = aType.getRank();
  int64_t bytes = productElementBytes(loop); // 2 (16-bit floats) or 1 (8-bit)
  bool bKMajor = plan.get("b_k_major") != nullptr;
  int64_t BM = aType.getShape()[rank - 2], BK = aType.getShape()[rank - 1];
  int64_t BN = bType.getShape()[rank - 1];
  auto get = [&](StringRef key) { return cast<IntegerAttr>(plan.get(key)).getInt(); };
  // kite_gemm.cuh's GemmCopy of an operand.
  auto copy = [&](StringRef key) {
    StringRef how = cast<StringAttr>(plan.get(key)).getValue();
    return how == "async" ? "kCopyAsync" : how == "shifted" ? "kCopyShifted" : "kCopyElements";
  };
  StringRef kind = cast<StringAttr>(plan.get("kind")).getValue();
  bool tma = kind == "wgmma_tma";
  bool specialized = kind == "wgmma_ws" || tma;
  bool wgmma = kind == "wgmma" || specialized;
  int64_t stages = get("stages");
  int64_t warps = wgmma ? 4 * get("warpgroups") : get("warps_m") * get("warps_n");
  if (warps * 32 != numThreads)
    return loop.emitError() << "kite.mainloop's warps do not match num_warps";
  if (specialized)
    specializedLoop = true;
  ArrayRef<Value> sa = a.spans, sb = b.spans;
  TensorRef A = tensors[a.tensor], B = tensors[b.tensor];
  std::string lo = scalar(loop.getLowerBounds()[0]), hi = scalar(loop.getUpperBounds()[0]);
  // A split K loop: this program's share, kite_split's of split_k chunks of
  // whole K tiles (TMA boxes then never cross into another's share); a
  // share past K is empty (zero sums).
  int64_t split = plan.get("split_k") ? get("split_k") : 1;
  if (split > 1) {
    std::string chunk = fresh("kchunk"), klo = fresh("klo"), khi = fresh("khi");
    line(llvm::formatv("const i64 {0} = ((i64)({1}) - (i64)({2}) + {3} - 1) / {3} * {4};", chunk,
                       hi, lo, split * BK, BK));
    line(llvm::formatv("const i64 {0} = (i64)({1}) + kite_split * {2};", klo, lo, chunk));
    line(llvm::formatv("const i64 {0} = max({1}, min((i64)({2}), {1} + {3}));", khi, klo, hi,
                       chunk));
    lo = klo;
    hi = khi;
  }
  const SpanVars &m = spans[sa[rank - 2]], &n = spans[sb[rank - 1]];
  int64_t ldc = BN + 8; // kGemmPad in kite_gemm.cuh
  // wgmma's swizzled buffers start at a 1024-byte boundary.
  int64_t align = wgmma ? 1024 : 0;
  // The warp-specialized loops keep 2 mbarriers per stage after the buffers.
  int64_t barriers = specialized ? 16 * stages : 0;
  sharedBytes = std::max<int64_t>(
      {sharedBytes, align + stages * (BM * BK + BK * BN) * bytes + barriers, align + BM * ldc * 4});
  usesGemm = true;

  Tile init = tiles[loop.getInitArgs()[0]];
  Tile r = declare(init.elem, init.ctx, init.dims, "acc");
  lineDirective(loop);
  std::string smem = "kite_smem";
  if (wgmma) {
    smem = fresh("sg");
    line(llvm::formatv("unsigned char* {0} = kite_smem + ((1024 - (smem_addr(kite_smem) & "
                       "1023)) & 1023);",
                       smem));
  }
  std::string elem = cType(aType.getElementType()), elemB = cType(bType.getElementType());
  // Earlier code may still read shared memory (a product's staged operand).
  line(sync());
  if (tma) {
    // A tensor-map parameter per operand, which the runtime encodes at
    // launch, 128-byte swizzled: boxes of BM rows x 128 bytes of K (A),
    // 64 K rows x 64 columns (an MN-major B) or BN rows x 128 bytes of K
    // (a K-major one).
    std::string mapA = fresh("tma"), mapB = fresh("tma");
    CudaKernel::Param pa{CudaKernel::Param::Kind::ArgTensorMap, a.tensor.getArgNumber(), mapA,
                         {}, 3};
    CudaKernel::Param pb{CudaKernel::Param::Kind::ArgTensorMap, b.tensor.getArgNumber(), mapB,
                         {}, 3};
    // Rows TMA cannot take in place are read from a padded copy.
    pa.staged = plan.getAs<StringAttr>("copy_a").getValue() == "staged";
    pb.staged = plan.getAs<StringAttr>("copy_b").getValue() == "staged";
    if (rank == 3) {
      pa.box.push_back(1);
      pb.box.push_back(1);
    }
    pa.box.insert(pa.box.end(), {BM, BK});
    if (bKMajor)
      pb.box.insert(pb.box.end(), {BN, BK});
    else
      pb.box.insert(pb.box.end(), {64, 64});
    result.params.push_back(pa);
    result.params.push_back(pb);
    std::string batch = rank == 3 ? "(int)(" + spans[sa[0]].begin + ")" : "0";
    line(llvm::formatv("wgmma_tma_mainloop<{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}>({8}, &{9}, "
                       "&{10}, (int)({11}), (int)({12}), (int)({13}), {14}, (int)((i64)({15}) - "
                       "(i64)({13})));",
                       BM, BN, get("warpgroups") - 1, stages, rank, elem, elemB,
                       bKMajor ? "true" : "false", smem, mapA, mapB, m.begin, n.begin, lo, batch,
                       hi));
  } else {
    std::string offA = llvm::formatv("(i64)({0}) * {1} + (i64)({2}) * {3}", m.begin,
                                     A.stride(rank - 2), lo, A.stride(rank - 1));
    std::string offB = llvm::formatv("(i64)({0}) * {1} + (i64)({2}) * {3}", lo,
                                     B.stride(rank - 2), n.begin, B.stride(rank - 1));
    if (rank == 3) {
      const SpanVars &batch = spans[sa[0]];
      offA += llvm::formatv(" + (i64)({0}) * {1}", batch.begin, A.stride(0)).str();
      offB += llvm::formatv(" + (i64)({0}) * {1}", batch.begin, B.stride(0)).str();
    }
    std::string shape =
        specialized
            ? llvm::formatv("wgmma_ws_mainloop<{0}, {1}, {2}", BM, BN, get("warpgroups") - 1)
                  .str()
        : wgmma ? llvm::formatv("wgmma_mainloop<{0}, {1}, {2}", BM, BN, get("warpgroups")).str()
                : llvm::formatv("mma_mainloop<{0}, {1}, {2}, {3}, {4}", BM, BN, BK,
                                get("warps_m"), get("warps_n"))
                      .str();
    line(llvm::formatv("{0}, {1}, {2}, {3}, {4}>({5}, {6} + {7}, {8}, {9}, {10} + {11}, "
                       "{12}, {13}, (int)({14}), (int)({15}), (int)((i64)({16}) - "
                       "(i64)({17})));",
                       shape, stages, copy("copy_a"), copy("copy_b"), elem, smem, A.ptr, offA,
                       A.stride(rank - 2), A.stride(rank - 1), B.ptr, offB,
                       B.stride(rank - 2), B.stride(rank - 1), m.valid, n.valid, hi, lo));
  }
  if (split > 1) {
    // Each program's sums go to the workspace; the tile's last program
    // adds them all up in split order and goes on, the others stop here.
    CudaKernel::Param partials{CudaKernel::Param::Kind::Workspace, unsigned(BM * BN * 4),
                               "kite_partials"};
    CudaKernel::Param counters{CudaKernel::Param::Kind::Workspace, 4u, "kite_counters"};
    counters.zeroed = true;
    result.params.push_back(partials);
    result.params.push_back(counters);
    line(llvm::formatv("if (!split_k_reduce<{0}, {1}, {2}>(reinterpret_cast<float*>({3}), "
                       "reinterpret_cast<float*>(kite_partials), "
                       "reinterpret_cast<unsigned*>(kite_counters), kite_pid, kite_split, {4}))",
                       BM, BN, ldc, smem, split));
    line("  return;");
  }
  // The sums, at gemm_sum_index's swizzled places: 16 bytes at a time
  // where this thread's columns come in runs of 4 or more.
  std::string cs = fresh("sc");
  line(llvm::formatv("const float* {0} = reinterpret_cast<const float*>({1});", cs, smem));
  const Dim &col = r.dims[rank - 1];
  int64_t step = col.ctxDim >= 0 && r.ctx->vec[col.ctxDim] % 4 == 0 && col.regExtent % 4 == 0
                     ? 4
                     : 1;
  forEach(
      r,
      [&](ArrayRef<std::string> k) {
        std::string at = llvm::formatv("{0} + gemm_sum_index<{1}>({2}, {3})", cs, ldc,
                                       coord(r, rank - 2, k[rank - 2]),
                                       coord(r, rank - 1, k[rank - 1]));
        std::string i = flat(r, k);
        if (step == 1) {
          line(llvm::formatv("{0}[{1}] = {2}[{1}] + *({3});", r.name, i, init.name, at));
          return;
        }
        std::string s = fresh("s");
        line(llvm::formatv("const float4 {0} = *reinterpret_cast<const float4*>({1});", s, at));
        const char *lanes[] = {"x", "y", "z", "w"};
        for (int j = 0; j < 4; ++j)
          line(llvm::formatv("{0}[{1} + {2}] = {3}[{1} + {2}] + {4}.{5};", r.name, i, j,
                             init.name, s, lanes[j]));
      },
      step);
  line(sync());
  tiles[loop.getResult(0)] = r;
  return success();
}
namespace {
/// Contiguous elements a thread of `t` holds along dim `i`.
int64_t runOf(const Tile &t, int64_t i) {
  const Dim &d = t.dims[i];
  return d.ctxDim < 0 ? 1 : t.ctx->vec[d.ctxDim];
}
} // namespace

std::pair<LoadOp, ConvertLayoutOp> kite::emit::loadedLhs(Value lhs) {
  auto convert = lhs.getDefiningOp<ConvertLayoutOp>();
  auto load = (convert ? convert.getOperand() : lhs).getDefiningOp<LoadOp>();
  return {load, convert};
}

/// How a kite.mma product's right operand of layout `b` (rank `rank`) is
/// staged, on wgmma or mma.sync.
static StagedOperand stagedRightOperand(BlockedLayoutAttr b, int64_t rank, bool wgmma,
                                        Type elem) {
  SmallVector<int64_t> shape = b.tileShape();
  int64_t PK = shape[rank - 2], PN = shape[rank - 1], eb = elementBytes(elem);
  StagedOperand s;
  s.transposed = stagedAlongK(b, rank);
  if (wgmma) {
    s.swizzleRows = s.transposed ? PN : PK;
    s.bytes = PK * PN * eb;
    return s;
  }
  s.ld = s.transposed ? PK + 8 : PN + 8;
  s.bytes = llvm::alignTo((s.transposed ? PN : PK) * s.ld * eb, 16);
  return s;
}

/// wgmma's staging buffers start at a 1024-byte boundary (the swizzle's
/// period) past an aligned base: at most this many bytes above kite_smem.
constexpr int64_t kSwizzleAlign = 1024;

void Emitter::planStagingBuffers() {
  bool mainloop = false;
  DenseMap<Block *, SmallVector<Operation *>> byBlock;
  SmallVector<Operation *> loads;
  kernel.walk([&](Operation *op) {
    if (op->hasAttr("kite.mainloop"))
      mainloop = true;
    if (op->hasAttr(kMmaAttrName))
      byBlock[op->getBlock()].push_back(op);
    if (op->hasAttr(kPrefetchAttrName))
      loads.push_back(op);
  });
  if (mainloop)
    return;
  // The product each prefetched load feeds (through at most a transpose),
  // and the load's dims that are the staged rows and columns.
  for (Operation *load : loads) {
    TransposeOp t;
    Operation *user = stagedProduct(cast<LoadOp>(load), &t);
    if (!user)
      continue; // not (or no longer) a product's operand: loaded where it stands
    int64_t swapA = -1, swapB = -1;
    if (t) {
      int64_t r = cast<TileType>(t.getType()).getRank();
      swapA = t.getDim0() < 0 ? t.getDim0() + r : t.getDim0();
      swapB = t.getDim1() < 0 ? t.getDim1() + r : t.getDim1();
    }
    auto loadDim = [&](int64_t d) { return d == swapA ? swapB : d == swapB ? swapA : d; };
    Value rhs = user->getOperand(user->getNumOperands() - 1);
    auto type = cast<TileType>(rhs.getType());
    int64_t rank = type.getRank();
    Prefetch p;
    p.wgmma = onWgmma(user);
    p.staged = stagedRightOperand(cast<BlockedLayoutAttr>(type.getLayout()), rank, p.wgmma,
                                  type.getElementType());
    p.stages = cast<IntegerAttr>(load->getAttr(kPrefetchAttrName)).getInt();
    p.rowDim = loadDim(p.staged.transposed ? rank - 1 : rank - 2);
    p.colDim = loadDim(p.staged.transposed ? rank - 2 : rank - 1);
    prefetchLoops[load->getParentOp()].push_back(load);
    prefetches[load] = p;
    prefetchedOperand[user] = load;
  }
  for (Operation *load : loads)
    prefetches[load].count = prefetchLoops[load->getParentOp()].size();
  // Streamed left operands, in rings beside the right operands' (as many
  // stages as the config's prefetched loads).
  SmallVector<Operation *> streamed;
  kernel.walk([&](Operation *op) {
    if (planStreamedLhs(op, config.num_stages))
      streamed.push_back(streamedLhs[op]);
  });
  // Private buffers, below sharedBase: a ring for each prefetched operand,
  // a loop-invariant left operand read from shared memory (one buffer per
  // value and loop, staged before the loop), one buffer for each other
  // product that shares its block with another. Each buffer belongs to
  // the outermost nested loop around it, where it is live; sibling loops
  // (one key loop split by kite-split-masked-loops) run one after the
  // other and share the same space. wgmma's are offsets from kite_smem
  // rounded up to 1024 bytes: past the others, with room for the rounding.
  auto root = [](Operation *op) -> Operation * {
    Operation *found = nullptr;
    for (auto loop = dyn_cast<TileForOp>(op) ? cast<TileForOp>(op)
                                             : op->getParentOfType<TileForOp>();
         loop && !loop.isTopLevel(); loop = loop->getParentOfType<TileForOp>())
      found = loop;
    return found;
  };
  struct Buffer {
    Operation *root;
    int64_t bytes;
    bool wgmma;
    std::function<void(int64_t)> place;
  };
  SmallVector<Buffer> buffers;
  for (Operation *load : llvm::concat<Operation *const>(loads, streamed)) {
    Prefetch &p = prefetches[load];
    buffers.push_back({root(load->getParentOp()), p.stages * p.staged.bytes, p.wgmma,
                       [&p](int64_t offset) { p.offset = offset; }});
    usesGemm = true; // cp.async
  }
  kernel.walk([&](Operation *op) {
    if (!op->hasAttr(kSharedLhsAttrName))
      return;
    Value lhs = op->getOperand(op->getNumOperands() - 2);
    auto loop = op->getParentOfType<TileForOp>();
    auto key = std::make_pair(loop.getOperation(), lhs);
    if (sharedLhs.count(key))
      return;
    sharedLhs[key] = -1;
    auto type = cast<TileType>(lhs.getType());
    ArrayRef<int64_t> shape = type.getShape();
    int64_t bytes = paddedSize(shape[shape.size() - 2]) * paddedSize(shape.back()) *
                    elementBytes(type.getElementType());
    // A persistent program's producer may copy the next program's tile of
    // a left operand loaded in the top-level loop's body (planProducerLhs)
    // while this program reads its own: two stages.
    if (TmaCopy c; lhsBoxes(lhs, c)) {
      lhsCopyPlans[key] = c;
      bytes *= 2;
    }
    buffers.push_back({root(loop), bytes, true,
                       [this, key](int64_t offset) { sharedLhs[key] = offset; }});
    sharedLhsLoops[loop].push_back(lhs);
  });
  for (auto &[block, products] : byBlock) {
    if (products.size() < 2)
      continue;
    for (Operation *op : products) {
      if (prefetchedOperand.count(op))
        continue;
      Value rhs = op->getOperand(op->getNumOperands() - 1);
      auto type = cast<TileType>(rhs.getType());
      bool wgmma = onWgmma(op);
      StagedOperand staged = stagedRightOperand(cast<BlockedLayoutAttr>(type.getLayout()),
                                                type.getRank(), wgmma, type.getElementType());
      buffers.push_back({root(op), staged.bytes, wgmma,
                         [this, op](int64_t offset) { stagingBuffers[op] = offset; }});
    }
  }
  // Buffers outside any nested loop first (live throughout), then each
  // loop's from the same base.
  bool swizzled = false;
  auto allocate = [&](int64_t &at, const Buffer &b) {
    if (b.wgmma)
      at = llvm::alignTo(at, kSwizzleAlign);
    swizzled |= b.wgmma;
    b.place(at);
    at += b.bytes;
  };
  for (const Buffer &b : buffers)
    if (!b.root) {
      allocate(sharedBase, b);
      stagingOutsideLoops = true;
    }
  int64_t loopsBase = sharedBase;
  DenseMap<Operation *, int64_t> ends;
  for (const Buffer &b : buffers) {
    if (!b.root)
      continue;
    auto [it, inserted] = ends.try_emplace(b.root, loopsBase);
    allocate(it->second, b);
    sharedBase = std::max(sharedBase, it->second);
  }
  if (swizzled)
    sharedBase += kSwizzleAlign;
  sharedBytes = std::max(sharedBytes, sharedBase);
}

namespace {

/// True if `a` and `b` load the same tile: the same tensor, subscripts and
/// result type (attributes other than kite.reload alike).
bool sameLoad(LoadOp a, LoadOp b) {
  if (a->getOperands() != b->getOperands() || a.getType() != b.getType())
    return false;
  for (NamedAttribute attr : a->getAttrs())
    if (attr.getName() != "kite.reload" && b->getAttr(attr.getName()) != attr.getValue())
      return false;
  for (NamedAttribute attr : b->getAttrs())
    if (attr.getName() != "kite.reload" && a->getAttr(attr.getName()) != attr.getValue())
      return false;
  return true;
}
/// True if every use of `lhs` is as the shared left operand of a product
/// (kite.shared_lhs), in `loop` if given.
bool onlySharedLhs(Value lhs, Operation *loop = nullptr) {
  return llvm::all_of(lhs.getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    return user->hasAttr(kSharedLhsAttrName) &&
           use.getOperandNumber() == user->getNumOperands() - 2 &&
           (!loop || user->getParentOfType<TileForOp>().getOperation() == loop);
  });
}
} // namespace

void Emitter::planRestaging() {
  for (auto &[loop2, lhsList] : sharedLhsLoops) {
    // The loop before loop2 in its block that last used staging buffers:
    // the one whose left operand may still be in place.
    Operation *loop1 = nullptr;
    for (Operation *op = loop2->getPrevNode(); op && !loop1; op = op->getPrevNode())
      if (isa<TileForOp>(op) && ownsStaging(op))
        loop1 = op;
    if (!loop1 || !sharedLhsLoops.count(loop1))
      continue;
    for (Value lhs2 : lhsList) {
      auto [load2, convert2] = loadedLhs(lhs2);
      if (!load2 || !load2->hasAttr("kite.reload") ||
          (convert2 && !load2.getResult().hasOneUse()))
        continue;
      // Read only as the shared left operand of loop2's products.
      if (!onlySharedLhs(lhs2, loop2))
        continue;
      int64_t offset = sharedLhs.lookup({loop2, lhs2});
      for (Value lhs1 : sharedLhsLoops.lookup(loop1)) {
        auto [load1, convert1] = loadedLhs(lhs1);
        if (!load1 || sharedLhs.lookup({loop1, lhs1}) != offset || !sameLoad(load1, load2) ||
            !convert1 != !convert2 || lhs1.getType() != lhs2.getType())
          continue;
        stagedBefore.insert({loop2, lhs2});
        reloadTwins[load2] = load1;
        if (convert2)
          reloadTwins[convert2] = convert1;
        break;
      }
    }
  }
}

void Emitter::planDirectLhs() {
  for (auto &[loop, lhsList] : sharedLhsLoops) {
    for (Value lhs : lhsList) {
      if (stagedBefore.contains({loop, lhs}))
        continue;
      auto [load, convert] = loadedLhs(lhs);
      if (!load || load.getMask() || (convert && !load.getResult().hasOneUse()))
        continue;
      if (llvm::any_of(load.getSubscripts(), [](const Subscript &s) {
            return s.kind == Subscript::Kind::Gather;
          }))
        continue;
      // Read by nothing but products that take it from shared memory.
      bool onlyShared = onlySharedLhs(lhs);
      // 16-byte runs of its columns for each thread of the copy (see
      // emitDirectLhs).
      auto type = cast<TileType>(lhs.getType());
      auto [ctx, dims] = layoutOf(lhs);
      int64_t rank = type.getRank(), eb = elementBytes(type.getElementType());
      const Dim &cols = dims[rank - 1];
      if (!onlyShared || eb != 2 || cols.ctxDim < 0 ||
          cols.padded % (ctx->tpd[cols.ctxDim] * (16 / eb)) != 0)
        continue;
      directLhs.insert(load);
      if (convert)
        directLhs.insert(convert);
    }
  }
}

/// A shared left operand loaded from global memory, copied by cp.async
/// straight into the staging: each thread copies the rows whose fragments
/// it would have written (those of the operand's layout, the same register
/// index), in 16-byte runs of columns, its lanes along the columns side by
/// side (a copy of the layout with 8 elements a lane instead of 2), into
/// the row the instruction gives its warp. Rows past the tile's extent and
/// outside the tensor are zero-filled.
LogicalResult Emitter::emitDirectLhs(Value lhs, StringRef buf, int64_t PK, int64_t MT) {
  LoadOp load = loadedLhs(lhs).first;
  auto [ctx, dims] = layoutOf(lhs);
  int64_t rank = dims.size();
  Context copy = *ctx; // the same thread variables, 16 bytes a lane
  copy.vec[dims[rank - 1].ctxDim] = 16 / elementBytes(tensors[load.getTensor()].elem);
  accessLayout = std::make_pair(&copy, dims);
  CopyTarget target;
  target.buf = buf.str();
  target.rowDim = rank - 2;
  target.colDim = rank - 1;
  target.indexAt = [this, MT, PK, rank](const Tile &t, ArrayRef<std::string> k) {
    return llvm::formatv("((int)threadIdx.x / 128 * {0} + ({1}) / 2) * {2} + "
                         "sw128_index<64>((int)threadIdx.x / 32 % 4 * 16 + (int)threadIdx.x % 32 "
                         "/ 4 + ({1}) % 2 * 8, {3})",
                         MT, k[rank - 2], 64 * PK, coord(t, rank - 1, k[rank - 1]))
        .str();
  };
  copyTarget = target;
  LogicalResult r = emitAccess(load, load.getTensor(), load.getSubscripts(), load.getMask(), {},
                               load.getResult(), std::nullopt);
  copyTarget.reset();
  accessLayout.reset();
  if (failed(r))
    return failure();
  line("cp_async_commit();");
  line("cp_async_wait<0>();");
  return success();
}

std::string Emitter::sharedLhsBuffer(int64_t offset, StringRef type, int64_t eb) {
  auto it = lhsRings.find(offset);
  if (it == lhsRings.end() || rings[it->second].stages == 1)
    return sharedAt(offset, true, type);
  // The program's stage: its use is given back at the program's end
  // (planProducerLhs).
  const Ring &r = rings[it->second];
  return llvm::formatv("({0} + ({1} % {2}) * {3})", sharedAt(offset, true, type), r.consumed,
                       r.stages, r.stageBytes / eb)
      .str();
}

std::string Emitter::sharedAt(int64_t offset, bool aligned, StringRef type) {
  if (!aligned)
    return llvm::formatv("reinterpret_cast<{0}*>(kite_smem + {1})", type, offset);
  return llvm::formatv("reinterpret_cast<{0}*>(kite_smem + ((1024 - (smem_addr(kite_smem) & "
                       "1023)) & 1023) + {1})",
                       type, offset);
}

LogicalResult Emitter::emitPrefetchedLoad(LoadOp load) {
  const TensorRef &ref = tensors[load.getTensor()];
  SmallVector<int64_t> shape;
  SmallVector<std::string> extents;
  if (failed(subscriptShape(load, load.getTensor(), load.getSubscripts(), ref.elem, shape,
                            extents)))
    return failure();
  Tile t;
  auto [ctx, dims] = layoutOf(load.getResult());
  t.ctx = ctx;
  t.dims = dims;
  t.elem = ref.elem;
  t.regCount = 0;
  for (size_t i = 0; i < t.dims.size(); ++i)
    t.dims[i].extent = extents[i];
  tiles[load.getResult()] = t;
  return success();
}

LogicalResult Emitter::emitPrefetchCopy(Operation *load, StringRef iteration, StringRef slot) {
  auto l = cast<LoadOp>(load);
  const Prefetch &p = prefetches[load];
  auto loop = cast<TileForOp>(load->getParentOp());
  const LoopVars &lv = loopVars[loop];
  Value span = loop.getSpans()[0];
  SpanVars saved = spans[span];
  std::string buf = fresh("pb");
  line("{");
  ++indent;
  defineSpan(span, llvm::formatv("(i64)({0}) + ({1}) * {2}", lv.lower, iteration, lv.blockSize).str(),
             lv.upper, lv.blockSize, lv.lowerConst, lv.upperConst, iteration, lv.count);
  std::string elem = cType(tensors[l.getTensor()].elem);
  line(llvm::formatv("{0}* {1} = {2} + ({3}) * {4};", elem, buf,
                     sharedAt(p.offset, p.wgmma, elem), slot,
                     p.staged.bytes / elementBytes(tensors[l.getTensor()].elem)));
  copyTarget = CopyTarget{buf, p.rowDim, p.colDim, p.staged.ld, p.staged.swizzleRows};
  LogicalResult r = emitAccess(l, l.getTensor(), l.getSubscripts(), l.getMask(), {},
                               l.getResult(), std::nullopt);
  copyTarget.reset();
  spans[span] = saved;
  --indent;
  line("}");
  return r;
}

LogicalResult Emitter::emitPrefetchPrologue(ArrayRef<Operation *> loads, const LoopVars &lv,
                                            Operation *behind) {
  if (producer)
    return success(); // the producer's copies
  // S - 1 tiles ahead; a ring of one buffer starts with tile 0 in it.
  int64_t ahead = std::max<int64_t>(prefetches[loads.front()].stages - 1, 1);
  for (int64_t d = 0; d < ahead; ++d) {
    for (Operation *load : loads) {
      int64_t tile = load == behind ? d - 1 : d;
      if (tile >= 0) {
        line(llvm::formatv("if ({0} < {1}) {{", tile, lv.count));
        ++indent;
        if (failed(emitPrefetchCopy(load, std::to_string(tile), std::to_string(tile))))
          return failure();
        --indent;
        line("}");
      }
      line("cp_async_commit();");
    }
  }
  return success();
}

FailureOr<std::string> Emitter::awaitPrefetched(Operation *product, Type elem) {
  if (producer)
    return awaitRing(product, elem);
  Operation *load = prefetchedOperand[product];
  const Prefetch &p = prefetches[load];
  const LoopVars &lv = loopVars[load->getParentOp()];
  int64_t ahead = p.stages - 1;
  // Copies committed after this iteration's: the loop's other loads of
  // this iteration and of the next `ahead - 1`, and the earlier ones of
  // iteration + ahead. With one buffer, each other load's one copy in
  // flight (this iteration's, or the next one's refilled after its product).
  line(llvm::formatv("cp_async_wait<{0}>();", p.count * std::max<int64_t>(ahead, 1) - 1));
  if (p.wgmma)
    line("fence_proxy_async();");
  // Every thread's copies have landed, and every thread has finished the
  // product that last read the slot the next copy fills.
  line(sync());
  std::string bs = fresh("sb"), type = cType(elem);
  // A late stage's iteration is -1 before the first one.
  std::string slot = overlap && overlap->late == product
                         ? llvm::formatv("({0} + {1}) % {1}", lv.iv, p.stages).str()
                         : llvm::formatv("{0} % {1}", lv.iv, p.stages).str();
  line(llvm::formatv("{0}* {1} = {2} + (int)({3}) * {4};", type, bs,
                     sharedAt(p.offset, p.wgmma, type), slot,
                     p.staged.bytes / elementBytes(elem)));
  // One buffer: refilled after the product (refillPrefetched).
  if (p.stages == 1)
    return bs;
  std::string next = llvm::formatv("{0} + {1}", lv.iv, ahead);
  line(llvm::formatv("if ({0} < {1}) {{", next, lv.count));
  ++indent;
  if (failed(emitPrefetchCopy(load, next, llvm::formatv("({0}) % {1}", next, p.stages).str())))
    return failure();
  --indent;
  line("}");
  line("cp_async_commit();");
  return bs;
}

std::string Emitter::wgmmaSumAt(StringRef sums, ArrayRef<std::string> k, int64_t rank) {
  return llvm::formatv("{0}[({1}) / 2][4 * (({2}) / 2) + 2 * (({1}) % 2) + ({2}) % 2]", sums,
                       k[rank - 2], k[rank - 1])
      .str();
}

Operation *Emitter::accumulatingProduct(TileForOp loop, unsigned &argIndex) {
  if (!producer || overlap || loop.isTopLevel() || loop.getNumDims() != 1)
    return nullptr;
  Operation *yield = loop.getBodyBlock()->getTerminator();
  for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
    if (!arg.hasOneUse())
      continue;
    OpOperand &use = *arg.use_begin();
    Operation *p = use.getOwner();
    if (p->getBlock() != loop.getBodyBlock() || use.getOperandNumber() != 0 ||
        p->getNumOperands() != 3 || !p->hasAttr(kMmaAttrName) || !onWgmma(p))
      continue;
    Value r = p->getResult(0);
    if (!r.hasOneUse() || r.use_begin()->getOwner() != yield ||
        r.use_begin()->getOperandNumber() != i || arg.getType() != r.getType() ||
        !cast<TileType>(r.getType()).getElementType().isF32())
      continue;
    // Both operands stay in shared memory until the wait: the right one in
    // a producer's ring, the left one streamed or staged before the loop.
    Operation *rhsLoad = prefetchedOperand.lookup(p);
    if (!rhsLoad || !tmaCopies.count(rhsLoad))
      continue; // (staged by the computing threads, behind barriers)
    if (!streamedLhs.count(p) && !sharedLhs.count({loop.getOperation(), p->getOperand(1)}))
      continue;
    argIndex = i;
    return p;
  }
  return nullptr;
}

LogicalResult Emitter::refillPrefetched(Operation *product) {
  if (carriedProduct && carriedProduct->op == product)
    return success(); // given back a wait later (emitWgmmaProduct)
  auto it = prefetchedOperand.find(product);
  if ((it != prefetchedOperand.end() || streamedLhs.count(product)) && producer) {
    // An overlapped loop's late product gives its stage back after its
    // wait, at the iteration's end (its drain).
    if (!(overlap && overlap->late == product))
      releaseRing(product);
    return success();
  }
  if (it == prefetchedOperand.end() || prefetches[it->second].stages != 1)
    return success();
  Operation *load = it->second;
  const LoopVars &lv = loopVars[load->getParentOp()];
  // Every thread is done with the product (its wgmma has been waited for)
  // before any copy overwrites the buffer it read. The commit comes
  // whether or not there is a next tile: awaitPrefetched's count assumes
  // one group per load and iteration.
  line(sync());
  std::string next = llvm::formatv("{0} + 1", lv.iv);
  line(llvm::formatv("if ({0} < {1}) {{", next, lv.count));
  ++indent;
  if (failed(emitPrefetchCopy(load, next, "0")))
    return failure();
  --indent;
  line("}");
  line("cp_async_commit();");
  return success();
}

std::string kite::emit::stagedIndex(int64_t ld, int64_t swizzleRows, StringRef row,
                                    StringRef col) {
  if (swizzleRows)
    return llvm::formatv("sw128_index<{0}>({1}, {2})", swizzleRows, row, col);
  return llvm::formatv("({0}) * {1} + {2}", row, ld, col);
}

/// Stages matrix-product operand `t` into `buf`: on tensor cores (`mma`) as
/// rows of dim `rowDim`, `ld` elements apart, each thread's run along
/// `colDim` as one vector of up to 16 bytes (rows start 16-byte aligned; a
/// run starts at a multiple of its length), K lanes (dim `kDim`) past the
/// valid extent as zeros; on CUDA cores row-major over the padded shape.
void Emitter::stageOperand(const Tile &t, const std::string &buf, int64_t kDim, int64_t rowDim,
                           int64_t colDim, int64_t ld, bool mma, int64_t swizzleRows) {
  std::string own = owner(t);
  int64_t width = 1;
  if (mma) {
    width = std::min<int64_t>(runOf(t, colDim), 8);
    while (width > 1 && t.dims[colDim].regExtent % width != 0)
      width /= 2;
  }
  auto element = [&](ArrayRef<std::string> k) {
    std::string v = llvm::formatv("{0}[{1}]", t.name, flat(t, k));
    if (mma && !t.dims[kDim].extent.empty())
      v = llvm::formatv("({0} < {1}) ? {2} : cvt<{3}>(0)", coord(t, kDim, k[kDim]),
                        t.dims[kDim].extent, v, cType(t.elem));
    return v;
  };
  if (mma) {
    forEach(
        t,
        [&](ArrayRef<std::string> k) {
          std::string idx = stagedIndex(ld, swizzleRows, coord(t, rowDim, k[rowDim]),
                                        coord(t, colDim, k[colDim]));
          if (width == 1) {
            line(llvm::formatv("{0}{1}[{2}] = {3};", own.empty() ? "" : "if (" + own + ") ",
                               buf, idx, element(k)));
            return;
          }
          SmallVector<std::string> ki(k.begin(), k.end()), elems;
          for (int64_t e = 0; e < width; ++e) {
            ki[colDim] = plus(k[colDim], e);
            elems.push_back(element(ki));
          }
          line(llvm::formatv("{0}store_vec<{1}>(&{2}[{3}], Vec<{4}, {1}>{{{{{5}}});",
                             own.empty() ? "" : "if (" + own + ") ", width, buf, idx,
                             cType(t.elem), llvm::join(elems, ", ")));
        },
        width, colDim);
    return;
  }
  forEach(t, [&](ArrayRef<std::string> k) {
    std::string idx = "0";
    int64_t stride = 1;
    for (int64_t i = t.rank() - 1; i >= 0; --i) {
      idx = llvm::formatv("{0} + {1} * {2}", idx, coord(t, i, k[i]), stride);
      stride *= t.dims[i].padded;
    }
    line(llvm::formatv("{0}{1}[{2}] = {3};", own.empty() ? "" : "if (" + own + ") ", buf,
                       idx, element(k)));
  });
}

void Emitter::stageRightOperand(const Tile &b, const std::string &buf, int64_t rank,
                                bool transposed, int64_t ld, bool mma, int64_t swizzleRows) {
  if (transposed)
    stageOperand(b, buf, rank - 2, rank - 1, rank - 2, ld, mma, swizzleRows);
  else
    stageOperand(b, buf, rank - 2, rank - 2, rank - 1, ld, mma, swizzleRows);
}

Tile Emitter::declareProduct(Operation *op, Value accValue, const Tile &a, const Tile &b,
                             int64_t rank, std::optional<Tile> &acc) {
  Type outElem = cast<TileType>(op->getResult(0).getType()).getElementType();
  auto [ctx, dims] = layoutOf(op->getResult(0));
  if (accValue) {
    acc = tiles[accValue];
    for (auto [d, from] : llvm::zip(dims, acc->dims))
      d.extent = from.extent;
  } else {
    dims[rank - 2].extent = a.dims[rank - 2].extent;
    dims[rank - 1].extent = b.dims[rank - 1].extent;
  }
  return declare(outElem, ctx, dims);
}

/// A product kite-assign-layouts put on the tensor cores (kite.mma): its
/// left operand and result lie in the tensor cores' layout, so the left
/// operand's registers are the instruction's A fragments and the f32 sums
/// stay in the result's registers; the right operand is staged in shared
/// memory and read as B fragments by ldmatrix. Each thread's rows 2i and
/// 2i + 1 are the two 8-row halves of its warp's i-th 16-row tile.
LogicalResult Emitter::emitTensorCoreProduct(Operation *op, Value accValue, Value lhs,
                                             Value rhs, int64_t rank) {
  FailureOr<RegisterProduct> p = beginRegisterProduct(op, accValue, lhs, rhs, rank, false);
  if (failed(p))
    return failure();
  auto &[outElem, a, b, r, acc, PK, PN, RM] = *p;
  const Dim &rows = r.dims[rank - 2];
  int64_t NT = PN / 8;
  StagedOperand staged = stagedRightOperand(layoutAttr(b), rank, false, b.elem);
  std::string bs = fresh("sb"), sums = fresh("c"), elem = cType(a.elem);
  line("{");
  ++indent;
  if (failed(stageProductOperand(op, b, rank, staged, false, bs)))
    return failure();
  // The f32 sums, at the result's register indices, from the accumulator.
  line(llvm::formatv("float {0}[{1}];", sums, r.regCount));
  forEach(r, [&](ArrayRef<std::string> k) {
    line(llvm::formatv("{0}[{1}] = {2};", sums, flat(r, k),
                       acc ? "cvt<float>(" + at(*acc, k, 0) + ")" : std::string("0.f")));
  });
  auto aElem = [&](StringRef row, StringRef col) {
    return leftOperandElement(a, rank, row, col);
  };
  std::string ks = fresh("ks"), mi = fresh("mi"), nj = fresh("nj"), af = fresh("af");
  line("#pragma unroll");
  line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", ks, PK / 16));
  ++indent;
  line(llvm::formatv("unsigned {0}[{1}][4];", af, RM / 2));
  line("#pragma unroll");
  line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", mi, RM / 2));
  ++indent;
  // a0a1: row g, K 2t..; a2a3: row g + 8; a4a5, a6a7: the same at K + 8.
  for (int f = 0; f < 4; ++f) {
    std::string row = llvm::formatv("2 * {0} + {1}", mi, f % 2);
    std::string col = llvm::formatv("4 * {0} + {1}", ks, (f / 2) * 2);
    line(llvm::formatv("{0}[{1}][{2}] = mma_pack({3}, {4});", af, mi, f, aElem(row, col),
                       aElem(row, col + " + 1")));
  }
  --indent;
  line("}");
  int64_t step = NT % 2 == 0 ? 2 : 1; // n-tiles per ldmatrix (x4 or x2)
  line("#pragma unroll");
  line(llvm::formatv("for (int {0} = 0; {0} < {1}; {0} += {2}) {{", nj, NT, step));
  ++indent;
  std::string bf = fresh("bf");
  line(llvm::formatv("unsigned {0}[{1}];", bf, 2 * step));
  line(llvm::formatv("mma_b_x{0}<{1}, {2}>({3}, {4}, {5} * 16, {6} * 8);", 2 * step, staged.ld,
                     staged.transposed ? "true" : "false", bf, bs, ks, nj));
  line("#pragma unroll");
  line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", mi, RM / 2));
  ++indent;
  int64_t rowStride = rows.regStride;
  for (int64_t j = 0; j < step; ++j) {
    // c0c1: row g, columns 2t, 2t + 1 of n-tile nj + j; c2c3: row g + 8.
    std::string c0 = llvm::formatv("(2 * {0}) * {1} + 2 * ({2} + {3})", mi, rowStride, nj, j);
    std::string c1 = llvm::formatv("(2 * {0} + 1) * {1} + 2 * ({2} + {3})", mi, rowStride, nj,
                                   j);
    std::string d = fresh("d");
    line(llvm::formatv("float {0}[4] = {{{1}[{2}], {1}[{2} + 1], {1}[{3}], {1}[{3} + 1]};", d,
                       sums, c0, c1));
    line(llvm::formatv("MmaInstr<{0}>::run({1}, {2}[{3}], {{{4}[{5}], {4}[{6}]});", elem, d,
                       af, mi, bf, 2 * j, 2 * j + 1));
    line(llvm::formatv("{0}[{1}] = {2}[0]; {0}[{1} + 1] = {2}[1]; {0}[{3}] = {2}[2]; "
                       "{0}[{3} + 1] = {2}[3];",
                       sums, c0, d, c1));
  }
  --indent;
  line("}");
  --indent;
  line("}");
  --indent;
  line("}");
  forEach(r, [&](ArrayRef<std::string> k) {
    line(llvm::formatv("{0}[{1}] = cvt<{2}>({3}[{1}]);", r.name, flat(r, k), cType(outElem),
                       sums));
  });
  --indent;
  line("}");
  tiles[op->getResult(0)] = r;
  return success();
}

std::string Emitter::leftOperandElement(const Tile &a, int64_t rank, StringRef row,
                                        StringRef col) {
  const Dim &ak = a.dims[rank - 1];
  std::string v = llvm::formatv("{0}[({1}) * {2} + {3}]", a.name, row,
                                a.dims[rank - 2].regStride, col);
  if (!ak.extent.empty())
    v = llvm::formatv("(({0}) < {1} ? {2} : cvt<{3}>(0))", coord(a, rank - 1, col), ak.extent,
                      v, cType(a.elem));
  return v;
}

LogicalResult Emitter::stageProductOperand(Operation *op, const Tile &b, int64_t rank,
                                           const StagedOperand &staged, bool wgmma,
                                           std::string &bs) {
  if (overlap && overlap->late == op && !overlap->lateSlot.empty()) {
    bs = overlap->lateSlot;
    return success();
  }
  if (prefetchedOperand.count(op)) {
    FailureOr<std::string> slot = awaitPrefetched(op, b.elem);
    if (failed(slot))
      return failure();
    bs = *slot;
    return success();
  }
  // A product with a buffer of its own (planStagingBuffers) shares its
  // block with another one, whose barrier between its staging and its
  // reads lies between each read of this buffer and its next staging: no
  // barrier needed before staging. Otherwise the buffer is the shared one.
  auto own = stagingBuffers.find(op);
  bool shared = own == stagingBuffers.end();
  int64_t offset = !shared ? own->second
                   : wgmma ? (int64_t)llvm::alignTo(sharedBase, kSwizzleAlign)
                           : sharedBase;
  sharedBytes = std::max<int64_t>(sharedBytes,
                                  offset + staged.bytes + (wgmma ? kSwizzleAlign : 0));
  std::string type = cType(b.elem);
  line(llvm::formatv("{0}* {1} = {2};", type, bs, sharedAt(offset, wgmma, type)));
  if (shared)
    line(sync());
  stageRightOperand(b, bs, rank, staged.transposed, staged.ld, true, staged.swizzleRows);
  // wgmma reads the operand, written through the generic proxy, through
  // the async one.
  if (wgmma)
    line("fence_proxy_async();");
  line(sync());
  return success();
}

FailureOr<RegisterProduct> Emitter::beginRegisterProduct(Operation *op, Value accValue,
                                                         Value lhs, Value rhs, int64_t rank,
                                                         bool wgmma) {
  RegisterProduct p;
  p.outElem = cast<TileType>(op->getResult(0).getType()).getElementType();
  p.a = tiles[lhs];
  p.b = tiles[rhs];
  p.r = declareProduct(op, accValue, p.a, p.b, rank, p.acc);
  if (p.acc)
    p.acc = readableAt(*p.acc, p.r, 0);
  const Dim &ak = p.a.dims[rank - 1];
  p.PK = ak.padded;
  p.PN = p.b.dims[rank - 1].padded;
  p.RM = p.r.dims[rank - 2].regExtent;
  bool fits = p.RM % 2 == 0 && p.a.dims[rank - 2].regExtent == p.RM &&
              ak.regExtent * 4 == p.PK && p.r.dims[rank - 1].regExtent * 4 == p.PN &&
              p.PK % 16 == 0 && p.PN % 8 == 0;
  if (wgmma)
    fits &= p.PN <= 256 && numThreads % 128 == 0;
  if (!fits)
    return op->emitError() << "internal error: a " << (wgmma ? "wgmma" : "kite.mma")
                           << " product's operands are not in the tensor cores' layout";
  return p;
}

void Emitter::forEachLeftFragment(const Tile &a, int64_t rank, int64_t PK, int64_t MT,
                                  StringRef ks, StringRef mi,
                                  llvm::function_ref<void(int, StringRef)> body) {
  line("#pragma unroll");
  line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", ks, PK / 16));
  ++indent;
  line("#pragma unroll");
  line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", mi, MT));
  ++indent;
  for (int f = 0; f < 4; ++f) {
    std::string row = llvm::formatv("2 * {0} + {1}", mi, f % 2);
    std::string col = llvm::formatv("4 * {0} + {1}", ks, (f / 2) * 2);
    body(f, llvm::formatv("mma_pack({0}, {1})", leftOperandElement(a, rank, row, col),
                          leftOperandElement(a, rank, row, col + " + 1"))
                .str());
  }
  --indent;
  line("}");
  --indent;
  line("}");
}

/// The shared A buffer holds, for each warpgroup w and each of its MT m64
/// blocks i, block w * MT + i: 64 rows of PK elements in column blocks of
/// 64 swizzled 128-byte rows (64 elements of 16 bits, 128 of 8), row
/// 16 j + r holding warp j's A fragment row r (the rows the instruction
/// gives warp j).
std::string Emitter::sharedLhsDescriptor(StringRef buffer, int64_t PK, int64_t MT,
                                         StringRef mi, StringRef ks, int64_t eb) {
  // A K step is 32 bytes of a 128-byte swizzle row: a 64-row column block
  // holds 4 of them.
  return llvm::formatv("wgmma_desc({0} + ((int)threadIdx.x / 128 * {1} + {2}) * {3} + ({4} / 4) "
                       "* {5} + ({4} % 4) * {6}, 16, 1024)",
                       buffer, MT, mi, 64 * PK, ks, 64 * 128 / eb, 32 / eb)
      .str();
}

LogicalResult Emitter::emitSharedLhs(Operation *loop) {
  for (Value lhs : sharedLhsLoops.lookup(loop)) {
    if (stagedBefore.contains({loop, lhs})) {
      line("// the shared left operand: as staged before the loop above");
      continue;
    }
    auto it = tiles.find(lhs);
    if (it == tiles.end())
      return loop->emitError() << "internal error: a shared wgmma operand has no tile";
    const Tile &a = it->second;
    int64_t rank = a.rank();
    int64_t PK = a.dims[rank - 1].padded, MT = a.dims[rank - 2].regExtent / 2;
    std::string elem = cType(a.elem), buf = fresh("sa"), ks = fresh("ks"), mi = fresh("mi");
    line("{");
    ++indent;
    LoadOp load = loadedLhs(lhs).first;
    if (load && tmaCopies.count(load)) {
      // The producer's copy (planProducerLhs): wait for it to land.
      if (failed(awaitLhsRing(load, sharedLhs[{loop, lhs}])))
        return failure();
      --indent;
      line("}");
      continue;
    }
    line(llvm::formatv("{0}* {1} = {2};", elem, buf, sharedAt(sharedLhs[{loop, lhs}], true, elem)));
    if (load && directLhs.contains(load)) {
      // Read by the async proxy, after every thread's copies landed.
      if (failed(emitDirectLhs(lhs, buf, PK, MT)))
        return failure();
      line("fence_proxy_async();");
      line(sync());
      --indent;
      line("}");
      continue;
    }
    // Fragment f of a thread: row g + 8 (f % 2), columns 2 c + 8 (f / 2)
    // and the next one, of its warp's 16 rows and the K step's 16 columns.
    std::string base = llvm::formatv("((int)threadIdx.x / 128 * {0} + {1}) * {2}", MT, mi, 64 * PK);
    forEachLeftFragment(a, rank, PK, MT, ks, mi, [&](int f, StringRef packed) {
      std::string row = llvm::formatv("(int)threadIdx.x / 32 % 4 * 16 + (int)threadIdx.x % 32 / 4 + {0}",
                                      8 * (f % 2));
      std::string col = llvm::formatv("{0} * 16 + (int)threadIdx.x % 4 * 2 + {1}", ks, 8 * (f / 2));
      line(llvm::formatv("*reinterpret_cast<unsigned*>(&{0}[{1} + sw128_index<64>({2}, {3})]) = {4};",
                         buf, base, row, col, packed));
    });
    // Read by the async proxy, after a barrier.
    line("fence_proxy_async();");
    line(sync());
    --indent;
    line("}");
  }
  return success();
}

/// A kite.mma product on wgmma: as on mma.sync (emitTensorCoreProduct), the
/// left operand's registers are the A fragments and the sums stay in the
/// result's registers, now m64nNk16 a warpgroup (each warp's 16 rows of
/// the instruction are its 16-row tile); the right operand is staged in the
/// 128-byte-swizzled layout and read by descriptor: K-major when staged
/// along K, else MN-major (transposed by the instruction). The sums of the
/// i-th 16-row tile are the i-th m64 block's accumulator, in its order:
/// per 8 columns, row g's pair then row g + 8's.
LogicalResult Emitter::emitWgmmaProduct(Operation *op, Value accValue, Value lhs, Value rhs,
                                        int64_t rank) {
  FailureOr<RegisterProduct> p = beginRegisterProduct(op, accValue, lhs, rhs, rank, true);
  if (failed(p))
    return failure();
  auto &[outElem, a, b, r, acc, PK, PN, RM] = *p;
  int64_t MT = RM / 2;
  usesGemm = true;
  StagedOperand staged = stagedRightOperand(layoutAttr(b), rank, true, b.elem);
  // A K step is 32 bytes: k16 of 16-bit operands, k32 of 8-bit ones (both
  // K-major, A from shared memory: 8-bit A fragments are never in
  // registers).
  int64_t eb = elementBytes(a.elem), kStep = 32 / eb;
  bool eightBit = eb == 1;
  std::string bs = fresh("sb"), sums = fresh("c"), af = fresh("af"), elem = cType(a.elem);
  std::string ks = fresh("ks"), mi = fresh("mi");
  // A late product (kite-overlap-products) accumulates into registers
  // declared before its loop, and is waited for at the iteration's end.
  bool late = overlap && overlap->late == op;
  if (late) {
    sums = overlap->sums;
    af = overlap->af;
  }
  line("{");
  ++indent;
  if (failed(stageProductOperand(op, b, rank, staged, true, bs)))
    return failure();
  // The sums, in each m64 block's accumulator order; an accumulating
  // loop's live across its iterations, with the previous one's wgmmas
  // still adding into them.
  bool carried = carriedProduct && carriedProduct->op == op;
  if (carried)
    sums = carriedProduct->sums;
  else if (!late)
    line(llvm::formatv("float {0}[{1}][{2}];", sums, MT, PN / 2));
  auto sumAt = [&](ArrayRef<std::string> k) { return wgmmaSumAt(sums, k, rank); };
  if (!carried)
    forEach(r, [&](ArrayRef<std::string> k) {
      line(llvm::formatv("{0} = {1};", sumAt(k),
                         acc ? "cvt<float>(" + at(*acc, k, 0) + ")" : std::string("0.f")));
    });
  // A from shared memory (staged before the loop), else every A fragment
  // is written before the fence that orders register writes before the
  // wgmmas that read them.
  auto lhsBuffer = sharedLhs.find({op->getParentOfType<TileForOp>().getOperation(), lhs});
  bool streamed = streamedLhs.count(op);
  bool sharedA = lhsBuffer != sharedLhs.end() || streamed;
  if (eightBit && (!sharedA || !staged.transposed))
    return op->emitError() << "an 8-bit product on wgmma needs its left operand streamed into "
                              "shared memory by a producer (warp_specialize, indexing \"tma\") "
                              "and its right operand K-major";
  std::string as;
  if (streamed) {
    FailureOr<std::string> stage = awaitStreamedLhs(op, elem);
    if (failed(stage))
      return failure();
    as = *stage;
  } else if (sharedA) {
    as = fresh("sa");
    line(llvm::formatv("const {0}* {1} = {2};", elem, as,
                       sharedLhsBuffer(lhsBuffer->second, elem, eb)));
  } else {
    if (!late)
      line(llvm::formatv("unsigned {0}[{1}][{2}][4];", af, PK / 16, MT));
    forEachLeftFragment(a, rank, PK, MT, ks, mi, [&](int f, StringRef packed) {
      line(llvm::formatv("{0}[{1}][{2}][{3}] = {4};", af, ks, mi, f, packed));
    });
  }
  // Sums and fragments are written before the fence (the compiler would
  // otherwise be free to compute them past it), and read after the wait.
  line(llvm::formatv("wgmma_touch_sums<{0}, {1}>({2});", MT, PN, sums));
  if (!sharedA)
    line(llvm::formatv("wgmma_touch_a({0});", af));
  // pingpong: a warpgroup's turn begins before an iteration's first
  // issue (the early product, or the last tile's late one alone) and is
  // passed on after its last (the late product, or the first tile's early
  // one alone).
  bool early = overlap && overlap->early == op;
  if (overlap && overlap->turns && (early || overlap->lateAlone))
    line(llvm::formatv("kite_turn_wait<{0}>();", overlap->turns));
  line("wgmma_fence();");
  line("#pragma unroll");
  line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", ks, PK / kStep));
  ++indent;
  // K-major: k steps of 32 bytes along the swizzled rows, 128-byte column
  // blocks of PN rows; MN-major: 16 rows of 128 bytes a step, column blocks
  // PK rows apart (the leading byte offset).
  std::string desc =
      staged.transposed
          ? llvm::formatv("wgmma_desc({0} + ({1} / 4) * {2} + ({1} % 4) * {3}, 16, 1024)", bs,
                          ks, PN * 128 / eb, kStep)
                .str()
          : llvm::formatv("wgmma_desc({0} + {1} * 1024, {2}, 1024)", bs, ks, PK * 128).str();
  std::string d = fresh("db");
  line(llvm::formatv("const unsigned long long {0} = {1};", d, desc));
  line("#pragma unroll");
  line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0})", mi, MT));
  if (eightBit)
    line(llvm::formatv("  wgmma_ss<{0}, true, {1}, {2}>({3}[{4}], {5}, {6});", PN, elem,
                       cType(b.elem), sums, mi, sharedLhsDescriptor(as, PK, MT, mi, ks, eb), d));
  else if (sharedA)
    line(llvm::formatv("  WgmmaOp<{0}, {1}>::run<{2}>({3}[{4}], {5}, {6});", PN, elem,
                       staged.transposed ? 0 : 1, sums, mi,
                       sharedLhsDescriptor(as, PK, MT, mi, ks, eb), d));
  else
    line(llvm::formatv("  WgmmaRegA<{0}, {1}>::run<{2}>({3}[{4}], {5}[{6}][{4}], {7});", PN,
                       elem, staged.transposed ? 0 : 1, sums, mi, af, ks, d));
  --indent;
  line("}");
  line("wgmma_commit();");
  if (overlap && overlap->turns && (late || (early && !overlap->withLate)))
    line(llvm::formatv("kite_turn_pass<{0}>();", overlap->turns));
  // An overlapped loop's late stage is issued here, after its first
  // product, which is then waited for alone.
  if (early) {
    overlap->issueAt = body.size();
    overlap->issueIndent = indent;
  }
  if (carried) {
    // The previous iteration's wgmmas are done: their stages go back. This
    // one's stay in flight (the loop's result is read after the loop).
    line(llvm::formatv("wgmma_drain<1, {0}, {1}>({2});", MT, PN, sums));
    for (const Ring *ring : productRings(op)) {
      line(llvm::formatv("if ({0} > 0) {1}.release({2} - 1);", carriedProduct->iv, ring->name,
                         ring->consumed));
      line(llvm::formatv("++{0};", ring->consumed));
    }
    --indent;
    line("}");
    tiles[op->getResult(0)] = tiles[op->getOperand(0)];
    return success();
  }
  size_t drainFrom = body.size();
  line(llvm::formatv("wgmma_drain<{0}, {1}, {2}>({3});", early && overlap->withLate ? 1 : 0, MT,
                     PN, sums));
  // The A fragments' registers are read until the wait.
  if (!sharedA)
    line(llvm::formatv("wgmma_touch_a({0});", af));
  if (late)
    r.name = overlap->result.name;
  forEach(r, [&](ArrayRef<std::string> k) {
    line(llvm::formatv("{0}[{1}] = cvt<{2}>({3});", r.name, flat(r, k), cType(outElem),
                       sumAt(k)));
  });
  if (late) {
    // The wait and the copy go to the iteration's end.
    overlap->drain = body.substr(drainFrom);
    overlap->result = r;
    body.resize(drainFrom);
    if (producer) {
      releaseRing(op);
      overlap->drain += body.substr(drainFrom);
      body.resize(drainFrom);
    }
  }
  --indent;
  line("}");
  tiles[op->getResult(0)] = r;
  return success();
}

LogicalResult Emitter::emitMatmul(Operation *op, Value accValue, Value lhs, Value rhs,
                                  int64_t rank) {
  Tile a = tiles[lhs], b = tiles[rhs];
  if (a.rank() != rank || b.rank() != rank)
    return op->emitError() << "matrix product operands must have rank " << rank;
  if (op->hasAttr(kMmaAttrName)) {
    if (failed(onWgmma(op) ? emitWgmmaProduct(op, accValue, lhs, rhs, rank)
                           : emitTensorCoreProduct(op, accValue, lhs, rhs, rank)))
      return failure();
    return refillPrefetched(op);
  }
  Type outElem = cast<TileType>(op->getResult(0).getType()).getElementType();
  std::optional<Tile> acc;
  Tile r = declareProduct(op, accValue, a, b, rank, acc);
  // Stage both operands in shared memory, row-major over their padded shapes.
  auto count = [](const Tile &t) {
    int64_t n = 1;
    for (const Dim &d : t.dims)
      n *= d.padded;
    return n;
  };
  int64_t PM = a.dims[rank - 2].padded, PK = a.dims[rank - 1].padded;
  int64_t PN = b.dims[rank - 1].padded;
  std::string kCount = a.dims[rank - 1].extent.empty()
                           ? std::to_string(PK)
                           : a.dims[rank - 1].extent;
  // Tensor cores (mma.sync m16n8k16): 16-bit operands of the same type in
  // 16x8x16 steps, one matrix per product (batched operands with a batch
  // tile of 1 stage as plain matrices). K lanes past the valid extent are
  // staged as zeros (the steps run over all of PK).
  bool oneMatrix = rank == 2 || (a.dims[0].padded == 1 && b.dims[0].padded == 1);
  bool mma = tensorCores && oneMatrix && a.elem == b.elem &&
             (a.elem.isBF16() || a.elem.isF16()) && PM % 16 == 0 && PN % 8 == 0 &&
             PK % 16 == 0;
  // Staged elements take 8 bytes (any dtype) on CUDA cores, their own size
  // on tensor cores, where rows are 8 elements longer than the tile's (and
  // the f32 sums' rows too) so that mma_tile's ldmatrix reads and its
  // fragment writes are free of bank conflicts. A right operand whose
  // threads hold runs along K (a transposed tile, as attention's k^T) is
  // staged transposed, N rows of K, so that its runs stay whole.
  int64_t stagedBytes = mma ? 2 : 8;
  StagedOperand stagedB = stagedRightOperand(layoutAttr(b), rank, false, b.elem);
  stagedB.transposed &= mma;
  int64_t ldA = PK + 8, ldC = PN + 8;
  int64_t bytesA = llvm::alignTo(mma ? PM * ldA * 2 : count(a) * stagedBytes, 16);
  int64_t bytesB = mma ? stagedB.bytes : (int64_t)llvm::alignTo(count(b) * stagedBytes, 16);
  int64_t base = sharedBase;
  sharedBytes = std::max(sharedBytes, base + bytesA + bytesB);
  std::string as = fresh("sa"), bs = fresh("sb");
  line("{");
  ++indent;
  line(llvm::formatv("{0}* {1} = reinterpret_cast<{0}*>(kite_smem + {2});", cType(a.elem), as,
                     base));
  line(llvm::formatv("{0}* {1} = reinterpret_cast<{0}*>(kite_smem + {2});", cType(b.elem),
                     bs, base + bytesA));
  line(sync());
  stageOperand(a, as, rank - 1, rank - 2, rank - 1, ldA, mma);
  stageRightOperand(b, bs, rank, stagedB.transposed, stagedB.ld, mma);
  line(sync());
  // Each element of the result: the product's sum (from the tensor cores'
  // f32 tile in shared memory, or a loop over K here), plus the accumulator.
  std::string cs;
  if (mma) {
    cs = fresh("sc");
    sharedBytes = std::max(sharedBytes, base + bytesA + bytesB + PM * ldC * 4);
    line(llvm::formatv("float* {0} = reinterpret_cast<float*>(kite_smem + {1});", cs,
                       base + bytesA + bytesB));
    line(llvm::formatv("mma_tile<{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}>({9}, {10}, {11});",
                       PM, PN, PK, numThreads / 32, cType(a.elem), ldA, stagedB.ld, ldC,
                       stagedB.transposed ? "true" : "false", as, bs, cs));
    line(sync());
  }
  std::string sumT = outElem.isF64() ? "double"
                     : outElem.isIntOrIndex() && !outElem.isInteger(1) ? "i64"
                                                                         : "float";
  std::optional<Tile> accIn;
  if (acc)
    accIn = readableAt(*acc, r, 0);
  // The tensor cores' sums come back as float4 where a thread's run along
  // the last dim holds 4 (rows of LDC floats start 16-byte aligned).
  const Dim &last = r.dims[rank - 1];
  int64_t width = mma && last.ctxDim >= 0 && r.ctx->vec[last.ctxDim] % 4 == 0 &&
                          last.regExtent % 4 == 0
                      ? 4
                      : 1;
  forEach(
      r,
      [&](ArrayRef<std::string> k) {
        std::string m = coord(r, rank - 2, k[rank - 2]);
        std::string n = coord(r, rank - 1, k[rank - 1]);
        SmallVector<std::string> sums; // element e of the run starting at k
        if (width == 4) {
          std::string f = fresh("f");
          line(llvm::formatv("const float4 {0} = *reinterpret_cast<const float4*>(&{1}[({2}) * "
                             "{3} + {4}]);",
                             f, cs, m, ldC, n));
          for (char c : StringRef("xyzw"))
            sums.push_back(f + "." + c);
        } else if (mma) {
          sums.push_back(llvm::formatv("{0}[({1}) * {2} + {3}]", cs, m, ldC, n));
        } else {
          std::string aBase = llvm::formatv("({0}) * {1}", m, PK);
          std::string bBase = n;
          if (rank == 3) {
            std::string batch = coord(r, 0, k[0]);
            std::string ba = a.dims[0].padded == 1 ? "0" : batch;
            std::string bb = b.dims[0].padded == 1 ? "0" : batch;
            aBase = llvm::formatv("(({0}) * {1} + {2}) * {3}", ba, PM, m, PK);
            bBase = llvm::formatv("({0}) * {1} + {2}", bb, PK * PN, n);
          }
          std::string sum = fresh("m");
          line(llvm::formatv("{0} {1} = 0;", sumT, sum));
          std::string kk = fresh("kk");
          line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0})", kk, kCount));
          line(llvm::formatv("  {0} += cvt<{1}>({2}[{3} + {4}]) * cvt<{1}>({5}[{6} + {4} * {7}]);",
                             sum, sumT, as, aBase, kk, bs, bBase, PN));
          sums.push_back(sum);
        }
        SmallVector<std::string> ki(k.begin(), k.end());
        for (auto [e, sum] : llvm::enumerate(sums)) {
          ki.back() = plus(k.back(), e);
          std::string total =
              accIn ? llvm::formatv("cvt<{0}>({1}) + {2}", sumT, at(*accIn, ki, 0), sum).str()
                    : sum;
          line(llvm::formatv("{0}[{1}] = cvt<{2}>({3});", r.name, flat(r, ki), cType(outElem),
                             total));
        }
      },
      width);
  line(sync());
  --indent;
  line("}");
  tiles[op->getResult(0)] = r;
  return success();
}
