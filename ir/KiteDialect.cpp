//===- KiteDialect.cpp - the kite dialect ---------------------------------===//
//
// This file implements the dialect's registration and the small type
// queries that ops, the frontend and the passes share.
//
//===----------------------------------------------------------------------===//

#include "ir/KiteDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace kite;

#include "ir/KiteDialect.cpp.inc"
#include "ir/KiteEnums.cpp.inc"

// kite links Debian's uninstrumented MLIR, whose bump allocators are header
// templates: in an AddressSanitizer build kite's instrumented copies poison
// each new slab they start, and MLIR's own code then writes its part of the
// slab without unpoisoning it, a false use-after-poison (the IR fuzzer hit
// it as soon as attributes with array storage came from kite's code). User
// poisoning is off in such builds; heap errors are still caught. Every
// binary that uses the dialect links this file.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KITE_ASAN_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KITE_ASAN_BUILD 1
#endif
#ifdef KITE_ASAN_BUILD
extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }
#endif

namespace {
/// Layouts print once, at the top, as `#blocked`, `#blocked1`, ...
struct KiteOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<BlockedLayoutAttr>(attr)) {
      os << "blocked";
      return AliasResult::OverridableAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void KiteDialect::initialize() {
  registerTypes();
  registerAttributes();
  addInterfaces<KiteOpAsmInterface>();
  addOperations<
#define GET_OP_LIST
#include "ir/KiteOps.cpp.inc"
      >();
}

FailureOr<Subscript::Kind> kite::getSubscriptKind(Type type) {
  if (isa<SpanType>(type))
    return Subscript::Kind::Span;
  if (type.isSignlessInteger())
    return Subscript::Kind::Scalar;
  if (auto tile = dyn_cast<TileType>(type)) {
    if (!tile.hasElementType() || tile.getElementType().isSignlessInteger())
      return Subscript::Kind::Gather;
  }
  return failure();
}

Type kite::getElementTypeOrNull(Type type) {
  if (auto tile = dyn_cast<TileType>(type))
    return tile.getElementType();
  if (auto tensor = dyn_cast<kite::TensorType>(type))
    return tensor.getElementType();
  if (type.isIntOrFloat())
    return type;
  return {};
}

bool kite::isIntegerLike(Type type) {
  Type elem = getElementTypeOrNull(type);
  if (!elem)
    return isa<TileType, kite::TensorType>(type);
  return elem.isSignlessInteger();
}

std::optional<int64_t> kite::getRankOf(Type type) {
  if (auto tile = dyn_cast<TileType>(type))
    return tile.hasRank() ? std::optional<int64_t>(tile.getRank()) : std::nullopt;
  if (auto tensor = dyn_cast<kite::TensorType>(type))
    return tensor.hasRank() ? std::optional<int64_t>(tensor.getRank())
                            : std::nullopt;
  return 0;
}

bool kite::isKiteDType(Type type) {
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64() ||
         type.isSignlessInteger(8) || type.isSignlessInteger(32) ||
         type.isSignlessInteger(64) || type.isSignlessInteger(1) || isFloat8(type);
}

bool kite::isFloat8(Type type) { return type.isFloat8E4M3FN() || type.isFloat8E5M2(); }

bool kite::isNarrowFloat(Type type) { return type.isF16() || type.isBF16() || isFloat8(type); }

Type kite::parseDTypeName(MLIRContext *ctx, llvm::StringRef name) {
  Builder b(ctx);
  return llvm::StringSwitch<Type>(name)
      .Case("f16", b.getF16Type())
      .Case("bf16", b.getBF16Type())
      .Case("f32", b.getF32Type())
      .Case("f64", b.getF64Type())
      .Case("i8", b.getI8Type())
      .Case("i32", b.getI32Type())
      .Case("i64", b.getI64Type())
      .Case("e4m3", b.getFloat8E4M3FNType())
      .Case("e5m2", b.getFloat8E5M2Type())
      .Cases("bool", "boolean", "i1", b.getI1Type())
      .Default(Type());
}

int64_t kite::rankFormParam(func::FuncOp decl) {
  auto forms = decl->getAttrOfType<DictionaryAttr>(kRankFormsAttrName);
  auto param = forms ? forms.getAs<IntegerAttr>("param") : IntegerAttr();
  return param ? param.getInt() : -1;
}

func::FuncOp kite::rankFormOf(func::FuncOp decl, int64_t rank) {
  auto forms = decl->getAttrOfType<DictionaryAttr>(kRankFormsAttrName);
  auto ranks = forms ? forms.getAs<DenseI64ArrayAttr>("ranks") : DenseI64ArrayAttr();
  if (!ranks || !llvm::is_contained(ranks.asArrayRef(), rank))
    return {};
  return dyn_cast_or_null<func::FuncOp>(SymbolTable::lookupNearestSymbolFrom(
      decl, StringAttr::get(decl.getContext(), rankFormName(decl.getSymName(), rank))));
}
