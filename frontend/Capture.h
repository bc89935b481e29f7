//===- Capture.h - capture kite kernels from C++ into MLIR ------*- C++ -*-===//
//
// This file declares the frontend's entry point: parse a `.kite.cpp` file
// with Clang and capture its `KITE_KERNEL` functions into a module of the
// kite dialect. User errors are reported through Clang's diagnostics (with
// file, line, column, the source line and a caret) on the given stream.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_FRONTEND_CAPTURE_H
#define KITE_FRONTEND_CAPTURE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kite::frontend {

struct CaptureOptions {
  /// Capture only this kernel; empty captures every kernel of the file.
  std::string kernel;
  /// Directory holding `kite/kite.hpp`; empty uses defaultIncludeDir().
  std::string kiteIncludeDir;
  /// Clang's resource directory; empty uses the one kite was built with.
  std::string resourceDir;
  /// Extra `-I` directories and `-D` macros for the parse.
  std::vector<std::string> includeDirs;
  std::vector<std::string> defines;
  /// Extra raw arguments for the Clang driver.
  std::vector<std::string> extraArgs;
  /// Out (optional): how each captured kernel is declared in C++, for code
  /// that must name the function (`kite compile --emit=registration`).
  struct KernelDecl {
    std::string name;          // the IR's symbol name ("softmax")
    std::string qualifiedName; // "ns::softmax"; equal to name at global scope
    bool externalLinkage = true; // false for `static` or anonymous-namespace kernels
  };
  std::vector<KernelDecl> *kernelDecls = nullptr;
};

/// Registers the dialects that captured IR uses (kite, func, arith, math,
/// scf).
void registerCaptureDialects(mlir::DialectRegistry &registry);

/// The directory holding `kite/kite.hpp`: `<prefix>/include` when the
/// executable `argv0` lives in `<prefix>/bin` (an installed kite), else the
/// source tree's `include/`.
std::string defaultIncludeDir(const char *argv0, void *mainAddr);

/// Clang's resource directory (its builtin headers): `$KITE_CLANG_RESOURCE_DIR`
/// if set, else `<prefix>/lib/clang/<major>` next to an installed kite, else
/// the one kite was built with.
std::string defaultResourceDir(const char *argv0, void *mainAddr);

/// Parses `path` and captures its kernels. Diagnostics go to `diagOS`. On a
/// user error (the file does not parse, an unsupported construct, an
/// unknown `--kernel`) returns failure after reporting it.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
captureFile(mlir::MLIRContext &context, llvm::StringRef path,
            const CaptureOptions &options,
            llvm::raw_ostream &diagOS = llvm::errs());

/// One captured kernel as kite_add_kernels registers it (KernelSource):
/// `ir` is a module holding only this kernel (and its helpers), printed
/// with locations; `hash` is the 64-bit FNV-1a of that module printed
/// without locations, as 16 hex digits. The hash is the cache's kernel key:
/// it changes when the kernel does, not when its file moves.
struct KernelText {
  std::string name, ir, hash;
};
KernelText kernelText(mlir::ModuleOp module, llvm::StringRef name);

} // namespace kite::frontend

#endif // KITE_FRONTEND_CAPTURE_H
