// tests/matrix/compressed-matrix-test.cc: CM/CM2/CM3 golden decoding, encoding, bad input.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/compressed-matrix.h"

#include "base/error.h"
#include "base/io-funcs.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>

namespace cuctx {
namespace {

using test::Bytes;
using test::RawInt32;

// Raw little-endian uint16 (test::RawInt32 gives the int32 fields; the header has no size bytes).
std::string U16(int v) { return Bytes({v & 0xff, (v >> 8) & 0xff}); }

// IEEE-754 single precision, little-endian, worked out by hand.
const std::string kMinus2 = Bytes({0x00, 0x00, 0x00, 0xc0});         // -2.0f
const std::string k65535Over1024 = Bytes({0x00, 0xff, 0x7f, 0x42});  // 63.9990234375f
const std::string kTen = Bytes({0x00, 0x00, 0x20, 0x41});            // 10.0f
const std::string k63p75 = Bytes({0x00, 0x00, 0x7f, 0x42});          // 63.75f
const std::string kZero = Bytes({0x00, 0x00, 0x00, 0x00});           // 0.0f
const std::string k65535 = Bytes({0x00, 0xff, 0x7f, 0x47});          // 65535.0f
const std::string kMinus1 = Bytes({0x00, 0x00, 0x80, 0xbf});         // -1.0f
const std::string kTwo = Bytes({0x00, 0x00, 0x00, 0x40});            // 2.0f
const std::string kMinus32768 = Bytes({0x00, 0x00, 0x00, 0xc7});     // -32768.0f
const std::string k255 = Bytes({0x00, 0x00, 0x7f, 0x43});            // 255.0f

// CM2, 2 x 2, min -2, range 65535/1024: the step is exactly 1/1024, so u -> -2 + u / 1024.
const std::string kCm2 = "CM2 " + kMinus2 + k65535Over1024 + RawInt32(2) + RawInt32(2) + U16(0) +
                         U16(1024) + U16(2048) + U16(65535);
// CM3, 2 x 3, min 10, range 63.75: the step is exactly 0.25, so b -> 10 + b / 4.
const std::string kCm3 =
    "CM3 " + kTen + k63p75 + RawInt32(2) + RawInt32(3) + Bytes({0, 4, 8, 255, 1, 2});
// CM, 3 x 2, min 0, range 65535: percentile codes decode to themselves; with percentiles
// (0, 64, 192, 255) each byte decodes to its own value. Bytes are column by column.
const std::string kCm = "CM " + kZero + k65535 + RawInt32(3) + RawInt32(2) + U16(0) + U16(64) +
                        U16(192) + U16(255) + U16(0) + U16(64) + U16(192) + U16(255) +
                        Bytes({0, 100, 200, 64, 192, 255});

template <typename Real>
void ExpectMatrixIs(const MatrixBase<Real>& m, int rows, int cols,
                    std::initializer_list<double> values) {
  ASSERT_EQ(m.NumRows(), rows);
  ASSERT_EQ(m.NumCols(), cols);
  auto it = values.begin();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c, ++it)
      EXPECT_EQ(m(r, c), static_cast<Real>(*it)) << r << "," << c;
}

CompressedMatrix ReadCompressed(const std::string& bytes) {
  std::istringstream is(bytes);
  CompressedMatrix cm;
  cm.Read(is, true);
  EXPECT_EQ(is.peek(), std::char_traits<char>::eof());
  return cm;
}

template <typename Real>
class CompressedMatrixTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CompressedMatrixTest, RealTypes);

TYPED_TEST(CompressedMatrixTest, DecodesTwoByteGolden) {
  using Real = TypeParam;
  CompressedMatrix cm = ReadCompressed(kCm2);
  EXPECT_EQ(cm.Format(), CompressedMatrix::kTwoByte);
  Matrix<Real> m(2, 2);
  cm.CopyToMat(&m);
  ExpectMatrixIs(m, 2, 2, {-2.0, -1.0, 0.0, 61.9990234375});
}

TYPED_TEST(CompressedMatrixTest, DecodesOneByteGolden) {
  using Real = TypeParam;
  CompressedMatrix cm = ReadCompressed(kCm3);
  EXPECT_EQ(cm.Format(), CompressedMatrix::kOneByte);
  Matrix<Real> m(2, 3);
  cm.CopyToMat(&m);
  ExpectMatrixIs(m, 2, 3, {10.0, 11.0, 12.0, 73.75, 10.25, 10.5});
}

TYPED_TEST(CompressedMatrixTest, DecodesColumnHeaderGolden) {
  using Real = TypeParam;
  CompressedMatrix cm = ReadCompressed(kCm);
  EXPECT_EQ(cm.Format(), CompressedMatrix::kOneByteWithColHeaders);
  Matrix<Real> m(3, 2);
  cm.CopyToMat(&m);
  ExpectMatrixIs(m, 3, 2, {0, 64, 100, 192, 200, 255});
}

TYPED_TEST(CompressedMatrixTest, DecodesColumnHeaderSegments) {
  using Real = TypeParam;
  // One column, min -1, range 2, percentile codes (0, 16384, 49152, 65535).
  const std::string bytes = "CM " + kMinus1 + kTwo + RawInt32(6) + RawInt32(1) + U16(0) +
                            U16(16384) + U16(49152) + U16(65535) +
                            Bytes({0, 32, 64, 128, 192, 255});
  CompressedMatrix cm = ReadCompressed(bytes);
  Matrix<Real> m(6, 1);
  cm.CopyToMat(&m);
  // The three segments: [0, 64] spans p0..p25, (64, 192] spans p25..p75, (192, 255] p75..p100.
  const double p0 = -1.0, p25 = -1.0 + 2.0 * 16384 / 65535, p75 = -1.0 + 2.0 * 49152 / 65535,
               p100 = 1.0;
  const double expected[6] = {p0,  p0 + (p25 - p0) * 32 / 64,   p25, p25 + (p75 - p25) * 64 / 128,
                              p75, p75 + (p100 - p75) * 63 / 63};
  for (int r = 0; r < 6; ++r) EXPECT_NEAR(m(r, 0), expected[r], 1e-6) << "row " << r;
}

TYPED_TEST(CompressedMatrixTest, MatrixReadDecompresses) {
  using Real = TypeParam;
  std::istringstream is(kCm2 + kCm3 + kCm);
  Matrix<Real> a, b, c;
  a.Read(is, true);
  b.Read(is, true);
  c.Read(is, true);
  ExpectMatrixIs(a, 2, 2, {-2.0, -1.0, 0.0, 61.9990234375});
  ExpectMatrixIs(b, 2, 3, {10.0, 11.0, 12.0, 73.75, 10.25, 10.5});
  ExpectMatrixIs(c, 3, 2, {0, 64, 100, 192, 200, 255});
  // Through the binary header as a file would have it.
  std::istringstream file(Bytes({0, 'B'}) + kCm3);
  bool binary = false;
  ASSERT_TRUE(InitKaldiInputStream(file, &binary));
  Matrix<Real> d;
  d.Read(file, binary);
  ExpectMatrixIs(d, 2, 3, {10.0, 11.0, 12.0, 73.75, 10.25, 10.5});
}

TEST(CompressedMatrixIoTest, WriteReproducesTheBytesRead) {
  for (const std::string& golden : {kCm2, kCm3, kCm}) {
    CompressedMatrix cm = ReadCompressed(golden);
    std::ostringstream os;
    cm.Write(os, true);
    EXPECT_EQ(os.str(), golden);
  }
}

TEST(CompressedMatrixIoTest, EmptyMatrix) {
  const std::string golden = "CM " + std::string(16, '\0');
  CompressedMatrix empty;
  std::ostringstream os;
  empty.Write(os, true);
  EXPECT_EQ(os.str(), golden);
  CompressedMatrix cm = ReadCompressed(golden);
  EXPECT_EQ(cm.NumRows(), 0);
  EXPECT_EQ(cm.NumCols(), 0);
  Matrix<float> m(2, 2);
  std::istringstream is(golden);
  m.Read(is, true);
  EXPECT_EQ(m.NumRows(), 0);
  // Text mode writes an ordinary (empty) matrix.
  std::ostringstream txt;
  empty.Write(txt, false);
  EXPECT_EQ(txt.str(), " [ ]\n");
}

TEST(CompressedMatrixIoTest, EncodesKnownRangesExactly) {
  Matrix<float> m(1, 2);
  m(0, 0) = 0;
  m(0, 1) = 65535;
  std::ostringstream os;
  CompressedMatrix(m, kTwoByteAuto).Write(os, true);
  EXPECT_EQ(os.str(), "CM2 " + kZero + k65535 + RawInt32(1) + RawInt32(2) + U16(0) + U16(65535));

  Matrix<double> pcm(1, 3);
  pcm(0, 0) = -32768;
  pcm(0, 1) = 0;
  pcm(0, 2) = 32767;
  std::ostringstream os2;
  CompressedMatrix(pcm, kTwoByteSignedInteger).Write(os2, true);
  EXPECT_EQ(os2.str(), "CM2 " + kMinus32768 + k65535 + RawInt32(1) + RawInt32(3) + U16(0) +
                           U16(32768) + U16(65535));

  Matrix<float> bytes(1, 3);
  bytes(0, 1) = 1;
  bytes(0, 2) = 255;
  std::ostringstream os3;
  CompressedMatrix(bytes, kOneByteUnsignedInteger).Write(os3, true);
  EXPECT_EQ(os3.str(), "CM3 " + kZero + k255 + RawInt32(1) + RawInt32(3) + Bytes({0, 1, 255}));
}

TYPED_TEST(CompressedMatrixTest, CompressionErrorIsWithinTheStep) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  struct Case {
    CompressionMethod method;
    int rows, cols;
    CompressedMatrix::DataFormat format;
  };
  const Case cases[] = {{kAutomaticMethod, 20, 7, CompressedMatrix::kOneByteWithColHeaders},
                        {kAutomaticMethod, 8, 5, CompressedMatrix::kTwoByte},
                        {kSpeechFeature, 3, 4, CompressedMatrix::kOneByteWithColHeaders},
                        {kTwoByteAuto, 17, 33, CompressedMatrix::kTwoByte},
                        {kOneByteAuto, 17, 33, CompressedMatrix::kOneByte},
                        {kOneByteZeroOne, 5, 6, CompressedMatrix::kOneByte}};
  for (const Case& k : cases) {
    Matrix<Real> m(k.rows, k.cols);
    for (int r = 0; r < k.rows; ++r)
      for (int c = 0; c < k.cols; ++c)
        m(r, c) = static_cast<Real>(k.method == kOneByteZeroOne ? rng.Uniform() : rng.Gauss());
    CompressedMatrix cm(m, k.method);
    EXPECT_EQ(cm.Format(), k.format) << "method " << k.method;
    Matrix<Real> back(k.rows, k.cols);
    cm.CopyToMat(&back);
    Real lo = m(0, 0), hi = m(0, 0);
    for (int r = 0; r < k.rows; ++r)
      for (int c = 0; c < k.cols; ++c) lo = std::min(lo, m(r, c)), hi = std::max(hi, m(r, c));
    double step = k.format == CompressedMatrix::kTwoByte ? (hi - lo) / 65535.0
                  : k.format == CompressedMatrix::kOneByte
                      ? (k.method == kOneByteZeroOne ? 1.0 : hi - lo) / 255.0
                      : (hi - lo) / 32.0;  // coarse bound for CM
    for (int r = 0; r < k.rows; ++r)
      for (int c = 0; c < k.cols; ++c)
        ASSERT_LE(std::fabs(back(r, c) - m(r, c)), step)
            << "method " << k.method << " at " << r << "," << c;
    // A binary round trip keeps every byte.
    std::stringstream ss;
    cm.Write(ss, true);
    CompressedMatrix again;
    again.Read(ss, true);
    std::ostringstream first, second;
    cm.Write(first, true);
    again.Write(second, true);
    EXPECT_EQ(first.str(), second.str());
  }
}

TYPED_TEST(CompressedMatrixTest, PartialDecodesMatchFullDecode) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(3);
  for (CompressionMethod method : {kSpeechFeature, kTwoByteAuto, kOneByteAuto}) {
    Matrix<Real> m(11, 6);
    for (int r = 0; r < 11; ++r)
      for (int c = 0; c < 6; ++c) m(r, c) = static_cast<Real>(rng.Gauss());
    CompressedMatrix cm(m, method);
    Matrix<Real> full(11, 6), transposed(6, 11), block(4, 3);
    cm.CopyToMat(&full);
    cm.CopyToMat(&transposed, kTrans);
    cm.CopyToMat(5, 2, &block);
    Vector<Real> row(6), col(11);
    cm.CopyRowToVec(7, &row);
    cm.CopyColToVec(4, &col);
    for (int r = 0; r < 11; ++r)
      for (int c = 0; c < 6; ++c) ASSERT_EQ(transposed(c, r), full(r, c));
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(block(r, c), full(r + 5, c + 2));
    for (int c = 0; c < 6; ++c) ASSERT_EQ(row(c), full(7, c));
    for (int r = 0; r < 11; ++r) ASSERT_EQ(col(r), full(r, 4));
    test::ExpectErrorContaining([&] { cm.CopyToMat(9, 0, &block); }, "does not fit");
    test::ExpectErrorContaining([&] { cm.CopyRowToVec(11, &row); }, "row 11 out of range");
    test::ExpectErrorContaining([&] { cm.CopyColToVec(0, &row); }, "vector has dim 6, expected 11");
    test::ExpectErrorContaining([&] { cm.CopyToMat(&block); },
                                "destination is 4 x 3, expected 11 x 6");
  }
}

TEST(CompressedMatrixIoTest, ScaleAndConstantMatrix) {
  CompressedMatrix cm = ReadCompressed(kCm3);
  cm.Scale(2.0f);
  Matrix<float> m(2, 3);
  cm.CopyToMat(&m);
  ExpectMatrixIs(m, 2, 3, {20.0, 22.0, 24.0, 147.5, 20.5, 21.0});
  Matrix<float> constant(12, 3);
  constant.Set(-4.0f);
  Matrix<float> back(12, 3);
  CompressedMatrix(constant).CopyToMat(&back);
  for (int r = 0; r < 12; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(back(r, c), -4.0f, 1e-3);
}

TEST(CompressedMatrixIoTest, TextModeIsAnOrdinaryMatrix) {
  CompressedMatrix cm = ReadCompressed(kCm3);
  std::ostringstream os;
  cm.Write(os, false);
  EXPECT_EQ(os.str(), " [\n  10 11 12 \n  73.75 10.25 10.5 ]\n");
  std::istringstream is(os.str());
  CompressedMatrix back;
  back.Read(is, false);
  Matrix<double> m(2, 3);
  back.CopyToMat(&m);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(m(0, c), 10 + c, 1e-3);
  // Binary data without a CM token is an ordinary matrix, compressed on the way in.
  Matrix<float> plain(1, 2);
  plain(0, 1) = 1;
  std::stringstream ss;
  plain.Write(ss, true);
  CompressedMatrix from_plain;
  from_plain.Read(ss, true);
  EXPECT_EQ(from_plain.NumCols(), 2);
}

TEST(CompressedMatrixIoTest, MalformedInputThrows) {
  auto read = [](const std::string& bytes) {
    return [bytes] {
      std::istringstream is(bytes);
      CompressedMatrix cm;
      cm.Read(is, true);
    };
  };
  test::ExpectErrorContaining(read("CM4 " + std::string(16, '\0')), "found \"CM4\"");
  test::ExpectErrorContaining(read("CM2 " + kZero + kZero + RawInt32(-3) + RawInt32(2)),
                              "invalid size -3 x 2");
  test::ExpectErrorContaining(read("CM3 " + kZero + kZero + RawInt32(1 << 20) + RawInt32(1 << 10)),
                              "truncated");
  test::ExpectErrorContaining(read("CM " + kZero + kZero), "truncated compressed-matrix header");
  for (const std::string& golden : {kCm2, kCm3, kCm}) {
    for (size_t len = 0; len < golden.size(); ++len) {
      SCOPED_TRACE(golden.substr(0, 3) + " prefix of " + std::to_string(len) + " bytes");
      test::QuietLog quiet;
      std::istringstream is(golden.substr(0, len));
      CompressedMatrix cm;
      EXPECT_THROW(cm.Read(is, true), Error);
      std::istringstream is2(golden.substr(0, len));
      Matrix<float> m;
      EXPECT_THROW(m.Read(is2, true), Error);
    }
  }
  Matrix<float> bad(2, 2);
  bad(1, 1) = std::numeric_limits<float>::infinity();
  test::ExpectErrorContaining([&] { CompressedMatrix cm(bad); }, "inf or NaN");
  test::ExpectErrorContaining([&] { CompressedMatrix cm(bad, static_cast<CompressionMethod>(9)); },
                              "invalid compression method 9");
}

}  // namespace
}  // namespace cuctx
