// matrix/compressed-matrix.h: lossy 8- and 16-bit
// matrix storage in Kaldi's CM, CM2 and CM3 formats.
// SPDX-License-Identifier: Apache-2.0
//
// ON-DISK LAYOUT (binary; byte-exact with Kaldi, native little-endian):
//   token    "CM " (one byte per element, per-column headers), "CM2 " (uint16 per element) or
//            "CM3 " (uint8 per element);
//   header   raw, without size bytes: float min_value, float range, int32 num_rows, int32 num_cols;
//   CM       num_cols column headers of four uint16 (percentile_0, _25, _75, _100), then the
//            num_rows * num_cols bytes column by column;
//   CM2      num_rows * num_cols uint16 row by row;  CM3: num_rows * num_cols uint8 row by row.
// Decoding:
//   uint16 u -> min_value + range * u / 65535 (column percentiles of CM and the CM2 elements);
//   uint8 b (CM3) -> min_value + range * b / 255;
//   byte b of a CM column with percentiles p0 <= p25 <= p75 <= p100 (decoded as above) is piecewise
//   linear in three segments: b in [0, 64] spans p0..p25, (64, 192] spans p25..p75 and (192, 255]
//   spans p75..p100.
// The decoding arithmetic (float, with the constants in the same places) follows Kaldi's so that
// a file decodes to the same floats under both.
// An empty matrix is written as "CM " and a 16-byte header of zeros (Kaldi writes 20 bytes there,
// of which a reader consumes 16; we write the 16 it reads). Text mode reads and writes an ordinary
// (uncompressed) float matrix, as Kaldi does.
#ifndef CUCTX_MATRIX_COMPRESSED_MATRIX_H_
#define CUCTX_MATRIX_COMPRESSED_MATRIX_H_

#include "base/types.h"
#include "matrix/matrix-common.h"

#include <istream>
#include <ostream>
#include <vector>

namespace cuctx {

template <typename Real>
class MatrixBase;
template <typename Real>
class VectorBase;

// How CopyFromMat chooses the format and the value range (values as in Kaldi).
enum CompressionMethod {
  kAutomaticMethod = 1,  // kSpeechFeature when the matrix has more than 8 rows, else kTwoByteAuto.
  kSpeechFeature = 2,    // CM: one byte per element, 8-byte header per column.
  kTwoByteAuto = 3,      // CM2 over [min, max] of the matrix.
  kTwoByteSignedInteger = 4,    // CM2 over [-32768, 32767] (16-bit PCM).
  kOneByteAuto = 5,             // CM3 over [min, max] of the matrix.
  kOneByteUnsignedInteger = 6,  // CM3 over [0, 255].
  kOneByteZeroOne = 7           // CM3 over [0, 1].
};

// A matrix held in one of the three compressed encodings. It owns its encoded bytes (a copy is a
// deep copy); it does not keep the original values. Not thread-safe for concurrent modification;
// const methods may run concurrently.
class CompressedMatrix {
 public:
  // The storage format, as numbered in Kaldi's global header.
  enum DataFormat { kOneByteWithColHeaders = 1, kTwoByte = 2, kOneByte = 3 };

  CompressedMatrix() = default;

  // Compresses `mat`; see CopyFromMat.
  template <typename Real>
  explicit CompressedMatrix(const MatrixBase<Real>& mat,
                            CompressionMethod method = kAutomaticMethod) {
    CopyFromMat(mat, method);
  }

  // Replaces the contents with a compressed copy of `mat`. An empty matrix (no rows or no columns)
  // gives an empty CompressedMatrix. Throws cuctx::Error if `method` is not one of the enum values,
  // or if an automatic range is needed and `mat` holds inf or NaN.
  template <typename Real>
  void CopyFromMat(const MatrixBase<Real>& mat, CompressionMethod method = kAutomaticMethod);

  // ---- sub-range (matrix/compressed-matrix-range.cc) --------------------------------------------
  // The num_rows x num_cols block of `mat` starting at (row_offset, col_offset), copied without
  // decompressing: it keeps mat's format, global range and (CM) column headers, so it decodes to
  // exactly the corresponding block of mat's decoded values. It does not share memory with mat.
  // With allow_padding == true, rows outside [0, mat.NumRows()) are allowed and repeat the first
  // or last row of mat (as Kaldi does; columns must still fit). A block with no rows or no columns
  // gives an empty matrix. Throws cuctx::Error on negative sizes or a block outside mat (columns
  // always, rows only when padding is off).
  CompressedMatrix(const CompressedMatrix& mat, const MatrixIndexT row_offset,
                   const MatrixIndexT num_rows, const MatrixIndexT col_offset,
                   const MatrixIndexT num_cols, bool allow_padding = false);
  CompressedMatrix(const CompressedMatrix&) = default;
  CompressedMatrix& operator=(const CompressedMatrix&) = default;
  // ---- end sub-range ---------------------------------------------------------------------------

  template <typename Real>
  CompressedMatrix& operator=(const MatrixBase<Real>& mat) {
    CopyFromMat(mat);
    return *this;
  }

  // Decompresses into `mat`, which must have this size (transposed when trans == kTrans);
  // throws cuctx::Error naming both sizes otherwise.
  template <typename Real>
  void CopyToMat(MatrixBase<Real>* mat, MatrixTransposeType trans = kNoTrans) const;

  // Decompresses the block starting at (row_offset, col_offset) with the size of `dest`.
  template <typename Real>
  void CopyToMat(int32 row_offset, int32 col_offset, MatrixBase<Real>* dest) const;

  // Decompresses one row (v->Dim() == NumCols()) or one column (v->Dim() == NumRows()).
  template <typename Real>
  void CopyRowToVec(MatrixIndexT row, VectorBase<Real>* v) const;
  template <typename Real>
  void CopyColToVec(MatrixIndexT col, VectorBase<Real>* v) const;

  // Binary: the layout above. Text: a float matrix in Matrix's text form (not compressed).
  void Write(std::ostream& os, bool binary) const;

  // Binary: "CM", "CM2" or "CM3"; anything else is read as an ordinary matrix and compressed
  // (kAutomaticMethod). Text: an ordinary matrix, compressed. Throws cuctx::Error on a bad token,
  // negative sizes, sizes that cannot fit the rest of the stream, or truncation, saying where.
  void Read(std::istream& is, bool binary);

  MatrixIndexT NumRows() const { return num_rows_; }
  MatrixIndexT NumCols() const { return num_cols_; }
  // Format of the stored data; kOneByteWithColHeaders for an empty matrix.
  DataFormat Format() const { return static_cast<DataFormat>(format_); }
  // Size of the encoded data without the token: 16 bytes of header plus the payload.
  int64 DataSize() const { return 16 + static_cast<int64>(payload_.size()); }

  // Multiplies every decoded value by alpha (scales min_value and range, as Kaldi does).
  void Scale(float alpha);

  void Swap(CompressedMatrix* other);
  // Makes the matrix empty.
  void Clear();

 private:
  // Payload bytes for a format and size (column headers included); throws on overflow.
  static int64 PayloadSize(int32 format, int32 num_rows, int32 num_cols);

  int32 format_ = kOneByteWithColHeaders;
  float min_value_ = 0.0f;
  float range_ = 0.0f;
  int32 num_rows_ = 0;
  int32 num_cols_ = 0;
  // Everything after the 16-byte header, exactly as on disk.
  std::vector<uint8> payload_;
};

}  // namespace cuctx

#endif  // CUCTX_MATRIX_COMPRESSED_MATRIX_H_
