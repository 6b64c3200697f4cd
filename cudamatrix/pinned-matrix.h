// cudamatrix/pinned-matrix.h: CPU matrices and vectors whose storage is page-locked host memory.
// SPDX-License-Identifier: Apache-2.0
//
// PinnedMatrix<Real> and PinnedVector<Real> are ordinary CPU classes (they derive from MatrixBase
// and VectorBase, so every CPU operation and every function taking a MatrixBase/VectorBase works on
// them) whose storage is a PinnedBuffer. Copies between them and the GPU (cu-copy.h, and the Cu
// classes' CopyFromMat/CopyToMat) therefore go straight to the DMA engine without staging, at full
// bus bandwidth. Use them for data that crosses the bus often: feature batches, output posteriors.
//
// Storage comes from PinnedHostAllocator::Get() when the object is created or resized: page-locked
// memory of the selected GPU, or ordinary memory without a GPU (see cu-pinned.h), so the classes
// work in CPU-only builds and processes. PageLocked() tells which.
//
// Layout is that of Matrix/Vector: row-major, and with kDefaultStride rows are padded so that each
// starts 16-byte aligned; an empty matrix or vector has Data() == nullptr.
//
// Thread-safety: as Matrix/Vector (none internally). Precision: instantiated for float and double.
#ifndef CUCTX_CUDAMATRIX_PINNED_MATRIX_H_
#define CUCTX_CUDAMATRIX_PINNED_MATRIX_H_

#include "base/types.h"
#include "cudamatrix/cu-pinned.h"
#include "matrix/matrix-common.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

namespace cuctx {

// A matrix that owns page-locked storage. Deep-copyable and movable; Resize and Swap change its
// shape. Errors as Matrix: a negative dimension is a cuctx::Error; allocation failures are those
// of PinnedHostAllocator::Allocate.
template <typename Real>
class PinnedMatrix : public MatrixBase<Real> {
 public:
  PinnedMatrix() {}
  // rows x cols, zeroed unless resize_type == kUndefined (kCopyData acts as kSetZero here).
  PinnedMatrix(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type = kSetZero,
               MatrixStrideType stride_type = kDefaultStride);
  // A copy of M (either precision), with the default stride.
  explicit PinnedMatrix(const MatrixBase<Real>& M);
  template <typename OtherReal>
  explicit PinnedMatrix(const MatrixBase<OtherReal>& M);
  PinnedMatrix(const PinnedMatrix<Real>& M);
  PinnedMatrix(PinnedMatrix<Real>&& M) noexcept;
  ~PinnedMatrix() = default;

  // Deep copy (resizes *this to M's shape); move takes M's storage and leaves M empty.
  PinnedMatrix<Real>& operator=(const PinnedMatrix<Real>& M);
  PinnedMatrix<Real>& operator=(const MatrixBase<Real>& M);
  PinnedMatrix<Real>& operator=(PinnedMatrix<Real>&& M) noexcept;

  // Changes the shape. kSetZero zeroes, kUndefined leaves the contents undefined, kCopyData keeps
  // the overlapping top-left block and zeroes the rest. kSetZero and kUndefined keep the current
  // block when the new shape fits in it (and it came from the allocator PinnedHostAllocator::Get()
  // returns now); kCopyData always moves to a new block. Throws cuctx::Error if a dimension is
  // negative.
  void Resize(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type = kSetZero,
              MatrixStrideType stride_type = kDefaultStride);
  // Exchanges storage and shape with *other (no copy).
  void Swap(PinnedMatrix<Real>* other) noexcept;

  // True when the storage is page-locked (a GPU was selected when it was allocated).
  bool PageLocked() const { return buffer_.PageLocked(); }
  // The underlying block (empty for an empty matrix).
  const PinnedBuffer& Buffer() const { return buffer_; }

 private:
  // Makes *this rows x cols with fresh storage (contents undefined).
  void Init(MatrixIndexT rows, MatrixIndexT cols, MatrixStrideType stride_type);

  PinnedBuffer buffer_;
};

// A vector that owns page-locked storage. Deep-copyable and movable.
template <typename Real>
class PinnedVector : public VectorBase<Real> {
 public:
  PinnedVector() {}
  // `dim` elements, zeroed unless resize_type == kUndefined. Throws if dim < 0.
  explicit PinnedVector(MatrixIndexT dim, MatrixResizeType resize_type = kSetZero);
  // A copy of v (either precision).
  explicit PinnedVector(const VectorBase<Real>& v);
  template <typename OtherReal>
  explicit PinnedVector(const VectorBase<OtherReal>& v);
  PinnedVector(const PinnedVector<Real>& v);
  PinnedVector(PinnedVector<Real>&& v) noexcept;
  ~PinnedVector() = default;

  PinnedVector<Real>& operator=(const PinnedVector<Real>& v);
  PinnedVector<Real>& operator=(const VectorBase<Real>& v);
  PinnedVector<Real>& operator=(PinnedVector<Real>&& v) noexcept;

  // Changes the dimension. kSetZero zeroes, kUndefined leaves the contents undefined, kCopyData
  // keeps the first min(old, new) elements and zeroes the rest. Every type keeps the current
  // block when the new size fits in it (and it came from the allocator PinnedHostAllocator::Get()
  // returns now). Throws cuctx::Error if dim < 0.
  void Resize(MatrixIndexT dim, MatrixResizeType resize_type = kSetZero);
  void Swap(PinnedVector<Real>* other) noexcept;

  bool PageLocked() const { return buffer_.PageLocked(); }
  const PinnedBuffer& Buffer() const { return buffer_; }

 private:
  PinnedBuffer buffer_;
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_PINNED_MATRIX_H_
