// cudamatrix/cu-kernels-nnet.cu: neural-net maps, row softmax, row/column reductions, row arg-max.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-kernels.h"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/cu-row-reduce.cuh"

#include <climits>

namespace cuctx {
namespace {

using internal::BlockReduce;
using internal::DevExp;
using internal::DevLog;
using internal::DevLog1p;
using internal::DevTanh;
using internal::kMaxRowBlocks;
using internal::kRowThreads;
using internal::kRowWarps;
using internal::MaxOp;
using internal::MinOp;
using internal::SumOp;

template <typename Real>
struct NnetMapOp {
  NnetMap map;
  __device__ void operator()(Real* d, Real x) const {
    switch (map) {
      case NnetMap::kSigmoid:
        // exp of a non-positive argument only, so neither branch overflows.
        if (x >= 0) {
          *d = Real(1) / (Real(1) + DevExp(-x));
        } else {
          const Real e = DevExp(x);
          *d = e / (Real(1) + e);
        }
        break;
      case NnetMap::kTanh:
        *d = DevTanh(x);
        break;
      case NnetMap::kSoftHinge:
        *d = (x > Real(0) ? x : Real(0)) + DevLog1p(DevExp(x > Real(0) ? -x : x));
        break;
      case NnetMap::kExp:
        *d = DevExp(x);
        break;
      case NnetMap::kLog:
        *d = DevLog(x);
        break;
    }
  }
};

// dst = diff .* value .* (1 - value) (sigmoid) or diff .* (1 - value^2) (tanh).
template <typename Real, bool kTanh>
__global__ void DiffKernel(MatrixDim d, const Real* value, int32_t value_stride, const Real* diff,
                           int32_t diff_stride, Real* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    const Real* vrow = value + static_cast<size_t>(r) * value_stride;
    const Real* grow = diff + static_cast<size_t>(r) * diff_stride;
    Real* drow = dst + static_cast<size_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      const Real y = vrow[c];
      drow[c] = kTanh ? grow[c] * (Real(1) - y * y) : grow[c] * y * (Real(1) - y);
    }
  }
}

// One block per row (grid-strided over rows): the row maximum, then the sum of exp(x - max), then
// the output. Every read of a row happens before the second reduction's barrier and every write
// after it, so src may be dst.
template <typename Real, bool kLog>
__global__ void SoftMaxRowsKernel(MatrixDim d, const Real* src, int32_t src_stride, Real* dst) {
  __shared__ Real sh[kRowWarps];
  for (int32_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    const Real* in = src + static_cast<size_t>(r) * src_stride;
    Real* out = dst + static_cast<size_t>(r) * d.stride;
    Real m = -INFINITY;
    for (int32_t c = threadIdx.x; c < d.cols; c += kRowThreads) m = MaxOp()(m, in[c]);
    m = BlockReduce(m, MaxOp(), sh);
    Real s = 0;
    for (int32_t c = threadIdx.x; c < d.cols; c += kRowThreads) s += DevExp(in[c] - m);
    s = BlockReduce(s, SumOp(), sh);
    if (kLog) {
      const Real shift = m + DevLog(s);
      for (int32_t c = threadIdx.x; c < d.cols; c += kRowThreads) out[c] = in[c] - shift;
    } else {
      const Real inv = Real(1) / s;
      for (int32_t c = threadIdx.x; c < d.cols; c += kRowThreads) out[c] = DevExp(in[c] - m) * inv;
    }
  }
}

// out[r] = alpha * reduce(row r) + beta * out[r]; `init` is the identity of the reduction. The old
// value is always read, as on the CPU (so beta == 0 with a NaN output stays NaN).
template <typename Real, typename Op>
__global__ void RowReduceKernel(MatrixDim d, const Real* data, Op op, Real init, Real alpha,
                                Real beta, Real* out) {
  __shared__ Real sh[kRowWarps];
  for (int32_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    const Real* row = data + static_cast<size_t>(r) * d.stride;
    Real v = init;
    for (int32_t c = threadIdx.x; c < d.cols; c += kRowThreads) v = op(v, row[c]);
    v = BlockReduce(v, op, sh);
    if (threadIdx.x == 0) out[r] = beta * out[r] + alpha * v;
  }
}

// Column sums: a 32 x 8 block owns 32 consecutive columns (so each warp reads 32 consecutive
// elements of a row); its 8 thread rows stride down the matrix and are combined in shared memory.
template <typename Real>
__global__ void ColSumKernel(MatrixDim d, const Real* data, Real alpha, Real beta, Real* out) {
  __shared__ Real sh[8][33];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int32_t c0 = blockIdx.x * 32; c0 < d.cols; c0 += gridDim.x * 32) {
    const int32_t c = c0 + tx;
    Real s = 0;
    if (c < d.cols)
      for (int32_t r = ty; r < d.rows; r += 8) s += data[static_cast<size_t>(r) * d.stride + c];
    sh[ty][tx] = s;
    __syncthreads();
    if (ty == 0 && c < d.cols) {
      Real total = sh[0][tx];
      for (int j = 1; j < 8; ++j) total += sh[j][tx];
      out[c] = beta * out[c] + alpha * total;
    }
    __syncthreads();
  }
}

// id[r] = column of the largest element of row r; ties go to the lowest column, as on the CPU.
template <typename Real>
__global__ void FindRowMaxIdKernel(MatrixDim d, const Real* data, int32_t* id) {
  __shared__ Real sv[kRowWarps];
  __shared__ int32_t si[kRowWarps];
  for (int32_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    const Real* row = data + static_cast<size_t>(r) * d.stride;
    Real v = -INFINITY;
    int32_t i = INT_MAX;
    // Each thread scans its columns in increasing order, so a strict '>' keeps its first maximum.
    for (int32_t c = threadIdx.x; c < d.cols; c += kRowThreads) {
      const Real x = row[c];
      if (x > v || i == INT_MAX) {
        v = x;
        i = c;
      }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      const Real ov = __shfl_xor_sync(0xffffffffu, v, offset);
      const int32_t oi = __shfl_xor_sync(0xffffffffu, i, offset);
      if (oi != INT_MAX && (i == INT_MAX || ov > v || (ov == v && oi < i))) {
        v = ov;
        i = oi;
      }
    }
    __syncthreads();
    if (threadIdx.x % 32 == 0) {
      sv[threadIdx.x / 32] = v;
      si[threadIdx.x / 32] = i;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      Real bv = sv[0];
      int32_t bi = si[0];
      for (int w = 1; w < kRowWarps; ++w) {
        if (si[w] != INT_MAX && (bi == INT_MAX || sv[w] > bv || (sv[w] == bv && si[w] < bi))) {
          bv = sv[w];
          bi = si[w];
        }
      }
      id[r] = bi == INT_MAX ? 0 : bi;
    }
  }
}

unsigned RowBlocks(int32_t rows) {
  return static_cast<unsigned>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks);
}

template <typename Real>
void Map(MatrixDim d, NnetMap map, const Real* src, int32_t src_stride, Real* dst,
         CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  internal::CollapseIfContiguous(&d, &src_stride);
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::BinaryMapKernel<<<s.grid, s.block, 0, stream>>>(d, src, src_stride,
                                                            NnetMapOp<Real>{map}, dst);
  CUCTX_CUDA_CHECK_LAUNCH("BinaryMapKernel(nnet map)");
}

template <typename Real>
void Diff(MatrixDim d, const Real* value, int32_t value_stride, const Real* diff,
          int32_t diff_stride, bool tanh, Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  if (tanh)
    DiffKernel<Real, true>
        <<<s.grid, s.block, 0, stream>>>(d, value, value_stride, diff, diff_stride, dst);
  else
    DiffKernel<Real, false>
        <<<s.grid, s.block, 0, stream>>>(d, value, value_stride, diff, diff_stride, dst);
  CUCTX_CUDA_CHECK_LAUNCH("DiffKernel");
}

template <typename Real>
void SoftMaxRows(MatrixDim d, const Real* src, int32_t src_stride, bool log_output, Real* dst,
                 CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  if (log_output)
    SoftMaxRowsKernel<Real, true>
        <<<RowBlocks(d.rows), kRowThreads, 0, stream>>>(d, src, src_stride, dst);
  else
    SoftMaxRowsKernel<Real, false>
        <<<RowBlocks(d.rows), kRowThreads, 0, stream>>>(d, src, src_stride, dst);
  CUCTX_CUDA_CHECK_LAUNCH("SoftMaxRowsKernel");
}

template <typename Real>
void RowReduce(MatrixDim d, const Real* data, RowReduceOp op, Real alpha, Real beta, Real* d_out,
               CuStream stream) {
  // Rows with no columns still get alpha * identity + beta * out, so only empty rows return.
  if (d.rows == 0) return;
  const unsigned grid = RowBlocks(d.rows);
  switch (op) {
    case RowReduceOp::kSum:
      RowReduceKernel<<<grid, kRowThreads, 0, stream>>>(d, data, SumOp(), Real(0), alpha, beta,
                                                        d_out);
      break;
    case RowReduceOp::kMax:
      RowReduceKernel<<<grid, kRowThreads, 0, stream>>>(d, data, MaxOp(), Real(-INFINITY), alpha,
                                                        beta, d_out);
      break;
    case RowReduceOp::kMin:
      RowReduceKernel<<<grid, kRowThreads, 0, stream>>>(d, data, MinOp(), Real(INFINITY), alpha,
                                                        beta, d_out);
      break;
  }
  CUCTX_CUDA_CHECK_LAUNCH("RowReduceKernel");
}

template <typename Real>
void ColSum(MatrixDim d, const Real* data, Real alpha, Real beta, Real* d_out, CuStream stream) {
  if (d.cols == 0) return;
  const int64_t gx = (static_cast<int64_t>(d.cols) + 31) / 32;
  const unsigned grid = static_cast<unsigned>(gx < 65535 ? gx : 65535);
  ColSumKernel<<<grid, dim3(32, 8, 1), 0, stream>>>(d, data, alpha, beta, d_out);
  CUCTX_CUDA_CHECK_LAUNCH("ColSumKernel");
}

template <typename Real>
void FindRowMaxId(MatrixDim d, const Real* data, int32_t* d_id, CuStream stream) {
  if (d.rows == 0) return;
  FindRowMaxIdKernel<<<RowBlocks(d.rows), kRowThreads, 0, stream>>>(d, data, d_id);
  CUCTX_CUDA_CHECK_LAUNCH("FindRowMaxIdKernel");
}

}  // namespace

void LaunchNnetMap(MatrixDim d, NnetMap map, const float* src, int32_t ss, float* dst,
                   CuStream st) {
  Map(d, map, src, ss, dst, st);
}
void LaunchNnetMap(MatrixDim d, NnetMap map, const double* src, int32_t ss, double* dst,
                   CuStream st) {
  Map(d, map, src, ss, dst, st);
}
void LaunchDiffSigmoidTanh(MatrixDim d, const float* value, int32_t vs, const float* diff,
                           int32_t ds, bool tanh, float* dst, CuStream st) {
  Diff(d, value, vs, diff, ds, tanh, dst, st);
}
void LaunchDiffSigmoidTanh(MatrixDim d, const double* value, int32_t vs, const double* diff,
                           int32_t ds, bool tanh, double* dst, CuStream st) {
  Diff(d, value, vs, diff, ds, tanh, dst, st);
}
void LaunchSoftMaxRows(MatrixDim d, const float* src, int32_t ss, bool log_output, float* dst,
                       CuStream st) {
  SoftMaxRows(d, src, ss, log_output, dst, st);
}
void LaunchSoftMaxRows(MatrixDim d, const double* src, int32_t ss, bool log_output, double* dst,
                       CuStream st) {
  SoftMaxRows(d, src, ss, log_output, dst, st);
}
void LaunchRowReduce(MatrixDim d, const float* data, RowReduceOp op, float alpha, float beta,
                     float* d_out, CuStream st) {
  RowReduce(d, data, op, alpha, beta, d_out, st);
}
void LaunchRowReduce(MatrixDim d, const double* data, RowReduceOp op, double alpha, double beta,
                     double* d_out, CuStream st) {
  RowReduce(d, data, op, alpha, beta, d_out, st);
}
void LaunchColSum(MatrixDim d, const float* data, float alpha, float beta, float* d_out,
                  CuStream st) {
  ColSum(d, data, alpha, beta, d_out, st);
}
void LaunchColSum(MatrixDim d, const double* data, double alpha, double beta, double* d_out,
                  CuStream st) {
  ColSum(d, data, alpha, beta, d_out, st);
}
void LaunchFindRowMaxId(MatrixDim d, const float* data, int32_t* d_id, CuStream st) {
  FindRowMaxId(d, data, d_id, st);
}
void LaunchFindRowMaxId(MatrixDim d, const double* data, int32_t* d_id, CuStream st) {
  FindRowMaxId(d, data, d_id, st);
}

}  // namespace cuctx
