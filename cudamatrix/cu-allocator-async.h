// cudamatrix/cu-allocator-async.h: the stream-ordered allocator backend (cudaMallocAsync) and the
// choice between it and the caching allocator (--cuda-allocator=caching|async).
// SPDX-License-Identifier: Apache-2.0
//
// Two backends serve a device's memory, both behind the same CuMemoryAllocator (cu-allocator.h),
// so statistics, cuctx::OutOfMemoryError with its full message and --cuda-allocator-trace work the
// same way for both:
//   - "caching" (the default): CuMemoryAllocator's own pools, per-thread caches and cross-thread
//     rule over the upstream --cuda-allocator-upstream names (VMM expandable regions or
//     cudaMalloc regions). A cached Malloc/Free pair costs a few hundred nanoseconds of host
//     work and no driver call.
//   - "async": CuMemoryAllocator in pass-through mode (cache_memory = false) over
//     NewAsyncAllocatorUpstream(): every Malloc is a cudaMallocFromPoolAsync and every Free a
//     cudaFreeAsync, both on the calling thread's stream (cudaStreamPerThread), from a CUDA
//     memory pool created for the device, whose release threshold is UINT64_MAX so that freed
//     memory stays in the pool for the next request (the design of PyTorch's
//     backend:cudaMallocAsync). It is there to compare against, and for programs that share the
//     device with other stream-ordered code.
//
// NOTE ON THE DIFFERENCES: with "async"
//   - every call pays the driver (cudaMallocAsync/cudaFreeAsync take a driver lock; about a
//     microsecond each), and in pass-through mode CuMemoryAllocator holds its own mutex across
//     the upstream call once AllowMultithreading() is on, so threads take turns; there are no
//     per-thread caches;
//   - memory reuse across streams follows the pool's reuse policy (the CUDA defaults: reuse after
//     an event dependency, opportunistic reuse of frees that have completed, and reuse behind a
//     dependency the driver inserts), not CuMemoryAllocator's cross-thread rule: the driver
//     orders a block's reuse on another thread's stream after the cudaFreeAsync on the freeing
//     thread's stream, so as with the caching backend the work that used a block must have been
//     queued on the stream of the thread that frees it (or have finished);
//   - GetStats() sees only live allocations: held_bytes equals in_use_bytes, and the memory the
//     pool keeps after frees shows only in cudaMemGetInfo(). CuMemoryAllocator's
//     ReleaseCachedMemory() does nothing in pass-through mode; the pool gives its unused memory
//     back to the device when an allocation fails (see NewAsyncAllocatorUpstream) and when the
//     allocator is destroyed;
//   - --cuda-cache-memory, --cuda-allocator-upstream, --cuda-memory-proportion,
//     --cuda-region-quantum-mb and the --cuda-allocator-thread-* options have no effect.
#ifndef CUCTX_CUDAMATRIX_CU_ALLOCATOR_ASYNC_H_
#define CUCTX_CUDAMATRIX_CU_ALLOCATOR_ASYNC_H_

#include "cudamatrix/cu-allocator-options.h"
#include "cudamatrix/cu-allocator-upstream.h"
#include "cudamatrix/cu-allocator.h"

#include <functional>
#include <memory>
#include <string>

namespace cuctx {

// A CuAllocatorUpstream over a stream-ordered CUDA memory pool of the calling thread's current
// device (the "async" backend). Meant for CuMemoryAllocator in pass-through mode.
//
// Ownership: the upstream creates its own pool (cudaMemPoolCreate on the current device, release
// threshold UINT64_MAX), so the device's default pool and cudaDeviceSetMemPool are left alone;
// one upstream per device. Its destructor waits for the device and destroys the pool; it never
// throws. Blocks still allocated from the pool then are released by the driver once they are
// freed, or with the context.
//
// Thread safety: every method may be called from any thread at once (the pool handle never
// changes after construction; the driver serializes the pool). Each call runs on the calling
// thread's cudaStreamPerThread of the upstream's device: a thread whose current device is
// another one is switched to the upstream's device for the call and back.
//
// Methods:
//   Allocate(bytes): cudaMallocFromPoolAsync on the calling thread's stream; the memory is
//     usable at once by work queued on that stream (other streams must be ordered after it).
//     When the device is out of memory, it waits for the device (cudaDeviceSynchronize, so that
//     pending frees complete), trims the pool's unused memory (cudaMemPoolTrimTo) and tries once
//     more; if that fails too it clears the error (cudaGetLastError) and returns nullptr. Other
//     failures throw cuctx::CudaError.
//   Release(ptr, bytes): cudaFreeAsync on the calling thread's stream: the block returns to the
//     pool after the work this thread queued so far (stream-ordered, so it never waits); logs
//     failures, never throws.
//   SynchronizeAllStreams(): calls `synchronize_gpu` (or cudaDeviceSynchronize if it is empty).
//   MemoryInfo(): cudaMemGetInfo (memory kept in the pool counts as used).
//   Name(): "CUDA device <id> (cudaMallocAsync pool)". MapGranularity(): 0 (no expandable
//     regions).
//
// Fault injection (CUCTX_FAULT_INJECT, ScopedFaultInjection; cu-fault-injection.h): each
// cudaMallocFromPoolAsync attempt is a "device" call that fails as out of memory (so one failure
// exercises the sync-trim-retry path above, two in a row give nullptr and OutOfMemoryError),
// MemoryInfo a "device" call that throws, the sync before the retry and SynchronizeAllStreams
// "stream" calls that throw CudaError. Release is never failed.
//
// `synchronize_gpu` is called with the allocator's mutex held, so it must not call back into the
// allocator (see NewCudaAllocatorUpstream in cu-allocator-upstream.h). Throws cuctx::Error when
// the device does not support memory pools (cudaDevAttrMemoryPoolsSupported), cuctx::CudaError
// when the pool cannot be created, and cuctx::Error in a build without CUDA (CUDA=0).
std::unique_ptr<CuAllocatorUpstream> NewAsyncAllocatorUpstream(
    std::function<void()> synchronize_gpu = nullptr);

// The device allocator that `options.backend` asks for, on the calling thread's current device;
// the device runtime calls it when a device is selected. Checks `options` first (cuctx::Error
// naming the option).
//   - "async": a CuMemoryAllocator in pass-through mode (a copy of `options` with cache_memory =
//     false) over NewAsyncAllocatorUpstream(synchronize_gpu); *note is cleared.
//   - "caching": a CuMemoryAllocator with `options` over
//     NewDeviceAllocatorUpstream(options.upstream, synchronize_gpu, note), which sets *note to
//     why VMM could not be used when it was asked for and clears it otherwise.
// `note` may be null. `synchronize_gpu` is as for NewAsyncAllocatorUpstream. The allocator takes
// no memory yet; the caller decides about AllowMultithreading() and SetDebugStrideMode(). Throws
// cuctx::Error in a build without CUDA (CUDA=0), and what the upstream factories throw.
std::unique_ptr<CuMemoryAllocator> NewDeviceMemoryAllocator(const CuAllocatorOptions& options,
                                                            std::function<void()> synchronize_gpu,
                                                            std::string* note);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_ALLOCATOR_ASYNC_H_
