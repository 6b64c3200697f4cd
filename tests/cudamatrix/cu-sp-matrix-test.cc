// tests/cudamatrix/cu-sp-matrix-test.cc: CuPackedMatrix, CuSpMatrix, CuTpMatrix and the packed
// copies of CuMatrixBase / CuVectorBase compared with the CPU SpMatrix / TpMatrix.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-sp-matrix.h"

#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-packed-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <gtest/gtest.h>
#include <sstream>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

// The full matrix a packed one stands for, through the CPU classes.
template <typename Real>
Matrix<Real> Full(const SpMatrix<Real>& s) {
  Matrix<Real> m(s.NumRows(), s.NumRows());
  m.CopyFromSp(s);
  return m;
}
template <typename Real>
Matrix<Real> Full(const TpMatrix<Real>& t) {
  Matrix<Real> m(t.NumRows(), t.NumRows());
  m.CopyFromTp(t);
  return m;
}
template <typename Real>
SpMatrix<Real> ToHost(const CuSpMatrix<Real>& s) {
  SpMatrix<Real> h(s.NumRows(), kUndefined);
  s.CopyToSp(&h);
  return h;
}
template <typename Real>
TpMatrix<Real> ToHost(const CuTpMatrix<Real>& t) {
  TpMatrix<Real> h(t.NumRows(), kUndefined);
  t.CopyToPacked(&h);
  return h;
}

template <typename Real>
SpMatrix<Real> RandomSp(int n, test::Rng* rng) {
  return SpMatrix<Real>(test::RandomMatrix<Real>(n, n, rng), kTakeLower);
}

// A positive definite n x n matrix (B B^T + n I).
template <typename Real>
SpMatrix<Real> RandomSpd(int n, test::Rng* rng) {
  SpMatrix<Real> s(n);
  s.AddMat2(1.0, test::RandomMatrix<Real>(n, n, rng), kNoTrans, 0.0);
  s.AddToDiag(n);
  return s;
}

const std::vector<int> kSizes = {0, 1, 2, 17, 63, 64, 65};

template <typename Real>
class CuSpMatrixTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuSpMatrixTest, RealTypes);

TYPED_TEST(CuSpMatrixTest, CopyFromMatTakesTheRequestedTriangle) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes)
    for (bool strided : {false, true}) {
      SCOPED_TRACE(n);
      test::GuardedCuMatrix<Real> m(n, n, strided, &rng);
      for (SpCopyType type : {kTakeLower, kTakeUpper, kTakeMean}) {
        const CuSpMatrix<Real> sp(m.view, type);
        const SpMatrix<Real> expected(m.Host(), type);
        EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(expected), test::Tol<Real>()));
      }
      EXPECT_TRUE(m.BorderUnchanged());
    }
}

TYPED_TEST(CuSpMatrixTest, CopyFromMatChecksSymmetryWhenAsked) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SpMatrix<Real> s = RandomSp<Real>(9, &rng);
  CuMatrix<Real> sym(Full(s));
  CuSpMatrix<Real> sp;
  sp.CopyFromMat(sym, kTakeMeanAndCheck);
  EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(s), test::Tol<Real>()));
  CuMatrix<Real> asym(test::RandomMatrix<Real>(9, 9, &rng));
  test::ExpectErrorContaining([&] { sp.CopyFromMat(asym, kTakeMeanAndCheck); }, "symmetric");
}

TYPED_TEST(CuSpMatrixTest, UnpackingMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes)
    for (bool strided : {false, true}) {
      SCOPED_TRACE(n);
      const SpMatrix<Real> s = RandomSp<Real>(n, &rng);
      const TpMatrix<Real> t(test::RandomMatrix<Real>(n, n, &rng));
      const CuSpMatrix<Real> cs(s);
      const CuTpMatrix<Real> ct(t);
      test::GuardedCuMatrix<Real> out(n, n, strided, &rng);
      out.view.CopyFromSp(cs);
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), Full(s), 0.0));
      out.view.CopyFromTp(ct);
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), Full(t), 0.0));
      out.view.CopyFromTp(ct, kTrans);
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), Matrix<Real>(Full(t), kTrans), 0.0));
      EXPECT_TRUE(out.BorderUnchanged());
    }
}

TYPED_TEST(CuSpMatrixTest, TpCopyFromMatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes) {
    SCOPED_TRACE(n);
    test::GuardedCuMatrix<Real> m(n, n, true, &rng);
    for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
      const CuTpMatrix<Real> t(m.view, trans);
      EXPECT_TRUE(test::ExpectNear(Full(ToHost(t)), Full(TpMatrix<Real>(m.Host(), trans)), 0.0));
    }
  }
}

TYPED_TEST(CuSpMatrixTest, AddMat2MatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes)
    for (MatrixTransposeType trans : {kNoTrans, kTrans})
      for (Real beta : {Real(0), Real(0.5)}) {
        SCOPED_TRACE(n);
        const int k = 7;
        test::GuardedCuMatrix<Real> m(trans == kNoTrans ? n : k, trans == kNoTrans ? k : n, true,
                                      &rng);
        SpMatrix<Real> expected = RandomSp<Real>(n, &rng);
        CuSpMatrix<Real> sp(expected);
        sp.AddMat2(0.75, m.view, trans, beta);
        expected.AddMat2(0.75, m.Host(), trans, beta);
        EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(expected), 10 * test::Tol<Real>()));
      }
}

TYPED_TEST(CuSpMatrixTest, AddVec2AndAddSpMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes) {
    SCOPED_TRACE(n);
    SpMatrix<Real> expected = RandomSp<Real>(n, &rng);
    const SpMatrix<Real> other = RandomSp<Real>(n, &rng);
    const Vector<Real> v = test::RandomVector<Real>(n, &rng);
    CuSpMatrix<Real> sp(expected);
    sp.AddVec2(-1.5, CuVector<Real>(v));
    sp.AddSp(2.0, CuSpMatrix<Real>(other));
    expected.AddVec2(-1.5, v);
    expected.AddSp(2.0, other);
    EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(expected), test::Tol<Real>()));
    // AddSp with itself doubles it.
    sp.AddSp(1.0, sp);
    expected.Scale(2.0);
    EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(expected), test::Tol<Real>()));
  }
}

TYPED_TEST(CuSpMatrixTest, TraceSpSpAndAddSpVecMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes) {
    SCOPED_TRACE(n);
    const SpMatrix<Real> a = RandomSp<Real>(n, &rng), b = RandomSp<Real>(n, &rng);
    const Real expected = TraceSpSp(a, b);
    const Real actual = TraceSpSp(CuSpMatrix<Real>(a), CuSpMatrix<Real>(b));
    EXPECT_NEAR(actual, expected, 10 * test::Tol<Real>() * (n + 1) * (n + 1));

    const Vector<Real> v = test::RandomVector<Real>(n, &rng), y = test::RandomVector<Real>(n, &rng);
    Vector<Real> expected_y(y);
    expected_y.AddMatVec(0.5, Full(a), kNoTrans, v, -2.0);
    CuVector<Real> cy(y);
    cy.AddSpVec(0.5, CuSpMatrix<Real>(a), CuVector<Real>(v), -2.0);
    EXPECT_TRUE(test::ExpectNear(ToHost(cy), expected_y, 10 * test::Tol<Real>()));
  }
}

TYPED_TEST(CuSpMatrixTest, SpInvertMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 2, 63, 64, 65}) {
    SCOPED_TRACE(n);
    SpMatrix<Real> expected = RandomSpd<Real>(n, &rng);
    CuSpMatrix<Real> sp(expected);
    sp.Invert();
    expected.Invert();
    EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(expected), 100 * test::Tol<Real>()));
  }
  SpMatrix<Real> indefinite(3);
  indefinite.SetUnit();
  indefinite(1, 1) = -1;
  CuSpMatrix<Real> sp(indefinite);
  test::ExpectErrorContaining([&] { sp.Invert(); }, "not positive definite");
  EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(indefinite), 0.0)) << "modified on error";
}

TYPED_TEST(CuSpMatrixTest, TpCholeskyAndInvertMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 2, 63, 64, 65}) {
    SCOPED_TRACE(n);
    const SpMatrix<Real> s = RandomSpd<Real>(n, &rng);
    TpMatrix<Real> expected;
    expected.Cholesky(s);
    CuTpMatrix<Real> t(3);
    t.Cholesky(CuSpMatrix<Real>(s));
    ASSERT_EQ(t.NumRows(), n);
    EXPECT_TRUE(test::ExpectNear(Full(ToHost(t)), Full(expected), 100 * test::Tol<Real>()));
    t.Invert();
    expected.Invert();
    EXPECT_TRUE(test::ExpectNear(Full(ToHost(t)), Full(expected), 100 * test::Tol<Real>()));
  }
  SpMatrix<Real> indefinite(4);
  indefinite.SetUnit();
  indefinite(3, 3) = -1;
  CuTpMatrix<Real> t(2);
  t.SetUnit();
  test::ExpectErrorContaining([&] { t.Cholesky(CuSpMatrix<Real>(indefinite)); },
                              "not positive definite");
  EXPECT_EQ(t.NumRows(), 2) << "modified on error";
  TpMatrix<Real> singular(3);
  singular.SetUnit();
  singular(1, 1) = 0;
  CuTpMatrix<Real> cs(singular);
  test::ExpectErrorContaining([&] { cs.Invert(); }, "singular");
}

TYPED_TEST(CuSpMatrixTest, PackedElementOpsMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes) {
    SCOPED_TRACE(n);
    SpMatrix<Real> expected = RandomSp<Real>(n, &rng);
    CuSpMatrix<Real> sp(expected);
    EXPECT_NEAR(sp.Trace(), expected.Trace(), test::Tol<Real>() * (n + 1));
    sp.AddToDiag(2);
    sp.ScaleDiag(3);
    sp.Scale(-0.5);
    expected.AddToDiag(2);
    expected.ScaleDiag(3);
    expected.Scale(-0.5);
    EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(expected), test::Tol<Real>()));
    if (n > 1) {
      EXPECT_EQ(sp(1, 0), expected(1, 0));
      EXPECT_EQ(sp(0, 1), expected(1, 0));
    }
    sp.SetDiag(4);
    expected.SetDiag(4);
    EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(expected), test::Tol<Real>()));
    sp.SetUnit();
    expected.SetUnit();
    EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(expected), 0.0));
  }
}

TYPED_TEST(CuSpMatrixTest, ResizeSwapAndIoKeepContents) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SpMatrix<Real> s = RandomSp<Real>(6, &rng);
  CuSpMatrix<Real> sp(s);
  sp.Resize(4, kCopyData);
  SpMatrix<Real> expected(s);
  expected.Resize(4, kCopyData);
  EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(expected), 0.0));
  sp.Resize(5, kCopyData);
  expected.Resize(5, kCopyData);
  EXPECT_TRUE(test::ExpectNear(Full(ToHost(sp)), Full(expected), 0.0));

  for (bool binary : {true, false}) {
    std::ostringstream os;
    sp.Write(os, binary);
    std::istringstream is(os.str());
    CuSpMatrix<Real> back;
    back.Read(is, binary);
    EXPECT_TRUE(test::ExpectNear(Full(ToHost(back)), Full(expected), binary ? 0.0 : 1e-6));
  }

  CuSpMatrix<Real> other(2);
  other.SetUnit();
  sp.Swap(&other);
  EXPECT_EQ(sp.NumRows(), 2);
  EXPECT_TRUE(test::ExpectNear(Full(ToHost(other)), Full(expected), 0.0));
  SpMatrix<Real> host(3);
  host.SetUnit();
  other.Swap(&host);
  EXPECT_EQ(other.NumRows(), 3);
  EXPECT_TRUE(test::ExpectNear(Full(host), Full(expected), 0.0));
  sp.SetRandn();
  EXPECT_GT(ToHost(sp).FrobeniusNorm(), 0);
}

TYPED_TEST(CuSpMatrixTest, MisuseThrowsNamingSizes) {
  using Real = TypeParam;
  CuSpMatrix<Real> sp(3);
  CuTpMatrix<Real> tp(3);
  CuMatrix<Real> rect(3, 4), wrong(4, 4);
  CuVector<Real> v2(2), v3(3);
  test::ExpectErrorContaining([&] { sp.CopyFromMat(rect); }, "3x4 is not square");
  test::ExpectErrorContaining([&] { tp.CopyFromMat(rect); }, "3x4 is not square");
  test::ExpectErrorContaining([&] { wrong.CopyFromSp(sp); }, "size 3 does not match *this 4x4");
  test::ExpectErrorContaining([&] { wrong.CopyFromTp(tp); }, "size 3 does not match *this 4x4");
  test::ExpectErrorContaining([&] { sp.AddMat2(1, rect, kTrans, 0); }, "3x4 (kTrans) does not");
  test::ExpectErrorContaining([&] { sp.AddVec2(1, v2); }, "vector of dim 2");
  test::ExpectErrorContaining([&] { sp.AddSp(1, CuSpMatrix<Real>(2)); }, "size 2 does not match");
  test::ExpectErrorContaining([&] { TraceSpSp(sp, CuSpMatrix<Real>(2)); }, "sizes 3 and 2");
  test::ExpectErrorContaining([&] { v2.AddSpVec(1, sp, v3, 0); }, "into vector of dim 2");
  test::ExpectErrorContaining([&] { v3.AddSpVec(1, sp, v3, 0); }, "v overlaps *this");
  test::ExpectErrorContaining([&] { sp(0, 3); }, "(0, 3)");
  test::ExpectErrorContaining([&] { sp.Resize(-1); }, "size -1");
  SpMatrix<Real> host(2);
  test::ExpectErrorContaining([&] { sp.CopyToSp(&host); }, "destination size 2");
}

}  // namespace
}  // namespace cuctx
