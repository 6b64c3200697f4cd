// cudamatrix/cu-kernels-reduce.cu: single-pass reductions (sum, sum of squares).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <algorithm>
#include <cstdint>

namespace cuctx {
namespace {

// At most this many blocks of kCuReduceThreads threads: enough to keep every SM of a large GPU
// streaming (about 8 blocks per SM on 132 SMs), few enough that the last block's final pass over
// the partials is short.
constexpr int32_t kSumMaxBlocks = 1024;
static_assert(kSumMaxBlocks % kCuReduceThreads == 0, "the final pass reads whole rounds");

// Workspace layout: [0, 16) result, then kSumMaxBlocks partials (8 bytes each), then the block
// counter, which the launcher zeroes before each launch and the last block leaves at 0.
constexpr size_t kPartialsOffset = 16;
constexpr size_t kCounterOffset = kPartialsOffset + kSumMaxBlocks * sizeof(double);

template <typename Real, bool kSquares>
__device__ Real Term(Real x) {
  return kSquares ? x * x : x;
}

// Stores this block's sum; the last block to finish adds the partials in block order, so the
// result is deterministic for a given shape and alignment.
template <typename Real>
__device__ void FinishSum(Real block_sum, char* work) {
  __shared__ Real buf[kCuReduceThreads];
  Real* partials = reinterpret_cast<Real*>(work + kPartialsOffset);
  unsigned int* counter = reinterpret_cast<unsigned int*>(work + kCounterOffset);
  const int tid = threadIdx.x;
  if (!internal::PublishPartialIsLast(block_sum, partials, counter, tid)) return;
  const volatile Real* vp = partials;
  const unsigned int nblocks = gridDim.x * gridDim.y;
  Real v = 0;
  for (unsigned int b = tid; b < nblocks; b += kCuReduceThreads) v += vp[b];
  const Real total = internal::BlockTreeReduce(buf, v, internal::SumCombine(), tid);
  if (tid == 0) reinterpret_cast<Real*>(work)[0] = total;
}

// Pitched matrices: threads of a block cover 32 consecutive columns x 8 rows, so warps read
// contiguous memory; blocks grid-stride over rows (y) and row segments (x).
template <typename Real, bool kSquares>
__global__ void SumKernel(MatrixDim d, const Real* data, char* work) {
  __shared__ Real buf[kCuReduceThreads];
  const int lane = threadIdx.x % 32, wrow = threadIdx.x / 32;
  Real acc = 0;
  for (int32_t r = blockIdx.y * 8 + wrow; r < d.rows; r += gridDim.y * 8) {
    const Real* row = data + static_cast<size_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * 32 + lane; c < d.cols; c += gridDim.x * 32)
      acc += Term<Real, kSquares>(row[c]);
  }
  FinishSum(internal::BlockTreeReduce(buf, acc, internal::SumCombine(), threadIdx.x), work);
}

// Contiguous 16-byte aligned data of n elements: grid-strided 16-byte vector loads, the n % lanes
// tail read by the first threads of block 0.
template <typename Real, bool kSquares>
__global__ void SumVecKernel(int64_t n, const Real* data, char* work) {
  __shared__ Real buf[kCuReduceThreads];
  using V = typename internal::Vec16<Real>::Type;
  constexpr int32_t w = internal::Vec16<Real>::kLanes;
  const int64_t nvec = n / w;
  const V* vdata = reinterpret_cast<const V*>(data);
  Real acc = 0;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < nvec;
       u += step) {
    const V v = vdata[u];
    const Real* lanes = reinterpret_cast<const Real*>(&v);
#pragma unroll
    for (int32_t i = 0; i < w; ++i) acc += Term<Real, kSquares>(lanes[i]);
  }
  if (blockIdx.x == 0 && threadIdx.x < n - nvec * w)
    acc += Term<Real, kSquares>(data[nvec * w + threadIdx.x]);
  FinishSum(internal::BlockTreeReduce(buf, acc, internal::SumCombine(), threadIdx.x), work);
}

template <typename Real>
void Sum(MatrixDim d, const Real* data, bool squares, void* d_work, CuStream stream) {
  char* work = static_cast<char*>(d_work);
  if (d.rows == 0 || d.cols == 0) {  // the sum of nothing
    CUCTX_CUDA_CHECK(cudaMemsetAsync(work, 0, sizeof(Real), stream));
    return;
  }
  CUCTX_CUDA_CHECK(cudaMemsetAsync(work + kCounterOffset, 0, sizeof(unsigned int), stream));
  static_assert(kCuReduceThreads == 256, "SumKernel maps threads to 32 columns x 8 rows");
  const bool contiguous = d.rows == 1 || d.stride == d.cols;
  if (contiguous && internal::RowsAligned16(data, 0)) {
    const int64_t n = static_cast<int64_t>(d.rows) * d.cols;
    const int64_t units = n / internal::Vec16<Real>::kLanes;
    const int64_t blocks = std::max<int64_t>(
        1, std::min<int64_t>(kSumMaxBlocks, (units + kCuReduceThreads - 1) / kCuReduceThreads));
    const unsigned grid = static_cast<unsigned>(blocks);
    if (squares)
      SumVecKernel<Real, true><<<grid, kCuReduceThreads, 0, stream>>>(n, data, work);
    else
      SumVecKernel<Real, false><<<grid, kCuReduceThreads, 0, stream>>>(n, data, work);
    CUCTX_CUDA_CHECK_LAUNCH("SumVecKernel");
    return;
  }
  // Grid: up to 16 blocks across a row (32 columns each) and enough down the rows to reach
  // kSumMaxBlocks.
  int64_t gx = (static_cast<int64_t>(d.cols) + 31) / 32;
  if (gx > 16) gx = 16;
  int64_t gy = (static_cast<int64_t>(d.rows) + 7) / 8;
  const int64_t max_gy = kSumMaxBlocks / gx;
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
