// tests/cudamatrix/cu-allocator-thread-cache-test.cc: CuMemoryAllocator's per-thread cache of freed
// blocks (on once multithreading is allowed).
// SPDX-License-Identifier: Apache-2.0
//
// Runs without a GPU, over HostAllocatorUpstream: small and large slots, flushing when memory is
// short or on request, and blocks never handed to another thread.
#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "tests/cudamatrix/allocator-blocks.h"
#include "tests/cudamatrix/cu-allocator-testing.h"
#include "tests/testing.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

using test::Harness;
using test::kKiB;
using test::kMiB;
using test::MakeHarness;

// ---- the per-thread cache (on once multithreading is allowed) ----------------------------------

// Default options (thread cache on) over an upstream of `capacity`, multithreading allowed.
Harness MakeCachedHarness(size_t capacity) {
  CuAllocatorOptions o;
  o.memory_proportion = 0;
  o.region_quantum_mb = 1;
  Harness s = MakeHarness(capacity, o);
  s.allocator->AllowMultithreading();
  return s;
}

TEST(CuMemoryAllocatorTest, ThreadCacheHandsBlocksBackToTheThreadThatFreedThem) {
  Harness s = MakeCachedHarness(8 * kMiB);
  CuMemoryAllocator& a = *s.allocator;
  s.upstream->SimulateThread(1);
  void* p = a.Malloc(4000);
  a.Free(p);
  CuAllocatorStats st = a.GetStats();
  EXPECT_EQ(st.num_cached_blocks, 1);
  EXPECT_EQ(st.cached_bytes, 4096u);
  EXPECT_EQ(st.in_use_bytes, 0u);
  s.upstream->SimulateThread(2);
  void* q = a.Malloc(4000);  // thread 2 does not see thread 1's cache
  EXPECT_NE(q, p);
  s.upstream->SimulateThread(1);
  EXPECT_EQ(a.Malloc(3900), p);  // same rounded size: from the cache, without the pools
  st = a.GetStats();
  EXPECT_EQ(st.num_cache_hits, 1);
  EXPECT_EQ(st.num_cached_blocks, 0);
  EXPECT_EQ(st.in_use_bytes, 8192u);
  EXPECT_EQ(st.num_mallocs, 3);
  EXPECT_EQ(st.num_frees, 1);
  EXPECT_EQ(st.num_syncs, 0);
  a.Free(p);
  s.upstream->SimulateThread(2);
  a.Free(q);
  s.upstream->SimulateThread(0);
  EXPECT_EQ(a.GetAllocatedMemory(), 0u);
}

TEST(CuMemoryAllocatorTest, ThreadCacheIsFlushedWhenMemoryIsShort) {
  for (bool drained : {false, true}) {
    Harness s = MakeCachedHarness(kMiB);
    CuMemoryAllocator& a = *s.allocator;
    s.upstream->SimulateThread(1);
    void* p = a.Malloc(kMiB);
    a.Free(p);  // parked in thread 1's cache
    if (drained) a.NoteThreadStreamSynchronized();
    EXPECT_EQ(a.GetStats().cached_bytes, kMiB);
    s.upstream->SimulateThread(2);
    EXPECT_EQ(a.Malloc(kMiB), p);  // the upstream is full: thread 1's cache gives it up
    CuAllocatorStats st = a.GetStats();
    EXPECT_EQ(st.num_syncs, drained ? 0 : 1) << "drained " << drained;
    EXPECT_EQ(st.num_cached_blocks, 0);
    EXPECT_EQ(st.num_upstream_allocs, 1);
    a.Free(p);
    s.upstream->SimulateThread(0);
  }
}

TEST(CuMemoryAllocatorTest, ThreadCacheKeepsSixteenBlocksAndReleasesOnRequest) {
  Harness s = MakeCachedHarness(64 * kMiB);
  CuMemoryAllocator& a = *s.allocator;
  std::vector<void*> p;
  for (int i = 0; i < 20; ++i) p.push_back(a.Malloc(64 * kKiB));
  for (void* q : p) a.Free(q);
  CuAllocatorStats st = a.GetStats();
  EXPECT_EQ(st.num_cached_blocks, 16);
  EXPECT_EQ(st.cached_bytes, 16 * 64 * kKiB);
  EXPECT_EQ(st.num_frees, 20);
  EXPECT_EQ(st.in_use_bytes, 0u);
  // A parked block freed again is a double free.
  try {
    a.Free(p.back());
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("double free"), std::string::npos) << e.what();
  }
  EXPECT_EQ(a.ReleaseCachedMemory(), st.held_bytes);
  st = a.GetStats();
  EXPECT_EQ(st.num_cached_blocks, 0);
  EXPECT_EQ(st.held_bytes, 0u);
}

// Like MakeCachedHarness, but the first region is half of `capacity`, so that other threads find
// free memory in the shared pool instead of flushing the thread caches to grow.
Harness MakeCachedSlackHarness(size_t capacity) {
  CuAllocatorOptions o;
  o.memory_proportion = 0.5f;  // a first region with slack: half the capacity
  o.region_quantum_mb = 1;
  Harness s = MakeHarness(capacity, o);
  s.allocator->AllowMultithreading();
  return s;
}

// Blocks above 4 MiB go to the large slots: two per thread by default, besides the small slots.
TEST(CuMemoryAllocatorTest, ThreadCacheLargeSlotsServeTheSameSizeAgain) {
  Harness s = MakeCachedHarness(256 * kMiB);
  CuMemoryAllocator& a = *s.allocator;
  s.upstream->SimulateThread(1);
  void* p = a.Malloc(16 * kMiB);
  a.Free(p);
  CuAllocatorStats st = a.GetStats();
  EXPECT_EQ(st.num_cached_blocks, 1);
  EXPECT_EQ(st.num_cached_large_blocks, 1);
  EXPECT_EQ(st.cached_bytes, 16 * kMiB);
  EXPECT_EQ(st.cached_large_bytes, 16 * kMiB);
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_EQ(st.num_frees, 1);
  // The same rounded size, and a request the pools would serve with the whole block.
  EXPECT_EQ(a.Malloc(16 * kMiB - 100), p);
  a.Free(p);
  EXPECT_EQ(a.Malloc(16 * kMiB - 512 * kKiB), p);
  st = a.GetStats();
  EXPECT_EQ(st.num_cache_hits, 2);
  EXPECT_EQ(st.num_cached_blocks, 0);
  EXPECT_EQ(st.in_use_bytes, 16 * kMiB);
  EXPECT_EQ(st.num_mallocs, 3);
  EXPECT_EQ(st.num_frees, 2);
  a.Free(p);
  // A much smaller request is no cache hit: the pools serve it (here by splitting the block,
  // once the cache is flushed into them).
  void* q = a.Malloc(8 * kMiB);
  EXPECT_EQ(a.GetStats().num_cache_hits, 2);
  EXPECT_EQ(a.GetStats().num_cached_blocks, 0);
  a.Free(q);
  // Small and large slots are counted apart: 16 small blocks and 2 large ones.
  std::vector<void*> small, large;
  for (int i = 0; i < 16; ++i) small.push_back(a.Malloc(64 * kKiB));
  for (int i = 0; i < 3; ++i) large.push_back(a.Malloc((5 + i) * kMiB));
  for (void* x : small) a.Free(x);
  for (void* x : large) a.Free(x);  // the third pushes out the oldest large block (5 MiB)
  st = a.GetStats();
  EXPECT_EQ(st.num_cached_blocks, 18);
  EXPECT_EQ(st.num_cached_large_blocks, 2);
  EXPECT_EQ(st.cached_large_bytes, 13 * kMiB);
  EXPECT_EQ(st.cached_bytes, 13 * kMiB + 16 * 64 * kKiB);
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_EQ(st.num_mallocs, st.num_frees);
  const int64 hits = st.num_cache_hits;
  EXPECT_EQ(a.Malloc(6 * kMiB), large[1]);
  EXPECT_EQ(a.Malloc(7 * kMiB), large[2]);
  EXPECT_EQ(a.GetStats().num_cache_hits, hits + 2);
  EXPECT_EQ(a.Malloc(5 * kMiB), large[0]);  // from the pools, where it was pushed out
  EXPECT_EQ(a.GetStats().num_cache_hits, hits + 2);
  EXPECT_EQ(a.GetStats().num_syncs, 0);
  for (void* x : large) a.Free(x);
  s.upstream->SimulateThread(0);
  EXPECT_EQ(a.ReleaseCachedMemory(), a.GetStats().held_bytes);
  EXPECT_EQ(s.upstream->HeldBytes(), 0u);
}

TEST(CuMemoryAllocatorTest, ThreadCacheLargeSlotsCanBeTurnedOff) {
  CuAllocatorOptions o;
  o.memory_proportion = 0;
  o.region_quantum_mb = 1;
  o.thread_cache_large_blocks = 0;
  Harness s = MakeHarness(64 * kMiB, o);
  s.allocator->AllowMultithreading();
  void* p = s.allocator->Malloc(16 * kMiB);
  s.allocator->Free(p);
  const CuAllocatorStats st = s.allocator->GetStats();
  EXPECT_EQ(st.num_cached_blocks, 0);
  EXPECT_EQ(st.num_free_blocks, 1);
  EXPECT_EQ(st.num_frees, 1);
  EXPECT_EQ(s.allocator->Malloc(16 * kMiB), p);
  EXPECT_EQ(s.allocator->GetStats().num_cache_hits, 0);
  s.allocator->Free(p);
}

// The cross-thread rule for parked large blocks: another thread gets one only through the pools,
// after a sync (or the owner's drained-stream note), never straight from the owner's cache.
TEST(CuMemoryAllocatorTest, ThreadCacheNeverHandsALargeBlockToAnotherThread) {
  {
    // Free shared memory: thread 2 gets that, and nobody syncs.
    Harness s = MakeCachedSlackHarness(128 * kMiB);
    CuMemoryAllocator& a = *s.allocator;
    s.upstream->SimulateThread(1);
    void* p = a.Malloc(16 * kMiB);
    a.Free(p);
    s.upstream->SimulateThread(2);
    void* q = a.Malloc(16 * kMiB);
    EXPECT_NE(q, p);
    CuAllocatorStats st = a.GetStats();
    EXPECT_EQ(st.num_cache_hits, 0);
    EXPECT_EQ(st.num_syncs, 0);
    EXPECT_EQ(st.num_cached_large_blocks, 1);
    a.Free(q);
    s.upstream->SimulateThread(1);
    EXPECT_EQ(a.Malloc(16 * kMiB), p);  // its own again
    a.Free(p);
    s.upstream->SimulateThread(0);
  }
  for (bool drained : {false, true}) {
    // Thread 2 must take thread 1's block (growing on demand, the upstream holds just one): the
    // cache is flushed and the block reaches thread 2 through the pools, with a sync unless
    // thread 1 reported a drained stream after freeing it.
    Harness s = MakeCachedHarness(16 * kMiB);
    CuMemoryAllocator& a = *s.allocator;
    s.upstream->SimulateThread(1);
    void* p = a.Malloc(16 * kMiB);
    a.Free(p);
    if (drained) a.NoteThreadStreamSynchronized();
    s.upstream->SimulateThread(2);
    EXPECT_EQ(a.Malloc(16 * kMiB), p);
    CuAllocatorStats st = a.GetStats();
    EXPECT_EQ(st.num_syncs, drained ? 0 : 1) << "drained " << drained;
    EXPECT_EQ(st.num_cache_hits, 0);
    EXPECT_EQ(st.num_cached_blocks, 0);
    EXPECT_EQ(st.num_upstream_allocs, 1);
    EXPECT_EQ(st.in_use_bytes, 16 * kMiB);
    a.Free(p);  // now parked in thread 2's cache
    s.upstream->SimulateThread(1);
    EXPECT_EQ(a.Malloc(16 * kMiB), p);
    EXPECT_EQ(a.GetStats().num_syncs, drained ? 1 : 2);
    a.Free(p);
    s.upstream->SimulateThread(0);
  }
}

// The same with real threads (the default CurrentThreadId()), run one after the other.
TEST(CuMemoryAllocatorTest, ThreadCacheLargeSlotsStayWithTheirRealThread) {
  Harness s = MakeCachedSlackHarness(256 * kMiB);
  CuMemoryAllocator& a = *s.allocator;
  void* from_a = nullptr;
  std::thread([&] {
    from_a = a.Malloc(16 * kMiB);
    a.Free(from_a);
    EXPECT_EQ(a.Malloc(16 * kMiB), from_a);  // its own cache
    a.Free(from_a);
  }).join();
  std::thread([&] {
    void* b = a.Malloc(16 * kMiB);
    EXPECT_NE(b, from_a);
    a.Free(b);
  }).join();
  const CuAllocatorStats st = a.GetStats();
  EXPECT_EQ(st.num_syncs, 0);
  EXPECT_EQ(st.num_cache_hits, 1);
  EXPECT_EQ(st.num_cached_large_blocks, 2);
  EXPECT_EQ(st.in_use_bytes, 0u);
}

TEST(CuMemoryAllocatorTest, ReleaseCachedMemoryFlushesLargeCachedBlocks) {
  {
    // Two threads park large and small blocks in one big first region; all of it goes back.
    Harness s = MakeCachedSlackHarness(1024 * kMiB);
    CuMemoryAllocator& a = *s.allocator;
    for (uint64 t : {1, 2}) {
      s.upstream->SimulateThread(t);
      std::vector<void*> p = {a.Malloc(32 * kMiB), a.Malloc(48 * kMiB), a.Malloc(100 * kKiB)};
      for (void* q : p) a.Free(q);
    }
    s.upstream->SimulateThread(0);
    CuAllocatorStats st = a.GetStats();
    EXPECT_EQ(st.num_cached_large_blocks, 4);
    EXPECT_EQ(st.num_cached_blocks, 6);
    EXPECT_EQ(st.cached_large_bytes, 160 * kMiB);
    EXPECT_EQ(st.cached_bytes, 160 * kMiB + 2 * 100 * kKiB);
    EXPECT_EQ(st.in_use_bytes, 0u);
    EXPECT_EQ(st.num_used_blocks, 0);
    EXPECT_EQ(st.num_syncs, 0);
    EXPECT_EQ(st.held_bytes, 512 * kMiB);
    EXPECT_EQ(a.ReleaseCachedMemory(), 512 * kMiB);
    st = a.GetStats();
    EXPECT_EQ(st.num_cached_blocks, 0);
    EXPECT_EQ(st.num_cached_large_blocks, 0);
    EXPECT_EQ(st.cached_bytes, 0u);
    EXPECT_EQ(st.cached_large_bytes, 0u);
    EXPECT_EQ(st.held_bytes, 0u);
    EXPECT_EQ(st.num_free_blocks, 0);
    EXPECT_EQ(s.upstream->HeldBytes(), 0u);
  }
  // Growing on demand, each block has a region of its own: every region but the one of the
  // block still in use goes back.
  Harness s = MakeCachedHarness(256 * kMiB);
  CuMemoryAllocator& a = *s.allocator;
  void* kept = a.Malloc(10 * kMiB);
  std::vector<void*> p = {a.Malloc(32 * kMiB), a.Malloc(48 * kMiB), a.Malloc(100 * kKiB)};
  for (void* q : p) a.Free(q);
  CuAllocatorStats st = a.GetStats();
  EXPECT_EQ(st.num_cached_large_blocks, 2);
  EXPECT_EQ(st.num_cached_blocks, 3);
  EXPECT_EQ(st.in_use_bytes, 10 * kMiB);
  EXPECT_EQ(st.held_bytes, 91 * kMiB);
  EXPECT_EQ(a.ReleaseCachedMemory(), 81 * kMiB);
  st = a.GetStats();
  EXPECT_EQ(st.num_cached_blocks, 0);
  EXPECT_EQ(st.cached_bytes, 0u);
  EXPECT_EQ(st.in_use_bytes, 10 * kMiB);
  EXPECT_EQ(st.held_bytes, 10 * kMiB);
  EXPECT_EQ(st.held_bytes, s.upstream->HeldBytes());
  EXPECT_EQ(st.num_used_blocks, 1);
  EXPECT_EQ(st.num_free_blocks, 0);
  a.Free(kept);
  EXPECT_EQ(a.ReleaseCachedMemory(), 10 * kMiB);
  EXPECT_EQ(s.upstream->HeldBytes(), 0u);
}

TEST(CuMemoryAllocatorTest, OutOfMemoryRecoveryFlushesLargeCachedBlocks) {
  // 32 MiB upstream: thread 1 parks 16 and 12 MiB blocks (two regions); thread 2 needs 24 MiB.
  Harness s = MakeCachedHarness(32 * kMiB);
  CuMemoryAllocator& a = *s.allocator;
  s.upstream->SimulateThread(1);
  void* p16 = a.Malloc(16 * kMiB);
  void* p12 = a.Malloc(12 * kMiB);
  a.Free(p16);
  a.Free(p12);
  EXPECT_EQ(a.GetStats().cached_large_bytes, 28 * kMiB);
  s.upstream->SimulateThread(2);
  void* big = a.Malloc(24 * kMiB);  // only fits once both parked regions are given back
  ASSERT_NE(big, nullptr);
  CuAllocatorStats st = a.GetStats();
  EXPECT_EQ(st.num_cached_blocks, 0);
  EXPECT_EQ(st.num_upstream_releases, 2);
  EXPECT_EQ(st.held_bytes, 24 * kMiB);
  EXPECT_EQ(st.in_use_bytes, 24 * kMiB);
  EXPECT_EQ(st.held_bytes, s.upstream->HeldBytes());
  EXPECT_EQ(st.num_oom_errors, 0);
  a.Free(big);  // parked in thread 2's large slots

  // Thread 1 keeps 20 MiB in use and parks 8; 16 more cannot be had, even after the flush.
  s.upstream->SimulateThread(1);
  void* kept = a.Malloc(20 * kMiB);
  void* p8 = a.Malloc(8 * kMiB);
  a.Free(p8);
  EXPECT_GT(a.GetStats().num_cached_large_blocks, 0);
  s.upstream->SimulateThread(3);
  EXPECT_THROW(a.Malloc(16 * kMiB), OutOfMemoryError);
  st = a.GetStats();
  EXPECT_EQ(st.num_oom_errors, 1);
  EXPECT_EQ(st.num_cached_blocks, 0);  // flushed on the way
  EXPECT_EQ(st.in_use_bytes, 20 * kMiB);
  EXPECT_EQ(st.held_bytes, s.upstream->HeldBytes());
  EXPECT_LE(st.in_use_bytes + st.largest_free_block, st.held_bytes);
  // Recoverable: the memory freed since serves the next request.
  s.upstream->SimulateThread(1);
  a.Free(kept);
  s.upstream->SimulateThread(3);
  void* again = a.Malloc(16 * kMiB);
  EXPECT_NE(again, nullptr);
  a.Free(again);
  s.upstream->SimulateThread(0);
  EXPECT_EQ(a.GetStats().in_use_bytes, 0u);
}

// Two real threads cycling through large and small blocks at once: contents stay intact and the
// counts add up afterwards.
TEST(CuMemoryAllocatorTest, ThreadCacheLargeSlotsKeepContentsUnderConcurrency) {
  Harness s = MakeCachedHarness(512 * kMiB);
  CuMemoryAllocator& a = *s.allocator;
  std::atomic<int> failures{0};
  auto work = [&](int t) {
    test::Rng rng = test::MakeRng(200 + t);
    std::vector<test::LiveBlock> live;
    for (int step = 0; step < 2000; ++step) {
      if (live.empty() || (rng.Uniform() < 0.5 && live.size() < 4)) {
        const size_t sizes[] = {5 * kMiB, 9 * kMiB + 100, 17 * kMiB, 64 * kKiB};
        const size_t bytes = sizes[rng.Int(0, 3)];
        test::LiveBlock b{static_cast<unsigned char*>(a.Malloc(bytes)), bytes,
                          static_cast<unsigned char>(16 * t + rng.Int(1, 15))};
        test::FillBlock(b);
        live.push_back(b);
      } else {
        const size_t i = static_cast<size_t>(rng.Int(0, static_cast<int64_t>(live.size()) - 1));
        if (!test::BlockIntact(live[i])) ++failures;
        a.Free(live[i].ptr);
        live[i] = live.back();
        live.pop_back();
      }
    }
    for (const test::LiveBlock& b : live) {
      if (!test::BlockIntact(b)) ++failures;
      a.Free(b.ptr);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) threads.emplace_back(work, t);
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  CuAllocatorStats st = a.GetStats();
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_EQ(st.num_used_blocks, 0);
  EXPECT_EQ(st.num_mallocs, st.num_frees);
  EXPECT_GT(st.num_cache_hits, 0);
  EXPECT_LE(st.num_cached_large_blocks, 4);
  EXPECT_EQ(a.ReleaseCachedMemory(), st.held_bytes);
  st = a.GetStats();
  EXPECT_EQ(st.held_bytes, 0u);
  EXPECT_EQ(st.num_cached_blocks, 0);
  EXPECT_EQ(s.upstream->HeldBytes(), 0u);
}

}  // namespace
}  // namespace cuctx
