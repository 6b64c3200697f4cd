// cudamatrix/cu-driver.cc: run-time lookup of CUDA driver API entry points (internal/cu-driver.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-driver.h"

#if CUCTX_HAVE_CUDA
#include <cuda_runtime.h>

#include <sstream>

namespace cuctx {
namespace internal {

void* DriverFunction(const char* name, std::string* why_not, unsigned version) {
  // `version`: the API version whose signatures the callers' decltype(&cuX) types describe
  // (cuda.h of the toolkit maps unversioned names to these).
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t e =
      cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found);
  if (e == cudaSuccess && found == cudaDriverEntryPointSuccess && fn != nullptr) return fn;
  (void)cudaGetLastError();  // a missing driver is an answer here, not an error to keep
  if (why_not != nullptr) {
    std::ostringstream out;
    out << "driver entry point " << name << ": ";
    if (e != cudaSuccess)
      out << cudaGetErrorName(e) << " (" << cudaGetErrorString(e) << ")";
    else if (found == cudaDriverEntryPointVersionNotSufficent)
      out << "the driver is older than CUDA " << version / 1000 << "." << version % 1000 / 10;
    else
      out << "not found in the driver";
    *why_not = out.str();
  }
  return nullptr;
}

}  // namespace internal
}  // namespace cuctx

#else  // !CUCTX_HAVE_CUDA

namespace cuctx {
namespace internal {

void* DriverFunction(const char*, std::string* why_not, unsigned) {
  if (why_not != nullptr) *why_not = "cuctx was built without CUDA (CUDA=0)";
  return nullptr;
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_HAVE_CUDA
