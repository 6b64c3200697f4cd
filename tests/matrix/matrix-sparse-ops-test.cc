// tests/matrix/matrix-sparse-ops-test.cc: AddSmat, AddSmatMat and AddMatSmat against dense
// double-precision products of the densified sparse operand, all transposes and edge shapes.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"
#include "matrix/sparse-matrix.h"
#include "tests/matrix-testing.h"
#include "tests/matrix/extra-testing.h"

#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
class MatrixSparseOpsTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixSparseOpsTest, RealTypes);

// (m, k, n): *this is m x n, the inner dimension k; zeros and odd sizes included.
struct ProductShape {
  int m, k, n;
};
const std::vector<ProductShape> kProductShapes = {{0, 0, 0}, {0, 3, 4},   {3, 0, 4},   {3, 4, 0},
                                                  {1, 1, 1}, {17, 9, 33}, {5, 130, 2}, {64, 1, 7}};

std::ostream& operator<<(std::ostream& os, const ProductShape& s) {
  return os << "m=" << s.m << " k=" << s.k << " n=" << s.n;
}

TYPED_TEST(MatrixSparseOpsTest, AddSmatMatMatchesDenseProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const ProductShape& s : kProductShapes)
    for (MatrixTransposeType ta : {kNoTrans, kTrans})
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << s << (ta == kTrans ? " kTrans" : " kNoTrans")
                                          << (strided ? " strided" : ""));
        Matrix<Real> a_dense = ta == kNoTrans ? test::RandomSparseDense<Real>(s.m, s.k, 0.3, &rng)
                                              : test::RandomSparseDense<Real>(s.k, s.m, 0.3, &rng);
        const SparseMatrix<Real> a(a_dense);
        test::TestMatrix<Real> b(s.k, s.n, strided, &rng);
        test::TestMatrix<Real> c(s.m, s.n, !strided, &rng);
        const double alpha = 0.7, beta = -1.3;
        Matrix<double> expected =
            test::Combine(beta, test::ToDouble(c.View()), alpha,
                          test::NaiveProduct(test::Op(a_dense, ta), test::ToDouble(b.View())));
        c.View().AddSmatMat(static_cast<Real>(alpha), a, ta, b.View(), static_cast<Real>(beta));
        EXPECT_TRUE(test::ExpectNear(c.View(), expected, test::ProductTol<Real>()));
        EXPECT_TRUE(c.PaddingUnchanged());
      }
}

TYPED_TEST(MatrixSparseOpsTest, DenseFormsMatchTheNaiveProductForEveryTranspose) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const ProductShape& s : kProductShapes)
    for (MatrixTransposeType ta : {kNoTrans, kTrans})
      for (MatrixTransposeType tb : {kNoTrans, kTrans}) {
        SCOPED_TRACE(::testing::Message() << s << " ta=" << ta << " tb=" << tb);
        const Matrix<Real> a = ta == kNoTrans ? test::RandomSparseDense<Real>(s.m, s.k, 0.3, &rng)
                                              : test::RandomSparseDense<Real>(s.k, s.m, 0.3, &rng);
        const Matrix<Real> b = tb == kNoTrans ? test::RandomSparseDense<Real>(s.k, s.n, 0.3, &rng)
                                              : test::RandomSparseDense<Real>(s.n, s.k, 0.3, &rng);
        test::TestMatrix<Real> c1(s.m, s.n, true, &rng);
        Matrix<Real> c2(c1.View());
        const double alpha = 0.7, beta = -1.3;
        const Matrix<double> expected =
            test::Combine(beta, test::ToDouble(c1.View()), alpha,
                          test::NaiveProduct(test::Op(a, ta), test::Op(b, tb)));
        c1.View().AddSmatMat(static_cast<Real>(alpha), a, ta, b, tb, static_cast<Real>(beta));
        c2.AddMatSmat(static_cast<Real>(alpha), a, ta, b, tb, static_cast<Real>(beta));
        EXPECT_TRUE(test::ExpectNear(c1.View(), expected, test::ProductTol<Real>()));
        EXPECT_TRUE(test::ExpectNear(c2, expected, test::ProductTol<Real>()));
      }
}

TYPED_TEST(MatrixSparseOpsTest, AddMatSmatMatchesDenseProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const ProductShape& s : kProductShapes)
    for (MatrixTransposeType tb : {kNoTrans, kTrans})
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << s << (tb == kTrans ? " kTrans" : " kNoTrans")
                                          << (strided ? " strided" : ""));
        Matrix<Real> b_dense = tb == kNoTrans ? test::RandomSparseDense<Real>(s.k, s.n, 0.3, &rng)
                                              : test::RandomSparseDense<Real>(s.n, s.k, 0.3, &rng);
        const SparseMatrix<Real> b(b_dense);
        test::TestMatrix<Real> a(s.m, s.k, strided, &rng);
        test::TestMatrix<Real> c(s.m, s.n, !strided, &rng);
        const double alpha = -0.4, beta = 0.5;
        Matrix<double> expected =
            test::Combine(beta, test::ToDouble(c.View()), alpha,
                          test::NaiveProduct(test::ToDouble(a.View()), test::Op(b_dense, tb)));
        c.View().AddMatSmat(static_cast<Real>(alpha), a.View(), b, tb, static_cast<Real>(beta));
        EXPECT_TRUE(test::ExpectNear(c.View(), expected, test::ProductTol<Real>()));
        EXPECT_TRUE(c.PaddingUnchanged());
      }
}

TYPED_TEST(MatrixSparseOpsTest, AddSmatAddsTheDenseMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : test::kEdgeShapes)
    for (MatrixTransposeType t : {kNoTrans, kTrans}) {
      SCOPED_TRACE(::testing::Message() << s << (t == kTrans ? " kTrans" : " kNoTrans"));
      Matrix<Real> a_dense = t == kNoTrans
                                 ? test::RandomSparseDense<Real>(s.rows, s.cols, 0.2, &rng)
                                 : test::RandomSparseDense<Real>(s.cols, s.rows, 0.2, &rng);
      const SparseMatrix<Real> a(a_dense);
      Matrix<Real> c = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
      Matrix<double> expected = test::Combine(1.0, test::ToDouble(c), 2.5, test::Op(a_dense, t));
      c.AddSmat(2.5, a, t);
      EXPECT_TRUE(test::ExpectNear(c, expected, test::Tol<Real>()));
    }
}

TYPED_TEST(MatrixSparseOpsTest, BetaZeroOverwritesNaN) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> a_dense = test::RandomSparseDense<Real>(4, 5, 0.5, &rng);
  const SparseMatrix<Real> a(a_dense);
  const Matrix<Real> b = test::RandomMatrix<Real>(5, 3, &rng);
  Matrix<Real> c(4, 3);
  c.Set(std::numeric_limits<Real>::quiet_NaN());
  c.AddSmatMat(1, a, kNoTrans, b, 0);
  EXPECT_TRUE(test::ExpectNear(c, test::NaiveProduct(test::ToDouble(a_dense), test::ToDouble(b)),
                               test::ProductTol<Real>()));
  const Matrix<Real> d = test::RandomMatrix<Real>(3, 4, &rng);
  Matrix<Real> e(3, 5);
  e.Set(std::numeric_limits<Real>::quiet_NaN());
  e.AddMatSmat(1, d, a, kNoTrans, 0);
  EXPECT_TRUE(test::ExpectNear(e, test::NaiveProduct(test::ToDouble(d), test::ToDouble(a_dense)),
                               test::ProductTol<Real>()));
}

TYPED_TEST(MatrixSparseOpsTest, ThrowsOnShapeMismatchAndOverlap) {
  using Real = TypeParam;
  const SparseMatrix<Real> a(3, 4);  // 3 x 4, all zero
  Matrix<Real> b(4, 2), c(3, 2), wrong(2, 2);
  test::ExpectErrorContaining([&] { wrong.AddSmatMat(1, a, kNoTrans, b, 0); },
                              "AddSmatMat: shape mismatch: A 3x4 sparse (kNoTrans) times B 4x2");
  test::ExpectErrorContaining([&] { c.AddSmatMat(1, a, kTrans, b, 0); }, "3x4 sparse (kTrans)");
  Matrix<Real> m(3, 3), out(3, 5);
  test::ExpectErrorContaining([&] { out.AddMatSmat(1, m, a, kNoTrans, 0); },
                              "times B 3x4 sparse (kNoTrans) into *this 3x5");
  test::ExpectErrorContaining([&] { wrong.AddSmat(1, a); }, "AddSmat: shape mismatch");
  // B aliasing the output.
  Matrix<Real> big(4, 4);
  const SparseMatrix<Real> sq(4, 4);
  SubMatrix<Real> left = big.ColRange(0, 2), right = big.ColRange(1, 2);
  test::ExpectErrorContaining([&] { left.AddSmatMat(1, sq, kNoTrans, right, 0); }, "overlaps");
  test::ExpectErrorContaining(
      [&] { left.AddMatSmat(1, big, SparseMatrix<Real>(4, 2), kNoTrans, 0); }, "overlaps");
  test::ExpectErrorContaining(
      [&] { c.AddSmatMat(1, a, static_cast<MatrixTransposeType>(7), b, 0); },
      "invalid MatrixTransposeType 7");
}

}  // namespace
}  // namespace cuctx
