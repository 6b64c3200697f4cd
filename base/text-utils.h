// base/text-utils.h: splitting, joining, trimming and strict number parsing of strings.
// SPDX-License-Identifier: Apache-2.0
//
// The names and semantics follow Kaldi's text utilities. Parsing functions report failure by
// returning false and leave their output untouched (or cleared, where stated); they never throw
// on bad input. Only a null output pointer is an error (cuctx::Error). Every function here is
// reentrant and thread-safe on distinct arguments. Character classes are those of the "C" locale.
#ifndef CUCTX_BASE_TEXT_UTILS_H_
#define CUCTX_BASE_TEXT_UTILS_H_

#include "base/error.h"
#include "base/types.h"

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace cuctx {

// Splits `full` at every occurrence of any character in `delim` (a set of single-character
// delimiters, e.g. " \t"). With omit_empty_strings == false, n delimiter characters give n + 1
// pieces, so "" gives {""} and "a,,b" with "," gives {"a", "", "b"}. With omit_empty_strings ==
// true the empty pieces are dropped ("" gives {}). *out is replaced.
void SplitStringToVector(const std::string& full, const char* delim, bool omit_empty_strings,
                         std::vector<std::string>* out);

// Joins `vec_in` with the string `delim` between pieces, skipping empty pieces when
// omit_empty_strings is true. *str_out is replaced.
void JoinVectorToString(const std::vector<std::string>& vec_in, const char* delim,
                        bool omit_empty_strings, std::string* str_out);

// Removes leading and trailing whitespace (space, \t, \n, \v, \f, \r) in place.
void Trim(std::string* str);

// Splits `line` at its first run of whitespace after Trim(): "ab  cd ef" gives first = "ab",
// rest = "cd ef"; a line without inner whitespace gives rest = "".
void SplitStringOnFirstSpace(const std::string& line, std::string* first, std::string* rest);

// True if `token` is non-empty and has no whitespace and no control characters. Bytes >= 128 are
// accepted, so UTF-8 text is a valid token, except byte 255 (Latin-1's no-break space, which
// Kaldi counts as a space; it never occurs in UTF-8).
bool IsToken(const std::string& token);

// True if `line` has no newline, tab or other control characters and no leading or trailing
// whitespace (an empty line qualifies). Bytes >= 128 are accepted.
bool IsLine(const std::string& line);

namespace internal {
// Base-10 parse of the whole of `str` (surrounding whitespace allowed, a leading '+' allowed).
// False on an empty string, junk, or a value outside the type. The unsigned form rejects '-'.
bool ParseSignedDecimal(const std::string& str, long long* out);
bool ParseUnsignedDecimal(const std::string& str, unsigned long long* out);
}  // namespace internal

// Converts the whole of `str` to an integer of type Int, in base 10. Leading and trailing
// whitespace is allowed, as is a leading '+'; anything else ("12abc", "1.5", "", "0x10") fails, as
// does a value that does not fit in Int or any '-' sign for an unsigned Int. Returns true and sets
// *out only on success.
template <class Int>
bool ConvertStringToInteger(const std::string& str, Int* out) {
  static_assert(std::is_integral<Int>::value && !std::is_same<Int, bool>::value,
                "ConvertStringToInteger needs a non-bool integer type");
  CUCTX_CHECK(out != nullptr);
  if constexpr (std::is_signed<Int>::value) {
    long long value = 0;
    if (!internal::ParseSignedDecimal(str, &value) || value < std::numeric_limits<Int>::min() ||
        value > std::numeric_limits<Int>::max())
      return false;
    *out = static_cast<Int>(value);
  } else {
    unsigned long long value = 0;
    if (!internal::ParseUnsignedDecimal(str, &value) || value > std::numeric_limits<Int>::max())
      return false;
    *out = static_cast<Int>(value);
  }
  return true;
}

// Converts the whole of `str` to a float or double (instantiated for those two). Leading and
// trailing whitespace is allowed, junk is not ("1.5x" fails). "inf", "-inf", "infinity" and
// "nan" (any case) are accepted, and so are the forms Microsoft's C library prints, which Kaldi
// reads: "1.#INF", "-1.#INF", "1.#QNAN", "-1.#QNAN" (exactly; "2.#INF" fails). A finite value too large for T fails rather than becoming
// infinity; a value too small becomes 0 or a denormal. Returns true and sets *out only on success.
template <typename Real>
bool ConvertStringToReal(const std::string& str, Real* out);

namespace internal {
// The body of SplitStringToIntegers and SplitStringToFloats: splits `full` and converts every
// piece with convert(piece, &element), clearing *out on the first failure. out != nullptr.
template <typename T, typename Convert>
bool SplitAndConvert(const std::string& full, const char* delim, bool omit_empty_strings,
                     std::vector<T>* out, Convert convert) {
  out->clear();
  if (full.empty()) return true;
  std::vector<std::string> pieces;
  SplitStringToVector(full, delim, omit_empty_strings, &pieces);
  out->resize(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (!convert(pieces[i], &(*out)[i])) {
      out->clear();
      return false;
    }
  }
  return true;
}
}  // namespace internal

// Splits like SplitStringToVector, then converts every piece with ConvertStringToInteger.
// An empty `full` gives an empty vector and true. On any failure (including an empty piece when
// omit_empty_strings is false) *out is cleared and false returned.
template <class Int>
bool SplitStringToIntegers(const std::string& full, const char* delim, bool omit_empty_strings,
                           std::vector<Int>* out) {
  CUCTX_CHECK(out != nullptr);
  return internal::SplitAndConvert(
      full, delim, omit_empty_strings, out,
      [](const std::string& s, Int* v) { return ConvertStringToInteger(s, v); });
}

// As SplitStringToIntegers, for float or double pieces parsed with ConvertStringToReal.
template <typename Real>
bool SplitStringToFloats(const std::string& full, const char* delim, bool omit_empty_strings,
                         std::vector<Real>* out) {
  CUCTX_CHECK(out != nullptr);
  return internal::SplitAndConvert(
      full, delim, omit_empty_strings, out,
      [](const std::string& s, Real* v) { return ConvertStringToReal(s, v); });
}

// True if `a` and `b` are equal as strings except inside decimal fractions, where only the first
// `decimal_places_check` digits after the '.' must match and a missing digit counts as '0':
// ("x 1.234 y", "x 1.2345 y", 3) and ("1.0", "1.0001", 3) are equal, ("1.234", "1.235", 3) are
// not. For comparing printed numbers in tests. Throws cuctx::Error if decimal_places_check < 0.
bool StringsApproxEqual(const std::string& a, const std::string& b, int32 decimal_places_check = 2);

}  // namespace cuctx

#endif  // CUCTX_BASE_TEXT_UTILS_H_
