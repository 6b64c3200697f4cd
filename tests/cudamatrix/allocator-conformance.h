// tests/cudamatrix/allocator-conformance.h: the generic conformance suite every allocator passes.
// SPDX-License-Identifier: Apache-2.0
//
// A typed, parameterized suite (TYPED_TEST_SUITE_P). Instantiate it with traits types T:
//   struct T {
//     using Allocator = ...;                     // void* Malloc(size_t); void Free(void*)
//     static std::unique_ptr<Allocator> Make();  // safe for several threads at once
//     static size_t LimitBytes();                // a request above this throws OutOfMemoryError
//     static bool HostAccessible();              // the host may write and read the memory
//     static bool NeedsGpu();                    // true: "skipped: no GPU" without one
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Caching, AllocatorConformanceTest, ::testing::Types<T>);
// Contract checked: Malloc(0) is nullptr and Free(nullptr) a no-op; pointers are 256-byte aligned;
// live blocks never overlap; contents survive a seeded random mix of Malloc/Free; freed memory is
// reused; a request past the limit throws cuctx::OutOfMemoryError and the allocator keeps working;
// several threads may allocate and free at once. Content checks run only on host-accessible memory.
#ifndef CUCTX_TESTS_CUDAMATRIX_ALLOCATOR_CONFORMANCE_H_
#define CUCTX_TESTS_CUDAMATRIX_ALLOCATOR_CONFORMANCE_H_

#include "base/error.h"
#include "tests/cudamatrix/allocator-blocks.h"
#include "tests/testing.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace cuctx {
namespace test {

template <typename Traits>
class AllocatorConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Traits::NeedsGpu()) CUCTX_REQUIRE_GPU();
    allocator_ = Traits::Make();
  }
  std::unique_ptr<typename Traits::Allocator> allocator_;
};

TYPED_TEST_SUITE_P(AllocatorConformanceTest);

TYPED_TEST_P(AllocatorConformanceTest, ZeroBytesReturnsNullAndFreeNullIsNoop) {
  EXPECT_EQ(this->allocator_->Malloc(0), nullptr);
  EXPECT_NO_THROW(this->allocator_->Free(nullptr));
  void* p = this->allocator_->Malloc(1);
  EXPECT_NE(p, nullptr);
  this->allocator_->Free(p);
}

TYPED_TEST_P(AllocatorConformanceTest, PointersAre256ByteAligned) {
  std::vector<void*> ptrs;
  for (size_t bytes : {size_t{1}, size_t{3}, size_t{255}, size_t{256}, size_t{257}, size_t{1000},
                       size_t{4097}, size_t{65537}, size_t{1} << 20}) {
    void* p = this->allocator_->Malloc(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u) << bytes << " bytes at " << p;
    ptrs.push_back(p);
  }
  for (void* p : ptrs) this->allocator_->Free(p);
}

TYPED_TEST_P(AllocatorConformanceTest, LiveBlocksAreDistinctAndDisjoint) {
  Rng rng = MakeRng();
  std::vector<std::pair<uintptr_t, size_t>> spans;
  for (int i = 0; i < 300; ++i) {
    const size_t bytes = RandomRequest(64 << 10, &rng);
    void* p = this->allocator_->Malloc(bytes);
    ASSERT_NE(p, nullptr);
    spans.emplace_back(reinterpret_cast<uintptr_t>(p), bytes);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    EXPECT_LE(spans[i - 1].first + spans[i - 1].second, spans[i].first) << "blocks overlap";
  for (auto& s : spans) this->allocator_->Free(reinterpret_cast<void*>(s.first));
}

TYPED_TEST_P(AllocatorConformanceTest, RandomMixKeepsContents) {
  Rng rng = MakeRng(1);
  const bool check = TypeParam::HostAccessible();
  std::vector<LiveBlock> live;
  for (int step = 0; step < 3000; ++step) {
    if (live.empty() || (rng.Uniform() < 0.55 && live.size() < 200)) {
      const size_t bytes = RandomRequest(256 << 10, &rng);
      LiveBlock b{static_cast<unsigned char*>(this->allocator_->Malloc(bytes)), bytes,
                  static_cast<unsigned char>(rng.Int(1, 255))};
      ASSERT_NE(b.ptr, nullptr);
      if (check) FillBlock(b);
      live.push_back(b);
    } else {
      const size_t i = static_cast<size_t>(rng.Int(0, static_cast<int64_t>(live.size()) - 1));
      if (check) {
        ASSERT_TRUE(BlockIntact(live[i])) << live[i].bytes << " bytes, step " << step;
      }
      this->allocator_->Free(live[i].ptr);
      live[i] = live.back();
      live.pop_back();
    }
  }
  for (const LiveBlock& b : live) {
    if (check) {
      EXPECT_TRUE(BlockIntact(b));
    }
    this->allocator_->Free(b.ptr);
  }
}

// Each round takes 60% of the limit, so the rounds succeed only if freed memory comes back.
TYPED_TEST_P(AllocatorConformanceTest, ReusesMemoryAfterFree) {
  const size_t bytes = TypeParam::LimitBytes() / 10 * 6;
  for (int round = 0; round < 4; ++round) {
    void* p = nullptr;
    ASSERT_NO_THROW(p = this->allocator_->Malloc(bytes)) << "round " << round;
    ASSERT_NE(p, nullptr);
    this->allocator_->Free(p);
  }
}

TYPED_TEST_P(AllocatorConformanceTest, ThrowsOutOfMemoryPastLimitAndRecovers) {
  void* small = this->allocator_->Malloc(1000);
  EXPECT_THROW(this->allocator_->Malloc(TypeParam::LimitBytes() + 1), OutOfMemoryError);
  try {
    this->allocator_->Malloc(2 * TypeParam::LimitBytes());
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {  // OutOfMemoryError is a cuctx::Error too
    EXPECT_NE(dynamic_cast<const OutOfMemoryError*>(&e), nullptr) << e.what();
  }
  void* again = this->allocator_->Malloc(1000);
  EXPECT_NE(again, nullptr);
  this->allocator_->Free(again);
  this->allocator_->Free(small);
}

TYPED_TEST_P(AllocatorConformanceTest, ConcurrentThreadsKeepContents) {
  constexpr int kThreads = 4;
  const bool check = TypeParam::HostAccessible();
  std::atomic<int> failures{0};
  auto work = [&](int t) {
    Rng rng = MakeRng(100 + t);
    std::vector<LiveBlock> live;
    for (int step = 0; step < 1500; ++step) {
      if (live.empty() || (rng.Uniform() < 0.5 && live.size() < 50)) {
        const size_t bytes = RandomRequest(64 << 10, &rng);
        LiveBlock b{static_cast<unsigned char*>(this->allocator_->Malloc(bytes)), bytes,
                    static_cast<unsigned char>(16 * t + rng.Int(1, 15))};
        if (b.ptr == nullptr) ++failures;
        if (b.ptr == nullptr) continue;
        if (check) FillBlock(b);
        live.push_back(b);
      } else {
        if (check && !BlockIntact(live.back())) ++failures;
        this->allocator_->Free(live.back().ptr);
        live.pop_back();
      }
    }
    for (const LiveBlock& b : live) {
      if (check && !BlockIntact(b)) ++failures;
      this->allocator_->Free(b.ptr);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

REGISTER_TYPED_TEST_SUITE_P(AllocatorConformanceTest, ZeroBytesReturnsNullAndFreeNullIsNoop,
                            PointersAre256ByteAligned, LiveBlocksAreDistinctAndDisjoint,
                            RandomMixKeepsContents, ReusesMemoryAfterFree,
                            ThrowsOutOfMemoryPastLimitAndRecovers, ConcurrentThreadsKeepContents);

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_CUDAMATRIX_ALLOCATOR_CONFORMANCE_H_
