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

/// What follows a shaped type's element type.
enum class After { Greater, Comma, Other };

/// Parses (dim `x`)* elem, where dim is an integer or `?` and elem is a
/// dtype or `?` (unknown). A `?` followed by `>` or `,` is the element type
/// (the `>` or `,` is consumed: the result says which); otherwise it is a
/// dimension.
FailureOr<After> parseShapeAndElement(AsmParser &parser, bool ranked,
                                      SmallVectorImpl<int64_t> &shape, Type &elem) {
  while (true) {
    if (succeeded(parser.parseOptionalQuestion())) {
      if (succeeded(parser.parseOptionalGreater()))
        return After::Greater; // unknown element type
      if (succeeded(parser.parseOptionalComma()))
        return After::Comma;
      if (!ranked)
        return parser.emitError(parser.getCurrentLocation(),
                                "an unranked type has no dimensions");
      if (parser.parseXInDimensionList())
        return failure();
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t dim;
    OptionalParseResult isInt = parser.parseOptionalInteger(dim);
    if (isInt.has_value()) {
      if (failed(*isInt) || parser.parseXInDimensionList())
        return failure();
      if (!ranked || dim < 0)
        return parser.emitError(parser.getCurrentLocation(), "invalid dimension");
      shape.push_back(dim);
      continue;
    }
    if (parser.parseType(elem))
      return failure();
    if (!isKiteDType(elem))
      return parser.emitError(parser.getCurrentLocation(),
                              "element type must be a kite dtype "
                              "(f16, bf16, f32, f64, i8, i32, i64, i1, f8E4M3FN, f8E5M2), got ")
             << elem;
    return After::Other;
  }
}

/// Parses `<` (`*` `x` | (dim `x`)*) elem (`,` layout)? `>`; a layout only
/// where `layout` is given.
LogicalResult parseShapedLike(AsmParser &parser, bool &ranked, SmallVectorImpl<int64_t> &shape,
                              Type &elem, Attribute *layout) {
  if (parser.parseLess())
    return failure();
  ranked = true;
  if (succeeded(parser.parseOptionalStar())) {
    ranked = false;
    if (parser.parseXInDimensionList())
      return failure();
  }
  FailureOr<After> after = parseShapeAndElement(parser, ranked, shape, elem);
  if (failed(after))
    return failure();
  if (*after == After::Greater)
    return success();
  bool comma = *after == After::Comma || (layout && succeeded(parser.parseOptionalComma()));
  if (comma) {
    if (!layout)
      return parser.emitError(parser.getCurrentLocation(), "a tensor has no layout");
    if (parser.parseAttribute(*layout))
      return failure();
  }
  return parser.parseGreater();
}

void printShapedLike(AsmPrinter &printer, bool ranked, ArrayRef<int64_t> shape,
                     Type elem, Attribute layout = {}) {
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
  if (layout)
    printer << ", " << layout;
  printer << ">";
}

} // namespace

Type kite::TensorType::parse(AsmParser &parser) {
  bool ranked;
  SmallVector<int64_t> shape;
  Type elem;
  if (failed(parseShapedLike(parser, ranked, shape, elem, nullptr)))
    return {};
  return kite::TensorType::get(parser.getContext(),
                               ranked ? std::optional<ArrayRef<int64_t>>(shape) : std::nullopt,
                               elem);
}
void kite::TensorType::print(AsmPrinter &printer) const {
  printShapedLike(printer, getRanked(), getShape(), getElementType());
}
Type TileType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  bool ranked;
  SmallVector<int64_t> shape;
  Type elem;
  Attribute layout;
  if (failed(parseShapedLike(parser, ranked, shape, elem, &layout)))
    return {};
  TileType t = TileType::get(parser.getContext(),
                             ranked ? std::optional<ArrayRef<int64_t>>(shape) : std::nullopt,
                             elem, layout);
  if (failed(verifyTileLayout([&] { return parser.emitError(loc); }, t)))
    return {};
  return t;
}
void TileType::print(AsmPrinter &printer) const {
  printShapedLike(printer, getRanked(), getShape(), getElementType(), getLayout());
}

LogicalResult kite::verifyTileLayout(function_ref<InFlightDiagnostic()> emitError,
                                     TileType tile) {
  Attribute layout = tile.getLayout();
  if (!layout)
    return success();
  auto blocked = dyn_cast<BlockedLayoutAttr>(layout);
  if (!blocked)
    return emitError() << "a tile's layout must be a kite layout, got " << layout;
  if (!tile.hasStaticShape())
    return emitError() << "a tile with a layout must have a static shape";
  SmallVector<int64_t> padded = blocked.tileShape();
  bool fits = padded.size() == tile.getShape().size();
  for (size_t i = 0; fits && i < padded.size(); ++i) {
    int64_t d = tile.getShape()[i];
    fits = padded[i] == (d <= 1 ? 1 : (int64_t)llvm::PowerOf2Ceil(d));
  }
  if (!fits)
    return emitError() << "layout " << layout << " does not fit the tile's shape (its dims "
                                                 "must be the shape's padded to powers of two)";
  return success();
}

void KiteDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ir/KiteTypes.cpp.inc"
      >();
}
