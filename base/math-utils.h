// base/math-utils.h: scalar math helpers: approximate comparison, log-domain arithmetic, integers.
// SPDX-License-Identifier: Apache-2.0
//
// Names and semantics follow Kaldi's base math header (kLogZeroFloat, LogAdd, ApproxEqual, Gcd...).
// Misuse (LogSub of a larger number, Gcd(0, 0), a zero divisor, ...) throws cuctx::Error; nothing
// here aborts. Every function is pure and thread-safe.
#ifndef CUCTX_BASE_MATH_UTILS_H_
#define CUCTX_BASE_MATH_UTILS_H_

#include "base/error.h"
#include "base/types.h"

#include <cfloat>  // DBL_EPSILON, FLT_EPSILON, which Kaldi programs use through this header
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

// Kaldi's base math header gives these constants; <cmath> has the usual ones on glibc but not
// M_2PI or M_LOG_2PI. They are defined here, only where absent, so that ported code compiles
// unchanged (the one place cuctx defines unprefixed macros, for compatibility's sake).
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_SQRT2
#define M_SQRT2 1.41421356237309504880
#endif
#ifndef M_SQRT1_2
#define M_SQRT1_2 0.70710678118654752440
#endif
#ifndef M_LN2
#define M_LN2 0.69314718055994530942
#endif
#ifndef M_LN10
#define M_LN10 2.30258509299404568402
#endif
#ifndef M_2PI
#define M_2PI 6.28318530717958647693  // 2 pi
#endif
#ifndef M_LOG_2PI
#define M_LOG_2PI 1.83787706640934548356  // log(2 pi)
#endif

// Kaldi's classification macros: CUCTX_ISNAN(x), CUCTX_ISINF(x), CUCTX_ISFINITE(x) for float and
// double arguments, and CUCTX_SQR(x) = (x) * (x) (x is evaluated twice).
#define CUCTX_ISNAN std::isnan
#define CUCTX_ISINF std::isinf
#define CUCTX_ISFINITE(x) std::isfinite(x)
#define CUCTX_SQR(x) ((x) * (x))

namespace cuctx {

// log(0): minus infinity. LogAdd and LogSub treat it as the log-domain zero.
constexpr float kLogZeroFloat = -std::numeric_limits<float>::infinity();
constexpr double kLogZeroDouble = -std::numeric_limits<double>::infinity();
constexpr BaseFloat kLogZeroBaseFloat = kLogZeroFloat;

// log(machine epsilon), i.e. -52 ln 2 and -23 ln 2: when y - x is below this, exp(y - x) no longer
// changes 1 + exp(y - x), so LogAdd(x, y) returns the larger argument unchanged. Literals rather
// than std::log calls, so they are usable in constant expressions and in static initialisers.
constexpr double kMinLogDiffDouble = -36.043653389117154;
constexpr float kMinLogDiffFloat = -15.942385152878742f;

// log(2 pi), for Gaussian log-likelihoods.
constexpr double kLog2Pi = 1.8378770664093454835606594728112;

// Precision-preserving overloads, so that templated code calls the float routine for float.
inline double Exp(double x) { return std::exp(x); }
inline float Exp(float x) { return std::exp(x); }
inline double Log(double x) { return std::log(x); }
inline float Log(float x) { return std::log(x); }
inline double Log1p(double x) { return std::log1p(x); }
inline float Log1p(float x) { return std::log1p(x); }

// log(exp(x) + exp(y)), computed without overflow. Either argument may be kLogZero; two kLogZero
// arguments give kLogZero.
inline double LogAdd(double x, double y) {
  if (x < y) std::swap(x, y);  // now x is the larger
  double diff = y - x;         // <= 0, or NaN when both are -inf
  return diff >= kMinLogDiffDouble ? x + Log1p(Exp(diff)) : x;
}
inline float LogAdd(float x, float y) {
  if (x < y) std::swap(x, y);
  float diff = y - x;
  return diff >= kMinLogDiffFloat ? x + Log1p(Exp(diff)) : x;
}

namespace internal {
[[noreturn]] void ThrowLogSubOrder(double x, double y);
}  // namespace internal

// log(exp(x) - exp(y)). Requires y <= x; y == x (including both kLogZero) gives kLogZero.
// Throws cuctx::Error if y > x, since the difference would be negative.
inline double LogSub(double x, double y) {
  if (y >= x) {
    if (y == x) return kLogZeroDouble;
    internal::ThrowLogSubOrder(x, y);
  }
  double result = x + Log(-std::expm1(y - x));
  // 1 - exp(diff) can round to 0 when diff is tiny; the true answer is then far below any
  // representable difference of x, so it is reported as log(0).
  return std::isnan(result) ? kLogZeroDouble : result;
}
inline float LogSub(float x, float y) {
  if (y >= x) {
    if (y == x) return kLogZeroFloat;
    internal::ThrowLogSubOrder(x, y);
  }
  float result = x + Log(-std::expm1(y - x));
  return std::isnan(result) ? kLogZeroFloat : result;
}

// True if a and b are equal to within a relative tolerance:
//   |a - b| <= relative_tolerance * (|a| + |b|).
// a == b (including equal infinities) is always true; NaN, or infinities that differ, are never
// equal. Works for any mix of arithmetic types (computed in the wider of the two, at least
// double). The default tolerance is Kaldi's 0.001.
template <typename A, typename B,
          typename = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>>
inline bool ApproxEqual(A a, B b, double relative_tolerance = 0.001) {
  using T = std::common_type_t<A, B, double>;
  T x = static_cast<T>(a), y = static_cast<T>(b);
  if (x == y) return true;
  T diff = std::abs(x - y);
  if (std::isinf(diff) || std::isnan(diff)) return false;
  return diff <= static_cast<T>(relative_tolerance) * (std::abs(x) + std::abs(y));
}

namespace internal {
[[noreturn]] void ThrowNotApproxEqual(double a, double b, double relative_tolerance);
}  // namespace internal

// Throws cuctx::Error, naming both values and the tolerance, unless ApproxEqual(a, b, tol).
// (Kaldi asserts; we throw so that a test or a tool can report it.)
template <typename A, typename B,
          typename = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>>
inline void AssertEqual(A a, B b, double relative_tolerance = 0.001) {
  if (!ApproxEqual(a, b, relative_tolerance))
    internal::ThrowNotApproxEqual(static_cast<double>(a), static_cast<double>(b),
                                  relative_tolerance);
}

// The smallest power of two >= n. Throws cuctx::Error unless 0 < n <= 2^30.
int32 RoundUpToNearestPowerOfTwo(int32 n);

// floor(a / b) for integers (C++ division rounds towards zero instead): DivideRoundingDown(-7, 2)
// is -4. Throws cuctx::Error if b == 0 or the result overflows (INT32_MIN / -1).
int32 DivideRoundingDown(int32 a, int32 b);

// Greatest common divisor, always positive: Gcd(-4, 6) == 2, Gcd(0, 5) == 5.
// Throws cuctx::Error if both are 0 (every integer divides 0) or if the result is not
// representable (Gcd(INT_MIN, 0) for a signed type).
template <class I>
I Gcd(I m, I n) {
  static_assert(std::is_integral<I>::value, "Gcd needs an integer type");
  CUCTX_CHECK(m != 0 || n != 0) << "Gcd(0, 0) is undefined";
  while (n != 0) {
    I r;
    if constexpr (std::is_signed<I>::value)
      r = (n == -1) ? I(0) : static_cast<I>(m % n);  // INT_MIN % -1 traps on x86
    else
      r = static_cast<I>(m % n);
    m = n;
    n = r;
  }
  if constexpr (std::is_signed<I>::value) {
    CUCTX_CHECK(m != std::numeric_limits<I>::min()) << "Gcd result -(" << m << ") overflows";
    if (m < 0) m = static_cast<I>(-m);
  }
  return m;
}

// Least common multiple of two positive integers. Throws cuctx::Error if either is <= 0 or the
// result overflows I.
template <class I>
I Lcm(I m, I n) {
  static_assert(std::is_integral<I>::value, "Lcm needs an integer type");
  CUCTX_CHECK(m > 0 && n > 0) << "Lcm needs positive arguments, got " << m << " and " << n;
  I result;
  CUCTX_CHECK(!__builtin_mul_overflow(static_cast<I>(m / Gcd(m, n)), n, &result))
      << "Lcm(" << m << ", " << n << ") overflows";
  return result;
}

// Replaces *factors with the prime factors of m in non-decreasing order, each repeated as often as
// it divides m: Factorize(360) gives {2, 2, 2, 3, 3, 5}; Factorize(1) gives {}. Throws cuctx::Error
// if m < 1 or `factors` is null. Trial division up to sqrt(m).
template <class I>
void Factorize(I m, std::vector<I>* factors) {
  static_assert(std::is_integral<I>::value, "Factorize needs an integer type");
  CUCTX_CHECK(factors != nullptr) << "Factorize: the output vector is null";
  CUCTX_CHECK(m >= 1) << "Factorize needs m >= 1, got " << m;
  factors->clear();
  for (I d = 2; d <= m / d; d = (d == 2) ? I(3) : static_cast<I>(d + 2)) {
    while (m % d == 0) {
      factors->push_back(d);
      m = static_cast<I>(m / d);
    }
  }
  if (m > 1) factors->push_back(m);  // what is left has no divisor up to its square root
}

// sqrt(x * x + y * y) without undue overflow or underflow.
inline double Hypot(double x, double y) { return std::hypot(x, y); }
inline float Hypot(float x, float y) { return std::hypot(x, y); }

}  // namespace cuctx

#endif  // CUCTX_BASE_MATH_UTILS_H_
