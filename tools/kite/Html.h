//===- Html.h - `kite inspect --html` ---------------------------*- C++ -*-===//
//
// This file declares the renderer of an InspectReport as one self-contained
// HTML page (Html.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_TOOLS_KITE_HTML_H
#define KITE_TOOLS_KITE_HTML_H

#include "InspectReport.h"

#include <string>

namespace kite::cli {

/// The whole report as one HTML page: inline CSS and script, nothing fetched.
/// Every string from the report is escaped.
std::string renderInspectHtml(const InspectReport &report);

} // namespace kite::cli

#endif // KITE_TOOLS_KITE_HTML_H
