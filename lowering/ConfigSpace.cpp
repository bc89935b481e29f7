//===- ConfigSpace.cpp - the configs a kernel can be tuned over -----------===//
//
// This file implements deriveConfigSpace (see ConfigSpace.h).
//
//===----------------------------------------------------------------------===//

#include "lowering/ConfigSpace.h"
#include "lowering/Config.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace kite;
using json = nlohmann::json;

namespace {

std::string where(Location loc) {
  if (auto f = dyn_cast<FileLineColLoc>(loc))
    return (llvm::sys::path::filename(f.getFilename().getValue()) + ":" +
            Twine(f.getLine()))
        .str();
  return "";
}

/// Powers of two from `lo` to `hi`.
std::vector<int64_t> powersOfTwo(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t p = std::max<int64_t>(lo, 1); p <= hi; p *= 2)
    v.push_back(p);
  return v;
}

/// True if the kernel computes exp or exp2 (fast_math applies).
bool usesExp(func::FuncOp kernel) {
  bool found = false;
  kernel.walk([&](UnaryOp u) { found |= u.getKind() == UnaryKind::exp || u.getKind() == UnaryKind::exp2; });
  return found;
}

/// A parameter whose default is `value`; added to `values` if missing.
json parameter(std::string key, std::optional<int64_t> index, std::vector<json> values,
               const json &value, std::string doc) {
  auto it = std::find(values.begin(), values.end(), value);
  if (it == values.end()) {
    values.push_back(value);
    it = values.end() - 1;
  }
  json p = {{"key", std::move(key)},
            {"values", values},
            {"default", it - values.begin()},
            {"doc", std::move(doc)}};
  if (index)
    p["index"] = *index;
  return p;
}

SmallVector<TileForOp> topLevelLoops(func::FuncOp kernel) {
  SmallVector<TileForOp> loops;
  for (Operation &op : kernel.getBody().front())
    if (auto loop = dyn_cast<TileForOp>(&op))
      loops.push_back(loop);
  return loops;
}

/// The block sizes: powers of two within the registered bounds and the
/// extent.
void addBlockSizes(func::FuncOp kernel, const Config &def, bool hopper, json &params) {
  for (BlockSizeOp op : blockSizeOps(kernel)) {
    auto [loop, dim] = loopOfBlockSize(op);
    // The K tile of an 8-bit product on Hopper is one 128-byte main-loop
    // stage: any other runs it on the CUDA cores, far slower, and would
    // only cost the tuner time.
    if (hopper && loop && !loop.isTopLevel() && whyNotPlainProductLoop(loop).empty() &&
        productElementBytes(loop) == 1) {
      params.push_back(parameter("block_sizes", op.getId(), {128}, def.block_sizes[op.getId()],
                                 "K tile of the 8-bit product loop at " + where(loop.getLoc()) +
                                     " (one 128-byte main-loop stage)"));
      continue;
    }
    int64_t cap = loop && !loop.isTopLevel() ? 4096 : 1024;
    if (op.getExtent())
      if (std::optional<int64_t> e = getConstantIntValue(op.getExtent()))
        cap = std::min<int64_t>(cap, llvm::PowerOf2Ceil(std::max<int64_t>(*e, 1)));
    if (op.getMax())
      cap = std::min<int64_t>(cap, (int64_t)llvm::bit_floor((uint64_t)*op.getMax()));
    int64_t lo = op.getMin() ? (int64_t)llvm::PowerOf2Ceil(*op.getMin()) : 1;
    std::vector<json> values;
    for (int64_t v : powersOfTwo(lo, std::max(cap, lo)))
      values.push_back(v);
    std::string doc = loop ? (loop.isTopLevel() ? "tile size of dim " : "chunk size of dim ") +
                                 std::to_string(dim) + " of the loop at " + where(loop.getLoc())
                           : "block size registered at " + where(op.getLoc());
    params.push_back(parameter("block_sizes", op.getId(), values,
                               def.block_sizes[op.getId()], doc));
  }
}

/// Loop orders and L2 grouping for multi-dimensional top-level loops. The
/// default config spells out every loop's entry (`orders`, `groups`) so that
/// one parameter can change one loop's.
void addLoopOrders(ArrayRef<TileForOp> loops, const Config &def, json &params, json &orders,
                   json &groups) {
  for (auto [li, l] : llvm::enumerate(loops)) {
    TileForOp loop = l;
    int64_t rank = loop.getNumDims();
    std::vector<int64_t> order(rank);
    for (int64_t d = 0; d < rank; ++d)
      order[d] = rank - 1 - d; // the default: the last dim varies fastest
    orders.push_back(order);
    int64_t group = li < def.l2_groupings.size() ? def.l2_groupings[li] : 1;
    groups.push_back(group);
    if (rank < 2)
      continue;
    std::string at = where(loop.getLoc());
    std::vector<json> choices;
    if (rank <= 3) {
      std::vector<int64_t> p(rank);
      std::iota(p.begin(), p.end(), 0);
      do
        choices.push_back(p);
      while (std::next_permutation(p.begin(), p.end()));
    } else {
      std::vector<int64_t> identity(rank);
      std::iota(identity.begin(), identity.end(), 0);
      choices.push_back(identity);
      choices.push_back(order);
    }
    params.push_back(parameter("loop_orders", li, choices, order,
                               "which dim of the loop at " + at +
                                   " varies fastest across programs (first fastest)"));
    if (rank == 2) {
      std::vector<json> sizes;
      for (int64_t g : powersOfTwo(1, 64))
        sizes.push_back(g);
      params.push_back(parameter("l2_groupings", li, sizes, group,
                                 "rows of tiles of the loop at " + at +
                                     " that walk the columns together (1: none)"));
    }
  }
}

/// Looped reductions: chunks from 256 to half the row, or the whole row
/// (the defaults in `defaults`).
void addReductionLoops(func::FuncOp kernel, ArrayRef<int64_t> rdims, const Config &def,
                       json &params, json &defaults) {
  int64_t bound = dynamicReductionBound(kernel);
  for (auto [i, size] : llvm::enumerate(rdims)) {
    std::optional<int64_t> d = i < def.reduction_loops.size() ? def.reduction_loops[i]
                                                              : std::nullopt;
    defaults.push_back(d ? json(*d) : json(nullptr));
    if (ShapedType::isDynamic(size) && bound > 0) { // held whole in a bucket, or in chunks
      std::vector<json> values;
      for (int64_t c : powersOfTwo(256, bound / 2))
        values.push_back(c);
      values.push_back(nullptr);
      params.push_back(parameter("reduction_loops", i, values, defaults.back(),
                                 "chunk of the reduction over the dimension whose size is "
                                 "taken at launch, up to " + std::to_string(bound) +
                                     " (null: the whole row at once)"));
      continue;
    }
    if (ShapedType::isDynamic(size)) { // a length taken at launch: always chunks
      std::vector<json> values;
      for (int64_t c : powersOfTwo(256, 8192))
        values.push_back(c);
      params.push_back(parameter("reduction_loops", i, values, defaults.back(),
                                 "chunk of the reduction over the dimension whose size is "
                                 "taken at launch"));
      continue;
    }
    if (size <= 256 || !reductionLoopSupported(kernel, size))
      continue;
    std::vector<json> values;
    for (int64_t c : powersOfTwo(256, (int64_t)llvm::PowerOf2Ceil(size) / 2))
      values.push_back(c);
    values.push_back(nullptr);
    params.push_back(parameter("reduction_loops", i, values, defaults.back(),
                               "chunk of the reduction over the dimension of size " +
                                   std::to_string(size) + " (null: the whole row at once)"));
  }
}

/// Configs far from the default (several keys apart, beyond a quick
/// search's descents) that win at some shapes, for the search to try
/// beside the default. For a producer-served key loop (the sm_90a default:
/// 128-row tiles, two computing warpgroups taking turns):
/// - its tiles halved to 64, one computing warpgroup and three programs an
///   SM, 3 stages: the programs' starts and ends run under each other's
///   products where there are few key tiles a program (H100, causal
///   attention B4 H32 S1024 D64: 0.063 ms against the default's 0.071);
/// - programs taken as they finish, in groups of 16 rows of tiles that run
///   their longest first (causal S1024 D128: 0.087 against 0.095).
json searchStarts(const json &def, MutableArrayRef<TileForOp> loops) {
  json starts = json::array();
  if (!def.value("warp_specialize", false) || def.value("num_warps", 0) != 12 ||
      !def.value("pingpong", false))
    return starts;
  json small = def;
  for (json &b : small["block_sizes"])
    if (b.is_number_integer() && b.get<int64_t>() >= 128)
      b = 64;
  small["num_warps"] = 8;
  small["num_stages"] = 3;
  small["pingpong"] = false;
  small["min_programs_per_sm"] = 3;
  starts.push_back(small);
  if (!loops.empty() && loops[0].getNumDims() >= 2 && def["l2_groupings"].is_array() &&
      !def["l2_groupings"].empty()) {
    json grouped = def;
    grouped["pid_type"] = "persistent_dynamic";
    grouped["l2_groupings"][0] = 16;
    starts.push_back(grouped);
  }
  return starts;
}

} // namespace

json kite::deriveConfigSpace(func::FuncOp kernel, StringRef arch, bool speculative) {
  Config def = defaultConfig(kernel, arch, speculative);
  json params = json::array();

  addBlockSizes(kernel, def, hasWgmma(arch), params);

  // The main-loop keys only where a K loop can be one (kite-matmul-
  // mainloop), and Hopper's only on sm_90a: elsewhere they change nothing
  // (or, 12 warps, are refused), and the tuner would time them for nothing.
  bool halfMatmul = hasHalfMatmul(kernel);
  bool plainProduct = hasPlainProductLoop(kernel);
  bool hopper = plainProduct && hasWgmma(arch);
  // Products outside a main loop on wgmma: key loops, which a producer
  // warpgroup can serve (warp_specialize, pingpong).
  bool keyLoops = halfMatmul && !plainProduct && hasWgmma(arch);
  params.push_back(parameter("num_warps", std::nullopt,
                             hopper || keyLoops ? std::vector<json>{1, 2, 4, 8, 12, 16, 32}
                                                : std::vector<json>{1, 2, 4, 8, 16, 32},
                             def.num_warps,
                             hopper || keyLoops ? "warps per program (32 threads each); 12 "
                                                  "only with warp_specialize"
                                                : "warps per program (32 threads each)"));
  if (halfMatmul)
    params.push_back(parameter("tensor_cores", std::nullopt, {false, true}, def.tensor_cores,
                               "matrix products of f16/bf16 tiles on tensor cores (mma.sync)"));
  if (keyLoops) {
    params.push_back(parameter("wgmma", std::nullopt, {false, true}, def.wgmma,
                               "with tensor_cores: products from registers on Hopper's "
                               "warpgroup MMA (sm_90a; whole warpgroups, B staged in "
                               "128-byte swizzled rows) instead of mma.sync"));
    params.push_back(parameter("overlap_products", std::nullopt, {false, true},
                               def.overlap_products,
                               "with wgmma and num_stages >= 2: a key loop's last product "
                               "(into a loop-carried accumulator) runs one iteration late, "
                               "on the tensor cores while the next iteration's elementwise "
                               "work runs"));
    params.push_back(parameter("warp_specialize", std::nullopt, {false, true},
                               def.warp_specialize,
                               "with wgmma, prefetched operands and 8 or 12 warps: the last "
                               "4 warps copy the key loops' operand tiles by TMA into rings "
                               "of num_stages stages, the others compute"));
    params.push_back(parameter("pingpong", std::nullopt, {false, true}, def.pingpong,
                               "with warp_specialize, overlap_products and 12 warps: the two "
                               "computing warpgroups take turns issuing their products"));
    // A key loop's result leaves in the products' accumulator layout, a
    // few bytes a thread per row.
    params.push_back(parameter("bulk_stores", std::nullopt, {false, true}, def.bulk_stores,
                               "stores of whole tensor rows through shared memory, a bulk "
                               "copy (cp.async.bulk) a row, instead of each thread's "
                               "elements"));
  }
  if (plainProduct)
    params.push_back(parameter("num_stages", std::nullopt, {2, 3, 4, 5}, def.num_stages,
                               "shared-memory stages of a pipelined tensor-core K loop "
                               "(1 means 2)"));
  else if (halfMatmul)
    params.push_back(parameter("num_stages", std::nullopt, {1, 2, 3}, def.num_stages,
                               "with tensor_cores: staging buffers of a product operand "
                               "loaded in a loop (kite-prefetch-operands), copied "
                               "num_stages - 1 iterations ahead (1: one buffer, refilled "
                               "right after its product)"));
  if (hopper) {
    params.push_back(parameter("wgmma", std::nullopt, {false, true}, def.wgmma,
                               "pipelined tensor-core K loops on Hopper's warpgroup MMA "
                               "(sm_90a; 64-row blocks per 4 warps, K tiles of 128 bytes: 64 elements of 16 bits, 128 of 8)"));
    params.push_back(parameter("warp_specialize", std::nullopt, {false, true},
                               def.warp_specialize,
                               "with wgmma and 8 or 12 warps: one warpgroup copies, one or "
                               "two multiply (mbarriers instead of block barriers)"));
    params.push_back(parameter("generic_mainloop", std::nullopt, {false, true},
                               def.generic_mainloop,
                               "with wgmma: product K loops whose operands TMA reads in place "
                               "as ordinary kernel code (sums in registers, the epilogue "
                               "overlapping the next tile's copies in persistent programs) "
                               "instead of the hand-written main loop"));
    params.push_back(parameter("indexing", std::nullopt, {"pointer", "tma"}, def.indexing,
                               "with warp_specialize: operand tiles copied by the threads "
                               "(pointer) or by the Tensor Memory Accelerator (tma; "
                               "16-byte aligned rows, else pointer)"));
  }
  if (plainProduct)
    params.push_back(parameter("split_k", std::nullopt, {1, 2, 4}, def.split_k,
                               "programs a product tile's K loop is split over (partial sums "
                               "in a workspace, added in split order by the tile's last "
                               "program): for shapes with fewer tiles than SMs"));
  // (stream_k is not offered: on an H100 it lost to the default on every
  // benchmark shape, and each config the tuner tries costs an NVRTC
  // compile of its budget.)
  if (usesExp(kernel))
    params.push_back(parameter("fast_math", std::nullopt, {false, true}, def.fast_math,
                               "exp on f32 by the approximate hardware exp2, exp2 with results "
                               "below 2^-126 flushed to zero (the tuner keeps it only if the "
                               "outputs match the default config's)"));
  bool atomicAdds = false;
  kernel.walk([&](AtomicOp a) { atomicAdds |= a.getKind() == AtomicKind::add; });
  if (atomicAdds)
    params.push_back(parameter("privatize_atomics", std::nullopt, {false, true}, true,
                               "atomic adds into a small tensor gathered per program in "
                               "shared memory and added once at its end"));
  params.push_back(parameter("streaming", std::nullopt, {false, true}, false,
                             "vector loads and stores with the streaming cache operator "
                             "(.cs, evict first), for data touched once"));
  params.push_back(parameter("l2_hints", std::nullopt, {"none", "reuse", "keep_loads"}, "none",
                             "L2 eviction priorities of loads: reuse (evict_last on data read "
                             "again or by every program, evict_first on its last read) or "
                             "keep_loads (every load evict_last)"));
  if (moveLoadsEarly(kernel, /*apply=*/false) > 0)
    params.push_back(parameter("early_loads", std::nullopt, {false, true}, false,
                               "loads issued as early as their operands allow, above "
                               "reductions and their barriers (more registers live)"));
  SmallVector<int64_t> rdims = reductionDims(kernel);
  if ((!rdims.empty() || halfMatmul) && !plainProduct)
    params.push_back(parameter("min_programs_per_sm", std::nullopt, {1, 2, 3, 4}, 1,
                               "programs kept resident on an SM by capping registers "
                               "(__launch_bounds__; ptxas spills past the cap)"));
  if (!rdims.empty())
    params.push_back(parameter("inner_threads", std::nullopt,
                               {nullptr, 1, 2, 4, 8, 16, 32, 64, 128, 256}, nullptr,
                               "threads along a tile's innermost dim, the rest on rows "
                               "(null: as many as it has 16-byte vectors)"));

  SmallVector<TileForOp> loops = topLevelLoops(kernel);
  std::vector<json> pids = {"flat", "persistent_blocked", "persistent_interleaved",
                            "persistent_dynamic"};
  if (loops.size() == 1 && loops[0].getNumDims() <= 3)
    pids.push_back("xyz");
  params.push_back(parameter("pid_type", std::nullopt, pids, def.pid_type,
                             "how programs map onto the launch grid"));

  json defaultOrders = json::array(), defaultGroups = json::array();
  addLoopOrders(loops, def, params, defaultOrders, defaultGroups);

  json defaultReductions = json::array();
  addReductionLoops(kernel, rdims, def, params, defaultReductions);

  json config = json::parse(def.toJson());
  config["loop_orders"] = defaultOrders;
  config["l2_groupings"] = defaultGroups;
  config["reduction_loops"] = defaultReductions;
  // Keys the default config leaves out (optional ones: inner_threads,
  // fast_math, tensor_cores) get their parameter's default, so that every
  // parameter's key is in the default config (and can be pinned).
  for (const json &p : params)
    if (!p.contains("index") && !config.contains(p["key"].get<std::string>()))
      config[p["key"].get<std::string>()] = p["values"][p["default"].get<size_t>()];
  json space{{"default", config}, {"parameters", params}};
  if (json starts = searchStarts(config, loops); !starts.empty())
    space["starts"] = starts;
  return space;
}
