//===- launch_expr.hpp - integers a kite launch computes --------*- C++ -*-===//
//
// This file declares LaunchExpr: how a plan's launch computes an integer
// from its arguments (the grid of a plan whose sizes are taken at launch, an
// output's size). The compiler writes them, the runtime evaluates them
// (kite::evaluate in kite/runtime.hpp); no dependencies, so both can
// include it.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LAUNCH_EXPR_HPP
#define KITE_LAUNCH_EXPR_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace kite {

/// An integer a launch computes from its arguments: the grid of a plan with
/// dynamic sizes, an output's dynamic size. A postfix program over argument
/// sizes, integer scalars and constants.
struct LaunchExpr {
  enum class Op : uint8_t {
    constant,  // push `value`
    argSize,   // push size `dim` of argument `index` (a tensor)
    argScalar, // push argument `index` (an integer scalar)
    add, sub, mul,
    ceildiv,   // a / b rounded up (b > 0)
    floordiv,  // a / b rounded down (b > 0)
    min, max,
  };
  struct Term {
    Op op = Op::constant;
    uint32_t index = 0, dim = 0;
    int64_t value = 0;
    friend bool operator==(const Term &, const Term &) = default;
  };
  std::vector<Term> terms;

  static LaunchExpr constant(int64_t v) { return {{Term{Op::constant, 0, 0, v}}}; }
  /// Infix text, for messages: "ceildiv(x.size(0), 64)" (the arguments'
  /// names from `names` where given, else #index).
  std::string str(const std::vector<std::string> &names = {}) const;
  friend bool operator==(const LaunchExpr &, const LaunchExpr &) = default;
};

/// A check a launch makes before it runs a plan: `lhs <= rhs`, else a
/// kite::Error with `message` (where in the kernel, and what), the
/// expressions and their values. A dynamic-shapes plan checks so what a
/// static plan's compile checks: a loop over x's rows that indexes y's rows
/// needs y to have as many.
struct LaunchCheck {
  LaunchExpr lhs, rhs;
  std::string message;
  friend bool operator==(const LaunchCheck &, const LaunchCheck &) = default;
};

} // namespace kite

#endif // KITE_LAUNCH_EXPR_HPP
