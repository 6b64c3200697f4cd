// cudamatrix/cu-allocator.cc: placement, statistics, tracing and trace replay of CuMemoryAllocator.
// SPDX-License-Identifier: Apache-2.0
//
// No CUDA here: the device is reached only through CuAllocatorUpstream, so everything in this file
// is exercised by the CPU tests with test::HostAllocatorUpstream.
#include "cudamatrix/cu-allocator.h"

#include "base/error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <fstream>
#include <iomanip>
#include <istream>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

namespace cuctx {
namespace {

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

size_t RoundUp(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

uint64 NextAllocatorId() {
  static std::atomic<uint64> next{1};
  return next.fetch_add(1);
}

std::string Mib(size_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << bytes / 1048576.0 << " MiB";
  return os.str();
}

// A request is handed a whole block unless the rest is worth keeping: at least 1/8 of the request
// (capped at 1 MiB, so that big requests waste at most 1 MiB) and at least 256 bytes.
size_t SplitThreshold(size_t size) {
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
};

struct Region {
  char* base = nullptr;
  size_t size = 0;
  size_t first_sub = 0;
  size_t num_subs = 0;
  int64 num_used = 0;  // blocks in use; 0 means the region may be given back
  Block* first = nullptr;
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
Block* Better(Block* a, Block* b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  if (b->sub != a->sub) return b->sub < a->sub ? b : a;
  return b->size < a->size ? b : a;
}

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

size_t ShardOf(const void* ptr) {
  // Fibonacci hashing of the 256-byte granule: neighbouring blocks land in different shards.
  const uint64 granule = reinterpret_cast<uintptr_t>(ptr) >> 8;
  return static_cast<size_t>((granule * 0x9E3779B97F4A7C15ull) >> 56) & (kUsedShards - 1);
}

}  // namespace

class CuMemoryAllocator::Impl {
 public:
  Impl(const CuAllocatorOptions& options, std::unique_ptr<CuAllocatorUpstream> upstream);
  ~Impl();

  void* Malloc(size_t bytes);
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch);
  void Free(void* ptr);
  void SynchronizeGpu();
  void NoteThreadStreamSynchronized();
  size_t ReleaseCachedMemory();
  CuAllocatorStats GetStats();

  SpinThenBlockMutex mutex_;
  std::atomic<bool> multi_threaded_{false};
  std::atomic<bool> debug_stride_{false};
  CuAllocatorOptions options_;
  std::unique_ptr<CuAllocatorUpstream> upstream_;

 private:
  bool Locking() const { return multi_threaded_.load(std::memory_order_acquire); }
  // The thread caches only pay off when threads would contend for the mutex; a single thread
  // gets the exact placement and statistics of the pools.
  bool FastPath() const { return fast_path_ && Locking(); }
  void* AllocateLocked(size_t size);
  void* AllocateDirect(size_t size);
  void FreeDirect(void* ptr, uint64 thread);
  void FreeBlock(Block* b, uint64 thread, bool safe = false);
  ThreadCache* CacheOf(uint64 thread);
  ThreadCache* FindCache(uint64 thread);
  void* CacheMalloc(size_t size, uint64 thread);
  bool CacheFree(Block* b, uint64 thread, std::vector<std::pair<Block*, bool>>* evicted);
  size_t FlushCaches(const ThreadCache* only);
  void BumpCacheEpochs();
  void InsertUsed(Block* b);
  Block* RemoveUsed(void* ptr);
  size_t NumUsed();
  Block* FindFree(size_t size, uint64 thread);
  Block* FindFreeAnyOwner(size_t size, uint64 thread);
  Block* Grow(size_t size);
  void* UpstreamAllocate(size_t bytes);
  Block* AddRegion(char* base, size_t bytes);
  void Take(Block* b, size_t size);
  Block* Coalesce(Block* b, Pool* pool);
  Block* Join(Block* left, Block* right);
  void SyncAndShareAll();
  void NoteSynchronized(uint64 upto);
  bool MoveSafeToShared();
  size_t ReleaseFreeRegionsLocked();
  void Renumber();
  Pool* FindThreadPool(uint64 thread);
  Pool* ThreadPool(uint64 thread);
  bool OtherPoolFits(size_t size, uint64 thread) const;
  size_t LargestFreeBlock() const;
  Block* NewBlock();
  void RecycleBlock(Block* b);
  size_t SubOf(const Region* r, const char* addr) const {
    return r->first_sub + static_cast<size_t>(addr - r->base) / quantum_;
  }
  [[noreturn]] void ThrowOutOfMemory(size_t bytes, const char* why);
  [[noreturn]] void ThrowBadFree(void* ptr);
  void NoteInUse(size_t bytes);
  void TraceAlloc(void* ptr, uint64 thread, char kind, size_t a, size_t b);
  void TraceFree(void* ptr, uint64 thread);
  void TraceEvent(char kind, uint64 thread);
  size_t TraceThread(uint64 thread);

  size_t quantum_;
  std::vector<std::unique_ptr<Region>> regions_;  // in sub-region order
  size_t num_subs_ = 0;
  size_t tree_leaves_ = 1;
  NodeCache<BlockSet> block_nodes_;
  Pool shared_{0, &block_nodes_};
  std::vector<std::unique_ptr<Pool>> thread_pools_;
  UsedShard used_[kUsedShards];
  const uint64 id_;               // tells this allocator's entries in the thread_local slot apart
  bool fast_path_ = false;        // thread caches allowed (caching, thread affinity, no trace)
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

  std::FILE* trace_ = nullptr;
  std::unordered_map<void*, uint64> trace_ids_;
  uint64 next_trace_id_ = 1;
  std::vector<uint64> trace_threads_;
};

CuMemoryAllocator::Impl::Impl(const CuAllocatorOptions& options,
                              std::unique_ptr<CuAllocatorUpstream> upstream)
    : options_(options),
      upstream_(std::move(upstream)),
      quantum_(options.RegionQuantumBytes()),
      id_(NextAllocatorId()) {
  options_.Check();
  CUCTX_CHECK(upstream_ != nullptr) << "CuMemoryAllocator needs an upstream";
  stats_.caching = options_.cache_memory;
  shared_.tree.Reset(tree_leaves_);
  if (!options_.trace_file.empty()) {
    trace_ = std::fopen(options_.trace_file.c_str(), "w");
    if (trace_ == nullptr)
      CUCTX_ERR << "--cuda-allocator-trace: cannot create '" << options_.trace_file << "'";
    std::fputs("# cuctx-allocator-trace 1\n", trace_);
  }
  cache_capacity_ = static_cast<size_t>(options_.thread_cache_mb) << 20;
  small_limit_ = std::min(kMaxCachedBlock, cache_capacity_);
  large_slots_ = static_cast<size_t>(options_.thread_cache_large_blocks);
  cache_max_request_ = large_slots_ > 0 ? kMaxRequestBytes : small_limit_;
  fast_path_ =
      options_.cache_memory && options_.thread_affinity && trace_ == nullptr && cache_capacity_ > 0;
}

CuMemoryAllocator::Impl::~Impl() {
  const size_t live = NumUsed() + direct_.size();
  if (live > 0)
    CUCTX_WARN << "CuMemoryAllocator destroyed with " << live << " block(s) ("
               << Mib(stats_.in_use_bytes) << ") still in use; releasing them anyway";
  for (auto& r : regions_) upstream_->Release(r->base, r->size);
  for (auto& d : direct_) upstream_->Release(d.first, d.second);
  if (trace_ != nullptr) std::fclose(trace_);
}

void* CuMemoryAllocator::Impl::Malloc(size_t bytes) {
  if (FastPath() && bytes != 0 && bytes <= cache_max_request_) {
    if (void* ptr = CacheMalloc(RoundUp(bytes, kAlign), upstream_->CurrentThreadId())) return ptr;
  }
  OptionalLock lock(&mutex_, Locking());
  if (bytes > kMaxRequestBytes) ThrowOutOfMemory(bytes, "the request is impossibly large");
  void* ptr = bytes == 0 ? nullptr : AllocateLocked(RoundUp(bytes, kAlign));
  if (trace_ != nullptr) TraceAlloc(ptr, upstream_->CurrentThreadId(), 'm', bytes, 0);
  return ptr;
}

void* CuMemoryAllocator::Impl::MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
  CUCTX_CHECK(pitch != nullptr);
  size_t p = RoundUp(std::min(row_bytes, kMaxRequestBytes + 1), kAlign);
  // Alternating extras also catch code that assumes two same-shaped matrices share a pitch.
  if (debug_stride_.load(std::memory_order_relaxed))
    p += kAlign * (1 + (pitch_calls_.fetch_add(1, std::memory_order_relaxed) & 1));
  *pitch = p;
  const bool too_large =
      row_bytes > kMaxRequestBytes || (p != 0 && num_rows > kMaxRequestBytes / p);
  const bool empty = row_bytes == 0 || num_rows == 0;
  if (FastPath() && !empty && !too_large && p * num_rows <= cache_max_request_) {
    // Pitched blocks are no different once allocated; the thread cache serves them too.
    if (void* ptr = CacheMalloc(p * num_rows, upstream_->CurrentThreadId())) return ptr;
  }
  OptionalLock lock(&mutex_, Locking());
  if (too_large) ThrowOutOfMemory(std::numeric_limits<size_t>::max(), "pitch * num_rows overflows");
  void* ptr = empty ? nullptr : AllocateLocked(p * num_rows);
  if (trace_ != nullptr) TraceAlloc(ptr, upstream_->CurrentThreadId(), 'p', row_bytes, num_rows);
  return ptr;
}

void CuMemoryAllocator::Impl::Free(void* ptr) {
  if (ptr == nullptr) return;
  const uint64 thread = upstream_->CurrentThreadId();
  if (!options_.cache_memory) {
    OptionalLock lock(&mutex_, Locking());
    FreeDirect(ptr, thread);
    return;
  }
  Block* b = RemoveUsed(ptr);
  if (b != nullptr && FastPath()) {
    std::vector<std::pair<Block*, bool>> evicted;
    if (CacheFree(b, thread, &evicted)) {
      if (!evicted.empty()) {
        OptionalLock lock(&mutex_, Locking());
        for (const auto& e : evicted) FreeBlock(e.first, thread, e.second);
      }
      return;
    }
  }
  OptionalLock lock(&mutex_, Locking());
  if (b == nullptr) ThrowBadFree(ptr);
  FreeBlock(b, thread);
  ++stats_.num_frees;
  if (trace_ != nullptr) TraceFree(ptr, thread);
}

void* CuMemoryAllocator::Impl::AllocateLocked(size_t size) {
  if (!options_.cache_memory) return AllocateDirect(size);
  const uint64 thread = upstream_->CurrentThreadId();
  Block* b = FindFree(size, thread);
  if (b == nullptr) b = Grow(size);
  Take(b, size);
  return b->begin;
}

void* CuMemoryAllocator::Impl::AllocateDirect(size_t size) {
  void* ptr = UpstreamAllocate(size);
  if (ptr == nullptr) ThrowOutOfMemory(size, "the upstream failed (pass-through mode)");
  direct_.emplace(ptr, size);
  ++stats_.num_regions;
  stats_.held_bytes += size;
  stats_.peak_held_bytes = std::max(stats_.peak_held_bytes, stats_.held_bytes);
  NoteInUse(size);
  return ptr;
}

void CuMemoryAllocator::Impl::NoteInUse(size_t bytes) {
  ++stats_.num_mallocs;
  stats_.in_use_bytes += bytes;
  stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
}

void CuMemoryAllocator::Impl::FreeDirect(void* ptr, uint64 thread) {
  auto it = direct_.find(ptr);
  if (it == direct_.end()) ThrowBadFree(ptr);
  const size_t size = it->second;
  direct_.erase(it);
  upstream_->Release(ptr, size);
  ++stats_.num_upstream_releases;
  --stats_.num_regions;
  stats_.held_bytes -= size;
  stats_.in_use_bytes -= size;
  ++stats_.num_frees;
  if (trace_ != nullptr) TraceFree(ptr, thread);
}

// Returns a block that is in no pool and not in the used map to the free pools: to the shared
// pool if it is `safe` for every thread, else as freed by `thread` now.
void CuMemoryAllocator::Impl::FreeBlock(Block* b, uint64 thread, bool safe) {
  --b->region->num_used;
  stats_.in_use_bytes -= b->size;
  Pool* pool = safe ? &shared_ : ThreadPool(thread);
  const uint64 stamp = ++free_counter_;
  b = Coalesce(b, pool);
  b->thread = thread;
  b->stamp = stamp;
  pool->Insert(b);
}

// ---- thread caches and the used map ---------------------------------------------------------

ThreadCache* CuMemoryAllocator::Impl::CacheOf(uint64 thread) {
  // One slot per thread for the allocator and simulated thread it used last; others take the mutex.
  struct Slot {
    uint64 allocator = 0;
    uint64 thread = 0;
    ThreadCache* cache = nullptr;
  };
  thread_local Slot slot;
  if (slot.allocator == id_ && slot.thread == thread) return slot.cache;
  OptionalLock lock(&mutex_, Locking());
  ThreadCache* cache = FindCache(thread);
  if (cache == nullptr) {
    caches_.push_back(std::make_unique<ThreadCache>(thread));
    cache = caches_.back().get();
  }
  slot = Slot{id_, thread, cache};
  return cache;
}

ThreadCache* CuMemoryAllocator::Impl::FindCache(uint64 thread) {
  for (auto& c : caches_)
    if (c->thread == thread) return c.get();
  return nullptr;
}

// Hands out the newest parked block that the core would hand out for `size` without splitting.
// A small block is never large enough for a request above the small-slot limit.
void* CuMemoryAllocator::Impl::CacheMalloc(size_t size, uint64 thread) {
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
bool CuMemoryAllocator::Impl::CacheFree(Block* b, uint64 thread,
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
size_t CuMemoryAllocator::Impl::FlushCaches(const ThreadCache* only) {
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
      FreeBlock(p.block, c->thread, p.epoch < epoch);
    }
    blocks.clear();
  }
  return moved;
}

void CuMemoryAllocator::Impl::InsertUsed(Block* b) {
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

Block* CuMemoryAllocator::Impl::RemoveUsed(void* ptr) {
  UsedShard& shard = used_[ShardOf(ptr)];
  OptionalLock lock(&shard.mutex, Locking());
  auto it = shard.map.find(ptr);
  if (it == shard.map.end()) return nullptr;
  Block* b = it->second;
  shard.nodes.Put(shard.map.extract(it));
  return b;
}

size_t CuMemoryAllocator::Impl::NumUsed() {
  size_t n = 0;
  for (UsedShard& shard : used_) {
    OptionalLock lock(&shard.mutex, Locking());
    n += shard.map.size();
  }
  return n;
}

Block* CuMemoryAllocator::Impl::FindFree(size_t size, uint64 thread) {
  if (!options_.thread_affinity) return FindFreeAnyOwner(size, thread);
  Pool* own = FindThreadPool(thread);
  Block* b = Better(own != nullptr ? own->BestFit(size) : nullptr, shared_.BestFit(size));
  if (b != nullptr) return b;
  // Blocks parked in this thread's cache are invisible to the pools until flushed.
  if (FastPath()) {
    const ThreadCache* mine = FindCache(thread);
    if (mine != nullptr && FlushCaches(mine) > 0) {
      own = FindThreadPool(thread);
      b = Better(own != nullptr ? own->BestFit(size) : nullptr, shared_.BestFit(size));
      if (b != nullptr) return b;
    }
  }
  // Blocks made safe by an outside SynchronizeGpu() or by their thread's drained stream are
  // shared before paying for a sync.
  if (MoveSafeToShared() && (b = shared_.BestFit(size)) != nullptr) return b;
  if (!OtherPoolFits(size, thread)) {
    // Perhaps other threads' caches hold what is needed; a new region is the last resort.
    if (!FastPath() || FlushCaches(nullptr) == 0) return nullptr;
    if ((b = shared_.BestFit(size)) != nullptr) return b;
    if (!OtherPoolFits(size, thread)) return nullptr;
  }
  SyncAndShareAll();
  b = shared_.BestFit(size);
  CUCTX_ASSERT(b != nullptr);  // joining only makes blocks larger
  return b;
}

// The Kaldi policy (--cuda-allocator-thread-affinity=false): the lowest best fit of all pools,
// with a sync when it was freed by another thread since the last sync.
Block* CuMemoryAllocator::Impl::FindFreeAnyOwner(size_t size, uint64 thread) {
  MoveSafeToShared();
  Block* best = shared_.BestFit(size);
  for (auto& p : thread_pools_) best = Better(best, p->BestFit(size));
  if (best == nullptr || best->pool == &shared_ || best->pool->thread == thread) return best;
  SyncAndShareAll();
  return shared_.BestFit(size);
}

bool CuMemoryAllocator::Impl::OtherPoolFits(size_t size, uint64 thread) const {
  for (const auto& p : thread_pools_)
    if (p->thread != thread && p->tree.Max() >= size) return true;
  return false;
}

void CuMemoryAllocator::Impl::SyncAndShareAll() {
  // With the mutex held no Free can reach the pools between reading the counter and the sync;
  // blocks parked meanwhile get the new cache epoch and stay unsafe.
  const uint64 upto = free_counter_;
  BumpCacheEpochs();
  upstream_->SynchronizeAllStreams();
  ++stats_.num_syncs;
  NoteSynchronized(upto);
  FlushCaches(nullptr);
  MoveSafeToShared();
}

// Every block parked before this call becomes safe for all threads once a sync (or the owning
// thread's stream wait) that starts after it has happened.
void CuMemoryAllocator::Impl::BumpCacheEpochs() {
  for (auto& c : caches_) {
    OptionalLock lock(&c->mutex, Locking());
    ++c->epoch;
  }
}

void CuMemoryAllocator::Impl::NoteSynchronized(uint64 upto) {
  last_sync_stamp_ = std::max(last_sync_stamp_, upto);
  for (auto& p : thread_pools_) p->safe_upto = std::max(p->safe_upto, upto);
}

bool CuMemoryAllocator::Impl::MoveSafeToShared() {
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
      shared_.Insert(Coalesce(b, &shared_));
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
// the next thread would then find the shared pool empty and have to sync.
Block* CuMemoryAllocator::Impl::Coalesce(Block* b, Pool* pool) {
  auto joinable = [&](const Block* n) {
    return n != nullptr && n->pool != nullptr &&
           (n->pool == pool || (n->pool == &shared_ && (pool == &shared_ || n->size <= b->size)));
  };
  for (;;) {
    Block* l = b->prev;
    if (joinable(l)) {
      l->pool->Erase(l);
      b = Join(l, b);
      continue;
    }
    Block* r = b->next;
    if (joinable(r)) {
      r->pool->Erase(r);
      b = Join(b, r);
      continue;
    }
    return b;
  }
}

Block* CuMemoryAllocator::Impl::Join(Block* left, Block* right) {
  left->size += right->size;
  left->next = right->next;
  if (left->next != nullptr) left->next->prev = left;
  left->stamp = std::max(left->stamp, right->stamp);
  RecycleBlock(right);
  return left;
}

void CuMemoryAllocator::Impl::Take(Block* b, size_t size) {
  Pool* pool = b->pool;
  pool->Erase(b);
  const size_t rest = b->size - size;
  if (rest >= SplitThreshold(size)) {
    Block* r = NewBlock();
    r->begin = b->begin + size;
    r->size = rest;
    r->region = b->region;
    r->sub = SubOf(r->region, r->begin);
    r->thread = b->thread;
    r->stamp = b->stamp;
    r->prev = b;
    r->next = b->next;
    if (r->next != nullptr) r->next->prev = r;
    b->next = r;
    b->size = size;
    pool->Insert(r);
  }
  ++b->region->num_used;
  InsertUsed(b);
  NoteInUse(b->size);
}

Block* CuMemoryAllocator::Impl::Grow(size_t size) {
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
  void* ptr = UpstreamAllocate(bytes);
  if (ptr == nullptr && bytes > need) ptr = UpstreamAllocate(bytes = need);
  if (ptr == nullptr) {
    // Recovery, cheapest first: join what other threads freed, then give back whole free regions.
    FlushCaches(nullptr);
    bool any_thread_blocks = false;
    for (auto& p : thread_pools_) any_thread_blocks |= !p->blocks.empty();
    if (any_thread_blocks) {
      SyncAndShareAll();
      if (Block* b = shared_.BestFit(size)) return b;
    }
    if (ReleaseFreeRegionsLocked() > 0) ptr = UpstreamAllocate(bytes = need);
    // A region of exactly the request may still fit where a whole quantum does not.
    if (ptr == nullptr && need > size) ptr = UpstreamAllocate(bytes = size);
    if (ptr == nullptr)
      ThrowOutOfMemory(size, "the upstream failed even after releasing the cache");
  }
  return AddRegion(static_cast<char*>(ptr), bytes);
}

void* CuMemoryAllocator::Impl::UpstreamAllocate(size_t bytes) {
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

Block* CuMemoryAllocator::Impl::AddRegion(char* base, size_t bytes) {
  auto region = std::make_unique<Region>();
  region->base = base;
  region->size = bytes;
  region->first_sub = num_subs_;
  region->num_subs = RoundUp(bytes, quantum_) / quantum_;
  num_subs_ += region->num_subs;
  Block* b = NewBlock();
  b->begin = base;
  b->size = bytes;
  b->region = region.get();
  b->sub = region->first_sub;
  region->first = b;
  regions_.push_back(std::move(region));
  stats_.held_bytes += bytes;
  stats_.peak_held_bytes = std::max(stats_.peak_held_bytes, stats_.held_bytes);
  if (num_subs_ > tree_leaves_) {
    while (tree_leaves_ < num_subs_) tree_leaves_ *= 2;
    Renumber();
  }
  shared_.Insert(b);
  return b;
}

size_t CuMemoryAllocator::Impl::ReleaseCachedMemory() {
  OptionalLock lock(&mutex_, Locking());
  if (!options_.cache_memory) return 0;
  FlushCaches(nullptr);
  return ReleaseFreeRegionsLocked();
}

size_t CuMemoryAllocator::Impl::ReleaseFreeRegionsLocked() {
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
      RecycleBlock(b);
      b = next;
    }
    upstream_->Release(r->base, r->size);
    ++stats_.num_upstream_releases;
    stats_.held_bytes -= r->size;
    released += r->size;
    it = regions_.erase(it);
  }
  if (released > 0) Renumber();
  return released;
}

// Gives the regions consecutive sub-region numbers again and rebuilds every pool's keys and tree.
void CuMemoryAllocator::Impl::Renumber() {
  std::vector<Block*> free_blocks;
  std::vector<Pool*> pools = {&shared_};
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

Pool* CuMemoryAllocator::Impl::FindThreadPool(uint64 thread) {
  for (auto& p : thread_pools_)
    if (p->thread == thread) return p.get();
  return nullptr;
}

Pool* CuMemoryAllocator::Impl::ThreadPool(uint64 thread) {
  if (Pool* p = FindThreadPool(thread)) return p;
  thread_pools_.push_back(std::make_unique<Pool>(thread, &block_nodes_));
  thread_pools_.back()->tree.Reset(tree_leaves_);
  return thread_pools_.back().get();
}

Block* CuMemoryAllocator::Impl::NewBlock() {
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

void CuMemoryAllocator::Impl::RecycleBlock(Block* b) {
  --num_blocks_;
  spare_blocks_.push_back(b);
}

size_t CuMemoryAllocator::Impl::LargestFreeBlock() const {
  size_t largest = shared_.tree.Max();
  for (const auto& p : thread_pools_) largest = std::max(largest, p->tree.Max());
  return largest;
}

void CuMemoryAllocator::Impl::SynchronizeGpu() {
  OptionalLock lock(&mutex_, Locking());
  const uint64 upto = free_counter_;
  BumpCacheEpochs();
  upstream_->SynchronizeAllStreams();
  ++stats_.num_external_syncs;
  NoteSynchronized(upto);
  if (trace_ != nullptr) TraceEvent('s', upstream_->CurrentThreadId());
}

void CuMemoryAllocator::Impl::NoteThreadStreamSynchronized() {
  OptionalLock lock(&mutex_, Locking());
  const uint64 thread = upstream_->CurrentThreadId();
  ++stats_.num_stream_sync_notes;
  // Every block in this thread's pool was freed by this thread before now, so the work that used
  // it was queued before the stream sync that the caller has just waited for.
  if (Pool* p = FindThreadPool(thread)) p->safe_upto = free_counter_;
  if (ThreadCache* c = FindCache(thread)) {
    OptionalLock cache_lock(&c->mutex, Locking());
    ++c->epoch;
  }
  if (trace_ != nullptr) TraceEvent('d', thread);
}

CuAllocatorStats CuMemoryAllocator::Impl::GetStats() {
  OptionalLock lock(&mutex_, Locking());
  CuAllocatorStats s = stats_;
  if (options_.cache_memory) {
    s.num_regions = static_cast<int64>(regions_.size());
    s.num_used_blocks = static_cast<int64>(NumUsed());
    for (auto& c : caches_) {
      OptionalLock cache_lock(&c->mutex, Locking());
      const size_t parked_bytes = c->small.bytes + c->large.bytes;
      s.in_use_bytes -= parked_bytes;
      s.cached_bytes += parked_bytes;
      s.cached_large_bytes += c->large.bytes;
      s.num_cached_blocks += static_cast<int64>(c->small.blocks.size() + c->large.blocks.size());
      s.num_cached_large_blocks += static_cast<int64>(c->large.blocks.size());
      s.num_cache_hits += c->hits;
      s.num_mallocs += c->hits;
      s.num_frees += c->parked;
    }
    s.num_free_blocks = num_blocks_ - s.num_used_blocks - s.num_cached_blocks;
    s.largest_free_block = LargestFreeBlock();
  } else {
    s.num_used_blocks = static_cast<int64>(direct_.size());
  }
  return s;
}

void CuMemoryAllocator::Impl::ThrowOutOfMemory(size_t bytes, const char* why) {
  ++stats_.num_oom_errors;
  size_t free_bytes = 0, total_bytes = 0;
  bool have_info = true;
  try {
    upstream_->MemoryInfo(&free_bytes, &total_bytes);
  } catch (const std::exception&) {
    have_info = false;
  }
  std::ostringstream msg;
  msg << "out of device memory: cannot allocate ";
  if (bytes == std::numeric_limits<size_t>::max())
    msg << "a pitched block";
  else
    msg << Mib(bytes) << " (" << bytes << " bytes)";
  msg << " (" << why << "). Allocator: held " << Mib(stats_.held_bytes) << " in "
      << (options_.cache_memory ? regions_.size() : direct_.size()) << " region(s), in use "
      << Mib(stats_.in_use_bytes) << " (peak " << Mib(stats_.peak_in_use_bytes)
      << "), largest free block " << Mib(LargestFreeBlock()) << "; " << upstream_->Name() << ": ";
  if (have_info)
    msg << Mib(free_bytes) << " free of " << Mib(total_bytes) << " total.";
  else
    msg << "free/total unknown.";
  msg << " Hint: other processes or libraries may hold the rest; lower --cuda-memory-proportion "
         "(or set it to 0 to grow on demand), or reduce the batch/minibatch size.";
  throw OutOfMemoryError(internal::WithOrigin(msg.str(), __func__, __FILE__, __LINE__),
                         kOutOfMemoryStatus);
}

void CuMemoryAllocator::Impl::ThrowBadFree(void* ptr) {
  const char* what = "was not allocated by this allocator";
  const char* p = static_cast<const char*>(ptr);
  bool parked = false;
  for (auto& c : caches_) {
    OptionalLock lock(&c->mutex, Locking());
    parked |= c->small.Holds(p) || c->large.Holds(p);
  }
  for (const auto& r : regions_) {
    if (p < r->base || p >= r->base + r->size) continue;
    what = "lies inside a region of this allocator but is not the start of a block in use";
    for (const Block* b = r->first; b != nullptr; b = b->next) {
      if (p < b->begin || p >= b->begin + b->size) continue;
      if (b->pool != nullptr || parked)
        what = "is in a free block: it was already freed (double free) or never allocated";
      else
        what = "points inside a block in use, not at its start";
    }
  }
  CUCTX_ERR << "CuMemoryAllocator::Free(" << ptr << "): the pointer " << what
            << (options_.cache_memory ? ""
                                      : " (pass-through mode: unknown pointer or double free)");
}

size_t CuMemoryAllocator::Impl::TraceThread(uint64 thread) {
  const size_t t =
      std::find(trace_threads_.begin(), trace_threads_.end(), thread) - trace_threads_.begin();
  if (t == trace_threads_.size()) trace_threads_.push_back(thread);
  return t;
}

void CuMemoryAllocator::Impl::TraceAlloc(void* ptr, uint64 thread, char kind, size_t a, size_t b) {
  uint64 id = 0;
  if (ptr != nullptr) {
    id = next_trace_id_++;
    trace_ids_[ptr] = id;
  }
  const size_t t = TraceThread(thread);
  if (kind == 'm')
    std::fprintf(trace_, "m %zu %zu %" PRIu64 "\n", t, a, id);
  else
    std::fprintf(trace_, "p %zu %zu %zu %" PRIu64 "\n", t, a, b, id);
}

void CuMemoryAllocator::Impl::TraceFree(void* ptr, uint64 thread) {
  auto it = trace_ids_.find(ptr);
  CUCTX_ASSERT(it != trace_ids_.end());  // tracing starts with the allocator
  std::fprintf(trace_, "f %zu %" PRIu64 "\n", TraceThread(thread), it->second);
  trace_ids_.erase(it);
}

void CuMemoryAllocator::Impl::TraceEvent(char kind, uint64 thread) {
  std::fprintf(trace_, "%c %zu\n", kind, TraceThread(thread));
}

// ---- CuAllocatorStats ------------------------------------------------------------------------

double CuAllocatorStats::Fragmentation() const {
  return peak_in_use_bytes == 0 ? 0.0 : static_cast<double>(held_bytes) / peak_in_use_bytes;
}

double CuAllocatorStats::SyncsPer1000Frees() const {
  return num_frees == 0 ? 0.0 : 1000.0 * num_syncs / num_frees;
}

std::string CuAllocatorStats::ToJson() const {
  std::ostringstream os;
  os << "{\"caching\":" << (caching ? "true" : "false") << ",\"held_bytes\":" << held_bytes
     << ",\"peak_held_bytes\":" << peak_held_bytes << ",\"in_use_bytes\":" << in_use_bytes
     << ",\"peak_in_use_bytes\":" << peak_in_use_bytes
     << ",\"largest_free_block\":" << largest_free_block << ",\"cached_bytes\":" << cached_bytes
     << ",\"cached_large_bytes\":" << cached_large_bytes
     << ",\"num_used_blocks\":" << num_used_blocks << ",\"num_free_blocks\":" << num_free_blocks
     << ",\"num_cached_blocks\":" << num_cached_blocks
     << ",\"num_cached_large_blocks\":" << num_cached_large_blocks
     << ",\"num_regions\":" << num_regions << ",\"num_mallocs\":" << num_mallocs
     << ",\"num_frees\":" << num_frees << ",\"num_cache_hits\":" << num_cache_hits
     << ",\"num_syncs\":" << num_syncs << ",\"num_external_syncs\":" << num_external_syncs
     << ",\"num_stream_sync_notes\":" << num_stream_sync_notes
     << ",\"num_upstream_allocs\":" << num_upstream_allocs
     << ",\"num_upstream_failures\":" << num_upstream_failures
     << ",\"num_upstream_releases\":" << num_upstream_releases
     << ",\"num_oom_errors\":" << num_oom_errors << std::setprecision(9)
     << ",\"upstream_alloc_seconds\":" << upstream_alloc_seconds
     << ",\"fragmentation\":" << Fragmentation()
     << ",\"syncs_per_1000_frees\":" << SyncsPer1000Frees() << "}";
  return os.str();
}

std::string CuAllocatorStats::ToString() const {
  std::ostringstream os;
  os << "Device memory allocator (" << (caching ? "caching" : "pass-through") << "): held "
     << Mib(held_bytes) << " in " << num_regions << " region(s) (peak " << Mib(peak_held_bytes)
     << "); in use " << Mib(in_use_bytes) << " (peak " << Mib(peak_in_use_bytes) << ") in "
     << num_used_blocks << " block(s); " << num_free_blocks << " free block(s), largest "
     << Mib(largest_free_block) << "; " << num_cached_blocks << " block(s) (" << Mib(cached_bytes)
     << ") in thread caches (" << num_cached_large_blocks << " large, " << Mib(cached_large_bytes)
     << "); fragmentation (held / peak in use) " << std::fixed << std::setprecision(3)
     << Fragmentation() << "\n"
     << "  " << num_mallocs << " mallocs (" << num_cache_hits << " from thread caches), "
     << num_frees << " frees, " << num_syncs << " cross-thread syncs (" << std::setprecision(2)
     << SyncsPer1000Frees() << " per 1000 frees), " << num_external_syncs << " other syncs, "
     << num_stream_sync_notes << " drained-stream notes; upstream: " << num_upstream_allocs
     << " allocations in " << std::setprecision(4) << upstream_alloc_seconds << " s, "
     << num_upstream_failures << " failed, " << num_upstream_releases << " releases; "
     << num_oom_errors << " out-of-memory errors";
  return os.str();
}

// ---- CuMemoryAllocator -----------------------------------------------------------------------

CuMemoryAllocator::CuMemoryAllocator(const CuAllocatorOptions& options,
                                     std::unique_ptr<CuAllocatorUpstream> upstream)
    : impl_(std::make_unique<Impl>(options, std::move(upstream))) {}

CuMemoryAllocator::~CuMemoryAllocator() = default;

void* CuMemoryAllocator::Malloc(size_t bytes) { return impl_->Malloc(bytes); }

void* CuMemoryAllocator::MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
  return impl_->MallocPitch(row_bytes, num_rows, pitch);
}

void CuMemoryAllocator::Free(void* ptr) { impl_->Free(ptr); }

void CuMemoryAllocator::AllowMultithreading() {
  impl_->multi_threaded_.store(true, std::memory_order_release);
}

bool CuMemoryAllocator::MultithreadingAllowed() const {
  return impl_->multi_threaded_.load(std::memory_order_acquire);
}

bool CuMemoryAllocator::SetDebugStrideMode(bool mode) {
  return impl_->debug_stride_.exchange(mode);
}

void CuMemoryAllocator::SynchronizeGpu() { impl_->SynchronizeGpu(); }

void CuMemoryAllocator::NoteThreadStreamSynchronized() { impl_->NoteThreadStreamSynchronized(); }

size_t CuMemoryAllocator::ReleaseCachedMemory() { return impl_->ReleaseCachedMemory(); }

size_t CuMemoryAllocator::GetAllocatedMemory() const { return impl_->GetStats().in_use_bytes; }

size_t CuMemoryAllocator::GetMaxAllocatedMemory() const {
  return impl_->GetStats().peak_in_use_bytes;
}

CuAllocatorStats CuMemoryAllocator::GetStats() const { return impl_->GetStats(); }

void CuMemoryAllocator::PrintMemoryUsage() const { CUCTX_LOG << GetStats().ToString(); }

const CuAllocatorOptions& CuMemoryAllocator::Options() const { return impl_->options_; }

CuAllocatorUpstream& CuMemoryAllocator::Upstream() { return *impl_->upstream_; }

// ---- trace replay ----------------------------------------------------------------------------

namespace {

struct TraceOp {
  char kind = 0;  // 'm', 'p', 'f', 's' or 'd'
  uint32 thread = 0;
  size_t a = 0, b = 0;  // bytes, or row_bytes and num_rows
  uint64 id = 0;
};

std::vector<TraceOp> ParseTrace(std::istream& in, std::vector<uint32>* threads) {
  std::vector<TraceOp> ops;
  std::unordered_map<uint64, bool> live;
  std::string line;
  for (int64 line_no = 1; std::getline(in, line); ++line_no) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    std::istringstream fields(line);
    TraceOp op;
    fields >> op.kind;
    if (op.kind == 'm')
      fields >> op.thread >> op.a >> op.id;
    else if (op.kind == 'p')
      fields >> op.thread >> op.a >> op.b >> op.id;
    else if (op.kind == 'f')
      fields >> op.thread >> op.id;
    else if (op.kind == 's' || op.kind == 'd')
      fields >> op.thread;
    const char* problem = nullptr;
    if (std::string("mpfsd").find(op.kind) == std::string::npos) {
      problem = "unknown record (expected m, p, f, s or d)";
    } else if (fields.fail() || !(fields >> std::ws).eof()) {
      problem = "wrong number or type of fields";
    } else if (op.kind == 'f') {
      if (op.id == 0 || live.erase(op.id) == 0) problem = "free of a pointer id that is not live";
    } else if (op.kind == 'm' || op.kind == 'p') {
      const bool empty = op.a == 0 || (op.kind == 'p' && op.b == 0);
      if (empty != (op.id == 0))
        problem = "pointer id must be 0 exactly for zero-byte requests";
      else if (!empty && !live.emplace(op.id, true).second)
        problem = "pointer id allocated twice";
    }
    if (problem != nullptr)
      CUCTX_ERR << "allocator trace, line " << line_no << ": " << problem << ": '" << line << "'";
    if (std::find(threads->begin(), threads->end(), op.thread) == threads->end())
      threads->push_back(op.thread);
    ops.push_back(op);
  }
  CUCTX_CHECK(!in.bad()) << "error reading the allocator trace";
  return ops;
}

}  // namespace

AllocatorReplayResult ReplayAllocatorTrace(std::istream& trace, bool use_threads,
                                           CuMemoryAllocator* allocator) {
  CUCTX_CHECK(allocator != nullptr);
  std::vector<uint32> threads;
  const std::vector<TraceOp> ops = ParseTrace(trace, &threads);
  AllocatorReplayResult result;
  result.num_threads = static_cast<int32>(threads.size());
  for (const TraceOp& op : ops) {
    if (op.kind == 'f') ++result.num_frees;
    if (op.kind == 'm' || op.kind == 'p') ++result.num_mallocs;
  }

  std::unordered_map<uint64, void*> ptrs;  // only touched by the thread whose turn it is
  auto run = [&](const TraceOp& op) {
    if (op.kind == 'm') {
      void* p = allocator->Malloc(op.a);
      if (op.id != 0) ptrs[op.id] = p;
    } else if (op.kind == 'p') {
      size_t pitch = 0;
      void* p = allocator->MallocPitch(op.a, op.b, &pitch);
      if (op.id != 0) ptrs[op.id] = p;
    } else if (op.kind == 'f') {
      auto it = ptrs.find(op.id);
      allocator->Free(it->second);
      ptrs.erase(it);
    } else if (op.kind == 's') {
      allocator->SynchronizeGpu();
    } else {
      allocator->NoteThreadStreamSynchronized();
    }
  };

  std::exception_ptr error;
  if (!use_threads || threads.size() <= 1) {
    try {
      for (const TraceOp& op : ops) run(op);
    } catch (...) {
      error = std::current_exception();
    }
  } else {
    allocator->AllowMultithreading();
    // Turn-taking: op i runs once `next` == i, on the worker of its trace thread, which is woken
    // through its own condition variable, so each hand-over wakes exactly one thread.
    const size_t num_workers = threads.size();
    std::vector<size_t> worker_of(ops.size());
    std::vector<std::vector<size_t>> mine(num_workers);
    for (size_t i = 0; i < ops.size(); ++i) {
      worker_of[i] = std::find(threads.begin(), threads.end(), ops[i].thread) - threads.begin();
      mine[worker_of[i]].push_back(i);
    }
    std::mutex mutex;
    std::vector<std::condition_variable> turn(num_workers);
    size_t next = 0;
    bool failed = false;
    auto worker = [&](size_t w) {
      for (size_t i : mine[w]) {
        {
          std::unique_lock<std::mutex> lock(mutex);
          turn[w].wait(lock, [&] { return next == i || failed; });
          if (failed) return;
        }
        try {
          run(ops[i]);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!error) error = std::current_exception();
          failed = true;
          for (auto& cv : turn) cv.notify_all();
          return;
        }
        std::lock_guard<std::mutex> lock(mutex);
        next = i + 1;
        if (next < ops.size()) turn[worker_of[next]].notify_one();
      }
    };
    std::vector<std::thread> pool;
    for (size_t w = 0; w < num_workers; ++w) pool.emplace_back(worker, w);
    for (std::thread& t : pool) t.join();
  }
  result.num_freed_at_end = static_cast<int64>(ptrs.size());
  for (auto& entry : ptrs) {
    try {
      allocator->Free(entry.second);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return result;
}

AllocatorReplayResult ReplayAllocatorTraceFile(const std::string& path, bool use_threads,
                                               CuMemoryAllocator* allocator) {
  std::ifstream in(path);
  if (!in) CUCTX_ERR << "cannot open allocator trace '" << path << "'";
  return ReplayAllocatorTrace(in, use_threads, allocator);
}

}  // namespace cuctx
