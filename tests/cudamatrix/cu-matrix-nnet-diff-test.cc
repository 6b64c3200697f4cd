// tests/cudamatrix/cu-matrix-nnet-diff-test.cc: CuMatrix neural-net back-propagation, group ops,
// DiffXent and CompObjfAndDeriv compared with the CPU Matrix.
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
class CuMatrixNnetDiffTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMatrixNnetDiffTest, RealTypes);

// Outputs that depend on a row sum of up to 4097 products, summed in a different order on the
// GPU (tree) and the CPU (sequential, in double): 10x the element tolerance.
template <typename Real>
double RowSumTol() {
  return 10 * test::Tol<Real>();
}

// For every edge shape: out = op(a, b) against the CPU with a guarded output, then with the
// output aliasing b (in place, as back-propagation is usually run).
template <typename Real, typename CuOp, typename CpuOp>
void CheckDiffOp(CuOp cu_op, CpuOp cpu_op, double a_lo, double a_hi, double tol) {
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> a(s.rows, s.cols, !strided, &rng, a_lo, a_hi);
    Guarded<Real> b(s.rows, s.cols, strided, &rng, -2, 2);
    Guarded<Real> out(s.rows, s.cols, strided, &rng);
    Matrix<Real> expected(s.rows, s.cols);
    cpu_op(&expected, a.Host(), b.Host());
    cu_op(&out.view, a.view, b.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, tol));
    EXPECT_TRUE(out.BorderUnchanged());
    EXPECT_TRUE(test::ExpectNear(ToHost(a.view), a.Host(), 0.0)) << "input modified";
    cu_op(&b.view, a.view, b.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(b.view), expected, tol)) << "in place";
    EXPECT_TRUE(b.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixNnetDiffTest, DiffSoftmaxPerRowMatchesCpu) {
  using Real = TypeParam;
  CheckDiffOp<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& v,
                       const CuMatrixBase<Real>& d) { o->DiffSoftmaxPerRow(v, d); },
                    [](MatrixBase<Real>* o, const MatrixBase<Real>& v, const MatrixBase<Real>& d) {
                      o->DiffSoftmaxPerRow(v, d);
                    },
                    0, 1, RowSumTol<Real>());
}

TYPED_TEST(CuMatrixNnetDiffTest, DiffLogSoftmaxPerRowMatchesCpu) {
  using Real = TypeParam;
  CheckDiffOp<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& v,
                       const CuMatrixBase<Real>& d) { o->DiffLogSoftmaxPerRow(v, d); },
                    [](MatrixBase<Real>* o, const MatrixBase<Real>& v, const MatrixBase<Real>& d) {
                      o->DiffLogSoftmaxPerRow(v, d);
                    },
                    -8, 0, RowSumTol<Real>());
}

// Shapes that reach each GPU kernel of the softmax derivatives: a warp per row (up to 128 units,
// a unit being a 16-byte vector when every operand's rows are aligned, else one element), a block
// per row keeping 1 to 16 units per thread in registers (rows longer than a block), and the
// two-pass kernel for rows too long for registers (over 8192 floats / 4096 doubles aligned, 4096
// unaligned), with column counts that leave a partial vector at the end of the row.
const std::vector<test::Shape> kDiffSoftmaxShapes = {{1, 1},    {3, 5},     {2, 131},  {5, 515},
                                                     {4, 517},  {37, 1001}, {3, 1500}, {3, 4096},
                                                     {2, 4099}, {2, 6001},  {2, 8201}};

// out = op(a, b) for every shape and every pair of layouts (a in one, b and out in another),
// against the CPU; then in place with out == b and with out == a.
template <typename Real, typename CuOp, typename CpuOp>
void CheckDiffOpLayouts(CuOp cu_op, CpuOp cpu_op, double a_lo, double a_hi, double tol) {
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : kDiffSoftmaxShapes) {
    const Matrix<Real> a = test::RandomMatrix<Real>(s.rows, s.cols, &rng, a_lo, a_hi);
    const Matrix<Real> b = test::RandomMatrix<Real>(s.rows, s.cols, &rng, -2, 2);
    Matrix<Real> expected(s.rows, s.cols);
    cpu_op(&expected, a, b);
    for (test::Layout la : test::kAllLayouts) {
      for (test::Layout lb : test::kAllLayouts) {
        SCOPED_TRACE(::testing::Message() << s << ", a " << test::LayoutName(la) << ", b and out "
                                          << test::LayoutName(lb));
        test::LayoutCuMatrix<Real> ca(a, la), cb(b, lb), out(Matrix<Real>(s.rows, s.cols), lb);
        cu_op(&out.view, ca.view, cb.view);
        EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, tol));
        EXPECT_TRUE(out.OutsideUnchanged());
        EXPECT_TRUE(test::ExpectNear(ToHost(ca.view), a, 0.0)) << "input modified";
        cu_op(&cb.view, ca.view, cb.view);
        EXPECT_TRUE(test::ExpectNear(ToHost(cb.view), expected, tol)) << "in place on b";
        EXPECT_TRUE(cb.OutsideUnchanged());
        test::LayoutCuMatrix<Real> cb2(b, la);
        cu_op(&ca.view, ca.view, cb2.view);
        EXPECT_TRUE(test::ExpectNear(ToHost(ca.view), expected, tol)) << "in place on a";
        EXPECT_TRUE(ca.OutsideUnchanged());
      }
    }
  }
}

TYPED_TEST(CuMatrixNnetDiffTest, DiffSoftmaxPerRowMatchesCpuInEveryLayout) {
  using Real = TypeParam;
  CheckDiffOpLayouts<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& v,
                              const CuMatrixBase<Real>& d) { o->DiffSoftmaxPerRow(v, d); },
                           [](MatrixBase<Real>* o, const MatrixBase<Real>& v,
                              const MatrixBase<Real>& d) { o->DiffSoftmaxPerRow(v, d); },
                           0, 1, RowSumTol<Real>());
}

TYPED_TEST(CuMatrixNnetDiffTest, DiffLogSoftmaxPerRowMatchesCpuInEveryLayout) {
  using Real = TypeParam;
  CheckDiffOpLayouts<Real>([](CuMatrixBase<Real>* o, const CuMatrixBase<Real>& v,
                              const CuMatrixBase<Real>& d) { o->DiffLogSoftmaxPerRow(v, d); },
                           [](MatrixBase<Real>* o, const MatrixBase<Real>& v,
                              const MatrixBase<Real>& d) { o->DiffLogSoftmaxPerRow(v, d); },
                           -8, 0, RowSumTol<Real>());
}

// Back-propagation through a real softmax of wide rows with large inputs stays finite, and the
// derivative of each row sums to zero (softmax outputs sum to one).
TYPED_TEST(CuMatrixNnetDiffTest, DiffSoftmaxOfLargeInputsIsFiniteAndSumsToZero) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : {test::Shape{3, 4097}, test::Shape{9, 100}}) {
    SCOPED_TRACE(::testing::Message() << s);
    CuMatrix<Real> value(test::RandomMatrix<Real>(s.rows, s.cols, &rng, 500, 900));
    value.ApplySoftMaxPerRow();
    const CuMatrix<Real> diff(test::RandomMatrix<Real>(s.rows, s.cols, &rng, -1e3, 1e3));
    CuMatrix<Real> out(s.rows, s.cols);
    out.DiffSoftmaxPerRow(value, diff);
    const Matrix<Real> h = ToHost(out);
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      double sum = 0, scale = 0;
      for (MatrixIndexT c = 0; c < s.cols; ++c) {
        ASSERT_TRUE(std::isfinite(h(r, c)));
        sum += h(r, c);
        scale += std::abs(h(r, c));
      }
      EXPECT_NEAR(sum, 0.0, 100 * test::Tol<Real>() * (scale + 1)) << "row " << r;
    }
  }
}

// Group shapes: *this is s.rows x s.cols, the grouped side s.rows x (s.cols * group).
// Kaldi's property: DiffGroupPnorm == GroupPnormDeriv then MulRowsGroupMat(out_deriv), also for
// groups that are all zero (their derivative is 0 for every power, infinity included).
TYPED_TEST(CuMatrixNnetDiffTest, DiffGroupPnormMatchesGroupPnormDerivTimesOutDeriv) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (Real power : {Real(1), Real(1.234), Real(2), std::numeric_limits<Real>::infinity()})
    for (int group : {1, 3, 4}) {  // 4: whole 16-byte units per group (the vector kernel)
      SCOPED_TRACE(::testing::Message() << "power=" << power << " group=" << group);
      Matrix<Real> in = test::RandomMatrix<Real>(9, 5 * group, &rng);
      in.ApplyFloor(0.0);  // many zero elements, some all-zero groups
      for (int c = 0; c < group; ++c) in(2, c) = 0;
      Matrix<Real> out(9, 5), out_deriv = test::RandomMatrix<Real>(9, 5, &rng);
      out.GroupPnorm(in, power);
      Matrix<Real> expected(9, 5 * group);
      expected.GroupPnormDeriv(in, out, power);
      expected.MulRowsGroupMat(out_deriv);
      CuMatrix<Real> actual(9, 5 * group);
      actual.DiffGroupPnorm(CuMatrix<Real>(in), CuMatrix<Real>(out), CuMatrix<Real>(out_deriv),
                            power);
      EXPECT_TRUE(test::ExpectNear(Matrix<Real>(actual), expected, 10 * test::Tol<Real>()));
    }
}

TYPED_TEST(CuMatrixNnetDiffTest, GroupPnormAndDiffGroupPnormMatchCpu) {
  using Real = TypeParam;
  const Real inf = std::numeric_limits<Real>::infinity();
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.cols > 1000) return;  // the grouped side would be s.cols * 3 wide; nothing new
    // Groups of 32 and more take the warp-per-group kernel.
    for (int group : {1, 3, 32, 100}) {
      if (group > 3 && s.cols > 40) continue;
      for (Real power : {Real(0), Real(1), Real(2), Real(3.5), inf}) {
        SCOPED_TRACE(::testing::Message() << "group " << group << " power " << power);
        Guarded<Real> in(s.rows, s.cols * group, strided, &rng, -2, 2);
        if (s.rows > 0 && s.cols > 0) {  // a zero input: sign 0 for p = 1, +1 for p = inf
          in.original(in.top, in.left) = 0;
          in.storage(in.top, in.left) = 0;
        }
        Guarded<Real> out(s.rows, s.cols, !strided, &rng);
        Matrix<Real> expected(s.rows, s.cols);
        expected.GroupPnorm(in.Host(), power);
        out.view.GroupPnorm(in.view, power);
        // Sums of `group` powers per element, in Real on the GPU and double on the CPU.
        EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected,
                                     10 * test::Tol<Real>() * std::max(group, 3)));
        EXPECT_TRUE(out.BorderUnchanged());

        const Matrix<Real> in_host(in.Host());
        const Matrix<Real> out_deriv = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
        Guarded<Real> back(s.rows, s.cols * group, !strided, &rng);
        Matrix<Real> expected_back(s.rows, s.cols * group);
        expected_back.DiffGroupPnorm(in_host, expected, out_deriv, power);
        // Both sides use the CPU norms as out_value, so ties (|x| == out) are judged alike.
        const CuMatrix<Real> cu_out(expected), cu_out_deriv(out_deriv);
        back.view.DiffGroupPnorm(in.view, cu_out, cu_out_deriv, power);
        EXPECT_TRUE(test::ExpectNear(ToHost(back.view), expected_back, 10 * test::Tol<Real>()));
        EXPECT_TRUE(back.BorderUnchanged());
        // In place on in_value.
        in.view.DiffGroupPnorm(in.view, cu_out, cu_out_deriv, power);
        EXPECT_TRUE(test::ExpectNear(ToHost(in.view), expected_back, 10 * test::Tol<Real>()));
      }
    }
  });
}

TYPED_TEST(CuMatrixNnetDiffTest, GroupMaxAndGroupMaxDerivMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.cols > 1000) return;
    for (int group : {1, 4, 32, 100}) {  // 32 and up: the warp-per-group kernel
      if (group > 4 && s.cols > 40) continue;
      SCOPED_TRACE(::testing::Message() << "group " << group);
      Guarded<Real> in(s.rows, s.cols * group, strided, &rng, -5, 5);
      Guarded<Real> out(s.rows, s.cols, !strided, &rng);
      Matrix<Real> expected(s.rows, s.cols);
      expected.GroupMax(in.Host());
      out.view.GroupMax(in.view);
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0));
      EXPECT_TRUE(out.BorderUnchanged());
      Guarded<Real> deriv(s.rows, s.cols * group, !strided, &rng);
      Matrix<Real> expected_deriv(s.rows, s.cols * group);
      expected_deriv.GroupMaxDeriv(in.Host(), expected);
      deriv.view.GroupMaxDeriv(in.view, out.view);
      EXPECT_TRUE(test::ExpectNear(ToHost(deriv.view), expected_deriv, 0.0));
      EXPECT_TRUE(deriv.BorderUnchanged());
    }
  });
}

TYPED_TEST(CuMatrixNnetDiffTest, DiffXentMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.rows > 0 && s.cols == 0) return;  // no valid target; see DiffXentRejectsBadTargets
    Guarded<Real> post(s.rows, s.cols, strided, &rng, 0.01, 1);
    const std::vector<int32> tgt = test::RandomIndices(s.rows, s.cols, false, &rng);
    Matrix<Real> expected(post.Host());
    Vector<Real> expected_log;
    expected.DiffXent(tgt, &expected_log);
    CuVector<Real> log_post(2);
    post.view.DiffXent(CuArray<int32>(tgt), &log_post);
    EXPECT_TRUE(test::ExpectNear(ToHost(post.view), expected, test::Tol<Real>()));
    EXPECT_TRUE(test::ExpectNear(ToHost(log_post), expected_log, test::Tol<Real>()));
    EXPECT_TRUE(post.BorderUnchanged());
  });
}

// CPU mode checks the targets and throws; GPU mode cannot without a wait, so the row is left
// alone and its log-posterior is NaN (see the header).
TYPED_TEST(CuMatrixNnetDiffTest, DiffXentRejectsBadTargets) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> post = test::RandomMatrix<Real>(3, 4, &rng, 0.1, 1);
  CuMatrix<Real> m(post);
  CuVector<Real> log_post;
  test::ExpectErrorContaining(
      [&] {
        m.DiffXent(CuArray<int32>(std::vector<int32>{0, 1}), &log_post);
      },
      "2 entries");
  test::ExpectErrorContaining(
      [&] {
        m.DiffXent(CuArray<int32>(std::vector<int32>{0, 1, 2}), nullptr);
      },
      "null");
  const CuArray<int32> bad(std::vector<int32>{0, 4, 1});
  if (!test::GpuEnabled()) {
    test::ExpectErrorContaining([&] { m.DiffXent(bad, &log_post); }, "tgt[1] = 4");
    EXPECT_TRUE(test::ExpectNear(ToHost(m), post, 0.0)) << "changed before the throw";
    return;
  }
  m.DiffXent(bad, &log_post);
  const Vector<Real> h = ToHost(log_post);
  EXPECT_TRUE(std::isnan(h(1)));
  EXPECT_TRUE(test::ExpectNear(ToHost(m).Row(1), post.Row(1), 0.0));
  EXPECT_NEAR(h(0), std::log(post(0, 0)), test::Tol<Real>());
}

TYPED_TEST(CuMatrixNnetDiffTest, CompObjfAndDerivMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : {test::Shape{1, 1}, test::Shape{17, 33}, test::Shape{300, 7}}) {
    for (int n : {0, 1, 50, 5000}) {
      SCOPED_TRACE(::testing::Message() << s << " elements " << n);
      const Matrix<Real> a = test::RandomMatrix<Real>(s.rows, s.cols, &rng, 0.05, 1);
      const Matrix<Real> start = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
      std::vector<MatrixElement<Real>> elements;
      // Repeated (row, column) pairs are common with n >> rows * cols.
      for (int i = 0; i < n; ++i)
        elements.push_back({static_cast<MatrixIndexT>(rng.Int(0, s.rows - 1)),
                            static_cast<MatrixIndexT>(rng.Int(0, s.cols - 1)),
                            static_cast<Real>(rng.Uniform(0, 2))});
      Matrix<Real> expected(start);
      Real objf = 0, weight = 0, cu_objf = -1, cu_weight = -1;
      expected.CompObjfAndDeriv(elements, a, &objf, &weight);
      CuMatrix<Real> deriv(start);
      deriv.CompObjfAndDeriv(elements, CuMatrix<Real>(a), &cu_objf, &cu_weight);
      // Up to 5000 adds into one element, atomic (in any order) on the GPU, in Real either way.
      EXPECT_TRUE(test::ExpectNear(ToHost(deriv), expected, 100 * test::Tol<Real>()));
      EXPECT_TRUE(test::ScalarNear(cu_objf, objf, 10 * test::Tol<Real>()));
      EXPECT_TRUE(test::ScalarNear(cu_weight, weight, 10 * test::Tol<Real>()));
    }
  }
}

TYPED_TEST(CuMatrixNnetDiffTest, ParametricReluAndDiffMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const Vector<Real> alpha = test::RandomVector<Real>(s.cols, &rng, 0.5, 2);
    const Vector<Real> beta = test::RandomVector<Real>(s.cols, &rng, -0.5, 0.5);
    const CuVector<Real> cu_alpha(alpha), cu_beta(beta);
    Guarded<Real> in(s.rows, s.cols, strided, &rng, -3, 3);
    Guarded<Real> diff(s.rows, s.cols, !strided, &rng, -3, 3);
    Guarded<Real> out(s.rows, s.cols, strided, &rng);
    Matrix<Real> expected(s.rows, s.cols), expected_diff(s.rows, s.cols);
    expected.ParametricRelu(in.Host(), alpha, beta);
    expected_diff.DiffParametricRelu(in.Host(), diff.Host(), alpha, beta);
    out.view.ParametricRelu(in.view, cu_alpha, cu_beta);
    EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, test::Tol<Real>()));
    EXPECT_TRUE(out.BorderUnchanged());
    diff.view.DiffParametricRelu(in.view, diff.view, cu_alpha, cu_beta);
    EXPECT_TRUE(test::ExpectNear(ToHost(diff.view), expected_diff, test::Tol<Real>()));
    EXPECT_TRUE(diff.BorderUnchanged());
    in.view.ParametricRelu(in.view, cu_alpha, cu_beta);
    EXPECT_TRUE(test::ExpectNear(ToHost(in.view), expected, test::Tol<Real>())) << "in place";
    EXPECT_TRUE(in.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixNnetDiffTest, ThrowsOnMisuseNamingShapes) {
  using Real = TypeParam;
  CuMatrix<Real> a(3, 4), b(3, 5), wide(3, 10), c(4, 4);
  test::ExpectErrorContaining([&] { a.DiffSoftmaxPerRow(a, b); }, "3x5");
  test::ExpectErrorContaining([&] { a.DiffLogSoftmaxPerRow(c, a); }, "4x4");
  test::ExpectErrorContaining([&] { a.GroupPnorm(wide, 2); }, "3x10");
  test::ExpectErrorContaining([&] { a.GroupPnorm(CuMatrix<Real>(3, 8), -1); }, "power");
  test::ExpectErrorContaining([&] { a.GroupMax(c); }, "4x4");
  test::ExpectErrorContaining([&] { wide.GroupMaxDeriv(wide, a); }, "3x4");
  test::ExpectErrorContaining([&] { wide.DiffGroupPnorm(wide, b, a, 2); }, "3x4");
  CuVector<Real> v4(4), v5(5);
  test::ExpectErrorContaining([&] { a.ParametricRelu(a, v4, v5); }, "beta (5)");
  test::ExpectErrorContaining([&] { a.DiffParametricRelu(a, b, v4, v4); }, "3x5");
  Real objf, weight;
  const std::vector<MatrixElement<Real>> bad = {{0, 0, 1}, {3, 1, 1}};
  test::ExpectErrorContaining(
      [&] { a.CompObjfAndDeriv(bad, CuMatrix<Real>(3, 4), &objf, &weight); }, "element 1 = (3, 1)");
  test::ExpectErrorContaining([&] { a.CompObjfAndDeriv({}, CuMatrix<Real>(b), &objf, &weight); },
                              "3x5");
}

TYPED_TEST(CuMatrixNnetDiffTest, ThrowsOnOverlap) {
  using Real = TypeParam;
  CuMatrix<Real> m(4, 12);
  CuSubMatrix<Real> left(m, 0, 4, 0, 4), shifted(m, 0, 4, 1, 4), all(m, 0, 4, 0, 12);
  test::ExpectErrorContaining([&] { left.DiffSoftmaxPerRow(shifted, shifted); }, "overlap");
  test::ExpectErrorContaining([&] { left.GroupPnorm(all, 2); }, "overlaps");
  test::ExpectErrorContaining([&] { left.GroupMax(all); }, "overlaps");
  test::ExpectErrorContaining([&] { all.GroupMaxDeriv(all, left); }, "overlaps");
  CuSubVector<Real> row(m.Row(0), 0, 4);
  CuVector<Real> ok(4);
  test::ExpectErrorContaining([&] { left.ParametricRelu(left, row, ok); }, "alpha overlaps");
  CuMatrix<Real> sq(4, 4);
  Real objf, weight;
  test::ExpectErrorContaining([&] { sq.CompObjfAndDeriv({}, sq, &objf, &weight); }, "A overlaps");
}

}  // namespace
}  // namespace cuctx
