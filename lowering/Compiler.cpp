//===- Compiler.cpp - captured kernel to launchable plan ------------------===//
//
// This file implements the compiler entry points: parse captured IR, run the
// lowering pipeline (the one `kite-opt --kite-lower` runs), emit CUDA,
// compile it with NVRTC and describe the launch as a KernelPlan.
//
//===----------------------------------------------------------------------===//

#include "lowering/Compiler.h"
#include "lowering/Config.h"
#include "lowering/ConfigSpace.h"
#include "lowering/Diagnostics.h"
#include "lowering/DynamicShapes.h"
#include "lowering/LaunchArg.h"
#include "lowering/Passes.h"
#include "lowering/Pipeline.h"

#include "autotune/Tuner.h"
#include "runtime/CompilerHook.h"
#include "runtime/Nvrtc.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

using namespace mlir;

namespace {

kite::DType toDType(const std::string &name) {
  kite::DType t;
  if (!kite::dtype_from_name(name, t))
    throw kite::Error("kite: internal error: unknown dtype '" + name + "'");
  return t;
}

std::string joinArgs(const std::vector<kite::ArgSpec> &args) {
  std::string s;
  for (const kite::ArgSpec &a : args)
    s += (s.empty() ? "" : " ") + a.str();
  return s;
}

/// Collects diagnostics as `file:line:col: error: message` lines.
struct DiagnosticCollector {
  std::string text;
  kite::UserDiagnostics handler;
  explicit DiagnosticCollector(MLIRContext &ctx) : handler(ctx, text) {}
};

void registerDialects(MLIRContext &ctx) {
  ctx.printOpOnDiagnostic(false); // the source line says where; no IR dumps
  DialectRegistry registry;
  registry.insert<kite::KiteDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect, scf::SCFDialect>();
  ctx.appendDialectRegistry(registry);
  ctx.loadAllAvailableDialects();
}

/// Parses a captured kernel's IR in a fresh context, runs the passes that
/// `addPasses` adds, and hands the kernel to `use`. Errors name `doing`
/// ("compile", "derive the config space of"), the kernel and the arguments,
/// with the diagnostics at the user's lines.
template <class F>
auto withKernel(std::string_view ir, std::string_view name, const std::vector<kite::ArgSpec> &args,
                const char *doing, llvm::function_ref<void(PassManager &)> addPasses, F use) {
  MLIRContext ctx(MLIRContext::Threading::DISABLED);
  registerDialects(ctx);
  DiagnosticCollector diags(ctx);
  auto fail = [&](const std::string &what) -> kite::Error {
    return kite::Error("kite: cannot " + std::string(doing) + " kernel '" + std::string(name) +
                       "' for (" + joinArgs(args) + "): " + what +
                       (diags.text.empty() ? "" : "\n") + diags.text);
  };
  // The parser reads up to a NUL: give it a copy that ends in one (a view
  // need not).
  std::string text(ir);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  if (!module)
    throw fail("the captured IR does not parse (was it written by another kite version?)");
  // A failure because the config does not fit is a kite::ConfigRejected.
  auto failLowering = [&](const std::string &what) {
    kite::Error error = fail(what);
    if (kite::configRejected(*module))
      throw kite::ConfigRejected(error.what());
    throw error;
  };
  PassManager pm(&ctx);
  addPasses(pm);
  if (failed(pm.run(*module)))
    failLowering("lowering failed");
  FailureOr<func::FuncOp> kernel = kite::findKernel(*module, name);
  if (failed(kernel))
    throw fail("no such kernel");
  return use(*kernel, failLowering);
}

/// `arch`, or if empty the first GPU's, or sm_90a without a GPU.
std::string targetArch(const std::string &arch) {
  if (!arch.empty())
    return arch;
  return kite::gpu_available() && kite::device_count() > 0 ? kite::device_properties(0).arch() : "sm_90a";
}

/// Scalars the kernel specializes on: bools always, others where the
/// kernel wraps them in specialize().
std::vector<bool> specializedScalars(func::FuncOp f) {
  std::vector<bool> result;
  for (BlockArgument arg : f.getArguments()) {
    bool specialized = arg.getType().isInteger(1);
    for (Operation *user : arg.getUsers())
      specialized |= isa<kite::SpecializeOp>(user);
    result.push_back(specialized);
  }
  return result;
}

/// The specs a dynamic-shapes plan is compiled for: each size of at least 2
/// of a contiguous tensor becomes its divisor class, where the kernel lets
/// it (dynamicDims); everything else stays as given.
/// With `whole` false, sizes a subscript spans whole stay static. With
/// `refine`, the classes are made what a plan needs, no finer:
///   - a size spanned whole is bucketed (ArgSpec::bounds) to be held whole:
///     a row of a length up to ArgSpec::kMaxBound is one tile as long as its
///     bucket;
///   - in a kernel with products, a size a top-level loop runs to is
///     bucketed too, since the configs that fit (tiles for the SMs) depend
///     on it;
///   - a bucketed size's class is only whether it is a multiple of a 16-byte
///     vector (ArgSpec::bounded_divisor), so that a sweep over a bucketed
///     size needs two plans a bucket, not five;
///   - a size whose class cannot change the code (DynamicDim::classFree,
///     with the sizes inside it a multiple of 16 bytes) is any size
///     (divisor -1, `?*`);
///   - a tensor with sizes taken at launch is addressed with 32-bit offsets
///     where its elements allow (ArgSpec::index32), as a static plan's is.
std::vector<kite::ArgSpec> shapeClassSpecs(func::FuncOp captured,
                                           const std::vector<kite::ArgSpec> &args, bool whole,
                                           bool &anyWhole, bool refine = false) {
  std::vector<int64_t> ranks;
  for (const kite::ArgSpec &a : args)
    ranks.push_back(a.is_tensor() ? int64_t(a.sizes.size()) : -1);
  std::vector<std::vector<kite::DynamicDim>> dynamic = kite::dynamicDims(captured, ranks);
  bool products = false;
  captured.walk([&](Operation *op) {
    products |= isa<kite::DotOp, kite::AddmmOp, kite::BmmOp, kite::BaddbmmOp, kite::MatmulOp>(op);
  });
  std::vector<kite::ArgSpec> specs = args;
  anyWhole = false;
  for (size_t i = 0; i < specs.size() && i < dynamic.size(); ++i) {
    kite::ArgSpec &a = specs[i];
    if (!a.is_tensor() || !a.divisors.empty() || !a.is_contiguous())
      continue;
    std::vector<int64_t> sizes = a.sizes;
    for (size_t d = 0; d < a.sizes.size() && d < dynamic[i].size(); ++d) {
      const kite::DynamicDim &dim = dynamic[i][d];
      if (!dim.dynamic || a.sizes[d] < 2 || (dim.whole && !whole))
        continue;
      anyWhole |= dim.whole;
      if (a.divisors.empty()) {
        a.strides.clear();
        a.divisors.assign(a.sizes.size(), 0);
      }
      a.divisors[d] = kite::ArgSpec::size_divisor(a.sizes[d]);
      a.sizes[d] = -1;
      if (refine && (dim.whole || (products && dim.topLoop))) {
        a.bounds.resize(a.sizes.size(), 0);
        a.bounds[d] = kite::ArgSpec::size_bound(sizes[d]);
        if (a.bounds[d] > 0)
          a.divisors[d] = kite::ArgSpec::bounded_divisor(sizes[d], a.dtype);
      }
    }
    if (!refine || a.divisors.empty())
      continue;
    int64_t numel = 1;
    for (int64_t s : sizes)
      numel *= s;
    a.index32 = kite::ArgSpec::fits_index32(numel);
    int64_t bytes = kite::element_size(a.dtype);
    for (size_t d = 0; d + 1 < a.sizes.size() && d < dynamic[i].size(); ++d) {
      const kite::DynamicDim &dim = dynamic[i][d];
      if (!a.is_dynamic(d) || !dim.classFree)
        continue;
      // The strides outside this dim stay multiples of 16 bytes whatever
      // its class where the static sizes inside it are.
      std::optional<int64_t> inside = 1;
      for (size_t e = d + 1; e < a.sizes.size() && inside; ++e)
        inside = a.is_dynamic(e) ? std::nullopt : std::optional(*inside * a.sizes[e]);
      bool strides = d == 0 || (inside && *inside * bytes % 16 == 0);
      bool outputs = !dim.insideOutput || (inside && *inside % 16 == 0);
      if (strides && outputs)
        a.divisors[d] = -1;
    }
  }
  return specs;
}

/// Whether the kernel, specialized for `specs` under its default config,
/// loops over every whole dim they take at launch: after
/// kite-reduction-loops no tile has a shape taken at launch.
bool wholeDimsLoop(const kite::KernelSource &kernel, const std::vector<kite::ArgSpec> &specs) {
  try {
    return withKernel(
        kernel.ir, kernel.name, specs, "specialize",
        [&](PassManager &pm) {
          pm.addPass(kite::createKiteSpecialize({std::string(kernel.name), joinArgs(specs)}));
          pm.addPass(kite::createKiteApplyConfig({"", "sm_90a"}));
          pm.addPass(kite::createKiteReductionLoops());
        },
        [&](func::FuncOp f, auto &) {
          WalkResult dynamicTile = f.walk([](Operation *op) {
            for (Type t : op->getResultTypes())
              if (auto tile = dyn_cast<kite::TileType>(t); tile && !tile.hasStaticShape())
                return WalkResult::interrupt();
            return WalkResult::advance();
          });
          return !dynamicTile.wasInterrupted();
        });
  } catch (const kite::Error &) {
    return false; // it does not specialize or loop with those sizes taken at launch
  }
}

} // namespace

std::vector<kite::ArgSpec> kite::planSpecs(const KernelSource &kernel,
                                           const std::vector<ArgSpec> &args,
                                           const Options &options) {
  // Which scalars does the kernel specialize on? Only those keep a value in
  // the plan's specs (others are run-time arguments). And with dynamic
  // shapes, which sizes can it take at launch?
  return withKernel(
      kernel.ir, kernel.name, args, "compile", [](PassManager &) {},
      [&](func::FuncOp f, auto &) {
        std::vector<ArgSpec> specs = args;
        // A kernel captured once per rank (tile(x.sizes())): the form for
        // this launch's rank; without one, compiling reports it.
        if (f->hasAttr(kRankFormsAttrName)) {
          int64_t p = rankFormParam(f);
          func::FuncOp form;
          if (p >= 0 && p < (int64_t)args.size() && args[p].is_tensor())
            form = rankFormOf(f, args[p].sizes.size());
          if (!form)
            return specs;
          f = form;
        }
        std::vector<bool> spec = specializedScalars(f);
        for (size_t i = 0; i < specs.size() && i < spec.size(); ++i)
          if (!specs[i].is_tensor() && !spec[i])
            specs[i].value.reset();
        if (!options.static_shapes) {
          bool anyWhole = false;
          std::vector<ArgSpec> classes = shapeClassSpecs(f, specs, true, anyWhole);
          // Rows spanned whole and taken at launch need a reduction that
          // could loop over chunks: keep them where that specializes and
          // loops, else those sizes stay static. (Rows up to
          // ArgSpec::kMaxBound long are then held whole, read once.)
          bool whole = !anyWhole || wholeDimsLoop(kernel, classes);
          specs = shapeClassSpecs(f, specs, whole, anyWhole, /*refine=*/true);
        }
        return specs;
      });
}

namespace {
kite::CudaKernel lower(std::string_view ir, std::string_view name,
                       const std::vector<kite::ArgSpec> &args, std::string_view config,
                       const kite::CompileOptions &options, bool speculative) {
  kite::LoweringOptions lowering;
  lowering.kernel = std::string(name);
  lowering.args = joinArgs(args);
  lowering.config = std::string(config);
  lowering.arch = targetArch(options.arch);
  lowering.speculative = speculative;
  return withKernel(
      ir, name, args, "compile",
      [&](PassManager &pm) { buildKiteLoweringPipeline(pm, lowering); },
      [&](func::FuncOp kernel, auto &fail) {
        kite::EmitOptions emit;
        emit.lineDirectives = options.lineDirectives;
        emit.trace = options.trace;
        FailureOr<kite::CudaKernel> cuda = emitCuda(kernel, emit);
        if (failed(cuda))
          fail("CUDA emission failed"); // throws
        return *cuda;
      });
}
} // namespace

kite::CudaKernel kite::lowerToCuda(std::string_view ir, std::string_view name,
                                   const std::vector<ArgSpec> &args,
                                   std::string_view config,
                                   const CompileOptions &options) {
  try {
    return lower(ir, name, args, config, options, /*speculative=*/true);
  } catch (const ConfigRejected &) {
    if (!config.empty())
      throw;
    return lower(ir, name, args, config, options, /*speculative=*/false);
  }
}

bool kite::speculativeDefaultFits(std::string_view ir, std::string_view name,
                                  const std::vector<ArgSpec> &args,
                                  const CompileOptions &options) {
  std::string target = targetArch(options.arch);
  bool same = withKernel(
      ir, name, args, "specialize",
      [&](PassManager &pm) {
        pm.addPass(createKiteSpecialize({std::string(name), joinArgs(args)}));
      },
      [&](func::FuncOp f, auto &) {
        return defaultConfig(f, target, true).toJson() == defaultConfig(f, target, false).toJson();
      });
  if (same)
    return true;
  try {
    lower(ir, name, args, "", options, /*speculative=*/true);
    return true;
  } catch (const ConfigRejected &) {
    return false;
  }
}

std::string kite::configSpaceOf(const KernelSource &kernel, const std::vector<ArgSpec> &args,
                                std::string_view arch) {
  std::string target = targetArch(std::string(arch));
  bool speculative = speculativeDefaultFits(kernel.ir, kernel.name, args, CompileOptions{target});
  return withKernel(
      kernel.ir, kernel.name, args, "derive the config space of",
      [&](PassManager &pm) {
        pm.addPass(createKiteSpecialize({std::string(kernel.name), joinArgs(args)}));
        // An access outside its tensor is the arguments' fault, whatever the
        // config: say so once, not for every candidate.
        pm.addPass(createKiteCheckBounds());
      },
      [&](func::FuncOp f, auto &) { return deriveConfigSpace(f, target, speculative).dump(); });
}

kite::KernelPlan kite::compileToPlan(const KernelSource &kernel,
                                     const std::vector<ArgSpec> &args,
                                     const Options &options,
                                     const CompileOptions &compile) {
  std::string arch = targetArch(compile.arch);

  std::vector<ArgSpec> specs = planSpecs(kernel, args, options);

  CudaKernel cuda = lowerToCuda(kernel.ir, kernel.name, specs, options.config, compile);
  std::optional<std::string> edited = runtime::cudaOverride(cuda.symbol);
  runtime::NvrtcOutput out =
      runtime::compileToCubin(edited ? *edited : cuda.source, cuda.symbol, arch);

  KernelPlan plan;
  plan.name = std::string(kernel.name);
  plan.kernelName = cuda.symbol;
  plan.arch = arch;
  plan.binaryKind = KernelPlan::Binary::cubin;
  plan.binary = std::move(out.binary);
  plan.grid = {(uint32_t)cuda.grid[0], (uint32_t)cuda.grid[1], (uint32_t)cuda.grid[2]};
  plan.persistent = cuda.persistent; // the launch sizes its grid to the device
  plan.clusterSize = (uint32_t)cuda.clusterSize;
  plan.block = {(uint32_t)cuda.numThreads, 1, 1};
  plan.dynamicSharedBytes = (uint32_t)cuda.sharedBytes;
  plan.args = specs;
  plan.dynamicShapes = !options.static_shapes;
  if (cuda.gridExpr)
    plan.gridExpr = {*cuda.gridExpr};
  plan.checks = cuda.checks;
  for (const CudaKernel::Output &o : cuda.outputs) {
    OutputSpec out{o.name, toDType(o.dtype), {}, o.zeroed, o.sizeExprs};
    for (int64_t size : o.sizes)
      out.sizes.push_back(ShapedType::isDynamic(size) ? -1 : size);
    plan.outputs.push_back(std::move(out));
  }
  for (const CudaKernel::Param &p : cuda.params) {
    ParamSpec ps;
    ps.index = p.index;
    switch (p.kind) {
    case CudaKernel::Param::Kind::ArgData: ps.kind = ParamSpec::Kind::argData; break;
    case CudaKernel::Param::Kind::OutputData: ps.kind = ParamSpec::Kind::outputData; break;
    case CudaKernel::Param::Kind::ArgScalar: ps.kind = ParamSpec::Kind::argScalar; break;
    case CudaKernel::Param::Kind::ArgSize:
      ps.kind = ParamSpec::Kind::argSize;
      ps.dim = p.dim;
      break;
    case CudaKernel::Param::Kind::Workspace:
      ps.kind = ParamSpec::Kind::workspace;
      ps.dim = p.zeroed ? 1 : 0;
      break;
    case CudaKernel::Param::Kind::ArgTensorMap: {
      ps.kind = ParamSpec::Kind::argTensorMap;
      TensorMapSpec m;
      m.rank = uint8_t(p.box.size());
      m.swizzle = uint8_t(p.swizzle);
      m.staged = p.staged;
      for (size_t d = 0; d < p.box.size(); ++d)
        m.box[d] = uint32_t(p.box[d]);
      for (auto [count, stride] : p.rowSplits)
        m.rowSplits.push_back({uint32_t(count), uint32_t(stride)});
      m.rowStep = uint32_t(p.rowStep);
      ps.bytes = m.encode();
      break;
    }
    }
    plan.params.push_back(ps);
  }
  for (const CudaKernel::Result &r : cuda.results)
    plan.results.push_back(ResultSpec{r.kind == CudaKernel::Result::Kind::Arg
                                          ? ResultSpec::Kind::arg
                                          : ResultSpec::Kind::output,
                                      r.index});
  plan.config = options.config;
  plan.key = std::string(kernel.name) + "|" + std::string(kernel.irHash) + "|" +
             joinArgs(specs) + "|" + options.config + "|" + arch + "|kite-0.1" +
             (plan.dynamicShapes ? "|dynamic" : "") + (compile.trace ? "|trace" : "");
  validate_plan(plan);
  return plan;
}

kite::cache::Entry kite::tuneForLaunch(const KernelSource &kernel,
                                       const std::vector<ArgSpec> &args, const Options &options,
                                       const cache::Target &target) {
  autotune::TuneRequest request;
  request.kernel = kernel;
  request.args = args;
  // A dynamic-shapes plan's space is its shape class's.
  request.space = configSpaceOf(kernel, options.static_shapes ? args
                                                              : planSpecs(kernel, args, options));
  request.compile = [&](const std::string &config) {
    Options o = options;
    o.config = config;
    o.tuning = Options::Tuning::never;
    return compileToPlan(kernel, args, o);
  };
  autotune::TuneOptions tune;
  tune.store = false; // the launch path stores the entry
  if (const char *e = std::getenv("KITE_AUTOTUNE_EFFORT"); e && *e) {
    std::optional<autotune::Effort> effort = autotune::parseEffort(e);
    if (!effort)
      throw Error(std::string("KITE_AUTOTUNE_EFFORT must be none, quick or full, not '") + e +
                  "'");
    tune.effort = *effort;
  }
  if (const char *b = std::getenv("KITE_AUTOTUNE_BUDGET"); b && *b)
    tune.budgetSeconds = std::atof(b);
  // A faulting candidate must not take the application's CUDA context with
  // it: benchmark in a `kite` worker process where one is named.
  const char *worker = std::getenv("KITE_AUTOTUNE_WORKER");
  tune.isolate = worker && *worker;
  if (tune.isolate)
    tune.workerExecutable = worker;
  if (const char *v = std::getenv("KITE_AUTOTUNE_VERBOSE"); v && *v && *v != '0')
    tune.log = [](const std::string &line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  autotune::TuneResult r = autotune::tune(request, tune);
  cache::Entry e;
  e.kernel = std::string(kernel.name);
  e.irHash = std::string(kernel.irHash);
  e.target = target;
  e.target.nvrtcVersion = cache::loaded_nvrtc_version();
  e.source = cache::Source::tuned;
  e.plan = std::move(r.plan);
  e.config = r.config;
  e.timeMs = r.ms;
  e.configsSearched = (uint32_t)r.stats.tried;
  e.tuningSeconds = r.seconds;
  return e;
}

void kite::installCompiler() {
  static std::once_flag once;
  std::call_once(once, [] {
    runtime::setCompiler([](const KernelSource &k, const std::vector<ArgSpec> &args,
                            const Options &o) { return compileToPlan(k, args, o); });
    runtime::setTuner(tuneForLaunch);
  });
}

namespace {
const bool kInstalled = (kite::installCompiler(), true);
} // namespace
