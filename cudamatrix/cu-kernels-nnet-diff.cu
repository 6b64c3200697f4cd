// cudamatrix/cu-kernels-nnet-diff.cu: neural-net back-propagation (softmax, group norms, group
// max, parametric ReLU), cross-entropy gradient and weighted log-likelihood objective.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/cu-row-reduce.cuh"
#include "cudamatrix/internal/cu-kernels.h"

#include <algorithm>
#include <cmath>

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

using internal::BlockReduce;
using internal::DevAbs;
using internal::DevExp;
using internal::DevLog;
using internal::DevPow;
using internal::DevSqrt;
using internal::ForEachElement;
using internal::ForEachRow;
using internal::kRowThreads;
using internal::kRowWarps;
using internal::kWarpRowMaxCols;
using internal::RowGrid;
using internal::RowSum;
using internal::SumOp;

template <typename Real>
__device__ Real Sign(Real x) {
  return x > 0 ? Real(1) : (x < 0 ? Real(-1) : Real(0));
}

// Rows too long for DiffSoftmaxCachedKernel: the dot product in one pass, the output in a second
// (whose reads mostly hit L2 when rows are a few hundred KiB at most).
template <typename Real, bool kLog, int kThreadsPerRow>
__global__ void DiffSoftmaxRowsKernel(MatrixDim d, const Real* value, int32_t value_stride,
                                      const Real* diff, int32_t diff_stride, Real* dst) {
  __shared__ Real sh[kRowWarps];
  ForEachRow<kThreadsPerRow>(d.rows, [&](int32_t r, int lane) {
    const Real* y = value + static_cast<size_t>(r) * value_stride;
    const Real* g = diff + static_cast<size_t>(r) * diff_stride;
    Real* out = dst + static_cast<size_t>(r) * d.stride;
    Real s = 0;
    for (int32_t c = lane; c < d.cols; c += kThreadsPerRow) s += kLog ? g[c] : y[c] * g[c];
    s = RowSum<kThreadsPerRow>(s, sh);
    // Each element is read and written by the same thread, after the row's reduction.
    for (int32_t c = lane; c < d.cols; c += kThreadsPerRow)
      out[c] = kLog ? g[c] - DevExp(y[c]) * s : y[c] * (g[c] - s);
  });
}

// How the cached row kernels move data: whole 16-byte vectors (kVector) or single elements.
template <typename Real, bool kVector>
struct RowUnit {
  using Type = typename internal::Vec16<Real>::Type;
  static constexpr int32_t kWidth = internal::Vec16<Real>::kLanes;
};
template <typename Real>
struct RowUnit<Real, false> {
  using Type = Real;
  static constexpr int32_t kWidth = 1;
};

// DiffSoftmaxPerRow (kLog false: dst = y .* (g - y.g)) and DiffLogSoftmaxPerRow (kLog true:
// dst = g - exp(y) * sum(g)) in one pass over the inputs, for rows of at most kUnits *
// kThreadsPerRow units (16-byte vectors with kVector, which needs every row of all three operands
// 16-byte aligned; else single elements). Each thread loads its units of y and g into registers,
// adds its part of the dot product, and after the row's sum (RowSum) computes its outputs from the
// same registers, so each input element is read from memory once. The columns after the last
// whole vector (fewer than one vector's worth) belong to the first lanes. Every read of a row
// precedes RowSum's barrier or shuffles and every write follows them, so dst may be value or diff.
// The launch bounds ask for 2 blocks per SM (at most 128 registers, about what the largest
// instantiations use): with 1, ptxas of CUDA 13.0 spills in the 16-unit float log kernel.
template <typename Real, bool kLog, int kThreadsPerRow, int kUnits, bool kVector>
__global__ void __launch_bounds__(kRowThreads, 2)
    DiffSoftmaxCachedKernel(MatrixDim d, const Real* value, int32_t value_stride, const Real* diff,
                            int32_t diff_stride, Real* dst) {
  using V = typename RowUnit<Real, kVector>::Type;
  constexpr int32_t w = RowUnit<Real, kVector>::kWidth;
  __shared__ Real sh[kRowWarps];
  const int32_t nvec = d.cols / w;
  const int32_t tail = d.cols - nvec * w;
  ForEachRow<kThreadsPerRow>(d.rows, [&](int32_t r, int lane) {
    const Real* y = value + static_cast<size_t>(r) * value_stride;
    const Real* g = diff + static_cast<size_t>(r) * diff_stride;
    Real* out = dst + static_cast<size_t>(r) * d.stride;
    V yv[kUnits], gv[kUnits];
#pragma unroll
    for (int i = 0; i < kUnits; ++i) {
      const int32_t u = lane + i * kThreadsPerRow;
      if (u < nvec) {
        yv[i] = reinterpret_cast<const V*>(y)[u];
        gv[i] = reinterpret_cast<const V*>(g)[u];
      }
    }
    const int32_t tc = nvec * w + lane;
    const bool has_tail = lane < tail;
    Real yt = 0, gt = 0;
    if (has_tail) {
      yt = y[tc];
      gt = g[tc];
    }
    Real s = 0;
#pragma unroll
    for (int i = 0; i < kUnits; ++i) {
      if (lane + i * kThreadsPerRow < nvec) {
        const Real* yl = reinterpret_cast<const Real*>(&yv[i]);
        const Real* gl = reinterpret_cast<const Real*>(&gv[i]);
#pragma unroll
        for (int32_t j = 0; j < w; ++j) s += kLog ? gl[j] : yl[j] * gl[j];
      }
    }
    if (has_tail) s += kLog ? gt : yt * gt;
    s = RowSum<kThreadsPerRow>(s, sh);
#pragma unroll
    for (int i = 0; i < kUnits; ++i) {
      const int32_t u = lane + i * kThreadsPerRow;
      if (u < nvec) {
        const Real* yl = reinterpret_cast<const Real*>(&yv[i]);
        const Real* gl = reinterpret_cast<const Real*>(&gv[i]);
        V o;
        Real* ol = reinterpret_cast<Real*>(&o);
#pragma unroll
        for (int32_t j = 0; j < w; ++j)
          ol[j] = kLog ? gl[j] - DevExp(yl[j]) * s : yl[j] * (gl[j] - s);
        reinterpret_cast<V*>(out)[u] = o;
      }
    }
    if (has_tail) out[tc] = kLog ? gt - DevExp(yt) * s : yt * (gt - s);
  });
}

template <typename Real>
__global__ void GroupReduceKernel(MatrixDim d, const Real* src, int32_t src_stride, int32_t group,
                                  bool max, Real power, Real* dst) {
  const bool inf = isinf(power);
  ForEachElement(d, [&](int32_t r, int32_t g) {
    const Real* x = src + static_cast<size_t>(r) * src_stride + static_cast<size_t>(g) * group;
    Real acc;
    if (max) {
      acc = x[0];
      for (int32_t i = 1; i < group; ++i) acc = acc < x[i] ? x[i] : acc;
    } else if (power == 0) {
      acc = 0;
      for (int32_t i = 0; i < group; ++i) acc += x[i] != 0 ? Real(1) : Real(0);
    } else if (inf) {
      acc = 0;
      for (int32_t i = 0; i < group; ++i) acc = DevAbs(x[i]) > acc ? DevAbs(x[i]) : acc;
    } else if (power == 1) {
      acc = 0;
      for (int32_t i = 0; i < group; ++i) acc += DevAbs(x[i]);
    } else if (power == 2) {
      acc = 0;
      for (int32_t i = 0; i < group; ++i) acc += x[i] * x[i];
      acc = DevSqrt(acc);
    } else {
      acc = 0;
      for (int32_t i = 0; i < group; ++i) acc += DevPow(DevAbs(x[i]), power);
      acc = DevPow(acc, Real(1) / power);
    }
    dst[static_cast<size_t>(r) * d.stride + g] = acc;
  });
}

// Groups of kWarpGroupMin elements or more: one warp per output, its lanes striding through the
// group (coalesced, where a thread per output would read a whole group alone), combined by
// shuffles. Same modes and results as GroupReduceKernel, except that the sums add in a different
// order; max keeps the CPU's NaN rule (a NaN first element is the result, later NaNs are skipped).
constexpr int32_t kWarpGroupMin = 32;
template <typename Real>
__global__ void GroupReduceWarpKernel(MatrixDim d, const Real* src, int32_t src_stride,
                                      int32_t group, bool max, Real power, Real* dst) {
  const bool inf = isinf(power);
  const bool take_max = max || inf;
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  const int64_t outputs = static_cast<int64_t>(d.rows) * d.cols;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
       o < outputs; o += warps) {
    const int32_t r = static_cast<int32_t>(o / d.cols), g = static_cast<int32_t>(o % d.cols);
    const Real* x = src + static_cast<size_t>(r) * src_stride + static_cast<size_t>(g) * group;
    Real acc = take_max ? (max ? Real(-INFINITY) : Real(0)) : Real(0);
    for (int32_t i = lane; i < group; i += 32) {
      const Real v = x[i];
      if (max)
        acc = v > acc ? v : acc;
      else if (power == 0)
        acc += v != 0 ? Real(1) : Real(0);
      else if (inf)
        acc = DevAbs(v) > acc ? DevAbs(v) : acc;
      else if (power == 1)
        acc += DevAbs(v);
      else if (power == 2)
        acc += v * v;
      else
        acc += DevPow(DevAbs(v), power);
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) {
      const Real other = __shfl_down_sync(0xffffffffu, acc, off);
      acc = take_max ? (other > acc ? other : acc) : acc + other;
    }
    if (lane == 0) {
      if (max && x[0] != x[0]) acc = x[0];
      if (!max && !inf && power == 2) acc = DevSqrt(acc);
      if (!max && !inf && power != 0 && power != 1 && power != 2)
        acc = DevPow(acc, Real(1) / power);
      dst[static_cast<size_t>(r) * d.stride + g] = acc;
    }
  }
}

// One element of the group derivative: x = in(r, c), y = out(r, c / group), od = out_deriv(r,
// c / group) (unused with max).
template <typename Real>
__device__ Real GroupDerivElement(Real x, Real y, Real od, bool max, bool inf, Real power) {
  if (max) return x == y ? Real(1) : Real(0);
  Real dydx;
  if (power == 1)
    dydx = Sign(x);
  else if (inf)
    dydx = DevAbs(x) == y ? Sign(x) : Real(0);  // 0 for an all-zero group, as Kaldi
  else if (y == 0)
    dydx = 0;
  else if (power == 2)  // the common p-norm: x / y, without two pow() (slow in double)
    dydx = x / y;
  else
    dydx = Sign(x) * DevPow(DevAbs(x), power - 1) * DevPow(y, 1 - power);
  return dydx * od;
}

template <typename Real>
__global__ void GroupReduceDerivKernel(MatrixDim d, const Real* in, int32_t in_stride,
                                       const Real* out, int32_t out_stride, const Real* out_deriv,
                                       int32_t out_deriv_stride, int32_t group, bool max,
                                       Real power, Real* dst) {
  const bool inf = isinf(power);
  ForEachElement(d, [&](int32_t r, int32_t c) {
    const int32_t g = c / group;
    const Real od = max ? Real(0) : out_deriv[static_cast<size_t>(r) * out_deriv_stride + g];
    dst[static_cast<size_t>(r) * d.stride + c] =
        GroupDerivElement(in[static_cast<size_t>(r) * in_stride + c],
                          out[static_cast<size_t>(r) * out_stride + g], od, max, inf, power);
  });
}

// The same with 16-byte accesses, for rows that start 16-byte aligned and groups that are a
// whole number of 16-byte units (so a unit's lanes share one group): vec_dim counts the units.
template <typename Real>
__global__ void GroupReduceDerivVecKernel(MatrixDim vec_dim, const Real* in, int32_t in_stride,
                                          const Real* out, int32_t out_stride,
                                          const Real* out_deriv, int32_t out_deriv_stride,
                                          int32_t group, bool max, Real power, Real* dst,
                                          int32_t dst_stride) {
  using V = typename internal::Vec16<Real>::Type;
  constexpr int32_t w = internal::Vec16<Real>::kLanes;
  const bool inf = isinf(power);
  ForEachElement(vec_dim, [&](int32_t r, int32_t u) {
    const int32_t g = u * w / group;
    const Real y = out[static_cast<size_t>(r) * out_stride + g];
    const Real od = max ? Real(0) : out_deriv[static_cast<size_t>(r) * out_deriv_stride + g];
    const V x = reinterpret_cast<const V*>(in + static_cast<size_t>(r) * in_stride)[u];
    V v;
    const Real* xl = reinterpret_cast<const Real*>(&x);
    Real* vl = reinterpret_cast<Real*>(&v);
#pragma unroll
    for (int32_t i = 0; i < w; ++i) vl[i] = GroupDerivElement(xl[i], y, od, max, inf, power);
    reinterpret_cast<V*>(dst + static_cast<size_t>(r) * dst_stride)[u] = v;
  });
}

template <typename Real>
__global__ void DiffXentKernel(MatrixDim d, const int32_t* tgt, Real* data, Real* log_post) {
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < d.rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t t = tgt[r];
    if (t < 0 || t >= d.cols) {
      log_post[r] = NAN;
      continue;
    }
    Real* p = data + static_cast<size_t>(r) * d.stride + t;
    log_post[r] = DevLog(*p);
    *p -= Real(1);
  }
}

// Blocks of LaunchCompObjfAndDeriv's first kernel; each leaves two double partials in d_work.
constexpr int kObjfBlocks = kCuReduceMaxBlocks;

template <typename Real>
__global__ void CompObjfKernel(MatrixDim d, const CuWeightedElement<Real>* elements, int64_t n,
                               const Real* a, int32_t a_stride, Real* deriv, double* partials) {
  __shared__ double sh[kRowWarps];
  double objf = 0, weight = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const CuWeightedElement<Real> e = elements[i];
    const Real x = a[static_cast<size_t>(e.row) * a_stride + e.column];
    objf += static_cast<double>(e.weight) * log(static_cast<double>(x));
    weight += static_cast<double>(e.weight);
    // Elements may repeat, so several threads can add to one entry.
    atomicAdd(deriv + static_cast<size_t>(e.row) * d.stride + e.column, e.weight / x);
  }
  objf = BlockReduce(objf, SumOp(), sh);
  weight = BlockReduce(weight, SumOp(), sh);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = objf;
    partials[2 * blockIdx.x + 1] = weight;
  }
}

// One thread adds the block partials in block order (deterministic) into result[0..1].
__global__ void CompObjfCombineKernel(int num_blocks, const double* partials, double* result) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  double objf = 0, weight = 0;
  for (int b = 0; b < num_blocks; ++b) {
    objf += partials[2 * b];
    weight += partials[2 * b + 1];
  }
  result[0] = objf;
  result[1] = weight;
}

template <typename Real>
__global__ void ParametricReluKernel(MatrixDim d, const Real* value, int32_t value_stride,
                                     const Real* diff, int32_t diff_stride, const Real* alpha,
                                     const Real* beta, bool deriv, Real* dst) {
  ForEachElement(d, [&](int32_t r, int32_t c) {
    const Real x = value[static_cast<size_t>(r) * value_stride + c];
    const Real scale = x > 0 ? alpha[c] : beta[c];
    const Real base = deriv ? diff[static_cast<size_t>(r) * diff_stride + c] : x;
    dst[static_cast<size_t>(r) * d.stride + c] = base * scale;
  });
}

// Units (vectors or elements) per thread of the cached kernels: rows of up to kWarpUnits * 32
// units get a warp each, longer ones a block of kRowThreads. Beyond kMaxVectorUnits /
// kMaxScalarUnits units per thread (at most 64 registers of data for the two inputs) the two-pass
// kernel takes over: rows over 8192 floats or 4096 doubles (4096 of either when the operands are
// not all 16-byte aligned).
constexpr int kWarpUnits = 4;
constexpr int kMaxVectorUnits = 8;
constexpr int kMaxScalarUnits = 16;

// Launches the cached kernel with the fewest units per thread (a power of two) that covers
// `units`; the caller keeps `units` within the kernel's limit.
template <typename Real, bool kLog, int kThreadsPerRow, bool kVector, int kUnits = 1>
void LaunchDiffSoftmaxCached(MatrixDim d, const Real* value, int32_t vs, const Real* diff,
                             int32_t ds, Real* dst, int32_t units, CuStream stream) {
  constexpr int kMax =
      kThreadsPerRow == 32 ? kWarpUnits : (kVector ? kMaxVectorUnits : kMaxScalarUnits);
  if constexpr (kUnits < kMax) {
    if (units > kUnits) {
      LaunchDiffSoftmaxCached<Real, kLog, kThreadsPerRow, kVector, 2 * kUnits>(
          d, value, vs, diff, ds, dst, units, stream);
      return;
    }
  }
  internal::Launch<DiffSoftmaxCachedKernel<Real, kLog, kThreadsPerRow, kUnits, kVector>>(
      CUCTX_LAUNCH_SITE("DiffSoftmaxCachedKernel<Real, kLog, kThreadsPerRow, kUnits, kVector>"),
      RowGrid(d.rows, kThreadsPerRow == 32), kRowThreads, 0, stream, d, value, vs, diff, ds, dst);
}

template <typename Real, bool kLog, bool kVector>
void DiffSoftmaxCached(MatrixDim d, const Real* value, int32_t vs, const Real* diff, int32_t ds,
                       Real* dst, int32_t nvec, CuStream stream) {
  if (nvec <= kWarpUnits * 32) {
    LaunchDiffSoftmaxCached<Real, kLog, 32, kVector>(d, value, vs, diff, ds, dst, (nvec + 31) / 32,
                                                     stream);
  } else {
    LaunchDiffSoftmaxCached<Real, kLog, kRowThreads, kVector>(
        d, value, vs, diff, ds, dst, (nvec + kRowThreads - 1) / kRowThreads, stream);
  }
}

template <typename Real, bool kLog>
void DiffSoftmaxRowsOf(MatrixDim d, const Real* value, int32_t vs, const Real* diff, int32_t ds,
                       Real* dst, CuStream stream) {
  const bool vector = internal::RowsAligned16(value, vs) && internal::RowsAligned16(diff, ds) &&
                      internal::RowsAligned16(dst, d.stride);
  if (vector) {
    const int32_t nvec = d.cols / internal::Vec16<Real>::kLanes;
    if (nvec <= kMaxVectorUnits * kRowThreads) {
      DiffSoftmaxCached<Real, kLog, true>(d, value, vs, diff, ds, dst, nvec, stream);
      return;
    }
  } else if (d.cols <= kMaxScalarUnits * kRowThreads) {
    DiffSoftmaxCached<Real, kLog, false>(d, value, vs, diff, ds, dst, d.cols, stream);
    return;
  }
  const bool warp = d.cols <= kWarpRowMaxCols;
  const unsigned grid = RowGrid(d.rows, warp);
  if (warp)
    internal::Launch<DiffSoftmaxRowsKernel<Real, kLog, 32>>(
        CUCTX_LAUNCH_SITE("DiffSoftmaxRowsKernel<Real, kLog, 32>"), grid, kRowThreads, 0, stream, d,
        value, vs, diff, ds, dst);
  else
    internal::Launch<DiffSoftmaxRowsKernel<Real, kLog, kRowThreads>>(
        CUCTX_LAUNCH_SITE("DiffSoftmaxRowsKernel<Real, kLog, kRowThreads>"), grid, kRowThreads, 0,
        stream, d, value, vs, diff, ds, dst);
}

// The cached kernels move the 3 matrix sizes the op needs (each input read once, the output
// written once); the two-pass kernel reads both inputs twice, the second time from L2 at best.
template <typename Real>
void DiffSoftmaxRows(MatrixDim d, const Real* value, int32_t vs, const Real* diff, int32_t ds,
                     bool log_softmax, Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  if (log_softmax)
    DiffSoftmaxRowsOf<Real, true>(d, value, vs, diff, ds, dst, stream);
  else
    DiffSoftmaxRowsOf<Real, false>(d, value, vs, diff, ds, dst, stream);
}

template <typename Real>
void GroupReduce(MatrixDim d, const Real* src, int32_t ss, int32_t group, bool max, Real power,
                 Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  if (group >= kWarpGroupMin) {
    constexpr int kThreads = 256;
    const int64_t warps_wanted = static_cast<int64_t>(d.rows) * d.cols;
    const int64_t blocks =
        std::min<int64_t>((warps_wanted + kThreads / 32 - 1) / (kThreads / 32), int64_t{65535});
    internal::Launch<GroupReduceWarpKernel<Real>>(CUCTX_LAUNCH_SITE("GroupReduceWarpKernel"),
                                                  static_cast<unsigned>(blocks), kThreads, 0,
                                                  stream, d, src, ss, group, max, power, dst);
    return;
  }
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<GroupReduceKernel<Real>>(CUCTX_LAUNCH_SITE("GroupReduceKernel"), s.grid, s.block,
                                            0, stream, d, src, ss, group, max, power, dst);
}

template <typename Real>
void GroupReduceDeriv(MatrixDim d, const Real* in, int32_t is, const Real* out, int32_t os,
                      const Real* out_deriv, int32_t ods, int32_t group, bool max, Real power,
                      Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  constexpr int32_t w = internal::Vec16<Real>::kLanes;
  if (group % w == 0 && internal::RowsAligned16(in, is) && internal::RowsAligned16(dst, d.stride)) {
    const MatrixDim vec_dim{d.rows, d.cols / w, 0};
    const internal::ElementwiseShape s = internal::MakeElementwiseShape(vec_dim);
    internal::Launch<GroupReduceDerivVecKernel<Real>>(
        CUCTX_LAUNCH_SITE("GroupReduceDerivVecKernel"), s.grid, s.block, 0, stream, vec_dim, in, is,
        out, os, out_deriv, ods, group, max, power, dst, d.stride);
    return;
  }
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<GroupReduceDerivKernel<Real>>(CUCTX_LAUNCH_SITE("GroupReduceDerivKernel"),
                                                 s.grid, s.block, 0, stream, d, in, is, out, os,
                                                 out_deriv, ods, group, max, power, dst);
}

template <typename Real>
void DiffXent(MatrixDim d, const int32_t* tgt, Real* data, Real* log_post, CuStream stream) {
  if (d.rows == 0) return;
  const int64_t blocks = (static_cast<int64_t>(d.rows) + kRowThreads - 1) / kRowThreads;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
  internal::Launch<DiffXentKernel<Real>>(CUCTX_LAUNCH_SITE("DiffXentKernel"), grid, kRowThreads, 0,
                                         stream, d, tgt, data, log_post);
}

template <typename Real>
void CompObjf(MatrixDim d, const CuWeightedElement<Real>* elements, int64_t n, const Real* a,
              int32_t a_stride, Real* deriv, void* d_work, CuStream stream) {
  // Layout of d_work: the result (2 doubles), then 2 partials per block.
  double* result = static_cast<double*>(d_work);
  double* partials = result + 2;
  const int64_t want = (n + kRowThreads - 1) / kRowThreads;
  const int blocks = static_cast<int>(want < 1 ? 1 : (want < kObjfBlocks ? want : kObjfBlocks));
  internal::Launch<CompObjfKernel<Real>>(CUCTX_LAUNCH_SITE("CompObjfKernel"), blocks, kRowThreads,
                                         0, stream, d, elements, n, a, a_stride, deriv, partials);
  internal::Launch<CompObjfCombineKernel>(CUCTX_LAUNCH_SITE("CompObjfCombineKernel"), 1, 32, 0,
                                          stream, blocks, partials, result);
}

template <typename Real>
void ParametricRelu(MatrixDim d, const Real* value, int32_t vs, const Real* diff, int32_t ds,
                    const Real* alpha, const Real* beta, bool deriv, Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<ParametricReluKernel<Real>>(CUCTX_LAUNCH_SITE("ParametricReluKernel"), s.grid,
                                               s.block, 0, stream, d, value, vs, diff, ds, alpha,
                                               beta, deriv, dst);
}

}  // namespace

void LaunchDiffSoftmaxRows(MatrixDim d, const float* value, int32_t vs, const float* diff,
                           int32_t ds, bool log_softmax, float* dst, CuStream st) {
  DiffSoftmaxRows(d, value, vs, diff, ds, log_softmax, dst, st);
}
void LaunchDiffSoftmaxRows(MatrixDim d, const double* value, int32_t vs, const double* diff,
                           int32_t ds, bool log_softmax, double* dst, CuStream st) {
  DiffSoftmaxRows(d, value, vs, diff, ds, log_softmax, dst, st);
}
void LaunchGroupReduce(MatrixDim d, const float* src, int32_t ss, int32_t group, bool max,
                       float power, float* dst, CuStream st) {
  GroupReduce(d, src, ss, group, max, power, dst, st);
}
void LaunchGroupReduce(MatrixDim d, const double* src, int32_t ss, int32_t group, bool max,
                       double power, double* dst, CuStream st) {
  GroupReduce(d, src, ss, group, max, power, dst, st);
}
void LaunchGroupReduceDeriv(MatrixDim d, const float* in, int32_t is, const float* out, int32_t os,
                            const float* out_deriv, int32_t ods, int32_t group, bool max,
                            float power, float* dst, CuStream st) {
  GroupReduceDeriv(d, in, is, out, os, out_deriv, ods, group, max, power, dst, st);
}
void LaunchGroupReduceDeriv(MatrixDim d, const double* in, int32_t is, const double* out,
                            int32_t os, const double* out_deriv, int32_t ods, int32_t group,
                            bool max, double power, double* dst, CuStream st) {
  GroupReduceDeriv(d, in, is, out, os, out_deriv, ods, group, max, power, dst, st);
}
void LaunchDiffXent(MatrixDim d, const int32_t* tgt, float* data, float* log_post, CuStream st) {
  DiffXent(d, tgt, data, log_post, st);
}
void LaunchDiffXent(MatrixDim d, const int32_t* tgt, double* data, double* log_post, CuStream st) {
  DiffXent(d, tgt, data, log_post, st);
}
size_t CompObjfWorkspaceBytes() { return (2 + 2 * static_cast<size_t>(kObjfBlocks)) * 8; }
void LaunchCompObjfAndDeriv(MatrixDim d, const CuWeightedElement<float>* e, int64_t n,
                            const float* a, int32_t as, float* deriv, void* work, CuStream st) {
  CompObjf(d, e, n, a, as, deriv, work, st);
}
void LaunchCompObjfAndDeriv(MatrixDim d, const CuWeightedElement<double>* e, int64_t n,
                            const double* a, int32_t as, double* deriv, void* work, CuStream st) {
  CompObjf(d, e, n, a, as, deriv, work, st);
}
void LaunchParametricRelu(MatrixDim d, const float* value, int32_t vs, const float* diff,
                          int32_t ds, const float* alpha, const float* beta, bool deriv, float* dst,
                          CuStream st) {
  ParametricRelu(d, value, vs, diff, ds, alpha, beta, deriv, dst, st);
}
void LaunchParametricRelu(MatrixDim d, const double* value, int32_t vs, const double* diff,
                          int32_t ds, const double* alpha, const double* beta, bool deriv,
                          double* dst, CuStream st) {
  ParametricRelu(d, value, vs, diff, ds, alpha, beta, deriv, dst, st);
}

}  // namespace cuctx
