// matrix/compressed-matrix.cc: encoding, decoding and I/O of the CM, CM2 and CM3 formats.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/compressed-matrix.h"

#include "base/error.h"
#include "base/io-funcs.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace cuctx {

namespace {

constexpr int64 kColHeaderBytes = 8;  // four uint16 percentiles
constexpr int64 kGlobalHeaderBytes = 16;

// What a decoder needs to know about the stored data.
struct EncodedView {
  int32 format;
  float min_value;
  float range;
  int32 num_rows;
  int32 num_cols;
  const uint8* payload;
};

// The arithmetic of the three decoders below is kept exactly as Kaldi evaluates it (float products,
// the 1/65535 constant as a float, the segment scales as doubles) so that decoded values match
// bit for bit.
inline float Uint16ToFloat(float min_value, float range, uint16 value) {
  return min_value + range * 1.52590218966964e-05F * static_cast<float>(value);
}

inline float CharToFloat(float p0, float p25, float p75, float p100, uint8 value) {
  const int v = value;
  if (v <= 64) return static_cast<float>(p0 + ((p25 - p0) * static_cast<float>(v)) * (1 / 64.0));
  if (v <= 192)
    return static_cast<float>(p25 + ((p75 - p25) * static_cast<float>(v - 64)) * (1 / 128.0));
  return static_cast<float>(p75 + ((p100 - p75) * static_cast<float>(v - 192)) * (1 / 63.0));
}

inline uint16 LoadUint16(const uint8* p) {
  uint16 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void StoreUint16(uint16 v, uint8* p) { std::memcpy(p, &v, sizeof(v)); }

// Decodes the block of `num_rows` x `num_cols` starting at (row0, col0); element (i, j) of the
// block goes to out[i * row_step + j * col_step]. Bounds are checked by the callers.
template <typename Real>
void DecodeBlock(const EncodedView& e, int32 row0, int32 col0, int32 num_rows, int32 num_cols,
                 Real* out, int64 row_step, int64 col_step) {
  if (num_rows == 0 || num_cols == 0) return;
  if (e.format == CompressedMatrix::kOneByteWithColHeaders) {
    const uint8* headers = e.payload;
    const uint8* bytes = e.payload + kColHeaderBytes * e.num_cols;
    for (int32 j = 0; j < num_cols; ++j) {
      const int64 col = col0 + j;
      const uint8* h = headers + kColHeaderBytes * col;
      const float p0 = Uint16ToFloat(e.min_value, e.range, LoadUint16(h));
      const float p25 = Uint16ToFloat(e.min_value, e.range, LoadUint16(h + 2));
      const float p75 = Uint16ToFloat(e.min_value, e.range, LoadUint16(h + 4));
      const float p100 = Uint16ToFloat(e.min_value, e.range, LoadUint16(h + 6));
      const uint8* col_bytes = bytes + col * e.num_rows + row0;
      Real* dst = out + j * col_step;
      for (int32 i = 0; i < num_rows; ++i)
        dst[i * row_step] = CharToFloat(p0, p25, p75, p100, col_bytes[i]);
    }
  } else if (e.format == CompressedMatrix::kTwoByte) {
    const float increment = static_cast<float>(e.range * (1.0 / 65535.0));
    for (int32 i = 0; i < num_rows; ++i) {
      const uint8* src = e.payload + 2 * ((static_cast<int64>(row0) + i) * e.num_cols + col0);
      Real* dst = out + i * row_step;
      for (int32 j = 0; j < num_cols; ++j)
        dst[j * col_step] = e.min_value + static_cast<float>(LoadUint16(src + 2 * j)) * increment;
    }
  } else {
    const float increment = static_cast<float>(e.range * (1.0 / 255.0));
    for (int32 i = 0; i < num_rows; ++i) {
      const uint8* src = e.payload + (static_cast<int64>(row0) + i) * e.num_cols + col0;
      Real* dst = out + i * row_step;
      for (int32 j = 0; j < num_cols; ++j)
        dst[j * col_step] = e.min_value + static_cast<float>(src[j]) * increment;
    }
  }
}

// Encoders: the inverse maps with Kaldi's rounding (the +0.499 avoids a bias towards rounding up).
inline uint16 FloatToUint16(float min_value, float range, float value) {
  float f = (value - min_value) / range;
  if (f > 1.0f) f = 1.0f;
  if (f < 0.0f) f = 0.0f;
  return static_cast<uint16>(static_cast<int>(f * 65535 + 0.499));
}

inline uint8 FloatToUint8(float min_value, float range, float value) {
  float f = (value - min_value) / range;
  if (f > 1.0f) f = 1.0f;
  if (f < 0.0f) f = 0.0f;
  return static_cast<uint8>(static_cast<int>(f * 255 + 0.499));
}

inline uint8 FloatToChar(float p0, float p25, float p75, float p100, float value) {
  int ans;
  if (value < p25) {
    float f = (value - p0) / (p25 - p0);
    ans = std::min(64, std::max(0, static_cast<int>(f * 64 + 0.5)));
  } else if (value < p75) {
    float f = (value - p25) / (p75 - p25);
    ans = std::min(192, std::max(64, 64 + static_cast<int>(f * 128 + 0.5)));
  } else {
    float f = (value - p75) / (p100 - p75);
    ans = std::min(255, std::max(192, 192 + static_cast<int>(f * 63 + 0.5)));
  }
  return static_cast<uint8>(ans);
}

// The four percentile codes of one column. They are forced strictly increasing (and kept below
// 65535 where a larger one must follow) so that no segment of the byte map has zero width.
template <typename Real>
void ColumnPercentiles(float min_value, float range, std::vector<Real>* column, uint16 out[4]) {
  std::vector<Real>& s = *column;
  const size_t n = s.size();
  std::sort(s.begin(), s.end());
  auto code = [&](Real v) { return FloatToUint16(min_value, range, static_cast<float>(v)); };
  size_t pos[4];
  if (n >= 5) {
    size_t quarter = n / 4;
    pos[0] = 0;
    pos[1] = quarter;
    pos[2] = 3 * quarter;
    pos[3] = n - 1;
  } else {
    for (size_t k = 0; k < 4; ++k) pos[k] = k;  // positions past n - 1 take "previous + 1"
  }
  const uint16 caps[4] = {65532, 65533, 65534, 65535};
  for (int k = 0; k < 4; ++k) {
    int value;
    if (pos[k] < n) {
      value = code(s[pos[k]]);
      if (k > 0) value = std::max(value, out[k - 1] + 1);
    } else {
      value = out[k - 1] + 1;
    }
    if (k < 3 && pos[k] < n) value = std::min<int>(value, caps[k]);
    out[k] = static_cast<uint16>(value);
  }
}

const char* FormatToken(int32 format) {
  switch (format) {
    case CompressedMatrix::kOneByteWithColHeaders:
      return "CM";
    case CompressedMatrix::kTwoByte:
      return "CM2";
    default:
      return "CM3";
  }
}

// Reads exactly n bytes, growing the buffer as the data arrives so that a corrupt size cannot
// make us allocate more than the stream holds.
void ReadPayload(std::istream& is, int64 n, const std::string& pos, std::vector<uint8>* out) {
  out->clear();
  constexpr int64 kChunk = 1 << 20;
  int64 done = 0;
  while (done < n) {
    int64 want = std::min(kChunk, n - done);
    out->resize(static_cast<size_t>(done + want));
    is.read(reinterpret_cast<char*>(out->data() + done), want);
    done += is.gcount();
    if (is.gcount() != want)
      CUCTX_ERR << "truncated compressed matrix: expected " << n << " data bytes after the header"
                << pos << ", found " << done;
  }
}

}  // namespace

int64 CompressedMatrix::PayloadSize(int32 format, int32 num_rows, int32 num_cols) {
  const int64 rows = num_rows, cols = num_cols;
  switch (format) {
    case kOneByteWithColHeaders:
      return cols * (kColHeaderBytes + rows);
    case kTwoByte:
      return 2 * rows * cols;
    case kOneByte:
      return rows * cols;
    default:
      CUCTX_ERR << "invalid compressed-matrix format " << format;
  }
  return 0;
}

template <typename Real>
void CompressedMatrix::CopyFromMat(const MatrixBase<Real>& mat, CompressionMethod method) {
  if (method < kAutomaticMethod || method > kOneByteZeroOne)
    CUCTX_ERR << "invalid compression method " << static_cast<int>(method) << " (expected 1..7)";
  const int32 rows = mat.NumRows(), cols = mat.NumCols();
  if (rows == 0 || cols == 0) {
    Clear();
    return;
  }
  if (method == kAutomaticMethod) method = rows > 8 ? kSpeechFeature : kTwoByteAuto;

  int32 format;
  float min_value, range;
  switch (method) {
    case kSpeechFeature:
      format = kOneByteWithColHeaders;
      break;
    case kTwoByteAuto:
    case kTwoByteSignedInteger:
      format = kTwoByte;
      break;
    default:
      format = kOneByte;
      break;
  }
  if (method == kTwoByteSignedInteger) {
    min_value = -32768.0f;
    range = 65535.0f;
  } else if (method == kOneByteUnsignedInteger) {
    min_value = 0.0f;
    range = 255.0f;
  } else if (method == kOneByteZeroOne) {
    min_value = 0.0f;
    range = 1.0f;
  } else {
    Real lo = mat(0, 0), hi = mat(0, 0);
    for (int32 r = 0; r < rows; ++r) {
      const Real* row = mat.RowData(r);
      for (int32 c = 0; c < cols; ++c) {
        if (!std::isfinite(row[c]))
          CUCTX_ERR << "cannot compress a matrix holding inf or NaN (element (" << r << ", " << c
                    << ") is " << row[c] << ")";
        lo = std::min(lo, row[c]);
        hi = std::max(hi, row[c]);
      }
    }
    min_value = static_cast<float>(lo);
    float max_value = static_cast<float>(hi);
    // A constant matrix still needs a positive range.
    if (max_value == min_value) max_value = min_value + (1.0 + std::fabs(min_value));
    range = max_value - min_value;
    if (!std::isfinite(min_value) || !std::isfinite(range) || !(range > 0.0f))
      CUCTX_ERR << "cannot compress: values out of float range (min " << lo << ", max " << hi
                << ")";
  }

  std::vector<uint8> payload(static_cast<size_t>(PayloadSize(format, rows, cols)));
  if (format == kOneByteWithColHeaders) {
    uint8* headers = payload.data();
    uint8* bytes = payload.data() + kColHeaderBytes * cols;
    std::vector<Real> column(rows);
    for (int32 c = 0; c < cols; ++c) {
      for (int32 r = 0; r < rows; ++r) column[r] = mat(r, c);
      uint16 p[4];
      ColumnPercentiles(min_value, range, &column, p);
      for (int k = 0; k < 4; ++k) StoreUint16(p[k], headers + kColHeaderBytes * c + 2 * k);
      const float p0 = Uint16ToFloat(min_value, range, p[0]);
      const float p25 = Uint16ToFloat(min_value, range, p[1]);
      const float p75 = Uint16ToFloat(min_value, range, p[2]);
      const float p100 = Uint16ToFloat(min_value, range, p[3]);
      uint8* col_bytes = bytes + static_cast<int64>(c) * rows;
      for (int32 r = 0; r < rows; ++r)
        col_bytes[r] = FloatToChar(p0, p25, p75, p100, static_cast<float>(mat(r, c)));
    }
  } else if (format == kTwoByte) {
    for (int32 r = 0; r < rows; ++r) {
      const Real* row = mat.RowData(r);
      uint8* dst = payload.data() + 2 * static_cast<int64>(r) * cols;
      for (int32 c = 0; c < cols; ++c)
        StoreUint16(FloatToUint16(min_value, range, static_cast<float>(row[c])), dst + 2 * c);
    }
  } else {
    for (int32 r = 0; r < rows; ++r) {
      const Real* row = mat.RowData(r);
      uint8* dst = payload.data() + static_cast<int64>(r) * cols;
      for (int32 c = 0; c < cols; ++c)
        dst[c] = FloatToUint8(min_value, range, static_cast<float>(row[c]));
    }
  }
  format_ = format;
  min_value_ = min_value;
  range_ = range;
  num_rows_ = rows;
  num_cols_ = cols;
  payload_.swap(payload);
}

template <typename Real>
void CompressedMatrix::CopyToMat(MatrixBase<Real>* mat, MatrixTransposeType trans) const {
  CUCTX_CHECK(mat != nullptr) << "null destination matrix";
  const bool transposed = (trans == kTrans);
  const int32 want_rows = transposed ? num_cols_ : num_rows_;
  const int32 want_cols = transposed ? num_rows_ : num_cols_;
  if (mat->NumRows() != want_rows || mat->NumCols() != want_cols)
    CUCTX_ERR << "CompressedMatrix::CopyToMat: destination is " << mat->NumRows() << " x "
              << mat->NumCols() << ", expected " << want_rows << " x " << want_cols
              << (transposed ? " (transposed)" : "");
  if (num_rows_ == 0 || num_cols_ == 0) return;
  EncodedView e{format_, min_value_, range_, num_rows_, num_cols_, payload_.data()};
  const int64 stride = mat->Stride();
  if (transposed)
    DecodeBlock(e, 0, 0, num_rows_, num_cols_, mat->Data(), 1, stride);
  else
    DecodeBlock(e, 0, 0, num_rows_, num_cols_, mat->Data(), stride, 1);
}

template <typename Real>
void CompressedMatrix::CopyToMat(int32 row_offset, int32 col_offset, MatrixBase<Real>* dest) const {
  CUCTX_CHECK(dest != nullptr) << "null destination matrix";
  if (row_offset < 0 || col_offset < 0 ||
      static_cast<int64>(row_offset) + dest->NumRows() > num_rows_ ||
      static_cast<int64>(col_offset) + dest->NumCols() > num_cols_)
    CUCTX_ERR << "CompressedMatrix::CopyToMat: block of " << dest->NumRows() << " x "
              << dest->NumCols() << " at (" << row_offset << ", " << col_offset
              << ") does not fit in " << num_rows_ << " x " << num_cols_;
  if (dest->NumRows() == 0 || dest->NumCols() == 0) return;
  EncodedView e{format_, min_value_, range_, num_rows_, num_cols_, payload_.data()};
  DecodeBlock(e, row_offset, col_offset, dest->NumRows(), dest->NumCols(), dest->Data(),
              dest->Stride(), 1);
}

template <typename Real>
void CompressedMatrix::CopyRowToVec(MatrixIndexT row, VectorBase<Real>* v) const {
  CUCTX_CHECK(v != nullptr) << "null destination vector";
  if (row < 0 || row >= num_rows_)
    CUCTX_ERR << "CompressedMatrix::CopyRowToVec: row " << row << " out of range [0, " << num_rows_
              << ")";
  if (v->Dim() != num_cols_)
    CUCTX_ERR << "CompressedMatrix::CopyRowToVec: vector has dim " << v->Dim() << ", expected "
              << num_cols_;
  EncodedView e{format_, min_value_, range_, num_rows_, num_cols_, payload_.data()};
  DecodeBlock(e, row, 0, 1, num_cols_, v->Data(), 0, 1);
}

template <typename Real>
void CompressedMatrix::CopyColToVec(MatrixIndexT col, VectorBase<Real>* v) const {
  CUCTX_CHECK(v != nullptr) << "null destination vector";
  if (col < 0 || col >= num_cols_)
    CUCTX_ERR << "CompressedMatrix::CopyColToVec: column " << col << " out of range [0, "
              << num_cols_ << ")";
  if (v->Dim() != num_rows_)
    CUCTX_ERR << "CompressedMatrix::CopyColToVec: vector has dim " << v->Dim() << ", expected "
              << num_rows_;
  EncodedView e{format_, min_value_, range_, num_rows_, num_cols_, payload_.data()};
  DecodeBlock(e, 0, col, num_rows_, 1, v->Data(), 1, 0);
}

void CompressedMatrix::Write(std::ostream& os, bool binary) const {
  if (binary) {
    WriteToken(os, binary, FormatToken(format_));
    char header[kGlobalHeaderBytes];
    std::memcpy(header, &min_value_, 4);
    std::memcpy(header + 4, &range_, 4);
    std::memcpy(header + 8, &num_rows_, 4);
    std::memcpy(header + 12, &num_cols_, 4);
    os.write(header, kGlobalHeaderBytes);
    if (!payload_.empty())
      os.write(reinterpret_cast<const char*>(payload_.data()),
               static_cast<std::streamsize>(payload_.size()));
  } else {
    Matrix<float> temp(num_rows_, num_cols_, kUndefined);
    CopyToMat(&temp);
    temp.Write(os, binary);
  }
  if (os.fail()) CUCTX_ERR << "failed to write compressed matrix to stream";
}

void CompressedMatrix::Read(std::istream& is, bool binary) {
  if (!binary || Peek(is, binary) != 'C') {
    // Not compressed data: an ordinary matrix, compressed on the way in (as Kaldi does).
    Matrix<float> temp;
    temp.Read(is, binary);
    CopyFromMat(temp);
    return;
  }
  const std::string start = StreamPosition(is);
  std::string token;
  ReadToken(is, binary, &token);
  int32 format;
  if (token == "CM") {
    format = kOneByteWithColHeaders;
  } else if (token == "CM2") {
    format = kTwoByte;
  } else if (token == "CM3") {
    format = kOneByte;
  } else {
    CUCTX_ERR << "expected token \"CM\", \"CM2\" or \"CM3\"" << start << ", found \""
              << PrintableWord(token) << "\"";
  }
  const std::string header_pos = StreamPosition(is);
  char header[kGlobalHeaderBytes];
  is.read(header, kGlobalHeaderBytes);
  if (is.gcount() != kGlobalHeaderBytes)
    CUCTX_ERR << "truncated compressed-matrix header" << header_pos << ": expected "
              << kGlobalHeaderBytes << " bytes, found " << is.gcount();
  float min_value, range;
  int32 rows, cols;
  std::memcpy(&min_value, header, 4);
  std::memcpy(&range, header + 4, 4);
  std::memcpy(&rows, header + 8, 4);
  std::memcpy(&cols, header + 12, 4);
  if (rows < 0 || cols < 0)
    CUCTX_ERR << "compressed matrix (" << token << ") has invalid size " << rows << " x " << cols
              << header_pos;
  std::vector<uint8> payload;
  ReadPayload(is, PayloadSize(format, rows, cols), StreamPosition(is), &payload);
  if (rows == 0 || cols == 0) {
    Clear();
    return;
  }
  format_ = format;
  min_value_ = min_value;
  range_ = range;
  num_rows_ = rows;
  num_cols_ = cols;
  payload_.swap(payload);
}

void CompressedMatrix::Scale(float alpha) {
  min_value_ *= alpha;
  range_ *= alpha;
}

void CompressedMatrix::Swap(CompressedMatrix* other) {
  std::swap(format_, other->format_);
  std::swap(min_value_, other->min_value_);
  std::swap(range_, other->range_);
  std::swap(num_rows_, other->num_rows_);
  std::swap(num_cols_, other->num_cols_);
  payload_.swap(other->payload_);
}

void CompressedMatrix::Clear() {
  format_ = kOneByteWithColHeaders;
  min_value_ = 0.0f;
  range_ = 0.0f;
  num_rows_ = 0;
  num_cols_ = 0;
  payload_.clear();
}

#define CUCTX_INSTANTIATE_COMPRESSED_(Real)                                                \
  template void CompressedMatrix::CopyFromMat(const MatrixBase<Real>&, CompressionMethod); \
  template void CompressedMatrix::CopyToMat(MatrixBase<Real>*, MatrixTransposeType) const; \
  template void CompressedMatrix::CopyToMat(int32, int32, MatrixBase<Real>*) const;        \
  template void CompressedMatrix::CopyRowToVec(MatrixIndexT, VectorBase<Real>*) const;     \
  template void CompressedMatrix::CopyColToVec(MatrixIndexT, VectorBase<Real>*) const
CUCTX_INSTANTIATE_COMPRESSED_(float);
CUCTX_INSTANTIATE_COMPRESSED_(double);
#undef CUCTX_INSTANTIATE_COMPRESSED_

}  // namespace cuctx
