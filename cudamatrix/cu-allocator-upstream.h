// cudamatrix/cu-allocator-upstream.h: where CuMemoryAllocator gets its large regions from.
// SPDX-License-Identifier: Apache-2.0
//
// CuMemoryAllocator (cu-allocator.h) does all of its placement on its own; the only things it needs
// from the device are in CuAllocatorUpstream below: get and release a large region, order all
// threads' streams (SynchronizeGpu), report free/total memory and name the calling thread; and,
// where the device can, reserve address space and map memory into it chunk by chunk (virtual
// memory management, "expandable" regions). Three implementations exist:
//   - NewVmmAllocatorUpstream(): the CUDA driver's VMM API (cuMemAddressReserve, cuMemCreate,
//     cuMemMap, cuMemSetAccess, cuMemUnmap, cuMemRelease) on the current device, reached through
//     cudaGetDriverEntryPoint so that nothing links against libcuda (cu-allocator-vmm.cc); its
//     Allocate/Release are cudaMalloc/cudaFree (pass-through mode);
//   - NewCudaAllocatorUpstream(): cudaMalloc / cudaFree / cudaMemGetInfo on the current device
//     (cu-allocator-cuda.cc); no expandable regions;
//   - test::HostAllocatorUpstream (cutool/host-allocator-upstream.h): aligned host
//     memory with a capacity limit and call counters, and optionally a VMM-like mode over mmap, so
//     that the allocator's bookkeeping, its growth, its out-of-memory path and its thread rule
//     are tested on machines without a GPU.
// tools/lint.sh keeps raw device allocation in few places: cudaMalloc/cudaFree only in
// cu-allocator-cuda.cc and cu-readback.cc (a per-thread reduction workspace that must not come
// from the caching allocator; it says why), cuMem* only in
// cu-allocator-vmm.cc (whose Allocate/Release pass through to cu-allocator-cuda.cc), and
// cudaMallocAsync/cudaFreeAsync only in cu-allocator-async.cc (--cuda-allocator=async).
#ifndef CUCTX_CUDAMATRIX_CU_ALLOCATOR_UPSTREAM_H_
#define CUCTX_CUDAMATRIX_CU_ALLOCATOR_UPSTREAM_H_

#include "base/types.h"

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {

// The source of large memory regions for CuMemoryAllocator.
//
// Implementations must be safe to call from several threads at once; the allocator calls them
// with its own mutex held when multithreading is allowed, and without it otherwise. Allocate()
// and Release() see only sizes that are multiples of 256 bytes.
class CuAllocatorUpstream {
 public:
  virtual ~CuAllocatorUpstream() = default;

  // Returns `bytes` (> 0) bytes aligned to at least 256 bytes, or nullptr when the memory is
  // exhausted. Any other failure throws (cuctx::CudaError for CUDA). Timed and counted by the
  // allocator.
  virtual void* Allocate(size_t bytes) = 0;

  // Gives back a region from Allocate(), with the size it was allocated with. Must not return
  // memory that queued device work may still use (cudaFree waits for the device). Never throws:
  // failures are logged.
  virtual void Release(void* ptr, size_t bytes) noexcept = 0;

  // SynchronizeGpu(): orders everything that any thread has queued so far before anything that
  // any thread queues afterwards. May return before that work finishes (the CUDA version launches
  // a no-op kernel on the legacy default stream, which every per-thread stream waits for).
  virtual void SynchronizeAllStreams() = 0;

  // The device's free and total memory in bytes (cudaMemGetInfo). Used to size the first region
  // and in out-of-memory messages.
  virtual void MemoryInfo(size_t* free_bytes, size_t* total_bytes) = 0;

  // A non-zero key for the calling thread, unique in the process. The default gives each thread a
  // number on first use; tests override it to simulate several threads from one.
  virtual uint64 CurrentThreadId() {
    static std::atomic<uint64> next_id{1};
    thread_local const uint64 id = next_id.fetch_add(1, std::memory_order_relaxed);
    return id;
  }

  // What this upstream is, for messages ("CUDA device 0", "host memory").
  virtual std::string Name() const = 0;

  // Lets kernels on device `peer` access this upstream's memory, present and future. Called by
  // CuDevice after enabling peer access between the two devices (which covers cudaMalloc memory
  // by itself, hence the default no-op); upstreams that map memory themselves (VMM) or own a pool
  // (cudaMallocAsync) add the peer to their access lists. Thread-safe with the other calls.
  virtual void GrantPeerAccess(int peer) { (void)peer; }

  // ---- Expandable regions (virtual memory management) ----------------------------------------
  // An upstream that can reserve address space and map memory into it returns its mapping
  // granularity in bytes (a multiple of 256; 2 MiB for CUDA on the H100), else 0 (the default);
  // the allocator then uses expandable regions (see "Growth" in cu-allocator.h) and calls the
  // methods below, which the others never see. Every address and size passed to them is a
  // multiple of MapGranularity().

  virtual size_t MapGranularity() const { return 0; }

  // Reserves `bytes` of address space with no memory behind it, aligned to the granularity.
  // Returns nullptr when no address space is left; other failures throw.
  virtual void* Reserve(size_t bytes);

  // Maps fresh memory at [addr, addr + bytes), inside a range from Reserve() where nothing is
  // mapped, one granule at a time so that each granule can later be unmapped on its own, and
  // makes it readable and writable by the owning device. Returns false, with nothing mapped, when
  // the device's memory is exhausted; other failures throw.
  virtual bool Map(void* addr, size_t bytes);

  // Unmaps each of `ranges` (wholly mapped) and gives its memory back to the device. First waits
  // for all device work queued so far by any thread, since kernels may still use the memory (the
  // driver's unmap does not wait the way cudaFree does). Never throws: failures are logged.
  virtual void Unmap(const std::vector<std::pair<void*, size_t>>& ranges) noexcept;

  // Gives back address space from Reserve(), with the size it was reserved with; nothing may be
  // mapped in it any more. Never throws.
  virtual void Unreserve(void* base, size_t bytes) noexcept;
};

// A CuAllocatorUpstream over the CUDA runtime of the calling thread's current device.
// `synchronize_gpu` implements SynchronizeAllStreams(): CuDevice passes the launcher of its no-op
// kernel on the legacy default stream. It is called with the allocator's mutex held, so it must not
// call back into the allocator (in particular not CuMemoryAllocator::SynchronizeGpu()). If it is
// empty, cudaDeviceSynchronize() is used (correct, but blocks the host). In a build without CUDA
// (CUDA=0) this throws cuctx::Error.
std::unique_ptr<CuAllocatorUpstream> NewCudaAllocatorUpstream(
    std::function<void()> synchronize_gpu = nullptr);

// A CuAllocatorUpstream over the CUDA driver's virtual memory management API for the calling
// thread's current device (expandable regions), with `synchronize_gpu` as above. Returns nullptr
// and sets *why_not (if given) to the reason when VMM cannot be used: a build without CUDA, no
// driver, a driver without the entry points, or a device without
// CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED. The caller then falls back to
// NewCudaAllocatorUpstream().
std::unique_ptr<CuAllocatorUpstream> NewVmmAllocatorUpstream(
    std::function<void()> synchronize_gpu = nullptr, std::string* why_not = nullptr);

// The upstream that --cuda-allocator-upstream=`kind` ("vmm" or "cuda") asks for, on the calling
// thread's current device: VMM when asked for and available, else cudaMalloc regions. When VMM was
// asked for but cannot be used, *fallback_reason (if given) says why; otherwise it is cleared.
// Throws cuctx::Error for any other kind, and in a build without CUDA.
std::unique_ptr<CuAllocatorUpstream> NewDeviceAllocatorUpstream(
    const std::string& kind, std::function<void()> synchronize_gpu,
    std::string* fallback_reason = nullptr);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_ALLOCATOR_UPSTREAM_H_
