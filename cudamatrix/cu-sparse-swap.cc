// cudamatrix/cu-sparse-swap.cc: CuSparseMatrix::Swap with a host SparseMatrix.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-sparse-matrix.h"
#include "cudamatrix/internal/cu-storage.h"
#include "matrix/sparse-matrix.h"

namespace cuctx {

template <typename Real>
void CuSparseMatrix<Real>::Swap(SparseMatrix<Real>* smat) {
  CUCTX_CHECK(smat != nullptr) << "CuSparseMatrix::Swap: null host matrix";
  if (internal::OnGpu()) {
    // Upload the host matrix first, so *smat is read before it is overwritten.
    CuSparseMatrix<Real> incoming(*smat);
    Swap(&incoming);
    incoming.CopyToSmat(smat);
    return;
  }
  host_.Swap(smat);
  ShapeFromHost();
}

template void CuSparseMatrix<float>::Swap(SparseMatrix<float>*);
template void CuSparseMatrix<double>::Swap(SparseMatrix<double>*);

}  // namespace cuctx
