// tests/cudamatrix/cu-matrix-tp-test.cc: CuMatrixBase::AddMatTp / AddTpMat against dense CPU
// products, and CuSparseMatrix::Swap with a host SparseMatrix (cu-sparse-swap.cc).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-sparse-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "matrix/matrix.h"
#include "matrix/sparse-matrix.h"
#include "matrix/tp-matrix.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

const MatrixTransposeType kTransposes[] = {kNoTrans, kTrans};

// GEMM results sum k products of values in [-1, 1); see cu-matrix-blas-test.cc.
template <typename Real>
double GemmTol(int k) {
  return test::Tol<Real>() * std::max(k, 1);
}

// A random lower-triangular n x n matrix and its dense form (zeros above the diagonal, filled by
// a naive loop rather than through TpMatrix).
template <typename Real>
Matrix<Real> RandomLower(int n, test::Rng* rng) {
  Matrix<Real> m = test::RandomMatrix<Real>(n, n, rng);
  for (int r = 0; r < n; ++r)
    for (int c = r + 1; c < n; ++c) m(r, c) = 0;
  return m;
}

template <typename Real>
class CuMatrixTpTest : public ::testing::Test {
 protected:
  test::QuietLog quiet_;
};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMatrixTpTest, RealTypes);

TYPED_TEST(CuMatrixTpTest, AddMatTpAndAddTpMatMatchDenseProducts) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 2, 17, 33})
    for (MatrixTransposeType tA : kTransposes)
      for (MatrixTransposeType tB : kTransposes)
        for (Real beta : {Real(0), Real(0.5)})
          for (bool strided : {false, true}) {
            SCOPED_TRACE(n);
            const int m = 7;
            const Matrix<Real> lower = RandomLower<Real>(n, &rng);
            const CuTpMatrix<Real> tp{TpMatrix<Real>(lower)};
            // this (m x n) = op(A) op(T), A dense.
            const Matrix<Real> A = tA == kNoTrans ? test::RandomMatrix<Real>(m, n, &rng)
                                                  : test::RandomMatrix<Real>(n, m, &rng);
            test::GuardedCuMatrix<Real> C(m, n, strided, &rng);
            Matrix<Real> expected = C.Host();
            expected.AddMatMat(Real(1.25), A, tA, lower, tB, beta);
            C.view.AddMatTp(Real(1.25), CuMatrix<Real>(A), tA, tp, tB, beta);
            EXPECT_TRUE(test::ExpectNear(ToHost(C.view), expected, GemmTol<Real>(n)));
            EXPECT_TRUE(C.BorderUnchanged());
            // this (n x m) = op(T) op(B), B dense.
            const Matrix<Real> B = tB == kNoTrans ? test::RandomMatrix<Real>(n, m, &rng)
                                                  : test::RandomMatrix<Real>(m, n, &rng);
            test::GuardedCuMatrix<Real> D(n, m, strided, &rng);
            Matrix<Real> expected2 = D.Host();
            expected2.AddMatMat(Real(-0.5), lower, tA, B, tB, beta);
            D.view.AddTpMat(Real(-0.5), tp, tA, CuMatrix<Real>(B), tB, beta);
            EXPECT_TRUE(test::ExpectNear(ToHost(D.view), expected2, GemmTol<Real>(n)));
            EXPECT_TRUE(D.BorderUnchanged());
          }
}

TYPED_TEST(CuMatrixTpTest, TriangularProductsThrowOnShapeMismatch) {
  using Real = TypeParam;
  const CuTpMatrix<Real> tp(4);
  CuMatrix<Real> m3x4(3, 4), m4x3(4, 3), m3x3(3, 3), a3x4(3, 4), b4x3(4, 3);
  m3x4.AddMatTp(1, a3x4, kNoTrans, tp, kTrans, 0);
  m4x3.AddTpMat(1, tp, kTrans, b4x3, kNoTrans, 0);
  test::ExpectErrorContaining([&] { m3x4.AddMatTp(1, m3x3, kNoTrans, tp, kNoTrans, 0); },
                              "AddMatTp: shape mismatch: A 3x3 (kNoTrans) times triangular 4x4");
  test::ExpectErrorContaining([&] { m4x3.AddTpMat(1, tp, kNoTrans, m3x3, kNoTrans, 0); },
                              "AddTpMat: shape mismatch");
  // The dense operand may not overlap the output.
  test::ExpectErrorContaining([&] { m4x3.AddTpMat(1, tp, kNoTrans, m4x3, kNoTrans, 0); },
                              "overlaps");
}

TYPED_TEST(CuMatrixTpTest, SparseSwapExchangesWithAHostMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  // Dense matrices with about half the elements zero, as the sparse contents.
  auto sparse_dense = [&](int rows, int cols) {
    Matrix<Real> m = test::RandomMatrix<Real>(rows, cols, &rng);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        if (rng.Uniform(0, 1) < 0.5) m(r, c) = 0;
    return m;
  };
  const Matrix<Real> a = sparse_dense(5, 7), b = sparse_dense(3, 2);
  CuSparseMatrix<Real> cu{SparseMatrix<Real>(a)};
  SparseMatrix<Real> host(b);
  cu.Swap(&host);
  EXPECT_EQ(cu.NumRows(), 3);
  EXPECT_EQ(cu.NumCols(), 2);
  CuMatrix<Real> cu_dense(3, 2);
  cu.CopyToMat(&cu_dense);
  EXPECT_TRUE(test::SameElements(ToHost(cu_dense), b));
  Matrix<Real> host_dense(5, 7);
  host.CopyToMat(&host_dense);
  EXPECT_TRUE(test::SameElements(host_dense, a));
  // With an empty host matrix the Cu matrix becomes empty.
  SparseMatrix<Real> empty;
  cu.Swap(&empty);
  EXPECT_EQ(cu.NumRows(), 0);
  EXPECT_EQ(cu.NumElements(), 0);
  EXPECT_EQ(empty.NumRows(), 3);
  EXPECT_THROW(cu.Swap(static_cast<SparseMatrix<Real>*>(nullptr)), Error);
}

}  // namespace
}  // namespace cuctx
