//===- Emitter.cpp - kernels, signatures, locations, environment ----------===//
//
// This file implements the kernel-level part of KernelEmitter: the
// func.func for a kernel (parameters, return), source locations, and the
// environment that keeps C++ locals in SSA form.
//
//===----------------------------------------------------------------------===//

#include "frontend/Emitter.h"

#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"

using namespace kite::frontend;
using clang::dyn_cast;
using clang::isa;
using mlir::failed;
using mlir::failure;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::success;
using mlir::Value;

KernelEmitter::KernelEmitter(clang::ASTContext &ast, DiagReporter &diags,
                             mlir::ModuleOp module)
    : ast_(ast), sm_(ast.getSourceManager()), diags_(diags), module_(module),
      ctx_(module.getContext()), b_(module.getContext()) {}

//===----------------------------------------------------------------------===//
// Locations
//===----------------------------------------------------------------------===//

mlir::Location KernelEmitter::loc(clang::SourceLocation l) {
  mlir::Location result = mlir::UnknownLoc::get(ctx_);
  if (l.isValid()) {
    clang::PresumedLoc p = sm_.getPresumedLoc(sm_.getExpansionLoc(l));
    if (p.isValid())
      result = mlir::FileLineColLoc::get(ctx_, p.getFilename(), p.getLine(),
                                         p.getColumn());
  }
  // Inside an inlined function, say where it was called from.
  if (!frames_.empty())
    result = mlir::CallSiteLoc::get(result, frames_.back().callerLoc);
  return result;
}

mlir::Location KernelEmitter::loc(const clang::Stmt *s) {
  if (auto *e = dyn_cast<clang::Expr>(s))
    return loc(e->getExprLoc());
  return loc(s->getBeginLoc());
}

mlir::Location KernelEmitter::loc(const clang::Decl *d) {
  return loc(d->getLocation());
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

LogicalResult KernelEmitter::emitSignature(const clang::FunctionDecl *fn,
                                           mlir::func::FuncOp &func) {
  bool ok = true;
  llvm::SmallVector<mlir::Type> argTypes;
  for (const clang::ParmVarDecl *param : fn->parameters()) {
    clang::QualType type = param->getType();
    clang::SourceRange range = param->getSourceRange();
    if (type->isPointerType() || type->isArrayType() ||
        type->isMemberPointerType() ||
        (type->isReferenceType() &&
         type.getNonReferenceType()->isPointerType())) {
      diags_.report(range, Diag::PointerNotSupported);
      ok = false;
      continue;
    }
    // Kernels take tensors and scalars by value: the registration code
    // (kite compile --emit=registration) declares them that way, so a
    // reference parameter would declare another function than the one the
    // user defined.
    if (type->isReferenceType() &&
        (isKiteClass(type, "Tensor") ||
         succeeded(convertScalarType(type.getNonReferenceType())))) {
      clang::SourceLocation sigil;
      if (clang::TypeSourceInfo *tsi = param->getTypeSourceInfo())
        if (auto ref = tsi->getTypeLoc()
                           .getUnqualifiedLoc()
                           .getAs<clang::ReferenceTypeLoc>())
          sigil = ref.getSigilLoc();
      auto diag = diags_.report(range, Diag::ReferenceParam)
                  << param->getName() << type
                  << type.getNonReferenceType().getUnqualifiedType();
      if (sigil.isValid())
        diag << clang::FixItHint::CreateRemoval(sigil);
      ok = false;
      continue;
    }
    if (isKiteClass(type, "Tensor")) {
      std::optional<llvm::SmallVector<int64_t>> shape;
      if (assumedRank_ && assumedRank_->first == argTypes.size())
        shape = llvm::SmallVector<int64_t>(assumedRank_->second, mlir::ShapedType::kDynamic);
      argTypes.push_back(tensorType(shape, {}));
      continue;
    }
    clang::QualType bare = type.getNonReferenceType().getUnqualifiedType();
    if (bare->isBooleanType() || bare->isIntegerType() ||
        bare->isRealFloatingType()) {
      if (!bare->isEnumeralType()) {
        FailureOr<mlir::Type> t = convertScalarType(bare);
        if (succeeded(t)) {
          argTypes.push_back(*t);
          continue;
        }
      }
    }
    diags_.report(range, Diag::UnsupportedParamType)
        << param->getName() << type;
    ok = false;
  }

  // The return type: void, Tensor, or std::tuple<Tensor...>.
  clang::QualType ret = fn->getReturnType();
  bool retOk = ret->isVoidType() || isKiteClass(ret, "Tensor");
  if (!retOk) {
    if (auto *rec = ret.getNonReferenceType()->getAsCXXRecordDecl()) {
      if (auto *spec =
              dyn_cast<clang::ClassTemplateSpecializationDecl>(rec)) {
        if (isStdDecl(spec) && spec->getName() == "tuple") {
          retOk = true;
          for (const clang::TemplateArgument &arg :
               spec->getTemplateArgs().asArray()) {
            if (arg.getKind() != clang::TemplateArgument::Pack)
              continue;
            for (const clang::TemplateArgument &elem : arg.pack_elements())
              if (elem.getKind() != clang::TemplateArgument::Type ||
                  !isKiteClass(elem.getAsType(), "Tensor"))
                retOk = false;
          }
        }
      }
    }
  }
  if (!retOk) {
    clang::SourceRange range = fn->getReturnTypeSourceRange();
    diags_.report(range.isValid() ? range : fn->getSourceRange(),
                  Diag::UnsupportedReturnType)
        << fn->getName() << ret;
    ok = false;
  }
  if (!ok)
    return failure();

  b_.setInsertionPointToEnd(module_.getBody());
  func = b_.create<mlir::func::FuncOp>(loc(fn), funcName_.empty() ? fn->getName().str()
                                                                  : funcName_,
                                       b_.getFunctionType(argTypes, {}));
  func->setAttr(kite::kKernelAttrName, b_.getUnitAttr());
  for (auto [i, param] : llvm::enumerate(fn->parameters()))
    func.setArgAttr(i, kite::kArgNameAttrName,
                    b_.getStringAttr(param->getName()));
  return success();
}

LogicalResult KernelEmitter::emitKernel(const clang::FunctionDecl *fn) {
  kernel_ = fn;
  if (isa<clang::CXXMethodDecl>(fn)) {
    diags_.report(fn->getLocation(), Diag::KernelNotFreeFunction)
        << "a member function";
    return failure();
  }
  if (fn->isTemplated() || fn->getTemplatedKind() !=
                               clang::FunctionDecl::TK_NonTemplate) {
    diags_.report(fn->getLocation(), Diag::KernelIsTemplate);
    return failure();
  }

  mlir::func::FuncOp func;
  if (failed(emitSignature(fn, func)))
    return failure();
  func_ = func;
  mlir::Block *entry = func.addEntryBlock();
  b_.setInsertionPointToStart(entry);

  ScopeGuard scope(*this);
  for (auto [i, param] : llvm::enumerate(fn->parameters())) {
    entry->getArgument(i).setLoc(loc(param));
    bind(param, KValue::of(entry->getArgument(i)));
  }

  if (failed(emitFunctionBody(fn->getBody()))) {
    func.erase();
    return failure();
  }

  // func.return with what the body returned.
  llvm::SmallVector<Value> results;
  mlir::Location retLoc = returnStmt_ ? loc(returnStmt_)
                                      : loc(fn->getBody()->getEndLoc());
  if (!fn->getReturnType()->isVoidType()) {
    if (!kernelResult_) {
      diags_.report(fn->getBody()->getEndLoc(), Diag::MissingReturn)
          << fn->getName();
      func.erase();
      return failure();
    }
    std::vector<KValue> parts;
    if (kernelResult_->kind == KValue::Kind::Tuple)
      parts = kernelResult_->elems;
    else
      parts.push_back(*kernelResult_);
    for (const KValue &part : parts)
      results.push_back(part.value);
  }
  b_.create<mlir::func::ReturnOp>(retLoc, results);
  func.setFunctionType(b_.getFunctionType(
      entry->getArgumentTypes(), mlir::ValueRange(results).getTypes()));
  return success();
}

LogicalResult KernelEmitter::emitKernelReturn(const clang::ReturnStmt *ret) {
  returnStmt_ = ret;
  const clang::Expr *value = ret->getRetValue();
  if (!value) {
    kernelResult_ = KValue::none();
    return success();
  }
  FailureOr<KValue> v = emitExpr(value);
  if (failed(v))
    return failure();
  // Every returned value must be a tensor in global memory.
  auto check = [&](const KValue &part) -> LogicalResult {
    if (part.isValue() && isTensor(part.value))
      return success();
    diags_.report(value->getSourceRange(), Diag::ReturnNotTensor)
        << describe(part);
    return failure();
  };
  if (v->kind == KValue::Kind::Tuple) {
    for (const KValue &part : v->elems)
      if (failed(check(part)))
        return failure();
  } else if (failed(check(*v))) {
    return failure();
  }
  kernelResult_ = *v;
  return success();
}

//===----------------------------------------------------------------------===//
// Environment
//===----------------------------------------------------------------------===//

const clang::ValueDecl *
KernelEmitter::resolveAlias(const clang::ValueDecl *d) {
  for (;;) {
    auto it = env_.find(d);
    if (it == env_.end() || !it->second.alias)
      return d;
    d = it->second.alias;
  }
}

void KernelEmitter::bind(const clang::ValueDecl *d, KValue v) {
  auto it = env_.find(d);
  if (it != env_.end() && it->second.alias) {
    bind(it->second.alias, std::move(v));
    return;
  }
  if (it == env_.end()) {
    if (!scopes_.empty())
      scopes_.back().push_back(d);
    env_[d] = Binding{std::move(v), nullptr};
    return;
  }
  it->second.value = std::move(v);
}

void KernelEmitter::bindAlias(const clang::ValueDecl *d,
                              const clang::ValueDecl *target) {
  if (!scopes_.empty())
    scopes_.back().push_back(d);
  env_[d] = Binding{KValue(), resolveAlias(target)};
}

KValue *KernelEmitter::lookup(const clang::ValueDecl *d) {
  auto it = env_.find(resolveAlias(d));
  if (it == env_.end())
    return nullptr;
  return &it->second.value;
}

void KernelEmitter::popScope() {
  for (const clang::ValueDecl *d : scopes_.back())
    env_.erase(d);
  scopes_.pop_back();
}

LogicalResult KernelEmitter::checkVisible(const KValue &v,
                                          const clang::Expr *use,
                                          const clang::ValueDecl *d) {
  for (const KValue &e : v.elems)
    if (failed(checkVisible(e, use, d)))
      return failure();
  if (!v.value)
    return success();
  mlir::Value value = v.value;
  mlir::Region *defRegion = value.getParentRegion();
  mlir::Region *here = b_.getInsertionBlock()->getParent();
  if (defRegion->isAncestor(here))
    return success();
  diags_.report(use->getSourceRange(), Diag::TileUsedOutsideLoop)
      << (d ? d->getName() : llvm::StringRef("value"));
  auto it = loopOfValue_.find(v.value);
  if (it != loopOfValue_.end())
    diags_.report(it->second->getBeginLoc(), Diag::NoteTileLoop)
        << (d ? d->getName() : llvm::StringRef("value"));
  return failure();
}
