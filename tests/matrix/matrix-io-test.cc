// tests/matrix/matrix-io-test.cc: Kaldi-format
// Read/Write of Matrix and Vector against golden bytes.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "base/io-funcs.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/matrix-testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <string>

namespace cuctx {
namespace {

using test::Bytes;
using test::Int32;
using test::OneToNBytes;
using test::PipeBuf;

// The 2x3 matrix [[1 2 3] [4 5 6]] in binary, after the "\0B" header.
template <typename Real>
std::string Golden2x3() {
  return (sizeof(Real) == 4 ? "FM " : "DM ") + Int32(2) + Int32(3) + OneToNBytes<Real>(6);
}
// The vector [1 2 3] in binary.
template <typename Real>
std::string GoldenVec3() {
  return (sizeof(Real) == 4 ? "FV " : "DV ") + Int32(3) + OneToNBytes<Real>(3);
}

template <typename Real>
Matrix<Real> Make2x3() {
  Matrix<Real> m(2, 3);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) m(r, c) = static_cast<Real>(3 * r + c + 1);
  return m;
}

template <typename Real>
class MatrixIoTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixIoTest, RealTypes);

TYPED_TEST(MatrixIoTest, WritesBinaryGoldenBytes) {
  using Real = TypeParam;
  std::ostringstream os;
  InitKaldiOutputStream(os, true);
  Make2x3<Real>().Write(os, true);
  EXPECT_EQ(os.str(), Bytes({0, 'B'}) + Golden2x3<Real>());
}

TYPED_TEST(MatrixIoTest, ReadsBinaryGoldenBytes) {
  using Real = TypeParam;
  std::istringstream is(Bytes({0, 'B'}) + Golden2x3<Real>());
  bool binary = false;
  ASSERT_TRUE(InitKaldiInputStream(is, &binary));
  ASSERT_TRUE(binary);
  Matrix<Real> m;
  m.Read(is, binary);
  EXPECT_TRUE(test::SameElements<Real>(m, Make2x3<Real>()));
  EXPECT_EQ(is.peek(), std::char_traits<char>::eof());
}

TYPED_TEST(MatrixIoTest, WritesFromViewWithoutPadding) {
  using Real = TypeParam;
  Matrix<Real> big(2, 5);
  SubMatrix<Real> view(big, 0, 2, 1, 3);
  view.CopyFromMat(Make2x3<Real>());
  ASSERT_NE(view.Stride(), view.NumCols());
  std::ostringstream os;
  view.Write(os, true);
  EXPECT_EQ(os.str(), Golden2x3<Real>());
}

TYPED_TEST(MatrixIoTest, WritesAndReadsTextGolden) {
  using Real = TypeParam;
  Matrix<Real> m = Make2x3<Real>();
  m(0, 1) = static_cast<Real>(2.5);
  m(0, 2) = static_cast<Real>(-3);
  std::ostringstream os;
  InitKaldiOutputStream(os, false);
  m.Write(os, false);
  const std::string golden = " [\n  1 2.5 -3 \n  4 5 6 ]\n";
  EXPECT_EQ(os.str(), golden);
  std::istringstream is(golden);
  Matrix<Real> back;
  back.Read(is, false);
  EXPECT_TRUE(test::SameElements<Real>(back, m));
  EXPECT_EQ(is.peek(), std::char_traits<char>::eof());  // the final newline was consumed
}

TYPED_TEST(MatrixIoTest, EmptyMatrixForms) {
  using Real = TypeParam;
  Matrix<Real> empty;
  std::ostringstream bin, txt;
  empty.Write(bin, true);
  empty.Write(txt, false);
  EXPECT_EQ(bin.str(), std::string(sizeof(Real) == 4 ? "FM " : "DM ") + Int32(0) + Int32(0));
  EXPECT_EQ(txt.str(), " [ ]\n");
  for (const std::string& text :
       {std::string(" [ ]\n"), std::string("[]"), std::string(" [\n]\n")}) {
    Matrix<Real> m(2, 2);
    std::istringstream is(text);
    m.Read(is, false);
    EXPECT_EQ(m.NumRows(), 0) << text;
    EXPECT_EQ(m.NumCols(), 0) << text;
  }
  Matrix<Real> m(3, 3);
  std::istringstream is(bin.str());
  m.Read(is, true);
  EXPECT_EQ(m.NumRows(), 0);
}

TYPED_TEST(MatrixIoTest, RoundTripsEdgeShapes) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : test::kEdgeShapes) {
    if (static_cast<int64_t>(s.rows) * s.cols > 20000) continue;
    Matrix<Real> m = test::GaussMatrix<Real>(s.rows, s.cols, &rng);
    std::stringstream bin;
    m.Write(bin, true);
    Matrix<Real> back;
    back.Read(bin, true);
    EXPECT_TRUE(test::SameElements<Real>(back, m));
    // Text with enough digits to be exact.
    std::stringstream txt;
    txt.precision(std::numeric_limits<Real>::max_digits10);
    m.Write(txt, false);
    Matrix<Real> back_txt;
    back_txt.Read(txt, false);
    if (s.rows == 0 || s.cols == 0) {
      EXPECT_EQ(back_txt.NumRows(), 0) << s;
    } else {
      EXPECT_TRUE(test::SameElements<Real>(back_txt, m));
    }
  }
}

TYPED_TEST(MatrixIoTest, ReadsOtherPrecision) {
  using Real = TypeParam;
  using Other = typename std::conditional<sizeof(Real) == 4, double, float>::type;
  std::istringstream is(Golden2x3<Other>() + GoldenVec3<Other>());
  Matrix<Real> m;
  m.Read(is, true);
  EXPECT_TRUE(test::SameElements<Real>(m, Make2x3<Real>()));
  Vector<Real> v;
  v.Read(is, true);
  ASSERT_EQ(v.Dim(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(v(i), static_cast<Real>(i + 1));
}

TYPED_TEST(MatrixIoTest, ReadWithAdd) {
  using Real = TypeParam;
  Matrix<Real> m = Make2x3<Real>();
  std::istringstream is(Golden2x3<Real>() + Golden2x3<Real>());
  m.Read(is, true, true);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(m(r, c), 2 * (3 * r + c + 1));
  // MatrixBase::Read (a view) adds too.
  SubMatrix<Real> view(m, 0, 2, 0, 3);
  view.Read(is, true, true);
  EXPECT_EQ(m(1, 2), 18);
  // Adding into an empty matrix takes the stored one.
  Matrix<Real> empty;
  std::istringstream is2(Golden2x3<Real>());
  empty.Read(is2, true, true);
  EXPECT_TRUE(test::SameElements<Real>(empty, Make2x3<Real>()));
  // A size mismatch names both sizes.
  Matrix<Real> wrong(3, 3);
  test::ExpectErrorContaining(
      [&] {
        std::istringstream is3(Golden2x3<Real>());
        wrong.Read(is3, true, true);
      },
      "2 x 3");
}

TYPED_TEST(MatrixIoTest, MatrixBaseReadChecksShape) {
  using Real = TypeParam;
  Matrix<Real> storage(3, 3);
  SubMatrix<Real> view(storage, 0, 2, 0, 3);
  std::istringstream is(Golden2x3<Real>());
  view.Read(is, true);
  EXPECT_TRUE(test::SameElements<Real>(view, Make2x3<Real>()));
  SubMatrix<Real> wrong(storage, 0, 3, 0, 3);
  test::ExpectErrorContaining(
      [&] {
        std::istringstream is2(Golden2x3<Real>());
        wrong.Read(is2, true);
      },
      "2 x 3");
}

TYPED_TEST(MatrixIoTest, TextAcceptsInfNanSemicolonsAndCrLf) {
  using Real = TypeParam;
  std::istringstream is(" [ inf -Inf nan\r\n 1e-3 2 3 ; 7 8 -9 ]\r\nrest");
  Matrix<Real> m;
  m.Read(is, false);
  ASSERT_EQ(m.NumRows(), 3);
  ASSERT_EQ(m.NumCols(), 3);
  EXPECT_EQ(m(0, 0), std::numeric_limits<Real>::infinity());
  EXPECT_EQ(m(0, 1), -std::numeric_limits<Real>::infinity());
  EXPECT_TRUE(std::isnan(m(0, 2)));
  EXPECT_EQ(m(1, 0), static_cast<Real>(1e-3));
  EXPECT_EQ(m(2, 2), -9);
  std::string rest;
  is >> rest;
  EXPECT_EQ(rest, "rest");
}

TYPED_TEST(MatrixIoTest, TextAcceptsOldHeaderForm) {
  using Real = TypeParam;
  std::istringstream is("FM 2 3 [\n 1 2 3\n 4 5 6 ]\n");
  Matrix<Real> m;
  m.Read(is, false);
  EXPECT_TRUE(test::SameElements<Real>(m, Make2x3<Real>()));
  test::ExpectErrorContaining(
      [] {
        std::istringstream bad("DM 2 2 [ 1 2 3 ]\n");
        Matrix<Real> x;
        x.Read(bad, false);
      },
      "declares 2 x 2 but holds 1 x 3");
}

TYPED_TEST(MatrixIoTest, TextErrorsSayWhatAndWhere) {
  using Real = TypeParam;
  auto read = [](const std::string& text) {
    return [text] {
      std::istringstream is(text);
      Matrix<Real> m;
      m.Read(is, false);
    };
  };
  test::ExpectErrorContaining(read(" [\n  1 2 3 \n  4 5 6 \n  7 8 9 10 \n  1 2 3 ]\n"),
                              "row 2 has 4 values, expected 3");
  test::ExpectErrorContaining(read(" [\n  1 2 3 \n  4 5 ]\n"), "row 1 has 2 values, expected 3");
  test::ExpectErrorContaining(read(" [\n  1 2 3 \n  4 5 6 \n"), "unterminated");
  test::ExpectErrorContaining(read(" [ 1 2 abc ]\n"), "bad number \"abc\"");
  test::ExpectErrorContaining(read(" [ 1 2 abc ]\n"), "at byte 7");
  test::ExpectErrorContaining(read(" [ 1 1e999 ]\n"), "bad number \"1e999\"");
  test::ExpectErrorContaining(read(" [ 1 2x ]\n"), "bad number \"2x\"");
  test::ExpectErrorContaining(read(" ( 1 2 )\n"), "expected '['");
  test::ExpectErrorContaining(read(""), "end of stream");
}

TYPED_TEST(MatrixIoTest, BinaryTruncatedAtEveryOffsetThrows) {
  using Real = TypeParam;
  const std::string golden = Golden2x3<Real>();
  for (size_t len = 0; len < golden.size(); ++len) {
    SCOPED_TRACE("prefix of " + std::to_string(len) + " bytes");
    test::QuietLog quiet;
    std::istringstream is(golden.substr(0, len));
    Matrix<Real> m;
    EXPECT_THROW(m.Read(is, true), Error);
  }
  // The message says it is truncated and where the data started.
  test::ExpectErrorContaining(
      [&] {
        std::istringstream is(golden.substr(0, golden.size() - 1));
        Matrix<Real> m;
        m.Read(is, true);
      },
      "at byte 13");
}

TYPED_TEST(MatrixIoTest, TextTruncatedAtEveryOffsetThrowsUntilClosed) {
  using Real = TypeParam;
  const std::string golden = " [\n  1 2 3 \n  4 5 6 ]\n";
  const size_t close = golden.find(']');
  for (size_t len = 0; len < golden.size(); ++len) {
    SCOPED_TRACE("prefix of " + std::to_string(len) + " bytes");
    test::QuietLog quiet;
    std::istringstream is(golden.substr(0, len));
    Matrix<Real> m;
    if (len <= close) {
      EXPECT_THROW(m.Read(is, false), Error);
    } else {
      m.Read(is, false);
      EXPECT_TRUE(test::SameElements<Real>(m, Make2x3<Real>()));
    }
  }
}

TYPED_TEST(MatrixIoTest, BinaryBadHeadersThrow) {
  using Real = TypeParam;
  const std::string token = sizeof(Real) == 4 ? "FM " : "DM ";
  auto read = [](const std::string& bytes) {
    return [bytes] {
      std::istringstream is(bytes);
      Matrix<Real> m;
      m.Read(is, true);
    };
  };
  test::ExpectErrorContaining(read("XY " + Int32(1) + Int32(1) + OneToNBytes<double>(1)),
                              "found \"XY\"");
  test::ExpectErrorContaining(read("XY " + Int32(1)),
                              std::string("expected token \"") + token.substr(0, 2));
  test::ExpectErrorContaining(read(token + Int32(-1) + Int32(3)), "negative row count -1");
  test::ExpectErrorContaining(read(token + Int32(2) + Int32(-7)), "negative column count -7");
  test::ExpectErrorContaining(read(token + Bytes({8, 2, 0, 0, 0, 0, 0, 0, 0}) + Int32(3)),
                              "row count");
  // A corrupt size is caught before allocating: 100000 x 100000 elements cannot follow.
  test::ExpectErrorContaining(read(token + Int32(100000) + Int32(100000) + OneToNBytes<double>(1)),
                              "bytes");
}

TYPED_TEST(MatrixIoTest, AbsurdSizeFromPipeThrowsWithoutHugeAllocation) {
  using Real = TypeParam;
  const std::string token = sizeof(Real) == 4 ? "FM " : "DM ";
  PipeBuf buf(token + Int32(1 << 20) + Int32(1 << 10) + OneToNBytes<double>(2));
  std::istream is(&buf);
  Matrix<Real> m;
  test::ExpectErrorContaining([&] { m.Read(is, true); }, "truncated");
}

template <typename Real>
class VectorIoTest : public ::testing::Test {};
TYPED_TEST_SUITE(VectorIoTest, RealTypes);

TYPED_TEST(VectorIoTest, BinaryGoldenBothWays) {
  using Real = TypeParam;
  Vector<Real> v(3);
  for (int i = 0; i < 3; ++i) v(i) = static_cast<Real>(i + 1);
  std::ostringstream os;
  v.Write(os, true);
  EXPECT_EQ(os.str(), GoldenVec3<Real>());
  std::istringstream is(GoldenVec3<Real>());
  Vector<Real> back;
  back.Read(is, true);
  ASSERT_EQ(back.Dim(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(back(i), v(i));
}

TYPED_TEST(VectorIoTest, TextGoldenBothWays) {
  using Real = TypeParam;
  Vector<Real> v(3);
  v(0) = 1;
  v(1) = static_cast<Real>(-2.5);
  v(2) = 3;
  std::ostringstream os;
  v.Write(os, false);
  EXPECT_EQ(os.str(), " [ 1 -2.5 3 ]\n");
  std::istringstream is(" [ 1 -2.5 3 ]\n");
  Vector<Real> back;
  back.Read(is, false);
  ASSERT_EQ(back.Dim(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(back(i), v(i));
  EXPECT_EQ(is.peek(), std::char_traits<char>::eof());
}

TYPED_TEST(VectorIoTest, EmptyVectorForms) {
  using Real = TypeParam;
  Vector<Real> empty;
  std::ostringstream bin, txt;
  empty.Write(bin, true);
  empty.Write(txt, false);
  EXPECT_EQ(bin.str(), std::string(sizeof(Real) == 4 ? "FV " : "DV ") + Int32(0));
  EXPECT_EQ(txt.str(), " [ ]\n");
  for (const std::string& text : {std::string(" [ ]\n"), std::string("[]")}) {
    Vector<Real> v(4);
    std::istringstream is(text);
    v.Read(is, false);
    EXPECT_EQ(v.Dim(), 0) << text;
  }
}

TYPED_TEST(VectorIoTest, RoundTripsAndAdds) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(1);
  Vector<Real> v(37);
  test::FillGauss(&v, &rng);
  std::stringstream ss;
  v.Write(ss, true);
  ss.precision(std::numeric_limits<Real>::max_digits10);
  v.Write(ss, false);
  Vector<Real> a, b;
  a.Read(ss, true);
  b.Read(ss, false);
  for (int i = 0; i < v.Dim(); ++i) {
    EXPECT_EQ(a(i), v(i));
    EXPECT_EQ(b(i), v(i));
  }
  std::stringstream twice;
  v.Write(twice, true);
  v.Write(twice, true);
  a.Read(twice, true, true);
  for (int i = 0; i < v.Dim(); ++i) EXPECT_EQ(a(i), 2 * v(i));
  SubVector<Real> view(a, 0, a.Dim());
  view.Read(twice, true, true);
  for (int i = 0; i < v.Dim(); ++i) EXPECT_EQ(a(i), 3 * v(i));
}

TYPED_TEST(VectorIoTest, ErrorsSayWhatAndWhere) {
  using Real = TypeParam;
  auto read = [](const std::string& bytes, bool binary) {
    return [bytes, binary] {
      std::istringstream is(bytes);
      Vector<Real> v;
      v.Read(is, binary);
    };
  };
  test::ExpectErrorContaining(read(" [ 1 2\n 3 ]\n", false), "newline inside a text vector");
  test::ExpectErrorContaining(read(" [ 1 2 3", false), "unterminated");
  test::ExpectErrorContaining(read(" [ 1 nope 3 ]", false), "bad number \"nope\"");
  test::ExpectErrorContaining(read("XV " + Int32(0), true), "found \"XV\"");
  test::ExpectErrorContaining(
      read(std::string(sizeof(Real) == 4 ? "FV " : "DV ") + Int32(-4), true),
      "negative dimension -4");
  test::ExpectErrorContaining(
      read(std::string(sizeof(Real) == 4 ? "FV " : "DV ") + Int32(1 << 30), true), "bytes");
  Vector<Real> three(3);
  Vector<Real> four(4);
  SubVector<Real> view(four, 0, 4);
  test::ExpectErrorContaining(
      [&] {
        std::istringstream is(GoldenVec3<Real>());
        view.Read(is, true);
      },
      "dimension 3");
  test::ExpectErrorContaining(
      [&] {
        std::istringstream is(GoldenVec3<Real>());
        four.Read(is, true, true);
      },
      "dimension 3");
  const std::string golden = GoldenVec3<Real>();
  for (size_t len = 0; len < golden.size(); ++len) {
    SCOPED_TRACE("prefix of " + std::to_string(len) + " bytes");
    test::QuietLog quiet;
    std::istringstream is(golden.substr(0, len));
    EXPECT_THROW(three.Read(is, true), Error);
  }
}

}  // namespace
}  // namespace cuctx
