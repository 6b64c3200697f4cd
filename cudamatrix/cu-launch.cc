// cudamatrix/cu-launch.cc: the out-of-line parts of internal::Launch (cu-launch.cuh) and the
// loading of cuctx's kernels before their first launch (internal/cu-launch.h).
// SPDX-License-Identifier: Apache-2.0
#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-launch.cuh"

#include "cudamatrix/internal/cu-driver.h"
#include "cudamatrix/internal/cu-launch.h"

#include <chrono>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

namespace {

// The kernel files registered by CUCTX_KERNEL_FILE: the anchor's host entry and the file name.
struct AnchorList {
  std::mutex mutex;
  std::vector<std::pair<const void*, const char*>> entries;
};

AnchorList& Anchors() {
  static AnchorList* list = new AnchorList;  // never destroyed: anchors register at static init
  return *list;
}

// The driver functions that find a kernel file's module in the current context and load its
// kernels (CUDA 12.4-12.5 additions, looked up in those versions' forms).
struct ModuleLoader {
  decltype(&cuKernelGetLibrary) kernel_library = nullptr;
  decltype(&cuLibraryGetModule) library_module = nullptr;
  decltype(&cuModuleGetFunctionCount) function_count = nullptr;
  decltype(&cuModuleEnumerateFunctions) enumerate = nullptr;
  decltype(&cuFuncIsLoaded) is_loaded = nullptr;
  decltype(&cuFuncLoad) load = nullptr;
  std::string why_not;  // empty when every function was found
};

const ModuleLoader& Loader() {
  static const ModuleLoader loader = [] {
    ModuleLoader l;
    const bool found =
        LoadDriverFunction("cuKernelGetLibrary", &l.kernel_library, &l.why_not, 12050) &&
        LoadDriverFunction("cuLibraryGetModule", &l.library_module, &l.why_not) &&
        LoadDriverFunction("cuModuleGetFunctionCount", &l.function_count, &l.why_not, 12040) &&
        LoadDriverFunction("cuModuleEnumerateFunctions", &l.enumerate, &l.why_not, 12040) &&
        LoadDriverFunction("cuFuncIsLoaded", &l.is_loaded, &l.why_not, 12040) &&
        LoadDriverFunction("cuFuncLoad", &l.load, &l.why_not, 12040);
    if (found) l.why_not.clear();
    return l;
  }();
  return loader;
}

// Loads the kernels of the module of kernel file `file` (anchor `entry`) that are not loaded yet
// into the current context; `seen` skips a module met before. Returns "" or what failed.
std::string LoadKernelFile(const ModuleLoader& fn, const void* entry, const char* file,
                           std::set<CUmodule>* seen, KernelLoadSummary* summary) {
  std::ostringstream failure;
  failure << file << ": ";
  cudaKernel_t kernel = nullptr;
  const cudaError_t e = cudaGetKernel(&kernel, entry);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    failure << "cudaGetKernel: " << cudaGetErrorName(e);
    return failure.str();
  }
  CUlibrary library = nullptr;
  CUmodule module = nullptr;
  unsigned count = 0;
  const char* call = "cuKernelGetLibrary";
  CUresult r = fn.kernel_library(&library, reinterpret_cast<CUkernel>(kernel));
  if (r == CUDA_SUCCESS) {
    call = "cuLibraryGetModule";  // loads the module into the current context
    r = fn.library_module(&module, library);
  }
  if (r == CUDA_SUCCESS) {
    call = "cuModuleGetFunctionCount";
    r = fn.function_count(&count, module);
  }
  std::vector<CUfunction> functions(count);
  if (r == CUDA_SUCCESS && count > 0) {
    call = "cuModuleEnumerateFunctions";
    r = fn.enumerate(functions.data(), count, module);
  }
  if (r != CUDA_SUCCESS) {
    failure << call << " returned CUresult " << r;
    return failure.str();
  }
  if (!seen->insert(module).second) return "";
  ++summary->files;
  int failed = 0;
  r = CUDA_SUCCESS;
  for (CUfunction f : functions) {
    ++summary->kernels;
    CUfunctionLoadingState state = CU_FUNCTION_LOADING_STATE_UNLOADED;
    if (fn.is_loaded(&state, f) == CUDA_SUCCESS && state == CU_FUNCTION_LOADING_STATE_LOADED)
      continue;
    const CUresult load = fn.load(f);
    if (load == CUDA_SUCCESS) {
      ++summary->loaded;
    } else {
      ++failed;
      r = load;
    }
  }
  if (failed == 0) return "";
  failure << "cuFuncLoad failed for " << failed << " of " << count << " kernels (CUresult " << r
          << ")";
  return failure.str();
}

}  // namespace

KernelFileAnchor::KernelFileAnchor(const void* entry, const char* file) {
  AnchorList& anchors = Anchors();
  std::lock_guard<std::mutex> lock(anchors.mutex);
  anchors.entries.emplace_back(entry, file);
}

bool LoadCuctxKernels(KernelLoadSummary* summary, std::string* why_not) {
  const auto start = std::chrono::steady_clock::now();
  *summary = KernelLoadSummary();
  const ModuleLoader& fn = Loader();
  if (!fn.why_not.empty()) {
    *why_not = fn.why_not;
    return false;
  }
  std::vector<std::pair<const void*, const char*>> entries;
  {
    AnchorList& anchors = Anchors();
    std::lock_guard<std::mutex> lock(anchors.mutex);
    entries = anchors.entries;
  }
  std::set<CUmodule> seen;
  std::string failures;
  for (const auto& [entry, file] : entries) {
    const std::string failure = LoadKernelFile(fn, entry, file, &seen, summary);
    if (!failure.empty()) failures += (failures.empty() ? "" : "; ") + failure;
  }
  summary->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failures.empty()) return true;
  *why_not = failures;
  return false;
}

}  // namespace internal
}  // namespace cuctx

#else  // !CUCTX_HAVE_CUDA
#include "cudamatrix/internal/cu-launch.h"

namespace cuctx {
namespace internal {

bool LoadCuctxKernels(KernelLoadSummary* summary, std::string* why_not) {
  *summary = KernelLoadSummary();
  *why_not = "cuctx was built without CUDA (CUDA=0)";
  return false;
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_HAVE_CUDA
