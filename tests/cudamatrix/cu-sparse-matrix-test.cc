// tests/cudamatrix/cu-sparse-matrix-test.cc: CuSparseMatrix and the sparse products compared with
// the CPU SparseMatrix / Matrix.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-sparse-matrix.h"

#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/sparse-matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

// A rows x cols sparse matrix whose elements are nonzero with probability `density`, with values
// uniform in [-1, 1) (never exactly 0).
template <typename Real>
SparseMatrix<Real> RandomSparse(int rows, int cols, double density, test::Rng* rng) {
  std::vector<std::vector<std::pair<MatrixIndexT, Real>>> pairs(rows);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      if (rng->Uniform() < density) {
        Real v = static_cast<Real>(rng->Uniform(-1.0, 1.0));
        pairs[r].emplace_back(c, v == 0 ? Real(0.5) : v);
      }
  return SparseMatrix<Real>(cols, pairs);
}

// The dense rows x cols form of a host sparse matrix (which reports 0 columns without rows).
template <typename Real>
Matrix<Real> Dense(const SparseMatrix<Real>& s, int rows, int cols) {
  Matrix<Real> m(rows, cols);
  if (s.NumRows() > 0) s.CopyToMat(&m);
  return m;
}

template <typename Real>
Matrix<Real> Dense(const CuSparseMatrix<Real>& s) {
  Matrix<Real> m(s.NumRows(), s.NumCols());
  CuMatrix<Real> d(s.NumRows(), s.NumCols());
  s.CopyToMat(&d);
  d.CopyToMat(&m);
  return m;
}

const std::vector<test::Shape> kSparseShapes = {{0, 0}, {1, 1}, {17, 33}, {33, 17}, {257, 3}};
const std::vector<double> kDensities = {0.0, 0.01, 0.1, 1.0};

// f(shape, density) for every sparse shape and density, with a trace naming both.
template <typename F>
void ForEachSparse(F f) {
  for (const test::Shape& s : kSparseShapes)
    for (double d : kDensities) {
      std::ostringstream name;
      name << s << " density " << d;
      SCOPED_TRACE(name.str());
      f(s, d);
    }
}

// Products: this (m x n) = op(sparse) (m x k) times dense (k x n), and the mirror image.
struct ProductShape {
  int m, k, n;
};
const std::vector<ProductShape> kProductShapes = {{0, 3, 4},    {1, 1, 1}, {17, 33, 5},
                                                  {33, 17, 40}, {3, 0, 5}, {4, 6, 0}};

// Sums of up to 40 products: the float tolerance is scaled for the accumulated rounding.
template <typename Real>
double ProductTol() {
  return 40 * test::Tol<Real>();
}

template <typename Real>
class CuSparseMatrixTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuSparseMatrixTest, RealTypes);

TYPED_TEST(CuSparseMatrixTest, CopyFromSmatRoundTripsBothPrecisions) {
  using Real = TypeParam;
  using Other = std::conditional_t<std::is_same<Real, float>::value, double, float>;
  test::Rng rng = test::MakeRng();
  ForEachSparse([&](const test::Shape& s, double density) {
    SparseMatrix<Real> smat = RandomSparse<Real>(s.rows, s.cols, density, &rng);
    CuSparseMatrix<Real> cu(smat);
    EXPECT_EQ(cu.NumRows(), smat.NumRows());
    EXPECT_EQ(cu.NumCols(), smat.NumCols());
    EXPECT_EQ(cu.NumElements(), smat.NumElements());
    SparseMatrix<Real> back;
    cu.CopyToSmat(&back);
    EXPECT_TRUE(test::SameElements(Dense(back, s.rows, s.cols), Dense(smat, s.rows, s.cols)));
    EXPECT_EQ(back.NumElements(), smat.NumElements());

    SparseMatrix<Other> other;
    other.CopyFromSmat(smat);
    CuSparseMatrix<Real> from_other(other);
    EXPECT_EQ(from_other.NumElements(), smat.NumElements());
    SparseMatrix<Other> other_back;
    from_other.CopyToSmat(&other_back);
    EXPECT_TRUE(
        test::ExpectNear(Dense(other_back, s.rows, s.cols), Dense(smat, s.rows, s.cols), 1e-6));
  });
}

TYPED_TEST(CuSparseMatrixTest, CopyToMatMatchesCpuIntoStridedViews) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachSparse([&](const test::Shape& s, double density) {
    SparseMatrix<Real> smat = RandomSparse<Real>(s.rows, s.cols, density, &rng);
    CuSparseMatrix<Real> cu(smat);
    for (MatrixTransposeType t : {kNoTrans, kTrans}) {
      const int rows = t == kNoTrans ? s.rows : s.cols, cols = t == kNoTrans ? s.cols : s.rows;
      Matrix<Real> expected(rows, cols);
      if (smat.NumRows() > 0) smat.CopyToMat(&expected, t);
      test::GuardedCuMatrix<Real> out(rows, cols, true, &rng);
      cu.CopyToMat(&out.view, t);
      EXPECT_TRUE(test::SameElements(ToHost(out.view), expected));
      EXPECT_TRUE(out.BorderUnchanged());
      // Into the other precision.
      CuMatrix<double> wide(rows, cols);
      cu.CopyToMat(&wide, t);
      EXPECT_TRUE(test::ExpectNear(ToHost(wide), expected, 0));
    }
  });
}

TYPED_TEST(CuSparseMatrixTest, CopyFromCuSmatCopiesAndTransposes) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachSparse([&](const test::Shape& s, double density) {
    SparseMatrix<Real> smat = RandomSparse<Real>(s.rows, s.cols, density, &rng);
    CuSparseMatrix<Real> cu(smat);
    for (MatrixTransposeType t : {kNoTrans, kTrans}) {
      SparseMatrix<Real> expected(smat, t);
      CuSparseMatrix<Real> got;
      got.CopyFromSmat(cu, t);
      EXPECT_EQ(got.NumRows(), expected.NumRows());
      EXPECT_EQ(got.NumCols(), expected.NumCols());
      EXPECT_EQ(got.NumElements(), expected.NumElements());
      EXPECT_TRUE(
          test::SameElements(Dense(got), Dense(expected, expected.NumRows(), expected.NumCols())));
      // In place.
      CuSparseMatrix<Real> self(smat);
      self.CopyFromSmat(self, t);
      EXPECT_TRUE(test::SameElements(Dense(self), Dense(got)));
    }
  });
}

TYPED_TEST(CuSparseMatrixTest, SumAndFrobeniusNormMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachSparse([&](const test::Shape& s, double density) {
    SparseMatrix<Real> smat = RandomSparse<Real>(s.rows, s.cols, density, &rng);
    CuSparseMatrix<Real> cu(smat);
    // Sums of up to 771 values accumulated in Real on the GPU (double on the CPU).
    EXPECT_NEAR(cu.Sum(), smat.Sum(), 1000 * test::Tol<Real>() * (1 + std::abs(smat.Sum())));
    EXPECT_TRUE(
        test::ScalarNear(cu.FrobeniusNorm(), smat.FrobeniusNorm(), 100 * test::Tol<Real>()));
  });
}

TYPED_TEST(CuSparseMatrixTest, OneHotRowsMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 17, 300}) {
    for (int dim : {0, 1, 9}) {
      // dim 0 allows only -1 entries.
      std::vector<int32> idx = dim == 0
                                   ? std::vector<int32>(n, -1)
                                   : test::RandomIndices(n, dim, /*allow_minus_one=*/true, &rng);
      Vector<Real> weights = test::RandomVector<Real>(n, &rng);
      if (n > 1) weights(1) = 0;  // a zero weight gives an empty row, as on the CPU
      for (MatrixTransposeType t : {kNoTrans, kTrans}) {
        SCOPED_TRACE(::testing::Message() << "n " << n << " dim " << dim << " trans " << t);
        SparseMatrix<Real> ones(idx, dim, t), weighted(idx, weights, dim, t);
        CuArray<int32> cu_idx(idx);
        CuSparseMatrix<Real> cu_ones(cu_idx, dim, t);
        CuSparseMatrix<Real> cu_weighted(cu_idx, CuVector<Real>(weights), dim, t);
        for (auto pr : {std::make_pair(&cu_ones, &ones), std::make_pair(&cu_weighted, &weighted)}) {
          EXPECT_EQ(pr.first->NumRows(), pr.second->NumRows());
          EXPECT_EQ(pr.first->NumCols(), pr.second->NumCols());
          EXPECT_EQ(pr.first->NumElements(), pr.second->NumElements());
          EXPECT_TRUE(test::SameElements(
              Dense(*pr.first), Dense(*pr.second, pr.second->NumRows(), pr.second->NumCols())));
          // Sorted columns within each row (the CSR invariant the products rely on).
          SparseMatrix<Real> back;
          pr.first->CopyToSmat(&back);
          for (MatrixIndexT r = 0; r < back.NumRows(); ++r)
            for (MatrixIndexT i = 1; i < back.Row(r).NumElements(); ++i)
              EXPECT_LT(back.Row(r).GetElement(i - 1).first, back.Row(r).GetElement(i).first);
        }
      }
    }
  }
}

TYPED_TEST(CuSparseMatrixTest, SelectRowsMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachSparse([&](const test::Shape& s, double density) {
    SparseMatrix<Real> smat = RandomSparse<Real>(s.rows, s.cols, density, &rng);
    CuSparseMatrix<Real> cu(smat);
    for (int n : {0, 1, 40}) {
      if (s.rows == 0 && n > 0) continue;
      std::vector<int32> rows = test::RandomIndices(n, s.rows, /*allow_minus_one=*/false, &rng);
      SparseMatrix<Real> expected;
      expected.SelectRows(rows, smat);
      CuSparseMatrix<Real> got;
      got.SelectRows(CuArray<int32>(rows), cu);
      EXPECT_EQ(got.NumRows(), expected.NumRows());
      EXPECT_EQ(got.NumCols(), expected.NumCols());
      EXPECT_EQ(got.NumElements(), expected.NumElements());
      EXPECT_TRUE(
          test::SameElements(Dense(got), Dense(expected, expected.NumRows(), expected.NumCols())));
    }
  });
}

TYPED_TEST(CuSparseMatrixTest, SwapExchangesContents) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  SparseMatrix<Real> a = RandomSparse<Real>(5, 7, 0.3, &rng), b = RandomSparse<Real>(2, 3, 1, &rng);
  CuSparseMatrix<Real> ca(a), cb(b);
  ca.Swap(&cb);
  EXPECT_EQ(ca.NumRows(), 2);
  EXPECT_EQ(cb.NumCols(), 7);
  EXPECT_TRUE(test::SameElements(Dense(ca), Dense(b, 2, 3)));
  EXPECT_TRUE(test::SameElements(Dense(cb), Dense(a, 5, 7)));
}

TYPED_TEST(CuSparseMatrixTest, WriteMatchesCpuAndReadRoundTrips) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (bool binary : {true, false}) {
    for (const test::Shape& s : kSparseShapes) {
      SparseMatrix<Real> smat = RandomSparse<Real>(s.rows, s.cols, 0.1, &rng);
      CuSparseMatrix<Real> cu(smat);
      std::ostringstream cpu_out, cu_out;
      smat.Write(cpu_out, binary);
      cu.Write(cu_out, binary);
      EXPECT_EQ(cu_out.str(), cpu_out.str()) << s << (binary ? " binary" : " text");
      std::istringstream in(cu_out.str());
      CuSparseMatrix<Real> back;
      back.Read(in, binary);
      EXPECT_EQ(back.NumElements(), smat.NumElements());
      // Text keeps the printed precision only.
      EXPECT_TRUE(test::ExpectNear(Dense(back), Dense(smat, s.rows, s.cols), binary ? 0.0 : 1e-5));
    }
  }
}

TYPED_TEST(CuSparseMatrixTest, AddSmatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Real alpha = 0.75;
  ForEachSparse([&](const test::Shape& s, double density) {
    SparseMatrix<Real> smat = RandomSparse<Real>(s.rows, s.cols, density, &rng);
    CuSparseMatrix<Real> cu(smat);
    for (MatrixTransposeType t : {kNoTrans, kTrans}) {
      const int rows = t == kNoTrans ? s.rows : s.cols, cols = t == kNoTrans ? s.cols : s.rows;
      test::GuardedCuMatrix<Real> out(rows, cols, true, &rng);
      Matrix<Real> expected = out.Host();
      expected.AddMat(alpha, Matrix<Real>(Dense(smat, s.rows, s.cols), t));
      out.view.AddSmat(alpha, cu, t);
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, test::Tol<Real>()));
      EXPECT_TRUE(out.BorderUnchanged());
    }
  });
}

TYPED_TEST(CuSparseMatrixTest, AddSmatMatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const ProductShape& p : kProductShapes) {
    for (double density : kDensities) {
      for (MatrixTransposeType t : {kNoTrans, kTrans}) {
        for (Real beta : {Real(0), Real(0.5)}) {
          SCOPED_TRACE(::testing::Message()
                       << "m " << p.m << " k " << p.k << " n " << p.n << " density " << density
                       << " trans " << t << " beta " << beta);
          const int ar = t == kNoTrans ? p.m : p.k, ac = t == kNoTrans ? p.k : p.m;
          SparseMatrix<Real> smat = RandomSparse<Real>(ar, ac, density, &rng);
          CuSparseMatrix<Real> A(smat);
          test::GuardedCuMatrix<Real> B(p.k, p.n, true, &rng);
          test::GuardedCuMatrix<Real> C(p.m, p.n, true, &rng);
          Matrix<Real> expected = C.Host();
          expected.AddMatMat(Real(-1.5), Dense(smat, ar, ac), t, B.Host(), kNoTrans, beta);
          C.view.AddSmatMat(Real(-1.5), A, t, B.view, beta);
          EXPECT_TRUE(test::ExpectNear(ToHost(C.view), expected, ProductTol<Real>()));
          EXPECT_TRUE(C.BorderUnchanged());
        }
      }
    }
  }
}

// Sets the GPU path of AddMatSmat for its scope and restores the default afterwards.
class ScopedMatSmatPath {
 public:
  explicit ScopedMatSmatPath(internal::MatSmatPath path) { internal::SetMatSmatPath(path); }
  ~ScopedMatSmatPath() { internal::SetMatSmatPath(internal::MatSmatPath::kRowMajor); }
  ScopedMatSmatPath(const ScopedMatSmatPath&) = delete;
  ScopedMatSmatPath& operator=(const ScopedMatSmatPath&) = delete;
};

const char* PathName(internal::MatSmatPath p) {
  return p == internal::MatSmatPath::kRowMajor
             ? "row-major path"
             : (p == internal::MatSmatPath::kColMajor ? "column-major path" : "transpose-op path");
}

// AddMatSmat against the CPU for every product shape, density, transpose and beta, with A and C
// packed and as unaligned views.
template <typename Real>
void CheckAddMatSmat(test::Rng* rng) {
  std::vector<ProductShape> shapes = kProductShapes;
  shapes.push_back(ProductShape{37, 101, 65});
  for (const ProductShape& p : shapes) {
    for (double density : kDensities) {
      for (MatrixTransposeType t : {kNoTrans, kTrans}) {
        for (Real beta : {Real(0), Real(0.5)}) {
          for (bool strided : {true, false}) {
            SCOPED_TRACE(::testing::Message()
                         << "m " << p.m << " k " << p.k << " n " << p.n << " density " << density
                         << " trans " << t << " beta " << beta << (strided ? " views" : ""));
            // this (m x n) = A (m x k) op(B), op(B) k x n.
            const int br = t == kNoTrans ? p.k : p.n, bc = t == kNoTrans ? p.n : p.k;
            SparseMatrix<Real> smat = RandomSparse<Real>(br, bc, density, rng);
            CuSparseMatrix<Real> B(smat);
            test::GuardedCuMatrix<Real> A(p.m, p.k, strided, rng);
            test::GuardedCuMatrix<Real> C(p.m, p.n, strided, rng);
            Matrix<Real> expected = C.Host();
            expected.AddMatMat(Real(0.25), A.Host(), kNoTrans, Dense(smat, br, bc), t, beta);
            C.view.AddMatSmat(Real(0.25), A.view, B, t, beta);
            EXPECT_TRUE(test::ExpectNear(ToHost(C.view), expected, ProductTol<Real>()));
            EXPECT_TRUE(C.BorderUnchanged());
            EXPECT_TRUE(A.BorderUnchanged());
          }
        }
      }
    }
  }
}

TYPED_TEST(CuSparseMatrixTest, AddMatSmatMatchesCpu) {
  test::Rng rng = test::MakeRng();
  CheckAddMatSmat<TypeParam>(&rng);
}

// The GPU paths kept for comparison (internal::MatSmatPath) compute the same thing; on the CPU
// the setting is ignored.
TYPED_TEST(CuSparseMatrixTest, AddMatSmatMatchesCpuOnEveryGpuPath) {
  test::Rng rng = test::MakeRng();
  for (internal::MatSmatPath path :
       {internal::MatSmatPath::kColMajor, internal::MatSmatPath::kTransposeOp}) {
    SCOPED_TRACE(PathName(path));
    ScopedMatSmatPath scoped(path);
    EXPECT_EQ(internal::GetMatSmatPath(), path);
    CheckAddMatSmat<TypeParam>(&rng);
  }
  EXPECT_EQ(internal::GetMatSmatPath(), internal::MatSmatPath::kRowMajor);
}

// smat's sparsity pattern with new random values (never 0).
template <typename Real>
SparseMatrix<Real> NewValues(const SparseMatrix<Real>& smat, test::Rng* rng) {
  std::vector<std::vector<std::pair<MatrixIndexT, Real>>> pairs(smat.NumRows());
  for (MatrixIndexT r = 0; r < smat.NumRows(); ++r)
    for (MatrixIndexT i = 0; i < smat.Row(r).NumElements(); ++i)
      pairs[r].emplace_back(smat.Row(r).Data()[i].first, static_cast<Real>(rng->Uniform(1, 2)));
  return SparseMatrix<Real>(smat.NumCols(), pairs);
}

// C = A op(B) for both transposes (A random, of the shape B needs) against the CPU with
// `expected_b`, B's intended contents.
template <typename Real>
void CheckProductsWith(const CuSparseMatrix<Real>& B, const SparseMatrix<Real>& expected_b,
                       test::Rng* rng) {
  const int br = expected_b.NumRows(), bc = br > 0 ? expected_b.NumCols() : 0;
  ASSERT_EQ(B.NumRows(), br);
  ASSERT_EQ(B.NumCols(), bc);
  for (MatrixTransposeType t : {kNoTrans, kTrans}) {
    const int k = t == kNoTrans ? br : bc, n = t == kNoTrans ? bc : br;
    const Matrix<Real> a = test::RandomMatrix<Real>(6, k, rng);
    Matrix<Real> expected(6, n);
    expected.AddMatMat(1, a, kNoTrans, Dense(expected_b, br, bc), t, 0);
    CuMatrix<Real> c(6, n);
    c.AddMatSmat(1, CuMatrix<Real>(a), B, t, 0);
    EXPECT_TRUE(test::ExpectNear(ToHost(c), expected, ProductTol<Real>())) << "trans " << t;
  }
}

// AddMatSmat keeps B's transpose between calls (GPU); every way of changing B must drop it, also
// when B keeps its shape and number of elements (its device buffers are then reused).
TYPED_TEST(CuSparseMatrixTest, AddMatSmatSeesEveryChangeOfTheSparseMatrix) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SparseMatrix<Real> s1 = RandomSparse<Real>(9, 7, 0.4, &rng);
  const SparseMatrix<Real> s2 = NewValues(s1, &rng);
  const SparseMatrix<Real> s3 = RandomSparse<Real>(5, 11, 0.5, &rng);
  CuSparseMatrix<Real> B(s1);
  {
    SCOPED_TRACE("first and second use");
    CheckProductsWith(B, s1, &rng);
    CheckProductsWith(B, s1, &rng);
  }
  {
    SCOPED_TRACE("CopyFromSmat, same pattern");
    B.CopyFromSmat(s2);
    CheckProductsWith(B, s2, &rng);
  }
  {
    SCOPED_TRACE("operator=, another shape");
    B = CuSparseMatrix<Real>(s3);
    CheckProductsWith(B, s3, &rng);
  }
  {
    SCOPED_TRACE("Swap with a CuSparseMatrix");
    CuSparseMatrix<Real> other(s1);
    CheckProductsWith(other, s1, &rng);
    B.Swap(&other);
    CheckProductsWith(B, s1, &rng);
    CheckProductsWith(other, s3, &rng);
  }
  {
    SCOPED_TRACE("Swap with a SparseMatrix");
    SparseMatrix<Real> h(s2);
    B.Swap(&h);
    CheckProductsWith(B, s2, &rng);
  }
  {
    SCOPED_TRACE("Read");
    std::ostringstream os;
    s1.Write(os, true);
    std::istringstream is(os.str());
    B.Read(is, true);
    CheckProductsWith(B, s1, &rng);
  }
  {
    SCOPED_TRACE("SelectRows");
    const std::vector<int32> rows = {8, 0, 3, 3};
    const CuSparseMatrix<Real> from(s2);
    B.SelectRows(CuArray<int32>(rows), from);
    SparseMatrix<Real> expected;
    expected.SelectRows(rows, s2);
    CheckProductsWith(B, expected, &rng);
  }
  {
    SCOPED_TRACE("CopyFromSmat of its own transpose");
    const CuSparseMatrix<Real> before(B);
    SparseMatrix<Real> h;
    before.CopyToSmat(&h);
    B.CopyFromSmat(B, kTrans);
    CheckProductsWith(B, SparseMatrix<Real>(h, kTrans), &rng);
  }
}

// cusparseCsr2cscEx2 does not replay correctly from a graph, so the GPU refuses to capture a
// sparse transpose, naming it (the CPU mode has nothing to refuse).
TYPED_TEST(CuSparseMatrixTest, TransposeRefusesGraphCapture) {
  CUCTX_REQUIRE_GPU();
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const CuSparseMatrix<Real> B(RandomSparse<Real>(6, 5, 0.5, &rng));
  CuSparseMatrix<Real> T;
  test::ExpectErrorContaining([&] { CuGraph::Capture([&] { T.CopyFromSmat(B, kTrans); }); },
                              "CuSparseMatrix::CopyFromSmat(kTrans)");
}

// A captured AddMatSmat reads B's current values at every replay, even after B has been changed
// in place (same shape and number of elements) and even though an eager call cached B's
// transpose before the capture.
TYPED_TEST(CuSparseMatrixTest, CapturedAddMatSmatSeesNewValuesAtReplay) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SparseMatrix<Real> s1 = RandomSparse<Real>(12, 10, 0.3, &rng);
  const SparseMatrix<Real> s2 = NewValues(s1, &rng);
  const Matrix<Real> a = test::RandomMatrix<Real>(8, 12, &rng);
  CuSparseMatrix<Real> B(s1);
  const CuMatrix<Real> A(a);
  CuMatrix<Real> C(8, 10);
  C.AddMatSmat(1, A, B, kNoTrans, 0);
  CuGraph graph = CuGraph::Capture([&] { C.AddMatSmat(2, A, B, kNoTrans, 0); });
  for (const SparseMatrix<Real>* s : {&s1, &s2}) {
    B.CopyFromSmat(*s);
    graph.Launch();
    Matrix<Real> expected(8, 10);
    expected.AddMatMat(2, a, kNoTrans, Dense(*s, 12, 10), kNoTrans, 0);
    EXPECT_TRUE(test::ExpectNear(ToHost(C), expected, ProductTol<Real>()))
        << (s == &s1 ? "first values" : "new values");
  }
}

TYPED_TEST(CuSparseMatrixTest, BetaZeroOverwritesNaN) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  SparseMatrix<Real> smat = RandomSparse<Real>(6, 5, 0.5, &rng);
  CuSparseMatrix<Real> A(smat);
  Matrix<Real> b = test::RandomMatrix<Real>(5, 4, &rng), a = test::RandomMatrix<Real>(4, 6, &rng);
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  CuMatrix<Real> c1(6, 4), c2(4, 5);
  c1.Set(nan);
  c2.Set(nan);
  c1.AddSmatMat(1, A, kNoTrans, CuMatrix<Real>(b), 0);
  c2.AddMatSmat(1, CuMatrix<Real>(a), A, kNoTrans, 0);
  Matrix<Real> e1(6, 4), e2(4, 5);
  e1.AddMatMat(1, Dense(smat, 6, 5), kNoTrans, b, kNoTrans, 0);
  e2.AddMatMat(1, a, kNoTrans, Dense(smat, 6, 5), kNoTrans, 0);
  EXPECT_TRUE(test::ExpectNear(ToHost(c1), e1, ProductTol<Real>()));
  EXPECT_TRUE(test::ExpectNear(ToHost(c2), e2, ProductTol<Real>()));
}

TYPED_TEST(CuSparseMatrixTest, TraceMatSmatMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  ForEachSparse([&](const test::Shape& s, double density) {
    SparseMatrix<Real> smat = RandomSparse<Real>(s.rows, s.cols, density, &rng);
    CuSparseMatrix<Real> B(smat);
    for (MatrixTransposeType t : {kNoTrans, kTrans}) {
      // kNoTrans: A is cols x rows; kTrans: A has B's shape.
      const int ar = t == kNoTrans ? s.cols : s.rows, ac = t == kNoTrans ? s.rows : s.cols;
      test::GuardedCuMatrix<Real> A(ar, ac, true, &rng);
      const double expected = TraceMatSmat(A.Host(), smat, t);
      const double got = TraceMatSmat(A.view, B, t);
      // A sum of up to 771 products accumulated in Real on the GPU.
      EXPECT_NEAR(got, expected, 1000 * test::Tol<Real>() * (1 + std::abs(expected)));
    }
  });
}

TYPED_TEST(CuSparseMatrixTest, MisuseThrowsNamingShapesAndIndexes) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  SparseMatrix<Real> smat = RandomSparse<Real>(3, 4, 0.5, &rng);
  CuSparseMatrix<Real> A(smat);
  CuMatrix<Real> m34(3, 4), m43(4, 3), m55(5, 5), m45(4, 5);
  test::ExpectErrorContaining([&] { A.CopyToMat(&m43); }, "sparse 3x4 (kNoTrans)");
  test::ExpectErrorContaining([&] { A.CopyToMat(&m34, kTrans); }, "destination 3x4");
  test::ExpectErrorContaining([&] { m43.AddSmat(1, A); }, "does not match *this 4x3");
  test::ExpectErrorContaining([&] { m55.AddSmatMat(1, A, kNoTrans, m45, 0); }, "into 5x5");
  test::ExpectErrorContaining([&] { m55.AddSmatMat(1, A, kNoTrans, m55, 0); }, "B 5x5");
  test::ExpectErrorContaining([&] { m55.AddMatSmat(1, m55, A, kTrans, 0); }, "shape mismatch");
  test::ExpectErrorContaining([&] { TraceMatSmat(m34, A, kNoTrans); }, "is not square");
  // Aliasing: B (or A) a view of the output.
  CuMatrix<Real> sq(4, 4);
  CuSparseMatrix<Real> A44(RandomSparse<Real>(4, 4, 0.5, &rng));
  test::ExpectErrorContaining([&] { sq.AddSmatMat(1, A44, kNoTrans, sq, 0); }, "overlaps input B");
  test::ExpectErrorContaining([&] { sq.AddMatSmat(1, sq, A44, kNoTrans, 0); }, "overlaps input A");
  // Index arrays.
  CuArray<int32> idx(std::vector<int32>{0, -1, 7, 2});
  test::ExpectErrorContaining([&] { CuSparseMatrix<Real> x(idx, 5); }, "indexes[2] = 7");
  test::ExpectErrorContaining([&] { CuSparseMatrix<Real> x(idx, -1); }, "negative dimension -1");
  test::ExpectErrorContaining([&] { CuSparseMatrix<Real> x(idx, CuVector<Real>(3), 9); },
                              "4 indexes but 3 weights");
  CuSparseMatrix<Real> out;
  test::ExpectErrorContaining(
      [&] {
        out.SelectRows(CuArray<int32>(std::vector<int32>{0, 3}), A);
      },
      "row_indexes[1] = 3");
  test::ExpectErrorContaining([&] { out.SelectRows(CuArray<int32>(std::vector<int32>{-1}), A); },
                              "row_indexes[0] = -1");
  test::ExpectErrorContaining([&] { A.SelectRows(CuArray<int32>(std::vector<int32>{0}), A); },
                              "must not be *this");
  // Bad stream.
  std::istringstream bad("rows=1 dim=3 [ 5 0.5 ] \n");
  test::ExpectErrorContaining([&] { out.Read(bad, false); }, "5");
}

}  // namespace
}  // namespace cuctx
