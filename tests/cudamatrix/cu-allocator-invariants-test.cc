// tests/cudamatrix/cu-allocator-invariants-test.cc: CuMemoryAllocator's accounting under a random
// mix of calls, and its destructor.
// SPDX-License-Identifier: Apache-2.0
//
// Runs without a GPU, over HostAllocatorUpstream: after every step of a random single- and
// multi-threaded mix no two live blocks overlap and the statistics add up.
#include "cudamatrix/cu-allocator.h"
#include "tests/cudamatrix/allocator-blocks.h"
#include "tests/cudamatrix/cu-allocator-testing.h"
#include "tests/testing.h"

#include <cstddef>
#include <cstdint>
#include <gtest/gtest.h>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

using test::Harness;
using test::kKiB;
using test::kMiB;
using test::MakeHarness;
using test::OnDemand;

// ---- invariants under a random single-threaded and multi-threaded mix
// -----------------------------

TEST(CuMemoryAllocatorTest, RandomMixKeepsAccountingExact) {
  Harness s = MakeHarness(64 * kMiB, OnDemand());
  test::Rng rng = test::MakeRng(11);
  std::map<char*, size_t> live;  // pointer -> requested bytes
  for (int step = 0; step < 4000; ++step) {
    s.upstream->SimulateThread(1 + step % 3);
    if (live.empty() || rng.Uniform() < 0.52) {
      const size_t bytes = test::RandomRequest(512 * kKiB, &rng);
      char* p = static_cast<char*>(s.allocator->Malloc(bytes));
      auto it = live.emplace(p, bytes).first;
      if (it != live.begin()) {
        auto prev = std::prev(it);
        ASSERT_LE(prev->first + prev->second, p) << "overlap at step " << step;
      }
      if (std::next(it) != live.end()) {
        ASSERT_LE(p + bytes, std::next(it)->first);
      }
    } else {
      auto it = std::next(live.begin(), rng.Int(0, static_cast<int64_t>(live.size()) - 1));
      s.allocator->Free(it->first);
      live.erase(it);
    }
    const CuAllocatorStats st = s.allocator->GetStats();
    ASSERT_EQ(st.num_used_blocks, static_cast<int64>(live.size()));
    ASSERT_LE(st.in_use_bytes, st.peak_in_use_bytes);
    ASSERT_LE(st.in_use_bytes + st.largest_free_block, st.held_bytes);
    ASSERT_EQ(st.held_bytes, s.upstream->HeldBytes());
  }
  for (auto& e : live) s.allocator->Free(e.first);
  s.upstream->SimulateThread(0);
  const CuAllocatorStats st = s.allocator->GetStats();
  EXPECT_EQ(st.in_use_bytes, 0u);
  // With nothing in use every region is wholly free and goes back.
  EXPECT_EQ(s.allocator->ReleaseCachedMemory(), st.held_bytes);
  EXPECT_EQ(s.upstream->HeldBytes(), 0u);
  EXPECT_EQ(s.allocator->GetStats().num_free_blocks, 0);
}

// One thread alone defers each Free by one call and may hand the block straight back (NOTE ON THE
// DEFERRED FREE in cu-allocator.h). The history turns that off, so the two allocators below must
// agree on every pointer (as an offset from their first one) and every counter.
TEST(CuMemoryAllocatorTest, DeferredFreePlacesAndCountsAsThePools) {
  test::Rng rng = test::MakeRng(23);  // the seed is printed on failure
  CuAllocatorOptions without = OnDemand();
  without.history_events = 16;
  // Expandable regions: one address range, so offsets compare across regions' growth steps.
  Harness a = MakeHarness(256 * kMiB, OnDemand(), 2 * kMiB);
  Harness b = MakeHarness(256 * kMiB, without, 2 * kMiB);
  std::vector<std::pair<char*, char*>> live;  // the same block in a and in b
  std::vector<size_t> sizes;                  // its request
  char* base_a = nullptr;
  char* base_b = nullptr;
  auto malloc_both = [&](size_t bytes, int step) {
    char* pa = nullptr;
    char* pb = nullptr;
    if (bytes % 3 == 0) {
      size_t pitch_a = 0, pitch_b = 0;
      pa = static_cast<char*>(a.allocator->MallocPitch(bytes / 3, 3, &pitch_a));
      pb = static_cast<char*>(b.allocator->MallocPitch(bytes / 3, 3, &pitch_b));
    } else {
      pa = static_cast<char*>(a.allocator->Malloc(bytes));
      pb = static_cast<char*>(b.allocator->Malloc(bytes));
    }
    if (base_a == nullptr) {
      base_a = pa;
      base_b = pb;
    }
    ASSERT_EQ(pa - base_a, pb - base_b) << "step " << step << ", " << bytes << " bytes";
    live.emplace_back(pa, pb);
    sizes.push_back(bytes);
  };
  auto free_one = [&](size_t i) {
    a.allocator->Free(live[i].first);
    b.allocator->Free(live[i].second);
    const size_t bytes = sizes[i];
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    sizes.erase(sizes.begin() + static_cast<std::ptrdiff_t>(i));
    return bytes;
  };
  auto expect_same_stats = [&](int step) {
    const CuAllocatorStats sa = a.allocator->GetStats();
    const CuAllocatorStats sb = b.allocator->GetStats();
    for (auto f : {&CuAllocatorStats::held_bytes, &CuAllocatorStats::peak_held_bytes,
                   &CuAllocatorStats::in_use_bytes, &CuAllocatorStats::peak_in_use_bytes,
                   &CuAllocatorStats::largest_free_block})
      ASSERT_EQ(sa.*f, sb.*f) << "step " << step;
    for (auto f : {&CuAllocatorStats::num_used_blocks, &CuAllocatorStats::num_free_blocks,
                   &CuAllocatorStats::num_regions, &CuAllocatorStats::num_mallocs,
                   &CuAllocatorStats::num_frees, &CuAllocatorStats::num_upstream_maps,
                   &CuAllocatorStats::num_syncs})
      ASSERT_EQ(sa.*f, sb.*f) << "step " << step;
  };
  for (int step = 0; step < 6000; ++step) {
    const double u = rng.Uniform();
    const uint64 thread = rng.Uniform() < 0.05 ? 2 : 1;
    a.upstream->SimulateThread(thread);
    b.upstream->SimulateThread(thread);
    if (live.empty() || (u < 0.3 && live.size() < 64)) {
      malloc_both(test::RandomRequest(4 * kMiB, &rng), step);
    } else if (u < 0.55) {
      free_one(static_cast<size_t>(rng.Int(0, static_cast<int64_t>(live.size()) - 1)));
    } else if (u < 0.9) {
      // A Free, then a Malloc of the same size or a little less, as a loop over one shape does.
      const size_t bytes =
          free_one(static_cast<size_t>(rng.Int(0, static_cast<int64_t>(live.size()) - 1)));
      const size_t less = static_cast<size_t>(rng.Int(0, 300));
      malloc_both(bytes > less ? bytes - less : bytes, step);
    } else if (u < 0.95) {
      // Kaldi's TestCuMatrixResize: a loop of pairs of one shape, here cut from a freed block.
      const size_t bytes = test::RandomRequest(kMiB, &rng);
      for (int k = 0; k < 5 && !HasFatalFailure(); ++k) {
        malloc_both(bytes, step);
        free_one(live.size() - 1);
      }
    } else if (u < 0.97) {
      // Syncs make freed blocks safe by their stamps.
      if (rng.Uniform() < 0.5) {
        a.allocator->SynchronizeGpu();
        b.allocator->SynchronizeGpu();
      } else {
        a.allocator->NoteThreadStreamSynchronized();
        b.allocator->NoteThreadStreamSynchronized();
      }
    } else {
      expect_same_stats(step);
    }
    if (HasFatalFailure()) return;
  }
  expect_same_stats(-1);
  a.allocator->AllowMultithreading();
  b.allocator->AllowMultithreading();
  while (!live.empty()) free_one(live.size() - 1);
  expect_same_stats(-2);
}

TEST(CuMemoryAllocatorTest, DestructorReleasesEverythingAndWarnsAboutLeaks) {
  static std::string warnings;
  warnings.clear();
  LogHandler old = SetLogHandler([](const LogMessageEnvelope& env, const char* msg) {
    if (env.severity == kLogWarning) warnings += msg;
  });
  {
    Harness s = MakeHarness(8 * kMiB, OnDemand());
    s.allocator->Malloc(1000);
  }
  SetLogHandler(old);
  EXPECT_NE(warnings.find("1 block(s)"), std::string::npos) << warnings;
}

}  // namespace
}  // namespace cuctx
