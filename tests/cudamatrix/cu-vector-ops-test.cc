// tests/cudamatrix/cu-vector-ops-test.cc: the CuVector vector family (copies from matrices,
// diagonals of products, element-wise maps, norms) against references computed on the host.
// SPDX-License-Identifier: Apache-2.0
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
#include <string>
#include <type_traits>
#include <vector>

namespace cuctx {
namespace {

// Vector lengths for the element-wise ops: empty, one element, off the block multiples, and
// longer than one reduction pass of 256 blocks x 256 threads.
const std::vector<int> kVectorDims = {0, 1, 17, 257, 4097, 70001};

template <typename Real>
using Guarded = test::GuardedCuMatrix<Real>;
template <typename Real>
using OtherPrecision =
    typename std::conditional<std::is_same<Real, float>::value, double, float>::type;

// The vector under test: the one row of a guarded matrix view, so that random sentinels surround
// it and must survive every operation.
template <typename Real>
class OutVector {
 public:
  OutVector(int dim, test::Rng* rng, double lo = -1, double hi = 1)
      : guarded_(1, dim, /*strided=*/true, rng, lo, hi), view_(guarded_.view.Row(0)) {}
  CuSubVector<Real>& View() { return view_; }
  // The view's contents before the operation, in double.
  Vector<double> Initial() const { return Vector<double>(guarded_.Host().Row(0)); }
  // The view matches `expected` within tol and no sentinel changed.
  ::testing::AssertionResult Check(const Vector<double>& expected, double tol) const {
    const ::testing::AssertionResult border = guarded_.BorderUnchanged();
    if (!border) return border;
    Vector<Real> now(view_.Dim(), kUndefined);
    view_.CopyToVec(&now);
    return test::ExpectNear(now, expected, tol);
  }

 private:
  Guarded<Real> guarded_;
  CuSubVector<Real> view_;
};

template <typename Real>
class CuVectorOpsTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuVectorOpsTest, RealTypes);

TYPED_TEST(CuVectorOpsTest, CopyRowsFromMatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> m(s.rows, s.cols, strided, &rng);
    test::TestMatrix<Real> host(s.rows, s.cols, strided, &rng);
    Vector<double> from_cu(s.rows * s.cols), from_host(s.rows * s.cols);
    const Matrix<Real> mh = m.Host();
    for (int r = 0; r < s.rows; ++r)
      for (int c = 0; c < s.cols; ++c) {
        from_cu(r * s.cols + c) = mh(r, c);
        from_host(r * s.cols + c) = host.View()(r, c);
      }
    OutVector<Real> a(s.rows * s.cols, &rng), b(s.rows * s.cols, &rng);
    a.View().CopyRowsFromMat(m.view);
    b.View().CopyRowsFromMat(host.View());
    EXPECT_TRUE(a.Check(from_cu, 0));
    EXPECT_TRUE(b.Check(from_host, 0));
    EXPECT_TRUE(m.BorderUnchanged());
  });
  CuVector<Real> v(5);
  CuMatrix<Real> M(2, 3);
  test::ExpectErrorContaining([&] { v.CopyRowsFromMat(M); }, "2x3");
  test::ExpectErrorContaining([&] { v.CopyRowsFromMat(Matrix<Real>(2, 3)); }, "2x3");
  CuMatrix<Real> row(1, 6);
  CuSubVector<Real> inside = row.Row(0);
  test::ExpectErrorContaining([&] { inside.CopyRowsFromMat(row); }, "overlaps");
}

TYPED_TEST(CuVectorOpsTest, CopyColFromMatMatchesCpuInBothPrecisions) {
  using Real = TypeParam;
  using Other = OtherPrecision<Real>;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.cols == 0) return;
    Guarded<Real> m(s.rows, s.cols, strided, &rng);
    const Matrix<Real> mh = m.Host();
    const CuMatrix<Other> other(mh);
    for (int col : {0, s.cols / 2, s.cols - 1}) {
      SCOPED_TRACE(::testing::Message() << "column " << col);
      Vector<double> expected(s.rows), expected_other(s.rows);
      for (int r = 0; r < s.rows; ++r) {
        expected(r) = mh(r, col);
        expected_other(r) = static_cast<Real>(static_cast<Other>(mh(r, col)));
      }
      OutVector<Real> a(s.rows, &rng), b(s.rows, &rng);
      a.View().CopyColFromMat(m.view, col);
      b.View().CopyColFromMat(other, col);
      EXPECT_TRUE(a.Check(expected, 0));
      EXPECT_TRUE(b.Check(expected_other, 0));
    }
    EXPECT_TRUE(m.BorderUnchanged());
  });
  CuMatrix<Real> M(4, 3);
  CuVector<Real> v(4), wrong(3);
  test::ExpectErrorContaining([&] { v.CopyColFromMat(M, -1); }, "column -1");
  test::ExpectErrorContaining([&] { v.CopyColFromMat(M, 3); }, "column 3");
  test::ExpectErrorContaining([&] { wrong.CopyColFromMat(M, 0); }, "4x3");
}

TYPED_TEST(CuVectorOpsTest, CopyDiagFromMatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> m(s.rows, s.cols, strided, &rng);
    const Matrix<Real> mh = m.Host();
    const int n = std::min(s.rows, s.cols);
    Vector<double> expected(n);
    for (int i = 0; i < n; ++i) expected(i) = mh(i, i);
    OutVector<Real> out(n, &rng);
    out.View().CopyDiagFromMat(m.view);
    EXPECT_TRUE(out.Check(expected, 0));
  });
  CuMatrix<Real> M(4, 3);
  CuVector<Real> v(4);
  test::ExpectErrorContaining([&] { v.CopyDiagFromMat(M); }, "4x3");
}

// op(X)(i, k) of a host matrix, X or X^T.
template <typename Real>
double OpAt(const MatrixBase<Real>& x, MatrixTransposeType t, int i, int k) {
  return t == kNoTrans ? x(i, k) : x(k, i);
}

// The diagonal products accumulate in double on both sides; 10x the element tolerance covers the
// final rounding to Real of sums over up to 4097 terms.
template <typename Real>
double DiagTol() {
  return 10 * test::Tol<Real>();
}

TYPED_TEST(CuVectorOpsTest, AddDiagMat2MatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> m(s.rows, s.cols, strided, &rng);
    const Matrix<Real> mh = m.Host();
    for (MatrixTransposeType t : {kNoTrans, kTrans}) {
      for (Real beta : {Real(0), Real(1), Real(-0.5)}) {
        SCOPED_TRACE(::testing::Message() << "trans " << (t == kTrans) << " beta " << beta);
        const int dim = t == kNoTrans ? s.rows : s.cols, inner = t == kNoTrans ? s.cols : s.rows;
        OutVector<Real> out(dim, &rng);
        Vector<double> expected = out.Initial();
        for (int i = 0; i < dim; ++i) {
          double sum = 0;
          // Element i of diag(op(M) op(M)^T), op(M) = M (kNoTrans) or M^T (kTrans).
          for (int k = 0; k < inner; ++k) sum += OpAt(mh, t, i, k) * OpAt(mh, t, i, k);
          expected(i) = beta * expected(i) + 0.75 * sum;
        }
        out.View().AddDiagMat2(Real(0.75), m.view, t, beta);
        EXPECT_TRUE(out.Check(expected, DiagTol<Real>()));
      }
    }
    EXPECT_TRUE(m.BorderUnchanged());
  });
  CuMatrix<Real> M(4, 3);
  CuVector<Real> v(3);
  test::ExpectErrorContaining([&] { v.AddDiagMat2(1, M, kNoTrans, 0); }, "4x3");
  CuSubVector<Real> row = M.Row(1);
  test::ExpectErrorContaining([&] { row.AddDiagMat2(1, M, kTrans, 0); }, "overlaps");
}

// For each (dim, inner): all four transpositions of M and N (packed or strided), several betas.
template <typename Real>
void CheckAddDiagMatMat(int dim, int inner, bool strided, test::Rng* rng) {
  for (MatrixTransposeType tm : {kNoTrans, kTrans}) {
    for (MatrixTransposeType tn : {kNoTrans, kTrans}) {
      SCOPED_TRACE(::testing::Message() << "dim " << dim << " inner " << inner << " transM "
                                        << (tm == kTrans) << " transN " << (tn == kTrans));
      Guarded<Real> m(tm == kNoTrans ? dim : inner, tm == kNoTrans ? inner : dim, strided, rng);
      Guarded<Real> n(tn == kNoTrans ? inner : dim, tn == kNoTrans ? dim : inner, !strided, rng);
      const Matrix<Real> mh = m.Host(), nh = n.Host();
      for (Real beta : {Real(0), Real(1), Real(-0.5)}) {
        OutVector<Real> out(dim, rng);
        Vector<double> expected = out.Initial();
        for (int i = 0; i < dim; ++i) {
          double sum = 0;
          for (int k = 0; k < inner; ++k) sum += OpAt(mh, tm, i, k) * OpAt(nh, tn, k, i);
          expected(i) = beta * expected(i) - 1.25 * sum;
        }
        out.View().AddDiagMatMat(Real(-1.25), m.view, tm, n.view, tn, beta);
        EXPECT_TRUE(out.Check(expected, DiagTol<Real>())) << "beta " << beta;
      }
      EXPECT_TRUE(m.BorderUnchanged());
      EXPECT_TRUE(n.BorderUnchanged());
    }
  }
}

TYPED_TEST(CuVectorOpsTest, AddDiagMatMatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    CheckAddDiagMatMat<Real>(s.rows, s.cols, strided, &rng);
  });
}

// ---- diagonals of products against the CPU path, per element

// Tolerance per element and call: |device - cpu| <= eps * (inner + 2) * (|alpha| * sum_k
// |op(M)(i, k) op(N)(k, i)| + |beta| * |out(i)|), eps the precision's machine epsilon: the
// classical bound for a dot product of `inner` terms in Real plus the final multiply-add. Both
// sides actually sum in double, so they differ by about one rounding of the result. For `calls`
// calls into the same output the bound is multiplied by calls, and |out| by max(1, |beta|)^2
// (enough for the two calls with |beta| = 2 made below).
template <typename Real>
Vector<double> DiagBound(const MatrixBase<Real>& m, MatrixTransposeType tm,
                         const MatrixBase<Real>& n, MatrixTransposeType tn, int dim, int inner,
                         Real alpha, Real beta, const Vector<double>& out, int calls) {
  const double eps = std::numeric_limits<Real>::epsilon();
  Vector<double> bound(dim);
  for (int i = 0; i < dim; ++i) {
    double terms = 0;
    for (int k = 0; k < inner; ++k) terms += std::abs(OpAt(m, tm, i, k) * OpAt(n, tn, k, i));
    const double old = std::isnan(out(i)) ? 0 : std::abs(out(i));
    const double grow = std::max(1.0, static_cast<double>(std::abs(beta)));
    bound(i) = eps * (inner + 2) * calls * (std::abs(alpha) * terms + grow * grow * old) +
               std::numeric_limits<Real>::min();
  }
  return bound;
}

// Passes when |actual(i) - expected(i)| <= bound(i) for every i; a NaN matches only a NaN.
template <typename Real>
::testing::AssertionResult NearPerElement(const VectorBase<Real>& actual,
                                          const VectorBase<Real>& expected,
                                          const Vector<double>& bound) {
  for (int i = 0; i < actual.Dim(); ++i) {
    const double a = actual(i), e = expected(i);
    if (std::isnan(a) || std::isnan(e)) {
      if (std::isnan(a) && std::isnan(e)) continue;
    } else if (std::abs(a - e) <= bound(i)) {
      continue;
    }
    return ::testing::AssertionFailure() << "element " << i << " of " << actual.Dim() << ": " << a
                                         << ", CPU path " << e << ", bound " << bound(i);
  }
  return ::testing::AssertionSuccess();
}

// One diagonal-product op run `calls` times on a guarded device vector (random in [-1, 1), or
// with a NaN at every third element) and on its host copy through the CPU path; compares them per
// element and checks the sentinels around the device vector.
template <typename Real, typename CuOp, typename HostOp>
void CompareDiagWithCpu(int dim, const Vector<double>& bound, int calls, bool nan_out, CuOp cu_op,
                        HostOp host_op, test::Rng* rng) {
  Guarded<Real> guarded(1, dim, /*strided=*/true, rng);
  CuSubVector<Real> out = guarded.view.Row(0);
  Vector<Real> expected(dim);
  for (int i = 0; i < dim; ++i)
    expected(i) = nan_out && i % 3 == 0 ? std::numeric_limits<Real>::quiet_NaN()
                                        : static_cast<Real>(rng->Uniform(-1, 1));
  out.CopyFromVec(expected);
  for (int c = 0; c < calls; ++c) {
    cu_op(&out);
    host_op(&expected);
  }
  Vector<Real> actual(dim, kUndefined);
  out.CopyToVec(&actual);
  EXPECT_TRUE(NearPerElement(actual, expected, bound));
  EXPECT_TRUE(guarded.BorderUnchanged());
}

// Options of one CheckDiagProducts run.
struct DiagRun {
  int calls = 1;         // repeated calls into the same output (beta applies each time)
  bool nan_out = false;  // NaN at every third output element before the calls
};

// AddDiagMatMat for all four transpositions and AddDiagMat2 for both, with operands in the given
// memory layouts (see test::Layout), against the CPU path. op(M) is dim x inner.
template <typename Real>
void CheckDiagProducts(int dim, int inner, test::Layout m_layout, test::Layout n_layout, Real beta,
                       DiagRun run, test::Rng* rng) {
  const Real alpha = Real(-1.25);
  const std::string what = std::string("dim ") + std::to_string(dim) + " inner " +
                           std::to_string(inner) + " layouts " + test::LayoutName(m_layout) +
                           " / " + test::LayoutName(n_layout) + " beta " + std::to_string(beta) +
                           " calls " + std::to_string(run.calls) + (run.nan_out ? " NaN out" : "");
  SCOPED_TRACE(what);
  Vector<double> initial(dim);  // a bound on |out| before the calls
  initial.Set(1.0);
  for (MatrixTransposeType tm : {kNoTrans, kTrans}) {
    const Matrix<Real> mh =
        test::RandomMatrix<Real>(tm == kNoTrans ? dim : inner, tm == kNoTrans ? inner : dim, rng);
    const test::LayoutCuMatrix<Real> m(mh, m_layout);
    // AddDiagMat2: op(M) op(M)^T with op(M) = M (kNoTrans) or M^T (kTrans).
    {
      SCOPED_TRACE(tm == kNoTrans ? "AddDiagMat2 no-trans" : "AddDiagMat2 trans");
      const MatrixTransposeType other = tm == kNoTrans ? kTrans : kNoTrans;
      const Vector<double> bound =
          DiagBound(mh, tm, mh, other, dim, inner, alpha, beta, initial, run.calls);
      CompareDiagWithCpu<Real>(
          dim, bound, run.calls, run.nan_out,
          [&](CuVectorBase<Real>* v) { v->AddDiagMat2(alpha, m.view, tm, beta); },
          [&](VectorBase<Real>* v) { v->AddDiagMat2(alpha, mh, tm, beta); }, rng);
    }
    for (MatrixTransposeType tn : {kNoTrans, kTrans}) {
      SCOPED_TRACE(::testing::Message()
                   << "AddDiagMatMat transM " << (tm == kTrans) << " transN " << (tn == kTrans));
      const Matrix<Real> nh =
          test::RandomMatrix<Real>(tn == kNoTrans ? inner : dim, tn == kNoTrans ? dim : inner, rng);
      const test::LayoutCuMatrix<Real> n(nh, n_layout);
      const Vector<double> bound =
          DiagBound(mh, tm, nh, tn, dim, inner, alpha, beta, initial, run.calls);
      CompareDiagWithCpu<Real>(
          dim, bound, run.calls, run.nan_out,
          [&](CuVectorBase<Real>* v) { v->AddDiagMatMat(alpha, m.view, tm, n.view, tn, beta); },
          [&](VectorBase<Real>* v) { v->AddDiagMatMat(alpha, mh, tm, nh, tn, beta); }, rng);
      EXPECT_TRUE(n.OutsideUnchanged());
    }
    EXPECT_TRUE(m.OutsideUnchanged());
  }
}

// Square sizes up to the benchmark's largest, each with a different pair of operand layouts
// (16-byte loads at 1 and 1024, scalar loads elsewhere) and a different beta.
TYPED_TEST(CuVectorOpsTest, DiagProductsMatchCpuOnSquares) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const int dims[] = {1, 17, 256, 512, 1024};
  const Real betas[] = {Real(0), Real(1), Real(-0.5)};
  for (int d = 0; d < 5; ++d)
    CheckDiagProducts<Real>(dims[d], dims[d], test::kAllLayouts[d % 4],
                            test::kAllLayouts[(d + 1) % 4], betas[d % 3], DiagRun{}, &rng);
}

// Rectangular shapes (both ways round), a single output or term, and an empty inner dimension.
TYPED_TEST(CuVectorOpsTest, DiagProductsMatchCpuOnRectangles) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const test::Shape shapes[] = {{256, 32}, {32, 256}, {128, 64}, {64, 128}, {1, 1000},
                                {1000, 1}, {5, 0},    {33, 17},  {257, 3},  {3, 257}};
  int c = 0;
  for (const test::Shape& s : shapes) {
    CheckDiagProducts<Real>(s.rows, s.cols, test::kAllLayouts[c % 4],
                            test::kAllLayouts[(c + 2) % 4], c % 2 == 0 ? Real(0) : Real(0.5),
                            DiagRun{}, &rng);
    ++c;
  }
}

// Few outputs over long sums: on the GPU the inner dimension is split across blocks whose
// partial sums the last block of each group adds, in the same launch. Repeated calls into the
// same output check that the block counters start at zero every time.
TYPED_TEST(CuVectorOpsTest, DiagProductsSplitLongInnerDimensions) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  CheckDiagProducts<Real>(8, 20000, test::Layout::kPacked, test::Layout::kPacked, Real(1),
                          DiagRun{}, &rng);
  CheckDiagProducts<Real>(3, 5000, test::Layout::kUnalignedView, test::Layout::kAlignedView,
                          Real(0), DiagRun{}, &rng);
  CheckDiagProducts<Real>(64, 5000, test::Layout::kAlignedView, test::Layout::kOddStride,
                          Real(-0.5), DiagRun{3, false}, &rng);
  CheckDiagProducts<Real>(1, 20001, test::Layout::kOddStride, test::Layout::kPacked, Real(1),
                          DiagRun{3, false}, &rng);
}

// beta == 0 reads the old contents like any beta, so a NaN there stays (the documented contract,
// as on the CPU); beta != 0 scales them. With and without a split inner dimension.
TYPED_TEST(CuVectorOpsTest, DiagProductsKeepNaNsAndScaleByBeta) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (Real beta : {Real(0), Real(2)}) {
    CheckDiagProducts<Real>(40, 40, test::Layout::kPacked, test::Layout::kUnalignedView, beta,
                            DiagRun{2, true}, &rng);
    CheckDiagProducts<Real>(5, 9000, test::Layout::kAlignedView, test::Layout::kPacked, beta,
                            DiagRun{1, true}, &rng);
  }
}

// The summation order is fixed for a shape: the same call twice gives the same bits.
TYPED_TEST(CuVectorOpsTest, DiagProductsAreReproducible) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : {test::Shape{300, 300}, test::Shape{6, 30000}}) {
    SCOPED_TRACE(::testing::Message() << s);
    const CuMatrix<Real> M(test::RandomMatrix<Real>(s.rows, s.cols, &rng));
    const CuMatrix<Real> N(test::RandomMatrix<Real>(s.rows, s.cols, &rng));
    for (MatrixTransposeType tm : {kNoTrans, kTrans}) {
      for (MatrixTransposeType tn : {kNoTrans, kTrans}) {
        if (tm == tn && s.rows != s.cols) continue;  // op(M) op(N) needs a square M then
        const int dim = tm == kNoTrans ? s.rows : s.cols;
        CuVector<Real> a(dim), b(dim);
        a.AddDiagMatMat(1, M, tm, N, tn, 0);
        b.AddDiagMatMat(1, M, tm, N, tn, 0);
        const Vector<Real> ha(a), hb(b);
        for (int i = 0; i < dim; ++i)
          ASSERT_EQ(ha(i), hb(i)) << "element " << i << " transM " << (tm == kTrans) << " transN "
                                  << (tn == kTrans);
      }
    }
  }
}

TYPED_TEST(CuVectorOpsTest, AddDiagMatMatWithMEqualToNIsAddDiagMat2) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const CuMatrix<Real> M(test::RandomMatrix<Real>(33, 17, &rng));
  CuVector<Real> a(33), b(33), c(17), d(17);
  a.AddDiagMatMat(1, M, kNoTrans, M, kTrans, 0);
  b.AddDiagMat2(1, M, kNoTrans, 0);
  c.AddDiagMatMat(1, M, kTrans, M, kNoTrans, 0);
  d.AddDiagMat2(1, M, kTrans, 0);
  EXPECT_TRUE(a.ApproxEqual(b, 1e-6));
  EXPECT_TRUE(c.ApproxEqual(d, 1e-6));
}

TYPED_TEST(CuVectorOpsTest, AddDiagMatMatRejectsBadShapesAndOverlap) {
  using Real = TypeParam;
  CuMatrix<Real> M(4, 3), N(3, 4), wide(2, 5);
  CuVector<Real> v(4);
  test::ExpectErrorContaining([&] { v.AddDiagMatMat(1, M, kNoTrans, wide, kNoTrans, 1); },
                              "op(M) is 4x3 and op(N) is 2x5");
  test::ExpectErrorContaining([&] { v.AddDiagMatMat(1, M, kTrans, N, kTrans, 1); }, "3x4");
  CuSubVector<Real> row = N.Row(0);
  test::ExpectErrorContaining([&] { row.AddDiagMatMat(1, M, kNoTrans, N, kNoTrans, 1); },
                              "overlaps");
}

// For each length: x random in [lo, hi) in a guarded device vector; cu_op(&x) against ref(x)
// computed in double on the host.
template <typename Real, typename CuOp, typename Ref>
void CheckMap(CuOp cu_op, Ref ref, double lo, double hi, double tol) {
  test::Rng rng = test::MakeRng();
  for (int n : kVectorDims) {
    SCOPED_TRACE(::testing::Message() << "dim " << n);
    OutVector<Real> out(n, &rng, lo, hi);
    Vector<double> expected = out.Initial();
    for (int i = 0; i < n; ++i) expected(i) = ref(expected(i));
    cu_op(&out.View());
    EXPECT_TRUE(out.Check(expected, tol));
  }
}

TYPED_TEST(CuVectorOpsTest, InvertExpLogMatchCpu) {
  using Real = TypeParam;
  const double tol = test::Tol<Real>();
  CheckMap<Real>([](CuVectorBase<Real>* v) { v->InvertElements(); }, [](double x) { return 1 / x; },
                 0.5, 2, tol);
  CheckMap<Real>([](CuVectorBase<Real>* v) { v->ApplyExp(); }, [](double x) { return std::exp(x); },
                 -5, 5, tol);
  CheckMap<Real>([](CuVectorBase<Real>* v) { v->ApplyLog(); }, [](double x) { return std::log(x); },
                 0.01, 100, tol);
}

TYPED_TEST(CuVectorOpsTest, ApplyPowMatchesCpu) {
  using Real = TypeParam;
  // pow's result is within a few ulps of the exact value, and |power| scales the input's rounding.
  const double tol = 10 * test::Tol<Real>();
  for (double p : {0.0, 1.0, 2.0, 0.5, -1.5, 3.3}) {
    SCOPED_TRACE(::testing::Message() << "power " << p);
    CheckMap<Real>([p](CuVectorBase<Real>* v) { v->ApplyPow(static_cast<Real>(p)); },
                   [p](double x) { return std::pow(x, p); }, 0.1, 2, tol);
  }
  // Negative bases: integer powers keep their sign, a fractional one gives NaN.
  for (double p : {2.0, 3.0, 0.5}) {
    SCOPED_TRACE(::testing::Message() << "negative base, power " << p);
    CheckMap<Real>([p](CuVectorBase<Real>* v) { v->ApplyPow(static_cast<Real>(p)); },
                   [p](double x) { return std::pow(x, p); }, -2, -0.1, tol);
  }
}

TYPED_TEST(CuVectorOpsTest, ApplyFloorAndCeilingMatchCpuAndCount) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kVectorDims) {
    SCOPED_TRACE(::testing::Message() << "dim " << n);
    for (bool ceiling : {false, true}) {
      OutVector<Real> a(n, &rng), b(n, &rng);
      const Real bound = ceiling ? Real(-0.25) : Real(0.25);
      Vector<double> ea = a.Initial(), eb = b.Initial();
      MatrixIndexT expected_count = 0;
      for (int i = 0; i < n; ++i) {
        ea(i) = ceiling ? std::min<double>(ea(i), bound) : std::max<double>(ea(i), bound);
        const bool changes = ceiling ? eb(i) > bound : eb(i) < bound;
        if (changes) {
          eb(i) = bound;
          ++expected_count;
        }
      }
      MatrixIndexT count = -1;
      if (ceiling) {
        a.View().ApplyCeiling(bound);
        b.View().ApplyCeiling(bound, &count);
      } else {
        a.View().ApplyFloor(bound);
        b.View().ApplyFloor(bound, &count);
      }
      EXPECT_TRUE(a.Check(ea, 0)) << "ceiling " << ceiling;
      EXPECT_TRUE(b.Check(eb, 0)) << "ceiling " << ceiling;
      EXPECT_EQ(count, expected_count) << "ceiling " << ceiling;
    }
  }
}

TYPED_TEST(CuVectorOpsTest, ReplaceValueReplacesExactMatchesOnly) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kVectorDims) {
    Vector<Real> h = test::RandomVector<Real>(n, &rng);
    for (int i = 0; i < n; i += 3) h(i) = Real(0.5);
    Vector<double> expected(h);
    for (int i = 0; i < n; ++i)
      if (expected(i) == 0.5) expected(i) = -3;
    CuVector<Real> v(h);
    v.ReplaceValue(Real(0.5), Real(-3));
    Vector<Real> got(n);
    v.CopyToVec(&got);
    EXPECT_TRUE(test::ExpectNear(got, expected, 0)) << "dim " << n;
  }
}

TYPED_TEST(CuVectorOpsTest, DivElementsMatchesCpuAndAllowsExactAlias) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : kVectorDims) {
    SCOPED_TRACE(::testing::Message() << "dim " << n);
    OutVector<Real> out(n, &rng);
    const Vector<Real> d = test::RandomVector<Real>(n, &rng, 0.5, 1.5);
    Vector<double> expected = out.Initial();
    for (int i = 0; i < n; ++i) expected(i) /= d(i);
    out.View().DivElements(CuVector<Real>(d));
    EXPECT_TRUE(out.Check(expected, test::Tol<Real>()));
    out.View().DivElements(out.View());  // x / x; random values are never exactly 0
    Vector<double> ones(n);
    ones.Set(1.0);
    EXPECT_TRUE(out.Check(ones, 0));
  }
  CuVector<Real> big(10), small(4);
  CuSubVector<Real> left(big, 0, 5), right(big, 2, 5);
  test::ExpectErrorContaining([&] { left.DivElements(small); }, "5 vs 4");
  test::ExpectErrorContaining([&] { left.DivElements(right); }, "partially overlaps");
}

// Norms are reductions; the GPU adds in a different order (in double), so the tolerance grows
// with sqrt(n) as for Sum.
template <typename Real>
double NormTol(int n) {
  return test::Tol<Real>() * std::max(1.0, std::sqrt(static_cast<double>(n)));
}

TYPED_TEST(CuVectorOpsTest, NormMatchesCpuForEveryKindOfP) {
  using Real = TypeParam;
  const double inf = std::numeric_limits<double>::infinity();
  test::Rng rng = test::MakeRng();
  for (int n : kVectorDims) {
    Vector<Real> h = test::RandomVector<Real>(n, &rng, -2, 2);
    for (int i = 0; i < n; i += 7) h(i) = 0;  // so that p == 0 has something to skip
    const CuVector<Real> v(h);
    for (double p : {0.0, 1.0, 2.0, inf, 3.0, 0.5}) {
      SCOPED_TRACE(::testing::Message() << "dim " << n << " p " << p);
      double expected = 0;
      for (int i = 0; i < n; ++i) {
        const double a = std::abs(static_cast<double>(h(i)));
        if (p == 0)
          expected += a != 0;
        else if (std::isinf(p))
          expected = std::max(expected, a);
        else
          expected += std::pow(a, p);
      }
      if (p != 0 && !std::isinf(p)) expected = std::pow(expected, 1 / p);
      EXPECT_TRUE(test::ScalarNear(v.Norm(static_cast<Real>(p)), expected, NormTol<Real>(n)));
    }
  }
  test::ExpectErrorContaining([&] { CuVector<Real>(3).Norm(-1); }, "p = -1");
  test::ExpectErrorContaining([&] { CuVector<Real>().Norm(-1); }, "p = -1");
}

TYPED_TEST(CuVectorOpsTest, AddVecFromOtherPrecisionAndApproxEqual) {
  using Real = TypeParam;
  using Other = OtherPrecision<Real>;
  test::Rng rng = test::MakeRng();
  for (int n : kVectorDims) {
    SCOPED_TRACE(::testing::Message() << "dim " << n);
    OutVector<Real> out(n, &rng);
    const Vector<Other> src = test::RandomVector<Other>(n, &rng);
    Vector<double> expected = out.Initial();
    for (int i = 0; i < n; ++i) expected(i) = 0.5 * expected(i) + 2 * static_cast<Real>(src(i));
    out.View().AddVec(Real(2), CuVector<Other>(src), Real(0.5));
    EXPECT_TRUE(out.Check(expected, test::Tol<Real>()));
  }
  CuVector<Real> a(test::RandomVector<Real>(100, &rng, 1, 2)), b(a);
  b.Scale(1 + 1e-3);
  EXPECT_TRUE(a.ApproxEqual(b));
  EXPECT_FALSE(a.ApproxEqual(b, 1e-5));
  test::ExpectErrorContaining([&] { a.AddVec(1, CuVector<Other>(3)); }, "100 vs 3");
}

}  // namespace
}  // namespace cuctx
