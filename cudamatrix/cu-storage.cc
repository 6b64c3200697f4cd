// cudamatrix/cu-storage.cc: raw storage for the Cu containers (device or host, by the GPU mode).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-storage.h"

#include "base/error.h"
#include "cudamatrix/cu-device.h"

#include <cstdlib>
#include <cstring>
#include <new>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-device-scope.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace internal {

CuStream ThreadStream() { return static_cast<CuStream>(CuDevice::Instantiate().Stream()); }

#if CUCTX_HAVE_CUDA
bool OnGpu() { return CuDevice::Instantiate().Enabled(); }
#endif

void* AllocStorage(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (OnGpu()) return CuDevice::Instantiate().Malloc(bytes);
  void* p = std::aligned_alloc(16, (bytes + 15) / 16 * 16);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* AllocPitchedStorage(size_t row_bytes, size_t rows, size_t elem_size, size_t* pitch) {
  *pitch = row_bytes;
  if (row_bytes == 0 || rows == 0) return nullptr;
  if (OnGpu()) {
    void* p = CuDevice::Instantiate().MallocPitch(row_bytes, rows, pitch);
    CUCTX_ASSERT(*pitch % elem_size == 0);
    return p;
  }
  size_t padded = (row_bytes + 15) / 16 * 16;
  if (CuDevice::Instantiate().GetDebugStrideMode()) padded += 16;
  CUCTX_ASSERT(padded % elem_size == 0);
  *pitch = padded;
  void* p = std::aligned_alloc(16, padded * rows);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void FreeStorage(void* p) noexcept {
  if (p == nullptr) return;
  if (OnGpu()) {
    try {
      CuDevice::Instantiate().Free(p);
    } catch (const std::exception& e) {
      CUCTX_WARN << "FreeStorage: " << e.what();
    }
    return;
  }
  std::free(p);
}

void ZeroStorage2D(void* p, size_t pitch, size_t row_bytes, size_t rows) {
  if (row_bytes == 0 || rows == 0) return;
#if CUCTX_HAVE_CUDA
  if (OnGpu()) {
    if (rows == 1 || pitch == row_bytes)
      CUCTX_CUDA_CHECK(cudaMemsetAsync(p, 0, row_bytes * rows, cudaStreamPerThread));
    else
      CUCTX_CUDA_CHECK(cudaMemset2DAsync(p, pitch, 0, row_bytes, rows, cudaStreamPerThread));
    return;
  }
#endif
  char* c = static_cast<char*>(p);
  for (size_t r = 0; r < rows; ++r) std::memset(c + r * pitch, 0, row_bytes);
}

// Device copies up to this many bytes run as one launch of a copy kernel rather than through
// cudaMemcpyAsync / cudaMemcpy2DAsync: at these sizes a copy costs what the host pays to issue it,
// and issuing a kernel is cheaper (bin/cu-matrix-bench --only=latency: CopyFromMat and
// CuVector::CopyFromVec against the runtime's copies; README has the H100 figures).
constexpr size_t kKernelCopyMaxBytes = size_t{1} << 20;

void CopyStorage2D(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t row_bytes,
                   size_t rows) {
  if (row_bytes == 0 || rows == 0 || dst == src) return;
#if CUCTX_HAVE_CUDA
  if (OnGpu()) {
    if (row_bytes * rows <= kKernelCopyMaxBytes) {
      LaunchCopyBytes2D(dst, dst_pitch, src, src_pitch, row_bytes, rows, cudaStreamPerThread);
      return;
    }
    if (rows == 1 || (dst_pitch == row_bytes && src_pitch == row_bytes))
      CUCTX_CUDA_CHECK(cudaMemcpyAsync(dst, src, row_bytes * rows, cudaMemcpyDeviceToDevice,
                                       cudaStreamPerThread));
    else
      CUCTX_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows,
                                         cudaMemcpyDeviceToDevice, cudaStreamPerThread));
    return;
  }
#endif
  for (size_t r = 0; r < rows; ++r)
    std::memmove(static_cast<char*>(dst) + r * dst_pitch,
                 static_cast<const char*>(src) + r * src_pitch, row_bytes);
}

void CopyAcrossDevices2D(void* dst, int dst_device, size_t dst_pitch, const void* src,
                         int src_device, size_t src_pitch, size_t row_bytes, size_t rows) {
  if (row_bytes == 0 || rows == 0) return;
  const int mine = ThreadObjectDevice();
  CUCTX_CHECK(src_device == mine || dst_device == mine)
      << "copy between devices " << src_device << " and " << dst_device
      << " from a thread of device " << mine << ": one of the two must be the thread's device";
#if CUCTX_HAVE_CUDA
  if (OnGpu()) {
    CheckNotCapturing("a copy between devices");
    const int other = src_device == mine ? dst_device : src_device;
    cudaEvent_t before = nullptr, after = nullptr;
    // Work queued on the other device so far (by any thread) comes first.
    OutsideCaptures(other, [&] {
      DeviceScope scope(other);
      CUCTX_CUDA_CHECK(scope.Status());
      CUCTX_CUDA_CHECK(cudaEventCreateWithFlags(&before, cudaEventDisableTiming));
      CUCTX_CUDA_CHECK(cudaEventRecord(before, cudaStreamLegacy));
    });
    CUCTX_CUDA_CHECK(cudaStreamWaitEvent(cudaStreamPerThread, before, 0));
    cudaMemcpy3DPeerParms p = {};
    p.srcPtr = make_cudaPitchedPtr(const_cast<void*>(src), src_pitch, row_bytes, rows);
    p.srcDevice = src_device;
    p.dstPtr = make_cudaPitchedPtr(dst, dst_pitch, row_bytes, rows);
    p.dstDevice = dst_device;
    p.extent = make_cudaExtent(row_bytes, rows, 1);
    CUCTX_CUDA_CHECK(cudaMemcpy3DPeerAsync(&p, cudaStreamPerThread));
    CUCTX_CUDA_CHECK(cudaEventCreateWithFlags(&after, cudaEventDisableTiming));
    CUCTX_CUDA_CHECK(cudaEventRecord(after, cudaStreamPerThread));
    // Work queued on the other device from now on (its owner freeing or rewriting the source,
    // reading the destination) comes after the copy.
    OutsideCaptures(other, [&] {
      DeviceScope scope(other);
      CUCTX_CUDA_CHECK(scope.Status());
      CUCTX_CUDA_CHECK(cudaStreamWaitEvent(cudaStreamLegacy, after, 0));
      CUCTX_CUDA_CHECK(cudaEventDestroy(before));  // released once it has fired
    });
    CUCTX_CUDA_CHECK(cudaEventDestroy(after));
    return;
  }
#endif
  for (size_t r = 0; r < rows; ++r)
    std::memmove(static_cast<char*>(dst) + r * dst_pitch,
                 static_cast<const char*>(src) + r * src_pitch, row_bytes);
}

}  // namespace internal
}  // namespace cuctx
