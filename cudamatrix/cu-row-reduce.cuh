// cudamatrix/cu-row-reduce.cuh: device helpers of the neural-net kernels (.cu only): block and
// warp reductions, and the row-per-block / row-per-warp launch layout of row reductions.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_ROW_REDUCE_CUH_
#define CUCTX_CUDAMATRIX_CU_ROW_REDUCE_CUH_

#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-matrixdim.h"

#include <cstdint>

namespace cuctx {
namespace internal {

// Row reductions use blocks of this many threads (8 warps).
constexpr int kRowThreads = 256;
constexpr int kRowWarps = kRowThreads / 32;
// Blocks per launch for row reductions; the kernels grid-stride over the remaining rows.
constexpr int kMaxRowBlocks = 65535;
// Rows of at most this many columns get one warp each (8 rows per block) instead of a block.
constexpr int32_t kWarpRowMaxCols = 128;

// The reduction functors of cu-device-utils.cuh, under the names the row kernels use.
using SumOp = SumCombine;
using MaxOp = MaxCombine;
using MinOp = MinCombine;

// Reduces over the 32 lanes of a warp (all lanes active); every lane gets the result.
template <typename Real, typename Op>
__device__ Real WarpReduce(Real v, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reduces one value per thread over a block of kRowThreads; every thread gets the result. Warps
// reduce with shuffles, then every thread combines the kRowWarps warp results in the same order,
// so the result is deterministic and no second broadcast is needed. `sh` holds kRowWarps values.
template <typename Real, typename Op>
__device__ Real BlockReduce(Real v, Op op, Real* sh) {
  v = WarpReduce(v, op);
  // A previous call's readers of sh must finish before it is overwritten.
  __syncthreads();
  if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
  __syncthreads();
  Real total = sh[0];
  for (int w = 1; w < kRowWarps; ++w) total = op(total, sh[w]);
  return total;
}

// Sum over the threads that share a row: one warp (kThreadsPerRow == 32) or the whole block.
template <int kThreadsPerRow, typename Real>
__device__ Real RowSum(Real v, Real* sh) {
  static_assert(kThreadsPerRow == 32 || kThreadsPerRow == kRowThreads, "warp or block per row");
  if (kThreadsPerRow == 32) return WarpReduce(v, SumOp());
  return BlockReduce(v, SumOp(), sh);
}

// Calls body(r, lane) for every row r, with lane in [0, kThreadsPerRow) the thread's place among
// the threads of its row. Blocks of kRowThreads threads own kRowThreads / kThreadsPerRow
// consecutive rows and grid-stride over the rest. With a block per row every thread of the block
// runs every iteration (so body may use __syncthreads); with a warp per row a warp whose row is
// past the end skips the body as a whole, so body may use warp shuffles but no block barrier.
template <int kThreadsPerRow, typename Body>
__device__ void ForEachRow(int32_t rows, Body body) {
  constexpr int kRowsPerBlock = kRowThreads / kThreadsPerRow;
  const int lane = threadIdx.x % kThreadsPerRow;
  for (int64_t r0 = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock; r0 < rows;
       r0 += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t r = r0 + threadIdx.x / kThreadsPerRow;
    if (r < rows) body(static_cast<int32_t>(r), lane);
  }
}

// Calls body(r, c) for every element of a dim-shaped matrix, grid-striding over rows (y) and
// columns (x) as the element-wise kernels do (launch with MakeElementwiseShape).
template <typename Body>
__device__ void ForEachElement(MatrixDim d, Body body) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y)
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      body(r, c);
}

// Grid of a row reduction whose blocks of kRowThreads threads take `rows_per_block` rows at a time
// (capped at kMaxRowBlocks; the kernels grid-stride over the rest).
inline unsigned RowGridFor(int32_t rows, int rows_per_block) {
  const int64_t blocks = (static_cast<int64_t>(rows) + rows_per_block - 1) / rows_per_block;
  return static_cast<unsigned>(blocks < kMaxRowBlocks ? blocks : kMaxRowBlocks);
}

// The same with a warp per row (warp_per_row) or a block per row.
inline unsigned RowGrid(int32_t rows, bool warp_per_row) {
  return RowGridFor(rows, warp_per_row ? kRowWarps : 1);
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_ROW_REDUCE_CUH_
