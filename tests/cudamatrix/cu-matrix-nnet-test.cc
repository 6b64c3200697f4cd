// tests/cudamatrix/cu-matrix-nnet-test.cc: CuMatrix / CuVector neural-net family and reductions
// compared with the CPU Matrix / Vector.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

template <typename Real>
using Guarded = test::GuardedCuMatrix<Real>;

template <typename Real>
bool AllFinite(const MatrixBase<Real>& m) {
  for (MatrixIndexT r = 0; r < m.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < m.NumCols(); ++c)
      if (!std::isfinite(m(r, c))) return false;
  return true;
}

template <typename Real>
class CuMatrixNnetTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMatrixNnetTest, RealTypes);

// For every edge shape, packed and strided: out = op(src) on the device against the CPU, once
// with a separate (guarded) output and once in place.
template <typename Real, typename CuOp, typename CpuOp>
void CheckSrcOp(CuOp cu_op, CpuOp cpu_op, double lo, double hi, double tol) {
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> src(s.rows, s.cols, !strided, &rng, lo, hi);
    Guarded<Real> out(s.rows, s.cols, strided, &rng);
    Matrix<Real> expected(s.rows, s.cols);
    cpu_op(&expected, src.Host());
    cu_op(&out.view, src.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, tol));
    EXPECT_TRUE(out.BorderUnchanged());
    EXPECT_TRUE(src.BorderUnchanged());
    EXPECT_TRUE(test::ExpectNear(ToHost(src.view), src.Host(), 0.0)) << "src modified";
    // In place: src is *this.
    cu_op(&src.view, src.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(src.view), expected, tol)) << "in place";
    EXPECT_TRUE(src.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixNnetTest, SigmoidMatchesCpu) {
  using Real = TypeParam;
  CheckSrcOp<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->Sigmoid(s); },
                   [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Sigmoid(s); }, -30, 30,
                   test::Tol<Real>());
}

TYPED_TEST(CuMatrixNnetTest, TanhMatchesCpu) {
  using Real = TypeParam;
  CheckSrcOp<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->Tanh(s); },
                   [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Tanh(s); }, -10, 10,
                   test::Tol<Real>());
}

TYPED_TEST(CuMatrixNnetTest, SoftHingeMatchesCpu) {
  using Real = TypeParam;
  CheckSrcOp<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->SoftHinge(s); },
                   [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->SoftHinge(s); }, -50, 50,
                   test::Tol<Real>());
}

TYPED_TEST(CuMatrixNnetTest, ApplyExpAndApplyLogMatchCpu) {
  using Real = TypeParam;
  CheckSrcOp<Real>(
      [](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) {
        if (o->Data() != s.Data()) o->CopyFromMat(s);
        o->ApplyExp();
      },
      [](MatrixBase<Real>* o, const MatrixBase<Real>& s) {
        if (o->Data() != s.Data()) o->CopyFromMat(s);
        o->ApplyExp();
      },
      -5, 5, test::Tol<Real>());
  CheckSrcOp<Real>(
      [](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) {
        if (o->Data() != s.Data()) o->CopyFromMat(s);
        o->ApplyLog();
      },
      [](MatrixBase<Real>* o, const MatrixBase<Real>& s) {
        if (o->Data() != s.Data()) o->CopyFromMat(s);
        o->ApplyLog();
      },
      0.01, 100, test::Tol<Real>());
}

TYPED_TEST(CuMatrixNnetTest, SoftMaxPerRowMatchesCpu) {
  using Real = TypeParam;
  // Each output element depends on a row sum of exp terms (up to 4097 of them) whose order
  // differs between the block tree on the GPU and the CPU loop, hence 10x the element tolerance.
  const double tol = 10 * test::Tol<Real>();
  CheckSrcOp<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->SoftMaxPerRow(s); },
                   [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->SoftMaxPerRow(s); }, -5,
                   5, tol);
  CheckSrcOp<Real>(
      [](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->LogSoftMaxPerRow(s); },
      [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->LogSoftMaxPerRow(s); }, -5, 5, tol);
}

TYPED_TEST(CuMatrixNnetTest, ApplySoftMaxPerRowWorksInPlace) {
  using Real = TypeParam;
  const double tol = 10 * test::Tol<Real>();  // row sums, as in SoftMaxPerRowMatchesCpu
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> a(s.rows, s.cols, strided, &rng, -3, 3);
    Guarded<Real> b(s.rows, s.cols, strided, &rng, -3, 3);
    Matrix<Real> ea = a.Host(), eb = b.Host();
    ea.ApplySoftMaxPerRow();
    eb.ApplyLogSoftMaxPerRow();
    a.view.ApplySoftMaxPerRow();
    b.view.ApplyLogSoftMaxPerRow();
    EXPECT_TRUE(test::ExpectNear(ToHost(a.view), ea, tol));
    EXPECT_TRUE(test::ExpectNear(ToHost(b.view), eb, tol));
    EXPECT_TRUE(a.BorderUnchanged());
    EXPECT_TRUE(b.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixNnetTest, SoftMaxIsStableForLargeInputs) {
  using Real = TypeParam;
  const double tol = 10 * test::Tol<Real>();  // row sums, as in SoftMaxPerRowMatchesCpu
  test::Rng rng = test::MakeRng();
  // Rows around +700, around -700 and spanning [-1000, 1000]: exp(x) alone overflows float (and
  // for 1000 also double), so only the max-subtracting form stays finite.
  for (const test::Shape& s : {test::Shape{3, 257}, test::Shape{2, 4097}, test::Shape{5, 1}}) {
    SCOPED_TRACE(::testing::Message() << s);
    Matrix<Real> src(s.rows, s.cols);
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) {
        const double base = r % 3 == 0 ? 700 : (r % 3 == 1 ? -700 : 0);
        const double spread = r % 3 == 2 ? 1000 : 5;
        src(r, c) = static_cast<Real>(base + rng.Uniform(-spread, spread));
      }
    Matrix<Real> soft(s.rows, s.cols), log_soft(s.rows, s.cols);
    soft.SoftMaxPerRow(src);
    log_soft.LogSoftMaxPerRow(src);
    const CuMatrix<Real> cu_src(src);
    CuMatrix<Real> cu_soft(s.rows, s.cols), cu_log_soft(s.rows, s.cols);
    cu_soft.SoftMaxPerRow(cu_src);
    cu_log_soft.LogSoftMaxPerRow(cu_src);
    const Matrix<Real> h_soft = ToHost(cu_soft), h_log_soft = ToHost(cu_log_soft);
    EXPECT_TRUE(AllFinite(h_soft));
    EXPECT_TRUE(AllFinite(h_log_soft));
    EXPECT_TRUE(test::ExpectNear(h_soft, soft, tol));
    EXPECT_TRUE(test::ExpectNear(h_log_soft, log_soft, tol));
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      double sum = 0;
      for (MatrixIndexT c = 0; c < s.cols; ++c) sum += h_soft(r, c);
      EXPECT_NEAR(sum, 1.0, tol) << "row " << r;
    }
  }
}

TYPED_TEST(CuMatrixNnetTest, DiffSigmoidAndDiffTanhMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> value(s.rows, s.cols, !strided, &rng, 0, 1);
    Guarded<Real> diff(s.rows, s.cols, strided, &rng, -2, 2);
    for (bool tanh : {false, true}) {
      Guarded<Real> out(s.rows, s.cols, strided, &rng);
      Matrix<Real> expected(s.rows, s.cols);
      if (tanh) {
        expected.DiffTanh(value.Host(), diff.Host());
        out.view.DiffTanh(value.view, diff.view);
      } else {
        expected.DiffSigmoid(value.Host(), diff.Host());
        out.view.DiffSigmoid(value.view, diff.view);
      }
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, test::Tol<Real>())) << tanh;
      EXPECT_TRUE(out.BorderUnchanged());
    }
    // Output aliasing diff, as back-propagation does in place.
    Matrix<Real> expected = diff.Host();
    expected.DiffSigmoid(value.Host(), expected);
    diff.view.DiffSigmoid(value.view, diff.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(diff.view), expected, test::Tol<Real>())) << "in place";
    EXPECT_TRUE(diff.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixNnetTest, FindRowMaxIdMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.rows > 0 && s.cols == 0) return;  // throws; see FindRowMaxIdThrowsWithoutColumns
    Guarded<Real> m(s.rows, s.cols, strided, &rng, -10, 10);
    std::vector<int32> expected;
    m.Host().FindRowMaxId(&expected);
    CuArray<int32> id(3);
    m.view.FindRowMaxId(&id);
    std::vector<int32> actual;
    id.CopyToVec(&actual);
    EXPECT_EQ(actual, expected);
  });
}

// Ties go to the lowest column, on the GPU as on the CPU: equal maxima held by different threads
// (5 and 261; 40 and 330), within one 16-byte vector of a thread (40 and 41), in the scalar tail of
// a row whose width is no multiple of 4 (the last column), whole rows of one value, and -inf rows.
// 603 columns take the kernel with a warp or two per row, 4099 the one with a block per row.
TYPED_TEST(CuMatrixNnetTest, FindRowMaxIdBreaksTiesTowardLowestColumn) {
  using Real = TypeParam;
  for (const int cols : {603, 4099}) {
    SCOPED_TRACE(cols);
    Matrix<Real> m(4, cols);
    for (int c = 0; c < cols; ++c) m(0, c) = static_cast<Real>(c % 7) * Real(0.1);
    m(0, 261) = 9;
    m(0, 5) = 9;
    m(0, cols - 4) = 9;
    m(0, cols - 1) = 9;
    m(1, 330) = 4;
    m(1, 41) = 4;
    m(1, 40) = 4;
    m(1, cols - 2) = 4;
    m.Row(2).Set(Real(1.5));
    m.Row(3).Set(-std::numeric_limits<Real>::infinity());
    std::vector<int32> expected;
    m.FindRowMaxId(&expected);
    EXPECT_EQ(expected, (std::vector<int32>{5, 40, 0, 0}));
    CuArray<int32> id;
    CuMatrix<Real>(m).FindRowMaxId(&id);
    std::vector<int32> actual;
    id.CopyToVec(&actual);
    EXPECT_EQ(actual, expected);
  }
}

TYPED_TEST(CuMatrixNnetTest, FindRowMaxIdThrowsWithoutColumns) {
  using Real = TypeParam;
  CuMatrix<Real> m(3, 0);
  CuArray<int32> id;
  test::ExpectErrorContaining([&] { m.FindRowMaxId(&id); }, "3x0");
}

TYPED_TEST(CuMatrixNnetTest, ThrowsOnShapeMismatchNamingBothShapes) {
  using Real = TypeParam;
  CuMatrix<Real> a(3, 4), b(3, 5), c(4, 4);
  std::string text;
  {
    test::QuietLog quiet;
    text = test::ErrorText([&] { a.Sigmoid(b); });
  }
  EXPECT_NE(text.find("3x4"), std::string::npos) << text;
  EXPECT_NE(text.find("3x5"), std::string::npos) << text;
  test::ExpectErrorContaining([&] { a.Tanh(c); }, "4x4");
  test::ExpectErrorContaining([&] { a.SoftHinge(b); }, "3x5");
  test::ExpectErrorContaining([&] { a.SoftMaxPerRow(b); }, "3x5");
  test::ExpectErrorContaining([&] { a.LogSoftMaxPerRow(c); }, "4x4");
  test::ExpectErrorContaining([&] { a.DiffSigmoid(a, b); }, "3x5");
  test::ExpectErrorContaining([&] { a.DiffTanh(c, a); }, "4x4");
  CuVector<Real> v(5);
  test::ExpectErrorContaining([&] { v.AddRowSumMat(1, a); }, "3x4");
  test::ExpectErrorContaining([&] { v.AddColSumMat(1, a); }, "3x4");
}

TYPED_TEST(CuMatrixNnetTest, ThrowsOnPartialOverlap) {
  using Real = TypeParam;
  CuMatrix<Real> m(4, 6);
  CuSubMatrix<Real> left(m, 0, 4, 0, 4), shifted(m, 0, 4, 1, 4);
  test::ExpectErrorContaining([&] { left.Sigmoid(shifted); }, "overlap");
  test::ExpectErrorContaining([&] { left.SoftMaxPerRow(shifted); }, "overlap");
  CuSubVector<Real> row = m.Row(1);
  test::ExpectErrorContaining([&] { row.AddRowSumMat(1, m); }, "overlap");
}

template <typename Real>
class CuVectorNnetTest : public ::testing::Test {};
TYPED_TEST_SUITE(CuVectorNnetTest, RealTypes);

// Reductions: the GPU adds in a tree, the CPU sequentially in double; rounding differences grow
// roughly with sqrt(n) terms, so the element tolerance is scaled by sqrt(n).
template <typename Real>
double SumTol(int n) {
  return test::Tol<Real>() * std::max(1.0, std::sqrt(static_cast<double>(n)));
}

TYPED_TEST(CuVectorNnetTest, AddRowSumMatAndAddColSumMatMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> m(s.rows, s.cols, strided, &rng, 0.5, 1.5);
    for (Real beta : {Real(0), Real(1), Real(-0.5)}) {
      Vector<Real> row_sum = test::RandomVector<Real>(s.cols, &rng);
      Vector<Real> col_sum = test::RandomVector<Real>(s.rows, &rng);
      CuVector<Real> cu_row_sum(row_sum), cu_col_sum(col_sum);
      row_sum.AddRowSumMat(Real(0.5), m.Host(), beta);
      col_sum.AddColSumMat(Real(-2), m.Host(), beta);
      cu_row_sum.AddRowSumMat(Real(0.5), m.view, beta);
      cu_col_sum.AddColSumMat(Real(-2), m.view, beta);
      EXPECT_TRUE(test::ExpectNear(ToHost(cu_row_sum), row_sum, SumTol<Real>(s.rows))) << beta;
      EXPECT_TRUE(test::ExpectNear(ToHost(cu_col_sum), col_sum, SumTol<Real>(s.cols))) << beta;
    }
    EXPECT_TRUE(m.BorderUnchanged());
  });
}

TYPED_TEST(CuVectorNnetTest, AddRowSumMatWritesOnlyTheVector) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> m = test::RandomMatrix<Real>(33, 17, &rng);
  // The result vector is a range of a larger vector whose ends are sentinels.
  Vector<Real> big = test::RandomVector<Real>(17 + 4, &rng);
  CuVector<Real> cu_big(big);
  CuSubVector<Real> cu_out(cu_big, 2, 17);
  SubVector<Real> out(big, 2, 17);
  Vector<Real> expected(out);
  expected.AddRowSumMat(1, m, 1);
  cu_out.AddRowSumMat(1, CuMatrix<Real>(m), 1);
  out.CopyFromVec(expected);
  EXPECT_TRUE(test::ExpectNear(ToHost(cu_big), big, SumTol<Real>(33)));
  const Vector<Real> h = ToHost(cu_big);
  EXPECT_EQ(h(0), big(0));
  EXPECT_EQ(h(1), big(1));
  EXPECT_EQ(h(19), big(19));
  EXPECT_EQ(h(20), big(20));
}

TYPED_TEST(CuVectorNnetTest, SumMaxMinMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {1, 2, 17, 257, 4097, 100003}) {
    SCOPED_TRACE(::testing::Message() << "dim " << n);
    const Vector<Real> v = test::RandomVector<Real>(n, &rng, 0.5, 2);
    const CuVector<Real> cu(v);
    EXPECT_TRUE(test::ScalarNear(cu.Sum(), v.Sum(), SumTol<Real>(n)));
    EXPECT_EQ(cu.Max(), v.Max());
    EXPECT_EQ(cu.Min(), v.Min());
  }
  // Extremes in the middle and at the last element, across threads.
  Vector<Real> v = test::RandomVector<Real>(1000, &rng);
  v(511) = 7;
  v(999) = -7;
  const CuVector<Real> cu(v);
  EXPECT_EQ(cu.Max(), Real(7));
  EXPECT_EQ(cu.Min(), Real(-7));
  EXPECT_EQ(CuVector<Real>().Sum(), Real(0));
}

TYPED_TEST(CuVectorNnetTest, EmptyVectorThrowsForMaxMinAndSoftMax) {
  using Real = TypeParam;
  CuVector<Real> v;
  test::ExpectErrorContaining([&] { v.Max(); }, "empty");
  test::ExpectErrorContaining([&] { v.Min(); }, "empty");
  test::ExpectErrorContaining([&] { v.ApplySoftMax(); }, "empty");
  test::ExpectErrorContaining([&] { v.ApplyLogSoftMax(); }, "empty");
}

TYPED_TEST(CuVectorNnetTest, ApplySoftMaxAndLogSoftMaxMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {1, 17, 4097}) {
    for (double offset : {0.0, 700.0, -700.0}) {
      SCOPED_TRACE(::testing::Message() << "dim " << n << " offset " << offset);
      const Vector<Real> v = test::RandomVector<Real>(n, &rng, offset - 10, offset + 10);
      Vector<Real> soft(v), log_soft(v);
      soft.ApplySoftMax();
      log_soft.ApplyLogSoftMax();
      CuVector<Real> cu_soft(v), cu_log_soft(v);
      cu_soft.ApplySoftMax();
      cu_log_soft.ApplyLogSoftMax();
      // One sum over n exp terms per output, as for the matrix form.
      EXPECT_TRUE(test::ExpectNear(ToHost(cu_soft), soft, 10 * test::Tol<Real>()));
      EXPECT_TRUE(test::ExpectNear(ToHost(cu_log_soft), log_soft, 10 * test::Tol<Real>()));
      EXPECT_TRUE(std::isfinite(cu_soft.Sum()));
    }
  }
}

}  // namespace
}  // namespace cuctx
