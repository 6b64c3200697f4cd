// tests/matrix/packed-matrix-test.cc: Sp/Tp golden I/O, Cholesky, Invert, algebra vs dense.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "base/io-funcs.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"
#include "tests/matrix-testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

namespace cuctx {
namespace {

using test::Int32;
using test::OneToNBytes;

// The 2 x 2 packed matrix with lower triangle (1; 2 3) in binary.
template <typename Real>
std::string GoldenPacked2() {
  return std::string(sizeof(Real) == 4 ? "FP " : "DP ") + Int32(2) + OneToNBytes<Real>(3);
}

template <typename Real>
double Tolerance() {
  return std::is_same<Real, float>::value ? 1e-4 : 1e-10;
}

// A well-conditioned random SPD matrix: M M^T / n + I.
template <typename Real>
Matrix<Real> RandomSpd(int n, test::Rng* rng) {
  Matrix<Real> m = test::GaussMatrix<Real>(n, n, rng);
  Matrix<Real> a(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += static_cast<double>(m(i, k)) * m(j, k);
      a(i, j) = static_cast<Real>(s / n + (i == j ? 1.0 : 0.0));
    }
  return a;
}

// Dense product (double accumulation), with optional transposes.
template <typename Real>
Matrix<double> Product(const MatrixBase<Real>& a, bool ta, const MatrixBase<Real>& b, bool tb) {
  const int m = ta ? a.NumCols() : a.NumRows(), k = ta ? a.NumRows() : a.NumCols();
  const int n = tb ? b.NumRows() : b.NumCols();
  Matrix<double> out(m, n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int l = 0; l < k; ++l)
        s += static_cast<double>(ta ? a(l, i) : a(i, l)) * (tb ? b(j, l) : b(l, j));
      out(i, j) = s;
    }
  return out;
}

// max |a - b| <= tol * max(1, max |b|).
template <typename RealA, typename RealB>
void ExpectClose(const MatrixBase<RealA>& a, const MatrixBase<RealB>& b, double tol) {
  ASSERT_EQ(a.NumRows(), b.NumRows());
  ASSERT_EQ(a.NumCols(), b.NumCols());
  double scale = 1.0, worst = 0.0;
  int wr = 0, wc = 0;
  for (int r = 0; r < b.NumRows(); ++r)
    for (int c = 0; c < b.NumCols(); ++c)
      scale = std::max(scale, std::fabs(static_cast<double>(b(r, c))));
  for (int r = 0; r < a.NumRows(); ++r)
    for (int c = 0; c < a.NumCols(); ++c) {
      double d = std::fabs(static_cast<double>(a(r, c)) - static_cast<double>(b(r, c)));
      if (d > worst) worst = d, wr = r, wc = c;
    }
  EXPECT_LE(worst, tol * scale) << "worst element (" << wr << ", " << wc << "): " << a(wr, wc)
                                << " vs " << b(wr, wc);
}

template <typename Real>
Matrix<Real> Full(const SpMatrix<Real>& s) {
  Matrix<Real> m(s.NumRows(), s.NumRows());
  s.CopyToMat(&m);
  return m;
}
template <typename Real>
Matrix<Real> Full(const TpMatrix<Real>& t) {
  Matrix<Real> m(t.NumRows(), t.NumRows());
  t.CopyToMat(&m);
  return m;
}

template <typename Real>
class PackedMatrixTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PackedMatrixTest, RealTypes);

TYPED_TEST(PackedMatrixTest, BinaryGoldenBothWays) {
  using Real = TypeParam;
  SpMatrix<Real> s(2);
  s(0, 0) = 1;
  s(1, 0) = 2;
  s(1, 1) = 3;
  std::ostringstream os;
  s.Write(os, true);
  EXPECT_EQ(os.str(), GoldenPacked2<Real>());
  std::istringstream is(GoldenPacked2<Real>());
  TpMatrix<Real> tp;
  tp.Read(is, true);
  const TpMatrix<Real>& t = tp;
  ASSERT_EQ(t.NumRows(), 2);
  EXPECT_EQ(t(0, 0), 1);
  EXPECT_EQ(t(1, 0), 2);
  EXPECT_EQ(t(1, 1), 3);
  EXPECT_EQ(t(0, 1), 0);
  SpMatrix<Real> empty;
  std::ostringstream e;
  empty.Write(e, true);
  EXPECT_EQ(e.str(), std::string(sizeof(Real) == 4 ? "FP " : "DP ") + Int32(0));
}

TYPED_TEST(PackedMatrixTest, TextGoldenBothWays) {
  using Real = TypeParam;
  SpMatrix<Real> s(3);
  Real v = 1;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c <= r; ++c) s(r, c) = v++;
  s(2, 2) = static_cast<Real>(-6.5);
  std::ostringstream os;
  s.Write(os, false);
  const std::string golden = "[\n1 \n2 3 \n4 5 -6.5 ]\n";
  EXPECT_EQ(os.str(), golden);
  std::istringstream is(golden + "next");
  SpMatrix<Real> back;
  back.Read(is, false);
  ASSERT_EQ(back.NumRows(), 3);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c <= r; ++c) EXPECT_EQ(back(r, c), s(r, c));
  std::string rest;
  is >> rest;
  EXPECT_EQ(rest, "next");
  SpMatrix<Real> empty;
  std::ostringstream e;
  empty.Write(e, false);
  EXPECT_EQ(e.str(), "[ ]\n");
  for (const std::string& text : {std::string("[ ]\n"), std::string("[]\n")}) {
    std::istringstream eis(text);
    SpMatrix<Real> x(4);
    x.Read(eis, false);
    EXPECT_EQ(x.NumRows(), 0) << text;
  }
}

TYPED_TEST(PackedMatrixTest, ReadsOldTextFormOtherPrecisionAndAdds) {
  using Real = TypeParam;
  using Other = typename std::conditional<sizeof(Real) == 4, double, float>::type;
  std::istringstream old_text("FP 2 1 2 3\n");
  std::istringstream old_text_d("DP 2 1 2 3\n");
  SpMatrix<Real> a, b;
  a.Read(old_text, false);
  b.Read(old_text_d, false);
  for (const SpMatrix<Real>* s : {&a, &b}) {
    ASSERT_EQ(s->NumRows(), 2);
    EXPECT_EQ((*s)(0, 1), 2);
    EXPECT_EQ((*s)(1, 1), 3);
  }
  std::istringstream other(GoldenPacked2<Other>() + GoldenPacked2<Real>());
  SpMatrix<Real> c;
  c.Read(other, true);
  EXPECT_EQ(c(1, 1), 3);
  c.Read(other, true, true);
  EXPECT_EQ(c(1, 0), 4);
  EXPECT_EQ(c(1, 1), 6);
  test::ExpectErrorContaining(
      [&] {
        std::istringstream is(GoldenPacked2<Real>());
        SpMatrix<Real> three(3);
        three(0, 0) = 1;
        three.Read(is, true, true);
      },
      "size 2");
}

TYPED_TEST(PackedMatrixTest, MalformedInputThrows) {
  using Real = TypeParam;
  const std::string token = sizeof(Real) == 4 ? "FP " : "DP ";
  auto read = [](const std::string& bytes, bool binary) {
    return [bytes, binary] {
      std::istringstream is(bytes);
      SpMatrix<Real> s;
      s.Read(is, binary);
    };
  };
  test::ExpectErrorContaining(read("XP " + Int32(1), true), "found \"XP\"");
  test::ExpectErrorContaining(read(token + Int32(-2), true), "negative size -2");
  test::ExpectErrorContaining(read(token + Int32(100000) + OneToNBytes<Real>(3), true), "bytes");
  test::ExpectErrorContaining(read("[ 1 2 ]\n", false), "not n(n+1)/2");
  test::ExpectErrorContaining(read("[\n1 \n2 x ]\n", false), "floating-point");
  test::ExpectErrorContaining(read("[\n1 \n2 3 \n", false), "unterminated");
  test::ExpectErrorContaining(read("{ 1 }", false), "expected token");
  const std::string golden = GoldenPacked2<Real>();
  for (size_t len = 0; len < golden.size(); ++len) {
    SCOPED_TRACE("prefix of " + std::to_string(len) + " bytes");
    test::QuietLog quiet;
    std::istringstream is(golden.substr(0, len));
    SpMatrix<Real> s;
    EXPECT_THROW(s.Read(is, true), Error);
  }
}

TYPED_TEST(PackedMatrixTest, ElementAccessAndResize) {
  using Real = TypeParam;
  SpMatrix<Real> s(3);
  s(0, 2) = 5;
  EXPECT_EQ(s(2, 0), 5);
  EXPECT_EQ(s.Data()[3], 5);  // (2, 0) is the fourth stored element
  TpMatrix<Real> t(3);
  t(2, 1) = 7;
  const TpMatrix<Real>& ct = t;
  EXPECT_EQ(ct(1, 2), 0);
  test::ExpectErrorContaining([&] { t(1, 2) = 1; }, "(1, 2) out of range");
  test::ExpectErrorContaining([&] { s(3, 0) = 1; }, "(3, 0) out of range");
  test::ExpectErrorContaining([&] { (void)ct(-1, 0); }, "out of range");
  s.Resize(4, kCopyData);
  EXPECT_EQ(s(2, 0), 5);
  EXPECT_EQ(s(3, 3), 0);
  s.Resize(2, kCopyData);
  EXPECT_EQ(s.NumRows(), 2);
  s.Resize(2);
  EXPECT_EQ(s(0, 0), 0);
  test::ExpectErrorContaining([&] { s.Resize(-1); }, "negative size -1");
  s.SetUnit();
  EXPECT_EQ(s.Trace(), 2);
  s.AddToDiag(1);
  s.ScaleDiag(2);
  EXPECT_EQ(s(1, 1), 4);
  EXPECT_EQ(s(1, 0), 0);
  EXPECT_EQ(s.Max(), 4);
  EXPECT_EQ(s.Min(), 0);
  test::ExpectErrorContaining([] { SpMatrix<Real>().Max(); }, "empty");
}

TYPED_TEST(PackedMatrixTest, CopyFromMatTypes) {
  using Real = TypeParam;
  Matrix<Real> m(2, 2);
  m(0, 0) = 1;
  m(0, 1) = 2;
  m(1, 0) = 4;
  m(1, 1) = 5;
  EXPECT_EQ(SpMatrix<Real>(m, kTakeLower)(0, 1), 4);
  EXPECT_EQ(SpMatrix<Real>(m, kTakeUpper)(0, 1), 2);
  EXPECT_EQ(SpMatrix<Real>(m, kTakeMean)(0, 1), 3);
  test::ExpectErrorContaining([&] { SpMatrix<Real> s(m, kTakeMeanAndCheck); },
                              "not symmetric: M(1, 0) = 4");
  m(1, 0) = 2;
  EXPECT_EQ(SpMatrix<Real>(m, kTakeMeanAndCheck)(1, 0), 2);
  test::ExpectErrorContaining([] { SpMatrix<Real> s(Matrix<Real>(2, 3)); },
                              "2 x 3, expected square");
  TpMatrix<Real> lower(m), upper(m, kTrans);
  EXPECT_EQ(lower(1, 0), m(1, 0));
  EXPECT_EQ(upper(1, 0), m(0, 1));
  Matrix<Real> full = Full(lower);
  EXPECT_EQ(full(0, 1), 0);
  Matrix<double> wrong(3, 3);
  test::ExpectErrorContaining([&] { lower.CopyToMat(&wrong); },
                              "destination is 3 x 3, expected 2 x 2");
  Matrix<double> as_double(2, 2);
  SpMatrix<Real>(m).CopyToMat(&as_double);
  EXPECT_EQ(as_double(0, 1), 2);
}

TYPED_TEST(PackedMatrixTest, CholeskyReconstructsSpd) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 2, 5, 17, 40}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Matrix<Real> a = RandomSpd<Real>(n, &rng);
    SpMatrix<Real> s(a, kTakeLower);
    TpMatrix<Real> l;
    l.Cholesky(s);
    ASSERT_EQ(l.NumRows(), n);
    for (int i = 0; i < n; ++i) EXPECT_GT(l(i, i), 0);
    Matrix<Real> lf = Full(l);
    ExpectClose(Product(lf, false, lf, true), a, Tolerance<Real>());
    // The inverse of the factor.
    TpMatrix<Real> linv(l);
    linv.Invert();
    Matrix<Real> linv_full = Full(linv);
    Matrix<double> eye(n, n);
    eye.SetUnit();
    ExpectClose(Product(lf, false, linv_full, false), eye, Tolerance<Real>());
    EXPECT_TRUE(s.IsPosDef());
    double log_det = 0;
    for (int i = 0; i < n; ++i) log_det += 2 * std::log(static_cast<double>(l(i, i)));
    EXPECT_NEAR(s.LogPosDefDet(), log_det, Tolerance<Real>() * (1 + std::fabs(log_det)));
    EXPECT_NEAR(l.Determinant(), std::exp(log_det / 2), Tolerance<Real>() * std::exp(log_det / 2));
  }
}

TYPED_TEST(PackedMatrixTest, CholeskyRejectsIndefinite) {
  using Real = TypeParam;
  SpMatrix<Real> s(3);
  s.SetUnit();
  s(2, 2) = -1;
  TpMatrix<Real> l(1);
  test::ExpectErrorContaining([&] { l.Cholesky(s); }, "not positive definite");
  test::ExpectErrorContaining([&] { l.Cholesky(s); }, "row 2");
  EXPECT_EQ(l.NumRows(), 1);  // unchanged
  EXPECT_FALSE(s.IsPosDef());
  test::ExpectErrorContaining([&] { s.LogPosDefDet(); }, "not positive definite");
  SpMatrix<Real> nan_matrix(2);
  nan_matrix.SetUnit();
  nan_matrix(1, 0) = std::numeric_limits<Real>::quiet_NaN();
  test::ExpectErrorContaining([&] { l.Cholesky(nan_matrix); }, "not positive definite");
  TpMatrix<Real> singular(2);
  singular(1, 1) = 1;
  test::ExpectErrorContaining([&] { singular.Invert(); }, "singular");
}

TYPED_TEST(PackedMatrixTest, InvertMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(1);
  for (int n : {1, 3, 17, 33}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Matrix<Real> a = RandomSpd<Real>(n, &rng);
    SpMatrix<Real> s(a, kTakeLower), inv(s);
    Real log_det = 0, sign = 0;
    inv.Invert(&log_det, &sign);
    EXPECT_EQ(sign, 1);
    EXPECT_NEAR(log_det, s.LogPosDefDet(), Tolerance<Real>() * 10);
    EXPECT_NEAR(s.LogDet(), log_det, Tolerance<Real>() * 10);
    Matrix<double> eye(n, n);
    eye.SetUnit();
    ExpectClose(Product(a, false, Full(inv), false), eye, Tolerance<Real>() * 10);
  }
  // Symmetric but indefinite: still invertible, with a negative determinant.
  SpMatrix<Real> ind(2);
  ind(0, 0) = 1;
  ind(1, 0) = 2;
  ind(1, 1) = 1;  // det = 1 - 4 = -3
  SpMatrix<Real> ind_inv(ind);
  Real log_det = 0, sign = 0;
  ind_inv.Invert(&log_det, &sign);
  EXPECT_EQ(sign, -1);
  EXPECT_NEAR(log_det, std::log(3.0), 1e-6);
  EXPECT_NEAR(ind_inv(0, 0), -1.0 / 3, 1e-6);
  EXPECT_NEAR(ind_inv(1, 0), 2.0 / 3, 1e-6);
  // Singular.
  SpMatrix<Real> sing(2);
  sing(0, 0) = 1;
  sing(1, 0) = 1;
  sing(1, 1) = 1;
  SpMatrix<Real> copy(sing);
  test::ExpectErrorContaining([&] { copy.Invert(); }, "singular");
  copy.Invert(&log_det, &sign, false);
  EXPECT_EQ(sign, 0);
  EXPECT_EQ(log_det, -std::numeric_limits<Real>::infinity());
  EXPECT_EQ(copy(1, 0), 1);  // unchanged
}

TYPED_TEST(PackedMatrixTest, AlgebraMatchesDenseReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(2);
  const int n = 13, k = 7;
  Matrix<Real> m = test::GaussMatrix<Real>(n, k, &rng), mt = test::GaussMatrix<Real>(k, n, &rng);
  Matrix<Real> a = RandomSpd<Real>(n, &rng);
  SpMatrix<Real> s(a, kTakeLower);

  // AddMat2 (both transposes, with beta).
  SpMatrix<Real> s1(s);
  s1.AddMat2(static_cast<Real>(0.5), m, kNoTrans, static_cast<Real>(2));
  Matrix<double> ref1 = Product(m, false, m, true);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) ref1(i, j) = 0.5 * ref1(i, j) + 2 * a(i, j);
  ExpectClose(Full(s1), ref1, Tolerance<Real>());
  SpMatrix<Real> s2(n);
  s2(0, 0) = std::numeric_limits<Real>::quiet_NaN();  // beta = 0 ignores old contents
  s2.AddMat2(1, mt, kTrans, 0);
  ExpectClose(Full(s2), Product(mt, true, mt, false), Tolerance<Real>());
  test::ExpectErrorContaining([&] { s2.AddMat2(1, mt, kNoTrans, 0); }, "M is 7 x 13");

  // AddVec2, AddVecVec, AddDiagVec, AddSp.
  Vector<Real> v(n), w(n);
  for (int i = 0; i < n; ++i)
    v(i) = static_cast<Real>(rng.Gauss()), w(i) = static_cast<Real>(rng.Gauss());
  SpMatrix<Real> s3(s);
  s3.AddVec2(static_cast<Real>(3), v);
  s3.AddVecVec(static_cast<Real>(-1), v, w);
  s3.AddDiagVec(static_cast<Real>(2), w);
  s3.AddSp(static_cast<Real>(0.25), s);
  Matrix<double> ref3(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      ref3(i, j) = a(i, j) * 1.25 + 3.0 * v(i) * v(j) - (v(i) * w(j) + w(i) * v(j)) +
                   (i == j ? 2.0 * w(i) : 0.0);
  ExpectClose(Full(s3), ref3, Tolerance<Real>());
  test::ExpectErrorContaining([&] { s3.AddVec2(1, Vector<Real>(3)); },
                              "vector dim 3, matrix size 13");

  // Reductions against the dense matrix.
  double trace = 0, sum = 0, sumsq = 0, tr_ab = 0, vsv = 0;
  Matrix<Real> full3 = Full(s3);
  for (int i = 0; i < n; ++i) {
    trace += a(i, i);
    for (int j = 0; j < n; ++j) {
      sum += a(i, j);
      sumsq += static_cast<double>(a(i, j)) * a(i, j);
      tr_ab += static_cast<double>(a(i, j)) * full3(j, i);
      vsv += static_cast<double>(v(i)) * a(i, j) * w(j);
    }
  }
  const double tol = Tolerance<Real>();
  EXPECT_NEAR(s.Trace(), trace, tol * std::fabs(trace));
  EXPECT_NEAR(s.Sum(), sum, tol * (1 + std::fabs(sum)));
  EXPECT_NEAR(s.FrobeniusNorm(), std::sqrt(sumsq), tol * std::sqrt(sumsq));
  EXPECT_NEAR(TraceSpSp(s, s3), tr_ab, tol * (1 + std::fabs(tr_ab)));
  EXPECT_NEAR(TraceSpMat(s, full3), tr_ab, tol * (1 + std::fabs(tr_ab)));
  EXPECT_NEAR(VecSpVec(v, s, w), vsv, tol * (1 + std::fabs(vsv)));
  test::ExpectErrorContaining([&] { TraceSpSp(s, SpMatrix<Real>(2)); }, "sizes 13 and 2 differ");

  SpMatrix<Real> scaled(s);
  scaled.Scale(-2);
  EXPECT_NEAR(scaled.Sum(), -2 * sum, tol * (1 + std::fabs(sum)));

  TpMatrix<Real> t(a);
  double tsum = 0, tsq = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) tsum += a(i, j), tsq += static_cast<double>(a(i, j)) * a(i, j);
  EXPECT_NEAR(t.Sum(), tsum, tol * (1 + std::fabs(tsum)));
  EXPECT_NEAR(t.FrobeniusNorm(), std::sqrt(tsq), tol * std::sqrt(tsq));
}

// A float matrix of entries near 1e-27 has a representable norm although the sum of squares is
// below float's range (Kaldi's Tridiagonalize test compares such matrices with AssertEqual).
TYPED_TEST(PackedMatrixTest, FrobeniusNormOfTinyEntriesDoesNotUnderflow) {
  using Real = TypeParam;
  const int n = 16;
  const Real x = static_cast<Real>(-1.61558713e-27);
  SpMatrix<Real> s(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) s(i, j) = x;
  EXPECT_NEAR(s.FrobeniusNorm(), n * std::fabs(static_cast<double>(x)), 1e-5 * n * 1.62e-27);
  SpMatrix<Real> near(s);
  near(3, 2) = x * static_cast<Real>(1.000001);
  EXPECT_TRUE(s.ApproxEqual(near, 0.01f));
  near(3, 2) = -x;
  EXPECT_FALSE(s.ApproxEqual(near, 0.01f));
}

TYPED_TEST(PackedMatrixTest, PrecisionConversions) {
  using Real = TypeParam;
  using Other = typename std::conditional<sizeof(Real) == 4, double, float>::type;
  SpMatrix<Other> o(2);
  o(1, 0) = static_cast<Other>(1.5);
  SpMatrix<Real> s(o);
  EXPECT_EQ(s(0, 1), static_cast<Real>(1.5));
  TpMatrix<Other> ot(2);
  ot(1, 1) = 4;
  TpMatrix<Real> t(2);
  t.CopyFromTp(ot);
  EXPECT_EQ(t(1, 1), 4);
  Vector<Other> v(3);
  v(2) = 9;
  s.CopyFromVec(v);
  EXPECT_EQ(s(1, 1), 9);
  test::ExpectErrorContaining([&] { s.CopyFromVec(Vector<Other>(4)); }, "vector dim 4, expected 3");
  test::ExpectErrorContaining([&] { s.CopyFromSp(SpMatrix<Other>(3)); }, "source size 3");
}

}  // namespace
}  // namespace cuctx
