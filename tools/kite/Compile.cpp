//===- Compile.cpp - `kite compile` ---------------------------------------===//
//
// This file implements `kite compile`: capture the kernels of a `.kite.cpp`
// file and print the verified kite IR (all kernels, or the one named by
// `--kernel`). The build uses it to embed captured IR in applications.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "frontend/Capture.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <memory>
#include <string>
#include <vector>

namespace {

struct CompileOptions {
  std::string file;
  std::string kernel;
  std::string emit = "ir";
  std::string output = "-";
  std::vector<std::string> includeDirs;
  std::vector<std::string> defines;
  std::string resourceDir;
  bool debugLocations = false;
};

int runCompile(const CompileOptions &opts, const kite::cli::Context &context) {
  kite::frontend::CaptureOptions capture;
  capture.kernel = opts.kernel;
  capture.kiteIncludeDir = kite::frontend::defaultIncludeDir(
      context.argv0, reinterpret_cast<void *>(&runCompile));
  // -I directories come first, so they can override kite's own headers.
  capture.includeDirs = opts.includeDirs;
  capture.defines = opts.defines;
  capture.resourceDir =
      !opts.resourceDir.empty()
          ? opts.resourceDir
          : kite::frontend::defaultResourceDir(
                context.argv0, reinterpret_cast<void *>(&runCompile));

  mlir::MLIRContext mlirContext;
  auto module = kite::frontend::captureFile(mlirContext, opts.file, capture);
  if (mlir::failed(module))
    return kite::cli::kUserError;

  std::string error;
  auto out = mlir::openOutputFile(opts.output, &error);
  if (!out) {
    llvm::WithColor::error(llvm::errs(), "kite compile")
        << "cannot write '" << opts.output << "': " << error << "\n";
    return kite::cli::kUserError;
  }
  mlir::OpPrintingFlags flags;
  if (opts.debugLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  (*module)->print(out->os(), flags);
  out->os() << "\n";
  out->keep();
  return kite::cli::kSuccess;
}

} // namespace

void kite::cli::addCompileCommand(CLI::App &app, Context &context) {
  auto opts = std::make_shared<CompileOptions>();
  CLI::App *cmd = app.add_subcommand(
      "compile", "Capture the kernels of a .kite.cpp file into kite IR");
  cmd->add_option("file", opts->file, "The kernel source file (.kite.cpp)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--kernel", opts->kernel,
                  "Capture only this kernel (default: every kernel)");
  cmd->add_option("--emit", opts->emit, "What to print")
      ->check(CLI::IsMember({"ir"}))
      ->default_str("ir");
  cmd->add_option("-o,--output", opts->output, "Output file ('-': stdout)")
      ->default_str("-");
  cmd->add_option("-I,--include", opts->includeDirs,
                  "Add a header search directory (searched before kite's "
                  "own include directory)");
  cmd->add_option("-D,--define", opts->defines,
                  "Define a macro for the parse (NAME or NAME=VALUE)");
  cmd->add_option("--resource-dir", opts->resourceDir,
                  "Clang's resource directory (default: $KITE_CLANG_RESOURCE_DIR, "
                  "<prefix>/lib/clang/19 next to kite, or the one kite was "
                  "built with)");
  cmd->add_flag("--debug-locations", opts->debugLocations,
                "Print each op's source location (loc(...)) in the IR");
  cmd->callback([opts, &context] { context.exitCode = runCompile(*opts, context); });
}
