//===- EmitStmt.cpp - statements ------------------------------------------===//
//
// This file implements KernelEmitter's statements: one closed switch over
// Clang's statement classes. Blocks and declarations update the
// environment; `if` becomes scf.if, integer `for` loops scf.for, and
// range-for loops over tile()/grid() kite.tile_for / kite.grid_for, with the
// outer variables their bodies assign carried as results.
//
//===----------------------------------------------------------------------===//

#include "frontend/Emitter.h"

#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/ScopeExit.h"

#include <functional>

using namespace kite::frontend;
using clang::dyn_cast;
using clang::isa;
using mlir::failed;
using mlir::failure;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::success;
using mlir::Value;

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

namespace {
/// A range-for over kite::tile/grid somewhere inside `s`, if any.
const clang::CXXForRangeStmt *findTileLoop(const clang::Stmt *s) {
  if (!s)
    return nullptr;
  if (auto *loop = dyn_cast<clang::CXXForRangeStmt>(s)) {
    const clang::Expr *range = loop->getRangeInit()->IgnoreImplicit();
    if (auto *call = dyn_cast<clang::CallExpr>(range)) {
      std::string name = KernelEmitter::kiteName(
          dyn_cast_or_null<clang::NamedDecl>(call->getCalleeDecl()));
      if (name == "tile" || name == "grid")
        return loop;
    }
  }
  for (const clang::Stmt *child : s->children())
    if (const clang::CXXForRangeStmt *found = findTileLoop(child))
      return found;
  return nullptr;
}

const char *constructName(const clang::Stmt *s) {
  switch (s->getStmtClass()) {
  case clang::Stmt::IfStmtClass:
    return "an 'if' statement";
  case clang::Stmt::ForStmtClass:
    return "a 'for' loop";
  case clang::Stmt::WhileStmtClass:
    return "a 'while' loop";
  case clang::Stmt::DoStmtClass:
    return "a 'do' loop";
  case clang::Stmt::SwitchStmtClass:
    return "a 'switch' statement";
  default:
    return "another statement";
  }
}
} // namespace

/// The deepest nesting of if, for and tile/grid statements a kernel may
/// have (else-if chains count: each `else if` nests). Like Clang's bracket
/// depth (256), far beyond real kernels; it bounds the IR's region nesting,
/// and with it the recursion of MLIR's parser, verifier and printer, which
/// run on the caller's stack (the runtime's, the CLI's).
constexpr unsigned kMaxRegionDepth = 256;

LogicalResult KernelEmitter::emitStmt(const clang::Stmt *s) {
  if (isa<clang::IfStmt, clang::ForStmt, clang::CXXForRangeStmt>(s)) {
    if (regionDepth_ >= kMaxRegionDepth) {
      diags_.report(s->getBeginLoc(), Diag::RegionsTooDeep) << kMaxRegionDepth;
      return failure();
    }
    ++regionDepth_;
    auto restore = llvm::make_scope_exit([&] { --regionDepth_; });
    return emitStmtOfClass(s);
  }
  return emitStmtOfClass(s);
}

LogicalResult KernelEmitter::emitStmtOfClass(const clang::Stmt *s) {
  switch (s->getStmtClass()) {
  case clang::Stmt::CompoundStmtClass: {
    ScopeGuard scope(*this);
    return emitCompound(clang::cast<clang::CompoundStmt>(s));
  }
  case clang::Stmt::DeclStmtClass:
    return emitDeclStmt(clang::cast<clang::DeclStmt>(s));
  case clang::Stmt::NullStmtClass:
    return success();
  case clang::Stmt::IfStmtClass:
    return emitIf(clang::cast<clang::IfStmt>(s));
  case clang::Stmt::ForStmtClass:
    return emitFor(clang::cast<clang::ForStmt>(s));
  case clang::Stmt::CXXForRangeStmtClass:
    return emitRangeFor(clang::cast<clang::CXXForRangeStmt>(s));
  case clang::Stmt::AttributedStmtClass:
    return emitStmt(clang::cast<clang::AttributedStmt>(s)->getSubStmt());
  case clang::Stmt::ReturnStmtClass:
    diags_.report(s->getBeginLoc(), Diag::EarlyReturn) << !frames_.empty();
    return failure();

  case clang::Stmt::CXXTryStmtClass:
    diags_.report(s->getBeginLoc(), Diag::ExceptionsNotSupported);
    return failure();

  case clang::Stmt::WhileStmtClass:
  case clang::Stmt::DoStmtClass:
  case clang::Stmt::SwitchStmtClass: {
    // A tile loop inside is the more useful thing to point at.
    const clang::Stmt *body =
        isa<clang::WhileStmt>(s)  ? clang::cast<clang::WhileStmt>(s)->getBody()
        : isa<clang::DoStmt>(s)   ? clang::cast<clang::DoStmt>(s)->getBody()
                                  : clang::cast<clang::SwitchStmt>(s)->getBody();
    if (deviceDepth_ == 0) {
      if (const clang::CXXForRangeStmt *loop = findTileLoop(body)) {
        diags_.report(loop->getBeginLoc(), Diag::TopLevelLoopNested)
            << "tile" << constructName(s);
        return failure();
      }
    }
    const char *keyword = isa<clang::WhileStmt>(s) ? "while"
                          : isa<clang::DoStmt>(s)  ? "do"
                                                   : "switch";
    const char *hint = isa<clang::SwitchStmt>(s)
                           ? "; use 'if'"
                           : "; use a 'for' loop over an integer range";
    diags_.report(s->getBeginLoc(), Diag::UnsupportedStmt) << keyword << hint;
    return failure();
  }
  case clang::Stmt::GotoStmtClass:
  case clang::Stmt::IndirectGotoStmtClass:
    diags_.report(s->getBeginLoc(), Diag::UnsupportedStmt) << "goto" << "";
    return failure();
  case clang::Stmt::LabelStmtClass:
    diags_.report(s->getBeginLoc(), Diag::UnsupportedStmt)
        << "labeled" << "";
    return failure();
  case clang::Stmt::BreakStmtClass:
    diags_.report(s->getBeginLoc(), Diag::UnsupportedStmt)
        << "break" << "; loops always run to their end";
    return failure();
  case clang::Stmt::ContinueStmtClass:
    diags_.report(s->getBeginLoc(), Diag::UnsupportedStmt)
        << "continue" << "; use 'if' around the rest of the body";
    return failure();
  case clang::Stmt::GCCAsmStmtClass:
  case clang::Stmt::MSAsmStmtClass:
    diags_.report(s->getBeginLoc(), Diag::UnsupportedStmt) << "asm" << "";
    return failure();
  case clang::Stmt::CoreturnStmtClass:
  case clang::Stmt::CoroutineBodyStmtClass:
    diags_.report(s->getBeginLoc(), Diag::UnsupportedStmt)
        << "coroutine" << "";
    return failure();

  default:
    break;
  }
  if (auto *e = dyn_cast<clang::Expr>(s))
    return emitExpr(e);
  diags_.report(s->getBeginLoc(), Diag::UnsupportedStmt)
      << s->getStmtClassName() << "";
  return failure();
}

LogicalResult KernelEmitter::emitCompound(const clang::CompoundStmt *s) {
  for (const clang::Stmt *child : s->body())
    if (failed(emitStmt(child)))
      return failure();
  return success();
}

LogicalResult KernelEmitter::emitFunctionBody(const clang::Stmt *body) {
  if (isa<clang::CXXTryStmt>(body)) {
    diags_.report(body->getBeginLoc(), Diag::ExceptionsNotSupported);
    return failure();
  }
  ScopeGuard scope(*this);
  FailureOr<std::optional<KValue>> result = emitReturningSeq(stmtsOf(body));
  if (failed(result))
    return failure();
  if (*result) {
    if (frames_.empty())
      kernelResult_ = **result;
    else
      frames_.back().result = **result;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Returns
//===----------------------------------------------------------------------===//
//
// A function body is a sequence that may return. `if (c) { ...; return a; }
// rest; return b;` becomes an scf.if whose branches are `{...; a}` and
// `{rest; b}`, yielding the returned value (and the outer variables the
// branches assign).

namespace {
/// Whether `s` contains a return of its own function (not of a lambda).
bool containsReturn(const clang::Stmt *s) {
  if (!s || isa<clang::LambdaExpr>(s))
    return false;
  if (isa<clang::ReturnStmt>(s))
    return true;
  for (const clang::Stmt *child : s->children())
    if (containsReturn(child))
      return true;
  return false;
}

bool endsWithReturn(llvm::ArrayRef<const clang::Stmt *> stmts) {
  return !stmts.empty() && isa<clang::ReturnStmt>(stmts.back());
}
} // namespace

llvm::SmallVector<const clang::Stmt *>
KernelEmitter::stmtsOf(const clang::Stmt *s) {
  llvm::SmallVector<const clang::Stmt *> result;
  if (!s)
    return result;
  if (auto *compound = dyn_cast<clang::CompoundStmt>(s))
    result.append(compound->body_begin(), compound->body_end());
  else
    result.push_back(s);
  return result;
}

FailureOr<KValue> KernelEmitter::emitReturnValue(const clang::ReturnStmt *ret) {
  if (frames_.empty()) {
    if (failed(emitKernelReturn(ret)))
      return failure();
    return *kernelResult_;
  }
  if (!ret->getRetValue())
    return KValue::none();
  return emitExpr(ret->getRetValue());
}

FailureOr<std::optional<KValue>>
KernelEmitter::emitReturningSeq(llvm::ArrayRef<const clang::Stmt *> stmts) {
  for (size_t i = 0; i < stmts.size(); ++i) {
    const clang::Stmt *s = stmts[i];
    if (auto *ret = dyn_cast<clang::ReturnStmt>(s)) {
      if (i + 1 != stmts.size()) {
        diags_.report(stmts[i + 1]->getBeginLoc(), Diag::UnsupportedStmt)
            << "unreachable" << " after 'return'";
        return failure();
      }
      FailureOr<KValue> v = emitReturnValue(ret);
      if (failed(v))
        return failure();
      return std::optional<KValue>(*v);
    }
    if (!containsReturn(s)) {
      if (failed(emitStmt(s)))
        return failure();
      continue;
    }
    llvm::ArrayRef<const clang::Stmt *> rest = stmts.drop_front(i + 1);
    if (auto *ifs = dyn_cast<clang::IfStmt>(s))
      return emitReturningIf(ifs, rest);
    if (auto *compound = dyn_cast<clang::CompoundStmt>(s)) {
      ScopeGuard scope(*this);
      llvm::SmallVector<const clang::Stmt *> seq = stmtsOf(compound);
      seq.append(rest.begin(), rest.end());
      return emitReturningSeq(seq);
    }
    // A return inside a loop: report that return.
    std::function<const clang::Stmt *(const clang::Stmt *)> find =
        [&](const clang::Stmt *x) -> const clang::Stmt * {
      if (!x || isa<clang::LambdaExpr>(x))
        return nullptr;
      if (isa<clang::ReturnStmt>(x))
        return x;
      for (const clang::Stmt *child : x->children())
        if (const clang::Stmt *r = find(child))
          return r;
      return nullptr;
    };
    diags_.report(find(s)->getBeginLoc(), Diag::EarlyReturn)
        << !frames_.empty();
    return failure();
  }
  return std::optional<KValue>();
}

FailureOr<std::optional<KValue>>
KernelEmitter::emitReturningIf(const clang::IfStmt *s,
                               llvm::ArrayRef<const clang::Stmt *> rest) {
  ScopeGuard scope(*this);
  if (s->getInit() && failed(emitStmt(s->getInit())))
    return failure();
  if (s->getConditionVariableDeclStmt() &&
      failed(emitStmt(s->getConditionVariableDeclStmt())))
    return failure();

  // Each branch continues with the statements after the `if` unless it
  // returns.
  auto branchSeq = [&](const clang::Stmt *branch) {
    llvm::SmallVector<const clang::Stmt *> seq = stmtsOf(branch);
    if (!endsWithReturn(seq))
      seq.append(rest.begin(), rest.end());
    return seq;
  };
  llvm::SmallVector<const clang::Stmt *> thenSeq = branchSeq(s->getThen());
  llvm::SmallVector<const clang::Stmt *> elseSeq = branchSeq(s->getElse());

  std::optional<bool> taken;
  Value cond;
  if (s->isConstexpr()) {
    if (std::optional<llvm::APSInt> c =
            s->getCond()->getIntegerConstantExpr(ast_))
      taken = c->getBoolValue();
  }
  if (!taken) {
    FailureOr<Value> c = emitScalar(s->getCond());
    if (failed(c))
      return failure();
    cond = toBool(*c, loc(s->getCond()));
    if (auto constant = cond.getDefiningOp<mlir::arith::ConstantOp>())
      taken = llvm::cast<mlir::IntegerAttr>(constant.getValue()).getInt() != 0;
  }
  if (taken) {
    ScopeGuard branchScope(*this);
    return emitReturningSeq(*taken ? thenSeq : elseSeq);
  }
  if (deviceDepth_ == 0)
    hostConstructs_.push_back(s);
  auto popHost = llvm::make_scope_exit([&] {
    if (deviceDepth_ == 0)
      hostConstructs_.pop_back();
  });

  // Outer variables the branches assign are results too.
  AssignedVars scan;
  for (const clang::Stmt *x : thenSeq)
    scanAssigned(x, scan);
  for (const clang::Stmt *x : elseSeq)
    scanAssigned(x, scan);
  llvm::SmallVector<const clang::ValueDecl *> carried = carriedVars(scan);
  llvm::SmallVector<KValue> before;
  for (const clang::ValueDecl *d : carried) {
    before.push_back(*lookup(d));
    if (!before.back().value || (before.back().kind != KValue::Kind::Value &&
                                 before.back().kind != KValue::Kind::BlockSize)) {
      diags_.report(scan.assigned.lookup(d)->getSourceRange(),
                    Diag::UnsupportedExpr)
          << ("assigning " + describe(before.back()) + " inside 'if'");
      return failure();
    }
  }

  mlir::Location l = loc(s);
  auto ifOp = b_.create<mlir::scf::IfOp>(l, mlir::TypeRange(), cond,
                                         /*withElseRegion=*/true);
  struct Branch {
    std::optional<KValue> result;
    llvm::SmallVector<Value> values; // returned values, then carried ones
  };
  auto emitBranch = [&](llvm::ArrayRef<const clang::Stmt *> seq,
                        mlir::Block *block) -> FailureOr<Branch> {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(block->getTerminator());
    Branch branch;
    {
      ScopeGuard branchScope(*this);
      FailureOr<std::optional<KValue>> r = emitReturningSeq(seq);
      if (failed(r))
        return failure();
      branch.result = *r;
    }
    if (branch.result) {
      const KValue &r = *branch.result;
      if (r.kind == KValue::Kind::Tuple) {
        for (const KValue &e : r.elems)
          branch.values.push_back(e.value);
      } else if (r.kind != KValue::Kind::Void) {
        branch.values.push_back(r.value);
      }
      for (Value v : branch.values)
        if (!v) {
          diags_.report(s->getBeginLoc(), Diag::UnsupportedExpr)
              << ("returning " + describe(r) + " from inside 'if'");
          return failure();
        }
    }
    for (auto [i, d] : llvm::enumerate(carried)) {
      KValue *now = lookup(d);
      if (now->kind != before[i].kind || !now->value) {
        diags_.report(d->getLocation(), Diag::CarriedKindChanged)
            << d->getName() << describe(before[i]) << describe(*now);
        return failure();
      }
      branch.values.push_back(now->value);
      bind(d, before[i]);
    }
    return branch;
  };
  FailureOr<Branch> thenBranch = emitBranch(thenSeq, ifOp.thenBlock());
  if (failed(thenBranch))
    return failure();
  FailureOr<Branch> elseBranch = emitBranch(elseSeq, ifOp.elseBlock());
  if (failed(elseBranch))
    return failure();
  if (thenBranch->result.has_value() != elseBranch->result.has_value() ||
      thenBranch->values.size() != elseBranch->values.size() ||
      (thenBranch->result &&
       thenBranch->result->kind != elseBranch->result->kind)) {
    diags_.report(s->getBeginLoc(), Diag::UnsupportedStmt)
        << "if"
        << " whose branches return different kinds of values (or only one "
           "returns)";
    return failure();
  }

  llvm::SmallVector<mlir::Type> types;
  for (auto [a, b] : llvm::zip(thenBranch->values, elseBranch->values)) {
    mlir::Type joined = joinTypes(a.getType(), b.getType());
    if (!joined) {
      diags_.report(s->getBeginLoc(), Diag::ExpectedKind)
          << describe(KValue::of(a)) << describe(KValue::of(b));
      return failure();
    }
    types.push_back(joined);
  }
  auto newIf = withResults(ifOp, cond, types, thenBranch->values, elseBranch->values, l);

  unsigned next = 0;
  std::optional<KValue> result;
  if (thenBranch->result) {
    KValue r = *thenBranch->result;
    if (r.kind == KValue::Kind::Tuple) {
      for (KValue &e : r.elems)
        e.value = newIf.getResult(next++);
    } else if (r.kind != KValue::Kind::Void) {
      r.value = newIf.getResult(next++);
    }
    result = r;
  }
  for (auto [i, d] : llvm::enumerate(carried)) {
    KValue v = before[i];
    v.value = newIf.getResult(next++);
    bind(d, v);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

LogicalResult KernelEmitter::emitDeclStmt(const clang::DeclStmt *s) {
  for (const clang::Decl *d : s->decls()) {
    if (auto *var = dyn_cast<clang::VarDecl>(d)) {
      if (failed(emitVarDecl(var)))
        return failure();
      continue;
    }
    // Declarations that produce no code.
    if (isa<clang::TypedefNameDecl, clang::UsingDecl, clang::UsingDirectiveDecl,
            clang::StaticAssertDecl, clang::RecordDecl, clang::EnumDecl,
            clang::FunctionDecl, clang::UsingShadowDecl,
            clang::NamespaceAliasDecl>(d))
      continue;
    diags_.report(d->getLocation(), Diag::UnsupportedStmt)
        << d->getDeclKindName() << " declaration";
    return failure();
  }
  return success();
}

LogicalResult KernelEmitter::emitVarDecl(const clang::VarDecl *var) {
  clang::QualType type = var->getType();
  if (type->isPointerType() || type->isMemberPointerType() ||
      type->isArrayType()) {
    // `T *p = new T` is best reported at the `new`.
    if (var->getInit())
      if (auto *alloc = dyn_cast<clang::CXXNewExpr>(
              var->getInit()->IgnoreParenImpCasts())) {
        diags_.report(alloc->getSourceRange(), Diag::NewNotSupported) << "new";
        return failure();
      }
    diags_.report(var->getSourceRange(), Diag::PointerNotSupported);
    return failure();
  }
  if (var->isStaticLocal() || var->getTLSKind() != clang::VarDecl::TLS_None) {
    diags_.report(var->getSourceRange(), Diag::UnsupportedStmt)
        << "static local variable" << "";
    return failure();
  }
  const clang::Expr *init = var->getInit();
  if (!init) {
    diags_.report(var->getLocation(), Diag::UninitializedVar)
        << var->getName();
    return failure();
  }

  // `auto &r = v` aliases a local; other references bind a temporary.
  if (type->isReferenceType() && !isa<clang::DecompositionDecl>(var)) {
    if (auto *ref = dyn_cast<clang::DeclRefExpr>(init->IgnoreParenImpCasts())) {
      if (lookup(ref->getDecl())) {
        bindAlias(var, ref->getDecl());
        return success();
      }
    }
  }

  FailureOr<KValue> value = emitExpr(init);
  if (failed(value))
    return failure();

  if (auto *decomp = dyn_cast<clang::DecompositionDecl>(var)) {
    auto bindings = decomp->bindings();
    if ((value->kind != KValue::Kind::Tuple &&
         value->kind != KValue::Kind::List) ||
        value->elems.size() != bindings.size()) {
      diags_.report(init->getSourceRange(), Diag::ExpectedKind)
          << ("a tuple of " + std::to_string(bindings.size()) + " values")
          << describe(*value);
      return failure();
    }
    for (auto [binding, elem] : llvm::zip(bindings, value->elems))
      bind(binding, elem);
    return success();
  }
  bind(var, *value);
  return success();
}

//===----------------------------------------------------------------------===//
// Assignment scan
//===----------------------------------------------------------------------===//

namespace {
const clang::ValueDecl *assignedDecl(const clang::Expr *target) {
  target = target->IgnoreParenImpCasts();
  if (auto *ref = dyn_cast<clang::DeclRefExpr>(target))
    return ref->getDecl();
  return nullptr;
}

bool isAssignOperator(clang::OverloadedOperatorKind op) {
  switch (op) {
  case clang::OO_Equal:
  case clang::OO_PlusEqual:
  case clang::OO_MinusEqual:
  case clang::OO_StarEqual:
  case clang::OO_SlashEqual:
  case clang::OO_PercentEqual:
  case clang::OO_AmpEqual:
  case clang::OO_PipeEqual:
  case clang::OO_CaretEqual:
  case clang::OO_LessLessEqual:
  case clang::OO_GreaterGreaterEqual:
  case clang::OO_PlusPlus:
  case clang::OO_MinusMinus:
    return true;
  default:
    return false;
  }
}
} // namespace

void KernelEmitter::scanAssigned(const clang::Stmt *s, AssignedVars &out) {
  llvm::SmallPtrSet<const clang::Decl *, 8> visited;
  scanAssignedRec(s, out, visited);
}

void KernelEmitter::scanAssignedRec(
    const clang::Stmt *s, AssignedVars &out,
    llvm::SmallPtrSetImpl<const clang::Decl *> &visited) {
  if (!s)
    return;
  auto record = [&](const clang::ValueDecl *d, const clang::Expr *e) {
    if (d && !out.assigned.count(d))
      out.assigned.insert({d, e});
  };
  auto declare = [&](const clang::Decl *d) {
    if (auto *vd = dyn_cast<clang::ValueDecl>(d))
      out.declared.insert(vd);
    if (auto *decomp = dyn_cast<clang::DecompositionDecl>(d))
      for (const clang::BindingDecl *b : decomp->bindings())
        out.declared.insert(b);
  };
  auto scanFunction = [&](const clang::FunctionDecl *fn) {
    if (!fn || !fn->hasBody() || !kiteName(fn).empty() || isStdDecl(fn))
      return;
    const clang::FunctionDecl *def = nullptr;
    const clang::Stmt *body = fn->getBody(def);
    if (!body || !visited.insert(def).second)
      return;
    for (const clang::ParmVarDecl *p : def->parameters())
      declare(p);
    scanAssignedRec(body, out, visited);
  };

  if (auto *ds = dyn_cast<clang::DeclStmt>(s))
    for (const clang::Decl *d : ds->decls())
      declare(d);
  if (auto *loop = dyn_cast<clang::CXXForRangeStmt>(s)) {
    declare(loop->getLoopVariable());
    if (loop->getRangeStmt())
      scanAssignedRec(loop->getRangeInit(), out, visited);
    scanAssignedRec(loop->getBody(), out, visited);
    return;
  }
  if (auto *bo = dyn_cast<clang::BinaryOperator>(s)) {
    if (bo->isAssignmentOp())
      record(assignedDecl(bo->getLHS()), bo);
  } else if (auto *uo = dyn_cast<clang::UnaryOperator>(s)) {
    if (uo->isIncrementDecrementOp())
      record(assignedDecl(uo->getSubExpr()), uo);
  } else if (auto *lambda = dyn_cast<clang::LambdaExpr>(s)) {
    for (const clang::LambdaCapture &cap : lambda->captures())
      if (cap.capturesVariable() && cap.getCapturedVar()->isInitCapture())
        declare(cap.getCapturedVar());
    scanFunction(lambda->getCallOperator());
    return;
  }
  if (auto *call = dyn_cast<clang::CallExpr>(s)) {
    if (auto *op = dyn_cast<clang::CXXOperatorCallExpr>(call))
      if (isAssignOperator(op->getOperator()) && op->getNumArgs() >= 1)
        record(assignedDecl(op->getArg(0)), op);
    if (const clang::FunctionDecl *fn = call->getDirectCallee()) {
      if (kiteName(fn).empty() && !isStdDecl(fn)) {
        // Non-const reference parameters may be assigned by the callee.
        unsigned offset = isa<clang::CXXOperatorCallExpr>(call) &&
                                  isa<clang::CXXMethodDecl>(fn)
                              ? 1
                              : 0;
        for (unsigned i = 0; i < fn->getNumParams(); ++i) {
          clang::QualType pt = fn->getParamDecl(i)->getType();
          if (i + offset < call->getNumArgs() && pt->isLValueReferenceType() &&
              !pt.getNonReferenceType().isConstQualified())
            record(assignedDecl(call->getArg(i + offset)), call);
        }
        scanFunction(fn);
      }
    }
  }
  for (const clang::Stmt *child : s->children())
    scanAssignedRec(child, out, visited);
}

llvm::SmallVector<const clang::ValueDecl *>
KernelEmitter::carriedVars(const AssignedVars &scan) {
  llvm::SmallVector<const clang::ValueDecl *> result;
  for (auto &[d, e] : scan.assigned) {
    if (scan.declared.count(d))
      continue;
    const clang::ValueDecl *target = resolveAlias(d);
    if (!env_.count(target) || llvm::is_contained(result, target))
      continue;
    result.push_back(target);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Loops with carried values
//===----------------------------------------------------------------------===//

LogicalResult KernelEmitter::emitCarriedLoop(
    llvm::ArrayRef<const clang::ValueDecl *> carried, mlir::Location l,
    LoopBuilder build, llvm::function_ref<mlir::Block *(mlir::Operation *)> bodyOf,
    LoopBodyEmitter emitBody,
    llvm::function_ref<void(mlir::Location, mlir::ValueRange)> makeYield) {
  llvm::SmallVector<KValue> initial;
  llvm::SmallVector<mlir::Type> types;
  for (const clang::ValueDecl *d : carried) {
    initial.push_back(*lookup(d));
    types.push_back(initial.back().value.getType());
  }
  int64_t savedBlockSizeId = nextBlockSizeId_;
  for (int attempt = 0;; ++attempt) {
    nextBlockSizeId_ = savedBlockSizeId;
    for (auto [d, v] : llvm::zip(carried, initial))
      bind(d, v);
    llvm::SmallVector<Value> inits;
    for (auto [v, type] : llvm::zip(initial, types))
      inits.push_back(generalize(v.value, type, l));
    FailureOr<mlir::Operation *> op = build(inits);
    if (failed(op))
      return failure();
    mlir::Block *body = bodyOf(*op);
    unsigned first = body->getNumArguments() - carried.size();
    for (auto [i, d] : llvm::enumerate(carried)) {
      KValue v = initial[i];
      v.value = body->getArgument(first + i);
      bind(d, v);
    }

    bool widened = false;
    llvm::SmallVector<Value> yields;
    {
      mlir::OpBuilder::InsertionGuard guard(b_);
      if (!body->empty() && body->back().hasTrait<mlir::OpTrait::IsTerminator>())
        b_.setInsertionPoint(&body->back());
      else
        b_.setInsertionPointToEnd(body);
      if (failed(emitBody(*op)))
        return failure();
      for (auto [i, d] : llvm::enumerate(carried)) {
        KValue *now = lookup(d);
        if (now->kind != initial[i].kind || !now->value) {
          diags_.report(d->getLocation(), Diag::CarriedKindChanged)
              << d->getName() << describe(initial[i]) << describe(*now);
          return failure();
        }
        mlir::Type joined = joinTypes(types[i], now->value.getType());
        if (!joined) {
          diags_.report(d->getLocation(), Diag::CarriedKindChanged)
              << d->getName() << describe(initial[i]) << describe(*now);
          return failure();
        }
        if (joined != types[i]) {
          widened = true;
          types[i] = joined;
        }
        yields.push_back(now->value);
      }
      if (!widened || attempt >= 8) {
        for (auto [y, type] : llvm::zip(yields, types))
          y = generalize(y, type, l);
        if (body->empty() ||
            !body->back().hasTrait<mlir::OpTrait::IsTerminator>())
          makeYield(l, yields);
      }
    }
    if (widened && attempt < 8) {
      // A carried value's type got more general in the body: emit the loop
      // again with the general type, so the body sees what it may get.
      (*op)->erase();
      for (Value init : inits)
        if (auto cast = init.getDefiningOp<mlir::UnrealizedConversionCastOp>())
          if (cast->use_empty())
            cast->erase();
      continue;
    }
    for (auto [i, d] : llvm::enumerate(carried)) {
      KValue v = initial[i];
      v.value = (*op)->getResult(i);
      bind(d, v);
    }
    return success();
  }
}

//===----------------------------------------------------------------------===//
// if
//===----------------------------------------------------------------------===//

/// `ifOp` (an scf.if without results whose branches end in empty yields)
/// re-created with results of `types`: its branches move over, each now
/// yielding its values generalized to those types.
mlir::scf::IfOp KernelEmitter::withResults(mlir::scf::IfOp ifOp, Value cond,
                                           llvm::ArrayRef<mlir::Type> types,
                                           llvm::ArrayRef<Value> thenValues,
                                           llvm::ArrayRef<Value> elseValues,
                                           mlir::Location l) {
  auto newIf = b_.create<mlir::scf::IfOp>(l, types, cond, /*withElseRegion=*/true);
  newIf.getThenRegion().takeBody(ifOp.getThenRegion());
  newIf.getElseRegion().takeBody(ifOp.getElseRegion());
  ifOp.erase();
  auto finish = [&](mlir::Block *block, llvm::ArrayRef<Value> values) {
    mlir::OpBuilder::InsertionGuard guard(b_);
    block->getTerminator()->erase();
    b_.setInsertionPointToEnd(block);
    llvm::SmallVector<Value> yields;
    for (auto [v, type] : llvm::zip(values, types))
      yields.push_back(generalize(v, type, l));
    b_.create<mlir::scf::YieldOp>(l, yields);
  };
  finish(newIf.thenBlock(), thenValues);
  finish(newIf.elseBlock(), elseValues);
  return newIf;
}

LogicalResult KernelEmitter::emitIf(const clang::IfStmt *s) {
  ScopeGuard scope(*this);
  if (s->getInit() && failed(emitStmt(s->getInit())))
    return failure();
  if (s->getConditionVariableDeclStmt() &&
      failed(emitStmt(s->getConditionVariableDeclStmt())))
    return failure();

  if (s->isConstexpr() || s->isConsteval()) {
    std::optional<bool> taken;
    if (s->isConstexpr()) {
      if (std::optional<llvm::APSInt> c =
              s->getCond()->getIntegerConstantExpr(ast_))
        taken = c->getBoolValue();
    }
    if (!taken) {
      diags_.report(s->getBeginLoc(), Diag::UnsupportedStmt)
          << "if consteval" << "";
      return failure();
    }
    const clang::Stmt *branch = *taken ? s->getThen() : s->getElse();
    return branch ? emitStmt(branch) : success();
  }

  FailureOr<KValue> condValue = emitExpr(s->getCond());
  if (failed(condValue))
    return failure();
  if (!condValue->isValue() || !isScalar(condValue->value)) {
    diags_.report(s->getCond()->getSourceRange(), Diag::ExpectedKind)
        << "a scalar condition (use kite::where to select elementwise)"
        << describe(*condValue);
    return failure();
  }
  mlir::Location l = loc(s);
  Value cond = toBool(condValue->value, loc(s->getCond()));

  // A constant condition (`if (true)`, a constant argument of an inlined
  // helper) picks a branch; nothing is conditional then.
  if (auto c = cond.getDefiningOp<mlir::arith::ConstantOp>()) {
    bool taken = llvm::cast<mlir::IntegerAttr>(c.getValue()).getInt() != 0;
    const clang::Stmt *branch = taken ? s->getThen() : s->getElse();
    return branch ? emitStmt(branch) : success();
  }

  AssignedVars scan;
  scanAssigned(s->getThen(), scan);
  if (s->getElse())
    scanAssigned(s->getElse(), scan);
  llvm::SmallVector<const clang::ValueDecl *> carried = carriedVars(scan);
  llvm::SmallVector<KValue> before;
  for (const clang::ValueDecl *d : carried) {
    before.push_back(*lookup(d));
    if (!before.back().value || (before.back().kind != KValue::Kind::Value &&
                                 before.back().kind != KValue::Kind::BlockSize)) {
      diags_.report(scan.assigned.lookup(d)->getSourceRange(),
                    Diag::UnsupportedExpr)
          << ("assigning " + describe(before.back()) + " inside 'if'");
      return failure();
    }
  }

  if (deviceDepth_ == 0)
    hostConstructs_.push_back(s);
  auto popHost = llvm::make_scope_exit([&] {
    if (deviceDepth_ == 0)
      hostConstructs_.pop_back();
  });

  auto ifOp = b_.create<mlir::scf::IfOp>(l, mlir::TypeRange(), cond,
                                         /*withElseRegion=*/true);
  auto emitBranch = [&](const clang::Stmt *branch, mlir::Block *block,
                        llvm::SmallVectorImpl<Value> &out) -> LogicalResult {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(block->getTerminator());
    if (branch) {
      ScopeGuard branchScope(*this);
      if (failed(emitStmt(branch)))
        return failure();
    }
    for (auto [i, d] : llvm::enumerate(carried)) {
      KValue *now = lookup(d);
      if (now->kind != before[i].kind || !now->value) {
        diags_.report(d->getLocation(), Diag::CarriedKindChanged)
            << d->getName() << describe(before[i]) << describe(*now);
        return failure();
      }
      out.push_back(now->value);
      bind(d, before[i]);
    }
    return success();
  };
  llvm::SmallVector<Value> thenValues, elseValues;
  if (failed(emitBranch(s->getThen(), ifOp.thenBlock(), thenValues)) ||
      failed(emitBranch(s->getElse(), ifOp.elseBlock(), elseValues)))
    return failure();

  if (carried.empty()) {
    if (!s->getElse())
      ifOp.getElseRegion().getBlocks().clear();
    return success();
  }

  // Re-create the scf.if with results, moving the branches over.
  llvm::SmallVector<mlir::Type> types;
  for (auto [i, d] : llvm::enumerate(carried)) {
    mlir::Type joined =
        joinTypes(thenValues[i].getType(), elseValues[i].getType());
    if (!joined) {
      diags_.report(d->getLocation(), Diag::CarriedKindChanged)
          << d->getName() << describe(KValue::of(elseValues[i]))
          << describe(KValue::of(thenValues[i]));
      return failure();
    }
    types.push_back(joined);
  }
  auto newIf = withResults(ifOp, cond, types, thenValues, elseValues, l);
  for (auto [i, d] : llvm::enumerate(carried)) {
    KValue v = before[i];
    v.value = newIf.getResult(i);
    bind(d, v);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// for over integers
//===----------------------------------------------------------------------===//

LogicalResult KernelEmitter::emitFor(const clang::ForStmt *s) {
  ScopeGuard scope(*this);
  auto unsupported = [&]() {
    diags_.report(s->getBeginLoc(), Diag::UnsupportedFor);
    return failure();
  };
  // for (T i = begin; i < end; ++i / i++ / i += step)
  auto *initDecl = dyn_cast_or_null<clang::DeclStmt>(s->getInit());
  if (!initDecl || !initDecl->isSingleDecl())
    return unsupported();
  auto *var = dyn_cast<clang::VarDecl>(initDecl->getSingleDecl());
  if (!var || !var->getInit() || !var->getType()->isIntegerType() ||
      var->getType()->isBooleanType() || var->getType()->isReferenceType())
    return unsupported();
  auto *cond = dyn_cast_or_null<clang::BinaryOperator>(
      s->getCond() ? s->getCond()->IgnoreParens() : nullptr);
  if (!cond || (cond->getOpcode() != clang::BO_LT &&
                cond->getOpcode() != clang::BO_LE &&
                cond->getOpcode() != clang::BO_NE))
    return unsupported();
  if (assignedDecl(cond->getLHS()) != var)
    return unsupported();
  const clang::Expr *inc = s->getInc() ? s->getInc()->IgnoreParens() : nullptr;
  const clang::Expr *stepExpr = nullptr;
  if (auto *uo = dyn_cast_or_null<clang::UnaryOperator>(inc)) {
    if (!uo->isIncrementOp() || assignedDecl(uo->getSubExpr()) != var)
      return unsupported();
  } else if (auto *ca = dyn_cast_or_null<clang::CompoundAssignOperator>(inc)) {
    if (ca->getOpcode() != clang::BO_AddAssign ||
        assignedDecl(ca->getLHS()) != var)
      return unsupported();
    stepExpr = ca->getRHS();
  } else {
    return unsupported();
  }

  // The body may not assign the loop variable or what the bounds read.
  AssignedVars scan;
  scanAssigned(s->getBody(), scan);
  if (scan.assigned.count(var)) {
    diags_.report(scan.assigned.lookup(var)->getSourceRange(),
                  Diag::LoopVarAssigned)
        << var->getName();
    return failure();
  }

  FailureOr<mlir::Type> ivType = convertScalarType(var->getType());
  if (failed(ivType))
    return unsupported();
  FailureOr<Value> lb = emitScalar(var->getInit(), *ivType);
  if (failed(lb))
    return failure();
  const clang::Expr *endExpr = cond->getRHS();
  FailureOr<Value> ub = emitScalar(endExpr);
  if (failed(ub))
    return failure();
  mlir::Location l = loc(s);
  Value upper = castScalar(*ub, *ivType,
                           endExpr->IgnoreImpCasts()->getType()
                               ->isUnsignedIntegerType(),
                           l);
  if (cond->getOpcode() == clang::BO_LE)
    upper = b_.create<mlir::arith::AddIOp>(l, upper, constInt(*ivType, 1, l));
  Value step;
  if (stepExpr) {
    FailureOr<Value> st = emitScalar(stepExpr, *ivType);
    if (failed(st))
      return failure();
    step = *st;
  } else {
    step = constInt(*ivType, 1, l);
  }

  llvm::SmallVector<const clang::ValueDecl *> carried = carriedVars(scan);
  for (const clang::ValueDecl *d : carried) {
    KValue *v = lookup(d);
    if (!v->value || (v->kind != KValue::Kind::Value &&
                      v->kind != KValue::Kind::BlockSize)) {
      diags_.report(scan.assigned.lookup(d)->getSourceRange(),
                    Diag::UnsupportedExpr)
          << ("assigning " + describe(*v) + " inside a loop");
      return failure();
    }
  }

  if (deviceDepth_ == 0)
    hostConstructs_.push_back(s);
  auto popHost = llvm::make_scope_exit([&] {
    if (deviceDepth_ == 0)
      hostConstructs_.pop_back();
  });

  return emitCarriedLoop(
      carried, l,
      [&](llvm::ArrayRef<Value> inits) -> FailureOr<mlir::Operation *> {
        return b_.create<mlir::scf::ForOp>(l, *lb, upper, step, inits)
            .getOperation();
      },
      [](mlir::Operation *op) {
        return llvm::cast<mlir::scf::ForOp>(op).getBody();
      },
      [&](mlir::Operation *op) -> LogicalResult {
        ScopeGuard bodyScope(*this);
        bind(var, KValue::of(llvm::cast<mlir::scf::ForOp>(op).getInductionVar()));
        return emitStmt(s->getBody());
      },
      [&](mlir::Location yl, mlir::ValueRange values) {
        b_.create<mlir::scf::YieldOp>(yl, values);
      });
}

//===----------------------------------------------------------------------===//
// for over tile() / grid()
//===----------------------------------------------------------------------===//

namespace {
bool isTileLikeClass(clang::QualType type) {
  return KernelEmitter::isKiteClass(type, "Tile") ||
         KernelEmitter::isKiteClass(type, "Tiles") ||
         KernelEmitter::isKiteClass(type, "TileList");
}
} // namespace

LogicalResult KernelEmitter::emitRangeFor(const clang::CXXForRangeStmt *s) {
  ScopeGuard scope(*this);
  const clang::VarDecl *loopVar = s->getLoopVariable();
  std::optional<unsigned> numBindings;
  if (auto *decomp = dyn_cast<clang::DecompositionDecl>(loopVar))
    numBindings = decomp->bindings().size();

  if (s->getInit() && failed(emitStmt(s->getInit())))
    return failure();

  bool topLevel = deviceDepth_ == 0;
  llvm::StringRef kind;
  if (topLevel && !hostConstructs_.empty()) {
    // Check before evaluating, so the loop itself is what is reported.
    const clang::Expr *range = s->getRangeInit()->IgnoreImplicit();
    auto *call = dyn_cast<clang::CallExpr>(range);
    std::string name = call ? kiteName(dyn_cast_or_null<clang::NamedDecl>(
                                  call->getCalleeDecl()))
                            : "";
    if (name == "tile" || name == "grid") {
      const clang::Stmt *outer = hostConstructs_.back();
      // An early `return` puts the rest of the function in the else branch.
      bool inside = sm_.isPointWithin(s->getBeginLoc(), outer->getBeginLoc(),
                                      outer->getEndLoc());
      diags_.report(s->getBeginLoc(), Diag::TopLevelLoopNested)
          << name
          << (inside ? constructName(outer)
                     : "the code after an early 'return'");
      return failure();
    }
  }
  FailureOr<LoopSpec> spec = emitLoopSpec(s->getRangeInit(), kind);
  if (failed(spec))
    return failure();
  unsigned numDims = spec->lowerBounds.size();
  if (numBindings && *numBindings != numDims) {
    diags_.report(loopVar->getSourceRange(), Diag::BindingCountMismatch)
        << *numBindings << numDims;
    return failure();
  }

  AssignedVars scan;
  scanAssigned(s->getBody(), scan);
  llvm::SmallVector<const clang::ValueDecl *> carried = carriedVars(scan);
  for (const clang::ValueDecl *d : carried) {
    const clang::Expr *where = scan.assigned.lookup(d);
    for (auto &[orig, e] : scan.assigned)
      if (resolveAlias(orig) == d) {
        where = e;
        break;
      }
    KValue *v = lookup(d);
    if (isTileLikeClass(d->getType()) || (v->value && isSpan(v->value))) {
      diags_.report(where->getSourceRange(), Diag::TileUsedOutsideLoop)
          << d->getName();
      return failure();
    }
    if (v->isValue() && isTensor(v->value)) {
      diags_.report(where->getSourceRange(), Diag::StoreNotSubscript)
          << ("'" + d->getName().str() +
              "' is a tensor; store into a subscript of it, e.g. '" +
              d->getName().str() + "[t] = v'");
      return failure();
    }
    if (topLevel) {
      diags_.report(where->getSourceRange(), Diag::HostVarAssignedInLoop)
          << d->getName() << kind;
      return failure();
    }
    if (!v->value || (v->kind != KValue::Kind::Value &&
                      v->kind != KValue::Kind::BlockSize)) {
      diags_.report(where->getSourceRange(), Diag::UnsupportedExpr)
          << ("assigning " + describe(*v) + " inside a loop");
      return failure();
    }
  }

  mlir::Location l = loc(s);
  ++deviceDepth_;
  auto restoreDepth = llvm::make_scope_exit([&] { --deviceDepth_; });
  return emitCarriedLoop(
      carried, l,
      [&](llvm::ArrayRef<Value> inits) -> FailureOr<mlir::Operation *> {
        if (spec->isGrid)
          return b_
              .create<kite::GridForOp>(l, spec->lowerBounds, spec->upperBounds,
                                       inits)
              .getOperation();
        return b_
            .create<kite::TileForOp>(l, spec->lowerBounds, spec->upperBounds,
                                     spec->blockSizes, inits)
            .getOperation();
      },
      [](mlir::Operation *op) { return &op->getRegion(0).front(); },
      [&](mlir::Operation *op) -> LogicalResult {
        ScopeGuard bodyScope(*this);
        if (failed(bindLoopVar(s, &op->getRegion(0).front(), numDims)))
          return failure();
        return emitStmt(s->getBody());
      },
      [&](mlir::Location yl, mlir::ValueRange values) {
        b_.create<kite::YieldOp>(yl, values);
      });
}

LogicalResult KernelEmitter::bindLoopVar(const clang::CXXForRangeStmt *s,
                                         mlir::Block *body, unsigned numDims) {
  const clang::VarDecl *loopVar = s->getLoopVariable();
  std::vector<KValue> vars;
  for (unsigned i = 0; i < numDims; ++i) {
    Value v = body->getArgument(i);
    loopOfValue_[v] = s;
    vars.push_back(KValue::of(v));
  }
  if (auto *decomp = dyn_cast<clang::DecompositionDecl>(loopVar)) {
    for (auto [binding, v] : llvm::zip(decomp->bindings(), vars))
      bind(binding, v);
    return success();
  }
  // `auto t : tile(n)` is one span; `auto t : tile(m, n)` a tuple of them.
  if (numDims == 1 && !isKiteClass(loopVar->getType(), "Tiles") &&
      !isKiteClass(loopVar->getType(), "TileList") &&
      !isKiteClass(loopVar->getType(), "GridIndex"))
    bind(loopVar, vars.front());
  else
    bind(loopVar, KValue::aggregate(KValue::Kind::Tuple, vars));
  return success();
}
