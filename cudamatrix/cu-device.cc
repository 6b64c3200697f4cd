// cudamatrix/cu-device.cc: CuDevice, the facade over the per-device registry
// (cu-device-registry.cc): this thread's device, its library handles, memory, profiling.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-device.h"

#include "base/error.h"
#include "base/options-itf.h"
#include "base/random.h"
#include "cudamatrix/cu-allocator-options.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/internal/cu-alloc-scope.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-device-registry.h"
#include "cudamatrix/internal/cu-foreign-capture.h"
#include "cudamatrix/internal/cu-thread-state.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-launch.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>
#include <cusparse.h>
#endif

namespace cuctx {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

CuDevice& CuDevice::Instantiate() {
  thread_local CuDevice device;
  return device;
}

CuDevice::CuDevice() { AttachToSelectedDevice(); }

void CuDevice::AttachToSelectedDevice() {
#if CUCTX_HAVE_CUDA
  int id = DeviceId();
  if (id >= 0 && id != device_id_) {
    CUCTX_CUDA_CHECK(cudaSetDevice(id));
    device_id_ = id;
  }
#endif
}

CuDevice::~CuDevice() { DestroyHandles(); }

#if CUCTX_HAVE_CUDA
namespace {

// Creating or destroying a cuBLAS, cuSPARSE, cuRAND or cuSOLVER handle may free or allocate device
// memory, wait for the device, or run work on the legacy default stream (the libraries are built
// without the per-thread default stream); any of these invalidates a capture running in another
// thread of the device (cudaErrorStreamCaptureInvalidated there). Seen on an H200: cublasDestroy
// and cusolverDnDestroy call cudaDeviceSynchronize (error ignored inside the library), so a thread
// that ended during another thread's capture broke it. So it runs once no CuGraph capture runs on
// `device`, and never inside one.
void OutsideCapturesForHandle(int device, const char* what, const std::function<void()>& call) {
  internal::CheckNotCapturing(what);
  internal::OutsideCaptures(device, call);
}

}  // namespace
#endif

void CuDevice::DestroyHandles() noexcept {
#if CUCTX_HAVE_CUDA
  if (cublas_ == nullptr && cusparse_ == nullptr && curand_ == nullptr && cusolver_ == nullptr)
    return;
  // Thread exit or a new binding: destroy this thread's handles without throwing, outside other
  // threads' captures (OutsideCapturesForHandle); if that fails, destroy them anyway, unless this
  // thread captures itself.
  bool done = false;
  try {
    OutsideCapturesForHandle(device_id_, "destroying the thread's library handles", [this, &done] {
      DestroyHandlesNow();
      done = true;
    });
  } catch (const std::exception& e) {
    CUCTX_WARN << "destroying the thread's library handles: " << e.what();
  }
  if (done) return;
  if (internal::ThreadCapturing() || internal::ThreadStreamCapturing()) {
    // Destroying them now would break this thread's own capture: they are left alone (leaked).
    cublas_ = nullptr;
    cusparse_ = nullptr;
    curand_ = nullptr;
    cusolver_ = nullptr;
    return;
  }
  DestroyHandlesNow();
#endif
}

void CuDevice::DestroyHandlesNow() noexcept {
#if CUCTX_HAVE_CUDA
  if (cublas_ != nullptr) {
    cublasStatus_t s = cublasDestroy(cublas_);
    if (s != CUBLAS_STATUS_SUCCESS)
      internal::WarnStatus(internal::kCublasLib, s, "cublasDestroy", __func__, __FILE__, __LINE__);
  }
  if (cusparse_ != nullptr) {
    cusparseStatus_t s = cusparseDestroy(cusparse_);
    if (s != CUSPARSE_STATUS_SUCCESS)
      internal::WarnStatus(internal::kCusparseLib, s, "cusparseDestroy", __func__, __FILE__,
                           __LINE__);
  }
  if (curand_ != nullptr) {
    curandStatus_t s = curandDestroyGenerator(curand_);
    if (s != CURAND_STATUS_SUCCESS)
      internal::WarnStatus(internal::kCurandLib, s, "curandDestroyGenerator", __func__, __FILE__,
                           __LINE__);
  }
  if (cusolver_ != nullptr) {
    cusolverStatus_t s = cusolverDnDestroy(cusolver_);
    if (s != CUSOLVER_STATUS_SUCCESS)
      internal::WarnStatus(internal::kCusolverLib, s, "cusolverDnDestroy", __func__, __FILE__,
                           __LINE__);
  }
  cublas_ = nullptr;
  cusparse_ = nullptr;
  curand_ = nullptr;
  cusolver_ = nullptr;
#endif
}

void CuDevice::SelectGpuId(const std::string& use_gpu) {
  std::string error;
  const int id = internal::SelectProcessDevice(use_gpu, &error);
  if (!error.empty()) CUCTX_ERR << error;
  if (id < 0) return;
  device_id_ = id;
#if CUCTX_HAVE_CUDA
  // The selecting thread is the one that will run the program's ops: its handles are made here,
  // so the first op that needs a library does not pay for one inside its own time (tens of ms).
  GetCublasHandle();
  GetCusparseHandle();
  GetCusolverDnHandle();
  // For the same reason cuctx's kernels are loaded here, not at their first launch, where the
  // load waits for the device's queued work (internal/cu-launch.h).
  internal::KernelLoadSummary kernels;
  std::string why_not;
  if (internal::LoadCuctxKernels(&kernels, &why_not))
    CUCTX_VLOG(1) << "loaded " << kernels.loaded << " of cuctx's " << kernels.kernels
                  << " kernels (" << kernels.files << " kernel files) on GPU " << id << " in "
                  << kernels.seconds * 1e3 << " ms";
  else
    CUCTX_VLOG(1) << "cuctx's kernels will load at their first launch: " << why_not;
#endif
}

void CuDevice::SelectAndInitializeGpuIdWithExistingCudaContext(int dev_id) {
  std::string error;
  if (!internal::SelectProcessDeviceWithExistingContext(dev_id, &error)) CUCTX_ERR << error;
  device_id_ = dev_id;
}

void CuDevice::SelectGpuIdForThread(int dev_id) {
#if CUCTX_HAVE_CUDA
  const int count = DeviceCount();
  CUCTX_CHECK(dev_id >= 0 && dev_id < count && dev_id < internal::kMaxDevices)
      << "SelectGpuIdForThread(" << dev_id << "): the process sees " << count
      << " CUDA device(s), numbered 0 to " << count - 1 << " (after CUDA_VISIBLE_DEVICES)";
  if (dev_id == internal::ThreadBoundDevice()) return;
  std::string error;
  if (!internal::SetUpDeviceForThread(dev_id, &error)) CUCTX_ERR << error;
  if (device_id_ >= 0 && device_id_ != dev_id) {
    // The old device's handles and queued work belong to the old binding.
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    DestroyHandles();
  }
  internal::SetThreadBoundDevice(dev_id);
  AttachToSelectedDevice();
#else
  CUCTX_ERR << "SelectGpuIdForThread(" << dev_id << "): cuctx was built without CUDA (CUDA=0)";
#endif
}

int CuDevice::DeviceCount() { return internal::VisibleDeviceCount(); }

std::vector<int> CuDevice::ActiveDeviceIds() { return internal::ActiveDevices(); }

bool CuDevice::PeerAccessEnabled(int a, int b) { return internal::DevicePeerAccess(a, b); }

bool CuDevice::Enabled() const { return DeviceId() >= 0; }

int CuDevice::DeviceId() const {
  return internal::ThreadDeviceInline();  // a CuDevice is only used by its own thread
}

const CuDeviceProperties& CuDevice::Properties() const {
  const CuDeviceProperties* p = internal::DeviceProperties(DeviceId());
  if (p == nullptr) CUCTX_ERR << "no GPU is selected: " << internal::NoGpuReason();
  return *p;
}

std::string CuDevice::DeviceName() const { return Enabled() ? Properties().name : "none"; }

std::string CuDevice::NoGpuReason() const { return internal::NoGpuReason(); }

bool CuDevice::DoublePrecisionSupported() const {
  if (!Enabled()) return true;  // the CPU path computes in double (Kaldi's answer without a GPU)
  const CuDeviceProperties& p = Properties();
  return p.major > 1 || (p.major == 1 && p.minor >= 3);
}

bool CuDevice::IsComputeExclusive() const {
  if (!Enabled()) return false;
  int mode = Properties().compute_mode;
  return mode == 1 || mode == 3;  // exclusive-thread or exclusive-process
}

void CuDevice::DeviceGetName(char* name, int32 len, int32 dev) {
  CUCTX_CHECK(name != nullptr && len > 0) << "DeviceGetName needs a buffer";
#if CUCTX_HAVE_CUDA
  cudaDeviceProp prop;
  CUCTX_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  std::strncpy(name, prop.name, len - 1);
  name[len - 1] = '\0';
#else
  (void)dev;
  std::strncpy(name, "none", len - 1);
  name[len - 1] = '\0';
#endif
}

int32 CuDevice::GetMatrixAlignment() const { return Enabled() ? 256 : 0; }

void* CuDevice::Stream() const {
#if CUCTX_HAVE_CUDA
  return static_cast<void*>(cudaStreamPerThread);
#else
  return nullptr;
#endif
}

CuTimer::CuTimer() : active_(internal::ProfilingOn()), start_(0.0) {
  if (!active_) return;
  start_ = SteadySeconds();
  marked_ = internal::BeginProfileMark(&mark_);
}

CuTimer::~CuTimer() {
  if (marked_) internal::ReleaseProfileMark(&mark_);
}

double CuTimer::ElapsedSeconds() const { return active_ ? SteadySeconds() - start_ : 0.0; }

CuDeviceOptions& CuDevice::DeviceOptions() {
  static CuDeviceOptions* options = new CuDeviceOptions;
  return *options;
}

void CuDevice::RegisterDeviceOptions(OptionsItf* opts) {
  CuDeviceOptions& o = DeviceOptions();
  opts->Register("cuda-use-tensor-cores", &o.use_tensor_cores,
                 "Let cuBLAS use tensor-core algorithms where they keep the input precision");
  opts->Register("cuda-use-tf32-compute", &o.use_tf32_compute,
                 "Run float GEMMs on TF32 tensor cores (faster; about 1e-3 relative error)");
}

void CuDevice::AllowMultithreading() { internal::AllowMultithreadingOnDevices(); }

CuAllocatorOptions& CuDevice::AllocatorOptions() { return internal::DeviceAllocatorOptions(); }

void CuDevice::RegisterCuAllocatorOptions(OptionsItf* opts) { AllocatorOptions().Register(opts); }

CuMemoryAllocator* CuDevice::Allocator() { return internal::DeviceAllocator(DeviceId()); }

bool CuDevice::SetDebugStrideMode(bool mode) { return internal::SetDebugStrideModeOnDevices(mode); }

bool CuDevice::GetDebugStrideMode() const { return internal::DebugStrideModeOnDevices(); }

void CuDevice::PrintMemoryUsage() const {
  CuMemoryAllocator* allocator = const_cast<CuDevice*>(this)->Allocator();
  if (allocator == nullptr) {
    CUCTX_LOG << "no GPU selected (" << NoGpuReason() << "): no device memory in use";
    return;
  }
  allocator->PrintMemoryUsage();
  int64 free_bytes = 0, total_bytes = 0;
  CUCTX_LOG << "device memory: " << GetFreeGpuMemory(&free_bytes, &total_bytes);
}

void CuDevice::SeedGpu() { SeedGpu(static_cast<uint64>(Rand()) * 2654435761u + 1); }

void CuDevice::AccuProfile(const char* function_name, const CuTimer& timer) {
  // The timer's start event (or host time) and a new end event: nothing waits for the GPU.
  if (timer.marked_) internal::QueueProfileMark(function_name, /*copy_name=*/true, timer.mark_);
}

std::map<std::string, CuProfileEntry> CuDevice::GetProfile() { return internal::CollectProfile(); }

void CuDevice::PrintProfile() {
  if (GetVerboseLevel() < 1) return;
  std::map<std::string, CuProfileEntry> profile = GetProfile();
  std::vector<std::pair<std::string, CuProfileEntry>> rows(profile.begin(), profile.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  std::ostringstream out;
  out << "time in profiled functions (" << (Enabled() ? "GPU" : "host")
      << " seconds, calls, microseconds per call), largest first; nested ops count in their "
         "callers too:";
  for (const auto& row : rows) {
    const CuProfileEntry& e = row.second;
    out << "\n  " << row.first << "  " << e.seconds << " s  (" << e.calls << " calls)  "
        << (e.calls > 0 ? e.seconds * 1e6 / e.calls : 0.0) << " us/call";
  }
  CUCTX_LOG << out.str();
}

// CuDevice::CheckGpuHealth() is defined in cu-gemm-check.cc, the layer above that runs the check.

#if CUCTX_HAVE_CUDA
void CuDevice::SeedGpu(uint64 seed) {
  if (!Enabled()) return;
  curandGenerator_t gen = GetCurandHandle();
  // A new seed remakes the generator's state, which waits for the device (see GetCurandHandle).
  OutsideCapturesForHandle(device_id_, "CuDevice::SeedGpu (re-seeding the cuRAND generator)",
                           [gen, seed] {
                             CUCTX_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen, seed));
                             CUCTX_CURAND_CHECK(curandSetGeneratorOffset(gen, 0));
                             CUCTX_CURAND_CHECK(curandGenerateSeeds(gen));
                           });
}

// Malloc, MallocPitch and Free go to the calling thread's allocation scope while one is installed
// (a graph capture's private pool: cu-graph.cc; a planned scope: cu-planned-scope.cc), else, while
// the thread's stream is captured by a cudaStreamBeginCapture outside cuctx, to that capture's own
// pool (internal/cu-foreign-capture.h; the check is one driver call, cuStreamIsCapturing), else to
// the device's caching allocator.
// A scope is installed only on a thread that uses the selected GPU, so it is asked first, before
// the registry: a planned scope's Malloc/Free cost a few nanoseconds.
namespace internal {
int ReleaseDeadForeignPools() {
  return ReleaseDeadForeignPools([](void* p) { CuDevice::Instantiate().Free(p); });
}
}  // namespace internal

void* CuDevice::Malloc(size_t size) {
  if (internal::AllocationScope* scope = internal::ThreadAllocationScope())
    return scope->Malloc(size);
  CuMemoryAllocator* allocator = Allocator();
  CUCTX_CHECK(allocator != nullptr)
      << "CuDevice::Malloc: no GPU selected (" << NoGpuReason() << ")";
  if (!internal::t_thread_state.gpu_use_noted) internal::NoteGpuUse();
  AttachToSelectedDevice();
  if (internal::ThreadStreamCapturing())
    return internal::ForeignCaptureMalloc(size, AllocatorOptions());
  if (internal::DeadForeignPoolsPending()) internal::ReleaseDeadForeignPools();
  return allocator->Malloc(size);
}

void* CuDevice::MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
  if (internal::AllocationScope* scope = internal::ThreadAllocationScope())
    return scope->MallocPitch(row_bytes, num_rows, pitch);
  CuMemoryAllocator* allocator = Allocator();
  CUCTX_CHECK(allocator != nullptr)
      << "CuDevice::MallocPitch: no GPU selected (" << NoGpuReason() << ")";
  if (!internal::t_thread_state.gpu_use_noted) internal::NoteGpuUse();
  AttachToSelectedDevice();
  if (internal::ThreadStreamCapturing())
    return internal::ForeignCaptureMallocPitch(row_bytes, num_rows, pitch, AllocatorOptions());
  if (internal::DeadForeignPoolsPending()) internal::ReleaseDeadForeignPools();
  return allocator->MallocPitch(row_bytes, num_rows, pitch);
}

void CuDevice::Free(void* ptr) {
  if (ptr == nullptr) return;
  if (internal::AllocationScope* scope = internal::ThreadAllocationScope())
    if (scope->Free(ptr)) return;
  CuMemoryAllocator* allocator = Allocator();
  CUCTX_CHECK(allocator != nullptr)
      << "CuDevice::Free: no GPU selected, so " << ptr << " cannot be device memory";
  AttachToSelectedDevice();
  if (internal::ThreadStreamCapturing()) {
    internal::ForeignCaptureFree(ptr, AllocatorOptions());
    return;
  }
  // Memory of a graph's pool that outlived its capture is found after the allocator's own; an
  // unknown pointer then gets the allocator's error.
  if (allocator->TryFree(ptr) || internal::FreeScopedMemory(ptr)) return;
  // Memory of another device (a matrix made by a thread of another GPU, freed here).
  for (int d = 0; d < internal::kMaxDevices; ++d) {
    CuMemoryAllocator* other = internal::DeviceAllocator(d);
    if (other != nullptr && other != allocator && other->TryFree(ptr)) return;
  }
  allocator->Free(ptr);
}

void CuDevice::MakeHandle(const char* getter, const char* what, const std::function<void()>& make) {
  CUCTX_CHECK(Enabled()) << getter << ": no GPU selected (" << NoGpuReason() << ")";
  AttachToSelectedDevice();
  if (!internal::t_thread_state.gpu_use_noted) internal::NoteGpuUse();
  OutsideCapturesForHandle(device_id_, what, make);
}

cublasContext* CuDevice::GetCublasHandle() {
  if (cublas_ == nullptr) {
    MakeHandle("GetCublasHandle", "making the thread's cuBLAS handle (its first use)", [this] {
      const CuDeviceOptions& opts = DeviceOptions();
      const cublasMath_t math = opts.use_tf32_compute   ? CUBLAS_TF32_TENSOR_OP_MATH
                                : opts.use_tensor_cores ? CUBLAS_DEFAULT_MATH
                                                        : CUBLAS_PEDANTIC_MATH;
      cublasHandle_t h = nullptr;
      CUCTX_CUBLAS_CHECK(cublasCreate(&h));
      CUCTX_CUBLAS_CHECK(cublasSetStream(h, cudaStreamPerThread));
      CUCTX_CUBLAS_CHECK(cublasSetMathMode(h, math));
      cublas_ = h;  // only once its stream is set: never used on the legacy stream
    });
  }
  return cublas_;
}

cusparseContext* CuDevice::GetCusparseHandle() {
  if (cusparse_ == nullptr) {
    MakeHandle("GetCusparseHandle", "making the thread's cuSPARSE handle (its first use)", [this] {
      cusparseHandle_t h = nullptr;
      CUCTX_CUSPARSE_CHECK(cusparseCreate(&h));
      CUCTX_CUSPARSE_CHECK(cusparseSetStream(h, cudaStreamPerThread));
      cusparse_ = h;
    });
  }
  return cusparse_;
}

curandGenerator_st* CuDevice::GetCurandHandle() {
  if (curand_ == nullptr) {
    MakeHandle("GetCurandHandle", "making the thread's cuRAND generator (its first use)", [this] {
      curandGenerator_t h = nullptr;
      CUCTX_CURAND_CHECK(curandCreateGenerator(&h, CURAND_RNG_PSEUDO_DEFAULT));
      CUCTX_CURAND_CHECK(curandSetStream(h, cudaStreamPerThread));
      // The generator's state is made at its first draw (and after a new seed), and cuRAND
      // waits for the device there (cudaDeviceSynchronize, seen on an H200), which breaks
      // captures of other threads and cannot be captured: make it now, outside captures.
      CUCTX_CURAND_CHECK(curandGenerateSeeds(h));
      curand_ = h;
    });
  }
  return curand_;
}

cusolverDnContext* CuDevice::GetCusolverDnHandle() {
  if (cusolver_ == nullptr) {
    MakeHandle("GetCusolverDnHandle", "making the thread's cuSOLVER handle (its first use)",
               [this] {
                 cusolverDnHandle_t h = nullptr;
                 CUCTX_CUSOLVER_CHECK(cusolverDnCreate(&h));
                 CUCTX_CUSOLVER_CHECK(cusolverDnSetStream(h, cudaStreamPerThread));
                 cusolver_ = h;
               });
  }
  return cusolver_;
}

void SynchronizeGpu() {
  if (!CuDevice::Instantiate().Enabled()) return;
  internal::CheckNotCapturing("SynchronizeGpu");
  // A launch on the legacy stream would make it depend on capturing threads' streams (CUDA
  // rejects that and the captures break): it waits until no capture runs.
  internal::OutsideCaptures(internal::ThreadDevice(), [] { LaunchNoOp(cudaStreamLegacy); });
}

std::string GetFreeGpuMemory(int64* free, int64* total) {
  CUCTX_CHECK(CuDevice::Instantiate().Enabled()) << "GetFreeGpuMemory: no GPU selected";
  size_t f = 0, t = 0;
  CUCTX_CUDA_CHECK(cudaMemGetInfo(&f, &t));
  if (free != nullptr) *free = static_cast<int64>(f);
  if (total != nullptr) *total = static_cast<int64>(t);
  std::ostringstream out;
  out << "free:" << (f >> 20) << "M, used:" << ((t - f) >> 20) << "M, total:" << (t >> 20)
      << "M, free/total:" << (t > 0 ? static_cast<double>(f) / t : 0.0);
  return out.str();
}
#else
void CuDevice::SeedGpu(uint64) {}
namespace internal {
int ReleaseDeadForeignPools() { return 0; }
}  // namespace internal
void* CuDevice::Malloc(size_t) { CUCTX_ERR << "CuDevice::Malloc: cuctx was built without CUDA"; }
void* CuDevice::MallocPitch(size_t, size_t, size_t*) {
  CUCTX_ERR << "CuDevice::MallocPitch: cuctx was built without CUDA";
}
void CuDevice::Free(void* ptr) {
  if (ptr != nullptr) CUCTX_ERR << "CuDevice::Free(" << ptr << "): cuctx was built without CUDA";
}
cublasContext* CuDevice::GetCublasHandle() { CUCTX_ERR << "built without CUDA"; }
cusparseContext* CuDevice::GetCusparseHandle() { CUCTX_ERR << "built without CUDA"; }
curandGenerator_st* CuDevice::GetCurandHandle() { CUCTX_ERR << "built without CUDA"; }
cusolverDnContext* CuDevice::GetCusolverDnHandle() { CUCTX_ERR << "built without CUDA"; }
void SynchronizeGpu() {}
std::string GetFreeGpuMemory(int64*, int64*) {
  CUCTX_ERR << "GetFreeGpuMemory: cuctx was built without CUDA";
}
#endif

}  // namespace cuctx
