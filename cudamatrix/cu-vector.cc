// cudamatrix/cu-vector.cc: CuVectorBase / CuVector / CuSubVector.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-vector.h"

#include "base/error.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"

#include <algorithm>
#include <type_traits>
#include <utility>

namespace cuctx {
namespace {

using internal::VecDim;

void CheckSameDim(const char* what, MatrixIndexT a, MatrixIndexT b) {
  CUCTX_CHECK(a == b) << what << ": dimension mismatch: " << a << " vs " << b;
}

}  // namespace

template <typename Real>
CuSubVector<Real> CuVectorBase<Real>::Range(MatrixIndexT origin, MatrixIndexT length) {
  return CuSubVector<Real>(*this, origin, length);
}

template <typename Real>
const CuSubVector<Real> CuVectorBase<Real>::Range(MatrixIndexT origin, MatrixIndexT length) const {
  return CuSubVector<Real>(*this, origin, length);
}

template <typename Real>
CuValue<Real> CuVectorBase<Real>::operator()(MatrixIndexT i) {
  CUCTX_CHECK(i >= 0 && i < dim_) << "CuVector: index " << i << " out of range [0, " << dim_ << ")";
  return CuValue<Real>(data_ + i);
}

template <typename Real>
Real CuVectorBase<Real>::operator()(MatrixIndexT i) const {
  internal::CheckNotCapturing("CuVectorBase::operator() (element read)");
  CUCTX_CHECK(i >= 0 && i < dim_) << "CuVector: index " << i << " out of range [0, " << dim_ << ")";
  return CuValue<Real>(data_ + i);
}

template <typename Real>
template <typename OtherReal>
void CuVectorBase<Real>::CopyFromVec(const CuVectorBase<OtherReal>& src) {
  internal::CuOpScope op_scope("CuVector::CopyFromVec");
  CheckSameDim("CuVector::CopyFromVec", dim_, src.Dim());
  if (dim_ == 0) return;
  if (src.device_ != device_) {  // between devices (src.data_: read without the device check)
    if (std::is_same<Real, OtherReal>::value) {
      internal::CopyAcrossDevices2D(data_, device_, 0, src.data_, src.device_, 0,
                                    dim_ * sizeof(Real), 1);
      return;
    }
    internal::CheckObjectDevice("CuVector", device_, data_);
    CuVector<OtherReal> staged(dim_, kUndefined);
    internal::CopyAcrossDevices2D(staged.Data(), device_, 0, src.data_, src.device_, 0,
                                  dim_ * sizeof(OtherReal), 1);
    CopyFromVec(staged);
    return;
  }
  if (internal::RunOnGpu([&](CuStream s) {
        if (std::is_same<Real, OtherReal>::value) {
          internal::CopyStorage2D(data_, 0, src.Data(), 0, dim_ * sizeof(Real), 1);
        } else {
          LaunchCopyMat(VecDim(dim_), src.Data(), dim_, false, data_, s);
        }
      }))
    return;
  CpuView().CopyFromVec(SubVector<OtherReal>(src.Data(), dim_));
}

template <typename Real>
template <typename OtherReal>
void CuVectorBase<Real>::CopyFromVec(const VectorBase<OtherReal>& src) {
  internal::CuOpScope op_scope("CuVector::CopyFromVec(from host)");
  CheckSameDim("CuVector::CopyFromVec", dim_, src.Dim());
  if (dim_ == 0) return;
  if (std::is_same<Real, OtherReal>::value) {
    CopyHostToDevice(data_, src.Data(), dim_ * sizeof(Real));
    return;
  }
  if (internal::RunOnGpu([&](CuStream) {
        CuVector<OtherReal> staged(src);  // transfer at the source precision, convert on the device
        CopyFromVec(staged);
      }))
    return;
  CpuView().CopyFromVec(src);
}

template <typename Real>
template <typename OtherReal>
void CuVectorBase<Real>::CopyToVec(VectorBase<OtherReal>* dst) const {
  internal::CuOpScope op_scope("CuVector::CopyToVec");
  internal::CheckNotCapturing("CuVectorBase::CopyToVec");
  CheckSameDim("CuVector::CopyToVec", dim_, dst->Dim());
  if (dim_ == 0) return;
  if (std::is_same<Real, OtherReal>::value) {
    CopyDeviceToHost(dst->Data(), data_, dim_ * sizeof(Real));
    return;
  }
  if (internal::RunOnGpu([&](CuStream) {
        CuVector<OtherReal> converted(*this);
        converted.CopyToVec(dst);
      }))
    return;
  CpuView().CopyToVec(dst);
}

template <typename Real>
void CuVectorBase<Real>::SetZero() {
  internal::CuOpScope op_scope("CuVector::SetZero");
  if (dim_ == 0) return;
  internal::ZeroStorage2D(data_, 0, dim_ * sizeof(Real), 1);
}

template <typename Real>
void CuVectorBase<Real>::Set(Real value) {
  internal::CuOpScope op_scope("CuVector::Set");
  if (dim_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchSetMat(VecDim(dim_), value, data_, s); })) return;
  CpuView().Set(value);
}

template <typename Real>
void CuVectorBase<Real>::Add(Real value) {
  internal::CuOpScope op_scope("CuVector::Add");
  if (dim_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchAddScalarMat(VecDim(dim_), value, data_, s); }))
    return;
  CpuView().Add(value);
}

template <typename Real>
void CuVectorBase<Real>::Scale(Real alpha) {
  internal::CuOpScope op_scope("CuVector::Scale");
  if (dim_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchScaleMat(VecDim(dim_), alpha, data_, s); }))
    return;
  CpuView().Scale(alpha);
}

template <typename Real>
void CuVectorBase<Real>::AddVec(Real alpha, const CuVectorBase<Real>& v, Real beta) {
  internal::CuOpScope op_scope("CuVector::AddVec");
  CheckSameDim("CuVector::AddVec", dim_, v.Dim());
  if (dim_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchAddMat(VecDim(dim_), alpha, v.Data(), dim_, false, beta, data_, s);
      }))
    return;
  SubVector<Real> self = CpuView();
  if (v.Data() == data_) {
    self.Scale(alpha + beta);
    return;
  }
  if (beta != 1.0) self.Scale(beta);
  self.AddVec(alpha, SubVector<Real>(v.Data(), dim_));
}

template <typename Real>
void CuVectorBase<Real>::MulElements(const CuVectorBase<Real>& v) {
  internal::CuOpScope op_scope("CuVector::MulElements");
  CheckSameDim("CuVector::MulElements", dim_, v.Dim());
  if (dim_ == 0) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchMulElements(VecDim(dim_), v.Data(), dim_, data_, s); }))
    return;
  CpuView().MulElements(SubVector<Real>(v.Data(), dim_));
}

template <typename Real>
void CuVectorBase<Real>::Write(std::ostream& os, bool binary) const {
  Vector<Real> h(dim_, kUndefined);
  CopyToVec(&h);
  h.Write(os, binary);
}

template <typename Real>
void CuVector<Real>::Resize(MatrixIndexT dim, MatrixResizeType resize_type) {
  internal::CuOpScope op_scope("CuVector::Resize");
  CUCTX_CHECK(dim >= 0) << "CuVector::Resize: negative dimension " << dim;
  if (dim == this->dim_) {
    if (resize_type == kSetZero) this->SetZero();
    return;
  }
  if (resize_type == kCopyData && this->dim_ > 0)
    internal::CheckObjectDevice("CuVector", this->device_, this->data_);
  CuVector<Real> fresh;
  fresh.device_ = internal::ThreadObjectDevice();
  fresh.data_ = static_cast<Real*>(internal::AllocStorage(dim * sizeof(Real)));
  fresh.dim_ = dim;
  if (resize_type == kCopyData) {
    const MatrixIndexT keep = std::min(dim, this->dim_);
    if (keep > 0) internal::CopyStorage2D(fresh.data_, 0, this->data_, 0, keep * sizeof(Real), 1);
    if (dim > keep) internal::ZeroStorage2D(fresh.data_ + keep, 0, (dim - keep) * sizeof(Real), 1);
  } else if (resize_type == kSetZero) {
    fresh.SetZero();
  }
  Swap(&fresh);
}

template <typename Real>
void CuVector<Real>::Swap(CuVector<Real>* other) {
  std::swap(this->data_, other->data_);
  std::swap(this->device_, other->device_);
  std::swap(this->dim_, other->dim_);
}

template <typename Real>
void CuVector<Real>::Swap(Vector<Real>* other) {
  Vector<Real> mine(this->dim_, kUndefined);
  this->CopyToVec(&mine);
  Resize(other->Dim(), kUndefined);
  this->CopyFromVec(*other);
  other->Swap(&mine);
}

template <typename Real>
void CuVector<Real>::Read(std::istream& is, bool binary) {
  Vector<Real> h;
  h.Read(is, binary);
  Resize(h.Dim(), kUndefined);
  this->CopyFromVec(h);
}

template <typename Real>
void CuVector<Real>::Assign(const CuVectorBase<Real>& v) {
  Resize(v.Dim(), kUndefined);
  this->CopyFromVec(v);
}

template <typename Real>
void CuVector<Real>::Destroy() {
  internal::FreeStorage(this->data_);
  this->data_ = nullptr;
  this->dim_ = 0;
}

template <typename Real>
CuSubVector<Real>::CuSubVector(const CuVectorBase<Real>& v, MatrixIndexT origin,
                               MatrixIndexT length)
    : CuVectorBase<Real>(v.data_, length, v.device_) {
  CUCTX_CHECK(origin >= 0 && length >= 0 && origin + length <= v.Dim())
      << "CuSubVector: range [" << origin << ", " << origin + length
      << ") outside vector of dimension " << v.Dim();
  if (length > 0) this->data_ += origin;
}

template <typename Real>
bool ApproxEqual(const CuVectorBase<Real>& a, const CuVectorBase<Real>& b, float tol) {
  CheckSameDim("ApproxEqual(CuVector)", a.Dim(), b.Dim());
  Vector<Real> ha(a.Dim(), kUndefined), hb(b.Dim(), kUndefined);
  a.CopyToVec(&ha);
  b.CopyToVec(&hb);
  return ApproxEqual(ha, hb, tol);
}

template <typename Real>
std::ostream& operator<<(std::ostream& os, const CuVectorBase<Real>& v) {
  Vector<Real> h(v.Dim(), kUndefined);
  v.CopyToVec(&h);
  return os << h;
}

#define CUCTX_INSTANTIATE_VECTOR_(R, O)                               \
  template void CuVectorBase<R>::CopyFromVec(const CuVectorBase<O>&); \
  template void CuVectorBase<R>::CopyFromVec(const VectorBase<O>&);   \
  template void CuVectorBase<R>::CopyToVec(VectorBase<O>*) const
CUCTX_INSTANTIATE_VECTOR_(float, float);
CUCTX_INSTANTIATE_VECTOR_(float, double);
CUCTX_INSTANTIATE_VECTOR_(double, float);
CUCTX_INSTANTIATE_VECTOR_(double, double);
#undef CUCTX_INSTANTIATE_VECTOR_

template class CuVectorBase<float>;
template class CuVectorBase<double>;
template class CuVector<float>;
template class CuVector<double>;
template class CuSubVector<float>;
template class CuSubVector<double>;
template bool ApproxEqual(const CuVectorBase<float>&, const CuVectorBase<float>&, float);
template bool ApproxEqual(const CuVectorBase<double>&, const CuVectorBase<double>&, float);
template std::ostream& operator<<(std::ostream&, const CuVectorBase<float>&);
template std::ostream& operator<<(std::ostream&, const CuVectorBase<double>&);

}  // namespace cuctx
