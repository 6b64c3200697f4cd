// base/error.cc: log formatting, the default stderr handler, and the throw helpers.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cuctx {
namespace {

std::atomic<LogHandler> g_log_handler{nullptr};

// The program name is written once at start-up but may be read from any thread.
std::mutex& ProgramNameMutex() {
  static std::mutex mutex;
  return mutex;
}
std::string& ProgramNameStorage() {
  static std::string name;
  return name;
}

const char* SeverityPrefix(int severity) {
  switch (severity) {
    case kLogError:
      return "ERROR";
    case kLogWarning:
      return "WARNING";
    case kLogInfo:
      return "LOG";
    default:
      return "VLOG";
  }
}

}  // namespace

LogHandler SetLogHandler(LogHandler handler) { return g_log_handler.exchange(handler); }

namespace internal {
std::atomic<int> verbose_level{0};
}  // namespace internal

void SetVerboseLevel(int level) { internal::verbose_level.store(level); }

void SetProgramName(const char* name) {
  const char* slash = name ? std::strrchr(name, '/') : nullptr;
  std::lock_guard<std::mutex> lock(ProgramNameMutex());
  ProgramNameStorage() = name ? (slash ? slash + 1 : name) : "";
}

std::string GetProgramName() {
  std::lock_guard<std::mutex> lock(ProgramNameMutex());
  return ProgramNameStorage();
}

std::string FormatLogLine(const LogMessageEnvelope& envelope, const char* message) {
  std::ostringstream line;
  line << SeverityPrefix(envelope.severity);
  if (envelope.severity > 0) line << "[" << envelope.severity << "]";
  line << " (";
  std::string program = GetProgramName();
  if (!program.empty()) line << program << ":";
  line << envelope.func << "():" << envelope.file << ":" << envelope.line << ") " << message;
  return line.str();
}

namespace internal {

void EmitLog(const LogMessageEnvelope& envelope, const std::string& message) {
  LogHandler handler = g_log_handler.load();
  if (handler != nullptr) {
    handler(envelope, message.c_str());
    return;
  }
  // One fprintf per message keeps lines from different threads whole.
  std::string line = FormatLogLine(envelope, message.c_str());
  std::fprintf(stderr, "%s\n", line.c_str());
}

std::string WithOrigin(const std::string& message, const char* func, const char* file, int line) {
  std::ostringstream out;
  out << message << " [in " << func << " at " << file << ":" << line << "]";
  return out.str();
}

void Logger::operator&(const MessageBuilder& message) const {
  EmitLog(message.Envelope(), message.Text());
}

void Thrower::operator&(const MessageBuilder& message) const {
  const LogMessageEnvelope& e = message.Envelope();
  std::string text = message.Text();
  EmitLog(e, text);
  throw Error(WithOrigin(text, e.func, e.file, e.line), text);
}

void AssertFailed(const char* condition, const char* func, const char* file, int line) {
  LogMessageEnvelope envelope{kLogError, func, file, line};
  EmitLog(envelope, std::string("Assertion failed: ") + condition);
  std::abort();
}

bool LocateSymbolRange(const std::string& trace_line, size_t* begin, size_t* end) {
  CUCTX_CHECK(begin != nullptr && end != nullptr) << "LocateSymbolRange: null output";
  for (size_t i = 1; i < trace_line.size(); ++i) {
    if (trace_line[i] != '_' || (trace_line[i - 1] != ' ' && trace_line[i - 1] != '(')) continue;
    size_t stop = trace_line.find_first_of(" +", i);
    if (stop == std::string::npos) return false;
    *begin = i;
    *end = stop;
    return true;
  }
  return false;
}

}  // namespace internal
}  // namespace cuctx
