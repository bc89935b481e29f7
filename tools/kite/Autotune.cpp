//===- Autotune.cpp - `kite autotune` -------------------------------------===//
//
// This file implements `kite autotune FILE --kernel K --arg x=bf16[M,N] ...
// [--effort quick|full|none] [--budget SECONDS] [--config PINNED]`: it
// captures the kernel, derives its config space for these arguments, tunes
// it on GPU 0 (autotune/Tuner.h), stores the winner with its cubin in the
// cache, and prints the winner, its time, its bandwidth as a fraction of
// the measured copy bandwidth, and how many configs it tried in how long.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "autotune/Tuner.h"
#include "frontend/Capture.h"
#include "lowering/Compiler.h"
#include "lowering/LaunchArg.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <kite/cache.hpp>
#include <kite/runtime.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

using json = nlohmann::json;

namespace {

struct AutotuneOptions {
  std::string file;
  std::string kernel;
  std::vector<std::string> args;
  std::string config; // pinned keys
  std::string effort = "quick";
  double budget = 0;
  std::vector<std::string> fills;
  bool inProcess = false;
  bool noStore = false;
  bool dynamicShapes = false; // tune the plan of a static_shapes = false launch
  std::string jsonPath;
  int threads = 0;
  int injectFaultAt = -1;
  std::vector<std::string> includeDirs;
};

int fail(const std::string &msg) {
  llvm::WithColor::error(llvm::errs(), "kite autotune") << msg << "\n";
  return kite::cli::kUserError;
}

int runAutotune(const AutotuneOptions &opts, const kite::cli::Context &context) {
  std::optional<kite::autotune::Effort> effort = kite::autotune::parseEffort(opts.effort);
  if (!effort)
    return fail("--effort must be none, quick or full, not '" + opts.effort + "'");

  // Capture.
  mlir::MLIRContext ctx;
  auto module = kite::cli::loadKernels(ctx, context, opts.file, opts.kernel, opts.includeDirs);
  if (mlir::failed(module))
    return kite::cli::kUserError;
  std::string why;
  std::optional<std::string> picked = kite::cli::kernelToUse(**module, opts.kernel, opts.file, why);
  if (!picked)
    return fail(why);
  const std::string &name = *picked;
  kite::frontend::KernelText text = kite::frontend::kernelText(**module, name);
  std::optional<std::vector<kite::ArgSpec>> parsedSpecs =
      kite::cli::argSpecsOf(&ctx, opts.args, why);
  if (!parsedSpecs)
    return fail(why);
  const std::vector<kite::ArgSpec> &specs = *parsedSpecs;

  kite::autotune::TuneOptions tune;
  if (!kite::cli::parseFills(opts.fills, tune.bench.intRanges, why))
    return fail(why);

  kite::KernelSource source{nullptr, name, text.ir, text.hash, opts.file, ""};
  try {
    if (!kite::gpu_available())
      return fail("no CUDA GPU: " + kite::gpu_unavailable_reason() +
                  " (tuning times kernels on a GPU; kite inspect works without one)");
    kite::autotune::TuneRequest request;
    request.kernel = source;
    request.args = specs;
    kite::Options launch;
    launch.static_shapes = !opts.dynamicShapes;
    // A dynamic-shapes plan is tuned on these sizes, and its entry answers
    // every size of their shape class.
    request.space = kite::configSpaceOf(
        source, opts.dynamicShapes ? kite::planSpecs(source, specs, launch) : specs);
    request.pinned = opts.config;
    request.compile = [&](const std::string &config) {
      kite::Options o = launch;
      o.config = config;
      return kite::compileToPlan(source, specs, o);
    };
    tune.effort = *effort;
    tune.budgetSeconds = opts.budget;
    tune.threads = opts.threads;
    tune.isolate = !opts.inProcess;
    tune.store = !opts.noStore;
    if (opts.injectFaultAt >= 0)
      tune.injectFaultAt = opts.injectFaultAt;
    tune.log = [](const std::string &line) {
      llvm::errs() << line << "\n";
      llvm::errs().flush();
    };
    kite::autotune::TuneResult r = kite::autotune::tune(request, tune);

    kite::DeviceProperties props = kite::device_properties(0);
    double copy = kite::autotune::copyBandwidthGBs(0);
    double gbs = r.ms > 0 ? r.bytes / (r.ms * 1e-3) / 1e9 : 0;
    std::string argText;
    for (const kite::ArgSpec &s : specs)
      argText += (argText.empty() ? "" : " ") + s.str();
    llvm::outs() << fmt::format("kite autotune: {} ({}) on {} ({})\n", name, argText, props.name,
                                props.arch());
    llvm::outs() << fmt::format("  best config  {}\n", r.config);
    if (r.defaultMs > 0)
      llvm::outs() << fmt::format("  time         {:.4f} ms (default config {:.4f} ms: {:.2f}x)\n",
                                  r.ms, r.defaultMs, r.defaultMs / r.ms);
    else
      llvm::outs() << fmt::format("  time         {:.4f} ms\n", r.ms);
    llvm::outs() << fmt::format("  bandwidth    {:.0f} GB/s moving {:.1f} MB: {:.1f}% of the "
                                "measured copy bandwidth ({:.0f} GB/s)\n",
                                gbs, r.bytes / 1e6, 100 * gbs / copy, copy);
    llvm::outs() << fmt::format("  searched     {} configs ({} rejected, {} failed, {} wrong) in "
                                "{:.1f} s, effort {}, {} worker start(s)\n",
                                r.stats.tried, r.stats.rejected, r.stats.failed, r.stats.wrong,
                                r.seconds, opts.effort, r.workerStarts);
    if (tune.store)
      llvm::outs() << fmt::format("  cached in    {}\n", kite::cache::directory().string());
    llvm::outs().flush();
    if (!opts.jsonPath.empty()) {
      json j = {{"kernel", name},
                {"args", argText},
                {"device", props.name},
                {"arch", props.arch()},
                {"effort", opts.effort},
                {"config", json::parse(r.config)},
                {"ms", r.ms},
                {"default_ms", r.defaultMs},
                {"bytes", r.bytes},
                {"gbs", gbs},
                {"copy_gbs", copy},
                {"fraction_of_copy", gbs / copy},
                {"tried", r.stats.tried},
                {"rejected", r.stats.rejected},
                {"failed", r.stats.failed},
                {"wrong", r.stats.wrong},
                {"seconds", r.seconds},
                {"worker_starts", r.workerStarts},
                {"failures", r.failures}};
      json timed = json::array();
      for (const auto &t : r.timed)
        timed.push_back({{"config", json::parse(t.config)},
                         {"ms", t.ms},
                         {"final_ms", t.finalMs > 0 ? json(t.finalMs) : json(nullptr)}});
      j["timed"] = timed;
      std::ofstream out(opts.jsonPath);
      out << j.dump(2) << "\n";
      if (!out)
        return fail("cannot write " + opts.jsonPath);
    }
  } catch (const std::exception &e) {
    return fail(e.what());
  }
  return kite::cli::kSuccess;
}

} // namespace

void kite::cli::addAutotuneCommand(CLI::App &app, Context &context) {
  auto opts = std::make_shared<AutotuneOptions>();
  CLI::App *cmd = app.add_subcommand(
      "autotune", "Tune a kernel's config for given arguments on the GPU and cache the winner");
  addKernelOptions(cmd, opts->file, opts->kernel, opts->args, opts->includeDirs);
  cmd->add_option("--effort", opts->effort,
                  "none (time the default config), quick (seconds) or full (a few minutes)")
      ->capture_default_str();
  cmd->add_option("--budget", opts->budget,
                  "Wall-clock budget in seconds (default: quick 20, full 160)");
  cmd->add_option("--config", opts->config,
                  "Pin config keys (JSON, e.g. {\"num_warps\":8}); the rest is tuned");
  cmd->add_option("--fill", opts->fills,
                  "Integer inputs NAME=LO..HI are uniform in [LO, HI) (default all zeros), "
                  "e.g. target=0..32000 for class indices")
      ->take_all();
  cmd->add_flag("--in-process", opts->inProcess,
                "Benchmark in this process (a faulting config then ends the tuning)");
  cmd->add_flag("--no-store", opts->noStore, "Do not store the winner in the cache");
  cmd->add_flag("--dynamic-shapes", opts->dynamicShapes,
                "Tune the plan of a launch with static_shapes = false: the winner answers "
                "every size of these sizes' shape class");
  cmd->add_option("--json", opts->jsonPath, "Also write the result as JSON to this file");
  cmd->add_option("--threads", opts->threads, "Compile threads (default: one per CPU)");
  cmd->add_option("--inject-fault-at", opts->injectFaultAt,
                  "Testing: the N-th candidate launches with a bad pointer and faults")
      ->group(""); // hidden
  cmd->callback([opts, &context] { context.exitCode = runAutotune(*opts, context); });
}
