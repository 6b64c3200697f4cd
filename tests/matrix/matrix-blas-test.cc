// tests/matrix/matrix-blas-test.cc: MatrixBase products (CBLAS), traces and dense solvers.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
class MatrixBlasTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixBlasTest, RealTypes);

// op(M)(i, j) in double.
template <typename Real>
double OpAt(const MatrixBase<Real>& m, MatrixTransposeType t, MatrixIndexT i, MatrixIndexT j) {
  return t == kNoTrans ? m(i, j) : m(j, i);
}

// A random symmetric positive definite n x n matrix (B B^T + n I).
template <typename Real>
Matrix<Real> RandomSpd(MatrixIndexT n, test::Rng* rng) {
  Matrix<Real> b = test::RandomMatrix<Real>(n, n, rng);
  Matrix<Real> a(n, n);
  a.AddMatMat(1.0, b, kNoTrans, b, kTrans, 0.0);
  a.AddToDiag(n);
  return a;
}

TYPED_TEST(MatrixBlasTest, AddMatMatMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixIndexT k : {0, 1, 7}) {
    for (MatrixTransposeType ta : {kNoTrans, kTrans}) {
      for (MatrixTransposeType tb : {kNoTrans, kTrans}) {
        test::ForEachShape([&](const test::Shape& s, bool strided) {
          test::TestMatrix<Real> a(ta == kNoTrans ? s.rows : k, ta == kNoTrans ? k : s.rows,
                                   strided, &rng);
          test::TestMatrix<Real> b(tb == kNoTrans ? k : s.cols, tb == kNoTrans ? s.cols : k,
                                   !strided, &rng);
          test::TestMatrix<Real> c(s.rows, s.cols, strided, &rng);
          Matrix<double> expected(s.rows, s.cols);
          for (MatrixIndexT i = 0; i < s.rows; ++i) {
            for (MatrixIndexT j = 0; j < s.cols; ++j) {
              double sum = 0;
              for (MatrixIndexT l = 0; l < k; ++l)
                sum += OpAt(a.View(), ta, i, l) * OpAt(b.View(), tb, l, j);
              expected(i, j) = 0.5 * c.View()(i, j) + 2.0 * sum;
            }
          }
          c.View().AddMatMat(2.0, a.View(), ta, b.View(), tb, 0.5);
          // GEMM sums k products: the tolerance scales with the inner dimension.
          EXPECT_TRUE(test::ExpectNear(c.View(), expected, (k + 2) * test::Tol<Real>()))
              << "k " << k << " ta " << ta << " tb " << tb;
          EXPECT_TRUE(c.PaddingUnchanged());
        });
      }
    }
  }
}

TYPED_TEST(MatrixBlasTest, AddMatMatWithZeroBetaOverwritesNaN) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> a = test::RandomMatrix<Real>(4, 3, &rng), b = test::RandomMatrix<Real>(3, 5, &rng);
  Matrix<Real> c(4, 5);
  c.Set(std::numeric_limits<Real>::quiet_NaN());
  c.AddMatMat(1.0, a, kNoTrans, b, kNoTrans, 0.0);
  Matrix<double> expected(4, 5);
  expected.AddMatMat(1.0, test::ToDouble(a), kNoTrans, test::ToDouble(b), kNoTrans, 0.0);
  EXPECT_TRUE(test::ExpectNear(c, expected, 5 * test::Tol<Real>()));
}

TYPED_TEST(MatrixBlasTest, AddMatMatThrowsOnShapeMismatchOrAliasing) {
  using Real = TypeParam;
  Matrix<Real> a(3, 4), b(5, 6), c(3, 6);
  EXPECT_TRUE(test::ThrowsWith([&] { c.AddMatMat(1.0, a, kNoTrans, b, kNoTrans, 0.0); }, "3x4"));
  EXPECT_TRUE(test::ThrowsWith([&] { c.AddMatMat(1.0, a, kNoTrans, b, kNoTrans, 0.0); }, "5x6"));
  Matrix<Real> sq(4, 4);
  EXPECT_TRUE(
      test::ThrowsWith([&] { sq.AddMatMat(1.0, sq, kNoTrans, sq, kNoTrans, 0.0); }, "overlaps"));
}

TYPED_TEST(MatrixBlasTest, SymAddMat2UpdatesLowerTriangleOnly) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType t : {kNoTrans, kTrans}) {
    for (MatrixIndexT n : {0, 1, 17, 64}) {
      for (bool strided : {false, true}) {
        const MatrixIndexT k = 9;
        test::TestMatrix<Real> a(t == kNoTrans ? n : k, t == kNoTrans ? k : n, strided, &rng);
        test::TestMatrix<Real> c(n, n, !strided, &rng);
        Matrix<double> expected = test::ToDouble(c.View());
        for (MatrixIndexT i = 0; i < n; ++i) {
          for (MatrixIndexT j = 0; j <= i; ++j) {
            double sum = 0;
            for (MatrixIndexT l = 0; l < k; ++l)
              sum += OpAt(a.View(), t, i, l) * OpAt(a.View(), t, j, l);
            expected(i, j) = 0.5 * expected(i, j) + 3.0 * sum;
          }
        }
        c.View().SymAddMat2(3.0, a.View(), t, 0.5);
        EXPECT_TRUE(test::ExpectNear(c.View(), expected, 20 * test::Tol<Real>())) << n << " " << t;
        EXPECT_TRUE(c.PaddingUnchanged());
      }
    }
  }
  Matrix<Real> rect(3, 4), a(3, 2);
  EXPECT_TRUE(test::ThrowsWith([&] { rect.SymAddMat2(1.0, a, kNoTrans, 0.0); }, "3x4"));
}

TYPED_TEST(MatrixBlasTest, DiagonalScaledAddsMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixTransposeType t : {kNoTrans, kTrans}) {
    test::ForEachShape([&](const test::Shape& s, bool strided) {
      test::TestMatrix<Real> m(t == kNoTrans ? s.rows : s.cols, t == kNoTrans ? s.cols : s.rows,
                               !strided, &rng);
      Vector<Real> vr = test::RandomVector<Real>(s.rows, &rng);
      Vector<Real> vc = test::RandomVector<Real>(s.cols, &rng);
      test::TestMatrix<Real> out(s.rows, s.cols, strided, &rng);
      Matrix<double> expected = test::ToDouble(out.View());
      for (MatrixIndexT i = 0; i < s.rows; ++i)
        for (MatrixIndexT j = 0; j < s.cols; ++j)
          expected(i, j) = 0.25 * (0.5 * expected(i, j) + 2.0 * vr(i) * OpAt(m.View(), t, i, j)) -
                           1.0 * OpAt(m.View(), t, i, j) * vc(j);
      out.View().AddDiagVecMat(2.0, vr, m.View(), t, 0.5);
      out.View().AddMatDiagVec(-1.0, m.View(), t, vc, 0.25);
      EXPECT_TRUE(test::ExpectNear(out.View(), expected, 5 * test::Tol<Real>())) << t;
      EXPECT_TRUE(out.PaddingUnchanged());
    });
  }
  Matrix<Real> m(3, 4), out(3, 4);
  Vector<Real> v4(4);
  EXPECT_TRUE(test::ThrowsWith([&] { out.AddDiagVecMat(1.0, v4, m, kNoTrans); }, "dimension 4"));
  EXPECT_THROW(out.AddMatDiagVec(1.0, m, kTrans, v4), Error);
  // M == *this (kNoTrans) scales in place.
  Matrix<Real> x = test::RandomMatrix<Real>(3, 4, &rng);
  Matrix<double> e = test::ToDouble(x);
  e.Scale(3.0);
  Vector<Real> ones(3);
  ones.Set(1);
  x.AddDiagVecMat(2.0, ones, x, kNoTrans, 1.0);
  EXPECT_TRUE(test::ExpectNear(x, e, test::Tol<Real>()));
}

TYPED_TEST(MatrixBlasTest, AddVecVecMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    Vector<Real> a = test::RandomVector<Real>(s.rows, &rng);
    Vector<Real> b = test::RandomVector<Real>(s.cols, &rng);
    Matrix<double> expected = test::ToDouble(m.View());
    for (MatrixIndexT i = 0; i < s.rows; ++i)
      for (MatrixIndexT j = 0; j < s.cols; ++j) expected(i, j) += 1.5 * a(i) * b(j);
    m.View().AddVecVec(1.5, a, b);
    EXPECT_TRUE(test::ExpectNear(m.View(), expected, 3 * test::Tol<Real>()));
    EXPECT_TRUE(m.PaddingUnchanged());
  });
  Matrix<Real> m(3, 4);
  Vector<Real> a(4), b(4);
  EXPECT_TRUE(test::ThrowsWith([&] { m.AddVecVec(1.0, a, b); }, "3x4"));
}

TYPED_TEST(MatrixBlasTest, AddMatMatBatchedMatchesSingleProducts) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Matrix<Real> a_store = test::RandomMatrix<Real>(12, 5, &rng);
  Matrix<Real> b_store = test::RandomMatrix<Real>(15, 4, &rng);
  Matrix<Real> c_store = test::RandomMatrix<Real>(12, 4, &rng);
  Matrix<Real> expected(c_store);
  std::vector<SubMatrix<Real>*> A, B, C;
  for (MatrixIndexT i = 0; i < 3; ++i) {
    A.push_back(new SubMatrix<Real>(a_store.RowRange(4 * i, 4)));
    B.push_back(new SubMatrix<Real>(b_store.RowRange(5 * i, 5)));
    C.push_back(new SubMatrix<Real>(c_store.RowRange(4 * i, 4)));
    expected.RowRange(4 * i, 4).AddMatMat(2.0, *A[i], kNoTrans, *B[i], kNoTrans, 0.5);
  }
  AddMatMatBatched<Real>(2.0, C, A, kNoTrans, B, kNoTrans, 0.5);
  EXPECT_TRUE(test::ExpectNear(c_store, expected, test::Tol<Real>()));
  std::vector<SubMatrix<Real>*> short_b(B.begin(), B.begin() + 2);
  EXPECT_TRUE(test::ThrowsWith(
      [&] { AddMatMatBatched<Real>(1.0, C, A, kNoTrans, short_b, kNoTrans, 0.0); }, "B has 2"));
  for (size_t i = 0; i < 3; ++i) {
    delete A[i];
    delete B[i];
    delete C[i];
  }
}

TYPED_TEST(MatrixBlasTest, TraceMatMatMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> a(s.rows, s.cols, strided, &rng);
    test::TestMatrix<Real> b(s.cols, s.rows, !strided, &rng);
    test::TestMatrix<Real> bt(s.rows, s.cols, !strided, &rng);
    double tr = 0, tr_t = 0;
    for (MatrixIndexT i = 0; i < s.rows; ++i) {
      for (MatrixIndexT j = 0; j < s.cols; ++j) {
        tr += static_cast<double>(a.View()(i, j)) * b.View()(j, i);
        tr_t += static_cast<double>(a.View()(i, j)) * bt.View()(i, j);
      }
    }
    // Absolute slack: a sum of random-sign products can be near zero.
    const double slack = 10 * test::Tol<Real>() * std::sqrt(s.rows * s.cols + 1.0);
    EXPECT_NEAR(TraceMatMat(a.View(), b.View()), tr, slack);
    EXPECT_NEAR(TraceMatMat(a.View(), bt.View(), kTrans), tr_t, slack);
  });
  Matrix<Real> a(3, 4), b(3, 4);
  EXPECT_TRUE(test::ThrowsWith([&] { TraceMatMat(a, b); }, "not square"));
}

// A trace whose terms nearly cancel (terms of size ~1, sum ~0.02) keeps its relative accuracy:
// accumulated in double, a float trace matches a long-double reference to within a few roundings
// of the result (a double one to within a double accumulation's error). (Kaldi's CuSparseMatrix test compares TraceMatMat with TraceMatSmat at relative 1e-5.)
TYPED_TEST(MatrixBlasTest, TraceMatMatIsAccurateWhenTermsCancel) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const MatrixIndexT rows = 40, cols = 50;
  Matrix<Real> a = test::RandomMatrix<Real>(rows, cols, &rng);
  for (MatrixTransposeType t : {kNoTrans, kTrans}) {
    Matrix<Real> b = t == kNoTrans ? test::RandomMatrix<Real>(cols, rows, &rng)
                                   : test::RandomMatrix<Real>(rows, cols, &rng);
    long double magnitude = 0;  // sum of |terms|, which bounds a double accumulation's error
    auto reference = [&] {
      long double sum = 0;
      magnitude = 0;
      for (MatrixIndexT i = 0; i < rows; ++i) {
        for (MatrixIndexT j = 0; j < cols; ++j) {
          const long double term =
              static_cast<long double>(a(i, j)) * (t == kNoTrans ? b(j, i) : b(i, j));
          sum += term;
          magnitude += std::fabs(term);
        }
      }
      return sum;
    };
    // Choose b's term for a(0, 0) so that the exact trace comes out near 0.02.
    a(0, 0) = 0.75;
    b(0, 0) = 0;
    b(0, 0) = static_cast<Real>((0.02L - reference()) / 0.75L);
    const long double exact = reference();
    ASSERT_GT(std::fabs(static_cast<double>(exact)), 1e-3);
    const double got = TraceMatMat(a, b, t);
    // Rounding of the result to Real, plus a double accumulation's error (negligible for float).
    const double tol =
        4 * std::numeric_limits<Real>::epsilon() * std::fabs(static_cast<double>(exact)) +
        64 * std::numeric_limits<double>::epsilon() * static_cast<double>(magnitude);
    EXPECT_NEAR(got, static_cast<double>(exact), tol)
        << (t == kNoTrans ? "kNoTrans" : "kTrans") << ", seed " << test::Seed();
  }
}

TYPED_TEST(MatrixBlasTest, CholeskyReconstructsAndInverts) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  // 127 and 128 sit on either side of the switch from LAPACK's unblocked to its blocked routines.
  for (MatrixIndexT n : {0, 1, 2, 17, 64, 127, 128}) {
    for (bool strided : {false, true}) {
      Matrix<Real> spd = RandomSpd<Real>(n, &rng);
      test::TestMatrix<Real> a(n, n, strided, &rng);
      a.View().CopyFromMat(spd);
      // Only the lower triangle is read: garbage above the diagonal must not matter.
      for (MatrixIndexT i = 0; i < n; ++i)
        for (MatrixIndexT j = i + 1; j < n; ++j) a.View()(i, j) = 1e6;
      Matrix<Real> inv_l(n, n);
      a.View().Cholesky(&inv_l);
      EXPECT_TRUE(a.PaddingUnchanged());
      for (MatrixIndexT i = 0; i < n; ++i)
        for (MatrixIndexT j = i + 1; j < n; ++j) ASSERT_EQ(a.View()(i, j), 0);
      Matrix<double> L = test::ToDouble(a.View()), rebuilt(n, n), prod(n, n), unit(n, n);
      rebuilt.AddMatMat(1.0, L, kNoTrans, L, kTrans, 0.0);
      EXPECT_TRUE(test::ExpectNear(rebuilt, spd, 50 * test::Tol<Real>())) << n;
      prod.AddMatMat(1.0, test::ToDouble(inv_l), kNoTrans, L, kNoTrans, 0.0);
      unit.SetUnit();
      EXPECT_TRUE(test::ExpectNear(prod, unit, 50 * test::Tol<Real>())) << n;
    }
  }
}

TYPED_TEST(MatrixBlasTest, SymInvertPosDefGivesSymmetricInverse) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixIndexT n : {0, 1, 17, 64, 127, 128}) {
    Matrix<Real> spd = RandomSpd<Real>(n, &rng);
    Matrix<Real> inv(spd);
    inv.SymInvertPosDef();
    EXPECT_TRUE(inv.IsSymmetric(1e-5));
    Matrix<double> prod(n, n), unit(n, n);
    prod.AddMatMat(1.0, test::ToDouble(spd), kNoTrans, test::ToDouble(inv), kNoTrans, 0.0);
    unit.SetUnit();
    EXPECT_TRUE(test::ExpectNear(prod, unit, 100 * test::Tol<Real>())) << n;
  }
}

TYPED_TEST(MatrixBlasTest, CholeskyThrowsOnNonPositiveDefinite) {
  using Real = TypeParam;
  Matrix<Real> m(3, 3);
  m.SetUnit();
  m(2, 2) = -1;
  const Matrix<Real> orig(m);
  EXPECT_TRUE(test::ThrowsWith([&] { m.Cholesky(); }, "not positive definite"));
  EXPECT_TRUE(m.Equal(orig));  // left untouched
  EXPECT_THROW(m.SymInvertPosDef(), Error);
  Matrix<Real> rect(2, 3);
  EXPECT_TRUE(test::ThrowsWith([&] { rect.Cholesky(); }, "2x3"));
  // Both LAPACK paths name the first leading minor that is not positive.
  for (MatrixIndexT n : {127, 128}) {
    Matrix<Real> big(n, n);
    big.SetUnit();
    big(100, 100) = -1;
    const Matrix<Real> big_orig(big);
    EXPECT_TRUE(test::ThrowsWith([&] { big.Cholesky(); }, "leading minor of order 101")) << n;
    EXPECT_TRUE(test::ThrowsWith([&] { big.SymInvertPosDef(); }, "order 101")) << n;
    EXPECT_TRUE(big.Equal(big_orig)) << n;
  }
}

TYPED_TEST(MatrixBlasTest, InvertGivesInverseAndLogDeterminant) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (MatrixIndexT n : {1, 2, 17, 64}) {
    for (bool strided : {false, true}) {
      test::TestMatrix<Real> a(n, n, strided, &rng);
      a.View().AddToDiag(2);  // keep it well conditioned
      const Matrix<double> orig = test::ToDouble(a.View());
      // Reference determinant from the double-precision Invert.
      Matrix<double> copy(orig);
      double ref_log_det = 0, ref_sign = 0;
      copy.Invert(&ref_log_det, &ref_sign, false);
      Real log_det = 0, sign = 0;
      a.View().Invert(&log_det, &sign);
      EXPECT_TRUE(a.PaddingUnchanged());
      Matrix<double> prod(n, n), unit(n, n);
      prod.AddMatMat(1.0, orig, kNoTrans, test::ToDouble(a.View()), kNoTrans, 0.0);
      unit.SetUnit();
      EXPECT_TRUE(test::ExpectNear(prod, unit, 200 * test::Tol<Real>())) << n;
      EXPECT_NEAR(log_det, ref_log_det, 1e-3);
      EXPECT_EQ(sign, ref_sign);
    }
  }
  // A known case: [[0, 2], [3, 0]] has determinant -6 and inverse [[0, 1/3], [1/2, 0]].
  Matrix<Real> m(2, 2);
  m(0, 1) = 2;
  m(1, 0) = 3;
  Real log_det, sign;
  m.Invert(&log_det, &sign);
  EXPECT_NEAR(log_det, std::log(6.0), 1e-6);
  EXPECT_EQ(sign, -1);
  EXPECT_NEAR(m(0, 1), 1.0 / 3, 1e-6);
  EXPECT_NEAR(m(1, 0), 0.5, 1e-6);
}

TYPED_TEST(MatrixBlasTest, InvertThrowsOnSingularMatrix) {
  using Real = TypeParam;
  Matrix<Real> m(3, 3);
  m(0, 0) = 1;
  m(1, 1) = 1;
  EXPECT_TRUE(test::ThrowsWith([&] { m.Invert(); }, "singular"));
  Real log_det = 0, sign = 1;
  EXPECT_NO_THROW(m.Invert(&log_det, &sign, false));
  EXPECT_EQ(sign, 0);
  EXPECT_TRUE(std::isinf(log_det));
  Matrix<Real> rect(2, 3);
  EXPECT_THROW(rect.Invert(), Error);
}

TYPED_TEST(MatrixBlasTest, InvertRejectsNonFiniteInputUnchanged) {
  using Real = TypeParam;
  Matrix<Real> m(3, 3);
  m.SetUnit();
  m(1, 2) = std::numeric_limits<Real>::quiet_NaN();
  const Matrix<Real> before(m);
  EXPECT_TRUE(test::ThrowsWith([&] { m.Invert(); }, "(1, 2) is nan"));
  for (MatrixIndexT r = 0; r < 3; ++r) {
    for (MatrixIndexT c = 0; c < 3; ++c) {
      if (r != 1 || c != 2) {
        EXPECT_EQ(m(r, c), before(r, c));
      }
    }
  }
}

}  // namespace
}  // namespace cuctx
