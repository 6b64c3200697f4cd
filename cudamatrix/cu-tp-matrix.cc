// cudamatrix/cu-tp-matrix.cc: CuTpMatrix (copies, Cholesky, inverse).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-tp-matrix.h"

#include "base/error.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-sp-matrix.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"

namespace cuctx {

template <typename Real>
void CuTpMatrix<Real>::CopyFromMat(const CuMatrixBase<Real>& M, MatrixTransposeType trans) {
  internal::CuOpScope op_scope("CuTpMatrix::CopyFromMat");
  CUCTX_CHECK(M.NumRows() == M.NumCols())
      << "CuTpMatrix::CopyFromMat: matrix " << internal::ShapeText(M) << " is not square";
  CUCTX_CHECK(
      !internal::SpansOverlap(M.Data(), internal::SpanBytes(M), this->data_, this->SizeInBytes()))
      << "CuTpMatrix::CopyFromMat: matrix " << internal::ShapeText(M)
      << " overlaps the packed storage";
  this->Resize(M.NumRows(), kUndefined);
  internal::PackTriangle(M, trans == kNoTrans ? PackSource::kLower : PackSource::kUpper,
                         this->data_);
}

template <typename Real>
void CuTpMatrix<Real>::Cholesky(const CuSpMatrix<Real>& orig) {
  internal::CuOpScope op_scope("CuTpMatrix::Cholesky");
  const MatrixIndexT n = orig.NumRows();
  CuMatrix<Real> full(n, n, kUndefined);
  full.CopyFromSp(orig);
  full.Cholesky();  // throws, leaving this matrix unchanged, unless orig is positive definite
  this->Resize(n, kUndefined);
  internal::PackTriangle(full, PackSource::kLower, this->data_);
}

template <typename Real>
void CuTpMatrix<Real>::Invert() {
  internal::CuOpScope op_scope("CuTpMatrix::Invert");
  const MatrixIndexT n = this->num_rows_;
  if (n == 0) return;
  if (internal::RunOnGpu([&](CuStream) {
        CuMatrix<Real> full(n, n, kUndefined);
        full.CopyFromTp(*this);
        internal::ScopedStorage info(sizeof(int));
        internal::ZeroStorage2D(info.Data(), sizeof(int), sizeof(int), 1);
        internal::InvertLowerOnDevice(full.Data(), n, full.Stride(),
                                      static_cast<int*>(info.Data()));
        int h_info = 0;
        CopyDeviceToHost(&h_info, info.Data(), sizeof(int));  // waits for trtri
        if (h_info != 0)
          CUCTX_ERR << "CuTpMatrix::Invert: the " << n << "x" << n
                    << " triangular matrix is singular (diagonal element " << h_info - 1
                    << " is zero)";
        internal::PackTriangle(full, PackSource::kLower, this->data_);
      }))
    return;
  TpMatrix<Real> host(n, kUndefined);
  this->CopyToPacked(&host);
  host.Invert();
  this->CopyFromTp(host);
}

template class CuTpMatrix<float>;
template class CuTpMatrix<double>;

}  // namespace cuctx
