// matrix/compressed-matrix-range.cc: CompressedMatrix's sub-range constructor (no re-encoding).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/compressed-matrix.h"

#include <algorithm>
#include <cstring>

namespace cuctx {

CompressedMatrix::CompressedMatrix(const CompressedMatrix& mat, const MatrixIndexT row_offset,
                                   const MatrixIndexT num_rows, const MatrixIndexT col_offset,
                                   const MatrixIndexT num_cols, bool allow_padding) {
  CUCTX_CHECK(num_rows >= 0 && num_cols >= 0)
      << "CompressedMatrix: negative sub-range size " << num_rows << " x " << num_cols;
  CUCTX_CHECK(col_offset >= 0 && static_cast<int64>(col_offset) + num_cols <= mat.num_cols_)
      << "CompressedMatrix: columns [" << col_offset << ", "
      << static_cast<int64>(col_offset) + num_cols << ") outside a matrix of " << mat.num_cols_
      << " columns";
  if (!allow_padding) {
    CUCTX_CHECK(row_offset >= 0 && static_cast<int64>(row_offset) + num_rows <= mat.num_rows_)
        << "CompressedMatrix: rows [" << row_offset << ", "
        << static_cast<int64>(row_offset) + num_rows << ") outside a matrix of " << mat.num_rows_
        << " rows (allow_padding is false)";
  }
  if (num_rows == 0 || num_cols == 0) return;  // empty, as default-constructed
  // Here num_cols > 0 fits in mat, so mat has rows to copy or repeat.

  format_ = mat.format_;
  min_value_ = mat.min_value_;
  range_ = mat.range_;
  num_rows_ = num_rows;
  num_cols_ = num_cols;
  payload_.resize(PayloadSize(format_, num_rows, num_cols));
  // Source row of result row r: clamped into the source when padding.
  auto source_row = [&](MatrixIndexT r) {
    return std::min<int64>(std::max<int64>(static_cast<int64>(row_offset) + r, 0),
                           mat.num_rows_ - 1);
  };
  const uint8* src = mat.payload_.data();
  uint8* dst = payload_.data();
  if (format_ == kOneByteWithColHeaders) {
    // Column headers (8 bytes each), then the bytes column by column.
    constexpr int64 kHeader = 8;
    std::memcpy(dst, src + kHeader * col_offset, kHeader * num_cols);
    const uint8* src_data = src + kHeader * mat.num_cols_;
    uint8* dst_data = dst + kHeader * num_cols;
    for (MatrixIndexT c = 0; c < num_cols; ++c) {
      const uint8* src_col = src_data + static_cast<int64>(col_offset + c) * mat.num_rows_;
      uint8* dst_col = dst_data + static_cast<int64>(c) * num_rows;
      if (!allow_padding || (row_offset >= 0 && row_offset + num_rows <= mat.num_rows_)) {
        std::memcpy(dst_col, src_col + row_offset, num_rows);
      } else {
        for (MatrixIndexT r = 0; r < num_rows; ++r) dst_col[r] = src_col[source_row(r)];
      }
    }
  } else {
    // Row-major elements of 2 (CM2) or 1 (CM3) bytes.
    const int64 elem = format_ == kTwoByte ? 2 : 1;
    for (MatrixIndexT r = 0; r < num_rows; ++r)
      std::memcpy(dst + elem * r * num_cols,
                  src + elem * (source_row(r) * mat.num_cols_ + col_offset), elem * num_cols);
  }
}

}  // namespace cuctx
