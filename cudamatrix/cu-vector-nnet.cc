// cudamatrix/cu-vector-nnet.cc: CuVectorBase reductions (row/column sums of a matrix, Sum, Max,
// Min) and softmax.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-operand.h"

#include <functional>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-storage.h"
#endif

namespace cuctx {
namespace {

#if CUCTX_HAVE_CUDA
using internal::VecDim;

template <typename Real>
Real ReadBack(internal::ScopedStorage* s) {
  Real result = 0;
  CopyDeviceToHost(&result, s->Data(), sizeof(Real));  // waits for the stream
  return result;
}
#endif

using internal::HostView;

// Throws if the vector's elements share memory with the matrix's span (the kernels read M while
// writing the vector, as the CPU version forbids).
template <typename Real>
void CheckNoOverlap(const char* op, const Real* v, MatrixIndexT dim, const CuMatrixBase<Real>& M) {
  if (dim == 0 || M.NumRows() == 0 || M.NumCols() == 0) return;
  const Real* m0 = M.Data();
  const Real* m1 = m0 + static_cast<size_t>(M.NumRows() - 1) * M.Stride() + M.NumCols();
  std::less<const Real*> lt;
  CUCTX_CHECK(!(lt(v, m1) && lt(m0, v + dim)))
      << op << ": the matrix " << M.NumRows() << "x" << M.NumCols() << " overlaps the vector";
}

}  // namespace

template <typename Real>
void CuVectorBase<Real>::AddRowSumMat(Real alpha, const CuMatrixBase<Real>& M, Real beta) {
  CUCTX_CHECK(dim_ == M.NumCols())
      << "CuVector::AddRowSumMat: vector of dim " << dim_ << " does not match matrix "
      << M.NumRows() << "x" << M.NumCols() << " (needs dim == NumCols())";
  CheckNoOverlap("CuVector::AddRowSumMat", data_, dim_, M);
  if (dim_ == 0) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchColSum(M.Dim(), M.Data(), alpha, beta, data_, internal::ThreadStream());
    return;
  }
#endif
  CpuView().AddRowSumMat(alpha, HostView(M), beta);
}

template <typename Real>
void CuVectorBase<Real>::AddColSumMat(Real alpha, const CuMatrixBase<Real>& M, Real beta) {
  CUCTX_CHECK(dim_ == M.NumRows())
      << "CuVector::AddColSumMat: vector of dim " << dim_ << " does not match matrix "
      << M.NumRows() << "x" << M.NumCols() << " (needs dim == NumRows())";
  CheckNoOverlap("CuVector::AddColSumMat", data_, dim_, M);
  if (dim_ == 0) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchRowReduce(M.Dim(), M.Data(), RowReduceOp::kSum, alpha, beta, data_,
                    internal::ThreadStream());
    return;
  }
#endif
  CpuView().AddColSumMat(alpha, HostView(M), beta);
}

template <typename Real>
Real CuVectorBase<Real>::Sum() const {
  if (dim_ == 0) return 0;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    // The multi-block reduction of cu-kernels-reduce.cu; its result is at the workspace start.
    internal::ScopedStorage work(ReduceWorkspaceBytes());
    LaunchSum(VecDim(dim_), data_, false, work.Data(), internal::ThreadStream());
    return ReadBack<Real>(&work);
  }
#endif
  return CpuView().Sum();
}

template <typename Real>
Real CuVectorBase<Real>::Max() const {
  CUCTX_CHECK(dim_ > 0) << "CuVector::Max: empty vector";
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    internal::ScopedStorage out(sizeof(Real));
    // The reduction computes beta * out + alpha * max, so out must hold a finite value.
    LaunchFill(out.Data(), 1, sizeof(Real), 0, internal::ThreadStream());
    LaunchRowReduce(VecDim(dim_), data_, RowReduceOp::kMax, Real(1), Real(0),
                    static_cast<Real*>(out.Data()), internal::ThreadStream());
    return ReadBack<Real>(&out);
  }
#endif
  return CpuView().Max();
}

template <typename Real>
Real CuVectorBase<Real>::Min() const {
  CUCTX_CHECK(dim_ > 0) << "CuVector::Min: empty vector";
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    internal::ScopedStorage out(sizeof(Real));
    // The reduction computes beta * out + alpha * max, so out must hold a finite value.
    LaunchFill(out.Data(), 1, sizeof(Real), 0, internal::ThreadStream());
    LaunchRowReduce(VecDim(dim_), data_, RowReduceOp::kMin, Real(1), Real(0),
                    static_cast<Real*>(out.Data()), internal::ThreadStream());
    return ReadBack<Real>(&out);
  }
#endif
  return CpuView().Min();
}

template <typename Real>
void CuVectorBase<Real>::ApplySoftMax() {
  CUCTX_CHECK(dim_ > 0) << "CuVector::ApplySoftMax: empty vector";
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchSoftMaxRows(VecDim(dim_), data_, dim_, false, data_, internal::ThreadStream());
    return;
  }
#endif
  CpuView().ApplySoftMax();
}

template <typename Real>
void CuVectorBase<Real>::ApplyLogSoftMax() {
  CUCTX_CHECK(dim_ > 0) << "CuVector::ApplyLogSoftMax: empty vector";
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchSoftMaxRows(VecDim(dim_), data_, dim_, true, data_, internal::ThreadStream());
    return;
  }
#endif
  CpuView().ApplyLogSoftMax();
}

#define CUCTX_INSTANTIATE_CU_VECTOR_NNET_(R)                                 \
  template void CuVectorBase<R>::AddRowSumMat(R, const CuMatrixBase<R>&, R); \
  template void CuVectorBase<R>::AddColSumMat(R, const CuMatrixBase<R>&, R); \
  template R CuVectorBase<R>::Sum() const;                                   \
  template R CuVectorBase<R>::Max() const;                                   \
  template R CuVectorBase<R>::Min() const;                                   \
  template void CuVectorBase<R>::ApplySoftMax();                             \
  template void CuVectorBase<R>::ApplyLogSoftMax();

CUCTX_INSTANTIATE_CU_VECTOR_NNET_(float)
CUCTX_INSTANTIATE_CU_VECTOR_NNET_(double)

#undef CUCTX_INSTANTIATE_CU_VECTOR_NNET_

}  // namespace cuctx
