// tests/cudamatrix/cu-allocator-placement-test.cc: CuMemoryAllocator placement: rounding, best fit,
// splitting, coalescing, pitch, debug stride and misuse.
// SPDX-License-Identifier: Apache-2.0
//
// Runs without a GPU, over HostAllocatorUpstream: where a block lands and how the pools change.
#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "tests/cudamatrix/cu-allocator-testing.h"
#include "tests/testing.h"

#include <cstddef>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace cuctx {
namespace {

using test::Harness;
using test::kKiB;
using test::kMiB;
using test::MakeHarness;
using test::OnDemand;
using test::PointerText;

// ---- placement ---------------------------------------------------------------------------------

TEST(CuMemoryAllocatorTest, RoundsSizesTo256Bytes) {
  Harness s = MakeHarness(8 * kMiB, OnDemand());
  char* a = static_cast<char*>(s.allocator->Malloc(1));
  EXPECT_EQ(s.allocator->GetAllocatedMemory(), 256u);
  char* b = static_cast<char*>(s.allocator->Malloc(257));
  EXPECT_EQ(s.allocator->GetAllocatedMemory(), 256u + 512u);
  char* c = static_cast<char*>(s.allocator->Malloc(256));
  EXPECT_EQ(s.allocator->GetAllocatedMemory(), 256u + 512u + 256u);
  // Carved in address order from a fresh region.
  EXPECT_EQ(b - a, 256);
  EXPECT_EQ(c - b, 512);
  s.allocator->Free(a);
  s.allocator->Free(b);
  s.allocator->Free(c);
  EXPECT_EQ(s.allocator->GetAllocatedMemory(), 0u);
  EXPECT_EQ(s.allocator->GetMaxAllocatedMemory(), 1024u);
}

// Carves `sizes` one after another from the start of a fresh region of exactly `region` bytes.
std::vector<char*> CarveRegion(CuMemoryAllocator* a, size_t region,
                               const std::vector<size_t>& sizes) {
  void* whole = a->Malloc(region);
  a->Free(whole);
  std::vector<char*> out;
  for (size_t n : sizes) out.push_back(static_cast<char*>(a->Malloc(n)));
  for (size_t i = 1; i < out.size(); ++i)
    EXPECT_EQ(out[i] - out[i - 1], static_cast<ptrdiff_t>(sizes[i - 1]));
  return out;
}

TEST(CuMemoryAllocatorTest, BestFitFromLowestSubregion) {
  Harness s = MakeHarness(8 * kMiB, OnDemand());
  // Sub-region 0: hole of 64K; sub-region 1: holes of 32K and 48K; sub-region 2: hole of 40K.
  const std::vector<size_t> sizes = {64 * kKiB, kMiB - 64 * kKiB,  // sub 0
                                     32 * kKiB, 64 * kKiB,
                                     48 * kKiB, kMiB - 144 * kKiB,  // sub 1
                                     40 * kKiB, kMiB - 40 * kKiB,   // sub 2
                                     kMiB};                         // sub 3
  std::vector<char*> p = CarveRegion(s.allocator.get(), 4 * kMiB, sizes);
  for (int hole : {0, 2, 4, 6}) s.allocator->Free(p[hole]);
  EXPECT_EQ(s.allocator->GetStats().num_free_blocks, 4);
  // 40K fits in sub-region 0's 64K hole, which wins over the exact fit in sub-region 2.
  EXPECT_EQ(s.allocator->Malloc(40 * kKiB), p[0]);
  // 32K no longer fits in sub-region 0 (24K left); in sub-region 1 the tighter hole wins.
  EXPECT_EQ(s.allocator->Malloc(32 * kKiB), p[2]);
  EXPECT_EQ(s.allocator->Malloc(48 * kKiB), p[4]);
  EXPECT_EQ(s.allocator->Malloc(40 * kKiB), p[6]);
  // The 24K rest of the split 64K hole is still in sub-region 0.
  char* rest = static_cast<char*>(s.allocator->Malloc(24 * kKiB));
  EXPECT_EQ(rest, p[0] + 40 * kKiB);
  EXPECT_EQ(s.upstream->NumAllocateCalls(), 1);
  for (char* q : p) s.allocator->Free(q);
  s.allocator->Free(rest);
}

TEST(CuMemoryAllocatorTest, SplitsOnlyWhenTheRestIsWorthKeeping) {
  Harness s = MakeHarness(8 * kMiB, OnDemand());
  std::vector<char*> p = CarveRegion(s.allocator.get(), kMiB, {4096, kMiB - 4096});
  EXPECT_EQ(s.allocator->GetStats().num_free_blocks, 0);
  s.allocator->Free(p[0]);
  // 3840 of a 4096 hole: a 256-byte rest is less than 1/8 of the request, so no split.
  EXPECT_EQ(s.allocator->Malloc(3840), p[0]);
  EXPECT_EQ(s.allocator->GetAllocatedMemory(), kMiB);
  EXPECT_EQ(s.allocator->GetStats().num_free_blocks, 0);
  s.allocator->Free(p[0]);
  // 1024 of it: the 3072-byte rest stays free.
  EXPECT_EQ(s.allocator->Malloc(1024), p[0]);
  CuAllocatorStats st = s.allocator->GetStats();
  EXPECT_EQ(st.num_free_blocks, 1);
  EXPECT_EQ(st.largest_free_block, 3072u);
  EXPECT_EQ(st.in_use_bytes, kMiB - 3072);
  for (char* q : p) s.allocator->Free(q);
}

TEST(CuMemoryAllocatorTest, CoalescesWithBothNeighbours) {
  Harness s = MakeHarness(8 * kMiB, OnDemand());
  std::vector<char*> p = CarveRegion(s.allocator.get(), kMiB, {8192, 4096, 16384, kMiB - 28672});
  s.allocator->Free(p[0]);
  s.allocator->Free(p[2]);
  EXPECT_EQ(s.allocator->GetStats().num_free_blocks, 2);
  s.allocator->Free(p[1]);
  CuAllocatorStats st = s.allocator->GetStats();
  EXPECT_EQ(st.num_free_blocks, 1);
  EXPECT_EQ(st.largest_free_block, 28672u);
  EXPECT_EQ(s.allocator->Malloc(28672), p[0]);
  // Freeing everything leaves the region as one block again.
  s.allocator->Free(p[0]);
  s.allocator->Free(p[3]);
  st = s.allocator->GetStats();
  EXPECT_EQ(st.num_free_blocks, 1);
  EXPECT_EQ(st.largest_free_block, kMiB);
}

TEST(CuMemoryAllocatorTest, LargeRequestsSpanSubregions) {
  Harness s = MakeHarness(16 * kMiB, OnDemand());
  void* a = s.allocator->Malloc(2 * kMiB + 1);  // region of 3 MiB
  void* b = s.allocator->Malloc(kMiB / 2);      // the rest of it
  EXPECT_EQ(static_cast<char*>(b) - static_cast<char*>(a), static_cast<ptrdiff_t>(2 * kMiB + 256));
  EXPECT_EQ(s.allocator->GetStats().held_bytes, 3 * kMiB);
  s.allocator->Free(a);
  s.allocator->Free(b);
  EXPECT_EQ(s.allocator->GetStats().largest_free_block, 3 * kMiB);
}

// ---- pitch, debug stride, errors ----------------------------------------------------------------

TEST(CuMemoryAllocatorTest, MallocPitchRoundsPitchTo256) {
  Harness s = MakeHarness(8 * kMiB, OnDemand());
  size_t pitch = 0;
  void* a = s.allocator->MallocPitch(100, 3, &pitch);
  EXPECT_EQ(pitch, 256u);
  EXPECT_EQ(s.allocator->GetAllocatedMemory(), 768u);
  void* b = s.allocator->MallocPitch(512, 2, &pitch);
  EXPECT_EQ(pitch, 512u);
  EXPECT_EQ(s.allocator->MallocPitch(40, 0, &pitch), nullptr);
  EXPECT_EQ(pitch, 256u);
  EXPECT_EQ(s.allocator->MallocPitch(0, 7, &pitch), nullptr);
  EXPECT_THROW(s.allocator->MallocPitch(size_t{1} << 40, size_t{1} << 40, &pitch),
               OutOfMemoryError);
  s.allocator->Free(a);
  s.allocator->Free(b);
}

TEST(CuMemoryAllocatorTest, DebugStrideModeAddsPadding) {
  Harness s = MakeHarness(8 * kMiB, OnDemand());
  EXPECT_FALSE(s.allocator->SetDebugStrideMode(true));
  size_t p1 = 0, p2 = 0;
  void* a = s.allocator->MallocPitch(512, 4, &p1);
  void* b = s.allocator->MallocPitch(512, 4, &p2);
  EXPECT_GT(p1, 512u);
  EXPECT_GT(p2, 512u);
  EXPECT_NE(p1, p2) << "equal shapes should get different pitches in debug stride mode";
  EXPECT_EQ(p1 % 256, 0u);
  EXPECT_EQ(p2 % 256, 0u);
  EXPECT_TRUE(s.allocator->SetDebugStrideMode(false));
  size_t p3 = 0;
  void* c = s.allocator->MallocPitch(512, 4, &p3);
  EXPECT_EQ(p3, 512u);
  for (void* p : {a, b, c}) s.allocator->Free(p);
}

TEST(CuMemoryAllocatorTest, FreeOfUnknownPointerIsAnErrorNamingIt) {
  for (bool cache : {true, false}) {
    CuAllocatorOptions o = OnDemand();
    o.cache_memory = cache;
    Harness s = MakeHarness(8 * kMiB, o);
    void* p = s.allocator->Malloc(1000);
    int local = 0;
    try {
      s.allocator->Free(&local);
      ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(PointerText(&local)), std::string::npos) << e.what();
    }
    const CuAllocatorStats before = s.allocator->GetStats();
    EXPECT_EQ(before.in_use_bytes, 1024u);
    s.allocator->Free(p);
    try {
      s.allocator->Free(p);
      ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(PointerText(p)), std::string::npos) << what;
      EXPECT_NE(what.find("double free"), std::string::npos) << what;
    }
    // Still consistent and usable.
    EXPECT_EQ(s.allocator->GetAllocatedMemory(), 0u);
    EXPECT_EQ(s.allocator->GetStats().num_frees, 1);
    void* q = s.allocator->Malloc(1000);
    EXPECT_NE(q, nullptr);
    if (cache) {
      EXPECT_THROW(s.allocator->Free(static_cast<char*>(q) + 256), Error);
    }
    s.allocator->Free(q);
  }
}

}  // namespace
}  // namespace cuctx
