// cudamatrix/internal/cu-capture-pool.h: CapturePool, device memory that belongs to CUDA graphs
// only: a caching allocator over an upstream of its own, so nothing it holds is ever handed to an
// eager caller. A CuGraph's private pool, a CuGraphPool shared by several captures (cu-graph.cc)
// and the pool of a capture made outside cuctx (cu-foreign-capture.cc) are each one of these.
// Private to cudamatrix/.
//
// Owns: its CuMemoryAllocator (and so its upstream's regions, given back when it is destroyed) and
// the set of its pointers in use. Malloc/MallocPitch come from capturing threads; FreeIfOwned from
// any thread (memory that escaped a capture), so every call takes the pool's mutex (lock level
// kScopeLock, before the allocator's own). No stream: growing the pool calls cudaMalloc or the
// driver's cuMem* functions in the relaxed capture mode (the memory lies outside the graph, which
// refers to it by address), so growth is allowed while the calling thread's stream captures.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_CAPTURE_POOL_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_CAPTURE_POOL_H_

#include "base/types.h"
#include "cudamatrix/cu-allocator-options.h"
#include "cudamatrix/internal/cu-alloc-scope.h"

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace cuctx {

class CuMemoryAllocator;

namespace internal {

class CapturePool : public ScopedMemoryOwner {
 public:
  // The memory that escaped one graph's capture into a shared pool and was freed since: the graph
  // still writes it at every replay, so it goes back to the pool only when the graph is gone.
  struct Escapes {
    std::vector<void*> freed;  // guarded by the pool's mutex
    bool graph_alive = true;
  };

  // `device_options`: the device's allocator options (the upstream kind is taken from them; the
  // pool always caches what is freed into it, keeps no trace and no thread cache).
  // `region_quantum_mb`: how much the pool grows by at least.
  CapturePool(const CuAllocatorOptions& device_options, int region_quantum_mb);
  ~CapturePool() override;
  CapturePool(const CapturePool&) = delete;
  CapturePool& operator=(const CapturePool&) = delete;

  void* Malloc(size_t bytes);
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch);
  // Takes `ptr` back into the pool (for its own later captures only) if it is the pool's.
  bool FreeIfOwned(void* ptr) override;
  bool Owns(void* ptr);
  // Marks `ptrs` (in use, allocated by one capture that just ended) as escaped from the graph
  // that `escapes` belongs to: freeing one keeps it in `escapes` until ReleaseEscapes(escapes).
  void MarkEscaped(const std::vector<void*>& ptrs, const std::shared_ptr<Escapes>& escapes);
  // The graph is gone: its freed escaped memory goes back to the pool, and any still in use goes
  // back when freed.
  void ReleaseEscapes(Escapes* escapes);
  bool Unused() override;
  // Device memory the pool holds (in use and cached).
  size_t HeldBytes() const;

  // Memory snapshots (cu-memory-snapshot.h): what the pool is for, which marks its segments
  // (cuctx_kind, segment_pool_id with the pool's number, a description frame); kPrivate until
  // set. AppendSnapshot adds its segments and events when it holds memory of `device`.
  enum class Use { kPrivate, kShared, kForeign };
  void SetSnapshotUse(Use use);
  void AppendSnapshot(int device, MemorySnapshot* out) override;

 private:
  std::mutex mutex_;  // lock order: kScopeLock (internal/cu-lock-order.h), before allocator_'s
  std::unique_ptr<CuMemoryAllocator> allocator_;
  std::unordered_set<void*> live_;
  std::unordered_map<void*, std::shared_ptr<Escapes>> escaped_;
  int device_ = -1;   // the device it was made on
  int64 number_ = 0;  // 1, 2, ... in the order pools are made (segment_pool_id)
};

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_CAPTURE_POOL_H_
