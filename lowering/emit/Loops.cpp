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


#include <numeric>

using namespace mlir;
using namespace kite;
using namespace kite::emit;

bool kite::emit::tilesAlwaysFull(Value span, int64_t bs, int64_t lower, int64_t upperConst) {
  if (upperConst >= 0 && lower >= 0 && (upperConst - lower) % bs == 0)
    return true;
  // A loop's tiles begin before its end, so a tile of one is always full
  // (a row of a size taken at launch, attention's batch).
  auto [loop, dim] = getSpanLoop(span);
  return bs == 1 || (loop && loop->hasAttr(kFullTilesAttrName));
}

void Emitter::defineSpan(Value span, StringRef begin, StringRef upper, int64_t bs,
                         int64_t lower, int64_t upperConst, StringRef id,
                         StringRef count) {
  SpanVars v;
  v.begin = fresh("b");
  v.valid = fresh("n");
  v.id = id.str();
  v.count = count.str();
  v.blockSize = bs;
  v.exact = tilesAlwaysFull(span, bs, lower, upperConst);
  v.alignElems = lower >= 0 ? (int64_t)std::gcd(lower, bs) : 1;
  v.upperConst = upperConst;
  line(llvm::formatv("const i64 {0} = {1};", v.begin, begin));
  line(llvm::formatv("const i64 {0} = min((i64){1}, (i64)({2}) - {3});", v.valid,
                     bs, upper, v.begin));
  spans[span] = v;
}

namespace {
/// The bounds of one top-level loop. A bound is a constant after
/// specialization, or (a dynamic-shapes plan) a size taken at launch; each
/// count is a C++ i64 expression, a number where it is constant.
struct TopLevelLoop {
  Operation *op;
  Block *body;
  SmallVector<int64_t> lows, highs, blockSizes; // highs: -1 where taken at launch
  SmallVector<std::string> highExprs, counts;
  SmallVector<int64_t> endDivisors; // of a high taken at launch (0 for a constant)
  std::optional<int64_t> programs = 1; // where every count is constant
  LaunchExpr programsExpr = LaunchExpr::constant(1);
};

/// `a op b`, with constants folded and 0 + x, x * 1, x - 0 simplified.
LaunchExpr combine(const LaunchExpr &a, const LaunchExpr &b, LaunchExpr::Op op) {
  using Op = LaunchExpr::Op;
  auto constOf = [](const LaunchExpr &e) -> std::optional<int64_t> {
    if (e.terms.size() == 1 && e.terms[0].op == Op::constant)
      return e.terms[0].value;
    return std::nullopt;
  };
  std::optional<int64_t> ca = constOf(a), cb = constOf(b);
  if (ca && cb && (op == Op::add || op == Op::mul || op == Op::sub))
    return LaunchExpr::constant(op == Op::add ? *ca + *cb : op == Op::sub ? *ca - *cb : *ca * *cb);
  if ((op == Op::mul && ca == 1) || (op == Op::add && ca == 0))
    return b;
  if ((op == Op::mul && cb == 1) || ((op == Op::add || op == Op::sub) && cb == 0))
    return a;
  LaunchExpr e = a;
  e.terms.insert(e.terms.end(), b.terms.begin(), b.terms.end());
  e.terms.push_back({op});
  return e;
}

/// What a size taken at launch is a multiple of (its argument's divisor).
int64_t divisorOf(func::FuncOp kernel, Value size) {
  std::optional<SizeOrigin> origin = sizeOriginOf(size);
  auto arg = origin ? dyn_cast<BlockArgument>(origin->first) : BlockArgument();
  if (!arg || origin->second < 0)
    return 1;
  auto divisors = kernel.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(), "kite.divisors");
  if (!divisors || origin->second >= (int64_t)divisors.size())
    return 1;
  return std::max<int64_t>(divisors[origin->second], 1);
}

/// The bounds of top-level loop `loopOp`; an error if one is neither a
/// constant nor computable at launch.
FailureOr<TopLevelLoop> topLevelLoop(func::FuncOp kernel, Operation *loopOp,
                                     llvm::function_ref<std::string(Value)> scalarOf) {
  TopLevelLoop l{loopOp, nullptr};
  ValueRange lbs, ubs;
  if (auto t = dyn_cast<TileForOp>(loopOp)) {
    lbs = t.getLowerBounds();
    ubs = t.getUpperBounds();
    for (Value b : t.getBlockSizes())
      l.blockSizes.push_back(getConstantIntValue(b).value_or(-1));
    l.body = t.getBodyBlock();
  } else {
    auto g = cast<GridForOp>(loopOp);
    lbs = g.getLowerBounds();
    ubs = g.getUpperBounds();
    l.blockSizes.assign(lbs.size(), 1);
    l.body = g.getBodyBlock();
  }
  using Op = LaunchExpr::Op;
  for (size_t d = 0; d < lbs.size(); ++d) {
    std::optional<int64_t> lb = getConstantIntValue(lbs[d]);
    std::optional<int64_t> ub = getConstantIntValue(ubs[d]);
    std::optional<LaunchExpr> ubExpr = ub ? std::nullopt : launchExprOf(ubs[d]);
    if (!lb || (!ub && !ubExpr) || l.blockSizes[d] < 1)
      return loopOp->emitError()
             << "the bounds of a top-level loop must be known when the kernel "
                "is specialized (they depend on a run-time scalar; wrap it in "
                "kite::specialize())";
    int64_t bs = l.blockSizes[d];
    l.lows.push_back(*lb);
    if (ub) {
      int64_t count = std::max<int64_t>(0, llvm::divideCeil(*ub - *lb, bs));
      l.highs.push_back(*ub);
      l.highExprs.push_back(std::to_string(*ub));
      l.counts.push_back(std::to_string(count));
      l.endDivisors.push_back(0);
      if (l.programs)
        *l.programs *= count;
      l.programsExpr = combine(l.programsExpr, LaunchExpr::constant(count), Op::mul);
    } else {
      std::string high = scalarOf(ubs[d]);
      l.highs.push_back(-1);
      l.highExprs.push_back(high);
      l.counts.push_back(
          llvm::formatv("max((i64)0, ((i64)({0}) - {1} + {2} - 1) / {2})", high, *lb, bs).str());
      l.endDivisors.push_back(divisorOf(kernel, ubs[d]));
      l.programs.reset();
      // max(ceildiv(ub - lb, bs), 0)
      LaunchExpr count = combine(*ubExpr, LaunchExpr::constant(*lb), Op::sub);
      count = combine(count, LaunchExpr::constant(bs), Op::ceildiv);
      count = combine(count, LaunchExpr::constant(0), Op::max);
      l.programsExpr = combine(l.programsExpr, count, Op::mul);
    }
  }
  return l;
}

} // namespace

/// The value of i64 scalar `v` where the top-level loop's spans sit at the
/// tiles `ids` (per span: begin, end), folding constants and the integer
/// ops bounds are made of; nullopt where it depends on anything else.
static std::optional<int64_t>
evalBound(Value v, const DenseMap<Value, std::pair<int64_t, int64_t>> &spanAt, int depth = 0) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 64)
    return std::nullopt;
  if (auto q = dyn_cast<SpanQueryOp>(def)) {
    auto it = spanAt.find(q.getSpan());
    if (it == spanAt.end())
      return std::nullopt;
    if (q.getField() == SpanField::begin)
      return it->second.first;
    if (q.getField() == SpanField::end)
      return it->second.second;
    return std::nullopt;
  }
  if (def->getNumOperands() != 2 || def->getNumResults() != 1)
    return std::nullopt;
  std::optional<int64_t> a = evalBound(def->getOperand(0), spanAt, depth + 1);
  std::optional<int64_t> b = evalBound(def->getOperand(1), spanAt, depth + 1);
  if (!a || !b)
    return std::nullopt;
  auto floorDiv = [](int64_t x, int64_t y) { return x / y - ((x % y != 0) && ((x < 0) != (y < 0))); };
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(def)
      .Case([&](arith::AddIOp) { return *a + *b; })
      .Case([&](arith::SubIOp) { return *a - *b; })
      .Case([&](arith::MulIOp) { return *a * *b; })
      .Case([&](arith::MaxSIOp) { return std::max(*a, *b); })
      .Case([&](arith::MinSIOp) { return std::min(*a, *b); })
      .Case([&](arith::FloorDivSIOp) -> std::optional<int64_t> {
        return *b ? std::optional(floorDiv(*a, *b)) : std::nullopt;
      })
      .Case([&](arith::DivSIOp) -> std::optional<int64_t> {
        return *b ? std::optional(*a / *b) : std::nullopt;
      })
      .Case([&](arith::CeilDivSIOp) -> std::optional<int64_t> {
        return *b ? std::optional(-floorDiv(-*a, *b)) : std::nullopt;
      })
      .Default([](Operation *) { return std::nullopt; });
}

SmallVector<bool> kite::emit::longestFirstDims(Block *body, ArrayRef<int64_t> lows,
                                               ArrayRef<int64_t> highs, ArrayRef<int64_t> bss) {
  int64_t rank = lows.size();
  SmallVector<bool> reversed(rank, false);
  // The tiles the nested loops of the body run at top-level tile `ids`, or
  // nullopt where a bound is not known at compile time.
  auto work = [&](ArrayRef<int64_t> ids) -> std::optional<int64_t> {
    DenseMap<Value, std::pair<int64_t, int64_t>> spanAt;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t begin = lows[d] + ids[d] * bss[d];
      spanAt[body->getArgument(d)] = {begin, std::min(begin + bss[d], highs[d])};
    }
    int64_t total = 0;
    for (Operation &op : *body) {
      auto loop = dyn_cast<TileForOp>(&op);
      if (!loop)
        continue;
      for (unsigned d = 0; d < loop.getNumDims(); ++d) {
        std::optional<int64_t> lb = evalBound(loop.getLowerBounds()[d], spanAt);
        std::optional<int64_t> ub = evalBound(loop.getUpperBounds()[d], spanAt);
        std::optional<int64_t> bs = getConstantIntValue(loop.getBlockSizes()[d]);
        if (!lb || !ub || !bs || *bs < 1)
          return std::nullopt;
        total += std::max<int64_t>(0, (*ub - *lb + *bs - 1) / *bs);
      }
    }
    return total;
  };
  for (int64_t d = 0; d < rank; ++d) {
    if (lows[d] < 0 || highs[d] < 0 || !isa<SpanType>(body->getArgument(d).getType()))
      continue;
    int64_t count = (highs[d] - lows[d] + bss[d] - 1) / bss[d];
    if (count < 2)
      continue;
    SmallVector<int64_t> first(rank, 0), last(rank, 0);
    last[d] = count - 1;
    std::optional<int64_t> a = work(first), b = work(last);
    reversed[d] = a && b && *b > *a;
  }
  return reversed;
}

LogicalResult Emitter::emitTopLevelLoops() {
  Block &entry = kernel.getBody().front();
  std::vector<TopLevelLoop> loops;
  std::optional<int64_t> totalConst = 0;
  for (Operation &op : entry) {
    if (!isa<TileForOp, GridForOp>(op))
      continue;
    FailureOr<TopLevelLoop> l =
        topLevelLoop(kernel, &op, [&](Value v) { return scalar(v); });
    if (failed(l))
      return failure();
    loops.push_back(*l);
    if (totalConst && l->programs)
      *totalConst += *l->programs;
    else
      totalConst.reset();
  }
  if (loops.empty())
    return kernel.emitError() << "kernel has no top-level tile() or grid() loop "
                                 "to map onto the GPU";
  // The program count and each loop's first program id, as C++ (numbers
  // where constant, else variables of the sizes taken at launch).
  SmallVector<std::string> offsets, totals;
  std::string total = "0";
  LaunchExpr totalExpr = LaunchExpr::constant(0);
  for (auto [li, loop] : llvm::enumerate(loops)) {
    offsets.push_back(total);
    std::string programs;
    if (loop.programs) {
      programs = std::to_string(*loop.programs);
    } else {
      programs = fresh("kite_programs");
      line(llvm::formatv("const i64 {0} = {1};", programs, llvm::join(loop.counts, " * ")));
    }
    totals.push_back(programs);
    if (totalConst) {
      total = std::to_string(std::stoll(total) + std::stoll(programs));
    } else if (li + 1 < loops.size() || li > 0) {
      std::string next = fresh("kite_offset");
      line(llvm::formatv("const i64 {0} = {1} + {2};", next, total, programs));
      total = next;
    } else {
      total = programs;
    }
    totalExpr = combine(totalExpr, loop.programsExpr, LaunchExpr::Op::add);
  }
  const std::vector<std::vector<int64_t>> &loopOrders = config.loop_orders;
  const std::vector<int64_t> &l2Groupings = config.l2_groupings;
  const std::string &pidType = config.pid_type;
  if (!totalConst && pidType == "xyz")
    return emitConfigRejection(kernel)
               << "pid_type 'xyz' needs a grid known at compile time, and this plan takes "
                  "sizes at launch; use 'flat'",
           failure();
  // A split main loop's tile runs as splitK programs (kite_split).
  kernel.walk([&](TileForOp loop) {
    if (auto plan = loop->getAttrOfType<DictionaryAttr>("kite.mainloop"))
      if (auto s = plan.getAs<IntegerAttr>("split_k"))
        splitK = s.getInt();
  });
  if (splitK > 1) {
    if (totalConst)
      totalConst = *totalConst * splitK;
    totalExpr = combine(totalExpr, LaunchExpr::constant(splitK), LaunchExpr::Op::mul);
  }
  if (config.stream_k) {
    if (failed(planStreamK()))
      return failure();
    // As many programs as the SMs hold, even for fewer tiles than that
    // (their K iterations are then all shared out): the grid's programs
    // are capped by the tiles' iterations, not the tiles.
    // (At most 2^30: the runtime launches only the resident programs.)
    constexpr int64_t kCap = int64_t(1) << 30;
    int64_t iters = std::max<int64_t>(streamKIters, 1);
    if (totalConst)
      totalConst = std::min(*totalConst * iters, kCap);
    totalExpr = combine(combine(totalExpr, LaunchExpr::constant(iters), LaunchExpr::Op::mul),
                        LaunchExpr::constant(kCap), LaunchExpr::Op::min);
  }
  planPrivateAtomics();
  if (pidType == "persistent_dynamic") {
    // The launch's ticket counter (zeroed at each launch) and the slots the
    // program ids pass through.
    CudaKernel::Param tickets{CudaKernel::Param::Kind::Workspace, 4u, "kite_tickets"};
    tickets.zeroed = true;
    result.params.push_back(tickets);
    line("__shared__ i64 kite_next[2]; // the program ids taken, in turn");
    staticSharedBytes += 16;
  }
  // Top-level loop li's order of dims over program ids (empty: the
  // default) and its L2 grouping (1: none), from the config.
  auto orderOf = [&](size_t li) {
    SmallVector<int64_t> order;
    if (li < loopOrders.size() && loopOrders[li].size() == loops[li].counts.size())
      order.assign(loopOrders[li].begin(), loopOrders[li].end());
    return order;
  };
  auto groupOf = [&](size_t li) { return li < l2Groupings.size() ? l2Groupings[li] : 1; };
  if (config.cluster_size > 1 &&
      failed(planCluster(loops[0].body, loops[0].counts, orderOf(0), groupOf(0), totalConst,
                         loops.size())))
    return failure();
  if (producer) {
    SmallVector<Operation *> loads;
    kernel.walk([&](LoadOp l) {
      if (prefetches.count(l))
        loads.push_back(l);
    });
    planProducer(loads);
    if (producerRejection.empty() && clusterDim >= 0)
      planMulticasts();
    if (!producerRejection.empty())
      return emitConfigRejection(kernel) << "the config does not fit: " << producerRejection,
             failure();
    emitRings();
  }
  openPrivateAtomics();
  // The programs this block runs: each top-level loop's tiles.
  auto emitPrograms = [&]() -> LogicalResult {
    FailureOr<int> closeLoops = openProgramLoop(pidType, total, totalConst.value_or(-1),
                                                loops.size(), loops.front().counts);
    if (failed(closeLoops))
      return failure();
    if (!totalConst) {
      result.grid = {1, 1, 1};
      result.gridExpr = totalExpr;
    }
    for (auto [li, loop] : llvm::enumerate(loops)) {
      if (failed(emitTopLevelLoop(loop.op, loop.body, loop.lows, loop.highs, loop.highExprs,
                                  loop.endDivisors, loop.blockSizes, loop.counts, offsets[li],
                                  totals[li], orderOf(li), groupOf(li), pidType == "xyz")))
        return failure();
    }
    for (int i = 0; i < *closeLoops; ++i) {
      --indent;
      line("}");
    }
    return success();
  };
  if (producer) {
    // The roles split once: the producer warpgroup gives registers back
    // and its first thread runs the programs' copies; the computing
    // warpgroups take them and run the programs.
    // Only where the split gives the computing threads more than they
    // hold at launch (not at 8 warps and one program an SM, whose threads
    // start at the 255 a thread can address).
    auto [producerRegs, computeRegs] = producerRegisters();
    bool split = computeRegs > launchRegisters();
    line(llvm::formatv("if (threadIdx.x >= {0}) {{", numThreads));
    ++indent;
    if (split)
      line(llvm::formatv("setmaxnreg_dec<{0}>();", producerRegs));
    line(llvm::formatv("if (threadIdx.x == {0}) {{", numThreads));
    ++indent;
    if (clusterDim >= 0)
      line("const unsigned kite_cta = cluster_rank(); // which boxes of a multicast it copies");
    // Its slice defines its own names for the scalars and spans it needs.
    DenseMap<Value, std::string> savedScalars = scalars;
    DenseMap<Value, SpanVars> savedSpans = spans;
    producing = true;
    if (failed(emitPrograms()))
      return failure();
    producing = false;
    scalars = std::move(savedScalars);
    spans = std::move(savedSpans);
    --indent;
    line("}");
    --indent;
    line("} else {");
    ++indent;
    if (split)
      line(llvm::formatv("setmaxnreg_inc<{0}>();", computeRegs));
  }
  if (failed(emitPrograms()))
    return failure();
  if (producer) {
    --indent;
    line("}");
  }
  if (clusterDim >= 0)
    line("cluster_sync(); // no program leaves while the other may arrive on its mbarriers");
  flushPrivateAtomics();
  result.numPrograms = result.grid[0] * result.grid[1] * result.grid[2];
  return success();
}

FailureOr<int> Emitter::openProgramLoop(StringRef pidType, StringRef totalPrograms,
                                        int64_t totalConst, size_t numLoops,
                                        ArrayRef<std::string> firstCounts) {
  bool xyz = pidType == "xyz";
  if (xyz && (numLoops != 1 || firstCounts.size() > 3))
    return kernel.emitError() << "pid_type 'xyz' needs a single top-level loop of "
                                 "at most 3 dims; use 'flat'";
  result.grid = {std::max<int64_t>(totalConst, 1), 1, 1};
  if (pidType == "persistent_dynamic") {
    // Each program takes the next program id as it finishes one: its
    // block's id first, then a ticket from the launch's counter. Without a
    // producer, one thread takes it and the others read it after a
    // barrier (two slots, so that the next write never meets a late read);
    // with one, the producer's thread takes it and passes it on through
    // kite_pids, a ring of two slots the computing threads read in the
    // same order.
    result.persistent = true;
    line("for (unsigned kite_turn = 0;; ++kite_turn) {");
    ++indent;
    if (!producer) {
      line("if (threadIdx.x == 0) kite_next[kite_turn % 2] = kite_next_program(kite_tickets, "
           "kite_turn);");
      line(sync());
      line("const i64 kite_pid = kite_next[kite_turn % 2];");
    } else if (producing) {
      line("const i64 kite_pid = kite_next_program(kite_tickets, kite_turn);");
      line("kite_pids.put(kite_next, kite_turn, kite_pid);");
    } else {
      line("const i64 kite_pid = kite_pids.take(kite_next, kite_turn);");
    }
    line(llvm::formatv("if (kite_pid >= {0}) break;", totalPrograms));
    return 1;
  }
  if (streamKLoop) {
    // Units of a stream-K schedule: whole tiles, then parts of the tiles
    // of the last wave (StreamK; the same units in the producer's slice).
    result.persistent = true;
    line(llvm::formatv("StreamK kite_sk({0}, {1});", totalPrograms, streamKIters));
    line("i64 kite_pid; // the unit: a tile, its K tiles [kite_kb, kite_ke)");
    line("int kite_kb, kite_ke;");
    line("while (kite_sk.next_unit(kite_pid, kite_kb, kite_ke)) {");
    ++indent;
    return 1;
  }
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
    return 1;
  }
  if (xyz) {
    // The last dim on x, then y, then z (constant counts: see the caller).
    SmallVector<int64_t> c;
    for (const std::string &count : firstCounts)
      c.push_back(std::stoll(count));
    int64_t r = c.size();
    result.grid = {c[r - 1], r > 1 ? c[r - 2] : 1, r > 2 ? c[r - 3] : 1};
    if (result.grid[1] > 65535 || result.grid[2] > 65535)
      return kernel.emitError() << "pid_type 'xyz' needs at most 65535 tiles along "
                                   "the y and z dims; use 'flat'";
    line("const i64 kite_pid = 0;");
    return 0;
  }
  if (splitK > 1) {
    line(llvm::formatv("const i64 kite_pid = blockIdx.x / {0};", splitK));
    line(llvm::formatv("const int kite_split = blockIdx.x % {0};", splitK));
    return 0;
  }
  line("const i64 kite_pid = blockIdx.x;");
  return 0;
}

LogicalResult Emitter::emitTopLevelLoop(Operation *loopOp, Block *bodyBlock,
                                        ArrayRef<int64_t> lows, ArrayRef<int64_t> highs,
                                        ArrayRef<std::string> highExprs,
                                        ArrayRef<int64_t> endDivisors, ArrayRef<int64_t> bss,
                                        ArrayRef<std::string> counts, StringRef offset,
                                        StringRef total, ArrayRef<int64_t> order,
                                        int64_t group, bool xyz) {
  int64_t rank = counts.size();
  // The loop's main context (kite-assign-layouts' kite.layout) is
  // numbered first.
  if (auto main = loopOp->getAttrOfType<BlockedLayoutAttr>(kLayoutAttrName))
    contextOf(main);
  lineDirective(loopOp);
  bool constant = llvm::all_of(highs, [](int64_t h) { return h >= 0; });
  if (constant && llvm::all_of(offset, ::isdigit))
    line(llvm::formatv("if (kite_pid >= {0} && kite_pid < {1}) {{", offset,
                       std::stoll(offset.str()) + std::stoll(total.str())));
  else
    line(llvm::formatv("if (kite_pid >= {0} && kite_pid < {0} + {1}) {{", offset, total));
  ++indent;
  // A cluster's two programs (ids 2c and 2c + 1) take tiles 2i and 2i + 1
  // of clusterDim, the tile i of cluster c in the clusters' order.
  SmallVector<std::string> idCounts(counts);
  if (clusterDim >= 0) {
    line(llvm::formatv("i64 kite_rest = (kite_pid - {0}) / 2;", offset));
    idCounts[clusterDim] = std::to_string(std::stoll(counts[clusterDim]) / 2);
  } else {
    line(llvm::formatv("i64 kite_rest = kite_pid - {0};", offset));
  }
  FailureOr<SmallVector<std::string>> ids =
      decomposeProgramId(loopOp, idCounts, order, group, xyz);
  if (failed(ids))
    return failure();
  if (clusterDim >= 0) {
    std::string paired = fresh("i");
    line(llvm::formatv("const i64 {0} = 2 * {1} + (kite_pid & 1);", paired, (*ids)[clusterDim]));
    (*ids)[clusterDim] = paired;
  }
  // Tiles whose nested loops run longer start first (causal attention's
  // last query tiles), so that the shortest ones fill the last wave.
  SmallVector<bool> reversed = longestFirstDims(bodyBlock, lows, highs, bss);
  for (int64_t d = 0; d < rank; ++d) {
    if (!reversed[d])
      continue;
    std::string r = fresh("i");
    line(llvm::formatv("const i64 {0} = {1} - 1 - {2};", r, counts[d], (*ids)[d]));
    (*ids)[d] = r;
  }
  for (int64_t d = 0; d < rank; ++d) {
    Value var = bodyBlock->getArgument(d);
    std::string begin = llvm::formatv("{0} + {1} * {2}", lows[d], (*ids)[d], bss[d]);
    if (isa<SpanType>(var.getType())) {
      defineSpan(var, begin, highExprs[d], bss[d], lows[d], highs[d], (*ids)[d], counts[d]);
      spans[var].endDivisor = endDivisors[d];
    } else {
      std::string name = fresh("g");
      line(llvm::formatv("const i64 {0} = {1};", name, begin));
      scalars[var] = name;
    }
  }
  if (options.trace) {
    // The program's id in its events: kite_pid, or with an xyz grid (whose
    // kite_pid is 0) the block's linear index.
    tracedPid = xyz ? "(long long)((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x)"
                    : "kite_pid";
    line(llvm::formatv("trace_event(1, {0});", tracedPid));
    int n = 0;
    for (Operation &op : *bodyBlock)
      if (isa<TileForOp, GridForOp, scf::ForOp>(op) && n < 14)
        tracedLoops[&op] = n++;
  }
  if (failed(producing ? emitProducerBlock(*bodyBlock) : emitBlock(*bodyBlock)))
    return failure();
  if (streamKOpen) {
    --indent;
    line("}");
    streamKOpen = false;
  }
  closeTurns();
  tracedLoops.clear();
  if (options.trace)
    line(llvm::formatv("trace_event(31, {0});", tracedPid));
  // The program's stages of producer-copied left operands, given back.
  if (!producing)
    for (int ri : programRings.lookup(loopOp))
      line(llvm::formatv("{0}.release({1}); ++{1};", rings[ri].name, rings[ri].consumed));
  --indent;
  line("}");
  return success();
}

LogicalResult Emitter::planCluster(Block *body, ArrayRef<std::string> counts,
                                   ArrayRef<int64_t> order, int64_t group,
                                   std::optional<int64_t> totalConst, size_t numLoops) {
  auto reject = [&](const Twine &why) {
    return emitConfigRejection(kernel) << "the config does not fit: cluster_size "
                                       << config.cluster_size << ": " << why,
           failure();
  };
  if (!producer)
    return reject("it needs a key loop's producer (warp_specialize, on wgmma, with operand "
                  "tiles prefetched in a key loop or generic_mainloop's product loop)");
  if (numLoops != 1)
    return reject("the kernel has more than one top-level loop");
  if (!totalConst)
    return reject("the plan takes its sizes at launch, and the clusters need a constant grid");
  // The dim whose tiles neighbouring program ids take (decomposeProgramId).
  int64_t rank = counts.size();
  int64_t d = rank == 2 && group > 1 ? 0 : order.empty() ? rank - 1 : order[0];
  if (!llvm::all_of(counts[d], ::isdigit) || std::stoll(counts[d]) % 2 != 0)
    return reject("the top-level loop's dim " + std::to_string(d) + " (whose neighbouring tiles "
                  "a cluster's programs take) has " + counts[d] +
                  " tiles, not a multiple of 2");
  clusterDim = d;
  clusterVar = body->getArgument(d);
  result.clusterSize = config.cluster_size;
  return success();
}

LogicalResult Emitter::planStreamK() {
  // kite-matmul-mainloop marked the loop, directly in the kernel's only
  // top-level loop with constant K bounds (whyNotSplittable), or rejected
  // the config.
  kernel.walk([&](TileForOp l) {
    if (l->hasAttr(kStreamKAttrName))
      streamKLoop = l;
  });
  if (!streamKLoop)
    return emitConfigRejection(kernel)
               << "the config does not fit: stream_k needs a product loop that "
                  "kite-matmul-mainloop marked (kite.stream_k)",
           failure();
  int64_t lo = *getConstantIntValue(streamKLoop.getLowerBounds()[0]);
  int64_t hi = *getConstantIntValue(streamKLoop.getUpperBounds()[0]);
  int64_t bs = *getConstantIntValue(streamKLoop.getBlockSizes()[0]);
  streamKIters = std::max<int64_t>(0, llvm::divideCeil(hi - lo, bs));
  return success();
}

void Emitter::emitStreamKFixup(const Tile &acc) {
  // Two slots a program for a unit's sums (every computing thread's
  // registers); a counter for each left-over tile (fewer than the programs).
  CudaKernel::Param partials{CudaKernel::Param::Kind::Workspace,
                             unsigned(2 * acc.regCount * numThreads * 4), "kite_partials"};
  CudaKernel::Param counters{CudaKernel::Param::Kind::Workspace, 4u, "kite_counters"};
  counters.zeroed = true;
  result.params.push_back(partials);
  result.params.push_back(counters);
  staticSharedBytes += 4; // StreamK::finish's flag
  line(llvm::formatv("if (kite_sk.finish({0}, reinterpret_cast<float*>(kite_partials), "
                     "reinterpret_cast<unsigned*>(kite_counters), kite_pid, kite_kb, kite_ke)) {{ "
                     "// this program has the tile's whole sums",
                     acc.name));
  ++indent;
  streamKOpen = true;
}

FailureOr<SmallVector<std::string>>
Emitter::decomposeProgramId(Operation *loopOp, ArrayRef<std::string> counts,
                            ArrayRef<int64_t> loopOrder, int64_t group, bool xyz) {
  int64_t rank = counts.size();
  // By default the last dim varies fastest.
  SmallVector<int64_t> order(loopOrder);
  if (order.empty())
    for (int64_t d = rank - 1; d >= 0; --d)
      order.push_back(d);
  SmallVector<std::string> ids(rank);
  // A constant product stays a number (the static plans' code).
  auto times = [](int64_t g, const std::string &c) {
    return llvm::all_of(c, ::isdigit) ? std::to_string(g * std::stoll(c))
                                      : llvm::formatv("({0} * {1})", g, c).str();
  };
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
    line(llvm::formatv("const i64 {0} = kite_rest / {1};", g, times(group, counts[1])));
    line(llvm::formatv("const i64 {0} = {1} * {2};", first, g, group));
    line(llvm::formatv("const i64 {0} = min((i64){1}, (i64){2} - {3});", size, group,
                       counts[0], first));
    line(llvm::formatv("const i64 {0} = kite_rest % {1};", in, times(group, counts[1])));
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
  return ids;
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
    traceLoop(&op, TraceAt::start);
    if (failed(emitOp(&op)))
      return failure();
    traceLoop(&op, TraceAt::end);
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
      auto [ctx, dims] = layoutOf(arg);
      for (auto [d, from] : llvm::zip(dims, it->second.dims))
        d.extent = from.extent;
      Tile c = declare(it->second.elem, ctx, dims, "acc");
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
    src = readableAt(src, c, 0);
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
  if (loop->hasAttr(kOverlapAttrName))
    return emitOverlappedLoop(loop);
  StagingScope staging(*this, loop);
  SmallVector<Tile> carried =
      declareCarried(loop.getInitArgs(), loop.getRegionIterArgs(), loop);
  // A stream-K part that does not start the K loop sums from zero (its
  // tile's owner adds the initial value once).
  if (loop == streamKLoop) {
    line("if (kite_kb != 0) {");
    line("  #pragma unroll");
    line(llvm::formatv("  for (int q = 0; q < {0}; ++q) {1}[q] = 0.0f;", carried[0].regCount,
                       carried[0].name));
    line("}");
  }
  if (failed(emitSharedLhs(loop)))
    return failure();
  // A product that alone accumulates into a carried value: its sums in
  // registers of its own across the loop (see carriedProduct).
  std::optional<CarriedProduct> outer = carriedProduct;
  carriedProduct.reset();
  unsigned arg = 0;
  Operation *accumulating = accumulatingProduct(loop, arg);
  Tile acc = accumulating ? carried[arg] : Tile();
  int64_t rank = accumulating ? acc.rank() : 0;
  if (accumulating) {
    CarriedProduct c;
    c.op = accumulating;
    c.sums = fresh("c");
    line(llvm::formatv("float {0}[{1}][{2}];", c.sums, acc.dims[rank - 2].regExtent / 2,
                       acc.dims[rank - 1].padded / 2));
    forEach(acc, [&](ArrayRef<std::string> k) {
      line(llvm::formatv("{0} = {1}[{2}];", wgmmaSumAt(c.sums, k, rank), acc.name, flat(acc, k)));
    });
    carriedProduct = c;
  }
  int opened = 0;
  for (unsigned d = 0; d < loop.getNumDims(); ++d) {
    FailureOr<LoopVars> lv = emitLoopCount(loop, d);
    if (failed(lv))
      return failure();
    // Loads copied ahead (kite.prefetch; 1-D loops): their first tiles.
    if (prefetchLoops.count(loop)) {
      loopVars[loop] = *lv;
      if (failed(emitPrefetchPrologue(prefetchLoops.at(loop), loopVars[loop])))
        return failure();
    }
    if (accumulating) {
      carriedProduct->iv = lv->iv;
      carriedProduct->count = lv->count;
    }
    openTileLoop(loop, d, *lv);
    ++opened;
  }
  if (failed(finishLoop(*loop.getBodyBlock(), carried, loop.getRegionIterArgs(),
                        loop.getResults(), opened)))
    return failure();
  if (accumulating) {
    // The last iteration's wgmmas, waited for; their stages given back.
    const CarriedProduct &c = *carriedProduct;
    line(llvm::formatv("wgmma_drain<0, {0}, {1}>({2});", acc.dims[rank - 2].regExtent / 2,
                       acc.dims[rank - 1].padded, c.sums));
    for (const Ring *ring : productRings(c.op))
      line(llvm::formatv("if ({0} > 0) {1}.release({2} - 1);", c.count, ring->name,
                         ring->consumed));
    forEach(acc, [&](ArrayRef<std::string> k) {
      line(llvm::formatv("{0}[{1}] = {2};", acc.name, flat(acc, k), wgmmaSumAt(c.sums, k, rank)));
    });
  }
  carriedProduct = outer;
  if (loop == streamKLoop)
    emitStreamKFixup(carried[0]);
  return success();
}

FailureOr<LoopVars> Emitter::emitLoopCount(TileForOp loop, unsigned d) {
  std::optional<int64_t> bs = getConstantIntValue(loop.getBlockSizes()[d]);
  if (!bs || *bs < 1)
    return loop.emitError() << "block size is not a constant after config application";
  LoopVars lv{scalar(loop.getLowerBounds()[d]),
              scalar(loop.getUpperBounds()[d]),
              fresh("t"),
              fresh("c"),
              *bs,
              getConstantIntValue(loop.getLowerBounds()[d]).value_or(-1),
              getConstantIntValue(loop.getUpperBounds()[d]).value_or(-1)};
  if (loop == streamKLoop) {
    // The unit's K tiles: the loop from tile kite_kb, kite_ke - kite_kb
    // of them (its iterations count from 0, as a whole loop's do; the
    // tiles' bounds and alignment are the whole loop's).
    lv.lower = llvm::formatv("(i64)({0}) + kite_kb * {1}", lv.lower, *bs).str();
    line(llvm::formatv("const i64 {0} = kite_ke - kite_kb;", lv.count));
    return lv;
  }
  line(llvm::formatv("const i64 {0} = ((i64)({1}) - (i64)({2}) + {3}) / {4};", lv.count,
                     lv.upper, lv.lower, *bs - 1, *bs));
  return lv;
}

void Emitter::traceLoop(Operation *loop, TraceAt at) {
  auto it = tracedLoops.find(loop);
  if (it == tracedLoops.end())
    return;
  int i = it->second;
  int event = at == TraceAt::start ? 2 + 2 * i : at == TraceAt::end ? 3 + 2 * i : 64 + i;
  line(llvm::formatv("trace_event({0}, {1});", event, tracedPid));
}

void Emitter::openTileLoop(TileForOp loop, unsigned d, const LoopVars &lv) {
  line(llvm::formatv("for (i64 {0} = 0; {0} < {1}; ++{0}) {{", lv.iv, lv.count));
  ++indent;
  if (d == 0)
    traceLoop(loop, TraceAt::iteration);
  defineSpan(loop.getSpans()[d],
             llvm::formatv("(i64)({0}) + {1} * {2}", lv.lower, lv.iv, lv.blockSize).str(),
             lv.upper, lv.blockSize, lv.lowerConst, lv.upperConst, lv.iv, lv.count);
  // A loop to a size taken at launch: its last tile's extent is a
  // multiple of the size's divisor (vectors stay whole).
  if (lv.upperConst < 0 && sizeOriginOf(loop.getUpperBounds()[d]))
    spans[loop.getSpans()[d]].endDivisor = divisorOf(kernel, loop.getUpperBounds()[d]);
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
      src = readableAt(src, r, 0);
      forEach(r, [&](ArrayRef<std::string> k) {
        line(llvm::formatv("{0}[{1}] = {2};", r.name, flat(r, k), at(src, k, 0)));
      });
    }
    return success();
  };
  for (Value res : op.getResults()) {
    if (auto tile = dyn_cast<TileType>(res.getType())) {
      auto [ctx, dims] = layoutOf(res);
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

/// A tile loop variable's scalars (begin, end, block size, id, count) and
/// its indices as a tile.
LogicalResult Emitter::emitSpanOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](SpanQueryOp q) -> LogicalResult {
        const SpanVars &s = spans[q.getSpan()];
        switch (q.getField()) {
        case SpanField::begin:
          scalars[q.getResult()] = s.begin;
          break;
        case SpanField::end:
          scalars[q.getResult()] = "(" + s.begin + " + " + s.valid + ")";
          break;
        case SpanField::block_size:
          scalars[q.getResult()] = std::to_string(s.blockSize) + "LL";
          break;
        case SpanField::id:
          scalars[q.getResult()] = s.id;
          break;
        case SpanField::count:
          scalars[q.getResult()] = s.count;
          break;
        }
        return success();
      })
      .Case([&](SpanIndexOp s) -> LogicalResult {
        const SpanVars &sv = spans[s.getSpan()];
        auto [ctx, dims] = layoutOf(s.getResult());
        if (!sv.exact)
          dims[0].extent = sv.valid;
        Tile t = declare(IntegerType::get(op->getContext(), 64), ctx, dims);
        forEach(t, [&](ArrayRef<std::string> k) {
          line(llvm::formatv("{0}[{1}] = {2} + {3};", t.name, flat(t, k), sv.begin,
                             coord(t, 0, k[0])));
        });
        tiles[s.getResult()] = t;
        return success();
      });
}
