//===- float8_test.cpp - reference mode's 8-bit floats against APFloat ----===//
//
// kite.hpp converts floats to e4m3 and e5m2 with its own code (reference
// mode needs only the standard library); LLVM's APFloat has both formats
// (Float8E4M3FN, Float8E5M2) and is the independent oracle here: for floats
// spread over every exponent, both must give the same code.
//
//===----------------------------------------------------------------------===//

#include <kite/kite.hpp>

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

using namespace kite;

namespace {

/// APFloat's code for f in `sem`, rounded to nearest even. A value past the
/// largest finite one is infinity in e5m2 and NaN in e4m3fn (which has no
/// infinity), as PyTorch and kite convert without saturating.
uint8_t apfloatCode(float f, const llvm::fltSemantics &sem) {
  llvm::APFloat v(f);
  bool lost = false;
  v.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint8_t>(v.bitcastToAPInt().getZExtValue());
}

template <class F> void compareAll(const llvm::fltSemantics &sem, const char *name) {
  int mismatches = 0;
  // Every 251st float bit pattern: all exponents, many mantissas, both signs.
  for (uint64_t u = 0; u <= 0xffffffffull; u += 251) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(u));
    if (std::isnan(f)) continue; // NaN payloads differ; NaN in, NaN out is checked below
    uint8_t want = apfloatCode(f, sem), got = F(f).bits;
    if (want != got && ++mismatches <= 5)
      ADD_FAILURE() << name << "(" << f << "): kite 0x" << std::hex << int(got) << ", APFloat 0x"
                    << int(want);
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_TRUE(std::isnan(static_cast<float>(F(std::nanf("")))));
  // Decoding: every code that is not NaN gives APFloat's value.
  for (int c = 0; c < 256; ++c) {
    llvm::APFloat v(sem, llvm::APInt(8, c));
    float want = v.convertToFloat(), got = static_cast<float>(F::from_bits(uint8_t(c)));
    if (v.isNaN())
      EXPECT_TRUE(std::isnan(got)) << name << " code " << c;
    else
      EXPECT_EQ(got, want) << name << " code " << c;
  }
}

} // namespace

TEST(Float8, E4M3MatchesAPFloat) {
  compareAll<float8_e4m3>(llvm::APFloat::Float8E4M3FN(), "e4m3");
}

TEST(Float8, E5M2MatchesAPFloat) {
  compareAll<float8_e5m2>(llvm::APFloat::Float8E5M2(), "e5m2");
}
