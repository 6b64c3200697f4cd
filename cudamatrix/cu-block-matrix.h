// cudamatrix/cu-block-matrix.h: CuBlockMatrix, a block-diagonal matrix diag(M_1, ..., M_N) of
// CuMatrix blocks, and its products.
// SPDX-License-Identifier: Apache-2.0
//
// CuMatrixBase::AddMatBlock (a dense matrix times a CuBlockMatrix), CuMatrixBase::CopyFromBlock
// and the CuMatrix(const CuBlockMatrix&) constructor are declared in cu-matrix.h and defined in
// cu-block-matrix.cc.
#ifndef CUCTX_CUDAMATRIX_CU_BLOCK_MATRIX_H_
#define CUCTX_CUDAMATRIX_CU_BLOCK_MATRIX_H_

#include "base/types.h"
#include "cudamatrix/cu-matrix.h"
#include "matrix/matrix-common.h"

#include <istream>
#include <ostream>
#include <vector>

namespace cuctx {

// The NumRows() x NumCols() matrix diag(M_1, ..., M_N): block b is M_b (any shape with at least
// one row and one column; blocks need not be square), placed so that its rows follow those of
// blocks 0..b-1 and its columns follow theirs; everything off the blocks is zero and not stored.
// NumRows() and NumCols() are the sums of the block rows and columns (0 x 0 with no blocks).
//
// Storage: the blocks are packed side by side into one CuMatrix of MaxBlockRows() rows and
// NumCols() columns (block b in its own column range, rows from 0), so the blocks share one
// stride; device memory in GPU mode, host memory otherwise, as CuMatrix. Block(b) is a view of
// that storage, valid until this object is resized (Read, operator=, Swap) or destroyed.
//
// Products (AddMatMat here, CuMatrixBase::AddMatBlock): one GEMM per block on this thread's
// cuBLAS handle (cuBLAS in GPU mode, matrix/ on the CPU), or, when every block has the same shape
// and there are several, one batched GEMM (AddMatMatBatched). Asynchronous on this thread's
// stream (cudaStreamPerThread) unless stated.
//
// Not thread-safe: one thread uses an object at a time. Misuse (a shape mismatch, an empty
// block, a bad block index, overlapping operands) throws cuctx::Error naming the shapes or the
// index, in both modes.
template <typename Real>
class CuBlockMatrix {
 public:
  CuBlockMatrix() = default;
  // diag(data[0], ..., data[N-1]) (copies of the blocks). Throws if a block has no rows or no
  // columns.
  explicit CuBlockMatrix(const std::vector<CuMatrix<Real>>& data);
  CuBlockMatrix(const CuBlockMatrix<Real>& other) = default;
  CuBlockMatrix<Real>& operator=(const CuBlockMatrix<Real>& other) = default;
  ~CuBlockMatrix() = default;

  MatrixIndexT NumRows() const { return num_rows_; }
  MatrixIndexT NumCols() const { return data_.NumCols(); }
  MatrixIndexT NumBlocks() const { return static_cast<MatrixIndexT>(blocks_.size()); }
  // The largest number of columns / rows of any block (0 with no blocks).
  MatrixIndexT MaxBlockCols() const;
  MatrixIndexT MaxBlockRows() const { return data_.NumRows(); }

  // A view of block b (0 <= b < NumBlocks(), else throws). The non-const form may be written
  // through; neither can resize the block.
  const CuSubMatrix<Real> Block(MatrixIndexT b) const;
  CuSubMatrix<Real> Block(MatrixIndexT b);

  // Kaldi's on-disk form: the token <CuBlockMatrix>, the number of blocks (int32), each block as a
  // matrix (CuMatrixBase::Write), then </CuBlockMatrix>. Write waits for the device copies.
  void Write(std::ostream& os, bool binary) const;
  // Reads the form Write writes, or the older form without the two tokens (the block count, then
  // the blocks), replacing this matrix. Throws cuctx::Error on bad input (a negative count, an
  // empty block, a malformed matrix); this matrix is then unchanged.
  void Read(std::istream& is, bool binary);

  // Block-diagonal part of a product: each block b becomes
  //   beta * block b + alpha * (rows of op(A) in block b's row range) (columns of op(B) in its
  //   column range),
  // and the products' elements off the blocks are discarded. op(A) must have NumRows() rows,
  // op(B) NumCols() columns, and op(A)'s columns must match op(B)'s rows; A and B must not overlap
  // this matrix's storage. As Kaldi, alpha and beta are BaseFloat.
  void AddMatMat(BaseFloat alpha, const CuMatrixBase<Real>& A, MatrixTransposeType transA,
                 const CuMatrixBase<Real>& B, MatrixTransposeType transB, BaseFloat beta);

  // Each block b = the part of M (NumRows() x NumCols(), else throws) in block b's rows and
  // columns; the rest of M is ignored. M must not overlap this matrix's storage.
  void CopyFromMat(const CuMatrixBase<Real>& M);

  // Exchanges contents with *other (no copy).
  void Swap(CuBlockMatrix<Real>* other);

 private:
  friend class CuMatrixBase<Real>;
  // Where block b sits in the full NumRows() x NumCols() matrix, and its shape.
  struct BlockInfo {
    MatrixIndexT num_rows;
    MatrixIndexT num_cols;
    MatrixIndexT row_offset;
    MatrixIndexT col_offset;
  };
  void CheckBlockIndex(MatrixIndexT b) const;
  // True when there are at least two blocks and all have one shape (the batched-GEMM case).
  bool UniformBlocks() const;

  // Storage of the blocks, MaxBlockRows() x NumCols(); block b at columns [col_offset, +num_cols).
  CuMatrix<Real> data_;
  std::vector<BlockInfo> blocks_;
  MatrixIndexT num_rows_ = 0;
};

// Writes the matrix in the text form of CuBlockMatrix::Write.
template <typename Real>
std::ostream& operator<<(std::ostream& os, const CuBlockMatrix<Real>& mat);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_BLOCK_MATRIX_H_
