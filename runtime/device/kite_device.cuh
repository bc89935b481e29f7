//===- kite_device.cuh - kite's device tile library ------------*- CUDA -*-===//
//
// This file is the device library that generated kernels include. Generated
// code keeps each tile in per-thread register arrays and calls these helpers
// for what is not a plain loop: dtype conversion (16-bit floats compute in
// f32, as PyTorch does), the math functions with PyTorch's semantics,
// reduction combiners, and cross-thread reductions (warp shuffles, then
// shared memory across warps).
//
// Every runtime/device/*.cuh file is embedded into kite_runtime at build time
// (runtime/EmbedHeaders.cmake) and handed to NVRTC as an in-memory header
// under its file name, so kernels compile without the kite source tree.
//
//===----------------------------------------------------------------------===//

#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kite/random.hpp"
#include "kite_stream_k.cuh"

#ifdef KITE_TRACE
// A traced kernel (`kite bench --timeline`) defines KITE_TRACE as the
// records it keeps. Each record is two words: the SM's clock64, then
// sm << 48 | event << 40 | warpgroup << 32 | program id (low 32 bits). The
// host zeroes kite_trace_len before the launch and reads both after it (C
// names, so cuModuleGetGlobal finds them). A producer's warpgroup number
// has 0x80 added.
extern "C" {
__device__ unsigned long long kite_trace[2 * KITE_TRACE];
__device__ unsigned kite_trace_len;
}
#endif

namespace kite_device {

/// The library's version, so generated code can check what it was emitted
/// against.
constexpr int kVersion = 1;

/// A timeline event of a traced kernel (KITE_TRACE), recorded by the first
/// thread of each warpgroup that reaches it; nothing otherwise. Events: 0
/// the kernel's entry, 1 a program's start, 2 + 2i and 3 + 2i the start and
/// end of the program body's i-th loop, 31 the program's end, 64 + i the
/// top of an iteration of the i-th loop (of its main loop where the first
/// iteration is peeled off).
__device__ __forceinline__ void trace_event(unsigned event, long long pid) {
#ifdef KITE_TRACE
  if (threadIdx.x % 128 != 0)
    return;
  const unsigned i = atomicAdd(&kite_trace_len, 1u);
  if (i >= KITE_TRACE)
    return;
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  unsigned warpgroup = threadIdx.x / 128;
#ifdef KITE_COMPUTE_THREADS
  if (threadIdx.x >= KITE_COMPUTE_THREADS)
    warpgroup |= 0x80;
#endif
  kite_trace[2 * i] = clock64();
  kite_trace[2 * i + 1] = (unsigned long long)(unsigned)pid |
                          ((unsigned long long)warpgroup << 32) |
                          ((unsigned long long)event << 40) | ((unsigned long long)sm << 48);
#endif
}

/// The barrier of a program's computing threads. A kernel with a producer
/// warpgroup (a warp-specialized key loop: its copies issued by threads past
/// the others) defines KITE_COMPUTE_THREADS before including this file: the
/// barrier is then named barrier 1 over those threads alone, which the
/// producer never joins. Otherwise it is __syncthreads().
__device__ __forceinline__ void kite_sync() {
#ifdef KITE_COMPUTE_THREADS
  asm volatile("bar.sync 1, %0;\n" ::"n"(KITE_COMPUTE_THREADS) : "memory");
#else
  __syncthreads();
#endif
}

/// persistent_dynamic's next program id for a block's `turn`-th program:
/// the block's own id first, then past the grid's first ids, a ticket from
/// the launch's counter (`tickets`: 4 bytes, zero at launch). Programs that
/// finish early take more, so work is shared out as it completes.
__device__ __forceinline__ long long kite_next_program(unsigned char *tickets, unsigned turn) {
  if (turn == 0)
    return (long long)blockIdx.x;
  return (long long)gridDim.x + atomicAdd(reinterpret_cast<unsigned *>(tickets), 1u);
}

/// The number of a program's computing threads (see kite_sync).
__device__ __forceinline__ int kite_block_threads() {
#ifdef KITE_COMPUTE_THREADS
  return KITE_COMPUTE_THREADS;
#else
  return blockDim.x;
#endif
}

/// A stream-K schedule (Config::stream_k; kite_stream_k.cuh has its
/// arithmetic) run by this program. After its K loop each unit of a shared
/// tile runs `finish`: the tile's last unit to finish adds all the units'
/// sums in K order (the same sums whichever unit is last) and runs the rest
/// of the tile's body; the others store their sums and stop. No program
/// waits for another.
struct StreamK : StreamKWalk {
  __device__ StreamK(long long tiles, long long iters)
      : StreamKWalk(tiles, iters, gridDim.x, blockIdx.x) {}
  /// Where sharer p stores the sums of its unit of a shared tile
  /// (`partials`: two slots a program, N floats a computing thread each,
  /// the threads' floats interleaved): slot 2p for the part that starts
  /// its range inside a tile (kb > 0), 2p + 1 for the part it owns that
  /// ends its range inside a tile (kb = 0, ke < iters); a range has at most
  /// one of each.
  template <int N>
  __device__ static float *slot(float *partials, long long p, bool owner) {
    return partials + (2 * p + owner) * (long long)N * kite_block_threads();
  }
  /// This thread's N sums at `to`, interleaved with the other computing
  /// threads' (16 bytes a thread at a time where N allows), through L2.
  template <int N>
  __device__ static void store(const float (&sums)[N], float *to) {
    const int threads = kite_block_threads(), t = threadIdx.x;
    if constexpr (N % 4 == 0) {
#pragma unroll
      for (int q = 0; q < N / 4; ++q)
        __stcg(reinterpret_cast<float4 *>(to) + q * threads + t,
               make_float4(sums[4 * q], sums[4 * q + 1], sums[4 * q + 2], sums[4 * q + 3]));
    } else {
#pragma unroll
      for (int q = 0; q < N; ++q)
        __stcg(to + q * threads + t, sums[q]);
    }
  }
  /// sums = from (Add: sums += from), `from` as `store` wrote it.
  template <bool Add, int N>
  __device__ static void load(float (&sums)[N], const float *from) {
    const int threads = kite_block_threads(), t = threadIdx.x;
    if constexpr (N % 4 == 0) {
#pragma unroll
      for (int q = 0; q < N / 4; ++q) {
        const float4 v = __ldcg(reinterpret_cast<const float4 *>(from) + q * threads + t);
        sums[4 * q] = Add ? sums[4 * q] + v.x : v.x;
        sums[4 * q + 1] = Add ? sums[4 * q + 1] + v.y : v.y;
        sums[4 * q + 2] = Add ? sums[4 * q + 2] + v.z : v.z;
        sums[4 * q + 3] = Add ? sums[4 * q + 3] + v.w : v.w;
      }
    } else {
#pragma unroll
      for (int q = 0; q < N; ++q) {
        const float v = __ldcg(from + q * threads + t);
        sums[q] = Add ? sums[q] + v : v;
      }
    }
  }
  /// After the K loop of unit (tile, [kb, ke)) with this thread's sums in
  /// `sums` (N floats): true if this program runs the rest of the tile's
  /// body, `sums` then the whole K loop's; false if another unit will.
  /// `counters`: one a left-over tile, zero at launch. Every computing
  /// thread calls it.
  template <int N>
  __device__ __forceinline__ bool finish(float (&sums)[N], float *partials, unsigned *counters,
                                         long long tile, int kb, int ke) const {
    if (kb == 0 && ke == iters)
      return true; // a whole tile
    __shared__ int last;
    int first, final_sharer;
    sharers_of(tile, first, final_sharer);
    const unsigned others = unsigned(final_sharer - first);
    unsigned *counter = counters + (tile - whole);
    const bool owner = kb == 0;
    // No store where this unit can tell it is the last: the owner once the
    // others have counted, or the second of two parts once the owner has.
    const bool ask = owner || others == 1;
    kite_sync(); // every thread has read `last` of this program's previous unit
    if (ask && threadIdx.x == 0) {
      unsigned seen;
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(counter) : "memory");
      last = seen == others;
    }
    if (ask)
      kite_sync();
    const bool stored = !ask || !last;
    if (stored) {
      // Store this unit's sums and count it; the tile's last unit goes on.
      store(sums, slot<N>(partials, blockIdx.x, owner));
      __threadfence(); // the sums are visible before they are counted
      kite_sync();
      if (threadIdx.x == 0)
        last = atomicAdd(counter, 1u) == others;
      kite_sync();
      if (!last)
        return false;
    }
    __threadfence(); // the other units' sums, counted, are visible
    if (!owner && !stored) {
      // Two parts: the owner's sums and this one's (a + b is b + a).
      load<true>(sums, slot<N>(partials, first, true));
      return true;
    }
    if (!owner)
      load<false>(sums, slot<N>(partials, first, true));
    for (int p = first + 1; p <= final_sharer; ++p)
      load<true>(sums, slot<N>(partials, p, false));
    return true;
  }
};

typedef __nv_bfloat16 bf16;
typedef __half f16;
typedef long long i64;

/// 8-bit float storage: e4m3 is PyTorch's float8_e4m3fn (no infinities,
/// largest 448), e5m2 its float8_e5m2. Plain bytes, converted by Cvt; they
/// compute in f32.
struct e4m3 {
  unsigned char bits;
};
struct e5m2 {
  unsigned char bits;
};

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

/// An 8-bit float's value, and a float rounded to the nearest even 8-bit
/// float without saturating (as PyTorch and reference mode): past the
/// largest value, e4m3 gives NaN and e5m2 infinity. On sm_89 and later the
/// hardware's saturating conversion rounds, and magnitudes past the largest
/// value's rounding range (464 for e4m3, 61440 for e5m2) are then set to
/// NaN or infinity; earlier targets use cuda_fp8.h's software conversion.
template <class T> struct Fp8Format;
template <> struct Fp8Format<e4m3> {
  static __device__ __forceinline__ constexpr __nv_fp8_interpretation_t kind() { return __NV_E4M3; }
};
template <> struct Fp8Format<e5m2> {
  static __device__ __forceinline__ constexpr __nv_fp8_interpretation_t kind() { return __NV_E5M2; }
};
template <class T> __device__ __forceinline__ float fp8_to_float(T x) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(x.bits, Fp8Format<T>::kind())));
}
template <class T> __device__ __forceinline__ T float_to_fp8(float f) {
  T r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  r.bits = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, Fp8Format<T>::kind());
  if (Fp8Format<T>::kind() == __NV_E4M3 ? fabsf(f) > 464.0f : fabsf(f) >= 61440.0f)
    r.bits = (r.bits & 0x80u) | (Fp8Format<T>::kind() == __NV_E4M3 ? 0x7fu : 0x7cu);
#else
  r.bits = __nv_cvt_float_to_fp8(f, __NV_NOSAT, Fp8Format<T>::kind());
#endif
  return r;
}
/// The floats narrower than f32 (storage types that compute in f32): how
/// one widens to f32 and how an f32 rounds to it (to nearest even).
template <class T> struct Narrow {
  static constexpr bool value = false;
};
template <> struct Narrow<bf16> {
  static constexpr bool value = true;
  static __device__ __forceinline__ float widen(bf16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ bf16 narrow(float f) { return __float2bfloat16_rn(f); }
};
template <> struct Narrow<f16> {
  static constexpr bool value = true;
  static __device__ __forceinline__ float widen(f16 x) { return __half2float(x); }
  static __device__ __forceinline__ f16 narrow(float f) { return __float2half_rn(f); }
};
template <class T> struct NarrowFp8 {
  static constexpr bool value = true;
  static __device__ __forceinline__ float widen(T x) { return fp8_to_float(x); }
  static __device__ __forceinline__ T narrow(float f) { return float_to_fp8<T>(f); }
};
template <> struct Narrow<e4m3> : NarrowFp8<e4m3> {};
template <> struct Narrow<e5m2> : NarrowFp8<e5m2> {};

/// The type an element computes in: f32 for the narrow floats, itself
/// otherwise.
template <class T, bool = Narrow<T>::value> struct Compute { typedef T type; };
template <class T> struct Compute<T, true> { typedef float type; };

template <class A, class B> struct SameType {
  static constexpr bool value = false;
};
template <class A> struct SameType<A, A> {
  static constexpr bool value = true;
};

/// Converts between any two element types: a narrow float through f32 (as
/// PyTorch computes), bool as nonzero-ness (as in PyTorch), anything else
/// by a C++ conversion.
template <class To, class From> struct Cvt {
  static __device__ __forceinline__ To run(From x) {
    if constexpr (SameType<To, From>::value)
      return x;
    else if constexpr (Narrow<From>::value)
      return Cvt<To, float>::run(Narrow<From>::widen(x));
    else if constexpr (Narrow<To>::value)
      return Narrow<To>::narrow(static_cast<float>(x));
    else if constexpr (SameType<To, bool>::value)
      return x != From(0);
    else
      return static_cast<To>(x);
  }
};

template <class To, class From> __device__ __forceinline__ To cvt(From x) {
  return Cvt<To, From>::run(x);
}

//===----------------------------------------------------------------------===//
// Vector loads and stores
//===----------------------------------------------------------------------===//

/// An unsigned type of `Bytes` bytes, to move that many bytes in one access.
template <int Bytes> struct Bits;
template <> struct Bits<2> { typedef unsigned short type; };
template <> struct Bits<4> { typedef unsigned int type; };
template <> struct Bits<8> { typedef uint2 type; };
template <> struct Bits<16> { typedef uint4 type; };

/// Cache policies of a load (the `Cache` argument of load_vec and
/// load_one): the default; the streaming cache operator (ld.global.cs: the
/// line is evicted first), for data read once; L2 eviction priorities
/// (createpolicy + ld.global.L2::cache_hint) for data read again
/// (evict_last) or for the last read of it (evict_first).
enum CachePolicy { CacheDefault = 0, CacheStream = 1, CacheEvictLast = 2, CacheEvictFirst = 3 };

/// An L2 cache-hint policy covering every access that uses it.
template <int Cache> __device__ __forceinline__ unsigned long long l2_policy() {
  unsigned long long p;
  if constexpr (Cache == CacheEvictLast)
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  else
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

/// One load of 2, 4, 8 or 16 bytes with an L2 eviction priority. Volatile
/// with a memory clobber: not moved across the kernel's other accesses,
/// which a store to the same tensor may be.
template <int Cache> __device__ __forceinline__ unsigned short ld_hinted(const unsigned short *p) {
  unsigned short v;
  asm volatile("ld.global.L2::cache_hint.u16 %0, [%1], %2;"
               : "=h"(v) : "l"(p), "l"(l2_policy<Cache>()) : "memory");
  return v;
}
template <int Cache> __device__ __forceinline__ unsigned int ld_hinted(const unsigned int *p) {
  unsigned int v;
  asm volatile("ld.global.L2::cache_hint.u32 %0, [%1], %2;"
               : "=r"(v) : "l"(p), "l"(l2_policy<Cache>()) : "memory");
  return v;
}
template <int Cache>
__device__ __forceinline__ unsigned long long ld_hinted(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.global.L2::cache_hint.u64 %0, [%1], %2;"
               : "=l"(v) : "l"(p), "l"(l2_policy<Cache>()) : "memory");
  return v;
}
template <int Cache> __device__ __forceinline__ uint2 ld_hinted(const uint2 *p) {
  uint2 v;
  asm volatile("ld.global.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;"
               : "=r"(v.x), "=r"(v.y) : "l"(p), "l"(l2_policy<Cache>()) : "memory");
  return v;
}
template <int Cache> __device__ __forceinline__ uint4 ld_hinted(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(l2_policy<Cache>())
               : "memory");
  return v;
}

/// The unsigned scalar of `Bytes` bytes.
template <int Bytes> struct ScalarBits { typedef typename Bits<Bytes>::type type; };
template <> struct ScalarBits<1> { typedef unsigned char type; };
template <> struct ScalarBits<8> { typedef unsigned long long type; };

/// One element from global memory with an L2 eviction priority (Cache is
/// CacheEvictLast or CacheEvictFirst; types of 1 byte load plainly).
template <int Cache, class T> __device__ __forceinline__ T load_one(const T *src) {
  if constexpr (sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) {
    typedef typename ScalarBits<sizeof(T)>::type V;
    V v = ld_hinted<Cache>(reinterpret_cast<const V *>(src));
    return *reinterpret_cast<const T *>(&v);
  } else {
    return *src;
  }
}

/// Copies `N` consecutive elements from global memory at `src` (aligned to
/// the vector's size) into registers `dst[0..N)` with one load, with the
/// cache policy `Cache`.
template <int N, int Cache = CacheDefault, class T>
__device__ __forceinline__ void load_vec(T *dst, const T *src) {
  typedef typename Bits<N * sizeof(T)>::type V;
  V v;
  if constexpr (Cache == CacheStream)
    v = __ldcs(reinterpret_cast<const V *>(src));
  else if constexpr (Cache == CacheEvictLast || Cache == CacheEvictFirst)
    v = ld_hinted<Cache>(reinterpret_cast<const V *>(src));
  else
    v = *reinterpret_cast<const V *>(src);
#pragma unroll
  for (int i = 0; i < N; ++i)
    dst[i] = reinterpret_cast<const T *>(&v)[i];
}

template <int N, class T> __device__ __forceinline__ void zero_vec(T *dst) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    dst[i] = cvt<T>(0);
}

/// A vector of `N` elements to store with one access.
template <class T, int N> struct Vec {
  T e[N];
};

/// Stores `N` elements at `dst` (aligned to the vector's size) with one
/// store; with `Stream`, a streaming one (st.global.cs).
template <int N, bool Stream = false, class T>
__device__ __forceinline__ void store_vec(T *dst, Vec<T, N> v) {
  typedef typename Bits<N * sizeof(T)>::type V;
  if constexpr (Stream)
    __stcs(reinterpret_cast<V *>(dst), *reinterpret_cast<const V *>(&v));
  else
    *reinterpret_cast<V *>(dst) = *reinterpret_cast<const V *>(&v);
}

/// One butterfly of the lane/word transpose below, for a pair of words
/// (`lo`, `hi`) whose indices differ in the butterfly's bit: the lanes that
/// differ in that bit (r and r ^ `mask`) trade the word whose bit is not
/// their own (the lane with the bit set sends `lo` and takes the other's
/// `hi` in its place; the other the reverse).
__device__ __forceinline__ void trade_words(unsigned &lo, unsigned &hi, bool upper, int mask) {
  const unsigned got = __shfl_xor_sync(0xffffffffu, upper ? lo : hi, mask);
  if (upper)
    lo = got;
  else
    hi = got;
}

/// Exchange stores: consecutive lanes in groups of `G` (a lane's place in
/// its group: `r`) hold, for each of `G` 16-byte segments of memory, a
/// piece of 16 / G bytes each (lane r's piece of segment j is `p[j]`, at
/// bytes [r * 16 / G, (r + 1) * 16 / G) of it). Returns segment r whole, so
/// that each lane stores 16 bytes at once. Every lane of the warp must call
/// it. With 4 pieces this is a 4 x 4 transpose between the lanes and their
/// words, done as two butterflies: the first swaps bit 0 of the lane with
/// bit 0 of the word (lanes r and r ^ 1 trade the two words whose bit 0
/// differs from their own), the second bit 1; 4 shuffles and 12 selects,
/// where picking each word to send and each piece received by the lane's
/// place took 3 shuffles and 24 selects. (Words are picked by selects among
/// scalars: a select among the elements of an array becomes an index into
/// it at run time, which puts the array in local memory.)
template <int G, class P>
__device__ __forceinline__ uint4 exchange_segments(const P (&p)[G], int r) {
  static_assert(G * sizeof(P) == 16 && (G == 2 || G == 4), "exchange_segments: 4- or 8-byte pieces");
  uint4 w;
  memcpy(&w, p, 16); // p's alignment may be under uint4's
  if constexpr (G == 4) {
    // Bit 0 of the lane against bit 0 of the word, then bit 1 against bit 1.
    trade_words(w.x, w.y, r & 1, 1);
    trade_words(w.z, w.w, r & 1, 1);
    trade_words(w.x, w.z, r & 2, 2);
    trade_words(w.y, w.w, r & 2, 2);
  } else {
    // Two 8-byte pieces: one butterfly on bit 0, each word of the piece.
    trade_words(w.x, w.z, r & 1, 1);
    trade_words(w.y, w.w, r & 1, 1);
  }
  return w;
}

/// Stores 16 bytes at `dst` (16-byte aligned); with `Stream`, a streaming
/// store.
template <bool Stream = false, class T>
__device__ __forceinline__ void store_16(T *dst, uint4 v) {
  if constexpr (Stream)
    __stcs(reinterpret_cast<uint4 *>(dst), v);
  else
    *reinterpret_cast<uint4 *>(dst) = v;
}

/// Bytes [16 - b, 32 - b) of the 32 bytes `p` then `c` (b in 0..15): the
/// 16-byte-aligned window of a row whose segments start b bytes past a
/// 16-byte boundary, `p` the segment before `c` on the row. (The words are
/// moved by selects on the bits of the shift, then funnel-shifted: an
/// array indexed at run time would live in local memory.)
__device__ __forceinline__ uint4 realign_16(uint4 p, uint4 c, int b) {
  unsigned w0 = p.x, w1 = p.y, w2 = p.z, w3 = p.w, w4 = c.x, w5 = c.y, w6 = c.z, w7 = c.w;
  const int s = 16 - b, q = s >> 2; // q in 0..4 whole words, then s & 3 bytes
  if (q & 4) {
    w0 = w4; w1 = w5; w2 = w6; w3 = w7; w4 = 0u;
  }
  if (q & 2) {
    w0 = w2; w1 = w3; w2 = w4; w3 = w5; w4 = w6; w5 = w7;
  }
  if (q & 1) {
    w0 = w1; w1 = w2; w2 = w3; w3 = w4; w4 = w5;
  }
  const unsigned sh = unsigned(s & 3) * 8;
  return make_uint4(__funnelshift_r(w0, w1, sh), __funnelshift_r(w1, w2, sh),
                    __funnelshift_r(w2, w3, sh), __funnelshift_r(w3, w4, sh));
}

/// Stores bytes [lo, hi) of the 16 bytes `v` at `dst` (16-byte aligned):
/// as one 16-byte store when that is all of them, else element by element
/// (elements of sizeof(T) bytes; lo and hi are multiples of it).
template <bool Stream = false, class T>
__device__ __forceinline__ void store_16_window(T *dst, uint4 v, int lo, int hi) {
  if (lo <= 0 && hi >= 16) {
    store_16<Stream>(dst, v);
    return;
  }
  constexpr int E = int(sizeof(T));
  using U = typename ScalarBits<E>::type;
#pragma unroll
  for (int i = 0; i < 16 / E; ++i)
    if (i * E >= lo && i * E < hi) {
      U x;
      memcpy(&x, reinterpret_cast<const char *>(&v) + i * E, E);
      reinterpret_cast<U *>(dst)[i] = x;
    }
}

/// Realigned exchange stores, for rows whose start is not 16-byte aligned
/// (odd row lengths, a base that is not): a lane holds the 16-byte segment
/// `seg` of a tile row, whose first element is at `at`, and (by a shuffle)
/// `prev`, the segment before it on the row. `col` is the segment's first
/// byte in the tile row and `valid` the row's bytes inside the tile's
/// extent. With b = `at`'s address mod 16, the lane stores the aligned 16
/// bytes that end b bytes into its segment (what the row has of them: the
/// tile row's first segment starts there), and the lane holding the row's
/// last valid segment also stores its last b bytes. Each store is then one
/// aligned 16-byte store but at the row's two ends.
template <bool Stream = false, class T>
__device__ __forceinline__ void store_16_realigned(T *at, uint4 prev, uint4 seg, int col,
                                                   int valid) {
  if (col >= valid)
    return;
  const int b = int(reinterpret_cast<unsigned long long>(at) & 15ull);
  T *dst = reinterpret_cast<T *>(reinterpret_cast<char *>(at) - b);
  store_16_window<Stream>(dst, realign_16(prev, seg, b), col == 0 ? b : 0, valid - col + b);
  if (b != 0 && col + 16 >= valid)
    store_16_window<Stream>(dst + 16 / int(sizeof(T)), realign_16(seg, seg, b), 0,
                            min(b, valid - col - 16 + b));
}

/// The 4 words of `v` from lane `src` of each group of `width` lanes.
__device__ __forceinline__ uint4 shfl_16(uint4 v, int src, int width) {
  return make_uint4(__shfl_sync(0xffffffffu, v.x, src, width),
                    __shfl_sync(0xffffffffu, v.y, src, width),
                    __shfl_sync(0xffffffffu, v.z, src, width),
                    __shfl_sync(0xffffffffu, v.w, src, width));
}

//===----------------------------------------------------------------------===//
// Math with PyTorch's semantics (on the compute type)
//===----------------------------------------------------------------------===//

__device__ __forceinline__ float k_exp(float x) { return expf(x); }
__device__ __forceinline__ double k_exp(double x) { return exp(x); }
__device__ __forceinline__ float k_exp2(float x) { return exp2f(x); }
__device__ __forceinline__ double k_exp2(double x) { return exp2(x); }
/// fast_math's exp2: the hardware's ex2 alone, with results below 2^-126
/// flushed to zero (exp2f adds a range test and two multiplies per element
/// to keep them).
__device__ __forceinline__ float k_exp2_ftz(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float k_log(float x) { return logf(x); }
__device__ __forceinline__ double k_log(double x) { return log(x); }
__device__ __forceinline__ float k_log2(float x) { return log2f(x); }
__device__ __forceinline__ double k_log2(double x) { return log2(x); }
__device__ __forceinline__ float k_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double k_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float k_rsqrt(float x) { return 1.0f / sqrtf(x); }
__device__ __forceinline__ double k_rsqrt(double x) { return 1.0 / sqrt(x); }
__device__ __forceinline__ float k_sin(float x) { return sinf(x); }
__device__ __forceinline__ double k_sin(double x) { return sin(x); }
__device__ __forceinline__ float k_cos(float x) { return cosf(x); }
__device__ __forceinline__ double k_cos(double x) { return cos(x); }
__device__ __forceinline__ float k_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double k_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float k_erf(float x) { return erff(x); }
__device__ __forceinline__ double k_erf(double x) { return erf(x); }
__device__ __forceinline__ float k_floor(float x) { return floorf(x); }
__device__ __forceinline__ double k_floor(double x) { return floor(x); }
__device__ __forceinline__ float k_ceil(float x) { return ceilf(x); }
__device__ __forceinline__ double k_ceil(double x) { return ceil(x); }
__device__ __forceinline__ float k_pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double k_pow(double x, double y) { return pow(x, y); }
template <class T> __device__ __forceinline__ T k_floor(T x) { return x; }
template <class T> __device__ __forceinline__ T k_ceil(T x) { return x; }
template <class T> __device__ __forceinline__ T k_pow(T x, T y) {
  T r = 1;
  for (T i = 0; i < y; ++i)
    r *= x;
  return y < 0 ? T(0) : r;
}
template <class T> __device__ __forceinline__ T k_abs(T x) { return x < T(0) ? -x : x; }
template <class T> __device__ __forceinline__ T k_sigmoid(T x) { return T(1) / (T(1) + k_exp(-x)); }
template <class T> __device__ __forceinline__ T k_relu(T x) { return x > T(0) ? x : T(0); }
template <class T> __device__ __forceinline__ T k_silu(T x) { return x / (T(1) + k_exp(-x)); }
template <class T> __device__ __forceinline__ T k_gelu(T x) {
  return T(0.5) * x * (T(1) + k_erf(x * T(0.70710678118654752440)));
}
template <class T> __device__ __forceinline__ bool k_isnan(T x) { return x != x; }
/// maximum/minimum propagate NaN, as torch.maximum does.
template <class T> __device__ __forceinline__ T k_maximum(T a, T b) {
  return (a > b || k_isnan(a)) ? a : b;
}
template <class T> __device__ __forceinline__ T k_minimum(T a, T b) {
  return (a < b || k_isnan(a)) ? a : b;
}
#if __CUDA_ARCH__ >= 800
// One instruction instead of a compare, a NaN test and a select: the max of
// a row is a chain of these, and online softmax's loop is ALU-bound on them.
template <> __device__ __forceinline__ float k_maximum(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <> __device__ __forceinline__ float k_minimum(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif
/// Python's remainder: the result has the divisor's sign.
__device__ __forceinline__ float k_mod(float a, float b) {
  float r = fmodf(a, b);
  return (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) ? r + b : r;
}
__device__ __forceinline__ double k_mod(double a, double b) {
  double r = fmod(a, b);
  return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r;
}
template <class T> __device__ __forceinline__ T k_mod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <class T> __device__ __forceinline__ T k_lowest();
template <> __device__ __forceinline__ float k_lowest<float>() { return -__int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double k_lowest<double>() { return -__longlong_as_double(0x7ff0000000000000LL); }
template <> __device__ __forceinline__ i64 k_lowest<i64>() { return (i64)(-0x7fffffffffffffffLL - 1); }
template <> __device__ __forceinline__ int k_lowest<int>() { return (int)0x80000000; }
template <> __device__ __forceinline__ bool k_lowest<bool>() { return false; }
template <class T> __device__ __forceinline__ T k_highest();
template <> __device__ __forceinline__ float k_highest<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double k_highest<double>() { return __longlong_as_double(0x7ff0000000000000LL); }
template <> __device__ __forceinline__ i64 k_highest<i64>() { return (i64)0x7fffffffffffffffLL; }
template <> __device__ __forceinline__ int k_highest<int>() { return 0x7fffffff; }
template <> __device__ __forceinline__ bool k_highest<bool>() { return true; }

struct SumOp {
  template <class T> static __device__ __forceinline__ T identity() { return T(0); }
  template <class T> static __device__ __forceinline__ T combine(T a, T b) { return a + b; }
};
struct ProdOp {
  template <class T> static __device__ __forceinline__ T identity() { return T(1); }
  template <class T> static __device__ __forceinline__ T combine(T a, T b) { return a * b; }
};
struct MaxOp {
  template <class T> static __device__ __forceinline__ T identity() { return k_lowest<T>(); }
  template <class T> static __device__ __forceinline__ T combine(T a, T b) { return k_maximum(a, b); }
};
struct MinOp {
  template <class T> static __device__ __forceinline__ T identity() { return k_highest<T>(); }
  template <class T> static __device__ __forceinline__ T combine(T a, T b) { return k_minimum(a, b); }
};

/// An (value, index) pair for argmax/argmin; ties keep the lower index and
/// NaN wins, as in PyTorch.
template <class T> struct ArgPair {
  T value;
  i64 index;
};
template <bool IsMax> struct ArgOp {
  template <class P> static __device__ __forceinline__ P identity() {
    P p;
    p.value = IsMax ? k_lowest<decltype(p.value)>() : k_highest<decltype(p.value)>();
    p.index = 0x7fffffffffffffffLL;
    return p;
  }
  template <class P> static __device__ __forceinline__ P combine(P a, P b) {
    bool an = k_isnan(a.value), bn = k_isnan(b.value);
    if (an || bn) {
      if (an && bn)
        return a.index <= b.index ? a : b;
      return an ? a : b;
    }
    bool better = IsMax ? (b.value > a.value) : (b.value < a.value);
    if (better || (b.value == a.value && b.index < a.index))
      return b;
    return a;
  }
};

template <class T> __device__ __forceinline__ T shfl_xor(T v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}
template <class T> __device__ __forceinline__ ArgPair<T> shfl_xor(ArgPair<T> v, int mask) {
  ArgPair<T> r;
  r.value = __shfl_xor_sync(0xffffffffu, v.value, mask);
  r.index = __shfl_xor_sync(0xffffffffu, v.index, mask);
  return r;
}

/// Combines `v` across the `Count` threads whose thread index differs only
/// in the bits of `Stride * (0..Count-1)`, when they lie within one warp
/// (Stride * Count <= 32). Every participating thread gets the result.
template <class Op, int Stride, int Count, class T>
__device__ __forceinline__ T warp_reduce(T v) {
#pragma unroll
  for (int m = Stride; m < Stride * Count; m *= 2)
    v = Op::combine(v, shfl_xor(v, m));
  return v;
}

/// The same across warps. The lanes of one warp combine with shuffles first;
/// then every thread's partial goes through `scratch` (blockDim.x elements),
/// and the `InWarp` lanes of a group that share a warp split the group's
/// `Across` partials between them (one each, repeating, when the reduced dim
/// is the innermost: the common case) and combine them with shuffles again. A
/// butterfly gives every lane the same bits (the combines are commutative),
/// so every thread of a group gets the same result. Reading the partials one
/// per lane instead of all of them in every thread matters: with 32 warps,
/// 32 shared loads per thread held a row sum at 86% of copy against 96%.
template <class Op, int Stride, int Count, class T>
__device__ __forceinline__ T block_reduce(T v, T *scratch) {
  constexpr int InWarp = Stride >= 32 ? 1 : (Stride * Count <= 32 ? Count : 32 / Stride);
  constexpr int Across = Count / InWarp;        // partials left per group
  constexpr int AcrossStride = Stride * InWarp; // thread distance between them
  if constexpr (InWarp > 1)
    v = warp_reduce<Op, Stride, InWarp>(v);
  if constexpr (Across == 1)
    return v;
  const int tid = threadIdx.x;
  kite_sync();
  scratch[tid] = v;
  kite_sync();
  // This thread's slot in its group's first warp, and its place among the
  // group's lanes in a warp; a lane reads the partials of other warps at its
  // own place in them, so a warp's reads fall in distinct banks.
  const int base = tid - ((tid / AcrossStride) % Across) * AcrossStride;
  const int lane = (tid / Stride) % InWarp;
  T r;
  if constexpr (Across <= InWarp) {
    // One partial per lane, repeating every Across lanes.
    r = scratch[base + (lane % Across) * AcrossStride];
    r = warp_reduce<Op, Stride, Across>(r);
  } else {
    r = scratch[base + lane * AcrossStride];
#pragma unroll
    for (int j = 1; j < Across / InWarp; ++j)
      r = Op::combine(r, scratch[base + (lane + j * InWarp) * AcrossStride]);
    if constexpr (InWarp > 1)
      r = warp_reduce<Op, Stride, InWarp>(r);
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Scans across threads
//===----------------------------------------------------------------------===//

template <class T> __device__ __forceinline__ T shfl_up(T v, int delta) {
  return __shfl_up_sync(0xffffffffu, v, delta);
}
template <class T> __device__ __forceinline__ T shfl_idx(T v, int lane) {
  return __shfl_sync(0xffffffffu, v, lane);
}
template <class T> __device__ __forceinline__ ArgPair<T> shfl_up(ArgPair<T> v, int delta) {
  return ArgPair<T>{__shfl_up_sync(0xffffffffu, v.value, delta),
                    __shfl_up_sync(0xffffffffu, v.index, delta)};
}
template <class T> __device__ __forceinline__ ArgPair<T> shfl_idx(ArgPair<T> v, int lane) {
  return ArgPair<T>{__shfl_sync(0xffffffffu, v.value, lane),
                    __shfl_sync(0xffffffffu, v.index, lane)};
}

/// A value of any trivially copyable type, moved across lanes 32 bits at a
/// time (`up`: from `arg` lanes lower; else from lane `arg`).
template <class T> __device__ __forceinline__ T shfl_words(T v, int arg, bool up) {
  constexpr int W = (sizeof(T) + 3) / 4;
  unsigned w[W] = {};
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < W; ++i)
    w[i] = up ? __shfl_up_sync(0xffffffffu, w[i], arg) : __shfl_sync(0xffffffffu, w[i], arg);
  T r;
  memcpy(&r, w, sizeof(T));
  return r;
}

/// An element of associative_scan (a struct of one field per scanned
/// tile), or none: the identity a user's combine function lacks, for
/// masked lanes and the first thread's empty prefix.
template <class V> struct Maybe {
  V value;
  bool ok;
};
template <class V> __device__ __forceinline__ Maybe<V> shfl_up(Maybe<V> v, int delta) {
  return shfl_words(v, delta, true);
}
template <class V> __device__ __forceinline__ Maybe<V> shfl_idx(Maybe<V> v, int lane) {
  return shfl_words(v, lane, false);
}

/// A user's combine function `f(earlier, later)` as a scan op on
/// Maybe<V>: none is the identity.
template <class F> struct CombineOp {
  F f;
  template <class P> static __device__ __forceinline__ P identity() { return P{}; }
  template <class P> __device__ __forceinline__ P combine(P a, P b) const {
    if (!b.ok)
      return a;
    if (!a.ok)
      return b;
    return P{f(a.value, b.value), true};
  }
};

template <class Op> constexpr bool kUserCombine = false;
template <class F> constexpr bool kUserCombine<CombineOp<F>> = true;
template <class F> constexpr bool kUserCombine<const CombineOp<F>> = true;

/// The running extreme of cummax/cummin with its position, as PyTorch
/// keeps it: `combine(earlier, later)` takes the later one if it is NaN, or
/// if the earlier is not NaN and the later is at least as large (small);
/// the identity (position -1) is no element. It is the maximum by (NaN,
/// value, position), so it is associative.
template <bool IsMax> struct CumArgOp {
  template <class P> static __device__ __forceinline__ P identity() {
    P p;
    p.value = 0;
    p.index = -1;
    return p;
  }
  template <class P> static __device__ __forceinline__ P combine(P a, P b) {
    if (b.index < 0)
      return a;
    if (a.index < 0)
      return b;
    bool later = k_isnan(b.value) ||
                 (!k_isnan(a.value) && (IsMax ? b.value >= a.value : b.value <= a.value));
    return later ? b : a;
  }
};

/// The exclusive scans of `v[0..N)` (N independent scans, e.g. one per
/// chunk a thread holds) over the `Count` threads along one dim of a tile
/// (thread-index stride `Stride`) that share the tile's other coordinates,
/// in the order of their coordinate along the dim, into `v`; `total[c]`
/// gets the combination of all `Count` of scan c. Within a warp by shuffles
/// (Kogge-Stone, the N scans interleaved), across warps through `scratch`
/// (N * blockDim.x elements) in one round: each warp publishes its
/// inclusive values, and every thread combines those of the warps before
/// its own. Every thread of the block must call it. `op` is an object of
/// Op: a stateless op's, or a CombineOp holding a user's function.
template <class Op, int Stride, int Count, int N, class T>
__device__ __forceinline__ void thread_scan_exclusive(T (&v)[N], T (&total)[N], T *scratch,
                                                      const Op &op = Op()) {
  constexpr int InWarp = Stride >= 32 ? 1 : (Stride * Count <= 32 ? Count : 32 / Stride);
  constexpr int Across = Count / InWarp;
  const int tid = threadIdx.x;
  const int along = (tid / Stride) % Count; // this thread's coordinate along the dim
  const int inWarp = along % InWarp;
#pragma unroll
  for (int k = 1; k < InWarp; k *= 2) {
#pragma unroll
    for (int c = 0; c < N; ++c) {
      T y = shfl_up(v[c], k * Stride);
      if (inWarp >= k)
        v[c] = op.combine(y, v[c]);
    }
  }
  // v holds the inclusive scans within the warp.
  T warpTotal[N];
#pragma unroll
  for (int c = 0; c < N; ++c) {
    warpTotal[c] = v[c];
    if constexpr (InWarp > 1) {
      T y = shfl_up(v[c], Stride);
      warpTotal[c] = shfl_idx(v[c], (tid % 32) + (InWarp - 1 - inWarp) * Stride);
      v[c] = inWarp > 0 ? y : op.template identity<T>();
    } else {
      v[c] = op.template identity<T>();
    }
  }
  if constexpr (Across == 1) {
#pragma unroll
    for (int c = 0; c < N; ++c)
      total[c] = warpTotal[c];
  } else {
    const int warp = along / InWarp;
    const int nthreads = kite_block_threads();
    kite_sync();
#pragma unroll
    for (int c = 0; c < N; ++c)
      scratch[c * nthreads + tid] = warpTotal[c];
    kite_sync();
#pragma unroll
    for (int c = 0; c < N; ++c) {
      T before = op.template identity<T>(), all = op.template identity<T>();
      // Unrolled for kite's own ops (rolled, cumsum over rows of 32000 took
      // 1.5 times as long); rolled for a user's combine function, where N *
      // Across inlined copies of it made NVRTC take seconds for a wide tile.
#pragma unroll(kUserCombine<Op> ? 1 : Across)
      for (int u = 0; u < Across; ++u) {
        T w = scratch[c * nthreads + tid + (u * InWarp + InWarp - 1 - along) * Stride];
        if (u < warp)
          before = op.combine(before, w);
        all = op.combine(all, w);
      }
      total[c] = all;
      v[c] = op.combine(before, v[c]);
    }
  }
}

//===----------------------------------------------------------------------===//
// Sorts
//===----------------------------------------------------------------------===//

/// True if key `a` at position `pa` goes before key `b` at position `pb`:
/// positions at or past `valid` (masked lanes) after every other, NaN the
/// largest value, ties by position (a stable order).
template <bool Desc, class K, class P>
__device__ __forceinline__ bool sort_before(K a, P pa, K b, P pb, int valid) {
  bool va = (int)pa < valid, vb = (int)pb < valid;
  if (va != vb)
    return va;
  if (va) {
    typedef typename Compute<K>::type C;
    C x = cvt<C>(a), y = cvt<C>(b);
    bool nx = k_isnan(x), ny = k_isnan(y);
    if (nx != ny)
      return Desc ? nx : ny;
    if (!nx && x != y)
      return Desc ? x > y : x < y;
  }
  return pa < pb;
}

/// Compare-exchanges the keys (and positions) at `a` and `b`: afterwards
/// the one at `a` goes first in sort_before's order if `up`, else second.
template <bool Desc, class K, class P>
__device__ __forceinline__ void sort_exchange(K *keys, P *pos, int a, int b, bool up, int valid) {
  K ka = keys[a], kb = keys[b];
  P pa = pos[a], pb = pos[b];
  if (up ? sort_before<Desc>(kb, pb, ka, pa, valid) : sort_before<Desc>(ka, pa, kb, pb, valid)) {
    keys[a] = kb;
    keys[b] = ka;
    pos[a] = pb;
    pos[b] = pa;
  }
}

/// Sorts `Lines` lines of `L` (a power of two) keys in shared memory, each
/// with its positions, by a bitonic network over the program's `Threads`
/// threads (sort_before's order). The sizes are constants and the strides
/// powers of two, so pair indices are shifts and masks. Every thread of
/// the program must call it; the keys are visible to all of them when it
/// returns.
template <bool Desc, int L, int Lines, int Threads, class K, class P>
__device__ void bitonic_sort_lines(K *keys, P *pos, int valid) {
  constexpr int half = L / 2, pairs = Lines * half;
  for (int lk = 1; (1 << lk) <= L; ++lk) {
    for (int lj = lk - 1; lj >= 0; --lj) {
      const int j = 1 << lj;
      for (int p = threadIdx.x; p < pairs; p += Threads) {
        int line = p / half, q = p % half;
        int i = ((q >> lj) << (lj + 1)) | (q & (j - 1)); // the lower of the pair
        sort_exchange<Desc>(keys, pos, line * L + i, line * L + i + j, ((i >> lk) & 1) == 0,
                            valid);
      }
      kite_sync();
    }
  }
}

/// The first `K` (a power of two, less than `L`) of each line in
/// sort_before's order, sorted, at the line's start: each chunk of K is
/// sorted, then chunks merge in pairs, keeping the better K of the two (the
/// better of element e of one and element K-1-e of the other is a bitonic
/// sequence holding them) and sorting those, until one chunk is left. That
/// is (L/2) log2(K)(log2(K)+1)/2 + about L log2(K) comparisons a line,
/// against (L/2) log2(L)(log2(L)+1)/2 for a whole sort. Every thread of the
/// program must call it.
template <bool Desc, int L, int K, int Lines, int Threads, class K_, class P>
__device__ void bitonic_topk_lines(K_ *keys, P *pos, int valid) {
  constexpr int half = L / 2, pairs = Lines * half;
  // Every chunk of K sorted, all the same way.
  for (int lk = 1; (1 << lk) <= K; ++lk) {
    for (int lj = lk - 1; lj >= 0; --lj) {
      const int j = 1 << lj;
      for (int p = threadIdx.x; p < pairs; p += Threads) {
        int line = p / half, q = p % half;
        int i = ((q >> lj) << (lj + 1)) | (q & (j - 1));
        sort_exchange<Desc>(keys, pos, line * L + i, line * L + i + j,
                            (1 << lk) == K || ((i >> lk) & 1) == 0, valid);
      }
      kite_sync();
    }
  }
  // Chunks `spacing` K apart merge in pairs into the first of each pair.
  for (int ls = 0; (K << ls) < L; ++ls) {
    const int spacing = 1 << ls;
    const int merged = L / (2 * K * spacing); // pairs a line
    const int picks = Lines * merged * K;
    for (int p = threadIdx.x; p < picks; p += Threads) {
      int line = p / (merged * K), c = (p / K) % merged, e = p % K;
      int a = line * L + 2 * c * spacing * K + e;
      int b = line * L + (2 * c + 1) * spacing * K + (K - 1 - e);
      if (sort_before<Desc>(keys[b], pos[b], keys[a], pos[a], valid)) {
        keys[a] = keys[b];
        pos[a] = pos[b];
      }
    }
    kite_sync();
    for (int lj = __ffs(K) - 2; lj >= 0; --lj) {
      const int j = 1 << lj;
      for (int p = threadIdx.x; p < Lines * merged * (K / 2); p += Threads) {
        int line = p / (merged * (K / 2)), c = (p / (K / 2)) % merged, q = p % (K / 2);
        int i = ((q >> lj) << (lj + 1)) | (q & (j - 1));
        int base = line * L + 2 * c * spacing * K;
        sort_exchange<Desc>(keys, pos, base + i, base + i + j, true, valid);
      }
      kite_sync();
    }
  }
}

//===----------------------------------------------------------------------===//
// Radix sorts and selection
//===----------------------------------------------------------------------===//

/// A key's bits as an unsigned integer that orders as sort_before does
/// (ascending, NaN the largest and all NaN alike, -0 equal to +0):
/// floats flip their sign bit, or every bit when negative; signed integers
/// flip their sign bit.
template <class K> struct RadixBits;
template <> struct RadixBits<float> {
  typedef unsigned U;
  static constexpr int bits = 32;
  static __device__ __forceinline__ U of(float x) {
    U u = __float_as_uint(x);
    u = x != x ? 0x7fc00000u : x == 0.f ? 0u : u;
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
};
template <> struct RadixBits<double> {
  typedef unsigned long long U;
  static constexpr int bits = 64;
  static __device__ __forceinline__ U of(double x) {
    U u = (U)__double_as_longlong(x);
    u = x != x ? 0x7ff8000000000000ull : x == 0.0 ? 0ull : u;
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
  }
};
/// 16-bit floats: `Inf` is the exponent's all-ones pattern, `Nan` the quiet
/// NaN every NaN becomes.
template <unsigned Inf, unsigned Nan> struct RadixBitsHalf {
  typedef unsigned U;
  static constexpr int bits = 16;
  static __device__ __forceinline__ U ordered(unsigned short h) {
    U u = h, mag = u & 0x7fffu;
    u = mag > Inf ? Nan : mag == 0 ? 0u : u;
    return (u & 0x8000u) ? (~u & 0xffffu) : (u | 0x8000u);
  }
};
template <> struct RadixBits<bf16> : RadixBitsHalf<0x7f80u, 0x7fc0u> {
  static __device__ __forceinline__ U of(bf16 x) { return ordered(__bfloat16_as_ushort(x)); }
};
template <> struct RadixBits<f16> : RadixBitsHalf<0x7c00u, 0x7e00u> {
  static __device__ __forceinline__ U of(f16 x) { return ordered(__half_as_ushort(x)); }
};
/// 8-bit floats: magnitudes past `Inf` (the largest finite one for e4m3,
/// infinity's for e5m2) are NaN, all becoming `Nan`.
template <unsigned Inf, unsigned Nan> struct RadixBitsByte {
  typedef unsigned U;
  static constexpr int bits = 8;
  static __device__ __forceinline__ U ordered(unsigned char b) {
    U u = b, mag = u & 0x7fu;
    u = mag > Inf ? Nan : mag == 0 ? 0u : u;
    return (u & 0x80u) ? (~u & 0xffu) : (u | 0x80u);
  }
};
template <> struct RadixBits<e4m3> : RadixBitsByte<0x7eu, 0x7fu> {
  static __device__ __forceinline__ U of(e4m3 x) { return ordered(x.bits); }
};
template <> struct RadixBits<e5m2> : RadixBitsByte<0x7cu, 0x7eu> {
  static __device__ __forceinline__ U of(e5m2 x) { return ordered(x.bits); }
};
template <> struct RadixBits<int> {
  typedef unsigned U;
  static constexpr int bits = 32;
  static __device__ __forceinline__ U of(int x) { return (U)x ^ 0x80000000u; }
};
template <> struct RadixBits<i64> {
  typedef unsigned long long U;
  static constexpr int bits = 64;
  static __device__ __forceinline__ U of(i64 x) { return (U)x ^ 0x8000000000000000ull; }
};
template <> struct RadixBits<signed char> {
  typedef unsigned U;
  static constexpr int bits = 8;
  static __device__ __forceinline__ U of(signed char x) { return (U)(unsigned char)x ^ 0x80u; }
};
template <> struct RadixBits<bool> {
  typedef unsigned U;
  static constexpr int bits = 1;
  static __device__ __forceinline__ U of(bool x) { return x ? 1u : 0u; }
};

/// The rank of key `x` in a sort (descending if `Desc`): the lowest ranks
/// go first, masked lanes (`!valid`) get the highest. Keys of equal rank
/// are ties, which a stable sort leaves in position order.
template <bool Desc, class K>
__device__ __forceinline__ typename RadixBits<K>::U radix_rank(K x, bool valid) {
  typedef typename RadixBits<K>::U U;
  constexpr int bits = RadixBits<K>::bits;
  constexpr U ones = bits == 8 * sizeof(U) ? ~U(0) : (U(1) << bits) - 1;
  U r = RadixBits<K>::of(x);
  if (Desc)
    r = ~r & ones;
  return valid ? r : ones;
}

/// A key and its position in registers: packed into one 32-bit word where
/// both fit (16-bit keys), as two values otherwise.
template <class K, class P, bool Packed = (sizeof(K) + sizeof(P) <= 4)> struct RadixItem {
  K key;
  P pos;
  __device__ __forceinline__ void load(const K *keys, const P *positions, int i) {
    key = keys[i];
    pos = positions[i];
  }
  __device__ __forceinline__ K k() const { return key; }
  __device__ __forceinline__ P p() const { return pos; }
  __device__ __forceinline__ void store(K *keys, P *positions, int i) const {
    keys[i] = key;
    positions[i] = pos;
  }
};
template <class K, class P> struct RadixItem<K, P, true> {
  unsigned word; // the key's bits low, the position's high
  typedef typename ScalarBits<sizeof(K)>::type KB;
  __device__ __forceinline__ void load(const K *keys, const P *positions, int i) {
    K key = keys[i];
    word = (unsigned)*reinterpret_cast<const KB *>(&key) | ((unsigned)positions[i] << 16);
  }
  __device__ __forceinline__ K k() const {
    KB b = (KB)(word & 0xffffu);
    return *reinterpret_cast<const K *>(&b);
  }
  __device__ __forceinline__ P p() const { return (P)(word >> 16); }
  __device__ __forceinline__ void store(K *keys, P *positions, int i) const {
    keys[i] = k();
    positions[i] = p();
  }
};

/// The sum of `x` over this lane and the lanes below it.
__device__ __forceinline__ int warp_inclusive_sum(int x) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    int y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o)
      x += y;
  }
  return x;
}

/// An exclusive prefix sum over `counts[0..n)` (n at most the program's
/// threads), one entry a thread; `warpSums` holds a value per warp. Every
/// thread of the program must call it; the sums are visible on return.
__device__ __forceinline__ void block_exclusive_sum(int *counts, int n, int *warpSums) {
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  int v = t < n ? counts[t] : 0, x = warp_inclusive_sum(v);
  if (lane == 31)
    warpSums[warp] = x;
  kite_sync();
  int before = 0;
  for (int w = 0; w < warp; ++w)
    before += warpSums[w];
  if (t < n)
    counts[t] = before + x - v;
  kite_sync();
}

/// Sorts `Lines` lines of `L` keys in shared memory, each with its
/// positions, in sort_before's order by a least-significant-digit radix
/// sort over radix_rank: passes of up to 5 bits (16-bit keys: 4 passes,
/// 32-bit: 7), each stable. Warp w owns the line's w-th run of L/Warps
/// entries. A pass counts each digit within the warp by ballots (a lane's
/// peers are the lanes whose digit bits all agree), gives each digit and
/// warp its start by one prefix sum over digit-major counts, loads the
/// entries into registers (L/Threads a thread, one word each for 16-bit
/// keys) and, once every thread holds its own, writes them back in their
/// new order. Where the entries take half a thread's registers or more,
/// they are counted from shared memory and loaded only for the writes,
/// which keeps them out of the counting loop: on the H200, 32768 bf16 keys
/// a line on 512 threads sorted in 3.6 ms for 4096 lines with 128
/// registers, against 14.3 with the entries loaded first (64 registers and
/// 2 KB of spills). Fewer are loaded first and counted from registers
/// (8192 f32 keys on 256 threads: 2.13 ms for 8192 lines, against 2.86).
/// `scratch` holds 33 * Warps ints. Every thread of the program must call
/// it; the keys are visible to all when it returns.
template <bool Desc, int L, int Lines, int Threads, class K, class P>
__device__ void radix_sort_lines(K *keys, P *pos, int valid, int *scratch) {
  typedef RadixBits<K> R;
  constexpr int Passes = (R::bits + 4) / 5;
  constexpr int DigitBits = (R::bits + Passes - 1) / Passes;
  constexpr int Digits = 1 << DigitBits;
  constexpr int Warps = Threads / 32, C = L / Threads, Run = L / Warps;
  static_assert(Threads % 32 == 0 && C >= 1 && L % Threads == 0, "a line covers the threads");
  // Entries that take under half a thread's registers load before the
  // counting and count from registers; more count from shared memory and
  // load after (see above).
  constexpr int Registers = 65536 / Threads < 255 ? 65536 / Threads : 255;
  constexpr bool LoadFirst = C * (int)(sizeof(RadixItem<K, P>) / 4) * 2 < Registers;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned below = (1u << lane) - 1u;
  int *counts = scratch, *warpSums = scratch + Digits * Warps;
  for (int line = 0; line < Lines; ++line) {
    K *lk = keys + line * L;
    P *lp = pos + line * L;
#pragma unroll 1
    for (int pass = 0; pass < Passes; ++pass) {
      const int shift = pass * DigitBits;
      RadixItem<K, P> item[C];
      if constexpr (LoadFirst) {
#pragma unroll
        for (int j = 0; j < C; ++j)
          item[j].load(lk, lp, warp * Run + j * 32 + lane);
      }
      auto digitAt = [&](int i) -> unsigned {
        return (unsigned)(radix_rank<Desc>(lk[i], (int)lp[i] < valid) >> shift) & (Digits - 1);
      };
      auto digitOf = [&](int j) -> unsigned {
        return (unsigned)(radix_rank<Desc>(item[j].k(), (int)item[j].p() < valid) >> shift) &
               (Digits - 1);
      };
      // Lane d (< Digits) counts the warp's entries of digit d.
      int run = 0;
#pragma unroll
      for (int j = 0; j < C; ++j) {
        unsigned g = LoadFirst ? digitOf(j) : digitAt(warp * Run + j * 32 + lane);
        unsigned mine = 0xffffffffu;
#pragma unroll
        for (int b = 0; b < DigitBits; ++b) {
          unsigned v = __ballot_sync(0xffffffffu, (g >> b) & 1u);
          mine &= ((lane >> b) & 1) ? v : ~v;
        }
        run += __popc(mine);
      }
      if (lane < Digits)
        counts[lane * Warps + warp] = run;
      kite_sync();
      block_exclusive_sum(counts, Digits * Warps, warpSums);
      // Every entry in registers before any is written back at its rank.
      if constexpr (!LoadFirst) {
#pragma unroll
        for (int j = 0; j < C; ++j)
          item[j].load(lk, lp, warp * Run + j * 32 + lane);
        kite_sync();
      }
      run = lane < Digits ? counts[lane * Warps + warp] : 0;
#pragma unroll
      for (int j = 0; j < C; ++j) {
        unsigned g = digitOf(j), same = 0xffffffffu, mine = 0xffffffffu;
#pragma unroll
        for (int b = 0; b < DigitBits; ++b) {
          unsigned v = __ballot_sync(0xffffffffu, (g >> b) & 1u);
          same &= ((g >> b) & 1u) ? v : ~v;
          mine &= ((lane >> b) & 1) ? v : ~v;
        }
        int dest = __shfl_sync(0xffffffffu, run, g) + __popc(same & below);
        run += __popc(mine);
        item[j].store(lk, lp, dest);
      }
      kite_sync();
    }
  }
}

/// The ints radix_topk_lines needs in `scratch` before its K keys and K
/// positions.
constexpr int kRadixSelectInts = 256 + 4 + 32;

/// The first `KK` of each line of `L` keys in sort_before's order, sorted,
/// at the line's start (positions: `pos` holds K a line, K the power of two
/// at least KK), by radix selection: the rank of the KK-th is narrowed a
/// byte at a time from the top (a histogram of the next byte over the
/// entries that share the bytes found so far, one shared-memory atomic an
/// entry), stopping early where a byte's entries are exactly the ones still
/// wanted. Entries ranked lower are gathered with the first of the ties in
/// position order, and those K are sorted. Each thread keeps its entries'
/// ranks in registers where they fit in 64. `scratch` holds
/// kRadixSelectInts ints, then K keys and K positions (each 8-byte
/// aligned). Every thread of the program must call it.
///
/// On the H200 (8192 bf16 keys a line, k = 8, 256 threads), plain atomics
/// took 0.18 ms for 8192 lines where one atomic per digit and warp
/// (__match_any_sync) took 0.68, and ranks read again from shared memory
/// each pass 0.37.
template <bool Desc, int L, int K, int KK, int Lines, int Threads, class K_, class P>
__device__ void radix_topk_lines(K_ *keys, P *pos, int valid, int *scratch) {
  typedef RadixBits<K_> R;
  typedef typename R::U U;
  constexpr int DigitBits = R::bits < 8 ? R::bits : 8;
  constexpr int Passes = (R::bits + DigitBits - 1) / DigitBits;
  constexpr int Digits = 1 << DigitBits;
  constexpr int Per = Digits >= 32 ? Digits / 32 : 1; // digits a lane of warp 0 scans
  constexpr int Warps = (Threads + 31) / 32;
  constexpr int Rounds = (L + Threads - 1) / Threads;
  constexpr bool Cached = Rounds * sizeof(U) <= 64 * 4;
  static_assert(KK <= K && K <= L && R::bits % DigitBits == 0, "");
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned below = (1u << lane) - 1u;
  int *hist = scratch, *ctl = scratch + 256, *warpSums = scratch + 260;
  K_ *outK = reinterpret_cast<K_ *>(scratch + kRadixSelectInts);
  P *outP = reinterpret_cast<P *>(reinterpret_cast<char *>(outK) + (K * sizeof(K_) + 7) / 8 * 8);
  for (int line = 0; line < Lines; ++line) {
    K_ *lk = keys + line * L;
    auto rankOf = [&](int idx) -> U { return radix_rank<Desc>(lk[idx < L ? idx : 0], idx < valid); };
    U ranks[Cached ? Rounds : 1];
    if constexpr (Cached) {
#pragma unroll
      for (int r = 0; r < Rounds; ++r)
        ranks[r] = rankOf(r * Threads + threadIdx.x);
    }
    auto rankAt = [&](int r, int idx) -> U {
      if constexpr (Cached)
        return ranks[r];
      else
        return rankOf(idx);
    };
    U prefix = 0, known = 0; // the bits of the KK-th's rank found so far, and which
    int remaining = KK, inDigit = 0;
#pragma unroll 1
    for (int pass = 0; pass < Passes; ++pass) {
      const int shift = R::bits - (pass + 1) * DigitBits;
      for (int i = threadIdx.x; i < Digits; i += Threads)
        hist[i] = 0;
      kite_sync();
#pragma unroll
      for (int r = 0; r < Rounds; ++r) {
        int idx = r * Threads + threadIdx.x;
        U rk = rankAt(r, idx);
        if (idx < L && ((rk ^ prefix) & known) == 0)
          atomicAdd(&hist[(unsigned)(rk >> shift) & (Digits - 1)], 1);
      }
      kite_sync();
      // Warp 0 finds the digit within which the remaining-th entry falls.
      if (warp == 0) {
        int c[Per], sum = 0;
#pragma unroll
        for (int e = 0; e < Per; ++e) {
          c[e] = lane * Per + e < Digits ? hist[lane * Per + e] : 0;
          sum += c[e];
        }
        int incl = warp_inclusive_sum(sum), acc = incl - sum;
        if (acc < remaining && remaining <= incl) {
#pragma unroll
          for (int e = 0; e < Per; ++e) {
            if (acc + c[e] >= remaining) {
              ctl[0] = lane * Per + e;
              ctl[1] = remaining - acc;
              ctl[2] = c[e];
              break;
            }
            acc += c[e];
          }
        }
      }
      kite_sync();
      prefix |= U(ctl[0]) << shift;
      known |= U(Digits - 1) << shift;
      remaining = ctl[1];
      inDigit = ctl[2];
      if (inDigit == remaining)
        break; // every entry of that digit is wanted
    }
    // Gather: entries ranked below the prefix, then `remaining` of the
    // entries that share it (all of them, or the first by position).
    if (threadIdx.x == 0)
      ctl[3] = 0;
    kite_sync();
    const bool allTies = inDigit == remaining;
#pragma unroll
    for (int r = 0; r < Rounds; ++r) {
      int idx = r * Threads + threadIdx.x;
      U rk = rankAt(r, idx) & known;
      bool take = idx < L && (rk < prefix || (allTies && rk == prefix));
      unsigned b = __ballot_sync(0xffffffffu, take);
      if (b) {
        int base = 0;
        if (lane == 0)
          base = atomicAdd(&ctl[3], __popc(b));
        base = __shfl_sync(0xffffffffu, base, 0);
        if (take) {
          outK[base + __popc(b & below)] = lk[idx];
          outP[base + __popc(b & below)] = (P)idx;
        }
      }
    }
    if (!allTies) {
      int taken = 0;
#pragma unroll 1
      for (int r = 0; r < Rounds && taken < remaining; ++r) {
        int idx = r * Threads + threadIdx.x;
        bool tie = idx < L && (rankOf(idx) & known) == prefix;
        unsigned b = __ballot_sync(0xffffffffu, tie);
        if (lane == 0)
          warpSums[warp] = __popc(b);
        kite_sync();
        int before = 0, all = 0;
        for (int w = 0; w < Warps; ++w) {
          int s = warpSums[w];
          before += w < warp ? s : 0;
          all += s;
        }
        int rank = taken + before + __popc(b & below);
        if (tie && rank < remaining) {
          outK[KK - remaining + rank] = lk[idx];
          outP[KK - remaining + rank] = (P)idx;
        }
        taken += all;
        kite_sync();
      }
    }
    // The slots past KK sort last (a position past every valid one).
    for (int e = KK + threadIdx.x; e < K; e += Threads) {
      outK[e] = lk[0];
      outP[e] = (P)L;
    }
    kite_sync();
    bitonic_sort_lines<Desc, K, 1, Threads>(outK, outP, valid);
    for (int e = threadIdx.x; e < K; e += Threads) {
      lk[e] = outK[e];
      pos[line * K + e] = outP[e];
    }
    kite_sync();
  }
}

//===----------------------------------------------------------------------===//
// Random numbers (kite/random.hpp: the same bits as reference mode)
//===----------------------------------------------------------------------===//

/// The Philox words of one draw's last counter and seed. A kite.random op
/// keeps one for all of a thread's elements: consecutive offsets share a
/// counter (kite/random.hpp), so a thread's run of them calls Philox once
/// a group, whatever the layout; other offsets cost a compare each.
struct RandomMemo {
  unsigned long long seed = 0, counter = ~0ull; // no offset's counter is ~0
  kite::random::Words words;
};

__device__ __forceinline__ const kite::random::Words &k_rand_words(RandomMemo &m, i64 seed,
                                                                   unsigned long long counter) {
  if (counter != m.counter || (unsigned long long)seed != m.seed) {
    m.words = kite::random::philox((unsigned long long)seed, counter);
    m.counter = counter;
    m.seed = (unsigned long long)seed;
  }
  return m.words;
}
__device__ __forceinline__ float k_rand_uniform(i64 seed, i64 offset, RandomMemo &m) {
  unsigned long long o = (unsigned long long)offset;
  return kite::random::uniformFrom(k_rand_words(m, seed, kite::random::uniformCounter(o)), o);
}
__device__ __forceinline__ float k_rand_normal(i64 seed, i64 offset, RandomMemo &m) {
  unsigned long long o = (unsigned long long)offset;
  return kite::random::normalFrom(k_rand_words(m, seed, kite::random::pairCounter(o)), o);
}
__device__ __forceinline__ i64 k_rand_bits(i64 seed, i64 offset, RandomMemo &m) {
  unsigned long long o = (unsigned long long)offset;
  return kite::random::bits63From(k_rand_words(m, seed, kite::random::pairCounter(o)), o);
}

} // namespace kite_device

namespace kite_device {

//===----------------------------------------------------------------------===//
// Tensor-core tile products (mma.sync, sm_80 and up)
//===----------------------------------------------------------------------===//

template <class T> struct MmaInstr;
template <> struct MmaInstr<bf16> {
  static __device__ __forceinline__ void run(float (&d)[4], const unsigned (&a)[4],
                                             const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <> struct MmaInstr<f16> {
  static __device__ __forceinline__ void run(float (&d)[4], const unsigned (&a)[4],
                                             const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

/// Bulk stores (bulk_stores, sm_90): `Bytes` (a multiple of 16) from shared
/// memory at `src` to global memory at `dst`, both 16-byte aligned, copied
/// by the SM's copy engine while the thread goes on. The shared-memory
/// writes before it must be made visible to the copy engine
/// (fence_proxy_async) and to the issuing thread (a barrier).
template <int Bytes> __device__ __forceinline__ void bulk_store(void *dst, const void *src) {
  static_assert(Bytes > 0 && Bytes % 16 == 0, "bulk_store: a multiple of 16 bytes");
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst),
               "r"(smem_addr(src)), "n"(Bytes)
               : "memory");
#else
  __trap(); // emitted only for sm_90 and later (kite.bulk_store)
#endif
}
/// Waits until the thread's bulk stores have read their shared memory (so
/// that it can be written again); their global writes may still be in
/// flight, and complete before the kernel's end is visible to the host.
__device__ __forceinline__ void bulk_store_wait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
#endif
}
/// Waits until the thread's bulk stores have completed and orders their
/// global writes before its later reads of them (a barrier then extends
/// that to the block): for a program that reads back what it bulk-stored.
__device__ __forceinline__ void bulk_store_drain() {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
#endif
}
/// Orders this thread's shared-memory writes before later reads of them by
/// the asynchronous proxy (TMA, bulk copies, wgmma).
__device__ __forceinline__ void fence_proxy_async() {
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/// Four (x4) or two (x2) 8x8 matrices of 16-bit elements from shared
/// memory in mma fragment order: lane l gives the address of row l % 8 of
/// matrix l / 8 (16-byte aligned); `trans` transposes each matrix.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x2(unsigned (&r)[2], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x2_trans(unsigned (&r)[2], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr(p)));
}

/// The m16n8k16 B fragments (the x4 form: of the 8-column tiles at n0 and
/// n0 + 8) at K offset k0 of a B staged in shared memory as rows of LDB
/// elements: K rows of N, or with BT its transpose, N rows of K.
template <int LDB, bool BT, class T>
__device__ __forceinline__ void mma_b_x4(unsigned (&b)[4], const T *B, int k0, int n0) {
  const int lane = threadIdx.x % 32;
  if constexpr (BT) // matrices (k0, n0), (k0 + 8, n0), (k0, n0 + 8), (k0 + 8, n0 + 8)
    ldmatrix_x4(b, B + (n0 + lane % 8 + (lane / 16) * 8) * LDB + k0 + (lane / 8 % 2) * 8);
  else
    ldmatrix_x4_trans(b, B + (k0 + lane % 16) * LDB + n0 + (lane / 16) * 8);
}
template <int LDB, bool BT, class T>
__device__ __forceinline__ void mma_b_x2(unsigned (&b)[2], const T *B, int k0, int n0) {
  const int lane = threadIdx.x % 32;
  if constexpr (BT)
    ldmatrix_x2(b, B + (n0 + lane % 8) * LDB + k0 + (lane / 8 % 2) * 8);
  else
    ldmatrix_x2_trans(b, B + (k0 + lane % 16) * LDB + n0);
}

/// Two 16-bit elements as the 32-bit register of an mma fragment (`lo` in
/// the low half).
__device__ __forceinline__ unsigned mma_pack(bf16 lo, bf16 hi) {
  __nv_bfloat162 v = __halves2bfloat162(lo, hi);
  return *reinterpret_cast<unsigned *>(&v);
}
__device__ __forceinline__ unsigned mma_pack(f16 lo, f16 hi) {
  __half2 v = __halves2half2(lo, hi);
  return *reinterpret_cast<unsigned *>(&v);
}

/// C[PM][PN] (f32) = A[PM][PK] * B[PK][PN], all row-major in shared memory
/// with rows LDA, LDB and LDC elements apart (with BT, B is stored as its
/// transpose, PN rows of PK), on tensor cores. The warps
/// share 16x16 output fragments (16x8 where PN is not a multiple of 16)
/// round-robin; each runs m16n8k16 steps over K (PK a multiple of 16, the
/// padding zero), its operands read by ldmatrix (A as x4, B as x4/x2,
/// transposed unless BT). With LDA = PK + 8 and LDB = PN + 8 (PK + 8 with
/// BT; kite's staging) the 8
/// rows of each 8x8 matrix fall in 8 different 16-byte bank groups, so the
/// reads are free of bank conflicts; rows must start 16-byte aligned.
/// Fragment layouts are PTX's for mma.m16n8k16 (row.col): lane l holds rows
/// l/4 and l/4 + 8, columns (l%4)*2 and +1 of each 16x8 output.
template <int PM, int PN, int PK, int Warps, class T, int LDA = PK + 8, int LDB = PN + 8,
          int LDC = PN + 8, bool BT = false>
__device__ __forceinline__ void mma_tile(const T *A, const T *B, float *C) {
  static_assert(PM % 16 == 0 && PN % 8 == 0 && PK % 16 == 0, "mma_tile needs 16x8x16 steps");
  static_assert(LDA % 8 == 0 && LDB % 8 == 0 && LDC % 2 == 0, "mma_tile rows must be aligned");
  constexpr int NB = PN % 16 == 0 ? 16 : 8; // output columns per fragment
  constexpr int FM = PM / 16, FN = PN / NB;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  for (int f = warp; f < FM * FN; f += Warps) {
    const int m0 = (f / FN) * 16, n0 = (f % FN) * NB;
    float d[NB / 8][4] = {};
#pragma unroll 4
    for (int k0 = 0; k0 < PK; k0 += 16) {
      unsigned a[4];
      ldmatrix_x4(a, A + (m0 + lane % 16) * LDA + k0 + (lane / 16) * 8);
      if constexpr (NB == 16) {
        // Matrices (k0, n0), (k0 + 8, n0), (k0, n0 + 8), (k0 + 8, n0 + 8).
        unsigned b[4];
        mma_b_x4<LDB, BT>(b, B, k0, n0);
        const unsigned b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
        MmaInstr<T>::run(d[0], a, b0);
        MmaInstr<T>::run(d[NB / 8 - 1], a, b1);
      } else {
        unsigned b[2];
        mma_b_x2<LDB, BT>(b, B, k0, n0);
        MmaInstr<T>::run(d[0], a, b);
      }
    }
#pragma unroll
    for (int j = 0; j < NB / 8; ++j) {
      float *c = C + (m0 + g) * LDC + n0 + j * 8 + t * 2;
      *reinterpret_cast<float2 *>(c) = make_float2(d[j][0], d[j][1]);
      *reinterpret_cast<float2 *>(c + 8 * LDC) = make_float2(d[j][2], d[j][3]);
    }
  }
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

__device__ __forceinline__ void atomic_add(float *p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(int *p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(i64 *p, i64 v) {
  atomicAdd(reinterpret_cast<unsigned long long *>(p), (unsigned long long)v);
}
__device__ __forceinline__ void atomic_add(bf16 *p, bf16 v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(f16 *p, f16 v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_max(int *p, int v) { atomicMax(p, v); }
__device__ __forceinline__ void atomic_min(int *p, int v) { atomicMin(p, v); }
__device__ __forceinline__ void atomic_max(i64 *p, i64 v) { atomicMax(p, v); }
__device__ __forceinline__ void atomic_min(i64 *p, i64 v) { atomicMin(p, v); }

/// Float max/min through compare-and-swap of the value's bits (16-bit
/// CAS for bf16 and f16): NaN propagates, as torch's amax and amin do.
template <bool IsMax, class T>
__device__ __forceinline__ void atomic_extreme(T *p, T v) {
  typedef typename ScalarBits<sizeof(T)>::type B;
  B *ip = reinterpret_cast<B *>(p);
  B old = *ip;
  while (true) {
    T cur = *reinterpret_cast<const T *>(&old);
    T next = IsMax ? k_maximum(cur, v) : k_minimum(cur, v);
    B bits = *reinterpret_cast<const B *>(&next);
    if (bits == old)
      return;
    B seen = atomicCAS(ip, old, bits);
    if (seen == old)
      return;
    old = seen;
  }
}
__device__ __forceinline__ void atomic_max(float *p, float v) { atomic_extreme<true>(p, v); }
__device__ __forceinline__ void atomic_min(float *p, float v) { atomic_extreme<false>(p, v); }
__device__ __forceinline__ void atomic_max(double *p, double v) { atomic_extreme<true>(p, v); }
__device__ __forceinline__ void atomic_min(double *p, double v) { atomic_extreme<false>(p, v); }
__device__ __forceinline__ void atomic_max(bf16 *p, bf16 v) { atomic_extreme<true>(p, v); }
__device__ __forceinline__ void atomic_min(bf16 *p, bf16 v) { atomic_extreme<false>(p, v); }
__device__ __forceinline__ void atomic_max(f16 *p, f16 v) { atomic_extreme<true>(p, v); }
__device__ __forceinline__ void atomic_min(f16 *p, f16 v) { atomic_extreme<false>(p, v); }

} // namespace kite_device
