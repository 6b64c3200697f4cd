// cudamatrix/cu-device-registry.cc: the per-device registry (internal/cu-device-registry.h):
// choosing and setting up devices, their properties, allocators and peer links.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-device-registry.h"

#include "base/error.h"
#include "cudamatrix/cu-allocator-async.h"
#include "cudamatrix/cu-allocator-options.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/internal/cu-lock-order.h"
#include "cudamatrix/internal/cu-thread-state.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-device-scope.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace internal {
namespace {

// One device's record, filled under the registry's mutex when the device is first used.
struct DeviceRecord {
  std::unique_ptr<CuDeviceProperties> properties;
  std::unique_ptr<CuMemoryAllocator> allocator;
  // peer[b]: kernels on this device may access device b's memory (enabled by cuctx).
  std::array<std::atomic<bool>, kMaxDevices> peer{};
};

struct Registry {
  std::mutex mutex;           // lock order: kRegistryLock (internal/cu-lock-order.h)
  bool gpu_selected = false;  // a GPU was selected (selecting again is then an error)
  bool cpu_selected = false;  // SelectGpuId("no") or a CPU fallback was chosen
  std::string no_gpu_reason = "no device selected yet (call SelectGpuId)";
  std::array<DeviceRecord, kMaxDevices> devices;  // by device ordinal
  std::atomic<bool> debug_stride_mode{false};
  // The first thread that used the GPU, and whether others may (AllowMultithreading).
  bool has_owner = false;
  std::thread::id owner;
  std::atomic<bool> multithreading{false};
};

// Leaked on purpose (see the header).
Registry& GetRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

constexpr const char* kModes = "yes, no, optional or wait";

void AllowMultithreadingLocked(Registry& r) {
  CUCTX_ASSERT(LockOrder::Holds(kRegistryLock));
  r.multithreading.store(true);
  for (DeviceRecord& d : r.devices)
    if (d.allocator) d.allocator->AllowMultithreading();
}

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
  internal::OutsideCaptures(id, [id] {
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
  allocator->SetSnapshotLabel(id, 0, "");  // its memory snapshots name device `id`
  return allocator;
}

// Enables peer access both ways between `id` and every device already set up, where the hardware
// allows it, and adds each to the other's allocator mappings. CUCTX_PEER_ACCESS=0 leaves it off
// (copies between devices are then staged by the driver; for tests and diagnosis).
void ConnectPeersLocked(Registry& r, int id) {
  CUCTX_ASSERT(LockOrder::Holds(kRegistryLock));
  const char* env = std::getenv("CUCTX_PEER_ACCESS");
  if (env != nullptr && std::string(env) == "0") {
    CUCTX_VLOG(1) << "CUCTX_PEER_ACCESS=0: no peer access for GPU " << id;
    return;
  }
  for (int other = 0; other < kMaxDevices; ++other) {
    if (other == id || !r.devices[other].allocator) continue;
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
      r.devices[to].allocator->Upstream().GrantPeerAccess(from);
      // Giving back memory of `to` now involves `from` too (its captures are waited out).
      internal::NotePeerAccess(/*owner=*/to, /*reader=*/from);
      r.devices[from].peer[to].store(true);
    }
    CUCTX_LOG << "peer access between GPUs " << id << " and " << other << " enabled";
  }
}

// Sets up device `id` for the process on first use: context, properties, allocator, peer access.
// Leaves the calling thread's current device as it was.
void SetUpDeviceLocked(Registry& r, int id) {
  CUCTX_ASSERT(LockOrder::Holds(kRegistryLock));
  DeviceRecord& d = r.devices[id];
  if (d.allocator) return;
  // Before any capture can run on the device: starting the watch (loading CUPTI) while another
  // thread captures could break that capture.
  StartCaptureWatch();
  internal::DeviceScope scope(id);
  CUCTX_CUDA_CHECK(scope.Status());
  CUCTX_CUDA_CHECK(cudaInitDevice(id, 0, 0));  // creates the context now, not at the first kernel
  d.properties = std::make_unique<CuDeviceProperties>();
  ReadProperties(id, d.properties.get());
  CuAllocatorOptions options = DeviceAllocatorOptions();
  const char* cache_env = std::getenv("CUCTX_CUDA_CACHE_MEMORY");
  if (cache_env != nullptr && (std::string(cache_env) == "false" || std::string(cache_env) == "0"))
    options.cache_memory = false;
  d.allocator = NewAllocator(options, id);
  // A second device means threads per device, which free each other's memory at times.
  bool several = false;
  for (int other = 0; other < kMaxDevices; ++other)
    several = several || (other != id && r.devices[other].allocator);
  if (several) r.multithreading.store(true);
  if (r.multithreading.load()) AllowMultithreadingLocked(r);
  d.allocator->SetDebugStrideMode(r.debug_stride_mode.load());
  ConnectPeersLocked(r, id);
  g_device_allocators[id].store(d.allocator.get());
}

// "GPU 3: NVIDIA H100 80GB HBM3 (compute capability 9.0, 81079 MiB)" for a set-up device.
std::string DeviceSummary(const Registry& r, int id) {
  const CuDeviceProperties& p = *r.devices[id].properties;
  std::ostringstream out;
  out << "GPU " << id << ": " << p.name << " (compute capability " << p.major << "." << p.minor
      << ", " << (p.total_memory >> 20) << " MiB)";
  return out.str();
}

// Makes `id` the process's device (setting it up first).
void UseDeviceLocked(Registry& r, int id) {
  SetUpDeviceLocked(r, id);
  CUCTX_CUDA_CHECK(cudaSetDevice(id));
  r.gpu_selected = true;
  r.no_gpu_reason.clear();
  internal::SetProcessDevice(id);
  CUCTX_LOG << "selected " << DeviceSummary(r, id);
}
#endif  // CUCTX_HAVE_CUDA

}  // namespace

std::atomic<CuMemoryAllocator*> g_device_allocators[kMaxDevices] = {};

CuAllocatorOptions& DeviceAllocatorOptions() {
  static CuAllocatorOptions* options = new CuAllocatorOptions;
  return *options;
}

int SelectProcessDevice(const std::string& use_gpu, std::string* error) {
  std::ostringstream refusal;
  auto refuse = [&] {
    *error = refusal.str();
    return -1;
  };
  if (use_gpu != "yes" && use_gpu != "no" && use_gpu != "optional" && use_gpu != "wait") {
    refusal << "--use-gpu must be " << kModes << "; got \"" << use_gpu << "\"";
    return refuse();
  }
  Registry& r = GetRegistry();
  OrderedLockGuard<std::mutex> lock(r.mutex, kRegistryLock);
  if (r.gpu_selected) {
    refusal << "SelectGpuId(\"" << use_gpu << "\") called after GPU " << ProcessDevice()
            << " was already selected; select the device once per process";
    return refuse();
  }
  if (use_gpu == "no") {
    r.cpu_selected = true;
    r.no_gpu_reason = "--use-gpu=no";
    CUCTX_VLOG(1) << "using the CPU (--use-gpu=no)";
    return -1;
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
    UseDeviceLocked(r, id);
    return id;
  }
  r.no_gpu_reason = reason;
  if (use_gpu == "optional") {
    r.cpu_selected = true;
    CUCTX_WARN << "no usable GPU (" << reason << "); running on the CPU";
    return -1;
  }
  refusal << "--use-gpu=" << use_gpu << " but no GPU could be used: " << reason;
  return refuse();
#else
  r.no_gpu_reason = "built without CUDA";
  if (use_gpu == "optional") {
    CUCTX_VLOG(1) << "cuctx was built without CUDA; running on the CPU";
    return -1;
  }
  refusal << "--use-gpu=" << use_gpu << " but cuctx was built without CUDA (make CUDA=0)";
  return refuse();
#endif
}

bool SelectProcessDeviceWithExistingContext(int dev_id, std::string* error) {
  Registry& r = GetRegistry();
  OrderedLockGuard<std::mutex> lock(r.mutex, kRegistryLock);
  std::ostringstream refusal;
  if (r.gpu_selected) {
    refusal << "a GPU (" << ProcessDevice() << ") is already selected for this process";
    *error = refusal.str();
    return false;
  }
#if CUCTX_HAVE_CUDA
  int count = 0;
  CUCTX_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (!(dev_id >= 0 && dev_id < count)) {
    refusal << "Check failed: dev_id >= 0 && dev_id < count dev_id " << dev_id
            << " out of range: " << count << " device(s)";
    *error = refusal.str();
    return false;
  }
  UseDeviceLocked(r, dev_id);
  return true;
#else
  refusal << "cannot use GPU " << dev_id << ": cuctx was built without CUDA";
  *error = refusal.str();
  return false;
#endif
}

bool SetUpDeviceForThread(int dev_id, std::string* error) {
  std::ostringstream refusal;
#if CUCTX_HAVE_CUDA
  Registry& r = GetRegistry();
  OrderedLockGuard<std::mutex> lock(r.mutex, kRegistryLock);
  if (r.cpu_selected) {
    refusal << "Check failed: !r.cpu_selected SelectGpuIdForThread(" << dev_id
            << "): this process runs on the CPU (" << r.no_gpu_reason << ")";
    *error = refusal.str();
    return false;
  }
  const bool new_device = !r.devices[dev_id].allocator;
  SetUpDeviceLocked(r, dev_id);
  AllowMultithreadingLocked(r);  // binding threads to devices means several threads
  if (ProcessDevice() < 0) {
    r.gpu_selected = true;
    r.no_gpu_reason.clear();
    SetProcessDevice(dev_id);
    CUCTX_LOG << "selected " << DeviceSummary(r, dev_id) << " (first thread binding)";
  } else if (new_device) {
    CUCTX_LOG << "set up " << DeviceSummary(r, dev_id) << " for a thread";
  }
  return true;
#else
  refusal << "SelectGpuIdForThread(" << dev_id << "): cuctx was built without CUDA (CUDA=0)";
  *error = refusal.str();
  return false;
#endif
}

int VisibleDeviceCount() {
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

std::vector<int> ActiveDevices() {
  std::vector<int> ids;
  for (int d = 0; d < kMaxDevices; ++d)
    if (g_device_allocators[d].load() != nullptr) ids.push_back(d);
  return ids;
}

const CuDeviceProperties* DeviceProperties(int id) {
  if (id < 0 || id >= kMaxDevices) return nullptr;
  Registry& r = GetRegistry();
  OrderedLockGuard<std::mutex> lock(r.mutex, kRegistryLock);
  return r.devices[id].properties.get();
}

bool DevicePeerAccess(int a, int b) {
  if (a < 0 || b < 0 || a >= kMaxDevices || b >= kMaxDevices) return false;
  return GetRegistry().devices[a].peer[b].load();
}

std::string NoGpuReason() {
  Registry& r = GetRegistry();
  OrderedLockGuard<std::mutex> lock(r.mutex, kRegistryLock);
  return r.no_gpu_reason;
}

void NoteGpuUse() {
  if (t_thread_state.gpu_use_noted) return;
  t_thread_state.gpu_use_noted = true;
  Registry& r = GetRegistry();
  OrderedLockGuard<std::mutex> lock(r.mutex, kRegistryLock);
  if (!r.has_owner) {
    r.has_owner = true;
    r.owner = std::this_thread::get_id();
    return;
  }
  if (r.owner != std::this_thread::get_id() && !r.multithreading.load()) {
    AllowMultithreadingLocked(r);
    CUCTX_WARN << "a second thread is using the GPU without CuDevice::AllowMultithreading(); "
               << "switching multithreading on";
  }
}

void AllowMultithreadingOnDevices() {
  Registry& r = GetRegistry();
  OrderedLockGuard<std::mutex> lock(r.mutex, kRegistryLock);
  AllowMultithreadingLocked(r);
}

bool SetDebugStrideModeOnDevices(bool mode) {
  Registry& r = GetRegistry();
  OrderedLockGuard<std::mutex> lock(r.mutex, kRegistryLock);
  bool old = r.debug_stride_mode.exchange(mode);
  for (DeviceRecord& d : r.devices)
    if (d.allocator) d.allocator->SetDebugStrideMode(mode);
  return old;
}

bool DebugStrideModeOnDevices() { return GetRegistry().debug_stride_mode.load(); }

}  // namespace internal
}  // namespace cuctx
