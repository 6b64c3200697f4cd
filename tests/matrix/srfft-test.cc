// tests/matrix/srfft-test.cc: SplitRadixComplexFft / SplitRadixRealFft against the naive DFT, all
// three Compute overloads, the packed real layout and misuse (bin/fft-bench times them).
// SPDX-License-Identifier: Apache-2.0
#include "matrix/srfft.h"

#include "base/error.h"
#include "matrix/matrix-functions.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <gtest/gtest.h>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
double FftTol() {
  return 10 * test::Tol<Real>();  // sums over N terms through log N stages
}

template <typename Real>
class SrfftTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SrfftTest, RealTypes);

TYPED_TEST(SrfftTest, ComplexComputeMatchesNaiveDftForAllOverloads) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {1, 2, 4, 8, 16, 32, 64, 512, 1024}) {
    SplitRadixComplexFft<Real> fft(n);
    for (bool forward : {true, false}) {
      SCOPED_TRACE(testing::Message() << "N=" << n << " forward=" << forward);
      Vector<Real> x = test::RandomVector<Real>(2 * n, &rng);
      Vector<Real> expected(2 * n);
      ComplexFt(x, &expected, forward);

      Vector<Real> a(x);
      fft.Compute(a.Data(), forward);
      EXPECT_TRUE(test::ExpectNear(a, expected, FftTol<Real>()));

      Vector<Real> b(x);
      std::vector<Real> buffer;
      static_cast<const SplitRadixComplexFft<Real>&>(fft).Compute(b.Data(), forward, &buffer);
      EXPECT_TRUE(test::ExpectNear(b, expected, FftTol<Real>()));

      std::vector<Real> re(n), im(n);
      for (int i = 0; i < n; ++i) {
        re[i] = x(2 * i);
        im[i] = x(2 * i + 1);
      }
      fft.Compute(re.data(), im.data(), forward);
      Vector<Real> c(2 * n);
      for (int i = 0; i < n; ++i) {
        c(2 * i) = re[i];
        c(2 * i + 1) = im[i];
      }
      EXPECT_TRUE(test::ExpectNear(c, expected, FftTol<Real>()));
    }
  }
}

TYPED_TEST(SrfftTest, ComplexForwardThenInverseGivesNTimesInput) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  SplitRadixComplexFft<Real> fft(256);
  Vector<Real> x = test::RandomVector<Real>(512, &rng), y(x);
  fft.Compute(y.Data(), true);
  fft.Compute(y.Data(), false);
  x.Scale(256);
  EXPECT_TRUE(test::ExpectNear(y, x, FftTol<Real>()));
}

TYPED_TEST(SrfftTest, CopiesComputeTheSameTransformAsTheOriginal) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  SplitRadixComplexFft<Real> fft(64);
  const SplitRadixComplexFft<Real> fft_copy(fft);  // Kaldi's classes are copyable
  SplitRadixRealFft<Real> real_fft(128);
  const SplitRadixRealFft<Real> real_copy(real_fft);
  Vector<Real> x = test::RandomVector<Real>(128, &rng), y(x), u(x), w(x);
  fft.Compute(x.Data(), true);
  SplitRadixComplexFft<Real>(fft_copy).Compute(y.Data(), true);
  EXPECT_TRUE(test::ExpectNear(y, x, 0.0));
  real_fft.Compute(u.Data(), true);
  SplitRadixRealFft<Real>(real_copy).Compute(w.Data(), true);
  EXPECT_TRUE(test::ExpectNear(w, u, 0.0));
}

TYPED_TEST(SrfftTest, RealComputeMatchesRealFftLayoutAndInverts) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {2, 4, 8, 16, 64, 512, 1024}) {
    SCOPED_TRACE(testing::Message() << "N=" << n);
    SplitRadixRealFft<Real> fft(n);
    Vector<Real> x = test::RandomVector<Real>(n, &rng);
    Vector<Real> expected(x);
    RealFftInefficient(&expected, true);
    Vector<Real> a(x);
    fft.Compute(a.Data(), true);
    EXPECT_TRUE(test::ExpectNear(a, expected, FftTol<Real>()));
    std::vector<Real> buffer;
    static_cast<const SplitRadixRealFft<Real>&>(fft).Compute(a.Data(), false, &buffer);
    Vector<Real> scaled(x);
    scaled.Scale(static_cast<Real>(n));
    EXPECT_TRUE(test::ExpectNear(a, scaled, FftTol<Real>()));
  }
}

TYPED_TEST(SrfftTest, ConstructorRejectsSizesThatAreNotPowersOfTwo) {
  using Real = TypeParam;
  test::QuietLog quiet;
  EXPECT_THROW(SplitRadixComplexFft<Real>(0), Error);
  EXPECT_THROW(SplitRadixComplexFft<Real>(12), Error);
  EXPECT_THROW(SplitRadixComplexFft<Real>(-4), Error);
  EXPECT_THROW(SplitRadixRealFft<Real>(1), Error);
  EXPECT_THROW(SplitRadixRealFft<Real>(24), Error);
  EXPECT_THROW(SplitRadixRealFft<Real>(7), Error);
  SplitRadixComplexFft<Real> fft(4);
  std::vector<Real> a(4);
  EXPECT_THROW(fft.Compute(a.data(), a.data(), true), Error);
}

}  // namespace
}  // namespace cuctx
