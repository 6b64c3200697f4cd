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

// Returns true with probability `prob` (in [0, 1]).
bool WithProb(float prob, RandomState* state = nullptr);

}  // namespace cuctx

#endif  // CUCTX_BASE_RANDOM_H_
