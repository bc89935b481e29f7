//===- kite/random.hpp - counter-based random numbers, host and device ----===//
//
// This file implements the random numbers of kite's in-kernel `rand`,
// `randn` and `randint`: Philox 4x32-10 (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC'11) keyed by the seed and counted by the
// element's offset, and the conversions of its output words to floats.
//
// One source serves reference mode (kite.hpp includes it) and generated
// CUDA (it is embedded for NVRTC with runtime/device/), so a value depends
// only on (seed, offset), never on block sizes, configs or the device, and
// the two produce the same bits. That holds because every floating-point
// step is exact, an IEEE division or square root, or an explicit fused
// multiply-add: nothing is left for a compiler to contract or approximate
// differently (the device forms are the `_rn` intrinsics, which fast-math
// flags do not change).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RANDOM_HPP
#define KITE_RANDOM_HPP

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KITE_RANDOM_FN __device__ __forceinline__
#else
#include <bit>
#include <cmath>
#define KITE_RANDOM_FN inline
#endif

namespace kite::random {

using u32 = unsigned int;
using u64 = unsigned long long;

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
KITE_RANDOM_FN u32 mulhi(u32 a, u32 b) { return __umulhi(a, b); }
KITE_RANDOM_FN float fma(float a, float b, float c) { return fmaf(a, b, c); }
KITE_RANDOM_FN float div(float a, float b) { return __fdiv_rn(a, b); }
KITE_RANDOM_FN float sqrt(float a) { return __fsqrt_rn(a); }
KITE_RANDOM_FN u32 bits(float f) { return __float_as_uint(f); }
KITE_RANDOM_FN float fromBits(u32 b) { return __uint_as_float(b); }
#else
KITE_RANDOM_FN u32 mulhi(u32 a, u32 b) { return u32((u64(a) * b) >> 32); }
KITE_RANDOM_FN float fma(float a, float b, float c) { return std::fma(a, b, c); }
KITE_RANDOM_FN float div(float a, float b) { return a / b; }
KITE_RANDOM_FN float sqrt(float a) { return std::sqrt(a); }
KITE_RANDOM_FN u32 bits(float f) { return std::bit_cast<u32>(f); }
KITE_RANDOM_FN float fromBits(u32 b) { return std::bit_cast<float>(b); }
#endif

/// a * b, rounded once (an fma with -0 keeps the product's sign of zero).
KITE_RANDOM_FN float mul(float a, float b) { return fma(a, b, -0.0f); }

/// Four 32-bit words: a Philox counter or its output.
struct Words {
  u32 w[4];
};

/// Philox 4x32-10 of counter `c` under key (k0, k1).
KITE_RANDOM_FN Words philox4x32_10(Words c, u32 k0, u32 k1) {
  for (int round = 0; round < 10; ++round) {
    if (round) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    u32 hi0 = mulhi(0xD2511F53u, c.w[0]), lo0 = 0xD2511F53u * c.w[0];
    u32 hi1 = mulhi(0xCD9E8D57u, c.w[2]), lo1 = 0xCD9E8D57u * c.w[2];
    c = {{hi1 ^ c.w[1] ^ k0, lo1, hi0 ^ c.w[3] ^ k1, lo0}};
  }
  return c;
}

/// Philox's four words for `counter` under `seed`: the counter is
/// (counter, 0), the key the seed (low words first).
KITE_RANDOM_FN Words philox(u64 seed, u64 counter) {
  return philox4x32_10({{u32(counter), u32(counter >> 32), 0u, 0u}}, u32(seed), u32(seed >> 32));
}

/// The top 24 bits of `w` as a float in [0, 1): exact, never 1.
KITE_RANDOM_FN float unitFloat(u32 w) { return float(w >> 8) * 0x1p-24f; }

/// ln(u) for a normal float u in (0, 1]: u = m * 2^e with m in
/// [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with s = (m - 1) / (m + 1)
/// (|s| < 0.172) by its series to s^9, then e * ln 2.
KITE_RANDOM_FN float logUnit(float u) {
  u32 b = bits(u);
  int e = int(b >> 23) - 127;
  float m = fromBits((b & 0x7fffffu) | 0x3f800000u);
  if (m > 1.41421356f) {
    m = m * 0.5f; // exact
    ++e;
  }
  float s = div(m - 1.0f, m + 1.0f); // m - 1 is exact (Sterbenz)
  float z = mul(s, s);
  float p = fma(z, 2.0f / 9.0f, 2.0f / 7.0f);
  p = fma(z, p, 2.0f / 5.0f);
  p = fma(z, p, 2.0f / 3.0f);
  float lnm = fma(mul(s, z), p, 2.0f * s);
  return fma(float(e), 0.693147182f, lnm);
}

/// sin(g pi/2) and cos(g pi/2) for g in [0, 1/2], by their Taylor series in
/// (g pi/2)^2 (the first omitted terms are below 2^-28 there).
KITE_RANDOM_FN float sinQuarter(float g) {
  float x = mul(g, 1.57079637f), z = mul(x, x);
  float p = fma(z, 1.0f / 362880.0f, -1.0f / 5040.0f);
  p = fma(z, p, 1.0f / 120.0f);
  p = fma(z, p, -1.0f / 6.0f);
  return fma(mul(x, z), p, x);
}
KITE_RANDOM_FN float cosQuarter(float g) {
  float x = mul(g, 1.57079637f), z = mul(x, x);
  float p = fma(z, -1.0f / 3628800.0f, 1.0f / 40320.0f);
  p = fma(z, p, -1.0f / 720.0f);
  p = fma(z, p, 1.0f / 24.0f);
  p = fma(z, p, -0.5f);
  return fma(z, p, 1.0f);
}

/// cos(2 pi u) for u in [0, 1): the quadrant from 4u (exact), then the
/// nearer of the quadrant's two ends, so the series runs over [0, pi/4].
KITE_RANDOM_FN float cos2Pi(float u) {
  float t = u * 4.0f; // exact
  int q = int(t);
  float f = t - float(q); // exact
  bool far = f > 0.5f;
  float g = far ? 1.0f - f : f; // exact (Sterbenz)
  // cos over the quadrant: q=0 cos, 1 -sin, 2 -cos, 3 sin of (f pi/2);
  // past f = 1/2, cos(f pi/2) = sin(g pi/2) and sin(f pi/2) = cos(g pi/2).
  bool useSin = ((q & 1) != 0) != far;
  float v = useSin ? sinQuarter(g) : cosQuarter(g);
  return (q == 1 || q == 2) ? -v : v;
}

// Consecutive offsets share a Philox call: rand at offset o takes word o % 4
// of counter o / 4, randn and randint (two words each) words 2(o % 2) and
// 2(o % 2) + 1 of counter o / 2. Every (counter, word) pair belongs to one
// offset. Generated code keeps the last counter's words (kite_device.cuh's
// RandomMemo), so a thread that draws at o, o + 1, ... calls Philox once a
// group: dropout over rows makes a quarter of the calls it would otherwise.

/// Word `i` (0-3) of `w`, by selects rather than an indexed load.
KITE_RANDOM_FN u32 word(const Words &w, u64 i) {
  return i == 0 ? w.w[0] : i == 1 ? w.w[1] : i == 2 ? w.w[2] : w.w[3];
}

/// The Philox counters of rand's offset and of randn's and randint's.
KITE_RANDOM_FN u64 uniformCounter(u64 offset) { return offset >> 2; }
KITE_RANDOM_FN u64 pairCounter(u64 offset) { return offset >> 1; }

/// rand from its counter's words: uniform in [0, 1).
KITE_RANDOM_FN float uniformFrom(const Words &w, u64 offset) {
  return unitFloat(word(w, offset & 3));
}

/// randn from its counter's words: standard normal by Box-Muller from the
/// offset's pair of words.
KITE_RANDOM_FN float normalFrom(const Words &w, u64 offset) {
  u64 pair = (offset & 1) * 2;
  float u1 = float((word(w, pair) >> 8) + 1) * 0x1p-24f; // (0, 1], exact
  float u2 = unitFloat(word(w, pair + 1));
  float r = sqrt(-2.0f * logUnit(u1)); // -2x is exact
  return mul(r, cos2Pi(u2));
}

/// randint's bits from its counter's words: the offset's pair of words as
/// 63 uniform bits (a nonnegative int64), which randint reduces into its
/// range.
KITE_RANDOM_FN long long bits63From(const Words &w, u64 offset) {
  u64 pair = (offset & 1) * 2;
  return (long long)(((u64(word(w, pair + 1)) << 32) | word(w, pair)) >> 1);
}

KITE_RANDOM_FN float uniform(u64 seed, u64 offset) {
  return uniformFrom(philox(seed, uniformCounter(offset)), offset);
}
KITE_RANDOM_FN float normal(u64 seed, u64 offset) {
  return normalFrom(philox(seed, pairCounter(offset)), offset);
}
KITE_RANDOM_FN long long bits63(u64 seed, u64 offset) {
  return bits63From(philox(seed, pairCounter(offset)), offset);
}

} // namespace kite::random

#undef KITE_RANDOM_FN

#endif // KITE_RANDOM_HPP
