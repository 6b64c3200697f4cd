// cudamatrix/cu-kernels-gather.cu: row and column gathers and scatters (by index or by row
// pointer), row/column range sums, triangle copies, element lookups and element-wise adds.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <cstdint>

namespace cuctx {
namespace {

// Entry i of an index array is usable when it lies in [0, limit). Everything else (-1 by
// contract, or a bad index that reached the device unchecked) selects nothing, so no kernel here
// can touch memory outside its operands whatever the index arrays hold.
__device__ inline bool InRange(int32_t i, int32_t limit) { return i >= 0 && i < limit; }

// Row r of a matrix chosen by an index array: base row indexes[r], or nullptr.
template <typename Ptr>
struct IndexedRows {
  Ptr base;
  int32_t rows;
  int32_t stride;
  const int32_t* indexes;
  __device__ Ptr operator()(int32_t r) const {
    const int32_t i = indexes[r];
    return InRange(i, rows) ? base + static_cast<int64_t>(i) * stride : nullptr;
  }
};

// Row r given directly by a pointer array (nullptr entries allowed).
template <typename Ptr>
struct PointerRows {
  const Ptr* rows;
  __device__ Ptr operator()(int32_t r) const { return rows[r]; }
};

// Every gather/scatter below walks its matrix with the 2D element-wise shape: the block's x
// extent runs along a row, so each warp reads and writes consecutive columns of one row (the
// source or destination row looked up once per row, a broadcast load from cache).

// dst row r (op)= the row `rows(r)` returns; a missing row gives zeros for kCopy and leaves the
// destination row alone otherwise. The op is uniform over the launch, so the switch costs no
// divergence.
template <typename Real, typename Rows>
__global__ void GatherRowsKernel(MatrixDim d, RowGatherOp op, Real alpha, Rows rows, Real* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    const Real* in = rows(r);
    if (in == nullptr && op != RowGatherOp::kCopy) continue;
    Real* out = dst + static_cast<int64_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      switch (op) {
        case RowGatherOp::kCopy:
          out[c] = in != nullptr ? in[c] : Real(0);
          break;
        case RowGatherOp::kAdd:
          out[c] += alpha * in[c];
          break;
        case RowGatherOp::kMul:
          out[c] *= in[c];
          break;
      }
    }
  }
}

// The row `rows(r)` returns (skipped when nullptr) = row r of src, or += alpha * row r. Several
// source rows may name one destination row, so the add is atomic.
template <typename Real, typename Rows>
__global__ void ScatterRowsKernel(MatrixDim d, const Real* src, bool add, Real alpha, Rows rows) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    Real* out = rows(r);
    if (out == nullptr) continue;
    const Real* in = src + static_cast<int64_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      if (add)
        atomicAdd(out + c, alpha * in[c]);
      else
        out[c] = in[c];
    }
  }
}

// dst(r, c) = src(r, indexes[c]) (0 for a missing column), or += src(r, indexes[c]).
template <typename Real>
__global__ void GatherColsKernel(MatrixDim d, const Real* src, int32_t src_cols, int32_t src_stride,
                                 const int32_t* indexes, bool add, Real* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    const Real* in = src + static_cast<int64_t>(r) * src_stride;
    Real* out = dst + static_cast<int64_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      const int32_t j = indexes[c];
      const bool ok = InRange(j, src_cols);
      if (add) {
        if (ok) out[c] += in[j];
      } else {
        out[c] = ok ? in[j] : Real(0);
      }
    }
  }
}

// The part of [first, second) inside [0, limit); empty when first >= second.
__device__ inline void ClampRange(const int32_t* pairs, int32_t i, int32_t limit, int32_t* lo,
                                  int32_t* hi) {
  const int32_t first = pairs[2 * static_cast<int64_t>(i)];
  const int32_t second = pairs[2 * static_cast<int64_t>(i) + 1];
  *lo = first > 0 ? first : 0;
  *hi = second < limit ? second : limit;
}

// dst(r, c) += src(j, c) for j in range r, added one source row at a time in increasing j (the
// CPU's order, so both paths round alike).
template <typename Real>
__global__ void AddRowRangesKernel(MatrixDim d, const Real* src, int32_t src_rows,
                                   int32_t src_stride, const int32_t* pairs, Real* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    int32_t lo, hi;
    ClampRange(pairs, r, src_rows, &lo, &hi);
    if (lo >= hi) continue;
    Real* out = dst + static_cast<int64_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      Real v = out[c];
      for (int32_t j = lo; j < hi; ++j) v += src[static_cast<int64_t>(j) * src_stride + c];
      out[c] = v;
    }
  }
}

// dst(r, c) = sum of src(r, j) for j in range c (0 when empty), summed in increasing j.
template <typename Real>
__global__ void SumColumnRangesKernel(MatrixDim d, const Real* src, int32_t src_cols,
                                      int32_t src_stride, const int32_t* pairs, Real* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    const Real* in = src + static_cast<int64_t>(r) * src_stride;
    Real* out = dst + static_cast<int64_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      int32_t lo, hi;
      ClampRange(pairs, c, src_cols, &lo, &hi);
      Real v = 0;
      for (int32_t j = lo; j < hi; ++j) v += in[j];
      out[c] = v;
    }
  }
}

// Mirrors one triangle of the n x n matrix onto the other, tile by tile. A block owns the
// destination tile (tr, tc) on the written side and reads the mirror tile (tc, tr) through shared
// memory (coalesced both ways). Off-diagonal mirror tiles are never written, and a diagonal tile
// is read completely before the barrier and written after it by its one block, so no element is
// read and written concurrently. Tiles on the read side are skipped by whole blocks, so the
// barriers stay uniform.
template <typename Real>
__global__ void CopyTriangleKernel(int32_t n, int32_t stride, bool lower_to_upper, Real* data) {
  __shared__ Real tile[kCuTileDim][kCuTileDim + 1];
  const int32_t tx = threadIdx.x, ty = threadIdx.y;
  for (int32_t r0 = blockIdx.y * kCuTileDim; r0 < n; r0 += gridDim.y * kCuTileDim) {
    for (int32_t c0 = blockIdx.x * kCuTileDim; c0 < n; c0 += gridDim.x * kCuTileDim) {
      if (lower_to_upper ? c0 < r0 : c0 > r0) continue;
      for (int32_t j = ty; j < kCuTileDim; j += kCuTileRows) {
        const int32_t sr = c0 + j, sc = r0 + tx;
        if (sr < n && sc < n) tile[j][tx] = data[static_cast<int64_t>(sr) * stride + sc];
      }
      __syncthreads();
      for (int32_t j = ty; j < kCuTileDim; j += kCuTileRows) {
        const int32_t r = r0 + j, c = c0 + tx;
        if (r < n && c < n && (lower_to_upper ? c > r : c < r))
          data[static_cast<int64_t>(r) * stride + c] = tile[tx][j];
      }
      __syncthreads();
    }
  }
}

template <typename Real>
__global__ void SetZeroAboveDiagKernel(MatrixDim d, Real* data) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    Real* row = data + static_cast<int64_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      if (c > r) row[c] = Real(0);
  }
}

// out[i] = data(pairs[i]) (0 for a pair outside the matrix).
template <typename Real>
__global__ void LookupKernel(MatrixDim d, const Real* data, const int32_t* pairs, int32_t num,
                             Real* out) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < num; i += gridDim.x * blockDim.x) {
    const int32_t r = pairs[2 * static_cast<int64_t>(i)];
    const int32_t c = pairs[2 * static_cast<int64_t>(i) + 1];
    out[i] = InRange(r, d.rows) && InRange(c, d.cols) ? data[static_cast<int64_t>(r) * d.stride + c]
                                                      : Real(0);
  }
}

// data(pairs[i]) += alpha * input[i]; atomic because pairs may repeat.
template <typename Real>
__global__ void AddElementsKernel(MatrixDim d, Real alpha, const int32_t* pairs, const Real* input,
                                  int32_t num, Real* data) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < num; i += gridDim.x * blockDim.x) {
    const int32_t r = pairs[2 * static_cast<int64_t>(i)];
    const int32_t c = pairs[2 * static_cast<int64_t>(i) + 1];
    if (InRange(r, d.rows) && InRange(c, d.cols))
      atomicAdd(data + static_cast<int64_t>(r) * d.stride + c, alpha * input[i]);
  }
}

// data(r, cols[r]) += alpha; one element per row, so no two threads share an element.
template <typename Real>
__global__ void AddToElementsKernel(MatrixDim d, Real alpha, const int32_t* cols, Real* data) {
  for (int32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < d.rows; r += gridDim.x * blockDim.x) {
    const int32_t c = cols[r];
    if (InRange(c, d.cols)) data[static_cast<int64_t>(r) * d.stride + c] += alpha;
  }
}

template <typename Real>
__global__ void EqualElementMaskKernel(MatrixDim d, const Real* a, const Real* b, int32_t b_stride,
                                       Real* mask, int32_t mask_stride) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    const Real* arow = a + static_cast<int64_t>(r) * d.stride;
    const Real* brow = b + static_cast<int64_t>(r) * b_stride;
    Real* out = mask + static_cast<int64_t>(r) * mask_stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      out[c] = arow[c] == brow[c] ? Real(1) : Real(0);
  }
}

// A 1D grid for `n` independent items, capped (the kernels grid-stride past the cap).
unsigned Blocks1D(int64_t n) {
  const int64_t want = (n + kCuElementwiseThreads - 1) / kCuElementwiseThreads;
  return static_cast<unsigned>(want < 4096 ? want : 4096);
}

bool Empty(MatrixDim d) { return d.rows == 0 || d.cols == 0; }

template <typename Real>
void GatherRows(MatrixDim d, RowGatherOp op, Real alpha, const Real* src, int32_t src_rows,
                int32_t src_stride, const int32_t* d_indexes, Real* dst, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  GatherRowsKernel<<<s.grid, s.block, 0, stream>>>(
      d, op, alpha, IndexedRows<const Real*>{src, src_rows, src_stride, d_indexes}, dst);
  CUCTX_CUDA_CHECK_LAUNCH("GatherRowsKernel(indexes)");
}

template <typename Real>
void GatherRowPtrs(MatrixDim d, RowGatherOp op, Real alpha, const Real* const* d_src_rows,
                   Real* dst, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  GatherRowsKernel<<<s.grid, s.block, 0, stream>>>(d, op, alpha,
                                                   PointerRows<const Real*>{d_src_rows}, dst);
  CUCTX_CUDA_CHECK_LAUNCH("GatherRowsKernel(pointers)");
}

template <typename Real>
void AddToRows(MatrixDim d, Real alpha, const Real* src, const int32_t* d_indexes, int32_t dst_rows,
               int32_t dst_stride, Real* dst, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  ScatterRowsKernel<<<s.grid, s.block, 0, stream>>>(
      d, src, true, alpha, IndexedRows<Real*>{dst, dst_rows, dst_stride, d_indexes});
  CUCTX_CUDA_CHECK_LAUNCH("ScatterRowsKernel(indexes)");
}

template <typename Real>
void ScatterRowPtrs(MatrixDim d, bool add, Real alpha, const Real* src, Real* const* d_dst_rows,
                    CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  ScatterRowsKernel<<<s.grid, s.block, 0, stream>>>(d, src, add, alpha,
                                                    PointerRows<Real*>{d_dst_rows});
  CUCTX_CUDA_CHECK_LAUNCH("ScatterRowsKernel(pointers)");
}

template <typename Real>
void GatherCols(MatrixDim d, const Real* src, int32_t src_cols, int32_t src_stride,
                const int32_t* d_indexes, bool add, Real* dst, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  GatherColsKernel<<<s.grid, s.block, 0, stream>>>(d, src, src_cols, src_stride, d_indexes, add,
                                                   dst);
  CUCTX_CUDA_CHECK_LAUNCH("GatherColsKernel");
}

template <typename Real>
void AddRowRanges(MatrixDim d, const Real* src, int32_t src_rows, int32_t src_stride,
                  const int32_t* d_pairs, Real* dst, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  AddRowRangesKernel<<<s.grid, s.block, 0, stream>>>(d, src, src_rows, src_stride, d_pairs, dst);
  CUCTX_CUDA_CHECK_LAUNCH("AddRowRangesKernel");
}

template <typename Real>
void SumColumnRanges(MatrixDim d, const Real* src, int32_t src_cols, int32_t src_stride,
                     const int32_t* d_pairs, Real* dst, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  SumColumnRangesKernel<<<s.grid, s.block, 0, stream>>>(d, src, src_cols, src_stride, d_pairs, dst);
  CUCTX_CUDA_CHECK_LAUNCH("SumColumnRangesKernel");
}

template <typename Real>
void CopyTriangle(MatrixDim d, bool lower_to_upper, Real* data, CuStream stream) {
  if (d.rows <= 1) return;
  dim3 grid, block;
  internal::TransposeShape(d, &grid, &block);
  CopyTriangleKernel<<<grid, block, 0, stream>>>(d.rows, d.stride, lower_to_upper, data);
  CUCTX_CUDA_CHECK_LAUNCH("CopyTriangleKernel");
}

template <typename Real>
void SetZeroAboveDiag(MatrixDim d, Real* data, CuStream stream) {
  if (d.rows == 0 || d.cols <= 1) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  SetZeroAboveDiagKernel<<<s.grid, s.block, 0, stream>>>(d, data);
  CUCTX_CUDA_CHECK_LAUNCH("SetZeroAboveDiagKernel");
}

template <typename Real>
void Lookup(MatrixDim d, const Real* data, const int32_t* d_pairs, int32_t num, Real* d_out,
            CuStream stream) {
  if (num == 0) return;
  LookupKernel<<<Blocks1D(num), kCuElementwiseThreads, 0, stream>>>(d, data, d_pairs, num, d_out);
  CUCTX_CUDA_CHECK_LAUNCH("LookupKernel");
}

template <typename Real>
void AddElements(MatrixDim d, Real alpha, const int32_t* d_pairs, const Real* d_input, int32_t num,
                 Real* data, CuStream stream) {
  if (num == 0) return;
  AddElementsKernel<<<Blocks1D(num), kCuElementwiseThreads, 0, stream>>>(d, alpha, d_pairs, d_input,
                                                                         num, data);
  CUCTX_CUDA_CHECK_LAUNCH("AddElementsKernel");
}

template <typename Real>
void AddToElements(MatrixDim d, Real alpha, const int32_t* d_cols, Real* data, CuStream stream) {
  if (Empty(d)) return;
  AddToElementsKernel<<<Blocks1D(d.rows), kCuElementwiseThreads, 0, stream>>>(d, alpha, d_cols,
                                                                              data);
  CUCTX_CUDA_CHECK_LAUNCH("AddToElementsKernel");
}

template <typename Real>
void EqualElementMask(MatrixDim d, const Real* a, const Real* b, int32_t b_stride, Real* mask,
                      int32_t mask_stride, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  EqualElementMaskKernel<<<s.grid, s.block, 0, stream>>>(d, a, b, b_stride, mask, mask_stride);
  CUCTX_CUDA_CHECK_LAUNCH("EqualElementMaskKernel");
}

}  // namespace

void LaunchGatherRows(MatrixDim d, RowGatherOp op, float alpha, const float* src, int32_t sr,
                      int32_t ss, const int32_t* idx, float* dst, CuStream st) {
  GatherRows(d, op, alpha, src, sr, ss, idx, dst, st);
}
void LaunchGatherRows(MatrixDim d, RowGatherOp op, double alpha, const double* src, int32_t sr,
                      int32_t ss, const int32_t* idx, double* dst, CuStream st) {
  GatherRows(d, op, alpha, src, sr, ss, idx, dst, st);
}
void LaunchGatherRowPtrs(MatrixDim d, RowGatherOp op, float alpha, const float* const* rows,
                         float* dst, CuStream st) {
  GatherRowPtrs(d, op, alpha, rows, dst, st);
}
void LaunchGatherRowPtrs(MatrixDim d, RowGatherOp op, double alpha, const double* const* rows,
                         double* dst, CuStream st) {
  GatherRowPtrs(d, op, alpha, rows, dst, st);
}
void LaunchAddToRows(MatrixDim d, float alpha, const float* src, const int32_t* idx, int32_t dr,
                     int32_t ds, float* dst, CuStream st) {
  AddToRows(d, alpha, src, idx, dr, ds, dst, st);
}
void LaunchAddToRows(MatrixDim d, double alpha, const double* src, const int32_t* idx, int32_t dr,
                     int32_t ds, double* dst, CuStream st) {
  AddToRows(d, alpha, src, idx, dr, ds, dst, st);
}
void LaunchScatterRowPtrs(MatrixDim d, bool add, float alpha, const float* src, float* const* rows,
                          CuStream st) {
  ScatterRowPtrs(d, add, alpha, src, rows, st);
}
void LaunchScatterRowPtrs(MatrixDim d, bool add, double alpha, const double* src,
                          double* const* rows, CuStream st) {
  ScatterRowPtrs(d, add, alpha, src, rows, st);
}
void LaunchGatherCols(MatrixDim d, const float* src, int32_t sc, int32_t ss, const int32_t* idx,
                      bool add, float* dst, CuStream st) {
  GatherCols(d, src, sc, ss, idx, add, dst, st);
}
void LaunchGatherCols(MatrixDim d, const double* src, int32_t sc, int32_t ss, const int32_t* idx,
                      bool add, double* dst, CuStream st) {
  GatherCols(d, src, sc, ss, idx, add, dst, st);
}
void LaunchAddRowRanges(MatrixDim d, const float* src, int32_t sr, int32_t ss, const int32_t* pairs,
                        float* dst, CuStream st) {
  AddRowRanges(d, src, sr, ss, pairs, dst, st);
}
void LaunchAddRowRanges(MatrixDim d, const double* src, int32_t sr, int32_t ss,
                        const int32_t* pairs, double* dst, CuStream st) {
  AddRowRanges(d, src, sr, ss, pairs, dst, st);
}
void LaunchSumColumnRanges(MatrixDim d, const float* src, int32_t sc, int32_t ss,
                           const int32_t* pairs, float* dst, CuStream st) {
  SumColumnRanges(d, src, sc, ss, pairs, dst, st);
}
void LaunchSumColumnRanges(MatrixDim d, const double* src, int32_t sc, int32_t ss,
                           const int32_t* pairs, double* dst, CuStream st) {
  SumColumnRanges(d, src, sc, ss, pairs, dst, st);
}
void LaunchCopyTriangle(MatrixDim d, bool lower_to_upper, float* data, CuStream st) {
  CopyTriangle(d, lower_to_upper, data, st);
}
void LaunchCopyTriangle(MatrixDim d, bool lower_to_upper, double* data, CuStream st) {
  CopyTriangle(d, lower_to_upper, data, st);
}
void LaunchSetZeroAboveDiag(MatrixDim d, float* data, CuStream st) {
  SetZeroAboveDiag(d, data, st);
}
void LaunchSetZeroAboveDiag(MatrixDim d, double* data, CuStream st) {
  SetZeroAboveDiag(d, data, st);
}
void LaunchLookup(MatrixDim d, const float* data, const int32_t* pairs, int32_t num, float* out,
                  CuStream st) {
  Lookup(d, data, pairs, num, out, st);
}
void LaunchLookup(MatrixDim d, const double* data, const int32_t* pairs, int32_t num, double* out,
                  CuStream st) {
  Lookup(d, data, pairs, num, out, st);
}
void LaunchAddElements(MatrixDim d, float alpha, const int32_t* pairs, const float* input,
                       int32_t num, float* data, CuStream st) {
  AddElements(d, alpha, pairs, input, num, data, st);
}
void LaunchAddElements(MatrixDim d, double alpha, const int32_t* pairs, const double* input,
                       int32_t num, double* data, CuStream st) {
  AddElements(d, alpha, pairs, input, num, data, st);
}
void LaunchAddToElements(MatrixDim d, float alpha, const int32_t* cols, float* data, CuStream st) {
  AddToElements(d, alpha, cols, data, st);
}
void LaunchAddToElements(MatrixDim d, double alpha, const int32_t* cols, double* data,
                         CuStream st) {
  AddToElements(d, alpha, cols, data, st);
}
void LaunchEqualElementMask(MatrixDim d, const float* a, const float* b, int32_t bs, float* mask,
                            int32_t ms, CuStream st) {
  EqualElementMask(d, a, b, bs, mask, ms, st);
}
void LaunchEqualElementMask(MatrixDim d, const double* a, const double* b, int32_t bs, double* mask,
                            int32_t ms, CuStream st) {
  EqualElementMask(d, a, b, bs, mask, ms, st);
}

}  // namespace cuctx
