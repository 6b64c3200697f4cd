// cutool/host-allocator-upstream.h: a CuAllocatorUpstream over aligned host memory (and,
// optionally, reserved and mapped host address space), so that the caching allocator's
// bookkeeping is tested on machines without a GPU and the allocator tools (cu-allocator-soak,
// cu-allocator-snapshot) run without one. Header-only; used by tests/ and bin/.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUTOOL_HOST_ALLOCATOR_UPSTREAM_H_
#define CUCTX_CUTOOL_HOST_ALLOCATOR_UPSTREAM_H_

#include "cudamatrix/cu-allocator-upstream.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <sys/mman.h>
#include <utility>
#include <vector>

namespace cuctx {
namespace test {

// An upstream over aligned host memory, for tests and for replaying traces on the CPU.
//
// At most `capacity_bytes` may be held at once; a larger total makes Allocate() return nullptr,
// as cudaMalloc does when the device is full. MemoryInfo() reports free = capacity - held and
// total = capacity. Every call is counted. SimulateThread(id) makes CurrentThreadId() return `id`
// (for every real thread) until SimulateThread(0), so one test thread can play several threads.
// All methods are thread-safe.
//
// VMM-like mode (map_granularity > 0): MapGranularity() returns it, and Reserve / Map / Unmap /
// Unreserve work as the CUDA driver's virtual memory calls do, on host address space: Reserve()
// is an inaccessible mmap (PROT_NONE), Map() makes granules readable and writable (mprotect), and
// Unmap() discards their contents and makes them inaccessible again, so that a test touching
// memory the allocator has unmapped crashes instead of passing. Mapped bytes count against the
// capacity like held ones (Map() fails when they would pass it). Every contract the allocator
// must keep (granule-aligned arguments, ranges inside a reservation, no double map, no unmap of
// unmapped memory, nothing mapped at Unreserve) is checked; a violation is counted
// (NumContractViolations(), which tests expect to be 0) and the call is ignored.
class HostAllocatorUpstream : public CuAllocatorUpstream {
 public:
  explicit HostAllocatorUpstream(size_t capacity_bytes, size_t map_granularity = 0)
      : capacity_(capacity_bytes), granularity_(map_granularity) {}
  ~HostAllocatorUpstream() override {
    for (auto& r : reservations_) munmap(r.second.raw, r.second.raw_bytes);
  }

  void* Allocate(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++num_allocate_calls_;
    if (bytes > capacity_ || held_ + mapped_ > capacity_ - bytes) {
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
    *free_bytes = held_ + mapped_ < capacity_ ? capacity_ - held_ - mapped_ : 0;
    *total_bytes = capacity_;
  }

  uint64 CurrentThreadId() override {
    const uint64 simulated = simulated_thread_.load(std::memory_order_relaxed);
    return simulated != 0 ? simulated : CuAllocatorUpstream::CurrentThreadId();
  }

  std::string Name() const override { return "host memory"; }

  size_t MapGranularity() const override { return granularity_; }

  void* Reserve(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++num_reserve_calls_;
    if (granularity_ == 0 || bytes == 0 || bytes % granularity_ != 0) return Violation(nullptr);
    // Over-reserve by one granule so that the range can start on a granule boundary.
    const size_t raw_bytes = bytes + granularity_;
    void* raw =
        mmap(nullptr, raw_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    const uintptr_t base =
        (reinterpret_cast<uintptr_t>(raw) + granularity_ - 1) / granularity_ * granularity_;
    reservations_[base] = Reservation{raw, raw_bytes, bytes};
    reserved_ += bytes;
    return reinterpret_cast<void*>(base);
  }

  bool Map(void* addr, size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++num_map_calls_;
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    if (!InsideReservation(a, bytes)) return Violation(false);
    for (uintptr_t g = a; g < a + bytes; g += granularity_)
      if (mapped_granules_.count(g) != 0) return Violation(false);
    if (bytes > capacity_ || held_ + mapped_ > capacity_ - bytes) {
      ++num_failed_maps_;
      return false;
    }
    if (mprotect(addr, bytes, PROT_READ | PROT_WRITE) != 0) return Violation(false);
    for (uintptr_t g = a; g < a + bytes; g += granularity_) mapped_granules_.insert(g);
    mapped_ += bytes;
    return true;
  }

  void Unmap(const std::vector<std::pair<void*, size_t>>& ranges) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++num_unmap_calls_;  // one wait for the device per call
    for (const auto& range : ranges) {
      const uintptr_t a = reinterpret_cast<uintptr_t>(range.first);
      const size_t bytes = range.second;
      bool ok = InsideReservation(a, bytes);
      for (uintptr_t g = a; ok && g < a + bytes; g += granularity_)
        ok = mapped_granules_.count(g) != 0;
      if (!ok) {
        Violation(0);
        continue;
      }
      madvise(range.first, bytes, MADV_DONTNEED);
      mprotect(range.first, bytes, PROT_NONE);
      for (uintptr_t g = a; g < a + bytes; g += granularity_) mapped_granules_.erase(g);
      mapped_ -= bytes;
      ++num_unmapped_ranges_;
    }
  }

  void Unreserve(void* base, size_t bytes) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = reservations_.find(reinterpret_cast<uintptr_t>(base));
    if (it == reservations_.end() || it->second.bytes != bytes) {
      Violation(0);
      return;
    }
    const uintptr_t a = it->first;
    auto m = mapped_granules_.lower_bound(a);
    if (m != mapped_granules_.end() && *m < a + bytes) {
      Violation(0);
      return;
    }
    munmap(it->second.raw, it->second.raw_bytes);
    reserved_ -= bytes;
    reservations_.erase(it);
    ++num_unreserve_calls_;
  }

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
  // VMM-like mode.
  size_t MappedBytes() const { return Locked(mapped_); }
  size_t ReservedBytes() const { return Locked(reserved_); }
  int64 NumReserveCalls() const { return Locked(num_reserve_calls_); }
  int64 NumUnreserveCalls() const { return Locked(num_unreserve_calls_); }
  int64 NumMapCalls() const { return Locked(num_map_calls_); }
  int64 NumFailedMaps() const { return Locked(num_failed_maps_); }
  int64 NumUnmapCalls() const { return Locked(num_unmap_calls_); }
  int64 NumUnmappedRanges() const { return Locked(num_unmapped_ranges_); }
  int64 NumContractViolations() const { return Locked(num_contract_violations_); }

 private:
  static constexpr size_t kHostAlignment = 256;
  static size_t RoundUp(size_t n) {
    return (n + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  }

  struct Reservation {
    void* raw;         // what mmap returned
    size_t raw_bytes;  // and its length
    size_t bytes;      // the size Reserve() was asked for
  };
  template <typename T>
  T Locked(const T& value) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return value;
  }
  template <typename T>
  T Violation(T result) {
    ++num_contract_violations_;
    return result;
  }
  // [a, a + bytes) is non-empty, granule-aligned and inside one reservation. Mutex held.
  bool InsideReservation(uintptr_t a, size_t bytes) const {
    if (granularity_ == 0 || bytes == 0 || a % granularity_ != 0 || bytes % granularity_ != 0)
      return false;
    auto it = reservations_.upper_bound(a);
    if (it == reservations_.begin()) return false;
    --it;
    return a + bytes <= it->first + it->second.bytes;
  }

  mutable std::mutex mutex_;
  size_t capacity_;
  const size_t granularity_;
  size_t mapped_ = 0;
  size_t reserved_ = 0;
  std::map<uintptr_t, Reservation> reservations_;
  std::set<uintptr_t> mapped_granules_;
  int64 num_reserve_calls_ = 0;
  int64 num_unreserve_calls_ = 0;
  int64 num_map_calls_ = 0;
  int64 num_failed_maps_ = 0;
  int64 num_unmap_calls_ = 0;
  int64 num_unmapped_ranges_ = 0;
  int64 num_contract_violations_ = 0;
  size_t held_ = 0;
  int64 num_allocate_calls_ = 0;
  int64 num_failed_allocations_ = 0;
  int64 num_release_calls_ = 0;
  std::atomic<int64> num_synchronize_calls_{0};
  std::atomic<uint64> simulated_thread_{0};
};

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_CUTOOL_HOST_ALLOCATOR_UPSTREAM_H_
