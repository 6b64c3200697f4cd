// cudamatrix/cu-vector-blas.cc: the CuVectorBase BLAS family (cuBLAS or a kernel on the GPU,
// matrix/ on the CPU) and VecVec.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-readback.h"
#include "cudamatrix/internal/cu-storage.h"

#include <functional>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-blas-wrappers.h"
#endif

namespace cuctx {
namespace {

using internal::HostView;
using internal::Overlap;

}  // namespace

template <typename Real>
void CuVectorBase<Real>::AddMatVec(Real alpha, const CuMatrixBase<Real>& M,
                                   MatrixTransposeType trans, const CuVectorBase<Real>& v,
                                   Real beta) {
  internal::CuOpScope op_scope("CuVector::AddMatVec");
  const MatrixIndexT out_dim = trans == kNoTrans ? M.NumRows() : M.NumCols();
  const MatrixIndexT in_dim = trans == kNoTrans ? M.NumCols() : M.NumRows();
  CUCTX_CHECK(out_dim == dim_ && in_dim == v.Dim())
      << "CuVector::AddMatVec: shape mismatch: M is " << M.NumRows() << "x" << M.NumCols() << " ("
      << (trans == kTrans ? "kTrans" : "kNoTrans") << "), v has dimension " << v.Dim()
      << ", this has dimension " << dim_;
  CUCTX_CHECK(!Overlap(*this, v) && !Overlap(*this, M))
      << "CuVector::AddMatVec: " << (Overlap(*this, v) ? "v" : "M")
      << " overlaps the output vector (dimension " << dim_ << ")";
  if (dim_ == 0) return;
  if (in_dim == 0) {  // gemv would return without the beta scaling
    Scale(beta);
    return;
  }
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    // The row-major M is the column-major M^T (NumCols() x NumRows(), leading dimension Stride()),
    // so M v is CUBLAS_OP_T on it and M^T v is CUBLAS_OP_N.
    CUCTX_CUBLAS_CHECK(internal::CublasGemv(
        internal::ThreadCublasHandle(), trans == kNoTrans ? CUBLAS_OP_T : CUBLAS_OP_N, M.NumCols(),
        M.NumRows(), alpha, M.Data(), M.Stride(), v.Data(), 1, beta, data_, 1));
    return;
  }
#endif
  CpuView().AddMatVec(alpha, HostView(M), trans, HostView(v), beta);
}

template <typename Real>
void CuVectorBase<Real>::AddVecVec(Real alpha, const CuVectorBase<Real>& v,
                                   const CuVectorBase<Real>& r, Real beta) {
  internal::CuOpScope op_scope("CuVector::AddVecVec");
  CUCTX_CHECK(v.Dim() == dim_ && r.Dim() == dim_)
      << "CuVector::AddVecVec: dimension mismatch: v " << v.Dim() << ", r " << r.Dim() << ", this "
      << dim_;
  CUCTX_CHECK((v.Data() == data_ || !Overlap(*this, v)) &&
              (r.Data() == data_ || !Overlap(*this, r)))
      << "CuVector::AddVecVec: an input overlaps this vector (dimension " << dim_
      << ") without being it";
  if (dim_ == 0) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchAddVecVec(dim_, alpha, v.Data(), r.Data(), beta, data_, s); }))
    return;
  CpuView().AddVecVec(alpha, HostView(v), HostView(r), beta);
}

template <typename Real>
Real CuVectorBase<Real>::VecVecImpl(const CuVectorBase<Real>& a, const CuVectorBase<Real>& b) {
  internal::CuOpScope op_scope("VecVec");
  internal::CheckNotCapturing("VecVec");
  CUCTX_CHECK(a.Dim() == b.Dim()) << "VecVec: dimension mismatch: " << a.Dim() << " vs " << b.Dim();
  if (a.Dim() == 0) return 0;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    // One fused pass into the thread's read-back slot (cuBLAS's dot with a host result costs a
    // second kernel and a copy).
    return internal::ReduceToHost<Real>([&](void* work, HostPost post) {
      LaunchDot(internal::VecDim(a.Dim()), a.Data(), b.Data(), a.Dim(), false, work, nullptr, post,
                internal::ThreadStream());
    });
  }
#endif
  return VecVec(HostView(a), HostView(b));
}

#define CUCTX_INSTANTIATE_VECTOR_BLAS_(R)                                                         \
  template void CuVectorBase<R>::AddMatVec(R, const CuMatrixBase<R>&, MatrixTransposeType,        \
                                           const CuVectorBase<R>&, R);                            \
  template void CuVectorBase<R>::AddVecVec(R, const CuVectorBase<R>&, const CuVectorBase<R>&, R); \
  template R CuVectorBase<R>::VecVecImpl(const CuVectorBase<R>&, const CuVectorBase<R>&);
CUCTX_INSTANTIATE_VECTOR_BLAS_(float)
CUCTX_INSTANTIATE_VECTOR_BLAS_(double)
#undef CUCTX_INSTANTIATE_VECTOR_BLAS_

}  // namespace cuctx
