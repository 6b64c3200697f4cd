// cudamatrix/cu-tp-matrix.h: CuTpMatrix, a lower-triangular matrix stored as its packed triangle.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_TP_MATRIX_H_
#define CUCTX_CUDAMATRIX_CU_TP_MATRIX_H_

#include "base/error.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-packed-matrix.h"
#include "cudamatrix/cu-value.h"
#include "matrix/matrix-common.h"
#include "matrix/tp-matrix.h"

#include <cstddef>

namespace cuctx {

template <typename Real>
class CuSpMatrix;

// A lower-triangular n x n matrix (zero above the diagonal, not stored); storage, memory, stream
// and thread-safety as CuPackedMatrix. The typical use is a Cholesky factor L and its inverse,
// which cuSOLVER computes on the GPU (potrf, trtri) and matrix/ on the CPU.
template <typename Real>
class CuTpMatrix : public CuPackedMatrix<Real> {
 public:
  CuTpMatrix() = default;
  explicit CuTpMatrix(MatrixIndexT n, MatrixResizeType resize_type = kSetZero)
      : CuPackedMatrix<Real>(n, resize_type) {}
  CuTpMatrix(const CuTpMatrix<Real>& orig) : CuPackedMatrix<Real>(orig) {}
  explicit CuTpMatrix(const TpMatrix<Real>& orig) : CuPackedMatrix<Real>(orig) {}
  // The lower triangle of the square orig (see CopyFromMat).
  explicit CuTpMatrix(const CuMatrixBase<Real>& orig, MatrixTransposeType trans = kNoTrans) {
    CopyFromMat(orig, trans);
  }
  CuTpMatrix<Real>& operator=(const CuTpMatrix<Real>& orig) {
    CuPackedMatrix<Real>::operator=(orig);
    return *this;
  }

  // Copies another triangular matrix of the same size (throws otherwise).
  void CopyFromTp(const CuTpMatrix<Real>& other) { this->CopyFromPacked(other); }
  void CopyFromTp(const TpMatrix<Real>& other) { this->CopyFromPacked(other); }
  // Resizes to M's size (M must be square, else throws) and takes M's lower triangle (kNoTrans)
  // or the lower triangle of M^T, i.e. M's upper triangle (kTrans); the rest of M is ignored.
  void CopyFromMat(const CuMatrixBase<Real>& M, MatrixTransposeType trans = kNoTrans);

  // Element (r, c); 0 above the diagonal. A transfer per call in GPU mode. Throws if an index is
  // out of range.
  Real operator()(MatrixIndexT r, MatrixIndexT c) const {
    if (c > r && c < this->num_rows_ && r >= 0) return Real(0);
    return CuPackedMatrix<Real>::operator()(r, c);
  }
  // Writable element (r, c) with 0 <= c <= r < NumRows(); throws for c > r (that element is
  // always zero and not stored) or an index out of range, as TpMatrix's writable form. Each
  // read or write through the CuValue is a transfer in GPU mode. (Kaldi's CuTpMatrix has only
  // the read; this is the TpMatrix form, so ported TpMatrix code keeps working.)
  CuValue<Real> operator()(MatrixIndexT r, MatrixIndexT c) {
    CUCTX_CHECK(r >= 0 && r < this->num_rows_ && c >= 0 && c <= r)
        << "CuTpMatrix: element (" << r << ", " << c << ") is not in the lower triangle of a "
        << this->num_rows_ << "x" << this->num_rows_ << " triangular matrix";
    return CuValue<Real>(this->data_ + static_cast<size_t>(r) * (r + 1) / 2 + c);
  }

  // Resizes to orig's size and sets this to the lower Cholesky factor L of the positive definite
  // orig (orig = L L^T), through CuMatrixBase::Cholesky (cuSOLVER potrf on the GPU; waits for its
  // info). Throws cuctx::Error saying orig is not positive definite otherwise; this matrix is
  // then unchanged.
  void Cholesky(const CuSpMatrix<Real>& orig);
  // Replaces this matrix by its inverse (lower triangular). GPU: cuSOLVER trtri on a full-matrix
  // copy, one read-back of its info (waits). Throws cuctx::Error saying the matrix is singular if
  // a diagonal element is zero; this matrix is then unchanged.
  void Invert();
};

namespace internal {

// Device only (GPU mode, CUDA builds): replaces the lower triangle of the n x n row-major matrix
// at `data` (row stride `stride`) by the inverse of the lower-triangular matrix it holds, with
// cuSOLVER trtri; the strict upper triangle is neither read nor written. cuSOLVER's info (0, or
// k > 0 when diagonal element k, 1-based, is zero) is written to the device int d_info.
// Asynchronous on this thread's stream. Defined in cu-matrix-solve.cc.
template <typename Real>
void InvertLowerOnDevice(Real* data, MatrixIndexT n, MatrixIndexT stride, int* d_info);

}  // namespace internal

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_TP_MATRIX_H_
