// cudamatrix/cu-foreign-capture.cc: private pools for captures begun outside cuctx, owned by the
// captured graph through a CUDA user object (internal/cu-foreign-capture.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-foreign-capture.h"

#include "base/error.h"
#include "cudamatrix/internal/cu-alloc-scope.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-capture-pool.h"

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"

#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace internal {

std::atomic<int> g_dead_foreign_pools{0};

namespace {

// One foreign capture's memory: its pool and the eager memory freed during it.
struct ForeignPool {
  std::shared_ptr<CapturePool> pool;
  std::mutex mutex;  // a leaf lock: guards `adopted`, calls out to nothing
  std::vector<void*> adopted;
};

std::atomic<int> g_alive{0};

// Pools whose graphs are gone (filled by the user objects' release callbacks). Leaked on purpose:
// CUDA may release a graph's user objects during process exit.
struct DeadList {
  std::mutex mutex;  // a leaf lock
  std::vector<std::shared_ptr<ForeignPool>> pools;
};
DeadList& Dead() {
  static DeadList* list = new DeadList;
  return *list;
}

// The pool of the capture the calling thread's stream is in (by capture id). Weak: the graph's
// user object owns it, so a capture that ended and whose graph is gone leaves nothing here.
struct ThreadForeignCapture {
  unsigned long long id = 0;
  std::weak_ptr<ForeignPool> pool;
};
thread_local ThreadForeignCapture t_capture;

#if CUCTX_HAVE_CUDA
// The user object's destructor: runs on a CUDA thread once the graph and its executable graphs
// are destroyed and their launches done. No CUDA call is allowed here: only queue the pool.
void PoolGone(void* holder_ptr) {
  auto* holder = static_cast<std::shared_ptr<ForeignPool>*>(holder_ptr);
  DeadList& d = Dead();
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    d.pools.push_back(std::move(*holder));
  }
  delete holder;
  g_dead_foreign_pools.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<ForeignPool> CurrentPool(const CuAllocatorOptions& options) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  cudaGraph_t graph = nullptr;
  CUCTX_CUDA_CHECK(cudaStreamGetCaptureInfo(cudaStreamPerThread, &status, &id, &graph));
  CUCTX_CHECK(status == cudaStreamCaptureStatusActive && graph != nullptr)
      << "cuctx: the calling thread's stream stopped capturing while cuctx allocated for it";
  if (t_capture.id == id)
    if (std::shared_ptr<ForeignPool> p = t_capture.pool.lock()) return p;
  auto fp = std::make_shared<ForeignPool>();
  // Setting the pool up queries the device; relaxed, so that a capture in the global or
  // thread-local mode allows it.
  RunInRelaxedCaptureMode([&] { fp->pool = std::make_shared<CapturePool>(options, 2); });
  fp->pool->SetSnapshotUse(CapturePool::Use::kForeign);
  RegisterScopedMemoryOwner(fp->pool);
  auto* holder = new std::shared_ptr<ForeignPool>(fp);
  cudaUserObject_t object = nullptr;
  const cudaError_t created =
      cudaUserObjectCreate(&object, holder, &PoolGone, 1, cudaUserObjectNoDestructorSync);
  if (created != cudaSuccess) {
    (void)cudaGetLastError();
    delete holder;
    RetireScopedMemoryOwner(fp->pool.get());
    CUCTX_ERR << "cuctx: cudaUserObjectCreate failed (" << cudaGetErrorName(created)
              << "): cannot tie a memory pool to a CUDA graph captured outside cuctx";
  }
  g_alive.fetch_add(1, std::memory_order_relaxed);
  // The graph takes our reference; from now on CUDA decides when the pool goes.
  const cudaError_t retained = cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove);
  if (retained != cudaSuccess) {
    (void)cudaGetLastError();
    cudaUserObjectRelease(object, 1);  // runs PoolGone: the pool is queued and drained later
    CUCTX_ERR << "cuctx: cudaGraphRetainUserObject failed (" << cudaGetErrorName(retained)
              << "): cannot tie a memory pool to a CUDA graph captured outside cuctx";
  }
  t_capture.id = id;
  t_capture.pool = fp;
  return fp;
}
#endif

}  // namespace

#if CUCTX_HAVE_CUDA
void* ForeignCaptureMalloc(size_t bytes, const CuAllocatorOptions& options) {
  return CurrentPool(options)->pool->Malloc(bytes);
}

void* ForeignCaptureMallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch,
                                const CuAllocatorOptions& options) {
  return CurrentPool(options)->pool->MallocPitch(row_bytes, num_rows, pitch);
}

void ForeignCaptureFree(void* ptr, const CuAllocatorOptions& options) {
  std::shared_ptr<ForeignPool> fp = CurrentPool(options);
  if (fp->pool->FreeIfOwned(ptr)) return;
  std::lock_guard<std::mutex> lock(fp->mutex);
  fp->adopted.push_back(ptr);
}
#else
void* ForeignCaptureMalloc(size_t, const CuAllocatorOptions&) {
  CUCTX_ERR << "ForeignCaptureMalloc: cuctx was built without CUDA";
}
void* ForeignCaptureMallocPitch(size_t, size_t, size_t*, const CuAllocatorOptions&) {
  CUCTX_ERR << "ForeignCaptureMallocPitch: cuctx was built without CUDA";
}
void ForeignCaptureFree(void*, const CuAllocatorOptions&) {
  CUCTX_ERR << "ForeignCaptureFree: cuctx was built without CUDA";
}
#endif

int ReleaseDeadForeignPools(const std::function<void(void*)>& free_eager) {
  std::vector<std::shared_ptr<ForeignPool>> pools;
  {
    DeadList& d = Dead();
    std::lock_guard<std::mutex> lock(d.mutex);
    pools.swap(d.pools);
    g_dead_foreign_pools.fetch_sub(static_cast<int>(pools.size()), std::memory_order_relaxed);
  }
  for (std::shared_ptr<ForeignPool>& fp : pools) {
    std::vector<void*> adopted;
    {
      std::lock_guard<std::mutex> lock(fp->mutex);
      adopted.swap(fp->adopted);
    }
    for (void* p : adopted) {
      try {
        free_eager(p);
      } catch (const std::exception& e) {
        CUCTX_WARN << "giving back eager memory kept by a foreign capture's graph: " << e.what();
      }
    }
    // Dropped now if none of its memory is in use, else once its escaped memory is freed.
    RetireScopedMemoryOwner(fp->pool.get());
    fp.reset();
    g_alive.fetch_sub(1, std::memory_order_relaxed);
  }
  return static_cast<int>(pools.size());
}

int ForeignPoolsAlive() { return g_alive.load(std::memory_order_relaxed); }

}  // namespace internal
}  // namespace cuctx
