// cudamatrix/internal/cu-foreign-capture.h: memory for captures that cuctx did not start. When a
// thread's stream is being captured by a cudaStreamBeginCapture outside cuctx (the user's own, or
// another framework's around a library built on cuctx), CuDevice::Malloc/MallocPitch/Free of that
// thread come here instead of going to the device's caching allocator. Private to cudamatrix/.
//
// What it does. Each such capture (told apart by its capture id, cudaStreamGetCaptureInfo) gets a
// private CapturePool (internal/cu-capture-pool.h) whose lifetime the captured graph owns: a CUDA
// user object (cudaUserObjectCreate) holding the pool is moved into the graph
// (cudaGraphRetainUserObject), and CUDA releases it when the graph and every executable graph made
// from it are destroyed and their launches have completed. So the memory the graph uses is never
// handed to an eager caller while the graph can still run:
//   - allocations during the capture come from the pool; frees of them during the capture go back
//     to the pool (stream order inside the graph keeps the reuse correct); those that escape the
//     capture go back to the pool when freed later, never to the eager allocator;
//   - eager memory freed during the capture is kept by the pool and given to the device's
//     allocator only once the graph is gone (replays may still read it).
// The release callback runs on a CUDA thread, where no CUDA call is allowed, so it only queues the
// pool; the queue is drained (ReleaseDeadForeignPools: eager memory back, the pool retired, its
// regions freed once its escaped memory is freed too) by the next CuDevice::Malloc of a thread
// that does not capture, or by CuGraph::ReleaseUnusedMemory().
// The eager memory is given back through CuDevice::Free.
//
// Thread-safety: all functions are thread-safe; the current capture's pool is per thread.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_FOREIGN_CAPTURE_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_FOREIGN_CAPTURE_H_

#include "cudamatrix/cu-allocator-options.h"

#include <atomic>
#include <cstddef>
#include <functional>

namespace cuctx {
namespace internal {

// Called only while ThreadStreamCapturing() (internal/cu-capture-gate.h) is true and no cuctx
// capture runs on the calling thread. `options`: the device's allocator options.
void* ForeignCaptureMalloc(size_t bytes, const CuAllocatorOptions& options);
void* ForeignCaptureMallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch,
                                const CuAllocatorOptions& options);
// Memory of the current capture's pool goes back to it; anything else is kept until the graph is
// gone and then passed to the `free_eager` of ReleaseDeadForeignPools.
void ForeignCaptureFree(void* ptr, const CuAllocatorOptions& options);

// Pools whose graphs are gone, waiting for ReleaseDeadForeignPools (one relaxed atomic load).
extern std::atomic<int> g_dead_foreign_pools;
inline bool DeadForeignPoolsPending() noexcept {
  return g_dead_foreign_pools.load(std::memory_order_relaxed) != 0;
}
// Gives back the memory of pools whose graphs are gone: eager pointers they kept through
// `free_eager`; the pools themselves are retired. Must not be called while the calling thread's
// stream captures. Returns the number of pools released.
int ReleaseDeadForeignPools(const std::function<void(void*)>& free_eager);
// The same with CuDevice::Free as `free_eager` (defined in cu-device.cc).
int ReleaseDeadForeignPools();

// Pools of foreign captures not yet released (tests).
int ForeignPoolsAlive();

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_FOREIGN_CAPTURE_H_
