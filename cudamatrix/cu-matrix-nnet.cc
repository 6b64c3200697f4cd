// cudamatrix/cu-matrix-nnet.cc: CuMatrixBase neural-net family (activations, their derivatives,
// row softmax, row arg-max).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"

#include <functional>

namespace cuctx {
namespace {

using internal::HostView;

}  // namespace

template <typename Real>
void CuMatrixBase<Real>::Sigmoid(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::Sigmoid");
  internal::CheckSameShapeOrAlias("CuMatrix::Sigmoid", *this, src, "src");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchNnetMap(Dim(), NnetMap::kSigmoid, src.Data(), src.Stride(), data_, s);
      }))
    return;
  CpuView().Sigmoid(src.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::Tanh(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::Tanh");
  internal::CheckSameShapeOrAlias("CuMatrix::Tanh", *this, src, "src");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchNnetMap(Dim(), NnetMap::kTanh, src.Data(), src.Stride(), data_, s);
      }))
    return;
  CpuView().Tanh(src.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::SoftHinge(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::SoftHinge");
  internal::CheckSameShapeOrAlias("CuMatrix::SoftHinge", *this, src, "src");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchNnetMap(Dim(), NnetMap::kSoftHinge, src.Data(), src.Stride(), data_, s);
      }))
    return;
  CpuView().SoftHinge(src.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::DiffSigmoid(const CuMatrixBase<Real>& value,
                                     const CuMatrixBase<Real>& diff) {
  internal::CuOpScope op_scope("CuMatrix::DiffSigmoid");
  internal::CheckSameShapeOrAlias("CuMatrix::DiffSigmoid", *this, value, "value");
  internal::CheckSameShapeOrAlias("CuMatrix::DiffSigmoid", *this, diff, "diff");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchDiffSigmoidTanh(Dim(), value.Data(), value.Stride(), diff.Data(), diff.Stride(),
                              false, data_, s);
      }))
    return;
  CpuView().DiffSigmoid(value.CpuView(), diff.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::DiffTanh(const CuMatrixBase<Real>& value, const CuMatrixBase<Real>& diff) {
  internal::CuOpScope op_scope("CuMatrix::DiffTanh");
  internal::CheckSameShapeOrAlias("CuMatrix::DiffTanh", *this, value, "value");
  internal::CheckSameShapeOrAlias("CuMatrix::DiffTanh", *this, diff, "diff");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchDiffSigmoidTanh(Dim(), value.Data(), value.Stride(), diff.Data(), diff.Stride(), true,
                              data_, s);
      }))
    return;
  CpuView().DiffTanh(value.CpuView(), diff.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::ApplyExp() {
  internal::CuOpScope op_scope("CuMatrix::ApplyExp");
  if (Empty()) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchNnetMap(Dim(), NnetMap::kExp, data_, stride_, data_, s); }))
    return;
  CpuView().ApplyExp();
}

template <typename Real>
void CuMatrixBase<Real>::ApplyLog() {
  internal::CuOpScope op_scope("CuMatrix::ApplyLog");
  if (Empty()) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchNnetMap(Dim(), NnetMap::kLog, data_, stride_, data_, s); }))
    return;
  CpuView().ApplyLog();
}

template <typename Real>
void CuMatrixBase<Real>::SoftMaxPerRow(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::SoftMaxPerRow");
  internal::CheckSameShapeOrAlias("CuMatrix::SoftMaxPerRow", *this, src, "src");
  if (Empty()) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchSoftMaxRows(Dim(), src.Data(), src.Stride(), false, data_, s); }))
    return;
  CpuView().SoftMaxPerRow(src.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::LogSoftMaxPerRow(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::LogSoftMaxPerRow");
  internal::CheckSameShapeOrAlias("CuMatrix::LogSoftMaxPerRow", *this, src, "src");
  if (Empty()) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchSoftMaxRows(Dim(), src.Data(), src.Stride(), true, data_, s); }))
    return;
  CpuView().LogSoftMaxPerRow(src.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::ApplySoftMaxPerRow() {
  SoftMaxPerRow(*this);
}

template <typename Real>
void CuMatrixBase<Real>::ApplyLogSoftMaxPerRow() {
  LogSoftMaxPerRow(*this);
}

template <typename Real>
void CuMatrixBase<Real>::FindRowMaxId(CuArray<int32>* id) const {
  internal::CuOpScope op_scope("CuMatrix::FindRowMaxId");
  CUCTX_CHECK(id != nullptr) << "CuMatrix::FindRowMaxId: null output";
  CUCTX_CHECK(num_rows_ == 0 || num_cols_ > 0)
      << "CuMatrix::FindRowMaxId: matrix " << num_rows_ << "x" << num_cols_ << " has no columns";
  id->Resize(num_rows_, kUndefined);
  if (num_rows_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchFindRowMaxId(Dim(), data_, id->Data(), s); }))
    return;
  CpuView().FindRowMaxId(id->Data());
}

#define CUCTX_INSTANTIATE_CU_NNET_(R)                                                         \
  template void CuMatrixBase<R>::Sigmoid(const CuMatrixBase<R>&);                             \
  template void CuMatrixBase<R>::Tanh(const CuMatrixBase<R>&);                                \
  template void CuMatrixBase<R>::SoftHinge(const CuMatrixBase<R>&);                           \
  template void CuMatrixBase<R>::DiffSigmoid(const CuMatrixBase<R>&, const CuMatrixBase<R>&); \
  template void CuMatrixBase<R>::DiffTanh(const CuMatrixBase<R>&, const CuMatrixBase<R>&);    \
  template void CuMatrixBase<R>::ApplyExp();                                                  \
  template void CuMatrixBase<R>::ApplyLog();                                                  \
  template void CuMatrixBase<R>::SoftMaxPerRow(const CuMatrixBase<R>&);                       \
  template void CuMatrixBase<R>::LogSoftMaxPerRow(const CuMatrixBase<R>&);                    \
  template void CuMatrixBase<R>::ApplySoftMaxPerRow();                                        \
  template void CuMatrixBase<R>::ApplyLogSoftMaxPerRow();                                     \
  template void CuMatrixBase<R>::FindRowMaxId(CuArray<int32>*) const;

CUCTX_INSTANTIATE_CU_NNET_(float)
CUCTX_INSTANTIATE_CU_NNET_(double)

#undef CUCTX_INSTANTIATE_CU_NNET_

}  // namespace cuctx
