//===- Search.h - the config search -----------------------------*- C++ -*-===//
//
// This file declares the search over a SearchSpace. It knows nothing of
// GPUs: it asks an evaluation function for the times of batches of points
// (the tuner compiles a batch in parallel, then times it) and keeps the
// best. The strategy:
//
//   0. pattern search from the best of the default and the warm starts
//      (configs tuned for nearby shapes), before anything random;
//   1. seeds: random points near the default (each parameter keeps its
//      default with some probability);
//   2. pattern search from the best: every point one parameter away,
//      moving while a move is faster by more than the noise margin, then
//      restarts from the next-best seeds (3 descents);
//   3. more seeds further from the default, and 3 descents that move one
//      parameter up to two steps or two parameters at once;
//   4. quick stops starting descents after 40% of its budget, full goes to
//      the end; both stop at the wall-clock budget (checked between
//      batches; the tuner also skips candidates past it). Full thus
//      evaluates everything quick does and never ends worse.
//
// The evaluation of a point is cached: no point is evaluated twice.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_AUTOTUNE_SEARCH_H
#define KITE_AUTOTUNE_SEARCH_H

#include "autotune/Space.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kite::autotune {

enum class Effort { none, quick, full };
/// "none", "quick", "full"; nullopt for anything else.
std::optional<Effort> parseEffort(std::string_view text);
const char *effortName(Effort effort);

struct Evaluation {
  enum class Status {
    ok,       // ran, output checked, timed: `ms` holds the median
    rejected, // the compiler refused the config with a reason (does not fit)
    failed,   // a compile error, a launch failure or a fault
    wrong,    // ran, but its output differs from the reference
    skipped,  // not run (out of time): neither counted nor remembered
  };
  Status status = Status::failed;
  double ms = 0;
  std::string message; // why, for anything but ok
};

using EvaluateFn = std::function<std::vector<Evaluation>(const std::vector<Point> &)>;

struct SearchStats {
  int tried = 0, rejected = 0, failed = 0, wrong = 0;
  double bestMs = 0; // 0 until something ran
  double seconds = 0;
};

struct SearchOptions {
  Effort effort = Effort::quick;
  /// Wall-clock budget; the search stops starting new batches after it.
  double budgetSeconds = 25;
  uint64_t seed = 0;
  /// Called after every batch.
  std::function<void(const SearchStats &)> progress;
  /// Called for every failed or wrong point (for the user's report).
  std::function<void(const Point &, const Evaluation &)> onFailure;
  /// Points to try with the default first (winners for nearby shapes from
  /// the cache); the first descent starts from the best of them.
  std::vector<Point> warmStarts;
};

struct SearchResult {
  /// The fastest points, fastest first (at most 8); empty if none ran.
  std::vector<std::pair<Point, double>> best;
  SearchStats stats;
};

SearchResult search(const SearchSpace &space, const EvaluateFn &evaluate,
                    const SearchOptions &options);

/// The median of `times` (0 for none).
double medianOf(std::vector<double> times);

/// Given each candidate's times over rounds of re-timing, the candidate
/// with the lowest median and that median; nullopt if none has a time.
/// Ties go to the earlier candidate (the search's better one).
std::optional<std::pair<size_t, double>>
fastestByMedian(const std::vector<std::vector<double>> &times);

} // namespace kite::autotune

#endif // KITE_AUTOTUNE_SEARCH_H
