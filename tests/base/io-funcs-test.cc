// tests/base/io-funcs-test.cc: Kaldi byte layout of
// tokens and basic types, text forms, read errors.
// SPDX-License-Identifier: Apache-2.0
#include "base/io-funcs.h"

#include "base/error.h"
#include "tests/testing.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace cuctx {
namespace {

using test::Bytes;
using test::ErrorText;

// Writes `value` with WriteBasicType and returns the bytes.
template <class T>
std::string Written(T value, bool binary) {
  std::ostringstream os;
  WriteBasicType(os, binary, value);
  return os.str();
}

template <class T>
T ReadBack(const std::string& bytes, bool binary) {
  std::istringstream is(bytes);
  T value{};
  ReadBasicType(is, binary, &value);
  return value;
}

class IoFuncsTest : public ::testing::Test {
 private:
  test::QuietLog quiet_;  // read failures log before throwing; keep the expected ones off stderr
};

TEST_F(IoFuncsTest, TokenIsTextAndOneSpaceInBothModes) {
  for (bool binary : {true, false}) {
    std::ostringstream os;
    WriteToken(os, binary, "<Nnet>");
    WriteToken(os, binary, std::string("abc"));
    EXPECT_EQ(os.str(), "<Nnet> abc ");
  }
}

TEST_F(IoFuncsTest, WriteTokenRejectsEmptyAndWhitespace) {
  std::ostringstream os;
  EXPECT_THROW(WriteToken(os, true, ""), Error);
  EXPECT_THROW(WriteToken(os, true, "a b"), Error);
  EXPECT_THROW(WriteToken(os, false, "a\nb"), Error);
  EXPECT_THROW(WriteToken(os, false, static_cast<const char*>(nullptr)), Error);
}

// A write into a stream already in a failed state throws an Error naming what was being written
// (the token, or the value type and mode) and the stream's error bits.
TEST_F(IoFuncsTest, WriteErrorsNameWhatWasWrittenAndTheStreamState) {
  std::ostringstream os;
  os.setstate(std::ios::badbit);
  std::string text = test::ErrorText([&] { WriteToken(os, true, "<Nnet>"); });
  EXPECT_NE(text.find("token \"<Nnet>\""), std::string::npos) << text;
  EXPECT_NE(text.find("badbit"), std::string::npos) << text;
  text = test::ErrorText([&] { WriteBasicType<int32>(os, true, 7); });
  EXPECT_NE(text.find("int32 (binary)"), std::string::npos) << text;
  EXPECT_NE(text.find("badbit"), std::string::npos) << text;
  text = test::ErrorText([&] { WriteBasicType<float>(os, false, 1.5f); });
  EXPECT_NE(text.find("float (text)"), std::string::npos) << text;
  text = test::ErrorText([&] { WriteIntegerVector<uint32>(os, true, {1, 2, 3}); });
  EXPECT_NE(text.find("3 uint32 (binary)"), std::string::npos) << text;
  EXPECT_NE(text.find("badbit failbit"), std::string::npos) << text;
}

TEST_F(IoFuncsTest, Int32GoldenBytes) {
  EXPECT_EQ(Written<int32>(0x01020304, true), Bytes({0x04, 0x04, 0x03, 0x02, 0x01}));
  EXPECT_EQ(Written<int32>(-1, true), Bytes({0x04, 0xff, 0xff, 0xff, 0xff}));
  EXPECT_EQ(Written<int32>(-5, false), "-5 ");
}

TEST_F(IoFuncsTest, UnsignedSizeByteIsNegativeSize) {
  EXPECT_EQ(Written<uint32>(7, true), Bytes({0xfc, 0x07, 0x00, 0x00, 0x00}));
  EXPECT_EQ(Written<uint8>(200, true), Bytes({0xff, 200}));
  EXPECT_EQ(Written<uint16>(0x0102, true), Bytes({0xfe, 0x02, 0x01}));
  EXPECT_EQ(Written<uint64>(1, true), Bytes({0xf8, 1, 0, 0, 0, 0, 0, 0, 0}));
}

TEST_F(IoFuncsTest, SignedSizeBytes) {
  EXPECT_EQ(Written<int8>(-2, true), Bytes({0x01, 0xfe}));
  EXPECT_EQ(Written<int16>(0x0102, true), Bytes({0x02, 0x02, 0x01}));
  EXPECT_EQ(Written<int64>(0x0102030405060708LL, true),
            Bytes({0x08, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}));
}

TEST_F(IoFuncsTest, SmallIntegersAreNumbersInText) {
  EXPECT_EQ(Written<int8>(65, false), "65 ");
  EXPECT_EQ(Written<uint8>(200, false), "200 ");
  EXPECT_EQ(ReadBack<int8>("65 ", false), 65);
  EXPECT_EQ(ReadBack<int8>("-128", false), -128);
}

TEST_F(IoFuncsTest, FloatAndDoubleGoldenBytes) {
  EXPECT_EQ(Written<float>(1.0f, true), Bytes({0x04, 0x00, 0x00, 0x80, 0x3f}));
  EXPECT_EQ(Written<float>(-2.0f, true), Bytes({0x04, 0x00, 0x00, 0x00, 0xc0}));
  EXPECT_EQ(Written<double>(1.0, true),
            Bytes({0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f}));
  EXPECT_EQ(Written<float>(1.5f, false), "1.5 ");
  EXPECT_EQ(Written<double>(-0.25, false), "-0.25 ");
}

TEST_F(IoFuncsTest, BoolIsOneLetter) {
  EXPECT_EQ(Written(true, true), "T");
  EXPECT_EQ(Written(false, true), "F");
  EXPECT_EQ(Written(true, false), "T ");
  EXPECT_EQ(Written(false, false), "F ");
  EXPECT_TRUE(ReadBack<bool>("T", true));
  EXPECT_FALSE(ReadBack<bool>("  F ", false));
  EXPECT_TRUE(test::ThrowsWith([] { ReadBack<bool>("X", true); }, "'X'"));
}

template <class T>
void ExpectRoundTrip(T value) {
  for (bool binary : {true, false}) {
    std::stringstream ss;
    InitKaldiOutputStream(ss, binary);
    WriteBasicType(ss, binary, value);
    WriteBasicType(ss, binary, value);
    bool read_binary = !binary;
    ASSERT_TRUE(InitKaldiInputStream(ss, &read_binary));
    EXPECT_EQ(read_binary, binary);
    T a{}, b{};
    ReadBasicType(ss, binary, &a);
    ReadBasicType(ss, binary, &b);
    EXPECT_EQ(a, value) << "binary=" << binary;
    EXPECT_EQ(b, value) << "binary=" << binary;
  }
}

TEST_F(IoFuncsTest, IntegersRoundTripAtTheirLimits) {
  ExpectRoundTrip<int8>(std::numeric_limits<int8>::min());
  ExpectRoundTrip<uint8>(std::numeric_limits<uint8>::max());
  ExpectRoundTrip<int16>(std::numeric_limits<int16>::min());
  ExpectRoundTrip<uint16>(std::numeric_limits<uint16>::max());
  ExpectRoundTrip<int32>(std::numeric_limits<int32>::min());
  ExpectRoundTrip<uint32>(std::numeric_limits<uint32>::max());
  ExpectRoundTrip<int64>(std::numeric_limits<int64>::min());
  ExpectRoundTrip<uint64>(std::numeric_limits<uint64>::max());
  ExpectRoundTrip<bool>(true);
}

TEST_F(IoFuncsTest, RealsRoundTrip) {
  test::Rng rng = test::MakeRng();
  for (int i = 0; i < 100; ++i) {
    double d = rng.Gauss() * 1e3;
    // Binary is exact. Text keeps 7 significant digits (InitKaldiOutputStream), like Kaldi.
    std::stringstream ss;
    WriteBasicType(ss, true, d);
    EXPECT_EQ(ReadBack<double>(ss.str(), true), d);
    std::stringstream text;
    InitKaldiOutputStream(text, false);
    WriteBasicType(text, false, static_cast<float>(d));
    EXPECT_NEAR(ReadBack<float>(text.str(), false), static_cast<float>(d), 1e-6 * std::abs(d));
  }
}

TEST_F(IoFuncsTest, FloatReaderAcceptsDoubleAndViceVersa) {
  EXPECT_EQ(ReadBack<float>(Written<double>(0.5, true), true), 0.5f);
  EXPECT_EQ(ReadBack<double>(Written<float>(-3.25f, true), true), -3.25);
  EXPECT_EQ(ReadBack<float>(Written<double>(0.1, false), false), 0.1f);
}

TEST_F(IoFuncsTest, TextRealsAcceptNonFiniteSpellings) {
  EXPECT_EQ(ReadBack<float>("inf ", false), std::numeric_limits<float>::infinity());
  EXPECT_EQ(ReadBack<double>("-inf", false), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(ReadBack<double>("Infinity", false), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(ReadBack<float>("nan", false)));
  EXPECT_TRUE(std::isnan(ReadBack<double>("-nan", false)));
  EXPECT_THROW(ReadBack<float>("1.5x", false), Error);
}

TEST_F(IoFuncsTest, IntegerVectorGoldenBytes) {
  std::ostringstream os;
  WriteIntegerVector(os, true, std::vector<int32>{1, -2});
  EXPECT_EQ(os.str(),
            Bytes({0x04, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xfe, 0xff, 0xff, 0xff}));
  std::ostringstream text;
  WriteIntegerVector(text, false, std::vector<int32>{1, -2, 3});
  EXPECT_EQ(text.str(), "[ 1 -2 3 ]\n");
  std::ostringstream empty;
  WriteIntegerVector(empty, false, std::vector<int32>{});
  EXPECT_EQ(empty.str(), "[ ]\n");
}

template <class T>
void ExpectVectorRoundTrip(const std::vector<T>& v) {
  for (bool binary : {true, false}) {
    std::stringstream ss;
    WriteIntegerVector(ss, binary, v);
    WriteToken(ss, binary, "<End>");
    std::vector<T> out = {T(9)};
    ReadIntegerVector(ss, binary, &out);
    EXPECT_EQ(out, v) << "binary=" << binary;
    ExpectToken(ss, binary, "<End>");
  }
}

TEST_F(IoFuncsTest, IntegerVectorsRoundTrip) {
  ExpectVectorRoundTrip<int32>({});
  ExpectVectorRoundTrip<int32>({0, std::numeric_limits<int32>::min(), 5});
  ExpectVectorRoundTrip<uint32>({std::numeric_limits<uint32>::max(), 1});
  ExpectVectorRoundTrip<int64>({std::numeric_limits<int64>::max()});
  ExpectVectorRoundTrip<int16>({-7, 7});
  ExpectVectorRoundTrip<int8>({-128, 0, 127});
}

TEST_F(IoFuncsTest, IntegerVectorReadErrors) {
  std::vector<int32> out;
  std::istringstream wrong_size(Bytes({0x08, 0x01, 0, 0, 0}));
  EXPECT_TRUE(test::ThrowsWith([&] { ReadIntegerVector(wrong_size, true, &out); }, "at byte 0"));
  std::istringstream truncated(Bytes({0x04, 0x03, 0, 0, 0, 0x01, 0, 0, 0}));
  EXPECT_TRUE(test::ThrowsWith([&] { ReadIntegerVector(truncated, true, &out); }, "truncated"));
  std::istringstream negative(Bytes({0x04, 0xff, 0xff, 0xff, 0xff}));
  EXPECT_THROW(ReadIntegerVector(negative, true, &out), Error);
  std::istringstream no_bracket("1 2 ]");
  EXPECT_TRUE(test::ThrowsWith([&] { ReadIntegerVector(no_bracket, false, &out); }, "'['"));
  std::istringstream unterminated("[ 1 2");
  EXPECT_THROW(ReadIntegerVector(unterminated, false, &out), Error);
}

TEST_F(IoFuncsTest, TruncatedInputIsErrorWithPosition) {
  std::istringstream is(Bytes({'x', 0x04, 0x01, 0x02}));
  is.get();  // start at byte 1, so the position is visible in the message
  int32 value;
  std::string what = ErrorText([&] { ReadBasicType(is, true, &value); });
  EXPECT_TRUE(test::Contains(what, "truncated"));
  EXPECT_TRUE(test::Contains(what, "at byte 1"));
  std::istringstream empty("");
  EXPECT_TRUE(test::ThrowsWith([&] { ReadBasicType(empty, true, &value); }, "end of stream"));
  std::istringstream short_float(Bytes({0x04, 0x00}));
  float f;
  EXPECT_TRUE(test::ThrowsWith([&] { ReadBasicType(short_float, true, &f); }, "truncated"));
}

TEST_F(IoFuncsTest, WrongSizeByteIsErrorWithPosition) {
  std::istringstream is(Written<uint32>(5, true));
  int32 value;
  std::string what = ErrorText([&] { ReadBasicType(is, true, &value); });
  EXPECT_TRUE(test::Contains(what, "size byte -4"));
  EXPECT_TRUE(test::Contains(what, "at byte 0"));
  std::istringstream is64(Written<int64>(5, true));
  EXPECT_TRUE(test::ThrowsWith([&] { ReadBasicType(is64, true, &value); }, "size byte 8"));
  std::istringstream not_real(Bytes({0x02, 0, 0}));
  double d;
  EXPECT_TRUE(test::ThrowsWith([&] { ReadBasicType(not_real, true, &d); }, "(4 or 8)"));
}

TEST_F(IoFuncsTest, TextIntegerErrors) {
  EXPECT_THROW(ReadBack<int8>("300", false), Error);
  EXPECT_THROW(ReadBack<uint32>("-1", false), Error);
  EXPECT_THROW(ReadBack<int32>("abc", false), Error);
  EXPECT_THROW(ReadBack<int32>("99999999999", false), Error);
  EXPECT_THROW(ReadBack<int32>("", false), Error);
  EXPECT_EQ(ReadBack<uint16>("  65535 ", false), 65535);
}

TEST_F(IoFuncsTest, ReadTokenAndExpectToken) {
  std::istringstream is("<A> <B>  \n <C> ");
  std::string token;
  ReadToken(is, false, &token);
  EXPECT_EQ(token, "<A>");
  ExpectToken(is, false, "<B>");
  ExpectToken(is, false, std::string("<C>"));
  EXPECT_EQ(Peek(is, false), -1);
}

TEST_F(IoFuncsTest, WrongTokenIsErrorNamingBothAndPosition) {
  std::istringstream is("<A> <B> ");
  ExpectToken(is, true, "<A>");
  std::string what = ErrorText([&] { ExpectToken(is, true, "<Wanted>"); });
  EXPECT_TRUE(test::Contains(what, "<Wanted>"));
  EXPECT_TRUE(test::Contains(what, "<B>"));
  EXPECT_TRUE(test::Contains(what, "at byte 4"));
}

TEST_F(IoFuncsTest, MissingSpaceAfterTokenIsError) {
  std::istringstream is("<A>");
  std::string token;
  std::string what = ErrorText([&] { ReadToken(is, true, &token); });
  EXPECT_TRUE(test::Contains(what, "space"));
  EXPECT_TRUE(test::Contains(what, "end of stream"));
  std::istringstream is2("<A>");
  EXPECT_TRUE(test::ThrowsWith([&] { ExpectToken(is2, true, "<A>"); }, "space"));
  std::istringstream empty("");
  EXPECT_TRUE(test::ThrowsWith([&] { ReadToken(empty, false, &token); }, "end of stream"));
}

TEST_F(IoFuncsTest, ControlBytesInTokensAreEscapedInMessages) {
  std::string token;
  std::istringstream is(std::string("\x04\x05"));
  std::string what = ErrorText([&] { ReadToken(is, true, &token); });
  EXPECT_TRUE(test::Contains(what, "token \"\\x04\\x05\" at byte 0")) << what;
  std::istringstream is2(std::string("\x7f\x01\xff! "));
  what = ErrorText([&] { ExpectToken(is2, true, "FM"); });
  EXPECT_TRUE(test::Contains(what, "found \"\\x7f\\x01\\xff!\"")) << what;
  for (char c : what) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "raw byte " << int(c) << " in " << what;
  EXPECT_EQ(PrintableWord("plain [1 2]"), "plain [1 2]");
  EXPECT_EQ(PrintableWord(std::string(45, 'a')), std::string(40, 'a') + "...");
}

TEST_F(IoFuncsTest, PeekAndPeekToken) {
  std::istringstream is("  <Tok> x");
  EXPECT_EQ(Peek(is, false), '<');
  EXPECT_EQ(PeekToken(is, false), 'T');
  std::string token;
  ReadToken(is, false, &token);
  EXPECT_EQ(token, "<Tok>") << "PeekToken leaves the '<' in the stream";
  EXPECT_EQ(PeekToken(is, false), 'x');
  std::istringstream binary(Bytes({'A'}));
  EXPECT_EQ(Peek(binary, true), 'A');
}

TEST_F(IoFuncsTest, BinaryHeader) {
  std::ostringstream bin, text;
  InitKaldiOutputStream(bin, true);
  EXPECT_EQ(bin.str(), Bytes({0x00, 'B'}));
  text.precision(3);
  InitKaldiOutputStream(text, false);
  EXPECT_EQ(text.str(), "");
  EXPECT_GE(text.precision(), 7);

  bool binary = false;
  std::istringstream bin_in(Bytes({0x00, 'B', 'T'}));
  EXPECT_TRUE(InitKaldiInputStream(bin_in, &binary));
  EXPECT_TRUE(binary);
  EXPECT_EQ(bin_in.peek(), 'T') << "the header is consumed";

  std::istringstream text_in("1 2");
  EXPECT_TRUE(InitKaldiInputStream(text_in, &binary));
  EXPECT_FALSE(binary);
  EXPECT_EQ(text_in.peek(), '1') << "nothing is consumed from a text stream";

  std::istringstream bad(Bytes({0x00, 'X'}));
  EXPECT_FALSE(InitKaldiInputStream(bad, &binary));

  std::istringstream empty("");
  EXPECT_TRUE(InitKaldiInputStream(empty, &binary));
  EXPECT_FALSE(binary);
}

TEST_F(IoFuncsTest, StreamPositionDescribesOffset) {
  std::istringstream is("abcdef");
  EXPECT_EQ(StreamPosition(is), " at byte 0");
  is.get();
  is.get();
  EXPECT_EQ(StreamPosition(is), " at byte 2");
  std::istringstream bad("x");
  bad.setstate(std::ios::badbit);
  EXPECT_EQ(StreamPosition(bad), "");
}

TEST_F(IoFuncsTest, BytesLeftInStreamCountsToTheEndAndKeepsThePosition) {
  std::istringstream is("abcdef");
  EXPECT_EQ(BytesLeftInStream(is), 6);
  is.get();
  is.get();
  EXPECT_EQ(BytesLeftInStream(is), 4);
  EXPECT_TRUE(is.good());
  EXPECT_EQ(is.get(), 'c');
  char rest[3];
  is.read(rest, 3);
  EXPECT_EQ(BytesLeftInStream(is), 0);
  EXPECT_TRUE(is.good());
  std::istringstream empty("");
  EXPECT_EQ(BytesLeftInStream(empty), 0);
}

TEST_F(IoFuncsTest, BytesLeftInStreamIsMinusOneForPipesAndStreamsNotGood) {
  test::PipeBuf pipe("abc");
  std::istream from_pipe(&pipe);
  EXPECT_EQ(BytesLeftInStream(from_pipe), -1);
  EXPECT_TRUE(from_pipe.good());  // the failed tellg is cleared
  EXPECT_EQ(from_pipe.get(), 'a');
  std::istringstream at_eof("x");
  at_eof.get();
  at_eof.get();
  ASSERT_TRUE(at_eof.eof());
  EXPECT_EQ(BytesLeftInStream(at_eof), -1);
  EXPECT_TRUE(at_eof.eof());  // left as it was
}

TEST_F(IoFuncsTest, ReadBasicTypeRejectsNullOutput) {
  std::istringstream is(Written<int32>(1, true));
  EXPECT_THROW(ReadBasicType<int32>(is, true, nullptr), Error);
}

}  // namespace
}  // namespace cuctx
