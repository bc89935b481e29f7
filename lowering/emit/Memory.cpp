//===- Memory.cpp - loads, stores and atomics -------------------------------===//
//
// This file implements accesses of tensors in global memory: the tile a
// subscript selects, vector widths, masks and the checked subscripts of
// kite-check-bounds.
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

#include "lowering/Config.h"
#include "lowering/TypeInference.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace kite;
using namespace kite::emit;


/// Tensors the kernel makes: outputs the host allocates (empty, zeros,
/// empty_like) and reshaped views of contiguous tensors.
LogicalResult Emitter::emitTensorOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](EmptyOp e) -> LogicalResult {
        auto t = cast<kite::TensorType>(e.getType());
        // A size that is not a constant comes from the launch (a scalar, a
        // size taken at launch): addOutput finds where, or says it cannot.
        if (!t.hasRank() || !t.hasElementType())
          return e.emitError() << "the output's rank or dtype is not known at specialization";
        return addOutput(e.getResult(), e.getZeroed());
      })
      .Case([&](EmptyLikeOp e) -> LogicalResult {
        return addOutput(e.getResult(), e.getZeroed());
      })
      .Case([&](TensorReshapeOp r) -> LogicalResult {
        TensorRef src = tensors[r.getSource()];
        if (src.anyDynamic())
          return r.emitError() << "reshape/view of a tensor whose size is taken at launch "
                                  "(specialize its sizes, or launch with static shapes)";
        int64_t expected = 1;
        for (int64_t d = src.sizes.size() - 1; d >= 0; --d) {
          if (src.sizes[d] != 1 && src.strides[d] != expected)
            return r.emitError() << "reshape/view needs a contiguous tensor";
          expected *= src.sizes[d];
        }
        auto t = cast<kite::TensorType>(r.getType());
        TensorRef ref = src;
        ref.sizes.assign(t.getShape().begin(), t.getShape().end());
        ref.setContiguousStrides();
        tensors[r.getResult()] = ref;
        return success();
      });
}

namespace {
/// What a subscript selects, dim by dim.
struct SubscriptDim {
  Subscript::Kind kind;
  int64_t size = 1;    // logical size of the selected dim
  std::string extent; // valid count, or ""
};
} // namespace

FailureOr<Tile> Emitter::subscriptShape(Operation *op, Value tensor,
                                        ArrayRef<Subscript> subs, Type resultElem,
                                        SmallVector<int64_t> &shape,
                                        SmallVector<std::string> &extents) {
  const TensorRef &ref = tensors[tensor];
  size_t td = 0;
  bool dynamicAll = false;
  // A whole dim: its size, or for a size taken at launch in a bucket, the
  // bucket's upper end with the lanes past the size masked.
  auto addAll = [&](int64_t d) {
    int64_t size = wholeExtent(tensor, d);
    dynamicAll |= ShapedType::isDynamic(size);
    shape.push_back(size);
    if (ref.isDynamic(d)) // compared with 32-bit coordinates where the size is small
      extents.push_back(ref.index32 ? "(int)" + ref.size(d) : ref.size(d));
    else
      extents.push_back(paddedSize(size) != size ? std::to_string(size) : "");
  };
  for (const Subscript &s : subs) {
    switch (s.kind) {
    case Subscript::Kind::NewAxis:
      shape.push_back(1);
      extents.push_back("");
      continue;
    case Subscript::Kind::All:
      addAll(td);
      break;
    case Subscript::Kind::Span: {
      const SpanVars &sv = spans[s.value];
      shape.push_back(sv.blockSize);
      extents.push_back(sv.exact ? "" : sv.valid);
      break;
    }
    case Subscript::Kind::Scalar:
      break;
    case Subscript::Kind::Gather: {
      // A group of adjacent gathers broadcasts together; the group's shape
      // is emitted once, at its first member.
      if (&s != subs.data() && (&s - 1)->kind == Subscript::Kind::Gather)
        break;
      SmallVector<int64_t> group;
      SmallVector<std::string> groupExtents;
      for (const Subscript *q = &s; q != subs.end() && q->kind == Subscript::Kind::Gather; ++q) {
        auto type = cast<TileType>(q->value.getType());
        const Tile &g = tiles[q->value];
        int64_t r = type.getRank();
        if ((int64_t)group.size() < r) {
          group.insert(group.begin(), r - group.size(), 1);
          groupExtents.insert(groupExtents.begin(), r - groupExtents.size(), "");
        }
        int64_t off = group.size() - r;
        for (int64_t i = 0; i < r; ++i) {
          if (type.getShape()[i] != 1) {
            group[off + i] = type.getShape()[i];
            if (groupExtents[off + i].empty())
              groupExtents[off + i] = g.dims[i].extent;
          }
        }
      }
      shape.append(group);
      extents.append(groupExtents);
      break;
    }
    }
    ++td;
  }
  for (; td < ref.sizes.size(); ++td)
    addAll(td);
  if (dynamicAll)
    return op->emitError() << "a whole dim (all) of a tensor whose size is taken at launch; "
                              "kite needs that size static (specialize it, or launch with "
                              "static shapes)";
  return Tile();
}

/// How many consecutive elements of tile `t`'s last dim an access of `ref`
/// at `subs` can move as one vector (1: element by element). A vector needs
/// the dim to run along the tensor's contiguous last dim, the thread's run
/// of elements there (its context's `vec`), a start that is a multiple of
/// the width in elements (pointer alignment, span begins, the other dims'
/// strides), and a valid extent that is a multiple of it, so that a mask is
/// the same for the whole vector.
int64_t Emitter::vectorWidth(const TensorRef &ref, ArrayRef<Subscript> subs,
                             const Tile &t, const llvm::SmallDenseSet<int32_t> &checked,
                             int64_t cap, bool *contiguous) {
  if (contiguous)
    *contiguous = false;
  int64_t bytes = elementBytes(ref.elem);
  if (t.rank() == 0 || !bytes)
    return 1;
  int64_t last = t.rank() - 1;
  const Dim &d = t.dims[last];
  if (d.ctxDim < 0)
    return 1;
  // A masked extent that is no multiple of the width still leaves the dim
  // contiguous (its lanes are masked one by one).
  bool raggedExtent = false;
  int64_t w = std::min(cap > 0 ? cap : t.ctx->vec[d.ctxDim], std::max<int64_t>(1, 16 / bytes));
  auto divides = [&](int64_t m) {
    while (w > 1 && m % w != 0)
      w /= 2;
  };
  divides(std::max<int64_t>(1, ref.align / bytes));
  int64_t rank = ref.sizes.size();
  int64_t rd = 0, tdim = 0;
  bool found = false;
  // A tile dim indexing tensor dim `tdim` (an `all` or a span starting at
  // multiples of `begin`); any other dim only offsets by its stride.
  auto indexed = [&](int64_t begin, int64_t block) {
    if (rd == last) {
      if (tdim != rank - 1 || ref.strides[tdim] != 1)
        return false;
      found = true;
      divides(begin);
      divides(block);
      divides(ref.sizeDivisor(tdim));
    } else {
      divides(ref.strideDivisor(tdim));
    }
    ++rd;
    ++tdim;
    return true;
  };
  for (size_t p = 0; p < subs.size(); ++p) {
    const Subscript &s = subs[p];
    switch (s.kind) {
    case Subscript::Kind::NewAxis:
      if (rd == last)
        return 1;
      ++rd;
      break;
    case Subscript::Kind::All:
      if (!indexed(0, ref.sizes[tdim]))
        return 1;
      break;
    case Subscript::Kind::Span: {
      const SpanVars &sv = spans[s.value];
      // A masked tile's valid extent, min(block, end - begin), is a
      // multiple of the width only if the loop's end is (the begins are);
      // a span masked against its tensor (kite.checked) has a mask per
      // element.
      if (rd == last && checked.contains((int32_t)p))
        return 1;
      if (rd == last && !sv.exact) {
        if (sv.upperConst < 0 && sv.endDivisor < 1)
          raggedExtent = true;
        else
          divides(sv.upperConst >= 0 ? sv.upperConst : sv.endDivisor);
      }
      if (!indexed(sv.alignElems, sv.blockSize))
        return 1;
      break;
    }
    case Subscript::Kind::Scalar:
      divides(ref.strideDivisor(tdim));
      ++tdim;
      break;
    case Subscript::Kind::Gather: {
      size_t q = p;
      int64_t groupRank = 0;
      for (; q < subs.size() && subs[q].kind == Subscript::Kind::Gather; ++q) {
        groupRank = std::max<int64_t>(
            groupRank, cast<TileType>(subs[q].value.getType()).getRank());
        divides(ref.strideDivisor(tdim));
        ++tdim;
      }
      if (last >= rd && last < rd + groupRank)
        return 1;
      rd += groupRank;
      p = q - 1;
      break;
    }
    }
  }
  for (; tdim < rank;)
    if (!indexed(0, ref.sizes[tdim]))
      return 1;
  if (contiguous)
    *contiguous = found;
  return found && !raggedExtent ? w : 1;
}

LogicalResult Emitter::emitAccess(Operation *op, Value tensor,
                                  ArrayRef<Subscript> subs, Value mask, Value value,
                                  Value resultValue,
                                  std::optional<AtomicKind> atomic) {
  const TensorRef &ref = tensors[tensor];
  SmallVector<int64_t> shape;
  SmallVector<std::string> extents;
  if (failed(subscriptShape(op, tensor, subs, ref.elem, shape, extents)))
    return failure();
  // A read of what this program wrote since the last barrier: other
  // threads may have written the elements this thread reads (a transposed
  // store, another layout), and __syncthreads() makes their global writes
  // visible to the block.
  if (resultValue && storedSinceBarrier.count(ref.ptr)) {
    // Bulk stores' writes land asynchronously: wait for them first.
    bool bulk = false;
    op->getParentOfType<func::FuncOp>().walk([&](StoreOp s) {
      bulk |= s->hasAttr(kBulkStoreAttrName) && tensors.count(s.getTensor()) &&
              tensors[s.getTensor()].ptr == ref.ptr;
    });
    if (bulk)
      line("bulk_store_drain();");
    line(sync() + " // this program wrote " + ref.ptr + " above");
    storedSinceBarrier.clear();
  }
  if (!resultValue)
    storedSinceBarrier.insert(ref.ptr);

  // The layout the access iterates in.
  Tile t;
  bool isLoad = static_cast<bool>(resultValue);
  // A load's cache policy: kite-cache-hints' L2 priority, else streaming's.
  std::string hint;
  if (auto cache = op->getAttrOfType<StringAttr>("kite.cache"); cache && isLoad)
    hint = cache.getValue() == "evict_last" ? "CacheEvictLast" : "CacheEvictFirst";
  std::optional<Tile> stored;
  if (!isLoad) {
    if (auto it = tiles.find(value); it != tiles.end())
      stored = it->second;
  }
  // kite-assign-layouts' choice: a load's result layout, or the layout a
  // store or atomic iterates in.
  auto [ctx, dims] = accessLayout ? *accessLayout
                    : isLoad     ? layoutOf(resultValue)
                                 : layoutOf(op->getAttr(kLayoutAttrName));
  t.ctx = ctx;
  t.dims = dims;
  for (size_t i = 0; i < t.dims.size(); ++i)
    t.dims[i].extent = extents[i];
  // A prefetched load's copy (copyTarget) iterates like a store: its
  // elements go to shared memory, not registers.
  bool toRegisters = isLoad && !copyTarget;
  if (toRegisters) {
    t = declare(ref.elem, t.ctx, t.dims);
  } else {
    // Iterate without an array of our own.
    int64_t stride = 1;
    for (int64_t i = t.rank() - 1; i >= 0; --i) {
      Dim &d = t.dims[i];
      d.regExtent = d.ctxDim < 0 ? 1 : t.ctx->perThread(d.ctxDim);
      d.regStride = stride;
      stride *= d.regExtent;
    }
    t.regCount = stride;
  }

  Access a;
  a.op = op;
  a.ref = &ref;
  a.subs = subs;
  a.t = t;
  a.isLoad = isLoad;
  a.hint = hint;
  a.atomic = atomic;
  a.value = value;
  readGathers(a);
  std::optional<Tile> maskTile;
  if (mask) {
    if (auto it = tiles.find(mask); it != tiles.end())
      maskTile = readableAt(it->second, t, t.rank() - it->second.rank());
  }
  std::optional<Tile> valueTile;
  if (stored)
    valueTile = readableAt(*stored, t, t.rank() - stored->rank());

  // Subscripts kite-check-bounds could not prove inside the tensor: masked
  // against their dimension at run time (lanes outside read 0, are not
  // written).
  if (auto c = op->getAttrOfType<DenseI32ArrayAttr>(kCheckedAttrName))
    a.checked.insert(c.asArrayRef().begin(), c.asArrayRef().end());
  std::string own = isLoad ? "" : owner(t);
  int64_t width = (maskTile || atomic) ? 1 : vectorWidth(ref, subs, t, a.checked);
  // A copy moves 16-byte vectors along the staged rows (cp.async), else
  // elements.
  if (copyTarget && (copyTarget->colDim != t.rank() - 1 ||
                     width * elementBytes(ref.elem) != 16))
    width = 1;
  // Offsets in 32-bit arithmetic where none can overflow it: the tensor's
  // reach, with a tile running past its end (masked lanes), stays far
  // below 2^31 elements (for sizes taken at launch, the plan's class says
  // so: ArgSpec::index32).
  bool narrow = !ref.anyDynamic() || ref.index32;
  if (narrow && !ref.anyDynamic()) {
    int64_t reach = 0;
    for (auto [size, stride] : llvm::zip(ref.sizes, ref.strides))
      reach += size * std::abs(stride);
    narrow = 4 * reach < std::numeric_limits<int32_t>::max();
  }
  a.maskTile = maskTile;
  a.valueTile = valueTile;
  a.own = own;
  a.width = width;
  a.narrow = narrow;
  // A plain store of a tile: by bulk copies where marked, else by lanes
  // exchanging their chunks, where the layout allows.
  if (!isLoad && !atomic && !copyTarget && !maskTile && valueTile &&
      ((op->hasAttr(kBulkStoreAttrName) && emitBulkStore(a, shape)) || emitExchangeStore(a)))
    return success();
  forEach(t, [&](ArrayRef<std::string> k) {
    SmallVector<std::string> bounds;
    std::string offset = elementOffset(a, k, bounds);
    emitAccessElement(a, k, offset, bounds);
  }, width);
  if (toRegisters)
    tiles[resultValue] = t;
  return success();
}

std::string Emitter::storedElement(const Access &a, ArrayRef<std::string> k, int64_t e) {
  SmallVector<std::string> ki(k.begin(), k.end());
  ki.back() = plus(k.back(), e);
  return llvm::formatv("cvt<{0}>({1})", cType(a.ref->elem),
                       a.valueTile ? at(*a.valueTile, ki, a.t.rank() - a.valueTile->rank())
                                   : scalar(a.value))
      .str();
}

/// Bulk stores: the rows of the tile (all but its last dim) are rows of
/// the tensor (its contiguous last dim, subscripted `all` or by a tile
/// loop's span whose begins are 16-byte aligned), each `rowBytes` long, a
/// multiple of 16, at 16-byte aligned addresses. Once every thread is done
/// with the scratch space, each writes its elements into a copy of the tile
/// there (rows padded by 16 bytes, so that the 8 rows a product's
/// accumulator layout stores at once hit different banks); after a proxy
/// fence and a barrier, the thread holding a row's first element copies it
/// with one cp.async.bulk, skipping rows past the tile's extents, then
/// waits until its copies have read shared memory and the threads meet
/// again, so the space can be reused.
bool Emitter::emitBulkStore(const Access &a, ArrayRef<int64_t> shape) {
  const TensorRef &ref = *a.ref;
  const Tile &t = a.t;
  int64_t rank = t.rank(), L = rank - 1, eb = elementBytes(a.ref->elem);
  if (rank == 0 || eb <= 0 || !a.gathers.empty() || !a.checked.empty())
    return false;
  // The tensor dim the tile's last dim runs along, and how it is indexed.
  int64_t rd = 0, tdim = 0, lastTensorDim = -1;
  std::optional<Subscript> lastSub;
  for (const Subscript &sub : a.subs) {
    switch (sub.kind) {
    case Subscript::Kind::NewAxis: ++rd; continue;
    case Subscript::Kind::Scalar: ++tdim; continue;
    case Subscript::Kind::Gather: return false;
    case Subscript::Kind::All:
    case Subscript::Kind::Span:
      if (rd == L) {
        lastTensorDim = tdim;
        lastSub = sub;
      }
      ++rd;
      ++tdim;
      continue;
    }
  }
  int64_t tensorRank = ref.sizes.size();
  if (tdim < tensorRank) { // the dims not subscripted follow, whole
    if (rd + (tensorRank - tdim) - 1 != L)
      return false;
    lastTensorDim = tensorRank - 1;
    lastSub = Subscript{Subscript::Kind::All, {}};
  }
  if (lastTensorDim != tensorRank - 1 || !lastSub)
    return false;
  // Whole 16-byte rows, contiguous, every row start 16-byte aligned.
  if (ref.isDynamicStride(tensorRank - 1) || ref.strides[tensorRank - 1] != 1 ||
      ref.align % 16 != 0)
    return false;
  for (int64_t d = 0; d + 1 < tensorRank; ++d)
    if ((ref.strideDivisor(d) * eb) % 16 != 0)
      return false;
  int64_t cols = shape[L];
  if (!t.dims[L].extent.empty() || cols != t.dims[L].padded || (cols * eb) % 16 != 0)
    return false;
  if (lastSub->kind == Subscript::Kind::All) {
    if (ref.isDynamic(tensorRank - 1) || ref.sizes[tensorRank - 1] != cols)
      return false;
  } else {
    const SpanVars &sv = spans[lastSub->value];
    if ((sv.alignElems * eb) % 16 != 0)
      return false;
  }
  int64_t rows = 1;
  for (int64_t i = 0; i < L; ++i)
    rows *= t.dims[i].padded;
  int64_t rowBytes = cols * eb, pitch = cols + 16 / eb; // in elements
  // Where the copy would not fit beside what the program already keeps in
  // shared memory, the store stays direct (the config still fits).
  if (scratchBase() + rows * pitch * eb > kMaxSharedBytes)
    return false;

  // The row of element k in the shared copy.
  auto rowOf = [&](ArrayRef<std::string> k) {
    std::string r = "0";
    int64_t stride = 1;
    for (int64_t i = L - 1; i >= 0; --i) {
      std::string c = coord(t, i, k[i]);
      if (c != "0")
        r = r == "0" ? llvm::formatv("{0} * {1}", c, stride).str()
                     : llvm::formatv("{0} + {1} * {2}", r, c, stride).str();
      stride *= t.dims[i].padded;
    }
    return r;
  };
  std::string T = cType(ref.elem), sb = fresh("sb");
  line("{");
  ++indent;
  line(llvm::formatv("{0}* {1} = {2}; // the tile's rows, {3} bytes apart, for bulk copies", T,
                     sb, smem(T, rows * pitch, eb), pitch * eb));
  line(sync() + " // the scratch space is free");
  forEach(t, [&](ArrayRef<std::string> k) {
    std::string dst = llvm::formatv("{0}[({1}) * {2} + {3}]", sb, rowOf(k), pitch,
                                    coord(t, L, k[L]));
    SmallVector<std::string> elems;
    for (int64_t e = 0; e < a.width; ++e)
      elems.push_back(storedElement(a, k, e));
    std::string store =
        a.width > 1 ? llvm::formatv("store_vec<{0}>(&{1}, Vec<{2}, {0}>{{{{{3}}});", a.width,
                                    dst, T, llvm::join(elems, ", "))
                          .str()
                    : llvm::formatv("{0} = {1};", dst, elems[0]).str();
    line(a.own.empty() ? store : llvm::formatv("if ({0}) {1}", a.own, store).str());
  }, a.width);
  line("fence_proxy_async();");
  line(sync());
  // A row's copy, by the thread that holds its first element.
  Tile firsts = t;
  firsts.dims[L].regExtent = 1;
  forEach(firsts, [&](ArrayRef<std::string> k) {
    SmallVector<std::string> bounds;
    std::string offset = elementOffset(a, k, bounds);
    SmallVector<std::string> conds;
    if (std::string c = coord(t, L, k[L]); c != "0")
      conds.push_back(c + " == 0");
    if (!a.own.empty())
      conds.push_back(a.own);
    for (int64_t i = 0; i < L; ++i)
      if (!t.dims[i].extent.empty())
        conds.push_back(inExtent(t, i, k[i]));
    std::string copy = llvm::formatv("bulk_store<{0}>(&{1}[{2}], &{3}[({4}) * {5}]);", rowBytes,
                                     ref.ptr, offset, sb, rowOf(k), pitch);
    line(conds.empty() ? copy
                       : llvm::formatv("if ({0}) {1}", llvm::join(conds, " && "), copy).str());
  });
  line("bulk_store_wait();");
  line(sync() + " // the copies have read the tile's rows");
  --indent;
  line("}");
  return true;
}

/// Exchange stores. A thread's elements along the tile's last dim come in
/// chunks of V (4 or 8 bytes); the T threads along that dim are
/// consecutive lanes, chunk c of thread t at column c * V * T + t * V. So
/// the G = 16 / (V bytes) lanes of a group (thread g * G + r) together hold
/// 16 contiguous bytes of each chunk, and G chunks (c = a * G + j) make G
/// such segments: lane r takes segment a * G + r from the others
/// (exchange_segments) and stores it whole, at column (a * G + r) * V * T +
/// g * G * V, which is its own column for chunk a * G plus r * V * T - r * V.
/// The shuffles run on every lane; masks, rows past the tile's extents and
/// the owner condition guard only the store (a group's lanes share their
/// rows).
///
/// Where the rows' starts are not 16-byte aligned (odd row lengths, an
/// offset base) or the tile's columns end inside it, the stores are
/// realigned: each lane also takes the segment before its own on the row (a
/// shuffle from the lane that holds it, or for the row's first lane of a
/// chunk group, from the last lane's previous group, carried in a
/// register), and stores the aligned 16 bytes that end inside its own
/// segment (store_16_realigned; element by element only at the row's two
/// ends).
bool Emitter::emitExchangeStore(const Access &a) {
  const TensorRef &ref = *a.ref;
  const Tile &t = a.t;
  int64_t rank = t.rank(), L = rank - 1, eb = elementBytes(ref.elem);
  if (rank == 0 || eb <= 0 || !a.gathers.empty())
    return false;
  const Dim &d = t.dims[L];
  if (d.ctxDim < 0)
    return false;
  Context *ctx = t.ctx;
  int64_t V = ctx->vec[d.ctxDim], T = ctx->tpd[d.ctxDim];
  if (V * eb != 4 && V * eb != 8)
    return false;
  int64_t G = 16 / (V * eb);
  if (ctx->tstride[d.ctxDim] != 1 || T % G != 0 || T > 32 || (T & (T - 1)) != 0 ||
      (d.regExtent / V) % G != 0)
    return false;
  // The tile's last dim must be the contiguous one, its columns checked by
  // no mask.
  for (int32_t p : a.checked)
    if (p >= 0 && p < (int32_t)a.subs.size() && a.subs[p].kind == Subscript::Kind::Span)
      return false; // (conservative: a checked span may be the last dim)
  bool contiguous = false;
  bool aligned = vectorWidth(ref, a.subs, t, a.checked, G * V, &contiguous) == G * V &&
                 d.extent.empty();
  if (!contiguous)
    return false;
  // Aligned rows: only where a warp's direct store spans less than a
  // 128-byte line of a row (the accumulator layout: 16 or 32 bytes); lanes
  // along whole lines already store coalesced.
  if (aligned && T * V * eb >= 128)
    return false;

  std::string T_ = cType(ref.elem), r = fresh("xr"), seg = fresh("xs");
  std::string tv = ctx->t(d.ctxDim);
  line(llvm::formatv("const int {0} = {1} % {2}; // this lane's place in its group of {2}", r, tv,
                     G));
  std::string carry, pred;
  if (!aligned) {
    // The lane holding the segment before this lane's on the row: in the
    // previous group, or for the first group, the last group's previous
    // lane, whose segment before the first group's is its previous chunk
    // group's (the last lane's, carried).
    carry = fresh("xc");
    pred = fresh("xp");
    line(llvm::formatv("uint4 {0} = make_uint4(0u, 0u, 0u, 0u); // the last lane's previous "
                       "segment",
                       carry));
    line(llvm::formatv("const int {0} = {1} >= {2} ? {1} - {2} : {3} > 0 ? {4} + {3} : {5};", pred,
                       tv, G, r, T - G - 1, T - 1));
  }
  forEach(t, [&](ArrayRef<std::string> k) {
    // k[L]: the first element of chunk a * G.
    SmallVector<std::string> pieces;
    for (int64_t j = 0; j < G; ++j) {
      SmallVector<std::string> elems;
      for (int64_t e = 0; e < V; ++e)
        elems.push_back(storedElement(a, k, j * V + e));
      pieces.push_back(llvm::formatv("Vec<{0}, {1}>{{{{{2}}}", T_, V, llvm::join(elems, ", ")));
    }
    SmallVector<std::string> bounds;
    std::string offset = elementOffset(a, k, bounds);
    SmallVector<std::string> conds;
    for (int64_t i = 0; i < L; ++i)
      if (!t.dims[i].extent.empty())
        conds.push_back(inExtent(t, i, k[i]));
    conds.append(bounds.begin(), bounds.end());
    if (!a.own.empty())
      conds.push_back(a.own);
    line("{");
    ++indent;
    line(llvm::formatv("const Vec<{0}, {1}> {2}p[{3}] = {{{4}};", T_, V, seg, G,
                       llvm::join(pieces, ", ")));
    line(llvm::formatv("const uint4 {0} = exchange_segments<{1}>({0}p, {2});", seg, G, r));
    std::string at = llvm::formatv("&{0}[{1} + {2} * {3}]", ref.ptr, offset, r, V * (T - 1));
    std::string store;
    if (aligned) {
      store = llvm::formatv("store_16{0}({1}, {2});", streaming ? "<true>" : "", at, seg);
    } else {
      std::string prev = seg + "b";
      line(llvm::formatv("const uint4 {0} = shfl_16({1} == {2} ? {3} : {4}, {5}, {6});", prev, tv,
                         T - 1, carry, seg, pred, T));
      line(llvm::formatv("{0} = {1};", carry, seg));
      std::string col = llvm::formatv("({0} + {1} * {2}) * {3}", coord(t, L, k[L]), r,
                                      V * (T - 1), eb);
      std::string valid = d.extent.empty()
                              ? std::to_string(d.padded * eb)
                              : llvm::formatv("(int)({0}) * {1}", d.extent, eb).str();
      store = llvm::formatv("store_16_realigned{0}({1}, {2}, {3}, {4}, {5});",
                            streaming ? "<true>" : "", at, prev, seg, col, valid);
    }
    line(conds.empty() ? store
                       : llvm::formatv("if ({0}) {1}", llvm::join(conds, " && "), store).str());
    --indent;
    line("}");
  }, G * V);
  return true;
}

/// The gather operands of access `a`, read where their group's dims are
/// (`groupRanks`: the rank of each member's group).
void Emitter::readGathers(Access &a) {
  const Tile &t = a.t;
  ArrayRef<Subscript> subs = a.subs;
  DenseMap<Value, Tile> &gathers = a.gathers;
  DenseMap<Value, int64_t> &groupRanks = a.groupRanks;
  int64_t rd = 0;
  for (size_t p = 0; p < subs.size(); ++p) {
    const Subscript &s = subs[p];
    if (s.kind == Subscript::Kind::Gather) {
      size_t q = p;
      int64_t groupRank = 0;
      for (; q < subs.size() && subs[q].kind == Subscript::Kind::Gather; ++q)
        groupRank = std::max<int64_t>(
            groupRank, cast<TileType>(subs[q].value.getType()).getRank());
      for (size_t m = p; m < q; ++m) {
        Value g = subs[m].value;
        int64_t r = cast<TileType>(g.getType()).getRank();
        gathers[g] = readableAt(tiles[g], t, rd + groupRank - r);
        groupRanks[g] = groupRank;
      }
      rd += groupRank;
      p = q - 1;
    } else if (s.kind != Subscript::Kind::Scalar) {
      ++rd;
    }
  }
}

/// The offset in the tensor of element `k` of access `a`, with the
/// conditions of its checked subscripts appended to `bounds`.
std::string Emitter::elementOffset(const Access &a, ArrayRef<std::string> k,
                                   SmallVector<std::string> &bounds) {
  const TensorRef &ref = *a.ref;
  const Tile &t = a.t;
  ArrayRef<Subscript> subs = a.subs;
  const llvm::SmallDenseSet<int32_t> &checked = a.checked;
  bool narrow = a.narrow;
  std::string offset = "0";
  int64_t rd = 0, tdim = 0;
  auto checkIndex = [&](size_t pos, const std::string &idx) {
    if (checked.contains(pos))
      bounds.push_back(llvm::formatv("(unsigned long long)({0}) < (unsigned long long){1}",
                                     idx, ref.size(tdim)));
  };
  auto addIndex = [&](const std::string &idx) {
    int64_t d = tdim++;
    int64_t stride = ref.strides[d];
    if (idx == "0")
      return;
    std::string term =
        narrow ? llvm::formatv("(int)({0})", idx).str() : llvm::formatv("(i64)({0})", idx).str();
    if (ref.isDynamicStride(d))
      term += narrow ? " * (int)" + ref.stride(d) : " * " + ref.stride(d);
    else if (stride != 1)
      term += narrow ? llvm::formatv(" * {0}", stride).str()
                     : llvm::formatv(" * {0}LL", stride).str();
    offset = offset == "0" ? term : offset + " + " + term;
  };
  for (auto [pos, s] : llvm::enumerate(subs)) {
    switch (s.kind) {
    case Subscript::Kind::NewAxis:
      ++rd;
      break;
    case Subscript::Kind::All:
      addIndex(coord(t, rd, k[rd]));
      ++rd;
      break;
    case Subscript::Kind::Span: {
      std::string c = coord(t, rd, k[rd]);
      std::string idx = c == "0" ? spans[s.value].begin : spans[s.value].begin + " + " + c;
      checkIndex(pos, idx);
      addIndex(idx);
      ++rd;
      break;
    }
    case Subscript::Kind::Scalar: {
      std::optional<int64_t> c = getConstantIntValue(s.value);
      std::string size = ref.size(tdim);
      std::string idx =
          c && (*c >= 0 || !ref.isDynamic(tdim))
              ? std::to_string(*c < 0 ? *c + ref.sizes[tdim] : *c)
              : llvm::formatv("({0} < 0 ? {0} + {1} : {0})", scalar(s.value), size).str();
      checkIndex(pos, idx);
      addIndex(idx);
      break;
    }
    case Subscript::Kind::Gather: {
      const Tile &g = a.gathers.find(s.value)->second;
      int64_t groupRank = a.groupRanks.lookup(s.value);
      // Negative indices count from the end, as in reference mode.
      std::string v = "cvt<i64>(" + at(g, k, rd + groupRank - g.rank()) + ")";
      std::string idx = llvm::formatv("({0} < 0 ? {0} + {1} : {0})", v, ref.size(tdim));
      checkIndex(pos, idx);
      addIndex(idx);
      // The group's dims follow its last member.
      if (&s + 1 == subs.end() || (&s + 1)->kind != Subscript::Kind::Gather)
        rd += groupRank;
      break;
    }
    }
  }
  for (; tdim < (int64_t)ref.sizes.size();) {
    addIndex(coord(t, rd, k[rd]));
    ++rd;
  }
  return offset;
}

/// The statement of access `a` at element `k` (a vector of `a.width`
/// elements there), at `offset`, masked by its tile's valid extents, its
/// mask and `bounds`.
void Emitter::emitAccessElement(const Access &a, ArrayRef<std::string> k,
                                const std::string &offset,
                                ArrayRef<std::string> bounds) {
  const TensorRef &ref = *a.ref;
  const Tile &t = a.t;
  const std::optional<Tile> &maskTile = a.maskTile, &valueTile = a.valueTile;
  int64_t width = a.width;
  bool isLoad = a.isLoad;
  const std::string &hint = a.hint, &own = a.own;
  Value value = a.value;
  std::optional<AtomicKind> atomic = a.atomic;
  SmallVector<std::string> conds;
  for (int64_t i = 0; i < t.rank(); ++i)
    if (!t.dims[i].extent.empty())
      conds.push_back(inExtent(t, i, k[i]));
  if (maskTile)
    conds.push_back("cvt<bool>(" + at(*maskTile, k, t.rank() - maskTile->rank()) + ")");
  conds.append(bounds.begin(), bounds.end());
  std::string cond = llvm::join(conds, " && ");
  std::string ptr = llvm::formatv("{0}[{1}]", ref.ptr, offset);
  if (copyTarget) {
    const CopyTarget &c = *copyTarget;
    std::string dst = c.buf + "[" +
                      (c.indexAt ? c.indexAt(t, k)
                                 : stagedIndex(c.ld, c.swizzleRows, coord(t, c.rowDim, k[c.rowDim]),
                                               coord(t, c.colDim, k[c.colDim]))) +
                      "]";
    // Lanes outside the tile or the tensor are zeros, and read nothing.
    if (width > 1)
      line(cond.empty()
               ? llvm::formatv("cp_async16(&{0}, &{1}, 16);", dst, ptr).str()
               : llvm::formatv("cp_async16(&{0}, ({1}) ? &{2} : {3}, ({1}) ? 16 : 0);", dst,
                               cond, ptr, ref.ptr)
                     .str());
    else
      line(llvm::formatv("{0} = {1};", dst,
                         cond.empty() ? ptr
                                      : llvm::formatv("({0}) ? {1} : cvt<{2}>(0)", cond, ptr,
                                                      cType(ref.elem))
                                            .str()));
    return;
  }
  if (width > 1) {
    // One vector: the mask is the same for all its elements.
    if (isLoad) {
      std::string dst = llvm::formatv("&{0}[{1}]", t.name, flat(t, k));
      std::string policy = !hint.empty() ? ", " + hint : streaming ? ", CacheStream" : "";
      std::string load = llvm::formatv("load_vec<{0}{1}>({2}, &{3});", width, policy, dst, ptr);
      line(cond.empty() ? load
                        : llvm::formatv("if ({0}) {1} else zero_vec<{2}>({3});", cond,
                                        load, width, dst)
                              .str());
      return;
    }
    if (!own.empty())
      cond = cond.empty() ? own : own + " && " + cond;
    SmallVector<std::string> elems;
    for (int64_t e = 0; e < width; ++e)
      elems.push_back(storedElement(a, k, e));
    std::string store =
        llvm::formatv("store_vec<{0}{4}>(&{1}, Vec<{2}, {0}>{{{{{3}}});", width, ptr,
                      cType(ref.elem), llvm::join(elems, ", "), streaming ? ", true" : "");
    line(cond.empty() ? store : llvm::formatv("if ({0}) {1}", cond, store).str());
    return;
  }
  if (isLoad) {
    if (!hint.empty())
      ptr = llvm::formatv("load_one<{0}>(&{1})", hint, ptr);
    if (cond.empty())
      line(llvm::formatv("{0}[{1}] = {2};", t.name, flat(t, k), ptr));
    else
      line(llvm::formatv("{0}[{1}] = ({2}) ? {3} : cvt<{4}>(0);", t.name, flat(t, k),
                         cond, ptr, cType(ref.elem)));
    return;
  }
  if (!own.empty())
    cond = cond.empty() ? own : own + " && " + cond;
  std::string v = valueTile
                       ? at(*valueTile, k, t.rank() - valueTile->rank())
                       : scalar(value);
  std::string stmt;
  Type target = ref.elem; // what an atomic adds into: the tensor, or its private copy
  if (atomic)
    if (auto it = privates.find(ref.ptr); it != privates.end()) {
      ptr = llvm::formatv("{0}[{1}]", it->second.buf, offset);
      target = it->second.acc;
    }
  if (!atomic)
    stmt = llvm::formatv("{0} = cvt<{1}>({2});", ptr, cType(ref.elem), v);
  else {
    StringRef fn = *atomic == AtomicKind::add   ? "atomic_add"
                   : *atomic == AtomicKind::max ? "atomic_max"
                                                : "atomic_min";
    stmt = llvm::formatv("{0}(&{1}, cvt<{2}>({3}));", fn, ptr, cType(target), v);
  }
  line(cond.empty() ? stmt : llvm::formatv("if ({0}) {1}", cond, stmt).str());
}

//===----------------------------------------------------------------------===//
// Private atomics
//===----------------------------------------------------------------------===//

/// The most shared memory the private copies of atomic targets may take.
constexpr int64_t kMaxPrivateBytes = 48 * 1024;

void Emitter::planPrivateAtomics() {
  if (!config.privatize_atomics)
    return;
  // Per tensor pointer: its span, and whether anything but an atomic add
  // of a privatizable type touches it.
  std::map<std::string, std::pair<int64_t, bool>> seen;
  std::map<std::string, Type> elems;
  auto spanOf = [](const TensorRef &r) -> int64_t {
    int64_t span = 1;
    for (auto [size, stride] : llvm::zip(r.sizes, r.strides)) {
      if (size <= 0 || stride < 0)
        return -1;
      span += (size - 1) * stride;
    }
    return span;
  };
  kernel.walk([&](Operation *op) {
    Value tensor;
    bool privatizable = false;
    if (auto a = dyn_cast<AtomicOp>(op)) {
      tensor = a.getTensor();
      Type e = tensors.count(tensor) ? tensors[tensor].elem : Type();
      privatizable = a.getKind() == AtomicKind::add && e &&
                     (e.isInteger(32) || e.isInteger(64) || isa<FloatType>(e));
    } else if (auto l = dyn_cast<LoadOp>(op)) {
      tensor = l.getTensor();
    } else if (auto st = dyn_cast<StoreOp>(op)) {
      tensor = st.getTensor();
    }
    if (!tensor || !tensors.count(tensor))
      return;
    const TensorRef &ref = tensors[tensor];
    auto &[span, bad] = seen[ref.ptr];
    int64_t s = spanOf(ref);
    bad |= !privatizable || s < 0;
    span = std::max(span, s);
    elems[ref.ptr] = ref.elem;
  });
  int64_t total = 0;
  for (auto &[ptr, info] : seen) {
    auto [span, bad] = info;
    // 16- and 8-bit floats add up in f32, rounded once when added to the
    // tensor.
    Type acc = elems[ptr];
    if (isNarrowFloat(acc))
      acc = Float32Type::get(acc.getContext());
    int64_t bytes = span * elementBytes(acc);
    if (bad || total + bytes > kMaxPrivateBytes)
      continue;
    total += bytes;
    sharedBase = llvm::alignTo(sharedBase, 16);
    PrivateTarget p;
    p.buf = fresh("kite_private");
    p.elem = elems[ptr];
    p.acc = acc;
    p.span = span;
    std::string type = cType(p.acc);
    line(llvm::formatv("{0}* {1} = reinterpret_cast<{0}*>(kite_smem + {2}); // atomic adds "
                       "into {3}, gathered here",
                       type, p.buf, sharedBase, ptr));
    sharedBase += llvm::alignTo(bytes, 16);
    sharedBytes = std::max(sharedBytes, sharedBase);
    privates[ptr] = p;
  }
}

void Emitter::openPrivateAtomics() {
  for (auto &[ptr, p] : privates)
    line(llvm::formatv("for (int i = threadIdx.x; i < {0}; i += {1}) {2}[i] = cvt<{3}>(0);",
                       p.span, numThreads, p.buf, cType(p.acc)));
  if (!privates.empty())
    line(sync());
}

void Emitter::flushPrivateAtomics() {
  if (privates.empty())
    return;
  line(sync());
  for (auto &[ptr, p] : privates)
    line(llvm::formatv("for (int i = threadIdx.x; i < {0}; i += {1}) if ({2}[i] != cvt<{3}>(0)) "
                       "atomic_add(&{4}[i], cvt<{5}>({2}[i]));",
                       p.span, numThreads, p.buf, cType(p.acc), ptr, cType(p.elem)));
}
