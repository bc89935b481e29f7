//===- Inspect.cpp - `kite inspect` ---------------------------------------===//
//
// This file implements `kite inspect FILE --kernel K --arg x=bf16[M,N] ...
// [--config JSON] --emit=STAGE`: it captures the kernel, then shows one
// stage of its compilation for those arguments and that config:
//
//   ir           the captured IR (what `kite compile --emit=ir` prints)
//   specialized  after kite-specialize: static types from the arguments
//   passes       the IR after every pass of the pipeline
//   lowered      after the whole kite-lower pipeline (the config applied)
//   cuda         the CUDA C++ the runtime hands to NVRTC
//   ptx          NVRTC's PTX for the target (--arch, default sm_90a)
//   sass         the cubin's SASS (needs nvdisasm or cuobjdump)
//   config-space the tunable config entries and their values (JSON)
//   config       the config a launch would use, and where it comes from:
//                pinned (--config), tuned (the cache directory's entry for
//                these arguments on --arch), or the default
//   resources    registers, spills, stack, shared memory, barriers (ptxas's
//                report through NVRTC), the theoretical occupancy, and the
//                machine code's counts of MMAs, TMA copies, setmaxnreg,
//                local memory and fences (with nvdisasm or cuobjdump)
//   roofline     bytes moved and FLOPs from the IR; with a GPU, the measured
//                time against the measured copy bandwidth and the peak math
//
// --html FILE writes all of them on one self-contained page (Html.cpp).
//
// It runs exactly the pipeline the runtime runs (lowering/Pipeline.cpp).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Html.h"
#include "InspectReport.h"

#include "autotune/Bench.h"
#include "autotune/Timeline.h"
#include "lowering/Compiler.h"
#include "lowering/Roofline.h"

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

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

/// FNV-1a (64 bits) of a device tensor's bytes in row-major order, as hex.
std::string checksumOf(const kite::Tensor &t) {
  kite::Tensor host = kite::cuda::to_host(t).contiguous();
  const auto *p = static_cast<const unsigned char *>(host.data_ptr());
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0, n = size_t(host.numel()) * kite::element_size(host.dtype()); i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return llvm::formatv("{0:x16}", h).str();
}

struct InspectOptions {
  std::string file;
  std::string kernel;
  std::vector<std::string> args;
  std::string config;
  std::string emit = "cuda";
  std::string arch = "sm_90a";
  std::vector<std::string> includeDirs;
  bool lineDirectives = false;
  bool trace = false;         // --trace: the kernel with its timeline events
  bool dynamicShapes = false; // --dynamic-shapes: as a static_shapes = false launch
  std::string html; // --html FILE: the whole report as one page
  // kite bench
  bool bench = false;
  int runs = 100;
  bool json = false;
  bool timeline = false; // --timeline: also run a traced plan once and summarize it
  bool checksum = false; // --checksum: a hash of each result's bytes
  std::vector<std::string> fills; // NAME=LO..HI for integer inputs
  std::map<std::string, std::pair<int64_t, int64_t>> intRanges; // parsed fills
};

/// Records the IR after every pass of a pipeline (for --emit=passes and
/// the HTML report).
class StageRecorder : public mlir::PassInstrumentation {
public:
  explicit StageRecorder(std::vector<kite::cli::InspectReport::Stage> &stages) : stages(stages) {}
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    if (!mlir::isa<mlir::ModuleOp>(op))
      return; // nested runs print their module when it ends
    std::string text;
    llvm::raw_string_ostream os(text);
    op->print(os);
    stages.push_back({pass->getArgument().empty() ? pass->getName().str()
                                                  : pass->getArgument().str(),
                      text});
  }

private:
  std::vector<kite::cli::InspectReport::Stage> &stages;
};

/// The first of `names` found in PATH or the CUDA toolkits' bin directories.
std::optional<std::string> findTool(std::initializer_list<const char *> names) {
  std::vector<std::string> cudaDirs = {"/usr/local/cuda/bin"};
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator("/usr/local", ec))
    if (e.path().filename().string().rfind("cuda", 0) == 0)
      cudaDirs.push_back((e.path() / "bin").string());
  std::vector<llvm::StringRef> dirs(cudaDirs.begin(), cudaDirs.end());
  for (const char *name : names) {
    if (auto found = llvm::sys::findProgramByName(name))
      return *found;
    if (auto found = llvm::sys::findProgramByName(name, dirs))
      return *found;
  }
  return std::nullopt;
}

/// SASS of `cubin` through nvdisasm or cuobjdump; nullopt with `why`.
std::optional<std::string> disassemble(const std::vector<unsigned char> &cubin, std::string &why) {
  std::optional<std::string> tool = findTool({"nvdisasm", "cuobjdump"});
  if (!tool) {
    why = "SASS needs nvdisasm or cuobjdump (the CUDA toolkit's binary utilities); neither is "
          "in PATH or /usr/local/cuda*/bin";
    return std::nullopt;
  }
  llvm::SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("kite-inspect", "cubin", path)) {
    why = "cannot create a temporary file for the cubin";
    return std::nullopt;
  }
  {
    std::ofstream f(path.c_str(), std::ios::binary);
    f.write(reinterpret_cast<const char *>(cubin.data()), (std::streamsize)cubin.size());
  }
  bool nvdisasm = llvm::StringRef(*tool).ends_with("nvdisasm");
  std::string command = "'" + *tool + "' " + (nvdisasm ? "-c -g '" : "-sass '") +
                        path.str().str() + "' 2>&1";
  std::string out;
  if (FILE *p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
      out.append(buf, n);
    int rc = ::pclose(p);
    llvm::sys::fs::remove(path);
    if (rc != 0) {
      why = *tool + " failed:\n" + out;
      return std::nullopt;
    }
    return out;
  }
  llvm::sys::fs::remove(path);
  why = "cannot run " + *tool;
  return std::nullopt;
}

/// The stages --emit may ask for; "html" wants them all, `kite bench` the
/// roofline.
bool wants(const InspectOptions &opts, llvm::StringRef stage) {
  return !opts.html.empty() || opts.emit == stage || (opts.bench && stage == "roofline");
}

/// Fills `report` with what `opts` asks for. Returns an exit code.
int collect(const InspectOptions &opts, const kite::cli::Context &context, mlir::MLIRContext &ctx,
            kite::cli::InspectReport &report) {
  auto error = [&](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), opts.bench ? "kite bench" : "kite inspect") << msg << "\n";
    return kite::cli::kUserError;
  };
  // The resources come from ptxas' report in NVRTC's log, which NVRTC
  // leaves out when its compute cache (~/.nv/ComputeCache, where a CUDA
  // driver is installed) already holds the cubin: this process compiles
  // past the cache, before its first NVRTC call.
  if (wants(opts, "resources"))
    ::setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/1);
  auto module = kite::cli::loadKernels(ctx, context, opts.file, opts.kernel, opts.includeDirs);
  if (mlir::failed(module))
    return kite::cli::kUserError;
  mlir::ModuleOp m = **module;
  report.file = opts.file;
  report.arch = opts.arch;
  if (auto text = llvm::MemoryBuffer::getFile(opts.file))
    report.source = (*text)->getBuffer().str();
  {
    std::string ir;
    llvm::raw_string_ostream os(ir);
    m.print(os);
    report.stages.push_back({"captured", ir});
  }
  if (opts.emit == "ir" && opts.html.empty())
    return kite::cli::kSuccess;

  for (const std::string &a : opts.args)
    report.args += (report.args.empty() ? "" : " ") + a;
  std::string why;
  std::optional<std::string> name = kite::cli::kernelToUse(m, opts.kernel, opts.file, why);
  if (!name)
    return error(why);
  report.kernel = *name;
  kite::Options launch;
  launch.static_shapes = !opts.dynamicShapes;
  // The specs the pipeline below lowers for (report.args), where they parse.
  std::optional<std::vector<kite::ArgSpec>> pipelineSpecs;
  if (opts.dynamicShapes) {
    // The stages of the plan a launch with dynamic shapes compiles: each
    // size the kernel can take at launch becomes its class (x=bf16[?16,4096]).
    std::optional<std::vector<kite::ArgSpec>> given = kite::cli::argSpecsOf(&ctx, opts.args, why);
    if (!given)
      return error(why);
    kite::frontend::KernelText t = kite::frontend::kernelText(m, *name);
    kite::KernelSource source{nullptr, *name, t.ir, t.hash, opts.file};
    try {
      report.args.clear();
      pipelineSpecs = kite::planSpecs(source, *given, launch);
      for (const kite::ArgSpec &a : *pipelineSpecs)
        report.args += (report.args.empty() ? "" : " ") + a.str();
    } catch (const std::exception &e) {
      return error(e.what());
    }
  }

  // The runtime's view of the kernel (argument specs, captured IR and its
  // hash), for the cache lookup and the measurement; taken before the
  // pipeline below lowers `m` in place.
  std::optional<std::vector<kite::ArgSpec>> specs;
  kite::frontend::KernelText text;
  if (wants(opts, "config") || wants(opts, "roofline")) {
    specs = kite::cli::argSpecsOf(&ctx, opts.args, why);
    if (!specs)
      return error(why);
    text = kite::frontend::kernelText(m, *name);
  }

  // Which config, from where.
  report.config = opts.config;
  report.configSource = opts.config.empty() ? "default" : "pinned (--config)";
  if (opts.config.empty() && specs) {
    kite::cache::Query q{*name, text.hash, *specs, kite::cache::Target{opts.arch}, "",
                         /*tunedOnly=*/true, opts.dynamicShapes};
    std::optional<kite::cache::Entry> best = kite::cache::lookup(q, {}, /*exactTarget=*/false);
    if (best) {
      report.config = best->config;
      report.configSource =
          llvm::formatv("tuned: cache entry {0} in {1} ({2:F4} ms, {3} configs searched in "
                        "{4:F1} s; built by kite {5})",
                        kite::cache::entry_id(*best), kite::cache::directory().string(),
                        best->timeMs.value_or(0), best->configsSearched, best->tuningSeconds,
                        best->kiteVersion)
              .str();
    } else {
      report.configSource =
          "default (no tuned entry for these arguments on " + opts.arch + " in " +
          (kite::cache::directory().empty() ? std::string("the cache (it is off)")
                                            : kite::cache::directory().string()) +
          "; kite autotune makes one)";
    }
  }

  // Without a config, a launch lowers under the speculative default where
  // emission accepts it, else under the plain one (lowerToCuda): so do the
  // config space and the pipeline below.
  std::optional<bool> speculative;
  auto speculativeDefault = [&]() -> bool {
    if (speculative)
      return *speculative;
    speculative = true;
    std::string ignored;
    if (!pipelineSpecs)
      pipelineSpecs = kite::cli::argSpecsOf(&ctx, opts.args, ignored);
    if (pipelineSpecs) {
      try {
        kite::frontend::KernelText t = kite::frontend::kernelText(m, *name);
        speculative = kite::speculativeDefaultFits(t.ir, *name, *pipelineSpecs, {opts.arch});
      } catch (const std::exception &) {
        // the pipeline below reports why the kernel does not lower
      }
    }
    return *speculative;
  };

  // The config space: on the specialized kernel (a clone: the pipeline
  // below runs on `m`).
  if (wants(opts, "config-space") || wants(opts, "specialized")) {
    mlir::OwningOpRef<mlir::ModuleOp> copy(m.clone());
    mlir::PassManager pm(&ctx);
    pm.addPass(kite::createKiteSpecialize({opts.kernel, report.args}));
    if (mlir::failed(pm.run(*copy)))
      return kite::cli::kUserError;
    std::string text;
    llvm::raw_string_ostream os(text);
    copy->print(os);
    report.stages.push_back({"kite-specialize", text});
    mlir::FailureOr<mlir::func::FuncOp> kernel = kite::findKernel(*copy, opts.kernel);
    if (mlir::failed(kernel))
      return kite::cli::kUserError;
    // Shapes that make an access leave its tensor have no config space.
    mlir::PassManager check(&ctx);
    check.addPass(kite::createKiteCheckBounds());
    if (mlir::failed(check.run(*copy)))
      return kite::cli::kUserError;
    nlohmann::json space = kite::deriveConfigSpace(*kernel, opts.arch, speculativeDefault());
    // One line per parameter and per start.
    std::string js = "{\"default\": " + space["default"].dump();
    for (const char *key : {"parameters", "starts"}) {
      if (!space.contains(key))
        continue;
      js += std::string(",\n \"") + key + "\": [";
      for (size_t i = 0; i < space[key].size(); ++i)
        js += (i ? ",\n  " : "\n  ") + space[key][i].dump();
      js += "\n]";
    }
    report.configSpace = js + "}\n";
    if (opts.html.empty())
      return kite::cli::kSuccess;
    report.stages.pop_back(); // the full pipeline below records it again
  }

  // A class plan takes its sizes at launch, so its IR counts them as 1: the
  // roofline of this launch comes from the kernel specialized on the given
  // sizes (a clone; the pipeline below runs on `m`) with the plan's config.
  mlir::OwningOpRef<mlir::ModuleOp> launchCopy;
  if (opts.dynamicShapes && (wants(opts, "roofline") || !opts.html.empty()))
    launchCopy = m.clone();

  // The whole pipeline, recording the IR after each pass.
  mlir::PassManager pm(&ctx);
  kite::LoweringOptions lowering;
  lowering.kernel = opts.kernel;
  lowering.args = report.args;
  lowering.config = report.config;
  lowering.arch = opts.arch;
  lowering.speculative = !report.config.empty() || speculativeDefault();
  kite::buildKiteLoweringPipeline(pm, lowering);
  ctx.disableMultithreading();
  pm.addInstrumentation(std::make_unique<StageRecorder>(report.stages));
  if (mlir::failed(pm.run(m)))
    return kite::cli::kUserError;
  mlir::FailureOr<mlir::func::FuncOp> kernel = kite::findKernel(m, opts.kernel);
  if (mlir::failed(kernel))
    return kite::cli::kUserError;
  if (auto resolved = (*kernel)->getAttrOfType<mlir::StringAttr>("kite.config"))
    report.config = resolved.getValue().str();
  if (opts.html.empty() && !opts.bench &&
      (opts.emit == "config" || opts.emit == "lowered" || opts.emit == "passes"))
    return kite::cli::kSuccess;

  kite::WorkEstimate work = kite::estimateWork(*kernel);
  if (launchCopy) {
    std::string given;
    for (const std::string &a : opts.args)
      given += (given.empty() ? "" : " ") + a;
    mlir::PassManager spm(&ctx);
    spm.addPass(kite::createKiteSpecialize({opts.kernel, given}));
    spm.addPass(kite::createKiteApplyConfig({report.config, opts.arch}));
    mlir::FailureOr<mlir::func::FuncOp> atLaunch = mlir::failure();
    if (mlir::succeeded(spm.run(*launchCopy)))
      atLaunch = kite::findKernel(*launchCopy, opts.kernel);
    if (mlir::succeeded(atLaunch))
      work = kite::estimateWork(*atLaunch);
    else
      work.caveat += "; the sizes given could not be counted with the plan's config";
  }
  kite::EmitOptions emit;
  emit.lineDirectives = opts.lineDirectives || !opts.html.empty();
  emit.trace = opts.trace;
  mlir::FailureOr<kite::CudaKernel> cuda = kite::emitCuda(*kernel, emit);
  if (mlir::failed(cuda))
    return kite::cli::kUserError;
  report.cuda = cuda->source;
  // A plan that takes sizes at launch computes its program count then, and
  // checks its sizes (the expressions read the arguments by these names).
  std::vector<std::string> names;
  for (unsigned i = 0; i < kernel->getNumArguments(); ++i) {
    auto n = kernel->getArgAttrOfType<mlir::StringAttr>(i, kite::kArgNameAttrName);
    names.push_back(n ? n.str() : "#" + std::to_string(i));
  }
  std::string programs =
      cuda->gridExpr ? cuda->gridExpr->str(names) : std::to_string(cuda->numPrograms);
  report.launch = llvm::formatv("{0} programs of {1} threads, {2} bytes of dynamic shared memory",
                                programs, cuda->numThreads, cuda->sharedBytes)
                      .str();
  if (cuda->persistent)
    report.launch += " (program ids of persistent programs, as many as the SMs hold at once)";
  if (cuda->clusterSize > 1)
    report.launch += llvm::formatv(", in clusters of {0}", cuda->clusterSize).str();
  for (const kite::LaunchCheck &c : cuda->checks)
    report.launch += "; checks at launch that " + c.lhs.str(names) + " <= " + c.rhs.str(names);

  // Roofline: bytes and FLOPs from the IR; the device's ceilings and the
  // measured time need a GPU.
  auto &roof = report.roofline;
  roof.bytes = work.bytes;
  roof.flops = work.flops;
  roof.note = work.caveat;
  if (wants(opts, "roofline")) {
    if (!kite::gpu_available()) {
      if (opts.bench)
        return error("timing needs a CUDA GPU: " + kite::gpu_unavailable_reason());
      roof.note += std::string(roof.note.empty() ? "" : "; ") +
                   "no GPU here (" + kite::gpu_unavailable_reason() +
                   "): the measured time and the device's ceilings need one";
    } else {
      try {
        kite::KernelSource source{nullptr, *name, text.ir, text.hash, opts.file};
        launch.config = report.config;
        kite::KernelPlan plan = kite::compileToPlan(source, *specs, launch);
        report.benchGrid = plan.grid;
        report.benchBlock = plan.block;
        report.benchPersistent = plan.persistent;
        kite::autotune::BenchSettings settings;
        settings.intRanges = opts.intRanges;
        kite::autotune::PlanBench bench(kite::autotune::benchArgs(plan, *specs), settings);
        bench.setReference(plan);
        roof.measuredMs = bench.time(plan, opts.bench ? opts.runs : 50);
        roof.peakGBs = kite::autotune::copyBandwidthGBs(0);
        if (opts.checksum)
          for (const kite::Tensor &t : bench.referenceResults())
            roof.checksums.push_back(checksumOf(t));
        if (opts.timeline) {
          // The same plan with timeline events, warmed up, then one launch's
          // records.
          kite::CompileOptions traced;
          traced.arch = opts.arch;
          traced.trace = true;
          kite::KernelPlan tp = kite::compileToPlan(source, *specs, launch, traced);
          bench.time(tp, 2);
          kite::autotune::clearTrace(tp);
          double tracedMs = bench.runOnce(tp);
          kite::autotune::Trace trace = kite::autotune::readTrace(tp);
          const auto &records = trace.records;
          roof.timeline = kite::autotune::summarizeTrace(
              records, kite::autotune::estimateClockMHz(records, tracedMs));
          roof.timeline += llvm::formatv("the traced launch took {0:F4} ms; microseconds at the "
                                         "clock that implies\n",
                                         tracedMs);
          if (trace.recorded > records.size())
            roof.timeline += llvm::formatv("{0} records past the {1} kept were dropped\n",
                                           trace.recorded - records.size(), records.size());
        }
      } catch (const std::exception &e) {
        if (opts.bench)
          return error(e.what());
        roof.note += std::string(roof.note.empty() ? "" : "; ") + "not measured: " + e.what();
      }
    }
    // Peak math throughput of sm_90 (H100/H200 SXM, dense): tensor cores
    // for matrix products (1979 TFLOP/s where they are all 8-bit, 989 for
    // 16-bit), CUDA cores (f32 FMA) otherwise.
    if (opts.arch.rfind("sm_90", 0) == 0)
      roof.peakTFlops = work.matmulFlops <= 0 ? 67
                        : work.matmul8Flops >= work.matmulFlops ? 1979
                                                                : 989;
    if (roof.peakGBs > 0 && roof.peakTFlops > 0 && roof.bytes > 0) {
      double ridge = roof.peakTFlops * 1e12 / (roof.peakGBs * 1e9);
      roof.bound = roof.flops / roof.bytes < ridge ? "memory" : "compute";
    }
  }

  if (opts.bench)
    return kite::cli::kSuccess;
  bool needPtx = wants(opts, "ptx"), needCubin = wants(opts, "resources") || wants(opts, "sass");
  if ((needPtx || needCubin) && !kite::runtime::nvrtcAvailable()) {
    std::string why = "NVRTC is not available: " + kite::runtime::nvrtcUnavailableReason();
    if (opts.html.empty())
      return error(why);
    report.ptxNote = report.resourcesNote = report.sassNote = why;
    return kite::cli::kSuccess;
  }
  try {
    // What NVRTC compiles: the generated source, or its hand-edited
    // replacement (KITE_CUDA_OVERRIDE), as a launch would.
    std::optional<std::string> edited = kite::runtime::cudaOverride(cuda->symbol);
    const std::string &source = edited ? *edited : cuda->source;
    if (needPtx) {
      kite::runtime::NvrtcOutput out =
          kite::runtime::compileToPtx(source, cuda->symbol, opts.arch);
      report.ptx.assign(out.binary.begin(), out.binary.end());
      while (!report.ptx.empty() && report.ptx.back() == '\0')
        report.ptx.pop_back();
    }
    if (needCubin) {
      kite::runtime::NvrtcOptions nvrtc;
      nvrtc.extra.push_back("--ptxas-options=-v");
      kite::runtime::NvrtcOutput out =
          kite::runtime::compileToCubin(source, cuda->symbol, opts.arch, nvrtc);
      std::optional<kite::runtime::KernelResources> r =
          kite::runtime::parsePtxasReport(out.log, cuda->symbol);
      if (!r) {
        report.resourcesNote = "NVRTC's report does not describe " + cuda->symbol + ":\n" + out.log;
      } else {
        kite::runtime::SmLimits limits = kite::runtime::smLimits(opts.arch);
        kite::runtime::Occupancy occ = kite::runtime::theoreticalOccupancy(
            *r, (int)cuda->numThreads, cuda->sharedBytes, limits);
        auto &rows = report.resources;
        rows.push_back({"kernel", cuda->symbol + " (" + opts.arch + ")"});
        if (cuda->persistent)
          rows.push_back({"launch", llvm::formatv("persistent programs of {0} threads, {1} per "
                                                  "SM, looping over {2} program ids",
                                                  cuda->numThreads, occ.blocksPerSM,
                                                  programs)});
        else
          rows.push_back({"launch", llvm::formatv("{0} programs of {1} threads",
                                                  programs, cuda->numThreads)});
        rows.push_back({"registers", llvm::formatv("{0} per thread", r->registers)});
        rows.push_back({"spills", llvm::formatv("{0} bytes stored, {1} bytes loaded; stack frame "
                                                "{2} bytes per thread",
                                                r->spillStores, r->spillLoads, r->stackBytes)});
        rows.push_back({"shared memory",
                        llvm::formatv("{0} bytes static + {1} bytes dynamic per program",
                                      r->staticShared, cuda->sharedBytes)});
        rows.push_back({"barriers", std::to_string(r->barriers)});
        rows.push_back(
            {"occupancy",
             llvm::formatv("{0} of {1} warps per SM ({2}%), {3} programs per SM, limited by {4} "
                           "(theoretical, from {5}'s per-SM limits)",
                           occ.warpsPerSM, occ.maxWarpsPerSM,
                           (int)std::lround(100 * occ.fraction()), occ.blocksPerSM, occ.limiter,
                           limits.known ? opts.arch : std::string("sm_90"))});
      }
      // The machine code: shown by --emit=sass, counted in the resources.
      std::optional<std::string> sass;
      if (wants(opts, "sass") || wants(opts, "resources"))
        sass = disassemble(out.binary, report.sassNote);
      if (sass && r)
        report.resources.push_back(
            {"machine code", kite::runtime::describe(kite::runtime::summarizeSass(*sass))});
      else if (r)
        report.resources.push_back({"machine code", "not read: " + report.sassNote});
      if (wants(opts, "sass")) {
        if (sass)
          report.sass = *sass;
        else if (opts.html.empty())
          return error(report.sassNote);
      }
    }
  } catch (const kite::Error &e) {
    if (opts.html.empty())
      return error(e.what());
    report.ptxNote = report.resourcesNote = e.what();
  }
  return kite::cli::kSuccess;
}

std::string humanCount(double v, const char *unit) {
  const char *prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  return llvm::formatv("{0:F2} {1}{2}", v, prefixes[i], unit).str();
}

int runInspect(const InspectOptions &opts, const kite::cli::Context &context) {
  mlir::MLIRContext ctx;
  // Lowering errors read like the frontend's: file:line:col: error: ...
  std::string diagnostics;
  kite::UserDiagnostics handler(ctx, diagnostics);
  struct Flush {
    std::string &text;
    ~Flush() { llvm::errs() << text; }
  } flush{diagnostics};
  kite::cli::InspectReport r;
  if (int rc = collect(opts, context, ctx, r))
    return rc;
  auto &os = llvm::outs();
  if (opts.bench) {
    const auto &f = r.roofline;
    double ms = f.measuredMs.value_or(0), s = ms * 1e-3;
    double gbs = s > 0 ? f.bytes / s / 1e9 : 0, tflops = s > 0 ? f.flops / s / 1e12 : 0;
    double best = std::max(f.peakGBs > 0 ? f.bytes / (f.peakGBs * 1e9) : 0.0,
                           f.peakTFlops > 0 ? f.flops / (f.peakTFlops * 1e12) : 0.0);
    double fraction = s > 0 ? best / s : 0;
    if (opts.json) {
      nlohmann::json j = {{"kernel", r.kernel}, {"args", r.args}, {"config", r.config},
                          {"config_source", r.configSource}, {"ms", ms}, {"bytes", f.bytes},
                          {"flops", f.flops}, {"gbps", gbs}, {"tflops", tflops},
                          {"peak_gbps", f.peakGBs}, {"peak_tflops", f.peakTFlops},
                          {"roofline_fraction", fraction}, {"bound", f.bound},
                          {"runs", opts.runs}, {"grid", r.benchGrid}, {"block", r.benchBlock},
                          {"persistent", r.benchPersistent}};
      if (!f.timeline.empty())
        j["timeline"] = f.timeline;
      if (opts.checksum)
        j["checksums"] = f.checksums;
      os << j.dump(2) << "\n";
      return kite::cli::kSuccess;
    }
    os << "kernel    " << r.kernel << " (" << r.args << ")\n";
    os << "config    " << r.config << "\n          " << r.configSource << "\n";
    uint32_t threads = r.benchBlock[0] * r.benchBlock[1] * r.benchBlock[2];
    if (r.benchPersistent)
      os << "launch    " << r.benchGrid[0] << " program ids, on as many persistent programs of "
         << threads << " threads as the SMs hold at once\n";
    else
      os << "launch    grid [" << r.benchGrid[0] << ", " << r.benchGrid[1] << ", "
         << r.benchGrid[2] << "] of " << threads << " threads\n";
    os << "time      " << llvm::formatv("{0:F4}", ms) << " ms (median of " << opts.runs
       << " runs, L2 flushed before each)\n";
    os << "memory    " << llvm::formatv("{0:F0}", gbs) << " GB/s of "
       << llvm::formatv("{0:F0}", f.peakGBs) << " (measured copy)\n";
    os << "math      " << llvm::formatv("{0:F2}", tflops) << " TFLOP/s of "
       << llvm::formatv("{0:F0}", f.peakTFlops) << "\n";
    os << "roofline  " << llvm::formatv("{0:F1}", 100 * fraction) << "% of the attainable ("
       << llvm::formatv("{0:F4}", best * 1e3) << " ms), " << f.bound << "-bound\n";
    for (size_t i = 0; i < f.checksums.size(); ++i)
      os << "checksum  result " << i << ": " << f.checksums[i] << "\n";
    if (!f.timeline.empty())
      os << "timeline  one launch of the plan with timeline events, in SM clock cycles:\n"
         << f.timeline;
    return kite::cli::kSuccess;
  }
  if (!opts.html.empty()) {
    std::ofstream f(opts.html);
    f << kite::cli::renderInspectHtml(r);
    if (!f) {
      llvm::WithColor::error(llvm::errs(), "kite inspect") << "cannot write " << opts.html << "\n";
      return kite::cli::kUserError;
    }
    os << "wrote " << opts.html << "\n";
    return kite::cli::kSuccess;
  }
  const std::string &e = opts.emit;
  auto stage = [&](llvm::StringRef name) -> const std::string & {
    for (const auto &s : r.stages)
      if (s.name == name)
        return s.text;
    return r.stages.back().text;
  };
  if (e == "ir")
    os << stage("captured") << "\n";
  else if (e == "specialized")
    os << stage("kite-specialize") << "\n";
  else if (e == "lowered")
    os << r.stages.back().text << "\n";
  else if (e == "passes")
    for (const auto &s : r.stages)
      os << "// ----- " << (s.name == "captured" ? "captured IR" : "after " + s.name)
         << " -----\n" << s.text << "\n";
  else if (e == "config")
    os << "config  " << r.config << "\nsource  " << r.configSource << "\n";
  else if (e == "config-space")
    os << r.configSpace;
  else if (e == "cuda")
    os << "// launch: " << r.launch << "\n" << r.cuda;
  else if (e == "ptx")
    os << r.ptx;
  else if (e == "sass")
    os << r.sass;
  else if (e == "resources") {
    if (r.resources.empty()) {
      llvm::WithColor::error(llvm::errs(), "kite inspect") << r.resourcesNote << "\n";
      return kite::cli::kUserError;
    }
    for (const auto &[k, v] : r.resources)
      os << llvm::formatv("{0,-15}", k) << v << "\n";
  }
  else if (e == "roofline") {
    const auto &f = r.roofline;
    os << "kernel         " << r.kernel << " (" << r.args << ")\n";
    os << "bytes          " << humanCount(f.bytes, "B")
       << " (every input read once, every output written once)\n";
    os << "flops          " << humanCount(f.flops, "FLOP") << "\n";
    os << "intensity      " << llvm::formatv("{0:F3}", f.bytes > 0 ? f.flops / f.bytes : 0.0)
       << " FLOP/byte\n";
    if (f.peakTFlops > 0)
      os << "peak math      " << llvm::formatv("{0:F0}", f.peakTFlops) << " TFLOP/s ("
         << r.arch << ")\n";
    if (f.peakGBs > 0)
      os << "peak memory    " << llvm::formatv("{0:F0}", f.peakGBs)
         << " GB/s (measured device-to-device copy)\n";
    if (f.measuredMs) {
      double s = *f.measuredMs * 1e-3;
      os << "measured       " << llvm::formatv("{0:F4}", *f.measuredMs) << " ms: "
         << llvm::formatv("{0:F0}", f.bytes / s / 1e9) << " GB/s, "
         << llvm::formatv("{0:F2}", f.flops / s / 1e12) << " TFLOP/s\n";
      if (f.peakGBs > 0 && f.peakTFlops > 0) {
        double best = std::max(f.bytes / (f.peakGBs * 1e9), f.flops / (f.peakTFlops * 1e12));
        os << "roofline       " << llvm::formatv("{0:F1}", 100 * best / s)
           << "% of the attainable (" << llvm::formatv("{0:F4}", best * 1e3) << " ms)\n";
      }
    }
    if (!f.bound.empty())
      os << "bound          " << f.bound << "\n";
    if (!f.note.empty())
      os << "note           " << f.note << "\n";
  }
  return kite::cli::kSuccess;
}

} // namespace

void kite::cli::addBenchCommand(CLI::App &app, Context &context) {
  auto opts = std::make_shared<InspectOptions>();
  opts->bench = true;
  CLI::App *cmd = app.add_subcommand(
      "bench", "Time a kernel on the GPU for given arguments: ms, GB/s, TFLOP/s, roofline");
  addKernelOptions(cmd, opts->file, opts->kernel, opts->args, opts->includeDirs);
  cmd->add_option("--config", opts->config,
                  "The config as JSON (default: the cache's tuned entry, else the default)");
  cmd->add_option("--runs", opts->runs, "Timed runs (the median is reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--fill", opts->fills,
                  "Integer inputs uniform in [LO, HI), as NAME=LO..HI (default: zeros)");
  cmd->add_flag("--json", opts->json, "Print the figures as JSON");
  cmd->add_flag("--timeline", opts->timeline,
                "Also run the plan once with timeline events (program starts and ends, the "
                "loops in a program) and show where a program's cycles go");
  cmd->add_flag("--checksum", opts->checksum,
                "Also print a hash of each result's bytes (the inputs are the same at every "
                "run), to check that a hand-edited kernel (KITE_CUDA_OVERRIDE) computes what "
                "the generated one does");
  cmd->add_option("--arch", opts->arch, "The GPU target")->capture_default_str();
  cmd->add_flag("--dynamic-shapes", opts->dynamicShapes,
                "Time the plan a launch with static_shapes = false runs (sizes taken at "
                "launch)");
  cmd->callback([opts, &context] {
    std::string why;
    if (!parseFills(opts->fills, opts->intRanges, why)) {
      llvm::WithColor::error(llvm::errs(), "kite bench") << why << "\n";
      context.exitCode = kUserError;
      return;
    }
    context.exitCode = runInspect(*opts, context);
  });
}

void kite::cli::addInspectCommand(CLI::App &app, Context &context) {
  auto opts = std::make_shared<InspectOptions>();
  CLI::App *cmd = app.add_subcommand(
      "inspect", "Show a stage of a kernel's compilation for given arguments");
  kite::cli::addKernelOptions(cmd, opts->file, opts->kernel, opts->args, opts->includeDirs);
  cmd->add_option("--config", opts->config,
                  "The config as JSON (default: the kernel's default config)");
  cmd->add_option("--emit", opts->emit, "What to show")
      ->check(CLI::IsMember({"ir", "specialized", "passes", "lowered", "cuda", "ptx", "sass",
                             "config-space", "config", "resources", "roofline"}))
      ->capture_default_str();
  cmd->add_option("--arch", opts->arch, "The GPU target for --emit=ptx and resources")
      ->capture_default_str();
  cmd->add_option("--html", opts->html,
                  "Write every stage, the resources, the config and the roofline as one "
                  "self-contained HTML page to this file");
  cmd->add_flag("--trace", opts->trace,
                "Emit the kernel with the timeline events that kite bench --timeline records");
  cmd->add_flag("--line-directives", opts->lineDirectives,
                "#line directives to the kernel's source in the CUDA");
  cmd->add_flag("--dynamic-shapes", opts->dynamicShapes,
                "Show the plan a launch with static_shapes = false compiles: each size the "
                "kernel can take at launch becomes its class (x=bf16[?16,4096])");
  cmd->callback([opts, &context] { context.exitCode = runInspect(*opts, context); });
}
