//===- EmitExpr.cpp - expressions -----------------------------------------===//
//
// This file implements KernelEmitter's expressions: one closed switch over
// Clang's expression classes. C++ scalar arithmetic becomes arith and math
// ops; calls into kite go to EmitKiteCall.cpp; calls to functions, templates
// and lambdas whose bodies are visible are inlined.
//
//===----------------------------------------------------------------------===//

#include "frontend/Emitter.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/Basic/SourceManager.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace kite::frontend;
using clang::dyn_cast;
using clang::isa;
using mlir::failed;
using mlir::failure;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::success;
using mlir::Type;
using mlir::Value;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Value KernelEmitter::constInt(Type type, int64_t v, mlir::Location l) {
  return b_.create<mlir::arith::ConstantOp>(l, b_.getIntegerAttr(type, v));
}

Value KernelEmitter::constI64(int64_t v, mlir::Location l) {
  return constInt(b_.getI64Type(), v, l);
}

Value KernelEmitter::constFloat(Type type, double v, mlir::Location l) {
  return b_.create<mlir::arith::ConstantOp>(l, b_.getFloatAttr(type, v));
}

Value KernelEmitter::toBool(Value v, mlir::Location l) {
  Type t = v.getType();
  if (t.isInteger(1))
    return v;
  if (t.isInteger())
    return b_.create<mlir::arith::CmpIOp>(l, mlir::arith::CmpIPredicate::ne, v,
                                          constInt(t, 0, l));
  return b_.create<mlir::arith::CmpFOp>(l, mlir::arith::CmpFPredicate::UNE, v,
                                        constFloat(t, 0.0, l));
}

Value KernelEmitter::castScalar(Value v, Type to, bool srcUnsigned,
                                mlir::Location l) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (to.isInteger(1))
    return toBool(v, l);
  bool unsignedSrc = srcUnsigned || from.isInteger(1);
  if (from.isInteger() && to.isInteger()) {
    if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
      return b_.create<mlir::arith::TruncIOp>(l, to, v);
    if (unsignedSrc)
      return b_.create<mlir::arith::ExtUIOp>(l, to, v);
    return b_.create<mlir::arith::ExtSIOp>(l, to, v);
  }
  if (from.isInteger()) {
    if (unsignedSrc)
      return b_.create<mlir::arith::UIToFPOp>(l, to, v);
    return b_.create<mlir::arith::SIToFPOp>(l, to, v);
  }
  if (to.isInteger())
    return b_.create<mlir::arith::FPToSIOp>(l, to, v);
  if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
    return b_.create<mlir::arith::TruncFOp>(l, to, v);
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return b_.create<mlir::arith::ExtFOp>(l, to, v);
  // f16 <-> bf16: through f32.
  Value wide = b_.create<mlir::arith::ExtFOp>(l, b_.getF32Type(), v);
  return b_.create<mlir::arith::TruncFOp>(l, to, wide);
}

std::optional<Value> KernelEmitter::tryFoldConstant(const clang::Expr *e) {
  if (e->isValueDependent() || e->isTypeDependent())
    return std::nullopt;
  clang::QualType type = e->getType();
  if (!type->isArithmeticType() || type->isEnumeralType())
    return std::nullopt;
  // Plain variables and literals are cheap to emit directly; folding is for
  // `-INFINITY`, `1.0f / 3`, constexpr values and the like.
  clang::Expr::EvalResult result;
  if (!e->EvaluateAsRValue(result, ast_) || result.HasSideEffects)
    return std::nullopt;
  FailureOr<Type> mlirType = convertScalarType(type);
  if (failed(mlirType))
    return std::nullopt;
  mlir::Location l = loc(e);
  const clang::APValue &v = result.Val;
  if (v.isInt())
    return b_.create<mlir::arith::ConstantOp>(
        l, b_.getIntegerAttr(*mlirType, v.getInt().getSExtValue()));
  if (v.isFloat()) {
    llvm::APFloat f = v.getFloat();
    bool lost = false;
    f.convert(llvm::cast<mlir::FloatType>(*mlirType).getFloatSemantics(),
              llvm::APFloat::rmNearestTiesToEven, &lost);
    return b_.create<mlir::arith::ConstantOp>(l, b_.getFloatAttr(*mlirType, f));
  }
  return std::nullopt;
}

FailureOr<Value> KernelEmitter::emitValue(const clang::Expr *e) {
  FailureOr<KValue> v = emitExpr(e);
  if (failed(v))
    return failure();
  if (v->kind == KValue::Kind::Value || v->kind == KValue::Kind::BlockSize)
    return v->value;
  diags_.report(e->getSourceRange(), Diag::ExpectedKind)
      << "a value" << describe(*v);
  return failure();
}

FailureOr<Value> KernelEmitter::emitScalar(const clang::Expr *e, Type type) {
  FailureOr<Value> v = emitValue(e);
  if (failed(v))
    return failure();
  if (!isScalar(*v)) {
    diags_.report(e->getSourceRange(), Diag::ExpectedKind)
        << "a scalar" << describe(KValue::of(*v));
    return failure();
  }
  if (type)
    return castScalar(*v, type,
                      e->getType()->isUnsignedIntegerType(), loc(e));
  return *v;
}

std::optional<Value> KernelEmitter::tryConstI64(const clang::Expr *e) {
  if (e->isValueDependent() || !e->getType()->isIntegralOrEnumerationType() ||
      e->getType()->isBooleanType() || e->getType()->isEnumeralType())
    return std::nullopt;
  clang::Expr::EvalResult result;
  if (!e->EvaluateAsInt(result, ast_) || result.HasSideEffects)
    return std::nullopt;
  return constI64(result.Val.getInt().getSExtValue(), loc(e));
}

FailureOr<Value> KernelEmitter::emitI64(const clang::Expr *e) {
  if (std::optional<Value> c = tryConstI64(e))
    return *c;
  FailureOr<Value> v = emitValue(e);
  if (failed(v))
    return failure();
  if (!v->getType().isInteger()) {
    diags_.report(e->getSourceRange(), Diag::ExpectedKind)
        << "an integer" << describe(KValue::of(*v));
    return failure();
  }
  return castScalar(*v, b_.getI64Type(),
                    e->getType()->isUnsignedIntegerType(), loc(e));
}

FailureOr<int64_t> KernelEmitter::emitConstInt(const clang::Expr *e,
                                               llvm::StringRef what) {
  clang::Expr::EvalResult result;
  if (!e->isValueDependent() && e->EvaluateAsInt(result, ast_) &&
      !result.HasSideEffects)
    return result.Val.getInt().getSExtValue();
  diags_.report(e->getSourceRange(), Diag::NotConstant) << what;
  return failure();
}

FailureOr<Value> KernelEmitter::elementwiseOperand(const KValue &v,
                                                   const clang::Expr *e,
                                                   llvm::StringRef opName) {
  if (v.kind == KValue::Kind::Value || v.kind == KValue::Kind::BlockSize) {
    if (isTile(v.value) || isScalar(v.value))
      return v.value;
    if (isTensor(v.value)) {
      diags_.report(e->getSourceRange(), Diag::WholeTensorOp)
          << ("'" + opName.str() + "'");
      return failure();
    }
  }
  diags_.report(e->getSourceRange(), Diag::ExpectedKind)
      << "a tile or a scalar" << describe(v);
  return failure();
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

FailureOr<KValue> KernelEmitter::emitExpr(const clang::Expr *e) {
  if (!isa<clang::IntegerLiteral, clang::FloatingLiteral,
           clang::CXXBoolLiteralExpr>(e)) {
    if (std::optional<Value> c = tryFoldConstant(e))
      return KValue::of(*c);
  }
  return emitExprImpl(e);
}

FailureOr<KValue> KernelEmitter::emitExprImpl(const clang::Expr *e) {
  switch (e->getStmtClass()) {
  case clang::Stmt::ParenExprClass:
    return emitExpr(clang::cast<clang::ParenExpr>(e)->getSubExpr());
  case clang::Stmt::ExprWithCleanupsClass:
  case clang::Stmt::ConstantExprClass:
    return emitExpr(clang::cast<clang::FullExpr>(e)->getSubExpr());
  case clang::Stmt::MaterializeTemporaryExprClass:
    return emitExpr(clang::cast<clang::MaterializeTemporaryExpr>(e)->getSubExpr());
  case clang::Stmt::CXXBindTemporaryExprClass:
    return emitExpr(clang::cast<clang::CXXBindTemporaryExpr>(e)->getSubExpr());
  case clang::Stmt::CXXDefaultArgExprClass:
    return emitExpr(clang::cast<clang::CXXDefaultArgExpr>(e)->getExpr());
  case clang::Stmt::CXXDefaultInitExprClass:
    return emitExpr(clang::cast<clang::CXXDefaultInitExpr>(e)->getExpr());
  case clang::Stmt::CXXStdInitializerListExprClass:
    return emitExpr(
        clang::cast<clang::CXXStdInitializerListExpr>(e)->getSubExpr());
  case clang::Stmt::OpaqueValueExprClass: {
    auto *ov = clang::cast<clang::OpaqueValueExpr>(e);
    if (ov->getSourceExpr())
      return emitExpr(ov->getSourceExpr());
    break;
  }
  case clang::Stmt::SubstNonTypeTemplateParmExprClass:
    return emitExpr(
        clang::cast<clang::SubstNonTypeTemplateParmExpr>(e)->getReplacement());

  case clang::Stmt::IntegerLiteralClass: {
    auto *lit = clang::cast<clang::IntegerLiteral>(e);
    FailureOr<Type> t = convertScalarType(e->getType());
    if (failed(t))
      break;
    return KValue::of(constInt(*t, lit->getValue().getSExtValue(), loc(e)));
  }
  case clang::Stmt::FloatingLiteralClass: {
    auto *lit = clang::cast<clang::FloatingLiteral>(e);
    FailureOr<Type> t = convertScalarType(e->getType());
    if (failed(t))
      break;
    return KValue::of(b_.create<mlir::arith::ConstantOp>(
        loc(e), b_.getFloatAttr(*t, lit->getValue())));
  }
  case clang::Stmt::CXXBoolLiteralExprClass:
    return KValue::of(constInt(b_.getI1Type(),
                               clang::cast<clang::CXXBoolLiteralExpr>(e)->getValue(),
                               loc(e)));

  case clang::Stmt::DeclRefExprClass:
    return emitDeclRef(clang::cast<clang::DeclRefExpr>(e));

  case clang::Stmt::ImplicitCastExprClass:
  case clang::Stmt::CStyleCastExprClass:
  case clang::Stmt::CXXFunctionalCastExprClass:
  case clang::Stmt::CXXStaticCastExprClass:
  case clang::Stmt::CXXConstCastExprClass:
    return emitCast(clang::cast<clang::CastExpr>(e));
  case clang::Stmt::CXXReinterpretCastExprClass:
    diags_.report(e->getSourceRange(), Diag::PointerNotSupported);
    return failure();
  case clang::Stmt::CXXDynamicCastExprClass:
    diags_.report(e->getSourceRange(), Diag::UnsupportedExpr) << "dynamic_cast";
    return failure();

  case clang::Stmt::UnaryOperatorClass:
    return emitUnaryOperator(clang::cast<clang::UnaryOperator>(e));
  case clang::Stmt::BinaryOperatorClass:
  case clang::Stmt::CompoundAssignOperatorClass:
    return emitBinaryOperator(clang::cast<clang::BinaryOperator>(e));
  case clang::Stmt::ConditionalOperatorClass:
  case clang::Stmt::BinaryConditionalOperatorClass:
    return emitConditional(clang::cast<clang::AbstractConditionalOperator>(e));

  case clang::Stmt::CallExprClass:
  case clang::Stmt::CXXMemberCallExprClass:
  case clang::Stmt::CXXOperatorCallExprClass:
    return emitCall(clang::cast<clang::CallExpr>(e));
  case clang::Stmt::CXXConstructExprClass:
  case clang::Stmt::CXXTemporaryObjectExprClass:
    return emitConstruct(clang::cast<clang::CXXConstructExpr>(e));
  case clang::Stmt::InitListExprClass:
    return emitInitList(clang::cast<clang::InitListExpr>(e));
  case clang::Stmt::LambdaExprClass:
    return emitLambda(clang::cast<clang::LambdaExpr>(e));

  case clang::Stmt::CXXNewExprClass:
    diags_.report(e->getSourceRange(), Diag::NewNotSupported) << "new";
    return failure();
  case clang::Stmt::CXXDeleteExprClass:
    diags_.report(e->getSourceRange(), Diag::NewNotSupported) << "delete";
    return failure();
  case clang::Stmt::CXXThrowExprClass:
    diags_.report(e->getSourceRange(), Diag::ExceptionsNotSupported);
    return failure();
  case clang::Stmt::CXXNullPtrLiteralExprClass:
  case clang::Stmt::GNUNullExprClass:
  case clang::Stmt::ArraySubscriptExprClass:
    diags_.report(e->getSourceRange(), Diag::PointerNotSupported);
    return failure();
  case clang::Stmt::CXXThisExprClass:
    diags_.report(e->getSourceRange(), Diag::UnsupportedExpr) << "'this'";
    return failure();
  case clang::Stmt::StringLiteralClass:
    diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
        << "a string literal";
    return failure();
  case clang::Stmt::MemberExprClass:
    diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
        << "accessing a data member";
    return failure();
  default:
    break;
  }
  diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
      << (std::string("this expression (") + e->getStmtClassName() + ")");
  return failure();
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

FailureOr<KValue> KernelEmitter::emitDeclRef(const clang::DeclRefExpr *e) {
  const clang::ValueDecl *d = e->getDecl();
  if (KValue *v = lookup(d)) {
    if (failed(checkVisible(*v, e, d)))
      return failure();
    return *v;
  }
  std::string name = kiteName(d);
  if (name == "all")
    return KValue::marker(KValue::Kind::All);
  if (name == "newaxis")
    return KValue::marker(KValue::Kind::NewAxis);
  if (isKiteClass(d->getType(), "DType") ||
      (d->getType()->isEnumeralType() &&
       kiteName(d->getType()->getAsTagDecl()) == "DType")) {
    FailureOr<Value> dt = emitDType(e);
    if (failed(dt))
      return failure();
    return KValue::of(*dt);
  }
  if (isa<clang::FunctionDecl>(d)) {
    diags_.report(e->getSourceRange(), Diag::PointerNotSupported);
    return failure();
  }
  if (auto *var = dyn_cast<clang::VarDecl>(d)) {
    // A constant from outside the kernel (folding handles arithmetic ones).
    if (var->getType().isConstQualified() && var->getInit() &&
        !var->hasLocalStorage())
      return emitExpr(var->getInit());
    if (!var->hasLocalStorage()) {
      diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
          << ("the global variable '" + var->getName().str() + "'");
      return failure();
    }
  }
  diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
      << ("'" + d->getName().str() + "' here");
  return failure();
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

FailureOr<KValue> KernelEmitter::emitCast(const clang::CastExpr *e) {
  const clang::Expr *sub = e->getSubExpr();
  switch (e->getCastKind()) {
  case clang::CK_NoOp:
  case clang::CK_LValueToRValue:
  case clang::CK_ConstructorConversion:
  case clang::CK_UserDefinedConversion:
  case clang::CK_DerivedToBase:
  case clang::CK_UncheckedDerivedToBase:
  case clang::CK_AtomicToNonAtomic:
  case clang::CK_NonAtomicToAtomic:
    return emitExpr(sub);
  case clang::CK_ToVoid: {
    FailureOr<KValue> v = emitExpr(sub);
    if (failed(v))
      return failure();
    return KValue::none();
  }
  case clang::CK_IntegralCast:
  case clang::CK_IntegralToFloating:
  case clang::CK_FloatingToIntegral:
  case clang::CK_FloatingCast:
  case clang::CK_IntegralToBoolean:
  case clang::CK_FloatingToBoolean:
  case clang::CK_BooleanToSignedIntegral: {
    FailureOr<Type> to = convertScalarType(e->getType());
    if (failed(to)) {
      diags_.report(e->getSourceRange(), Diag::UnsupportedType) << e->getType();
      return failure();
    }
    // Enum <-> integer conversions of kite dtypes are not arithmetic.
    if (sub->getType()->isEnumeralType()) {
      diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
          << "converting an enum to a number";
      return failure();
    }
    FailureOr<Value> v = emitScalar(sub);
    if (failed(v))
      return failure();
    Value r = castScalar(*v, *to, sub->getType()->isUnsignedIntegerType(),
                         loc(e));
    if (e->getCastKind() == clang::CK_BooleanToSignedIntegral)
      r = b_.create<mlir::arith::SubIOp>(loc(e), constInt(*to, 0, loc(e)), r);
    return KValue::of(r);
  }
  case clang::CK_ArrayToPointerDecay:
  case clang::CK_FunctionToPointerDecay:
  case clang::CK_NullToPointer:
  case clang::CK_PointerToBoolean:
  case clang::CK_PointerToIntegral:
  case clang::CK_IntegralToPointer:
  case clang::CK_BitCast:
  case clang::CK_LValueBitCast:
  case clang::CK_BaseToDerived:
    diags_.report(e->getSourceRange(), Diag::PointerNotSupported);
    return failure();
  default:
    break;
  }
  diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
      << (std::string("the conversion '") + e->getCastKindName() + "'");
  return failure();
}

//===----------------------------------------------------------------------===//
// Operators on scalars
//===----------------------------------------------------------------------===//

FailureOr<Value> KernelEmitter::emitScalarArith(clang::BinaryOperatorKind op,
                                                Value a, Value b,
                                                bool isUnsigned,
                                                mlir::Location l,
                                                const clang::Expr *e) {
  using namespace mlir::arith;
  Type t = a.getType();
  if (b.getType() != t) {
    // Clang converts both sides to one type, but shifts keep the left's.
    b = castScalar(b, t, isUnsigned, l);
  }
  if (t.isInteger()) {
    switch (op) {
    case clang::BO_Add: return b_.create<AddIOp>(l, a, b).getResult();
    case clang::BO_Sub: return b_.create<SubIOp>(l, a, b).getResult();
    case clang::BO_Mul: return b_.create<MulIOp>(l, a, b).getResult();
    case clang::BO_Div:
      return isUnsigned ? b_.create<DivUIOp>(l, a, b).getResult()
                        : b_.create<DivSIOp>(l, a, b).getResult();
    case clang::BO_Rem:
      return isUnsigned ? b_.create<RemUIOp>(l, a, b).getResult()
                        : b_.create<RemSIOp>(l, a, b).getResult();
    case clang::BO_Shl: return b_.create<ShLIOp>(l, a, b).getResult();
    case clang::BO_Shr:
      return isUnsigned ? b_.create<ShRUIOp>(l, a, b).getResult()
                        : b_.create<ShRSIOp>(l, a, b).getResult();
    case clang::BO_And: return b_.create<AndIOp>(l, a, b).getResult();
    case clang::BO_Or: return b_.create<OrIOp>(l, a, b).getResult();
    case clang::BO_Xor: return b_.create<XOrIOp>(l, a, b).getResult();
    case clang::BO_LT:
      return b_.create<CmpIOp>(l, isUnsigned ? CmpIPredicate::ult : CmpIPredicate::slt, a, b).getResult();
    case clang::BO_LE:
      return b_.create<CmpIOp>(l, isUnsigned ? CmpIPredicate::ule : CmpIPredicate::sle, a, b).getResult();
    case clang::BO_GT:
      return b_.create<CmpIOp>(l, isUnsigned ? CmpIPredicate::ugt : CmpIPredicate::sgt, a, b).getResult();
    case clang::BO_GE:
      return b_.create<CmpIOp>(l, isUnsigned ? CmpIPredicate::uge : CmpIPredicate::sge, a, b).getResult();
    case clang::BO_EQ: return b_.create<CmpIOp>(l, CmpIPredicate::eq, a, b).getResult();
    case clang::BO_NE: return b_.create<CmpIOp>(l, CmpIPredicate::ne, a, b).getResult();
    default: break;
    }
  } else {
    switch (op) {
    case clang::BO_Add: return b_.create<AddFOp>(l, a, b).getResult();
    case clang::BO_Sub: return b_.create<SubFOp>(l, a, b).getResult();
    case clang::BO_Mul: return b_.create<MulFOp>(l, a, b).getResult();
    case clang::BO_Div: return b_.create<DivFOp>(l, a, b).getResult();
    case clang::BO_Rem: return b_.create<RemFOp>(l, a, b).getResult();
    case clang::BO_LT: return b_.create<CmpFOp>(l, CmpFPredicate::OLT, a, b).getResult();
    case clang::BO_LE: return b_.create<CmpFOp>(l, CmpFPredicate::OLE, a, b).getResult();
    case clang::BO_GT: return b_.create<CmpFOp>(l, CmpFPredicate::OGT, a, b).getResult();
    case clang::BO_GE: return b_.create<CmpFOp>(l, CmpFPredicate::OGE, a, b).getResult();
    case clang::BO_EQ: return b_.create<CmpFOp>(l, CmpFPredicate::OEQ, a, b).getResult();
    case clang::BO_NE: return b_.create<CmpFOp>(l, CmpFPredicate::UNE, a, b).getResult();
    default: break;
    }
  }
  diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
      << ("the operator '" + clang::BinaryOperator::getOpcodeStr(op).str() +
          "' here");
  return failure();
}

FailureOr<KValue>
KernelEmitter::emitUnaryOperator(const clang::UnaryOperator *e) {
  mlir::Location l = loc(e);
  switch (e->getOpcode()) {
  case clang::UO_Deref:
  case clang::UO_AddrOf:
    diags_.report(e->getSourceRange(), Diag::PointerNotSupported);
    return failure();
  case clang::UO_Plus:
    return emitExpr(e->getSubExpr());
  case clang::UO_Minus: {
    FailureOr<Value> v = emitScalar(e->getSubExpr());
    if (failed(v))
      return failure();
    if (v->getType().isInteger())
      return KValue::of(b_.create<mlir::arith::SubIOp>(
          l, constInt(v->getType(), 0, l), *v));
    return KValue::of(b_.create<mlir::arith::NegFOp>(l, *v));
  }
  case clang::UO_LNot: {
    FailureOr<Value> v = emitScalar(e->getSubExpr());
    if (failed(v))
      return failure();
    Value bit = toBool(*v, l);
    return KValue::of(b_.create<mlir::arith::XOrIOp>(
        l, bit, constInt(b_.getI1Type(), 1, l)));
  }
  case clang::UO_Not: {
    FailureOr<Value> v = emitScalar(e->getSubExpr());
    if (failed(v))
      return failure();
    return KValue::of(b_.create<mlir::arith::XOrIOp>(
        l, *v, constInt(v->getType(), -1, l)));
  }
  case clang::UO_PreInc:
  case clang::UO_PostInc:
  case clang::UO_PreDec:
  case clang::UO_PostDec: {
    FailureOr<Value> old = emitScalar(e->getSubExpr());
    if (failed(old))
      return failure();
    Type t = old->getType();
    Value one = t.isInteger() ? constInt(t, 1, l) : constFloat(t, 1.0, l);
    FailureOr<Value> updated = emitScalarArith(
        e->isIncrementOp() ? clang::BO_Add : clang::BO_Sub, *old, one,
        e->getType()->isUnsignedIntegerType(), l, e);
    if (failed(updated) ||
        failed(assignTo(e->getSubExpr(), KValue::of(*updated), e)))
      return failure();
    return KValue::of(e->isPrefix() ? *updated : *old);
  }
  default:
    break;
  }
  diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
      << ("the operator '" +
          clang::UnaryOperator::getOpcodeStr(e->getOpcode()).str() + "'");
  return failure();
}

FailureOr<KValue>
KernelEmitter::emitBinaryOperator(const clang::BinaryOperator *e) {
  mlir::Location l = loc(e);
  clang::BinaryOperatorKind op = e->getOpcode();
  if (e->getLHS()->getType()->isPointerType() ||
      e->getRHS()->getType()->isPointerType()) {
    diags_.report(e->getSourceRange(), Diag::PointerNotSupported);
    return failure();
  }
  if (op == clang::BO_Comma) {
    if (failed(emitExpr(e->getLHS())))
      return failure();
    return emitExpr(e->getRHS());
  }
  if (op == clang::BO_Assign) {
    FailureOr<KValue> rhs = emitExpr(e->getRHS());
    if (failed(rhs) || failed(assignTo(e->getLHS(), *rhs, e)))
      return failure();
    return *rhs;
  }
  if (auto *ca = dyn_cast<clang::CompoundAssignOperator>(e)) {
    // lhs op= rhs computes in the computation type, then converts back.
    FailureOr<Value> lhs = emitScalar(e->getLHS());
    FailureOr<Value> rhs = failed(lhs) ? FailureOr<Value>(failure())
                                       : emitScalar(e->getRHS());
    if (failed(rhs))
      return failure();
    FailureOr<Type> compute = convertScalarType(ca->getComputationResultType());
    FailureOr<Type> lhsType = convertScalarType(e->getLHS()->getType());
    if (failed(compute) || failed(lhsType)) {
      diags_.report(e->getSourceRange(), Diag::UnsupportedType)
          << e->getLHS()->getType();
      return failure();
    }
    bool isUnsigned = ca->getComputationResultType()->isUnsignedIntegerType();
    Value a = castScalar(*lhs, *compute,
                         e->getLHS()->getType()->isUnsignedIntegerType(), l);
    Value b = castScalar(*rhs, *compute,
                         e->getRHS()->getType()->isUnsignedIntegerType(), l);
    FailureOr<Value> r = emitScalarArith(
        clang::BinaryOperator::getOpForCompoundAssignment(op), a, b,
        isUnsigned, l, e);
    if (failed(r))
      return failure();
    Value result = castScalar(*r, *lhsType, isUnsigned, l);
    if (failed(assignTo(e->getLHS(), KValue::of(result), e)))
      return failure();
    return KValue::of(result);
  }
  if (op == clang::BO_LAnd || op == clang::BO_LOr) {
    FailureOr<Value> a = emitScalar(e->getLHS());
    FailureOr<Value> b = failed(a) ? FailureOr<Value>(failure())
                                   : emitScalar(e->getRHS());
    if (failed(b))
      return failure();
    Value x = toBool(*a, l), y = toBool(*b, l);
    if (op == clang::BO_LAnd)
      return KValue::of(b_.create<mlir::arith::AndIOp>(l, x, y));
    return KValue::of(b_.create<mlir::arith::OrIOp>(l, x, y));
  }
  if (op == clang::BO_Cmp || op == clang::BO_PtrMemD ||
      op == clang::BO_PtrMemI) {
    diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
        << ("the operator '" + e->getOpcodeStr().str() + "'");
    return failure();
  }
  FailureOr<Value> a = emitScalar(e->getLHS());
  FailureOr<Value> b =
      failed(a) ? FailureOr<Value>(failure()) : emitScalar(e->getRHS());
  if (failed(b))
    return failure();
  bool isUnsigned = e->getLHS()->getType()->isUnsignedIntegerType();
  FailureOr<Value> r = emitScalarArith(op, *a, *b, isUnsigned, l, e);
  if (failed(r))
    return failure();
  return KValue::of(*r);
}

FailureOr<KValue> KernelEmitter::emitConditional(
    const clang::AbstractConditionalOperator *e) {
  AssignedVars scan;
  scanAssigned(e->getTrueExpr(), scan);
  scanAssigned(e->getFalseExpr(), scan);
  if (!scan.assigned.empty()) {
    diags_.report(scan.assigned.front().second->getSourceRange(),
                  Diag::UnsupportedExpr)
        << "an assignment inside '?:'";
    return failure();
  }
  FailureOr<Value> c = emitScalar(e->getCond());
  if (failed(c))
    return failure();
  FailureOr<Value> a = emitValue(e->getTrueExpr());
  FailureOr<Value> b =
      failed(a) ? FailureOr<Value>(failure()) : emitValue(e->getFalseExpr());
  if (failed(b))
    return failure();
  mlir::Location l = loc(e);
  Type t = joinTypes(a->getType(), b->getType());
  if (!t) {
    diags_.report(e->getSourceRange(), Diag::ExpectedKind)
        << describe(KValue::of(*a)) << describe(KValue::of(*b));
    return failure();
  }
  Value x = generalize(*a, t, l), y = generalize(*b, t, l);
  return KValue::of(
      b_.create<mlir::arith::SelectOp>(l, toBool(*c, l), x, y));
}

LogicalResult KernelEmitter::assignTo(const clang::Expr *lhs, KValue value,
                                      const clang::Expr *assign) {
  const clang::Expr *target = lhs->IgnoreParenImpCasts();
  if (auto *ref = dyn_cast<clang::DeclRefExpr>(target)) {
    if (KValue *old = lookup(ref->getDecl())) {
      if (deviceDepth_ > 0 && old->isValue() && isTensor(old->value) &&
          !(value.isValue() && isTensor(value.value))) {
        diags_.report(assign->getSourceRange(), Diag::StoreNotSubscript)
            << ("'" + ref->getDecl()->getName().str() +
                "' is a tensor; assign to a subscript of it");
        return failure();
      }
      bind(ref->getDecl(), std::move(value));
      return success();
    }
  }
  if (isa<clang::UnaryOperator>(target) &&
      clang::cast<clang::UnaryOperator>(target)->getOpcode() ==
          clang::UO_Deref) {
    diags_.report(target->getSourceRange(), Diag::PointerNotSupported);
    return failure();
  }
  diags_.report(assign->getSourceRange(), Diag::BadAssignTarget);
  return failure();
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

FailureOr<KValue> KernelEmitter::emitCall(const clang::CallExpr *e) {
  const clang::FunctionDecl *callee = e->getDirectCallee();
  if (!callee) {
    diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
        << "calling through a function pointer or a std::function";
    return failure();
  }
  const clang::Expr *self = nullptr;
  llvm::SmallVector<const clang::Expr *> args;
  auto *method = dyn_cast<clang::CXXMethodDecl>(callee);
  if (auto *member = dyn_cast<clang::CXXMemberCallExpr>(e)) {
    self = member->getImplicitObjectArgument();
    args.append(e->arg_begin(), e->arg_end());
    if (method && method->isVirtual()) {
      auto *me = dyn_cast<clang::MemberExpr>(e->getCallee()->IgnoreParens());
      if (!me || !me->hasQualifier()) {
        diags_.report(e->getExprLoc(), Diag::VirtualCall)
            << method->getQualifiedNameAsString() << e->getSourceRange();
        return failure();
      }
    }
  } else if (isa<clang::CXXOperatorCallExpr>(e) && method &&
             !method->isStatic()) {
    self = e->getArg(0);
    args.append(e->arg_begin() + 1, e->arg_end());
    if (method->isVirtual()) {
      diags_.report(e->getExprLoc(), Diag::VirtualCall)
          << method->getQualifiedNameAsString() << e->getSourceRange();
      return failure();
    }
  } else {
    args.append(e->arg_begin(), e->arg_end());
  }

  std::string name = kiteName(callee);
  if (!name.empty())
    return emitKiteCall(name, callee, self, args, e);

  if (isStdDecl(callee) || callee->getBuiltinID() != 0 ||
      (sm_.isInSystemHeader(callee->getLocation()) &&
       !callee->getDeclContext()->isRecord()))
    return emitStdCall(callee, e);

  // A lambda: evaluate the closure (its init-captures), then inline.
  if (method && method->getParent()->isLambda()) {
    if (self && failed(emitExpr(self)))
      return failure();
    return emitInlineCall(callee, args, e);
  }
  if (method && !method->isStatic()) {
    diags_.report(e->getSourceRange(), Diag::UnsupportedCall)
        << callee->getQualifiedNameAsString();
    return failure();
  }
  return emitInlineCall(callee, args, e);
}

FailureOr<KValue>
KernelEmitter::emitInlineCall(const clang::FunctionDecl *callee,
                              llvm::ArrayRef<const clang::Expr *> args,
                              const clang::Expr *call, llvm::ArrayRef<KValue> given) {
  const clang::FunctionDecl *def = nullptr;
  const clang::Stmt *body = callee->getBody(def);
  if (!body || !def) {
    diags_.report(call->getExprLoc(), Diag::InvisibleCall)
        << callee->getQualifiedNameAsString() << call->getSourceRange();
    diags_.report(callee->getLocation(), Diag::NoteDeclaredHere)
        << callee->getQualifiedNameAsString();
    return failure();
  }
  for (const InlineFrame &frame : frames_) {
    if (frame.callee->getCanonicalDecl() == def->getCanonicalDecl()) {
      diags_.report(call->getExprLoc(), Diag::RecursiveCall)
          << def->getQualifiedNameAsString() << call->getSourceRange();
      diags_.report(frame.call->getExprLoc(), Diag::NoteCalledFrom)
          << def->getQualifiedNameAsString();
      return failure();
    }
  }
  if (def->isVariadic()) {
    diags_.report(call->getSourceRange(), Diag::UnsupportedCall)
        << def->getQualifiedNameAsString();
    return failure();
  }

  // Evaluate the arguments in the caller; a non-const reference parameter
  // bound to a local aliases it (so the callee can assign it).
  struct Arg {
    const clang::ParmVarDecl *param;
    KValue value;
    const clang::ValueDecl *alias = nullptr;
  };
  llvm::SmallVector<Arg> bound;
  for (unsigned i = 0; i < def->getNumParams(); ++i) {
    const clang::ParmVarDecl *param = def->getParamDecl(i);
    if (param->getType()->isPointerType()) {
      diags_.report(param->getSourceRange(), Diag::PointerNotSupported);
      return failure();
    }
    if (!given.empty()) {
      if (i >= given.size()) {
        diags_.report(call->getSourceRange(), Diag::UnsupportedCall)
            << def->getQualifiedNameAsString();
        return failure();
      }
      bound.push_back({param, given[i], nullptr});
      continue;
    }
    if (i >= args.size()) {
      diags_.report(call->getSourceRange(), Diag::UnsupportedCall)
          << def->getQualifiedNameAsString();
      return failure();
    }
    clang::QualType pt = param->getType();
    if (pt->isLValueReferenceType() &&
        !pt.getNonReferenceType().isConstQualified()) {
      if (auto *ref = dyn_cast<clang::DeclRefExpr>(args[i]->IgnoreParenImpCasts())) {
        if (lookup(ref->getDecl())) {
          bound.push_back({param, KValue(), ref->getDecl()});
          continue;
        }
      }
    }
    FailureOr<KValue> v = emitExpr(args[i]);
    if (failed(v))
      return failure();
    bound.push_back({param, *v, nullptr});
  }

  frames_.push_back(InlineFrame{def, call, loc(call), std::nullopt});
  pushScope();
  for (Arg &arg : bound) {
    if (arg.alias)
      bindAlias(arg.param, arg.alias);
    else
      bind(arg.param, arg.value);
  }
  LogicalResult result = emitFunctionBody(body);
  popScope();
  InlineFrame frame = frames_.back();
  frames_.pop_back();
  if (failed(result))
    return failure();
  if (!def->getReturnType()->isVoidType() && !frame.result) {
    diags_.report(call->getSourceRange(), Diag::MissingReturn)
        << def->getQualifiedNameAsString();
    return failure();
  }
  return frame.result ? *frame.result : KValue::none();
}

FailureOr<KValue> KernelEmitter::emitStdCall(const clang::FunctionDecl *callee,
                                             const clang::CallExpr *e) {
  std::string name = callee->getNameAsString();
  mlir::Location l = loc(e);
  // Argument passing and tuples.
  if (name == "move" || name == "forward" || name == "as_const") {
    if (e->getNumArgs() == 1)
      return emitExpr(e->getArg(0));
  }
  if (name == "make_tuple" || name == "tie" || name == "forward_as_tuple") {
    std::vector<KValue> elems;
    for (const clang::Expr *arg : e->arguments()) {
      FailureOr<KValue> v = emitExpr(arg);
      if (failed(v))
        return failure();
      elems.push_back(*v);
    }
    return KValue::aggregate(KValue::Kind::Tuple, elems);
  }
  if (name == "get" && e->getNumArgs() == 1) {
    const clang::TemplateArgumentList *targs =
        callee->getTemplateSpecializationArgs();
    FailureOr<KValue> tuple = emitExpr(e->getArg(0));
    if (failed(tuple))
      return failure();
    if (targs && targs->size() >= 1 &&
        targs->get(0).getKind() == clang::TemplateArgument::Integral &&
        (tuple->kind == KValue::Kind::Tuple ||
         tuple->kind == KValue::Kind::List)) {
      uint64_t i = targs->get(0).getAsIntegral().getZExtValue();
      if (i < tuple->elems.size())
        return tuple->elems[i];
    }
  }

  // Scalar math.
  static const llvm::StringMap<llvm::StringRef> mathNames = {
      {"sqrt", "sqrt"},   {"sqrtf", "sqrt"},  {"exp", "exp"},
      {"expf", "exp"},    {"exp2", "exp2"},   {"exp2f", "exp2"},
      {"log", "log"},     {"logf", "log"},    {"log2", "log2"},
      {"log2f", "log2"},  {"sin", "sin"},     {"sinf", "sin"},
      {"cos", "cos"},     {"cosf", "cos"},    {"tanh", "tanh"},
      {"tanhf", "tanh"},  {"erf", "erf"},     {"erff", "erf"},
      {"abs", "abs"},     {"fabs", "abs"},    {"fabsf", "abs"},
      {"floor", "floor"}, {"floorf", "floor"}, {"ceil", "ceil"},
      {"ceilf", "ceil"},  {"pow", "pow"},     {"powf", "pow"},
      {"min", "min"},     {"max", "max"},     {"fmin", "min"},
      {"fminf", "min"},   {"fmax", "max"},    {"fmaxf", "max"},
      {"__builtin_sqrtf", "sqrt"}, {"__builtin_sqrt", "sqrt"},
      {"__builtin_expf", "exp"},   {"__builtin_exp", "exp"},
      {"__builtin_fabsf", "abs"},  {"__builtin_fabs", "abs"},
  };
  auto it = mathNames.find(name);
  FailureOr<Type> resultType = convertScalarType(e->getType());
  if (it == mathNames.end() || failed(resultType) || e->getNumArgs() < 1 ||
      e->getNumArgs() > 2) {
    diags_.report(e->getExprLoc(), Diag::UnsupportedCall)
        << callee->getQualifiedNameAsString() << e->getSourceRange();
    return failure();
  }
  llvm::SmallVector<Value> operands;
  for (const clang::Expr *arg : e->arguments()) {
    FailureOr<Value> v = emitScalar(arg, *resultType);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  llvm::StringRef op = it->second;
  Type t = *resultType;
  bool isInt = t.isInteger();
  using namespace mlir;
  if (operands.size() == 2) {
    if (op == "min")
      return KValue::of(isInt ? b_.create<arith::MinSIOp>(l, operands[0], operands[1]).getResult()
                              : b_.create<arith::MinimumFOp>(l, operands[0], operands[1]).getResult());
    if (op == "max")
      return KValue::of(isInt ? b_.create<arith::MaxSIOp>(l, operands[0], operands[1]).getResult()
                              : b_.create<arith::MaximumFOp>(l, operands[0], operands[1]).getResult());
    if (op == "pow" && !isInt)
      return KValue::of(b_.create<math::PowFOp>(l, operands[0], operands[1]));
    if (op == "pow")
      return KValue::of(b_.create<math::IPowIOp>(l, operands[0], operands[1]));
  } else if (isInt) {
    if (op == "abs")
      return KValue::of(b_.create<math::AbsIOp>(l, operands[0]));
  } else {
    Value x = operands[0];
    if (op == "sqrt") return KValue::of(b_.create<math::SqrtOp>(l, x));
    if (op == "exp") return KValue::of(b_.create<math::ExpOp>(l, x));
    if (op == "exp2") return KValue::of(b_.create<math::Exp2Op>(l, x));
    if (op == "log") return KValue::of(b_.create<math::LogOp>(l, x));
    if (op == "log2") return KValue::of(b_.create<math::Log2Op>(l, x));
    if (op == "sin") return KValue::of(b_.create<math::SinOp>(l, x));
    if (op == "cos") return KValue::of(b_.create<math::CosOp>(l, x));
    if (op == "tanh") return KValue::of(b_.create<math::TanhOp>(l, x));
    if (op == "erf") return KValue::of(b_.create<math::ErfOp>(l, x));
    if (op == "abs") return KValue::of(b_.create<math::AbsFOp>(l, x));
    if (op == "floor") return KValue::of(b_.create<math::FloorOp>(l, x));
    if (op == "ceil") return KValue::of(b_.create<math::CeilOp>(l, x));
  }
  diags_.report(e->getExprLoc(), Diag::UnsupportedCall)
      << callee->getQualifiedNameAsString() << e->getSourceRange();
  return failure();
}

//===----------------------------------------------------------------------===//
// Objects
//===----------------------------------------------------------------------===//

FailureOr<KValue>
KernelEmitter::emitConstruct(const clang::CXXConstructExpr *e) {
  const clang::CXXConstructorDecl *ctor = e->getConstructor();
  const clang::CXXRecordDecl *rec = ctor->getParent();
  if ((ctor->isCopyOrMoveConstructor() || e->isElidable()) &&
      e->getNumArgs() >= 1)
    return emitExpr(e->getArg(0));

  std::string name = kiteName(rec);
  if (!name.empty()) {
    // Conversions into kite's argument types keep the value.
    if ((name == "Dim" || name == "LoopDim" || name == "Index") &&
        e->getNumArgs() == 1)
      return emitExpr(e->getArg(0));
    if ((name == "Tensor" || name == "Tile") && e->getNumArgs() == 0)
      return KValue::none();
    diags_.report(e->getSourceRange(), Diag::UnsupportedKiteApi)
        << ("kite::" + name + " constructor") << "";
    return failure();
  }
  if (isStdDecl(rec) && (rec->getName() == "tuple" || rec->getName() == "pair" ||
                         rec->getName() == "vector")) {
    std::vector<KValue> elems;
    for (const clang::Expr *arg : e->arguments()) {
      if (isa<clang::CXXDefaultArgExpr>(arg))
        continue;
      FailureOr<KValue> v = emitExpr(arg);
      if (failed(v))
        return failure();
      elems.push_back(*v);
    }
    if (rec->getName() == "vector") {
      // std::vector<int64_t>{...}: the list itself.
      if (elems.size() == 1 && elems[0].kind == KValue::Kind::List)
        return elems[0];
      if (elems.empty())
        return KValue::aggregate(KValue::Kind::List, {});
      diags_.report(e->getSourceRange(), Diag::UnsupportedExpr)
          << "this std::vector constructor";
      return failure();
    }
    return KValue::aggregate(KValue::Kind::Tuple, elems);
  }
  diags_.report(e->getSourceRange(), Diag::UnsupportedType) << e->getType();
  return failure();
}

FailureOr<KValue> KernelEmitter::emitInitList(const clang::InitListExpr *e) {
  if (e->getType()->isArithmeticType() && e->getNumInits() == 1)
    return emitExpr(e->getInit(0));
  std::vector<KValue> elems;
  for (const clang::Expr *init : e->inits()) {
    FailureOr<KValue> v = emitExpr(init);
    if (failed(v))
      return failure();
    elems.push_back(*v);
  }
  if (e->getType()->isArrayType() || e->getType()->isDependentType() ||
      e->getType()->isVoidType())
    return KValue::aggregate(KValue::Kind::List, elems);
  if (const clang::CXXRecordDecl *rec = e->getType()->getAsCXXRecordDecl()) {
    if (isStdDecl(rec) && (rec->getName() == "tuple" || rec->getName() == "pair"))
      return KValue::aggregate(KValue::Kind::Tuple, elems);
  }
  diags_.report(e->getSourceRange(), Diag::UnsupportedType) << e->getType();
  return failure();
}

FailureOr<KValue> KernelEmitter::emitLambda(const clang::LambdaExpr *e) {
  // Init-captures are evaluated where the lambda is created; other captures
  // refer to the enclosing variables, which the environment already holds.
  for (const clang::LambdaCapture &cap : e->captures()) {
    if (cap.capturesThis()) {
      diags_.report(cap.getLocation(), Diag::UnsupportedExpr)
          << "capturing 'this'";
      return failure();
    }
    if (!cap.capturesVariable())
      continue;
    auto *var = dyn_cast<clang::VarDecl>(cap.getCapturedVar());
    if (var && var->isInitCapture()) {
      if (failed(emitVarDecl(var)))
        return failure();
    }
  }
  KValue closure;
  closure.kind = KValue::Kind::Closure;
  closure.lambda = e;
  return closure;
}
