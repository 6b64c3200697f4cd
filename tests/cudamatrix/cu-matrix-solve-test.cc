// tests/cudamatrix/cu-matrix-solve-test.cc: CuMatrixBase::Cholesky and SymInvertPosDef compared
// with a host Matrix<double> reference, on well- and ill-conditioned, indefinite and misused input.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-matrix.h"
#include "matrix/matrix.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

// Both sides of the switch from the host path to cuSOLVER (64/65, see cu-matrix-solve.cc) and of
// the CPU reference's switch to blocked LAPACK (127/128).
const std::vector<int> kSizes = {1, 2, 32, 33, 63, 64, 65, 127, 128, 200};

// B B^T + shift * I with B n x rank, in double. A full-rank B with shift n is well conditioned; a
// low-rank B with a small shift has condition number about (n + shift) / shift.
Matrix<double> SpdMatrix(int n, int rank, double shift, test::Rng* rng) {
  Matrix<double> b = test::RandomMatrix<double>(n, rank, rng);
  Matrix<double> a(n, n);
  a.AddMatMat(1.0, b, kNoTrans, b, kTrans, 0.0);
  a.AddToDiag(shift);
  return a;
}

// The relative error allowed for a factor or inverse of a matrix of condition number `cond`.
template <typename Real>
double SolveTol(int n, double cond) {
  const double eps = sizeof(Real) == 4 ? 6e-8 : 1.1e-16;
  return 20.0 * eps * std::sqrt(static_cast<double>(n) + 1) * cond;
}

template <typename Real>
class CuMatrixSolveTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMatrixSolveTest, RealTypes);

// Factors `a` (rounded to Real) in a guarded view, with and without inv_cholesky, and checks L and
// L^-1 against the double reference, the zeroed upper triangle and the sentinels.
template <typename Real>
void CheckCholesky(const Matrix<double>& a, double cond, bool strided, test::Rng* rng) {
  const int n = a.NumRows();
  const Matrix<Real> input(a);
  Matrix<double> ref_l(input), ref_inv(n, n);
  ref_l.Cholesky(&ref_inv);
  const double tol = SolveTol<Real>(n, cond);

  test::GuardedCuMatrix<Real> m(n, n, strided, rng);
  m.view.CopyFromMat(input);
  test::GuardedCuMatrix<Real> inv(n, n, !strided, rng);
  m.view.Cholesky(&inv.view);
  const Matrix<Real> l = ToHost(m.view);
  EXPECT_TRUE(test::ExpectNear(l, ref_l, tol));
  EXPECT_TRUE(test::ExpectNear(ToHost(inv.view), ref_inv, tol));
  for (int r = 0; r < n; ++r)
    for (int c = r + 1; c < n; ++c) ASSERT_EQ(l(r, c), 0) << "upper element " << r << "," << c;
  EXPECT_TRUE(m.BorderUnchanged());
  EXPECT_TRUE(inv.BorderUnchanged());
  // Backward stability: L L^T reproduces the input to rounding, whatever the conditioning.
  Matrix<double> llt(n, n);
  llt.AddMatMat(1.0, Matrix<double>(l), kNoTrans, Matrix<double>(l), kTrans, 0.0);
  EXPECT_TRUE(test::ExpectNear(llt, Matrix<double>(input), SolveTol<Real>(n, 1.0)));

  // Without inv_cholesky.
  CuMatrix<Real> plain(input);
  plain.Cholesky();
  EXPECT_TRUE(test::ExpectNear(ToHost(plain), ref_l, tol));
}

TYPED_TEST(CuMatrixSolveTest, CholeskyMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes) {
    SCOPED_TRACE(n);
    const Matrix<double> a = SpdMatrix(n, n, n, &rng);
    for (bool strided : {false, true}) CheckCholesky<Real>(a, 4.0, strided, &rng);
  }
}

TYPED_TEST(CuMatrixSolveTest, CholeskyOfIllConditionedMatrixMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  // Condition number about 1e3 (float) or 1e8 (double): rank n / 4 plus a small shift.
  const double cond = sizeof(Real) == 4 ? 1e3 : 1e8;
  for (int n : {63, 200}) {
    SCOPED_TRACE(n);
    const double shift = n / 4.0 / cond;
    const Matrix<double> a = SpdMatrix(n, n / 4, shift, &rng);
    CheckCholesky<Real>(a, cond, true, &rng);
  }
}

TYPED_TEST(CuMatrixSolveTest, SymInvertPosDefMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes) {
    SCOPED_TRACE(n);
    const Matrix<Real> input(SpdMatrix(n, n, n, &rng));
    Matrix<double> expected(input);
    expected.SymInvertPosDef();
    for (bool strided : {false, true}) {
      test::GuardedCuMatrix<Real> m(n, n, strided, &rng);
      m.view.CopyFromMat(input);
      m.view.SymInvertPosDef();
      const Matrix<Real> inv = ToHost(m.view);
      EXPECT_TRUE(test::ExpectNear(inv, expected, SolveTol<Real>(n, 4.0)));
      // Both triangles are filled (exactly mirrored on the GPU; the CPU's L^-T L^-1 product is
      // symmetric to rounding).
      EXPECT_TRUE(test::ExpectNear(inv, Matrix<Real>(inv, kTrans), test::Tol<Real>()));
      EXPECT_TRUE(m.BorderUnchanged());
    }
  }
}

TYPED_TEST(CuMatrixSolveTest, SymInvertPosDefOfIllConditionedMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const double cond = sizeof(Real) == 4 ? 1e3 : 1e8;
  const int n = 65;
  const Matrix<Real> input(SpdMatrix(n, n / 4, n / 4.0 / cond, &rng));
  CuMatrix<Real> m(input);
  m.SymInvertPosDef();
  // A A^-1 = I up to cond * eps.
  Matrix<double> prod(n, n), unit(n, n);
  prod.AddMatMat(1.0, Matrix<double>(input), kNoTrans, Matrix<double>(ToHost(m)), kNoTrans, 0.0);
  unit.SetUnit();
  EXPECT_TRUE(test::ExpectNear(prod, unit, SolveTol<Real>(n, cond)));
}

// A symmetric matrix whose leading minor of order k (1-based) is the first that is not positive.
Matrix<double> IndefiniteMatrix(int n, int k) {
  Matrix<double> a(n, n);
  a.SetUnit();
  a(k - 1, k - 1) = -2.0;
  return a;
}

TYPED_TEST(CuMatrixSolveTest, IndefiniteMatrixThrowsAndIsUnchanged) {
  using Real = TypeParam;
  // Sizes on both sides of the host/GPU switches (both at 64).
  for (int n : {1, 5, 32, 33, 64, 65, 130}) {
    SCOPED_TRACE(n);
    const Matrix<Real> input(IndefiniteMatrix(n, n));
    CuMatrix<Real> m(input);
    CuMatrix<Real> inv(n, n);
    test::ExpectErrorContaining([&] { m.Cholesky(&inv); }, "not positive definite");
    EXPECT_TRUE(test::ExpectNear(ToHost(m), input, 0.0)) << "Cholesky modified its input";
    test::ExpectErrorContaining([&] { m.SymInvertPosDef(); }, "not positive definite");
    EXPECT_TRUE(test::ExpectNear(ToHost(m), input, 0.0)) << "SymInvertPosDef modified its input";
  }
  // A singular positive semi-definite matrix (all ones) is not positive definite either.
  Matrix<Real> ones(4, 4);
  ones.Set(1);
  CuMatrix<Real> m(ones);
  test::ExpectErrorContaining([&] { m.Cholesky(); }, "not positive definite");
}

TYPED_TEST(CuMatrixSolveTest, EmptyMatrixIsANoOp) {
  using Real = TypeParam;
  CuMatrix<Real> m, inv;
  m.Cholesky(&inv);
  m.SymInvertPosDef();
  EXPECT_EQ(m.NumRows(), 0);
}

TYPED_TEST(CuMatrixSolveTest, MisuseThrowsNamingShapes) {
  using Real = TypeParam;
  CuMatrix<Real> rect(3, 4), sq(3, 3), inv(2, 2), big(6, 6);
  test::ExpectErrorContaining([&] { rect.Cholesky(); }, "3x4 is not square");
  test::ExpectErrorContaining([&] { rect.SymInvertPosDef(); }, "3x4 is not square");
  test::ExpectErrorContaining([&] { sq.Cholesky(&inv); }, "inv_cholesky 2x2 does not match");
  CuSubMatrix<Real> a(big, 0, 3, 0, 3), b(big, 1, 3, 1, 3);
  test::ExpectErrorContaining([&] { a.Cholesky(&b); }, "inv_cholesky overlaps");
}

}  // namespace
}  // namespace cuctx
