// cudamatrix/cu-compressed-matrix.h: CuCompressedMatrix, a CuMatrix<BaseFloat> held as 8- or
// 16-bit integers with one scale (a memory saver for large activations), and its factory.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_COMPRESSED_MATRIX_H_
#define CUCTX_CUDAMATRIX_CU_COMPRESSED_MATRIX_H_

#include "base/types.h"
#include "cudamatrix/cu-matrix.h"

namespace cuctx {

// Interface of the compressed forms of a CuMatrix<BaseFloat>; the child class (see
// NewCuCompressedMatrix) picks the integer type. Deleting through this interface is fine.
class CuCompressedMatrixBase {
 public:
  // Sets this to a compressed copy of mat, taking its shape (an empty mat leaves this empty).
  virtual void CopyFromMat(const CuMatrixBase<BaseFloat>& mat) = 0;
  // *mat = the values this stands for. *mat must already have this shape (else throws).
  virtual void CopyToMat(CuMatrixBase<BaseFloat>* mat) const = 0;
  virtual int32 NumRows() const = 0;
  virtual int32 NumCols() const = 0;
  virtual ~CuCompressedMatrixBase() = default;
};

// A NumRows() x NumCols() matrix stored as integers of type I (int8, uint8, int16 or uint16),
// packed row-major, standing for the floats scale * i with scale = range / (largest I).
//
// Compression (CopyFromMat) maps x to i = x / scale rounded to nearest (ties to even). With
// truncate, i is clamped to I's range, so inputs beyond [-range, range] (signed I) or [0, range]
// (unsigned I) become the nearest end; a NaN becomes I's minimum. Without truncate the caller
// promises the input is in range; a value beyond it wraps around modulo 2^bits (as in Kaldi), it
// is not clamped. range == 0 (any type) keeps only whether each value is positive, as Kaldi's does:
// the matrix then stands for 1 where x > 0 and 0 elsewhere (NaN included), i.e. Heaviside(x). Every representable value scale * i comes back exactly;
// any in-range x comes back within scale / 2 (plus float rounding).
//
// Memory and streams: in GPU mode (CuDevice::Enabled()) the integers live in device memory from
// the caching allocator and CopyFromMat / CopyToMat are one element-wise kernel each (one thread
// per element, coalesced), asynchronous on this thread's stream. Without a GPU (a difference from
// Kaldi, which refuses to run there) the integers live in host memory and the same arithmetic
// (internal/cu-quantize.h) runs on the host, so both modes give identical integers. The mode must
// not change while an object exists. Not copyable; not thread-safe (one thread at a time).
template <typename I>
class CuCompressedMatrix : public CuCompressedMatrixBase {
 public:
  // scale = range / (largest I). Throws cuctx::Error if range is negative or not finite.
  explicit CuCompressedMatrix(BaseFloat range, bool truncate = true);
  CuCompressedMatrix(const CuCompressedMatrix&) = delete;
  CuCompressedMatrix& operator=(const CuCompressedMatrix&) = delete;
  ~CuCompressedMatrix() override { Destroy(); }

  void CopyFromMat(const CuMatrixBase<BaseFloat>& mat) override;
  void CopyToMat(CuMatrixBase<BaseFloat>* mat) const override;
  MatrixIndexT NumRows() const override { return num_rows_; }
  MatrixIndexT NumCols() const override { return num_cols_; }

 private:
  // Frees the integers and leaves this 0 x 0. Never throws.
  void Destroy() noexcept;

  // The integers (device memory in GPU mode), NumRows() * NumCols() of them; nullptr when empty.
  I* data_ = nullptr;
  // The value of one integer step; 0 means sign-only (range 0).
  BaseFloat scale_;
  bool truncate_;
  MatrixIndexT num_rows_ = 0;
  MatrixIndexT num_cols_ = 0;
};

// Which integer type NewCuCompressedMatrix uses (Kaldi's values, stored as int32 by nnet3).
enum CuCompressedMatrixType {
  kCompressedMatrixInt8 = 1,
  kCompressedMatrixUint8 = 2,
  kCompressedMatrixInt16 = 3,
  kCompressedMatrixUint16 = 4
};

// A new CuCompressedMatrix<I> for type t with the given range and truncate (the caller owns and
// deletes it). Throws cuctx::Error on an unknown type or a range the constructor rejects. (Kaldi's
// factory drops `truncate`; here it is passed on.)
CuCompressedMatrixBase* NewCuCompressedMatrix(CuCompressedMatrixType t, BaseFloat range,
                                              bool truncate = true);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_COMPRESSED_MATRIX_H_
