// cudamatrix/cu-device.h: the per-thread GPU context: device choice, library handles, memory.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_DEVICE_H_
#define CUCTX_CUDAMATRIX_CU_DEVICE_H_

#include "base/types.h"
#include "cudamatrix/cu-device-properties.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-thread-state.h"  // ThreadObjectDevice, CheckObjectDevice (Cu containers)

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <thread>  // not used here: Kaldi's cu-device.h reaches <thread>, and ported programs use it
#include <vector>

// Opaque library handle types, declared here so that this header needs no CUDA header. They are
// the same types the CUDA headers declare (cublasHandle_t is cublasContext*, and so on).
struct cublasContext;
struct cusparseContext;
struct curandGenerator_st;
struct cusolverDnContext;

namespace cuctx {

class OptionsItf;
class CuMemoryAllocator;
struct CuAllocatorOptions;

// Times a stretch of code for CuDevice::AccuProfile, the way the Cu ops profile themselves
// (cu-profile.h). Active only when GetVerboseLevel() >= 1 (and not inside a CUDA-graph capture).
// An active timer reads the host clock and, with a GPU selected, records a start event on this
// thread's stream; AccuProfile then records an end event and queues the pair, so the time it adds
// is the GPU time of the work queued in between, resolved later without synchronizing the
// stream. Without a GPU it adds host time. Inactive, construction is one branch and nothing else.
// Use a timer on the thread that created it. Not copyable (it holds a pooled event).
class CuTimer {
 public:
  CuTimer();
  ~CuTimer();
  CuTimer(const CuTimer&) = delete;
  CuTimer& operator=(const CuTimer&) = delete;
  bool Active() const { return active_; }
  // Host seconds since construction (0 when inactive); does not wait for the GPU.
  double ElapsedSeconds() const;

 private:
  friend class CuDevice;
  bool active_;
  bool marked_ = false;  // mark_ holds a started measurement
  double start_;
  internal::ProfileMark mark_;
};

// CuDevice: the calling thread's view of the GPU runtime (one thread_local instance per thread).
//
// Owns: this thread's cuBLAS, cuSPARSE, cuRAND and cuSOLVER handles, bound to cudaStreamPerThread
// and destroyed when the thread exits. The thread that calls SelectGpuId gets its cuBLAS, cuSPARSE
// and cuSOLVER handles there (as in Kaldi: that thread usually runs the program's ops, and each
// handle costs milliseconds); every other thread creates each handle on first use, so a thread
// that never calls a library never pays for one. SelectGpuId also loads cuctx's own kernels into
// the selected device's context (CUDA would load each at its first launch, waiting there for the
// device's queued work; internal/cu-launch.h). Everything shared by all threads
// lives below it (README's runtime stack): which device the process selected and which one this
// thread bound itself to (cu-thread-state.h), and, for each device in use, its properties, its
// caching allocator and its peer links, in the per-device registry (cu-device-registry.cc); each
// device also has its own capture gate (internal/cu-capture-gate.h).
//
// Thread-safety: Instantiate() is safe from any thread and returns that thread's object; the
// object itself must only be used by its own thread. Device selection is process-wide: select once
// (usually from main), and every other thread that calls Instantiate() uses the same device,
// unless it binds itself to another one (SelectGpuIdForThread: one device per thread, each device
// with its own allocator; Cu objects remember their device and are used on it).
// Stream: all device work of a thread goes to that thread's cudaStreamPerThread on its device.
//
// With no GPU selected (mode "no", or "optional" without a usable GPU, or a build without CUDA),
// Enabled() is false and every Cu* class runs its CPU path.
class CuDevice {
 public:
  // Returns the calling thread's instance, creating it on first use. Cheap after the first call.
  static CuDevice& Instantiate();

  // Selects the device for the whole process. `use_gpu` is one of:
  //   "yes"      a GPU or a cuctx::Error that says why none could be used (CUDA's reason);
  //   "no"       the CPU;
  //   "optional" a GPU if one can be had, else the CPU with a warning;
  //   "wait"     like "yes", but while every device is busy (exclusive mode) retries every few
  //              seconds, saying how long it has waited.
  // Any other string is an error that lists the four. The automatic choice takes, in exclusive
  // compute mode, the device the driver hands out; otherwise the device with the largest
  // free/total memory ratio. CUDA_VISIBLE_DEVICES is honoured. Selecting again after a GPU was
  // selected is an error; selecting "no" again is allowed.
  void SelectGpuId(const std::string& use_gpu);

  // Uses `dev_id` in a process that has already set up a CUDA context (e.g. another framework).
  void SelectAndInitializeGpuIdWithExistingCudaContext(int dev_id);

  // ---- Several GPUs in one process: one device per thread ----------------------------------
  // Binds the calling thread to device `dev_id` (a CUDA ordinal, after CUDA_VISIBLE_DEVICES):
  // from then on this thread's Cu objects are allocated there, its library handles and stream
  // belong to that device, and its read-back and pinned buffers are that device's. Each device
  // has its own caching allocator, set up (context, properties, allocator, peer access to the
  // devices already in use) the first time any thread binds to it. If the process has no GPU
  // selected yet, `dev_id` also becomes the process's device, as if SelectGpuId had chosen it;
  // threads that never bind use the process's device. Binding again to another device first
  // waits for this thread's queued work and drops its handles; Cu objects made on the old device
  // stay there (using them from this thread is then a wrong-device error, see CuMatrixBase::
  // DeviceId()). Throws cuctx::Error for an ordinal out of range (naming the count), after
  // SelectGpuId("no"), and in a build without CUDA. Thread-safe.
  void SelectGpuIdForThread(int dev_id);

  // The number of CUDA devices the process can see (0 without a driver or in a CUDA=0 build).
  static int DeviceCount();

  // The devices this process has set up so far (selected or bound by some thread), ascending.
  static std::vector<int> ActiveDeviceIds();

  // Whether kernels on device `a` can read and write device `b`'s memory directly (peer access
  // enabled by cuctx when both are in use and the hardware allows it). False for a == b.
  static bool PeerAccessEnabled(int a, int b);

  // True when a GPU is selected for this process (and so for this thread).
  bool Enabled() const;

  // This thread's device: the one it bound to with SelectGpuIdForThread, else the process's
  // selected device; -1 with no GPU.
  int DeviceId() const;

  // Properties of the selected device; throws cuctx::Error when no GPU is selected.
  const CuDeviceProperties& Properties() const;

  // The selected device's name, or "none".
  std::string DeviceName() const;

  // Why no GPU is in use ("--use-gpu=no", "built without CUDA", or CUDA's error), or "".
  std::string NoGpuReason() const;

  // True without a GPU (the CPU path has double) or when the GPU has double (compute >= 1.3).
  bool DoublePrecisionSupported() const;
  bool IsComputeExclusive() const;

  // Writes device `dev`'s name into `name` (at most `len` bytes including the terminator).
  void DeviceGetName(char* name, int32 len, int32 dev);

  // Pitch alignment of device matrices in bytes (256), or 0 with no GPU.
  int32 GetMatrixAlignment() const;

  // This thread's library handles, created on first call unless SelectGpuId made them (see the
  // class comment). Throw cuctx::Error with no GPU selected.
  cublasContext* GetCublasHandle();
  cusparseContext* GetCusparseHandle();
  curandGenerator_st* GetCurandHandle();
  cusolverDnContext* GetCusolverDnHandle();

  // Process-wide options (see CuDeviceOptions); register before SelectGpuId.
  static void RegisterDeviceOptions(OptionsItf* opts);
  static CuDeviceOptions& DeviceOptions();

  // The caching allocator's options (--cuda-cache-memory, --cuda-memory-proportion, ...; see
  // cu-allocator-options.h). They take effect when a device is selected, so register and parse
  // them before SelectGpuId. The environment variable CUCTX_CUDA_CACHE_MEMORY=false also turns
  // caching off (used to run unmodified binaries under compute-sanitizer).
  static void RegisterCuAllocatorOptions(OptionsItf* opts);
  static CuAllocatorOptions& AllocatorOptions();

  // The selected device's caching allocator, or nullptr with no GPU. For statistics and tools.
  CuMemoryAllocator* Allocator();

  // Debug stride mode: device matrices get a pitch larger than needed, so code that wrongly
  // assumes stride == cols fails in tests. Returns the previous mode. Process-wide.
  bool SetDebugStrideMode(bool mode);
  bool GetDebugStrideMode() const;

  // Declares that several threads will use the GPU. The first thread that uses the GPU owns it;
  // another thread using it without this call switches multithreading on with a warning.
  void AllowMultithreading();

  // Seeds this thread's cuRAND generator: from base/random's Rand() (reproducible after
  // SetRandomSeed), or with an explicit seed. No-op without a GPU.
  void SeedGpu();
  void SeedGpu(uint64 seed);

  // Profiling (only at verbose >= 1; see cu-profile.h): adds one call of `function_name` and the
  // time since `timer` started to the process-wide totals. With a GPU selected the time is that
  // of the GPU work queued on this thread's stream since then, taken from CUDA events and resolved
  // later: AccuProfile does not synchronize. The name is copied. No-op for an inactive timer and
  // while this thread captures a CUDA graph. May be called several times with one timer.
  void AccuProfile(const char* function_name, const CuTimer& timer);
  // At verbose >= 1, resolves every thread's pending measurements (waiting for the GPU work they
  // time) and logs one line per op, largest total first: total seconds, calls, mean microseconds
  // per call. Nested ops are counted under each name, so a parent includes its children.
  void PrintProfile();
  // The accumulated profile of all threads by op name, after resolving pending measurements as
  // PrintProfile does (at any verbose level; empty if nothing was ever profiled).
  std::map<std::string, CuProfileEntry> GetProfile();

  // Logs the caching allocator's statistics and the device's free/total memory, each labelled.
  void PrintMemoryUsage() const;

  // Checks a matrix product on the GPU against the CPU (see cu-gemm-check.h); throws cuctx::Error
  // with the measured relative error if they disagree. No-op without a GPU.
  void CheckGpuHealth();

  // Device memory through the process's caching allocator for the selected device (see
  // cu-allocator.h). Malloc(0) returns nullptr. Freeing an unknown pointer is a cuctx::Error.
  // Throw cuctx::Error with no GPU selected and cuctx::OutOfMemoryError when memory runs out.
  void* Malloc(size_t size);
  // Rows of `row_bytes` with a pitch (returned in *pitch) that is a multiple of 256 bytes.
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch);
  void Free(void* ptr);

  // The thread's CUDA stream (cudaStreamPerThread), as an opaque pointer.
  void* Stream() const;

  ~CuDevice();
  CuDevice(const CuDevice&) = delete;
  CuDevice& operator=(const CuDevice&) = delete;

 private:
  CuDevice();
  // Makes this thread's device (DeviceId()) current for CUDA, if it is not already.
  void AttachToSelectedDevice();
  // What every Get*Handle does the first time: checks that a GPU is selected (the error names
  // `getter`), attaches the thread, notes its GPU use and runs `make` outside other threads'
  // captures on the device (CheckNotCapturing(`what`) first). CUDA builds only.
  void MakeHandle(const char* getter, const char* what, const std::function<void()>& make);
  // Destroys this thread's library handles (thread exit, or a new binding). Never throws.
  void DestroyHandles() noexcept;
  void DestroyHandlesNow() noexcept;  // DestroyHandles without waiting for other captures

  int device_id_ = -1;  // the device made current for this thread (cudaSetDevice) and its handles
  cublasContext* cublas_ = nullptr;
  cusparseContext* cusparse_ = nullptr;
  curandGenerator_st* curand_ = nullptr;
  cusolverDnContext* cusolver_ = nullptr;
};

// Free-function forms of the handle getters, as in Kaldi.
inline cublasContext* GetCublasHandle() { return CuDevice::Instantiate().GetCublasHandle(); }
inline cusparseContext* GetCusparseHandle() { return CuDevice::Instantiate().GetCusparseHandle(); }
inline curandGenerator_st* GetCurandHandle() { return CuDevice::Instantiate().GetCurandHandle(); }
inline cusolverDnContext* GetCusolverDnHandle() {
  return CuDevice::Instantiate().GetCusolverDnHandle();
}

// Orders all threads' per-thread streams: launches an empty kernel on the legacy default stream,
// which waits for and is waited on by every blocking stream. Does not block the host, except
// while some other thread captures a CuGraph on this thread's device: it then waits for that
// capture to end (a legacy launch would break it); captures on other devices do not hold it back.
// No-op without a GPU; an error on a thread that is capturing.
void SynchronizeGpu();

// Free and total memory of the current device in bytes; returns a summary like
// "free:1234M, used:5678M, total:80000M, free/total:0.1234". Throws cuctx::Error without a GPU.
std::string GetFreeGpuMemory(int64* free, int64* total);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_DEVICE_H_
