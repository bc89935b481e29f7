//===- runtime_gpu_test.cpp - The runtime on a GPU ------------------------===//
//
// This file tests the runtime end to end on a GPU: copies between host and
// device, a hand-written CUDA kernel through NVRTC, a plan and run_plan
// (cubin and PTX, parameters of every kind, results that are inputs or
// outputs, a round trip through the plan's byte form), DLPack exchange of
// device tensors, the load-time checks, and the host cost of a launch next
// to a raw cuLaunchKernel. Without a GPU every test skips and says why.
//
//===----------------------------------------------------------------------===//

#include "runtime/Driver.h"
#include "runtime/Launch.h"
#include "runtime/Nvrtc.h"

#include <kite/runtime.hpp>

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

using namespace kite;
using namespace kite::runtime;

namespace {

class RuntimeGpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (!gpu_available())
      GTEST_SKIP() << "no CUDA GPU (" << gpu_unavailable_reason()
                   << "); GPU tests run on a GPU host";
  }
  static std::string arch() { return device_properties(0).arch(); }
};

/// The bytes of a CPU tensor, in row-major logical order.
std::vector<uint8_t> bytesOf(const Tensor &t) {
  Tensor c = t.contiguous();
  auto *p = static_cast<const uint8_t *>(c.data_ptr());
  return std::vector<uint8_t>(p, p + c.numel() * element_size(c.dtype()));
}

TEST_F(RuntimeGpu, DeviceProperties) {
  const DeviceProperties &p = device_properties(0);
  std::printf("cuda:0: %s, sm_%d%d (%s), %d SMs, %d KB shared/block opt-in, driver %d\n",
              p.name.c_str(), p.computeMajor, p.computeMinor, p.arch().c_str(), p.smCount,
              p.maxSharedMemoryPerBlockOptin / 1024, p.driverVersion);
  EXPECT_GT(p.smCount, 0);
  EXPECT_GT(p.maxSharedMemoryPerBlockOptin, 0);
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(device_count(), 1);
}

/// Fresh random values of any dtype.
Tensor randomOf(std::vector<int64_t> sizes, DType dtype, uint64_t seed) {
  if (dtype == boolean)
    return kite::randn(sizes, f32, seed) > 0.0;
  if (is_floating(dtype))
    return kite::randn(sizes, dtype, seed);
  return kite::randint(-100, 100, sizes, dtype, seed);
}

TEST_F(RuntimeGpu, CopyRoundTrip) {
  for (DType dtype : {f32, bf16, f16, f64, i8, i32, i64, boolean}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor host = randomOf({37, 53}, dtype, 1);
    Tensor dev = cuda::to_device(host);
    EXPECT_EQ(dev.device(), Device::cuda(0));
    EXPECT_TRUE(dev.is_contiguous());
    Tensor back = cuda::to_host(dev);
    EXPECT_TRUE(back.device().is_cpu());
    EXPECT_EQ(back.sizes(), host.sizes());
    EXPECT_EQ(bytesOf(back), bytesOf(host));
    // A strided host tensor goes over contiguous; a strided device view
    // comes back with its logical values.
    Tensor t = host.transpose(0, 1);
    EXPECT_EQ(bytesOf(cuda::to_host(cuda::to_device(t))), bytesOf(t));
    EXPECT_EQ(bytesOf(cuda::to_host(dev.transpose(0, 1))), bytesOf(t));
    EXPECT_EQ(bytesOf(cuda::to_host(cuda::clone(dev))), bytesOf(host));
  }
  Tensor z = cuda::zeros({1000, 3}, f32);
  for (double v : cuda::to_host(z).to_doubles())
    ASSERT_EQ(v, 0.0);
  Tensor e = cuda::empty({0, 4}, bf16);
  EXPECT_EQ(cuda::to_host(e).numel(), 0);
}

TEST_F(RuntimeGpu, StreamOrderedMemoryIsFreed) {
  // 64 x 4 GiB: only fits if each allocation is freed when dropped.
  const DriverApi &api = cu();
  for (int i = 0; i < 64; ++i) {
    Tensor big = cuda::empty({int64_t(1) << 30}, f32);
    ASSERT_NE(big.data_ptr(), nullptr);
  }
  cuda::synchronize();
  // On a user stream too.
  ContextScope scope(DeviceContext::get(0));
  CUstream stream = nullptr;
  ASSERT_EQ(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  for (int i = 0; i < 64; ++i)
    Tensor big = cuda::zeros({int64_t(1) << 30}, f32, Stream{stream});
  cuda::synchronize(Stream{stream});
  ASSERT_EQ(api.cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST_F(RuntimeGpu, TensorsMayOutliveMain) {
  // Freed during static destruction, after main returns: the driver and the
  // context stay loaded for that (a crash here fails the whole binary).
  static Tensor kept = cuda::zeros({1 << 20}, f32);
  static Tensor keptCopy = kept;
  EXPECT_EQ(kept.data_ptr(), keptCopy.data_ptr());
}

const char *kKernels = R"(
extern "C" __global__ void vector_add(const float *x, const float *y, float *out, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}
struct Affine { float scale; float shift; };
// out = x * a.scale + a.shift (a folded constant), n from the tensor's size;
// also adds 1 to x in place, to return an argument.
extern "C" __global__ void affine(float *x, float *out, long long n, Affine a, int bump) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { out[i] = x[i] * a.scale + a.shift; x[i] += bump; }
}
extern "C" __global__ void empty_kernel() {}
)";

KernelPlan vectorAddPlan(int64_t n, const NvrtcOutput &code, KernelPlan::Binary kind,
                         const std::string &arch) {
  KernelPlan p;
  p.key = fmt::format("test:vector_add:{}:{}", n, int(kind));
  p.name = "vector_add";
  p.kernelName = "vector_add";
  p.arch = arch;
  p.binaryKind = kind;
  p.binary = code.binary;
  p.block = {256, 1, 1};
  p.grid = {uint32_t((n + 255) / 256), 1, 1};
  p.args = {ArgSpec::tensor("x", f32, {n}, {}, 16), ArgSpec::tensor("y", f32, {n}, {}, 16),
            ArgSpec::scalar("n", i64)};
  p.outputs = {OutputSpec{"out", f32, {n}, false}};
  p.params = {{ParamSpec::Kind::argData, 0, 0, {}},
              {ParamSpec::Kind::argData, 1, 0, {}},
              {ParamSpec::Kind::outputData, 0, 0, {}},
              {ParamSpec::Kind::argScalar, 2, 0, {}}};
  p.results = {{ResultSpec::Kind::output, 0}};
  return p;
}

void expectVectorAdd(const Tensor &x, const Tensor &y, const Tensor &out) {
  std::vector<double> a = x.to_doubles(), b = y.to_doubles(), c = cuda::to_host(out).to_doubles();
  ASSERT_EQ(c.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(c[i], double(float(a[i]) + float(b[i]))) << "at " << i;
}

TEST_F(RuntimeGpu, VectorAddThroughNvrtcAndAPlan) {
  const int64_t n = 100003; // not a multiple of the block size
  NvrtcOutput cubin = compileToCubin(kKernels, "runtime_gpu_kernels", arch());
  NvrtcOutput ptx = compileToPtx(kKernels, "runtime_gpu_kernels", arch());
  Tensor x = kite::randn({n}, f32, 1), y = kite::randn({n}, f32, 2);
  Tensor dx = cuda::to_device(x), dy = cuda::to_device(y);

  for (auto kind : {KernelPlan::Binary::cubin, KernelPlan::Binary::ptx}) {
    SCOPED_TRACE(kind == KernelPlan::Binary::cubin ? "cubin" : "ptx");
    bool isCubin = kind == KernelPlan::Binary::cubin;
    KernelPlan plan = vectorAddPlan(n, isCubin ? cubin : ptx, kind,
                                    isCubin ? arch() : "compute_" + arch().substr(3));
    std::vector<Tensor> results = run_plan(plan, {dx, dy, n});
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].sizes(), (std::vector<int64_t>{n}));
    expectVectorAdd(x, y, results[0]);
    // Through the byte form, as from the on-disk cache.
    KernelPlan reloaded = deserialize(serialize(plan));
    reloaded.key += ":reloaded";
    size_t loaded = moduleCacheSize();
    expectVectorAdd(x, y, run_plan(reloaded, {dx, dy, n})[0]);
    EXPECT_EQ(moduleCacheSize(), loaded + 1);
    EXPECT_TRUE(evictPlan(reloaded.key));
    EXPECT_EQ(moduleCacheSize(), loaded);
    expectVectorAdd(x, y, run_plan(reloaded, {dx, dy, n})[0]); // loads it again
  }
}

/// kite_device.cuh's block_reduce at every shape of thread group the
/// emitter produces: the reduced dim at thread stride `Stride`, `Count`
/// threads long, in a block of 1024 (the other thread bits number the
/// groups). Every thread must get its own group's result, for an exact
/// integer sum, a max and an argmax with ties (the lowest index wins).
const char *kBlockReduce = R"(
#include "kite_device.cuh"
using namespace kite_device;
template <int Stride, int Count>
__device__ void reduceOnce(int slot, int *sums, float *maxes, long long *args) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = threadIdx.x, at = slot * 1024 + t;
  sums[at] = block_reduce<SumOp, Stride, Count>(t * 7 + 3, reinterpret_cast<int *>(smem));
  __syncthreads();
  maxes[at] = block_reduce<MaxOp, Stride, Count>(float((t * 37) % 101),
                                                 reinterpret_cast<float *>(smem));
  __syncthreads();
  ArgPair<float> p;
  p.value = float((t * 37) % 101 % 13);
  p.index = t;
  args[at] = block_reduce<ArgOp<true>, Stride, Count>(p, reinterpret_cast<ArgPair<float> *>(smem)).index;
  __syncthreads();
}
extern "C" __global__ void reduce_shapes(int *sums, float *maxes, long long *args) {
  reduceOnce<1, 1024>(0, sums, maxes, args);
  reduceOnce<1, 256>(1, sums, maxes, args);
  reduceOnce<1, 64>(2, sums, maxes, args);
  reduceOnce<1, 32>(3, sums, maxes, args);
  reduceOnce<2, 512>(4, sums, maxes, args);
  reduceOnce<4, 64>(5, sums, maxes, args);
  reduceOnce<8, 128>(6, sums, maxes, args);
  reduceOnce<16, 16>(7, sums, maxes, args);
  reduceOnce<32, 32>(8, sums, maxes, args);
  reduceOnce<64, 16>(9, sums, maxes, args);
  reduceOnce<2, 64>(10, sums, maxes, args);
}
)";

TEST_F(RuntimeGpu, BlockReduceGivesEveryThreadItsGroupsResult) {
  const std::vector<std::pair<int, int>> shapes = {{1, 1024}, {1, 256}, {1, 64}, {1, 32},
                                                   {2, 512},  {4, 64},  {8, 128}, {16, 16},
                                                   {32, 32},  {64, 16}, {2, 64}};
  const int64_t n = 1024 * (int64_t)shapes.size();
  NvrtcOutput code = compileToCubin(kBlockReduce, "block_reduce_test", arch());
  DeviceContext &dc = DeviceContext::get(0);
  ContextScope scope(dc);
  Module module(code.binary.data(), "the block_reduce test kernel");
  CUfunction f = module.function("reduce_shapes");
  Tensor sums = cuda::empty({n}, i32), maxes = cuda::empty({n}, f32), args = cuda::empty({n}, i64);
  void *ps = sums.data_ptr(), *pm = maxes.data_ptr(), *pa = args.data_ptr();
  void *params[] = {&ps, &pm, &pa};
  const int smemBytes = 1024 * 16;
  check(cu().cuLaunchKernel(f, 1, 1, 1, 1024, 1, 1, smemBytes, nullptr, params, nullptr),
        "launching reduce_shapes");
  std::vector<double> gotSum = cuda::to_host(sums).to_doubles(),
                      gotMax = cuda::to_host(maxes).to_doubles(),
                      gotArg = cuda::to_host(args).to_doubles();
  for (size_t s = 0; s < shapes.size(); ++s) {
    auto [stride, count] = shapes[s];
    SCOPED_TRACE(fmt::format("Stride {}, Count {}", stride, count));
    int bad = 0;
    for (int t = 0; t < 1024 && bad < 5; ++t) {
      int low = t % stride, high = t / (stride * count) * (stride * count);
      int64_t sum = 0;
      float max = -1;
      int arg = -1;
      float argValue = -1;
      for (int j = 0; j < count; ++j) {
        int u = high + j * stride + low;
        sum += u * 7 + 3;
        max = std::max(max, float((u * 37) % 101));
        float v = float((u * 37) % 101 % 13);
        if (v > argValue || (v == argValue && u < arg))
          argValue = v, arg = u;
      }
      size_t at = s * 1024 + t;
      bool ok = gotSum[at] == (double)sum && gotMax[at] == (double)max && gotArg[at] == arg;
      EXPECT_TRUE(ok) << "thread " << t << ": sum " << gotSum[at] << " (want " << sum << "), max "
                      << gotMax[at] << " (want " << max << "), argmax " << gotArg[at]
                      << " (want " << arg << ")";
      bad += !ok;
    }
  }
}

TEST_F(RuntimeGpu, LaunchFromThreadsWithoutAContext) {
  const int64_t n = 5000;
  NvrtcOutput cubin = compileToCubin(kKernels, "runtime_gpu_kernels", arch());
  KernelPlan plan = vectorAddPlan(n, cubin, KernelPlan::Binary::cubin, arch());
  Tensor x = kite::randn({n}, f32, 9), y = kite::randn({n}, f32, 10);
  Tensor dx = cuda::to_device(x), dy = cuda::to_device(y);
  cuda::synchronize();
  std::vector<Tensor> outs(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k)
        outs[i] = run_plan(plan, {dx, dy, n})[0];
      cuda::synchronize();
    });
  for (std::thread &t : threads)
    t.join();
  for (const Tensor &out : outs)
    expectVectorAdd(x, y, out);
}

/// A persistent plan's launch: the kernel marks every program id it visits
/// with the grid it ran in.
const char *kPersistentProbe = R"(
extern "C" __global__ void persistent_probe(int* out, long long ids) {
  for (long long pid = blockIdx.x; pid < ids; pid += gridDim.x)
    if (threadIdx.x == 0) out[pid] = gridDim.x;
}
)";

TEST_F(RuntimeGpu, PersistentPlanFillsEverySMAndVisitsEveryProgramId) {
  NvrtcOutput cubin = compileToCubin(kPersistentProbe, "persistent_probe", arch());
  const int sms = device_properties(0).smCount;
  for (int64_t ids : {int64_t(100000), int64_t(5)}) {
    SCOPED_TRACE(ids);
    KernelPlan p;
    p.key = fmt::format("test:persistent_probe:{}", ids);
    p.name = "persistent_probe";
    p.kernelName = "persistent_probe";
    p.arch = arch();
    p.binary = cubin.binary;
    p.block = {128, 1, 1};
    p.grid = {uint32_t(ids), 1, 1};
    p.persistent = true;
    p.args = {ArgSpec::scalar("ids", i64)};
    p.outputs = {OutputSpec{"out", i32, {ids}, true}};
    p.params = {{ParamSpec::Kind::outputData, 0, 0, {}}, {ParamSpec::Kind::argScalar, 0, 0, {}}};
    p.results = {{ResultSpec::Kind::output, 0}};
    std::vector<double> out = cuda::to_host(run_plan(p, {ids})[0]).to_doubles();
    double grid = out[0];
    for (int64_t i = 0; i < ids; ++i)
      ASSERT_EQ(out[i], grid) << "program id " << i;
    if (ids == 5) {
      EXPECT_EQ(grid, 5) << "never more programs than program ids";
    } else {
      // A 128-thread program with a few registers: 16 fit an SM (2048
      // threads), not one per SM.
      EXPECT_EQ(grid, 16.0 * sms);
    }
  }
}

TEST_F(RuntimeGpu, ParametersOfEveryKind) {
  const int64_t n = 4099;
  NvrtcOutput cubin = compileToCubin(kKernels, "runtime_gpu_kernels", arch());
  KernelPlan p;
  p.key = "test:affine";
  p.name = "affine";
  p.kernelName = "affine";
  p.arch = arch();
  p.binary = cubin.binary;
  p.block = {128, 1, 1};
  p.grid = {uint32_t((n + 127) / 128), 1, 1};
  p.args = {ArgSpec::tensor("x", f32, {n}), ArgSpec::scalar("bump", i32)};
  p.outputs = {OutputSpec{"out", f32, {n}, true}};
  ParamSpec affine{ParamSpec::Kind::constant, 0, 0, {}};
  float values[2] = {3.0f, -1.5f};
  affine.bytes.resize(sizeof(values));
  std::memcpy(affine.bytes.data(), values, sizeof(values));
  p.params = {{ParamSpec::Kind::argData, 0, 0, {}},
              {ParamSpec::Kind::outputData, 0, 0, {}},
              {ParamSpec::Kind::argSize, 0, 0, {}},
              affine,
              {ParamSpec::Kind::argScalar, 1, 0, {}}};
  p.results = {{ResultSpec::Kind::output, 0}, {ResultSpec::Kind::arg, 0}};

  Tensor x = kite::randn({n}, f32, 3);
  Tensor dx = cuda::to_device(x);
  Tensor results[2];
  KernelArg args[] = {dx, 2};
  run_plan(p, args, results);
  EXPECT_EQ(results[1].data_ptr(), dx.data_ptr()) << "the argument itself is returned";
  std::vector<double> in = x.to_doubles(), out = cuda::to_host(results[0]).to_doubles(),
                      bumped = cuda::to_host(results[1]).to_doubles();
  for (int64_t i = 0; i < n; ++i) {
    // NVRTC contracts x * a + b into an FMA (--fmad=true, the default).
    ASSERT_EQ(out[i], double(std::fma(float(in[i]), 3.0f, -1.5f))) << i;
    ASSERT_EQ(bumped[i], double(float(in[i]) + 2.0f)) << i;
  }
}

TEST_F(RuntimeGpu, StreamsAndErrorsBeforeLaunch) {
  const int64_t n = 1000;
  NvrtcOutput cubin = compileToCubin(kKernels, "runtime_gpu_kernels", arch());
  KernelPlan plan = vectorAddPlan(n, cubin, KernelPlan::Binary::cubin, arch());
  Tensor x = kite::randn({n}, f32, 4), y = kite::randn({n}, f32, 5);
  Tensor dx = cuda::to_device(x), dy = cuda::to_device(y);

  // A CPU tensor: the message, and no launch.
  try {
    run_plan(plan, {x, dy, n});
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), "kite::launch(vector_add): argument 'x' must be a CUDA "
                                     "tensor, got a CPU tensor [1000] f32");
  }

  // On a user stream.
  ContextScope scope(DeviceContext::get(0));
  CUstream stream = nullptr;
  ASSERT_EQ(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  {
    Tensor sx = cuda::to_device(x, Stream{stream}), sy = cuda::to_device(y, Stream{stream});
    Tensor out = run_plan(plan, {sx, sy, n}, Stream{stream})[0];
    // A non-blocking stream is not ordered with the default stream that
    // expectVectorAdd copies on.
    cuda::synchronize(Stream{stream});
    expectVectorAdd(x, y, out);
  }
  cuda::synchronize(Stream{stream});
  ASSERT_EQ(cu().cuStreamDestroy(stream), CUDA_SUCCESS);

  // Load-time checks name the limit.
  KernelPlan wrongArch = plan;
  wrongArch.key += ":sm_80";
  wrongArch.arch = "sm_80";
  try {
    run_plan(wrongArch, {dx, dy, n});
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("the plan's binary is a cubin for sm_80, which cuda:0"),
              std::string::npos)
        << e.what();
  }
  KernelPlan tooManyThreads = plan;
  tooManyThreads.key += ":2048";
  tooManyThreads.block = {2048, 1, 1};
  try {
    run_plan(tooManyThreads, {dx, dy, n});
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("the plan launches 2048 threads per block, but kernel "
                                         "vector_add allows at most 1024"),
              std::string::npos)
        << e.what();
  }
  KernelPlan tooMuchShared = plan;
  tooMuchShared.key += ":smem";
  tooMuchShared.dynamicSharedBytes = 1u << 20;
  try {
    run_plan(tooMuchShared, {dx, dy, n});
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("bytes of shared memory per block"), std::string::npos)
        << e.what();
  }
  // Opting in to more than 48 KB of dynamic shared memory works.
  KernelPlan bigShared = plan;
  bigShared.key += ":smem100k";
  bigShared.dynamicSharedBytes = 100 * 1024;
  expectVectorAdd(x, y, run_plan(bigShared, {dx, dy, n})[0]);
}

TEST_F(RuntimeGpu, DLPackDeviceTensors) {
  Tensor host = kite::randn({16, 24}, bf16, 6);
  Tensor dev = cuda::to_device(host);
  DLManagedTensor *dl = to_dlpack(dev.transpose(0, 1));
  EXPECT_EQ(dl->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(dl->dl_tensor.device.device_id, 0);
  EXPECT_EQ(static_cast<char *>(dl->dl_tensor.data) + dl->dl_tensor.byte_offset, dev.data_ptr());
  // The driver agrees the pointer is device memory on cuda:0.
  int ordinal = -1;
  ASSERT_EQ(cu().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                       reinterpret_cast<CUdeviceptr>(dl->dl_tensor.data)),
            CUDA_SUCCESS);
  EXPECT_EQ(ordinal, 0);
  dev = Tensor(); // the export keeps the memory alive
  Tensor back = from_dlpack(dl);
  EXPECT_EQ(back.device(), Device::cuda(0));
  EXPECT_EQ(back.strides(), (std::vector<int64_t>{1, 24}));
  EXPECT_EQ(bytesOf(cuda::to_host(back)), bytesOf(host.transpose(0, 1)));
}

//===----------------------------------------------------------------------===//
// The host cost of a launch
//===----------------------------------------------------------------------===//

TEST_F(RuntimeGpu, LaunchOverhead) {
  NvrtcOutput cubin = compileToCubin(kKernels, "runtime_gpu_kernels", arch());
  KernelPlan p;
  p.key = "test:empty_kernel";
  p.name = "empty_kernel";
  p.kernelName = "empty_kernel";
  p.arch = arch();
  p.binary = cubin.binary;
  p.block = {32, 1, 1};
  const int launches = 20000;
  auto usPerLaunch = [&](auto &&launch) {
    for (int i = 0; i < 200; ++i) // warm-up
      launch();
    cuda::synchronize();
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < launches; ++i)
        launch();
      auto t1 = std::chrono::steady_clock::now();
      cuda::synchronize();
      best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / launches);
    }
    return best;
  };

  // kite: run_plan on a plan that is already loaded.
  std::span<Tensor> noResults;
  std::span<const KernelArg> noArgs;
  double kite = usPerLaunch([&] { run_plan(p, noArgs, noResults); });

  // Raw: cuLaunchKernel on the same function.
  ContextScope scope(DeviceContext::get(0));
  Module module(cubin.binary.data(), "empty_kernel");
  CUfunction f = module.function("empty_kernel");
  const DriverApi &api = cu();
  double raw = usPerLaunch([&] {
    check(api.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), "raw launch");
  });

  // A realistic launch: three arguments and an output to allocate.
  const int64_t n = 1024;
  KernelPlan add = vectorAddPlan(n, cubin, KernelPlan::Binary::cubin, arch());
  Tensor dx = cuda::to_device(kite::randn({n}, f32, 7));
  Tensor dy = cuda::to_device(kite::randn({n}, f32, 8));
  Tensor out[1];
  KernelArg args[] = {dx, dy, n};
  double kiteAdd = usPerLaunch([&] { run_plan(add, args, out); });

  std::printf("launch overhead (%d launches, best of 3): raw cuLaunchKernel %.2f us, "
              "kite::run_plan %.2f us (+%.2f us), vector add with an output allocation %.2f us\n",
              launches, raw, kite, kite - raw, kiteAdd);
  RecordProperty("raw_us", std::to_string(raw));
  RecordProperty("kite_us", std::to_string(kite));
  RecordProperty("kite_add_us", std::to_string(kiteAdd));
  EXPECT_LT(kite - raw, 2.0) << "run_plan should cost little over cuLaunchKernel";
}

} // namespace
