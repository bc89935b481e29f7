//===- kite_gemm.cuh - pipelined tensor-core matrix products ---*- CUDA -*-===//
//
// The main loop of a tiled matrix product, for kernels whose K loop is a
// plain `acc = addmm(acc, x[tm, tk], y[tk, tn])` (the kite-matmul-mainloop
// pass marks them). One program computes a BM x BN tile of f32 sums:
//
//   - the operands' K tiles stream through a ring of `Stages` shared-memory
//     buffers, filled by cp.async 16-byte copies (zero-filled past the valid
//     rows, columns and K) while the tensor cores work on earlier buffers;
//   - the shared-memory rows are XOR-swizzled in 16-byte chunks so that the
//     ldmatrix reads of 8 rows hit 8 different bank groups;
//   - the warps form a WM x WN grid over the tile; each holds its TM x TN
//     part of the sums in registers, in mma.m16n8k16's fragment layout;
//   - at the end the sums go to shared memory as a float tile of BM rows of
//     BN + kGemmPad, element (r, c) at gemm_sum_index(r, c), which the
//     generated epilogue reads.
//
// How an operand's tiles get from global to shared memory is the main
// loop's CopyA/CopyB (GemmCopy): 16-byte cp.async copies where rows are
// 16-byte aligned; where rows are contiguous but their stride is not a
// multiple of 16 bytes (4097 x 4095), aligned 16-byte loads shifted into
// place in registers; element by element otherwise (a transposed view).
//
// Requires sm_80 or later (cp.async, ldmatrix, bf16 mma).
//
//===----------------------------------------------------------------------===//

#pragma once

#include "kite_device.cuh"
#include "kite_wgmma_ops.cuh"

namespace kite_device {

/// Floats of padding after each row of the epilogue tile (conflict-free
/// float2 stores of the fragments).
constexpr int kGemmPad = 8;

/// Where the sum of tile element (r, c) lives in the epilogue tile of rows
/// of LDC floats: the 16-byte chunks of columns 32 to 63 (mod 64) swap in
/// pairs, so that the epilogue's 16-byte reads (a warp along a row, 8
/// columns a thread) and the main loops' 8-byte fragment writes both hit
/// every bank once per phase.
template <int LDC> __device__ __forceinline__ int gemm_sum_index(int r, int c) {
  return r * LDC + ((((c >> 2) ^ ((c >> 5) & 1)) << 2) | (c & 3));
}

/// 16 bytes from global to shared memory, asynchronously; bytes past
/// `src_bytes` (0 to 16) are zero-filled and not read.
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)),
               "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int Pending> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

/// The physical 16-byte chunk of logical chunk `c` in row `r` of a buffer
/// with `Chunks` chunks per row: 8 consecutive rows at one logical chunk land
/// in 8 different 16-byte bank groups.
template <int Chunks> __device__ __forceinline__ int swizzle(int r, int c) {
  if constexpr (Chunks >= 8)
    return c ^ (r & 7);
  else if constexpr (Chunks == 4)
    return c ^ ((r >> 1) & 3);
  else if constexpr (Chunks == 2)
    return c ^ ((r >> 2) & 1);
  else
    return c;
}

/// The element-by-element copy of a Rows x Cols tile of a strided global
/// matrix (for rows that cannot be copied 16 bytes at a time): each thread
/// loads up to 32 of its elements into registers before it stores any, so
/// that many loads are in flight at once, then hands each to
/// `store(row, col, value)`. Elements at or past (validRows, validCols)
/// read as zero.
template <int Rows, int Cols, int Threads, class T, class Store>
__device__ __forceinline__ void gemm_copy_elements(const T *src, i64 rowStride, i64 colStride,
                                                   int validRows, int validCols, int tid,
                                                   Store store) {
  constexpr int Per = (Rows * Cols + Threads - 1) / Threads; // elements per thread
  constexpr int Batch = Per < 32 ? Per : 32;
#pragma unroll 1
  for (int base = 0; base < Per; base += Batch) {
    T v[Batch];
#pragma unroll
    for (int j = 0; j < Batch; ++j) {
      const int i = tid + (base + j) * Threads;
      const int r = i / Cols, col = i % Cols;
      v[j] = cvt<T>(0.f);
      if (i < Rows * Cols && r < validRows && col < validCols)
        v[j] = src[(i64)r * rowStride + (i64)col * colStride];
    }
#pragma unroll
    for (int j = 0; j < Batch; ++j) {
      const int i = tid + (base + j) * Threads;
      if (i < Rows * Cols)
        store(i / Cols, i % Cols, v[j]);
    }
  }
}

/// How a main loop copies an operand's tiles to shared memory.
enum GemmCopy : int {
  /// One element at a time (any strides).
  kCopyElements = 0,
  /// 16-byte cp.async copies: contiguous rows, 16-byte aligned data and
  /// row strides.
  kCopyAsync = 1,
  /// Aligned 16-byte loads shifted into place (gemm_copy_shifted):
  /// contiguous rows of any stride of at least 32 bytes, 16-byte aligned
  /// data.
  kCopyShifted = 2,
};

/// 16 bytes of global memory at `addr` (16-byte aligned) if `pred`, else
/// zeros: a predicated load, no branch.
__device__ __forceinline__ uint4 ld_global_v4_if(unsigned long long addr, bool pred) {
  uint4 v;
  asm("{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %5, 0;\n"
      "mov.b32 %0, 0;\n"
      "mov.b32 %1, 0;\n"
      "mov.b32 %2, 0;\n"
      "mov.b32 %3, 0;\n"
      "@p ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n"
      "}\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(addr), "r"((int)pred));
  return v;
}

/// Bytes [s, s + 16) of the 32 bytes in `w` (s < 16): the 16-byte chunk
/// that starts s bytes into an aligned pair of chunks.
__device__ __forceinline__ uint4 gemm_shift_chunk(const unsigned (&w)[8], int s) {
  const int q = s >> 2;
  const unsigned bits = (s & 3) * 8;
  unsigned x[5];
#pragma unroll
  for (int i = 0; i < 5; ++i)
    x[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];
  return make_uint4(__funnelshift_r(x[0], x[1], bits), __funnelshift_r(x[1], x[2], bits),
                    __funnelshift_r(x[2], x[3], bits), __funnelshift_r(x[3], x[4], bits));
}

/// The copy of a Rows x Cols tile of a matrix with contiguous rows whose
/// stride is not a multiple of 16 bytes: each 16-byte chunk of a tile row
/// is read as the one or two aligned 16-byte chunks of global memory that
/// hold it, shifted into place in registers and stored to shared memory at
/// `dst + at(r, col)` (col a multiple of 16 bytes' elements) in one 16-byte
/// store. Each thread loads a batch of up to MaxBatch chunks (8 registers
/// each) before it stores any. Elements at or past (validRows, validCols)
/// read as zero.
///
/// The aligned loads read bytes around a chunk's elements; they stay
/// inside the tensor: `src`'s tensor starts 16-byte aligned (so rounding
/// down never leaves it), a row other than the last valid one is followed
/// by a row of the tensor at least 32 bytes further (rowStride of 32 bytes
/// or more), and in the last valid row a chunk whose aligned reads would
/// pass its valid elements is read element by element.
template <int Rows, int Cols, int Threads, int MaxBatch, class T, class At>
__device__ __forceinline__ void gemm_copy_shifted(T *dst, const T *src, i64 rowStride,
                                                  int validRows, int validCols, int tid, At at) {
  constexpr int E = 16 / sizeof(T); // elements per chunk
  constexpr int Chunks = Cols / E;
  constexpr int Per = (Rows * Chunks + Threads - 1) / Threads;
  constexpr int Batch = Per < MaxBatch ? Per : MaxBatch;
  static_assert(Cols % E == 0, "gemm_copy_shifted: rows of whole 16-byte chunks");
#pragma unroll 1
  for (int base = 0; base < Per; base += Batch) {
    unsigned w[Batch][8];
    int shift[Batch];
    bool slow[Batch]; // the last valid row's end: element by element
    // The aligned loads first, predicated and without branches, so that
    // all of a batch's are in flight at once.
#pragma unroll
    for (int j = 0; j < Batch; ++j) {
      const int i = tid + (base + j) * Threads;
      const int r = i / Chunks, c = i % Chunks;
      const int n = validCols - c * E; // valid elements of the chunk (if positive)
      const bool valid = i < Rows * Chunks && r < validRows && n > 0;
      const T *p = src + (i64)r * rowStride + c * E;
      const unsigned long long addr = reinterpret_cast<unsigned long long>(p);
      const int s = (int)(addr & 15);
      const unsigned long long q = addr - s;
      const bool second = s + (n < E ? n : E) * (int)sizeof(T) > 16;
      const unsigned long long end = q + (second ? 32 : 16);
      const bool fast =
          r + 1 < validRows ||
          end <= reinterpret_cast<unsigned long long>(src + (i64)r * rowStride + validCols);
      slow[j] = valid && !fast;
      shift[j] = fast ? s : 0;
      const uint4 lo = ld_global_v4_if(q, valid && fast);
      const uint4 hi = ld_global_v4_if(q + 16, valid && fast && second);
      w[j][0] = lo.x, w[j][1] = lo.y, w[j][2] = lo.z, w[j][3] = lo.w;
      w[j][4] = hi.x, w[j][5] = hi.y, w[j][6] = hi.z, w[j][7] = hi.w;
    }
    // The last valid row's end, where the aligned reads could pass the
    // tensor's: its elements one at a time, already in place.
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4,
                  "gemm_copy_shifted: elements of 1, 2 or 4 bytes");
    using Raw = typename Bits<sizeof(T) < 2 ? 2 : sizeof(T)>::type;
    constexpr int PerWord = 4 / sizeof(T);
#pragma unroll
    for (int j = 0; j < Batch; ++j) {
      if (!slow[j])
        continue;
      const int i = tid + (base + j) * Threads;
      const int r = i / Chunks, c = i % Chunks;
      const int n = validCols - c * E;
      const T *p = src + (i64)r * rowStride + c * E;
#pragma unroll
      for (int e = 0; e < E; ++e) {
        unsigned bitsOf = 0u;
        if (e < n) {
          if constexpr (sizeof(T) == 1)
            bitsOf = *reinterpret_cast<const unsigned char *>(p + e);
          else
            bitsOf = *reinterpret_cast<const Raw *>(p + e);
        }
        w[j][e / PerWord] |= bitsOf << (8 * sizeof(T) * (e % PerWord));
      }
    }
#pragma unroll
    for (int j = 0; j < Batch; ++j) {
      const int i = tid + (base + j) * Threads;
      if (i >= Rows * Chunks)
        continue;
      const int r = i / Chunks, c = i % Chunks;
      uint4 u = gemm_shift_chunk(w[j], shift[j]);
      // Zero the elements past the valid columns (read from the next ones).
      const int bytes = (validCols - c * E) * (int)sizeof(T);
      if (bytes < 16) {
        unsigned x[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int keep = bytes - 4 * k;
          x[k] = keep >= 4 ? x[k] : keep <= 0 ? 0u : x[k] & ((1u << (keep * 8)) - 1u);
        }
        u = make_uint4(x[0], x[1], x[2], x[3]);
      }
      *reinterpret_cast<uint4 *>(dst + at(r, c * E)) = u;
    }
  }
}

/// Copies a Rows x Cols tile of a strided global matrix into a swizzled
/// shared buffer (row-major, Cols contiguous), by `Threads` threads of which
/// this is number `tid`, as `Copy` (a GemmCopy) says. Elements at or past
/// (validRows, validCols) read as zero. With kCopyAsync the copy is
/// asynchronous (cp.async); the others have stored when they return.
/// kCopyShifted holds up to MaxBatch chunks of 8 registers at once.
template <int Rows, int Cols, int Threads, int Copy, int MaxBatch = 2, class T>
__device__ __forceinline__ void gemm_load_tile(T *dst, const T *src, i64 rowStride,
                                               i64 colStride, int validRows, int validCols,
                                               int tid) {
  constexpr int Chunks = Cols / 8;
  auto at = [](int r, int col) { return r * Cols + swizzle<Chunks>(r, col / 8) * 8 + col % 8; };
  if constexpr (Copy == kCopyAsync) {
#pragma unroll
    for (int i = tid; i < Rows * Chunks; i += Threads) {
      const int r = i / Chunks, c = i % Chunks;
      const int cols = validCols - c * 8;
      const int bytes = r < validRows && cols > 0 ? (cols >= 8 ? 16 : cols * 2) : 0;
      const T *g = bytes ? src + (i64)r * rowStride + c * 8 : src;
      cp_async16(dst + r * Cols + swizzle<Chunks>(r, c) * 8, g, bytes);
    }
  } else if constexpr (Copy == kCopyShifted) {
    gemm_copy_shifted<Rows, Cols, Threads, MaxBatch>(dst, src, rowStride, validRows, validCols, tid, at);
  } else {
    gemm_copy_elements<Rows, Cols, Threads>(
        src, rowStride, colStride, validRows, validCols, tid,
        [&](int r, int col, T v) { dst[at(r, col)] = v; });
  }
}

/// The pipelined main loop: sums A[0:validM, 0:K] x B[0:K, 0:validN] for one
/// BM x BN tile into shared memory at `smem` as rows of BN + kGemmPad
/// floats (element (r, c) at gemm_sum_index).
/// A and B point at the tile's first row and column (element (m0, k0) and
/// (k0, n0)); strides are in elements. Every thread of the block calls it
/// (WM * WN warps). Shared memory: Stages * (BM * BK + BK * BN) elements,
/// and at least BM * (BN + kGemmPad) floats.
template <int BM, int BN, int BK, int WM, int WN, int Stages, int CopyA, int CopyB, class T>
__device__ __forceinline__ void mma_mainloop(unsigned char *smem, const T *A, i64 sam, i64 sak,
                                             const T *B, i64 sbk, i64 sbn, int validM,
                                             int validN, int K) {
  constexpr int Threads = WM * WN * 32;
  constexpr int TM = BM / WM, TN = BN / WN; // one warp's part
  constexpr int FM = TM / 16, FN = TN / 8;  // its m16n8 fragments
  static_assert(TM % 16 == 0 && TN % 16 == 0 && BK % 16 == 0 && Stages >= 2,
                "mma_mainloop: warp tiles must be multiples of 16x16, BK of 16");
  constexpr int StageA = BM * BK, StageB = BK * BN; // elements
  T *sA = reinterpret_cast<T *>(smem);
  T *sB = sA + Stages * StageA;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp % WM, wn = warp / WM;

  float acc[FM][FN][4];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        acc[i][j][q] = 0.f;

  const int KT = (K + BK - 1) / BK;
  auto load = [&](int stage, int kt) {
    const int k0 = kt * BK;
    gemm_load_tile<BM, BK, Threads, CopyA>(sA + stage * StageA, A + (i64)k0 * sak, sam, sak,
                                          validM, K - k0, threadIdx.x);
    gemm_load_tile<BK, BN, Threads, CopyB>(sB + stage * StageB, B + (i64)k0 * sbk, sbk, sbn,
                                          K - k0, validN, threadIdx.x);
  };
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < KT)
      load(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < KT; ++kt) {
    cp_async_wait<Stages - 2>();
    __syncthreads();
    // Refill the buffer every warp finished reading in the last iteration.
    const int next = kt + Stages - 1;
    if (next < KT)
      load(next % Stages, next);
    cp_async_commit();

    const T *a = sA + (kt % Stages) * StageA;
    const T *b = sB + (kt % Stages) * StageB;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      unsigned af[FM][4], bf[FN][2];
#pragma unroll
      for (int i = 0; i < FM; ++i) {
        const int r = wm * TM + i * 16 + lane % 16;
        ldmatrix_x4(af[i], a + r * BK + swizzle<BK / 8>(r, kk * 2 + lane / 16) * 8);
      }
#pragma unroll
      for (int j = 0; j < FN; j += 2) {
        const int r = kk * 16 + lane % 16;
        const int c = (wn * TN + j * 8) / 8 + lane / 16;
        unsigned t[4];
        ldmatrix_x4_trans(t, b + r * BN + swizzle<BN / 8>(r, c) * 8);
        bf[j][0] = t[0];
        bf[j][1] = t[1];
        bf[j + 1][0] = t[2];
        bf[j + 1][1] = t[3];
      }
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
          MmaInstr<T>::run(acc[i][j], af[i], bf[j]);
    }
  }
  cp_async_wait<0>();
  __syncthreads();

  // The sums, row-major, over the (now idle) operand buffers.
  float *C = reinterpret_cast<float *>(smem);
  constexpr int LDC = BN + kGemmPad;
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) {
      const int r = wm * TM + i * 16 + g, c = wn * TN + j * 8 + t * 2;
      *reinterpret_cast<float2 *>(C + gemm_sum_index<LDC>(r, c)) =
          make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2 *>(C + gemm_sum_index<LDC>(r + 8, c)) =
          make_float2(acc[i][j][2], acc[i][j][3]);
    }
  __syncthreads();
}

//===----------------------------------------------------------------------===//
// Hopper: warpgroup MMA (wgmma.mma_async, sm_90a)
//===----------------------------------------------------------------------===//

/// A shared-memory matrix descriptor with 128-byte swizzling: `lbo` and
/// `sbo` are the leading- and stride-dimension byte offsets.
__device__ __forceinline__ unsigned long long wgmma_desc(const void *p, unsigned lbo,
                                                         unsigned sbo) {
  unsigned long long d = (smem_addr(p) & 0x3FFFF) >> 4;
  d |= (unsigned long long)((lbo >> 4) & 0x3FFF) << 16;
  d |= (unsigned long long)((sbo >> 4) & 0x3FFF) << 32;
  d |= 1ull << 62;
  return d;
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int Pending> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
// fence_proxy_async (kite_device.cuh) makes this thread's generic-proxy
// shared-memory writes (cp.async included) visible to the async proxy that
// wgmma reads through.

/// Keeps the compiler from moving accumulator reads and writes across a
/// wgmma that is still in flight.
template <int N> __device__ __forceinline__ void wgmma_touch(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+f"(d[i])::"memory");
}

/// Where element (r, col) of a matrix of `Rows` rows of `Bytes`-byte
/// elements lives in wgmma's 128-byte-swizzled shared-memory layout (the
/// buffer 1024-byte aligned): column blocks of 128 bytes (64 elements of 16
/// bits, 128 of 8), each `Rows` rows, the 16-byte chunks of a row XORed
/// with its row mod 8. With rows along K this is the MN-major layout of an
/// operand, with rows along M or N the K-major one.
template <int Rows, int Bytes = 2> __device__ __forceinline__ int sw128_index(int r, int col) {
  constexpr int E = 128 / Bytes, C = 16 / Bytes; // elements a row, a chunk
  return (col / E) * (Rows * E) + r * E + (((col % E) / C) ^ (r & 7)) * C + col % C;
}

/// The sums of one warpgroup's FM m64 blocks of BN columns, in wgmma's
/// accumulator layout.
template <int FM, int BN> using WgmmaSums = float[FM][BN / 2];

/// Pins the registers of wgmmas' A fragments (KS K steps of MT m64
/// blocks), which the tensor cores read asynchronously from the fence to
/// the wait: touched before the fence, they are computed before it;
/// touched after the wait, they are not given to other values before it.
template <int KS, int MT>
__device__ __forceinline__ void wgmma_touch_a(unsigned (&a)[KS][MT][4]) {
#pragma unroll
  for (int k = 0; k < KS; ++k)
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int i = 0; i < 4; ++i)
        asm volatile("" : "+r"(a[k][m][i])::"memory");
}

/// The same for a warpgroup's sums before the fence of the wgmmas that
/// accumulate into them: their initial values are written before it.
template <int FM, int BN> __device__ __forceinline__ void wgmma_touch_sums(WgmmaSums<FM, BN> &acc) {
#pragma unroll
  for (int i = 0; i < FM; ++i)
    wgmma_touch(acc[i]);
}

/// Copies a BK x BN tile of a strided global matrix (B, K rows) into
/// shared memory as BN / 64 column blocks of BK rows of 64 elements (128
/// bytes), 16-byte chunks swizzled by row: wgmma's MN-major layout with
/// 128-byte swizzling. Elements at or past (validRows, validCols) read as
/// zero. `Copy` and `MaxBatch` as for gemm_load_tile.
template <int Rows, int Cols, int Threads, int Copy, int MaxBatch = 2, class T>
__device__ __forceinline__ void wgmma_load_b(T *dst, const T *src, i64 rowStride, i64 colStride,
                                             int validRows, int validCols, int tid) {
  constexpr int Chunks = Cols / 8;
  auto at = [](int r, int col) { return sw128_index<Rows>(r, col); };
  if constexpr (Copy == kCopyAsync) {
#pragma unroll
    for (int i = tid; i < Rows * Chunks; i += Threads) {
      const int r = i / Chunks, c = i % Chunks;
      const int cols = validCols - c * 8;
      const int bytes = r < validRows && cols > 0 ? (cols >= 8 ? 16 : cols * 2) : 0;
      const T *g = bytes ? src + (i64)r * rowStride + c * 8 : src;
      cp_async16(dst + at(r, c * 8), g, bytes);
    }
  } else if constexpr (Copy == kCopyShifted) {
    gemm_copy_shifted<Rows, Cols, Threads, MaxBatch>(dst, src, rowStride, validRows, validCols, tid, at);
  } else {
    gemm_copy_elements<Rows, Cols, Threads>(src, rowStride, colStride, validRows, validCols, tid,
                                            [&](int r, int col, T v) { dst[at(r, col)] = v; });
  }
}

template <int FM, int BN> __device__ __forceinline__ void wgmma_zero(WgmmaSums<FM, BN> &acc) {
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < BN / 2; ++j)
      acc[i][j] = 0.f;
}

/// One wgmma of a 64-row block, both operands in shared memory: 16-bit
/// A (K-major) with B MN-major or K-major (`BKMajor`), or 8-bit floats with
/// both K-major (the only form the instruction has for them).
template <int N, bool BKMajor, class TA, class TB>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], unsigned long long da,
                                         unsigned long long db) {
  if constexpr (sizeof(TA) == 1) {
    static_assert(BKMajor && sizeof(TB) == 1, "8-bit wgmma takes both operands K-major");
    WgmmaFp8<N, TA, TB>::run(d, da, db);
  } else {
    WgmmaOp<N, TA>::template run<BKMajor ? 0 : 1>(d, da, db);
  }
}

/// One 128-byte-deep K stage of wgmmas (64 elements of 16 bits, 128 of 8),
/// issued and committed (not waited for): `a` is this warpgroup's first row
/// of the stage's A buffer (rows of 128 bytes, 128-byte swizzled), `b` the
/// stage's B buffer: BN rows of 128 bytes like A's (`BKMajor`), or BN / 64
/// column blocks of 64 K rows of 128 bytes (16-bit B, MN-major).
template <int FM, int BN, bool BKMajor, class TA, class TB>
__device__ __forceinline__ void wgmma_stage_bytes(WgmmaSums<FM, BN> &acc, const unsigned char *a,
                                                  const unsigned char *b) {
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    // Each step is 32 bytes of K (k16 of 16 bits, k32 of 8): 32 bytes
    // further along a K-major operand's swizzled rows, 16 K rows (2 groups
    // of 8 rows of 128 bytes) further down an MN-major one.
    const unsigned long long db = BKMajor ? wgmma_desc(b + kk * 32, 16, 1024)
                                          : wgmma_desc(b + kk * 16 * 128, 64 * 128, 1024);
#pragma unroll
    for (int i = 0; i < FM; ++i)
      wgmma_ss<BN, BKMajor, TA, TB>(acc[i], wgmma_desc(a + i * 64 * 128 + kk * 32, 16, 1024), db);
  }
  wgmma_commit();
#pragma unroll
  for (int i = 0; i < FM; ++i)
    wgmma_touch(acc[i]);
}

/// One 64-deep K stage of 16-bit wgmmas (wgmma_stage_bytes with B MN-major).
template <int FM, int BN, class T>
__device__ __forceinline__ void wgmma_stage(WgmmaSums<FM, BN> &acc, const T *a, const T *b) {
  wgmma_stage_bytes<FM, BN, false, T, T>(acc, reinterpret_cast<const unsigned char *>(a),
                                         reinterpret_cast<const unsigned char *>(b));
}

/// Waits until at most `Pending` committed stages are still running.
template <int Pending, int FM, int BN>
__device__ __forceinline__ void wgmma_drain(WgmmaSums<FM, BN> &acc) {
  wgmma_wait<Pending>();
#pragma unroll
  for (int i = 0; i < FM; ++i)
    wgmma_touch(acc[i]);
}

/// Stores a warpgroup's sums, whose first row is `row0` of the tile, to the
/// row-major tile C[.][BN + kGemmPad]; `t` is the thread's index in its
/// warpgroup.
template <int FM, int BN>
__device__ __forceinline__ void wgmma_store_sums(float *C, const WgmmaSums<FM, BN> &acc,
                                                 int row0, int t) {
  constexpr int LDC = BN + kGemmPad;
  const int w = t / 32, g = (t % 32) / 4, q = t % 4;
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int r = row0 + i * 64 + w * 16 + g, c = j * 8 + q * 2;
      *reinterpret_cast<float2 *>(C + gemm_sum_index<LDC>(r, c)) =
          make_float2(acc[i][j * 4], acc[i][j * 4 + 1]);
      *reinterpret_cast<float2 *>(C + gemm_sum_index<LDC>(r + 8, c)) =
          make_float2(acc[i][j * 4 + 2], acc[i][j * 4 + 3]);
    }
}

/// The wgmma main loop, with the same contract as mma_mainloop: sums
/// A[0:validM, 0:K] x B[0:K, 0:validN] for one BM x BN tile into shared
/// memory (rows of BN + kGemmPad floats). `WG` warpgroups (4 warps each) split
/// the tile's rows, 64-row blocks each; K goes 64 at a time through
/// `Stages` buffers (A rows of 128 bytes, B in 64-column blocks, both
/// 128-byte swizzled), filled by cp.async while earlier stages' wgmmas run.
/// `smem` must be 1024-byte aligned. Compiled for an architecture without
/// wgmma (before sm_90a), it runs mma_mainloop on the same tile instead.
template <int BM, int BN, int WG, int Stages, int CopyA, int CopyB, class T>
__device__ __forceinline__ void wgmma_mainloop(unsigned char *smem, const T *A, i64 sam,
                                               i64 sak, const T *B, i64 sbk, i64 sbn,
                                               int validM, int validN, int K) {
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // No wgmma before sm_90a: the same tile on mma.sync, the warps as a
  // (2 WG) x 2 grid (same shared memory and sums per thread).
  mma_mainloop<BM, BN, 64, 2 * WG, 2, Stages, CopyA, CopyB, T>(smem, A, sam, sak, B, sbk, sbn,
                                                             validM, validN, K);
#else
  constexpr int BK = 64, Threads = WG * 128;
  constexpr int MW = BM / WG;  // rows of one warpgroup
  constexpr int FM = MW / 64;  // its m64 blocks
  static_assert(MW % 64 == 0 && BN % 64 == 0 && BN <= 256 && Stages >= 2,
                "wgmma_mainloop: 64-row blocks per warpgroup, BN a multiple of 64 up to 256");
  constexpr int StageA = BM * BK, StageB = BK * BN; // elements
  T *sA = reinterpret_cast<T *>(smem);
  T *sB = sA + Stages * StageA;
  const int wg = threadIdx.x / 128;

  WgmmaSums<FM, BN> acc;
  wgmma_zero<FM, BN>(acc);
  const int KT = (K + BK - 1) / BK;
  auto load = [&](int stage, int kt) {
    const int k0 = kt * BK;
    gemm_load_tile<BM, BK, Threads, CopyA>(sA + stage * StageA, A + (i64)k0 * sak, sam, sak,
                                          validM, K - k0, threadIdx.x);
    wgmma_load_b<BK, BN, Threads, CopyB>(sB + stage * StageB, B + (i64)k0 * sbk, sbk, sbn,
                                        K - k0, validN, threadIdx.x);
  };
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < KT)
      load(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < KT; ++kt) {
    cp_async_wait<Stages - 2>();
    fence_proxy_async();
    __syncthreads();
    const int s = kt % Stages;
    wgmma_stage<FM, BN>(acc, sA + s * StageA + wg * MW * BK, sB + s * StageB);
    // The previous stage's wgmmas are done (this one's may still run);
    // once every warpgroup is there, its buffer can be refilled.
    wgmma_drain<1, FM, BN>(acc);
    __syncthreads();
    const int next = kt + Stages - 1;
    if (next < KT)
      load(next % Stages, next);
    cp_async_commit();
  }
  wgmma_drain<0, FM, BN>(acc);
  cp_async_wait<0>();
  __syncthreads();
  wgmma_store_sums<FM, BN>(reinterpret_cast<float *>(smem), acc, wg * MW, threadIdx.x % 128);
  __syncthreads();
#endif
}

//===----------------------------------------------------------------------===//
// Hopper, warp-specialized: a producer warpgroup copies, consumer
// warpgroups multiply, synchronized by mbarriers
//===----------------------------------------------------------------------===//

__device__ __forceinline__ void mbar_init(unsigned long long *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count)
               : "memory");
}
/// Spins until the barrier's phase with `parity` has completed.
__device__ __forceinline__ void mbar_wait(unsigned long long *bar, unsigned parity) {
  asm volatile("{\n"
               ".reg .pred done;\n"
               "KITE_MBAR_WAIT:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra KITE_MBAR_WAIT;\n"
               "}\n" ::"r"(smem_addr(bar)),
               "r"(parity)
               : "memory");
}
/// One arrival (release: this thread's earlier shared-memory writes are
/// visible to whoever waits on the phase).
__device__ __forceinline__ void mbar_arrive(unsigned long long *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
/// One arrival once this thread's earlier cp.async copies have landed.
__device__ __forceinline__ void mbar_arrive_cp_async(unsigned long long *bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar))
               : "memory");
}
/// One arrival that also adds `bytes` to the transactions (TMA copies) the
/// phase waits for.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned long long *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

/// One arrival on the mbarrier at `bar`'s offset in the shared memory of
/// the cluster's program `rank`: a computing warp's "done reading this
/// stage". Release at CTA scope (the default), not `.release.cluster`:
/// ptxas puts a MEMBAR.ALL.GPU before a cluster-scope release (seen in the
/// SASS of sm_90a, CUDA 13), a full memory fence in every warp's every K
/// step, and the stage's reads need none, since they have completed (the
/// wgmma group that read it has been waited for) before the arrival.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned long long *bar, unsigned rank) {
  asm volatile("{\n"
               ".reg .b32 remote;\n"
               "mapa.shared::cluster.u32 remote, %0, %1;\n"
               "mbarrier.arrive.release.cta.shared::cluster.b64 _, [remote];\n"
               "}\n" ::"r"(smem_addr(bar)),
               "r"(rank)
               : "memory");
}
/// Every thread of the cluster's programs waits for all the others
/// (release/acquire at cluster scope): after the mbarriers' set-up, before
/// another program's copies or arrivals may reach them, and at the end,
/// so that no program exits while another may still arrive on its
/// mbarriers.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n"
               "barrier.cluster.wait.acquire;\n" ::: "memory");
}
/// The program's rank in its cluster.
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

/// The shared-memory ring of a warp-specialized main loop: `Stages` A and B
/// buffers, then a `full` and an `empty` mbarrier per stage. A stage is 128
/// bytes of K: KA elements of TA (64 of 16 bits, 128 of 8) for each of A's
/// BM rows, and as many bytes for each of B's BN columns.
template <int BM, int BN, int Stages, class TA, class TB = TA> struct WgmmaRing {
  static constexpr int KA = 128 / sizeof(TA);
  static constexpr int StageA = BM * KA, StageB = BN * (128 / sizeof(TB)); // elements
  TA *a;
  TB *b;
  unsigned long long *full, *empty;
  __device__ __forceinline__ explicit WgmmaRing(unsigned char *smem) {
    a = reinterpret_cast<TA *>(smem);
    b = reinterpret_cast<TB *>(a + Stages * StageA);
    full = reinterpret_cast<unsigned long long *>(b + Stages * StageB);
    empty = full + Stages;
  }
  /// Thread 0 initializes the barriers; every thread must call it, as it
  /// ends with a block barrier.
  __device__ __forceinline__ void init(unsigned fullCount, unsigned emptyCount) {
    if (threadIdx.x == 0) {
      for (int s = 0; s < Stages; ++s) {
        mbar_init(&full[s], fullCount);
        mbar_init(&empty[s], emptyCount);
      }
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
  }
};

/// A consumer warpgroup's side of the ring: waits for each stage to be
/// full, runs its wgmmas on rows [row0, row0 + 64 FM) of the stage's A, and
/// frees the stage once they are done. With `Fence`, the stages were
/// written through the generic proxy (cp.async) and need a proxy fence
/// before wgmma reads them. `BKMajor`: B's stages are K-major.
template <int BM, int BN, int Stages, bool Fence, bool BKMajor, int FM, class TA, class TB>
__device__ __forceinline__ void wgmma_consume(WgmmaRing<BM, BN, Stages, TA, TB> &ring,
                                              WgmmaSums<FM, BN> &acc, int row0, int KT) {
  using Ring = WgmmaRing<BM, BN, Stages, TA, TB>;
  for (int kt = 0; kt < KT; ++kt) {
    const int s = kt % Stages;
    mbar_wait(&ring.full[s], (kt / Stages) & 1);
    if constexpr (Fence)
      fence_proxy_async();
    wgmma_stage_bytes<FM, BN, BKMajor, TA, TB>(
        acc, reinterpret_cast<const unsigned char *>(ring.a + s * Ring::StageA + row0 * Ring::KA),
        reinterpret_cast<const unsigned char *>(ring.b + s * Ring::StageB));
    // The previous stage's wgmmas are done: its buffers can be refilled.
    wgmma_drain<1, FM, BN>(acc);
    if (kt > 0)
      mbar_arrive(&ring.empty[(kt - 1) % Stages]);
  }
  wgmma_drain<0, FM, BN>(acc);
}

/// The skeleton of the warp-specialized main loops (sm_90a): the ring's
/// barriers (`full` expecting `fullCount` arrivals, `empty` one per
/// consumer thread), the last warpgroup running `produce(ring, KT, t)` (t:
/// its thread's index in the warpgroup; KT stages of 128 bytes of K), the
/// `Consumers` warpgroups before it each consuming BM / Consumers rows,
/// then every warpgroup's sums to shared memory at gemm_sum_index's places.
template <int BM, int BN, int Consumers, int Stages, bool Fence, bool BKMajor, class TA,
          class TB, class Produce>
__device__ __forceinline__ void wgmma_specialized(unsigned char *smem, unsigned fullCount, int K,
                                                  Produce produce) {
  constexpr int MW = BM / Consumers, FM = MW / 64;
  static_assert((Consumers == 1 || Consumers == 2) && (MW == 64 || MW == 128) && BN % 64 == 0 &&
                    BN <= 256 && FM * BN / 2 <= 128 && Stages >= 2,
                "warp-specialized main loops: 64 or 128 rows per consumer, BN a multiple of 64 "
                "up to 256, at most 128 sums a thread");
  using Ring = WgmmaRing<BM, BN, Stages, TA, TB>;
  Ring ring(smem);
  ring.init(fullCount, Consumers * 128);
  const int KT = (K + Ring::KA - 1) / Ring::KA;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  WgmmaSums<FM, BN> acc;
  if (wg == Consumers) {
    produce(ring, KT, t);
  } else {
    wgmma_zero<FM, BN>(acc);
    wgmma_consume<BM, BN, Stages, Fence, BKMajor>(ring, acc, wg * MW, KT);
  }
  __syncthreads(); // every stage consumed: the buffers become the sums
  if (wg < Consumers)
    wgmma_store_sums<FM, BN>(reinterpret_cast<float *>(smem), acc, wg * MW, t);
  __syncthreads();
}

/// wgmma_mainloop's contract (sums of a BM x BN tile into shared memory as
/// rows of BN + kGemmPad floats) with the warps split by role: the last
/// warpgroup (the producer) fills the `Stages` buffers with cp.async and
/// signals each stage's `full` mbarrier; the `Consumers` warpgroups before
/// it (1 or 2, 8 or 12 warps in all) each take BM / Consumers rows of the
/// tile, wait on `full`, run the stage's wgmmas and signal its `empty`
/// mbarrier once they have completed. Neither role stops at a block
/// barrier inside the loop. Needs sm_90a for two consumers; with one, an
/// older architecture runs mma_mainloop on the same tile instead.
template <int BM, int BN, int Consumers, int Stages, int CopyA, int CopyB, class T>
__device__ __forceinline__ void wgmma_ws_mainloop(unsigned char *smem, const T *A, i64 sam,
                                                  i64 sak, const T *B, i64 sbk, i64 sbn,
                                                  int validM, int validN, int K) {
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(Consumers == 1, "two consumer warpgroups need sm_90a");
  mma_mainloop<BM, BN, 64, 2, 4, Stages, CopyA, CopyB, T>(smem, A, sam, sak, B, sbk, sbn, validM,
                                                        validN, K);
#else
  using Ring = WgmmaRing<BM, BN, Stages, T>;
  // Each producer thread arrives twice per stage.
  wgmma_specialized<BM, BN, Consumers, Stages, /*Fence=*/true, /*BKMajor=*/false, T, T>(
      smem, 256, K, [&](Ring &ring, int KT, int t) {
        for (int kt = 0; kt < KT; ++kt) {
          const int s = kt % Stages;
          if (kt >= Stages)
            mbar_wait(&ring.empty[s], (kt / Stages - 1) & 1);
          const int k0 = kt * 64;
          gemm_load_tile<BM, 64, 128, CopyA, 8>(ring.a + s * Ring::StageA, A + (i64)k0 * sak, sam,
                                                sak, validM, K - k0, t);
          wgmma_load_b<64, BN, 128, CopyB, 8>(ring.b + s * Ring::StageB, B + (i64)k0 * sbk, sbk,
                                              sbn, K - k0, validN, t);
          mbar_arrive_cp_async(&ring.full[s]);
          mbar_arrive(&ring.full[s]);
        }
        cp_async_wait<0>();
      });
#endif
}

//===----------------------------------------------------------------------===//
// Hopper, TMA: the warp-specialized loop with the copies done by the Tensor
// Memory Accelerator
//===----------------------------------------------------------------------===//

/// A CUtensorMap, as the runtime encodes it (128 bytes, 64-byte aligned);
/// passed as a `const __grid_constant__` kernel parameter.
struct __align__(64) KiteTensorMap {
  unsigned long long bits[16];
};

/// A TMA copy of the box at coordinates (c0 innermost, c1, ...; Rank of
/// them, 1 to 5) of `map` into shared memory at `dst`, completing on `bar`;
/// with `Multicast`, into the same offset of the shared memory of every
/// program of the cluster in `ctaMask`, completing on each one's mbarrier at
/// `bar`'s offset.
template <int Rank, bool Multicast>
__device__ __forceinline__ void tma_copy(void *dst, const KiteTensorMap *map,
                                         unsigned long long *bar, unsigned short ctaMask, int c0,
                                         int c1, int c2, int c3, int c4) {
  static_assert(Rank >= 1 && Rank <= 5, "TMA copies: tensors of rank 1 to 5");
  const unsigned d = smem_addr(dst), b = smem_addr(bar);
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  // `coords`: the coordinates' operands (from %3); `mask`: the one after.
#define KITE_TMA(dims, coords, mask, ...)                                                          \
  do {                                                                                             \
    if constexpr (Multicast)                                                                       \
      asm volatile("cp.async.bulk.tensor." dims ".shared::cluster.global.mbarrier::complete_tx"   \
                   "::bytes.multicast::cluster [%0], [%1, {" coords "}], [%2], " mask ";\n"        \
                   ::"r"(d), "l"(m), "r"(b), __VA_ARGS__, "h"(ctaMask)                             \
                   : "memory");                                                                    \
    else                                                                                           \
      asm volatile("cp.async.bulk.tensor." dims ".shared::cluster.global.mbarrier::complete_tx"   \
                   "::bytes [%0], [%1, {" coords "}], [%2];\n" ::"r"(d), "l"(m), "r"(b),           \
                   __VA_ARGS__                                                                     \
                   : "memory");                                                                    \
  } while (0)
  if constexpr (Rank == 1)
    KITE_TMA("1d", "%3", "%4", "r"(c0));
  else if constexpr (Rank == 2)
    KITE_TMA("2d", "%3, %4", "%5", "r"(c0), "r"(c1));
  else if constexpr (Rank == 3)
    KITE_TMA("3d", "%3, %4, %5", "%6", "r"(c0), "r"(c1), "r"(c2));
  else if constexpr (Rank == 4)
    KITE_TMA("4d", "%3, %4, %5, %6", "%7", "r"(c0), "r"(c1), "r"(c2), "r"(c3));
  else
    KITE_TMA("5d", "%3, %4, %5, %6, %7", "%8", "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4));
#undef KITE_TMA
}

/// The TMA copy into this program's shared memory.
template <int Rank>
__device__ __forceinline__ void tma_load(void *dst, const KiteTensorMap *map,
                                         unsigned long long *bar, int c0, int c1 = 0,
                                         int c2 = 0, int c3 = 0, int c4 = 0) {
  tma_copy<Rank, false>(dst, map, bar, 0, c0, c1, c2, c3, c4);
}

/// The TMA copy into every program of the cluster in `ctaMask` (one bit a
/// program), multicast.
template <int Rank>
__device__ __forceinline__ void tma_load_multicast(void *dst, const KiteTensorMap *map,
                                                   unsigned long long *bar, unsigned short ctaMask,
                                                   int c0, int c1 = 0, int c2 = 0, int c3 = 0,
                                                   int c4 = 0) {
  tma_copy<Rank, true>(dst, map, bar, ctaMask, c0, c1, c2, c3, c4);
}

/// Register reallocation between a warpgroup's roles (sm_90a): every warp
/// of the warpgroup lowers (dec) or raises (inc) its threads' register
/// count to N; raising waits until the registers are free.
template <int N> __device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

/// Turns between W computing warpgroups (pingpong): warpgroup w's turn is
/// named barrier 2 + w, complete when w waits on it and warpgroup w - 1
/// (mod W) has passed it on. Warpgroup W - 1 passes the first turn to 0
/// (kite_turn_start) and 0 takes the last pass back (kite_turn_end), so
/// that every barrier completes as often as it is waited on.
template <int W> __device__ __forceinline__ void kite_turn_wait() {
  asm volatile("bar.sync %0, %1;\n" ::"r"(2 + (int)threadIdx.x / 128), "n"(256) : "memory");
}
template <int W> __device__ __forceinline__ void kite_turn_pass() {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(2 + ((int)threadIdx.x / 128 + 1) % W), "n"(256)
               : "memory");
}
template <int W> __device__ __forceinline__ void kite_turn_start() {
  if ((int)threadIdx.x / 128 == W - 1)
    asm volatile("bar.arrive 2, 256;\n" ::: "memory");
}
template <int W> __device__ __forceinline__ void kite_turn_end() {
  if ((int)threadIdx.x / 128 == 0)
    asm volatile("bar.sync 2, 256;\n" ::: "memory");
}

/// Makes mbarrier initializations visible to the other threads' (and the
/// TMA unit's) uses, before the barrier that follows them.
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// A ring of `Stages` shared-memory buffers that a producer thread fills by
/// TMA and the computing threads read (a warp-specialized key loop's
/// prefetched operand): a `full` mbarrier per stage, on which the copies
/// complete, and an `empty` one, on which each computing thread arrives when
/// it is done reading. Both sides count their uses of the ring (`n`), in the
/// same order: use n is stage n % Stages in its (n / Stages)-th round.
///
/// A ring of a cluster of `Cluster` programs (cluster_size 2) is filled by
/// TMA multicasts that the programs issue a part each, into every
/// program's stage: a stage is free again once every program's computing
/// warps are done with it, so each warp arrives (one lane per program) on
/// the `empty` mbarrier of every program of the cluster. (Correct; each K
/// step ran about 1.5x longer than with a program's own ring while those
/// arrivals carried a GPU-wide fence: see docs/architecture.md, Clusters.)
template <int Stages, int Cluster = 1> struct TmaRing {
  unsigned long long *bars; // full[Stages], then empty[Stages]
  __device__ __forceinline__ unsigned long long *full(int s) const { return bars + s; }
  __device__ __forceinline__ unsigned long long *empty(int s) const { return bars + Stages + s; }
  /// Before the program's threads split: the ring's mbarriers (one
  /// thread), `consumers` computing threads to empty a stage.
  __device__ __forceinline__ void init(unsigned consumers) const {
    for (int s = 0; s < Stages; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), Cluster == 1 ? consumers : consumers / 32 * Cluster);
    }
  }
  /// Producer: waits until use n's stage is free, then announces `bytes`
  /// of copies completing on its full mbarrier; returns the stage.
  __device__ __forceinline__ int acquire(unsigned n, unsigned bytes) const {
    const int s = n % Stages;
    mbar_wait(empty(s), ((n / Stages) & 1) ^ 1);
    mbar_arrive_expect_tx(full(s), bytes);
    return s;
  }
  /// Computing threads: waits until use n's copies have landed; returns
  /// the stage.
  __device__ __forceinline__ int await(unsigned n) const {
    const int s = n % Stages;
    mbar_wait(full(s), (n / Stages) & 1);
    return s;
  }
  /// Computing threads: done reading use n's stage (every lane of the
  /// warp, in step, for a cluster's ring).
  __device__ __forceinline__ void release(unsigned n) const {
    if constexpr (Cluster == 1) {
      mbar_arrive(empty(n % Stages));
    } else {
      __syncwarp();
      const unsigned lane = threadIdx.x % 32;
      if (lane < Cluster)
        mbar_arrive_cluster(empty(n % Stages), lane);
    }
  }
};

/// persistent_dynamic's program ids, from the producer's thread (which
/// takes them) to the computing threads, through two slots (`slots`, in
/// shared memory) in turn: `full` and `empty` mbarriers per slot, as
/// TmaRing's, with the id written before its `full` arrival (release) and
/// read after the wait (acquire).
struct PidRing {
  unsigned long long *bars; // full[2], then empty[2]
  __device__ __forceinline__ void init(unsigned consumers) const {
    for (int s = 0; s < 2; ++s) {
      mbar_init(bars + s, 1);
      mbar_init(bars + 2 + s, consumers);
    }
  }
  /// Producer: the id of turn n into its slot, once the slot's last
  /// reader is done.
  __device__ __forceinline__ void put(long long *slots, unsigned n, long long pid) const {
    const int s = n % 2;
    mbar_wait(bars + 2 + s, ((n / 2) & 1) ^ 1);
    slots[s] = pid;
    mbar_arrive(bars + s);
  }
  /// Computing threads: turn n's id.
  __device__ __forceinline__ long long take(const long long *slots, unsigned n) const {
    const int s = n % 2;
    mbar_wait(bars + s, (n / 2) & 1);
    const long long pid = *(volatile const long long *)(slots + s);
    mbar_arrive(bars + 2 + s);
    return pid;
  }
};

/// wgmma_ws_mainloop's contract with TMA copies: one producer thread (the
/// producer warpgroup's first) issues, per stage of 128 bytes of K, one box
/// of A (BM rows x 128 bytes of K, 128-byte swizzled) and B's boxes, which
/// complete on the stage's `full` mbarrier; elements past the tensors'
/// bounds arrive as zeros. B is MN-major (16-bit only; its tensor's rows
/// are along K: BN / 64 boxes of 64 K rows x 64 columns) or, with
/// `BKMajor`, K-major (its tensor's rows are B's columns, [N, K] as
/// torch._scaled_mm's second operand: one box of BN rows x 128 bytes of K).
/// 8-bit floats (TA, TB each e4m3 or e5m2) need BKMajor. `m0`, `n0`, `k0`
/// and `b` are the tile's first row, column, K index and batch (3-D maps:
/// dims K, M, batch for A; N, K, batch for an MN-major B, K, N, batch for
/// a K-major one).
template <int BM, int BN, int Consumers, int Stages, int Rank, class TA, class TB = TA,
          bool BKMajor = false>
__device__ __forceinline__ void wgmma_tma_mainloop(unsigned char *smem, const KiteTensorMap *ma,
                                                   const KiteTensorMap *mb, int m0, int n0,
                                                   int k0, int b, int K) {
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(BM < 0, "TMA main loops need sm_90a");
#else
  using Ring = WgmmaRing<BM, BN, Stages, TA, TB>;
  static_assert(BKMajor || sizeof(TB) == 2, "an MN-major B needs 16-bit elements");
  constexpr unsigned StageBytes = (BM + BN) * 128;
  wgmma_specialized<BM, BN, Consumers, Stages, /*Fence=*/false, BKMajor, TA, TB>(
      smem, 1, K, [&](Ring &ring, int KT, int t) {
        if (t != 0)
          return;
        for (int kt = 0; kt < KT; ++kt) {
          const int s = kt % Stages;
          if (kt >= Stages)
            mbar_wait(&ring.empty[s], (kt / Stages - 1) & 1);
          const int k = k0 + kt * Ring::KA;
          mbar_arrive_expect_tx(&ring.full[s], StageBytes);
          tma_load<Rank>(ring.a + s * Ring::StageA, ma, &ring.full[s], k, m0, b);
          if constexpr (BKMajor) {
            tma_load<Rank>(ring.b + s * Ring::StageB, mb, &ring.full[s], k, n0, b);
          } else {
#pragma unroll
            for (int j = 0; j < BN / 64; ++j)
              tma_load<Rank>(ring.b + s * Ring::StageB + j * 64 * 64, mb, &ring.full[s],
                             n0 + j * 64, k, b);
          }
        }
      });
#endif
}

/// A split K loop's reduction, after its main loop left this program's
/// sums of a BM x BN tile in `sums` (rows of LDC floats, gemm_sum_index's
/// places): the program stores them as split `split` of tile `tile` in
/// `partials` (`splits` BM x BN blocks a tile) and counts itself on the
/// tile's counter (zero at launch). The tile's last program to count gets
/// true, with every split's sums added in split order in `sums` (the same
/// sums whichever program is last); the others get false. Every thread of
/// the block calls it.
template <int BM, int BN, int LDC>
__device__ __noinline__ bool split_k_reduce(float *sums, float *partials, unsigned *counters,
                                            i64 tile, int split, int splits) {
  __shared__ int last;
  constexpr int Quads = BM * BN / 4;
  float *mine = partials + (tile * splits + split) * (i64)(BM * BN);
  for (int i = threadIdx.x; i < Quads; i += blockDim.x) {
    const int r = i / (BN / 4), c = i % (BN / 4) * 4;
    __stcg(reinterpret_cast<float4 *>(mine) + i,
           *reinterpret_cast<const float4 *>(sums + gemm_sum_index<LDC>(r, c)));
  }
  __threadfence(); // this program's sums are visible before it counts
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(counters + tile, 1u) == unsigned(splits - 1);
  __syncthreads();
  if (!last)
    return false;
  __threadfence(); // the other programs' sums, counted before, are visible
  const float4 *all = reinterpret_cast<const float4 *>(partials + tile * splits * (i64)(BM * BN));
  for (int i = threadIdx.x; i < Quads; i += blockDim.x) {
    float4 a = __ldcg(all + i);
    for (int s = 1; s < splits; ++s) {
      const float4 b = __ldcg(all + (i64)s * Quads + i);
      a.x += b.x;
      a.y += b.y;
      a.z += b.z;
      a.w += b.w;
    }
    const int r = i / (BN / 4), c = i % (BN / 4) * 4;
    *reinterpret_cast<float4 *>(sums + gemm_sum_index<LDC>(r, c)) = a;
  }
  __syncthreads();
  return true;
}

} // namespace kite_device

#ifdef KITE_STAGED_OPERANDS
/// The parameter of kite_stage_rows (runtime/Launch.cpp's StageRowsParams,
/// field for field): a tensor's rows, the dims but the last (`outer` of
/// them, sizes and byte strides outermost first), each `row_bytes` long.
struct KiteStageRows {
  const unsigned char *src;
  unsigned char *dst;
  long long row_bytes, pitch, rows;
  long long sizes[4], strides[4];
  int outer;
};

namespace kite_device {
/// The 4-byte word at `w` (4-byte aligned), with the bytes outside [lo, hi)
/// zero and not read.
__device__ __forceinline__ unsigned stage_word(const unsigned char *lo, const unsigned char *hi,
                                               const unsigned char *w) {
  if (w >= lo && w + 4 <= hi)
    return *reinterpret_cast<const unsigned *>(w);
  unsigned v = 0;
#pragma unroll
  for (int b = 0; b < 4; ++b)
    if (w + b >= lo && w + b < hi)
      v |= unsigned(w[b]) << (8 * b);
  return v;
}

/// Bytes [16 c, 16 c + 16) of the row [row, row + bytes), zero past its end.
/// Inside the row a chunk is one 16-byte load where the row is 16-byte
/// aligned, else the two aligned 16-byte granules it straddles, shifted
/// (both inside the row); only a chunk at one of the row's ends reads its
/// bytes word by word, so no byte outside the row is read.
__device__ __forceinline__ uint4 stage_chunk(const unsigned char *row, long long bytes,
                                             long long c) {
  const long long at = c << 4;
  if (at >= bytes)
    return make_uint4(0, 0, 0, 0);
  const int s = int(reinterpret_cast<unsigned long long>(row) & 15);
  if (s == 0 && at + 16 <= bytes)
    return *reinterpret_cast<const uint4 *>(row + at);
  const unsigned char *granule = row + at - s; // 16-byte aligned
  if (granule >= row && granule + 32 <= row + bytes) {
    const uint4 a = *reinterpret_cast<const uint4 *>(granule);
    const uint4 b = *reinterpret_cast<const uint4 *>(granule + 16);
    const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    return gemm_shift_chunk(w, s);
  }
  // The 5 words from the one holding the chunk's first byte.
  unsigned w[8] = {};
#pragma unroll
  for (int k = 0; k < 5; ++k)
    w[k] = stage_word(row, row + bytes, granule + (s & ~3) + 4 * k);
  return gemm_shift_chunk(w, s & 3);
}
} // namespace kite_device

/// The copy a launch makes of an operand whose rows TMA cannot take (not
/// 16-byte multiples, or not 16-byte aligned): row r of the tensor goes to
/// dst + r * pitch, the bytes past its end zero. A warp copies a run of
/// 32 x KITE_STAGE_UNROLL 16-byte chunks of one row (the row's address and
/// alignment are the warp's, worked out once a run), each lane loading all
/// its chunks before it stores one, so that each has several loads in
/// flight.
#define KITE_STAGE_UNROLL 4
extern "C" __global__ void __launch_bounds__(256) kite_stage_rows(const KiteStageRows p) {
  constexpr int U = KITE_STAGE_UNROLL;
  const long long chunks = p.pitch >> 4, runs = (chunks + 32 * U - 1) / (32 * U);
  const long long items = p.rows * runs, warps = (long long)gridDim.x * 8;
  const int lane = threadIdx.x & 31;
  for (long long item = (long long)blockIdx.x * 8 + (threadIdx.x >> 5); item < items;
       item += warps) {
    const long long r = item / runs, c0 = (item - r * runs) * 32 * U + lane;
    long long offset = 0, q = r;
    // Unrolled over the 4 dims a map may have (constant indices keep the
    // parameter's arrays out of local memory).
#pragma unroll
    for (int d = 3; d >= 0; --d)
      if (d < p.outer) {
        offset += (q % p.sizes[d]) * p.strides[d];
        q /= p.sizes[d];
      }
    const unsigned char *row = p.src + offset;
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k)
      v[k] = kite_device::stage_chunk(row, p.row_bytes, c0 + 32 * k);
    unsigned char *out = p.dst + r * p.pitch;
#pragma unroll
    for (int k = 0; k < U; ++k)
      if (c0 + 32 * k < chunks)
        *reinterpret_cast<uint4 *>(out + ((c0 + 32 * k) << 4)) = v[k];
  }
}
#endif
