//===- Diagnostics.h - compiler diagnostics in the user's terms -*- C++ -*-===//
//
// This file declares how lowering's MLIR diagnostics reach users: as
// `file:line:col: error: message` at the kernel's source line, like the
// frontend's (and every compiler's) errors, never as `loc(...)` syntax.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_DIAGNOSTICS_H
#define KITE_LOWERING_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <string>

namespace kite {

/// `file:line:col` of the innermost user location in `loc` (the call site's
/// callee for inlined code), or "<unknown>".
std::string formatLocation(mlir::Location loc);

/// While alive, formats every diagnostic of `ctx` as
/// `file:line:col: error: message` (notes likewise) and appends it to `out`.
class UserDiagnostics {
public:
  UserDiagnostics(mlir::MLIRContext &ctx, std::string &out);

private:
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace kite

#endif // KITE_LOWERING_DIAGNOSTICS_H
