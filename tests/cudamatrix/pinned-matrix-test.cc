// tests/cudamatrix/pinned-matrix-test.cc: PinnedMatrix and PinnedVector as CPU classes.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/pinned-matrix.h"

#include "base/error.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/matrix-testing.h"

#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <type_traits>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
bool AllZero(const MatrixBase<Real>& m) {
  for (MatrixIndexT r = 0; r < m.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < m.NumCols(); ++c)
      if (m(r, c) != 0) return false;
  return true;
}

template <typename Real>
class PinnedMatrixTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PinnedMatrixTest, RealTypes);

TYPED_TEST(PinnedMatrixTest, ConstructsZeroedWithAlignedRows) {
  using Real = TypeParam;
  for (const test::Shape& s : test::kEdgeShapes) {
    PinnedMatrix<Real> m(s.rows, s.cols);
    EXPECT_EQ(m.NumRows(), s.rows) << s;
    EXPECT_EQ(m.NumCols(), s.cols) << s;
    if (s.rows == 0 || s.cols == 0) {
      EXPECT_EQ(m.Data(), nullptr) << s;
      EXPECT_TRUE(m.Buffer().Empty()) << s;
      continue;
    }
    EXPECT_GE(m.Stride(), m.NumCols()) << s;
    EXPECT_EQ(m.Stride() * sizeof(Real) % 16, 0u) << s;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m.Data()) % 4096, 0u) << s;
    EXPECT_TRUE(AllZero(m)) << s;
    EXPECT_EQ(m.PageLocked(), test::GpuEnabled()) << s;
    EXPECT_EQ(IsPageLocked(m.Data()), test::GpuEnabled()) << s;
    EXPECT_GE(m.Buffer().Capacity(), m.SizeInBytes()) << s;
  }
  PinnedMatrix<Real> packed(17, 33, kSetZero, kStrideEqualNumCols);
  EXPECT_EQ(packed.Stride(), 33);
  PinnedMatrix<Real> undefined(5, 6, kUndefined);
  EXPECT_EQ(undefined.NumRows(), 5);
}

TYPED_TEST(PinnedMatrixTest, CpuOperationsMatchMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : test::kEdgeShapes) {
    Matrix<Real> a(s.rows, s.cols), b(s.cols, 7);
    test::FillGauss(&a, &rng);
    test::FillGauss(&b, &rng);
    PinnedMatrix<Real> pa(a), pb(b);
    EXPECT_TRUE(test::SameElements<Real>(pa, a)) << s;

    pa.Scale(2.5);
    pa.Add(1.0);
    Matrix<Real> expected(a);
    expected.Scale(2.5);
    expected.Add(1.0);
    EXPECT_TRUE(test::SameElements<Real>(pa, expected)) << s;
    EXPECT_EQ(pa.Sum(), expected.Sum()) << s;

    // BLAS with pinned operands and output.
    PinnedMatrix<Real> product(s.rows, 7);
    product.AddMatMat(1.0, pa, kNoTrans, pb, kNoTrans, 0.0);
    Matrix<Real> expected_product(s.rows, 7);
    expected_product.AddMatMat(1.0, expected, kNoTrans, b, kNoTrans, 0.0);
    EXPECT_TRUE(expected_product.ApproxEqual(product, 1e-5)) << s;

    // And the other way: a Matrix made from a PinnedMatrix.
    Matrix<Real> back(pa);
    EXPECT_TRUE(test::SameElements<Real>(back, pa)) << s;
  }
}

TYPED_TEST(PinnedMatrixTest, CopiesFromTheOtherPrecision) {
  using Real = TypeParam;
  using Other = typename std::conditional<std::is_same<Real, float>::value, double, float>::type;
  test::Rng rng = test::MakeRng(1);
  Matrix<Other> src(17, 33);
  test::FillGauss(&src, &rng);
  PinnedMatrix<Real> m(src);
  ASSERT_EQ(m.NumRows(), 17);
  ASSERT_EQ(m.NumCols(), 33);
  for (MatrixIndexT r = 0; r < 17; ++r)
    for (MatrixIndexT c = 0; c < 33; ++c) EXPECT_EQ(m(r, c), static_cast<Real>(src(r, c)));
}

TYPED_TEST(PinnedMatrixTest, ResizeKeepsTheOverlapWithCopyData) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(2);
  PinnedMatrix<Real> m(5, 7);
  test::FillGauss(&m, &rng);
  Matrix<Real> orig(m);
  m.Resize(8, 3, kCopyData);
  ASSERT_EQ(m.NumRows(), 8);
  ASSERT_EQ(m.NumCols(), 3);
  for (MatrixIndexT r = 0; r < 8; ++r)
    for (MatrixIndexT c = 0; c < 3; ++c)
      EXPECT_EQ(m(r, c), r < 5 ? orig(r, c) : Real(0)) << r << "," << c;
  m.Resize(0, 0, kCopyData);
  EXPECT_EQ(m.Data(), nullptr);
  m.Resize(2, 2, kCopyData);
  EXPECT_TRUE(AllZero(m));
}

TYPED_TEST(PinnedMatrixTest, ResizeReusesTheBlockWhenItFits) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(3);
  PinnedMatrix<Real> m(64, 64);
  test::FillGauss(&m, &rng);
  const void* block = m.Buffer().Data();
  m.Resize(10, 20);
  EXPECT_EQ(m.Buffer().Data(), block);
  EXPECT_TRUE(AllZero(m));
  m.Resize(64, 64, kUndefined);
  EXPECT_EQ(m.Buffer().Data(), block);
  m.Resize(65, 64);
  EXPECT_EQ(m.NumRows(), 65);
  EXPECT_TRUE(AllZero(m));
  EXPECT_THROW(m.Resize(-1, 3), Error);
  EXPECT_THROW(PinnedMatrix<Real>(3, -1), Error);
}

TYPED_TEST(PinnedMatrixTest, CopyMoveSwapAndSelfAssignment) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(4);
  PinnedMatrix<Real> a(6, 9);
  test::FillGauss(&a, &rng);
  PinnedMatrix<Real> b(a);
  EXPECT_TRUE(test::SameElements<Real>(a, b));
  EXPECT_NE(a.Data(), b.Data());

  const Real* data = a.Data();
  PinnedMatrix<Real> c(std::move(a));
  EXPECT_EQ(c.Data(), data);
  EXPECT_EQ(a.NumRows(), 0);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(a.Data(), nullptr);

  PinnedMatrix<Real> d(2, 2);
  d = std::move(c);
  EXPECT_EQ(d.Data(), data);
  EXPECT_TRUE(test::SameElements<Real>(d, b));

  PinnedMatrix<Real> e;
  e = b;
  EXPECT_TRUE(test::SameElements<Real>(e, b));
  e = e;  // self-assignment keeps the contents
  EXPECT_TRUE(test::SameElements<Real>(e, b));

  // Assigning a view of our own storage copies it out before reusing the storage.
  Matrix<Real> corner(b.Range(1, 3, 2, 4));
  e = static_cast<const MatrixBase<Real>&>(e.Range(1, 3, 2, 4));
  EXPECT_TRUE(test::SameElements<Real>(e, corner));

  e.Swap(&d);
  EXPECT_EQ(e.Data(), data);
  EXPECT_TRUE(test::SameElements<Real>(d, corner));
}

TYPED_TEST(PinnedMatrixTest, CopiesToTheDeviceAndBack) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(5);
  PinnedMatrix<Real> m(257, 3), back(257, 3);
  test::FillGauss(&m, &rng);
  const size_t row_bytes = 3 * sizeof(Real), pitch = 256;
  CuDevice& device = CuDevice::Instantiate();
  std::vector<unsigned char> host_dev;
  void* d = nullptr;
  if (device.Enabled()) {
    d = device.Malloc(pitch * 257);
  } else {
    host_dev.resize(pitch * 257);
    d = host_dev.data();
  }
  CuCopyStats before = GetCopyStats();
  CopyHostToDevice2D(d, pitch, m.Data(), m.Stride() * sizeof(Real), row_bytes, 257);
  CopyDeviceToHost2D(back.Data(), back.Stride() * sizeof(Real), d, pitch, row_bytes, 257);
  CuCopyStats after = GetCopyStats();
  if (device.Enabled()) {
    device.Free(d);
    // Host->device asks whether the memory is page-locked; a device->host copy this small is one
    // driver copy and a wait on any host memory, and is not asked about.
    EXPECT_EQ(after.num_pinned - before.num_pinned, 1) << "pinned storage is copied directly";
    EXPECT_EQ(after.num_pageable_direct - before.num_pageable_direct, 1);
  } else {
    EXPECT_EQ(after.num_host_only - before.num_host_only, 2);
  }
  EXPECT_TRUE(test::SameElements<Real>(back, m));
}

// ---- PinnedVector
// --------------------------------------------------------------------------------

template <typename Real>
class PinnedVectorTest : public ::testing::Test {};
TYPED_TEST_SUITE(PinnedVectorTest, RealTypes);

TYPED_TEST(PinnedVectorTest, ConstructsZeroedAndWorksWithCpuOps) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(6);
  for (MatrixIndexT dim : {0, 1, 17, 4097}) {
    PinnedVector<Real> v(dim);
    ASSERT_EQ(v.Dim(), dim);
    EXPECT_EQ(v.PageLocked(), dim > 0 && test::GpuEnabled());
    for (MatrixIndexT i = 0; i < dim; ++i) EXPECT_EQ(v(i), Real(0));
    Vector<Real> a(dim);
    test::FillGauss(&a, &rng);
    v.CopyFromVec(a);
    v.AddVec(2.0, a);
    Vector<Real> expected(a);
    expected.Scale(3.0);
    EXPECT_TRUE(expected.ApproxEqual(v, 1e-6)) << dim;
    EXPECT_NEAR(VecVec(v, a), VecVec(expected, a), 1e-3 * (1 + std::abs(VecVec(expected, a))));
  }
  EXPECT_THROW(PinnedVector<Real>(-1), Error);
}

TYPED_TEST(PinnedVectorTest, ResizeCopyMoveAndConversion) {
  using Real = TypeParam;
  using Other = typename std::conditional<std::is_same<Real, float>::value, double, float>::type;
  test::Rng rng = test::MakeRng(7);
  PinnedVector<Real> v(10);
  test::FillGauss(&v, &rng);
  Vector<Real> orig(v);
  v.Resize(25, kCopyData);
  for (MatrixIndexT i = 0; i < 25; ++i) EXPECT_EQ(v(i), i < 10 ? orig(i) : Real(0)) << i;
  const void* block = v.Buffer().Data();
  v.Resize(5, kCopyData);  // fits: same block, first 5 kept
  EXPECT_EQ(v.Buffer().Data(), block);
  for (MatrixIndexT i = 0; i < 5; ++i) EXPECT_EQ(v(i), orig(i));
  v.Resize(8, kCopyData);
  for (MatrixIndexT i = 5; i < 8; ++i) EXPECT_EQ(v(i), Real(0)) << i;
  v.Resize(3000, kCopyData);  // a new block
  for (MatrixIndexT i = 0; i < 5; ++i) EXPECT_EQ(v(i), orig(i));
  for (MatrixIndexT i = 5; i < 3000; ++i) ASSERT_EQ(v(i), Real(0)) << i;

  PinnedVector<Real> copy(v);
  EXPECT_NE(copy.Data(), v.Data());
  EXPECT_EQ(copy(2), v(2));
  const Real* data = v.Data();
  PinnedVector<Real> moved(std::move(v));
  EXPECT_EQ(moved.Data(), data);
  EXPECT_EQ(v.Dim(), 0);     // NOLINT(bugprone-use-after-move): moved-from state is specified
  copy = moved.Range(1, 4);  // a view of another vector
  EXPECT_EQ(copy.Dim(), 4);
  EXPECT_EQ(copy(0), moved(1));
  copy = copy.Range(1, 2);  // a view of our own storage
  EXPECT_EQ(copy.Dim(), 2);
  EXPECT_EQ(copy(0), moved(2));

  Vector<Other> other(6);
  test::FillGauss(&other, &rng);
  PinnedVector<Real> converted(other);
  for (MatrixIndexT i = 0; i < 6; ++i) EXPECT_EQ(converted(i), static_cast<Real>(other(i)));
  converted.Swap(&copy);
  EXPECT_EQ(converted.Dim(), 2);
  EXPECT_EQ(copy.Dim(), 6);
}

}  // namespace
}  // namespace cuctx
