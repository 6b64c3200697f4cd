// base/io-funcs.cc: tokens, basic types and stream headers in Kaldi's byte layout.
// SPDX-License-Identifier: Apache-2.0
#include "base/io-funcs.h"

#include "base/error.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <strings.h>
#include <type_traits>

namespace cuctx {

std::string StreamPosition(std::istream& is) {
  if (is.bad()) return "";
  std::ios::iostate state = is.rdstate();
  is.clear();
  std::streamoff pos = is.tellg();
  is.clear(state);
  if (pos < 0) return "";
  return " at byte " + std::to_string(pos);
}

std::string PrintableWord(const std::string& word) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : word.substr(0, 40)) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (word.size() > 40) out += "...";
  return out;
}

int64 BytesLeftInStream(std::istream& is) {
  if (!is.good()) return -1;
  std::streampos here = is.tellg();
  if (here == std::streampos(-1)) {
    is.clear();
    return -1;
  }
  is.seekg(0, std::ios::end);
  std::streampos end = is.fail() ? std::streampos(-1) : is.tellg();
  is.clear();
  is.seekg(here);
  if (is.fail() || end == std::streampos(-1)) {
    is.clear();
    return -1;
  }
  return static_cast<int64>(end - here);
}

namespace {

std::string Describe(int c) {
  if (c == std::char_traits<char>::eof()) return "end of stream";
  if (std::isprint(c)) return std::string("'") + static_cast<char>(c) + "'";
  return "byte " + std::to_string(c & 0xff);
}

// The stream's error bits, for write errors: e.g. "badbit failbit".
std::string StreamState(const std::ostream& os) {
  std::string state;
  if (os.bad()) state += "badbit ";
  if (os.fail()) state += "failbit ";
  if (os.eof()) state += "eofbit ";
  if (state.empty()) return "good";
  state.pop_back();
  return state;
}

// What a basic type is called in error messages: "bool", "float", "double", "int32", "uint8"...
template <class T>
std::string BasicTypeName() {
  if constexpr (std::is_same<T, bool>::value)
    return "bool";
  else if constexpr (std::is_floating_point<T>::value)
    return sizeof(T) == sizeof(float) ? "float" : "double";
  else
    return (std::numeric_limits<T>::is_signed ? "int" : "uint") + std::to_string(8 * sizeof(T));
}

const char* ModeName(bool binary) { return binary ? "binary" : "text"; }

void CheckToken(const char* token) {
  CUCTX_CHECK(token != nullptr && *token != '\0') << "empty token";
  for (const char* p = token; *p != '\0'; ++p)
    CUCTX_CHECK(!std::isspace(static_cast<unsigned char>(*p)))
        << "token \"" << token << "\" contains whitespace";
}

// Reads a floating value in text mode, accepting the spellings C++ writes for non-finite values.
template <class T>
bool ReadTextReal(std::istream& is, T* t) {
  std::string word;
  if (!(is >> word)) return false;
  const char* s = word.c_str();
  bool negative = (*s == '-');
  const char* body = (*s == '-' || *s == '+') ? s + 1 : s;
  if (strcasecmp(body, "inf") == 0 || strcasecmp(body, "infinity") == 0) {
    *t = negative ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    return true;
  }
  if (strcasecmp(body, "nan") == 0) {
    *t = std::numeric_limits<T>::quiet_NaN();
    return true;
  }
  char* end = nullptr;
  double value = std::strtod(s, &end);
  if (end == s || *end != '\0') return false;
  *t = static_cast<T>(value);
  return true;
}

}  // namespace

void InitKaldiOutputStream(std::ostream& os, bool binary) {
  if (binary) {
    os.put('\0');
    os.put('B');
  }
  // 7 significant digits keep a float round-trippable to within one unit in the last place.
  if (os.precision() < 7) os.precision(7);
}

bool InitKaldiInputStream(std::istream& is, bool* binary) {
  if (is.peek() == '\0') {
    is.get();
    if (is.peek() != 'B') return false;
    is.get();
    *binary = true;
    return true;
  }
  *binary = false;
  return true;
}

void WriteToken(std::ostream& os, bool /*binary*/, const char* token) {
  CheckToken(token);
  os << token << ' ';
  CUCTX_CHECK(!os.fail()) << "WriteToken: could not write token \"" << token
                          << "\" (stream state: " << StreamState(os) << ")";
}

void WriteToken(std::ostream& os, bool binary, const std::string& token) {
  WriteToken(os, binary, token.c_str());
}

void ReadToken(std::istream& is, bool binary, std::string* token) {
  if (!binary) is >> std::ws;
  std::string pos = StreamPosition(is);
  if (!(is >> *token)) CUCTX_ERR << "expected a token" << pos << ", found end of stream";
  int next = is.peek();
  if (!std::isspace(next))
    CUCTX_ERR << "expected a space after token \"" << PrintableWord(*token) << "\"" << pos
              << ", found " << Describe(next);
  is.get();
}

void ExpectToken(std::istream& is, bool binary, const char* token) {
  std::string pos = StreamPosition(is);
  std::string found;
  if (!binary) is >> std::ws;
  if (!(is >> found))
    CUCTX_ERR << "expected token \"" << token << "\"" << pos << ", found end of stream";
  if (found != token)
    CUCTX_ERR << "expected token \"" << token << "\"" << pos << ", found \"" << PrintableWord(found)
              << "\"";
  int next = is.peek();
  if (!std::isspace(next))
    CUCTX_ERR << "expected a space after token \"" << token << "\"" << pos << ", found "
              << Describe(next);
  is.get();
}

void ExpectToken(std::istream& is, bool binary, const std::string& token) {
  ExpectToken(is, binary, token.c_str());
}

int Peek(std::istream& is, bool binary) {
  if (!binary) is >> std::ws;
  return is.peek();
}

int PeekToken(std::istream& is, bool binary) {
  if (!binary) is >> std::ws;
  if (is.peek() != '<') return is.peek();
  is.get();
  int ans = is.peek();
  is.unget();
  return ans;
}

template <class T>
void WriteBasicType(std::ostream& os, bool binary, T t) {
  if constexpr (std::is_same<T, bool>::value) {
    os << (t ? 'T' : 'F');
    if (!binary) os << ' ';
  } else if constexpr (std::is_floating_point<T>::value) {
    if (binary) {
      os.put(static_cast<char>(sizeof(T)));
      os.write(reinterpret_cast<const char*>(&t), sizeof(t));
    } else {
      os << t << ' ';
    }
  } else {
    if (binary) {
      int size = static_cast<int>(sizeof(T)) * (std::numeric_limits<T>::is_signed ? 1 : -1);
      os.put(static_cast<char>(size));
      os.write(reinterpret_cast<const char*>(&t), sizeof(t));
    } else if (sizeof(T) == 1) {
      os << static_cast<int>(t) << ' ';
    } else {
      os << t << ' ';
    }
  }
  CUCTX_CHECK(!os.fail()) << "WriteBasicType: could not write a value of type "
                          << BasicTypeName<T>() << " (" << ModeName(binary)
                          << ") (stream state: " << StreamState(os) << ")";
}

template <class T>
void ReadBasicType(std::istream& is, bool binary, T* t) {
  CUCTX_CHECK(t != nullptr);
  std::string pos = StreamPosition(is);
  if constexpr (std::is_same<T, bool>::value) {
    if (!binary) is >> std::ws;
    int c = is.get();
    if (c == 'T') {
      *t = true;
    } else if (c == 'F') {
      *t = false;
    } else {
      CUCTX_ERR << "expected a boolean ('T' or 'F')" << pos << ", found " << Describe(c);
    }
    if (!binary && std::isspace(is.peek())) is.get();
  } else if constexpr (std::is_floating_point<T>::value) {
    if (binary) {
      int size = is.get();
      if (size == static_cast<int>(sizeof(float))) {
        float f;
        is.read(reinterpret_cast<char*>(&f), sizeof(f));
        *t = static_cast<T>(f);
      } else if (size == static_cast<int>(sizeof(double))) {
        double d;
        is.read(reinterpret_cast<char*>(&d), sizeof(d));
        *t = static_cast<T>(d);
      } else {
        CUCTX_ERR << "expected a floating-point size byte (4 or 8)" << pos << ", found "
                  << Describe(size);
      }
      if (is.fail()) CUCTX_ERR << "truncated floating-point value" << pos;
    } else if (!ReadTextReal(is, t)) {
      CUCTX_ERR << "expected a floating-point number" << pos;
    }
  } else {
    if (binary) {
      int expected = static_cast<int>(sizeof(T)) * (std::numeric_limits<T>::is_signed ? 1 : -1);
      int c = is.get();
      if (c == std::char_traits<char>::eof())
        CUCTX_ERR << "expected an integer" << pos << ", found end of stream";
      if (static_cast<signed char>(c) != expected)
        CUCTX_ERR << "expected a " << (expected > 0 ? "signed" : "unsigned") << " integer of "
                  << sizeof(T) << " bytes" << pos << ", found size byte "
                  << static_cast<int>(static_cast<signed char>(c));
      is.read(reinterpret_cast<char*>(t), sizeof(*t));
      if (is.fail()) CUCTX_ERR << "truncated integer" << pos;
    } else {
      // Read through int64 so that an int8 is parsed as a number, not a character, and overflow
      // is caught rather than wrapped.
      long long value = 0;
      unsigned long long uvalue = 0;
      bool ok;
      if (std::numeric_limits<T>::is_signed) {
        ok = static_cast<bool>(is >> value) &&
             value >= static_cast<long long>(std::numeric_limits<T>::min()) &&
             value <= static_cast<long long>(std::numeric_limits<T>::max());
        if (ok) *t = static_cast<T>(value);
      } else {
        is >> std::ws;
        ok = is.peek() != '-' && static_cast<bool>(is >> uvalue) &&
             uvalue <= static_cast<unsigned long long>(std::numeric_limits<T>::max());
        if (ok) *t = static_cast<T>(uvalue);
      }
      if (!ok) CUCTX_ERR << "expected an integer in range for " << sizeof(T) << " bytes" << pos;
    }
  }
}

template <class T>
void WriteIntegerVector(std::ostream& os, bool binary, const std::vector<T>& v) {
  static_assert(std::is_integral<T>::value, "integer vectors only");
  if (binary) {
    os.put(static_cast<char>(sizeof(T)));
    int32 size = static_cast<int32>(v.size());
    os.write(reinterpret_cast<const char*>(&size), sizeof(size));
    if (!v.empty()) os.write(reinterpret_cast<const char*>(v.data()), sizeof(T) * v.size());
  } else {
    os << "[ ";
    for (const T& x : v) {
      if (sizeof(T) == 1)
        os << static_cast<int>(x) << ' ';
      else
        os << x << ' ';
    }
    os << "]\n";
  }
  CUCTX_CHECK(!os.fail()) << "WriteIntegerVector: could not write a vector of " << v.size() << " "
                          << BasicTypeName<T>() << " (" << ModeName(binary)
                          << ") (stream state: " << StreamState(os) << ")";
}

template <class T>
void ReadIntegerVector(std::istream& is, bool binary, std::vector<T>* v) {
  static_assert(std::is_integral<T>::value, "integer vectors only");
  std::string pos = StreamPosition(is);
  if (binary) {
    int size_byte = is.get();
    if (size_byte != static_cast<int>(sizeof(T)))
      CUCTX_ERR << "expected an integer vector of " << sizeof(T) << "-byte elements" << pos
                << ", found " << Describe(size_byte);
    int32 size;
    is.read(reinterpret_cast<char*>(&size), sizeof(size));
    if (is.fail() || size < 0) CUCTX_ERR << "bad or truncated integer-vector length" << pos;
    v->resize(size);
    if (size > 0) is.read(reinterpret_cast<char*>(v->data()), sizeof(T) * size);
    if (is.fail()) CUCTX_ERR << "truncated integer vector of " << size << " elements" << pos;
  } else {
    is >> std::ws;
    if (is.peek() != '[') CUCTX_ERR << "expected '[' to start an integer vector" << pos;
    is.get();
    v->clear();
    while (true) {
      is >> std::ws;
      if (is.peek() == ']') {
        is.get();
        break;
      }
      T x;
      ReadBasicType(is, false, &x);
      v->push_back(x);
    }
  }
}

#define CUCTX_INSTANTIATE_BASIC_(T)                        \
  template void WriteBasicType<T>(std::ostream&, bool, T); \
  template void ReadBasicType<T>(std::istream&, bool, T*)
CUCTX_INSTANTIATE_BASIC_(bool);
CUCTX_INSTANTIATE_BASIC_(float);
CUCTX_INSTANTIATE_BASIC_(double);
CUCTX_INSTANTIATE_BASIC_(int8);
CUCTX_INSTANTIATE_BASIC_(uint8);
CUCTX_INSTANTIATE_BASIC_(int16);
CUCTX_INSTANTIATE_BASIC_(uint16);
CUCTX_INSTANTIATE_BASIC_(int32);
CUCTX_INSTANTIATE_BASIC_(uint32);
CUCTX_INSTANTIATE_BASIC_(int64);
CUCTX_INSTANTIATE_BASIC_(uint64);
#undef CUCTX_INSTANTIATE_BASIC_

#define CUCTX_INSTANTIATE_INTVEC_(T)                                               \
  template void WriteIntegerVector<T>(std::ostream&, bool, const std::vector<T>&); \
  template void ReadIntegerVector<T>(std::istream&, bool, std::vector<T>*)
CUCTX_INSTANTIATE_INTVEC_(int32);
CUCTX_INSTANTIATE_INTVEC_(uint32);
CUCTX_INSTANTIATE_INTVEC_(int64);
CUCTX_INSTANTIATE_INTVEC_(int16);
CUCTX_INSTANTIATE_INTVEC_(int8);
#undef CUCTX_INSTANTIATE_INTVEC_

}  // namespace cuctx
