//===- Common.cpp - what the kite CLI's subcommands share -----------------===//
//
// This file implements the helpers Commands.h declares for several
// subcommands: capture options, picking the kernel, `--arg` and `--fill`
// parsing.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "lowering/LaunchArg.h"

#include "ir/KiteDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/WithColor.h"

kite::frontend::CaptureOptions
kite::cli::captureOptions(const Context &context, const std::string &kernel,
                          const std::vector<std::string> &includeDirs) {
  // Any function of this executable locates it.
  void *self = reinterpret_cast<void *>(&kite::cli::captureOptions);
  kite::frontend::CaptureOptions capture;
  capture.kernel = kernel;
  capture.kiteIncludeDir = kite::frontend::defaultIncludeDir(context.argv0, self);
  capture.includeDirs = includeDirs;
  capture.resourceDir = kite::frontend::defaultResourceDir(context.argv0, self);
  return capture;
}

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
kite::cli::loadKernels(mlir::MLIRContext &ctx, const Context &context, const std::string &file,
                       const std::string &kernel, const std::vector<std::string> &includeDirs) {
  if (!llvm::StringRef(file).ends_with(".mlir"))
    return kite::frontend::captureFile(ctx, file, captureOptions(context, kernel, includeDirs));
  mlir::DialectRegistry registry;
  registry.insert<kite::KiteDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::scf::SCFDialect>();
  ctx.appendDialectRegistry(registry);
  ctx.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceFile<mlir::ModuleOp>(file, &ctx);
  if (!module) {
    llvm::WithColor::error(llvm::errs(), "kite")
        << file << " is not kite IR (kite compile --emit=ir writes it)\n";
    return mlir::failure();
  }
  if (!kernel.empty()) {
    auto fn = module->lookupSymbol<mlir::func::FuncOp>(kernel);
    if (!fn || !fn->hasAttr("kite.kernel")) {
      llvm::WithColor::error(llvm::errs(), "kite")
          << file << " has no kernel '" << kernel << "'\n";
      return mlir::failure();
    }
  }
  return module;
}

std::optional<std::string> kite::cli::kernelToUse(mlir::ModuleOp module,
                                                  const std::string &requested,
                                                  const std::string &file, std::string &error) {
  if (!requested.empty())
    return requested;
  std::vector<std::string> names;
  for (auto fn : module.getOps<mlir::func::FuncOp>())
    if (fn->hasAttr("kite.kernel"))
      names.push_back(fn.getSymName().str());
  if (names.size() == 1)
    return names[0];
  error = file + " has " + std::to_string(names.size()) + " kernels; name one with --kernel";
  return std::nullopt;
}

std::optional<std::vector<kite::ArgSpec>>
kite::cli::argSpecsOf(mlir::MLIRContext *ctx, const std::vector<std::string> &args,
                      std::string &error) {
  std::vector<kite::ArgSpec> specs;
  for (const std::string &text : args) {
    std::string why;
    mlir::FailureOr<kite::LaunchArg> a = kite::parseLaunchArg(ctx, text, why);
    if (mlir::failed(a)) {
      error = "--arg " + text + ": " + why;
      return std::nullopt;
    }
    kite::DType dtype;
    if (!kite::dtype_from_name(kite::dtypeName(a->dtype), dtype)) {
      error = "argument '" + a->name + "' has an unsupported dtype";
      return std::nullopt;
    }
    if (!a->isTensor) {
      specs.push_back(kite::ArgSpec::scalar(a->name, dtype, a->value));
      continue;
    }
    std::vector<int64_t> strides;
    if (!a->isContiguous())
      strides.assign(a->strides.begin(), a->strides.end());
    specs.push_back(kite::ArgSpec::tensor(
        a->name, dtype, std::vector<int64_t>(a->sizes.begin(), a->sizes.end()), strides,
        a->alignment));
  }
  return specs;
}

bool kite::cli::parseFills(const std::vector<std::string> &fills,
                           std::map<std::string, std::pair<int64_t, int64_t>> &ranges,
                           std::string &error) {
  for (const std::string &f : fills) {
    size_t eq = f.find('='), dots = f.find("..");
    try {
      if (eq == std::string::npos || dots == std::string::npos || dots < eq)
        throw std::invalid_argument(f);
      int64_t lo = std::stoll(f.substr(eq + 1, dots - eq - 1));
      int64_t hi = std::stoll(f.substr(dots + 2));
      if (hi <= lo)
        throw std::invalid_argument(f);
      ranges[f.substr(0, eq)] = {lo, hi};
    } catch (const std::exception &) {
      error = "--fill " + f + ": expected NAME=LO..HI (integers, LO < HI, HI exclusive)";
      return false;
    }
  }
  return true;
}

void kite::cli::addKernelOptions(CLI::App *cmd, std::string &file, std::string &kernel,
                                 std::vector<std::string> &args,
                                 std::vector<std::string> &includeDirs) {
  cmd->add_option("file", file, "The kernel source file (.kite.cpp)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--kernel", kernel, "The kernel (default: the file's only kernel)");
  cmd->add_option("--arg", args,
                  "A launch argument, as NAME=DTYPE[SIZES] (tensor) or NAME=DTYPE[:VALUE] "
                  "(scalar), e.g. x=bf16[8192,8192] eps=f64; one per kernel parameter, in order")
      ->take_all();
  cmd->add_option("-I,--include", includeDirs, "Add a header search directory");
}
