// cudamatrix/cu-allocator-thread-cache.cc: the per-thread caches of freed blocks and the sharded map of blocks in use
// (NOTE ON THE THREAD CACHE and NOTE ON LOCKING in cu-allocator.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-allocator.h"

namespace cuctx {
namespace internal {

ThreadCache* AllocatorImpl::CacheOf(uint64 thread) {
  // One slot per thread for the allocator and simulated thread it used last; others take the mutex.
  struct Slot {
    uint64 allocator = 0;
    uint64 thread = 0;
    ThreadCache* cache = nullptr;
  };
  thread_local Slot slot;
  if (slot.allocator == id_ && slot.thread == thread) return slot.cache;
  Guard lock(this);
  ThreadCache* cache = FindCacheLocked(thread);
  if (cache == nullptr) {
    caches_.push_back(std::make_unique<ThreadCache>(thread));
    cache = caches_.back().get();
  }
  slot = Slot{id_, thread, cache};
  return cache;
}

ThreadCache* AllocatorImpl::FindCacheLocked(uint64 thread) {
  AssertLocked();
  for (auto& c : caches_)
    if (c->thread == thread) return c.get();
  return nullptr;
}

// Hands out the newest parked block that the core would hand out for `size` without splitting.
// A small block is never large enough for a request above the small-slot limit.
void* AllocatorImpl::CacheMalloc(size_t size, uint64 thread) {
  ThreadCache* c = CacheOf(thread);
  Block* b = nullptr;
  {
    OptionalLock lock(&c->mutex, Locking());
    if (size <= small_limit_) b = c->small.Take(size);
    if (b == nullptr && !c->large.blocks.empty()) b = c->large.Take(size);
    if (b == nullptr) return nullptr;
    ++c->hits;
  }
  InsertUsed(b);
  return b->begin;
}

// Parks `b` in the calling thread's cache, in the small slots if it fits them, else in the large
// slots, pushing out the oldest blocks of those slots into `evicted` (for the core) when they are
// full. False if `b` cannot be parked at all.
bool AllocatorImpl::CacheFree(Block* b, uint64 thread,
                              std::vector<std::pair<Block*, bool>>* evicted) {
  const bool small = b->size <= small_limit_;
  if (!small && large_slots_ == 0) return false;
  ThreadCache* c = CacheOf(thread);
  OptionalLock lock(&c->mutex, Locking());
  if (small) {
    while (!c->small.blocks.empty() && (c->small.blocks.size() >= kMaxCachedBlocks ||
                                        c->small.bytes + b->size > cache_capacity_))
      c->small.EvictOldest(c->epoch, evicted);
    c->small.Push(b, c->epoch);
  } else {
    while (c->large.blocks.size() >= large_slots_) c->large.EvictOldest(c->epoch, evicted);
    c->large.Push(b, c->epoch);
  }
  ++c->parked;
  return true;
}

// Moves the parked blocks of every cache (or of `only`) to the core's pools, as frees of their
// threads now, or as safe blocks when parked before the cache's current epoch. Called with the
// mutex held; returns the bytes moved.
size_t AllocatorImpl::FlushCachesLocked(const ThreadCache* only) {
  AssertLocked();
  size_t moved = 0;
  std::vector<Parked> blocks;
  for (auto& c : caches_) {
    if (only != nullptr && c.get() != only) continue;
    uint64 epoch = 0;
    {
      OptionalLock lock(&c->mutex, Locking());
      for (ParkedList* list : {&c->small, &c->large}) {
        blocks.insert(blocks.end(), list->blocks.begin(), list->blocks.end());
        list->blocks.clear();
        list->bytes = 0;
      }
      epoch = c->epoch;
    }
    for (const Parked& p : blocks) {
      moved += p.block->size;
      FreeBlockLocked(p.block, c->thread, p.epoch < epoch);
    }
    blocks.clear();
  }
  return moved;
}

void AllocatorImpl::InsertUsed(Block* b) {
  UsedShard& shard = used_[ShardOf(b->begin)];
  OptionalLock lock(&shard.mutex, Locking());
  if (shard.nodes.Empty()) {
    shard.map.emplace(b->begin, b);
  } else {
    UsedMap::node_type node = shard.nodes.Take();
    node.key() = b->begin;
    node.mapped() = b;
    shard.map.insert(std::move(node));
  }
}

Block* AllocatorImpl::RemoveUsed(void* ptr) {
  UsedShard& shard = used_[ShardOf(ptr)];
  OptionalLock lock(&shard.mutex, Locking());
  auto it = shard.map.find(ptr);
  if (it == shard.map.end()) return nullptr;
  Block* b = it->second;
  shard.nodes.Put(shard.map.extract(it));
  return b;
}

size_t AllocatorImpl::NumUsed() {
  size_t n = 0;
  for (UsedShard& shard : used_) {
    OptionalLock lock(&shard.mutex, Locking());
    n += shard.map.size();
  }
  return n;
}

}  // namespace internal
}  // namespace cuctx
