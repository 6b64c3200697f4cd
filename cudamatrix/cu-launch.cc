// cudamatrix/cu-launch.cc: the out-of-line parts of internal::Launch (cu-launch.cuh).
// SPDX-License-Identifier: Apache-2.0
#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-launch.cuh"

#include "cudamatrix/internal/cu-driver.h"

#include <string>

namespace cuctx {
namespace internal {

DriverLaunchFn LookUpDriverLaunch() {
  DriverLaunchFn fn = nullptr;
  std::string why_not;
  if (!LoadDriverFunction("cuLaunchKernel", &fn, &why_not))
    CUCTX_ERR << "cannot launch kernels: " << why_not;
  return fn;
}

CUkernel LookUpKernel(const void* entry, const LaunchSite& site) {
  cudaKernel_t kernel = nullptr;
  const cudaError_t e = cudaGetKernel(&kernel, entry);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // reported here, not by the next call that reads the last error
    const std::string call = std::string("cudaGetKernel(") + site.kernel + ")";
    ThrowStatus(kCudaLib, e, call.c_str(), site.func, site.file, site.line);
  }
  return reinterpret_cast<CUkernel>(kernel);
}

void FinishLaunch(int status, CuStream stream, const LaunchSite& site) {
  const std::string call = std::string("launch of ") + site.kernel;
  if (status != CUDA_SUCCESS)
    ThrowStatus(kCuDriverLib, status, call.c_str(), site.func, site.file, site.line);
  const int e = SyncAfterLaunch(stream);
  if (e != cudaSuccess) ThrowStatus(kCudaLib, e, call.c_str(), site.func, site.file, site.line);
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_HAVE_CUDA
