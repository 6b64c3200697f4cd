// cudamatrix/cu-allocator-cuda.cc: the CUDA upstream of CuMemoryAllocator (cudaMalloc/cudaFree).
// SPDX-License-Identifier: Apache-2.0
//
// One of the few files that may call cudaMalloc or cudaFree (tools/lint.sh; cu-allocator-upstream.h
// lists them).
#include "base/error.h"
#include "cudamatrix/cu-allocator-upstream.h"

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-device-scope.h"

#include <cuda_runtime.h>

#include <sstream>
#include <utility>
#endif

namespace cuctx {

#if CUCTX_HAVE_CUDA
namespace {

class CudaAllocatorUpstream : public CuAllocatorUpstream {
 public:
  explicit CudaAllocatorUpstream(std::function<void()> synchronize_gpu)
      : synchronize_gpu_(std::move(synchronize_gpu)) {
    CUCTX_CUDA_CHECK(cudaGetDevice(&device_));
  }

  void* Allocate(size_t bytes) override {
    void* ptr = nullptr;
    const cudaError_t status = cudaMalloc(&ptr, bytes);
    if (status == cudaErrorMemoryAllocation) {
      // Not sticky, but it stays in cudaGetLastError() and would be blamed on the next launch.
      (void)cudaGetLastError();
      return nullptr;
    }
    CUCTX_CUDA_CHECK(status);
    return ptr;
  }

  void Release(void* ptr, size_t) noexcept override {
    // cudaFree waits for all queued work on the device, so no stream can still use the region;
    // CUDA refuses it while a graph capture runs.
    // A capturing thread releases only its graph's private pool, which no device work has used.
    try {
      auto release = [ptr] { CUCTX_CUDA_CHECK(cudaFree(ptr)); };
      if (internal::ThreadCapturing())
        internal::RunInRelaxedCaptureMode(release);
      else
        internal::OutsideCapturesToRelease(device_, release);
    } catch (const std::exception& e) {
      CUCTX_WARN << "releasing device memory: " << e.what();
    }
  }

  void SynchronizeAllStreams() override {
    if (synchronize_gpu_) {
      synchronize_gpu_();
    } else {
      internal::OutsideCaptures(device_, [this] {
        internal::DeviceScope scope(device_);
        CUCTX_CUDA_CHECK(scope.Status());
        CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
      });
    }
  }

  void MemoryInfo(size_t* free_bytes, size_t* total_bytes) override {
    internal::DeviceScope scope(device_);  // asked from a thread of another device at times
    CUCTX_CUDA_CHECK(scope.Status());
    CUCTX_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
  }

  std::string Name() const override {
    std::ostringstream name;
    name << "CUDA device " << device_;
    return name.str();
  }

 private:
  std::function<void()> synchronize_gpu_;
  int device_ = -1;
};

}  // namespace

std::unique_ptr<CuAllocatorUpstream> NewCudaAllocatorUpstream(
    std::function<void()> synchronize_gpu) {
  return std::make_unique<CudaAllocatorUpstream>(std::move(synchronize_gpu));
}

#else  // !CUCTX_HAVE_CUDA

std::unique_ptr<CuAllocatorUpstream> NewCudaAllocatorUpstream(std::function<void()>) {
  CUCTX_ERR << "NewCudaAllocatorUpstream: cuctx was built without CUDA (CUDA=0)";
}

#endif  // CUCTX_HAVE_CUDA

}  // namespace cuctx
