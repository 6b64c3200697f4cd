// base/utils.h: the CUCTX_ forms of the helper macros of Kaldi's base/kaldi-utils.h (copy
// control, compile-time type checks, byte swaps, aligned allocation, string-to-number calls) and
// its two functions, CharToString and MachineIsLittleEndian.
// SPDX-License-Identifier: Apache-2.0
//
// Kaldi code ports by renaming KALDI_ to CUCTX_: each macro here takes the same arguments as its
// Kaldi namesake and may be used in the same places. Where Kaldi used a class template for a
// compile-time check, these use static_assert, so a failure names the macro and the condition.
// Everything here is stateless and thread-safe.
#ifndef CUCTX_BASE_UTILS_H_
#define CUCTX_BASE_UTILS_H_

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <strings.h>  // strcasecmp

// Deletes the copy constructor and copy assignment of `type`; write it in the class body as
// Kaldi code does: CUCTX_DISALLOW_COPY_AND_ASSIGN(MyClass);
#define CUCTX_DISALLOW_COPY_AND_ASSIGN(type) \
  type(const type&) = delete;                \
  type& operator=(const type&) = delete

// Fails compilation unless the constant expression `b` is true. Usable wherever a declaration or
// statement is (Kaldi's form was a statement inside a function body).
#define CUCTX_COMPILE_TIME_ASSERT(b) static_assert((b), "CUCTX_COMPILE_TIME_ASSERT(" #b ")")

// Fails compilation unless I is an integer type (bool and character types count, as in Kaldi).
#define CUCTX_ASSERT_IS_INTEGER_TYPE(I)                                                       \
  static_assert(std::numeric_limits<I>::is_specialized && std::numeric_limits<I>::is_integer, \
                "CUCTX_ASSERT_IS_INTEGER_TYPE(" #I "): not an integer type")

// Fails compilation unless F is a floating-point type.
#define CUCTX_ASSERT_IS_FLOATING_TYPE(F)                                                       \
  static_assert(std::numeric_limits<F>::is_specialized && !std::numeric_limits<F>::is_integer, \
                "CUCTX_ASSERT_IS_FLOATING_TYPE(" #F "): not a floating-point type")

// Reverse the byte order of the lvalue `a` in place: its first 8, 4 or 2 bytes (a must be at least
// that large; the check is at compile time).
#define CUCTX_SWAP8(a) ::cuctx::internal::ReverseBytes<8>(&(a))
#define CUCTX_SWAP4(a) ::cuctx::internal::ReverseBytes<4>(&(a))
#define CUCTX_SWAP2(a) ::cuctx::internal::ReverseBytes<2>(&(a))

// Aligned allocation as in Kaldi: CUCTX_MEMALIGN(align, size, &orig) returns memory aligned to
// `align` (a power of two, a multiple of sizeof(void*)) or NULL, and stores in *orig the pointer
// to pass to CUCTX_MEMALIGN_FREE. Both pointers are the same here (posix_memalign).
#define CUCTX_MEMALIGN(align, size, pp_orig) \
  (!posix_memalign((pp_orig), (align), (size)) ? *(pp_orig) : NULL)
#define CUCTX_MEMALIGN_FREE(x) free(x)

// Case-insensitive string comparison, and the number parsers Kaldi calls through macros
// (base 10 for the integer form). Same arguments and results as the C functions.
#define CUCTX_STRCASECMP strcasecmp
#define CUCTX_STRTOLL(cur_cstr, end_cstr) strtoll((cur_cstr), (end_cstr), 10)
#define CUCTX_STRTOD(cur_cstr, end_cstr) strtod((cur_cstr), (end_cstr))

namespace cuctx {

// A character for messages: a printable one in single quotes ("'a'"), any other as
// "[character N]" with its numeric value (N as a signed char, as Kaldi prints it).
std::string CharToString(const char& c);

// 1 on a little-endian machine (x86, ARM as configured by Linux), 0 otherwise.
inline int MachineIsLittleEndian() {
  const unsigned int one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1 ? 1 : 0;
}

namespace internal {
// Reverses the first N bytes of *p (the body of CUCTX_SWAP8/4/2).
template <size_t N, typename T>
inline void ReverseBytes(T* p) {
  static_assert(sizeof(T) >= N, "CUCTX_SWAPn: the argument is smaller than n bytes");
  unsigned char* bytes = reinterpret_cast<unsigned char*>(p);
  for (size_t i = 0; i < N / 2; ++i) {
    unsigned char t = bytes[i];
    bytes[i] = bytes[N - 1 - i];
    bytes[N - 1 - i] = t;
  }
}
}  // namespace internal

}  // namespace cuctx

#endif  // CUCTX_BASE_UTILS_H_
