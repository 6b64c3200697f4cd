// tests/base/error-test.cc: logging macros, verbosity, program name, handlers and the error family.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"

#include "tests/testing.h"

#include <atomic>
#include <gtest/gtest.h>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace cuctx {
namespace {

// One captured log message: the envelope (with the strings copied) and the text.
struct Captured {
  int severity;
  std::string func;
  std::string file;
  int line;
  std::string message;
};

std::mutex g_capture_mutex;
std::vector<Captured> g_captured;

void CaptureHandler(const LogMessageEnvelope& e, const char* message) {
  std::lock_guard<std::mutex> lock(g_capture_mutex);
  g_captured.push_back({e.severity, e.func, e.file, e.line, message});
}

class ErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_captured.clear();
    old_handler_ = SetLogHandler(CaptureHandler);
    old_program_ = GetProgramName();
    old_verbose_ = GetVerboseLevel();
    SetVerboseLevel(0);
  }
  void TearDown() override {
    SetLogHandler(old_handler_);
    SetProgramName(old_program_.c_str());
    SetVerboseLevel(old_verbose_);
  }

 private:
  LogHandler old_handler_ = nullptr;
  std::string old_program_;
  int old_verbose_ = 0;
};

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

void FunctionThatLogs() { CUCTX_LOG << "hello " << 42; }

TEST_F(ErrorTest, LogCarriesFunctionFileAndLine) {
  const int line = __LINE__ - 3;  // the CUCTX_LOG line above
  FunctionThatLogs();
  ASSERT_EQ(g_captured.size(), 1u);
  const Captured& c = g_captured[0];
  EXPECT_EQ(c.severity, kLogInfo);
  EXPECT_EQ(c.func, "FunctionThatLogs");
  EXPECT_TRUE(Contains(c.file, "error-test.cc")) << c.file;
  EXPECT_EQ(c.line, line);
  EXPECT_EQ(c.message, "hello 42");
}

TEST_F(ErrorTest, WarningHasWarningSeverity) {
  CUCTX_WARN << "careful";
  ASSERT_EQ(g_captured.size(), 1u);
  EXPECT_EQ(g_captured[0].severity, kLogWarning);
  EXPECT_EQ(g_captured[0].message, "careful");
}

TEST_F(ErrorTest, FormatLogLineHasProgramFunctionFileAndLine) {
  SetProgramName("/some/dir/my-prog");
  LogMessageEnvelope warning{kLogWarning, "Func", "dir/file.cc", 12};
  EXPECT_EQ(FormatLogLine(warning, "text"), "WARNING (my-prog:Func():dir/file.cc:12) text");
  LogMessageEnvelope error{kLogError, "F", "f.cc", 1};
  EXPECT_EQ(FormatLogLine(error, "x"), "ERROR (my-prog:F():f.cc:1) x");
  LogMessageEnvelope info{kLogInfo, "F", "f.cc", 1};
  EXPECT_EQ(FormatLogLine(info, "x"), "LOG (my-prog:F():f.cc:1) x");
  LogMessageEnvelope vlog{2, "F", "f.cc", 1};
  EXPECT_EQ(FormatLogLine(vlog, "x"), "VLOG[2] (my-prog:F():f.cc:1) x");
  SetProgramName("");
  EXPECT_EQ(FormatLogLine(info, "x"), "LOG (F():f.cc:1) x");
}

TEST_F(ErrorTest, DefaultHandlerWritesFormattedLineToStderr) {
  SetProgramName("prog");
  SetLogHandler(nullptr);
  ::testing::internal::CaptureStderr();
  CUCTX_WARN << "to stderr";
  std::string err = ::testing::internal::GetCapturedStderr();
  SetLogHandler(CaptureHandler);
  EXPECT_TRUE(Contains(err, "WARNING (prog:")) << err;
  EXPECT_TRUE(Contains(err, "error-test.cc:")) << err;
  EXPECT_TRUE(Contains(err, ") to stderr\n")) << err;
  EXPECT_TRUE(g_captured.empty());
}

TEST_F(ErrorTest, SetLogHandlerReturnsPreviousHandler) {
  LogHandler previous = SetLogHandler(nullptr);
  EXPECT_EQ(previous, &CaptureHandler);
  EXPECT_EQ(SetLogHandler(CaptureHandler), nullptr);
}

TEST_F(ErrorTest, ProgramNameDropsDirectory) {
  SetProgramName("/usr/bin/tool");
  EXPECT_EQ(GetProgramName(), "tool");
  SetProgramName("plain");
  EXPECT_EQ(GetProgramName(), "plain");
  SetProgramName(nullptr);
  EXPECT_EQ(GetProgramName(), "");
}

TEST_F(ErrorTest, ErrThrowsWithMessageAndOrigin) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    CUCTX_ERR << "bad value " << 7;
    FAIL() << "CUCTX_ERR returned";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_TRUE(Contains(what, "bad value 7")) << what;
    EXPECT_TRUE(Contains(what, "error-test.cc:" + std::to_string(line))) << what;
    EXPECT_TRUE(Contains(what, "[in TestBody at ")) << what;
  }
  // It is also logged, as an error.
  ASSERT_EQ(g_captured.size(), 1u);
  EXPECT_EQ(g_captured[0].severity, kLogError);
  EXPECT_EQ(g_captured[0].message, "bad value 7");
}

TEST_F(ErrorTest, WithOriginFormat) {
  EXPECT_EQ(internal::WithOrigin("msg", "Fn", "a/b.cc", 9), "msg [in Fn at a/b.cc:9]");
}

TEST_F(ErrorTest, CheckPassesWithoutEvaluatingMessage) {
  int evaluated = 0;
  auto side_effect = [&evaluated] { return ++evaluated; };
  CUCTX_CHECK(1 + 1 == 2) << "never built " << side_effect();
  EXPECT_EQ(evaluated, 0);
  EXPECT_TRUE(g_captured.empty());
}

TEST_F(ErrorTest, CheckNamesConditionAndMessage) {
  int rows = -3;
  try {
    CUCTX_CHECK(rows >= 0) << "rows = " << rows;
    FAIL() << "CUCTX_CHECK did not throw";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_TRUE(Contains(what, "Check failed: rows >= 0")) << what;
    EXPECT_TRUE(Contains(what, "rows = -3")) << what;
    EXPECT_TRUE(Contains(what, "error-test.cc:")) << what;
  }
}

TEST_F(ErrorTest, CheckIsSafeInUnbracedIfElse) {
  int branch = 0;
  bool flag = false;
  if (flag)
    CUCTX_CHECK(true) << "unused";
  else
    branch = 2;
  EXPECT_EQ(branch, 2);
}

TEST_F(ErrorTest, VlogRespectsVerbosity) {
  int evaluated = 0;
  auto side_effect = [&evaluated] { return ++evaluated; };
  CUCTX_VLOG(1) << "hidden " << side_effect();
  EXPECT_TRUE(g_captured.empty());
  EXPECT_EQ(evaluated, 0) << "a suppressed message is not built";
  SetVerboseLevel(2);
  EXPECT_EQ(GetVerboseLevel(), 2);
  CUCTX_VLOG(1) << "one";
  CUCTX_VLOG(2) << "two";
  CUCTX_VLOG(3) << "three";
  ASSERT_EQ(g_captured.size(), 2u);
  EXPECT_EQ(g_captured[0].severity, 1);
  EXPECT_EQ(g_captured[0].message, "one");
  EXPECT_EQ(g_captured[1].severity, 2);
  EXPECT_EQ(g_captured[1].message, "two");
}

TEST_F(ErrorTest, ExceptionHierarchy) {
  static_assert(std::is_base_of<std::runtime_error, Error>::value, "Error is a runtime_error");
  static_assert(std::is_base_of<Error, CudaError>::value, "CudaError is an Error");
  static_assert(std::is_base_of<CudaError, OutOfMemoryError>::value, "OOM is a CudaError");
  try {
    throw OutOfMemoryError("out of memory: asked 1 GiB", 2);
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "out of memory: asked 1 GiB");
    const CudaError* cuda = dynamic_cast<const CudaError*>(&e);
    ASSERT_NE(cuda, nullptr);
    EXPECT_STREQ(cuda->Library(), "CUDA");
    EXPECT_EQ(cuda->Status(), 2);
    EXPECT_NE(dynamic_cast<const OutOfMemoryError*>(&e), nullptr);
  }
  CudaError blas("cublas failed", "cuBLAS", 13);
  EXPECT_STREQ(blas.Library(), "cuBLAS");
  EXPECT_EQ(blas.Status(), 13);
  EXPECT_THROW(throw CudaError("x", "CUDA", 1), Error);
  EXPECT_THROW(throw Error("x"), std::runtime_error);
}

TEST_F(ErrorTest, AssertIsCompiledOutOrAborts) {
#ifdef NDEBUG
  int evaluated = 0;
  CUCTX_ASSERT(++evaluated > 100);
  EXPECT_EQ(evaluated, 0) << "NDEBUG: the condition is not evaluated";
#else
  CUCTX_ASSERT(1 + 1 == 2);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The child must log to stderr, where the death test looks, not to the capturing handler.
  EXPECT_DEATH(
      {
        SetLogHandler(nullptr);
        CUCTX_ASSERT(1 + 1 == 3);
      },
      "Assertion failed: 1 \\+ 1 == 3");
#endif
}

TEST_F(ErrorTest, ConcurrentLoggingDeliversEveryMessage) {
  constexpr int kThreads = 4, kPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kPerThread; ++i) CUCTX_LOG << "thread " << t << " message " << i;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(g_captured.size(), static_cast<size_t>(kThreads * kPerThread));
}

TEST_F(ErrorTest, ConcurrentVerbosityAndProgramNameAreSafe) {
  SetProgramName("a");
  std::atomic<bool> stop{false};
  std::thread writer([&stop] {
    for (int i = 0; !stop.load(); ++i) {
      SetVerboseLevel(i % 3);
      SetProgramName(i % 2 ? "a" : "bb");
    }
  });
  for (int i = 0; i < 2000; ++i) {
    std::string name = GetProgramName();
    EXPECT_TRUE(name == "a" || name == "bb") << name;
    int level = GetVerboseLevel();
    EXPECT_TRUE(level >= 0 && level < 3);
  }
  stop = true;
  writer.join();
}

TEST_F(ErrorTest, MessageIsTheStreamedTextWithoutOrigin) {
  try {
    CUCTX_ERR << "bad value " << 7;
    FAIL() << "CUCTX_ERR did not throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.Message(), "bad value 7");
    EXPECT_NE(std::string(e.what()).find("bad value 7 [in "), std::string::npos) << e.what();
  }
  EXPECT_STREQ(Error("plain").Message(), "plain");
}

TEST_F(ErrorTest, LocateSymbolRangeFindsTheMangledName) {
  auto symbol = [](const std::string& line) {
    size_t begin = 0, end = 0;
    if (!internal::LocateSymbolRange(line, &begin, &end)) return std::string("<none>");
    return line.substr(begin, end - begin);
  };
  EXPECT_EQ(symbol("./prog(_ZN5cuctx3FooEv+0x1b) [0x401000]"), "_ZN5cuctx3FooEv");
  EXPECT_EQ(symbol("4 prog 0x00000001 _ZN5cuctx3BarEi + 27"), "_ZN5cuctx3BarEi");
  EXPECT_EQ(symbol("9 libsystem 0x0001 start_thread + 13"), "<none>");  // a C name
  EXPECT_EQ(symbol("./prog(_ZN5cuctx3FooEv"), "<none>");                // no end
  EXPECT_EQ(symbol(""), "<none>");
}

TEST_F(ErrorTest, ParanoidAssertIsCompiledOutByDefault) {
  int evaluated = 0;
  CUCTX_PARANOID_ASSERT(++evaluated == 100);  // neither evaluated nor checked
  EXPECT_EQ(evaluated, 0);
}

}  // namespace
}  // namespace cuctx
