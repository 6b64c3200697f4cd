// cudamatrix/internal/cu-nccl-lib.h: entry points of the NCCL library, loaded at run time with
// dlopen (libnccl.so.2, then libnccl.so), so that libcuctx never links against NCCL and still
// loads on machines without it. Private: for cu-nccl.cc and for benchmarks that time raw NCCL
// calls as their baseline through the same library.
//
// Thread-safety: NcclFunction() may be called from any thread; the library is loaded once and
// never unloaded.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_NCCL_LIB_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_NCCL_LIB_H_

namespace cuctx {
namespace internal {

// The NCCL function `name` (e.g. "ncclAllReduce"), loading the library on first use. Throws
// cuctx::Error if the library cannot be loaded (naming it, with dlerror() and what to install),
// if it lacks the symbol, or in a build without NCCL.
void* NcclFunction(const char* name);

// Typed form: `LoadNcclFunction("ncclAllReduce", &fn)` with fn of type decltype(&ncclAllReduce).
template <typename Fn>
void LoadNcclFunction(const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(NcclFunction(name));
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_NCCL_LIB_H_
