// util/kaldi-io.cc: Input, Output and the rx/wxfilename helpers (see util/kaldi-io.h).
// SPDX-License-Identifier: Apache-2.0
#include "util/kaldi-io.h"

#include "util/fd-streambuf.h"
#include <cctype>
#include <cstring>
#include <errno.h>
#include <fcntl.h>
#include <iostream>
#include <mutex>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace cuctx {

namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// True if `name` ends in ":<digits>" with a non-empty part before it; sets the parts.
bool SplitOffset(const std::string& name, std::string* file, int64* offset) {
  const size_t colon = name.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == name.size()) return false;
  int64 value = 0;
  for (size_t i = colon + 1; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
    if (value > (int64(1) << 58)) return false;
    value = value * 10 + (name[i] - '0');
  }
  if (file != nullptr) *file = name.substr(0, colon);
  if (offset != nullptr) *offset = value;
  return true;
}

std::string Quote(const std::string& name) {
  std::string out = "'";
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string OsError(int err) { return err == 0 ? "unknown error" : std::strerror(err); }

// Describes a status from pclose: "" for success, else what went wrong.
std::string DescribeStatus(int status, int32* code) {
  if (status == -1) {
    *code = -1;
    return std::string("could not wait for it: ") + std::strerror(errno);
  }
  if (WIFEXITED(status)) {
    *code = WEXITSTATUS(status);
    if (*code == 0) return "";
    return "it exited with status " + std::to_string(*code) +
           (*code == 127 ? " (command not found?)" : "");
  }
  if (WIFSIGNALED(status)) {
    *code = -1;
    return "it was killed by signal " + std::to_string(WTERMSIG(status));
  }
  *code = -1;
  return "it ended abnormally";
}

// A seekable descriptor reports its offset; a pipe or terminal does not.
bool FdSeekable(int fd, int64* offset) {
  off_t off = ::lseek(fd, 0, SEEK_CUR);
  if (off < 0) return false;
  *offset = off;
  return true;
}

FdStreamBuf& StdinBuf() {
  static FdStreamBuf* buf = [] {
    int64 offset = 0;
    bool seekable = FdSeekable(0, &offset);
    return new FdStreamBuf(0, FdStreamBuf::kRead, seekable, offset);
  }();
  return *buf;
}

FdStreamBuf& StdoutBuf() {
  static FdStreamBuf* buf = [] {
    int64 offset = 0;
    FdSeekable(1, &offset);
    return new FdStreamBuf(1, FdStreamBuf::kWrite, false, offset);
  }();
  return *buf;
}

}  // namespace

bool LooksLikeTableSpecifier(const std::string& name) {
  const size_t colon = name.find(':');
  if (colon == std::string::npos) return false;
  bool has_kind = false;
  size_t start = 0;
  for (;;) {
    size_t comma = name.find(',', start);
    if (comma == std::string::npos || comma > colon) comma = colon;
    const std::string word = name.substr(start, comma - start);
    if (word.empty() || word.size() > 3) return false;
    for (char c : word)
      if (c < 'a' || c > 'z') return false;
    if (word == "ark" || word == "scp") has_kind = true;
    if (comma == colon) break;
    start = comma + 1;
  }
  return has_kind;
}

OutputType ClassifyWxfilename(const std::string& name) {
  if (name.empty() || name == "-") return kStandardOutput;
  if (IsSpace(name.front()) || IsSpace(name.back())) return kNoOutput;
  if (name.front() == '|') return kPipeOutput;
  if (name.back() == '|') return kNoOutput;
  if (SplitOffset(name, nullptr, nullptr)) return kNoOutput;
  if (LooksLikeTableSpecifier(name)) return kNoOutput;
  return kFileOutput;
}

InputType ClassifyRxfilename(const std::string& name) {
  if (name.empty() || name == "-") return kStandardInput;
  if (IsSpace(name.front()) || IsSpace(name.back())) return kNoInput;
  if (name.front() == '|') return kNoInput;
  if (name.back() == '|') return kPipeInput;
  if (LooksLikeTableSpecifier(name)) return kNoInput;
  if (SplitOffset(name, nullptr, nullptr)) return kOffsetFileInput;
  return kFileInput;
}

std::string PrintableRxfilename(const std::string& name) {
  return (name.empty() || name == "-") ? "standard input" : Quote(name);
}

std::string PrintableWxfilename(const std::string& name) {
  return (name.empty() || name == "-") ? "standard output" : Quote(name);
}

// Why a name is refused, for the open messages.
static std::string WhyNoInput(const std::string& name) {
  if (LooksLikeTableSpecifier(name))
    return "it is a table specifier (rspecifier), but a plain filename is expected here";
  if (name.front() == '|') return "an output pipe (\"| command\") cannot be read";
  return "leading or trailing whitespace is not allowed in a filename";
}

static std::string WhyNoOutput(const std::string& name) {
  if (LooksLikeTableSpecifier(name))
    return "it is a table specifier (wspecifier), but a plain filename is expected here";
  if (name.back() == '|') return "an input pipe (\"command |\") cannot be written";
  if (SplitOffset(name, nullptr, nullptr)) return "an offset (\"file:123\") is for reading only";
  return "leading or trailing whitespace is not allowed in a filename";
}

// ---- Input --------------------------------------------------------------------------------

class InputImpl {
 public:
  InputType type = kNoInput;
  std::string rxfilename;
  std::string path;  // the file (files and offsets) or command (pipes)
  int fd = -1;
  FILE* pipe = nullptr;
  std::unique_ptr<FdStreamBuf> own_buf;
  std::istream stream{nullptr};

  FdStreamBuf* Buf() { return own_buf ? own_buf.get() : &StdinBuf(); }

  // Opens; returns "" or the reason it failed.
  std::string Open(const std::string& name) {
    rxfilename = name;
    type = ClassifyRxfilename(name);
    int64 offset = 0;
    switch (type) {
      case kNoInput:
        return WhyNoInput(name);
      case kStandardInput:
        stream.rdbuf(&StdinBuf());
        stream.clear();
        return "";
      case kPipeInput: {
        path = name.substr(0, name.size() - 1);
        std::cout.flush();
        std::fflush(stdout);
        pipe = ::popen(path.c_str(), "re");
        if (pipe == nullptr) return std::string("cannot start the command: ") + OsError(errno);
        fd = ::fileno(pipe);
        own_buf.reset(new FdStreamBuf(fd, FdStreamBuf::kRead, false));
        break;
      }
      case kOffsetFileInput:
        SplitOffset(name, &path, &offset);
        // fall through
      case kFileInput: {
        if (type == kFileInput) path = name;
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return OsError(errno);
        struct stat st;
        if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) return "it is a directory";
        const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        if (offset != 0) {
          if (!regular) return "an offset needs a regular file";
          if (offset > st.st_size)
            return "offset " + std::to_string(offset) + " is past the end of the file (" +
                   std::to_string(static_cast<int64>(st.st_size)) + " bytes)";
          if (::lseek(fd, offset, SEEK_SET) < 0) return OsError(errno);
        }
        own_buf.reset(new FdStreamBuf(fd, FdStreamBuf::kRead, regular, offset));
        break;
      }
    }
    stream.rdbuf(own_buf.get());
    stream.clear();
    return "";
  }

  // Moves an open file to `name`'s offset if `name` names the same file; false otherwise.
  bool Reseek(const std::string& name) {
    if (type != kFileInput && type != kOffsetFileInput) return false;
    std::string file = name;
    int64 offset = 0;
    InputType t = ClassifyRxfilename(name);
    if (t == kOffsetFileInput)
      SplitOffset(name, &file, &offset);
    else if (t != kFileInput)
      return false;
    if (file != path) return false;
    struct stat st;
    if (::fstat(fd, &st) != 0 || offset > st.st_size) return false;
    stream.clear();
    stream.seekg(offset);
    if (stream.fail()) {
      stream.clear();
      return false;
    }
    rxfilename = name;
    type = t;
    return true;
  }

  // Returns the pipe's status (0 for files); sets *why to what failed, if anything.
  int32 Close(std::string* why) {
    int32 code = 0;
    if (pipe != nullptr) {
      own_buf.reset();
      std::string status = DescribeStatus(::pclose(pipe), &code);
      pipe = nullptr;
      if (!status.empty()) *why = "the command " + Quote(path) + " failed: " + status;
    } else if (fd >= 0) {
      own_buf.reset();
      ::close(fd);
    }
    fd = -1;
    stream.rdbuf(nullptr);
    return code;
  }
  ~InputImpl() {
    std::string ignored;
    Close(&ignored);
  }
};

Input::Input() = default;

Input::Input(const std::string& rxfilename, bool* contents_binary) {
  impl_.reset(new InputImpl);
  std::string why = impl_->Open(rxfilename);
  if (why.empty() && contents_binary != nullptr &&
      !InitKaldiInputStream(impl_->stream, contents_binary))
    why = "it starts with a '\\0' byte not followed by 'B' (not a Kaldi object?)";
  if (!why.empty()) {
    impl_.reset();
    CUCTX_ERR << "cannot open " << PrintableRxfilename(rxfilename) << " for reading: " << why;
  }
}

Input::~Input() = default;

bool Input::Open(const std::string& rxfilename, bool* contents_binary) {
  std::string error;
  if (Open(rxfilename, contents_binary, &error)) return true;
  CUCTX_WARN << error;
  return false;
}

bool Input::Open(const std::string& rxfilename, bool* contents_binary, std::string* error) {
  std::string why;
  if (!(impl_ && impl_->Reseek(rxfilename))) {
    std::string ignored;
    Close(&ignored);
    impl_.reset(new InputImpl);
    why = impl_->Open(rxfilename);
  }
  if (why.empty() && contents_binary != nullptr &&
      !InitKaldiInputStream(impl_->stream, contents_binary))
    why = "it starts with a '\\0' byte not followed by 'B' (not a Kaldi object?)";
  if (why.empty()) return true;
  impl_.reset();
  *error = "cannot open " + PrintableRxfilename(rxfilename) + " for reading: " + why;
  return false;
}

bool Input::OpenTextMode(const std::string& rxfilename) { return Open(rxfilename, nullptr); }

bool Input::IsOpen() const { return impl_ != nullptr; }

std::istream& Input::Stream() {
  if (!impl_) CUCTX_ERR << "Input::Stream() called on an Input that is not open";
  return impl_->stream;
}

int32 Input::Close(std::string* error) {
  if (!impl_) return 0;
  std::string why;
  int32 code = impl_->Close(&why);
  impl_.reset();
  if (!why.empty() && error != nullptr) *error = why;
  return code;
}

int32 Input::Close() {
  std::string why;
  int32 code = Close(&why);
  if (!why.empty()) CUCTX_WARN << why;
  return code;
}

int Input::ReadErrno() const { return impl_ ? impl_->Buf()->Errno() : 0; }

// ---- Output -------------------------------------------------------------------------------

class OutputImpl {
 public:
  OutputType type = kNoOutput;
  std::string wxfilename;
  std::string path;
  int fd = -1;
  FILE* pipe = nullptr;
  std::unique_ptr<FdStreamBuf> own_buf;
  std::ostream stream{nullptr};

  std::string Open(const std::string& name) {
    wxfilename = name;
    type = ClassifyWxfilename(name);
    switch (type) {
      case kNoOutput:
        return WhyNoOutput(name);
      case kStandardOutput:
        std::cout.flush();
        std::fflush(stdout);
        stream.rdbuf(&StdoutBuf());
        stream.clear();
        return "";
      case kPipeOutput: {
        path = name.substr(1);
        std::cout.flush();
        std::fflush(stdout);
        pipe = ::popen(path.c_str(), "we");
        if (pipe == nullptr) return std::string("cannot start the command: ") + OsError(errno);
        fd = ::fileno(pipe);
        own_buf.reset(new FdStreamBuf(fd, FdStreamBuf::kWrite, false));
        break;
      }
      case kFileOutput: {
        path = name;
        fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) return OsError(errno);
        own_buf.reset(new FdStreamBuf(fd, FdStreamBuf::kWrite, false));
        break;
      }
    }
    stream.rdbuf(own_buf.get());
    stream.clear();
    return "";
  }

  // Returns "" or what failed.
  std::string Close() {
    std::string why;
    FdStreamBuf* buf = own_buf ? own_buf.get() : (type == kStandardOutput ? &StdoutBuf() : nullptr);
    if (buf != nullptr) {
      stream.flush();
      if (!buf->Flush() || stream.bad()) why = "write failed: " + OsError(buf->Errno());
    }
    own_buf.reset();
    if (pipe != nullptr) {
      int32 code = 0;
      std::string status = DescribeStatus(::pclose(pipe), &code);
      pipe = nullptr;
      // A command that failed explains a broken pipe better than the write does: name both.
      if (!status.empty())
        why = "the command " + Quote(path) + " failed: " + status +
              (why.empty() ? "" : " (" + why + ")");
    } else if (fd >= 0) {
      if (::close(fd) != 0 && why.empty()) why = "close failed: " + OsError(errno);
    }
    fd = -1;
    stream.rdbuf(nullptr);
    type = kNoOutput;
    return why;
  }
  ~OutputImpl() {
    if (type != kNoOutput) Close();
  }
};

Output::Output() = default;

Output::Output(const std::string& wxfilename, bool binary, bool write_header) {
  std::string why = OpenOrExplain(wxfilename, binary, write_header);
  if (!why.empty())
    CUCTX_ERR << "cannot open " << PrintableWxfilename(wxfilename) << " for writing: " << why;
}

Output::~Output() {
  if (impl_) Close();  // warns on failure; a destructor must not throw
}

std::string Output::OpenOrExplain(const std::string& wxfilename, bool binary, bool write_header) {
  std::string close_error;
  if (impl_ && !Close(&close_error))
    CUCTX_ERR << "failed to close the previous output before opening "
              << PrintableWxfilename(wxfilename) << ": " << close_error;
  impl_.reset(new OutputImpl);
  std::string why = impl_->Open(wxfilename);
  if (!why.empty()) {
    impl_->Close();
    impl_.reset();
    return why;
  }
  if (write_header || !binary) InitKaldiOutputStream(impl_->stream, binary && write_header);
  return "";
}

bool Output::Open(const std::string& wxfilename, bool binary, bool write_header) {
  std::string error;
  if (Open(wxfilename, binary, write_header, &error)) return true;
  CUCTX_WARN << error;
  return false;
}

bool Output::Open(const std::string& wxfilename, bool binary, bool write_header,
                  std::string* error) {
  std::string why = OpenOrExplain(wxfilename, binary, write_header);
  if (why.empty()) return true;
  *error = "cannot open " + PrintableWxfilename(wxfilename) + " for writing: " + why;
  return false;
}

bool Output::IsOpen() const { return impl_ != nullptr; }

std::ostream& Output::Stream() {
  if (!impl_) CUCTX_ERR << "Output::Stream() called on an Output that is not open";
  return impl_->stream;
}

bool Output::Close(std::string* error) {
  if (!impl_) return true;
  const std::string name = impl_->wxfilename;
  std::string why = impl_->Close();
  impl_.reset();
  if (why.empty()) return true;
  *error = "error writing " + PrintableWxfilename(name) + ": " + why;
  return false;
}

bool Output::Close() {
  std::string error;
  if (Close(&error)) return true;
  CUCTX_WARN << error;
  return false;
}

}  // namespace cuctx
