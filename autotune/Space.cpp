//===- Space.cpp - a config space for the search --------------------------===//
//
// This file implements SearchSpace (see Space.h).
//
//===----------------------------------------------------------------------===//

#include "autotune/Space.h"

#include <cmath>

#include <kite/runtime.hpp>

#include <algorithm>

using json = nlohmann::json;
using namespace kite::autotune;

std::string Parameter::name() const {
  return index ? key + "[" + std::to_string(*index) + "]" : key;
}

SearchSpace::SearchSpace(const json &space) {
  if (!space.is_object() || !space.contains("default") || !space["default"].is_object() ||
      !space.contains("parameters") || !space["parameters"].is_array())
    throw Error("kite autotune: malformed config space (expected {\"default\": {...}, "
                "\"parameters\": [...]})");
  defaults_ = space["default"];
  for (const json &p : space["parameters"]) {
    Parameter param;
    try {
      param.key = p.at("key").get<std::string>();
      if (p.contains("index"))
        param.index = p["index"].get<int>();
      param.values = p.at("values").get<std::vector<json>>();
      param.defaultIndex = p.value("default", 0);
      param.doc = p.value("doc", "");
    } catch (const json::exception &e) {
      throw Error(std::string("kite autotune: malformed config space parameter ") + p.dump() +
                  ": " + e.what());
    }
    if (param.values.empty() || param.defaultIndex < 0 ||
        param.defaultIndex >= (int)param.values.size())
      throw Error("kite autotune: config space parameter " + param.name() +
                  " has no values or a default out of range");
    if (param.index && (!defaults_.contains(param.key) || !defaults_[param.key].is_array() ||
                        *param.index >= (int)defaults_[param.key].size()))
      throw Error("kite autotune: config space parameter " + param.name() +
                  " has no entry in the default config");
    params_.push_back(std::move(param));
  }
  if (space.contains("starts")) {
    if (!space["starts"].is_array())
      throw Error("kite autotune: malformed config space: \"starts\" must be a list of configs");
    for (const json &s : space["starts"]) {
      if (!s.is_object())
        throw Error("kite autotune: malformed config space: a start is not a config: " + s.dump());
      starts_.push_back(s);
    }
  }
}

std::vector<Point> SearchSpace::starts() const {
  std::vector<Point> points;
  for (const json &s : starts_) {
    Point p = nearest(s);
    if (p != defaults() && std::find(points.begin(), points.end(), p) == points.end())
      points.push_back(std::move(p));
  }
  return points;
}

void SearchSpace::pin(const json &partial) {
  if (partial.is_null())
    return;
  if (!partial.is_object())
    throw Error("kite autotune: a pinned config must be a JSON object, got " + partial.dump());
  for (auto &[key, value] : partial.items()) {
    if (!defaults_.contains(key))
      throw Error("kite autotune: the pinned key '" + key +
                  "' is not a config key of this kernel");
    defaults_[key] = value;
    std::erase_if(params_, [&](const Parameter &p) { return p.key == key; });
  }
}

uint64_t SearchSpace::cardinality() const {
  uint64_t n = 1;
  for (const Parameter &p : params_) {
    if (n > (uint64_t(1) << 62) / p.values.size())
      return uint64_t(1) << 62;
    n *= p.values.size();
  }
  return n;
}

Point SearchSpace::defaults() const {
  Point p;
  for (const Parameter &param : params_)
    p.push_back(param.defaultIndex);
  return p;
}

json SearchSpace::config(const Point &p) const {
  json c = defaults_;
  for (size_t i = 0; i < params_.size() && i < p.size(); ++i) {
    const Parameter &param = params_[i];
    const json &v = param.values[std::clamp(p[i], 0, (int)param.values.size() - 1)];
    if (param.index)
      c[param.key][*param.index] = v;
    else
      c[param.key] = v;
  }
  return c;
}

Point SearchSpace::random(std::mt19937_64 &rng, double keep) const {
  Point p = defaults();
  std::uniform_real_distribution<double> coin(0, 1);
  for (size_t i = 0; i < params_.size(); ++i)
    if (coin(rng) >= keep)
      p[i] = std::uniform_int_distribution<int>(0, (int)params_[i].values.size() - 1)(rng);
  return p;
}

std::vector<Point> SearchSpace::neighbors(const Point &p, int radius) const {
  std::vector<Point> out;
  for (size_t i = 0; i < params_.size(); ++i)
    for (int step = -radius; step <= radius; ++step) {
      int v = p[i] + step;
      if (step == 0 || v < 0 || v >= (int)params_[i].values.size())
        continue;
      Point q = p;
      q[i] = v;
      out.push_back(std::move(q));
    }
  return out;
}

std::vector<Point> SearchSpace::pairNeighbors(const Point &p) const {
  std::vector<Point> out;
  for (size_t i = 0; i < params_.size(); ++i)
    for (size_t j = i + 1; j < params_.size(); ++j)
      for (int si : {-1, 1})
        for (int sj : {-1, 1}) {
          int a = p[i] + si, b = p[j] + sj;
          if (a < 0 || b < 0 || a >= (int)params_[i].values.size() ||
              b >= (int)params_[j].values.size())
            continue;
          Point q = p;
          q[i] = a;
          q[j] = b;
          out.push_back(std::move(q));
        }
  return out;
}

Point SearchSpace::nearest(const json &config) const {
  Point p = defaults();
  for (size_t i = 0; i < params_.size(); ++i) {
    const Parameter &param = params_[i];
    if (!config.is_object() || !config.contains(param.key))
      continue;
    const json *v = &config[param.key];
    if (param.index) {
      if (!v->is_array() || *param.index >= (int)v->size())
        continue;
      v = &(*v)[*param.index];
    }
    int best = -1;
    double distance = 0;
    for (int j = 0; j < (int)param.values.size(); ++j) {
      const json &c = param.values[j];
      if (c == *v) {
        best = j;
        break;
      }
      if (c.is_number() && v->is_number() && c.get<double>() > 0 && v->get<double>() > 0) {
        double d = std::abs(std::log2(c.get<double>() / v->get<double>()));
        if (best < 0 || d < distance) {
          best = j;
          distance = d;
        }
      }
    }
    if (best >= 0)
      p[i] = best;
  }
  return p;
}
