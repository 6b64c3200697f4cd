// tests/cudamatrix/cu-math-test.cc: the cu:: helpers compared with straightforward references
// written here (there is no CPU library version to compare with).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-math.h"

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
class CuMathTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMathTest, RealTypes);

// ---- references: one element at a time, in double

// y = f x per row, plus log(target / f) in column D when log_col.
Matrix<double> NormalizeReference(const Matrix<double>& x, double target, bool log_col) {
  const int d = x.NumCols();
  Matrix<double> y(x.NumRows(), d + (log_col ? 1 : 0));
  for (int r = 0; r < x.NumRows(); ++r) {
    double ss = 0;
    for (int c = 0; c < d; ++c) ss += x(r, c) * x(r, c);
    const double mean_sq = d > 0 ? ss / (d * target * target) : 0.0;
    const double f = 1.0 / std::sqrt(std::max(mean_sq, std::pow(2.0, -66)));
    for (int c = 0; c < d; ++c) y(r, c) = f * x(r, c);
    if (log_col) y(r, d) = std::log(target / f);
  }
  return y;
}

// The derivative of NormalizeReference's outputs, in the closed form of cu-math.h.
Matrix<double> DiffNormalizeReference(const Matrix<double>& x, const Matrix<double>& dy,
                                      double target, bool log_col) {
  const int d = x.NumCols();
  const double floor = std::pow(2.0, -66), scale = d * target * target;
  Matrix<double> dx(x.NumRows(), d);
  for (int r = 0; r < x.NumRows(); ++r) {
    double ss = 0, dot = 0;
    for (int c = 0; c < d; ++c) {
      ss += x(r, c) * x(r, c);
      dot += x(r, c) * dy(r, c);
    }
    const double p = ss / scale, f = 1.0 / std::sqrt(std::max(p, floor));
    double along_x = p > floor ? -f * f * f / scale * dot : 0.0;
    if (log_col) along_x += dy(r, d) / std::max(ss, d * floor);
    for (int c = 0; c < d; ++c) dx(r, c) = f * dy(r, c) + along_x * x(r, c);
  }
  return dx;
}

TYPED_TEST(CuMathTest, RandomizeCopiesTheChosenRows) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.rows == 0) return;
    const Matrix<Real> src = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    for (int count : {s.rows, s.rows / 2}) {
      const std::vector<int32> idx = test::RandomIndices(count, s.rows, false, &rng);
      Guarded<Real> tgt(s.rows, s.cols, strided, &rng);
      Matrix<Real> expected = tgt.Host();
      for (int r = 0; r < count; ++r)
        for (int c = 0; c < s.cols; ++c) expected(r, c) = src(idx[r], c);
      cu::Randomize(CuMatrix<Real>(src), CuArray<int32>(idx), &tgt.view);
      EXPECT_TRUE(test::ExpectNear(ToHost(tgt.view), expected, 0.0)) << count;
      EXPECT_TRUE(tgt.BorderUnchanged());
    }
  });
}

TYPED_TEST(CuMathTest, SpliceClampsRowsAtBothEnds) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const std::vector<int32> offsets = {-3, 0, 1, 5, -100000, 2000000000};
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.cols > 1000) return;  // 4097 * 6 columns add nothing new
    const int n = s.cols, k_max = static_cast<int>(offsets.size());
    Guarded<Real> src(s.rows, n, !strided, &rng);
    Guarded<Real> tgt(s.rows, n * k_max, strided, &rng);
    const Matrix<Real> h = src.Host();
    Matrix<Real> expected(s.rows, n * k_max);
    for (int i = 0; i < s.rows; ++i)
      for (int k = 0; k < k_max; ++k) {
        const long long wanted = static_cast<long long>(i) + offsets[k];
        const int from = static_cast<int>(std::min<long long>(std::max(wanted, 0LL), s.rows - 1));
        for (int j = 0; j < n; ++j) expected(i, k * n + j) = h(from, j);
      }
    cu::Splice(src.view, CuArray<int32>(offsets), &tgt.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(tgt.view), expected, 0.0));
    EXPECT_TRUE(tgt.BorderUnchanged());
  });
}

TYPED_TEST(CuMathTest, CopyGathersColumns) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.cols == 0 && s.rows > 0) return;
    Guarded<Real> src(s.rows, s.cols, !strided, &rng);
    const int tgt_cols = s.cols > 0 ? s.cols + 3 : 0;
    const std::vector<int32> idx = test::RandomIndices(tgt_cols, std::max(s.cols, 1), false, &rng);
    Guarded<Real> tgt(s.rows, tgt_cols, strided, &rng);
    const Matrix<Real> h = src.Host();
    Matrix<Real> expected(s.rows, tgt_cols);
    for (int i = 0; i < s.rows; ++i)
      for (int j = 0; j < tgt_cols; ++j) expected(i, j) = h(i, idx[j]);
    cu::Copy(src.view, CuArray<int32>(idx), &tgt.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(tgt.view), expected, 0.0));
    EXPECT_TRUE(tgt.BorderUnchanged());
  });
}

TYPED_TEST(CuMathTest, EnsureNonzeroBoundsValuesAwayFromZero) {
  using Real = TypeParam;
  const Real eps = Real(0.25);
  auto bound = [eps](Real x) { return std::abs(x) >= eps ? x : (x >= 0 ? eps : -eps); };
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> src(s.rows, s.cols, !strided, &rng);
    Guarded<Real> dest(s.rows, s.cols, strided, &rng);
    Matrix<Real> expected = src.Host();
    for (int r = 0; r < s.rows; ++r)
      for (int c = 0; c < s.cols; ++c) expected(r, c) = bound(expected(r, c));
    cu::EnsureNonzero(src.view, eps, &dest.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(dest.view), expected, 0.0));
    EXPECT_TRUE(dest.BorderUnchanged());
    cu::EnsureNonzero(src.view, eps, &src.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(src.view), expected, 0.0)) << "in place";
    EXPECT_TRUE(src.BorderUnchanged());
  });
  // Exact boundary values and signed zeros; the vector form.
  Vector<Real> v(6);
  const Real vals[] = {0, -0.0f, eps, -eps, Real(0.1), Real(-0.1)};
  for (int i = 0; i < 6; ++i) v(i) = vals[i];
  CuVector<Real> cu_v(v), cu_out(6);
  cu::EnsureNonzero(cu_v, eps, &cu_out);
  Vector<Real> out(6);
  cu_out.CopyToVec(&out);
  const Real want[] = {eps, eps, eps, -eps, eps, -eps};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out(i), want[i]) << i;
  cu::EnsureNonzero(cu_v, eps, &cu_v);
  cu_v.CopyToVec(&out);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out(i), want[i]) << "in place " << i;
}

TYPED_TEST(CuMathTest, NormalizePerRowMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  // Row sums of up to 4097 squares, in Real on the GPU.
  const double tol = 10 * test::Tol<Real>();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    for (bool log_col : {false, true}) {
      for (double target : {1.0, 0.3}) {
        SCOPED_TRACE(::testing::Message() << "log " << log_col << " target " << target);
        Guarded<Real> in(s.rows, s.cols, !strided, &rng, -3, 3);
        if (s.rows > 1 && s.cols > 0) {  // a zero row hits the floor
          for (int c = 0; c < s.cols; ++c) in.original(in.top + 1, in.left + c) = 0;
          in.storage.CopyFromMat(in.original);
        }
        const int out_cols = s.cols + (log_col ? 1 : 0);
        Guarded<Real> out(s.rows, out_cols, strided, &rng);
        const Matrix<double> expected =
            NormalizeReference(Matrix<double>(in.Host()), target, log_col);
        cu::NormalizePerRow(in.view, static_cast<Real>(target), log_col, &out.view);
        EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, tol));
        EXPECT_TRUE(out.BorderUnchanged());
        // In place: in is the first columns of out.
        Guarded<Real> both(s.rows, out_cols, strided, &rng, -3, 3);
        CuSubMatrix<Real> first(both.view, 0, s.rows, 0, s.cols);
        first.CopyFromMat(in.view);
        cu::NormalizePerRow(first, static_cast<Real>(target), log_col, &both.view);
        EXPECT_TRUE(test::ExpectNear(ToHost(both.view), expected, tol)) << "in place";
        EXPECT_TRUE(both.BorderUnchanged());
      }
    }
  });
}

TYPED_TEST(CuMathTest, DiffNormalizePerRowMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const double tol = 10 * test::Tol<Real>();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    for (bool log_col : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "log " << log_col);
      const double target = 0.7;
      Guarded<Real> in(s.rows, s.cols, !strided, &rng, -2, 2);
      if (s.rows > 1 && s.cols > 0) {
        for (int c = 0; c < s.cols; ++c) in.original(in.top + 1, in.left + c) = 0;
        in.storage.CopyFromMat(in.original);
      }
      const int out_cols = s.cols + (log_col ? 1 : 0);
      Guarded<Real> out_deriv(s.rows, out_cols, strided, &rng);
      const Matrix<double> expected = DiffNormalizeReference(
          Matrix<double>(in.Host()), Matrix<double>(out_deriv.Host()), target, log_col);
      // A nonzero one-column row without the log column normalizes to +-target whatever its
      // value, so its derivative is 0 and both paths return rounding noise: compare each element
      // against a bound with an absolute part (scaled by the incoming derivative) there, and
      // relatively everywhere else.
      const bool one_column = s.cols == 1 && !log_col;
      auto near = [&](const Matrix<Real>& got) -> ::testing::AssertionResult {
        if (!one_column) return test::ExpectNear(got, expected, tol);
        for (MatrixIndexT r = 0; r < got.NumRows(); ++r) {
          const double e = expected(r, 0), g = got(r, 0);
          if (std::abs(g - e) > tol * (std::abs(e) + 1.0 + std::abs(out_deriv.Host()(r, 0))))
            return ::testing::AssertionFailure()
                   << "row " << r << ": derivative " << g << ", expected " << e;
        }
        return ::testing::AssertionSuccess();
      };
      Guarded<Real> in_deriv(s.rows, s.cols, strided, &rng);
      cu::DiffNormalizePerRow(in.view, out_deriv.view, static_cast<Real>(target), log_col,
                              &in_deriv.view);
      EXPECT_TRUE(near(ToHost(in_deriv.view)));
      EXPECT_TRUE(in_deriv.BorderUnchanged());
      // In place on out_deriv's first columns, then on in_value.
      CuSubMatrix<Real> first(out_deriv.view, 0, s.rows, 0, s.cols);
      cu::DiffNormalizePerRow(in.view, out_deriv.view, static_cast<Real>(target), log_col, &first);
      EXPECT_TRUE(near(ToHost(first))) << "on out_deriv";
      EXPECT_TRUE(out_deriv.BorderUnchanged());
      Guarded<Real> od(s.rows, out_cols, strided, &rng);
      od.view.CopyFromMat(out_deriv.Host());  // its original contents
      cu::DiffNormalizePerRow(in.view, od.view, static_cast<Real>(target), log_col, &in.view);
      EXPECT_TRUE(near(ToHost(in.view))) << "on in_value";
    }
  });
}

// The derivative agrees with central differences of NormalizePerRow's outputs, away from the
// floor.
TYPED_TEST(CuMathTest, DiffNormalizePerRowIsTheGradient) {
  const int d = 5;
  test::Rng rng = test::MakeRng();
  const Matrix<double> x = test::RandomMatrix<double>(1, d, &rng, -1, 1);
  const Matrix<double> w = test::RandomMatrix<double>(1, d + 1, &rng, -1, 1);
  auto objective = [&](const Matrix<double>& in) {
    CuMatrix<double> out(1, d + 1);
    cu::NormalizePerRow(CuMatrix<double>(in), 0.5, true, &out);
    const Matrix<double> h = ToHost(out);
    double f = 0;
    for (int c = 0; c <= d; ++c) f += w(0, c) * h(0, c);
    return f;
  };
  CuMatrix<double> grad(1, d);
  cu::DiffNormalizePerRow(CuMatrix<double>(x), CuMatrix<double>(w), 0.5, true, &grad);
  const Matrix<double> g = ToHost(grad);
  for (int c = 0; c < d; ++c) {
    Matrix<double> plus(x), minus(x);
    plus(0, c) += 1e-6;
    minus(0, c) -= 1e-6;
    EXPECT_NEAR(g(0, c), (objective(plus) - objective(minus)) / 2e-6, 1e-6) << c;
  }
}

// CPU mode checks index arrays (GPU mode cannot without a wait; see cu-math.h).
TYPED_TEST(CuMathTest, ThrowsOnMisuse) {
  using Real = TypeParam;
  CuMatrix<Real> a(3, 4), b(3, 5), c(3, 8), d(4, 4);
  const CuArray<int32> two(std::vector<int32>{0, 1});
  test::ExpectErrorContaining([&] { cu::Randomize(a, two, &b); }, "3x5");
  test::ExpectErrorContaining(
      [&] { cu::Randomize(a, CuArray<int32>(std::vector<int32>(4, 0)), &a); }, "4 entries");
  test::ExpectErrorContaining([&] { cu::Splice(a, two, &b); }, "2 frame offsets");
  test::ExpectErrorContaining([&] { cu::Copy(a, two, &d); }, "4x4");
  test::ExpectErrorContaining([&] { cu::EnsureNonzero(a, Real(0), &a); }, "epsilon");
  test::ExpectErrorContaining([&] { cu::EnsureNonzero(a, Real(1), &b); }, "3x5");
  CuVector<Real> v3(3), v4(4);
  test::ExpectErrorContaining([&] { cu::EnsureNonzero(v3, Real(1), &v4); }, "3");
  test::ExpectErrorContaining([&] { cu::NormalizePerRow(a, Real(1), true, &a); }, "3x4");
  test::ExpectErrorContaining([&] { cu::NormalizePerRow(a, Real(0), false, &a); }, "target_rms");
  test::ExpectErrorContaining([&] { cu::DiffNormalizePerRow(a, a, Real(1), true, &a); }, "3x4");
  test::ExpectErrorContaining([&] { cu::DiffNormalizePerRow(a, b, Real(1), false, &a); }, "3x5");
  // Overlap.
  CuSubMatrix<Real> left(c, 0, 3, 0, 4), right(c, 0, 3, 3, 4);
  test::ExpectErrorContaining([&] { cu::Randomize(left, two, &right); }, "overlaps");
  test::ExpectErrorContaining([&] { cu::EnsureNonzero(left, Real(1), &right); }, "overlaps");
  test::ExpectErrorContaining([&] { cu::NormalizePerRow(right, Real(1), false, &left); },
                              "overlaps");
  if (test::GpuEnabled()) return;
  CuSubMatrix<Real> b_left(b, 0, 3, 0, 4);
  test::ExpectErrorContaining(
      [&] {
        cu::Randomize(a, CuArray<int32>(std::vector<int32>{0, 3}), &b_left);
      },
      "copy_from_idx[1] = 3");
  test::ExpectErrorContaining(
      [&] {
        cu::Copy(a, CuArray<int32>(std::vector<int32>{0, 4, 1, 2, 3}), &b);
      },
      "copy_from_indices[1] = 4");
}

}  // namespace
}  // namespace cuctx
