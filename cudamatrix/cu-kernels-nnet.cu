// cudamatrix/cu-kernels-nnet.cu: neural-net maps, row softmax, row/column reductions, row arg-max.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/cu-row-reduce.cuh"
#include "cudamatrix/internal/cu-kernels.h"

#include <climits>
#include <type_traits>

CUCTX_KERNEL_FILE()

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

// The map is a template argument, so each launch compiles to straight-line code for one function.
template <typename Real, NnetMap kMap>
struct NnetMapOp {
  __device__ void operator()(Real* d, Real x) const {
    switch (kMap) {
      case NnetMap::kSigmoid: {
        // exp of a non-positive argument only, so nothing overflows; one exp and one division
        // for either sign (a branch per sign diverges within a warp on mixed data, and in double
        // precision the second exp and division doubled the kernel's time).
        const Real e = DevExp(x >= 0 ? -x : x);
        const Real s = Real(1) / (Real(1) + e);
        *d = x >= 0 ? s : e * s;
        break;
      }
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

// Softmax (not log-softmax) for rows of at most kItems * kRowThreads columns: each thread keeps its
// kItems elements in registers, so the row is read from memory once and written once.
template <typename Real, int kItems>
__global__ void SoftMaxRowsCachedKernel(MatrixDim d, const Real* src, int32_t src_stride,
                                        Real* dst) {
  __shared__ Real sh[kRowWarps];
  for (int32_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    const Real* in = src + static_cast<size_t>(r) * src_stride;
    Real* out = dst + static_cast<size_t>(r) * d.stride;
    Real x[kItems];
    Real m = -INFINITY;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int32_t c = threadIdx.x + i * kRowThreads;
      x[i] = c < d.cols ? in[c] : Real(-INFINITY);
      if (c < d.cols) m = MaxOp()(m, x[i]);
    }
    m = BlockReduce(m, MaxOp(), sh);
    Real s = 0;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (threadIdx.x + i * kRowThreads < d.cols) {
        const Real e = DevExp(x[i] - m);
        s += e;
        x[i] = e;
      }
    }
    s = BlockReduce(s, SumOp(), sh);
    const Real inv = Real(1) / s;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int32_t c = threadIdx.x + i * kRowThreads;
      if (c < d.cols) out[c] = x[i] * inv;
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

// Column sums: a block of 32 columns x kColSumRows threads; each thread walks its column down the
// rows with four independent accumulators (more loads in flight), then a shared-memory tree adds
// the kColSumRows partials of each column. Warps read 32 consecutive elements of a row, so every
// access is coalesced; the order of additions is fixed, so the result is deterministic.
constexpr int kColSumRows = 32;

template <typename Real>
__global__ void ColSumKernel(MatrixDim d, const Real* data, Real alpha, Real beta, Real* out) {
  __shared__ Real sh[kColSumRows][33];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const size_t step = static_cast<size_t>(kColSumRows) * d.stride;
  for (int32_t c0 = blockIdx.x * 32; c0 < d.cols; c0 += gridDim.x * 32) {
    const int32_t c = c0 + tx;
    Real s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    if (c < d.cols) {
      int32_t r = ty;
      const Real* p = data + static_cast<size_t>(r) * d.stride + c;
      for (; r + 3 * kColSumRows < d.rows; r += 4 * kColSumRows, p += 4 * step) {
        s0 += p[0];
        s1 += p[step];
        s2 += p[2 * step];
        s3 += p[3 * step];
      }
      for (; r < d.rows; r += kColSumRows, p += step) s0 += p[0];
    }
    sh[ty][tx] = (s0 + s1) + (s2 + s3);
    __syncthreads();
    for (int half = kColSumRows / 2; half > 0; half /= 2) {
      if (ty < half) sh[ty][tx] += sh[ty + half][tx];
      __syncthreads();
    }
    if (ty == 0 && c < d.cols) out[c] = beta * out[c] + alpha * sh[0][tx];
    __syncthreads();
  }
}

// The better of two (value, column) candidates: the larger value, the lower column on a tie; a
// column of INT_MAX marks "no candidate yet" (a thread with no columns).
template <typename Real>
__device__ inline void TakeBetter(Real ov, int32_t oi, Real* v, int32_t* i) {
  if (oi != INT_MAX && (*i == INT_MAX || ov > *v || (ov == *v && oi < *i))) {
    *v = ov;
    *i = oi;
  }
}

// id[r] = column of the largest element of row r; ties go to the lowest column, as on the CPU.
// kThreadsPerRow threads scan a row (a warp, two, or the whole block of kRowThreads), so a block
// does kRowThreads / kThreadsPerRow rows at a time. With kVec (rows 16-byte aligned) each thread
// reads whole 16-byte vectors (4 floats, 2 doubles) and scans their lanes in order.
template <typename Real, bool kVec, int kThreadsPerRow>
__global__ void FindRowMaxIdKernel(MatrixDim d, const Real* data, int32_t* id) {
  constexpr int kRowsPerBlock = kRowThreads / kThreadsPerRow;
  constexpr int kWarpsPerRow = kThreadsPerRow / 32;
  // A narrow group's threads read several vectors of a row each; a block's, one or two. Unrolled
  // by 4, the float block form took 34 registers (30 by 2): 6 blocks per SM instead of 8, so 1028
  // rows of Kaldi's test needed two waves, 4031 ns against 2720 for Kaldi (ptxas, sm_90; run
  // ktrace-6, H100).
  constexpr int kUnroll = kThreadsPerRow < kRowThreads ? 4 : 2;
  __shared__ Real sv[kRowWarps];
  __shared__ int32_t si[kRowWarps];
  using V = typename internal::Vec16<Real>::Type;
  constexpr int32_t kLanes = internal::Vec16<Real>::kLanes;
  const int lane = threadIdx.x % kThreadsPerRow;
  // Every thread runs every iteration (the block's barriers); a row past the end scans nothing.
  for (int64_t r0 = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock; r0 < d.rows;
       r0 += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t r = r0 + threadIdx.x / kThreadsPerRow;
    Real v = -INFINITY;
    int32_t i = INT_MAX;
    // Each thread scans its columns in increasing order, so a strict '>' keeps its first maximum.
    auto scan = [&](Real x, int32_t c) {
      if (x > v || i == INT_MAX) {
        v = x;
        i = c;
      }
    };
    if (r < d.rows) {
      const Real* row = data + static_cast<size_t>(r) * d.stride;
      if constexpr (kVec) {
        const int32_t nvec = d.cols / kLanes;
#pragma unroll kUnroll
        for (int32_t u = lane; u < nvec; u += kThreadsPerRow) {
          const V x = reinterpret_cast<const V*>(row)[u];
          const Real* lanes = reinterpret_cast<const Real*>(&x);
#pragma unroll
          for (int32_t k = 0; k < kLanes; ++k) scan(lanes[k], u * kLanes + k);
        }
        // The tail (fewer than kLanes columns) goes to threads past the last vector's owner, so
        // each thread's columns still rise.
        const int32_t c = nvec * kLanes + lane;
        if (lane < d.cols - nvec * kLanes) scan(row[c], c);
      } else {
        // Unrolled so that a thread's loads go out together (they do not depend on the
        // comparisons).
#pragma unroll 4
        for (int32_t c = lane; c < d.cols; c += kThreadsPerRow) scan(row[c], c);
      }
    }
    for (int offset = 16; offset > 0; offset /= 2)
      TakeBetter(__shfl_xor_sync(0xffffffffu, v, offset), __shfl_xor_sync(0xffffffffu, i, offset),
                 &v, &i);
    if constexpr (kWarpsPerRow > 1) {
      const int warp = threadIdx.x / 32;
      if (threadIdx.x % 32 == 0) {
        sv[warp] = v;
        si[warp] = i;
      }
      __syncthreads();
      if (lane == 0)
        for (int w = 1; w < kWarpsPerRow; ++w) TakeBetter(sv[warp + w], si[warp + w], &v, &i);
      __syncthreads();  // read before the next rows' warps overwrite sv/si
    }
    if (lane == 0 && r < d.rows) id[r] = i == INT_MAX ? 0 : i;
  }
}

// Rows of up to this many columns get a warp each (float) or two warps (double) in FindRowMaxId;
// longer rows a block each. Kernel time per threads per row (256, 128, 64, 32) at 1024 x 1024:
// floats 3360, 2656, 2464, 2272 ns; doubles 3616, 3104, 2944, 3200 ns; at 512 x 512 floats 2176,
// 1984, 2048, 1760 and doubles 2496, 2112, 2080, 2176 ns (H100, CUPTI kernel durations, run
// probe-rm). Kaldi's speed test has 1024 + (0 to 4) columns: with a limit of 1024 its rows took
// the block per row (unrolled by 4 then, see above; H100, run ktrace-6); with this limit 2560 ns
// against 2688 ns for Kaldi's kernel, and at 512 columns 1984 ns against 2368 ns (ktrace-7). The
// limit is above the measured widths, so that all of them take the narrow form; with 4096 floats a
// lane reads 32 vectors.
constexpr int32_t kFindMaxNarrowCols = 4096;

unsigned RowBlocks(int32_t rows) {
  return static_cast<unsigned>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks);
}

template <typename Real>
void Map(MatrixDim d, NnetMap map, const Real* src, int32_t src_stride, Real* dst,
         CuStream stream) {
  const char* name = "BinaryMapKernel(nnet map)";
  switch (map) {
    case NnetMap::kSigmoid:
      internal::LaunchBinaryMap(d, src, src_stride, NnetMapOp<Real, NnetMap::kSigmoid>(), dst,
                                stream, name);
      break;
    case NnetMap::kTanh:
      internal::LaunchBinaryMap(d, src, src_stride, NnetMapOp<Real, NnetMap::kTanh>(), dst, stream,
                                name);
      break;
    case NnetMap::kSoftHinge:
      internal::LaunchBinaryMap(d, src, src_stride, NnetMapOp<Real, NnetMap::kSoftHinge>(), dst,
                                stream, name);
      break;
    case NnetMap::kExp:
      internal::LaunchBinaryMap(d, src, src_stride, NnetMapOp<Real, NnetMap::kExp>(), dst, stream,
                                name);
      break;
    case NnetMap::kLog:
      internal::LaunchBinaryMap(d, src, src_stride, NnetMapOp<Real, NnetMap::kLog>(), dst, stream,
                                name);
      break;
  }
}

template <typename Real>
void Diff(MatrixDim d, const Real* value, int32_t value_stride, const Real* diff,
          int32_t diff_stride, bool tanh, Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  if (tanh)
    internal::Launch<DiffKernel<Real, true>>(CUCTX_LAUNCH_SITE("DiffKernel<Real, true>"), s.grid,
                                             s.block, 0, stream, d, value, value_stride, diff,
                                             diff_stride, dst);
  else
    internal::Launch<DiffKernel<Real, false>>(CUCTX_LAUNCH_SITE("DiffKernel<Real, false>"), s.grid,
                                              s.block, 0, stream, d, value, value_stride, diff,
                                              diff_stride, dst);
}

template <typename Real>
void SoftMaxRows(MatrixDim d, const Real* src, int32_t src_stride, bool log_output, Real* dst,
                 CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  const unsigned blocks = RowBlocks(d.rows);
  // Rows that fit in registers (up to 16 per thread) are read once; longer rows take three passes.
  // Measured on the H100 (bin/cu-matrix-bench, 4096 and 16384 rows of 4096): the register kernel
  // reaches 0.99 of cudaMemcpy D2D for double softmax (three passes: 0.80-0.87), but is slower
  // than three passes for float and for log-softmax (0.67-0.74 against 0.84-0.93), so it is used
  // only for double softmax.
  if (!log_output && sizeof(Real) == 8 && d.cols <= 16 * kRowThreads) {
    const int items = (d.cols + kRowThreads - 1) / kRowThreads;
    auto launch = [&](auto items_tag) {
      constexpr int kItems = decltype(items_tag)::value;
      internal::Launch<SoftMaxRowsCachedKernel<Real, kItems>>(
          CUCTX_LAUNCH_SITE("SoftMaxRowsCachedKernel<Real, kItems>"), blocks, kRowThreads, 0,
          stream, d, src, src_stride, dst);
    };
    if (items <= 1)
      launch(std::integral_constant<int, 1>());
    else if (items <= 2)
      launch(std::integral_constant<int, 2>());
    else if (items <= 4)
      launch(std::integral_constant<int, 4>());
    else if (items <= 8)
      launch(std::integral_constant<int, 8>());
    else
      launch(std::integral_constant<int, 16>());
    return;
  }
  if (log_output)
    internal::Launch<SoftMaxRowsKernel<Real, true>>(
        CUCTX_LAUNCH_SITE("SoftMaxRowsKernel<Real, true>"), blocks, kRowThreads, 0, stream, d, src,
        src_stride, dst);
  else
    internal::Launch<SoftMaxRowsKernel<Real, false>>(
        CUCTX_LAUNCH_SITE("SoftMaxRowsKernel<Real, false>"), blocks, kRowThreads, 0, stream, d, src,
        src_stride, dst);
}

template <typename Real>
void RowReduce(MatrixDim d, const Real* data, RowReduceOp op, Real alpha, Real beta, Real* d_out,
               CuStream stream) {
  // Rows with no columns still get alpha * identity + beta * out, so only empty rows return.
  if (d.rows == 0) return;
  const unsigned grid = RowBlocks(d.rows);
  switch (op) {
    case RowReduceOp::kSum:
      internal::Launch<RowReduceKernel<Real, SumOp>>(CUCTX_LAUNCH_SITE("RowReduceKernel"), grid,
                                                     kRowThreads, 0, stream, d, data, SumOp(),
                                                     Real(0), alpha, beta, d_out);
      break;
    case RowReduceOp::kMax:
      internal::Launch<RowReduceKernel<Real, MaxOp>>(CUCTX_LAUNCH_SITE("RowReduceKernel"), grid,
                                                     kRowThreads, 0, stream, d, data, MaxOp(),
                                                     Real(-INFINITY), alpha, beta, d_out);
      break;
    case RowReduceOp::kMin:
      internal::Launch<RowReduceKernel<Real, MinOp>>(CUCTX_LAUNCH_SITE("RowReduceKernel"), grid,
                                                     kRowThreads, 0, stream, d, data, MinOp(),
                                                     Real(INFINITY), alpha, beta, d_out);
      break;
  }
}

template <typename Real>
void ColSum(MatrixDim d, const Real* data, Real alpha, Real beta, Real* d_out, CuStream stream) {
  if (d.cols == 0) return;
  const int64_t gx = (static_cast<int64_t>(d.cols) + 31) / 32;
  const unsigned grid = static_cast<unsigned>(gx < 65535 ? gx : 65535);
  internal::Launch<ColSumKernel<Real>>(CUCTX_LAUNCH_SITE("ColSumKernel"), grid,
                                       dim3(32, kColSumRows, 1), 0, stream, d, data, alpha, beta,
                                       d_out);
}

template <typename Real>
void FindRowMaxId(MatrixDim d, const Real* data, int32_t* d_id, CuStream stream) {
  if (d.rows == 0) return;
  const bool vec = internal::RowsAligned16(data, d.stride);
  if (d.cols <= kFindMaxNarrowCols) {
    constexpr int kNarrow = sizeof(Real) == 4 ? 32 : 64;
    const unsigned grid = internal::RowGridFor(d.rows, kRowThreads / kNarrow);
    if (vec)
      internal::Launch<FindRowMaxIdKernel<Real, true, kNarrow>>(
          CUCTX_LAUNCH_SITE("FindRowMaxIdKernel<vec, narrow>"), grid, kRowThreads, 0, stream, d,
          data, d_id);
    else
      internal::Launch<FindRowMaxIdKernel<Real, false, kNarrow>>(
          CUCTX_LAUNCH_SITE("FindRowMaxIdKernel<narrow>"), grid, kRowThreads, 0, stream, d, data,
          d_id);
    return;
  }
  if (vec)
    internal::Launch<FindRowMaxIdKernel<Real, true, kRowThreads>>(
        CUCTX_LAUNCH_SITE("FindRowMaxIdKernel<vec>"), RowBlocks(d.rows), kRowThreads, 0, stream, d,
        data, d_id);
  else
    internal::Launch<FindRowMaxIdKernel<Real, false, kRowThreads>>(
        CUCTX_LAUNCH_SITE("FindRowMaxIdKernel"), RowBlocks(d.rows), kRowThreads, 0, stream, d, data,
        d_id);
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
