// cudamatrix/cu-kernels-misc.cu: small utility kernels (the no-op used to order streams).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-kernels.h"

namespace cuctx {

static __global__ void NoOpKernel() {}

void LaunchNoOp(CuStream stream) {
  NoOpKernel<<<1, 1, 0, stream>>>();
  CUCTX_CUDA_CHECK_LAUNCH("NoOpKernel");
}

}  // namespace cuctx
