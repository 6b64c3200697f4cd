// cudamatrix/internal/cu-capture-gate.h: the capture gate: keeps a device's device-wide waits and
// its CUDA-graph captures apart. Private to cudamatrix/.
// SPDX-License-Identifier: Apache-2.0
//
// CUDA rejects, and a running capture does not survive, a call that involves a whole device
// while a stream of that device captures: cudaDeviceSynchronize, a launch on the legacy default
// stream, cudaFree (it synchronizes), unmapping memory after such a sync. cuctx captures in
// cudaStreamCaptureModeThreadLocal, so only these device-wide calls of other threads matter, and
// they go through a gate: each waits until no capture runs on the devices it involves, and a
// capture that starts meanwhile waits until the call returns.
//
// One gate per device. A sync involves its own device's context only. Releasing device memory
// (cudaFree, an unmap) also involves every device that maps that memory through peer access, so it
// passes the gates of the owner and of those peers (NotePeerAccess records them). Page-locked host
// memory (cudaFreeHost, cudaHostUnregister) is mapped for every device and passes every gate.
//
// Lock order: the gates are level 5 of the runtime's order (internal/cu-lock-order.h, the one
// place it is written). An allocator holds its mutex (level 4) while its upstream's Release() and
// SynchronizeAllStreams() pass a gate; a gate's mutex is held only to count a capture in or out
// and around the device-wide CUDA call itself, which takes no cuctx lock, and a capturing thread
// never waits at a gate (it throws instead), so that wait always ends. Several gates are taken in
// ascending device order. Debug builds check the order (LockOrder).
//
// Thread-safety: every function is thread-safe. No stream.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_CAPTURE_GATE_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_CAPTURE_GATE_H_

#include "base/types.h"
#include "cudamatrix/internal/cu-thread-state.h"

#include <atomic>
#include <functional>
#include <string>

namespace cuctx {
namespace internal {

// Throws cuctx::Error saying that `op` cannot run while the calling thread captures a CUDA graph,
// if it does (CuGraph::Capture, or a capture of the thread's stream begun outside cuctx:
// ThreadStreamCapturing()); used by every op that synchronizes or moves data to or from the host.
void CheckNotCapturing(const char* op);

// True while the calling thread's stream (cudaStreamPerThread of its current device) is being
// captured, by cuctx or by anyone else (a cudaStreamBeginCapture outside cuctx, another framework);
// false on a thread without a CUDA context and in a build without CUDA. Never throws.
//
// Asking the driver (cuStreamIsCapturing) costs about 50 ns and takes a lock that threads contend
// for, too much for every Malloc and Free. So a capture watch answers most calls from two
// thread-local fields: CUPTI callbacks (loaded at run time, libcupti) on the CUDA calls that can
// make a thread's stream start capturing (cuStreamBeginCapture*, cuStreamWaitEvent, and their
// runtime forms) mark the calling thread, and only a marked thread, or one that has not checked
// since the watch started, asks the driver; an answer of "not capturing" clears the mark. A stream
// can only start capturing through such a call on its own thread (cudaStreamPerThread names the
// calling thread's stream), so the watch misses nothing. The subscription is not free: with it
// every CUDA call of the process passes CUPTI's dispatch, and any subscription costs alike, even
// one to a single resource callback (a 16 x 16 launch 3.18 us against 3.04 without a subscriber on
// an H200; cuBLAS-heavy ops of Kaldi's vector test 5-10% slower than when the driver is asked;
// BENCHMARKS.md, runs `tls` and `watch-cost`). So by default (CUCTX_CAPTURE_WATCH=auto) the check
// asks the driver at every call while only one thread checks its stream, where nothing contends
// for the driver's lock, and the second thread that checks starts the CUPTI watch for good.
// CUCTX_CAPTURE_WATCH=cupti starts the watch at once, =query always asks the driver, =off turns
// the check off (captures begun outside cuctx are then unsafe); another value warns and means
// auto. When CUPTI cannot be used (no libcupti, another subscriber such as a profiler,
// compute-sanitizer) the watch's modes ask the driver at every call.
// CUCTX_CAPTURE_WATCH_DOMAINS=driver subscribes only the driver's ids, which also see captures
// begun through the runtime (run `tls-4`): a knob for measuring.
bool ThreadStreamCapturingSlow() noexcept;
// The watch's epoch while it runs (threads whose capture_watch_epoch matches and that are not
// marked do not capture); a value no thread holds otherwise.
extern std::atomic<unsigned> g_capture_watch_epoch;
inline bool ThreadStreamCapturing() noexcept {
  const ThreadState& t = t_thread_state;
  if (t.capture_watch_epoch == g_capture_watch_epoch.load(std::memory_order_relaxed) &&
      !t.stream_maybe_captured)
    return false;
  return ThreadStreamCapturingSlow();
}
// True while the calling thread captures a graph by any means: CuGraph::Capture
// (ThreadCapturing()) or a capture of its stream begun outside cuctx (ThreadStreamCapturing(), on
// a thread that uses a GPU). As cheap as ThreadStreamCapturing(); for the checks that must skip a
// wait, or refuse an op, inside every capture.
inline bool ThreadCapturesAnyGraph() noexcept {
  return ThreadCapturing() || (ThreadDeviceInline() >= 0 && ThreadStreamCapturing());
}
// How the check runs: "auto" (the driver at every call until a second thread checks), "cupti"
// (the watch), "query" (the driver at every call) or "off".
const char* CaptureWatchMode();
// Starts the watch (once per process; the device registry calls it when it sets a device up,
// before any capture can run there). Never throws.
void StartCaptureWatch() noexcept;
// Test and benchmark hook: switches the check to `mode` ("off", "query", "cupti" or "auto", which
// counts the checking threads afresh) for every thread, at once; false (nothing changed) when
// "cupti" is asked and CUPTI cannot be used. Throws cuctx::Error on another mode. Once the CUPTI
// watch has run, its callbacks stay subscribed, so switching back to it misses no capture begun
// meanwhile. Call it while no thread captures.
bool SetCaptureWatchModeForTesting(const std::string& mode);

// Marks, for its lifetime, a capture running on `device` (-1: a CPU-mode capture, which involves
// no device): waits while a device-wide call of that device runs, then counts the capture in.
// The capture flag of the calling thread (ThreadCapturing()) is set for the same lifetime.
class CaptureScope {
 public:
  explicit CaptureScope(int device);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  int device_;
};

// Runs `wait`, a call that synchronizes device `device` (cudaDeviceSynchronize, a launch on its
// legacy default stream), once no capture runs on it, holding its gate so that captures starting
// meanwhile wait until `wait` returns. Throws cuctx::Error on a thread that captures. `device` -1
// (no GPU) just runs `wait`.
void OutsideCaptures(int device, const std::function<void()>& wait);

// As OutsideCaptures, for a call that gives back memory of `device` (cudaFree, an unmap): waits
// out the captures of `device` and of every device that maps its memory (NotePeerAccess).
void OutsideCapturesToRelease(int device, const std::function<void()>& wait);

// As OutsideCaptures, for page-locked host memory (cudaFreeHost, cudaHostUnregister): waits out the
// captures of every device.
void OutsideAllCaptures(const std::function<void()>& wait);

// Records that kernels on device `reader` may access device `owner`'s memory (peer access), so
// that releases of `owner`'s memory also wait out `reader`'s captures. Never undone.
void NotePeerAccess(int owner, int reader);

// The number of captures running on `device` right now (tests and diagnostics).
int CapturesRunning(int device);

// Runs `call` with the calling thread's capture mode relaxed (cudaThreadExchangeStreamCaptureMode),
// so that a capturing thread may grow or shrink its graph's private pool (cudaMalloc, cudaFree,
// cuMem*), whose memory no device work has used yet. Outside a capture (ThreadCapturing() and
// ThreadStreamCapturing() both false) it just runs `call`.
void RunInRelaxedCaptureMode(const std::function<void()>& call);

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_CAPTURE_GATE_H_
