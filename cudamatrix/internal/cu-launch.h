// cudamatrix/internal/cu-launch.h: loading cuctx's kernels before their first launch (the kernel
// files' registry; implemented in cu-launch.cc). Private.
// SPDX-License-Identifier: Apache-2.0
//
// Why: CUDA loads a kernel lazily by default (CUDA_MODULE_LOADING=LAZY since CUDA 12.2), at its
// first launch, and that load waits for the device's queued work. In Kaldi's cu-matrix-speed-test
// the first AddDiagVecMat<float> at 16 x 16 took 38 ms (the queued matrix products of the test
// before it) against 36 us per call with CUDA_MODULE_LOADING=EAGER (H200, run ktrace-2), while
// eager loading of every library's kernels made the whole test run 21-23 s instead of 18-19 s.
// So cuctx loads its own kernels, and only those, where the process selects its GPU
// (CuDevice::SelectGpuId), as it makes that thread's library handles there: 436 kernels of 16
// files in 15-21 ms; the same AddDiagVecMat then ran at 1.01x Kaldi (H200, run ktrace-3).
//
// Thread-safety: anchors register during static initialisation (a mutex guards the list);
// LoadCuctxKernels may be called from any thread and loads into that thread's current context.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_LAUNCH_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_LAUNCH_H_

#include <string>

namespace cuctx {
namespace internal {

// Registers the kernel file that defines the kernel whose host entry is `entry` (an empty kernel
// that CUCTX_KERNEL_FILE in cu-launch.cuh adds to each .cu file). No CUDA call is made here.
struct KernelFileAnchor {
  KernelFileAnchor(const void* entry, const char* file);
};

// What LoadCuctxKernels did: kernel files and kernels found, kernels it loaded (the others were
// loaded already), and the wall time it took.
struct KernelLoadSummary {
  int files = 0;
  int kernels = 0;
  int loaded = 0;
  double seconds = 0;
};

// Loads every kernel of every registered kernel file into the calling thread's current device
// context. Returns false with *why_not set where the driver lacks the entry points (older than
// CUDA 12.5) or a load fails; kernels not loaded here still load at their first launch.
bool LoadCuctxKernels(KernelLoadSummary* summary, std::string* why_not);

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_LAUNCH_H_
