//===- Html.cpp - `kite inspect --html` -----------------------------------===//
//
// This file renders an InspectReport as one self-contained HTML page: the
// summary, the source with line numbers, each IR stage, the CUDA and the PTX
// side by side, the resources, the config and its space, and the roofline
// as an inline SVG chart. The page fetches nothing: its CSS and script are
// inline and it uses the system's fonts.
//
// The mapping from generated code back to the source is computed here, not
// in the page: each CUDA and PTX line carries `data-src="N"` (the source
// line it came from), read from the CUDA's `#line N "FILE"` directives and
// the PTX's `.file`/`.loc` directives. The script only wires clicks to those
// attributes, so no report text is ever placed inside the <script>.
//
//===----------------------------------------------------------------------===//

#include "Html.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

using kite::cli::InspectReport;
using json = nlohmann::json;

namespace {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

/// printf into a std::string, however long.
template <typename... Args>
std::string format(const char *spec, Args... args) {
  int size = std::snprintf(nullptr, 0, spec, args...);
  std::string out(size_t(std::max(size, 0)) + 1, '\0');
  std::snprintf(out.data(), out.size(), spec, args...);
  out.pop_back(); // the terminating NUL
  return out;
}

/// 4.10e6 with unit "B" reads "4.1 MB": SI prefixes, three significant digits.
std::string withPrefix(double value, const char *unit) {
  static const char *prefixes[] = {"", "k", "M", "G", "T", "P"};
  int index = 0;
  while (std::fabs(value) >= 1000 && index < 5) {
    value /= 1000;
    ++index;
  }
  return format("%.3g %s%s", value, prefixes[index], unit);
}

/// Lines without their '\n' (or "\r\n"); a final newline ends the last line
/// rather than starting an empty one.
std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string_view trim(std::string_view text) {
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos)
    return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::string_view baseName(std::string_view path) {
  size_t slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// Whether `line` (trimmed) is the directive `name` followed by blanks: so
/// that ".loc" does not match ".local".
bool isDirective(std::string_view line, std::string_view name) {
  return line.starts_with(name) && line.size() > name.size() &&
         (line[name.size()] == ' ' || line[name.size()] == '\t');
}

/// The leading integer of `text` after blanks, and the rest; -1 if none.
int leadingInt(std::string_view &text) {
  text = trim(text);
  int value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc())
    return -1;
  text.remove_prefix(end - text.data());
  return value;
}

/// The text between the first two double quotes, or nothing.
std::optional<std::string_view> quoted(std::string_view text) {
  size_t open = text.find('"');
  size_t close = open == std::string_view::npos ? open : text.find('"', open + 1);
  if (close == std::string_view::npos)
    return std::nullopt;
  return text.substr(open + 1, close - open - 1);
}

/// For each CUDA line, the source line it came from (0: none). The lines
/// after `#line N "FILE"` came from line N until the next directive; when
/// FILE is another file (a header), they map to nothing. A directive
/// without FILE keeps the previous directive's file, as in C.
std::vector<int> mapCuda(const std::vector<std::string_view> &lines,
                         std::string_view sourceFile) {
  std::vector<int> sourceOf(lines.size(), 0);
  int current = 0;
  bool inSource = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = trim(lines[i]);
    if (line.starts_with('#') && isDirective(trim(line.substr(1)), "line")) {
      std::string_view rest = trim(line.substr(1)).substr(4);
      int number = leadingInt(rest);
      if (auto file = quoted(rest))
        inSource = baseName(*file) == baseName(sourceFile);
      current = inSource && number > 0 ? number : 0;
      continue;
    }
    sourceOf[i] = current;
  }
  return sourceOf;
}

/// For each PTX line, the source line it came from (0: none). `.file K
/// "NAME"` declares file K (NVRTC puts these at the end, so a first pass
/// collects them); `.loc K L C` says the instructions after it came from
/// line L of file K, until the next `.loc` or the end of the function.
std::vector<int> mapPtx(const std::vector<std::string_view> &lines,
                        std::string_view sourceFile) {
  std::set<int> sourceFiles;
  for (std::string_view line : lines) {
    line = trim(line);
    if (!isDirective(line, ".file"))
      continue;
    line.remove_prefix(5);
    int number = leadingInt(line);
    auto name = quoted(line);
    if (number >= 0 && name && baseName(*name) == baseName(sourceFile))
      sourceFiles.insert(number);
  }
  std::vector<int> sourceOf(lines.size(), 0);
  int current = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = trim(lines[i]);
    if (isDirective(line, ".loc")) {
      line.remove_prefix(4);
      int file = leadingInt(line);
      int number = leadingInt(line);
      current = sourceFiles.count(file) && number > 0 ? number : 0;
    } else if (lines[i].starts_with('}') || line.starts_with(".visible") ||
               line.starts_with(".entry") || line.starts_with(".func") ||
               line.starts_with(".file")) {
      // A function's end or a new function: the last .loc no longer holds.
      current = 0;
    }
    sourceOf[i] = current;
  }
  return sourceOf;
}

/// A code pane: one <div class="l"> per line with its number. Generated
/// code gives `sourceOf` (each line's source line, 0: none) as `data-src`;
/// the source gives `producedCode`, the lines to mark.
std::string codePane(const std::string &id, const std::vector<std::string_view> &lines,
                     const std::vector<int> &sourceOf, const std::set<int> &producedCode) {
  std::string out = "<div class=\"code\" id=\"" + id + "\">";
  for (size_t i = 0; i < lines.size(); ++i) {
    out += producedCode.count(int(i + 1)) ? "<div class=\"l has-code\"" : "<div class=\"l\"";
    if (i < sourceOf.size() && sourceOf[i])
      out += " data-src=\"" + std::to_string(sourceOf[i]) + "\"";
    out += "><span class=\"n\">" + std::to_string(i + 1) + "</span><span class=\"t\">" +
           escape(lines[i]) + "</span></div>";
  }
  return out + "</div>\n";
}

std::string section(const char *id, const char *title, const std::string &body) {
  return std::string("<section id=\"") + id + "\"><h2>" + title + "</h2>\n" + body +
         "</section>\n";
}

std::string row(const std::string &name, const std::string &valueHtml) {
  return "<tr><th>" + escape(name) + "</th><td>" + valueHtml + "</td></tr>\n";
}

std::string pre(std::string_view text) { return "<pre>" + escape(text) + "</pre>\n"; }

std::string note(std::string_view text) {
  return "<p class=\"note\">" + escape(text) + "</p>\n";
}

/// Pretty JSON, or the text as given when it does not parse.
std::string prettyJson(const std::string &text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded())
    return text;
  return value.dump(2, ' ', false, json::error_handler_t::replace);
}

std::string compactJson(const json &value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// The config space as a table: one row per parameter, its values with the
/// default and the value in use marked. Empty when the JSON is not a space.
std::string configSpaceTable(const std::string &spaceText, const std::string &configText) {
  json space = json::parse(spaceText, nullptr, false);
  json config = json::parse(configText, nullptr, false);
  if (!space.is_object() || !space.contains("parameters") || !space["parameters"].is_array())
    return "";
  std::string out = "<p class=\"legend\"><span class=\"default\">default</span> "
                    "<span class=\"chosen\">in use</span></p>\n"
                    "<table><tr><th>parameter</th><th>values</th><th>doc</th></tr>\n";
  for (const json &parameter : space["parameters"]) {
    if (!parameter.is_object())
      continue;
    std::string key = parameter.contains("key") && parameter["key"].is_string()
                          ? parameter["key"].get<std::string>()
                          : "?";
    std::optional<int> index;
    if (parameter.contains("index") && parameter["index"].is_number_integer())
      index = parameter["index"].get<int>();
    int defaultIndex = parameter.contains("default") && parameter["default"].is_number_integer()
                           ? parameter["default"].get<int>()
                           : -1;
    // The value this config uses, to mark it among the values.
    const json *inUse = nullptr;
    if (config.is_object() && config.contains(key)) {
      const json &entry = config[key];
      if (!index)
        inUse = &entry;
      else if (entry.is_array() && *index >= 0 && size_t(*index) < entry.size())
        inUse = &entry[*index];
    }
    std::string values;
    if (parameter.contains("values") && parameter["values"].is_array()) {
      int i = 0;
      for (const json &value : parameter["values"]) {
        std::string classes = std::string(i == defaultIndex ? " default" : "") +
                              (inUse && *inUse == value ? " chosen" : "");
        values += "<span class=\"v" + classes + "\">" + escape(compactJson(value)) + "</span> ";
        ++i;
      }
    }
    std::string name = index ? key + "[" + std::to_string(*index) + "]" : key;
    std::string doc = parameter.contains("doc") && parameter["doc"].is_string()
                          ? parameter["doc"].get<std::string>()
                          : "";
    out += "<tr><td><code>" + escape(name) + "</code></td><td>" + values + "</td><td>" +
           escape(doc) + "</td></tr>\n";
  }
  out += "</table>\n";
  if (space.contains("default"))
    out += "<p>Space default: <code>" + escape(compactJson(space["default"])) + "</code></p>\n";
  return out;
}

/// The log-log roofline: x is arithmetic intensity (FLOP/byte), y attainable
/// TFLOP/s. The memory roof is intensity × bandwidth, the compute roof flat.
std::string rooflineSvg(const InspectReport::Roofline &r, const std::string &kernel) {
  const double width = 680, height = 420, left = 70, right = 20, top = 20, bottom = 50;
  const double plotW = width - left - right, plotH = height - top - bottom;
  double slope = r.peakGBs / 1000; // TFLOP/s per FLOP/byte
  double ridge = r.peakTFlops / slope;
  auto roof = [&](double x) { return std::min(r.peakTFlops, x * slope); };
  double intensity = r.bytes > 0 ? r.flops / r.bytes : 0;
  bool hasPoint = intensity > 0;
  bool measured = hasPoint && r.measuredMs && *r.measuredMs > 0;
  double pointY = measured ? r.flops / (*r.measuredMs * 1e-3) / 1e12 : roof(intensity);

  // Whole decades, one beyond the ridge and the point on each side.
  double x0 = std::floor(std::log10(hasPoint ? std::min(ridge, intensity) : ridge)) - 1;
  double x1 = std::ceil(std::log10(hasPoint ? std::max(ridge, intensity) : ridge)) + 1;
  double y1 = std::ceil(std::log10(std::max(r.peakTFlops, hasPoint ? pointY : 0) * 1.5));
  double y0 = std::floor(std::log10(std::min(roof(std::pow(10, x0)), hasPoint ? pointY : 1e300)));
  auto px = [&](double x) { return left + (std::log10(x) - x0) / (x1 - x0) * plotW; };
  auto py = [&](double y) { return top + (y1 - std::log10(y)) / (y1 - y0) * plotH; };
  auto tick = [](double d) {
    return std::fabs(d) <= 3 ? format("%g", std::pow(10, d)) : format("1e%d", int(d));
  };

  std::string svg = format("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %g %g\" "
                           "width=\"%g\" height=\"%g\" role=\"img\" aria-label=\"roofline\">\n",
                           width, height, width, height);
  for (double d = x0; d <= x1; ++d)
    svg += format("<line class=\"grid\" x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\"/>"
                  "<text class=\"tick\" x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%s</text>\n",
                  px(std::pow(10, d)), top, px(std::pow(10, d)), top + plotH,
                  px(std::pow(10, d)), top + plotH + 16, tick(d).c_str());
  for (double d = y0; d <= y1; ++d)
    svg += format("<line class=\"grid\" x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\"/>"
                  "<text class=\"tick\" x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                  left, py(std::pow(10, d)), left + plotW, py(std::pow(10, d)), left - 6,
                  py(std::pow(10, d)) + 4, tick(d).c_str());
  svg += format("<text class=\"axis\" x=\"%g\" y=\"%g\" text-anchor=\"middle\">arithmetic "
                "intensity (FLOP/byte)</text>\n<text class=\"axis\" transform=\"translate(16 "
                "%g) rotate(-90)\" text-anchor=\"middle\">attainable TFLOP/s</text>\n",
                left + plotW / 2, height - 8, top + plotH / 2);

  // The roofs, the ridge and their labels.
  double xStart = std::pow(10, x0), xEnd = std::pow(10, x1);
  svg += format("<polyline class=\"roof\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
                px(xStart), py(roof(xStart)), px(ridge), py(r.peakTFlops), px(xEnd),
                py(r.peakTFlops));
  double angle = std::atan2(py(ridge * 0.1) - py(ridge * 0.01), px(ridge * 0.1) - px(ridge * 0.01));
  // The memory label goes on the half of the slope away from the point.
  double along = (std::log10(intensity) - x0) / (std::log10(ridge) - x0);
  bool labelRight = hasPoint && along < 0.5;
  double labelX = std::pow(10, x0 + (std::log10(ridge) - x0) * (labelRight ? 0.9 : 0.08));
  svg += format("<text class=\"label\" transform=\"translate(%.1f %.1f) rotate(%.1f)\" "
                "text-anchor=\"%s\">memory %s/s</text>\n",
                px(labelX), py(roof(labelX)) - 6, angle * 180 / std::numbers::pi,
                labelRight ? "end" : "start", withPrefix(r.peakGBs * 1e9, "B").c_str());
  svg += format("<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">compute "
                "%.4g TFLOP/s</text>\n",
                px(xEnd) - 4, py(r.peakTFlops) - 6, r.peakTFlops);
  svg += format("<line class=\"ridge\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%g\"/>"
                "<text class=\"tick\" x=\"%.1f\" y=\"%g\">ridge %.3g</text>\n",
                px(ridge), py(r.peakTFlops), px(ridge), top + plotH, px(ridge) + 4,
                top + plotH - 6, ridge);

  // The kernel: filled where measured, hollow at its bound otherwise.
  if (hasPoint) {
    svg += format("<line class=\"ridge\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%g\"/>"
                  "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\"/>\n",
                  px(intensity), py(pointY), px(intensity), top + plotH,
                  measured ? "point" : "point hollow", px(intensity), py(pointY));
    // Label on the left of a point in the right part, so it stays inside.
    bool onLeft = px(intensity) > left + plotW * 0.6;
    svg += format("<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">",
                  px(intensity) + (onLeft ? -10 : 10), py(pointY) + 18,
                  onLeft ? "end" : "start") +
           escape(kernel) + format(": %.3g TFLOP/s</text>\n", pointY);
  }
  if (hasPoint)
    svg += format("<circle class=\"%s\" cx=\"%g\" cy=\"%g\" r=\"5\"/><text class=\"label\" "
                  "x=\"%g\" y=\"%g\">%s</text>\n",
                  measured ? "point" : "point hollow", left + 14, top + 14, left + 24, top + 18,
                  measured ? "measured" : "attainable bound (not measured)");
  return svg + "</svg>\n";
}

std::string rooflineSection(const InspectReport::Roofline &r, const std::string &kernel) {
  double intensity = r.bytes > 0 ? r.flops / r.bytes : 0;
  std::string out = "<table class=\"kv\">\n";
  out += row("bytes (least traffic)", withPrefix(r.bytes, "B"));
  out += row("FLOPs", withPrefix(r.flops, "FLOP"));
  out += row("arithmetic intensity", r.bytes > 0 ? format("%.3g FLOP/byte", intensity) : "n/a");
  if (r.peakGBs > 0)
    out += row("peak bandwidth", format("%.4g GB/s", r.peakGBs));
  if (r.peakTFlops > 0)
    out += row("peak compute", format("%.4g TFLOP/s", r.peakTFlops));
  if (r.peakGBs > 0 && r.peakTFlops > 0 && r.bytes > 0)
    out += row("attainable",
               format("%.3g TFLOP/s", std::min(r.peakTFlops, intensity * r.peakGBs / 1000)));
  if (r.measuredMs && *r.measuredMs > 0) {
    double seconds = *r.measuredMs * 1e-3;
    out += row("measured time", format("%.4g ms", *r.measuredMs));
    out += row("achieved", format("%.3g TFLOP/s, ", r.flops / seconds / 1e12) +
                               withPrefix(r.bytes / seconds, "B/s"));
  }
  if (!r.bound.empty())
    out += row("bound", escape(r.bound));
  out += "</table>\n";
  if (!r.note.empty())
    out += note(r.note);
  if (r.peakGBs <= 0 || r.peakTFlops <= 0)
    return out + note("The chart needs the device's ceilings (peak bandwidth and peak "
                      "TFLOP/s); only the numbers are shown.");
  out += "<figure>" + rooflineSvg(r, kernel) + "<figcaption>";
  if (intensity <= 0)
    out += "No point for the kernel: its intensity is zero or unknown.";
  else if (r.measuredMs && *r.measuredMs > 0)
    out += "The filled point is the kernel's measured throughput at its intensity.";
  else
    out += "The hollow point is the kernel's attainable bound at its intensity: there is "
           "no measurement (run with a GPU for one).";
  return out + "</figcaption></figure>\n";
}

// The page's style: plain, light, system fonts; code panes scroll on their own.
const char *kStyle = R"CSS(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1f2328; background: #fff; }
header { position: sticky; top: 0; background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 8px 20px; z-index: 1; }
header b { margin-right: 16px; }
header a { margin-right: 12px; color: #0969da; text-decoration: none; }
main { padding: 0 20px 40px; }
section { margin-top: 28px; scroll-margin-top: 48px; }
h2 { font-size: 18px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 14px; margin: 8px 0; }
code, pre, .code { font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { tab-size: 4; background: #f6f8fa; border: 1px solid #d0d7de; padding: 8px; overflow: auto; max-height: 70vh; margin: 4px 0; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
.note { color: #57606a; font-style: italic; }
details { margin: 4px 0; }
summary { cursor: pointer; font-family: ui-monospace, Menlo, Consolas, monospace; }
.code { background: #f6f8fa; border: 1px solid #d0d7de; overflow: auto; max-height: 70vh; position: relative; }
.l { white-space: pre; tab-size: 4; padding-right: 8px; min-width: max-content; }
.l .n { display: inline-block; width: 4.5em; padding-right: 8px; text-align: right; color: #8c959f; user-select: none; border-right: 3px solid transparent; margin-right: 8px; }
.l[data-src], #source-code .l { cursor: pointer; }
.l[data-src]:hover, #source-code .l:hover { background: #eaeef2; }
.l.has-code .n, .l[data-src] .n { border-right-color: #9ec5fe; color: #57606a; }
.l.hl, .l.hl:hover { background: #fff1b3; }
.l.hl .n { border-right-color: #d4a72c; }
.columns { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.columns > div { min-width: 0; }
#picked { min-height: 1.5em; color: #57606a; }
.v { font-family: ui-monospace, Menlo, Consolas, monospace; padding: 0 3px; border-radius: 3px; }
.default { font-weight: 700; background: #ddf4ff; }
.chosen { outline: 2px solid #d4a72c; }
.legend span { padding: 0 4px; margin-right: 8px; }
svg { font: 12px system-ui, sans-serif; background: #fff; border: 1px solid #d0d7de; }
svg .grid { stroke: #eaeef2; }
svg .tick { fill: #57606a; font-size: 11px; }
svg .axis { fill: #1f2328; }
svg .roof { fill: none; stroke: #0969da; stroke-width: 2.5; }
svg .ridge { stroke: #8c959f; stroke-dasharray: 4 3; }
svg .label { fill: #1f2328; }
svg .point { fill: #cf222e; stroke: #cf222e; stroke-width: 2; }
svg .point.hollow { fill: #fff; }
figure { margin: 8px 0; }
figcaption { color: #57606a; margin-top: 4px; }
)CSS";

// Clicks: a source line selects itself and every CUDA and PTX line from it;
// a CUDA or PTX line selects its source line the same way.
const char *kScript = R"JS(
(function () {
  'use strict';
  const sourcePane = document.getElementById('source-code');
  const cudaPane = document.getElementById('cuda-code');
  const ptxPane = document.getElementById('ptx-code');
  const picked = document.getElementById('picked');
  let selected = [];

  // Scroll a pane so that `line` is in its middle, without moving the page.
  function scrollPane(pane, line) {
    pane.scrollTop = line.offsetTop - pane.clientHeight / 2;
  }

  function generatedLines(pane, n) {
    return pane ? Array.from(pane.querySelectorAll('.l[data-src="' + n + '"]')) : [];
  }

  function select(n, fromSource) {
    selected.forEach(function (e) { e.classList.remove('hl'); });
    const sourceLine = sourcePane ? sourcePane.children[n - 1] : undefined;
    const cuda = generatedLines(cudaPane, n), ptx = generatedLines(ptxPane, n);
    selected = cuda.concat(ptx);
    if (sourceLine) selected.push(sourceLine);
    selected.forEach(function (e) { e.classList.add('hl'); });
    picked.textContent = 'Source line ' + n + ': ' + cuda.length + ' CUDA line(s), ' +
        ptx.length + ' PTX line(s)' +
        (sourceLine ? ' \u2014 ' + sourceLine.lastChild.textContent.trim() : '');
    if (fromSource) {
      // The page moves to the first generated line; the PTX pane follows.
      const first = cuda.length ? cuda[0] : ptx[0];
      if (first) first.scrollIntoView({block: 'center'});
      if (cuda.length && ptx.length) scrollPane(ptxPane, ptx[0]);
    } else if (sourceLine) {
      scrollPane(sourcePane, sourceLine);
    }
  }

  function onClick(fromSource) {
    return function (event) {
      const line = event.target.closest('.l');
      if (!line) return;
      const n = fromSource ? Array.prototype.indexOf.call(line.parentNode.children, line) + 1
                           : Number(line.dataset.src || 0);
      if (n > 0) select(n, fromSource);
    };
  }
  if (sourcePane) sourcePane.addEventListener('click', onClick(true));
  if (cudaPane) cudaPane.addEventListener('click', onClick(false));
  if (ptxPane) ptxPane.addEventListener('click', onClick(false));

  const ready = document.createElement('div');
  ready.id = 'kite-ready';
  document.body.appendChild(ready);
})();
)JS";

} // namespace

std::string kite::cli::renderInspectHtml(const InspectReport &report) {
  std::vector<std::string_view> sourceLines = splitLines(report.source);
  std::vector<std::string_view> cudaLines = splitLines(report.cuda);
  std::vector<std::string_view> ptxLines = splitLines(report.ptx);
  std::vector<int> cudaSource = mapCuda(cudaLines, report.file);
  std::vector<int> ptxSource = mapPtx(ptxLines, report.file);
  std::set<int> producedCode(cudaSource.begin(), cudaSource.end());
  producedCode.insert(ptxSource.begin(), ptxSource.end());

  std::string title = "kite inspect: " + escape(report.kernel);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<title>" + title + "</title>\n<style>" + kStyle + "</style></head>\n<body>\n"
                    "<header><b>" + title + "</b>";
  for (const char *id : {"summary", "source", "stages", "cuda", "resources", "config", "roofline"})
    out += std::string("<a href=\"#") + id + "\">" + id + "</a>";
  out += "</header>\n<main>\n";

  std::string summary = "<table class=\"kv\">\n";
  summary += row("kernel", "<code>" + escape(report.kernel) + "</code>");
  summary += row("file", "<code>" + escape(report.file) + "</code>");
  summary += row("args", "<code>" + escape(report.args) + "</code>");
  summary += row("arch", escape(report.arch));
  summary += row("launch", escape(report.launch));
  json config = json::parse(report.config, nullptr, false);
  summary += row("config", "<code>" + escape(config.is_discarded() ? report.config
                                                                    : compactJson(config)) +
                               "</code>");
  summary += row("config from", escape(report.configSource));
  out += section("summary", "Summary", summary + "</table>\n");

  out += section("source", "Source",
                 "<p class=\"note\">Click a line to see the CUDA and PTX it produced; a "
                 "blue mark means it produced some.</p>\n" +
                     codePane("source-code", sourceLines, {}, producedCode));

  std::string stages;
  for (size_t i = 0; i < report.stages.size(); ++i)
    stages += std::string("<details") + (i == 0 ? " open" : "") + "><summary>" +
              escape(report.stages[i].name) + "</summary>" + pre(report.stages[i].text) +
              "</details>\n";
  out += section("stages", "IR stages", stages.empty() ? note("No IR stages.") : stages);

  std::string cuda = "<p id=\"picked\">Click a CUDA or PTX line to find its source line.</p>\n"
                     "<div class=\"columns\"><div><h3>CUDA</h3>";
  cuda += cudaLines.empty() ? note("No CUDA.") : codePane("cuda-code", cudaLines, cudaSource, {});
  cuda += "</div><div><h3>PTX</h3>";
  cuda += ptxLines.empty() ? note(report.ptxNote.empty() ? "No PTX." : report.ptxNote)
                           : codePane("ptx-code", ptxLines, ptxSource, {});
  cuda += "</div></div>\n<details><summary>SASS</summary>";
  cuda += report.sass.empty() ? note(report.sassNote.empty() ? "No SASS." : report.sassNote)
                              : pre(report.sass);
  out += section("cuda", "CUDA and PTX", cuda + "</details>\n");

  std::string resources;
  if (!report.resources.empty()) {
    resources = "<table class=\"kv\">\n";
    for (const auto &[name, value] : report.resources)
      resources += row(name, escape(value));
    resources += "</table>\n";
  }
  if (!report.resourcesNote.empty() || report.resources.empty())
    resources += note(report.resourcesNote.empty() ? "No resources." : report.resourcesNote);
  out += section("resources", "Resources", resources);

  std::string space = configSpaceTable(report.configSpace, report.config);
  out += section("config", "Config",
                 "<p>From: " + escape(report.configSource) + "</p>\n" +
                     pre(prettyJson(report.config)) + "<h3>Config space</h3>\n" +
                     (space.empty() ? pre(report.configSpace) : space));

  out += section("roofline", "Roofline", rooflineSection(report.roofline, report.kernel));
  return out + "</main>\n<script>" + kScript + "</script>\n</body></html>\n";
}
