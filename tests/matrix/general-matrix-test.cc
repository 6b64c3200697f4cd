// tests/matrix/general-matrix-test.cc: GeneralMatrix types and conversions, byte-identical I/O in
// the underlying objects' formats, CopyToMat/AddToMat/Scale against dense references, misuse.
// SPDX-License-Identifier: Apache-2.0
//
// Includes only matrix/sparse-matrix.h on purpose: GeneralMatrix must be reachable from there, as
// in Kaldi.
#include "base/error.h"
#include "matrix/compressed-matrix.h"
#include "matrix/matrix.h"
#include "matrix/sparse-matrix.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

namespace cuctx {
namespace {

// A random 7 x 9 dense matrix with about half the entries zero, and its sparse twin.
struct Fixture {
  Matrix<BaseFloat> dense;
  SparseMatrix<BaseFloat> sparse;
  CompressedMatrix compressed;
  Matrix<BaseFloat> decoded;  // what `compressed` decodes to
};

Fixture MakeFixture() {
  test::Rng rng = test::MakeRng();
  Fixture f;
  f.dense = test::RandomMatrix<BaseFloat>(7, 9, &rng);
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 9; ++c)
      if (rng.Uniform() < 0.5) f.dense(r, c) = 0;
  f.sparse = SparseMatrix<BaseFloat>(f.dense);
  f.compressed.CopyFromMat(f.dense);
  f.decoded = Matrix<BaseFloat>(f.compressed);
  return f;
}

// The three kinds of GeneralMatrix from one fixture, with the dense matrix each represents.
std::vector<std::pair<GeneralMatrix, Matrix<BaseFloat>>> AllKinds(const Fixture& f) {
  return {{GeneralMatrix(f.dense), f.dense},
          {GeneralMatrix(f.compressed), f.decoded},
          {GeneralMatrix(f.sparse), f.dense}};
}

std::string Written(const GeneralMatrix& g, bool binary) {
  std::ostringstream os;
  g.Write(os, binary);
  return os.str();
}
template <typename T>
std::string WrittenObject(const T& t, bool binary) {
  std::ostringstream os;
  t.Write(os, binary);
  return os.str();
}

TEST(GeneralMatrixTest, TypeFollowsTheStoredObject) {
  const Fixture f = MakeFixture();
  GeneralMatrix g;
  EXPECT_EQ(g.Type(), kFullMatrix);
  EXPECT_EQ(g.NumRows(), 0);
  g = f.sparse;
  EXPECT_EQ(g.Type(), kSparseMatrix);
  EXPECT_EQ(g.NumRows(), 7);
  EXPECT_EQ(g.NumCols(), 9);
  g = f.compressed;
  EXPECT_EQ(g.Type(), kCompressedMatrix);
  g = f.dense;
  EXPECT_EQ(g.Type(), kFullMatrix);
  g.Compress();
  EXPECT_EQ(g.Type(), kCompressedMatrix);
  EXPECT_TRUE(Matrix<BaseFloat>(g.GetCompressedMatrix()).Equal(f.decoded));
  g.Uncompress();
  EXPECT_EQ(g.Type(), kFullMatrix);
  EXPECT_TRUE(g.GetFullMatrix().Equal(f.decoded));
  GeneralMatrix s(f.sparse);
  s.Compress();  // only full matrices compress
  s.Uncompress();
  EXPECT_EQ(s.Type(), kSparseMatrix);
  s.Clear();
  EXPECT_EQ(s.Type(), kFullMatrix);
  EXPECT_EQ(s.NumRows(), 0);
}

TEST(GeneralMatrixTest, WritesExactlyTheUnderlyingObjectAndReadsItBack) {
  const Fixture f = MakeFixture();
  for (bool binary : {true, false}) {
    SCOPED_TRACE(binary ? "binary" : "text");
    EXPECT_EQ(Written(GeneralMatrix(f.dense), binary), WrittenObject(f.dense, binary));
    EXPECT_EQ(Written(GeneralMatrix(f.compressed), binary), WrittenObject(f.compressed, binary));
    EXPECT_EQ(Written(GeneralMatrix(f.sparse), binary), WrittenObject(f.sparse, binary));
    for (auto& kind : AllKinds(f)) {
      const std::string bytes = Written(kind.first, binary);
      std::istringstream is(bytes);
      GeneralMatrix back(f.sparse);  // Read must replace whatever was there
      back.Read(is, binary);
      // Text has no compressed form: a compressed matrix comes back full.
      const GeneralMatrixType want =
          (!binary && kind.first.Type() == kCompressedMatrix) ? kFullMatrix : kind.first.Type();
      EXPECT_EQ(back.Type(), want);
      Matrix<BaseFloat> got;
      back.GetMatrix(&got);
      if (binary) {
        EXPECT_EQ(Written(back, binary), bytes);  // byte-identical round trip
        EXPECT_TRUE(got.Equal(kind.second));
      } else {
        EXPECT_TRUE(test::ExpectNear(got, kind.second, test::Tol<float>()));
      }
    }
  }
}

TEST(GeneralMatrixTest, ReadsLeadingWhitespaceInTextAndEmptyMatrix) {
  const Fixture f = MakeFixture();
  std::istringstream is("  \n" + WrittenObject(f.sparse, false));
  GeneralMatrix g;
  g.Read(is, false);
  EXPECT_EQ(g.Type(), kSparseMatrix);
  GeneralMatrix empty;
  std::istringstream es(Written(empty, true));
  GeneralMatrix back(f.dense);
  back.Read(es, true);
  EXPECT_EQ(back.NumRows(), 0);
}

TEST(GeneralMatrixTest, CopyAddAndScaleMatchDenseReference) {
  const Fixture f = MakeFixture();
  for (auto& kind : AllKinds(f)) {
    SCOPED_TRACE(testing::Message() << "type " << kind.first.Type());
    const Matrix<BaseFloat>& ref = kind.second;
    for (MatrixTransposeType t : {kNoTrans, kTrans}) {
      Matrix<BaseFloat> out = t == kNoTrans ? Matrix<BaseFloat>(7, 9) : Matrix<BaseFloat>(9, 7);
      kind.first.CopyToMat(&out, t);
      EXPECT_TRUE(out.Equal(Matrix<BaseFloat>(ref, t)));
      Matrix<BaseFloat> sum(out), expected(out);
      kind.first.AddToMat(0.5, &sum, t);
      expected.AddMat(0.5, ref, t);
      EXPECT_TRUE(test::ExpectNear(sum, expected, test::Tol<float>()));
    }
    Matrix<BaseFloat> full;
    kind.first.GetMatrix(&full);
    EXPECT_TRUE(full.Equal(ref));
    GeneralMatrix scaled(kind.first);
    scaled.Scale(-2);
    EXPECT_EQ(scaled.Type(), kind.first.Type());
    Matrix<BaseFloat> got, expected(ref);
    scaled.GetMatrix(&got);
    expected.Scale(-2);
    EXPECT_TRUE(test::ExpectNear(got, expected, test::Tol<float>()));
  }
}

TEST(GeneralMatrixTest, SwapsExchangeTheStoredObject) {
  const Fixture f = MakeFixture();
  GeneralMatrix g;
  Matrix<BaseFloat> m(f.dense);
  g.SwapFullMatrix(&m);
  EXPECT_EQ(m.NumRows(), 0);
  EXPECT_TRUE(g.GetFullMatrix().Equal(f.dense));
  GeneralMatrix c;
  CompressedMatrix cm(f.compressed);
  c.SwapCompressedMatrix(&cm);
  EXPECT_EQ(c.Type(), kCompressedMatrix);
  EXPECT_EQ(cm.NumRows(), 0);
  GeneralMatrix s;
  SparseMatrix<BaseFloat> sm(f.sparse);
  s.SwapSparseMatrix(&sm);
  EXPECT_EQ(s.Type(), kSparseMatrix);
  s.Swap(&c);
  EXPECT_EQ(s.Type(), kCompressedMatrix);
  EXPECT_EQ(c.Type(), kSparseMatrix);
}

TEST(GeneralMatrixTest, WrongTypeAccessThrows) {
  test::QuietLog quiet;
  const Fixture f = MakeFixture();
  const GeneralMatrix full(f.dense), sparse(f.sparse), comp(f.compressed);
  EXPECT_THROW(full.GetSparseMatrix(), Error);
  EXPECT_THROW(full.GetCompressedMatrix(), Error);
  EXPECT_THROW(sparse.GetFullMatrix(), Error);
  EXPECT_THROW(comp.GetFullMatrix(), Error);
  GeneralMatrix g(f.sparse);
  Matrix<BaseFloat> m;
  CompressedMatrix cm;
  EXPECT_THROW(g.SwapFullMatrix(&m), Error);
  EXPECT_THROW(g.SwapCompressedMatrix(&cm), Error);
  Matrix<BaseFloat> wrong(3, 3);
  EXPECT_THROW(full.CopyToMat(&wrong), Error);
  EXPECT_THROW(sparse.AddToMat(1.0, &wrong), Error);
  EXPECT_THROW(comp.CopyToMat(&wrong), Error);
  // An empty GeneralMatrix allows every getter.
  const GeneralMatrix empty;
  EXPECT_NO_THROW(empty.GetSparseMatrix());
  EXPECT_NO_THROW(empty.GetCompressedMatrix());
  std::istringstream junk("CX garbage");
  GeneralMatrix r;
  EXPECT_THROW(r.Read(junk, true), Error);
}

// The expected padded rows, built row by row from a dense copy.
Matrix<BaseFloat> PaddedRows(const Matrix<BaseFloat>& src, int offset, int n) {
  Matrix<BaseFloat> want(n, src.NumCols());
  for (int r = 0; r < n; ++r) {
    const int i = std::min(std::max(offset + r, 0), src.NumRows() - 1);
    want.Row(r).CopyFromVec(src.Row(i));
  }
  return want;
}

TEST(GeneralMatrixTest, ExtractRowRangeWithPaddingKeepsTheTypeAndRepeatsEdgeRows) {
  Fixture f = MakeFixture();
  const struct { int offset, rows; } cases[] = {{2, 3}, {-2, 4}, {5, 6}, {-3, 13}, {0, 7}};
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << "offset " << c.offset << ", rows " << c.rows);
    GeneralMatrix out;
    ExtractRowRangeWithPadding(GeneralMatrix(f.dense), c.offset, c.rows, &out);
    EXPECT_EQ(out.Type(), kFullMatrix);
    EXPECT_TRUE(out.GetFullMatrix().Equal(PaddedRows(f.dense, c.offset, c.rows)));

    ExtractRowRangeWithPadding(GeneralMatrix(f.sparse), c.offset, c.rows, &out);
    EXPECT_EQ(out.Type(), kSparseMatrix);
    Matrix<BaseFloat> got;
    out.GetMatrix(&got);
    EXPECT_TRUE(got.Equal(PaddedRows(f.dense, c.offset, c.rows)));

    // Compressed rows are cut, not recompressed: the decoded values are exactly the source's.
    ExtractRowRangeWithPadding(GeneralMatrix(f.compressed), c.offset, c.rows, &out);
    EXPECT_EQ(out.Type(), kCompressedMatrix);
    out.GetMatrix(&got);
    EXPECT_TRUE(got.Equal(PaddedRows(f.decoded, c.offset, c.rows)));
  }
}

TEST(GeneralMatrixTest, ExtractRowRangeWithPaddingMisuse) {
  test::QuietLog quiet;
  Fixture f = MakeFixture();
  GeneralMatrix in(f.dense), out;
  ExtractRowRangeWithPadding(in, 3, 0, &out);
  EXPECT_EQ(out.NumRows(), 0);
  EXPECT_THROW(ExtractRowRangeWithPadding(in, 0, -1, &out), Error);
  EXPECT_THROW(ExtractRowRangeWithPadding(in, 0, 2, nullptr), Error);
  EXPECT_THROW(ExtractRowRangeWithPadding(in, 0, 2, &in), Error);
  EXPECT_THROW(ExtractRowRangeWithPadding(GeneralMatrix(), 0, 2, &out), Error);
}

}  // namespace
}  // namespace cuctx
