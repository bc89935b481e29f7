//===- CheckBounds.cpp - every access inside its tensor -------------------===//
//
// This file implements `kite-check-bounds` (see Passes.td). Masks come from
// a tile's loop (lanes past the loop's end are off), not from the tensor a
// subscript indexes, so `y[tk, tn]` with `tk` running over x's 128 columns
// and a y of 64 rows would read past y's end. For every subscript of every
// load, store and atomic the pass proves, from the bounds of the loops and
// scalars involved (IndexRanges), that it stays inside the indexed
// dimension; where it cannot:
//
//   - an access that leaves the dimension whenever its loop runs (the
//     bounds are known and too big) is the user's error, reported at the
//     access with the kernel, tensor, dimension and sizes, as reference
//     mode reports it;
//   - an access that may or may not (its bounds depend on a run-time
//     scalar, its indices on data: gathers) gets `kite.checked`, the
//     subscript positions that CUDA emission masks against the dimension's
//     size at run time. Its out-of-range lanes read 0 and are not written.
//
//===----------------------------------------------------------------------===//

#include "lowering/Diagnostics.h"
#include "lowering/DynamicShapes.h"
#include "lowering/IndexRange.h"
#include "lowering/LaunchArg.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace kite {
#define GEN_PASS_DEF_KITECHECKBOUNDS
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

namespace {

/// "'y' (f32[64,192])", or "an output (f32[64,192])".
std::string describeTensor(Value tensor) {
  std::string type;
  if (auto t = dyn_cast<kite::TensorType>(tensor.getType()); t && t.hasRank()) {
    type = dtypeName(t.getElementType()) + "[";
    for (auto [i, d] : llvm::enumerate(t.getShape()))
      type += (i ? "," : "") + (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
    type += "]";
  }
  Value root = tensor;
  bool view = false;
  while (auto r = root.getDefiningOp<TensorReshapeOp>()) {
    root = r.getSource();
    view = true;
  }
  std::string name;
  if (auto arg = dyn_cast<BlockArgument>(root)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (func)
      if (auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kArgNameAttrName))
        name = "'" + n.str() + "'";
  }
  if (name.empty())
    name = "an output";
  if (view)
    name = "a view of " + name;
  return name + " (" + type + ")";
}

std::string interval(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
}

/// A side of a launch check, as kite.launch_checks holds it: {0, value}
/// (a constant), {1, arg, dim} (a size), {2, arg} (an integer scalar).
std::optional<std::array<int64_t, 3>> checkOperand(std::optional<SizeOrigin> o) {
  auto arg = o ? dyn_cast<BlockArgument>(o->first) : BlockArgument();
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return std::nullopt;
  if (o->second >= 0)
    return std::array<int64_t, 3>{1, arg.getArgNumber(), o->second};
  return std::array<int64_t, 3>{2, arg.getArgNumber(), 0};
}
std::optional<std::array<int64_t, 3>> checkOperand(Value v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return std::array<int64_t, 3>{0, *c, 0};
  return checkOperand(sizeOriginOf(v));
}

/// Records on `func` that a launch must check the end of `span`'s loop is
/// at most the size of `tensor`'s dim `d` (kite.launch_checks: 6 integers
/// per check, the two sides; kite.launch_check_messages: where and what).
bool addLaunchCheck(func::FuncOp func, Operation *op, Value span, Value tensor, int64_t d,
                    IndexRanges &ranges) {
  auto [loop, loopDim] = getSpanLoop(span);
  if (!loop)
    return false;
  // The loop starts at 0 or later (a constant, or a split piece's start).
  bool nonNegativeStart = ranges.of(loop.getLowerBounds()[loopDim]).lo >= 0;
  std::optional<SizeOrigin> dim = sizeOrigin(tensor, d);
  // The loop's end, or a size it is at most (a tile's end in a loop over it).
  Value bound = loop.getUpperBounds()[loopDim];
  std::optional<std::array<int64_t, 3>> end = checkOperand(bound);
  if (!end)
    if (std::optional<SizeOrigin> o = boundingSize(bound); o && o->second >= 0)
      end = checkOperand(o);
  auto dimArg = dim ? dyn_cast<BlockArgument>(dim->first) : BlockArgument();
  if (!nonNegativeStart || !end || !dimArg || dim->second < 0)
    return false;
  SmallVector<int64_t> checks;
  if (auto a = func->getAttrOfType<DenseI64ArrayAttr>("kite.launch_checks"))
    checks.assign(a.asArrayRef().begin(), a.asArrayRef().end());
  SmallVector<Attribute> messages;
  if (auto m = func->getAttrOfType<ArrayAttr>("kite.launch_check_messages"))
    messages.assign(m.begin(), m.end());
  std::array<int64_t, 6> check = {(*end)[0], (*end)[1], (*end)[2], 1, dimArg.getArgNumber(),
                                  dim->second};
  for (size_t i = 0; i + 6 <= checks.size(); i += 6)
    if (llvm::equal(ArrayRef(checks).slice(i, 6), check))
      return true; // the same check, from another access
  checks.append(check.begin(), check.end());
  std::string what = formatLocation(op->getLoc()) + ": a loop's tiles index dimension " +
                     std::to_string(d) + " of " + describeTensor(tensor) + " up to its end";
  messages.push_back(StringAttr::get(func.getContext(), what));
  Builder b(func.getContext());
  func->setAttr("kite.launch_checks", b.getDenseI64ArrayAttr(checks));
  func->setAttr("kite.launch_check_messages", b.getArrayAttr(messages));
  return true;
}

struct CheckBoundsPass : kite::impl::KiteCheckBoundsBase<CheckBoundsPass> {
  void runOnOperation() override {
    bool failedAny = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(kKernelAttrName))
        continue;
      IndexRanges ranges;
      func->removeAttr("kite.launch_checks");
      func->removeAttr("kite.launch_check_messages");
      func.walk([&](Operation *op) {
        if (auto l = dyn_cast<LoadOp>(op))
          failedAny |= failed(check(func, op, l.getTensor(), l.getSubscripts(), l.getMask(), ranges));
        else if (auto s = dyn_cast<StoreOp>(op))
          failedAny |= failed(check(func, op, s.getTensor(), s.getSubscripts(), s.getMask(), ranges));
        else if (auto a = dyn_cast<AtomicOp>(op))
          failedAny |= failed(check(func, op, a.getTensor(), a.getSubscripts(), a.getMask(), ranges));
      });
    }
    if (failedAny)
      signalPassFailure();
  }

  LogicalResult check(func::FuncOp func, Operation *op, Value tensor,
                      ArrayRef<Subscript> subs, Value mask, IndexRanges &ranges) {
    auto type = dyn_cast<kite::TensorType>(tensor.getType());
    if (!type || !type.hasRank())
      return op->emitError() << "the indexed tensor's rank is not known at specialization";
    ArrayRef<int64_t> sizes = type.getShape();
    // A masked access (load/store with a mask) may reach outside the tensor
    // on lanes its mask turns off, as in reference mode: check, never fail.
    bool lenient = static_cast<bool>(mask);
    auto fail = [&](const std::string &what, int64_t d) {
      return op->emitError() << what << " for dimension " << d << " of size " << sizes[d]
                             << " of " << describeTensor(tensor) << " in kernel '"
                             << func.getSymName() << "'";
    };
    SmallVector<int32_t> checked;
    int64_t d = 0;
    for (auto [pos, s] : llvm::enumerate(subs)) {
      if (s.kind == Subscript::Kind::NewAxis)
        continue;
      if (d >= (int64_t)sizes.size())
        break; // the verifier reports too many subscripts
      int64_t size = sizes[d];
      if (ShapedType::isDynamic(size)) {
        // A size taken at launch: in bounds if the span's loop runs to the
        // same size from a non-negative start; where it runs to another
        // end, a launch checks that the end is within the size (static
        // shapes report that at compile time); else masked.
        if (s.kind == Subscript::Kind::Span && spanStartToSize(s.value, tensor, d).value_or(-1) >= 0) {
        } else if (s.kind == Subscript::Kind::Span && !lenient &&
                   addLaunchCheck(func, op, s.value, tensor, d, ranges)) {
        } else {
          checked.push_back(pos);
        }
      } else if (s.kind == Subscript::Kind::Span) {
        std::optional<LoopExtent> e = ranges.extentOf(s.value);
        if (!e) {
          checked.push_back(pos);
        } else if (e->lower.lo >= 0 && e->upper.hi <= size) {
          // In bounds whenever the loop runs.
        } else if (!lenient && e->lower.hi < e->upper.lo &&
                   (e->upper.lo > size || e->lower.hi < 0)) {
          // Never empty, and always past an end.
          std::string range =
              e->lower.isConstant() && e->upper.isConstant()
                  ? "the tiles of " + interval(e->lower.lo, e->upper.lo)
                  : "a loop whose tiles reach " +
                        (e->upper.lo > size ? "at least " + std::to_string(e->upper.lo)
                                            : "below 0");
          return fail(range + " are out of range", d);
        } else {
          checked.push_back(pos);
        }
      } else if (s.kind == Subscript::Kind::Scalar) {
        // Negative indices count from the end, as in PyTorch.
        IndexRange r = ranges.of(s.value);
        if (r.lo >= -size && r.hi < size) {
          // In bounds.
        } else if (!lenient && (r.lo >= size || r.hi < -size)) {
          std::string what = r.isConstant() ? "index " + std::to_string(r.lo)
                                            : "an index in [" + std::to_string(r.lo) + ", " +
                                                  std::to_string(r.hi) + "]";
          return fail(what + " is out of range", d);
        } else {
          checked.push_back(pos);
        }
      } else if (s.kind == Subscript::Kind::Gather) {
        checked.push_back(pos); // the indices are data
      }
      ++d;
    }
    if (checked.empty())
      op->removeAttr(kCheckedAttrName);
    else
      op->setAttr(kCheckedAttrName, DenseI32ArrayAttr::get(op->getContext(), checked));
    return success();
  }
};

} // namespace
