// tests/base/utils-test.cc: the CUCTX_ forms of Kaldi's kaldi-utils.h macros and its two
// functions (compile-time checks are exercised by compiling this file).
// SPDX-License-Identifier: Apache-2.0
#include "base/utils.h"

#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <type_traits>

namespace cuctx {
namespace {

class NoCopy {
 public:
  NoCopy() = default;

 private:
  CUCTX_DISALLOW_COPY_AND_ASSIGN(NoCopy);
};

CUCTX_COMPILE_TIME_ASSERT(sizeof(int32_t) == 4);  // also valid at namespace scope

template <typename I>
I Twice(I x) {
  CUCTX_ASSERT_IS_INTEGER_TYPE(I);
  return x * 2;
}

template <typename F>
F Half(F x) {
  CUCTX_ASSERT_IS_FLOATING_TYPE(F);
  return x / 2;
}

TEST(UtilsTest, CopyControlAndTypeChecks) {
  static_assert(!std::is_copy_constructible<NoCopy>::value, "copy constructor deleted");
  static_assert(!std::is_copy_assignable<NoCopy>::value, "copy assignment deleted");
  CUCTX_COMPILE_TIME_ASSERT(sizeof(char) == 1);
  EXPECT_EQ(Twice<int16_t>(4), 8);
  EXPECT_EQ(Twice<char>(3), 6);
  EXPECT_DOUBLE_EQ(Half(3.0), 1.5);
}

TEST(UtilsTest, SwapMacrosReverseBytes) {
  uint32_t x = 0x11223344;
  CUCTX_SWAP4(x);
  EXPECT_EQ(x, 0x44332211u);
  uint16_t y = 0xABCD;
  CUCTX_SWAP2(y);
  EXPECT_EQ(y, 0xCDABu);
  uint64_t z = 0x0102030405060708ull;
  CUCTX_SWAP8(z);
  EXPECT_EQ(z, 0x0807060504030201ull);
  double d = 1.5, e = d;
  CUCTX_SWAP8(e);
  CUCTX_SWAP8(e);
  EXPECT_EQ(e, d);
}

TEST(UtilsTest, MemalignGivesAlignedMemory) {
  void* orig = nullptr;
  void* p = CUCTX_MEMALIGN(64, 1000, &orig);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  std::memset(p, 0, 1000);
  CUCTX_MEMALIGN_FREE(orig);
}

TEST(UtilsTest, StringMacrosCallTheCFunctions) {
  EXPECT_EQ(CUCTX_STRCASECMP("AbC", "aBc"), 0);
  EXPECT_LT(CUCTX_STRCASECMP("abc", "abd"), 0);
  const char* s = "-42x";
  char* end = nullptr;
  EXPECT_EQ(CUCTX_STRTOLL(s, &end), -42);
  EXPECT_EQ(*end, 'x');
  EXPECT_DOUBLE_EQ(CUCTX_STRTOD("2.5e1", nullptr), 25.0);
}

TEST(UtilsTest, CharToStringAndEndianness) {
  EXPECT_EQ(CharToString('a'), "'a'");
  EXPECT_EQ(CharToString('\n'), "[character 10]");
  EXPECT_EQ(CharToString(static_cast<char>(-1)), "[character -1]");
  uint32_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  EXPECT_EQ(MachineIsLittleEndian(), first == 1 ? 1 : 0);
}

}  // namespace
}  // namespace cuctx
