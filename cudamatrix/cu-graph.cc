// cudamatrix/cu-graph.cc: CuGraph capture and replay, the graphs' private memory pools, and the
// capture checks of the ops that cannot be captured.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-graph.h"

#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/internal/cu-alloc-scope.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-capture-pool.h"
#include "cudamatrix/internal/cu-foreign-capture.h"
#include "cudamatrix/internal/cu-graph-nodes.h"
#include "cudamatrix/internal/cu-lock-order.h"
#include "cudamatrix/internal/cu-storage.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-device-scope.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace cuctx {

bool CuGraph::Capturing() { return internal::ThreadCapturing(); }

namespace {

// 0: not decided yet (CUCTX_GRAPH_MEMORY is read at the first use), else 1 + the mode.
std::atomic<int> g_default_memory{0};

}  // namespace

#if CUCTX_HAVE_CUDA
namespace {

// kPrivatePool and kSharedPool: the capturing thread's allocations go to the pool; eager memory
// (or another pool's) that it frees is adopted.
class PoolCaptureScope : public internal::AllocationScope {
 public:
  PoolCaptureScope(internal::CapturePool* pool, std::vector<void*>* adopted)
      : pool_(pool), adopted_(adopted) {}
  void* Malloc(size_t bytes) override { return Note(pool_->Malloc(bytes), bytes); }
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) override {
    void* p = pool_->MallocPitch(row_bytes, num_rows, pitch);
    return Note(p, *pitch * num_rows);
  }
  bool Free(void* ptr) override {
    mine_.erase(ptr);
    if (!pool_->FreeIfOwned(ptr)) adopted_->push_back(ptr);
    return true;
  }
  // What this capture allocated and has not freed: it escapes the capture.
  std::vector<void*> Escaping() const {
    std::vector<void*> v;
    for (const auto& m : mine_) v.push_back(m.first);
    return v;
  }
  size_t EscapingBytes() const {
    size_t bytes = 0;
    for (const auto& m : mine_) bytes += m.second;
    return bytes;
  }

 private:
  void* Note(void* p, size_t bytes) {
    if (p != nullptr) mine_[p] = bytes;
    return p;
  }
  internal::CapturePool* pool_;
  std::vector<void*>* adopted_;
  std::unordered_map<void*, size_t> mine_;  // allocated here and not freed: bytes asked for
};

// The cuBLAS workspace size NVIDIA recommends: 32 MiB from Hopper on, 4 MiB before.
size_t CublasWorkspaceBytes() {
  const CuDeviceProperties& p = CuDevice::Instantiate().Properties();
  return (p.major >= 9 ? 32 : 4) << 20;
}

// Each thread's eager cuBLAS workspace, set explicitly the first time the thread captures so that
// there is one to go back to after the capture swapped in the graph's (cuBLAS has no way to ask
// for its own default one back). Freed at thread exit.
struct EagerCublasWorkspace {
  void* data = nullptr;
  ~EagerCublasWorkspace() {
    if (data == nullptr) return;
    try {
      CuDevice::Instantiate().Free(data);
    } catch (...) {  // at process exit the device may be gone already
    }
  }
};
thread_local EagerCublasWorkspace t_cublas_workspace;

// Marks the calling thread as capturing through `scope` for its lifetime: allocation scope,
// capture flag and the count of its device's capture gate; puts the eager cuBLAS workspace back
// at the end.
class CaptureState {
 public:
  CaptureState(internal::AllocationScope* scope, int capture_device) {
    CuDevice& device = CuDevice::Instantiate();
    // Creating a library handle allocates and synchronizes, which a capture forbids: make the
    // ones captured code may use now (each is made once per thread).
    device.GetCusparseHandle();
    device.GetCurandHandle();
    const size_t ws_bytes = CublasWorkspaceBytes();
    if (t_cublas_workspace.data == nullptr) {
      t_cublas_workspace.data = device.Malloc(ws_bytes);
      CUCTX_CUBLAS_CHECK(
          cublasSetWorkspace(device.GetCublasHandle(), t_cublas_workspace.data, ws_bytes));
    }
    previous_ = internal::SetThreadAllocationScope(scope);
    capture_.emplace(capture_device);
  }
  ~CaptureState() {
    capture_.reset();
    internal::SetThreadAllocationScope(previous_);
    CuDevice& device = CuDevice::Instantiate();
    cublasStatus_t s = cublasSetWorkspace(device.GetCublasHandle(), t_cublas_workspace.data,
                                          CublasWorkspaceBytes());
    if (s != CUBLAS_STATUS_SUCCESS)
      internal::WarnStatus(internal::kCublasLib, s, "cublasSetWorkspace", __func__, __FILE__,
                           __LINE__);
  }

 private:
  internal::AllocationScope* previous_ = nullptr;
  std::optional<internal::CaptureScope> capture_;
};

}  // namespace
#endif  // CUCTX_HAVE_CUDA

struct CuGraphPool::State {
#if CUCTX_HAVE_CUDA
  std::shared_ptr<internal::CapturePool> pool;
  int device = -1;
  std::atomic<bool> capturing{false};  // a capture into the pool runs

  ~State() {
    if (pool != nullptr) internal::RetireScopedMemoryOwner(pool.get());
  }
#endif
};

CuGraphPool::CuGraphPool() : state_(std::make_shared<State>()) {}

size_t CuGraphPool::MemoryBytes() const {
#if CUCTX_HAVE_CUDA
  if (state_ != nullptr && state_->pool != nullptr) return state_->pool->HeldBytes();
#endif
  return 0;
}

struct CuGraph::State {
  std::function<void()> cpu_body;  // CPU mode: Launch() runs it
  CuGraphMemory memory = CuGraphMemory::kNodes;
#if CUCTX_HAVE_CUDA
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::shared_ptr<internal::CapturePool> private_pool;      // kPrivatePool
  std::shared_ptr<CuGraphPool::State> shared;               // kSharedPool
  std::shared_ptr<internal::CapturePool::Escapes> escapes;  // kSharedPool: its escaped memory
  std::shared_ptr<internal::NodeGraphRecord> nodes;         // kNodes
  size_t node_bytes = 0;
  size_t escaped_bytes = 0;    // allocated by the capture and not freed by its end
  std::vector<void*> adopted;  // eager (or other graphs') memory freed during the capture
  size_t num_nodes = 0;
  int device = -1;  // the device it was captured on

  ~State() {
    if (exec == nullptr && graph == nullptr && private_pool == nullptr && shared == nullptr &&
        nodes == nullptr && adopted.empty())
      return;
    if (CuGraph::Capturing()) {
      // Waiting for the device would break the capture in progress: keep the memory (a pool is
      // dropped once unused) and leave the rest to process exit.
      CUCTX_WARN << "a CuGraph was destroyed while its thread captures another; its memory is "
                    "kept until the process ends";
      if (private_pool != nullptr) internal::RetireScopedMemoryOwner(private_pool.get());
      return;
    }
    // Replays may still run, on any thread's stream. Destroying the executable graph frees its
    // device resources, which may wait for the device: like the wait, it runs outside other
    // threads' captures (either could invalidate them).
    auto destroy = [this] {
      if (exec != nullptr) CUCTX_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec));
      if (graph != nullptr) CUCTX_CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph));
      exec = nullptr;
      graph = nullptr;
    };
    try {
      internal::OutsideCaptures(device, [this, &destroy] {
        internal::DeviceScope scope(device);
        CUCTX_CUDA_CHECK(scope.Status());
        CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
        destroy();
      });
    } catch (const std::exception& e) {
      CUCTX_WARN << "destroying a CuGraph: " << e.what();
    }
    destroy();  // a no-op unless the wait failed
    try {
      if (nodes != nullptr && !nodes->abandoned) {
        internal::NodeMemory::Get().GraphGone(nodes.get());
        // The physical memory no other graph uses goes back to the device.
        internal::OutsideCapturesToRelease(device, [this] {
          internal::DeviceScope scope(device);
          CUCTX_CUDA_CHECK(scope.Status());
          CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
          CUCTX_CUDA_CHECK(cudaDeviceGraphMemTrim(device));
        });
      }
      // Adopted memory is eager, or escaped memory of another graph.
      CuMemoryAllocator* eager = CuDevice::Instantiate().Allocator();
      for (void* p : adopted)
        if (!internal::FreeScopedMemory(p) && eager != nullptr) eager->Free(p);
      adopted.clear();
    } catch (const std::exception& e) {
      CUCTX_WARN << "releasing a CuGraph's memory: " << e.what();
    }
    if (shared != nullptr && escapes != nullptr) shared->pool->ReleaseEscapes(escapes.get());
    if (private_pool != nullptr) internal::RetireScopedMemoryOwner(private_pool.get());
  }
#endif
};

CuGraph::CuGraph() = default;
CuGraph::CuGraph(CuGraph&& other) noexcept = default;
CuGraph& CuGraph::operator=(CuGraph&& other) noexcept = default;
CuGraph::~CuGraph() = default;

const char* CuGraph::MemoryName(CuGraphMemory memory) {
  switch (memory) {
    case CuGraphMemory::kNodes:
      return "nodes";
    case CuGraphMemory::kSharedPool:
      return "shared";
    case CuGraphMemory::kPrivatePool:
      return "private";
  }
  return "?";
}

CuGraphMemory CuGraph::DefaultMemory() {
  int v = g_default_memory.load(std::memory_order_relaxed);
  if (v == 0) {
    CuGraphMemory m = CuGraphMemory::kSharedPool;
    if (const char* env = std::getenv("CUCTX_GRAPH_MEMORY")) {
      const std::string e(env);
      if (e == "nodes")
        m = CuGraphMemory::kNodes;
      else if (e == "shared" || e.empty())
        m = CuGraphMemory::kSharedPool;
      else if (e == "private")
        m = CuGraphMemory::kPrivatePool;
      else
        CUCTX_ERR << "CUCTX_GRAPH_MEMORY must be nodes, shared or private, got '" << e << "'";
    }
    int expected = 0;
    g_default_memory.compare_exchange_strong(expected, 1 + static_cast<int>(m));
    v = g_default_memory.load(std::memory_order_relaxed);
  }
  return static_cast<CuGraphMemory>(v - 1);
}

void CuGraph::SetDefaultMemory(CuGraphMemory memory) {
  g_default_memory.store(1 + static_cast<int>(memory), std::memory_order_relaxed);
}

CuGraph CuGraph::Capture(const std::function<void()>& body) {
  return Capture(body, DefaultMemory());
}

CuGraph CuGraph::Capture(const std::function<void()>& body, const CuGraphPool& pool) {
  CUCTX_CHECK(pool.state_ != nullptr) << "CuGraph::Capture: the CuGraphPool was moved from";
  return CaptureInto(body, CuGraphMemory::kSharedPool, pool.state_);
}

CuGraph CuGraph::Capture(const std::function<void()>& body, CuGraphMemory memory) {
  return CaptureInto(body, memory, nullptr);
}

#if CUCTX_HAVE_CUDA
namespace {

// The pool of kSharedPool captures that name none: one per thread (and device).
thread_local std::shared_ptr<CuGraphPool::State> t_shared_pool;

}  // namespace
#endif

CuGraph CuGraph::CaptureInto(const std::function<void()>& body, CuGraphMemory memory,
                             std::shared_ptr<CuGraphPool::State> pool) {
  CUCTX_CHECK(static_cast<bool>(body)) << "CuGraph::Capture: the body is empty";
  CuGraph g;
  g.state_ = std::make_unique<State>();
  g.state_->memory = memory;
  if (!internal::OnGpu()) {
    g.state_->cpu_body = body;
    return g;
  }
#if CUCTX_HAVE_CUDA
  CUCTX_CHECK(!Capturing())
      << "CuGraph::Capture: this thread is already capturing a graph (nested captures are not "
         "supported)";
  State& st = *g.state_;
  st.device = internal::ThreadDevice();
  std::unique_ptr<internal::AllocationScope> scope;
  internal::NodeCaptureScope* node_scope = nullptr;
  PoolCaptureScope* pool_scope = nullptr;     // kSharedPool
  PoolCaptureScope* private_scope = nullptr;  // kPrivatePool
  struct CaptureDone {  // a shared pool is free for the next capture once this one ends
    CuGraphPool::State* pool = nullptr;
    ~CaptureDone() {
      if (pool != nullptr) pool->capturing.store(false);
    }
  } capture_done;
  switch (memory) {
    case CuGraphMemory::kPrivatePool: {
      st.private_pool = std::make_shared<internal::CapturePool>(CuDevice::AllocatorOptions(), 2);
      // From now on frees of its memory from any thread find it.
      internal::RegisterScopedMemoryOwner(st.private_pool);
      auto s = std::make_unique<PoolCaptureScope>(st.private_pool.get(), &st.adopted);
      private_scope = s.get();
      scope = std::move(s);
      break;
    }
    case CuGraphMemory::kSharedPool: {
      if (pool == nullptr) {
        if (t_shared_pool == nullptr || t_shared_pool->device != st.device)
          t_shared_pool = std::make_shared<CuGraphPool::State>();
        pool = t_shared_pool;
      }
      if (pool->pool == nullptr) {
        pool->pool = std::make_shared<internal::CapturePool>(CuDevice::AllocatorOptions(), 2);
        pool->pool->SetSnapshotUse(internal::CapturePool::Use::kShared);
        pool->device = st.device;
        internal::RegisterScopedMemoryOwner(pool->pool);
      }
      CUCTX_CHECK(pool->device == st.device)
          << "CuGraph::Capture: the CuGraphPool holds memory of device " << pool->device
          << ", this thread captures on device " << st.device;
      CUCTX_CHECK(!pool->capturing.exchange(true))
          << "CuGraph::Capture: another thread is capturing into this CuGraphPool (a pool's "
             "captures, like its replays, run one at a time)";
      capture_done.pool = pool.get();
      st.shared = pool;
      st.escapes = std::make_shared<internal::CapturePool::Escapes>();
      auto s = std::make_unique<PoolCaptureScope>(pool->pool.get(), &st.adopted);
      pool_scope = s.get();
      scope = std::move(s);
      break;
    }
    case CuGraphMemory::kNodes: {
      st.nodes = std::make_shared<internal::NodeGraphRecord>();
      auto s = std::make_unique<internal::NodeCaptureScope>(&st.adopted);
      node_scope = s.get();
      scope = std::move(s);
      break;
    }
  }
  {
    CaptureState capturing(scope.get(), st.device);
    cudaStream_t stream = cudaStreamPerThread;
    // The per-thread stream implicitly waits for work queued before on the legacy default stream
    // (another thread's SynchronizeGpu(), let through by the gate just before this capture counted
    // in; it may still be pending behind other threads' work). A kernel queued now takes that
    // wait, so that the capture's first op (a memset, usually) is not the one to depend on work
    // outside the capture, which CUDA does not document as allowed.
    LaunchNoOp(stream);
    CUCTX_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    void* workspace = nullptr;
    try {
      // The graph's cuBLAS workspace is graph memory too (kNodes: shared by all graphs through
      // the driver; kSharedPool: one block of the pool that every capture reuses).
      const size_t ws_bytes = CublasWorkspaceBytes();
      workspace = scope->Malloc(ws_bytes);
      CUCTX_CUBLAS_CHECK(
          cublasSetWorkspace(CuDevice::Instantiate().GetCublasHandle(), workspace, ws_bytes));
      body();
      scope->Free(workspace);
      workspace = nullptr;
    } catch (...) {
      // A pool's workspace goes back to it, so that an abandoned private pool is unused.
      if (workspace != nullptr && node_scope == nullptr) scope->Free(workspace);
      // Leave capture mode whatever state the capture is in, then pass the error on.
      if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph != nullptr)
        cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      if (node_scope != nullptr) {
        // Its allocations never existed; frees of those that escaped are no-ops.
        st.nodes->abandoned = true;
        for (const auto& a : node_scope->Live()) internal::NodeMemory::Get().Add(a.first, st.nodes);
      }
      throw;  // ~State gives back the eager memory `body` freed, and the pool once unused
    }
    const cudaError_t e = cudaStreamEndCapture(stream, &graph);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      if (node_scope != nullptr) {
        st.nodes->abandoned = true;
        for (const auto& a : node_scope->Live()) internal::NodeMemory::Get().Add(a.first, st.nodes);
      }
      CUCTX_ERR << "CuGraph::Capture: CUDA rejected the capture (" << cudaGetErrorName(e) << ": "
                << cudaGetErrorString(e)
                << "); the captured code called something that cannot be captured (a "
                   "synchronizing or host-memory call outside cuctx's checks)";
    }
    st.graph = graph;
  }
  if (node_scope != nullptr) {
    st.node_bytes = node_scope->Bytes();
    for (const auto& a : node_scope->Live()) st.escaped_bytes += a.second;
    for (const auto& a : node_scope->Live()) internal::NodeMemory::Get().Add(a.first, st.nodes);
  }
  if (pool_scope != nullptr) {
    st.escaped_bytes = pool_scope->EscapingBytes();
    st.shared->pool->MarkEscaped(pool_scope->Escaping(), st.escapes);
  }
  if (private_scope != nullptr) st.escaped_bytes = private_scope->EscapingBytes();
  CUCTX_CUDA_CHECK(cudaGraphGetNodes(st.graph, nullptr, &st.num_nodes));
  const unsigned long long flags =
      memory == CuGraphMemory::kNodes ? cudaGraphInstantiateFlagAutoFreeOnLaunch : 0;
  // Instantiating maps the graph's resources on the device; like destroying it, it runs outside
  // other threads' captures.
  internal::OutsideCaptures(st.device, [&st, flags] {
    CUCTX_CUDA_CHECK(cudaGraphInstantiate(&st.exec, st.graph, flags));
  });
#else
  (void)pool;  // without CUDA every graph runs its body on the CPU
#endif
  return g;
}

void CuGraph::Launch() {
  if (state_ == nullptr) return;
  if (state_->cpu_body) {
    // The body runs under the capture rules here too, so code that works without a GPU does not
    // fail only on one.
    internal::CheckNotCapturing("CuGraph::Launch");
    internal::CaptureScope flag(-1);  // no device: only the thread's capture flag
    state_->cpu_body();
    return;
  }
#if CUCTX_HAVE_CUDA
  internal::CheckNotCapturing("CuGraph::Launch");
  State& st = *state_;
  if (st.nodes != nullptr) st.nodes->launches.fetch_add(1, std::memory_order_relaxed);
  CUCTX_CUDA_CHECK(cudaGraphLaunch(st.exec, cudaStreamPerThread));
#endif
}

bool CuGraph::Empty() const { return state_ == nullptr; }

size_t CuGraph::NumNodes() const {
#if CUCTX_HAVE_CUDA
  if (state_ != nullptr) return state_->num_nodes;
#endif
  return 0;
}

size_t CuGraph::MemoryBytes() const {
#if CUCTX_HAVE_CUDA
  if (state_ == nullptr) return 0;
  if (state_->private_pool != nullptr) return state_->private_pool->HeldBytes();
  if (state_->shared != nullptr && state_->shared->pool != nullptr)
    return state_->shared->pool->HeldBytes();
  return state_->node_bytes;
#else
  return 0;
#endif
}

size_t CuGraph::EscapedBytes() const {
#if CUCTX_HAVE_CUDA
  if (state_ != nullptr) return state_->escaped_bytes;
#endif
  return 0;
}

CuGraphMemory CuGraph::Memory() const {
  return state_ == nullptr ? DefaultMemory() : state_->memory;
}

CuGraph::DriverMemory CuGraph::DeviceGraphMemory() {
  DriverMemory m;
#if CUCTX_HAVE_CUDA
  if (!internal::OnGpu()) return m;
  const int device = internal::ThreadDevice();
  auto get = [device](cudaGraphMemAttributeType attr) {
    unsigned long long v = 0;
    CUCTX_CUDA_CHECK(cudaDeviceGetGraphMemAttribute(device, attr, &v));
    return static_cast<size_t>(v);
  };
  m.used = get(cudaGraphMemAttrUsedMemCurrent);
  m.used_high = get(cudaGraphMemAttrUsedMemHigh);
  m.reserved = get(cudaGraphMemAttrReservedMemCurrent);
  m.reserved_high = get(cudaGraphMemAttrReservedMemHigh);
#endif
  return m;
}

void CuGraph::ReleaseUnusedMemory() {
  if (!internal::OnGpu()) return;
#if CUCTX_HAVE_CUDA
  internal::CheckNotCapturing("CuGraph::ReleaseUnusedMemory");
  internal::ReleaseDeadForeignPools();
  const int device = internal::ThreadDevice();
  internal::OutsideCapturesToRelease(device, [device] {
    internal::DeviceScope scope(device);
    CUCTX_CUDA_CHECK(scope.Status());
    CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
    CUCTX_CUDA_CHECK(cudaDeviceGraphMemTrim(device));
  });
#endif
}

}  // namespace cuctx
