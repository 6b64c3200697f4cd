// cudamatrix/cu-pinned.h: page-locked host buffers used to stage host<->device copies.
// SPDX-License-Identifier: Apache-2.0
//
// Three pieces:
//   PinnedAllocatorOptions  the knobs (--cuda-pinned-backend, --cuda-pinned-cache-limit-mb, ...);
//   PinnedHostAllocator     a caching allocator of page-locked host memory, one per device;
//   PinnedBuffer            an RAII owner of one block from such an allocator.
// cu-pinned.cc is the only file that calls cudaHostAlloc, cudaFreeHost, cudaHostRegister and
// cudaHostUnregister (`make lint` checks this).
//
// Typical use:
//   PinnedBuffer staging(bytes);              // page-locked if a GPU is selected
//   std::memcpy(staging.Data(), src, bytes);  // fill on the CPU
//   CopyHostToDevice(d_dst, staging.Data(), bytes);  // cu-copy.h: DMA straight from the buffer
//   // ~PinnedBuffer hands the block back; it is reused once the GPU is done with it.
//
// NOTE ON the no-GPU fallback: with no GPU selected (a CUDA=0 build, --use-gpu=no, or "optional"
// without a usable GPU) PinnedHostAllocator::Get() returns the allocator for device -1, which
// serves ordinary page-aligned host memory (aligned_alloc) through the same cache and statistics.
// So CPU code paths that use PinnedBuffer, PinnedMatrix or the copy helpers run unchanged; only
// PinnedAllocatorStats::page_locked and IsPageLocked() tell the difference. Memory allocated
// before SelectGpuId() comes from the fallback allocator and stays ordinary memory.
#ifndef CUCTX_CUDAMATRIX_CU_PINNED_H_
#define CUCTX_CUDAMATRIX_CU_PINNED_H_

#include "base/types.h"

#include <cstddef>
#include <memory>
#include <string>

namespace cuctx {

class OptionsItf;
struct MemorySnapshot;  // cu-memory-snapshot.h

// How new page-locked blocks are made.
enum class PinnedBackend {
  // cudaHostAlloc with the portable flag: the driver allocates and pins in one call.
  kHostAlloc,
  // aligned_alloc, pages pre-faulted from several threads, then cudaHostRegister (portable).
  // Pinning already-resident pages is cheaper than letting the driver fault them in one by one,
  // which matters for large blocks (the fault-in is the bulk of cudaHostAlloc's cost).
  kRegister,
};

// Options of the pinned host allocators. Register() them with a ParseOptions, parse, then apply
// with PinnedHostAllocator::SetDefaultOptions(opts) (all allocators, also those made later) or
// allocator.SetOptions(opts) (one allocator).
struct PinnedAllocatorOptions {
  // "alloc" (cudaHostAlloc) or "register" (malloc + parallel pre-fault + cudaHostRegister).
  std::string backend = "alloc";
  // Most free (cached) bytes an allocator keeps, in MiB; 0 releases every block when it is freed
  // (once the GPU is done with it). Blocks in use are never limited.
  int32 cache_limit_mb = 1024;
  // Threads that pre-fault the pages of a large new block with the "register" backend (>= 1).
  int32 prefault_threads = 4;

  // Registers --cuda-pinned-backend, --cuda-pinned-cache-limit-mb, --cuda-pinned-prefault-threads.
  void Register(OptionsItf* opts);
  // Throws cuctx::Error naming the option if a value is out of range or unknown.
  void Check() const;
  // The backend as an enum; throws like Check() on an unknown name.
  PinnedBackend Backend() const;
};

// A snapshot of one allocator's counters. Byte counts are block sizes (after size-class rounding)
// except bytes_requested.
struct PinnedAllocatorStats {
  int device_id = -1;         // the allocator's device, -1 for the no-GPU fallback
  bool page_locked = false;   // blocks are page-locked (false: ordinary memory, no GPU)
  int64 bytes_held = 0;       // in use + cached
  int64 bytes_in_use = 0;     // blocks handed out and not yet freed
  int64 bytes_requested = 0;  // what the owners of those blocks asked for
  int64 bytes_cached = 0;     // freed blocks kept for reuse
  int64 peak_bytes_in_use = 0;
  int64 peak_bytes_held = 0;
  int64 num_allocations = 0;  // Allocate() calls with bytes > 0
  int64 num_from_cache = 0;   // ... served by a cached block
  int64 num_new_blocks = 0;   // ... served by a new block from the backend
  int64 num_frees = 0;
  int64 num_released = 0;          // blocks given back to the system (cache limit, ReleaseCache)
  int64 num_not_ready = 0;         // cached blocks passed over because the GPU still used them
  int64 num_oom_retries = 0;       // backend failures answered by releasing the cache and retrying
  double seconds_allocating = 0;   // in cudaHostAlloc, or aligned_alloc + pre-fault + register
  double seconds_prefaulting = 0;  // the pre-fault part of seconds_allocating
  double seconds_releasing = 0;    // in cudaFreeHost, or cudaHostUnregister + free

  // One line, every field labelled, e.g. "device 0 page-locked held 8.0 MiB in use 4.0 MiB ...".
  std::string ToString() const;
};

// PinnedHostAllocator: a caching allocator of page-locked host memory for one device.
//
// Owns: every block it has made, in use or cached, until it releases them. The process-wide
// allocators (ForDevice/Get) are created on first use and intentionally never destroyed, so no
// CUDA call runs from a static destructor; after exit() has started, freed blocks are simply kept.
// An allocator constructed by the caller must outlive every block (and PinnedBuffer) it served;
// its destructor releases the cache (waiting for the GPU where needed) and warns about, and
// leaks, blocks still in use.
//
// Thread-safety: all methods are safe to call from any thread (one mutex per allocator; the slow
// backend calls run outside it). A block may be freed by a thread other than the one that
// allocated it.
//
// Device and stream: blocks are allocated "portable" (usable with every device); device work is
// done on the allocator's device, with the calling thread's current device restored afterwards.
// Free() records a CUDA event on the freeing thread's cudaStreamPerThread: the block is not handed
// out again until that event has completed, so copies that the freeing thread queued on its stream
// may still read or write the block after Free(). Work queued on other streams that uses the block
// must be ordered before that point by the caller (e.g. SynchronizeGpu() or a stream sync).
//
// NOTE ON size classes: requests are rounded up to a size class, and a cached block serves any
// request whose class is at most its own size and at least half of it. Classes are 4 KiB (one
// page) up to 4 KiB, powers of two from 4 KiB to 2 MiB, and multiples of 2 MiB above that. Powers
// of two keep the number of distinct small sizes low (11 classes up to 2 MiB), so blocks are found
// again after a free; the waste (< 2x) is at most 1 MiB there. Above 2 MiB, 2 MiB steps waste at
// most 2 MiB per block (< 50% at 2-4 MiB, < 6% from 32 MiB up) instead of up to half a huge block,
// and the 2 MiB granularity matches transparent huge pages, which the "register" backend asks for
// (madvise) so that pre-faulting and pinning touch 512x fewer pages. Blocks from 2 MiB up are
// 2 MiB-aligned; smaller ones are page-aligned.
//
// NOTE ON event-guarded reuse: a host block that a DMA is still reading (an H2D copy queued
// before Free) or writing (a D2H copy) must not be handed to a new owner, but waiting for the GPU
// in Allocate() would serialise the CPU with the copy engine. So Allocate() only asks
// (cudaEventQuery, never blocking) whether a cached block's event has completed: it takes the
// first completed block of a fitting size, oldest first, and if none has completed it makes a new
// block even when the cache is at its limit. The cache limit is enforced after each Free() by
// releasing completed cached blocks, largest first; blocks still in flight stay until a later
// Free() or ReleaseCache() finds them done. Without a GPU there are no events and every cached
// block is ready at once.
//
// NOTE ON out-of-memory: if the backend fails for lack of memory, the allocator releases its whole
// cache (waiting for in-flight blocks) and retries once; a second failure throws
// cuctx::OutOfMemoryError stating the request and what the allocator holds.
class PinnedHostAllocator {
 public:
  // The process-wide allocator for `device_id` (-1: the no-GPU fallback), created on first use
  // with the default options. Throws cuctx::Error for an id < -1, an id >= 0 in a build without
  // CUDA, or an id that is not a CUDA device.
  static PinnedHostAllocator& ForDevice(int device_id);
  // The allocator for the device this process selected (CuDevice), or the fallback if none.
  static PinnedHostAllocator& Get();

  // Checks `opts` (throws cuctx::Error on a bad value), makes them the defaults for allocators
  // created later and applies them to every existing process-wide allocator.
  static void SetDefaultOptions(const PinnedAllocatorOptions& opts);
  static PinnedAllocatorOptions DefaultOptions();

  // ReleaseCache() on every process-wide allocator; returns the bytes released. Call it at the end
  // of main (the allocators themselves are never destroyed) so that a leak checker such as
  // compute-sanitizer --leak-check sees no cached page-locked blocks, or to give memory back.
  static size_t ReleaseAllCaches();

  // The size class of a request (see NOTE ON size classes): 0 for 0; throws cuctx::Error if the
  // rounded size would not fit in size_t/2.
  static size_t RoundUpSize(size_t bytes);

  // A private allocator (tests, or a separate pool). device_id as for ForDevice. Checks opts.
  explicit PinnedHostAllocator(int device_id,
                               const PinnedAllocatorOptions& opts = PinnedAllocatorOptions());
  ~PinnedHostAllocator();
  PinnedHostAllocator(const PinnedHostAllocator&) = delete;
  PinnedHostAllocator& operator=(const PinnedHostAllocator&) = delete;

  // A block of at least `bytes` bytes (its size is RoundUpSize(bytes)), page-aligned, contents
  // undefined. Returns nullptr for 0 bytes. Never waits for the GPU except after an allocation
  // failure (see NOTE ON out-of-memory). Throws cuctx::OutOfMemoryError when memory runs out,
  // cuctx::Error for a request too large to round, cuctx::CudaError for other CUDA failures.
  void* Allocate(size_t bytes);

  // Returns a block from Allocate() to the cache (see NOTE ON event-guarded reuse); nullptr is a
  // no-op. Throws cuctx::Error if `ptr` is not a live block of this allocator (never allocated
  // here, or already freed), cuctx::CudaError if recording the event fails (the block is then
  // still owned by the caller).
  void Free(void* ptr);

  // Size of the live block at `ptr` (RoundUpSize of the request); throws like Free for others.
  size_t BlockSize(const void* ptr) const;

  // Releases every cached block to the system, first waiting for any whose GPU work is still in
  // flight. Blocks in use are untouched. Returns the number of bytes released.
  size_t ReleaseCache();

  // Replaces this allocator's options (checked first; throws cuctx::Error). A new backend applies
  // to new blocks; a lower cache limit is enforced at once on completed cached blocks.
  void SetOptions(const PinnedAllocatorOptions& opts);
  PinnedAllocatorOptions Options() const;

  PinnedAllocatorStats Stats() const;
  // Sets the peaks to the current values (for measuring one phase of a program).
  void ResetPeaks();

  // Adds this allocator's blocks to a memory snapshot (cu-memory-snapshot.h): one segment per
  // block (each is its own allocation), device `snapshot_device`, cuctx_kind "pinned_host",
  // segment_type "pinned", segment_pool_id (-1, 0); blocks in use are active_allocated with the
  // size asked for, cached ones inactive. PyTorch's viewer draws only the device it is asked for,
  // so pass an index no device uses (e.g. the number of devices) to keep them apart.
  void AppendSnapshot(int snapshot_device, MemorySnapshot* snapshot) const;

  int DeviceId() const;
  // True when blocks are page-locked (a device allocator), false for the no-GPU fallback.
  bool PageLocked() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// PinnedBuffer: owns one block of a PinnedHostAllocator and returns it in the destructor.
//
// Movable, not copyable. The allocator must outlive the buffer (always true for the process-wide
// allocators). The destructor never throws: a failure to return the block is logged as a warning.
// Thread-safety: as for any value; destroying it from another thread than the one that created it
// is fine (the event then goes on the destroying thread's stream, see PinnedHostAllocator).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  // `bytes` from PinnedHostAllocator::Get() (the selected device, or ordinary memory without a
  // GPU). Throws as PinnedHostAllocator::Allocate.
  explicit PinnedBuffer(size_t bytes);
  // `bytes` from `*allocator` (not null; throws cuctx::Error otherwise).
  PinnedBuffer(size_t bytes, PinnedHostAllocator* allocator);
  ~PinnedBuffer();

  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* Data() { return data_; }
  const void* Data() const { return data_; }
  // The bytes asked for; Capacity() is the block's size (>= Size()).
  size_t Size() const { return size_; }
  size_t Capacity() const { return capacity_; }
  bool Empty() const { return data_ == nullptr; }
  // True when the memory is page-locked (DMA-able without staging).
  bool PageLocked() const;
  // The allocator the block came from, or nullptr when empty.
  PinnedHostAllocator* Allocator() const { return allocator_; }

  // Returns the block now (throws as PinnedHostAllocator::Free) and leaves the buffer empty.
  void Reset();
  // Exchanges contents with *other.
  void Swap(PinnedBuffer* other) noexcept;

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  PinnedHostAllocator* allocator_ = nullptr;
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_PINNED_H_
