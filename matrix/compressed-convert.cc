// matrix/compressed-convert.cc: dense matrices made from compressed ones.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/compressed-matrix.h"
#include "matrix/matrix.h"

namespace cuctx {

template <typename Real>
void MatrixBase<Real>::CopyFromMat(const CompressedMatrix& M) {
  M.CopyToMat(this);
}

template <typename Real>
Matrix<Real>::Matrix(const CompressedMatrix& C) : Matrix(C.NumRows(), C.NumCols(), kUndefined) {
  C.CopyToMat(this);
}

template void MatrixBase<float>::CopyFromMat(const CompressedMatrix&);
template void MatrixBase<double>::CopyFromMat(const CompressedMatrix&);
template Matrix<float>::Matrix(const CompressedMatrix&);
template Matrix<double>::Matrix(const CompressedMatrix&);

}  // namespace cuctx
