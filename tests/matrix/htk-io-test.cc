// tests/matrix/htk-io-test.cc: HTK/Sphinx feature files: golden big-endian bytes, byte-exact
// round trips, truncation and unsupported kinds.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix.h"
#include "tests/matrix-testing.h"

#include <gtest/gtest.h>
#include <sstream>
#include <string>

namespace cuctx {
namespace {

template <typename Real>
class HtkIoTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(HtkIoTest, RealTypes);

HtkHeader Header(int32 frames, int16 bytes, uint16 kind) {
  HtkHeader h;
  h.mNSamples = frames;
  h.mSamplePeriod = 100000;  // 10 ms
  h.mSampleSize = bytes;
  h.mSampleKind = kind;
  return h;
}

TYPED_TEST(HtkIoTest, WritesGoldenBigEndianBytes) {
  using Real = TypeParam;
  Matrix<Real> M(1, 2);
  M(0, 0) = 1.0;   // 0x3f800000
  M(0, 1) = -2.0;  // 0xc0000000
  std::ostringstream os;
  ASSERT_TRUE(WriteHtk(os, M, Header(1, 8, 06 | 0100)));  // MFCC_E
  const std::string expected =
      test::Bytes({0, 0, 0, 1, 0, 1, 0x86, 0xa0, 0, 8, 0, 0106, 0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0});
  EXPECT_EQ(os.str(), expected);
}

TYPED_TEST(HtkIoTest, RoundTripIsByteExact) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int rows : {0, 1, 17}) {
    Matrix<Real> M(Matrix<float>(test::GaussMatrix<float>(rows, 13, &rng)));
    const HtkHeader h = Header(rows, rows == 0 ? 0 : 52, 06);
    if (rows == 0) M.Resize(0, 0);
    std::ostringstream os;
    ASSERT_TRUE(WriteHtk(os, M, h));
    std::istringstream is(os.str());
    Matrix<Real> back;
    HtkHeader got;
    ASSERT_TRUE(ReadHtk(is, &back, &got));
    EXPECT_TRUE(test::SameElements(back, M));
    EXPECT_EQ(got.mNSamples, h.mNSamples);
    EXPECT_EQ(got.mSamplePeriod, h.mSamplePeriod);
    EXPECT_EQ(got.mSampleSize, h.mSampleSize);
    EXPECT_EQ(got.mSampleKind, h.mSampleKind);
    std::ostringstream again;
    ASSERT_TRUE(WriteHtk(again, back, got));
    EXPECT_EQ(again.str(), os.str());
  }
}

TYPED_TEST(HtkIoTest, ReadSkipsChecksumAndClearsItsFlag) {
  using Real = TypeParam;
  Matrix<Real> M(2, 1);
  M(0, 0) = 3;
  M(1, 0) = 4;
  std::ostringstream os;
  ASSERT_TRUE(WriteHtk(os, M, Header(2, 4, 06 | 010000)));
  std::istringstream is(os.str() + test::Bytes({0x12, 0x34}) + "next");
  Matrix<Real> back;
  HtkHeader got;
  ASSERT_TRUE(ReadHtk(is, &back, &got));
  EXPECT_TRUE(test::SameElements(back, M));
  EXPECT_EQ(got.mSampleKind, 06);
  std::string rest;
  is >> rest;
  EXPECT_EQ(rest, "next");
}

TYPED_TEST(HtkIoTest, TruncatedFileReturnsFalse) {
  using Real = TypeParam;
  Matrix<Real> M(3, 2);
  std::ostringstream os;
  ASSERT_TRUE(WriteHtk(os, M, Header(3, 8, 06)));
  const std::string bytes = os.str();
  Matrix<Real> back;
  std::istringstream short_header(bytes.substr(0, 7)),
      short_data(bytes.substr(0, bytes.size() - 1));
  EXPECT_FALSE(ReadHtk(short_header, &back, nullptr));
  EXPECT_FALSE(ReadHtk(short_data, &back, nullptr));
}

TYPED_TEST(HtkIoTest, RejectsUnsupportedKindsAndBadHeaders) {
  using Real = TypeParam;
  Matrix<Real> back;
  auto read = [&](int32 frames, int16 bytes, uint16 kind) {
    Matrix<Real> M(0, 0);
    std::ostringstream os;
    os << test::Bytes({(frames >> 24) & 0xff, (frames >> 16) & 0xff, (frames >> 8) & 0xff,
                       frames & 0xff, 0, 0, 0, 1, (bytes >> 8) & 0xff, bytes & 0xff, kind >> 8,
                       kind & 0xff});
    os << std::string(64, '\0');
    std::istringstream is(os.str());
    return ReadHtk(is, &back, nullptr);
  };
  EXPECT_TRUE(read(2, 8, 06));
  EXPECT_THROW(read(2, 8, 06 | 02000), Error);   // _C
  EXPECT_THROW(read(2, 8, 06 | 040000), Error);  // _V
  EXPECT_THROW(read(2, 8, 0), Error);            // waveform
  EXPECT_THROW(read(2, 8, 10), Error);           // discrete
  EXPECT_THROW(read(-1, 8, 06), Error);
  EXPECT_THROW(read(2, 6, 06), Error);
  Matrix<Real> M(2, 3);
  std::ostringstream os;
  EXPECT_THROW(WriteHtk(os, M, Header(3, 12, 06)), Error);
  EXPECT_THROW(WriteHtk(os, M, Header(2, 8, 06)), Error);
}

TYPED_TEST(HtkIoTest, WriteSphinxWritesCountThenBigEndianFloats) {
  using Real = TypeParam;
  Matrix<Real> M(1, 2);
  M(0, 0) = 1.0;
  M(0, 1) = -2.0;
  std::ostringstream os;
  ASSERT_TRUE(WriteSphinx(os, M));
  EXPECT_EQ(os.str(), test::RawInt32(2) + test::Bytes({0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0}));
}

}  // namespace
}  // namespace cuctx
