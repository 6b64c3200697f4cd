// cudamatrix/cu-array.cc: CuArrayBase / CuArray / CuSubArray.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-array.h"

#include "base/io-funcs.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-storage.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace cuctx {
namespace {

// Only int32 arrays have a serialised form (the integer-vector format).
void WriteElements(std::ostream& os, bool binary, const std::vector<int32>& v) {
  WriteIntegerVector(os, binary, v);
}
template <typename T>
void WriteElements(std::ostream&, bool, const std::vector<T>&) {
  CUCTX_ERR << "CuArray::Write: only int32 arrays can be written";
}
void ReadElements(std::istream& is, bool binary, std::vector<int32>* v) {
  ReadIntegerVector(is, binary, v);
}
template <typename T>
void ReadElements(std::istream&, bool, std::vector<T>*) {
  CUCTX_ERR << "CuArray::Read: only int32 arrays can be read";
}

}  // namespace

template <typename T>
void CuArrayBase<T>::SetZero() {
  internal::CuOpScope op_scope("CuArray::SetZero");
  if (dim_ == 0) return;
  internal::ZeroStorage2D(data_, 0, dim_ * sizeof(T), 1);
}

template <typename T>
void CuArrayBase<T>::Set(const T& value) {
  internal::CuOpScope op_scope("CuArray::Set");
  // Elements are copied as bytes; std::pair qualifies (its copy is trivial even though its
  // assignment is not formally so), which Kaldi code uses as CuArray<std::pair<int32, int32>>.
  static_assert(
      std::is_trivially_copy_constructible<T>::value && std::is_trivially_destructible<T>::value,
      "CuArray needs elements that can be copied as bytes");
  if (dim_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        if (sizeof(T) == 4 || sizeof(T) == 8) {
          uint64_t pattern = 0;
          std::memcpy(&pattern, &value, sizeof(T));
          LaunchFill(data_, dim_, static_cast<int32_t>(sizeof(T)), pattern, s);
        } else {
          CopyFromVec(std::vector<T>(dim_, value));
        }
      }))
    return;
  std::fill(data_, data_ + dim_, value);
}

template <typename T>
void CuArrayBase<T>::CopyFromVec(const std::vector<T>& src) {
  internal::CuOpScope op_scope("CuArray::CopyFromVec");
  CUCTX_CHECK(static_cast<MatrixIndexT>(src.size()) == dim_)
      << "CuArray::CopyFromVec: source has " << src.size() << " elements, array has " << dim_;
  if (dim_ == 0) return;
  CopyHostToDevice(data_, src.data(), dim_ * sizeof(T));
}

template <typename T>
void CuArrayBase<T>::CopyToVec(std::vector<T>* dst) const {
  dst->resize(dim_);
  CopyToHost(dst->data());
}

template <typename T>
void CuArrayBase<T>::CopyToHost(T* dst) const {
  internal::CuOpScope op_scope("CuArray::CopyToHost");
  if (dim_ == 0) return;
  CopyDeviceToHost(dst, data_, dim_ * sizeof(T));
}

template <typename T>
void CuArrayBase<T>::CopyFromArray(const CuArrayBase<T>& src) {
  internal::CuOpScope op_scope("CuArray::CopyFromArray");
  CUCTX_CHECK(src.Dim() == dim_) << "CuArray::CopyFromArray: source dimension " << src.Dim()
                                 << " != destination dimension " << dim_;
  if (dim_ == 0) return;
  internal::CopyStorage2D(data_, 0, src.Data(), 0, dim_ * sizeof(T), 1);
}

template <typename T>
void CuArrayBase<T>::Write(std::ostream& os, bool binary) const {
  std::vector<T> h;
  CopyToVec(&h);
  WriteElements(os, binary, h);
}

template <typename T>
void CuArray<T>::Resize(MatrixIndexT dim, MatrixResizeType resize_type) {
  internal::CuOpScope op_scope("CuArray::Resize");
  CUCTX_CHECK(dim >= 0) << "CuArray::Resize: negative dimension " << dim;
  if (dim == this->dim_) {
    if (resize_type == kSetZero) this->SetZero();
    return;
  }
  if (resize_type == kCopyData && this->dim_ > 0)
    internal::CheckObjectDevice("CuArray", this->device_, this->data_);
  CuArray<T> fresh;
  fresh.device_ = internal::ThreadObjectDevice();
  fresh.data_ = static_cast<T*>(internal::AllocStorage(dim * sizeof(T)));
  fresh.dim_ = dim;
  if (resize_type == kCopyData) {
    const MatrixIndexT keep = std::min(dim, this->dim_);
    if (keep > 0) internal::CopyStorage2D(fresh.data_, 0, this->data_, 0, keep * sizeof(T), 1);
    if (dim > keep) internal::ZeroStorage2D(fresh.data_ + keep, 0, (dim - keep) * sizeof(T), 1);
  } else if (resize_type == kSetZero) {
    fresh.SetZero();
  }
  Swap(&fresh);
}

template <typename T>
void CuArray<T>::Swap(CuArray<T>* other) {
  std::swap(this->data_, other->data_);
  std::swap(this->device_, other->device_);
  std::swap(this->dim_, other->dim_);
}

template <typename T>
void CuArray<T>::Read(std::istream& is, bool binary) {
  std::vector<T> h;
  ReadElements(is, binary, &h);
  CopyFromVec2(h);
}

template <typename T>
void CuArray<T>::Destroy() {
  internal::FreeStorage(this->data_);
  this->data_ = nullptr;
  this->dim_ = 0;
}

template <typename T>
void CuArray<T>::CopyFrom(const CuArrayBase<T>& other) {
  Resize(other.Dim(), kUndefined);
  CuArrayBase<T>::CopyFromArray(other);  // the base form: CuArray's own one resizes and calls us
}

template <typename T>
void CuArray<T>::CopyFromVec2(const std::vector<T>& src) {
  Resize(static_cast<MatrixIndexT>(src.size()), kUndefined);
  CuArrayBase<T>::CopyFromVec(src);  // the base form: CuArray's own one resizes and calls us
}

template <typename T>
CuSubArray<T>::CuSubArray(const CuArrayBase<T>& src, MatrixIndexT offset, MatrixIndexT dim)
    : CuArrayBase<T>(const_cast<T*>(src.Data()), dim, src.DeviceId()) {
  CUCTX_CHECK(offset >= 0 && dim >= 0 && offset + dim <= src.Dim())
      << "CuSubArray: range [" << offset << ", " << offset + dim << ") outside array of dimension "
      << src.Dim();
  if (dim > 0) this->data_ += offset;
}

#define CUCTX_INSTANTIATE_ARRAY_(T) \
  template class CuArrayBase<T>;    \
  template class CuArray<T>;        \
  template class CuSubArray<T>
CUCTX_INSTANTIATE_ARRAY_(int32);
CUCTX_INSTANTIATE_ARRAY_(Int32Pair);
using StdInt32Pair = std::pair<int32, int32>;  // (a macro argument cannot hold the comma)
CUCTX_INSTANTIATE_ARRAY_(StdInt32Pair);
CUCTX_INSTANTIATE_ARRAY_(float);
CUCTX_INSTANTIATE_ARRAY_(double);
// Row-pointer arrays of the gather/scatter family (CuMatrixBase::CopyRows, AddToRows, ...).
CUCTX_INSTANTIATE_ARRAY_(float*);
CUCTX_INSTANTIATE_ARRAY_(double*);
CUCTX_INSTANTIATE_ARRAY_(const float*);
CUCTX_INSTANTIATE_ARRAY_(const double*);
#undef CUCTX_INSTANTIATE_ARRAY_

}  // namespace cuctx
