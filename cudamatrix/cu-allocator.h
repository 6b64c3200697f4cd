// cudamatrix/cu-allocator.h: the caching sub-region device allocator behind CuDevice::Malloc/Free.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_ALLOCATOR_H_
#define CUCTX_CUDAMATRIX_CU_ALLOCATOR_H_

#include "base/types.h"
#include "cudamatrix/cu-allocator-options.h"
#include "cudamatrix/cu-allocator-upstream.h"

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

namespace cuctx {

struct MemorySnapshot;  // cudamatrix/cu-memory-snapshot.h

namespace internal {
class AllocatorImpl;  // cudamatrix/internal/cu-allocator.h
}  // namespace internal

// A snapshot of CuMemoryAllocator's counters (GetStats()). Byte counts are block sizes, i.e.
// requests rounded up to 256 bytes (and occasionally a little more when a block was not split).
struct CuAllocatorStats {
  bool caching = true;    // false in pass-through mode (--cuda-cache-memory=false)
  size_t held_bytes = 0;  // obtained from the upstream and not yet released
  size_t peak_held_bytes = 0;
  size_t in_use_bytes = 0;        // handed out and not yet freed (GetAllocatedMemory())
  size_t peak_in_use_bytes = 0;   // GetMaxAllocatedMemory(); see NOTE ON THE THREAD CACHE
  size_t largest_free_block = 0;  // the largest request the free pools can serve
  size_t cached_bytes = 0;        // freed blocks parked in per-thread caches (all slots)
  size_t cached_large_bytes = 0;  // ... of which in the large slots
  int64 num_used_blocks = 0;
  int64 num_free_blocks = 0;          // in the free pools
  int64 num_cached_blocks = 0;        // parked in per-thread caches (all slots)
  int64 num_cached_large_blocks = 0;  // ... of which in the large slots
  int64 num_regions = 0;              // regions held (pass-through: live allocations)
  int64 num_mallocs = 0;              // Malloc/MallocPitch calls that returned memory
  int64 num_frees = 0;                // Free calls with a non-null pointer
  int64 num_cache_hits = 0;           // Malloc calls served by the calling thread's cache
  int64 num_syncs = 0;                // SynchronizeGpu calls forced by the cross-thread rule
  int64 num_external_syncs = 0;       // CuMemoryAllocator::SynchronizeGpu() calls
  int64 num_stream_sync_notes = 0;    // NoteThreadStreamSynchronized() calls
  int64 num_upstream_allocs = 0;      // successful upstream Allocate() calls
  int64 num_upstream_failures = 0;    // upstream Allocate() calls that returned nullptr
  int64 num_upstream_releases = 0;
  // Expandable regions (an upstream with MapGranularity() > 0); all 0 otherwise.
  size_t map_granularity = 0;           // the upstream's granule: mappings are multiples of it
  size_t reserved_bytes = 0;            // address space reserved; held_bytes is what is mapped
  int64 num_upstream_maps = 0;          // successful Map() calls
  int64 num_upstream_map_failures = 0;  // Map() calls that found the device full
  int64 num_upstream_unmaps = 0;        // ranges given to Unmap()
  size_t unmapped_bytes_total = 0;      // bytes unmapped since construction
  int64 num_oom_errors = 0;             // OutOfMemoryError thrown
  double upstream_alloc_seconds = 0;    // wall time spent in upstream Allocate() and Map()

  // held / peak in use (0 before the first allocation); 1.0 is perfect.
  double Fragmentation() const;
  // num_syncs per 1000 num_frees (0 when nothing was freed).
  double SyncsPer1000Frees() const;
  // One JSON object with every field above plus "fragmentation" and "syncs_per_1000_frees".
  std::string ToJson() const;
  // A few human-readable lines (MiB), as PrintMemoryUsage() prints them.
  std::string ToString() const;
};

// CuMemoryAllocator: caches device memory so that Malloc/Free cost a few hundred nanoseconds of
// host work instead of a cudaMalloc/cudaFree (tens of microseconds, and cudaFree synchronizes the
// device).
//
// Ownership: it owns its upstream (CuAllocatorUpstream) and every region obtained from it; the
// destructor returns all regions, including blocks still in use (with a warning). CuDevice creates
// one per device with the upstream --cuda-allocator-upstream names; tests create their own over
// test::HostAllocatorUpstream.
//
// Layout: memory comes from the upstream in large regions. Each region is cut into sub-regions of
// --cuda-region-quantum-mb, numbered in creation order across regions. A region is a list of
// address-ordered blocks, each either in use or free. Free blocks sit in ordered sets keyed by
// (sub-region of the block's start, size, address), so that a request is served best-fit from the
// lowest-numbered sub-region that has a large enough block; a max-tree over the sub-regions finds
// that sub-region in O(log #sub-regions). Keeping allocations low makes the late regions fall
// wholly free, so they can be given back. A block much larger than the request is split (the rest
// stays free); a freed block is joined with free neighbours on both sides. All sizes and pitches
// are multiples of kAlignment = 256 bytes, so every pointer is 256-byte aligned.
//
// Growth (better than Kaldi's "half of the GPU again"), two ways, by the upstream:
//   - expandable regions (an upstream with MapGranularity() > 0: the CUDA VMM upstream, the
//     default on the H100): the region is address space the size of the device's memory, reserved
//     up front and backed with memory granule by granule as the pool grows
//     (cu-allocator-expandable.cc). A growth step maps whole quanta (--cuda-region-quantum-mb,
//     rounded to the granule) right next to a free block the caller may use, so the joined block
//     serves the request and the pool stays one contiguous space: placement, splitting and joining
//     work across former growth steps, and sizes that grow from one iteration to the next keep
//     reusing the same memory. ReleaseCachedMemory() and out-of-memory recovery unmap every whole
//     free granule. memory_proportion > 0 maps that share of the free memory at the first growth.
//     Measured on the H100 (cu-allocator-bench --only=growth,replay, quantum 2/8/32 MiB): the
//     first 1 MiB Malloc takes one quantum (Kaldi's default takes 40 GiB); held/peak 1.017 on
//     sizes growing 5% per iteration (cudaMalloc regions: 3.6); the 4-thread synthetic nnet3
//     replay held/peak 1.016 with 6.3 syncs per 1000 frees at 32 MiB, 1.003 / 9.0 at 8 MiB,
//     1.008 / 11.6 at 2 MiB: larger steps leave slack that other threads take without a sync,
//     hence the 32 MiB default. A 2 MiB granule costs about 36 us to map (measured on the H100),
//     like a cudaMalloc of 2 MiB.
//   - cudaMalloc regions (--cuda-allocator-upstream=cuda, or no VMM): the first region is
//     memory_proportion of the device's free memory (at least the request); every later region is
//     the request rounded up to the quantum; memory_proportion = 0 grows on demand only.
//
// Out of memory is recoverable: when the upstream fails, the allocator synchronizes (so blocks that
// other threads freed can be joined), gives back regions that are wholly free (with expandable
// regions: unmaps every free granule, so the memory can be mapped again where the request fits in
// one piece), retries, and only then throws cuctx::OutOfMemoryError naming the request, held, in use, largest free block and the
// device's free/total memory. Its state is consistent afterwards: the caller may free memory and
// continue.
//
// Thread safety: without AllowMultithreading() only one thread may use the allocator, and no lock
// is taken. After it, every public method may be called from any thread: one mutex guards the
// pools and statistics (held for well under a microsecond; see NOTE ON LOCKING), and the
// per-thread caches below let most Malloc/Free calls of a busy thread avoid it. Calls to the
// upstream are made with the mutex held.
//
// NOTE ON STREAMS AND THE CROSS-THREAD RULE: all device work of a thread goes to its
// cudaStreamPerThread (the build uses --default-stream per-thread). A block that thread A frees may
// still be read or written by kernels A has queued; if A reuses it, its own stream orders the new
// work after the old. If thread B gets it, nothing orders B's stream after A's, so before handing
// such a block to B the allocator calls SynchronizeGpu() (the upstream's SynchronizeAllStreams()):
// a no-op kernel on the legacy default stream, which waits for all earlier work of every per-thread
// stream and which all later work waits for. To know when this is needed every freed block is
// stamped with the freeing thread's id and a counter (incremented on every Free); a block needs the
// sync iff it was last freed by another thread after the last sync. The sync does not block the
// host, but it serializes the streams of all threads for a moment, so it should be rare.
//
// NOTE ON THREAD AFFINITY: Kaldi's allocator takes the best fit from the lowest sub-region whoever
// freed it, so with several threads about half of all blocks come from another thread and need a
// sync (its 4-thread test synchronized on 3,628 of 7,949 frees). Here the free blocks are kept in
// pools: one per thread for the blocks that thread freed, and one shared pool for blocks that are
// safe for everyone (never used, or freed before the last sync). A request first looks for the
// best fit in the calling thread's pool and in the shared pool (taking the lower sub-region of the
// two, so the low-address preference holds for everything that needs no sync); only if neither can
// serve it does it take memory another thread freed, and then it syncs once and moves every free
// block into the shared pool, where neighbours freed by different threads are finally joined. Only
// after that, if nothing fits, is a new region taken. On Free a block is joined with free
// neighbours from its own pool and the shared pool (the result belongs to the freeing thread); a
// neighbour in another thread's pool is left alone until the next sync, since the joined block
// would need a sync for both threads; and a big shared neighbour (such as the untouched rest of a
// region) is not taken into the thread's pool either, or the next thread would find the shared pool
// empty. In steady state each thread cycles through its own blocks and needs a sync only when its
// working set grows past what it has freed while other threads hold the rest. Memory flows back
// without a sync when a thread reports that its stream has drained (NoteThreadStreamSynchronized(),
// e.g. after the device-to-host copy of a minibatch's output): its freed blocks are then safe for
// everyone and move to the shared pool as soon as another thread needs them. On the synthetic
// 4-thread nnet3-like workload of the tests (cu-allocator-test.cc) this gives 0 syncs per 1000
// frees with the default first region and about 2-9 with memory_proportion = 0 (grow on demand, so
// little slack; about 20 without the drained-stream notes). The option
// --cuda-allocator-thread-affinity=false picks the lowest best fit across all pools instead, as
// Kaldi does; it is kept to measure the difference (about 140 syncs per 1000 frees there).
//
// NOTE ON THE THREAD CACHE: one mutex caps the whole process at one Malloc/Free pair per ~0.15 us,
// and under contention it does much worse: on the H100 host 8 threads doing 16 MiB pairs through
// it managed 0.42 M pairs/s in all, against 2.8 M for one thread. So once multithreading is
// allowed, each thread parks the blocks it frees in a cache of its own, and a Malloc of the same
// rounded size (within the split threshold: a block the pools would hand out whole) takes one
// back; neither call touches the mutex, only the thread's own cache lock and one of 256 locks of
// the map from address to block. The cache has two kinds of slots. The small slots take blocks of
// up to 4 MiB: at most 16 blocks, --cuda-allocator-thread-cache-mb in all. The large slots
// (--cuda-allocator-thread-cache-large-blocks, default 2) take the larger blocks, of any size and
// not counted in that limit, so that a thread cycling through a few big matrices does not queue
// on the mutex either; a bound on the number rather than the bytes keeps one big block from
// pushing out all the small ones, and two slots serve two sizes used in turn (an activation and
// its gradient). When its slots are full, a Free pushes the oldest block of that kind out to the
// pools (taking the mutex). Parked blocks count as in use for the pools, so the cross-thread rule
// holds trivially: only their thread gets them back. Parked blocks of both kinds go back to their
// threads' pools whenever the pools cannot serve a request (this thread's first, everyone's
// before a sync or a new region), on out of memory before any region is given back, and in
// ReleaseCachedMemory(); a block parked before its thread's last NoteThreadStreamSynchronized()
// or SynchronizeGpu() goes to the shared pool instead. Costs: parked blocks are not joined with
// their neighbours until then, a region that holds one is given back only after such a flush,
// and with several threads the peak in use (GetMaxAllocatedMemory, fragmentation) counts
// parked blocks as in use, since the threads do not stop to agree on one total: it may overstate
// the true peak by what the caches held at that moment (at most thread_cache_mb plus the large
// slots, per thread). GetStats() subtracts parked blocks from in_use_bytes and reports them as
// cached_bytes and num_cached_blocks (cached_large_bytes and num_cached_large_blocks are the part
// in the large slots); these are exact whenever no Malloc or Free is in flight. Without
// AllowMultithreading() the cache is not used: a single thread gets the exact placement and
// statistics of the pools. Tracing, --cuda-allocator-thread-affinity=false and
// --cuda-allocator-thread-cache-mb=0 turn the whole cache off.
//
// NOTE ON THE DEFERRED FREE: a thread alone (before AllowMultithreading()) pays the pools'
// bookkeeping on every Malloc/Free pair: the Free joins the block with its free neighbours and the
// next Malloc of that shape finds it again by best fit and splits it off, four updates of ordered
// sets in all, most of what a CuMatrix made and destroyed cost (run probe-resize in
// BENCHMARKS.md). So the allocator applies each Free one call late: the freed block waits outside
// the pools, and when the next call is a Malloc that the pools, given that Free, would serve with
// this very block, the block goes straight back. That is the case when no block that best fit
// would prefer exists and either the block joins no neighbour and the request takes it whole, or
// the block is exactly the request and joins only the free rest of the block it was cut from
// (its right neighbour in this thread's pool), which the cut would leave as it is. The second
// case is the common one once a loop over one shape follows other shapes, as in Kaldi's speed
// tests. The counters (statistics, the free stamps of NOTE ON STREAMS, also that rest's) move
// as the two calls would have moved them. Any other call, GetStats() and AllowMultithreading()
// included, applies the Free first. Placement and statistics are therefore exactly those of the
// pools; a test drives one allocator with the deferral and one without (the history turns it
// off, as do tracing and --cuda-allocator-thread-affinity=false) through a random sequence with
// syncs and compares every pointer and counter. A MallocPitch+Free pair in the order of Kaldi's
// TestCuMatrixResize took 113-247 ns before and 43-98 ns after (tools/probes/allocator-pair.cc,
// the builds alternating; BENCHMARKS.md, run alloc-pair-2).
//
// NOTE ON LOCKING: the mutex is held for 0.1-0.3 us per call, but a std::mutex waiter that finds it
// taken soon sleeps in the kernel (futex), and the wake-up costs microseconds on both sides, far
// more than the wait itself: in the measurement above a median 16 MiB pair took 14 us (p99 80 us).
// So the mutex is taken in three phases: try_lock() while polling a "held" hint between the
// CPU's pause instructions, for about as long as a queue of several critical sections (128
// pauses, some 5 us on current x86 cores); then a few rounds of std::this_thread::yield(), which
// helps when the holder was preempted on oversubscribed cores; then a plain blocking lock(). A
// pure spin lock would be a little cheaper, but the mutex is also held across upstream calls
// (cudaMalloc of a new region, cudaFree in ReleaseCachedMemory(), the sync kernel's launch),
// which take from microseconds to milliseconds; spinning or yielding through those would burn a
// core per waiting thread, so long waits still sleep. The memory ordering is std::mutex's (lock
// acquires, unlock releases); the hint is a relaxed atomic that decides nothing but when to try.
// The per-thread cache locks and the used-map locks are held only for a few list or hash-map
// operations, never across an upstream call, and are almost never contended (a cache lock only
// by the core flushing or counting it), so they are test-and-test-and-set spin locks: an
// exchange with acquire ordering to lock, a store with release ordering to unlock (one atomic
// read-modify-write less per lock than std::mutex, four per cached pair), spinning on a plain
// load with pause and then yielding. Lock order: the mutex before a cache or used-map lock; no
// other lock is taken while a cache or used-map lock is held. In the runtime's lock order
// (internal/cu-lock-order.h) the mutex is level 4: it may be taken with the device registry's
// mutex held, and it is held while the upstream's Release() and SynchronizeAllStreams() pass the
// device's capture gate (level 5), which is the one wait across layers; nothing that holds a gate
// takes an allocator's mutex. The private methods that must run with the mutex held end in
// `Locked`, and debug builds assert it (internal/cu-allocator.h).
//
// Tracing: with --cuda-allocator-trace=FILE every successful Malloc/MallocPitch and every Free is
// written to FILE as one text line, in the order they took the mutex:
//   # cuctx-allocator-trace 1
//   m <thread> <bytes> <id>                  Malloc(bytes) returned pointer number <id>
//   p <thread> <row_bytes> <num_rows> <id>   MallocPitch(row_bytes, num_rows, &pitch)
//   f <thread> <id>                          Free of pointer number <id>
//   s <thread>                               SynchronizeGpu()
//   d <thread>                               NoteThreadStreamSynchronized()
// <thread> numbers threads 0, 1, ... in order of appearance; <id> numbers pointers 1, 2, ... in
// allocation order (0 is the null pointer of a zero-byte request, whose Free is not recorded).
// ReplayAllocatorTrace() drives an allocator with such a file.
class CuMemoryAllocator {
 public:
  static constexpr size_t kAlignment = 256;

  // Takes ownership of `upstream`. Checks `options` (cuctx::Error on bad values) and opens the
  // trace file if one is named (cuctx::Error if it cannot be created). Takes no memory yet.
  CuMemoryAllocator(const CuAllocatorOptions& options,
                    std::unique_ptr<CuAllocatorUpstream> upstream);
  // Returns every region to the upstream; warns if blocks are still in use. Never throws.
  ~CuMemoryAllocator();
  CuMemoryAllocator(const CuMemoryAllocator&) = delete;
  CuMemoryAllocator& operator=(const CuMemoryAllocator&) = delete;

  // Returns `bytes` bytes of device memory, 256-byte aligned, uninitialized. Malloc(0) returns
  // nullptr (and takes no memory); Free(nullptr) is a no-op. Throws cuctx::OutOfMemoryError when
  // the memory cannot be had even after the recovery steps above, and lets errors of the upstream
  // through. May call SynchronizeGpu() (see the notes above); never blocks on device work.
  void* Malloc(size_t bytes);

  // Memory for `num_rows` rows of `row_bytes` bytes. Sets *pitch to the distance between rows in
  // bytes: row_bytes rounded up to a multiple of 256; in debug stride mode 256 or 512 bytes more
  // (alternating), so that code assuming pitch == row_bytes, or equal pitches for equal shapes,
  // fails visibly. Returns nullptr (with *pitch set) when row_bytes or num_rows is 0. Throws as
  // Malloc() does; also OutOfMemoryError when pitch * num_rows overflows.
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch);

  // Returns memory from Malloc/MallocPitch. The caller's device work on it, queued on the caller's
  // stream, may still be running (see NOTE ON STREAMS). Throws cuctx::Error naming the pointer if
  // it was not allocated here or was already freed; the allocator is unchanged then.
  void Free(void* ptr);
  // Free() for a pointer that may belong to someone else: returns false, changing nothing, when
  // this allocator has no block in use at `ptr` (true for nullptr).
  bool TryFree(void* ptr);

  // Turns on the locks and the per-thread caches. Call before a second thread uses the allocator;
  // it cannot be turned off.
  void AllowMultithreading();
  bool MultithreadingAllowed() const;

  // Turns debug stride mode (see MallocPitch) on or off; returns the previous mode.
  bool SetDebugStrideMode(bool mode);

  // Calls the upstream's SynchronizeAllStreams() and notes it, so that every block freed before
  // this call can go to any thread without another sync. CuDevice may route SynchronizeGpu() here.
  void SynchronizeGpu();

  // Tells the allocator that all work the calling thread queued so far has finished, because the
  // caller has just waited for its stream (cudaStreamSynchronize(cudaStreamPerThread), or a
  // synchronous device-to-host copy). The blocks this thread freed before that wait may then go to
  // other threads without a sync (see NOTE ON THREAD AFFINITY). Call it right after the wait, with
  // no Free by this thread in between. Cheap (takes the mutex once); optional.
  void NoteThreadStreamSynchronized();

  // Gives back every region that holds no block in use; returns the bytes released. Regions
  // freed this way may still be in use by queued device work only if the upstream's Release()
  // waits for it (cudaFree does).
  size_t ReleaseCachedMemory();

  // Bytes in use (allocated and not freed), and the peak of that since construction (with the
  // thread cache in use, the peak includes parked blocks; see NOTE ON THE THREAD CACHE).
  size_t GetAllocatedMemory() const;
  size_t GetMaxAllocatedMemory() const;

  CuAllocatorStats GetStats() const;
  std::string StatsJson() const { return GetStats().ToJson(); }
  // Logs GetStats().ToString() with CUCTX_LOG.
  void PrintMemoryUsage() const;

  // Memory snapshots in PyTorch's format (cu-memory-snapshot.h, which maps cuctx's concepts onto
  // its fields): the regions as segments with their blocks, and, with --cuda-allocator-history=N,
  // the last N events as the device trace (a "snapshot" event is added first). Takes the mutex
  // once; costs a walk over all blocks. WriteSnapshot throws cuctx::Error if the file cannot be
  // written. --cuda-allocator-snapshot-on-oom=FILE writes one whenever OutOfMemoryError is
  // thrown, with an "oom" event carrying the upstream's free memory.
  MemorySnapshot Snapshot();
  void WriteSnapshot(const std::string& path);
  // The same segments and events appended to `out` (its trace of this allocator's device), with
  // no "snapshot" event: for a snapshot of several allocators (cu-device-snapshot.h), whose
  // writer calls out->OrderTraces() once all are in.
  void AppendSnapshot(MemorySnapshot* out);
  // Labels this allocator's segments: the device index (default 0), segment_pool_id
  // (pool_id, pool_id_shared) and cuctx_kind (empty: by region type); a non-empty `description`
  // marks its segments, blocks and events with the frame MarkFrame(description). CuDevice labels
  // its allocators with their device; graph pools (internal/cu-capture-pool.h) label theirs.
  void SetSnapshotLabel(int device, int64 pool_id, const std::string& kind,
                        int64 pool_id_shared = 0, const std::string& description = "");

  const CuAllocatorOptions& Options() const;
  CuAllocatorUpstream& Upstream();

 private:
  std::unique_ptr<internal::AllocatorImpl> impl_;
};

// What ReplayAllocatorTrace() did.
struct AllocatorReplayResult {
  int64 num_mallocs = 0;       // 'm' and 'p' lines, zero-byte ones included
  int64 num_frees = 0;         // 'f' lines
  int32 num_threads = 0;       // distinct <thread> numbers in the trace
  int64 num_freed_at_end = 0;  // pointers still live at the end of the trace, freed by the replay
};

// Replays a trace written by --cuda-allocator-trace (format in the class comment above) on
// `allocator`. With use_threads = false every operation runs on the calling thread. With
// use_threads = true each trace thread gets its own std::thread, and the threads take turns so
// that the operations run in exactly the recorded order; the allocator then sees the same
// cross-thread pattern as the recorded program (this calls allocator->AllowMultithreading()).
// Pointers still live at the end are freed. Throws cuctx::Error naming the line for a malformed
// trace (unknown record, free of a pointer that is not live, ...), and passes on errors of the
// allocator (OutOfMemoryError) after freeing what it allocated. `at_end`, if given, runs on the
// calling thread after the last record and before the live pointers are freed (e.g. to take a
// memory snapshot of the trace's final state); what it throws is passed on after the frees.
AllocatorReplayResult ReplayAllocatorTrace(std::istream& trace, bool use_threads,
                                           CuMemoryAllocator* allocator,
                                           const std::function<void()>& at_end = nullptr);
// The same, reading the file `path` (cuctx::Error if it cannot be opened).
AllocatorReplayResult ReplayAllocatorTraceFile(const std::string& path, bool use_threads,
                                               CuMemoryAllocator* allocator,
                                               const std::function<void()>& at_end = nullptr);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_ALLOCATOR_H_
