// cudamatrix/cu-kernels-misc.cu: small utility kernels (the no-op used to order streams).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/internal/cu-kernels.h"

CUCTX_KERNEL_FILE()

namespace cuctx {

static __global__ void NoOpKernel() {}

void LaunchNoOp(CuStream stream) {
  internal::Launch<NoOpKernel>(CUCTX_LAUNCH_SITE("NoOpKernel"), 1, 1, 0, stream);
}

}  // namespace cuctx
