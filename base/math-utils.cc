// base/math-utils.cc: the out-of-line parts of math-utils.h (integer helpers, error paths).
// SPDX-License-Identifier: Apache-2.0
#include "base/math-utils.h"

namespace cuctx {
namespace internal {

void ThrowLogSubOrder(double x, double y) {
  CUCTX_ERR << "LogSub(" << x << ", " << y
            << "): cannot subtract a larger number from a smaller one";
}

void ThrowNotApproxEqual(double a, double b, double relative_tolerance) {
  // 17 significant digits, so that values which print alike in the default 6 are told apart.
  std::ostringstream msg;
  msg.precision(17);
  msg << "AssertEqual failed: " << a << " and " << b << " differ by more than relative tolerance "
      << relative_tolerance;
  CUCTX_ERR << msg.str();
}

}  // namespace internal

int32 RoundUpToNearestPowerOfTwo(int32 n) {
  CUCTX_CHECK(n > 0 && n <= (1 << 30))
      << "RoundUpToNearestPowerOfTwo needs 0 < n <= 2^30, got " << n;
  int32 power = 1;
  while (power < n) power <<= 1;
  return power;
}

int32 DivideRoundingDown(int32 a, int32 b) {
  CUCTX_CHECK(b != 0) << "DivideRoundingDown(" << a << ", 0): division by zero";
  // In 64 bits the only overflowing case, INT32_MIN / -1, is computed exactly and then rejected.
  int64 q = static_cast<int64>(a) / b;
  if (static_cast<int64>(a) % b != 0 && ((a < 0) != (b < 0))) --q;
  CUCTX_CHECK(q >= INT32_MIN && q <= INT32_MAX)
      << "DivideRoundingDown(" << a << ", " << b << ") overflows int32";
  return static_cast<int32>(q);
}

}  // namespace cuctx
