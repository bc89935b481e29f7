//===- MatmulMainloop.cpp - mark pipelined tensor-core K loops ------------===//
//
// This file implements `kite-matmul-mainloop` (see Passes.td): it finds the
// K loops that one of kite_gemm.cuh's main loops can run whole and records
// which and how (kind, warp grid or warpgroups, stages, copy widths) in a
// `kite.mainloop` attribute that CUDA emission follows.
//
//===----------------------------------------------------------------------===//

#include "lowering/Config.h"
#include "lowering/DynamicShapes.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"


namespace kite {
#define GEN_PASS_DEF_KITEMATMULMAINLOOP
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

namespace {

/// The constant lower bound of the tile loop dim that defines `span`, if
/// any.
std::optional<int64_t> spanLowerBound(Value span) {
  auto [loop, dim] = getSpanLoop(span);
  if (!loop)
    return std::nullopt;
  return getConstantIntValue(loop.getLowerBounds()[dim]);
}

/// True if the tile loop dim that defines `span` runs over [0, size) with
/// constant bounds: a TMA box past the loop's end then lies past the
/// tensor's, where the copy fills zeros.
bool spanCoversDim(Value span, Value tensor, int64_t tensorDim) {
  return spanLowerBound(span) == 0 && spanRunsToSize(span, tensor, tensorDim);
}

} // namespace

OperandCopies kite::operandCopies(TileForOp loop, const ProductOperand &a,
                                  const ProductOperand &b) {
  auto func = loop->getParentOfType<func::FuncOp>();
  int64_t rank = a.spans.size();
  int64_t bytes = productElementBytes(loop);
  Value k = loop.getSpans()[0];
  // How each operand's tiles are copied (kite_gemm.cuh's GemmCopy):
  // "async" (16-byte cp.async) for contiguous rows with 16-byte aligned data
  // and row strides and tile columns starting at multiples of 16 bytes;
  // "shifted" (aligned 16-byte loads shifted into place) for contiguous
  // rows of any static stride of at least 32 bytes on 16-byte aligned
  // data; "elements" otherwise.
  auto copyKind = [&](const ProductOperand &o, Value colSpan) -> StringRef {
    unsigned i = o.tensor.getArgNumber();
    SmallVector<StrideFact> s = argStrides(func, i);
    auto align = func.getArgAttrOfType<IntegerAttr>(i, "kite.align");
    if (s.empty() || !align || align.getInt() < 16)
      return "elements";
    if ((int64_t)s.size() != rank || s[rank - 1].value != 1)
      return "elements";
    std::optional<int64_t> lower = spanLowerBound(colSpan);
    ArrayRef<StrideFact> outer = ArrayRef(s).drop_back();
    int64_t perChunk = 16 / bytes; // elements in 16 bytes
    if (llvm::all_of(outer, [&](const StrideFact &x) { return x.divisor % perChunk == 0; }) &&
        lower && *lower % perChunk == 0)
      return "async";
    // gemm_copy_shifted's aligned reads around a row's last chunk stay
    // inside the next row: constant strides of at least 32 bytes.
    if (llvm::all_of(outer, [&](const StrideFact &x) { return x.value && *x.value * bytes >= 32; }))
      return "shifted";
    return "elements";
  };
  // The span of each operand's tensor's last (contiguous) dim: K for A and
  // a K-major B, N for an MN-major B.
  // Rows TMA can take from a padded copy: a stride of 1 along the last dim.
  auto contiguousRows = [&](const ProductOperand &o) {
    SmallVector<StrideFact> s = argStrides(func, o.tensor.getArgNumber());
    return (int64_t)s.size() == rank && s[rank - 1].value == 1;
  };
  OperandCopies out;
  out.a = copyKind(a, k);
  out.b = copyKind(b, b.loadSpan(rank - 1));
  out.stageA = out.a != "async" && contiguousRows(a);
  out.stageB = out.b != "async" && contiguousRows(b);
  auto shapeA = cast<kite::TensorType>(a.tensor.getType()).getShape();
  auto shapeB = cast<kite::TensorType>(b.tensor.getType()).getShape();
  // B's K dim: its tensor's rows (MN-major) or its last dim (K-major).
  int64_t bK = b.tensorDim(rank - 2), bN = b.tensorDim(rank - 1);
  bool wholeDims = spanCoversDim(a.spans[rank - 2], a.tensor, rank - 2) &&
                   spanCoversDim(k, a.tensor, rank - 1) &&
                   !ShapedType::isDynamic(shapeB[bK]) && shapeB[bK] == shapeA[rank - 1] &&
                   spanCoversDim(b.spans[rank - 1], b.tensor, bN);
  // (A stride taken at launch is positive: its tensor is contiguous, and
  // the tensor map is encoded at launch.)
  for (const ProductOperand *o : {&a, &b})
    wholeDims &= llvm::all_of(argStrides(func, o->tensor.getArgNumber()),
                              [](const StrideFact &s) { return !s.value || *s.value > 0; });
  out.wholeDims = wholeDims;
  return out;
}

bool kite::streamsAsKeyLoop(TileForOp loop) {
  if (!whyNotPlainProductLoop(loop).empty())
    return false;
  auto [a, b] = plainProductOperands(loop);
  // In place, or from a copy with padded rows that the launch makes (not
  // a K-major B's: the producer stages only copies whose staged columns
  // are their rows, and a K-major B's columns are its tensor's rows).
  OperandCopies copies = operandCopies(loop, a, b);
  if (productElementBytes(loop) == 1) // 8-bit operands: in place only (for now)
    return copies.a == "async" && copies.b == "async";
  return (copies.a == "async" || copies.stageA) &&
         (copies.b == "async" || (copies.stageB && !b.transposed));
}

namespace {

/// Why `loop` cannot be a pipelined main loop, or "" with `attrs` filled.
std::string analyze(TileForOp loop, const Config &config, bool hopper,
                    SmallVectorImpl<NamedAttribute> &attrs) {
  if (std::string why = whyNotPlainProductLoop(loop); !why.empty())
    return why;
  if (config.generic_mainloop && streamsAsKeyLoop(loop))
    return "the config asks for it as ordinary kernel code (generic_mainloop)";
  Block *body = loop.getBodyBlock();
  Value acc = loop.getRegionIterArgs()[0];
  Operation *product = body->getTerminator()->getOperand(0).getDefiningOp();
  std::optional<ProductOperand> a = productOperand(product->getOperand(1));
  std::optional<ProductOperand> b = productOperand(product->getOperand(2));
  auto accType = cast<TileType>(acc.getType());
  auto aType = cast<TileType>(a->value.getType());
  auto bType = cast<TileType>(b->value.getType());
  int64_t rank = accType.getRank();
  // A stage is 128 bytes of K: 64 elements of 16 bits, 128 of 8.
  int64_t bytes = productElementBytes(loop);
  int64_t stageK = 128 / bytes;
  // 8-bit floats, and right operands stored K-major, run only on the TMA
  // main loop (kite_gemm.cuh's wgmma_tma_mainloop with BKMajor).
  bool tmaOnly = onlyTmaMainLoop(loop);
  if (rank == 3 && (aType.getShape()[0] != 1 || bType.getShape()[0] != 1 ||
                    a->spans[0] != b->spans[0]))
    return "batched operands need a batch tile of 1";

  int64_t BM = aType.getShape()[rank - 2], BK = aType.getShape()[rank - 1];
  int64_t BN = bType.getShape()[rank - 1];
  if (BK != bType.getShape()[rank - 2] || !llvm::isPowerOf2_64(BM) ||
      !llvm::isPowerOf2_64(BN) || !llvm::isPowerOf2_64(BK))
    return "tile shapes are not powers of two";
  if (BK < 16 || BK > 128)
    return "the K tile must be 16 to 128";
  if (tmaOnly && BK != stageK)
    return "the K tile of an 8-bit or K-major product must be one 128-byte stage (" +
           std::to_string(stageK) + " elements)";
  int64_t warps = config.num_warps;
  int64_t stages = std::clamp<int64_t>(config.num_stages, 2, 8);
  // The sums a thread may keep: the registers a thread gets (65536 an SM
  // over min_programs_per_sm programs, at most 255, in steps of 8) less
  // about 40 for addresses, descriptors and the loop. Past it ptxas spills
  // the sums (128 x 128 tiles on one consumer at 2 programs an SM: 2.92 ms
  // at 4096^3 on the H200; as two wgmma warpgroups within the cap, 0.41).
  int64_t maxSums = std::min<int64_t>(128, registersPerThread(config, warps * 32) - 40);
  Builder builder(loop.getContext());
  // Hopper's warpgroup MMA where the config asks for it and the tile
  // allows: warpgroups of 4 warps each take 64-row blocks of the tile, with
  // all of BN (a multiple of 64, at most 256) and K 64 at a time.
  bool wgmma = false;
  if (hopper && config.wgmma && warps % 4 == 0) {
    int64_t groups = warps / 4;
    int64_t rows = BM / groups;
    wgmma = !tmaOnly && BK == 64 && BM % groups == 0 && rows % 64 == 0 && BN % 64 == 0 && BN <= 256 &&
            rows * BN / 128 <= maxSums &&
            stages * (BM + BN) * 128 + 1024 <= 232448;
  }
  // Warp-specialized: a producer warpgroup and one or two consumer
  // warpgroups (8 or 12 warps), each consumer with 64 or 128 rows of the
  // tile and all of its columns.
  // (Not with a persistent pid_type: a program would run the loop, and
  // initialize its mbarriers, once per tile.)
  int64_t consumers = warps / 4 - 1;
  int64_t rows = consumers > 0 ? BM / consumers : 0;
  bool specialized = hopper && config.wgmma && config.warp_specialize &&
                     !StringRef(config.pid_type).starts_with("persistent") &&
                     (warps == 8 || warps == 12) && BK == stageK && BM % consumers == 0 &&
                     (rows == 64 || rows == 128) && BN % 64 == 0 && BN <= 256 &&
                     (rows / 64) * BN / 2 <= maxSums &&
                     stages * (BM + BN) * 128 + 16 * stages + 1024 <= 232448;
  if (warps == 12 && !hopper)
    return "12 warps are for a warp-specialized loop, which needs sm_90a";
  if (warps == 12 && !specialized)
    return "12 warps are for a warp-specialized loop (wgmma, BK = 64, 64 or 128 rows and at "
           "most 256 columns per consumer, at most " +
           std::to_string(maxSums) + " sums a thread, not persistent)";
  if (tmaOnly && !specialized)
    return "8-bit and K-major products run only on the TMA main loop (wgmma, warp_specialize, "
           "8 or 12 warps, 64 or 128 rows and at most 256 columns per consumer)";
  OperandCopies copies = operandCopies(loop, *a, *b);
  StringRef copyA = copies.a, copyB = copies.b;
  // TMA copies (indexing "tma"): the producer is one thread. TMA needs
  // 16-byte aligned rows, and loops over whole dims (its bounds are the
  // tensors'); the cp.async producer copes without. Contiguous rows that
  // are not 16-byte multiples (4097 x 4095) are staged: each launch first
  // copies the operand into rows padded to 16 bytes, which TMA takes. (TMA
  // cannot read such rows in place, not even as one map per row class of
  // 16-byte strides: a box must also start on a 16-byte boundary. On the
  // H200 the shifted loads through registers that the cp.async producer
  // uses ran 4097 x 4095 x 4096 in 0.56 ms against 0.22 for torch.compile.)
  bool tma = specialized && config.indexing == "tma" && copies.tma();
  if (tmaOnly && !tma)
    return "8-bit and K-major products run only on the TMA main loop: indexing \"tma\", "
           "operands with contiguous rows, loops over whole dims";
  if (tma) {
    copyA = copyA == "async" ? copyA : "staged";
    copyB = copyB == "async" ? copyB : "staged";
  }
  if (b->transposed)
    attrs.push_back(builder.getNamedAttr("b_k_major", builder.getUnitAttr()));
  if (specialized) {
    attrs.push_back(builder.getNamedAttr(
        "kind", builder.getStringAttr(tma ? "wgmma_tma" : "wgmma_ws")));
    attrs.push_back(builder.getNamedAttr("warpgroups", builder.getI64IntegerAttr(warps / 4)));
  } else if (wgmma) {
    attrs.push_back(builder.getNamedAttr("kind", builder.getStringAttr("wgmma")));
    attrs.push_back(builder.getNamedAttr("warpgroups", builder.getI64IntegerAttr(warps / 4)));
  } else {
    // The warp grid: the squarest split of the warps with warp tiles of at
    // least 16 x 16.
    int64_t WM = 0, WN = 0;
    for (int64_t wm = 1; wm <= warps; wm *= 2) {
      int64_t wn = warps / wm;
      if (BM / wm < 16 || BN / wn < 16)
        continue;
      auto skew = [&](int64_t m, int64_t n) {
        return std::abs(llvm::Log2_64(BM / m) - (int64_t)llvm::Log2_64(BN / n));
      };
      if (!WM || skew(wm, wn) < skew(WM, WN))
        WM = wm, WN = wn;
    }
    if (!WM)
      return "the warps cannot split the tile into parts of at least 16 x 16";
    // The sums a thread holds: more than maxSums floats would spill.
    if (BM * BN / (warps * 32) > maxSums)
      return "more than " + std::to_string(maxSums) +
             " sums per thread (use more warps, smaller tiles or fewer programs per SM)";
    attrs.push_back(builder.getNamedAttr("kind", builder.getStringAttr("mma")));
    attrs.push_back(builder.getNamedAttr("warps_m", builder.getI64IntegerAttr(WM)));
    attrs.push_back(builder.getNamedAttr("warps_n", builder.getI64IntegerAttr(WN)));
  }

  attrs.push_back(builder.getNamedAttr("stages", builder.getI64IntegerAttr(stages)));
  attrs.push_back(builder.getNamedAttr("copy_a", builder.getStringAttr(copyA)));
  attrs.push_back(builder.getNamedAttr("copy_b", builder.getStringAttr(copyB)));
  return "";
}

struct MatmulMainloopPass : kite::impl::KiteMatmulMainloopBase<MatmulMainloopPass> {
  using KiteMatmulMainloopBase::KiteMatmulMainloopBase;

  void runOnOperation() override {
    FailureOr<ConfiguredKernel> found = configuredKernel(getOperation());
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = found->kernel;
    if (!found->config) {
      func.emitError() << "kernel has no config (run kite-apply-config first)";
      return signalPassFailure();
    }
    const Config &config = *found->config;
    if (config.tensor_cores)
      markMainloops(func, config);
    if (config.stream_k) {
      if (std::string why = streamK(func, config); !why.empty()) {
        emitConfigRejection(func) << "the config does not fit: stream_k needs " << why;
        return signalPassFailure();
      }
    }
    if (config.split_k > 1) {
      if (std::string why = splitK(func, config); !why.empty()) {
        emitConfigRejection(func) << "the config does not fit: split_k = " << config.split_k
                                  << " needs " << why;
        return signalPassFailure();
      }
    }
  }

  void markMainloops(func::FuncOp func, const Config &config) {
    func.walk([&](TileForOp loop) {
      SmallVector<NamedAttribute> attrs;
      std::string why = analyze(loop, config, hasWgmma(arch), attrs);
      if (why.empty()) {
        loop->setAttr("kite.mainloop", DictionaryAttr::get(&getContext(), attrs));
        return;
      }
      bool hasProduct = false;
      for (Operation &op : *loop.getBodyBlock())
        hasProduct |= !!matrixProductLhs(&op);
      if (explain && hasProduct)
        loop.emitRemark() << "not a pipelined main loop: " << why;
    });
  }

  /// Marks the product loop whose K iterations stream_k shares out
  /// (kStreamKAttrName), or says why none can be: the kernel's one plain
  /// product loop, run as kernel code (generic_mainloop), placed as
  /// whyNotSplittable asks, with K bounds known at compile time.
  std::string streamK(func::FuncOp func, const Config &config) {
    if (config.pid_type != "persistent_interleaved")
      return "pid_type persistent_interleaved (the programs share out the last wave by their "
             "block index), not '" + config.pid_type + "'";
    if (config.split_k != 1 || config.cluster_size != 1)
      return "split_k 1 and cluster_size 1";
    SmallVector<TileForOp> plain;
    func.walk([&](TileForOp loop) {
      if (whyNotPlainProductLoop(loop).empty())
        plain.push_back(loop);
    });
    if (plain.size() != 1)
      return "exactly one product K loop (acc = addmm(acc, x[tm, tk], y[tk, tn])); this kernel "
             "has " + std::to_string(plain.size());
    TileForOp loop = plain.front();
    if (!config.generic_mainloop || !streamsAsKeyLoop(loop))
      return "the product loop run as kernel code (generic_mainloop, operands TMA reads)";
    if (std::string why = whyNotSplittable(func, loop); !why.empty())
      return why;
    if (!getConstantIntValue(loop.getLowerBounds()[0]) ||
        !getConstantIntValue(loop.getUpperBounds()[0]))
      return "K bounds known at compile time (this plan takes them at launch)";
    loop->setAttr(kStreamKAttrName, UnitAttr::get(func.getContext()));
    return "";
  }

  /// Marks the main loop whose K split_k splits (`split_k` in its
  /// kite.mainloop), or says why none can be: the kernel's one main loop,
  /// placed as whyNotSplittable asks, on flat program ids.
  std::string splitK(func::FuncOp func, const Config &config) {
    if (config.pid_type != "flat")
      return "flat program ids (a persistent program would stop at its first tile)";
    SmallVector<TileForOp> mainloops;
    func.walk([&](TileForOp loop) {
      if (loop->hasAttr("kite.mainloop"))
        mainloops.push_back(loop);
    });
    if (mainloops.size() != 1)
      return "exactly one product K loop that runs as a pipelined main loop (this kernel has " +
             std::to_string(mainloops.size()) + ")";
    TileForOp loop = mainloops.front();
    if (std::string why = whyNotSplittable(func, loop); !why.empty())
      return why;
    auto attrs = llvm::to_vector(loop->getAttrOfType<DictionaryAttr>("kite.mainloop").getValue());
    Builder builder(func.getContext());
    attrs.push_back(builder.getNamedAttr("split_k", builder.getI64IntegerAttr(config.split_k)));
    loop->setAttr("kite.mainloop", DictionaryAttr::get(func.getContext(), attrs));
    return "";
  }
};

} // namespace
