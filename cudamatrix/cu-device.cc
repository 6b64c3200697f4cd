// cudamatrix/cu-device.cc: device selection, the process-wide registry and per-thread handles.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-device.h"

#include "base/error.h"
#include "base/options-itf.h"
#include "base/random.h"
#include "cudamatrix/cu-allocator-async.h"
#include "cudamatrix/cu-allocator-options.h"
#include "cudamatrix/cu-allocator-upstream.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-gemm-check.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/internal/cu-alloc-scope.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-device-scope.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>
#include <cusparse.h>
#endif

namespace cuctx {
namespace {

// The most device ordinals a process can use (per-device tables below have this many slots, so
// that threads read them without the mutex while another thread sets up a device).
constexpr int kMaxDevices = 64;

// State shared by all threads. Leaked on purpose: no CUDA call may run from a static destructor
// after main returns.
struct Registry {
  std::mutex mutex;
  std::atomic<int> device_id{-1};  // the process's selected device, -1 for none
  bool gpu_selected = false;       // a GPU was selected (selecting again is then an error)
  bool cpu_selected = false;       // SelectGpuId("no") or a CPU fallback was chosen
  std::string no_gpu_reason = "no device selected yet (call SelectGpuId)";
  // Per-device state, indexed by device ordinal, filled when a device is first used (selected for
  // the process or bound by a thread) and never emptied; written under `mutex`.
  std::vector<std::unique_ptr<CuDeviceProperties>> properties;
  // Per-device caching allocators, indexed like `properties`; `allocator_ptrs` mirrors them for
  // reads without the mutex (a slot goes from null to its final value once).
  std::vector<std::unique_ptr<CuMemoryAllocator>> allocators;
  std::array<std::atomic<CuMemoryAllocator*>, kMaxDevices> allocator_ptrs{};
  // peer[a][b]: kernels on device a may access device b's memory (enabled by cuctx).
  std::array<std::array<std::atomic<bool>, kMaxDevices>, kMaxDevices> peer{};
  Registry() : properties(kMaxDevices), allocators(kMaxDevices) {}
  std::atomic<bool> debug_stride_mode{false};
  // The first thread that used the GPU, and whether others may (AllowMultithreading).
  bool has_owner = false;
  std::thread::id owner;
  std::atomic<bool> multithreading{false};
};

Registry& GetRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

constexpr const char* kModes = "yes, no, optional or wait";

// The calling thread's SelectGpuIdForThread device (-1: none) and the test override of
// internal::ThreadObjectDevice(), kept outside CuDevice and in one struct so that reading them
// is one thread-local access (initial-exec: no __tls_get_addr call; 8 bytes of static TLS).
struct ThreadDeviceState {
  int bound = -1;
  int override_device = internal::kNoDeviceOverride;
};
__attribute__((tls_model("initial-exec"))) thread_local ThreadDeviceState thread_device_state;

// The calling thread's device: its binding, else the process's selected device, else -1.
int CallingThreadDevice() {
  const int bound = thread_device_state.bound;
  return bound >= 0 ? bound : GetRegistry().device_id.load(std::memory_order_relaxed);
}

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

#if CUCTX_HAVE_CUDA
// Records that the calling thread uses the GPU. A thread other than the first one switches
// multithreading on (with a warning) unless AllowMultithreading() was called. The thread_local
// flag keeps this to one mutex acquisition per thread.
void NoteGpuUse() {
  thread_local bool noted = false;
  if (noted) return;
  noted = true;
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.has_owner) {
    r.has_owner = true;
    r.owner = std::this_thread::get_id();
    return;
  }
  if (r.owner != std::this_thread::get_id() && !r.multithreading.load()) {
    r.multithreading.store(true);
    for (auto& allocator : r.allocators)
      if (allocator) allocator->AllowMultithreading();
    CUCTX_WARN << "a second thread is using the GPU without CuDevice::AllowMultithreading(); "
               << "switching multithreading on";
  }
}
#endif

#if CUCTX_HAVE_CUDA
std::string CudaReason(cudaError_t e) {
  std::ostringstream out;
  out << cudaGetErrorName(e) << " (" << cudaGetErrorString(e) << ")";
  return out.str();
}

// Picks a device. Returns -1 and sets *reason when none is usable; *busy is true when devices
// exist but all are taken (exclusive mode), the case in which "wait" mode retries.
int ChooseDevice(std::string* reason, bool* busy) {
  *busy = false;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    // Without any NVIDIA driver the runtime reports an "insufficient" driver; say what is wrong.
    int driver_version = -1;
    if (e == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver_version) == cudaSuccess &&
        driver_version == 0)
      *reason = "no NVIDIA driver found (libcuda.so.1 is not installed or cannot be loaded)";
    else
      *reason = "cudaGetDeviceCount failed: " + CudaReason(e);
    return -1;
  }
  if (count == 0) {
    *reason = "cudaGetDeviceCount found no CUDA devices";
    return -1;
  }
  std::vector<int> candidates;
  bool all_exclusive = true;
  for (int d = 0; d < count; ++d) {
    int mode = cudaComputeModeDefault;
    if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d) != cudaSuccess) continue;
    if (mode == cudaComputeModeProhibited) continue;
    if (mode == cudaComputeModeDefault) all_exclusive = false;
    candidates.push_back(d);
  }
  if (candidates.empty()) {
    *reason = "all " + std::to_string(count) + " devices are in compute-prohibited mode";
    return -1;
  }
  if (all_exclusive) {
    // In exclusive mode the driver decides: the first device whose context we can create is ours.
    for (int d : candidates) {
      if (cudaSetDevice(d) == cudaSuccess && cudaInitDevice(d, 0, 0) == cudaSuccess) return d;
      cudaGetLastError();
    }
    *busy = true;
    *reason = "all devices are in exclusive mode and busy";
    return -1;
  }
  if (candidates.size() == 1) return candidates[0];
  int best = -1;
  double best_ratio = -1.0;
  for (int d : candidates) {
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaSetDevice(d) != cudaSuccess ||
        cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    double ratio = total_bytes > 0 ? static_cast<double>(free_bytes) / total_bytes : 0.0;
    CUCTX_VLOG(1) << "device " << d << ": free/total = " << ratio;
    if (ratio > best_ratio) {
      best_ratio = ratio;
      best = d;
    }
  }
  if (best < 0) {
    *busy = true;
    *reason = "no device could report its memory (all busy?)";
  }
  return best;
}

void ReadProperties(int id, CuDeviceProperties* p) {
  cudaDeviceProp prop;
  CUCTX_CUDA_CHECK(cudaGetDeviceProperties(&prop, id));
  p->id = id;
  p->name = prop.name;
  p->major = prop.major;
  p->minor = prop.minor;
  p->multiprocessors = prop.multiProcessorCount;
  p->total_memory = static_cast<int64>(prop.totalGlobalMem);
  p->memory_bus_width = prop.memoryBusWidth;
  int value = 0;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrMemoryClockRate, id) == cudaSuccess)
    p->memory_clock_khz = value;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrEccEnabled, id) == cudaSuccess)
    p->ecc_enabled = value != 0;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrComputeMode, id) == cudaSuccess)
    p->compute_mode = value;
  CUCTX_CUDA_CHECK(cudaDriverGetVersion(&p->driver_version));
  CUCTX_CUDA_CHECK(cudaRuntimeGetVersion(&p->runtime_version));
}

// Orders all threads' per-thread streams of device `id` (a no-op kernel on its legacy default
// stream), whichever device the calling thread uses.
void SynchronizeDevice(int id) {
  internal::OutsideCaptures([id] {
    internal::DeviceScope scope(id);
    CUCTX_CUDA_CHECK(scope.Status());
    LaunchNoOp(cudaStreamLegacy);
  });
}

// Device `id`'s allocator: the caching allocator over the upstream --cuda-allocator-upstream
// names (VMM when the device and driver support it), or the stream-ordered cudaMallocAsync
// backend (--cuda-allocator=async). Made with `id` current, so its upstream belongs to `id`.
std::unique_ptr<CuMemoryAllocator> NewAllocator(const CuAllocatorOptions& options, int id) {
  std::string why_not;
  auto allocator = NewDeviceMemoryAllocator(
      options, [id] { SynchronizeDevice(id); }, &why_not);
  if (!why_not.empty())
    CUCTX_VLOG(1) << "device " << id << ": no virtual memory management (" << why_not
                  << "); the allocator grows by cudaMalloc regions instead";
  return allocator;
}

// Enables peer access both ways between `id` and every device already set up, where the hardware
// allows it, and adds each to the other's allocator mappings. CUCTX_PEER_ACCESS=0 leaves it off
// (copies between devices are then staged by the driver; for tests and diagnosis). Called with
// r.mutex held.
void ConnectPeers(Registry& r, int id) {
  const char* env = std::getenv("CUCTX_PEER_ACCESS");
  if (env != nullptr && std::string(env) == "0") {
    CUCTX_VLOG(1) << "CUCTX_PEER_ACCESS=0: no peer access for GPU " << id;
    return;
  }
  for (int other = 0; other < kMaxDevices; ++other) {
    if (other == id || !r.allocators[other]) continue;
    int ab = 0, ba = 0;
    CUCTX_CUDA_CHECK(cudaDeviceCanAccessPeer(&ab, id, other));
    CUCTX_CUDA_CHECK(cudaDeviceCanAccessPeer(&ba, other, id));
    if (ab == 0 || ba == 0) {
      CUCTX_LOG << "GPUs " << id << " and " << other
                << " have no peer access: copies between them are staged through host memory";
      continue;
    }
    for (const auto& [from, to] :
         {std::pair<int, int>{id, other}, std::pair<int, int>{other, id}}) {
      internal::DeviceScope scope(from);
      CUCTX_CUDA_CHECK(scope.Status());
      const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        (void)cudaGetLastError();
      else
        CUCTX_CUDA_CHECK(e);
      // Memory the allocator of `to` maps itself (VMM) lists its readers explicitly.
      r.allocators[to]->Upstream().GrantPeerAccess(from);
      r.peer[from][to].store(true);
    }
    CUCTX_LOG << "peer access between GPUs " << id << " and " << other << " enabled";
  }
}

// Sets up device `id` for the process on first use: context, properties, allocator, peer access.
// Leaves the calling thread's current device as it was. Called with r.mutex held.
void SetUpDevice(Registry& r, int id) {
  if (r.allocators[id]) return;
  internal::DeviceScope scope(id);
  CUCTX_CUDA_CHECK(scope.Status());
  CUCTX_CUDA_CHECK(cudaInitDevice(id, 0, 0));  // creates the context now, not at the first kernel
  r.properties[id] = std::make_unique<CuDeviceProperties>();
  ReadProperties(id, r.properties[id].get());
  CuAllocatorOptions options = CuDevice::AllocatorOptions();
  const char* cache_env = std::getenv("CUCTX_CUDA_CACHE_MEMORY");
  if (cache_env != nullptr && (std::string(cache_env) == "false" || std::string(cache_env) == "0"))
    options.cache_memory = false;
  r.allocators[id] = NewAllocator(options, id);
  // A second device means threads per device, which free each other's memory at times.
  bool several = false;
  for (int d = 0; d < kMaxDevices; ++d) several = several || (d != id && r.allocators[d]);
  if (several) r.multithreading.store(true);
  if (r.multithreading.load())
    for (auto& allocator : r.allocators)
      if (allocator) allocator->AllowMultithreading();
  r.allocators[id]->SetDebugStrideMode(r.debug_stride_mode.load());
  ConnectPeers(r, id);
  r.allocator_ptrs[id].store(r.allocators[id].get());
}

// "GPU 3: NVIDIA H100 80GB HBM3 (compute capability 9.0, 81079 MiB)" for a set-up device.
std::string DeviceSummary(const Registry& r, int id) {
  const CuDeviceProperties& p = *r.properties[id];
  std::ostringstream out;
  out << "GPU " << id << ": " << p.name << " (compute capability " << p.major << "." << p.minor
      << ", " << (p.total_memory >> 20) << " MiB)";
  return out.str();
}

// Makes `id` the process's device (setting it up first). Called with r.mutex held.
void UseDevice(Registry& r, int id) {
  SetUpDevice(r, id);
  CUCTX_CUDA_CHECK(cudaSetDevice(id));
  r.gpu_selected = true;
  r.no_gpu_reason.clear();
  r.device_id.store(id);
  CUCTX_LOG << "selected " << DeviceSummary(r, id);
}
#endif  // CUCTX_HAVE_CUDA

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

void CuDevice::DestroyHandles() noexcept {
#if CUCTX_HAVE_CUDA
  // Thread exit or a new binding: destroy this thread's handles without throwing.
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
  if (use_gpu != "yes" && use_gpu != "no" && use_gpu != "optional" && use_gpu != "wait")
    CUCTX_ERR << "--use-gpu must be " << kModes << "; got \"" << use_gpu << "\"";
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.gpu_selected)
    CUCTX_ERR << "SelectGpuId(\"" << use_gpu << "\") called after GPU " << r.device_id.load()
              << " was already selected; select the device once per process";
  if (use_gpu == "no") {
    r.cpu_selected = true;
    r.no_gpu_reason = "--use-gpu=no";
    CUCTX_VLOG(1) << "using the CPU (--use-gpu=no)";
    return;
  }
#if CUCTX_HAVE_CUDA
  std::string reason;
  bool busy = false;
  int id = ChooseDevice(&reason, &busy);
  if (use_gpu == "wait") {
    auto start = std::chrono::steady_clock::now();
    int attempts = 0;
    while (id < 0 && busy) {
      double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (attempts++ % 12 == 0)
        CUCTX_WARN << "--use-gpu=wait: no free GPU yet (" << reason << "); waited "
                   << static_cast<int>(waited) << " s so far, retrying every 5 s";
      std::this_thread::sleep_for(std::chrono::seconds(5));
      id = ChooseDevice(&reason, &busy);
    }
    if (id >= 0 && attempts > 0) {
      double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      CUCTX_LOG << "--use-gpu=wait: got GPU " << id << " after waiting " << waited << " s";
    }
  }
  if (id >= 0) {
    UseDevice(r, id);
    device_id_ = id;
    return;
  }
  r.no_gpu_reason = reason;
  if (use_gpu == "optional") {
    r.cpu_selected = true;
    CUCTX_WARN << "no usable GPU (" << reason << "); running on the CPU";
    return;
  }
  CUCTX_ERR << "--use-gpu=" << use_gpu << " but no GPU could be used: " << reason;
#else
  r.no_gpu_reason = "built without CUDA";
  if (use_gpu == "optional") {
    CUCTX_VLOG(1) << "cuctx was built without CUDA; running on the CPU";
    return;
  }
  CUCTX_ERR << "--use-gpu=" << use_gpu << " but cuctx was built without CUDA (make CUDA=0)";
#endif
}

void CuDevice::SelectAndInitializeGpuIdWithExistingCudaContext(int dev_id) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.gpu_selected)
    CUCTX_ERR << "a GPU (" << r.device_id.load() << ") is already selected for this process";
#if CUCTX_HAVE_CUDA
  int count = 0;
  CUCTX_CUDA_CHECK(cudaGetDeviceCount(&count));
  CUCTX_CHECK(dev_id >= 0 && dev_id < count)
      << "dev_id " << dev_id << " out of range: " << count << " device(s)";
  UseDevice(r, dev_id);
  device_id_ = dev_id;
#else
  CUCTX_ERR << "cannot use GPU " << dev_id << ": cuctx was built without CUDA";
#endif
}

void CuDevice::SelectGpuIdForThread(int dev_id) {
#if CUCTX_HAVE_CUDA
  const int count = DeviceCount();
  CUCTX_CHECK(dev_id >= 0 && dev_id < count && dev_id < kMaxDevices)
      << "SelectGpuIdForThread(" << dev_id << "): the process sees " << count
      << " CUDA device(s), numbered 0 to " << count - 1 << " (after CUDA_VISIBLE_DEVICES)";
  if (dev_id == thread_device_state.bound) return;
  Registry& r = GetRegistry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    CUCTX_CHECK(!r.cpu_selected) << "SelectGpuIdForThread(" << dev_id
                                 << "): this process runs on the CPU (" << r.no_gpu_reason << ")";
    const bool new_device = !r.allocators[dev_id];
    SetUpDevice(r, dev_id);
    r.multithreading.store(true);  // binding threads to devices means several threads
    for (auto& allocator : r.allocators)
      if (allocator) allocator->AllowMultithreading();
    if (r.device_id.load() < 0) {
      r.gpu_selected = true;
      r.no_gpu_reason.clear();
      r.device_id.store(dev_id);
      CUCTX_LOG << "selected " << DeviceSummary(r, dev_id) << " (first thread binding)";
    } else if (new_device) {
      CUCTX_LOG << "set up " << DeviceSummary(r, dev_id) << " for a thread";
    }
  }
  if (device_id_ >= 0 && device_id_ != dev_id) {
    // The old device's handles and queued work belong to the old binding.
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    DestroyHandles();
  }
  thread_device_state.bound = dev_id;
  AttachToSelectedDevice();
#else
  CUCTX_ERR << "SelectGpuIdForThread(" << dev_id << "): cuctx was built without CUDA (CUDA=0)";
#endif
}

int CuDevice::DeviceCount() {
#if CUCTX_HAVE_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

std::vector<int> CuDevice::ActiveDeviceIds() {
  Registry& r = GetRegistry();
  std::vector<int> ids;
  for (int d = 0; d < kMaxDevices; ++d)
    if (r.allocator_ptrs[d].load() != nullptr) ids.push_back(d);
  return ids;
}

bool CuDevice::PeerAccessEnabled(int a, int b) {
  if (a < 0 || b < 0 || a >= kMaxDevices || b >= kMaxDevices) return false;
  return GetRegistry().peer[a][b].load();
}

bool CuDevice::Enabled() const { return DeviceId() >= 0; }

int CuDevice::DeviceId() const {
  return CallingThreadDevice();  // a CuDevice is only used by its own thread
}

const CuDeviceProperties& CuDevice::Properties() const {
  Registry& r = GetRegistry();
  int id = DeviceId();
  if (id < 0) CUCTX_ERR << "no GPU is selected: " << r.no_gpu_reason;
  std::lock_guard<std::mutex> lock(r.mutex);
  return *r.properties[id];
}

namespace internal {

int ThreadObjectDevice() noexcept {
  // Plain thread_local ints (no constructor, so no guard), not CuDevice::Instantiate(): this runs
  // for every operand of every op.
  const int override_device = thread_device_state.override_device;
  return override_device != kNoDeviceOverride ? override_device : CallingThreadDevice();
}

void ThrowWrongDevice(const char* kind, int object_device) {
  const int mine = ThreadObjectDevice();
  std::ostringstream where;
  if (object_device < 0)
    where << "in host memory (made without a GPU)";
  else
    where << "on GPU " << object_device;
  std::ostringstream thread;
  if (mine < 0)
    thread << "a thread with no GPU";
  else
    thread << "a thread of GPU " << mine;
  CUCTX_ERR << "a " << kind << " " << where.str() << " was used by " << thread.str()
            << ": use it from a thread bound to its device (CuDevice::SelectGpuIdForThread), or "
            << "copy it to this one first (CopyFromMat / CopyFromVec copy between devices)";
}

void SetThreadObjectDeviceForTesting(int device) { thread_device_state.override_device = device; }

}  // namespace internal

std::string CuDevice::DeviceName() const { return Enabled() ? Properties().name : "none"; }

std::string CuDevice::NoGpuReason() const {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.no_gpu_reason;
}

bool CuDevice::DoublePrecisionSupported() const {
  if (!Enabled()) return false;
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

void CuDevice::AllowMultithreading() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.multithreading.store(true);
  for (auto& allocator : r.allocators)
    if (allocator) allocator->AllowMultithreading();
}

CuAllocatorOptions& CuDevice::AllocatorOptions() {
  static CuAllocatorOptions* options = new CuAllocatorOptions;
  return *options;
}

void CuDevice::RegisterCuAllocatorOptions(OptionsItf* opts) { AllocatorOptions().Register(opts); }

CuMemoryAllocator* CuDevice::Allocator() {
  int id = DeviceId();
  return id >= 0 && id < kMaxDevices ? GetRegistry().allocator_ptrs[id].load() : nullptr;
}

bool CuDevice::SetDebugStrideMode(bool mode) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  bool old = r.debug_stride_mode.exchange(mode);
  for (auto& allocator : r.allocators)
    if (allocator) allocator->SetDebugStrideMode(mode);
  return old;
}

bool CuDevice::GetDebugStrideMode() const { return GetRegistry().debug_stride_mode.load(); }

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

void CuDevice::CheckGpuHealth() {
  if (!Enabled()) return;
  CuTimer timer;
  GemmCheckResult check = RunGemmCheck(512, 20261122);
  if (!check.passed)
    CUCTX_ERR << "GPU health check failed: " << check.Summary()
              << "; the GPU computes a matrix product differently from the CPU";
  CUCTX_VLOG(1) << "GPU health check passed: " << check.Summary();
  AccuProfile("CuDevice::CheckGpuHealth", timer);
}

#if CUCTX_HAVE_CUDA
void CuDevice::SeedGpu(uint64 seed) {
  if (!Enabled()) return;
  CUCTX_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(GetCurandHandle(), seed));
  CUCTX_CURAND_CHECK(curandSetGeneratorOffset(GetCurandHandle(), 0));
}

// Malloc, MallocPitch and Free go to the calling thread's allocation scope while one is installed
// (a graph capture's private pool: cu-graph.cc; a planned scope: cu-planned-scope.cc), else to
// the device's caching allocator.
// A scope is installed only on a thread that uses the selected GPU, so it is asked first, before
// the registry: a planned scope's Malloc/Free cost a few nanoseconds.
void* CuDevice::Malloc(size_t size) {
  if (internal::AllocationScope* scope = internal::ThreadAllocationScope())
    return scope->Malloc(size);
  CuMemoryAllocator* allocator = Allocator();
  CUCTX_CHECK(allocator != nullptr)
      << "CuDevice::Malloc: no GPU selected (" << NoGpuReason() << ")";
  NoteGpuUse();
  AttachToSelectedDevice();
  return allocator->Malloc(size);
}

void* CuDevice::MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
  if (internal::AllocationScope* scope = internal::ThreadAllocationScope())
    return scope->MallocPitch(row_bytes, num_rows, pitch);
  CuMemoryAllocator* allocator = Allocator();
  CUCTX_CHECK(allocator != nullptr)
      << "CuDevice::MallocPitch: no GPU selected (" << NoGpuReason() << ")";
  NoteGpuUse();
  AttachToSelectedDevice();
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
  // Memory of a graph's pool that outlived its capture is found after the allocator's own; an
  // unknown pointer then gets the allocator's error.
  if (allocator->TryFree(ptr) || internal::FreeScopedMemory(ptr)) return;
  // Memory of another device (a matrix made by a thread of another GPU, freed here).
  Registry& r = GetRegistry();
  for (int d = 0; d < kMaxDevices; ++d) {
    CuMemoryAllocator* other = r.allocator_ptrs[d].load();
    if (other != nullptr && other != allocator && other->TryFree(ptr)) return;
  }
  allocator->Free(ptr);
}

cublasContext* CuDevice::GetCublasHandle() {
  if (cublas_ == nullptr) {
    CUCTX_CHECK(Enabled()) << "GetCublasHandle: no GPU selected (" << NoGpuReason() << ")";
    AttachToSelectedDevice();
    NoteGpuUse();
    CUCTX_CUBLAS_CHECK(cublasCreate(&cublas_));
    CUCTX_CUBLAS_CHECK(cublasSetStream(cublas_, cudaStreamPerThread));
    const CuDeviceOptions& opts = DeviceOptions();
    cublasMath_t math = opts.use_tf32_compute   ? CUBLAS_TF32_TENSOR_OP_MATH
                        : opts.use_tensor_cores ? CUBLAS_DEFAULT_MATH
                                                : CUBLAS_PEDANTIC_MATH;
    CUCTX_CUBLAS_CHECK(cublasSetMathMode(cublas_, math));
  }
  return cublas_;
}

cusparseContext* CuDevice::GetCusparseHandle() {
  if (cusparse_ == nullptr) {
    CUCTX_CHECK(Enabled()) << "GetCusparseHandle: no GPU selected (" << NoGpuReason() << ")";
    AttachToSelectedDevice();
    NoteGpuUse();
    CUCTX_CUSPARSE_CHECK(cusparseCreate(&cusparse_));
    CUCTX_CUSPARSE_CHECK(cusparseSetStream(cusparse_, cudaStreamPerThread));
  }
  return cusparse_;
}

curandGenerator_st* CuDevice::GetCurandHandle() {
  if (curand_ == nullptr) {
    CUCTX_CHECK(Enabled()) << "GetCurandHandle: no GPU selected (" << NoGpuReason() << ")";
    AttachToSelectedDevice();
    NoteGpuUse();
    CUCTX_CURAND_CHECK(curandCreateGenerator(&curand_, CURAND_RNG_PSEUDO_DEFAULT));
    CUCTX_CURAND_CHECK(curandSetStream(curand_, cudaStreamPerThread));
  }
  return curand_;
}

cusolverDnContext* CuDevice::GetCusolverDnHandle() {
  if (cusolver_ == nullptr) {
    CUCTX_CHECK(Enabled()) << "GetCusolverDnHandle: no GPU selected (" << NoGpuReason() << ")";
    AttachToSelectedDevice();
    NoteGpuUse();
    CUCTX_CUSOLVER_CHECK(cusolverDnCreate(&cusolver_));
    CUCTX_CUSOLVER_CHECK(cusolverDnSetStream(cusolver_, cudaStreamPerThread));
  }
  return cusolver_;
}

void SynchronizeGpu() {
  if (!CuDevice::Instantiate().Enabled()) return;
  internal::CheckNotCapturing("SynchronizeGpu");
  // A launch on the legacy stream would make it depend on capturing threads' streams (CUDA
  // rejects that and the captures break): it waits until no capture runs.
  internal::OutsideCaptures([] { LaunchNoOp(cudaStreamLegacy); });
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
