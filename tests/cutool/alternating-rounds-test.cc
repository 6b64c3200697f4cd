// tests/cutool/alternating-rounds-test.cc: the round order, quantiles, spreads and paired
// differences of cutool/alternating-rounds.h (the statistics of cu-allocator-bench --only=detect).
// SPDX-License-Identifier: Apache-2.0
#include "cutool/alternating-rounds.h"

#include "base/error.h"

#include <gtest/gtest.h>
#include <vector>

namespace cuctx {
namespace {

TEST(AlternatingRoundsTest, EveryModeRunsInEveryPositionEquallyOften) {
  constexpr int kModes = 3, kRounds = 30;
  int count[kModes][kModes] = {};  // [mode][position]
  for (int r = 0; r < kRounds; ++r) {
    const std::vector<int> order = rounds::RoundOrder(r, kModes);
    ASSERT_EQ(order.size(), size_t{kModes});
    for (int pos = 0; pos < kModes; ++pos) ++count[order[pos]][pos];
  }
  for (int m = 0; m < kModes; ++m)
    for (int pos = 0; pos < kModes; ++pos) EXPECT_EQ(count[m][pos], kRounds / kModes);
  EXPECT_EQ(rounds::RoundOrder(1, 3), (std::vector<int>{1, 2, 0}));
  EXPECT_THROW(rounds::RoundOrder(-1, 3), Error);
  EXPECT_THROW(rounds::RoundOrder(0, 0), Error);
}

TEST(AlternatingRoundsTest, QuantilesInterpolateBetweenOrderStatistics) {
  const std::vector<double> v = {4, 1, 3, 2, 5};  // sorted 1..5
  EXPECT_DOUBLE_EQ(rounds::Quantile(v, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(rounds::Quantile(v, 0.25), 2.0);
  EXPECT_DOUBLE_EQ(rounds::Quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(rounds::Quantile(v, 1.0), 5.0);
  EXPECT_DOUBLE_EQ(rounds::Quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(rounds::Quantile({7}, 0.75), 7.0);
  EXPECT_THROW(rounds::Quantile({}, 0.5), Error);
  EXPECT_THROW(rounds::Quantile(v, 1.5), Error);
  const rounds::Spread s = rounds::Summarize({10, 0, 5, 20, 15});
  EXPECT_DOUBLE_EQ(s.median, 10.0);
  EXPECT_DOUBLE_EQ(s.q1, 5.0);
  EXPECT_DOUBLE_EQ(s.q3, 15.0);
  EXPECT_DOUBLE_EQ(s.min, 0.0);
  EXPECT_DOUBLE_EQ(s.max, 20.0);
}

TEST(AlternatingRoundsTest, PairedDifferencesCancelDriftCommonToARound) {
  // A drift of +100 in round 2 hits both modes; the paired differences stay 3.
  const std::vector<double> off = {10, 11, 110, 12}, on = {13, 14, 113, 15};
  const std::vector<double> d = rounds::PairedDifferences(on, off);
  EXPECT_EQ(d, (std::vector<double>{3, 3, 3, 3}));
  EXPECT_DOUBLE_EQ(rounds::Summarize(d).median, 3.0);
  EXPECT_THROW(rounds::PairedDifferences({1, 2}, {1}), Error);
}

}  // namespace
}  // namespace cuctx
