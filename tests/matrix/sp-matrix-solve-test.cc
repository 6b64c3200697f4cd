// tests/matrix/sp-matrix-solve-test.cc: SolverOptions and the quadratic-problem solvers.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/vector.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <gtest/gtest.h>

namespace cuctx {
namespace {

template <typename Real>
class SpMatrixSolveTest : public ::testing::Test {
 protected:
  test::QuietLog quiet_;  // The solvers log floored eigenvalues and warnings by design.
};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SpMatrixSolveTest, RealTypes);

// The solvers work in double but take their inputs in Real: float inputs and results carry float
// rounding, amplified by the condition of the problem (<= ~20 here), hence 100x.
template <typename Real>
double SolveTol() {
  return 100 * test::Tol<Real>();
}

// A random symmetric positive definite n x n matrix (B B^T / n + I, condition well below 1e4).
template <typename Real>
SpMatrix<Real> RandomSpd(MatrixIndexT n, test::Rng* rng) {
  Matrix<Real> b = test::RandomMatrix<Real>(n, n, rng);
  SpMatrix<Real> s(n);
  s.AddMat2(1.0 / n, b, kNoTrans, 0.0);
  s.AddToDiag(1.0);
  return s;
}

template <typename Real>
Matrix<double> Full(const SpMatrix<Real>& s) {
  Matrix<double> m(s.NumRows(), s.NumRows());
  s.CopyToMat(&m);
  return m;
}

// x^T g - 0.5 x^T H x in double.
template <typename Real>
double Objective(const SpMatrix<Real>& H, const VectorBase<Real>& g, const VectorBase<Real>& x) {
  const Vector<double> xd(x), gd(g);
  return VecVec(xd, gd) - 0.5 * VecMatVec(xd, Full(H), xd);
}

TYPED_TEST(SpMatrixSolveTest, QuadraticProblemReachesInverseTimesGradient) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixIndexT n : {1, 4, 15}) {
    for (bool precondition : {false, true}) {
      for (bool from_zero : {true, false}) {
        const SpMatrix<Real> H = RandomSpd<Real>(n, &rng);
        const Vector<Real> g = test::RandomVector<Real>(n, &rng);
        Vector<Real> x = from_zero ? Vector<Real>(n) : test::RandomVector<Real>(n, &rng);
        const double before = Objective(H, g, x);
        SolverOptions opts("test");
        opts.diagonal_precondition = precondition;
        const Real gain = SolveQuadraticProblem(H, g, opts, &x);
        Matrix<double> H_inv = Full(H);
        H_inv.Invert();
        Vector<double> expected(n);
        expected.AddMatVec(1.0, H_inv, kNoTrans, Vector<double>(g), 0.0);
        EXPECT_TRUE(test::ExpectNear(x, expected, SolveTol<Real>()))
            << "n " << n << " precondition " << precondition << " from_zero " << from_zero;
        EXPECT_TRUE(test::ScalarNear(gain, Objective(H, g, x) - before, SolveTol<Real>()));
        EXPECT_GE(gain, 0);
      }
    }
  }
}

TYPED_TEST(SpMatrixSolveTest, QuadraticProblemFloorsEigenvaluesAtConditionLimit) {
  using Real = TypeParam;
  // H = diag(1, 1e-6): with K = 1e4 the small eigenvalue is treated as 1e-4.
  SpMatrix<Real> H(2);
  H(0, 0) = 1;
  H(1, 1) = 1e-6;
  Vector<Real> g(2), x(2);
  g(0) = 2;
  g(1) = 1;
  SolverOptions opts;
  SolveQuadraticProblem(H, g, opts, &x);
  EXPECT_NEAR(x(0), 2, SolveTol<Real>());
  EXPECT_TRUE(test::ScalarNear(x(1), 1.0e+4, SolveTol<Real>()));
}

TYPED_TEST(SpMatrixSolveTest, QuadraticProblemLeavesXForZeroHAndChecksArguments) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  SpMatrix<Real> zero(3);
  const Vector<Real> g = test::RandomVector<Real>(3, &rng);
  Vector<Real> x = test::RandomVector<Real>(3, &rng);
  const Vector<Real> x0(x);
  EXPECT_EQ(SolveQuadraticProblem(zero, g, SolverOptions(), &x), 0);
  EXPECT_TRUE(test::ExpectNear(x, x0, 0.0));
  Vector<Real> x_bad(2), empty;
  SpMatrix<Real> empty_h;
  test::ExpectErrorContaining([&] { SolveQuadraticProblem(zero, g, SolverOptions(), &x_bad); },
                              "must agree");
  test::ExpectErrorContaining(
      [&] { SolveQuadraticProblem(empty_h, empty, SolverOptions(), &empty); }, "nonzero");
  SolverOptions bad;
  bad.K = 5;
  test::ExpectErrorContaining([&] { SolveQuadraticProblem(zero, g, bad, &x); }, "K > 10");
  SpMatrix<Real> indefinite(3);
  indefinite(0, 0) = 1;
  indefinite(1, 1) = -1;
  test::ExpectErrorContaining([&] { SolveQuadraticProblem(indefinite, g, SolverOptions(), &x); },
                              "not positive semidefinite");
}

TYPED_TEST(SpMatrixSolveTest, QuadraticMatrixProblemReachesYTimesInverseQ) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (bool precondition : {false, true}) {
    const MatrixIndexT rows = 3, cols = 5;
    const SpMatrix<Real> Q = RandomSpd<Real>(cols, &rng), P = RandomSpd<Real>(rows, &rng);
    const Matrix<Real> Y = test::RandomMatrix<Real>(rows, cols, &rng);
    Matrix<Real> M = test::RandomMatrix<Real>(rows, cols, &rng);
    SolverOptions opts;
    opts.diagonal_precondition = precondition;
    const Real gain = SolveQuadraticMatrixProblem(Q, Y, P, opts, &M);
    Matrix<double> Q_inv = Full(Q), expected(rows, cols);
    Q_inv.Invert();
    expected.AddMatMat(1.0, Matrix<double>(Y), kNoTrans, Q_inv, kNoTrans, 0.0);
    EXPECT_TRUE(test::ExpectNear(M, expected, SolveTol<Real>())) << precondition;
    EXPECT_GT(gain, 0);
  }
  Matrix<Real> M(2, 3), Y_bad(2, 2);
  SpMatrix<Real> Q(3), P(2);
  test::ExpectErrorContaining(
      [&] { SolveQuadraticMatrixProblem(Q, Y_bad, P, SolverOptions(), &M); }, "M is 2x3");
}

TYPED_TEST(SpMatrixSolveTest, DoubleQuadraticMatrixProblemZeroesTheGradient) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const MatrixIndexT rows = 4, cols = 3;
  const SpMatrix<Real> P1 = RandomSpd<Real>(rows, &rng), P2 = RandomSpd<Real>(rows, &rng);
  const SpMatrix<Real> Q1 = RandomSpd<Real>(cols, &rng), Q2 = RandomSpd<Real>(cols, &rng);
  const Matrix<Real> G = test::RandomMatrix<Real>(rows, cols, &rng);
  Matrix<Real> M = test::RandomMatrix<Real>(rows, cols, &rng);
  const Real gain = SolveDoubleQuadraticMatrixProblem(G, P1, P2, Q1, Q2, SolverOptions(), &M);
  EXPECT_GT(gain, 0);
  // At the optimum the gradient G - P1 M Q1 - P2 M Q2 vanishes.
  Matrix<double> grad(G), tmp(rows, cols);
  const Matrix<double> Md(M);
  tmp.AddMatMat(1.0, Full(P1), kNoTrans, Md, kNoTrans, 0.0);
  grad.AddMatMat(-1.0, tmp, kNoTrans, Full(Q1), kNoTrans, 1.0);
  tmp.AddMatMat(1.0, Full(P2), kNoTrans, Md, kNoTrans, 0.0);
  grad.AddMatMat(-1.0, tmp, kNoTrans, Full(Q2), kNoTrans, 1.0);
  EXPECT_LT(grad.FrobeniusNorm(), SolveTol<Real>() * Matrix<double>(G).FrobeniusNorm());
  SpMatrix<Real> not_pd(rows);
  test::ExpectErrorContaining(
      [&] { SolveDoubleQuadraticMatrixProblem(G, not_pd, P2, Q1, Q2, SolverOptions(), &M); },
      "P1 is not positive definite");
}

}  // namespace
}  // namespace cuctx
