// tests/matrix/matrix-elementwise-test.cc: MatrixBase element-wise ops, broadcasts and maps.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
class MatrixElementwiseTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixElementwiseTest, RealTypes);

// ---- binary element-wise
// ------------------------------------------------------------------------------

TYPED_TEST(MatrixElementwiseTest, MulElementsMatchesReference) {
  using Real = TypeParam;
  test::CheckBinary<Real>([](MatrixBase<Real>* m, const MatrixBase<Real>& a) { m->MulElements(a); },
                          [](double x, double a) { return x * a; }, -1, 1, test::Tol<Real>());
}

TYPED_TEST(MatrixElementwiseTest, DivElementsMatchesReference) {
  using Real = TypeParam;
  test::CheckBinary<Real>([](MatrixBase<Real>* m, const MatrixBase<Real>& a) { m->DivElements(a); },
                          [](double x, double a) { return x / a; }, 0.5, 2, test::Tol<Real>());
}

TYPED_TEST(MatrixElementwiseTest, MaxAndMinMatchReference) {
  using Real = TypeParam;
  test::CheckBinary<Real>([](MatrixBase<Real>* m, const MatrixBase<Real>& a) { m->Max(a); },
                          [](double x, double a) { return std::max(x, a); }, -1, 1, 0);
  test::CheckBinary<Real>([](MatrixBase<Real>* m, const MatrixBase<Real>& a) { m->Min(a); },
                          [](double x, double a) { return std::min(x, a); }, -1, 1, 0);
}

TYPED_TEST(MatrixElementwiseTest, MulElementsWithItselfSquares) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(9, 11, &rng);
  Matrix<double> expected = test::ToDouble(m);
  expected.MulElements(expected);
  m.MulElements(m);
  EXPECT_TRUE(test::ExpectNear(m, expected, test::Tol<Real>()));
}

TYPED_TEST(MatrixElementwiseTest, ThrowsOnPartialOverlap) {
  using Real = TypeParam;
  Matrix<Real> m(6, 6);
  EXPECT_TRUE(
      test::ThrowsWith([&] { m.Range(0, 3, 0, 3).MulElements(m.Range(1, 3, 1, 3)); }, "overlaps"));
  EXPECT_THROW(m.Range(0, 3, 0, 3).Exp(m.Range(0, 3, 1, 3)), Error);
  EXPECT_NO_THROW(m.Range(0, 3, 0, 3).AddMat(1.0, m.Range(3, 3, 3, 3)));
}

TYPED_TEST(MatrixElementwiseTest, InvertElementsMatchesReference) {
  using Real = TypeParam;
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->InvertElements(); },
                              [](double x) { return 1 / x; }, 0.5, 3, test::Tol<Real>());
}

// ---- vector broadcasts
// -------------------------------------------------------------------------------

TYPED_TEST(MatrixElementwiseTest, RowAndColumnScalingMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    Vector<Real> col_scale = test::RandomVector<Real>(s.cols, &rng);
    Vector<Real> row_scale = test::RandomVector<Real>(s.rows, &rng);
    Vector<Real> row_div = test::RandomVector<Real>(s.rows, &rng, 0.5, 2);
    Matrix<double> expected = test::ToDouble(m.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        expected(r, c) *= static_cast<double>(col_scale(c)) * row_scale(r) / row_div(r);
    m.View().MulColsVec(col_scale);
    m.View().MulRowsVec(row_scale);
    m.View().DivRowsVec(row_div);
    EXPECT_TRUE(test::ExpectNear(m.View(), expected, 3 * test::Tol<Real>()));
    EXPECT_TRUE(m.PaddingUnchanged());
  });
  Matrix<Real> m(3, 4);
  Vector<Real> v3(3), v4(4);
  EXPECT_TRUE(test::ThrowsWith([&] { m.MulColsVec(v3); }, "dimension 3"));
  EXPECT_THROW(m.MulRowsVec(v4), Error);
  EXPECT_THROW(m.DivRowsVec(v4), Error);
  // A vector viewing the matrix itself is refused.
  EXPECT_TRUE(test::ThrowsWith([&] { m.MulColsVec(m.Row(0)); }, "overlaps"));
}

TYPED_TEST(MatrixElementwiseTest, MulRowsGroupMatMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const MatrixIndexT groups = s.cols % 3 == 0 && s.cols > 0 ? 3 : 1;
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    Matrix<Real> scale = test::RandomMatrix<Real>(s.rows, s.cols == 0 ? 0 : groups, &rng);
    Matrix<double> expected = test::ToDouble(m.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) expected(r, c) *= scale(r, c / (s.cols / groups));
    m.View().MulRowsGroupMat(scale);
    EXPECT_TRUE(test::ExpectNear(m.View(), expected, test::Tol<Real>()));
  });
  Matrix<Real> m(2, 5), bad(2, 2);
  EXPECT_TRUE(test::ThrowsWith([&] { m.MulRowsGroupMat(bad); }, "5 columns"));
}

TYPED_TEST(MatrixElementwiseTest, AddVecToRowsAndColsMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    Vector<Real> row = test::RandomVector<Real>(s.cols, &rng);
    Vector<Real> col = test::RandomVector<Real>(s.rows, &rng);
    Matrix<double> expected = test::ToDouble(m.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        expected(r, c) = 0.25 * (0.5 * expected(r, c) + 2.0 * row(c)) - 3.0 * col(r);
    m.View().AddVecToRows(2.0, row, 0.5);
    m.View().AddVecToCols(-3.0, col, 0.25);
    EXPECT_TRUE(test::ExpectNear(m.View(), expected, 3 * test::Tol<Real>()));
    EXPECT_TRUE(m.PaddingUnchanged());
  });
  Matrix<Real> m(3, 4);
  Vector<Real> v3(3);
  EXPECT_TRUE(test::ThrowsWith([&] { m.AddVecToRows(1.0, v3); }, "dimension 3"));
  EXPECT_THROW(m.AddVecToCols(1.0, Vector<Real>(4)), Error);
}

// ---- matrix adds
// -------------------------------------------------------------------------------------

TYPED_TEST(MatrixElementwiseTest, AddMatMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    test::TestMatrix<Real> a(s.rows, s.cols, !strided, &rng);
    test::TestMatrix<Real> at(s.cols, s.rows, strided, &rng);
    Matrix<double> expected = test::ToDouble(m.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        expected(r, c) += 1.5 * a.View()(r, c) - 0.5 * at.View()(c, r);
    m.View().AddMat(1.5, a.View());
    m.View().AddMat(-0.5, at.View(), kTrans);
    EXPECT_TRUE(test::ExpectNear(m.View(), expected, 3 * test::Tol<Real>()));
    EXPECT_TRUE(m.PaddingUnchanged());
  });
  Matrix<Real> m(3, 4), wrong(3, 4);
  EXPECT_TRUE(test::ThrowsWith([&] { m.AddMat(1.0, wrong, kTrans); }, "3x4"));
}

TYPED_TEST(MatrixElementwiseTest, AddMatHandlesSelfAliasing) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> m = test::RandomMatrix<Real>(17, 17, &rng);
  Matrix<double> orig = test::ToDouble(m);
  Matrix<double> expected(orig);
  expected.Scale(1.5);
  m.AddMat(0.5, m);
  EXPECT_TRUE(test::ExpectNear(m, expected, test::Tol<Real>()));
  Matrix<double> expected_t(expected);
  expected_t.AddMat(2.0, Matrix<double>(expected, kTrans));
  m.AddMat(2.0, m, kTrans);
  EXPECT_TRUE(test::ExpectNear(m, expected_t, 3 * test::Tol<Real>()));
}

TYPED_TEST(MatrixElementwiseTest, AddMatBlocksSumsAndBroadcasts) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType t : {kNoTrans, kTrans}) {
    for (bool strided : {false, true}) {
      // Summing: op(A) is 3x2 blocks of 4x5.
      test::TestMatrix<Real> small(4, 5, strided, &rng);
      Matrix<Real> big = t == kNoTrans ? test::RandomMatrix<Real>(12, 10, &rng)
                                       : test::RandomMatrix<Real>(10, 12, &rng);
      Matrix<double> expected = test::ToDouble(small.View());
      for (MatrixIndexT i = 0; i < 12; ++i)
        for (MatrixIndexT j = 0; j < 10; ++j)
          expected(i % 4, j % 5) += 0.5 * (t == kNoTrans ? big(i, j) : big(j, i));
      small.View().AddMatBlocks(0.5, big, t);
      EXPECT_TRUE(test::ExpectNear(small.View(), expected, 5 * test::Tol<Real>()));
      EXPECT_TRUE(small.PaddingUnchanged());
      // Broadcasting: *this is 2x3 blocks of op(A).
      test::TestMatrix<Real> wide(8, 15, strided, &rng);
      Matrix<Real> tile = t == kNoTrans ? test::RandomMatrix<Real>(4, 5, &rng)
                                        : test::RandomMatrix<Real>(5, 4, &rng);
      Matrix<double> expected2 = test::ToDouble(wide.View());
      for (MatrixIndexT i = 0; i < 8; ++i)
        for (MatrixIndexT j = 0; j < 15; ++j)
          expected2(i, j) += -2.0 * (t == kNoTrans ? tile(i % 4, j % 5) : tile(j % 5, i % 4));
      wide.View().AddMatBlocks(-2.0, tile, t);
      EXPECT_TRUE(test::ExpectNear(wide.View(), expected2, test::Tol<Real>()));
      EXPECT_TRUE(wide.PaddingUnchanged());
    }
  }
  Matrix<Real> m(4, 5), bad(6, 5);
  EXPECT_TRUE(test::ThrowsWith([&] { m.AddMatBlocks(1.0, bad); }, "6x5"));
  Matrix<Real> empty(0, 0);
  EXPECT_NO_THROW(empty.AddMatBlocks(1.0, Matrix<Real>(0, 0)));
}

TYPED_TEST(MatrixElementwiseTest, AddMatMatElementsMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    Matrix<Real> a = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    test::TestMatrix<Real> b(s.rows, s.cols, !strided, &rng);
    Matrix<double> expected = test::ToDouble(m.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        expected(r, c) = 0.5 * expected(r, c) + 2.0 * a(r, c) * b.View()(r, c);
    m.View().AddMatMatElements(2.0, a, b.View(), 0.5);
    EXPECT_TRUE(test::ExpectNear(m.View(), expected, 3 * test::Tol<Real>()));
    EXPECT_TRUE(m.PaddingUnchanged());
  });
  Matrix<Real> m(2, 2), a(2, 2), b(2, 3);
  EXPECT_TRUE(test::ThrowsWith([&] { m.AddMatMatElements(1.0, a, b, 1.0); }, "2x3"));
}

TYPED_TEST(MatrixElementwiseTest, SetMatMatDivMatMatchesReferenceAndAliases) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Matrix<Real> a = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    Matrix<Real> b = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    test::TestMatrix<Real> c(s.rows, s.cols, strided, &rng, 0.5, 2);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT col = 0; col < s.cols; ++col)
        if ((r + col) % 4 == 0) c.View()(r, col) = 0;
    Matrix<double> expected(s.rows, s.cols);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT col = 0; col < s.cols; ++col) {
        const double cv = c.View()(r, col);
        expected(r, col) = cv != 0 ? static_cast<double>(a(r, col)) * b(r, col) / cv : a(r, col);
      }
    test::TestMatrix<Real> out(s.rows, s.cols, !strided, &rng);
    out.View().SetMatMatDivMat(a, b, c.View());
    EXPECT_TRUE(test::ExpectNear(out.View(), expected, 3 * test::Tol<Real>()));
    // *this may be C itself.
    c.View().SetMatMatDivMat(a, b, c.View());
    EXPECT_TRUE(test::ExpectNear(c.View(), expected, 3 * test::Tol<Real>()));
    EXPECT_TRUE(c.PaddingUnchanged());
  });
}

// ---- in-place maps
// --------------------------------------------------------------------------------------

TYPED_TEST(MatrixElementwiseTest, ApplyPowMatchesReference) {
  using Real = TypeParam;
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyPow(2.5); },
                              [](double x) { return std::pow(x, 2.5); }, 0.1, 2, test::Tol<Real>());
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyPow(3); },
                              [](double x) { return x * x * x; }, -2, 2, test::Tol<Real>());
}

TYPED_TEST(MatrixElementwiseTest, ApplyPowAbsMatchesReference) {
  using Real = TypeParam;
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyPowAbs(1.5); },
                              [](double x) { return std::pow(std::abs(x), 1.5); }, -2, 2,
                              test::Tol<Real>());
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyPowAbs(0.5, true); },
                              [](double x) { return (x < 0 ? -1 : 1) * std::sqrt(std::abs(x)); },
                              -2, 2, test::Tol<Real>());
  Matrix<Real> z(1, 2);
  z(0, 1) = -4;
  z.ApplyPowAbs(-1.0, true);
  EXPECT_EQ(z(0, 0), 0);  // 0 stays 0 for a negative power
  EXPECT_EQ(z(0, 1), Real(-0.25));
}

TYPED_TEST(MatrixElementwiseTest, ApplyHeavisideMatchesReference) {
  using Real = TypeParam;
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyHeaviside(); },
                              [](double x) { return x > 0 ? 1.0 : 0.0; }, -1, 1, 0);
}

TYPED_TEST(MatrixElementwiseTest, ApplyFloorAndCeilingMatchReference) {
  using Real = TypeParam;
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyFloor(0.25); },
                              [](double x) { return std::max(x, 0.25); }, -1, 1, 0);
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyCeiling(-0.25); },
                              [](double x) { return std::min(x, -0.25); }, -1, 1, 0);
}

TYPED_TEST(MatrixElementwiseTest, ApplyExpAndLogMatchReference) {
  using Real = TypeParam;
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyExp(); },
                              [](double x) { return std::exp(x); }, -5, 5, test::Tol<Real>());
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyLog(); },
                              [](double x) { return std::log(x); }, 0.1, 5, test::Tol<Real>());
}

TYPED_TEST(MatrixElementwiseTest, ApplyExpLimitedAndSpecialMatchReference) {
  using Real = TypeParam;
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyExpLimited(-1, 2); },
                              [](double x) { return std::exp(std::min(std::max(x, -1.0), 2.0)); },
                              -4, 4, test::Tol<Real>());
  test::CheckInPlaceMap<Real>([](MatrixBase<Real>* m) { m->ApplyExpSpecial(); },
                              [](double x) { return x < 0 ? std::exp(x) : x + 1; }, -4, 4,
                              test::Tol<Real>());
  Matrix<Real> m(2, 2);
  EXPECT_TRUE(test::ThrowsWith([&] { m.ApplyExpLimited(3, 1); }, "lower limit 3"));
}

// ---- maps from a source
// ----------------------------------------------------------------------------------

TYPED_TEST(MatrixElementwiseTest, ExpAndLogFromSourceMatchReference) {
  using Real = TypeParam;
  test::CheckSrcMap<Real>([](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Exp(s); },
                          [](double x) { return std::exp(x); }, -5, 5, test::Tol<Real>());
  test::CheckSrcMap<Real>([](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Log(s); },
                          [](double x) { return std::log(x); }, 0.1, 5, test::Tol<Real>());
}

TYPED_TEST(MatrixElementwiseTest, PowAndPowAbsFromSourceMatchReference) {
  using Real = TypeParam;
  test::CheckSrcMap<Real>([](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Pow(s, 0.5); },
                          [](double x) { return std::sqrt(x); }, 0, 4, test::Tol<Real>());
  test::CheckSrcMap<Real>(
      [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->PowAbs(s, 2, true); },
      [](double x) { return x * std::abs(x); }, -2, 2, test::Tol<Real>());
  test::CheckSrcMap<Real>([](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->PowAbs(s, 3); },
                          [](double x) { return std::pow(std::abs(x), 3); }, -2, 2,
                          test::Tol<Real>());
}

TYPED_TEST(MatrixElementwiseTest, FloorAndCeilingFromSourceMatchReference) {
  using Real = TypeParam;
  test::CheckSrcMap<Real>([](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Floor(s, 0.1); },
                          [](double x) { return std::max(x, static_cast<double>(Real(0.1))); }, -1,
                          1, 0);
  test::CheckSrcMap<Real>(
      [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Ceiling(s, 0.1); },
      [](double x) { return std::min(x, static_cast<double>(Real(0.1))); }, -1, 1, 0);
}

TYPED_TEST(MatrixElementwiseTest, ExpLimitedExpSpecialHeavisideFromSourceMatchReference) {
  using Real = TypeParam;
  test::CheckSrcMap<Real>(
      [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->ExpLimited(s, -0.5, 1.5); },
      [](double x) { return std::exp(std::min(std::max(x, -0.5), 1.5)); }, -3, 3,
      test::Tol<Real>());
  test::CheckSrcMap<Real>([](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->ExpSpecial(s); },
                          [](double x) { return x < 0 ? std::exp(x) : x + 1; }, -3, 3,
                          test::Tol<Real>());
  test::CheckSrcMap<Real>([](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Heaviside(s); },
                          [](double x) { return x > 0 ? 1.0 : 0.0; }, -1, 1, 0);
  Matrix<Real> a(2, 2), b(2, 2);
  EXPECT_THROW(a.ExpLimited(b, 1, 0), Error);
}

}  // namespace
}  // namespace cuctx
