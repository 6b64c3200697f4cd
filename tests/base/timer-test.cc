// tests/base/timer-test.cc: Timer readings are non-negative, monotonic and restart on Reset().
// SPDX-License-Identifier: Apache-2.0
//
// No sleeps and no assertions about absolute durations: only orderings that hold on any machine.
#include "base/timer.h"

#include <cmath>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

TEST(TimerTest, StartsNearZeroAndIsNonNegative) {
  Timer timer;
  double t = timer.Elapsed();
  EXPECT_GE(t, 0.0);
  EXPECT_TRUE(std::isfinite(t));
}

TEST(TimerTest, ReadingsNeverDecrease) {
  Timer timer;
  double previous = timer.Elapsed();
  for (int i = 0; i < 10000; ++i) {
    double now = timer.Elapsed();
    ASSERT_GE(now, previous) << "reading " << i;
    previous = now;
  }
}

TEST(TimerTest, AdvancesWhileWorking) {
  Timer timer;
  // Spin until the clock visibly moves; steady_clock has at worst microsecond resolution, so this
  // ends quickly, and the loop bound keeps a broken clock from hanging the test.
  double t = 0.0;
  for (long i = 0; i < 100000000 && t == 0.0; ++i) t = timer.Elapsed();
  EXPECT_GT(t, 0.0);
}

TEST(TimerTest, ResetRestartsTheMeasurement) {
  Timer outer;
  Timer inner;
  double before_reset = 0.0;
  for (long i = 0; i < 100000000 && before_reset == 0.0; ++i) before_reset = inner.Elapsed();
  inner.Reset();
  double after_reset = inner.Elapsed();
  EXPECT_GE(after_reset, 0.0);
  // The outer timer started earlier and was never reset, so it has seen at least as much time.
  EXPECT_GE(outer.Elapsed(), after_reset);
  EXPECT_GE(outer.Elapsed(), before_reset);
}

TEST(TimerTest, EarlierTimerReadsAtLeastAsMuchAsLaterOne) {
  Timer first;
  Timer second;
  double second_reading = second.Elapsed();
  double first_reading = first.Elapsed();
  EXPECT_GE(first_reading, second_reading);
}

TEST(TimerTest, ConcurrentReadsAreSafe) {
  const Timer timer;
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&timer, &ok, t] {
      double previous = 0.0;
      bool monotonic = true;
      for (int i = 0; i < 1000; ++i) {
        double now = timer.Elapsed();
        monotonic = monotonic && now >= previous;
        previous = now;
      }
      ok[t] = monotonic ? 1 : 0;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 1) << "thread " << t;
}

}  // namespace
}  // namespace cuctx
