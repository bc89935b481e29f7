//===- difftest.cpp - Random kernels on the GPU vs reference mode ---------===//
//
// This file implements the differential tester: every kernel that
// gen_kernels.py generated (compiled natively here, for reference mode, and
// captured at build time, its IR embedded) runs at random sizes under random
// configs drawn from its config space, and each GPU result is compared with
// reference mode on the same random inputs, outputs poisoned before every
// launch. A (kernel, sizes, config) triple is a pair. Pairs are compiled on
// --jobs threads (compileToPlan makes a fresh MLIRContext per call, and
// NVRTC compiles in parallel, as the autotuner does); launches and copies
// are serialized on one lock, so compiles overlap the GPU's work.
//
// Without a GPU (or with --no-gpu) every sampled config is lowered and
// compiled with NVRTC for sm_90a, and reference mode is cross-checked
// against itself at other block sizes, so CI exercises everything but the
// launch. --perturb changes one element of each result before comparing: a
// run that reports no mismatch with it cannot catch one.
//
// Each mismatch or failure prints one line with what reproduces it (the
// kernel, sizes, seed and config, as a command line), and the run ends with
//   difftest: N pairs compared, M mismatches, F failures, S skipped
// exiting non-zero on any mismatch or failure.
//
//===----------------------------------------------------------------------===//

#include "difftest.h"

#include "autotune/Space.h"
#include "lowering/Compiler.h"
#include "runtime/Launch.h"
#include "runtime/Nvrtc.h"

#include "../reference/compare.hpp"

#include <kite/runtime.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>

// The captured IR of every generated file, by file stem (generated at build
// time by `kite compile`).
#include "difftest_ir.h"

using namespace kite;
using namespace kite_difftest;
using Clock = std::chrono::steady_clock;

namespace {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct Flags {
  std::vector<std::string> kernels; // names, families or substrings; empty: all
  int sample = 0;                   // > 0: that many kernels spread over the list
  int pairsPerKernel = 6;
  int configsPerSize = 3;
  uint64_t seed = 1;
  double timeBudget = 0; // seconds; 0: none
  int jobs = 0;
  bool noGpu = false;
  bool perturb = false;
  bool verbose = false;
  bool list = false;
  bool gpuOnly = false;
  std::string dumpCuda; // a directory: write each pair's CUDA there instead
  std::string sizes;  // "M=13,N=7": run these sizes only
  std::optional<std::string> config; // run this config only
};

const char *kUsage = R"(usage: difftest [options]
Runs generated kite kernels at random sizes under random configs on the GPU
and compares each result with reference mode.
  --kernels=A,B       only kernels whose name or family is, or contains, A or B
  --sample=N          N kernels spread evenly over the (filtered) list
  --pairs-per-kernel=N  (kernel, sizes, config) pairs per kernel (default 6)
  --configs-per-size=N  configs drawn for each set of sizes (default 3)
  --seed=S            seeds sizes, inputs and configs (default 1)
  --time-budget=SEC   start no new pair after SEC seconds
  --jobs=N            compile threads (default: the hardware's threads)
  --no-gpu            compile for sm_90a only, and cross-check reference mode
                      at other block sizes (the default without a GPU)
  --sizes=M=13,N=7    these sizes (with --kernels naming one kernel)
  --config=JSON       this config only ('' is the default config)
  --perturb           change one element of each result before comparing
                      (the run must then report mismatches)
  --gpu-only          without a GPU, skip (exit 77) instead of compiling only
  --dump-cuda=DIR     lower each pair to CUDA only (no NVRTC, no launch) and
                      write it to DIR/<kernel>.<sizes>.<config hash>.cu, to
                      compare the code generation of two trees (diff -r)
  --list              print the kernels and exit
  --verbose           one line per pair
)";

bool parseFlag(const std::string &arg, const char *name, std::string &value) {
  std::string prefix = std::string("--") + name + "=";
  if (arg.rfind(prefix, 0) != 0)
    return false;
  value = arg.substr(prefix.size());
  return true;
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty())
      out.push_back(item);
  return out;
}

Flags parseFlags(int argc, char **argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], v;
    try {
      if (parseFlag(a, "kernels", v))
        f.kernels = split(v, ',');
      else if (parseFlag(a, "sample", v))
        f.sample = std::stoi(v);
      else if (parseFlag(a, "pairs-per-kernel", v))
        f.pairsPerKernel = std::stoi(v);
      else if (parseFlag(a, "configs-per-size", v))
        f.configsPerSize = std::max(1, std::stoi(v));
      else if (parseFlag(a, "seed", v))
        f.seed = std::stoull(v);
      else if (parseFlag(a, "time-budget", v))
        f.timeBudget = std::stod(v);
      else if (parseFlag(a, "jobs", v))
        f.jobs = std::stoi(v);
      else if (parseFlag(a, "sizes", v))
        f.sizes = v;
      else if (parseFlag(a, "config", v))
        f.config = v;
      else if (parseFlag(a, "dump-cuda", v))
        f.dumpCuda = v;
      else if (a == "--no-gpu")
        f.noGpu = true;
      else if (a == "--perturb")
        f.perturb = true;
      else if (a == "--verbose")
        f.verbose = true;
      else if (a == "--list")
        f.list = true;
      else if (a == "--gpu-only")
        f.gpuOnly = true;
      else if (a == "--help" || a == "-h") {
        std::cout << kUsage;
        std::exit(0);
      } else {
        std::cerr << "difftest: unknown option '" << a << "'\n" << kUsage;
        std::exit(2);
      }
    } catch (const std::exception &) {
      std::cerr << "difftest: bad value in '" << a << "'\n";
      std::exit(2);
    }
  }
  if (f.jobs <= 0)
    f.jobs = std::max(1u, std::thread::hardware_concurrency());
  return f;
}

//===----------------------------------------------------------------------===//
// Random sizes and inputs
//===----------------------------------------------------------------------===//

/// splitmix64: a stable mix of seeds and names (std::hash is not stable
/// across standard libraries, and reproductions must be).
uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9E3779B97F4A7C15ull + (b << 6) + (b >> 2);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t hashString(std::string_view s) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (char c : s)
    h = (h ^ uint8_t(c)) * 1099511628211ull;
  return h;
}

using Sizes = std::vector<int64_t>;

std::string formatSizes(const KernelInfo &k, const Sizes &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i)
      out += ',';
    out.append(k.dims[i].name).append("=").append(std::to_string(s[i]));
  }
  return out;
}

int64_t numel(const KernelInfo &k, const Param &p, const Sizes &s) {
  int64_t n = 1;
  for (int d : p.dims)
    n *= s[d];
  return n;
}

int64_t largest(const KernelInfo &k, const Sizes &s) {
  int64_t m = 0;
  for (const Param &p : k.params)
    if (p.kind == Param::tensor || p.kind == Param::index)
      m = std::max(m, numel(k, p, s));
  return m;
}

int64_t fitDim(const DimRange &d, int64_t v) {
  v = std::clamp(v, d.lo, d.hi);
  if (d.mult > 1) {
    v = (v + d.mult - 1) / d.mult * d.mult;
    if (v > d.hi)
      v = d.hi / d.mult * d.mult;
  }
  return std::max(v, d.lo);
}

/// Sizes for every dimension: 1, primes, powers of two and their
/// neighbors (a block size and one past it), the range's ends, and uniform
/// draws; then halved where a tensor would exceed the kernel's limit.
Sizes pickSizes(const KernelInfo &k, std::mt19937_64 &rng) {
  static const int64_t kInteresting[] = {1,  2,   3,   5,   7,   13,  17,   31,   32,   33,
                                         61, 63,  64,  65,  97,  127, 128,  129,  251,  255,
                                         256, 257, 509, 511, 512, 513, 1000, 1021, 1024, 1025,
                                         2039, 2048, 2049, 4093, 4096, 4097};
  Sizes s;
  for (const DimRange &d : k.dims) {
    int64_t v;
    switch (rng() % 4) {
    case 0:
    case 1: {
      std::vector<int64_t> in;
      for (int64_t c : kInteresting)
        if (c >= d.lo && c <= d.hi)
          in.push_back(c);
      v = in.empty() ? d.lo : in[rng() % in.size()];
      break;
    }
    case 2:
      v = (rng() % 3 == 0) ? d.hi : d.lo + int64_t(rng() % uint64_t(std::min<int64_t>(d.hi - d.lo + 1, 64)));
      break;
    default:
      v = d.lo + int64_t(rng() % uint64_t(d.hi - d.lo + 1));
    }
    s.push_back(fitDim(d, v));
  }
  for (int guard = 0; guard < 64 && largest(k, s) > k.maxElems; ++guard) {
    size_t big = 0;
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] > s[big])
        big = i;
    s[big] = fitDim(k.dims[big], s[big] / 2);
  }
  return s;
}

std::optional<Sizes> parseSizes(const KernelInfo &k, const std::string &text, std::string &error) {
  Sizes s(k.dims.size(), -1);
  for (const std::string &kv : split(text, ',')) {
    size_t eq = kv.find('=');
    bool found = false;
    for (size_t i = 0; i < k.dims.size() && eq != std::string::npos; ++i)
      if (kv.substr(0, eq) == k.dims[i].name) {
        s[i] = std::stoll(kv.substr(eq + 1));
        found = true;
      }
    if (!found) {
      error = "no dimension '" + kv + "' in " + k.name;
      return std::nullopt;
    }
  }
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] < 1) {
      error = std::string("--sizes does not give ") + k.dims[i].name;
      return std::nullopt;
    }
  return s;
}

DType dtypeOf(const char *name) {
  static const std::map<std::string, DType> m = {
      {"f16", DType::f16}, {"bf16", DType::bf16}, {"f32", DType::f32}, {"f64", DType::f64},
      {"i8", DType::i8},   {"i32", DType::i32},   {"i64", DType::i64}, {"bool", DType::boolean}};
  return m.at(name);
}

/// A host tensor of `sizes` filled from `rng`: floats uniform in [lo, hi],
/// integers uniform in [lo, hi], booleans fair coins.
Tensor randomTensor(DType t, const std::vector<int64_t> &sizes, double lo, double hi,
                    std::mt19937_64 &rng) {
  Tensor x = empty(sizes, t);
  int64_t n = x.numel();
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int64_t> integer{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
  switch (t) {
  case DType::f32: {
    float *p = x.data<float>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = float(real(rng));
    break;
  }
  case DType::f64: {
    double *p = x.data<double>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = real(rng);
    break;
  }
  case DType::bf16: {
    bfloat16 *p = x.data<bfloat16>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = bfloat16(float(real(rng)));
    break;
  }
  case DType::f16: {
    half *p = x.data<half>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = half(float(real(rng)));
    break;
  }
  case DType::i32: {
    int32_t *p = x.data<int32_t>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = int32_t(integer(rng));
    break;
  }
  case DType::i64: {
    int64_t *p = x.data<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = integer(rng);
    break;
  }
  case DType::i8: {
    int8_t *p = x.data<int8_t>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = int8_t(integer(rng));
    break;
  }
  case DType::boolean: {
    bool *p = x.data<bool>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = rng() & 1;
    break;
  }
  default:
    throw Error("difftest: no random fill for dtype " + std::string(dtype_name(t)));
  }
  return x;
}

/// The kernel's arguments for `sizes`, made from `seed`.
std::vector<Value> makeInputs(const KernelInfo &k, const Sizes &sizes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Value> args;
  for (const Param &p : k.params) {
    Value v;
    std::vector<int64_t> shape;
    for (int d : p.dims)
      shape.push_back(sizes[d]);
    switch (p.kind) {
    case Param::tensor:
      v.tensor = randomTensor(dtypeOf(p.dtype), shape, p.lo, p.hi, rng);
      break;
    case Param::index:
      v.tensor = randomTensor(dtypeOf(p.dtype), shape, 0, double(sizes[p.indexDim] - 1), rng);
      break;
    case Param::size:
      v.number = double(sizes[p.indexDim]);
      break;
    case Param::below:
      v.number = double(std::uniform_int_distribution<int64_t>(0, sizes[p.indexDim])(rng));
      break;
    case Param::scalar: {
      DType t = dtypeOf(p.dtype);
      if (t == DType::boolean)
        v.number = double(rng() & 1);
      else if (is_floating(t))
        v.number = std::uniform_real_distribution<double>(p.lo, p.hi)(rng);
      else
        v.number = double(std::uniform_int_distribution<int64_t>(int64_t(p.lo), int64_t(p.hi) - 1)(rng));
      if (t == DType::f32)
        v.number = float(v.number);
      break;
    }
    }
    args.push_back(std::move(v));
  }
  return args;
}

//===----------------------------------------------------------------------===//
// Running and comparing
//===----------------------------------------------------------------------===//

/// What the run has seen, shared by the worker threads.
struct Tally {
  std::atomic<int64_t> compared{0}, mismatches{0}, failures{0}, skipped{0}, compiled{0},
      crossChecks{0};
  std::mutex print;

  void report(const std::string &line) {
    std::lock_guard<std::mutex> lock(print);
    std::cout << line << std::endl;
  }
};

std::string quoteForShell(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string reproduce(const Flags &f, const KernelInfo &k, const Sizes &s,
                      const std::optional<std::string> &config) {
  std::string cmd = "difftest --kernels=" + std::string(k.name) + " --seed=" +
                    std::to_string(f.seed) + " --sizes=" + formatSizes(k, s);
  if (config)
    cmd += " --config=" + quoteForShell(*config);
  if (f.noGpu)
    cmd += " --no-gpu";
  if (f.perturb)
    cmd += " --perturb";
  return cmd;
}

/// Changes element 0 of a host tensor (adds 1, or flips a boolean).
void perturb(Tensor &t) {
  if (t.numel() == 0)
    return;
  t = t.contiguous().clone();
  switch (t.dtype()) {
  case DType::f32:
    t.data<float>()[0] += 1.0f;
    break;
  case DType::f64:
    t.data<double>()[0] += 1.0;
    break;
  case DType::bf16:
    t.data<bfloat16>()[0] = bfloat16(float(t.data<bfloat16>()[0]) + 1.0f);
    break;
  case DType::f16:
    t.data<half>()[0] = half(float(t.data<half>()[0]) + 1.0f);
    break;
  case DType::i32:
    t.data<int32_t>()[0] += 1;
    break;
  case DType::i64:
    t.data<int64_t>()[0] += 1;
    break;
  case DType::i8:
    t.data<int8_t>()[0] += 1;
    break;
  case DType::boolean:
    t.data<bool>()[0] = !t.data<bool>()[0];
    break;
  default:
    break;
  }
}

/// The largest |got - expected| / (atol + rtol |expected|) over finite
/// elements: how close to its tolerance a passing result came.
double errorRatio(const Tensor &got, const Tensor &expected, kite_test::Tolerance tol) {
  if (got.sizes() != expected.sizes() || tol.atol + tol.rtol == 0)
    return 0;
  std::vector<double> a = got.to_doubles(), e = expected.to_doubles();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::isfinite(a[i]) && std::isfinite(e[i]))
      worst = std::max(worst, std::abs(a[i] - e[i]) / (tol.atol + tol.rtol * std::abs(e[i])));
  return worst;
}

/// The closest call over the run, for calibrating the generator's
/// tolerances (a tolerance far above every error hides bugs).
struct Closest {
  std::mutex lock;
  double ratio = 0;
  std::string where;
  void offer(double r, const std::string &w) {
    std::lock_guard<std::mutex> g(lock);
    if (r > ratio) {
      ratio = r;
      where = w;
    }
  }
};
Closest closest;

/// Compares every output; returns "" or what differs.
std::string compareOutputs(const KernelInfo &k, const std::vector<Tensor> &expected,
                           std::vector<Tensor> got, bool perturbFirst,
                           const std::string &where = "") {
  if (got.size() != expected.size())
    return "got " + std::to_string(got.size()) + " outputs, expected " +
           std::to_string(expected.size());
  std::string out;
  for (size_t i = 0; i < got.size(); ++i) {
    if (perturbFirst)
      perturb(got[i]);
    kite_test::Tolerance tol{0, 0};
    if (is_floating(expected[i].dtype()))
      tol = {k.rtol, k.atol};
    ::testing::AssertionResult r = kite_test::allClose(got[i], expected[i], tol);
    if (r && !where.empty())
      closest.offer(errorRatio(got[i], expected[i], tol), where + " output " + std::to_string(i));
    if (!r)
      out += (out.empty() ? "" : "; ") + ("output " + std::to_string(i) + ": " + r.message());
  }
  return out;
}

/// One line of a message (compiler diagnostics run over several).
std::string oneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > 1500)
    s = s.substr(0, 1500) + "...";
  return s;
}

/// Writes the CUDA of one pair (without #line directives, which name this
/// tree's paths) to `path`, or the error that lowering reported.
void dumpCuda(const std::string &path, const KernelSource &source,
              const std::vector<ArgSpec> &specs, const std::string &config) {
  std::string text;
  try {
    CompileOptions options{"sm_90a"};
    options.lineDirectives = false;
    text = lowerToCuda(source.ir, source.name, specs, config, options).source;
  } catch (const std::exception &e) {
    text = std::string("error: ") + e.what() + "\n";
  }
  text = "// config: " + (config.empty() ? std::string("default") : config) + "\n" + text;
  std::FILE *out = std::fopen(path.c_str(), "w");
  if (!out || std::fwrite(text.data(), 1, text.size(), out) != text.size()) {
    std::fprintf(stderr, "difftest: cannot write %s\n", path.c_str());
    std::exit(2);
  }
  std::fclose(out);
}

class Runner {
public:
  Runner(const Flags &flags, bool gpu) : f(flags), gpu(gpu) {
    start = Clock::now();
    for (const auto &e : kite_test_ir::kFiles)
      irByFile[e.name] = e.text;
  }

  Tally tally;

  /// Runs the pairs of `count` configs for one set of sizes of kernel `k`.
  void runSizeSet(const KernelInfo &k, int set, int count);

  bool outOfTime() const {
    return f.timeBudget > 0 &&
           std::chrono::duration<double>(Clock::now() - start).count() > f.timeBudget;
  }
  bool gpuBroken() const { return broken.load(); }

private:
  const Flags &f;
  bool gpu;
  Clock::time_point start;
  std::map<std::string, std::string> irByFile;
  std::mutex gpuLock;
  std::atomic<bool> broken{false};

  std::vector<std::string> drawConfigs(const KernelInfo &k, const KernelSource &source,
                                       const std::vector<ArgSpec> &specs, int set, int count,
                                       std::mt19937_64 &rng, const Sizes &sizes);
};

std::vector<ArgSpec> specsOf(const KernelInfo &k, const std::vector<Value> &args,
                             const std::vector<Tensor> &device, bool gpu) {
  std::vector<ArgSpec> specs;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param &p = k.params[i];
    if (p.kind == Param::tensor || p.kind == Param::index) {
      if (gpu) {
        specs.push_back(ArgSpec::of(p.name, device[i]));
      } else {
        const Tensor &t = args[i].tensor;
        specs.push_back(ArgSpec::tensor(p.name, t.dtype(), t.sizes(), {}, 16));
      }
    } else {
      specs.push_back(ArgSpec::scalar(p.name, dtypeOf(p.dtype), args[i].number));
    }
  }
  return specs;
}

std::vector<std::string> Runner::drawConfigs(const KernelInfo &k, const KernelSource &source,
                                             const std::vector<ArgSpec> &specs, int set,
                                             int count, std::mt19937_64 &rng,
                                             const Sizes &sizes) {
  if (f.config)
    return {*f.config};
  std::string spaceText = configSpaceOf(source, specs, gpu ? "" : "sm_90a");
  autotune::SearchSpace space(nlohmann::json::parse(spaceText));
  std::vector<std::string> out;
  // The default config once per kernel, then random points (each
  // parameter keeps its default with probability 0.3), without repeats.
  if (set == 0)
    out.push_back("");
  for (int guard = 0; (int)out.size() < count + 3 && guard < 50; ++guard) {
    std::string c = space.configText(space.random(rng, 0.3));
    if (std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
  }
  return out;
}

void Runner::runSizeSet(const KernelInfo &k, int set, int count) {
  if (outOfTime() || gpuBroken())
    return;
  uint64_t kseed = mix(f.seed, hashString(k.name));
  std::mt19937_64 rng(mix(kseed, uint64_t(set)));
  Sizes sizes;
  if (!f.sizes.empty()) {
    std::string error;
    std::optional<Sizes> s = parseSizes(k, f.sizes, error);
    if (!s) {
      tally.failures++;
      tally.report("difftest: FAILURE " + std::string(k.name) + ": --sizes: " + error);
      return;
    }
    sizes = *s;
  } else {
    sizes = pickSizes(k, rng);
  }
  std::string where = std::string(k.name) + " (" + k.file + ".kite.cpp, " + k.family +
                      ") sizes " + formatSizes(k, sizes) + " seed " + std::to_string(f.seed);
  // Inputs depend on the seed, the kernel and the sizes alone, so that
  // --sizes reproduces them.
  uint64_t inputSeed = mix(kseed, hashString(formatSizes(k, sizes)));
  std::vector<Value> args = makeInputs(k, sizes, inputSeed);

  std::vector<Tensor> expected;
  try {
    if (f.dumpCuda.empty())
      expected = k.reference(args);
  } catch (const std::exception &e) {
    tally.failures++;
    tally.report("difftest: FAILURE " + where + ": reference mode threw: " + oneLine(e.what()) +
                 "\n  reproduce: " + reproduce(f, k, sizes, std::nullopt));
    return;
  }

  if (!gpu && f.dumpCuda.empty()) {
    // Reference mode against itself at other block sizes: its result must
    // not depend on them.
    static const std::vector<std::vector<int64_t>> kSettings = {{16}, {32}, {8, 128}, {128, 4}};
    const std::vector<int64_t> &setting = kSettings[rng() % kSettings.size()];
    try {
      std::vector<Tensor> again;
      {
        ReferenceBlockSizes scope(setting);
        again = k.reference(args);
      }
      tally.crossChecks++;
      std::string diff = compareOutputs(k, expected, again, f.perturb,
                                        where + " at block sizes " + kite_test::formatSizes(setting));
      if (!diff.empty()) {
        tally.mismatches++;
        tally.report("difftest: MISMATCH " + where + ": reference mode at block sizes " +
                     kite_test::formatSizes(setting) + " vs 64: " + oneLine(diff) +
                     "\n  reproduce: " + reproduce(f, k, sizes, std::nullopt));
      }
    } catch (const std::exception &e) {
      tally.failures++;
      tally.report("difftest: FAILURE " + where + ": reference mode at block sizes " +
                   kite_test::formatSizes(setting) + " threw: " + oneLine(e.what()));
    }
  }

  // Device copies of the tensor arguments (one slot per parameter).
  std::vector<Tensor> device(k.params.size());
  auto dropDevice = [&] {
    std::lock_guard<std::mutex> lock(gpuLock);
    device.clear();
  };
  if (gpu) {
    std::lock_guard<std::mutex> lock(gpuLock);
    try {
      for (size_t i = 0; i < args.size(); ++i)
        if (args[i].tensor.defined())
          device[i] = cuda::to_device(args[i].tensor);
    } catch (const std::exception &e) {
      tally.failures++;
      broken = true;
      tally.report("difftest: FAILURE " + where + ": copying inputs: " + oneLine(e.what()));
      return;
    }
  }
  std::vector<ArgSpec> specs = specsOf(k, args, device, gpu);
  const std::string &ir = irByFile.at(k.file);
  std::string irHash = std::to_string(hashString(ir));
  std::string fileName = std::string(k.file) + ".kite.cpp";
  KernelSource source{nullptr, k.name, ir, irHash, fileName};

  std::vector<std::string> configs;
  try {
    configs = drawConfigs(k, source, specs, set, count, rng, sizes);
  } catch (const std::exception &e) {
    tally.failures++;
    tally.report("difftest: FAILURE " + where + ": config space: " + oneLine(e.what()) +
                 "\n  reproduce: " + reproduce(f, k, sizes, std::string()));
    dropDevice();
    return;
  }

  std::vector<KernelArg> kargs;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param &p = k.params[i];
    if (p.kind == Param::tensor || p.kind == Param::index) {
      kargs.emplace_back(gpu ? device[i] : args[i].tensor);
      continue;
    }
    kargs.push_back(KernelArg::scalar(dtypeOf(p.dtype), args[i].number));
  }

  int done = 0;
  for (const std::string &config : configs) {
    if (done >= count || outOfTime() || gpuBroken())
      break;
    std::string shown = config.empty() ? "default" : config;
    KernelPlan plan;
    try {
      if (!f.dumpCuda.empty()) {
        ++done;
        dumpCuda(f.dumpCuda + "/" + k.name + "." + formatSizes(k, sizes) + "." +
                     std::to_string(hashString(config) % 1000000007) + ".cu",
                 source, specs, config);
        tally.compiled++;
        continue;
      }
      plan = compileToPlan(source, specs, Options{{}, config},
                           CompileOptions{gpu ? "" : "sm_90a"});
    } catch (const ConfigRejected &e) {
      // Too big for these sizes (registers, shared memory): a reasoned
      // rejection, counted but not compared; the next config takes its
      // place.
      tally.skipped++;
      if (f.verbose)
        tally.report("difftest: skipped " + where + " config " + shown + ": " +
                     oneLine(e.what()));
      continue;
    } catch (const std::exception &e) {
      ++done;
      tally.failures++;
      tally.report("difftest: FAILURE " + where + " config " + shown + ": compile: " +
                   oneLine(e.what()) + "\n  reproduce: " + reproduce(f, k, sizes, config));
      continue;
    }
    ++done;
    tally.compiled++;
    if (!gpu) {
      if (f.verbose)
        tally.report("difftest: compiled " + where + " config " + shown);
      continue;
    }
    std::vector<Tensor> got;
    try {
      std::lock_guard<std::mutex> lock(gpuLock);
      std::vector<Tensor> results = run_plan(plan, kargs);
      cuda::synchronize();
      for (const Tensor &r : results)
        got.push_back(cuda::to_host(r));
      results.clear();
      runtime::evictPlan(plan.key);
    } catch (const std::exception &e) {
      tally.failures++;
      tally.report("difftest: FAILURE " + where + " config " + shown + ": launch: " +
                   oneLine(e.what()) + "\n  reproduce: " + reproduce(f, k, sizes, config));
      // A fault leaves the CUDA context unusable: stop launching.
      try {
        std::lock_guard<std::mutex> lock(gpuLock);
        cuda::synchronize();
      } catch (const std::exception &) {
        broken = true;
        tally.report("difftest: the CUDA context is broken; no further launches");
      }
      continue;
    }
    tally.compared++;
    std::string diff = compareOutputs(k, expected, got, f.perturb, where + " config " + shown);
    if (!diff.empty()) {
      tally.mismatches++;
      tally.report("difftest: MISMATCH " + where + " config " + shown + ": " + oneLine(diff) +
                   "\n  reproduce: " + reproduce(f, k, sizes, config));
    } else if (f.verbose) {
      tally.report("difftest: ok " + where + " config " + shown);
    }
  }
  dropDevice();
}

bool matches(const KernelInfo &k, const std::vector<std::string> &filters) {
  if (filters.empty())
    return true;
  for (const std::string &w : filters)
    if (w == k.name || w == k.family || std::string(k.name).find(w) != std::string::npos)
      return true;
  return false;
}

} // namespace

int main(int argc, char **argv) {
  Flags f = parseFlags(argc, argv);
  std::vector<KernelInfo> all = allKernels(), kernels;
  for (KernelInfo &k : all)
    if (matches(k, f.kernels))
      kernels.push_back(std::move(k));
  if (f.sample > 0 && f.sample < (int)kernels.size()) {
    std::vector<KernelInfo> picked;
    for (int i = 0; i < f.sample; ++i)
      picked.push_back(kernels[size_t(i) * kernels.size() / size_t(f.sample)]);
    kernels = std::move(picked);
  }
  if (f.list) {
    for (const KernelInfo &k : kernels)
      std::cout << k.name << " " << k.family << " " << k.file << ".kite.cpp\n";
    return 0;
  }
  if (kernels.empty()) {
    std::cerr << "difftest: no kernel matches --kernels\n";
    return 2;
  }
  if (!f.sizes.empty() && kernels.size() != 1) {
    std::cerr << "difftest: --sizes needs --kernels to name one kernel\n";
    return 2;
  }

  if (!f.dumpCuda.empty())
    f.noGpu = true;
  bool gpu = !f.noGpu && gpu_available();
  if (!gpu && f.gpuOnly) {
    std::cout << "difftest: skipped: no GPU (" << gpu_unavailable_reason() << ")\n";
    return 77;
  }
  if (!gpu && !f.noGpu) {
    std::cout << "difftest: no GPU (" << gpu_unavailable_reason()
              << "); compiling for sm_90a and cross-checking reference mode instead\n";
    f.noGpu = true;
  }
  if (!runtime::nvrtcAvailable()) {
    std::cout << "difftest: NVRTC is not available: " << runtime::nvrtcUnavailableReason()
              << "\n";
    return 1;
  }
  if (gpu)
    runtime::setPoisonOutputs(true);

  // The work: for each kernel, sets of sizes, each with up to
  // --configs-per-size configs, --pairs-per-kernel pairs in all.
  struct Task {
    const KernelInfo *kernel;
    int set, count;
  };
  std::vector<Task> tasks;
  int per = f.config ? 1 : f.configsPerSize;
  int pairs = f.config ? 1 : f.pairsPerKernel;
  for (int set = 0, left = pairs; left > 0; ++set, left -= per)
    for (const KernelInfo &k : kernels)
      tasks.push_back({&k, set, std::min(per, left)});
  if (!f.sizes.empty())
    tasks.resize(std::min<size_t>(tasks.size(), 1));

  Runner runner(f, gpu);
  auto t0 = Clock::now();
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int j = 0; j < std::min<int>(f.jobs, (int)tasks.size()); ++j)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < tasks.size();)
        runner.runSizeSet(*tasks[i].kernel, tasks[i].set, tasks[i].count);
    });
  for (std::thread &t : pool)
    t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  Tally &t = runner.tally;
  char tail[256];
  std::snprintf(tail, sizeof tail, " (%zu kernels, %.1f s, %d jobs%s%s)", kernels.size(), seconds,
                f.jobs, runner.outOfTime() ? ", stopped by --time-budget" : "",
                f.perturb ? ", --perturb" : "");
  if (!gpu)
    std::cout << "difftest: no GPU: " << t.compiled << " configs compiled for sm_90a, "
              << t.crossChecks << " reference cross-checks\n";
  if (closest.ratio > 0)
    std::cout << "difftest: the closest passing result came to " << closest.ratio
              << " of its tolerance: " << closest.where << "\n";
  std::cout << "difftest: " << t.compared << " pairs compared, " << t.mismatches
            << " mismatches, " << t.failures << " failures, " << t.skipped << " skipped" << tail
            << std::endl;
  if (t.mismatches > 0 || t.failures > 0)
    return 1;
  if (gpu && t.compared == 0) {
    std::cout << "difftest: nothing was compared\n";
    return 1;
  }
  return 0;
}
