// tests/base/kaldi-names-test.cc: code that includes Kaldi's header names and relies on what a
// Kaldi build provides (global int32, std headers from kaldi-common.h, unordered_map by its short
// name) compiles and behaves unchanged after the namespace rename.
// SPDX-License-Identifier: Apache-2.0
#include "base/kaldi-common.h"
#include "base/kaldi-error.h"
#include "base/kaldi-math.h"
#include "base/kaldi-types.h"
#include "matrix/kaldi-matrix.h"
#include "matrix/kaldi-vector.h"

#include "util/common-utils.h"
#include "util/parse-options.h"
#include "util/text-utils.h"
#include <gtest/gtest.h>
#include <type_traits>

// As in a Kaldi program's main(): the integer names are global.
static int32 GlobalSquare(int32 x) { return x * x; }

namespace cuctx {
namespace {

TEST(KaldiNamesTest, GlobalAndNamespaceIntegerNamesAreTheSameTypes) {
  static_assert(std::is_same<::int32, cuctx::int32>::value, "int32");
  static_assert(std::is_same<::uint64, cuctx::uint64>::value, "uint64");
  static_assert(sizeof(int16) == 2 && sizeof(int64) == 8, "widths");
  EXPECT_EQ(GlobalSquare(7), 49);
}

TEST(KaldiNamesTest, KaldiHeaderNamesReachTheCuctxClasses) {
  unordered_map<int32, std::string> names;  // short name, as Kaldi code writes it
  names[3] = "three";
  Matrix<BaseFloat> m(2, 3);
  m.Set(1.5);
  Vector<BaseFloat> v(3);
  v.AddRowSumMat(1.0, m, 0.0);
  EXPECT_FLOAT_EQ(v.Sum(), 9.0f);
  EXPECT_EQ(names.at(3), "three");
  ParseOptions po("usage");
  int32 n = 0;
  po.Register("n", &n, "a number");
  const char* argv[] = {"prog", "--n=5"};
  po.Read(2, argv);
  EXPECT_EQ(n, 5);
  EXPECT_THROW(CUCTX_ERR << "ported error", Error);
}

}  // namespace
}  // namespace cuctx
