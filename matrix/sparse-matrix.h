// matrix/sparse-matrix.h: SparseVector and SparseMatrix: rows of sorted (index, value) pairs.
// SPDX-License-Identifier: Apache-2.0
//
// INVARIANTS: a SparseVector of dimension d holds pairs with strictly increasing indices in
// [0, d). A SparseMatrix is a list of rows that all have the same dimension, NumCols(); as in Kaldi
// a matrix with no rows reports NumCols() == 0.
//
// ON-DISK FORMAT (byte-exact with Kaldi):
//   SparseVector binary  "SV ", int32 dim, int32 number of pairs, then per pair an int32 index and
//                        a float/double value, each written as a basic type (size byte + bytes);
//                        the same token serves both precisions (the value's size byte tells which).
//   SparseVector text    "dim=5 [ 0 0.2 3 0.9 ] " (the pairs, then "] " with a trailing space).
//   SparseMatrix binary  "SM ", int32 number of rows, then each row as a binary SparseVector.
//   SparseMatrix text    "rows=2 " then each row in SparseVector text form, then "\n".
// Reading checks the invariants: an index outside [0, dim), or one not greater than the previous
// index, is an error naming the index, the row and the position in the stream.
#ifndef CUCTX_MATRIX_SPARSE_MATRIX_H_
#define CUCTX_MATRIX_SPARSE_MATRIX_H_

#include "base/types.h"
#include "matrix/matrix-common.h"

#include <istream>
#include <ostream>
#include <utility>
#include <vector>

namespace cuctx {

template <typename Real>
class MatrixBase;
template <typename Real>
class VectorBase;

// A sparse vector: owns its pairs (deep copy on copy). Not thread-safe for concurrent
// modification; const methods may run concurrently. Misuse throws cuctx::Error.
template <typename Real>
class SparseVector {
 public:
  SparseVector() = default;
  // An all-zero vector of dimension `dim`; throws if dim < 0.
  explicit SparseVector(MatrixIndexT dim);
  // From unsorted pairs: they are sorted, values with equal indices are summed and zeros dropped
  // (as Kaldi does). Throws, naming it, on an index outside [0, dim).
  SparseVector(MatrixIndexT dim, const std::vector<std::pair<MatrixIndexT, Real>>& pairs);
  // The nonzero elements of a dense vector.
  explicit SparseVector(const VectorBase<Real>& vec);

  MatrixIndexT Dim() const { return dim_; }
  MatrixIndexT NumElements() const { return static_cast<MatrixIndexT>(pairs_.size()); }
  // Pair i (0 <= i < NumElements(), else throws).
  const std::pair<MatrixIndexT, Real>& GetElement(MatrixIndexT i) const;
  // The pairs (nullptr when there are none).
  const std::pair<MatrixIndexT, Real>* Data() const {
    return pairs_.empty() ? nullptr : pairs_.data();
  }
  std::pair<MatrixIndexT, Real>* Data() { return pairs_.empty() ? nullptr : pairs_.data(); }

  // Sum of the stored values.
  Real Sum() const;
  // Largest element of the full vector (implicit zeros included) and its index; throws if
  // Dim() == 0.
  Real Max(int32* index) const;
  void Scale(Real alpha);

  // *vec (Dim() == vec->Dim(), else throws) = this vector, zeros included.
  template <typename OtherReal>
  void CopyElementsToVec(VectorBase<OtherReal>* vec) const;
  // *vec += alpha * this vector.
  template <typename OtherReal>
  void AddToVec(Real alpha, VectorBase<OtherReal>* vec) const;
  // Copies another sparse vector (either precision), dimension included.
  template <typename OtherReal>
  void CopyFromSvec(const SparseVector<OtherReal>& other);

  // Random pairs: each element is nonzero with probability 1 - zero_prob, with a standard normal
  // value (base/random.h). Throws unless 0 <= zero_prob <= 1.
  void SetRandn(BaseFloat zero_prob);
  // Changes the dimension. kCopyData keeps the pairs below the new dimension; otherwise all are
  // dropped. Throws if dim < 0.
  void Resize(MatrixIndexT dim, MatrixResizeType resize_type = kSetZero);
  void Swap(SparseVector<Real>* other);

  void Write(std::ostream& os, bool binary) const;
  // Throws cuctx::Error on a wrong token, a bad size or count, truncation, a bad number, or an
  // index out of range or out of order (naming it and where).
  void Read(std::istream& is, bool binary);

 private:
  MatrixIndexT dim_ = 0;
  std::vector<std::pair<MatrixIndexT, Real>> pairs_;
};

// vec . svec; dimensions must match.
template <typename Real>
Real VecSvec(const VectorBase<Real>& vec, const SparseVector<Real>& svec);

// A sparse matrix of rows. Owns its rows (deep copy on copy). Thread-safety as SparseVector.
template <typename Real>
class SparseMatrix {
 public:
  SparseMatrix() = default;
  // num_rows empty rows of dimension num_cols; throws on negative sizes.
  SparseMatrix(MatrixIndexT num_rows, MatrixIndexT num_cols) { Resize(num_rows, num_cols); }
  // Row r from pairs[r] (as the SparseVector constructor: sorted, merged, zeros dropped), all of
  // dimension `dim`.
  SparseMatrix(MatrixIndexT dim,
               const std::vector<std::vector<std::pair<MatrixIndexT, Real>>>& pairs);
  // The nonzero elements of a dense matrix.
  explicit SparseMatrix(const MatrixBase<Real>& mat);
  // One-hot rows: row i has a 1 (or weights(i)) at column indexes[i], or is empty where
  // indexes[i] < 0; `dim` columns. With trans == kTrans the result is transposed (dim rows).
  // Throws on an index >= dim or, with weights, if weights.Dim() != indexes.size().
  SparseMatrix(const std::vector<int32>& indexes, MatrixIndexT dim,
               MatrixTransposeType trans = kNoTrans);
  SparseMatrix(const std::vector<int32>& indexes, const VectorBase<Real>& weights, MatrixIndexT dim,
               MatrixTransposeType trans = kNoTrans);
  SparseMatrix(const SparseMatrix<Real>& other) = default;
  SparseMatrix(const SparseMatrix<Real>& other, MatrixTransposeType trans) {
    CopyFromSmat(other, trans);
  }
  SparseMatrix& operator=(const SparseMatrix<Real>& other) = default;

  MatrixIndexT NumRows() const { return static_cast<MatrixIndexT>(rows_.size()); }
  MatrixIndexT NumCols() const { return rows_.empty() ? 0 : rows_[0].Dim(); }
  // Number of stored pairs over all rows.
  MatrixIndexT NumElements() const;
  Real Sum() const;
  Real FrobeniusNorm() const;
  void Scale(Real alpha);

  // Row r (throws if out of range) and row replacement (vec.Dim() must equal NumCols()).
  const SparseVector<Real>& Row(MatrixIndexT r) const;
  void SetRow(int32 r, const SparseVector<Real>& vec);
  // The rows (nullptr when there are none).
  const SparseVector<Real>* Data() const { return rows_.empty() ? nullptr : rows_.data(); }
  SparseVector<Real>* Data() { return rows_.empty() ? nullptr : rows_.data(); }

  // *other = this matrix (or its transpose), zeros included; the shape must match.
  template <typename OtherReal>
  void CopyToMat(MatrixBase<OtherReal>* other, MatrixTransposeType trans = kNoTrans) const;
  // The stored values row by row into *other, whose Dim() must be NumElements().
  void CopyElementsToVec(VectorBase<Real>* other) const;
  // *other += alpha * this (or its transpose); the shape must match.
  void AddToMat(BaseFloat alpha, MatrixBase<Real>* other,
                MatrixTransposeType trans = kNoTrans) const;
  // *this = other or other^T (either precision).
  template <typename OtherReal>
  void CopyFromSmat(const SparseMatrix<OtherReal>& other, MatrixTransposeType trans = kNoTrans);
  // *this = rows row_indexes[i] of smat_other (each in range, else throws).
  void SelectRows(const std::vector<int32>& row_indexes, const SparseMatrix<Real>& smat_other);
  // *this = the rows of all inputs in order (their column counts must agree); empties *inputs'
  // rows.
  void AppendSparseMatrixRows(std::vector<SparseMatrix<Real>>* inputs);

  // Random rows (SparseVector::SetRandn each row).
  void SetRandn(BaseFloat zero_prob);
  // num_rows x num_cols. kCopyData keeps the existing pairs that still fit; otherwise all rows
  // become empty. Throws on negative sizes.
  void Resize(MatrixIndexT num_rows, MatrixIndexT num_cols,
              MatrixResizeType resize_type = kSetZero);
  void Swap(SparseMatrix<Real>* other);

  void Write(std::ostream& os, bool binary) const;
  // Reads the format above; all rows must have the same dimension (else throws, naming the row).
  void Read(std::istream& is, bool binary);

 private:
  std::vector<SparseVector<Real>> rows_;
};

// tr(A op(B)) with op(B) of A's transposed shape (kNoTrans: B is A.NumCols() x A.NumRows();
// kTrans: B has A's shape).
template <typename Real>
Real TraceMatSmat(const MatrixBase<Real>& A, const SparseMatrix<Real>& B,
                  MatrixTransposeType trans = kNoTrans);

}  // namespace cuctx

// ---- GeneralMatrix: Kaldi declares it in sparse-matrix.h, so it is reachable from here too.
// Included after this header's contents (general-matrix.h includes this header; the guards make
// either include order work).
#include "matrix/general-matrix.h"

#endif  // CUCTX_MATRIX_SPARSE_MATRIX_H_
