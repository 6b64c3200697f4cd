// tests/matrix/matrix-exponential-test.cc: MatrixExponential vs a long Taylor sum, vs exp of the
// eigenvalues for symmetric input, exp(A) exp(-A) == I, and Backprop vs finite differences.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix-functions.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "tests/matrix-testing.h"

#include <gtest/gtest.h>
#include <type_traits>

namespace cuctx {
namespace {

template <typename Real>
class MatrixExponentialTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixExponentialTest, RealTypes);

// Squarings amplify rounding by about the number of squarings times ||exp(M)||.
template <typename Real>
double ExpTol() {
  return std::is_same<Real, float>::value ? 1e-5 : 1e-13;
}

// sum_{k<60} M^k / k! in double: exact to rounding for ||M|| <= 1.
Matrix<double> TaylorReference(const Matrix<double>& M) {
  const MatrixIndexT n = M.NumRows();
  Matrix<double> sum(n, n), term(n, n), next(n, n);
  sum.SetUnit();
  term.SetUnit();
  for (int k = 1; k < 60; ++k) {
    next.AddMatMat(1.0 / k, term, kNoTrans, M, kNoTrans, 0.0);
    term.Swap(&next);
    sum.AddMat(1.0, term);
  }
  return sum;
}

TYPED_TEST(MatrixExponentialTest, MatchesTaylorSeriesForSmallNorm) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 2, 5, 16}) {
    Matrix<Real> M = test::RandomMatrix<Real>(n, n, &rng, -1.0 / (n + 1), 1.0 / (n + 1));
    Matrix<Real> X(n, n);
    MatrixExponential<Real> e;
    e.Compute(M, &X);
    EXPECT_TRUE(test::ExpectNear(X, TaylorReference(Matrix<double>(M)), ExpTol<Real>())) << n;
  }
}

TYPED_TEST(MatrixExponentialTest, MatchesExpOfEigenvaluesForSymmetricInput) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (double scale : {0.1, 1.0, 4.0}) {
    Matrix<Real> G = test::GaussMatrix<Real>(8, 8, &rng);
    SpMatrix<Real> S(G, kTakeMean);
    S.Scale(scale);
    Matrix<Real> M(S), X(8, 8);
    MatrixExponential<Real> e;
    e.Compute(M, &X);
    SpMatrix<Real> expected(S);
    expected.Exp();
    // The eigen route has its own rounding (about 10x that of the squarings at this norm).
    EXPECT_TRUE(test::ExpectNear(X, Matrix<Real>(expected), 100 * ExpTol<Real>())) << scale;
  }
}

TYPED_TEST(MatrixExponentialTest, ExpOfMinusMIsTheInverse) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> M = test::GaussMatrix<Real>(7, 7, &rng), minus(M), X(7, 7), Y(7, 7), XY(7, 7);
  minus.Scale(-1);
  MatrixExponential<Real> e;
  e.Compute(M, &X);
  e.Compute(minus, &Y);
  XY.AddMatMat(1.0, X, kNoTrans, Y, kNoTrans, 0.0);
  Matrix<Real> eye(7, 7);
  eye.SetUnit();
  // exp(M) of a Gaussian 7x7 has a condition number near 1e3 (float: ~1e3 eps).
  EXPECT_TRUE(test::ExpectNear(XY, eye, std::is_same<Real, float>::value ? 1e-3 : 1e-10));
}

TEST(MatrixExponentialDoubleTest, BackpropMatchesFiniteDifferences) {
  test::Rng rng = test::MakeRng();
  for (double scale : {0.2, 3.0}) {  // no squarings / several squarings
    const int n = 5;
    Matrix<double> M = test::GaussMatrix<double>(n, n, &rng);
    Matrix<double> W = test::GaussMatrix<double>(n, n, &rng);
    M.Scale(scale);
    // f(M) = sum_ij W(i, j) exp(M)(i, j), so df/dX = W.
    MatrixExponential<double> e;
    Matrix<double> X(n, n), hM(n, n);
    e.Compute(M, &X);
    e.Backprop(W, &hM);
    const double h = 1e-6;
    Matrix<double> numeric(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        Matrix<double> Mp(M), Mm(M), Xp(n, n), Xm(n, n);
        Mp(i, j) += h;
        Mm(i, j) -= h;
        MatrixExponential<double> ep, em;
        ep.Compute(Mp, &Xp);
        em.Compute(Mm, &Xm);
        numeric(i, j) = (TraceMatMat(W, Xp, kTrans) - TraceMatMat(W, Xm, kTrans)) / (2 * h);
      }
    // Central differences: truncation O(h^2) plus rounding O(eps ||X|| / h).
    EXPECT_TRUE(test::ExpectNear(hM, numeric, 1e-6)) << scale;
  }
}

TYPED_TEST(MatrixExponentialTest, BackpropMatchesDoublePrecision) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const int n = 6;
  Matrix<Real> M = test::GaussMatrix<Real>(n, n, &rng), W = test::GaussMatrix<Real>(n, n, &rng);
  M.Scale(2.0);
  MatrixExponential<Real> e;
  Matrix<Real> X(n, n), hM(n, n);
  e.Compute(M, &X);
  e.Backprop(W, &hM);
  MatrixExponential<double> ed;
  Matrix<double> Xd(n, n), hMd(n, n);
  ed.Compute(Matrix<double>(M), &Xd);
  ed.Backprop(Matrix<double>(W), &hMd);
  EXPECT_TRUE(test::ExpectNear(hM, hMd, 100 * ExpTol<Real>()));
}

TYPED_TEST(MatrixExponentialTest, RejectsMisuse) {
  using Real = TypeParam;
  MatrixExponential<Real> e;
  Matrix<Real> sq(3, 3), rect(3, 4), out(3, 3), out4(4, 4);
  EXPECT_THROW(e.Backprop(sq, &out), Error);  // no Compute yet
  EXPECT_THROW(e.Compute(rect, &out), Error);
  EXPECT_THROW(e.Compute(sq, &out4), Error);
  EXPECT_THROW(e.Compute(sq, &sq), Error);
  sq(1, 1) = std::numeric_limits<Real>::quiet_NaN();
  EXPECT_THROW(e.Compute(sq, &out), Error);
  sq(1, 1) = 0;
  e.Compute(sq, &out);
  EXPECT_THROW(e.Backprop(out4, &out), Error);
}

}  // namespace
}  // namespace cuctx
