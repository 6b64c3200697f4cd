// cudamatrix/cu-launch.cuh: how the kernel files launch their kernels (.cu files only).
// SPDX-License-Identifier: Apache-2.0
//
// Every cuctx kernel is launched by internal::Launch, in place of the triple-chevron syntax:
//   internal::Launch<ScaleKernel<Real>>(CUCTX_LAUNCH_SITE("ScaleKernel"), grid, block, 0, stream,
//                                       d, alpha, data);
// It calls the driver's cuLaunchKernel with the kernel's context-independent handle (CUkernel,
// from cudaGetKernel once per kernel and process), and checks the launch's own status: no
// cudaGetLastError() afterwards. A failed launch throws cuctx::CudaError naming the kernel, the
// device and the launching function's file:line; in sync-check mode (CUCTX_SYNC_CHECKS=1, DEBUG=1
// builds) the thread's stream is then waited for, as after every launch, unless it is being
// captured.
//
// Why not the chevrons: at Kaldi's sizes up to 256 x 256 an op costs what its launch costs on the
// host (the GPU runs a small kernel in 1-2 us, the host needs 3-4 us to issue it), and the runtime's
// launch path adds its own lookups on top of the driver's. Measured on an NVIDIA H200 (driver
// 580, CUDA 13.0; tools/launch-bench/launch-paths.cu, 16 rounds of 20,000 launches of one 16 x 16
// kernel, order rotated, medians of paired ratios): chevrons + cudaGetLastError 3.23 us per
// launch, cuLaunchKernel with the CUkernel 3.07 us (0.946 of it), with a per-context CUfunction
// 3.00 us (0.929). The CUkernel is used because it is valid in every context and on every device,
// so no per-device cache is needed.
//
// Thread-safety: Launch may be called from any thread; each kernel's handle is a function-local
// static (initialised once, thread-safe). Stream: the one passed (the thread's per-thread stream
// for every launcher in cuctx); a launch into a capturing stream is captured as with chevrons.
#ifndef CUCTX_CUDAMATRIX_CU_LAUNCH_CUH_
#define CUCTX_CUDAMATRIX_CU_LAUNCH_CUH_

#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-launch.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace cuctx {
namespace internal {

// Where a launch is written: the kernel's name for messages and the launching code's position.
struct LaunchSite {
  const char* kernel;
  const char* func;
  const char* file;
  int line;
};

// The driver's cuLaunchKernel, looked up once (cuctx does not link against libcuda); throws when
// the driver has none.
using DriverLaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, CUstream, void**, void**);
DriverLaunchFn LookUpDriverLaunch();

// The context-independent handle of the kernel whose host entry is `entry`; throws naming it.
CUkernel LookUpKernel(const void* entry, const LaunchSite& site);

// Called after a launch whose status is not CUDA_SUCCESS (throws) or in sync-check mode (waits
// for the stream unless it is being captured, and throws on an error found there).
void FinishLaunch(int status, CuStream stream, const LaunchSite& site);

// The parameter types of a kernel, without top-level const, as a tuple that holds the arguments.
template <typename Kernel>
struct KernelParams;
template <typename... P>
struct KernelParams<void (*)(P...)> {
  using Values = std::tuple<std::decay_t<P>...>;
};

inline DriverLaunchFn DriverLaunch() {
  static const DriverLaunchFn fn = LookUpDriverLaunch();
  return fn;
}

// Launches kKernel with `args` converted to its parameter types (as a chevron call converts
// them) on `stream`; see the file comment.
template <auto kKernel, typename... Args>
void Launch(const LaunchSite& site, dim3 grid, dim3 block, size_t shared_bytes, CuStream stream,
            Args&&... args) {
  static const CUkernel kernel = LookUpKernel(reinterpret_cast<const void*>(kKernel), site);
  typename KernelParams<decltype(kKernel)>::Values values(std::forward<Args>(args)...);
  const CUresult status = std::apply(
      [&](auto&... value) {
        void* params[sizeof...(value) + 1] = {static_cast<void*>(&value)...};
        return DriverLaunch()(reinterpret_cast<CUfunction>(kernel), grid.x, grid.y, grid.z, block.x,
                              block.y, block.z, static_cast<unsigned>(shared_bytes), stream, params,
                              nullptr);
      },
      values);
  if (status != CUDA_SUCCESS || SyncChecksEnabled()) FinishLaunch(status, stream, site);
}

}  // namespace internal
}  // namespace cuctx

#define CUCTX_LAUNCH_SITE(kernel_name) \
  ::cuctx::internal::LaunchSite { (kernel_name), __func__, __FILE__, __LINE__ }

// Registers this .cu file's kernels for loading before their first launch (LoadCuctxKernels,
// internal/cu-launch.h): written once in every file that defines kernels, at global scope. It
// adds an empty kernel whose module is the file's own.
#define CUCTX_KERNEL_FILE()                                             \
  namespace {                                                           \
  __global__ void CuctxKernelFileAnchor() {}                            \
  const ::cuctx::internal::KernelFileAnchor kCuctxKernelFileAnchor(     \
      reinterpret_cast<const void*>(&CuctxKernelFileAnchor), __FILE__); \
  }

#endif  // CUCTX_CUDAMATRIX_CU_LAUNCH_CUH_
