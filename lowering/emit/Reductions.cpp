//===- Reductions.cpp - reductions ------------------------------------------===//
//
// This file implements reductions along one dim: a thread's own elements,
// then warp shuffles, or shared memory across warps.
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

LogicalResult Emitter::emitReduce(ReduceOp op) {
  Tile src = tiles[op.getOperand()];
  int64_t rank = src.rank();
  int64_t dim = op.getDim() < 0 ? op.getDim() + rank : op.getDim();
  bool keep = op.getKeepdim();
  Type outElem = getElementTypeOrNull(op.getType());
  Type inElem = src.elem;
  SmallVector<Dim> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != dim) {
      dims.push_back(src.dims[i]);
    } else if (keep) {
      Dim unit;
      dims.push_back(unit);
    }
  }
  Tile r = declare(outElem, src.ctx, dims);
  ReduceKind kind = op.getKind();
  bool isArg = kind == ReduceKind::argmax || kind == ReduceKind::argmin;
  std::string acc = (kind == ReduceKind::sum || kind == ReduceKind::prod)
                        ? accType(outElem)
                        : computeType(inElem);
  std::string opName;
  switch (kind) {
  case ReduceKind::sum:
  case ReduceKind::mean: opName = "SumOp"; break;
  case ReduceKind::prod: opName = "ProdOp"; break;
  case ReduceKind::amax: opName = "MaxOp"; break;
  case ReduceKind::amin: opName = "MinOp"; break;
  case ReduceKind::argmax: opName = "ArgOp<true>"; break;
  case ReduceKind::argmin: opName = "ArgOp<false>"; break;
  }
  std::string accT = isArg ? "ArgPair<" + acc + ">" : acc;
  const Dim &rd = src.dims[dim];
  std::string scratch;
  int64_t cd = rd.ctxDim;
  // A local reduction stops at each thread's own elements.
  bool crossThread = cd >= 0 && src.ctx->tpd[cd] > 1 && !op.getLocal();
  bool inWarp = crossThread && src.ctx->tstride[cd] * src.ctx->tpd[cd] <= 32;
  if (crossThread && !inWarp) {
    scratch = fresh("s");
    line(llvm::formatv("{0}* {1} = {2};", accT, scratch, smem(accT, numThreads * 2)));
  }
  std::string count = rd.extent.empty() ? std::to_string(rd.padded) : rd.extent;
  forEach(r, [&](ArrayRef<std::string> k) {
    std::string a = fresh("a");
    line(llvm::formatv("{0} {1} = {2}::identity<{0}>();", accT, a, opName));
    std::string rv = fresh("r");
    SmallVector<std::string> sk;
    for (int64_t i = 0, j = 0; i < rank; ++i) {
      if (i == dim) {
        sk.push_back(rv);
        if (keep)
          ++j;
      } else {
        sk.push_back(k[j++]);
      }
    }
    line("#pragma unroll");
    line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", rv, rd.regExtent));
    ++indent;
    std::string c = coord(src, dim, rv);
    std::string elem = llvm::formatv("cvt<{0}>({1})", acc, at(src, sk, 0));
    std::string guard = rd.extent.empty() ? "" : llvm::formatv("if ({0} < {1}) ", c, rd.extent).str();
    if (isArg)
      line(llvm::formatv("{0}{{ {1} e; e.value = {2}; e.index = {3}; {4} = {5}::combine({4}, e); }",
                         guard, accT, elem, c, a, opName));
    else
      line(llvm::formatv("{0}{1} = {2}::combine({1}, {3});", guard, a, opName, elem));
    --indent;
    line("}");
    if (crossThread) {
      int64_t S = src.ctx->tstride[cd], T = src.ctx->tpd[cd];
      if (inWarp)
        line(llvm::formatv("{0} = warp_reduce<{1}, {2}, {3}>({0});", a, opName, S, T));
      else
        line(llvm::formatv("{0} = block_reduce<{1}, {2}, {3}>({0}, {4});", a, opName, S,
                           T, scratch));
    }
    std::string out = isArg ? a + ".index" : a;
    if (kind == ReduceKind::mean)
      out = llvm::formatv("{0} / ({1})({2})", a, acc, count);
    line(llvm::formatv("{0}[{1}] = cvt<{2}>({3});", r.name, flat(r, k), cType(outElem),
                       out));
  });
  if (crossThread && !inWarp)
    line("__syncthreads();");
  tiles[op.getResult()] = r;
  return success();
}
