// tests/cudamatrix/cu-reduce-test.cc: the single-pass reductions behind the value-returning ops
// (Sum, FrobeniusNorm, Max, Min, Trace, VecVec, TraceMatMat, ApplyFloor/ApplyCeiling counts and
// their device-result forms) against the CPU on random data: sizes that take one block and many,
// packed, pitched and unaligned operands, back-to-back calls through one read-back slot, and
// several threads at once.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-value.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

template <typename T>
class CuReduceTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuReduceTest, RealTypes);

// Shapes from one block to the 1024-block cap, with rows narrower and wider than a block.
const test::Shape kShapes[] = {{1, 1},   {3, 5},     {16, 16},     {33, 1},    {1, 4099},
                               {257, 3}, {300, 301}, {1024, 1024}, {2050, 700}};

// Sums of n terms in [lo, hi) with lo >= 0 have no cancellation: relative error <= n * eps.
double SumTol(double per_term, int64_t n) { return per_term * std::max<int64_t>(n, 1); }

TYPED_TEST(CuReduceTest, WholeMatrixReductionsMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : kShapes) {
    for (bool strided : {false, true}) {
      std::ostringstream name;
      name << s << (strided ? " strided" : " packed") << " seed " << test::Seed();
      SCOPED_TRACE(name.str());
      test::GuardedCuMatrix<Real> m(s.rows, s.cols, strided, &rng, 0.0, 1.0);
      const Matrix<Real> h = m.Host();
      const int64_t n = static_cast<int64_t>(s.rows) * s.cols;
      const double tol = SumTol(test::Tol<Real>(), n);
      EXPECT_TRUE(test::ScalarNear(m.view.Sum(), h.Sum(), tol));
      EXPECT_TRUE(test::ScalarNear(m.view.FrobeniusNorm(), h.FrobeniusNorm(), tol));
      EXPECT_EQ(m.view.Max(), h.Max());
      EXPECT_EQ(m.view.Min(), h.Min());
      EXPECT_TRUE(test::ScalarNear(m.view.Trace(false), h.Trace(false), tol));
      CuVector<Real> out(4);
      m.view.Sum(out(0));
      m.view.Max(out(1));
      m.view.Min(out(2));
      m.view.Trace(out(3), false);
      const Vector<Real> got = test::ToHost(out);
      EXPECT_TRUE(test::ScalarNear(got(0), h.Sum(), tol));
      EXPECT_EQ(got(1), h.Max());
      EXPECT_EQ(got(2), h.Min());
      EXPECT_TRUE(test::ScalarNear(got(3), h.Trace(false), tol));
    }
  }
}

TYPED_TEST(CuReduceTest, VectorReductionsMatchCpuAtEveryAlignment) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(1);
  for (int dim : {1, 2, 3, 5, 255, 256, 1000, 4097, 100003, 1000001}) {
    const Vector<Real> hall = test::RandomVector<Real>(dim + 3, &rng, 0.0, 1.0);
    const CuVector<Real> all(hall);
    for (int offset : {0, 1, 2, 3}) {  // sub-vectors starting off a 16-byte boundary
      SCOPED_TRACE(::testing::Message()
                   << "dim " << dim << " offset " << offset << " seed " << test::Seed());
      const CuSubVector<Real> v = all.Range(offset, dim);
      const SubVector<Real> h = hall.Range(offset, dim);
      const SubVector<Real> h2 = hall.Range(3 - offset, dim);
      EXPECT_TRUE(test::ScalarNear(v.Sum(), h.Sum(), SumTol(test::Tol<Real>(), dim)));
      EXPECT_EQ(v.Max(), h.Max());
      EXPECT_EQ(v.Min(), h.Min());
      EXPECT_TRUE(test::ScalarNear(VecVec(v, all.Range(3 - offset, dim)), VecVec(h, h2),
                                   SumTol(test::Tol<Real>(), dim)));
    }
  }
}

TYPED_TEST(CuReduceTest, MaxAndMinFollowTheCpuOnNaN) {
  using Real = TypeParam;
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  Matrix<Real> h(40, 50);
  h.SetRandn();
  h(7, 9) = nan;  // skipped, as the CPU's comparisons skip it
  CuMatrix<Real> m(h);
  EXPECT_EQ(m.Max(), h.Max());
  EXPECT_EQ(m.Min(), h.Min());
  h(0, 0) = nan;  // the CPU starts from element (0, 0), so a NaN there is the result
  m.CopyFromMat(h);
  EXPECT_TRUE(std::isnan(m.Max()));
  EXPECT_TRUE(std::isnan(m.Min()));
  Vector<Real> hv(3000);
  hv.SetRandn();
  hv(1234) = nan;
  CuVector<Real> v(hv);
  EXPECT_EQ(v.Max(), hv.Max());
  EXPECT_EQ(v.Min(), hv.Min());
}

TYPED_TEST(CuReduceTest, TraceMatMatMatchesCpuOnLargeAndPitchedOperands) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(2);
  const test::Shape shapes[] = {{1, 1}, {31, 33}, {64, 200}, {700, 513}, {1500, 1300}};
  for (const test::Shape& s : shapes) {
    for (MatrixTransposeType t : {kNoTrans, kTrans}) {
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << s << " trans " << t << " strided " << strided << " seed " << test::Seed());
        test::GuardedCuMatrix<Real> a(s.rows, s.cols, strided, &rng, 0.0, 1.0);
        test::GuardedCuMatrix<Real> b(t == kNoTrans ? s.cols : s.rows,
                                      t == kNoTrans ? s.rows : s.cols, strided, &rng, 0.0, 1.0);
        const double expected = TraceMatMat(a.Host(), b.Host(), t);
        EXPECT_TRUE(test::ScalarNear(TraceMatMat(a.view, b.view, t), expected,
                                     SumTol(test::Tol<Real>(), int64_t{s.rows} * s.cols)));
      }
    }
  }
}

TYPED_TEST(CuReduceTest, ClampCountsMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(3);
  for (int dim : {1, 100, 5000, 300001}) {
    Vector<Real> h = test::RandomVector<Real>(dim, &rng);
    CuVector<Real> v(h);
    MatrixIndexT got = -1, want = -1;
    v.ApplyFloor(Real(-0.25), &got);
    h.ApplyFloor(Real(-0.25), &want);
    EXPECT_EQ(got, want) << "floor, dim " << dim;
    v.ApplyCeiling(Real(0.5), &got);
    h.ApplyCeiling(Real(0.5), &want);
    EXPECT_EQ(got, want) << "ceiling, dim " << dim;
    EXPECT_TRUE(test::ExpectNear(test::ToHost(v), h, 0)) << dim;
  }
}

// The read-back slot and workspace are reused by every call of a thread: alternate sizes (one
// block, many blocks) and ops so that a block counter left non-zero would show up.
TYPED_TEST(CuReduceTest, BackToBackCallsReuseTheSlot) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(4);
  const Matrix<Real> hbig = test::RandomMatrix<Real>(1200, 900, &rng, 0.0, 1.0);
  const Matrix<Real> hsmall = test::RandomMatrix<Real>(5, 7, &rng, 0.0, 1.0);
  const CuMatrix<Real> big(hbig), small(hsmall);
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(test::ScalarNear(big.Sum(), hbig.Sum(), SumTol(test::Tol<Real>(), 1200 * 900)));
    EXPECT_EQ(small.Max(), hsmall.Max());
    EXPECT_EQ(big.Min(), hbig.Min());
    EXPECT_TRUE(test::ScalarNear(small.Sum(), hsmall.Sum(), SumTol(test::Tol<Real>(), 35)));
  }
}

// Each result must be this call's, never a previous one's or a mix of halves: a changing value
// whose 32-bit halves both change from call to call, read back exactly (Max returns an element).
TYPED_TEST(CuReduceTest, EveryCallReturnsItsOwnResult) {
  using Real = TypeParam;
  Vector<Real> h(3);
  CuVector<Real> v(3);
  int wrong = 0;
  for (int i = 0; i < 2000; ++i) {
    const Real expected = static_cast<Real>(1.0 + i * 1.000000123456789);
    h(0) = static_cast<Real>(-i);
    h(1) = expected;
    h(2) = static_cast<Real>(0.5);
    v.CopyFromVec(h);
    const Real got = v.Max();
    if (got != expected && ++wrong <= 5)
      ADD_FAILURE() << "call " << i << ": Max() gave " << got << ", expected " << expected;
  }
  EXPECT_EQ(wrong, 0);
}

TYPED_TEST(CuReduceTest, ThreadsReduceAtOnce) {
  using Real = TypeParam;
  CuDevice::Instantiate().AllowMultithreading();
  constexpr int kThreads = 4;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      test::Rng rng = test::MakeRng(100 + t);
      const Matrix<Real> h = test::RandomMatrix<Real>(300 + 50 * t, 400, &rng, 0.0, 1.0);
      const CuMatrix<Real> m(h);
      const double tol = SumTol(test::Tol<Real>(), h.NumRows() * h.NumCols());
      for (int i = 0; i < 50; ++i) {
        if (!test::ScalarNear(m.Sum(), h.Sum(), tol)) ++failures[t];
        if (m.Max() != h.Max()) ++failures[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace cuctx
