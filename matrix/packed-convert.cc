// matrix/packed-convert.cc: dense matrices made from packed symmetric and triangular ones.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"

namespace cuctx {

template <typename Real>
template <typename OtherReal>
void MatrixBase<Real>::CopyFromSp(const SpMatrix<OtherReal>& M) {
  M.CopyToMat(this);
}

template <typename Real>
template <typename OtherReal>
void MatrixBase<Real>::CopyFromTp(const TpMatrix<OtherReal>& M, MatrixTransposeType trans) {
  M.CopyToMat(this, trans);
}

template <typename Real>
Matrix<Real>::Matrix(const SpMatrix<Real>& M) : Matrix(M.NumRows(), M.NumRows(), kUndefined) {
  M.CopyToMat(this);
}

template <typename Real>
Matrix<Real>::Matrix(const TpMatrix<Real>& M, MatrixTransposeType trans)
    : Matrix(M.NumRows(), M.NumRows(), kUndefined) {
  M.CopyToMat(this, trans);
}

#define CUCTX_INSTANTIATE_PACKED_CONVERT_(Real, OtherReal)                \
  template void MatrixBase<Real>::CopyFromSp(const SpMatrix<OtherReal>&); \
  template void MatrixBase<Real>::CopyFromTp(const TpMatrix<OtherReal>&, MatrixTransposeType)
CUCTX_INSTANTIATE_PACKED_CONVERT_(float, float);
CUCTX_INSTANTIATE_PACKED_CONVERT_(float, double);
CUCTX_INSTANTIATE_PACKED_CONVERT_(double, float);
CUCTX_INSTANTIATE_PACKED_CONVERT_(double, double);
#undef CUCTX_INSTANTIATE_PACKED_CONVERT_
template Matrix<float>::Matrix(const SpMatrix<float>&);
template Matrix<double>::Matrix(const SpMatrix<double>&);
template Matrix<float>::Matrix(const TpMatrix<float>&, MatrixTransposeType);
template Matrix<double>::Matrix(const TpMatrix<double>&, MatrixTransposeType);

}  // namespace cuctx
