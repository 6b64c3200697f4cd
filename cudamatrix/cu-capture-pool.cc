// cudamatrix/cu-capture-pool.cc: memory pools that belong to CUDA graphs only
// (internal/cu-capture-pool.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-capture-pool.h"

#include "base/error.h"
#include "cudamatrix/cu-allocator-upstream.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-lock-order.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

namespace cuctx {
namespace internal {
namespace {

CuAllocatorOptions PoolOptions(const CuAllocatorOptions& device_options, int region_quantum_mb) {
  CuAllocatorOptions o = device_options;
  o.backend = "caching";
  o.cache_memory = true;  // the pool must keep what it frees
  o.memory_proportion = 0.0f;
  o.trace_file.clear();
  o.thread_cache_mb = 0;  // few capturing threads; nothing to cache per thread
  o.region_quantum_mb = region_quantum_mb;
  return o;
}

}  // namespace

CapturePool::CapturePool(const CuAllocatorOptions& device_options, int region_quantum_mb) {
  // The caching allocator syncs before it gives a block freed by one thread to another, for the
  // freeing thread's pending work. A pool's memory is used by graph replays, whose order is the
  // pool's rule (its graphs never run at the same time), and it is handed out only inside
  // captures, where a sync is not allowed: so there is nothing to wait for here. (A block that
  // escaped a capture and was freed by another thread whose stream still works on it could be
  // reused by a later capture; replays of that capture start after the user's own work on the
  // block only if the user orders them, as for any memory freed while in use.)
  allocator_ = std::make_unique<CuMemoryAllocator>(
      PoolOptions(device_options, region_quantum_mb),
      NewDeviceAllocatorUpstream(device_options.upstream, [] {}));
  static std::atomic<int64> pools{0};
  number_ = pools.fetch_add(1, std::memory_order_relaxed) + 1;
  device_ = std::max(0, ThreadDevice());
  SetSnapshotUse(Use::kPrivate);
}

void CapturePool::SetSnapshotUse(Use use) {
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);  // snapshots may read the label
  const std::string n = std::to_string(number_);
  switch (use) {
    case Use::kPrivate:
      allocator_->SetSnapshotLabel(device_, number_, "graph_pool_private", 0,
                                   "graph pool " + n + " (a CuGraph's private pool)");
      break;
    case Use::kShared:
      allocator_->SetSnapshotLabel(device_, 0, "graph_pool_shared", number_,
                                   "graph pool " + n + " (a CuGraphPool shared by captures)");
      break;
    case Use::kForeign:
      allocator_->SetSnapshotLabel(device_, number_, "graph_pool_foreign", 0,
                                   "graph pool " + n + " (a capture begun outside cuctx)");
      break;
  }
}

void CapturePool::AppendSnapshot(int device, MemorySnapshot* out) {
  if (device != device_) return;
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
  allocator_->AppendSnapshot(out);
}

CapturePool::~CapturePool() = default;

void* CapturePool::Malloc(size_t bytes) {
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
  void* p = nullptr;
  RunInRelaxedCaptureMode([&] { p = allocator_->Malloc(bytes); });
  if (p != nullptr) live_.insert(p);
  return p;
}

void* CapturePool::MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
  void* p = nullptr;
  RunInRelaxedCaptureMode([&] { p = allocator_->MallocPitch(row_bytes, num_rows, pitch); });
  if (p != nullptr) live_.insert(p);
  return p;
}

bool CapturePool::FreeIfOwned(void* ptr) {
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
  if (live_.erase(ptr) == 0) return false;
  auto it = escaped_.find(ptr);
  if (it != escaped_.end()) {
    std::shared_ptr<Escapes> escapes = std::move(it->second);
    escaped_.erase(it);
    if (escapes->graph_alive) {
      escapes->freed.push_back(ptr);  // its graph still writes it
      return true;
    }
  }
  allocator_->Free(ptr);
  return true;
}

void CapturePool::MarkEscaped(const std::vector<void*>& ptrs,
                              const std::shared_ptr<Escapes>& escapes) {
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
  for (void* p : ptrs)
    if (live_.count(p) != 0) escaped_[p] = escapes;
}

void CapturePool::ReleaseEscapes(Escapes* escapes) {
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
  escapes->graph_alive = false;
  for (void* p : escapes->freed) allocator_->Free(p);
  escapes->freed.clear();
}

bool CapturePool::Owns(void* ptr) {
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
  return live_.count(ptr) != 0;
}

bool CapturePool::Unused() {
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
  return live_.empty();
}

size_t CapturePool::HeldBytes() const { return allocator_->GetStats().held_bytes; }

}  // namespace internal
}  // namespace cuctx
