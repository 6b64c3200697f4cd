// cudamatrix/cu-vector-nnet.cc: CuVectorBase reductions (row/column sums of a matrix, Sum, Max,
// Min) and softmax.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-readback.h"
#include "cudamatrix/internal/cu-storage.h"

#include <functional>

namespace cuctx {
namespace {

using internal::VecDim;

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
  internal::CuOpScope op_scope("CuVector::AddRowSumMat");
  CUCTX_CHECK(dim_ == M.NumCols())
      << "CuVector::AddRowSumMat: vector of dim " << dim_ << " does not match matrix "
      << M.NumRows() << "x" << M.NumCols() << " (needs dim == NumCols())";
  CheckNoOverlap("CuVector::AddRowSumMat", data_, dim_, M);
  if (dim_ == 0) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchColSum(M.Dim(), M.Data(), alpha, beta, data_, s); }))
    return;
  CpuView().AddRowSumMat(alpha, HostView(M), beta);
}

template <typename Real>
void CuVectorBase<Real>::AddColSumMat(Real alpha, const CuMatrixBase<Real>& M, Real beta) {
  internal::CuOpScope op_scope("CuVector::AddColSumMat");
  CUCTX_CHECK(dim_ == M.NumRows())
      << "CuVector::AddColSumMat: vector of dim " << dim_ << " does not match matrix "
      << M.NumRows() << "x" << M.NumCols() << " (needs dim == NumRows())";
  CheckNoOverlap("CuVector::AddColSumMat", data_, dim_, M);
  if (dim_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchRowReduce(M.Dim(), M.Data(), RowReduceOp::kSum, alpha, beta, data_, s);
      }))
    return;
  CpuView().AddColSumMat(alpha, HostView(M), beta);
}

template <typename Real>
Real CuVectorBase<Real>::Sum() const {
  internal::CuOpScope op_scope("CuVector::Sum");
  internal::CheckNotCapturing("CuVectorBase::Sum");
  if (dim_ == 0) return 0;
  Real sum = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        sum = internal::MatReduceToHost(VecDim(dim_), data_, MatReduce::kSum, Real(0), s);
      }))
    return sum;
  return CpuView().Sum();
}

template <typename Real>
Real CuVectorBase<Real>::Max() const {
  internal::CuOpScope op_scope("CuVector::Max");
  internal::CheckNotCapturing("CuVectorBase::Max");
  CUCTX_CHECK(dim_ > 0) << "CuVector::Max: empty vector";
  Real result = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        result = internal::MatReduceToHost(VecDim(dim_), data_, MatReduce::kMax, Real(0), s);
      }))
    return result;
  return CpuView().Max();
}

template <typename Real>
Real CuVectorBase<Real>::Min() const {
  internal::CuOpScope op_scope("CuVector::Min");
  internal::CheckNotCapturing("CuVectorBase::Min");
  CUCTX_CHECK(dim_ > 0) << "CuVector::Min: empty vector";
  Real result = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        result = internal::MatReduceToHost(VecDim(dim_), data_, MatReduce::kMin, Real(0), s);
      }))
    return result;
  return CpuView().Min();
}

template <typename Real>
void CuVectorBase<Real>::Sum(CuValue<Real> result) const {
  internal::CuOpScope op_scope("CuVector::Sum");
  if (internal::RunOnGpu([&](CuStream s) {
        internal::MatReduceOnDevice(VecDim(dim_), data_, MatReduce::kSum, result.Data(), s);
      }))
    return;
  *result.Data() = dim_ == 0 ? Real(0) : CpuView().Sum();
}

template <typename Real>
void CuVectorBase<Real>::Max(CuValue<Real> result) const {
  internal::CuOpScope op_scope("CuVector::Max");
  CUCTX_CHECK(dim_ > 0) << "CuVector::Max: empty vector";
  if (internal::RunOnGpu([&](CuStream s) {
        internal::MatReduceOnDevice(VecDim(dim_), data_, MatReduce::kMax, result.Data(), s);
      }))
    return;
  *result.Data() = CpuView().Max();
}

template <typename Real>
void CuVectorBase<Real>::Min(CuValue<Real> result) const {
  internal::CuOpScope op_scope("CuVector::Min");
  CUCTX_CHECK(dim_ > 0) << "CuVector::Min: empty vector";
  if (internal::RunOnGpu([&](CuStream s) {
        internal::MatReduceOnDevice(VecDim(dim_), data_, MatReduce::kMin, result.Data(), s);
      }))
    return;
  *result.Data() = CpuView().Min();
}

template <typename Real>
void CuVectorBase<Real>::ApplySoftMax() {
  internal::CuOpScope op_scope("CuVector::ApplySoftMax");
  CUCTX_CHECK(dim_ > 0) << "CuVector::ApplySoftMax: empty vector";
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchSoftMaxRows(VecDim(dim_), data_, dim_, false, data_, s); }))
    return;
  CpuView().ApplySoftMax();
}

template <typename Real>
void CuVectorBase<Real>::ApplyLogSoftMax() {
  internal::CuOpScope op_scope("CuVector::ApplyLogSoftMax");
  CUCTX_CHECK(dim_ > 0) << "CuVector::ApplyLogSoftMax: empty vector";
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchSoftMaxRows(VecDim(dim_), data_, dim_, true, data_, s); }))
    return;
  CpuView().ApplyLogSoftMax();
}

#define CUCTX_INSTANTIATE_CU_VECTOR_NNET_(R)                                 \
  template void CuVectorBase<R>::AddRowSumMat(R, const CuMatrixBase<R>&, R); \
  template void CuVectorBase<R>::AddColSumMat(R, const CuMatrixBase<R>&, R); \
  template R CuVectorBase<R>::Sum() const;                                   \
  template R CuVectorBase<R>::Max() const;                                   \
  template R CuVectorBase<R>::Min() const;                                   \
  template void CuVectorBase<R>::Sum(CuValue<R>) const;                      \
  template void CuVectorBase<R>::Max(CuValue<R>) const;                      \
  template void CuVectorBase<R>::Min(CuValue<R>) const;                      \
  template void CuVectorBase<R>::ApplySoftMax();                             \
  template void CuVectorBase<R>::ApplyLogSoftMax();

CUCTX_INSTANTIATE_CU_VECTOR_NNET_(float)
CUCTX_INSTANTIATE_CU_VECTOR_NNET_(double)

#undef CUCTX_INSTANTIATE_CU_VECTOR_NNET_

}  // namespace cuctx
