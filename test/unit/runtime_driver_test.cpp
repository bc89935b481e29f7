//===- runtime_driver_test.cpp - The driver loader without a GPU ----------===//
//
// This file tests what kite does where there is no usable GPU: a missing
// libcuda.so.1, the toolkit's stub library, and the message every GPU
// operation then throws. It passes on GPU hosts too (the checks that need
// "no GPU" skip there).
//
//===----------------------------------------------------------------------===//

#include "runtime/Driver.h"

#include <kite/runtime.hpp>

#include <gtest/gtest.h>

#include <filesystem>

using namespace kite;
using namespace kite::runtime;

namespace {

const char *kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";

TEST(RuntimeDriver, MissingLibraryIsNoGpu) {
  auto d = Driver::load("libkite-no-such-driver.so.1");
  EXPECT_FALSE(d->available());
  EXPECT_NE(d->unavailableReason().find("libkite-no-such-driver.so.1 could not be loaded"),
            std::string::npos)
      << d->unavailableReason();
  EXPECT_NE(d->unavailableReason().find("no NVIDIA driver is installed here"), std::string::npos);
  try {
    d->require();
    FAIL() << "require() did not throw";
  } catch (const Error &e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("no CUDA GPU: libkite-no-such-driver.so.1 could not be loaded (", 0), 0u)
        << m;
    EXPECT_TRUE(m.ends_with("; reference mode and kite compile still work")) << m;
  }
}

TEST(RuntimeDriver, StubLibraryIsNoGpu) {
  if (!std::filesystem::exists(kStub))
    GTEST_SKIP() << "no CUDA stub library at " << kStub;
  auto d = Driver::load(kStub);
  EXPECT_FALSE(d->available());
  EXPECT_EQ(d->unavailableReason(),
            std::string(kStub) + " is the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY "
                                 "from cuInit), not a driver");
  // The error names work without a driver to ask.
  EXPECT_EQ(d->describe(CUDA_ERROR_STUB_LIBRARY).rfind("CUDA_ERROR_STUB_LIBRARY", 0), 0u);
}

TEST(RuntimeDriver, NoGpuMessage) {
  if (gpu_available())
    GTEST_SKIP() << "this machine has a GPU; the no-GPU path is checked on CPU-only machines";
  std::string reason = gpu_unavailable_reason();
  EXPECT_FALSE(reason.empty());
  EXPECT_EQ(device_count(), 0);
  std::string expected = "no CUDA GPU: " + reason + "; reference mode and kite compile still work";
  auto expectNoGpu = [&](auto &&op, const char *what) {
    try {
      op();
      ADD_FAILURE() << what << " did not throw";
    } catch (const Error &e) {
      EXPECT_EQ(std::string(e.what()), expected) << what;
    }
  };
  expectNoGpu([] { cuda::empty({4, 4}, f32); }, "cuda::empty");
  expectNoGpu([] { cuda::to_device(kite::zeros({2}, f32)); }, "cuda::to_device");
  expectNoGpu([] { device_properties(0); }, "device_properties");
  expectNoGpu([] { cuda::synchronize(); }, "cuda::synchronize");
  expectNoGpu([] { cuda::empty_cache(); }, "cuda::empty_cache");
}

TEST(RuntimeDriver, CheckedCallNamesTheErrorAndTheOperation) {
  try {
    check(CUDA_ERROR_OUT_OF_MEMORY, "allocating {} bytes on cuda:{}", 1024, 0);
    FAIL() << "check did not throw";
  } catch (const Error &e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("CUDA error CUDA_ERROR_OUT_OF_MEMORY", 0), 0u) << m;
    EXPECT_TRUE(m.ends_with("while allocating 1024 bytes on cuda:0")) << m;
  }
  EXPECT_NO_THROW(check(CUDA_SUCCESS, "nothing"));
}

TEST(RuntimeDriver, ArchOfDeviceProperties) {
  DeviceProperties p;
  p.computeMajor = 9;
  p.computeMinor = 0;
  EXPECT_EQ(p.arch(), "sm_90a");
  p.computeMajor = 8;
  p.computeMinor = 6;
  EXPECT_EQ(p.arch(), "sm_86");
}

} // namespace

TEST(BlockCache, ReusesBlocksOfOneSizeOnTheirStreamOnly) {
  runtime::BlockCache cache;
  auto s1 = reinterpret_cast<CUstream>(uintptr_t(0x10));
  auto s2 = reinterpret_cast<CUstream>(uintptr_t(0x20));
  EXPECT_EQ(cache.take(s1, 256), 0u);
  EXPECT_TRUE(cache.put(s1, 256, 0x1000));
  EXPECT_EQ(cache.bytes(), 256u);
  EXPECT_EQ(cache.take(s2, 256), 0u) << "another stream";
  EXPECT_EQ(cache.take(s1, 512), 0u) << "another size";
  EXPECT_EQ(cache.take(s1, 256), 0x1000u);
  EXPECT_EQ(cache.take(s1, 256), 0u) << "taken once";
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(BlockCache, KeepsABoundedNumberPerSizeAndDrainsEverything) {
  runtime::BlockCache cache;
  auto s = reinterpret_cast<CUstream>(uintptr_t(0x10));
  for (size_t i = 0; i < runtime::BlockCache::kMaxPerSize; ++i)
    EXPECT_TRUE(cache.put(s, 64, 0x1000 + i));
  EXPECT_FALSE(cache.put(s, 64, 0x2000)) << "the caller frees what is not kept";
  EXPECT_TRUE(cache.put(nullptr, 64, 0x3000));
  EXPECT_EQ(cache.bytes(), 64u * (runtime::BlockCache::kMaxPerSize + 1));
  auto all = cache.drain();
  EXPECT_EQ(all.size(), runtime::BlockCache::kMaxPerSize + 1);
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.take(s, 64), 0u);
}
