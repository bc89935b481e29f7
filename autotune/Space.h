//===- Space.h - a config space for the search ------------------*- C++ -*-===//
//
// This file declares SearchSpace: the config space the compiler derives from
// a kernel's IR (lowering/ConfigSpace.h, handed over as JSON), seen by the
// search as a grid of indices. A point picks one value index per
// parameter; neighbors differ in one or two parameters by a step or two.
// Pinned keys (a user's partial config) are fixed and leave the space.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_AUTOTUNE_SPACE_H
#define KITE_AUTOTUNE_SPACE_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kite::autotune {

/// One value index per parameter of a SearchSpace.
using Point = std::vector<int>;

struct Parameter {
  std::string key;          // "block_sizes", "num_warps", ...
  std::optional<int> index; // the entry of a list-valued key
  std::vector<nlohmann::json> values;
  int defaultIndex = 0;
  std::string doc;
  /// "block_sizes[0]" or "num_warps".
  std::string name() const;
};

class SearchSpace {
public:
  /// Parses the compiler's JSON; throws kite::Error on a malformed space.
  explicit SearchSpace(const nlohmann::json &space);

  /// Fixes the keys a user gave (a partial config); their parameters leave
  /// the space. An entry of a list key pins only that entry when the list
  /// is given in full. Throws kite::Error for a key the space does not have.
  void pin(const nlohmann::json &partial);

  const std::vector<Parameter> &parameters() const { return params_; }
  size_t size() const { return params_.size(); }
  /// The number of points (saturating at 2^62).
  uint64_t cardinality() const;

  Point defaults() const;
  /// The config at `p`: the default config with each parameter's value.
  nlohmann::json config(const Point &p) const;
  std::string configText(const Point &p) const { return config(p).dump(); }

  /// A random point: each parameter keeps its default with probability
  /// `keep`, else takes a uniformly random value.
  Point random(std::mt19937_64 &rng, double keep = 0.3) const;
  /// Points one parameter away from `p` (by up to `radius` steps).
  std::vector<Point> neighbors(const Point &p, int radius = 1) const;
  /// Points that move two parameters by one step each.
  std::vector<Point> pairNeighbors(const Point &p) const;
  /// The point nearest to `config` (a config of this kernel, perhaps tuned
  /// for other shapes): each parameter takes the config's value where the
  /// space has it, the nearest number (on a log scale) where it has numbers,
  /// else its default.
  Point nearest(const nlohmann::json &config) const;
  /// The space's starts (configs the compiler knows to win at some shapes,
  /// far from the default) as points, each at most once and none the
  /// default.
  std::vector<Point> starts() const;

private:
  nlohmann::json defaults_;
  std::vector<nlohmann::json> starts_;
  std::vector<Parameter> params_;
};

} // namespace kite::autotune

#endif // KITE_AUTOTUNE_SPACE_H
