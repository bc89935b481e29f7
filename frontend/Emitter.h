//===- Emitter.h - lower one kite kernel's AST to the kite dialect -*- C++ -*-//
//
// This file declares KernelEmitter, the frontend's one emitter class. It
// walks a kernel's Clang AST with closed switches over statement and
// expression classes (EmitStmt.cpp, EmitExpr.cpp), recognizes the kite API
// by qualified name (EmitKiteCall.cpp) and computes result types
// (EmitType.cpp). Anything it does not know is a located diagnostic.
//
// C++ locals are mutable; the emitter keeps them in SSA form with an
// environment from declarations to values. Before a loop or an `if`, a scan
// of its body finds the outer variables it assigns; they become iter_args
// or scf.if results.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_FRONTEND_EMITTER_H
#define KITE_FRONTEND_EMITTER_H

#include "frontend/Diagnostics.h"
#include "ir/KiteDialect.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>
#include <string>
#include <vector>

namespace kite::frontend {

/// What a C++ expression evaluates to during capture.
struct KValue {
  enum class Kind {
    Void,      ///< no value: a void call, a store
    Value,     ///< one SSA value: scalar, tensor, tile, span or dtype
    BlockSize, ///< a kite::BlockSize; `value` is its i64
    Tuple,     ///< an N-D loop variable, or a std::tuple; see `elems`
    List,      ///< a braced list or a std::vector (`{tm, tn}`, `x.sizes()`)
    All,       ///< kite::all
    NewAxis,   ///< kite::newaxis
    Range,     ///< kite::range(b, e); `elems` = {begin, end}
    Closure,   ///< a lambda object
  };
  Kind kind = Kind::Void;
  mlir::Value value;
  std::vector<KValue> elems;
  const clang::LambdaExpr *lambda = nullptr;

  static KValue none() { return KValue(); }
  static KValue of(mlir::Value v) {
    KValue k;
    k.kind = Kind::Value;
    k.value = v;
    return k;
  }
  static KValue blockSize(mlir::Value v) {
    KValue k = of(v);
    k.kind = Kind::BlockSize;
    return k;
  }
  static KValue aggregate(Kind kind, std::vector<KValue> elems) {
    KValue k;
    k.kind = kind;
    k.elems = std::move(elems);
    return k;
  }
  static KValue marker(Kind kind) {
    KValue k;
    k.kind = kind;
    return k;
  }
  bool isValue() const { return kind == Kind::Value; }
  bool isValueOfType(mlir::TypeID id) const {
    return isValue() && value.getType().getTypeID() == id;
  }
};

/// A loop header from `tile(...)` or `grid(...)`.
struct LoopSpec {
  bool isGrid = false;
  llvm::SmallVector<mlir::Value> lowerBounds, upperBounds, blockSizes;
};

/// Variables a statement assigns that live outside it, in order of first
/// assignment, with the first assignment's expression.
struct AssignedVars {
  llvm::MapVector<const clang::ValueDecl *, const clang::Expr *> assigned;
  llvm::SmallPtrSet<const clang::ValueDecl *, 16> declared;
};

class KernelEmitter {
public:
  KernelEmitter(clang::ASTContext &ast, DiagReporter &diags,
                mlir::ModuleOp module);

  /// Captures `fn` into a func.func appended to the module. Reports user
  /// errors and returns failure on them.
  mlir::LogicalResult emitKernel(const clang::FunctionDecl *fn);

  /// Captures the kernel as if tensor parameter `param` had rank `rank`,
  /// into a func named `name` (a rank form: see Capture.cpp).
  void assumeRank(unsigned param, int64_t rank, std::string name) {
    assumedRank_ = {param, rank};
    funcName_ = std::move(name);
  }
  /// After a failed emitKernel: the tensor parameter whose rank a
  /// `tile(x.sizes())` needed (nothing was reported), if that was why.
  std::optional<unsigned> wantsRank() const { return wantsRank_; }

private:
  //===--------------------------------------------------------------------===//
  // Kernel signature and locations (Emitter.cpp)
  //===--------------------------------------------------------------------===//
  mlir::Location loc(clang::SourceLocation l);
  mlir::Location loc(const clang::Stmt *s);
  mlir::Location loc(const clang::Decl *d);
  mlir::LogicalResult emitSignature(const clang::FunctionDecl *fn,
                                    mlir::func::FuncOp &func);
  mlir::LogicalResult emitKernelReturn(const clang::ReturnStmt *ret);

  //===--------------------------------------------------------------------===//
  // Types and shape rules (EmitType.cpp)
  //===--------------------------------------------------------------------===//
public:
  /// kite::Tensor (any cv/ref), kite::Tile, ... by name.
  static bool isKiteClass(clang::QualType type, llvm::StringRef name);
  /// The name of a declaration in namespace kite, with its enclosing kite
  /// classes ("exp", "Tensor::to", "operator+"), or "" if it is not one.
  static std::string kiteName(const clang::NamedDecl *decl);
  static bool isStdDecl(const clang::NamedDecl *decl);

private:
  /// The MLIR type of a C++ arithmetic type, or failure.
  mlir::FailureOr<mlir::Type> convertScalarType(clang::QualType type);
  mlir::Type tensorType(std::optional<llvm::ArrayRef<int64_t>> shape,
                        mlir::Type elem);
  mlir::Type tileType(std::optional<llvm::ArrayRef<int64_t>> shape,
                      mlir::Type elem);
  mlir::Type unrankedTile(mlir::Type elem = {});
  static bool isTile(mlir::Value v);
  static bool isTensor(mlir::Value v);
  static bool isSpan(mlir::Value v);
  static bool isScalar(mlir::Value v);
  static std::optional<llvm::SmallVector<int64_t>> shapeOf(mlir::Type type);
  /// The element type a dtype value stands for, if it is a constant.
  static mlir::Type constantDType(mlir::Value dtype);
  /// PyTorch's promotion of two operand types (tiles are strong, scalars
  /// weak); null when unknown.
  mlir::Type promote(mlir::Type a, mlir::Type b);
  /// The result type of an elementwise op on `operands` with element type
  /// `elem` (null: unknown).
  mlir::FailureOr<mlir::Type>
  broadcastType(llvm::ArrayRef<mlir::Value> operands, mlir::Type elem,
                const clang::Expr *where);
  /// Requires a known element type of `v` to be an integer or boolean.
  mlir::LogicalResult requireIntegerElements(mlir::Value v,
                                             const clang::Expr *where,
                                             llvm::StringRef what);
  /// The most specific type that both `a` and `b` are instances of; null if
  /// they are different kinds of values.
  mlir::Type joinTypes(mlir::Type a, mlir::Type b);
  /// `v` as a value of the more general type `type` (a no-op at run time).
  mlir::Value generalize(mlir::Value v, mlir::Type type, mlir::Location l);
  /// A description of a value's kind for diagnostics ("a tile", ...).
  std::string describe(const KValue &v);

  //===--------------------------------------------------------------------===//
  // Statements (EmitStmt.cpp)
  //===--------------------------------------------------------------------===//
  mlir::LogicalResult emitStmt(const clang::Stmt *s);
  /// emitStmt's switch over statement classes (emitStmt bounds the nesting).
  mlir::LogicalResult emitStmtOfClass(const clang::Stmt *s);
  mlir::LogicalResult emitCompound(const clang::CompoundStmt *s);
  /// Emits the body of a kernel or an inlined function; `return` may only
  /// be its last statement.
  mlir::LogicalResult emitFunctionBody(const clang::Stmt *body);
  /// Emits statements that may `return`; the returned value, if they do.
  mlir::FailureOr<std::optional<KValue>>
  emitReturningSeq(llvm::ArrayRef<const clang::Stmt *> stmts);
  mlir::FailureOr<std::optional<KValue>>
  emitReturningIf(const clang::IfStmt *s,
                  llvm::ArrayRef<const clang::Stmt *> rest);
  mlir::FailureOr<KValue> emitReturnValue(const clang::ReturnStmt *ret);
  static llvm::SmallVector<const clang::Stmt *> stmtsOf(const clang::Stmt *s);
  mlir::LogicalResult emitDeclStmt(const clang::DeclStmt *s);
  mlir::LogicalResult emitVarDecl(const clang::VarDecl *var);
  mlir::LogicalResult emitIf(const clang::IfStmt *s);
  /// A result-less scf.if re-created with results of `types`, each branch
  /// yielding its values (generalized to the types).
  mlir::scf::IfOp withResults(mlir::scf::IfOp ifOp, mlir::Value cond,
                              llvm::ArrayRef<mlir::Type> types,
                              llvm::ArrayRef<mlir::Value> thenValues,
                              llvm::ArrayRef<mlir::Value> elseValues, mlir::Location l);
  mlir::LogicalResult emitFor(const clang::ForStmt *s);
  mlir::LogicalResult emitRangeFor(const clang::CXXForRangeStmt *s);
  mlir::LogicalResult bindLoopVar(const clang::CXXForRangeStmt *s,
                                  mlir::Block *body, unsigned numDims);
  /// Finds the outer variables that `s` assigns (following calls into
  /// inlined functions and lambdas).
  void scanAssigned(const clang::Stmt *s, AssignedVars &out);
  void scanAssignedRec(const clang::Stmt *s, AssignedVars &out,
                       llvm::SmallPtrSetImpl<const clang::Decl *> &visited);
  /// The variables of `scan` that are bound now, resolved through aliases.
  llvm::SmallVector<const clang::ValueDecl *>
  carriedVars(const AssignedVars &scan);

  /// Emits a loop whose body carries `carried`: `build` creates the op with
  /// the given init values and returns it; its body block's trailing
  /// arguments are the carried values. Re-emits the body when a carried
  /// value's type widens.
  using LoopBuilder = llvm::function_ref<mlir::FailureOr<mlir::Operation *>(
      llvm::ArrayRef<mlir::Value> inits)>;
  using LoopBodyEmitter =
      llvm::function_ref<mlir::LogicalResult(mlir::Operation *loop)>;
  mlir::LogicalResult
  emitCarriedLoop(llvm::ArrayRef<const clang::ValueDecl *> carried,
                  mlir::Location l, LoopBuilder build,
                  llvm::function_ref<mlir::Block *(mlir::Operation *)> bodyOf,
                  LoopBodyEmitter emitBody,
                  llvm::function_ref<void(mlir::Location, mlir::ValueRange)>
                      makeYield);

  //===--------------------------------------------------------------------===//
  // Expressions (EmitExpr.cpp)
  //===--------------------------------------------------------------------===//
  mlir::FailureOr<KValue> emitExpr(const clang::Expr *e);
  mlir::FailureOr<KValue> emitExprImpl(const clang::Expr *e);
  /// Evaluates `e` and requires one SSA value.
  mlir::FailureOr<mlir::Value> emitValue(const clang::Expr *e);
  /// Evaluates `e` and requires a scalar (converted to `type` if given).
  mlir::FailureOr<mlir::Value> emitScalar(const clang::Expr *e,
                                          mlir::Type type = {});
  /// Evaluates `e` and requires an i64 (integers are extended).
  mlir::FailureOr<mlir::Value> emitI64(const clang::Expr *e);
  /// An i64 constant for an integer expression Clang can fold, if any.
  std::optional<mlir::Value> tryConstI64(const clang::Expr *e);
  /// Evaluates an integer constant expression.
  mlir::FailureOr<int64_t> emitConstInt(const clang::Expr *e,
                                        llvm::StringRef what);
  /// A constant for an arithmetic expression Clang can fold, if any.
  std::optional<mlir::Value> tryFoldConstant(const clang::Expr *e);
  mlir::FailureOr<KValue> emitDeclRef(const clang::DeclRefExpr *e);
  mlir::FailureOr<KValue> emitCast(const clang::CastExpr *e);
  mlir::FailureOr<KValue> emitUnaryOperator(const clang::UnaryOperator *e);
  mlir::FailureOr<KValue> emitBinaryOperator(const clang::BinaryOperator *e);
  mlir::FailureOr<KValue>
  emitConditional(const clang::AbstractConditionalOperator *e);
  mlir::FailureOr<KValue> emitCall(const clang::CallExpr *e);
  mlir::FailureOr<KValue> emitConstruct(const clang::CXXConstructExpr *e);
  mlir::FailureOr<KValue> emitInitList(const clang::InitListExpr *e);
  mlir::FailureOr<KValue> emitLambda(const clang::LambdaExpr *e);
  /// Inlines `callee` with `args` bound to its parameters (or, where
  /// `given` is not empty, the values `given`: a call kite itself makes,
  /// such as an associative scan's combine function).
  mlir::FailureOr<KValue> emitInlineCall(const clang::FunctionDecl *callee,
                                         llvm::ArrayRef<const clang::Expr *> args,
                                         const clang::Expr *call,
                                         llvm::ArrayRef<KValue> given = {});
  mlir::FailureOr<KValue> emitStdCall(const clang::FunctionDecl *callee,
                                      const clang::CallExpr *e);
  /// Assigns `value` to the variable `lhs` names (a rebind).
  mlir::LogicalResult assignTo(const clang::Expr *lhs, KValue value,
                               const clang::Expr *assign);
  /// Scalar arithmetic with arith ops; `isUnsigned` picks the signedness.
  mlir::FailureOr<mlir::Value> emitScalarArith(clang::BinaryOperatorKind op,
                                               mlir::Value a, mlir::Value b,
                                               bool isUnsigned,
                                               mlir::Location l,
                                               const clang::Expr *e);
  mlir::Value castScalar(mlir::Value v, mlir::Type to, bool srcUnsigned,
                         mlir::Location l);
  mlir::Value toBool(mlir::Value v, mlir::Location l);
  mlir::Value constInt(mlir::Type type, int64_t v, mlir::Location l);
  mlir::Value constI64(int64_t v, mlir::Location l);
  mlir::Value constFloat(mlir::Type type, double v, mlir::Location l);
  /// Requires `v` to be a tile or scalar operand of an elementwise op.
  mlir::FailureOr<mlir::Value> elementwiseOperand(const KValue &v,
                                                  const clang::Expr *e,
                                                  llvm::StringRef opName);

  //===--------------------------------------------------------------------===//
  // The kite API (EmitKiteCall.cpp)
  //===--------------------------------------------------------------------===//
  /// Emits a call to a kite API function or method named `name`; `self` is
  /// the object argument of a method (null for free functions).
  mlir::FailureOr<KValue> emitKiteCall(llvm::StringRef name,
                                       const clang::FunctionDecl *callee,
                                       const clang::Expr *self,
                                       llvm::ArrayRef<const clang::Expr *> args,
                                       const clang::Expr *call);
  mlir::FailureOr<KValue> emitKiteOperator(llvm::StringRef name,
                                           llvm::ArrayRef<const clang::Expr *> args,
                                           const clang::Expr *call);
  mlir::FailureOr<KValue> emitUnary(kite::UnaryKind kind,
                                    const clang::Expr *arg,
                                    const clang::Expr *call);
  /// Emits both operands of an elementwise op, each a tile or a scalar.
  mlir::FailureOr<std::pair<mlir::Value, mlir::Value>>
  emitElementwiseOperands(const clang::Expr *lhs, const clang::Expr *rhs,
                          llvm::StringRef opName);
  mlir::FailureOr<KValue> emitBinary(kite::BinaryKind kind,
                                     const clang::Expr *lhs,
                                     const clang::Expr *rhs,
                                     const clang::Expr *call);
  mlir::FailureOr<mlir::Value> binaryValues(kite::BinaryKind kind,
                                            mlir::Value a, mlir::Value b,
                                            mlir::Location l,
                                            const clang::Expr *call);
  mlir::FailureOr<KValue> emitCompare(kite::CompareKind kind,
                                      const clang::Expr *lhs,
                                      const clang::Expr *rhs,
                                      const clang::Expr *call);
  mlir::FailureOr<KValue> emitReduce(kite::ReduceKind kind,
                                     llvm::ArrayRef<const clang::Expr *> args,
                                     const clang::Expr *call);
  /// cumsum, cumprod, cummax, cummin (v, dim).
  mlir::FailureOr<KValue> emitAssociativeScan(llvm::ArrayRef<const clang::Expr *> args,
                                              const clang::Expr *call);
  mlir::LogicalResult emitScanCombine(kite::AssociativeScanOp scan,
                                      const clang::CXXMethodDecl *op,
                                      const clang::Expr *fnExpr, const clang::Expr *call);
  mlir::FailureOr<KValue> emitScan(kite::ScanKind kind,
                                   llvm::ArrayRef<const clang::Expr *> args,
                                   const clang::Expr *call);
  /// sort(v, dim, descending) and topk(v, k, dim, largest): a tuple of the
  /// values and their positions.
  mlir::FailureOr<KValue> emitSort(llvm::StringRef name,
                                   llvm::ArrayRef<const clang::Expr *> args,
                                   const clang::Expr *call);
  /// rand, randn (seed, offsets) and randint (seed, offsets, low, high).
  mlir::FailureOr<KValue> emitRandom(llvm::StringRef name,
                                     llvm::ArrayRef<const clang::Expr *> args,
                                     const clang::Expr *call);
  /// Loads and stores: the tensor, index operands and layout of a subscript.
  struct Subscript {
    mlir::Value tensor;
    llvm::SmallVector<mlir::Value> indices;
    llvm::SmallVector<int32_t> layout;
  };
  mlir::FailureOr<Subscript>
  emitSubscript(const clang::Expr *tensorExpr,
                llvm::ArrayRef<const clang::Expr *> indexExprs,
                const clang::Expr *whole, bool isStore = false);
  mlir::LogicalResult addSubscriptIndex(const KValue &idx,
                                        const clang::Expr *e, Subscript &sub);
  mlir::Type loadResultType(const Subscript &sub);
  mlir::FailureOr<KValue> emitLoad(const Subscript &sub, mlir::Value mask,
                                   mlir::Location l);
  mlir::LogicalResult emitStore(const Subscript &sub, mlir::Value value,
                                mlir::Value mask, mlir::Location l,
                                const clang::Expr *where);
  mlir::LogicalResult checkStoredRank(const Subscript &sub, mlir::Value value,
                                      const clang::Expr *where);
  mlir::FailureOr<mlir::Value> emitMask(const clang::Expr *e);
  /// If `e` is a subscript `x[...]` (a Tensor::operator[] call), its parts.
  const clang::CXXOperatorCallExpr *asSubscript(const clang::Expr *e);
  /// Emits `target op= value` or `target = value` where target is a
  /// subscript (a store) or a variable (a rebind).
  mlir::FailureOr<KValue> emitTensorAssign(std::optional<kite::BinaryKind> op,
                                           const clang::Expr *target,
                                           const clang::Expr *valueExpr,
                                           const clang::Expr *call);
  /// The dims of `empty/zeros/full/reshape/expand`: i64 values or spans.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitDims(const clang::Expr *e, bool allowSpans);
  /// Static extents of dims for result types (`?` unless constant).
  llvm::SmallVector<int64_t> staticDims(llvm::ArrayRef<mlir::Value> dims);
  mlir::FailureOr<KValue> emitCreate(llvm::StringRef name,
                                     llvm::ArrayRef<const clang::Expr *> args,
                                     const clang::Expr *call);
  mlir::FailureOr<mlir::Value> emitDType(const clang::Expr *e);
  mlir::Value dtypeConst(mlir::Type elem, mlir::Location l);
  mlir::FailureOr<LoopSpec> emitLoopSpec(const clang::Expr *range,
                                         llvm::StringRef &kind);
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  emitIntList(const clang::Expr *e, llvm::StringRef what);
  mlir::FailureOr<KValue> emitShapeOp(llvm::StringRef name,
                                      const clang::Expr *self,
                                      llvm::ArrayRef<const clang::Expr *> args,
                                      const clang::Expr *call);
  mlir::FailureOr<KValue> emitMatmul(llvm::StringRef name,
                                     llvm::ArrayRef<const clang::Expr *> args,
                                     const clang::Expr *call);
  mlir::FailureOr<mlir::Value> requireTile(const clang::Expr *e,
                                           llvm::StringRef what);
  /// Normalizes `dim` against `rank` positions; reports if out of range.
  mlir::FailureOr<int64_t> checkDim(int64_t dim, std::optional<int64_t> rank,
                                    const clang::Expr *e,
                                    llvm::StringRef what,
                                    std::optional<int64_t> shownRank = {});

  //===--------------------------------------------------------------------===//
  // The environment
  //===--------------------------------------------------------------------===//
  struct Binding {
    KValue value;
    const clang::ValueDecl *alias = nullptr; ///< a reference parameter's target
  };
  const clang::ValueDecl *resolveAlias(const clang::ValueDecl *d);
  void bind(const clang::ValueDecl *d, KValue v);
  void bindAlias(const clang::ValueDecl *d, const clang::ValueDecl *target);
  KValue *lookup(const clang::ValueDecl *d);
  void pushScope() { scopes_.emplace_back(); }
  void popScope();
  struct ScopeGuard {
    KernelEmitter &e;
    explicit ScopeGuard(KernelEmitter &e) : e(e) { e.pushScope(); }
    ~ScopeGuard() { e.popScope(); }
  };
  /// Checks that a value used here is defined in an enclosing region (a
  /// tile escaping its loop is the user's error).
  mlir::LogicalResult checkVisible(const KValue &v, const clang::Expr *use,
                                   const clang::ValueDecl *d);

  //===--------------------------------------------------------------------===//
  // State
  //===--------------------------------------------------------------------===//
  clang::ASTContext &ast_;
  clang::SourceManager &sm_;
  DiagReporter &diags_;
  mlir::ModuleOp module_;
  mlir::MLIRContext *ctx_;
  mlir::OpBuilder b_;

  llvm::DenseMap<const clang::ValueDecl *, Binding> env_;
  std::vector<llvm::SmallVector<const clang::ValueDecl *, 8>> scopes_;

  struct InlineFrame {
    const clang::FunctionDecl *callee;
    const clang::Expr *call;
    mlir::Location callerLoc;
    std::optional<KValue> result;
  };
  std::vector<InlineFrame> frames_;

  /// Number of enclosing tile/grid loops (0: the host prologue).
  unsigned deviceDepth_ = 0;
  /// Host-level constructs (if, for) enclosing the current statement, for
  /// the error on a top-level loop inside one.
  std::vector<const clang::Stmt *> hostConstructs_;
  /// Spans and grid indices, with the loop statement that defines them.
  llvm::DenseMap<mlir::Value, const clang::Stmt *> loopOfValue_;
  int64_t nextBlockSizeId_ = 0;
  /// Enclosing if, for and tile/grid statements (inlined calls included):
  /// each is a region in the IR, and MLIR's parser, verifier and printer
  /// recurse once per region, on whatever stack the runtime has.
  unsigned regionDepth_ = 0;
  std::optional<KValue> kernelResult_;
  const clang::ReturnStmt *returnStmt_ = nullptr;
  const clang::FunctionDecl *kernel_ = nullptr;
  mlir::func::FuncOp func_;
  std::optional<std::pair<unsigned, int64_t>> assumedRank_;
  std::string funcName_;
  std::optional<unsigned> wantsRank_;
};

} // namespace kite::frontend

#endif // KITE_FRONTEND_EMITTER_H
