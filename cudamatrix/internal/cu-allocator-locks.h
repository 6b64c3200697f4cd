// cudamatrix/internal/cu-allocator-locks.h: the locks of CuMemoryAllocator (NOTE ON LOCKING in
// cu-allocator.h): a spin lock for the per-thread caches and used-map shards, a spin-then-block
// mutex for the pools, and a guard that locks only once multithreading is allowed.
// SPDX-License-Identifier: Apache-2.0
//
// Private: included only by the allocator's files (internal/cu-allocator.h).
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_LOCKS_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_LOCKS_H_

#include <atomic>
#include <mutex>
#include <thread>

namespace cuctx {
namespace internal {

// One step of a busy wait. On x86 PAUSE keeps the waiting core from flooding the memory system
// with speculative loads (and from the pipeline flush when the awaited store lands), and leaves
// the core to an SMT sibling for a few dozen cycles; on ARM YIELD is the equivalent hint.
inline void CpuRelax() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// The per-thread cache and used-map locks (NOTE ON LOCKING in the header): test-and-test-and-set.
// exchange(acquire) / store(release) make the critical sections ordered like std::mutex's. A
// waiter reads the flag (its cache line stays shared until the holder's release store) for
// kSpins pauses, then yields the CPU each round, so a holder preempted by the OS gets it back.
class SpinLock {
 public:
  void lock() {
    int spins = 0;
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins < kSpins) {
          ++spins;
          CpuRelax();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpins = 128;
  std::atomic<bool> locked_{false};
};

// The allocator's global lock (NOTE ON LOCKING): a std::mutex, which does all the ordering, taken
// with try_lock() while a waiter spins and then yields, so that the usual wait of a few critical
// sections (~0.1-0.3 us each) never sleeps in the kernel; only when that does not suffice (the
// holder is calling the upstream, or is preempted) does the waiter block in lock(). `held_` is a
// hint only, kept by the holder, that lets waiters poll a shared cache line instead of hammering
// the mutex with failing compare-and-swaps.
class SpinThenBlockMutex {
 public:
  void lock() {
    int round = 0;
    while (!mutex_.try_lock()) {
      if (round == kSpins + kYields) {
        mutex_.lock();
        break;
      }
      do {
        if (round < kSpins)
          CpuRelax();
        else
          std::this_thread::yield();
      } while (++round < kSpins + kYields && held_.load(std::memory_order_relaxed));
    }
    held_.store(true, std::memory_order_relaxed);
  }
  void unlock() {
    held_.store(false, std::memory_order_relaxed);
    mutex_.unlock();
  }

 private:
  static constexpr int kSpins = 128;  // PAUSE takes ~40 ns on current x86 cores
  static constexpr int kYields = 8;
  std::mutex mutex_;
  std::atomic<bool> held_{false};
};

// Takes `mutex` only when multithreading is allowed.
template <typename Mutex>
class OptionalLock {
 public:
  OptionalLock(Mutex* mutex, bool on) : mutex_(on ? mutex : nullptr) {
    if (mutex_ != nullptr) mutex_->lock();
  }
  ~OptionalLock() {
    if (mutex_ != nullptr) mutex_->unlock();
  }
  OptionalLock(const OptionalLock&) = delete;
  OptionalLock& operator=(const OptionalLock&) = delete;

 private:
  Mutex* mutex_;
};

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_LOCKS_H_
