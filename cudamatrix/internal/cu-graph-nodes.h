// cudamatrix/internal/cu-graph-nodes.h: the memory of CuGraphMemory::kNodes captures (cu-graph.h):
// allocations become graph memory nodes (cudaMallocAsync/cudaFreeAsync on the capturing stream),
// and the allocations that escape a capture are found and freed later. Private to cudamatrix/;
// only for .cc files under `#if CUCTX_HAVE_CUDA`.
//
// Owns: NodeCaptureScope, the allocations of one capture (used by its capturing thread only);
// NodeMemory, the process-wide set of escaped allocations (thread-safe, its mutex at lock level
// kScopeLock). Stream: the calling thread's (cudaStreamPerThread).
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_GRAPH_NODES_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_GRAPH_NODES_H_

#include "base/types.h"
#include "cudamatrix/internal/cu-alloc-scope.h"

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cuctx {
namespace internal {

// One kNodes graph's bookkeeping for the allocations that escaped its capture: its launches, and
// the escaped allocations freed by their users (with the launch count then), which a later launch
// allocated again (cudaGraphInstantiateFlagAutoFreeOnLaunch) and the graph's destruction frees.
struct NodeGraphRecord {
  std::atomic<uint64> launches{0};
  bool abandoned = false;                       // the capture failed: its allocations never existed
  std::vector<std::pair<void*, uint64>> freed;  // guarded by NodeMemory's mutex
};

// The escaped allocations of every kNodes graph: CuDevice::Free finds them here (through the
// scoped-memory owner list) and frees them with cudaFreeAsync. Registered once, never retired.
class NodeMemory : public ScopedMemoryOwner {
 public:
  static NodeMemory& Get();
  void Add(void* p, const std::shared_ptr<NodeGraphRecord>& graph);
  bool FreeIfOwned(void* p) override;
  bool Unused() override { return false; }
  // After the graph's executable form is destroyed (and the device idle): frees the escaped
  // allocations that a launch allocated again after their users had freed them.
  void GraphGone(NodeGraphRecord* graph);

 private:
  std::mutex mutex_;  // lock order: kScopeLock
  std::unordered_map<void*, std::shared_ptr<NodeGraphRecord>> live_;
};

// The capturing thread's allocations become graph allocation nodes, its frees of them free nodes;
// eager memory it frees is adopted (kept until the graph goes).
class NodeCaptureScope : public AllocationScope {
 public:
  explicit NodeCaptureScope(std::vector<void*>* adopted) : adopted_(adopted) {}
  void* Malloc(size_t bytes) override;
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) override;
  // Never throws: frees also come from destructors unwinding a failed capture.
  bool Free(void* ptr) override;
  // The allocations not freed inside the capture (they escape it) and the total allocated.
  const std::unordered_map<void*, size_t>& Live() const { return live_; }
  size_t Bytes() const { return bytes_; }

 private:
  std::vector<void*>* adopted_;
  std::unordered_map<void*, size_t> live_;
  size_t bytes_ = 0;
};

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_GRAPH_NODES_H_
