// tests/matrix/matrix-test.cc: Matrix/SubMatrix storage, copies and gathers, fills, reductions.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"

#include "base/random.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <sstream>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
class MatrixTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixTest, RealTypes);

// ---- storage
// ----------------------------------------------------------------------------------------

TYPED_TEST(MatrixTest, ConstructorZeroesAndAlignsRows) {
  using Real = TypeParam;
  for (const test::Shape& s : test::kEdgeShapes) {
    Matrix<Real> m(s.rows, s.cols);
    EXPECT_EQ(m.NumRows(), s.rows) << s;
    EXPECT_EQ(m.NumCols(), s.cols) << s;
    EXPECT_TRUE(m.IsZero(0)) << s;
    if (s.rows > 0 && s.cols > 0) {
      EXPECT_EQ(m.Stride() * sizeof(Real) % 16, 0u) << s;
      EXPECT_GE(m.Stride(), m.NumCols()) << s;
      for (MatrixIndexT r = 0; r < s.rows; ++r)
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(m.RowData(r)) % 16, 0u) << s << " row " << r;
    }
    Matrix<Real> packed(s.rows, s.cols, kSetZero, kStrideEqualNumCols);
    if (s.rows > 0 && s.cols > 0) {
      EXPECT_EQ(packed.Stride(), s.cols) << s;
    }
    EXPECT_TRUE(packed.IsZero(0)) << s;
  }
}

TYPED_TEST(MatrixTest, EmptyShapesAreLegalNoOps) {
  using Real = TypeParam;
  for (auto dims : {std::pair<int, int>{0, 0}, {0, 5}, {5, 0}}) {
    Matrix<Real> m(dims.first, dims.second);
    Matrix<Real> other(dims.first, dims.second);
    m.SetZero();
    m.Set(3);
    m.Scale(2);
    m.Add(1);
    m.ApplyExp();
    m.AddMat(1.0, other);
    m.CopyFromMat(other);
    m.SoftMaxPerRow(other);
    EXPECT_EQ(m.Sum(), 0);
    EXPECT_EQ(m.FrobeniusNorm(), 0);
    EXPECT_TRUE(m.ApproxEqual(other));
    EXPECT_EQ(m.NumRows(), dims.first);
    EXPECT_EQ(m.NumCols(), dims.second);
  }
}

TYPED_TEST(MatrixTest, ThrowsOnNegativeDimension) {
  using Real = TypeParam;
  EXPECT_THROW(Matrix<Real>(-1, 3), Error);
  Matrix<Real> m;
  EXPECT_TRUE(test::ThrowsWith([&] { m.Resize(2, -4); }, "-4"));
}

TYPED_TEST(MatrixTest, ResizeWithCopyDataKeepsOverlap) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(7, 9, &rng);
  const Matrix<Real> orig(m);
  m.Resize(4, 12, kCopyData);
  ASSERT_EQ(m.NumRows(), 4);
  ASSERT_EQ(m.NumCols(), 12);
  for (MatrixIndexT r = 0; r < 4; ++r)
    for (MatrixIndexT c = 0; c < 12; ++c) EXPECT_EQ(m(r, c), c < 9 ? orig(r, c) : Real(0));
  m.Resize(4, 12, kCopyData, kStrideEqualNumCols);
  EXPECT_EQ(m.Stride(), 12);
  EXPECT_EQ(m(3, 8), orig(3, 8));
}

TYPED_TEST(MatrixTest, ResizeSetZeroAndUndefinedChangeShape) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(3, 5, &rng);
  m.Resize(3, 5);
  EXPECT_TRUE(m.IsZero(0));
  m.Resize(6, 2, kUndefined);
  EXPECT_EQ(m.NumRows(), 6);
  EXPECT_EQ(m.NumCols(), 2);
  m.Resize(0, 0);
  EXPECT_EQ(m.NumRows(), 0);
  EXPECT_EQ(m.Data(), nullptr);
}

TYPED_TEST(MatrixTest, SwapAndMoveExchangeStorage) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> a = test::RandomMatrix<Real>(3, 4, &rng), b = test::RandomMatrix<Real>(5, 2, &rng);
  const Real* a_data = a.Data();
  const Matrix<Real> a_copy(a), b_copy(b);
  a.Swap(&b);
  EXPECT_EQ(b.Data(), a_data);
  EXPECT_TRUE(a.Equal(b_copy));
  EXPECT_TRUE(b.Equal(a_copy));
  Matrix<Real> c(std::move(b));
  EXPECT_EQ(c.Data(), a_data);
  EXPECT_EQ(b.NumRows(), 0);
  b = std::move(c);
  EXPECT_TRUE(b.Equal(a_copy));
}

TYPED_TEST(MatrixTest, TransposeMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : test::kEdgeShapes) {
    Matrix<Real> m = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    const Matrix<Real> orig(m);
    m.Transpose();
    ASSERT_EQ(m.NumRows(), s.cols) << s;
    ASSERT_EQ(m.NumCols(), s.rows) << s;
    for (MatrixIndexT r = 0; r < s.cols; ++r)
      for (MatrixIndexT c = 0; c < s.rows; ++c) ASSERT_EQ(m(r, c), orig(c, r)) << s;
  }
}

TYPED_TEST(MatrixTest, ConstructorsCopyAcrossPrecisionAndTranspose) {
  using Real = TypeParam;
  using Other = typename std::conditional<std::is_same<Real, float>::value, double, float>::type;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Other> src(s.rows, s.cols, strided, &rng);
    Matrix<Real> same(src.View());
    Matrix<Real> trans(src.View(), kTrans);
    EXPECT_TRUE(test::ExpectNear(same, src.View(), test::Tol<float>()));
    Matrix<double> expected_t(s.cols, s.rows);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) expected_t(c, r) = src.View()(r, c);
    EXPECT_TRUE(test::ExpectNear(trans, expected_t, test::Tol<float>()));
    Matrix<Real> copy(same);
    EXPECT_TRUE(copy.Equal(same));
  });
}

TYPED_TEST(MatrixTest, AssignmentHandlesViewsOfItself) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(6, 7, &rng);
  const Matrix<Real> block(m.Range(1, 3, 2, 4));
  m = m.Range(1, 3, 2, 4);
  EXPECT_TRUE(m.Equal(block));
  Matrix<Real> n = test::RandomMatrix<Real>(3, 4, &rng);
  m = n;
  EXPECT_TRUE(m.Equal(n));
  m = m;
  EXPECT_TRUE(m.Equal(n));
}

TYPED_TEST(MatrixTest, RemoveRowShiftsLaterRows) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(5, 3, &rng);
  const Matrix<Real> orig(m);
  m.RemoveRow(1);
  ASSERT_EQ(m.NumRows(), 4);
  EXPECT_TRUE(m.Row(0).ApproxEqual(orig.Row(0), 0));
  EXPECT_TRUE(m.Row(1).ApproxEqual(orig.Row(2), 0));
  EXPECT_TRUE(m.Row(3).ApproxEqual(orig.Row(4), 0));
  EXPECT_TRUE(test::ThrowsWith([&] { m.RemoveRow(4); }, "4"));
}

TYPED_TEST(MatrixTest, ViewsShareStorage) {
  using Real = TypeParam;
  Matrix<Real> m(6, 8);
  SubMatrix<Real> block = m.Range(1, 3, 2, 4);
  EXPECT_EQ(block.Stride(), m.Stride());
  block.Set(5);
  EXPECT_EQ(m(1, 2), 5);
  EXPECT_EQ(m(3, 5), 5);
  EXPECT_EQ(m(0, 2), 0);
  EXPECT_EQ(m(1, 6), 0);
  m.RowRange(4, 2).Set(1);
  EXPECT_EQ(m(5, 7), 1);
  m.ColRange(0, 1).Set(2);
  EXPECT_EQ(m(3, 0), 2);
  SubVector<Real> row = m.Row(2);
  row(3) = 9;
  EXPECT_EQ(m(2, 3), 9);
  EXPECT_EQ(row.Data(), m.RowData(2));
  SubMatrix<Real> raw(m.Data(), 2, 3, m.Stride());
  EXPECT_EQ(raw(1, 2), m(1, 2));
  const Matrix<Real>& cm = m;
  EXPECT_EQ(cm.Range(0, 1, 0, 1)(0, 0), m(0, 0));
}

TYPED_TEST(MatrixTest, ThrowsOnViewOutOfRange) {
  using Real = TypeParam;
  Matrix<Real> m(4, 5);
  EXPECT_TRUE(test::ThrowsWith([&] { m.Range(2, 3, 0, 1); }, "4x5"));
  EXPECT_THROW(m.ColRange(3, 3), Error);
  EXPECT_THROW(m.RowRange(-1, 1), Error);
  EXPECT_TRUE(test::ThrowsWith([&] { m.Row(4); }, "4"));
  EXPECT_THROW(SubMatrix<Real>(m.Data(), 2, 5, 3), Error);
  EXPECT_THROW(SubMatrix<Real>(nullptr, 2, 2, 2), Error);
  EXPECT_NO_THROW(SubMatrix<Real>(nullptr, 0, 2, 2));
}

// ---- copies
// ----------------------------------------------------------------------------------------

TYPED_TEST(MatrixTest, CopyFromMatMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> src(s.rows, s.cols, strided, &rng);
    test::TestMatrix<Real> dst(s.rows, s.cols, !strided, &rng);
    dst.View().CopyFromMat(src.View());
    EXPECT_TRUE(dst.View().Equal(src.View()));
    EXPECT_TRUE(dst.PaddingUnchanged());
    test::TestMatrix<Real> dst_t(s.cols, s.rows, strided, &rng);
    dst_t.View().CopyFromMat(src.View(), kTrans);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) ASSERT_EQ(dst_t.View()(c, r), src.View()(r, c));
    EXPECT_TRUE(dst_t.PaddingUnchanged());
    Matrix<double> wide(s.rows, s.cols);
    wide.CopyFromMat(src.View());
    EXPECT_TRUE(test::ExpectNear(wide, src.View(), 0));
    Matrix<Real> back(s.rows, s.cols);
    src.View().CopyToMat(&back);
    EXPECT_TRUE(back.Equal(src.View()));
    Matrix<double> back_t(s.cols, s.rows);
    src.View().CopyToMat(&back_t, kTrans);
    EXPECT_TRUE(test::ExpectNear(back_t, Matrix<Real>(src.View(), kTrans), 0));
  });
}

TYPED_TEST(MatrixTest, CopyFromMatThrowsOnShapeMismatch) {
  using Real = TypeParam;
  Matrix<Real> a(3, 4), b(4, 3), c(2, 2);
  EXPECT_TRUE(test::ThrowsWith([&] { a.CopyFromMat(b); }, "3x4"));
  EXPECT_TRUE(test::ThrowsWith([&] { a.CopyFromMat(b); }, "4x3"));
  EXPECT_NO_THROW(a.CopyFromMat(b, kTrans));
  EXPECT_TRUE(test::ThrowsWith([&] { a.CopyFromMat(c, kTrans); }, "2x2"));
}

TYPED_TEST(MatrixTest, CopyFromMatHandlesAliasing) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(5, 5, &rng);
  const Matrix<Real> orig(m);
  m.CopyFromMat(m);
  EXPECT_TRUE(m.Equal(orig));
  m.CopyFromMat(m, kTrans);
  EXPECT_TRUE(m.Equal(Matrix<Real>(orig, kTrans)));
  EXPECT_TRUE(
      test::ThrowsWith([&] { m.Range(0, 3, 0, 3).CopyFromMat(m.Range(1, 3, 1, 3)); }, "overlaps"));
  // Disjoint column ranges of one matrix do not overlap.
  EXPECT_NO_THROW(m.ColRange(0, 2).CopyFromMat(m.ColRange(3, 2)));
  EXPECT_TRUE(m.ColRange(0, 2).Equal(m.ColRange(3, 2)));
}

TYPED_TEST(MatrixTest, CopyRowsAndColsFromVecUseBothModes) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    Vector<double> all = test::RandomVector<double>(s.rows * s.cols, &rng);
    m.View().CopyRowsFromVec(all);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        ASSERT_EQ(m.View()(r, c), static_cast<Real>(all(r * s.cols + c)));
    m.View().CopyColsFromVec(all);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        ASSERT_EQ(m.View()(r, c), static_cast<Real>(all(c * s.rows + r)));
    if (s.rows > 1 && s.cols > 1) {
      Vector<Real> row = test::RandomVector<Real>(s.cols, &rng);
      m.View().CopyRowsFromVec(row);
      for (MatrixIndexT r = 0; r < s.rows; ++r) ASSERT_TRUE(m.View().Row(r).ApproxEqual(row, 0));
      Vector<Real> col = test::RandomVector<Real>(s.rows, &rng);
      m.View().CopyColsFromVec(col);
      for (MatrixIndexT r = 0; r < s.rows; ++r)
        for (MatrixIndexT c = 0; c < s.cols; ++c) ASSERT_EQ(m.View()(r, c), col(r));
    }
    EXPECT_TRUE(m.PaddingUnchanged());
  });
}

TYPED_TEST(MatrixTest, CopyRowsFromVecThrowsOnBadDimension) {
  using Real = TypeParam;
  Matrix<Real> m(3, 4);
  Vector<Real> v(5);
  EXPECT_TRUE(test::ThrowsWith([&] { m.CopyRowsFromVec(v); }, "5"));
  EXPECT_TRUE(test::ThrowsWith([&] { m.CopyColsFromVec(v); }, "3x4"));
}

TYPED_TEST(MatrixTest, CopyRowColDiagFromVecMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(4, 6, &rng);
  Vector<Real> row = test::RandomVector<Real>(6, &rng), col = test::RandomVector<Real>(4, &rng);
  m.CopyRowFromVec(row, 2);
  EXPECT_TRUE(m.Row(2).ApproxEqual(row, 0));
  m.CopyColFromVec(col, 5);
  for (MatrixIndexT r = 0; r < 4; ++r) EXPECT_EQ(m(r, 5), col(r));
  m.CopyDiagFromVec(col);
  for (MatrixIndexT i = 0; i < 4; ++i) EXPECT_EQ(m(i, i), col(i));
  EXPECT_TRUE(test::ThrowsWith([&] { m.CopyColFromVec(col, 6); }, "6"));
  EXPECT_TRUE(test::ThrowsWith([&] { m.CopyRowFromVec(col, 0); }, "4"));
  EXPECT_THROW(m.CopyDiagFromVec(row), Error);
}

TYPED_TEST(MatrixTest, CopyRowsMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Matrix<Real> src = test::RandomMatrix<Real>(s.rows + 2, s.cols, &rng);
    test::TestMatrix<Real> dst(s.rows, s.cols, strided, &rng);
    std::vector<int32_t> idx = test::RandomIndices(s.rows, s.rows + 2, true, &rng);
    dst.View().CopyRows(src, idx.data());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        ASSERT_EQ(dst.View()(r, c), idx[r] < 0 ? Real(0) : src(idx[r], c));
    EXPECT_TRUE(dst.PaddingUnchanged());
    // The pointer form: nullptr rows become zero.
    std::vector<const Real*> ptrs(s.rows);
    for (MatrixIndexT r = 0; r < s.rows; ++r) ptrs[r] = idx[r] < 0 ? nullptr : src.RowData(idx[r]);
    test::TestMatrix<Real> dst2(s.rows, s.cols, strided, &rng);
    dst2.View().CopyRows(ptrs.data());
    EXPECT_TRUE(dst2.View().Equal(dst.View()));
    EXPECT_TRUE(dst2.PaddingUnchanged());
  });
}

TYPED_TEST(MatrixTest, CopyRowsThrowsOnBadIndexOrOverlap) {
  using Real = TypeParam;
  Matrix<Real> src(4, 3), dst(2, 3), wrong(2, 4);
  const MatrixIndexT bad[2] = {0, 4};
  EXPECT_TRUE(test::ThrowsWith([&] { dst.CopyRows(src, bad); }, "indexes[1] = 4"));
  const MatrixIndexT good[2] = {0, 1};
  EXPECT_TRUE(test::ThrowsWith([&] { wrong.CopyRows(src, good); }, "3"));
  EXPECT_TRUE(test::ThrowsWith([&] { src.RowRange(0, 2).CopyRows(src, good); }, "overlaps"));
}

TYPED_TEST(MatrixTest, CopyToRowsMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> src(s.rows, s.cols, strided, &rng);
    Matrix<Real> dst = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    const Matrix<Real> orig(dst);
    std::vector<Real*> ptrs(s.rows);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      ptrs[r] = r % 3 == 1 ? nullptr : dst.RowData(s.rows - 1 - r);
    src.View().CopyToRows(ptrs.data());
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      const MatrixIndexT target = s.rows - 1 - r;
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        ASSERT_EQ(dst(target, c), r % 3 == 1 ? orig(target, c) : src.View()(r, c));
    }
  });
}

TYPED_TEST(MatrixTest, CopyColsMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> src(s.rows, s.cols + 1, !strided, &rng);
    test::TestMatrix<Real> dst(s.rows, s.cols, strided, &rng);
    std::vector<int32_t> idx = test::RandomIndices(s.cols, s.cols + 1, true, &rng);
    dst.View().CopyCols(src.View(), idx.data());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        ASSERT_EQ(dst.View()(r, c), idx[c] < 0 ? Real(0) : src.View()(r, idx[c]));
    EXPECT_TRUE(dst.PaddingUnchanged());
  });
  Matrix<Real> a(3, 2), b(4, 2);
  const MatrixIndexT idx[2] = {0, 2};
  EXPECT_TRUE(test::ThrowsWith([&] { a.CopyCols(b, idx); }, "4"));
  Matrix<Real> c(3, 2);
  EXPECT_TRUE(test::ThrowsWith([&] { a.CopyCols(c, idx); }, "indexes[1] = 2"));
}

TYPED_TEST(MatrixTest, AddRowsMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Real alpha = 0.75;
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Matrix<Real> src = test::RandomMatrix<Real>(s.rows + 1, s.cols, &rng);
    test::TestMatrix<Real> dst(s.rows, s.cols, strided, &rng);
    Matrix<double> expected = test::ToDouble(dst.View());
    std::vector<int32_t> idx = test::RandomIndices(s.rows, s.rows + 1, true, &rng);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        if (idx[r] >= 0) expected(r, c) += alpha * static_cast<double>(src(idx[r], c));
    test::TestMatrix<Real> dst2(s.rows, s.cols, strided, &rng);
    dst2.View().CopyFromMat(dst.View());
    dst.View().AddRows(alpha, src, idx.data());
    EXPECT_TRUE(test::ExpectNear(dst.View(), expected, test::Tol<Real>()));
    EXPECT_TRUE(dst.PaddingUnchanged());
    std::vector<const Real*> ptrs(s.rows);
    for (MatrixIndexT r = 0; r < s.rows; ++r) ptrs[r] = idx[r] < 0 ? nullptr : src.RowData(idx[r]);
    dst2.View().AddRows(alpha, ptrs.data());
    EXPECT_TRUE(test::ExpectNear(dst2.View(), expected, test::Tol<Real>()));
  });
}

TYPED_TEST(MatrixTest, AddToRowsMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Real alpha = -1.5;
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> src(s.rows, s.cols, strided, &rng);
    Matrix<Real> dst = test::RandomMatrix<Real>(s.rows + 2, s.cols, &rng);
    Matrix<double> expected = test::ToDouble(dst);
    // Distinct destination rows (a reversed order), some skipped.
    std::vector<int32_t> idx(s.rows);
    for (MatrixIndexT r = 0; r < s.rows; ++r) idx[r] = r % 4 == 2 ? -1 : s.rows + 1 - r;
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        if (idx[r] >= 0) expected(idx[r], c) += alpha * static_cast<double>(src.View()(r, c));
    Matrix<Real> dst2(dst);
    src.View().AddToRows(alpha, idx.data(), &dst);
    EXPECT_TRUE(test::ExpectNear(dst, expected, test::Tol<Real>()));
    std::vector<Real*> ptrs(s.rows);
    for (MatrixIndexT r = 0; r < s.rows; ++r) ptrs[r] = idx[r] < 0 ? nullptr : dst2.RowData(idx[r]);
    src.View().AddToRows(alpha, ptrs.data());
    EXPECT_TRUE(test::ExpectNear(dst2, expected, test::Tol<Real>()));
  });
  Matrix<Real> a(2, 3), b(2, 3);
  const MatrixIndexT bad[2] = {0, 2};
  EXPECT_TRUE(test::ThrowsWith([&] { a.AddToRows(1.0, bad, &b); }, "indexes[1] = 2"));
}

TYPED_TEST(MatrixTest, AddColsMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Matrix<Real> src = test::RandomMatrix<Real>(s.rows, s.cols + 3, &rng);
    test::TestMatrix<Real> dst(s.rows, s.cols, strided, &rng);
    Matrix<double> expected = test::ToDouble(dst.View());
    std::vector<int32_t> idx = test::RandomIndices(s.cols, s.cols + 3, true, &rng);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        if (idx[c] >= 0) expected(r, c) += src(r, idx[c]);
    dst.View().AddCols(src, idx.data());
    EXPECT_TRUE(test::ExpectNear(dst.View(), expected, test::Tol<Real>()));
    EXPECT_TRUE(dst.PaddingUnchanged());
  });
}

TYPED_TEST(MatrixTest, MulRowsMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Matrix<Real> src = test::RandomMatrix<Real>(s.rows + 1, s.cols, &rng);
    test::TestMatrix<Real> dst(s.rows, s.cols, strided, &rng);
    Matrix<double> expected = test::ToDouble(dst.View());
    std::vector<int32_t> idx = test::RandomIndices(s.rows, s.rows + 1, true, &rng);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        if (idx[r] >= 0) expected(r, c) *= src(idx[r], c);
    dst.View().MulRows(src, idx.data());
    EXPECT_TRUE(test::ExpectNear(dst.View(), expected, test::Tol<Real>()));
    EXPECT_TRUE(dst.PaddingUnchanged());
  });
}

TYPED_TEST(MatrixTest, AddRowRangesMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const MatrixIndexT src_rows = 9;
    Matrix<Real> src = test::RandomMatrix<Real>(src_rows, s.cols, &rng);
    test::TestMatrix<Real> dst(s.rows, s.cols, strided, &rng);
    Matrix<double> expected = test::ToDouble(dst.View());
    std::vector<Int32Pair> ranges(s.rows);
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      if (r % 5 == 3) {
        ranges[r] = {-1, -1};  // empty
      } else {
        const int32 a = static_cast<int32>(rng.Int(0, src_rows)),
                    b = static_cast<int32>(rng.Int(0, src_rows));
        ranges[r] = {std::min(a, b), std::max(a, b)};
      }
      for (int32 j = ranges[r].first; j < ranges[r].second; ++j)
        for (MatrixIndexT c = 0; c < s.cols; ++c) expected(r, c) += src(j, c);
    }
    dst.View().AddRowRanges(src, ranges.data());
    EXPECT_TRUE(test::ExpectNear(dst.View(), expected, test::Tol<Real>()));
    EXPECT_TRUE(dst.PaddingUnchanged());
  });
  Matrix<Real> a(1, 2), src(3, 2);
  const Int32Pair bad[1] = {{1, 4}};
  EXPECT_TRUE(test::ThrowsWith([&] { a.AddRowRanges(src, bad); }, "[1, 4)"));
}

TYPED_TEST(MatrixTest, SumColumnRangesMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const MatrixIndexT src_cols = 7;
    test::TestMatrix<Real> src(s.rows, src_cols, !strided, &rng);
    test::TestMatrix<Real> dst(s.rows, s.cols, strided, &rng);
    std::vector<Int32Pair> ranges(s.cols);
    for (MatrixIndexT c = 0; c < s.cols; ++c) {
      const int32 a = static_cast<int32>(rng.Int(0, src_cols)),
                  b = static_cast<int32>(rng.Int(0, src_cols));
      ranges[c] = {std::min(a, b), std::max(a, b)};
    }
    Matrix<double> expected(s.rows, s.cols);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        for (int32 j = ranges[c].first; j < ranges[c].second; ++j)
          expected(r, c) += src.View()(r, j);
    dst.View().SumColumnRanges(src.View(), ranges.data());
    EXPECT_TRUE(test::ExpectNear(dst.View(), expected, test::Tol<Real>()));
    EXPECT_TRUE(dst.PaddingUnchanged());
  });
  Matrix<Real> a(2, 1), src(2, 3);
  const Int32Pair bad[1] = {{-2, 2}};
  EXPECT_TRUE(test::ThrowsWith([&] { a.SumColumnRanges(src, bad); }, "[-2, 2)"));
}

TYPED_TEST(MatrixTest, TriangleCopiesMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (bool strided : {false, true}) {
    test::TestMatrix<Real> m(17, 17, strided, &rng);
    const Matrix<Real> orig(m.View());
    m.View().CopyLowerToUpper();
    for (MatrixIndexT r = 0; r < 17; ++r)
      for (MatrixIndexT c = 0; c < 17; ++c)
        ASSERT_EQ(m.View()(r, c), c <= r ? orig(r, c) : orig(c, r));
    m.View().CopyFromMat(orig);
    m.View().CopyUpperToLower();
    for (MatrixIndexT r = 0; r < 17; ++r)
      for (MatrixIndexT c = 0; c < 17; ++c)
        ASSERT_EQ(m.View()(r, c), c >= r ? orig(r, c) : orig(c, r));
    EXPECT_TRUE(m.PaddingUnchanged());
  }
  Matrix<Real> rect(3, 4);
  EXPECT_TRUE(test::ThrowsWith([&] { rect.CopyLowerToUpper(); }, "3x4"));
  EXPECT_THROW(rect.CopyUpperToLower(), Error);
}

TYPED_TEST(MatrixTest, SetZeroAboveDiagMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    const Matrix<Real> orig(m.View());
    m.View().SetZeroAboveDiag();
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        ASSERT_EQ(m.View()(r, c), c > r ? Real(0) : orig(r, c));
    EXPECT_TRUE(m.PaddingUnchanged());
  });
}

TYPED_TEST(MatrixTest, LookupAndAddElementsMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.rows == 0 || s.cols == 0) return;
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    std::vector<Int32Pair> idx(20);
    for (Int32Pair& p : idx)
      p = {static_cast<int32>(rng.Int(0, s.rows - 1)), static_cast<int32>(rng.Int(0, s.cols - 1))};
    std::vector<Real> out(idx.size());
    m.View().Lookup(idx, out.data());
    for (size_t i = 0; i < idx.size(); ++i)
      ASSERT_EQ(out[i], m.View()(idx[i].first, idx[i].second));
    Matrix<double> expected = test::ToDouble(m.View());
    std::vector<MatrixElement<Real>> elems;
    std::vector<Real> weights;
    for (const Int32Pair& p : idx) {
      const Real w = static_cast<Real>(rng.Uniform(-1, 1));
      elems.push_back({p.first, p.second, w});
      weights.push_back(w);
      expected(p.first, p.second) += 2.0 * w;
    }
    Matrix<Real> copy(m.View());
    m.View().AddElements(2.0, elems);
    EXPECT_TRUE(test::ExpectNear(m.View(), expected, test::Tol<Real>()));
    copy.AddElements(2.0, idx.data(), static_cast<MatrixIndexT>(idx.size()), weights.data());
    EXPECT_TRUE(test::ExpectNear(copy, expected, test::Tol<Real>()));
    EXPECT_TRUE(m.PaddingUnchanged());
  });
  Matrix<Real> m(2, 3);
  std::vector<Int32Pair> bad = {{0, 0}, {2, 1}};
  Real out[2];
  EXPECT_TRUE(test::ThrowsWith([&] { m.Lookup(bad, out); }, "(2, 1)"));
  std::vector<MatrixElement<Real>> bad_elem = {{0, 3, Real(1)}};
  EXPECT_TRUE(test::ThrowsWith([&] { m.AddElements(1.0, bad_elem); }, "(0, 3)"));
}

TYPED_TEST(MatrixTest, AddToElementsMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    std::vector<int32_t> cols = test::RandomIndices(s.rows, s.cols, true, &rng);
    Matrix<double> expected = test::ToDouble(m.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      if (cols[r] >= 0) expected(r, cols[r]) += 0.5;
    m.View().AddToElements(0.5, cols.data());
    EXPECT_TRUE(test::ExpectNear(m.View(), expected, test::Tol<Real>()));
  });
  Matrix<Real> m(2, 3);
  const MatrixIndexT bad[2] = {0, 3};
  EXPECT_TRUE(test::ThrowsWith([&] { m.AddToElements(1.0, bad); }, "indexes[1] = 3"));
}

TYPED_TEST(MatrixTest, EqualElementMaskMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> a(s.rows, s.cols, strided, &rng);
    Matrix<Real> b(a.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        if ((r + c) % 3 == 0) b(r, c) += 1;
    Matrix<Real> mask;
    a.View().EqualElementMask(b, &mask);
    ASSERT_EQ(mask.NumRows(), s.rows);
    ASSERT_EQ(mask.NumCols(), s.cols);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) ASSERT_EQ(mask(r, c), (r + c) % 3 == 0 ? 0 : 1);
  });
  Matrix<Real> a(2, 2), b(2, 3), mask;
  EXPECT_TRUE(test::ThrowsWith([&] { a.EqualElementMask(b, &mask); }, "2x3"));
}

// ---- fills
// -------------------------------------------------------------------------------------------

TYPED_TEST(MatrixTest, FillOpsMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    Matrix<double> expected = test::ToDouble(m.View());
    m.View().Scale(-2.5);
    m.View().Add(0.25);
    m.View().AddToDiag(3);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        expected(r, c) = expected(r, c) * -2.5 + 0.25 + (r == c ? 3 : 0);
    EXPECT_TRUE(test::ExpectNear(m.View(), expected, test::Tol<Real>()));
    m.View().Set(7);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) ASSERT_EQ(m.View()(r, c), 7);
    m.View().SetUnit();
    EXPECT_TRUE(m.View().IsUnit(0));
    m.View().SetZero();
    EXPECT_TRUE(m.View().IsZero(0));
    EXPECT_TRUE(m.PaddingUnchanged());
  });
}

TYPED_TEST(MatrixTest, SetRandnAndUniformAreReproducibleWithPlausibleMoments) {
  using Real = TypeParam;
  SetRandomSeed(7);
  Matrix<Real> a(64, 65);
  a.SetRandn();
  SetRandomSeed(7);
  Matrix<Real> b(64, 65);
  b.SetRandn();
  EXPECT_TRUE(a.Equal(b));
  const double n = 64.0 * 65.0;
  const double mean = a.Sum() / n;
  const double var = a.FrobeniusNorm() * a.FrobeniusNorm() / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_NEAR(var, 1.0, 0.1);
  a.SetRandUniform();
  EXPECT_GT(a.Min(), 0);
  EXPECT_LT(a.Max(), 1);
  EXPECT_NEAR(a.Sum() / n, 0.5, 0.05);
  test::Rng rng = test::MakeRng();
  test::TestMatrix<Real> view(5, 7, true, &rng);
  view.View().SetRandn();
  EXPECT_TRUE(view.PaddingUnchanged());
}

// ---- reductions
// --------------------------------------------------------------------------------------

TYPED_TEST(MatrixTest, ReductionsMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    double sum = 0, sq = 0, trace = 0, mx = -1e300, mn = 1e300;
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      for (MatrixIndexT c = 0; c < s.cols; ++c) {
        const double x = m.View()(r, c);
        sum += x;
        sq += x * x;
        mx = std::max(mx, x);
        mn = std::min(mn, x);
        if (r == c) trace += x;
      }
    }
    // Sums accumulate in double internally, so the float tolerance only covers the final rounding.
    EXPECT_NEAR(m.View().Sum(), sum, 1e-5 * (1 + std::abs(sum)) + 1e-6);
    EXPECT_TRUE(test::ScalarNear(m.View().FrobeniusNorm(), std::sqrt(sq), test::Tol<Real>()));
    EXPECT_NEAR(m.View().Trace(false), trace, 1e-5);
    if (s.rows > 0 && s.cols > 0) {
      EXPECT_EQ(m.View().Max(), static_cast<Real>(mx));
      EXPECT_EQ(m.View().Min(), static_cast<Real>(mn));
    }
  });
}

TYPED_TEST(MatrixTest, ReductionsThrowOnEmptyOrNonSquare) {
  using Real = TypeParam;
  Matrix<Real> empty(0, 4), rect(2, 3);
  EXPECT_TRUE(test::ThrowsWith([&] { empty.Max(); }, "0x4"));
  EXPECT_THROW(empty.Min(), Error);
  EXPECT_TRUE(test::ThrowsWith([&] { rect.Trace(); }, "2x3"));
  EXPECT_NO_THROW(rect.Trace(false));
}

TYPED_TEST(MatrixTest, ApproxEqualUsesRelativeFrobeniusNorm) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> a = test::RandomMatrix<Real>(10, 10, &rng);
  Matrix<Real> b(a);
  b(3, 4) += Real(0.05) * a.FrobeniusNorm();
  EXPECT_TRUE(a.ApproxEqual(b, 0.06f));
  EXPECT_FALSE(a.ApproxEqual(b, 0.04f));
  EXPECT_TRUE(ApproxEqual(a, b, 0.06f));
  EXPECT_FALSE(a.Equal(b));
  EXPECT_NO_THROW(AssertEqual(a, b, 0.06f));
  EXPECT_TRUE(test::ThrowsWith([&] { AssertEqual(a, b, 0.04f); }, "differ"));
  Matrix<Real> c(10, 9);
  EXPECT_TRUE(test::ThrowsWith([&] { a.ApproxEqual(c); }, "10x9"));
}

TYPED_TEST(MatrixTest, StructurePredicatesMatchDefinitions) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m(5, 5);
  m.SetUnit();
  EXPECT_TRUE(m.IsUnit());
  EXPECT_TRUE(m.IsDiagonal());
  EXPECT_TRUE(m.IsSymmetric());
  EXPECT_FALSE(m.IsZero());
  m(1, 3) = 0.5;
  EXPECT_FALSE(m.IsUnit());
  EXPECT_FALSE(m.IsDiagonal());
  EXPECT_FALSE(m.IsSymmetric());
  m(3, 1) = 0.5;
  EXPECT_TRUE(m.IsSymmetric());
  m.SetZero();
  m(2, 2) = 1e-7;
  EXPECT_TRUE(m.IsZero());
  EXPECT_FALSE(m.IsZero(1e-8));
  Matrix<Real> rect = test::RandomMatrix<Real>(3, 4, &rng);
  EXPECT_FALSE(rect.IsSymmetric());
  Matrix<Real> rect_unit(3, 4);
  rect_unit.SetUnit();
  EXPECT_TRUE(rect_unit.IsUnit());
}

TYPED_TEST(MatrixTest, SameDimComparesShapesAndStrides) {
  using Real = TypeParam;
  Matrix<Real> a(3, 5), b(3, 5, kSetZero, kStrideEqualNumCols);
  Matrix<double> c(3, 5);
  EXPECT_TRUE(SameDim(a, b));
  EXPECT_TRUE(SameDim(a, c));
  EXPECT_FALSE(SameDimAndStride(a, b));
  EXPECT_TRUE(SameDimAndStride(a, Matrix<Real>(3, 5)));
  EXPECT_FALSE(SameDim(a, Matrix<Real>(5, 3)));
}

TYPED_TEST(MatrixTest, OutputOperatorWritesKaldiText) {
  using Real = TypeParam;
  Matrix<Real> m(2, 2);
  m(0, 0) = 1;
  m(1, 1) = 2;
  std::ostringstream os;
  os << m;
  EXPECT_NE(os.str().find('['), std::string::npos);
  EXPECT_NE(os.str().find(']'), std::string::npos);
  EXPECT_NE(os.str().find('2'), std::string::npos);
}

}  // namespace
}  // namespace cuctx
