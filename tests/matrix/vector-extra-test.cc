// tests/matrix/vector-extra-test.cc: VectorBase RandCategorical (sample frequencies),
// CopyRowFromSp, ApplyLogAndCopy, AddMatSvec, AddSpVec, AddVec across precisions and the packed
// SubVector view, against direct references.
// SPDX-License-Identifier: Apache-2.0
#include "base/random.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"
#include "tests/matrix-testing.h"
#include "tests/matrix/extra-testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <type_traits>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
class VectorExtraTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(VectorExtraTest, RealTypes);

TYPED_TEST(VectorExtraTest, RandCategoricalFrequenciesMatchTheWeights) {
  using Real = TypeParam;
  SetRandomSeed(test::Seed());
  Vector<Real> w(6);
  const double weights[] = {0.1, 0.0, 0.5, 0.4, 2.0, 1e-3};
  double total = 0;
  for (int i = 0; i < 6; ++i) total += (w(i) = static_cast<Real>(weights[i]));
  const int draws = 40000;
  std::vector<int> counts(6, 0);
  for (int d = 0; d < draws; ++d) {
    const MatrixIndexT i = w.RandCategorical();
    ASSERT_TRUE(i >= 0 && i < 6) << i;
    ++counts[i];
  }
  EXPECT_EQ(counts[1], 0) << "a zero weight was drawn";
  for (int i = 0; i < 6; ++i) {
    const double p = weights[i] / total;
    const double sd = std::sqrt(draws * p * (1 - p));
    EXPECT_LE(std::abs(counts[i] - draws * p), 6 * sd + 1) << "index " << i;
  }
}

TYPED_TEST(VectorExtraTest, RandCategoricalIsReproducibleAfterSeeding) {
  using Real = TypeParam;
  Vector<Real> w(5);
  w.Set(1);
  std::vector<MatrixIndexT> first, second;
  SetRandomSeed(7);
  for (int i = 0; i < 50; ++i) first.push_back(w.RandCategorical());
  SetRandomSeed(7);
  for (int i = 0; i < 50; ++i) second.push_back(w.RandCategorical());
  EXPECT_EQ(first, second);
}

TYPED_TEST(VectorExtraTest, RandCategoricalThrowsOnBadWeights) {
  using Real = TypeParam;
  Vector<Real> empty, zeros(3), neg(3);
  neg(1) = -0.5;
  neg(2) = 1;
  test::ExpectErrorContaining([&] { empty.RandCategorical(); }, "empty vector");
  test::ExpectErrorContaining([&] { zeros.RandCategorical(); }, "sum to 0");
  test::ExpectErrorContaining([&] { neg.RandCategorical(); }, "element 1 is -0.5");
  Vector<Real> nan(2);
  nan(0) = std::numeric_limits<Real>::quiet_NaN();
  test::ExpectErrorContaining([&] { nan.RandCategorical(); }, "element 0");
}

TYPED_TEST(VectorExtraTest, CopyRowFromSpReadsBothTriangles) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SpMatrix<double> sd = test::RandomSp<double>(7, &rng);
  const SpMatrix<Real> s(sd);
  for (MatrixIndexT row = 0; row < 7; ++row) {
    Vector<Real> v(7);
    v.CopyRowFromSp(s, row);
    Vector<Real> w(7);
    w.CopyRowFromSp(sd, row);  // other precision
    for (MatrixIndexT c = 0; c < 7; ++c) {
      EXPECT_EQ(v(c), s(row, c));
      EXPECT_EQ(w(c), static_cast<Real>(sd(row, c)));
    }
  }
  Vector<Real> v(7), short_v(3);
  test::ExpectErrorContaining([&] { v.CopyRowFromSp(s, 7); }, "row 7 out of range [0, 7)");
  test::ExpectErrorContaining([&] { short_v.CopyRowFromSp(s, 0); }, "dimension mismatch");
}

TYPED_TEST(VectorExtraTest, ApplyLogAndCopyIsElementwiseLog) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Vector<Real> v = test::RandomVector<Real>(33, &rng, 0.01, 10.0);
  Vector<double> expected(33);
  for (int i = 0; i < 33; ++i) expected(i) = std::log(static_cast<double>(v(i)));
  Vector<Real> out(33);
  out.ApplyLogAndCopy(v);
  EXPECT_TRUE(test::ExpectNear(out, expected, test::Tol<Real>()));
  Vector<Real> in_place(v);
  in_place.ApplyLogAndCopy(in_place);
  EXPECT_TRUE(test::ExpectNear(in_place, expected, test::Tol<Real>()));
  test::ExpectErrorContaining([&] { out.ApplyLogAndCopy(Vector<Real>(2)); }, "ApplyLogAndCopy");
  test::ExpectErrorContaining([&] { out.Range(0, 20).ApplyLogAndCopy(out.Range(1, 20)); },
                              "overlaps");
}

TYPED_TEST(VectorExtraTest, AddMatSvecMatchesDenseProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : test::kEdgeShapes)
    for (MatrixTransposeType t : {kNoTrans, kTrans})
      for (bool strided : {false, true}) {
        if (static_cast<long>(s.rows) * s.cols > 20000) continue;
        SCOPED_TRACE(::testing::Message() << s << " t=" << t << (strided ? " strided" : ""));
        test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
        const MatrixIndexT in_dim = t == kNoTrans ? s.cols : s.rows;
        const MatrixIndexT out_dim = t == kNoTrans ? s.rows : s.cols;
        Vector<Real> v(in_dim);  // mostly zeros
        for (MatrixIndexT i = 0; i < in_dim; ++i)
          if (rng.Uniform() < 0.3) v(i) = static_cast<Real>(rng.Uniform(-1, 1));
        Vector<Real> y = test::RandomVector<Real>(out_dim, &rng);
        Vector<double> expected(out_dim);
        const Matrix<double> op = test::Op(m.View(), t);
        for (MatrixIndexT i = 0; i < out_dim; ++i) {
          double sum = 0;
          for (MatrixIndexT j = 0; j < in_dim; ++j) sum += op(i, j) * v(j);
          expected(i) = -2.0 * y(i) + 0.5 * sum;
        }
        y.AddMatSvec(0.5, m.View(), t, v, -2.0);
        EXPECT_TRUE(test::ExpectNear(y, expected, test::ProductTol<Real>()));
      }
  Matrix<Real> m(3, 4);
  Vector<Real> v(3), y(3);
  test::ExpectErrorContaining([&] { y.AddMatSvec(1, m, kNoTrans, v, 0); },
                              "AddMatSvec: shape mismatch: op(M) is 3x4");
  Vector<Real> nan_y(3), v4(4);
  nan_y.Set(std::numeric_limits<Real>::quiet_NaN());
  nan_y.AddMatSvec(1, m, kNoTrans, v4, 0);  // beta 0 overwrites NaN
  EXPECT_TRUE(nan_y.IsZero(0));
}

TYPED_TEST(VectorExtraTest, AddSpVecMatchesDenseProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 7, 64}) {
    const SpMatrix<Real> s = test::RandomSp<Real>(n, &rng);
    const Vector<Real> v = test::RandomVector<Real>(n, &rng);
    Vector<Real> y = test::RandomVector<Real>(n, &rng);
    Vector<double> expected(n);
    for (int i = 0; i < n; ++i) {
      double sum = 0;
      for (int j = 0; j < n; ++j) sum += static_cast<double>(s(i, j)) * v(j);
      expected(i) = 0.25 * y(i) + 1.5 * sum;
    }
    y.AddSpVec(1.5, s, v, 0.25);
    EXPECT_TRUE(test::ExpectNear(y, expected, test::ProductTol<Real>())) << "n=" << n;
  }
  Vector<Real> y(3);
  test::ExpectErrorContaining([&] { y.AddSpVec(1, SpMatrix<Real>(4), y, 0); },
                              "AddSpVec: shape mismatch: M has size 4");
}

TYPED_TEST(VectorExtraTest, AddVecAcceptsTheOtherPrecision) {
  using Real = TypeParam;
  using Other = typename std::conditional<std::is_same<Real, float>::value, double, float>::type;
  test::Rng rng = test::MakeRng();
  const Vector<Other> v = test::RandomVector<Other>(17, &rng);
  Vector<Real> y = test::RandomVector<Real>(17, &rng);
  Vector<double> expected(17);
  for (int i = 0; i < 17; ++i) expected(i) = y(i) + 0.5 * static_cast<Real>(v(i));
  y.AddVec(0.5, v);
  EXPECT_TRUE(test::ExpectNear(y, expected, test::Tol<Real>()));
}

TYPED_TEST(VectorExtraTest, SubVectorOfPackedMatrixViewsTheStorage) {
  using Real = TypeParam;
  SpMatrix<Real> s(3);
  SubVector<Real> all(s);
  EXPECT_EQ(all.Dim(), 6);
  EXPECT_EQ(all.Data(), s.Data());
  all(4) = 7;  // storage index 4 is (2, 1)
  EXPECT_EQ(s(2, 1), 7);
  EXPECT_EQ(s(1, 2), 7);
  TpMatrix<Real> t(4);
  SubVector<Real> tv(t);
  EXPECT_EQ(tv.Dim(), 10);
  tv.Set(1);
  EXPECT_EQ(t.Sum(), 10);
  SpMatrix<Real> empty;
  EXPECT_EQ(SubVector<Real>(empty).Dim(), 0);
}

}  // namespace
}  // namespace cuctx
