// cudamatrix/cu-check.h: status checks for CUDA, cuBLAS, cuSPARSE, cuRAND and cuSOLVER calls.
// SPDX-License-Identifier: Apache-2.0
//
// One generator makes every message the same shape (one line, shown here in two):
//   cublasSgemm(handle, ...) failed: CUBLAS_STATUS_EXECUTION_FAILED (...) [device 0]
//     in AddMatMat at cudamatrix/cu-matrix.cc:412
// Use only in .cu files and in .cc code under `#if CUCTX_HAVE_CUDA`. The header itself needs no
// CUDA header: statuses are passed as int. Out-of-memory statuses throw cuctx::OutOfMemoryError,
// all others cuctx::CudaError (see base/error.h).
#ifndef CUCTX_CUDAMATRIX_CU_CHECK_H_
#define CUCTX_CUDAMATRIX_CU_CHECK_H_

#include "base/error.h"

namespace cuctx {
namespace internal {

// kCuDriverLib: CUresult from the driver API (reached through cudaGetDriverEntryPointByVersion;
// nothing links against libcuda).
enum StatusLibrary { kCudaLib, kCuDriverLib, kCublasLib, kCusparseLib, kCurandLib, kCusolverLib };

// Throws CudaError (or OutOfMemoryError) describing a failed call.
[[noreturn]] void ThrowStatus(StatusLibrary lib, int status, const char* call, const char* func,
                              const char* file, int line);

// Logs a warning describing a failed call; never throws. Used in destructors and at shutdown;
// cudaErrorCudartUnloading is ignored silently.
void WarnStatus(StatusLibrary lib, int status, const char* call, const char* func, const char* file,
                int line);

// Checks cudaGetLastError() after a launch made by a library through the runtime (cub's scans;
// cuctx's own kernels go through internal::Launch of cu-launch.cuh, which checks its launch); in
// sync-check mode (DEBUG=1 builds or CUCTX_SYNC_CHECKS=1 in the environment) also synchronizes
// the calling thread's stream so that an asynchronous fault is reported at the launch that caused
// it.
void CheckLaunch(const char* kernel, const char* func, const char* file, int line);

// True when sync-check mode is on.
bool SyncChecksEnabled();

// Sync-check mode's wait after a launch: synchronizes `stream` (a cudaStream_t) and returns its
// cudaError_t, or returns cudaSuccess at once while the calling thread or the stream captures a
// graph (a captured launch runs later, and waiting would break the capture).
int SyncAfterLaunch(void* stream);

}  // namespace internal
}  // namespace cuctx

#define CUCTX_STATUS_CHECK_(call, ok, lib)                                                  \
  do {                                                                                      \
    const auto cuctx_status_ = (call);                                                      \
    if (cuctx_status_ != (ok))                                                              \
      ::cuctx::internal::ThrowStatus(lib, static_cast<int>(cuctx_status_), #call, __func__, \
                                     __FILE__, __LINE__);                                   \
  } while (0)

#define CUCTX_CUDA_CHECK(call) CUCTX_STATUS_CHECK_(call, cudaSuccess, ::cuctx::internal::kCudaLib)
#define CUCTX_CU_CHECK(call) \
  CUCTX_STATUS_CHECK_(call, CUDA_SUCCESS, ::cuctx::internal::kCuDriverLib)
#define CUCTX_CUBLAS_CHECK(call) \
  CUCTX_STATUS_CHECK_(call, CUBLAS_STATUS_SUCCESS, ::cuctx::internal::kCublasLib)
#define CUCTX_CUSPARSE_CHECK(call) \
  CUCTX_STATUS_CHECK_(call, CUSPARSE_STATUS_SUCCESS, ::cuctx::internal::kCusparseLib)
#define CUCTX_CURAND_CHECK(call) \
  CUCTX_STATUS_CHECK_(call, CURAND_STATUS_SUCCESS, ::cuctx::internal::kCurandLib)
#define CUCTX_CUSOLVER_CHECK(call) \
  CUCTX_STATUS_CHECK_(call, CUSOLVER_STATUS_SUCCESS, ::cuctx::internal::kCusolverLib)

#define CUCTX_STATUS_CHECK_NOTHROW_(call, ok, lib)                                         \
  do {                                                                                     \
    const auto cuctx_status_ = (call);                                                     \
    if (cuctx_status_ != (ok))                                                             \
      ::cuctx::internal::WarnStatus(lib, static_cast<int>(cuctx_status_), #call, __func__, \
                                    __FILE__, __LINE__);                                   \
  } while (0)

#define CUCTX_CUDA_CHECK_NOTHROW(call) \
  CUCTX_STATUS_CHECK_NOTHROW_(call, cudaSuccess, ::cuctx::internal::kCudaLib)
#define CUCTX_CU_CHECK_NOTHROW(call) \
  CUCTX_STATUS_CHECK_NOTHROW_(call, CUDA_SUCCESS, ::cuctx::internal::kCuDriverLib)

#define CUCTX_CUDA_CHECK_LAUNCH(name) \
  ::cuctx::internal::CheckLaunch((name), __func__, __FILE__, __LINE__)

#endif  // CUCTX_CUDAMATRIX_CU_CHECK_H_
