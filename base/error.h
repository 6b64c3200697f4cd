// base/error.h: logging, verbosity and the error family (cuctx::Error and the CUCTX_* macros).
// SPDX-License-Identifier: Apache-2.0
//
// Usage:
//   CUCTX_LOG << "read " << n << " rows";      // information, always printed
//   CUCTX_WARN << "falling back to the CPU";   // warning
//   CUCTX_VLOG(2) << "detail";                 // printed when GetVerboseLevel() >= 2
//   CUCTX_ERR << "bad value " << x;            // logs, then throws cuctx::Error
//   CUCTX_CHECK(rows >= 0) << "rows = " << rows;  // throws cuctx::Error naming the condition
//   CUCTX_ASSERT(invariant);                   // our own invariants: aborts; compiled out by
//   NDEBUG
//
// Every message carries the program name (SetProgramName), the function and file:line. Output goes
// to stderr unless a handler was installed with SetLogHandler. All functions here are thread-safe;
// the verbosity and the handler are process-wide.
#ifndef CUCTX_BASE_ERROR_H_
#define CUCTX_BASE_ERROR_H_

#include <atomic>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cuctx {

// The base of every exception cuctx throws. what() is the message with its origin:
// "message [in Function at file.cc:123]"; Message() is the message alone, as CUCTX_ERR streamed
// it (the what() text for errors built from a single string). Kaldi code that catches
// KaldiFatalError and reads KaldiMessage() ports to Error and Message() (tools/port-from-kaldi).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what), message_(what) {}
  Error(const std::string& what, const std::string& message)
      : std::runtime_error(what), message_(message) {}
  const char* Message() const noexcept { return message_.c_str(); }

 private:
  std::string message_;
};

// A failed call into the CUDA runtime or one of its libraries (cuBLAS, cuSPARSE, cuRAND, cuSOLVER).
// Library() is "CUDA", "cuBLAS", ...; Status() is the library's numeric status code.
class CudaError : public Error {
 public:
  CudaError(const std::string& what, const char* library, int status)
      : Error(what), library_(library), status_(status) {}
  const char* Library() const { return library_; }
  int Status() const { return status_; }

 private:
  const char* library_;
  int status_;
};

// Device memory could not be had even after the caching allocator released its cache and retried.
// The message says how much was requested, held, in use, and what the device has free.
class OutOfMemoryError : public CudaError {
 public:
  OutOfMemoryError(const std::string& what, int status) : CudaError(what, "CUDA", status) {}
};

// Severity of a log message: negative for warnings and errors, 0 for CUCTX_LOG, n > 0 for
// CUCTX_VLOG(n).
enum LogSeverity { kLogError = -2, kLogWarning = -1, kLogInfo = 0 };

// Where a message came from; passed to a log handler together with the message text.
struct LogMessageEnvelope {
  int severity;
  const char* func;
  const char* file;
  int line;
};

// A function that receives every log message. It must not throw.
typedef void (*LogHandler)(const LogMessageEnvelope& envelope, const char* message);

// Installs a handler (nullptr restores the default, which writes to stderr); returns the old one.
LogHandler SetLogHandler(LogHandler handler);

namespace internal {
// The level behind Set/GetVerboseLevel. Declared here only so that GetVerboseLevel() compiles to
// one relaxed load: every Cu op tests it to decide whether to profile itself (cu-profile.h).
// Read and write it through the two functions below.
extern std::atomic<int> verbose_level;
}  // namespace internal

// Verbosity for CUCTX_VLOG; 0 by default. Set by --verbose in ParseOptions. At 1 or more the Cu
// ops also profile themselves (cudamatrix/cu-profile.h).
void SetVerboseLevel(int level);
inline int GetVerboseLevel() { return internal::verbose_level.load(std::memory_order_relaxed); }

// Program name shown in messages; ParseOptions sets it from argv[0] (directory stripped).
void SetProgramName(const char* name);
std::string GetProgramName();

// Formats one line as the default handler prints it, e.g.
// "WARNING (prog:Func():file.cc:12) text". Exposed for handlers that want the same shape.
std::string FormatLogLine(const LogMessageEnvelope& envelope, const char* message);

namespace internal {

// Collects a streamed message; consumed by the voidify helpers below.
class MessageBuilder {
 public:
  MessageBuilder(int severity, const char* func, const char* file, int line)
      : envelope_{severity, func, file, line} {}
  template <typename T>
  MessageBuilder& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  const LogMessageEnvelope& Envelope() const { return envelope_; }
  std::string Text() const { return stream_.str(); }

 private:
  LogMessageEnvelope envelope_;
  std::ostringstream stream_;
};

// `Logger() & builder` prints the message. `&` binds looser than `<<`, so the whole message is
// streamed first; the result is void, which lets the macros sit in a ternary.
struct Logger {
  void operator&(const MessageBuilder& message) const;
};

// `Thrower() & builder` prints the message, then throws cuctx::Error.
struct Thrower {
  [[noreturn]] void operator&(const MessageBuilder& message) const;
};

// Sends an already formatted message through the handler (used by the two helpers above).
void EmitLog(const LogMessageEnvelope& envelope, const std::string& message);

// Builds the what() text of an exception: "message [in Func at file:line]".
std::string WithOrigin(const std::string& message, const char* func, const char* file, int line);

[[noreturn]] void AssertFailed(const char* condition, const char* func, const char* file, int line);

// Finds the mangled (or C) function name in one line of a backtrace, as Kaldi's function of this
// name does for its stack traces: the name starts at the first '_' that follows a space or a '('
// and ends before the next ' ' or '+'. Handles glibc's "prog(_ZN5cuctx3FooEv+0x1b) [0x4011]"
// and macOS's "3 prog 0x0000 _ZN5cuctx3FooEv + 27". Returns false (and leaves *begin and *end
// unspecified) when there is no such name. Used by Kaldi's own error test; not needed otherwise.
bool LocateSymbolRange(const std::string& trace_line, size_t* begin, size_t* end);

}  // namespace internal
}  // namespace cuctx

#define CUCTX_MESSAGE_(severity) \
  ::cuctx::internal::MessageBuilder((severity), __func__, __FILE__, __LINE__)

#define CUCTX_LOG ::cuctx::internal::Logger() & CUCTX_MESSAGE_(::cuctx::kLogInfo)
#define CUCTX_WARN ::cuctx::internal::Logger() & CUCTX_MESSAGE_(::cuctx::kLogWarning)
#define CUCTX_VLOG(level)                          \
  ((level) > ::cuctx::GetVerboseLevel()) ? (void)0 \
                                         : ::cuctx::internal::Logger() & CUCTX_MESSAGE_(level)
#define CUCTX_ERR ::cuctx::internal::Thrower() & CUCTX_MESSAGE_(::cuctx::kLogError)
#define CUCTX_CHECK(cond)                                                    \
  (cond) ? (void)0                                                           \
         : ::cuctx::internal::Thrower() & CUCTX_MESSAGE_(::cuctx::kLogError) \
                                              << "Check failed: " #cond " "

#ifdef NDEBUG
#define CUCTX_ASSERT(cond) \
  do {                     \
    (void)sizeof(cond);    \
  } while (0)
#else
#define CUCTX_ASSERT(cond)                                                             \
  do {                                                                                 \
    if (!(cond)) ::cuctx::internal::AssertFailed(#cond, __func__, __FILE__, __LINE__); \
  } while (0)
#endif

// Kaldi's expensive checks: CUCTX_ASSERT when the program is built with -DCUCTX_PARANOID (Kaldi's
// KALDI_PARANOID), otherwise compiled out (the condition is not evaluated).
#ifdef CUCTX_PARANOID
#define CUCTX_PARANOID_ASSERT(cond) CUCTX_ASSERT(cond)
#else
#define CUCTX_PARANOID_ASSERT(cond) \
  do {                              \
    (void)sizeof(cond);             \
  } while (0)
#endif

#endif  // CUCTX_BASE_ERROR_H_
