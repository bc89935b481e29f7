//===- Loops.cpp - programs, loops and branches -----------------------------===//
//
// This file implements the program structure: the top-level loops numbered
// into one program-id space (flat, xyz, persistent), nested tile and grid
// loops, scf.for and scf.if, and the values they carry.
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

#include "lowering/Config.h"
#include "lowering/TypeInference.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <nlohmann/json.hpp>

#include <numeric>

using namespace mlir;
using namespace kite;
using namespace kite::emit;

void Emitter::defineSpan(Value span, StringRef begin, StringRef upper, int64_t bs,
                         int64_t lower, int64_t upperConst, StringRef id,
                         StringRef count) {
  SpanVars v;
  v.begin = fresh("b");
  v.valid = fresh("n");
  v.id = id.str();
  v.count = count.str();
  v.blockSize = bs;
  v.exact = upperConst >= 0 && lower >= 0 && (upperConst - lower) % bs == 0;
  v.alignElems = lower >= 0 ? (int64_t)std::gcd(lower, bs) : 1;
  v.upperConst = upperConst;
  line(llvm::formatv("const i64 {0} = {1};", v.begin, begin));
  line(llvm::formatv("const i64 {0} = min((i64){1}, (i64)({2}) - {3});", v.valid,
                     bs, upper, v.begin));
  spans[span] = v;
}

LogicalResult Emitter::emitTopLevelLoops() {
  Block &entry = kernel.getBody().front();
  SmallVector<Operation *> loops;
  for (Operation &op : entry)
    if (isa<TileForOp, GridForOp>(op))
      loops.push_back(&op);
  if (loops.empty())
    return kernel.emitError() << "kernel has no top-level tile() or grid() loop "
                                 "to map onto the GPU";
  auto configAttr = kernel->getAttrOfType<StringAttr>("kite.config");
  nlohmann::json config = nlohmann::json::parse(configAttr.getValue().str(),
                                                nullptr, false);
  std::vector<std::vector<int64_t>> loopOrders =
      config.value("loop_orders", std::vector<std::vector<int64_t>>{});

  std::vector<int64_t> l2Groupings =
      config.value("l2_groupings", std::vector<int64_t>{});
  std::string pidType = config.value("pid_type", std::string("flat"));

  // Programs per top-level loop, to lay out the program-id space first.
  int64_t totalPrograms = 0;
  SmallVector<SmallVector<int64_t>> allCounts;
  for (Operation *loopOp : loops) {
    SmallVector<int64_t> counts;
    int64_t n = 1;
    auto add = [&](ValueRange lbs, ValueRange ubs, SmallVector<int64_t> bss) {
      for (size_t d = 0; d < lbs.size(); ++d) {
        int64_t lb = getConstantIntValue(lbs[d]).value_or(0);
        int64_t ub = getConstantIntValue(ubs[d]).value_or(0);
        counts.push_back(std::max<int64_t>(0, llvm::divideCeil(ub - lb, std::max<int64_t>(bss[d], 1))));
        n *= counts.back();
      }
    };
    if (auto t = dyn_cast<TileForOp>(loopOp)) {
      SmallVector<int64_t> bss;
      for (Value b : t.getBlockSizes())
        bss.push_back(getConstantIntValue(b).value_or(1));
      add(t.getLowerBounds(), t.getUpperBounds(), bss);
    } else {
      auto g = cast<GridForOp>(loopOp);
      add(g.getLowerBounds(), g.getUpperBounds(),
          SmallVector<int64_t>(g.getNumDims(), 1));
    }
    allCounts.push_back(counts);
    totalPrograms += n;
  }
  bool xyz = pidType == "xyz";
  if (xyz && (loops.size() != 1 || allCounts[0].size() > 3))
    return kernel.emitError() << "pid_type 'xyz' needs a single top-level loop of "
                                 "at most 3 dims; use 'flat'";
  result.grid = {std::max<int64_t>(totalPrograms, 1), 1, 1};
  int closeLoops = 0;
  if (pidType == "persistent_interleaved" || pidType == "persistent_blocked") {
    // Each program loops over the program ids; the plan launches as many
    // programs as the SMs hold at once.
    result.persistent = true;
    if (pidType == "persistent_interleaved") {
      line(llvm::formatv("for (i64 kite_pid = blockIdx.x; kite_pid < {0}; "
                         "kite_pid += gridDim.x) {{",
                         totalPrograms));
    } else {
      line(llvm::formatv("const i64 kite_chunk = ({0} + gridDim.x - 1) / gridDim.x;",
                         totalPrograms));
      line(llvm::formatv("for (i64 kite_pid = blockIdx.x * kite_chunk; kite_pid < "
                         "min((i64){0}, (i64)(blockIdx.x + 1) * kite_chunk); ++kite_pid) {{",
                         totalPrograms));
    }
    ++indent;
    closeLoops = 1;
  } else if (xyz) {
    // The last dim on x, then y, then z.
    const SmallVector<int64_t> &c = allCounts[0];
    int64_t r = c.size();
    result.grid = {c[r - 1], r > 1 ? c[r - 2] : 1, r > 2 ? c[r - 3] : 1};
    if (result.grid[1] > 65535 || result.grid[2] > 65535)
      return kernel.emitError() << "pid_type 'xyz' needs at most 65535 tiles along "
                                   "the y and z dims; use 'flat'";
    line("const i64 kite_pid = 0;");
  } else {
    line("const i64 kite_pid = blockIdx.x;");
  }
  int64_t offset = 0;
  for (auto [li, loopOp] : llvm::enumerate(loops)) {
    ValueRange lbs, ubs;
    SmallVector<int64_t> bss;
    Block *bodyBlock;
    if (auto t = dyn_cast<TileForOp>(loopOp)) {
      lbs = t.getLowerBounds();
      ubs = t.getUpperBounds();
      for (Value b : t.getBlockSizes())
        bss.push_back(getConstantIntValue(b).value_or(-1));
      bodyBlock = t.getBodyBlock();
    } else {
      auto g = cast<GridForOp>(loopOp);
      lbs = g.getLowerBounds();
      ubs = g.getUpperBounds();
      bss.assign(lbs.size(), 1);
      bodyBlock = g.getBodyBlock();
    }
    int64_t rank = lbs.size();
    SmallVector<int64_t> counts(rank), lows(rank), highs(rank);
    int64_t total = 1;
    for (int64_t d = 0; d < rank; ++d) {
      std::optional<int64_t> lb = getConstantIntValue(lbs[d]);
      std::optional<int64_t> ub = getConstantIntValue(ubs[d]);
      if (!lb || !ub || bss[d] < 1)
        return loopOp->emitError()
               << "the bounds of a top-level loop must be known when the kernel "
                  "is specialized (they depend on a run-time scalar; wrap it in "
                  "kite::specialize())";
      lows[d] = *lb;
      highs[d] = *ub;
      counts[d] = std::max<int64_t>(0, llvm::divideCeil(*ub - *lb, bss[d]));
      total *= counts[d];
    }
    // Choose the main context: the largest tile of the body.
    mainContext = nullptr;
    SmallVector<int64_t> biggest;
    int64_t biggestCount = 0;
    loopOp->walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        if (auto tile = dyn_cast<TileType>(t)) {
          SmallVector<int64_t> padded;
          int64_t n = 1;
          for (int64_t d : tile.getShape()) {
            padded.push_back(pow2(d));
            n *= pow2(d);
          }
          if (n > biggestCount) {
            biggestCount = n;
            biggest = padded;
          }
        }
    });
    if (biggest.empty())
      biggest.push_back(1);
    mainContext = newContext(biggest);

    lineDirective(loopOp);
    line(llvm::formatv("if (kite_pid >= {0} && kite_pid < {1}) {{", offset,
                       offset + total));
    ++indent;
    line(llvm::formatv("i64 kite_rest = kite_pid - {0};", offset));
    // Decompose: by default the last dim varies fastest.
    SmallVector<int64_t> order;
    if (li < loopOrders.size() && (int64_t)loopOrders[li].size() == rank)
      order.assign(loopOrders[li].begin(), loopOrders[li].end());
    else
      for (int64_t d = rank - 1; d >= 0; --d)
        order.push_back(d);
    SmallVector<std::string> ids(rank);
    int64_t group = li < l2Groupings.size() ? l2Groupings[li] : 1;
    if (xyz) {
      static const char *axes[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
      for (int64_t d = 0; d < rank; ++d) {
        ids[d] = fresh("i");
        line(llvm::formatv("const i64 {0} = {1};", ids[d], axes[rank - 1 - d]));
      }
    } else if (rank == 2 && group > 1) {
      // L2 grouping: `group` rows of tiles walk the columns together, so
      // neighbouring programs share operand tiles in L2.
      std::string g = fresh("grp"), first = fresh("first"), size = fresh("gsz"),
                  in = fresh("in");
      ids[0] = fresh("i");
      ids[1] = fresh("i");
      line(llvm::formatv("const i64 {0} = kite_rest / {1};", g, group * counts[1]));
      line(llvm::formatv("const i64 {0} = {1} * {2};", first, g, group));
      line(llvm::formatv("const i64 {0} = min((i64){1}, (i64){2} - {3});", size, group,
                         counts[0], first));
      line(llvm::formatv("const i64 {0} = kite_rest % {1};", in, group * counts[1]));
      line(llvm::formatv("const i64 {0} = {1} + {2} % {3};", ids[0], first, in, size));
      line(llvm::formatv("const i64 {0} = {1} / {2};", ids[1], in, size));
    } else {
      for (int64_t d : order) {
        if (d < 0 || d >= rank)
          return loopOp->emitError() << "loop_orders has an invalid dim " << d;
        ids[d] = fresh("i");
        line(llvm::formatv("const i64 {0} = kite_rest % {1};", ids[d], counts[d]));
        line(llvm::formatv("kite_rest /= {0};", counts[d]));
      }
    }
    for (int64_t d = 0; d < rank; ++d) {
      Value var = bodyBlock->getArgument(d);
      std::string begin = llvm::formatv("{0} + {1} * {2}", lows[d], ids[d], bss[d]);
      if (isa<SpanType>(var.getType())) {
        defineSpan(var, begin, std::to_string(highs[d]), bss[d], lows[d], highs[d],
                   ids[d], std::to_string(counts[d]));
      } else {
        std::string name = fresh("g");
        line(llvm::formatv("const i64 {0} = {1};", name, begin));
        scalars[var] = name;
      }
    }
    if (failed(emitBlock(*bodyBlock)))
      return failure();
    --indent;
    line("}");
    offset += total;
  }
  for (int i = 0; i < closeLoops; ++i) {
    --indent;
    line("}");
  }
  result.numPrograms = result.grid[0] * result.grid[1] * result.grid[2];
  return success();
}

LogicalResult Emitter::emitBlock(Block &block) {
  // Tensors written since the last barrier (storedSinceBarrier): a program
  // starts with none; a loop body's first read of a tensor the body writes
  // follows the previous iteration's writes; what a branch of an `if`
  // writes is kept, and what it clears by a barrier is not (the other
  // branch may not have one).
  Operation *parent = block.getParentOp();
  std::set<std::string> before = storedSinceBarrier;
  auto isLoop = [](Operation *op) { return isa<TileForOp, GridForOp, scf::ForOp>(op); };
  if (isLoop(parent) && isa<func::FuncOp>(parent->getParentOp())) {
    storedSinceBarrier.clear();
  } else if (isLoop(parent)) {
    parent->walk([&](Operation *op) {
      Value t;
      if (auto s = dyn_cast<StoreOp>(op))
        t = s.getTensor();
      else if (auto a = dyn_cast<AtomicOp>(op))
        t = a.getTensor();
      if (t && tensors.count(t))
        storedSinceBarrier.insert(tensors[t].ptr);
    });
  }
  for (Operation &op : block) {
    if (isa<YieldOp, scf::YieldOp>(op))
      continue;
    if (failed(emitOp(&op)))
      return failure();
  }
  if (isa<scf::IfOp>(parent))
    storedSinceBarrier.insert(before.begin(), before.end());
  return success();
}

SmallVector<Tile> Emitter::declareCarried(ValueRange inits,
                                          Block::BlockArgListType args,
                                          Operation *op) {
  SmallVector<Tile> carried;
  for (auto [init, arg] : llvm::zip(inits, args)) {
    if (auto it = tiles.find(init); it != tiles.end()) {
      Tile c = declare(it->second.elem, it->second.ctx, it->second.dims, "acc");
      forEach(c, [&](ArrayRef<std::string> k) {
        line(llvm::formatv("{0}[{1}] = {2}[{1}];", c.name, flat(c, k), it->second.name));
      });
      tiles[arg] = c;
      carried.push_back(c);
    } else {
      std::string name = fresh("acc");
      line(llvm::formatv("{0} {1} = {2};", cType(init.getType()), name, scalar(init)));
      scalars[arg] = name;
      Tile marker;
      marker.name = name;
      marker.regCount = 0; // a scalar
      carried.push_back(marker);
    }
  }
  return carried;
}

LogicalResult Emitter::yieldCarried(ArrayRef<Tile> carried, ValueRange values,
                                    Block::BlockArgListType args) {
  // Read every yielded value before writing any carried one (a yield may
  // swap them).
  SmallVector<std::string> temps;
  for (auto [c, v] : llvm::zip(carried, values)) {
    if (c.regCount == 0) {
      std::string t = fresh("y");
      line(llvm::formatv("const auto {0} = {1};", t, scalar(v)));
      temps.push_back(t);
      continue;
    }
    Tile src = tiles[v];
    if (!compatible(src, c, 0) || src.rank() != c.rank())
      src = convert(src, c.ctx, c.dims);
    Tile t = declare(c.elem, c.ctx, c.dims, "y");
    forEach(t, [&](ArrayRef<std::string> k) {
      line(llvm::formatv("{0}[{1}] = {2};", t.name, flat(t, k), at(src, k, 0)));
    });
    temps.push_back(t.name);
  }
  for (auto [c, t] : llvm::zip(carried, temps)) {
    if (c.regCount == 0) {
      line(llvm::formatv("{0} = {1};", c.name, t));
      continue;
    }
    line("#pragma unroll");
    line(llvm::formatv("for (int q = 0; q < {0}; ++q) {1}[q] = {2}[q];", c.regCount,
                       c.name, t));
  }
  return success();
}

LogicalResult Emitter::finishLoop(Block &body, ArrayRef<Tile> carried,
                                  Block::BlockArgListType iterArgs,
                                  ResultRange results, int opened) {
  if (failed(emitBlock(body)))
    return failure();
  if (failed(yieldCarried(carried, body.getTerminator()->getOperands(), iterArgs)))
    return failure();
  for (int i = 0; i < opened; ++i) {
    --indent;
    line("}");
  }
  for (auto [res, c, arg] : llvm::zip(results, carried, iterArgs)) {
    if (c.regCount == 0)
      scalars[res] = c.name;
    else
      tiles[res] = tiles[arg];
  }
  return success();
}

LogicalResult Emitter::emitNestedTileFor(TileForOp loop) {
  if (auto plan = loop->getAttrOfType<DictionaryAttr>("kite.mainloop"))
    return emitMainloop(loop, plan);
  SmallVector<Tile> carried =
      declareCarried(loop.getInitArgs(), loop.getRegionIterArgs(), loop);
  int opened = 0;
  for (unsigned d = 0; d < loop.getNumDims(); ++d) {
    std::optional<int64_t> bs = getConstantIntValue(loop.getBlockSizes()[d]);
    if (!bs || *bs < 1)
      return loop.emitError() << "block size is not a constant after config application";
    std::string lb = scalar(loop.getLowerBounds()[d]);
    std::string ub = scalar(loop.getUpperBounds()[d]);
    std::string it = fresh("t");
    std::string count = fresh("c");
    line(llvm::formatv("const i64 {0} = ((i64)({1}) - (i64)({2}) + {3}) / {4};", count,
                       ub, lb, *bs - 1, *bs));
    line(llvm::formatv("for (i64 {0} = 0; {0} < {1}; ++{0}) {{", it, count));
    ++indent;
    ++opened;
    int64_t lowC = getConstantIntValue(loop.getLowerBounds()[d]).value_or(-1);
    int64_t upC = getConstantIntValue(loop.getUpperBounds()[d]).value_or(-1);
    defineSpan(loop.getSpans()[d],
               llvm::formatv("(i64)({0}) + {1} * {2}", lb, it, *bs).str(), ub, *bs,
               lowC, upC, it, count);
  }
  return finishLoop(*loop.getBodyBlock(), carried, loop.getRegionIterArgs(),
                    loop.getResults(), opened);
}

LogicalResult Emitter::emitNestedGridFor(GridForOp loop) {
  SmallVector<Tile> carried =
      declareCarried(loop.getInitArgs(), loop.getRegionIterArgs(), loop);
  int opened = 0;
  for (unsigned d = 0; d < loop.getNumDims(); ++d) {
    std::string it = fresh("g");
    line(llvm::formatv("for (i64 {0} = {1}; {0} < (i64)({2}); ++{0}) {{", it,
                       scalar(loop.getLowerBounds()[d]),
                       scalar(loop.getUpperBounds()[d])));
    ++indent;
    ++opened;
    scalars[loop.getIndices()[d]] = it;
  }
  return finishLoop(*loop.getBodyBlock(), carried, loop.getRegionIterArgs(),
                    loop.getResults(), opened);
}

LogicalResult Emitter::emitScfFor(scf::ForOp loop) {
  SmallVector<Tile> carried =
      declareCarried(loop.getInitArgs(), loop.getRegionIterArgs(), loop);
  std::string it = fresh("j");
  Type ivType = loop.getInductionVar().getType();
  line(llvm::formatv("for ({0} {1} = {2}; {1} < {3}; {1} += {4}) {{",
                     cType(ivType), it, scalar(loop.getLowerBound()),
                     scalar(loop.getUpperBound()), scalar(loop.getStep())));
  ++indent;
  scalars[loop.getInductionVar()] = it;
  return finishLoop(*loop.getBody(), carried, loop.getRegionIterArgs(),
                    loop.getResults(), /*opened=*/1);
}

LogicalResult Emitter::emitScfIf(scf::IfOp op) {
  // Results are declared before the branches and assigned in each.
  SmallVector<Tile> results;
  SmallVector<Value> placeholders;
  auto emitBranch = [&](Block *block, bool first) -> LogicalResult {
    if (failed(emitBlock(*block)))
      return failure();
    auto yield = cast<scf::YieldOp>(block->getTerminator());
    for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
      Tile &r = results[i];
      if (r.regCount == 0) {
        line(llvm::formatv("{0} = {1};", r.name, scalar(v)));
        continue;
      }
      Tile src = tiles[v];
      if (!compatible(src, r, 0))
        src = convert(src, r.ctx, r.dims);
      forEach(r, [&](ArrayRef<std::string> k) {
        line(llvm::formatv("{0}[{1}] = {2};", r.name, flat(r, k), at(src, k, 0)));
      });
    }
    return success();
  };
  for (Value res : op.getResults()) {
    if (auto tile = dyn_cast<TileType>(res.getType())) {
      // Lay results out like the then-branch's value would be laid out fresh.
      SmallVector<int64_t> padded;
      for (int64_t d : tile.getShape())
        padded.push_back(pow2(d));
      auto [ctx, dims] = layoutFor(padded);
      results.push_back(declare(tile.getElementType(), ctx, dims, "r"));
      tiles[res] = results.back();
    } else {
      std::string name = fresh("r");
      line(llvm::formatv("{0} {1};", cType(res.getType()), name));
      Tile marker;
      marker.name = name;
      marker.regCount = 0;
      results.push_back(marker);
      scalars[res] = name;
    }
  }
  line(llvm::formatv("if ({0}) {{", scalar(op.getCondition())));
  ++indent;
  if (failed(emitBranch(op.thenBlock(), true)))
    return failure();
  --indent;
  if (op.elseBlock() &&
      (!op.elseBlock()->without_terminator().empty() || op.getNumResults())) {
    line("} else {");
    ++indent;
    if (failed(emitBranch(op.elseBlock(), false)))
      return failure();
    --indent;
  }
  line("}");
  return success();
}
