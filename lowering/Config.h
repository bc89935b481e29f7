//===- Config.h - a kernel's launch and tiling config -----------*- C++ -*-===//
//
// This file declares `Config`, the JSON object that steers lowering (DESIGN
// section 2.1; Helion's key names where the idea is the same), its parsing
// and validation, and the default config chosen from a kernel's IR.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_CONFIG_H
#define KITE_LOWERING_CONFIG_H

#include "ir/KiteDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace kite {

/// The largest block size (and chunk, and L2 group) a config may give: 2^24
/// elements, more than any tile that fits a program.
constexpr int64_t kMaxBlockSize = int64_t(1) << 24;

struct Config {
  /// One per `kite.block_size`, by id. Powers of two.
  std::vector<int64_t> block_sizes;
  /// Threads per program are 32 * num_warps.
  int64_t num_warps = 4;
  int64_t num_stages = 1;
  /// flat, xyz, persistent_blocked, persistent_interleaved,
  /// persistent_dynamic (each program takes the next id as it finishes one).
  std::string pid_type = "flat";
  /// Per top-level loop: the order in which its dims map onto program ids
  /// (the first varies fastest). Empty: the source order, last dim fastest.
  std::vector<std::vector<int64_t>> loop_orders;
  /// Per top-level 2-D loop: group size for L2 swizzling (1 = none).
  std::vector<int64_t> l2_groupings;
  /// Per reduction: null = the whole row in registers, or a chunk size.
  std::vector<std::optional<int64_t>> reduction_loops;
  /// pointer or tma.
  std::string indexing = "pointer";
  /// Threads along a tile's innermost dim (a power of two); the others
  /// take the outer dims (with 32, a warp per row). Unset: as many as the
  /// dim has 16-byte vectors for, up to all of them.
  std::optional<int64_t> inner_threads;
  /// exp on f32 through the hardware's approximate exp2 (`__expf`, as
  /// Triton's tl.exp), about 2 ulp plus the rounding of x * log2(e).
  bool fast_math = false;
  /// Atomic adds into a small tensor (up to 48 KB, e.g. a histogram's
  /// bins) gather in a shared-memory copy per program, zeroed at the start
  /// and added to the tensor once at the end (only the elements that
  /// changed), instead of one global atomic per lane. For 32- and 64-bit
  /// integers and floats; a tensor that is also loaded or stored keeps
  /// global atomics.
  bool privatize_atomics = true;
  /// Vector loads and stores of tensors with the streaming cache operator
  /// (.cs, evict first): for data touched once; it can cost the L2 hits of
  /// a looped reduction's later passes.
  bool streaming = false;
  /// L2 eviction priorities for loads (kite-cache-hints): "none"; "reuse"
  /// (evict_last on data the program reads again or every program reads,
  /// evict_first on its last read, as Triton's eviction_policy in
  /// Inductor's reductions); "keep_loads" (every load evict_last: a
  /// kernel's inputs stay in L2 ahead of what it writes).
  std::string l2_hints = "none";
  /// Each load issued as early as its operands allow (kite-early-loads):
  /// above reductions and their barriers, at the cost of registers live
  /// across them.
  bool early_loads = false;
  /// Matrix products of f16/bf16 tiles on tensor cores (mma.sync m16n8k16,
  /// f32 accumulation) where the tile shapes allow 16x8x16 steps.
  bool tensor_cores = false;
  /// With tensor_cores, pipelined K loops (kite-matmul-mainloop) use
  /// Hopper's warpgroup MMA (wgmma.mma_async, sm_90a) where the tile
  /// allows: 4 warps per warpgroup, 64-row blocks, BN a multiple of 64 up to
  /// 256, BK = 64. Products from registers (kite.mma) use it too where the
  /// threads form whole warpgroups and the staged operand fills 128-byte
  /// swizzle rows.
  bool wgmma = false;
  /// With wgmma and 8 warps: a producer warpgroup copies the operands and a
  /// consumer warpgroup multiplies, synchronized by mbarriers (BM 64 or
  /// 128, at most 128 sums a thread).
  bool warp_specialize = false;
  /// With wgmma and prefetched operands: a key loop whose last product
  /// accumulates into a loop-carried tile and which has an earlier product
  /// runs that last product one iteration late (kite-overlap-products):
  /// issued after the next iteration's first product, it runs on the
  /// tensor cores while that iteration's elementwise work runs.
  bool overlap_products = false;
  /// With a key loop's producer (warp_specialize), two or more computing
  /// warpgroups and overlap_products: the warpgroups take turns issuing
  /// each iteration's products (named barriers), so that one's softmax runs
  /// while another's products run on the tensor cores. Loops whose tiles
  /// may be partial keep their order.
  bool pingpong = false;
  /// At least this many programs resident on an SM: the kernel's
  /// `__launch_bounds__(threads, N)`, so that ptxas keeps registers at or
  /// under 65536 / (threads * N) (spilling past it). 1: no limit beyond
  /// the block size's.
  int64_t min_programs_per_sm = 1;
  /// Splits a product's K loop (a kite_gemm.cuh main loop directly in the
  /// kernel's only top-level loop) over this many programs per output
  /// tile, for shapes with fewer tiles than SMs (128 x 8192 x 8192): each
  /// program sums its share of K into a workspace, and the tile's last
  /// program to finish adds the shares in split order (the same sums at
  /// every run) and runs the rest of the body. 1: no split.
  int64_t split_k = 1;
  /// With generic_mainloop in persistent_interleaved programs: a stream-K
  /// schedule of the kernel's one product K loop (kite_device.cuh's
  /// StreamK). The tiles of whole waves run whole; the K iterations of the
  /// tiles left over (fewer than the programs) are shared out evenly, so
  /// that the last wave does not leave SMs idle (512 tiles on 132 SMs are
  /// 3.88 waves). A shared tile's parts store their sums in a workspace,
  /// and the last to finish adds them in K order (the same sums at every
  /// run) and runs the rest of the body.
  bool stream_k = false;
  /// On sm_90: a store of a tile whose rows are whole rows of its tensor
  /// (the last subscript `all`, contiguous, 16-byte multiples) writes the
  /// tile into shared memory and copies each row with one bulk copy
  /// (cp.async.bulk), which the copy engine writes out while the program
  /// goes on, instead of each thread storing its elements (a product's
  /// accumulator layout stores 4 bytes a thread at a time).
  bool bulk_stores = false;
  /// A plain product K loop (`acc = addmm(acc, x[tm, tk], y[tk, tn])`)
  /// whose operands TMA reads, in place or from a padded copy
  /// (streamsAsKeyLoop), runs as ordinary kernel code instead of
  /// kite_gemm.cuh's main loop: on wgmma with the sums in registers (the
  /// epilogue reads them there, no round trip through shared memory),
  /// with warp_specialize both operands copied by
  /// the producer's TMA into rings, and with any pid_type (a persistent
  /// program's producer fills the next tile's stages while this one's
  /// epilogue runs). Other plain product loops keep the main loop.
  bool generic_mainloop = false;
  /// Programs per thread-block cluster (sm_90a, with a key loop's producer,
  /// warp_specialize): 1 or 2. The two programs of a cluster take
  /// neighbouring tiles along their loop's fastest-varying dim, and an
  /// operand tile both read (its subscripts and its loops' bounds do not
  /// depend on that dim: a product's B tile for two M tiles) arrives in both
  /// programs' shared memory by one TMA multicast, each program issuing
  /// half of its boxes: the tile crosses from L2 once for the two.
  int64_t cluster_size = 1;

  std::string toJson() const;
};

/// Parses a config; unknown keys and ill-typed values are errors that name
/// the key. Keys not given keep their defaults.
mlir::FailureOr<Config> parseConfig(llvm::StringRef json, std::string &error);

/// The config kite-apply-config set on `kernel` (its `kite.config`
/// attribute), parsed: nullopt where there is none; failure, with the error
/// emitted on the kernel, where it does not parse.
mlir::FailureOr<std::optional<Config>> appliedConfig(mlir::func::FuncOp kernel);

/// Reports that the config does not fit the kernel at `op`: marks its module
/// (`configRejected`) and returns the error to stream the reason into.
/// kite_compiler then throws kite::ConfigRejected instead of kite::Error.
mlir::InFlightDiagnostic emitConfigRejection(mlir::Operation *op);
/// Whether lowering `module` failed by emitConfigRejection.
bool configRejected(mlir::ModuleOp module);

/// The kernel a lowering pass works on (the only `kite.kernel` function of
/// `module`) and its applied config (nullopt: none yet).
struct ConfiguredKernel {
  mlir::func::FuncOp kernel;
  std::optional<Config> config;
};
/// Failure, with the error emitted, where `module` has no kernel or its
/// config does not parse.
mlir::FailureOr<ConfiguredKernel> configuredKernel(mlir::ModuleOp module);

/// Checks a config against a kernel: one block size per `kite.block_size`,
/// powers of two within each one's bounds, thread counts the GPU allows.
mlir::LogicalResult validateConfig(mlir::func::FuncOp kernel,
                                   const Config &config, std::string &error);

/// The kernel's `kite.block_size` ops, by id.
llvm::SmallVector<BlockSizeOp> blockSizeOps(mlir::func::FuncOp kernel);

/// The tile loop a block size sizes, and which of its dims (the first such
/// loop; a null loop if none).
std::pair<TileForOp, int64_t> loopOfBlockSize(BlockSizeOp op);

/// The kernel's reduction dimensions: the distinct sizes of tensor
/// dims that a load inside a loop reads whole (`x[tn, all]`, or dims left
/// unsubscripted), in the order they first appear; a size taken at launch
/// is ShapedType::kDynamic (one entry for all such; see
/// dynamicReductionOrigin). `reduction_loops[i]` applies to dimension i.
/// Needs a specialized kernel.
llvm::SmallVector<int64_t> reductionDims(mlir::func::FuncOp kernel);
/// Where the first size taken at launch that a load inside `root` (a kernel,
/// or a loop) reads whole comes from (the dimension the kDynamic entry of
/// reductionDims loops over), or none.
std::optional<std::pair<mlir::Value, int64_t>> dynamicReductionOrigin(mlir::Operation *root);
/// The bucket of that size where the plan holds such rows whole (a tile as
/// long as the bucket's upper end, masked past the size: sizeBound), or 0.
int64_t dynamicReductionBound(mlir::Operation *root);

/// True if kite-reduction-loops can loop over chunks of the reduction
/// dimension of `size` (every use of a whole-row value is one it rewrites).
bool reductionLoopSupported(mlir::func::FuncOp kernel, int64_t size);

/// An operand of a matrix product that is a load of a kernel parameter
/// subscripted by tile indices only, or such a load with its last two dims
/// swapped (`w[tn, tk].transpose(0, 1)`: `transposed`, the tensor holds the
/// operand's columns as its rows).
struct ProductOperand {
  LoadOp load;
  mlir::BlockArgument tensor; // the kernel parameter
  /// The spans of the operand's dims, as the product sees them (the load's,
  /// with the last two swapped when `transposed`).
  llvm::SmallVector<mlir::Value> spans;
  bool transposed = false;
  mlir::Value value; // the product's operand (the load, or its transpose)
  /// The load's subscript of the product's dim `d`.
  mlir::Value loadSpan(int64_t d) const;
  /// The tensor dim the product's dim `d` indexes.
  int64_t tensorDim(int64_t d) const;
};
std::optional<ProductOperand> productOperand(mlir::Value v);

/// Why `loop` is not the K loop of a matrix product that only accumulates,
/// `acc = addmm(acc, x[tm, tk], y[tk, tn])` (or baddbmm) into an f32
/// accumulator, on bf16/f16 kernel parameters, or on 8-bit float ones
/// (e4m3, e5m2) with the right operand K-major (`w[tn, tk].transpose(0,
/// 1)`) that TMA can copy (only the TMA main loop runs them); "" if it is.
/// Needs known element types and ranks (a specialized kernel).
std::string whyNotPlainProductLoop(TileForOp loop);

/// The left and right operands of plain product loop `loop`'s product
/// (whyNotPlainProductLoop(loop) is "").
std::pair<ProductOperand, ProductOperand> plainProductOperands(TileForOp loop);

/// True if the only main loop plain product loop `loop` has is the TMA one
/// (kite_gemm.cuh's wgmma_tma_mainloop with BKMajor): 8-bit operands, or a
/// right operand stored K-major.
bool onlyTmaMainLoop(TileForOp loop);

/// How a plain product loop's operand tiles can be copied to shared memory
/// (kite_gemm.cuh's GemmCopy): "async" (16-byte cp.async: contiguous rows,
/// 16-byte aligned data, rows and tile starts), "shifted" (contiguous rows
/// of static strides of at least 32 bytes) or "elements"; whether an
/// operand that is not "async" has contiguous rows (a stride of 1 along
/// its last dim), so that TMA can copy it from a padded copy made at
/// launch (a staged tensor map); and whether the loops run over whole dims
/// of both tensors (TMA boxes take the tensors' bounds as theirs). TMA
/// copies (`tma()`) need whole dims and each operand "async" or stageable.
struct OperandCopies {
  llvm::StringRef a, b;
  bool stageA = false, stageB = false;
  bool wholeDims = false;
  bool tma() const {
    return wholeDims && (a == "async" || stageA) && (b == "async" || stageB);
  }
};
OperandCopies operandCopies(TileForOp loop, const ProductOperand &a, const ProductOperand &b);

/// Whether plain product loop `loop` can run as ordinary kernel code with
/// both operands streamed by TMA (Config::generic_mainloop): 16-bit
/// operands, each "async" (contiguous, 16-byte aligned rows) or staged
/// (contiguous rows that the launch copies into rows padded to 16 bytes; a
/// K-major right operand only in place). Others keep the main loop under
/// generic_mainloop.
bool streamsAsKeyLoop(TileForOp loop);

/// Why split_k cannot split main loop `loop` of `kernel`, or "": each of a
/// tile's programs runs the loop's top-level loop body up to the main loop
/// and only the last runs the rest, so the main loop must sit directly in
/// the kernel's only top-level loop with nothing stored before it.
std::string whyNotSplittable(mlir::func::FuncOp kernel, TileForOp loop);

/// The bytes of one element of the operands of plain product loop `loop`
/// (2 for 16-bit floats, 1 for 8-bit ones). A main-loop stage is 128 bytes
/// of K: 64 elements or 128.
int64_t productElementBytes(TileForOp loop);

/// True if some loop of `kernel` is such a K loop.
bool hasPlainProductLoop(mlir::func::FuncOp kernel);

/// True if the kernel has a matrix product of f16 or bf16 tiles
/// (tensor_cores applies).
bool hasHalfMatmul(mlir::func::FuncOp kernel);

/// The left operand of a matrix product (dot, matmul, addmm, bmm, baddbmm:
/// the one after the accumulator, if any); null for any other op.
mlir::Value matrixProductLhs(mlir::Operation *op);

/// True if `arch` (an NVRTC target, "sm_90a") has Hopper's warpgroup MMA,
/// mbarrier transactions and TMA, which the wgmma, warp-specialized and TMA
/// main loops need.
bool hasWgmma(llvm::StringRef arch);

/// True if `arch` has bulk copies between shared and global memory
/// (cp.async.bulk: sm_90 and later), which bulk_stores needs.
bool hasBulkCopies(llvm::StringRef arch);

/// True if `config` gives `kernel` a producer warpgroup for its key loops:
/// warp_specialize with wgmma in a kernel that kite-matmul-mainloop left no
/// main loop in (a main loop's own producer is its template's). The
/// producer (the last 4 of num_warps) copies the loops' prefetched operand
/// tiles by TMA; the other warps compute.
bool hasKeyLoopProducer(const Config &config, mlir::func::FuncOp kernel);

/// The threads of a program that compute: 32 * num_warps, less the key
/// loops' producer warpgroup where there is one. Layouts spread tiles over
/// them.
int64_t computeThreads(const Config &config, mlir::func::FuncOp kernel);

/// A reasonable config for a specialized kernel without tuning, on `arch`.
/// With `speculative`, it may hold choices that CUDA emission can still
/// turn down for this kernel (a key loop's producer warpgroup: whether its
/// loads can be TMA copies is known only there); the compiler lowers a
/// launch without a config under the speculative default first and, if it
/// is rejected, under the plain one (speculative = false).
Config defaultConfig(mlir::func::FuncOp kernel, llvm::StringRef arch = "sm_90a",
                     bool speculative = true);

/// The registers a thread of a program of `threads` threads may use under
/// `config`: 65536 an SM over min_programs_per_sm programs (what
/// __launch_bounds__ tells ptxas), in steps of 8, at most 255.
int64_t registersPerThread(const Config &config, int64_t threads);

} // namespace kite

#endif // KITE_LOWERING_CONFIG_H
