// cudamatrix/cu-sp-matrix.h: CuSpMatrix, a symmetric matrix stored as its packed lower triangle.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_SP_MATRIX_H_
#define CUCTX_CUDAMATRIX_CU_SP_MATRIX_H_

#include "base/error.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-packed-matrix.h"
#include "cudamatrix/cu-value.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix-common.h"
#include "matrix/sp-matrix.h"

#include <cstddef>
#include <utility>

namespace cuctx {

// A symmetric n x n matrix A (A(r, c) = A(c, r)) kept as its packed lower triangle; storage,
// memory, stream and thread-safety as CuPackedMatrix. The products go through cuBLAS (syrk, spmv,
// dot) and the inverse through cuSOLVER on the GPU, through matrix/ on the CPU.
template <typename Real>
class CuSpMatrix : public CuPackedMatrix<Real> {
 public:
  CuSpMatrix() = default;
  explicit CuSpMatrix(MatrixIndexT n, MatrixResizeType resize_type = kSetZero)
      : CuPackedMatrix<Real>(n, resize_type) {}
  CuSpMatrix(const CuSpMatrix<Real>& orig) : CuPackedMatrix<Real>(orig) {}
  explicit CuSpMatrix(const SpMatrix<Real>& orig) : CuPackedMatrix<Real>(orig) {}
  // The symmetric matrix taken from the square orig as CopyFromMat does.
  explicit CuSpMatrix(const CuMatrixBase<Real>& orig, SpCopyType copy_type = kTakeLower) {
    CopyFromMat(orig, copy_type);
  }
  CuSpMatrix<Real>& operator=(const CuSpMatrix<Real>& orig) {
    CuPackedMatrix<Real>::operator=(orig);
    return *this;
  }

  // Copies another symmetric matrix of the same size (throws otherwise).
  void CopyFromSp(const CuSpMatrix<Real>& other) { this->CopyFromPacked(other); }
  void CopyFromSp(const SpMatrix<Real>& other) { this->CopyFromPacked(other); }
  // Resizes to M's size (M must be square, else throws) and takes M's lower triangle
  // (kTakeLower), its upper triangle (kTakeUpper) or the mean of the two (kTakeMean), with one
  // kernel on the GPU. kTakeMeanAndCheck also throws if M is not symmetric (as
  // SpMatrix::CopyFromMat checks it); that check runs on a host copy of M and waits for it.
  // M must not overlap this matrix's storage.
  void CopyFromMat(const CuMatrixBase<Real>& M, SpCopyType copy_type = kTakeLower);
  // *dst = this; dst must have this size (throws otherwise). Waits for the copy.
  void CopyToSp(SpMatrix<Real>* dst) const { this->CopyToPacked(dst); }

  // Element (r, c) of the full symmetric matrix (either triangle); a transfer per call in GPU
  // mode. Throws if an index is out of range.
  Real operator()(MatrixIndexT r, MatrixIndexT c) const {
    CUCTX_CHECK(r >= 0 && r < this->num_rows_ && c >= 0 && c < this->num_rows_)
        << "CuSpMatrix: index (" << r << ", " << c << ") is outside the " << this->num_rows_ << "x"
        << this->num_rows_ << " matrix";
    return r >= c ? CuPackedMatrix<Real>::operator()(r, c) : CuPackedMatrix<Real>::operator()(c, r);
  }
  // Writable element (r, c) of the full symmetric matrix: (r, c) and (c, r) are one stored
  // element, so writing either changes both (Kaldi parity). Each read or write through the
  // CuValue is a transfer in GPU mode. Throws if an index is out of range.
  CuValue<Real> operator()(MatrixIndexT r, MatrixIndexT c) {
    CUCTX_CHECK(r >= 0 && r < this->num_rows_ && c >= 0 && c < this->num_rows_)
        << "CuSpMatrix: index (" << r << ", " << c << ") is outside the " << this->num_rows_ << "x"
        << this->num_rows_ << " matrix";
    if (c > r) std::swap(r, c);
    return CuValue<Real>(this->data_ + static_cast<size_t>(r) * (r + 1) / 2 + c);
  }

  // ---- Kaldi parity (defined in cu-parity.cc; each waits for its result) ----
  // sqrt(tr(this this)), the Frobenius norm of the full symmetric matrix.
  Real FrobeniusNorm() const;
  // True when ||this - other||_F <= tol * ||this||_F (full symmetric norms). Throws on a size
  // mismatch.
  bool ApproxEqual(const CuSpMatrix<Real>& other, Real tol = 0.001) const;
  // ---- end of Kaldi parity ----

  // Replaces this positive definite matrix by its inverse, through a full-matrix copy and
  // CuMatrixBase::SymInvertPosDef (cuSOLVER potrf + potri on the GPU; waits for cuSOLVER's info).
  // As Kaldi's GPU path, and unlike SpMatrix::Invert, the matrix must be positive definite, in
  // both modes: otherwise throws cuctx::Error saying it is not, and this matrix is unchanged.
  void Invert();

  // this = beta * this + alpha * M M^T (transM == kNoTrans; M.NumRows() == NumRows()) or
  // alpha * M^T M (kTrans; M.NumCols() == NumRows()). With beta == 0 the old contents are
  // ignored. GPU: one syrk into a full scratch matrix, then a packing kernel. Throws on a size
  // mismatch.
  void AddMat2(Real alpha, const CuMatrixBase<Real>& M, MatrixTransposeType transM, Real beta);
  // this += alpha * v v^T; v.Dim() == NumRows() (throws otherwise). One kernel on the GPU.
  void AddVec2(Real alpha, const CuVectorBase<Real>& v);
  // this += alpha * S; sizes must match (throws otherwise). S may be this matrix.
  void AddSp(Real alpha, const CuSpMatrix<Real>& S);

  template <typename R>
  friend R TraceSpSp(const CuSpMatrix<R>& A, const CuSpMatrix<R>& B);
};

// tr(A B) = the sum over all (r, c) of A(r, c) B(r, c), i.e. twice the dot product of the packed
// elements minus that of the diagonals. Sizes must match (throws otherwise). Waits for the result.
template <typename Real>
Real TraceSpSp(const CuSpMatrix<Real>& A, const CuSpMatrix<Real>& B);

// ---- Kaldi parity (defined in cu-parity.cc) ----
// tr(A B) across precisions: B is converted to Real on the device, then as above. Instantiated
// for (float, double) and (double, float); equal types pick the overload above.
template <typename Real, typename OtherReal>
Real TraceSpSp(const CuSpMatrix<Real>& A, const CuSpMatrix<OtherReal>& B);
// A.ApproxEqual(B, tol), and its asserting form, which throws cuctx::Error naming the relative
// difference and the tolerance.
template <typename Real>
bool ApproxEqual(const CuSpMatrix<Real>& A, const CuSpMatrix<Real>& B, Real tol = 0.001) {
  return A.ApproxEqual(B, tol);
}
template <typename Real>
void AssertEqual(const CuSpMatrix<Real>& A, const CuSpMatrix<Real>& B, Real tol = 0.001);
// ---- end of Kaldi parity ----

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_SP_MATRIX_H_
