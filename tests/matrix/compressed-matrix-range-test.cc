// tests/matrix/compressed-matrix-range-test.cc: CompressedMatrix's sub-range constructor (with and
// without row padding) against the block of the decoded whole; Matrix(CompressedMatrix) and
// MatrixBase::CopyFromMat(CompressedMatrix) against CompressedMatrix::CopyToMat.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/compressed-matrix.h"
#include "matrix/matrix.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <sstream>

namespace cuctx {
namespace {

const CompressionMethod kMethods[] = {kSpeechFeature, kTwoByteAuto, kOneByteAuto};

TEST(CompressedMatrixRangeTest, SubRangeDecodesToBlockOfDecodedWhole) {
  test::Rng rng = test::MakeRng();
  const Matrix<float> src = test::RandomMatrix<float>(20, 13, &rng, -3, 5);
  for (CompressionMethod method : kMethods) {
    SCOPED_TRACE(testing::Message() << "method " << method);
    const CompressedMatrix whole(src, method);
    const Matrix<float> decoded(whole);
    struct Block {
      int ro, nr, co, nc;
    };
    for (Block b :
         {Block{0, 20, 0, 13}, Block{3, 7, 2, 5}, Block{19, 1, 12, 1}, Block{0, 1, 4, 9}}) {
      const CompressedMatrix part(whole, b.ro, b.nr, b.co, b.nc);
      EXPECT_EQ(part.NumRows(), b.nr);
      EXPECT_EQ(part.NumCols(), b.nc);
      EXPECT_EQ(part.Format(), whole.Format());
      const Matrix<float> got(part);
      EXPECT_TRUE(got.Equal(Matrix<float>(decoded.Range(b.ro, b.nr, b.co, b.nc))));
    }
  }
}

TEST(CompressedMatrixRangeTest, PaddingRepeatsFirstAndLastRows) {
  test::Rng rng = test::MakeRng();
  const Matrix<float> src = test::RandomMatrix<float>(6, 4, &rng);
  for (CompressionMethod method : kMethods) {
    SCOPED_TRACE(testing::Message() << "method " << method);
    const CompressedMatrix whole(src, method);
    const Matrix<float> decoded(whole);
    const CompressedMatrix padded(whole, -2, 11, 1, 3, true);
    const Matrix<float> got(padded);
    ASSERT_EQ(got.NumRows(), 11);
    for (int r = 0; r < 11; ++r) {
      const int from = std::min(std::max(r - 2, 0), 5);
      for (int c = 0; c < 3; ++c) EXPECT_EQ(got(r, c), decoded(from, c + 1)) << r << "," << c;
    }
  }
}

TEST(CompressedMatrixRangeTest, SubRangeWritesAsItsOwnCompressedMatrix) {
  test::Rng rng = test::MakeRng();
  const CompressedMatrix whole(test::RandomMatrix<float>(10, 10, &rng), kSpeechFeature);
  const CompressedMatrix part(whole, 2, 5, 3, 4);
  std::ostringstream os;
  part.Write(os, true);
  std::istringstream is(os.str());
  CompressedMatrix back;
  back.Read(is, true);
  EXPECT_TRUE(Matrix<float>(back).Equal(Matrix<float>(part)));
}

TEST(CompressedMatrixRangeTest, EmptyBlockGivesEmptyMatrix) {
  test::Rng rng = test::MakeRng();
  const CompressedMatrix whole(test::RandomMatrix<float>(4, 4, &rng));
  EXPECT_EQ(CompressedMatrix(whole, 1, 0, 1, 2).NumRows(), 0);
  EXPECT_EQ(CompressedMatrix(whole, 1, 2, 4, 0).NumCols(), 0);
}

TEST(CompressedMatrixRangeTest, MisuseThrows) {
  test::QuietLog quiet;
  test::Rng rng = test::MakeRng();
  const CompressedMatrix whole(test::RandomMatrix<float>(4, 5, &rng));
  EXPECT_THROW(CompressedMatrix(whole, 2, 3, 0, 5), Error);        // rows past the end
  EXPECT_THROW(CompressedMatrix(whole, -1, 2, 0, 5), Error);       // negative offset, no padding
  EXPECT_THROW(CompressedMatrix(whole, 0, 2, 3, 3, true), Error);  // columns never pad
  EXPECT_THROW(CompressedMatrix(whole, 0, -1, 0, 5), Error);
  EXPECT_THROW(CompressedMatrix(CompressedMatrix(), 0, 2, 0, 1, true), Error);  // nothing to pad
}

template <typename Real>
class CompressedConvertTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CompressedConvertTest, RealTypes);

TYPED_TEST(CompressedConvertTest, MatrixFromCompressedMatchesCopyToMat) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : test::kEdgeShapes) {
    SCOPED_TRACE(testing::Message() << s);
    const CompressedMatrix c(test::RandomMatrix<Real>(s.rows, s.cols, &rng));
    Matrix<Real> expected(c.NumRows(), c.NumCols());
    c.CopyToMat(&expected);
    const Matrix<Real> constructed(c);
    EXPECT_TRUE(constructed.Equal(expected));
    Matrix<Real> copied(c.NumRows(), c.NumCols());
    copied.CopyFromMat(c);
    EXPECT_TRUE(copied.Equal(expected));
  }
}

TYPED_TEST(CompressedConvertTest, CopyFromCompressedRejectsWrongShape) {
  using Real = TypeParam;
  test::QuietLog quiet;
  test::Rng rng = test::MakeRng();
  const CompressedMatrix c(test::RandomMatrix<Real>(3, 4, &rng));
  Matrix<Real> wrong(4, 3);
  EXPECT_THROW(wrong.CopyFromMat(c), Error);
}

}  // namespace
}  // namespace cuctx
