//===- Config.cpp - a kernel's launch and tiling config -------------------===//
//
// This file implements config parsing, validation and the default config.
//
//===----------------------------------------------------------------------===//

#include "lowering/Config.h"
#include "lowering/DynamicShapes.h"
#include "lowering/Passes.h"
#include "lowering/TypeInference.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

#include <nlohmann/json.hpp>

#include <map>

using namespace mlir;
using namespace kite;
using json = nlohmann::json;

std::string Config::toJson() const {
  json j;
  j["block_sizes"] = block_sizes;
  j["num_warps"] = num_warps;
  j["num_stages"] = num_stages;
  j["pid_type"] = pid_type;
  j["loop_orders"] = loop_orders;
  j["l2_groupings"] = l2_groupings;
  json red = json::array();
  for (const auto &r : reduction_loops)
    red.push_back(r ? json(*r) : json(nullptr));
  j["reduction_loops"] = red;
  j["indexing"] = indexing;
  if (inner_threads)
    j["inner_threads"] = *inner_threads;
  if (fast_math)
    j["fast_math"] = true;
  if (streaming)
    j["streaming"] = true;
  if (!privatize_atomics)
    j["privatize_atomics"] = false;
  if (l2_hints != "none")
    j["l2_hints"] = l2_hints;
  if (early_loads)
    j["early_loads"] = true;
  if (tensor_cores)
    j["tensor_cores"] = true;
  if (wgmma)
    j["wgmma"] = true;
  if (warp_specialize)
    j["warp_specialize"] = true;
  if (overlap_products)
    j["overlap_products"] = true;
  if (pingpong)
    j["pingpong"] = true;
  if (min_programs_per_sm != 1)
    j["min_programs_per_sm"] = min_programs_per_sm;
  if (split_k != 1)
    j["split_k"] = split_k;
  if (stream_k)
    j["stream_k"] = true;
  if (bulk_stores)
    j["bulk_stores"] = true;
  if (generic_mainloop)
    j["generic_mainloop"] = true;
  if (cluster_size != 1)
    j["cluster_size"] = cluster_size;
  return j.dump();
}

namespace {

/// No config nests deeper than this; deeper text is rejected before
/// nlohmann's recursive printer and destructor could exhaust the stack.
constexpr int kMaxConfigDepth = 16;

/// True if the JSON text's arrays and objects nest at most `limit` deep
/// (brackets inside strings do not count).
bool nestsWithin(StringRef text, int limit) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (char ch : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (ch == '\\')
        escaped = true;
      else if (ch == '"')
        inString = false;
      continue;
    }
    if (ch == '"')
      inString = true;
    else if (ch == '[' || ch == '{')
      if (++depth > limit)
        return false;
    if (ch == ']' || ch == '}')
      --depth;
  }
  return true;
}

/// `value` printed for an error message, cut to a readable length.
std::string shortDump(const json &value) {
  std::string s = value.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

/// A JSON integer as int64; floats (8.5, 1e300) and integers past int64
/// are type errors, never truncated.
int64_t integer(const json &v) {
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() && v.get<uint64_t>() > (uint64_t)INT64_MAX))
    throw json::type_error::create(302, "expected an integer", &v);
  return v.get<int64_t>();
}

std::vector<int64_t> integers(const json &v) {
  if (!v.is_array())
    throw json::type_error::create(302, "expected an array of integers", &v);
  std::vector<int64_t> out;
  for (const json &e : v)
    out.push_back(integer(e));
  return out;
}

} // namespace

FailureOr<Config> kite::parseConfig(StringRef text, std::string &error) {
  Config c;
  if (text.trim().empty())
    return c;
  if (!nestsWithin(text, kMaxConfigDepth)) {
    error = "the config nests deeper than " + std::to_string(kMaxConfigDepth) + " levels";
    return failure();
  }
  json j = json::parse(text.begin(), text.end(), nullptr,
                       /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    error = "the config is not a JSON object: " +
            (text.size() > 80 ? text.take_front(77).str() + "..." : text.str());
    return failure();
  }
  for (auto &[key, value] : j.items()) {
    try {
      if (key == "block_sizes")
        c.block_sizes = integers(value);
      else if (key == "num_warps")
        c.num_warps = integer(value);
      else if (key == "num_stages")
        c.num_stages = integer(value);
      else if (key == "pid_type")
        c.pid_type = value.get<std::string>();
      else if (key == "loop_orders") {
        if (!value.is_array())
          throw json::type_error::create(302, "expected an array", &value);
        c.loop_orders.clear();
        for (const json &order : value)
          c.loop_orders.push_back(integers(order));
      } else if (key == "l2_groupings")
        c.l2_groupings = integers(value);
      else if (key == "indexing")
        c.indexing = value.get<std::string>();
      else if (key == "fast_math")
        c.fast_math = value.get<bool>();
      else if (key == "streaming")
        c.streaming = value.get<bool>();
      else if (key == "privatize_atomics")
        c.privatize_atomics = value.get<bool>();
      else if (key == "l2_hints")
        c.l2_hints = value.get<std::string>();
      else if (key == "early_loads")
        c.early_loads = value.get<bool>();
      else if (key == "tensor_cores")
        c.tensor_cores = value.get<bool>();
      else if (key == "wgmma")
        c.wgmma = value.get<bool>();
      else if (key == "warp_specialize")
        c.warp_specialize = value.get<bool>();
      else if (key == "overlap_products")
        c.overlap_products = value.get<bool>();
      else if (key == "pingpong")
        c.pingpong = value.get<bool>();
      else if (key == "min_programs_per_sm")
        c.min_programs_per_sm = integer(value);
      else if (key == "split_k")
        c.split_k = integer(value);
      else if (key == "stream_k")
        c.stream_k = value.get<bool>();
      else if (key == "bulk_stores")
        c.bulk_stores = value.get<bool>();
      else if (key == "generic_mainloop")
        c.generic_mainloop = value.get<bool>();
      else if (key == "cluster_size")
        c.cluster_size = integer(value);
      else if (key == "inner_threads")
        c.inner_threads = value.is_null() ? std::nullopt : std::optional(integer(value));
      else if (key == "reduction_loops") {
        if (!value.is_array())
          throw json::type_error::create(302, "expected an array", &value);
        c.reduction_loops.clear();
        for (auto &r : value)
          c.reduction_loops.push_back(r.is_null() ? std::nullopt : std::optional(integer(r)));
      } else {
        error = "unknown config key '" + key +
                "' (known: block_sizes, num_warps, num_stages, pid_type, "
                "loop_orders, l2_groupings, reduction_loops, indexing, inner_threads, fast_math, "
                "streaming, privatize_atomics, l2_hints, early_loads, tensor_cores, wgmma, "
                "warp_specialize, overlap_products, pingpong, min_programs_per_sm, split_k, "
                "stream_k, bulk_stores, generic_mainloop, cluster_size)";
        return failure();
      }
    } catch (const json::exception &e) {
      error = "config key '" + key + "' has the wrong type: " + shortDump(value) +
              " (" + (key == "pid_type" || key == "indexing" || key == "l2_hints"
                          ? "a string"
                      : value.is_array() || key == "block_sizes" || key == "l2_groupings" ||
                              key == "loop_orders" || key == "reduction_loops"
                          ? "integers"
                      : key == "num_warps" || key == "num_stages" || key == "inner_threads" ||
                              key == "min_programs_per_sm" || key == "split_k" ||
                              key == "cluster_size"
                          ? "an integer"
                          : "a boolean") +
              " expected)";
      return failure();
    }
  }
  return c;
}

FailureOr<std::optional<Config>> kite::appliedConfig(func::FuncOp kernel) {
  auto attr = kernel->getAttrOfType<StringAttr>("kite.config");
  if (!attr)
    return std::optional<Config>();
  std::string error;
  FailureOr<Config> config = parseConfig(attr.getValue(), error);
  if (failed(config))
    return kernel.emitError() << "bad config: " << error, failure();
  return std::optional<Config>(std::move(*config));
}

namespace {
constexpr llvm::StringLiteral kRejectedAttrName = "kite.config_rejected";
} // namespace

InFlightDiagnostic kite::emitConfigRejection(Operation *op) {
  ModuleOp module = isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  if (module)
    module->setAttr(kRejectedAttrName, UnitAttr::get(op->getContext()));
  return op->emitError();
}

bool kite::configRejected(ModuleOp module) { return module->hasAttr(kRejectedAttrName); }

FailureOr<ConfiguredKernel> kite::configuredKernel(ModuleOp module) {
  FailureOr<func::FuncOp> found = findKernel(module, "");
  if (failed(found))
    return failure();
  FailureOr<std::optional<Config>> applied = appliedConfig(*found);
  if (failed(applied))
    return failure();
  return ConfiguredKernel{*found, std::move(*applied)};
}

SmallVector<BlockSizeOp> kite::blockSizeOps(func::FuncOp kernel) {
  SmallVector<BlockSizeOp> ops;
  kernel.walk([&](BlockSizeOp op) { ops.push_back(op); });
  llvm::sort(ops, [](BlockSizeOp a, BlockSizeOp b) { return a.getId() < b.getId(); });
  return ops;
}

std::pair<TileForOp, int64_t> kite::loopOfBlockSize(BlockSizeOp op) {
  for (Operation *user : op->getUsers())
    if (auto loop = dyn_cast<TileForOp>(user))
      for (auto [d, b] : llvm::enumerate(loop.getBlockSizes()))
        if (b == op.getResult())
          return {loop, (int64_t)d};
  return {TileForOp(), 0};
}

Value kite::matrixProductLhs(Operation *op) {
  if (isa<DotOp, MatmulOp, BmmOp>(op))
    return op->getOperand(0);
  if (isa<AddmmOp, BaddbmmOp>(op))
    return op->getOperand(1);
  return Value();
}

Value ProductOperand::loadSpan(int64_t d) const { return spans[tensorDim(d)]; }

int64_t ProductOperand::tensorDim(int64_t d) const {
  int64_t rank = spans.size();
  if (transposed && d >= rank - 2)
    return d == rank - 1 ? rank - 2 : rank - 1;
  return d;
}

std::optional<ProductOperand> kite::productOperand(Value v) {
  if (!v || !v.hasOneUse())
    return std::nullopt;
  bool transposed = false;
  Value loaded = v;
  if (auto t = v.getDefiningOp<TransposeOp>()) {
    auto type = dyn_cast<TileType>(t.getType());
    if (!type || !type.hasRank())
      return std::nullopt;
    int64_t rank = type.getRank();
    int64_t d0 = t.getDim0() < 0 ? t.getDim0() + rank : t.getDim0();
    int64_t d1 = t.getDim1() < 0 ? t.getDim1() + rank : t.getDim1();
    if (rank < 2 || std::min(d0, d1) != rank - 2 || std::max(d0, d1) != rank - 1)
      return std::nullopt;
    transposed = true;
    loaded = t.getOperand();
    if (!loaded.hasOneUse())
      return std::nullopt;
  }
  auto load = loaded.getDefiningOp<LoadOp>();
  // A load kite-check-bounds masks at run time takes the generic path.
  if (!load || load.getMask() || load->hasAttr(kCheckedAttrName))
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(load.getTensor());
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return std::nullopt;
  ProductOperand o{load, arg, {}, transposed, v};
  for (const Subscript &s : load.getSubscripts()) {
    if (s.kind != Subscript::Kind::Span)
      return std::nullopt;
    o.spans.push_back(s.value);
  }
  if (transposed && o.spans.size() >= 2)
    std::swap(o.spans[o.spans.size() - 1], o.spans[o.spans.size() - 2]);
  return o;
}

bool kite::hasHalfMatmul(func::FuncOp kernel) {
  bool found = false;
  kernel.walk([&](Operation *op) {
    if (Value lhs = matrixProductLhs(op))
      if (auto t = dyn_cast<TileType>(lhs.getType()); t && t.hasElementType())
        found |= t.getElementType().isBF16() || t.getElementType().isF16();
  });
  return found;
}

int64_t kite::productElementBytes(TileForOp loop) {
  Operation *product = loop.getBodyBlock()->getTerminator()->getOperand(0).getDefiningOp();
  std::optional<ProductOperand> a = product ? productOperand(product->getOperand(1)) : std::nullopt;
  auto type = a ? dyn_cast<TileType>(a->value.getType()) : TileType();
  return type && type.hasElementType() && isFloat8(type.getElementType()) ? 1 : 2;
}

std::string kite::whyNotSplittable(func::FuncOp kernel, TileForOp loop) {
  int topLevel = 0;
  for (Operation &op : kernel.getBody().front())
    topLevel += isa<TileForOp, GridForOp>(op);
  auto parent = dyn_cast<TileForOp>(loop->getParentOp());
  if (topLevel != 1 || !parent || !parent.isTopLevel())
    return "the main loop directly in the kernel's only top-level loop";
  for (Operation *op = &loop->getBlock()->front(); op != loop; op = op->getNextNode()) {
    bool stores = false;
    op->walk([&](Operation *inner) { stores |= isa<StoreOp, AtomicOp>(inner); });
    if (stores)
      return "nothing stored before the main loop (each split would store it)";
  }
  return "";
}

std::pair<ProductOperand, ProductOperand> kite::plainProductOperands(TileForOp loop) {
  Operation *product = loop.getBodyBlock()->getTerminator()->getOperand(0).getDefiningOp();
  return {*productOperand(product->getOperand(1)), *productOperand(product->getOperand(2))};
}

bool kite::onlyTmaMainLoop(TileForOp loop) {
  return productElementBytes(loop) == 1 || plainProductOperands(loop).second.transposed;
}

bool kite::hasPlainProductLoop(func::FuncOp kernel) {
  bool found = false;
  kernel.walk([&](TileForOp loop) { found |= whyNotPlainProductLoop(loop).empty(); });
  return found;
}

std::string kite::whyNotPlainProductLoop(TileForOp loop) {
  if (loop.isTopLevel() || loop.getNumDims() != 1 || loop.getInitArgs().size() != 1)
    return "not a nested 1-D loop carrying one value";
  Block *body = loop.getBodyBlock();
  Value acc = loop.getRegionIterArgs()[0];
  Operation *product = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!product || !isa<AddmmOp, BaddbmmOp>(product) || product->getOperand(0) != acc ||
      !acc.hasOneUse())
    return "the loop does not accumulate acc = addmm(acc, a, b)";
  std::optional<ProductOperand> a = productOperand(product->getOperand(1));
  std::optional<ProductOperand> b = productOperand(product->getOperand(2));
  if (!a || !b || a->load->getBlock() != body || b->load->getBlock() != body)
    return "an operand is not a load of a kernel parameter by tile indices";
  // Only the two loads (a transpose of B's), the product and the yield.
  if (std::distance(body->begin(), body->end()) != 4 + (b->transposed ? 1 : 0))
    return "the loop body does more than load the operands and accumulate";
  if (a->transposed)
    return "the left operand is transposed (its tensor's rows along M)";
  auto accType = dyn_cast<TileType>(acc.getType());
  auto aType = dyn_cast<TileType>(a->value.getType());
  auto bType = dyn_cast<TileType>(b->value.getType());
  if (!accType || !aType || !bType || !accType.hasRank() || !aType.hasRank() ||
      !bType.hasRank())
    return "operand ranks are not known";
  int64_t rank = accType.getRank();
  if (aType.getRank() != rank || bType.getRank() != rank || (rank != 2 && rank != 3))
    return "operands are not 2-D (or 3-D batched)";
  Type elem = aType.getElementType(), elemB = bType.getElementType();
  if (!accType.getElementType() || !accType.getElementType().isF32())
    return "the accumulator is not f32";
  bool half = elem && elem == elemB && (elem.isBF16() || elem.isF16());
  bool fp8 = elem && elemB && isFloat8(elem) && isFloat8(elemB);
  if (!half && !fp8)
    return "operands are not both bf16, both f16 or both 8-bit floats (e4m3, e5m2)";
  if (fp8 && !b->transposed)
    return "8-bit float products need the right operand K-major (w[tn, tk].transpose(0, 1), "
           "w's rows along N): the tensor cores take no other 8-bit layout";
  Value k = loop.getSpans()[0];
  if (a->spans[rank - 1] != k || b->spans[rank - 2] != k)
    return "the loop's span is not the operands' K index";
  if (fp8) {
    // Rows that are not 16-byte multiples are staged (copied into padded
    // rows at launch), as 16-bit ones are.
    if (!operandCopies(loop, *a, *b).tma())
      return "8-bit float products need TMA copies (the TMA main loop, or a producer's under "
             "generic_mainloop), which need both operands' rows contiguous and the loops over "
             "whole dims";
  }
  return "";
}

LogicalResult kite::validateConfig(func::FuncOp kernel, const Config &c,
                                   std::string &error) {
  SmallVector<BlockSizeOp> ops = blockSizeOps(kernel);
  if (!ops.empty() && (int64_t)ops.back().getId() > kMaxBlockSizeId) {
    error = "the kernel's block size ids reach " + std::to_string(ops.back().getId()) +
            ", past the largest a config can hold (" + std::to_string(kMaxBlockSizeId) + ")";
    return failure();
  }
  int64_t numIds = ops.empty() ? 0 : ops.back().getId() + 1;
  if ((int64_t)c.block_sizes.size() != numIds) {
    error = "block_sizes has " + std::to_string(c.block_sizes.size()) +
            " entries, but the kernel has " + std::to_string(numIds) +
            " tunable block sizes";
    return failure();
  }
  for (BlockSizeOp op : ops) {
    int64_t v = c.block_sizes[op.getId()];
    std::string where = "block_sizes[" + std::to_string(op.getId()) + "] = " +
                        std::to_string(v);
    if (v < 1 || !llvm::isPowerOf2_64(v) || v > kMaxBlockSize) {
      error = where + " must be a power of two from 1 to " + std::to_string(kMaxBlockSize);
      return failure();
    }
    if ((op.getMin() && v < (int64_t)*op.getMin()) || (op.getMax() && v > (int64_t)*op.getMax())) {
      error = where + " is outside the registered range [" +
              std::to_string(op.getMin().value_or(1)) + ", " +
              std::to_string(op.getMax().value_or(INT64_MAX)) + "]";
      return failure();
    }
  }
  bool keyLoopProducer = hasKeyLoopProducer(c, kernel);
  if (c.pingpong && (!keyLoopProducer || !c.overlap_products || c.num_warps != 12)) {
    error = "pingpong takes turns between two computing warpgroups' products: it needs "
            "warp_specialize on a key loop (tensor_cores, wgmma), overlap_products and "
            "num_warps = 12";
    return failure();
  }
  if (keyLoopProducer && c.num_warps != 8 && c.num_warps != 12) {
    error = "num_warps = " + std::to_string(c.num_warps) +
            " with warp_specialize: a key loop's producer warpgroup takes 4 warps and one or "
            "two warpgroups compute, so num_warps is 8 or 12";
    return failure();
  }
  if (c.num_warps == 12) {
    if (!c.tensor_cores || !c.wgmma || !c.warp_specialize) {
      error = "num_warps = 12 (a producer and two consumer warpgroups) needs tensor_cores, "
              "wgmma and warp_specialize";
      return failure();
    }
  } else if (c.num_warps < 1 || c.num_warps > 32 || !llvm::isPowerOf2_64(c.num_warps)) {
    error = "num_warps = " + std::to_string(c.num_warps) +
            " must be a power of two from 1 to 32 (at most 1024 threads), or 12 with "
            "warp_specialize";
    return failure();
  }
  if (c.min_programs_per_sm < 1 || c.min_programs_per_sm * 32 * c.num_warps > 2048) {
    error = "min_programs_per_sm = " + std::to_string(c.min_programs_per_sm) +
            " must be at least 1, and at most 2048 threads an SM (" +
            std::to_string(2048 / (32 * c.num_warps)) + " programs of " +
            std::to_string(c.num_warps) + " warps)";
    return failure();
  }
  if (c.split_k < 1 || c.split_k > 16) {
    error = "split_k = " + std::to_string(c.split_k) + " must be 1 to 16";
    return failure();
  }
  if (c.cluster_size != 1) {
    if (c.cluster_size != 2) {
      error = "cluster_size = " + std::to_string(c.cluster_size) + " must be 1 or 2";
      return failure();
    }
    if (!c.warp_specialize || !c.wgmma) {
      error = "cluster_size = 2 needs warp_specialize and wgmma (the producer's TMA copies are "
              "what the cluster's programs share)";
      return failure();
    }
    if (c.pid_type == "persistent_dynamic" || c.pid_type == "xyz" ||
        c.pid_type == "persistent_blocked") {
      error = "cluster_size = 2 needs pid_type flat or persistent_interleaved (the cluster's two "
              "programs take neighbouring tiles in step), not '" + c.pid_type + "'";
      return failure();
    }
    if (c.split_k != 1) {
      error = "cluster_size = 2 does not combine with split_k";
      return failure();
    }
  }
  if (c.inner_threads &&
      (*c.inner_threads < 1 || *c.inner_threads > 1024 || !llvm::isPowerOf2_64(*c.inner_threads))) {
    error = "inner_threads = " + std::to_string(*c.inner_threads) +
            " must be a power of two from 1 to 1024 (or null)";
    return failure();
  }
  if (c.num_stages < 1 || c.num_stages > 8) {
    error = "num_stages = " + std::to_string(c.num_stages) + " must be 1 to 8";
    return failure();
  }
  static const char *pidTypes[] = {"flat", "xyz", "persistent_blocked",
                                   "persistent_interleaved", "persistent_dynamic"};
  if (llvm::find(pidTypes, c.pid_type) == std::end(pidTypes)) {
    error = "pid_type = '" + c.pid_type +
            "' must be flat, xyz, persistent_blocked, persistent_interleaved or "
            "persistent_dynamic";
    return failure();
  }
  if (c.l2_hints != "none" && c.l2_hints != "reuse" && c.l2_hints != "keep_loads") {
    error = "l2_hints = '" + c.l2_hints + "' must be none, reuse or keep_loads";
    return failure();
  }
  if (c.indexing != "pointer" && c.indexing != "tma") {
    error = "indexing = '" + c.indexing + "' must be pointer or tma";
    return failure();
  }
  SmallVector<int64_t> loopRanks; // of the top-level loops, in order
  for (Operation &op : kernel.getBody().front())
    if (auto t = dyn_cast<TileForOp>(&op))
      loopRanks.push_back(t.getNumDims());
    else if (auto g = dyn_cast<GridForOp>(&op))
      loopRanks.push_back(g.getNumDims());
  if (c.pid_type == "xyz" && (loopRanks.size() != 1 || loopRanks[0] > 3)) {
    std::string ranks;
    for (int64_t r : loopRanks)
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    error = "pid_type = 'xyz' needs a single top-level loop of at most 3 dims, and the "
            "kernel's top-level loops have [" + ranks + "] dims; use 'flat'";
    return failure();
  }
  if (c.loop_orders.size() > loopRanks.size() || c.l2_groupings.size() > loopRanks.size()) {
    error = "loop_orders and l2_groupings have one entry per top-level loop, and the kernel "
            "has " + std::to_string(loopRanks.size());
    return failure();
  }
  for (auto [i, order] : llvm::enumerate(c.loop_orders)) {
    SmallVector<int64_t> sorted(order.begin(), order.end());
    llvm::sort(sorted);
    bool permutation = (int64_t)order.size() == loopRanks[i];
    for (auto [d, v] : llvm::enumerate(sorted))
      permutation &= v == (int64_t)d;
    if (!permutation) {
      error = "loop_orders[" + std::to_string(i) + "] must order the " +
              std::to_string(loopRanks[i]) + " dims of top-level loop " + std::to_string(i) +
              " (a permutation of 0.." + std::to_string(loopRanks[i] - 1) + ")";
      return failure();
    }
  }
  for (int64_t g : c.l2_groupings)
    if (g < 1 || g > kMaxBlockSize) {
      error = "l2_groupings entries must be from 1 to " + std::to_string(kMaxBlockSize);
      return failure();
    }
  for (const auto &r : c.reduction_loops)
    if (r && (*r < 1 || !llvm::isPowerOf2_64(*r) || *r > kMaxBlockSize)) {
      error = "reduction_loops entries must be null or a power of two";
      return failure();
    }
  SmallVector<int64_t> rdims = reductionDims(kernel);
  if (c.reduction_loops.size() > rdims.size()) {
    error = "reduction_loops has " + std::to_string(c.reduction_loops.size()) +
            " entries, but the kernel has " + std::to_string(rdims.size()) +
            " reduction dimensions";
    if (!rdims.empty()) {
      error += " (of sizes";
      for (int64_t n : rdims)
        error += " " + (ShapedType::isDynamic(n) ? std::string("?") : std::to_string(n));
      error += ")";
    }
    return failure();
  }
  // A whole row whose length is taken at launch is looped over in chunks
  // (unless the plan holds it in a bucket).
  bool bounded = dynamicReductionBound(kernel) > 0;
  for (auto [i, n] : llvm::enumerate(rdims))
    if (ShapedType::isDynamic(n) && !bounded &&
        (i >= c.reduction_loops.size() || !c.reduction_loops[i])) {
      error = "reduction_loops[" + std::to_string(i) +
              "] must be a chunk: the reduction dimension's size is taken at launch, so its "
              "rows are reduced in chunks";
      return failure();
    }
  return success();
}

namespace {
/// The largest number of elements a tile in `loop` has in its dims that do
/// not depend on a block size still to be chosen (rows of `x[t, all]`, say).
/// Dims of a size in `looped` count as that many elements (a chunk), and
/// where `loop` reads a row whose length is taken at launch whole
/// (dynamicReductionOrigin), the footprint is `dynamicRow` times as large:
/// such a row is reduced in chunks of that many elements, and its `?` dim
/// cannot be told apart from a block size's here.
int64_t staticFootprint(TileForOp loop, const std::map<int64_t, int64_t> &looped,
                        int64_t dynamicRow) {
  int64_t footprint = 1;
  loop.walk([&](Operation *op) {
    for (Type t : op->getResultTypes()) {
      auto tile = dyn_cast<TileType>(t);
      if (!tile || !tile.hasRank())
        continue;
      int64_t n = 1;
      for (int64_t d : tile.getShape())
        if (!ShapedType::isDynamic(d))
          n *= looped.count(d) ? looped.at(d) : llvm::PowerOf2Ceil(std::max<int64_t>(d, 1));
      footprint = std::max(footprint, n);
    }
  });
  return dynamicRow > 1 && dynamicReductionOrigin(loop) ? footprint * dynamicRow : footprint;
}
} // namespace

namespace {
/// True if tile loop dim `d` indexes the leading (batch) dim of a tensor of
/// rank 3 or more somewhere: `q[tb, tq, all]` in attention, `a[tb, tm, tk]`.
bool isBatchDim(TileForOp loop, int64_t d) {
  Value span = loop.getSpans()[d];
  bool batch = false;
  for (Operation *user : span.getUsers())
    if (auto load = dyn_cast<LoadOp>(user)) {
      auto type = cast<kite::TensorType>(load.getTensor().getType());
      SmallVector<Subscript> subs = load.getSubscripts();
      batch |= type.hasRank() && type.getRank() >= 3 && !subs.empty() &&
               subs[0].value == span;
    }
  return batch;
}

/// True if a product in a key loop (a nested 1-D tile loop) reads as its
/// right operand a 16-bit tile loaded in that loop from an argument
/// (directly or through a transpose): attention's k and v, an MLP's
/// weights. Such loads are what a key loop's producer warpgroup copies, if
/// kite-prefetch-operands stages them and emission finds them TMA-able.
bool hasKeyLoopOperand(func::FuncOp kernel) {
  bool found = false;
  kernel.walk([&](Operation *op) {
    if (!matrixProductLhs(op))
      return;
    auto loop = dyn_cast<TileForOp>(op->getParentOp());
    if (!loop || loop.isTopLevel() || loop.getNumDims() != 1)
      return;
    Value rhs = op->getOperand(op->getNumOperands() - 1);
    if (auto t = rhs.getDefiningOp<TransposeOp>())
      rhs = t.getOperand();
    auto load = rhs.getDefiningOp<LoadOp>();
    if (!load || load->getBlock() != op->getBlock() || !isa<BlockArgument>(load.getTensor()))
      return;
    auto tile = dyn_cast<TileType>(load.getResult().getType());
    found |= tile && tile.hasElementType() &&
             (tile.getElementType().isBF16() || tile.getElementType().isF16());
  });
  return found;
}
} // namespace

bool kite::hasWgmma(StringRef arch) { return arch == "sm_90a"; }

bool kite::hasBulkCopies(StringRef arch) {
  unsigned version = 0;
  StringRef digits = arch;
  if (!digits.consume_front("sm_"))
    return false;
  digits = digits.take_while([](char c) { return c >= '0' && c <= '9'; });
  return !digits.getAsInteger(10, version) && version >= 90;
}

bool kite::hasKeyLoopProducer(const Config &config, func::FuncOp kernel) {
  if (!config.warp_specialize || !config.tensor_cores || !config.wgmma)
    return false;
  // Not beside a main loop: one already made (kite.mainloop), or one a
  // plain product loop will become.
  bool mainloop = false;
  kernel.walk([&](TileForOp loop) {
    mainloop |= loop->hasAttr("kite.mainloop") ||
                (whyNotPlainProductLoop(loop).empty() &&
                 !(config.generic_mainloop && streamsAsKeyLoop(loop)));
  });
  return !mainloop;
}

int64_t kite::computeThreads(const Config &config, func::FuncOp kernel) {
  int64_t threads = 32 * config.num_warps;
  return hasKeyLoopProducer(config, kernel) ? threads - 128 : threads;
}

int64_t kite::registersPerThread(const Config &config, int64_t threads) {
  int64_t programs = std::max<int64_t>(config.min_programs_per_sm, 1);
  return std::min<int64_t>(255, 65536 / (programs * threads) / 8 * 8);
}

Config kite::defaultConfig(func::FuncOp kernel, StringRef arch, bool speculative) {
  // Aim for about 4096 elements per tile value in a program: enough work
  // per thread at 4 warps, little enough to stay in registers.
  constexpr int64_t kTargetElements = 4096;
  // Rows longer than this are reduced in chunks of kReductionChunk (where
  // kite-reduction-loops can): beyond it a whole row needs more than 32
  // registers a thread at 16 warps.
  constexpr int64_t kWholeRowLimit = 16384;
  constexpr int64_t kReductionChunk = 4096;
  Config c;
  std::map<int64_t, int64_t> looped;
  SmallVector<int64_t> rdims = reductionDims(kernel);
  // A row whose length is taken at launch is always reduced in chunks, of
  // kDynamicChunk (rows up to it in one chunk, as a whole row would be).
  constexpr int64_t kDynamicChunk = 2048;
  // A row held in a bucket counts as one as long as the bucket's upper end
  // (its tiles have that shape).
  int64_t bound = dynamicReductionBound(kernel);
  for (int64_t &n : rdims)
    if (ShapedType::isDynamic(n) && bound > 0)
      n = bound;
  for (int64_t n : rdims) {
    bool dynamic = ShapedType::isDynamic(n);
    bool loop = dynamic || ((int64_t)llvm::PowerOf2Ceil(n) > kWholeRowLimit &&
                            reductionLoopSupported(kernel, n));
    int64_t chunk = dynamic ? kDynamicChunk : kReductionChunk;
    c.reduction_loops.push_back(loop ? std::optional<int64_t>(chunk) : std::nullopt);
    if (loop && !dynamic)
      looped[n] = chunk;
  }
  bool dynamicRows = llvm::any_of(rdims, ShapedType::isDynamic);
  if (looped.empty() && !dynamicRows)
    c.reduction_loops.clear();
  // A row of a length taken at launch counts as one chunk (staticFootprint).
  int64_t rowChunk = dynamicRows ? kDynamicChunk : 1;
  bool hasMatmul = false;
  kernel.walk([&](Operation *op) {
    hasMatmul |= isa<DotOp, AddmmOp, BmmOp, BaddbmmOp, MatmulOp>(op);
  });
  // A K loop that only accumulates a 16-bit product runs as a pipelined,
  // warp-specialized wgmma main loop: 128 x 256 output tiles, K 64 at a
  // time through 4 stages, TMA copies (where rows are 16-byte aligned) by a
  // producer warpgroup for two consumer warpgroups, and 2-D grids walked in
  // groups of 8 tile rows. On the H200 the fastest measured at 4096^3 and
  // 8192^3 (650-665 TFLOP/s, against 550-560 with one consumer and 128 x
  // 128 tiles, 357 without warp specialization).
  bool plainProduct = hasPlainProductLoop(kernel);
  // Without wgmma (before sm_90a): mma.sync main loops on 128 x 128 x 32
  // tiles, 8 warps.
  bool hopper = hasWgmma(arch);
  if (plainProduct) {
    c.num_warps = hopper ? 12 : 8;
    c.num_stages = 4;
    c.tensor_cores = true;
    c.wgmma = hopper;
    c.warp_specialize = hopper;
    // Operands whose rows TMA cannot read in place are read from padded
    // copies (on an H100, 4097 x 4095 x 4096: 0.267 ms, against 0.558 with
    // the cp.async producer's shifted loads).
    c.indexing = hopper ? "tma" : "pointer";
    for (Operation &op : kernel.getBody().front())
      if (auto loop = dyn_cast<TileForOp>(&op))
        c.l2_groupings.push_back(loop.getNumDims() == 2 ? 8 : 1);
  }
  // Other 16-bit products (attention's two) run per product on tensor cores
  // from registers where their tiles divide into 16x8x16 steps: on the H200
  // flash attention B4 H32 S4096 D128 took 15.1 ms on mma.sync, against 347
  // ms on CUDA cores. Right operands loaded in a loop are copied one
  // iteration ahead (kite-prefetch-operands): 4.14 ms. On sm_90a they run
  // on wgmma, with 64-element K loops: 3.41 ms (3.78 with K tiles of 32).
  // On wgmma one buffer an operand, refilled right after its product, beats
  // a ring of two (the shared memory of 3 programs an SM instead of 2): with
  // fast_math, 2.58 ms against 2.88, causal 1.86 against 2.16.
  bool registerWgmma = false;
  if (!plainProduct && hasHalfMatmul(kernel)) {
    c.tensor_cores = true;
    c.num_stages = hopper ? 1 : 2;
    c.wgmma = registerWgmma = hopper;
  }
  // Where a key loop's products read operands loaded in it, a producer
  // warpgroup copies them by TMA into rings of 2 stages for two computing
  // warpgroups of 64 rows each (128 x 128 tiles, 12 warps), which take
  // turns issuing their products (pingpong), each key tile's last product
  // a tile late (overlap_products). On the H200, attention B4 H32 S4096
  // D128 bf16 took 1.62 ms (fast_math) against 2.15 for the best config
  // without a producer ([1,64,128], 4 warps, one buffer), causal 1.09
  // against 1.32. Only where every tile it sizes keeps 128 (a top-level
  // loop with one dim besides batch dims, sizes of 128 or more), without
  // atomics; emission may still turn it down (speculative).
  bool atomics = false;
  kernel.walk([&](AtomicOp) { atomics = true; });
  bool producer = speculative && registerWgmma && !atomics && hasKeyLoopOperand(kernel);
  auto assignBlockSizes = [&]() -> bool {
    bool kept = true; // every tile the producer's config sizes got its 128
    c.block_sizes.clear();
    for (BlockSizeOp op : blockSizeOps(kernel)) {
      int64_t extent = ShapedType::kDynamic;
      if (op.getExtent()) // a size taken at launch counts as its bucket's upper end
        extent = sizeUpperBound(op.getExtent()).value_or(ShapedType::kDynamic);
      auto [loop, loopDim] = loopOfBlockSize(op);
      int64_t target = 64;
      if (plainProduct) {
        // On Hopper a K tile is a main-loop stage: 128 bytes of K (64
        // elements of 16 bits, 128 of 8).
        if (!loop || !loop.isTopLevel())
          target = hopper ? 128 / (whyNotPlainProductLoop(loop).empty() ? productElementBytes(loop) : 2)
                          : 32;
        else if (isBatchDim(loop, loopDim))
          target = 1;
        else
          target = hopper && loopDim == loop.getNumDims() - 1 ? 256 : 128;
      } else if (hasMatmul) {
        // Output tiles of 64x64, K in steps of 32 (64 on wgmma); batch dims
        // one at a time. With the producer, 128 x 128.
        bool sized = producer;
        if (!loop || !loop.isTopLevel()) {
          target = producer ? 128 : registerWgmma ? 64 : 32;
        } else if (isBatchDim(loop, loopDim)) {
          target = 1;
          sized = false;
        } else {
          target = producer ? 128 : 64;
          for (int64_t d = 0; d < loop.getNumDims(); ++d)
            kept &= d == loopDim || isBatchDim(loop, d);
        }
        if (sized && ((!ShapedType::isDynamic(extent) && extent < target) ||
                      (op.getMax() && (int64_t)*op.getMax() < target)))
          kept = false;
      } else if (loop && !loop.isTopLevel()) {
        // A looped reduction: chunks of up to 1024 columns.
        target = 1024;
      } else if (loop) {
        // Rows of a looped reduction are as wide as its chunks.
        int64_t nested = 1;
        loop.walk([&](TileForOp inner) {
          if (inner != loop)
            nested = std::max<int64_t>(nested, 1024);
        });
        int64_t perDim =
            kTargetElements / (staticFootprint(loop, looped, rowChunk) * nested);
        // Split the budget across the loop's dims: the innermost gets the most.
        int64_t dims = loop.getNumDims();
        target = dims == 1 ? perDim : (int64_t)std::pow(2.0, std::ceil(std::log2(std::max<int64_t>(perDim, 1)) / dims));
        target = std::clamp<int64_t>(target, 1, 1024);
      }
      if (!ShapedType::isDynamic(extent) && extent > 0)
        target = std::min<int64_t>(target, llvm::PowerOf2Ceil(extent));
      if (op.getMin())
        target = std::max<int64_t>(target, llvm::PowerOf2Ceil(*op.getMin()));
      if (op.getMax())
        target = std::min<int64_t>(target, (int64_t)llvm::bit_floor((uint64_t)*op.getMax()));
      if ((int64_t)op.getId() < 0 || (int64_t)op.getId() > kMaxBlockSizeId)
        continue; // validateConfig rejects it
      if ((int64_t)c.block_sizes.size() <= (int64_t)op.getId())
        c.block_sizes.resize(op.getId() + 1, 1);
      c.block_sizes[op.getId()] = std::max<int64_t>(llvm::PowerOf2Ceil(target), 1);
    }
    return kept;
  };
  if (!assignBlockSizes()) {
    producer = false;
    assignBlockSizes();
  }
  if (producer) {
    c.num_warps = 12;
    c.num_stages = 2;
    c.warp_specialize = true;
    c.overlap_products = true;
    c.pingpong = true;
    // exp by the hardware's approximate exp2, as SDPA's kernels and
    // Triton's tl.exp compute it: the softmax is a third of a key tile's
    // instructions. On an H100 (2026-12-06, B4 H32 bf16): S4096 D64 1.391
    // -> 1.185 ms, D128 1.765 -> 1.603.
    c.fast_math = true;
    // The result leaves the accumulator layout by exchange stores (16
    // bytes a lane), not bulk copies (bulk_stores): on an H100, D128 S1024
    // 0.1304 ms against 0.1323, S4096 1.6025 against 1.6801.
  }
  // The elements of a top-level loop's tile under the block sizes so far.
  auto tileElements = [&](TileForOp loop) {
    int64_t n = staticFootprint(loop, looped, rowChunk);
    for (Value b : loop.getBlockSizes())
      if (auto op = b.getDefiningOp<BlockSizeOp>())
        n *= c.block_sizes[op.getId()];
      else if (std::optional<int64_t> v = getConstantIntValue(b))
        n *= *v;
    return n;
  };
  // Enough warps that the largest row tile stays around 32 elements a
  // thread (4 to 16 warps).
  int64_t largest = 1;
  kernel.walk([&](TileForOp loop) {
    if (loop.isTopLevel())
      largest = std::max(largest, tileElements(loop));
  });
  if (!hasMatmul)
    c.num_warps = std::clamp<int64_t>(llvm::PowerOf2Ceil(largest / (32 * 32)), 4, 16);
  if (plainProduct && hopper) {
    // Two consumers need 128 rows and 64-deep K tiles (small dims clamp
    // the tiles); with fewer rows, one consumer (8 warps), which
    // kite-matmul-mainloop can still turn down for the plain paths.
    auto blockOf = [&](Value b) -> int64_t {
      if (auto op = b.getDefiningOp<BlockSizeOp>())
        return c.block_sizes[op.getId()];
      return getConstantIntValue(b).value_or(0);
    };
    // Few output tiles (128 x 8192 x 8192: 32 tiles of 128 x 256 for the
    // H200's 132 SMs): 64 x 128 tiles on one consumer with 6 stages fill
    // four times the SMs (on the H200 0.061 ms against 0.083).
    constexpr int64_t kHopperSMs = 132;
    auto setBlock = [&](Value b, int64_t v) {
      if (auto op = b.getDefiningOp<BlockSizeOp>())
        c.block_sizes[op.getId()] = v;
    };
    int64_t plainLoops = 0; // split_k splits a kernel's only one
    kernel.walk([&](TileForOp l) { plainLoops += whyNotPlainProductLoop(l).empty(); });
    kernel.walk([&](TileForOp loop) {
      auto top = loop->getParentOfType<TileForOp>();
      if (!top || !whyNotPlainProductLoop(loop).empty())
        return;
      unsigned dims = top.getNumDims();
      int64_t bm = dims >= 2 ? blockOf(top.getBlockSizes()[dims - 2]) : 0;
      int64_t bn = blockOf(top.getBlockSizes()[dims - 1]);
      // K tiles of one 128-byte stage (64 elements of 16 bits, 128 of 8).
      bool stageK = blockOf(loop.getBlockSizes()[0]) * productElementBytes(loop) == 128;
      bool eightBit = productElementBytes(loop) == 1;
      // Fewer than 64 rows (M = 1 to 32: decoding a token or a few) still
      // get a 64-row tile on the main loop, its rows past M zero-filled by
      // TMA and not stored. A 1-row tile is no main loop's (its consumers
      // take 64 or 128 rows): on an H100, x[1, 4096] @ w[4096, 4096] ran in
      // 16 programs on the CUDA cores in 0.63 ms (0.73 with w K-major), and
      // on 64-row tiles split over the SMs in 0.026. 8-bit products run on
      // no other path (before, the CUDA-core path needed 257 KB of shared
      // memory for their 128-deep K tiles).
      if (dims >= 2 && bm < 64 && (eightBit || (stageK && bn >= 64))) {
        setBlock(top.getBlockSizes()[dims - 2], 64);
        bm = 64;
      }
      auto countTiles = [&]() {
        std::optional<int64_t> tiles = 1;
        for (unsigned d = 0; d < dims && tiles; ++d) {
          std::optional<int64_t> lo = getConstantIntValue(top.getLowerBounds()[d]);
          std::optional<int64_t> hi = sizeUpperBound(top.getUpperBounds()[d]);
          int64_t b = blockOf(top.getBlockSizes()[d]);
          if (!lo || !hi || b <= 0)
            tiles = std::nullopt; // a size taken at launch, unbucketed: not known here
          else
            *tiles *= std::max<int64_t>(1, llvm::divideCeil(*hi - *lo, b));
        }
        return tiles;
      };
      std::optional<int64_t> tiles = countTiles();
      if (dims >= 2 && tiles && *tiles < kHopperSMs && bm >= 64 && bn >= 256 && stageK) {
        setBlock(top.getBlockSizes()[dims - 2], 64);
        setBlock(top.getBlockSizes()[dims - 1], 128);
        c.num_stages = 6;
        bm = 64;
        bn = 128;
        tiles = countTiles();
      }
      // Still at most half as many tiles as SMs (M <= 64 against N = 4096:
      // 32 tiles of 64 x 128): K split over enough programs to fill the
      // SMs, each split at least 8 stages deep. On an H100, M = 1, 16 and
      // 64 rows against N = K = 4096 took 0.0359 ms (M = 64, 16 tiles of
      // 64 x 256) and 0.027 in 4 splits of 32 tiles (torch.matmul: 0.022).
      std::optional<int64_t> kLo = getConstantIntValue(loop.getLowerBounds()[0]);
      std::optional<int64_t> kHi = getConstantIntValue(loop.getUpperBounds()[0]);
      int64_t bk = blockOf(loop.getBlockSizes()[0]);
      // split_k splits a main loop only, and a K-major right operand (or
      // an 8-bit one) has no main loop but the TMA one: without TMA copies
      // (a transposed view as linear's w) no split, else the default
      // config would not compile.
      auto [a, b] = plainProductOperands(loop);
      bool mainLoop = !onlyTmaMainLoop(loop) || operandCopies(loop, a, b).tma();
      if (dims >= 2 && tiles && *tiles * 2 <= kHopperSMs && stageK && kLo && kHi && bk > 0 &&
          mainLoop && plainLoops == 1 && c.pid_type == "flat" &&
          whyNotSplittable(kernel, loop).empty() && blockOf(top.getBlockSizes()[dims - 2]) >= 64 &&
          bn >= 64) {
        int64_t kTiles = llvm::divideCeil(*kHi - *kLo, bk);
        int64_t split = 1;
        while (split * 2 <= 16 && *tiles * split * 2 <= kHopperSMs && kTiles / (split * 2) >= 8)
          split *= 2;
        c.split_k = split;
      }
      if (bm < 128 || bn < 64 || !stageK)
        c.num_warps = 8;
    });
    // Two consumers on products whose operands TMA reads in place: the
    // loop as ordinary kernel code in persistent programs
    // (generic_mainloop), so that a tile's epilogue runs from registers
    // while the producer fills the next tile's stages. On an H100
    // (2026-12-06, medians of 3 rounds of 20, main loop against this):
    // 8192^3 1.395 -> 1.378 ms, 4096^3 0.1849 -> 0.1771, 16384x1024x4096
    // 0.1861 -> 0.1784, bmm 64x1024^3 0.2401 -> 0.2039; the 8-warp tiles
    // of few-tile shapes stay on the main loop (128x8192x8192 0.0600
    // against 0.0614).
    // Loops with staged operands too (the producer's maps read the padded
    // copies; the result leaves by realigned exchange stores where its
    // rows are odd). On an H100 (2026-12-07, medians of 2 rounds of 20):
    // 4097x4095x4096 0.2558 -> 0.2377 ms, 4096x4095x4096 0.2356 ->
    // 0.2331, 4096x4096x4095 0.2292 -> 0.2213. 8-bit products too (rows
    // in place): on an H100 (2026-12-07) e4m3 8192^3 side by side with
    // torch._scaled_mm went from 1.10x on the main loop to 0.98-1.03x.
    // (Not split K loops: a persistent program would stop at its first
    // tile.)
    bool streams = c.num_warps == 12 && c.split_k == 1;
    kernel.walk([&](TileForOp loop) {
      if (whyNotPlainProductLoop(loop).empty())
        streams &= streamsAsKeyLoop(loop);
    });
    if (streams) {
      c.generic_mainloop = true;
      c.pid_type = "persistent_interleaved";
    }
  }
  // Atomic adds into a small tensor gather in shared memory per program
  // (privatize_atomics); persistent programs add it to the tensor once for
  // all their tiles, and 16 warps with tiles of 16 elements a thread keep
  // more loads in flight. On the H200, a 256-bin histogram of 16M values
  // took 0.098 ms with one program per 1024-value tile, 0.044 persistent
  // (1024-value tiles, 4 warps), 0.031 persistent with 8192-value tiles
  // and 16 warps.
  bool smallAtomics = false;
  kernel.walk([&](AtomicOp a) {
    auto t = dyn_cast<kite::TensorType>(a.getTensor().getType());
    if (a.getKind() != AtomicKind::add || !t || !t.hasStaticShape() || !t.hasElementType())
      return;
    int64_t bytes = elementBytes(t.getElementType());
    for (int64_t d : t.getShape())
      bytes *= d;
    smallAtomics |= bytes > 0 && bytes <= 48 * 1024;
  });
  if (smallAtomics) {
    c.pid_type = "persistent_interleaved";
    if (!hasMatmul) {
      c.num_warps = 16;
      kernel.walk([&](TileForOp loop) {
        if (!loop.isTopLevel() || loop.getNumDims() == 0)
          return;
        auto inner = loop.getBlockSizes().back().getDefiningOp<BlockSizeOp>();
        if (!inner)
          return;
        int64_t elements = tileElements(loop);
        int64_t &block = c.block_sizes[inner.getId()];
        std::optional<int64_t> hi = getConstantIntValue(loop.getUpperBounds().back());
        int64_t cap = hi ? (int64_t)llvm::PowerOf2Ceil(std::max<int64_t>(*hi, 1)) : 8192;
        if (inner.getMax())
          cap = std::min<int64_t>(cap, (int64_t)llvm::bit_floor((uint64_t)*inner.getMax()));
        while (elements < 16 * 32 * c.num_warps && block * 2 <= std::min<int64_t>(cap, 8192)) {
          block *= 2;
          elements *= 2;
        }
      });
    }
  }
  return c;
}
