// base/text-utils.cc: string splitting, trimming and strict number parsing.
// SPDX-License-Identifier: Apache-2.0
#include "base/text-utils.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace cuctx {
namespace {

// The "C"-locale whitespace set; std::isspace would depend on the global locale.
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Control characters (0-31 and 127). Bytes >= 128 are not, so UTF-8 passes.
bool IsControl(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return u < 32 || u == 127;
}

// The strto* functions skip leading whitespace but stop at trailing whitespace; trimming first
// treats both ends alike, so "the whole string parsed" is simply "the end pointer hit the NUL".
std::string Trimmed(const std::string& str) {
  std::string s = str;
  Trim(&s);
  return s;
}

bool AllDigits(const char* p) {
  if (*p == '\0') return false;
  for (; *p != '\0'; ++p)
    if (*p < '0' || *p > '9') return false;
  return true;
}

}  // namespace

void SplitStringToVector(const std::string& full, const char* delim, bool omit_empty_strings,
                         std::vector<std::string>* out) {
  CUCTX_CHECK(out != nullptr && delim != nullptr);
  out->clear();
  size_t start = 0;
  while (true) {
    size_t end = full.find_first_of(delim, start);
    size_t stop = (end == std::string::npos) ? full.size() : end;
    if (!omit_empty_strings || stop > start) out->push_back(full.substr(start, stop - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

void JoinVectorToString(const std::vector<std::string>& vec_in, const char* delim,
                        bool omit_empty_strings, std::string* str_out) {
  CUCTX_CHECK(str_out != nullptr && delim != nullptr);
  str_out->clear();
  bool first = true;
  for (const std::string& piece : vec_in) {
    if (omit_empty_strings && piece.empty()) continue;
    if (!first) str_out->append(delim);
    str_out->append(piece);
    first = false;
  }
}

void Trim(std::string* str) {
  CUCTX_CHECK(str != nullptr);
  size_t begin = 0, end = str->size();
  while (begin < end && IsSpace((*str)[begin])) ++begin;
  while (end > begin && IsSpace((*str)[end - 1])) --end;
  *str = str->substr(begin, end - begin);
}

void SplitStringOnFirstSpace(const std::string& line, std::string* first, std::string* rest) {
  CUCTX_CHECK(first != nullptr && rest != nullptr);
  std::string s = Trimmed(line);
  size_t i = 0;
  while (i < s.size() && !IsSpace(s[i])) ++i;
  *first = s.substr(0, i);
  while (i < s.size() && IsSpace(s[i])) ++i;
  *rest = s.substr(i);
}

bool IsToken(const std::string& token) {
  if (token.empty()) return false;
  for (char c : token) {
    // Byte 255 is the no-break space of Latin-1; Kaldi rejects it as a form of space. It never
    // occurs in UTF-8, so rejecting it costs UTF-8 tokens nothing.
    if (IsSpace(c) || IsControl(c) || static_cast<unsigned char>(c) == 255) return false;
  }
  return true;
}

bool IsLine(const std::string& line) {
  for (char c : line)
    if (IsControl(c)) return false;
  return line.empty() || (!IsSpace(line.front()) && !IsSpace(line.back()));
}

namespace internal {

bool ParseSignedDecimal(const std::string& str, long long* out) {
  std::string s = Trimmed(str);
  const char* p = s.c_str();
  const char* digits = (*p == '+' || *p == '-') ? p + 1 : p;
  // Checking the digits first rejects what strtoll would otherwise allow: a second sign, inner
  // whitespace, and an empty number ("-").
  if (!AllDigits(digits)) return false;
  errno = 0;
  long long value = std::strtoll(p, nullptr, 10);
  if (errno == ERANGE) return false;
  *out = value;
  return true;
}

bool ParseUnsignedDecimal(const std::string& str, unsigned long long* out) {
  std::string s = Trimmed(str);
  const char* p = s.c_str();
  // strtoull would accept "-1" and wrap it to the maximum value.
  if (*p == '+') ++p;
  if (!AllDigits(p)) return false;
  errno = 0;
  unsigned long long value = std::strtoull(p, nullptr, 10);
  if (errno == ERANGE) return false;
  *out = value;
  return true;
}

}  // namespace internal

template <typename Real>
bool ConvertStringToReal(const std::string& str, Real* out) {
  static_assert(std::is_same<Real, float>::value || std::is_same<Real, double>::value,
                "ConvertStringToReal is for float and double");
  CUCTX_CHECK(out != nullptr);
  std::string s = Trimmed(str);
  if (s.empty()) return false;
  // Microsoft's C library prints infinity and NaN as "1.#INF", "-1.#INF" and "1.#QNAN"; files
  // written on Windows carry them, and Kaldi reads them back. Nothing may follow the word.
  {
    size_t at = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (s.compare(at, std::string::npos, "1.#INF") == 0) {
      *out = (s[0] == '-' ? -1 : 1) * std::numeric_limits<Real>::infinity();
      return true;
    }
    if (s.compare(at, std::string::npos, "1.#QNAN") == 0) {
      *out = std::numeric_limits<Real>::quiet_NaN();
      return true;
    }
  }
  const char* begin = s.c_str();
  char* end = nullptr;
  errno = 0;
  Real value;
  if constexpr (std::is_same<Real, float>::value)
    value = std::strtof(begin, &end);
  else
    value = std::strtod(begin, &end);
  if (end == begin || *end != '\0') return false;
  // ERANGE means overflow (the result is +-HUGE_VAL) or underflow (tiny or zero); only overflow
  // would silently change the value's meaning, so only it fails.
  if (errno == ERANGE && std::isinf(value)) return false;
  *out = value;
  return true;
}

template bool ConvertStringToReal<float>(const std::string&, float*);
template bool ConvertStringToReal<double>(const std::string&, double*);

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool StringsApproxEqual(const std::string& a, const std::string& b, int32 decimal_places_check) {
  CUCTX_CHECK(decimal_places_check >= 0)
      << "StringsApproxEqual: decimal_places_check " << decimal_places_check << " < 0";
  size_t i = 0, j = 0;
  // Digits seen after the decimal point of the number being compared, or -1 outside a fraction.
  int32 places = -1;
  while (i < a.size() || j < b.size()) {
    const char ca = i < a.size() ? a[i] : '\0', cb = j < b.size() ? b[j] : '\0';
    if (places >= 0) {
      if (places >= decimal_places_check) {
        // Past the checked places: further digits on either side do not matter.
        if (IsDigit(ca)) {
          ++i;
          continue;
        }
        if (IsDigit(cb)) {
          ++j;
          continue;
        }
        places = -1;
      } else if (IsDigit(ca) && ca == cb) {
        ++i, ++j, ++places;
        continue;
      } else if (ca == '0' && !IsDigit(cb)) {  // "1.0" matches "1.000..." digit by digit
        ++i, ++places;
        continue;
      } else if (cb == '0' && !IsDigit(ca)) {
        ++j, ++places;
        continue;
      } else if (IsDigit(ca) || IsDigit(cb)) {
        return false;
      } else {
        places = -1;
      }
    }
    if (ca != cb || i >= a.size() || j >= b.size()) return false;
    if (ca == '.' && i > 0 && IsDigit(a[i - 1])) places = 0;
    ++i, ++j;
  }
  return true;
}

}  // namespace cuctx
