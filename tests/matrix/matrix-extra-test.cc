// tests/matrix/matrix-extra-test.cc: whole-matrix LogSumExp / ApplySoftMax, GroupPnormDeriv,
// AddOuterProductPlusMinus, TraceMat and Int32Pair ordering against direct references.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix-common.h"
#include "matrix/matrix-functions.h"
#include "matrix/matrix.h"
#include "tests/matrix-testing.h"
#include "tests/matrix/extra-testing.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
class MatrixExtraTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixExtraTest, RealTypes);

// log(sum of exp(x) over the elements x >= floor), in double.
template <typename Real>
double DirectLogSumExp(const MatrixBase<Real>& m, double floor) {
  double sum = 0.0;
  for (MatrixIndexT r = 0; r < m.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < m.NumCols(); ++c)
      if (m(r, c) >= floor) sum += std::exp(static_cast<double>(m(r, c)));
  return std::log(sum);
}

TYPED_TEST(MatrixExtraTest, LogSumExpMatchesDirectSum) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.rows == 0 || s.cols == 0) return;
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng, -5.0, 5.0);
    const double expected = DirectLogSumExp(m.View(), -1e300);
    EXPECT_TRUE(test::ScalarNear(m.View().LogSumExp(), expected, test::ProductTol<Real>()));
  });
}

TYPED_TEST(MatrixExtraTest, LogSumExpIsStableForLargeValues) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(7, 9, &rng, -3.0, 3.0);
  const double base = DirectLogSumExp(m, -1e300);
  m.Add(1000);  // exp(1000) overflows in double, so the sum must be taken relative to the max.
  EXPECT_TRUE(test::ScalarNear(m.LogSumExp(), 1000 + base, test::Tol<Real>()));
  m.Add(-2000);
  EXPECT_TRUE(test::ScalarNear(m.LogSumExp(), -1000 + base, test::Tol<Real>()));
}

TYPED_TEST(MatrixExtraTest, LogSumExpWithPruneIgnoresTermsBelowMaxMinusPrune) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(13, 11, &rng, -4.0, 4.0);
  const double max = m.Max();
  for (Real prune : {Real(0.5), Real(1.5), Real(6.0)}) {
    const double expected = DirectLogSumExp(m, max - prune);
    EXPECT_TRUE(test::ScalarNear(m.LogSumExp(prune), expected, test::ProductTol<Real>()))
        << "prune " << prune;
  }
  // prune <= 0 does not prune.
  EXPECT_TRUE(
      test::ScalarNear(m.LogSumExp(0), DirectLogSumExp(m, -1e300), test::ProductTol<Real>()));
}

TYPED_TEST(MatrixExtraTest, LogSumExpOfInfiniteMaximumIsThatMaximum) {
  using Real = TypeParam;
  Matrix<Real> m(2, 2);
  m(1, 0) = std::numeric_limits<Real>::infinity();
  EXPECT_EQ(m.LogSumExp(), std::numeric_limits<Real>::infinity());
}

TYPED_TEST(MatrixExtraTest, SoftMaxOverAllElementsMatchesDefinition) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.rows == 0 || s.cols == 0) return;
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng, -10.0, 10.0);
    const double lse = DirectLogSumExp(m.View(), -1e300);
    Matrix<double> expected = test::ToDouble(m.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) expected(r, c) = std::exp(expected(r, c) - lse);
    const Real returned = m.View().ApplySoftMax();
    EXPECT_TRUE(test::ScalarNear(returned, lse, test::ProductTol<Real>()));
    EXPECT_TRUE(test::ExpectNear(m.View(), expected, test::ProductTol<Real>()));
    EXPECT_NEAR(m.View().Sum(), 1.0, test::ProductTol<Real>());
    EXPECT_TRUE(m.PaddingUnchanged());
  });
}

TYPED_TEST(MatrixExtraTest, LogSumExpAndSoftMaxThrowOnEmpty) {
  using Real = TypeParam;
  Matrix<Real> empty(0, 3);
  test::ExpectErrorContaining([&] { empty.LogSumExp(); }, "LogSumExp: empty matrix 0x3");
  test::ExpectErrorContaining([&] { empty.ApplySoftMax(); }, "ApplySoftMax: empty matrix 0x3");
}

// GroupPnorm of one group in double (the function GroupPnormDeriv differentiates).
double GroupNorm(const std::vector<double>& x, double p) {
  double s = 0;
  for (double v : x) s += std::pow(std::abs(v), p);
  return std::pow(s, 1.0 / p);
}

TYPED_TEST(MatrixExtraTest, GroupPnormDerivMatchesFiniteDifferences) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const MatrixIndexT rows = 5, groups = 4, group = 3;
  for (double p : {2.0, 3.0, 1.5}) {
    Matrix<Real> in = test::RandomMatrix<Real>(rows, groups * group, &rng, 0.2, 1.0);
    for (MatrixIndexT r = 0; r < rows; ++r)  // some negative inputs
      in(r, r) = -in(r, r);
    Matrix<Real> out(rows, groups);
    out.GroupPnorm(in, static_cast<Real>(p));
    Matrix<Real> deriv(rows, groups * group);
    deriv.GroupPnormDeriv(in, out, static_cast<Real>(p));
    Matrix<double> expected(rows, groups * group);
    const double h = 1e-6;
    for (MatrixIndexT r = 0; r < rows; ++r)
      for (MatrixIndexT c = 0; c < groups * group; ++c) {
        const MatrixIndexT g = c / group;
        std::vector<double> x(group);
        for (MatrixIndexT j = 0; j < group; ++j) x[j] = in(r, g * group + j);
        std::vector<double> xp = x, xm = x;
        xp[c % group] += h;
        xm[c % group] -= h;
        expected(r, c) = (GroupNorm(xp, p) - GroupNorm(xm, p)) / (2 * h);
      }
    // The float result uses a float norm, so it is as accurate as that norm (about 1e-6 relative,
    // amplified by the power); the double one is limited by the difference quotient (~1e-9).
    const double tol = sizeof(Real) == 4 ? 1e-4 : 1e-8;
    EXPECT_TRUE(test::ExpectNear(deriv, expected, tol)) << "power " << p;
  }
}

TYPED_TEST(MatrixExtraTest, GroupPnormDerivOfOneAndInfinityNorms) {
  using Real = TypeParam;
  Matrix<Real> in(1, 4);
  in(0, 0) = -2;
  in(0, 1) = 0;
  in(0, 2) = 3;
  in(0, 3) = -3;
  Matrix<Real> out(1, 2), deriv(1, 4);
  out.GroupPnorm(in, 1);
  deriv.GroupPnormDeriv(in, out, 1);  // sign(x), 0 at 0
  EXPECT_EQ(deriv(0, 0), -1);
  EXPECT_EQ(deriv(0, 1), 0);
  EXPECT_EQ(deriv(0, 2), 1);
  EXPECT_EQ(deriv(0, 3), -1);
  const Real inf = std::numeric_limits<Real>::infinity();
  out.GroupPnorm(in, inf);              // (2, 3)
  deriv.GroupPnormDeriv(in, out, inf);  // sign(x) where |x| is the group maximum
  EXPECT_EQ(deriv(0, 0), -1);
  EXPECT_EQ(deriv(0, 1), 0);
  EXPECT_EQ(deriv(0, 2), 1);
  EXPECT_EQ(deriv(0, 3), -1);
  // A zero group output gives a zero derivative (power != 1).
  Matrix<Real> zero_in(1, 2), zero_out(1, 1), d(1, 2);
  d.Set(5);
  d.GroupPnormDeriv(zero_in, zero_out, 2);
  EXPECT_TRUE(d.IsZero(0));
}

TYPED_TEST(MatrixExtraTest, GroupPnormDerivThrowsOnBadShapes) {
  using Real = TypeParam;
  Matrix<Real> in(2, 6), out(2, 4), d(2, 6), d_bad(3, 6), out_rows(3, 3);
  test::ExpectErrorContaining([&] { d.GroupPnormDeriv(in, out, 2); },
                              "6 input columns do not split into 4");
  test::ExpectErrorContaining([&] { d_bad.GroupPnormDeriv(in, out, 2); }, "GroupPnormDeriv");
  test::ExpectErrorContaining([&] { d.GroupPnormDeriv(in, out_rows, 2); }, "output rows");
  Matrix<Real> out_ok(2, 3);
  test::ExpectErrorContaining([&] { d.GroupPnormDeriv(in, out_ok, -1); }, "power = -1");
  // Empty shapes are no-ops.
  Matrix<Real> e_in(0, 4), e_out(0, 2), e_d(0, 4);
  e_d.GroupPnormDeriv(e_in, e_out, 2);
}

TYPED_TEST(MatrixExtraTest, AddOuterProductPlusMinusSplitsTheProductBySign) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : test::kEdgeShapes) {
    if (static_cast<int64>(s.rows) * s.cols > 20000) continue;
    Vector<Real> a = test::RandomVector<Real>(s.rows, &rng);
    Vector<Real> b = test::RandomVector<Real>(s.cols, &rng);
    Matrix<Real> plus = test::RandomMatrix<Real>(s.rows, s.cols, &rng, 0, 1);
    Matrix<Real> minus = test::RandomMatrix<Real>(s.rows, s.cols, &rng, 0, 1);
    Matrix<double> want_plus = test::ToDouble(plus), want_minus = test::ToDouble(minus);
    const double alpha = -0.75;
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) {
        const double v = alpha * a(r) * b(c);
        (v > 0 ? want_plus(r, c) : want_minus(r, c)) += std::abs(v);
      }
    AddOuterProductPlusMinus(static_cast<Real>(alpha), a, b, &plus, &minus);
    EXPECT_TRUE(test::ExpectNear(plus, want_plus, test::Tol<Real>())) << s;
    EXPECT_TRUE(test::ExpectNear(minus, want_minus, test::Tol<Real>())) << s;
  }
}

TYPED_TEST(MatrixExtraTest, AddOuterProductPlusMinusThrowsOnMisuse) {
  using Real = TypeParam;
  Vector<Real> a(3), b(4);
  Matrix<Real> plus(3, 4), minus(3, 4), wrong(4, 3);
  test::ExpectErrorContaining([&] { AddOuterProductPlusMinus<Real>(1, a, b, &wrong, &minus); },
                              "shape mismatch");
  test::ExpectErrorContaining([&] { AddOuterProductPlusMinus<Real>(1, a, b, &plus, &plus); },
                              "overlaps");
  SubVector<Real> row(plus, 0);
  Vector<Real> a3(3);
  test::ExpectErrorContaining([&] { AddOuterProductPlusMinus<Real>(1, a3, row, &plus, &minus); },
                              "overlaps an output");
}

TYPED_TEST(MatrixExtraTest, TraceMatIsTheTraceInDouble) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(6, 6, &rng);
  double expected = 0;
  for (MatrixIndexT i = 0; i < 6; ++i) expected += m(i, i);
  const double got = TraceMat(m);
  EXPECT_TRUE(test::ScalarNear(got, expected, test::Tol<Real>()));
  Matrix<Real> rect(2, 3);
  test::ExpectErrorContaining([&] { TraceMat(rect); }, "");
}

TEST(Int32PairTest, OrderIsLexicographic) {
  const Int32Pair a{1, 5}, b{2, 0}, c{1, 7}, d{1, 5};
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(a < c);
  EXPECT_FALSE(c < a);
  EXPECT_FALSE(a < d);
  EXPECT_FALSE(d < a);
  std::vector<Int32Pair> v = {{3, 1}, {-1, 4}, {3, 0}, {0, 9}, {-1, -2}};
  std::sort(v.begin(), v.end());
  const std::vector<std::pair<int, int>> want = {{-1, -2}, {-1, 4}, {0, 9}, {3, 0}, {3, 1}};
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].first, want[i].first);
    EXPECT_EQ(v[i].second, want[i].second);
  }
}

}  // namespace
}  // namespace cuctx
