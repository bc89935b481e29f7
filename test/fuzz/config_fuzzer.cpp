//===- config_fuzzer.cpp - fuzz config JSON parsing and validation --------===//
//
// This file implements the `config` fuzz target: the input is a config, as
// `--config` and Options::config take it. It is parsed with
// kite::parseConfig; a config that parses must print (Config::toJson) to
// JSON that parses back to the same text. Then each fixed kernel
// (FixedKernels.h) is lowered to CUDA with it, which validates it against
// the kernel (kite::validateConfig in kite-apply-config) and applies it. A
// bad config must be an error (kite::Error or parseConfig's failure), never
// a crash, a hang or a sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "FixedKernels.h"

#include "lowering/Compiler.h"
#include "lowering/Config.h"

using namespace kite;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 16 * 1024)
    return -1;
  std::string json(reinterpret_cast<const char *>(data), size);
  std::string error;
  mlir::FailureOr<Config> config = parseConfig(json, error);
  if (mlir::failed(config))
    return 0;
  std::string printed = config->toJson();
  mlir::FailureOr<Config> again = parseConfig(printed, error);
  if (mlir::failed(again) || again->toJson() != printed) {
    std::fprintf(stderr, "config does not round-trip: %s -> %s (%s)\n", json.c_str(),
                 printed.c_str(), error.c_str());
    std::abort();
  }
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  ctx.loadDialect<KiteDialect, mlir::func::FuncDialect>();
  for (const fuzz::FixedKernel &kernel : fuzz::fixedKernels()) {
    std::optional<std::vector<ArgSpec>> args = fuzz::argSpecsOf(&ctx, fuzz::words(kernel.args));
    if (!args)
      std::abort(); // the fixed kernel's own ARGS line is wrong
    try {
      CompileOptions options;
      options.arch = "sm_90a";
      lowerToCuda(kernel.ir, kernel.name, *args, json, options);
    } catch (const kite::Error &e) {
      if (fuzz::verbose())
        std::fprintf(stderr, "%s\n", e.what());
    }
  }
  return 0;
}
