// matrix/vector-packed.cc: VectorBase products with packed triangular matrices (MulTp, AddTpVec).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/cblas-wrappers.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"

namespace cuctx {

template <typename Real>
void VectorBase<Real>::MulTp(const TpMatrix<Real>& M, MatrixTransposeType trans) {
  CUCTX_CHECK(M.NumRows() == dim_) << "VectorBase::MulTp: triangular matrix " << M.NumRows() << "x"
                                   << M.NumRows() << " does not match vector of dim " << dim_;
  if (dim_ == 0) return;
  cblas_Xtpmv(trans, dim_, M.Data(), data_, 1);
}

template <typename Real>
void VectorBase<Real>::AddTpVec(Real alpha, const TpMatrix<Real>& M, MatrixTransposeType trans,
                                const VectorBase<Real>& v, Real beta) {
  CUCTX_CHECK(M.NumRows() == dim_ && v.Dim() == dim_)
      << "VectorBase::AddTpVec: triangular matrix " << M.NumRows() << "x" << M.NumRows()
      << " times vector of dim " << v.Dim() << " into vector of dim " << dim_;
  if (dim_ == 0) return;
  if (beta == 0) {
    // tpmv works in place, so the product can be formed in *this directly.
    if (v.Data() != data_) CopyFromVec(v);
    MulTp(M, trans);
    if (alpha != 1) Scale(alpha);
    return;
  }
  Vector<Real> product(v);
  product.MulTp(M, trans);
  if (beta != 1) Scale(beta);
  AddVec(alpha, product);
}

#define CUCTX_INSTANTIATE_VECTOR_PACKED_(R)                                         \
  template void VectorBase<R>::MulTp(const TpMatrix<R>&, MatrixTransposeType);      \
  template void VectorBase<R>::AddTpVec(R, const TpMatrix<R>&, MatrixTransposeType, \
                                        const VectorBase<R>&, R);

CUCTX_INSTANTIATE_VECTOR_PACKED_(float)
CUCTX_INSTANTIATE_VECTOR_PACKED_(double)

#undef CUCTX_INSTANTIATE_VECTOR_PACKED_

}  // namespace cuctx
