// cudamatrix/pinned-matrix.cc: PinnedMatrix and PinnedVector (storage in a PinnedBuffer).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/pinned-matrix.h"

#include "base/error.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

namespace cuctx {
namespace {

// Elements per row with the stride type's padding (rows start 16-byte aligned by default).
template <typename Real>
MatrixIndexT StrideFor(MatrixIndexT cols, MatrixStrideType stride_type) {
  if (stride_type == kStrideEqualNumCols) return cols;
  const MatrixIndexT per_16 = static_cast<MatrixIndexT>(16 / sizeof(Real));
  return (cols + per_16 - 1) / per_16 * per_16;
}

// True if [p, p + bytes) overlaps the buffer's block.
bool Overlaps(const void* p, size_t bytes, const PinnedBuffer& buffer) {
  if (p == nullptr || buffer.Empty() || bytes == 0) return false;
  const char* a = static_cast<const char*>(p);
  const char* b = static_cast<const char*>(buffer.Data());
  return a < b + buffer.Capacity() && b < a + bytes;
}

// A block may be reused for `bytes` if it is big enough and comes from the allocator that a new
// block would come from (so a matrix made before the GPU was selected moves to pinned memory).
bool Reusable(const PinnedBuffer& buffer, size_t bytes) {
  return !buffer.Empty() && bytes <= buffer.Capacity() &&
         buffer.Allocator() == &PinnedHostAllocator::Get();
}

// Copies the elements of src (any precision) into a same-shaped matrix at dst with stride.
template <typename Real, typename OtherReal>
void CopyElements(const MatrixBase<OtherReal>& src, MatrixIndexT rows, MatrixIndexT cols, Real* dst,
                  MatrixIndexT dst_stride) {
  for (MatrixIndexT r = 0; r < rows; ++r) {
    const OtherReal* in = src.RowData(r);
    Real* out = dst + static_cast<size_t>(r) * dst_stride;
    if constexpr (std::is_same<Real, OtherReal>::value) {
      std::memcpy(out, in, static_cast<size_t>(cols) * sizeof(Real));
    } else {
      for (MatrixIndexT c = 0; c < cols; ++c) out[c] = static_cast<Real>(in[c]);
    }
  }
}

}  // namespace

// ---- PinnedMatrix
// --------------------------------------------------------------------------------

template <typename Real>
void PinnedMatrix<Real>::Init(MatrixIndexT rows, MatrixIndexT cols, MatrixStrideType stride_type) {
  CUCTX_CHECK(rows >= 0 && cols >= 0)
      << "PinnedMatrix: negative dimension " << rows << " x " << cols;
  if (rows == 0 || cols == 0) {
    buffer_.Reset();
    this->data_ = nullptr;
    this->stride_ = 0;
  } else {
    const MatrixIndexT stride = StrideFor<Real>(cols, stride_type);
    const size_t bytes = static_cast<size_t>(rows) * static_cast<size_t>(stride) * sizeof(Real);
    if (!Reusable(buffer_, bytes)) {
      PinnedBuffer fresh(bytes);
      buffer_.Swap(&fresh);
    }
    this->data_ = static_cast<Real*>(buffer_.Data());
    this->stride_ = stride;
  }
  this->num_rows_ = rows;
  this->num_cols_ = cols;
}

template <typename Real>
PinnedMatrix<Real>::PinnedMatrix(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type,
                                 MatrixStrideType stride_type) {
  Resize(rows, cols, resize_type == kCopyData ? kSetZero : resize_type, stride_type);
}

template <typename Real>
PinnedMatrix<Real>::PinnedMatrix(const MatrixBase<Real>& M) {
  Init(M.NumRows(), M.NumCols(), kDefaultStride);
  CopyElements(M, M.NumRows(), M.NumCols(), this->data_, this->stride_);
}

template <typename Real>
template <typename OtherReal>
PinnedMatrix<Real>::PinnedMatrix(const MatrixBase<OtherReal>& M) {
  Init(M.NumRows(), M.NumCols(), kDefaultStride);
  CopyElements(M, M.NumRows(), M.NumCols(), this->data_, this->stride_);
}

template <typename Real>
PinnedMatrix<Real>::PinnedMatrix(const PinnedMatrix<Real>& M)
    : PinnedMatrix(static_cast<const MatrixBase<Real>&>(M)) {}

template <typename Real>
PinnedMatrix<Real>::PinnedMatrix(PinnedMatrix<Real>&& M) noexcept {
  Swap(&M);
}

template <typename Real>
PinnedMatrix<Real>& PinnedMatrix<Real>::operator=(const MatrixBase<Real>& M) {
  if (&M == this) return *this;
  if (Overlaps(M.Data(), M.SizeInBytes(), buffer_)) {
    // M views our own storage (a SubMatrix of *this): copy out before the storage is reused.
    PinnedMatrix<Real> copy(M);
    Swap(&copy);
    return *this;
  }
  Init(M.NumRows(), M.NumCols(), kDefaultStride);
  CopyElements(M, M.NumRows(), M.NumCols(), this->data_, this->stride_);
  return *this;
}

template <typename Real>
PinnedMatrix<Real>& PinnedMatrix<Real>::operator=(const PinnedMatrix<Real>& M) {
  return *this = static_cast<const MatrixBase<Real>&>(M);
}

template <typename Real>
PinnedMatrix<Real>& PinnedMatrix<Real>::operator=(PinnedMatrix<Real>&& M) noexcept {
  if (this != &M) {
    PinnedMatrix<Real> old(std::move(*this));  // releases our old storage on return
    Swap(&M);
  }
  return *this;
}

template <typename Real>
void PinnedMatrix<Real>::Resize(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type,
                                MatrixStrideType stride_type) {
  CUCTX_CHECK(rows >= 0 && cols >= 0)
      << "PinnedMatrix::Resize: negative dimension " << rows << " x " << cols;
  if (resize_type == kCopyData && this->data_ != nullptr) {
    PinnedMatrix<Real> fresh;  // a new block: the old contents are still needed
    fresh.Init(rows, cols, stride_type);
    if (fresh.data_ != nullptr) std::memset(fresh.data_, 0, fresh.SizeInBytes());
    const MatrixIndexT keep_rows = std::min(rows, this->num_rows_);
    const MatrixIndexT keep_cols = std::min(cols, this->num_cols_);
    for (MatrixIndexT r = 0; r < keep_rows; ++r)
      std::memcpy(fresh.data_ + static_cast<size_t>(r) * fresh.stride_,
                  this->data_ + static_cast<size_t>(r) * this->stride_,
                  static_cast<size_t>(keep_cols) * sizeof(Real));
    Swap(&fresh);
    return;
  }
  Init(rows, cols, stride_type);
  if (resize_type != kUndefined && this->data_ != nullptr)
    std::memset(this->data_, 0, this->SizeInBytes());
}

template <typename Real>
void PinnedMatrix<Real>::Swap(PinnedMatrix<Real>* other) noexcept {
  std::swap(this->data_, other->data_);
  std::swap(this->num_cols_, other->num_cols_);
  std::swap(this->num_rows_, other->num_rows_);
  std::swap(this->stride_, other->stride_);
  buffer_.Swap(&other->buffer_);
}

// ---- PinnedVector
// --------------------------------------------------------------------------------

template <typename Real>
PinnedVector<Real>::PinnedVector(MatrixIndexT dim, MatrixResizeType resize_type) {
  Resize(dim, resize_type == kCopyData ? kSetZero : resize_type);
}

template <typename Real>
PinnedVector<Real>::PinnedVector(const VectorBase<Real>& v) {
  Resize(v.Dim(), kUndefined);
  if (v.Dim() > 0) std::memcpy(this->data_, v.Data(), v.SizeInBytes());
}

template <typename Real>
template <typename OtherReal>
PinnedVector<Real>::PinnedVector(const VectorBase<OtherReal>& v) {
  Resize(v.Dim(), kUndefined);
  for (MatrixIndexT i = 0; i < v.Dim(); ++i) this->data_[i] = static_cast<Real>(v.Data()[i]);
}

template <typename Real>
PinnedVector<Real>::PinnedVector(const PinnedVector<Real>& v)
    : PinnedVector(static_cast<const VectorBase<Real>&>(v)) {}

template <typename Real>
PinnedVector<Real>::PinnedVector(PinnedVector<Real>&& v) noexcept {
  Swap(&v);
}

template <typename Real>
PinnedVector<Real>& PinnedVector<Real>::operator=(const VectorBase<Real>& v) {
  if (&v == this) return *this;
  if (Overlaps(v.Data(), v.SizeInBytes(), buffer_)) {
    PinnedVector<Real> copy(v);  // v views our own storage: copy out first
    Swap(&copy);
    return *this;
  }
  Resize(v.Dim(), kUndefined);
  if (v.Dim() > 0) std::memcpy(this->data_, v.Data(), v.SizeInBytes());
  return *this;
}

template <typename Real>
PinnedVector<Real>& PinnedVector<Real>::operator=(const PinnedVector<Real>& v) {
  return *this = static_cast<const VectorBase<Real>&>(v);
}

template <typename Real>
PinnedVector<Real>& PinnedVector<Real>::operator=(PinnedVector<Real>&& v) noexcept {
  if (this != &v) {
    PinnedVector<Real> old(std::move(*this));
    Swap(&v);
  }
  return *this;
}

template <typename Real>
void PinnedVector<Real>::Resize(MatrixIndexT dim, MatrixResizeType resize_type) {
  CUCTX_CHECK(dim >= 0) << "PinnedVector::Resize: negative dimension " << dim;
  const MatrixIndexT old_dim = this->dim_;
  const size_t bytes = static_cast<size_t>(dim) * sizeof(Real);
  if (dim == 0) {
    buffer_.Reset();
    this->data_ = nullptr;
  } else if (!Reusable(buffer_, bytes)) {
    PinnedBuffer fresh(bytes);
    if (resize_type == kCopyData && old_dim > 0)
      std::memcpy(fresh.Data(), this->data_,
                  static_cast<size_t>(std::min(dim, old_dim)) * sizeof(Real));
    buffer_.Swap(&fresh);
    this->data_ = static_cast<Real*>(buffer_.Data());
  }
  this->dim_ = dim;
  if (dim == 0) return;
  if (resize_type == kSetZero) {
    std::memset(this->data_, 0, bytes);
  } else if (resize_type == kCopyData && dim > old_dim) {
    std::memset(this->data_ + old_dim, 0, static_cast<size_t>(dim - old_dim) * sizeof(Real));
  }
}

template <typename Real>
void PinnedVector<Real>::Swap(PinnedVector<Real>* other) noexcept {
  std::swap(this->data_, other->data_);
  std::swap(this->dim_, other->dim_);
  buffer_.Swap(&other->buffer_);
}

template class PinnedMatrix<float>;
template class PinnedMatrix<double>;
template PinnedMatrix<float>::PinnedMatrix(const MatrixBase<double>&);
template PinnedMatrix<double>::PinnedMatrix(const MatrixBase<float>&);
template class PinnedVector<float>;
template class PinnedVector<double>;
template PinnedVector<float>::PinnedVector(const VectorBase<double>&);
template PinnedVector<double>::PinnedVector(const VectorBase<float>&);

}  // namespace cuctx
