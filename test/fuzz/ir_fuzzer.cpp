//===- ir_fuzzer.cpp - fuzz IR parsing and lowering to CUDA ---------------===//
//
// This file implements the `ir` fuzz target: the input is captured kite IR
// (what `kite compile --emit=ir` writes and the runtime embeds), optionally
// preceded by `// ARGS: x=f32[64,100] ...` and `// CONFIG: {...}` lines. It
// is parsed and verified, and every kernel in it is lowered to CUDA with
// kite::lowerToCuda (the runtime's pipeline up to the CUDA source, no
// NVRTC) for those arguments (or default ones derived from the signature)
// and config. Bad IR or arguments must raise kite::Error; anything else
// escaping (another exception, a crash, a sanitizer report) is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lowering/Compiler.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace kite;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024)
    return -1;
  // A std::string: MLIR's lexer reads the buffer up to a terminating NUL,
  // which the fuzzer's bytes do not have (lowerToCuda's callers pass
  // strings or literals).
  const std::string input(reinterpret_cast<const char *>(data), size);

  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  ctx.loadDialect<KiteDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::scf::SCFDialect>();
  // Parse errors are the common case; keep them off the fuzzer's output.
  mlir::ScopedDiagnosticHandler quiet(&ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(input, &ctx);
  if (!module)
    return 0;

  std::optional<std::vector<ArgSpec>> given;
  if (std::optional<std::string> args = fuzz::headerLine(input, "ARGS")) {
    given = fuzz::argSpecsOf(&ctx, fuzz::words(*args));
    if (!given)
      return 0;
  }
  std::string config = fuzz::headerLine(input, "CONFIG").value_or("");

  int lowered = 0;
  for (auto kernel : module->getOps<mlir::func::FuncOp>()) {
    if (!kernel->hasAttr(kKernelAttrName) || lowered++ == 2)
      continue;
    std::vector<ArgSpec> args = given ? *given : fuzz::defaultSpecs(kernel);
    try {
      CompileOptions options;
      options.arch = "sm_90a";
      CudaKernel cuda = lowerToCuda(input, kernel.getSymName().str(), args, config, options);
      if (cuda.source.empty())
        std::abort(); // lowering "succeeded" with nothing to compile
    } catch (const kite::Error &e) {
      // A user error, reported as one.
      if (fuzz::verbose())
        std::fprintf(stderr, "%s\n", e.what());
    }
  }
  return 0;
}
