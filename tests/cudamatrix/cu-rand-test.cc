// tests/cudamatrix/cu-rand-test.cc: CuRand and the SetRandn / SetRandUniform fills: distributions,
// pitch independence, reproducibility after seeding, BinarizeProbs and AddGaussNoise.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-rand.h"

#include "base/random.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

// Sample statistics of a set of draws.
struct Moments {
  double mean = 0, var = 0, min = 0, max = 0;
  double n = 0;
};

Moments Measure(const std::vector<double>& x) {
  Moments m;
  m.n = static_cast<double>(x.size());
  if (x.empty()) return m;
  m.min = m.max = x[0];
  for (double v : x) {
    m.mean += v;
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
  }
  m.mean /= m.n;
  for (double v : x) m.var += (v - m.mean) * (v - m.mean);
  m.var /= m.n;
  return m;
}

template <typename Real>
std::vector<double> Values(const MatrixBase<Real>& m) {
  std::vector<double> x;
  for (MatrixIndexT r = 0; r < m.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < m.NumCols(); ++c) x.push_back(m(r, c));
  return x;
}

template <typename Real>
std::vector<double> Values(const VectorBase<Real>& v) {
  std::vector<double> x;
  for (MatrixIndexT i = 0; i < v.Dim(); ++i) x.push_back(v(i));
  return x;
}

// Tolerances are 6 standard errors of the statistic for the sample size: the mean's standard
// error is sqrt(var / n), the sample variance's sqrt((mu4 - var^2) / n) with mu4 the fourth
// central moment (1/80 for U(0, 1), 3 for N(0, 1)).
::testing::AssertionResult LooksUniform(const std::vector<double>& x) {
  const Moments m = Measure(x);
  if (m.n == 0) return ::testing::AssertionSuccess();
  const double var = 1.0 / 12, mu4 = 1.0 / 80;
  const double mean_tol = 6 * std::sqrt(var / m.n),
               var_tol = 6 * std::sqrt((mu4 - var * var) / m.n);
  if (!(m.min > 0 && m.max <= 1) || std::abs(m.mean - 0.5) > mean_tol ||
      std::abs(m.var - var) > var_tol)
    return ::testing::AssertionFailure()
           << "n " << m.n << " range [" << m.min << ", " << m.max << "] mean " << m.mean << " (tol "
           << mean_tol << ") var " << m.var << " (tol " << var_tol << ")";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult LooksGaussian(const std::vector<double>& x, double mean = 0,
                                         double stddev = 1) {
  const Moments m = Measure(x);
  if (m.n == 0) return ::testing::AssertionSuccess();
  const double var = stddev * stddev;
  const double mean_tol = 6 * std::sqrt(var / m.n), var_tol = 6 * std::sqrt(2 * var * var / m.n);
  // |z| > 8 has probability 1e-15 per draw: a larger one means a broken generator.
  const double bound = mean + 8 * stddev, lower = mean - 8 * stddev;
  if (!(m.min > lower && m.max < bound) || std::abs(m.mean - mean) > mean_tol ||
      std::abs(m.var - var) > var_tol)
    return ::testing::AssertionFailure()
           << "n " << m.n << " range [" << m.min << ", " << m.max << "] mean " << m.mean << " (tol "
           << mean_tol << ") var " << m.var << " (tol " << var_tol << ")";
  return ::testing::AssertionSuccess();
}

template <typename Real>
class CuRandTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuRandTest, RealTypes);

// A large odd-sized matrix, packed and strided, for the distribution checks.
constexpr int kRows = 301, kCols = 257;

TYPED_TEST(CuRandTest, RandUniformMatrixIsUniform) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  CuRand<Real> rand;
  for (bool strided : {false, true}) {
    test::GuardedCuMatrix<Real> m(kRows, kCols, strided, &rng);
    rand.RandUniform(&m.view);
    EXPECT_TRUE(LooksUniform(Values(ToHost(m.view)))) << (strided ? "strided" : "packed");
    EXPECT_TRUE(m.BorderUnchanged());
  }
}

TYPED_TEST(CuRandTest, RandGaussianMatrixIsStandardNormal) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  CuRand<Real> rand;
  for (bool strided : {false, true}) {
    test::GuardedCuMatrix<Real> m(kRows, kCols, strided, &rng);
    rand.RandGaussian(&m.view);
    EXPECT_TRUE(LooksGaussian(Values(ToHost(m.view)))) << (strided ? "strided" : "packed");
    EXPECT_TRUE(m.BorderUnchanged());
  }
  CuMatrix<Real> owned(kRows, kCols);
  rand.RandGaussian(&owned);
  EXPECT_TRUE(LooksGaussian(Values(ToHost(owned))));
}

TYPED_TEST(CuRandTest, VectorFillsHaveTheirDistributions) {
  using Real = TypeParam;
  CuRand<Real> rand;
  CuVector<Real> u(40001), g(40001);  // odd: the Gaussian fill drops one extra draw
  rand.RandUniform(&u);
  rand.RandGaussian(&g);
  EXPECT_TRUE(LooksUniform(Values(ToHost(u))));
  EXPECT_TRUE(LooksGaussian(Values(ToHost(g))));
  CuVector<Real> u2(40000), g2(40000);
  u2.SetRandUniform();
  g2.SetRandn();
  EXPECT_TRUE(LooksUniform(Values(ToHost(u2))));
  EXPECT_TRUE(LooksGaussian(Values(ToHost(g2))));
}

TYPED_TEST(CuRandTest, SetRandnAndSetRandUniformFillMatrices) {
  using Real = TypeParam;
  CuMatrix<Real> g(kRows, kCols), u(kRows, kCols);
  g.SetRandn();
  u.SetRandUniform();
  EXPECT_TRUE(LooksGaussian(Values(ToHost(g))));
  EXPECT_TRUE(LooksUniform(Values(ToHost(u))));
}

TYPED_TEST(CuRandTest, EdgeShapesAreFilledInsideTheView) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  CuRand<Real> rand;
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::GuardedCuMatrix<Real> u(s.rows, s.cols, strided, &rng, 5, 6);
    rand.RandUniform(&u.view);
    const Matrix<Real> hu = ToHost(u.view);
    EXPECT_TRUE(u.BorderUnchanged());
    test::GuardedCuMatrix<Real> g(s.rows, s.cols, strided, &rng, 50, 60);
    rand.RandGaussian(&g.view);
    const Matrix<Real> hg = ToHost(g.view);
    EXPECT_TRUE(g.BorderUnchanged());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) {
        // Every element was overwritten (the initial values are far outside both ranges).
        EXPECT_TRUE(hu(r, c) > 0 && hu(r, c) <= 1) << r << "," << c << " " << hu(r, c);
        EXPECT_TRUE(std::abs(hg(r, c)) < 10) << r << "," << c << " " << hg(r, c);
      }
  });
}

// Fills a matrix of shape s after seeding both generators with `seed`.
template <typename Real>
void SeededFill(uint64 seed, bool gaussian, CuMatrixBase<Real>* m) {
  SetRandomSeed(seed);
  CuRand<Real> rand;
  rand.SeedGpu();
  if (gaussian)
    rand.RandGaussian(m);
  else
    rand.RandUniform(m);
}

TYPED_TEST(CuRandTest, NumbersDoNotDependOnThePitch) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  // 17x33 has an odd element count (the Gaussian fill draws one extra number).
  for (const test::Shape& s : {test::Shape{17, 33}, test::Shape{4, 64}, test::Shape{257, 3}}) {
    for (bool gaussian : {false, true}) {
      SCOPED_TRACE(gaussian ? "gaussian" : "uniform");
      CuMatrix<Real> packed(s.rows, s.cols, kUndefined, kStrideEqualNumCols);
      SeededFill(11, gaussian, &packed);
      CuMatrix<Real> padded(s.rows, s.cols);
      SeededFill(11, gaussian, &padded);
      test::GuardedCuMatrix<Real> view(s.rows, s.cols, true, &rng);
      SeededFill(11, gaussian, &view.view);
      const Matrix<Real> expected = ToHost(packed);
      EXPECT_TRUE(test::ExpectNear(ToHost(padded), expected, 0.0)) << s;
      EXPECT_TRUE(test::ExpectNear(ToHost(view.view), expected, 0.0)) << s;
      EXPECT_TRUE(view.BorderUnchanged());
    }
  }
}

TYPED_TEST(CuRandTest, SeedGpuMakesDrawsReproducible) {
  using Real = TypeParam;
  CuMatrix<Real> a(33, 17), b(33, 17);
  SeededFill(5, true, &a);
  SeededFill(5, true, &b);
  EXPECT_TRUE(test::ExpectNear(ToHost(b), ToHost(a), 0.0));
  // Consecutive draws without reseeding differ.
  CuRand<Real> rand;
  rand.RandGaussian(&b);
  EXPECT_FALSE(ToHost(a).ApproxEqual(ToHost(b), 1e-3));
  // A different seed gives different numbers.
  SeededFill(6, true, &b);
  EXPECT_FALSE(ToHost(a).ApproxEqual(ToHost(b), 1e-3));
}

TYPED_TEST(CuRandTest, BinarizeProbsFollowsTheProbabilities) {
  using Real = TypeParam;
  const std::vector<double> p = {0.0, 0.1, 0.5, 0.9, 1.0};
  const int rows = 4000;
  Matrix<Real> hp(rows, static_cast<MatrixIndexT>(p.size()));
  for (int r = 0; r < rows; ++r)
    for (size_t c = 0; c < p.size(); ++c) hp(r, static_cast<MatrixIndexT>(c)) = p[c];
  CuMatrix<Real> probs(hp), states(3, 3);
  CuRand<Real> rand;
  rand.BinarizeProbs(probs, &states);
  ASSERT_EQ(states.NumRows(), rows);
  ASSERT_EQ(states.NumCols(), static_cast<MatrixIndexT>(p.size()));
  const Matrix<Real> hs = ToHost(states);
  for (size_t c = 0; c < p.size(); ++c) {
    double ones = 0;
    for (int r = 0; r < rows; ++r) {
      const Real v = hs(r, static_cast<MatrixIndexT>(c));
      ASSERT_TRUE(v == 0 || v == 1) << v;
      ones += v;
    }
    const double freq = ones / rows, tol = 6 * std::sqrt(p[c] * (1 - p[c]) / rows) + 1e-3;
    EXPECT_NEAR(freq, p[c], tol) << "probability " << p[c];
  }
  // p = 0 never gives a one (a draw is never below 0).
  for (int r = 0; r < rows; ++r) EXPECT_EQ(hs(r, 0), 0);
}

TYPED_TEST(CuRandTest, BinarizeProbsRejectsProbsAsOutput) {
  using Real = TypeParam;
  CuMatrix<Real> probs(2, 2);
  CuRand<Real> rand;
  test::ExpectErrorContaining([&] { rand.BinarizeProbs(probs, &probs); },
                              "states must be a matrix other than probs");
}

TYPED_TEST(CuRandTest, AddGaussNoiseAddsScaledNoise) {
  using Real = TypeParam;
  CuMatrix<Real> m(kRows, kCols);
  m.Set(3);
  CuRand<Real> rand;
  rand.AddGaussNoise(&m, 0.5);
  EXPECT_TRUE(LooksGaussian(Values(ToHost(m)), 3.0, 0.5));
  CuMatrix<Real> empty;
  rand.AddGaussNoise(&empty);
  EXPECT_EQ(empty.NumRows(), 0);
}

}  // namespace
}  // namespace cuctx
