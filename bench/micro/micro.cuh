// micro.cuh - what the hand-written microbenchmarks share: a CUDA runtime
// check, the warp sum, a normal-like input, and timing as kite_bench times (back to back, a
// 256 MiB L2 flush before each run, the median). Call initFlush() first.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));                             \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

// A normal-like input value for element i (a sum of four hashed uniforms,
// centred, spread about 1): cheap to make on the device, same on every run.
__device__ __forceinline__ float normalish(size_t i, unsigned seed) {
  unsigned h = (unsigned)i * 2654435761u ^ seed;
  float s = 0;
  for (int k = 0; k < 4; ++k) {
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13, h *= 3266489917u, h ^= h >> 16;
    s += (h & 0xffffff) / float(1 << 24);
  }
  return (s - 2.0f) * 1.7f;
}

static void *flushbuf;
static bool g_resetL2 = true; // false: the memset alone, as the harnesses flushed before
inline void initFlush() { CK(cudaMalloc(&flushbuf, 256 << 20)); }

// Back to back, as kite_bench and torch_baseline.py time: each run after a
// 256 MiB memset and a reset of the L2's persisting lines (lines loaded with
// an evict_last hint outlive the memset otherwise).
template <class F> float timeit(F f, int n = 100) {
  std::vector<cudaEvent_t> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    cudaEventCreate(&a[i]);
    cudaEventCreate(&b[i]);
  }
  for (int i = 0; i < 5; ++i)
    f();
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) {
    CK(cudaMemsetAsync(flushbuf, i, 256 << 20));
    if (g_resetL2)
      CK(cudaCtxResetPersistingL2Cache());
    cudaEventRecord(a[i]);
    f();
    cudaEventRecord(b[i]);
  }
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  for (int i = 0; i < n; ++i) {
    float ms;
    cudaEventElapsedTime(&ms, a[i], b[i]);
    ts.push_back(ms);
    cudaEventDestroy(a[i]);
    cudaEventDestroy(b[i]);
  }
  CK(cudaGetLastError());
  std::sort(ts.begin(), ts.end());
  return ts[n / 2];
}
