// cudamatrix/cu-vector-ops.cc: CuVectorBase copies from matrices, diagonals of matrix products,
// element-wise maps and norms (the vector family).
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

#include <algorithm>
#include <cstddef>

namespace cuctx {
namespace {

using internal::HostView;
using internal::ShapeText;

// The double a reduction launcher left at the start of its workspace; waits for the stream.
inline double ReadBackDouble(internal::ScopedStorage* work) {
  double result = 0;
  CopyDeviceToHost(&result, work->Data(), sizeof(double));
  return result;
}

// Floor (ceiling false) or ceiling of data[0, dim) on the device; the changed elements are
// counted (one reduction and a read-back) only when count is wanted.
template <typename Real>
inline void DeviceClamp(Real bound, bool ceiling, Real* data, MatrixIndexT dim, MatrixIndexT* count,
                        CuStream stream) {
  if (count == nullptr) {
    LaunchVectorMap(dim, ceiling ? VectorMap::kCeiling : VectorMap::kFloor, bound, Real(0), data,
                    stream);
    return;
  }
  const double changed = internal::ReduceToHost<double>([&](void* work, HostPost post) {
    LaunchClampCount(dim, bound, ceiling, data, work, nullptr, post, stream);
  });
  *count = static_cast<MatrixIndexT>(changed);
}

// this = beta * this + alpha * diag(op(M) op(N)) on the device, with the scratch the launcher
// asks for (none unless a long inner dimension is split across blocks).
template <typename Real>
inline void DeviceDiagProduct(Real alpha, const CuMatrixBase<Real>& M, bool m_trans,
                              const CuMatrixBase<Real>& N, bool n_trans, Real beta, Real* out,
                              MatrixIndexT dim, CuStream stream) {
  const MatrixIndexT inner = m_trans ? M.NumRows() : M.NumCols();
  internal::ScopedStorage work(DiagMatMatWorkspaceBytes(dim, inner, m_trans, n_trans));
  LaunchAddDiagMatMat(dim, inner, alpha, M.Data(), M.Stride(), m_trans, N.Data(), N.Stride(),
                      n_trans, beta, out, work.Data(), stream);
}

// The device side of MapInPlace for either family of in-place maps.
template <typename Real>
inline void LaunchInPlace(VectorMap map, Real a, Real b, Real* data, MatrixIndexT dim,
                          CuStream stream) {
  LaunchVectorMap(dim, map, a, b, data, stream);
}
template <typename Real>
inline void LaunchInPlace(NnetMap map, Real, Real, Real* data, MatrixIndexT dim, CuStream stream) {
  LaunchNnetMap(internal::VecDim(dim), map, data, dim, data, stream);
}

// An element-wise map of data[0, dim) in place: the kernel for `map` (with parameters a, b) in
// GPU mode, else host_op on a host view.
template <typename Real, typename Map, typename HostOp>
void MapInPlace(Map map, Real a, Real b, Real* data, MatrixIndexT dim, HostOp host_op) {
  if (dim == 0) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchInPlace(map, a, b, data, dim, s); })) return;
  SubVector<Real> view(data, dim);
  host_op(&view);
}

// Floor (ceiling false) or ceiling in place, with the optional count of changed elements.
template <typename Real>
void Clamp(Real bound, bool ceiling, Real* data, MatrixIndexT dim, MatrixIndexT* count) {
  if (count != nullptr) *count = 0;
  if (dim == 0) return;
  if (count != nullptr)
    internal::CheckNotCapturing(ceiling ? "CuVectorBase::ApplyCeiling with a count"
                                        : "CuVectorBase::ApplyFloor with a count");
  if (internal::RunOnGpu([&](CuStream s) { DeviceClamp(bound, ceiling, data, dim, count, s); }))
    return;
  SubVector<Real> view(data, dim);
  if (ceiling)
    view.ApplyCeiling(bound, count);
  else
    view.ApplyFloor(bound, count);
}

// Throws if the matrix and the vector share memory (the kernels read one while writing the
// other).
template <typename Real, typename MatReal>
void CheckMatrixApart(const char* op, const CuVectorBase<Real>& v, const CuMatrixBase<MatReal>& M,
                      const char* name) {
  CUCTX_CHECK(!internal::Overlap(v, M)) << op << ": the matrix " << name << " (" << ShapeText(M)
                                        << ") overlaps the vector of dim " << v.Dim();
}

}  // namespace

template <typename Real>
void CuVectorBase<Real>::CopyRowsFromMat(const CuMatrixBase<Real>& M) {
  internal::CuOpScope op_scope("CuVector::CopyRowsFromMat");
  CUCTX_CHECK(static_cast<int64>(dim_) == static_cast<int64>(M.NumRows()) * M.NumCols())
      << "CuVector::CopyRowsFromMat: vector of dim " << dim_ << " does not match matrix "
      << ShapeText(M) << " (needs dim == rows * cols)";
  CheckMatrixApart("CuVector::CopyRowsFromMat", *this, M, "M");
  if (dim_ == 0) return;
  if (internal::RunOnGpu([&](CuStream) {
        const size_t row_bytes = static_cast<size_t>(M.NumCols()) * sizeof(Real);
        internal::CopyStorage2D(data_, row_bytes, M.Data(), M.Stride() * sizeof(Real), row_bytes,
                                M.NumRows());
      }))
    return;
  CpuView().CopyRowsFromMat(HostView(M));
}

template <typename Real>
void CuVectorBase<Real>::CopyRowsFromMat(const MatrixBase<Real>& M) {
  internal::CuOpScope op_scope("CuVector::CopyRowsFromMat(from host)");
  CUCTX_CHECK(static_cast<int64>(dim_) == static_cast<int64>(M.NumRows()) * M.NumCols())
      << "CuVector::CopyRowsFromMat: vector of dim " << dim_ << " does not match matrix "
      << ShapeText(M.NumRows(), M.NumCols()) << " (needs dim == rows * cols)";
  if (dim_ == 0) return;
  // Without a GPU this is a plain pitched memcpy, as the CPU version would do.
  const size_t row_bytes = static_cast<size_t>(M.NumCols()) * sizeof(Real);
  CopyHostToDevice2D(data_, row_bytes, M.Data(), M.Stride() * sizeof(Real), row_bytes, M.NumRows());
}

template <typename Real>
template <typename OtherReal>
void CuVectorBase<Real>::CopyColFromMat(const CuMatrixBase<OtherReal>& M, MatrixIndexT col) {
  internal::CuOpScope op_scope("CuVector::CopyColFromMat");
  CUCTX_CHECK(col >= 0 && col < M.NumCols())
      << "CuVector::CopyColFromMat: column " << col << " out of range for matrix " << ShapeText(M);
  CUCTX_CHECK(dim_ == M.NumRows())
      << "CuVector::CopyColFromMat: vector of dim " << dim_ << " does not match matrix "
      << ShapeText(M) << " (needs dim == NumRows())";
  CheckMatrixApart("CuVector::CopyColFromMat", *this, M, "M");
  if (dim_ == 0) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchCopyStrided(dim_, M.Data() + col, M.Stride(), data_, s); }))
    return;
  CpuView().CopyColFromMat(HostView(M), col);
}

template <typename Real>
void CuVectorBase<Real>::CopyDiagFromMat(const CuMatrixBase<Real>& M) {
  internal::CuOpScope op_scope("CuVector::CopyDiagFromMat");
  CUCTX_CHECK(dim_ == std::min(M.NumRows(), M.NumCols()))
      << "CuVector::CopyDiagFromMat: vector of dim " << dim_ << " does not match matrix "
      << ShapeText(M) << " (needs dim == min(rows, cols))";
  CheckMatrixApart("CuVector::CopyDiagFromMat", *this, M, "M");
  if (dim_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchCopyStrided(dim_, M.Data(), static_cast<int64>(M.Stride()) + 1, data_, s);
      }))
    return;
  CpuView().CopyDiagFromMat(HostView(M));
}

template <typename Real>
void CuVectorBase<Real>::AddDiagMat2(Real alpha, const CuMatrixBase<Real>& M,
                                     MatrixTransposeType trans, Real beta) {
  internal::CuOpScope op_scope("CuVector::AddDiagMat2");
  const MatrixIndexT want = trans == kNoTrans ? M.NumRows() : M.NumCols();
  CUCTX_CHECK(dim_ == want) << "CuVector::AddDiagMat2: vector of dim " << dim_
                            << " does not match matrix " << ShapeText(M)
                            << " (needs dim == " << (trans == kNoTrans ? "NumRows()" : "NumCols()")
                            << ")";
  CheckMatrixApart("CuVector::AddDiagMat2", *this, M, "M");
  if (dim_ == 0) return;
  // diag(M M^T) pairs row i of M with itself, diag(M^T M) column i.
  if (internal::RunOnGpu([&](CuStream s) {
        DeviceDiagProduct(alpha, M, trans == kTrans, M, trans == kNoTrans, beta, data_, dim_, s);
      }))
    return;
  CpuView().AddDiagMat2(alpha, HostView(M), trans, beta);
}

template <typename Real>
void CuVectorBase<Real>::AddDiagMatMat(Real alpha, const CuMatrixBase<Real>& M,
                                       MatrixTransposeType transM, const CuMatrixBase<Real>& N,
                                       MatrixTransposeType transN, Real beta) {
  internal::CuOpScope op_scope("CuVector::AddDiagMatMat");
  const bool mt = transM == kTrans, nt = transN == kTrans;
  const MatrixIndexT m_rows = mt ? M.NumCols() : M.NumRows(),
                     m_cols = mt ? M.NumRows() : M.NumCols();
  const MatrixIndexT n_rows = nt ? N.NumCols() : N.NumRows(),
                     n_cols = nt ? N.NumRows() : N.NumCols();
  CUCTX_CHECK(m_rows == dim_ && n_cols == dim_ && m_cols == n_rows)
      << "CuVector::AddDiagMatMat: op(M) is " << ShapeText(m_rows, m_cols) << " and op(N) is "
      << ShapeText(n_rows, n_cols) << ", vector of dim " << dim_
      << " (needs op(M) dim x K and op(N) K x dim)";
  CheckMatrixApart("CuVector::AddDiagMatMat", *this, M, "M");
  CheckMatrixApart("CuVector::AddDiagMatMat", *this, N, "N");
  if (dim_ == 0) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { DeviceDiagProduct(alpha, M, mt, N, nt, beta, data_, dim_, s); }))
    return;
  CpuView().AddDiagMatMat(alpha, HostView(M), transM, HostView(N), transN, beta);
}

template <typename Real>
template <typename OtherReal>
void CuVectorBase<Real>::AddVec(Real alpha, const CuVectorBase<OtherReal>& v, Real beta) {
  CUCTX_CHECK(dim_ == v.Dim()) << "CuVector::AddVec: dimension mismatch: " << dim_ << " vs "
                               << v.Dim();
  if (dim_ == 0) return;
  const CuVector<Real> converted(v);  // on the device in GPU mode
  AddVec(alpha, converted, beta);
}

template <typename Real>
void CuVectorBase<Real>::DivElements(const CuVectorBase<Real>& v) {
  internal::CuOpScope op_scope("CuVector::DivElements");
  CUCTX_CHECK(dim_ == v.Dim()) << "CuVector::DivElements: dimension mismatch: " << dim_ << " vs "
                               << v.Dim();
  CUCTX_CHECK(v.Data() == data_ || !internal::Overlap(v, *this))
      << "CuVector::DivElements: v partially overlaps *this (dim " << dim_ << ")";
  if (dim_ == 0) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchDivElements(internal::VecDim(dim_), v.Data(), dim_, data_, s); }))
    return;
  CpuView().DivElements(HostView(v));
}

template <typename Real>
void CuVectorBase<Real>::InvertElements() {
  internal::CuOpScope op_scope("CuVector::InvertElements");
  MapInPlace(VectorMap::kInvert, Real(0), Real(0), data_, dim_,
             [](VectorBase<Real>* h) { h->InvertElements(); });
}

template <typename Real>
void CuVectorBase<Real>::ApplyFloor(Real floor_val, MatrixIndexT* floored_count) {
  internal::CuOpScope op_scope("CuVector::ApplyFloor");
  Clamp(floor_val, false, data_, dim_, floored_count);
}

template <typename Real>
void CuVectorBase<Real>::ApplyCeiling(Real ceiling_val, MatrixIndexT* ceiled_count) {
  internal::CuOpScope op_scope("CuVector::ApplyCeiling");
  Clamp(ceiling_val, true, data_, dim_, ceiled_count);
}

template <typename Real>
void CuVectorBase<Real>::ApplyPow(Real power) {
  internal::CuOpScope op_scope("CuVector::ApplyPow");
  MapInPlace(VectorMap::kPow, power, Real(0), data_, dim_,
             [power](VectorBase<Real>* h) { h->ApplyPow(power); });
}

template <typename Real>
void CuVectorBase<Real>::ApplyExp() {
  internal::CuOpScope op_scope("CuVector::ApplyExp");
  MapInPlace(NnetMap::kExp, Real(0), Real(0), data_, dim_,
             [](VectorBase<Real>* h) { h->ApplyExp(); });
}

template <typename Real>
void CuVectorBase<Real>::ApplyLog() {
  internal::CuOpScope op_scope("CuVector::ApplyLog");
  MapInPlace(NnetMap::kLog, Real(0), Real(0), data_, dim_,
             [](VectorBase<Real>* h) { h->ApplyLog(); });
}

template <typename Real>
void CuVectorBase<Real>::ReplaceValue(Real orig, Real changed) {
  internal::CuOpScope op_scope("CuVector::ReplaceValue");
  MapInPlace(VectorMap::kReplace, orig, changed, data_, dim_,
             [orig, changed](VectorBase<Real>* h) { h->ReplaceValue(orig, changed); });
}

template <typename Real>
Real CuVectorBase<Real>::Norm(Real p) const {
  internal::CuOpScope op_scope("CuVector::Norm");
  internal::CheckNotCapturing("CuVectorBase::Norm");
  CUCTX_CHECK(p >= 0) << "CuVector::Norm: p = " << p << " must be >= 0";
  if (dim_ == 0) return 0;
  double norm = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        internal::ScopedStorage work(VectorReduceWorkspaceBytes());
        LaunchVectorNorm(dim_, data_, static_cast<double>(p), work.Data(), s);
        norm = ReadBackDouble(&work);
      }))
    return static_cast<Real>(norm);
  return CpuView().Norm(p);
}

template <typename Real>
bool CuVectorBase<Real>::ApproxEqual(const CuVectorBase<Real>& other, float tol) const {
  internal::CheckNotCapturing("CuVectorBase::ApproxEqual");
  return cuctx::ApproxEqual(*this, other, tol);
}

#define CUCTX_INSTANTIATE_CU_VECTOR_OPS_(R, O)                                                   \
  template void CuVectorBase<R>::CopyRowsFromMat(const CuMatrixBase<R>&);                        \
  template void CuVectorBase<R>::CopyRowsFromMat(const MatrixBase<R>&);                          \
  template void CuVectorBase<R>::CopyColFromMat(const CuMatrixBase<R>&, MatrixIndexT);           \
  template void CuVectorBase<R>::CopyColFromMat(const CuMatrixBase<O>&, MatrixIndexT);           \
  template void CuVectorBase<R>::CopyDiagFromMat(const CuMatrixBase<R>&);                        \
  template void CuVectorBase<R>::AddDiagMat2(R, const CuMatrixBase<R>&, MatrixTransposeType, R); \
  template void CuVectorBase<R>::AddDiagMatMat(R, const CuMatrixBase<R>&, MatrixTransposeType,   \
                                               const CuMatrixBase<R>&, MatrixTransposeType, R);  \
  template void CuVectorBase<R>::AddVec(R, const CuVectorBase<O>&, R);                           \
  template void CuVectorBase<R>::DivElements(const CuVectorBase<R>&);                            \
  template void CuVectorBase<R>::InvertElements();                                               \
  template void CuVectorBase<R>::ApplyFloor(R, MatrixIndexT*);                                   \
  template void CuVectorBase<R>::ApplyCeiling(R, MatrixIndexT*);                                 \
  template void CuVectorBase<R>::ApplyPow(R);                                                    \
  template void CuVectorBase<R>::ApplyExp();                                                     \
  template void CuVectorBase<R>::ApplyLog();                                                     \
  template void CuVectorBase<R>::ReplaceValue(R, R);                                             \
  template R CuVectorBase<R>::Norm(R) const;                                                     \
  template bool CuVectorBase<R>::ApproxEqual(const CuVectorBase<R>&, float) const;

CUCTX_INSTANTIATE_CU_VECTOR_OPS_(float, double)
CUCTX_INSTANTIATE_CU_VECTOR_OPS_(double, float)

#undef CUCTX_INSTANTIATE_CU_VECTOR_OPS_

}  // namespace cuctx
