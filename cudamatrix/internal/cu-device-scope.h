// cudamatrix/internal/cu-device-scope.h: makes a device current for one scope (CUDA builds only).
// SPDX-License-Identifier: Apache-2.0
//
// Internal to cudamatrix/; include only under `#if CUCTX_HAVE_CUDA`. Used where one thread does
// work for a device other than its own: per-device allocators freeing or synchronizing, device
// set-up, copies between devices.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_DEVICE_SCOPE_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_DEVICE_SCOPE_H_

#include "cudamatrix/cu-check.h"

#include <cuda_runtime.h>

namespace cuctx {
namespace internal {

// Makes `device` current for the scope when another one is, and restores the caller's device
// afterwards. Reports failures through Status() instead of throwing, so that noexcept paths
// (releases, destructors) can use it too. Not copyable; one thread.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    status_ = cudaGetDevice(&previous_);
    if (status_ == cudaSuccess && previous_ != device) {
      status_ = cudaSetDevice(device);
      restore_ = status_ == cudaSuccess;
    }
  }
  ~DeviceScope() {
    if (restore_) CUCTX_CUDA_CHECK_NOTHROW(cudaSetDevice(previous_));
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

  cudaError_t Status() const { return status_; }

 private:
  cudaError_t status_ = cudaSuccess;
  int previous_ = -1;
  bool restore_ = false;
};

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_DEVICE_SCOPE_H_
