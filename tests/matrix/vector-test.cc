// tests/matrix/vector-test.cc: Vector/SubVector storage,
// element-wise ops, matrix products, reductions.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/vector.h"

#include "base/random.h"
#include "matrix/matrix.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
class VectorTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(VectorTest, RealTypes);

const std::vector<MatrixIndexT> kDims = {0, 1, 2, 17, 257, 4097};

// Calls f(dim) for each test dimension with a trace naming it.
template <typename F>
void ForEachDim(F f) {
  for (MatrixIndexT d : kDims) {
    SCOPED_TRACE("dim " + std::to_string(d));
    f(d);
  }
}

// ---- storage and views
// -------------------------------------------------------------------------------

TYPED_TEST(VectorTest, ConstructorZeroesAndAligns) {
  using Real = TypeParam;
  ForEachDim([](MatrixIndexT d) {
    Vector<Real> v(d);
    EXPECT_EQ(v.Dim(), d);
    EXPECT_TRUE(v.IsZero(0));
    if (d > 0) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.Data()) % 16, 0u);
    }
    EXPECT_EQ(v.SizeInBytes(), d * sizeof(Real));
  });
  EXPECT_TRUE(test::ThrowsWith([] { Vector<Real> v(-3); }, "-3"));
}

TYPED_TEST(VectorTest, ResizeModesBehaveAsDocumented) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Vector<Real> v = test::RandomVector<Real>(10, &rng);
  const Vector<Real> orig(v);
  v.Resize(14, kCopyData);
  for (MatrixIndexT i = 0; i < 14; ++i) EXPECT_EQ(v(i), i < 10 ? orig(i) : Real(0));
  v.Resize(4, kCopyData);
  EXPECT_TRUE(v.ApproxEqual(orig.Range(0, 4), 0));
  v.Resize(4);
  EXPECT_TRUE(v.IsZero(0));
  v.Resize(0, kUndefined);
  EXPECT_EQ(v.Dim(), 0);
  EXPECT_EQ(v.Data(), nullptr);
  EXPECT_THROW(v.Resize(-1), Error);
}

TYPED_TEST(VectorTest, CopyMoveAndSwapAcrossPrecision) {
  using Real = TypeParam;
  using Other = typename std::conditional<std::is_same<Real, float>::value, double, float>::type;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    Vector<Other> src = test::RandomVector<Other>(d, &rng);
    Vector<Real> v(src);
    EXPECT_TRUE(test::ExpectNear(v, src, test::Tol<float>()));
    Vector<Real> copy(v);
    EXPECT_TRUE(test::ExpectNear(copy, v, 0));
    Vector<Real> assigned;
    assigned = v;
    EXPECT_TRUE(test::ExpectNear(assigned, v, 0));
    const Real* data = assigned.Data();
    Vector<Real> moved(std::move(assigned));
    EXPECT_EQ(moved.Data(), data);
    EXPECT_EQ(assigned.Dim(), 0);
    Vector<Real> other(3);
    other.Swap(&moved);
    EXPECT_EQ(other.Data(), data);
    EXPECT_EQ(moved.Dim(), 3);
    moved = std::move(other);
    EXPECT_TRUE(test::ExpectNear(moved, v, 0));
    Vector<Real> w(src.Dim());
    src.CopyToVec(&w);
    EXPECT_TRUE(test::ExpectNear(w, src, test::Tol<float>()));
  });
}

TYPED_TEST(VectorTest, AssignmentFromViewOfItselfResizes) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Vector<Real> v = test::RandomVector<Real>(9, &rng);
  const Vector<Real> part(v.Range(2, 5));
  v = v.Range(2, 5);
  EXPECT_TRUE(test::ExpectNear(v, part, 0));
}

TYPED_TEST(VectorTest, RemoveElementShiftsLaterElements) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Vector<Real> v = test::RandomVector<Real>(5, &rng);
  const Vector<Real> orig(v);
  v.RemoveElement(1);
  ASSERT_EQ(v.Dim(), 4);
  EXPECT_EQ(v(0), orig(0));
  EXPECT_EQ(v(1), orig(2));
  EXPECT_EQ(v(3), orig(4));
  EXPECT_TRUE(test::ThrowsWith([&] { v.RemoveElement(4); }, "4"));
}

TYPED_TEST(VectorTest, SubVectorsViewStorage) {
  using Real = TypeParam;
  Vector<Real> v(10);
  SubVector<Real> r = v.Range(3, 4);
  r.Set(2);
  EXPECT_EQ(v(3), 2);
  EXPECT_EQ(v(6), 2);
  EXPECT_EQ(v(7), 0);
  SubVector<Real> s(v, 8, 2);
  s(1) = 5;
  EXPECT_EQ(v(9), 5);
  SubVector<Real> raw(v.Data() + 1, 2);
  EXPECT_EQ(raw.Data(), v.Data() + 1);
  Matrix<Real> m(3, 4);
  SubVector<Real> row(m, 2);
  row(3) = 7;
  EXPECT_EQ(m(2, 3), 7);
  const Vector<Real>& cv = v;
  EXPECT_EQ(cv.Range(9, 1)(0), 5);
  EXPECT_TRUE(test::ThrowsWith([&] { v.Range(8, 3); }, "[8, 11)"));
  EXPECT_THROW(SubVector<Real>(v, -1, 1), Error);
  EXPECT_TRUE(test::ThrowsWith([&] { SubVector<Real>(m, 3); }, "row 3"));
  EXPECT_THROW(SubVector<Real>(static_cast<Real*>(nullptr), 2), Error);
}

// ---- copies
// -----------------------------------------------------------------------------------------

TYPED_TEST(VectorTest, CopyFromVecAndPtrMatchSource) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    Vector<Real> src = test::RandomVector<Real>(d, &rng);
    Vector<Real> a(d), b(d);
    a.CopyFromVec(src);
    b.CopyFromPtr(src.Data(), d);
    EXPECT_TRUE(test::ExpectNear(a, src, 0));
    EXPECT_TRUE(test::ExpectNear(b, src, 0));
    Vector<double> wide(d);
    wide.CopyFromVec(src);
    EXPECT_TRUE(test::ExpectNear(wide, src, 0));
  });
  Vector<Real> a(3), b(4);
  EXPECT_TRUE(test::ThrowsWith([&] { a.CopyFromVec(b); }, "4"));
  EXPECT_THROW(a.CopyFromPtr(b.Data(), 4), Error);
  // Overlapping, non-identical ranges are refused.
  EXPECT_TRUE(test::ThrowsWith([&] { b.Range(0, 3).CopyFromVec(b.Range(1, 3)); }, "overlaps"));
}

TYPED_TEST(VectorTest, CopyFromMatMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    const MatrixBase<Real>& M = m.View();
    Vector<Real> rows(s.rows * s.cols), cols(s.rows * s.cols);
    rows.CopyRowsFromMat(M);
    cols.CopyColsFromMat(M);
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      for (MatrixIndexT c = 0; c < s.cols; ++c) {
        ASSERT_EQ(rows(r * s.cols + c), M(r, c));
        ASSERT_EQ(cols(c * s.rows + r), M(r, c));
      }
    }
    if (s.rows > 0) {
      Vector<Real> row(s.cols);
      row.CopyRowFromMat(M, s.rows - 1);
      EXPECT_TRUE(test::ExpectNear(row, M.Row(s.rows - 1), 0));
    }
    if (s.cols > 0) {
      Vector<double> col(s.rows);
      col.CopyColFromMat(M, s.cols - 1);
      for (MatrixIndexT r = 0; r < s.rows; ++r) ASSERT_EQ(col(r), M(r, s.cols - 1));
    }
    Vector<Real> diag(std::min(s.rows, s.cols));
    diag.CopyDiagFromMat(M);
    for (MatrixIndexT i = 0; i < diag.Dim(); ++i) ASSERT_EQ(diag(i), M(i, i));
  });
  Matrix<Real> m(3, 4);
  Vector<Real> v(5);
  EXPECT_TRUE(test::ThrowsWith([&] { v.CopyRowsFromMat(m); }, "5"));
  EXPECT_TRUE(test::ThrowsWith([&] { v.CopyColFromMat(m, 4); }, "column 4"));
  EXPECT_TRUE(test::ThrowsWith([&] { v.CopyDiagFromMat(m); }, "3x4"));
}

// ---- fills and element-wise
// ---------------------------------------------------------------------------

TYPED_TEST(VectorTest, FillOpsMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    Vector<Real> v = test::RandomVector<Real>(d, &rng);
    Vector<double> expected = test::ToDouble(v);
    v.Scale(3);
    v.Add(-0.5);
    for (MatrixIndexT i = 0; i < d; ++i) expected(i) = expected(i) * 3 - 0.5;
    EXPECT_TRUE(test::ExpectNear(v, expected, test::Tol<Real>()));
    if (d > 0) {
      const Real target = v(d / 2);
      v.ReplaceValue(target, 42);
      EXPECT_EQ(v(d / 2), 42);
    }
    v.Set(1.5);
    for (MatrixIndexT i = 0; i < d; ++i) ASSERT_EQ(v(i), Real(1.5));
    v.SetZero();
    EXPECT_TRUE(v.IsZero(0));
  });
}

TYPED_TEST(VectorTest, RandomFillsAreReproducibleWithPlausibleMoments) {
  using Real = TypeParam;
  SetRandomSeed(11);
  Vector<Real> a(4097);
  a.SetRandn();
  SetRandomSeed(11);
  Vector<Real> b(4097);
  b.SetRandn();
  EXPECT_TRUE(test::ExpectNear(a, b, 0));
  EXPECT_NEAR(a.Sum() / 4097, 0.0, 0.1);
  EXPECT_NEAR(VecVec(a, a) / 4097, 1.0, 0.1);
  a.SetRandUniform();
  EXPECT_GT(a.Min(), 0);
  EXPECT_LT(a.Max(), 1);
}

TYPED_TEST(VectorTest, AddVecFamilyMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    Vector<Real> v = test::RandomVector<Real>(d, &rng);
    Vector<double> x = test::RandomVector<double>(d, &rng);
    Vector<Real> y = test::RandomVector<Real>(d, &rng);
    Vector<Real> z = test::RandomVector<Real>(d, &rng, 0.5, 2.0);
    Vector<double> expected = test::ToDouble(v);
    v.AddVec(0.5, x);
    v.AddVec2(-2.0, y);
    for (MatrixIndexT i = 0; i < d; ++i)
      expected(i) += 0.5 * static_cast<double>(static_cast<Real>(x(i))) - 2.0 * y(i) * y(i);
    EXPECT_TRUE(test::ExpectNear(v, expected, test::Tol<Real>()));
    v.AddVecVec(1.5, y, z, 0.25);
    for (MatrixIndexT i = 0; i < d; ++i) expected(i) = 0.25 * expected(i) + 1.5 * y(i) * z(i);
    EXPECT_TRUE(test::ExpectNear(v, expected, test::Tol<Real>()));
    v.AddVecDivVec(-1.0, y, z, 2.0);
    for (MatrixIndexT i = 0; i < d; ++i) expected(i) = 2.0 * expected(i) - y(i) / double(z(i));
    EXPECT_TRUE(test::ExpectNear(v, expected, test::Tol<Real>()));
    // In place: v += v doubles it.
    v.AddVec(1.0, v);
    expected.Scale(2.0);
    EXPECT_TRUE(test::ExpectNear(v, expected, test::Tol<Real>()));
  });
  Vector<Real> a(3), b(4);
  EXPECT_TRUE(test::ThrowsWith([&] { a.AddVec(1.0, b); }, "dimension 4"));
  EXPECT_THROW(a.AddVecVec(1.0, a, b, 0.0), Error);
}

TYPED_TEST(VectorTest, MulDivInvertElementsMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    Vector<Real> v = test::RandomVector<Real>(d, &rng, 0.5, 2.0);
    Vector<Real> w = test::RandomVector<Real>(d, &rng, 0.5, 2.0);
    Vector<double> expected = test::ToDouble(v);
    v.MulElements(w);
    for (MatrixIndexT i = 0; i < d; ++i) expected(i) *= w(i);
    EXPECT_TRUE(test::ExpectNear(v, expected, test::Tol<Real>()));
    Vector<double> w2 = test::RandomVector<double>(d, &rng, 0.5, 2.0);
    v.DivElements(w2);
    for (MatrixIndexT i = 0; i < d; ++i) expected(i) /= static_cast<Real>(w2(i));
    EXPECT_TRUE(test::ExpectNear(v, expected, test::Tol<Real>()));
    v.InvertElements();
    for (MatrixIndexT i = 0; i < d; ++i) expected(i) = 1.0 / expected(i);
    EXPECT_TRUE(test::ExpectNear(v, expected, test::Tol<Real>()));
  });
  Vector<Real> a(3), b(2);
  EXPECT_THROW(a.MulElements(b), Error);
  EXPECT_THROW(a.DivElements(b), Error);
}

TYPED_TEST(VectorTest, FloorAndCeilingCountChangedElements) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    Vector<Real> v = test::RandomVector<Real>(d, &rng);
    Vector<Real> floor_vec = test::RandomVector<Real>(d, &rng);
    MatrixIndexT below = 0, above = 0, below_vec = 0;
    Vector<Real> expected(v);
    for (MatrixIndexT i = 0; i < d; ++i) {
      if (expected(i) < Real(-0.2)) {
        expected(i) = -0.2;
        ++below;
      }
      if (expected(i) > Real(0.3)) {
        expected(i) = 0.3;
        ++above;
      }
    }
    MatrixIndexT floored = -1, ceiled = -1;
    v.ApplyFloor(-0.2, &floored);
    v.ApplyCeiling(0.3, &ceiled);
    EXPECT_EQ(floored, below);
    EXPECT_EQ(ceiled, above);
    EXPECT_TRUE(test::ExpectNear(v, expected, 0));
    for (MatrixIndexT i = 0; i < d; ++i) {
      if (expected(i) < floor_vec(i)) {
        expected(i) = floor_vec(i);
        ++below_vec;
      }
    }
    EXPECT_EQ(v.ApplyFloor(floor_vec), below_vec);
    EXPECT_TRUE(test::ExpectNear(v, expected, 0));
    v.ApplyFloor(0.0);
    v.ApplyCeiling(0.0);
    EXPECT_TRUE(v.IsZero(0));
  });
}

TYPED_TEST(VectorTest, MathFunctionsMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    Vector<Real> pos = test::RandomVector<Real>(d, &rng, 0.1, 3.0);
    Vector<Real> mixed = test::RandomVector<Real>(d, &rng, -3.0, 3.0);
    if (d > 1) mixed(1) = 0;
    Vector<double> e_pow(d), e_exp(d), e_log(d), e_abs(d), e_pabs(d), e_pabs_sign(d);
    for (MatrixIndexT i = 0; i < d; ++i) {
      const double p = pos(i), m = mixed(i);
      e_pow(i) = std::pow(p, 1.7);
      e_exp(i) = std::exp(m);
      e_log(i) = std::log(p);
      e_abs(i) = std::abs(m);
      e_pabs(i) = m == 0 ? 0.0 : std::pow(std::abs(m), -0.5);
      e_pabs_sign(i) = m == 0 ? 0.0 : (m < 0 ? -1 : 1) * std::pow(std::abs(m), 2.5);
    }
    Vector<Real> v(pos);
    v.ApplyPow(1.7);
    EXPECT_TRUE(test::ExpectNear(v, e_pow, test::Tol<Real>()));
    v = pos;
    v.ApplyLog();
    EXPECT_TRUE(test::ExpectNear(v, e_log, test::Tol<Real>()));
    v = mixed;
    v.ApplyExp();
    EXPECT_TRUE(test::ExpectNear(v, e_exp, test::Tol<Real>()));
    v = mixed;
    v.ApplyAbs();
    EXPECT_TRUE(test::ExpectNear(v, e_abs, 0));
    v = mixed;
    v.ApplyPowAbs(-0.5);
    EXPECT_TRUE(test::ExpectNear(v, e_pabs, test::Tol<Real>()));
    v = mixed;
    v.ApplyPowAbs(2.5, true);
    EXPECT_TRUE(test::ExpectNear(v, e_pabs_sign, test::Tol<Real>()));
  });
}

TYPED_TEST(VectorTest, SigmoidAndTanhMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    Vector<Real> x = test::RandomVector<Real>(d, &rng, -40, 40);
    Vector<double> e_sig(d), e_tanh(d);
    for (MatrixIndexT i = 0; i < d; ++i) {
      e_sig(i) = 1.0 / (1.0 + std::exp(-static_cast<double>(x(i))));
      e_tanh(i) = std::tanh(static_cast<double>(x(i)));
    }
    Vector<Real> y(d);
    y.Sigmoid(x);
    EXPECT_TRUE(test::ExpectNear(y, e_sig, test::Tol<Real>()));
    x.Tanh(x);
    EXPECT_TRUE(test::ExpectNear(x, e_tanh, test::Tol<Real>()));
  });
}

TYPED_TEST(VectorTest, SoftMaxIsStableForLargeInputs) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    if (d == 0) return;
    Vector<Real> x = test::RandomVector<Real>(d, &rng, 500, 800);
    double max = -1e300;
    for (MatrixIndexT i = 0; i < d; ++i) max = std::max(max, static_cast<double>(x(i)));
    double sum = 0;
    for (MatrixIndexT i = 0; i < d; ++i) sum += std::exp(x(i) - max);
    const double lse = max + std::log(sum);
    Vector<double> e_soft(d), e_log(d);
    for (MatrixIndexT i = 0; i < d; ++i) {
      e_log(i) = x(i) - lse;
      e_soft(i) = std::exp(e_log(i));
    }
    EXPECT_TRUE(test::ScalarNear(x.LogSumExp(), lse, test::Tol<Real>()));
    Vector<Real> soft(x), logsoft(x);
    EXPECT_TRUE(test::ScalarNear(soft.ApplySoftMax(), lse, test::Tol<Real>()));
    EXPECT_TRUE(test::ScalarNear(logsoft.ApplyLogSoftMax(), lse, test::Tol<Real>()));
    // Log-probabilities near -300 lose float precision relative to 800-sized inputs.
    EXPECT_TRUE(test::ExpectNear(soft, e_soft, 100 * test::Tol<Real>()));
    EXPECT_TRUE(test::ExpectNear(logsoft, e_log, 100 * test::Tol<Real>()));
    EXPECT_NEAR(soft.Sum(), 1.0, 1e-4);
  });
  Vector<Real> empty;
  EXPECT_THROW(empty.ApplySoftMax(), Error);
  EXPECT_THROW(empty.LogSumExp(), Error);
}

TYPED_TEST(VectorTest, LogSumExpPrunesSmallTerms) {
  using Real = TypeParam;
  Vector<Real> v(3);
  v(0) = 0;
  v(1) = -1;
  v(2) = -30;
  const double full = std::log(1 + std::exp(-1.0) + std::exp(-30.0));
  const double pruned = std::log(1 + std::exp(-1.0));
  EXPECT_TRUE(test::ScalarNear(v.LogSumExp(), full, test::Tol<Real>()));
  EXPECT_TRUE(test::ScalarNear(v.LogSumExp(10), pruned, test::Tol<Real>()));
}

// ---- with matrices
// ------------------------------------------------------------------------------------

TYPED_TEST(VectorTest, AddMatVecMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    for (MatrixTransposeType t : {kNoTrans, kTrans}) {
      const MatrixIndexT out_dim = t == kNoTrans ? s.rows : s.cols;
      const MatrixIndexT in_dim = t == kNoTrans ? s.cols : s.rows;
      Vector<Real> x = test::RandomVector<Real>(in_dim, &rng);
      Vector<Real> y = test::RandomVector<Real>(out_dim, &rng);
      Vector<double> expected(out_dim);
      for (MatrixIndexT i = 0; i < out_dim; ++i) {
        double sum = 0;
        for (MatrixIndexT k = 0; k < in_dim; ++k)
          sum += (t == kNoTrans ? m.View()(i, k) : m.View()(k, i)) * static_cast<double>(x(k));
        expected(i) = 0.5 * y(i) + 2.0 * sum;
      }
      y.AddMatVec(2.0, m.View(), t, x, 0.5);
      // Dot products of up to 4097 terms: float error grows with the length.
      EXPECT_TRUE(test::ExpectNear(y, expected, 20 * test::Tol<Real>())) << (t == kTrans);
    }
  });
  Matrix<Real> m(3, 4);
  Vector<Real> x(3), y(3);
  EXPECT_TRUE(test::ThrowsWith([&] { y.AddMatVec(1.0, m, kNoTrans, x, 0.0); }, "3x4"));
  Vector<Real> big(12);
  EXPECT_TRUE(test::ThrowsWith(
      [&] { big.Range(0, 3).AddMatVec(1.0, m, kNoTrans, big.Range(2, 4), 0.0); }, "overlaps"));
}

TYPED_TEST(VectorTest, RowColAndDiagSumsMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    const MatrixBase<Real>& M = m.View();
    Vector<Real> row_sum = test::RandomVector<Real>(s.cols, &rng);
    Vector<Real> col_sum = test::RandomVector<Real>(s.rows, &rng);
    Vector<Real> diag_rows = test::RandomVector<Real>(s.rows, &rng);
    Vector<Real> diag_cols = test::RandomVector<Real>(s.cols, &rng);
    Vector<double> e_row = test::ToDouble(row_sum), e_col = test::ToDouble(col_sum);
    Vector<double> e_dr = test::ToDouble(diag_rows), e_dc = test::ToDouble(diag_cols);
    e_row.Scale(0.5);
    e_col.Scale(0.0);
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      for (MatrixIndexT c = 0; c < s.cols; ++c) {
        e_row(c) += 2.0 * M(r, c);
        e_col(r) += -1.0 * M(r, c);
        e_dr(r) += 3.0 * M(r, c) * M(r, c);
        e_dc(c) += 3.0 * M(r, c) * M(r, c);
      }
    }
    row_sum.AddRowSumMat(2.0, M, 0.5);
    col_sum.AddColSumMat(-1.0, M, 0.0);
    diag_rows.AddDiagMat2(3.0, M, kNoTrans, 1.0);
    diag_cols.AddDiagMat2(3.0, M, kTrans, 1.0);
    EXPECT_TRUE(test::ExpectNear(row_sum, e_row, 10 * test::Tol<Real>()));
    EXPECT_TRUE(test::ExpectNear(col_sum, e_col, 10 * test::Tol<Real>()));
    EXPECT_TRUE(test::ExpectNear(diag_rows, e_dr, 10 * test::Tol<Real>()));
    EXPECT_TRUE(test::ExpectNear(diag_cols, e_dc, 10 * test::Tol<Real>()));
  });
  Matrix<Real> m(3, 4);
  Vector<Real> v(3);
  EXPECT_TRUE(test::ThrowsWith([&] { v.AddRowSumMat(1.0, m); }, "4"));
  EXPECT_THROW(v.AddDiagMat2(1.0, m, kTrans), Error);
}

TYPED_TEST(VectorTest, AddDiagMatMatMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const MatrixIndexT n = 13, k = 6;
  for (MatrixTransposeType tm : {kNoTrans, kTrans}) {
    for (MatrixTransposeType tn : {kNoTrans, kTrans}) {
      Matrix<Real> M = tm == kNoTrans ? test::RandomMatrix<Real>(n, k, &rng)
                                      : test::RandomMatrix<Real>(k, n, &rng);
      Matrix<Real> N = tn == kNoTrans ? test::RandomMatrix<Real>(k, n, &rng)
                                      : test::RandomMatrix<Real>(n, k, &rng);
      Vector<Real> v = test::RandomVector<Real>(n, &rng);
      Vector<double> expected(n);
      for (MatrixIndexT i = 0; i < n; ++i) {
        double sum = 0;
        for (MatrixIndexT j = 0; j < k; ++j)
          sum += static_cast<double>(tm == kNoTrans ? M(i, j) : M(j, i)) *
                 (tn == kNoTrans ? N(j, i) : N(i, j));
        expected(i) = 0.5 * v(i) + 2.0 * sum;
      }
      v.AddDiagMatMat(2.0, M, tm, N, tn, 0.5);
      EXPECT_TRUE(test::ExpectNear(v, expected, 10 * test::Tol<Real>())) << tm << " " << tn;
    }
  }
  Matrix<Real> a(3, 4), b(3, 4);
  Vector<Real> v(3);
  EXPECT_TRUE(test::ThrowsWith([&] { v.AddDiagMatMat(1.0, a, kNoTrans, b, kNoTrans); }, "3x4"));
}

TYPED_TEST(VectorTest, VecVecAndVecMatVecMatchReference) {
  using Real = TypeParam;
  using Other = typename std::conditional<std::is_same<Real, float>::value, double, float>::type;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    Vector<Real> a = test::RandomVector<Real>(d, &rng);
    Vector<Real> b = test::RandomVector<Real>(d, &rng);
    Vector<Other> c = test::RandomVector<Other>(d, &rng);
    double ab = 0, ac = 0;
    for (MatrixIndexT i = 0; i < d; ++i) {
      ab += static_cast<double>(a(i)) * b(i);
      ac += static_cast<double>(a(i)) * c(i);
    }
    // Absolute slack: the sums of random-sign terms can be near zero.
    const double slack = 10 * test::Tol<Real>() * std::sqrt(static_cast<double>(d) + 1);
    EXPECT_NEAR(VecVec(a, b), ab, slack);
    EXPECT_NEAR(VecVec(a, c), ac, slack);
  });
  Matrix<Real> M = test::RandomMatrix<Real>(5, 7, &rng);
  Vector<Real> v1 = test::RandomVector<Real>(5, &rng), v2 = test::RandomVector<Real>(7, &rng);
  double expected = 0;
  for (MatrixIndexT i = 0; i < 5; ++i)
    for (MatrixIndexT j = 0; j < 7; ++j) expected += static_cast<double>(v1(i)) * M(i, j) * v2(j);
  EXPECT_NEAR(VecMatVec(v1, M, v2), expected, 1e-5);
  EXPECT_TRUE(test::ThrowsWith([&] { VecVec(v1, v2); }, "7"));
  EXPECT_TRUE(test::ThrowsWith([&] { VecMatVec(v2, M, v1); }, "5x7"));
}

// ---- reductions
// ---------------------------------------------------------------------------------------

TYPED_TEST(VectorTest, ReductionsMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachDim([&](MatrixIndexT d) {
    Vector<Real> v = test::RandomVector<Real>(d, &rng, -2, 2);
    if (d > 2) v(2) = 0;
    double sum = 0, l1 = 0, l2 = 0, l3 = 0, linf = 0, nnz = 0;
    for (MatrixIndexT i = 0; i < d; ++i) {
      const double x = v(i);
      sum += x;
      l1 += std::abs(x);
      l2 += x * x;
      l3 += std::pow(std::abs(x), 3);
      linf = std::max(linf, std::abs(x));
      nnz += x != 0;
    }
    EXPECT_NEAR(v.Sum(), sum, 1e-5 * (1 + std::abs(sum)));
    EXPECT_EQ(v.Norm(0), nnz);
    EXPECT_TRUE(test::ScalarNear(v.Norm(1), l1, test::Tol<Real>()));
    EXPECT_TRUE(test::ScalarNear(v.Norm(2), std::sqrt(l2), test::Tol<Real>()));
    EXPECT_TRUE(test::ScalarNear(v.Norm(3), std::cbrt(l3), test::Tol<Real>()));
    EXPECT_EQ(v.Norm(std::numeric_limits<Real>::infinity()), static_cast<Real>(linf));
    if (d > 0) {
      MatrixIndexT imax = -1, imin = -1;
      const Real mx = v.Max(&imax), mn = v.Min(&imin);
      EXPECT_EQ(mx, v.Max());
      EXPECT_EQ(mn, v.Min());
      EXPECT_EQ(v(imax), mx);
      EXPECT_EQ(v(imin), mn);
      for (MatrixIndexT i = 0; i < d; ++i) {
        ASSERT_LE(v(i), mx);
        ASSERT_GE(v(i), mn);
      }
    }
  });
  Vector<Real> pos(3);
  pos.Set(2);
  EXPECT_TRUE(test::ScalarNear(pos.SumLog(), 3 * std::log(2.0), test::Tol<Real>()));
  Vector<Real> empty;
  EXPECT_THROW(empty.Max(), Error);
  EXPECT_THROW(empty.Min(), Error);
  EXPECT_TRUE(test::ThrowsWith([&] { pos.Norm(-1); }, "-1"));
}

TYPED_TEST(VectorTest, MaxReturnsFirstIndexOnTies) {
  using Real = TypeParam;
  Vector<Real> v(5);
  v(1) = 3;
  v(3) = 3;
  MatrixIndexT i = -1;
  EXPECT_EQ(v.Max(&i), 3);
  EXPECT_EQ(i, 1);
  EXPECT_EQ(v.Min(&i), 0);
  EXPECT_EQ(i, 0);
}

TYPED_TEST(VectorTest, ApproxEqualAndAssertEqualUseRelativeNorm) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  Vector<Real> a = test::RandomVector<Real>(50, &rng);
  Vector<Real> b(a);
  b(7) += Real(0.05) * a.Norm(2);
  EXPECT_TRUE(a.ApproxEqual(b, 0.06f));
  EXPECT_FALSE(a.ApproxEqual(b, 0.04f));
  EXPECT_TRUE(ApproxEqual(a, b, 0.06f));
  EXPECT_NO_THROW(AssertEqual(a, b, 0.06f));
  EXPECT_TRUE(test::ThrowsWith([&] { AssertEqual(a, b, 0.04f); }, "differ"));
  Vector<Real> c(49);
  EXPECT_THROW(a.ApproxEqual(c), Error);
  EXPECT_FALSE(a.IsZero());
  a.Set(1e-7);
  EXPECT_TRUE(a.IsZero());
}

TYPED_TEST(VectorTest, OutputOperatorWritesKaldiText) {
  using Real = TypeParam;
  Vector<Real> v(3);
  v(0) = 1;
  v(1) = 2;
  v(2) = 3;
  std::ostringstream os;
  os << v;
  EXPECT_NE(os.str().find("1 2 3"), std::string::npos) << os.str();
}

}  // namespace
}  // namespace cuctx
