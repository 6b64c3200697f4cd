// tests/util/simple-options-test.cc: SimpleOptions: registration, typed set/get with the int32 <->
// uint32 and float <-> double conversions, refusals, and the option list.
// SPDX-License-Identifier: Apache-2.0
#include "util/simple-options.h"

#include "tests/testing.h"

#include <gtest/gtest.h>

namespace cuctx {
namespace {

TEST(SimpleOptionsTest, SetGetAndConvert) {
  std::string str = "default";
  int32 num = 1;
  uint32 unum = 2;
  float real = 0.1f;
  double dreal = 0.5;
  bool flag = false;
  SimpleOptions so;
  so.Register("num", &num, "a number");
  so.Register("unum", &unum, "an unsigned number");
  so.Register("str", &str, "a string");
  so.Register("flag", &flag, "a flag");
  so.Register("real", &real, "a float");
  so.Register("dreal", &dreal, "a double");

  EXPECT_TRUE(so.SetOption("num", 42));
  EXPECT_TRUE(so.SetOption("unum", 44));  // int32 -> uint32
  EXPECT_FALSE(so.SetOption("unum", -1));
  EXPECT_TRUE(so.SetOption("str", "foo"));
  EXPECT_TRUE(so.SetOption("flag", true));
  EXPECT_TRUE(so.SetOption("real", 0.3));     // double -> float
  EXPECT_TRUE(so.SetOption("dreal", 0.25f));  // float -> double
  EXPECT_FALSE(so.SetOption("num", 1.5));
  EXPECT_FALSE(so.SetOption("flag", 1));
  EXPECT_FALSE(so.SetOption("nope", 1));
  EXPECT_EQ(num, 42);
  EXPECT_EQ(unum, 44u);
  EXPECT_EQ(str, "foo");
  EXPECT_TRUE(flag);
  EXPECT_FLOAT_EQ(real, 0.3f);
  EXPECT_EQ(dreal, 0.25);

  int32 n = 0;
  EXPECT_TRUE(so.GetOption("num", &n));
  EXPECT_EQ(n, 42);
  float f = 0;
  EXPECT_FALSE(so.GetOption("dreal", &f));  // exact type only
  SimpleOptions::OptionType type;
  EXPECT_TRUE(so.GetOptionType("unum", &type));
  EXPECT_EQ(type, SimpleOptions::kUint32);
  EXPECT_FALSE(so.GetOptionType("xxxx", &type));
  auto infos = so.GetOptionInfos();
  ASSERT_EQ(infos.size(), 6u);
  EXPECT_EQ(infos[0].first, "num");
  EXPECT_EQ(infos[0].second.doc, "a number");
  EXPECT_EQ(infos[5].second.type, SimpleOptions::kDouble);
}

}  // namespace
}  // namespace cuctx
