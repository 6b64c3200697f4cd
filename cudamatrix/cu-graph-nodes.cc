// cudamatrix/cu-graph-nodes.cc: graph memory nodes for kNodes captures and the escaped allocations
// of their graphs (internal/cu-graph-nodes.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-graph-nodes.h"

#if CUCTX_HAVE_CUDA
#include "base/error.h"
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-lock-order.h"

#include <cuda_runtime.h>

namespace cuctx {
namespace internal {
namespace {

constexpr size_t kNodeAlign = 256;  // the caching allocator's alignment (cu-allocator.h)

size_t RoundUpNode(size_t n) { return (n + kNodeAlign - 1) / kNodeAlign * kNodeAlign; }

}  // namespace

NodeMemory& NodeMemory::Get() {
  static NodeMemory* m = [] {
    auto owner = std::make_shared<NodeMemory>();
    NodeMemory* raw = owner.get();
    RegisterScopedMemoryOwner(std::move(owner));
    return raw;
  }();
  return *m;
}

void NodeMemory::Add(void* p, const std::shared_ptr<NodeGraphRecord>& graph) {
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
  live_[p] = graph;
}

bool NodeMemory::FreeIfOwned(void* p) {
  OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
  auto it = live_.find(p);
  if (it == live_.end()) return false;
  std::shared_ptr<NodeGraphRecord> graph = std::move(it->second);
  live_.erase(it);
  if (graph->abandoned) return true;
  graph->freed.emplace_back(p, graph->launches.load(std::memory_order_relaxed));
  CUCTX_CUDA_CHECK(cudaFreeAsync(p, cudaStreamPerThread));
  return true;
}

void NodeMemory::GraphGone(NodeGraphRecord* graph) {
  std::vector<void*> again;
  {
    OrderedLockGuard<std::mutex> lock(mutex_, kScopeLock);
    const uint64 launches = graph->launches.load(std::memory_order_relaxed);
    for (const auto& f : graph->freed)
      if (launches > f.second) again.push_back(f.first);
    graph->freed.clear();
  }
  for (void* p : again)
    if (cudaFreeAsync(p, cudaStreamPerThread) != cudaSuccess) (void)cudaGetLastError();
}

void* NodeCaptureScope::Malloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  CUCTX_CUDA_CHECK(cudaMallocAsync(&p, RoundUpNode(bytes), cudaStreamPerThread));
  live_[p] = RoundUpNode(bytes);
  bytes_ += RoundUpNode(bytes);
  return p;
}

void* NodeCaptureScope::MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
  CUCTX_CHECK(pitch != nullptr);
  *pitch = RoundUpNode(row_bytes);
  if (row_bytes == 0 || num_rows == 0) return nullptr;
  CUCTX_CHECK(num_rows <= (size_t{1} << 62) / *pitch)
      << "CuDevice::MallocPitch: " << num_rows << " rows of " << row_bytes << " bytes overflow";
  return Malloc(*pitch * num_rows);
}

bool NodeCaptureScope::Free(void* ptr) {
  auto it = live_.find(ptr);
  if (it == live_.end()) {
    adopted_->push_back(ptr);
    return true;
  }
  live_.erase(it);
  if (cudaFreeAsync(ptr, cudaStreamPerThread) != cudaSuccess) (void)cudaGetLastError();
  return true;
}

}  // namespace internal
}  // namespace cuctx
#endif  // CUCTX_HAVE_CUDA
