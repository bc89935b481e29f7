//===- Emitter.h - the CUDA emitter's state and helpers ---------*- C++ -*-===//
//
// This file declares the emitter that lowering/EmitCuda.cpp drives, shared
// by the files of lowering/emit/, one per concern: layouts and conversions
// (Layouts.cpp), loops and the program structure (Loops.cpp), memory
// accesses (Memory.cpp), elementwise and shape ops (Elementwise.cpp),
// scalars (Scalars.cpp), reductions and scans (Reductions.cpp), sorts
// (Sort.cpp) and matrix products
// (Products.cpp). Private to lowering/.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_EMIT_EMITTER_H
#define KITE_LOWERING_EMIT_EMITTER_H

#include "lowering/Config.h"
#include "lowering/DynamicShapes.h"
#include "lowering/EmitCuda.h"
#include "lowering/IndexRange.h"
#include "lowering/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace kite::emit {
using namespace mlir;

/// How a launch computes `v` (a constant, a size taken at launch, an
/// integer scalar, arith on them), or nullopt.
std::optional<LaunchExpr> launchExprOf(Value v);
std::optional<LaunchExpr> launchExprOf(SizeOrigin origin);

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

/// A thread arrangement over a padded shape.
struct Context {
  int id = 0;
  SmallVector<int64_t> shape; // powers of two
  SmallVector<int64_t> tpd;   // threads along each dim
  SmallVector<int64_t> vec;   // contiguous elements a thread holds per chunk
  SmallVector<int64_t> tstride; // thread-index stride of each dim
  int64_t used = 1;             // threads that hold distinct elements
  BlockedLayoutAttr layout;     // the arrangement (its dims: one per context dim)

  int64_t rank() const { return shape.size(); }
  int64_t perThread(int64_t d) const { return shape[d] / tpd[d]; }
  std::string t(int64_t d) const { return llvm::formatv("c{0}_t{1}", id, d); }
};

/// `lhs` (a product's left operand) as a load or a layout conversion of
/// one: the load and the conversion (null if none).
std::pair<LoadOp, ConvertLayoutOp> loadedLhs(Value lhs);

/// One dim of a tile value.
struct Dim {
  int64_t padded = 1;  // power-of-two size (1: a unit dim)
  int64_t ctxDim = -1; // the context dim it runs along; -1 for a unit dim
  std::string extent;  // valid count when lanes past it are masked, or ""
  int64_t regExtent = 1;
  int64_t regStride = 0;
};

/// A tile value: a per-thread array `name[regCount]`.
struct Tile {
  std::string name;
  Type elem;
  Context *ctx = nullptr;
  SmallVector<Dim> dims;
  int64_t regCount = 1;
  int64_t rank() const { return dims.size(); }
};

/// A tensor in global memory: a pointer expression, sizes, strides. A size
/// taken at launch (a dynamic-shapes plan) is ShapedType::kDynamic in
/// `sizes`, with its kernel parameter's name in `sizeNames` and what it is a
/// multiple of in `divisors`. Such a tensor is contiguous; a stride that
/// depends on a size taken at launch is ShapedType::kDynamic in `strides`,
/// with its expression (a product of sizes) in `strideNames` and what it is
/// a multiple of in `strideDivisors` (setContiguousStrides).
struct TensorRef {
  std::string ptr;
  Type elem;
  SmallVector<int64_t> sizes, strides;
  SmallVector<std::string> sizeNames;   // per dim; "" for a static size
  SmallVector<int64_t> divisors;        // per dim; 0 for a static size
  SmallVector<std::string> strideNames; // per dim; "" for a static stride
  SmallVector<int64_t> strideDivisors;  // per dim; 0 for a static stride
  int64_t align = 16; // bytes the data pointer is aligned to
  /// Sizes taken at launch, but few enough elements for 32-bit offsets
  /// (kite.index32; a static tensor's reach says so itself).
  bool index32 = false;

  bool isDynamic(size_t d) const { return d < sizeNames.size() && !sizeNames[d].empty(); }
  bool anyDynamic() const {
    return llvm::any_of(sizeNames, [](const std::string &n) { return !n.empty(); });
  }
  /// Size `d` as a C++ i64 expression.
  std::string size(size_t d) const {
    return isDynamic(d) ? sizeNames[d] : std::to_string(sizes[d]) + "LL";
  }
  /// What size `d` is known to be a multiple of.
  int64_t sizeDivisor(size_t d) const { return isDynamic(d) ? divisors[d] : sizes[d]; }
  bool isDynamicStride(size_t d) const {
    return d < strideNames.size() && !strideNames[d].empty();
  }
  /// Stride `d` as a C++ i64 expression.
  std::string stride(size_t d) const {
    return isDynamicStride(d) ? strideNames[d] : std::to_string(strides[d]) + "LL";
  }
  /// What stride `d` is known to be a multiple of (the stride itself where
  /// static).
  int64_t strideDivisor(size_t d) const {
    return isDynamicStride(d) ? strideDivisors[d] : strides[d];
  }
  /// Sets the strides of a contiguous tensor of `sizes` (with `sizeNames`
  /// and `divisors` where taken at launch).
  void setContiguousStrides();
};

/// One load, store or atomic being emitted: the tensor, the layout the
/// access iterates in (a load's result), and what it reads at each element.
struct Access {
  Operation *op = nullptr;
  const TensorRef *ref = nullptr;
  ArrayRef<Subscript> subs;
  Tile t;
  bool isLoad = false;
  std::string hint; // a load's cache policy, or ""
  std::optional<AtomicKind> atomic;
  Value value; // a store's value
  DenseMap<Value, Tile> gathers;
  DenseMap<Value, int64_t> groupRanks;
  std::optional<Tile> maskTile, valueTile;
  /// Subscripts kite-check-bounds could not prove inside the tensor.
  llvm::SmallDenseSet<int32_t> checked;
  std::string own; // a store's owner() condition
  int64_t width = 1;
  bool narrow = false; // offsets in 32-bit arithmetic
};

/// The scalars of a tile loop variable.
struct SpanVars {
  std::string begin, valid, id, count;
  int64_t blockSize = 1;
  bool exact = false;     // every tile is full: no mask needed
  int64_t alignElems = 1; // every begin is a multiple of this
  int64_t upperConst = -1; // the loop's end, where it is a constant
  /// A multiple of which the loop's end is, where it is a size taken at
  /// launch (0: none known).
  int64_t endDivisor = 0;
};

/// How a kite.mma product's right operand is staged in shared memory: N
/// rows of K where its threads hold runs along K (stagedAlongK), else K
/// rows of N; for mma.sync, rows of `ld` elements (8 longer than the
/// tile's, so that ldmatrix's reads are free of bank conflicts), for wgmma
/// its 128-byte-swizzled layout of `swizzleRows` rows (1024-byte aligned).
struct StagedOperand {
  bool transposed = false;
  int64_t ld = 0, swizzleRows = 0, bytes = 0;
};

/// A product from registers (kite.mma) as both instructions begin it: its
/// operand and result tiles (the result declared), the accumulator read in
/// the result's layout, padded K and N, and the result's row registers.
struct RegisterProduct {
  Type outElem;
  Tile a, b, r;
  std::optional<Tile> acc;
  int64_t PK = 0, PN = 0, RM = 0;
};

/// A load kite-prefetch-operands marked: its tiles go straight into a ring
/// of `stages` staging buffers of its product, `staged.bytes` each, from
/// `offset` (past the 1024-byte aligned base for wgmma, else kite_smem);
/// its loop has `count` such loads.
struct Prefetch {
  StagedOperand staged;
  bool wgmma = false;
  int64_t stages = 2, offset = 0, count = 1;
  /// The load's dims that are the staged rows and columns.
  int64_t rowDim = 0, colDim = 0;
};

/// A ring of a kernel with a producer warpgroup (hasKeyLoopProducer):
/// kite_gemm.cuh's TmaRing over the stages of the prefetched loads at one
/// shared-memory offset (one load, or the same load of sibling loops, which
/// run one after the other), with its 2 * `stages` mbarriers at `barriers`.
/// Each side counts its uses of the ring: `consumed` (the computing
/// threads'), `produced` (the producer thread's).
struct Ring {
  int64_t offset = 0, stages = 2, stageBytes = 0, barriers = 0;
  std::string name, consumed, produced;
  /// Filled by the cluster's multicasts (cluster_size 2): its stages are
  /// free once every program of the cluster is done with them.
  bool cluster = false;
};

/// A prefetched load the producer copies by TMA into its ring: through
/// tensor-map parameter `map` over its tensor (`rank` dims), `panels` boxes
/// of 128 bytes of the staged columns by the staged rows, `panelElems`
/// apart in the stage; per tensor dim (outermost first), the tile dim it
/// is (-1 for a scalar subscript).
struct TmaCopy {
  int ring = 0;
  std::string map;
  int64_t rank = 0, panels = 1, panelElems = 0, rows = 0, cols = 0;
  SmallVector<int64_t> tileDimOf;
  /// A shared left operand's copy (planProducerLhs): boxes of 8 rows, each
  /// (its element offset in the stage, the tile row it starts at); empty
  /// for a prefetched operand's copy of whole panels.
  SmallVector<std::pair<int64_t, int64_t>> boxes;
  int64_t rowDim = 0; // the tile dim the boxes' rows run along
  /// The boxes' layout: m64 blocks a warpgroup; threads, elements a chunk
  /// and thread-index stride of the rows' context dim.
  int64_t MT = 1, T = 1, V = 1, S = 1;
  /// Where each 64-row block's boxes a = 0..7 start (a % 2) * splitH +
  /// (a / 2) * splitJ rows after its first (a multiple of 8): the rows of
  /// a block are 8 x 2 x 4 rows of strides 1, splitH and splitJ; 0 where
  /// they are not. `blockMap`: the tensor map that copies such a block in
  /// one box (TensorMapSpec::rowSplits), where the tensor allows it.
  int64_t splitH = 0, splitJ = 0;
  std::string blockMap;
  /// The maps cover a copy of the tensor with rows padded to 16 bytes
  /// (TensorMapSpec::staged): its rows are not 16-byte multiples.
  bool staged = false;
  /// Both programs of a cluster copy the same tile (cluster_size 2): each
  /// issues every other box, multicast into both.
  bool multicast = false;
};

/// A key loop kite-overlap-products split, while it is emitted
/// (emitOverlappedLoop): its early stage's first product, after whose issue
/// the late stage goes, and the late product, issued there and waited for
/// at the iteration's end into registers declared before the loop.
struct Overlap {
  Operation *early = nullptr, *late = nullptr;
  std::string iv;        // the C++ loop's iteration
  std::string sums, af;  // the late product's sums and A fragments
  Tile result;           // its result
  std::string drain;     // the wait for it and the copy of its sums into `result`
  size_t issueAt = std::string::npos; // where in the body its issue goes
  int issueIndent = 0;
  bool withLate = false; // this iteration has a late stage
  bool lateAlone = false; // the last tile's late stage, after the loop
  /// pingpong: the computing warpgroups take turns issuing the products.
  int64_t turns = 0;      // the warpgroups taking turns (0: none)
  std::string lateSlot;  // while it is emitted: its operand's ring slot, awaited
};

/// Where an access copies to instead of registers (a prefetched load):
/// element (row, col) of the load's dims `rowDim` and `colDim` at
/// `buf[row * ld + col]`, or `buf[sw128_index<swizzleRows>(row, col)]`.
struct CopyTarget {
  std::string buf;
  int64_t rowDim = 0, colDim = 0, ld = 0, swizzleRows = 0;
  /// If set, the index in `buf` of the element at register indices `k`
  /// (instead of the staged (row, col) of its coordinates).
  std::function<std::string(const Tile &t, ArrayRef<std::string> k)> indexAt;
};

/// A nested tile loop's bounds and variables, for copies of later
/// iterations.
struct LoopVars {
  std::string lower, upper, iv, count;
  int64_t blockSize = 1, lowerConst = -1, upperConst = -1;
};

/// The index of staged element (`row`, `col`): `row * ld + col`, or with
/// `swizzleRows` wgmma's 128-byte-swizzled `sw128_index`.
std::string stagedIndex(int64_t ld, int64_t swizzleRows, StringRef row, StringRef col);

/// Whether every tile of `span` (block size `bs`, its loop from `lower` to
/// `upperConst`, each -1 where not a constant) is full: no mask, no extent.
bool tilesAlwaysFull(Value span, int64_t bs, int64_t lower, int64_t upperConst);

/// Per dim of a top-level tile loop with body `body` (constant bounds
/// `lows`, `highs`, block sizes `bss`): whether its tiles run in reverse
/// (longest first): the nested loops at its last tile, the other dims at
/// their first, run more tiles than at its first (known at compile time).
SmallVector<bool> longestFirstDims(Block *body, ArrayRef<int64_t> lows, ArrayRef<int64_t> highs,
                                   ArrayRef<int64_t> bss);

/// The CUDA type of a kite element type.
std::string cType(Type t);
/// The type elementwise math runs in: f32 for 16-bit floats.
std::string computeType(Type t);
/// The type a reduction accumulates in (PyTorch: f32 for 16-bit floats,
/// i64 for integer sums).
std::string accType(Type t);
/// A CUDA literal of `v` (infinities and NaN as bit patterns).
std::string floatLiteral(double v);

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

/// Dynamic shared memory a block may use on sm_90 (227 KB).
constexpr int64_t kMaxSharedBytes = 232448;

class Emitter {
public:
  Emitter(func::FuncOp kernel, const EmitOptions &options)
      : kernel(kernel), options(options) {}

  FailureOr<CudaKernel> run();

private:
  func::FuncOp kernel;
  EmitOptions options;
  /// While a traced program (EmitOptions::trace) is emitted: the loops
  /// directly in its body, numbered in order (at most 14), and the program
  /// id its events carry.
  DenseMap<Operation *, int> tracedLoops;
  std::string tracedPid;
  /// A traced loop's timeline event (events 2 + 2i, 3 + 2i and 64 + i of
  /// loop i); nothing for another loop.
  enum class TraceAt { start, end, iteration };
  void traceLoop(Operation *loop, TraceAt at);
  /// The config kite-apply-config set (its `kite.config`), typed.
  Config config;
  CudaKernel result;
  int64_t numThreads = 128;
  /// The config's fast_math and tensor_cores.
  bool fastMath = false;
  /// The config's streaming: vector loads and stores evict first.
  bool streaming = false;
  /// Tensors whose atomic adds gather in shared memory (privatize_atomics),
  /// by pointer expression: the buffer, its element type and span.
  struct PrivateTarget {
    std::string buf;
    Type elem; // the tensor's
    Type acc;  // the copy's: f32 for 16-bit floats, else elem
    int64_t span = 0;
  };
  std::map<std::string, PrivateTarget> privates;
  /// Chooses the private targets and reserves their buffers below
  /// sharedBase; then zeroes them (before the program loop) and adds them
  /// to their tensors (after it).
  void planPrivateAtomics();
  void openPrivateAtomics();
  void flushPrivateAtomics();
  bool tensorCores = false;
  /// The config's min_programs_per_sm (__launch_bounds__'s second value).
  int64_t minPrograms = 1;
  /// A K loop runs as one of kite_gemm.cuh's main loops.
  bool usesGemm = false;
  /// The programs a main loop's K is split over (its kite.mainloop's
  /// split_k): program ids are blockIdx.x / splitK, kite_split the rest.
  int64_t splitK = 1;
  /// Config::stream_k: the product K loop whose iterations a StreamK
  /// schedule (kite_device.cuh) shares out, and its iterations a tile; the
  /// program loop then yields units (kite_pid, K tiles [kite_kb, kite_ke)).
  TileForOp streamKLoop;
  int64_t streamKIters = 0;
  /// Sets streamKLoop and streamKIters from kite-matmul-mainloop's mark.
  LogicalResult planStreamK();
  /// After the stream-K loop, on the computing threads: StreamK::finish on
  /// the unit's sums `acc` (a shared tile's last part to finish gets the
  /// whole sums), opening its `if` around the rest of the body (closed by
  /// emitTopLevelLoop).
  void emitStreamKFixup(const Tile &acc);
  bool streamKOpen = false;
  /// cluster_size 2: the dim of the (only) top-level loop whose neighbouring
  /// tiles a cluster's two programs take (-1: no clusters), and its span
  /// or index, on which a tile both programs copy does not depend.
  int64_t clusterDim = -1;
  Value clusterVar;
  /// Chooses clusterDim, or rejects the config's cluster_size.
  LogicalResult planCluster(Block *body, ArrayRef<std::string> counts,
                            ArrayRef<int64_t> order, int64_t group,
                            std::optional<int64_t> totalConst, size_t numLoops);
  /// Marks the TMA copies whose tiles do not depend on clusterVar as
  /// multicasts, and their rings as the cluster's (planProducer).
  void planMulticasts();
  /// One of them is warp-specialized (the only code that may run with a
  /// thread count that is not a power of two: 12 warps).
  bool specializedLoop = false;
  std::string body;
  int indent = 1;
  int nextName = 0;
  int64_t sharedBytes = 0;
  /// Bytes of statically declared shared memory (persistent_dynamic's
  /// program-id slots), which count against the same limit.
  int64_t staticSharedBytes = 0;
  /// Shared memory below this offset holds the private staging buffers of
  /// kite.mma products (planStagingBuffers) and privatized atomic targets;
  /// every other use starts here, or at 0 where none of those is live
  /// (scratchBase).
  int64_t sharedBase = 0;
  /// The staging buffers (rings, shared left operands, a product's own
  /// buffer) live only inside the nested loops that own them: outside
  /// those loops, and in a kernel with no privatized atomics and no
  /// product staged outside a loop, scratch (layout conversions,
  /// reductions, sorts) starts at offset 0 and shares their space. The
  /// loop that makes them live first waits (__syncthreads) for any such
  /// scratch use to finish (one emitted before it, or one a surrounding
  /// loop's next iteration may run), and the first such use after it waits
  /// for every thread to leave it.
  int liveStaging = 0;
  bool stagingOutsideLoops = false;
  bool lowScratchUsed = false;
  bool stagingFreed = false;
  /// Where scratch starts now (0 or sharedBase); notes a use at 0.
  int64_t scratchBase();
  /// Whether `loop` (a nested tile loop) owns staging buffers: its
  /// prefetch rings, shared left operands, or products' own buffers.
  bool ownsStaging(Operation *loop) const;
  /// Marks the staging buffers of `loop` live for the scope's lifetime.
  struct StagingScope {
    Emitter &e;
    bool owns;
    StagingScope(Emitter &e, Operation *loop);
    ~StagingScope() {
      if (owns && --e.liveStaging == 0)
        e.stagingFreed = true;
    }
  };
  /// The private staging buffer (its offset) of each kite.mma product
  /// that has one.
  DenseMap<Operation *, int64_t> stagingBuffers;
  /// Prefetched loads (kite.prefetch), and the load each product's right
  /// operand comes from.
  DenseMap<Operation *, Prefetch> prefetches;
  DenseMap<Operation *, Operation *> prefetchedOperand;
  /// The loops with prefetched loads: their loads in order, their bounds.
  DenseMap<Operation *, SmallVector<Operation *>> prefetchLoops;
  /// Left operands of wgmma products read from shared memory
  /// (kSharedLhsAttrName): their buffer's offset past the aligned base
  /// (per tile loop and value), and, per tile loop, the ones staged before
  /// it.
  DenseMap<std::pair<Operation *, Value>, int64_t> sharedLhs;
  DenseMap<Operation *, SmallVector<Value>> sharedLhsLoops;
  /// With a producer: a loop's shared left operand that an earlier sibling
  /// loop staged at the same offset from the same load (a reload by
  /// kite-split-masked-loops), which nothing else writes in between (the
  /// scratch lives above the staging buffers): not staged again
  /// (planRestaging).
  DenseSet<std::pair<Operation *, Value>> stagedBefore;
  /// The reload ops those stagings made dead, each with its earlier twin,
  /// whose tile it names instead of being emitted.
  DenseMap<Operation *, Operation *> reloadTwins;
  void planRestaging();
  /// Loads (and their conversions) of shared left operands read by nothing
  /// else: emitSharedLhs copies their tiles from global memory straight
  /// into the staging (cp.async), not through registers (planDirectLhs).
  DenseSet<Operation *> directLhs;
  void planDirectLhs();
  /// A shared left operand's direct copy (see directLhs).
  LogicalResult emitDirectLhs(Value lhs, StringRef buf, int64_t PK, int64_t MT);
  /// Set while an access iterates in a layout other than its result's
  /// (a direct copy of a shared left operand).
  std::optional<std::pair<Context *, SmallVector<Dim>>> accessLayout;
  DenseMap<Operation *, LoopVars> loopVars;
  /// The kernel has a producer warpgroup (hasKeyLoopProducer): threads
  /// numThreads to numThreads + 127, of which the first issues the TMA
  /// copies of every prefetched load (tmaCopies) into its ring, while the
  /// numThreads computing threads run the kernel's code, their barriers
  /// named barrier 1 over them alone (kite_sync).
  bool producer = false;
  SmallVector<Ring> rings;
  DenseMap<Operation *, TmaCopy> tmaCopies;
  /// The ops the producer runs: the nested loops around TMA-copied loads,
  /// the loads, and the scalar ops their bounds and subscripts need.
  DenseSet<Operation *> producerSlice;
  /// While the producer's programs are emitted (emitTopLevelLoop emits its
  /// slice of each body).
  bool producing = false;
  /// The registers a thread of the producer warpgroup keeps and a
  /// computing thread takes (setmaxnreg), within what the program's threads
  /// hold at launch (launchRegisters).
  std::pair<int64_t, int64_t> producerRegisters() const;
  /// The registers each thread holds at launch: __launch_bounds__' cap for
  /// numThreads (and the producer's 128) at min_programs_per_sm programs.
  int64_t launchRegisters() const;
  /// Why the config's producer cannot be (a config rejection), if it cannot.
  std::string producerRejection;
  /// The block barrier of the computing threads.
  std::string sync() const { return producer ? "kite_sync();" : "__syncthreads();"; }
  /// A new ring (its index in `rings`): `stages` stages of `stageBytes` at
  /// shared-memory offset `offset`, with fresh names for it and its counts.
  int addRing(int64_t offset, int64_t stages, int64_t stageBytes);
  /// With a producer: the rings, TMA copies and producer slice of the
  /// prefetched loads (after planStagingBuffers), or producerRejection.
  void planProducer(SmallVector<Operation *> loads);
  /// With a producer in persistent programs: a shared left operand loaded
  /// in a top-level loop's body (a direct copy, planDirectLhs) becomes the
  /// producer's TMA copy into a ring of its own (two stages), where its
  /// tensor and its layout allow; returns the load's part of the producer's
  /// slice, or null.
  Operation *planProducerLhs(Operation *loop, Value lhs);
  /// Whether the producer of persistent programs could copy `lhs` (a load
  /// in a top-level loop's body, 16-bit, in 128-byte panels, a layout with
  /// 8 consecutive tile rows a box) into the wgmma A fragments' row order:
  /// fills `c` (its boxes, rows and panels). From the IR alone, so that
  /// planStagingBuffers sizes the buffer; planProducerLhs checks the tensor.
  bool lhsBoxes(Value lhs, TmaCopy &c);
  /// Whether a TMA copy of 8-row boxes can put the tile of `lhs` (a
  /// product's left operand, 16-bit, in 128-byte panels, unit dims besides
  /// its rows and columns) in the wgmma A fragments' row order: its layout
  /// puts 8 consecutive tile rows on the 8 row groups of a warp's fragment
  /// rows. Fills `c`'s boxes, rows, columns, panels and row mapping.
  bool fragmentBoxes(Value lhs, TmaCopy &c);
  /// Whether `load`'s tensor can be read by TMA with its tile's `colDim`
  /// as the boxes' 128-byte panels: fills `c`'s rank and tileDimOf, or
  /// says why not.
  std::optional<std::string> tmaTensor(LoadOp load, int64_t colDim, TmaCopy &c);
  /// Whether the kernel stores to `tensor` (a kernel argument).
  bool writes(Value tensor);
  /// Whether the elements of TMA-copied `l`'s tile dim `tileDim` past the
  /// tile's extent lie past its tensor's end, where the copy fills zeros:
  /// the dim's subscript is the span of a tile loop that runs to the
  /// tensor dim's size. (Else the partial tile's tail is zeroed by hand.)
  bool pastExtentIsPastTensor(LoadOp l, const TmaCopy &c, int64_t tileDim);
  /// The tensor-map parameter of `load`'s tensor with boxes of 64 columns
  /// (`colDim`) by `boxRows` rows (c.rowDim), one per tensor and box.
  std::string tensorMap(LoadOp load, const TmaCopy &c, int64_t colDim, int64_t boxRows);
  /// The tensor-map parameter that copies a 64-row block of `c`'s boxes in
  /// one box (TmaCopy::blockMap), or "" where `c`'s blocks are not split
  /// evenly or `load`'s tensor cannot be viewed so (its rows must be its
  /// next-to-last dim, the dims before them contiguous).
  std::string blockTensorMap(LoadOp load, const TmaCopy &c);
  /// The name of a tensor-map parameter equal to `param` (tensor, box,
  /// swizzle, row splits), added under a fresh name if there is none.
  std::string addTensorMap(CudaKernel::Param param);
  /// A producer-copied shared left operand's ring, by buffer offset, and
  /// per top-level loop the rings its programs give back at their end.
  DenseMap<int64_t, int> lhsRings;
  DenseMap<Operation *, SmallVector<int>> programRings;
  /// The shared left operands lhsBoxes takes (per tile loop and value), with
  /// their boxes: planStagingBuffers gives their buffers two stages (the
  /// producer copies the next program's tile while this one's is read), and
  /// planProducerLhs makes the copies of those its tensor allows.
  DenseMap<std::pair<Operation *, Value>, TmaCopy> lhsCopyPlans;
  /// The shared left operand buffer at `offset`, of this program's stage.
  std::string sharedLhsBuffer(int64_t offset, StringRef type, int64_t eb);
  /// With a producer, before the program loop: the rings' objects, use
  /// counters and mbarriers.
  void emitRings();
  /// The producer's part of a top-level loop's body `block`: its slice, each
  /// TMA-copied load as the copy of its tile into the next stage of its
  /// ring.
  LogicalResult emitProducerBlock(Block &block);
  LogicalResult emitTmaCopy(Operation *load);
  /// Computing threads, before a product whose right operand a TMA ring
  /// holds: the wait for its stage (returned, as the buffer's name), the
  /// elements past a partial tile's extents zeroed.
  FailureOr<std::string> awaitRing(Operation *product, Type elem);
  /// ... and after it: the stages of the rings it read (its right
  /// operand's, its streamed left operand's) given back to the producer.
  void releaseRing(Operation *product);
  /// The producer's rings a product reads from: its right operand's, its
  /// streamed left operand's.
  SmallVector<const Ring *, 2> productRings(Operation *product);
  /// Computing threads, before the first loop that reads a producer-copied
  /// shared left operand (`load`, its buffer at `offset`): the wait for its
  /// stage, the rows past a partial tile's extent zeroed. The stage is
  /// given back at the program's end (programRings).
  LogicalResult awaitLhsRing(Operation *load, int64_t offset);
  /// The elements of a stage `buf` of a producer-copied left operand
  /// (`load`, copied as `c` says, in the A fragments' row order) that lie
  /// past its tile's extents inside the tensor, zeroed.
  LogicalResult zeroLhsPastExtents(Operation *load, const TmaCopy &c, StringRef buf);
  /// Streamed left operands: with a producer, a wgmma product whose left
  /// operand is loaded in the body of its key loop (a plain product loop's
  /// `x[tm, tk]`), by tile indices alone, reads it by descriptor from a
  /// ring the producer fills by TMA a stage per iteration, in the A
  /// fragments' row order (fragmentBoxes), instead of from registers. Per
  /// product its load (also in `prefetches`, so that it is emitted without
  /// registers), the conversion between load and product if any (a
  /// relabeling then), and the load's planned copy (its boxes).
  DenseMap<Operation *, Operation *> streamedLhs;
  DenseSet<Operation *> streamedConverts;
  DenseMap<Operation *, TmaCopy> streamedCopyPlans;
  /// In planStagingBuffers: whether `product`'s left operand can stream
  /// (see streamedLhs); if so records it, its ring to be placed as a
  /// prefetched load's of `stages` stages.
  bool planStreamedLhs(Operation *product, int64_t stages);
  /// Computing threads, before a product with a streamed left operand: the
  /// wait for its stage (returned, as the buffer's name), the elements past
  /// a partial tile's extents zeroed.
  FailureOr<std::string> awaitStreamedLhs(Operation *product, StringRef type);
  /// Computing threads, after such a wait, where `partial` holds: every
  /// element i of a staged tile of `rows` x `cols` (row r, column c) that
  /// `element` zeroes if it lies past the tile, then the zeros made
  /// visible to the async proxy and to every computing thread.
  void zeroStaged(StringRef partial, int64_t rows, int64_t cols,
                  llvm::function_ref<void()> element);
  /// The loop kite-overlap-products split, while it is emitted.
  std::optional<Overlap> overlap;
  /// The warpgroups of the turn sequence (pingpong) open in this program
  /// (0: none). A loop taking turns leaves it open, the first warpgroup's
  /// turn passed on but not taken, so that a loop after it (causal
  /// attention's diagonal tile) takes its turns on in the same order,
  /// without a barrier between (ending the sequence and starting a new
  /// one without one would let the last warpgroup's start arrive on the
  /// first's turn twice, before the first took the pass back). Every loop
  /// leaves it in that state on every path; the program's end takes the
  /// last pass back (closeTurns).
  int64_t openTurns = 0;
  void closeTurns();
  /// A key loop whose carried value (`arg`) only one wgmma product
  /// accumulates into (`acc = baddbmm(acc, a, b)`: the value read by
  /// nothing else, the product's result by nothing but the loop's yield),
  /// with both operands in producer-filled rings or shared memory
  /// (accumulatingProduct): the sums live in registers declared before the
  /// loop (`sums`), and each iteration's wgmmas are waited for in the next,
  /// which then gives back their stages, so that the tensor cores always
  /// have the next iteration's work queued; the last wait and the copy into
  /// the loop's result follow the loop. Set while the loop is emitted.
  struct CarriedProduct {
    Operation *op = nullptr;
    std::string sums, iv, count;
  };
  std::optional<CarriedProduct> carriedProduct;
  /// The product of `loop` that carriedProduct can take, with its carried
  /// value's index in `arg`; else null.
  Operation *accumulatingProduct(TileForOp loop, unsigned &arg);
  /// Where the sum of register `k` (of the product's result layout) lies in
  /// a wgmma accumulator array `sums` of m64 blocks: register (row 2i + h,
  /// column 2j + e) at [i][4j + 2h + e].
  static std::string wgmmaSumAt(StringRef sums, ArrayRef<std::string> k, int64_t rank);
  /// Set while a prefetched load's copy is emitted.
  std::optional<CopyTarget> copyTarget;
  std::vector<std::unique_ptr<Context>> contexts;
  DenseMap<Value, Tile> tiles;
  DenseMap<Value, std::string> scalars;
  DenseMap<Value, TensorRef> tensors;
  DenseMap<Value, SpanVars> spans;
  std::string contextDecls;

  // Output ---------------------------------------------------------------

  void line(const Twine &text) {
    // Every line repeats the directive: a lone #line would number the
    // generated lines after it as the source lines that follow.
    if (!sourceLine.empty()) {
      body.append(indent * 2, ' ');
      body += sourceLine;
      body += '\n';
    }
    body.append(indent * 2, ' ');
    body += text.str();
    body += '\n';
  }
  std::string fresh(StringRef prefix) {
    return (prefix + Twine(nextName++)).str();
  }
  /// With line directives on, the lines emitted from here on are
  /// attributed to `op`'s source line.
  void lineDirective(Operation *op) {
    if (!options.lineDirectives)
      return;
    if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
      sourceLine =
          llvm::formatv("#line {0} \"{1}\"", loc.getLine(), loc.getFilename().str()).str();
  }
  std::string sourceLine; // the current #line directive, or ""

  // Contexts and layouts ---------------------------------------------------

  /// The context of `layout` (one per thread arrangement, declared at the
  /// kernel's top on first use).
  Context *contextOf(BlockedLayoutAttr layout);
  /// The context and dims of a `#kite.blocked` layout, and of the layout in
  /// tile value `v`'s type (kite-assign-layouts gave it).
  std::pair<Context *, SmallVector<Dim>> layoutOf(Attribute layout);
  std::pair<Context *, SmallVector<Dim>> layoutOf(Value v);
  /// Set when an operand reaches a user in a layout it cannot read (a
  /// missing kite.convert_layout: a compiler bug, reported after emission).
  std::string layoutMismatch;

  /// Most elements one thread may hold for one tile: beyond this the
  /// unrolled code is too big to compile in reasonable time, and spills.
  static constexpr int64_t kMaxRegistersPerTile = 128;
  std::string tooBig; // set when a tile exceeds kMaxRegistersPerTile
  /// The tensors (by pointer expression) this program stored to since its
  /// last barrier; a load of one needs a barrier first (emitAccess).
  std::set<std::string> storedSinceBarrier;

  /// Fills in register extents and strides, names and declares the array
  /// (`zeroed`: with every element zero, see emitOverlappedLoop).
  Tile declare(Type elem, Context *ctx, SmallVector<Dim> dims, StringRef prefix = "v",
               bool zeroed = false);
  /// A tile's shape and layout with no registers of its own (a value that
  /// lives in shared memory only).
  Tile undeclared(Type elem, Context *ctx, SmallVector<Dim> dims);

  /// The value of an index expression that is an integer literal.
  static std::optional<int64_t> literal(StringRef e);

  /// True if `e` is one parenthesized expression, "(...)".
  static bool parenthesized(StringRef e);

  /// `k + e` for a per-thread index `k`, folded when `k` is a literal.
  static std::string plus(StringRef k, int64_t e);

  /// Emits nested loops over a tile's per-thread elements; `emitBody`
  /// receives the per-dim index expressions. With `step` > 1 dim `stepDim`
  /// (default: the last) advances `step` elements at a time (a vector
  /// access).
  void forEach(const Tile &t, llvm::function_ref<void(ArrayRef<std::string>)> emitBody,
               int64_t step = 1, int64_t stepDim = -1);

  /// The register index of element `k` of `t` (literal indices folded).
  std::string flat(const Tile &t, ArrayRef<std::string> k);

  /// The coordinate, within the tile, of element `k` along dim `i`.
  std::string coord(const Tile &t, int64_t i, StringRef k);
  /// Whether element `k` of dim `i` of `t` is inside its valid extent
  /// (`coord < extent`), written as the element's constant part against the
  /// extent less the thread's part, so that the thread's part is subtracted
  /// once for all its elements rather than a coordinate kept per element
  /// (an extent taken at launch).
  std::string inExtent(const Tile &t, int64_t i, StringRef k);

  /// `name[...]` of operand `o` at the element `k` of a tile whose dim
  /// `j + offset` is the operand's dim `j` (broadcasting unit dims).
  std::string at(const Tile &o, ArrayRef<std::string> k, int64_t offset);

  /// The `#kite.blocked` layout of tile `t`.
  static BlockedLayoutAttr layoutAttr(const Tile &t);

  /// True if `o` can be read at the elements of `r` with `at`
  /// (BlockedLayoutAttr::readableAt).
  bool compatible(const Tile &o, const Tile &r, int64_t offset);

  /// The condition under which this thread is the one that writes tile
  /// `t`'s elements (replicas stay quiet), or "" if every thread is.
  std::string owner(const Tile &t);

  /// Dynamic shared memory as `count` elements of C++ type `type`, each
  /// `bytes` long (8 where unknown: the widest kite type).
  std::string smem(const std::string &type, int64_t count, int64_t bytes = 8);
  /// ... of kite element type `elem`.
  std::string smem(Type elem, int64_t count);

  /// Moves `src` into the layout `dims` of context `ctx` through shared
  /// memory (row-major over the padded shape), or relabels it where the two
  /// layouts read alike.
  Tile convert(const Tile &src, Context *ctx, SmallVector<Dim> dims);

  /// Elements of `t`'s padded shape.
  int64_t paddedCount(const Tile &t);

  /// `o` in a layout readable at the elements of `r` (dims aligned at
  /// `offset`), converting through shared memory if needed.
  Tile readableAt(const Tile &o, const Tile &r, int64_t offset);

  // Values ------------------------------------------------------------------

  /// The C++ expression of scalar `v`.
  std::string scalar(Value v);

  /// A named variable holding scalar `v` (so it can be addressed).
  std::string scalarVar(Value v);

  /// An output the host allocates before the launch, passed as a parameter.
  LogicalResult addOutput(Value tensor, bool zeroed);

  // Kernel structure ----------------------------------------------------------

  /// Gives each kite.mma product that shares its block with another one a
  /// staging buffer of its own, below `sharedBase` (none in a kernel with a
  /// kite_gemm.cuh main loop, which assumes all of shared memory).
  void planStagingBuffers();
  /// A prefetched load where it stands in its loop: no code, a tile of its
  /// shape and layout with no registers (its product reads the ring).
  LogicalResult emitPrefetchedLoad(LoadOp load);
  /// After `product` (whose right operand is prefetched into a ring of
  /// one buffer): a barrier, then the next tile's copy into that buffer.
  LogicalResult refillPrefetched(Operation *product);
  /// The copy of prefetched `load`'s tile at loop iteration `iteration` into
  /// ring slot `slot` (C++ expressions), as cp.async 16 bytes at a time.
  LogicalResult emitPrefetchCopy(Operation *load, StringRef iteration, StringRef slot);
  /// Before a loop with prefetched `loads`: the copies of their first
  /// `stages - 1` tiles (`behind`'s one tile later: tile -1 is none), one
  /// cp.async group per load and iteration, in `loads`' order.
  LogicalResult emitPrefetchPrologue(ArrayRef<Operation *> loads, const LoopVars &lv,
                                     Operation *behind = nullptr);
  /// Before a tile loop (in sharedLhsLoops): its products' shared left
  /// operands written into their buffers, fenced for the async proxy.
  LogicalResult emitSharedLhs(Operation *loop);
  /// The wgmma descriptor of a shared left operand's m64 block `mi` (of
  /// MT a warpgroup) at K step `ks` (32 bytes of its `eb`-byte elements).
  std::string sharedLhsDescriptor(StringRef buffer, int64_t PK, int64_t MT, StringRef mi,
                                  StringRef ks, int64_t eb);
  /// Loops over a tensor-core left operand's A fragments (K steps `ks` of
  /// PK / 16, m16 tiles `mi` of MT): `body(f, packed)` for each of a
  /// thread's 4 packed pairs.
  void forEachLeftFragment(const Tile &a, int64_t rank, int64_t PK, int64_t MT, StringRef ks,
                           StringRef mi, llvm::function_ref<void(int, StringRef)> body);
  /// At a product whose right operand is prefetched: waits for this
  /// iteration's copy, the barrier, then issues the copy `stages - 1`
  /// iterations ahead; returns the slot's pointer.
  FailureOr<std::string> awaitPrefetched(Operation *product, Type elem);
  /// A loop kite-overlap-products marked: its late stage one iteration
  /// behind the early one (Overlap.cpp).
  LogicalResult emitOverlappedLoop(TileForOp loop);
  /// Before it: the late product's sums, A fragments and result, which
  /// live from one iteration to the next (`zeroed`: with a value, in a
  /// persistent program).
  void declareLateProduct(bool zeroed);
  /// The late stage of the iteration before `iv`'s, in its own block: the
  /// loop's span and iteration redefined (shadowed) for it, its ring's slot
  /// awaited and refilled, then `ops` (none: only the ring's copies) with
  /// the early values they read from `carries`.
  LogicalResult emitLateStage(TileForOp loop, ArrayRef<Operation *> ops,
                              const DenseMap<Value, Tile> &carries, const SpanVars &span,
                              const LoopVars &lv);
  /// The pointer to shared memory at `offset`, from kite_smem or (wgmma's
  /// swizzled buffers) its 1024-byte aligned base.
  std::string sharedAt(int64_t offset, bool aligned, StringRef type);
  LogicalResult emitPrologue();
  LogicalResult emitTopLevelLoops();
  /// Opens the loop over program ids of a persistent `pidType` (returns the
  /// C++ loops to close) and sets the grid (from `totalConst`, -1 where the
  /// count is taken at launch).
  FailureOr<int> openProgramLoop(StringRef pidType, StringRef totalPrograms, int64_t totalConst,
                                 size_t numLoops, ArrayRef<std::string> firstCounts);
  /// One top-level loop: the programs [offset, offset + total) run its
  /// body. Bounds and counts as TopLevelLoop (Loops.cpp) holds them.
  LogicalResult emitTopLevelLoop(Operation *loopOp, Block *body, ArrayRef<int64_t> lows,
                                 ArrayRef<int64_t> highs, ArrayRef<std::string> highExprs,
                                 ArrayRef<int64_t> endDivisors, ArrayRef<int64_t> blockSizes,
                                 ArrayRef<std::string> counts, StringRef offset,
                                 StringRef total, ArrayRef<int64_t> order, int64_t group,
                                 bool xyz);
  /// The tile index along each dim of the program `kite_rest` (loop order,
  /// L2 grouping, or the block index's axes for xyz); counts as C++.
  FailureOr<SmallVector<std::string>> decomposeProgramId(Operation *loopOp,
                                                         ArrayRef<std::string> counts,
                                                         ArrayRef<int64_t> order,
                                                         int64_t group, bool xyz);
  LogicalResult emitBlock(Block &block);
  LogicalResult emitOp(Operation *op);
  LogicalResult emitScalarOp(Operation *op);
  LogicalResult emitNestedTileFor(TileForOp loop);
  LogicalResult emitMainloop(TileForOp loop, DictionaryAttr plan);
  LogicalResult emitNestedGridFor(GridForOp loop);
  LogicalResult emitScfFor(scf::ForOp loop);
  LogicalResult emitScfIf(scf::IfOp op);
  SmallVector<Tile> declareCarried(ValueRange inits, Block::BlockArgListType args,
                                   Operation *op);
  LogicalResult yieldCarried(ArrayRef<Tile> carried, ValueRange values,
                             Block::BlockArgListType args);
  /// Emits a loop's body and yield, closes its `opened` C++ loops, and binds
  /// the loop's results to the carried variables.
  LogicalResult finishLoop(Block &body, ArrayRef<Tile> carried,
                           Block::BlockArgListType iterArgs, ResultRange results,
                           int opened);
  void defineSpan(Value span, StringRef begin, StringRef upper, int64_t bs,
                  int64_t lower, int64_t upperConst, StringRef id, StringRef count);
  /// Dim `d` of nested tile loop `loop`: its bounds, block size and a fresh
  /// iteration variable, with its tile count emitted. Every nested loop's
  /// count is made here, so that a producer's slice runs each loop's tiles
  /// exactly as the computing threads do.
  FailureOr<LoopVars> emitLoopCount(TileForOp loop, unsigned d);
  /// Opens the C++ loop over `lv`'s tiles and defines dim `d`'s span in it.
  void openTileLoop(TileForOp loop, unsigned d, const LoopVars &lv);

  // Tile ops --------------------------------------------------------------------

  FailureOr<Tile> subscriptShape(Operation *op, Value tensor,
                                 ArrayRef<Subscript> subs, Type resultElem,
                                 SmallVector<int64_t> &shape,
                                 SmallVector<std::string> &extents);
  /// The elements an access in layout `t` can move with one instruction
  /// along the tensor's contiguous dim: at most the layout's chunk (or
  /// `cap`, where given), and as many as the alignment of the data, the
  /// strides, the tile's begins and sizes allow. `contiguous`, where given,
  /// says whether the tile's last dim runs along the tensor's contiguous
  /// dim with no element masked against the tensor (whatever the alignment).
  int64_t vectorWidth(const TensorRef &ref, ArrayRef<Subscript> subs, const Tile &t,
                      const llvm::SmallDenseSet<int32_t> &checked, int64_t cap = 0,
                      bool *contiguous = nullptr);
  LogicalResult emitAccess(Operation *op, Value tensor, ArrayRef<Subscript> subs,
                           Value mask, Value value, Value result,
                           std::optional<AtomicKind> atomic);
  void readGathers(Access &a);
  /// A store marked kite.bulk_store whose tile rows are whole, aligned rows
  /// of its tensor: the tile into shared memory, then a bulk copy per row.
  /// False (nothing emitted) where the rows do not qualify.
  bool emitBulkStore(const Access &a, ArrayRef<int64_t> shape);
  /// Store `a`'s value at `e` elements past `k` along the tile's last dim,
  /// converted to the tensor's dtype.
  std::string storedElement(const Access &a, ArrayRef<std::string> k, int64_t e);
  /// A store whose threads hold 4- or 8-byte chunks along the contiguous
  /// dim, consecutive lanes holding consecutive chunks: lanes exchange
  /// their chunks by shuffles (exchange_segments) so that each stores 16
  /// bytes at once, realigned (store_16_realigned) where rows do not start
  /// 16-byte aligned or the tile's columns are masked. False (nothing
  /// emitted) where the layout does not allow it, or where aligned rows'
  /// lanes already store whole 128-byte lines.
  bool emitExchangeStore(const Access &a);
  std::string elementOffset(const Access &a, ArrayRef<std::string> k,
                            SmallVector<std::string> &bounds);
  void emitAccessElement(const Access &a, ArrayRef<std::string> k, const std::string &offset,
                         ArrayRef<std::string> bounds);
  LogicalResult emitElementwise(Operation *op, ArrayRef<Value> operands,
                                llvm::function_ref<std::string(ArrayRef<std::string>)> expr,
                                Type resultElem);
  LogicalResult emitTensorOp(Operation *op);
  LogicalResult emitSpanOp(Operation *op);
  LogicalResult emitUnary(UnaryOp op);
  /// How emitScanLines scans: the values (`acc`, `bytes` each in shared
  /// memory), the op (its type, an object of it, its identity), the value
  /// of the element at a result index and coordinate along the dim, and
  /// what to do with the scanned value there.
  struct ScanSpec {
    std::string acc, opType, op, identity;
    int64_t bytes = 8;
    std::function<std::string(ArrayRef<std::string>, const std::string &)> element;
    std::function<void(ArrayRef<std::string>, const std::string &)> write;
  };
  void emitScanLines(const Tile &src, int64_t dim, const ScanSpec &spec);
  LogicalResult emitScan(ScanOp op);
  LogicalResult emitAssociativeScan(AssociativeScanOp op);
  LogicalResult emitSort(SortOp op);
  LogicalResult emitBinary(BinaryOp op);
  /// Bounds of the kernel's integer scalars and tiles (IndexRanges::of,
  /// elementsOf): a comparison of index tiles inside int32 compares 32-bit
  /// values (causal attention's mask: one ISETP an element, not two).
  IndexRanges indexRanges;
  LogicalResult emitReduce(ReduceOp op);
  LogicalResult emitMatmul(Operation *op, Value acc, Value lhs, Value rhs,
                           int64_t rank);
  LogicalResult emitTensorCoreProduct(Operation *op, Value acc, Value lhs, Value rhs,
                                      int64_t rank);
  LogicalResult emitWgmmaProduct(Operation *op, Value acc, Value lhs, Value rhs,
                                 int64_t rank);
  /// Makes `bs` the shared-memory buffer a kite.mma product reads its
  /// right operand `b` from: its prefetched ring's slot (awaitPrefetched;
  /// `bs` renamed), else one named `bs`, staged now as `staged` says, with
  /// the barriers around it.
  LogicalResult stageProductOperand(Operation *op, const Tile &b, int64_t rank,
                                    const StagedOperand &staged, bool wgmma, std::string &bs);
  /// Declares a kite.mma product's result and checks that its tiles are in
  /// the tensor cores' layout (on `wgmma`, also N <= 256, warpgroups).
  FailureOr<RegisterProduct> beginRegisterProduct(Operation *op, Value acc, Value lhs,
                                                  Value rhs, int64_t rank, bool wgmma);
  /// Element (`row`, `col`) of a kite.mma product's left operand `a` as
  /// registers (row and column register indices), zero past K's valid
  /// extent.
  std::string leftOperandElement(const Tile &a, int64_t rank, StringRef row, StringRef col);
  /// Declares the result tile of product `op` (valid extents from the
  /// accumulator, else from the operands `a` and `b`); sets `acc` to the
  /// accumulator's tile if it has one.
  Tile declareProduct(Operation *op, Value accValue, const Tile &a, const Tile &b,
                      int64_t rank, std::optional<Tile> &acc);
  /// Stages a product's right operand `b` into `buf` (stageOperand): K rows
  /// of N, or `transposed`, N rows of K; `ld` elements a row, or with
  /// `swizzleRows` in wgmma's 128-byte-swizzled layout of that many rows.
  void stageRightOperand(const Tile &b, const std::string &buf, int64_t rank, bool transposed,
                         int64_t ld, bool mma, int64_t swizzleRows = 0);
  void stageOperand(const Tile &t, const std::string &buf, int64_t kDim, int64_t rowDim,
                    int64_t colDim, int64_t ld, bool mma, int64_t swizzleRows = 0);
  LogicalResult emitFull(FullOp op);
  LogicalResult emitShape(Operation *op);
};

} // namespace kite::emit

#endif // KITE_LOWERING_EMIT_EMITTER_H
