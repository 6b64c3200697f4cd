// tests/cudamatrix/cu-vector-test.cc: CuVector / CuSubVector compared with the CPU Vector.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-vector.h"

#include "cudamatrix/cu-device.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <gtest/gtest.h>
#include <sstream>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

const std::vector<int> kDims = {0, 1, 17, 257, 4097};

// A device vector with `kPad` guard elements on each side of the view under test.
template <typename Real>
struct GuardedVector {
  static constexpr int kPad = 5;
  GuardedVector(int dim, test::Rng* rng)
      : original(test::RandomVector<Real>(dim + 2 * kPad, rng)),
        storage(original),
        view(storage, kPad, dim) {}
  Vector<Real> ViewOnHost() const { return Vector<Real>(original.Range(kPad, view.Dim())); }
  ::testing::AssertionResult GuardsUnchanged() const {
    const Vector<Real> now = ToHost(storage);
    for (int i = 0; i < now.Dim(); ++i) {
      if (i >= kPad && i < kPad + view.Dim()) continue;
      if (now(i) != original(i))
        return ::testing::AssertionFailure() << "guard " << i << " changed";
    }
    return ::testing::AssertionSuccess();
  }
  Vector<Real> original;
  CuVector<Real> storage;
  CuSubVector<Real> view;
};

template <typename Real>
class CuVectorTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuVectorTest, RealTypes);

TYPED_TEST(CuVectorTest, CopiesRoundTripInBothPrecisions) {
  using Real = TypeParam;
  using Other = typename std::conditional<std::is_same<Real, float>::value, double, float>::type;
  test::Rng rng = test::MakeRng();
  for (int n : kDims) {
    const Vector<Real> h = test::RandomVector<Real>(n, &rng);
    CuVector<Real> v(h);
    EXPECT_TRUE(test::ExpectNear(ToHost(v), h, 0)) << n;
    CuVector<Other> other(v);  // device conversion
    EXPECT_TRUE(test::ExpectNear(ToHost(other), Vector<Other>(h), 0)) << n;
    CuVector<Real> back(n, kUndefined);
    back.CopyFromVec(other);
    EXPECT_TRUE(test::ExpectNear(ToHost(back), Vector<Real>(Vector<Other>(h)), 0)) << n;
    CuVector<Other> from_host(h);  // host source of the other precision
    EXPECT_TRUE(test::ExpectNear(ToHost(from_host), Vector<Other>(h), 0)) << n;
    Vector<Other> out(n);
    v.CopyToVec(&out);
    EXPECT_TRUE(test::ExpectNear(out, Vector<Other>(h), 0)) << n;
    CuVector<Real> copy(v), assigned;
    assigned = v;
    EXPECT_TRUE(test::ExpectNear(ToHost(copy), h, 0)) << n;
    EXPECT_TRUE(test::ExpectNear(ToHost(assigned), h, 0)) << n;
  }
}

TYPED_TEST(CuVectorTest, FillsAndElementwiseOpsMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kDims) {
    SCOPED_TRACE(n);
    GuardedVector<Real> g(n, &rng);
    Vector<Real> expected = g.ViewOnHost();
    const Vector<Real> other = test::RandomVector<Real>(n, &rng, 0.5, 1.5);
    CuVector<Real> cu_other(other);
    expected.Add(0.25);
    g.view.Add(0.25);
    expected.Scale(-1.5);
    g.view.Scale(-1.5);
    expected.Scale(0.5);
    expected.AddVec(2.0, other);
    g.view.AddVec(2.0, cu_other, 0.5);
    expected.MulElements(other);
    g.view.MulElements(cu_other);
    EXPECT_TRUE(test::ExpectNear(ToHost(g.view), expected, test::Tol<Real>()));
    g.view.AddVec(1.0, g.view, 2.0);  // aliasing is allowed: this = 3 * this
    expected.Scale(3.0);
    EXPECT_TRUE(test::ExpectNear(ToHost(g.view), expected, test::Tol<Real>()));
    g.view.Set(7.0);
    expected.Set(7.0);
    EXPECT_TRUE(test::ExpectNear(ToHost(g.view), expected, 0));
    g.view.SetZero();
    expected.SetZero();
    EXPECT_TRUE(test::ExpectNear(ToHost(g.view), expected, 0));
    EXPECT_TRUE(g.GuardsUnchanged());
  }
}

TYPED_TEST(CuVectorTest, RangeAndElementAccess) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Vector<Real> h = test::RandomVector<Real>(20, &rng);
  CuVector<Real> v(h);
  EXPECT_EQ(static_cast<Real>(v(3)), h(3));
  v(4) = 2.5;
  const CuVector<Real>& cv = v;
  EXPECT_EQ(cv(4), 2.5);
  CuSubVector<Real> r = v.Range(10, 5);
  EXPECT_EQ(r.Dim(), 5);
  EXPECT_EQ(static_cast<Real>(r(0)), h(10));
  test::ExpectErrorContaining([&] { v(20); }, "index 20");
  test::ExpectErrorContaining([&] { cv(-1); }, "index -1");
  test::ExpectErrorContaining([&] { v.Range(18, 3); }, "[18, 21)");
  CuVector<Real> w(3);
  test::ExpectErrorContaining([&] { w.AddVec(1.0, v); }, "3 vs 20");
  test::ExpectErrorContaining([&] { w.CopyFromVec(h); }, "3 vs 20");
}

TYPED_TEST(CuVectorTest, ResizeSwapReadWrite) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Vector<Real> h = test::RandomVector<Real>(9, &rng);
  CuVector<Real> v(h);
  v.Resize(12, kCopyData);
  Vector<Real> expected(h);
  expected.Resize(12, kCopyData);
  EXPECT_TRUE(test::ExpectNear(ToHost(v), expected, 0));
  v.Resize(4);
  EXPECT_TRUE(test::ExpectNear(ToHost(v), Vector<Real>(4), 0));
  Vector<Real> host(h);
  v.Swap(&host);
  EXPECT_EQ(host.Dim(), 4);
  EXPECT_TRUE(test::ExpectNear(ToHost(v), h, 0));
  CuVector<Real> other(2);
  v.Swap(&other);
  EXPECT_EQ(v.Dim(), 2);
  EXPECT_TRUE(test::ExpectNear(ToHost(other), h, 0));
  for (bool binary : {true, false}) {
    std::ostringstream want, got;
    h.Write(want, binary);
    other.Write(got, binary);
    EXPECT_EQ(got.str(), want.str());
    std::istringstream is(got.str());
    CuVector<Real> read;
    read.Read(is, binary);
    // The text format keeps about 6 significant digits; binary is exact.
    EXPECT_TRUE(test::ExpectNear(ToHost(read), h, binary ? 0.0 : 1e-5));
  }
  std::ostringstream printed, want;
  printed << other;
  want << h;
  EXPECT_EQ(printed.str(), want.str());
  EXPECT_TRUE(ApproxEqual(other, CuVector<Real>(h)));
  test::ExpectErrorContaining([&] { v.Resize(-1); }, "-1");
}

}  // namespace
}  // namespace cuctx
