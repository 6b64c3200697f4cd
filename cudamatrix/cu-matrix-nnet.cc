// cudamatrix/cu-matrix-nnet.cc: CuMatrixBase neural-net family (activations, their derivatives,
// row softmax, row arg-max).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-storage.h"

#include <functional>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-kernels.h"
#endif

namespace cuctx {
namespace {

#if CUCTX_HAVE_CUDA
#endif

template <typename Real>
SubMatrix<Real> HostView(const CuMatrixBase<Real>& m) {
  return SubMatrix<Real>(const_cast<Real*>(m.Data()), m.NumRows(), m.NumCols(), m.Stride());
}

// The same shape, and `in` is either exactly `out` (same data and stride) or shares no element
// span with it; in-place kernels are only safe in those two cases.
template <typename Real>
void CheckOperand(const char* op, const CuMatrixBase<Real>& out, const CuMatrixBase<Real>& in,
                  const char* in_name) {
  CUCTX_CHECK(in.NumRows() == out.NumRows() && in.NumCols() == out.NumCols())
      << op << ": " << in_name << " " << in.NumRows() << "x" << in.NumCols()
      << " does not match *this " << out.NumRows() << "x" << out.NumCols();
  if (out.NumRows() == 0 || out.NumCols() == 0) return;
  if (in.Data() == out.Data() && in.Stride() == out.Stride()) return;
  const Real* a0 = out.Data();
  const Real* a1 = a0 + static_cast<size_t>(out.NumRows() - 1) * out.Stride() + out.NumCols();
  const Real* b0 = in.Data();
  const Real* b1 = b0 + static_cast<size_t>(in.NumRows() - 1) * in.Stride() + in.NumCols();
  std::less<const Real*> lt;
  CUCTX_CHECK(!(lt(a0, b1) && lt(b0, a1))) << op << ": " << in_name << " partially overlaps *this ("
                                           << out.NumRows() << "x" << out.NumCols() << ")";
}

}  // namespace

template <typename Real>
void CuMatrixBase<Real>::Sigmoid(const CuMatrixBase<Real>& src) {
  CheckOperand("CuMatrix::Sigmoid", *this, src, "src");
  if (Empty()) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchNnetMap(Dim(), NnetMap::kSigmoid, src.Data(), src.Stride(), data_,
                  internal::ThreadStream());
    return;
  }
#endif
  CpuView().Sigmoid(src.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::Tanh(const CuMatrixBase<Real>& src) {
  CheckOperand("CuMatrix::Tanh", *this, src, "src");
  if (Empty()) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchNnetMap(Dim(), NnetMap::kTanh, src.Data(), src.Stride(), data_, internal::ThreadStream());
    return;
  }
#endif
  CpuView().Tanh(src.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::SoftHinge(const CuMatrixBase<Real>& src) {
  CheckOperand("CuMatrix::SoftHinge", *this, src, "src");
  if (Empty()) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchNnetMap(Dim(), NnetMap::kSoftHinge, src.Data(), src.Stride(), data_,
                  internal::ThreadStream());
    return;
  }
#endif
  CpuView().SoftHinge(src.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::DiffSigmoid(const CuMatrixBase<Real>& value,
                                     const CuMatrixBase<Real>& diff) {
  CheckOperand("CuMatrix::DiffSigmoid", *this, value, "value");
  CheckOperand("CuMatrix::DiffSigmoid", *this, diff, "diff");
  if (Empty()) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchDiffSigmoidTanh(Dim(), value.Data(), value.Stride(), diff.Data(), diff.Stride(), false,
                          data_, internal::ThreadStream());
    return;
  }
#endif
  CpuView().DiffSigmoid(value.CpuView(), diff.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::DiffTanh(const CuMatrixBase<Real>& value, const CuMatrixBase<Real>& diff) {
  CheckOperand("CuMatrix::DiffTanh", *this, value, "value");
  CheckOperand("CuMatrix::DiffTanh", *this, diff, "diff");
  if (Empty()) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchDiffSigmoidTanh(Dim(), value.Data(), value.Stride(), diff.Data(), diff.Stride(), true,
                          data_, internal::ThreadStream());
    return;
  }
#endif
  CpuView().DiffTanh(value.CpuView(), diff.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::ApplyExp() {
  if (Empty()) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchNnetMap(Dim(), NnetMap::kExp, data_, stride_, data_, internal::ThreadStream());
    return;
  }
#endif
  CpuView().ApplyExp();
}

template <typename Real>
void CuMatrixBase<Real>::ApplyLog() {
  if (Empty()) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchNnetMap(Dim(), NnetMap::kLog, data_, stride_, data_, internal::ThreadStream());
    return;
  }
#endif
  CpuView().ApplyLog();
}

template <typename Real>
void CuMatrixBase<Real>::SoftMaxPerRow(const CuMatrixBase<Real>& src) {
  CheckOperand("CuMatrix::SoftMaxPerRow", *this, src, "src");
  if (Empty()) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchSoftMaxRows(Dim(), src.Data(), src.Stride(), false, data_, internal::ThreadStream());
    return;
  }
#endif
  CpuView().SoftMaxPerRow(src.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::LogSoftMaxPerRow(const CuMatrixBase<Real>& src) {
  CheckOperand("CuMatrix::LogSoftMaxPerRow", *this, src, "src");
  if (Empty()) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchSoftMaxRows(Dim(), src.Data(), src.Stride(), true, data_, internal::ThreadStream());
    return;
  }
#endif
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
  CUCTX_CHECK(id != nullptr) << "CuMatrix::FindRowMaxId: null output";
  CUCTX_CHECK(num_rows_ == 0 || num_cols_ > 0)
      << "CuMatrix::FindRowMaxId: matrix " << num_rows_ << "x" << num_cols_ << " has no columns";
  id->Resize(num_rows_, kUndefined);
  if (num_rows_ == 0) return;
#if CUCTX_HAVE_CUDA
  if (CuDevice::Instantiate().Enabled()) {
    LaunchFindRowMaxId(Dim(), data_, id->Data(), internal::ThreadStream());
    return;
  }
#endif
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
