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
