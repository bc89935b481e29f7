//===- Reductions.cpp - reductions and scans --------------------------------===//
//
// This file implements reductions along one dim (a thread's own elements,
// then warp shuffles, or shared memory across warps) and scans along one
// dim (the same steps, with prefixes instead of totals).
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
    std::string guard =
        rd.extent.empty() ? "" : llvm::formatv("if ({0}) ", inExtent(src, dim, rv)).str();
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
    line(sync());
  tiles[op.getResult()] = r;
  return success();
}

/// A scan along one dim. Along it a thread holds chunks of `vec` contiguous
/// elements, chunk j of every thread before chunk j + 1 of any (the blocked
/// layout); so it scans each chunk in registers, takes the exclusive scans
/// of the chunks' last values across the dim's threads, all chunks in one
/// round (thread_scan_exclusive), and carries the totals of the chunks
/// before. The scan runs on `spec.acc` values, `spec.op` combining them
/// (an expression of an op object) and `spec.identity` for masked lanes.
void Emitter::emitScanLines(const Tile &src, int64_t dim, const ScanSpec &spec) {
  const std::string &acc = spec.acc, &op = spec.op;
  const Dim &sd = src.dims[dim];
  int64_t cd = sd.ctxDim, P = sd.regExtent;
  int64_t T = cd >= 0 ? src.ctx->tpd[cd] : 1, S = cd >= 0 ? src.ctx->tstride[cd] : 1;
  // One thread along the dim holds it contiguously: one chunk.
  int64_t V = T == 1 ? P : std::min<int64_t>(src.ctx->vec[cd], P);
  int64_t J = P / V; // chunks a thread holds along the dim
  bool acrossWarps = T > 1 && S * T > 32;
  std::string scratch = "(" + acc + "*)nullptr";
  if (acrossWarps) {
    scratch = fresh("s");
    line(llvm::formatv("{0}* {1} = {2};", acc, scratch,
                       smem(acc, numThreads * J, spec.bytes)));
  }
  // The other dims: one scan per element of them.
  Tile lines = src;
  lines.dims[dim] = Dim();
  forEach(lines, [&](ArrayRef<std::string> k) {
    std::string sc = fresh("sc"), rv = fresh("r");
    SmallVector<std::string> sk(k.begin(), k.end());
    sk[dim] = rv;
    line(llvm::formatv("{0} {1}[{2}];", acc, sc, P));
    line("#pragma unroll");
    line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", rv, P));
    ++indent;
    std::string c = coord(src, dim, rv);
    std::string elem = spec.element(sk, c);
    if (!sd.extent.empty())
      elem = llvm::formatv("{0} ? {1} : {2}", inExtent(src, dim, rv), elem, spec.identity);
    std::string e = fresh("e");
    line(llvm::formatv("{0} {1} = {2};", acc, e, elem));
    line(llvm::formatv("if ({0} % {1} != 0) {4} = {2}.combine({3}[{0} - 1], {4});", rv, V, op,
                       sc, e));
    line(llvm::formatv("{0}[{1}] = {2};", sc, rv, e));
    --indent;
    line("}");
    if (T > 1) {
      // The chunks' last values, scanned across the threads all at once;
      // then each chunk adds the chunks before it and its exclusive prefix.
      std::string carry = fresh("cy"), j = fresh("j"), u = fresh("u"), total = fresh("tot"),
                  ends = fresh("ends"), before = fresh("pre");
      line(llvm::formatv("{0} {1}[{2}], {3}[{2}];", acc, ends, J, total));
      line("#pragma unroll");
      line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {2}[{0}] = {3}[{0} * {4} + {5}];",
                         j, J, ends, sc, V, V - 1));
      line(llvm::formatv("thread_scan_exclusive<{0}, {1}, {2}>({3}, {4}, {5}, {6});",
                         spec.opType, S, T, ends, total, scratch, op));
      line(llvm::formatv("{0} {1} = {2};", acc, carry, spec.identity));
      line("#pragma unroll");
      line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", j, J));
      ++indent;
      line(llvm::formatv("{0} {1} = {2}.combine({3}, {4}[{5}]);", acc, before, op, carry, ends,
                         j));
      line("#pragma unroll");
      line(llvm::formatv("for (int {4} = 0; {4} < {0}; ++{4}) {1}[{2} * {0} + {4}] = "
                         "{3}.combine({5}, {1}[{2} * {0} + {4}]);",
                         V, sc, j, op, u, before));
      line(llvm::formatv("{0} = {1}.combine({0}, {2}[{3}]);", carry, op, total, j));
      --indent;
      line("}");
    }
    line("#pragma unroll");
    line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", rv, P));
    ++indent;
    spec.write(sk, sc + "[" + rv + "]");
    --indent;
    line("}");
  });
  if (acrossWarps)
    line(sync());
}

LogicalResult Emitter::emitScan(ScanOp op) {
  Tile src = tiles[op.getOperand()];
  int64_t dim = op.getDim() < 0 ? op.getDim() + src.rank() : op.getDim();
  Type outElem = getElementTypeOrNull(op.getResult().getType());
  Tile r = declare(outElem, src.ctx, src.dims);
  std::optional<Tile> idx;
  if (op.getIndices())
    idx = declare(IntegerType::get(op.getContext(), 64), src.ctx, src.dims);
  std::string value = computeType(outElem);
  ScanSpec spec;
  // With positions, the scan runs over (value, position) pairs.
  spec.acc = idx ? "ArgPair<" + value + ">" : value;
  spec.bytes = idx ? 16 : 8;
  switch (op.getKind()) {
  case ScanKind::sum: spec.opType = "SumOp"; break;
  case ScanKind::prod: spec.opType = "ProdOp"; break;
  case ScanKind::max: spec.opType = idx ? "CumArgOp<true>" : "MaxOp"; break;
  case ScanKind::min: spec.opType = idx ? "CumArgOp<false>" : "MinOp"; break;
  }
  spec.op = spec.opType + "()";
  spec.identity = llvm::formatv("{0}::identity<{1}>()", spec.opType, spec.acc);
  spec.element = [&](ArrayRef<std::string> sk, const std::string &c) {
    std::string elem = llvm::formatv("cvt<{0}>({1})", value, at(src, sk, 0));
    if (idx)
      elem = llvm::formatv("ArgPair<{0}>{{{1}, (i64)({2})}", value, elem, c);
    return elem;
  };
  spec.write = [&](ArrayRef<std::string> sk, const std::string &v) {
    line(llvm::formatv("{0}[{1}] = cvt<{2}>({3}{4});", r.name, flat(r, sk), cType(outElem), v,
                       idx ? ".value" : ""));
    if (idx)
      line(llvm::formatv("{0}[{1}] = {2}.index;", idx->name, flat(*idx, sk), v));
  };
  emitScanLines(src, dim, spec);
  tiles[op.getResult()] = r;
  if (idx)
    tiles[op.getIndices()] = *idx;
  return success();
}

/// An associative scan runs the scan above on Maybe<struct of one field
/// per operand>, with the combine function a lambda in the kernel (its
/// region emitted on rank-0 tiles, arrays of one element).
LogicalResult Emitter::emitAssociativeScan(AssociativeScanOp op) {
  size_t n = op.getOperands().size();
  SmallVector<Tile> srcs, results;
  for (Value v : op.getOperands())
    srcs.push_back(tiles[v]);
  const Tile &src = srcs[0];
  int64_t dim = op.getDim() < 0 ? op.getDim() + src.rank() : op.getDim();
  std::string value = fresh("sv"), fn = fresh("sf"), combine = fresh("cop");
  // The element struct and its size as the device compiler lays it out.
  line("struct " + value + " {");
  int64_t size = 0, align = 1;
  for (size_t j = 0; j < n; ++j) {
    int64_t b = std::max<int64_t>(elementBytes(srcs[j].elem), 1);
    size = llvm::alignTo(size, b) + b;
    align = std::max(align, b);
    line(llvm::formatv("  {0} v{1};", cType(srcs[j].elem), j));
  }
  line("};");
  int64_t bytes = llvm::alignTo(llvm::alignTo(size, align) + 1, align);
  // The combine function: the earlier value's fields, then the later's,
  // as the region's arguments.
  line(llvm::formatv("auto {0} = [&](const {1} &x, const {1} &y) -> {1} {{", fn, value));
  ++indent;
  Block &body = op.getCombine().front();
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    Tile t;
    t.name = fresh("ca");
    t.elem = srcs[i % n].elem;
    t.ctx = src.ctx;
    line(llvm::formatv("{0} {1}[1] = {{{2}.v{3}};", cType(t.elem), t.name, i < n ? "x" : "y",
                       i % n));
    tiles[arg] = t;
  }
  for (Operation &inner : body.without_terminator())
    if (failed(emitOp(&inner)))
      return failure();
  std::string fields;
  for (Value v : op.getYield().getValues()) {
    const Tile &t = tiles[v];
    fields += (fields.empty() ? "" : ", ") + at(t, {}, 0);
  }
  line(llvm::formatv("return {0}{{{1}};", value, fields));
  --indent;
  line("};");
  line(llvm::formatv("const CombineOp<decltype({0})> {1}{{{0}};", fn, combine));

  for (auto [j, r] : llvm::enumerate(op.getResults()))
    results.push_back(declare(srcs[j].elem, src.ctx, src.dims));
  ScanSpec spec;
  spec.acc = "Maybe<" + value + ">";
  spec.bytes = bytes;
  spec.opType = "decltype(" + combine + ")";
  spec.op = combine;
  spec.identity = spec.acc + "{}";
  spec.element = [&](ArrayRef<std::string> sk, const std::string &) {
    std::string fields;
    for (size_t j = 0; j < n; ++j)
      fields += (j ? ", " : "") + at(srcs[j], sk, 0);
    return llvm::formatv("{0}{{{1}{{{2}}, true}", spec.acc, value, fields).str();
  };
  spec.write = [&](ArrayRef<std::string> sk, const std::string &v) {
    for (size_t j = 0; j < n; ++j)
      line(llvm::formatv("{0}[{1}] = {2}.value.v{3};", results[j].name, flat(results[j], sk), v,
                         j));
  };
  emitScanLines(src, dim, spec);
  for (auto [j, r] : llvm::enumerate(op.getResults()))
    tiles[r] = results[j];
  return success();
}
