// tests/cudamatrix/cu-vector-packed-test.cc: CuVectorBase::CopyElements, AddTpVec and MulTp, and
// CuSpMatrix::FrobeniusNorm, against loops over dense host matrices written here.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-sp-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

template <typename Real>
class CuVectorPackedTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuVectorPackedTest, RealTypes);

// A random lower-triangular matrix and its dense n x n form (zeros above the diagonal).
template <typename Real>
TpMatrix<Real> RandomTp(int n, test::Rng* rng, Matrix<double>* dense) {
  const Matrix<Real> full = test::RandomMatrix<Real>(n, n, rng);
  TpMatrix<Real> tp(full);
  dense->Resize(n, n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c <= r; ++c) (*dense)(r, c) = full(r, c);
  return tp;
}

// op(L) v by a loop, in double.
Vector<double> DenseProduct(const Matrix<double>& L, MatrixTransposeType trans,
                            const Vector<double>& v) {
  const int n = v.Dim();
  Vector<double> y(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) y(i) += (trans == kNoTrans ? L(i, j) : L(j, i)) * v(j);
  return y;
}

// A sum of up to n products per element.
template <typename Real>
double ProductTol(int n) {
  return test::Tol<Real>() * (n + 1);
}

const std::vector<int> kSizes = {0, 1, 17, 64, 257};

TYPED_TEST(CuVectorPackedTest, CopyElementsMatchesLoop) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : test::kEdgeShapes) {
    for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
      const int dim = trans == kNoTrans ? s.rows : s.cols,
                bound = trans == kNoTrans ? s.cols : s.rows;
      if (dim > 0 && bound == 0) continue;  // no valid index exists
      test::GuardedCuMatrix<Real> mat(s.rows, s.cols, /*strided=*/true, &rng);
      const std::vector<int32_t> idx = test::RandomIndices(dim, bound, false, &rng);
      CuVector<Real> v(dim);
      v.CopyElements(mat.view, trans, CuArray<int32>(idx));
      const Matrix<Real> m = mat.Host();
      Vector<Real> want(dim);
      for (int i = 0; i < dim; ++i) want(i) = trans == kNoTrans ? m(i, idx[i]) : m(idx[i], i);
      EXPECT_TRUE(test::ExpectNear(ToHost(v), want, 0)) << s << (trans == kTrans ? " kTrans" : "");
    }
  }
}

TYPED_TEST(CuVectorPackedTest, CopyElementsThrowsOnMisuse) {
  using Real = TypeParam;
  test::QuietLog quiet;
  const CuMatrix<Real> mat(4, 6);
  CuVector<Real> v(4);
  EXPECT_TRUE(test::ThrowsWith(
      [&] { v.CopyElements(mat, kTrans, CuArray<int32>(std::vector<int32_t>(4, 0))); }, "4x6"));
  EXPECT_TRUE(test::ThrowsWith(
      [&] { v.CopyElements(mat, kNoTrans, CuArray<int32>(std::vector<int32_t>(3, 0))); },
      "elements"));
  CuSubVector<Real> in_mat(mat.Data(), 4);  // the first row of mat
  EXPECT_TRUE(test::ThrowsWith(
      [&] { in_mat.CopyElements(mat, kNoTrans, CuArray<int32>(std::vector<int32_t>(4, 0))); },
      "overlaps"));
  // Index entries are checked on the host (CPU mode) only; see cu-vector.h.
  if (!test::GpuEnabled()) {
    EXPECT_TRUE(test::ThrowsWith(
        [&] {
          v.CopyElements(mat, kNoTrans, CuArray<int32>(std::vector<int32_t>{0, 1, 6, 2}));
        },
        "elements[2] = 6"));
  }
}

TYPED_TEST(CuVectorPackedTest, MulTpMatchesDenseProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes) {
    for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
      Matrix<double> dense;
      const TpMatrix<Real> tp = RandomTp<Real>(n, &rng, &dense);
      const Vector<Real> v = test::RandomVector<Real>(n, &rng);
      CuVector<Real> cu(v);
      cu.MulTp(CuTpMatrix<Real>(tp), trans);
      const Vector<double> want = DenseProduct(dense, trans, Vector<double>(v));
      EXPECT_TRUE(test::ExpectNear(ToHost(cu), want, ProductTol<Real>(n))) << "n = " << n;
      Vector<Real> host(v);
      host.MulTp(tp, trans);
      EXPECT_TRUE(test::ExpectNear(host, want, ProductTol<Real>(n))) << "n = " << n;
    }
  }
}

TYPED_TEST(CuVectorPackedTest, AddTpVecMatchesDenseProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const double scalars[][2] = {{1.0, 0.0}, {-0.5, 0.0}, {2.0, 1.0}, {0.75, -1.5}};
  for (int n : kSizes) {
    for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
      for (const auto& ab : scalars) {
        const Real alpha = static_cast<Real>(ab[0]), beta = static_cast<Real>(ab[1]);
        Matrix<double> dense;
        const TpMatrix<Real> tp = RandomTp<Real>(n, &rng, &dense);
        const CuTpMatrix<Real> cu_tp(tp);
        const Vector<Real> v = test::RandomVector<Real>(n, &rng);
        Vector<Real> y = test::RandomVector<Real>(n, &rng);
        // With beta == 0 the old contents are not read: a NaN there must not survive.
        if (beta == 0 && n > 0) y(0) = std::numeric_limits<Real>::quiet_NaN();
        Vector<double> want = DenseProduct(dense, trans, Vector<double>(v));
        want.Scale(alpha);
        if (beta != 0) want.AddVec(static_cast<double>(beta), Vector<double>(y));
        const std::string what = "n = " + std::to_string(n) + ", alpha " + std::to_string(ab[0]) +
                                 ", beta " + std::to_string(ab[1]);
        CuVector<Real> cu_y(y);
        cu_y.AddTpVec(alpha, cu_tp, trans, CuVector<Real>(v), beta);
        EXPECT_TRUE(test::ExpectNear(ToHost(cu_y), want, ProductTol<Real>(n))) << what;
        Vector<Real> host_y(y);
        host_y.AddTpVec(alpha, tp, trans, v, beta);
        EXPECT_TRUE(test::ExpectNear(host_y, want, ProductTol<Real>(n))) << what;

        // v is the vector itself.
        Vector<double> want_self = DenseProduct(dense, trans, Vector<double>(y));
        want_self.Scale(alpha);
        if (beta != 0) want_self.AddVec(static_cast<double>(beta), Vector<double>(y));
        if (beta == 0 && n > 0) continue;  // y holds a NaN, which the product itself reads
        CuVector<Real> self(y);
        self.AddTpVec(alpha, cu_tp, trans, self, beta);
        EXPECT_TRUE(test::ExpectNear(ToHost(self), want_self, ProductTol<Real>(n))) << what;
        Vector<Real> host_self(y);
        host_self.AddTpVec(alpha, tp, trans, host_self, beta);
        EXPECT_TRUE(test::ExpectNear(host_self, want_self, ProductTol<Real>(n))) << what;
      }
    }
  }
}

TYPED_TEST(CuVectorPackedTest, TriangularProductsThrowOnSizeMismatch) {
  using Real = TypeParam;
  test::QuietLog quiet;
  const CuTpMatrix<Real> tp(4);
  CuVector<Real> v(5), w(4);
  EXPECT_TRUE(test::ThrowsWith([&] { v.MulTp(tp, kNoTrans); }, "4x4"));
  EXPECT_TRUE(test::ThrowsWith([&] { w.AddTpVec(1, tp, kNoTrans, v, 0); }, "dim 5"));
  CuVector<Real> big(8);
  CuSubVector<Real> a = big.Range(0, 4), b = big.Range(2, 4);
  EXPECT_TRUE(test::ThrowsWith([&] { a.AddTpVec(1, tp, kTrans, b, 1); }, "overlaps"));
  Vector<Real> host(5);
  EXPECT_TRUE(test::ThrowsWith([&] { host.MulTp(TpMatrix<Real>(4), kTrans); }, "4x4"));
  EXPECT_TRUE(test::ThrowsWith(
      [&] { host.AddTpVec(1, TpMatrix<Real>(5), kTrans, Vector<Real>(4), 0); }, "dim 4"));
}

TYPED_TEST(CuVectorPackedTest, FrobeniusNormMatchesDenseMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes) {
    const Matrix<Real> m = test::RandomMatrix<Real>(n, n, &rng);
    const SpMatrix<Real> sp(m, kTakeLower);
    Matrix<Real> full(n, n);
    sp.CopyToMat(&full);
    double ss = 0;
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) ss += static_cast<double>(full(r, c)) * full(r, c);
    EXPECT_TRUE(
        test::ScalarNear(CuSpMatrix<Real>(sp).FrobeniusNorm(), std::sqrt(ss), ProductTol<Real>(n)))
        << "n = " << n;
  }
}

}  // namespace
}  // namespace cuctx
