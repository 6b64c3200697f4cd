// tests/matrix/matrix-functions-pca-test.cc: ComputePca on planted low-rank data, both code paths.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix-functions.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <gtest/gtest.h>

namespace cuctx {
namespace {

template <typename Real>
class MatrixFunctionsPcaTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixFunctionsPcaTest, RealTypes);

// PCA goes through the eigenvectors of X^T X or X X^T, whose condition is the square of X's:
// identities are checked 100x looser than element-wise ops.
template <typename Real>
double PcaTol() {
  return 100 * test::Tol<Real>();
}

// N points X = C B (C: N x rank, B: rank x D), i.e. lying in the row space of B.
template <typename Real>
Matrix<Real> Planted(MatrixIndexT N, MatrixIndexT D, MatrixIndexT rank, test::Rng* rng,
                     Matrix<Real>* B) {
  *B = test::GaussMatrix<Real>(rank, D, rng);
  const Matrix<Real> C = test::GaussMatrix<Real>(N, rank, rng);
  Matrix<Real> X(N, D);
  X.AddMatMat(1.0, C, kNoTrans, *B, kNoTrans, 0.0);
  return X;
}

template <typename Real>
void CheckRecoversPlantedSubspace(MatrixIndexT N, MatrixIndexT D, MatrixIndexT rank,
                                  test::Rng* rng) {
  SCOPED_TRACE(::testing::Message() << "N " << N << " D " << D << " rank " << rank);
  Matrix<Real> B;
  const Matrix<Real> X = Planted<Real>(N, D, rank, rng, &B);
  Matrix<Real> U(rank, D), A(N, rank);
  ComputePca(X, &U, &A);
  // Orthonormal rows.
  Matrix<double> uut(rank, rank), unit(rank, rank);
  uut.AddMatMat(1.0, Matrix<double>(U), kNoTrans, Matrix<double>(U), kTrans, 0.0);
  unit.SetUnit();
  EXPECT_TRUE(test::ExpectNear(uut, unit, PcaTol<Real>()));
  // The basis spans the planted subspace, so the points are reconstructed exactly: X == A U.
  Matrix<double> rebuilt(N, D);
  rebuilt.AddMatMat(1.0, Matrix<double>(A), kNoTrans, Matrix<double>(U), kNoTrans, 0.0);
  EXPECT_TRUE(test::ExpectNear(rebuilt, X, PcaTol<Real>()));
  // A holds the coefficients X U^T, and the components come in decreasing order of energy.
  Matrix<double> xut(N, rank);
  xut.AddMatMat(1.0, Matrix<double>(X), kNoTrans, Matrix<double>(U), kTrans, 0.0);
  EXPECT_TRUE(test::ExpectNear(A, xut, PcaTol<Real>()));
  Vector<double> energy(rank);
  energy.AddDiagMat2(1.0, Matrix<double>(A), kTrans, 0.0);
  for (MatrixIndexT g = 1; g < rank; ++g)
    EXPECT_GE(energy(g - 1), energy(g) * (1 - PcaTol<Real>()));
}

TYPED_TEST(MatrixFunctionsPcaTest, RecoversPlantedSubspaceThroughOuterProducts) {
  test::Rng rng = test::MakeRng();
  CheckRecoversPlantedSubspace<TypeParam>(50, 10, 3, &rng);  // D < N.
  CheckRecoversPlantedSubspace<TypeParam>(9, 7, 7, &rng);
}

TYPED_TEST(MatrixFunctionsPcaTest, RecoversPlantedSubspaceThroughInnerProducts) {
  test::Rng rng = test::MakeRng();
  CheckRecoversPlantedSubspace<TypeParam>(8, 20, 3, &rng);  // D >= N.
  CheckRecoversPlantedSubspace<TypeParam>(5, 5, 5, &rng);
  CheckRecoversPlantedSubspace<TypeParam>(1, 1, 1, &rng);
}

TYPED_TEST(MatrixFunctionsPcaTest, RankDeficientInnerProductPcaStillGivesOrthonormalBasis) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> B;
  const Matrix<Real> X = Planted<Real>(5, 12, 2, &rng, &B);
  Matrix<Real> U(4, 12), A(5, 4);
  ComputePca(X, &U, &A, /*print_eigs=*/false, /*exact=*/false);
  Matrix<double> uut(4, 4), unit(4, 4);
  uut.AddMatMat(1.0, Matrix<double>(U), kNoTrans, Matrix<double>(U), kTrans, 0.0);
  unit.SetUnit();
  EXPECT_TRUE(test::ExpectNear(uut, unit, PcaTol<Real>()));
  // The last two directions carry no energy.
  for (MatrixIndexT n = 0; n < 5; ++n) {
    EXPECT_NEAR(A(n, 2), 0, PcaTol<Real>() * 10);
    EXPECT_NEAR(A(n, 3), 0, PcaTol<Real>() * 10);
  }
}

TYPED_TEST(MatrixFunctionsPcaTest, ThrowsOnBadShapesAndAcceptsZeroComponents) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> X = test::RandomMatrix<Real>(4, 6, &rng);
  Matrix<Real> too_many(5, 6), wrong_cols(2, 5), U(2, 6), A_bad(4, 3), none(0, 6);
  MatrixBase<Real>* no_a = nullptr;  // A typed null: Real is deduced from every argument.
  test::ExpectErrorContaining([&] { ComputePca(X, &too_many, no_a); }, "G <= N");
  test::ExpectErrorContaining([&] { ComputePca(X, &wrong_cols, no_a); }, "6 columns");
  test::ExpectErrorContaining([&] { ComputePca(X, &U, &A_bad); }, "must be 4x2");
  EXPECT_NO_THROW(ComputePca(X, &none, no_a));
  EXPECT_NO_THROW(ComputePca(X, &U, no_a));
}

}  // namespace
}  // namespace cuctx
