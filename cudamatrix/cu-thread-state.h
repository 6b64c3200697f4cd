// cudamatrix/cu-thread-state.h: the lowest layer of the runtime: which device the calling thread
// uses and whether it captures a CUDA graph. Plain thread-local and atomic state, no CUDA.
// SPDX-License-Identifier: Apache-2.0
//
// Owns: one small thread-local record per thread (the device it bound itself to with
// CuDevice::SelectGpuIdForThread, the tests' device override, its capture flag) and the process's
// selected device (an atomic). CuDevice (cu-device.h) writes them when a device is selected or
// bound and CuGraph (cu-graph.h) when a capture starts and ends; every layer above reads them
// here, so that reading "this thread's device" needs no include of cu-device.h.
// Thread-safety: the thread-local parts are read and written by their own thread only; the
// process device is an atomic. No stream.
#ifndef CUCTX_CUDAMATRIX_CU_THREAD_STATE_H_
#define CUCTX_CUDAMATRIX_CU_THREAD_STATE_H_

namespace cuctx {
namespace internal {

// The most device ordinals a process can use; per-device tables have this many slots, so that
// threads read them without a lock while another thread sets a device up.
constexpr int kMaxDevices = 64;

// The device that the calling thread's Cu objects belong to (CuDevice::DeviceId(): the bound
// device, else the process's, else -1), unless a test overrides it (below). Cheap (a thread-local
// read and an atomic load).
int ThreadObjectDevice() noexcept;

// The calling thread's device, ignoring the test override: its binding, else the process's
// selected device, else -1.
int ThreadDevice() noexcept;

// Throws the wrong-device error for a `kind` ("CuMatrix", ...) whose storage is on
// `object_device` (-1: host memory, made without a GPU), used by this thread.
[[noreturn]] void ThrowWrongDevice(const char* kind, int object_device);

// The check behind Data() of every Cu container: an object with storage may only be used by a
// thread of its own device. Copies between devices (CopyFromMat, CopyFromVec) and views do not
// go through it.
inline void CheckObjectDevice(const char* kind, int object_device, const void* data) {
  if (data != nullptr && object_device != ThreadObjectDevice())
    ThrowWrongDevice(kind, object_device);
}

// Tests only: makes ThreadObjectDevice() return `device` on the calling thread (kNoDeviceOverride
// restores the real one), so that the bookkeeping of object devices and the wrong-device errors
// are exercised on machines without a GPU. Storage stays where the GPU mode puts it.
constexpr int kNoDeviceOverride = -1000;
void SetThreadObjectDeviceForTesting(int device);

// ---- Written by the layers above (CuDevice, CuGraph) ----------------------------------------
// The calling thread's binding (-1: none).
int ThreadBoundDevice() noexcept;
void SetThreadBoundDevice(int device) noexcept;
// The process's selected device (-1: none).
int ProcessDevice() noexcept;
void SetProcessDevice(int device) noexcept;
// True while the calling thread captures a CUDA graph (or runs a CPU-mode graph's body).
bool ThreadCapturing() noexcept;
void SetThreadCapturing(bool capturing) noexcept;

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_THREAD_STATE_H_
