// tools/launch-bench/bench-kernel.cuh: the kernel whose launches launch-paths.cu and cupti-cost.cu
// time (a 16 x 16 element-wise scale, the size of Kaldi's smallest speed-test matrices), and the
// clock they time it with.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_TOOLS_LAUNCH_BENCH_BENCH_KERNEL_CUH_
#define CUCTX_TOOLS_LAUNCH_BENCH_BENCH_KERNEL_CUH_

#include <chrono>

struct Dim {
  int rows, cols, stride;
};

__global__ void K(Dim d, const float* src, int ss, float* dst) {
  int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < d.rows && c < d.cols) dst[r * d.stride + c] = src[r * ss + c] * 2.0f;
}

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

#endif  // CUCTX_TOOLS_LAUNCH_BENCH_BENCH_KERNEL_CUH_
