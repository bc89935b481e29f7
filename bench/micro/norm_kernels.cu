// norm_kernels.cu - hand-written RMS norms of bf16 [8192, 8192] next to
// kite's generated ones, timed side by side on one GPU (not part of the
// build; see build.sh, which emits the kite kernels into gen_norm.cuh). The
// question: what holds a row norm at 94% of copy (kite and torch.compile
// alike), when an elementwise kernel reaches 100%. Variants:
//   rmsRow     a block per row, x kept as packed bf16 words (4 per 16-byte
//              load) with the f32 values recomputed after the reduction's
//              barrier instead of held; the weight read before or after it;
//   rmsBulk    persistent blocks that hold the weight in registers once and
//              stage x rows in shared memory with cp.async.bulk, Depth rows
//              in flight per block, so that bytes in flight no longer cost
//              registers.
// Timed back to back after a 256 MiB L2 flush, as kite_bench times; every
// variant's output is checked against a double-precision reference.
//
// On the H200 (ms, two repetitions agreeing within 0.0002; a 128 MiB
// memcpy of the same bytes took 0.0683): kite's 16-warp whole row with
// keep_loads, the tuner's pick, 0.0669-0.0670; kite's 8 warps 0.0681;
// kite's 16 warps with early_loads 0.0701 (40 registers, 3 programs per SM),
// and the same held to 4 programs per SM by __launch_bounds__ 0.149 (it
// spills). By hand: rmsRow 512 threads with the weight read early and 4
// programs per SM 0.0672 (0.0682 without x's evict_last, 0.0685 at 38
// registers); with the weight read late 0.0691; 1024 threads 0.083; 256 and
// 128 threads held to 6-8 programs per SM spilled and took 0.108-0.140 (the
// run before their bounds became the 4-5 below). rmsBulk, the bulk-staged
// persistent rows, 0.0699 at best (256 threads, depth 2, 4 per SM) and
// 0.072-0.074 otherwise (0.13-0.14 for the spilling 6-per-SM variants). Nothing beat kite's kernel: at 94% of the 1 GiB
// copy bandwidth the row norm is where the memory system puts it, and
// torch.compile's looped Triton kernel is there too (0.0667-0.0670).
// An output allocated in the stream (cudaMallocFromPoolAsync) at each launch
// and freed after the next added 0.0009 ms: 0.0670 -> 0.0679.
//
// Those figures come from a flush by memset alone, which leaves lines
// loaded with evict_last in the L2's persisting set-aside (11.25 MiB) for
// whatever runs next. Timed both ways, back to back (the first section of
// main; NORM_RESET_ONLY=1 stops after it), two repetitions: with the
// persisting lines reset before each run, kite's 16 warps with keep_loads
// 0.0667-0.0668, with reuse 0.0705-0.0706, without hints 0.0702-0.0704, 8
// warps without hints 0.0714-0.0715; rmsRow with x evict_last 0.0666-0.0667,
// without 0.0703. With the memset alone the hint-free kernels ran faster,
// 0.0685-0.0691, on the lines the keep_loads kernel timed before them left
// behind, and keep_loads itself 0.0673. So keep_loads' 5% is its own, and
// the memset-only flush favoured whatever ran after a keep_loads kernel.
#include "kite_device.cuh"
#include "kite_gemm.cuh"
using namespace kite_device;
#include "micro.cuh"
#include "gen_norm.cuh"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int R = 8192, C = 8192, C8 = C / 8; // C8: 16-byte words of a row
constexpr float kEps = 1e-5f;
constexpr int kSmem = 8192; // kite's kernels' dynamic shared memory

__device__ __forceinline__ float lo(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi(unsigned w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ unsigned pack(float a, float b) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<unsigned *>(&h);
}
__device__ __forceinline__ float sq4(uint4 v) {
  float a = lo(v.x), b = hi(v.x), c = lo(v.y), d = hi(v.y);
  float e = lo(v.z), f = hi(v.z), g = lo(v.w), h = hi(v.w);
  return ((a * a + b * b) + (c * c + d * d)) + ((e * e + f * f) + (g * g + h * h));
}
// x * r * w on 8 bf16 pairs, rounded to bf16 as kite rounds (x * r first).
__device__ __forceinline__ unsigned norm2(unsigned x, unsigned w, float r) {
  return pack((lo(x) * r) * lo(w), (hi(x) * r) * hi(w));
}
__device__ __forceinline__ uint4 norm8(uint4 x, uint4 w, float r) {
  return make_uint4(norm2(x.x, w.x, r), norm2(x.y, w.y, r), norm2(x.z, w.z, r),
                    norm2(x.w, w.w, r));
}
// Hides a value from the compiler, so that what is computed from it after
// this point is computed again rather than kept from before.
__device__ __forceinline__ void opaque(uint4 &v) {
  asm volatile("" : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w));
}

// The sum over the block, one barrier: warps' sums through s[0..NT/32).
template <int NT> __device__ __forceinline__ float blockSum(float v, float *s) {
  v = warpSum(v);
  if constexpr (NT > 32) {
    const int lane = threadIdx.x % 32;
    if (lane == 0)
      s[threadIdx.x / 32] = v;
    __syncthreads();
    v = warpSum(lane < NT / 32 ? s[lane] : 0.f);
  }
  return v;
}

template <int Cache> __device__ __forceinline__ uint4 ld16(const uint4 *p) {
  if constexpr (Cache == CacheStream)
    return __ldcs(p);
  else if constexpr (Cache == CacheDefault)
    return *p;
  else
    return ld_hinted<Cache>(p);
}

// A block per row; K 16-byte words of x per thread, held packed.
template <int NT, bool EarlyW, int XCache, bool StreamOut, int MinBlocks = 1>
__global__ void __launch_bounds__(NT, MinBlocks)
    rmsRow(const bf16 *__restrict__ x, const bf16 *__restrict__ w, bf16 *__restrict__ y) {
  constexpr int K = C8 / NT;
  __shared__ float s[32];
  const int t = threadIdx.x;
  const uint4 *xr = reinterpret_cast<const uint4 *>(x + (size_t)blockIdx.x * C);
  const uint4 *w4 = reinterpret_cast<const uint4 *>(w);
  uint4 xv[K], wv[K];
#pragma unroll
  for (int k = 0; k < K; ++k)
    xv[k] = ld16<XCache>(xr + k * NT + t);
  if constexpr (EarlyW) {
#pragma unroll
    for (int k = 0; k < K; ++k)
      wv[k] = ld16<CacheEvictLast>(w4 + k * NT + t);
  }
  float acc = 0.f;
#pragma unroll
  for (int k = 0; k < K; ++k)
    acc += sq4(xv[k]);
  acc = blockSum<NT>(acc, s);
  const float r = rsqrtf(acc / C + kEps);
  if constexpr (!EarlyW) {
#pragma unroll
    for (int k = 0; k < K; ++k)
      wv[k] = ld16<CacheEvictLast>(w4 + k * NT + t);
  }
  uint4 *yr = reinterpret_cast<uint4 *>(y + (size_t)blockIdx.x * C);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    opaque(xv[k]);
    uint4 o = norm8(xv[k], wv[k], r);
    if constexpr (StreamOut)
      __stcs(yr + k * NT + t, o);
    else
      yr[k * NT + t] = o;
  }
}

__device__ __forceinline__ void bulkLoad(void *dst, const void *src, unsigned bytes,
                                         unsigned long long *bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
               "%2, [%3];\n" ::"r"(smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

// Persistent: rows blockIdx.x, + gridDim.x, ...; Depth rows of x staged in
// shared memory by bulk copies ahead of the one being normalized; the
// weight read once per block and held.
template <int NT, int Depth, bool StreamOut, int MinBlocks = 1>
__global__ void __launch_bounds__(NT, MinBlocks)
    rmsBulk(const bf16 *__restrict__ x, const bf16 *__restrict__ w, bf16 *__restrict__ y) {
  constexpr int K = C8 / NT;
  extern __shared__ __align__(128) unsigned char smem[];
  uint4 *buf = reinterpret_cast<uint4 *>(smem);
  auto *bars = reinterpret_cast<unsigned long long *>(smem + Depth * C * 2);
  float *scratch = reinterpret_cast<float *>(smem + Depth * C * 2 + 8 * Depth); // 2 x 32
  const int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < Depth; ++s)
      mbar_init(&bars[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  const int step = gridDim.x;
  int row = blockIdx.x;
  if (t == 0)
    for (int s = 0; s < Depth; ++s)
      if (row + s * step < R)
        bulkLoad(buf + s * C8, x + (size_t)(row + s * step) * C, C * 2, &bars[s]);
  const uint4 *w4 = reinterpret_cast<const uint4 *>(w);
  uint4 wv[K];
#pragma unroll
  for (int k = 0; k < K; ++k)
    wv[k] = w4[k * NT + t];
  unsigned phase = 0;
  for (int it = 0; row < R; row += step, ++it) {
    const int s = it % Depth;
    mbar_wait(&bars[s], phase);
    if (s == Depth - 1)
      phase ^= 1;
    uint4 xv[K];
#pragma unroll
    for (int k = 0; k < K; ++k)
      xv[k] = buf[s * C8 + k * NT + t];
    float acc = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k)
      acc += sq4(xv[k]);
    acc = blockSum<NT>(acc, scratch + 32 * (it & 1));
    // Every thread has read buffer s (the barrier above): refill it.
    if (t == 0 && row + Depth * step < R) {
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      bulkLoad(buf + s * C8, x + (size_t)(row + Depth * step) * C, C * 2, &bars[s]);
    }
    const float r = rsqrtf(acc / C + kEps);
    uint4 *yr = reinterpret_cast<uint4 *>(y + (size_t)row * C);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      uint4 o = norm8(xv[k], wv[k], r);
      if constexpr (StreamOut)
        __stcs(yr + k * NT + t, o);
      else
        yr[k * NT + t] = o;
    }
  }
}

__global__ void initNormal(bf16 *p, size_t n, unsigned seed, float scale, float shift) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    p[i] = __float2bfloat16(normalish(i, seed) * scale + shift);
  }
}


static float bf2f(unsigned short h) {
  unsigned u = (unsigned)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

int main() {
  initFlush();
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  size_t n = (size_t)R * C;
  bf16 *x, *w, *y, *big;
  CK(cudaMalloc(&x, n * 2));
  CK(cudaMalloc(&y, n * 2));
  CK(cudaMalloc(&big, n * 2));
  CK(cudaMalloc(&w, C * 2));
  initNormal<<<1024, 256>>>(x, n, 7, 1.f, 0.f);
  initNormal<<<8, 256>>>(w, C, 11, 0.2f, 1.f);
  CK(cudaDeviceSynchronize());
  std::vector<unsigned short> hx(n), hw(C), hy(n);
  CK(cudaMemcpy(hx.data(), x, n * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hw.data(), w, C * 2, cudaMemcpyDeviceToHost));
  std::vector<float> rs(R);
  for (int r = 0; r < R; ++r) {
    double s = 0;
    for (int c = 0; c < C; ++c) {
      double v = bf2f(hx[(size_t)r * C + c]);
      s += v * v;
    }
    rs[r] = (float)(1.0 / std::sqrt(s / C + kEps));
  }
  double bytes = 4.0 * n; // x read, y written
  float tm = timeit([&] { cudaMemcpyAsync(big, x, n * 2, cudaMemcpyDeviceToDevice); });
  double copybw = bytes / tm / 1e6;
  printf("memcpy %.4f ms %.0f GB/s (read+write)\n", tm, copybw);
  auto report = [&](const char *name, float ms) {
    CK(cudaMemcpy(hy.data(), y, n * 2, cudaMemcpyDeviceToHost));
    long bad = 0;
    for (int r = 0; r < R; r += 7)
      for (int c = 0; c < C; ++c) {
        size_t i = (size_t)r * C + c;
        double want = bf2f(hx[i]) * rs[r] * bf2f(hw[c]);
        bad += std::abs(bf2f(hy[i]) - want) > 1e-2 * (1 + std::abs(want));
      }
    CK(cudaMemset(y, 0, n * 2));
    printf("%-46s %.4f ms %6.0f GB/s %5.1f%% copy  wrong %ld\n", name, ms, bytes / ms / 1e6,
           100.0 * bytes / ms / 1e6 / copybw, bad);
  };
  auto bulk = [&](const char *name, auto kernel, int nt, int depth, int perSM) {
    int smem = depth * C * 2 + 8 * depth + 256;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    char label[96];
    snprintf(label, sizeof label, "%s, %d/SM", name, perSM);
    report(label, timeit([&] { kernel<<<sms * perSM, nt, smem>>>(x, w, y); }));
  };
  {
    // kite::launch allocates its output at each launch from a caching pool
    // (stream-ordered, cuMemAllocFromPoolAsync) and frees the previous one:
    // does that cost GPU time inside the timed range?
    cudaMemPool_t pool;
    cudaMemPoolProps pp = {};
    pp.allocType = cudaMemAllocationTypePinned;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = 0;
    CK(cudaMemPoolCreate(&pool, &pp));
    unsigned long long keep = ~0ull;
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    void *prev = nullptr;
    for (int rep = 0; rep < 3; ++rep) {
      float fixed = timeit([&] { k_rms_a<<<R, 512, kSmem>>>(x, w, (double)kEps, y); });
      float pooled = timeit([&] {
        void *p;
        CK(cudaMallocFromPoolAsync(&p, n * 2, pool, 0));
        k_rms_a<<<R, 512, kSmem>>>(x, w, (double)kEps, (bf16 *)p);
        if (prev)
          CK(cudaFreeAsync(prev, 0));
        prev = p;
      });
      printf("kite 16 warps: output preallocated %.4f ms, from a pool per launch %.4f ms\n", fixed,
             pooled);
    }
    if (std::getenv("NORM_POOL_ONLY"))
      return 0;
  }
  // Lines loaded with evict_last outlive a memset flush in the L2's
  // persisting set-aside unless reset: timed both ways, back to back.
  for (bool reset : {false, true, false, true}) {
    g_resetL2 = reset;
    printf("-- flush: memset%s\n", reset ? " + persisting lines reset" : " only");
    report("kite 16 warps keep_loads", timeit([&] { k_rms_a<<<R, 512, kSmem>>>(x, w, (double)kEps, y); }));
    report("kite 16 warps reuse", timeit([&] { k_rms_f<<<R, 512, kSmem>>>(x, w, (double)kEps, y); }));
    report("kite 16 warps no hints", timeit([&] { k_rms_e<<<R, 512, kSmem>>>(x, w, (double)kEps, y); }));
    report("kite 8 warps no hints", timeit([&] { k_rms_g<<<R, 256, kSmem>>>(x, w, (double)kEps, y); }));
    report("rmsRow 512 early w, x evict_last, 4/SM bound",
           timeit([&] { rmsRow<512, true, CacheEvictLast, false, 4><<<R, 512>>>(x, w, y); }));
    report("rmsRow 512 early w, x default, 4/SM bound",
           timeit([&] { rmsRow<512, true, CacheDefault, false, 4><<<R, 512>>>(x, w, y); }));
  }
  g_resetL2 = true;
  if (std::getenv("NORM_RESET_ONLY"))
    return 0;
  for (int rep = 0; rep < 2; ++rep) {
    printf("-- repetition %d\n", rep);
    report("kite 16 warps keep_loads (the tuner's)",
           timeit([&] { k_rms_a<<<R, 512, kSmem>>>(x, w, (double)kEps, y); }));
    report("kite 8 warps keep_loads streaming",
           timeit([&] { k_rms_b<<<R, 256, kSmem>>>(x, w, (double)kEps, y); }));
    report("kite 16 warps keep_loads early_loads",
           timeit([&] { k_rms_c<<<R, 512, kSmem>>>(x, w, (double)kEps, y); }));
    report("kite 16 warps keep_loads early_loads, 4 blocks/SM bound",
           timeit([&] { k_rms_d<<<R, 512, kSmem>>>(x, w, (double)kEps, y); }));
    report("rmsRow 512 late w, x evict_last",
           timeit([&] { rmsRow<512, false, CacheEvictLast, false><<<R, 512>>>(x, w, y); }));
    report("rmsRow 512 early w, x evict_last",
           timeit([&] { rmsRow<512, true, CacheEvictLast, false><<<R, 512>>>(x, w, y); }));
    report("rmsRow 512 early w, x evict_last, 4/SM bound",
           timeit([&] { rmsRow<512, true, CacheEvictLast, false, 4><<<R, 512>>>(x, w, y); }));
    report("rmsRow 512 early w, x default, 4/SM bound",
           timeit([&] { rmsRow<512, true, CacheDefault, false, 4><<<R, 512>>>(x, w, y); }));
    report("rmsRow 512 early w, x evict_last, y .cs, 4/SM",
           timeit([&] { rmsRow<512, true, CacheEvictLast, true, 4><<<R, 512>>>(x, w, y); }));
    report("rmsRow 256 early w, x evict_last, 4/SM bound",
           timeit([&] { rmsRow<256, true, CacheEvictLast, false, 4><<<R, 256>>>(x, w, y); }));
    report("rmsRow 256 late w, x evict_last, 5/SM bound",
           timeit([&] { rmsRow<256, false, CacheEvictLast, false, 5><<<R, 256>>>(x, w, y); }));
    report("rmsRow 1024 early w, x evict_last, 2/SM",
           timeit([&] { rmsRow<1024, true, CacheEvictLast, false, 2><<<R, 1024>>>(x, w, y); }));
    report("rmsRow 128 early w, x evict_last, 4/SM bound",
           timeit([&] { rmsRow<128, true, CacheEvictLast, false, 4><<<R, 128>>>(x, w, y); }));
    bulk("rmsBulk 256 depth 2", rmsBulk<256, 2, false, 4>, 256, 2, 4);
    bulk("rmsBulk 256 depth 3", rmsBulk<256, 3, false, 4>, 256, 3, 4);
    bulk("rmsBulk 256 depth 4", rmsBulk<256, 4, false, 3>, 256, 4, 3);
    bulk("rmsBulk 512 depth 2", rmsBulk<512, 2, false, 4>, 512, 2, 4);
    bulk("rmsBulk 512 depth 3", rmsBulk<512, 3, false, 2>, 512, 3, 2);
    bulk("rmsBulk 512 depth 3", rmsBulk<512, 3, false, 4>, 512, 3, 4);
    bulk("rmsBulk 512 depth 4", rmsBulk<512, 4, false, 3>, 512, 4, 3);
    bulk("rmsBulk 512 depth 3 y .cs", rmsBulk<512, 3, true, 4>, 512, 3, 4);
    bulk("rmsBulk 1024 depth 4", rmsBulk<1024, 4, false, 2>, 1024, 4, 2);
    bulk("rmsBulk 128 depth 2", rmsBulk<128, 2, false, 4>, 128, 2, 4);
  }
  return 0;
}
