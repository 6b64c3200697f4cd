// cudamatrix/cu-kernels-nnet-diff.cu: neural-net back-propagation (softmax, group norms, group
// max, parametric ReLU), cross-entropy gradient and weighted log-likelihood objective.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/cu-row-reduce.cuh"
#include "cudamatrix/internal/cu-kernels.h"

#include <cmath>

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

template <typename Real>
__global__ void GroupReduceDerivKernel(MatrixDim d, const Real* in, int32_t in_stride,
                                       const Real* out, int32_t out_stride, const Real* out_deriv,
                                       int32_t out_deriv_stride, int32_t group, bool max,
                                       Real power, Real* dst) {
  const bool inf = isinf(power);
  ForEachElement(d, [&](int32_t r, int32_t c) {
    const Real x = in[static_cast<size_t>(r) * in_stride + c];
    const int32_t g = c / group;
    const Real y = out[static_cast<size_t>(r) * out_stride + g];
    Real v;
    if (max) {
      v = x == y ? Real(1) : Real(0);
    } else {
      Real dydx;
      if (power == 1)
        dydx = Sign(x);
      else if (inf)
        dydx = DevAbs(x) == y ? Sign(x) : Real(0);  // 0 for an all-zero group, as Kaldi
      else if (y == 0)
        dydx = 0;
      else
        dydx = Sign(x) * DevPow(DevAbs(x), power - 1) * DevPow(y, 1 - power);
      v = dydx * out_deriv[static_cast<size_t>(r) * out_deriv_stride + g];
    }
    dst[static_cast<size_t>(r) * d.stride + c] = v;
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

template <typename Real>
void DiffSoftmaxRows(MatrixDim d, const Real* value, int32_t vs, const Real* diff, int32_t ds,
                     bool log_softmax, Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  const bool warp = d.cols <= kWarpRowMaxCols;
  const unsigned grid = RowGrid(d.rows, warp);
  if (log_softmax && warp)
    DiffSoftmaxRowsKernel<Real, true, 32>
        <<<grid, kRowThreads, 0, stream>>>(d, value, vs, diff, ds, dst);
  else if (log_softmax)
    DiffSoftmaxRowsKernel<Real, true, kRowThreads>
        <<<grid, kRowThreads, 0, stream>>>(d, value, vs, diff, ds, dst);
  else if (warp)
    DiffSoftmaxRowsKernel<Real, false, 32>
        <<<grid, kRowThreads, 0, stream>>>(d, value, vs, diff, ds, dst);
  else
    DiffSoftmaxRowsKernel<Real, false, kRowThreads>
        <<<grid, kRowThreads, 0, stream>>>(d, value, vs, diff, ds, dst);
  CUCTX_CUDA_CHECK_LAUNCH("DiffSoftmaxRowsKernel");
}

template <typename Real>
void GroupReduce(MatrixDim d, const Real* src, int32_t ss, int32_t group, bool max, Real power,
                 Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  GroupReduceKernel<<<s.grid, s.block, 0, stream>>>(d, src, ss, group, max, power, dst);
  CUCTX_CUDA_CHECK_LAUNCH("GroupReduceKernel");
}

template <typename Real>
void GroupReduceDeriv(MatrixDim d, const Real* in, int32_t is, const Real* out, int32_t os,
                      const Real* out_deriv, int32_t ods, int32_t group, bool max, Real power,
                      Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  GroupReduceDerivKernel<<<s.grid, s.block, 0, stream>>>(d, in, is, out, os, out_deriv, ods, group,
                                                         max, power, dst);
  CUCTX_CUDA_CHECK_LAUNCH("GroupReduceDerivKernel");
}

template <typename Real>
void DiffXent(MatrixDim d, const int32_t* tgt, Real* data, Real* log_post, CuStream stream) {
  if (d.rows == 0) return;
  const int64_t blocks = (static_cast<int64_t>(d.rows) + kRowThreads - 1) / kRowThreads;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
  DiffXentKernel<<<grid, kRowThreads, 0, stream>>>(d, tgt, data, log_post);
  CUCTX_CUDA_CHECK_LAUNCH("DiffXentKernel");
}

template <typename Real>
void CompObjf(MatrixDim d, const CuWeightedElement<Real>* elements, int64_t n, const Real* a,
              int32_t a_stride, Real* deriv, void* d_work, CuStream stream) {
  // Layout of d_work: the result (2 doubles), then 2 partials per block.
  double* result = static_cast<double*>(d_work);
  double* partials = result + 2;
  const int64_t want = (n + kRowThreads - 1) / kRowThreads;
  const int blocks = static_cast<int>(want < 1 ? 1 : (want < kObjfBlocks ? want : kObjfBlocks));
  CompObjfKernel<<<blocks, kRowThreads, 0, stream>>>(d, elements, n, a, a_stride, deriv, partials);
  CUCTX_CUDA_CHECK_LAUNCH("CompObjfKernel");
  CompObjfCombineKernel<<<1, 32, 0, stream>>>(blocks, partials, result);
  CUCTX_CUDA_CHECK_LAUNCH("CompObjfCombineKernel");
}

template <typename Real>
void ParametricRelu(MatrixDim d, const Real* value, int32_t vs, const Real* diff, int32_t ds,
                    const Real* alpha, const Real* beta, bool deriv, Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  ParametricReluKernel<<<s.grid, s.block, 0, stream>>>(d, value, vs, diff, ds, alpha, beta, deriv,
                                                       dst);
  CUCTX_CUDA_CHECK_LAUNCH("ParametricReluKernel");
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
