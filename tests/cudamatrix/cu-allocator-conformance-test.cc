// tests/cudamatrix/cu-allocator-conformance-test.cc: the allocator conformance suite
// (allocator-conformance.h) run on CuMemoryAllocator four ways.
// SPDX-License-Identifier: Apache-2.0
//
// Caching over a host upstream with a first region, growing on demand, passing every call
// through, and caching over the real device (GPU only).
#include "cudamatrix/cu-allocator.h"
#include "cutool/host-allocator-upstream.h"
#include "tests/cudamatrix/allocator-conformance.h"
#include "tests/cudamatrix/cu-allocator-testing.h"
#include "tests/testing.h"

#include <cstddef>
#include <gtest/gtest.h>
#include <memory>

namespace cuctx {
namespace {

using test::HostAllocatorUpstream;
using test::kMiB;
using test::OnDemand;

struct CachingHostTraits {
  using Allocator = CuMemoryAllocator;
  static std::unique_ptr<Allocator> Make() {
    CuAllocatorOptions o;
    o.memory_proportion = 0.5f;  // the first region is 32 MiB
    o.region_quantum_mb = 1;
    auto a = std::make_unique<CuMemoryAllocator>(
        o, std::make_unique<HostAllocatorUpstream>(LimitBytes()));
    a->AllowMultithreading();
    return a;
  }
  static size_t LimitBytes() { return 64 * kMiB; }
  static bool HostAccessible() { return true; }
  static bool NeedsGpu() { return false; }
};

struct OnDemandHostTraits : CachingHostTraits {
  static std::unique_ptr<Allocator> Make() {
    auto a = std::make_unique<CuMemoryAllocator>(
        OnDemand(), std::make_unique<HostAllocatorUpstream>(LimitBytes()));
    a->AllowMultithreading();
    return a;
  }
};

struct PassThroughHostTraits : CachingHostTraits {
  static std::unique_ptr<Allocator> Make() {
    CuAllocatorOptions o;
    o.cache_memory = false;
    auto a = std::make_unique<CuMemoryAllocator>(
        o, std::make_unique<HostAllocatorUpstream>(LimitBytes()));
    a->AllowMultithreading();
    return a;
  }
};

// The caching allocator over the real device (runs only where a GPU was selected).
struct CachingCudaTraits {
  using Allocator = CuMemoryAllocator;
  static std::unique_ptr<Allocator> Make() {
    CuAllocatorOptions o;
    o.memory_proportion = 0.1f;  // leave the rest of the device to the other tests
    auto a = std::make_unique<CuMemoryAllocator>(o, NewCudaAllocatorUpstream());
    a->AllowMultithreading();
    return a;
  }
  static size_t LimitBytes() {
    size_t free_bytes = 0, total_bytes = 0;
    NewCudaAllocatorUpstream()->MemoryInfo(&free_bytes, &total_bytes);
    return total_bytes;
  }
  static bool HostAccessible() { return false; }
  static bool NeedsGpu() { return true; }
};

}  // namespace

namespace test {
INSTANTIATE_TYPED_TEST_SUITE_P(CachingCuda, AllocatorConformanceTest,
                               ::testing::Types<CachingCudaTraits>);
INSTANTIATE_TYPED_TEST_SUITE_P(CachingHost, AllocatorConformanceTest,
                               ::testing::Types<CachingHostTraits>);
INSTANTIATE_TYPED_TEST_SUITE_P(OnDemandHost, AllocatorConformanceTest,
                               ::testing::Types<OnDemandHostTraits>);
INSTANTIATE_TYPED_TEST_SUITE_P(PassThroughHost, AllocatorConformanceTest,
                               ::testing::Types<PassThroughHostTraits>);
}  // namespace test
}  // namespace cuctx
