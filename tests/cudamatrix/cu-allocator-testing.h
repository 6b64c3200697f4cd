// tests/cudamatrix/cu-allocator-testing.h: what the cu-allocator-*-test.cc files share: a
// CuMemoryAllocator over a host-memory upstream (Harness) and the options most tests reason about.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_TESTS_CUDAMATRIX_CU_ALLOCATOR_TESTING_H_
#define CUCTX_TESTS_CUDAMATRIX_CU_ALLOCATOR_TESTING_H_

#include "cudamatrix/cu-allocator.h"
#include "cutool/host-allocator-upstream.h"

#include <cstddef>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

namespace cuctx {
namespace test {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

// An allocator over a host upstream of `capacity` bytes (with expandable regions of that
// granularity when `map_granularity` > 0); `upstream` keeps a view of the upstream for its call
// counters.
struct Harness {
  HostAllocatorUpstream* upstream = nullptr;
  std::unique_ptr<CuMemoryAllocator> allocator;
};

inline Harness MakeHarness(size_t capacity, CuAllocatorOptions options,
                           size_t map_granularity = 0) {
  auto upstream = std::make_unique<HostAllocatorUpstream>(capacity, map_granularity);
  Harness s;
  s.upstream = upstream.get();
  s.allocator = std::make_unique<CuMemoryAllocator>(options, std::move(upstream));
  return s;
}

// Grow-on-demand options with 1 MiB regions/sub-regions and no thread cache: the layout most
// tests reason about, with every Free visible in the pools at once.
inline CuAllocatorOptions OnDemand() {
  CuAllocatorOptions o;
  o.memory_proportion = 0;
  o.region_quantum_mb = 1;
  o.thread_cache_mb = 0;
  return o;
}

inline std::string PointerText(const void* p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_CUDAMATRIX_CU_ALLOCATOR_TESTING_H_
