//===- Inspect.cpp - `kite inspect` ---------------------------------------===//
//
// This file implements `kite inspect FILE --kernel K --arg x=bf16[M,N] ...
// [--config JSON] --emit=STAGE`: it captures the kernel, then shows one
// stage of its compilation for those arguments and that config:
//
//   ir           the captured IR (what `kite compile --emit=ir` prints)
//   specialized  after kite-specialize: static types from the arguments
//   lowered      after the whole kite-lower pipeline (the config applied)
//   cuda         the CUDA C++ the runtime hands to NVRTC
//   ptx          NVRTC's PTX for the target (--arch, default sm_90a)
//   config-space the tunable config entries and their values (JSON)
//   config       the config a launch would use, and where it comes from:
//                pinned (--config), tuned (the cache directory's entry for
//                these arguments on --arch), or the default
//   resources    registers, spills, stack, shared memory, barriers (ptxas's
//                report through NVRTC) and the theoretical occupancy
//
// It runs exactly the pipeline the runtime runs (lowering/Pipeline.cpp).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "frontend/Capture.h"
#include "lowering/ConfigSpace.h"
#include "lowering/Diagnostics.h"
#include "lowering/EmitCuda.h"
#include "lowering/Passes.h"
#include "lowering/Pipeline.h"

#include "runtime/Nvrtc.h"
#include "runtime/Resources.h"

#include <kite/cache.hpp>
#include "llvm/Support/FormatVariadic.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <kite/kite.hpp>

#include <cmath>

namespace {

struct InspectOptions {
  std::string file;
  std::string kernel;
  std::vector<std::string> args;
  std::string config;
  std::string emit = "cuda";
  std::string arch = "sm_90a";
  std::vector<std::string> includeDirs;
  bool lineDirectives = false;
};

int runInspect(const InspectOptions &opts, const kite::cli::Context &context) {
  auto error = [](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "kite inspect") << msg << "\n";
    return kite::cli::kUserError;
  };
  mlir::MLIRContext ctx;
  auto module = kite::frontend::captureFile(
      ctx, opts.file, kite::cli::captureOptions(context, opts.kernel, opts.includeDirs));
  if (mlir::failed(module))
    return kite::cli::kUserError;
  mlir::ModuleOp m = **module;
  // Lowering errors read like the frontend's: file:line:col: error: ...
  std::string diagnostics;
  kite::UserDiagnostics handler(ctx, diagnostics);
  struct Flush {
    std::string &text;
    ~Flush() { llvm::errs() << text; }
  } flush{diagnostics};
  if (opts.emit == "ir") {
    m.print(llvm::outs());
    llvm::outs() << "\n";
    return kite::cli::kSuccess;
  }

  std::string argText;
  for (const std::string &a : opts.args)
    argText += (argText.empty() ? "" : " ") + a;

  // --emit=config: which config, from where.
  std::string config = opts.config, source = opts.config.empty() ? "default" : "pinned (--config)";
  if (opts.emit == "config" && opts.config.empty()) {
    std::string why;
    std::optional<std::vector<kite::ArgSpec>> specs = kite::cli::argSpecsOf(&ctx, opts.args, why);
    if (!specs)
      return error(why);
    std::optional<std::string> name = kite::cli::kernelToUse(m, opts.kernel, opts.file, why);
    if (!name)
      return error(why);
    kite::frontend::KernelText text = kite::frontend::kernelText(m, *name);
    kite::cache::Query q{*name, text.hash, *specs, kite::cache::Target{opts.arch}, "",
                         /*tunedOnly=*/true};
    std::optional<kite::cache::Entry> best = kite::cache::lookup(q, {}, /*exactTarget=*/false);
    if (best) {
      config = best->config;
      source = llvm::formatv("tuned: cache entry {0} in {1} ({2:F4} ms, {3} configs searched in "
                             "{4:F1} s; built by kite {5})",
                             kite::cache::entry_id(*best), kite::cache::directory().string(),
                             best->timeMs.value_or(0), best->configsSearched, best->tuningSeconds,
                             best->kiteVersion)
                   .str();
    } else {
      source = "default (no tuned entry for these arguments on " + opts.arch + " in " +
               (kite::cache::directory().empty() ? std::string("the cache (it is off)")
                                                 : kite::cache::directory().string()) +
               "; kite autotune makes one)";
    }
  }

  mlir::PassManager pm(&ctx);
  if (opts.emit == "specialized" || opts.emit == "config-space") {
    pm.addPass(kite::createKiteSpecialize({opts.kernel, argText}));
  } else {
    kite::LoweringOptions lowering;
    lowering.kernel = opts.kernel;
    lowering.args = argText;
    lowering.config = config;
    kite::buildKiteLoweringPipeline(pm, lowering);
  }
  if (mlir::failed(pm.run(m)))
    return kite::cli::kUserError;
  if (opts.emit == "config") {
    mlir::FailureOr<mlir::func::FuncOp> kernel = kite::findKernel(m, opts.kernel);
    if (mlir::failed(kernel))
      return kite::cli::kUserError;
    auto resolved = (*kernel)->getAttrOfType<mlir::StringAttr>("kite.config");
    llvm::outs() << "config  " << (resolved ? resolved.getValue() : llvm::StringRef(config))
                 << "\nsource  " << source << "\n";
    return kite::cli::kSuccess;
  }
  if (opts.emit == "specialized" || opts.emit == "lowered") {
    m.print(llvm::outs());
    llvm::outs() << "\n";
    return kite::cli::kSuccess;
  }
  if (opts.emit == "config-space") {
    mlir::FailureOr<mlir::func::FuncOp> kernel = kite::findKernel(m, opts.kernel);
    if (mlir::failed(kernel))
      return kite::cli::kUserError;
    // JSON, one parameter a line.
    nlohmann::json space = kite::deriveConfigSpace(*kernel);
    llvm::outs() << "{\"default\": " << space["default"].dump() << ",\n \"parameters\": [";
    const nlohmann::json &params = space["parameters"];
    for (size_t i = 0; i < params.size(); ++i)
      llvm::outs() << (i ? ",\n  " : "\n  ") << params[i].dump();
    llvm::outs() << "\n]}\n";
    return kite::cli::kSuccess;
  }

  mlir::FailureOr<mlir::func::FuncOp> kernel = kite::findKernel(m, opts.kernel);
  if (mlir::failed(kernel))
    return kite::cli::kUserError;
  kite::EmitOptions emit;
  emit.lineDirectives = opts.lineDirectives;
  mlir::FailureOr<kite::CudaKernel> cuda = kite::emitCuda(*kernel, emit);
  if (mlir::failed(cuda))
    return kite::cli::kUserError;
  if (opts.emit == "cuda") {
    llvm::outs() << "// launch: " << cuda->numPrograms << " programs of "
                 << cuda->numThreads << " threads, " << cuda->sharedBytes
                 << " bytes of dynamic shared memory\n"
                 << cuda->source;
    return kite::cli::kSuccess;
  }
  if (opts.emit == "resources") {
    if (!kite::runtime::nvrtcAvailable())
      return error("NVRTC is not available: " + kite::runtime::nvrtcUnavailableReason());
    try {
      kite::runtime::NvrtcOptions nvrtc;
      nvrtc.extra.push_back("--ptxas-options=-v");
      kite::runtime::NvrtcOutput out =
          kite::runtime::compileToCubin(cuda->source, cuda->symbol, opts.arch, nvrtc);
      std::optional<kite::runtime::KernelResources> r =
          kite::runtime::parsePtxasReport(out.log, cuda->symbol);
      if (!r)
        return error("NVRTC's report does not describe " + cuda->symbol + ":\n" + out.log);
      kite::runtime::SmLimits limits = kite::runtime::smLimits(opts.arch);
      kite::runtime::Occupancy occ = kite::runtime::theoreticalOccupancy(
          *r, (int)cuda->numThreads, cuda->sharedBytes, limits);
      auto &os = llvm::outs();
      os << "kernel         " << cuda->symbol << " (" << opts.arch << ")\n";
      os << "launch         " << cuda->numPrograms << " programs of " << cuda->numThreads
         << " threads\n";
      os << "registers      " << r->registers << " per thread\n";
      os << "spills         " << r->spillStores << " bytes stored, " << r->spillLoads
         << " bytes loaded; stack frame " << r->stackBytes << " bytes per thread\n";
      os << "shared memory  " << r->staticShared << " bytes static + " << cuda->sharedBytes
         << " bytes dynamic per program\n";
      os << "barriers       " << r->barriers << "\n";
      os << "occupancy      " << occ.warpsPerSM << " of " << occ.maxWarpsPerSM
         << " warps per SM (" << (int)std::lround(100 * occ.fraction()) << "%), "
         << occ.blocksPerSM << " programs per SM, limited by " << occ.limiter
         << " (theoretical, from " << (limits.known ? opts.arch : "sm_90")
         << "'s per-SM limits)\n";
    } catch (const kite::Error &e) {
      return error(e.what());
    }
    return kite::cli::kSuccess;
  }
  // ptx
  if (!kite::runtime::nvrtcAvailable())
    return error("NVRTC is not available: " + kite::runtime::nvrtcUnavailableReason());
  try {
    kite::runtime::NvrtcOutput out =
        kite::runtime::compileToPtx(cuda->source, cuda->symbol, opts.arch);
    std::string ptx(out.binary.begin(), out.binary.end());
    while (!ptx.empty() && ptx.back() == '\0')
      ptx.pop_back();
    llvm::outs() << ptx;
  } catch (const kite::Error &e) {
    return error(e.what());
  }
  return kite::cli::kSuccess;
}

} // namespace

void kite::cli::addInspectCommand(CLI::App &app, Context &context) {
  auto opts = std::make_shared<InspectOptions>();
  CLI::App *cmd = app.add_subcommand(
      "inspect", "Show a stage of a kernel's compilation for given arguments");
  cmd->add_option("file", opts->file, "The kernel source file (.kite.cpp)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--kernel", opts->kernel,
                  "The kernel (default: the file's only kernel)");
  cmd->add_option("--arg", opts->args,
                  "A launch argument, as NAME=DTYPE[SIZES] (tensor) or "
                  "NAME=DTYPE[:VALUE] (scalar), e.g. x=bf16[8192,8192] eps=f64; "
                  "one per kernel parameter, in order")
      ->take_all();
  cmd->add_option("--config", opts->config,
                  "The config as JSON (default: the kernel's default config)");
  cmd->add_option("--emit", opts->emit, "What to show")
      ->check(CLI::IsMember({"ir", "specialized", "lowered", "cuda", "ptx", "config-space", "config", "resources"}))
      ->capture_default_str();
  cmd->add_option("--arch", opts->arch, "The GPU target for --emit=ptx and resources")
      ->capture_default_str();
  cmd->add_flag("--line-directives", opts->lineDirectives,
                "#line directives to the kernel's source in the CUDA");
  cmd->add_option("-I,--include", opts->includeDirs, "Add a header search directory");
  cmd->callback([opts, &context] { context.exitCode = runInspect(*opts, context); });
}
