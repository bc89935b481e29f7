//===- random_test.cpp - Reference mode of examples/random.kite.cpp -------===//
//
// This file implements the reference-mode tests of in-kernel random
// numbers: Philox 4x32-10 against its published known answers, the
// distributions of rand, randn and randint, independence from block sizes,
// dropout's keep rate, and errors.
//
//===----------------------------------------------------------------------===//

#include "../../examples/random.kite.cpp"

#include "compare.hpp"

#include <cmath>

using namespace kite_test;
namespace kr = kite::random;

namespace {

// Known-answer vectors of Philox 4x32-10 (Random123's kat_vectors).
TEST(RandomReference, PhiloxKnownAnswers) {
  kr::Words zero = kr::philox4x32_10({{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(zero.w[0], 0x6627e8d5u);
  EXPECT_EQ(zero.w[1], 0xe169c58du);
  EXPECT_EQ(zero.w[2], 0xbc57ac4cu);
  EXPECT_EQ(zero.w[3], 0x9b00dbd8u);
  kr::Words ones =
      kr::philox4x32_10({{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu,
                        0xffffffffu);
  EXPECT_EQ(ones.w[0], 0x408f276du);
  EXPECT_EQ(ones.w[1], 0x41c83b0eu);
  EXPECT_EQ(ones.w[2], 0xa20bc7c6u);
  EXPECT_EQ(ones.w[3], 0x6d5451fdu);
  kr::Words pi = kr::philox4x32_10({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                                   0xa4093822u, 0x299f31d0u);
  EXPECT_EQ(pi.w[0], 0xd16cfe09u);
  EXPECT_EQ(pi.w[1], 0x94fdccebu);
  EXPECT_EQ(pi.w[2], 0x5001e420u);
  EXPECT_EQ(pi.w[3], 0x24126ea1u);
}

// The float helpers against libm, over their whole domains.
TEST(RandomReference, MathHelpersAreAccurate) {
  double worstLog = 0, worstCos = 0;
  for (uint32_t w = 0; w < (1u << 24); w += 97) {
    float u1 = float(w + 1) * 0x1p-24f;
    worstLog = std::max(worstLog, std::abs(double(kr::logUnit(u1)) - std::log(double(u1))));
    float u2 = float(w) * 0x1p-24f;
    worstCos = std::max(worstCos, std::abs(double(kr::cos2Pi(u2)) -
                                           std::cos(6.283185307179586 * double(u2))));
  }
  EXPECT_LT(worstLog, 4e-6); // |ln u| <= 16.7: a few float ulps
  EXPECT_LT(worstCos, 4e-7);
}

Tensor flatOffsets(int64_t m, int64_t n, int64_t base = 0) {
  std::vector<int64_t> v(m * n);
  for (int64_t i = 0; i < m * n; ++i)
    v[i] = base + i;
  return from_vector(v, {m, n});
}

TEST(RandomReference, Distributions) {
  int64_t m = 256, n = 1024;
  auto [u, z, k] = random_draws(flatOffsets(m, n), 42);
  auto uv = u.to_doubles(), zv = z.to_doubles(), kv = k.to_doubles();
  double su = 0, sz = 0, szz = 0, sk = 0;
  bool kIn = true, uIn = true;
  for (size_t i = 0; i < uv.size(); ++i) {
    su += uv[i];
    sz += zv[i];
    szz += zv[i] * zv[i];
    sk += kv[i];
    uIn &= uv[i] >= 0 && uv[i] < 1;
    kIn &= kv[i] >= -5 && kv[i] < 1000 && kv[i] == std::floor(kv[i]);
  }
  double N = double(uv.size());
  EXPECT_TRUE(uIn);
  EXPECT_TRUE(kIn);
  EXPECT_EQ(u.dtype(), f32);
  EXPECT_EQ(z.dtype(), f32);
  EXPECT_EQ(k.dtype(), i64);
  // Means and variance within 6 standard errors.
  EXPECT_NEAR(su / N, 0.5, 6 * std::sqrt(1.0 / 12 / N));
  EXPECT_NEAR(sz / N, 0.0, 6 / std::sqrt(N));
  EXPECT_NEAR(szz / N, 1.0, 6 * std::sqrt(2.0 / N));
  EXPECT_NEAR(sk / N, 497.0, 6 * 1005 / std::sqrt(12 * N));
}

// A value depends on (seed, offset) only: the same offsets in another shape,
// at other block sizes, give the same bits; another seed does not.
TEST(RandomReference, DependsOnSeedAndOffsetOnly) {
  auto offsets = flatOffsets(33, 65, int64_t(1) << 40);
  auto results = runAtBlockSizes({{1}, {7}, {64}},
                                 [&] { return std::get<1>(random_draws(offsets, 7)); });
  for (auto &r : results)
    EXPECT_TRUE(allClose(r, results[0], {0, 0}));
  auto reshaped = std::get<1>(random_draws(offsets.reshape({65, 33}), 7));
  EXPECT_EQ(reshaped.to_doubles(), results[0].to_doubles());
  auto other = std::get<1>(random_draws(offsets, 8)).to_doubles();
  auto same = results[0].to_doubles();
  int64_t equal = 0;
  for (size_t i = 0; i < same.size(); ++i)
    equal += other[i] == same[i];
  EXPECT_LT(equal, 5);
  // Distinct offsets give distinct draws.
  auto u = std::get<0>(random_draws(offsets, 7)).to_doubles();
  EXPECT_NE(u[0], u[1]);
}

TEST(RandomReference, DropoutKeepRate) {
  auto x = ones({300, 1000}, f32);
  for (double p : {0.1, 0.5, 0.9}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    auto v = dropout(x, p, 1234).to_doubles();
    double kept = 0;
    for (double e : v) {
      if (e != 0) {
        EXPECT_NEAR(e, 1.0 / (1.0 - p), 1e-6);
        ++kept;
      }
    }
    double N = double(v.size());
    EXPECT_NEAR(kept / N, 1.0 - p, 6 * std::sqrt(p * (1 - p) / N));
  }
  // Block sizes do not change the mask.
  auto masks = runAtBlockSizes({{1}, {16}, {64}}, [&] { return dropout(x, 0.3, 9); });
  for (auto &r : masks)
    EXPECT_TRUE(allClose(r, masks[0], {0, 0}));
}

TEST(RandomReference, Errors) {
  auto f = zeros({4}, f32);
  EXPECT_THROW(rand(1, f), Error);
  auto off = arange(4);
  EXPECT_THROW(randint(1, off, 5, 5), Error);
  try {
    randint(1, off, 3, 2);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("low < high"), std::string::npos) << e.what();
  }
}

} // namespace
