//===- launch_test.cpp - kite::launch and generated registrations (CPU) ---===//
//
// The kernels of Inputs/launch_kernels.kite.cpp are captured at build time
// by kite_add_kernels: this checks what the generated registration
// registers (names, parameter names, IR with locations, hashes), and the
// launch errors that need no GPU: a CPU tensor is rejected by name before
// anything is compiled, an uncaptured kernel says how to capture it.
// (A wrong argument count or type is a compile error: kite::launch's
// static_assert, not tested here.)
//
//===----------------------------------------------------------------------===//

#include "lowering/Compiler.h"
#include "runtime/CompilerHook.h"
#include "runtime/Nvrtc.h"

#include <kite/runtime.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>

// The captured kernels (defined in Inputs/launch_kernels.kite.cpp).
kite::Tensor add(kite::Tensor x, kite::Tensor y);
void scalars(kite::Tensor x, int64_t a, int b, double c, float d, bool e);
std::tuple<kite::Tensor, kite::Tensor> pair(kite::Tensor x, kite::Tensor y);

// From examples/matmul.kite.cpp, examples/softmax.kite.cpp and
// examples/attention.kite.cpp.
kite::Tensor matmul(kite::Tensor x, kite::Tensor y);
kite::Tensor softmax(kite::Tensor x);
kite::Tensor attention(kite::Tensor q, kite::Tensor k, kite::Tensor v);

// Not captured: no kite_add_kernels for it.
kite::Tensor not_captured(kite::Tensor x) { return x; }

using namespace kite;

namespace {

/// attention's q, k and v: 8 heads of 1024 rows of head dim `d`, bf16.
std::vector<ArgSpec> attentionSpecs(int64_t d) {
  std::vector<ArgSpec> s;
  for (const char *name : {"q", "k", "v"})
    s.push_back(ArgSpec::tensor(name, bf16, {8, 1024, d}, {}, 16));
  return s;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Replaces the compiler for the duration of a test, counting calls.
struct CountingCompiler {
  int calls = 0;
  CountingCompiler() {
    runtime::setCompiler([this](const KernelSource &, const std::vector<ArgSpec> &,
                                const Options &) -> KernelPlan {
      ++calls;
      throw Error("test compiler: not expected to be called");
    });
  }
  ~CountingCompiler() { runtime::setCompiler({}); }
};

/// Arguments of `add` at a size that is no multiple of a tile.
std::vector<ArgSpec> addSpecs() {
  return {ArgSpec::tensor("x", f32, {37, 70}), ArgSpec::tensor("y", f32, {37, 70})};
}

template <class F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST(Registration, RegistersEveryKernelWithItsNamesAndIR) {
  struct Expected {
    const void *fn;
    const char *name;
    const char *args;
  } expected[] = {{reinterpret_cast<const void *>(&add), "add", "x,y"},
                  {reinterpret_cast<const void *>(&scalars), "scalars", "x,a,b,c,d,e"},
                  {reinterpret_cast<const void *>(&pair), "pair", "x,y"}};
  for (const Expected &e : expected) {
    const KernelSource *k = lookup_kernel(e.fn);
    ASSERT_NE(k, nullptr) << e.name;
    EXPECT_EQ(k->function, e.fn);
    EXPECT_EQ(k->name, e.name);
    EXPECT_EQ(k->argNames, e.args);
    EXPECT_NE(k->ir.find(std::string("func.func @") + e.name + "("), std::string_view::npos);
    // Only this kernel's IR, with the user's source locations.
    for (const Expected &other : expected) {
      if (other.fn != e.fn) {
        EXPECT_EQ(k->ir.find(std::string("func.func @") + other.name + "("),
                  std::string_view::npos);
      }
    }
    EXPECT_NE(k->ir.find("launch_kernels.kite.cpp"), std::string_view::npos);
    EXPECT_EQ(k->irHash.size(), 16u);
    EXPECT_TRUE(k->file.ends_with("Inputs/launch_kernels.kite.cpp")) << k->file;
  }
  EXPECT_NE(lookup_kernel(&add)->irHash, lookup_kernel(&pair)->irHash);
  EXPECT_EQ(lookup_kernel(&not_captured), nullptr);
}

TEST(Registration, GeneratedSourceDeclaresTheCxxSignatures) {
  std::string text = readFile(KITE_TEST_REGISTRATION);
  ASSERT_FALSE(text.empty()) << KITE_TEST_REGISTRATION;
  EXPECT_NE(text.find("kite::Tensor add(kite::Tensor x, kite::Tensor y);"), std::string::npos);
  EXPECT_NE(text.find("void scalars(kite::Tensor x, int64_t a, int b, double c, float d, bool e);"),
            std::string::npos);
  EXPECT_NE(text.find("std::tuple<kite::Tensor, kite::Tensor> pair(kite::Tensor x, kite::Tensor y);"),
            std::string::npos);
  EXPECT_NE(text.find("static_cast<void (*)(kite::Tensor, int64_t, int, double, float, bool)>"
                      "(&::scalars)"),
            std::string::npos);
  EXPECT_NE(text.find("const kite::KernelRegistration"), std::string::npos);
}

TEST(Registration, EmbeddedIRCompilesToAPlan) {
  // The registered IR goes through the whole compiler (NVRTC needs no GPU).
  const KernelSource *k = lookup_kernel(&add);
  ASSERT_NE(k, nullptr);
  std::vector<ArgSpec> specs = addSpecs();
  const CompileOptions target{"sm_90a"};
  KernelPlan plan = compileToPlan(*k, specs, Options{}, target);
  EXPECT_EQ(plan.name, "add");
  EXPECT_EQ(plan.results.size(), 1u);
  EXPECT_FALSE(plan.binary.empty());
  EXPECT_NE(plan.key.find(std::string(k->irHash)), std::string::npos);

  const KernelSource *p = lookup_kernel(&pair);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(compileToPlan(*p, specs, Options{}, target).results.size(), 2u);
}

TEST(Registration, CudaOverrideCompilesTheEditedSource) {
  // KITE_CUDA_OVERRIDE=<dir>: <dir>/<symbol>.cu replaces the generated
  // source; without the file, or the variable, the generated one compiles.
  const KernelSource *k = lookup_kernel(&add);
  ASSERT_NE(k, nullptr);
  std::vector<ArgSpec> specs = addSpecs();
  const CompileOptions target{"sm_90a"};
  CudaKernel cuda = lowerToCuda(k->ir, k->name, specs, "", target);
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "kite-override";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / (cuda.symbol + ".cu"))
      << cuda.source << "\nextern \"C\" __global__ void kite_edit_marker() {}\n";
  auto hasMarker = [](const KernelPlan &p) {
    std::string bytes(p.binary.begin(), p.binary.end());
    return bytes.find("kite_edit_marker") != std::string::npos;
  };
  ::setenv("KITE_CUDA_OVERRIDE", dir.c_str(), 1);
  KernelPlan edited = compileToPlan(*k, specs, Options{}, target);
  EXPECT_TRUE(kite::runtime::cudaOverrideDir() == dir);
  std::filesystem::remove(dir / (cuda.symbol + ".cu"));
  KernelPlan noFile = compileToPlan(*k, specs, Options{}, target);
  ::unsetenv("KITE_CUDA_OVERRIDE");
  KernelPlan generated = compileToPlan(*k, specs, Options{}, target);
  EXPECT_TRUE(hasMarker(edited));
  EXPECT_FALSE(hasMarker(noFile));
  EXPECT_FALSE(hasMarker(generated));
  EXPECT_TRUE(kite::runtime::cudaOverrideDir().empty());
}

TEST(Registration, UnalignedTensorsCompileWithoutVectorAccesses) {
  // kite::launch describes a tensor at an odd address with alignment 1 (and
  // a spec made without one has 0); the compiler must not take either for
  // the 16 bytes it assumes when none is given.
  const KernelSource *k = lookup_kernel(&add);
  ASSERT_NE(k, nullptr);
  CompileOptions target;
  target.arch = "sm_90a";
  auto cudaFor = [&](int64_t alignment) {
    std::vector<ArgSpec> specs = {ArgSpec::tensor("x", f32, {64, 256}, {}, alignment),
                                  ArgSpec::tensor("y", f32, {64, 256}, {}, alignment)};
    return lowerToCuda(k->ir, k->name, specs, "", target).source;
  };
  EXPECT_NE(cudaFor(16).find("load_vec<4"), std::string::npos);
  for (int64_t a : {0, 1, 2})
    EXPECT_EQ(cudaFor(a).find("load_vec<"), std::string::npos) << "alignment " << a;
}

TEST(Registration, AConfigThatDoesNotFitIsATypedRejection) {
  // The tuner tells a config that does not fit (skipped) from a compiler
  // failure by the exception's type, not by its message.
  const KernelSource *k = lookup_kernel(&add);
  ASSERT_NE(k, nullptr);
  CompileOptions target;
  target.arch = "sm_90a";
  std::vector<ArgSpec> specs = {ArgSpec::tensor("x", f32, {4096, 4096}, {}, 16),
                                ArgSpec::tensor("y", f32, {4096, 4096}, {}, 16)};
  auto lower = [&](const std::string &config) {
    return lowerToCuda(k->ir, k->name, specs, config, target);
  };
  // Too many registers a thread (emission), a block-size list of the wrong
  // length (kite-apply-config).
  EXPECT_THROW(lower(R"({"block_sizes":[256,256],"num_warps":1})"), ConfigRejected);
  EXPECT_THROW(lower(R"({"block_sizes":[8,8,8]})"), ConfigRejected);
  // A config that does not parse is an error, not a rejection.
  try {
    lower(R"({"block_sizes":"x"})");
    ADD_FAILURE() << "a malformed config compiled";
  } catch (const ConfigRejected &) {
    ADD_FAILURE() << "a malformed config was taken for a rejection";
  } catch (const Error &) {
  }
  EXPECT_NO_THROW(lower(R"({"block_sizes":[8,256],"num_warps":4})"));
}

TEST(Registration, TheDefaultFallsBackWhereEmissionTurnsItsProducerDown) {
  // On sm_90a attention's default gives its key loop a producer warpgroup
  // (k and v by TMA). A head dim of 96 is no whole 128-byte panel, which
  // emission turns down: a launch without a config then lowers under the
  // plain default, while the speculative config given explicitly is still
  // a rejection.
  const KernelSource *k = lookup_kernel(&attention);
  ASSERT_NE(k, nullptr);
  CompileOptions target;
  target.arch = "sm_90a";
  std::string withProducer = lowerToCuda(k->ir, k->name, attentionSpecs(128), "", target).source;
  EXPECT_NE(withProducer.find("TmaRing<2>"), std::string::npos);
  EXPECT_NE(withProducer.find("setmaxnreg_inc"), std::string::npos);
  EXPECT_TRUE(speculativeDefaultFits(k->ir, k->name, attentionSpecs(128), target));

  std::string plain;
  ASSERT_NO_THROW(plain = lowerToCuda(k->ir, k->name, attentionSpecs(96), "", target).source);
  EXPECT_EQ(plain.find("TmaRing"), std::string::npos);
  EXPECT_FALSE(speculativeDefaultFits(k->ir, k->name, attentionSpecs(96), target));
  const char *speculative =
      R"({"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,)"
      R"("wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true})";
  EXPECT_THROW(lowerToCuda(k->ir, k->name, attentionSpecs(96), speculative, target), ConfigRejected);
  EXPECT_NO_THROW(lowerToCuda(k->ir, k->name, attentionSpecs(128), speculative, target));
}

TEST(Registration, TheRegisterSplitFitsWhatTheProgramHoldsAtLaunch) {
  // A producer warpgroup gives registers back (setmaxnreg.dec) and the
  // computing warpgroups take them (setmaxnreg.inc), which blocks until the
  // program has them: the split must fit in what its threads hold at
  // launch, __launch_bounds__' cap (65536 over the programs' threads, in
  // multiples of 8). 3 programs of 256 threads hold 80 each; asking for
  // 128 hung every launch.
  const KernelSource *k = lookup_kernel(&attention);
  ASSERT_NE(k, nullptr);
  CompileOptions target;
  target.arch = "sm_90a";
  std::vector<ArgSpec> specs = attentionSpecs(64);
  auto number = [](const std::string &src, const std::string &key) -> int64_t {
    size_t at = src.find(key);
    return at == std::string::npos ? -1 : std::stoll(src.substr(at + key.size()));
  };
  int splits = 0;
  for (int warps : {8, 12})
    for (int programs : {1, 2, 3}) {
      std::string rows = std::to_string((warps / 4 - 1) * 64); // a computing warpgroup's 64
      std::string config = R"({"block_sizes":[1,)" + rows + R"(,64],"num_warps":)" +
                           std::to_string(warps) +
                           R"(,"num_stages":2,"tensor_cores":true,"wgmma":true,)"
                           R"("warp_specialize":true,"overlap_products":true,)"
                           R"("min_programs_per_sm":)" +
                           std::to_string(programs) + "}";
      SCOPED_TRACE(config);
      std::string src = lowerToCuda(k->ir, k->name, specs, config, target).source;
      int64_t threads = warps * 32;
      ASSERT_NE(src.find("__launch_bounds__(" + std::to_string(threads)), std::string::npos);
      int64_t held = std::min<int64_t>(65536 / (programs * threads) / 8 * 8, 255);
      int64_t dec = number(src, "setmaxnreg_dec<"), inc = number(src, "setmaxnreg_inc<");
      ASSERT_EQ(dec < 0, inc < 0) << "setmaxnreg on one side only";
      if (inc < 0)
        continue;
      ++splits;
      EXPECT_LT(dec, held);
      EXPECT_GT(inc, held);
      EXPECT_LE(dec * 128 + inc * (threads - 128), held * threads);
    }
  EXPECT_GE(splits, 4);
}

TEST(Registration, TheSpacesStartsCompileWhereTheyFit) {
  // The config space of a producer-served key loop starts the search beside
  // configs several keys from the default: its tiles halved at three
  // programs an SM, and grouped programs taken as they finish. Both compile
  // at head dim 64. At 128 ptxas cannot fit a product's sums in the 80
  // registers a thread three programs leave: a rejection (the tuner skips
  // it), not a compile failure.
  const KernelSource *k = lookup_kernel(&attention);
  ASSERT_NE(k, nullptr);
  CompileOptions target;
  target.arch = "sm_90a";
  nlohmann::json space = nlohmann::json::parse(configSpaceOf(*k, attentionSpecs(64), "sm_90a"));
  ASSERT_TRUE(space.contains("starts"));
  ASSERT_EQ(space["starts"].size(), 2u);
  EXPECT_EQ(space["starts"][0]["min_programs_per_sm"], 3);
  EXPECT_EQ(space["starts"][1]["pid_type"], "persistent_dynamic");
  for (const nlohmann::json &start : space["starts"]) {
    Options options;
    options.config = start.dump();
    SCOPED_TRACE(options.config);
    EXPECT_NO_THROW(compileToPlan(*k, attentionSpecs(64), options, target));
  }
  Options small;
  small.config = space["starts"][0].dump();
  EXPECT_THROW(compileToPlan(*k, attentionSpecs(128), small, target), ConfigRejected);
  // Kernels without such a loop have none.
  const KernelSource *a = lookup_kernel(&add);
  ASSERT_NE(a, nullptr);
  std::vector<ArgSpec> xy = {ArgSpec::tensor("x", f32, {1024, 1024}),
                             ArgSpec::tensor("y", f32, {1024, 1024})};
  EXPECT_FALSE(nlohmann::json::parse(configSpaceOf(*a, xy, "sm_90a")).contains("starts"));
}

TEST(Registration, PersistentPlanKeepsItsProgramIds) {
  // A persistent kernel loops over its program ids by gridDim.x; its plan
  // holds how many there are, and the launch runs as many programs as the
  // SMs hold at once (the driver's occupancy), at most that many.
  const KernelSource *k = lookup_kernel(&add);
  ASSERT_NE(k, nullptr);
  CompileOptions target;
  target.arch = "sm_90a";
  Options options;
  options.config = R"({"block_sizes":[8,32],"num_warps":4,"pid_type":"persistent_interleaved"})";
  std::vector<ArgSpec> big = {ArgSpec::tensor("x", f32, {1024, 1024}),
                              ArgSpec::tensor("y", f32, {1024, 1024})};
  KernelPlan plan = compileToPlan(*k, big, options, target);
  EXPECT_TRUE(plan.persistent);
  EXPECT_EQ(plan.block[0], 128u);
  EXPECT_EQ(plan.grid, (std::array<uint32_t, 3>{128 * 32, 1, 1}));
  options.config = R"({"block_sizes":[8,32],"num_warps":4})";
  KernelPlan flat = compileToPlan(*k, big, options, target);
  EXPECT_FALSE(flat.persistent);
  EXPECT_EQ(flat.grid, plan.grid);
}

TEST(Registration, ShapeClassesServeExactlyTheLaunchesTheyAreMadeFor) {
  // With dynamic shapes, the front door and the cache serve a launch from a
  // held plan whose every size is in its class (ArgSpec::size_in_class):
  // that must be exactly the launches planSpecs makes the same plan specs
  // for. Over sizes that cross buckets and divisor classes, for a product
  // (M any size of its bucket, N bucketed with its class), a held row
  // (softmax) and rows and columns of an elementwise kernel.
  struct Case {
    const void *fn;
    std::function<std::vector<ArgSpec>(int64_t)> specs;
  };
  auto t = [](const char *name, std::vector<int64_t> sizes) {
    return ArgSpec::tensor(name, bf16, std::move(sizes), {}, 16);
  };
  std::vector<Case> cases = {
      {reinterpret_cast<const void *>(&::matmul),
       [&](int64_t s) { return std::vector{t("x", {s, 256}), t("y", {256, 4096})}; }},
      {reinterpret_cast<const void *>(&::matmul),
       [&](int64_t s) { return std::vector{t("x", {64, 256}), t("y", {256, s})}; }},
      {reinterpret_cast<const void *>(&::softmax),
       [&](int64_t s) { return std::vector{t("x", {4, s})}; }},
      {reinterpret_cast<const void *>(&add),
       [&](int64_t s) { return std::vector{t("x", {s, s}), t("y", {s, s})}; }},
  };
  const std::vector<int64_t> sizes = {2, 3, 8, 16, 24, 100, 128, 129, 136, 1000, 1024, 4100};
  Options dynamic;
  dynamic.static_shapes = false;
  EXPECT_EQ(planSpecs(*lookup_kernel(&::matmul), {t("x", {100, 256}), t("y", {256, 4096})},
                      dynamic)[0]
                .str(),
            "x=bf16[?*<=128,256]:align16:idx32");
  for (const Case &c : cases) {
    const KernelSource *k = lookup_kernel(c.fn);
    ASSERT_NE(k, nullptr);
    std::vector<std::vector<ArgSpec>> plans;
    for (int64_t s : sizes)
      plans.push_back(planSpecs(*k, c.specs(s), dynamic));
    // (They are class specs: a size of 100 is taken at launch.)
    EXPECT_NE(plans[5][0].str() + plans[5].back().str(), c.specs(100)[0].str() + c.specs(100).back().str());
    for (size_t i = 0; i < sizes.size(); ++i) {
      for (size_t j = 0; j < sizes.size(); ++j) {
        std::vector<ArgSpec> launch = c.specs(sizes[j]);
        bool served = true;
        for (size_t a = 0; a < launch.size(); ++a)
          for (size_t d = 0; d < launch[a].sizes.size(); ++d)
            served &= plans[i][a].size_in_class(d, launch[a].sizes[d]);
        EXPECT_EQ(served, plans[i] == plans[j])
            << k->name << ": the plan for size " << sizes[i] << " ("
            << plans[i][0].str() << " " << plans[i].back().str() << ") and size " << sizes[j]
            << " (" << plans[j][0].str() << " " << plans[j].back().str() << ")";
      }
    }
  }
}

TEST(Launch, CpuTensorIsRejectedByNameBeforeCompiling) {
  CountingCompiler compiler;
  Tensor x = zeros({4, 8}, f32);
  Tensor y = zeros({4, 8}, f32);
  std::string message = errorOf([&] { launch(add, x, y); });
  EXPECT_NE(message.find("kite::launch(add)"), std::string::npos) << message;
  EXPECT_NE(message.find("argument 'x' must be a CUDA tensor, got a CPU tensor [4, 8] f32"),
            std::string::npos)
      << message;
  EXPECT_EQ(compiler.calls, 0);

  // Scalars are converted to the parameter types; the tensor is still named.
  message = errorOf([&] { launch(scalars, x, 1, 2, 3.0, 4.0f, true); });
  EXPECT_NE(message.find("kite::launch(scalars): argument 'x' must be a CUDA tensor"),
            std::string::npos)
      << message;

  // With Options, and for a kernel with two results.
  Options options;
  options.tuning = Options::Tuning::never;
  message = errorOf([&] { launch(pair, options, x, y); });
  EXPECT_NE(message.find("kite::launch(pair): argument 'x' must be a CUDA tensor"),
            std::string::npos)
      << message;

  // An undefined tensor.
  message = errorOf([&] { launch(add, x, Tensor()); });
  EXPECT_NE(message.find("argument 'x' must be a CUDA tensor"), std::string::npos) << message;
  EXPECT_EQ(compiler.calls, 0);
}

TEST(Launch, ResultTypesFollowTheKernelSignature) {
  Tensor x;
  static_assert(std::is_same_v<decltype(launch(add, x, x)), Tensor>);
  static_assert(std::is_same_v<decltype(launch(scalars, x, int64_t(1), 2, 3.0, 4.0f, false)), void>);
  static_assert(std::is_same_v<decltype(launch(pair, Options{}, x, x)), std::tuple<Tensor, Tensor>>);
  SUCCEED();
}

TEST(Launch, UncapturedKernelSaysHowToCaptureIt) {
  Tensor x = zeros({4}, f32);
  std::string message = errorOf([&] { launch(not_captured, x); });
  EXPECT_NE(message.find("not captured"), std::string::npos) << message;
  EXPECT_NE(message.find("kite_add_kernels"), std::string::npos) << message;
}

TEST(Launch, ArgumentNamesComeFromTheIRWhenNotGiven) {
  // A hand-registered kernel without argNames: launch reads the kite.name
  // attributes of the IR.
  static constexpr std::string_view ir =
      "module {\n  func.func @by_hand(%arg0: !kite.tensor<*x?> {kite.name = \"first\"} "
      "loc(\"f.kite.cpp\":1:2), %arg1: !kite.tensor<*x?> {kite.name = \"second\"}) "
      "attributes {kite.kernel} {\n    return\n  }\n}\n";
  static void (*fn)(Tensor, Tensor) = [](Tensor, Tensor) {};
  register_kernel(KernelSource{reinterpret_cast<const void *>(fn), "by_hand", ir, "0", "f"});
  CountingCompiler compiler;
  Tensor x = zeros({2}, f32);
  std::string message = errorOf([&] { launch(fn, x, x); });
  EXPECT_NE(message.find("kite::launch(by_hand): argument 'first' must be a CUDA tensor"),
            std::string::npos)
      << message;
  EXPECT_EQ(compiler.calls, 0);
}
