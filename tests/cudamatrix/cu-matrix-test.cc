// tests/cudamatrix/cu-matrix-test.cc: CuMatrix / CuSubMatrix compared with the CPU Matrix.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-matrix.h"

#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix-lib.h"
#include "matrix/matrix.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <sstream>
#include <type_traits>

namespace cuctx {
namespace {

using test::ToHost;

template <typename Real>
using GuardedMatrix = test::GuardedCuMatrix<Real>;

template <typename Real>
class CuMatrixTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMatrixTest, RealTypes);

template <typename Real>
using OtherReal = typename std::conditional<std::is_same<Real, float>::value, double, float>::type;

// Runs cu_op on a guarded device matrix and cpu_op on its host copy, over every edge shape,
// packed and strided, and compares. `operand` is a second random matrix of the same shape.
template <typename Real, typename CuOp, typename CpuOp>
void CheckOp(CuOp cu_op, CpuOp cpu_op, double tol, double lo = -1, double hi = 1) {
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    GuardedMatrix<Real> g(s.rows, s.cols, strided, &rng);
    GuardedMatrix<Real> operand(s.rows, s.cols, !strided, &rng, lo, hi);
    Matrix<Real> expected = g.Host();
    cpu_op(&expected, operand.Host());
    cu_op(&g.view, operand.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(g.view), expected, tol));
    EXPECT_TRUE(g.BorderUnchanged());
    EXPECT_TRUE(operand.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixTest, ConstructsZeroedWithPaddedStride) {
  using Real = TypeParam;
  for (const test::Shape& s : test::kEdgeShapes) {
    CuMatrix<Real> m(s.rows, s.cols);
    EXPECT_EQ(m.NumRows(), s.rows) << s;
    EXPECT_EQ(m.NumCols(), s.cols) << s;
    EXPECT_EQ(m.Dim().rows, s.rows) << s;
    EXPECT_EQ(m.SizeInBytes(), static_cast<size_t>(m.NumRows()) * m.Stride() * sizeof(Real));
    EXPECT_TRUE(test::SameElements(ToHost(m), Matrix<Real>(s.rows, s.cols))) << s;
    if (s.rows == 0 || s.cols == 0) continue;
    EXPECT_GE(m.Stride(), m.NumCols()) << s;
    EXPECT_EQ(m.Stride() * sizeof(Real) % (test::GpuEnabled() ? 256 : 16), 0u) << s;
    CuMatrix<Real> packed(s.rows, s.cols, kSetZero, kStrideEqualNumCols);
    EXPECT_EQ(packed.Stride(), s.cols) << s;
    EXPECT_TRUE(test::SameElements(ToHost(packed), Matrix<Real>(s.rows, s.cols))) << s;
  }
  test::ExpectErrorContaining([] { CuMatrix<Real> bad(-1, 3); }, "-1x3");
}

TYPED_TEST(CuMatrixTest, CopyFromHostRoundTripsExactly) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> src(s.rows, s.cols, strided, &rng);
    CuMatrix<Real> m(src.View());
    EXPECT_TRUE(test::SameElements(ToHost(m), src.View()));
    GuardedMatrix<Real> g(s.rows, s.cols, strided, &rng);
    g.view.CopyFromMat(src.View());
    EXPECT_TRUE(test::SameElements(ToHost(g.view), src.View()));
    EXPECT_TRUE(g.BorderUnchanged());
    CuMatrix<Real> copy(g.view), assigned;
    assigned = g.view;
    EXPECT_TRUE(test::SameElements(ToHost(copy), src.View()));
    EXPECT_TRUE(test::SameElements(ToHost(assigned), src.View()));
    CuMatrix<Real> from_host;
    from_host = src.View();
    EXPECT_TRUE(test::SameElements(ToHost(from_host), src.View()));
  });
}

TYPED_TEST(CuMatrixTest, TransposedCopiesMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> src(s.rows, s.cols, strided, &rng);
    const Matrix<Real> expected(src.View(), kTrans);
    CuMatrix<Real> cu_src(src.View());
    CuMatrix<Real> from_cu(cu_src, kTrans);  // device tiled transpose
    EXPECT_TRUE(test::SameElements(ToHost(from_cu), expected));
    CuMatrix<Real> from_host(src.View(), kTrans);  // host source, transposed on the device
    EXPECT_TRUE(test::SameElements(ToHost(from_host), expected));
    GuardedMatrix<Real> g(s.cols, s.rows, !strided, &rng);
    g.view.CopyFromMat(cu_src, kTrans);
    EXPECT_TRUE(test::SameElements(ToHost(g.view), expected));
    EXPECT_TRUE(g.BorderUnchanged());
    Matrix<Real> out(s.cols, s.rows);
    cu_src.CopyToMat(&out, kTrans);
    EXPECT_TRUE(test::SameElements(out, expected));
    cu_src.Transpose();
    EXPECT_TRUE(test::SameElements(ToHost(cu_src), expected));
  });
}

// Past 65535 tiles of 32 in one dimension the transposing kernel's grid is capped and its blocks
// loop over the tiles (the kernel with one tile per block serves every smaller matrix).
TYPED_TEST(CuMatrixTest, TransposeBeyondOneGridMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const MatrixIndexT kLong = 65535 * 32 + 45;
  for (const auto& shape : {std::make_pair(3, kLong), std::make_pair(kLong, 2)}) {
    test::TestMatrix<Real> src(shape.first, shape.second, false, &rng);
    const Matrix<Real> expected(src.View(), kTrans);
    CuMatrix<Real> cu_src(src.View());
    CuMatrix<Real> t(cu_src, kTrans);
    EXPECT_TRUE(test::SameElements(ToHost(t), expected)) << shape.first << " x " << shape.second;
    CuMatrix<Real> acc(shape.second, shape.first);
    acc.AddMat(2.0, cu_src, kTrans);
    Matrix<Real> twice(expected);
    twice.Scale(2.0);
    EXPECT_TRUE(test::ExpectNear(ToHost(acc), twice, test::Tol<Real>()));
  }
}

TYPED_TEST(CuMatrixTest, OtherPrecisionCopiesMatchCpu) {
  using Real = TypeParam;
  using Other = OtherReal<Real>;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> src(s.rows, s.cols, strided, &rng);
    for (MatrixTransposeType trans : {kNoTrans, kTrans}) {
      const Matrix<Other> expected(src.View(), trans);
      CuMatrix<Real> cu_src(src.View());
      CuMatrix<Other> from_cu(cu_src, trans);
      EXPECT_TRUE(test::SameElements(ToHost(from_cu), expected));
      CuMatrix<Other> from_host(src.View(), trans);
      EXPECT_TRUE(test::SameElements(ToHost(from_host), expected));
      Matrix<Other> out(expected.NumRows(), expected.NumCols());
      cu_src.CopyToMat(&out, trans);
      EXPECT_TRUE(test::SameElements(out, expected));
    }
  });
}

TYPED_TEST(CuMatrixTest, FillsMatchCpu) {
  using Real = TypeParam;
  CheckOp<Real>([](CuMatrixBase<Real>* m, const CuMatrixBase<Real>&) { m->SetZero(); },
                [](MatrixBase<Real>* m, const MatrixBase<Real>&) { m->SetZero(); }, 0);
  CheckOp<Real>([](CuMatrixBase<Real>* m, const CuMatrixBase<Real>&) { m->Set(-2.5); },
                [](MatrixBase<Real>* m, const MatrixBase<Real>&) { m->Set(-2.5); }, 0);
  CheckOp<Real>([](CuMatrixBase<Real>* m, const CuMatrixBase<Real>&) { m->Add(0.75); },
                [](MatrixBase<Real>* m, const MatrixBase<Real>&) { m->Add(0.75); },
                test::Tol<Real>());
  CheckOp<Real>([](CuMatrixBase<Real>* m, const CuMatrixBase<Real>&) { m->Scale(-3.0); },
                [](MatrixBase<Real>* m, const MatrixBase<Real>&) { m->Scale(-3.0); },
                test::Tol<Real>());
}

TYPED_TEST(CuMatrixTest, ElementwiseBinaryOpsMatchCpu) {
  using Real = TypeParam;
  CheckOp<Real>([](CuMatrixBase<Real>* m, const CuMatrixBase<Real>& a) { m->AddMat(-0.5, a); },
                [](MatrixBase<Real>* m, const MatrixBase<Real>& a) { m->AddMat(-0.5, a); },
                test::Tol<Real>());
  CheckOp<Real>([](CuMatrixBase<Real>* m, const CuMatrixBase<Real>& a) { m->MulElements(a); },
                [](MatrixBase<Real>* m, const MatrixBase<Real>& a) { m->MulElements(a); },
                test::Tol<Real>());
  CheckOp<Real>([](CuMatrixBase<Real>* m, const CuMatrixBase<Real>& a) { m->DivElements(a); },
                [](MatrixBase<Real>* m, const MatrixBase<Real>& a) { m->DivElements(a); },
                test::Tol<Real>(), 0.5, 1.5);
  // this += alpha * this is allowed (no transposition).
  CheckOp<Real>([](CuMatrixBase<Real>* m, const CuMatrixBase<Real>&) { m->AddMat(2.0, *m); },
                [](MatrixBase<Real>* m, const MatrixBase<Real>&) { m->Scale(3.0); },
                test::Tol<Real>());
}

TYPED_TEST(CuMatrixTest, TransposedAddMatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    GuardedMatrix<Real> g(s.rows, s.cols, strided, &rng);
    GuardedMatrix<Real> a(s.cols, s.rows, !strided, &rng);
    Matrix<Real> expected = g.Host();
    expected.AddMat(1.5, a.Host(), kTrans);
    g.view.AddMat(1.5, a.view, kTrans);
    EXPECT_TRUE(test::ExpectNear(ToHost(g.view), expected, test::Tol<Real>()));
    EXPECT_TRUE(g.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixTest, SumAndFrobeniusNormMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    GuardedMatrix<Real> g(s.rows, s.cols, strided, &rng);
    const Matrix<Real> h = g.Host();
    double abs_sum = 0;
    for (int r = 0; r < h.NumRows(); ++r)
      for (int c = 0; c < h.NumCols(); ++c) abs_sum += std::abs(h(r, c));
    // Summation order differs from the CPU's, so the bound is relative to sum |x|, not to the sum.
    EXPECT_LE(std::abs(g.view.Sum() - h.Sum()), 10 * test::Tol<Real>() * (abs_sum + 1e-30));
    if (h.NumRows() * h.NumCols() == 0) {
      EXPECT_EQ(g.view.Sum(), 0);
      EXPECT_EQ(g.view.FrobeniusNorm(), 0);
    } else {
      EXPECT_TRUE(
          test::ScalarNear(g.view.FrobeniusNorm(), h.FrobeniusNorm(), 10 * test::Tol<Real>()));
    }
  });
  CuMatrix<Real> big(300, 200);
  big.Set(1.0);
  EXPECT_EQ(big.Sum(), 60000);
  EXPECT_NEAR(big.FrobeniusNorm(), std::sqrt(60000.0), 1e-2);
}

TYPED_TEST(CuMatrixTest, ApproxEqualAndAssertEqual) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  CuMatrix<Real> a(test::RandomMatrix<Real>(17, 33, &rng)), b(a);
  EXPECT_TRUE(ApproxEqual(a, b));
  EXPECT_TRUE(SameDim(a, b));
  // Debug-stride mode gives equal shapes different pitches on purpose.
  EXPECT_EQ(SameDimAndStride(a, b), a.Stride() == b.Stride());
  b(3, 4) = static_cast<Real>(b(3, 4)) + 100;
  EXPECT_FALSE(a.ApproxEqual(b));
  EXPECT_TRUE(a.ApproxEqual(b, 100));
  AssertEqual(a, a);
  test::ExpectErrorContaining([&] { AssertEqual(a, b); }, "17x33");
  CuMatrix<Real> c(33, 17);
  EXPECT_FALSE(SameDim(a, c));
  test::ExpectErrorContaining([&] { a.ApproxEqual(c); }, "33x17");
}

TYPED_TEST(CuMatrixTest, ViewsAndElementAccess) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> h = test::RandomMatrix<Real>(17, 33, &rng);
  CuMatrix<Real> m(h);
  EXPECT_TRUE(test::SameElements(ToHost(m.Range(2, 5, 3, 7)), Matrix<Real>(h.Range(2, 5, 3, 7))));
  EXPECT_TRUE(test::SameElements(ToHost(m.RowRange(4, 6)), Matrix<Real>(h.RowRange(4, 6))));
  EXPECT_TRUE(test::SameElements(ToHost(m.ColRange(30, 3)), Matrix<Real>(h.ColRange(30, 3))));
  Vector<Real> row(33);
  m.Row(5).CopyToVec(&row);
  EXPECT_TRUE(test::ExpectNear(row, Vector<Real>(h.Row(5)), 0));
  EXPECT_EQ(static_cast<Real>(m(16, 32)), h(16, 32));
  m(1, 2) = 9.5;
  const CuMatrix<Real>& cm = m;
  EXPECT_EQ(cm(1, 2), 9.5);
  EXPECT_EQ(m.RowData(3), m.Data() + 3 * m.Stride());
  test::ExpectErrorContaining([&] { m(17, 0); }, "(17, 0)");
  test::ExpectErrorContaining([&] { cm(0, -1); }, "(0, -1)");
  test::ExpectErrorContaining([&] { m.Row(17); }, "row 17");
  test::ExpectErrorContaining([&] { m.Range(10, 8, 0, 1); }, "rows [10, 18)");
  test::ExpectErrorContaining([&] { m.ColRange(30, 4); }, "cols [30, 34)");
  test::ExpectErrorContaining([&] { CuSubMatrix<Real> bad(m.Data(), 2, 5, 4); }, "stride 4");
}

TYPED_TEST(CuMatrixTest, ThrowsOnShapeMismatchNamingBothShapes) {
  using Real = TypeParam;
  CuMatrix<Real> a(2, 3), b(3, 2), sq(4, 4);
  Matrix<Real> h(3, 2);
  test::ExpectErrorContaining([&] { a.CopyFromMat(b); },
                              "source 3x2 does not match destination 2x3");
  test::ExpectErrorContaining([&] { a.CopyFromMat(h); }, "3x2");
  test::ExpectErrorContaining([&] { a.CopyToMat(&h); }, "2x3");
  test::ExpectErrorContaining([&] { a.AddMat(1.0, a, kTrans); }, "2x3");
  test::ExpectErrorContaining([&] { a.MulElements(b); }, "3x2");
  test::ExpectErrorContaining([&] { a.DivElements(b); }, "2x3");
  test::ExpectErrorContaining([&] { sq.AddMat(1.0, sq, kTrans); }, "overlaps");
  test::ExpectErrorContaining([&] { sq.CopyFromMat(sq, kTrans); }, "overlaps");
  a.CopyFromMat(b, kTrans);  // shapes match once transposed
}

TYPED_TEST(CuMatrixTest, ResizeSwapAndAssignment) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> h = test::RandomMatrix<Real>(5, 6, &rng);
  CuMatrix<Real> m(h);
  m.Resize(7, 4, kCopyData);
  Matrix<Real> expected(7, 4);
  expected.Range(0, 5, 0, 4).CopyFromMat(h.Range(0, 5, 0, 4));
  EXPECT_TRUE(test::SameElements(ToHost(m), expected));
  m.Resize(3, 3);
  EXPECT_TRUE(test::SameElements(ToHost(m), Matrix<Real>(3, 3)));
  Matrix<Real> host(h);
  m.Swap(&host);
  EXPECT_EQ(host.NumRows(), 3);
  EXPECT_TRUE(test::SameElements(ToHost(m), h));
  CuMatrix<Real> other(2, 2);
  m.Swap(&other);
  EXPECT_EQ(m.NumRows(), 2);
  EXPECT_TRUE(test::SameElements(ToHost(other), h));
  other = other.Range(1, 2, 2, 3);  // assigning a view of itself copies before reallocating
  EXPECT_TRUE(test::SameElements(ToHost(other), Matrix<Real>(h.Range(1, 2, 2, 3))));
  CuMatrix<Real> empty;
  empty.Transpose();
  EXPECT_EQ(empty.NumRows(), 0);
}

TYPED_TEST(CuMatrixTest, ReadWriteAndPrintMatchMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> h = test::RandomMatrix<Real>(4, 7, &rng);
  CuMatrix<Real> m(h);
  for (bool binary : {true, false}) {
    std::ostringstream want, got;
    h.Write(want, binary);
    m.Write(got, binary);
    EXPECT_EQ(got.str(), want.str());
    std::istringstream is(got.str());
    CuMatrix<Real> read;
    read.Read(is, binary);
    // The text format keeps about 6 significant digits; binary is exact.
    EXPECT_TRUE(test::ExpectNear(ToHost(read), h, binary ? 0.0 : 1e-5));
  }
  std::ostringstream printed, want;
  printed << m;
  want << h;
  EXPECT_EQ(printed.str(), want.str());
}

TYPED_TEST(CuMatrixTest, DebugStrideModeStillMatchesCpu) {
  using Real = TypeParam;
  CuDevice& device = CuDevice::Instantiate();
  const bool old = device.SetDebugStrideMode(true);
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : test::kEdgeShapes) {
    if (s.rows == 0 || s.cols == 0) continue;
    const Matrix<Real> h = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    CuMatrix<Real> m(h);
    EXPECT_GT(m.Stride(), m.NumCols()) << s;
    CuMatrix<Real> t(m, kTrans);
    EXPECT_TRUE(test::SameElements(ToHost(t), Matrix<Real>(h, kTrans))) << s;
    m.AddMat(2.0, m);
    Matrix<Real> expected(h);
    expected.Scale(3.0);
    EXPECT_TRUE(test::ExpectNear(ToHost(m), expected, test::Tol<Real>())) << s;
  }
  device.SetDebugStrideMode(old);
}

}  // namespace
}  // namespace cuctx
