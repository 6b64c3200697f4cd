// tests/base/config-line-test.cc: ConfigLine parsing, typed values, unused-value bookkeeping,
// ReadConfigLines comment stripping and ParseConfigLines errors.
// SPDX-License-Identifier: Apache-2.0
#include "base/config-line.h"

#include "tests/testing.h"

#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

namespace cuctx {
namespace {

TEST(ConfigLineTest, SplitsFirstTokenAndKeyValuePairs) {
  ConfigLine c;
  ASSERT_TRUE(c.ParseLine("  component name=a1 input=Append(x, Offset(x, -1)) dim=3  "));
  EXPECT_EQ(c.FirstToken(), "component");
  std::string s;
  EXPECT_TRUE(c.GetValue("input", &s));
  EXPECT_EQ(s, "Append(x, Offset(x, -1))");  // spaces allowed: the value runs to the next key
  int32 dim = 0;
  EXPECT_TRUE(c.GetValue("dim", &dim));
  EXPECT_EQ(dim, 3);
  EXPECT_TRUE(c.HasUnusedValues());
  EXPECT_EQ(c.UnusedValues(), "name=a1");
  EXPECT_TRUE(c.GetValue("name", &s));
  EXPECT_FALSE(c.HasUnusedValues());
  EXPECT_EQ(c.UnusedValues(), "");
}

TEST(ConfigLineTest, QuotedValuesMayHoldSpacesAndEquals) {
  ConfigLine c;
  ASSERT_TRUE(c.ParseLine("x a='p q=r' b=\"s 't' u\" c="));
  std::string s = "stale";
  EXPECT_TRUE(c.GetValue("a", &s));
  EXPECT_EQ(s, "p q=r");
  EXPECT_TRUE(c.GetValue("b", &s));
  EXPECT_EQ(s, "s 't' u");
  EXPECT_TRUE(c.GetValue("c", &s));
  EXPECT_EQ(s, "");
  EXPECT_FALSE(c.ParseLine("x a='unterminated"));
}

TEST(ConfigLineTest, LineMayStartWithAPair) {
  ConfigLine c;
  ASSERT_TRUE(c.ParseLine("dim=4 name=x"));
  EXPECT_EQ(c.FirstToken(), "");
  EXPECT_EQ(c.UnusedValues(), "dim=4 name=x");
}

TEST(ConfigLineTest, RejectsMalformedLines) {
  ConfigLine c;
  for (const char* bad : {"", "   ", "a =b", "a b= c = d", "t =c", "t x=1 =2", "t 0a=1", "t -a=1",
                          "t a'=1", "1abc x=1", "t x=1 y"}) {
    if (std::string(bad) == "t x=1 y") continue;  // "y" is part of x's value, not an error
    EXPECT_FALSE(c.ParseLine(bad)) << "'" << bad << "'";
  }
  ASSERT_TRUE(c.ParseLine("t x=1 y"));
  std::string s;
  EXPECT_TRUE(c.GetValue("x", &s));
  EXPECT_EQ(s, "1 y");
}

TEST(ConfigLineTest, TypedValuesFailWithoutConsumingOrChangingTheOutput) {
  ConfigLine c;
  ASSERT_TRUE(c.ParseLine("t f=0.25 i=-7 v=1:2,3 b=true g=green"));
  BaseFloat f = 0;
  EXPECT_TRUE(c.GetValue("f", &f));
  EXPECT_FLOAT_EQ(f, 0.25f);
  int32 i = 0;
  EXPECT_FALSE(c.GetValue("f", &i));
  EXPECT_TRUE(c.GetValue("i", &i));
  EXPECT_EQ(i, -7);
  std::vector<int32> v;
  EXPECT_TRUE(c.GetValue("v", &v));
  EXPECT_EQ(v, (std::vector<int32>{1, 2, 3}));
  bool b = false;
  EXPECT_TRUE(c.GetValue("b", &b));
  EXPECT_TRUE(b);
  EXPECT_FALSE(c.GetValue("g", &b));  // "green" is not a bool
  EXPECT_TRUE(b);
  EXPECT_FALSE(c.GetValue("missing", &i));
  EXPECT_EQ(c.UnusedValues(), "g=green");
}

TEST(ConfigLineTest, ReadConfigLinesStripsCommentsAndBlankLines) {
  std::istringstream is("# header\n  a x=1  # note\n\n   \nb y='2'#c\n  c\n");
  std::vector<std::string> lines{"kept"};
  ReadConfigLines(is, &lines);
  EXPECT_EQ(lines, (std::vector<std::string>{"kept", "a x=1", "b y='2'", "c"}));
}

TEST(ConfigLineTest, ParseConfigLinesNamesTheBadLine) {
  std::vector<ConfigLine> parsed;
  ParseConfigLines({"a x=1", "b"}, &parsed);
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[1].FirstToken(), "b");
  test::ExpectErrorContaining(
      [&] {
        ParseConfigLines({"a x=1", "b =2"}, &parsed);
      },
      "config line 2: 'b =2'");
}

TEST(ConfigLineTest, IsValidNameFollowsNnet3Names) {
  for (const char* good : {"a", "_x", "tdnn1.affine", "lstm-2_c", "Z9"})
    EXPECT_TRUE(IsValidName(good)) << good;
  for (const char* bad : {"", "1a", "-a", ".a", "a b", "a=b", "a'"})
    EXPECT_FALSE(IsValidName(bad)) << bad;
}

}  // namespace
}  // namespace cuctx
