// tests/matrix/sp-matrix-ops-test.cc: SpMatrix AddMat2Sp / AddVec2Sp / AddTp2Sp / AddTp2, the
// structure tests, ApproxEqual / AssertEqual, TraceSpSp across precisions, TraceSpSpLower,
// TraceMatSpMat(Sp) and the packed stream operators, against dense double references.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "tests/matrix-testing.h"
#include "tests/matrix/extra-testing.h"

#include <gtest/gtest.h>
#include <limits>
#include <sstream>

namespace cuctx {
namespace {

template <typename Real>
class SpMatrixOpsTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SpMatrixOpsTest, RealTypes);

using test::Combine;
using test::DenseOf;
using test::NaiveProduct;
using test::Op;
using test::ToDouble;

const MatrixTransposeType kTransposes[] = {kNoTrans, kTrans};

TYPED_TEST(SpMatrixOpsTest, AddMat2SpMatchesDenseCongruence) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 5, 17})
    for (int k : {0, 1, 4, 9})
      for (MatrixTransposeType t : kTransposes) {
        SCOPED_TRACE(::testing::Message() << "n=" << n << " k=" << k << " t=" << t);
        const SpMatrix<Real> a = test::RandomSp<Real>(k, &rng);
        const Matrix<Real> m = t == kNoTrans ? test::RandomMatrix<Real>(n, k, &rng)
                                             : test::RandomMatrix<Real>(k, n, &rng);
        SpMatrix<Real> s = test::RandomSp<Real>(n, &rng);
        const Matrix<double> expected =
            Combine(0.5, DenseOf(s), -1.5,
                    NaiveProduct(NaiveProduct(Op(m, t), DenseOf(a)), Op(Op(m, t), kTrans)));
        s.AddMat2Sp(-1.5, m, t, a, 0.5);
        EXPECT_TRUE(test::ExpectNear(DenseOf(s), expected, test::ProductTol<Real>()));
      }
}

TYPED_TEST(SpMatrixOpsTest, AddMat2SpAcceptsItselfAsA) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  SpMatrix<Real> s = test::RandomSp<Real>(6, &rng);
  const Matrix<Real> m = test::RandomMatrix<Real>(6, 6, &rng);
  const Matrix<double> expected = Combine(
      2.0, DenseOf(s), 1.0, NaiveProduct(NaiveProduct(ToDouble(m), DenseOf(s)), Op(m, kTrans)));
  s.AddMat2Sp(1.0, m, kNoTrans, s, 2.0);
  EXPECT_TRUE(test::ExpectNear(DenseOf(s), expected, test::ProductTol<Real>()));
}

TYPED_TEST(SpMatrixOpsTest, AddTp2SpAndAddTp2MatchDenseProducts) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 8})
    for (MatrixTransposeType t : kTransposes) {
      const TpMatrix<Real> tp = test::RandomTp<Real>(n, &rng);
      const SpMatrix<Real> a = test::RandomSp<Real>(n, &rng);
      const Matrix<double> opt = Op(DenseOf(tp), t);
      SpMatrix<Real> s = test::RandomSp<Real>(n, &rng);
      Matrix<double> expected = NaiveProduct(NaiveProduct(opt, DenseOf(a)), Op(opt, kTrans));
      s.AddTp2Sp(1.0, tp, t, a);  // default beta 0
      EXPECT_TRUE(test::ExpectNear(DenseOf(s), expected, test::ProductTol<Real>()));
      SpMatrix<Real> s2 = test::RandomSp<Real>(n, &rng);
      expected = Combine(-1.0, DenseOf(s2), 0.5, NaiveProduct(opt, Op(opt, kTrans)));
      s2.AddTp2(0.5, tp, t, -1.0);
      EXPECT_TRUE(test::ExpectNear(DenseOf(s2), expected, test::ProductTol<Real>()));
    }
  SpMatrix<Real> s(3);
  test::ExpectErrorContaining([&] { s.AddTp2(1, TpMatrix<Real>(4), kNoTrans); },
                              "AddTp2: T has size 4, *this has size 3");
  test::ExpectErrorContaining(
      [&] { s.AddTp2Sp(1, TpMatrix<Real>(3), kNoTrans, SpMatrix<Real>(4)); },
      "AddMat2Sp: shape mismatch");
}

TYPED_TEST(SpMatrixOpsTest, AddVec2SpScalesByTheVectorOnBothSides) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 7}) {
    const Vector<Real> v = test::RandomVector<Real>(n, &rng);
    const SpMatrix<Real> src = test::RandomSp<Real>(n, &rng);
    SpMatrix<Real> s = test::RandomSp<Real>(n, &rng);
    Matrix<double> expected = DenseOf(s);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c)
        expected(r, c) = 3.0 * expected(r, c) + 0.5 * v(r) * src(r, c) * v(c);
    s.AddVec2Sp(0.5, v, src, 3.0);
    EXPECT_TRUE(test::ExpectNear(DenseOf(s), expected, test::Tol<Real>()));
    // In place (S == *this) with beta 0.
    Matrix<double> self = DenseOf(s);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) self(r, c) *= v(r) * v(c);
    s.AddVec2Sp(1.0, v, s, 0.0);
    EXPECT_TRUE(test::ExpectNear(DenseOf(s), self, test::Tol<Real>()));
  }
  SpMatrix<Real> s(3);
  test::ExpectErrorContaining([&] { s.AddVec2Sp(1, Vector<Real>(2), s, 0); },
                              "AddVec2Sp: v has dimension 2");
}

TYPED_TEST(SpMatrixOpsTest, StructureTestsFollowTheirDefinitions) {
  using Real = TypeParam;
  SpMatrix<Real> s(4);
  EXPECT_TRUE(s.IsZero());
  EXPECT_TRUE(s.IsDiagonal());
  EXPECT_TRUE(s.IsTridiagonal());
  EXPECT_FALSE(s.IsUnit());
  s.SetUnit();
  EXPECT_TRUE(s.IsUnit());
  EXPECT_TRUE(s.IsDiagonal());
  EXPECT_FALSE(s.IsZero());
  s(2, 1) = 1e-7;  // tiny off-diagonal: still unit within the default cutoff
  EXPECT_TRUE(s.IsUnit());
  EXPECT_TRUE(s.IsDiagonal());
  s(2, 1) = 0.5;  // the first sub-diagonal: tridiagonal, not diagonal
  EXPECT_FALSE(s.IsUnit());
  EXPECT_FALSE(s.IsDiagonal());
  EXPECT_TRUE(s.IsDiagonal(0.5));  // off-diagonal mass 0.5 (each pair counted once) vs diagonal 4
  EXPECT_TRUE(s.IsTridiagonal());
  s(3, 0) = 0.25;  // outside the band
  EXPECT_FALSE(s.IsTridiagonal());
  EXPECT_TRUE(s.IsTridiagonal(0.25));
  EXPECT_TRUE(s.IsZero(1.0));
  EXPECT_FALSE(s.IsZero(0.9));
  s(1, 1) = std::numeric_limits<Real>::quiet_NaN();
  EXPECT_FALSE(s.IsZero(10));
  EXPECT_FALSE(s.IsUnit(10));
  SpMatrix<Real> empty;
  EXPECT_TRUE(empty.IsZero() && empty.IsUnit() && empty.IsDiagonal() && empty.IsTridiagonal());
}

TYPED_TEST(SpMatrixOpsTest, ApproxEqualUsesTheLargerNorm) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SpMatrix<Real> a = test::RandomSp<Real>(5, &rng);
  SpMatrix<Real> b(a);
  b.Scale(1.005);  // ||a - b|| = 0.005 ||a||
  EXPECT_TRUE(a.ApproxEqual(b));
  EXPECT_TRUE(ApproxEqual(a, b, 0.01));
  EXPECT_FALSE(ApproxEqual(a, b, 0.001));
  AssertEqual(a, b);
  std::string text;
  {
    test::QuietLog quiet;
    text = test::ErrorText([&] { AssertEqual(a, b, 0.001); });
  }
  EXPECT_TRUE(test::Contains(text, "AssertEqual: symmetric matrices of size 5 differ"));
  test::ExpectErrorContaining([&] { a.ApproxEqual(SpMatrix<Real>(4)); },
                              "ApproxEqual: sizes 5 and 4 differ");
  test::ExpectErrorContaining([&] { a.ApproxEqual(b, -1); }, "tol = -1");
}

TYPED_TEST(SpMatrixOpsTest, TracesMatchDenseReferences) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const int n = 9;
  const SpMatrix<Real> a = test::RandomSp<Real>(n, &rng);
  const SpMatrix<float> bf = test::RandomSp<float>(n, &rng);
  const SpMatrix<double> bd = test::RandomSp<double>(n, &rng);
  const Matrix<double> ab_f = NaiveProduct(DenseOf(a), DenseOf(bf));
  const Matrix<double> ab_d = NaiveProduct(DenseOf(a), DenseOf(bd));
  EXPECT_TRUE(test::ScalarNear(TraceSpSp(a, bf), ab_f.Trace(), test::ProductTol<Real>()));
  EXPECT_TRUE(test::ScalarNear(TraceSpSp(a, bd), ab_d.Trace(), test::ProductTol<Real>()));
  double lower = 0;
  for (int r = 0; r < n; ++r)
    for (int c = 0; c <= r; ++c) lower += static_cast<double>(a(r, c)) * bd(r, c);
  const SpMatrix<Real> b(bd);
  EXPECT_TRUE(test::ScalarNear(TraceSpSpLower(a, b), lower, test::ProductTol<Real>()));
  test::ExpectErrorContaining([&] { TraceSpSp(a, SpMatrix<double>(3)); }, "sizes 9 and 3");
  test::ExpectErrorContaining([&] { TraceSpSpLower(a, SpMatrix<Real>(3)); },
                              "TraceSpSpLower: sizes 9 and 3");

  const int m = 4;
  for (MatrixTransposeType ta : kTransposes)
    for (MatrixTransposeType tc : kTransposes) {
      const Matrix<Real> am = ta == kNoTrans ? test::RandomMatrix<Real>(m, n, &rng)
                                             : test::RandomMatrix<Real>(n, m, &rng);
      const Matrix<Real> cm = tc == kNoTrans ? test::RandomMatrix<Real>(n, m, &rng)
                                             : test::RandomMatrix<Real>(m, n, &rng);
      const double want = NaiveProduct(NaiveProduct(Op(am, ta), DenseOf(a)), Op(cm, tc)).Trace();
      EXPECT_TRUE(
          test::ScalarNear(TraceMatSpMat(am, ta, a, cm, tc), want, test::ProductTol<Real>()));
      // tr(op(A) B op(C) D) with op(C) n x m and D m x m.
      const SpMatrix<Real> d = test::RandomSp<Real>(m, &rng);
      const double want4 =
          NaiveProduct(NaiveProduct(NaiveProduct(Op(am, ta), DenseOf(a)), Op(cm, tc)), DenseOf(d))
              .Trace();
      EXPECT_TRUE(
          test::ScalarNear(TraceMatSpMatSp(am, ta, a, cm, tc, d), want4, test::ProductTol<Real>()));
    }
  const Matrix<Real> bad(3, 3);
  test::ExpectErrorContaining([&] { TraceMatSpMat(bad, kNoTrans, a, bad, kNoTrans); },
                              "TraceMatSpMat: shape mismatch");
  test::ExpectErrorContaining(
      [&] { TraceMatSpMatSp(bad, kNoTrans, a, bad, kNoTrans, SpMatrix<Real>(3)); },
      "TraceMatSpMatSp: shape mismatch");
}

TYPED_TEST(SpMatrixOpsTest, StreamOperatorsUseTheTextForm) {
  using Real = TypeParam;
  SpMatrix<Real> s(2);
  s(0, 0) = 1;
  s(1, 0) = 2;
  s(1, 1) = 3;
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "[\n1 \n2 3 ]\n");
  TpMatrix<Real> t(2);
  t(1, 0) = -4;
  std::ostringstream ot;
  ot << t;
  std::ostringstream written;
  t.Write(written, false);
  EXPECT_EQ(ot.str(), written.str());
  std::istringstream is(os.str());
  SpMatrix<Real> back;
  is >> back;
  EXPECT_EQ(back.NumRows(), 2);
  EXPECT_EQ(back(0, 1), 2);
  EXPECT_EQ(back(1, 1), 3);
  std::istringstream junk("[ 1 2 ]");  // not a triangular number of values
  SpMatrix<Real> bad;
  test::QuietLog quiet;
  EXPECT_THROW(junk >> bad, Error);
}

}  // namespace
}  // namespace cuctx
