// row_kernels.cu - hand-written variants of row kernels next to kite's
// generated ones, timed side by side on one GPU (not part of the build; see
// build.sh). Softmax 8192x8192 bf16: the whole row in registers at several
// thread counts, load and store cache policies, persistent CTAs that stage
// rows in shared memory with cp.async.bulk or prefetch the next row into
// registers; timed both synchronized after each run and back to back (as
// kite_bench and bench/torch_baseline.py time). Cross-entropy 8192x32768
// bf16: online logsumexp with a running max per thread or per lane, against
// kite's generated kernels. MB_SOFTMAX=1 and MB_CE=1 add older variants.
// Percentages are of a same-size device-to-device memcpy timed the same way.
#include "kite_device.cuh"
#include "kite_gemm.cuh"
using namespace kite_device;
#include "gen.cuh"
#include <cuda.h>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>
#include <algorithm>
#include <cstring>
#include <cstdint>
using namespace kite_device;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

constexpr int R = 8192, C = 8192;

// S0: generated
template <int MinBlocks>
__global__ void __launch_bounds__(256, MinBlocks) s0(const bf16* __restrict__ a0, bf16* __restrict__ o0) {
  extern __shared__ __align__(16) unsigned char kite_smem[];
  const int t = threadIdx.x;
  const i64 b1 = blockIdx.x;
  bf16 v3[32];
#pragma unroll
  for (int k = 0; k < 4; ++k) load_vec<8>(&v3[k * 8], &a0[(int)b1 * C + k * 2048 + t * 8]);
  float v5[32];
#pragma unroll
  for (int k = 0; k < 32; ++k) v5[k] = cvt<float>(v3[k]);
  float* s8 = reinterpret_cast<float*>(kite_smem);
  float a9 = MaxOp::identity<float>();
#pragma unroll
  for (int r = 0; r < 32; ++r) a9 = MaxOp::combine(a9, v5[r]);
  a9 = block_reduce<MaxOp, 1, 256>(a9, s8);
  __syncthreads();
  float v13[32];
#pragma unroll
  for (int k = 0; k < 32; ++k) v13[k] = __expf(v5[k] - a9);
  float a17 = SumOp::identity<float>();
#pragma unroll
  for (int r = 0; r < 32; ++r) a17 = SumOp::combine(a17, v13[r]);
  a17 = block_reduce<SumOp, 1, 256>(a17, s8);
  __syncthreads();
  float inv = 1.0f / a17;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    Vec<bf16, 8> v;
#pragma unroll
    for (int j = 0; j < 8; ++j) v.e[j] = cvt<bf16>(v13[k * 8 + j] * inv);
    store_vec<8>(&o0[(int)b1 * C + k * 2048 + t * 8], v);
  }
}


template <int Mode>
__device__ __forceinline__ void ldv(void* dst, const void* src) {
  uint4 r;
  if constexpr (Mode == 0) asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(src));
  else if constexpr (Mode == 1) asm volatile("ld.global.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(src));
  else if constexpr (Mode == 2) asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(src));
  else if constexpr (Mode == 4) asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(src));
  else if constexpr (Mode == 5 || Mode == 6) {
    unsigned long long pol;
    if constexpr (Mode == 5) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    else asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(src), "l"(pol));
  }
  else asm volatile("ld.global.L1::evict_last.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(src));
  *reinterpret_cast<uint4*>(dst) = r;
}
// S5: s0 with load flavours and thread counts: NT threads per row, E = 8192/NT elements per thread
template <int SMode>
__device__ __forceinline__ void stv(void* dst, Vec<bf16, 8> v) {
  uint4 r = *reinterpret_cast<uint4*>(&v);
  if constexpr (SMode == 0) *reinterpret_cast<uint4*>(dst) = r;
  else if constexpr (SMode == 1) asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(dst), "r"(r.x), "r"(r.y), "r"(r.z), "r"(r.w) : "memory");
  else {
    unsigned long long pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;" :: "l"(dst), "r"(r.x), "r"(r.y), "r"(r.z), "r"(r.w), "l"(pol) : "memory");
  }
}
template <int Mode, int NT, int SMode = 0>
__global__ void __launch_bounds__(NT) s5(const bf16* __restrict__ a0, bf16* __restrict__ o0) {
  extern __shared__ __align__(16) unsigned char kite_smem[];
  constexpr int E = C / NT, L = E / 8;
  const int t = threadIdx.x;
  const i64 b1 = blockIdx.x;
  bf16 v3[E];
#pragma unroll
  for (int k = 0; k < L; ++k) {
    if constexpr (Mode < 0) load_vec<8>(&v3[k * 8], &a0[(int)b1 * C + k * NT * 8 + t * 8]);
    else ldv<Mode>(&v3[k * 8], &a0[(int)b1 * C + k * NT * 8 + t * 8]);
  }
  float* s8 = reinterpret_cast<float*>(kite_smem);
  float a9 = -INFINITY;
#pragma unroll
  for (int r = 0; r < E; ++r) a9 = fmaxf(a9, cvt<float>(v3[r]));
  a9 = block_reduce<MaxOp, 1, NT>(a9, s8);
  __syncthreads();
  float v13[E];
  float a17 = 0.f;
#pragma unroll
  for (int k = 0; k < E; ++k) { v13[k] = __expf(cvt<float>(v3[k]) - a9); a17 += v13[k]; }
  a17 = block_reduce<SumOp, 1, NT>(a17, s8);
  float inv = 1.0f / a17;
#pragma unroll
  for (int k = 0; k < L; ++k) {
    Vec<bf16, 8> v;
#pragma unroll
    for (int j = 0; j < 8; ++j) v.e[j] = cvt<bf16>(v13[k * 8 + j] * inv);
    stv<SMode>(&o0[(int)b1 * C + k * NT * 8 + t * 8], v);
  }
}

// S2: keep bf16, recompute the conversion (lazy cvt); exp recomputed in the store phase too
template <int MinBlocks, bool RecomputeExp>
__global__ void __launch_bounds__(256, MinBlocks) s2(const bf16* __restrict__ a0, bf16* __restrict__ o0) {
  extern __shared__ __align__(16) unsigned char kite_smem[];
  const int t = threadIdx.x;
  const i64 b1 = blockIdx.x;
  bf16 v3[32];
#pragma unroll
  for (int k = 0; k < 4; ++k) load_vec<8>(&v3[k * 8], &a0[(int)b1 * C + k * 2048 + t * 8]);
  float* s8 = reinterpret_cast<float*>(kite_smem);
  float a9 = MaxOp::identity<float>();
#pragma unroll
  for (int r = 0; r < 32; ++r) a9 = MaxOp::combine(a9, cvt<float>(v3[r]));
  a9 = block_reduce<MaxOp, 1, 256>(a9, s8);
  __syncthreads();
  float a17 = 0.f;
  float v13[RecomputeExp ? 1 : 32];
#pragma unroll
  for (int k = 0; k < 32; ++k) { float e = __expf(cvt<float>(v3[k]) - a9); if constexpr (!RecomputeExp) v13[k] = e; a17 += e; }
  a17 = block_reduce<SumOp, 1, 256>(a17, s8);
  __syncthreads();
  float inv = 1.0f / a17;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    Vec<bf16, 8> v;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      float e;
      if constexpr (RecomputeExp) e = __expf(cvt<float>(v3[k * 8 + j]) - a9); else e = v13[k * 8 + j];
      v.e[j] = cvt<bf16>(e * inv);
    }
    store_vec<8>(&o0[(int)b1 * C + k * 2048 + t * 8], v);
  }
}

__device__ __forceinline__ void bulk_g2s(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}

// The rest of a 256-thread softmax row once its max is known: exp, the sum
// across the block, the normalized row stored (the persistent variants).
__device__ __forceinline__ void exp_normalize_store(const bf16 (&v3)[32], float max, float* scratch,
                                                    bf16* out, int t) {
  float a17 = 0.f;
  float v13[32];
#pragma unroll
  for (int k = 0; k < 32; ++k) { v13[k] = __expf(cvt<float>(v3[k]) - max); a17 += v13[k]; }
  a17 = block_reduce<SumOp, 1, 256>(a17, scratch);
  float inv = 1.0f / a17;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    Vec<bf16, 8> v;
#pragma unroll
    for (int j = 0; j < 8; ++j) v.e[j] = cvt<bf16>(v13[k * 8 + j] * inv);
    store_vec<8>(&out[k * 2048 + t * 8], v);
  }
}

// S3: persistent, rows staged in shared memory by bulk copies, Depth rows in flight per block.
template <int Depth, int MinBlocks>
__global__ void __launch_bounds__(256, MinBlocks) s3(const bf16* __restrict__ a0, bf16* __restrict__ o0) {
  extern __shared__ __align__(128) unsigned char kite_smem[];
  bf16* buf = reinterpret_cast<bf16*>(kite_smem);
  unsigned long long* bars = reinterpret_cast<unsigned long long*>(kite_smem + Depth * C * 2);
  float* scratch = reinterpret_cast<float*>(kite_smem + Depth * C * 2 + 64);
  const int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < Depth; ++s) mbar_init(&bars[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  int row = blockIdx.x;
  const int step = gridDim.x;
  if (t == 0) {
    for (int s = 0; s < Depth; ++s) {
      int r = row + s * step;
      if (r < R) { mbar_arrive_expect_tx(&bars[s], C * 2); bulk_g2s(buf + s * C, a0 + (i64)r * C, C * 2, &bars[s]); }
    }
  }
  unsigned phase = 0;
  for (int it = 0; row < R; row += step, ++it) {
    const int s = it % Depth;
    mbar_wait(&bars[s], phase);
    if (s == Depth - 1) phase ^= 1;
    bf16 v3[32];
#pragma unroll
    for (int k = 0; k < 4; ++k) *reinterpret_cast<uint4*>(&v3[k * 8]) = *reinterpret_cast<const uint4*>(&buf[s * C + k * 2048 + t * 8]);
    float a9 = -INFINITY;
#pragma unroll
    for (int r = 0; r < 32; ++r) a9 = fmaxf(a9, cvt<float>(v3[r]));
    a9 = block_reduce<MaxOp, 1, 256>(a9, scratch);   // its syncthreads also free buffer s (all reads done)
    if (t == 0) {
      int r = row + Depth * step;
      if (r < R) { mbar_arrive_expect_tx(&bars[s], C * 2); bulk_g2s(buf + s * C, a0 + (i64)r * C, C * 2, &bars[s]); }
    }
    exp_normalize_store(v3, a9, scratch + 256, &o0[(i64)row * C], t);
  }
}

// S4: register prefetch of the next row (persistent, software pipelined)
__global__ void __launch_bounds__(256, 2) s4(const bf16* __restrict__ a0, bf16* __restrict__ o0) {
  extern __shared__ __align__(16) unsigned char kite_smem[];
  float* scratch = reinterpret_cast<float*>(kite_smem);
  const int t = threadIdx.x;
  int row = blockIdx.x;
  const int step = gridDim.x;
  bf16 nx[32];
  if (row < R) {
#pragma unroll
    for (int k = 0; k < 4; ++k) load_vec<8>(&nx[k * 8], &a0[(i64)row * C + k * 2048 + t * 8]);
  }
  for (; row < R; row += step) {
    bf16 v3[32];
#pragma unroll
    for (int k = 0; k < 32; ++k) v3[k] = nx[k];
    if (row + step < R) {
#pragma unroll
      for (int k = 0; k < 4; ++k) load_vec<8>(&nx[k * 8], &a0[(i64)(row + step) * C + k * 2048 + t * 8]);
    }
    float a9 = -INFINITY;
#pragma unroll
    for (int r = 0; r < 32; ++r) a9 = fmaxf(a9, cvt<float>(v3[r]));
    a9 = block_reduce<MaxOp, 1, 256>(a9, scratch);
    exp_normalize_store(v3, a9, scratch + 256, &o0[(i64)row * C], t);
  }
}

// ---- cross entropy 8192 x 32768
constexpr int CR = 8192, CC = 32768;
// CE thread-local online LSE: W warps, chunk = W*32*8*U elements per step
template <int W, int U, int MinBlocks>
__global__ void __launch_bounds__(W * 32, MinBlocks) ce_local(const bf16* __restrict__ x, const i64* __restrict__ tg, float* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char kite_smem[];
  float* scratch = reinterpret_cast<float*>(kite_smem);
  const int t = threadIdx.x;
  const i64 row = blockIdx.x;
  const bf16* xr = x + row * CC;
  float m = -INFINITY, s = 0.f;
  constexpr int Chunk = W * 32 * 8 * U;
  for (int c = 0; c < CC; c += Chunk) {
    bf16 v[8 * U];
#pragma unroll
    for (int u = 0; u < U; ++u) load_vec<8, true>(&v[u * 8], &xr[c + u * W * 256 + t * 8]);
    float cm = -INFINITY;
#pragma unroll
    for (int k = 0; k < 8 * U; ++k) cm = fmaxf(cm, cvt<float>(v[k]));
    float mn = fmaxf(m, cm);
    float acc = 0.f;
#pragma unroll
    for (int k = 0; k < 8 * U; ++k) acc += __expf(cvt<float>(v[k]) - mn);
    s = s * __expf(m - mn) + acc;   // m = -inf first: exp(-inf) = 0, s = 0
    m = mn;
  }
  // combine (m, s) across the block
  float M = block_reduce<MaxOp, 1, W * 32>(m, scratch);
  __syncthreads();
  float S = block_reduce<SumOp, 1, W * 32>(s * __expf(m - M), scratch);
  if (t == 0) out[row] = M + logf(S) - cvt<float>(xr[tg[row]]);
}


// CE lane-wise online LSE: per lane running max m and sum s (one exp per element), combined once at the end
template <int W, int U, int MinBlocks>
__global__ void __launch_bounds__(W * 32, MinBlocks) ce_lane(const bf16* __restrict__ x, const i64* __restrict__ tg, float* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char kite_smem[];
  float* scratch = reinterpret_cast<float*>(kite_smem);
  const int t = threadIdx.x;
  const i64 row = blockIdx.x;
  const bf16* xr = x + row * CC;
  float m[8 * U], s[8 * U];
#pragma unroll
  for (int k = 0; k < 8 * U; ++k) { m[k] = -INFINITY; s[k] = 0.f; }
  constexpr int Chunk = W * 32 * 8 * U;
  for (int c = 0; c < CC; c += Chunk) {
    bf16 v[8 * U];
#pragma unroll
    for (int u = 0; u < U; ++u) load_vec<8, true>(&v[u * 8], &xr[c + u * W * 256 + t * 8]);
#pragma unroll
    for (int k = 0; k < 8 * U; ++k) {
      float xv = cvt<float>(v[k]);
      float e = m[k] == -INFINITY ? 0.f : __expf(-fabsf(xv - m[k]));
      s[k] = xv > m[k] ? s[k] * e + 1.f : s[k] + e;
      m[k] = fmaxf(m[k], xv);
    }
  }
  float lm = -INFINITY;
#pragma unroll
  for (int k = 0; k < 8 * U; ++k) lm = fmaxf(lm, m[k]);
  float M = block_reduce<MaxOp, 1, W * 32>(lm, scratch);
  __syncthreads();
  float ls = 0.f;
#pragma unroll
  for (int k = 0; k < 8 * U; ++k) ls += m[k] == -INFINITY ? 0.f : s[k] * __expf(m[k] - M);
  float S = block_reduce<SumOp, 1, W * 32>(ls, scratch);
  if (t == 0) out[row] = M + logf(S) - cvt<float>(xr[tg[row]]);
}

// CE generated-like (per chunk cross-thread amax) is the reference; we reuse ce_local with W=... for checking against a simple one-warp-per-row exact kernel
__global__ void ce_ref(const bf16* __restrict__ x, const i64* __restrict__ tg, float* __restrict__ out) {
  const i64 row = blockIdx.x;
  const bf16* xr = x + row * CC;
  __shared__ float sm[32];
  float m = -INFINITY;
  for (int c = threadIdx.x; c < CC; c += blockDim.x) m = fmaxf(m, cvt<float>(xr[c]));
  m = block_reduce<MaxOp, 1, 256>(m, sm);
  __syncthreads();
  float s = 0;
  for (int c = threadIdx.x; c < CC; c += blockDim.x) s += expf(cvt<float>(xr[c]) - m);
  __shared__ float sm2[256];
  s = block_reduce<SumOp, 1, 256>(s, sm2);
  if (threadIdx.x == 0) out[row] = m + logf(s) - cvt<float>(xr[tg[row]]);
}

__global__ void copyk(const uint4* __restrict__ a, uint4* __restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) b[i] = a[i];
}

__global__ void init_bf16(bf16* p, size_t n, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
    p[i] = __float2bfloat16(((h & 0xffff) / 65536.0f - 0.5f) * scale);
  }
}

// Roughly normal values (a sum of four uniforms), as torch.randn's spread.
__global__ void init_normal(bf16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float s = 0;
    for (unsigned j = 0; j < 4; ++j) {
      unsigned h = ((unsigned)i * 4 + j) * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
      s += (h & 0xffff) / 65536.0f - 0.5f;
    }
    p[i] = __float2bfloat16(s * 1.7f);
  }
}

static void* flushbuf;
static bool g_b2b = false; // back to back, as kite_bench and torch_baseline.py time: no sync between runs
static bool g_reset = false; // synchronized runs only: lines kept by evict_last hints made normal before the flush
template <class F> float timeit(F f, int n = 40) {
  if (g_b2b) {
    std::vector<cudaEvent_t> a(n), b(n);
    for (int i = 0; i < n; ++i) { cudaEventCreate(&a[i]); cudaEventCreate(&b[i]); }
    f(); CK(cudaDeviceSynchronize());
    for (int i = 0; i < n; ++i) {
      CK(cudaMemsetAsync(flushbuf, i, 256 << 20));
      cudaEventRecord(a[i]); f(); cudaEventRecord(b[i]);
    }
    CK(cudaDeviceSynchronize());
    std::vector<float> ts;
    for (int i = 0; i < n; ++i) { float ms; cudaEventElapsedTime(&ms, a[i], b[i]); ts.push_back(ms); cudaEventDestroy(a[i]); cudaEventDestroy(b[i]); }
    std::sort(ts.begin(), ts.end());
    return ts[n / 2];
  }
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ts;
  f(); CK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) {
    if (g_reset) CK(cudaCtxResetPersistingL2Cache());
    CK(cudaMemsetAsync(flushbuf, i, 256 << 20));
    cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms);
  }
  CK(cudaGetLastError());
  std::sort(ts.begin(), ts.end());
  return ts[n / 2];
}

// A memory pool that keeps what is freed (release threshold unlimited), as
// kite's runtime makes per device.
static cudaMemPool_t caching_pool() {
  static cudaMemPool_t pool = nullptr;
  if (!pool) {
    cudaMemPoolProps pp = {};
    pp.allocType = cudaMemAllocationTypePinned;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = 0;
    CK(cudaMemPoolCreate(&pool, &pp));
    unsigned long long keep = ~0ull;
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  return pool;
}

int main() {
  CK(cudaMalloc(&flushbuf, 256 << 20));
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  size_t n = (size_t)R * C;
  bf16 *x, *y, *yref;
  CK(cudaMalloc(&x, n * 2)); CK(cudaMalloc(&y, n * 2)); CK(cudaMalloc(&yref, n * 2));
  init_bf16<<<1024, 256>>>(x, n, 7, 8.f);
  double bytes = 2.0 * n * 2;
  float tc = timeit([&] { copyk<<<sms * 8, 256>>>((const uint4*)x, (uint4*)y, n * 2 / 16); });
  float tm = timeit([&] { cudaMemcpyAsync(y, x, n * 2, cudaMemcpyDeviceToDevice); });
  printf("copy kernel %.4f ms %.0f GB/s; memcpy %.4f ms %.0f GB/s\n", tc, bytes / tc / 1e6, tm, bytes / tm / 1e6);
  double copybw = bytes / tm / 1e6;
  s0<1><<<R, 256, 4096>>>(x, yref); CK(cudaDeviceSynchronize());
  std::vector<uint16_t> h1(n), h2(n);
  CK(cudaMemcpy(h1.data(), yref, n * 2, cudaMemcpyDeviceToHost));
  auto check = [&](const char* name, float ms) {
    CK(cudaMemcpy(h2.data(), y, n * 2, cudaMemcpyDeviceToHost));
    size_t bad = 0; for (size_t i = 0; i < n; ++i) { int d = (int)h1[i] - (int)h2[i]; if (d > 1 || d < -1) ++bad; }
    printf("%-28s %.4f ms %6.0f GB/s %5.1f%% copy  mismatches %zu\n", name, ms, bytes / ms / 1e6, 100.0 * bytes / ms / 1e6 / copybw, bad);
    CK(cudaMemset(y, 0, n * 2));
  };
  auto attr = [](auto k, int smem) { CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)); };
  for (int b2b = 0; b2b < 2; ++b2b) {
    g_b2b = b2b;
    printf("-- %s\n", b2b ? "back to back (kite_bench's and torch's timing)" : "synchronized after each run");
    check("memcpy", timeit([&] { cudaMemcpyAsync(y, x, n * 2, cudaMemcpyDeviceToDevice); }));
    check("kite k_softmax", timeit([&] { k_softmax<<<R, 256, 4096>>>(x, y); }));
    check("s5 ld.nc st", timeit([&] { s5<2, 256, 0><<<R, 256, 4096>>>(x, y); }));
    check("s5 ld.cs st", timeit([&] { s5<4, 256, 0><<<R, 256, 4096>>>(x, y); }));
    check("s5 ld.nc st.cs", timeit([&] { s5<2, 256, 1><<<R, 256, 4096>>>(x, y); }));
    check("s5 ld.cs st.cs", timeit([&] { s5<4, 256, 1><<<R, 256, 4096>>>(x, y); }));
    check("s5 ld L2 evict_first, st", timeit([&] { s5<5, 256, 0><<<R, 256, 4096>>>(x, y); }));
    check("s5 ld L2 evict_last, st", timeit([&] { s5<6, 256, 0><<<R, 256, 4096>>>(x, y); }));
    check("s5 ld.nc, st L2 evict_first", timeit([&] { s5<2, 256, 2><<<R, 256, 4096>>>(x, y); }));
    check("s5 ld L2 evict_first, st L2 evict_first", timeit([&] { s5<5, 256, 2><<<R, 256, 4096>>>(x, y); }));
    check("s5 ld.nc st, 512 threads", timeit([&] { s5<2, 512, 0><<<R, 512, 4096>>>(x, y); }));
    {
      // As run_plan does: the output allocated stream-ordered at each launch
      // (from a pool that keeps its memory), the previous one freed after it.
      cudaMemPool_t pool = caching_pool();
      void* prev = nullptr;
      float ms = timeit([&] {
        void* p; CK(cudaMallocFromPoolAsync(&p, n * 2, pool, 0));
        k_softmax<<<R, 256, 4096>>>(x, (bf16*)p);
        if (prev) CK(cudaFreeAsync(prev, 0));
        prev = p;
      });
      CK(cudaMemcpy(y, prev, n * 2, cudaMemcpyDeviceToDevice));
      check("kite k_softmax + pool alloc/free", ms);
      CK(cudaFreeAsync(prev, 0));
      CK(cudaDeviceSynchronize());
    }
  }
  {
    // What differs between this harness and kite_bench's, one thing at a
    // time, back to back: inputs and outputs from a memory pool (as kite's
    // runtime allocates them), input values with a normal-like spread, and
    // kite's own PTX (from `kite inspect --emit=ptx`, bundle/mb/softmax.ptx)
    // loaded by the driver instead of nvcc's build of the same CUDA.
    g_b2b = true;
    cudaMemPool_t pool = caching_pool();
    void *px, *py;
    CK(cudaMallocFromPoolAsync(&px, n * 2, pool, 0));
    CK(cudaMallocFromPoolAsync(&py, n * 2, pool, 0));
    CK(cudaMemcpy(px, x, n * 2, cudaMemcpyDeviceToDevice));
    float ms = timeit([&] { k_softmax<<<R, 256, 4096>>>((bf16*)px, (bf16*)py); });
    CK(cudaMemcpy(y, py, n * 2, cudaMemcpyDeviceToDevice));
    check("env: x, y from a pool", ms);
    CK(cudaFreeAsync(px, 0)); CK(cudaFreeAsync(py, 0)); CK(cudaDeviceSynchronize());
    bf16* xn; CK(cudaMalloc(&xn, n * 2));
    init_normal<<<1024, 256>>>(xn, n, 3);
    printf("env: normal-like input (no reference check): %.4f ms\n", timeit([&] { k_softmax<<<R, 256, 4096>>>(xn, y); }));
    CK(cudaFree(xn));
    const char* ptxPath = getenv("MB_PTX");
    std::ifstream in(ptxPath ? ptxPath : "bundle/mb/softmax.ptx");
    if (in) {
      std::stringstream ss; ss << in.rdbuf();
      std::string ptx = ss.str();
      CUmodule mod; CUfunction fn;
      if (cuModuleLoadData(&mod, ptx.c_str()) == CUDA_SUCCESS && cuModuleGetFunction(&fn, mod, "kite_softmax") == CUDA_SUCCESS) {
        void* args[] = {&x, &y};
        float ms = timeit([&] { cuLaunchKernel(fn, R, 1, 1, 256, 1, 1, 4096, 0, args, nullptr); });
        check("env: kite's PTX, driver JIT", ms);
      } else printf("env: cannot load kite's PTX\n");
    } else printf("env: no PTX file\n");
    g_b2b = false;
    g_reset = true;
    check("sync+reset: kite k_softmax", timeit([&] { k_softmax<<<R, 256, 4096>>>(x, y); }));
    check("sync+reset: s5 ld L2 evict_last, st", timeit([&] { s5<6, 256, 0><<<R, 256, 4096>>>(x, y); }));
    g_reset = false;
    check("sync: s5 ld L2 evict_last, st", timeit([&] { s5<6, 256, 0><<<R, 256, 4096>>>(x, y); }));
  }
  g_b2b = false;
  check("s0 generated", timeit([&] { s0<1><<<R, 256, 4096>>>(x, y); }));
  check("s5 plain 256", timeit([&] { s5<-1, 256><<<R, 256, 4096>>>(x, y); }));
  check("s5 nc.noalloc.256B 256", timeit([&] { s5<0, 256><<<R, 256, 4096>>>(x, y); }));
  check("s5 L2::256B 256", timeit([&] { s5<1, 256><<<R, 256, 4096>>>(x, y); }));
  check("s5 nc 256", timeit([&] { s5<2, 256><<<R, 256, 4096>>>(x, y); }));
  check("s5 plain 128", timeit([&] { s5<-1, 128><<<R, 128, 4096>>>(x, y); }));
  check("s5 L2::256B 128", timeit([&] { s5<1, 128><<<R, 128, 4096>>>(x, y); }));
  check("s5 plain 512", timeit([&] { s5<-1, 512><<<R, 512, 4096>>>(x, y); }));
  check("s5 L2::256B 512", timeit([&] { s5<1, 512><<<R, 512, 4096>>>(x, y); }));
  check("s5 plain 1024", timeit([&] { s5<-1, 1024><<<R, 1024, 8192>>>(x, y); }));
  check("s5 L2::256B 1024", timeit([&] { s5<1, 1024><<<R, 1024, 8192>>>(x, y); }));
  check("kite k_softmax", timeit([&] { k_softmax<<<R, 256, 4096>>>(x, y); }));
  {
    // As run_plan does: a stream-ordered allocation for the output at each launch, the previous one freed after it.
    void* prev = nullptr;
    float ms = timeit([&] {
      void* p; CK(cudaMallocAsync(&p, n * 2, 0));
      k_softmax<<<R, 256, 4096>>>(x, (bf16*)p);
      if (prev) CK(cudaFreeAsync(prev, 0));
      prev = p;
    });
    CK(cudaMemcpy(y, prev, n * 2, cudaMemcpyDeviceToDevice));
    check("kite k_softmax + mallocAsync", ms);
    CK(cudaFreeAsync(prev, 0));
  }
  check("s0 generated again", timeit([&] { s0<1><<<R, 256, 4096>>>(x, y); }));
  if (getenv("MB_SOFTMAX")) {

  check("s0 minblocks 8", timeit([&] { s0<8><<<R, 256, 4096>>>(x, y); }));
  check("s0 minblocks 6", timeit([&] { s0<6><<<R, 256, 4096>>>(x, y); }));
  check("s2 lazy cvt", timeit([&] { s2<1, false><<<R, 256, 4096>>>(x, y); }));
  check("s2 lazy cvt mb8", timeit([&] { s2<8, false><<<R, 256, 4096>>>(x, y); }));
  check("s2 lazy cvt+exp", timeit([&] { s2<1, true><<<R, 256, 4096>>>(x, y); }));
  check("s2 lazy cvt+exp mb8", timeit([&] { s2<8, true><<<R, 256, 4096>>>(x, y); }));
  check("s4 reg prefetch 2/SM", timeit([&] { s4<<<sms * 2, 256, 4096>>>(x, y); }));
  check("s4 reg prefetch 3/SM", timeit([&] { s4<<<sms * 3, 256, 4096>>>(x, y); }));
  {
    constexpr int D = 2; int sm = D * C * 2 + 64 + 2048; attr(s3<D, 1>, sm);
    for (int b : {2, 3, 4, 6}) { char nm[64]; snprintf(nm, 64, "s3 bulk D2 %d/SM", b); check(nm, timeit([&] { s3<D, 1><<<sms * b, 256, sm>>>(x, y); })); }
  }
  {
    constexpr int D = 3; int sm = D * C * 2 + 64 + 2048; attr(s3<D, 1>, sm);
    for (int b : {2, 3, 4}) { char nm[64]; snprintf(nm, 64, "s3 bulk D3 %d/SM", b); check(nm, timeit([&] { s3<D, 1><<<sms * b, 256, sm>>>(x, y); })); }
  }
  {
    constexpr int D = 4; int sm = D * C * 2 + 64 + 2048; attr(s3<D, 1>, sm);
    for (int b : {1, 2, 3}) { char nm[64]; snprintf(nm, 64, "s3 bulk D4 %d/SM", b); check(nm, timeit([&] { s3<D, 1><<<sms * b, 256, sm>>>(x, y); })); }
  }
  {
    constexpr int D = 1; int sm = D * C * 2 + 64 + 2048; attr(s3<D, 1>, sm);
    for (int b : {4, 6, 8}) { char nm[64]; snprintf(nm, 64, "s3 bulk D1 %d/SM", b); check(nm, timeit([&] { s3<D, 1><<<sms * b, 256, sm>>>(x, y); })); }
  }
  }
  {
    // add 1024x1024 f32 (launch-bound): kite's kernel alone and with an
    // output allocated from a caching pool at each launch.
    const size_t an = 1 << 20;
    float *ax, *ay, *ao;
    CK(cudaMalloc(&ax, an * 4)); CK(cudaMalloc(&ay, an * 4)); CK(cudaMalloc(&ao, an * 4));
    cudaMemPool_t pool = caching_pool();
    for (int b2b = 0; b2b < 2; ++b2b) {
      g_b2b = b2b;
      float plain = timeit([&] { k_add<<<1024, 128>>>(ax, ay, ao); }, 200);
      void* prev = nullptr;
      float pooled = timeit([&] {
        void* p; CK(cudaMallocFromPoolAsync(&p, an * 4, pool, 0));
        k_add<<<1024, 128>>>(ax, ay, (float*)p);
        if (prev) CK(cudaFreeAsync(prev, 0));
        prev = p;
      }, 200);
      CK(cudaFreeAsync(prev, 0)); CK(cudaDeviceSynchronize());
      printf("add 1024x1024 (%s): kite kernel %.4f ms, with pool alloc/free %.4f ms\n",
             b2b ? "back to back" : "synchronized", plain, pooled);
    }
    g_b2b = false;
    CK(cudaFree(ax)); CK(cudaFree(ay)); CK(cudaFree(ao));
  }
  CK(cudaFree(y)); CK(cudaFree(yref));
  // cross entropy
  size_t cn = (size_t)CR * CC;
  bf16* cx; i64* tg; float *lo, *lref;
  CK(cudaMalloc(&cx, cn * 2)); CK(cudaMalloc(&tg, CR * 8)); CK(cudaMalloc(&lo, CR * 4)); CK(cudaMalloc(&lref, CR * 4));
  init_bf16<<<1024, 256>>>(cx, cn, 11, 16.f);
  std::vector<i64> ht(CR); for (int i = 0; i < CR; ++i) ht[i] = (i * 7919) % CC;
  CK(cudaMemcpy(tg, ht.data(), CR * 8, cudaMemcpyHostToDevice));
  ce_ref<<<CR, 256>>>(cx, tg, lref); CK(cudaDeviceSynchronize());
  std::vector<float> r1(CR), r2(CR); CK(cudaMemcpy(r1.data(), lref, CR * 4, cudaMemcpyDeviceToHost));
  double cbytes = cn * 2.0;
  auto cchk = [&](const char* name, float ms) {
    CK(cudaMemcpy(r2.data(), lo, CR * 4, cudaMemcpyDeviceToHost));
    double md = 0; for (int i = 0; i < CR; ++i) md = std::max(md, (double)fabsf(r1[i] - r2[i]));
    printf("%-28s %.4f ms %6.0f GB/s %5.1f%% copy  max diff %.2e\n", name, ms, cbytes / ms / 1e6, 100.0 * cbytes / ms / 1e6 / copybw, md);
    CK(cudaMemset(lo, 0, CR * 4));
  };
  cchk("ce ref", timeit([&] { ce_ref<<<CR, 256>>>(cx, tg, lo); }));
  cchk("ce local W4 U1", timeit([&] { ce_local<4, 1, 1><<<CR, 128, 1024>>>(cx, tg, lo); }));
  cchk("kite k_ce1 (1 row, 4 warps, 1024)", timeit([&] { k_ce1<<<CR, 128, 2048>>>(cx, tg, lo); }));
  cchk("kite k_ce2 (2 rows, 4 warps, 1024, .cs)", timeit([&] { k_ce2<<<CR / 2, 128, 2048>>>(cx, tg, lo); }));
  cchk("ce local W4 U1 again", timeit([&] { ce_local<4, 1, 1><<<CR, 128, 1024>>>(cx, tg, lo); }));
  if (getenv("MB_CE")) {
  cchk("ce local W2 U4", timeit([&] { ce_local<2, 4, 1><<<CR, 64, 1024>>>(cx, tg, lo); }));
  cchk("ce local W2 U2", timeit([&] { ce_local<2, 2, 1><<<CR, 64, 1024>>>(cx, tg, lo); }));
  cchk("ce local W4 U2", timeit([&] { ce_local<4, 2, 1><<<CR, 128, 1024>>>(cx, tg, lo); }));
  cchk("ce local W4 U4", timeit([&] { ce_local<4, 4, 1><<<CR, 128, 1024>>>(cx, tg, lo); }));
  cchk("ce local W8 U2", timeit([&] { ce_local<8, 2, 1><<<CR, 256, 1024>>>(cx, tg, lo); }));
  cchk("ce local W8 U4", timeit([&] { ce_local<8, 4, 1><<<CR, 256, 1024>>>(cx, tg, lo); }));
  cchk("ce local W1 U4", timeit([&] { ce_local<1, 4, 1><<<CR, 32, 1024>>>(cx, tg, lo); }));
  cchk("ce local W1 U8", timeit([&] { ce_local<1, 8, 1><<<CR, 32, 1024>>>(cx, tg, lo); }));
  cchk("ce local W4 U1", timeit([&] { ce_local<4, 1, 1><<<CR, 128, 1024>>>(cx, tg, lo); }));
  cchk("ce lane W2 U4", timeit([&] { ce_lane<2, 4, 1><<<CR, 64, 1024>>>(cx, tg, lo); }));
  cchk("ce lane W2 U2", timeit([&] { ce_lane<2, 2, 1><<<CR, 64, 1024>>>(cx, tg, lo); }));
  cchk("ce lane W4 U1", timeit([&] { ce_lane<4, 1, 1><<<CR, 128, 1024>>>(cx, tg, lo); }));
  cchk("ce lane W4 U2", timeit([&] { ce_lane<4, 2, 1><<<CR, 128, 1024>>>(cx, tg, lo); }));
  cchk("ce lane W8 U1", timeit([&] { ce_lane<8, 1, 1><<<CR, 256, 1024>>>(cx, tg, lo); }));
  cchk("ce lane W8 U2", timeit([&] { ce_lane<8, 2, 1><<<CR, 256, 1024>>>(cx, tg, lo); }));
  cchk("ce lane W16 U1", timeit([&] { ce_lane<16, 1, 1><<<CR, 512, 2048>>>(cx, tg, lo); }));
  }
  printf("done\n");
  return 0;
}
