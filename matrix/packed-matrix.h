// matrix/packed-matrix.h: PackedMatrix, the packed lower-triangle base of SpMatrix and TpMatrix.
// SPDX-License-Identifier: Apache-2.0
//
// STORAGE: an n x n matrix keeps only its lower triangle, row by row: (0,0), (1,0), (1,1),
// (2,0), ... so element (r, c) with c <= r is at Data()[r * (r + 1) / 2 + c], n * (n + 1) / 2
// elements in all, with no padding. This is also the column-major upper-triangle layout LAPACK
// calls "packed 'U'".
//
// ON-DISK FORMAT (byte-exact with Kaldi):
//   binary  "FP " (float) or "DP " (double), int32 n (size byte 4 + 4 bytes), then the
//           n * (n + 1) / 2 elements raw, in storage order;
//   text    Kaldi's packed text form: "[\n", then row r as its r + 1 values each followed by a
//           space, each row ended by "\n" except the last, which is ended by "]\n"; the empty
//           matrix is "[ ]\n". E.g. n = 2: "[\n1 \n2 3 ]\n".
//   Readers also take the other precision, the older text form "FP n v0 v1 ..." that Kaldi reads,
//   and "[]"; a text matrix must hold a triangular number of values.
#ifndef CUCTX_MATRIX_PACKED_MATRIX_H_
#define CUCTX_MATRIX_PACKED_MATRIX_H_

#include "base/types.h"
#include "matrix/matrix-common.h"

#include <istream>
#include <ostream>
#include <vector>

namespace cuctx {

template <typename Real>
class VectorBase;

// Owns n(n+1)/2 elements (a deep copy on copy). Not thread-safe for concurrent modification;
// const methods may run concurrently. Element access checks its indices and throws cuctx::Error.
template <typename Real>
class PackedMatrix {
 public:
  PackedMatrix() = default;
  // An n x n packed matrix, zeroed unless resize_type == kUndefined. Throws if n < 0.
  explicit PackedMatrix(MatrixIndexT n, MatrixResizeType resize_type = kSetZero) {
    Resize(n, resize_type);
  }
  PackedMatrix(const PackedMatrix&) = default;
  PackedMatrix& operator=(const PackedMatrix&) = default;
  PackedMatrix(PackedMatrix&&) noexcept = default;
  PackedMatrix& operator=(PackedMatrix&&) noexcept = default;
  ~PackedMatrix() = default;

  // Changes the size. kSetZero zeroes, kUndefined leaves contents undefined, kCopyData keeps the
  // leading min(old, new) block and zeroes the rest. Throws if n < 0.
  void Resize(MatrixIndexT n, MatrixResizeType resize_type = kSetZero);

  MatrixIndexT NumRows() const { return num_rows_; }
  MatrixIndexT NumCols() const { return num_rows_; }
  // Bytes of storage: n(n+1)/2 * sizeof(Real).
  size_t SizeInBytes() const { return data_.size() * sizeof(Real); }
  // The packed elements (nullptr when empty).
  Real* Data() { return data_.empty() ? nullptr : data_.data(); }
  const Real* Data() const { return data_.empty() ? nullptr : data_.data(); }

  // Element (r, c) of the stored triangle; requires 0 <= c <= r < NumRows() (else throws).
  // SpMatrix and TpMatrix redefine these for c > r.
  Real operator()(MatrixIndexT r, MatrixIndexT c) const { return data_[Index(r, c)]; }
  Real& operator()(MatrixIndexT r, MatrixIndexT c) { return data_[Index(r, c)]; }

  void SetZero();
  // The identity.
  void SetUnit();
  // Standard normal values in every stored element (base/random.h).
  void SetRandn();
  // Sum of the diagonal.
  Real Trace() const;
  void AddToDiag(Real r);
  void ScaleDiag(Real alpha);
  void SetDiag(Real alpha);
  // Multiplies every stored element by alpha.
  void Scale(Real alpha);
  // *this += alpha * M (stored elements); sizes must match.
  void AddPacked(Real alpha, const PackedMatrix<Real>& M);
  // Largest / smallest stored element; throw if empty.
  Real Max() const;
  Real Min() const;

  // Copies another packed matrix of the same size (either precision).
  template <typename OtherReal>
  void CopyFromPacked(const PackedMatrix<OtherReal>& orig);
  // Copies the packed elements from a vector of dimension n(n+1)/2 (either precision).
  template <typename OtherReal>
  void CopyFromVec(const VectorBase<OtherReal>& v);

  void Swap(PackedMatrix<Real>* other);

  // The format above. Write throws if the stream is bad.
  void Write(std::ostream& os, bool binary) const;
  // Reads any stored size (resizing). With add == true the stored matrix is added; its size must
  // match unless *this is empty (then it is taken) or the stored one is empty (then nothing
  // changes, as in Kaldi). Throws cuctx::Error on a wrong token, a negative or impossible size,
  // truncation or a bad text value, saying where.
  void Read(std::istream& is, bool binary, bool add = false);

 protected:
  // Storage index of (r, c); throws unless 0 <= c <= r < NumRows().
  size_t Index(MatrixIndexT r, MatrixIndexT c) const {
    if (static_cast<UnsignedMatrixIndexT>(r) >= static_cast<UnsignedMatrixIndexT>(num_rows_) ||
        static_cast<UnsignedMatrixIndexT>(c) > static_cast<UnsignedMatrixIndexT>(r))
      ThrowBadIndex(r, c);
    return static_cast<size_t>(r) * (static_cast<size_t>(r) + 1) / 2 + static_cast<size_t>(c);
  }
  [[noreturn]] void ThrowBadIndex(MatrixIndexT r, MatrixIndexT c) const;

  MatrixIndexT num_rows_ = 0;
  std::vector<Real> data_;
};

// ---- Kaldi parity: stream extraction (matrix/sp-matrix-extra.cc) -------------------------------
// is >> M reads M in text form, as M.Read(is, false) (resizing; throws on bad input).
template <typename Real>
std::istream& operator>>(std::istream& is, PackedMatrix<Real>& M);
// ---- end Kaldi parity: stream extraction -------------------------------------------------------

}  // namespace cuctx

#endif  // CUCTX_MATRIX_PACKED_MATRIX_H_
