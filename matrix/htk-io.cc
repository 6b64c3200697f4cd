// matrix/htk-io.cc: HTK feature files (big-endian header and floats) and CMU Sphinx features.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix.h"

#include <cstdint>
#include <cstring>
#include <istream>
#include <ostream>
#include <vector>

namespace cuctx {

namespace {

// HTK parameter-kind qualifiers and the base kinds we cannot hold as a float matrix (HTK's
// HParm.h numbering).
constexpr uint16 kHtkCompressed = 02000;  // _C
constexpr uint16 kHtkChecksum = 010000;   // _K
constexpr uint16 kHtkVq = 040000;         // _V
constexpr int kHtkWaveform = 0, kHtkIrefc = 5, kHtkDiscrete = 10;

// Big-endian encoding and decoding, independent of the host's byte order.
void PutBig(uint32_t value, int bytes, char* out) {
  for (int i = 0; i < bytes; ++i)
    out[i] = static_cast<char>((value >> (8 * (bytes - 1 - i))) & 0xff);
}
uint32_t GetBig(const char* in, int bytes) {
  uint32_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | static_cast<unsigned char>(in[i]);
  return value;
}
uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Writes M's rows as big-endian floats; false if the stream fails.
template <typename Real>
bool WriteBigEndianRows(std::ostream& os, const MatrixBase<Real>& M) {
  std::vector<char> row(static_cast<size_t>(M.NumCols()) * 4);
  for (MatrixIndexT r = 0; r < M.NumRows(); ++r) {
    const Real* data = M.RowData(r);
    for (MatrixIndexT c = 0; c < M.NumCols(); ++c)
      PutBig(FloatBits(static_cast<float>(data[c])), 4, &row[4 * static_cast<size_t>(c)]);
    os.write(row.data(), static_cast<std::streamsize>(row.size()));
    if (os.fail()) return false;
  }
  return true;
}

}  // namespace

template <typename Real>
bool ReadHtk(std::istream& is, Matrix<Real>* M, HtkHeader* header_ptr) {
  char raw[12];
  is.read(raw, sizeof(raw));
  if (is.fail()) {
    CUCTX_WARN << "ReadHtk: could not read the 12-byte HTK header";
    return false;
  }
  HtkHeader h;
  h.mNSamples = static_cast<int32>(GetBig(raw, 4));
  h.mSamplePeriod = static_cast<int32>(GetBig(raw + 4, 4));
  h.mSampleSize = static_cast<int16>(GetBig(raw + 8, 2));
  h.mSampleKind = static_cast<uint16>(GetBig(raw + 10, 2));

  const bool has_checksum = (h.mSampleKind & kHtkChecksum) != 0;
  h.mSampleKind &= static_cast<uint16>(~kHtkChecksum);  // the checksum is not kept or written
  const int base_kind = h.mSampleKind & 077;
  if (h.mSampleKind & (kHtkCompressed | kHtkVq))
    CUCTX_ERR << "ReadHtk: compressed (_C) or vector-quantized (_V) HTK features are not "
              << "supported (parameter kind 0" << std::oct << h.mSampleKind << std::dec << ")";
  if (base_kind == kHtkWaveform || base_kind == kHtkIrefc || base_kind == kHtkDiscrete)
    CUCTX_ERR << "ReadHtk: HTK base kind " << base_kind
              << " (waveform, IREFC or discrete) is not a float feature matrix";
  if (h.mNSamples < 0)
    CUCTX_ERR << "ReadHtk: negative frame count " << h.mNSamples << " in the HTK header";
  if (h.mSampleSize < 0 || h.mSampleSize % 4 != 0 || (h.mSampleSize == 0 && h.mNSamples != 0))
    CUCTX_ERR << "ReadHtk: sample size " << h.mSampleSize << " bytes is not a positive multiple "
              << "of 4 (float features)";

  const MatrixIndexT rows = h.mSampleSize == 0 ? 0 : h.mNSamples;
  const MatrixIndexT cols = rows == 0 ? 0 : h.mSampleSize / 4;
  Matrix<Real> result(rows, cols, kUndefined);
  std::vector<char> row(static_cast<size_t>(cols) * 4);
  for (MatrixIndexT r = 0; r < rows; ++r) {
    is.read(row.data(), static_cast<std::streamsize>(row.size()));
    if (is.fail()) {
      CUCTX_WARN << "ReadHtk: the HTK file ends in frame " << r << " of " << rows;
      return false;
    }
    Real* out = result.RowData(r);
    for (MatrixIndexT c = 0; c < cols; ++c)
      out[c] = static_cast<Real>(BitsFloat(GetBig(&row[4 * static_cast<size_t>(c)], 4)));
  }
  if (has_checksum) {
    char checksum[2];
    is.read(checksum, sizeof(checksum));
    if (is.fail()) CUCTX_WARN << "ReadHtk: could not read the trailing HTK checksum (ignored)";
  }
  M->Swap(&result);
  if (header_ptr != nullptr) *header_ptr = h;
  return true;
}

template <typename Real>
bool WriteHtk(std::ostream& os, const MatrixBase<Real>& M, HtkHeader htk_hdr) {
  if (htk_hdr.mNSamples != M.NumRows() ||
      static_cast<int64>(htk_hdr.mSampleSize) != 4 * static_cast<int64>(M.NumCols()))
    CUCTX_ERR << "WriteHtk: the header says " << htk_hdr.mNSamples << " frames of "
              << htk_hdr.mSampleSize << " bytes but the matrix is " << M.NumRows() << "x"
              << M.NumCols() << " (needs " << M.NumRows() << " frames of " << 4 * M.NumCols()
              << " bytes)";
  char raw[12];
  PutBig(static_cast<uint32_t>(htk_hdr.mNSamples), 4, raw);
  PutBig(static_cast<uint32_t>(htk_hdr.mSamplePeriod), 4, raw + 4);
  PutBig(static_cast<uint16_t>(htk_hdr.mSampleSize), 2, raw + 8);
  PutBig(htk_hdr.mSampleKind, 2, raw + 10);
  os.write(raw, sizeof(raw));
  if (os.fail() || !WriteBigEndianRows(os, M)) {
    CUCTX_WARN << "WriteHtk: could not write the HTK feature file";
    return false;
  }
  return true;
}

template <typename Real>
bool WriteSphinx(std::ostream& os, const MatrixBase<Real>& M) {
  const int32 count = M.NumRows() * M.NumCols();
  os.write(reinterpret_cast<const char*>(&count), sizeof(count));
  if (os.fail() || !WriteBigEndianRows(os, M)) {
    CUCTX_WARN << "WriteSphinx: could not write the Sphinx feature file";
    return false;
  }
  return true;
}

#define CUCTX_INSTANTIATE_HTK(R)                                          \
  template bool ReadHtk(std::istream&, Matrix<R>*, HtkHeader*);           \
  template bool WriteHtk(std::ostream&, const MatrixBase<R>&, HtkHeader); \
  template bool WriteSphinx(std::ostream&, const MatrixBase<R>&)

CUCTX_INSTANTIATE_HTK(float);
CUCTX_INSTANTIATE_HTK(double);

}  // namespace cuctx
