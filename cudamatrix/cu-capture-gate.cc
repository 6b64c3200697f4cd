// cudamatrix/cu-capture-gate.cc: one capture gate per device (internal/cu-capture-gate.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-capture-gate.h"

#include "base/error.h"
#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/internal/cu-lock-order.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-capture-watch-calls.h"
#include "cudamatrix/internal/cu-driver.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <cupti.h>
#include <dlfcn.h>
#include <string>
#endif

namespace cuctx {
namespace internal {
namespace {

// One device's gate: the captures running on it, counted under `mutex`, which a device-wide
// call holds while it runs.
struct Gate {
  std::mutex mutex;
  std::condition_variable captures_done;
  int captures = 0;                // guarded by `mutex`
  std::atomic<uint64> readers{0};  // bit d: device d maps this device's memory (peer access)
};

// Indexed by device ordinal. Leaked on purpose: releases may run from static destructors.
Gate* Gates() {
  static Gate* gates = new Gate[kMaxDevices];
  return gates;
}

Gate* GateOf(int device) {
  CUCTX_CHECK(device >= -1 && device < kMaxDevices)
      << "capture gate: device " << device << " is outside 0.." << kMaxDevices - 1;
  return device < 0 ? nullptr : &Gates()[device];
}

uint64 Bit(int device) { return uint64{1} << device; }

// Runs `wait` holding the gates of every device in `mask` (ascending: the one order in which
// several gates are taken), each once no capture runs on it.
void RunOutside(uint64 mask, const std::function<void()>& wait, const char* what) {
  CheckNotCapturing(what);
  if (mask == 0) {
    wait();
    return;
  }
  LockOrder::Acquire(kCaptureGateLock);
  struct Release {
    ~Release() { LockOrder::Release(kCaptureGateLock); }
  } release_order;
  std::vector<std::unique_lock<std::mutex>> held;
  for (int d = 0; d < kMaxDevices; ++d) {
    if ((mask & Bit(d)) == 0) continue;
    Gate& g = Gates()[d];
    std::unique_lock<std::mutex> lock(g.mutex);
    g.captures_done.wait(lock, [&g] { return g.captures == 0; });
    held.push_back(std::move(lock));
  }
  wait();
}

}  // namespace

void CheckNotCapturing(const char* op) {
  if (ThreadCapturing())
    CUCTX_ERR << op
              << ": not allowed while this thread captures a CUDA graph (CuGraph::Capture): it "
                 "waits for the device or copies to or from host memory. Use its device-result "
                 "form, or move it out of the captured code";
  // A capture begun outside cuctx; only threads that use a GPU can have one.
  if (ThreadDevice() >= 0 && ThreadStreamCapturing())
    CUCTX_ERR << op
              << ": not allowed while this thread captures a CUDA graph (its stream is being "
                 "captured by a cudaStreamBeginCapture outside cuctx): it waits for the device or "
                 "copies to or from host memory. Use its device-result form, or move it out of "
                 "the captured code";
}

CaptureScope::CaptureScope(int device) : device_(device) {
  Gate* g = GateOf(device);
  if (g != nullptr) {
    LockOrder::Acquire(kCaptureGateLock);
    {
      std::lock_guard<std::mutex> lock(g->mutex);
      ++g->captures;
    }
    LockOrder::Release(kCaptureGateLock);
  }
  SetThreadCapturing(true);
}

CaptureScope::~CaptureScope() {
  SetThreadCapturing(false);
  Gate* g = device_ < 0 ? nullptr : &Gates()[device_];
  if (g == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    --g->captures;
  }
  g->captures_done.notify_all();
}

void OutsideCaptures(int device, const std::function<void()>& wait) {
  const uint64 mask = GateOf(device) == nullptr ? 0 : Bit(device);
  RunOutside(mask, wait, "a device-wide wait (SynchronizeGpu, giving memory back)");
}

void OutsideCapturesToRelease(int device, const std::function<void()>& wait) {
  const Gate* g = GateOf(device);
  const uint64 mask = g == nullptr ? 0 : Bit(device) | g->readers.load();
  RunOutside(mask, wait, "giving device memory back");
}

void OutsideAllCaptures(const std::function<void()>& wait) {
  RunOutside(~uint64{0}, wait, "giving page-locked memory back");
}

void NotePeerAccess(int owner, int reader) {
  Gate* g = GateOf(owner);
  CUCTX_CHECK(g != nullptr && GateOf(reader) != nullptr)
      << "NotePeerAccess(" << owner << ", " << reader << "): both must be devices";
  g->readers.fetch_or(Bit(reader));
}

int CapturesRunning(int device) {
  Gate* g = GateOf(device);
  if (g == nullptr) return 0;
  std::lock_guard<std::mutex> lock(g->mutex);
  return g->captures;
}

// ---- the capture watch ------------------------------------------------------------------------

constexpr unsigned kWatchNotStarted = 0xFFFFFFFFu;   // no thread's epoch: every check goes slow
constexpr unsigned kWatchQueryAlways = 0xFFFFFFFEu;  // likewise, for good
// Likewise, while only one thread has checked its stream (the automatic mode, the default): the
// second thread that checks starts the CUPTI watch.
constexpr unsigned kWatchQueryOneThread = 0xFFFFFFFDu;
constexpr unsigned kWatchOff = 0;  // every thread's initial epoch: always fast
constexpr unsigned kWatchRunning = 1;

std::atomic<unsigned> g_capture_watch_epoch{kWatchNotStarted};

#if CUCTX_HAVE_CUDA
namespace {

// CUPTI's entry points, loaded at run time so that libcuctx does not link against libcupti.
using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
using EnableCallbackFn = CUptiResult (*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                         CUpti_CallbackId);
using UnsubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle);

// Runs on the thread that makes the CUDA call, before it returns: mark the thread.
void CUPTIAPI OnStreamCaptureCall(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {
  t_thread_state.stream_maybe_captured = true;
}

// Subscribes to the CUDA calls that can make the calling thread's stream start capturing; false
// (with nothing left subscribed) when CUPTI cannot be used.
bool StartCuptiWatch(std::string* why_not) {
  void* lib = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) lib = dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    *why_not = "libcupti cannot be loaded";
    return false;
  }
  auto subscribe = reinterpret_cast<SubscribeFn>(dlsym(lib, "cuptiSubscribe"));
  auto enable = reinterpret_cast<EnableCallbackFn>(dlsym(lib, "cuptiEnableCallback"));
  auto unsubscribe = reinterpret_cast<UnsubscribeFn>(dlsym(lib, "cuptiUnsubscribe"));
  if (subscribe == nullptr || enable == nullptr || unsubscribe == nullptr) {
    *why_not = "libcupti lacks cuptiSubscribe/cuptiEnableCallback";
    return false;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult r = subscribe(&subscriber, &OnStreamCaptureCall, nullptr);
  if (r != CUPTI_SUCCESS) {
    *why_not = "cuptiSubscribe failed (" + std::to_string(static_cast<int>(r)) +
               "; another CUPTI subscriber, such as a profiler or compute-sanitizer?)";
    return false;
  }
  // CUCTX_CAPTURE_WATCH_DOMAINS=driver leaves the runtime's ids out, to measure what they cost
  // each runtime call; the driver's ids alone see captures begun through the runtime too
  // (BENCHMARKS.md, run `tls-4`). Not a supported setting.
  const char* domains = std::getenv("CUCTX_CAPTURE_WATCH_DOMAINS");
  const bool runtime_ids = domains == nullptr || std::string(domains) != "driver";
  bool ok = true;
  for (CUpti_CallbackId id : kCaptureWatchDriverCalls)
    ok = ok && enable(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS;
  for (CUpti_CallbackId id : kCaptureWatchRuntimeCalls)
    ok = ok &&
         (!runtime_ids || enable(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id) == CUPTI_SUCCESS);
  if (!ok) {
    unsubscribe(subscriber);
    *why_not = "cuptiEnableCallback failed";
    return false;
  }
  return true;  // subscribed for the process's life
}

// Whether the CUPTI callbacks are subscribed (they stay so for the process's life); guarded by
// g_watch_mutex.
std::mutex g_watch_mutex;
bool g_cupti_subscribed = false;
// The automatic mode's count of threads that checked their stream, and its generation (each entry
// into the mode starts a new one, so that threads counted before count again).
std::atomic<int> g_checking_threads{0};
std::atomic<unsigned> g_auto_generation{1};
// The generation in which the calling thread was counted (0: never). Read only on the slow path.
thread_local unsigned t_counted_generation = 0;

// Under g_watch_mutex: the CUPTI watch from now on, or the driver at every call if CUPTI cannot
// be used. Returns the new epoch.
unsigned StartCuptiOrQueryLocked(const std::string& why_not_prefix) {
  std::string why_not = why_not_prefix;
  if (g_cupti_subscribed || StartCuptiWatch(&why_not)) {
    g_cupti_subscribed = true;
    g_capture_watch_epoch.store(kWatchRunning, std::memory_order_release);
    return kWatchRunning;
  }
  CUCTX_VLOG(1) << "capture watch: " << why_not
                << "; every Malloc/Free asks the driver whether its stream captures";
  g_capture_watch_epoch.store(kWatchQueryAlways, std::memory_order_release);
  return kWatchQueryAlways;
}

void EnterAutoModeLocked() {
  g_checking_threads.store(0, std::memory_order_relaxed);
  g_auto_generation.fetch_add(1, std::memory_order_relaxed);
  g_capture_watch_epoch.store(kWatchQueryOneThread, std::memory_order_release);
}

// The automatic mode: counts the calling thread once; the second thread moves the process to the
// CUPTI watch (its subscription makes every CUDA call dearer, which pays only once threads would
// contend for the driver's answer). Returns the epoch to go on with.
unsigned CountCheckingThread() {
  const unsigned generation = g_auto_generation.load(std::memory_order_relaxed);
  if (t_counted_generation == generation) return kWatchQueryOneThread;
  t_counted_generation = generation;
  if (g_checking_threads.fetch_add(1, std::memory_order_acq_rel) == 0) return kWatchQueryOneThread;
  std::lock_guard<std::mutex> lock(g_watch_mutex);
  const unsigned epoch = g_capture_watch_epoch.load(std::memory_order_acquire);
  if (epoch != kWatchQueryOneThread) return epoch;
  return StartCuptiOrQueryLocked("a second thread checks its stream");
}

void StartWatch() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("CUCTX_CAPTURE_WATCH");
    std::string mode = env == nullptr ? "auto" : env;
    if (mode != "auto" && mode != "cupti" && mode != "query" && mode != "off") {
      CUCTX_WARN << "CUCTX_CAPTURE_WATCH=" << mode
                 << ": expected auto, cupti, query or off; using auto";
      mode = "auto";
    }
    if (mode == "off") {
      g_capture_watch_epoch.store(kWatchOff, std::memory_order_release);
      return;
    }
    std::lock_guard<std::mutex> lock(g_watch_mutex);
    if (mode == "auto") {
      EnterAutoModeLocked();
    } else if (mode == "query") {
      g_capture_watch_epoch.store(kWatchQueryAlways, std::memory_order_release);
    } else {
      StartCuptiOrQueryLocked("CUCTX_CAPTURE_WATCH=" + mode);
    }
  });
}

bool DriverSaysCapturing() noexcept {
  using IsCapturingFn = CUresult (*)(CUstream, CUstreamCaptureStatus*);
  // Looked up once; a missing driver leaves it null (nothing can capture then).
  static const IsCapturingFn is_capturing = [] {
    IsCapturingFn fn = nullptr;
    std::string why_not;
    LoadDriverFunction("cuStreamIsCapturing", &fn, &why_not);
    return fn;
  }();
  if (is_capturing == nullptr) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return is_capturing(CU_STREAM_PER_THREAD, &status) == CUDA_SUCCESS &&
         status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

}  // namespace

void StartCaptureWatch() noexcept {
  try {
    StartWatch();
  } catch (...) {
    g_capture_watch_epoch.store(kWatchQueryAlways, std::memory_order_release);
  }
}

bool ThreadStreamCapturingSlow() noexcept {
  unsigned epoch = g_capture_watch_epoch.load(std::memory_order_acquire);
  if (epoch == kWatchNotStarted) {
    StartCaptureWatch();
    epoch = g_capture_watch_epoch.load(std::memory_order_acquire);
  }
  if (epoch == kWatchQueryOneThread) epoch = CountCheckingThread();
  if (epoch == kWatchOff) {
    // The fast path from now on (a later switch to the watch re-asks: the epochs differ).
    ThreadState& t = t_thread_state;
    t.capture_watch_epoch = kWatchOff;
    t.stream_maybe_captured = false;
    return false;
  }
  const bool capturing = DriverSaysCapturing();
  if (epoch == kWatchRunning) {
    ThreadState& t = t_thread_state;
    t.capture_watch_epoch = epoch;
    t.stream_maybe_captured = capturing;
  }
  return capturing;
}

bool SetCaptureWatchModeForTesting(const std::string& mode) {
  CUCTX_CHECK(mode == "off" || mode == "query" || mode == "cupti" || mode == "auto")
      << "SetCaptureWatchModeForTesting: mode must be off, query, cupti or auto, got '" << mode
      << "'";
  StartCaptureWatch();  // the once-only start first, so that it cannot undo this switch later
  std::lock_guard<std::mutex> lock(g_watch_mutex);
  if (mode == "off") {
    g_capture_watch_epoch.store(kWatchOff, std::memory_order_release);
  } else if (mode == "query") {
    g_capture_watch_epoch.store(kWatchQueryAlways, std::memory_order_release);
  } else if (mode == "auto") {
    EnterAutoModeLocked();
  } else {
    std::string why_not;
    if (!g_cupti_subscribed && !StartCuptiWatch(&why_not)) return false;
    g_cupti_subscribed = true;
    // Threads that checked under an earlier run of the watch kept being marked by the callbacks
    // meanwhile, so their cached epoch stays valid.
    g_capture_watch_epoch.store(kWatchRunning, std::memory_order_release);
  }
  return true;
}

const char* CaptureWatchMode() {
  StartCaptureWatch();
  switch (g_capture_watch_epoch.load(std::memory_order_acquire)) {
    case kWatchOff:
      return "off";
    case kWatchRunning:
      return "cupti";
    case kWatchQueryOneThread:
      return "auto";
    default:
      return "query";
  }
}

void RunInRelaxedCaptureMode(const std::function<void()>& call) {
  if (!ThreadCapturing() && !ThreadStreamCapturing()) {
    call();
    return;
  }
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  CUCTX_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  struct Restore {
    cudaStreamCaptureMode* mode;
    ~Restore() { CUCTX_CUDA_CHECK_NOTHROW(cudaThreadExchangeStreamCaptureMode(mode)); }
  } restore{&mode};
  call();
}
#else
bool ThreadStreamCapturingSlow() noexcept { return false; }
bool SetCaptureWatchModeForTesting(const std::string& mode) {
  CUCTX_CHECK(mode == "off" || mode == "query" || mode == "cupti" || mode == "auto")
      << "SetCaptureWatchModeForTesting: mode must be off, query, cupti or auto, got '" << mode
      << "'";
  return mode != "cupti";  // without CUDA nothing captures; there is no CUPTI to watch with
}
const char* CaptureWatchMode() { return "off"; }
void StartCaptureWatch() noexcept {}
void RunInRelaxedCaptureMode(const std::function<void()>& call) { call(); }
#endif

}  // namespace internal
}  // namespace cuctx
