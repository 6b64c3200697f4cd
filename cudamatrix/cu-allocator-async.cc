// cudamatrix/cu-allocator-async.cc: the stream-ordered upstream (cudaMallocAsync on a memory pool
// of its own) and NewDeviceMemoryAllocator, the choice of backend.
// SPDX-License-Identifier: Apache-2.0
//
// With cu-allocator-cuda.cc and cu-allocator-vmm.cc this is one of the files that may allocate
// device memory directly (`make lint`).
#include "cudamatrix/cu-allocator-async.h"

#include "base/error.h"
#include "cudamatrix/cu-fault-injection.h"

#include <utility>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-device-scope.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <sstream>
#endif

namespace cuctx {

#if CUCTX_HAVE_CUDA
namespace {

using internal::DeviceScope;

class AsyncAllocatorUpstream : public CuAllocatorUpstream {
 public:
  explicit AsyncAllocatorUpstream(std::function<void()> synchronize_gpu)
      : synchronize_gpu_(std::move(synchronize_gpu)) {
    CUCTX_CUDA_CHECK(cudaGetDevice(&device_));
    int supported = 0;
    CUCTX_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device_));
    CUCTX_CHECK(supported != 0) << "--cuda-allocator=async: device " << device_
                                << " does not support stream-ordered memory pools "
                                   "(cudaDevAttrMemoryPoolsSupported is 0); use "
                                   "--cuda-allocator=caching";
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device_;
    CUCTX_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
    // The default threshold (0) would hand freed memory back to the device at every
    // synchronization, so that the next allocation pays for mapping it again.
    uint64_t threshold = UINT64_MAX;
    const cudaError_t status =
        cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold);
    if (status != cudaSuccess) {
      CUCTX_CUDA_CHECK_NOTHROW(cudaMemPoolDestroy(pool_));
      CUCTX_CUDA_CHECK(status);
    }
  }

  ~AsyncAllocatorUpstream() override {
    DeviceScope scope(device_);
    if (scope.Status() == cudaSuccess) CUCTX_CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
    CUCTX_CUDA_CHECK_NOTHROW(cudaMemPoolDestroy(pool_));
  }

  void* Allocate(size_t bytes) override {
    DeviceScope scope(device_);
    CUCTX_CUDA_CHECK(scope.Status());
    void* ptr = TryAllocate(bytes);
    if (ptr == nullptr) {
      // Freed memory stays in the pool (threshold above), in chunks that may be too small for
      // this request while they keep the device from backing a larger one; and frees queued on
      // streams may not have run yet. So wait for them, give the unused chunks back, and retry.
      if (FaultInjector::ShouldFail(FaultSite::kStream))
        FaultInjector::Throw(FaultSite::kStream,
                             "cudaDeviceSynchronize (before trimming the pool)");
      internal::OutsideCaptures(device_, [] { CUCTX_CUDA_CHECK(cudaDeviceSynchronize()); });
      CUCTX_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
      ptr = TryAllocate(bytes);
    }
    return ptr;
  }

  void Release(void* ptr, size_t) noexcept override {
    DeviceScope scope(device_);
    CUCTX_CUDA_CHECK_NOTHROW(scope.Status());
    CUCTX_CUDA_CHECK_NOTHROW(cudaFreeAsync(ptr, cudaStreamPerThread));
  }

  void SynchronizeAllStreams() override {
    if (FaultInjector::ShouldFail(FaultSite::kStream))
      FaultInjector::Throw(FaultSite::kStream, "SynchronizeAllStreams (cudaDeviceSynchronize)");
    if (synchronize_gpu_) {
      synchronize_gpu_();
    } else {
      DeviceScope scope(device_);
      CUCTX_CUDA_CHECK(scope.Status());
      internal::OutsideCaptures(device_, [] { CUCTX_CUDA_CHECK(cudaDeviceSynchronize()); });
    }
  }

  void GrantPeerAccess(int peer) override {
    cudaMemAccessDesc desc = {};
    desc.location.type = cudaMemLocationTypeDevice;
    desc.location.id = peer;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    CUCTX_CUDA_CHECK(cudaMemPoolSetAccess(pool_, &desc, 1));
  }

  void MemoryInfo(size_t* free_bytes, size_t* total_bytes) override {
    if (FaultInjector::ShouldFail(FaultSite::kDevice))
      FaultInjector::Throw(FaultSite::kDevice, "cudaMemGetInfo(&free_bytes, &total_bytes)");
    DeviceScope scope(device_);
    CUCTX_CUDA_CHECK(scope.Status());
    CUCTX_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
  }

  std::string Name() const override {
    std::ostringstream name;
    name << "CUDA device " << device_ << " (cudaMallocAsync pool)";
    return name.str();
  }

 private:
  // One cudaMallocAsync from our pool (not the device's current pool, which other code may use or
  // replace) on the calling thread's stream; nullptr when the device is out of memory.
  void* TryAllocate(size_t bytes) {
    // CUCTX_FAULT_INJECT: fails as the pool being out of memory (before the driver is asked, so
    // nothing is allocated).
    if (FaultInjector::ShouldFail(FaultSite::kDevice)) return nullptr;
    void* ptr = nullptr;
    const cudaError_t status = cudaMallocFromPoolAsync(&ptr, bytes, pool_, cudaStreamPerThread);
    if (status == cudaErrorMemoryAllocation) {
      // Not sticky, but it stays in cudaGetLastError() and would be blamed on the next launch.
      (void)cudaGetLastError();
      return nullptr;
    }
    CUCTX_CUDA_CHECK(status);
    return ptr;
  }

  std::function<void()> synchronize_gpu_;
  int device_ = -1;
  cudaMemPool_t pool_ = nullptr;
};

}  // namespace

std::unique_ptr<CuAllocatorUpstream> NewAsyncAllocatorUpstream(
    std::function<void()> synchronize_gpu) {
  return std::make_unique<AsyncAllocatorUpstream>(std::move(synchronize_gpu));
}

std::unique_ptr<CuMemoryAllocator> NewDeviceMemoryAllocator(const CuAllocatorOptions& options,
                                                            std::function<void()> synchronize_gpu,
                                                            std::string* note) {
  options.Check();
  if (options.backend == "async") {
    if (note != nullptr) note->clear();
    CuAllocatorOptions pass_through = options;
    pass_through.cache_memory = false;
    return std::make_unique<CuMemoryAllocator>(
        pass_through, NewAsyncAllocatorUpstream(std::move(synchronize_gpu)));
  }
  return std::make_unique<CuMemoryAllocator>(
      options, NewDeviceAllocatorUpstream(options.upstream, std::move(synchronize_gpu), note));
}

#else  // !CUCTX_HAVE_CUDA

std::unique_ptr<CuAllocatorUpstream> NewAsyncAllocatorUpstream(std::function<void()>) {
  CUCTX_ERR << "NewAsyncAllocatorUpstream: cuctx was built without CUDA (CUDA=0)";
}

std::unique_ptr<CuMemoryAllocator> NewDeviceMemoryAllocator(const CuAllocatorOptions&,
                                                            std::function<void()>, std::string*) {
  CUCTX_ERR << "NewDeviceMemoryAllocator: cuctx was built without CUDA (CUDA=0)";
}

#endif  // CUCTX_HAVE_CUDA

}  // namespace cuctx
