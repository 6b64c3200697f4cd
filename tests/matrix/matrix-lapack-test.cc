// tests/matrix/matrix-lapack-test.cc: MatrixBase SVD, Eig, LogDet, Cond, Power and their helpers.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
class MatrixLapackTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixLapackTest, RealTypes);

// Iterative decompositions have a backward error of a modest multiple of n * epsilon, so their
// identities are checked 20x looser than element-wise ops.
template <typename Real>
double DecompTol() {
  return 20 * test::Tol<Real>();
}

// U diag(s) Vt in double.
template <typename Real>
Matrix<double> UsVt(const MatrixBase<Real>& U, const VectorBase<Real>& s,
                    const MatrixBase<Real>& Vt) {
  Matrix<double> us(U);
  us.MulColsVec(Vector<double>(s));
  Matrix<double> out(U.NumRows(), Vt.NumCols());
  if (s.Dim() > 0) out.AddMatMat(1.0, us, kNoTrans, Matrix<double>(Vt), kNoTrans, 0.0);
  return out;
}

// M^T M (columns orthonormal) or M M^T (rows orthonormal) compared with the identity.
template <typename Real>
::testing::AssertionResult Orthonormal(const MatrixBase<Real>& M, MatrixTransposeType cols,
                                       double tol) {
  const MatrixIndexT k = cols == kTrans ? M.NumCols() : M.NumRows();
  Matrix<double> g(k, k), unit(k, k);
  Matrix<double> m(M);
  if (k > 0 && M.NumRows() > 0 && M.NumCols() > 0)
    g.AddMatMat(1.0, m, cols, m, cols == kTrans ? kNoTrans : kTrans, 0.0);
  unit.SetUnit();
  return test::ExpectNear(g, unit, tol);
}

const std::vector<test::Shape> kSvdShapes = {{0, 0}, {0, 4}, {1, 1},   {5, 3},
                                             {3, 5}, {1, 7}, {17, 33}, {33, 17}};

TYPED_TEST(MatrixLapackTest, SvdReconstructsMatrixWithOrthonormalFactors) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& sh : kSvdShapes) {
    for (bool strided : {false, true}) {
      SCOPED_TRACE(::testing::Message() << sh << (strided ? " strided" : " packed"));
      const MatrixIndexT k = std::min(sh.rows, sh.cols);
      test::TestMatrix<Real> a(sh.rows, sh.cols, strided, &rng);
      const Matrix<Real> original(a.View());
      test::TestMatrix<Real> U(sh.rows, k, strided, &rng), Vt(k, sh.cols, !strided, &rng);
      Vector<Real> s(k);
      a.View().Svd(&s, &U.View(), &Vt.View());
      EXPECT_TRUE(test::SameElements(a.View(), original)) << "Svd must not change *this";
      EXPECT_TRUE(test::ExpectNear(UsVt(U.View(), s, Vt.View()), original, DecompTol<Real>()));
      EXPECT_TRUE(Orthonormal(U.View(), kTrans, DecompTol<Real>()));
      EXPECT_TRUE(Orthonormal(Vt.View(), kNoTrans, DecompTol<Real>()));
      for (MatrixIndexT i = 0; i < k; ++i) {
        EXPECT_GE(s(i), 0);
        if (i > 0) {
          EXPECT_GE(s(i - 1), s(i)) << "singular values must descend";
        }
      }
      EXPECT_TRUE(U.PaddingUnchanged());
      EXPECT_TRUE(Vt.PaddingUnchanged());
    }
  }
}

TYPED_TEST(MatrixLapackTest, SvdValuesAloneMatchFullSvdAndKnownDiagonal) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> a = test::RandomMatrix<Real>(9, 6, &rng);
  Vector<Real> s_full(6), s_only(6);
  Matrix<Real> U(9, 6), Vt(6, 6);
  a.Svd(&s_full, &U, &Vt);
  a.Svd(&s_only);
  EXPECT_TRUE(test::ExpectNear(s_only, s_full, DecompTol<Real>()));
  // Only U, or only Vt, requested.
  Vector<Real> s_u(6), s_vt(6);
  Matrix<Real> U2(9, 6), Vt2(6, 6);
  a.Svd(&s_u, &U2, nullptr);
  a.Svd(&s_vt, nullptr, &Vt2);
  EXPECT_TRUE(test::ExpectNear(s_u, s_full, DecompTol<Real>()));
  EXPECT_TRUE(test::ExpectNear(s_vt, s_full, DecompTol<Real>()));

  Matrix<Real> d(3, 3);
  d(0, 0) = 1;
  d(1, 1) = -3;
  d(2, 2) = 2;
  Vector<Real> s(3), expected(3);
  d.Svd(&s);
  expected(0) = 3;
  expected(1) = 2;
  expected(2) = 1;
  EXPECT_TRUE(test::ExpectNear(s, expected, test::Tol<Real>()));
}

TYPED_TEST(MatrixLapackTest, DestructiveSvdMatchesSvd) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& sh : {test::Shape{7, 4}, test::Shape{4, 7}}) {
    Matrix<Real> a = test::RandomMatrix<Real>(sh.rows, sh.cols, &rng);
    const MatrixIndexT k = std::min(sh.rows, sh.cols);
    Vector<Real> s(k), s2(k);
    Matrix<Real> U(sh.rows, k), Vt(k, sh.cols);
    a.Svd(&s2);
    Matrix<Real> b(a);
    b.DestructiveSvd(&s, &U, &Vt);
    EXPECT_TRUE(test::ExpectNear(s, s2, DecompTol<Real>())) << sh;
    EXPECT_TRUE(test::ExpectNear(UsVt(U, s, Vt), a, DecompTol<Real>())) << sh;
  }
}

TYPED_TEST(MatrixLapackTest, SvdThrowsOnWrongShapesOverlapAndNan) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> a = test::RandomMatrix<Real>(5, 3, &rng);
  Vector<Real> s(3), s_bad(5);
  Matrix<Real> U(5, 3), U_bad(5, 5), Vt(3, 3), Vt_bad(3, 5);
  test::ExpectErrorContaining([&] { a.Svd(&s_bad); }, "s has dimension 5");
  test::ExpectErrorContaining([&] { a.Svd(&s, &U_bad, &Vt); }, "but must be 5x3");
  test::ExpectErrorContaining([&] { a.Svd(&s, &U, &Vt_bad); }, "Vt is 3x5");
  Matrix<Real> wide = test::RandomMatrix<Real>(3, 5, &rng);
  Vector<Real> s3(3);
  Matrix<Real> U33(3, 3), Vt35(3, 5);
  EXPECT_NO_THROW(wide.Svd(&s3, &U33, &Vt35));
  test::ExpectErrorContaining([&] { wide.Svd(&s3, &U, &Vt35); }, "but must be 3x3");
  Matrix<Real> both(3, 6);
  SubMatrix<Real> left(both, 0, 3, 0, 3), right(both, 0, 3, 2, 3);
  Matrix<Real> sq = test::RandomMatrix<Real>(3, 3, &rng);
  test::ExpectErrorContaining([&] { sq.Svd(&s3, &left, &right); }, "overlap");
  a(2, 1) = std::numeric_limits<Real>::quiet_NaN();
  test::ExpectErrorContaining([&] { a.Svd(&s); }, "(2, 1) is nan");
  test::ExpectErrorContaining([&] { a.Svd(&s); }, "MatrixBase::Svd");
}

TYPED_TEST(MatrixLapackTest, CondAndMinSingularValueMatchSingularValues) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& sh : {test::Shape{1, 1}, test::Shape{6, 6}, test::Shape{4, 9}}) {
    Matrix<Real> a = test::RandomMatrix<Real>(sh.rows, sh.cols, &rng);
    Vector<Real> s(std::min(sh.rows, sh.cols));
    a.Svd(&s);
    EXPECT_TRUE(test::ScalarNear(a.Cond(), s(0) / s(s.Dim() - 1), DecompTol<Real>())) << sh;
    EXPECT_TRUE(test::ScalarNear(a.MinSingularValue(), s(s.Dim() - 1), DecompTol<Real>())) << sh;
  }
  Matrix<Real> singular(2, 2);
  singular(0, 0) = 1;
  EXPECT_EQ(singular.Cond(), static_cast<Real>(1.0e+100));  // Kaldi's value (inf in float).
  Matrix<Real> empty;
  test::ExpectErrorContaining([&] { empty.Cond(); }, "empty");
  test::ExpectErrorContaining([&] { empty.MinSingularValue(); }, "empty");
}

// log|det| and the sign by naive Gaussian elimination with partial pivoting, in double.
template <typename Real>
double NaiveLogDet(const MatrixBase<Real>& m, double* sign) {
  Matrix<double> a(m);
  const MatrixIndexT n = a.NumRows();
  double log_det = 0.0;
  *sign = 1.0;
  for (MatrixIndexT k = 0; k < n; ++k) {
    MatrixIndexT p = k;
    for (MatrixIndexT i = k + 1; i < n; ++i)
      if (std::abs(a(i, k)) > std::abs(a(p, k))) p = i;
    if (p != k) {
      for (MatrixIndexT j = 0; j < n; ++j) std::swap(a(k, j), a(p, j));
      *sign = -*sign;
    }
    log_det += std::log(std::abs(a(k, k)));
    if (a(k, k) < 0) *sign = -*sign;
    for (MatrixIndexT i = k + 1; i < n; ++i) {
      const double f = a(i, k) / a(k, k);
      for (MatrixIndexT j = k; j < n; ++j) a(i, j) -= f * a(k, j);
    }
  }
  return log_det;
}

TYPED_TEST(MatrixLapackTest, LogDetMatchesKnownMatricesAndEliminationReference) {
  using Real = TypeParam;
  Real sign = 0;
  Matrix<Real> a(2, 2);
  a(0, 0) = 2;
  a(0, 1) = 1;
  a(1, 0) = 1;
  a(1, 1) = 3;
  EXPECT_TRUE(test::ScalarNear(a.LogDet(&sign), std::log(5.0), test::Tol<Real>()));
  EXPECT_EQ(sign, 1);
  Matrix<Real> swap(2, 2);
  swap(0, 1) = 1;
  swap(1, 0) = 4;  // det = -4
  EXPECT_TRUE(test::ScalarNear(swap.LogDet(&sign), std::log(4.0), test::Tol<Real>()));
  EXPECT_EQ(sign, -1);
  Matrix<Real> singular(2, 2);
  singular(0, 0) = 1;
  singular(0, 1) = 2;
  singular(1, 0) = 2;
  singular(1, 1) = 4;
  EXPECT_EQ(singular.LogDet(&sign), -std::numeric_limits<Real>::infinity());
  EXPECT_EQ(sign, 0);
  Matrix<Real> empty;
  EXPECT_EQ(empty.LogDet(&sign), 0);
  EXPECT_EQ(sign, 1);

  test::Rng rng = test::MakeRng();
  for (MatrixIndexT n : {1, 7, 17}) {
    test::TestMatrix<Real> m(n, n, true, &rng);
    double expected_sign = 0;
    const double expected = NaiveLogDet(m.View(), &expected_sign);
    EXPECT_TRUE(test::ScalarNear(m.View().LogDet(&sign), expected, DecompTol<Real>())) << n;
    EXPECT_EQ(sign, expected_sign) << n;
    EXPECT_TRUE(test::ScalarNear(m.View().LogDet(), expected, DecompTol<Real>())) << n;
  }
  Matrix<Real> rect(2, 3);
  test::ExpectErrorContaining([&] { rect.LogDet(); }, "not square");
  a(1, 1) = std::numeric_limits<Real>::infinity();
  test::ExpectErrorContaining([&] { a.LogDet(); }, "(1, 1) is inf");
}

TYPED_TEST(MatrixLapackTest, EigSatisfiesAPEqualsPDForGeneralMatrices) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixIndexT n : {1, 2, 5, 17}) {
    test::TestMatrix<Real> a(n, n, true, &rng);
    Matrix<Real> P(n, n), D(n, n);
    Vector<Real> re(n), im(n);
    a.View().Eig(&P, &re, &im);
    CreateEigenvalueMatrix(re, im, &D);
    Matrix<double> ap(n, n), pd(n, n);
    ap.AddMatMat(1.0, Matrix<double>(a.View()), kNoTrans, Matrix<double>(P), kNoTrans, 0.0);
    pd.AddMatMat(1.0, Matrix<double>(P), kNoTrans, Matrix<double>(D), kNoTrans, 0.0);
    EXPECT_TRUE(test::ExpectNear(ap, pd, DecompTol<Real>())) << n;
    // A random matrix is diagonalizable: A = P D P^-1.
    Matrix<double> p_inv(P);
    p_inv.Invert();
    Matrix<double> rebuilt(n, n);
    rebuilt.AddMatMat(1.0, pd, kNoTrans, p_inv, kNoTrans, 0.0);
    EXPECT_TRUE(test::ExpectNear(rebuilt, a.View(), 10 * DecompTol<Real>())) << n;
    // Without P the eigenvalues are the same.
    Vector<Real> re2(n), im2(n);
    a.View().Eig(nullptr, &re2, &im2);
    EXPECT_TRUE(test::ExpectNear(re2, re, DecompTol<Real>()));
    EXPECT_TRUE(test::ExpectNear(im2, im, DecompTol<Real>()));
  }
}

TYPED_TEST(MatrixLapackTest, EigOfRotationGivesConjugatePairPositiveImaginaryFirst) {
  using Real = TypeParam;
  // [[0, -2], [2, 0]] has eigenvalues +-2i.
  Matrix<Real> a(2, 2);
  a(0, 1) = -2;
  a(1, 0) = 2;
  Matrix<Real> P(2, 2), D(2, 2);
  Vector<Real> re(2), im(2);
  a.Eig(&P, &re, &im);
  EXPECT_NEAR(re(0), 0, test::Tol<Real>());
  EXPECT_NEAR(re(1), 0, test::Tol<Real>());
  EXPECT_NEAR(im(0), 2, 2 * test::Tol<Real>());
  EXPECT_NEAR(im(1), -2, 2 * test::Tol<Real>());
  CreateEigenvalueMatrix(re, im, &D);
  EXPECT_NEAR(D(0, 1), 2, 2 * test::Tol<Real>());
  EXPECT_NEAR(D(1, 0), -2, 2 * test::Tol<Real>());
  Matrix<Real> ap(2, 2), pd(2, 2);
  ap.AddMatMat(1.0, a, kNoTrans, P, kNoTrans, 0.0);
  pd.AddMatMat(1.0, P, kNoTrans, D, kNoTrans, 0.0);
  EXPECT_TRUE(test::ExpectNear(ap, pd, DecompTol<Real>()));
}

TYPED_TEST(MatrixLapackTest, EigThrowsOnMisuse) {
  using Real = TypeParam;
  Matrix<Real> rect(2, 3), a(3, 3), P_bad(3, 2);
  Vector<Real> re(3), re_bad(2);
  test::ExpectErrorContaining([&] { rect.Eig(nullptr, nullptr, nullptr); }, "not square");
  test::ExpectErrorContaining([&] { a.Eig(&P_bad, &re, nullptr); }, "P is 3x2");
  test::ExpectErrorContaining([&] { a.Eig(nullptr, &re_bad, nullptr); }, "eigs_real");
  test::ExpectErrorContaining([&] { a.Eig(nullptr, nullptr, &re_bad); }, "eigs_imag");
  a(0, 2) = std::numeric_limits<Real>::quiet_NaN();
  test::ExpectErrorContaining([&] { a.Eig(nullptr, &re, nullptr); }, "MatrixBase::Eig");
  Matrix<Real> empty;
  EXPECT_NO_THROW(empty.Eig(nullptr, nullptr, nullptr));
}

// A random symmetric positive definite n x n matrix (B B^T + n I).
template <typename Real>
Matrix<Real> RandomSpd(MatrixIndexT n, test::Rng* rng) {
  Matrix<Real> b = test::RandomMatrix<Real>(n, n, rng);
  Matrix<Real> a(n, n);
  a.AddMatMat(1.0, b, kNoTrans, b, kTrans, 0.0);
  a.AddToDiag(n);
  return a;
}

TYPED_TEST(MatrixLapackTest, PowerHalfSquaredGivesBackSpdMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixIndexT n : {1, 4, 13}) {
    const Matrix<Real> a = RandomSpd<Real>(n, &rng);
    Matrix<Real> root(a);
    ASSERT_TRUE(root.Power(0.5));
    Matrix<Real> sq(n, n);
    sq.AddMatMat(1.0, root, kNoTrans, root, kNoTrans, 0.0);
    EXPECT_TRUE(test::ExpectNear(sq, a, DecompTol<Real>())) << n;
    Matrix<Real> inv(a), expected(a);
    ASSERT_TRUE(inv.Power(-1));
    expected.Invert();
    EXPECT_TRUE(test::ExpectNear(inv, expected, DecompTol<Real>())) << n;
  }
}

TYPED_TEST(MatrixLapackTest, PowerOfRotationHalvesTheAngle) {
  using Real = TypeParam;
  auto rotation = [](double theta) {
    Matrix<Real> r(2, 2);
    r(0, 0) = std::cos(theta);
    r(0, 1) = -std::sin(theta);
    r(1, 0) = std::sin(theta);
    r(1, 1) = std::cos(theta);
    return r;
  };
  const double pi = std::acos(-1.0);
  Matrix<Real> r = rotation(pi / 3);
  ASSERT_TRUE(r.Power(0.5));
  EXPECT_TRUE(test::ExpectNear(r, rotation(pi / 6), DecompTol<Real>()));
}

TYPED_TEST(MatrixLapackTest, PowerReturnsFalseAndKeepsMatrixForNegativeOrZeroEigenvalues) {
  using Real = TypeParam;
  Matrix<Real> a(2, 2);
  a(0, 0) = -1;
  a(1, 1) = 4;
  const Matrix<Real> original(a);
  EXPECT_FALSE(a.Power(0.5));
  EXPECT_TRUE(test::SameElements(a, original));
  Matrix<Real> z(2, 2);
  z(0, 0) = 1;
  EXPECT_FALSE(z.Power(-0.5));
  EXPECT_TRUE(z.Power(2.0));  // A zero eigenvalue to a positive power is fine.
  EXPECT_NEAR(z(0, 0), 1, test::Tol<Real>());
  Matrix<Real> rect(2, 3), empty;
  test::ExpectErrorContaining([&] { rect.Power(0.5); }, "not square");
  EXPECT_TRUE(empty.Power(0.5));
}

TYPED_TEST(MatrixLapackTest, AttemptComplexPowerUsesPrincipalBranch) {
  using Real = TypeParam;
  Real re = 0, im = 4;  // 4i = 4 e^{i pi/2}; sqrt is 2 e^{i pi/4}.
  ASSERT_TRUE(AttemptComplexPower(&re, &im, Real(0.5)));
  EXPECT_NEAR(re, std::sqrt(2.0), 4 * test::Tol<Real>());
  EXPECT_NEAR(im, std::sqrt(2.0), 4 * test::Tol<Real>());
  Real neg = -2, zero_im = 0;
  EXPECT_FALSE(AttemptComplexPower(&neg, &zero_im, Real(2)));
  EXPECT_EQ(neg, -2);
  Real z_re = 0, z_im = 0;
  EXPECT_FALSE(AttemptComplexPower(&z_re, &z_im, Real(-1)));
}

TYPED_TEST(MatrixLapackTest, SortSvdOrdersByMagnitudeOrValueAndMovesVectors) {
  using Real = TypeParam;
  Vector<Real> s(3);
  s(0) = 1;
  s(1) = -5;
  s(2) = 3;
  Matrix<Real> U(2, 3), Vt(3, 2);
  for (MatrixIndexT j = 0; j < 3; ++j) {
    U(0, j) = U(1, j) = j;
    Vt(j, 0) = Vt(j, 1) = 10 * j;
  }
  Vector<Real> by_abs(s), by_value(s);
  Matrix<Real> U2(U), Vt2(Vt);
  SortSvd(&by_abs, &U, &Vt);
  EXPECT_EQ(by_abs(0), -5);
  EXPECT_EQ(by_abs(1), 3);
  EXPECT_EQ(by_abs(2), 1);
  EXPECT_EQ(U(1, 0), 1);
  EXPECT_EQ(U(0, 1), 2);
  EXPECT_EQ(Vt(0, 1), 10);
  EXPECT_EQ(Vt(2, 0), 0);
  SortSvd(&by_value, &U2, &Vt2, false);
  EXPECT_EQ(by_value(0), 3);
  EXPECT_EQ(by_value(2), -5);
  EXPECT_EQ(U2(0, 2), 1);
  Matrix<Real> U_bad(2, 2);
  test::ExpectErrorContaining([&] { SortSvd(&s, &U_bad); }, "SortSvd");
}

TYPED_TEST(MatrixLapackTest, CreateEigenvalueMatrixRejectsUnpairedComplexValue) {
  using Real = TypeParam;
  Vector<Real> re(2), im(2);
  im(0) = 1;
  im(1) = 1;  // Not the conjugate.
  Matrix<Real> D(2, 2);
  test::ExpectErrorContaining([&] { CreateEigenvalueMatrix(re, im, &D); }, "conjugate");
  Matrix<Real> D_bad(3, 3);
  test::ExpectErrorContaining([&] { CreateEigenvalueMatrix(re, im, &D_bad); }, "3x3");
}

TYPED_TEST(MatrixLapackTest, SymPosSemiDefEigReconstructsAndRejectsIndefinite) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> a = RandomSpd<Real>(6, &rng);
  Vector<Real> s(6);
  Matrix<Real> P(6, 6);
  a.SymPosSemiDefEig(&s, &P);
  EXPECT_TRUE(test::ExpectNear(UsVt(P, s, Matrix<Real>(P, kTrans)), a, DecompTol<Real>()));
  Matrix<Real> indefinite(2, 2);
  indefinite(0, 0) = 1;
  indefinite(1, 1) = -1;
  Vector<Real> s2(2);
  test::ExpectErrorContaining([&] { indefinite.SymPosSemiDefEig(&s2, nullptr); },
                              "not positive semidefinite");
}

}  // namespace
}  // namespace cuctx
