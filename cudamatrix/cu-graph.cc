// cudamatrix/cu-graph.cc: CuGraph capture and replay, the graphs' private memory pools, and the
// capture checks of the ops that cannot be captured.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-graph.h"

#include "base/error.h"
#include "cudamatrix/cu-allocator-upstream.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/internal/cu-alloc-scope.h"
#include "cudamatrix/internal/cu-storage.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <unordered_set>
#include <utility>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace cuctx {

namespace internal {
namespace {
thread_local bool t_capturing = false;
}  // namespace

void CheckNotCapturing(const char* op) {
  if (t_capturing)
    CUCTX_ERR << op
              << ": not allowed while this thread captures a CUDA graph (CuGraph::Capture): it "
                 "waits for the device or copies to or from host memory. Use its device-result "
                 "form, or move it out of the captured code";
}

}  // namespace internal

bool CuGraph::Capturing() { return internal::t_capturing; }

#if CUCTX_HAVE_CUDA
namespace {

// Threads capturing right now, process-wide, and the gate that keeps device-wide waits and
// captures apart (OutsideCaptures()).
std::atomic<int> g_captures_active{0};
std::mutex g_gate_mutex;
std::condition_variable g_gate_cv;

void EnterCapture() {
  std::lock_guard<std::mutex> lock(g_gate_mutex);
  g_captures_active.fetch_add(1);
}

void LeaveCapture() {
  {
    std::lock_guard<std::mutex> lock(g_gate_mutex);
    g_captures_active.fetch_sub(1);
  }
  g_gate_cv.notify_all();
}

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
    std::lock_guard<std::mutex> lock(mutex_);
    void* p = nullptr;
    internal::RunInRelaxedCaptureMode([&] { p = allocator_.Malloc(bytes); });
    if (p != nullptr) live_.insert(p);
    return p;
  }
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
    std::lock_guard<std::mutex> lock(mutex_);
    void* p = nullptr;
    internal::RunInRelaxedCaptureMode(
        [&] { p = allocator_.MallocPitch(row_bytes, num_rows, pitch); });
    if (p != nullptr) live_.insert(p);
    return p;
  }
  bool FreeIfOwned(void* p) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_.erase(p) == 0) return false;
    allocator_.Free(p);
    return true;
  }
  void Adopt(void* eager) {
    std::lock_guard<std::mutex> lock(mutex_);
    adopted_.push_back(eager);
  }
  std::vector<void*> TakeAdopted() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(adopted_);
  }
  bool Unused() override {
    std::lock_guard<std::mutex> lock(mutex_);
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

  std::mutex mutex_;
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
// flag, the process-wide count, and the graph's own cuBLAS workspace.
class CaptureState {
 public:
  CaptureState(GraphPool* pool, void** graph_workspace) : scope_(pool) {
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
    internal::t_capturing = true;
    EnterCapture();
  }
  ~CaptureState() {
    LeaveCapture();
    internal::t_capturing = false;
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
};

}  // namespace

namespace internal {
void RunInRelaxedCaptureMode(const std::function<void()>& call) {
  if (!t_capturing) {
    call();
    return;
  }
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  CUCTX_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  struct Restore {
    cudaStreamCaptureMode* mode;
    ~Restore() { CUCTX_CUDA_CHECK_NOTHROW(cudaThreadExchangeStreamCaptureMode(mode)); }
  } restore{&mode};
  call();
}

void OutsideCaptures(const std::function<void()>& wait) {
  CheckNotCapturing("a device-wide wait (SynchronizeGpu, giving memory back)");
  std::unique_lock<std::mutex> lock(g_gate_mutex);
  g_gate_cv.wait(lock, [] { return g_captures_active.load() == 0; });
  wait();
}
}  // namespace internal
#endif  // CUCTX_HAVE_CUDA

struct CuGraph::State {
  std::function<void()> cpu_body;  // CPU mode: Launch() runs it
#if CUCTX_HAVE_CUDA
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::shared_ptr<GraphPool> pool;
  void* workspace = nullptr;  // the graph's cuBLAS workspace, in `pool`
  size_t num_nodes = 0;

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
      internal::OutsideCaptures([] { CUCTX_CUDA_CHECK(cudaDeviceSynchronize()); });
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
    CaptureState capturing(st.pool.get(), &st.workspace);
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
    struct CapturingFlag {
      CapturingFlag() { internal::t_capturing = true; }
      ~CapturingFlag() { internal::t_capturing = false; }
    } flag;
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

#if !CUCTX_HAVE_CUDA
namespace internal {
void OutsideCaptures(const std::function<void()>& wait) { wait(); }
void RunInRelaxedCaptureMode(const std::function<void()>& call) { call(); }
}  // namespace internal
#endif

}  // namespace cuctx
