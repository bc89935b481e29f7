//===- Commands.h - the kite CLI's subcommands ------------------*- C++ -*-===//
//
// This file declares how subcommands plug into the `kite` command line: each
// one adds itself to the CLI11 app and, when run, stores its exit status.
//
// Exit statuses mean the same everywhere: 0 success, 1 a user error (the
// kernel file is wrong, a cache entry does not exist), 2 a usage error (the
// command line is wrong).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_TOOLS_KITE_COMMANDS_H
#define KITE_TOOLS_KITE_COMMANDS_H

#include "frontend/Capture.h"

#include "mlir/IR/BuiltinOps.h"

#include <kite/runtime.hpp>

#include <CLI/CLI.hpp>

#include <map>
#include <optional>
#include <string>

namespace kite::cli {

enum ExitCode : int { kSuccess = 0, kUserError = 1, kUsageError = 2 };

/// What every subcommand gets: where to store its exit status, and argv[0]
/// (to find the installation's include directory).
struct Context {
  int exitCode = kSuccess;
  const char *argv0 = "kite";
};

/// `kite compile FILE [--kernel NAME] --emit=ir [-o OUT]`.
void addCompileCommand(CLI::App &app, Context &context);

/// `kite inspect FILE --kernel K --arg x=bf16[M,N] ... --emit=STAGE`.
void addInspectCommand(CLI::App &app, Context &context);

/// `kite bench FILE --kernel K --arg ... [--config JSON] [--runs N] [--json]`
/// (Inspect.cpp: the same collection as `kite inspect --emit=roofline`).
void addBenchCommand(CLI::App &app, Context &context);

/// `kite autotune FILE --kernel K --arg ... [--effort quick|full] [--budget S]`.
void addAutotuneCommand(CLI::App &app, Context &context);

// What several subcommands share (Common.cpp).

/// The capture options subcommands start from: kite's include directory and
/// Clang's resource directory beside this executable (or as built), the
/// user's `-I` directories, and only `kernel` when one is named.
kite::frontend::CaptureOptions captureOptions(const Context &context, const std::string &kernel,
                                              const std::vector<std::string> &includeDirs);

/// The kernels of `file`: captured from C++ by the Clang frontend or, for a
/// `.mlir` file (what `kite compile --emit=ir` writes), parsed as it is, so
/// that a machine without a C++ toolchain (a GPU host) can inspect, bench
/// and tune. `kernel`, when named, must be in it. Failure after reporting.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
loadKernels(mlir::MLIRContext &ctx, const Context &context, const std::string &file,
            const std::string &kernel, const std::vector<std::string> &includeDirs);

/// The kernel a subcommand works on: `requested`, else the module's only
/// kernel; nullopt (with `error`) when `file` has none or several.
std::optional<std::string> kernelToUse(mlir::ModuleOp module, const std::string &requested,
                                       const std::string &file, std::string &error);

/// `--arg` texts as the runtime's argument specs; nullopt (with `error`
/// naming the argument) for one that does not parse or whose dtype the
/// runtime does not have.
std::optional<std::vector<kite::ArgSpec>> argSpecsOf(mlir::MLIRContext *ctx,
                                                     const std::vector<std::string> &args,
                                                     std::string &error);

/// The options of every subcommand that works on one kernel for given
/// arguments: FILE, --kernel, --arg (one per kernel parameter) and -I.
void addKernelOptions(CLI::App *cmd, std::string &file, std::string &kernel,
                      std::vector<std::string> &args, std::vector<std::string> &includeDirs);

/// `--fill NAME=LO..HI` texts (integer inputs uniform in [LO, HI)) into
/// `ranges`; false (with `error` naming the text) for a malformed one.
bool parseFills(const std::vector<std::string> &fills,
                std::map<std::string, std::pair<int64_t, int64_t>> &ranges, std::string &error);

/// `kite cache ls|show|rm|export [--dir DIR] ...`.
void addCacheCommand(CLI::App &app, Context &context);

} // namespace kite::cli

#endif // KITE_TOOLS_KITE_COMMANDS_H
