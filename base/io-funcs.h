// base/io-funcs.h: Kaldi-format I/O primitives: tokens, basic types and the binary-stream header.
// SPDX-License-Identifier: Apache-2.0
//
// On-disk layout (byte-exact with Kaldi, native little-endian):
//   binary stream   starts with the two bytes "\0B"; a stream without them is text.
//   token           its characters followed by one space, in both modes.
//   integer         binary: one size byte (+sizeof(T) for signed types, -sizeof(T) for unsigned)
//                   then sizeof(T) raw bytes; text: the decimal value and a space.
//   float/double    binary: size byte 4 or 8 then the raw value; text: the value and a space.
//                   A float reader accepts a stored double and converts (and vice versa).
//   bool            'T' or 'F' (text: followed by a space).
// Every read failure throws cuctx::Error saying what was expected, what was found and, where the
// stream can tell, at which byte. All functions are reentrant; a stream must not be shared by
// threads.
#ifndef CUCTX_BASE_IO_FUNCS_H_
#define CUCTX_BASE_IO_FUNCS_H_

#include "base/types.h"

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace cuctx {

// Writes "\0B" when binary; in text mode raises the stream precision to at least 7 digits.
void InitKaldiOutputStream(std::ostream& os, bool binary);

// Consumes "\0B" if present and sets *binary. Returns false only for a '\0' not followed by 'B'.
bool InitKaldiInputStream(std::istream& is, bool* binary);

// Writes `token` and a space. Throws if the token is empty or contains whitespace.
void WriteToken(std::ostream& os, bool binary, const char* token);
void WriteToken(std::ostream& os, bool binary, const std::string& token);

// Reads a token and the one space after it (text mode skips leading whitespace first).
void ReadToken(std::istream& is, bool binary, std::string* token);

// Reads a token and throws unless it equals `token`, naming both.
void ExpectToken(std::istream& is, bool binary, const char* token);
void ExpectToken(std::istream& is, bool binary, const std::string& token);

// Returns the next character without consuming it (text mode skips whitespace first); -1 at EOF.
int Peek(std::istream& is, bool binary);

// Like Peek, but looks past a leading '<' (for "<Token>" style tokens) and returns the character
// after it; the '<' stays in the stream.
int PeekToken(std::istream& is, bool binary);

// Integer types (int8..uint64). Reading checks the stored size byte against T.
template <class T>
void WriteBasicType(std::ostream& os, bool binary, T t);
template <class T>
void ReadBasicType(std::istream& is, bool binary, T* t);

// Vectors of integers: binary: size byte, int32 count, raw elements; text: "[ 1 2 3 ]".
template <class T>
void WriteIntegerVector(std::ostream& os, bool binary, const std::vector<T>& v);
template <class T>
void ReadIntegerVector(std::istream& is, bool binary, std::vector<T>* v);

// Describes the read position for error messages: " at byte N" or "" when the stream cannot tell.
std::string StreamPosition(std::istream& is);

// Shows a word read from a stream in an error message: its first 40 bytes, with every byte that
// is not printable ASCII written as "\xNN" (so a binary file's bytes never reach a terminal raw),
// and "..." after a longer word.
std::string PrintableWord(const std::string& word);

// The number of bytes between the read position and the end of `is`, or -1 when the stream is not
// good or cannot seek (a pipe). Readers use it to reject a declared size that cannot fit before
// allocating for it. Leaves the position and state of a good stream as they were, and does not
// touch a stream that is not good.
int64 BytesLeftInStream(std::istream& is);

}  // namespace cuctx

#endif  // CUCTX_BASE_IO_FUNCS_H_
