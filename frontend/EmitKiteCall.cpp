//===- EmitKiteCall.cpp - the kite API ------------------------------------===//
//
// This file implements the calls into kite/kite.hpp: each function, method
// and operator of the API is recognized by its qualified name and becomes a
// kite op (loads and stores for subscripts, kite.binary for operators, ...).
// The reference-mode bodies in kite.hpp are never inlined; a kite name this
// file does not know is a located error.
//
//===----------------------------------------------------------------------===//

#include "frontend/Emitter.h"

#include "clang/AST/DeclTemplate.h"
#include "llvm/ADT/StringSwitch.h"

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

namespace {

bool isSrcLocParam(const clang::ParmVarDecl *p) {
  const clang::CXXRecordDecl *rec =
      p->getType().getNonReferenceType()->getAsCXXRecordDecl();
  return rec && rec->isInStdNamespace() && rec->getName() == "source_location";
}

const clang::Expr *strip(const clang::Expr *e) {
  return e->IgnoreImplicit()->IgnoreParens()->IgnoreImplicit();
}

/// `e` without a conversion into kite's argument types (Dim, LoopDim,
/// Index), which keep the value they convert.
const clang::Expr *unwrapConversion(const clang::Expr *e) {
  for (;;) {
    e = strip(e);
    auto *ctor = dyn_cast<clang::CXXConstructExpr>(e);
    if (!ctor || ctor->getNumArgs() != 1)
      return e;
    std::string name = KernelEmitter::kiteName(ctor->getConstructor()->getParent());
    if (name != "Dim" && name != "LoopDim" && name != "Index")
      return e;
    e = ctor->getArg(0);
  }
}

/// The element expressions of a braced list argument (`{tm, all}`), if the
/// argument is written as one.
std::optional<llvm::SmallVector<const clang::Expr *>>
listElements(const clang::Expr *e) {
  e = strip(e);
  if (auto *ctor = dyn_cast<clang::CXXConstructExpr>(e))
    if (ctor->getNumArgs() >= 1)
      e = strip(ctor->getArg(0));
  if (auto *il = dyn_cast<clang::CXXStdInitializerListExpr>(e))
    e = strip(il->getSubExpr());
  if (auto *init = dyn_cast<clang::InitListExpr>(e))
    return llvm::SmallVector<const clang::Expr *>(init->inits());
  return std::nullopt;
}

/// The element type of a kite::DType enumerator name.
Type dtypeFromName(llvm::StringRef name, mlir::MLIRContext *ctx) {
  return kite::parseDTypeName(ctx, name);
}

std::optional<int64_t> constantInt(Value v) {
  if (!v)
    return std::nullopt;
  if (auto c = v.getDefiningOp<mlir::arith::ConstantOp>())
    if (auto attr = llvm::dyn_cast<mlir::IntegerAttr>(c.getValue()))
      return attr.getInt();
  return std::nullopt;
}

bool isNarrow(Type t) { return t && kite::isNarrowFloat(t); }

} // namespace

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

FailureOr<KValue>
KernelEmitter::emitKiteCall(llvm::StringRef name,
                            const clang::FunctionDecl *callee,
                            const clang::Expr *self,
                            llvm::ArrayRef<const clang::Expr *> allArgs,
                            const clang::Expr *call) {
  // Drop the std::source_location arguments reference mode uses.
  llvm::SmallVector<const clang::Expr *> args;
  for (auto [i, arg] : llvm::enumerate(allArgs))
    if (i >= callee->getNumParams() || !isSrcLocParam(callee->getParamDecl(i)))
      args.push_back(arg);
  mlir::Location l = loc(call);
  auto unsupported = [&](llvm::StringRef hint = "") -> FailureOr<KValue> {
    diags_.report(call->getExprLoc(), Diag::UnsupportedKiteApi)
        << ("kite::" + name.str()) << hint << call->getSourceRange();
    return failure();
  };
  auto arity = [&](size_t n) { return args.size() == n; };

  //===--- Tensor methods --------------------------------------------------===//
  if (name.starts_with("Tensor::")) {
    llvm::StringRef method = name.drop_front(strlen("Tensor::"));
    if (method == "operator[]") {
      FailureOr<Subscript> sub = emitSubscript(self, args, call);
      if (failed(sub))
        return failure();
      return emitLoad(*sub, Value(), l);
    }
    std::optional<kite::BinaryKind> op =
        llvm::StringSwitch<std::optional<kite::BinaryKind>>(method)
            .Case("operator+=", kite::BinaryKind::add)
            .Case("operator-=", kite::BinaryKind::sub)
            .Case("operator*=", kite::BinaryKind::mul)
            .Case("operator/=", kite::BinaryKind::div)
            .Default(std::nullopt);
    if (method == "operator=" && arity(1))
      return emitTensorAssign(std::nullopt, self, args[0], call);
    if (op && arity(1))
      return emitTensorAssign(op, self, args[0], call);

    if (method == "reshape" || method == "view" || method == "transpose" ||
        method == "permute" || method == "unsqueeze" || method == "squeeze" ||
        method == "expand")
      return emitShapeOp(method, self, args, call);

    FailureOr<KValue> selfValue = emitExpr(self);
    if (failed(selfValue))
      return failure();
    if (!selfValue->isValue()) {
      diags_.report(self->getSourceRange(), Diag::ExpectedKind)
          << "a tensor or a tile" << describe(*selfValue);
      return failure();
    }
    Value v = selfValue->value;
    if (method == "dtype")
      return KValue::of(b_.create<kite::DTypeOfOp>(l, v));
    if (method == "size" || method == "sizes" || method == "dim" ||
        method == "numel") {
      if (!isTensor(v))
        return unsupported(
            " on a tile value; use the block_size() of its tiles");
      std::optional<int64_t> rank = kite::getRankOf(v.getType());
      if (method == "size" && arity(1)) {
        FailureOr<int64_t> dim = emitConstInt(args[0], "the dim of size()");
        if (failed(dim) ||
            failed(checkDim(*dim, rank, args[0], "the tensor")))
          return failure();
        return KValue::of(
            b_.create<kite::SizeOp>(l, v, b_.getI64IntegerAttr(*dim)));
      }
      if (!rank) {
        diags_.report(call->getSourceRange(), Diag::UnknownRank)
            << ("'" + method.str() + "()'") << "";
        return failure();
      }
      if (method == "dim")
        return KValue::of(constI64(*rank, l));
      std::vector<KValue> sizes;
      Value numel;
      for (int64_t d = 0; d < *rank; ++d) {
        Value s = b_.create<kite::SizeOp>(l, v, b_.getI64IntegerAttr(d));
        sizes.push_back(KValue::of(s));
        numel = numel ? b_.create<mlir::arith::MulIOp>(l, numel, s).getResult()
                      : s;
      }
      if (method == "numel")
        return KValue::of(numel ? numel : constI64(1, l));
      return KValue::aggregate(KValue::Kind::List, sizes);
    }
    if (method == "to" && arity(1)) {
      if (!isTile(v)) {
        diags_.report(self->getSourceRange(), Diag::WholeTensorOp) << "'to()'";
        return failure();
      }
      FailureOr<Value> dt = emitDType(args[0]);
      if (failed(dt))
        return failure();
      std::optional<llvm::SmallVector<int64_t>> shape = shapeOf(v.getType());
      std::optional<llvm::ArrayRef<int64_t>> ref;
      if (shape)
        ref = llvm::ArrayRef<int64_t>(*shape);
      return KValue::of(b_.create<kite::CastOp>(
          l, tileType(ref, constantDType(*dt)), v, *dt));
    }
    if (method == "contiguous" || method == "clone") {
      if (isTile(v) || (method == "contiguous" && isTensor(v)))
        return *selfValue;
      return unsupported(" on a whole tensor");
    }
    return unsupported();
  }

  //===--- Tile methods ----------------------------------------------------===//
  if (name.starts_with("Tile::")) {
    llvm::StringRef method = name.drop_front(strlen("Tile::"));
    FailureOr<Value> span = emitValue(self);
    if (failed(span))
      return failure();
    if (!isSpan(*span)) {
      diags_.report(self->getSourceRange(), Diag::ExpectedKind)
          << "a tile loop variable" << describe(KValue::of(*span));
      return failure();
    }
    std::optional<kite::SpanField> field =
        llvm::StringSwitch<std::optional<kite::SpanField>>(method)
            .Case("begin", kite::SpanField::begin)
            .Case("end", kite::SpanField::end)
            .Case("block_size", kite::SpanField::block_size)
            .Case("id", kite::SpanField::id)
            .Case("count", kite::SpanField::count)
            .Default(std::nullopt);
    if (field)
      return KValue::of(b_.create<kite::SpanQueryOp>(
          l, kite::SpanFieldAttr::get(ctx_, *field), *span));
    if (method == "index")
      return KValue::of(b_.create<kite::SpanIndexOp>(
          l, tileType(llvm::ArrayRef<int64_t>{mlir::ShapedType::kDynamic},
                      b_.getI64Type()),
          *span));
    return unsupported();
  }

  //===--- N-D loop variables ----------------------------------------------===//
  if (name.starts_with("Tiles::") || name.starts_with("TileList::") ||
      name.starts_with("GridIndex::")) {
    llvm::StringRef method = name.substr(name.find("::") + 2);
    FailureOr<KValue> tuple = emitExpr(self);
    if (failed(tuple))
      return failure();
    if (tuple->kind != KValue::Kind::Tuple)
      return unsupported();
    if (method == "size")
      return KValue::of(constI64(tuple->elems.size(), l));
    std::optional<int64_t> index;
    if (method == "operator[]" && arity(1)) {
      FailureOr<int64_t> i = emitConstInt(args[0], "the index of a tile tuple");
      if (failed(i))
        return failure();
      index = *i;
    } else if (method == "get") {
      const clang::TemplateArgumentList *targs =
          callee->getTemplateSpecializationArgs();
      if (targs && targs->size() == 1 &&
          targs->get(0).getKind() == clang::TemplateArgument::Integral)
        index = targs->get(0).getAsIntegral().getSExtValue();
    }
    if (!index)
      return unsupported();
    if (*index < 0 || *index >= (int64_t)tuple->elems.size()) {
      diags_.report(call->getSourceRange(), Diag::DimOutOfRange)
          << *index << "a loop variable" << (int64_t)tuple->elems.size();
      return failure();
    }
    return tuple->elems[*index];
  }

  if (name == "BlockSize::value") {
    FailureOr<Value> v = emitValue(self);
    if (failed(v))
      return failure();
    return KValue::of(*v);
  }

  if (name.starts_with("operator"))
    return emitKiteOperator(name, args, call);

  //===--- Free functions --------------------------------------------------===//
  if (name == "range" && arity(2)) {
    FailureOr<Value> begin = emitI64(args[0]);
    FailureOr<Value> end =
        failed(begin) ? FailureOr<Value>(failure()) : emitI64(args[1]);
    if (failed(end))
      return failure();
    return KValue::aggregate(KValue::Kind::Range,
                             {KValue::of(*begin), KValue::of(*end)});
  }
  if (name == "block" && arity(1)) {
    FailureOr<Value> n = emitI64(args[0]);
    if (failed(n))
      return failure();
    return KValue::blockSize(*n);
  }
  if (name == "register_block_size" && (arity(1) || arity(2))) {
    int64_t id = nextBlockSizeId_++;
    if (arity(1)) {
      FailureOr<Value> extent = emitI64(args[0]);
      if (failed(extent))
        return failure();
      return KValue::blockSize(b_.create<kite::BlockSizeOp>(
          l, *extent, b_.getI64IntegerAttr(id), mlir::IntegerAttr(),
          mlir::IntegerAttr()));
    }
    FailureOr<int64_t> lo = emitConstInt(args[0], "the lower bound of a block size");
    if (failed(lo))
      return failure();
    FailureOr<int64_t> hi = emitConstInt(args[1], "the upper bound of a block size");
    if (failed(hi))
      return failure();
    if (*lo < 1 || *lo > *hi) {
      diags_.report(call->getSourceRange(), Diag::BadBlockSizeRange)
          << *lo << *hi;
      return failure();
    }
    return KValue::blockSize(b_.create<kite::BlockSizeOp>(
        l, Value(), b_.getI64IntegerAttr(id), b_.getI64IntegerAttr(*lo),
        b_.getI64IntegerAttr(*hi)));
  }
  if (name == "specialize" && arity(1)) {
    FailureOr<Value> v = emitScalar(args[0]);
    if (failed(v))
      return failure();
    return KValue::of(b_.create<kite::SpecializeOp>(l, *v));
  }
  if (name == "tile" || name == "grid") {
    diags_.report(call->getSourceRange(), Diag::LoopRangeNotTile);
    return failure();
  }
  if (name == "empty" || name == "zeros" || name == "ones" || name == "full" ||
      name == "empty_like" || name == "zeros_like" || name == "ones_like" ||
      name == "full_like" || name == "arange")
    return emitCreate(name, args, call);

  std::optional<kite::UnaryKind> unary =
      llvm::StringSwitch<std::optional<kite::UnaryKind>>(name)
          .Case("exp", kite::UnaryKind::exp)
          .Case("exp2", kite::UnaryKind::exp2)
          .Case("log", kite::UnaryKind::log)
          .Case("log2", kite::UnaryKind::log2)
          .Case("sqrt", kite::UnaryKind::sqrt)
          .Case("rsqrt", kite::UnaryKind::rsqrt)
          .Case("abs", kite::UnaryKind::abs)
          .Case("sin", kite::UnaryKind::sin)
          .Case("cos", kite::UnaryKind::cos)
          .Case("tanh", kite::UnaryKind::tanh)
          .Case("erf", kite::UnaryKind::erf)
          .Case("sigmoid", kite::UnaryKind::sigmoid)
          .Case("relu", kite::UnaryKind::relu)
          .Case("silu", kite::UnaryKind::silu)
          .Case("gelu", kite::UnaryKind::gelu)
          .Case("floor", kite::UnaryKind::floor)
          .Case("ceil", kite::UnaryKind::ceil)
          .Default(std::nullopt);
  if (unary && arity(1))
    return emitUnary(*unary, args[0], call);

  std::optional<kite::BinaryKind> binary =
      llvm::StringSwitch<std::optional<kite::BinaryKind>>(name)
          .Case("pow", kite::BinaryKind::pow)
          .Case("maximum", kite::BinaryKind::maximum)
          .Case("minimum", kite::BinaryKind::minimum)
          .Default(std::nullopt);
  if (binary && arity(2))
    return emitBinary(*binary, args[0], args[1], call);

  if (name == "clamp" && arity(3)) {
    // clamp(x, lo, hi) = minimum(maximum(x, lo), hi).
    FailureOr<KValue> lower =
        emitBinary(kite::BinaryKind::maximum, args[0], args[1], call);
    if (failed(lower))
      return failure();
    FailureOr<KValue> hi = emitExpr(args[2]);
    if (failed(hi))
      return failure();
    FailureOr<Value> hv = elementwiseOperand(*hi, args[2], "clamp");
    if (failed(hv))
      return failure();
    FailureOr<Value> r =
        binaryValues(kite::BinaryKind::minimum, lower->value, *hv, l, call);
    if (failed(r))
      return failure();
    return KValue::of(*r);
  }

  if (name == "where" && arity(3)) {
    llvm::SmallVector<Value> ops;
    for (const clang::Expr *arg : args) {
      FailureOr<KValue> v = emitExpr(arg);
      if (failed(v))
        return failure();
      FailureOr<Value> operand = elementwiseOperand(*v, arg, "where");
      if (failed(operand))
        return failure();
      ops.push_back(*operand);
    }
    if (llvm::none_of(ops, [](Value v) { return isTile(v); })) {
      Value c = toBool(ops[0], l);
      Type t = promote(ops[1].getType(), ops[2].getType());
      Value a = castScalar(ops[1], t, false, l), b = castScalar(ops[2], t, false, l);
      return KValue::of(b_.create<mlir::arith::SelectOp>(l, c, a, b));
    }
    Type cond = kite::getElementTypeOrNull(ops[0].getType());
    if (cond && !cond.isInteger(1)) {
      diags_.report(args[0]->getSourceRange(), Diag::ExpectedKind)
          << "a boolean condition" << describe(KValue::of(ops[0]));
      return failure();
    }
    Type elem = promote(ops[1].getType(), ops[2].getType());
    FailureOr<Type> type = broadcastType(ops, elem, call);
    if (failed(type))
      return failure();
    return KValue::of(
        b_.create<kite::WhereOp>(l, *type, ops[0], ops[1], ops[2]));
  }

  std::optional<kite::ReduceKind> reduce =
      llvm::StringSwitch<std::optional<kite::ReduceKind>>(name)
          .Case("sum", kite::ReduceKind::sum)
          .Case("mean", kite::ReduceKind::mean)
          .Case("amax", kite::ReduceKind::amax)
          .Case("amin", kite::ReduceKind::amin)
          .Case("prod", kite::ReduceKind::prod)
          .Case("argmax", kite::ReduceKind::argmax)
          .Case("argmin", kite::ReduceKind::argmin)
          .Default(std::nullopt);
  if (reduce && (arity(2) || arity(3)))
    return emitReduce(*reduce, args, call);

  std::optional<kite::ScanKind> scan =
      llvm::StringSwitch<std::optional<kite::ScanKind>>(name)
          .Case("cumsum", kite::ScanKind::sum)
          .Case("cumprod", kite::ScanKind::prod)
          .Case("cummax", kite::ScanKind::max)
          .Case("cummin", kite::ScanKind::min)
          .Default(std::nullopt);
  if (scan && arity(2))
    return emitScan(*scan, args, call);
  if (name == "associative_scan" && arity(3))
    return emitAssociativeScan(args, call);

  if ((name == "sort" && (arity(2) || arity(3))) || (name == "topk" && (arity(3) || arity(4))))
    return emitSort(name, args, call);

  // The in-kernel draws take (seed, offsets); the host helpers of the same
  // names take sizes first.
  if ((name == "rand" || name == "randn" || name == "randint") && args.size() >= 2 &&
      callee->getNumParams() >= 2 &&
      callee->getParamDecl(1)->getType().getNonReferenceType().getUnqualifiedType()
              .getAsString()
              .find("Tensor") != std::string::npos)
    return emitRandom(name, args, call);

  if ((name == "unsqueeze" || name == "squeeze" || name == "transpose" ||
       name == "permute" || name == "reshape" || name == "expand") &&
      !args.empty())
    return emitShapeOp(name, args[0], llvm::ArrayRef(args).drop_front(), call);

  if (name == "dot" || name == "matmul" || name == "addmm" || name == "bmm" ||
      name == "baddbmm")
    return emitMatmul(name, args, call);

  if (name == "load" && (arity(2) || arity(3))) {
    std::optional<llvm::SmallVector<const clang::Expr *>> idx =
        listElements(args[1]);
    if (!idx)
      return unsupported(" with indices that are not a braced list");
    FailureOr<Subscript> sub = emitSubscript(args[0], *idx, call);
    if (failed(sub))
      return failure();
    Value mask;
    if (arity(3)) {
      FailureOr<Value> m = emitMask(args[2]);
      if (failed(m))
        return failure();
      mask = *m;
    }
    return emitLoad(*sub, mask, l);
  }
  std::optional<kite::AtomicKind> atomic =
      llvm::StringSwitch<std::optional<kite::AtomicKind>>(name)
          .Case("atomic_add", kite::AtomicKind::add)
          .Case("atomic_max", kite::AtomicKind::max)
          .Case("atomic_min", kite::AtomicKind::min)
          .Default(std::nullopt);
  if ((name == "store" || atomic) && (arity(3) || arity(4))) {
    std::optional<llvm::SmallVector<const clang::Expr *>> idx =
        listElements(args[1]);
    if (!idx)
      return unsupported(" with indices that are not a braced list");
    FailureOr<Subscript> sub = emitSubscript(args[0], *idx, call, /*isStore=*/true);
    if (failed(sub))
      return failure();
    FailureOr<KValue> v = emitExpr(args[2]);
    if (failed(v))
      return failure();
    FailureOr<Value> value = elementwiseOperand(*v, args[2], name);
    if (failed(value))
      return failure();
    Value mask;
    if (arity(4)) {
      FailureOr<Value> m = emitMask(args[3]);
      if (failed(m))
        return failure();
      mask = *m;
    }
    if (!atomic) {
      if (failed(emitStore(*sub, *value, mask, l, call)))
        return failure();
      return KValue::none();
    }
    if (failed(checkStoredRank(*sub, *value, call)))
      return failure();
    b_.create<kite::AtomicOp>(l, *atomic, *value, sub->tensor, sub->indices,
                              mask, sub->layout);
    return KValue::none();
  }
  return unsupported();
}

//===----------------------------------------------------------------------===//
// Operators and elementwise functions
//===----------------------------------------------------------------------===//

FailureOr<KValue>
KernelEmitter::emitKiteOperator(llvm::StringRef name,
                                 llvm::ArrayRef<const clang::Expr *> args,
                                 const clang::Expr *call) {
  if (args.size() == 1) {
    if (name == "operator-")
      return emitUnary(kite::UnaryKind::neg, args[0], call);
    if (name == "operator~")
      return emitUnary(kite::UnaryKind::not_, args[0], call);
  }
  if (args.size() == 2) {
    std::optional<kite::BinaryKind> binary =
        llvm::StringSwitch<std::optional<kite::BinaryKind>>(name)
            .Case("operator+", kite::BinaryKind::add)
            .Case("operator-", kite::BinaryKind::sub)
            .Case("operator*", kite::BinaryKind::mul)
            .Case("operator/", kite::BinaryKind::div)
            .Case("operator%", kite::BinaryKind::mod)
            .Case("operator&", kite::BinaryKind::and_)
            .Case("operator|", kite::BinaryKind::or_)
            .Case("operator^", kite::BinaryKind::xor_)
            .Default(std::nullopt);
    if (binary)
      return emitBinary(*binary, args[0], args[1], call);
    std::optional<kite::CompareKind> compare =
        llvm::StringSwitch<std::optional<kite::CompareKind>>(name)
            .Case("operator==", kite::CompareKind::eq)
            .Case("operator!=", kite::CompareKind::ne)
            .Case("operator<", kite::CompareKind::lt)
            .Case("operator<=", kite::CompareKind::le)
            .Case("operator>", kite::CompareKind::gt)
            .Case("operator>=", kite::CompareKind::ge)
            .Default(std::nullopt);
    if (compare)
      return emitCompare(*compare, args[0], args[1], call);
  }
  diags_.report(call->getExprLoc(), Diag::UnsupportedKiteApi)
      << ("kite::" + name.str()) << "" << call->getSourceRange();
  return failure();
}

FailureOr<Value> KernelEmitter::requireTile(const clang::Expr *e,
                                            llvm::StringRef what) {
  FailureOr<KValue> v = emitExpr(e);
  if (failed(v))
    return failure();
  if (v->isValue() && isTile(v->value))
    return v->value;
  if (v->isValue() && isTensor(v->value)) {
    diags_.report(e->getSourceRange(), Diag::WholeTensorOp)
        << ("'" + what.str() + "'");
    return failure();
  }
  diags_.report(e->getSourceRange(), Diag::ExpectedKind)
      << "a tile value" << describe(*v);
  return failure();
}

FailureOr<KValue> KernelEmitter::emitUnary(kite::UnaryKind kind,
                                           const clang::Expr *arg,
                                           const clang::Expr *call) {
  FailureOr<Value> v = requireTile(arg, kite::stringifyUnaryKind(kind));
  if (failed(v))
    return failure();
  Type elem = kite::getElementTypeOrNull(v->getType());
  switch (kind) {
  case kite::UnaryKind::neg:
  case kite::UnaryKind::abs:
  case kite::UnaryKind::relu:
  case kite::UnaryKind::floor:
  case kite::UnaryKind::ceil:
  case kite::UnaryKind::not_:
    break;
  default:
    // Transcendental functions of integers compute in the default float.
    if (elem && elem.isInteger())
      elem = b_.getF32Type();
    break;
  }
  if (kind == kite::UnaryKind::not_ &&
      failed(requireIntegerElements(*v, arg, "a boolean or integer tile")))
    return failure();
  FailureOr<Type> type = broadcastType({*v}, elem, call);
  if (failed(type))
    return failure();
  return KValue::of(b_.create<kite::UnaryOp>(loc(call), *type, kind, *v));
}

FailureOr<Value> KernelEmitter::binaryValues(kite::BinaryKind kind, Value a,
                                             Value b, mlir::Location l,
                                             const clang::Expr *call) {
  if (isScalar(a) && isScalar(b)) {
    // Both operands are C++ scalars: plain scalar math.
    Type t = promote(a.getType(), b.getType());
    a = castScalar(a, t, false, l);
    b = castScalar(b, t, false, l);
    bool isInt = t.isInteger();
    switch (kind) {
    case kite::BinaryKind::add:
      return emitScalarArith(clang::BO_Add, a, b, false, l, call);
    case kite::BinaryKind::sub:
      return emitScalarArith(clang::BO_Sub, a, b, false, l, call);
    case kite::BinaryKind::mul:
      return emitScalarArith(clang::BO_Mul, a, b, false, l, call);
    case kite::BinaryKind::div:
      return emitScalarArith(clang::BO_Div, a, b, false, l, call);
    case kite::BinaryKind::mod:
      return emitScalarArith(clang::BO_Rem, a, b, false, l, call);
    case kite::BinaryKind::and_:
      return emitScalarArith(clang::BO_And, a, b, false, l, call);
    case kite::BinaryKind::or_:
      return emitScalarArith(clang::BO_Or, a, b, false, l, call);
    case kite::BinaryKind::xor_:
      return emitScalarArith(clang::BO_Xor, a, b, false, l, call);
    case kite::BinaryKind::maximum:
      return isInt ? b_.create<mlir::arith::MaxSIOp>(l, a, b).getResult()
                   : b_.create<mlir::arith::MaximumFOp>(l, a, b).getResult();
    case kite::BinaryKind::minimum:
      return isInt ? b_.create<mlir::arith::MinSIOp>(l, a, b).getResult()
                   : b_.create<mlir::arith::MinimumFOp>(l, a, b).getResult();
    case kite::BinaryKind::pow:
      return isInt ? b_.create<mlir::math::IPowIOp>(l, a, b).getResult()
                   : b_.create<mlir::math::PowFOp>(l, a, b).getResult();
    }
  }
  Type elem = promote(a.getType(), b.getType());
  if (kind == kite::BinaryKind::div && elem && elem.isInteger())
    elem = b_.getF32Type(); // true division, as in PyTorch
  if (kind == kite::BinaryKind::and_ || kind == kite::BinaryKind::or_ ||
      kind == kite::BinaryKind::xor_) {
    if (failed(requireIntegerElements(a, call, "boolean or integer operands")) ||
        failed(requireIntegerElements(b, call, "boolean or integer operands")))
      return failure();
  }
  FailureOr<Type> type = broadcastType({a, b}, elem, call);
  if (failed(type))
    return failure();
  return b_.create<kite::BinaryOp>(l, *type, kind, a, b).getResult();
}

FailureOr<std::pair<Value, Value>>
KernelEmitter::emitElementwiseOperands(const clang::Expr *lhs,
                                       const clang::Expr *rhs,
                                       llvm::StringRef opName) {
  FailureOr<KValue> a = emitExpr(lhs);
  if (failed(a))
    return failure();
  FailureOr<Value> av = elementwiseOperand(*a, lhs, opName);
  if (failed(av))
    return failure();
  FailureOr<KValue> b = emitExpr(rhs);
  if (failed(b))
    return failure();
  FailureOr<Value> bv = elementwiseOperand(*b, rhs, opName);
  if (failed(bv))
    return failure();
  return std::make_pair(*av, *bv);
}

FailureOr<KValue> KernelEmitter::emitBinary(kite::BinaryKind kind,
                                            const clang::Expr *lhs,
                                            const clang::Expr *rhs,
                                            const clang::Expr *call) {
  FailureOr<std::pair<Value, Value>> ab =
      emitElementwiseOperands(lhs, rhs, kite::stringifyBinaryKind(kind));
  if (failed(ab))
    return failure();
  auto [av, bv] = *ab;
  FailureOr<Value> r = binaryValues(kind, av, bv, loc(call), call);
  if (failed(r))
    return failure();
  return KValue::of(*r);
}

FailureOr<KValue> KernelEmitter::emitCompare(kite::CompareKind kind,
                                             const clang::Expr *lhs,
                                             const clang::Expr *rhs,
                                             const clang::Expr *call) {
  FailureOr<std::pair<Value, Value>> ab =
      emitElementwiseOperands(lhs, rhs, kite::stringifyCompareKind(kind));
  if (failed(ab))
    return failure();
  std::optional<Value> av = ab->first, bv = ab->second;
  mlir::Location l = loc(call);
  if (isScalar(*av) && isScalar(*bv)) {
    Type t = promote(av->getType(), bv->getType());
    Value x = castScalar(*av, t, false, l), y = castScalar(*bv, t, false, l);
    clang::BinaryOperatorKind op = clang::BO_EQ;
    switch (kind) {
    case kite::CompareKind::eq: op = clang::BO_EQ; break;
    case kite::CompareKind::ne: op = clang::BO_NE; break;
    case kite::CompareKind::lt: op = clang::BO_LT; break;
    case kite::CompareKind::le: op = clang::BO_LE; break;
    case kite::CompareKind::gt: op = clang::BO_GT; break;
    case kite::CompareKind::ge: op = clang::BO_GE; break;
    }
    FailureOr<Value> r = emitScalarArith(op, x, y, false, l, call);
    if (failed(r))
      return failure();
    return KValue::of(*r);
  }
  FailureOr<Type> type = broadcastType({*av, *bv}, b_.getI1Type(), call);
  if (failed(type))
    return failure();
  return KValue::of(b_.create<kite::CompareOp>(l, *type, kind, *av, *bv));
}

//===----------------------------------------------------------------------===//
// Reductions, shapes and matmuls
//===----------------------------------------------------------------------===//

FailureOr<int64_t> KernelEmitter::checkDim(int64_t dim,
                                           std::optional<int64_t> rank,
                                           const clang::Expr *e,
                                           llvm::StringRef what,
                                           std::optional<int64_t> shownRank) {
  if (!rank)
    return dim;
  if (dim < -*rank || dim >= *rank) {
    diags_.report(e->getSourceRange(), Diag::DimOutOfRange)
        << dim << what << (shownRank ? *shownRank : *rank);
    return failure();
  }
  return dim < 0 ? dim + *rank : dim;
}

FailureOr<KValue>
KernelEmitter::emitReduce(kite::ReduceKind kind,
                          llvm::ArrayRef<const clang::Expr *> args,
                          const clang::Expr *call) {
  llvm::StringRef opName = kite::stringifyReduceKind(kind);
  FailureOr<Value> v = requireTile(args[0], opName);
  if (failed(v))
    return failure();
  FailureOr<int64_t> dim = emitConstInt(args[1], "the dim of a reduction");
  if (failed(dim))
    return failure();
  bool keepdim = false;
  if (args.size() > 2) {
    FailureOr<int64_t> k = emitConstInt(args[2], "keepdim");
    if (failed(k))
      return failure();
    keepdim = *k != 0;
  }
  std::optional<llvm::SmallVector<int64_t>> shape = shapeOf(v->getType());
  std::optional<llvm::SmallVector<int64_t>> resultShape;
  if (shape) {
    int64_t rank = shape->size();
    if (*dim < -rank || *dim >= rank) {
      diags_.report(args[1]->getSourceRange(), Diag::ReduceDimOutOfRange)
          << ("'" + opName.str() + "'") << *dim << rank;
      return failure();
    }
    int64_t d = *dim < 0 ? *dim + rank : *dim;
    resultShape = *shape;
    if (keepdim)
      (*resultShape)[d] = 1;
    else
      resultShape->erase(resultShape->begin() + d);
  }
  Type elem = kite::getElementTypeOrNull(v->getType());
  switch (kind) {
  case kite::ReduceKind::sum:
  case kite::ReduceKind::prod:
    if (elem && elem.isInteger())
      elem = b_.getI64Type();
    break;
  case kite::ReduceKind::argmax:
  case kite::ReduceKind::argmin:
    elem = b_.getI64Type();
    break;
  default:
    break;
  }
  std::optional<llvm::ArrayRef<int64_t>> ref;
  if (resultShape)
    ref = llvm::ArrayRef<int64_t>(*resultShape);
  return KValue::of(b_.create<kite::ReduceOp>(
      loc(call), tileType(ref, elem),
      kite::ReduceKindAttr::get(ctx_, kind), *v, b_.getI64IntegerAttr(*dim),
      keepdim ? b_.getUnitAttr() : mlir::UnitAttr()));
}

FailureOr<KValue>
KernelEmitter::emitScan(kite::ScanKind kind, llvm::ArrayRef<const clang::Expr *> args,
                        const clang::Expr *call) {
  std::string opName = "cum" + kite::stringifyScanKind(kind).str();
  FailureOr<Value> v = requireTile(args[0], opName);
  if (failed(v))
    return failure();
  FailureOr<int64_t> dim = emitConstInt(args[1], "the dim of a scan");
  if (failed(dim))
    return failure();
  std::optional<llvm::SmallVector<int64_t>> shape = shapeOf(v->getType());
  if (shape) {
    int64_t rank = shape->size();
    if (*dim < -rank || *dim >= rank) {
      diags_.report(args[1]->getSourceRange(), Diag::ReduceDimOutOfRange)
          << ("'" + opName + "'") << *dim << rank;
      return failure();
    }
  }
  Type elem = kite::getElementTypeOrNull(v->getType());
  if (elem && elem.isInteger() &&
      (kind == kite::ScanKind::sum || kind == kite::ScanKind::prod))
    elem = b_.getI64Type();
  std::optional<llvm::ArrayRef<int64_t>> ref;
  if (shape)
    ref = llvm::ArrayRef<int64_t>(*shape);
  // cummax and cummin also give positions (torch.cummax's (values, indices)).
  bool withIndices = kind == kite::ScanKind::max || kind == kite::ScanKind::min;
  auto op = b_.create<kite::ScanOp>(
      loc(call), tileType(ref, elem), withIndices ? tileType(ref, b_.getI64Type()) : Type(),
      kite::ScanKindAttr::get(ctx_, kind), *v, b_.getI64IntegerAttr(*dim));
  if (!withIndices)
    return KValue::of(op.getResult());
  return KValue::aggregate(KValue::Kind::Tuple,
                           {KValue::of(op.getResult()), KValue::of(op.getIndices())});
}

namespace {
std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream(s) << t;
  return s;
}
} // namespace

/// associative_scan(v, dim, combine) or associative_scan(std::tuple{v, w,
/// ...}, dim, combine): a kite.associative_scan whose region is the
/// lambda, inlined on rank-0 tiles (emitScanCombine).
FailureOr<KValue> KernelEmitter::emitAssociativeScan(llvm::ArrayRef<const clang::Expr *> args,
                                                     const clang::Expr *call) {
  FailureOr<KValue> first = emitExpr(args[0]);
  if (failed(first))
    return failure();
  std::vector<KValue> items =
      first->kind == KValue::Kind::Tuple ? first->elems : std::vector<KValue>{*first};
  llvm::SmallVector<Value> operands;
  for (const KValue &item : items) {
    if (!item.isValue() || !isTile(item.value)) {
      if (item.isValue() && isTensor(item.value))
        diags_.report(args[0]->getSourceRange(), Diag::WholeTensorOp) << "'associative_scan'";
      else
        diags_.report(args[0]->getSourceRange(), Diag::ExpectedKind)
            << "a tile value, or a std::tuple of tile values" << describe(item);
      return failure();
    }
    operands.push_back(item.value);
  }
  FailureOr<int64_t> dim = emitConstInt(args[1], "the dim of a scan");
  if (failed(dim))
    return failure();
  std::optional<llvm::SmallVector<int64_t>> shape = shapeOf(operands[0].getType());
  for (Value v : operands) {
    std::optional<llvm::SmallVector<int64_t>> s = shapeOf(v.getType());
    if (!shape)
      shape = s;
    if (shape && s && *s != *shape) {
      diags_.report(args[0]->getSourceRange(), Diag::ScanShapes)
          << typeText(operands[0].getType()) << typeText(v.getType());
      return failure();
    }
  }
  if (shape) {
    int64_t rank = shape->size();
    if (*dim < -rank || *dim >= rank) {
      diags_.report(args[1]->getSourceRange(), Diag::ReduceDimOutOfRange)
          << "'associative_scan'" << *dim << rank;
      return failure();
    }
  }

  if (auto *ref = dyn_cast<clang::DeclRefExpr>(args[2]->IgnoreParenImpCasts());
      ref && isa<clang::FunctionDecl>(ref->getDecl())) {
    std::string name = ref->getDecl()->getNameAsString();
    diags_.report(args[2]->getSourceRange(), Diag::ScanCombineNotLambda)
        << ("the function '" + name + "' (wrap it: [](auto a, auto b) { return " + name +
            "(a, b); })");
    return failure();
  }
  FailureOr<KValue> fn = emitExpr(args[2]);
  if (failed(fn))
    return failure();
  if (fn->kind != KValue::Kind::Closure || !fn->lambda) {
    diags_.report(args[2]->getSourceRange(), Diag::ScanCombineNotLambda) << describe(*fn);
    return failure();
  }
  // The call operator reference mode calls: of a generic lambda, its
  // instance with 2N parameters.
  size_t n = operands.size();
  const clang::CXXMethodDecl *op = fn->lambda->getCallOperator();
  if (const clang::FunctionTemplateDecl *generic = fn->lambda->getDependentCallOperator()) {
    op = nullptr;
    for (const clang::FunctionDecl *spec : generic->specializations())
      if (spec->getNumParams() == 2 * n)
        op = llvm::cast<clang::CXXMethodDecl>(spec);
  }
  if (!op || op->getNumParams() != 2 * n) {
    unsigned have = op ? op->getNumParams() : fn->lambda->getCallOperator()->getNumParams();
    diags_.report(args[2]->getSourceRange(), Diag::ScanCombineArity)
        << have << static_cast<unsigned>(n) << static_cast<unsigned>(2 * n);
    return failure();
  }

  llvm::SmallVector<Type> resultTypes;
  for (Value v : operands)
    resultTypes.push_back(v.getType());
  auto scan = b_.create<kite::AssociativeScanOp>(loc(call), resultTypes, operands,
                                                 b_.getI64IntegerAttr(*dim));
  if (failed(emitScanCombine(scan, op, args[2], call)))
    return failure();
  if (n == 1)
    return KValue::of(scan.getResult(0));
  std::vector<KValue> results;
  for (Value r : scan.getResults())
    results.push_back(KValue::of(r));
  return KValue::aggregate(KValue::Kind::Tuple, results);
}

/// The region of `scan`: the combine function `op` inlined on 2N rank-0
/// tiles, yielding one value of each operand's dtype.
LogicalResult KernelEmitter::emitScanCombine(kite::AssociativeScanOp scan,
                                             const clang::CXXMethodDecl *op,
                                             const clang::Expr *fnExpr,
                                             const clang::Expr *call) {
  size_t n = scan.getOperands().size();
  mlir::Location l = loc(call);
  mlir::OpBuilder::InsertionGuard guard(b_);
  mlir::Block *body = b_.createBlock(&scan.getCombine());
  std::vector<KValue> params;
  for (size_t i = 0; i < 2 * n; ++i)
    params.push_back(KValue::of(body->addArgument(
        tileType(llvm::ArrayRef<int64_t>{},
                 kite::getElementTypeOrNull(scan.getOperands()[i % n].getType())),
        l)));
  FailureOr<KValue> result = emitInlineCall(op, {}, call, params);
  if (failed(result))
    return failure();
  std::vector<KValue> values = n == 1 ? std::vector<KValue>{*result} : result->elems;
  if ((n > 1 && result->kind != KValue::Kind::Tuple) || values.size() != n) {
    diags_.report(fnExpr->getSourceRange(), Diag::ExpectedKind)
        << ("a std::tuple of " + std::to_string(n) + " values from the combine function")
        << describe(*result);
    return failure();
  }
  // One element of each operand's dtype (a rank or dtype known only after
  // specialization is checked then).
  llvm::SmallVector<Value> yielded;
  for (auto [i, v] : llvm::enumerate(values)) {
    bool tile = v.isValue() && isTile(v.value);
    std::optional<llvm::SmallVector<int64_t>> shape =
        tile ? shapeOf(v.value.getType()) : std::nullopt;
    if (shape && !shape->empty()) {
      diags_.report(fnExpr->getSourceRange(), Diag::ExpectedKind)
          << "one element (a rank-0 tile) from the combine function of associative_scan"
          << ("a tile of rank " + std::to_string(shape->size()) + " for tensor " +
              std::to_string(i));
      return failure();
    }
    Type want = kite::getElementTypeOrNull(scan.getOperands()[i].getType());
    Type have = tile ? kite::getElementTypeOrNull(v.value.getType()) : Type();
    if (!tile || (want && have && want != have)) {
      diags_.report(fnExpr->getSourceRange(), Diag::ScanCombineResult)
          << (describe(v) + (have ? " of " + typeText(have) : std::string()))
          << static_cast<unsigned>(i) << (want ? typeText(want) : "(known at launch)");
      return failure();
    }
    yielded.push_back(v.value);
  }
  b_.create<kite::YieldOp>(l, yielded);
  // From outside, only scalars and one-element tiles.
  mlir::Region &region = scan.getCombine();
  mlir::WalkResult walk = region.walk([&](mlir::Operation *inner) {
    for (Value v : inner->getOperands()) {
      std::optional<llvm::SmallVector<int64_t>> s = shapeOf(v.getType());
      if (region.isAncestor(v.getParentRegion()) || !isTile(v) || !s || s->empty())
        continue;
      diags_.report(fnExpr->getSourceRange(), Diag::ExpectedKind)
          << "only the combine function's arguments, scalars and one-element tiles inside "
             "associative_scan"
          << ("a tile of rank " + std::to_string(s->size()) + " from outside it");
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

FailureOr<KValue>
KernelEmitter::emitSort(llvm::StringRef name, llvm::ArrayRef<const clang::Expr *> args,
                        const clang::Expr *call) {
  bool isTopk = name == "topk";
  FailureOr<Value> v = requireTile(args[0], name);
  if (failed(v))
    return failure();
  // k: a constant here, or a value specialization makes one.
  Value kValue;
  std::optional<int64_t> k;
  if (isTopk) {
    FailureOr<Value> kv = emitI64(args[1]);
    if (failed(kv))
      return failure();
    kValue = *kv;
    k = constantInt(kValue);
  }
  size_t dimArg = isTopk ? 2 : 1;
  FailureOr<int64_t> dim = emitConstInt(args[dimArg], "the dim of a sort");
  if (failed(dim))
    return failure();
  bool descending = isTopk;
  if (args.size() > dimArg + 1) {
    FailureOr<int64_t> flag =
        emitConstInt(args[dimArg + 1], isTopk ? "largest" : "descending");
    if (failed(flag))
      return failure();
    descending = *flag != 0;
  }
  std::optional<llvm::SmallVector<int64_t>> shape = shapeOf(v->getType());
  if (shape) {
    int64_t rank = shape->size();
    if (*dim < -rank || *dim >= rank) {
      diags_.report(args[dimArg]->getSourceRange(), Diag::ReduceDimOutOfRange)
          << ("'" + name.str() + "'") << *dim << rank;
      return failure();
    }
    int64_t d = *dim < 0 ? *dim + rank : *dim;
    if (k && (*k < 0 || ((*shape)[d] != mlir::ShapedType::kDynamic && *k > (*shape)[d]))) {
      diags_.report(args[1]->getSourceRange(), Diag::TopkOutOfRange) << *k << (*shape)[d];
      return failure();
    }
    if (isTopk)
      (*shape)[d] = k ? *k : mlir::ShapedType::kDynamic;
  }
  std::optional<llvm::ArrayRef<int64_t>> ref;
  if (shape)
    ref = llvm::ArrayRef<int64_t>(*shape);
  Type elem = kite::getElementTypeOrNull(v->getType());
  auto op = b_.create<kite::SortOp>(
      loc(call), tileType(ref, elem), tileType(ref, b_.getI64Type()), *v, kValue,
      b_.getI64IntegerAttr(*dim), descending ? b_.getUnitAttr() : mlir::UnitAttr());
  return KValue::aggregate(KValue::Kind::Tuple,
                           {KValue::of(op.getValues()), KValue::of(op.getIndices())});
}

FailureOr<KValue>
KernelEmitter::emitRandom(llvm::StringRef name, llvm::ArrayRef<const clang::Expr *> args,
                          const clang::Expr *call) {
  mlir::Location l = loc(call);
  if ((name == "randint") != (args.size() == 4)) {
    diags_.report(call->getExprLoc(), Diag::UnsupportedKiteApi)
        << ("kite::" + name.str()) << " with these arguments" << call->getSourceRange();
    return failure();
  }
  FailureOr<Value> seed = emitI64(args[0]);
  if (failed(seed))
    return failure();
  FailureOr<Value> offsets = requireTile(args[1], name);
  if (failed(offsets))
    return failure();
  Type offElem = kite::getElementTypeOrNull(offsets->getType());
  if (offElem && (!offElem.isInteger() || offElem.isInteger(1))) {
    std::string what;
    llvm::raw_string_ostream os(what);
    os << "a tile of " << offElem;
    diags_.report(args[1]->getSourceRange(), Diag::ExpectedKind)
        << "an integer tile of offsets" << what;
    return failure();
  }
  std::optional<llvm::SmallVector<int64_t>> shape = shapeOf(offsets->getType());
  std::optional<llvm::ArrayRef<int64_t>> ref;
  if (shape)
    ref = llvm::ArrayRef<int64_t>(*shape);
  kite::RandomKind kind = name == "rand"    ? kite::RandomKind::uniform
                          : name == "randn" ? kite::RandomKind::normal
                                            : kite::RandomKind::bits;
  Type elem = kind == kite::RandomKind::bits ? Type(b_.getI64Type()) : Type(b_.getF32Type());
  Value draw = b_.create<kite::RandomOp>(l, tileType(ref, elem),
                                         kite::RandomKindAttr::get(ctx_, kind), *seed,
                                         *offsets);
  if (kind != kite::RandomKind::bits)
    return KValue::of(draw);
  // randint: low + bits % (high - low), the 63 bits being nonnegative.
  FailureOr<Value> low = emitI64(args[2]);
  FailureOr<Value> high = failed(low) ? FailureOr<Value>(failure()) : emitI64(args[3]);
  if (failed(high))
    return failure();
  std::optional<int64_t> lo = constantInt(*low), hi = constantInt(*high);
  if (lo && hi && *lo >= *hi) {
    diags_.report(call->getSourceRange(), Diag::BadRandintRange) << *lo << *hi;
    return failure();
  }
  Value span = b_.create<mlir::arith::SubIOp>(l, *high, *low);
  FailureOr<Value> r = binaryValues(kite::BinaryKind::mod, draw, span, l, call);
  if (failed(r))
    return failure();
  r = binaryValues(kite::BinaryKind::add, *r, *low, l, call);
  if (failed(r))
    return failure();
  return KValue::of(*r);
}

FailureOr<llvm::SmallVector<int64_t>>
KernelEmitter::emitIntList(const clang::Expr *e, llvm::StringRef what) {
  llvm::SmallVector<int64_t> result;
  if (std::optional<llvm::SmallVector<const clang::Expr *>> elems =
          listElements(e)) {
    for (const clang::Expr *elem : *elems) {
      FailureOr<int64_t> v = emitConstInt(elem, what);
      if (failed(v))
        return failure();
      result.push_back(*v);
    }
    return result;
  }
  FailureOr<KValue> list = emitExpr(e);
  if (failed(list))
    return failure();
  for (const KValue &elem : list->elems) {
    std::optional<int64_t> c = constantInt(elem.value);
    if (!c) {
      diags_.report(e->getSourceRange(), Diag::NotConstant) << what;
      return failure();
    }
    result.push_back(*c);
  }
  return result;
}

FailureOr<KValue>
KernelEmitter::emitShapeOp(llvm::StringRef name, const clang::Expr *self,
                           llvm::ArrayRef<const clang::Expr *> args,
                           const clang::Expr *call) {
  mlir::Location l = loc(call);
  FailureOr<Value> v = emitValue(self);
  if (failed(v))
    return failure();

  if ((name == "reshape" || name == "view") && isTensor(*v) && args.size() == 1) {
    if (deviceDepth_ > 0) {
      diags_.report(call->getSourceRange(), Diag::HostOnly)
          << name << "; reshape a tile value instead";
      return failure();
    }
    FailureOr<llvm::SmallVector<Value>> sizes = emitDims(args[0], false);
    if (failed(sizes))
      return failure();
    llvm::SmallVector<int64_t> dims = staticDims(*sizes);
    return KValue::of(b_.create<kite::TensorReshapeOp>(
        l, tensorType(llvm::ArrayRef<int64_t>(dims),
                      kite::getElementTypeOrNull(v->getType())),
        *v, *sizes, name == "view"));
  }
  if (!isTile(*v)) {
    if (isTensor(*v)) {
      diags_.report(self->getSourceRange(), Diag::WholeTensorOp)
          << ("'" + name.str() + "'");
      return failure();
    }
    diags_.report(self->getSourceRange(), Diag::ExpectedKind)
        << "a tile value" << describe(KValue::of(*v));
    return failure();
  }
  Type elem = kite::getElementTypeOrNull(v->getType());
  std::optional<llvm::SmallVector<int64_t>> shape = shapeOf(v->getType());
  std::optional<int64_t> rank;
  if (shape)
    rank = shape->size();
  auto result = [&](std::optional<llvm::SmallVector<int64_t>> s) {
    std::optional<llvm::ArrayRef<int64_t>> ref;
    if (s)
      ref = llvm::ArrayRef<int64_t>(*s);
    return tileType(ref, elem);
  };

  if (name == "unsqueeze" && args.size() == 1) {
    FailureOr<int64_t> dim = emitConstInt(args[0], "the dim of unsqueeze()");
    if (failed(dim))
      return failure();
    std::optional<llvm::SmallVector<int64_t>> s;
    if (rank) {
      FailureOr<int64_t> d = checkDim(*dim, *rank + 1, args[0], "a tile", *rank);
      if (failed(d))
        return failure();
      s = *shape;
      s->insert(s->begin() + *d, 1);
    }
    return KValue::of(b_.create<kite::UnsqueezeOp>(
        l, result(s), *v, b_.getI64IntegerAttr(*dim)));
  }
  if (name == "squeeze" && args.size() <= 1) {
    if (args.empty()) {
      diags_.report(call->getSourceRange(), Diag::UnsupportedKiteApi)
          << "kite::Tensor::squeeze()" << " without a dim; use squeeze(dim)";
      return failure();
    }
    FailureOr<int64_t> dim = emitConstInt(args[0], "the dim of squeeze()");
    if (failed(dim))
      return failure();
    std::optional<llvm::SmallVector<int64_t>> s;
    if (rank) {
      FailureOr<int64_t> d = checkDim(*dim, rank, args[0], "a tile");
      if (failed(d))
        return failure();
      // As in PyTorch, squeezing a dimension whose size is not 1 is a no-op.
      int64_t size = (*shape)[*d];
      if (!mlir::ShapedType::isDynamic(size) && size != 1)
        return KValue::of(*v);
      s = *shape;
      s->erase(s->begin() + *d);
    }
    return KValue::of(b_.create<kite::SqueezeOp>(l, result(s), *v,
                                                 b_.getI64IntegerAttr(*dim)));
  }
  if (name == "transpose" && args.size() == 2) {
    FailureOr<int64_t> d0 = emitConstInt(args[0], "the dims of transpose()");
    if (failed(d0))
      return failure();
    FailureOr<int64_t> d1 = emitConstInt(args[1], "the dims of transpose()");
    if (failed(d1))
      return failure();
    std::optional<llvm::SmallVector<int64_t>> s;
    if (rank) {
      FailureOr<int64_t> n0 = checkDim(*d0, rank, args[0], "a tile");
      if (failed(n0))
        return failure();
      FailureOr<int64_t> n1 = checkDim(*d1, rank, args[1], "a tile");
      if (failed(n1))
        return failure();
      s = *shape;
      std::swap((*s)[*n0], (*s)[*n1]);
    }
    return KValue::of(b_.create<kite::TransposeOp>(
        l, result(s), *v, b_.getI64IntegerAttr(*d0),
        b_.getI64IntegerAttr(*d1)));
  }
  if (name == "permute" && args.size() == 1) {
    FailureOr<llvm::SmallVector<int64_t>> dims =
        emitIntList(args[0], "the dims of permute()");
    if (failed(dims))
      return failure();
    std::optional<llvm::SmallVector<int64_t>> s;
    if (rank) {
      if ((int64_t)dims->size() != *rank) {
        diags_.report(args[0]->getSourceRange(), Diag::ExpectedKind)
            << ("a permutation of " + std::to_string(*rank) + " dims")
            << ("a list of " + std::to_string(dims->size()));
        return failure();
      }
      s.emplace();
      llvm::SmallVector<bool> seen(*rank, false);
      for (int64_t d : *dims) {
        FailureOr<int64_t> n = checkDim(d, rank, args[0], "a tile");
        if (failed(n))
          return failure();
        if (seen[*n]) {
          diags_.report(args[0]->getSourceRange(), Diag::ExpectedKind)
              << ("a permutation of " + std::to_string(*rank) + " dims")
              << "a list that repeats a dim";
          return failure();
        }
        seen[*n] = true;
        s->push_back((*shape)[*n]);
      }
    } else {
      s = llvm::SmallVector<int64_t>(dims->size(), mlir::ShapedType::kDynamic);
    }
    return KValue::of(b_.create<kite::PermuteOp>(l, result(s), *v, *dims));
  }
  if ((name == "reshape" || name == "view" || name == "expand") &&
      args.size() == 1) {
    FailureOr<llvm::SmallVector<Value>> dims = emitDims(args[0], true);
    if (failed(dims))
      return failure();
    llvm::SmallVector<int64_t> s = staticDims(*dims);
    if (name == "expand" && rank && *rank > (int64_t)dims->size()) {
      diags_.report(args[0]->getSourceRange(), Diag::ExpectedKind)
          << ("at least " + std::to_string(*rank) + " sizes to expand to")
          << ("a list of " + std::to_string(dims->size()));
      return failure();
    }
    if (name == "expand" && shape) {
      // -1 keeps the operand's size (dims align from the right).
      for (size_t i = 0; i < dims->size(); ++i) {
        std::optional<int64_t> c = constantInt((*dims)[i]);
        int64_t src = (int64_t)i - ((int64_t)dims->size() - *rank);
        if (c && *c == -1 && src >= 0)
          s[i] = (*shape)[src];
      }
    }
    if (name == "expand")
      return KValue::of(b_.create<kite::ExpandOp>(l, result(s), *v, *dims));
    return KValue::of(b_.create<kite::ReshapeOp>(l, result(s), *v, *dims));
  }
  diags_.report(call->getExprLoc(), Diag::UnsupportedKiteApi)
      << ("kite::" + name.str()) << " with these arguments"
      << call->getSourceRange();
  return failure();
}

FailureOr<KValue>
KernelEmitter::emitMatmul(llvm::StringRef name,
                          llvm::ArrayRef<const clang::Expr *> args,
                          const clang::Expr *call) {
  bool hasAcc = name == "addmm" || name == "baddbmm";
  // bmm(a, b, out_dtype), as torch.bmm's out_dtype: a constant dtype, kept
  // as the op's attribute.
  mlir::TypeAttr outDtype;
  if (name == "bmm" && args.size() == 3) {
    FailureOr<Value> d = emitDType(args[2]);
    if (failed(d))
      return failure();
    auto c = d->getDefiningOp<kite::DTypeConstOp>();
    if (!c) {
      diags_.report(args[2]->getSourceRange(), Diag::UnsupportedKiteApi)
          << "kite::bmm" << " with an out_dtype that is not a constant dtype (write f32)";
      return failure();
    }
    outDtype = c.getDtypeAttr();
    if (c->use_empty())
      c->erase();
    args = args.drop_back();
  }
  if (args.size() != (hasAcc ? 3u : 2u)) {
    diags_.report(call->getSourceRange(), Diag::UnsupportedKiteApi)
        << ("kite::" + name.str()) << " with these arguments";
    return failure();
  }
  llvm::SmallVector<Value> ops;
  for (const clang::Expr *arg : args) {
    FailureOr<Value> v = requireTile(arg, name);
    if (failed(v))
      return failure();
    ops.push_back(*v);
  }
  mlir::Location l = loc(call);
  Value a = ops[hasAcc ? 1 : 0], b = ops[hasAcc ? 2 : 1];
  int64_t rank = (name == "bmm" || name == "baddbmm") ? 3 : 2;
  for (auto [arg, v] : llvm::zip(args, ops)) {
    std::optional<int64_t> r = kite::getRankOf(v.getType());
    if (name == "matmul" && r && *r == 0) {
      diags_.report(arg->getSourceRange(), Diag::ExpectedKind)
          << "a tile of rank 1 or more" << "a tile of rank 0";
      return failure();
    }
    if (name != "matmul" && r && *r != rank) {
      diags_.report(arg->getSourceRange(), Diag::ExpectedKind)
          << ("a tile of rank " + std::to_string(rank))
          << ("a tile of rank " + std::to_string(*r));
      return failure();
    }
  }
  Type ea = kite::getElementTypeOrNull(a.getType());
  Type eb = kite::getElementTypeOrNull(b.getType());
  std::optional<llvm::SmallVector<int64_t>> sa = shapeOf(a.getType());
  std::optional<llvm::SmallVector<int64_t>> sb = shapeOf(b.getType());
  int64_t dyn = mlir::ShapedType::kDynamic;

  if (hasAcc) {
    Value acc = ops[0];
    Type elem = kite::getElementTypeOrNull(acc.getType());
    llvm::SmallVector<int64_t> shape(rank, dyn);
    if (std::optional<llvm::SmallVector<int64_t>> s = shapeOf(acc.getType()))
      if ((int64_t)s->size() == rank)
        shape = *s;
    Type type = tileType(llvm::ArrayRef<int64_t>(shape), elem);
    if (name == "addmm")
      return KValue::of(b_.create<kite::AddmmOp>(l, type, acc, a, b));
    return KValue::of(b_.create<kite::BaddbmmOp>(l, type, acc, a, b));
  }

  Type elem;
  if (ea && eb) {
    elem = promote(a.getType(), b.getType());
    if (name == "dot" && isNarrow(ea) && isNarrow(eb))
      elem = b_.getF32Type();
  }
  if (outDtype)
    elem = outDtype.getValue();
  if (name == "dot" || name == "bmm") {
    llvm::SmallVector<int64_t> shape(rank, dyn);
    if (sa)
      for (int64_t i = 0; i < rank - 1; ++i)
        shape[i] = (*sa)[i];
    if (sb)
      shape[rank - 1] = (*sb)[rank - 1];
    Type type = tileType(llvm::ArrayRef<int64_t>(shape), elem);
    if (name == "dot")
      return KValue::of(b_.create<kite::DotOp>(l, type, a, b));
    return KValue::of(b_.create<kite::BmmOp>(l, type, a, b, outDtype));
  }
  // matmul: 1-D and batched operands, as torch.matmul.
  std::optional<llvm::SmallVector<int64_t>> shape;
  if (sa && sb) {
    int64_t ra = sa->size(), rb = sb->size();
    if (ra == 1 && rb == 1)
      shape.emplace();
    else if (ra == 1)
      shape = llvm::SmallVector<int64_t>{(*sb)[rb - 1]};
    else if (rb == 1)
      shape = llvm::SmallVector<int64_t>(sa->begin(), sa->end() - 1);
    else {
      int64_t r = std::max(ra, rb);
      shape = llvm::SmallVector<int64_t>(r, dyn);
      (*shape)[r - 2] = (*sa)[ra - 2];
      (*shape)[r - 1] = (*sb)[rb - 1];
    }
  }
  std::optional<llvm::ArrayRef<int64_t>> ref;
  if (shape)
    ref = llvm::ArrayRef<int64_t>(*shape);
  return KValue::of(b_.create<kite::MatmulOp>(l, tileType(ref, elem), a, b));
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

mlir::Value KernelEmitter::dtypeConst(Type elem, mlir::Location l) {
  return b_.create<kite::DTypeConstOp>(l, mlir::TypeAttr::get(elem));
}

FailureOr<Value> KernelEmitter::emitDType(const clang::Expr *e) {
  // A constant dtype: kite::f32, DType::bf16, a constexpr variable, ...
  clang::Expr::EvalResult result;
  if (!e->isValueDependent() && e->EvaluateAsRValue(result, ast_) &&
      result.Val.isInt()) {
    const clang::EnumDecl *dtypeEnum = nullptr;
    if (auto *et = e->getType()->getAs<clang::EnumType>())
      dtypeEnum = et->getDecl();
    if (dtypeEnum && kiteName(dtypeEnum) == "DType") {
      for (const clang::EnumConstantDecl *c : dtypeEnum->enumerators()) {
        if (c->getInitVal() == result.Val.getInt()) {
          if (Type elem = dtypeFromName(c->getName(), ctx_))
            return dtypeConst(elem, loc(e));
        }
      }
    }
    diags_.report(e->getSourceRange(), Diag::UnknownDType);
    return failure();
  }
  const clang::Expr *s = strip(e);
  if (auto *ref = dyn_cast<clang::DeclRefExpr>(s)) {
    if (!lookup(ref->getDecl())) {
      diags_.report(e->getSourceRange(), Diag::UnknownDType);
      return failure();
    }
  }
  FailureOr<Value> v = emitValue(e);
  if (failed(v))
    return failure();
  if (!isa<kite::DTypeType>(v->getType())) {
    diags_.report(e->getSourceRange(), Diag::UnknownDType);
    return failure();
  }
  return *v;
}

FailureOr<llvm::SmallVector<Value>>
KernelEmitter::emitDims(const clang::Expr *e, bool allowSpans) {
  llvm::SmallVector<Value> dims;
  std::optional<llvm::SmallVector<const clang::Expr *>> elems = listElements(e);
  auto addDim = [&](const KValue &v, const clang::Expr *where) -> LogicalResult {
    if (v.isValue() || v.kind == KValue::Kind::BlockSize) {
      if (allowSpans && isSpan(v.value)) {
        dims.push_back(v.value);
        return success();
      }
      if (v.value.getType().isInteger() && !v.value.getType().isInteger(1)) {
        dims.push_back(castScalar(v.value, b_.getI64Type(),
                                  where->getType()->isUnsignedIntegerType(),
                                  loc(where)));
        return success();
      }
    }
    diags_.report(where->getSourceRange(), Diag::ExpectedKind)
        << (allowSpans ? "a size (an integer, a tile or a block size)"
                       : "a size (an integer or a block size)")
        << describe(v);
    return failure();
  };
  if (elems) {
    for (const clang::Expr *elem : *elems) {
      elem = unwrapConversion(elem);
      if (std::optional<Value> c = tryConstI64(elem)) {
        dims.push_back(*c);
        continue;
      }
      FailureOr<KValue> v = emitExpr(elem);
      if (failed(v) || failed(addDim(*v, elem)))
        return failure();
    }
    return dims;
  }
  FailureOr<KValue> list = emitExpr(e);
  if (failed(list))
    return failure();
  if (list->kind != KValue::Kind::List) {
    diags_.report(e->getSourceRange(), Diag::ExpectedKind)
        << "a list of sizes" << describe(*list);
    return failure();
  }
  for (const KValue &v : list->elems)
    if (failed(addDim(v, e)))
      return failure();
  return dims;
}

llvm::SmallVector<int64_t>
KernelEmitter::staticDims(llvm::ArrayRef<Value> dims) {
  llvm::SmallVector<int64_t> result;
  for (Value d : dims) {
    std::optional<int64_t> c = constantInt(d);
    result.push_back(c && *c >= 0 ? *c : mlir::ShapedType::kDynamic);
  }
  return result;
}

FailureOr<KValue>
KernelEmitter::emitCreate(llvm::StringRef name,
                          llvm::ArrayRef<const clang::Expr *> args,
                          const clang::Expr *call) {
  mlir::Location l = loc(call);
  bool host = deviceDepth_ == 0;
  auto unsupported = [&](llvm::StringRef hint) -> FailureOr<KValue> {
    diags_.report(call->getExprLoc(), Diag::UnsupportedKiteApi)
        << ("kite::" + name.str()) << hint << call->getSourceRange();
    return failure();
  };

  if (name == "arange") {
    if (host) {
      diags_.report(call->getSourceRange(), Diag::DeviceOnly) << "'arange'";
      return failure();
    }
    Value begin, end;
    if (args.size() == 1) {
      begin = constI64(0, l);
      FailureOr<Value> n = emitI64(args[0]);
      if (failed(n))
        return failure();
      end = *n;
    } else {
      FailureOr<Value> b = emitI64(args[0]);
      if (failed(b))
        return failure();
      FailureOr<Value> e = emitI64(args[1]);
      if (failed(e))
        return failure();
      begin = *b;
      end = *e;
    }
    int64_t extent = mlir::ShapedType::kDynamic;
    std::optional<int64_t> cb = constantInt(begin), ce = constantInt(end);
    if (cb && ce && *ce >= *cb)
      extent = *ce - *cb;
    return KValue::of(b_.create<kite::ArangeOp>(
        l, tileType(llvm::ArrayRef<int64_t>{extent}, b_.getI64Type()), begin,
        end));
  }

  bool like = name.ends_with("_like");
  if (like) {
    FailureOr<Value> x = emitValue(args[0]);
    if (failed(x))
      return failure();
    if (!host || !isTensor(*x))
      return unsupported(" on a tile value; use zeros({...}) or full({...})");
    if (name == "ones_like" || name == "full_like")
      return unsupported(
          " for a tensor; allocate with empty_like or zeros_like and fill it "
          "in a tile loop");
    bool zeroed = name == "zeros_like";
    if (args.size() == 1)
      return KValue::of(
          b_.create<kite::EmptyLikeOp>(l, x->getType(), *x, zeroed));
    // With a dtype: an empty of the same sizes, when the rank is known.
    std::optional<llvm::SmallVector<int64_t>> shape = shapeOf(x->getType());
    if (!shape) {
      diags_.report(call->getSourceRange(), Diag::UnknownRank)
          << ("'" + name.str() + "' with a dtype")
          << "; use empty({x.size(0), ...}, dtype)";
      return failure();
    }
    FailureOr<Value> dt = emitDType(args[1]);
    if (failed(dt))
      return failure();
    llvm::SmallVector<Value> sizes;
    for (int64_t d = 0; d < (int64_t)shape->size(); ++d)
      sizes.push_back(
          b_.create<kite::SizeOp>(l, *x, b_.getI64IntegerAttr(d)));
    return KValue::of(b_.create<kite::EmptyOp>(
        l, tensorType(llvm::ArrayRef<int64_t>(*shape), constantDType(*dt)),
        sizes, *dt, zeroed));
  }

  // empty/zeros/ones/full(dims, [value,] dtype)
  bool isFull = name == "full";
  if (args.size() != (isFull ? 3u : 2u))
    return unsupported(" with these arguments");
  FailureOr<Value> dt = Value();
  if (host) {
    if (name == "ones" || name == "full")
      return unsupported(
          " outside a tile loop; allocate with empty or zeros and fill the "
          "tensor in a tile loop");
    FailureOr<llvm::SmallVector<Value>> sizes = emitDims(args[0], false);
    if (failed(sizes))
      return failure();
    dt = emitDType(args[1]);
    if (failed(dt))
      return failure();
    llvm::SmallVector<int64_t> s = staticDims(*sizes);
    return KValue::of(b_.create<kite::EmptyOp>(
        l, tensorType(llvm::ArrayRef<int64_t>(s), constantDType(*dt)), *sizes,
        *dt, name == "zeros"));
  }
  if (name == "empty") {
    diags_.report(call->getSourceRange(), Diag::HostOnly)
        << "empty" << "; use zeros({...}) or full({...}) for a tile";
    return failure();
  }
  FailureOr<llvm::SmallVector<Value>> dims = emitDims(args[0], true);
  if (failed(dims))
    return failure();
  Value value;
  if (isFull) {
    FailureOr<Value> v = emitScalar(args[1]);
    if (failed(v))
      return failure();
    value = *v;
  }
  dt = emitDType(args[isFull ? 2 : 1]);
  if (failed(dt))
    return failure();
  Type elem = constantDType(*dt);
  if (!value) {
    double fill = name == "ones" ? 1.0 : 0.0;
    Type t = elem ? elem : Type(b_.getF32Type());
    value = t.isInteger() ? constInt(t, (int64_t)fill, l) : constFloat(t, fill, l);
  }
  llvm::SmallVector<int64_t> s = staticDims(*dims);
  return KValue::of(b_.create<kite::FullOp>(
      l, tileType(llvm::ArrayRef<int64_t>(s), elem), *dims, value, *dt));
}

//===----------------------------------------------------------------------===//
// Subscripts, loads and stores
//===----------------------------------------------------------------------===//

LogicalResult KernelEmitter::addSubscriptIndex(const KValue &idx,
                                               const clang::Expr *e,
                                               Subscript &sub) {
  switch (idx.kind) {
  case KValue::Kind::All:
    sub.layout.push_back(kite::kSubscriptAll);
    return success();
  case KValue::Kind::NewAxis:
    sub.layout.push_back(kite::kSubscriptNewAxis);
    return success();
  case KValue::Kind::Tuple:
    for (const KValue &elem : idx.elems)
      if (failed(addSubscriptIndex(elem, e, sub)))
        return failure();
    return success();
  case KValue::Kind::Value:
  case KValue::Kind::BlockSize: {
    Value v = idx.value;
    if (isSpan(v) || (isTile(v) && kite::isIntegerLike(v.getType()))) {
      sub.layout.push_back(sub.indices.size());
      sub.indices.push_back(v);
      return success();
    }
    if (v.getType().isInteger() && !v.getType().isInteger(1)) {
      sub.layout.push_back(sub.indices.size());
      sub.indices.push_back(castScalar(v, b_.getI64Type(),
                                       e->getType()->isUnsignedIntegerType(),
                                       loc(e)));
      return success();
    }
    break;
  }
  default:
    break;
  }
  diags_.report(e->getSourceRange(), Diag::BadSubscript) << describe(idx);
  return failure();
}

FailureOr<KernelEmitter::Subscript>
KernelEmitter::emitSubscript(const clang::Expr *tensorExpr,
                             llvm::ArrayRef<const clang::Expr *> indexExprs,
                             const clang::Expr *whole, bool isStore) {
  FailureOr<KValue> base = emitExpr(tensorExpr);
  if (failed(base))
    return failure();
  if (isStore && !(base->isValue() && isTensor(base->value))) {
    diags_.report(whole->getSourceRange(), Diag::StoreNotSubscript)
        << ("this indexes " + describe(*base) + ", not a tensor");
    return failure();
  }
  if (!base->isValue() || !isTensor(base->value)) {
    diags_.report(tensorExpr->getSourceRange(), Diag::ExpectedKind)
        << "a tensor to index" << describe(*base);
    return failure();
  }
  if (deviceDepth_ == 0) {
    diags_.report(whole->getSourceRange(), Diag::DeviceOnly)
        << "indexing a tensor (a load or a store)";
    return failure();
  }
  Subscript sub;
  sub.tensor = base->value;
  for (const clang::Expr *index : indexExprs) {
    const clang::Expr *e = unwrapConversion(index);
    if (std::optional<Value> c = tryConstI64(e)) {
      sub.layout.push_back(sub.indices.size());
      sub.indices.push_back(*c);
      continue;
    }
    FailureOr<KValue> idx = emitExpr(e);
    if (failed(idx) || failed(addSubscriptIndex(*idx, e, sub)))
      return failure();
  }
  int64_t consumed = llvm::count_if(
      sub.layout, [](int32_t e) { return e != kite::kSubscriptNewAxis; });
  if (std::optional<int64_t> rank = kite::getRankOf(sub.tensor.getType())) {
    if (consumed > *rank) {
      std::string what = "the tensor";
      if (auto *ref = dyn_cast<clang::DeclRefExpr>(strip(tensorExpr)))
        what = "'" + ref->getDecl()->getName().str() + "'";
      diags_.report(whole->getSourceRange(), Diag::TooManySubscripts)
          << what << *rank << consumed;
      return failure();
    }
  }
  return sub;
}

Type KernelEmitter::loadResultType(const Subscript &sub) {
  auto tensor = llvm::cast<kite::TensorType>(sub.tensor.getType());
  Type elem = tensor.getElementType();
  if (!tensor.hasRank())
    return unrankedTile(elem);
  llvm::ArrayRef<int64_t> tshape = tensor.getShape();
  llvm::SmallVector<int64_t> shape;
  int64_t consumed = 0;
  bool sawGather = false;
  for (int32_t e : sub.layout) {
    if (e == kite::kSubscriptNewAxis) {
      shape.push_back(1);
      continue;
    }
    int64_t dim = tshape[consumed++];
    if (e == kite::kSubscriptAll) {
      shape.push_back(dim);
      continue;
    }
    Value idx = sub.indices[e];
    if (isSpan(idx)) {
      shape.push_back(mlir::ShapedType::kDynamic);
    } else if (isTile(idx)) {
      std::optional<llvm::SmallVector<int64_t>> s = shapeOf(idx.getType());
      if (!s)
        return unrankedTile(elem);
      if (!sawGather)
        shape.append(s->begin(), s->end());
      sawGather = true;
    }
  }
  shape.append(tshape.begin() + consumed, tshape.end());
  return tileType(llvm::ArrayRef<int64_t>(shape), elem);
}

FailureOr<KValue> KernelEmitter::emitLoad(const Subscript &sub, Value mask,
                                          mlir::Location l) {
  return KValue::of(b_.create<kite::LoadOp>(l, loadResultType(sub), sub.tensor,
                                            sub.indices, mask, sub.layout));
}

FailureOr<Value> KernelEmitter::emitMask(const clang::Expr *e) {
  FailureOr<Value> m = emitValue(e);
  if (failed(m))
    return failure();
  Type elem = kite::getElementTypeOrNull(m->getType());
  if ((!isTile(*m) && !m->getType().isInteger(1)) ||
      (elem && !elem.isInteger(1))) {
    diags_.report(e->getSourceRange(), Diag::ExpectedKind)
        << "a boolean mask" << describe(KValue::of(*m));
    return failure();
  }
  return *m;
}

LogicalResult KernelEmitter::checkStoredRank(const Subscript &sub, Value value,
                                             const clang::Expr *where) {
  std::optional<int64_t> valueRank = kite::getRankOf(value.getType());
  std::optional<int64_t> targetRank = kite::getRankOf(loadResultType(sub));
  if (valueRank && targetRank && *valueRank > *targetRank) {
    diags_.report(where->getSourceRange(), Diag::StoreRank)
        << *valueRank << *targetRank;
    return failure();
  }
  return success();
}

LogicalResult KernelEmitter::emitStore(const Subscript &sub, Value value,
                                       Value mask, mlir::Location l,
                                       const clang::Expr *where) {
  if (failed(checkStoredRank(sub, value, where)))
    return failure();
  b_.create<kite::StoreOp>(l, value, sub.tensor, sub.indices, mask,
                           sub.layout);
  return success();
}

const clang::CXXOperatorCallExpr *
KernelEmitter::asSubscript(const clang::Expr *e) {
  auto *op = dyn_cast<clang::CXXOperatorCallExpr>(strip(e));
  if (!op || op->getOperator() != clang::OO_Subscript)
    return nullptr;
  if (kiteName(op->getDirectCallee()) != "Tensor::operator[]")
    return nullptr;
  return op;
}

FailureOr<KValue>
KernelEmitter::emitTensorAssign(std::optional<kite::BinaryKind> op,
                                const clang::Expr *target,
                                const clang::Expr *valueExpr,
                                const clang::Expr *call) {
  mlir::Location l = loc(call);
  if (const clang::CXXOperatorCallExpr *subExpr = asSubscript(target)) {
    // x[...] = v, x[...] op= v: a store (after a load for op=).
    llvm::SmallVector<const clang::Expr *> indices(subExpr->arg_begin() + 1,
                                                   subExpr->arg_end());
    FailureOr<Subscript> sub =
        emitSubscript(subExpr->getArg(0), indices, call, /*isStore=*/true);
    if (failed(sub))
      return failure();
    FailureOr<KValue> v = emitExpr(valueExpr);
    if (failed(v))
      return failure();
    FailureOr<Value> value = elementwiseOperand(*v, valueExpr, "store");
    if (failed(value))
      return failure();
    Value stored = *value;
    if (op) {
      FailureOr<KValue> old = emitLoad(*sub, Value(), l);
      FailureOr<Value> r = binaryValues(*op, old->value, stored, l, call);
      if (failed(r))
        return failure();
      stored = *r;
    }
    if (failed(emitStore(*sub, stored, Value(), l, call)))
      return failure();
    return KValue::none();
  }

  const clang::Expr *stripped = strip(target);
  if (isa<clang::DeclRefExpr>(stripped)) {
    // acc = v, acc op= v: rebind the variable.
    FailureOr<KValue> v = emitExpr(valueExpr);
    if (failed(v))
      return failure();
    if (!op) {
      if (failed(assignTo(stripped, *v, call)))
        return failure();
      return *v;
    }
    FailureOr<KValue> old = emitExpr(stripped);
    if (failed(old))
      return failure();
    FailureOr<Value> a = elementwiseOperand(*old, stripped, "op=");
    if (failed(a))
      return failure();
    FailureOr<Value> b = elementwiseOperand(*v, valueExpr, "op=");
    if (failed(b))
      return failure();
    FailureOr<Value> r = binaryValues(*op, *a, *b, l, call);
    if (failed(r))
      return failure();
    // In-place ops keep the variable's dtype (PyTorch's rule).
    Value result = *r;
    if (isTile(*a) && isTile(result)) {
      auto tile = llvm::cast<kite::TileType>(result.getType());
      if (Type elem = kite::getElementTypeOrNull(a->getType()))
        if (elem != tile.getElementType())
          result = b_.create<kite::CastOp>(
              l, tileType(tile.getOptionalShape(), elem), result,
              dtypeConst(elem, l));
    }
    if (failed(assignTo(stripped, KValue::of(result), call)))
      return failure();
    return KValue::of(result);
  }

  FailureOr<KValue> t = emitExpr(target);
  if (failed(t))
    return failure();
  diags_.report(call->getSourceRange(), Diag::StoreNotSubscript)
      << ("this is " + describe(*t));
  return failure();
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

FailureOr<LoopSpec>
KernelEmitter::emitLoopSpec(const clang::Expr *range, llvm::StringRef &kind) {
  auto *call = dyn_cast<clang::CallExpr>(strip(range));
  const clang::FunctionDecl *callee = call ? call->getDirectCallee() : nullptr;
  std::string name = kiteName(callee);
  if (name != "tile" && name != "grid") {
    diags_.report(range->getSourceRange(), Diag::LoopRangeNotTile);
    return failure();
  }
  kind = name == "tile" ? "tile" : "grid";
  LoopSpec spec;
  spec.isGrid = name == "grid";
  llvm::SmallVector<Value> blockSizes; // null: tunable
  mlir::Location l = loc(call);

  for (unsigned i = 0; i < call->getNumArgs() && i < callee->getNumParams();
       ++i) {
    const clang::ParmVarDecl *param = callee->getParamDecl(i);
    if (isSrcLocParam(param))
      continue;
    const clang::Expr *arg = call->getArg(i);
    clang::QualType pt = param->getType();
    if (isKiteClass(pt, "BlockSize")) {
      FailureOr<KValue> bs = emitExpr(arg);
      if (failed(bs))
        return failure();
      if (bs->kind != KValue::Kind::BlockSize || blockSizes.empty()) {
        diags_.report(arg->getSourceRange(), Diag::BadTileArg)
            << kind << describe(*bs);
        return failure();
      }
      blockSizes.back() = bs->value;
      continue;
    }
    if (isKiteClass(pt, "LoopDim")) {
      if (std::optional<Value> c = tryConstI64(unwrapConversion(arg))) {
        spec.lowerBounds.push_back(constI64(0, loc(arg)));
        spec.upperBounds.push_back(*c);
        blockSizes.push_back(Value());
        continue;
      }
      FailureOr<KValue> dim = emitExpr(arg);
      if (failed(dim))
        return failure();
      if (dim->kind == KValue::Kind::Range) {
        spec.lowerBounds.push_back(dim->elems[0].value);
        spec.upperBounds.push_back(dim->elems[1].value);
      } else if (dim->isValue() && dim->value.getType().isInteger()) {
        spec.lowerBounds.push_back(constI64(0, loc(arg)));
        spec.upperBounds.push_back(castScalar(
            dim->value, b_.getI64Type(),
            strip(arg)->getType()->isUnsignedIntegerType(), loc(arg)));
      } else {
        diags_.report(arg->getSourceRange(), Diag::BadTileArg)
            << kind << describe(*dim);
        return failure();
      }
      blockSizes.push_back(Value());
      continue;
    }
    // tile(std::vector<int64_t>): one dimension per size.
    const clang::Expr *s = strip(arg);
    auto *sizesCall = dyn_cast<clang::CXXMemberCallExpr>(s);
    if (sizesCall && kiteName(sizesCall->getMethodDecl()) == "Tensor::sizes") {
      FailureOr<Value> x = emitValue(sizesCall->getImplicitObjectArgument());
      if (failed(x))
        return failure();
      std::optional<int64_t> rank =
          isTensor(*x) ? kite::getRankOf(x->getType()) : std::nullopt;
      if (!rank) {
        // A kernel parameter's rank: the kernel is captured once per rank
        // instead (Capture.cpp), unless one rank is assumed already.
        auto param = dyn_cast<mlir::BlockArgument>(*x);
        if (param && param.getOwner() == &func_.getBody().front() && !assumedRank_) {
          wantsRank_ = param.getArgNumber();
          return failure();
        }
        std::string what = "x.sizes()";
        if (auto *ref = dyn_cast<clang::DeclRefExpr>(
                sizesCall->getImplicitObjectArgument()->IgnoreParenImpCasts()))
          what = ref->getDecl()->getNameAsString() + ".sizes()";
        diags_.report(arg->getSourceRange(), Diag::UnknownRankTile) << what;
        return failure();
      }
      for (int64_t d = 0; d < *rank; ++d) {
        spec.lowerBounds.push_back(constI64(0, l));
        spec.upperBounds.push_back(
            b_.create<kite::SizeOp>(l, *x, b_.getI64IntegerAttr(d)));
        blockSizes.push_back(Value());
      }
      continue;
    }
    FailureOr<KValue> list = emitExpr(arg);
    if (failed(list))
      return failure();
    if (list->kind != KValue::Kind::List) {
      diags_.report(arg->getSourceRange(), Diag::BadTileArg)
          << kind << describe(*list);
      return failure();
    }
    for (const KValue &elem : list->elems) {
      if (!elem.isValue() || !elem.value.getType().isInteger()) {
        diags_.report(arg->getSourceRange(), Diag::BadTileArg)
            << kind << describe(elem);
        return failure();
      }
      spec.lowerBounds.push_back(constI64(0, l));
      spec.upperBounds.push_back(
          castScalar(elem.value, b_.getI64Type(), false, l));
      blockSizes.push_back(Value());
    }
  }
  if (spec.lowerBounds.empty()) {
    diags_.report(call->getSourceRange(), Diag::BadTileArg)
        << kind << "no dimensions";
    return failure();
  }
  if (spec.isGrid)
    return spec;
  // Every dimension without a block size gets a tunable one, in order.
  for (auto [i, bs] : llvm::enumerate(blockSizes)) {
    if (!bs) {
      Value extent = spec.upperBounds[i];
      if (!constantInt(spec.lowerBounds[i]) ||
          *constantInt(spec.lowerBounds[i]) != 0)
        extent = b_.create<mlir::arith::SubIOp>(l, spec.upperBounds[i],
                                                spec.lowerBounds[i]);
      bs = b_.create<kite::BlockSizeOp>(l, extent,
                                        b_.getI64IntegerAttr(nextBlockSizeId_++),
                                        mlir::IntegerAttr(), mlir::IntegerAttr());
    }
    spec.blockSizes.push_back(bs);
  }
  return spec;
}
