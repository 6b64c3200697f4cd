// tests/matrix/matrix-functions-fft-test.cc: ComplexFft, RealFft and the DCT matrix against the
// naive DFT (ComplexFt), the round trip N * x, known spectra and orthonormality.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix-functions.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace cuctx {
namespace {

// FFT outputs are sums over N terms through log N butterfly stages; allow 10x the element-wise
// tolerance for the relative Frobenius error.
template <typename Real>
double FftTol() {
  return 10 * test::Tol<Real>();
}

// Sizes in complex points: powers of two (Kaldi's documented case) and the other sizes that the
// mixed-radix code accepts (primes, prime powers, mixed factors).
const std::vector<int> kSizes = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 30, 97, 100, 512, 1024};

template <typename Real>
class MatrixFunctionsFftTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixFunctionsFftTest, RealTypes);

TYPED_TEST(MatrixFunctionsFftTest, ComplexFftMatchesNaiveDft) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Vector<Real> work;
  for (int n : kSizes) {
    for (bool forward : {true, false}) {
      SCOPED_TRACE(testing::Message() << "N=" << n << " forward=" << forward);
      Vector<Real> x = test::RandomVector<Real>(2 * n, &rng);
      Vector<Real> expected(2 * n);
      ComplexFt(x, &expected, forward);
      Vector<Real> actual(x);
      ComplexFft(&actual, forward, (n % 2 == 0) ? &work : nullptr);
      EXPECT_TRUE(test::ExpectNear(actual, expected, FftTol<Real>()));
    }
  }
}

TYPED_TEST(MatrixFunctionsFftTest, ForwardThenInverseGivesNTimesInput) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kSizes) {
    SCOPED_TRACE(testing::Message() << "N=" << n);
    Vector<Real> x = test::RandomVector<Real>(2 * n, &rng);
    Vector<Real> y(x);
    ComplexFft(&y, true);
    ComplexFft(&y, false);
    Vector<Real> expected(x);
    expected.Scale(static_cast<Real>(n));
    EXPECT_TRUE(test::ExpectNear(y, expected, FftTol<Real>()));
  }
}

TYPED_TEST(MatrixFunctionsFftTest, ComplexFtOfImpulseIsConstant) {
  using Real = TypeParam;
  Vector<Real> x(16), out(16);
  x(0) = 1;
  ComplexFt(x, &out, true);
  for (int k = 0; k < 8; ++k) {
    EXPECT_NEAR(out(2 * k), 1.0, test::Tol<Real>());
    EXPECT_NEAR(out(2 * k + 1), 0.0, test::Tol<Real>());
  }
}

// For real input (and N/2 even or odd) RealFft must match the full complex DFT in the packed
// layout.
TYPED_TEST(MatrixFunctionsFftTest, RealFftMatchesComplexDftInPackedLayout) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {2, 4, 6, 8, 10, 16, 18, 34, 100, 512, 1024}) {
    SCOPED_TRACE(testing::Message() << "N=" << n);
    Vector<Real> x = test::RandomVector<Real>(n, &rng);
    Vector<Real> cx(2 * n), spectrum(2 * n);
    for (int i = 0; i < n; ++i) cx(2 * i) = x(i);
    ComplexFt(cx, &spectrum, true);
    Vector<Real> expected(n);
    expected(0) = spectrum(0);
    expected(1) = spectrum(n);
    for (int k = 1; k < n / 2; ++k) {
      expected(2 * k) = spectrum(2 * k);
      expected(2 * k + 1) = spectrum(2 * k + 1);
    }
    Vector<Real> fast(x), slow(x);
    RealFft(&fast, true);
    RealFftInefficient(&slow, true);
    EXPECT_TRUE(test::ExpectNear(fast, expected, FftTol<Real>()));
    EXPECT_TRUE(test::ExpectNear(slow, expected, FftTol<Real>()));
    // Inverse: both give N * x.
    Vector<Real> scaled(x);
    scaled.Scale(static_cast<Real>(n));
    RealFft(&fast, false);
    RealFftInefficient(&slow, false);
    EXPECT_TRUE(test::ExpectNear(fast, scaled, FftTol<Real>()));
    EXPECT_TRUE(test::ExpectNear(slow, scaled, FftTol<Real>()));
  }
}

// x_n = 1 + cos(2 pi 3 n / N) + 2 sin(2 pi 5 n / N): X_0 = N, X_3 = N/2, X_5 = -i N, rest 0.
TYPED_TEST(MatrixFunctionsFftTest, RealFftOfKnownSignal) {
  using Real = TypeParam;
  const int n = 32;
  Vector<Real> x(n);
  for (int i = 0; i < n; ++i)
    x(i) =
        static_cast<Real>(1 + std::cos(2 * M_PI * 3 * i / n) + 2 * std::sin(2 * M_PI * 5 * i / n));
  RealFft(&x, true);
  Vector<Real> expected(n);
  expected(0) = n;           // re X_0
  expected(1) = 0;           // re X_16
  expected(2 * 3) = n / 2;   // re X_3
  expected(2 * 5 + 1) = -n;  // im X_5
  EXPECT_TRUE(test::ExpectNear(x, expected, FftTol<Real>()));
}

TYPED_TEST(MatrixFunctionsFftTest, DctMatrixIsOrthonormalWithKaldiNormalization) {
  using Real = TypeParam;
  for (int n : {1, 2, 5, 13, 23}) {
    SCOPED_TRACE(testing::Message() << "N=" << n);
    Matrix<Real> M(n, n);
    ComputeDctMatrix(&M);
    for (int j = 0; j < n; ++j) EXPECT_NEAR(M(0, j), std::sqrt(1.0 / n), test::Tol<Real>());
    if (n > 2) {
      EXPECT_NEAR(M(2, 1), std::sqrt(2.0 / n) * std::cos(M_PI / n * 1.5 * 2), test::Tol<Real>());
    }
    Matrix<Real> prod(n, n), unit(n, n);
    prod.AddMatMat(1.0, M, kNoTrans, M, kTrans, 0.0);
    unit.SetUnit();
    EXPECT_TRUE(test::ExpectNear(prod, unit, FftTol<Real>()));
    prod.AddMatMat(1.0, M, kTrans, M, kNoTrans, 0.0);
    EXPECT_TRUE(test::ExpectNear(prod, unit, FftTol<Real>()));
  }
}

TYPED_TEST(MatrixFunctionsFftTest, DctMatrixRectangularKeepsLeadingRows) {
  using Real = TypeParam;
  Matrix<Real> full(23, 23), part(13, 23);
  ComputeDctMatrix(&full);
  ComputeDctMatrix(&part);
  EXPECT_TRUE(test::ExpectNear(part, Matrix<Real>(full.RowRange(0, 13)), test::Tol<Real>()));
}

TYPED_TEST(MatrixFunctionsFftTest, ComplexHelpersMatchStdComplexArithmetic) {
  using Real = TypeParam;
  Real br = 3, bi = -2;
  ComplexMul<Real>(1, 2, &br, &bi);  // (1 + 2i)(3 - 2i) = 7 + 4i
  EXPECT_EQ(br, 7);
  EXPECT_EQ(bi, 4);
  Real cr = 1, ci = 1;
  ComplexAddProduct<Real>(1, 2, 3, -2, &cr, &ci);
  EXPECT_EQ(cr, 8);
  EXPECT_EQ(ci, 5);
  Real er, ei;
  ComplexImExp<Real>(static_cast<Real>(M_PI / 2), &er, &ei);
  EXPECT_NEAR(er, 0, test::Tol<Real>());
  EXPECT_NEAR(ei, 1, test::Tol<Real>());
}

TYPED_TEST(MatrixFunctionsFftTest, MisuseThrows) {
  using Real = TypeParam;
  test::QuietLog quiet;
  Vector<Real> odd(5), even(6), other(8);
  EXPECT_THROW(ComplexFft(&odd, true), Error);
  EXPECT_THROW(RealFft(&odd, true), Error);
  EXPECT_THROW(RealFftInefficient(&odd, true), Error);
  EXPECT_THROW(ComplexFt(even, &other, true), Error);
  EXPECT_THROW(ComplexFt(even, &even, true), Error);  // in place is not allowed
  Matrix<Real> empty(0, 3);
  EXPECT_THROW(ComputeDctMatrix(&empty), Error);
  // Trivial sizes are no-ops.
  Vector<Real> none;
  EXPECT_NO_THROW(RealFft(&none, true));
  EXPECT_NO_THROW(ComplexFft(&none, true));
}

}  // namespace
}  // namespace cuctx
