// tests/matrix/sparse-matrix-test.cc: sparse golden I/O, validation, dense-reference checks.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/sparse-matrix.h"

#include "base/error.h"
#include "base/io-funcs.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

using test::Bytes;
using test::Int32;

// 0.5 and 2.0 as basic types: size byte, then the little-endian value.
template <typename Real>
std::string Half() {
  return sizeof(Real) == 4 ? Bytes({4, 0x00, 0x00, 0x00, 0x3f})
                           : Bytes({8, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f});
}
template <typename Real>
std::string Two() {
  return sizeof(Real) == 4 ? Bytes({4, 0x00, 0x00, 0x00, 0x40})
                           : Bytes({8, 0, 0, 0, 0, 0, 0, 0x00, 0x40});
}
// The vector of dimension 5 with 0.5 at index 0 and 2 at index 3.
template <typename Real>
std::string GoldenSv() {
  return "SV " + Int32(5) + Int32(2) + Int32(0) + Half<Real>() + Int32(3) + Two<Real>();
}
// A 2 x 5 matrix: that vector, then an empty row.
template <typename Real>
std::string GoldenSm() {
  return "SM " + Int32(2) + GoldenSv<Real>() + "SV " + Int32(5) + Int32(0);
}
const char kGoldenSmText[] = "rows=2 dim=5 [ 0 0.5 3 2 ] dim=5 [ ] \n";

template <typename Real>
using Pairs = std::vector<std::pair<MatrixIndexT, Real>>;

template <typename Real>
SparseVector<Real> GoldenVector() {
  return SparseVector<Real>(5, Pairs<Real>{{3, 2}, {0, static_cast<Real>(0.5)}});
}

// A random sparse matrix (about a third nonzero) and its dense twin.
template <typename Real>
SparseMatrix<Real> RandomSparse(int rows, int cols, test::Rng* rng, Matrix<Real>* dense) {
  std::vector<Pairs<Real>> pairs(rows);
  dense->Resize(rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      if (rng->Uniform() < 0.35) {
        Real v = static_cast<Real>(rng->Gauss());
        pairs[r].emplace_back(c, v);
        (*dense)(r, c) = v;
      }
  return SparseMatrix<Real>(cols, pairs);
}

template <typename Real>
class SparseMatrixTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SparseMatrixTest, RealTypes);

TYPED_TEST(SparseMatrixTest, VectorBinaryGoldenBothWays) {
  using Real = TypeParam;
  std::ostringstream os;
  GoldenVector<Real>().Write(os, true);
  EXPECT_EQ(os.str(), GoldenSv<Real>());
  std::istringstream is(GoldenSv<Real>());
  SparseVector<Real> v;
  v.Read(is, true);
  ASSERT_EQ(v.Dim(), 5);
  ASSERT_EQ(v.NumElements(), 2);
  EXPECT_EQ(v.GetElement(0), std::make_pair(0, static_cast<Real>(0.5)));
  EXPECT_EQ(v.GetElement(1), std::make_pair(3, static_cast<Real>(2)));
  // The same token serves both precisions: the value's size byte tells which.
  using Other = typename std::conditional<sizeof(Real) == 4, double, float>::type;
  std::istringstream other(GoldenSv<Other>());
  SparseVector<Real> w;
  w.Read(other, true);
  EXPECT_EQ(w.GetElement(0).second, static_cast<Real>(0.5));
}

TYPED_TEST(SparseMatrixTest, VectorTextGoldenBothWays) {
  using Real = TypeParam;
  std::ostringstream os;
  GoldenVector<Real>().Write(os, false);
  EXPECT_EQ(os.str(), "dim=5 [ 0 0.5 3 2 ] ");
  std::istringstream is("dim=5 [ 0 0.5 3 2 ] ");
  SparseVector<Real> v;
  v.Read(is, false);
  ASSERT_EQ(v.NumElements(), 2);
  EXPECT_EQ(v.GetElement(1).first, 3);
  std::ostringstream empty;
  SparseVector<Real>(4).Write(empty, false);
  EXPECT_EQ(empty.str(), "dim=4 [ ] ");
}

TYPED_TEST(SparseMatrixTest, MatrixGoldenBothWays) {
  using Real = TypeParam;
  SparseMatrix<Real> m(2, 5);
  m.SetRow(0, GoldenVector<Real>());
  std::ostringstream bin, txt;
  m.Write(bin, true);
  m.Write(txt, false);
  EXPECT_EQ(bin.str(), GoldenSm<Real>());
  EXPECT_EQ(txt.str(), kGoldenSmText);
  for (bool binary : {true, false}) {
    std::istringstream is(binary ? GoldenSm<Real>() : std::string(kGoldenSmText));
    SparseMatrix<Real> back;
    back.Read(is, binary);
    ASSERT_EQ(back.NumRows(), 2);
    EXPECT_EQ(back.NumCols(), 5);
    EXPECT_EQ(back.NumElements(), 2);
    EXPECT_EQ(back.Row(0).GetElement(1).second, 2);
  }
  std::ostringstream empty;
  SparseMatrix<Real>().Write(empty, true);
  EXPECT_EQ(empty.str(), "SM " + Int32(0));
}

TYPED_TEST(SparseMatrixTest, VectorConstructionAndDenseOps) {
  using Real = TypeParam;
  // Unsorted pairs are sorted, duplicates summed and zeros dropped.
  SparseVector<Real> v(6, Pairs<Real>{{4, 1}, {1, 2}, {4, 2}, {2, 5}, {2, -5}});
  ASSERT_EQ(v.NumElements(), 2);
  EXPECT_EQ(v.GetElement(0), std::make_pair(1, static_cast<Real>(2)));
  EXPECT_EQ(v.GetElement(1), std::make_pair(4, static_cast<Real>(3)));
  test::ExpectErrorContaining(
      [] {
        SparseVector<Real>(3, Pairs<Real>{{0, 1}, {3, 1}});
      },
      "index 3 (pair 1)");
  test::ExpectErrorContaining([] { SparseVector<Real>(3, Pairs<Real>{{-1, 1}}); }, "index -1");
  test::ExpectErrorContaining([] { SparseVector<Real> x(-2); }, "negative dimension -2");
  EXPECT_EQ(v.Sum(), 5);
  int32 index = -1;
  EXPECT_EQ(v.Max(&index), 3);
  EXPECT_EQ(index, 4);
  SparseVector<Real> negative(3, Pairs<Real>{{0, -1}, {2, -2}});
  EXPECT_EQ(negative.Max(&index), 0);  // the implicit zero at index 1
  EXPECT_EQ(index, 1);
  Vector<double> dense(6);
  dense.Set(7);
  v.CopyElementsToVec(&dense);
  EXPECT_EQ(dense(0), 0);
  EXPECT_EQ(dense(4), 3);
  v.AddToVec(2, &dense);
  EXPECT_EQ(dense(1), 6);
  SubVector<double> head(dense, 0, 5);
  test::ExpectErrorContaining([&] { v.CopyElementsToVec(&head); }, "vector dim 5");
  Vector<Real> ones(6);
  ones.Set(1);
  EXPECT_EQ(VecSvec(ones, v), 5);
  SparseVector<Real> from_dense(Vector<Real>(6));
  EXPECT_EQ(from_dense.NumElements(), 0);
  SparseVector<Real> copy(v);
  copy.Resize(3, kCopyData);
  EXPECT_EQ(copy.NumElements(), 1);
  copy.Scale(-1);
  EXPECT_EQ(copy.GetElement(0).second, -2);
  test::ExpectErrorContaining([&] { copy.GetElement(1); }, "element 1 out of range");
  SparseVector<Real> r(100);
  r.SetRandn(0.5);
  EXPECT_GT(r.NumElements(), 10);
  EXPECT_LT(r.NumElements(), 90);
  test::ExpectErrorContaining([&] { r.SetRandn(1.5); }, "zero_prob 1.5");
}

TYPED_TEST(SparseMatrixTest, MatrixMatchesDenseReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const test::Shape& s : test::kEdgeShapes) {
    if (static_cast<int64_t>(s.rows) * s.cols > 20000) continue;
    SCOPED_TRACE(::testing::Message() << s);
    Matrix<Real> dense;
    SparseMatrix<Real> sp = RandomSparse<Real>(s.rows, s.cols, &rng, &dense);
    const int cols = s.rows > 0 ? s.cols : 0;  // as in Kaldi, no rows means no columns
    EXPECT_EQ(sp.NumRows(), s.rows);
    EXPECT_EQ(sp.NumCols(), cols);
    Matrix<Real> out(s.rows, cols);
    out.Set(3);
    sp.CopyToMat(&out);
    double sum = 0, sumsq = 0;
    int64_t nnz = 0;
    for (int r = 0; r < s.rows; ++r)
      for (int c = 0; c < cols; ++c) {
        ASSERT_EQ(out(r, c), dense(r, c));
        sum += dense(r, c);
        sumsq += static_cast<double>(dense(r, c)) * dense(r, c);
        nnz += dense(r, c) != 0;
      }
    EXPECT_EQ(sp.NumElements(), nnz);
    const double tol = test::Tol<Real>() * 10;
    EXPECT_NEAR(sp.Sum(), sum, tol * (1 + std::fabs(sum)));
    EXPECT_NEAR(sp.FrobeniusNorm(), std::sqrt(sumsq), tol * (1 + std::sqrt(sumsq)));
    Matrix<double> transposed(cols, s.rows);
    sp.CopyToMat(&transposed, kTrans);
    for (int r = 0; r < s.rows; ++r)
      for (int c = 0; c < cols; ++c) ASSERT_EQ(transposed(c, r), dense(r, c));
    // Dense -> sparse -> binary -> sparse is exact.
    SparseMatrix<Real> from_dense(dense);
    EXPECT_EQ(from_dense.NumElements(), nnz);
    std::stringstream ss;
    from_dense.Write(ss, true);
    SparseMatrix<Real> back;
    back.Read(ss, true);
    Matrix<Real> back_dense(s.rows, cols);
    back.CopyToMat(&back_dense);
    for (int r = 0; r < s.rows; ++r)
      for (int c = 0; c < cols; ++c) ASSERT_EQ(back_dense(r, c), dense(r, c));
  }
}

TYPED_TEST(SparseMatrixTest, MatrixOperations) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng(5);
  Matrix<Real> dense;
  SparseMatrix<Real> sp = RandomSparse<Real>(9, 6, &rng, &dense);
  // AddToMat.
  Matrix<Real> acc(dense);
  sp.AddToMat(2, &acc);
  for (int r = 0; r < 9; ++r)
    for (int c = 0; c < 6; ++c) ASSERT_EQ(acc(r, c), static_cast<Real>(3) * dense(r, c));
  Matrix<Real> acc_t(6, 9);
  sp.AddToMat(1, &acc_t, kTrans);
  EXPECT_EQ(acc_t(2, 4), dense(4, 2));
  test::ExpectErrorContaining([&] { sp.AddToMat(1, &acc_t); },
                              "destination is 6 x 9, expected 9 x 6");
  // Transpose by CopyFromSmat, precision change.
  SparseMatrix<double> t;
  t.CopyFromSmat(sp, kTrans);
  EXPECT_EQ(t.NumRows(), 6);
  EXPECT_EQ(t.NumCols(), 9);
  Matrix<double> td(6, 9);
  t.CopyToMat(&td);
  for (int r = 0; r < 9; ++r)
    for (int c = 0; c < 6; ++c) ASSERT_EQ(td(c, r), dense(r, c));
  // TraceMatSmat against the dense trace.
  Matrix<Real> a(6, 9), b(9, 6);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 9; ++c)
      a(r, c) = static_cast<Real>(rng.Gauss()), b(c, r) = static_cast<Real>(rng.Gauss());
  double tr = 0, tr_t = 0;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 9; ++j) tr += static_cast<double>(a(i, j)) * dense(j, i);
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 6; ++j) tr_t += static_cast<double>(b(i, j)) * dense(i, j);
  EXPECT_NEAR(TraceMatSmat(a, sp), tr, 1e-4 * (1 + std::fabs(tr)));
  EXPECT_NEAR(TraceMatSmat(b, sp, kTrans), tr_t, 1e-4 * (1 + std::fabs(tr_t)));
  test::ExpectErrorContaining([&] { TraceMatSmat(b, sp); }, "A is 9 x 6, B is 9 x 6");
  // Elements in row order.
  Vector<Real> elems(sp.NumElements());
  sp.CopyElementsToVec(&elems);
  EXPECT_NEAR(elems.Sum(), sp.Sum(), 1e-4 * (1 + std::fabs(sp.Sum())));
  // SelectRows, AppendSparseMatrixRows, Resize, SetRow.
  SparseMatrix<Real> sel;
  sel.SelectRows({8, 0, 8}, sp);
  EXPECT_EQ(sel.NumRows(), 3);
  EXPECT_EQ(sel.Row(2).NumElements(), sp.Row(8).NumElements());
  test::ExpectErrorContaining([&] { sel.SelectRows({9}, sp); },
                              "index 9 (entry 0) out of range [0, 9)");
  std::vector<SparseMatrix<Real>> parts = {sel, SparseMatrix<Real>(), sp};
  SparseMatrix<Real> all;
  all.AppendSparseMatrixRows(&parts);
  EXPECT_EQ(all.NumRows(), 12);
  std::vector<SparseMatrix<Real>> bad_parts = {sel, SparseMatrix<Real>(2, 4)};
  test::ExpectErrorContaining([&] { all.AppendSparseMatrixRows(&bad_parts); },
                              "input 1 has 4 columns");
  SparseMatrix<Real> resized(sp);
  resized.Resize(10, 3, kCopyData);
  Matrix<Real> rd(10, 3);
  resized.CopyToMat(&rd);
  for (int r = 0; r < 9; ++r)
    for (int c = 0; c < 3; ++c) ASSERT_EQ(rd(r, c), dense(r, c));
  test::ExpectErrorContaining([&] { resized.SetRow(0, SparseVector<Real>(4)); },
                              "vector dim 4, matrix has 3");
  test::ExpectErrorContaining([&] { resized.Row(10); }, "row 10 out of range");
  test::ExpectErrorContaining([&] { resized.Resize(-1, 2); }, "negative size -1 x 2");
  sp.Scale(0);
  EXPECT_EQ(sp.Sum(), 0);
}

TYPED_TEST(SparseMatrixTest, OneHotConstructors) {
  using Real = TypeParam;
  SparseMatrix<Real> m({2, -1, 0}, 3);
  Matrix<Real> d(3, 3);
  m.CopyToMat(&d);
  EXPECT_EQ(d(0, 2), 1);
  EXPECT_EQ(d.Sum(), 2);
  Vector<Real> w(3);
  w(0) = 5;
  w(2) = 7;
  SparseMatrix<Real> mt({2, -1, 0}, w, 4, kTrans);
  EXPECT_EQ(mt.NumRows(), 4);
  EXPECT_EQ(mt.NumCols(), 3);
  Matrix<Real> dt(4, 3);
  mt.CopyToMat(&dt);
  EXPECT_EQ(dt(2, 0), 5);
  EXPECT_EQ(dt(0, 2), 7);
  test::ExpectErrorContaining([] { SparseMatrix<Real> x(std::vector<int32>{3}, 3); },
                              "index 3 (entry 0)");
  test::ExpectErrorContaining(
      [&] {
        SparseMatrix<Real> x({0, 1}, w, 3);
      },
      "2 indexes but 3 weights");
}

TYPED_TEST(SparseMatrixTest, MalformedInputThrows) {
  using Real = TypeParam;
  auto read_vec = [](const std::string& bytes, bool binary) {
    return [bytes, binary] {
      std::istringstream is(bytes);
      SparseVector<Real> v;
      v.Read(is, binary);
    };
  };
  auto read_mat = [](const std::string& bytes, bool binary) {
    return [bytes, binary] {
      std::istringstream is(bytes);
      SparseMatrix<Real> m;
      m.Read(is, binary);
    };
  };
  const std::string h = Half<Real>();
  test::ExpectErrorContaining(read_vec("SV " + Int32(5) + Int32(1) + Int32(7) + h, true),
                              "index 7 at byte 13 out of range for dimension 5");
  test::ExpectErrorContaining(
      read_vec("SV " + Int32(5) + Int32(2) + Int32(3) + h + Int32(1) + h, true), "index 1 at byte");
  test::ExpectErrorContaining(
      read_vec("SV " + Int32(5) + Int32(2) + Int32(3) + h + Int32(3) + h, true),
      "not greater than the previous index 3");
  test::ExpectErrorContaining(read_vec("SV " + Int32(2) + Int32(3), true),
                              "claims 3 elements, expected 0..2");
  test::ExpectErrorContaining(read_vec("SV " + Int32(-5), true), "negative dimension -5");
  test::ExpectErrorContaining(read_vec("SV " + Int32(1 << 30) + Int32(1 << 29), true), "bytes");
  test::ExpectErrorContaining(read_vec("XV " + Int32(1), true), "\"SV\"");
  test::ExpectErrorContaining(read_vec("dim=5 [ 0 1 9 2 ] ", false), "index 9");
  test::ExpectErrorContaining(read_vec("dim=5 [ 3 1 2 2 ] ", false),
                              "not greater than the previous index 3");
  test::ExpectErrorContaining(read_vec("dim=x [ ] ", false), "expected 'dim=<count>'");
  test::ExpectErrorContaining(read_vec("dim=-1 [ ] ", false), "expected 'dim=<count>'");
  test::ExpectErrorContaining(read_vec("size=5 [ ] ", false), "found \"size=5\"");
  test::ExpectErrorContaining(read_vec("dim=5 ( ] ", false), "expected '['");
  test::ExpectErrorContaining(read_vec("dim=5 [ 0 1 ", false), "unterminated");
  test::ExpectErrorContaining(read_vec("dim=5 [ 0 abc ] ", false), "value of pair 0");
  test::ExpectErrorContaining(read_mat("SM " + Int32(-1), true), "negative number of rows -1");
  test::ExpectErrorContaining(read_mat("SM " + Int32(1000), true), "bytes");
  test::ExpectErrorContaining(
      read_mat("SM " + Int32(2) + "SV " + Int32(5) + Int32(0) + "SV " + Int32(4) + Int32(0), true),
      "row 1 has dimension 4, row 0 has 5");
  test::ExpectErrorContaining(read_mat("rows=2 dim=3 [ ] dim=3 [ 5 1 ] ", false), "reading row 1");
  test::ExpectErrorContaining(read_mat("cols=2", false), "expected 'rows=<count>'");
  const std::string golden = GoldenSm<Real>();
  for (size_t len = 0; len < golden.size(); ++len) {
    SCOPED_TRACE("prefix of " + std::to_string(len) + " bytes");
    test::QuietLog quiet;
    std::istringstream is(golden.substr(0, len));
    SparseMatrix<Real> m;
    EXPECT_THROW(m.Read(is, true), Error);
  }
  const std::string text = kGoldenSmText;
  const size_t last_close = text.rfind(']');
  for (size_t len = 0; len <= last_close; ++len) {
    SCOPED_TRACE("text prefix of " + std::to_string(len) + " bytes");
    test::QuietLog quiet;
    std::istringstream is(text.substr(0, len));
    SparseMatrix<Real> m;
    EXPECT_THROW(m.Read(is, false), Error);
  }
}

}  // namespace
}  // namespace cuctx
