// base/pickle-writer.cc: the opcodes of PickleWriter (see pickle-writer.h).
// SPDX-License-Identifier: Apache-2.0
//
// Opcodes used (Python's pickletools names them): PROTO 0x80, STOP '.', NONE 'N', NEWTRUE 0x88,
// NEWFALSE 0x89, BININT 'J' (4-byte little-endian signed), LONG1 0x8a (1-byte length, then the
// little-endian two's-complement bytes), BINFLOAT 'G' (8-byte big-endian IEEE double), BINUNICODE
// 'X' (4-byte little-endian length, then UTF-8), EMPTY_LIST ']', EMPTY_DICT '}', MARK '(',
// APPENDS 'e', SETITEMS 'u', TUPLE2 0x86.
#include "base/pickle-writer.h"

#include "base/error.h"

#include <cstring>
#include <limits>

namespace cuctx {

namespace {

constexpr unsigned char kProto = 0x80, kStop = '.', kNone = 'N', kTrue = 0x88, kFalse = 0x89,
                        kBinInt = 'J', kLong1 = 0x8a, kBinFloat = 'G', kBinUnicode = 'X',
                        kEmptyList = ']', kEmptyDict = '}', kMark = '(', kAppends = 'e',
                        kSetItems = 'u', kTuple2 = 0x86;

}  // namespace

PickleWriter::PickleWriter(std::ostream* os) : os_(os) {
  CUCTX_CHECK(os_ != nullptr) << "PickleWriter needs a stream";
  Op(kProto);
  Op(2);
}

void PickleWriter::Bytes(const unsigned char* data, size_t n) {
  os_->write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n));
}

void PickleWriter::Value() {
  if (open_.empty()) ++top_values_;
}

void PickleWriter::None() {
  Op(kNone);
  Value();
}

void PickleWriter::Bool(bool value) {
  Op(value ? kTrue : kFalse);
  Value();
}

void PickleWriter::Int(int64_t value) {
  if (value >= std::numeric_limits<int32_t>::min() &&
      value <= std::numeric_limits<int32_t>::max()) {
    const uint32_t u = static_cast<uint32_t>(static_cast<int32_t>(value));
    unsigned char b[4];
    for (int i = 0; i < 4; ++i) b[i] = static_cast<unsigned char>(u >> (8 * i));
    Op(kBinInt);
    Bytes(b, 4);
  } else {
    // Eight two's-complement bytes hold every int64; the reader accepts a non-minimal length.
    const uint64_t u = static_cast<uint64_t>(value);
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(u >> (8 * i));
    Op(kLong1);
    Op(8);
    Bytes(b, 8);
  }
  Value();
}

void PickleWriter::UInt(uint64_t value) {
  if (value <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    Int(static_cast<int64_t>(value));
    return;
  }
  // The top bit is set: a ninth zero byte keeps the number positive.
  unsigned char b[9];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(value >> (8 * i));
  b[8] = 0;
  Op(kLong1);
  Op(9);
  Bytes(b, 9);
  Value();
}

void PickleWriter::Float(double value) {
  uint64_t bits = 0;
  static_assert(sizeof(bits) == sizeof(value), "double must be 64 bits");
  std::memcpy(&bits, &value, sizeof(bits));
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(bits >> (8 * (7 - i)));
  Op(kBinFloat);
  Bytes(b, 8);
  Value();
}

void PickleWriter::Str(const std::string& value) {
  CUCTX_CHECK(value.size() <= std::numeric_limits<uint32_t>::max())
      << "PickleWriter: a string of " << value.size() << " bytes is too long";
  const uint32_t n = static_cast<uint32_t>(value.size());
  unsigned char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<unsigned char>(n >> (8 * i));
  Op(kBinUnicode);
  Bytes(b, 4);
  Bytes(reinterpret_cast<const unsigned char*>(value.data()), value.size());
  Value();
}

void PickleWriter::BeginList() {
  Op(kEmptyList);
  Op(kMark);
  open_.push_back('l');
}

void PickleWriter::EndList() {
  CUCTX_CHECK(!open_.empty() && open_.back() == 'l') << "PickleWriter: EndList without BeginList";
  Op(kAppends);
  open_.pop_back();
  Value();
}

void PickleWriter::BeginDict() {
  Op(kEmptyDict);
  Op(kMark);
  open_.push_back('d');
}

void PickleWriter::EndDict() {
  CUCTX_CHECK(!open_.empty() && open_.back() == 'd') << "PickleWriter: EndDict without BeginDict";
  Op(kSetItems);
  open_.pop_back();
  Value();
}

void PickleWriter::Tuple2() {
  Op(kTuple2);
  // Two values became one.
  if (open_.empty()) --top_values_;
}

void PickleWriter::Finish() {
  CUCTX_CHECK(open_.empty()) << "PickleWriter: " << open_.size()
                             << " list(s)/dict(s) still open at Finish()";
  CUCTX_CHECK(top_values_ == 1) << "PickleWriter: the pickle holds " << top_values_
                                << " top-level values; expected exactly 1";
  Op(kStop);
}

}  // namespace cuctx
