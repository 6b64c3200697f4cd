// tests/base/text-utils-test.cc: splitting, joining, trimming and strict number parsing.
// SPDX-License-Identifier: Apache-2.0
#include "base/text-utils.h"

#include "tests/testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <vector>

namespace cuctx {
namespace {

using Strings = std::vector<std::string>;

Strings Split(const std::string& s, const char* delim, bool omit) {
  Strings out = {"stale"};
  SplitStringToVector(s, delim, omit, &out);
  return out;
}

TEST(TextUtilsTest, SplitKeepsEmptyPieces) {
  EXPECT_EQ(Split("a,,b", ",", false), (Strings{"a", "", "b"}));
  EXPECT_EQ(Split(",a,", ",", false), (Strings{"", "a", ""}));
  EXPECT_EQ(Split("", ",", false), (Strings{""}));
  EXPECT_EQ(Split("abc", ",", false), (Strings{"abc"}));
}

TEST(TextUtilsTest, SplitOmitsEmptyPieces) {
  EXPECT_EQ(Split("a,,b", ",", true), (Strings{"a", "b"}));
  EXPECT_EQ(Split("  a \t b  ", " \t", true), (Strings{"a", "b"}));
  EXPECT_EQ(Split("", ",", true), Strings{});
  EXPECT_EQ(Split(",,,", ",", true), Strings{});
}

TEST(TextUtilsTest, SplitUsesEveryDelimiterCharacter) {
  EXPECT_EQ(Split("1:2;3", ":;", false), (Strings{"1", "2", "3"}));
}

TEST(TextUtilsTest, JoinInvertsSplit) {
  std::string out = "stale";
  JoinVectorToString({"a", "", "b"}, ", ", false, &out);
  EXPECT_EQ(out, "a, , b");
  JoinVectorToString({"a", "", "b"}, ", ", true, &out);
  EXPECT_EQ(out, "a, b");
  JoinVectorToString({}, ",", false, &out);
  EXPECT_EQ(out, "");
  JoinVectorToString({"", "x"}, "-", true, &out);
  EXPECT_EQ(out, "x");
}

TEST(TextUtilsTest, TrimRemovesSurroundingWhitespaceOnly) {
  std::string s = " \t\r\n a b \v\f ";
  Trim(&s);
  EXPECT_EQ(s, "a b");
  s = "   ";
  Trim(&s);
  EXPECT_EQ(s, "");
  s = "x";
  Trim(&s);
  EXPECT_EQ(s, "x");
}

TEST(TextUtilsTest, SplitsOnFirstSpace) {
  std::string first, rest;
  SplitStringOnFirstSpace("  key   some value  ", &first, &rest);
  EXPECT_EQ(first, "key");
  EXPECT_EQ(rest, "some value");
  SplitStringOnFirstSpace("alone", &first, &rest);
  EXPECT_EQ(first, "alone");
  EXPECT_EQ(rest, "");
  SplitStringOnFirstSpace("", &first, &rest);
  EXPECT_EQ(first, "");
  EXPECT_EQ(rest, "");
}

TEST(TextUtilsTest, RecognisesTokensAndLines) {
  EXPECT_TRUE(IsToken("abc"));
  EXPECT_TRUE(IsToken("<Nnet>"));
  EXPECT_TRUE(IsToken("h\xc3\xa9llo"));  // UTF-8 is allowed
  EXPECT_FALSE(IsToken(""));
  EXPECT_FALSE(IsToken("a b"));
  EXPECT_FALSE(IsToken("a\tb"));
  EXPECT_FALSE(IsToken(std::string("a\x01", 2)));

  EXPECT_TRUE(IsLine("a line with spaces"));
  EXPECT_TRUE(IsLine(""));
  EXPECT_FALSE(IsLine(" leading"));
  EXPECT_FALSE(IsLine("trailing "));
  EXPECT_FALSE(IsLine("two\nlines"));
  EXPECT_FALSE(IsLine("tab\there"));
}

TEST(TextUtilsTest, ConvertsIntegersStrictly) {
  int32 i = 7;
  EXPECT_TRUE(ConvertStringToInteger("-42", &i));
  EXPECT_EQ(i, -42);
  EXPECT_TRUE(ConvertStringToInteger("  +17 \n", &i));
  EXPECT_EQ(i, 17);
  for (const char* bad : {"", " ", "12abc", "1.5", "0x10", "--1", "+-1", "1 2", "-", "abc"}) {
    i = 7;
    EXPECT_FALSE(ConvertStringToInteger(bad, &i)) << "'" << bad << "'";
    EXPECT_EQ(i, 7) << "output must be untouched on failure";
  }
}

TEST(TextUtilsTest, RejectsIntegersOutOfRange) {
  int32 i = 0;
  EXPECT_TRUE(ConvertStringToInteger("2147483647", &i));
  EXPECT_EQ(i, std::numeric_limits<int32>::max());
  EXPECT_TRUE(ConvertStringToInteger("-2147483648", &i));
  EXPECT_EQ(i, std::numeric_limits<int32>::min());
  EXPECT_FALSE(ConvertStringToInteger("2147483648", &i));
  EXPECT_FALSE(ConvertStringToInteger("-2147483649", &i));
  EXPECT_FALSE(ConvertStringToInteger("99999999999999999999999", &i));

  int8 small = 0;
  EXPECT_TRUE(ConvertStringToInteger("-128", &small));
  EXPECT_EQ(small, -128);
  EXPECT_FALSE(ConvertStringToInteger("128", &small));

  int64 big = 0;
  EXPECT_TRUE(ConvertStringToInteger("-9223372036854775808", &big));
  EXPECT_EQ(big, std::numeric_limits<int64>::min());
  EXPECT_FALSE(ConvertStringToInteger("9223372036854775808", &big));
}

TEST(TextUtilsTest, UnsignedRejectsNegativeValues) {
  uint32 u = 5;
  EXPECT_FALSE(ConvertStringToInteger("-1", &u));
  EXPECT_FALSE(ConvertStringToInteger("-0", &u));
  EXPECT_EQ(u, 5u);
  EXPECT_TRUE(ConvertStringToInteger("4294967295", &u));
  EXPECT_EQ(u, 4294967295u);
  EXPECT_FALSE(ConvertStringToInteger("4294967296", &u));
  uint64 big = 0;
  EXPECT_TRUE(ConvertStringToInteger("18446744073709551615", &big));
  EXPECT_EQ(big, std::numeric_limits<uint64>::max());
  EXPECT_FALSE(ConvertStringToInteger("18446744073709551616", &big));
}

TEST(TextUtilsTest, ConvertsRealsStrictly) {
  double d = 0;
  EXPECT_TRUE(ConvertStringToReal(" 1.5e3 ", &d));
  EXPECT_EQ(d, 1500.0);
  EXPECT_TRUE(ConvertStringToReal("-0.25", &d));
  EXPECT_EQ(d, -0.25);
  float f = 0;
  EXPECT_TRUE(ConvertStringToReal("3", &f));
  EXPECT_EQ(f, 3.0f);
  for (const char* bad : {"", "  ", "1.5x", "x1.5", "1.5 2", "1e", "--1", "."}) {
    d = 7;
    EXPECT_FALSE(ConvertStringToReal(bad, &d)) << "'" << bad << "'";
    EXPECT_EQ(d, 7) << "output must be untouched on failure";
  }
}

TEST(TextUtilsTest, AcceptsInfinityAndNan) {
  double d = 0;
  EXPECT_TRUE(ConvertStringToReal("inf", &d));
  EXPECT_EQ(d, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(ConvertStringToReal("-Infinity", &d));
  EXPECT_EQ(d, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(ConvertStringToReal("NaN", &d));
  EXPECT_TRUE(std::isnan(d));
  float f = 0;
  EXPECT_TRUE(ConvertStringToReal("-inf", &f));
  EXPECT_EQ(f, -std::numeric_limits<float>::infinity());
}

TEST(TextUtilsTest, RejectsRealOverflowButNotUnderflow) {
  float f = 1;
  EXPECT_FALSE(ConvertStringToReal("1e50", &f));
  EXPECT_EQ(f, 1.0f);
  double d = 1;
  EXPECT_TRUE(ConvertStringToReal("1e50", &d));
  EXPECT_EQ(d, 1e50);
  EXPECT_FALSE(ConvertStringToReal("1e400", &d));
  EXPECT_TRUE(ConvertStringToReal("1e-400", &d));
  EXPECT_EQ(d, 0.0);
}

TEST(TextUtilsTest, SplitsToIntegers) {
  std::vector<int32> v = {9};
  EXPECT_TRUE(SplitStringToIntegers("1:-2:3", ":", false, &v));
  EXPECT_EQ(v, (std::vector<int32>{1, -2, 3}));
  EXPECT_TRUE(SplitStringToIntegers("", ":", false, &v));
  EXPECT_TRUE(v.empty());
  EXPECT_TRUE(SplitStringToIntegers("1::2", ":", true, &v));
  EXPECT_EQ(v, (std::vector<int32>{1, 2}));
  EXPECT_FALSE(SplitStringToIntegers("1::2", ":", false, &v));
  EXPECT_TRUE(v.empty()) << "cleared on failure";
  EXPECT_FALSE(SplitStringToIntegers("1,x", ",", false, &v));
  std::vector<uint32> u;
  EXPECT_FALSE(SplitStringToIntegers("1,-2", ",", false, &u));
}

TEST(TextUtilsTest, SplitsToFloats) {
  std::vector<float> v;
  EXPECT_TRUE(SplitStringToFloats("0.5 -1 inf", " ", true, &v));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], 0.5f);
  EXPECT_EQ(v[1], -1.0f);
  EXPECT_TRUE(std::isinf(v[2]));
  std::vector<double> d = {1.0};
  EXPECT_FALSE(SplitStringToFloats("1,2x", ",", false, &d));
  EXPECT_TRUE(d.empty());
}

TEST(TextUtilsTest, ThrowsOnNullOutput) {
  test::QuietLog quiet;  // the checks log before throwing; keep the expected errors off stderr
  EXPECT_THROW(SplitStringToVector("a", ",", false, nullptr), Error);
  EXPECT_THROW(Trim(nullptr), Error);
  EXPECT_THROW(ConvertStringToInteger<int32>("1", nullptr), Error);
  EXPECT_THROW(ConvertStringToReal<double>("1", nullptr), Error);
}

// Microsoft's C library prints infinity and NaN as 1.#INF / 1.#QNAN; Kaldi reads them back.
TEST(TextUtilsTest, ConvertStringToRealReadsMicrosoftInfinityAndNan) {
  double d = 0;
  float f = 0;
  EXPECT_TRUE(ConvertStringToReal("1.#INF", &d) && std::isinf(d) && d > 0);
  EXPECT_TRUE(ConvertStringToReal(" -1.#INF  ", &d) && std::isinf(d) && d < 0);
  EXPECT_TRUE(ConvertStringToReal("+1.#INF", &f) && std::isinf(f) && f > 0);
  EXPECT_TRUE(ConvertStringToReal("1.#QNAN", &d) && std::isnan(d));
  EXPECT_TRUE(ConvertStringToReal("-1.#QNAN", &f) && std::isnan(f));
  d = 5;
  for (const char* bad : {"2.#INF", "1.#INFX", "1.#INF_1", "x1.#INF", "1.#IN", "1.#QNAN 2", "1.#"})
    EXPECT_FALSE(ConvertStringToReal(bad, &d)) << bad;
  EXPECT_EQ(d, 5);
}

TEST(TextUtilsTest, IsTokenRejectsByte255LikeKaldi) {
  EXPECT_FALSE(IsToken("\377"));
  EXPECT_FALSE(IsToken("ab\377c"));
  EXPECT_TRUE(IsToken("\231"));          // other high bytes are fine
  EXPECT_TRUE(IsToken("na\xc3\xafve"));  // UTF-8 (never contains byte 255)
}

TEST(TextUtilsTest, StringsApproxEqualComparesOnlyTheCheckedDecimals) {
  EXPECT_TRUE(StringsApproxEqual("abc", "abc"));
  EXPECT_FALSE(StringsApproxEqual("abc", "abd"));
  EXPECT_FALSE(StringsApproxEqual("abc", "abcd"));
  EXPECT_TRUE(StringsApproxEqual("1.234", "1.235", 2));
  EXPECT_FALSE(StringsApproxEqual("1.234", "1.235", 3));
  EXPECT_TRUE(StringsApproxEqual("v 0.5 w 2.999", "v 0.5001 w 2.99", 2));
  EXPECT_TRUE(StringsApproxEqual("1.0 y", "1.0001 y", 3));  // missing digits count as 0
  EXPECT_FALSE(StringsApproxEqual("1.0 y", "1.0001 y", 4));
  EXPECT_FALSE(StringsApproxEqual("12.5", "13.5", 0));  // digits before '.' always count
  EXPECT_TRUE(StringsApproxEqual("12.5", "12.9", 0));
  EXPECT_FALSE(StringsApproxEqual("a.5", "a.6", 0));  // '.' after a non-digit is text
  test::ExpectErrorContaining([] { StringsApproxEqual("1", "1", -1); }, "decimal_places_check");
}

}  // namespace
}  // namespace cuctx
