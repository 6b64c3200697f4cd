// base/random.cc: splitmix64-based generators behind the Rand* helpers.
// SPDX-License-Identifier: Apache-2.0
#include "base/random.h"

#include "base/error.h"

#include <cmath>
#include <cstdlib>
#include <mutex>

namespace cuctx {
namespace {

// splitmix64: one 64-bit state word, good statistical quality, and cheap to copy into a
// RandomState; much smaller than a Mersenne twister state.
uint64 NextBits(uint64* state) {
  uint64 z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The process-wide generator is the C library's rand(), as in Kaldi, so that programs and tests
// that seed it with srand() get the same reproducible draws they get there; SetRandomSeed() calls
// srand(). Calls are serialized here (rand() itself makes no thread-safety promise).
std::mutex g_mutex;

// 64 bits from three 31-bit rand() values (RAND_MAX is 2^31 - 1 on glibc).
uint64 Draw(RandomState* state) {
  if (state != nullptr) return NextBits(&state->seed);
  std::lock_guard<std::mutex> lock(g_mutex);
  const uint64 a = static_cast<uint64>(std::rand()), b = static_cast<uint64>(std::rand()),
               c = static_cast<uint64>(std::rand());
  return (a << 33) ^ (b << 2) ^ c;
}

}  // namespace

RandomState::RandomState() : seed(Draw(nullptr)) {}

void SetRandomSeed(uint64 seed) {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::srand(static_cast<unsigned>(seed ^ (seed >> 32)));
}

int Rand(RandomState* state) {
  if (state != nullptr) return static_cast<int>(Draw(state) >> 33);
  std::lock_guard<std::mutex> lock(g_mutex);
  return std::rand();  // exactly Kaldi's Rand() without a state
}

int32 RandInt(int32 min_val, int32 max_val, RandomState* state) {
  CUCTX_CHECK(max_val >= min_val) << "RandInt: max_val " << max_val << " < min_val " << min_val;
  uint64 span = static_cast<uint64>(static_cast<int64>(max_val) - min_val) + 1;
  return static_cast<int32>(min_val + static_cast<int64>(Draw(state) % span));
}

float RandUniform(RandomState* state) {
  // 24 random bits plus one half-step: strictly inside (0, 1) in float.
  uint64 bits = Draw(state) >> 40;
  return (static_cast<float>(bits) + 0.5f) * (1.0f / 16777216.0f);
}

float RandGauss(RandomState* state) {
  float u1 = RandUniform(state), u2 = RandUniform(state);
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.283185307179586f * u2);
}

void RandGauss2(float* a, float* b, RandomState* state) {
  float u1 = RandUniform(state), u2 = RandUniform(state);
  float r = std::sqrt(-2.0f * std::log(u1));
  *a = r * std::cos(6.283185307179586f * u2);
  *b = r * std::sin(6.283185307179586f * u2);
}

void RandGauss2(double* a, double* b, RandomState* state) {
  float fa, fb;
  RandGauss2(&fa, &fb, state);
  *a = fa;
  *b = fb;
}

int32 RandPoisson(float lambda, RandomState* state) {
  CUCTX_CHECK(lambda >= 0.0f && std::isfinite(lambda))
      << "RandPoisson: lambda " << lambda << " must be finite and >= 0";
  // A Poisson(l1 + l2) count is the sum of independent Poisson(l1) and Poisson(l2) counts, so a
  // large mean is drawn in steps whose exp(-step) is far from underflow.
  constexpr double kStep = 30.0;
  int32 count = 0;
  double remaining = lambda;
  while (remaining > 0.0) {
    const double step = remaining < kStep ? remaining : kStep;
    remaining -= step;
    // Knuth: multiply uniforms until the product drops to exp(-step) or below.
    const double limit = std::exp(-step);
    double product = RandUniform(state);
    while (product > limit) {
      ++count;
      product *= RandUniform(state);
    }
  }
  return count;
}

namespace internal {
void ThrowNegativePruneThreshold(double prune_thresh) {
  CUCTX_ERR << "RandPrune: prune_thresh " << prune_thresh << " must be >= 0";
}
}  // namespace internal

bool WithProb(float prob, RandomState* state) {
  CUCTX_CHECK(prob >= 0.0f && prob <= 1.0f) << "WithProb: prob " << prob << " outside [0, 1]";
  return RandUniform(state) < prob;
}

}  // namespace cuctx
