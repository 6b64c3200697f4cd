// tests/cudamatrix/cu-host-conversions-test.cc: the matrix/ <-> Cu conversions declared in matrix/
// headers (Matrix, Vector, SpMatrix, TpMatrix from Cu objects), CuMatrix from packed matrices,
// CuSubVector of a row and the CuSparseMatrix copies, checked element by element.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-sp-matrix.h"
#include "cudamatrix/cu-sparse-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/sparse-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <gtest/gtest.h>
#include <type_traits>

namespace cuctx {
namespace {

// The other precision.
template <typename Real>
using Other = std::conditional_t<std::is_same<Real, float>::value, double, float>;

// Element-by-element: dst(r, c) == op(src)(r, c) after a conversion to Dst (exact: a float
// converted to double and back is the same value; a double rounded to float is what the cast
// gives).
template <typename Dst, typename Src>
void ExpectConverted(const MatrixBase<Dst>& dst, const MatrixBase<Src>& src,
                     MatrixTransposeType trans) {
  const MatrixIndexT rows = trans == kNoTrans ? src.NumRows() : src.NumCols();
  const MatrixIndexT cols = trans == kNoTrans ? src.NumCols() : src.NumRows();
  ASSERT_EQ(dst.NumRows(), rows);
  ASSERT_EQ(dst.NumCols(), cols);
  for (MatrixIndexT r = 0; r < rows; ++r)
    for (MatrixIndexT c = 0; c < cols; ++c)
      ASSERT_EQ(dst(r, c), static_cast<Dst>(trans == kNoTrans ? src(r, c) : src(c, r)))
          << "at (" << r << ", " << c << ") seed " << test::Seed();
}

template <typename Real>
class CuHostConversionsTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuHostConversionsTest, RealTypes);

TYPED_TEST(CuHostConversionsTest, MatrixFromCuMatrixMatchesBothPrecisionsAndTransposes) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
    const Matrix<Real> host = test::RandomMatrix<Real>(7, 13, &rng);
    const CuMatrix<Real> cu(host);
    ExpectConverted(Matrix<Real>(cu, trans), host, trans);
    ExpectConverted(Matrix<Other<Real>>(cu, trans), host, trans);
  }
}

TYPED_TEST(CuHostConversionsTest, MatrixFromStridedCuSubMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(1);
  const Matrix<Real> host = test::RandomMatrix<Real>(9, 17, &rng);
  const CuMatrix<Real> cu(host);
  const CuSubMatrix<Real> view = cu.Range(2, 5, 3, 11);  // stride > cols
  const SubMatrix<Real> host_view = host.Range(2, 5, 3, 11);
  for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
    ExpectConverted(Matrix<Real>(view, trans), host_view, trans);
    ExpectConverted(Matrix<Other<Real>>(view, trans), host_view, trans);
  }
}

TYPED_TEST(CuHostConversionsTest, CopyFromMatIntoStridedHostViewLeavesTheRestAlone) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(2);
  const Matrix<Other<Real>> src = test::RandomMatrix<Other<Real>>(4, 6, &rng);
  const CuMatrix<Other<Real>> cu(src);
  Matrix<Real> big(8, 10);
  big.Set(7);
  SubMatrix<Real> view = big.Range(1, 6, 2, 4);  // receives src^T
  view.CopyFromMat(cu, kTrans);
  ExpectConverted(view, src, kTrans);
  for (MatrixIndexT r = 0; r < 8; ++r)
    for (MatrixIndexT c = 0; c < 10; ++c)
      if (r < 1 || r >= 7 || c < 2 || c >= 6) {
        ASSERT_EQ(big(r, c), Real(7));
      }
}

TYPED_TEST(CuHostConversionsTest, EmptyShapesConvert) {
  using Real = TypeParam;
  for (auto shape : {std::make_pair(0, 0), std::make_pair(0, 5), std::make_pair(5, 0)}) {
    const CuMatrix<Real> cu(shape.first, shape.second);
    const Matrix<Other<Real>> m(cu, kTrans);
    EXPECT_EQ(m.NumRows(), shape.second);
    EXPECT_EQ(m.NumCols(), shape.first);
    Matrix<Real> same(shape.first, shape.second);
    same.CopyFromMat(cu);
  }
  const CuVector<Real> empty;
  EXPECT_EQ(Vector<Other<Real>>(empty).Dim(), 0);
  EXPECT_EQ(SpMatrix<Real>(CuSpMatrix<Real>()).NumRows(), 0);
  EXPECT_EQ(TpMatrix<Real>(CuTpMatrix<Real>()).NumRows(), 0);
  EXPECT_EQ(CuMatrix<Real>(CuSpMatrix<Real>()).NumRows(), 0);
  EXPECT_EQ(CuMatrix<Real>(CuTpMatrix<Other<Real>>(), kTrans).NumRows(), 0);
}

TYPED_TEST(CuHostConversionsTest, CopyFromMatWithWrongShapeThrowsNamingBoth) {
  using Real = TypeParam;
  const CuMatrix<Real> cu(3, 4);
  Matrix<Real> m(3, 4);
  test::ExpectErrorContaining([&] { m.CopyFromMat(cu, kTrans); }, "MatrixBase::CopyFromMat");
  test::ExpectErrorContaining([&] { m.CopyFromMat(cu, kTrans); }, "3x4");
  Vector<Real> v(5);
  test::ExpectErrorContaining([&] { v.CopyFromVec(CuVector<Real>(4)); }, "VectorBase::CopyFromVec");
}

TYPED_TEST(CuHostConversionsTest, VectorFromCuVectorAndSubVector) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(3);
  const Vector<Real> host = test::RandomVector<Real>(19, &rng);
  const CuVector<Real> cu(host);
  const Vector<Real> same(cu);
  const Vector<Other<Real>> other(cu);
  const Vector<Real> part(cu.Range(4, 9));
  ASSERT_EQ(other.Dim(), 19);
  for (MatrixIndexT i = 0; i < 19; ++i) {
    ASSERT_EQ(same(i), host(i));
    ASSERT_EQ(other(i), static_cast<Other<Real>>(host(i)));
  }
  for (MatrixIndexT i = 0; i < 9; ++i) ASSERT_EQ(part(i), host(i + 4));
  Vector<Other<Real>> into(19);
  into.CopyFromVec(cu);
  for (MatrixIndexT i = 0; i < 19; ++i) ASSERT_EQ(into(i), static_cast<Other<Real>>(host(i)));
}

TYPED_TEST(CuHostConversionsTest, SpAndTpFromCuCopyThePackedElements) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(4);
  const Matrix<Real> square = test::RandomMatrix<Real>(6, 6, &rng);
  const SpMatrix<Real> sp(square, kTakeLower);
  const TpMatrix<Real> tp(square);
  const SpMatrix<Real> sp_back{CuSpMatrix<Real>(sp)};
  const TpMatrix<Real> tp_back{CuTpMatrix<Real>(tp)};
  for (MatrixIndexT r = 0; r < 6; ++r)
    for (MatrixIndexT c = 0; c < 6; ++c) {
      ASSERT_EQ(sp_back(r, c), sp(r, c));
      ASSERT_EQ(tp_back(r, c), tp(r, c));
    }
}

TYPED_TEST(CuHostConversionsTest, CuMatrixFromSpIsTheFullSymmetricMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(5);
  const SpMatrix<Real> sp(test::RandomMatrix<Real>(7, 7, &rng), kTakeLower);
  const Matrix<Real> full{CuMatrix<Real>(CuSpMatrix<Real>(sp))};
  for (MatrixIndexT r = 0; r < 7; ++r)
    for (MatrixIndexT c = 0; c < 7; ++c) ASSERT_EQ(full(r, c), sp(r, c));
}

TYPED_TEST(CuHostConversionsTest, CuMatrixFromTpOfEitherPrecisionAndTranspose) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(6);
  const TpMatrix<Other<Real>> tp(test::RandomMatrix<Other<Real>>(5, 5, &rng));
  const CuTpMatrix<Other<Real>> cu_tp(tp);
  Matrix<Other<Real>> lower(5, 5);
  lower.CopyFromTp(tp);
  for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
    ExpectConverted(Matrix<Real>(CuMatrix<Real>(cu_tp, trans)), lower, trans);
    ExpectConverted(Matrix<Other<Real>>(CuMatrix<Other<Real>>(cu_tp, trans)), lower, trans);
  }
}

TYPED_TEST(CuHostConversionsTest, CuSubVectorOfARowViewsThatRow) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(7);
  const Matrix<Real> host = test::RandomMatrix<Real>(4, 9, &rng);
  CuMatrix<Real> cu(host);
  CuSubVector<Real> row(cu, 2);
  ASSERT_EQ(row.Dim(), 9);
  const Vector<Real> got(row);
  for (MatrixIndexT c = 0; c < 9; ++c) ASSERT_EQ(got(c), host(2, c));
  row.Set(3);  // writes through to the matrix
  const Matrix<Real> after(cu);
  for (MatrixIndexT r = 0; r < 4; ++r)
    for (MatrixIndexT c = 0; c < 9; ++c) ASSERT_EQ(after(r, c), r == 2 ? Real(3) : host(r, c));
  test::ExpectErrorContaining([&] { CuSubVector<Real> bad(cu, 4); }, "row 4");
  test::ExpectErrorContaining([&] { CuSubVector<Real> bad(cu, -1); }, "row -1");
}

TYPED_TEST(CuHostConversionsTest, CuSparseMatrixCopiesAndTransposes) {
  using Real = TypeParam;
  const std::vector<int32> idx = {2, -1, 0, 3, 2};
  const CuArray<int32> indexes(idx);
  const CuSparseMatrix<Real> s(indexes, 4);  // 5x4 one-hot
  const CuSparseMatrix<Real> copy(s);
  const CuSparseMatrix<Real> t(s, kTrans);
  CuSparseMatrix<Real> assigned;
  assigned = s;
  CuMatrix<Real> a(5, 4), b(5, 4), c(4, 5), d(5, 4);
  s.CopyToMat(&a);
  copy.CopyToMat(&b);
  t.CopyToMat(&c);
  assigned.CopyToMat(&d);
  const Matrix<Real> ha(a), hb(b), hc(c), hd(d);
  EXPECT_EQ(copy.NumElements(), 4);
  for (MatrixIndexT r = 0; r < 5; ++r)
    for (MatrixIndexT col = 0; col < 4; ++col) {
      ASSERT_EQ(ha(r, col), idx[r] == col ? Real(1) : Real(0));
      ASSERT_EQ(hb(r, col), ha(r, col));
      ASSERT_EQ(hd(r, col), ha(r, col));
      ASSERT_EQ(hc(col, r), ha(r, col));
    }
}

}  // namespace
}  // namespace cuctx
