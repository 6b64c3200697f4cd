// cudamatrix/internal/cu-storage.h: raw storage for the Cu containers (device or host, by the GPU
// mode), and the one GPU-or-CPU predicate.
// SPDX-License-Identifier: Apache-2.0
//
// Used by CuArray, CuVector and CuMatrix so that the choice "device memory when a GPU is selected,
// aligned host memory otherwise" is made in one place. All device work is asynchronous on this
// thread's stream (cudaStreamPerThread). Not meant for use outside cudamatrix/.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_STORAGE_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_STORAGE_H_

#include "cudamatrix/internal/cu-kernels.h"

#include <cstddef>

namespace cuctx {
namespace internal {

// The one predicate for "GPU or CPU" in the Cu containers: true when they live on the GPU
// (CuDevice::Instantiate().Enabled()). Constant false in a build without CUDA.
#if CUCTX_HAVE_CUDA
bool OnGpu();
#else
constexpr bool OnGpu() { return false; }
#endif

// `bytes` bytes from CuDevice::Malloc in GPU mode, else 16-byte aligned host memory; nullptr for
// zero bytes. Throws cuctx::OutOfMemoryError / std::bad_alloc on failure.
void* AllocStorage(size_t bytes);

// `rows` rows of `row_bytes` bytes; *pitch receives the row pitch in bytes, a multiple of
// elem_size. GPU mode: CuDevice::MallocPitch (pitch a multiple of 256, larger in debug-stride
// mode). CPU mode: the pitch is row_bytes rounded up to 16 bytes (one more 16-byte unit in
// debug-stride mode, so stride != cols is exercised without a GPU too).
void* AllocPitchedStorage(size_t row_bytes, size_t rows, size_t elem_size, size_t* pitch);

// Releases memory from AllocStorage / AllocPitchedStorage (nullptr is a no-op). Never throws.
void FreeStorage(void* p) noexcept;

// AllocStorage memory for the duration of a scope (scratch for reductions and the like).
class ScopedStorage {
 public:
  explicit ScopedStorage(size_t bytes) : data_(AllocStorage(bytes)) {}
  ~ScopedStorage() { FreeStorage(data_); }
  ScopedStorage(const ScopedStorage&) = delete;
  ScopedStorage& operator=(const ScopedStorage&) = delete;
  void* Data() { return data_; }

 private:
  void* data_;
};

// The calling thread's stream (cudaStreamPerThread), on which every kernel launcher runs.
CuStream ThreadStream();

// The GPU branch of a Cu method whose device work is kernel launches and cuctx helpers: in GPU mode
// calls launch(ThreadStream()), which queues the work on this thread's stream, and returns true;
// otherwise returns false and the caller runs its CPU fallback. A typical method reads:
//   check the arguments; if (Empty()) return;
//   if (internal::RunOnGpu([&](CuStream s) { LaunchScale(Dim(), alpha, data_, s); })) return;
//   CpuView().Scale(alpha);
// In a build without CUDA `launch` is never called (nor emitted), so it may name the launchers of
// cu-kernels.h, which only CUDA builds define. A file-local helper that `launch` calls and that
// itself names a launcher must be declared `inline`: g++ at -O0 emits every non-inline function
// with internal linkage (implicit template instantiations in an anonymous namespace included)
// whether or not anything calls it, so a CPU debug build would not link; inline ones (and the
// lambda's own call operator) are emitted only when called. Branches that call CUDA libraries
// directly (cuBLAS, cuSOLVER, the runtime) stay under `#if CUCTX_HAVE_CUDA` with `if
// (internal::OnGpu())`.
template <typename Launch>
bool RunOnGpu([[maybe_unused]] Launch&& launch) {
#if CUCTX_HAVE_CUDA
  if (OnGpu()) {
    launch(ThreadStream());
    return true;
  }
#endif
  return false;
}

// Sets `rows` rows of `row_bytes` bytes (at `pitch` apart) to zero bytes.
void ZeroStorage2D(void* p, size_t pitch, size_t row_bytes, size_t rows);

// Copies `rows` rows of `row_bytes` between two storages (device to device in GPU mode).
void CopyStorage2D(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t row_bytes,
                   size_t rows);

// Copies `rows` rows of `row_bytes` bytes between storages on two different devices, one of
// which must be the calling thread's (cuctx::Error otherwise, and inside a graph capture). The
// copy is queued on this thread's stream after all work that any thread has queued so far on the
// other device, and all work queued there afterwards waits for it (events on that device's legacy
// default stream, which every per-thread stream there orders with), so neither side waits on the
// host. Peer to peer where the devices have peer access; the driver stages through host memory
// otherwise. Without a GPU (tests that override object devices) a host copy.
void CopyAcrossDevices2D(void* dst, int dst_device, size_t dst_pitch, const void* src,
                         int src_device, size_t src_pitch, size_t row_bytes, size_t rows);

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_STORAGE_H_
