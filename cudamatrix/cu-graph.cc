// cudamatrix/cu-graph.cc: CuGraph capture and replay, the graphs' private memory pools, and the
// capture checks of the ops that cannot be captured.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-graph.h"

#include "base/error.h"
#include "cudamatrix/cu-allocator-upstream.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/internal/cu-alloc-scope.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-lock-order.h"
#include "cudamatrix/internal/cu-storage.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-device-scope.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace cuctx {

bool CuGraph::Capturing() { return internal::ThreadCapturing(); }

#if CUCTX_HAVE_CUDA
namespace {

// The private memory of one graph: a CuMemoryAllocator over an upstream of its own (so nothing
// it holds is ever handed to an eager caller), the pointers it handed out that are not yet
// freed, and the eager pointers freed during the capture (kept until the graph goes, since
// replays may still use them). Malloc/MallocPitch come only from the capturing thread; FreeIfOwned
// from any thread (escaped memory), hence the mutex.
class GraphPool : public internal::ScopedMemoryOwner {
 public:
  GraphPool() : allocator_(Options(), NewUpstream()) {}

  // Growth of the pool calls cudaMalloc or the driver's cuMem* functions, which stream capture
  // would otherwise count as unsafe calls of the capturing thread. The memory is outside the
  // graph on purpose (the graph refers to it by address), so the relaxed mode is right here.
  void* Malloc(size_t bytes) {
    internal::OrderedLockGuard<std::mutex> lock(mutex_, internal::kScopeLock);
    void* p = nullptr;
    internal::RunInRelaxedCaptureMode([&] { p = allocator_.Malloc(bytes); });
    if (p != nullptr) live_.insert(p);
    return p;
  }
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
    internal::OrderedLockGuard<std::mutex> lock(mutex_, internal::kScopeLock);
    void* p = nullptr;
    internal::RunInRelaxedCaptureMode(
        [&] { p = allocator_.MallocPitch(row_bytes, num_rows, pitch); });
    if (p != nullptr) live_.insert(p);
    return p;
  }
  bool FreeIfOwned(void* p) override {
    internal::OrderedLockGuard<std::mutex> lock(mutex_, internal::kScopeLock);
    if (live_.erase(p) == 0) return false;
    allocator_.Free(p);
    return true;
  }
  void Adopt(void* eager) {
    internal::OrderedLockGuard<std::mutex> lock(mutex_, internal::kScopeLock);
    adopted_.push_back(eager);
  }
  std::vector<void*> TakeAdopted() {
    internal::OrderedLockGuard<std::mutex> lock(mutex_, internal::kScopeLock);
    return std::move(adopted_);
  }
  bool Unused() override {
    internal::OrderedLockGuard<std::mutex> lock(mutex_, internal::kScopeLock);
    return live_.empty();
  }
  size_t HeldBytes() const { return allocator_.GetStats().held_bytes; }

 private:
  static CuAllocatorOptions Options() {
    CuAllocatorOptions o = CuDevice::AllocatorOptions();
    o.cache_memory = true;  // the pool must keep what it frees
    o.memory_proportion = 0.0f;
    o.trace_file.clear();
    o.thread_cache_mb = 0;    // one capturing thread; nothing to cache
    o.region_quantum_mb = 2;  // one capture: no slack to keep for other threads
    return o;
  }
  static std::unique_ptr<CuAllocatorUpstream> NewUpstream() {
    // Only the capturing thread allocates, so the pool never needs a cross-thread sync; if it
    // asked for one during a capture that would be a bug, so say so instead of hanging.
    return NewDeviceAllocatorUpstream(CuDevice::AllocatorOptions().upstream, [] {
      CUCTX_ERR << "a CUDA graph's private memory pool asked for a cross-thread sync";
    });
  }

  std::mutex mutex_;  // lock order: kScopeLock (internal/cu-lock-order.h), before allocator_'s
  CuMemoryAllocator allocator_;
  std::unordered_set<void*> live_;
  std::vector<void*> adopted_;
};

// The capturing thread's allocations go to the pool; eager memory it frees is adopted.
class CaptureAllocationScope : public internal::AllocationScope {
 public:
  explicit CaptureAllocationScope(GraphPool* pool) : pool_(pool) {}
  void* Malloc(size_t bytes) override { return pool_->Malloc(bytes); }
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) override {
    return pool_->MallocPitch(row_bytes, num_rows, pitch);
  }
  bool Free(void* ptr) override {
    if (!pool_->FreeIfOwned(ptr)) pool_->Adopt(ptr);
    return true;
  }

 private:
  GraphPool* pool_;
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

// Marks the calling thread as capturing into `pool` for its lifetime: allocation scope, capture
// flag and the count of its device's capture gate, and the graph's own cuBLAS workspace.
class CaptureState {
 public:
  CaptureState(GraphPool* pool, void** graph_workspace, int capture_device) : scope_(pool) {
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
    *graph_workspace = pool->Malloc(ws_bytes);
    CUCTX_CUBLAS_CHECK(cublasSetWorkspace(device.GetCublasHandle(), *graph_workspace, ws_bytes));
    previous_ = internal::SetThreadAllocationScope(&scope_);
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
  CaptureAllocationScope scope_;
  internal::AllocationScope* previous_ = nullptr;
  std::optional<internal::CaptureScope> capture_;
};

}  // namespace
#endif  // CUCTX_HAVE_CUDA

struct CuGraph::State {
  std::function<void()> cpu_body;  // CPU mode: Launch() runs it
#if CUCTX_HAVE_CUDA
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::shared_ptr<GraphPool> pool;
  void* workspace = nullptr;  // the graph's cuBLAS workspace, in `pool`
  size_t num_nodes = 0;
  int device = -1;  // the device it was captured on

  ~State() {
    if (exec == nullptr && graph == nullptr && pool == nullptr) return;
    if (CuGraph::Capturing()) {
      // Waiting for the device would break the capture in progress: keep the pool (it is
      // dropped once unused) and leave the rest to process exit.
      CUCTX_WARN << "a CuGraph was destroyed while its thread captures another; its memory is "
                    "kept until the process ends";
      return;
    }
    // Replays may still run, on any thread's stream.
    try {
      internal::OutsideCaptures(device, [this] {
        internal::DeviceScope scope(device);
        CUCTX_CUDA_CHECK(scope.Status());
        CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
      });
    } catch (const std::exception& e) {
      CUCTX_WARN << "destroying a CuGraph: " << e.what();
    }
    if (exec != nullptr) CUCTX_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec));
    if (graph != nullptr) CUCTX_CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph));
    if (pool == nullptr) return;
    try {
      if (workspace != nullptr) pool->FreeIfOwned(workspace);
      // Adopted memory is eager, or escaped memory of another graph's pool.
      CuMemoryAllocator* eager = CuDevice::Instantiate().Allocator();
      for (void* p : pool->TakeAdopted())
        if (!internal::FreeScopedMemory(p) && eager != nullptr) eager->Free(p);
    } catch (const std::exception& e) {
      CUCTX_WARN << "releasing a CuGraph's memory: " << e.what();
    }
    internal::RetireScopedMemoryOwner(pool.get());
  }
#endif
};

CuGraph::CuGraph() = default;
CuGraph::CuGraph(CuGraph&& other) noexcept = default;
CuGraph& CuGraph::operator=(CuGraph&& other) noexcept = default;
CuGraph::~CuGraph() = default;

CuGraph CuGraph::Capture(const std::function<void()>& body) {
  CUCTX_CHECK(static_cast<bool>(body)) << "CuGraph::Capture: the body is empty";
  CuGraph g;
  g.state_ = std::make_unique<State>();
  if (!internal::OnGpu()) {
    g.state_->cpu_body = body;
    return g;
  }
#if CUCTX_HAVE_CUDA
  CUCTX_CHECK(!Capturing())
      << "CuGraph::Capture: this thread is already capturing a graph (nested captures are not "
         "supported)";
  State& st = *g.state_;
  st.pool = std::make_shared<GraphPool>();
  // From now on frees of its memory from any thread find it.
  internal::RegisterScopedMemoryOwner(st.pool);
  {
    st.device = internal::ThreadDevice();
    CaptureState capturing(st.pool.get(), &st.workspace, st.device);
    cudaStream_t stream = cudaStreamPerThread;
    CUCTX_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
      body();
    } catch (...) {
      // Leave capture mode whatever state the capture is in, then pass the error on.
      if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph != nullptr)
        cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      throw;  // ~State gives back the eager memory `body` freed, and the pool once unused
    }
    const cudaError_t e = cudaStreamEndCapture(stream, &graph);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      CUCTX_ERR << "CuGraph::Capture: CUDA rejected the capture (" << cudaGetErrorName(e) << ": "
                << cudaGetErrorString(e)
                << "); the captured code called something that cannot be captured (a "
                   "synchronizing or host-memory call outside cuctx's checks)";
    }
    st.graph = graph;
  }
  CUCTX_CUDA_CHECK(cudaGraphGetNodes(st.graph, nullptr, &st.num_nodes));
  CUCTX_CUDA_CHECK(cudaGraphInstantiate(&st.exec, st.graph, 0));
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
  CUCTX_CUDA_CHECK(cudaGraphLaunch(state_->exec, cudaStreamPerThread));
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
  if (state_ != nullptr && state_->pool != nullptr) return state_->pool->HeldBytes();
#endif
  return 0;
}

}  // namespace cuctx
