// util/fd-streambuf.cc: FdStreamBuf (see the header).
// SPDX-License-Identifier: Apache-2.0
#include "util/fd-streambuf.h"

#include <algorithm>
#include <cstring>
#include <errno.h>
#include <optional>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

namespace cuctx {

FdStreamBuf::FdStreamBuf(int fd, Mode mode, bool seekable, int64 start_offset, size_t buffer_bytes)
    : fd_(fd),
      mode_(mode),
      seekable_(seekable),
      buf_(buffer_bytes != 0 ? std::max<size_t>(buffer_bytes, 4096)
                             : (mode == kRead ? size_t(128) << 10 : size_t(1) << 20)),
      buf_off_(start_offset),
      buf_len_(0),
      fd_pos_(start_offset) {
  if (mode_ == kRead)
    setg(buf_.data(), buf_.data(), buf_.data());
  else
    setp(buf_.data(), buf_.data() + buf_.size());
}

FdStreamBuf::~FdStreamBuf() {
  if (mode_ == kWrite) Flush();
}

int64 FdStreamBuf::Position() const {
  if (mode_ == kWrite) return buf_off_ + (pptr() - pbase());
  if (parked_) return parked_pos_;
  return buf_off_ + (gptr() - eback());
}

ssize_t FdStreamBuf::ReadSome(char* dst, size_t n) {
  for (;;) {
    ssize_t got = ::read(fd_, dst, n);
    if (got >= 0) {
      fd_pos_ += got;
      return got;
    }
    if (errno == EINTR) continue;
    if (errno_ == 0) errno_ = errno;
    return -1;
  }
}

bool FdStreamBuf::Fill() {
  const int64 pos = Position();
  if (pos >= buf_off_ && pos < buf_off_ + static_cast<int64>(buf_len_)) {
    parked_ = false;
    setg(buf_.data(), buf_.data() + (pos - buf_off_), buf_.data() + buf_len_);
    return true;
  }
  if (pos != fd_pos_) {
    if (!seekable_ || ::lseek(fd_, pos, SEEK_SET) < 0) {
      if (errno_ == 0) errno_ = seekable_ ? errno : ESPIPE;
      return false;
    }
    fd_pos_ = pos;
  }
  parked_ = false;
  buf_off_ = pos;
  buf_len_ = 0;
  setg(buf_.data(), buf_.data(), buf_.data());
  ssize_t got = ReadSome(buf_.data(), buf_.size());
  if (got <= 0) return false;
  buf_len_ = static_cast<size_t>(got);
  setg(buf_.data(), buf_.data(), buf_.data() + buf_len_);
  return true;
}

FdStreamBuf::int_type FdStreamBuf::underflow() {
  if (mode_ != kRead) return traits_type::eof();
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (!Fill()) return traits_type::eof();
  return traits_type::to_int_type(*gptr());
}

std::streamsize FdStreamBuf::xsgetn(char* s, std::streamsize n) {
  if (mode_ != kRead || n <= 0) return 0;
  std::streamsize done = 0;
  // First what the buffer holds.
  if (!parked_) {
    const std::streamsize avail = egptr() - gptr();
    const std::streamsize take = std::min(avail, n);
    if (take > 0) {
      std::memcpy(s, gptr(), static_cast<size_t>(take));
      gbump(static_cast<int>(take));
      done = take;
    }
  }
  if (done == n) return done;
  // Large remainders go straight from the descriptor into the caller's memory.
  if (n - done >= static_cast<std::streamsize>(buf_.size() / 2)) {
    const int64 pos = Position();
    if (pos != fd_pos_) {
      if (!seekable_ || ::lseek(fd_, pos, SEEK_SET) < 0) {
        if (errno_ == 0) errno_ = seekable_ ? errno : ESPIPE;
        return done;
      }
      fd_pos_ = pos;
    }
    while (done < n) {
      ssize_t got = ReadSome(s + done, static_cast<size_t>(n - done));
      if (got <= 0) break;
      done += got;
    }
    parked_ = false;
    buf_off_ = fd_pos_;
    buf_len_ = 0;
    setg(buf_.data(), buf_.data(), buf_.data());
    return done;
  }
  while (done < n) {
    if (gptr() == egptr() && !Fill()) break;
    const std::streamsize take = std::min<std::streamsize>(egptr() - gptr(), n - done);
    std::memcpy(s + done, gptr(), static_cast<size_t>(take));
    gbump(static_cast<int>(take));
    done += take;
  }
  return done;
}

namespace {

// Blocks SIGPIPE in the calling thread while it lives, so that a write to a pipe whose reader has
// gone fails with EPIPE (reported through Errno(), and by Output::Close with the command's status)
// instead of killing the process. A SIGPIPE raised meanwhile is taken off the thread's pending
// set before the old mask returns, unless one was already pending before.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~ScopedSigpipeBlock() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

}  // namespace

bool FdStreamBuf::WriteAll(const char* data, size_t n) {
  // Standard output keeps Unix's behaviour (a tool piped into `head` ends quietly); every other
  // descriptor written without seeking (a "| command" pipe, a file) reports a failure instead.
  std::optional<ScopedSigpipeBlock> no_sigpipe;
  if (!seekable_ && fd_ != STDOUT_FILENO) no_sigpipe.emplace();
  while (n > 0) {
    ssize_t put = ::write(fd_, data, n);
    if (put < 0) {
      if (errno == EINTR) continue;
      if (errno_ == 0) errno_ = errno;
      return false;
    }
    data += put;
    n -= static_cast<size_t>(put);
    fd_pos_ += put;
  }
  return true;
}

bool FdStreamBuf::Flush() {
  if (mode_ != kWrite) return true;
  const size_t n = static_cast<size_t>(pptr() - pbase());
  if (n == 0) return errno_ == 0;
  bool ok = errno_ == 0 && WriteAll(pbase(), n);
  buf_off_ += static_cast<int64>(n);
  setp(buf_.data(), buf_.data() + buf_.size());
  return ok;
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type c) {
  if (mode_ != kWrite) return traits_type::eof();
  if (!Flush()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize FdStreamBuf::xsputn(const char* s, std::streamsize n) {
  if (mode_ != kWrite || n <= 0 || errno_ != 0) return 0;
  const std::streamsize room = epptr() - pptr();
  if (n <= room) {
    std::memcpy(pptr(), s, static_cast<size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  if (!Flush()) return 0;
  if (n >= static_cast<std::streamsize>(buf_.size() / 2)) {
    if (!WriteAll(s, static_cast<size_t>(n))) return 0;
    buf_off_ += n;
    return n;
  }
  std::memcpy(pptr(), s, static_cast<size_t>(n));
  pbump(static_cast<int>(n));
  return n;
}

int FdStreamBuf::sync() { return Flush() ? 0 : -1; }

bool FdStreamBuf::SeekReadTo(int64 target) {
  if (target < 0) return false;
  if (target >= buf_off_ && target <= buf_off_ + static_cast<int64>(buf_len_)) {
    parked_ = false;
    setg(buf_.data(), buf_.data() + (target - buf_off_), buf_.data() + buf_len_);
    return true;
  }
  if (!seekable_) return false;
  parked_ = true;
  parked_pos_ = target;
  setg(buf_.data(), buf_.data(), buf_.data());
  return true;
}

FdStreamBuf::pos_type FdStreamBuf::seekoff(off_type off, std::ios_base::seekdir dir,
                                           std::ios_base::openmode) {
  const pos_type fail = pos_type(off_type(-1));
  if (mode_ == kWrite) {
    // Only the position can be asked (tellp); writers never seek.
    if (dir == std::ios_base::cur && off == 0) return pos_type(Position());
    return fail;
  }
  int64 target;
  if (dir == std::ios_base::beg) {
    target = off;
  } else if (dir == std::ios_base::cur) {
    target = Position() + off;
  } else {
    struct stat st;
    if (!seekable_ || ::fstat(fd_, &st) != 0) return fail;
    target = static_cast<int64>(st.st_size) + off;
  }
  return SeekReadTo(target) ? pos_type(target) : fail;
}

FdStreamBuf::pos_type FdStreamBuf::seekpos(pos_type pos, std::ios_base::openmode which) {
  return seekoff(off_type(pos), std::ios_base::beg, which);
}

}  // namespace cuctx
