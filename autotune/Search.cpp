//===- Search.cpp - the config search -------------------------------------===//
//
// This file implements search (see Search.h).
//
//===----------------------------------------------------------------------===//

#include "autotune/Search.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

using namespace kite::autotune;

std::optional<Effort> kite::autotune::parseEffort(std::string_view text) {
  if (text == "none")
    return Effort::none;
  if (text == "quick")
    return Effort::quick;
  if (text == "full")
    return Effort::full;
  return std::nullopt;
}

const char *kite::autotune::effortName(Effort effort) {
  switch (effort) {
  case Effort::none:
    return "none";
  case Effort::quick:
    return "quick";
  case Effort::full:
    return "full";
  }
  return "?";
}

namespace {

/// Moves count as improvements only beyond the timing noise.
constexpr double kMargin = 0.01;

class Searcher {
public:
  Searcher(const SearchSpace &space, const EvaluateFn &evaluate, const SearchOptions &options)
      : space(space), evaluate(evaluate), options(options),
        start(std::chrono::steady_clock::now()), rng(options.seed * 0x9E3779B97F4A7C15ull + 7) {}

  SearchResult run() {
    if (options.effort == Effort::none) {
      evaluateBatch({space.defaults()});
      return result();
    }
    // Both efforts run the same sequence: a descent from the best of the
    // default and the warm starts (winners for nearby shapes: where
    // compiles are slow, quick may have time for only a few batches, and
    // these neighbors are the likeliest wins), seeds near the default and
    // descents (radius 1) from the best of them, then seeds further out and
    // descents that move one parameter up to two steps or two parameters at
    // once. Quick stops starting descents once it has used 40% of its
    // budget (a cheap kernel gets through most of the sequence in seconds);
    // full runs it to the end. So full evaluates everything quick does and
    // never ends worse.
    std::vector<Point> first = {space.defaults()};
    first.insert(first.end(), options.warmStarts.begin(), options.warmStarts.end());
    evaluateBatch(first);
    Point from = space.defaults();
    if (std::vector<std::pair<Point, double>> r = ranked(); !r.empty())
      from = r.front().first;
    started.insert(from);
    descend(from, /*radius=*/1, /*pairs=*/false);
    seedAndDescend(/*seeds=*/23, /*keep=*/0.4, /*radius=*/1, /*pairs=*/false);
    if (!outOfTime() && !pastSoftLimit())
      seedAndDescend(/*seeds=*/40, /*keep=*/0.25, /*radius=*/2, /*pairs=*/true);
    return result();
  }

private:
  const SearchSpace &space;
  const EvaluateFn &evaluate;
  const SearchOptions &options;
  std::chrono::steady_clock::time_point start;
  std::mt19937_64 rng;
  std::map<Point, Evaluation> seen;
  SearchStats stats;

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  bool outOfTime() const { return elapsed() >= options.budgetSeconds; }

  std::optional<double> timeOf(const Point &p) const {
    auto it = seen.find(p);
    if (it == seen.end() || it->second.status != Evaluation::Status::ok)
      return std::nullopt;
    return it->second.ms;
  }

  std::vector<std::pair<Point, double>> ranked() const {
    std::vector<std::pair<Point, double>> r;
    for (const auto &[p, e] : seen)
      if (e.status == Evaluation::Status::ok)
        r.push_back({p, e.ms});
    std::stable_sort(r.begin(), r.end(),
                     [](const auto &a, const auto &b) { return a.second < b.second; });
    return r;
  }

  /// Evaluates the points not seen yet; false if out of time before.
  bool evaluateBatch(std::vector<Point> points) {
    if (outOfTime() && !seen.empty())
      return false;
    std::vector<Point> fresh;
    for (Point &p : points)
      if (!seen.count(p) && std::find(fresh.begin(), fresh.end(), p) == fresh.end())
        fresh.push_back(std::move(p));
    if (fresh.empty())
      return true;
    std::vector<Evaluation> results = evaluate(fresh);
    for (size_t i = 0; i < fresh.size(); ++i) {
      Evaluation e = i < results.size() ? results[i]
                                        : Evaluation{Evaluation::Status::failed, 0, "not evaluated"};
      if (e.status == Evaluation::Status::skipped)
        continue;
      ++stats.tried;
      switch (e.status) {
      case Evaluation::Status::ok:
        if (stats.bestMs == 0 || e.ms < stats.bestMs)
          stats.bestMs = e.ms;
        break;
      case Evaluation::Status::rejected:
        ++stats.rejected;
        break;
      case Evaluation::Status::failed:
        ++stats.failed;
        break;
      case Evaluation::Status::wrong:
        ++stats.wrong;
        break;
      case Evaluation::Status::skipped:
        break;
      }
      if ((e.status == Evaluation::Status::failed || e.status == Evaluation::Status::wrong) &&
          options.onFailure)
        options.onFailure(fresh[i], e);
      seen[fresh[i]] = std::move(e);
    }
    stats.seconds = elapsed();
    if (options.progress)
      options.progress(stats);
    return true;
  }

  std::set<Point> started; // points a descent has started from

  /// Quick's point to stop starting descents.
  bool pastSoftLimit() const {
    return options.effort != Effort::full && elapsed() > 0.4 * options.budgetSeconds;
  }

  /// Evaluates `count` new random seeds (and the default), then descends
  /// from the best points not descended from yet, up to 3 times.
  void seedAndDescend(int count, double keep, int radius, bool pairs) {
    std::vector<Point> seeds = {space.defaults()};
    for (int i = 0; i < count * 4 && (int)seeds.size() <= count; ++i) {
      Point p = space.random(rng, keep);
      if (!seen.count(p) && std::find(seeds.begin(), seeds.end(), p) == seeds.end())
        seeds.push_back(p);
    }
    evaluateBatch(seeds);
    for (int r = 0; r < 3 && !outOfTime(); ++r) {
      if (r > 0 && pastSoftLimit())
        break;
      std::optional<Point> from;
      for (const auto &[p, ms] : ranked())
        if (!started.count(p)) {
          from = p;
          break;
        }
      if (!from)
        break;
      started.insert(*from);
      descend(*from, radius, pairs);
    }
  }

  /// Pattern search: move to the fastest neighbor while it beats the
  /// current point by more than the margin.
  void descend(Point current, int radius, bool pairs) {
    for (;;) {
      std::optional<double> now = timeOf(current);
      if (!now)
        return;
      std::vector<Point> next = space.neighbors(current, radius);
      if (!evaluateBatch(next))
        return;
      std::optional<Point> better = bestAmong(next, *now);
      if (!better && pairs) {
        std::vector<Point> pairs = space.pairNeighbors(current);
        if (!evaluateBatch(pairs))
          return;
        better = bestAmong(pairs, *now);
      }
      if (!better)
        return;
      current = *better;
    }
  }

  std::optional<Point> bestAmong(const std::vector<Point> &points, double than) const {
    std::optional<Point> best;
    double bestMs = than * (1 - kMargin);
    for (const Point &p : points)
      if (std::optional<double> ms = timeOf(p); ms && *ms < bestMs) {
        bestMs = *ms;
        best = p;
      }
    return best;
  }

  SearchResult result() {
    SearchResult r;
    r.best = ranked();
    if (r.best.size() > 8)
      r.best.resize(8);
    stats.seconds = elapsed();
    r.stats = stats;
    return r;
  }
};

} // namespace

SearchResult kite::autotune::search(const SearchSpace &space, const EvaluateFn &evaluate,
                                    const SearchOptions &options) {
  return Searcher(space, evaluate, options).run();
}

double kite::autotune::medianOf(std::vector<double> t) {
  if (t.empty())
    return 0;
  std::sort(t.begin(), t.end());
  size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

std::optional<std::pair<size_t, double>>
kite::autotune::fastestByMedian(const std::vector<std::vector<double>> &times) {
  std::optional<std::pair<size_t, double>> best;
  for (size_t i = 0; i < times.size(); ++i) {
    if (times[i].empty())
      continue;
    double median = medianOf(times[i]);
    if (!best || median < best->second)
      best = {i, median};
  }
  return best;
}
