// cudamatrix/cu-allocator-placement.cc: the free pools of CuMemoryAllocator: best fit with thread affinity, splitting,
// joining, growth by new regions, out-of-memory recovery and giving regions back.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-allocator.h"

#include <tuple>

namespace cuctx {
namespace internal {

Block* AllocatorImpl::FindFreeLocked(size_t size, uint64 thread) {
  AssertLocked();
  if (!options_.thread_affinity) return FindFreeAnyOwnerLocked(size, thread);
  Pool* own = FindThreadPoolLocked(thread);
  Block* b = Better(own != nullptr ? own->BestFit(size) : nullptr, shared_.BestFit(size));
  if (b != nullptr) return b;
  // Blocks parked in this thread's cache are invisible to the pools until flushed.
  if (FastPath()) {
    const ThreadCache* mine = FindCacheLocked(thread);
    if (mine != nullptr && FlushCachesLocked(mine) > 0) {
      own = FindThreadPoolLocked(thread);
      b = Better(own != nullptr ? own->BestFit(size) : nullptr, shared_.BestFit(size));
      if (b != nullptr) return b;
    }
  }
  // Blocks made safe by an outside SynchronizeGpu() or by their thread's drained stream are
  // shared before paying for a sync.
  if (MoveSafeToSharedLocked() && (b = shared_.BestFit(size)) != nullptr) return b;
  if (!OtherPoolFitsLocked(size, thread)) {
    // Perhaps other threads' caches hold what is needed; a new region is the last resort.
    if (!FastPath() || FlushCachesLocked(nullptr) == 0) return nullptr;
    if ((b = shared_.BestFit(size)) != nullptr) return b;
    if (!OtherPoolFitsLocked(size, thread)) return nullptr;
  }
  SyncAndShareAllLocked();
  b = shared_.BestFit(size);
  CUCTX_ASSERT(b != nullptr);  // joining only makes blocks larger
  return b;
}

// The Kaldi policy (--cuda-allocator-thread-affinity=false): the lowest best fit of all pools,
// with a sync when it was freed by another thread since the last sync.
Block* AllocatorImpl::FindFreeAnyOwnerLocked(size_t size, uint64 thread) {
  AssertLocked();
  MoveSafeToSharedLocked();
  Block* best = shared_.BestFit(size);
  for (auto& p : thread_pools_) best = Better(best, p->BestFit(size));
  if (best == nullptr || best->pool == &shared_ || best->pool->thread == thread) return best;
  SyncAndShareAllLocked();
  return shared_.BestFit(size);
}

bool AllocatorImpl::OtherPoolFitsLocked(size_t size, uint64 thread) const {
  AssertLocked();
  for (const auto& p : thread_pools_)
    if (p->thread != thread && p->tree.Max() >= size) return true;
  return false;
}

void AllocatorImpl::SyncAndShareAllLocked() {
  AssertLocked();
  // With the mutex held no Free can reach the pools between reading the counter and the sync;
  // blocks parked meanwhile get the new cache epoch and stay unsafe.
  const uint64 upto = free_counter_;
  BumpCacheEpochsLocked();
  upstream_->SynchronizeAllStreams();
  ++stats_.num_syncs;
  NoteSynchronizedLocked(upto);
  FlushCachesLocked(nullptr);
  MoveSafeToSharedLocked();
}

// Every block parked before this call becomes safe for all threads once a sync (or the owning
// thread's stream wait) that starts after it has happened.
void AllocatorImpl::BumpCacheEpochsLocked() {
  AssertLocked();
  for (auto& c : caches_) {
    OptionalLock lock(&c->mutex, Locking());
    ++c->epoch;
  }
}

void AllocatorImpl::NoteSynchronizedLocked(uint64 upto) {
  AssertLocked();
  last_sync_stamp_ = std::max(last_sync_stamp_, upto);
  for (auto& p : thread_pools_) p->safe_upto = std::max(p->safe_upto, upto);
}

bool AllocatorImpl::MoveSafeToSharedLocked() {
  AssertLocked();
  bool moved = false;
  std::vector<Block*> moving;
  for (auto& p : thread_pools_) {
    if (p->safe_upto <= p->moved_upto) continue;
    moving.clear();
    for (const FreeEntry& e : p->blocks)
      if (e.block->stamp <= p->safe_upto) moving.push_back(e.block);
    // Each step only removes blocks of the shared pool (by joining), never others of `p`.
    for (Block* b : moving) {
      p->Erase(b);
      shared_.Insert(CoalesceLocked(b, &shared_));
    }
    p->moved_upto = p->safe_upto;
    moved |= !moving.empty();
  }
  if (thread_pools_.size() > kMaxIdlePools) {
    thread_pools_.erase(
        std::remove_if(thread_pools_.begin(), thread_pools_.end(),
                       [](const std::unique_ptr<Pool>& p) { return p->blocks.empty(); }),
        thread_pools_.end());
  }
  return moved;
}

// Joins `b` (in no pool) with its free neighbours of `pool` and, when they are not much larger
// than the block so far, of the shared pool. A thread that frees the block next to a big shared
// block (typically the untouched rest of a region) must not take all of it into its own pool:
// the next thread would then find the shared pool empty and have to sync. Mapped and unmapped
// blocks never join.
Block* AllocatorImpl::CoalesceLocked(Block* b, Pool* pool) {
  AssertLocked();
  for (;;) {
    Block* l = b->prev;
    if (JoinableLocked(b->mapped, b->size, l, pool)) {
      l->pool->Erase(l);
      b = JoinLocked(l, b);
      continue;
    }
    Block* r = b->next;
    if (JoinableLocked(b->mapped, b->size, r, pool)) {
      r->pool->Erase(r);
      b = JoinLocked(b, r);
      continue;
    }
    return b;
  }
}

// Whether CoalesceLocked joins a block of `size` bytes (mapped or not), on its way into `pool`,
// with its neighbour `n`.
bool AllocatorImpl::JoinableLocked(bool mapped, size_t size, const Block* n,
                                   const Pool* pool) const {
  AssertLocked();
  return n != nullptr && n->pool != nullptr && n->mapped == mapped &&
         (n->pool == pool || (n->pool == &shared_ && (pool == &shared_ || n->size <= size)));
}

// Serves a Malloc of `size` (rounded) with the deferred block b when the pools, had its Free been
// applied, would hand out b itself. The Free joins b with the free neighbours it may join, best
// fit picks the joined block, and TakeLocked cuts it at `size`. That leaves b exactly when:
//   - b joins nothing and is a size the request takes whole; or
//   - b is exactly `size` and joins only its right neighbour r of this thread's pool (the rest of a
//     block this request's shape was cut from before), which the cut leaves where it was, worth
//     keeping, with the Free's stamp;
// and no block of this thread's pool or the shared pool comes before the joined block in best
// fit's order. The counters then move as that Free and this Malloc would have moved them. Returns
// nullptr, changing nothing, otherwise.
void* AllocatorImpl::TakeDeferred(size_t size) {
  Guard lock(this, /*apply_deferred=*/false);
  Block* b = deferred_;
  const uint64 thread = upstream_->CurrentThreadId();
  if (thread != deferred_thread_ || b->size < size) return nullptr;
  Pool* own = FindThreadPoolLocked(thread);
  if (own == nullptr) return nullptr;
  Block* r = b->next;
  const bool rejoin = r != nullptr && r->pool == own && r->mapped == b->mapped;
  size_t joined = b->size;
  if (rejoin) {
    if (b->size != size || r->size < SplitThreshold(size)) return nullptr;
    joined += r->size;
  } else if (b->size - size >= SplitThreshold(size)) {
    return nullptr;
  }
  if (JoinableLocked(b->mapped, joined, b->prev, own) ||
      JoinableLocked(b->mapped, joined, rejoin ? r->next : r, own))
    return nullptr;
  // Best fit orders a pool's blocks by (sub-region, size, address); Better() prefers this thread's
  // pool over the shared one on a tie. With the Free applied r is inside the joined block, so when
  // r is this pool's best fit, the block after it in its sub-region is the one to beat: blocks of
  // later sub-regions lose to the joined block, which starts no later than r.
  using FitKey = std::tuple<size_t, size_t, const char*>;
  const FitKey mine{b->sub, joined, b->begin};
  const Block* o = own->BestFit(size);
  if (rejoin && o == r) o = own->NextInSubregion(r);
  if (o != nullptr && FitKey{o->sub, o->size, o->begin} < mine) return nullptr;
  const Block* s = shared_.BestFit(size);
  if (s != nullptr && (s->sub < b->sub || (s->sub == b->sub && s->size < joined))) return nullptr;
  deferred_ = nullptr;
  b->thread = thread;
  b->stamp = ++free_counter_;
  if (rejoin) r->stamp = b->stamp;  // as the cut's remainder would carry it
  InsertUsed(b);
  ++stats_.num_mallocs;
  return b->begin;
}

Block* AllocatorImpl::JoinLocked(Block* left, Block* right) {
  AssertLocked();
  left->size += right->size;
  left->next = right->next;
  if (left->next != nullptr) left->next->prev = left;
  left->stamp = std::max(left->stamp, right->stamp);
  RecycleBlockLocked(right);
  return left;
}

// Cuts `b` (in no pool) at `offset` (0 < offset < size) and returns the right part, a block like
// `b` (same region, pool-less, thread, stamp and mapping) in its own right.
Block* AllocatorImpl::SplitOffLocked(Block* b, size_t offset) {
  AssertLocked();
  CUCTX_ASSERT(b->pool == nullptr && offset > 0 && offset < b->size);
  Block* r = NewBlockLocked();
  r->begin = b->begin + offset;
  r->size = b->size - offset;
  r->region = b->region;
  r->sub = SubOf(r->region, r->begin);
  r->thread = b->thread;
  r->stamp = b->stamp;
  r->mapped = b->mapped;
  r->prev = b;
  r->next = b->next;
  if (r->next != nullptr) r->next->prev = r;
  b->next = r;
  b->size = offset;
  return r;
}

void AllocatorImpl::TakeLocked(Block* b, size_t size) {
  AssertLocked();
  Pool* pool = b->pool;
  pool->Erase(b);
  if (b->size - size >= SplitThreshold(size)) pool->Insert(SplitOffLocked(b, size));
  ++b->region->num_used;
  InsertUsed(b);
  NoteInUseLocked(b->size);
}

Block* AllocatorImpl::GrowLocked(size_t size) {
  AssertLocked();
  return granule_ != 0 ? GrowExpandableLocked(size) : GrowRegionsLocked(size);
}

// The first step of out-of-memory recovery, before anything is given back: moves what the thread
// caches hold to the pools and, if other threads' pools hold blocks, syncs once so that they join
// the shared pool. Returns a block that now fits `size`, or nullptr.
Block* AllocatorImpl::ShareForGrowthLocked(size_t size) {
  AssertLocked();
  FlushCachesLocked(nullptr);
  ShareThreadPoolsLocked();
  return shared_.BestFit(size);
}

// Syncs once and moves every thread pool's blocks to the shared pool, if any pool holds one.
void AllocatorImpl::ShareThreadPoolsLocked() {
  AssertLocked();
  for (auto& p : thread_pools_) {
    if (!p->blocks.empty()) {
      SyncAndShareAllLocked();
      return;
    }
  }
}

// Growth by a new region from the upstream's Allocate() (cudaMalloc).
Block* AllocatorImpl::GrowRegionsLocked(size_t size) {
  AssertLocked();
  const size_t need = RoundUp(size, quantum_);
  size_t bytes = need;
  if (!first_region_done_) {
    first_region_done_ = true;
    if (options_.memory_proportion > 0) {
      size_t free_bytes = 0, total_bytes = 0;
      upstream_->MemoryInfo(&free_bytes, &total_bytes);
      const size_t share =
          static_cast<size_t>(free_bytes * static_cast<double>(options_.memory_proportion));
      bytes = std::max(need, share / quantum_ * quantum_);
    }
  }
  void* ptr = UpstreamAllocateLocked(bytes);
  if (ptr == nullptr && bytes > need) ptr = UpstreamAllocateLocked(bytes = need);
  if (ptr == nullptr) {
    // Recovery, cheapest first: join what other threads freed, then give back whole free regions.
    if (Block* b = ShareForGrowthLocked(size)) return b;
    if (ReleaseFreeRegionsLocked() > 0) ptr = UpstreamAllocateLocked(bytes = need);
    // A region of exactly the request may still fit where a whole quantum does not.
    if (ptr == nullptr && need > size) ptr = UpstreamAllocateLocked(bytes = size);
    if (ptr == nullptr)
      ThrowOutOfMemoryLocked(size, "the upstream failed even after releasing the cache");
  }
  return AddRegionLocked(static_cast<char*>(ptr), bytes, false);
}

void* AllocatorImpl::UpstreamAllocateLocked(size_t bytes) {
  AssertLocked();
  const auto start = std::chrono::steady_clock::now();
  void* ptr = upstream_->Allocate(bytes);
  stats_.upstream_alloc_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (ptr == nullptr) {
    ++stats_.num_upstream_failures;
  } else {
    ++stats_.num_upstream_allocs;
    CUCTX_CHECK(reinterpret_cast<uintptr_t>(ptr) % kAlign == 0)
        << "upstream " << upstream_->Name() << " returned " << ptr << ", not 256-byte aligned";
  }
  return ptr;
}

// Adds a region of `bytes` at `base` as one free block: in the shared pool, or for an expandable
// region (address space only) in the unmapped pool.
Block* AllocatorImpl::AddRegionLocked(char* base, size_t bytes, bool expandable) {
  AssertLocked();
  auto region = std::make_unique<Region>();
  region->base = base;
  region->size = bytes;
  region->first_sub = num_subs_;
  region->num_subs = RoundUp(bytes, quantum_) / quantum_;
  num_subs_ += region->num_subs;
  Block* b = NewBlockLocked();
  b->begin = base;
  b->size = bytes;
  b->region = region.get();
  b->sub = region->first_sub;
  region->first = b;
  region->expandable = expandable;
  b->mapped = !expandable;
  if (expandable) {
    stats_.reserved_bytes += bytes;
  } else {
    region->mapped_bytes = bytes;
    stats_.held_bytes += bytes;
    stats_.peak_held_bytes = std::max(stats_.peak_held_bytes, stats_.held_bytes);
  }
  regions_.push_back(std::move(region));
  if (num_subs_ > tree_leaves_) {
    while (tree_leaves_ < num_subs_) tree_leaves_ *= 2;
    RenumberLocked();
  }
  (expandable ? unmapped_ : shared_).Insert(b);
  return b;
}

size_t AllocatorImpl::ReleaseCachedMemory() {
  Guard lock(this);
  if (!options_.cache_memory) return 0;
  FlushCachesLocked(nullptr);
  return ReleaseFreeRegionsLocked();
}

// Gives back every region that holds no block in use or, with expandable regions, every free
// granule (and the address space of extra regions left with nothing mapped); returns the bytes.
size_t AllocatorImpl::ReleaseFreeRegionsLocked() {
  AssertLocked();
  if (granule_ != 0) {
    // Free neighbours in different pools do not join, and a piece smaller than a granule cannot
    // be unmapped; the unmap waits for the device anyway, so share everything first.
    ShareThreadPoolsLocked();
    const size_t unmapped = UnmapFreeGranulesLocked();
    UnreserveEmptyRegionsLocked();
    return unmapped;
  }
  size_t released = 0;
  for (auto it = regions_.begin(); it != regions_.end();) {
    Region* r = it->get();
    if (r->num_used != 0) {
      ++it;
      continue;
    }
    for (Block* b = r->first; b != nullptr;) {
      Block* next = b->next;
      b->pool->Erase(b);
      RecycleBlockLocked(b);
      b = next;
    }
    upstream_->Release(r->base, r->size);
    ++stats_.num_upstream_releases;
    stats_.held_bytes -= r->size;
    released += r->size;
    it = regions_.erase(it);
  }
  if (released > 0) RenumberLocked();
  return released;
}

// Gives the regions consecutive sub-region numbers again and rebuilds every pool's keys and tree.
void AllocatorImpl::RenumberLocked() {
  AssertLocked();
  std::vector<Block*> free_blocks;
  std::vector<Pool*> pools = {&shared_, &unmapped_};
  for (auto& p : thread_pools_) pools.push_back(p.get());
  for (Pool* p : pools) {
    for (const FreeEntry& e : p->blocks) free_blocks.push_back(e.block);
    p->blocks.clear();
    p->bytes = 0;
  }
  num_subs_ = 0;
  for (auto& r : regions_) {
    r->first_sub = num_subs_;
    num_subs_ += r->num_subs;
    for (Block* b = r->first; b != nullptr; b = b->next) b->sub = SubOf(r.get(), b->begin);
  }
  tree_leaves_ = std::max<size_t>(tree_leaves_, num_subs_);
  for (Pool* p : pools) p->tree.Reset(tree_leaves_);
  for (Block* b : free_blocks) b->pool->Insert(b);
}

Pool* AllocatorImpl::FindThreadPoolLocked(uint64 thread) {
  AssertLocked();
  for (auto& p : thread_pools_)
    if (p->thread == thread) return p.get();
  return nullptr;
}

Pool* AllocatorImpl::ThreadPoolLocked(uint64 thread) {
  AssertLocked();
  if (Pool* p = FindThreadPoolLocked(thread)) return p;
  thread_pools_.push_back(std::make_unique<Pool>(thread, &block_nodes_));
  thread_pools_.back()->tree.Reset(tree_leaves_);
  return thread_pools_.back().get();
}

Block* AllocatorImpl::NewBlockLocked() {
  AssertLocked();
  ++num_blocks_;
  if (spare_blocks_.empty()) {
    block_storage_.emplace_back();
    return &block_storage_.back();
  }
  Block* b = spare_blocks_.back();
  spare_blocks_.pop_back();
  *b = Block();
  return b;
}

void AllocatorImpl::RecycleBlockLocked(Block* b) {
  AssertLocked();
  --num_blocks_;
  spare_blocks_.push_back(b);
}

size_t AllocatorImpl::LargestFreeBlockLocked() const {
  AssertLocked();
  size_t largest = shared_.tree.Max();
  for (const auto& p : thread_pools_) largest = std::max(largest, p->tree.Max());
  return largest;
}

}  // namespace internal
}  // namespace cuctx
