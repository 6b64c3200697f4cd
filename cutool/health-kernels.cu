// cutool/health-kernels.cu: memory pattern kernels of the GPU health check (write a
// pattern over a buffer, then count the words that do not read back).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-launch.cuh"
#include "cutool/health-kernels.h"

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

constexpr int kHealthThreads = 256;
// Enough blocks to fill any current GPU several times over; the grid-stride loops cover the rest.
constexpr int64_t kHealthMaxBlocks = 8192;

// splitmix64's finaliser: a cheap bijective 64-bit mix, so neighbouring addresses get unrelated
// words and a stuck or shorted bit shows up in about half of them.
__device__ __forceinline__ uint64_t MixBits(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// The word expected at `addr`. It depends only on the address and the seed, so buffers can be
// written and verified in any order and chunk boundaries need no bookkeeping.
__device__ __forceinline__ uint64_t PatternWord(MemPattern pattern, uint64_t addr, uint64_t seed) {
  switch (pattern) {
    case MemPattern::kWalkingOnes:
      return uint64_t{1} << (((addr >> 3) + seed) & 63);
    case MemPattern::kOwnAddress:
      return addr ^ seed;
    default:
      return MixBits(addr ^ MixBits(seed + 0x9e3779b97f4a7c15ull));
  }
}

__global__ void MemPatternWriteKernel(uint64_t* words, int64_t count, MemPattern pattern,
                                      uint64_t seed) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step)
    words[i] = PatternWord(pattern, reinterpret_cast<uint64_t>(words + i), seed);
}

// Each thread counts its mismatches, each warp sums them with shuffles and its lane 0 adds the
// warp's total with one atomic, so a clean buffer costs no atomics at all.
__global__ void MemPatternVerifyKernel(const uint64_t* words, int64_t count, MemPattern pattern,
                                       uint64_t seed, unsigned long long* bad) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    // volatile: the read must really go to memory, once per word.
    const uint64_t got = *static_cast<const volatile uint64_t*>(words + i);
    if (got != PatternWord(pattern, reinterpret_cast<uint64_t>(words + i), seed)) ++mine;
  }
  // Every thread of the (full, kHealthThreads-wide) block reaches this point.
  for (int offset = 16; offset > 0; offset /= 2)
    mine += __shfl_down_sync(0xffffffffu, mine, offset);
  if ((threadIdx.x & 31) == 0 && mine != 0) atomicAdd(bad, mine);
}

unsigned HealthBlocks(int64_t count) {
  const int64_t blocks = (count + kHealthThreads - 1) / kHealthThreads;
  return static_cast<unsigned>(blocks < kHealthMaxBlocks ? blocks : kHealthMaxBlocks);
}

}  // namespace

void LaunchMemPatternWrite(uint64_t* d_words, int64_t count, MemPattern pattern, uint64_t seed,
                           CuStream stream) {
  if (count <= 0) return;
  internal::Launch<MemPatternWriteKernel>(CUCTX_LAUNCH_SITE("MemPatternWriteKernel"),
                                          HealthBlocks(count), kHealthThreads, 0, stream, d_words,
                                          count, pattern, seed);
}

void LaunchMemPatternVerify(const uint64_t* d_words, int64_t count, MemPattern pattern,
                            uint64_t seed, unsigned long long* d_bad, CuStream stream) {
  if (count <= 0) return;
  internal::Launch<MemPatternVerifyKernel>(CUCTX_LAUNCH_SITE("MemPatternVerifyKernel"),
                                           HealthBlocks(count), kHealthThreads, 0, stream, d_words,
                                           count, pattern, seed, d_bad);
}

}  // namespace cuctx
