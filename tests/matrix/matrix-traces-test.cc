// tests/matrix/matrix-traces-test.cc: traces of products, AddMatMatMat/AddMatSp/AddSpMat,
// mixed-precision adds and packed vector ops against explicit products and naive loops.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"
#include "tests/matrix-testing.h"

#include <gtest/gtest.h>

namespace cuctx {
namespace {

template <typename Real>
class MatrixTracesTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixTracesTest, RealTypes);

// Products over a handful of terms: float rounding grows with the inner size.
template <typename Real>
double ProdTol() {
  return 100 * test::Tol<Real>();
}

// Stored shape of an operand whose op() is rows x cols.
template <typename Real>
Matrix<Real> RandOp(MatrixIndexT rows, MatrixIndexT cols, MatrixTransposeType t, test::Rng* rng) {
  return t == kNoTrans ? test::GaussMatrix<Real>(rows, cols, rng)
                       : test::GaussMatrix<Real>(cols, rows, rng);
}

template <typename Real>
SpMatrix<Real> RandSp(MatrixIndexT n, test::Rng* rng) {
  return SpMatrix<Real>(test::GaussMatrix<Real>(n, n, rng), kTakeMean);
}

// op(A) op(B) in double.
template <typename Real>
Matrix<double> Prod(const MatrixBase<Real>& A, MatrixTransposeType tA, const MatrixBase<Real>& B,
                    MatrixTransposeType tB) {
  Matrix<double> a(A, tA), b(B, tB), out(a.NumRows(), b.NumCols());
  out.AddMatMat(1.0, a, kNoTrans, b, kNoTrans, 0.0);
  return out;
}

TYPED_TEST(MatrixTracesTest, TraceMatMatMatMatchesExplicitProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType tA : {kNoTrans, kTrans})
    for (MatrixTransposeType tB : {kNoTrans, kTrans})
      for (MatrixTransposeType tC : {kNoTrans, kTrans})
        for (auto dims : {std::vector<int>{3, 5, 7}, {9, 2, 4}, {1, 1, 1}, {4, 8, 1}}) {
          Matrix<Real> A = RandOp<Real>(dims[0], dims[1], tA, &rng),
                       B = RandOp<Real>(dims[1], dims[2], tB, &rng),
                       C = RandOp<Real>(dims[2], dims[0], tC, &rng);
          const double expected = Prod(Matrix<Real>(Prod(A, tA, B, tB)), kNoTrans, C, tC).Trace();
          EXPECT_TRUE(
              test::ScalarNear(TraceMatMatMat(A, tA, B, tB, C, tC), expected, ProdTol<Real>()));
          Matrix<Real> D = RandOp<Real>(dims[0], dims[0], tA, &rng);
          Matrix<Real> ABC(Prod(Matrix<Real>(Prod(A, tA, B, tB)), kNoTrans, C, tC));
          const double expected4 = Prod(ABC, kNoTrans, D, tA).Trace();
          EXPECT_TRUE(test::ScalarNear(TraceMatMatMatMat(A, tA, B, tB, C, tC, D, tA), expected4,
                                       ProdTol<Real>()));
        }
}

TYPED_TEST(MatrixTracesTest, TracesOfEmptyProductsAreZero) {
  using Real = TypeParam;
  Matrix<Real> A(0, 3), B(3, 2), C(2, 0);
  EXPECT_EQ(TraceMatMatMat(A, kNoTrans, B, kNoTrans, C, kNoTrans), Real(0));
}

TYPED_TEST(MatrixTracesTest, TraceMatSpMatAndSpSpMatchDense) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType tA : {kNoTrans, kTrans})
    for (MatrixTransposeType tC : {kNoTrans, kTrans}) {
      Matrix<Real> A = RandOp<Real>(4, 6, tA, &rng), C = RandOp<Real>(6, 4, tC, &rng);
      SpMatrix<Real> B = RandSp<Real>(6, &rng), D = RandSp<Real>(4, &rng);
      Matrix<Real> Bf(B), Df(D);
      EXPECT_TRUE(test::ScalarNear(TraceMatSpMat(A, tA, B, C, tC),
                                   TraceMatMatMat(A, tA, Bf, kNoTrans, C, tC), ProdTol<Real>()));
      EXPECT_TRUE(test::ScalarNear(TraceMatSpMatSp(A, tA, B, C, tC, D),
                                   TraceMatMatMatMat(A, tA, Bf, kNoTrans, C, tC, Df, kNoTrans),
                                   ProdTol<Real>()));
    }
}

TYPED_TEST(MatrixTracesTest, TracesThrowOnShapesThatDoNotClose) {
  using Real = TypeParam;
  Matrix<Real> A(3, 4), B(4, 5), C(5, 2);
  SpMatrix<Real> S(4), S5(5);
  EXPECT_THROW(TraceMatMatMat(A, kNoTrans, B, kNoTrans, C, kNoTrans), Error);
  EXPECT_THROW(TraceMatMatMatMat(A, kNoTrans, B, kNoTrans, C, kNoTrans, A, kNoTrans), Error);
  EXPECT_THROW(TraceMatSpMat(A, kNoTrans, S5, B, kNoTrans), Error);
  EXPECT_THROW(TraceMatSpMatSp(A, kNoTrans, S, B, kNoTrans, S), Error);
}

TYPED_TEST(MatrixTracesTest, AddMatMatMatMatchesTwoAddMatMat) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType tA : {kNoTrans, kTrans})
    for (MatrixTransposeType tB : {kNoTrans, kTrans})
      for (MatrixTransposeType tC : {kNoTrans, kTrans})
        for (auto dims : {std::vector<int>{3, 5, 7, 2}, {9, 1, 4, 6}, {2, 8, 8, 1}}) {
          Matrix<Real> A = RandOp<Real>(dims[0], dims[1], tA, &rng),
                       B = RandOp<Real>(dims[1], dims[2], tB, &rng),
                       C = RandOp<Real>(dims[2], dims[3], tC, &rng);
          Matrix<Real> out = test::GaussMatrix<Real>(dims[0], dims[3], &rng);
          Matrix<double> expected(out);
          expected.Scale(0.5);
          expected.AddMatMat(2.0, Prod(A, tA, B, tB), kNoTrans, Matrix<double>(C, tC), kNoTrans,
                             1.0);
          out.AddMatMatMat(2.0, A, tA, B, tB, C, tC, 0.5);
          EXPECT_TRUE(test::ExpectNear(out, expected, ProdTol<Real>()));
        }
}

TYPED_TEST(MatrixTracesTest, AddMatMatMatThrowsOnMismatchAndOverlap) {
  using Real = TypeParam;
  Matrix<Real> A(3, 3), B(3, 3), C(3, 4), out(3, 4);
  out.AddMatMatMat(1.0, A, kNoTrans, B, kNoTrans, C, kNoTrans, 0.0);
  EXPECT_THROW(out.AddMatMatMat(1.0, A, kNoTrans, B, kNoTrans, C, kTrans, 0.0), Error);
  Matrix<Real> sq(3, 3);
  EXPECT_THROW(sq.AddMatMatMat(1.0, sq, kNoTrans, B, kNoTrans, A, kNoTrans, 0.0), Error);
}

TYPED_TEST(MatrixTracesTest, AddMatSpAndAddSpMatMatchDense) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType t : {kNoTrans, kTrans}) {
    SpMatrix<Real> S = RandSp<Real>(5, &rng);
    Matrix<Real> A = RandOp<Real>(3, 5, t, &rng), B = RandOp<Real>(5, 3, t, &rng);
    Matrix<Real> out1 = test::GaussMatrix<Real>(3, 5, &rng),
                 out2 = test::GaussMatrix<Real>(5, 3, &rng);
    Matrix<Real> ref1(out1), ref2(out2);
    ref1.AddMatMat(0.7, A, t, Matrix<Real>(S), kNoTrans, 0.3);
    ref2.AddMatMat(0.7, Matrix<Real>(S), kNoTrans, B, t, 0.3);
    out1.AddMatSp(0.7, A, t, S, 0.3);
    out2.AddSpMat(0.7, S, B, t, 0.3);
    EXPECT_TRUE(test::ExpectNear(out1, ref1, ProdTol<Real>()));
    EXPECT_TRUE(test::ExpectNear(out2, ref2, ProdTol<Real>()));
  }
  Matrix<Real> bad(3, 4), A(3, 5);
  SpMatrix<Real> S(5);
  EXPECT_THROW(bad.AddMatSp(1.0, A, kNoTrans, S, 0.0), Error);
  EXPECT_THROW(bad.AddSpMat(1.0, S, A, kNoTrans, 0.0), Error);
}

TYPED_TEST(MatrixTracesTest, LargestAbsElemIsTheMaximumMagnitude) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    double expected = 0.0;
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        expected = std::max(expected, std::abs(double(m.View()(r, c))));
    EXPECT_EQ(double(m.View().LargestAbsElem()), expected);
  });
}

TYPED_TEST(MatrixTracesTest, MixedPrecisionAddsMatchSamePrecision) {
  using Real = TypeParam;
  using Other = typename OtherReal<Real>::Real;
  test::Rng rng = test::MakeRng();
  Vector<Other> a = test::RandomVector<Other>(4, &rng), b = test::RandomVector<Other>(6, &rng);
  Matrix<Real> m = test::GaussMatrix<Real>(4, 6, &rng);
  Matrix<Real> ref(m);
  m.AddVecVec(Real(0.5), a, b);
  m.AddVecToRows(Real(2), b);
  m.AddVecToCols(Real(-1), a);
  ref.AddVecVec(0.5, Vector<Real>(a), Vector<Real>(b));
  ref.AddVecToRows(2.0, Vector<Real>(b));
  ref.AddVecToCols(-1.0, Vector<Real>(a));
  EXPECT_TRUE(test::ExpectNear(m, ref, test::Tol<Real>()));
  EXPECT_THROW(m.AddVecToRows(Real(1), a), Error);
  EXPECT_THROW(m.AddVecToCols(Real(1), b), Error);
}

TYPED_TEST(MatrixTracesTest, AddSpVecMatchesDenseMatVec) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 7}) {
    SpMatrix<Real> S = RandSp<Real>(n, &rng);
    Vector<Real> v = test::RandomVector<Real>(n, &rng), y = test::RandomVector<Real>(n, &rng);
    Vector<Real> ref(y);
    ref.AddMatVec(1.5, Matrix<Real>(S), kNoTrans, v, 0.25);
    y.AddSpVec(1.5, S, v, 0.25);
    EXPECT_TRUE(test::ExpectNear(y, ref, ProdTol<Real>()));
    // v aliasing *this.
    Vector<Real> w(v), ref2(n);
    ref2.AddMatVec(1.0, Matrix<Real>(S), kNoTrans, v, 0.0);
    w.AddSpVec(1.0, S, w, 0.0);
    EXPECT_TRUE(test::ExpectNear(w, ref2, ProdTol<Real>()));
  }
  Vector<Real> y(3), v(4);
  SpMatrix<Real> S(4);
  EXPECT_THROW(y.AddSpVec(1.0, S, v, 0.0), Error);
}

TYPED_TEST(MatrixTracesTest, CopyDiagFromPackedReadsTheDiagonal) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  SpMatrix<Real> S = RandSp<Real>(5, &rng);
  TpMatrix<Real> T(test::GaussMatrix<Real>(5, 5, &rng));
  Vector<Real> d(5), e(5), f(5);
  d.CopyDiagFromPacked(S);
  e.CopyDiagFromSp(S);
  f.CopyDiagFromTp(T);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(d(i), S(i, i));
    EXPECT_EQ(e(i), S(i, i));
    EXPECT_EQ(f(i), T(i, i));
  }
  Vector<Real> bad(4);
  EXPECT_THROW(bad.CopyDiagFromPacked(S), Error);
}

TYPED_TEST(MatrixTracesTest, SolveInvertsTheTriangularProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType t : {kNoTrans, kTrans}) {
    Matrix<Real> L = test::GaussMatrix<Real>(6, 6, &rng);
    for (int i = 0; i < 6; ++i) L(i, i) = 3 + std::abs(L(i, i));  // well conditioned
    TpMatrix<Real> T(L);
    Vector<Real> x = test::RandomVector<Real>(6, &rng), b(6);
    b.AddMatVec(1.0, Matrix<Real>(T), t, x, 0.0);
    b.Solve(T, t);
    EXPECT_TRUE(test::ExpectNear(b, x, ProdTol<Real>()));
  }
  TpMatrix<Real> singular(3);
  Vector<Real> v(3), w(2);
  EXPECT_THROW(v.Solve(singular, kNoTrans), Error);
  EXPECT_THROW(w.Solve(singular, kNoTrans), Error);
}

}  // namespace
}  // namespace cuctx
