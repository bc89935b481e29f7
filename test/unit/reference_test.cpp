//===- reference_test.cpp - kite.hpp's reference mode ---------------------===//
//
// This file tests the CPU eager implementation of the kite DSL against
// hand-computed values and plain loops: dtypes and 16-bit rounding, PyTorch
// promotion and broadcasting, every op, reductions, matmuls, subscripts and
// stores, masks, atomics, loops and tiles, reference block sizes, and the
// errors users get.
//
//===----------------------------------------------------------------------===//

#include <kite/kite.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

using namespace kite;

namespace {

std::vector<double> vals(const Tensor &t) { return t.to_doubles(); }
using V = std::vector<double>;
using S = std::vector<int64_t>;

Tensor f32v(std::vector<float> v, S sizes = {}) {
  if (sizes.empty()) sizes = {static_cast<int64_t>(v.size())};
  return from_vector(v, sizes);
}
Tensor i32v(std::vector<int32_t> v, S sizes = {}) {
  if (sizes.empty()) sizes = {static_cast<int64_t>(v.size())};
  return from_vector(v, sizes);
}
Tensor i64v(std::vector<int64_t> v, S sizes = {}) {
  if (sizes.empty()) sizes = {static_cast<int64_t>(v.size())};
  return from_vector(v, sizes);
}
Tensor boolv(std::vector<bool> v) { return from_vector(v); }

/// Runs f and checks that it throws kite::Error whose message contains each
/// of the given fragments.
template <class F> void expectError(F &&f, std::initializer_list<const char *> fragments) {
  try {
    f();
  } catch (const Error &e) {
    std::string msg = e.what();
    for (const char *frag : fragments)
      EXPECT_NE(msg.find(frag), std::string::npos) << "message: " << msg << "\nmissing: " << frag;
    return;
  } catch (const std::exception &e) {
    ADD_FAILURE() << "threw a non-kite exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "did not throw";
}

float f(double v) { return static_cast<float>(v); }

} // namespace

//===----------------------------------------------------------------------===//
// DTypes and 16-bit floats
//===----------------------------------------------------------------------===//

TEST(DType, NamesSizesKinds) {
  EXPECT_STREQ(dtype_name(bf16), "bf16");
  EXPECT_STREQ(dtype_name(f16), "f16");
  EXPECT_STREQ(dtype_name(boolean), "bool");
  EXPECT_EQ(element_size(bf16), 2);
  EXPECT_EQ(element_size(f64), 8);
  EXPECT_EQ(element_size(i8), 1);
  EXPECT_EQ(element_size(boolean), 1);
  EXPECT_TRUE(is_floating(bf16));
  EXPECT_FALSE(is_floating(i64));
  EXPECT_FALSE(is_floating(boolean));
}

TEST(DType, PromotionTable) {
  EXPECT_EQ(promote_types(bf16, f16), f32);
  EXPECT_EQ(promote_types(f16, bf16), f32);
  EXPECT_EQ(promote_types(bf16, f32), f32);
  EXPECT_EQ(promote_types(f16, f64), f64);
  EXPECT_EQ(promote_types(i32, f32), f32);
  EXPECT_EQ(promote_types(i64, bf16), bf16);
  EXPECT_EQ(promote_types(i64, f16), f16);
  EXPECT_EQ(promote_types(boolean, i32), i32);
  EXPECT_EQ(promote_types(boolean, f16), f16);
  EXPECT_EQ(promote_types(i8, i32), i32);
  EXPECT_EQ(promote_types(i32, i64), i64);
  EXPECT_EQ(promote_types(i8, boolean), i8);
  EXPECT_EQ(promote_types(boolean, boolean), boolean);
  EXPECT_EQ(promote_types(f32, f32), f32);
}

TEST(Float16, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(bfloat16(1.00390625f).bits, 0x3f80); // 1 + 2^-8: tie, to even (down)
  EXPECT_EQ(bfloat16(1.01171875f).bits, 0x3f82); // 1 + 3*2^-8: tie, to even (up)
  EXPECT_EQ(bfloat16(1.0078125f + 1e-6f).bits, 0x3f81);
  EXPECT_EQ(bfloat16(-2.0f).bits, 0xc000);
  EXPECT_EQ(bfloat16(std::numeric_limits<float>::infinity()).bits, 0x7f80);
  EXPECT_EQ(bfloat16(std::numeric_limits<float>::max()).bits, 0x7f80); // rounds up to inf
  EXPECT_EQ(bfloat16(std::nanf("")).bits, 0x7fc0);
  EXPECT_EQ(static_cast<float>(bfloat16::from_bits(0x4049)), 3.140625f);
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16::from_bits(0xffc1))));
}

TEST(Float16, HalfRoundsToNearestEven) {
  EXPECT_EQ(half(1.0f).bits, 0x3c00);
  EXPECT_EQ(half(-0.0f).bits, 0x8000);
  EXPECT_EQ(half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(half(65519.0f).bits, 0x7bff);
  EXPECT_EQ(half(65520.0f).bits, 0x7c00); // tie with an odd mantissa: to inf
  EXPECT_EQ(half(1e6f).bits, 0x7c00);
  EXPECT_EQ(half(-std::numeric_limits<float>::infinity()).bits, 0xfc00);
  EXPECT_EQ(half(std::nanf("")).bits & 0x7fff, 0x7e00);
  EXPECT_EQ(half(2049.0f).bits, half(2048.0f).bits); // tie, to even
  EXPECT_EQ(half(2051.0f).bits, half(2052.0f).bits); // tie, to even
  // Subnormals: the unit is 2^-24.
  EXPECT_EQ(half(std::ldexp(1.0f, -24)).bits, 0x0001);
  EXPECT_EQ(half(std::ldexp(1.0f, -25)).bits, 0x0000);        // tie, to even (0)
  EXPECT_EQ(half(std::ldexp(3.0f, -26)).bits, 0x0001);        // 0.75 units
  EXPECT_EQ(half(std::ldexp(3.0f, -25)).bits, 0x0002);        // 1.5 units: tie, to 2
  EXPECT_EQ(half(std::ldexp(5.0f, -25)).bits, 0x0002);        // 2.5 units: tie, to 2
  EXPECT_EQ(half(std::ldexp(1.0f, -14)).bits, 0x0400);        // smallest normal
  EXPECT_EQ(half(std::ldexp(1023.5f, -24)).bits, 0x0400);     // rounds up into normal
  EXPECT_EQ(static_cast<float>(half::from_bits(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(half::from_bits(0x7bff)), 65504.0f);
  EXPECT_EQ(static_cast<float>(half::from_bits(0xc200)), -3.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(half::from_bits(0xfc00))));
}

TEST(Float8, E4M3Codes) {
  EXPECT_STREQ(dtype_name(e4m3), "e4m3");
  EXPECT_EQ(element_size(e4m3), 1);
  EXPECT_TRUE(is_floating(e4m3));
  EXPECT_EQ(float8_e4m3(1.0f).bits, 0x38);
  EXPECT_EQ(float8_e4m3(-2.0f).bits, 0xc0);
  EXPECT_EQ(float8_e4m3(448.0f).bits, 0x7e);             // the largest
  EXPECT_EQ(float8_e4m3(464.0f).bits, 0x7e);             // tie with 480: to even (448)
  EXPECT_EQ(float8_e4m3(465.0f).bits, 0x7f);             // rounds past 448: NaN, no saturation
  EXPECT_EQ(float8_e4m3(-1e9f).bits, 0xff);
  EXPECT_EQ(float8_e4m3(std::numeric_limits<float>::infinity()).bits, 0x7f);
  EXPECT_EQ(float8_e4m3(std::ldexp(1.0f, -6)).bits, 0x08); // smallest normal
  EXPECT_EQ(float8_e4m3(std::ldexp(1.0f, -9)).bits, 0x01); // smallest subnormal
  EXPECT_EQ(float8_e4m3(std::ldexp(1.0f, -10)).bits, 0x00); // tie with 0: to even
  EXPECT_EQ(float8_e4m3(std::ldexp(3.0f, -10)).bits, 0x02); // 1.5 units: tie, to 2
  EXPECT_EQ(float8_e4m3(1.0625f).bits, 0x38);             // 1 + 2^-4: tie, to even (down)
  EXPECT_EQ(float8_e4m3(1.1875f).bits, 0x3a);             // 1 + 3*2^-4: tie, to even (up)
  EXPECT_EQ(float8_e4m3(-0.0f).bits, 0x80);
  EXPECT_TRUE(std::isnan(static_cast<float>(float8_e4m3::from_bits(0x7f))));
  EXPECT_EQ(static_cast<float>(float8_e4m3::from_bits(0x7e)), 448.0f);
  EXPECT_EQ(static_cast<float>(float8_e4m3::from_bits(0x78)), 256.0f); // S.1111.000 is finite
  EXPECT_EQ(static_cast<float>(float8_e4m3::from_bits(0x83)), -std::ldexp(3.0f, -9));
}

TEST(Float8, E5M2Codes) {
  EXPECT_STREQ(dtype_name(e5m2), "e5m2");
  EXPECT_EQ(float8_e5m2(1.0f).bits, 0x3c);
  EXPECT_EQ(float8_e5m2(57344.0f).bits, 0x7b);            // the largest
  EXPECT_EQ(float8_e5m2(61440.0f).bits, 0x7c);            // tie with odd 57344: to infinity
  EXPECT_EQ(float8_e5m2(61439.0f).bits, 0x7b);
  EXPECT_EQ(float8_e5m2(-std::numeric_limits<float>::infinity()).bits, 0xfc);
  EXPECT_EQ(float8_e5m2(std::nanf("")).bits & 0x7f, 0x7f);
  EXPECT_EQ(float8_e5m2(std::ldexp(1.0f, -16)).bits, 0x01); // smallest subnormal
  EXPECT_EQ(float8_e5m2(std::ldexp(1.0f, -14)).bits, 0x04); // smallest normal
  EXPECT_EQ(float8_e5m2(1.125f).bits, 0x3c);              // tie, to even (down)
  EXPECT_TRUE(std::isinf(static_cast<float>(float8_e5m2::from_bits(0x7c))));
  EXPECT_TRUE(std::isnan(static_cast<float>(float8_e5m2::from_bits(0x7d))));
  EXPECT_EQ(static_cast<float>(float8_e5m2::from_bits(0xc2)), -3.0f);
}

TEST(Float8, EveryCodeRoundTripsAndOrders) {
  // Each finite code decodes to a value that encodes back to it, the
  // positive codes are increasing, and a value halfway between two
  // neighbours goes to the one with the even code.
  auto check = [](auto from_bits, int last) {
    using F = decltype(from_bits(uint8_t{0}));
    for (int c = 0; c <= last; ++c) {
      float v = static_cast<float>(from_bits(static_cast<uint8_t>(c)));
      float n = static_cast<float>(from_bits(static_cast<uint8_t>(c | 0x80)));
      EXPECT_EQ(F(v).bits, c) << c;
      EXPECT_EQ(F(n).bits, c | 0x80) << c;
      if (c == last) continue;
      float next = static_cast<float>(from_bits(static_cast<uint8_t>(c + 1)));
      EXPECT_LT(v, next) << c;
      EXPECT_EQ(F((v + next) / 2).bits, (c % 2 == 0) ? c : c + 1) << c;
    }
  };
  check([](uint8_t b) { return float8_e4m3::from_bits(b); }, 0x7e);
  check([](uint8_t b) { return float8_e5m2::from_bits(b); }, 0x7b);
}

TEST(Float8, TensorsComputeInF32AndRoundOnce) {
  EXPECT_EQ(promote_types(e4m3, e5m2), f32);
  EXPECT_EQ(promote_types(e4m3, bf16), bf16);
  EXPECT_EQ(promote_types(f16, e5m2), f16);
  EXPECT_EQ(promote_types(e4m3, f32), f32);
  EXPECT_EQ(promote_types(i64, e4m3), e4m3);
  Tensor a = from_vector<float>({1.0f, 2.0f, 300.0f}).to(e4m3);
  Tensor b = from_vector<float>({0.0625f, 0.1875f, 200.0f}).to(e4m3);
  EXPECT_EQ(a.dtype(), e4m3);
  // 1 + 1/16 ties to 1; 2 + 0.1875 rounds to 2.25; 288 + 192 (200 rounded) = 480: NaN.
  Tensor s = a + b;
  EXPECT_EQ(s.dtype(), e4m3);
  std::vector<double> sv = vals(s);
  EXPECT_EQ(sv[0], 1.0);
  EXPECT_EQ(sv[1], 2.25);
  EXPECT_TRUE(std::isnan(sv[2]));
  EXPECT_EQ((a * 2.0).dtype(), e4m3); // scalars are weak
  EXPECT_EQ((a + from_vector<float>({0, 0, 0}).to(bf16)).dtype(), bf16);
  EXPECT_EQ(vals(a.to(f32)), (V{1.0, 2.0, 288.0})); // 300 rounds to 288
  // Products of 8-bit floats accumulate in f32 (dot) or give f32 sums (bmm's out_dtype).
  Tensor x = from_vector<float>({1, 2, 3, 4}, {2, 2}).to(e4m3);
  Tensor y = from_vector<float>({0.5f, 0.25f, 8, 16}, {2, 2}).to(e5m2);
  Tensor d = dot(x, y);
  EXPECT_EQ(d.dtype(), f32);
  EXPECT_EQ(vals(d), (V{16.5, 32.25, 33.5, 64.75}));
  Tensor xb = x.unsqueeze(0), yb = from_vector<float>({0.5f, 0.25f, 8, 16}, {1, 2, 2}).to(e4m3);
  EXPECT_EQ(bmm(xb, yb, f32).dtype(), f32);
  EXPECT_EQ(vals(bmm(xb, yb, f32)), (V{16.5, 32.25, 33.5, 64.75}));
}

TEST(Float16, ArithmeticRoundsOnceFromFloat) {
  // bf16: 1 + 2^-8 is exact in f32 but rounds to 1 in bf16.
  Tensor a = from_vector<float>({1.0f, 3.0f}).to(bf16);
  Tensor b = from_vector<float>({0.00390625f, 0.01171875f}).to(bf16);
  Tensor s = a + b;
  EXPECT_EQ(s.dtype(), bf16);
  EXPECT_EQ(vals(s), (V{1.0, 3.015625}));
  EXPECT_EQ(vals(a.to(f32) + b), (V{1.00390625, 3.01171875}));
  // f16: 2048 + 1 ties to 2048; 2050 + 1 ties to 2052.
  Tensor h = from_vector<float>({2048.0f, 2050.0f}).to(f16);
  EXPECT_EQ(vals(h + 1), (V{2048.0, 2052.0}));
  // f64 -> bf16 goes through f32, as PyTorch does.
  EXPECT_EQ(vals(from_vector<double>({1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)}).to(bf16)),
            (V{1.0}));
}

//===----------------------------------------------------------------------===//
// Promotion with scalars, broadcasting
//===----------------------------------------------------------------------===//

TEST(Promotion, WeakScalars) {
  Tensor b = from_vector<float>({1, 2}).to(bf16);
  EXPECT_EQ((b * 2.0).dtype(), bf16);
  EXPECT_EQ((2.0 * b).dtype(), bf16);
  Tensor i = i32v({1, 2, 3});
  EXPECT_EQ((i + 1).dtype(), i32);
  EXPECT_EQ(vals(i + 1), (V{2, 3, 4}));
  EXPECT_EQ((i * 2.5).dtype(), f32);
  EXPECT_EQ(vals(i * 2.5), (V{2.5, 5, 7.5}));
  EXPECT_EQ((boolv({true, false}) + 1).dtype(), i64);
  EXPECT_EQ((boolv({true, false}) + true).dtype(), boolean);
  EXPECT_EQ((boolv({true, false}) * 1.5).dtype(), f32);
  EXPECT_EQ((i64v({1}) + 1.0f).dtype(), f32);
  EXPECT_EQ((f32v({1}).to(f64) + 1.0f).dtype(), f64);
  // Scalars compute at op-math precision: 3 * (1 + 2^-8) in f32, then to bf16.
  Tensor three = from_vector<float>({3.0f}).to(bf16);
  EXPECT_EQ(vals(three * 1.00390625), (V{3.015625}));
  // An integer scalar that does not fit the tensor's integer dtype.
  expectError([&] { (void)(i32v({1}).to(i8) + 1000); }, {"operator+", "1000", "i8", "overflow"});
}

TEST(Promotion, ZeroDimTensorsAreWeak) {
  Tensor b = from_vector<float>({1, 2}).to(bf16);
  Tensor z32 = full({}, 0.5, f32);
  EXPECT_EQ(z32.dim(), 0);
  EXPECT_EQ((b + z32).dtype(), bf16);
  EXPECT_EQ((f32v({1}) + full({}, 0.5, f64)).dtype(), f32);
  EXPECT_EQ((i32v({1}) + z32).dtype(), f32);
  EXPECT_EQ((full({}, 1, i32) + full({}, 1, f16)).dtype(), f16);
  EXPECT_EQ((f32v({1}).to(f16) + f32v({1})).dtype(), f32); // both dimensioned: promote
}

TEST(Promotion, Broadcasting) {
  Tensor a = f32v({1, 2, 3}, {3, 1});
  Tensor b = f32v({10, 20, 30, 40});
  Tensor c = a + b;
  EXPECT_EQ(c.sizes(), (S{3, 4}));
  EXPECT_EQ(vals(c), (V{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}));
  EXPECT_EQ((a * full({}, 2.0, f32)).sizes(), (S{3, 1}));
  Tensor d = f32v({1, 2, 3, 4, 5, 6}, {2, 3});
  expectError([&] { (void)(d + b); }, {"operator+", "[2,3]", "[4]", "not broadcastable"});
  expectError([&] { (void)where(boolv({true, false}), d, 1.0); }, {"where", "not broadcastable"});
}

//===----------------------------------------------------------------------===//
// Element-wise operations
//===----------------------------------------------------------------------===//

TEST(Ops, Arithmetic) {
  Tensor a = f32v({7, -7, 7.5f, -7.5f});
  Tensor b = f32v({2, 2, -2, 2});
  EXPECT_EQ(vals(a + b), (V{9, -5, 5.5, -5.5}));
  EXPECT_EQ(vals(a - b), (V{5, -9, 9.5, -9.5}));
  EXPECT_EQ(vals(a * b), (V{14, -14, -15, -15}));
  EXPECT_EQ(vals(a / b), (V{3.5, -3.5, -3.75, -3.75}));
  EXPECT_EQ(vals(a % b), (V{1, 1, -0.5, 0.5})); // Python remainder: divisor's sign
  EXPECT_EQ(vals(-a), (V{-7, 7, -7.5, 7.5}));
  EXPECT_EQ(vals(1 - a), (V{-6, 8, -6.5, 8.5}));
  EXPECT_EQ(vals(a / 0.0)[0], std::numeric_limits<double>::infinity());

  Tensor i = i32v({7, -7, 7, -7});
  Tensor j = i32v({3, 3, -3, -3});
  EXPECT_EQ(vals(i % j), (V{1, 2, -2, -1}));
  EXPECT_EQ((i / j).dtype(), f32); // true division
  EXPECT_EQ(vals(i32v({7}) / 2), (V{3.5}));
  EXPECT_EQ(vals(i32v({2147483647}) + 1), (V{-2147483648.0})); // wraps
  EXPECT_EQ(vals(-i32v({5})), (V{-5}));
  expectError([&] { (void)(i % i32v({0, 1, 1, 1})); }, {"operator%", "division by zero"});
  expectError([&] { (void)(boolv({true}) - boolv({false})); }, {"operator-", "boolean"});
  expectError([&] { (void)(-boolv({true})); }, {"operator-", "boolean"});
}

TEST(Ops, ComparisonsAndBitwise) {
  Tensor a = f32v({1, 2, 3});
  EXPECT_EQ((a < 2).dtype(), boolean);
  EXPECT_EQ(vals(a < 2), (V{1, 0, 0}));
  EXPECT_EQ(vals(a <= 2), (V{1, 1, 0}));
  EXPECT_EQ(vals(a > 2), (V{0, 0, 1}));
  EXPECT_EQ(vals(a >= 2), (V{0, 1, 1}));
  EXPECT_EQ(vals(a == 2), (V{0, 1, 0}));
  EXPECT_EQ(vals(a != 2), (V{1, 0, 1}));
  EXPECT_EQ(vals(2 < a), (V{0, 0, 1}));
  EXPECT_EQ(vals(i32v({1, 2}) < 1.5), (V{1, 0}));
  Tensor nan = f32v({std::nanf("")});
  EXPECT_EQ(vals(nan == nan), (V{0}));
  EXPECT_EQ(vals(nan != nan), (V{1}));

  Tensor p = boolv({true, true, false, false}), q = boolv({true, false, true, false});
  EXPECT_EQ((p & q).dtype(), boolean);
  EXPECT_EQ(vals(p & q), (V{1, 0, 0, 0}));
  EXPECT_EQ(vals(p | q), (V{1, 1, 1, 0}));
  EXPECT_EQ(vals(p ^ q), (V{0, 1, 1, 0}));
  EXPECT_EQ(vals(~p), (V{0, 0, 1, 1}));
  EXPECT_EQ(vals(i32v({12}) & 10), (V{8}));
  EXPECT_EQ(vals(i32v({12}) | 3), (V{15}));
  EXPECT_EQ(vals(i32v({12}) ^ 4), (V{8}));
  EXPECT_EQ(vals(~i32v({0, 5})), (V{-1, -6}));
  expectError([&] { (void)(a & a); }, {"operator&", "f32"});
  expectError([&] { (void)~a; }, {"operator~", "f32"});
}

TEST(Ops, UnaryFloat) {
  std::vector<float> xs = {-1.5f, -0.25f, 0.0f, 0.5f, 2.0f};
  Tensor x = f32v(xs);
  auto check = [&](const Tensor &r, double (*ref)(double), const char *name) {
    EXPECT_EQ(r.dtype(), f32) << name;
    V got = vals(r);
    for (size_t k = 0; k < xs.size(); ++k)
      EXPECT_EQ(got[k], static_cast<double>(f(ref(xs[k])))) << name << " at " << xs[k];
  };
  check(exp(x), [](double v) { return std::exp(v); }, "exp");
  check(exp2(x), [](double v) { return std::exp2(v); }, "exp2");
  check(abs(x), [](double v) { return std::fabs(v); }, "abs");
  check(sin(x), [](double v) { return std::sin(v); }, "sin");
  check(cos(x), [](double v) { return std::cos(v); }, "cos");
  check(tanh(x), [](double v) { return std::tanh(v); }, "tanh");
  check(erf(x), [](double v) { return std::erf(v); }, "erf");
  check(sigmoid(x), [](double v) { return 1 / (1 + std::exp(-v)); }, "sigmoid");
  check(silu(x), [](double v) { return v / (1 + std::exp(-v)); }, "silu");
  check(gelu(x), [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, "gelu");
  check(relu(x), [](double v) { return v > 0 ? v : 0.0; }, "relu");
  check(floor(x), [](double v) { return std::floor(v); }, "floor");
  check(ceil(x), [](double v) { return std::ceil(v); }, "ceil");
  Tensor p = f32v({0.25f, 1.0f, 4.0f, 8.0f});
  EXPECT_EQ(vals(sqrt(p)), (V{0.5, 1, 2, static_cast<double>(f(std::sqrt(8.0)))}));
  EXPECT_EQ(vals(rsqrt(p)), (V{2, 1, 0.5, static_cast<double>(f(1 / std::sqrt(8.0)))}));
  EXPECT_EQ(vals(log2(p)), (V{-2, 0, 2, 3}));
  EXPECT_EQ(vals(log(p))[1], 0.0);
  EXPECT_EQ(vals(log(p))[2], static_cast<double>(f(std::log(4.0))));
  EXPECT_TRUE(std::isnan(vals(relu(f32v({std::nanf("")})))[0]));
  // bf16 in, bf16 out, rounded once.
  Tensor b = exp(f32v({1.0f}).to(bf16));
  EXPECT_EQ(b.dtype(), bf16);
  EXPECT_EQ(vals(b), (V{static_cast<double>(static_cast<float>(bfloat16(f(std::exp(1.0)))))}));
}

TEST(Ops, UnaryIntegerInputs) {
  Tensor i = i32v({-2, 0, 3});
  EXPECT_EQ(exp(i).dtype(), f32);
  EXPECT_EQ(vals(exp(i))[1], 1.0);
  EXPECT_EQ(sqrt(i64v({4})).dtype(), f32);
  EXPECT_EQ(vals(sqrt(i64v({4}))), (V{2}));
  EXPECT_EQ(abs(i).dtype(), i32);
  EXPECT_EQ(vals(abs(i)), (V{2, 0, 3}));
  EXPECT_EQ(vals(relu(i)), (V{0, 0, 3}));
  EXPECT_EQ(floor(i).dtype(), i32);
  EXPECT_EQ(vals(ceil(i)), (V{-2, 0, 3}));
  expectError([&] { (void)silu(i); }, {"silu", "i32", ".to(f32)"});
  expectError([&] { (void)gelu(i); }, {"gelu", "i32"});
}

TEST(Ops, PowMaxMinClampWhere) {
  EXPECT_EQ(vals(pow(i32v({2, 3}), 10)), (V{1024, 59049}));
  EXPECT_EQ(pow(i32v({2}), 10).dtype(), i32);
  EXPECT_EQ(vals(pow(f32v({4, 9}), 0.5)), (V{2, 3}));
  EXPECT_EQ(vals(pow(2, i32v({0, 3}))), (V{1, 8}));
  EXPECT_EQ(vals(pow(2.0, i32v({-1}))), (V{0.5}));
  EXPECT_EQ(pow(2.0, i32v({-1})).dtype(), f32);
  expectError([&] { (void)pow(i32v({2}), -1); }, {"pow", "negative"});

  float nan = std::nanf("");
  Tensor a = f32v({1, 5, nan, 2}), b = f32v({3, 2, 1, nan});
  V mx = vals(maximum(a, b)), mn = vals(minimum(a, b));
  EXPECT_EQ(mx[0], 3);
  EXPECT_EQ(mx[1], 5);
  EXPECT_TRUE(std::isnan(mx[2]) && std::isnan(mx[3]));
  EXPECT_EQ(mn[0], 1);
  EXPECT_EQ(mn[1], 2);
  EXPECT_TRUE(std::isnan(mn[2]) && std::isnan(mn[3]));
  EXPECT_EQ(vals(maximum(i32v({1, 5}), 3)), (V{3, 5}));

  EXPECT_EQ(vals(clamp(f32v({-2, 0.5f, 7}), 0, 1)), (V{0, 0.5, 1}));
  EXPECT_EQ(clamp(i32v({-2, 5}), 0, 3).dtype(), i32);
  EXPECT_EQ(vals(clamp(i32v({-2, 5}), 0, 3)), (V{0, 3}));
  EXPECT_EQ(clamp(i32v({-2, 5}), 0, 1.5).dtype(), f32);
  EXPECT_EQ(vals(clamp(i32v({-2, 5}), 0, 1.5)), (V{0, 1.5}));
  EXPECT_EQ(vals(clamp(f32v({1, 2, 3}), f32v({2, 2, 2}), f32v({2.5f, 2.5f, 2.5f}))),
            (V{2, 2, 2.5}));

  Tensor c = boolv({true, false, true});
  EXPECT_EQ(vals(where(c, f32v({1, 2, 3}), f32v({10, 20, 30}))), (V{1, 20, 3}));
  EXPECT_EQ(where(c, 1.0, 0.0).dtype(), f32);
  EXPECT_EQ(vals(where(c, 1.0, 0.0)), (V{1, 0, 1}));
  EXPECT_EQ(where(c, 1, 0).dtype(), i64);
  EXPECT_EQ(where(c, i32v({1, 2, 3}), 0).dtype(), i32);
  EXPECT_EQ(where(c, i32v({1, 2, 3}), 0.5).dtype(), f32);
  EXPECT_EQ(vals(where(c, 7, f32v({1, 2, 3}).to(bf16))), (V{7, 2, 7}));
  EXPECT_EQ(where(boolv({true}), f32v({1, 2}), f32v({3}, {1, 1})).sizes(), (S{1, 2}));
  expectError([&] { (void)where(i32v({1}), 1.0, 0.0); }, {"where", "boolean"});
}

TEST(Ops, Conversions) {
  Tensor x = f32v({-2.7f, -0.5f, 0.0f, 2.7f});
  EXPECT_EQ(vals(x.to(i32)), (V{-2, 0, 0, 2}));
  EXPECT_EQ(vals(x.to(boolean)), (V{1, 1, 0, 1}));
  EXPECT_EQ(vals(i64v({300, -129, 127}).to(i8)), (V{44, 127, 127}));
  EXPECT_EQ(vals(i32v({0, 2}).to(boolean)), (V{0, 1}));
  EXPECT_EQ(vals(boolv({true, false}).to(f32)), (V{1, 0}));
  EXPECT_EQ(vals(i32v({16777217}).to(f32)), (V{16777216}));
  EXPECT_EQ(vals(f32v({0.1f}).to(bf16)), (V{static_cast<double>(static_cast<float>(bfloat16(0.1f)))}));
  EXPECT_EQ(vals(f32v({65536.0f}).to(f16))[0], std::numeric_limits<double>::infinity());
  // to() of the same dtype is the same tensor (an alias, as in PyTorch).
  Tensor y = x.to(f32);
  EXPECT_EQ(y.data_ptr(), x.data_ptr());
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST(Reductions, SumMeanProd) {
  Tensor x = f32v({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(vals(sum(x, 0)), (V{5, 7, 9}));
  EXPECT_EQ(vals(sum(x, 1)), (V{6, 15}));
  EXPECT_EQ(vals(sum(x, -1)), (V{6, 15}));
  EXPECT_EQ(sum(x, -1).sizes(), (S{2}));
  EXPECT_EQ(sum(x, 1, true).sizes(), (S{2, 1}));
  EXPECT_EQ(sum(x, -2, true).sizes(), (S{1, 3}));
  EXPECT_EQ(vals(mean(x, 1)), (V{2, 5}));
  EXPECT_EQ(vals(prod(x, 0)), (V{4, 10, 18}));
  EXPECT_EQ(sum(x.to(bf16), 0).dtype(), bf16);
  // Integers and booleans sum to i64 (PyTorch).
  EXPECT_EQ(sum(i32v({1, 2}), 0).dtype(), i64);
  EXPECT_EQ(sum(boolv({true, true, false}), 0).dtype(), i64);
  EXPECT_EQ(vals(sum(boolv({true, true, false}), 0)), (V{2}));
  EXPECT_EQ(prod(i32v({3, 4}), 0).dtype(), i64);
  EXPECT_EQ(vals(sum(i32v({2147483647, 1}), 0)), (V{2147483648.0}));
  expectError([&] { (void)mean(i32v({1, 2}), 0); }, {"mean", "i32", "floating"});
  expectError([&] { (void)sum(x, 2); }, {"sum", "dimension 2", "rank 2"});
  expectError([&] { (void)sum(x, -3); }, {"sum", "dimension -3"});
  // Empty dimensions: sum 0, mean NaN.
  Tensor e = zeros({2, 0}, f32);
  EXPECT_EQ(vals(sum(e, 1)), (V{0, 0}));
  EXPECT_TRUE(std::isnan(vals(mean(e, 1))[0]));
  // 0-d tensors reduce over dim 0 / -1 to themselves.
  EXPECT_EQ(sum(full({}, 3.0, f32), 0).dim(), 0);
  EXPECT_EQ(vals(sum(full({}, 3.0, f32), -1)), (V{3}));
  // A middle dimension of a 3-D tensor.
  Tensor y = arange(24).reshape({2, 3, 4});
  EXPECT_EQ(vals(sum(y, 1)), (V{12, 15, 18, 21, 48, 51, 54, 57}));
}

TEST(Reductions, MaxMinArg) {
  float nan = std::nanf("");
  Tensor x = f32v({1, 3, 3, -1, 7, 7}, {2, 3});
  EXPECT_EQ(vals(amax(x, 1)), (V{3, 7}));
  EXPECT_EQ(vals(amin(x, 1)), (V{1, -1}));
  EXPECT_EQ(vals(amax(x, 0, true)), (V{1, 7, 7}));
  EXPECT_EQ(argmax(x, 1).dtype(), i64);
  EXPECT_EQ(vals(argmax(x, 1)), (V{1, 1})); // first occurrence
  EXPECT_EQ(vals(argmin(x, -1)), (V{0, 0}));
  EXPECT_EQ(vals(argmax(x, 0)), (V{0, 1, 1}));
  EXPECT_EQ(argmax(x, 1, true).sizes(), (S{2, 1}));
  Tensor n = f32v({1, nan, 5, nan});
  EXPECT_TRUE(std::isnan(vals(amax(n, 0))[0]));
  EXPECT_TRUE(std::isnan(vals(amin(n, 0))[0]));
  EXPECT_EQ(vals(argmax(n, 0)), (V{1}));
  EXPECT_EQ(vals(argmin(n, 0)), (V{1}));
  EXPECT_EQ(vals(amax(i32v({-5, 9, 2}), 0)), (V{9}));
  EXPECT_EQ(amax(i32v({-5, 9, 2}), 0).dtype(), i32);
  EXPECT_EQ(vals(argmin(i32v({4, -5, 9, -5}), 0)), (V{1}));
  expectError([&] { (void)amax(zeros({3, 0}, f32), 1); }, {"amax", "size 0"});
}

//===----------------------------------------------------------------------===//
// Matmul family
//===----------------------------------------------------------------------===//

namespace {
/// Plain-loop [M,K] @ [K,N] in double.
V naiveMM(const V &a, const V &b, int64_t M, int64_t K, int64_t N) {
  V c(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) c[i * N + j] += a[i * K + k] * b[k * N + j];
  return c;
}
} // namespace

TEST(Matmul, DotAndAddmm) {
  Tensor a = f32v({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = f32v({1, 0, 0, 1, 1, 1}, {3, 2});
  Tensor c = dot(a, b);
  EXPECT_EQ(c.sizes(), (S{2, 2}));
  EXPECT_EQ(c.dtype(), f32);
  EXPECT_EQ(vals(c), (V{4, 5, 10, 11}));
  EXPECT_EQ(dot(a.to(bf16), b.to(bf16)).dtype(), f32);
  EXPECT_EQ(dot(a.to(f16), b.to(bf16)).dtype(), f32);
  EXPECT_EQ(dot(a.to(f64), b).dtype(), f64);
  EXPECT_EQ(dot(a.to(i32), b.to(i32)).dtype(), i32);
  EXPECT_EQ(vals(dot(a.to(i32), b.to(i32))), (V{4, 5, 10, 11}));
  Tensor acc = full({2, 2}, 0.5, f32);
  EXPECT_EQ(vals(addmm(acc, a, b)), (V{4.5, 5.5, 10.5, 11.5}));
  EXPECT_EQ(addmm(acc.to(bf16), a, b).dtype(), bf16);
  EXPECT_EQ(vals(addmm(f32v({100, 200}), a, b)), (V{104, 205, 110, 211})); // broadcast acc
  expectError([&] { (void)dot(a, a); }, {"dot", "[2,3]", "inner dimensions"});
  expectError([&] { (void)dot(f32v({1, 2}), b); }, {"dot", "2-D"});
}

TEST(Matmul, RoundsOnceFromDouble) {
  // 16-bit inputs: the f32 result of dot is the exactly accumulated sum.
  Tensor a = from_vector<float>({1.0f, 1.0f, 1.0f}, {1, 3}).to(bf16);
  Tensor b = from_vector<float>({16777216.0f, 1.0f, 1.0f}, {3, 1}).to(bf16);
  EXPECT_EQ(vals(dot(a, b)), (V{16777218.0}));
  // addmm rounds once to acc's dtype: 1 + 2^-9 + 2^-9 in bf16 is 1 + 2^-8 -> tie -> 1;
  // rounding every step would also give 1, so check an increment that adds up.
  Tensor acc = full({1, 1}, 1.0, bf16);
  Tensor x = full({1, 4}, 1.0, f32);
  Tensor y = full({4, 1}, 0.001953125, f32); // 4 * 2^-9 = 2^-7: exactly one bf16 step
  EXPECT_EQ(vals(addmm(acc, x, y)), (V{1.0078125}));
}

TEST(Matmul, MatmulShapes) {
  Tensor v = f32v({1, 2, 3});
  Tensor m = f32v({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor r0 = matmul(v, v);
  EXPECT_EQ(r0.dim(), 0);
  EXPECT_EQ(vals(r0), (V{14}));
  EXPECT_EQ(matmul(v, m).sizes(), (S{2}));
  EXPECT_EQ(vals(matmul(v, m)), (V{22, 28}));
  EXPECT_EQ(matmul(m.transpose(0, 1), v).sizes(), (S{2}));
  EXPECT_EQ(vals(matmul(m.transpose(0, 1), v)), (V{22, 28}));
  Tensor a = randn({2, 1, 4, 3}, f32, 1), b = randn({5, 3, 2}, f32, 2);
  Tensor c = matmul(a, b);
  EXPECT_EQ(c.sizes(), (S{2, 5, 4, 2}));
  V av = vals(a), bv = vals(b), cv = vals(c);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j) {
      V ai(av.begin() + i * 12, av.begin() + i * 12 + 12), bj(bv.begin() + j * 6, bv.begin() + j * 6 + 6);
      V ref = naiveMM(ai, bj, 4, 3, 2);
      for (int k = 0; k < 8; ++k) EXPECT_FLOAT_EQ(cv[(i * 5 + j) * 8 + k], f(ref[k]));
    }
  EXPECT_EQ(matmul(a.to(bf16), b.to(bf16)).dtype(), bf16);
  expectError([&] { (void)matmul(v, f32v({1, 2})); }, {"matmul", "inner dimensions"});
  expectError([&] { (void)matmul(full({}, 1.0, f32), v); }, {"matmul", "at least one dimension"});
}

TEST(Matmul, BmmBaddbmm) {
  Tensor a = randn({3, 4, 5}, f32, 3), b = randn({3, 5, 2}, f32, 4);
  Tensor c = bmm(a, b);
  EXPECT_EQ(c.sizes(), (S{3, 4, 2}));
  V av = vals(a), bv = vals(b), cv = vals(c);
  for (int i = 0; i < 3; ++i) {
    V ref = naiveMM(V(av.begin() + i * 20, av.begin() + i * 20 + 20),
                    V(bv.begin() + i * 10, bv.begin() + i * 10 + 10), 4, 5, 2);
    for (int k = 0; k < 8; ++k) EXPECT_FLOAT_EQ(cv[i * 8 + k], f(ref[k]));
  }
  EXPECT_EQ(bmm(a.to(bf16), b.to(bf16)).dtype(), bf16);
  Tensor acc = ones({3, 4, 2}, f32);
  Tensor d = baddbmm(acc, a, b);
  V dv = vals(d);
  for (int k = 0; k < 24; ++k) EXPECT_FLOAT_EQ(dv[k], f(cv[k] + 1.0));
  EXPECT_EQ(baddbmm(acc.to(f16), a, b).dtype(), f16);
  expectError([&] { (void)bmm(a, randn({2, 5, 2}, f32, 5)); }, {"bmm", "batch"});
  expectError([&] { (void)bmm(a, b[0]); }, {"bmm", "3-D"});
}

TEST(Matmul, BmmOutDtypeKeepsTheSumsUnrounded) {
  Tensor a = randn({2, 8, 32}, bf16, 5), b = randn({2, 32, 4}, bf16, 6);
  Tensor wide = bmm(a, b, f32), narrow = bmm(a, b);
  EXPECT_EQ(wide.dtype(), f32);
  EXPECT_EQ(narrow.dtype(), bf16);
  // bf16 values are exact in f32: the f32 product of the widened inputs is
  // the same sum, rounded once to f32.
  EXPECT_EQ(vals(wide), vals(bmm(a.to(f32), b.to(f32))));
  EXPECT_EQ(vals(wide.to(bf16)), vals(narrow));
  bool someRounded = false;
  V w = vals(wide), nv = vals(narrow);
  for (size_t i = 0; i < w.size(); ++i) someRounded |= w[i] != nv[i];
  EXPECT_TRUE(someRounded);
  EXPECT_EQ(bmm(a.to(f32), b.to(f32), f32).dtype(), f32);
  expectError([&] { (void)bmm(a.to(f32), b.to(f32), bf16); },
              {"bmm", "out_dtype bf16", "f32 inputs"});
  expectError([&] { (void)bmm(a, b, f16); }, {"bmm", "out_dtype f16"});
}

TEST(Matmul, LargeTiledMatchesPlainLoops) {
  int64_t M = 256, K = 256, N = 256;
  Tensor x = randn({M, K}, f32, 11), y = randn({K, N}, f32, 12);
  Tensor out = empty({M, N}, f32);
  for (auto [tm, tn] : tile(M, N)) {
    auto acc = zeros({tm, tn}, f32);
    for (auto tk : tile(K)) acc = addmm(acc, x[tm, tk], y[tk, tn]);
    out[tm, tn] = acc;
  }
  V ref = naiveMM(vals(x), vals(y), M, K, N), got = vals(out);
  double maxErr = 0;
  for (size_t i = 0; i < ref.size(); ++i) maxErr = std::max(maxErr, std::fabs(got[i] - ref[i]));
  EXPECT_LT(maxErr, 1e-4);
}

//===----------------------------------------------------------------------===//
// Shapes and views
//===----------------------------------------------------------------------===//

TEST(Shapes, Views) {
  Tensor x = arange(6).reshape({2, 3});
  EXPECT_EQ(x.sizes(), (S{2, 3}));
  EXPECT_EQ(x.strides(), (S{3, 1}));
  EXPECT_EQ(x.reshape({-1}).sizes(), (S{6}));
  EXPECT_EQ(x.view({3, -1}).sizes(), (S{3, 2}));
  Tensor t = x.transpose(0, 1);
  EXPECT_EQ(t.sizes(), (S{3, 2}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(vals(t), (V{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(vals(t.contiguous()), (V{0, 3, 1, 4, 2, 5}));
  EXPECT_TRUE(t.contiguous().is_contiguous());
  expectError([&] { (void)t.reshape({6}); }, {"reshape", "not contiguous", ".contiguous()"});
  expectError([&] { (void)x.reshape({4, -1}); }, {"reshape", "[2,3]", "[4,-1]"});
  expectError([&] { (void)x.reshape({-1, -1}); }, {"reshape", "only one"});
  expectError([&] { (void)x.view({5}); }, {"reshape", "6 elements"});
  EXPECT_EQ(vals(permute(arange(24).reshape({2, 3, 4}), {2, 0, 1})[1]),
            (V{1, 5, 9, 13, 17, 21}));
  expectError([&] { (void)x.permute({0, 0}); }, {"permute", "repeated"});
  EXPECT_EQ(x.unsqueeze(0).sizes(), (S{1, 2, 3}));
  EXPECT_EQ(x.unsqueeze(-1).sizes(), (S{2, 3, 1}));
  EXPECT_EQ(unsqueeze(x, 1).sizes(), (S{2, 1, 3}));
  EXPECT_EQ(x.unsqueeze(-1).squeeze(-1).sizes(), (S{2, 3}));
  EXPECT_EQ(squeeze(x, 0).sizes(), (S{2, 3})); // not size 1: unchanged
  EXPECT_EQ(ones({1, 2, 1}).squeeze().sizes(), (S{2}));
  Tensor e = f32v({1, 2, 3}, {3, 1}).expand({2, 3, 4});
  EXPECT_EQ(e.sizes(), (S{2, 3, 4}));
  EXPECT_EQ(e.strides(), (S{0, 1, 0}));
  EXPECT_EQ(vals(sum(e, 2)), (V{4, 8, 12, 4, 8, 12}));
  EXPECT_EQ(f32v({1, 2, 3}, {3, 1}).expand({-1, 2}).sizes(), (S{3, 2}));
  expectError([&] { (void)x.expand({2, 4}); }, {"expand", "size 4", "existing size 3"});
  EXPECT_EQ(x.size(-1), 3);
  EXPECT_EQ(x.stride(0), 3);
  EXPECT_EQ(x.numel(), 6);
  expectError([&] { (void)x.size(2); }, {"size", "rank 2"});
}

//===----------------------------------------------------------------------===//
// Subscripts, loads and stores
//===----------------------------------------------------------------------===//

TEST(Subscript, Basic) {
  Tensor x = arange(24).reshape({2, 3, 4});
  EXPECT_EQ(x[1].sizes(), (S{3, 4}));                     // fewer indices: rest are all
  EXPECT_EQ(vals(x[1, 2]), (V{20, 21, 22, 23}));
  EXPECT_EQ(vals(x[-1, -1, -1]), (V{23}));
  EXPECT_EQ((x[0, 0, 0].dim()), 0);
  EXPECT_EQ((x[0, 0, 0].item<int64_t>()), 0);
  EXPECT_EQ((x[1, 2, 3].item<int64_t>()), 23);
  EXPECT_EQ(vals(x[all, 1, 2]), (V{6, 18}));
  EXPECT_EQ(x[newaxis].sizes(), (S{1, 2, 3, 4}));
  EXPECT_EQ((x[0, newaxis, all, 1].sizes()), (S{1, 3}));
  EXPECT_EQ(vals(x[0, newaxis, all, 1]), (V{1, 5, 9}));
  Tile t(1, 3, 2, 0, 2);
  EXPECT_EQ((x[0, t].sizes()), (S{2, 4}));
  EXPECT_EQ(vals(x[0, t, t]), (V{5, 6, 9, 10}));
  Tensor y = x[1, t];
  EXPECT_TRUE(y.is_contiguous()); // a load is a contiguous copy
  EXPECT_EQ(vals(x[]), vals(x));
  expectError([&] { (void)x[0, 0, 0, 0]; }, {"too many indices", "rank 3", "got 4"});
  expectError([&] { (void)x[2]; }, {"index 2 is out of range", "dimension 0 of size 2"});
  expectError([&] { (void)x[0, -4]; }, {"index -4 is out of range", "dimension 1 of size 3"});
  expectError([&] { (void)x[0, 0, Tile(2, 5, 4, 0, 1)]; },
              {"tile [2, 5) is out of range", "dimension 2 of size 4"});
}

TEST(Subscript, Gather) {
  Tensor x = arange(12).reshape({3, 4});
  Tensor ids = i64v({2, 0, 2});
  Tensor g = x[ids];
  EXPECT_EQ(g.sizes(), (S{3, 4}));
  EXPECT_EQ(vals(g), (V{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(vals(x[all, i32v({-1, 1})]), (V{3, 1, 7, 5, 11, 9}));
  Tensor ids2 = i64v({0, 1, 2, 3}, {2, 2});
  EXPECT_EQ((x[1, ids2].sizes()), (S{2, 2}));
  EXPECT_EQ(vals(x[1, ids2]), (V{4, 5, 6, 7}));
  EXPECT_EQ(x[i64v({0, 1, 2, 0}, {2, 2})].sizes(), (S{2, 2, 4}));
  // Two tensor indices broadcast together: pairs (r, c).
  Tensor r = i64v({0, 2}, {2, 1}), c = i64v({1, 3});
  EXPECT_EQ((x[r, c].sizes()), (S{2, 2}));
  EXPECT_EQ(vals(x[r, c]), (V{1, 3, 9, 11}));
  Tensor x3 = arange(24).reshape({2, 3, 4});
  expectError([&] { (void)x3[i64v({0}), all, i64v({0})]; }, {"adjacent"});
  expectError([&] { (void)x[i64v({3})]; }, {"index 3 is out of range", "dimension 0 of size 3"});
  expectError([&] { (void)x[i64v({0, 1}), i64v({0, 1, 2})]; }, {"not broadcastable"});
  expectError([&] { (void)x[boolv({true, false, true})]; }, {"boolean mask"});
  expectError([&] { (void)x[f32v({0})]; }, {"i32 or i64"});
}

TEST(Subscript, StoreVersusRebind) {
  Tensor x = zeros({2, 3}, f32);
  Tile t(0, 2, 2, 0, 1);
  // Reading a subscript into a variable and rebinding it never writes to x.
  auto row = x[t, all];
  row = row + 5;
  EXPECT_EQ(vals(row), (V{5, 5, 5, 5, 5, 5}));
  EXPECT_EQ(vals(x), (V{0, 0, 0, 0, 0, 0}));
  row += 1; // lvalue compound assignment also rebinds
  EXPECT_EQ(vals(x), (V{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(vals(row), (V{6, 6, 6, 6, 6, 6}));
  // Assigning to a subscript stores (cast to x's dtype, broadcast).
  x[1, all] = f32v({1, 2, 3});
  EXPECT_EQ(vals(x), (V{0, 0, 0, 1, 2, 3}));
  x[0] = 7.0f;
  EXPECT_EQ(vals(x), (V{7, 7, 7, 1, 2, 3}));
  x[all, 2] += 10;
  EXPECT_EQ(vals(x), (V{7, 7, 17, 1, 2, 13}));
  x[1, 0] *= 4;
  x[1, 1] -= full({}, 1.0, f32);
  x[0, 0] /= 2;
  EXPECT_EQ(vals(x), (V{3.5, 7, 17, 4, 1, 13}));
  // A copy forgets where it came from.
  Tensor copy = x[0];
  Tensor copy2 = copy;
  std::move(copy2) = f32v({9, 9, 9});
  EXPECT_EQ(vals(x[0]), (V{3.5, 7, 17}));
  // A store casts to the destination dtype.
  Tensor xi = zeros({3}, i32);
  xi[all] = f32v({1.9f, -1.9f, 2.5f});
  EXPECT_EQ(vals(xi), (V{1, -1, 2}));
  xi[0] = 3.7;
  EXPECT_EQ(vals(xi), (V{3, -1, 2}));
  expectError([&] { xi[0] += 1.5; }, {"operator+=", "f32", "i32"});
  expectError([&] { x[0] = f32v({1, 2}); }, {"cannot broadcast", "[2]", "[3]"});
  expectError([&] { xi += 1.5; }, {"operator+=", "cannot be cast"});
  expectError([&] { x[1, 1] -= f32v({1}); }, {"operator-=", "[1]", "[]"}); // as PyTorch
  Tensor acc = zeros({3}, f32);
  expectError([&] { acc += zeros({2, 3}, f32); }, {"operator+=", "[2,3]", "[3]"});
  // In-place on an f32 accumulator with a bf16 value keeps f32.
  acc += f32v({1, 2, 3}).to(bf16);
  EXPECT_EQ(acc.dtype(), f32);
  EXPECT_EQ(vals(acc), (V{1, 2, 3}));
}

TEST(Subscript, ChainedStoresWriteThrough) {
  Tensor x = zeros({2, 3}, f32);
  x[1][2] = 5.0;
  EXPECT_EQ(vals(x), (V{0, 0, 0, 0, 0, 5}));
  auto row = x[0];
  row[1] = 4.0; // like a PyTorch view: both row and x see it
  EXPECT_EQ(vals(row), (V{0, 4, 0}));
  EXPECT_EQ(vals(x), (V{0, 4, 0, 0, 0, 5}));
  Tensor local = zeros({2, 2}, f32);
  local[0, 1] = 3.0; // a plain tensor is its own target
  EXPECT_EQ(vals(local), (V{0, 3, 0, 0}));
  // Gather then store: x[ids] = v scatters.
  Tensor y = zeros({4}, f32);
  y[i64v({3, 1})] = f32v({7, 8});
  EXPECT_EQ(vals(y), (V{0, 8, 0, 7}));
  // Store a transposed view of x into x itself: no aliasing surprises.
  Tensor sq = arange(4).reshape({2, 2}).to(f32);
  sq[all, all] = sq.transpose(0, 1);
  EXPECT_EQ(vals(sq), (V{0, 2, 1, 3}));
}

TEST(Subscript, MultiDimLoopVariables) {
  Tensor x = arange(20).reshape({4, 5});
  Tensor out = zeros({4, 5}, i64);
  int n = 0;
  for (auto t : tile(4, 5, block(3))) {
    out[t] = x[t] * 2;
    ++n;
  }
  EXPECT_EQ(n, 1 * 2); // block(3) applies to the second dimension only
  EXPECT_EQ(vals(out), vals(x * 2));
  Tensor out2 = zeros({4, 5}, i64);
  for (auto g : grid(4, 5)) out2[g] = x[g] + 1;
  EXPECT_EQ(vals(out2), vals(x + 1));
  Tensor out3 = zeros({4, 5}, i64);
  for (auto t : tile(x.sizes())) store(out3, {t}, load(x, {t}) - 1);
  EXPECT_EQ(vals(out3), vals(x - 1));
}

TEST(Subscript, MaskedLoadStore) {
  Tensor x = f32v({1, 2, 3, 4, 5});
  Tile t(3, 8, 8, 0, 1); // extends past the end of x
  Tensor mask = t.index() < 5;
  Tensor l = load(x, {t}, mask);
  EXPECT_EQ(vals(l), (V{4, 5, 0, 0, 0}));
  expectError([&] { (void)load(x, {t}); }, {"load", "tile [3, 8) is out of range"});
  expectError([&] { (void)load(x, {t}, t.index() < 6); }, {"load", "lane 2", "not masked off"});
  Tensor y = zeros({5}, f32);
  store(y, {t}, f32v({10, 20, 30, 40, 50}), mask);
  EXPECT_EQ(vals(y), (V{0, 0, 0, 10, 20}));
  store(y, {Tile(0, 3, 3, 0, 1)}, 9.0, boolv({true, false, true}));
  EXPECT_EQ(vals(y), (V{9, 0, 9, 10, 20}));
  store(y, {1}, 5);
  EXPECT_EQ(vals(y), (V{9, 5, 9, 10, 20}));
  // Masked gathers may index out of bounds on masked-off lanes.
  Tensor ids = i64v({4, 99, 0});
  EXPECT_EQ(vals(load(x, {ids}, ids < 5)), (V{5, 0, 1}));
  expectError([&] { (void)load(x, {ids}); }, {"index 99 is out of range"});
  // 2-D mask broadcast over the indexed shape.
  Tensor m2 = arange(6).reshape({2, 3}).to(f32);
  EXPECT_EQ(vals(load(m2, {all, all}, boolv({true, false, true}))), (V{0, 0, 2, 3, 0, 5}));
  expectError([&] { (void)load(x, {t}, mask.to(i32)); }, {"mask must be boolean"});
}

TEST(Subscript, Atomics) {
  Tensor hist = zeros({4}, f32);
  Tensor ids = i64v({0, 1, 1, 3, 3, 3});
  atomic_add(hist, {ids}, ones({6}, f32));
  EXPECT_EQ(vals(hist), (V{1, 2, 0, 3}));
  atomic_add(hist, {ids}, 0.5);
  EXPECT_EQ(vals(hist), (V{1.5, 3, 0, 4.5}));
  Tensor mx = full({4}, -1.0, f32);
  atomic_max(mx, {ids}, f32v({5, 2, 7, 1, 9, 3}));
  EXPECT_EQ(vals(mx), (V{5, 7, -1, 9}));
  Tensor mn = full({4}, 100.0, i32);
  atomic_min(mn, {ids}, i32v({5, 2, 7, 1, 9, 3}));
  EXPECT_EQ(vals(mn), (V{5, 2, 100, 1}));
  Tensor masked = zeros({4}, i64);
  atomic_add(masked, {ids}, 1, ids != 1);
  EXPECT_EQ(vals(masked), (V{1, 0, 0, 3}));
  Tensor grid2 = zeros({2, 2}, f32);
  atomic_add(grid2, {i64v({1, 1}), all}, f32v({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(vals(grid2), (V{0, 0, 4, 6}));
  // bf16 accumulates in bf16, as a GPU atomic does: 256 + 1 + 1 stays 256.
  Tensor b = full({1}, 256.0, bf16);
  atomic_add(b, {i64v({0, 0})}, ones({2}, f32));
  EXPECT_EQ(vals(b), (V{256}));
}

//===----------------------------------------------------------------------===//
// Loops and tiles
//===----------------------------------------------------------------------===//

TEST(Loops, TileTruncatesLastTile) {
  std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>> seen;
  for (auto t : tile(10, block(4)))
    seen.emplace_back(t.begin(), t.end(), t.block_size(), t.id(), t.count());
  using T5 = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;
  EXPECT_EQ(seen, (std::vector<T5>{{0, 4, 4, 0, 3}, {4, 8, 4, 1, 3}, {8, 10, 4, 2, 3}}));
  std::vector<std::pair<int64_t, int64_t>> r;
  for (auto t : tile(range(3, 10), block(4))) r.emplace_back(t.begin(), t.end());
  EXPECT_EQ(r, (std::vector<std::pair<int64_t, int64_t>>{{3, 7}, {7, 10}}));
  Tile last = *++++tile(10, block(4)).begin();
  EXPECT_EQ(vals(last.index()), (V{8, 9}));
  EXPECT_EQ(last.index().dtype(), i64);
  EXPECT_EQ(zeros({last, block(4)}).sizes(), (S{2, 4}));
  int n = 0;
  for (auto t : tile(0)) n += static_cast<int>(t.count()) + 1;
  EXPECT_EQ(n, 0);
  EXPECT_EQ(tile(5, block(8)).size(), 1);
  expectError([&] { (void)tile(-1); }, {"tile", "negative extent -1"});
  expectError([&] { (void)tile(range(5, 3)); }, {"tile", "[5, 3)"});
  expectError([&] { (void)block(0); }, {"block", ">= 1"});
}

TEST(Loops, NDTilesAndGridsAreRowMajor) {
  std::vector<std::pair<int64_t, int64_t>> order;
  for (auto [tm, tn] : tile(3, block(2), 5, block(2))) order.emplace_back(tm.begin(), tn.begin());
  EXPECT_EQ(order, (std::vector<std::pair<int64_t, int64_t>>{
                       {0, 0}, {0, 2}, {0, 4}, {2, 0}, {2, 2}, {2, 4}}));
  std::vector<std::tuple<int64_t, int64_t, int64_t>> g;
  for (auto [i, j, k] : grid(2, range(1, 3), 2)) g.emplace_back(i, j, k);
  EXPECT_EQ(g.size(), 8u);
  EXPECT_EQ(g[0], std::make_tuple(int64_t(0), int64_t(1), int64_t(0)));
  EXPECT_EQ(g[1], std::make_tuple(int64_t(0), int64_t(1), int64_t(1)));
  EXPECT_EQ(g[2], std::make_tuple(int64_t(0), int64_t(2), int64_t(0)));
  EXPECT_EQ(g[7], std::make_tuple(int64_t(1), int64_t(2), int64_t(1)));
  std::vector<int64_t> g1;
  for (auto i : grid(range(2, 5))) g1.push_back(i);
  EXPECT_EQ(g1, (std::vector<int64_t>{2, 3, 4}));
  int count = 0;
  for (auto t : tile(std::vector<int64_t>{3, 4, 5})) {
    EXPECT_EQ(t.size(), 3u);
    ++count;
  }
  EXPECT_EQ(count, 1); // one tile per dimension at block size 64
  int tiles3 = 0;
  for (auto [a, b, c] : tile(3, block(1), 4, 5, block(2))) {
    EXPECT_EQ(a.block_size(), 1);
    EXPECT_EQ(b.block_size(), 64);
    EXPECT_EQ(c.block_size(), 2);
    ++tiles3;
  }
  EXPECT_EQ(tiles3, 3 * 1 * 3);
  EXPECT_EQ(specialize(int64_t(7)), 7);
}

namespace {
/// Softmax written as a kernel (DESIGN.md section 1.1).
Tensor softmaxKernel(Tensor x) {
  auto out = empty_like(x);
  for (auto tn : tile(x.size(0))) {
    auto row = x[tn, all].to(f32);
    auto e = exp(row - amax(row, 1, true));
    out[tn, all] = e / sum(e, 1, true);
  }
  return out;
}

/// Matmul with a shared tunable block size and a separate reduction loop.
Tensor matmulKernel(Tensor x, Tensor y) {
  auto m = x.size(0), k = x.size(1), n = y.size(1);
  auto out = empty({m, n}, x.dtype());
  auto bk = register_block_size(1, 128);
  for (auto [tm, tn] : tile(m, n)) {
    auto acc = zeros({tm, tn}, f32);
    for (auto tk : tile(k, bk)) acc = addmm(acc, x[tm, tk], y[tk, tn]);
    out[tm, tn] = acc;
  }
  return out;
}

/// Attention from DESIGN.md section 1.6 ([B*H, S, D]).
Tensor attentionKernel(Tensor q, Tensor k, Tensor v) {
  auto bh = q.size(0), s = q.size(1), d = specialize(q.size(2));
  auto out = empty_like(q);
  float scale = 1.0f / std::sqrt(float(d)) * 1.44269504f;
  for (auto [tb, tq] : tile(bh, s)) {
    auto m_i = full({tb, tq}, -INFINITY, f32);
    auto l_i = zeros({tb, tq}, f32);
    auto acc = zeros({tb, tq, d}, f32);
    auto qt = q[tb, tq, all];
    for (auto tk : tile(s)) {
      auto qk = bmm(qt, k[tb, tk, all].transpose(1, 2)) * scale;
      auto m_new = maximum(m_i, amax(qk, -1));
      auto p = exp2(qk - m_new.unsqueeze(-1));
      auto alpha = exp2(m_i - m_new);
      l_i = l_i * alpha + sum(p, -1);
      acc = baddbmm(acc * alpha.unsqueeze(-1), p.to(v.dtype()), v[tb, tk, all]);
      m_i = m_new;
    }
    out[tb, tq, all] = acc / l_i.unsqueeze(-1);
  }
  return out;
}

/// Row sums with a tile of a registered block size used to size a buffer.
Tensor rowSumKernel(Tensor x) {
  auto m = x.size(0), n = x.size(1);
  auto out = empty({m}, f32);
  auto bn = register_block_size(n);
  for (auto tm : tile(m)) {
    auto acc = zeros({tm}, f32);
    for (auto tn : tile(n, bn)) acc = acc + sum(x[tm, tn].to(f32), 1);
    out[tm] = acc;
  }
  return out;
}

V naiveSoftmax(const V &x, int64_t m, int64_t n) {
  V out(x.size());
  for (int64_t i = 0; i < m; ++i) {
    double mx = -INFINITY, s = 0;
    for (int64_t j = 0; j < n; ++j) mx = std::max(mx, x[i * n + j]);
    for (int64_t j = 0; j < n; ++j) s += std::exp(x[i * n + j] - mx);
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = std::exp(x[i * n + j] - mx) / s;
  }
  return out;
}

double maxAbsDiff(const V &a, const V &b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}
} // namespace

TEST(Loops, SoftmaxMatchesPlainLoops) {
  Tensor x = randn({4097, 1000}, f32, 7);
  Tensor y = softmaxKernel(x);
  EXPECT_EQ(y.dtype(), f32);
  EXPECT_LT(maxAbsDiff(vals(y), naiveSoftmax(vals(x), 4097, 1000)), 1e-7);
  Tensor xb = randn({37, 50}, bf16, 8);
  Tensor yb = softmaxKernel(xb);
  EXPECT_EQ(yb.dtype(), bf16);
  EXPECT_LT(maxAbsDiff(vals(yb), naiveSoftmax(vals(xb), 37, 50)), 4e-3);
}

TEST(ReferenceBlockSizes, ResultsDoNotDependOnBlockSizes) {
  Tensor x = randn({37, 29}, f32, 1), y = randn({29, 23}, f32, 2);
  Tensor q = randn({3, 13, 8}, f32, 3), k = randn({3, 13, 8}, f32, 4), v = randn({3, 13, 8}, f32, 5);
  V refMM = naiveMM(vals(x), vals(y), 37, 29, 23);
  V refSM = naiveSoftmax(vals(x), 37, 29);
  // Attention by plain loops.
  V qv = vals(q), kv = vals(k), vv = vals(v), refAttn(3 * 13 * 8, 0.0);
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 13; ++i) {
      V sc(13);
      double mx = -INFINITY, s = 0;
      for (int j = 0; j < 13; ++j) {
        double d = 0;
        for (int e = 0; e < 8; ++e) d += qv[(b * 13 + i) * 8 + e] * kv[(b * 13 + j) * 8 + e];
        sc[j] = d / std::sqrt(8.0);
        mx = std::max(mx, sc[j]);
      }
      for (int j = 0; j < 13; ++j) s += std::exp(sc[j] - mx);
      for (int j = 0; j < 13; ++j)
        for (int e = 0; e < 8; ++e)
          refAttn[(b * 13 + i) * 8 + e] += std::exp(sc[j] - mx) / s * vv[(b * 13 + j) * 8 + e];
    }
  V rowRef(37, 0.0);
  V xv = vals(x);
  for (int i = 0; i < 37; ++i)
    for (int j = 0; j < 29; ++j) rowRef[i] += xv[i * 29 + j];
  for (std::vector<int64_t> bs : {std::vector<int64_t>{1}, {7}, {64}, {4, 16, 2}}) {
    ReferenceBlockSizes scope(bs);
    EXPECT_LT(maxAbsDiff(vals(matmulKernel(x, y)), refMM), 1e-5) << bs[0];
    EXPECT_LT(maxAbsDiff(vals(softmaxKernel(x)), refSM), 1e-7) << bs[0];
    EXPECT_LT(maxAbsDiff(vals(attentionKernel(q, k, v)), refAttn), 1e-5) << bs[0];
    EXPECT_LT(maxAbsDiff(vals(rowSumKernel(x)), rowRef), 1e-5) << bs[0];
  }
}

TEST(ReferenceBlockSizes, AssignmentPerCallSite) {
  auto sizesOf = [] {
    std::vector<int64_t> r;
    for (auto t : tile(100)) {
      r.push_back(t.block_size());
      break;
    }
    for (auto [a, b] : tile(100, 100)) {
      r.push_back(a.block_size());
      r.push_back(b.block_size());
      break;
    }
    r.push_back(register_block_size(1000).value());
    r.push_back(register_block_size(8, 32).value());
    r.push_back(register_block_size(3).value());
    for (auto t : tile(100, block(5))) {
      r.push_back(t.block_size());
      break;
    }
    return r;
  };
  // Without a scope: 64, clamped by register_block_size's bounds.
  EXPECT_EQ(sizesOf(), (std::vector<int64_t>{64, 64, 64, 64, 32, 3, 5}));
  {
    ReferenceBlockSizes scope({16, 2, 128});
    // Call sites in order of first execution; the last size repeats.
    EXPECT_EQ(sizesOf(), (std::vector<int64_t>{16, 2, 128, 128, 32, 3, 5}));
    // The same call sites keep their sizes when they run again.
    EXPECT_EQ(sizesOf(), (std::vector<int64_t>{16, 2, 128, 128, 32, 3, 5}));
    {
      ReferenceBlockSizes inner({1});
      EXPECT_EQ(sizesOf(), (std::vector<int64_t>{1, 1, 1, 1, 8, 1, 5}));
    }
    EXPECT_EQ(sizesOf(), (std::vector<int64_t>{16, 2, 128, 128, 32, 3, 5}));
  }
  EXPECT_EQ(sizesOf(), (std::vector<int64_t>{64, 64, 64, 64, 32, 3, 5}));
  expectError([] { ReferenceBlockSizes bad({0}); }, {"ReferenceBlockSizes", ">= 1"});
  expectError([] { ReferenceBlockSizes bad({}); }, {"ReferenceBlockSizes"});
  expectError([] { (void)register_block_size(8, 4); }, {"register_block_size", "lo <= hi"});
}

//===----------------------------------------------------------------------===//
// Creation, data access
//===----------------------------------------------------------------------===//

TEST(Creation, Factories) {
  Tensor e = empty({2, 3}, f32);
  for (double v : vals(e)) EXPECT_TRUE(std::isnan(v));
  Tensor ei = empty({2}, i32);
  EXPECT_EQ(ei.data<int32_t>()[0], static_cast<int32_t>(0xA5A5A5A5u));
  EXPECT_EQ(vals(zeros({2}, bf16)), (V{0, 0}));
  EXPECT_EQ(vals(ones({2}, i8)), (V{1, 1}));
  EXPECT_EQ(vals(full({2}, -INFINITY, f16))[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(vals(full({2}, 2.5, i32)), (V{2, 2}));
  EXPECT_EQ(zeros({}).dim(), 0);
  EXPECT_EQ(zeros({}).numel(), 1);
  EXPECT_EQ(zeros({3}).dtype(), f32);
  EXPECT_EQ(zeros(std::vector<int64_t>{2, 5}, i64).sizes(), (S{2, 5}));
  Tensor x = f32v({1, 2}).to(bf16);
  EXPECT_EQ(empty_like(x).dtype(), bf16);
  EXPECT_EQ(vals(zeros_like(x)), (V{0, 0}));
  EXPECT_EQ(vals(ones_like(x, i32)), (V{1, 1}));
  EXPECT_EQ(vals(full_like(x, 3.0)), (V{3, 3}));
  EXPECT_EQ(vals(arange(3)), (V{0, 1, 2}));
  EXPECT_EQ(vals(arange(-2, 1)), (V{-2, -1, 0}));
  EXPECT_EQ(arange(4).dtype(), i64);
  expectError([] { (void)arange(3, 1); }, {"arange"});
  expectError([] { (void)zeros({2, -1}); }, {"zeros", "negative", "[2,-1]"});
  expectError([] { (void)from_vector<float>({1, 2, 3}, {2, 2}); }, {"from_vector", "3 values"});
  EXPECT_EQ(from_vector<double>({1}).dtype(), f64);
  EXPECT_EQ(from_vector<int8_t>({1}).dtype(), i8);
  EXPECT_EQ(from_vector<bfloat16>({bfloat16(1.5f)}).dtype(), bf16);
  EXPECT_EQ(from_vector<half>({half(1.5f)}).item<float>(), 1.5f);
  int64_t bs = 4;
  Tile t(0, 3, 4, 0, 1);
  EXPECT_EQ(zeros({t, bs, block(2)}).sizes(), (S{3, 4, 2}));
}

TEST(Creation, RandomIsDeterministic) {
  Tensor a = randn({1000}, f32, 42), b = randn({1000}, f32, 42), c = randn({1000}, f32, 43);
  EXPECT_EQ(vals(a), vals(b));
  EXPECT_NE(vals(a), vals(c));
  double m = vals(mean(a, 0))[0];
  EXPECT_LT(std::fabs(m), 0.1);
  double var = vals(mean(a * a, 0))[0];
  EXPECT_GT(var, 0.85);
  EXPECT_LT(var, 1.15);
  Tensor u = rand({10000}, bf16, 1);
  EXPECT_GE(vals(amin(u, 0))[0], 0.0);
  EXPECT_LT(vals(amax(u, 0))[0], 1.0);
  Tensor r = randint(-3, 4, {1000}, i32, 5);
  EXPECT_EQ(r.dtype(), i32);
  EXPECT_EQ(vals(amin(r, 0))[0], -3);
  EXPECT_EQ(vals(amax(r, 0))[0], 3);
  expectError([] { (void)randn({2}, i32, 0); }, {"randn", "i32"});
  expectError([] { (void)randint(2, 2, {2}, i32, 0); }, {"randint"});
}

TEST(Creation, DataAccess) {
  Tensor x = f32v({1.5f, 2.5f});
  EXPECT_EQ(x.data<float>()[1], 2.5f);
  expectError([&] { (void)x.data<double>(); }, {"data<T>", "f32"});
  EXPECT_EQ(x[1].item<double>(), 2.5);
  EXPECT_EQ(x[1].item<int>(), 2);
  expectError([&] { (void)x.item<float>(); }, {"item", "one element"});
  EXPECT_EQ(boolv({true}).data<bool>()[0], true);
  EXPECT_EQ(from_vector<int32_t>({4}).item<bool>(), true);
  EXPECT_TRUE(x.defined());
  EXPECT_FALSE(Tensor().defined());
  expectError([] { (void)exp(Tensor()); }, {"exp", "undefined"});
  EXPECT_EQ(to_string(i32v({1, 2, 3, 4}, {2, 2})), "tensor([[1, 2], [3, 4]], [2,2] i32)");
  EXPECT_EQ(to_string(full({}, 0.5, f32)), "tensor(0.5, [] f32)");
  EXPECT_EQ(to_string(zeros({2, 0}, f32)), "tensor([[], []], [2,0] f32)");
  EXPECT_EQ(to_string(boolv({true, false})), "tensor([true, false], [2] bool)");
  EXPECT_EQ(to_string(arange(8).reshape({2, 2, 2})),
            "tensor([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [2,2,2] i64)");
}

//===----------------------------------------------------------------------===//
// Device tensors
//===----------------------------------------------------------------------===//

TEST(Device, GpuTensorsAreRejectedWithAHint) {
  std::vector<uint16_t> host(64, 0);
  bool deleted = false;
  {
    Tensor g = Tensor::from_blob(host.data(), {8, 8}, {}, bf16, Device::cuda(0),
                                 [&](void *) { deleted = true; });
    EXPECT_EQ(g.device(), Device::cuda(0));
    EXPECT_EQ(g.strides(), (S{8, 1}));
    EXPECT_EQ(g.data_ptr(), host.data());
    EXPECT_EQ(g.size(1), 8); // shape queries work
    const char *hint = "reference mode runs on the CPU, but tensor [8,8] bf16 is on cuda:0; launch "
                       "the kernel with kite::launch(kernel, args...) to run it on the GPU";
    expectError([&] { (void)g[0]; }, {"subscript", hint});
    expectError([&] { (void)(g + 1); }, {"operator+", hint});
    expectError([&] { (void)softmaxKernel(g); }, {hint});
    expectError([&] { (void)g.to(f32); }, {hint});
    Tensor cpu = zeros({8, 8}, bf16);
    expectError([&] { cpu[0] = g[0]; }, {hint});
    expectError([&] { store(cpu, {0}, g[0, all]); }, {hint});
    EXPECT_FALSE(deleted);
  }
  EXPECT_TRUE(deleted);
  // CPU blobs are ordinary tensors, including strided ones.
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  Tensor v = Tensor::from_blob(data.data(), {3, 2}, {1, 3}, f32);
  EXPECT_EQ(vals(v), (V{1, 4, 2, 5, 3, 6}));
  expectError([&] { (void)Tensor::from_blob(data.data(), {2}, {-1}, f32); }, {"from_blob", "stride"});
}
