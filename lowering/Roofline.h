//===- Roofline.h - bytes and FLOPs of a lowered kernel ---------*- C++ -*-===//
//
// The two numbers a roofline needs, computed from a specialized, configured
// kernel's IR for its shapes: the least memory traffic (every tensor
// argument read once, every output written once) and the floating-point
// operations (each elementwise op or reduction over a float tile, one per
// element; each matrix product, 2*M*N*K), times the trip counts of the
// loops around them.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_ROOFLINE_H
#define KITE_LOWERING_ROOFLINE_H

#include "ir/KiteDialect.h"

#include <string>

namespace kite {

struct WorkEstimate {
  double bytes = 0;       // tensor arguments read once + outputs written once
  double flops = 0;       // all floating-point operations
  double matmulFlops = 0; // the part in matrix products (tensor-core work)
  double matmul8Flops = 0; // the part of that with 8-bit float operands
  /// Why the count may be off ("" if exact up to padding): a loop whose
  /// bounds are not constants counts once.
  std::string caveat;
};

/// Needs a kernel after kite-specialize and kite-apply-config (static
/// shapes, constant block sizes).
WorkEstimate estimateWork(mlir::func::FuncOp kernel);

} // namespace kite

#endif // KITE_LOWERING_ROOFLINE_H
