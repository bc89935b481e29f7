//===- main.cpp - the kite command line -----------------------------------===//
//
// This file implements `kite`'s entry point: it builds the CLI11 app, lets
// each subcommand register itself (Commands.h), parses, and maps parse
// errors to exit status 2.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "autotune/Worker.h"

#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  // `kite autotune` benchmarks in a copy of this program (autotune/Worker.h).
  if (std::optional<int> worker = kite::autotune::maybeRunWorker(argc, argv))
    return *worker;
  llvm::InitLLVM init(argc, argv);
  kite::cli::Context context;
  context.argv0 = argv[0];

  CLI::App app{"kite: a loop-level GPU kernel language embedded in C++"};
  app.name("kite");
  app.require_subcommand(1);
  kite::cli::addCompileCommand(app, context);
  kite::cli::addInspectCommand(app, context);
  kite::cli::addBenchCommand(app, context);
  kite::cli::addAutotuneCommand(app, context);
  kite::cli::addCacheCommand(app, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help prints and succeeds; anything else is a usage error.
    return app.exit(e) == 0 ? kite::cli::kSuccess : kite::cli::kUsageError;
  }
  return context.exitCode;
}
