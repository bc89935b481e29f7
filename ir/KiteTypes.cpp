//===- KiteTypes.cpp - kite types -----------------------------------------===//
//
// This file implements the assembly of `!kite.tensor` and `!kite.tile`:
// `<*x?>` (unranked, dtype unknown), `<?x4xbf16>`, `<f32>` (rank 0).
//
//===----------------------------------------------------------------------===//

#include "ir/KiteDialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kite;

#define GET_TYPEDEF_CLASSES
#include "ir/KiteTypes.cpp.inc"

namespace {

/// Parses `<` (`*` `x` | (dim `x`)*) elem `>` where dim is an integer or
/// `?` and elem is a dtype or `?` (unknown). A `?` followed by `>` is the
/// element type; otherwise it is a dimension.
template <typename T>
Type parseShapedLike(AsmParser &parser) {
  if (parser.parseLess())
    return {};
  bool ranked = true;
  SmallVector<int64_t> shape;
  Type elem;
  if (succeeded(parser.parseOptionalStar())) {
    ranked = false;
    if (parser.parseXInDimensionList())
      return {};
  }
  while (true) {
    if (succeeded(parser.parseOptionalQuestion())) {
      if (succeeded(parser.parseOptionalGreater()))
        break; // unknown element type
      if (!ranked) {
        parser.emitError(parser.getCurrentLocation(),
                         "an unranked type has no dimensions");
        return {};
      }
      if (parser.parseXInDimensionList())
        return {};
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t dim;
    OptionalParseResult isInt = parser.parseOptionalInteger(dim);
    if (isInt.has_value()) {
      if (failed(*isInt) || parser.parseXInDimensionList())
        return {};
      if (!ranked || dim < 0) {
        parser.emitError(parser.getCurrentLocation(), "invalid dimension");
        return {};
      }
      shape.push_back(dim);
      continue;
    }
    if (parser.parseType(elem))
      return {};
    if (!isKiteDType(elem)) {
      parser.emitError(parser.getCurrentLocation(),
                       "element type must be a kite dtype "
                       "(f16, bf16, f32, f64, i8, i32, i64, i1), got ")
          << elem;
      return {};
    }
    if (parser.parseGreater())
      return {};
    break;
  }
  return T::get(parser.getContext(),
                ranked ? std::optional<ArrayRef<int64_t>>(shape) : std::nullopt,
                elem);
}

void printShapedLike(AsmPrinter &printer, bool ranked, ArrayRef<int64_t> shape,
                     Type elem) {
  printer << "<";
  if (!ranked) {
    printer << "*x";
  } else {
    for (int64_t d : shape) {
      if (ShapedType::isDynamic(d))
        printer << "?";
      else
        printer << d;
      printer << "x";
    }
  }
  if (elem)
    printer << elem;
  else
    printer << "?";
  printer << ">";
}

} // namespace

Type kite::TensorType::parse(AsmParser &parser) {
  return parseShapedLike<kite::TensorType>(parser);
}
void kite::TensorType::print(AsmPrinter &printer) const {
  printShapedLike(printer, getRanked(), getShape(), getElementType());
}
Type TileType::parse(AsmParser &parser) {
  return parseShapedLike<TileType>(parser);
}
void TileType::print(AsmPrinter &printer) const {
  printShapedLike(printer, getRanked(), getShape(), getElementType());
}

void KiteDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ir/KiteTypes.cpp.inc"
      >();
}
