// sum_kernels.cu - hand-written row sums of f32 [8192, 8192] next to kite's
// generated ones, timed side by side on one GPU (not part of the build; see
// build.sh, which emits the kite kernels into gen_sum.cuh). The question:
// how close to the read bandwidth can a row reduction get, and which
// structure gets there. `readall` reads the whole tensor with no rows at all
// (the ceiling for a read-only kernel); the others reduce rows: one block per
// row with every load in flight at once, one warp per row, and persistent
// blocks that prefetch their next row while reducing the current one.
// Timed back to back after a 256 MiB L2 flush, as kite_bench times.
//
// On the H200 (ms, two repetitions; copy 4150 GB/s): readall 0.072-0.073
// (89% of copy); a 1024-thread block per row with two 16-byte loads per
// thread 0.0673-0.0679 (96%), 512 threads 0.0703-0.0708, 256 threads
// 0.0717-0.0724, 128 threads 0.0725-0.0730; a warp per row 0.072; persistent
// blocks 0.072-0.075. Where x lies in memory (offsets up to 64 MiB) changed
// nothing. The 1024-thread row with kite's block_reduce as it was (every
// thread reading all 32 partials, then a barrier) took 0.0748-0.0754; with
// the partials read one per lane and combined by shuffles, 0.0673-0.0678.
#include "kite_device.cuh"
using namespace kite_device;
#include "micro.cuh"
#include "gen_sum.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int R = 8192, C = 8192, C4 = C / 4;
constexpr int kSmem = 16384; // kite's kernels' dynamic shared memory (block reductions)

__device__ __forceinline__ float hsum(float4 v) { return (v.x + v.y) + (v.z + v.w); }
template <int NT> __device__ __forceinline__ float blockSum(float v, float *s) {
  v = warpSum(v);
  if constexpr (NT > 32) {
    __syncthreads();
    if (threadIdx.x % 32 == 0)
      s[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0;
#pragma unroll
    for (int w = 0; w < NT / 32; ++w)
      v += s[w];
  }
  return v;
}

// The ceiling: every float4 once, U loads in flight per thread, no rows.
template <int U> __global__ void readall(const float4 *__restrict__ x, float *__restrict__ out) {
  size_t n4 = (size_t)R * C4, stride = (size_t)gridDim.x * blockDim.x;
  float acc = 0;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n4; i += U * stride) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      v[u] = __ldcs(x + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u)
      acc += hsum(v[u]);
  }
  for (; i < n4; i += stride)
    acc += hsum(__ldcs(x + i));
  out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// This thread's sum of its share of row blockIdx.x: NT threads, every load
// in flight at once.
template <int NT, bool CS> __device__ __forceinline__ float rowPartial(const float4 *x) {
  constexpr int K = C4 / NT;
  const float4 *row = x + (size_t)blockIdx.x * C4;
  float4 v[K];
#pragma unroll
  for (int k = 0; k < K; ++k)
    v[k] = CS ? __ldcs(row + k * NT + threadIdx.x) : row[k * NT + threadIdx.x];
  float acc = 0;
#pragma unroll
  for (int k = 0; k < K; ++k)
    acc += hsum(v[k]);
  return acc;
}

// One block per row, the whole row in flight at once.
template <int NT, bool CS>
__global__ void __launch_bounds__(NT)
    rowBlock(const float4 *__restrict__ x, float *__restrict__ out) {
  __shared__ float s[32];
  float acc = blockSum<NT>(rowPartial<NT, CS>(x), s);
  if (threadIdx.x == 0)
    out[blockIdx.x] = acc;
}

// kite's block_reduce before it split the partials between lanes: every
// thread combined all of its group's partials.
template <class Op, int Stride, int Count, class T>
__device__ __forceinline__ T reduceOld(T v, T *scratch) {
  constexpr int InWarp = Stride >= 32 ? 1 : (Stride * Count <= 32 ? Count : 32 / Stride);
  constexpr int Across = Count / InWarp, AcrossStride = Stride * InWarp;
  if constexpr (InWarp > 1)
    v = warp_reduce<Op, Stride, InWarp>(v);
  if constexpr (Across == 1)
    return v;
  const int tid = threadIdx.x;
  __syncthreads();
  scratch[tid] = v;
  __syncthreads();
  const int base = tid - ((tid / AcrossStride) % Across) * AcrossStride;
  T r = scratch[base];
#pragma unroll
  for (int j = 1; j < Across; ++j)
    r = Op::combine(r, scratch[base + j * AcrossStride]);
  return r;
}

// rowBlock reduced as kite's generated code reduces (every thread's partial
// through dynamic shared memory), with the old or the current block_reduce,
// with or without the barrier kite emits after a block reduction.
template <int NT, bool Current, bool Tail>
__global__ void __launch_bounds__(NT)
    rowBlockR(const float4 *__restrict__ x, float *__restrict__ out) {
  extern __shared__ __align__(16) unsigned char smem[];
  float *s = reinterpret_cast<float *>(smem);
  float acc = rowPartial<NT, true>(x);
  acc = Current ? block_reduce<SumOp, 1, NT>(acc, s) : reduceOld<SumOp, 1, NT>(acc, s);
  if (Tail)
    __syncthreads();
  if (threadIdx.x == 0)
    out[blockIdx.x] = acc;
}

// One warp per row, U float4 loads in flight per lane.
template <int W, int U>
__global__ void __launch_bounds__(W * 32)
    rowWarp(const float4 *__restrict__ x, float *__restrict__ out) {
  int r = blockIdx.x * W + threadIdx.x / 32, lane = threadIdx.x % 32;
  const float4 *row = x + (size_t)r * C4;
  float acc = 0;
  for (int j = 0; j < C4 / 32; j += U) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      v[u] = __ldcs(row + (j + u) * 32 + lane);
#pragma unroll
    for (int u = 0; u < U; ++u)
      acc += hsum(v[u]);
  }
  acc = warpSum(acc);
  if (lane == 0)
    out[r] = acc;
}

// Persistent blocks: each takes rows blockIdx.x, + gridDim.x, ...; the next
// row's loads are issued before the current row is reduced.
template <int NT>
__global__ void __launch_bounds__(NT)
    rowPersist(const float4 *__restrict__ x, float *__restrict__ out) {
  constexpr int K = C4 / NT;
  __shared__ float s[32];
  float4 cur[K], nxt[K];
  int r = blockIdx.x;
#pragma unroll
  for (int k = 0; k < K; ++k)
    cur[k] = __ldcs(x + (size_t)r * C4 + k * NT + threadIdx.x);
  for (; r < R; r += gridDim.x) {
    int n = r + gridDim.x;
    if (n < R) {
#pragma unroll
      for (int k = 0; k < K; ++k)
        nxt[k] = __ldcs(x + (size_t)n * C4 + k * NT + threadIdx.x);
    }
    float acc = 0;
#pragma unroll
    for (int k = 0; k < K; ++k)
      acc += hsum(cur[k]);
    acc = blockSum<NT>(acc, s);
    if (threadIdx.x == 0)
      out[r] = acc;
#pragma unroll
    for (int k = 0; k < K; ++k)
      cur[k] = nxt[k];
  }
}

__global__ void initNormal(float *p, size_t n, unsigned seed) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    p[i] = normalish(i, seed);
  }
}


int main() {
  initFlush();
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  size_t n = (size_t)R * C;
  float *x, *y, *big;
  // x sits at an offset into a bigger allocation: where a tensor lies in
  // memory may change how its reads spread over the memory channels.
  float *xbase;
  constexpr size_t kSlack = 64 << 20;
  CK(cudaMalloc(&xbase, n * 4 + kSlack));
  x = xbase;
  CK(cudaMalloc(&y, R * 4));
  CK(cudaMalloc(&big, n * 4)); // memcpy's target, readall's scratch
  initNormal<<<1024, 256>>>(x, n, 7);
  CK(cudaDeviceSynchronize());
  std::vector<float> hx(n);
  CK(cudaMemcpy(hx.data(), x, n * 4, cudaMemcpyDeviceToHost));
  std::vector<double> ref(R);
  for (int r = 0; r < R; ++r) {
    double s = 0;
    for (int c = 0; c < C; ++c)
      s += hx[(size_t)r * C + c];
    ref[r] = s;
  }
  double bytes = 4.0 * n;
  float tm = timeit([&] { cudaMemcpyAsync(big, x, n * 4, cudaMemcpyDeviceToDevice); });
  double copybw = 2 * bytes / tm / 1e6;
  printf("memcpy %.4f ms %.0f GB/s (read+write)\n", tm, copybw);
  auto report = [&](const char *name, float ms, bool rows = true) {
    int bad = 0;
    if (rows) {
      std::vector<float> hy(R);
      CK(cudaMemcpy(hy.data(), y, R * 4, cudaMemcpyDeviceToHost));
      for (int r = 0; r < R; ++r)
        bad += std::abs(hy[r] - ref[r]) > 1e-3 * (1 + std::abs(ref[r]));
      CK(cudaMemset(y, 0, R * 4));
    }
    printf("%-40s %.4f ms %6.0f GB/s %5.1f%% copy  wrong rows %d\n", name, ms, bytes / ms / 1e6,
           100.0 * bytes / ms / 1e6 / copybw, bad);
  };
  const float4 *x4 = (const float4 *)x;
  for (size_t off : {(size_t)0, (size_t)8 << 10, (size_t)32 << 10, (size_t)1 << 20, (size_t)2 << 20,
                     (size_t)6 << 20, (size_t)32 << 20, (size_t)64 << 20}) {
    float *xo = xbase + off / 4;
    CK(cudaMemcpy(xo, hx.data(), n * 4, cudaMemcpyHostToDevice));
    const float4 *xo4 = (const float4 *)xo;
    float ta = timeit([&] { k_sum_a<<<R / 2, 1024, kSmem>>>(xo, y); });
    float tb = timeit([&] { k_sum_b<<<R, 1024, kSmem>>>(xo, y); });
    float tc = timeit([&] { k_sum_c<<<R, 256, kSmem>>>(xo, y); });
    float tr = timeit([&] { rowBlock<256, true><<<R, 256>>>(xo4, y); });
    float tw = timeit([&] { rowWarp<8, 8><<<R / 8, 256>>>(xo4, y); });
    printf("x at +%6zu KiB: kite a %.4f b %.4f c %.4f  rowBlock256 %.4f rowWarp %.4f ms\n",
           off >> 10, ta, tb, tc, tr, tw);
    report("(last: rowWarp, checked)", tw);
  }
  CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 2; ++rep) {
    printf("-- repetition %d\n", rep);
    report("readall U=4, 8 blocks of 256 per SM",
           timeit([&] { readall<4><<<sms * 8, 256>>>(x4, big); }), false);
    report("readall U=8, 8 blocks of 256 per SM",
           timeit([&] { readall<8><<<sms * 8, 256>>>(x4, big); }), false);
    report("readall U=4, 4 blocks of 512 per SM",
           timeit([&] { readall<4><<<sms * 4, 512>>>(x4, big); }), false);
    report("kite block 2, 32 warps, chunks 2048, cs",
           timeit([&] { k_sum_a<<<R / 2, 1024, kSmem>>>(x, y); }));
    report("kite block 1, 32 warps, chunks 2048, cs",
           timeit([&] { k_sum_b<<<R, 1024, kSmem>>>(x, y); }));
    report("kite block 1, 8 warps, whole row", timeit([&] { k_sum_c<<<R, 256, kSmem>>>(x, y); }));
    report("kite block 1, 16 warps, whole row, cs",
           timeit([&] { k_sum_d<<<R, 512, kSmem>>>(x, y); }));
    report("rowBlock 256 (8 loads), cs", timeit([&] { rowBlock<256, true><<<R, 256>>>(x4, y); }));
    report("rowBlock 256 (8 loads)", timeit([&] { rowBlock<256, false><<<R, 256>>>(x4, y); }));
    report("rowBlock 512 (4 loads), cs", timeit([&] { rowBlock<512, true><<<R, 512>>>(x4, y); }));
    report("rowBlock 1024 (2 loads), cs",
           timeit([&] { rowBlock<1024, true><<<R, 1024>>>(x4, y); }));
    report("kite block 1, 32 warps, whole row, cs",
           timeit([&] { k_sum_e<<<R, 1024, kSmem>>>(x, y); }));
    report("rowBlock 1024, cs, 16 KiB dynamic smem",
           timeit([&] { rowBlock<1024, true><<<R, 1024, kSmem>>>(x4, y); }));
    report("rowBlockR 1024 old reduce, tail barrier",
           timeit([&] { rowBlockR<1024, false, true><<<R, 1024, kSmem>>>(x4, y); }));
    report("rowBlockR 1024 old reduce, no tail",
           timeit([&] { rowBlockR<1024, false, false><<<R, 1024, kSmem>>>(x4, y); }));
    report("rowBlockR 1024 current reduce, tail barrier",
           timeit([&] { rowBlockR<1024, true, true><<<R, 1024, kSmem>>>(x4, y); }));
    report("rowBlockR 1024 current reduce, no tail",
           timeit([&] { rowBlockR<1024, true, false><<<R, 1024, kSmem>>>(x4, y); }));
    report("rowBlockR 512 old reduce, tail barrier",
           timeit([&] { rowBlockR<512, false, true><<<R, 512, kSmem>>>(x4, y); }));
    report("rowBlockR 512 current reduce, no tail",
           timeit([&] { rowBlockR<512, true, false><<<R, 512, kSmem>>>(x4, y); }));
    report("rowBlock 128 (16 loads), cs", timeit([&] { rowBlock<128, true><<<R, 128>>>(x4, y); }));
    report("rowWarp 8 warps, 8 loads", timeit([&] { rowWarp<8, 8><<<R / 8, 256>>>(x4, y); }));
    report("rowWarp 8 warps, 16 loads", timeit([&] { rowWarp<8, 16><<<R / 8, 256>>>(x4, y); }));
    report("rowWarp 4 warps, 8 loads", timeit([&] { rowWarp<4, 8><<<R / 4, 128>>>(x4, y); }));
    report("rowPersist 256, 4 blocks/SM",
           timeit([&] { rowPersist<256><<<sms * 4, 256>>>(x4, y); }));
    report("rowPersist 256, 8 blocks/SM",
           timeit([&] { rowPersist<256><<<sms * 8, 256>>>(x4, y); }));
    report("rowPersist 512, 2 blocks/SM",
           timeit([&] { rowPersist<512><<<sms * 2, 512>>>(x4, y); }));
    report("rowPersist 512, 4 blocks/SM",
           timeit([&] { rowPersist<512><<<sms * 4, 512>>>(x4, y); }));
  }
  return 0;
}
