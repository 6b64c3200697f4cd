// cudamatrix/internal/cu-driver.h: entry points of the CUDA driver API, found at run time through
// the runtime (cudaGetDriverEntryPointByVersion), so that libcuctx never links against libcuda and
// still loads and runs on machines without a driver. Private; only for .cc files under
// `#if CUCTX_HAVE_CUDA`.
//
// Thread-safety: DriverFunction() may be called from any thread; the runtime caches the lookup.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_DRIVER_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_DRIVER_H_

#include <string>

namespace cuctx {
namespace internal {

// The driver function `name` (e.g. "cuMemMap") in its form of CUDA `version` (12000 = 12.0; a
// function added later needs the version that added it), or nullptr with *why_not (if given) set
// to the reason: no driver, a driver too old, or no such symbol.
void* DriverFunction(const char* name, std::string* why_not, unsigned version = 12000);

// Typed form: `LoadDriverFunction("cuMemMap", &fn, &why)` with fn of type decltype(&cuMemMap).
template <typename Fn>
bool LoadDriverFunction(const char* name, Fn* fn, std::string* why_not, unsigned version = 12000) {
  *fn = reinterpret_cast<Fn>(DriverFunction(name, why_not, version));
  return *fn != nullptr;
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_DRIVER_H_
