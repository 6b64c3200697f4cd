// base/timer.cc: Timer on std::chrono::steady_clock.
// SPDX-License-Identifier: Apache-2.0
#include "base/timer.h"

namespace cuctx {

void Timer::Reset() { start_ = std::chrono::steady_clock::now(); }

double Timer::Elapsed() const {
  std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start_;
  return seconds.count();
}

}  // namespace cuctx
