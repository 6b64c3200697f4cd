// cudamatrix/cu-matrixdim.h: the POD matrix shape passed to kernels, and launch-shape constants.
// SPDX-License-Identifier: Apache-2.0
//
// Included by both g++ (.cc) and nvcc (.cu) code, so it holds plain data and constants only.
#ifndef CUCTX_CUDAMATRIX_CU_MATRIXDIM_H_
#define CUCTX_CUDAMATRIX_CU_MATRIXDIM_H_

#include <cstdint>

namespace cuctx {

// Shape of a row-major matrix as a kernel sees it: element (r, c) lives at data[r * stride + c].
// stride >= cols, counted in elements (not bytes). A vector of dimension n is {1, n, n}.
struct MatrixDim {
  int32_t rows;
  int32_t cols;
  int32_t stride;
};

// Threads per block for element-wise kernels (a 2D block whose x extent follows the row length).
constexpr int32_t kCuElementwiseThreads = 256;
// Edge of the square tile used by transposing copies; the block is kCuTileDim x kCuTileRows.
constexpr int32_t kCuTileDim = 32;
constexpr int32_t kCuTileRows = 8;
// Single-pass reductions run at most this many blocks of kCuReduceThreads threads, so that the
// last block can combine every block's partial result in a fixed order.
constexpr int32_t kCuReduceMaxBlocks = 256;
constexpr int32_t kCuReduceThreads = 256;

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_MATRIXDIM_H_
