// cudamatrix/cu-matrix.cc: CuMatrixBase / CuMatrix / CuSubMatrix: shape, views, copies, fills,
// element-wise ops and reductions.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-matrix.h"

#include "base/error.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-readback.h"
#include "cudamatrix/internal/cu-storage.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>

namespace cuctx {
namespace {

using internal::HostView;
using internal::Overlap;
using internal::ShapeText;

// Checks that src (op(src) when transposed) has the destination shape.
void CheckCopyShape(const char* what, MatrixIndexT dst_rows, MatrixIndexT dst_cols,
                    MatrixIndexT src_rows, MatrixIndexT src_cols, MatrixTransposeType trans) {
  const bool ok = trans == kNoTrans ? (src_rows == dst_rows && src_cols == dst_cols)
                                    : (src_rows == dst_cols && src_cols == dst_rows);
  CUCTX_CHECK(ok) << what << ": source " << ShapeText(src_rows, src_cols)
                  << (trans == kTrans ? " (transposed)" : "") << " does not match destination "
                  << ShapeText(dst_rows, dst_cols);
}

}  // namespace

// ---- shape and views ---------------------------------------------------------------------------

template <typename Real>
Real* CuMatrixBase<Real>::RowData(MatrixIndexT r) {
  CUCTX_CHECK(r >= 0 && r < num_rows_)
      << "CuMatrix::RowData: row " << r << " out of range for " << ShapeText(num_rows_, num_cols_);
  return data_ + static_cast<size_t>(r) * stride_;
}

template <typename Real>
const Real* CuMatrixBase<Real>::RowData(MatrixIndexT r) const {
  return const_cast<CuMatrixBase<Real>*>(this)->RowData(r);
}

template <typename Real>
CuSubVector<Real> CuMatrixBase<Real>::Row(MatrixIndexT r) {
  CuSubVector<Real> row(RowData(r), num_cols_);
  row.device_ = device_;
  return row;
}

template <typename Real>
const CuSubVector<Real> CuMatrixBase<Real>::Row(MatrixIndexT r) const {
  CuSubVector<Real> row(const_cast<Real*>(RowData(r)), num_cols_);
  row.device_ = device_;
  return row;
}

template <typename Real>
CuSubMatrix<Real> CuMatrixBase<Real>::Range(MatrixIndexT ro, MatrixIndexT nr, MatrixIndexT co,
                                            MatrixIndexT nc) {
  return CuSubMatrix<Real>(*this, ro, nr, co, nc);
}
template <typename Real>
const CuSubMatrix<Real> CuMatrixBase<Real>::Range(MatrixIndexT ro, MatrixIndexT nr, MatrixIndexT co,
                                                  MatrixIndexT nc) const {
  return CuSubMatrix<Real>(*this, ro, nr, co, nc);
}
template <typename Real>
CuSubMatrix<Real> CuMatrixBase<Real>::RowRange(MatrixIndexT ro, MatrixIndexT nr) {
  return CuSubMatrix<Real>(*this, ro, nr, 0, num_cols_);
}
template <typename Real>
const CuSubMatrix<Real> CuMatrixBase<Real>::RowRange(MatrixIndexT ro, MatrixIndexT nr) const {
  return CuSubMatrix<Real>(*this, ro, nr, 0, num_cols_);
}
template <typename Real>
CuSubMatrix<Real> CuMatrixBase<Real>::ColRange(MatrixIndexT co, MatrixIndexT nc) {
  return CuSubMatrix<Real>(*this, 0, num_rows_, co, nc);
}
template <typename Real>
const CuSubMatrix<Real> CuMatrixBase<Real>::ColRange(MatrixIndexT co, MatrixIndexT nc) const {
  return CuSubMatrix<Real>(*this, 0, num_rows_, co, nc);
}

template <typename Real>
CuValue<Real> CuMatrixBase<Real>::operator()(MatrixIndexT r, MatrixIndexT c) {
  CUCTX_CHECK(r >= 0 && r < num_rows_ && c >= 0 && c < num_cols_)
      << "CuMatrix: index (" << r << ", " << c << ") out of range for "
      << ShapeText(num_rows_, num_cols_);
  return CuValue<Real>(data_ + static_cast<size_t>(r) * stride_ + c);
}

template <typename Real>
Real CuMatrixBase<Real>::operator()(MatrixIndexT r, MatrixIndexT c) const {
  internal::CheckNotCapturing("CuMatrixBase::operator() (element read)");
  return const_cast<CuMatrixBase<Real>*>(this)->operator()(r, c);
}

// ---- copies ------------------------------------------------------------------------------------

template <typename Real>
template <typename OtherReal>
void CuMatrixBase<Real>::CopyFromMat(const CuMatrixBase<OtherReal>& src,
                                     MatrixTransposeType trans) {
  internal::CuOpScope op_scope("CuMatrix::CopyFromMat");
  CheckCopyShape("CuMatrix::CopyFromMat", num_rows_, num_cols_, src.NumRows(), src.NumCols(),
                 trans);
  if (Empty()) return;
  const bool same_type = std::is_same<Real, OtherReal>::value;
  if (src.device_ != device_) {  // between devices (src.data_: read without the device check)
    if (same_type && trans == kNoTrans) {
      internal::CopyAcrossDevices2D(data_, device_, stride_ * sizeof(Real), src.data_, src.device_,
                                    src.stride_ * sizeof(OtherReal), num_cols_ * sizeof(Real),
                                    num_rows_);
      return;
    }
    // Converting or transposing: bring the source over as it is, then convert here.
    internal::CheckObjectDevice("CuMatrix", device_, data_);
    CuMatrix<OtherReal> staged(src.num_rows_, src.num_cols_, kUndefined);
    internal::CopyAcrossDevices2D(staged.Data(), device_, staged.Stride() * sizeof(OtherReal),
                                  src.data_, src.device_, src.stride_ * sizeof(OtherReal),
                                  src.num_cols_ * sizeof(OtherReal), src.num_rows_);
    CopyFromMat(staged, trans);
    return;
  }
  const void* src_data = src.Data();
  if (same_type && trans == kNoTrans && src_data == static_cast<const void*>(data_)) return;
  CUCTX_CHECK(trans == kNoTrans || !Overlap(*this, src))
      << "CuMatrix::CopyFromMat: transposed source " << ShapeText(src.NumRows(), src.NumCols())
      << " overlaps destination " << ShapeText(num_rows_, num_cols_);
  if (internal::RunOnGpu([&](CuStream s) {
        if (same_type && trans == kNoTrans) {
          internal::CopyStorage2D(data_, stride_ * sizeof(Real), src.Data(),
                                  src.Stride() * sizeof(OtherReal), num_cols_ * sizeof(Real),
                                  num_rows_);
        } else {
          LaunchCopyMat(Dim(), src.Data(), src.Stride(), trans == kTrans, data_, s);
        }
      }))
    return;
  CpuView().CopyFromMat(HostView(src), trans);
}

template <typename Real>
template <typename OtherReal>
void CuMatrixBase<Real>::CopyFromMat(const MatrixBase<OtherReal>& src, MatrixTransposeType trans) {
  internal::CuOpScope op_scope("CuMatrix::CopyFromMat(from host)");
  CheckCopyShape("CuMatrix::CopyFromMat", num_rows_, num_cols_, src.NumRows(), src.NumCols(),
                 trans);
  if (Empty()) return;
  if (std::is_same<Real, OtherReal>::value && trans == kNoTrans) {
    CopyHostToDevice2D(data_, stride_ * sizeof(Real), src.Data(), src.Stride() * sizeof(Real),
                       num_cols_ * sizeof(Real), num_rows_);
    return;
  }
  if (internal::RunOnGpu([&](CuStream) {
        // Transfer at the source's precision and layout; convert and transpose on the device.
        CuMatrix<OtherReal> staged(src.NumRows(), src.NumCols(), kUndefined);
        staged.CopyFromMat(src);
        CopyFromMat(staged, trans);
      }))
    return;
  CpuView().CopyFromMat(src, trans);
}

template <typename Real>
template <typename OtherReal>
void CuMatrixBase<Real>::CopyToMat(MatrixBase<OtherReal>* dst, MatrixTransposeType trans) const {
  internal::CuOpScope op_scope("CuMatrix::CopyToMat");
  internal::CheckNotCapturing("CuMatrixBase::CopyToMat");
  CheckCopyShape("CuMatrix::CopyToMat", dst->NumRows(), dst->NumCols(), num_rows_, num_cols_,
                 trans);
  if (Empty()) return;
  if (std::is_same<Real, OtherReal>::value && trans == kNoTrans) {
    CopyDeviceToHost2D(dst->Data(), dst->Stride() * sizeof(Real), data_, stride_ * sizeof(Real),
                       num_cols_ * sizeof(Real), num_rows_);
    return;
  }
  if (internal::RunOnGpu([&](CuStream) {
        CuMatrix<OtherReal> converted(dst->NumRows(), dst->NumCols(), kUndefined);
        converted.CopyFromMat(*this, trans);
        converted.CopyToMat(dst);
      }))
    return;
  CpuView().CopyToMat(dst, trans);
}

// ---- fills and element-wise ops ----------------------------------------------------------------

template <typename Real>
void CuMatrixBase<Real>::SetZero() {
  internal::CuOpScope op_scope("CuMatrix::SetZero");
  if (Empty()) return;
  internal::ZeroStorage2D(data_, stride_ * sizeof(Real), num_cols_ * sizeof(Real), num_rows_);
}

template <typename Real>
void CuMatrixBase<Real>::Set(Real value) {
  internal::CuOpScope op_scope("CuMatrix::Set");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchSetMat(Dim(), value, data_, s); })) return;
  CpuView().Set(value);
}

template <typename Real>
void CuMatrixBase<Real>::Add(Real value) {
  internal::CuOpScope op_scope("CuMatrix::Add");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchAddScalarMat(Dim(), value, data_, s); })) return;
  CpuView().Add(value);
}

template <typename Real>
void CuMatrixBase<Real>::Scale(Real alpha) {
  internal::CuOpScope op_scope("CuMatrix::Scale");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchScaleMat(Dim(), alpha, data_, s); })) return;
  CpuView().Scale(alpha);
}

template <typename Real>
void CuMatrixBase<Real>::AddMat(Real alpha, const CuMatrixBase<Real>& A,
                                MatrixTransposeType trans) {
  internal::CuOpScope op_scope("CuMatrix::AddMat");
  CheckCopyShape("CuMatrix::AddMat", num_rows_, num_cols_, A.NumRows(), A.NumCols(), trans);
  CUCTX_CHECK(trans == kNoTrans || !Overlap(*this, A))
      << "CuMatrix::AddMat: transposed A " << ShapeText(A.NumRows(), A.NumCols())
      << " overlaps destination " << ShapeText(num_rows_, num_cols_);
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchAddMat(Dim(), alpha, A.Data(), A.Stride(), trans == kTrans, Real(1), data_, s);
      }))
    return;
  if (A.Data() == data_ && trans == kNoTrans) {
    CpuView().Scale(1 + alpha);
    return;
  }
  CpuView().AddMat(alpha, HostView(A), trans);
}

template <typename Real>
void CuMatrixBase<Real>::MulElements(const CuMatrixBase<Real>& A) {
  internal::CuOpScope op_scope("CuMatrix::MulElements");
  CheckCopyShape("CuMatrix::MulElements", num_rows_, num_cols_, A.NumRows(), A.NumCols(), kNoTrans);
  if (Empty()) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchMulElements(Dim(), A.Data(), A.Stride(), data_, s); }))
    return;
  CpuView().MulElements(HostView(A));
}

template <typename Real>
void CuMatrixBase<Real>::DivElements(const CuMatrixBase<Real>& A) {
  internal::CuOpScope op_scope("CuMatrix::DivElements");
  CheckCopyShape("CuMatrix::DivElements", num_rows_, num_cols_, A.NumRows(), A.NumCols(), kNoTrans);
  if (Empty()) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchDivElements(Dim(), A.Data(), A.Stride(), data_, s); }))
    return;
  CpuView().DivElements(HostView(A));
}

// ---- reductions --------------------------------------------------------------------------------

template <typename Real>
Real CuMatrixBase<Real>::Sum() const {
  internal::CuOpScope op_scope("CuMatrix::Sum");
  internal::CheckNotCapturing("CuMatrixBase::Sum");
  if (Empty()) return 0;
  Real sum = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        sum = internal::MatReduceToHost(Dim(), data_, MatReduce::kSum, Real(0), s);
      }))
    return sum;
  return CpuView().Sum();
}

template <typename Real>
void CuMatrixBase<Real>::Sum(CuValue<Real> result) const {
  internal::CuOpScope op_scope("CuMatrix::Sum");
  if (internal::RunOnGpu([&](CuStream s) {
        internal::ReduceOnDevice([&](void* work) {
          LaunchMatReduce(Dim(), data_, MatReduce::kSum, Real(0), work, result.Data(), HostPost{},
                          s);
        });
      }))
    return;
  *result.Data() = Empty() ? Real(0) : CpuView().Sum();
}

template <typename Real>
Real CuMatrixBase<Real>::FrobeniusNorm() const {
  internal::CuOpScope op_scope("CuMatrix::FrobeniusNorm");
  internal::CheckNotCapturing("CuMatrixBase::FrobeniusNorm");
  if (Empty()) return 0;
  Real sum_sq = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        sum_sq = internal::MatReduceToHost(Dim(), data_, MatReduce::kSumSquares, Real(0), s);
      }))
    return std::sqrt(sum_sq);
  return CpuView().FrobeniusNorm();
}

template <typename Real>
bool CuMatrixBase<Real>::ApproxEqual(const CuMatrixBase<Real>& other, float tol) const {
  internal::CheckNotCapturing("CuMatrixBase::ApproxEqual");
  CheckCopyShape("CuMatrix::ApproxEqual", num_rows_, num_cols_, other.NumRows(), other.NumCols(),
                 kNoTrans);
  CuMatrix<Real> diff(*this);
  diff.AddMat(-1, other);
  return diff.FrobeniusNorm() <= static_cast<Real>(tol) * FrobeniusNorm();
}

template <typename Real>
void CuMatrixBase<Real>::Write(std::ostream& os, bool binary) const {
  Matrix<Real> h(num_rows_, num_cols_, kUndefined);
  CopyToMat(&h);
  h.Write(os, binary);
}

// ---- CuMatrix ----------------------------------------------------------------------------------

template <typename Real>
void CuMatrix<Real>::Resize(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type,
                            MatrixStrideType stride_type) {
  internal::CuOpScope op_scope("CuMatrix::Resize");
  CUCTX_CHECK(rows >= 0 && cols >= 0)
      << "CuMatrix::Resize: negative dimension " << ShapeText(rows, cols);
  if (rows == this->num_rows_ && cols == this->num_cols_ &&
      (stride_type == kDefaultStride || this->stride_ == cols)) {
    if (resize_type == kSetZero) this->SetZero();
    return;
  }
  if (resize_type == kCopyData && !this->Empty())
    internal::CheckObjectDevice("CuMatrix", this->device_, this->data_);
  CuMatrix<Real> fresh;
  fresh.device_ = internal::ThreadObjectDevice();
  fresh.num_rows_ = rows;
  fresh.num_cols_ = cols;
  fresh.stride_ = cols;
  if (rows > 0 && cols > 0) {
    if (stride_type == kDefaultStride) {
      size_t pitch = 0;
      fresh.data_ = static_cast<Real*>(
          internal::AllocPitchedStorage(cols * sizeof(Real), rows, sizeof(Real), &pitch));
      fresh.stride_ = static_cast<MatrixIndexT>(pitch / sizeof(Real));
    } else {
      fresh.data_ = static_cast<Real*>(
          internal::AllocStorage(static_cast<size_t>(rows) * cols * sizeof(Real)));
    }
  }
  if (resize_type == kSetZero || resize_type == kCopyData) fresh.SetZero();
  if (resize_type == kCopyData) {
    const MatrixIndexT r = std::min(rows, this->num_rows_), c = std::min(cols, this->num_cols_);
    if (r > 0 && c > 0)
      internal::CopyStorage2D(fresh.data_, fresh.stride_ * sizeof(Real), this->data_,
                              this->stride_ * sizeof(Real), c * sizeof(Real), r);
  }
  Swap(&fresh);
}

template <typename Real>
void CuMatrix<Real>::Swap(CuMatrix<Real>* other) {
  std::swap(this->data_, other->data_);
  std::swap(this->device_, other->device_);
  std::swap(this->num_rows_, other->num_rows_);
  std::swap(this->num_cols_, other->num_cols_);
  std::swap(this->stride_, other->stride_);
}

template <typename Real>
void CuMatrix<Real>::Swap(Matrix<Real>* other) {
  Matrix<Real> mine(this->num_rows_, this->num_cols_, kUndefined);
  this->CopyToMat(&mine);
  Resize(other->NumRows(), other->NumCols(), kUndefined);
  this->CopyFromMat(*other);
  other->Swap(&mine);
}

template <typename Real>
void CuMatrix<Real>::Transpose() {
  CuMatrix<Real> t(*this, kTrans);
  Swap(&t);
}

template <typename Real>
void CuMatrix<Real>::Read(std::istream& is, bool binary) {
  Matrix<Real> h;
  h.Read(is, binary);
  Resize(h.NumRows(), h.NumCols(), kUndefined);
  this->CopyFromMat(h);
}

template <typename Real>
void CuMatrix<Real>::Assign(const CuMatrixBase<Real>& other, MatrixTransposeType trans) {
  if (other.DeviceId() == internal::ThreadObjectDevice() && Overlap(*this, other) &&
      (trans == kTrans || other.Data() != this->data_ || other.Stride() != this->stride_)) {
    CuMatrix<Real> copy(other, trans);  // `other` views this matrix: copy before reallocating
    Swap(&copy);
    return;
  }
  ResizeFor(other.NumRows(), other.NumCols(), trans);
  this->CopyFromMat(other, trans);
}

template <typename Real>
void CuMatrix<Real>::Destroy() {
  internal::FreeStorage(this->data_);
  this->data_ = nullptr;
  this->num_rows_ = this->num_cols_ = this->stride_ = 0;
}

// ---- CuSubMatrix and free functions ------------------------------------------------------------

template <typename Real>
CuSubMatrix<Real>::CuSubMatrix(const CuMatrixBase<Real>& m, MatrixIndexT ro, MatrixIndexT nr,
                               MatrixIndexT co, MatrixIndexT nc)
    : CuMatrixBase<Real>(m.data_, nr, nc, m.Stride(), m.device_) {
  CUCTX_CHECK(ro >= 0 && nr >= 0 && co >= 0 && nc >= 0 && ro + nr <= m.NumRows() &&
              co + nc <= m.NumCols())
      << "CuSubMatrix: rows [" << ro << ", " << ro + nr << ") x cols [" << co << ", " << co + nc
      << ") outside matrix " << ShapeText(m.NumRows(), m.NumCols());
  if (nr > 0 && nc > 0) this->data_ += static_cast<size_t>(ro) * m.Stride() + co;
}

template <typename Real>
CuSubMatrix<Real>::CuSubMatrix(const Real* data, MatrixIndexT rows, MatrixIndexT cols,
                               MatrixIndexT stride)
    : CuMatrixBase<Real>(const_cast<Real*>(data), rows, cols, stride,
                         internal::ThreadObjectDevice()) {
  CUCTX_CHECK(rows >= 0 && cols >= 0 && stride >= cols)
      << "CuSubMatrix: bad shape " << ShapeText(rows, cols) << " with stride " << stride;
}

template <typename Real>
void AssertEqual(const CuMatrixBase<Real>& A, const CuMatrixBase<Real>& B, float tol) {
  CUCTX_CHECK(A.ApproxEqual(B, tol))
      << "AssertEqual: matrices " << ShapeText(A.NumRows(), A.NumCols())
      << " differ by more than tolerance " << tol;
}

template <typename Real>
std::ostream& operator<<(std::ostream& os, const CuMatrixBase<Real>& M) {
  Matrix<Real> h(M.NumRows(), M.NumCols(), kUndefined);
  M.CopyToMat(&h);
  return os << h;
}

#define CUCTX_INSTANTIATE_MATRIX_(R, O)                                                    \
  template void CuMatrixBase<R>::CopyFromMat(const CuMatrixBase<O>&, MatrixTransposeType); \
  template void CuMatrixBase<R>::CopyFromMat(const MatrixBase<O>&, MatrixTransposeType);   \
  template void CuMatrixBase<R>::CopyToMat(MatrixBase<O>*, MatrixTransposeType) const
CUCTX_INSTANTIATE_MATRIX_(float, float);
CUCTX_INSTANTIATE_MATRIX_(float, double);
CUCTX_INSTANTIATE_MATRIX_(double, float);
CUCTX_INSTANTIATE_MATRIX_(double, double);
#undef CUCTX_INSTANTIATE_MATRIX_

template class CuMatrixBase<float>;
template class CuMatrixBase<double>;
template class CuMatrix<float>;
template class CuMatrix<double>;
template class CuSubMatrix<float>;
template class CuSubMatrix<double>;
template void AssertEqual(const CuMatrixBase<float>&, const CuMatrixBase<float>&, float);
template void AssertEqual(const CuMatrixBase<double>&, const CuMatrixBase<double>&, float);
template std::ostream& operator<<(std::ostream&, const CuMatrixBase<float>&);
template std::ostream& operator<<(std::ostream&, const CuMatrixBase<double>&);

}  // namespace cuctx
