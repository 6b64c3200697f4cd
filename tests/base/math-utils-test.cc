// tests/base/math-utils-test.cc: approximate comparison, log-domain arithmetic and integer helpers.
// SPDX-License-Identifier: Apache-2.0
#include "base/math-utils.h"

#include "tests/testing.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace cuctx {
namespace {

class MathUtilsTest : public ::testing::Test {
 private:
  test::QuietLog quiet_;  // CUCTX_CHECK logs before it throws; these tests expect the errors
};

template <typename Real>
class MathUtilsTypedTest : public MathUtilsTest {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MathUtilsTypedTest, RealTypes);

TEST_F(MathUtilsTest, LogZeroIsMinusInfinity) {
  EXPECT_TRUE(std::isinf(kLogZeroFloat) && kLogZeroFloat < 0);
  EXPECT_TRUE(std::isinf(kLogZeroDouble) && kLogZeroDouble < 0);
  EXPECT_EQ(kLogZeroBaseFloat, kLogZeroFloat);
  EXPECT_EQ(Log(0.0), kLogZeroDouble);
  EXPECT_EQ(Log(0.0f), kLogZeroFloat);
}

TEST_F(MathUtilsTest, MinLogDiffIsLogOfEpsilon) {
  EXPECT_NEAR(kMinLogDiffDouble, std::log(std::numeric_limits<double>::epsilon()), 1e-12);
  EXPECT_NEAR(kMinLogDiffFloat, std::log(std::numeric_limits<float>::epsilon()), 1e-5);
  EXPECT_NEAR(kLog2Pi, std::log(2.0 * M_PI), 1e-15);
}

TEST_F(MathUtilsTest, OverloadsKeepPrecision) {
  static_assert(std::is_same<decltype(Exp(1.0f)), float>::value, "float Exp");
  static_assert(std::is_same<decltype(Log(1.0f)), float>::value, "float Log");
  static_assert(std::is_same<decltype(Log1p(1.0f)), float>::value, "float Log1p");
  static_assert(std::is_same<decltype(Exp(1.0)), double>::value, "double Exp");
  EXPECT_DOUBLE_EQ(Exp(1.0), M_E);
  EXPECT_DOUBLE_EQ(Log1p(1e-20), 1e-20);
}

TYPED_TEST(MathUtilsTypedTest, LogAddMatchesDirectFormula) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int i = 0; i < 1000; ++i) {
    Real x = static_cast<Real>(rng.Uniform(-20, 20)), y = static_cast<Real>(rng.Uniform(-20, 20));
    double expected = std::log(std::exp(double(x)) + std::exp(double(y)));
    EXPECT_NEAR(LogAdd(x, y), expected, 10 * test::Tol<Real>() * (1 + std::abs(expected)))
        << x << " " << y;
    EXPECT_EQ(LogAdd(x, y), LogAdd(y, x));
  }
}

TYPED_TEST(MathUtilsTypedTest, LogAddHandlesLogZeroAndLargeGaps) {
  using Real = TypeParam;
  const Real log_zero = -std::numeric_limits<Real>::infinity();
  EXPECT_EQ(LogAdd(Real(3), log_zero), Real(3));
  EXPECT_EQ(LogAdd(log_zero, Real(3)), Real(3));
  EXPECT_EQ(LogAdd(log_zero, log_zero), log_zero);
  // Far apart: the smaller term is below the precision of the larger one.
  EXPECT_EQ(LogAdd(Real(0), Real(-1000)), Real(0));
  // No overflow for large arguments.
  EXPECT_NEAR(LogAdd(Real(1000), Real(1000)), 1000 + std::log(2.0), 1e-3);
}

TYPED_TEST(MathUtilsTypedTest, LogSubInvertsLogAdd) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int i = 0; i < 1000; ++i) {
    Real x = static_cast<Real>(rng.Uniform(-10, 10)), y = static_cast<Real>(rng.Uniform(-10, 10));
    Real sum = LogAdd(x, y);
    // Subtracting the smaller term is well conditioned; the tolerance covers the rounding of sum.
    Real larger = std::max(x, y), smaller = std::min(x, y);
    if (sum > larger) {
      EXPECT_NEAR(LogSub(sum, smaller), larger, 100 * test::Tol<Real>() * (1 + std::abs(larger)));
    }
  }
}

TYPED_TEST(MathUtilsTypedTest, LogSubEdgeCases) {
  using Real = TypeParam;
  const Real log_zero = -std::numeric_limits<Real>::infinity();
  EXPECT_EQ(LogSub(Real(2), Real(2)), log_zero);
  EXPECT_EQ(LogSub(log_zero, log_zero), log_zero);
  EXPECT_EQ(LogSub(Real(2), log_zero), Real(2));
  EXPECT_NEAR(LogSub(Real(std::log(3.0)), Real(0)), std::log(2.0), 1e-6);
  EXPECT_THROW(LogSub(Real(1), Real(2)), Error);
}

TEST_F(MathUtilsTest, ApproxEqualIsRelative) {
  EXPECT_TRUE(ApproxEqual(1.0, 1.0));
  EXPECT_TRUE(ApproxEqual(1.0, 1.0015));      // 0.0015 <= 0.001 * 2.0015
  EXPECT_FALSE(ApproxEqual(1.0, 1.0025));     // 0.0025 >  0.001 * 2.0025
  EXPECT_TRUE(ApproxEqual(1e6, 1e6 + 1500));  // relative, not absolute
  EXPECT_FALSE(ApproxEqual(1e-6, 2e-6));
  EXPECT_TRUE(ApproxEqual(1.0, 1.1, 0.05));
  EXPECT_FALSE(ApproxEqual(1.0, 1.1, 0.01));
  EXPECT_TRUE(ApproxEqual(0.0, 0.0, 0.0));
  EXPECT_FALSE(ApproxEqual(0.0, 1e-30));  // zero has no relative neighbourhood
}

TEST_F(MathUtilsTest, ApproxEqualHandlesNonFiniteValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(ApproxEqual(inf, inf));
  EXPECT_TRUE(ApproxEqual(-inf, -inf));
  EXPECT_FALSE(ApproxEqual(inf, -inf));
  EXPECT_FALSE(ApproxEqual(inf, 1e308));
  EXPECT_FALSE(ApproxEqual(nan, nan));
  EXPECT_FALSE(ApproxEqual(nan, 1.0));
}

TEST_F(MathUtilsTest, ApproxEqualAcceptsMixedTypes) {
  float f = 0.5f;
  EXPECT_TRUE(ApproxEqual(f, 0.5));
  EXPECT_TRUE(ApproxEqual(1, 1.0005));
  EXPECT_TRUE(ApproxEqual(0.1f, 0.1, 1e-6));
  EXPECT_FALSE(ApproxEqual(0.1f, 0.1, 1e-9));  // float rounding shows at this tolerance
}

TEST_F(MathUtilsTest, AssertEqualThrowsWithBothValues) {
  EXPECT_NO_THROW(AssertEqual(1.0, 1.0001));
  EXPECT_NO_THROW(AssertEqual(2.0f, 2.5f, 0.2));
  try {
    AssertEqual(1.0, 1.5);
    FAIL() << "expected cuctx::Error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("1.5"), std::string::npos) << what;
    EXPECT_NE(what.find("0.001"), std::string::npos) << what;
  }
}

TEST_F(MathUtilsTest, RoundsUpToPowersOfTwo) {
  EXPECT_EQ(RoundUpToNearestPowerOfTwo(1), 1);
  EXPECT_EQ(RoundUpToNearestPowerOfTwo(2), 2);
  EXPECT_EQ(RoundUpToNearestPowerOfTwo(3), 4);
  EXPECT_EQ(RoundUpToNearestPowerOfTwo(255), 256);
  EXPECT_EQ(RoundUpToNearestPowerOfTwo(256), 256);
  EXPECT_EQ(RoundUpToNearestPowerOfTwo(257), 512);
  EXPECT_EQ(RoundUpToNearestPowerOfTwo(1 << 30), 1 << 30);
  EXPECT_THROW(RoundUpToNearestPowerOfTwo(0), Error);
  EXPECT_THROW(RoundUpToNearestPowerOfTwo(-4), Error);
  EXPECT_THROW(RoundUpToNearestPowerOfTwo((1 << 30) + 1), Error);
}

TEST_F(MathUtilsTest, DividesRoundingDown) {
  for (int32 a = -20; a <= 20; ++a) {
    for (int32 b : {-7, -3, -1, 1, 2, 5}) {
      EXPECT_EQ(DivideRoundingDown(a, b), static_cast<int32>(std::floor(double(a) / b)))
          << a << " / " << b;
    }
  }
  const int32 kMin = std::numeric_limits<int32>::min();
  EXPECT_EQ(DivideRoundingDown(kMin, 1), kMin);
  EXPECT_EQ(DivideRoundingDown(kMin, 2), kMin / 2);
  EXPECT_THROW(DivideRoundingDown(kMin, -1), Error);
  EXPECT_THROW(DivideRoundingDown(3, 0), Error);
}

TEST_F(MathUtilsTest, GcdIsPositive) {
  EXPECT_EQ(Gcd(12, 18), 6);
  EXPECT_EQ(Gcd(-12, 18), 6);
  EXPECT_EQ(Gcd(12, -18), 6);
  EXPECT_EQ(Gcd(-12, -18), 6);
  EXPECT_EQ(Gcd(0, 5), 5);
  EXPECT_EQ(Gcd(-5, 0), 5);
  EXPECT_EQ(Gcd(17, 5), 1);
  EXPECT_EQ(Gcd<uint32>(4000000000u, 6u), 2u);
  EXPECT_EQ(Gcd<int64>(int64(1) << 40, int64(1) << 35), int64(1) << 35);
  const int32 kMin = std::numeric_limits<int32>::min();
  EXPECT_EQ(Gcd(kMin, -1), 1);
  EXPECT_EQ(Gcd(kMin, 6), 2);
  EXPECT_THROW(Gcd(0, 0), Error);
  EXPECT_THROW(Gcd(kMin, 0), Error);
}

TEST_F(MathUtilsTest, LcmOfPositiveIntegers) {
  EXPECT_EQ(Lcm(4, 6), 12);
  EXPECT_EQ(Lcm(1, 7), 7);
  EXPECT_EQ(Lcm(9, 9), 9);
  EXPECT_EQ(Lcm<int64>(1 << 20, 3 << 20), int64(3) << 20);
  EXPECT_THROW(Lcm(0, 3), Error);
  EXPECT_THROW(Lcm(-2, 3), Error);
  EXPECT_THROW(Lcm(65536, 65537), Error);  // 2^32 + 2^16 overflows int32
}

TEST_F(MathUtilsTest, FactorizeMatchesTrialMultiplication) {
  for (int m = 1; m < 3000; ++m) {
    std::vector<int> factors{99};
    Factorize(m, &factors);
    int product = 1;
    for (size_t i = 0; i < factors.size(); ++i) {
      product *= factors[i];
      if (i > 0) {
        EXPECT_LE(factors[i - 1], factors[i]) << m;
      }
      for (int d = 2; d * d <= factors[i]; ++d) EXPECT_NE(factors[i] % d, 0) << factors[i];
    }
    EXPECT_EQ(product, m);
  }
  std::vector<int64> big;
  Factorize<int64>(2147483647LL * 6, &big);  // a large prime times 6
  EXPECT_EQ(big, (std::vector<int64>{2, 3, 2147483647LL}));
  std::vector<size_t> one{5};
  Factorize<size_t>(1, &one);
  EXPECT_TRUE(one.empty());
}

TEST_F(MathUtilsTest, FactorizeRefusesNonPositive) {
  std::vector<int> f;
  test::ExpectErrorContaining([&] { Factorize(0, &f); }, "m >= 1");
  test::ExpectErrorContaining([&] { Factorize(-6, &f); }, "m >= 1");
  test::ExpectErrorContaining([] { Factorize<int>(6, nullptr); }, "null");
}

TEST_F(MathUtilsTest, KaldiMacrosAndConstants) {
  const double zero = 0.0;
  EXPECT_TRUE(CUCTX_ISNAN(zero / zero));
  EXPECT_TRUE(CUCTX_ISINF(1.0 / zero));
  EXPECT_FALSE(CUCTX_ISFINITE(-1.0f / static_cast<float>(zero)));
  EXPECT_TRUE(CUCTX_ISFINITE(2.5));
  EXPECT_EQ(CUCTX_SQR(1 + 2), 9);
  EXPECT_DOUBLE_EQ(M_2PI, 2.0 * std::acos(-1.0));
  EXPECT_DOUBLE_EQ(M_LOG_2PI, std::log(2.0 * std::acos(-1.0)));
  EXPECT_EQ(1.0 + DBL_EPSILON / 2, 1.0);
  EXPECT_NE(1.0f + FLT_EPSILON, 1.0f);
  EXPECT_DOUBLE_EQ(Hypot(3.0, 4.0), 5.0);
  EXPECT_FLOAT_EQ(Hypot(3e30f, 4e30f), 5e30f);  // no overflow in the squares
}

}  // namespace
}  // namespace cuctx
