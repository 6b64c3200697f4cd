// tests/testing.h: shared test helpers: the seeded random source, tolerances and edge shapes.
// SPDX-License-Identifier: Apache-2.0
//
// Seeds are fixed (default 20261122) and overridable with CUCTX_TEST_SEED; test-main.cc prints the
// seed with every failure. Never use std::random_device in tests. Matrix-specific helpers
// (RandomMatrix, ExpectNear on matrices) live in tests/matrix-testing.h.
#ifndef CUCTX_TESTS_TESTING_H_
#define CUCTX_TESTS_TESTING_H_

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
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
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }
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
constexpr double Tol<float>() { return 1e-5; }
template <>
constexpr double Tol<double>() { return 1e-12; }

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

}  // namespace test
}  // namespace cuctx

// Skips the current test with "skipped: no GPU" unless a GPU is selected. Use only for behaviour
// that exists only on a device (properties, pinned memory, pool statistics on real memory).
#define CUCTX_REQUIRE_GPU()                                          \
  do {                                                               \
    if (!::cuctx::test::GpuEnabled()) GTEST_SKIP() << "skipped: no GPU"; \
  } while (0)

#endif  // CUCTX_TESTS_TESTING_H_
