//===- capture_fuzzer.cpp - fuzz the frontend with kernel sources ---------===//
//
// This file implements the `capture` fuzz target: the input is a kernel
// file's text, written to a temporary `.kite.cpp` file and captured with
// kite::frontend::captureFile as `kite compile` does. A user error must be
// a diagnostic and a failure; a success must be a module that verifies and
// whose printed form parses back (what kite_add_kernels embeds and the
// runtime parses). Anything else (a crash, a sanitizer report, a module
// that does not round-trip) is a finding.
//
//===----------------------------------------------------------------------===//

#include "frontend/Capture.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

/// A file of this process's own, rewritten for every input.
const std::string &inputPath() {
  static const std::string path = [] {
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("kite-fuzz-capture-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    return (dir / "input.kite.cpp").string();
  }();
  return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A kernel file is text; Clang's parse time grows with the input, and
  // past a few tens of kilobytes the fuzzer only spends its time there.
  if (size > 64 * 1024)
    return -1;
  {
    std::ofstream out(inputPath(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data), size);
  }
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  kite::frontend::CaptureOptions options;
  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  auto module = kite::frontend::captureFile(context, inputPath(), options, diagOS);
  if (mlir::failed(module))
    return 0;
  if (mlir::failed(mlir::verify(**module))) {
    std::fprintf(stderr, "captured module does not verify\n");
    std::abort();
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  (*module)->print(os, flags);
  mlir::MLIRContext reparse(mlir::MLIRContext::Threading::DISABLED);
  mlir::DialectRegistry registry;
  kite::frontend::registerCaptureDialects(registry);
  reparse.appendDialectRegistry(registry);
  if (!mlir::parseSourceString<mlir::ModuleOp>(text, &reparse)) {
    std::fprintf(stderr, "captured module does not parse back:\n%s\n", text.c_str());
    std::abort();
  }
  return 0;
}
