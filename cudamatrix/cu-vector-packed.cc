// cudamatrix/cu-vector-packed.cc: CuVectorBase::CopyElements, the triangular products AddTpVec and
// MulTp (cuBLAS tpmv on the GPU, VectorBase::MulTp / AddTpVec on the CPU).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-sp-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"
#include "matrix/tp-matrix.h"

#include <cmath>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-blas-wrappers.h"

#include <cublas_v2.h>
#endif

namespace cuctx {
namespace {

using internal::HostView;
using internal::ShapeText;

#if CUCTX_HAVE_CUDA
// The packed row-by-row lower triangle L is cuBLAS's column-major packed upper triangle U = L^T,
// so op(L) x is U^T x for kNoTrans and U x for kTrans.
cublasOperation_t TpOp(MatrixTransposeType trans) {
  return trans == kNoTrans ? CUBLAS_OP_T : CUBLAS_OP_N;
}
cublasStatus_t Tpmv(cublasHandle_t h, MatrixTransposeType trans, int n, const float* ap, float* x) {
  return cublasStpmv(h, CUBLAS_FILL_MODE_UPPER, TpOp(trans), CUBLAS_DIAG_NON_UNIT, n, ap, x, 1);
}
cublasStatus_t Tpmv(cublasHandle_t h, MatrixTransposeType trans, int n, const double* ap,
                    double* x) {
  return cublasDtpmv(h, CUBLAS_FILL_MODE_UPPER, TpOp(trans), CUBLAS_DIAG_NON_UNIT, n, ap, x, 1);
}
#endif

// The host copy of M that the CPU fallbacks hand to matrix/ (CPU mode only).
template <typename Real>
TpMatrix<Real> HostTp(const CuTpMatrix<Real>& M) {
  TpMatrix<Real> host(M.NumRows(), kUndefined);
  M.CopyToPacked(&host);
  return host;
}

}  // namespace

template <typename Real>
void CuVectorBase<Real>::CopyElements(const CuMatrixBase<Real>& mat, MatrixTransposeType trans,
                                      const CuArrayBase<int32>& elements) {
  internal::CuOpScope op_scope("CuVector::CopyElements");
  const char* op = "CuVector::CopyElements";
  const MatrixIndexT want = trans == kNoTrans ? mat.NumRows() : mat.NumCols();
  CUCTX_CHECK(dim_ == want) << op << ": vector of dim " << dim_ << " does not match mat "
                            << ShapeText(mat)
                            << (trans == kNoTrans ? " (needs dim == NumRows())"
                                                  : " (kTrans: dim == NumCols())");
  CUCTX_CHECK(elements.Dim() == dim_)
      << op << ": elements has " << elements.Dim() << " entries, the vector " << dim_;
  CUCTX_CHECK(!internal::Overlap(*this, mat)) << op << ": mat overlaps the vector";
  if (dim_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchCopyElements(mat.Dim(), mat.Data(), trans == kTrans, elements.Data(), dim_, data_, s);
      }))
    return;
  const MatrixIndexT bound = trans == kNoTrans ? mat.NumCols() : mat.NumRows();
  const int32* idx = elements.Data();
  for (MatrixIndexT i = 0; i < dim_; ++i)
    CUCTX_CHECK(idx[i] >= 0 && idx[i] < bound)
        << op << ": elements[" << i << "] = " << idx[i] << " is outside mat " << ShapeText(mat)
        << (trans == kNoTrans ? " (a column index)" : " (a row index)");
  const SubMatrix<Real> m = HostView(mat);
  SubVector<Real> out = CpuView();
  for (MatrixIndexT i = 0; i < dim_; ++i) out(i) = trans == kNoTrans ? m(i, idx[i]) : m(idx[i], i);
}

template <typename Real>
void CuVectorBase<Real>::MulTp(const CuTpMatrix<Real>& M, MatrixTransposeType trans) {
  internal::CuOpScope op_scope("CuVector::MulTp");
  CUCTX_CHECK(M.NumRows() == dim_) << "CuVector::MulTp: triangular matrix " << M.NumRows() << "x"
                                   << M.NumRows() << " does not match vector of dim " << dim_;
  if (dim_ == 0) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    CUCTX_CUBLAS_CHECK(Tpmv(internal::ThreadCublasHandle(), trans, dim_, M.Data(), data_));
    return;
  }
#endif
  CpuView().MulTp(HostTp(M), trans);
}

template <typename Real>
void CuVectorBase<Real>::AddTpVec(Real alpha, const CuTpMatrix<Real>& M, MatrixTransposeType trans,
                                  const CuVectorBase<Real>& v, Real beta) {
  internal::CuOpScope op_scope("CuVector::AddTpVec");
  CUCTX_CHECK(M.NumRows() == dim_ && v.Dim() == dim_)
      << "CuVector::AddTpVec: triangular matrix " << M.NumRows() << "x" << M.NumRows()
      << " times vector of dim " << v.Dim() << " into vector of dim " << dim_;
  const bool in_place = v.Data() == data_;
  CUCTX_CHECK(in_place || !internal::Overlap(v, *this))
      << "CuVector::AddTpVec: v overlaps the vector without being it";
  if (dim_ == 0) return;
  if (internal::OnGpu()) {
    // tpmv works in place; with beta == 0 the product is formed in this vector directly.
    if (beta == 0) {
      if (!in_place) CopyFromVec(v);
      MulTp(M, trans);
      if (alpha != 1) Scale(alpha);
      return;
    }
    CuVector<Real> product(v);
    product.MulTp(M, trans);
    AddVec(alpha, product, beta);
    return;
  }
  CpuView().AddTpVec(alpha, HostTp(M), trans, HostView(v), beta);
}

#define CUCTX_INSTANTIATE_CU_VECTOR_PACKED_(R)                                             \
  template void CuVectorBase<R>::CopyElements(const CuMatrixBase<R>&, MatrixTransposeType, \
                                              const CuArrayBase<int32>&);                  \
  template void CuVectorBase<R>::MulTp(const CuTpMatrix<R>&, MatrixTransposeType);         \
  template void CuVectorBase<R>::AddTpVec(R, const CuTpMatrix<R>&, MatrixTransposeType,    \
                                          const CuVectorBase<R>&, R);

CUCTX_INSTANTIATE_CU_VECTOR_PACKED_(float)
CUCTX_INSTANTIATE_CU_VECTOR_PACKED_(double)

#undef CUCTX_INSTANTIATE_CU_VECTOR_PACKED_

}  // namespace cuctx
