// util/kaldi-holder.h: Holders, the classes through which tables (util/kaldi-table.h) read and
// write one value: KaldiObjectHolder (anything with Kaldi's Read/Write: Matrix, Vector,
// CompressedMatrix, GeneralMatrix, SparseMatrix, CuMatrix, CuVector, ...), BasicHolder (int32,
// float, double, bool, ...), BasicVectorHolder, BasicVectorVectorHolder, BasicPairVectorHolder,
// TokenHolder, TokenVectorHolder and HtkMatrixHolder.
// SPDX-License-Identifier: Apache-2.0
//
// The interface every holder has (Kaldi's):
//   typedef ... T;                                     the value type
//   static bool Write(std::ostream&, bool binary, const T&);   writes the binary header ("\0B")
//                                                      where the format has one, then the value
//   bool Read(std::istream&);                          reads the header and a value
//   static bool IsReadInBinary();
//   T& Value();  void Clear();  void Swap(Holder*);
//   bool ExtractRange(const Holder& other, const std::string& range);   (scp "[...]" ranges)
// cuctx's holders report malformed data by throwing cuctx::Error with the reason (the tables add
// the specifier, key and byte offset); a holder written for Kaldi that returns false instead works
// too. Write returns false if the stream failed and throws for a value the format cannot hold (a
// token with whitespace).
//
// Formats (byte-exact with Kaldi; "WBT" is WriteBasicType of base/io-funcs.h):
//   BasicHolder            binary: "\0B" WBT(v); text: WBT(v) "\n" (WBT writes "v ").
//   BasicVectorHolder      binary: "\0B" WBT(int32 n) WBT(v_i)...; text: "v_0 v_1 ... \n".
//   BasicVectorVectorHolder binary: "\0B" WBT(int32 n) then per inner vector WBT(int32 m) and its
//                          elements; text: each inner vector's elements then "; ", then "\n"
//                          ("1 2 ; 3 ; \n").
//   BasicPairVectorHolder  binary: "\0B" WBT(int32 n) then WBT(first) WBT(second) per pair; text:
//                          pairs separated by "; ", then "\n" ("1 2 ; 3 4 \n").
//   TokenHolder            "token\n" in both modes (no header).
//   TokenVectorHolder      "t1 t2 t3\n" in both modes (no header).
//   KaldiObjectHolder      "\0B" then the object's binary Write; text: the object's text Write.
// Holders are not thread-safe; each table owns its own.
#ifndef CUCTX_UTIL_KALDI_HOLDER_H_
#define CUCTX_UTIL_KALDI_HOLDER_H_

#include "base/error.h"
#include "base/io-funcs.h"
#include "base/text-utils.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {

// Fills *out with the part of `input` that `range` names, for scp entries such as
// "feats.ark:1234[0:99]" (rows 0..99) or "[0:99,10:19]" (rows and columns; inclusive ends; an
// empty part means all). Defined for Matrix<float>/Matrix<double>; for other types returns false
// after a warning (Kaldi's behaviour). Throws cuctx::Error for a malformed or out-of-range range.
template <class T>
bool ExtractObjectRange(const T& /*input*/, const std::string& range, T* /*out*/) {
  CUCTX_WARN << "ranges (\"[" << range << "]\") are not supported for this type of object";
  return false;
}
template <>
bool ExtractObjectRange(const Matrix<float>& input, const std::string& range, Matrix<float>* out);
template <>
bool ExtractObjectRange(const Matrix<double>& input, const std::string& range, Matrix<double>* out);

// Splits "file.ark:12[0:9]" into "file.ark:12" and "0:9". Returns false for a malformed range
// ("[" without a final "]"); an rxfilename without one gives an empty range.
bool ExtractRangeSpecifier(const std::string& rxfilename_with_range, std::string* data_rxfilename,
                           std::string* range);

template <class KaldiType>
class KaldiObjectHolder {
 public:
  typedef KaldiType T;
  KaldiObjectHolder() = default;
  KaldiObjectHolder(const KaldiObjectHolder&) = delete;
  KaldiObjectHolder& operator=(const KaldiObjectHolder&) = delete;

  static bool Write(std::ostream& os, bool binary, const T& t) {
    InitKaldiOutputStream(os, binary);
    t.Write(os, binary);
    return os.good();
  }
  bool Read(std::istream& is) {
    t_.reset(new T);
    bool binary = false;
    if (!InitKaldiInputStream(is, &binary))
      CUCTX_ERR << "a '\\0' byte not followed by 'B' where a binary header was expected";
    t_->Read(is, binary);
    return true;
  }
  static bool IsReadInBinary() { return true; }
  T& Value() {
    if (!t_) CUCTX_ERR << "KaldiObjectHolder::Value() called with no object read";
    return *t_;
  }
  void Clear() { t_.reset(); }
  void Swap(KaldiObjectHolder* other) { t_.swap(other->t_); }
  bool ExtractRange(const KaldiObjectHolder& other, const std::string& range) {
    if (!other.t_) CUCTX_ERR << "ExtractRange called on an empty holder";
    t_.reset(new T);
    return ExtractObjectRange(*other.t_, range, t_.get());
  }

 private:
  std::unique_ptr<T> t_;
};

namespace internal {

// Text forms: skips spaces and tabs (not newlines) and returns the next character (-1 at end).
int SkipBlanks(std::istream& is);
// Text forms: skips blanks and consumes a '\n'; throws, naming what was found, if there is none.
void ExpectNewline(std::istream& is, const char* holder);
[[noreturn]] void ThrowNoRange(const char* holder);
// Reads the binary header; throws if it is malformed.
bool ReadHolderHeader(std::istream& is);
// Checks that a count read from a binary stream is not negative and, where the stream knows its
// length, that n elements of at least min_bytes_each bytes fit in what is left.
void CheckCount(std::istream& is, int32 n, int64 min_bytes_each, const char* holder);

}  // namespace internal

template <class BasicType>
class BasicHolder {
 public:
  typedef BasicType T;
  BasicHolder() : t_(static_cast<T>(-1)) {}
  BasicHolder(const BasicHolder&) = delete;
  BasicHolder& operator=(const BasicHolder&) = delete;

  static bool Write(std::ostream& os, bool binary, const T& t) {
    InitKaldiOutputStream(os, binary);
    WriteBasicType(os, binary, t);
    if (!binary) os << '\n';
    return os.good();
  }
  bool Read(std::istream& is) {
    const bool binary = internal::ReadHolderHeader(is);
    if (!binary && internal::SkipBlanks(is) == '\n')
      CUCTX_ERR << "empty line where a value was expected" << StreamPosition(is);
    ReadBasicType(is, binary, &t_);
    if (!binary) internal::ExpectNewline(is, "BasicHolder");
    return true;
  }
  static bool IsReadInBinary() { return true; }
  T& Value() { return t_; }
  void Clear() {}
  void Swap(BasicHolder* other) { std::swap(t_, other->t_); }
  bool ExtractRange(const BasicHolder&, const std::string&) {
    internal::ThrowNoRange("BasicHolder");
  }

 private:
  T t_;
};

template <class BasicType>
class BasicVectorHolder {
 public:
  typedef std::vector<BasicType> T;
  BasicVectorHolder() = default;
  BasicVectorHolder(const BasicVectorHolder&) = delete;
  BasicVectorHolder& operator=(const BasicVectorHolder&) = delete;

  static bool Write(std::ostream& os, bool binary, const T& t) {
    InitKaldiOutputStream(os, binary);
    if (binary) {
      if (t.size() > static_cast<size_t>(INT32_MAX)) CUCTX_ERR << "vector too long for the format";
      WriteBasicType(os, binary, static_cast<int32>(t.size()));
    }
    for (const BasicType& v : t) WriteBasicType(os, binary, v);
    if (!binary) os << '\n';
    return os.good();
  }
  bool Read(std::istream& is) {
    t_.clear();
    if (internal::ReadHolderHeader(is)) {
      int32 n = 0;
      ReadBasicType(is, true, &n);
      internal::CheckCount(is, n, 1 + sizeof(BasicType), "BasicVectorHolder");
      for (int32 i = 0; i < n; ++i) {
        BasicType v;
        ReadBasicType(is, true, &v);
        t_.push_back(v);
      }
      return true;
    }
    for (;;) {
      const int c = internal::SkipBlanks(is);
      if (c == '\n') {
        is.get();
        return true;
      }
      if (c == -1) CUCTX_ERR << "end of stream inside a text vector (no final newline)";
      BasicType v;
      ReadBasicType(is, false, &v);
      t_.push_back(v);
    }
  }
  static bool IsReadInBinary() { return true; }
  T& Value() { return t_; }
  void Clear() { t_.clear(); }
  void Swap(BasicVectorHolder* other) { t_.swap(other->t_); }
  bool ExtractRange(const BasicVectorHolder&, const std::string&) {
    internal::ThrowNoRange("BasicVectorHolder");
  }

 private:
  T t_;
};

template <class BasicType>
class BasicVectorVectorHolder {
 public:
  typedef std::vector<std::vector<BasicType>> T;
  BasicVectorVectorHolder() = default;
  BasicVectorVectorHolder(const BasicVectorVectorHolder&) = delete;
  BasicVectorVectorHolder& operator=(const BasicVectorVectorHolder&) = delete;

  static bool Write(std::ostream& os, bool binary, const T& t) {
    InitKaldiOutputStream(os, binary);
    if (binary) {
      WriteBasicType(os, binary, static_cast<int32>(t.size()));
      for (const auto& inner : t) {
        WriteBasicType(os, binary, static_cast<int32>(inner.size()));
        for (const BasicType& v : inner) WriteBasicType(os, binary, v);
      }
    } else {
      for (const auto& inner : t) {
        for (const BasicType& v : inner) WriteBasicType(os, binary, v);
        os << "; ";
      }
      os << '\n';
    }
    return os.good();
  }
  bool Read(std::istream& is) {
    t_.clear();
    if (internal::ReadHolderHeader(is)) {
      int32 n = 0;
      ReadBasicType(is, true, &n);
      internal::CheckCount(is, n, 5, "BasicVectorVectorHolder");
      for (int32 i = 0; i < n; ++i) {
        t_.emplace_back();
        std::vector<BasicType>& inner = t_.back();
        int32 m = 0;
        ReadBasicType(is, true, &m);
        internal::CheckCount(is, m, 1 + sizeof(BasicType), "BasicVectorVectorHolder");
        for (int32 j = 0; j < m; ++j) {
          BasicType v;
          ReadBasicType(is, true, &v);
          inner.push_back(v);
        }
      }
      return true;
    }
    std::vector<BasicType> cur;
    for (;;) {
      const int c = internal::SkipBlanks(is);
      if (c == -1) CUCTX_ERR << "end of stream inside a text vector of vectors";
      if (c == '\n') {
        if (!cur.empty())
          CUCTX_ERR << "no ';' before the newline in a text vector of vectors"
                    << StreamPosition(is);
        is.get();
        return true;
      }
      if (c == ';') {
        is.get();
        t_.push_back(cur);
        cur.clear();
        continue;
      }
      BasicType v;
      ReadBasicType(is, false, &v);
      cur.push_back(v);
    }
  }
  static bool IsReadInBinary() { return true; }
  T& Value() { return t_; }
  void Clear() { t_.clear(); }
  void Swap(BasicVectorVectorHolder* other) { t_.swap(other->t_); }
  bool ExtractRange(const BasicVectorVectorHolder&, const std::string&) {
    internal::ThrowNoRange("BasicVectorVectorHolder");
  }

 private:
  T t_;
};

template <class BasicType>
class BasicPairVectorHolder {
 public:
  typedef std::vector<std::pair<BasicType, BasicType>> T;
  BasicPairVectorHolder() = default;
  BasicPairVectorHolder(const BasicPairVectorHolder&) = delete;
  BasicPairVectorHolder& operator=(const BasicPairVectorHolder&) = delete;

  static bool Write(std::ostream& os, bool binary, const T& t) {
    InitKaldiOutputStream(os, binary);
    if (binary) WriteBasicType(os, binary, static_cast<int32>(t.size()));
    for (size_t i = 0; i < t.size(); ++i) {
      if (!binary && i > 0) os << "; ";
      WriteBasicType(os, binary, t[i].first);
      WriteBasicType(os, binary, t[i].second);
    }
    if (!binary) os << '\n';
    return os.good();
  }
  bool Read(std::istream& is) {
    t_.clear();
    if (internal::ReadHolderHeader(is)) {
      int32 n = 0;
      ReadBasicType(is, true, &n);
      internal::CheckCount(is, n, 2 * (1 + sizeof(BasicType)), "BasicPairVectorHolder");
      for (int32 i = 0; i < n; ++i) {
        std::pair<BasicType, BasicType> p;
        ReadBasicType(is, true, &p.first);
        ReadBasicType(is, true, &p.second);
        t_.push_back(p);
      }
      return true;
    }
    std::vector<BasicType> cur;
    for (;;) {
      const int c = internal::SkipBlanks(is);
      if (c == -1) CUCTX_ERR << "end of stream inside a text vector of pairs";
      if (c == '\n' || c == ';') {
        const bool end = c == '\n';
        if (!(end && cur.empty() && t_.empty())) {
          if (cur.size() != 2)
            CUCTX_ERR << "a pair has " << cur.size() << " elements, expected 2"
                      << StreamPosition(is);
          t_.emplace_back(cur[0], cur[1]);
          cur.clear();
        }
        is.get();
        if (end) return true;
        continue;
      }
      BasicType v;
      ReadBasicType(is, false, &v);
      cur.push_back(v);
    }
  }
  static bool IsReadInBinary() { return true; }
  T& Value() { return t_; }
  void Clear() { t_.clear(); }
  void Swap(BasicPairVectorHolder* other) { t_.swap(other->t_); }
  bool ExtractRange(const BasicPairVectorHolder&, const std::string&) {
    internal::ThrowNoRange("BasicPairVectorHolder");
  }

 private:
  T t_;
};

class TokenHolder {
 public:
  typedef std::string T;
  TokenHolder() = default;
  TokenHolder(const TokenHolder&) = delete;
  TokenHolder& operator=(const TokenHolder&) = delete;

  // Ignores `binary` (the format is text either way). Throws for a non-token.
  static bool Write(std::ostream& os, bool binary, const T& t);
  bool Read(std::istream& is);
  static bool IsReadInBinary() { return false; }
  T& Value() { return t_; }
  void Clear() { t_.clear(); }
  void Swap(TokenHolder* other) { t_.swap(other->t_); }
  bool ExtractRange(const TokenHolder&, const std::string&) {
    internal::ThrowNoRange("TokenHolder");
  }

 private:
  T t_;
};

class TokenVectorHolder {
 public:
  typedef std::vector<std::string> T;
  TokenVectorHolder() = default;
  TokenVectorHolder(const TokenVectorHolder&) = delete;
  TokenVectorHolder& operator=(const TokenVectorHolder&) = delete;

  static bool Write(std::ostream& os, bool binary, const T& t);
  bool Read(std::istream& is);
  static bool IsReadInBinary() { return false; }
  T& Value() { return t_; }
  void Clear() { t_.clear(); }
  void Swap(TokenVectorHolder* other) { t_.swap(other->t_); }
  bool ExtractRange(const TokenVectorHolder&, const std::string&) {
    internal::ThrowNoRange("TokenVectorHolder");
  }

 private:
  T t_;
};

// HTK feature files as table values: T is the matrix and its HTK header. The format is HTK's own
// (big-endian, no Kaldi header), so only binary writing is possible.
class HtkMatrixHolder {
 public:
  typedef std::pair<Matrix<BaseFloat>, HtkHeader> T;
  HtkMatrixHolder() = default;
  HtkMatrixHolder(const HtkMatrixHolder&) = delete;
  HtkMatrixHolder& operator=(const HtkMatrixHolder&) = delete;

  // Throws for binary == false.
  static bool Write(std::ostream& os, bool binary, const T& t);
  bool Read(std::istream& is);
  static bool IsReadInBinary() { return true; }
  T& Value() { return t_; }
  void Clear() { t_.first.Resize(0, 0); }
  void Swap(HtkMatrixHolder* other) {
    t_.first.Swap(&other->t_.first);
    std::swap(t_.second, other->t_.second);
  }
  bool ExtractRange(const HtkMatrixHolder&, const std::string&) {
    internal::ThrowNoRange("HtkMatrixHolder");
  }

 private:
  T t_;
};

}  // namespace cuctx

#endif  // CUCTX_UTIL_KALDI_HOLDER_H_
