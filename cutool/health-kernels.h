// cutool/health-kernels.h: launchers of the GPU health check's memory pattern kernels (private to
// cutool/; defined in cutool/health-kernels.cu, so they exist only in CUDA builds).
// SPDX-License-Identifier: Apache-2.0
//
// Same conventions as cudamatrix/internal/cu-kernels.h: each launcher computes its own grid,
// launches asynchronously on `stream` through internal::Launch (cudamatrix/cu-launch.cuh).
#ifndef CUCTX_CUTOOL_HEALTH_KERNELS_H_
#define CUCTX_CUTOOL_HEALTH_KERNELS_H_

#include "cudamatrix/internal/cu-kernels.h"  // CuStream

#include <cstdint>

namespace cuctx {

// Memory test patterns: the 64-bit word stored at byte address a (seed s) is
//   kWalkingOnes  a single set bit, at position (a / 8 + s) mod 64;
//   kOwnAddress   a XOR s (address-in-address: catches address lines that alias two words);
//   kRandom       a bijective hash of a and s (a fresh pseudo-random pattern for every seed).
enum class MemPattern : int32_t { kWalkingOnes, kOwnAddress, kRandom };

// Writes `pattern` into d_words[0, count) (d_words 8-byte aligned).
void LaunchMemPatternWrite(uint64_t* d_words, int64_t count, MemPattern pattern, uint64_t seed,
                           CuStream stream);

// Reads d_words[0, count) back and atomically adds the number of words that differ from
// `pattern` (same seed as the write) to *d_bad, which the caller zeroes first.
void LaunchMemPatternVerify(const uint64_t* d_words, int64_t count, MemPattern pattern,
                            uint64_t seed, unsigned long long* d_bad, CuStream stream);

}  // namespace cuctx

#endif  // CUCTX_CUTOOL_HEALTH_KERNELS_H_
