// cudamatrix/cu-kernels-reduce.cu: single-pass reductions (sum, sum of squares).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-kernels.h"
#include "cudamatrix/cu-matrixdim.h"

namespace cuctx {
namespace {

// Workspace layout: [0, 16) result, then kCuReduceMaxBlocks partials (8 bytes each), then the
// block counter. The counter is zeroed by the launcher on the stream before each launch.
constexpr size_t kPartialsOffset = 16;
constexpr size_t kCounterOffset = kPartialsOffset + kCuReduceMaxBlocks * sizeof(double);

// Shared-memory tree over kCuReduceThreads values; the result is in buf[0] for thread 0.
template <typename Real>
__device__ Real BlockTreeSum(Real* buf, Real v) {
  const int t = threadIdx.x;
  __syncthreads();  // a previous call's readers of buf[0] must finish before it is overwritten
  buf[t] = v;
  __syncthreads();
  for (int half = kCuReduceThreads / 2; half > 0; half /= 2) {
    if (t < half) buf[t] += buf[t + half];
    __syncthreads();
  }
  return buf[0];
}

// Each block handles a grid-strided set of rows (y) and row segments (x); the last block to
// finish (found with a fenced atomic counter) adds the partials in block order. One launch, no
// host round trip, deterministic for a given shape.
template <typename Real, bool kSquares>
__global__ void SumKernel(MatrixDim d, const Real* data, char* work) {
  __shared__ Real buf[kCuReduceThreads];
  __shared__ bool is_last;
  Real* partials = reinterpret_cast<Real*>(work + kPartialsOffset);
  unsigned int* counter = reinterpret_cast<unsigned int*>(work + kCounterOffset);
  // Threads of a block cover 32 consecutive columns x 8 rows, so warps read contiguous memory.
  const int lane = threadIdx.x % 32, wrow = threadIdx.x / 32;
  Real acc = 0;
  for (int32_t r = blockIdx.y * 8 + wrow; r < d.rows; r += gridDim.y * 8) {
    const Real* row = data + static_cast<size_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * 32 + lane; c < d.cols; c += gridDim.x * 32) {
      const Real x = row[c];
      acc += kSquares ? x * x : x;
    }
  }
  const Real block_sum = BlockTreeSum(buf, acc);
  const unsigned int nblocks = gridDim.x * gridDim.y;
  const unsigned int bid = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    partials[bid] = block_sum;
    __threadfence();
    is_last = (atomicAdd(counter, 1u) == nblocks - 1);
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  const volatile Real* vp = partials;
  const Real v = threadIdx.x < nblocks ? vp[threadIdx.x] : Real(0);
  const Real total = BlockTreeSum(buf, v);
  if (threadIdx.x == 0) {
    reinterpret_cast<Real*>(work)[0] = total;
    *counter = 0;
  }
}

template <typename Real>
void Sum(MatrixDim d, const Real* data, bool squares, void* d_work, CuStream stream) {
  char* work = static_cast<char*>(d_work);
  CUCTX_CUDA_CHECK(cudaMemsetAsync(work, 0, ReduceWorkspaceBytes(), stream));
  if (d.rows == 0 || d.cols == 0) return;
  // Grid: up to 16 blocks across a row (32 columns each) and enough down the rows to reach
  // kCuReduceMaxBlocks; kCuReduceThreads must equal kCuReduceMaxBlocks for the final tree.
  static_assert(kCuReduceThreads == kCuReduceMaxBlocks, "final tree covers one partial per thread");
  static_assert(kCuReduceThreads == 256, "the kernel maps threads to 32 columns x 8 rows");
  int64_t gx = (static_cast<int64_t>(d.cols) + 31) / 32;
  if (gx > 16) gx = 16;
  int64_t gy = (static_cast<int64_t>(d.rows) + 7) / 8;
  const int64_t max_gy = kCuReduceMaxBlocks / gx;
  if (gy > max_gy) gy = max_gy;
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy), 1);
  if (squares)
    SumKernel<Real, true><<<grid, kCuReduceThreads, 0, stream>>>(d, data, work);
  else
    SumKernel<Real, false><<<grid, kCuReduceThreads, 0, stream>>>(d, data, work);
  CUCTX_CUDA_CHECK_LAUNCH("SumKernel");
}

}  // namespace

size_t ReduceWorkspaceBytes() { return kCounterOffset + 16; }

void LaunchSum(MatrixDim d, const float* data, bool squares, void* d_work, CuStream stream) {
  Sum(d, data, squares, d_work, stream);
}
void LaunchSum(MatrixDim d, const double* data, bool squares, void* d_work, CuStream stream) {
  Sum(d, data, squares, d_work, stream);
}

}  // namespace cuctx
