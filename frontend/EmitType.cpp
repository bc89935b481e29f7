//===- EmitType.cpp - C++ types, kite types and shape rules ---------------===//
//
// This file implements the type side of KernelEmitter: recognizing kite's
// C++ classes, converting C++ scalar types, and the rules that give captured
// values their types (PyTorch promotion and broadcasting where operand types
// are known, `?` and `*` where they are not).
//
//===----------------------------------------------------------------------===//

#include "frontend/Emitter.h"

#include "clang/AST/DeclTemplate.h"

using namespace kite::frontend;
using clang::dyn_cast;
using clang::isa;
using mlir::FailureOr;
using mlir::Type;
using mlir::Value;

//===----------------------------------------------------------------------===//
// C++ types
//===----------------------------------------------------------------------===//

std::string KernelEmitter::kiteName(const clang::NamedDecl *decl) {
  if (!decl)
    return "";
  std::string name;
  if (auto *ctor = dyn_cast<clang::CXXConstructorDecl>(decl))
    name = ctor->getParent()->getName().str();
  else
    name = decl->getNameAsString();
  const clang::DeclContext *dc = decl->getDeclContext();
  while (dc) {
    if (auto *rec = dyn_cast<clang::CXXRecordDecl>(dc)) {
      if (rec->isLambda())
        return "";
      name = rec->getName().str() + "::" + name;
    } else if (auto *ns = dyn_cast<clang::NamespaceDecl>(dc)) {
      if (ns->getName() != "kite")
        return "";
      const clang::DeclContext *parent = ns->getParent();
      while (parent && isa<clang::LinkageSpecDecl>(parent))
        parent = parent->getParent();
      if (!parent || !isa<clang::TranslationUnitDecl>(parent))
        return "";
      return name;
    } else if (isa<clang::TranslationUnitDecl>(dc)) {
      return "";
    } else if (!isa<clang::LinkageSpecDecl>(dc)) {
      return "";
    }
    dc = dc->getParent();
  }
  return "";
}

bool KernelEmitter::isStdDecl(const clang::NamedDecl *decl) {
  return decl && decl->isInStdNamespace();
}

bool KernelEmitter::isKiteClass(clang::QualType type, llvm::StringRef name) {
  if (type.isNull())
    return false;
  const clang::CXXRecordDecl *rec =
      type.getNonReferenceType()->getAsCXXRecordDecl();
  return rec && kiteName(rec) == name;
}

FailureOr<Type> KernelEmitter::convertScalarType(clang::QualType type) {
  type = type.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  auto *builtin = dyn_cast<clang::BuiltinType>(type.getTypePtr());
  if (!builtin)
    return mlir::failure();
  switch (builtin->getKind()) {
  case clang::BuiltinType::Bool:
    return Type(b_.getI1Type());
  case clang::BuiltinType::Char_S:
  case clang::BuiltinType::Char_U:
  case clang::BuiltinType::SChar:
  case clang::BuiltinType::UChar:
    return Type(b_.getI8Type());
  case clang::BuiltinType::Short:
  case clang::BuiltinType::UShort:
    return Type(b_.getI16Type());
  case clang::BuiltinType::Int:
  case clang::BuiltinType::UInt:
    return Type(b_.getI32Type());
  case clang::BuiltinType::Long:
  case clang::BuiltinType::ULong:
  case clang::BuiltinType::LongLong:
  case clang::BuiltinType::ULongLong:
    return Type(b_.getI64Type());
  case clang::BuiltinType::Float:
    return Type(b_.getF32Type());
  case clang::BuiltinType::Double:
    return Type(b_.getF64Type());
  case clang::BuiltinType::Half:
  case clang::BuiltinType::Float16:
    return Type(b_.getF16Type());
  case clang::BuiltinType::BFloat16:
    return Type(b_.getBF16Type());
  default:
    return mlir::failure();
  }
}

//===----------------------------------------------------------------------===//
// kite types
//===----------------------------------------------------------------------===//

Type KernelEmitter::tensorType(std::optional<llvm::ArrayRef<int64_t>> shape,
                               Type elem) {
  return kite::TensorType::get(ctx_, shape, elem);
}

Type KernelEmitter::tileType(std::optional<llvm::ArrayRef<int64_t>> shape,
                             Type elem) {
  return kite::TileType::get(ctx_, shape, elem);
}

Type KernelEmitter::unrankedTile(Type elem) {
  return tileType(std::nullopt, elem);
}

bool KernelEmitter::isTile(Value v) {
  return v && isa<kite::TileType>(v.getType());
}
bool KernelEmitter::isTensor(Value v) {
  return v && isa<kite::TensorType>(v.getType());
}
bool KernelEmitter::isSpan(Value v) {
  return v && isa<kite::SpanType>(v.getType());
}
bool KernelEmitter::isScalar(Value v) {
  return v && v.getType().isIntOrFloat();
}

std::optional<llvm::SmallVector<int64_t>> KernelEmitter::shapeOf(Type type) {
  if (auto tile = dyn_cast<kite::TileType>(type)) {
    if (!tile.hasRank())
      return std::nullopt;
    return llvm::SmallVector<int64_t>(tile.getShape());
  }
  if (auto tensor = dyn_cast<kite::TensorType>(type)) {
    if (!tensor.hasRank())
      return std::nullopt;
    return llvm::SmallVector<int64_t>(tensor.getShape());
  }
  if (type.isIntOrFloat())
    return llvm::SmallVector<int64_t>();
  return std::nullopt;
}

Type KernelEmitter::constantDType(Value dtype) {
  if (!dtype)
    return {};
  if (auto c = dtype.getDefiningOp<kite::DTypeConstOp>())
    return c.getDtype();
  return {};
}

namespace {
/// 0 for booleans, 1 for integers, 2 for floats.
int category(Type t) {
  if (t.isInteger(1))
    return 0;
  if (t.isInteger())
    return 1;
  return 2;
}

/// Promotion of two known dtypes (torch.promote_types).
Type promoteKnown(Type a, Type b) {
  if (a == b)
    return a;
  int ca = category(a), cb = category(b);
  if (ca != cb)
    return ca > cb ? a : b;
  if (ca == 2) {
    // f16 and bf16 meet at f32; otherwise the wider float wins.
    unsigned wa = a.getIntOrFloatBitWidth(), wb = b.getIntOrFloatBitWidth();
    if (wa == wb)
      return mlir::Float32Type::get(a.getContext());
    return wa > wb ? a : b;
  }
  return a.getIntOrFloatBitWidth() >= b.getIntOrFloatBitWidth() ? a : b;
}
} // namespace

Type KernelEmitter::promote(Type a, Type b) {
  Type ea = kite::getElementTypeOrNull(a), eb = kite::getElementTypeOrNull(b);
  bool sa = a.isIntOrFloat(), sb = b.isIntOrFloat();
  if (sa == sb) {
    if (!ea || !eb)
      return {};
    return promoteKnown(ea, eb);
  }
  // A scalar is weak: it only matters when it is of a higher category.
  Type tileElem = sa ? eb : ea;
  Type scalar = sa ? ea : eb;
  if (!tileElem)
    return {};
  if (category(scalar) > category(tileElem))
    return category(scalar) == 2 ? Type(b_.getF32Type())
                                 : Type(b_.getI64Type());
  return tileElem;
}

FailureOr<Type> KernelEmitter::broadcastType(llvm::ArrayRef<Value> operands,
                                             Type elem,
                                             const clang::Expr *where) {
  int64_t rank = 0;
  for (Value v : operands) {
    std::optional<int64_t> r = kite::getRankOf(v.getType());
    if (!r)
      return unrankedTile(elem);
    rank = std::max(rank, *r);
  }
  // Dims align from the right; 1 broadcasts; `?` may be anything.
  llvm::SmallVector<int64_t> dims(rank, 1);
  llvm::SmallVector<bool> seen(rank, false);
  for (Value v : operands) {
    std::optional<llvm::SmallVector<int64_t>> shape = shapeOf(v.getType());
    if (!shape)
      continue;
    int64_t offset = rank - (int64_t)shape->size();
    for (auto [i, d] : llvm::enumerate(*shape)) {
      int64_t &r = dims[offset + i];
      if (!seen[offset + i]) {
        r = d;
        seen[offset + i] = true;
      } else if (r == 1) {
        r = d;
      } else if (d == 1 || d == r) {
        // keep r
      } else if (mlir::ShapedType::isDynamic(r)) {
        r = d;
      } else if (!mlir::ShapedType::isDynamic(d)) {
        // Two different static sizes, neither 1.
        std::string a, b;
        llvm::raw_string_ostream as(a), bs(b);
        as << operands.front().getType();
        bs << v.getType();
        diags_.report(where->getExprLoc(), Diag::ShapeMismatch)
            << as.str() << bs.str() << where->getSourceRange();
        return mlir::failure();
      }
    }
  }
  return tileType(llvm::ArrayRef<int64_t>(dims), elem);
}

mlir::LogicalResult
KernelEmitter::requireIntegerElements(Value v, const clang::Expr *where,
                                      llvm::StringRef what) {
  Type elem = kite::getElementTypeOrNull(v.getType());
  if (!elem || elem.isSignlessInteger())
    return mlir::success();
  std::string t;
  llvm::raw_string_ostream os(t);
  os << "a value of element type " << elem;
  diags_.report(where->getExprLoc(), Diag::ExpectedKind)
      << what << os.str() << where->getSourceRange();
  return mlir::failure();
}

Type KernelEmitter::joinTypes(Type a, Type b) {
  if (a == b)
    return a;
  auto joinShaped = [&](bool ra, llvm::ArrayRef<int64_t> sa, Type ea, bool rb,
                        llvm::ArrayRef<int64_t> sb, Type eb, bool isTile) {
    Type elem = ea == eb ? ea : Type();
    std::optional<llvm::SmallVector<int64_t>> shape;
    if (ra && rb && sa.size() == sb.size()) {
      shape.emplace();
      for (auto [x, y] : llvm::zip(sa, sb))
        shape->push_back(x == y ? x : mlir::ShapedType::kDynamic);
    }
    std::optional<llvm::ArrayRef<int64_t>> ref;
    if (shape)
      ref = llvm::ArrayRef<int64_t>(*shape);
    return isTile ? tileType(ref, elem) : tensorType(ref, elem);
  };
  auto ta = dyn_cast<kite::TileType>(a), tb = dyn_cast<kite::TileType>(b);
  if (ta && tb)
    return joinShaped(ta.hasRank(), ta.getShape(), ta.getElementType(),
                      tb.hasRank(), tb.getShape(), tb.getElementType(), true);
  auto xa = dyn_cast<kite::TensorType>(a), xb = dyn_cast<kite::TensorType>(b);
  if (xa && xb)
    return joinShaped(xa.hasRank(), xa.getShape(), xa.getElementType(),
                      xb.hasRank(), xb.getShape(), xb.getElementType(), false);
  return {};
}

Value KernelEmitter::generalize(Value v, Type type, mlir::Location l) {
  if (v.getType() == type)
    return v;
  // TODO(dialect): a kite op that forgets static type information would
  // read better than the builtin cast.
  return b_
      .create<mlir::UnrealizedConversionCastOp>(l, mlir::TypeRange(type),
                                                mlir::ValueRange(v))
      .getResult(0);
}

std::string KernelEmitter::describe(const KValue &v) {
  switch (v.kind) {
  case KValue::Kind::Void:
    return "an empty (default-constructed) value";
  case KValue::Kind::BlockSize:
    return "a block size";
  case KValue::Kind::Tuple:
    return "a tuple";
  case KValue::Kind::List:
    return "a list";
  case KValue::Kind::All:
    return "kite::all";
  case KValue::Kind::NewAxis:
    return "kite::newaxis";
  case KValue::Kind::Range:
    return "a range";
  case KValue::Kind::Closure:
    return "a lambda";
  case KValue::Kind::Value:
    break;
  }
  Type t = v.value.getType();
  if (isa<kite::TensorType>(t))
    return "a tensor";
  if (isa<kite::TileType>(t))
    return "a tile value";
  if (isa<kite::SpanType>(t))
    return "a tile loop variable";
  if (isa<kite::DTypeType>(t))
    return "a dtype";
  return "a scalar";
}
