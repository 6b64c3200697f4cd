// tests/cudamatrix/cu-allocator-growth-test.cc: CuMemoryAllocator's statistics, growth,
// out-of-memory recovery and pass-through mode.
// SPDX-License-Identifier: Apache-2.0
//
// Runs without a GPU, over HostAllocatorUpstream of a fixed capacity, so that running out of
// memory is exact and cheap.
#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cutool/host-allocator-upstream.h"
#include "tests/cudamatrix/cu-allocator-testing.h"
#include "tests/testing.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace cuctx {
namespace {

using test::Harness;
using test::HostAllocatorUpstream;
using test::kKiB;
using test::kMiB;
using test::MakeHarness;
using test::OnDemand;

// ---- statistics ------------------------------------------------------------------------------

TEST(CuMemoryAllocatorTest, StatisticsAreExact) {
  Harness s = MakeHarness(16 * kMiB, OnDemand());
  CuMemoryAllocator& a = *s.allocator;
  void* x = a.Malloc(1000);      // 1024
  void* y = a.Malloc(3 * kMiB);  // second region of 3 MiB
  void* z = a.Malloc(5000);      // 5120, first region
  a.Free(x);
  CuAllocatorStats st = a.GetStats();
  EXPECT_TRUE(st.caching);
  EXPECT_EQ(st.held_bytes, 4 * kMiB);
  EXPECT_EQ(st.peak_held_bytes, 4 * kMiB);
  EXPECT_EQ(st.in_use_bytes, 3 * kMiB + 5120);
  EXPECT_EQ(st.peak_in_use_bytes, 3 * kMiB + 5120 + 1024);
  EXPECT_EQ(st.num_used_blocks, 2);
  EXPECT_EQ(st.num_free_blocks, 2);  // x's hole and the rest of region 1
  EXPECT_EQ(st.num_regions, 2);
  EXPECT_EQ(st.num_mallocs, 3);
  EXPECT_EQ(st.num_frees, 1);
  EXPECT_EQ(st.num_syncs, 0);
  EXPECT_EQ(st.num_upstream_allocs, 2);
  EXPECT_EQ(st.num_upstream_failures, 0);
  EXPECT_EQ(st.largest_free_block, kMiB - 1024 - 5120);
  EXPECT_GE(st.upstream_alloc_seconds, 0.0);
  EXPECT_DOUBLE_EQ(st.Fragmentation(), 4.0 * kMiB / (3 * kMiB + 6144));
  EXPECT_EQ(a.GetAllocatedMemory(), st.in_use_bytes);
  EXPECT_EQ(a.GetMaxAllocatedMemory(), st.peak_in_use_bytes);
  const std::string json = a.StatsJson();
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  EXPECT_NE(json.find("\"held_bytes\":4194304"), std::string::npos) << json;
  EXPECT_NE(json.find("\"num_regions\":2"), std::string::npos) << json;
  EXPECT_NE(json.find("\"fragmentation\":"), std::string::npos) << json;
  EXPECT_NE(json.find("\"syncs_per_1000_frees\":0"), std::string::npos) << json;
  EXPECT_NE(st.ToString().find("fragmentation"), std::string::npos);
  a.Free(y);
  a.Free(z);
}

// ---- growth and out of memory ------------------------------------------------------------------

TEST(CuMemoryAllocatorTest, FirstRegionIsProportionThenGrowsByQuantum) {
  CuAllocatorOptions o;
  o.memory_proportion = 0.5;
  o.region_quantum_mb = 1;
  Harness s = MakeHarness(64 * kMiB, o);
  void* a = s.allocator->Malloc(1000);
  EXPECT_EQ(s.allocator->GetStats().held_bytes, 32 * kMiB);  // half of the free 64 MiB
  void* b = s.allocator->Malloc(31 * kMiB + kMiB / 2);       // still fits in region 1
  EXPECT_EQ(s.allocator->GetStats().held_bytes, 32 * kMiB);
  void* c = s.allocator->Malloc(5 * kMiB + 1);  // region 1 is full: 6 MiB more, not half again
  EXPECT_EQ(s.allocator->GetStats().held_bytes, 38 * kMiB);
  EXPECT_EQ(s.upstream->NumAllocateCalls(), 2);
  for (void* p : {a, b, c}) s.allocator->Free(p);

  // The first region is never smaller than the request.
  Harness big = MakeHarness(64 * kMiB, o);
  void* d = big.allocator->Malloc(40 * kMiB);
  EXPECT_EQ(big.allocator->GetStats().held_bytes, 40 * kMiB);
  big.allocator->Free(d);
}

TEST(CuMemoryAllocatorTest, ProportionZeroGrowsOnDemand) {
  Harness s = MakeHarness(64 * kMiB, OnDemand());
  void* a = s.allocator->Malloc(1000);
  EXPECT_EQ(s.allocator->GetStats().held_bytes, kMiB);
  void* b = s.allocator->Malloc(2 * kMiB + kMiB / 2);
  EXPECT_EQ(s.allocator->GetStats().held_bytes, 4 * kMiB);
  void* c = s.allocator->Malloc(100 * kKiB);  // fits in the rest of region 1
  EXPECT_EQ(s.allocator->GetStats().held_bytes, 4 * kMiB);
  for (void* p : {a, b, c}) s.allocator->Free(p);
  EXPECT_EQ(s.upstream->NumAllocateCalls(), 2);
}

TEST(CuMemoryAllocatorTest, OutOfMemoryReleasesCacheRetriesAndIsRecoverable) {
  Harness s = MakeHarness(16 * kMiB, OnDemand());
  CuMemoryAllocator& a = *s.allocator;
  std::vector<void*> p;
  for (int i = 0; i < 4; ++i) p.push_back(a.Malloc(3 * kMiB));  // four regions, 12 MiB
  a.Free(p[1]);
  a.Free(p[2]);
  // 8 MiB: 4 MiB is free upstream; the two wholly free regions are given back and it fits.
  void* big = a.Malloc(8 * kMiB);
  ASSERT_NE(big, nullptr);
  CuAllocatorStats st = a.GetStats();
  EXPECT_EQ(st.held_bytes, 14 * kMiB);
  EXPECT_EQ(st.num_regions, 3);
  EXPECT_EQ(st.num_upstream_releases, 2);
  EXPECT_EQ(st.num_upstream_failures, 1);

  // 4 MiB more cannot be had: 2 MiB free upstream, nothing cached.
  const CuAllocatorStats before = a.GetStats();
  try {
    a.Malloc(4 * kMiB);
    ADD_FAILURE() << "no exception";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.Status(), 2);
    for (const char* part :
         {"4194304 bytes", "held 14.0 MiB", "in use 14.0 MiB", "largest free block 0.0 MiB",
          "2.0 MiB free of 16.0 MiB total", "--cuda-memory-proportion", "batch"})
      EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' missing in: " << what;
  }
  st = a.GetStats();
  EXPECT_EQ(st.num_oom_errors, 1);
  EXPECT_EQ(st.in_use_bytes, before.in_use_bytes);
  EXPECT_EQ(st.held_bytes, before.held_bytes);

  // The program frees something and carries on, without new upstream memory.
  a.Free(big);
  void* again = a.Malloc(4 * kMiB);
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(a.GetStats().held_bytes, 14 * kMiB);
  for (void* q : {again, p[0], p[3]}) a.Free(q);
  EXPECT_EQ(a.ReleaseCachedMemory(), 14 * kMiB);
  EXPECT_EQ(s.upstream->HeldBytes(), 0u);
  void* after = a.Malloc(15 * kMiB);  // and may grow again after releasing everything
  EXPECT_NE(after, nullptr);
  a.Free(after);
}

TEST(CuMemoryAllocatorTest, OutOfMemoryJoinsOtherThreadsBlocksFirst) {
  Harness s = MakeHarness(kMiB, OnDemand());
  HostAllocatorUpstream& up = *s.upstream;
  CuMemoryAllocator& a = *s.allocator;
  up.SimulateThread(1);
  void* p1 = a.Malloc(512 * kKiB);
  up.SimulateThread(2);
  void* p2 = a.Malloc(512 * kKiB);
  up.SimulateThread(1);
  a.Free(p1);
  up.SimulateThread(2);
  a.Free(p2);
  // Neither half fits 1 MiB and the upstream is full; a sync lets them be joined.
  up.SimulateThread(3);
  EXPECT_EQ(a.Malloc(kMiB), p1);
  EXPECT_EQ(a.GetStats().num_syncs, 1);
  a.Free(p1);
  up.SimulateThread(0);
}

TEST(CuMemoryAllocatorTest, PassThroughSendsEveryCallUpstream) {
  CuAllocatorOptions o;
  o.cache_memory = false;
  Harness s = MakeHarness(4 * kMiB, o);
  CuMemoryAllocator& a = *s.allocator;
  void* x = a.Malloc(100);
  void* y = a.Malloc(kMiB);
  EXPECT_EQ(s.upstream->NumAllocateCalls(), 2);
  EXPECT_EQ(s.upstream->HeldBytes(), kMiB + 256);
  CuAllocatorStats st = a.GetStats();
  EXPECT_FALSE(st.caching);
  EXPECT_EQ(st.held_bytes, kMiB + 256);
  EXPECT_EQ(st.in_use_bytes, kMiB + 256);
  a.Free(x);
  EXPECT_EQ(s.upstream->NumReleaseCalls(), 1);
  EXPECT_THROW(a.Malloc(4 * kMiB), OutOfMemoryError);
  a.Free(y);
  EXPECT_EQ(s.upstream->HeldBytes(), 0u);
  EXPECT_EQ(a.GetStats().num_regions, 0);
  EXPECT_EQ(a.ReleaseCachedMemory(), 0u);
}

}  // namespace
}  // namespace cuctx
