// matrix/matrix-io.cc: Kaldi-format Read/Write of MatrixBase, Matrix, VectorBase and Vector.
// SPDX-License-Identifier: Apache-2.0
//
// Formats (byte-exact with Kaldi): binary "FM "/"DM " + int32 rows + int32 cols + the rows without
// padding, "FV "/"DV " + int32 dim + the elements; text " [\n  1 2 \n  3 4 ]\n" and " [ 1 2 ]\n".
// Binary readers also accept the other precision, and Matrix::Read accepts CM/CM2/CM3.
#include "base/error.h"
#include "base/io-funcs.h"
#include "matrix/compressed-matrix.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

namespace cuctx {

namespace {

template <typename Real>
struct OtherPrecision {
  typedef double Type;
};
template <>
struct OtherPrecision<double> {
  typedef float Type;
};

template <typename Real>
const char* MatrixToken() {
  return sizeof(Real) == 4 ? "FM" : "DM";
}
template <typename Real>
const char* VectorToken() {
  return sizeof(Real) == 4 ? "FV" : "DV";
}

// Reads an int32 dimension of a binary or text object and checks it is not negative.
int32 ReadDimension(std::istream& is, bool binary, const char* what, const char* token) {
  const std::string pos = StreamPosition(is);
  int32 value = 0;
  try {
    ReadBasicType(is, binary, &value);
  } catch (const Error& e) {
    CUCTX_ERR << "reading the " << what << " of a \"" << token << "\" object" << pos << ": "
              << e.what();
  }
  if (value < 0)
    CUCTX_ERR << "negative " << what << " " << value << " in \"" << token << "\"" << pos;
  return value;
}

// Shows a possibly long or binary word in an error message.
std::string Printable(const std::string& word) { return PrintableWord(word); }

inline float StrToReal(const char* s, char** end, float*) { return std::strtof(s, end); }
inline double StrToReal(const char* s, char** end, double*) { return std::strtod(s, end); }

// Parses one whole word as a number; accepts inf, infinity and nan in any case, with a sign.
// Returns false for anything else, including a finite value too large for Real.
template <typename Real>
bool ParseReal(const std::string& word, Real* out) {
  if (word.empty()) return false;
  const char* s = word.c_str();
  char* end = nullptr;
  errno = 0;
  Real value = StrToReal(s, &end, static_cast<Real*>(nullptr));
  if (end == s || *end != '\0') return false;
  if (errno == ERANGE && std::abs(value) == std::numeric_limits<Real>::infinity()) return false;
  *out = value;
  return true;
}

// Reads text matrices and vectors character by character straight from the stream buffer (an
// istream peek/get per character pays for a sentry each time, which made large text files slow).
// It counts what it consumes, so error positions cost nothing until an error is reported.
class TextCursor {
 public:
  static constexpr int kEof = std::char_traits<char>::eof();

  explicit TextCursor(std::istream& is) : is_(is), buf_(is.rdbuf()) {
    std::streampos here = is.good() ? is.tellg() : std::streampos(-1);
    base_ = (here == std::streampos(-1)) ? -1 : static_cast<int64>(here);
    is.clear(is.rdstate() & ~std::ios::failbit);
  }
  int Peek() { return buf_ == nullptr ? kEof : buf_->sgetc(); }
  void Skip() {
    if (buf_ != nullptr && buf_->sbumpc() != kEof) ++consumed_;
  }
  // Reads characters up to whitespace, end of stream or one of `stops` (not consumed).
  void ReadWord(const char* stops, std::string* word) {
    word->clear();
    for (int c = Peek(); c != kEof && !std::isspace(c) && std::strchr(stops, c) == nullptr;
         c = Peek()) {
      word->push_back(static_cast<char>(c));
      Skip();
    }
  }
  // After the closing ']': consumes the newline the writer put there ("\n" or "\r\n").
  void EatLineEnd() {
    if (Peek() == '\r') Skip();
    if (Peek() == '\n') Skip();
    if (Peek() == kEof) is_.setstate(std::ios::eofbit);
  }
  // Byte offset of the read position in the stream, or -1 when the stream cannot tell.
  int64 Offset() const { return base_ < 0 ? -1 : base_ + consumed_; }

 private:
  std::istream& is_;
  std::streambuf* buf_;
  int64 base_ = -1;
  int64 consumed_ = 0;
};

// " at byte N" for an offset from TextCursor::Offset(), or "" when unknown.
std::string AtByte(int64 offset) {
  return offset < 0 ? std::string() : " at byte " + std::to_string(offset);
}

// The opening of a text matrix or vector: returns false for the empty form "[]", true after "[".
bool ReadOpenBracket(std::istream& is, const char* what) {
  is >> std::ws;
  const std::string pos = StreamPosition(is);
  std::string word;
  if (!(is >> word))
    CUCTX_ERR << "expected '[' to start a text " << what << pos << ", found end of stream";
  if (word == "[]") return false;
  if (word != "[")
    CUCTX_ERR << "expected '[' to start a text " << what << pos << ", found \"" << Printable(word)
              << "\"";
  return true;
}

template <typename Real>
void ReadTextMatrix(std::istream& is, Matrix<Real>* m) {
  is >> std::ws;
  const std::string start = StreamPosition(is);
  // Old Kaldi text files may carry "FM rows cols" before the bracket; the sizes are checked below.
  int c = is.peek();
  int32 header_rows = -1, header_cols = -1;
  if (c == 'F' || c == 'D') {
    std::string token;
    ReadToken(is, false, &token);
    if (token != "FM" && token != "DM")
      CUCTX_ERR << "expected '[' to start a text matrix" << start << ", found \""
                << Printable(token) << "\"";
    header_rows = ReadDimension(is, false, "row count", token.c_str());
    header_cols = ReadDimension(is, false, "column count", token.c_str());
  }
  std::vector<Real> values;
  int64 num_rows = 0, num_cols = -1, row_values = 0;
  if (ReadOpenBracket(is, "matrix")) {
    TextCursor cur(is);
    std::string word;
    while (true) {
      c = cur.Peek();
      if (c == TextCursor::kEof)
        CUCTX_ERR << "unterminated text matrix (started" << start << "): end of stream"
                  << AtByte(cur.Offset()) << " before ']'";
      if (c == ']' || c == '\n' || c == ';') {
        cur.Skip();
        if (row_values > 0) {
          if (num_cols < 0) num_cols = row_values;
          if (row_values != num_cols)
            CUCTX_ERR << "ragged text matrix (started" << start << "): row " << num_rows << " has "
                      << row_values << " values, expected " << num_cols << AtByte(cur.Offset());
          ++num_rows;
          row_values = 0;
        }
        if (c == ']') {
          cur.EatLineEnd();
          break;
        }
        continue;
      }
      if (std::isspace(c)) {
        cur.Skip();
        continue;
      }
      const int64 offset = cur.Offset();
      cur.ReadWord("];", &word);
      Real value;
      if (!ParseReal(word, &value))
        CUCTX_ERR << "bad number \"" << Printable(word) << "\" in text matrix row " << num_rows
                  << AtByte(offset);
      values.push_back(value);
      ++row_values;
    }
  }
  if (num_cols < 0) num_cols = 0;
  if (num_rows == 0) num_cols = 0;
  if (header_rows >= 0 && (header_rows != num_rows || header_cols != num_cols) &&
      !(header_rows == 0 && num_rows == 0))
    CUCTX_ERR << "text matrix" << start << " declares " << header_rows << " x " << header_cols
              << " but holds " << num_rows << " x " << num_cols;
  if (num_rows > std::numeric_limits<int32>::max())
    CUCTX_ERR << "text matrix" << start << " has too many rows";
  m->Resize(static_cast<MatrixIndexT>(num_rows), static_cast<MatrixIndexT>(num_cols), kUndefined);
  for (int64 r = 0; r < num_rows; ++r) {
    Real* row = m->RowData(static_cast<MatrixIndexT>(r));
    for (int64 j = 0; j < num_cols; ++j) row[j] = values[r * num_cols + j];
  }
}

template <typename Real>
void ReadTextVector(std::istream& is, Vector<Real>* v) {
  is >> std::ws;
  const std::string start = StreamPosition(is);
  std::vector<Real> values;
  if (ReadOpenBracket(is, "vector")) {
    TextCursor cur(is);
    std::string word;
    while (true) {
      int c = cur.Peek();
      if (c == TextCursor::kEof)
        CUCTX_ERR << "unterminated text vector (started" << start << "): end of stream"
                  << AtByte(cur.Offset()) << " before ']'";
      if (c == ']') {
        cur.Skip();
        cur.EatLineEnd();
        break;
      }
      if (c == '\n' || c == '\r')
        CUCTX_ERR << "newline inside a text vector" << AtByte(cur.Offset())
                  << " (is this a matrix?); the vector started" << start;
      if (std::isspace(c)) {
        cur.Skip();
        continue;
      }
      const int64 offset = cur.Offset();
      cur.ReadWord("]", &word);
      Real value;
      if (!ParseReal(word, &value))
        CUCTX_ERR << "bad number \"" << Printable(word) << "\" in text vector at element "
                  << values.size() << AtByte(offset);
      values.push_back(value);
    }
  }
  v->Resize(static_cast<MatrixIndexT>(values.size()), kUndefined);
  for (size_t i = 0; i < values.size(); ++i) (*v)(static_cast<MatrixIndexT>(i)) = values[i];
}

// Reads `bytes` raw bytes into `dst`; throws, naming the object and where it started, if the
// stream ends early.
void ReadRaw(std::istream& is, char* dst, int64 bytes, const char* token, const std::string& pos) {
  is.read(dst, bytes);
  if (is.gcount() != bytes)
    CUCTX_ERR << "truncated \"" << token << "\" data" << pos << ": expected " << bytes
              << " more bytes, found " << is.gcount();
}

// Makes sure a declared payload can be in the stream before anything is allocated for it.
void CheckPayloadFits(std::istream& is, int64 bytes, const char* token, const std::string& what,
                      const std::string& pos) {
  int64 left = BytesLeftInStream(is);
  if (left >= 0 && bytes > left)
    CUCTX_ERR << "truncated or corrupt \"" << token << "\"" << pos << ": " << what << " needs "
              << bytes << " bytes of data but the stream has only " << left << " left";
}

// When the stream cannot tell its length and the payload is large (over 64 MiB), reads its
// `bytes` into *buffer, grown 16 MiB at a time, so that a corrupt size runs into the end of the
// data before it can make us allocate an absurd amount; returns true. Otherwise reads nothing and
// returns false: the caller allocates the object and reads into it directly.
bool ReadUnsizedPayload(std::istream& is, int64 bytes, const char* token, const std::string& pos,
                        std::vector<char>* buffer) {
  if (BytesLeftInStream(is) >= 0 || bytes <= (int64(1) << 26)) return false;
  for (int64 done = 0; done < bytes;) {
    const int64 want = std::min<int64>(int64(1) << 24, bytes - done);
    buffer->resize(static_cast<size_t>(done + want));
    ReadRaw(is, buffer->data() + done, want, token, pos);
    done += want;
  }
  return true;
}

template <typename Real>
void ResizeOrThrow(Matrix<Real>* m, MatrixIndexT rows, MatrixIndexT cols, const char* token) {
  try {
    m->Resize(rows, cols, kUndefined);
  } catch (const std::bad_alloc&) {
    CUCTX_ERR << "cannot allocate a " << rows << " x " << cols << " matrix read from \"" << token
              << "\"";
  }
}

template <typename Real>
void ReadBinaryMatrix(std::istream& is, Matrix<Real>* m) {
  typedef typename OtherPrecision<Real>::Type Other;
  const std::string start = StreamPosition(is);
  const int c = Peek(is, true);
  if (c == 'C') {
    CompressedMatrix cm;
    cm.Read(is, true);
    ResizeOrThrow(m, cm.NumRows(), cm.NumCols(), "CM");
    cm.CopyToMat(m);
    return;
  }
  if (c == MatrixToken<Other>()[0]) {
    Matrix<Other> other;
    other.Read(is, true);
    ResizeOrThrow(m, other.NumRows(), other.NumCols(), MatrixToken<Other>());
    m->CopyFromMat(other);
    return;
  }
  const char* my_token = MatrixToken<Real>();
  if (c == std::char_traits<char>::eof())
    CUCTX_ERR << "expected a binary matrix (token \"" << my_token << "\")" << start
              << ", found end of stream";
  std::string token;
  ReadToken(is, true, &token);
  if (token != my_token)
    CUCTX_ERR << "expected token \"" << my_token << "\" (or \"" << MatrixToken<Other>()
              << "\", \"CM\", \"CM2\", \"CM3\")" << start << ", found \"" << Printable(token)
              << "\"";
  const int32 rows = ReadDimension(is, true, "row count", my_token);
  const int32 cols = ReadDimension(is, true, "column count", my_token);
  const int64 row_bytes = static_cast<int64>(cols) * sizeof(Real);
  const std::string data_pos = StreamPosition(is);
  CheckPayloadFits(is, row_bytes * rows, my_token,
                   "a " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix",
                   data_pos);
  std::vector<char> buffer;
  if (ReadUnsizedPayload(is, row_bytes * rows, my_token, data_pos, &buffer)) {
    ResizeOrThrow(m, rows, cols, my_token);
    for (int32 r = 0; r < rows; ++r)
      std::memcpy(m->RowData(r), buffer.data() + r * row_bytes, static_cast<size_t>(row_bytes));
    return;
  }
  ResizeOrThrow(m, rows, cols, my_token);
  if (row_bytes == 0) return;
  for (int32 r = 0; r < rows; ++r)
    ReadRaw(is, reinterpret_cast<char*>(m->RowData(r)), row_bytes, my_token, data_pos);
}

template <typename Real>
void ReadBinaryVector(std::istream& is, Vector<Real>* v) {
  typedef typename OtherPrecision<Real>::Type Other;
  const std::string start = StreamPosition(is);
  const int c = Peek(is, true);
  if (c == VectorToken<Other>()[0]) {
    Vector<Other> other;
    other.Read(is, true);
    v->Resize(other.Dim(), kUndefined);
    v->CopyFromVec(other);
    return;
  }
  const char* my_token = VectorToken<Real>();
  if (c == std::char_traits<char>::eof())
    CUCTX_ERR << "expected a binary vector (token \"" << my_token << "\")" << start
              << ", found end of stream";
  std::string token;
  ReadToken(is, true, &token);
  if (token != my_token)
    CUCTX_ERR << "expected token \"" << my_token << "\" (or \"" << VectorToken<Other>() << "\")"
              << start << ", found \"" << Printable(token) << "\"";
  const int32 dim = ReadDimension(is, true, "dimension", my_token);
  const int64 bytes = static_cast<int64>(dim) * sizeof(Real);
  const std::string data_pos = StreamPosition(is);
  CheckPayloadFits(is, bytes, my_token, "a vector of dimension " + std::to_string(dim), data_pos);
  std::vector<char> buffer;
  if (ReadUnsizedPayload(is, bytes, my_token, data_pos, &buffer)) {
    v->Resize(dim, kUndefined);
    std::memcpy(v->Data(), buffer.data(), static_cast<size_t>(bytes));
    return;
  }
  try {
    v->Resize(dim, kUndefined);
  } catch (const std::bad_alloc&) {
    CUCTX_ERR << "cannot allocate a vector of dimension " << dim << " read from \"" << my_token
              << "\"";
  }
  if (bytes > 0) ReadRaw(is, reinterpret_cast<char*>(v->Data()), bytes, my_token, data_pos);
}

}  // namespace

template <typename Real>
void MatrixBase<Real>::Write(std::ostream& os, bool binary) const {
  if (!os.good()) CUCTX_ERR << "cannot write a matrix: the output stream is not good";
  if (binary) {
    WriteToken(os, binary, MatrixToken<Real>());
    WriteBasicType(os, binary, static_cast<int32>(num_rows_));
    WriteBasicType(os, binary, static_cast<int32>(num_cols_));
    const std::streamsize row_bytes = static_cast<std::streamsize>(num_cols_) * sizeof(Real);
    if (row_bytes > 0) {
      if (stride_ == num_cols_) {
        os.write(reinterpret_cast<const char*>(data_), row_bytes * num_rows_);
      } else {
        for (MatrixIndexT r = 0; r < num_rows_; ++r)
          os.write(reinterpret_cast<const char*>(RowData(r)), row_bytes);
      }
    }
  } else if (num_rows_ == 0 || num_cols_ == 0) {
    os << " [ ]\n";
  } else {
    os << " [";
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      os << "\n  ";
      const Real* row = RowData(r);
      for (MatrixIndexT c = 0; c < num_cols_; ++c) os << row[c] << ' ';
    }
    os << "]\n";
  }
  if (os.fail()) CUCTX_ERR << "failed to write a " << num_rows_ << " x " << num_cols_ << " matrix";
}

template <typename Real>
void Matrix<Real>::Read(std::istream& is, bool binary, bool add) {
  if (add) {
    Matrix<Real> tmp;
    tmp.Read(is, binary, false);
    if (this->NumRows() == 0 || this->NumCols() == 0) {
      this->Swap(&tmp);
      return;
    }
    if (tmp.NumRows() != this->NumRows() || tmp.NumCols() != this->NumCols()) {
      // As in Kaldi, adding an empty matrix read from the stream changes nothing.
      if (tmp.NumRows() == 0) return;
      CUCTX_ERR << "Matrix::Read with add: the stream holds " << tmp.NumRows() << " x "
                << tmp.NumCols() << ", this matrix is " << this->NumRows() << " x "
                << this->NumCols();
    }
    this->AddMat(1.0, tmp);
    return;
  }
  if (binary)
    ReadBinaryMatrix(is, this);
  else
    ReadTextMatrix(is, this);
}

template <typename Real>
void MatrixBase<Real>::Read(std::istream& is, bool binary, bool add) {
  Matrix<Real> tmp;
  tmp.Read(is, binary, false);
  if (tmp.NumRows() != num_rows_ || tmp.NumCols() != num_cols_)
    CUCTX_ERR << "MatrixBase::Read: the stream holds a " << tmp.NumRows() << " x " << tmp.NumCols()
              << " matrix, this one is " << num_rows_ << " x " << num_cols_;
  if (add)
    AddMat(1.0, tmp);
  else
    CopyFromMat(tmp);
}

template <typename Real>
void VectorBase<Real>::Write(std::ostream& os, bool binary) const {
  if (!os.good()) CUCTX_ERR << "cannot write a vector: the output stream is not good";
  if (binary) {
    WriteToken(os, binary, VectorToken<Real>());
    WriteBasicType(os, binary, static_cast<int32>(dim_));
    if (dim_ > 0)
      os.write(reinterpret_cast<const char*>(data_),
               static_cast<std::streamsize>(dim_) * sizeof(Real));
  } else {
    os << " [ ";
    for (MatrixIndexT i = 0; i < dim_; ++i) os << data_[i] << ' ';
    os << "]\n";
  }
  if (os.fail()) CUCTX_ERR << "failed to write a vector of dimension " << dim_;
}

template <typename Real>
void Vector<Real>::Read(std::istream& is, bool binary, bool add) {
  if (add) {
    Vector<Real> tmp;
    tmp.Read(is, binary, false);
    if (this->Dim() == 0) {
      this->Swap(&tmp);
      return;
    }
    if (tmp.Dim() != this->Dim())
      CUCTX_ERR << "Vector::Read with add: the stream holds dimension " << tmp.Dim()
                << ", this vector has " << this->Dim();
    this->AddVec(1.0, tmp);
    return;
  }
  if (binary)
    ReadBinaryVector(is, this);
  else
    ReadTextVector(is, this);
}

template <typename Real>
void VectorBase<Real>::Read(std::istream& is, bool binary, bool add) {
  Vector<Real> tmp;
  tmp.Read(is, binary, false);
  if (tmp.Dim() != dim_)
    CUCTX_ERR << "VectorBase::Read: the stream holds dimension " << tmp.Dim()
              << ", this vector has " << dim_;
  if (add)
    AddVec(1.0, tmp);
  else
    CopyFromVec(tmp);
}

// Only the I/O members are instantiated here; the classes are instantiated with the rest of their
// members in matrix.cc and vector.cc.
#define CUCTX_INSTANTIATE_IO_(Real)                                 \
  template void MatrixBase<Real>::Write(std::ostream&, bool) const; \
  template void MatrixBase<Real>::Read(std::istream&, bool, bool);  \
  template void Matrix<Real>::Read(std::istream&, bool, bool);      \
  template void VectorBase<Real>::Write(std::ostream&, bool) const; \
  template void VectorBase<Real>::Read(std::istream&, bool, bool);  \
  template void Vector<Real>::Read(std::istream&, bool, bool)
CUCTX_INSTANTIATE_IO_(float);
CUCTX_INSTANTIATE_IO_(double);
#undef CUCTX_INSTANTIATE_IO_

}  // namespace cuctx
