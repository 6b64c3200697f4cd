// cutool/alternating-rounds.h: statistics for a benchmark that measures several modes of one
// call in many alternating rounds of one process (so that clock, frequency and cache drift fall
// on every mode alike): the order of the modes in each round, the spread of one mode's per-round
// figures, and the per-round (paired) differences of two modes.
// SPDX-License-Identifier: Apache-2.0
//
// Header-only, no state; used by bin/cu-allocator-bench --only=detect.
#ifndef CUCTX_CUTOOL_ALTERNATING_ROUNDS_H_
#define CUCTX_CUTOOL_ALTERNATING_ROUNDS_H_

#include "base/error.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace cuctx {
namespace rounds {

// The order in which round `round` (0-based) runs modes 0..num_modes-1: rotated by one per round,
// so each mode runs first, second, ... equally often.
inline std::vector<int> RoundOrder(int round, int num_modes) {
  CUCTX_CHECK(round >= 0 && num_modes >= 1)
      << "RoundOrder: round must be >= 0 and num_modes >= 1, got " << round << ", " << num_modes;
  std::vector<int> order(num_modes);
  for (int i = 0; i < num_modes; ++i) order[i] = (round + i) % num_modes;
  return order;
}

// The quantile q in [0, 1] of `v`, linearly interpolated between order statistics.
inline double Quantile(std::vector<double> v, double q) {
  CUCTX_CHECK(!v.empty()) << "Quantile: no values";
  CUCTX_CHECK(q >= 0.0 && q <= 1.0) << "Quantile: q must be in [0, 1], got " << q;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

struct Spread {
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
};

inline Spread Summarize(const std::vector<double>& v) {
  CUCTX_CHECK(!v.empty()) << "Summarize: no values";
  Spread s;
  s.median = Quantile(v, 0.5);
  s.q1 = Quantile(v, 0.25);
  s.q3 = Quantile(v, 0.75);
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

// a[r] - b[r] for every round r: the difference of two modes measured in the same round.
inline std::vector<double> PairedDifferences(const std::vector<double>& a,
                                             const std::vector<double>& b) {
  CUCTX_CHECK(a.size() == b.size())
      << "PairedDifferences: " << a.size() << " rounds against " << b.size();
  std::vector<double> d(a.size());
  for (size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return d;
}

}  // namespace rounds
}  // namespace cuctx

#endif  // CUCTX_CUTOOL_ALTERNATING_ROUNDS_H_
