// tests/testing.h: shared test helpers: the seeded random source, tolerances and edge shapes.
// SPDX-License-Identifier: Apache-2.0
//
// Seeds are fixed (default 20261122) and overridable with CUCTX_TEST_SEED; test-main.cc prints the
// seed with every failure. Never use std::random_device in tests. Matrix-specific helpers
// (RandomMatrix, ExpectNear on matrices) live in tests/matrix-testing.h.
//
// Also here: checks of expected cuctx::Error messages (ThrowsWith, ExpectErrorContaining,
// ErrorText, Contains), QuietLog to keep expected errors off stderr, and builders of golden Kaldi
// binary streams (Bytes, Int32, RawInt32, OneToNBytes, PipeBuf) for the base and matrix I/O tests.
#ifndef CUCTX_TESTS_TESTING_H_
#define CUCTX_TESTS_TESTING_H_

#include "base/error.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <initializer_list>
#include <ostream>
#include <random>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {
namespace test {

// The run's seed: CUCTX_TEST_SEED if set (decimal), else the fixed default.
uint64_t Seed();

// A deterministic random source for one test. Not thread-safe; give each thread its own,
// seeded with Seed() + thread index.
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  // Uniform in [lo, hi).
  double Uniform(double lo = 0.0, double hi = 1.0) {
    return std::uniform_real_distribution<double>(lo, hi)(gen_);
  }
  double Gauss() { return std::normal_distribution<double>(0.0, 1.0)(gen_); }
  // Uniform integer in [lo, hi] (inclusive).
  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen_);
  }
  std::mt19937_64& Engine() { return gen_; }

 private:
  std::mt19937_64 gen_;
};

// An Rng seeded with Seed() plus `offset` (use distinct offsets for per-thread generators).
inline Rng MakeRng(uint64_t offset = 0) { return Rng(Seed() + offset); }

// Relative tolerance for element-wise ops; reductions and GEMM scale it (see each use).
template <typename Real>
constexpr double Tol();
template <>
constexpr double Tol<float>() {
  return 1e-5;
}
template <>
constexpr double Tol<double>() {
  return 1e-12;
}

// A matrix shape used to sweep edge cases.
struct Shape {
  int rows;
  int cols;
};
inline std::ostream& operator<<(std::ostream& os, const Shape& s) {
  return os << "shape " << s.rows << "x" << s.cols;
}

// 0x0, 1x1, odd sizes, sizes off the block multiples, single rows and columns, non-square.
extern const std::vector<Shape> kEdgeShapes;

// Random indices in [0, n) of length `count`; with allow_minus_one some entries are -1.
std::vector<int32_t> RandomIndices(int count, int n, bool allow_minus_one, Rng* rng);

// The GPU mode the test binary was started in ("no", "optional" or "yes").
std::string GpuMode();

// True when this test binary runs with a selected GPU.
bool GpuEnabled();

// ---- expected errors

// Silences the log for its scope and then restores the previous handler. CUCTX_ERR and CUCTX_CHECK
// log before they throw; tests that provoke errors on purpose keep them off stderr with a local
// QuietLog or a QuietLog member of their fixture. The handler is process-wide, so messages from
// other threads are silenced too while it lives.
class QuietLog {
 public:
  QuietLog() : old_(SetLogHandler([](const LogMessageEnvelope&, const char*) {})) {}
  ~QuietLog() { SetLogHandler(old_); }
  QuietLog(const QuietLog&) = delete;
  QuietLog& operator=(const QuietLog&) = delete;

 private:
  LogHandler old_;
};

// Runs `body` and passes if it throws cuctx::Error whose message contains `needle`; fails if it
// throws none or the message lacks the needle. Other exceptions propagate. The log is left as it
// is. Use as EXPECT_TRUE(test::ThrowsWith([&] { ... }, "3x4")).
template <typename F>
::testing::AssertionResult ThrowsWith(F body, const std::string& needle) {
  try {
    body();
  } catch (const Error& e) {
    if (std::string(e.what()).find(needle) != std::string::npos)
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "message \"" << e.what() << "\" does not contain \"" << needle << "\"";
  }
  return ::testing::AssertionFailure()
         << "no cuctx::Error thrown (expected one containing \"" << needle << "\")";
}

// EXPECT_TRUE(ThrowsWith(body, needle)) with the log silenced while `body` runs.
template <typename F>
void ExpectErrorContaining(F body, const std::string& needle) {
  QuietLog quiet;
  EXPECT_TRUE(ThrowsWith(body, needle));
}

// Returns what() of the cuctx::Error that `body` throws; adds a failure and returns "" if it
// throws none. For checking several parts of one message with Contains.
template <typename F>
std::string ErrorText(F body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a cuctx::Error";
  return "";
}

// Passes if `text` contains `needle`; use as EXPECT_TRUE(test::Contains(text, "byte 3")).
::testing::AssertionResult Contains(const std::string& text, const std::string& needle);

// ---- golden Kaldi binary streams

// A byte string from a list of byte values (0..255) or characters; std::string's own
// constructors stop at '\0'.
std::string Bytes(std::initializer_list<int> values);

// An int32 as Kaldi writes it in binary: the size byte 4, then the value little-endian.
std::string Int32(int32_t value);

// A raw little-endian int32 with no size byte (as in compressed-matrix headers).
std::string RawInt32(int32_t value);

// The values 1, 2, ..., n (0 <= n <= 6) as consecutive little-endian IEEE-754 floats or doubles.
// The bytes are written out by hand, so golden streams do not depend on the code under test.
template <typename Real>
std::string OneToNBytes(int n);
template <>
std::string OneToNBytes<float>(int n);
template <>
std::string OneToNBytes<double>(int n);

// A stream buffer over `data` that cannot seek, as a pipe: tellg() and seekg() fail on a stream
// reading from it.
class PipeBuf : public std::streambuf {
 public:
  explicit PipeBuf(std::string data) : data_(std::move(data)) {
    setg(&data_[0], &data_[0], &data_[0] + data_.size());
  }

 private:
  std::string data_;
};

}  // namespace test
}  // namespace cuctx

// Skips the current test with "skipped: no GPU" unless a GPU is selected. Use only for behaviour
// that exists only on a device (properties, pinned memory, pool statistics on real memory).
#define CUCTX_REQUIRE_GPU()                                              \
  do {                                                                   \
    if (!::cuctx::test::GpuEnabled()) GTEST_SKIP() << "skipped: no GPU"; \
  } while (0)

#endif  // CUCTX_TESTS_TESTING_H_
