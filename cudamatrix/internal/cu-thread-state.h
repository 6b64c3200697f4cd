// cudamatrix/internal/cu-thread-state.h: the storage behind cu-thread-state.h, for the runtime's
// hot paths inside libcuctx (CuDevice::Malloc/Free read the thread's device inline). Private.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_THREAD_STATE_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_THREAD_STATE_H_

#include "cudamatrix/cu-thread-state.h"

#include <atomic>

namespace cuctx {
namespace internal {

// Everything per thread in one struct, so that reading it is one thread-local access
// (initial-exec: no __tls_get_addr call; a few bytes of static TLS). Written by its own thread.
struct ThreadState {
  int bound = -1;  // SelectGpuIdForThread's device
  int override_device = kNoDeviceOverride;
  bool capturing = false;
  bool gpu_use_noted = false;  // NoteGpuUse() (cu-device-registry.h) has run on this thread
  // The capture watch (internal/cu-capture-gate.h): the watch epoch this thread last checked its
  // stream under, and whether a CUDA call since may have started a capture of it.
  bool stream_maybe_captured = false;
  unsigned capture_watch_epoch = 0;
};
extern __attribute__((tls_model("initial-exec"))) thread_local ThreadState t_thread_state;
// The process's selected device, -1 for none.
extern std::atomic<int> g_process_device;

// ThreadDevice(), inline: the binding, else the process's device.
inline int ThreadDeviceInline() noexcept {
  const int bound = t_thread_state.bound;
  return bound >= 0 ? bound : g_process_device.load(std::memory_order_relaxed);
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_THREAD_STATE_H_
