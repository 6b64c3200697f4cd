// base/random.h: thread-safe pseudo-random helpers (Kaldi's Rand, RandUniform, RandGauss, ...).
// SPDX-License-Identifier: Apache-2.0
//
// With state == nullptr the functions draw from the process-wide generator, which is the C
// library's rand() as in Kaldi (calls serialized by a mutex), so they are safe from any thread
// and reproducible in a single-threaded program after SetRandomSeed() or srand(). For speed or
// per-thread reproducibility pass a RandomState owned by the caller.
#ifndef CUCTX_BASE_RANDOM_H_
#define CUCTX_BASE_RANDOM_H_

#include "base/types.h"

#include <cmath>

namespace cuctx {

// The largest value Rand() returns (as RAND_MAX on glibc).
constexpr int kRandMax = 2147483647;

// A caller-owned generator state. The default constructor seeds it from the global generator.
struct RandomState {
  RandomState();
  explicit RandomState(uint64 seed_value) : seed(seed_value) {}
  uint64 seed;
};

// Reseeds the process-wide generator (srand(); the C library's default seed is 1).
void SetRandomSeed(uint64 seed);

// Uniform integer in [0, kRandMax].
int Rand(RandomState* state = nullptr);

// Uniform integer in [min_val, max_val]; throws cuctx::Error if max_val < min_val.
int32 RandInt(int32 min_val, int32 max_val, RandomState* state = nullptr);

// Uniform in the open interval (0, 1), so log(RandUniform()) is finite.
float RandUniform(RandomState* state = nullptr);

// Standard normal (Box-Muller).
float RandGauss(RandomState* state = nullptr);

// Two independent standard normals.
void RandGauss2(float* a, float* b, RandomState* state = nullptr);
void RandGauss2(double* a, double* b, RandomState* state = nullptr);

// A Poisson-distributed count with mean `lambda` (>= 0; 0 gives 0). Takes time proportional to
// lambda (products of uniforms, in steps of mean at most 30 so that exp(-step) stays normal).
// Throws cuctx::Error if lambda is negative or not finite.
int32 RandPoisson(float lambda, RandomState* state = nullptr);

// Returns true with probability `prob` (in [0, 1]).
bool WithProb(float prob, RandomState* state = nullptr);

namespace internal {
[[noreturn]] void ThrowNegativePruneThreshold(double prune_thresh);
}  // namespace internal

// Randomized pruning that keeps the expected value (Kaldi uses it on posteriors): a value at least
// prune_thresh in magnitude, or 0, is returned unchanged; a smaller one becomes +-prune_thresh
// with probability |post| / prune_thresh and 0 otherwise. Throws cuctx::Error if
// prune_thresh < 0.
template <class Float>
inline Float RandPrune(Float post, BaseFloat prune_thresh, RandomState* state = nullptr) {
  if (!(prune_thresh >= 0)) internal::ThrowNegativePruneThreshold(prune_thresh);
  if (post == 0 || std::abs(post) >= prune_thresh) return post;
  const bool keep = RandUniform(state) <= std::abs(post) / prune_thresh;
  if (!keep) return Float(0);
  return post > 0 ? static_cast<Float>(prune_thresh) : static_cast<Float>(-prune_thresh);
}

}  // namespace cuctx

#endif  // CUCTX_BASE_RANDOM_H_
