//===- AssignLayouts.cpp - the kite-assign-layouts pass -------------------===//
//
// This file implements layout assignment: every tile value gets a
// `#kite.blocked` layout in its type, each store and atomic the layout it
// iterates in (`kite.layout`), and a `kite.convert_layout` goes wherever a
// value's layout is not one its user can read. CUDA emission reads these and
// decides none.
//
// The rules (the ones emission has always followed):
// - Each top-level loop has a main context, the thread arrangement of its
//   largest tile (`contextFor`: threads from the innermost dim out, each
//   holding runs of 16 bytes of the kernel's narrowest element along the
//   innermost dim, at most `inner_threads` there). A fresh tile (a load, a
//   constant, an index range, a product without an accumulator, a reshape,
//   an `if`'s result) lies in it if its padded shape fits (right-aligned,
//   each dim equal or 1), else in the context of its own shape.
// - An elementwise result takes the layout of its largest operand of the
//   same shape; a reduction's result is its operand's layout without the
//   reduced dim; shape ops move dims; a product's result is its
//   accumulator's; a loop-carried value keeps its initializer's.
// - An operand is readable by its user if it is replicated everywhere (all
//   dims unit) or lies in the user's context with each of its non-unit dims
//   along the same context dim as the user's dim there (broadcasting
//   aligned from the right); otherwise it is converted to that.
//
//===----------------------------------------------------------------------===//

#include "lowering/Config.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

namespace kite {
#define GEN_PASS_DEF_KITEASSIGNLAYOUTS
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

namespace {

int64_t pow2(int64_t n) { return n <= 1 ? 1 : (int64_t)llvm::PowerOf2Ceil(n); }

SmallVector<int64_t> paddedShape(Type t) {
  SmallVector<int64_t> padded;
  for (int64_t d : cast<TileType>(t).getShape())
    padded.push_back(pow2(d));
  return padded;
}

/// Bytes of one element of a tensor (0 if unknown).
int64_t elemBytes(Type t) {
  if (t.isInteger(1))
    return 1;
  return t.isIntOrFloat() ? t.getIntOrFloatBitWidth() / 8 : 0;
}

class Assigner {
public:
  Assigner(func::FuncOp kernel, const Config &config) : kernel(kernel) {
    numThreads = (int64_t)llvm::bit_floor((uint64_t)(32 * config.num_warps));
    innerThreads = config.inner_threads.value_or(0);
    int64_t narrowest = 0;
    kernel.walk([&](Operation *op) {
      auto visit = [&](Type t) {
        if (auto tt = dyn_cast<kite::TensorType>(t))
          if (int64_t b = elemBytes(tt.getElementType()))
            narrowest = narrowest ? std::min(narrowest, b) : b;
      };
      for (Type t : op->getResultTypes())
        visit(t);
      for (Region &r : op->getRegions())
        for (Block &b : r)
          for (BlockArgument a : b.getArguments())
            visit(a.getType());
    });
    if (narrowest)
      vecElems = std::clamp<int64_t>(16 / narrowest, 1, 8);
  }

  LogicalResult run();

private:
  func::FuncOp kernel;
  int64_t numThreads = 128, vecElems = 4, innerThreads = 0;
  BlockedLayoutAttr main; // the current top-level loop's context

  // Layouts -----------------------------------------------------------------

  BlockedLayoutAttr contextFor(ArrayRef<int64_t> shape);
  std::optional<BlockedLayoutAttr> fit(ArrayRef<int64_t> padded, BlockedLayoutAttr ctx);
  BlockedLayoutAttr layoutFor(ArrayRef<int64_t> padded);
  static BlockedLayoutAttr layoutOf(Value v) {
    return cast<BlockedLayoutAttr>(cast<TileType>(v.getType()).getLayout());
  }
  static int64_t registers(BlockedLayoutAttr l);
  static bool compatible(BlockedLayoutAttr o, BlockedLayoutAttr r, int64_t offset);
  /// `v` readable at the elements of a `r` tile (dims aligned at `offset`),
  /// through a conversion inserted before `user` if needed.
  Value readableAt(Value v, BlockedLayoutAttr r, int64_t offset, Operation *user);
  /// Operand `i` of `user` made readable (replaced by its conversion).
  void makeReadable(Operation *user, unsigned i, BlockedLayoutAttr r, int64_t offset);
  static void setLayout(Value v, BlockedLayoutAttr l) {
    v.setType(cast<TileType>(v.getType()).withLayout(l));
  }

  // Ops ---------------------------------------------------------------------

  LogicalResult assignBlock(Block &block);
  LogicalResult assignOp(Operation *op);
  LogicalResult assignLoop(ValueRange inits, Block::BlockArgListType iterArgs,
                           ResultRange results, Block &body);
  LogicalResult assignIf(scf::IfOp op);
  void assignElementwise(Operation *op);
  void assignReduce(ReduceOp op);
  LogicalResult assignShape(Operation *op);
  LogicalResult assignAccess(Operation *op, Value tensor, ArrayRef<Subscript> subs,
                             Value mask, Value value, Value result);
  std::optional<SmallVector<int64_t>> accessShape(Value tensor, ArrayRef<Subscript> subs);
};

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

/// The context of a tile of (padded) `shape`: threads from the innermost
/// dim out, `vecElems` contiguous elements per run along the innermost.
BlockedLayoutAttr Assigner::contextFor(ArrayRef<int64_t> shape) {
  int64_t r = shape.size();
  SmallVector<int64_t> vec(r, 1), threads(r, 1), dims;
  int64_t remaining = numThreads;
  for (int64_t d = r - 1; d >= 0; --d) {
    int64_t v = d == r - 1 ? std::min<int64_t>(shape[d], vecElems) : 1;
    vec[d] = v;
    int64_t limit = remaining;
    if (d == r - 1 && innerThreads > 0)
      limit = std::min(limit, innerThreads);
    threads[d] = std::max<int64_t>(1, std::min(shape[d] / v, limit));
    remaining /= threads[d];
  }
  for (int64_t d = 0; d < r; ++d)
    dims.push_back(shape[d] == 1 ? -1 : d);
  return BlockedLayoutAttr::get(kernel.getContext(), shape, vec, threads, dims);
}

/// `ctx` with the dims of a tile of `padded` shape (right-aligned), if it
/// fits.
std::optional<BlockedLayoutAttr> Assigner::fit(ArrayRef<int64_t> padded,
                                               BlockedLayoutAttr ctx) {
  int64_t off = (int64_t)ctx.getShape().size() - (int64_t)padded.size();
  if (off < 0)
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (size_t i = 0; i < padded.size(); ++i) {
    if (padded[i] == 1)
      dims.push_back(-1);
    else if (padded[i] == ctx.getShape()[off + i])
      dims.push_back(off + i);
    else
      return std::nullopt;
  }
  return ctx.withDims(dims);
}

BlockedLayoutAttr Assigner::layoutFor(ArrayRef<int64_t> padded) {
  if (main)
    if (std::optional<BlockedLayoutAttr> l = fit(padded, main))
      return *l;
  return contextFor(padded);
}

int64_t Assigner::registers(BlockedLayoutAttr l) {
  int64_t n = 1;
  for (int64_t c : l.getDims())
    if (c >= 0)
      n *= l.getShape()[c] / l.getThreads()[c];
  return n;
}

bool Assigner::compatible(BlockedLayoutAttr o, BlockedLayoutAttr r, int64_t offset) {
  if (llvm::all_of(o.getDims(), [](int64_t c) { return c < 0; }))
    return true; // replicated on every thread
  if (o.getShape() != r.getShape() || o.getVec() != r.getVec() ||
      o.getThreads() != r.getThreads())
    return false;
  for (auto [j, c] : llvm::enumerate(o.getDims())) {
    if (c < 0)
      continue;
    int64_t i = (int64_t)j + offset;
    if (i < 0 || i >= (int64_t)r.getDims().size() || r.getDims()[i] != c)
      return false;
  }
  return true;
}

Value Assigner::readableAt(Value v, BlockedLayoutAttr r, int64_t offset, Operation *user) {
  BlockedLayoutAttr o = layoutOf(v);
  if (compatible(o, r, offset))
    return v;
  SmallVector<int64_t> dims;
  for (auto [j, c] : llvm::enumerate(o.getDims())) {
    int64_t i = (int64_t)j + offset;
    dims.push_back(o.tileShape()[j] == 1 ? -1 : r.getDims()[i]);
  }
  OpBuilder b(user);
  auto type = cast<TileType>(v.getType()).withLayout(r.withDims(dims));
  return b.create<ConvertLayoutOp>(user->getLoc(), type, v);
}

void Assigner::makeReadable(Operation *user, unsigned i, BlockedLayoutAttr r, int64_t offset) {
  Value v = user->getOperand(i);
  if (isa<TileType>(v.getType()))
    user->setOperand(i, readableAt(v, r, offset, user));
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

/// The padded shape of the largest tile in `loop`.
SmallVector<int64_t> largestTileShape(Operation *loop) {
  SmallVector<int64_t> biggest;
  int64_t biggestCount = 0;
  loop->walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (isa<TileType>(t)) {
        SmallVector<int64_t> padded = paddedShape(t);
        int64_t n = 1;
        for (int64_t d : padded)
          n *= d;
        if (n > biggestCount) {
          biggestCount = n;
          biggest = padded;
        }
      }
  });
  if (biggest.empty())
    biggest.push_back(1);
  return biggest;
}

LogicalResult Assigner::run() {
  // Emission's order: the prologue (outside any loop), then the loops.
  Block &entry = kernel.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(entry))
    if (!isa<TileForOp, GridForOp>(op) && failed(assignOp(&op)))
      return failure();
  for (Operation &op : entry) {
    if (!isa<TileForOp, GridForOp>(op))
      continue;
    main = contextFor(largestTileShape(&op));
    op.setAttr(kLayoutAttrName, main);
    if (failed(assignBlock(op.getRegion(0).front())))
      return failure();
  }
  return success();
}

LogicalResult Assigner::assignBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block))
    if (failed(assignOp(&op)))
      return failure();
  return success();
}

/// A loop's carried values (its region's iter_args and its results) keep
/// their initializers' layouts; the body's yields are made readable in them.
LogicalResult Assigner::assignLoop(ValueRange inits, Block::BlockArgListType iterArgs,
                                   ResultRange results, Block &body) {
  for (auto [init, arg, res] : llvm::zip(inits, iterArgs, results)) {
    if (!isa<TileType>(init.getType()))
      continue;
    setLayout(arg, layoutOf(init));
    setLayout(res, layoutOf(init));
  }
  if (failed(assignBlock(body)))
    return failure();
  Operation *yield = body.getTerminator();
  for (auto [i, arg] : llvm::enumerate(iterArgs))
    if (isa<TileType>(arg.getType()))
      makeReadable(yield, i, layoutOf(arg), 0);
  return success();
}

LogicalResult Assigner::assignIf(scf::IfOp op) {
  for (Value res : op.getResults())
    if (isa<TileType>(res.getType()))
      setLayout(res, layoutFor(paddedShape(res.getType())));
  for (Region *region : {&op.getThenRegion(), &op.getElseRegion()}) {
    if (region->empty())
      continue;
    if (failed(assignBlock(region->front())))
      return failure();
    Operation *yield = region->front().getTerminator();
    for (auto [i, res] : llvm::enumerate(op.getResults()))
      if (isa<TileType>(res.getType()))
        makeReadable(yield, i, layoutOf(res), 0);
  }
  return success();
}

void Assigner::assignElementwise(Operation *op) {
  Value result = op->getResult(0);
  SmallVector<int64_t> padded = paddedShape(result.getType());
  // Like the largest operand of the same shape, if any.
  std::optional<BlockedLayoutAttr> base;
  for (Value v : op->getOperands()) {
    if (!isa<TileType>(v.getType()) || paddedShape(v.getType()) != padded)
      continue;
    if (!base || registers(layoutOf(v)) > registers(*base))
      base = layoutOf(v);
  }
  BlockedLayoutAttr r = base ? *base : layoutFor(padded);
  setLayout(result, r);
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (auto t = dyn_cast<TileType>(op->getOperand(i).getType()))
      makeReadable(op, i, r, (int64_t)padded.size() - t.getRank());
}

void Assigner::assignReduce(ReduceOp op) {
  BlockedLayoutAttr src = layoutOf(op.getOperand());
  int64_t rank = src.getDims().size();
  int64_t dim = op.getDim() < 0 ? op.getDim() + rank : op.getDim();
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != dim)
      dims.push_back(src.getDims()[i]);
    else if (op.getKeepdim())
      dims.push_back(-1);
  }
  setLayout(op.getResult(), src.withDims(dims));
}

LogicalResult Assigner::assignShape(Operation *op) {
  Value in = op->getOperand(0);
  BlockedLayoutAttr src = layoutOf(in);
  SmallVector<int64_t> dims(src.getDims());
  int64_t rank = dims.size();
  auto norm = [&](int64_t d, int64_t r) { return d < 0 ? d + r : d; };
  if (auto u = dyn_cast<UnsqueezeOp>(op)) {
    dims.insert(dims.begin() + norm(u.getDim(), rank + 1), -1);
  } else if (auto s = dyn_cast<SqueezeOp>(op)) {
    int64_t d = norm(s.getDim(), rank);
    if (src.tileShape()[d] == 1)
      dims.erase(dims.begin() + d);
  } else if (auto t = dyn_cast<TransposeOp>(op)) {
    std::swap(dims[norm(t.getDim0(), rank)], dims[norm(t.getDim1(), rank)]);
  } else if (auto p = dyn_cast<PermuteOp>(op)) {
    for (auto [i, d] : llvm::enumerate(p.getDims()))
      dims[i] = src.getDims()[norm(d, rank)];
  } else {
    // A reshape goes through shared memory into a fresh layout.
    setLayout(op->getResult(0), layoutFor(paddedShape(op->getResult(0).getType())));
    return success();
  }
  if (dims.size() != paddedShape(op->getResult(0).getType()).size())
    return op->emitError() << "internal error: cannot lay out the result of this shape op";
  setLayout(op->getResult(0), src.withDims(dims));
  return success();
}

/// The block size of tile loop variable `span`, or nullopt.
std::optional<int64_t> spanBlockSize(Value span) {
  auto [loop, dim] = getSpanLoop(span);
  if (!loop)
    return std::nullopt;
  return getConstantIntValue(loop.getBlockSizes()[dim]);
}

/// The shape the subscripts of an access of `tensor` select (emission's
/// iteration shape), or nullopt if a span's block size is unknown.
std::optional<SmallVector<int64_t>> Assigner::accessShape(Value tensor,
                                                          ArrayRef<Subscript> subs) {
  auto t = cast<kite::TensorType>(tensor.getType());
  SmallVector<int64_t> shape;
  size_t td = 0;
  for (size_t p = 0; p < subs.size(); ++p) {
    const Subscript &s = subs[p];
    switch (s.kind) {
    case Subscript::Kind::NewAxis:
      shape.push_back(1);
      continue;
    case Subscript::Kind::All:
      shape.push_back(t.getShape()[td]);
      break;
    case Subscript::Kind::Span: {
      std::optional<int64_t> bs = spanBlockSize(s.value);
      if (!bs)
        return std::nullopt;
      shape.push_back(*bs);
      break;
    }
    case Subscript::Kind::Scalar:
      break;
    case Subscript::Kind::Gather: {
      // Adjacent gathers broadcast together into one group of dims.
      SmallVector<int64_t> group;
      size_t q = p;
      for (; q < subs.size() && subs[q].kind == Subscript::Kind::Gather; ++q) {
        auto g = cast<TileType>(subs[q].value.getType());
        if ((int64_t)group.size() < g.getRank())
          group.insert(group.begin(), g.getRank() - group.size(), 1);
        int64_t off = group.size() - g.getRank();
        for (int64_t i = 0; i < g.getRank(); ++i)
          if (g.getShape()[i] != 1)
            group[off + i] = g.getShape()[i];
        ++td;
      }
      shape.append(group);
      p = q - 1;
      continue;
    }
    }
    ++td;
  }
  for (; td < t.getShape().size(); ++td)
    shape.push_back(t.getShape()[td]);
  for (int64_t &d : shape)
    d = pow2(d);
  return shape;
}

LogicalResult Assigner::assignAccess(Operation *op, Value tensor, ArrayRef<Subscript> subs,
                                     Value mask, Value value, Value result) {
  BlockedLayoutAttr t;
  if (result) {
    t = layoutFor(paddedShape(result.getType()));
    setLayout(result, t);
  } else {
    std::optional<SmallVector<int64_t>> shape = accessShape(tensor, subs);
    if (!shape)
      return op->emitError() << "internal error: the access's shape is not static";
    if (isa<TileType>(value.getType()) && paddedShape(value.getType()) == *shape)
      t = layoutOf(value);
    else
      t = layoutFor(*shape);
    op->setAttr(kLayoutAttrName, t);
  }
  int64_t rank = t.getDims().size();
  // Gathers are read where their group's dims are.
  int64_t rd = 0;
  for (size_t p = 0; p < subs.size(); ++p) {
    if (subs[p].kind == Subscript::Kind::Gather) {
      size_t q = p;
      int64_t groupRank = 0;
      for (; q < subs.size() && subs[q].kind == Subscript::Kind::Gather; ++q)
        groupRank = std::max(groupRank, cast<TileType>(subs[q].value.getType()).getRank());
      for (size_t m = p; m < q; ++m) {
        Value g = subs[m].value;
        int64_t r = cast<TileType>(g.getType()).getRank();
        Value readable = readableAt(g, t, rd + groupRank - r, op);
        op->replaceUsesOfWith(g, readable);
      }
      rd += groupRank;
      p = q - 1;
    } else if (subs[p].kind != Subscript::Kind::Scalar) {
      ++rd;
    }
  }
  if (mask && isa<TileType>(mask.getType()))
    op->replaceUsesOfWith(
        mask, readableAt(mask, t, rank - cast<TileType>(mask.getType()).getRank(), op));
  if (value && isa<TileType>(value.getType()))
    op->replaceUsesOfWith(
        value, readableAt(value, t, rank - cast<TileType>(value.getType()).getRank(), op));
  return success();
}

LogicalResult Assigner::assignOp(Operation *op) {
  auto product = [&](Value acc) {
    Value result = op->getResult(0);
    setLayout(result, acc ? layoutOf(acc) : layoutFor(paddedShape(result.getType())));
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](TileForOp l) {
        return assignLoop(l.getInitArgs(), l.getRegionIterArgs(), l.getResults(),
                          *l.getBodyBlock());
      })
      .Case([&](GridForOp l) {
        return assignLoop(l.getInitArgs(), l.getRegionIterArgs(), l.getResults(),
                          *l.getBodyBlock());
      })
      .Case([&](scf::ForOp l) {
        return assignLoop(l.getInitArgs(), l.getRegionIterArgs(), l.getResults(), *l.getBody());
      })
      .Case([&](scf::IfOp i) { return assignIf(i); })
      .Case([&](LoadOp l) {
        return assignAccess(l, l.getTensor(), l.getSubscripts(), l.getMask(), {}, l.getResult());
      })
      .Case([&](StoreOp s) {
        return assignAccess(s, s.getTensor(), s.getSubscripts(), s.getMask(), s.getValue(), {});
      })
      .Case([&](AtomicOp a) {
        return assignAccess(a, a.getTensor(), a.getSubscripts(), a.getMask(), a.getValue(), {});
      })
      .Case<UnaryOp, BinaryOp, CompareOp, WhereOp, CastOp, ExpandOp>([&](Operation *e) {
        assignElementwise(e);
        return success();
      })
      .Case([&](ReduceOp r) {
        assignReduce(r);
        return success();
      })
      .Case<UnsqueezeOp, SqueezeOp, TransposeOp, PermuteOp, ReshapeOp>(
          [&](Operation *s) { return assignShape(s); })
      .Case<DotOp, BmmOp, MatmulOp>([&](Operation *) {
        product({});
        return success();
      })
      .Case([&](AddmmOp m) {
        product(m.getAcc());
        return success();
      })
      .Case([&](BaddbmmOp m) {
        product(m.getAcc());
        return success();
      })
      .Case<FullOp, ArangeOp, SpanIndexOp>([&](Operation *o) {
        setLayout(o->getResult(0), layoutFor(paddedShape(o->getResult(0).getType())));
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        for (Type t : other->getResultTypes())
          if (isa<TileType>(t))
            return other->emitError() << "internal error: kite-assign-layouts has no "
                                         "layout rule for '"
                                      << other->getName() << "'";
        return success();
      });
}

struct KiteAssignLayoutsPass
    : public kite::impl::KiteAssignLayoutsBase<KiteAssignLayoutsPass> {
  void runOnOperation() override {
    FailureOr<ConfiguredKernel> found = configuredKernel(getOperation());
    if (failed(found))
      return signalPassFailure();
    if (!found->config) {
      found->kernel.emitError() << "kite-assign-layouts needs a configured kernel "
                                   "(run kite-apply-config first)";
      return signalPassFailure();
    }
    if (failed(Assigner(found->kernel, *found->config).run()))
      return signalPassFailure();
  }
};

} // namespace
