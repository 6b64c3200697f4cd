// tests/cudamatrix/cu-matrix-gather-test.cc: CuMatrix gather/scatter family compared with the CPU
// Matrix.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#endif

namespace cuctx {
namespace {

using test::ToHost;

template <typename Real>
using Guarded = test::GuardedCuMatrix<Real>;

// True when index values in CuArrays are checked (always on the CPU; on the GPU only in
// sync-check mode, see the NOTE ON index validation in cu-matrix.h).
bool IndexValuesChecked() {
#if CUCTX_HAVE_CUDA
  if (test::GpuEnabled()) return internal::SyncChecksEnabled();
#endif
  return true;
}

// Random (first, second) ranges within [0, limit), about a fifth of them empty.
std::vector<Int32Pair> RandomRanges(int count, int limit, test::Rng* rng) {
  std::vector<Int32Pair> out(count);
  for (Int32Pair& p : out) {
    if (limit == 0 || rng->Uniform() < 0.2) {
      p = rng->Uniform() < 0.5 ? Int32Pair{-1, -1} : Int32Pair{2, 1};
    } else {
      const int32 a = static_cast<int32>(rng->Int(0, limit - 1));
      const int32 b = static_cast<int32>(rng->Int(0, limit - 1));
      p = Int32Pair{std::min(a, b), std::max(a, b) + 1};
    }
  }
  return out;
}

// Random (row, column) pairs inside a rows x cols matrix, with repeats.
std::vector<Int32Pair> RandomPairs(int count, int rows, int cols, test::Rng* rng) {
  std::vector<Int32Pair> out(count);
  for (Int32Pair& p : out)
    p = Int32Pair{static_cast<int32>(rng->Int(0, rows - 1)),
                  static_cast<int32>(rng->Int(0, cols - 1))};
  return out;
}

template <typename Real>
class CuMatrixGatherTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMatrixGatherTest, RealTypes);

TYPED_TEST(CuMatrixGatherTest, CopyRowsAndColsFromVecMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const int size = s.rows * s.cols;
    const Vector<Real> whole = test::RandomVector<Real>(size, &rng);
    const Vector<Real> row = test::RandomVector<Real>(s.cols, &rng);
    const Vector<Real> col = test::RandomVector<Real>(s.rows, &rng);
    {
      Guarded<Real> out(s.rows, s.cols, strided, &rng);
      Matrix<Real> expected = out.Host();
      expected.CopyRowsFromVec(whole);
      out.view.CopyRowsFromVec(CuVector<Real>(whole));
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "rows, Cu vector";
      expected.CopyRowsFromVec(row);
      out.view.CopyRowsFromVec(CuVector<Real>(row));
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "one row, Cu vector";
      EXPECT_TRUE(out.BorderUnchanged());
    }
    {
      Guarded<Real> out(s.rows, s.cols, strided, &rng);
      Matrix<Real> expected = out.Host();
      expected.CopyRowsFromVec(row);
      out.view.CopyRowsFromVec(row);
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "one row, host vector";
      expected.CopyRowsFromVec(whole);
      out.view.CopyRowsFromVec(whole);
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "rows, host vector";
      EXPECT_TRUE(out.BorderUnchanged());
    }
    {
      Guarded<Real> out(s.rows, s.cols, strided, &rng);
      Matrix<Real> expected = out.Host();
      expected.CopyColsFromVec(whole);
      out.view.CopyColsFromVec(CuVector<Real>(whole));
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "columns";
      expected.CopyColsFromVec(col);
      out.view.CopyColsFromVec(CuVector<Real>(col));
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "one column";
      if (s.cols > 0) {
        const Vector<Real> other = test::RandomVector<Real>(s.rows, &rng);
        expected.CopyColFromVec(other, s.cols / 2);
        out.view.CopyColFromVec(CuVector<Real>(other), s.cols / 2);
        EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "CopyColFromVec";
      }
      EXPECT_TRUE(out.BorderUnchanged());
    }
  });
}

TYPED_TEST(CuMatrixGatherTest, CopyFromVecThrowsOnMisuse) {
  using Real = TypeParam;
  CuMatrix<Real> m(3, 4);
  test::ExpectErrorContaining([&] { m.CopyRowsFromVec(CuVector<Real>(5)); },
                              "vector dimension 5 is neither rows * cols nor cols of 3x4");
  test::ExpectErrorContaining([&] { m.CopyRowsFromVec(Vector<Real>(3)); },
                              "vector dimension 3 is neither rows * cols nor cols of 3x4");
  test::ExpectErrorContaining([&] { m.CopyColsFromVec(CuVector<Real>(4)); },
                              "vector dimension 4 is neither rows * cols nor rows of 3x4");
  test::ExpectErrorContaining([&] { m.CopyColFromVec(CuVector<Real>(3), 4); },
                              "column 4 out of range for 3x4");
  test::ExpectErrorContaining([&] { m.CopyColFromVec(CuVector<Real>(4), 0); },
                              "v has dimension 4, expected NumRows() of 3x4");
  test::ExpectErrorContaining([&] { m.CopyRowsFromVec(m.Row(1)); }, "overlaps *this 3x4");
  CuMatrix<Real> col(4, 1);
  test::ExpectErrorContaining([&] { col.CopyColsFromVec(CuSubVector<Real>(col.Data(), 4)); },
                              "overlaps");
}

// The by-index row gathers (CopyRows, AddRows, MulRows) on every shape, with -1 entries.
TYPED_TEST(CuMatrixGatherTest, RowGathersMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Real alpha = 0.75;
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const int src_rows = s.rows / 2 + 3;
    Guarded<Real> src(src_rows, s.cols, !strided, &rng);
    const Matrix<Real> src_host = src.Host();
    const std::vector<int32> idx = test::RandomIndices(s.rows, src_rows, true, &rng);
    const CuArray<int32> cu_idx(idx);
    for (int op = 0; op < 3; ++op) {
      SCOPED_TRACE(op == 0 ? "CopyRows" : op == 1 ? "AddRows" : "MulRows");
      Guarded<Real> out(s.rows, s.cols, strided, &rng);
      Matrix<Real> expected = out.Host();
      if (op == 0) {
        expected.CopyRows(src_host, idx.data());
        out.view.CopyRows(src.view, cu_idx);
      } else if (op == 1) {
        expected.AddRows(alpha, src_host, idx.data());
        out.view.AddRows(alpha, src.view, cu_idx);
      } else {
        expected.MulRows(src_host, idx.data());
        out.view.MulRows(src.view, cu_idx);
      }
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, test::Tol<Real>()));
      EXPECT_TRUE(out.BorderUnchanged());
    }
    EXPECT_TRUE(src.BorderUnchanged());
  });
}

// Row gathers (by index, with -1 entries, and by pointer, rows of both operands in every layout:
// 16-byte vectors where both rows are aligned, single elements otherwise, a partial vector at the
// end of most rows).
TYPED_TEST(CuMatrixGatherTest, RowGathersMatchCpuInEveryLayout) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Real alpha = -0.5;
  for (const test::Shape& s : {test::Shape{1, 1}, test::Shape{3, 5}, test::Shape{17, 33},
                               test::Shape{64, 130}, test::Shape{65, 1027}, test::Shape{9, 4099}}) {
    const int src_rows = s.rows + 3;
    const Matrix<Real> src = test::RandomMatrix<Real>(src_rows, s.cols, &rng);
    const Matrix<Real> init = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    const std::vector<int32> idx = test::RandomIndices(s.rows, src_rows, true, &rng);
    const CuArray<int32> cu_idx(idx);
    for (test::Layout ls : test::kAllLayouts) {
      for (test::Layout lo : test::kAllLayouts) {
        SCOPED_TRACE(::testing::Message()
                     << s << ", src " << test::LayoutName(ls) << ", out " << test::LayoutName(lo));
        const test::LayoutCuMatrix<Real> cu_src(src, ls);
        // The pointer forms gather the same rows (nullptr where the index is -1).
        std::vector<const Real*> cu_ptrs(s.rows);
        for (int r = 0; r < s.rows; ++r)
          cu_ptrs[r] = idx[r] < 0 ? nullptr : cu_src.view.RowData(idx[r]);
        const CuArray<const Real*> cu_ptr_array(cu_ptrs);
        for (int op = 0; op < 3; ++op) {
          for (bool by_pointer : {false, true}) {
            SCOPED_TRACE(::testing::Message() << (op == 0   ? "CopyRows"
                                                  : op == 1 ? "AddRows"
                                                            : "MulRows")
                                              << (by_pointer ? " by pointer" : " by index"));
            if (op == 2 && by_pointer) continue;  // MulRows has no pointer form
            test::LayoutCuMatrix<Real> out(init, lo);
            Matrix<Real> expected(init);
            if (op == 0) {
              expected.CopyRows(src, idx.data());
              if (by_pointer)
                out.view.CopyRows(cu_ptr_array);
              else
                out.view.CopyRows(cu_src.view, cu_idx);
            } else if (op == 1) {
              expected.AddRows(alpha, src, idx.data());
              if (by_pointer)
                out.view.AddRows(alpha, cu_ptr_array);
              else
                out.view.AddRows(alpha, cu_src.view, cu_idx);
            } else {
              expected.MulRows(src, idx.data());
              out.view.MulRows(cu_src.view, cu_idx);
            }
            EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, test::Tol<Real>()));
            EXPECT_TRUE(out.OutsideUnchanged());
          }
        }
      }
    }
  }
}

// Matrices large enough for the GPU's row gathers to give each thread several 16-byte vectors
// of a row (64 KiB rows, over 2^21 vectors in all).
TYPED_TEST(CuMatrixGatherTest, RowGathersOfLargeMatricesMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const int rows = 520, cols = 64 * 1024 / static_cast<int>(sizeof(Real));
  const Matrix<Real> src = test::RandomMatrix<Real>(rows, cols, &rng);
  const Matrix<Real> init(rows, cols);  // zeros: random contents would only cost CPU time
  const std::vector<int32> idx = test::RandomIndices(rows, rows, true, &rng);
  const CuArray<int32> cu_idx(idx);
  for (test::Layout l : {test::Layout::kPacked, test::Layout::kUnalignedView}) {
    SCOPED_TRACE(test::LayoutName(l));
    const test::LayoutCuMatrix<Real> cu_src(src, l);
    test::LayoutCuMatrix<Real> out(init, l);
    Matrix<Real> expected(init);
    expected.AddRows(Real(2), src, idx.data());
    out.view.AddRows(Real(2), cu_src.view, cu_idx);
    EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, test::Tol<Real>())) << "AddRows";
    expected.CopyRows(src, idx.data());
    out.view.CopyRows(cu_src.view, cu_idx);
    EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "CopyRows";
    if (l != test::Layout::kPacked) {
      EXPECT_TRUE(out.OutsideUnchanged());
    }
  }
}

// The row-pointer forms: gathers from scattered rows (nullptr entries), and scatters into them.
TYPED_TEST(CuMatrixGatherTest, RowPointerFormsMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Real alpha = -1.5;
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const int other_rows = s.rows + 2;
    Guarded<Real> other(other_rows, s.cols, !strided, &rng);
    Matrix<Real> other_host = other.Host();
    // Row r of *this pairs with row perm[r] of `other` (distinct rows, so CopyToRows is
    // well defined), or with nothing.
    std::vector<int32> perm(other_rows);
    for (int i = 0; i < other_rows; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng.Engine());
    std::vector<const Real*> cu_src(s.rows), host_src(s.rows);
    std::vector<Real*> cu_dst(s.rows), host_dst(s.rows);
    for (int r = 0; r < s.rows; ++r) {
      const bool skip = rng.Uniform() < 0.2;
      cu_dst[r] = skip ? nullptr : other.view.RowData(perm[r]);
      host_dst[r] = skip ? nullptr : other_host.RowData(perm[r]);
      cu_src[r] = cu_dst[r];
      host_src[r] = host_dst[r];
    }
    const CuArray<const Real*> src_ptrs(cu_src);
    const CuArray<Real*> dst_ptrs(cu_dst);

    Guarded<Real> out(s.rows, s.cols, strided, &rng);
    Matrix<Real> expected = out.Host();
    expected.CopyRows(host_src.data());
    out.view.CopyRows(src_ptrs);
    EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "CopyRows";
    expected.AddRows(alpha, host_src.data());
    out.view.AddRows(alpha, src_ptrs);
    EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, test::Tol<Real>())) << "AddRows";
    EXPECT_TRUE(out.BorderUnchanged());

    Guarded<Real> in(s.rows, s.cols, strided, &rng);
    const Matrix<Real> in_host = in.Host();
    in_host.AddToRows(alpha, host_dst.data());
    in.view.AddToRows(alpha, dst_ptrs);
    EXPECT_TRUE(test::ExpectNear(ToHost(other.view), other_host, test::Tol<Real>())) << "AddToRows";
    in_host.CopyToRows(host_dst.data());
    in.view.CopyToRows(dst_ptrs);
    EXPECT_TRUE(test::ExpectNear(ToHost(other.view), other_host, 0.0)) << "CopyToRows";
    EXPECT_TRUE(other.BorderUnchanged());
    EXPECT_TRUE(in.BorderUnchanged());
  });
}

// Many source rows add into few destination rows (by index and by pointer): the GPU adds them
// atomically, in no fixed order, hence the tolerance of a sum of up to ~1000 terms.
TYPED_TEST(CuMatrixGatherTest, AddToRowsAccumulatesRepeatedDestinations) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const double tol = 100 * test::Tol<Real>();
  const Real alpha = 0.5;
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const int dst_rows = 4;
    Guarded<Real> src(s.rows, s.cols, !strided, &rng);
    Guarded<Real> dst(dst_rows, s.cols, strided, &rng);
    Matrix<Real> expected = dst.Host();
    const std::vector<int32> idx = test::RandomIndices(s.rows, dst_rows, true, &rng);
    src.Host().AddToRows(alpha, idx.data(), &expected);
    src.view.AddToRows(alpha, CuArray<int32>(idx), &dst.view);
    EXPECT_TRUE(test::ExpectNear(ToHost(dst.view), expected, tol)) << "by index";
    std::vector<Real*> cu_dst(s.rows), host_dst(s.rows);
    for (int r = 0; r < s.rows; ++r) {
      cu_dst[r] = idx[r] < 0 ? nullptr : dst.view.RowData(idx[r]);
      host_dst[r] = idx[r] < 0 ? nullptr : expected.RowData(idx[r]);
    }
    src.Host().AddToRows(alpha, host_dst.data());
    src.view.AddToRows(alpha, CuArray<Real*>(cu_dst));
    EXPECT_TRUE(test::ExpectNear(ToHost(dst.view), expected, tol)) << "by pointer";
    EXPECT_TRUE(dst.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixGatherTest, ColumnGathersMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const int src_cols = s.cols / 2 + 3;
    Guarded<Real> src(s.rows, src_cols, !strided, &rng);
    const std::vector<int32> idx = test::RandomIndices(s.cols, src_cols, true, &rng);
    const CuArray<int32> cu_idx(idx);
    Guarded<Real> out(s.rows, s.cols, strided, &rng);
    Matrix<Real> expected = out.Host();
    expected.CopyCols(src.Host(), idx.data());
    out.view.CopyCols(src.view, cu_idx);
    EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "CopyCols";
    expected.AddCols(src.Host(), idx.data());
    out.view.AddCols(src.view, cu_idx);
    EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, test::Tol<Real>())) << "AddCols";
    EXPECT_TRUE(out.BorderUnchanged());
  });
}

// Column gathers in every layout, on shapes for both GPU kernels: the source row staged in
// shared memory (at least 64 rows, source rows up to 48 KiB and at most 4 source columns per
// destination column) and the direct one (the other shapes); the index array aligned and not.
TYPED_TEST(CuMatrixGatherTest, ColumnGathersMatchCpuInEveryLayout) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  struct GatherShape {
    int rows, cols, src_cols;
  };
  for (const GatherShape& g :
       {GatherShape{64, 130, 67}, GatherShape{65, 1027, 2000}, GatherShape{100, 4097, 4096},
        GatherShape{80, 3, 1}, GatherShape{70, 40, 200}, GatherShape{17, 33, 20},
        GatherShape{64, 5, 13000}}) {
    const Matrix<Real> src = test::RandomMatrix<Real>(g.rows, g.src_cols, &rng);
    const Matrix<Real> init = test::RandomMatrix<Real>(g.rows, g.cols, &rng);
    // One index more than needed, so that a view from the second entry is not 16-byte aligned.
    const std::vector<int32> idx = test::RandomIndices(g.cols + 1, g.src_cols, true, &rng);
    const CuArray<int32> cu_idx(idx);
    for (bool shifted : {false, true}) {
      const CuSubArray<int32> cu_view(cu_idx, shifted ? 1 : 0, g.cols);
      const int32* host_idx = idx.data() + (shifted ? 1 : 0);
      for (test::Layout ls : test::kAllLayouts) {
        for (test::Layout lo : test::kAllLayouts) {
          SCOPED_TRACE(::testing::Message()
                       << g.rows << "x" << g.cols << " from " << g.src_cols << " columns, src "
                       << test::LayoutName(ls) << ", out " << test::LayoutName(lo)
                       << (shifted ? ", indexes shifted" : ""));
          const test::LayoutCuMatrix<Real> cu_src(src, ls);
          test::LayoutCuMatrix<Real> out(init, lo);
          Matrix<Real> expected(init);
          expected.CopyCols(src, host_idx);
          out.view.CopyCols(cu_src.view, cu_view);
          EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "CopyCols";
          expected.AddCols(src, host_idx);
          out.view.AddCols(cu_src.view, cu_view);
          EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, test::Tol<Real>())) << "AddCols";
          EXPECT_TRUE(out.OutsideUnchanged());
        }
      }
    }
  }
}

TYPED_TEST(CuMatrixGatherTest, RangeSumsMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  // Sums of up to ~40 terms; both paths add in the same order, the tolerance only covers
  // contraction differences between compilers.
  const double tol = 10 * test::Tol<Real>();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    {
      const int src_rows = std::min(s.rows, 40) + 2;
      Guarded<Real> src(src_rows, s.cols, !strided, &rng);
      const std::vector<Int32Pair> ranges = RandomRanges(s.rows, src_rows, &rng);
      Guarded<Real> out(s.rows, s.cols, strided, &rng);
      Matrix<Real> expected = out.Host();
      expected.AddRowRanges(src.Host(), ranges.data());
      out.view.AddRowRanges(src.view, CuArray<Int32Pair>(ranges));
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, tol)) << "AddRowRanges";
      EXPECT_TRUE(out.BorderUnchanged());
    }
    {
      const int src_cols = std::min(s.cols, 40) + 2;
      Guarded<Real> src(s.rows, src_cols, !strided, &rng);
      const std::vector<Int32Pair> ranges = RandomRanges(s.cols, src_cols, &rng);
      Guarded<Real> out(s.rows, s.cols, strided, &rng);
      Matrix<Real> expected = out.Host();
      expected.SumColumnRanges(src.Host(), ranges.data());
      out.view.SumColumnRanges(src.view, CuArray<Int32Pair>(ranges));
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, tol)) << "SumColumnRanges";
      EXPECT_TRUE(out.BorderUnchanged());
    }
  });
}

TYPED_TEST(CuMatrixGatherTest, TrianglesMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  // 1000: floats take the wide (64-column) tiles from about 961 rows on, narrow ones below.
  for (int n : {0, 1, 2, 31, 33, 64, 97, 130, 257, 1000}) {
    for (bool strided : {false, true}) {
      SCOPED_TRACE(::testing::Message() << n << "x" << n << (strided ? " strided" : ""));
      for (bool lower : {true, false}) {
        Guarded<Real> m(n, n, strided, &rng);
        Matrix<Real> expected = m.Host();
        if (lower) {
          expected.CopyLowerToUpper();
          m.view.CopyLowerToUpper();
        } else {
          expected.CopyUpperToLower();
          m.view.CopyUpperToLower();
        }
        EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, 0.0)) << lower;
        EXPECT_TRUE(m.BorderUnchanged());
      }
    }
  }
  // Every layout, with sizes around the GPU's tiles (32 or 64 floats, 32 doubles wide).
  for (int n : {5, 63, 65, 128, 200}) {
    for (test::Layout l : test::kAllLayouts) {
      SCOPED_TRACE(::testing::Message() << n << "x" << n << " " << test::LayoutName(l));
      for (bool lower : {true, false}) {
        const Matrix<Real> init = test::RandomMatrix<Real>(n, n, &rng);
        test::LayoutCuMatrix<Real> m(init, l);
        Matrix<Real> expected(init);
        if (lower) {
          expected.CopyLowerToUpper();
          m.view.CopyLowerToUpper();
        } else {
          expected.CopyUpperToLower();
          m.view.CopyUpperToLower();
        }
        EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, 0.0)) << lower;
        EXPECT_TRUE(m.OutsideUnchanged());
      }
    }
  }
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> m(s.rows, s.cols, strided, &rng);
    Matrix<Real> expected = m.Host();
    expected.SetZeroAboveDiag();
    m.view.SetZeroAboveDiag();
    EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, 0.0)) << "SetZeroAboveDiag";
    EXPECT_TRUE(m.BorderUnchanged());
  });
  CuMatrix<Real> wide(2, 3);
  test::ExpectErrorContaining([&] { wide.CopyLowerToUpper(); }, "matrix 2x3 is not square");
  test::ExpectErrorContaining([&] { wide.CopyUpperToLower(); }, "matrix 2x3 is not square");
}

TYPED_TEST(CuMatrixGatherTest, LookupAndAddElementsMatchCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Real alpha = 2.5;
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> m(s.rows, s.cols, strided, &rng);
    Matrix<Real> expected = m.Host();
    const int num = s.rows * s.cols == 0 ? 0 : 300;
    const std::vector<Int32Pair> pairs = RandomPairs(num, s.rows, s.cols, &rng);
    const CuArray<Int32Pair> cu_pairs(pairs);

    std::vector<Real> want(num), got(num);
    expected.Lookup(pairs, want.data());
    m.view.Lookup(pairs, got.data());
    EXPECT_EQ(got, want) << "Lookup, host vector";
    CuVector<Real> cu_got(num);
    m.view.Lookup(cu_pairs, cu_got.Data());
    Vector<Real> got_host(num);
    cu_got.CopyToVec(&got_host);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), got_host.Data())) << "Lookup, CuArray";

    // Repeated elements accumulate; the GPU adds them atomically in no fixed order.
    const double tol = 10 * test::Tol<Real>();
    std::vector<MatrixElement<Real>> elements(num);
    for (int i = 0; i < num; ++i)
      elements[i] = MatrixElement<Real>{pairs[i].first, pairs[i].second, want[i] + Real(1)};
    expected.AddElements(alpha, elements);
    m.view.AddElements(alpha, elements);
    EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, tol)) << "AddElements, host vector";
    const Vector<Real> input = test::RandomVector<Real>(num, &rng);
    expected.AddElements(alpha, pairs.data(), num, input.Data());
    m.view.AddElements(alpha, cu_pairs, input.Data());  // host memory, as in Kaldi
    EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, tol)) << "AddElements, CuArray";

    const std::vector<int32> cols = test::RandomIndices(s.rows, s.cols, true, &rng);
    expected.AddToElements(alpha, cols.data());
    m.view.AddToElements(alpha, CuArray<int32>(cols));
    EXPECT_TRUE(test::ExpectNear(ToHost(m.view), expected, tol)) << "AddToElements";
    EXPECT_TRUE(m.BorderUnchanged());
  });
}

TYPED_TEST(CuMatrixGatherTest, EqualElementMaskMatchesCpu) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Guarded<Real> a(s.rows, s.cols, strided, &rng);
    Matrix<Real> b_host = a.Host();
    for (int r = 0; r < s.rows; ++r)
      for (int c = 0; c < s.cols; ++c)
        if (rng.Uniform() < 0.5) b_host(r, c) += Real(1);
    Guarded<Real> b(s.rows, s.cols, !strided, &rng);
    b.view.CopyFromMat(b_host);
    Matrix<Real> expected;
    a.Host().EqualElementMask(b_host, &expected);
    CuMatrix<Real> mask(1, 2);
    a.view.EqualElementMask(b.view, &mask);
    EXPECT_TRUE(test::ExpectNear(ToHost(mask), expected, 0.0));
  });
  CuMatrix<Real> a(2, 3), b(3, 2), mask;
  test::ExpectErrorContaining([&] { a.EqualElementMask(b, &mask); }, "mat 3x2 does not match");
  test::ExpectErrorContaining([&] { a.EqualElementMask(a, &a); }, "mask must be a separate");
}

// Shape, size and overlap misuse throws in both modes, naming the shapes or the counts.
TYPED_TEST(CuMatrixGatherTest, ThrowsOnShapeAndSizeMisuse) {
  using Real = TypeParam;
  CuMatrix<Real> m(4, 3), src(5, 3), wide(4, 6);
  const CuArray<int32> three(std::vector<int32>{0, 1, 2});
  const CuArray<int32> four(std::vector<int32>{0, 1, 2, 3});
  test::ExpectErrorContaining([&] { m.CopyRows(src, three); },
                              "CopyRows: indexes has 3 entries, expected 4");
  test::ExpectErrorContaining([&] { m.AddRows(1, wide, four); }, "src 4x6 has a different");
  test::ExpectErrorContaining([&] { m.MulRows(m.RowRange(1, 2), four); }, "overlaps *this 4x3");
  test::ExpectErrorContaining([&] { m.CopyCols(wide, four); },
                              "CopyCols: indexes has 4 entries, expected 3");
  test::ExpectErrorContaining([&] { m.AddCols(src, three); }, "src 5x3 has a different");
  test::ExpectErrorContaining([&] { m.AddToRows(1, three, &src); },
                              "AddToRows: indexes has 3 entries, expected 4");
  test::ExpectErrorContaining([&] { m.AddToRows(1, four, &wide); }, "dst 4x6 has a different");
  test::ExpectErrorContaining([&] { m.AddToRows(1, four, &m); }, "overlaps *this");
  test::ExpectErrorContaining([&] { m.CopyRows(CuArray<const Real*>(3)); },
                              "src has 3 entries, expected 4");
  test::ExpectErrorContaining([&] { m.CopyToRows(CuArray<Real*>(5)); },
                              "dst has 5 entries, expected 4");
  test::ExpectErrorContaining([&] { m.AddToElements(1, three); },
                              "elements has 3 entries, expected 4");
  const CuArray<Int32Pair> pairs(std::vector<Int32Pair>{{0, 1}, {1, 2}});
  test::ExpectErrorContaining([&] { m.AddRowRanges(src, pairs); },
                              "AddRowRanges: indexes has 2 entries, expected 4");
  test::ExpectErrorContaining([&] { m.SumColumnRanges(src, pairs); }, "src 5x3 has a different");
  // Host index vectors are checked in both modes.
  std::vector<Real> out(2);
  test::ExpectErrorContaining(
      [&] {
        m.Lookup(std::vector<Int32Pair>{{0, 0}, {4, 0}}, out.data());
      },
      "element 1 = (4, 0) is outside the 4x3 matrix");
  test::ExpectErrorContaining(
      [&] {
        m.AddElements(1, std::vector<MatrixElement<Real>>{{0, 0, 1}, {0, 3, 1}});
      },
      "element 1 = (0, 3) is outside the 4x3 matrix");
}

// An index value out of range: an error naming the entry where values are checked (see
// IndexValuesChecked); elsewhere the GPU kernels must treat it as -1 and stay inside every
// operand (the guarded borders), so the result equals the CPU result with -1 in its place.
TYPED_TEST(CuMatrixGatherTest, OutOfRangeIndexValuesAreReportedOrIgnored) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const bool checked = IndexValuesChecked();
  Guarded<Real> src(5, 6, true, &rng);
  Guarded<Real> out(4, 6, true, &rng);
  const std::vector<int32> bad{0, 7, -1, 4}, fixed{0, -1, -1, 4};
  const std::vector<Int32Pair> bad_ranges{{0, 2}, {1, 9}, {-1, -1}, {3, 5}};
  const std::vector<Int32Pair> fixed_ranges{{0, 2}, {1, 5}, {-1, -1}, {3, 5}};
  if (checked) {
    test::ExpectErrorContaining([&] { out.view.CopyRows(src.view, CuArray<int32>(bad)); },
                                "indexes[1] = 7 is out of range for 5 source rows");
    test::ExpectErrorContaining([&] { out.view.AddToRows(1, CuArray<int32>(bad), &src.view); },
                                "indexes[1] = 7 is out of range for 5 destination rows");
    test::ExpectErrorContaining(
        [&] { out.view.AddRowRanges(src.view, CuArray<Int32Pair>(bad_ranges)); },
        "range 1 = [1, 9) is not a valid range within [0, 5)");
    test::ExpectErrorContaining(
        [&] {
          out.view.AddToElements(1, CuArray<int32>(std::vector<int32>{0, 6, 1, 2}));
        },
        "indexes[1] = 6 is out of range for 6 columns");
    std::vector<Real> values(1);
    test::ExpectErrorContaining(
        [&] {
          out.view.Lookup(CuArray<Int32Pair>(std::vector<Int32Pair>{{4, 0}}), values.data());
        },
        "element 0 = (4, 0) is outside the 4x6");
    return;
  }
  Matrix<Real> expected = out.Host();
  expected.CopyRows(src.Host(), fixed.data());
  out.view.CopyRows(src.view, CuArray<int32>(bad));
  EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 0.0)) << "CopyRows";
  expected.AddRowRanges(src.Host(), fixed_ranges.data());
  out.view.AddRowRanges(src.view, CuArray<Int32Pair>(bad_ranges));
  EXPECT_TRUE(test::ExpectNear(ToHost(out.view), expected, 10 * test::Tol<Real>()))
      << "AddRowRanges";
  Matrix<Real> expected_src = src.Host();
  expected.AddToRows(1, fixed.data(), &expected_src);
  out.view.AddToRows(1, CuArray<int32>(bad), &src.view);
  EXPECT_TRUE(test::ExpectNear(ToHost(src.view), expected_src, test::Tol<Real>())) << "AddToRows";
  EXPECT_TRUE(out.BorderUnchanged());
  EXPECT_TRUE(src.BorderUnchanged());
}

}  // namespace
}  // namespace cuctx
