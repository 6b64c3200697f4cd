// cudamatrix/cu-check.cc: turns CUDA-family status codes into cuctx::CudaError messages.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/internal/cu-driver.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

namespace cuctx {
namespace internal {
namespace {

// cuRAND and cuSOLVER have no status-to-string function.
const char* CurandName(int s) {
  switch (s) {
    case CURAND_STATUS_VERSION_MISMATCH:
      return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED:
      return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED:
      return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR:
      return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE:
      return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE:
      return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED:
      return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE:
      return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE:
      return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED:
      return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH:
      return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR:
      return "CURAND_STATUS_INTERNAL_ERROR";
    default:
      return "CURAND_STATUS_UNKNOWN";
  }
}

const char* CusolverName(int s) {
  switch (s) {
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR:
      return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT:
      return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
      return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default:
      return "CUSOLVER_STATUS_UNKNOWN";
  }
}

// The driver's own names for a CUresult, looked up at run time (nothing links against libcuda).
std::string DriverStatusText(int status) {
  using NameFn = decltype(&cuGetErrorName);
  static const std::pair<NameFn, NameFn> fns = [] {
    NameFn name = nullptr, text = nullptr;
    LoadDriverFunction("cuGetErrorName", &name, nullptr);
    LoadDriverFunction("cuGetErrorString", &text, nullptr);
    return std::make_pair(name, text);
  }();
  const char* name = nullptr;
  const char* text = nullptr;
  const CUresult r = static_cast<CUresult>(status);
  if (fns.first == nullptr || fns.first(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (fns.second == nullptr || fns.second(r, &text) != CUDA_SUCCESS) text = nullptr;
  std::ostringstream out;
  if (name != nullptr)
    out << name;
  else
    out << "CUresult " << status;
  if (text != nullptr) out << " (" << text << ")";
  return out.str();
}

const char* LibraryName(StatusLibrary lib) {
  switch (lib) {
    case kCudaLib:
      return "CUDA";
    case kCuDriverLib:
      return "CUDA driver";
    case kCublasLib:
      return "cuBLAS";
    case kCusparseLib:
      return "cuSPARSE";
    case kCurandLib:
      return "cuRAND";
    case kCusolverLib:
      return "cuSOLVER";
  }
  return "?";
}

std::string StatusText(StatusLibrary lib, int status) {
  std::ostringstream out;
  switch (lib) {
    case kCudaLib: {
      cudaError_t e = static_cast<cudaError_t>(status);
      out << cudaGetErrorName(e) << " (" << cudaGetErrorString(e) << ")";
      break;
    }
    case kCuDriverLib:
      out << DriverStatusText(status);
      break;
    case kCublasLib: {
      cublasStatus_t s = static_cast<cublasStatus_t>(status);
      out << cublasGetStatusName(s) << " (" << cublasGetStatusString(s) << ")";
      break;
    }
    case kCusparseLib: {
      cusparseStatus_t s = static_cast<cusparseStatus_t>(status);
      out << cusparseGetErrorName(s) << " (" << cusparseGetErrorString(s) << ")";
      break;
    }
    case kCurandLib:
      out << CurandName(status);
      break;
    case kCusolverLib:
      out << CusolverName(status);
      break;
  }
  return out.str();
}

bool IsOutOfMemory(StatusLibrary lib, int status) {
  switch (lib) {
    case kCudaLib:
      return status == cudaErrorMemoryAllocation;
    case kCuDriverLib:
      return status == CUDA_ERROR_OUT_OF_MEMORY;
    case kCublasLib:
      return status == CUBLAS_STATUS_ALLOC_FAILED;
    case kCusparseLib:
      return status == CUSPARSE_STATUS_ALLOC_FAILED;
    case kCurandLib:
      return status == CURAND_STATUS_ALLOCATION_FAILED;
    case kCusolverLib:
      return status == CUSOLVER_STATUS_ALLOC_FAILED;
  }
  return false;
}

std::string Describe(StatusLibrary lib, int status, const char* call) {
  int device = -1;
  // Reading the device must not disturb the error state we are reporting.
  if (cudaGetDevice(&device) != cudaSuccess) device = -1;
  std::ostringstream out;
  out << call << " failed: " << StatusText(lib, status) << " [device ";
  if (device >= 0)
    out << device;
  else
    out << "none";
  out << "]";
  return out.str();
}

}  // namespace

void ThrowStatus(StatusLibrary lib, int status, const char* call, const char* func,
                 const char* file, int line) {
  std::string text = Describe(lib, status, call);
  EmitLog(LogMessageEnvelope{kLogError, func, file, line}, text);
  std::string what = WithOrigin(text, func, file, line);
  if (IsOutOfMemory(lib, status)) throw OutOfMemoryError(what, status);
  throw CudaError(what, LibraryName(lib), status);
}

void WarnStatus(StatusLibrary lib, int status, const char* call, const char* func, const char* file,
                int line) {
  if (lib == kCudaLib && status == cudaErrorCudartUnloading) return;
  EmitLog(LogMessageEnvelope{kLogWarning, func, file, line}, Describe(lib, status, call));
}

bool SyncChecksEnabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("CUCTX_SYNC_CHECKS");
    if (env != nullptr && *env != '\0') return std::string(env) != "0";
#ifdef CUCTX_SYNC_CHECKS_DEFAULT
    return true;
#else
    return false;
#endif
  }();
  return enabled;
}

namespace {

// True while the calling thread's stream is being captured, by CuGraph or by a capture begun
// outside cuctx. Asks the driver (tens of ns): only the sync-check mode uses it, which waits for
// the stream after every launch anyway. (The capture watch of cu-capture-gate sits above this
// layer.)
bool StreamCapturingNow(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();  // no context yet: nothing can capture
    return false;
  }
  return status != cudaStreamCaptureStatusNone;  // an invalidated capture must not be waited on
}

}  // namespace

int SyncAfterLaunch(void* stream) {
  // A captured launch runs later; waiting for the stream would break the capture, whoever began
  // it.
  const auto s = static_cast<cudaStream_t>(stream);
  if (internal::ThreadCapturing() || StreamCapturingNow(s)) return cudaSuccess;
  return cudaStreamSynchronize(s);
}

void CheckLaunch(const char* kernel, const char* func, const char* file, int line) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess && SyncChecksEnabled())
    e = static_cast<cudaError_t>(SyncAfterLaunch(cudaStreamPerThread));
  if (e != cudaSuccess) {
    std::string call = std::string("launch of ") + kernel;
    ThrowStatus(kCudaLib, static_cast<int>(e), call.c_str(), func, file, line);
  }
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_HAVE_CUDA
