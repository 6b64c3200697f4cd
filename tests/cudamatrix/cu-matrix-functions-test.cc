// tests/cudamatrix/cu-matrix-functions-test.cc: CuMatrix element-wise functions, broadcasts, block
// sums and whole-matrix reductions compared with the CPU Matrix.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

template <typename Real>
using Guarded = test::GuardedCuMatrix<Real>;
template <typename Real>
using CuOp = std::function<void(CuMatrixBase<Real>*, const CuMatrixBase<Real>&)>;
template <typename Real>
using CpuOp = std::function<void(MatrixBase<Real>*, const MatrixBase<Real>&)>;

// Element by element: |a - e| <= tol * max(1, |e|), infinities equal, NaN only against NaN. Unlike
// a Frobenius check this is not dominated by the large special values.
template <typename Real>
::testing::AssertionResult ElementsNear(const MatrixBase<Real>& actual,
                                        const MatrixBase<Real>& expected, double tol) {
  if (actual.NumRows() != expected.NumRows() || actual.NumCols() != expected.NumCols())
    return ::testing::AssertionFailure() << "shape mismatch";
  for (MatrixIndexT r = 0; r < actual.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < actual.NumCols(); ++c) {
      const double a = actual(r, c), e = expected(r, c);
      const bool same_special = (std::isnan(a) && std::isnan(e)) || (std::isinf(e) && a == e);
      if (same_special) continue;
      if (!(std::abs(a - e) <= tol * std::max(1.0, std::abs(e))))
        return ::testing::AssertionFailure()
               << "element (" << r << ", " << c << "): actual " << a << ", expected " << e;
    }
  return ::testing::AssertionSuccess();
}

// Random values in [lo, hi) with every 7th element replaced by one of the values where the
// functions have special cases (zeros of both signs, +-1, large magnitudes, -0.5).
template <typename Real>
Matrix<Real> SpecialMatrix(MatrixIndexT rows, MatrixIndexT cols, test::Rng* rng, double lo,
                           double hi) {
  const Real specials[] = {0, -0.0, 1, -1, 60, -60, -0.5, 2};
  Matrix<Real> m = test::RandomMatrix<Real>(rows, cols, rng, lo, hi);
  for (MatrixIndexT r = 0; r < rows; ++r)
    for (MatrixIndexT c = 0; c < cols; ++c) {
      const int64_t k = static_cast<int64_t>(r) * cols + c;
      if (k % 7 == 3) m(r, c) = specials[(k / 7) % 8];
    }
  return m;
}

// Copies host data into a guarded view and returns the view's new contents.
template <typename Real>
Matrix<Real> Load(Guarded<Real>* g, const Matrix<Real>& h) {
  g->view.CopyFromMat(h);
  return h;
}

template <typename Real>
class CuMatrixFunctionsTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMatrixFunctionsTest, RealTypes);

// For every edge shape, packed and strided, with special values: cu_op(&out, src) against
// cpu_op on host copies, with out separate (guarded) and then out == src (the in-place form,
// apply(&m) when given, else cu_op(&m, m)).
template <typename Real>
void CheckMap(CuOp<Real> cu_op, CpuOp<Real> cpu_op, std::function<void(CuMatrixBase<Real>*)> apply,
              double lo, double hi, double tol) {
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> src(s.rows, s.cols, strided, &rng);
    Guarded<Real> out(s.rows, s.cols, !strided, &rng);
    const Matrix<Real> input = Load(&src, SpecialMatrix<Real>(s.rows, s.cols, &rng, lo, hi));
    Matrix<Real> expected(s.rows, s.cols);
    cpu_op(&expected, input);
    cu_op(&out.view, src.view);
    EXPECT_TRUE(ElementsNear(ToHost(out.view), expected, tol));
    EXPECT_TRUE(out.BorderUnchanged());
    EXPECT_TRUE(test::SameElements(ToHost(src.view), input)) << "src changed";
    if (apply)
      apply(&src.view);
    else
      cu_op(&src.view, src.view);
    EXPECT_TRUE(ElementsNear(ToHost(src.view), expected, tol)) << "in place";
    EXPECT_TRUE(src.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixFunctionsTest, PowMatchesCpu) {
  using Real = TypeParam;
  // Non-integer powers of negative values give NaN on both paths; 0 to a negative power, inf.
  for (Real p : {Real(2), Real(3), Real(0.5), Real(-1.5), Real(0)}) {
    SCOPED_TRACE(::testing::Message() << "power " << p);
    CheckMap<Real>([p](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->Pow(s, p); },
                   [p](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Pow(s, p); },
                   [p](CuMatrixBase<Real>* m) { m->ApplyPow(p); }, -3, 3, test::Tol<Real>());
  }
}

TYPED_TEST(CuMatrixFunctionsTest, PowAbsMatchesCpu) {
  using Real = TypeParam;
  for (Real p : {Real(2), Real(0.5), Real(-1.5), Real(0)})
    for (bool sign : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "power " << p << " include_sign " << sign);
      CheckMap<Real>(
          [=](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->PowAbs(s, p, sign); },
          [=](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->PowAbs(s, p, sign); },
          [=](CuMatrixBase<Real>* m) { m->ApplyPowAbs(p, sign); }, -3, 3, test::Tol<Real>());
    }
}

TYPED_TEST(CuMatrixFunctionsTest, ClampsAndHeavisideMatchCpu) {
  using Real = TypeParam;
  CheckMap<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->Floor(s, 0.25); },
                 [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Floor(s, 0.25); },
                 [](CuMatrixBase<Real>* m) { m->ApplyFloor(0.25); }, -2, 2, 0);
  CheckMap<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->Ceiling(s, -0.5); },
                 [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Ceiling(s, -0.5); },
                 [](CuMatrixBase<Real>* m) { m->ApplyCeiling(-0.5); }, -2, 2, 0);
  CheckMap<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->Heaviside(s); },
                 [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Heaviside(s); },
                 [](CuMatrixBase<Real>* m) { m->ApplyHeaviside(); }, -2, 2, 0);
}

TYPED_TEST(CuMatrixFunctionsTest, ExpFamilyMatchesCpu) {
  using Real = TypeParam;
  const double tol = test::Tol<Real>();
  CheckMap<Real>(
      [](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->ExpLimited(s, -1, 1.5); },
      [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->ExpLimited(s, -1, 1.5); },
      [](CuMatrixBase<Real>* m) { m->ApplyExpLimited(-1, 1.5); }, -3, 3, tol);
  CheckMap<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->ExpSpecial(s); },
                 [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->ExpSpecial(s); },
                 [](CuMatrixBase<Real>* m) { m->ApplyExpSpecial(); }, -5, 5, tol);
  CheckMap<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->Exp(s); },
                 [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Exp(s); }, nullptr, -5, 5,
                 tol);
  // Log of the specials 0 and negatives: -inf and NaN on both paths.
  CheckMap<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) { o->Log(s); },
                 [](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Log(s); }, nullptr, 0.01,
                 50, tol);
}

TYPED_TEST(CuMatrixFunctionsTest, InvertElementsMatchesCpu) {
  using Real = TypeParam;
  CheckMap<Real>(
      [](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& s) {
        o->CopyFromMat(s);
        o->InvertElements();
      },
      [](MatrixBase<Real>* o, const MatrixBase<Real>& s) {
        o->CopyFromMat(s);
        o->InvertElements();
      },
      [](CuMatrixBase<Real>* m) { m->InvertElements(); }, -2, 2, test::Tol<Real>());
}

TYPED_TEST(CuMatrixFunctionsTest, MaxMinOfMatricesMatchCpu) {
  using Real = TypeParam;
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    for (bool is_max : {true, false}) {
      Guarded<Real> m(s.rows, s.cols, strided, &rng);
      Guarded<Real> a(s.rows, s.cols, !strided, &rng);
      Matrix<Real> hm = m.Host(), ha = a.Host();
      // NaN on either side: *this keeps its element, as std::max / std::min.
      if (s.rows > 0 && s.cols > 1) {
        hm(0, 0) = nan;
        ha(s.rows - 1, s.cols - 1) = nan;
        Load(&m, hm);
        Load(&a, ha);
      }
      Matrix<Real> expected(hm);
      if (is_max) {
        expected.Max(ha);
        m.view.Max(a.view);
      } else {
        expected.Min(ha);
        m.view.Min(a.view);
      }
      EXPECT_TRUE(ElementsNear(ToHost(m.view), expected, 0)) << is_max;
      EXPECT_TRUE(m.BorderUnchanged());
      // A is *this: no change.
      m.view.Max(m.view);
      EXPECT_TRUE(ElementsNear(ToHost(m.view), expected, 0)) << "aliased";
    }
  });
}

TYPED_TEST(CuMatrixFunctionsTest, AddMatMatElementsMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> a(s.rows, s.cols, strided, &rng), b(s.rows, s.cols, !strided, &rng);
    for (Real beta : {Real(0), Real(1), Real(-0.5)}) {
      Guarded<Real> m(s.rows, s.cols, strided, &rng);
      Matrix<Real> expected = m.Host();
      expected.AddMatMatElements(Real(0.75), a.Host(), b.Host(), beta);
      m.view.AddMatMatElements(Real(0.75), a.view, b.view, beta);
      EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, test::Tol<Real>())) << beta;
      EXPECT_TRUE(m.BorderUnchanged());
    }
    // *this as A and B: this = 2 * this + this .* this.
    Matrix<Real> expected = a.Host();
    expected.AddMatMatElements(1, expected, expected, 2);
    a.view.AddMatMatElements(1, a.view, a.view, 2);
    EXPECT_TRUE(test::ExpectNear(ToHost(a.view), expected, test::Tol<Real>())) << "aliased";
    EXPECT_TRUE(a.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixFunctionsTest, SetMatMatDivMatMatchesCpuAndKeepsAWhereCIsZero) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> a(s.rows, s.cols, strided, &rng), b(s.rows, s.cols, !strided, &rng);
    Guarded<Real> c(s.rows, s.cols, strided, &rng, 0.5, 2);
    Matrix<Real> hc = c.Host();
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT k = r % 3; k < s.cols; k += 3) hc(r, k) = 0;
    Load(&c, hc);
    Guarded<Real> m(s.rows, s.cols, !strided, &rng);
    Matrix<Real> expected(s.rows, s.cols);
    expected.SetMatMatDivMat(a.Host(), b.Host(), hc);
    m.view.SetMatMatDivMat(a.view, b.view, c.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, test::Tol<Real>()));
    EXPECT_TRUE(m.BorderUnchanged());
    // *this as C.
    c.view.SetMatMatDivMat(a.view, b.view, c.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(c.view), expected, test::Tol<Real>())) << "aliased";
    EXPECT_TRUE(c.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixFunctionsTest, VectorBroadcastsMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const Vector<Real> by_col = test::RandomVector<Real>(s.cols, &rng, 0.5, 2);
    const Vector<Real> by_row = test::RandomVector<Real>(s.rows, &rng, 0.5, 2);
    const CuVector<Real> cu_col(by_col), cu_row(by_row);
    for (int op = 0; op < 7; ++op) {
      const Real beta = op == 5 ? Real(0) : Real(-0.5);
      Guarded<Real> m(s.rows, s.cols, strided, &rng);
      Matrix<Real> expected = m.Host();
      switch (op) {
        case 0:
          expected.MulColsVec(by_col);
          m.view.MulColsVec(cu_col);
          break;
        case 1:
          expected.MulRowsVec(by_row);
          m.view.MulRowsVec(cu_row);
          break;
        case 2:
          expected.DivRowsVec(by_row);
          m.view.DivRowsVec(cu_row);
          break;
        case 3:
          expected.AddVecToRows(Real(1.5), by_col);
          m.view.AddVecToRows(Real(1.5), cu_col);
          break;
        case 4:
          expected.AddVecToCols(Real(-2), by_row);
          m.view.AddVecToCols(Real(-2), cu_row);
          break;
        default:
          expected.AddVecToRows(Real(0.5), by_col, beta);
          expected.AddVecToCols(Real(2), by_row, beta);
          m.view.AddVecToRows(Real(0.5), cu_col, beta);
          m.view.AddVecToCols(Real(2), cu_row, beta);
          break;
      }
      EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, test::Tol<Real>())) << "op " << op;
      EXPECT_TRUE(m.BorderUnchanged()) << "op " << op;
    }
  });
}

TYPED_TEST(CuMatrixFunctionsTest, MulRowsGroupMatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : {test::Shape{0, 6}, test::Shape{1, 1}, test::Shape{17, 33},
                               test::Shape{257, 12}, test::Shape{3, 4097}, test::Shape{4097, 1}})
    for (int groups : {1, 3, 11}) {
      if (s.cols % groups != 0) continue;
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << s << " groups " << groups << " " << strided);
        Guarded<Real> m(s.rows, s.cols, strided, &rng);
        Guarded<Real> src(s.rows, groups, !strided, &rng);
        Matrix<Real> expected = m.Host();
        expected.MulRowsGroupMat(src.Host());
        m.view.MulRowsGroupMat(src.view);
        EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, test::Tol<Real>()));
        EXPECT_TRUE(m.BorderUnchanged());
      }
    }
}

TYPED_TEST(CuMatrixFunctionsTest, AddMatBlocksMatchesCpu) {
  using Real = TypeParam;
  // The block sums add up to 12 terms per element in the CPU's order; a few ulps apart at most.
  const double tol = 4 * test::Tol<Real>();
  test::Rng rng = test::MakeRng();
  struct Case {
    int rows, cols, a_rows, a_cols;  // a_* is the shape of op(A)
  };
  const Case cases[] = {{3, 5, 3, 5},    {3, 5, 12, 15},     {17, 33, 34, 99},
                        {1, 1, 7, 4097}, {4097, 1, 4097, 3}, {12, 15, 3, 5},
                        {257, 3, 1, 1},  {34, 99, 17, 33},   {0, 4, 2, 4}};
  for (const Case& k : cases)
    for (MatrixTransposeType trans : {kNoTrans, kTrans})
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << k.rows << "x" << k.cols << " += op(" << k.a_rows << "x"
                                          << k.a_cols << ") " << trans << " " << strided);
        const int ar = trans == kNoTrans ? k.a_rows : k.a_cols;
        const int ac = trans == kNoTrans ? k.a_cols : k.a_rows;
        Guarded<Real> m(k.rows, k.cols, strided, &rng);
        Guarded<Real> a(ar, ac, !strided, &rng);
        Matrix<Real> expected = m.Host();
        expected.AddMatBlocks(Real(-0.5), a.Host(), trans);
        m.view.AddMatBlocks(Real(-0.5), a.view, trans);
        EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, tol));
        EXPECT_TRUE(m.BorderUnchanged());
      }
}

TYPED_TEST(CuMatrixFunctionsTest, AddToDiagMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> m(s.rows, s.cols, strided, &rng);
    Matrix<Real> expected = m.Host();
    expected.AddToDiag(Real(2.5));
    m.view.AddToDiag(Real(2.5));
    EXPECT_TRUE(test::SameElements(ToHost(m.view), expected));
    EXPECT_TRUE(m.BorderUnchanged());
  });
}

// ---- reductions

TYPED_TEST(CuMatrixFunctionsTest, MaxMinTraceMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    // Positive values, so that the trace is far from 0 and a relative check is meaningful.
    Guarded<Real> m(s.rows, s.cols, strided, &rng, 0.5, 5);
    const Matrix<Real> h = m.Host();
    const int diag = std::min(s.rows, s.cols);
    // Up to 4097 terms in a different order than the CPU's double sum.
    EXPECT_TRUE(test::ScalarNear(m.view.Trace(false), h.Trace(false),
                                 test::Tol<Real>() * std::max(1.0, std::sqrt(diag * 1.0))));
    if (s.rows == 0 || s.cols == 0) return;
    EXPECT_EQ(m.view.Max(), h.Max());
    EXPECT_EQ(m.view.Min(), h.Min());
    // Extremes at the last element (the end of the last block's range).
    Matrix<Real> g(h);
    g(s.rows - 1, s.cols - 1) = 9;
    Load(&m, g);
    EXPECT_EQ(m.view.Max(), Real(9));
    g(s.rows - 1, s.cols - 1) = -9;
    Load(&m, g);
    EXPECT_EQ(m.view.Min(), Real(-9));
    EXPECT_TRUE(m.BorderUnchanged());
  });
  // A long row and a large matrix spread over many blocks.
  for (const test::Shape& s : {test::Shape{1, 100003}, test::Shape{1000, 513}}) {
    Matrix<Real> h = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    h(s.rows / 2, s.cols / 3) = 3;
    h(s.rows - 1, 1) = -3;
    const CuMatrix<Real> cu(h);
    EXPECT_EQ(cu.Max(), Real(3)) << s;
    EXPECT_EQ(cu.Min(), Real(-3)) << s;
  }
}

TYPED_TEST(CuMatrixFunctionsTest, MaxMinSkipNanExceptAtOrigin) {
  using Real = TypeParam;
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  Matrix<Real> h(3, 40);
  h.Set(1);
  h(1, 7) = nan;
  h(2, 39) = 5;
  h(2, 38) = -5;
  CuMatrix<Real> cu(h);
  EXPECT_EQ(cu.Max(), h.Max());
  EXPECT_EQ(cu.Min(), h.Min());
  EXPECT_EQ(cu.Max(), Real(5));
  h(0, 0) = nan;
  cu.CopyFromMat(h);
  EXPECT_TRUE(std::isnan(h.Max()));
  EXPECT_TRUE(std::isnan(cu.Max()));
  EXPECT_TRUE(std::isnan(cu.Min()));
}

TYPED_TEST(CuMatrixFunctionsTest, IsUnitMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> m(s.rows, s.cols, strided, &rng);
    Matrix<Real> h(s.rows, s.cols);
    h.SetUnit();
    // Within tolerance everywhere.
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        h(r, c) += static_cast<Real>(rng.Uniform(-0.0005, 0.0005));
    Load(&m, h);
    EXPECT_TRUE(h.IsUnit(Real(0.001)));
    EXPECT_TRUE(m.view.IsUnit());
    if (s.rows == 0 || s.cols == 0) return;
    // One element off, on the diagonal and off it (first, middle, last).
    const std::vector<std::pair<int, int>> where = {
        {0, 0}, {s.rows / 2, s.cols / 2}, {s.rows - 1, s.cols - 1}, {0, s.cols - 1}};
    for (const auto& rc : where) {
      Matrix<Real> g(h);
      g(rc.first, rc.second) += Real(0.01);
      Load(&m, g);
      EXPECT_EQ(m.view.IsUnit(), g.IsUnit(Real(0.001))) << rc.first << "," << rc.second;
      EXPECT_FALSE(m.view.IsUnit());
      EXPECT_TRUE(m.view.IsUnit(Real(0.1)));
    }
    EXPECT_TRUE(m.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixFunctionsTest, ReductionsOfEmptyMatrices) {
  using Real = TypeParam;
  CuMatrix<Real> m(0, 3);
  test::ExpectErrorContaining([&] { m.Max(); }, "0x3");
  test::ExpectErrorContaining([&] { m.Min(); }, "empty");
  EXPECT_EQ(m.Trace(false), Real(0));
  EXPECT_EQ(CuMatrix<Real>().Trace(), Real(0));
  EXPECT_TRUE(m.IsUnit());
}

// ---- misuse

TYPED_TEST(CuMatrixFunctionsTest, ThrowsOnShapeMismatchNamingBothShapes) {
  using Real = TypeParam;
  CuMatrix<Real> a(3, 4), b(3, 5), c(4, 4);
  std::string text;
  {
    test::QuietLog quiet;
    text = test::ErrorText([&] { a.Pow(b, 2); });
  }
  EXPECT_TRUE(test::Contains(text, "3x4"));
  EXPECT_TRUE(test::Contains(text, "3x5"));
  test::ExpectErrorContaining([&] { a.Max(c); }, "4x4");
  test::ExpectErrorContaining([&] { a.Min(b); }, "3x5");
  test::ExpectErrorContaining([&] { a.PowAbs(c, 2); }, "4x4");
  test::ExpectErrorContaining([&] { a.Heaviside(b); }, "3x5");
  test::ExpectErrorContaining([&] { a.Floor(b, 0); }, "3x5");
  test::ExpectErrorContaining([&] { a.Ceiling(c, 0); }, "4x4");
  test::ExpectErrorContaining([&] { a.ExpLimited(b, 0, 1); }, "3x5");
  test::ExpectErrorContaining([&] { a.ExpSpecial(c); }, "4x4");
  test::ExpectErrorContaining([&] { a.Exp(b); }, "3x5");
  test::ExpectErrorContaining([&] { a.Log(c); }, "4x4");
  test::ExpectErrorContaining([&] { a.AddMatMatElements(1, a, b, 1); }, "3x5");
  test::ExpectErrorContaining([&] { a.SetMatMatDivMat(a, a, c); }, "4x4");
  test::ExpectErrorContaining([&] { a.Trace(); }, "3x4");
  test::ExpectErrorContaining([&] { a.AddMatBlocks(1, b); }, "3x5");
  test::ExpectErrorContaining([&] { a.AddMatBlocks(1, CuMatrix<Real>(2, 4)); }, "2x4");
  test::ExpectErrorContaining([&] { a.MulRowsGroupMat(CuMatrix<Real>(3, 3)); }, "3x3");
  test::ExpectErrorContaining([&] { a.MulRowsGroupMat(CuMatrix<Real>(2, 2)); }, "2x2");
}

TYPED_TEST(CuMatrixFunctionsTest, ThrowsOnBadVectorDimension) {
  using Real = TypeParam;
  CuMatrix<Real> a(3, 4);
  CuVector<Real> v3(3), v4(4);
  test::ExpectErrorContaining([&] { a.MulColsVec(v3); }, "dimension 3");
  test::ExpectErrorContaining([&] { a.MulRowsVec(v4); }, "dimension 4");
  test::ExpectErrorContaining([&] { a.DivRowsVec(v4); }, "3x4");
  test::ExpectErrorContaining([&] { a.AddVecToRows(1, v3); }, "NumCols()");
  test::ExpectErrorContaining([&] { a.AddVecToCols(1, v4); }, "NumRows()");
}

TYPED_TEST(CuMatrixFunctionsTest, ThrowsOnOverlap) {
  using Real = TypeParam;
  // Views count as overlapping when their spans (first to last element) intersect, so disjoint
  // operands are taken as row ranges here.
  CuMatrix<Real> m(8, 4);
  CuSubMatrix<Real> top = m.RowRange(0, 4), shifted = m.RowRange(1, 4), bottom = m.RowRange(4, 4);
  test::ExpectErrorContaining([&] { top.Pow(shifted, 2); }, "overlap");
  test::ExpectErrorContaining([&] { top.Max(shifted); }, "overlap");
  test::ExpectErrorContaining([&] { top.AddMatMatElements(1, bottom, shifted, 0); }, "overlap");
  test::ExpectErrorContaining([&] { top.SetMatMatDivMat(shifted, bottom, bottom); }, "overlap");
  test::ExpectErrorContaining([&] { top.AddMatBlocks(1, top); }, "overlap");
  test::ExpectErrorContaining([&] { top.MulRowsGroupMat(top.ColRange(0, 2)); }, "overlap");
  test::ExpectErrorContaining([&] { top.MulRowsVec(m.Row(2)); }, "overlap");
  test::ExpectErrorContaining([&] { bottom.AddVecToRows(1, m.Row(7)); }, "overlap");
  // Disjoint views are fine.
  top.Pow(bottom, 2);
  top.AddMatMatElements(1, bottom, bottom, 0);
  top.AddVecToRows(1, m.Row(5));
}

TYPED_TEST(CuMatrixFunctionsTest, ExpLimitedThrowsWhenLimitsCross) {
  using Real = TypeParam;
  CuMatrix<Real> a(2, 2);
  test::ExpectErrorContaining([&] { a.ApplyExpLimited(1, -1); }, "lower limit 1 > upper limit -1");
  test::ExpectErrorContaining([&] { a.ExpLimited(a, 2, 0); }, "lower limit");
  CuMatrix<Real> empty;
  test::ExpectErrorContaining([&] { empty.ApplyExpLimited(1, 0); }, "lower limit");
}

}  // namespace
}  // namespace cuctx
