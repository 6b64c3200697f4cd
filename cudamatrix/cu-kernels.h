// cudamatrix/cu-kernels.h: host-callable kernel launchers, plain C++ (no CUDA header needed).
// SPDX-License-Identifier: Apache-2.0
//
// Each launcher computes its own grid, launches on the given stream (asynchronous; it returns
// before the kernel finishes) and checks the launch with CUCTX_CUDA_CHECK_LAUNCH. Definitions live
// in cu-kernels-<family>.cu and exist only in CUDA builds; call them under `#if CUCTX_HAVE_CUDA`.
#ifndef CUCTX_CUDAMATRIX_CU_KERNELS_H_
#define CUCTX_CUDAMATRIX_CU_KERNELS_H_

struct CUstream_st;  // the same opaque type as cudaStream_t

namespace cuctx {

using CuStream = CUstream_st*;

// Launches an empty kernel on `stream`; used on the legacy default stream by SynchronizeGpu().
void LaunchNoOp(CuStream stream);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_KERNELS_H_
