// tests/cudamatrix/cu-pinned-test.cc: the caching pinned host allocator and PinnedBuffer.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-pinned.h"

#include "base/error.h"
#include "base/parse-options.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "tests/testing.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if CUCTX_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

bool PageAligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 4096 == 0; }

TEST(PinnedHostAllocatorTest, RoundUpSizeFollowsTheSizeClasses) {
  EXPECT_EQ(PinnedHostAllocator::RoundUpSize(0), 0u);
  EXPECT_EQ(PinnedHostAllocator::RoundUpSize(1), 4 * kKiB);
  EXPECT_EQ(PinnedHostAllocator::RoundUpSize(4 * kKiB), 4 * kKiB);
  EXPECT_EQ(PinnedHostAllocator::RoundUpSize(4 * kKiB + 1), 8 * kKiB);
  EXPECT_EQ(PinnedHostAllocator::RoundUpSize(300 * kKiB), 512 * kKiB);
  EXPECT_EQ(PinnedHostAllocator::RoundUpSize(kMiB + 1), 2 * kMiB);
  EXPECT_EQ(PinnedHostAllocator::RoundUpSize(2 * kMiB), 2 * kMiB);
  EXPECT_EQ(PinnedHostAllocator::RoundUpSize(2 * kMiB + 1), 4 * kMiB);
  EXPECT_EQ(PinnedHostAllocator::RoundUpSize(5 * kMiB), 6 * kMiB);
  EXPECT_EQ(PinnedHostAllocator::RoundUpSize(37 * kMiB), 38 * kMiB);
  test::ExpectErrorContaining([] { PinnedHostAllocator::RoundUpSize(SIZE_MAX); }, "too large");
}

TEST(PinnedHostAllocatorTest, FallbackServesAlignedOrdinaryMemory) {
  PinnedHostAllocator alloc(-1);
  EXPECT_FALSE(alloc.PageLocked());
  EXPECT_EQ(alloc.DeviceId(), -1);
  EXPECT_EQ(alloc.Allocate(0), nullptr);
  void* small = alloc.Allocate(100);
  void* big = alloc.Allocate(3 * kMiB);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(big, nullptr);
  EXPECT_TRUE(PageAligned(small));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big) % (2 * kMiB), 0u) << "big blocks are 2 MiB aligned";
  EXPECT_EQ(alloc.BlockSize(small), 4 * kKiB);
  EXPECT_EQ(alloc.BlockSize(big), 4 * kMiB);
  std::memset(small, 0x5a, 4 * kKiB);  // the whole block is usable
  std::memset(big, 0x5a, 4 * kMiB);
  EXPECT_FALSE(IsPageLocked(small));
  PinnedAllocatorStats s = alloc.Stats();
  EXPECT_FALSE(s.page_locked);
  EXPECT_EQ(s.device_id, -1);
  EXPECT_EQ(s.num_allocations, 2);
  alloc.Free(small);
  alloc.Free(big);
  alloc.Free(nullptr);
}

TEST(PinnedHostAllocatorTest, ReusesAFreedBlockOfTheSameClass) {
  PinnedHostAllocator alloc(-1);
  void* a = alloc.Allocate(5000);  // class 8 KiB
  alloc.Free(a);
  void* b = alloc.Allocate(6000);  // same class
  EXPECT_EQ(b, a);
  PinnedAllocatorStats s = alloc.Stats();
  EXPECT_EQ(s.num_allocations, 2);
  EXPECT_EQ(s.num_new_blocks, 1);
  EXPECT_EQ(s.num_from_cache, 1);
  EXPECT_EQ(s.num_frees, 1);
  alloc.Free(b);
}

TEST(PinnedHostAllocatorTest, CachedBlockServesRequestsDownToHalfItsSize) {
  PinnedHostAllocator alloc(-1);
  void* block = alloc.Allocate(8 * kKiB);
  alloc.Free(block);
  void* half = alloc.Allocate(3000);  // class 4 KiB: an 8 KiB block is at most twice that
  EXPECT_EQ(half, block);
  EXPECT_EQ(alloc.BlockSize(half), 8 * kKiB);
  alloc.Free(half);

  void* large = alloc.Allocate(16 * kKiB);
  alloc.Free(large);
  // Cached now: 8 KiB and 16 KiB. A 4 KiB class takes the 8 KiB block (<= 2 x 4 KiB), and then a
  // new block rather than the 16 KiB one.
  void* tiny = alloc.Allocate(1000);
  EXPECT_EQ(tiny, block);
  void* tiny2 = alloc.Allocate(1000);
  EXPECT_NE(tiny2, large) << "a 16 KiB block must not serve a 4 KiB class";
  alloc.Free(tiny);
  alloc.Free(tiny2);
}

TEST(PinnedHostAllocatorTest, StatsTrackBytesAndPeaks) {
  PinnedHostAllocator alloc(-1);
  void* a = alloc.Allocate(100);       // 4 KiB
  void* b = alloc.Allocate(10000);     // 16 KiB
  void* c = alloc.Allocate(3 * kMiB);  // 4 MiB
  PinnedAllocatorStats s = alloc.Stats();
  const int64 in_use = 4 * kKiB + 16 * kKiB + 4 * kMiB;
  EXPECT_EQ(s.bytes_in_use, in_use);
  EXPECT_EQ(s.bytes_held, in_use);
  EXPECT_EQ(s.bytes_requested, 100 + 10000 + 3 * kMiB);
  EXPECT_EQ(s.bytes_cached, 0);
  EXPECT_EQ(s.peak_bytes_in_use, in_use);
  alloc.Free(c);
  s = alloc.Stats();
  EXPECT_EQ(s.bytes_in_use, 4 * kKiB + 16 * kKiB);
  EXPECT_EQ(s.bytes_cached, 4 * kMiB);
  EXPECT_EQ(s.bytes_held, in_use);
  EXPECT_EQ(s.peak_bytes_in_use, in_use);
  EXPECT_EQ(s.peak_bytes_held, in_use);
  alloc.ResetPeaks();
  s = alloc.Stats();
  EXPECT_EQ(s.peak_bytes_in_use, 4 * kKiB + 16 * kKiB);
  EXPECT_EQ(s.peak_bytes_held, in_use);
  EXPECT_NE(s.ToString().find("held 4.0 MiB"), std::string::npos) << s.ToString();
  alloc.Free(a);
  alloc.Free(b);
  s = alloc.Stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.bytes_requested, 0);
  EXPECT_EQ(s.num_frees, 3);
}

TEST(PinnedHostAllocatorTest, CacheLimitReleasesFreedBlocks) {
  PinnedAllocatorOptions opts;
  opts.cache_limit_mb = 0;
  PinnedHostAllocator alloc(-1, opts);
  alloc.Free(alloc.Allocate(kMiB));
  PinnedAllocatorStats s = alloc.Stats();
  EXPECT_EQ(s.num_released, 1);
  EXPECT_EQ(s.bytes_held, 0);
  EXPECT_EQ(s.bytes_cached, 0);

  opts.cache_limit_mb = 1;
  alloc.SetOptions(opts);
  std::vector<void*> blocks;
  for (int i = 0; i < 3; ++i) blocks.push_back(alloc.Allocate(512 * kKiB));
  for (void* p : blocks) alloc.Free(p);
  s = alloc.Stats();
  EXPECT_EQ(s.bytes_cached, static_cast<int64>(kMiB));  // two of the three kept
  EXPECT_EQ(s.num_released, 2);                         // one here, one under the 0 limit

  opts.cache_limit_mb = 0;  // lowering the limit trims at once
  alloc.SetOptions(opts);
  EXPECT_EQ(alloc.Stats().bytes_cached, 0);
  EXPECT_EQ(alloc.Options().cache_limit_mb, 0);
}

TEST(PinnedHostAllocatorTest, ReleaseCacheFreesOnlyCachedBlocks) {
  PinnedHostAllocator alloc(-1);
  void* kept = alloc.Allocate(100);
  alloc.Free(alloc.Allocate(kMiB));
  alloc.Free(alloc.Allocate(3 * kMiB));
  EXPECT_EQ(alloc.ReleaseCache(), kMiB + 4 * kMiB);
  PinnedAllocatorStats s = alloc.Stats();
  EXPECT_EQ(s.bytes_held, static_cast<int64>(4 * kKiB));
  EXPECT_EQ(s.bytes_cached, 0);
  EXPECT_EQ(alloc.ReleaseCache(), 0u);
  static_cast<char*>(kept)[0] = 1;  // still ours
  alloc.Free(kept);
}

TEST(PinnedHostAllocatorTest, FreeingUnknownPointerOrTwiceIsAnError) {
  PinnedHostAllocator alloc(-1);
  int local = 0;
  test::ExpectErrorContaining([&] { alloc.Free(&local); }, "not a live block");
  void* p = alloc.Allocate(64);
  alloc.Free(p);
  test::ExpectErrorContaining([&] { alloc.Free(p); }, "freed twice");
  test::ExpectErrorContaining([&] { alloc.BlockSize(p); }, "not a live block");
  PinnedHostAllocator other(-1);
  void* q = other.Allocate(64);
  test::ExpectErrorContaining([&] { alloc.Free(q); }, "not a live block");
  other.Free(q);
}

TEST(PinnedHostAllocatorTest, ForDeviceRejectsBadIds) {
  EXPECT_THROW(PinnedHostAllocator::ForDevice(-2), Error);
  EXPECT_THROW(PinnedHostAllocator::ForDevice(100000), Error);
  EXPECT_THROW(PinnedHostAllocator(-7), Error);
  PinnedHostAllocator& fallback = PinnedHostAllocator::ForDevice(-1);
  EXPECT_EQ(&fallback, &PinnedHostAllocator::ForDevice(-1)) << "one allocator per device";
  EXPECT_FALSE(fallback.PageLocked());
}

TEST(PinnedHostAllocatorTest, ReleaseAllCachesEmptiesTheProcessWideCaches) {
  PinnedHostAllocator& fallback = PinnedHostAllocator::ForDevice(-1);
  fallback.Free(fallback.Allocate(3 * kMiB));
  EXPECT_GE(fallback.Stats().bytes_cached, static_cast<int64>(4 * kMiB));
  EXPECT_GE(PinnedHostAllocator::ReleaseAllCaches(), 4 * kMiB);
  EXPECT_EQ(fallback.Stats().bytes_cached, 0);
  EXPECT_EQ(PinnedHostAllocator::Get().Stats().bytes_cached, 0);
}

TEST(PinnedHostAllocatorTest, GetFollowsTheSelectedDevice) {
  PinnedHostAllocator& a = PinnedHostAllocator::Get();
  EXPECT_EQ(a.DeviceId(), CuDevice::Instantiate().DeviceId());
  EXPECT_EQ(a.PageLocked(), test::GpuEnabled());
}

TEST(PinnedAllocatorOptionsTest, RegistersAndParsesTheOptions) {
  PinnedAllocatorOptions opts;
  ParseOptions po("test");
  std::ostringstream quiet;
  po.SetMessageStream(&quiet);
  opts.Register(&po);
  const char* argv[] = {"prog", "--cuda-pinned-backend=register", "--cuda-pinned-cache-limit-mb=64",
                        "--cuda-pinned-prefault-threads=2"};
  po.Read(4, argv);
  EXPECT_EQ(opts.backend, "register");
  EXPECT_EQ(opts.Backend(), PinnedBackend::kRegister);
  EXPECT_EQ(opts.cache_limit_mb, 64);
  EXPECT_EQ(opts.prefault_threads, 2);
  opts.Check();
  PinnedHostAllocator alloc(-1, opts);
  EXPECT_EQ(alloc.Options().backend, "register");
}

TEST(PinnedAllocatorOptionsTest, RejectsBadValuesNamingTheOption) {
  PinnedAllocatorOptions bad_backend;
  bad_backend.backend = "mmap";
  test::ExpectErrorContaining([&] { bad_backend.Check(); }, "--cuda-pinned-backend");
  test::ExpectErrorContaining([&] { PinnedHostAllocator a(-1, bad_backend); }, "mmap");
  PinnedAllocatorOptions bad_limit;
  bad_limit.cache_limit_mb = -1;
  test::ExpectErrorContaining([&] { bad_limit.Check(); }, "--cuda-pinned-cache-limit-mb");
  PinnedAllocatorOptions bad_threads;
  bad_threads.prefault_threads = 0;
  test::ExpectErrorContaining([&] { bad_threads.Check(); }, "--cuda-pinned-prefault-threads");
  PinnedHostAllocator alloc(-1);
  test::ExpectErrorContaining([&] { alloc.SetOptions(bad_limit); }, "cache-limit");
  EXPECT_EQ(alloc.Options().cache_limit_mb, PinnedAllocatorOptions().cache_limit_mb);
  test::ExpectErrorContaining([&] { PinnedHostAllocator::SetDefaultOptions(bad_backend); }, "mmap");
  EXPECT_EQ(PinnedHostAllocator::DefaultOptions().backend, "alloc");
}

TEST(PinnedHostAllocatorTest, ConcurrentThreadsGetDistinctBlocks) {
  PinnedHostAllocator alloc(-1);
  constexpr int kThreads = 4;
  std::atomic<int> corrupted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&alloc, &corrupted, t] {
      test::Rng rng = test::MakeRng(t + 1);
      std::vector<std::pair<unsigned char*, size_t>> live;
      for (int step = 0; step < 300; ++step) {
        if (live.empty() || rng.Uniform() < 0.55) {
          size_t bytes = static_cast<size_t>(rng.Int(1, 64 * 1024));
          auto* p = static_cast<unsigned char*>(alloc.Allocate(bytes));
          std::memset(p, t + 1, bytes);  // a block shared with another thread gets overwritten
          live.emplace_back(p, bytes);
        } else {
          size_t i = static_cast<size_t>(rng.Int(0, static_cast<int64_t>(live.size()) - 1));
          for (size_t k = 0; k < live[i].second; k += 97)
            if (live[i].first[k] != t + 1) ++corrupted;
          alloc.Free(live[i].first);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
      for (auto& block : live) alloc.Free(block.first);
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(corrupted.load(), 0);
  PinnedAllocatorStats s = alloc.Stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_frees, s.num_allocations);
  EXPECT_EQ(s.num_allocations, s.num_from_cache + s.num_new_blocks);
  EXPECT_GT(s.num_from_cache, 0);
}

// ---- PinnedBuffer -------------------------------------------------------------------------------

TEST(PinnedBufferTest, IsMovableAndReturnsItsBlock) {
  PinnedHostAllocator alloc(-1);
  {
    PinnedBuffer a(100, &alloc);
    ASSERT_FALSE(a.Empty());
    EXPECT_EQ(a.Size(), 100u);
    EXPECT_EQ(a.Capacity(), 4 * kKiB);
    EXPECT_EQ(a.Allocator(), &alloc);
    EXPECT_FALSE(a.PageLocked());
    void* data = a.Data();
    PinnedBuffer b(std::move(a));
    EXPECT_TRUE(a.Empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
    EXPECT_EQ(b.Data(), data);
    PinnedBuffer c(5000, &alloc);
    c = std::move(b);  // c's old block goes back
    EXPECT_EQ(c.Data(), data);
    EXPECT_EQ(alloc.Stats().bytes_in_use, static_cast<int64>(4 * kKiB));
    PinnedBuffer d;
    d.Swap(&c);
    EXPECT_TRUE(c.Empty());
    EXPECT_EQ(d.Data(), data);
    d.Reset();
    EXPECT_TRUE(d.Empty());
    EXPECT_EQ(alloc.Stats().bytes_in_use, 0);
    PinnedBuffer e(300, &alloc);
  }
  PinnedAllocatorStats s = alloc.Stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_frees, s.num_allocations);
}

TEST(PinnedBufferTest, ZeroBytesIsEmptyAndNullAllocatorIsAnError) {
  PinnedBuffer empty(0);
  EXPECT_TRUE(empty.Empty());
  EXPECT_EQ(empty.Data(), nullptr);
  EXPECT_EQ(empty.Allocator(), nullptr);
  EXPECT_FALSE(empty.PageLocked());
  test::ExpectErrorContaining([] { PinnedBuffer b(10, nullptr); }, "null allocator");
}

TEST(PinnedBufferTest, DefaultAllocatorIsTheSelectedDevices) {
  PinnedBuffer b(1000);
  EXPECT_EQ(b.Allocator(), &PinnedHostAllocator::Get());
  EXPECT_EQ(b.PageLocked(), test::GpuEnabled());
  EXPECT_EQ(IsPageLocked(b.Data()), test::GpuEnabled());
}

// ---- GPU only: real page-locked memory and event-guarded reuse --------------------------------

#if CUCTX_HAVE_CUDA
// Holds the calling thread's stream in a host callback until Release(), so that events recorded
// after it stay incomplete for as long as the test needs. Release() is idempotent and is also
// called by the destructor, so a failing test never leaves the stream blocked.
class StreamBlocker {
 public:
  StreamBlocker() {
    EXPECT_EQ(cudaLaunchHostFunc(cudaStreamPerThread, &StreamBlocker::Wait, this), cudaSuccess);
  }
  ~StreamBlocker() {
    Release();
    cudaStreamSynchronize(cudaStreamPerThread);
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  static void Wait(void* self) {
    auto* b = static_cast<StreamBlocker*>(self);
    std::unique_lock<std::mutex> lock(b->mutex_);
    // A bounded wait: if the code under test wrongly waits for this stream, the test fails after
    // 20 s instead of hanging.
    b->cv_.wait_for(lock, std::chrono::seconds(20), [b] { return b->released_; });
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  bool released_ = false;
};
#endif

TEST(PinnedHostAllocatorTest, DeviceBlocksArePageLockedWithBothBackends) {
  CUCTX_REQUIRE_GPU();
  const int device = CuDevice::Instantiate().DeviceId();
  for (const char* backend : {"alloc", "register"}) {
    SCOPED_TRACE(backend);
    PinnedAllocatorOptions opts;
    opts.backend = backend;
    opts.prefault_threads = 4;
    PinnedHostAllocator alloc(device, opts);
    EXPECT_TRUE(alloc.PageLocked());
    for (size_t bytes : {size_t{1}, 300 * kKiB, 17 * kMiB}) {  // 17 MiB: parallel pre-fault
      auto* p = static_cast<char*>(alloc.Allocate(bytes));
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(PageAligned(p));
      EXPECT_TRUE(IsPageLocked(p)) << bytes;
      EXPECT_TRUE(IsPageLocked(p + alloc.BlockSize(p) - 1)) << bytes;
      std::memset(p, 0x3c, bytes);
      alloc.Free(p);
    }
    PinnedAllocatorStats s = alloc.Stats();
    EXPECT_TRUE(s.page_locked);
    EXPECT_EQ(s.device_id, device);
    EXPECT_EQ(s.num_new_blocks, 3);
    EXPECT_GT(alloc.ReleaseCache(), 17 * kMiB);
    EXPECT_EQ(alloc.Stats().bytes_held, 0);
  }
}

TEST(PinnedHostAllocatorTest, BlockIsNotReusedWhileItsEventIsPending) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  PinnedHostAllocator alloc(CuDevice::Instantiate().DeviceId());
  void* a = alloc.Allocate(64 * kKiB);
  void* b = nullptr;
  {
    StreamBlocker blocker;
    alloc.Free(a);                  // its event sits behind the blocked callback
    b = alloc.Allocate(64 * kKiB);  // must not wait for, nor hand out, the pending block
    EXPECT_NE(b, a);
    EXPECT_GE(alloc.Stats().num_not_ready, 1);
    EXPECT_EQ(alloc.Stats().num_new_blocks, 2);
    blocker.Release();
  }  // the blocker's destructor synchronizes the stream
  void* c = alloc.Allocate(64 * kKiB);
  EXPECT_EQ(c, a) << "the block is reused once its event has completed";
  alloc.Free(b);
  alloc.Free(c);
#endif
}

TEST(PinnedHostAllocatorTest, ReadyBlockIsTakenWithoutWaitingForAPendingOne) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  PinnedHostAllocator alloc(CuDevice::Instantiate().DeviceId());
  void* pending = alloc.Allocate(64 * kKiB);
  void* ready = alloc.Allocate(64 * kKiB);
  StreamBlocker blocker;
  alloc.Free(pending);  // oldest in the cache, but its event waits behind the blocker
  std::thread other([&alloc, ready] {
    CuDevice::Instantiate();  // attaches this thread to the selected device
    alloc.Free(ready);        // event on this thread's own (idle) stream
    EXPECT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
  });
  other.join();
  void* got = alloc.Allocate(64 * kKiB);
  EXPECT_EQ(got, ready);
  EXPECT_GE(alloc.Stats().num_not_ready, 1);
  EXPECT_EQ(alloc.Stats().num_new_blocks, 2);
  blocker.Release();
  alloc.Free(got);
#endif
}

TEST(PinnedHostAllocatorTest, CacheLimitKeepsPendingBlocksUntilTheyComplete) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  PinnedAllocatorOptions opts;
  opts.cache_limit_mb = 0;
  PinnedHostAllocator alloc(CuDevice::Instantiate().DeviceId(), opts);
  void* a = alloc.Allocate(kMiB);
  {
    StreamBlocker blocker;
    alloc.Free(a);  // over the limit, but still in flight: kept
    EXPECT_EQ(alloc.Stats().bytes_cached, static_cast<int64>(kMiB));
    EXPECT_EQ(alloc.Stats().num_released, 0);
    blocker.Release();
  }
  alloc.Free(alloc.Allocate(4 * kKiB));  // the next Free trims the completed block
  PinnedAllocatorStats s = alloc.Stats();
  EXPECT_EQ(s.bytes_cached, 0);
  EXPECT_EQ(s.num_released, 2);
#endif
}

TEST(PinnedHostAllocatorTest, ReleaseCacheWaitsForBlocksInFlight) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  PinnedHostAllocator alloc(CuDevice::Instantiate().DeviceId());
  void* a = alloc.Allocate(kMiB);
  {
    StreamBlocker blocker;
    alloc.Free(a);
    std::thread releaser([&blocker] { blocker.Release(); });
    // Blocks until the callback returns; the releaser thread lets it return.
    EXPECT_EQ(alloc.ReleaseCache(), kMiB);
    releaser.join();
  }
  EXPECT_EQ(alloc.Stats().bytes_held, 0);
#endif
}

}  // namespace
}  // namespace cuctx
