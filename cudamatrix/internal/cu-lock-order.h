// cudamatrix/internal/cu-lock-order.h: the runtime's lock order, and its check in debug builds.
// Private to cudamatrix/.
// SPDX-License-Identifier: Apache-2.0
//
// THE LOCK ORDER. A thread that holds a lock of one level takes only locks of higher levels:
//   1. kRegistryLock      the device registry's mutex (cu-device-registry.cc: device set-up,
//                         selection, multithreading switches); set-up makes allocators under it
//   2. kOwnersLock        the list of scoped-memory owners (cu-alloc-scope.cc), which asks each
//                         owner whether it holds a freed pointer
//   3. kScopeLock         a graph's memory pool (cu-capture-pool.cc), which calls its own
//                         allocator, and the escaped graph-node allocations (cu-graph-nodes.cc)
//   4. kAllocatorLock     a CuMemoryAllocator's mutex (cu-allocator.h); its thread-cache and
//                         used-map spin locks come after it and call out to nothing
//   5. kCaptureGateLock   the capture gates (internal/cu-capture-gate.h), several of them only in
//                         ascending device order, as one step
//   6. leaf locks         the VMM upstream's access list, the pinned pools, the profile registry,
//                         a planned scope's plans, a foreign capture's kept eager pointers and
//                         the queue of released foreign pools: each calls out to no lock of 1-5
// The one wait across layers is 4 -> 5: an allocator calls its upstream's Release() and
// SynchronizeAllStreams() with its mutex held, and those pass the capture gate of its device. Its
// safety rests on nothing at level 5 or above ever taking a lock of levels 1-4: a gate holds its
// mutex only to count a capture in or out and around the device-wide CUDA call itself.
//
// In debug builds (no NDEBUG) every lock of levels 1-5 records its level on the taking thread,
// and taking one whose level is not above every level the thread holds fails a CUCTX_ASSERT
// naming both; a method that expects a lock held asserts it with LockOrder::Holds(). Release builds
// compile all of it away.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_LOCK_ORDER_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_LOCK_ORDER_H_

#include "base/error.h"

namespace cuctx {
namespace internal {

enum LockLevel {
  kRegistryLock = 1,
  kOwnersLock = 2,
  kScopeLock = 3,
  kAllocatorLock = 4,
  kCaptureGateLock = 5,
};

class LockOrder {
 public:
#ifdef NDEBUG
  static void Acquire(LockLevel) {}
  static void Release(LockLevel) {}
  static bool Holds(LockLevel) { return true; }
#else
  // Records that the calling thread takes a lock of `level`; fails when it holds one of the same or
  // a higher level.
  static void Acquire(LockLevel level) {
    CUCTX_ASSERT((held_ >> level) == 0u && "lock order: a lock of this level or above is held");
    held_ |= 1u << level;
  }
  static void Release(LockLevel level) { held_ &= ~(1u << level); }
  // True when the calling thread holds a lock of `level` (always true in release builds).
  static bool Holds(LockLevel level) { return (held_ & (1u << level)) != 0; }

 private:
  static inline thread_local unsigned held_ = 0;
#endif
};

// A lock_guard that also records the lock's level (debug builds): the level is checked before the
// mutex is taken, so an order violation fails the assertion instead of deadlocking.
template <typename Mutex>
class OrderedLockGuard {
 public:
  OrderedLockGuard(Mutex& mutex, LockLevel level) : mutex_(mutex), level_(level) {
    LockOrder::Acquire(level_);
    mutex_.lock();
  }
  ~OrderedLockGuard() {
    mutex_.unlock();
    LockOrder::Release(level_);
  }
  OrderedLockGuard(const OrderedLockGuard&) = delete;
  OrderedLockGuard& operator=(const OrderedLockGuard&) = delete;

 private:
  Mutex& mutex_;
  LockLevel level_;
};

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_LOCK_ORDER_H_
