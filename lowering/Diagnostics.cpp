//===- Diagnostics.cpp - compiler diagnostics in the user's terms ---------===//
//
// This file implements the formatting of lowering diagnostics.
//
//===----------------------------------------------------------------------===//

#include "lowering/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string kite::formatLocation(Location loc) {
  if (auto f = dyn_cast<FileLineColLoc>(loc))
    return (f.getFilename().str() + ":" + std::to_string(f.getLine()) + ":" +
            std::to_string(f.getColumn()));
  if (auto c = dyn_cast<CallSiteLoc>(loc))
    return formatLocation(c.getCallee());
  if (auto n = dyn_cast<NameLoc>(loc))
    return formatLocation(n.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations()) {
      std::string s = formatLocation(l);
      if (s != "<unknown>")
        return s;
    }
  return "<unknown>";
}

kite::UserDiagnostics::UserDiagnostics(MLIRContext &ctx, std::string &out)
    : handler(&ctx, [&out](Diagnostic &d) {
        llvm::raw_string_ostream os(out);
        auto kind = [](DiagnosticSeverity s) {
          switch (s) {
          case DiagnosticSeverity::Error: return "error: ";
          case DiagnosticSeverity::Warning: return "warning: ";
          default: return "note: ";
          }
        };
        os << formatLocation(d.getLocation()) << ": " << kind(d.getSeverity()) << d
           << "\n";
        for (Diagnostic &note : d.getNotes())
          os << formatLocation(note.getLocation()) << ": note: " << note << "\n";
        return success();
      }) {
  ctx.printOpOnDiagnostic(false);
}
