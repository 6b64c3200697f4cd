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
#include "cudamatrix/internal/cu-driver.h"

#include <cuda.h>
#include <cuda_runtime.h>

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

#if CUCTX_HAVE_CUDA
bool ThreadStreamCapturing() noexcept {
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
bool ThreadStreamCapturing() noexcept { return false; }
void RunInRelaxedCaptureMode(const std::function<void()>& call) { call(); }
#endif

}  // namespace internal
}  // namespace cuctx
