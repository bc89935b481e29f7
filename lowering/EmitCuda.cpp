//===- EmitCuda.cpp - CUDA C++ emission -----------------------------------===//
//
// This file implements the translation of a specialized, configured kernel
// into CUDA C++.
//
// The execution model: one CUDA block is one program; the top-level loops'
// tiles are numbered into one program-id space (loop after loop), and each
// program runs the body of the loop it falls in. Inside a program every tile
// value lives in per-thread register arrays. How a tile's elements spread
// over the threads is its *layout*: a thread arrangement (a `Context`) over a
// padded, power-of-two shape, assigning threads to dims from the innermost
// out (coalesced loads), and for each of the tile's dims the context dim it
// runs along, or none (a unit dim, replicated across those threads).
//
// Each top-level loop body has a main context, the arrangement of its
// largest tile; tiles that fit it (right-aligned, each dim equal or 1) use
// it, so broadcasting and reductions need no data movement: a reduction
// combines a thread's own elements, then across the threads of that dim
// (warp shuffles, or shared memory across warps). Tiles that do not fit get
// a context of their own; values cross contexts through shared memory.
// Matrix products stage their operands in shared memory (the tensor-core
// path is separate).
//
// Masking: each tile dim knows its valid extent (a tile's valid count at the
// end of a dimension, or a tensor size below its power-of-two padding).
// Loads read 0 past it, stores skip it, reductions and the K loop of
// products stop at it.
//
//===----------------------------------------------------------------------===//

#include "lowering/EmitCuda.h"
#include "lowering/emit/Emitter.h"

#include "llvm/ADT/TypeSwitch.h"

#include "lowering/TypeInference.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

//===----------------------------------------------------------------------===//
// Kernel structure
//===----------------------------------------------------------------------===//

FailureOr<CudaKernel> Emitter::run() {
  result.name = kernel.getSymName().str();
  result.symbol = "kite_" + result.name;
  FailureOr<std::optional<Config>> applied = appliedConfig(kernel);
  if (failed(applied))
    return failure();
  if (!*applied)
    return kernel.emitError() << "kernel has no config (run kite-apply-config first)",
           failure();
  config = std::move(**applied);
  producer = hasKeyLoopProducer(config, kernel);
  numThreads = computeThreads(config, kernel);
  result.numThreads = 32 * config.num_warps;
  fastMath = config.fast_math;
  streaming = config.streaming;
  tensorCores = config.tensor_cores;
  minPrograms = config.min_programs_per_sm;
  // Every type must be static by now.
  WalkResult walk = kernel.walk([&](Operation *op) {
    if (auto sort = dyn_cast<SortOp>(op); sort && sort.getK() &&
                                          !matchPattern(sort.getK(), m_Constant())) {
      op->emitError() << "topk needs k to be a compile-time constant: a literal, or a "
                         "kernel argument marked with specialize(k)";
      return WalkResult::interrupt();
    }
    for (Type t : op->getResultTypes()) {
      if (auto tile = dyn_cast<TileType>(t);
          tile && (!tile.hasStaticShape() || !tile.hasElementType())) {
        op->emitError() << "tile type " << t
                        << " is not static; the kernel must be specialized "
                           "and configured before CUDA emission";
        return WalkResult::interrupt();
      }
      if (auto tile = dyn_cast<TileType>(t); tile && !tile.getLayout()) {
        op->emitError() << "tile type " << t
                        << " has no layout; run kite-assign-layouts before CUDA emission";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  planStagingBuffers();
  if (producer)
    planRestaging();
  planDirectLhs();
  if (failed(emitPrologue()) || failed(emitTopLevelLoops()))
    return failure();
  if (!tooBig.empty())
    return emitConfigRejection(kernel) << "the config does not fit: " << tooBig, failure();
  if (!layoutMismatch.empty())
    return kernel.emitError() << "internal error: " << layoutMismatch
                              << " (kite-assign-layouts left out a kite.convert_layout)",
           failure();
  if (!llvm::isPowerOf2_64(numThreads) && !specializedLoop)
    return emitConfigRejection(kernel) << "the config does not fit: num_warps = " << numThreads / 32
                              << " is only for a warp-specialized matrix-product K loop, "
                                 "and the kernel has none that kite-matmul-mainloop took",
           failure();
  if (int64_t needed = sharedBytes + staticSharedBytes; needed > kMaxSharedBytes)
    return emitConfigRejection(kernel) << "the config does not fit: it needs " << needed
                              << " bytes of shared memory (at most " << kMaxSharedBytes
                              << " on sm_90); use smaller block sizes",
           failure();

  // Kernel signature.
  std::string params;
  for (const CudaKernel::Param &p : result.params) {
    if (!params.empty())
      params += ", ";
    switch (p.kind) {
    case CudaKernel::Param::Kind::ArgData: {
      BlockArgument arg = kernel.getArgument(p.index);
      params += cType(getElementTypeOrNull(arg.getType())) + "* __restrict__ a" +
                std::to_string(p.index);
      break;
    }
    case CudaKernel::Param::Kind::OutputData:
      params += cType(parseDType(kernel.getContext(), result.outputs[p.index].dtype)) +
                "* __restrict__ o" +
                std::to_string(p.index);
      break;
    case CudaKernel::Param::Kind::ArgScalar: {
      BlockArgument arg = kernel.getArgument(p.index);
      params += cType(arg.getType()) + " a" + std::to_string(p.index);
      break;
    }
    case CudaKernel::Param::Kind::ArgTensorMap:
      params += "const __grid_constant__ KiteTensorMap " + p.name;
      break;
    case CudaKernel::Param::Kind::ArgSize:
      params += "const i64 " + p.name;
      break;
    case CudaKernel::Param::Kind::Workspace:
      params += "unsigned char* __restrict__ " + p.name;
      break;
    }
  }
  result.sharedBytes = sharedBytes;
  std::string src;
  llvm::raw_string_ostream os(src);
  os << "// Generated by kite from kernel '" << result.name << "'.\n";
  os << "// config: " << kernel->getAttrOfType<StringAttr>("kite.config").getValue() << "\n";
  if (producer)
    os << "#define KITE_COMPUTE_THREADS " << numThreads << "\n";
  if (options.trace)
    os << "#define KITE_TRACE " << kTraceCapacity << "\n";
  // A staged tensor map's launch first runs the module's kite_stage_rows.
  if (llvm::any_of(result.params, [](const CudaKernel::Param &p) { return p.staged; }))
    os << "#define KITE_STAGED_OPERANDS\n";
  os << "#include \"kite_device.cuh\"\n";
  if (usesGemm)
    os << "#include \"kite_gemm.cuh\"\n";
  os << "using namespace kite_device;\n\n";
  os << "extern \"C\" __global__ void __launch_bounds__(" << result.numThreads;
  if (minPrograms > 1)
    os << ", " << minPrograms;
  os << ") ";
  if (result.clusterSize > 1)
    os << "__cluster_dims__(" << result.clusterSize << ", 1, 1) ";
  os << result.symbol << "(" << params << ") {\n";
  if (sharedBytes)
    os << "  extern __shared__ __align__(16) unsigned char kite_smem[];\n";
  if (options.trace)
    os << "  trace_event(0, -1);\n";
  os << contextDecls;
  os << body;
  os << "}\n";
  result.source = os.str();
  return result;
}

LogicalResult Emitter::emitPrologue() {
  Block &entry = kernel.getBody().front();
  // Parameters: tensors by data pointer, scalars by value.
  for (BlockArgument arg : entry.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (auto t = dyn_cast<kite::TensorType>(arg.getType())) {
      TensorRef ref;
      ref.ptr = "a" + std::to_string(i);
      ref.elem = t.getElementType();
      ref.sizes.assign(t.getShape().begin(), t.getShape().end());
      if (auto s = kernel.getArgAttrOfType<DenseI64ArrayAttr>(i, "kite.strides"))
        ref.strides.assign(s.asArrayRef().begin(), s.asArrayRef().end());
      if (auto a = kernel.getArgAttrOfType<IntegerAttr>(i, "kite.align"))
        ref.align = a.getInt();
      ref.index32 = kernel.getArgAttr(i, "kite.index32") != nullptr;
      result.params.push_back({CudaKernel::Param::Kind::ArgData, i});
      // Sizes taken at launch: one i64 parameter each.
      if (auto divisors = kernel.getArgAttrOfType<DenseI64ArrayAttr>(i, "kite.divisors")) {
        ref.sizeNames.assign(ref.sizes.size(), "");
        ref.divisors.assign(divisors.asArrayRef().begin(), divisors.asArrayRef().end());
        for (auto [d, divisor] : llvm::enumerate(divisors.asArrayRef())) {
          if (divisor == 0)
            continue;
          ref.sizeNames[d] = llvm::formatv("a{0}_n{1}", i, d).str();
          CudaKernel::Param p{CudaKernel::Param::Kind::ArgSize, i, ref.sizeNames[d]};
          p.dim = d;
          result.params.push_back(p);
        }
        // (Such a tensor is contiguous; strides that depend on a size taken
        // at launch are products of its size parameters.)
        if (llvm::any_of(ref.strides, ShapedType::isDynamic))
          ref.setContiguousStrides();
      }
      tensors[arg] = ref;
    } else {
      scalars[arg] = "a" + std::to_string(i);
      result.params.push_back({CudaKernel::Param::Kind::ArgScalar, i});
    }
  }
  // kite-check-bounds' launch checks: two operands of three integers each.
  if (auto checks = kernel->getAttrOfType<DenseI64ArrayAttr>("kite.launch_checks")) {
    auto messages = kernel->getAttrOfType<ArrayAttr>("kite.launch_check_messages");
    ArrayRef<int64_t> c = checks.asArrayRef();
    auto side = [](ArrayRef<int64_t> v) {
      LaunchExpr::Term t;
      t.op = v[0] == 0 ? LaunchExpr::Op::constant
             : v[0] == 1 ? LaunchExpr::Op::argSize
                         : LaunchExpr::Op::argScalar;
      if (v[0] == 0)
        t.value = v[1];
      else
        t.index = uint32_t(v[1]), t.dim = uint32_t(v[2]);
      return LaunchExpr{{t}};
    };
    for (size_t i = 0; i + 6 <= c.size(); i += 6) {
      std::string message;
      if (messages && i / 6 < messages.size())
        message = cast<StringAttr>(messages[i / 6]).str();
      result.checks.push_back({side(c.slice(i, 3)), side(c.slice(i + 3, 3)), message});
    }
  }
  // The main context is chosen per top-level loop; prologue scalars need
  // none.
  for (Operation &op : entry) {
    if (isa<TileForOp, GridForOp>(op))
      continue;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands()) {
        Operation *def = v.getDefiningOp();
        if (auto arg = dyn_cast<BlockArgument>(v)) {
          result.results.push_back({CudaKernel::Result::Kind::Arg, arg.getArgNumber()});
          continue;
        }
        auto it = llvm::find_if(result.outputs, [&](const CudaKernel::Output &o) {
          return o.name == tensors[v].ptr;
        });
        if (it == result.outputs.end())
          return ret.emitError() << "kite can only return parameters and tensors "
                                    "allocated with empty/zeros (a reshaped "
                                    "tensor cannot be returned yet)";
        (void)def;
        result.results.push_back(
            {CudaKernel::Result::Kind::Output, (unsigned)(it - result.outputs.begin())});
      }
      continue;
    }
    if (failed(emitOp(&op)))
      return failure();
  }
  return success();
}
void TensorRef::setContiguousStrides() {
  size_t rank = sizes.size();
  strides.assign(rank, 1);
  strideNames.assign(rank, "");
  strideDivisors.assign(rank, 0);
  int64_t st = 1, div = 1; // the product of the dims inside, while static
  std::string expr;        // that product, once a size taken at launch is in it
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (expr.empty()) {
      strides[d] = st;
    } else {
      strides[d] = ShapedType::kDynamic;
      strideNames[d] = expr;
      strideDivisors[d] = div;
    }
    if (isDynamic(d)) {
      if (expr.empty()) {
        expr = st == 1 ? sizeNames[d] : llvm::formatv("({0}LL * {1})", st, sizeNames[d]).str();
        div = st * divisors[d];
      } else {
        expr = llvm::formatv("({0} * {1})", expr, sizeNames[d]).str();
        div *= divisors[d];
      }
    } else if (!expr.empty()) {
      expr = llvm::formatv("({0} * {1}LL)", expr, sizes[d]).str();
      div *= sizes[d];
    } else {
      st *= sizes[d];
    }
  }
}

std::optional<LaunchExpr> kite::emit::launchExprOf(SizeOrigin origin) {
  auto arg = dyn_cast<BlockArgument>(origin.first);
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return std::nullopt;
  LaunchExpr::Term t;
  t.index = arg.getArgNumber();
  if (origin.second >= 0) {
    t.op = LaunchExpr::Op::argSize;
    t.dim = uint32_t(origin.second);
  } else if (arg.getType().isInteger(64) || arg.getType().isInteger(32)) {
    t.op = LaunchExpr::Op::argScalar;
  } else {
    return std::nullopt;
  }
  return LaunchExpr{{t}};
}

std::optional<LaunchExpr> kite::emit::launchExprOf(Value v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return LaunchExpr::constant(*c);
  if (v.getDefiningOp<SizeOp>() || isa<BlockArgument>(v)) {
    std::optional<SizeOrigin> origin = sizeOriginOf(v);
    return origin ? launchExprOf(*origin) : std::nullopt;
  }
  Operation *op = v.getDefiningOp();
  if (!op || op->getNumOperands() != 2)
    return std::nullopt;
  std::optional<LaunchExpr::Op> kind =
      llvm::TypeSwitch<Operation *, std::optional<LaunchExpr::Op>>(op)
          .Case([](arith::AddIOp) { return LaunchExpr::Op::add; })
          .Case([](arith::SubIOp) { return LaunchExpr::Op::sub; })
          .Case([](arith::MulIOp) { return LaunchExpr::Op::mul; })
          .Case([](arith::CeilDivSIOp) { return LaunchExpr::Op::ceildiv; })
          .Case([](arith::FloorDivSIOp) { return LaunchExpr::Op::floordiv; })
          .Case([](arith::MinSIOp) { return LaunchExpr::Op::min; })
          .Case([](arith::MaxSIOp) { return LaunchExpr::Op::max; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind)
    return std::nullopt;
  std::optional<LaunchExpr> a = launchExprOf(op->getOperand(0));
  std::optional<LaunchExpr> b = launchExprOf(op->getOperand(1));
  if (!a || !b)
    return std::nullopt;
  a->terms.insert(a->terms.end(), b->terms.begin(), b->terms.end());
  a->terms.push_back(LaunchExpr::Term{*kind});
  return a;
}

/// An output the host allocates before the launch, passed as a parameter.
LogicalResult Emitter::addOutput(Value tensor, bool zeroed) {
  auto t = cast<kite::TensorType>(tensor.getType());
  CudaKernel::Output out;
  out.name = "o" + std::to_string(result.outputs.size());
  out.dtype = dtypeName(t.getElementType());
  out.sizes.assign(t.getShape().begin(), t.getShape().end());
  out.zeroed = zeroed;
  TensorRef ref;
  ref.ptr = out.name;
  ref.elem = t.getElementType();
  ref.sizes = out.sizes;
  // A size taken at launch: its launch expression, and in the kernel the
  // expression it comes from (the argument's size parameter, a scalar).
  for (auto [d, size] : llvm::enumerate(out.sizes)) {
    if (!ShapedType::isDynamic(size))
      continue;
    if (ref.sizeNames.empty()) {
      ref.sizeNames.assign(out.sizes.size(), "");
      ref.divisors.assign(out.sizes.size(), 0);
    }
    std::optional<SizeOrigin> origin = sizeOrigin(tensor, d);
    std::optional<LaunchExpr> expr = origin ? launchExprOf(*origin) : std::nullopt;
    if (!expr)
      return tensor.getDefiningOp()->emitError()
             << "dim " << d << " of this output has a size kite cannot compute at launch "
             << "(wrap it in kite::specialize())";
    out.sizeExprs.push_back(*expr);
    if (origin->second >= 0) {
      const TensorRef &src = tensors[origin->first];
      ref.sizeNames[d] = src.size(origin->second);
      ref.divisors[d] = src.sizeDivisor(origin->second);
    } else {
      ref.sizeNames[d] = scalar(origin->first);
      ref.divisors[d] = 1;
    }
  }
  // As many elements as the tensor it is made like: 32-bit offsets where
  // that one has them.
  if (auto like = tensor.getDefiningOp<EmptyLikeOp>(); like && tensors.count(like.getSource()))
    ref.index32 = tensors[like.getSource()].index32;
  ref.setContiguousStrides();
  result.params.push_back(
      {CudaKernel::Param::Kind::OutputData, (unsigned)result.outputs.size()});
  result.outputs.push_back(out);
  tensors[tensor] = ref;
  return success();
}

FailureOr<CudaKernel> kite::emitCuda(func::FuncOp kernel, const EmitOptions &options) {
  Emitter emitter(kernel, options);
  return emitter.run();
}
