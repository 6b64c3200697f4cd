// tests/matrix/sp-matrix-eig-test.cc: SpMatrix eigendecomposition, flooring, powers and LimitCond.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
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
class SpMatrixEigTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SpMatrixEigTest, RealTypes);

// Symmetric eigensolvers have a backward error of a modest multiple of n * epsilon: identities
// are checked 20x looser than element-wise ops.
template <typename Real>
double DecompTol() {
  return 20 * test::Tol<Real>();
}

// A random symmetric matrix with entries uniform in [-1, 1).
template <typename Real>
SpMatrix<Real> RandomSym(MatrixIndexT n, test::Rng* rng) {
  SpMatrix<Real> s(n);
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c) s(r, c) = static_cast<Real>(rng->Uniform(-1, 1));
  return s;
}

// A random orthogonal n x n matrix (the eigenvectors of a random symmetric matrix).
template <typename Real>
Matrix<Real> RandomOrthogonal(MatrixIndexT n, test::Rng* rng) {
  Vector<Real> s(n);
  Matrix<Real> Q(n, n);
  RandomSym<Real>(n, rng).Eig(&s, &Q);
  return Q;
}

// Q diag(l) Q^T in double.
template <typename Real>
Matrix<double> QlQt(const MatrixBase<Real>& Q, const VectorBase<Real>& l) {
  Matrix<double> q(Q), ql(Q);
  ql.MulColsVec(Vector<double>(l));
  Matrix<double> out(Q.NumRows(), Q.NumRows());
  if (l.Dim() > 0) out.AddMatMat(1.0, ql, kNoTrans, q, kTrans, 0.0);
  return out;
}

// The symmetric matrix Q diag(l) Q^T for a random orthogonal Q and the given eigenvalues.
template <typename Real>
SpMatrix<Real> WithEigenvalues(const std::vector<double>& eigs, test::Rng* rng) {
  const MatrixIndexT n = static_cast<MatrixIndexT>(eigs.size());
  Vector<Real> l(n);
  for (MatrixIndexT i = 0; i < n; ++i) l(i) = static_cast<Real>(eigs[i]);
  const Matrix<Real> full(QlQt(RandomOrthogonal<Real>(n, rng), l));
  return SpMatrix<Real>(full);
}

template <typename Real>
Matrix<double> Full(const SpMatrix<Real>& s) {
  Matrix<double> m(s.NumRows(), s.NumRows());
  s.CopyToMat(&m);
  return m;
}

TYPED_TEST(SpMatrixEigTest, EigReconstructsWithOrthogonalVectorsAndAscendingValues) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixIndexT n : {1, 2, 17, 64}) {
    const SpMatrix<Real> a = RandomSym<Real>(n, &rng);
    Vector<Real> s(n);
    test::TestMatrix<Real> P(n, n, true, &rng);
    a.Eig(&s, &P.View());
    EXPECT_TRUE(test::ExpectNear(QlQt(P.View(), s), Full(a), DecompTol<Real>())) << n;
    Matrix<double> ptp(n, n), unit(n, n);
    ptp.AddMatMat(1.0, Matrix<double>(P.View()), kTrans, Matrix<double>(P.View()), kNoTrans, 0.0);
    unit.SetUnit();
    EXPECT_TRUE(test::ExpectNear(ptp, unit, DecompTol<Real>())) << n;
    for (MatrixIndexT i = 1; i < n; ++i) EXPECT_LE(s(i - 1), s(i));
    EXPECT_TRUE(P.PaddingUnchanged());
    Vector<Real> s_only(n);
    a.Eig(&s_only);
    EXPECT_TRUE(test::ExpectNear(s_only, s, DecompTol<Real>())) << n;
  }
}

TYPED_TEST(SpMatrixEigTest, EigThrowsOnMisuseAndAcceptsEmpty) {
  using Real = TypeParam;
  SpMatrix<Real> a(3), empty;
  Vector<Real> s(3), s_bad(2), none;
  Matrix<Real> P_bad(3, 2);
  test::ExpectErrorContaining([&] { a.Eig(&s_bad); }, "s has dimension 2");
  test::ExpectErrorContaining([&] { a.Eig(&s, &P_bad); }, "P is 3x2");
  EXPECT_NO_THROW(empty.Eig(&none));
  a(2, 1) = std::numeric_limits<Real>::quiet_NaN();
  test::ExpectErrorContaining([&] { a.Eig(&s); }, "(2, 1) is nan");
}

TYPED_TEST(SpMatrixEigTest, TopEigsKeepsLargestMagnitudesInOrder) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SpMatrix<Real> a = WithEigenvalues<Real>({0.5, -9, 1, 4, -0.1, 7}, &rng);
  Vector<Real> s(3);
  Matrix<Real> P(6, 3);
  a.TopEigs(&s, &P);
  EXPECT_NEAR(s(0), -9, 10 * DecompTol<Real>());
  EXPECT_NEAR(s(1), 7, 10 * DecompTol<Real>());
  EXPECT_NEAR(s(2), 4, 10 * DecompTol<Real>());
  // Each column is an eigenvector: A p = s p.
  Matrix<double> ap(6, 3), ps(P);
  ap.AddMatMat(1.0, Full(a), kNoTrans, Matrix<double>(P), kNoTrans, 0.0);
  ps.MulColsVec(Vector<double>(s));
  EXPECT_TRUE(test::ExpectNear(ap, ps, DecompTol<Real>()));
  Vector<Real> too_many(7), none;
  Matrix<Real> P7(6, 7), P0(6, 0), P_bad(6, 2);
  test::ExpectErrorContaining([&] { a.TopEigs(&too_many, &P7); }, "asked for 7");
  test::ExpectErrorContaining([&] { a.TopEigs(&s, &P_bad); }, "P is 6x2");
  EXPECT_NO_THROW(a.TopEigs(&none, &P0));
}

TYPED_TEST(SpMatrixEigTest, SymPosSemiDefEigFloorsTinyNegativesAndRejectsIndefinite) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SpMatrix<Real> psd = WithEigenvalues<Real>({0, 1, 3, 2}, &rng);
  Vector<Real> s(4);
  Matrix<Real> P(4, 4);
  psd.SymPosSemiDefEig(&s, &P);
  EXPECT_GE(s.Min(), 0);
  EXPECT_TRUE(test::ExpectNear(QlQt(P, s), Full(psd), DecompTol<Real>()));
  const SpMatrix<Real> indefinite = WithEigenvalues<Real>({-1, 1, 3, 2}, &rng);
  test::ExpectErrorContaining([&] { indefinite.SymPosSemiDefEig(&s, nullptr); },
                              "not positive semidefinite");
  EXPECT_NO_THROW(indefinite.SymPosSemiDefEig(&s, nullptr, 0.5));
  EXPECT_EQ(s.Min(), 0);
}

TYPED_TEST(SpMatrixEigTest, MaxAbsEigAndCondMatchKnownEigenvalues) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SpMatrix<Real> a = WithEigenvalues<Real>({-5, 2, 0.5}, &rng);
  EXPECT_TRUE(test::ScalarNear(a.MaxAbsEig(), 5, DecompTol<Real>()));
  EXPECT_TRUE(test::ScalarNear(a.Cond(), 10, 10 * DecompTol<Real>()));
  EXPECT_EQ(SpMatrix<Real>().MaxAbsEig(), 0);
  test::ExpectErrorContaining([&] { SpMatrix<Real>().Cond(); }, "empty");
}

TYPED_TEST(SpMatrixEigTest, ApplyPowHalfSquaredGivesBackMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixIndexT n : {1, 5, 20}) {
    std::vector<double> eigs;
    for (MatrixIndexT i = 0; i < n; ++i) eigs.push_back(rng.Uniform(0.5, 4));
    const SpMatrix<Real> a = WithEigenvalues<Real>(eigs, &rng);
    SpMatrix<Real> root(a);
    root.ApplyPow(0.5);
    Matrix<double> sq(n, n);
    sq.AddMatMat(1.0, Full(root), kNoTrans, Full(root), kNoTrans, 0.0);
    EXPECT_TRUE(test::ExpectNear(sq, Full(a), DecompTol<Real>())) << n;
    SpMatrix<Real> inv(a), expected(a);
    inv.ApplyPow(-1);
    expected.Invert();
    EXPECT_TRUE(test::ExpectNear(Full(inv), Full(expected), DecompTol<Real>())) << n;
  }
  SpMatrix<Real> diag(2);
  diag(1, 1) = 1;
  test::ExpectErrorContaining([&] { diag.ApplyPow(-0.5); }, "is zero");
  const SpMatrix<Real> indefinite = WithEigenvalues<Real>({-1, 1}, &rng);
  SpMatrix<Real> copy(indefinite);
  test::ExpectErrorContaining([&] { copy.ApplyPow(0.5); }, "not positive semidefinite");
}

// Smallest eigenvalue of a symmetric matrix given in full (double).
double MinEig(const Matrix<double>& m) {
  SpMatrix<double> s(m);
  Vector<double> l(m.NumRows());
  s.Eig(&l);
  return l.Min();
}

TYPED_TEST(SpMatrixEigTest, ApplyFloorByMatrixLeavesResultAboveFloor) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixIndexT n : {1, 3, 12}) {
    std::vector<double> eigs, floor_eigs;
    for (MatrixIndexT i = 0; i < n; ++i) {
      eigs.push_back(rng.Uniform(0.0, 2.0));
      floor_eigs.push_back(rng.Uniform(0.5, 1.5));
    }
    SpMatrix<Real> a = WithEigenvalues<Real>(eigs, &rng);
    const SpMatrix<Real> C = WithEigenvalues<Real>(floor_eigs, &rng);
    const Real alpha = 0.7;
    const int floored = a.ApplyFloor(C, alpha);
    EXPECT_GE(floored, 0);
    EXPECT_LE(floored, n);
    Matrix<double> diff = Full(a);
    diff.AddMat(-alpha, Full(C));
    EXPECT_GE(MinEig(diff), -DecompTol<Real>() * 10) << n;
    // Already above the floor: nothing changes.
    SpMatrix<Real> big(C);
    big.Scale(2);
    const SpMatrix<Real> before(big);
    EXPECT_EQ(big.ApplyFloor(C, 1.0), 0);
    EXPECT_TRUE(test::ExpectNear(Full(big), Full(before), DecompTol<Real>()));
  }
  SpMatrix<Real> a(2), not_pd(2), wrong(3);
  not_pd(0, 0) = 1;
  test::ExpectErrorContaining([&] { a.ApplyFloor(not_pd); }, "not positive definite");
  test::ExpectErrorContaining([&] { a.ApplyFloor(wrong); }, "3x3");
  test::ExpectErrorContaining([&] { a.ApplyFloor(a, Real(-1)); }, "alpha");
}

TYPED_TEST(SpMatrixEigTest, ApplyFloorByScalarRaisesSmallEigenvalues) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  SpMatrix<Real> a = WithEigenvalues<Real>({-2, 0.1, 3, 5}, &rng);
  EXPECT_EQ(a.ApplyFloor(Real(1)), 2);
  Vector<Real> s(4);
  a.Eig(&s);
  EXPECT_NEAR(s(0), 1, DecompTol<Real>() * 10);
  EXPECT_NEAR(s(1), 1, DecompTol<Real>() * 10);
  EXPECT_NEAR(s(3), 5, DecompTol<Real>() * 10);
}

TYPED_TEST(SpMatrixEigTest, LimitCondBoundsConditionAndInvertGivesInverse) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SpMatrix<Real> a = WithEigenvalues<Real>({1.0e-6, 1.0e-3, 1, 10, 100}, &rng);
  SpMatrix<Real> limited(a);
  EXPECT_EQ(limited.LimitCond(1000), 2);
  EXPECT_LE(limited.Cond(), 1000 * (1 + 10 * DecompTol<Real>()));
  SpMatrix<Real> inverted(a);
  EXPECT_EQ(inverted.LimitCond(1000, true), 2);
  Matrix<double> prod(5, 5), unit(5, 5);
  prod.AddMatMat(1.0, Full(limited), kNoTrans, Full(inverted), kNoTrans, 0.0);
  unit.SetUnit();
  EXPECT_TRUE(test::ExpectNear(prod, unit, 100 * DecompTol<Real>()));
  SpMatrix<Real> limited_d(a);
  EXPECT_EQ(limited_d.LimitCondDouble(1000), 2);
  EXPECT_TRUE(test::ExpectNear(Full(limited_d), Full(limited), DecompTol<Real>()));
  test::ExpectErrorContaining([&] { limited.LimitCond(1); }, "maxcond");
  SpMatrix<Real> indefinite = WithEigenvalues<Real>({-1, 1}, &rng);
  test::ExpectErrorContaining([&] { indefinite.LimitCond(); }, "not positive semidefinite");
}

}  // namespace
}  // namespace cuctx
