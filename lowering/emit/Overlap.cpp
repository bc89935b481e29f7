//===- Overlap.cpp - key loops with a late stage --------------------------===//
//
// CUDA emission of a loop kite-overlap-products split into an early and a
// late stage. Iteration t runs the early stage of tile t and the late
// stage of tile t - 1, issued right after the early stage's first wgmma,
// so the tensor cores run it while the early stage's elementwise work
// runs; it is waited for at the iteration's end. The first tile's early
// stage and the last tile's late stage are peeled, so that nothing in the
// loop is conditional:
//
//   if (n > 0) { t = 0: early ops of tile 0 (the late ring's first copies
//                at the issue point), wait for the first wgmma }
//   for (t = 1; t < n; ++t) {
//     early ops of tile t ... first wgmma issued
//       { t' = t - 1: late ring slot awaited and refilled;
//         late ops of tile t' from the carries; late wgmma issued }
//     wait for the first wgmma only (the late one still running)
//     ... rest of the early ops; the values the late stage reads -> carries
//     wait for the late wgmma; its sums -> the carried accumulator
//   }
//   if (n > 0) { t = n: the late stage of tile n - 1, its wait }
//
// The late stage's block redefines the loop's iteration and span variables
// under the same names (C++ shadowing), so every index and extent of its
// code is tile t - 1's. The early stage's code exists once in the output:
// the late stage is emitted after it (when every value it reads has a tile)
// and spliced in at the issue point.
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

LogicalResult Emitter::emitLateStage(TileForOp loop, ArrayRef<Operation *> ops,
                                     const DenseMap<Value, Tile> &carries,
                                     const SpanVars &span, const LoopVars &lv) {
  std::string prev = fresh("tp");
  line("{");
  ++indent;
  line(llvm::formatv("const i64 {0} = {1} - 1;", prev, lv.iv));
  line("{");
  ++indent;
  line(llvm::formatv("const i64 {0} = {1};", lv.iv, prev));
  line(llvm::formatv("const i64 {0} = (i64)({1}) + {2} * {3};", span.begin, lv.lower, lv.iv,
                     lv.blockSize));
  line(llvm::formatv("const i64 {0} = min((i64){1}, (i64)({2}) - {3});", span.valid,
                     lv.blockSize, lv.upper, span.begin));
  // The ring's slot, awaited and refilled also before the first tile: its
  // copies keep the count of cp.async groups the waits rely on.
  Operation *late = overlap->late;
  Type elem = cast<TileType>(late->getOperand(late->getNumOperands() - 1).getType())
                  .getElementType();
  // With a producer, a ring's stages are awaited only where read (not by
  // the empty late stage before the first tile).
  if (!producer || !ops.empty()) {
    FailureOr<std::string> slot = awaitPrefetched(late, elem);
    if (failed(slot))
      return failure();
    overlap->lateSlot = *slot;
  }
  DenseMap<Value, Tile> saved;
  for (auto &[v, carry] : carries) {
    if (auto it = tiles.find(v); it != tiles.end())
      saved[v] = it->second;
    tiles[v] = carry;
  }
  for (Operation *op : ops)
    if (failed(emitOp(op)))
      return failure();
  for (auto &[v, carry] : carries) {
    if (auto it = saved.find(v); it != saved.end())
      tiles[v] = it->second;
    else
      tiles.erase(v);
  }
  overlap->lateSlot.clear();
  --indent;
  line("}");
  --indent;
  line("}");
  return success();
}

void Emitter::declareLateProduct(bool zeroed) {
  Operation *late = overlap->late;
  auto resultType = cast<TileType>(late->getResult(0).getType());
  Value lhs = late->getOperand(late->getNumOperands() - 2);
  int64_t rank = resultType.getRank();
  auto [ctx, dims] = layoutOf(late->getResult(0));
  auto [lctx, ldims] = layoutOf(lhs);
  Tile &r = overlap->result;
  r = declare(resultType.getElementType(), ctx, dims, "late", zeroed);
  int64_t MT = r.dims[rank - 2].regExtent / 2, PN = r.dims[rank - 1].padded;
  int64_t PK = ldims[rank - 1].padded;
  overlap->sums = fresh("lc");
  overlap->af = fresh("laf");
  StringRef init = zeroed ? " = {}" : "";
  line(llvm::formatv("float {0}[{1}][{2}]{3};", overlap->sums, MT, PN / 2, init));
  line(llvm::formatv("unsigned {0}[{1}][{2}][4]{3};", overlap->af, PK / 16, MT, init));
}

void Emitter::closeTurns() {
  if (openTurns)
    line(llvm::formatv("kite_turn_end<{0}>();", openTurns));
  openTurns = 0;
}

LogicalResult Emitter::emitOverlappedLoop(TileForOp loop) {
  Block *bodyBlock = loop.getBodyBlock();
  Operation *yield = bodyBlock->getTerminator();
  SmallVector<Operation *> earlyOps, lateOps;
  Overlap o;
  int64_t slotIndex = -1;
  for (Operation &op : bodyBlock->without_terminator()) {
    if (op.hasAttr(kLateAttrName))
      lateOps.push_back(&op);
    else
      earlyOps.push_back(&op);
    if (!op.hasAttr(kLateAttrName) && !o.early && onWgmma(&op))
      o.early = &op;
  }
  for (auto [i, v] : llvm::enumerate(yield->getOperands()))
    if (Operation *def = v.getDefiningOp(); def && def->hasAttr(kLateAttrName))
      o.late = def, slotIndex = i;
  if (!o.early || !o.late || !prefetchedOperand.count(o.early) ||
      !prefetchedOperand.count(o.late))
    return loop.emitError() << "internal error: an overlapped loop without its two products";

  SmallVector<Value> cuts = lateStageReads(
      loop, [](Operation *op) { return op->hasAttr(kLateAttrName); }, slotIndex);

  StagingScope staging(*this, loop);
  SmallVector<Tile> carried = declareCarried(loop.getInitArgs(), loop.getRegionIterArgs(), loop);
  if (failed(emitSharedLhs(loop)))
    return failure();
  FailureOr<LoopVars> counted = emitLoopCount(loop, 0);
  if (failed(counted))
    return failure();
  LoopVars lv = *counted;
  loopVars[loop] = lv;
  o.iv = lv.iv;
  // pingpong, in a loop of full tiles only: a partial tile's zeroing after
  // its wait (awaitRing) is a barrier of every computing thread, which a
  // warpgroup waiting for its turn would never reach.
  if (producer && config.pingpong && numThreads >= 256 &&
      tilesAlwaysFull(loop.getSpans()[0], lv.blockSize, lv.lowerConst, lv.upperConst))
    o.turns = numThreads / 128;
  overlap = o;
  // The first turn is the first warpgroup's (already, after a loop that
  // left the sequence open: every loop's turns are all the computing
  // warpgroups').
  if (o.turns && !openTurns) {
    line(llvm::formatv("kite_turn_start<{0}>();", o.turns));
    openTurns = o.turns;
  }
  // The late ring's first copies are one tile behind the early ring's.
  Operation *lateLoad = prefetchedOperand[o.late];
  if (failed(emitPrefetchPrologue({prefetchedOperand[o.early], lateLoad}, lv, lateLoad)))
    return failure();

  // Registers that live from one iteration to the next: the carries and
  // the late product's. In a persistent program they are declared inside
  // the program loop and never written on a path that skips the key loop
  // (no key tiles), so that without a value the compiler keeps the previous
  // program's alive through the whole program loop, every key loop of the
  // body included (causal attention's two: 336 bytes a thread spilled at
  // [1,128,128] D128 with pingpong). Zeroed, they start at the declaration;
  // where a write follows on every path the zeroing is dead and removed.
  bool zeroed = result.persistent;
  DenseMap<Value, Tile> carries;
  for (Value v : cuts) {
    auto type = dyn_cast<TileType>(v.getType());
    if (!type)
      return loop.emitError() << "internal error: an overlapped loop carries a scalar";
    auto [ctx, dims] = layoutOf(v);
    carries[v] = declare(type.getElementType(), ctx, dims, "late", zeroed);
  }
  declareLateProduct(zeroed);

  // One iteration: tile `iv`'s early stage, with tile iv - 1's late stage
  // (`withLate`; else only its ring's copies) spliced in after the first
  // product's issue.
  Value span = loop.getSpans()[0];
  SpanVars spanVars;
  auto iteration = [&](bool withLate) -> LogicalResult {
    overlap->withLate = withLate;
    overlap->issueAt = std::string::npos;
    defineSpan(span, llvm::formatv("(i64)({0}) + {1} * {2}", lv.lower, lv.iv, lv.blockSize).str(),
               lv.upper, lv.blockSize, lv.lowerConst, lv.upperConst, lv.iv, lv.count);
    spanVars = spans[span];
    for (Operation *op : earlyOps)
      if (failed(emitOp(op)))
        return failure();
    if (overlap->issueAt == std::string::npos)
      return loop.emitError() << "internal error: an overlapped loop's first product issued "
                                 "nothing";
    // What the late stage of this tile reads, read before the carried
    // values change.
    for (Value v : cuts) {
      Tile &c = carries[v];
      Tile src = readableAt(tiles[v], c, 0);
      forEach(c, [&](ArrayRef<std::string> k) {
        line(llvm::formatv("{0}[{1}] = {2};", c.name, flat(c, k), at(src, k, 0)));
      });
      for (auto [d, from] : llvm::zip(c.dims, src.dims))
        d.extent = from.extent;
    }
    SmallVector<Tile> earlyCarried;
    SmallVector<Value> earlyValues;
    for (auto [i, c] : llvm::enumerate(carried))
      if ((int64_t)i != slotIndex) {
        earlyCarried.push_back(c);
        earlyValues.push_back(yield->getOperand(i));
      }
    if (failed(yieldCarried(earlyCarried, earlyValues, {})))
      return failure();
    std::string early = std::move(body);
    body.clear();
    int savedIndent = indent;
    indent = overlap->issueIndent;
    if (failed(emitLateStage(loop, withLate ? ArrayRef(lateOps) : ArrayRef<Operation *>(),
                             carries, spanVars, lv)))
      return failure();
    early.insert(overlap->issueAt, body);
    body = std::move(early);
    indent = savedIndent;
    return success();
  };
  // The late product's wait, its result the carried accumulator.
  auto drain = [&]() -> LogicalResult {
    for (StringRef l : llvm::split(StringRef(overlap->drain).rtrim('\n'), '\n'))
      if (!l.ltrim().starts_with("#line"))
        line(l.ltrim());
    tiles[o.late->getResult(0)] = overlap->result;
    return yieldCarried({carried[slotIndex]}, {yield->getOperand(slotIndex)}, {});
  };
  // Peeled: the first tile's early stage, the loop, the last tile's late
  // stage, so that every late stage and its wait run unconditionally (a
  // conditional one would keep the accumulator live across the early
  // stage in ptxas' view).
  line(llvm::formatv("if ({0} > 0) {{", lv.count));
  ++indent;
  line(llvm::formatv("const i64 {0} = 0;", lv.iv));
  if (failed(iteration(false)))
    return failure();
  --indent;
  line("}");
  line(llvm::formatv("for (i64 {0} = 1; {0} < {1}; ++{0}) {{", lv.iv, lv.count));
  ++indent;
  traceLoop(loop, TraceAt::iteration);
  if (failed(iteration(true)) || failed(drain()))
    return failure();
  --indent;
  line("}");
  line(llvm::formatv("if ({0} > 0) {{", lv.count));
  ++indent;
  line(llvm::formatv("const i64 {0} = {1};", lv.iv, lv.count));
  // The early ring's group of this iteration, empty.
  if (!producer)
    line("cp_async_commit();");
  overlap->lateAlone = true;
  if (failed(emitLateStage(loop, lateOps, carries, spanVars, lv)) || failed(drain()))
    return failure();
  overlap->lateAlone = false;
  --indent;
  line("}");
  // The last warpgroup's last pass stays open for the loops after this one
  // (closeTurns takes it back).
  overlap.reset();
  for (auto [res, c, arg] : llvm::zip(loop.getResults(), carried, loop.getRegionIterArgs())) {
    if (c.regCount == 0)
      scalars[res] = c.name;
    else
      tiles[res] = tiles[arg];
  }
  return success();
}
