// cudamatrix/cu-block-matrix.cc: CuBlockMatrix and the CuMatrixBase products with it
// (AddMatBlock, CopyFromBlock, the CuMatrix(const CuBlockMatrix&) constructor).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-block-matrix.h"

#include "base/error.h"
#include "base/io-funcs.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/internal/cu-operand.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

using internal::Overlap;
using internal::ShapeText;

using internal::OpCols;
using internal::OpRows;
using internal::TransName;

// The rows [offset, offset + n) of op(M), as a view of M to be used with the same trans.
template <typename Real>
CuSubMatrix<Real> OpRowRange(const CuMatrixBase<Real>& M, MatrixTransposeType t,
                             MatrixIndexT offset, MatrixIndexT n) {
  return t == kNoTrans ? M.RowRange(offset, n) : M.ColRange(offset, n);
}
// The columns [offset, offset + n) of op(M), likewise.
template <typename Real>
CuSubMatrix<Real> OpColRange(const CuMatrixBase<Real>& M, MatrixTransposeType t,
                             MatrixIndexT offset, MatrixIndexT n) {
  return t == kNoTrans ? M.ColRange(offset, n) : M.RowRange(offset, n);
}

// One product C[i] = beta C[i] + alpha op(A[i]) op(B[i]) per entry: a batched GEMM when asked
// (all entries share one shape and stride), else one AddMatMat each.
template <typename Real>
void RunBlockGemms(Real alpha, std::vector<CuSubMatrix<Real>>* C,
                   const std::vector<CuSubMatrix<Real>>& A, MatrixTransposeType transA,
                   const std::vector<CuSubMatrix<Real>>& B, MatrixTransposeType transB, Real beta,
                   bool batched) {
  if (batched) {
    std::vector<CuSubMatrix<Real>*> c, a, b;
    for (size_t i = 0; i < C->size(); ++i) {
      c.push_back(&(*C)[i]);
      a.push_back(const_cast<CuSubMatrix<Real>*>(&A[i]));
      b.push_back(const_cast<CuSubMatrix<Real>*>(&B[i]));
    }
    AddMatMatBatched(alpha, c, a, transA, b, transB, beta);
    return;
  }
  for (size_t i = 0; i < C->size(); ++i) (*C)[i].AddMatMat(alpha, A[i], transA, B[i], transB, beta);
}

}  // namespace

template <typename Real>
CuBlockMatrix<Real>::CuBlockMatrix(const std::vector<CuMatrix<Real>>& data) {
  MatrixIndexT row_offset = 0, col_offset = 0, max_rows = 0;
  blocks_.reserve(data.size());
  for (size_t b = 0; b < data.size(); ++b) {
    const MatrixIndexT rows = data[b].NumRows(), cols = data[b].NumCols();
    CUCTX_CHECK(rows > 0 && cols > 0)
        << "CuBlockMatrix: block " << b << " is " << ShapeText(rows, cols)
        << "; every block needs at least one row and one column";
    blocks_.push_back(BlockInfo{rows, cols, row_offset, col_offset});
    row_offset += rows;
    col_offset += cols;
    max_rows = std::max(max_rows, rows);
  }
  num_rows_ = row_offset;
  // kSetZero: the padding below shorter blocks is never read, but stays defined.
  data_.Resize(max_rows, col_offset, kSetZero);
  for (MatrixIndexT b = 0; b < NumBlocks(); ++b) Block(b).CopyFromMat(data[b]);
}

template <typename Real>
MatrixIndexT CuBlockMatrix<Real>::MaxBlockCols() const {
  MatrixIndexT m = 0;
  for (const BlockInfo& info : blocks_) m = std::max(m, info.num_cols);
  return m;
}

template <typename Real>
void CuBlockMatrix<Real>::CheckBlockIndex(MatrixIndexT b) const {
  CUCTX_CHECK(b >= 0 && b < NumBlocks())
      << "CuBlockMatrix::Block: block " << b << " out of range [0, " << NumBlocks() << ")";
}

template <typename Real>
const CuSubMatrix<Real> CuBlockMatrix<Real>::Block(MatrixIndexT b) const {
  CheckBlockIndex(b);
  const BlockInfo& info = blocks_[b];
  return data_.Range(0, info.num_rows, info.col_offset, info.num_cols);
}

template <typename Real>
CuSubMatrix<Real> CuBlockMatrix<Real>::Block(MatrixIndexT b) {
  CheckBlockIndex(b);
  const BlockInfo& info = blocks_[b];
  return data_.Range(0, info.num_rows, info.col_offset, info.num_cols);
}

template <typename Real>
bool CuBlockMatrix<Real>::UniformBlocks() const {
  if (blocks_.size() < 2) return false;
  for (const BlockInfo& info : blocks_)
    if (info.num_rows != blocks_[0].num_rows || info.num_cols != blocks_[0].num_cols) return false;
  return true;
}

template <typename Real>
void CuBlockMatrix<Real>::Write(std::ostream& os, bool binary) const {
  WriteToken(os, binary, "<CuBlockMatrix>");
  WriteBasicType(os, binary, static_cast<int32>(NumBlocks()));
  for (MatrixIndexT b = 0; b < NumBlocks(); ++b) Block(b).Write(os, binary);
  WriteToken(os, binary, "</CuBlockMatrix>");
}

template <typename Real>
void CuBlockMatrix<Real>::Read(std::istream& is, bool binary) {
  // Without the opening token this is the older form: the count and the blocks only.
  const bool tokens = Peek(is, binary) == '<';
  if (tokens) ExpectToken(is, binary, "<CuBlockMatrix>");
  int32 num_blocks = 0;
  ReadBasicType(is, binary, &num_blocks);
  CUCTX_CHECK(num_blocks >= 0) << "CuBlockMatrix::Read: negative block count " << num_blocks;
  std::vector<CuMatrix<Real>> data(num_blocks);
  for (int32 b = 0; b < num_blocks; ++b) data[b].Read(is, binary);
  if (tokens) ExpectToken(is, binary, "</CuBlockMatrix>");
  CuBlockMatrix<Real> read(data);
  Swap(&read);
}

template <typename Real>
void CuBlockMatrix<Real>::AddMatMat(BaseFloat alpha, const CuMatrixBase<Real>& A,
                                    MatrixTransposeType transA, const CuMatrixBase<Real>& B,
                                    MatrixTransposeType transB, BaseFloat beta) {
  CUCTX_CHECK(OpRows(A, transA) == NumRows() && OpCols(B, transB) == NumCols() &&
              OpCols(A, transA) == OpRows(B, transB))
      << "CuBlockMatrix::AddMatMat: shape mismatch: A " << ShapeText(A) << " (" << TransName(transA)
      << ") times B " << ShapeText(B) << " (" << TransName(transB) << ") into a block matrix of "
      << ShapeText(NumRows(), NumCols());
  CUCTX_CHECK(!Overlap(data_, A) && !Overlap(data_, B))
      << "CuBlockMatrix::AddMatMat: input " << (Overlap(data_, A) ? "A" : "B")
      << " overlaps the block storage";
  if (blocks_.empty()) return;
  std::vector<CuSubMatrix<Real>> c, a, b;
  for (MatrixIndexT k = 0; k < NumBlocks(); ++k) {
    const BlockInfo& info = blocks_[k];
    c.push_back(Block(k));
    a.push_back(OpRowRange(A, transA, info.row_offset, info.num_rows));
    b.push_back(OpColRange(B, transB, info.col_offset, info.num_cols));
  }
  RunBlockGemms(static_cast<Real>(alpha), &c, a, transA, b, transB, static_cast<Real>(beta),
                UniformBlocks());
}

template <typename Real>
void CuBlockMatrix<Real>::CopyFromMat(const CuMatrixBase<Real>& M) {
  CUCTX_CHECK(M.NumRows() == NumRows() && M.NumCols() == NumCols())
      << "CuBlockMatrix::CopyFromMat: source " << ShapeText(M)
      << " does not match the block matrix " << ShapeText(NumRows(), NumCols());
  CUCTX_CHECK(!Overlap(data_, M))
      << "CuBlockMatrix::CopyFromMat: source overlaps the block storage";
  for (MatrixIndexT k = 0; k < NumBlocks(); ++k) {
    const BlockInfo& info = blocks_[k];
    Block(k).CopyFromMat(M.Range(info.row_offset, info.num_rows, info.col_offset, info.num_cols));
  }
}

template <typename Real>
void CuBlockMatrix<Real>::Swap(CuBlockMatrix<Real>* other) {
  CUCTX_CHECK(other != nullptr) << "CuBlockMatrix::Swap: null argument";
  data_.Swap(&other->data_);
  blocks_.swap(other->blocks_);
  std::swap(num_rows_, other->num_rows_);
}

template <typename Real>
std::ostream& operator<<(std::ostream& os, const CuBlockMatrix<Real>& mat) {
  mat.Write(os, false);
  return os;
}

// ---- CuMatrixBase / CuMatrix members taking a CuBlockMatrix ----------------------------------

template <typename Real>
void CuMatrixBase<Real>::AddMatBlock(Real alpha, const CuMatrixBase<Real>& A,
                                     MatrixTransposeType transA, const CuBlockMatrix<Real>& B,
                                     MatrixTransposeType transB, Real beta) {
  const MatrixIndexT b_rows = transB == kNoTrans ? B.NumRows() : B.NumCols();
  const MatrixIndexT b_cols = transB == kNoTrans ? B.NumCols() : B.NumRows();
  CUCTX_CHECK(OpRows(A, transA) == num_rows_ && b_cols == num_cols_ && OpCols(A, transA) == b_rows)
      << "CuMatrixBase::AddMatBlock: shape mismatch: A " << ShapeText(A) << " ("
      << TransName(transA) << ") times block matrix " << ShapeText(B.NumRows(), B.NumCols()) << " ("
      << TransName(transB) << ") into " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(*this, A) && !Overlap(*this, B.data_))
      << "CuMatrixBase::AddMatBlock: output " << ShapeText(*this) << " overlaps input "
      << (Overlap(*this, A) ? "A" : "B");
  if (B.blocks_.empty()) return;  // then this has no columns
  std::vector<CuSubMatrix<Real>> c, a, b;
  for (MatrixIndexT k = 0; k < B.NumBlocks(); ++k) {
    const typename CuBlockMatrix<Real>::BlockInfo& info = B.blocks_[k];
    // Block k of op(B) spans these rows and columns of op(B).
    const MatrixIndexT row_off = transB == kNoTrans ? info.row_offset : info.col_offset;
    const MatrixIndexT rows = transB == kNoTrans ? info.num_rows : info.num_cols;
    const MatrixIndexT col_off = transB == kNoTrans ? info.col_offset : info.row_offset;
    const MatrixIndexT cols = transB == kNoTrans ? info.num_cols : info.num_rows;
    c.push_back(this->ColRange(col_off, cols));
    a.push_back(OpColRange(A, transA, row_off, rows));
    b.push_back(B.Block(k));
  }
  RunBlockGemms(alpha, &c, a, transA, b, transB, beta, B.UniformBlocks());
}

template <typename Real>
void CuMatrixBase<Real>::CopyFromBlock(const CuBlockMatrix<Real>& B, MatrixTransposeType trans) {
  const MatrixIndexT rows = trans == kNoTrans ? B.NumRows() : B.NumCols();
  const MatrixIndexT cols = trans == kNoTrans ? B.NumCols() : B.NumRows();
  CUCTX_CHECK(rows == num_rows_ && cols == num_cols_)
      << "CuMatrixBase::CopyFromBlock: block matrix " << ShapeText(B.NumRows(), B.NumCols()) << " ("
      << TransName(trans) << ") does not match " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(*this, B.data_)) << "CuMatrixBase::CopyFromBlock: output "
                                        << ShapeText(*this) << " overlaps the block storage";
  SetZero();
  for (MatrixIndexT k = 0; k < B.NumBlocks(); ++k) {
    const typename CuBlockMatrix<Real>::BlockInfo& info = B.blocks_[k];
    if (trans == kNoTrans)
      Range(info.row_offset, info.num_rows, info.col_offset, info.num_cols).CopyFromMat(B.Block(k));
    else
      Range(info.col_offset, info.num_cols, info.row_offset, info.num_rows)
          .CopyFromMat(B.Block(k), kTrans);
  }
}

template <typename Real>
CuMatrix<Real>::CuMatrix(const CuBlockMatrix<Real>& other, MatrixTransposeType trans) {
  ResizeFor(other.NumRows(), other.NumCols(), trans);
  this->CopyFromBlock(other, trans);
}

#define CUCTX_INSTANTIATE_BLOCK_(R)                                                            \
  template class CuBlockMatrix<R>;                                                             \
  template std::ostream& operator<<(std::ostream&, const CuBlockMatrix<R>&);                   \
  template void CuMatrixBase<R>::AddMatBlock(R, const CuMatrixBase<R>&, MatrixTransposeType,   \
                                             const CuBlockMatrix<R>&, MatrixTransposeType, R); \
  template void CuMatrixBase<R>::CopyFromBlock(const CuBlockMatrix<R>&, MatrixTransposeType);  \
  template CuMatrix<R>::CuMatrix(const CuBlockMatrix<R>&, MatrixTransposeType);
CUCTX_INSTANTIATE_BLOCK_(float)
CUCTX_INSTANTIATE_BLOCK_(double)
#undef CUCTX_INSTANTIATE_BLOCK_

}  // namespace cuctx
