// tests/cudamatrix/allocator-blocks.h: live blocks with checkable contents and random request
// sizes, for the allocator tests' random mixes (the conformance suite and the caching allocator's
// own tests).
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_TESTS_CUDAMATRIX_ALLOCATOR_BLOCKS_H_
#define CUCTX_TESTS_CUDAMATRIX_ALLOCATOR_BLOCKS_H_

#include "tests/testing.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cuctx {
namespace test {

// One live allocation of the random mixes: where, how big, and the byte it was filled with.
struct LiveBlock {
  unsigned char* ptr;
  size_t bytes;
  unsigned char fill;
};

// Fills the first and last bytes of a block (and a stretch in between) with `fill`; the sampled
// bytes keep large blocks cheap while still catching overlaps at either end.
inline void FillBlock(const LiveBlock& b) {
  const size_t n = std::min<size_t>(b.bytes, 4096);
  std::memset(b.ptr, b.fill, n);
  std::memset(b.ptr + b.bytes - n, b.fill, n);
}

inline bool BlockIntact(const LiveBlock& b) {
  const size_t n = std::min<size_t>(b.bytes, 4096);
  for (size_t i = 0; i < n; ++i)
    if (b.ptr[i] != b.fill || b.ptr[b.bytes - 1 - i] != b.fill) return false;
  return true;
}

// A request size for the mixes: mostly small, sometimes up to `max_bytes`, often not a multiple
// of 256.
inline size_t RandomRequest(size_t max_bytes, Rng* rng) {
  const double u = rng->Uniform();
  const size_t cap = u < 0.7 ? std::min<size_t>(max_bytes, 4096) : max_bytes;
  return static_cast<size_t>(rng->Int(1, static_cast<int64_t>(cap)));
}

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_CUDAMATRIX_ALLOCATOR_BLOCKS_H_
