// cudamatrix/cu-alloc-scope.cc: the per-thread allocation scope hook and the process-wide list of
// owners of memory that outlives its scope (internal/cu-alloc-scope.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-alloc-scope.h"

#include "cudamatrix/internal/cu-lock-order.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

namespace cuctx {
namespace internal {
namespace {

thread_local AllocationScope* t_scope = nullptr;

struct OwnerList {
  std::mutex mutex;
  std::vector<std::shared_ptr<ScopedMemoryOwner>> owners;
  std::vector<ScopedMemoryOwner*> retired;  // dropped once unused
  std::atomic<int> count{0};

  std::shared_ptr<ScopedMemoryOwner> RemoveLocked(ScopedMemoryOwner* owner) {
    auto it =
        std::find_if(owners.begin(), owners.end(),
                     [&](const std::shared_ptr<ScopedMemoryOwner>& o) { return o.get() == owner; });
    if (it == owners.end()) return nullptr;
    std::shared_ptr<ScopedMemoryOwner> dropped = std::move(*it);
    owners.erase(it);
    retired.erase(std::remove(retired.begin(), retired.end(), owner), retired.end());
    count.store(static_cast<int>(owners.size()), std::memory_order_relaxed);
    return dropped;
  }
};

OwnerList& Owners() {
  static OwnerList* list = new OwnerList;  // outlives every thread's last Free
  return *list;
}

}  // namespace

AllocationScope* SetThreadAllocationScope(AllocationScope* scope) {
  AllocationScope* previous = t_scope;
  t_scope = scope;
  return previous;
}

AllocationScope* ThreadAllocationScope() { return t_scope; }

void RegisterScopedMemoryOwner(std::shared_ptr<ScopedMemoryOwner> owner) {
  OwnerList& l = Owners();
  OrderedLockGuard<std::mutex> lock(l.mutex, kOwnersLock);
  l.owners.push_back(std::move(owner));
  l.count.store(static_cast<int>(l.owners.size()), std::memory_order_relaxed);
}

void RetireScopedMemoryOwner(ScopedMemoryOwner* owner) {
  OwnerList& l = Owners();
  std::shared_ptr<ScopedMemoryOwner> drop;  // destroyed after the lock is released
  OrderedLockGuard<std::mutex> lock(l.mutex, kOwnersLock);
  if (owner->Unused())
    drop = l.RemoveLocked(owner);
  else
    l.retired.push_back(owner);
}

bool FreeScopedMemory(void* ptr) {
  OwnerList& l = Owners();
  if (l.count.load(std::memory_order_relaxed) == 0) return false;
  std::shared_ptr<ScopedMemoryOwner> drop;
  OrderedLockGuard<std::mutex> lock(l.mutex, kOwnersLock);
  for (auto& owner : l.owners) {
    if (!owner->FreeIfOwned(ptr)) continue;
    ScopedMemoryOwner* o = owner.get();
    if (std::find(l.retired.begin(), l.retired.end(), o) != l.retired.end() && o->Unused())
      drop = l.RemoveLocked(o);
    return true;
  }
  return false;
}

void AppendScopedMemorySnapshots(int device, MemorySnapshot* out) {
  OwnerList& l = Owners();
  OrderedLockGuard<std::mutex> lock(l.mutex, kOwnersLock);
  for (auto& owner : l.owners) owner->AppendSnapshot(device, out);
}

}  // namespace internal
}  // namespace cuctx
