// tests/cudamatrix/host-allocator-upstream.h: a CuAllocatorUpstream over aligned host memory, so
// that the caching allocator's bookkeeping is tested on machines without a GPU.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_TESTS_CUDAMATRIX_HOST_ALLOCATOR_UPSTREAM_H_
#define CUCTX_TESTS_CUDAMATRIX_HOST_ALLOCATOR_UPSTREAM_H_

#include "cudamatrix/cu-allocator-upstream.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <mutex>

namespace cuctx {
namespace test {

// An upstream over aligned host memory, for tests and for replaying traces on the CPU.
//
// At most `capacity_bytes` may be held at once; a larger total makes Allocate() return nullptr,
// as cudaMalloc does when the device is full. MemoryInfo() reports free = capacity - held and
// total = capacity. Every call is counted. SimulateThread(id) makes CurrentThreadId() return `id`
// (for every real thread) until SimulateThread(0), so one test thread can play several threads.
// All methods are thread-safe.
class HostAllocatorUpstream : public CuAllocatorUpstream {
 public:
  explicit HostAllocatorUpstream(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  void* Allocate(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++num_allocate_calls_;
    if (bytes > capacity_ || held_ > capacity_ - bytes) {
      ++num_failed_allocations_;
      return nullptr;
    }
    // aligned_alloc needs a size that is a multiple of the alignment; the allocator guarantees it.
    void* ptr = std::aligned_alloc(kHostAlignment, RoundUp(bytes));
    if (ptr == nullptr) {
      ++num_failed_allocations_;
      return nullptr;
    }
    held_ += bytes;
    return ptr;
  }

  void Release(void* ptr, size_t bytes) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++num_release_calls_;
    held_ -= bytes;
    std::free(ptr);
  }

  void SynchronizeAllStreams() override { num_synchronize_calls_.fetch_add(1); }

  void MemoryInfo(size_t* free_bytes, size_t* total_bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    *free_bytes = capacity_ - held_;
    *total_bytes = capacity_;
  }

  uint64 CurrentThreadId() override {
    const uint64 simulated = simulated_thread_.load(std::memory_order_relaxed);
    return simulated != 0 ? simulated : CuAllocatorUpstream::CurrentThreadId();
  }

  std::string Name() const override { return "host memory"; }

  // Changes the limit; lowering it below HeldBytes() only makes later Allocate() calls fail.
  void SetCapacity(size_t capacity_bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = capacity_bytes;
  }
  // See the class comment; 0 returns to the real thread ids.
  void SimulateThread(uint64 id) { simulated_thread_.store(id, std::memory_order_relaxed); }

  size_t HeldBytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return held_;
  }
  int64 NumAllocateCalls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return num_allocate_calls_;
  }
  int64 NumFailedAllocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return num_failed_allocations_;
  }
  int64 NumReleaseCalls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return num_release_calls_;
  }
  int64 NumSynchronizeCalls() const { return num_synchronize_calls_.load(); }

 private:
  static constexpr size_t kHostAlignment = 256;
  static size_t RoundUp(size_t n) {
    return (n + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  }

  mutable std::mutex mutex_;
  size_t capacity_;
  size_t held_ = 0;
  int64 num_allocate_calls_ = 0;
  int64 num_failed_allocations_ = 0;
  int64 num_release_calls_ = 0;
  std::atomic<int64> num_synchronize_calls_{0};
  std::atomic<uint64> simulated_thread_{0};
};

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_CUDAMATRIX_HOST_ALLOCATOR_UPSTREAM_H_
