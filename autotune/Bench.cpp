//===- Bench.cpp - timing and checking candidate plans --------------------===//
//
// This file implements PlanBench (see Bench.h). Inputs are filled and
// outputs compared by two small kernels compiled with NVRTC on first use.
//
//===----------------------------------------------------------------------===//

#include "autotune/Bench.h"

#include "runtime/Driver.h"
#include "runtime/Launch.h"
#include "runtime/Nvrtc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

using namespace kite;
using namespace kite::autotune;
namespace rt = kite::runtime;

namespace {

// DType codes as kite::DType numbers them: f16 bf16 f32 f64 i8 i32 i64 bool
// e4m3 e5m2.
const char *kHelperSource = R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
typedef long long i64;
typedef unsigned long long u64;

__device__ u64 mix(u64 x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
__device__ double unit(u64 h) { return ((h >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

__device__ double load(const void *p, i64 i, int dtype) {
  switch (dtype) {
  case 0: return (double)__half2float(((const __half *)p)[i]);
  case 1: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
  case 2: return (double)((const float *)p)[i];
  case 3: return ((const double *)p)[i];
  case 4: return (double)((const signed char *)p)[i];
  case 5: return (double)((const int *)p)[i];
  case 6: return (double)((const i64 *)p)[i];
  case 8:
  case 9:
    return (double)__half2float(__half(__nv_cvt_fp8_to_halfraw(
        ((const unsigned char *)p)[i], dtype == 8 ? __NV_E4M3 : __NV_E5M2)));
  default: return (double)((const unsigned char *)p)[i];
  }
}

extern "C" __global__ void kite_fill(void *p, i64 n, int dtype, u64 seed, i64 lo, i64 hi) {
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
    u64 h = mix(seed ^ mix((u64)i));
    if (dtype <= 3 || dtype == 8 || dtype == 9) {
      double v = sqrt(-2.0 * log(unit(h))) * cospi(2.0 * unit(mix(h)));
      switch (dtype) {
      case 0: ((__half *)p)[i] = __float2half((float)v); break;
      case 1: ((__nv_bfloat16 *)p)[i] = __float2bfloat16((float)v); break;
      case 2: ((float *)p)[i] = (float)v; break;
      case 8:
      case 9:
        ((unsigned char *)p)[i] =
            __nv_cvt_float_to_fp8((float)v, __NV_SATFINITE, dtype == 8 ? __NV_E4M3 : __NV_E5M2);
        break;
      default: ((double *)p)[i] = v; break;
      }
    } else {
      i64 v = lo + (i64)(h % (u64)(hi - lo));
      switch (dtype) {
      case 4: ((signed char *)p)[i] = (signed char)v; break;
      case 5: ((int *)p)[i] = (int)v; break;
      case 6: ((i64 *)p)[i] = v; break;
      default: ((unsigned char *)p)[i] = (unsigned char)(v != 0); break;
      }
    }
  }
}

// out[0]: elements beyond tolerance; out[1]: the largest error's bits;
// out[2]: the largest |b|'s bits (non-negative doubles order as integers).
extern "C" __global__ void kite_compare(const void *a, const void *b, i64 n, int dtype,
                                        double atol, double rtol, u64 *out) {
  u64 bad = 0, worst = 0, big = 0;
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
    double x = load(a, i, dtype), y = load(b, i, dtype);
    const double inf = __longlong_as_double(0x7ff0000000000000ll);
    double err;
    bool wrong;
    if (isnan(x) || isnan(y)) {
      wrong = isnan(x) != isnan(y);
      err = wrong ? inf : 0.0;
    } else if (isinf(x) || isinf(y)) {
      wrong = x != y;
      err = wrong ? inf : 0.0;
    } else {
      err = fabs(x - y);
      wrong = err > atol + rtol * fabs(y);
    }
    bad += wrong;
    worst = max(worst, (u64)__double_as_longlong(err));
    if (!isnan(y))
      big = max(big, (u64)__double_as_longlong(fabs(y)));
  }
  if (bad)
    atomicAdd(&out[0], bad);
  atomicMax(&out[1], worst);
  atomicMax(&out[2], big);
}
)";

} // namespace

std::vector<uint8_t> kite::autotune::compileBenchHelpers(std::string_view arch) {
  return rt::compileToCubin(kHelperSource, "kite_autotune_helpers", arch).binary;
}

namespace {

/// The helper kernels, compiled once per process and loaded per context.
struct Helpers {
  rt::Module module;
  CUfunction fill = nullptr, compare = nullptr;
};

Helpers &helpers(const rt::DeviceContext &dc) {
  static std::mutex mutex;
  static std::vector<uint8_t> cubin;
  static std::map<int, std::unique_ptr<Helpers>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto &h = loaded[dc.ordinal()];
  if (!h) {
    if (cubin.empty())
      cubin = compileBenchHelpers(dc.properties().arch());
    rt::ContextScope scope(dc);
    h = std::make_unique<Helpers>();
    h->module = rt::Module(cubin.data(), "the autotuner's helper kernels");
    h->fill = h->module.function("kite_fill");
    h->compare = h->module.function("kite_compare");
  }
  return *h;
}

CUdeviceptr dptr(const Tensor &t) { return reinterpret_cast<CUdeviceptr>(t.data_ptr()); }

void launch1D(CUfunction f, int64_t n, void **params, const char *what) {
  unsigned blocks = (unsigned)std::clamp<int64_t>((n + 255) / 256, 1, 132 * 16);
  rt::check(rt::cu().cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr),
            "launching {}", what);
}

/// Tolerance for comparing a candidate's output with the reference's: the
/// same kernel with its reductions in another order.
std::pair<double, double> tolerance(DType t) {
  switch (t) {
  case DType::f16:
    return {2e-3, 4e-3};
  case DType::bf16:
    return {1e-2, 1.6e-2};
  case DType::f32:
    return {1e-4, 2e-3};
  case DType::f64:
    return {1e-9, 1e-9};
  case DType::e4m3: // an 8-bit float's step is 2^-3 (e4m3) or 2^-2 (e5m2) of its value
    return {2e-2, 0.13};
  case DType::e5m2:
    return {4e-2, 0.26};
  default:
    return {0, 0};
  }
}

/// How long one launch may run before the bench calls it hung: a kernel
/// that deadlocks (a barrier never reached, registers never granted) would
/// otherwise block `kite bench` and kite_bench forever. No benchmark launch
/// takes a minute.
constexpr double kStallSeconds = 60;

/// Waits for `done`, launched after the last event waited for; a clear
/// error, not a hang, where it does not come within kStallSeconds.
void awaitLaunch(rt::Event &done) {
  if (!done.waitFor(kStallSeconds))
    throw Error(fmt::format("kite bench: a launch did not finish within {:.0f} s: the kernel "
                            "never ends (a deadlock in its synchronization?); the process must "
                            "exit to free the GPU",
                            kStallSeconds));
}
} // namespace

void kite::autotune::synchronizeLaunches() {
  rt::Event done;
  done.record();
  awaitLaunch(done);
}

double kite::autotune::timeLaunches(const std::function<void()> &launch, const Tensor *flush,
                                    int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) {
    launch();
    synchronizeLaunches();
  }
  std::vector<std::unique_ptr<rt::Event>> start, stop;
  for (int i = 0; i < runs; ++i) {
    start.push_back(std::make_unique<rt::Event>());
    stop.push_back(std::make_unique<rt::Event>());
  }
  for (int i = 0; i < runs; ++i) {
    if (flush) {
      rt::check(rt::cu().cuMemsetD8Async(dptr(*flush), uint8_t(i), flush->numel(), nullptr),
                "flushing L2");
      // Lines loaded with an evict_last hint (l2_hints) outlive the memset
      // in the L2's persisting set-aside (11.25 MiB on the H200) and would
      // make the next run up to ~2 us faster; the reset drops them.
      rt::check(rt::cu().cuCtxResetPersistingL2Cache(), "resetting persisting L2 lines");
    }
    start[i]->record();
    launch();
    stop[i]->record();
  }
  // In order, so that each wait covers one launch (and the flush before).
  for (int i = 0; i < runs; ++i)
    awaitLaunch(*stop[i]);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i)
    ms.push_back(stop[i]->elapsedMsSince(*start[i]));
  return medianOf(std::move(ms));
}

struct PlanBench::Impl {
  rt::DeviceContext &dc;
  BenchSettings settings;
  std::vector<ArgSpec> specs;
  std::vector<Tensor> inputs;       // the tensors of `args`, in order
  std::vector<KernelArg> args;      // what the plans are run with
  std::optional<Tensor> flush;      // written before every timed run
  std::vector<Tensor> reference;    // the reference plan's results
  std::vector<double> referenceMax; // each result's largest |value|
  Tensor counters;                  // 3 x u64 for kite_compare

  Impl(int device, std::vector<ArgSpec> specs_, BenchSettings s)
      : dc(rt::DeviceContext::get(device)), settings(std::move(s)), specs(std::move(specs_)) {
    rt::ContextScope scope(dc);
    Helpers &h = helpers(dc);
    uint64_t seed = settings.seed;
    for (const ArgSpec &spec : specs) {
      if (!spec.is_tensor())
        continue;
      std::vector<int64_t> contiguous = ArgSpec::tensor("", spec.dtype, spec.sizes).effective_strides();
      if (spec.effective_strides() != contiguous)
        throw Error(fmt::format("kite autotune: argument '{}' is not contiguous ({}); the tuner "
                                "makes contiguous inputs only",
                                spec.name, spec.str()));
      Tensor t = cuda::empty(spec.sizes, spec.dtype, {}, Device::cuda(device));
      int64_t n = t.numel(), lo = 0, hi = 1;
      if (auto it = settings.intRanges.find(spec.name); it != settings.intRanges.end())
        std::tie(lo, hi) = it->second;
      if (hi <= lo)
        hi = lo + 1;
      CUdeviceptr p = dptr(t);
      int dtype = (int)spec.dtype;
      uint64_t s = seed++ * 0x100000001B3ull;
      void *params[] = {&p, &n, &dtype, &s, &lo, &hi};
      if (n > 0)
        launch1D(h.fill, n, params, "the input fill");
      inputs.push_back(std::move(t));
    }
    size_t t = 0;
    for (const ArgSpec &spec : specs) {
      if (spec.is_tensor()) {
        args.emplace_back(inputs[t++]);
        continue;
      }
      double v = spec.value.value_or(spec.dtype == DType::boolean ? 0.0 : 1e-5);
      switch (spec.dtype) {
      case DType::f32:
        args.emplace_back((float)v);
        break;
      case DType::f64:
        args.emplace_back(v);
        break;
      case DType::boolean:
        args.emplace_back(v != 0);
        break;
      case DType::i32:
        args.emplace_back((int)v);
        break;
      default:
        args.emplace_back((int64_t)v);
      }
    }
    if (settings.flushL2)
      flush = cuda::empty({256 << 20}, DType::i8, {}, Device::cuda(device));
    counters = cuda::empty({3}, DType::i64, {}, Device::cuda(device));
    cuda::synchronize();
  }

  Mismatch compare(const Tensor &got, const Tensor &want, double scale, double *wantMax) {
    Helpers &h = helpers(dc);
    rt::check(rt::cu().cuMemsetD8Async(dptr(counters), 0, 24, nullptr), "clearing counters");
    CUdeviceptr a = dptr(got), b = dptr(want), out = dptr(counters);
    int64_t n = want.numel();
    int dtype = (int)want.dtype();
    auto [atol, rtol] = tolerance(want.dtype());
    atol *= std::max(1.0, scale);
    void *params[] = {&a, &b, &n, &dtype, &atol, &rtol, &out};
    if (n > 0)
      launch1D(h.compare, n, params, "the output check");
    Tensor host = cuda::to_host(counters);
    const uint64_t *c = static_cast<const uint64_t *>(host.data_ptr());
    Mismatch m;
    m.count = c[0];
    std::memcpy(&m.maxError, &c[1], 8);
    if (wantMax)
      std::memcpy(wantMax, &c[2], 8);
    return m;
  }

  double timeRuns(const KernelPlan &plan, int runs, std::span<Tensor> results) {
    return timeLaunches([&] { run_plan(plan, args, results); }, flush ? &*flush : nullptr, 0,
                        runs);
  }
};

std::vector<ArgSpec> kite::autotune::benchArgs(const KernelPlan &plan,
                                               const std::vector<ArgSpec> &given) {
  if (given.size() != plan.args.size())
    throw Error(fmt::format("kite: {} arguments given for kernel '{}', which takes {}",
                            given.size(), plan.name, plan.args.size()));
  std::vector<ArgSpec> specs = plan.args;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].is_tensor() != given[i].is_tensor())
      throw Error(fmt::format("kite: argument {} of kernel '{}' is {} in the plan, but {} was "
                              "given",
                              i + 1, plan.name, specs[i].str(), given[i].str()));
    if (specs[i].is_tensor() && !specs[i].divisors.empty()) {
      // A size taken at launch: run the given one (it fits the class, as
      // the plan was compiled for it).
      specs[i] = given[i];
      continue;
    }
    if (!specs[i].is_tensor() && given[i].value) {
      if (specs[i].value && *specs[i].value != *given[i].value)
        throw Error(fmt::format("kite: the plan of kernel '{}' is specialized on {}, but {} was "
                                "given",
                                plan.name, specs[i].str(), given[i].str()));
      specs[i].value = given[i].value;
    }
  }
  return specs;
}

PlanBench::PlanBench(std::vector<ArgSpec> specs, BenchSettings settings, int device)
    : impl_(std::make_unique<Impl>(device, std::move(specs), std::move(settings))) {}

PlanBench::~PlanBench() = default;

void PlanBench::setReference(const KernelPlan &plan) {
  rt::ContextScope scope(impl_->dc);
  {
    // Unwritten elements read back as NaN (or -1), not as whatever the
    // recycled allocation held.
    rt::PoisonOutputsScope poisoned(true);
    impl_->reference = run_plan(plan, impl_->args);
  }
  synchronizeLaunches();
  impl_->referenceMax.clear();
  for (const Tensor &r : impl_->reference) {
    double big = 0;
    impl_->compare(r, r, 1.0, &big);
    impl_->referenceMax.push_back(big);
  }
}

Evaluation PlanBench::evaluate(const KernelPlan &plan, bool injectFault, double cutoffMs) {
  Evaluation e;
  if (broken_) {
    e.message = "the CUDA context is unusable after an earlier fault";
    return e;
  }
  rt::ContextScope scope(impl_->dc);
  std::vector<Tensor> results(plan.results.size());
  try {
    std::vector<KernelArg> args = impl_->args;
    std::optional<Tensor> bogus;
    if (injectFault)
      for (KernelArg &a : args)
        if (a.kind == ArgSpec::Kind::tensor) {
          // A 1 TiB offset into nowhere: the kernel's first access faults.
          const Tensor &t = *a.tensor;
          bogus = Tensor::from_blob(reinterpret_cast<void *>(uintptr_t(1) << 40), t.sizes(),
                                    t.strides(), t.dtype(), t.device(), nullptr);
          a = KernelArg(*bogus);
          break;
        }
    // The checked run's outputs are poisoned: a candidate that leaves an
    // element unwritten fails the comparison below instead of reading back
    // an earlier candidate's result from the recycled block.
    rt::PoisonOutputsScope poisoned(true);
    run_plan(plan, args, results);
    cuda::synchronize();
  } catch (const Error &err) {
    std::string what = err.what();
    // A fault poisons the context; a launch the driver refused does not.
    broken_ = what.find("ILLEGAL") != std::string::npos ||
              what.find("LAUNCH_FAILED") != std::string::npos ||
              what.find("MISALIGNED") != std::string::npos ||
              what.find("HARDWARE") != std::string::npos ||
              what.find("ASSERT") != std::string::npos ||
              what.find("LAUNCH_TIMEOUT") != std::string::npos;
    e.message = what;
    return e;
  }
  if (!impl_->reference.empty()) {
    if (results.size() != impl_->reference.size()) {
      e.status = Evaluation::Status::wrong;
      e.message = "returns a different number of results than the reference";
      return e;
    }
    for (size_t i = 0; i < results.size(); ++i) {
      const Tensor &want = impl_->reference[i];
      if (results[i].sizes() != want.sizes() || results[i].dtype() != want.dtype()) {
        e.status = Evaluation::Status::wrong;
        e.message = fmt::format("result {} has another shape or dtype than the reference", i);
        return e;
      }
      Mismatch m = impl_->compare(results[i], want, impl_->referenceMax[i], nullptr);
      if (m.count) {
        e.status = Evaluation::Status::wrong;
        e.message = fmt::format("result {}: {} of {} elements differ from the reference (largest "
                                "difference {:g})",
                                i, m.count, want.numel(), m.maxError);
        return e;
      }
    }
  }
  // Warm up, estimate one run, then time enough runs.
  const BenchSettings &s = impl_->settings;
  double one = impl_->timeRuns(plan, std::max(1, s.warmup), results);
  if (cutoffMs > 0 && one > cutoffMs) {
    e.ms = one;
    e.status = Evaluation::Status::ok;
    e.message = fmt::format("slower than the cutoff of {:.4g} ms: timed by its warm-up runs only",
                            cutoffMs);
    return e;
  }
  int runs = one > 0 ? (int)std::ceil(s.targetMs / one) : s.maxRuns;
  runs = std::clamp(runs, s.minRuns, s.maxRuns);
  e.ms = impl_->timeRuns(plan, runs, results);
  e.status = Evaluation::Status::ok;
  return e;
}

const std::vector<Tensor> &PlanBench::referenceResults() const { return impl_->reference; }

const std::vector<ArgSpec> &PlanBench::specs() const { return impl_->specs; }

const std::vector<Tensor> &PlanBench::inputs() const { return impl_->inputs; }

double PlanBench::time(const KernelPlan &plan, int runs) {
  rt::ContextScope scope(impl_->dc);
  std::vector<Tensor> results(plan.results.size());
  impl_->timeRuns(plan, 2, results);
  return impl_->timeRuns(plan, std::max(1, runs), results);
}

double PlanBench::runOnce(const KernelPlan &plan) {
  rt::ContextScope scope(impl_->dc);
  std::vector<Tensor> results(plan.results.size());
  return impl_->timeRuns(plan, 1, results);
}

namespace {
/// An output's size from the launch's specs; 0 where they lack an operand
/// (an unspecialized scalar given without a value).
int64_t sizeAtLaunch(const LaunchExpr &e, std::span<const ArgSpec> args) {
  try {
    return evaluate(e, args);
  } catch (const Error &) {
    return 0;
  }
}
} // namespace

uint64_t kite::autotune::bytesMoved(const KernelPlan &plan, std::span<const ArgSpec> args) {
  uint64_t bytes = 0;
  for (const ArgSpec &a : args)
    if (a.is_tensor()) {
      uint64_t n = 1;
      for (int64_t d : a.sizes)
        n *= (uint64_t)d;
      bytes += n * element_size(a.dtype);
    }
  for (const OutputSpec &o : plan.outputs) {
    uint64_t n = 1;
    size_t next = 0;
    for (int64_t d : o.sizes)
      n *= (uint64_t)(d >= 0 ? d : std::max<int64_t>(0, sizeAtLaunch(o.sizeExprs[next++], args)));
    bytes += n * element_size(o.dtype);
  }
  return bytes;
}

double kite::autotune::copyBandwidthGBs(int device) {
  static std::mutex mutex;
  static std::map<int, double> measured;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = measured.find(device); it != measured.end())
    return it->second;
  rt::DeviceContext &dc = rt::DeviceContext::get(device);
  rt::ContextScope scope(dc);
  const int64_t bytes = int64_t(1) << 30;
  Tensor a = cuda::empty({bytes}, DType::i8, {}, Device::cuda(device));
  Tensor b = cuda::empty({bytes}, DType::i8, {}, Device::cuda(device));
  // Copied bytes are initialized (compute-sanitizer's initcheck reports a
  // copy of uninitialized memory once per 32 bytes).
  rt::check(rt::cu().cuMemsetD8Async(dptr(a), 0, bytes, nullptr), "clearing the copy's source");
  double ms = timeLaunches(
      [&] {
        rt::check(rt::cu().cuMemcpyDtoDAsync(dptr(b), dptr(a), bytes, nullptr), "timing a copy");
      },
      nullptr, 2, 10);
  // A copy reads and writes every byte.
  double gbs = 2.0 * bytes / (ms * 1e-3) / 1e9;
  measured[device] = gbs;
  return gbs;
}
