// cudamatrix/cu-thread-state.cc: the calling thread's device and capture flag (cu-thread-state.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-thread-state.h"

#include "base/error.h"
#include "cudamatrix/internal/cu-thread-state.h"

#include <sstream>

namespace cuctx {
namespace internal {
__attribute__((tls_model("initial-exec"))) thread_local ThreadState t_thread_state;
std::atomic<int> g_process_device{-1};

int ThreadDevice() noexcept { return ThreadDeviceInline(); }

int ThreadObjectDevice() noexcept {
  // Plain thread_local ints (no constructor, so no guard), not CuDevice::Instantiate(): this runs
  // for every operand of every op.
  const int override_device = t_thread_state.override_device;
  return override_device != kNoDeviceOverride ? override_device : ThreadDevice();
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

void SetThreadObjectDeviceForTesting(int device) { t_thread_state.override_device = device; }

int ThreadBoundDevice() noexcept { return t_thread_state.bound; }
void SetThreadBoundDevice(int device) noexcept { t_thread_state.bound = device; }
int ProcessDevice() noexcept { return g_process_device.load(); }
void SetProcessDevice(int device) noexcept { g_process_device.store(device); }
bool ThreadCapturing() noexcept { return t_thread_state.capturing; }
void SetThreadCapturing(bool capturing) noexcept { t_thread_state.capturing = capturing; }

}  // namespace internal
}  // namespace cuctx
