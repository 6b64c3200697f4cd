// cudamatrix/cu-matrix-tp.cc: CuMatrixBase::AddMatTp and AddTpMat, products with a
// lower-triangular CuTpMatrix.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "cudamatrix/internal/cu-operand.h"

namespace cuctx {
namespace {

using internal::OpCols;
using internal::OpRows;
using internal::TransName;

// The full n x n matrix of a triangular one (zeros above the diagonal). Both paths unpack: the
// GPU has no packed-triangular GEMM, and cuBLAS trmm would need the full layout anyway.
template <typename Real>
CuMatrix<Real> Unpack(const CuTpMatrix<Real>& T) {
  CuMatrix<Real> full(T.NumRows(), T.NumRows(), kUndefined);
  full.CopyFromTp(T);
  return full;
}

}  // namespace

template <typename Real>
void CuMatrixBase<Real>::AddMatTp(Real alpha, const CuMatrixBase<Real>& A,
                                  MatrixTransposeType transA, const CuTpMatrix<Real>& B,
                                  MatrixTransposeType transB, Real beta) {
  // op(B) is square, so only A's shape and this one need checking.
  CUCTX_CHECK(OpRows(A, transA) == num_rows_ && OpCols(A, transA) == B.NumRows() &&
              B.NumRows() == num_cols_)
      << "CuMatrixBase::AddMatTp: shape mismatch: A " << internal::ShapeText(A) << " ("
      << TransName(transA) << ") times triangular " << B.NumRows() << "x" << B.NumRows() << " ("
      << TransName(transB) << ") into " << internal::ShapeText(*this);
  AddMatMat(alpha, A, transA, Unpack(B), transB, beta);
}

template <typename Real>
void CuMatrixBase<Real>::AddTpMat(Real alpha, const CuTpMatrix<Real>& A, MatrixTransposeType transA,
                                  const CuMatrixBase<Real>& B, MatrixTransposeType transB,
                                  Real beta) {
  CUCTX_CHECK(A.NumRows() == num_rows_ && OpRows(B, transB) == A.NumRows() &&
              OpCols(B, transB) == num_cols_)
      << "CuMatrixBase::AddTpMat: shape mismatch: triangular " << A.NumRows() << "x" << A.NumRows()
      << " (" << TransName(transA) << ") times B " << internal::ShapeText(B) << " ("
      << TransName(transB) << ") into " << internal::ShapeText(*this);
  AddMatMat(alpha, Unpack(A), transA, B, transB, beta);
}

#define CUCTX_INSTANTIATE_TP_PRODUCTS_(R)                                                 \
  template void CuMatrixBase<R>::AddMatTp(R, const CuMatrixBase<R>&, MatrixTransposeType, \
                                          const CuTpMatrix<R>&, MatrixTransposeType, R);  \
  template void CuMatrixBase<R>::AddTpMat(R, const CuTpMatrix<R>&, MatrixTransposeType,   \
                                          const CuMatrixBase<R>&, MatrixTransposeType, R);
CUCTX_INSTANTIATE_TP_PRODUCTS_(float)
CUCTX_INSTANTIATE_TP_PRODUCTS_(double)
#undef CUCTX_INSTANTIATE_TP_PRODUCTS_

}  // namespace cuctx
