// cudamatrix/cu-readback.cc: the per-thread, per-device ReadbackSlot of host-result reductions.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-readback.h"

#if CUCTX_HAVE_CUDA
#include "base/error.h"
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-pinned.h"
#include "cudamatrix/internal/cu-capture-gate.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

namespace cuctx {
namespace internal {

namespace {
// The pinned buffer: CopyToHost's bytes from byte 0, the two posted words at kWordsOffset.
constexpr size_t kResultBytes = 64;
constexpr size_t kWordsOffset = 32;
}  // namespace

ReadbackSlot::ReadbackSlot(int device) : device_(device) {
  // The workspace comes straight from CUDA, not from the caching allocator: it lives as long as
  // the thread, and taken from the allocator it would count as memory in use and could land in a
  // CuPlannedScope's or a graph's memory when a thread's first reduction runs inside one.
  // cudaMalloc may wait for the device, which would break another thread's capture in progress
  // (a synchronous cudaMemset did, in cu-graph-test); the zeroing is queued on the thread's stream,
  // ahead of the first reduction that uses the workspace.
  OutsideCapturesToRelease(
      device_, [this] { CUCTX_CUDA_CHECK(cudaMalloc(&work_, ReduceWorkspaceBytes())); });
  CUCTX_CUDA_CHECK(cudaMemsetAsync(work_, 0, ReduceWorkspaceBytes(), cudaStreamPerThread));
  // Page-locked memory is mapped into the device's address space (unified addressing).
  result_host_ = PinnedHostAllocator::ForDevice(device).Allocate(kResultBytes);
  void* result_device = nullptr;
  CUCTX_CUDA_CHECK(cudaHostGetDevicePointer(&result_device, result_host_, 0));
  words_host_ = reinterpret_cast<volatile unsigned long long*>(static_cast<char*>(result_host_) +
                                                               kWordsOffset);
  words_device_ =
      reinterpret_cast<unsigned long long*>(static_cast<char*>(result_device) + kWordsOffset);
  // Sequence number 0 is never handed out, so zeroed words match no launch.
  words_host_[0] = 0;
  words_host_[1] = 0;
}

ReadbackSlot::~ReadbackSlot() {
  // At thread exit. Freeing waits for the device, which must not happen while another thread
  // captures a graph; errors (e.g. the runtime already unloading at process exit) are ignored.
  try {
    OutsideCapturesToRelease(device_, [this] { cudaFree(work_); });
    PinnedHostAllocator::ForDevice(device_).Free(result_host_);
  } catch (...) {
  }
}

void ReadbackSlot::CopyToHost(void* host_dst, const void* device_src, size_t bytes,
                              CuStream stream) const {
  CUCTX_CHECK(bytes <= kCopyBytes)
      << "ReadbackSlot::CopyToHost: " << bytes << " bytes asked, at most " << kCopyBytes;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  CUCTX_CUDA_CHECK(cudaMemcpyAsync(result_host_, device_src, bytes, cudaMemcpyDeviceToHost, s));
  CUCTX_CUDA_CHECK(cudaStreamSynchronize(s));
  std::memcpy(host_dst, result_host_, bytes);
}

unsigned long long ReadbackSlot::WaitForBits(unsigned int seq, CuStream stream) const {
  // Spin on the words (checking the clock every 256 reads) for up to kSpinSeconds; a longer
  // reduction, or one that failed, is waited for through the stream, which reports errors.
  const unsigned long long tag = static_cast<unsigned long long>(seq) << 32;
  const auto posted = [&] {
    return (words_host_[0] & ~0xffffffffull) == tag && (words_host_[1] & ~0xffffffffull) == tag;
  };
  const auto start = std::chrono::steady_clock::now();
  for (unsigned int reads = 1; !posted(); ++reads) {
    if (reads % 256 != 0) continue;
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
    if (waited.count() > kSpinSeconds) {
      CUCTX_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
      CUCTX_CHECK(posted()) << "a reduction kernel finished without posting its result (device "
                            << device_ << ", sequence " << seq << ")";
      break;
    }
  }
  // An aligned 8-byte store from the device reaches host memory whole, as a word read by the CPU
  // (NCCL's LL protocol relies on the same property for its data+flag words). Once both tags
  // match, neither word changes until this thread's next launch, so reading them again is safe.
  return (words_host_[0] & 0xffffffffull) | ((words_host_[1] & 0xffffffffull) << 32);
}

namespace {
// The calling thread's slots, indexed by device id.
std::vector<std::unique_ptr<ReadbackSlot>>& ThreadSlots() {
  thread_local std::vector<std::unique_ptr<ReadbackSlot>> slots;
  return slots;
}
}  // namespace

void ReleaseThreadReadbackSlots() { ThreadSlots().clear(); }

ReadbackSlot& ThreadReadbackSlot() {
  std::vector<std::unique_ptr<ReadbackSlot>>& slots = ThreadSlots();
  const int device = CuDevice::Instantiate().DeviceId();
  CUCTX_CHECK(device >= 0) << "a device reduction ran with no GPU selected";
  if (static_cast<size_t>(device) >= slots.size()) slots.resize(device + 1);
  std::unique_ptr<ReadbackSlot>& slot = slots[device];
  if (slot == nullptr) slot = std::make_unique<ReadbackSlot>(device);
  return *slot;
}

}  // namespace internal
}  // namespace cuctx
#else
namespace cuctx {
namespace internal {
void ReleaseThreadReadbackSlots() {}
}  // namespace internal
}  // namespace cuctx
#endif  // CUCTX_HAVE_CUDA
