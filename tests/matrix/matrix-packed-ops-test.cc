// tests/matrix/matrix-packed-ops-test.cc: MatrixBase AddSp / AddSpMat / AddTpMat / AddMatSp /
// AddSpMatSp / AddMatTp / AddTpTp / AddSpSp against naive double products of the dense forms.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "tests/matrix-testing.h"
#include "tests/matrix/extra-testing.h"

#include <gtest/gtest.h>

namespace cuctx {
namespace {

template <typename Real>
class MatrixPackedOpsTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixPackedOpsTest, RealTypes);

using test::Combine;
using test::DenseOf;
using test::NaiveProduct;
using test::Op;
using test::ToDouble;

constexpr double kAlpha = 0.75, kBeta = -0.5;
const int kSizes[][2] = {{0, 0}, {1, 1}, {4, 0}, {0, 3}, {7, 3}, {17, 9}};
const MatrixTransposeType kTransposes[] = {kNoTrans, kTrans};

// Runs `check(n, m, strided)` for packed size n and other dimension m, through packed and
// strided outputs.
template <typename F>
void ForSizes(F check) {
  for (const auto& nm : kSizes)
    for (bool strided : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << "n=" << nm[0] << " m=" << nm[1] << (strided ? " strided" : ""));
      check(nm[0], nm[1], strided);
    }
}

TYPED_TEST(MatrixPackedOpsTest, AddSpAddsTheFullSymmetricMatrixInBothPrecisions) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 6}) {
    const SpMatrix<float> sf = test::RandomSp<float>(n, &rng);
    const SpMatrix<double> sd = test::RandomSp<double>(n, &rng);
    Matrix<Real> c = test::RandomMatrix<Real>(n, n, &rng);
    Matrix<double> expected =
        Combine(1.0, Combine(1.0, ToDouble(c), kAlpha, DenseOf(sf)), kAlpha, DenseOf(sd));
    c.AddSp(static_cast<Real>(kAlpha), sf);
    c.AddSp(static_cast<Real>(kAlpha), sd);
    EXPECT_TRUE(test::ExpectNear(c, expected, test::Tol<Real>())) << "n=" << n;
  }
  Matrix<Real> wrong(3, 4);
  test::ExpectErrorContaining([&] { wrong.AddSp(Real(1), SpMatrix<Real>(3)); },
                              "AddSp: shape mismatch: S is 3x3 but *this is 3x4");
}

TYPED_TEST(MatrixPackedOpsTest, SymmetricTimesDenseMatchesNaiveProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForSizes([&](int n, int m, bool strided) {
    const SpMatrix<Real> s = test::RandomSp<Real>(n, &rng);
    for (MatrixTransposeType t : kTransposes) {
      // AddSpMat: (n x n) op(B) with op(B) n x m.
      Matrix<Real> b = t == kNoTrans ? test::RandomMatrix<Real>(n, m, &rng)
                                     : test::RandomMatrix<Real>(m, n, &rng);
      test::TestMatrix<Real> c(n, m, strided, &rng);
      Matrix<double> expected =
          Combine(kBeta, ToDouble(c.View()), kAlpha, NaiveProduct(DenseOf(s), Op(b, t)));
      c.View().AddSpMat(kAlpha, s, b, t, kBeta);
      EXPECT_TRUE(test::ExpectNear(c.View(), expected, test::ProductTol<Real>()));
      EXPECT_TRUE(c.PaddingUnchanged());
      // AddMatSp: op(A) (m x n) times S.
      Matrix<Real> a = t == kNoTrans ? test::RandomMatrix<Real>(m, n, &rng)
                                     : test::RandomMatrix<Real>(n, m, &rng);
      test::TestMatrix<Real> d(m, n, strided, &rng);
      expected = Combine(kBeta, ToDouble(d.View()), kAlpha, NaiveProduct(Op(a, t), DenseOf(s)));
      d.View().AddMatSp(kAlpha, a, t, s, kBeta);
      EXPECT_TRUE(test::ExpectNear(d.View(), expected, test::ProductTol<Real>()));
    }
  });
}

TYPED_TEST(MatrixPackedOpsTest, TriangularTimesDenseMatchesNaiveProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForSizes([&](int n, int m, bool strided) {
    const TpMatrix<Real> tp = test::RandomTp<Real>(n, &rng);
    for (MatrixTransposeType ta : kTransposes)
      for (MatrixTransposeType tb : kTransposes) {
        // AddTpMat: op(T) (n x n) times op(B) (n x m).
        Matrix<Real> b = tb == kNoTrans ? test::RandomMatrix<Real>(n, m, &rng)
                                        : test::RandomMatrix<Real>(m, n, &rng);
        test::TestMatrix<Real> c(n, m, strided, &rng);
        Matrix<double> expected = Combine(kBeta, ToDouble(c.View()), kAlpha,
                                          NaiveProduct(Op(DenseOf(tp), ta), Op(b, tb)));
        c.View().AddTpMat(kAlpha, tp, ta, b, tb, kBeta);
        EXPECT_TRUE(test::ExpectNear(c.View(), expected, test::ProductTol<Real>()));
        // AddMatTp: op(A) (m x n) times op(T).
        Matrix<Real> a = ta == kNoTrans ? test::RandomMatrix<Real>(m, n, &rng)
                                        : test::RandomMatrix<Real>(n, m, &rng);
        test::TestMatrix<Real> d(m, n, strided, &rng);
        expected = Combine(kBeta, ToDouble(d.View()), kAlpha,
                           NaiveProduct(Op(a, ta), Op(DenseOf(tp), tb)));
        d.View().AddMatTp(kAlpha, a, ta, tp, tb, kBeta);
        EXPECT_TRUE(test::ExpectNear(d.View(), expected, test::ProductTol<Real>()));
        // AddTpTp.
        const TpMatrix<Real> tq = test::RandomTp<Real>(n, &rng);
        Matrix<Real> e = test::RandomMatrix<Real>(n, n, &rng);
        expected = Combine(kBeta, ToDouble(e), kAlpha,
                           NaiveProduct(Op(DenseOf(tp), ta), Op(DenseOf(tq), tb)));
        e.AddTpTp(kAlpha, tp, ta, tq, tb, kBeta);
        EXPECT_TRUE(test::ExpectNear(e, expected, test::ProductTol<Real>()));
      }
  });
}

TYPED_TEST(MatrixPackedOpsTest, SymmetricProductsMatchNaiveProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForSizes([&](int n, int m, bool strided) {
    const SpMatrix<Real> a = test::RandomSp<Real>(n, &rng), b = test::RandomSp<Real>(n, &rng);
    test::TestMatrix<Real> c(n, n, strided, &rng);
    Matrix<double> expected =
        Combine(kBeta, ToDouble(c.View()), kAlpha, NaiveProduct(DenseOf(a), DenseOf(b)));
    c.View().AddSpSp(kAlpha, a, b, kBeta);
    EXPECT_TRUE(test::ExpectNear(c.View(), expected, test::ProductTol<Real>()));
    // AddSpMatSp: A (n x n) op(B) (n x m) C (m x m).
    const SpMatrix<Real> cm = test::RandomSp<Real>(m, &rng);
    for (MatrixTransposeType t : kTransposes) {
      Matrix<Real> bm = t == kNoTrans ? test::RandomMatrix<Real>(n, m, &rng)
                                      : test::RandomMatrix<Real>(m, n, &rng);
      test::TestMatrix<Real> d(n, m, strided, &rng);
      expected = Combine(kBeta, ToDouble(d.View()), kAlpha,
                         NaiveProduct(NaiveProduct(DenseOf(a), Op(bm, t)), DenseOf(cm)));
      d.View().AddSpMatSp(kAlpha, a, bm, t, cm, kBeta);
      EXPECT_TRUE(test::ExpectNear(d.View(), expected, test::ProductTol<Real>()));
    }
  });
}

TYPED_TEST(MatrixPackedOpsTest, ThrowsNamingTheOperationOnShapeMismatch) {
  using Real = TypeParam;
  const SpMatrix<Real> s(3);
  const TpMatrix<Real> t(3);
  Matrix<Real> b(3, 4), out(3, 5), sq(4, 4);
  test::ExpectErrorContaining([&] { out.AddSpMat(1, s, b, kNoTrans, 0); },
                              "AddSpMat: shape mismatch");
  test::ExpectErrorContaining([&] { out.AddTpMat(1, t, kNoTrans, b, kNoTrans, 0); },
                              "AddTpMat: shape mismatch");
  test::ExpectErrorContaining([&] { out.AddMatSp(1, b, kNoTrans, s, 0); },
                              "AddMatSp: shape mismatch");
  test::ExpectErrorContaining([&] { out.AddMatTp(1, b, kNoTrans, t, kNoTrans, 0); },
                              "AddMatTp: shape mismatch");
  test::ExpectErrorContaining([&] { sq.AddTpTp(1, t, kNoTrans, t, kTrans, 0); },
                              "AddTpTp: shape mismatch");
  test::ExpectErrorContaining([&] { sq.AddSpSp(1, s, s, 0); }, "AddSpSp: shape mismatch");
  test::ExpectErrorContaining([&] { out.AddSpMatSp(1, s, b, kNoTrans, SpMatrix<Real>(4), 0); },
                              "AddSpMatSp: shape mismatch");
  test::ExpectErrorContaining(
      [&] { out.AddTpMat(1, t, static_cast<MatrixTransposeType>(3), b, kNoTrans, 0); },
      "invalid MatrixTransposeType 3");
}

}  // namespace
}  // namespace cuctx
