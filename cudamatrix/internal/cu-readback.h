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

#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-storage.h"

#include <cstddef>
#include <cstring>

namespace cuctx {
namespace internal {

// One thread's reduction state on one device: ReduceWorkspaceBytes() of device memory (its block
// counter zero between launches) and a small mapped pinned host buffer the kernels post results
// into (HostPost: two words tagged with the launch's sequence number). Wait() spins until both
// words carry the sequence number Arm() handed out, for up to kSpinSeconds (a reduction of a few
// hundred MB), then waits for the stream as usual, so the host sees the result as soon as the
// last block stores it rather than after the stream's completion reaches the host (measured on an
// H100: about 0.5 us less per round trip than cudaStreamSynchronize). Created on the thread's
// first host-result reduction on that device (one cudaMalloc and one cudaHostAlloc, once) and
// freed when the thread exits. Owned and used by one thread only, on its own stream, so
// consecutive reductions never overlap in it. Never used inside a CUDA-graph capture (a replay on
// another thread's stream could overlap the owner's own use): the host-result forms refuse to be
// captured, and the device-result forms use ReduceOnDevice.
class ReadbackSlot {
 public:
  explicit ReadbackSlot(int device);
  ~ReadbackSlot();
  ReadbackSlot(const ReadbackSlot&) = delete;
  ReadbackSlot& operator=(const ReadbackSlot&) = delete;

  static constexpr double kSpinSeconds = 1e-3;

  void* Workspace() const { return work_; }
  // Where the next launch posts its result: a fresh sequence number each call.
  HostPost Arm() { return HostPost{words_device_, ++seq_}; }
  // Copies `bytes` (at most kCopyBytes) from device memory to `host_dst` through the pinned
  // buffer, after the work queued on `stream` before it: one cudaMemcpyAsync and one wait, no
  // staging allocation (used for solver infos and the like).
  static constexpr size_t kCopyBytes = 32;
  void CopyToHost(void* host_dst, const void* device_src, size_t bytes, CuStream stream) const;
  // Waits until the launch armed with `post` and queued on `stream` posted its result, then
  // returns it.
  template <typename T>
  T Wait(HostPost post, CuStream stream) const {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "a result is 4 or 8 bytes");
    const unsigned long long bits = WaitForBits(post.seq, stream);
    T value;
    std::memcpy(&value, &bits, sizeof(T));
    return value;
  }

 private:
  // The result's bits (its two halves joined) once both posted words carry `seq`.
  unsigned long long WaitForBits(unsigned int seq, CuStream stream) const;

  int device_;
  unsigned int seq_ = 0;
  void* work_ = nullptr;
  void* result_host_ = nullptr;
  volatile unsigned long long* words_host_ = nullptr;
  unsigned long long* words_device_ = nullptr;
};

// The calling thread's slot on the selected device (GPU mode only).
ReadbackSlot& ThreadReadbackSlot();
// Frees the calling thread's slots now rather than at thread exit (a later reduction makes a new
// one). For a process's main thread before it gives its cached memory back (tests do, so that
// compute-sanitizer's leak check sees only real leaks). No-op without CUDA.
void ReleaseThreadReadbackSlots();

// Runs launch(d_work, post) -- one reduction launcher that posts a T through `post` -- on the
// calling thread's stream through its ReadbackSlot, and returns the value. Not allowed inside a
// CUDA-graph capture (a cuctx::Error says so).
template <typename T, typename Launch>
inline T ReduceToHost(Launch&& launch) {
  CheckNotCapturing("a reduction that returns its value to the host");
  ReadbackSlot& slot = ThreadReadbackSlot();
  const HostPost post = slot.Arm();
  launch(slot.Workspace(), post);
  return slot.Wait<T>(post, ThreadStream());
}

// Runs launch(d_work) -- a launcher that stores its result in device memory -- with a workspace
// of its own (device memory from the Cu allocator, so a capture gets graph-owned memory).
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
  return ReduceToHost<Real>([&](void* work, HostPost post) {
    LaunchMatReduce(dim, data, op, tol, work, nullptr, post, stream);
  });
}
template <typename Real>
inline void MatReduceOnDevice(MatrixDim dim, const Real* data, MatReduce op, Real* result,
                              CuStream stream) {
  ReduceOnDevice([&](void* work) {
    LaunchMatReduce(dim, data, op, Real(0), work, result, HostPost{}, stream);
  });
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_READBACK_H_
