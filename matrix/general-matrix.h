// matrix/general-matrix.h: GeneralMatrix, a matrix held as full, compressed or sparse.
// SPDX-License-Identifier: Apache-2.0
//
// API and semantics follow Kaldi's GeneralMatrix (declared there in matrix/sparse-matrix.h, which
// includes this header here too). It is Kaldi's wrapper for neural-net inputs and targets that
// may be dense, compressed or sparse: one object type to read, write and copy out of.
//
// INVARIANT: at most one of the three members is non-empty (has rows); Type() names that one, or
// kFullMatrix when all are empty. The type is not stored separately.
//
// ON-DISK FORMAT: exactly the underlying object's (Kaldi's), nothing added:
//   full       Matrix<float>::Write ("FM " binary, " [ ... ]" text);
//   compressed CompressedMatrix::Write ("CM "/"CM2 "/"CM3 " binary; text is a full matrix, so a
//              compressed matrix written as text reads back as kFullMatrix);
//   sparse     SparseMatrix<float>::Write ("SM " binary, "rows=..." text).
// Read dispatches on the first byte: binary 'C' -> compressed, 'S' -> sparse, else full; text
// (after white space) 'r' -> sparse, else full. An empty GeneralMatrix writes an empty full matrix.
//
// Thread-safety: as Matrix (concurrent const calls are safe). Errors throw cuctx::Error.
#ifndef CUCTX_MATRIX_GENERAL_MATRIX_H_
#define CUCTX_MATRIX_GENERAL_MATRIX_H_

#include "base/types.h"
#include "matrix/compressed-matrix.h"
#include "matrix/matrix.h"
#include "matrix/sparse-matrix.h"

#include <istream>
#include <ostream>

namespace cuctx {

enum GeneralMatrixType { kFullMatrix, kCompressedMatrix, kSparseMatrix };

class GeneralMatrix {
 public:
  GeneralMatrix() = default;
  explicit GeneralMatrix(const MatrixBase<BaseFloat>& mat) { *this = mat; }
  explicit GeneralMatrix(const CompressedMatrix& cmat) { *this = cmat; }
  explicit GeneralMatrix(const SparseMatrix<BaseFloat>& smat) { *this = smat; }
  GeneralMatrix(const GeneralMatrix& other) = default;
  GeneralMatrix& operator=(const GeneralMatrix& other) = default;

  // Replace the contents (and the type) with a copy of the argument.
  GeneralMatrix& operator=(const MatrixBase<BaseFloat>& mat);
  GeneralMatrix& operator=(const CompressedMatrix& mat);
  GeneralMatrix& operator=(const SparseMatrix<BaseFloat>& smat);

  // kSparseMatrix, kCompressedMatrix or kFullMatrix (also for an empty matrix).
  GeneralMatrixType Type() const;
  MatrixIndexT NumRows() const;
  MatrixIndexT NumCols() const;

  // Full -> compressed (kAutomaticMethod); other types are left alone. A full matrix with rows
  // but no columns stays full (there is nothing to compress).
  void Compress();
  // Compressed -> full; other types are left alone.
  void Uncompress();

  // See ON-DISK FORMAT above. Read first empties *this; it throws on malformed input.
  void Write(std::ostream& os, bool binary) const;
  void Read(std::istream& is, bool binary);

  // The stored object. Each requires Type() to be that kind or NumRows() == 0; otherwise it
  // throws cuctx::Error naming the actual type (Kaldi crashes there).
  const SparseMatrix<BaseFloat>& GetSparseMatrix() const;
  const CompressedMatrix& GetCompressedMatrix() const;
  const Matrix<BaseFloat>& GetFullMatrix() const;
  // Exchange the stored object with *smat / *cmat / *mat (same precondition as the getters).
  void SwapSparseMatrix(SparseMatrix<BaseFloat>* smat);
  void SwapCompressedMatrix(CompressedMatrix* cmat);
  void SwapFullMatrix(Matrix<BaseFloat>* mat);

  // *mat = the contents as a dense matrix of any type; resizes *mat.
  void GetMatrix(Matrix<BaseFloat>* mat) const;
  // *mat = the contents (or their transpose); *mat must already have that shape (else throws).
  void CopyToMat(MatrixBase<BaseFloat>* mat, MatrixTransposeType trans = kNoTrans) const;
  // *mat += alpha * the contents (or their transpose); shapes must match (else throws).
  void AddToMat(BaseFloat alpha, MatrixBase<BaseFloat>* mat,
                MatrixTransposeType trans = kNoTrans) const;
  // Multiplies every element by alpha, keeping the type (compressed: scales its range exactly).
  void Scale(BaseFloat alpha);

  // Makes the matrix empty (Type() becomes kFullMatrix).
  void Clear();
  // Exchanges contents with *other (no copy).
  void Swap(GeneralMatrix* other);

 private:
  Matrix<BaseFloat> mat_;
  CompressedMatrix cmat_;
  SparseMatrix<BaseFloat> smat_;
};

// Sets *out to rows [row_offset, row_offset + num_rows) of `in`, keeping in's type (full,
// compressed or sparse). Rows outside [0, in.NumRows()) repeat the first or last row, so
// row_offset may be negative and the range may run past the end (Kaldi pads nnet3 inputs at the
// utterance edges this way). A compressed matrix is cut without decompressing (the values are
// unchanged). num_rows == 0 gives an empty full matrix. Throws cuctx::Error if out is null or is
// `in`, if num_rows < 0, or if rows are asked of an empty `in`.
void ExtractRowRangeWithPadding(const GeneralMatrix& in, int32 row_offset, int32 num_rows,
                                GeneralMatrix* out);

}  // namespace cuctx

#endif  // CUCTX_MATRIX_GENERAL_MATRIX_H_
