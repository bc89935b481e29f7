//===- Layouts.cpp - tile layouts and conversions ---------------------------===//
//
// This file implements how the emitter lays tiles out over the threads (a
// `Context`: a thread arrangement over a padded power-of-two shape, threads
// assigned from the innermost dim out), the index expressions of a tile's
// per-thread elements, and conversions between layouts through shared
// memory.
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

Context *Emitter::contextOf(BlockedLayoutAttr layout) {
  for (auto &ctx : contexts)
    if (ArrayRef<int64_t>(ctx->shape) == layout.getShape() &&
        ArrayRef<int64_t>(ctx->vec) == layout.getVec() &&
        ArrayRef<int64_t>(ctx->tpd) == layout.getThreads())
      return ctx.get();
  auto ctx = std::make_unique<Context>();
  ctx->id = contexts.size();
  ctx->shape.assign(layout.getShape().begin(), layout.getShape().end());
  ctx->vec.assign(layout.getVec().begin(), layout.getVec().end());
  ctx->tpd.assign(layout.getThreads().begin(), layout.getThreads().end());
  int64_t r = ctx->shape.size();
  for (int64_t d = 0; d < r; ++d)
    ctx->tstride.push_back(layout.threadStride(d));
  // The layout's threads are a power of two (with 12 warps the last 4 hold
  // replicas of the first 4's elements, and owner() keeps them quiet).
  ctx->used = layout.usedThreads();
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < r; ++d)
    all.push_back(d);
  ctx->layout = layout.withDims(all);
  for (int64_t d = 0; d < r; ++d) {
    std::string index = ctx->tpd[d] == 1 ? "0"
                        : ctx->tstride[d] == 1
                            ? llvm::formatv("threadIdx.x % {0}", ctx->tpd[d]).str()
                            : llvm::formatv("(threadIdx.x / {0}) % {1}", ctx->tstride[d],
                                            ctx->tpd[d]).str();
    contextDecls += llvm::formatv("  const int {0} = {1};\n", ctx->t(d), index);
  }
  contexts.push_back(std::move(ctx));
  return contexts.back().get();
}

std::pair<Context *, SmallVector<Dim>> Emitter::layoutOf(Attribute attr) {
  auto layout = cast<BlockedLayoutAttr>(attr);
  SmallVector<Dim> dims;
  for (int64_t c : layout.getDims()) {
    Dim d;
    d.ctxDim = c;
    d.padded = c < 0 ? 1 : layout.getShape()[c];
    dims.push_back(d);
  }
  return {contextOf(layout), dims};
}

std::pair<Context *, SmallVector<Dim>> Emitter::layoutOf(Value v) {
  Attribute layout = cast<TileType>(v.getType()).getLayout();
  assert(layout && "kite-assign-layouts gives every tile a layout");
  return layoutOf(layout);
}

Tile Emitter::undeclared(Type elem, Context *ctx, SmallVector<Dim> dims) {
  Tile t;
  t.elem = elem;
  t.ctx = ctx;
  t.dims = std::move(dims);
  int64_t stride = 1;
  for (int64_t i = t.rank() - 1; i >= 0; --i) {
    Dim &d = t.dims[i];
    d.regExtent = d.ctxDim < 0 ? 1 : ctx->perThread(d.ctxDim);
    d.regStride = stride;
    stride *= d.regExtent;
  }
  t.regCount = 0;
  return t;
}

Tile Emitter::declare(Type elem, Context *ctx, SmallVector<Dim> dims, StringRef prefix,
                      bool zeroed) {
  Tile t = undeclared(elem, ctx, std::move(dims));
  t.name = fresh(prefix);
  t.regCount = 1;
  for (const Dim &d : t.dims)
    t.regCount *= d.regExtent;
  std::string shape;
  for (const Dim &d : t.dims)
    shape += (shape.empty() ? "" : ", ") + std::to_string(d.padded);
  if (t.regCount > kMaxRegistersPerTile && tooBig.empty())
    tooBig = llvm::formatv("a ({0}) tile would need {1} registers per thread "
                           "with {2} threads (at most {3}); use smaller block "
                           "sizes, more warps, or a looped reduction",
                           shape, t.regCount, numThreads, kMaxRegistersPerTile);
  line(llvm::formatv("{0} {1}[{2}]{5}; // ({3}) in context {4}", cType(elem), t.name,
                     t.regCount, shape, ctx->id, zeroed ? " = {}" : ""));
  return t;
}

/// The value of an index expression that is an integer literal.
std::optional<int64_t> Emitter::literal(StringRef e) {
  int64_t v;
  if (e.getAsInteger(10, v))
    return std::nullopt;
  return v;
}

/// True if `e` is one parenthesized expression, "(...)".
bool Emitter::parenthesized(StringRef e) {
  if (!e.starts_with("("))
    return false;
  int depth = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    depth += e[i] == '(' ? 1 : e[i] == ')' ? -1 : 0;
    if (depth == 0)
      return i + 1 == e.size();
  }
  return false;
}

/// `k + e` for a per-thread index `k`, folded when `k` is a literal.
std::string Emitter::plus(StringRef k, int64_t e) {
  if (std::optional<int64_t> v = literal(k))
    return std::to_string(*v + e);
  return e == 0 ? k.str() : llvm::formatv("{0} + {1}", k, e).str();
}

/// Emits nested loops over a tile's per-thread elements; `emitBody`
/// receives the per-dim index expressions. With `step` > 1 dim `stepDim`
/// (default: the last) advances `step` elements at a time (a vector
/// access).
void Emitter::forEach(const Tile &t, llvm::function_ref<void(ArrayRef<std::string>)> emitBody, int64_t step, int64_t stepDim) {
  SmallVector<std::string> k;
  int opened = 0;
  if (stepDim < 0)
    stepDim = t.rank() - 1;
  for (auto [i, d] : llvm::enumerate(t.dims)) {
    int64_t s = (int64_t)i == stepDim ? step : 1;
    if (d.regExtent == s) {
      k.push_back("0");
      continue;
    }
    std::string var = fresh("k");
    line("#pragma unroll");
    line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", var,
                       d.regExtent / s));
    ++indent;
    ++opened;
    k.push_back(s == 1 ? var : llvm::formatv("({0} * {1})", var, s).str());
  }
  emitBody(k);
  for (int i = 0; i < opened; ++i) {
    --indent;
    line("}");
  }
}

std::string Emitter::flat(const Tile &t, ArrayRef<std::string> k) {
  std::string s;
  int64_t constant = 0; // literal indices, folded
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.dims[i].regExtent == 1)
      continue;
    if (std::optional<int64_t> v = literal(k[i])) {
      constant += *v * t.dims[i].regStride;
      continue;
    }
    if (!s.empty())
      s += " + ";
    s += t.dims[i].regStride == 1
             ? k[i]
             : llvm::formatv("{0} * {1}", k[i], t.dims[i].regStride).str();
  }
  if (s.empty())
    return std::to_string(constant);
  return constant ? s + " + " + std::to_string(constant) : s;
}

/// The coordinate, within the tile, of element `k` along dim `i`.
std::string Emitter::inExtent(const Tile &t, int64_t i, StringRef k) {
  const Dim &d = t.dims[i];
  std::string c = coord(t, i, k);
  if (d.ctxDim < 0)
    return llvm::formatv("{0} < {1}", c, d.extent);
  Context *ctx = t.ctx;
  int64_t T = ctx->tpd[d.ctxDim], V = ctx->vec[d.ctxDim];
  // (Against a constant, the compiler folds the coordinate's form best: a
  // thread's chunks wholly past it are dropped.)
  if (T == 1 || literal(d.extent))
    return llvm::formatv("{0} < {1}", c, d.extent);
  std::string tv = ctx->t(d.ctxDim);
  std::string lane = V == 1 ? tv : llvm::formatv("{0} * {1}", tv, V).str();
  // The coordinate less the thread's part: what coord() writes with the
  // lane taken out.
  std::string own;
  if (std::optional<int64_t> v = literal(k)) {
    own = std::to_string((*v / V) * T * V + *v % V);
  } else {
    std::string kp = k.contains(' ') && !parenthesized(k) ? "(" + k.str() + ")" : k.str();
    own = V == 1 ? llvm::formatv("{0} * {1}", kp, T).str()
                 : llvm::formatv("({0} / {1}) * {2} + ({0} % {1})", kp, V, T * V).str();
  }
  return llvm::formatv("{0} < ({1}) - ({2})", own, d.extent, lane);
}

std::string Emitter::coord(const Tile &t, int64_t i, StringRef k) {
  const Dim &d = t.dims[i];
  if (d.ctxDim < 0)
    return "0";
  Context *c = t.ctx;
  int64_t T = c->tpd[d.ctxDim], V = c->vec[d.ctxDim];
  std::string tv = c->t(d.ctxDim);
  if (T == 1 && V == 1)
    return k.str();
  // The first element of this thread's chunks.
  std::string lane = V == 1 ? tv : llvm::formatv("{0} * {1}", tv, V).str();
  if (std::optional<int64_t> v = literal(k)) {
    // Element `v` of the thread's chunks: chunk v / V, lane v % V.
    int64_t base = (*v / V) * T * V + *v % V;
    return base ? llvm::formatv("({0} + {1})", lane, base).str() : "(" + lane + ")";
  }
  // A whole run, "(k12 * S)" with S a multiple of V: chunk k12 * S / V.
  if (StringRef inner = k; parenthesized(k)) {
    inner = inner.drop_front().drop_back();
    auto [name, factor] = inner.split(" * ");
    std::optional<int64_t> S = literal(factor);
    if (S && *S % V == 0 && !name.contains(' ') && !name.empty() && !literal(name))
      return llvm::formatv("({0} * {1} + {2})", name, *S * T, lane);
  }
  // `k` may be a sum ("k12 + 3", an element of a vector run).
  std::string kp = k.contains(' ') && !parenthesized(k) ? "(" + k.str() + ")" : k.str();
  if (V == 1)
    return llvm::formatv("({0} * {1} + {2})", kp, T, tv);
  return llvm::formatv("(({0} / {1}) * {2} + {3} * {1} + ({0} % {1}))", kp, V,
                       T * V, tv);
}

/// `name[...]` of operand `o` at the element `k` of a tile whose dim
/// `j + offset` is the operand's dim `j` (broadcasting unit dims).
std::string Emitter::at(const Tile &o, ArrayRef<std::string> k, int64_t offset) {
  std::string s;
  for (size_t j = 0; j < o.dims.size(); ++j) {
    if (o.dims[j].regExtent == 1)
      continue;
    if (!s.empty())
      s += " + ";
    const std::string &kk = k[j + offset];
    s += o.dims[j].regStride == 1
             ? kk
             : llvm::formatv("{0} * {1}", kk, o.dims[j].regStride).str();
  }
  return o.name + "[" + (s.empty() ? "0" : s) + "]";
}

BlockedLayoutAttr Emitter::layoutAttr(const Tile &t) {
  SmallVector<int64_t> dims;
  for (const Dim &d : t.dims)
    dims.push_back(d.ctxDim);
  return t.ctx->layout.withDims(dims);
}

bool Emitter::compatible(const Tile &o, const Tile &r, int64_t offset) {
  return layoutAttr(o).readableAt(layoutAttr(r), offset);
}

/// The condition under which this thread is the one that writes tile
/// `t`'s elements (replicas stay quiet), or "" if every thread is.
std::string Emitter::owner(const Tile &t) {
  SmallVector<std::string> conds;
  if (t.ctx->used < numThreads)
    conds.push_back(llvm::formatv("threadIdx.x < {0}", t.ctx->used));
  for (int64_t cd = 0; cd < t.ctx->rank(); ++cd) {
    if (t.ctx->tpd[cd] == 1)
      continue;
    bool covered = llvm::any_of(t.dims, [&](const Dim &d) { return d.ctxDim == cd; });
    if (!covered)
      conds.push_back(t.ctx->t(cd) + " == 0");
  }
  return llvm::join(conds, " && ");
}

int64_t Emitter::scratchBase() {
  if (liveStaging > 0 || stagingOutsideLoops || !privates.empty())
    return sharedBase;
  if (sharedBase > 0) {
    if (stagingFreed)
      line(sync() + " // every thread is done with the staging buffers");
    stagingFreed = false;
    lowScratchUsed = true;
  }
  return 0;
}

bool Emitter::ownsStaging(Operation *loop) const {
  if (prefetchLoops.count(loop) || sharedLhsLoops.count(loop))
    return true;
  bool owns = false;
  loop->walk([&](Operation *op) { owns |= stagingBuffers.count(op) > 0; });
  return owns;
}

Emitter::StagingScope::StagingScope(Emitter &e, Operation *loop)
    : e(e), owns(e.ownsStaging(loop)) {
  if (!owns)
    return;
  // Scratch at 0 used before this loop, or after it by a surrounding
  // loop's previous iteration, and the buffers of a loop before it (a
  // sibling shares their space) may overlap its buffers: every thread is
  // done with them before any writes them.
  bool repeated = e.result.persistent;
  for (Operation *p = loop->getParentOp(); p && !repeated; p = p->getParentOp())
    if (auto outer = dyn_cast<TileForOp>(p))
      repeated = !outer.isTopLevel();
    else
      repeated = isa<LoopLikeOpInterface>(p);
  // A sibling loop after one whose buffers were all a producer's rings
  // (their stages change hands on mbarriers) or left operands staged
  // before it, with scratch above the staging (stagingOutsideLoops), reuses
  // them as they are: no barrier (causal attention's diagonal tile). A
  // repeated loop keeps it: its next run's first copies may land before
  // the previous run's last reads.
  bool ringsOnly = !repeated && !e.lowScratchUsed && e.producer && e.stagingOutsideLoops;
  for (Operation *load : e.prefetchLoops.lookup(loop))
    ringsOnly &= e.tmaCopies.count(load) > 0;
  for (Value lhs : e.sharedLhsLoops.lookup(loop)) {
    LoadOp l = loadedLhs(lhs).first;
    ringsOnly &= e.stagedBefore.contains({loop, lhs}) || (l && e.tmaCopies.count(l));
  }
  loop->walk([&](Operation *op) { ringsOnly &= e.stagingBuffers.count(op) == 0; });
  if (e.liveStaging == 0 && ringsOnly) {
    e.stagingFreed = false;
  } else if (e.liveStaging == 0 && (e.lowScratchUsed || e.stagingFreed || repeated)) {
    e.line(e.sync() + " // scratch below the staging buffers is free");
    e.lowScratchUsed = false;
    e.stagingFreed = false;
  }
  ++e.liveStaging;
}

std::string Emitter::smem(const std::string &type, int64_t count, int64_t bytes) {
  int64_t base = scratchBase();
  sharedBytes = std::max<int64_t>(sharedBytes, base + llvm::alignTo(count * bytes, 16));
  if (base == 0)
    return llvm::formatv("reinterpret_cast<{0}*>(kite_smem)", type);
  return llvm::formatv("reinterpret_cast<{0}*>(kite_smem + {1})", type, base);
}

std::string Emitter::smem(Type elem, int64_t count) {
  int64_t bytes = elementBytes(elem);
  return smem(cType(elem), count, bytes > 0 ? bytes : 8);
}

/// Moves `src` into the layout `dims` of context `ctx` through shared
/// memory (row-major over the padded shape), or relabels it where the two
/// layouts read alike.
Tile Emitter::convert(const Tile &src, Context *ctx, SmallVector<Dim> dims) {
  for (size_t i = 0; i < dims.size(); ++i)
    dims[i].extent = src.dims[i].extent;
  // Layouts that read alike hold each element at the same register: the
  // same registers, relabeled.
  if (compatible(src, Tile{"", src.elem, ctx, dims}, 0)) {
    Tile same = src;
    same.ctx = ctx;
    for (size_t i = 0; i < dims.size(); ++i)
      same.dims[i].ctxDim = dims[i].ctxDim;
    return same;
  }
  Tile dst = declare(src.elem, ctx, dims);
  std::string buf = fresh("s");
  line("{");
  ++indent;
  line(llvm::formatv("{0}* {1} = {2};", cType(src.elem), buf,
                     smem(src.elem, paddedCount(src))));
  auto index = [&](const Tile &t, ArrayRef<std::string> k) {
    std::string s = "0";
    int64_t stride = 1;
    for (int64_t i = t.rank() - 1; i >= 0; --i) {
      s = llvm::formatv("{0} + {1} * {2}", s, coord(t, i, k[i]), stride);
      stride *= t.dims[i].padded;
    }
    return s;
  };
  line(sync());
  std::string own = owner(src);
  forEach(src, [&](ArrayRef<std::string> k) {
    line(llvm::formatv("{0}{1}[{2}] = {3}[{4}];",
                       own.empty() ? "" : "if (" + own + ") ", buf,
                       index(src, k), src.name, flat(src, k)));
  });
  line(sync());
  forEach(dst, [&](ArrayRef<std::string> k) {
    line(llvm::formatv("{0}[{1}] = {2}[{3}];", dst.name, flat(dst, k), buf,
                       index(dst, k)));
  });
  line(sync());
  --indent;
  line("}");
  return dst;
}

int64_t Emitter::paddedCount(const Tile &t) {
  int64_t n = 1;
  for (const Dim &d : t.dims)
    n *= d.padded;
  return n;
}

/// `o` in a layout readable at the elements of `r` (dims aligned at
/// `offset`), converting through shared memory if needed.
Tile Emitter::readableAt(const Tile &o, const Tile &r, int64_t offset) {
  if (compatible(o, r, offset))
    return o;
  // kite-assign-layouts converts every operand its user cannot read.
  if (layoutMismatch.empty())
    layoutMismatch = "an operand of a (" + std::to_string(r.rank()) +
                     "-dim) tile is not in a layout it can read";
  SmallVector<Dim> dims(o.dims);
  for (size_t j = 0; j < dims.size(); ++j) {
    int64_t i = j + offset;
    if (dims[j].padded == 1) {
      dims[j].ctxDim = -1;
      continue;
    }
    dims[j].ctxDim = r.dims[i].ctxDim;
  }
  return convert(o, r.ctx, dims);
}
