//===- Diagnostics.h - the frontend's user-error diagnostics ----*- C++ -*-===//
//
// This file declares the frontend's diagnostics: custom Clang diagnostic IDs
// (listed in Diagnostics.def) reported through the DiagnosticsEngine of the
// parse, so that every user error prints as `file:line:col: error: ...`
// with the source line, a caret and the offending range highlighted.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_FRONTEND_DIAGNOSTICS_H
#define KITE_FRONTEND_DIAGNOSTICS_H

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceLocation.h"

namespace kite::frontend {

enum class Diag : unsigned {
#define KITE_DIAG(Name, Level, Format) Name,
#include "frontend/Diagnostics.def"
#undef KITE_DIAG
  NumDiags
};

/// Reports frontend diagnostics through a Clang DiagnosticsEngine.
class DiagReporter {
public:
  explicit DiagReporter(clang::DiagnosticsEngine &engine);

  /// Starts a diagnostic at `loc`; stream arguments (%0, ...) and extra
  /// ranges into the result.
  clang::DiagnosticBuilder report(clang::SourceLocation loc, Diag id);
  /// Starts a diagnostic at the beginning of `range` and highlights it.
  clang::DiagnosticBuilder report(clang::SourceRange range, Diag id);

  clang::DiagnosticsEngine &engine() { return engine_; }

private:
  clang::DiagnosticsEngine &engine_;
  unsigned ids_[static_cast<unsigned>(Diag::NumDiags)];
};

} // namespace kite::frontend

#endif // KITE_FRONTEND_DIAGNOSTICS_H
