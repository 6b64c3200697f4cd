// tests/matrix/sp-matrix-extra-test.cc: SpMatrix AddMat2Vec/AddSmat2Sp vs dense products,
// Tridiagonalize/Qr similarity identities, Log/Exp inverse pair, and text extraction.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/vector.h"
#include "tests/matrix-testing.h"

#include <gtest/gtest.h>
#include <sstream>
#include <type_traits>

namespace cuctx {
namespace {

template <typename Real>
class SpMatrixExtraTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SpMatrixExtraTest, RealTypes);

// Decompositions and n-term products: rounding grows with n (float: ~n * eps).
template <typename Real>
double DecompTol() {
  return std::is_same<Real, float>::value ? 1e-4 : 1e-10;
}

template <typename Real>
SpMatrix<Real> RandSp(MatrixIndexT n, test::Rng* rng) {
  return SpMatrix<Real>(test::GaussMatrix<Real>(n, n, rng), kTakeMean);
}

// The dense reference beta * S + alpha * op(M) X op(M)^T in double.
template <typename Real>
Matrix<double> SandwichRef(double alpha, const MatrixBase<Real>& M, MatrixTransposeType t,
                           const MatrixBase<double>& X, double beta, const SpMatrix<Real>& S) {
  Matrix<double> m(M, t), mx(m.NumRows(), X.NumCols()), out{Matrix<Real>(S)};
  mx.AddMatMat(1.0, m, kNoTrans, X, kNoTrans, 0.0);
  out.AddMatMat(alpha, mx, kNoTrans, m, kTrans, beta);
  return out;
}

TYPED_TEST(SpMatrixExtraTest, AddMat2VecMatchesDenseSandwich) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType t : {kNoTrans, kTrans})
    for (int k : {1, 4, 9}) {
      Matrix<Real> M =
          t == kNoTrans ? test::GaussMatrix<Real>(5, k, &rng) : test::GaussMatrix<Real>(k, 5, &rng);
      Vector<Real> v = test::RandomVector<Real>(k, &rng);
      SpMatrix<Real> S = RandSp<Real>(5, &rng);
      Matrix<double> diag(k, k);
      diag.CopyDiagFromVec(Vector<double>(v));
      Matrix<double> expected = SandwichRef(0.5, M, t, diag, 2.0, S);
      S.AddMat2Vec(0.5, M, t, v, 2.0);
      EXPECT_TRUE(test::ExpectNear(Matrix<Real>(S), expected, DecompTol<Real>()));
    }
  SpMatrix<Real> S(5);
  Matrix<Real> M(5, 3);
  Vector<Real> v(4);
  EXPECT_THROW(S.AddMat2Vec(1.0, M, kNoTrans, v), Error);
}

TYPED_TEST(SpMatrixExtraTest, AddSmat2SpMatchesDenseSandwichAndAllowsAliasing) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType t : {kNoTrans, kTrans}) {
    Matrix<Real> M = test::GaussMatrix<Real>(6, 6, &rng);
    SpMatrix<Real> A = RandSp<Real>(6, &rng), S = RandSp<Real>(6, &rng);
    Matrix<double> expected = SandwichRef(0.7, M, t, Matrix<double>(Matrix<Real>(A)), 0.2, S);
    S.AddSmat2Sp(0.7, M, t, A, 0.2);
    EXPECT_TRUE(test::ExpectNear(Matrix<Real>(S), expected, DecompTol<Real>()));
    // A is *this.
    SpMatrix<Real> B(A);
    Matrix<double> expected2 = SandwichRef(1.0, M, t, Matrix<double>(Matrix<Real>(A)), 0.0, A);
    B.AddSmat2Sp(1.0, M, t, B);
    EXPECT_TRUE(test::ExpectNear(Matrix<Real>(B), expected2, DecompTol<Real>()));
  }
  SpMatrix<Real> S(4), A(3);
  Matrix<Real> M(4, 2);
  EXPECT_THROW(S.AddSmat2Sp(1.0, M, kNoTrans, A), Error);
}

// max |Q Q^T - I|.
template <typename Real>
::testing::AssertionResult IsOrthogonal(const MatrixBase<Real>& Q, double tol) {
  Matrix<double> q(Q), qqt(Q.NumRows(), Q.NumRows());
  qqt.AddMatMat(1.0, q, kNoTrans, q, kTrans, 0.0);
  Matrix<double> eye(Q.NumRows(), Q.NumRows());
  eye.SetUnit();
  return test::ExpectNear(qqt, eye, tol);
}

TYPED_TEST(SpMatrixExtraTest, TridiagonalizeAndQrAreOrthogonalSimilarities) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 2, 7, 23}) {
    SCOPED_TRACE(n);
    SpMatrix<Real> S = RandSp<Real>(n, &rng), T(S);
    Matrix<Real> Q(n, n);
    T.Tridiagonalize(&Q);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c + 1 < r; ++c) EXPECT_EQ(T(r, c), Real(0));
    EXPECT_TRUE(IsOrthogonal(Q, DecompTol<Real>()));
    // S == Q^T T Q and T == Q S Q^T.
    Matrix<double> q(Q), s{Matrix<Real>(S)}, t{Matrix<Real>(T)}, tmp(n, n), rec(n, n);
    tmp.AddMatMat(1.0, t, kNoTrans, q, kNoTrans, 0.0);
    rec.AddMatMat(1.0, q, kTrans, tmp, kNoTrans, 0.0);
    EXPECT_TRUE(test::ExpectNear(rec, s, DecompTol<Real>()));

    SpMatrix<Real> D(T);
    D.Qr(&Q);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < r; ++c) EXPECT_EQ(D(r, c), Real(0));
    for (int i = 0; i + 1 < n; ++i) EXPECT_LE(D(i, i), D(i + 1, i + 1));
    EXPECT_TRUE(IsOrthogonal(Q, DecompTol<Real>()));
    Matrix<double> q2(Q), d{Matrix<Real>(D)};
    tmp.AddMatMat(1.0, d, kNoTrans, q2, kNoTrans, 0.0);
    rec.AddMatMat(1.0, q2, kTrans, tmp, kNoTrans, 0.0);
    EXPECT_TRUE(test::ExpectNear(rec, s, DecompTol<Real>()));
    EXPECT_TRUE(test::ScalarNear(D.Trace(), S.Trace(), DecompTol<Real>() * (n + 1)));
  }
}

TYPED_TEST(SpMatrixExtraTest, TridiagonalizeAndQrWithoutQ) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  SpMatrix<Real> S = RandSp<Real>(6, &rng), T(S), T2(S);
  Matrix<Real> Q(6, 6);
  T.Tridiagonalize(nullptr);
  T2.Tridiagonalize(&Q);
  EXPECT_TRUE(test::ExpectNear(Matrix<Real>(T), Matrix<Real>(T2), test::Tol<Real>()));
  T.Qr(nullptr);
  T2.Qr(&Q);
  EXPECT_TRUE(test::ExpectNear(Matrix<Real>(T), Matrix<Real>(T2), DecompTol<Real>()));
}

TYPED_TEST(SpMatrixExtraTest, TridiagonalizeAndQrRejectBadInput) {
  using Real = TypeParam;
  SpMatrix<Real> S(4);
  S.SetUnit();
  Matrix<Real> wrong(3, 4);
  EXPECT_THROW(S.Tridiagonalize(&wrong), Error);
  EXPECT_THROW(S.Qr(&wrong), Error);
  S(3, 0) = 1;  // not tridiagonal
  EXPECT_THROW(S.Qr(nullptr), Error);
}

TYPED_TEST(SpMatrixExtraTest, LogInvertsExpAndHalfLogIsTheSquareRoot) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 3, 12}) {
    SCOPED_TRACE(n);
    Matrix<Real> M = test::GaussMatrix<Real>(n, n, &rng);
    SpMatrix<Real> A(n);
    A.AddMat2(1.0 / (n + 1), M, kNoTrans, 0.0);
    A.AddToDiag(0.5);  // positive definite
    SpMatrix<Real> B(A);
    B.Log();
    B.Exp();
    EXPECT_TRUE(test::ExpectNear(Matrix<Real>(B), Matrix<Real>(A), DecompTol<Real>()));
    SpMatrix<Real> root(A);
    root.Log();
    root.Scale(0.5);
    root.Exp();
    SpMatrix<Real> sq(n);
    sq.AddMat2(1.0, Matrix<Real>(root), kNoTrans, 0.0);
    EXPECT_TRUE(test::ExpectNear(Matrix<Real>(sq), Matrix<Real>(A), DecompTol<Real>()));
  }
}

TYPED_TEST(SpMatrixExtraTest, ExpOfDiagonalIsElementwiseAndLogRejectsIndefinite) {
  using Real = TypeParam;
  SpMatrix<Real> D(3);
  D(0, 0) = -1;
  D(1, 1) = 0;
  D(2, 2) = 2;
  SpMatrix<Real> E(D);
  E.Exp();
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(test::ScalarNear(E(i, i), std::exp(double(D(i, i))), test::Tol<Real>()));
  EXPECT_EQ(E(1, 0), Real(0));
  EXPECT_THROW(D.Log(), Error);
}

TYPED_TEST(SpMatrixExtraTest, StreamExtractionReadsText) {
  using Real = TypeParam;
  std::istringstream is("[\n1 \n2 3 ]\n");
  SpMatrix<Real> S;
  is >> S;
  ASSERT_EQ(S.NumRows(), 2);
  EXPECT_EQ(S(0, 0), Real(1));
  EXPECT_EQ(S(0, 1), Real(2));
  EXPECT_EQ(S(1, 1), Real(3));
  std::istringstream bad("[ 1 2 ]");
  EXPECT_THROW(bad >> S, Error);
}

}  // namespace
}  // namespace cuctx
