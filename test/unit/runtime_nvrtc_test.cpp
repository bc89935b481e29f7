//===- runtime_nvrtc_test.cpp - NVRTC without a GPU -----------------------===//
//
// This file tests compiling CUDA C++ with the dlopen'd NVRTC (which needs no
// GPU): cubin and PTX for sm_90a, the embedded device library and CUDA's
// fp16/bf16 headers as includes, and the report of a failed compile (the log
// and the saved source).
//
//===----------------------------------------------------------------------===//

#include "runtime/EmbeddedHeaders.h"
#include "runtime/Nvrtc.h"

#include <kite/kite.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kite;
using namespace kite::runtime;
namespace fs = std::filesystem;

namespace {

const char *kVectorAdd = R"(
#include "kite_device.cuh"
extern "C" __global__ void vector_add(const float *x, const float *y, float *out, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}
)";

class RuntimeNvrtc : public ::testing::Test {
protected:
  void SetUp() override {
    if (!nvrtcAvailable())
      GTEST_SKIP() << "NVRTC is not available: " << nvrtcUnavailableReason();
  }
};

TEST_F(RuntimeNvrtc, Version) {
  auto [major, minor] = nvrtcVersion();
  EXPECT_GE(major, 12);
  EXPECT_GE(minor, 0);
}

TEST_F(RuntimeNvrtc, CubinForSm90a) {
  NvrtcOutput out = compileToCubin(kVectorAdd, "vector_add", "sm_90a");
  ASSERT_GE(out.binary.size(), 4u);
  EXPECT_EQ(out.binary[0], 0x7f);
  EXPECT_EQ(out.binary[1], 'E');
  EXPECT_EQ(out.binary[2], 'L');
  EXPECT_EQ(out.binary[3], 'F');
  // The default flags are there, in order.
  ASSERT_GE(out.options.size(), 4u);
  EXPECT_EQ(out.options[0], "-std=c++17");
  EXPECT_EQ(out.options[1], "--gpu-architecture=sm_90a");
  EXPECT_EQ(out.options[2], "-default-device");
  EXPECT_EQ(out.options[3], "-lineinfo");
}

TEST_F(RuntimeNvrtc, PtxForSm90a) {
  NvrtcOutput out = compileToPtx(kVectorAdd, "vector_add", "sm_90a");
  ASSERT_FALSE(out.binary.empty());
  EXPECT_EQ(out.binary.back(), 0) << "PTX keeps its NUL for cuModuleLoadData";
  std::string ptx(reinterpret_cast<const char *>(out.binary.data()));
  EXPECT_NE(ptx.find(".target sm_90a"), std::string::npos) << ptx.substr(0, 400);
  EXPECT_NE(ptx.find(".entry vector_add"), std::string::npos);
  EXPECT_EQ(out.options[1], "--gpu-architecture=compute_90a");
}

TEST_F(RuntimeNvrtc, EmbeddedDeviceLibrary) {
  auto headers = deviceHeaders();
  ASSERT_FALSE(headers.empty());
  bool found = false;
  for (const EmbeddedFile &f : headers)
    if (std::string(f.name) == "kite_device.cuh") {
      found = true;
      EXPECT_NE(std::string(f.text).find("namespace kite_device"), std::string::npos);
    }
  EXPECT_TRUE(found);
  // kVectorAdd includes it; a use of its contents compiles too.
  EXPECT_NO_THROW(compileToCubin(std::string(kVectorAdd) +
                                     "static_assert(kite_device::kVersion >= 0, \"\");\n",
                                 "uses_device_library"));
}

TEST_F(RuntimeNvrtc, CudaHalfHeaders) {
  if (cudaIncludeDirs().empty())
    GTEST_SKIP() << "no CUDA include directory found";
  const char *source = R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void halves(const __nv_bfloat16 *x, __half *y) {
  y[threadIdx.x] = __float2half(__bfloat162float(x[threadIdx.x]) * 2.0f);
}
)";
  NvrtcOutput out = compileToCubin(source, "halves");
  EXPECT_FALSE(out.binary.empty());
}

TEST_F(RuntimeNvrtc, ExtraOptionsAndHeaders) {
  NvrtcOptions options;
  options.extra.push_back("-DKITE_TEST_VALUE=3");
  options.headers.push_back({"extra.cuh", "#define KITE_EXTRA 4\n"});
  const char *source = R"(
#include "extra.cuh"
static_assert(KITE_TEST_VALUE + KITE_EXTRA == 7, "options and headers reach NVRTC");
extern "C" __global__ void k() {}
)";
  EXPECT_NO_THROW(compileToCubin(source, "extra", "sm_90a", options));
}

TEST_F(RuntimeNvrtc, FailureReportsLogAndSavedSource) {
  fs::path dir = fs::temp_directory_path() / ("kite-nvrtc-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ::setenv("KITE_CACHE_DIR", dir.c_str(), 1);
  const char *bad =
      "extern \"C\" __global__ void broken(float *x) {\n  x[0] = undefined_name;\n}\n";
  try {
    compileToCubin(bad, "my/broken kernel", "sm_90a");
    FAIL() << "a bad source compiled";
  } catch (const Error &e) {
    std::string m = e.what();
    fs::path saved = dir / "failed" / "my_broken_kernel.cu";
    EXPECT_EQ(m.rfind("NVRTC could not compile my/broken kernel for sm_90a (", 0), 0u) << m;
    EXPECT_NE(m.find("undefined_name"), std::string::npos) << "the log is in the message: " << m;
    EXPECT_NE(m.find("my/broken kernel.cu(2): error"), std::string::npos) << "located: " << m;
    EXPECT_TRUE(m.ends_with("the source is saved in " + saved.string())) << m;
    ASSERT_TRUE(fs::exists(saved));
    std::ifstream in(saved);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str().rfind(bad, 0), 0u) << "the saved file starts with the source";
    EXPECT_NE(text.str().find("// kite: NVRTC options: -std=c++17 --gpu-architecture=sm_90a"),
              std::string::npos);
  }
  ::unsetenv("KITE_CACHE_DIR");
  fs::remove_all(dir);
}

// The saved source replaces a link planted at its name (it never writes
// through one), and a linked failed/ directory is not used.
TEST_F(RuntimeNvrtc, FailedSourcesAreNotWrittenThroughLinks) {
  fs::path dir = fs::temp_directory_path() / ("kite-nvrtc-links-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "cache" / "failed");
  fs::create_directories(dir / "elsewhere");
  fs::path victim = dir / "elsewhere" / "precious.txt";
  std::ofstream(victim) << "keep me\n";
  fs::create_symlink(victim, dir / "cache" / "failed" / "linked.cu");
  ::setenv("KITE_CACHE_DIR", (dir / "cache").c_str(), 1);
  const char *bad = "extern \"C\" __global__ void broken() { undefined_name; }\n";
  auto victimText = [&] {
    std::ifstream in(victim);
    std::stringstream t;
    t << in.rdbuf();
    return t.str();
  };
  EXPECT_THROW(compileToCubin(bad, "linked", "sm_90a"), Error);
  EXPECT_EQ(victimText(), "keep me\n");
  EXPECT_FALSE(fs::is_symlink(dir / "cache" / "failed" / "linked.cu"));
  EXPECT_TRUE(fs::is_regular_file(dir / "cache" / "failed" / "linked.cu"));
  // A failed/ that is a link to elsewhere: the sources go somewhere else.
  fs::remove_all(dir / "cache" / "failed");
  fs::create_directory_symlink(dir / "elsewhere", dir / "cache" / "failed");
  try {
    compileToCubin(bad, "precious", "sm_90a");
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).find(dir.string()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "elsewhere" / "precious.cu"));
  EXPECT_EQ(victimText(), "keep me\n");
  ::unsetenv("KITE_CACHE_DIR");
  fs::remove_all(dir);
}

TEST_F(RuntimeNvrtc, BadArchitecture) {
  try {
    compileToCubin(kVectorAdd, "vector_add", "hopper");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "NVRTC target 'hopper' for vector_add is not an architecture such as sm_90a");
  }
}

} // namespace
