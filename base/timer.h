// base/timer.h: Timer, a wall-clock stopwatch on the monotonic (steady) clock.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BASE_TIMER_H_
#define CUCTX_BASE_TIMER_H_

#include <chrono>

namespace cuctx {

// Measures elapsed wall-clock time from construction or the last Reset(). Uses
// std::chrono::steady_clock, so the readings never go backwards when the system clock is adjusted.
// Measures host time only: to time GPU work, synchronise first (or use CUDA events).
// Not synchronised: a Timer used from several threads must be guarded by the caller (reading
// Elapsed() concurrently from several threads is fine as long as nobody calls Reset()).
class Timer {
 public:
  // Starts timing now.
  Timer() { Reset(); }

  // Restarts the measurement from now.
  void Reset();

  // Seconds since construction or the last Reset(); non-negative and non-decreasing between
  // resets. Resolution is that of steady_clock (nanoseconds on Linux).
  double Elapsed() const;

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace cuctx

#endif  // CUCTX_BASE_TIMER_H_
