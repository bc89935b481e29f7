//===- Producer.cpp - a key loop's producer warpgroup ---------------------===//
//
// With warp_specialize, a kernel whose products read prefetched operands
// (kite-prefetch-operands' loads in key loops, on wgmma) gets a producer
// warpgroup after its computing threads. The producer's first thread runs a
// slice of each top-level loop's body: the nested loops around the
// prefetched loads, their bounds and the loads' subscripts computed as the
// computing threads compute them, and at each load the TMA copy of its tile
// into the next stage of the load's ring. The computing threads run the
// kernel's code as without a producer, except that a product whose operand a
// ring holds waits on the stage's `full` mbarrier instead of cp.async groups
// and a block barrier, and arrives on its `empty` one when its wgmma is done:
//
//   for (auto tk : tile(s)) {            producer thread:
//     kt = k[tb, tk, all]                  for (t = 0; t < count; ++t)
//     qk = bmm(qt, kt.transpose(1, 2))  ->   s = ring.acquire(n++)  // empty
//     ...                                    tma_load(stage s, k, (0, t * B, b))
//   }                                    computing threads:
//                                          for (t = 0; t < count; ++t)
//                                            s = ring.await(n)      // full
//                                            qk = wgmma(q, stage s)
//                                            ring.release(n++)
//
// The two sides count a ring's uses in the same order, so they agree on
// each use's stage and phase without sharing anything but the mbarriers.
// A ring belongs to a shared-memory offset: the same load in sibling loops
// (a key loop split by kite-split-masked-loops) shares its space and so
// its ring. The producer may run ahead into the next loop or the next
// program's tiles, so the rings stay out of the scratch space (which
// otherwise reuses staging buffers outside their loops).
//
// TMA fills a box's elements past the tensor with zeros. Elements past a
// partial tile's extent but inside the tensor (a loop that ends before its
// tensor does) are zeroed by the computing threads after the wait, as the
// cp.async copies leave them, so that a product never reads another tile's
// data.
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"
#include "lowering/DynamicShapes.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

namespace {

/// The top-level loop around `op`, and whether every loop between them is
/// a nested tile loop (the only control flow the producer replicates).
Operation *topLevelLoopOf(Operation *op, bool &onlyTileLoops) {
  onlyTileLoops = true;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (isa<func::FuncOp>(p->getParentOp()))
      return isa<TileForOp, GridForOp>(p) ? p : nullptr;
    auto loop = dyn_cast<TileForOp>(p);
    if (!loop || loop.getNumDims() != 1)
      onlyTileLoops = false;
  }
  return nullptr;
}

/// The unsigned integer of an element of `elem` (16 or 8 bits), for
/// zeroing staged elements whatever their float type.
StringRef rawElement(Type elem) {
  return elementBytes(elem) == 1 ? "unsigned char" : "unsigned short";
}

/// kite_gemm.cuh's sw128_index for `rows` rows of `elem`.
std::string sw128Index(int64_t rows, Type elem) {
  return elementBytes(elem) == 2 ? llvm::formatv("sw128_index<{0}>", rows).str()
                                 : llvm::formatv("sw128_index<{0}, {1}>", rows,
                                                 elementBytes(elem)).str();
}

} // namespace

std::optional<std::string> Emitter::tmaTensor(LoadOp l, int64_t colDim, TmaCopy &c) {
  const TensorRef &ref = tensors[l.getTensor()];
  int64_t rank = ref.sizes.size(), eb = elementBytes(ref.elem);
  if (rank > 5)
    return std::string("tensor has more than 5 dims (TMA)");
  // Per tensor dim, the tile dim it is (-1: a scalar subscript).
  c.rank = rank;
  c.tileDimOf.clear();
  int64_t td = 0, rd = 0;
  for (const Subscript &s : l.getSubscripts()) {
    switch (s.kind) {
    case Subscript::Kind::NewAxis: ++rd; continue;
    case Subscript::Kind::Scalar: c.tileDimOf.push_back(-1); break;
    case Subscript::Kind::All:
    case Subscript::Kind::Span: c.tileDimOf.push_back(rd++); break;
    case Subscript::Kind::Gather: return std::string("tile is gathered");
    }
    ++td;
  }
  for (; td < rank; ++td)
    c.tileDimOf.push_back(rd++);
  // The columns are the tensor's innermost dim, contiguous; every other
  // stride a multiple of 16 bytes and the data 16-byte aligned, else the
  // map covers a copy of the tensor with its rows padded to 16 bytes that
  // the launch makes first (TensorMapSpec::staged), where the kernel does
  // not write the tensor (the copy would not see its stores).
  if (c.tileDimOf[rank - 1] != colDim || ref.isDynamicStride(rank - 1) ||
      ref.strides[rank - 1] != 1)
    return std::string("staged columns are not its tensor's contiguous innermost dim");
  c.staged = ref.align % 16 != 0;
  for (int64_t d = 0; d + 1 < rank; ++d)
    c.staged |= (ref.strideDivisor(d) * eb) % 16 != 0;
  if (c.staged && writes(l.getTensor()))
    return std::string("tensor's rows are not 16-byte multiples or its data not 16-byte "
                       "aligned (TMA), and the kernel writes it, so a padded copy will not do");
  return std::nullopt;
}

bool Emitter::pastExtentIsPastTensor(LoadOp l, const TmaCopy &c, int64_t tileDim) {
  int64_t d = 0; // the tensor dim of each subscript
  for (const Subscript &s : l.getSubscripts()) {
    if (s.kind == Subscript::Kind::NewAxis)
      continue;
    if (d < (int64_t)c.tileDimOf.size() && c.tileDimOf[d] == tileDim)
      return s.kind == Subscript::Kind::Span && spanRunsToSize(s.value, l.getTensor(), d);
    ++d;
  }
  return false;
}

bool Emitter::writes(Value tensor) {
  bool any = false;
  kernel.walk([&](Operation *op) {
    if (auto s = dyn_cast<StoreOp>(op))
      any |= s.getTensor() == tensor;
    else if (auto a = dyn_cast<AtomicOp>(op))
      any |= a.getTensor() == tensor;
  });
  return any;
}

std::string Emitter::tensorMap(LoadOp l, const TmaCopy &c, int64_t colDim, int64_t boxRows) {
  CudaKernel::Param param{CudaKernel::Param::Kind::ArgTensorMap,
                          cast<BlockArgument>(l.getTensor()).getArgNumber(), "", {}, 3};
  // The columns: one 128-byte swizzle row.
  int64_t rowElems = swizzleRowElems(tensors[l.getTensor()].elem);
  for (int64_t d = 0; d < c.rank; ++d)
    param.box.push_back(c.tileDimOf[d] == colDim     ? rowElems
                        : c.tileDimOf[d] == c.rowDim ? boxRows
                                                     : 1);
  param.staged = c.staged;
  return addTensorMap(std::move(param));
}

std::string Emitter::addTensorMap(CudaKernel::Param param) {
  auto same = llvm::find_if(result.params, [&](const CudaKernel::Param &q) {
    return q.kind == param.kind && q.index == param.index && q.box == param.box &&
           q.swizzle == param.swizzle && q.rowSplits == param.rowSplits &&
           q.rowStep == param.rowStep && q.staged == param.staged;
  });
  if (same != result.params.end())
    return same->name;
  param.name = fresh("tma");
  result.params.push_back(param);
  return param.name;
}

std::string Emitter::blockTensorMap(LoadOp l, const TmaCopy &c) {
  const TensorRef &ref = tensors[l.getTensor()];
  int64_t rank = c.rank;
  if (c.splitH <= 0 || c.splitJ <= 0 || rank < 2 || c.tileDimOf[rank - 2] != c.rowDim)
    return "";
  // The rows fold the dims before them (a batch): contiguous. (A tensor
  // with sizes taken at launch is contiguous; the launch checks again. A
  // padded copy is contiguous but for its rows' padding.)
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (!c.staged && !ref.anyDynamic() &&
        ref.strides[d] != ref.strides[d + 1] * ref.sizes[d + 1])
      return "";
  CudaKernel::Param param{CudaKernel::Param::Kind::ArgTensorMap,
                          cast<BlockArgument>(l.getTensor()).getArgNumber(), "", {}, 3};
  param.box.assign(rank, 1);
  param.box[rank - 2] = 64;
  param.box[rank - 1] = swizzleRowElems(ref.elem);
  param.rowSplits = {{8, 1}, {2, c.splitH}, {4, c.splitJ}};
  param.rowStep = 8;
  param.staged = c.staged;
  return addTensorMap(std::move(param));
}

bool Emitter::lhsBoxes(Value lhs, TmaCopy &c) {
  // Only where the producer runs ahead into the next program (persistent
  // programs, two stages): in a program of its own, the tile's copy
  // overlaps the key loop's first copies by cp.async as well.
  if (!producer || !StringRef(config.pid_type).starts_with("persistent"))
    return false;
  LoadOp l = loadedLhs(lhs).first;
  auto top = l ? dyn_cast<TileForOp>(l->getParentOp()) : TileForOp();
  if (!top || !top.isTopLevel() || l.getMask())
    return false;
  return fragmentBoxes(lhs, c);
}

bool Emitter::fragmentBoxes(Value lhs, TmaCopy &c) {
  // 16- or 8-bit elements: 64 or 128 columns a 128-byte panel.
  Type elem = cast<TileType>(lhs.getType()).getElementType();
  if (elementBytes(elem) != 2 && elementBytes(elem) != 1)
    return false;
  int64_t panel = swizzleRowElems(elem);
  // The tile: rows by whole 128-byte panels of columns, unit dims besides.
  auto [ctx, dims] = layoutOf(lhs);
  int64_t rank = dims.size();
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (dims[d].padded != 1)
      return false;
  const Dim &rowD = dims[rank - 2];
  if (rowD.ctxDim < 0)
    return false;
  int64_t T = ctx->tpd[rowD.ctxDim], V = ctx->vec[rowD.ctxDim], S = ctx->tstride[rowD.ctxDim];
  int64_t PK = dims[rank - 1].padded, rows = rowD.padded;
  // A thread's rows (register row index k < rows / T), two a 16-row tile.
  int64_t MT = rows / T / 2, blocks = numThreads / 128 * MT;
  if (PK % panel != 0 || blocks * 64 != rows)
    return false;
  c = TmaCopy();
  c.rowDim = rank - 2;
  // The buffer holds, per warpgroup w and m64 block i, block w * MT + i: 64
  // rows, row 16 j + 8 h + g of it warp j's A fragment row g + 8 h, that is
  // the tile row its thread 32 j + 4 g holds at register row 2 i + h
  // (emitSharedLhs). Each 8 rows are one box where the layout puts 8
  // consecutive tile rows on g = 0..7 (and none on the lane's last 2 bits).
  auto rowOf = [&](int64_t thread, int64_t k) {
    return (k / V) * T * V + (thread / S) % T * V + k % V;
  };
  c.MT = MT;
  c.T = T;
  c.V = V;
  c.S = S;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t a = 0; a < 8; ++a) {
      int64_t thread = 128 * (b / MT) + 32 * (a / 2), k = 2 * (b % MT) + a % 2;
      int64_t first = rowOf(thread, k);
      for (int64_t lane = 0; lane < 32; ++lane)
        if (rowOf(thread + lane, k) != first + lane / 4)
          return false;
      c.boxes.push_back({b * 64 * PK + a * 8 * panel, first});
    }
  }
  // The blocks as 8 x 2 x 4 rows (TmaCopy::splitH, splitJ).
  c.splitH = c.boxes[1].second - c.boxes[0].second;
  c.splitJ = c.boxes[2].second - c.boxes[0].second;
  for (int64_t i = 0; i < (int64_t)c.boxes.size(); ++i) {
    int64_t first = c.boxes[i - i % 8].second, a = i % 8;
    if (first % 8 != 0 || c.boxes[i].second != first + a % 2 * c.splitH + a / 2 * c.splitJ)
      c.splitH = c.splitJ = 0;
  }
  c.rows = rows;
  c.cols = PK;
  c.panels = PK / panel;
  c.panelElems = 64 * panel;
  return true;
}

bool Emitter::planStreamedLhs(Operation *product, int64_t stages) {
  if (!producer || !product->hasAttr(kMmaAttrName) || !onWgmma(product) ||
      product->hasAttr(kSharedLhsAttrName))
    return false;
  Value lhs = product->getOperand(product->getNumOperands() - 2);
  auto [load, convert] = loadedLhs(lhs);
  auto loop = dyn_cast<TileForOp>(product->getParentOp());
  if (!load || !loop || loop.isTopLevel() || loop.getNumDims() != 1 ||
      load->getBlock() != product->getBlock() || !load.getResult().hasOneUse() ||
      (convert && (convert->getBlock() != product->getBlock() || !lhs.hasOneUse())) ||
      !prefetchable(load, loop, kernel))
    return false;
  TmaCopy c;
  if (!fragmentBoxes(lhs, c))
    return false;
  Prefetch p;
  p.wgmma = true;
  p.stages = std::max<int64_t>(stages, 1);
  p.staged.bytes =
      c.rows * c.cols * elementBytes(cast<TileType>(lhs.getType()).getElementType());
  p.rowDim = c.rowDim;
  p.colDim = c.rowDim + 1;
  prefetches[load] = p;
  streamedLhs[product] = load;
  if (convert)
    streamedConverts.insert(convert);
  streamedCopyPlans[load] = c;
  return true;
}

FailureOr<std::string> Emitter::awaitStreamedLhs(Operation *product, StringRef type) {
  Operation *load = streamedLhs.lookup(product);
  const TmaCopy &c = tmaCopies[load];
  const Ring &r = rings[c.ring];
  std::string stage = fresh("st"), buf = fresh("sa");
  line(llvm::formatv("const int {0} = {1}.await({2});", stage, r.name, r.consumed));
  int64_t eb = elementBytes(tensors[cast<LoadOp>(load).getTensor()].elem);
  line(llvm::formatv("{0}* {1} = {2} + {3} * {4};", type, buf, sharedAt(r.offset, true, type),
                     stage, r.stageBytes / eb));
  if (failed(zeroLhsPastExtents(load, c, buf)))
    return failure();
  return buf;
}

int Emitter::addRing(int64_t offset, int64_t stages, int64_t stageBytes) {
  Ring r;
  r.offset = offset;
  r.stages = stages;
  r.stageBytes = stageBytes;
  r.name = fresh("kite_ring");
  r.consumed = fresh("kite_used");
  r.produced = fresh("kite_filled");
  rings.push_back(r);
  return rings.size() - 1;
}

Operation *Emitter::planProducerLhs(Operation *loop, Value lhs) {
  LoadOp l = loadedLhs(lhs).first;
  auto plan = lhsCopyPlans.find({loop, lhs});
  if (!l || !directLhs.contains(l) || tmaCopies.count(l) || plan == lhsCopyPlans.end())
    return nullptr;
  TmaCopy c = plan->second;
  // Whole columns (no partial panel), from a tensor TMA reads.
  SmallVector<int64_t> shape;
  SmallVector<std::string> extents;
  if (failed(subscriptShape(l, l.getTensor(), l.getSubscripts(), tensors[l.getTensor()].elem,
                            shape, extents)) ||
      !extents[c.rowDim + 1].empty() || tmaTensor(l, c.rowDim + 1, c))
    return nullptr;
  int64_t offset = sharedLhs.lookup({loop, lhs});
  // planStagingBuffers' two stages.
  c.ring = addRing(offset, 2, c.rows * c.cols * elementBytes(tensors[l.getTensor()].elem));
  c.map = tensorMap(l, c, c.rowDim + 1, 8);
  c.blockMap = blockTensorMap(l, c);
  tmaCopies[l] = c;
  lhsRings[offset] = c.ring;
  programRings[l->getParentOp()].push_back(c.ring);
  return l;
}

void Emitter::planProducer(SmallVector<Operation *> loads) {
  auto reject = [&](const Twine &why) {
    if (producerRejection.empty())
      producerRejection = ("warp_specialize: " + why).str();
  };
  if (loads.empty())
    return reject("the kernel has no operand tile a key loop prefetches (num_stages >= 1, a "
                  "product's right operand loaded in a key loop) for a producer to copy");
  if (!privates.empty())
    return reject("a key loop's producer does not combine with privatized atomics");
  if (numThreads < 128 || numThreads % 128 != 0)
    return reject("the computing threads must be whole warpgroups");
  // Streamed left operands whose tensor TMA cannot read go back to
  // registers: the load and its conversion emitted, the product on them.
  SmallVector<Operation *> copied;
  for (Operation *load : loads) {
    auto plan = streamedCopyPlans.find(load);
    if (plan == streamedCopyPlans.end()) {
      copied.push_back(load);
      continue;
    }
    TmaCopy c = plan->second;
    if (tmaTensor(cast<LoadOp>(load), c.rowDim + 1, c)) {
      // The load's one user is the product, or the conversion before it
      // (planStreamedLhs).
      prefetches.erase(load);
      Operation *user = *load->getUsers().begin();
      if (streamedConverts.erase(user))
        user = *user->getUsers().begin();
      streamedLhs.erase(user);
      continue;
    }
    const Prefetch &p = prefetches[load];
    c.ring = addRing(p.offset, p.stages, p.staged.bytes);
    c.map = tensorMap(cast<LoadOp>(load), c, c.rowDim + 1, 8);
    c.blockMap = blockTensorMap(cast<LoadOp>(load), c);
    tmaCopies[load] = c;
    copied.push_back(load);
  }
  loads = copied;
  for (Operation *load : loads) {
    if (tmaCopies.count(load))
      continue; // a streamed left operand's
    auto l = cast<LoadOp>(load);
    const Prefetch &p = prefetches[load];
    const TensorRef &ref = tensors[l.getTensor()];
    auto tileType = cast<TileType>(l.getResult().getType());
    ArrayRef<int64_t> shape = tileType.getShape();
    int64_t eb = elementBytes(ref.elem);
    if (!p.wgmma || p.staged.swizzleRows == 0 || (eb != 2 && eb != 1))
      return reject("a prefetched operand is not staged for wgmma (16- or 8-bit, 128-byte "
                    "swizzled)");
    int64_t panel = swizzleRowElems(ref.elem);
    TmaCopy c;
    if (std::optional<std::string> why = tmaTensor(l, p.colDim, c))
      return reject("a prefetched operand's " + *why);
    c.rows = shape[p.rowDim];
    c.cols = shape[p.colDim];
    if (c.rows != p.staged.swizzleRows || c.rows > 256 || c.rows % 8 != 0 || c.cols % panel != 0)
      return reject("a prefetched tile's rows are not its swizzled stage's (at most 256, "
                    "a multiple of 8) or its columns not 128-byte panels");
    for (auto [d, extent] : llvm::enumerate(shape))
      if ((int64_t)d != p.rowDim && (int64_t)d != p.colDim && extent != 1)
        return reject("a prefetched tile has a dim of more than one besides its rows and "
                      "columns");
    c.panels = c.cols / panel;
    c.panelElems = c.rows * panel;
    // The ring of the load's offset.
    auto it = llvm::find_if(rings, [&](const Ring &r) { return r.offset == p.offset; });
    if (it == rings.end()) {
      int added = addRing(p.offset, p.stages, p.staged.bytes); // (rings may move)
      it = rings.begin() + added;
    } else if (it->stages != p.stages || it->stageBytes != p.staged.bytes) {
      return reject("two prefetched operands share shared memory with different stages");
    }
    c.ring = it - rings.begin();
    c.rowDim = p.rowDim;
    c.map = tensorMap(l, c, p.colDim, c.rows);
    tmaCopies[load] = c;
  }

  // Shared left operands loaded in a top-level loop's body: copied by the
  // producer too where they can be.
  SmallVector<Operation *> sliced(loads.begin(), loads.end());
  for (auto &[loop, lhsList] : sharedLhsLoops)
    for (Value lhs : lhsList)
      if (Operation *load = planProducerLhs(loop, lhs))
        sliced.push_back(load);

  // The producer's slice: the loads, the nested loops around them, and the
  // scalar ops their bounds and subscripts need, up to the top-level loop
  // (whose spans and the kernel's prologue both sides share).
  SmallVector<Value> worklist;
  auto need = [&](Operation *op) {
    if (!producerSlice.insert(op).second)
      return;
    if (auto loop = dyn_cast<TileForOp>(op)) {
      llvm::append_range(worklist, loop.getLowerBounds());
      llvm::append_range(worklist, loop.getUpperBounds());
      llvm::append_range(worklist, loop.getBlockSizes());
    } else if (auto load = dyn_cast<LoadOp>(op)) {
      for (const Subscript &s : load.getSubscripts())
        if (s.value)
          worklist.push_back(s.value);
    } else {
      llvm::append_range(worklist, op->getOperands());
    }
  };
  for (Operation *load : sliced) {
    bool onlyTileLoops = false;
    Operation *top = topLevelLoopOf(load, onlyTileLoops);
    if (!top || !onlyTileLoops)
      return reject("a prefetched load sits in control flow other than nested tile loops");
    need(load);
    for (Operation *p = load->getParentOp(); p != top; p = p->getParentOp())
      need(p);
  }
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (isa<func::FuncOp>(owner))
        continue;
      auto loop = dyn_cast<TileForOp>(owner);
      if (loop && llvm::is_contained(loop.getSpans(), v) &&
          (loop.isTopLevel() || producerSlice.contains(loop)))
        continue;
      if (isa<GridForOp>(owner) && isa<func::FuncOp>(owner->getParentOp()))
        continue;
      return reject("a prefetched load's subscripts or loop bounds depend on values the "
                    "key loops carry");
    }
    Operation *def = v.getDefiningOp();
    if (isa<func::FuncOp>(def->getParentOp()))
      continue; // the kernel's prologue
    if (def->getNumRegions() != 0 ||
        llvm::any_of(def->getResultTypes(), [](Type t) { return isa<TileType>(t); }))
      return reject("a prefetched load's subscripts or loop bounds depend on tiles");
    need(def);
  }
  // The rings stay live throughout: the producer fills them ahead of the
  // loops that read them. Their mbarriers go past everything else.
  stagingOutsideLoops = true;
  for (Ring &r : rings) {
    sharedBase = llvm::alignTo(sharedBase, 8);
    r.barriers = sharedBase;
    sharedBase += 16 * r.stages;
  }
  sharedBytes = std::max(sharedBytes, sharedBase);
}

void Emitter::planMulticasts() {
  // Whether a copy's tile, or how often it is copied, depends on the
  // cluster's dim: its subscripts and the bounds of the loops around it,
  // back through the scalar ops that compute them.
  auto dependsOnClusterDim = [&](Operation *load) {
    SmallVector<Value> worklist;
    for (const Subscript &s : cast<LoadOp>(load).getSubscripts())
      if (s.value)
        worklist.push_back(s.value);
    for (Operation *p = load->getParentOp(); p && !isa<func::FuncOp>(p); p = p->getParentOp())
      if (auto loop = dyn_cast<TileForOp>(p); loop && !loop.isTopLevel()) {
        llvm::append_range(worklist, loop.getLowerBounds());
        llvm::append_range(worklist, loop.getUpperBounds());
      }
    DenseSet<Value> seen;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (v == clusterVar)
        return true;
      if (!seen.insert(v).second)
        continue;
      if (Operation *def = v.getDefiningOp())
        llvm::append_range(worklist, def->getOperands());
    }
    return false;
  };
  for (auto &[load, c] : tmaCopies)
    c.multicast = !dependsOnClusterDim(load);
  // A ring is the cluster's where every copy into it is a multicast: then
  // both programs use it the same number of times, in the same order. A
  // ring with both kinds stays each program's own.
  for (auto [ri, r] : llvm::enumerate(rings)) {
    bool all = true, any = false;
    for (auto &[load, c] : tmaCopies)
      if (c.ring == (int)ri) {
        all &= c.multicast;
        any |= c.multicast;
      }
    r.cluster = any && all;
    if (!r.cluster)
      for (auto &[load, c] : tmaCopies)
        if (c.ring == (int)ri)
          c.multicast = false;
  }
  if (llvm::none_of(rings, [](const Ring &r) { return r.cluster; }))
    producerRejection = "cluster_size " + std::to_string(config.cluster_size) +
                        ": every operand tile the producer copies depends on the dim whose "
                        "neighbouring tiles a cluster's programs take, so none can be "
                        "multicast";
}

std::pair<int64_t, int64_t> Emitter::producerRegisters() const {
  // The producer's slice needs few (loop counters, coordinates, the rings'
  // counts); setmaxnreg takes multiples of 8 from 24 to 256, and a thread
  // addresses at most 255.
  constexpr int64_t kProducer = 40;
  // What the warpgroups split is what the program holds at launch: every
  // thread with the kernel's register count, which for a kernel that uses
  // setmaxnreg is __launch_bounds__' cap (65536 over min_programs_per_sm
  // programs of all their threads, in multiples of 8). Asking for more
  // than that (the SM's 65536 over the programs alone, ignoring the
  // rounding) blocks setmaxnreg.inc forever: 3 programs of 256 threads
  // hold 80 each, 20480 in all, not 21845.
  int64_t compute = (launchRegisters() * (numThreads + 128) - 128 * kProducer) / numThreads / 8 * 8;
  return {kProducer, std::min<int64_t>(compute, 240)};
}

int64_t Emitter::launchRegisters() const {
  return registersPerThread(config, numThreads + (producer ? 128 : 0));
}

void Emitter::emitRings() {
  for (const Ring &r : rings) {
    line(llvm::formatv("const TmaRing<{0}{3}> {1}{{reinterpret_cast<unsigned long long*>(kite_smem "
                       "+ {2})};",
                       r.stages, r.name, r.barriers,
                       r.cluster ? ", " + std::to_string(config.cluster_size) : ""));
    line(llvm::formatv("unsigned {0} = 0, {1} = 0;", r.consumed, r.produced));
  }
  // persistent_dynamic: the program ids the producer takes, passed on.
  bool dynamicPids = config.pid_type == "persistent_dynamic";
  if (dynamicPids) {
    line("__shared__ unsigned long long kite_pid_bars[4];");
    line("const PidRing kite_pids{kite_pid_bars};");
    staticSharedBytes += 32;
  }
  line("if (threadIdx.x == 0) {");
  ++indent;
  for (const Ring &r : rings)
    line(llvm::formatv("{0}.init({1});", r.name, numThreads));
  if (dynamicPids)
    line(llvm::formatv("kite_pids.init({0});", numThreads));
  line("mbar_fence_init();");
  --indent;
  line("}");
  if (clusterDim >= 0)
    line("cluster_sync(); // the cluster's rings are set up: the producers split off");
  else
    line("__syncthreads(); // the rings' mbarriers are set up: the producer splits off");
}

LogicalResult Emitter::emitProducerBlock(Block &block) {
  for (Operation &op : block) {
    if (!producerSlice.contains(&op))
      continue;
    if (tmaCopies.count(&op)) {
      if (failed(emitTmaCopy(&op)))
        return failure();
      continue;
    }
    auto loop = dyn_cast<TileForOp>(&op);
    if (!loop) {
      if (failed(emitOp(&op)))
        return failure();
      continue;
    }
    // The loop as the computing threads run it (one dim): the same count,
    // the same span.
    FailureOr<LoopVars> lv = emitLoopCount(loop, 0);
    if (failed(lv))
      return failure();
    traceLoop(loop, TraceAt::start);
    openTileLoop(loop, 0, *lv);
    if (failed(emitProducerBlock(*loop.getBodyBlock())))
      return failure();
    --indent;
    line("}");
    traceLoop(loop, TraceAt::end);
  }
  return success();
}

LogicalResult Emitter::emitTmaCopy(Operation *load) {
  auto l = cast<LoadOp>(load);
  const TmaCopy &c = tmaCopies[load];
  const Ring &r = rings[c.ring];
  std::string elem = cType(tensors[l.getTensor()].elem);
  // Coordinates, innermost dim first; the columns' advance a panel at a time.
  SmallVector<std::string> coords;
  size_t td = 0;
  for (const Subscript &s : l.getSubscripts()) {
    if (s.kind == Subscript::Kind::NewAxis)
      continue;
    if (s.kind == Subscript::Kind::Span)
      coords.push_back("(int)(" + spans[s.value].begin + ")");
    else if (s.kind == Subscript::Kind::Scalar)
      coords.push_back("(int)(" + scalar(s.value) + ")");
    else
      coords.push_back("0");
    ++td;
  }
  for (; td < (size_t)c.rank; ++td)
    coords.push_back("0");
  // With a block map: the tile's first row among the tensor's rows, the
  // dims before them folded in (blockTensorMap).
  std::string blockRow;
  if (!c.blockMap.empty()) {
    const TensorRef &ref = tensors[l.getTensor()];
    blockRow = "(i64)" + coords[c.rank - 2];
    for (int64_t d = 0; d + 2 < c.rank; ++d)
      blockRow += llvm::formatv(" + (i64){0} * ({1} / {2})", coords[d], ref.stride(d),
                                ref.stride(c.rank - 2))
                      .str();
  }
  std::reverse(coords.begin(), coords.end());
  std::string stage = fresh("st"), buf = fresh("pb");
  int64_t panel = swizzleRowElems(tensors[l.getTensor()].elem); // a panel's columns
  // A multicast's boxes alternate between the cluster's two programs, each
  // box copied into both (the tile's bytes complete on each one's full
  // mbarrier). Each branch of the copy numbers its boxes from 0.
  int box = 0;
  auto copy = [&](int64_t rank, const std::string &dst, const std::string &map,
                  const std::string &at) {
    if (!c.multicast)
      return line(llvm::formatv("tma_load<{0}>({1}, &{2}, {3}.full({4}), {5});", rank, dst, map,
                                r.name, stage, at));
    line(llvm::formatv("if (kite_cta == {0}) tma_load_multicast<{1}>({2}, &{3}, {4}.full({5}), "
                       "0x3, {6});",
                       box++ % 2, rank, dst, map, r.name, stage, at));
  };
  line("{");
  ++indent;
  line(llvm::formatv("const int {0} = {1}.acquire({2}++, {3});", stage, r.name, r.produced,
                     c.rows * c.cols * elementBytes(tensors[l.getTensor()].elem)));
  line(llvm::formatv("{0}* {1} = {2} + {3} * {4};", elem, buf, sharedAt(r.offset, true, elem),
                     stage, r.stageBytes / elementBytes(tensors[l.getTensor()].elem)));
  // The tensor dim of the boxes' rows, as an index of `coords`.
  int64_t rowAt = c.rank - 1 - (llvm::find(c.tileDimOf, c.rowDim) - c.tileDimOf.begin());
  auto copyBoxes = [&] {
    SmallVector<std::pair<int64_t, int64_t>> boxes(c.boxes);
    if (boxes.empty())
      boxes.push_back({0, 0});
    for (auto [dst, row] : boxes) {
      for (int64_t j = 0; j < c.panels; ++j) {
        SmallVector<std::string> at(coords);
        if (j > 0)
          at[0] = llvm::formatv("{0} + {1}", at[0], panel * j).str();
        if (row > 0)
          at[rowAt] = llvm::formatv("{0} + {1}", at[rowAt], row).str();
        copy(c.rank, llvm::formatv("{0} + {1}", buf, dst + j * c.panelElems), c.map,
             llvm::join(at, ", "));
      }
    }
  };
  if (blockRow.empty()) {
    copyBoxes();
    --indent;
    line("}");
    return success();
  }
  // A block map copies a 64-row block in one box, where the tile is whole
  // (its blocks then lie inside the tensor) and starts on a multiple of 8
  // rows; other tiles take the 8-row boxes.
  SmallVector<int64_t> shape;
  SmallVector<std::string> extents;
  if (failed(subscriptShape(l, l.getTensor(), l.getSubscripts(), tensors[l.getTensor()].elem,
                            shape, extents)))
    return failure();
  std::string first = fresh("row");
  line(llvm::formatv("const i64 {0} = {1};", first, blockRow));
  std::string whole = extents[c.rowDim].empty()
                          ? ""
                          : llvm::formatv("({0}) >= {1} && ", extents[c.rowDim], c.rows).str();
  line(llvm::formatv("if ({0}{1} % 8 == 0) {{", whole, first));
  ++indent;
  for (size_t b = 0; b < c.boxes.size(); b += 8) {
    auto [dst, row] = c.boxes[b];
    for (int64_t j = 0; j < c.panels; ++j)
      copy(5, llvm::formatv("{0} + {1}", buf, dst + j * c.panelElems), c.blockMap,
           llvm::formatv("{0}, 0, 0, 0, (int)(({1} + {2}) / 8)",
                         j > 0 ? llvm::formatv("{0} + {1}", coords[0], panel * j).str() : coords[0],
                         first, row));
  }
  --indent;
  line("} else {");
  ++indent;
  box = 0;
  copyBoxes();
  --indent;
  line("}");
  --indent;
  line("}");
  return success();
}

FailureOr<std::string> Emitter::awaitRing(Operation *product, Type elem) {
  Operation *load = prefetchedOperand[product];
  const Prefetch &p = prefetches[load];
  const TmaCopy &c = tmaCopies[load];
  const Ring &r = rings[c.ring];
  std::string stage = fresh("st"), bs = fresh("sb"), type = cType(elem);
  line(llvm::formatv("const int {0} = {1}.await({2});", stage, r.name, r.consumed));
  line(llvm::formatv("{0}* {1} = {2} + {3} * {4};", type, bs, sharedAt(p.offset, true, type),
                     stage, r.stageBytes / elementBytes(elem)));
  // A partial tile: the elements past its extents, inside the tensor,
  // arrived with the tile; zero them as the cp.async copies leave them
  // (past the tensor, TMA filled zeros).
  // (From the subscripts where the product reads them: an overlapped
  // loop's late stage reads a tile of the iteration before.)
  auto l = cast<LoadOp>(load);
  SmallVector<int64_t> shape;
  SmallVector<std::string> extents;
  if (failed(subscriptShape(l, l.getTensor(), l.getSubscripts(), tensors[l.getTensor()].elem,
                            shape, extents)))
    return failure();
  std::string rows = extents[p.rowDim], cols = extents[p.colDim];
  if (pastExtentIsPastTensor(l, c, p.rowDim))
    rows.clear();
  if (pastExtentIsPastTensor(l, c, p.colDim))
    cols.clear();
  SmallVector<std::string> partial;
  if (!rows.empty())
    partial.push_back(llvm::formatv("({0}) < {1}", rows, c.rows).str());
  if (!cols.empty())
    partial.push_back(llvm::formatv("({0}) < {1}", cols, c.cols).str());
  if (!partial.empty()) {
    zeroStaged(llvm::join(partial, " || "), c.rows, c.cols, [&] {
      SmallVector<std::string> past;
      if (!rows.empty())
        past.push_back(llvm::formatv("r >= ({0})", rows).str());
      if (!cols.empty())
        past.push_back(llvm::formatv("c >= ({0})", cols).str());
      line(llvm::formatv("if ({0}) reinterpret_cast<{2}*>({1})[{3}(r, c)] = 0;",
                         llvm::join(past, " || "), bs, rawElement(elem), sw128Index(c.rows, elem)));
    });
  }
  return bs;
}

void Emitter::zeroStaged(StringRef partial, int64_t rows, int64_t cols,
                         llvm::function_ref<void()> element) {
  line(llvm::formatv("if ({0}) {{", partial));
  ++indent;
  line(llvm::formatv("for (int i = threadIdx.x; i < {0}; i += {1}) {{", rows * cols,
                     numThreads));
  ++indent;
  line(llvm::formatv("const int r = i / {0}, c = i % {0};", cols));
  element();
  --indent;
  line("}");
  line("fence_proxy_async();");
  line(sync());
  --indent;
  line("}");
}

LogicalResult Emitter::awaitLhsRing(Operation *load, int64_t offset) {
  const TmaCopy &c = tmaCopies[load];
  const Ring &r = rings[c.ring];
  line(llvm::formatv("{0}.await({1});", r.name, r.consumed));
  Type elem = tensors[cast<LoadOp>(load).getTensor()].elem;
  return zeroLhsPastExtents(load, c, sharedLhsBuffer(offset, cType(elem), elementBytes(elem)));
}

LogicalResult Emitter::zeroLhsPastExtents(Operation *load, const TmaCopy &c, StringRef stage) {
  // Rows (and columns) past a partial tile's extent inside the tensor
  // arrived with the tile (TMA zero-fills only past the tensor): zero
  // them, as the direct copy leaves them.
  auto l = cast<LoadOp>(load);
  SmallVector<int64_t> shape;
  SmallVector<std::string> extents;
  if (failed(subscriptShape(l, l.getTensor(), l.getSubscripts(), tensors[l.getTensor()].elem,
                            shape, extents)))
    return failure();
  std::string rows = extents[c.rowDim], cols = extents[c.rowDim + 1];
  if (pastExtentIsPastTensor(l, c, c.rowDim))
    rows.clear();
  if (pastExtentIsPastTensor(l, c, c.rowDim + 1))
    cols.clear();
  SmallVector<std::string> partial, past;
  if (!rows.empty()) {
    partial.push_back(llvm::formatv("({0}) < {1}", rows, c.rows).str());
    past.push_back(llvm::formatv("row >= ({0})", rows).str());
  }
  if (!cols.empty()) {
    partial.push_back(llvm::formatv("({0}) < {1}", cols, c.cols).str());
    past.push_back(llvm::formatv("c >= ({0})", cols).str());
  }
  if (partial.empty())
    return success();
  std::string buf = fresh("sa");
  Type elem = tensors[l.getTensor()].elem;
  line(llvm::formatv("{2}* {0} = reinterpret_cast<{2}*>({1});", buf, stage, rawElement(elem)));
  zeroStaged(llvm::join(partial, " || "), c.rows, c.cols, [&] {
    // Row r of the buffer (block b = r / 64, its row 8 a + g): the tile row
    // the thread of the fragment row holds at its register row k
    // (fragmentBoxes).
    line(llvm::formatv("const int b = r / 64, a = r % 64 / 8, k = 2 * (b % {0}) + a % 2;", c.MT));
    line(llvm::formatv("const int t = 128 * (b / {0}) + 32 * (a / 2) + 4 * (r % 8);", c.MT));
    line(llvm::formatv("const int row = k / {0} * {1} + t / {2} % {3} * {0} + k % {0};", c.V,
                       c.T * c.V, c.S, c.T));
    line(llvm::formatv("if ({0}) {1}[b * {2} + {3}(r % 64, c)] = 0;", llvm::join(past, " || "),
                       buf, 64 * c.cols, sw128Index(64, elem)));
  });
  return success();
}

SmallVector<const Ring *, 2> Emitter::productRings(Operation *product) {
  SmallVector<const Ring *, 2> found;
  for (Operation *load : {prefetchedOperand.lookup(product), streamedLhs.lookup(product)})
    if (load && tmaCopies.count(load))
      found.push_back(&rings[tmaCopies[load].ring]);
  return found;
}

void Emitter::releaseRing(Operation *product) {
  for (const Ring *r : productRings(product))
    line(llvm::formatv("{0}.release({1}); ++{1};", r->name, r->consumed));
}
