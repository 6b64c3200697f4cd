// cudamatrix/internal/cu-readback.h: where the reductions that return a value to the host (Sum,
// Max, FrobeniusNorm, VecVec, TraceMatMat, ...) put their result: a per-thread, per-device
// ReadbackSlot, and the helpers that run a reduction launcher into it or into device memory.
// SPDX-License-Identifier: Apache-2.0
//
// Internal to cudamatrix/. The slot turns a host-result reduction into one kernel launch and one
// wait: the kernel's last block stores the result straight into mapped pinned host memory, so
// there is no allocation, no memset and no copy per call.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_READBACK_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_READBACK_H_

#include "cudamatrix/cu-graph.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-storage.h"

#include <cstddef>

namespace cuctx {
namespace internal {

// One thread's reduction state on one device: ReduceWorkspaceBytes() of device memory (its block
// counter zero between launches) and a small mapped pinned host buffer the kernels write results
// and a completion flag into. Wait() spins on the flag for up to kSpinSeconds (a reduction of a
// few hundred MB), then waits for the stream as usual, so the host sees the result as soon as the
// last block stores it rather than after the stream's completion reaches the host (measured on an
// H100: about 0.5 us less per round trip than cudaStreamSynchronize). Created on the thread's first host-result reduction on that device (one cudaMalloc and one
// cudaHostAlloc, once) and freed when the thread exits. Owned and used by one thread only, on its
// own stream, so consecutive reductions never overlap in it. Never used inside a CUDA-graph capture
// (a replay on another thread's stream could overlap the owner's own use): the host-result forms
// refuse to be captured, and the device-result forms use ReduceOnDevice.
class ReadbackSlot {
 public:
  explicit ReadbackSlot(int device);
  ~ReadbackSlot();
  ReadbackSlot(const ReadbackSlot&) = delete;
  ReadbackSlot& operator=(const ReadbackSlot&) = delete;

  static constexpr double kSpinSeconds = 1e-3;

  void* Workspace() const { return work_; }
  // Where a kernel stores a T for the host (a device-usable address of the pinned buffer).
  template <typename T>
  T* Result() const {
    return static_cast<T*>(result_device_);
  }
  // The completion flag the kernel sets (device-usable address); Arm() clears it before a launch.
  unsigned int* Done() const { return done_device_; }
  void Arm() const { *done_host_ = 0; }
  // Copies `bytes` (at most kCopyBytes) from device memory to `host_dst` through the pinned
  // buffer, after the work queued on `stream` before it: one cudaMemcpyAsync and one wait, no
  // staging allocation (used for solver infos and the like).
  static constexpr size_t kCopyBytes = 32;
  void CopyToHost(void* host_dst, const void* device_src, size_t bytes, CuStream stream) const;
  // Waits until the armed reduction queued on `stream` stored its result, then returns it.
  template <typename T>
  T Wait(CuStream stream) const {
    WaitFor(stream);
    return *static_cast<const volatile T*>(result_host_);
  }

 private:
  void WaitFor(CuStream stream) const;

  int device_;
  void* work_ = nullptr;
  void* result_host_ = nullptr;
  void* result_device_ = nullptr;
  volatile unsigned int* done_host_ = nullptr;
  unsigned int* done_device_ = nullptr;
};

// The calling thread's slot on the selected device (GPU mode only).
ReadbackSlot& ThreadReadbackSlot();
// Frees the calling thread's slots now rather than at thread exit (a later reduction makes a new
// one). For a process's main thread before it gives its cached memory back (tests do, so that
// compute-sanitizer's leak check sees only real leaks). No-op without CUDA.
void ReleaseThreadReadbackSlots();

// Runs launch(d_work, out, done) -- one reduction launcher that stores a T at `out` and then sets
// *done -- on the calling thread's stream through its ReadbackSlot, and returns the value. Not
// allowed inside a CUDA-graph capture (a cuctx::Error says so).
template <typename T, typename Launch>
inline T ReduceToHost(Launch&& launch) {
  CheckNotCapturing("a reduction that returns its value to the host");
  ReadbackSlot& slot = ThreadReadbackSlot();
  slot.Arm();
  launch(slot.Workspace(), slot.Result<T>(), slot.Done());
  return slot.Wait<T>(ThreadStream());
}

// Runs launch(d_work) -- a launcher given no `done` flag -- with a workspace of its own (device memory from the Cu allocator, so a
// capture gets graph-owned memory), for reductions whose result stays on the device.
template <typename Launch>
inline void ReduceOnDevice(Launch&& launch) {
  ScopedStorage work(ReduceWorkspaceBytes());
  LaunchZeroReduceWorkspace(work.Data(), ThreadStream());
  launch(work.Data());
}

// One whole-matrix reduction (LaunchMatReduce; a vector is one row, internal::VecDim) on
// `stream`, its value returned to the host / left on the device at `result`.
template <typename Real>
inline Real MatReduceToHost(MatrixDim dim, const Real* data, MatReduce op, Real tol,
                            CuStream stream) {
  return ReduceToHost<Real>([&](void* work, Real* out, unsigned int* done) {
    LaunchMatReduce(dim, data, op, tol, work, out, done, stream);
  });
}
template <typename Real>
inline void MatReduceOnDevice(MatrixDim dim, const Real* data, MatReduce op, Real* result,
                              CuStream stream) {
  ReduceOnDevice(
      [&](void* work) { LaunchMatReduce(dim, data, op, Real(0), work, result, nullptr, stream); });
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_READBACK_H_
