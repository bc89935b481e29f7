//===- difftest.h - The generated kernels' table ----------------*- C++ -*-===//
//
// This file declares what test/difftest/gen_kernels.py's tables fill in:
// for each generated kernel, its problem dimensions (with the sizes they may
// take), its parameters (dtype, shape in those dimensions, value range, or
// the dimension an index tensor indexes), its tolerance, and a call of the
// kernel in reference mode. difftest.cpp draws sizes and inputs from it,
// runs the reference, and compares the GPU with it.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_TEST_DIFFTEST_DIFFTEST_H
#define KITE_TEST_DIFFTEST_DIFFTEST_H

#include <kite/kite.hpp>

#include <cstdint>
#include <functional>
#include <tuple>
#include <vector>

namespace kite_difftest {

/// A problem dimension: sizes in [lo, hi] that are multiples of `mult`.
struct DimRange {
  const char *name;
  int64_t lo, hi, mult;
};

struct Param {
  enum Kind {
    tensor, // values uniform in [lo, hi] (integers: [lo, hi]; bool: 0 or 1)
    index,  // an integer tensor of indices into dimension indexDim
    scalar, // a scalar parameter, uniform in [lo, hi] (integers: [lo, hi))
    size,   // an int64_t parameter holding the size of dimension indexDim
    below,  // an int64_t parameter uniform in [0, the size of dimension indexDim]
  };
  Kind kind;
  const char *name;
  const char *dtype; // dtype_name() spelling: "f32", "bf16", "i64", "bool", ...
  std::vector<int> dims;
  double lo, hi;
  int indexDim;
};

/// One argument of a reference-mode call.
struct Value {
  kite::Tensor tensor;
  double number = 0;
  template <class T> T as() const {
    if constexpr (std::is_same_v<T, bool>)
      return number != 0;
    else
      return static_cast<T>(number);
  }
};

using Reference = std::function<std::vector<kite::Tensor>(const std::vector<Value> &)>;

struct KernelInfo {
  const char *file; // the generated file's stem ("gen3"), which names its captured IR
  const char *name;
  const char *family;
  std::vector<DimRange> dims;
  std::vector<Param> params;
  double rtol, atol;  // for floating-point outputs; others compare exactly
  int64_t maxElems;   // the most elements any tensor may have
  Reference reference;
};

inline std::vector<kite::Tensor> results(kite::Tensor t) { return {std::move(t)}; }
template <class... Ts> std::vector<kite::Tensor> results(std::tuple<Ts...> t) {
  return std::apply([](auto &...x) { return std::vector<kite::Tensor>{x...}; }, t);
}

/// Every generated kernel, in generation order (gen_all.cpp).
std::vector<KernelInfo> allKernels();

} // namespace kite_difftest

#endif // KITE_TEST_DIFFTEST_DIFFTEST_H
