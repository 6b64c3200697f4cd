// cudamatrix/internal/cu-device-registry.h: the per-device registry: which devices the process
// uses, and for each one its properties, its caching allocator and its peer links. Private to
// cudamatrix/; CuDevice (cu-device.h) is the public facade over it.
// SPDX-License-Identifier: Apache-2.0
//
// Owns: one record per device ordinal (at most kMaxDevices), filled the first time the device is
// used (selected for the process or bound by a thread: context, properties, allocator, peer access
// to the devices already in use) and never emptied, plus the process's selection state (whether a
// GPU or the CPU was chosen, why no GPU is used, the first thread that used the GPU). Leaked on
// purpose: no CUDA call may run from a static destructor after main returns.
//
// What is per device but kept elsewhere, and why: the capture gate sits below the allocator, which
// passes it (internal/cu-capture-gate.h, a fixed table by ordinal); the pinned pools are a layer
// above (cu-pinned.cc, which also has a pool for "no device"); read-back slots and profile event
// pools are per thread and per device (cu-readback.cc, cu-profile.cc), reached without a lock.
//
// Lock order: the registry's mutex is level 1 (internal/cu-lock-order.h): device set-up holds it
// while it makes the allocator and enables peer access; nothing called with an allocator's mutex
// or a capture gate held takes it.
// Thread-safety: every function is thread-safe. Reads of a set-up device's allocator and peer
// flags take no lock. No stream.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_DEVICE_REGISTRY_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_DEVICE_REGISTRY_H_

#include "cudamatrix/cu-device-properties.h"
#include "cudamatrix/cu-thread-state.h"

#include <atomic>
#include <string>
#include <vector>

namespace cuctx {

class CuMemoryAllocator;
struct CuAllocatorOptions;

namespace internal {

// The caching allocator options that device set-up uses (CuDevice::AllocatorOptions()).
CuAllocatorOptions& DeviceAllocatorOptions();

// The three below refuse a request the way CuDevice documents by setting *error (the message that
// CuDevice then throws, so that the error names the CuDevice method) and returning -1 or false;
// CUDA failures throw.
// CuDevice::SelectGpuId: chooses and sets up the process's device for mode `use_gpu` ("yes",
// "no", "optional", "wait"); returns it, or -1 for the CPU (*error empty) or a refusal.
int SelectProcessDevice(const std::string& use_gpu, std::string* error);
// CuDevice::SelectAndInitializeGpuIdWithExistingCudaContext.
bool SelectProcessDeviceWithExistingContext(int dev_id, std::string* error);
// The registry's part of CuDevice::SelectGpuIdForThread: sets `dev_id` up if it is new, switches
// multithreading on, and makes it the process's device if there is none yet.
bool SetUpDeviceForThread(int dev_id, std::string* error);

// The number of CUDA devices the process can see (0 without a driver or CUDA).
int VisibleDeviceCount();
// Devices set up so far, ascending.
std::vector<int> ActiveDevices();
// Device `id`'s allocator (nullptr if it is not set up or out of range). No lock: each slot goes
// from null to its final value once, under the registry's mutex.
extern std::atomic<CuMemoryAllocator*> g_device_allocators[kMaxDevices];
inline CuMemoryAllocator* DeviceAllocator(int id) noexcept {
  return id >= 0 && id < kMaxDevices ? g_device_allocators[id].load() : nullptr;
}
// Properties of set-up device `id`, or nullptr when it is not set up (id < 0: no GPU).
const CuDeviceProperties* DeviceProperties(int id);
// Whether kernels on device `a` may access device `b`'s memory (enabled by cuctx). No lock.
bool DevicePeerAccess(int a, int b);
// Why no GPU is in use, or "".
std::string NoGpuReason();

// Records that the calling thread uses the GPU; a second thread switches multithreading on (with a
// warning unless AllowMultithreadingOnDevices() was called). One lock per thread, once; callers on
// hot paths check t_thread_state.gpu_use_noted first (internal/cu-thread-state.h).
void NoteGpuUse();
// CuDevice::AllowMultithreading: every allocator, present and future, locks.
void AllowMultithreadingOnDevices();
// CuDevice::SetDebugStrideMode / GetDebugStrideMode, for every allocator.
bool SetDebugStrideModeOnDevices(bool mode);
bool DebugStrideModeOnDevices();

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_DEVICE_REGISTRY_H_
