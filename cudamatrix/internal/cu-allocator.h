// cudamatrix/internal/cu-allocator.h: the insides of CuMemoryAllocator, shared by its files.
// SPDX-License-Identifier: Apache-2.0
//
// Private: included only by cudamatrix/cu-allocator*.cc, never installed. The allocator is split by
// responsibility (see cu-allocator.h for the design and its notes):
//   cu-allocator.cc               the public class, entry points, frees, syncs, construction
//   cu-allocator-placement.cc     free pools: best fit, splitting, joining, growth, release
//   cu-allocator-expandable.cc    expandable (VMM) regions: map on growth, unmap free chunks
//   cu-allocator-thread-cache.cc  per-thread caches of freed blocks and the map of blocks in use
//   cu-allocator-stats.cc         statistics, error messages and the trace writer
//   cu-allocator-replay.cc        ReplayAllocatorTrace()
//   cu-allocator-trace.cc         the trace parser shared by the replay and CuMemoryPlan
//   cu-allocator-snapshot.cc      memory snapshots (segments and blocks) and the OOM snapshot
//   cu-allocator-history.cc       the recent events kept for snapshots (internal/...-history.h)
//   cu-allocator-cuda.cc, cu-allocator-vmm.cc, cu-allocator-async.cc   the CUDA upstreams
//                                 (cudaMalloc; VMM; cudaMallocAsync)
//   internal/cu-allocator-locks.h  the locks
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_H_

#include "base/error.h"
#include "base/types.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/internal/cu-allocator-history.h"
#include "cudamatrix/internal/cu-allocator-locks.h"
#include "cudamatrix/internal/cu-lock-order.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <iomanip>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cuctx {
namespace internal {

constexpr size_t kAlign = CuMemoryAllocator::kAlignment;
// cudaErrorMemoryAllocation: the status of every OutOfMemoryError thrown here, whatever the
// upstream.
constexpr int kOutOfMemoryStatus = 2;
// Larger requests could not be represented in a FreeEntry key, and no device has that much.
constexpr size_t kMaxRequestBytes = size_t{1} << 46;
// Empty per-thread pools are kept (their trees are costly to rebuild) unless there are more.
constexpr size_t kMaxIdlePools = 16;
// Per-thread caches: at most this many parked blocks, each at most kMaxCachedBlock bytes, in the
// small slots; larger blocks go to the large slots (--cuda-allocator-thread-cache-large-blocks).
constexpr size_t kMaxCachedBlocks = 16;
constexpr size_t kMaxCachedBlock = size_t{4} << 20;
// Blocks in use are found through this many independently locked hash maps.
constexpr size_t kUsedShards = 256;  // a power of two

inline size_t RoundUp(size_t n, size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

inline std::string Mib(size_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << bytes / 1048576.0 << " MiB";
  return os.str();
}

// A request is handed a whole block unless the rest is worth keeping: at least 1/8 of the request
// (capped at 1 MiB, so that big requests waste at most 1 MiB) and at least 256 bytes.
inline size_t SplitThreshold(size_t size) {
  return std::max(kAlign, RoundUp(std::min<size_t>(size / 8, size_t{1} << 20), kAlign));
}

struct Pool;
struct Region;

struct Block {
  char* begin = nullptr;
  size_t size = 0;
  size_t sub = 0;         // sub-region that contains `begin`
  Block* prev = nullptr;  // address-order neighbours in the same region
  Block* next = nullptr;
  Region* region = nullptr;
  Pool* pool = nullptr;  // the free pool holding it; nullptr while in use
  uint64 thread = 0;     // thread that freed it last (0: never freed)
  uint64 stamp = 0;      // value of the free counter when it was freed
  bool mapped = true;    // false: address space of an expandable region with no memory behind
                         // it (always free, in the unmapped pool; begin and size are granules)
};

struct Region {
  char* base = nullptr;
  size_t size = 0;
  size_t first_sub = 0;
  size_t num_subs = 0;
  int64 num_used = 0;  // blocks in use; 0 means the region may be given back
  Block* first = nullptr;
  bool expandable = false;  // reserved address space, mapped granule by granule (VMM)
  size_t mapped_bytes = 0;  // expandable: bytes mapped (the others: all of `size`)
};

// A free block as its pool's ordered set holds it: (sub-region, size) packed into one word, then
// the address, so that comparisons never touch the Block itself. lower_bound({Key(s, n), 0}) is
// the best fit in sub-region s. Sizes are multiples of 256, so 40 bits of size/256 cover 256 TiB
// (requests are capped well below that) and 24 bits cover 16M sub-regions.
struct FreeEntry {
  static constexpr int kSizeBits = 40;
  static uint64 Key(size_t sub, size_t size) {
    return (static_cast<uint64>(sub) << kSizeBits) | (static_cast<uint64>(size) / kAlign);
  }
  static size_t SubOf(uint64 key) { return static_cast<size_t>(key >> kSizeBits); }
  static size_t SizeOf(uint64 key) {
    return static_cast<size_t>(key & ((uint64{1} << kSizeBits) - 1)) * kAlign;
  }
  explicit FreeEntry(const Block* b)
      : key(Key(b->sub, b->size)),
        addr(reinterpret_cast<uintptr_t>(b->begin)),
        block(const_cast<Block*>(b)) {}
  FreeEntry(uint64 k, uintptr_t a) : key(k), addr(a), block(nullptr) {}
  bool operator<(const FreeEntry& o) const { return key != o.key ? key < o.key : addr < o.addr; }

  uint64 key;
  uintptr_t addr;
  Block* block;
};

using BlockSet = std::set<FreeEntry>;
using UsedMap = std::unordered_map<void*, Block*>;

// Recycled tree nodes: Malloc and Free move blocks between sets all the time, and reusing the
// nodes (C++17 node handles) keeps the heap allocator out of the hot paths.
template <typename Container>
class NodeCache {
 public:
  using Node = typename Container::node_type;
  void Put(Node node) {
    if (nodes_.size() < kMaxNodes) nodes_.push_back(std::move(node));
  }
  bool Empty() const { return nodes_.empty(); }
  Node Take() {
    Node node = std::move(nodes_.back());
    nodes_.pop_back();
    return node;
  }

 private:
  static constexpr size_t kMaxNodes = 4096;
  std::vector<Node> nodes_;
};

// A max segment tree over sub-regions: leaf i holds the largest free block of one pool starting
// in sub-region i, so "lowest sub-region with a block of >= n bytes" is one walk from the root.
class MaxTree {
 public:
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();

  void Reset(size_t num_leaves) {
    leaves_ = 1;
    while (leaves_ < num_leaves) leaves_ *= 2;
    nodes_.assign(2 * leaves_, 0);
  }
  size_t Max() const { return nodes_.empty() ? 0 : nodes_[1]; }
  size_t Leaf(size_t i) const { return nodes_[leaves_ + i]; }
  void Set(size_t i, size_t value) {
    size_t k = leaves_ + i;
    nodes_[k] = value;
    for (k /= 2; k >= 1; k /= 2) {
      const size_t m = std::max(nodes_[2 * k], nodes_[2 * k + 1]);
      if (nodes_[k] == m) break;  // ancestors depend on nodes_[k] only
      nodes_[k] = m;
    }
  }
  size_t FindFirst(size_t n) const {
    if (Max() < n) return kNone;
    size_t k = 1;
    while (k < leaves_) {
      k *= 2;
      if (nodes_[k] < n) ++k;
    }
    return k - leaves_;
  }

 private:
  size_t leaves_ = 0;
  std::vector<size_t> nodes_;
};

// Free blocks that may go to the same threads without a sync: those one thread freed (thread != 0)
// or, for the shared pool (thread == 0), those every thread may take.
struct Pool {
  Pool(uint64 owner, NodeCache<BlockSet>* node_cache) : thread(owner), nodes(node_cache) {}

  size_t LargestIn(size_t sub) const {
    auto it = blocks.lower_bound(FreeEntry(FreeEntry::Key(sub + 1, 0), 0));
    if (it == blocks.begin()) return 0;
    --it;
    return FreeEntry::SubOf(it->key) == sub ? FreeEntry::SizeOf(it->key) : 0;
  }
  void Insert(Block* b) {
    b->pool = this;
    if (nodes->Empty()) {
      blocks.emplace(b);
    } else {
      BlockSet::node_type node = nodes->Take();
      node.value() = FreeEntry(b);
      blocks.insert(std::move(node));
    }
    if (tree.Leaf(b->sub) < b->size) tree.Set(b->sub, b->size);
    bytes += b->size;
  }
  void Erase(Block* b) {
    nodes->Put(blocks.extract(FreeEntry(b)));
    b->pool = nullptr;
    bytes -= b->size;
    if (tree.Leaf(b->sub) == b->size) tree.Set(b->sub, LargestIn(b->sub));
  }
  // The block after `b` (one of this pool's) in best fit's order, if in b's sub-region.
  Block* NextInSubregion(const Block* b) const {
    auto it = blocks.find(FreeEntry(b));
    if (it == blocks.end() || ++it == blocks.end() || FreeEntry::SubOf(it->key) != b->sub)
      return nullptr;
    return it->block;
  }
  // Best fit in the lowest sub-region that can hold `size`, or nullptr.
  Block* BestFit(size_t size) const {
    const size_t sub = tree.FindFirst(size);
    if (sub == MaxTree::kNone) return nullptr;
    auto it = blocks.lower_bound(FreeEntry(FreeEntry::Key(sub, size), 0));
    CUCTX_ASSERT(it != blocks.end() && FreeEntry::SubOf(it->key) == sub);
    return it->block;
  }

  uint64 thread;
  NodeCache<BlockSet>* nodes;
  BlockSet blocks;
  MaxTree tree;
  size_t bytes = 0;
  uint64 safe_upto = 0;   // blocks stamped <= this are safe for every thread (sync or drained)
  uint64 moved_upto = 0;  // ... and those have been moved to the shared pool
};

// The better of two candidates: lower sub-region, then the smaller (tighter) block; `a` on ties.
inline Block* Better(Block* a, Block* b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  if (b->sub != a->sub) return b->sub < a->sub ? b : a;
  return b->size < a->size ? b : a;
}

// A block parked in a thread cache and the cache's epoch when it was parked.
struct Parked {
  Block* block;
  uint64 epoch;
};

// One list of parked blocks (the small or the large slots of a thread cache), oldest first.
struct ParkedList {
  std::vector<Parked> blocks;
  size_t bytes = 0;

  // Takes out the newest block that the core would hand out for `size` without splitting it.
  Block* Take(size_t size) {
    const size_t slack = SplitThreshold(size);
    for (size_t i = blocks.size(); i-- > 0;) {
      Block* b = blocks[i].block;
      if (b->size >= size && b->size - size < slack) {
        blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(i));
        bytes -= b->size;
        return b;
      }
    }
    return nullptr;
  }
  void Push(Block* b, uint64 epoch) {
    blocks.push_back({b, epoch});
    bytes += b->size;
  }
  // Moves the oldest block to `evicted`, marked safe when it was parked before `epoch`.
  void EvictOldest(uint64 epoch, std::vector<std::pair<Block*, bool>>* evicted) {
    const Parked& oldest = blocks.front();
    evicted->emplace_back(oldest.block, oldest.epoch < epoch);
    bytes -= oldest.block->size;
    blocks.erase(blocks.begin());
  }
  bool Holds(const char* begin) const {
    for (const Parked& p : blocks)
      if (p.block->begin == begin) return true;
    return false;
  }
};

// Blocks a thread freed and may take back without the allocator's mutex (see NOTE ON THE THREAD
// CACHE in the header). The core counts them as in use; only this cache knows they are free.
// Aligned so that two threads' caches never share a cache line.
struct alignas(64) ThreadCache {
  explicit ThreadCache(uint64 owner) : thread(owner) {}
  SpinLock mutex;  // its thread on every fast call (uncontended); the core to flush it
  const uint64 thread;
  ParkedList small;  // blocks of up to the small-slot limit; thread_cache_mb in all
  ParkedList large;  // larger blocks, at most thread_cache_large_blocks of them
  uint64 epoch = 0;  // bumped when its thread's stream drained or after a sync, so blocks
                     // parked in an earlier epoch are safe for every thread
  int64 hits = 0;    // Malloc calls served from here
  int64 parked = 0;  // Free calls that ended here
};

// One slice of the map from the address of a block in use to its Block.
struct alignas(64) UsedShard {
  SpinLock mutex;
  UsedMap map;
  NodeCache<UsedMap> nodes;
};

inline size_t ShardOf(const void* ptr) {
  // Fibonacci hashing of the 256-byte granule: neighbouring blocks land in different shards.
  const uint64 granule = reinterpret_cast<uintptr_t>(ptr) >> 8;
  return static_cast<size_t>((granule * 0x9E3779B97F4A7C15ull) >> 56) & (kUsedShards - 1);
}

class AllocatorImpl {
 public:
  AllocatorImpl(const CuAllocatorOptions& options, std::unique_ptr<CuAllocatorUpstream> upstream);
  ~AllocatorImpl();

  void* Malloc(size_t bytes);
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch);
  // must_own: a pointer this allocator did not hand out is an error (else: false, nothing done).
  bool Free(void* ptr, bool must_own);
  void SynchronizeGpu();
  void NoteThreadStreamSynchronized();
  size_t ReleaseCachedMemory();
  CuAllocatorStats GetStats();

  void AllowMultithreading();
  bool MultithreadingAllowed() const { return multi_threaded_.load(std::memory_order_acquire); }
  bool SetDebugStrideMode(bool mode) { return debug_stride_.exchange(mode); }
  const CuAllocatorOptions& Options() const { return options_; }
  CuAllocatorUpstream& Upstream() {
    return history_ != nullptr ? static_cast<RecordingUpstream&>(*upstream_).Inner() : *upstream_;
  }
  // Memory snapshots (cu-allocator-snapshot.cc; see CuMemoryAllocator::Snapshot).
  // note_event: add a "snapshot" event to the history first.
  void Snapshot(MemorySnapshot* out, bool note_event);
  void SetSnapshotLabel(int device, int64 pool_id, const std::string& kind, int64 pool_id_shared,
                        const std::string& description);

 private:
  // The allocator's mutex, taken by every entry point that touches the pools (see NOTE ON LOCKING
  // in cu-allocator.h) and only while multithreading is allowed: before that one thread owns the
  // allocator. Lock order: level 4 of the runtime's (internal/cu-lock-order.h); a cache or
  // used-map lock may be taken under it, never the reverse. Every method whose name ends in
  // `Locked` runs with it held (or, in the constructor and destructor, with the allocator owned
  // by one thread), and debug builds check that at their entry (AssertLocked()).
  //
  // A Guard also applies the deferred Free of single-thread mode (see NOTE ON THE DEFERRED FREE in
  // cu-allocator.h) before anything reads or changes the pools, unless told not to
  // (TakeDeferred(), which decides whether the deferred block can serve a Malloc directly).
  class Guard {
   public:
    explicit Guard(AllocatorImpl* a, bool apply_deferred = true) : a_(a), locking_(a->Locking()) {
      if (locking_) {
        LockOrder::Acquire(kAllocatorLock);
        a_->mutex_.lock();
      }
#ifndef NDEBUG
      a_->holder_.store(std::this_thread::get_id(), std::memory_order_relaxed);
#endif
      if (apply_deferred && a_->deferred_ != nullptr) a_->ApplyDeferredFreeLocked();
    }
    ~Guard() {
#ifndef NDEBUG
      a_->holder_.store(std::thread::id(), std::memory_order_relaxed);
#endif
      if (locking_) {
        a_->mutex_.unlock();
        LockOrder::Release(kAllocatorLock);
      }
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    AllocatorImpl* a_;
    bool locking_;
  };
  // Debug builds: fails unless the calling thread is inside a Guard (or owns the allocator alone:
  // constructor, destructor). Release builds: nothing.
  void AssertLocked() const {
#ifndef NDEBUG
    CUCTX_ASSERT(owned_alone_ ||
                 holder_.load(std::memory_order_relaxed) == std::this_thread::get_id());
#endif
  }

  SpinThenBlockMutex mutex_;
  std::atomic<bool> multi_threaded_{false};
  std::atomic<bool> debug_stride_{false};
  CuAllocatorOptions options_;
  std::unique_ptr<CuAllocatorUpstream> upstream_;
#ifndef NDEBUG
  std::atomic<std::thread::id> holder_{};  // the thread inside a Guard
  bool owned_alone_ = true;                // during construction and destruction
#endif

  bool Locking() const { return multi_threaded_.load(std::memory_order_acquire); }
  // The thread caches only pay off when threads would contend for the mutex; a single thread
  // gets the exact placement and statistics of the pools.
  bool FastPath() const { return fast_path_ && Locking(); }
  // Frees are deferred by one call only while one thread owns the allocator.
  bool DeferFrees() const { return defer_frees_ && !Locking(); }
  void ApplyDeferredFreeLocked();
  void* TakeDeferred(size_t size);
  bool JoinableLocked(bool mapped, size_t size, const Block* n, const Pool* pool) const;
  void* AllocateLocked(size_t size);
  void* AllocateDirectLocked(size_t size);
  bool FreeDirectLocked(void* ptr, uint64 thread, bool must_own);
  void FreeBlockLocked(Block* b, uint64 thread, bool safe = false);
  ThreadCache* CacheOf(uint64 thread);
  ThreadCache* FindCacheLocked(uint64 thread);
  void* CacheMalloc(size_t size, uint64 thread);
  bool CacheFree(Block* b, uint64 thread, std::vector<std::pair<Block*, bool>>* evicted);
  size_t FlushCachesLocked(const ThreadCache* only);
  void BumpCacheEpochsLocked();
  void InsertUsed(Block* b);
  Block* RemoveUsed(void* ptr);
  size_t NumUsed();
  Block* FindFreeLocked(size_t size, uint64 thread);
  Block* FindFreeAnyOwnerLocked(size_t size, uint64 thread);
  Block* GrowLocked(size_t size);
  Block* GrowRegionsLocked(size_t size);
  Block* ShareForGrowthLocked(size_t size);
  void ShareThreadPoolsLocked();
  void* UpstreamAllocateLocked(size_t bytes);
  Block* AddRegionLocked(char* base, size_t bytes, bool expandable);
  Block* SplitOffLocked(Block* b, size_t offset);
  // Expandable regions (cu-allocator-expandable.cc).
  struct MapPlan;
  Block* GrowExpandableLocked(size_t size);
  bool PlanMappingLocked(size_t size, size_t step, MapPlan* plan);
  Block* MapAndJoinLocked(const MapPlan& plan);
  Block* ReserveRegionLocked(size_t size);
  size_t UnmapFreeGranulesLocked();
  size_t UnreserveEmptyRegionsLocked();
  void ReleaseExpandableLocked(Region* r) noexcept;
  void TakeLocked(Block* b, size_t size);
  Block* CoalesceLocked(Block* b, Pool* pool);
  Block* JoinLocked(Block* left, Block* right);
  void SyncAndShareAllLocked();
  void NoteSynchronizedLocked(uint64 upto);
  bool MoveSafeToSharedLocked();
  size_t ReleaseFreeRegionsLocked();
  void RenumberLocked();
  Pool* FindThreadPoolLocked(uint64 thread);
  Pool* ThreadPoolLocked(uint64 thread);
  bool OtherPoolFitsLocked(size_t size, uint64 thread) const;
  size_t LargestFreeBlockLocked() const;
  Block* NewBlockLocked();
  void RecycleBlockLocked(Block* b);
  size_t SubOf(const Region* r, const char* addr) const {
    return r->first_sub + static_cast<size_t>(addr - r->base) / quantum_;
  }
  [[noreturn]] void ThrowOutOfMemoryLocked(size_t bytes, const char* why);
  void SnapshotLocked(MemorySnapshot* out);
  // Notes the oom event and writes --cuda-allocator-snapshot-on-oom; never throws.
  void NoteOutOfMemoryLocked(size_t bytes, size_t device_free) noexcept;
  [[noreturn]] void ThrowBadFreeLocked(void* ptr);
  void NoteInUseLocked(size_t bytes);
  void TraceAllocLocked(void* ptr, uint64 thread, char kind, size_t a, size_t b);
  void TraceFreeLocked(void* ptr, uint64 thread);
  void TraceEventLocked(char kind, uint64 thread);
  size_t TraceThreadLocked(uint64 thread);

  size_t quantum_;
  size_t granule_ = 0;  // the upstream's map granularity when regions are expandable, else 0
  std::vector<std::unique_ptr<Region>> regions_;  // in sub-region order
  size_t num_subs_ = 0;
  size_t tree_leaves_ = 1;
  NodeCache<BlockSet> block_nodes_;
  Pool shared_{0, &block_nodes_};
  Pool unmapped_{0, &block_nodes_};  // free address space of expandable regions; never served
  std::vector<std::unique_ptr<Pool>> thread_pools_;
  UsedShard used_[kUsedShards];
  const uint64 id_;               // tells this allocator's entries in the thread_local slot apart
  bool fast_path_ = false;        // thread caches allowed (caching, thread affinity, no trace)
  bool defer_frees_ = false;      // the deferred Free allowed (caching, thread affinity, no trace)
  Block* deferred_ = nullptr;     // the block of the last Free, not yet in a pool (single thread)
  uint64 deferred_thread_ = 0;    // ... and the thread that freed it
  size_t cache_capacity_ = 0;     // bytes of the small slots per thread cache
  size_t small_limit_ = 0;        // largest block for the small slots
  size_t large_slots_ = 0;        // large slots per thread cache
  size_t cache_max_request_ = 0;  // largest request the thread caches can serve
  std::vector<std::unique_ptr<ThreadCache>> caches_;  // grows only; guarded by mutex_
  std::unordered_map<void*, size_t> direct_;          // pass-through mode: live pointer -> bytes
  std::deque<Block> block_storage_;
  std::vector<Block*> spare_blocks_;
  uint64 free_counter_ = 0;     // stamps; incremented on every Free
  uint64 last_sync_stamp_ = 0;  // blocks stamped <= this are safe for every thread
  bool first_region_done_ = false;
  std::atomic<uint32> pitch_calls_{0};
  CuAllocatorStats stats_;
  int64 num_blocks_ = 0;

  std::unique_ptr<AllocatorHistory> history_;  // --cuda-allocator-history > 0; upstream_ then
                                               // is a RecordingUpstream around the given one
  int snapshot_device_ = 0;                    // labels of this allocator's snapshot segments
  int64 snapshot_pool_ = 0;
  int64 snapshot_pool_shared_ = 0;
  std::string snapshot_kind_;
  std::string snapshot_description_;  // the mark of its segments, blocks and events

  std::FILE* trace_ = nullptr;
  std::unordered_map<void*, uint64> trace_ids_;
  uint64 next_trace_id_ = 1;
  std::vector<uint64> trace_threads_;
};

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_H_
