// tests/cudamatrix/cu-parity-test.cc: Kaldi-parity semantics of the Cu classes: mirrored packed
// reads, writable CuSpMatrix / CuTpMatrix elements through CuValue, resizing CuArray copies
// feeding cu::Randomize / cu::Copy, AssertEqual / ApproxEqual on CuValue, CuVector and
// CuSpMatrix, TraceSpSp across precisions, the free RegisterCuAllocatorOptions, and a compile
// check of a typical Kaldi-style snippet.
// SPDX-License-Identifier: Apache-2.0
#include "base/math-utils.h"
#include "base/options-itf.h"
#include "cudamatrix/cu-allocator-options.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-math.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-packed-matrix.h"
#include "cudamatrix/cu-sp-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "cudamatrix/cu-value.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <gtest/gtest.h>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
using Other = std::conditional_t<std::is_same<Real, float>::value, double, float>;

template <typename Real>
class CuParityTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuParityTest, RealTypes);

TYPED_TEST(CuParityTest, PackedReadAboveTheDiagonalGivesTheMirroredElement) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const SpMatrix<Real> sp(test::RandomMatrix<Real>(5, 5, &rng), kTakeLower);
  const CuSpMatrix<Real> cu(sp);
  const CuPackedMatrix<Real>& packed = cu;
  for (MatrixIndexT r = 0; r < 5; ++r)
    for (MatrixIndexT c = 0; c < 5; ++c) {
      ASSERT_EQ(packed(r, c), sp(r, c)) << "(" << r << ", " << c << ")";
      ASSERT_EQ(packed(r, c), packed(c, r));
    }
  test::ExpectErrorContaining([&] { packed(5, 0); }, "(5, 0)");
  test::ExpectErrorContaining([&] { packed(0, -1); }, "(0, -1)");
}

TYPED_TEST(CuParityTest, CuSpMatrixWritesThroughCuValueChangeBothTriangles) {
  using Real = TypeParam;
  CuSpMatrix<Real> cu(4);
  cu(1, 3) = Real(2.5);  // stored as (3, 1)
  cu(2, 2) = Real(-1);
  cu(3, 0) += Real(4);
  const Matrix<Real> full{CuMatrix<Real>(cu)};
  for (MatrixIndexT r = 0; r < 4; ++r)
    for (MatrixIndexT c = 0; c < 4; ++c) {
      Real want = 0;
      if ((r == 1 && c == 3) || (r == 3 && c == 1)) want = Real(2.5);
      if (r == 2 && c == 2) want = Real(-1);
      if ((r == 3 && c == 0) || (r == 0 && c == 3)) want = Real(4);
      ASSERT_EQ(full(r, c), want) << "(" << r << ", " << c << ")";
    }
  EXPECT_EQ(static_cast<Real>(cu(3, 1)), Real(2.5));
  test::ExpectErrorContaining([&] { cu(4, 0) = 1; }, "CuSpMatrix: index (4, 0)");
}

TYPED_TEST(CuParityTest, CuTpMatrixWritesThroughCuValueAndRejectsTheUpperTriangle) {
  using Real = TypeParam;
  CuTpMatrix<Real> cu(3);
  cu(2, 1) = Real(7);
  cu(0, 0) = Real(1.5);
  const Matrix<Real> full{CuMatrix<Real>(cu, kNoTrans)};
  for (MatrixIndexT r = 0; r < 3; ++r)
    for (MatrixIndexT c = 0; c < 3; ++c)
      ASSERT_EQ(full(r, c), r == 2 && c == 1 ? Real(7) : r == 0 && c == 0 ? Real(1.5) : Real(0));
  const CuTpMatrix<Real>& read_only = cu;
  EXPECT_EQ(read_only(1, 2), Real(0));  // the const read gives the zero above the diagonal
  test::ExpectErrorContaining([&] { cu(1, 2) = 1; }, "not in the lower triangle");
}

TYPED_TEST(CuParityTest, CuMatrixElementWritesAreVisibleInAMatrixCopy) {
  using Real = TypeParam;
  CuMatrix<Real> cu(3, 4);
  cu(1, 2) = Real(9);
  cu(2, 3) -= Real(1);
  const Matrix<Real> m(cu);
  EXPECT_EQ(m(1, 2), Real(9));
  EXPECT_EQ(m(2, 3), Real(-1));
  EXPECT_EQ(m.Sum(), Real(8));
}

TYPED_TEST(CuParityTest, RowCopiesBetweenHostAndGpuObjectsMatchTheHostForms) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> m = test::RandomMatrix<Real>(5, 7, &rng);
  const CuMatrix<Real> cu_m(m);
  Vector<Real> rows(35), expected_rows(35);
  rows.CopyRowsFromMat(cu_m);  // Vector from the rows of a CuMatrix
  expected_rows.CopyRowsFromMat(m);
  EXPECT_TRUE(test::ExpectNear(rows, expected_rows, 0.0));
  Matrix<Real> back(5, 7), one_row(5, 7), expected_one_row(5, 7);
  back.CopyRowsFromVec(CuVector<Real>(rows));  // Matrix from a CuVector of all the rows
  EXPECT_TRUE(test::ExpectNear(back, m, 0.0));
  const SubVector<Real> first(rows, 0, 7);
  one_row.CopyRowsFromVec(CuVector<Real>(first));  // every row gets the same 7 elements
  expected_one_row.CopyRowsFromVec(first);
  EXPECT_TRUE(test::ExpectNear(one_row, expected_one_row, 0.0));
  Vector<Real> wrong(34);
  EXPECT_THROW(wrong.CopyRowsFromMat(cu_m), Error);
}

TYPED_TEST(CuParityTest, OlderSoftMaxSpellingsMatchSoftMaxPerRow) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const CuMatrix<Real> src(test::RandomMatrix<Real>(4, 9, &rng));
  CuMatrix<Real> a(4, 9), b(4, 9), c(4, 9), d(4, 9);
  a.ApplySoftMaxPerRow(src);
  b.SoftMaxPerRow(src);
  c.ApplyLogSoftMaxPerRow(src);
  d.LogSoftMaxPerRow(src);
  EXPECT_TRUE(test::ExpectNear(Matrix<Real>(a), Matrix<Real>(b), 0.0));
  EXPECT_TRUE(test::ExpectNear(Matrix<Real>(c), Matrix<Real>(d), 0.0));
}

TYPED_TEST(CuParityTest, CuArrayCopyFromVecResizesAndFeedsRandomizeAndCopy) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(1);
  const Matrix<Real> host = test::RandomMatrix<Real>(6, 5, &rng);
  const CuMatrix<Real> src(host);

  const std::vector<int32> rows = {5, 0, 3, 3, 1, 2};
  CuArray<int32> row_idx;  // empty: CopyFromVec must resize it
  row_idx.CopyFromVec(rows);
  ASSERT_EQ(row_idx.Dim(), 6);
  CuMatrix<Real> randomized(6, 5);
  cu::Randomize(src, row_idx, &randomized);
  const Matrix<Real> got_rows(randomized);
  for (MatrixIndexT r = 0; r < 6; ++r)
    for (MatrixIndexT c = 0; c < 5; ++c) ASSERT_EQ(got_rows(r, c), host(rows[r], c));

  const std::vector<int32> cols = {4, 4, 0};
  CuArray<int32> col_idx(10);  // the wrong size: CopyFromVec must shrink it
  col_idx.CopyFromVec(cols);
  ASSERT_EQ(col_idx.Dim(), 3);
  CuMatrix<Real> gathered(6, 3);
  cu::Copy(src, col_idx, &gathered);
  const Matrix<Real> got_cols(gathered);
  for (MatrixIndexT r = 0; r < 6; ++r)
    for (MatrixIndexT c = 0; c < 3; ++c) ASSERT_EQ(got_cols(r, c), host(r, cols[c]));

  CuArray<int32> copy(2);
  copy.CopyFromArray(row_idx);  // resizes too
  std::vector<int32> back;
  copy.CopyToVec(&back);
  EXPECT_EQ(back, rows);

  // The base-class form keeps its equal-size contract.
  CuSubArray<int32> view(row_idx, 0, 2);
  test::ExpectErrorContaining([&] { view.CopyFromVec(cols); }, "CuArray::CopyFromVec");
}

TEST(CuParityArrayTest, Int32PairArraysRoundTrip) {
  const std::vector<Int32Pair> pairs = {{1, 2}, {-1, -1}, {7, 3}};
  CuArray<Int32Pair> a;
  a.CopyFromVec(pairs);
  std::vector<Int32Pair> back;
  a.CopyToVec(&back);
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back[i].first, pairs[i].first);
    EXPECT_EQ(back[i].second, pairs[i].second);
  }
}

TYPED_TEST(CuParityTest, AssertEqualAcceptsCuValueOnEitherSide) {
  using Real = TypeParam;
  CuMatrix<Real> cu(2, 2);
  cu(0, 1) = Real(3);
  CuMatrix<Other<Real>> other(2, 2);
  other(0, 1) = Other<Real>(3);
  AssertEqual(cu(0, 1), 3.0);
  AssertEqual(3, cu(0, 1));
  AssertEqual(cu(0, 1), other(0, 1));
  EXPECT_TRUE(ApproxEqual(cu(0, 1), Real(3.002), 0.001));
  EXPECT_FALSE(ApproxEqual(cu(0, 1), 3.1));
  test::ExpectErrorContaining([&] { AssertEqual(cu(0, 1), 4.0); }, "3");
}

TYPED_TEST(CuParityTest, AssertEqualOnCuVectorsAndCuSpMatrices) {
  using Real = TypeParam;
  test::QuietLog quiet;  // the expected failures below would log
  test::Rng rng = test::MakeRng(2);
  const Vector<Real> hv = test::RandomVector<Real>(8, &rng, 1.0, 2.0);
  const CuVector<Real> a(hv);
  CuVector<Real> b(a);
  AssertEqual(a, b);
  b.Add(1);
  EXPECT_THROW(AssertEqual(a, b), Error);
  EXPECT_THROW(AssertEqual(a, CuVector<Real>(7)), Error);

  const SpMatrix<Real> hs(test::RandomMatrix<Real>(5, 5, &rng), kTakeLower);
  const CuSpMatrix<Real> s(hs);
  CuSpMatrix<Real> t(s);
  AssertEqual(s, t);
  EXPECT_TRUE(ApproxEqual(s, t));
  t(4, 1) += Real(10);
  EXPECT_FALSE(s.ApproxEqual(t));
  EXPECT_THROW(AssertEqual(s, t), Error);
  EXPECT_THROW(AssertEqual(s, CuSpMatrix<Real>(4)), Error);
  // Frobenius norm of the full symmetric matrix, against a host loop.
  double sum = 0;
  for (MatrixIndexT r = 0; r < 5; ++r)
    for (MatrixIndexT c = 0; c < 5; ++c) sum += double(hs(r, c)) * hs(r, c);
  EXPECT_NEAR(s.FrobeniusNorm(), std::sqrt(sum), test::Tol<Real>() * std::sqrt(sum));
}

TYPED_TEST(CuParityTest, TraceSpSpAcrossPrecisionsMatchesTheFullProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(3);
  const SpMatrix<Real> ha(test::RandomMatrix<Real>(6, 6, &rng), kTakeLower);
  const SpMatrix<Other<Real>> hb(test::RandomMatrix<Other<Real>>(6, 6, &rng), kTakeLower);
  double want = 0;  // sum over all (r, c) of A(r, c) B(r, c)
  for (MatrixIndexT r = 0; r < 6; ++r)
    for (MatrixIndexT c = 0; c < 6; ++c) want += double(ha(r, c)) * double(hb(r, c));
  const Real got = TraceSpSp(CuSpMatrix<Real>(ha), CuSpMatrix<Other<Real>>(hb));
  EXPECT_NEAR(got, want, 36 * test::Tol<float>());  // B is rounded to float on one side
  test::QuietLog quiet;
  EXPECT_THROW(TraceSpSp(CuSpMatrix<Real>(3), CuSpMatrix<Other<Real>>(4)), Error);
}

// Records registered option names only (does not touch the process-wide options' values).
class NameRecorder : public OptionsItf {
 public:
  void Register(const std::string& name, bool*, const std::string&) override { Add(name); }
  void Register(const std::string& name, int32*, const std::string&) override { Add(name); }
  void Register(const std::string& name, uint32*, const std::string&) override { Add(name); }
  void Register(const std::string& name, float*, const std::string&) override { Add(name); }
  void Register(const std::string& name, double*, const std::string&) override { Add(name); }
  void Register(const std::string& name, std::string*, const std::string&) override { Add(name); }
  std::set<std::string> names;

 private:
  void Add(const std::string& name) { names.insert(name); }
};

TEST(CuParityOptionsTest, FreeRegisterCuAllocatorOptionsRegistersTheCudaOptions) {
  NameRecorder rec;
  RegisterCuAllocatorOptions(&rec);
  EXPECT_EQ(rec.names.count("cuda-memory-proportion"), 1u);
  EXPECT_EQ(rec.names.count("cuda-cache-memory"), 1u);
}

// A typical Kaldi-style snippet, ported by renaming only, compiles and runs.
TEST(CuParityKaldiSnippetTest, TypicalConversionsCompile) {
  CuMatrix<BaseFloat> cu_m(10, 20);
  cu_m.SetRandn();
  Matrix<BaseFloat> m(cu_m);
  Vector<BaseFloat> v(CuVector<BaseFloat>(5));
  CuSubVector<BaseFloat> row(cu_m, 3);
  Vector<double> row_d(row);
  Matrix<double> m_d(cu_m, kTrans);
  m.CopyFromMat(cu_m);
  v.CopyFromVec(CuVector<BaseFloat>(5));
  CuSpMatrix<BaseFloat> cu_sp(4);
  cu_sp.SetUnit();
  SpMatrix<BaseFloat> sp(cu_sp);
  CuMatrix<BaseFloat> full(cu_sp);
  CuTpMatrix<double> cu_tp(4);
  TpMatrix<double> tp(cu_tp);
  CuMatrix<BaseFloat> lower(cu_tp, kTrans);
  AssertEqual(cu_m(3, 7), m(3, 7));
  EXPECT_EQ(row_d.Dim(), 20);
  EXPECT_EQ(m_d.NumRows(), 20);
  EXPECT_EQ(v.Dim(), 5);
  EXPECT_EQ(sp(2, 2), 1.0f);
  EXPECT_EQ(full.NumRows(), 4);
  EXPECT_EQ(tp.NumRows(), 4);
  EXPECT_EQ(lower.NumCols(), 4);
}

}  // namespace
}  // namespace cuctx
