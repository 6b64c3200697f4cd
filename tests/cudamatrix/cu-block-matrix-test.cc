// tests/cudamatrix/cu-block-matrix-test.cc: CuBlockMatrix and CuMatrixBase::AddMatBlock /
// CopyFromBlock compared with dense CPU Matrix products.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-block-matrix.h"

#include "base/error.h"
#include "base/io-funcs.h"
#include "cudamatrix/cu-matrix.h"
#include "matrix/matrix.h"
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

// Block layouts: odd shapes, one block, uniform shapes (the batched-GEMM path), tall and wide.
const std::vector<std::vector<test::Shape>> kLayouts = {
    {{3, 5}, {1, 1}, {7, 2}},
    {{4, 4}},
    {{4, 3}, {4, 3}, {4, 3}},
    {{17, 1}, {1, 33}, {2, 2}, {5, 9}},
};

const MatrixTransposeType kTransposes[] = {kNoTrans, kTrans};

// GEMM results sum k products of values in [-1, 1); see cu-matrix-blas-test.cc.
template <typename Real>
double GemmTol(int k) {
  return test::Tol<Real>() * std::max(k, 1);
}

// Binary I/O is exact; the text form prints 6 significant digits (as Kaldi's), so a text
// round trip is only good to about 1e-6 relative.
double IoTol(bool binary) { return binary ? 0.0 : 1e-5; }

template <typename Real>
std::vector<Matrix<Real>> RandomBlocks(const std::vector<test::Shape>& layout, test::Rng* rng) {
  std::vector<Matrix<Real>> blocks;
  for (const test::Shape& s : layout)
    blocks.push_back(test::RandomMatrix<Real>(s.rows, s.cols, rng));
  return blocks;
}

template <typename Real>
std::vector<CuMatrix<Real>> ToCu(const std::vector<Matrix<Real>>& blocks) {
  std::vector<CuMatrix<Real>> cu;
  for (const Matrix<Real>& b : blocks) cu.emplace_back(b);
  return cu;
}

// The dense diag(blocks...) built with a naive placement loop.
template <typename Real>
Matrix<Real> Dense(const std::vector<Matrix<Real>>& blocks) {
  MatrixIndexT rows = 0, cols = 0;
  for (const Matrix<Real>& b : blocks) {
    rows += b.NumRows();
    cols += b.NumCols();
  }
  Matrix<Real> m(rows, cols);
  MatrixIndexT ro = 0, co = 0;
  for (const Matrix<Real>& b : blocks) {
    for (MatrixIndexT r = 0; r < b.NumRows(); ++r)
      for (MatrixIndexT c = 0; c < b.NumCols(); ++c) m(ro + r, co + c) = b(r, c);
    ro += b.NumRows();
    co += b.NumCols();
  }
  return m;
}

// The block-diagonal part of m for a layout (zeros elsewhere).
template <typename Real>
Matrix<Real> BlockPart(const Matrix<Real>& m, const std::vector<test::Shape>& layout) {
  Matrix<Real> out(m.NumRows(), m.NumCols());
  MatrixIndexT ro = 0, co = 0;
  for (const test::Shape& s : layout) {
    out.Range(ro, s.rows, co, s.cols).CopyFromMat(m.Range(ro, s.rows, co, s.cols));
    ro += s.rows;
    co += s.cols;
  }
  return out;
}

template <typename Real>
class CuBlockMatrixTest : public ::testing::Test {
 protected:
  test::QuietLog quiet_;
};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuBlockMatrixTest, RealTypes);

TYPED_TEST(CuBlockMatrixTest, ConstructorPlacesBlocksOnTheDiagonal) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const auto& layout : kLayouts) {
    const std::vector<Matrix<Real>> blocks = RandomBlocks<Real>(layout, &rng);
    const CuBlockMatrix<Real> B(ToCu(blocks));
    const Matrix<Real> dense = Dense(blocks);
    ASSERT_EQ(B.NumBlocks(), static_cast<MatrixIndexT>(layout.size()));
    EXPECT_EQ(B.NumRows(), dense.NumRows());
    EXPECT_EQ(B.NumCols(), dense.NumCols());
    MatrixIndexT max_rows = 0, max_cols = 0;
    for (size_t b = 0; b < layout.size(); ++b) {
      EXPECT_TRUE(test::SameElements(ToHost(B.Block(b)), blocks[b])) << b;
      max_rows = std::max<MatrixIndexT>(max_rows, layout[b].rows);
      max_cols = std::max<MatrixIndexT>(max_cols, layout[b].cols);
    }
    EXPECT_EQ(B.MaxBlockRows(), max_rows);
    EXPECT_EQ(B.MaxBlockCols(), max_cols);
    EXPECT_TRUE(test::SameElements(ToHost(CuMatrix<Real>(B)), dense));
    EXPECT_TRUE(test::SameElements(ToHost(CuMatrix<Real>(B, kTrans)), Matrix<Real>(dense, kTrans)));
  }
}

TYPED_TEST(CuBlockMatrixTest, EmptyBlockMatrixIsZeroByZero) {
  using Real = TypeParam;
  const CuBlockMatrix<Real> empty;
  EXPECT_EQ(empty.NumRows(), 0);
  EXPECT_EQ(empty.NumCols(), 0);
  EXPECT_EQ(empty.NumBlocks(), 0);
  const CuBlockMatrix<Real> from_none{std::vector<CuMatrix<Real>>()};
  EXPECT_EQ(from_none.NumBlocks(), 0);
  const CuMatrix<Real> full(from_none);
  EXPECT_EQ(full.NumRows(), 0);
  EXPECT_EQ(full.NumCols(), 0);
  // Products with no blocks: only 0-column outputs fit; they are no-ops.
  CuMatrix<Real> out(3, 0), A(3, 0);
  out.AddMatBlock(1, A, kNoTrans, from_none, kNoTrans, 0);
  CuBlockMatrix<Real> none = from_none;
  CuMatrix<Real> a0(0, 4), b0(4, 0);
  none.AddMatMat(1, a0, kNoTrans, b0, kNoTrans, 0);
  none.CopyFromMat(CuMatrix<Real>());
}

TYPED_TEST(CuBlockMatrixTest, AddMatBlockMatchesDenseProduct) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const auto& layout : kLayouts) {
    const std::vector<Matrix<Real>> blocks = RandomBlocks<Real>(layout, &rng);
    const CuBlockMatrix<Real> B(ToCu(blocks));
    const Matrix<Real> dense = Dense(blocks);
    for (MatrixTransposeType transA : kTransposes)
      for (MatrixTransposeType transB : kTransposes)
        for (Real beta : {Real(0), Real(0.5)})
          for (bool strided : {false, true}) {
            const MatrixIndexT m = 6;
            const MatrixIndexT k = transB == kNoTrans ? B.NumRows() : B.NumCols();
            const MatrixIndexT n = transB == kNoTrans ? B.NumCols() : B.NumRows();
            const Matrix<Real> A = transA == kNoTrans ? test::RandomMatrix<Real>(m, k, &rng)
                                                      : test::RandomMatrix<Real>(k, m, &rng);
            test::GuardedCuMatrix<Real> C(m, n, strided, &rng);
            Matrix<Real> expected = C.Host();
            expected.AddMatMat(Real(0.75), A, transA, dense, transB, beta);
            C.view.AddMatBlock(Real(0.75), CuMatrix<Real>(A), transA, B, transB, beta);
            EXPECT_TRUE(test::ExpectNear(ToHost(C.view), expected, GemmTol<Real>(k)))
                << transA << transB << " beta " << beta;
            EXPECT_TRUE(C.BorderUnchanged());
          }
  }
}

TYPED_TEST(CuBlockMatrixTest, AddMatMatUpdatesOnlyTheBlocks) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const auto& layout : kLayouts) {
    const std::vector<Matrix<Real>> blocks = RandomBlocks<Real>(layout, &rng);
    const Matrix<Real> dense = Dense(blocks);
    for (MatrixTransposeType transA : kTransposes)
      for (MatrixTransposeType transB : kTransposes)
        for (Real beta : {Real(0), Real(-1.5)}) {
          CuBlockMatrix<Real> B(ToCu(blocks));
          const MatrixIndexT k = 5;
          const Matrix<Real> A = transA == kNoTrans
                                     ? test::RandomMatrix<Real>(B.NumRows(), k, &rng)
                                     : test::RandomMatrix<Real>(k, B.NumRows(), &rng);
          const Matrix<Real> D = transB == kNoTrans
                                     ? test::RandomMatrix<Real>(k, B.NumCols(), &rng)
                                     : test::RandomMatrix<Real>(B.NumCols(), k, &rng);
          Matrix<Real> full = dense;
          full.AddMatMat(Real(2), A, transA, D, transB, beta);
          B.AddMatMat(2, CuMatrix<Real>(A), transA, CuMatrix<Real>(D), transB, beta);
          EXPECT_TRUE(test::ExpectNear(ToHost(CuMatrix<Real>(B)), BlockPart(full, layout),
                                       GemmTol<Real>(k)))
              << transA << transB << " beta " << beta;
        }
  }
}

TYPED_TEST(CuBlockMatrixTest, CopyFromMatTakesTheBlockParts) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const auto& layout : kLayouts) {
    CuBlockMatrix<Real> B(ToCu(RandomBlocks<Real>(layout, &rng)));
    const Matrix<Real> M = test::RandomMatrix<Real>(B.NumRows(), B.NumCols(), &rng);
    B.CopyFromMat(CuMatrix<Real>(M));
    EXPECT_TRUE(test::SameElements(ToHost(CuMatrix<Real>(B)), BlockPart(M, layout)));
  }
}

TYPED_TEST(CuBlockMatrixTest, CopyFromBlockZeroesOffTheBlocks) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const std::vector<Matrix<Real>> blocks = RandomBlocks<Real>(kLayouts[0], &rng);
  const CuBlockMatrix<Real> B(ToCu(blocks));
  for (MatrixTransposeType trans : kTransposes)
    for (bool strided : {false, true}) {
      const Matrix<Real> expected(Dense(blocks), trans);
      test::GuardedCuMatrix<Real> out(expected.NumRows(), expected.NumCols(), strided, &rng);
      out.view.CopyFromBlock(B, trans);
      EXPECT_TRUE(test::SameElements(ToHost(out.view), expected));
      EXPECT_TRUE(out.BorderUnchanged());
    }
}

TYPED_TEST(CuBlockMatrixTest, WriteReadRoundTripsInBothForms) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const auto& layout : kLayouts)
    for (bool binary : {true, false}) {
      const CuBlockMatrix<Real> B(ToCu(RandomBlocks<Real>(layout, &rng)));
      std::ostringstream os;
      B.Write(os, binary);
      if (!binary) {
        EXPECT_EQ(os.str().rfind("<CuBlockMatrix> ", 0), 0u) << os.str().substr(0, 40);
        EXPECT_NE(os.str().find("</CuBlockMatrix>"), std::string::npos);
      }
      CuBlockMatrix<Real> read;
      std::istringstream is(os.str());
      read.Read(is, binary);
      ASSERT_EQ(read.NumBlocks(), B.NumBlocks());
      for (MatrixIndexT b = 0; b < B.NumBlocks(); ++b)
        EXPECT_TRUE(test::ExpectNear(ToHost(read.Block(b)), ToHost(B.Block(b)), IoTol(binary)));
    }
}

TYPED_TEST(CuBlockMatrixTest, ReadAcceptsTheOlderFormWithoutTokens) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const std::vector<Matrix<Real>> blocks = RandomBlocks<Real>(kLayouts[0], &rng);
  for (bool binary : {true, false}) {
    std::ostringstream os;
    WriteBasicType(os, binary, static_cast<int32>(blocks.size()));
    for (const Matrix<Real>& b : blocks) b.Write(os, binary);
    CuBlockMatrix<Real> read;
    std::istringstream is(os.str());
    read.Read(is, binary);
    EXPECT_TRUE(test::ExpectNear(ToHost(CuMatrix<Real>(read)), Dense(blocks), IoTol(binary)));
  }
}

TYPED_TEST(CuBlockMatrixTest, CopiesAreIndependentAndSwapExchanges) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const std::vector<Matrix<Real>> a = RandomBlocks<Real>(kLayouts[0], &rng);
  const std::vector<Matrix<Real>> b = RandomBlocks<Real>(kLayouts[1], &rng);
  CuBlockMatrix<Real> A(ToCu(a)), B(ToCu(b));
  CuBlockMatrix<Real> copy(A);
  copy.Block(0).SetZero();
  EXPECT_TRUE(test::SameElements(ToHost(A.Block(0)), a[0]));
  CuBlockMatrix<Real> assigned;
  assigned = A;
  EXPECT_TRUE(test::SameElements(ToHost(CuMatrix<Real>(assigned)), Dense(a)));
  A.Swap(&B);
  EXPECT_TRUE(test::SameElements(ToHost(CuMatrix<Real>(A)), Dense(b)));
  EXPECT_TRUE(test::SameElements(ToHost(CuMatrix<Real>(B)), Dense(a)));
  std::ostringstream os;
  os << B;
  EXPECT_EQ(os.str().rfind("<CuBlockMatrix>", 0), 0u);
}

TYPED_TEST(CuBlockMatrixTest, ThrowsOnMisuse) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  std::vector<CuMatrix<Real>> with_empty = ToCu(RandomBlocks<Real>({{2, 2}}, &rng));
  with_empty.emplace_back(0, 0);
  test::ExpectErrorContaining([&] { CuBlockMatrix<Real> bad(with_empty); }, "block 1 is 0x0");
  CuBlockMatrix<Real> B(ToCu(RandomBlocks<Real>(kLayouts[0], &rng)));  // 11x8
  EXPECT_THROW(B.Block(-1), Error);
  test::ExpectErrorContaining([&] { B.Block(3); }, "block 3 out of range [0, 3)");
  CuMatrix<Real> m11x8(11, 8), m8x11(8, 11), m4x11(4, 11), m4x8(4, 8), m11x4(11, 4);
  test::ExpectErrorContaining([&] { m4x11.AddMatBlock(1, m4x11, kNoTrans, B, kNoTrans, 0); },
                              "AddMatBlock: shape mismatch");
  m4x8.AddMatBlock(1, m4x11, kNoTrans, B, kNoTrans, 0);
  m4x11.AddMatBlock(1, m4x8, kNoTrans, B, kTrans, 0);
  test::ExpectErrorContaining([&] { B.AddMatMat(1, m11x4, kNoTrans, m11x4, kNoTrans, 0); },
                              "AddMatMat: shape mismatch");
  test::ExpectErrorContaining([&] { B.CopyFromMat(m8x11); }, "source 8x11");
  test::ExpectErrorContaining([&] { m11x8.CopyFromBlock(B, kTrans); }, "does not match 11x8");
  // The block storage may not be an input of a product that writes it, nor its output.
  CuBlockMatrix<Real> one(ToCu(RandomBlocks<Real>({{3, 3}}, &rng)));
  CuMatrix<Real> m3(3, 3);
  test::ExpectErrorContaining([&] { one.AddMatMat(1, one.Block(0), kNoTrans, m3, kNoTrans, 0); },
                              "overlaps the block storage");
  CuSubMatrix<Real> block0 = one.Block(0);
  test::ExpectErrorContaining([&] { block0.AddMatBlock(1, m3, kNoTrans, one, kNoTrans, 0); },
                              "overlaps input B");
  test::ExpectErrorContaining([&] { block0.CopyFromBlock(one); }, "overlaps the block storage");
  for (bool binary : {true, false}) {
    std::ostringstream os;
    WriteToken(os, binary, "<CuBlockMatrix>");
    WriteBasicType(os, binary, int32(-2));
    std::istringstream is(os.str());
    test::ExpectErrorContaining([&] { B.Read(is, binary); }, "negative block count -2");
    EXPECT_EQ(B.NumBlocks(), 3);  // unchanged after a failed Read
    std::istringstream bad_token("<Wrong> 1");
    EXPECT_THROW(B.Read(bad_token, binary), Error);
  }
}

}  // namespace
}  // namespace cuctx
