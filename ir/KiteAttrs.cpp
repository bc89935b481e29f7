//===- KiteAttrs.cpp - kite attributes ------------------------------------===//
//
// This file implements the layout attributes: `#kite.blocked` (its
// verifier, the queries emission reads, and its linear layout).
//
//===----------------------------------------------------------------------===//

#include "ir/KiteDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kite;

#define GET_ATTRDEF_CLASSES
#include "ir/KiteAttrs.cpp.inc"

void KiteDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/KiteAttrs.cpp.inc"
      >();
}

namespace {
bool isPow2(int64_t x) { return x >= 1 && (x & (x - 1)) == 0; }
} // namespace

LogicalResult BlockedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                        ArrayRef<int64_t> shape, ArrayRef<int64_t> vec,
                                        ArrayRef<int64_t> threads, ArrayRef<int64_t> dims) {
  if (vec.size() != shape.size() || threads.size() != shape.size())
    return emitError() << "#kite.blocked needs one vec and one threads entry per dim of "
                          "its shape (rank "
                       << shape.size() << ")";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!isPow2(shape[d]) || !isPow2(vec[d]) || !isPow2(threads[d]))
      return emitError() << "#kite.blocked dim " << d
                         << ": shape, vec and threads must be powers of two (got "
                         << shape[d] << ", " << vec[d] << ", " << threads[d] << ")";
    if (vec[d] * threads[d] > shape[d])
      return emitError() << "#kite.blocked dim " << d << ": " << threads[d]
                         << " threads with runs of " << vec[d] << " exceed its size "
                         << shape[d];
  }
  llvm::SmallVector<bool> seen(shape.size());
  for (int64_t c : dims) {
    if (c < -1 || c >= (int64_t)shape.size() || (c >= 0 && seen[c]))
      return emitError() << "#kite.blocked dims must be distinct context dims in [0, "
                         << shape.size() << ") or -1, got " << c;
    if (c >= 0)
      seen[c] = true;
  }
  return success();
}

int64_t BlockedLayoutAttr::usedThreads() const {
  int64_t n = 1;
  for (int64_t t : getThreads())
    n *= t;
  return n;
}

int64_t BlockedLayoutAttr::threadStride(int64_t d) const {
  int64_t stride = 1;
  for (int64_t i = (int64_t)getShape().size() - 1; i > d; --i)
    stride *= getThreads()[i];
  return stride;
}

SmallVector<int64_t> BlockedLayoutAttr::tileShape() const {
  SmallVector<int64_t> shape;
  for (int64_t c : getDims())
    shape.push_back(c < 0 ? 1 : getShape()[c]);
  return shape;
}

BlockedLayoutAttr BlockedLayoutAttr::withDims(ArrayRef<int64_t> dims) const {
  return get(getContext(), getShape(), getVec(), getThreads(), dims);
}

bool BlockedLayoutAttr::readableAt(BlockedLayoutAttr user, int64_t offset) const {
  ArrayRef<int64_t> dims = getDims(), userDims = user.getDims();
  for (auto [j, c] : llvm::enumerate(dims)) {
    if (c < 0)
      continue;
    int64_t i = (int64_t)j + offset;
    if (i < 0 || i >= (int64_t)userDims.size() || userDims[i] < 0)
      return false;
    int64_t u = userDims[i];
    if (getShape()[c] != user.getShape()[u] || getVec()[c] != user.getVec()[u] ||
        getThreads()[c] != user.getThreads()[u] || threadStride(c) != user.threadStride(u))
      return false;
  }
  return true;
}

layout::LinearLayout BlockedLayoutAttr::toLinearLayout(int64_t numThreads) const {
  int64_t rank = getShape().size();
  SmallVector<int64_t> order;
  for (int64_t d = rank - 1; d >= 0; --d)
    order.push_back(d);
  layout::LinearLayout context =
      layout::LinearLayout::blocked(getShape(), getVec(), getThreads(), order, numThreads);
  // Slice away the context dims no tile dim runs along (highest first, so
  // the others keep their numbers), then place the rest and the unit dims.
  SmallVector<int64_t> kept;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (!llvm::is_contained(getDims(), d))
      context = context.slice(d);
  for (int64_t d = 0; d < rank; ++d)
    if (llvm::is_contained(getDims(), d))
      kept.push_back(d);
  // `kept[j]` is now dim j; tile dim i is dim position(dims[i]) or a unit.
  SmallVector<int64_t> perm;
  for (int64_t c : getDims())
    if (c >= 0)
      perm.push_back(llvm::find(kept, c) - kept.begin());
  layout::LinearLayout result = context.permute(perm);
  for (auto [i, c] : llvm::enumerate(getDims()))
    if (c < 0)
      result = result.unsqueeze(i);
  return result;
}
