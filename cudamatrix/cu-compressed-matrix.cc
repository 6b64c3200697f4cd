// cudamatrix/cu-compressed-matrix.cc: CuCompressedMatrix<I> (kernels on the GPU, the same
// arithmetic on the host otherwise) and NewCuCompressedMatrix.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-compressed-matrix.h"

#include "base/error.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-quantize.h"
#include "cudamatrix/internal/cu-storage.h"

#include <cmath>
#include <cstddef>
#include <type_traits>

namespace cuctx {

template <typename I>
CuCompressedMatrix<I>::CuCompressedMatrix(BaseFloat range, bool truncate)
    : scale_(range / internal::QuantRange<I>::kMax), truncate_(truncate) {
  CUCTX_CHECK(std::isfinite(range) && range >= 0)
      << "CuCompressedMatrix: range must be finite and >= 0 (got " << range << ")";
}

template <typename I>
void CuCompressedMatrix<I>::Destroy() noexcept {
  internal::FreeStorage(data_);
  data_ = nullptr;
  num_rows_ = 0;
  num_cols_ = 0;
}

template <typename I>
void CuCompressedMatrix<I>::CopyFromMat(const CuMatrixBase<BaseFloat>& mat) {
  internal::CuOpScope op_scope("CuCompressedMatrix::CopyFromMat");
  if (mat.NumRows() != num_rows_ || mat.NumCols() != num_cols_) {
    Destroy();
    const size_t count = static_cast<size_t>(mat.NumRows()) * static_cast<size_t>(mat.NumCols());
    data_ = static_cast<I*>(internal::AllocStorage(count * sizeof(I)));
    num_rows_ = mat.NumRows();
    num_cols_ = mat.NumCols();
  }
  if (num_rows_ == 0 || num_cols_ == 0) return;
  // Kaldi passes the reciprocal computed in double and rounded to float.
  const float inv_scale = scale_ == 0 ? 0.0f : static_cast<float>(1.0 / scale_);
  const bool sign_only = scale_ == 0;
  if (internal::RunOnGpu([&](CuStream s) {
        if (sign_only)
          LaunchCompressMatSign(mat.Dim(), mat.Data(), data_, s);
        else
          LaunchCompressMat(mat.Dim(), mat.Data(), inv_scale, truncate_, data_, s);
      }))
    return;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const float* src = mat.RowData(r);
    I* dst = data_ + static_cast<size_t>(r) * num_cols_;
    if (sign_only) {
      for (MatrixIndexT c = 0; c < num_cols_; ++c) dst[c] = internal::QuantizePositive<I>(src[c]);
    } else {
      for (MatrixIndexT c = 0; c < num_cols_; ++c)
        dst[c] = internal::QuantizeValue<I>(src[c], inv_scale, truncate_);
    }
  }
}

template <typename I>
void CuCompressedMatrix<I>::CopyToMat(CuMatrixBase<BaseFloat>* mat) const {
  internal::CuOpScope op_scope("CuCompressedMatrix::CopyToMat");
  CUCTX_CHECK(mat != nullptr) << "CuCompressedMatrix::CopyToMat: null destination";
  CUCTX_CHECK(mat->NumRows() == num_rows_ && mat->NumCols() == num_cols_)
      << "CuCompressedMatrix::CopyToMat: destination " << internal::ShapeText(*mat)
      << " does not match the compressed matrix " << internal::ShapeText(num_rows_, num_cols_);
  if (num_rows_ == 0 || num_cols_ == 0) return;
  // Sign-only data stands for 0 and 1 themselves.
  const float scale = scale_ == 0 ? 1.0f : scale_;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchUncompressMat(mat->Dim(), data_, scale, mat->Data(), s); }))
    return;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const I* src = data_ + static_cast<size_t>(r) * num_cols_;
    float* dst = mat->RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c)
      dst[c] = internal::DequantizeValue<I>(src[c], scale);
  }
}

CuCompressedMatrixBase* NewCuCompressedMatrix(CuCompressedMatrixType t, BaseFloat range,
                                              bool truncate) {
  switch (t) {
    case kCompressedMatrixInt8:
      return new CuCompressedMatrix<int8>(range, truncate);
    case kCompressedMatrixUint8:
      return new CuCompressedMatrix<uint8>(range, truncate);
    case kCompressedMatrixInt16:
      return new CuCompressedMatrix<int16>(range, truncate);
    case kCompressedMatrixUint16:
      return new CuCompressedMatrix<uint16>(range, truncate);
  }
  CUCTX_ERR << "NewCuCompressedMatrix: unknown compressed-matrix type " << static_cast<int>(t);
  return nullptr;
}

template class CuCompressedMatrix<int8>;
template class CuCompressedMatrix<uint8>;
template class CuCompressedMatrix<int16>;
template class CuCompressedMatrix<uint16>;

}  // namespace cuctx
