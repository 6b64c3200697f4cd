// cudamatrix/cu-kernels-sparse.cu: CSR construction (one-hot rows, row selection), scatter into
// dense matrices and trace terms for CuSparseMatrix.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;
// Grids are capped; every kernel grid-strides over what remains.
constexpr int64_t kMaxBlocks = 65535;

unsigned BlocksFor(int64_t items, int64_t per_block) {
  const int64_t b = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(b < 1 ? 1 : (b < kMaxBlocks ? b : kMaxBlocks));
}

// First index and step of a grid-stride loop, 64-bit so that i + step cannot overflow.
__device__ inline int64_t FirstIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t GridStep() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

template <typename Real>
__global__ void OneHotCountsKernel(int32_t n, const int32_t* indexes, const Real* weights,
                                   int32_t dim, int32_t* counts, int32_t* bad) {
  for (int64_t i = FirstIndex(); i <= n; i += GridStep()) {
    if (i == n) {
      counts[i] = 0;
      continue;
    }
    const int32_t idx = indexes[i];
    if (idx >= dim) atomicMin(bad, static_cast<int32_t>(i));
    const bool keep = idx >= 0 && idx < dim && (weights == nullptr || weights[i] != Real(0));
    counts[i] = keep ? 1 : 0;
  }
}

template <typename Real>
__global__ void OneHotFillKernel(int32_t n, const int32_t* indexes, const Real* weights,
                                 const int32_t* offsets, int32_t* cols, Real* values) {
  for (int64_t i = FirstIndex(); i < n; i += GridStep()) {
    const int32_t p = offsets[i];
    if (offsets[i + 1] == p) continue;  // empty row
    cols[p] = indexes[i];
    values[p] = weights == nullptr ? Real(1) : weights[i];
  }
}

__global__ void SelectRowsCountsKernel(int32_t n, const int32_t* rows, int32_t in_rows,
                                       const int32_t* in_offsets, int32_t* counts, int32_t* bad) {
  for (int64_t i = FirstIndex(); i <= n; i += GridStep()) {
    if (i == n) {
      counts[i] = 0;
      continue;
    }
    const int32_t r = rows[i];
    if (r < 0 || r >= in_rows) {
      atomicMin(bad, static_cast<int32_t>(i));
      counts[i] = 0;
    } else {
      counts[i] = in_offsets[r + 1] - in_offsets[r];
    }
  }
}

// One warp per output row, rows grid-strided; lanes stride over the row's elements.
template <typename Real>
__global__ void SelectRowsCopyKernel(int32_t n, const int32_t* rows, const int32_t* in_offsets,
                                     const int32_t* in_cols, const Real* in_values,
                                     const int32_t* out_offsets, int32_t* out_cols,
                                     Real* out_values) {
  const int lane = threadIdx.x % 32;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32; i < n;
       i += static_cast<int64_t>(gridDim.x) * kWarpsPerBlock) {
    const int32_t src = in_offsets[rows[i]];
    const int32_t dst = out_offsets[i];
    const int32_t len = out_offsets[i + 1] - dst;
    for (int32_t k = lane; k < len; k += 32) {
      out_cols[dst + k] = in_cols[src + k];
      out_values[dst + k] = in_values[src + k];
    }
  }
}

template <typename SrcReal, typename DstReal>
__global__ void CsrScatterKernel(int32_t rows, const int32_t* offsets, const int32_t* cols,
                                 const SrcReal* values, bool trans, SrcReal alpha, bool add,
                                 MatrixDim d, DstReal* dst) {
  const int lane = threadIdx.x % 32;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32; r < rows;
       r += static_cast<int64_t>(gridDim.x) * kWarpsPerBlock) {
    const int32_t end = offsets[r + 1];
    for (int32_t k = offsets[r] + lane; k < end; k += 32) {
      const int64_t c = cols[k];
      DstReal* p = trans ? dst + c * d.stride + r : dst + r * d.stride + c;
      const DstReal v = static_cast<DstReal>(alpha * values[k]);
      *p = add ? *p + v : v;
    }
  }
}

template <typename Real>
__global__ void CsrTraceTermsKernel(int32_t rows, const int32_t* offsets, const int32_t* cols,
                                    const Real* values, MatrixDim a_dim, const Real* a,
                                    bool same_shape, Real* prod) {
  const int lane = threadIdx.x % 32;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32; r < rows;
       r += static_cast<int64_t>(gridDim.x) * kWarpsPerBlock) {
    const int32_t end = offsets[r + 1];
    for (int32_t k = offsets[r] + lane; k < end; k += 32) {
      const int64_t c = cols[k];
      const Real x = same_shape ? a[r * a_dim.stride + c] : a[c * a_dim.stride + r];
      prod[k] = values[k] * x;
    }
  }
}

template <typename Real>
void OneHotCounts(int32_t n, const int32_t* d_indexes, const Real* d_weights, int32_t dim,
                  int32_t* d_counts, int32_t* d_bad, CuStream stream) {
  internal::Launch<OneHotCountsKernel<Real>>(CUCTX_LAUNCH_SITE("OneHotCountsKernel"),
                                             BlocksFor(int64_t{n} + 1, kThreads), kThreads, 0,
                                             stream, n, d_indexes, d_weights, dim, d_counts, d_bad);
}

template <typename Real>
void OneHotFill(int32_t n, const int32_t* d_indexes, const Real* d_weights,
                const int32_t* d_offsets, int32_t* d_cols, Real* d_values, CuStream stream) {
  if (n == 0) return;
  internal::Launch<OneHotFillKernel<Real>>(CUCTX_LAUNCH_SITE("OneHotFillKernel"),
                                           BlocksFor(n, kThreads), kThreads, 0, stream, n,
                                           d_indexes, d_weights, d_offsets, d_cols, d_values);
}

template <typename Real>
void SelectRowsCopy(int32_t n, const int32_t* d_rows, const int32_t* d_in_offsets,
                    const int32_t* d_in_cols, const Real* d_in_values, const int32_t* d_out_offsets,
                    int32_t* d_out_cols, Real* d_out_values, CuStream stream) {
  if (n == 0) return;
  internal::Launch<SelectRowsCopyKernel<Real>>(
      CUCTX_LAUNCH_SITE("SelectRowsCopyKernel"), BlocksFor(n, kWarpsPerBlock), kThreads, 0, stream,
      n, d_rows, d_in_offsets, d_in_cols, d_in_values, d_out_offsets, d_out_cols, d_out_values);
}

template <typename SrcReal, typename DstReal>
void CsrScatter(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                const SrcReal* d_values, bool trans, SrcReal alpha, bool add, MatrixDim dst_dim,
                DstReal* dst, CuStream stream) {
  if (rows == 0) return;
  internal::Launch<CsrScatterKernel<SrcReal, DstReal>>(
      CUCTX_LAUNCH_SITE("CsrScatterKernel"), BlocksFor(rows, kWarpsPerBlock), kThreads, 0, stream,
      rows, d_offsets, d_cols, d_values, trans, alpha, add, dst_dim, dst);
}

template <typename Real>
void CsrTraceTerms(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                   const Real* d_values, MatrixDim a_dim, const Real* a, bool same_shape,
                   Real* d_prod, CuStream stream) {
  if (rows == 0) return;
  internal::Launch<CsrTraceTermsKernel<Real>>(
      CUCTX_LAUNCH_SITE("CsrTraceTermsKernel"), BlocksFor(rows, kWarpsPerBlock), kThreads, 0,
      stream, rows, d_offsets, d_cols, d_values, a_dim, a, same_shape, d_prod);
}

}  // namespace

size_t SparseScanWorkspaceBytes(int32_t n) {
  size_t bytes = 0;
  const int32_t* in = nullptr;
  int32_t* out = nullptr;
  // With a null workspace CUB only reports the size it needs.
  CUCTX_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n));
  return bytes;
}

void LaunchExclusiveScan(const int32_t* d_in, int32_t n, int32_t* d_out, void* d_work,
                         size_t work_bytes, CuStream stream) {
  if (n == 0) return;
  CUCTX_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_work, work_bytes, d_in, d_out, n, stream));
  CUCTX_CUDA_CHECK_LAUNCH("cub::DeviceScan::ExclusiveSum");
}

void LaunchOneHotCounts(int32_t n, const int32_t* d_indexes, const float* d_weights, int32_t dim,
                        int32_t* d_counts, int32_t* d_bad, CuStream stream) {
  OneHotCounts(n, d_indexes, d_weights, dim, d_counts, d_bad, stream);
}
void LaunchOneHotCounts(int32_t n, const int32_t* d_indexes, const double* d_weights, int32_t dim,
                        int32_t* d_counts, int32_t* d_bad, CuStream stream) {
  OneHotCounts(n, d_indexes, d_weights, dim, d_counts, d_bad, stream);
}

void LaunchOneHotFill(int32_t n, const int32_t* d_indexes, const float* d_weights,
                      const int32_t* d_offsets, int32_t* d_cols, float* d_values, CuStream stream) {
  OneHotFill(n, d_indexes, d_weights, d_offsets, d_cols, d_values, stream);
}
void LaunchOneHotFill(int32_t n, const int32_t* d_indexes, const double* d_weights,
                      const int32_t* d_offsets, int32_t* d_cols, double* d_values,
                      CuStream stream) {
  OneHotFill(n, d_indexes, d_weights, d_offsets, d_cols, d_values, stream);
}

void LaunchSelectRowsCounts(int32_t n, const int32_t* d_rows, int32_t in_rows,
                            const int32_t* d_in_offsets, int32_t* d_counts, int32_t* d_bad,
                            CuStream stream) {
  internal::Launch<SelectRowsCountsKernel>(CUCTX_LAUNCH_SITE("SelectRowsCountsKernel"),
                                           BlocksFor(int64_t{n} + 1, kThreads), kThreads, 0, stream,
                                           n, d_rows, in_rows, d_in_offsets, d_counts, d_bad);
}

void LaunchSelectRowsCopy(int32_t n, const int32_t* d_rows, const int32_t* d_in_offsets,
                          const int32_t* d_in_cols, const float* d_in_values,
                          const int32_t* d_out_offsets, int32_t* d_out_cols, float* d_out_values,
                          CuStream stream) {
  SelectRowsCopy(n, d_rows, d_in_offsets, d_in_cols, d_in_values, d_out_offsets, d_out_cols,
                 d_out_values, stream);
}
void LaunchSelectRowsCopy(int32_t n, const int32_t* d_rows, const int32_t* d_in_offsets,
                          const int32_t* d_in_cols, const double* d_in_values,
                          const int32_t* d_out_offsets, int32_t* d_out_cols, double* d_out_values,
                          CuStream stream) {
  SelectRowsCopy(n, d_rows, d_in_offsets, d_in_cols, d_in_values, d_out_offsets, d_out_cols,
                 d_out_values, stream);
}

void LaunchCsrScatter(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                      const float* d_values, bool trans, float alpha, bool add, MatrixDim dst_dim,
                      float* dst, CuStream stream) {
  CsrScatter(rows, d_offsets, d_cols, d_values, trans, alpha, add, dst_dim, dst, stream);
}
void LaunchCsrScatter(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                      const float* d_values, bool trans, float alpha, bool add, MatrixDim dst_dim,
                      double* dst, CuStream stream) {
  CsrScatter(rows, d_offsets, d_cols, d_values, trans, alpha, add, dst_dim, dst, stream);
}
void LaunchCsrScatter(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                      const double* d_values, bool trans, double alpha, bool add, MatrixDim dst_dim,
                      float* dst, CuStream stream) {
  CsrScatter(rows, d_offsets, d_cols, d_values, trans, alpha, add, dst_dim, dst, stream);
}
void LaunchCsrScatter(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                      const double* d_values, bool trans, double alpha, bool add, MatrixDim dst_dim,
                      double* dst, CuStream stream) {
  CsrScatter(rows, d_offsets, d_cols, d_values, trans, alpha, add, dst_dim, dst, stream);
}

void LaunchCsrTraceTerms(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                         const float* d_values, MatrixDim a_dim, const float* a, bool same_shape,
                         float* d_prod, CuStream stream) {
  CsrTraceTerms(rows, d_offsets, d_cols, d_values, a_dim, a, same_shape, d_prod, stream);
}
void LaunchCsrTraceTerms(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                         const double* d_values, MatrixDim a_dim, const double* a, bool same_shape,
                         double* d_prod, CuStream stream) {
  CsrTraceTerms(rows, d_offsets, d_cols, d_values, a_dim, a, same_shape, d_prod, stream);
}

}  // namespace cuctx
