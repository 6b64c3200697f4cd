// tests/cudamatrix/cu-array-test.cc: CuArray / CuSubArray against std::vector.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-array.h"

#include "base/io-funcs.h"
#include "cudamatrix/cu-device.h"
#include "tests/testing.h"

#include <algorithm>
#include <cstdint>
#include <gtest/gtest.h>
#include <sstream>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

const std::vector<int> kDims = {0, 1, 17, 257, 4097};

template <typename T>
T MakeValue(test::Rng* rng);
template <>
int32 MakeValue<int32>(test::Rng* rng) {
  return static_cast<int32>(rng->Int(-1000, 1000));
}
template <>
float MakeValue<float>(test::Rng* rng) {
  return static_cast<float>(rng->Uniform(-1, 1));
}
template <>
double MakeValue<double>(test::Rng* rng) {
  return rng->Uniform(-1, 1);
}
template <>
Int32Pair MakeValue<Int32Pair>(test::Rng* rng) {
  return Int32Pair{static_cast<int32>(rng->Int(-9, 9)), static_cast<int32>(rng->Int(-9, 9))};
}

// Kaldi code also stores std::pair<int32, int32> in CuArrays.
template <>
std::pair<int32, int32> MakeValue<std::pair<int32, int32>>(test::Rng* rng) {
  return {static_cast<int32>(rng->Int(-9, 9)), static_cast<int32>(rng->Int(-9, 9))};
}

template <typename T>
bool Same(const T& a, const T& b) {
  return a == b;
}
template <>
bool Same<Int32Pair>(const Int32Pair& a, const Int32Pair& b) {
  return a.first == b.first && a.second == b.second;
}

template <typename T>
::testing::AssertionResult SameVec(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < a.size(); ++i)
    if (!Same(a[i], b[i])) return ::testing::AssertionFailure() << "element " << i << " differs";
  return ::testing::AssertionSuccess();
}

template <typename T>
std::vector<T> RandomVec(int n, test::Rng* rng) {
  std::vector<T> v(n);
  for (T& x : v) x = MakeValue<T>(rng);
  return v;
}

template <typename T>
std::vector<T> ToVec(const CuArrayBase<T>& a) {
  std::vector<T> v;
  a.CopyToVec(&v);
  return v;
}

template <typename T>
class CuArrayTest : public ::testing::Test {};
using ArrayTypes = ::testing::Types<int32, float, double, Int32Pair, std::pair<int32, int32>>;
TYPED_TEST_SUITE(CuArrayTest, ArrayTypes);

TYPED_TEST(CuArrayTest, CopiesRoundTrip) {
  using T = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kDims) {
    const std::vector<T> h = RandomVec<T>(n, &rng);
    CuArray<T> a(h);
    EXPECT_EQ(a.Dim(), n);
    EXPECT_TRUE(SameVec(ToVec(a), h)) << n;
    std::vector<T> raw(n);
    a.CopyToHost(raw.data());
    EXPECT_TRUE(SameVec(raw, h)) << n;
    CuArray<T> b(n, kUndefined);
    b.CopyFromArray(a);
    EXPECT_TRUE(SameVec(ToVec(b), h)) << n;
    CuArray<T> c(b);
    EXPECT_TRUE(SameVec(ToVec(c), h)) << n;
    c = RandomVec<T>(3, &rng);
    EXPECT_EQ(c.Dim(), 3);
  }
}

TYPED_TEST(CuArrayTest, SetAndSetZeroFillEveryElement) {
  using T = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kDims) {
    CuArray<T> a(RandomVec<T>(n, &rng));
    const T v = MakeValue<T>(&rng);
    a.Set(v);
    EXPECT_TRUE(SameVec(ToVec(a), std::vector<T>(n, v))) << n;
    a.SetZero();
    EXPECT_TRUE(SameVec(ToVec(a), std::vector<T>(n, T{}))) << n;
  }
}

TYPED_TEST(CuArrayTest, SubArrayWritesOnlyItsRange) {
  using T = TypeParam;
  test::Rng rng = test::MakeRng();
  std::vector<T> h = RandomVec<T>(40, &rng);
  CuArray<T> a(h);
  CuSubArray<T> sub(a, 5, 20);
  EXPECT_EQ(sub.Dim(), 20);
  const T v = MakeValue<T>(&rng);
  sub.Set(v);
  for (int i = 5; i < 25; ++i) h[i] = v;
  EXPECT_TRUE(SameVec(ToVec(a), h));
  test::ExpectErrorContaining([&] { CuSubArray<T> bad(a, 30, 11); }, "[30, 41)");
  test::ExpectErrorContaining([&] { CuSubArray<T> bad(a, -1, 2); }, "40");
}

TYPED_TEST(CuArrayTest, ResizeAndSwap) {
  using T = TypeParam;
  test::Rng rng = test::MakeRng();
  const std::vector<T> h = RandomVec<T>(10, &rng);
  CuArray<T> a(h);
  a.Resize(15, kCopyData);
  std::vector<T> expected = h;
  expected.resize(15, T{});
  EXPECT_TRUE(SameVec(ToVec(a), expected));
  a.Resize(4, kCopyData);
  expected.resize(4);
  EXPECT_TRUE(SameVec(ToVec(a), expected));
  a.Resize(6);
  EXPECT_TRUE(SameVec(ToVec(a), std::vector<T>(6, T{})));
  CuArray<T> b(h);
  a.Swap(&b);
  EXPECT_EQ(a.Dim(), 10);
  EXPECT_EQ(b.Dim(), 6);
  EXPECT_TRUE(SameVec(ToVec(a), h));
  test::ExpectErrorContaining([&] { a.Resize(-2); }, "-2");
  // The CuArrayBase forms require equal sizes; CuArray's own forms resize (as in Kaldi; see
  // cu-parity-test.cc).
  CuArrayBase<T>& base = a;
  test::ExpectErrorContaining([&] { base.CopyFromVec(std::vector<T>(3)); }, "3");
  test::ExpectErrorContaining([&] { base.CopyFromArray(b); }, "6");
  a.CopyFromArray(b);
  EXPECT_EQ(a.Dim(), 6);
}

TEST(CuArrayInt32Test, MinMaxMatchHost) {
  test::Rng rng = test::MakeRng();
  for (int n : {1, 17, 4097}) {
    const std::vector<int32> h = RandomVec<int32>(n, &rng);
    CuArray<int32> a(h);
    EXPECT_EQ(a.Min(), *std::min_element(h.begin(), h.end()));
    EXPECT_EQ(a.Max(), *std::max_element(h.begin(), h.end()));
  }
  CuArray<int32> empty;
  test::ExpectErrorContaining([&] { empty.Min(); }, "empty");
}

TEST(CuArrayInt32Test, ReadWriteUseIntegerVectorFormat) {
  test::Rng rng = test::MakeRng();
  const std::vector<int32> h = RandomVec<int32>(17, &rng);
  for (bool binary : {true, false}) {
    std::ostringstream expected, actual;
    WriteIntegerVector(expected, binary, h);
    CuArray<int32> a(h);
    a.Write(actual, binary);
    EXPECT_EQ(actual.str(), expected.str());
    std::istringstream is(actual.str());
    CuArray<int32> b;
    b.Read(is, binary);
    EXPECT_TRUE(SameVec(ToVec(b), h));
  }
  CuArray<float> f(3);
  std::ostringstream os;
  test::ExpectErrorContaining([&] { f.Write(os, true); }, "int32");
}

}  // namespace
}  // namespace cuctx
