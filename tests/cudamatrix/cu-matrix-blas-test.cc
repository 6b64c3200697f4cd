// tests/cudamatrix/cu-matrix-blas-test.cc: the CuMatrix / CuVector BLAS family compared with the
// CPU Matrix / Vector on random data.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

template <typename Real>
using Guarded = test::GuardedCuMatrix<Real>;

// A device vector of `dim` elements inside a larger one with two sentinels on each side.
template <typename Real>
struct GuardedVec {
  GuardedVec(int dim, test::Rng* rng, double lo = -1, double hi = 1)
      : original(test::RandomVector<Real>(dim + 4, rng, lo, hi)),
        storage(original),
        view(storage, 2, dim) {}
  Vector<Real> Host() const { return Vector<Real>(original.Range(2, view.Dim())); }
  ::testing::AssertionResult BorderUnchanged() const {
    const Vector<Real> now = ToHost(storage);
    for (int i : {0, 1, now.Dim() - 2, now.Dim() - 1})
      if (now(i) != original(i)) return ::testing::AssertionFailure() << "sentinel " << i;
    return ::testing::AssertionSuccess();
  }
  Vector<Real> original;
  CuVector<Real> storage;
  CuSubVector<Real> view;
};

// Product shapes (rows and cols of the result, inner dimension k) covering empty results,
// empty inner dimensions, 1x1, odd sizes, off-block sizes, and single long rows and columns.
struct ProductShape {
  int m, n, k;
};
std::ostream& operator<<(std::ostream& os, const ProductShape& s) {
  return os << "m=" << s.m << " n=" << s.n << " k=" << s.k;
}
const ProductShape kProductShapes[] = {{0, 0, 0},    {0, 5, 3},    {5, 0, 3},   {4, 3, 0},
                                       {1, 1, 1},    {17, 33, 9},  {257, 3, 5}, {1, 4097, 2},
                                       {4097, 1, 3}, {3, 5, 1025}, {64, 64, 64}};

const MatrixTransposeType kTransposes[] = {kNoTrans, kTrans};

// GEMM-like results sum k products of values in [-1, 1); rounding grows at worst linearly in k,
// so the relative tolerance is Tol<Real>() * max(k, 1). (A GPU run with TF32 enabled needs 1e-3;
// the tests leave --cuda-use-tf32-compute at its default, off.)
template <typename Real>
double GemmTol(int k) {
  return test::Tol<Real>() * std::max(k, 1);
}

template <typename Real>
class CuMatrixBlasTest : public ::testing::Test {};
template <typename Real>
class CuVectorBlasTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMatrixBlasTest, RealTypes);
TYPED_TEST_SUITE(CuVectorBlasTest, RealTypes);

TYPED_TEST(CuMatrixBlasTest, AddMatMatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const ProductShape& s : kProductShapes) {
    for (MatrixTransposeType ta : kTransposes) {
      for (MatrixTransposeType tb : kTransposes) {
        for (Real beta : {Real(0), Real(0.5)}) {
          const bool strided = (ta == kTrans) != (beta != 0);
          std::ostringstream name;
          name << s << " transA " << ta << " transB " << tb << " beta " << beta
               << (strided ? " strided" : " packed");
          SCOPED_TRACE(name.str());
          Guarded<Real> A(ta == kNoTrans ? s.m : s.k, ta == kNoTrans ? s.k : s.m, !strided, &rng);
          Guarded<Real> B(tb == kNoTrans ? s.k : s.n, tb == kNoTrans ? s.n : s.k, strided, &rng);
          Guarded<Real> C(s.m, s.n, strided, &rng);
          Matrix<Real> expected = C.Host();
          expected.AddMatMat(Real(0.7), A.Host(), ta, B.Host(), tb, beta);
          C.view.AddMatMat(Real(0.7), A.view, ta, B.view, tb, beta);
          EXPECT_TRUE(test::ExpectNear(ToHost(C.view), expected, GemmTol<Real>(s.k)));
          EXPECT_TRUE(C.BorderUnchanged());
          EXPECT_TRUE(A.BorderUnchanged());
          EXPECT_TRUE(B.BorderUnchanged());
        }
      }
    }
  }
}

TYPED_TEST(CuMatrixBlasTest, AddMatMatThrowsOnShapeMismatchAndAliasing) {
  using Real = TypeParam;
  CuMatrix<Real> a(2, 3), b(4, 5), c(2, 5);
  test::ExpectErrorContaining([&] { c.AddMatMat(1, a, kNoTrans, b, kNoTrans, 0); }, "2x3");
  test::ExpectErrorContaining([&] { c.AddMatMat(1, a, kNoTrans, b, kNoTrans, 0); }, "4x5");
  test::ExpectErrorContaining([&] { c.AddMatMat(1, a, kTrans, b, kNoTrans, 0); }, "kTrans");
  CuMatrix<Real> sq(4, 4);
  CuSubMatrix<Real> left = sq.ColRange(0, 2), right = sq.ColRange(2, 2);
  test::ExpectErrorContaining([&] { sq.AddMatMat(1, sq, kNoTrans, sq, kNoTrans, 0); }, "overlaps");
  // Disjoint columns of one matrix still interleave in memory: forbidden as well.
  test::ExpectErrorContaining(
      [&] { left.AddMatMat(1, right, kNoTrans, CuMatrix<Real>(2, 2), kNoTrans, 0); }, "overlaps");
}

TYPED_TEST(CuMatrixBlasTest, SymAddMat2MatchesCpuOnLowerTriangle) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 17, 64}) {
    for (int k : {0, 1, 33, 300}) {
      for (MatrixTransposeType t : kTransposes) {
        for (Real beta : {Real(0), Real(-0.5)}) {
          const bool strided = (n + k) % 2 == 1;
          std::ostringstream name;
          name << "n=" << n << " k=" << k << " trans " << t << " beta " << beta;
          SCOPED_TRACE(name.str());
          Guarded<Real> A(t == kNoTrans ? n : k, t == kNoTrans ? k : n, !strided, &rng);
          Guarded<Real> C(n, n, strided, &rng);
          Matrix<Real> expected = C.Host();
          expected.SymAddMat2(Real(1.5), A.Host(), t, beta);
          C.view.SymAddMat2(Real(1.5), A.view, t, beta);
          const Matrix<Real> actual = ToHost(C.view);
          // Only the lower triangle is defined; the strict upper one must be untouched.
          EXPECT_TRUE(test::ExpectNear(actual, expected, GemmTol<Real>(k)));
          const Matrix<Real> before = C.Host();
          for (int r = 0; r < n; ++r)
            for (int c = r + 1; c < n; ++c) ASSERT_EQ(actual(r, c), before(r, c)) << r << "," << c;
          EXPECT_TRUE(C.BorderUnchanged());
        }
      }
    }
  }
  CuMatrix<Real> rect(3, 4), a(3, 2), sq(3, 3);
  test::ExpectErrorContaining([&] { rect.SymAddMat2(1, a, kNoTrans, 0); }, "3x4");
  test::ExpectErrorContaining([&] { sq.SymAddMat2(1, a, kTrans, 0); }, "3x2");
  test::ExpectErrorContaining([&] { sq.SymAddMat2(1, sq, kNoTrans, 0); }, "overlaps");
}

TYPED_TEST(CuMatrixBlasTest, AddDiagVecMatAndAddMatDiagVecMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    for (MatrixTransposeType t : kTransposes) {
      for (Real beta : {Real(0), Real(2)}) {
        Guarded<Real> M(t == kNoTrans ? s.rows : s.cols, t == kNoTrans ? s.cols : s.rows, !strided,
                        &rng);
        GuardedVec<Real> vr(s.rows, &rng), vc(s.cols, &rng);
        Guarded<Real> C(s.rows, s.cols, strided, &rng);
        Matrix<Real> expected = C.Host();
        expected.AddDiagVecMat(Real(0.3), vr.Host(), M.Host(), t, beta);
        C.view.AddDiagVecMat(Real(0.3), vr.view, M.view, t, beta);
        EXPECT_TRUE(test::ExpectNear(ToHost(C.view), expected, test::Tol<Real>())) << t << beta;
        expected.AddMatDiagVec(Real(-1.1), M.Host(), t, vc.Host(), beta);
        C.view.AddMatDiagVec(Real(-1.1), M.view, t, vc.view, beta);
        EXPECT_TRUE(test::ExpectNear(ToHost(C.view), expected, test::Tol<Real>())) << t << beta;
        EXPECT_TRUE(C.BorderUnchanged());
        EXPECT_TRUE(M.BorderUnchanged());
      }
    }
    // In place: M is this matrix.
    Guarded<Real> C(s.rows, s.cols, strided, &rng);
    GuardedVec<Real> vr(s.rows, &rng), vc(s.cols, &rng);
    Matrix<Real> expected = C.Host();
    Matrix<Real> copy(expected);
    expected.AddDiagVecMat(Real(0.5), vr.Host(), copy, kNoTrans, Real(1));
    copy.CopyFromMat(expected);
    expected.AddMatDiagVec(Real(0.5), copy, kNoTrans, vc.Host(), Real(1));
    C.view.AddDiagVecMat(Real(0.5), vr.view, C.view, kNoTrans, Real(1));
    C.view.AddMatDiagVec(Real(0.5), C.view, kNoTrans, vc.view, Real(1));
    EXPECT_TRUE(test::ExpectNear(ToHost(C.view), expected, test::Tol<Real>()));
    EXPECT_TRUE(C.BorderUnchanged());
  });
  CuMatrix<Real> c(3, 4), m(3, 4), mt(4, 3);
  CuVector<Real> v3(3), v4(4);
  test::ExpectErrorContaining([&] { c.AddDiagVecMat(1, v4, m, kNoTrans); }, "dimension 4");
  test::ExpectErrorContaining([&] { c.AddDiagVecMat(1, v3, m, kTrans); }, "3x4");
  test::ExpectErrorContaining([&] { c.AddMatDiagVec(1, mt, kNoTrans, v4); }, "4x3");
  test::ExpectErrorContaining([&] { c.AddMatDiagVec(1, m, kNoTrans, v3); }, "dimension 3");
  CuMatrix<Real> sq(4, 4);
  test::ExpectErrorContaining([&] { sq.AddMatDiagVec(1, sq, kTrans, v4); }, "overlaps");
  test::ExpectErrorContaining([&] { sq.AddDiagVecMat(1, sq.Row(1), sq, kNoTrans); }, "overlaps");
}

TYPED_TEST(CuMatrixBlasTest, AddVecVecRankOneMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    GuardedVec<Real> a(s.rows, &rng), b(s.cols, &rng);
    Guarded<Real> C(s.rows, s.cols, strided, &rng);
    Matrix<Real> expected = C.Host();
    expected.AddVecVec(Real(0.8), a.Host(), b.Host());
    C.view.AddVecVec(Real(0.8), a.view, b.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(C.view), expected, test::Tol<Real>()));
    EXPECT_TRUE(C.BorderUnchanged());
  });
  CuMatrix<Real> c(3, 4);
  CuVector<Real> v3(3), v4(4);
  test::ExpectErrorContaining([&] { c.AddVecVec(1, v4, v3); }, "dimension 4");
  test::ExpectErrorContaining([&] { c.AddVecVec(1, c.Row(0).Range(0, 3), v4); }, "overlaps");
}

TYPED_TEST(CuMatrixBlasTest, TraceMatMatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  // Positive data keeps the trace free of cancellation, so its relative error is bounded by the
  // rounding of m * k positive terms: Tol<Real>() * m * k (the GPU sums in Real).
  for (const ProductShape& s : kProductShapes) {
    for (MatrixTransposeType t : kTransposes) {
      for (bool strided : {false, true}) {
        std::ostringstream name;
        name << s << " trans " << t << (strided ? " strided" : " packed");
        SCOPED_TRACE(name.str());
        Guarded<Real> A(s.m, s.k, strided, &rng);
        Guarded<Real> B(t == kNoTrans ? s.k : s.m, t == kNoTrans ? s.m : s.k, strided, &rng);
        Matrix<Real> ha = A.Host(), hb = B.Host();
        ha.ApplyPowAbs(1);
        hb.ApplyPowAbs(1);
        A.view.CopyFromMat(ha);
        B.view.CopyFromMat(hb);
        const double expected = TraceMatMat(ha, hb, t);
        const double actual = cuctx::TraceMatMat(A.view, B.view, t);  // qualified call works
        EXPECT_TRUE(test::ScalarNear(actual, expected, test::Tol<Real>() * std::max(s.m * s.k, 1)));
      }
    }
  }
  CuMatrix<Real> a(2, 3), b(2, 3);
  test::ExpectErrorContaining([&] { TraceMatMat(a, b, kNoTrans); }, "2x3");
}

TYPED_TEST(CuMatrixBlasTest, AddMatMatBatchedMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const int kBatch = 3;
  for (const ProductShape& s : kProductShapes) {
    for (MatrixTransposeType ta : kTransposes) {
      for (MatrixTransposeType tb : kTransposes) {
        const Real beta = ta == tb ? Real(0) : Real(0.25);
        std::ostringstream name;
        name << s << " transA " << ta << " transB " << tb << " beta " << beta;
        SCOPED_TRACE(name.str());
        const int ar = ta == kNoTrans ? s.m : s.k, ac = ta == kNoTrans ? s.k : s.m;
        const int br = tb == kNoTrans ? s.k : s.n, bc = tb == kNoTrans ? s.n : s.k;
        // The batch entries are row blocks of one matrix each (one shape and stride per batch),
        // as Kaldi's batched callers build them; C's blocks are separated by a sentinel row.
        Guarded<Real> A(ar * kBatch, ac, true, &rng), B(br * kBatch, bc, false, &rng);
        Guarded<Real> C((s.m + 1) * kBatch, s.n, true, &rng);
        std::vector<CuSubMatrix<Real>> av, bv, cv;
        for (int i = 0; i < kBatch; ++i) {
          av.emplace_back(A.view, i * ar, ar, 0, ac);
          bv.emplace_back(B.view, i * br, br, 0, bc);
          cv.emplace_back(C.view, i * (s.m + 1), s.m, 0, s.n);
        }
        std::vector<CuSubMatrix<Real>*> ap, bp, cp;
        for (int i = 0; i < kBatch; ++i) {
          ap.push_back(&av[i]);
          bp.push_back(&bv[i]);
          cp.push_back(&cv[i]);
        }
        const Matrix<Real> ha = A.Host(), hb = B.Host(), hc = C.Host();
        Matrix<Real> expected = hc;
        for (int i = 0; i < kBatch; ++i)
          expected.Range(i * (s.m + 1), s.m, 0, s.n)
              .AddMatMat(Real(1.25), ha.Range(i * ar, ar, 0, ac), ta, hb.Range(i * br, br, 0, bc),
                         tb, beta);
        AddMatMatBatched(Real(1.25), cp, ap, ta, bp, tb, beta);
        EXPECT_TRUE(test::ExpectNear(ToHost(C.view), expected, GemmTol<Real>(s.k)));
        EXPECT_TRUE(C.BorderUnchanged());
      }
    }
  }
}

TYPED_TEST(CuMatrixBlasTest, AddMatMatBatchedThrowsOnBadBatches) {
  using Real = TypeParam;
  CuMatrix<Real> big(8, 8);
  CuSubMatrix<Real> a0(big, 0, 2, 0, 3), a1(big, 2, 3, 0, 3);
  CuMatrix<Real> b(3, 2), c0(2, 2), c1(2, 2);
  CuSubMatrix<Real> bs(b, 0, 3, 0, 2), cs0(c0, 0, 2, 0, 2), cs1(c1, 0, 2, 0, 2);
  std::vector<CuSubMatrix<Real>*> empty, a{&a0}, bb{&bs}, c{&cs0, &cs1}, a2{&a0, &a1}, b2{&bs, &bs};
  AddMatMatBatched(Real(1), empty, empty, kNoTrans, empty, kNoTrans, Real(0));
  test::ExpectErrorContaining(
      [&] { AddMatMatBatched(Real(1), c, a, kNoTrans, bb, kNoTrans, Real(0)); }, "batch sizes");
  test::ExpectErrorContaining(
      [&] { AddMatMatBatched(Real(1), c, a2, kNoTrans, b2, kNoTrans, Real(0)); }, "3x3");
  std::vector<CuSubMatrix<Real>*> self{&a0};
  test::ExpectErrorContaining(
      [&] { AddMatMatBatched(Real(1), self, a, kNoTrans, bb, kTrans, Real(0)); }, "2x3");
}

TYPED_TEST(CuVectorBlasTest, AddMatVecMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    for (MatrixTransposeType t : kTransposes) {
      for (Real beta : {Real(0), Real(0.5)}) {
        const int out = t == kNoTrans ? s.rows : s.cols, in = t == kNoTrans ? s.cols : s.rows;
        Guarded<Real> M(s.rows, s.cols, strided, &rng);
        GuardedVec<Real> v(in, &rng), y(out, &rng);
        Vector<Real> expected = y.Host();
        expected.AddMatVec(Real(0.9), M.Host(), t, v.Host(), beta);
        y.view.AddMatVec(Real(0.9), M.view, t, v.view, beta);
        EXPECT_TRUE(test::ExpectNear(ToHost(y.view), expected, GemmTol<Real>(in))) << t << beta;
        EXPECT_TRUE(y.BorderUnchanged());
        EXPECT_TRUE(M.BorderUnchanged());
      }
    }
  });
  CuMatrix<Real> m(3, 4);
  CuVector<Real> v3(3), v4(4);
  test::ExpectErrorContaining([&] { v3.AddMatVec(1, m, kNoTrans, v3, 0); }, "3x4");
  test::ExpectErrorContaining([&] { v4.AddMatVec(1, m, kNoTrans, v4, 0); }, "dimension 4");
  CuSubVector<Real> row = m.Row(0);
  test::ExpectErrorContaining([&] { row.AddMatVec(1, m, kTrans, v3, 0); }, "overlaps");
}

TYPED_TEST(CuVectorBlasTest, AddVecVecMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int dim : {0, 1, 17, 257, 4097}) {
    for (Real beta : {Real(0), Real(-1.5)}) {
      GuardedVec<Real> v(dim, &rng), r(dim, &rng), y(dim, &rng);
      Vector<Real> expected = y.Host();
      expected.AddVecVec(Real(0.6), v.Host(), r.Host(), beta);
      y.view.AddVecVec(Real(0.6), v.view, r.view, beta);
      EXPECT_TRUE(test::ExpectNear(ToHost(y.view), expected, test::Tol<Real>())) << dim;
      EXPECT_TRUE(y.BorderUnchanged());
      // In place: v is this vector.
      Vector<Real> copy(expected);
      expected.AddVecVec(Real(2), copy, r.Host(), beta);
      y.view.AddVecVec(Real(2), y.view, r.view, beta);
      EXPECT_TRUE(test::ExpectNear(ToHost(y.view), expected, test::Tol<Real>())) << dim;
    }
  }
  CuVector<Real> a(3), b(4), big(8);
  test::ExpectErrorContaining([&] { a.AddVecVec(1, a, b, 0); }, "4");
  CuSubVector<Real> lo = big.Range(0, 4), hi = big.Range(2, 4);
  test::ExpectErrorContaining([&] { lo.AddVecVec(1, hi, b, 0); }, "overlaps");
}

TYPED_TEST(CuVectorBlasTest, VecVecAndVecMatVecMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  // Positive data (no cancellation): relative error within Tol<Real>() per summed term.
  for (int dim : {0, 1, 17, 257, 4097}) {
    const Vector<Real> ha = test::RandomVector<Real>(dim, &rng, 0.1, 1),
                       hb = test::RandomVector<Real>(dim, &rng, 0.1, 1);
    const CuVector<Real> a(ha), b(hb);
    EXPECT_TRUE(
        test::ScalarNear(VecVec(a, b), VecVec(ha, hb), test::Tol<Real>() * std::max(dim, 1)))
        << dim;
  }
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> M(s.rows, s.cols, strided, &rng);
    Matrix<Real> hm = M.Host();
    hm.ApplyPowAbs(1);
    M.view.CopyFromMat(hm);
    const Vector<Real> h1 = test::RandomVector<Real>(s.rows, &rng, 0.1, 1),
                       h2 = test::RandomVector<Real>(s.cols, &rng, 0.1, 1);
    const CuVector<Real> v1(h1), v2(h2);
    EXPECT_TRUE(test::ScalarNear(VecMatVec(v1, M.view, v2), VecMatVec(h1, hm, h2),
                                 test::Tol<Real>() * std::max(s.rows * s.cols, 1)));
  });
  CuVector<Real> a(3), b(4);
  CuMatrix<Real> m(3, 3);
  test::ExpectErrorContaining([&] { VecVec(a, b); }, "3 vs 4");
  test::ExpectErrorContaining([&] { VecMatVec(a, m, b); }, "3x3");
}

}  // namespace
}  // namespace cuctx
