//===- Capture.cpp - parse a kernel file and capture its kernels ----------===//
//
// This file implements the frontend's driver: it runs Clang (through the
// driver, so the host's C++ standard library is found) on a `.kite.cpp`
// file with a syntax-only action, finds the `KITE_KERNEL` functions with an
// AST matcher, emits each into the module with KernelEmitter and verifies
// the result. Every message goes through the parse's DiagnosticsEngine.
//
// Clang's parser, Sema and CFG builder, and the emitter, recurse once per
// level of an expression or statement, so a long or deeply nested kernel
// would overflow an ordinary thread's stack. The capture therefore runs on
// a thread of its own with a large stack (as clang runs cc1 on one), and a
// token watcher stops the parse with a located fatal error where the input
// would exhaust even that (CaptureLimits).
//
//===----------------------------------------------------------------------===//

#include "frontend/Capture.h"
#include "frontend/Diagnostics.h"
#include "frontend/Emitter.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/Preprocessor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/thread.h"

#include <cstdlib>

#ifndef KITE_CLANG_RESOURCE_DIR
#error "KITE_CLANG_RESOURCE_DIR must be defined by the build"
#endif
#ifndef KITE_SOURCE_INCLUDE_DIR
#error "KITE_SOURCE_INCLUDE_DIR must be defined by the build"
#endif

using namespace kite::frontend;
using namespace clang::ast_matchers;

void kite::frontend::registerCaptureDialects(mlir::DialectRegistry &registry) {
  registry.insert<kite::KiteDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect>();
}

std::string kite::frontend::defaultIncludeDir(const char *argv0,
                                              void *mainAddr) {
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, mainAddr);
  if (!exe.empty()) {
    // <prefix>/bin/kite -> <prefix>/include
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(
        llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(dir, "include");
    llvm::SmallString<256> header(dir);
    llvm::sys::path::append(header, "kite", "kite.hpp");
    if (llvm::sys::fs::exists(header))
      return std::string(dir);
  }
  return KITE_SOURCE_INCLUDE_DIR;
}

std::string kite::frontend::defaultResourceDir(const char *argv0,
                                               void *mainAddr) {
  if (const char *env = std::getenv("KITE_CLANG_RESOURCE_DIR"); env && *env)
    return env;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, mainAddr);
  if (!exe.empty()) {
    // <prefix>/bin/kite -> <prefix>/lib/clang/<major>
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(
        llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(dir, "lib", "clang",
                            std::to_string(LLVM_VERSION_MAJOR));
    llvm::SmallString<256> probe(dir);
    llvm::sys::path::append(probe, "include", "stddef.h");
    if (llvm::sys::fs::exists(probe))
      return std::string(dir);
  }
  return KITE_CLANG_RESOURCE_DIR;
}

namespace {

//===----------------------------------------------------------------------===//
// Finding kernels
//===----------------------------------------------------------------------===//

class KernelFinder : public MatchFinder::MatchCallback {
public:
  void run(const MatchFinder::MatchResult &result) override {
    auto *fn = result.Nodes.getNodeAs<clang::FunctionDecl>("kernel");
    if (!fn || !fn->isThisDeclarationADefinition())
      return;
    for (const auto *attr : fn->specific_attrs<clang::AnnotateAttr>())
      if (attr->getAnnotation() == "kite_kernel") {
        if (!llvm::is_contained(kernels, fn))
          kernels.push_back(fn);
        return;
      }
  }
  std::vector<const clang::FunctionDecl *> kernels;
};

/// Maps an MLIR location back to a Clang one, for internal errors.
clang::SourceLocation toClangLoc(mlir::Location l, clang::SourceManager &sm) {
  if (auto callsite = llvm::dyn_cast<mlir::CallSiteLoc>(l))
    return toClangLoc(callsite.getCallee(), sm);
  auto file = llvm::dyn_cast<mlir::FileLineColLoc>(l);
  if (!file)
    return {};
  auto entry = sm.getFileManager().getOptionalFileRef(file.getFilename());
  if (!entry)
    return {};
  return sm.translateFileLineCol(*entry, file.getLine(), file.getColumn());
}

//===----------------------------------------------------------------------===//
// Limits: the capture thread's stack
//===----------------------------------------------------------------------===//

/// The capture thread's stack. Only the pages a parse touches are committed,
/// so a large reservation costs nothing for ordinary kernels. Measured on
/// Clang 19: its parser takes about 5.4 KiB of stack per nested unary minus
/// (a g++ -O2 build; about twice that under AddressSanitizer), so 20,000 of
/// them need about 110 MiB (220 under ASan).
constexpr unsigned kCaptureStackBytes = 1024u << 20;
/// The parse (Clang's recursive descent) may use half of it; the rest is for
/// what runs after the last token of a construct, with the AST it built:
/// Sema's checks of a full expression and the emitter, which recurse as deep
/// as the parse did but with smaller frames.
constexpr size_t kMaxParseStackBytes = kCaptureStackBytes / 2;
/// Binary operators, member calls and the like parse in a loop but build an
/// AST as deep as the chain is long (`v + v + ... + v`), which the later
/// recursive walks then descend (about 3 KiB a level for Sema and the
/// emitter together, more under ASan). Bounding the operators of one
/// statement (per brace level, so that a lambda inside an expression does
/// not reset the count) bounds that depth.
constexpr unsigned kMaxStatementOperators = 50000;

/// Watches every token the parser reads. When the parse nests deeper than
/// kMaxParseStackBytes or a statement has more than kMaxStatementOperators
/// operators, reports a fatal error at that token and turns it and every
/// later token into end-of-file, so that the parser unwinds at once (a
/// fatal error alone does not stop Clang's parser; it only silences it).
class CaptureLimits {
public:
  explicit CaptureLimits(const char *stackBottom) : stackBottom_(stackBottom) {}

  void onToken(clang::Token &tok, clang::DiagnosticsEngine &engine) {
    if (!tripped_) {
      check(tok, engine);
      if (!tripped_)
        return;
    }
    clang::SourceLocation loc = tok.getLocation();
    tok.startToken();
    tok.setKind(clang::tok::eof);
    tok.setLocation(loc);
  }

private:
  void check(const clang::Token &tok, clang::DiagnosticsEngine &engine) {
    size_t used = stackUsed();
    if (used > kMaxParseStackBytes) {
      trip(engine).report(tok.getLocation(), Diag::NestingTooDeep)
          << unsigned(used >> 20);
      return;
    }
    switch (tok.getKind()) {
    case clang::tok::l_brace:
      operators_.push_back(0);
      return;
    case clang::tok::r_brace:
      if (operators_.size() > 1)
        operators_.pop_back();
      else
        operators_.back() = 0;
      return;
    case clang::tok::semi:
      operators_.back() = 0;
      return;
    // Separators and closers add no level to the AST.
    case clang::tok::comma:
    case clang::tok::r_paren:
    case clang::tok::r_square:
    case clang::tok::colon:
    case clang::tok::coloncolon:
      return;
    default:
      break;
    }
    if (!clang::tok::getPunctuatorSpelling(tok.getKind()))
      return;
    if (++operators_.back() > kMaxStatementOperators)
      trip(engine).report(tok.getLocation(), Diag::StatementTooLong)
          << kMaxStatementOperators;
  }

  DiagReporter &trip(clang::DiagnosticsEngine &engine) {
    tripped_ = true;
    reporter_.emplace(engine);
    return *reporter_;
  }

  size_t stackUsed() const {
    // The stack grows down from stackBottom_ on every target kite runs on.
    uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    uintptr_t bottom = reinterpret_cast<uintptr_t>(stackBottom_);
    // Off this stack, on a thread of Clang's own: where its
    // runWithSufficientStackSpace found the stack nearly exhausted (by its
    // 8 MiB measure), it continues on a fresh 8 MiB thread. That happens in
    // Sema's walks, not in the parse that reads tokens.
    if (here > bottom || bottom - here > kCaptureStackBytes)
      return 0;
    return bottom - here;
  }

  const char *stackBottom_;
  llvm::SmallVector<unsigned> operators_ = {0};
  bool tripped_ = false;
  std::optional<DiagReporter> reporter_;
};

//===----------------------------------------------------------------------===//
// The Clang action
//===----------------------------------------------------------------------===//

/// Keeps the diagnostics reported to it, to report again later.
class StoringConsumer : public clang::DiagnosticConsumer {
public:
  std::vector<clang::StoredDiagnostic> stored;
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic &info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    stored.emplace_back(level, info);
  }
};

class CaptureConsumer : public clang::ASTConsumer {
public:
  CaptureConsumer(mlir::ModuleOp module, const CaptureOptions &options,
                  bool &failed)
      : module_(module), options_(options), failed_(failed) {}

  void HandleTranslationUnit(clang::ASTContext &ast) override {
    clang::DiagnosticsEngine &engine = ast.getDiagnostics();
    if (engine.hasErrorOccurred()) {
      failed_ = true; // Clang has reported why.
      return;
    }
    DiagReporter diags(engine);

    MatchFinder finder;
    KernelFinder kernels;
    finder.addMatcher(
        functionDecl(hasAttr(clang::attr::Annotate)).bind("kernel"), &kernels);
    finder.matchAST(ast);
    std::vector<const clang::FunctionDecl *> found = kernels.kernels;
    clang::SourceManager &sm = ast.getSourceManager();
    llvm::sort(found, [&](const clang::FunctionDecl *a,
                                 const clang::FunctionDecl *b) {
      return sm.isBeforeInTranslationUnit(a->getLocation(), b->getLocation());
    });

    if (found.empty() && options_.kernel.empty()) {
      // An empty module would be a silent no-op for the build that embeds
      // it (kite_add_kernels); a kernel file without kernels is a mistake.
      clang::FileID mainFile = sm.getMainFileID();
      llvm::StringRef name = "<input>";
      if (auto entry = sm.getFileEntryRefForID(mainFile))
        name = entry->getName();
      diags.report(sm.getLocForStartOfFile(mainFile), Diag::NoKernels)
          << name;
      failed_ = true;
      return;
    }

    if (!options_.kernel.empty()) {
      std::vector<const clang::FunctionDecl *> selected;
      for (const clang::FunctionDecl *fn : found)
        if (fn->getName() == options_.kernel)
          selected.push_back(fn);
      if (selected.empty()) {
        diags.report(clang::SourceLocation(), Diag::KernelNotFound)
            << options_.kernel;
        std::string names;
        for (const clang::FunctionDecl *fn : found)
          names += (names.empty() ? "" : ", ") + fn->getName().str();
        diags.report(clang::SourceLocation(), Diag::NoteAvailableKernels)
            << (names.empty() ? std::string("none") : names);
        failed_ = true;
        return;
      }
      found = selected;
    }

    for (const clang::FunctionDecl *fn : found) {
      if (options_.kernelDecls)
        options_.kernelDecls->push_back({fn->getName().str(), fn->getQualifiedNameAsString(),
                                         fn->hasExternalFormalLinkage()});
      KernelEmitter emitter(ast, diags, module_);
      if (mlir::succeeded(emitter.emitKernel(fn)))
        continue;
      std::optional<unsigned> param = emitter.wantsRank();
      if (!param || mlir::failed(emitRankForms(ast, diags, fn, *param)))
        failed_ = true;
    }
    if (failed_)
      return;

    // A verifier failure is our bug: report it at the op's user location.
    std::string message;
    mlir::Location where = mlir::UnknownLoc::get(module_.getContext());
    mlir::ScopedDiagnosticHandler handler(
        module_.getContext(), [&](mlir::Diagnostic &d) {
          if (message.empty() && d.getSeverity() ==
                                     mlir::DiagnosticSeverity::Error) {
            message = d.str();
            where = d.getLocation();
          }
          return mlir::success();
        });
    if (mlir::failed(mlir::verify(module_))) {
      diags.report(toClangLoc(where, sm), Diag::InternalVerifier) << message;
      failed_ = true;
    }
  }

private:
  /// Captures `fn`, which tiles the sizes of tensor parameter `param` of
  /// unknown rank, once per rank: the forms rankFormName(k, r) for the
  /// ranks r in [1, kMaxRankForm] it captures at, and a declaration `k`
  /// (kRankFormsAttrName) that kite-specialize resolves by the launch's
  /// rank. A rank the kernel rejects (x.size(2) of a matrix) has no form,
  /// silently; if no rank captures, the highest one's errors are reported.
  mlir::LogicalResult emitRankForms(clang::ASTContext &ast, DiagReporter &diags,
                                    const clang::FunctionDecl *fn, unsigned param) {
    clang::DiagnosticsEngine &engine = diags.engine();
    std::string name = fn->getName().str();
    llvm::SmallVector<int64_t> ranks;
    mlir::func::FuncOp first;
    std::unique_ptr<StoringConsumer> lastErrors;
    bool hadErrors = engine.hasErrorOccurred(); // another kernel's
    for (int64_t r = 1; r <= kite::kMaxRankForm; ++r) {
      // Each form's errors go to a buffer, and count toward nothing.
      auto buffer = std::make_unique<StoringConsumer>();
      clang::DiagnosticConsumer *client = engine.getClient();
      std::unique_ptr<clang::DiagnosticConsumer> owned = engine.takeClient();
      engine.setClient(buffer.get(), /*ShouldOwnClient=*/false);
      KernelEmitter form(ast, diags, module_);
      form.assumeRank(param, r, kite::rankFormName(name, r));
      bool ok = mlir::succeeded(form.emitKernel(fn));
      if (owned)
        engine.setClient(owned.release(), /*ShouldOwnClient=*/true);
      else
        engine.setClient(client, /*ShouldOwnClient=*/false);
      if (!hadErrors)
        engine.Reset(/*soft=*/true);
      if (!ok) {
        lastErrors = std::move(buffer);
        continue;
      }
      ranks.push_back(r);
      if (!first)
        first = llvm::cast<mlir::func::FuncOp>(
            mlir::SymbolTable::lookupSymbolIn(module_, kite::rankFormName(name, r)));
    }
    for (int64_t r : ranks) {
      auto f = llvm::cast<mlir::func::FuncOp>(
          mlir::SymbolTable::lookupSymbolIn(module_, kite::rankFormName(name, r)));
      f->removeAttr(kite::kKernelAttrName);
    }
    if (ranks.empty()) {
      diags.report(fn->getLocation(), Diag::NoRankForm)
          << name << fn->getParamDecl(param)->getName()
          << static_cast<unsigned>(kite::kMaxRankForm);
      if (lastErrors)
        for (const clang::StoredDiagnostic &d : lastErrors->stored)
          engine.Report(d);
      return mlir::failure();
    }
    // The declaration: the forms' signature with the parameter unranked
    // and every result a tensor of unknown rank.
    mlir::OpBuilder b(module_.getContext());
    b.setInsertionPoint(first);
    mlir::FunctionType type = first.getFunctionType();
    llvm::SmallVector<mlir::Type> inputs(type.getInputs()), results;
    inputs[param] = kite::TensorType::get(module_.getContext(), std::nullopt, mlir::Type());
    for (size_t i = 0; i < type.getNumResults(); ++i)
      results.push_back(kite::TensorType::get(module_.getContext(), std::nullopt, mlir::Type()));
    auto decl = b.create<mlir::func::FuncOp>(first.getLoc(), name,
                                             b.getFunctionType(inputs, results));
    decl.setPrivate();
    decl->setAttr(kite::kKernelAttrName, b.getUnitAttr());
    decl->setAttr(kite::kRankFormsAttrName,
                  b.getDictionaryAttr({b.getNamedAttr("param", b.getI64IntegerAttr(param)),
                                       b.getNamedAttr("ranks", b.getDenseI64ArrayAttr(ranks))}));
    for (unsigned i = 0; i < inputs.size(); ++i)
      decl.setArgAttr(i, kite::kArgNameAttrName, first.getArgAttr(i, kite::kArgNameAttrName));
    return mlir::success();
  }

  mlir::ModuleOp module_;
  const CaptureOptions &options_;
  bool &failed_;
};

class CaptureAction : public clang::ASTFrontendAction {
public:
  CaptureAction(mlir::ModuleOp module, const CaptureOptions &options,
                bool &failed, CaptureLimits &limits)
      : module_(module), options_(options), failed_(failed), limits_(limits) {}

protected:
  std::unique_ptr<clang::ASTConsumer>
  CreateASTConsumer(clang::CompilerInstance &ci, llvm::StringRef) override {
    clang::Preprocessor &pp = ci.getPreprocessor();
    // The watcher gets the parser's own token (Preprocessor::Lex's result),
    // so changing it is what the parser sees.
    pp.setTokenWatcher([this, &pp](const clang::Token &tok) {
      limits_.onToken(const_cast<clang::Token &>(tok), pp.getDiagnostics());
    });
    return std::make_unique<CaptureConsumer>(module_, options_, failed_);
  }

private:
  mlir::ModuleOp module_;
  const CaptureOptions &options_;
  bool &failed_;
  CaptureLimits &limits_;
};

} // namespace

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

namespace {

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
captureOnThisThread(mlir::MLIRContext &context, llvm::StringRef path,
                    const CaptureOptions &options, llvm::raw_ostream &diagOS,
                    const char *stackBottom) {
  mlir::DialectRegistry registry;
  registerCaptureDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();

  std::string includeDir = options.kiteIncludeDir.empty()
                               ? std::string(KITE_SOURCE_INCLUDE_DIR)
                               : options.kiteIncludeDir;
  std::string resourceDir = options.resourceDir.empty()
                                ? std::string(KITE_CLANG_RESOURCE_DIR)
                                : options.resourceDir;
  std::vector<std::string> args = {"clang++",       "-fsyntax-only",
                                   "-x",            "c++",
                                   "-std=c++23",    "-resource-dir",
                                   resourceDir,     "-DKITE_FRONTEND",
                                   // Clang measures its stack against 8 MiB;
                                   // the capture thread has far more.
                                   "-Wno-stack-exhausted"};
  // The user's directories first, so they can override kite's headers.
  for (const std::string &dir : options.includeDirs)
    args.push_back("-I" + dir);
  args.push_back("-I" + includeDir);
  for (const std::string &def : options.defines)
    args.push_back("-D" + def);
  args.insert(args.end(), options.extraArgs.begin(), options.extraArgs.end());
  args.push_back(path.str());
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());

  // Diagnostics from the driver (bad flags) and from the parse both print
  // to diagOS.
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diagOpts =
      new clang::DiagnosticOptions();
  llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> driverDiags =
      clang::CompilerInstance::createDiagnostics(
          diagOpts.get(), new clang::TextDiagnosticPrinter(diagOS, diagOpts.get()),
          /*ShouldOwnClient=*/true);
  clang::CreateInvocationOptions cio;
  cio.Diags = driverDiags;
  cio.ProbePrecompiled = false;
  std::shared_ptr<clang::CompilerInvocation> invocation =
      clang::createInvocation(argv, cio);
  if (!invocation)
    return mlir::failure();
  // The driver asks cc1 to skip freeing the AST, Sema and the preprocessor
  // at the end (-disable-free: a compiler process exits right after). A
  // capture is a call in a longer-lived process (the fuzzer, a tool that
  // captures several files), where that leaked about 50 MB per file.
  invocation->getFrontendOpts().DisableFree = false;

  clang::CompilerInstance ci;
  ci.setInvocation(invocation);
  ci.createDiagnostics(
      new clang::TextDiagnosticPrinter(diagOS, &ci.getDiagnosticOpts()),
      /*ShouldOwnClient=*/true);
  if (!ci.hasDiagnostics())
    return mlir::failure();

  mlir::OpBuilder builder(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::FileLineColLoc::get(&context, path, 1, 1));
  bool failed = false;
  CaptureLimits limits(stackBottom);
  CaptureAction action(*module, options, failed, limits);
  bool ok = ci.ExecuteAction(action);
  if (!ok || failed || ci.getDiagnostics().hasErrorOccurred())
    return mlir::failure();
  return module;
}

} // namespace

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
kite::frontend::captureFile(mlir::MLIRContext &context, llvm::StringRef path,
                            const CaptureOptions &options,
                            llvm::raw_ostream &diagOS) {
  // Everything, from the driver to the verifier, runs on a thread with
  // kCaptureStackBytes of stack (see CaptureLimits); the caller waits.
  // With multithreading on, MLIR allocates the types and attributes a
  // thread creates from that thread's own allocator, which the thread's
  // exit frees: the module's types would dangle once the capture thread is
  // gone (AddressSanitizer: use-after-poison in `kite compile
  // --emit=registration`). Off for the capture, they come from the
  // context's allocator.
  bool multithreaded = context.isMultithreadingEnabled();
  if (multithreaded)
    context.disableMultithreading();
  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> result = mlir::failure();
  llvm::thread worker(std::optional<unsigned>(kCaptureStackBytes), [&] {
    char bottom;
    result = captureOnThisThread(context, path, options, diagOS, &bottom);
  });
  worker.join();
  if (multithreaded)
    context.enableMultithreading();
  return result;
}

namespace {
std::string fnv1a(llvm::StringRef text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
  return buf;
}
} // namespace

kite::frontend::KernelText kite::frontend::kernelText(mlir::ModuleOp module,
                                                      llvm::StringRef name) {
  mlir::OwningOpRef<mlir::ModuleOp> copy(module.clone());
  llvm::SmallVector<mlir::Operation *> others;
  // Every other function is another kernel or one of its rank forms; this
  // kernel's forms stay.
  llvm::SmallVector<std::string> keep = {name.str()};
  for (int64_t r = 1; r <= kite::kMaxRankForm; ++r)
    keep.push_back(kite::rankFormName(name, r));
  for (auto other : copy->getOps<mlir::func::FuncOp>())
    if (!llvm::is_contained(keep, other.getSymName()))
      others.push_back(other);
  for (mlir::Operation *op : others)
    op->erase();
  KernelText t;
  t.name = name.str();
  {
    llvm::raw_string_ostream os(t.ir);
    mlir::OpPrintingFlags flags;
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    copy->print(os, flags);
    os << "\n";
  }
  std::string bare;
  {
    llvm::raw_string_ostream os(bare);
    copy->print(os);
  }
  t.hash = fnv1a(bare);
  return t;
}
