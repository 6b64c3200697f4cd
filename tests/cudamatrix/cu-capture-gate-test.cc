// tests/cudamatrix/cu-capture-gate-test.cc: the per-device capture gate (internal/cu-capture-gate.h)
// with two GPUs' worth of threads, on machines without a GPU.
// SPDX-License-Identifier: Apache-2.0
//
// Each "device" has a caching allocator over the host upstream, wrapped the way the CUDA upstream
// (cu-allocator-cuda.cc) is: its releases pass internal::OutsideCapturesToRelease(device) and its
// cross-thread syncs internal::OutsideCaptures(device). A capture is an internal::CaptureScope on
// its device, the object CuGraph::Capture holds for the length of a capture. The tests check that
// a capture on device 1 holds back device 1's syncs and releases (which would break it on a GPU)
// and nothing of device 0's, that releases also wait for the captures of devices that map the
// memory through peer access, and that page-locked releases wait for every device.
#include "cudamatrix/internal/cu-capture-gate.h"

#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-thread-state.h"
#include "cutool/host-allocator-upstream.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <gtest/gtest.h>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
// How long a held-back call is watched to see that it stays held back.
constexpr auto kHeldFor = std::chrono::milliseconds(150);

// The host upstream as the CUDA upstream of device `device` would behave towards the gate.
class GatedHostUpstream : public test::HostAllocatorUpstream {
 public:
  GatedHostUpstream(size_t capacity, int device)
      : HostAllocatorUpstream(capacity), device_(device) {}
  void Release(void* ptr, size_t bytes) noexcept override {
    try {
      internal::OutsideCapturesToRelease(device_,
                                         [&] { HostAllocatorUpstream::Release(ptr, bytes); });
    } catch (const std::exception& e) {
      CUCTX_WARN << "release: " << e.what();
    }
  }
  void SynchronizeAllStreams() override {
    internal::OutsideCaptures(device_, [&] { HostAllocatorUpstream::SynchronizeAllStreams(); });
  }

 private:
  int device_;
};

struct Device {
  GatedHostUpstream* upstream = nullptr;
  std::unique_ptr<CuMemoryAllocator> allocator;
};

Device MakeDevice(int id) {
  CuAllocatorOptions o;
  o.region_quantum_mb = 1;
  o.thread_cache_mb = 0;
  auto upstream = std::make_unique<GatedHostUpstream>(256 * kMiB, id);
  Device d;
  d.upstream = upstream.get();
  d.allocator = std::make_unique<CuMemoryAllocator>(o, std::move(upstream));
  d.allocator->AllowMultithreading();
  return d;
}

// A thread that captures on `device` until Finish() is called.
class Capture {
 public:
  explicit Capture(int device) {
    std::promise<void> started;
    std::future<void> started_future = started.get_future();
    thread_ = std::thread([this, device, &started] {
      internal::CaptureScope capture(device);
      EXPECT_TRUE(internal::ThreadCapturing());
      started.set_value();
      std::unique_lock<std::mutex> lock(mutex_);
      done_cv_.wait(lock, [this] { return done_; });
    });
    started_future.wait();
  }
  ~Capture() { Finish(); }
  void Finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
};

// Gives back the cached regions of `d`: one Release per region, each through the gate.
void FreeAndRelease(Device* d, size_t bytes) {
  void* p = d->allocator->Malloc(bytes);
  d->allocator->Free(p);
  d->allocator->ReleaseCachedMemory();
}

TEST(CuCaptureGateTest, CaptureOnOneDeviceDoesNotHoldBackAnother) {
  Device dev0 = MakeDevice(0);
  Capture capture(1);
  ASSERT_EQ(internal::CapturesRunning(1), 1);
  ASSERT_EQ(internal::CapturesRunning(0), 0);
  // Two threads of device 0 allocate, free, sync and give memory back while device 1 captures.
  // With a process-wide gate they would wait for the capture, which waits for them: the future
  // would time out.
  auto work = std::async(std::launch::async, [&dev0] {
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&dev0] {
        for (int i = 0; i < 20; ++i) {
          void* p = dev0.allocator->Malloc(kMiB + 256 * i);
          dev0.allocator->Free(p);
          dev0.allocator->SynchronizeGpu();
        }
      });
    for (std::thread& t : threads) t.join();
    FreeAndRelease(&dev0, 8 * kMiB);
  });
  const bool finished = work.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  EXPECT_TRUE(finished) << "device 0's work was held back by a capture on device 1";
  EXPECT_EQ(internal::CapturesRunning(1), 1);  // all of it while the capture ran
  capture.Finish();
  work.get();
  EXPECT_GT(dev0.upstream->NumReleaseCalls(), 0);
  EXPECT_GT(dev0.upstream->NumSynchronizeCalls(), 0);
}

TEST(CuCaptureGateTest, CaptureHoldsBackItsOwnDevice) {
  Device dev0 = MakeDevice(0);
  Device dev1 = MakeDevice(1);
  void* p = dev1.allocator->Malloc(8 * kMiB);
  dev1.allocator->Free(p);
  auto capture = std::make_unique<Capture>(1);
  std::atomic<bool> released{false}, synced{false};
  std::thread releaser([&] {
    dev1.allocator->ReleaseCachedMemory();  // holds dev1's allocator mutex while it waits
    released = true;
  });
  std::thread syncer([&] {
    dev1.allocator->SynchronizeGpu();
    synced = true;
  });
  std::this_thread::sleep_for(kHeldFor);
  EXPECT_FALSE(released.load());
  EXPECT_FALSE(synced.load());
  EXPECT_EQ(dev1.upstream->NumReleaseCalls(), 0);
  // Meanwhile device 0 is not held back, neither by the capture nor by dev1's waiting threads.
  FreeAndRelease(&dev0, 4 * kMiB);
  EXPECT_GT(dev0.upstream->NumReleaseCalls(), 0);
  capture.reset();  // the capture ends: the held-back calls go through
  releaser.join();
  syncer.join();
  EXPECT_TRUE(released.load());
  EXPECT_TRUE(synced.load());
  EXPECT_GT(dev1.upstream->NumReleaseCalls(), 0);
}

TEST(CuCaptureGateTest, CaptureWaitsForADeviceWideCallOfItsDeviceOnly) {
  std::mutex mutex;
  std::condition_variable cv;
  bool inside = false, leave = false;
  std::thread waiter([&] {
    internal::OutsideCaptures(1, [&] {
      std::unique_lock<std::mutex> lock(mutex);
      inside = true;
      cv.notify_all();
      cv.wait(lock, [&] { return leave; });
    });
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return inside; });
  }
  std::atomic<bool> captured1{false};
  std::thread capture1([&] {
    internal::CaptureScope capture(1);
    captured1 = true;
  });
  {
    internal::CaptureScope capture0(0);  // another device: starts at once
    EXPECT_EQ(internal::CapturesRunning(0), 1);
  }
  std::this_thread::sleep_for(kHeldFor);
  EXPECT_FALSE(captured1.load());
  {
    std::lock_guard<std::mutex> lock(mutex);
    leave = true;
  }
  cv.notify_all();
  waiter.join();
  capture1.join();
  EXPECT_TRUE(captured1.load());
  EXPECT_EQ(internal::CapturesRunning(1), 0);
}

TEST(CuCaptureGateTest, ReleasesWaitForPeersThatMapTheMemory) {
  // Devices 2 and 3 (not used by the other tests): 3 maps 2's memory.
  internal::NotePeerAccess(/*owner=*/2, /*reader=*/3);
  Device dev2 = MakeDevice(2);
  void* p = dev2.allocator->Malloc(8 * kMiB);
  dev2.allocator->Free(p);
  auto capture = std::make_unique<Capture>(3);
  dev2.allocator->SynchronizeGpu();  // a sync of device 2 alone does not involve device 3
  std::atomic<bool> released{false};
  std::thread releaser([&] {
    dev2.allocator->ReleaseCachedMemory();
    released = true;
  });
  std::this_thread::sleep_for(kHeldFor);
  EXPECT_FALSE(released.load());
  capture.reset();
  releaser.join();
  EXPECT_TRUE(released.load());
  EXPECT_GT(dev2.upstream->NumReleaseCalls(), 0);
  // The other way round nothing is mapped: a capture on 2 does not hold back releases of 3.
  Device dev3 = MakeDevice(3);
  Capture capture2(2);
  FreeAndRelease(&dev3, 4 * kMiB);
  EXPECT_GT(dev3.upstream->NumReleaseCalls(), 0);
}

TEST(CuCaptureGateTest, PageLockedReleasesWaitForEveryDevice) {
  auto capture = std::make_unique<Capture>(5);
  std::atomic<bool> done{false};
  std::thread releaser([&] {
    internal::OutsideAllCaptures([] {});
    done = true;
  });
  std::this_thread::sleep_for(kHeldFor);
  EXPECT_FALSE(done.load());
  capture.reset();
  releaser.join();
  EXPECT_TRUE(done.load());
}

TEST(CuCaptureGateTest, ACapturingThreadCannotWaitAtAGate) {
  internal::CaptureScope capture(0);
  bool ran = false;
  EXPECT_THROW(internal::OutsideCaptures(1, [&] { ran = true; }), Error);
  EXPECT_THROW(internal::OutsideCapturesToRelease(0, [&] { ran = true; }), Error);
  EXPECT_FALSE(ran);
  EXPECT_THROW(internal::CheckNotCapturing("SomeOp"), Error);
}

TEST(CuCaptureGateTest, DeviceOutOfRangeIsAnError) {
  EXPECT_THROW(internal::OutsideCaptures(internal::kMaxDevices, [] {}), Error);
  EXPECT_THROW(internal::NotePeerAccess(0, -1), Error);
  bool ran = false;
  internal::OutsideCaptures(-1, [&] { ran = true; });  // no GPU: nothing to wait for
  EXPECT_TRUE(ran);
}

// The runtime switch of the foreign-capture check (cu-allocator-bench --only=detect uses it).
TEST(CuCaptureGateTest, CaptureWatchModeSwitchesAtRunTime) {
  const std::string initial = internal::CaptureWatchMode();
  EXPECT_THROW(internal::SetCaptureWatchModeForTesting("sometimes"), Error);
  EXPECT_EQ(internal::CaptureWatchMode(), initial);  // a bad mode changes nothing
#if CUCTX_HAVE_CUDA
  ASSERT_TRUE(internal::SetCaptureWatchModeForTesting("off"));
  EXPECT_STREQ(internal::CaptureWatchMode(), "off");
  EXPECT_FALSE(internal::ThreadStreamCapturing());
  ASSERT_TRUE(internal::SetCaptureWatchModeForTesting("query"));
  EXPECT_STREQ(internal::CaptureWatchMode(), "query");
  EXPECT_FALSE(internal::ThreadStreamCapturing());  // no capture runs
  // CUPTI needs libcupti and a driver; without them the switch says no and keeps "query".
  if (internal::SetCaptureWatchModeForTesting("cupti"))
    EXPECT_STREQ(internal::CaptureWatchMode(), "cupti");
  else
    EXPECT_STREQ(internal::CaptureWatchMode(), "query");
  EXPECT_FALSE(internal::ThreadStreamCapturing());
  EXPECT_TRUE(internal::SetCaptureWatchModeForTesting(initial) || initial == "cupti");
#else
  EXPECT_TRUE(internal::SetCaptureWatchModeForTesting("off"));
  EXPECT_FALSE(internal::SetCaptureWatchModeForTesting("cupti"));
  EXPECT_STREQ(internal::CaptureWatchMode(), "off");
#endif
}

#if CUCTX_HAVE_CUDA
// The default: while one thread checks its stream the driver is asked at every check (no CUPTI
// subscriber, whose dispatch would make every CUDA call dearer); the second thread that checks
// moves the process to the CUPTI watch, or to asking always where CUPTI cannot run.
TEST(CuCaptureGateTest, AutoModeStartsTheWatchWhenASecondThreadChecks) {
  const std::string initial = internal::CaptureWatchMode();
  ASSERT_TRUE(internal::SetCaptureWatchModeForTesting("auto"));
  EXPECT_STREQ(internal::CaptureWatchMode(), "auto");
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(internal::ThreadStreamCapturing());
  EXPECT_STREQ(internal::CaptureWatchMode(), "auto") << "one thread checks: nothing to contend";
  std::thread([] { EXPECT_FALSE(internal::ThreadStreamCapturing()); }).join();
  const std::string after = internal::CaptureWatchMode();
  EXPECT_TRUE(after == "cupti" || after == "query") << after;
  EXPECT_FALSE(internal::ThreadStreamCapturing());
  // Entering the mode again counts threads afresh.
  ASSERT_TRUE(internal::SetCaptureWatchModeForTesting("auto"));
  EXPECT_FALSE(internal::ThreadStreamCapturing());
  EXPECT_STREQ(internal::CaptureWatchMode(), "auto");
  EXPECT_TRUE(internal::SetCaptureWatchModeForTesting(initial) || initial == "cupti");
}
#endif

}  // namespace
}  // namespace cuctx
