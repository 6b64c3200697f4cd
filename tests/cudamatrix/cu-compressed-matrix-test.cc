// tests/cudamatrix/cu-compressed-matrix-test.cc: CuCompressedMatrix round trips against the
// quantization grid computed independently in double precision.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-compressed-matrix.h"

#include "base/error.h"
#include "cudamatrix/cu-matrix.h"
#include "matrix/matrix.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <memory>
#include <type_traits>

namespace cuctx {
namespace {

using test::ToHost;

// The class is defined for BaseFloat only, so the tests are typed over the integer type.
template <typename I>
class CuCompressedMatrixTest : public ::testing::Test {
 protected:
  static constexpr double kMax = std::numeric_limits<I>::max();
  static constexpr double kMin = std::numeric_limits<I>::min();
  // The input interval [Lo(range), range] that fits without clamping.
  static double Lo(double range) { return std::is_signed<I>::value ? -range : 0.0; }
  // The float value of integer step k, computed as the class documents it: scale * k with
  // scale = range / max, both in float.
  static float GridValue(float range, double k) {
    const float scale = range / static_cast<float>(kMax);
    return scale * static_cast<float>(k);
  }
  test::QuietLog quiet_;
};
using IntTypes = ::testing::Types<int8, uint8, int16, uint16>;
TYPED_TEST_SUITE(CuCompressedMatrixTest, IntTypes);

TYPED_TEST(CuCompressedMatrixTest, RoundTripIsWithinHalfAStep) {
  using I = TypeParam;
  test::Rng rng = test::MakeRng();
  const float range = 2.5f;
  const double step = range / TestFixture::kMax;
  for (bool truncate : {true, false})
    test::ForEachShape([&](const test::Shape& s, bool strided) {
      test::GuardedCuMatrix<float> src(s.rows, s.cols, strided, &rng, TestFixture::Lo(range),
                                       range);
      test::GuardedCuMatrix<float> dst(s.rows, s.cols, !strided, &rng);
      CuCompressedMatrix<I> c(range, truncate);
      c.CopyFromMat(src.view);
      EXPECT_EQ(c.NumRows(), s.rows);
      EXPECT_EQ(c.NumCols(), s.cols);
      c.CopyToMat(&dst.view);
      const Matrix<float> in = src.Host(), out = ToHost(dst.view);
      for (MatrixIndexT r = 0; r < s.rows; ++r)
        for (MatrixIndexT col = 0; col < s.cols; ++col) {
          // Half a step, plus float rounding of x / scale (up to 65535 * 2^-24 steps for 16 bits).
          ASSERT_LE(std::abs(double(out(r, col)) - in(r, col)), step * 0.51 + 1e-6)
              << "(" << r << ", " << col << ") truncate " << truncate;
        }
      EXPECT_TRUE(dst.BorderUnchanged());
      EXPECT_TRUE(src.BorderUnchanged());
    });
}

TYPED_TEST(CuCompressedMatrixTest, GridValuesRoundTripExactly) {
  test::Rng rng = test::MakeRng();
  for (float range : {1.0f, 3.75f})
    for (bool truncate : {true, false}) {
      // Every integer step once for the 8-bit types, a random sample for the 16-bit ones,
      // always including both ends.
      Matrix<float> grid(16, 33);
      for (MatrixIndexT r = 0; r < grid.NumRows(); ++r)
        for (MatrixIndexT c = 0; c < grid.NumCols(); ++c) {
          const int64_t i = r * grid.NumCols() + c;
          double k = TestFixture::kMin + i;
          if (k > TestFixture::kMax || TestFixture::kMax > 255)
            k = std::floor(rng.Uniform(TestFixture::kMin, TestFixture::kMax + 1));
          if (i == 0) k = TestFixture::kMin;
          if (i == 1) k = TestFixture::kMax;
          grid(r, c) = TestFixture::GridValue(range, k);
        }
      CuCompressedMatrix<TypeParam> c(range, truncate);
      c.CopyFromMat(CuMatrix<float>(grid));
      CuMatrix<float> back(grid.NumRows(), grid.NumCols());
      c.CopyToMat(&back);
      EXPECT_TRUE(test::SameElements(ToHost(back), grid)) << "range " << range;
    }
}

TYPED_TEST(CuCompressedMatrixTest, TruncateClampsValuesBeyondTheRange) {
  const float range = 2.0f;
  Matrix<float> m(1, 4);
  m(0, 0) = 3 * range;
  m(0, 1) = -3 * range;
  m(0, 2) = std::numeric_limits<float>::infinity();
  m(0, 3) = -std::numeric_limits<float>::infinity();
  CuCompressedMatrix<TypeParam> c(range);  // truncate defaults to true
  c.CopyFromMat(CuMatrix<float>(m));
  CuMatrix<float> back(1, 4);
  c.CopyToMat(&back);
  const float hi = TestFixture::GridValue(range, TestFixture::kMax);
  const float lo = TestFixture::GridValue(range, TestFixture::kMin);
  const Matrix<float> got = ToHost(back);
  EXPECT_EQ(got(0, 0), hi);
  EXPECT_EQ(got(0, 1), lo);
  EXPECT_EQ(got(0, 2), hi);
  EXPECT_EQ(got(0, 3), lo);
}

TYPED_TEST(CuCompressedMatrixTest, WithoutTruncateValuesBeyondTheRangeWrapAround) {
  const float range = 1.0f;
  const double bits = 8.0 * sizeof(TypeParam);
  const double modulus = std::pow(2.0, bits);
  // 1.6 range and -0.2 range are beyond [Lo, range] for the unsigned types, and 1.6 range for all.
  const float values[] = {1.6f * range, static_cast<float>(TestFixture::Lo(range) - 0.2 * range)};
  Matrix<float> m(1, 2);
  m(0, 0) = values[0];
  m(0, 1) = values[1];
  CuCompressedMatrix<TypeParam> c(range, /*truncate=*/false);
  c.CopyFromMat(CuMatrix<float>(m));
  CuMatrix<float> back(1, 2);
  c.CopyToMat(&back);
  const Matrix<float> got = ToHost(back);
  for (int j = 0; j < 2; ++j) {
    // The integer the value rounds to, reduced modulo 2^bits into I's range.
    double k = std::round(double(values[j]) * TestFixture::kMax);
    k = std::fmod(std::fmod(k - TestFixture::kMin, modulus) + modulus, modulus) + TestFixture::kMin;
    EXPECT_NEAR(got(0, j), TestFixture::GridValue(range, k), 1e-6) << "value " << values[j];
    EXPECT_GT(std::abs(got(0, j) - values[j]), 0.1) << "value " << values[j] << " was clamped";
  }
}

TYPED_TEST(CuCompressedMatrixTest, ReshapesToEachSourceAndHandlesEmpty) {
  test::Rng rng = test::MakeRng();
  CuCompressedMatrix<TypeParam> c(1.0f);
  EXPECT_EQ(c.NumRows(), 0);
  c.CopyFromMat(CuMatrix<float>(test::RandomMatrix<float>(5, 7, &rng, 0, 1)));
  EXPECT_EQ(c.NumRows(), 5);
  EXPECT_EQ(c.NumCols(), 7);
  const Matrix<float> m = test::RandomMatrix<float>(2, 3, &rng, 0, 1);
  c.CopyFromMat(CuMatrix<float>(m));
  CuMatrix<float> back(2, 3);
  c.CopyToMat(&back);
  EXPECT_TRUE(test::ExpectNear(ToHost(back), m, 0.01));
  c.CopyFromMat(CuMatrix<float>());
  EXPECT_EQ(c.NumRows(), 0);
  EXPECT_EQ(c.NumCols(), 0);
  CuMatrix<float> empty;
  c.CopyToMat(&empty);
}

TYPED_TEST(CuCompressedMatrixTest, CopyToMatThrowsOnAShapeMismatch) {
  CuCompressedMatrix<TypeParam> c(1.0f);
  c.CopyFromMat(CuMatrix<float>(3, 4));
  CuMatrix<float> wrong(4, 3);
  test::ExpectErrorContaining([&] { c.CopyToMat(&wrong); },
                              "destination 4x3 does not match the compressed matrix 3x4");
  EXPECT_THROW(c.CopyToMat(nullptr), Error);
}

TYPED_TEST(CuCompressedMatrixTest, ConstructorRejectsBadRanges) {
  using I = TypeParam;
  EXPECT_THROW(CuCompressedMatrix<I>(-1.0f), Error);
  EXPECT_THROW(CuCompressedMatrix<I>(std::numeric_limits<float>::quiet_NaN()), Error);
  EXPECT_THROW(CuCompressedMatrix<I>(std::numeric_limits<float>::infinity()), Error);
  EXPECT_NO_THROW(CuCompressedMatrix<I>(0.0f));  // sign-only, for every type
}

// Range 0 keeps whether each value is positive, for every type, as Kaldi's
// CuCompressedMatrixTestSign (uint8) checks: the matrix comes back as Heaviside(x).
TYPED_TEST(CuCompressedMatrixTest, RangeZeroGivesHeaviside) {
  using I = TypeParam;
  Matrix<float> m(2, 6);
  const float in[] = {-3.0f, -1e-6f, 0.0f, 1e-6f, 7.0f, std::numeric_limits<float>::quiet_NaN()};
  for (int j = 0; j < 6; ++j) m(0, j) = in[j];
  test::Rng rng = test::MakeRng();
  for (int j = 0; j < 6; ++j) m(1, j) = static_cast<float>(rng.Gauss());
  CuCompressedMatrix<I> c(0.0f);
  c.CopyFromMat(CuMatrix<float>(m));
  CuMatrix<float> back(2, 6);
  c.CopyToMat(&back);
  const Matrix<float> got = ToHost(back);
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 6; ++j) EXPECT_EQ(got(r, j), m(r, j) > 0 ? 1.0f : 0.0f) << m(r, j);
}

class CuCompressedMatrixFactoryTest : public ::testing::Test {
 protected:
  test::QuietLog quiet_;
};

TEST_F(CuCompressedMatrixFactoryTest, SignOnlyUint8KeepsWhetherPositive) {
  Matrix<float> m(1, 6);
  const float in[] = {-3.0f, -1e-6f, 0.0f, 1e-6f, 7.0f, std::numeric_limits<float>::quiet_NaN()};
  const float want[] = {0, 0, 0, 1, 1, 0};
  for (int j = 0; j < 6; ++j) m(0, j) = in[j];
  std::unique_ptr<CuCompressedMatrixBase> c(NewCuCompressedMatrix(kCompressedMatrixUint8, 0.0f));
  c->CopyFromMat(CuMatrix<float>(m));
  CuMatrix<float> back(1, 6);
  c->CopyToMat(&back);
  const Matrix<float> got = ToHost(back);
  for (int j = 0; j < 6; ++j) EXPECT_EQ(got(0, j), want[j]) << "input " << in[j];
}

TEST_F(CuCompressedMatrixFactoryTest, MakesEachTypeAndPassesTruncate) {
  // 8 bits: 2^8 levels; 16 bits: 2^16; the level count shows which type was made.
  const struct {
    CuCompressedMatrixType type;
    double max;
  } kinds[] = {{kCompressedMatrixInt8, 127},
               {kCompressedMatrixUint8, 255},
               {kCompressedMatrixInt16, 32767},
               {kCompressedMatrixUint16, 65535}};
  Matrix<float> m(1, 2);
  m(0, 0) = 0.3f;  // in range: comes back within half a step of this type
  m(0, 1) = 1.6f;  // beyond range 1: clamps to 1 only with truncate
  for (const auto& k : kinds)
    for (bool truncate : {true, false}) {
      std::unique_ptr<CuCompressedMatrixBase> c(NewCuCompressedMatrix(k.type, 1.0f, truncate));
      c->CopyFromMat(CuMatrix<float>(m));
      EXPECT_EQ(c->NumRows(), 1);
      EXPECT_EQ(c->NumCols(), 2);
      CuMatrix<float> back(1, 2);
      c->CopyToMat(&back);
      const Matrix<float> got = ToHost(back);
      EXPECT_LE(std::abs(got(0, 0) - 0.3), 0.51 / k.max + 1e-6) << k.type;
      if (truncate)
        EXPECT_FLOAT_EQ(got(0, 1), 1.0f) << k.type;
      else
        EXPECT_NE(got(0, 1), 1.0f) << k.type;
    }
  EXPECT_THROW(NewCuCompressedMatrix(static_cast<CuCompressedMatrixType>(7), 1.0f), Error);
  EXPECT_THROW(NewCuCompressedMatrix(kCompressedMatrixInt8, -1.0f), Error);
}

}  // namespace
}  // namespace cuctx
