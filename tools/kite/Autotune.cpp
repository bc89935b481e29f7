//===- Autotune.cpp - `kite autotune` -------------------------------------===//
//
// This file implements `kite autotune FILE --kernel K --arg x=bf16[M,N] ...
// [--effort quick|full|none] [--budget SECONDS] [--config PINNED]`: it
// captures the kernel, derives its config space for these arguments, tunes
// it on GPU 0 (autotune/Tuner.h), stores the winner with its cubin in the
// cache, and prints the winner, its time, its bandwidth as a fraction of
// the measured copy bandwidth, and how many configs it tried in how long.
// Several launches' arguments (the parameters' --arg repeated, one set per
// shape) tune one after another; with --dynamic-shapes, once per shape
// class, since a class's winner answers every size in it, and a size may be
// a range (`x=bf16[1..8192,4096]`), which tunes every class it holds.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "autotune/Tuner.h"
#include "frontend/Capture.h"
#include "lowering/Compiler.h"
#include "lowering/LaunchArg.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <kite/cache.hpp>
#include <kite/runtime.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
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

/// One launch's --arg texts with their size ranges (`x=bf16[1..8192,4096]`,
/// both ends included) replaced: one launch per shape class a range holds,
/// its size 1 and the largest size of each divisor class (1, 2, 4, 8, 16),
/// as dynamic-shapes plans are specialized. Ranges with the same bounds are
/// one size (q's and k's sequence length); the launches are the product of
/// the distinct ranges. Without ranges, the launch itself.
std::optional<std::vector<std::vector<std::string>>>
expandRanges(const std::vector<std::string> &args, std::string &why) {
  // The distinct ranges, and where each arg's sizes have one.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  struct Item {
    size_t arg, begin, end; // the item's text in args[arg]
    size_t range;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    size_t open = a.find('['), close = a.find(']');
    if (open == std::string::npos || close == std::string::npos || close < open)
      continue;
    for (size_t b = open + 1; b < close;) {
      size_t e = std::min(a.find(',', b), close);
      std::string item = a.substr(b, e - b);
      if (size_t dots = item.find(".."); dots != std::string::npos) {
        int64_t lo = 0, hi = 0;
        std::string l = item.substr(0, dots), h = item.substr(dots + 2);
        auto number = [](const std::string &t, int64_t &v) {
          if (t.empty() || t.size() > 12 || !std::all_of(t.begin(), t.end(), ::isdigit))
            return false;
          v = std::stoll(t);
          return true;
        };
        if (!number(l, lo) || !number(h, hi) || lo < 1 || lo > hi) {
          why = "--arg " + a + ": '" + item +
                "' is not a size range (LO..HI, integers, 1 <= LO <= HI, both included)";
          return std::nullopt;
        }
        auto it = std::find(ranges.begin(), ranges.end(), std::pair{lo, hi});
        items.push_back({i, b, e, size_t(it - ranges.begin())});
        if (it == ranges.end())
          ranges.push_back({lo, hi});
      }
      b = e + 1;
    }
  }
  if (ranges.empty())
    return std::vector<std::vector<std::string>>{args};
  // Each range's sizes: 1, then per bucket a held row's length may have
  // (ArgSpec::size_bound; the longest first), the largest of each divisor
  // class in it. Launches whose plans share a class are tuned once (the
  // first, so the largest size of a class a kernel does not bucket).
  std::vector<std::vector<int64_t>> sizes;
  for (auto [lo, hi] : ranges) {
    std::vector<int64_t> picks;
    if (lo == 1)
      picks.push_back(1);
    for (int64_t top = hi; top >= std::max<int64_t>(lo, 2);) {
      int64_t bound = kite::ArgSpec::size_bound(top);
      int64_t bottom = bound < 0 ? kite::ArgSpec::kMaxBound + 1
                       : bound == kite::ArgSpec::kMinBound ? 2
                                                           : bound / 2 + 1;
      bottom = std::max<int64_t>({bottom, lo, 2});
      size_t first = picks.size();
      for (int64_t d : {16, 8, 4, 2, 1})
        for (int64_t s = top; s >= bottom && s > top - 32; --s)
          if (kite::ArgSpec::size_divisor(s) == d) {
            picks.push_back(s);
            break;
          }
      std::sort(picks.begin() + first, picks.end(), std::greater<>());
      top = bottom - 1;
    }
    sizes.push_back(std::move(picks));
  }
  std::vector<std::vector<std::string>> launches;
  std::vector<size_t> pick(ranges.size(), 0);
  while (true) {
    std::vector<std::string> launch = args;
    // Replace from the back so that earlier offsets stay valid.
    for (auto it = items.rbegin(); it != items.rend(); ++it)
      launch[it->arg].replace(it->begin, it->end - it->begin,
                              std::to_string(sizes[it->range][pick[it->range]]));
    launches.push_back(std::move(launch));
    size_t r = 0;
    while (r < pick.size() && ++pick[r] == sizes[r].size())
      pick[r++] = 0;
    if (r == pick.size())
      break;
  }
  return launches;
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
  // The launches: one --arg per kernel parameter, repeated once per shape.
  auto func = (*module)->lookupSymbol<mlir::func::FuncOp>(name);
  size_t params = func ? func.getFunctionType().getNumInputs() : opts.args.size();
  if (params == 0 || opts.args.empty() || opts.args.size() % params != 0)
    return fail(fmt::format("{} --arg given for kernel '{}' of {} parameter{}: give one per "
                            "parameter, in order, and to tune several shapes repeat the set",
                            opts.args.size(), name, params, params == 1 ? "" : "s"));
  std::vector<std::vector<std::string>> launches;
  for (size_t first = 0; first < opts.args.size(); first += params) {
    std::vector<std::string> one(opts.args.begin() + first, opts.args.begin() + first + params);
    auto expanded = expandRanges(one, why);
    if (!expanded)
      return fail(why);
    if (expanded->size() > 1 && !opts.dynamicShapes)
      return fail("a range of sizes (" + fmt::format("{}", fmt::join(one, " ")) +
                  ") tunes one plan per shape class: add --dynamic-shapes (a static plan "
                  "serves one set of sizes)");
    launches.insert(launches.end(), expanded->begin(), expanded->end());
  }
  std::vector<std::vector<kite::ArgSpec>> shapes;
  for (const std::vector<std::string> &one : launches) {
    std::optional<std::vector<kite::ArgSpec>> parsed = kite::cli::argSpecsOf(&ctx, one, why);
    if (!parsed)
      return fail(launches.size() == 1 ? why
                                       : fmt::format("shape {}: {}", shapes.size() + 1, why));
    shapes.push_back(std::move(*parsed));
  }
  auto specText = [](const std::vector<kite::ArgSpec> &specs) {
    std::string t;
    for (const kite::ArgSpec &s : specs)
      t += (t.empty() ? "" : " ") + s.str();
    return t;
  };

  kite::autotune::TuneOptions tune;
  if (!kite::cli::parseFills(opts.fills, tune.bench.intRanges, why))
    return fail(why);

  kite::KernelSource source{nullptr, name, text.ir, text.hash, opts.file, ""};
  kite::Options launch;
  launch.static_shapes = !opts.dynamicShapes;
  json results = json::array();
  try {
    // With dynamic shapes, a shape whose class an earlier one has is
    // served by that one's winner: tune each class once.
    std::vector<std::string> classes;
    std::vector<std::vector<kite::ArgSpec>> classSpecs; // the plan's specs, per class
    std::vector<size_t> toTune;
    for (size_t i = 0; i < shapes.size(); ++i) {
      std::vector<kite::ArgSpec> planned =
          opts.dynamicShapes ? kite::planSpecs(source, shapes[i], launch) : shapes[i];
      std::string cls = specText(planned);
      auto seen = std::find(classes.begin(), classes.end(), cls);
      if (seen != classes.end()) {
        if (shapes.size() > 1)
          llvm::outs() << fmt::format("kite autotune: shape {} ({}) is in the class of shape {} "
                                      "({}): tuned once\n",
                                      i + 1, specText(shapes[i]),
                                      toTune[seen - classes.begin()] + 1, cls);
        continue;
      }
      classes.push_back(cls);
      classSpecs.push_back(std::move(planned));
      toTune.push_back(i);
    }
    if (shapes.size() > 1) {
      llvm::outs() << fmt::format("kite autotune: {} shapes, {} to tune\n", shapes.size(),
                                  toTune.size());
      for (size_t t = 0; t < toTune.size(); ++t)
        llvm::outs() << fmt::format("  shape {}: {}{}\n", toTune[t] + 1, specText(shapes[toTune[t]]),
                                    opts.dynamicShapes ? " (class " + classes[t] + ")" : "");
    }
    llvm::outs().flush();
    if (!kite::gpu_available())
      return fail("no CUDA GPU: " + kite::gpu_unavailable_reason() +
                  " (tuning times kernels on a GPU; kite inspect works without one)");
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
    for (size_t t = 0; t < toTune.size(); ++t) {
      const std::vector<kite::ArgSpec> &specs = shapes[toTune[t]];
      kite::autotune::TuneRequest request;
      request.kernel = source;
      request.args = specs;
      // A dynamic-shapes plan is tuned on these sizes, and its entry answers
      // every size of their shape class.
      request.space = kite::configSpaceOf(source, classSpecs[t]);
      request.pinned = opts.config;
      request.compile = [&](const std::string &config) {
        kite::Options o = launch;
        o.config = config;
        return kite::compileToPlan(source, specs, o);
      };
      kite::autotune::TuneResult r = kite::autotune::tune(request, tune);

      kite::DeviceProperties props = kite::device_properties(0);
      double copy = kite::autotune::copyBandwidthGBs(0);
      double gbs = r.ms > 0 ? r.bytes / (r.ms * 1e-3) / 1e9 : 0;
      std::string argText = specText(specs);
      llvm::outs() << fmt::format("kite autotune: {} ({}) on {} ({})\n", name, argText,
                                  props.name, props.arch());
      llvm::outs() << fmt::format("  best config  {}\n", r.config);
      if (r.defaultMs > 0)
        llvm::outs() << fmt::format(
            "  time         {:.4f} ms (default config {:.4f} ms: {:.2f}x)\n", r.ms, r.defaultMs,
            r.defaultMs / r.ms);
      else
        llvm::outs() << fmt::format("  time         {:.4f} ms\n", r.ms);
      llvm::outs() << fmt::format("  bandwidth    {:.0f} GB/s moving {:.1f} MB: {:.1f}% of the "
                                  "measured copy bandwidth ({:.0f} GB/s)\n",
                                  gbs, r.bytes / 1e6, 100 * gbs / copy, copy);
      llvm::outs() << fmt::format("  searched     {} configs ({} rejected, {} failed, {} wrong) "
                                  "in {:.1f} s, effort {}, {} worker start(s)\n",
                                  r.stats.tried, r.stats.rejected, r.stats.failed, r.stats.wrong,
                                  r.seconds, opts.effort, r.workerStarts);
      if (tune.store)
        llvm::outs() << fmt::format("  cached in    {}\n", kite::cache::directory().string());
      llvm::outs().flush();
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
      if (opts.dynamicShapes)
        j["class"] = classes[t];
      json timed = json::array();
      for (const auto &t : r.timed)
        timed.push_back({{"config", json::parse(t.config)},
                         {"ms", t.ms},
                         {"final_ms", t.finalMs > 0 ? json(t.finalMs) : json(nullptr)}});
      j["timed"] = timed;
      results.push_back(std::move(j));
    }
  } catch (const std::exception &e) {
    return fail(e.what());
  }
  if (!opts.jsonPath.empty()) {
    // One shape: its result; several: {"results": [one per tuned shape]}.
    json j = results.size() == 1 && shapes.size() == 1 ? results[0] : json{{"results", results}};
    std::ofstream out(opts.jsonPath);
    out << j.dump(2) << "\n";
    if (!out)
      return fail("cannot write " + opts.jsonPath);
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
                "every size of these sizes' shape class (several shapes of one class are "
                "tuned once)");
  cmd->add_option("--json", opts->jsonPath, "Also write the result as JSON to this file");
  cmd->add_option("--threads", opts->threads, "Compile threads (default: one per CPU)");
  cmd->add_option("--inject-fault-at", opts->injectFaultAt,
                  "Testing: the N-th candidate launches with a bad pointer and faults")
      ->group(""); // hidden
  cmd->callback([opts, &context] { context.exitCode = runAutotune(*opts, context); });
}
