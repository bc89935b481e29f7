//===- args_fuzzer.cpp - fuzz `--arg` specs ---------------------------------===//
//
// This file implements the `args` fuzz target: the input is a list of launch
// argument specs (`x=bf16[64,1000] eps=f64 n=i64:7`, one per blank-separated
// word), as `kite inspect/bench/autotune --arg` take them. Each is parsed
// with kite::parseLaunchArgs and kite::parseLaunchArg; a spec that parses
// must print (LaunchArg::str) to text that parses back to the same text.
// Then each fixed kernel (FixedKernels.h) is specialized for them and
// lowered to CUDA, as the CLI does. Wrong specs must be errors, never a
// crash, a hang or a sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "FixedKernels.h"

#include "lowering/Compiler.h"

using namespace kite;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4 * 1024)
    return -1;
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  ctx.loadDialect<KiteDialect, mlir::func::FuncDialect>();

  std::string error;
  (void)parseLaunchArgs(&ctx, text, error);
  std::vector<std::string> specs = fuzz::words(text);
  for (const std::string &spec : specs) {
    mlir::FailureOr<LaunchArg> arg = parseLaunchArg(&ctx, spec, error);
    if (mlir::failed(arg))
      continue;
    std::string printed = arg->str();
    mlir::FailureOr<LaunchArg> again = parseLaunchArg(&ctx, printed, error);
    if (mlir::failed(again) || again->str() != printed) {
      std::fprintf(stderr, "launch arg does not round-trip: %s -> %s (%s)\n", spec.c_str(),
                   printed.c_str(), error.c_str());
      std::abort();
    }
  }

  std::optional<std::vector<ArgSpec>> args = fuzz::argSpecsOf(&ctx, specs);
  if (!args)
    return 0;
  for (const fuzz::FixedKernel &kernel : fuzz::fixedKernels()) {
    try {
      CompileOptions options;
      options.arch = "sm_90a";
      lowerToCuda(kernel.ir, kernel.name, *args, "", options);
    } catch (const kite::Error &e) {
      if (fuzz::verbose())
        std::fprintf(stderr, "%s\n", e.what());
    }
  }
  return 0;
}
