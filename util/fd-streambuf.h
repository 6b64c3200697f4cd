// util/fd-streambuf.h: FdStreamBuf, a std::streambuf over a POSIX file descriptor with a large
// buffer, used by Input and Output (util/kaldi-io.h) for files, pipes and standard streams.
// SPDX-License-Identifier: Apache-2.0
//
// Why not std::filebuf: reads and writes of large blocks (a matrix's payload) go straight between
// the caller's memory and the descriptor, skipping the buffer; a seek that lands inside the data
// already buffered keeps it (Kaldi's readers ask for the stream's length with two seeks before
// every matrix); and the byte position is known on pipes too, so messages can give offsets there.
//
// Ownership and threads: the object owns its buffer, not the descriptor (whoever opened the
// descriptor closes it, after Flush()). One object must not be used by two threads at once.
// A read or write error of the OS is remembered: Errno() returns it (0 if none), and the stream
// using the buffer sees end-of-file (reading) or a failed write (badbit).
#ifndef CUCTX_UTIL_FD_STREAMBUF_H_
#define CUCTX_UTIL_FD_STREAMBUF_H_

#include "base/types.h"

#include <streambuf>
#include <sys/types.h>
#include <vector>

namespace cuctx {

class FdStreamBuf : public std::streambuf {
 public:
  enum Mode { kRead, kWrite };
  // `fd` is an open descriptor for reading (kRead) or writing (kWrite). `seekable` says whether
  // lseek may be used on it (a regular file); for pipes only positions inside the buffer can be
  // sought. `start_offset` is the descriptor's current offset (for positions reported by tellg
  // and tellp). `buffer_bytes` is the buffer's size; 0 picks the default: 128 KiB for reading
  // (small, so that a large object read right after its header is mostly read straight into the
  // caller's memory rather than copied twice) and 1 MiB for writing.
  FdStreamBuf(int fd, Mode mode, bool seekable, int64 start_offset = 0, size_t buffer_bytes = 0);
  ~FdStreamBuf() override;
  FdStreamBuf(const FdStreamBuf&) = delete;
  FdStreamBuf& operator=(const FdStreamBuf&) = delete;

  // Writes out what is buffered (write mode). Returns false, with Errno() set, on failure.
  bool Flush();
  // The errno of the first failed read(), write() or lseek(), or 0.
  int Errno() const { return errno_; }
  int Fd() const { return fd_; }
  // The byte position of the next character read or written.
  int64 Position() const;

 protected:
  int_type underflow() override;
  std::streamsize xsgetn(char* s, std::streamsize n) override;
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;
  pos_type seekoff(off_type off, std::ios_base::seekdir dir,
                   std::ios_base::openmode which) override;
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override;

 private:
  // Read mode: makes the buffer hold data from the logical position on; false at end or error.
  bool Fill();
  // Moves the read position to `target` (an absolute offset); false if that cannot be done.
  bool SeekReadTo(int64 target);
  // Writes [data, data + n) to the descriptor, retrying short writes. False on error.
  bool WriteAll(const char* data, size_t n);
  // read() into `dst` at the descriptor's position, retrying on EINTR; -1 on error.
  ssize_t ReadSome(char* dst, size_t n);

  int fd_;
  Mode mode_;
  bool seekable_;
  std::vector<char> buf_;
  int64 buf_off_;        // read mode: file offset of buf_[0]; write mode: offset of pbase()
  size_t buf_len_;       // read mode: valid bytes in buf_
  bool parked_ = false;  // read mode: the position (parked_pos_) lies outside the buffer
  int64 parked_pos_ = 0;
  int64 fd_pos_;  // the descriptor's own offset
  int errno_ = 0;
};

}  // namespace cuctx

#endif  // CUCTX_UTIL_FD_STREAMBUF_H_
