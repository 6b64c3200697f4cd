// matrix/tp-matrix.h: TpMatrix, a lower-triangular matrix stored as its packed lower triangle.
// SPDX-License-Identifier: Apache-2.0
//
// Storage and the on-disk format are PackedMatrix's (matrix/packed-matrix.h). The elements above
// the diagonal are zero and not stored: reading one gives 0, writing one throws. The typical use is
// the Cholesky factor L of a symmetric positive definite matrix (A = L L^T) and its inverse.
#ifndef CUCTX_MATRIX_TP_MATRIX_H_
#define CUCTX_MATRIX_TP_MATRIX_H_

#include "base/types.h"
#include "matrix/matrix-common.h"
#include "matrix/packed-matrix.h"

#include <vector>

namespace cuctx {

template <typename Real>
class MatrixBase;
template <typename Real>
class SpMatrix;
template <typename Real>
class CuTpMatrix;  // GPU-layer conversion below (cudamatrix/cu-host-conversions.cc)

// A lower-triangular n x n matrix; owns its n(n+1)/2 elements. Not thread-safe for concurrent
// modification; const methods may run concurrently. Misuse throws cuctx::Error.
template <typename Real>
class TpMatrix : public PackedMatrix<Real> {
 public:
  TpMatrix() = default;
  explicit TpMatrix(MatrixIndexT n, MatrixResizeType resize_type = kSetZero)
      : PackedMatrix<Real>(n, resize_type) {}
  TpMatrix(const TpMatrix<Real>&) = default;
  TpMatrix& operator=(const TpMatrix<Real>&) = default;
  template <typename OtherReal>
  explicit TpMatrix(const TpMatrix<OtherReal>& other) {
    this->Resize(other.NumRows(), kUndefined);
    this->CopyFromPacked(other);
  }
  // The lower triangle of M (or of M^T with trans == kTrans); see CopyFromMat.
  explicit TpMatrix(const MatrixBase<Real>& M, MatrixTransposeType trans = kNoTrans) {
    CopyFromMat(M, trans);
  }

  // A copy of the GPU matrix cu (waits for the copy). Defined in cudamatrix/cu-host-conversions.cc.
  explicit TpMatrix(const CuTpMatrix<Real>& cu);

  // Element (r, c); 0 above the diagonal. Throws if an index is out of range.
  Real operator()(MatrixIndexT r, MatrixIndexT c) const {
    if (static_cast<UnsignedMatrixIndexT>(c) > static_cast<UnsignedMatrixIndexT>(r) &&
        static_cast<UnsignedMatrixIndexT>(c) < static_cast<UnsignedMatrixIndexT>(this->num_rows_))
      return Real(0);
    return PackedMatrix<Real>::operator()(r, c);
  }
  // Writable element (r, c) with c <= r; throws for c > r (that element is always zero). Note
  // that on a non-const TpMatrix this overload is chosen even for reading, as in Kaldi.
  Real& operator()(MatrixIndexT r, MatrixIndexT c) { return PackedMatrix<Real>::operator()(r, c); }

  // Sets *this (resized to orig's size) to the lower Cholesky factor L of the symmetric positive
  // definite `orig`: orig = L L^T, with a positive diagonal. Throws cuctx::Error saying the matrix
  // is not positive definite (and at which row) otherwise; *this is then unchanged.
  void Cholesky(const SpMatrix<Real>& orig);
  // Replaces *this by its inverse (also lower triangular). Throws if a diagonal element is zero.
  void Invert();
  // As Invert; the arithmetic is double precision for both Real types already.
  void InvertDouble() { Invert(); }

  // Resizes to M's size (M must be square) and takes its lower triangle (kNoTrans) or the lower
  // triangle of M^T, i.e. the upper triangle of M (kTrans); the rest of M is ignored.
  void CopyFromMat(const MatrixBase<Real>& M, MatrixTransposeType trans = kNoTrans);
  // Copies another TpMatrix of the same size (either precision).
  template <typename OtherReal>
  void CopyFromTp(const TpMatrix<OtherReal>& other) {
    this->CopyFromPacked(other);
  }
  // Writes the full matrix (zeros above the diagonal), or its transpose, into M, which must be
  // NumRows() x NumRows() (else throws).
  template <typename OtherReal>
  void CopyToMat(MatrixBase<OtherReal>* M, MatrixTransposeType trans = kNoTrans) const;

  // Product of the diagonal.
  Real Determinant() const;
  // Sum of the stored elements (the elements above the diagonal are zero).
  Real Sum() const;
  // sqrt(sum of the squares of the stored elements).
  Real FrobeniusNorm() const;
  // *this += alpha * T; sizes must match.
  void AddTp(Real alpha, const TpMatrix<Real>& T) { this->AddPacked(alpha, T); }
};

namespace internal {

// The Cholesky factor, in double precision, of the n x n symmetric matrix whose packed lower
// triangle is `packed`: on success fills *L (packed, n(n+1)/2) and returns true; otherwise returns
// false with the failing row and its pivot (<= 0 or NaN) in *bad_row / *bad_pivot. Never throws.
// Shared by TpMatrix::Cholesky and SpMatrix's positive-definite queries.
template <typename Real>
bool PackedCholesky(const Real* packed, MatrixIndexT n, std::vector<double>* L,
                    MatrixIndexT* bad_row, double* bad_pivot);

}  // namespace internal

}  // namespace cuctx

#endif  // CUCTX_MATRIX_TP_MATRIX_H_
