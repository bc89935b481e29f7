//===- Diagnostics.cpp - the frontend's user-error diagnostics ------------===//
//
// This file implements DiagReporter: it registers one custom diagnostic ID
// per entry of Diagnostics.def with the parse's DiagnosticsEngine.
//
//===----------------------------------------------------------------------===//

#include "frontend/Diagnostics.h"

using namespace kite::frontend;

DiagReporter::DiagReporter(clang::DiagnosticsEngine &engine) : engine_(engine) {
#define KITE_DIAG(Name, Level, Format)                                         \
  ids_[static_cast<unsigned>(Diag::Name)] =                                    \
      engine_.getCustomDiagID(clang::DiagnosticsEngine::Level, Format);
#include "frontend/Diagnostics.def"
#undef KITE_DIAG
}

clang::DiagnosticBuilder DiagReporter::report(clang::SourceLocation loc,
                                              Diag id) {
  return engine_.Report(loc, ids_[static_cast<unsigned>(id)]);
}

clang::DiagnosticBuilder DiagReporter::report(clang::SourceRange range,
                                              Diag id) {
  clang::DiagnosticBuilder builder = report(range.getBegin(), id);
  builder << range;
  return builder;
}
