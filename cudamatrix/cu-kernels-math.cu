// cudamatrix/cu-kernels-math.cu: kernels of the cu:: helpers (row/column gathers, splicing,
// EnsureNonzero, per-row RMS normalization and its derivative).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/cu-row-reduce.cuh"
#include "cudamatrix/internal/cu-kernels.h"

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

using internal::DevLog;
using internal::DevSqrt;
using internal::ForEachElement;
using internal::ForEachRow;
using internal::kRowThreads;
using internal::kRowWarps;
using internal::kWarpRowMaxCols;
using internal::RowGrid;
using internal::RowSum;

// 2^-66: the floor of the mean square, whose square root (2^-33) is exact in float and double.
template <typename Real>
__device__ Real SquaredNormFloor() {
  return Real(1.3552527156068805425e-20);
}

template <typename Real>
__global__ void GatherKernel(MatrixDim d, const Real* src, MatrixDim s, const int32_t* idx,
                             GatherKind kind, Real* dst) {
  ForEachElement(d, [&](int32_t r, int32_t c) {
    int64_t sr = r, sc = c;
    if (kind == GatherKind::kRandomize) {
      sr = idx[r];
    } else if (kind == GatherKind::kCopyCols) {
      sc = idx[c];
    } else {
      const int32_t k = c / s.cols;
      sc = c - static_cast<int64_t>(k) * s.cols;
      sr = static_cast<int64_t>(r) + idx[k];
      sr = sr < 0 ? 0 : (sr >= s.rows ? s.rows - 1 : sr);
    }
    // An index outside src leaves the element alone (the host checks indices only in CPU mode).
    if (sr < 0 || sr >= s.rows || sc < 0 || sc >= s.cols) return;
    dst[static_cast<size_t>(r) * d.stride + c] = src[static_cast<size_t>(sr) * s.stride + sc];
  });
}

template <typename Real>
struct EnsureNonzeroOp {
  Real epsilon;
  __device__ void operator()(Real* d, Real x) const {
    if (x <= -epsilon || x >= epsilon)
      *d = x;
    else
      *d = x >= 0 ? epsilon : -epsilon;
  }
};

template <typename Real, int kThreadsPerRow>
__global__ void NormalizeRowsKernel(MatrixDim d, const Real* in, Real target_rms,
                                    bool add_log_stddev, Real* out, int32_t out_stride) {
  __shared__ Real sh[kRowWarps];
  const Real d_scaled = static_cast<Real>(d.cols) * target_rms * target_rms;
  ForEachRow<kThreadsPerRow>(d.rows, [&](int32_t r, int lane) {
    const Real* x = in + static_cast<size_t>(r) * d.stride;
    Real* y = out + static_cast<size_t>(r) * out_stride;
    Real ss = 0;
    for (int32_t c = lane; c < d.cols; c += kThreadsPerRow) ss += x[c] * x[c];
    ss = RowSum<kThreadsPerRow>(ss, sh);
    Real p = d.cols > 0 ? ss / d_scaled : Real(0);
    p = p > SquaredNormFloor<Real>() ? p : SquaredNormFloor<Real>();
    const Real f = Real(1) / DevSqrt(p);
    // Reads of x happened before the reduction, so x may be y (in place).
    for (int32_t c = lane; c < d.cols; c += kThreadsPerRow) y[c] = x[c] * f;
    if (add_log_stddev && lane == 0) y[d.cols] = DevLog(target_rms) - DevLog(f);
  });
}

template <typename Real, int kThreadsPerRow>
__global__ void DiffNormalizeRowsKernel(MatrixDim d, const Real* in_value, const Real* out_deriv,
                                        int32_t od_stride, Real target_rms, bool add_log_stddev,
                                        Real* in_deriv, int32_t id_stride) {
  __shared__ Real sh[kRowWarps];
  const Real d_scaled = static_cast<Real>(d.cols) * target_rms * target_rms;
  const Real floor = SquaredNormFloor<Real>();
  ForEachRow<kThreadsPerRow>(d.rows, [&](int32_t r, int lane) {
    const Real* x = in_value + static_cast<size_t>(r) * d.stride;
    const Real* dy = out_deriv + static_cast<size_t>(r) * od_stride;
    Real* dx = in_deriv + static_cast<size_t>(r) * id_stride;
    Real ss = 0, dot = 0;
    for (int32_t c = lane; c < d.cols; c += kThreadsPerRow) {
      ss += x[c] * x[c];
      dot += dy[c] * x[c];
    }
    ss = RowSum<kThreadsPerRow>(ss, sh);
    dot = RowSum<kThreadsPerRow>(dot, sh);
    const Real p = d.cols > 0 ? ss / d_scaled : Real(0);
    const Real f = Real(1) / DevSqrt(p > floor ? p : floor);
    const Real coef = p > floor ? -f * f * f / d_scaled : Real(0);
    Real s = 0;
    if (add_log_stddev) {
      const Real denom_floor = static_cast<Real>(d.cols) * floor;
      s = dy[d.cols] / (ss > denom_floor ? ss : denom_floor);
    }
    const Real xs = coef * dot + s;
    // Every read of the row precedes the reductions' barriers (dx may be x or dy).
    for (int32_t c = lane; c < d.cols; c += kThreadsPerRow) dx[c] = f * dy[c] + xs * x[c];
  });
}

template <typename Real>
void Gather(MatrixDim d, const Real* src, MatrixDim s, const int32_t* idx, GatherKind kind,
            Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  const internal::ElementwiseShape sh = internal::MakeElementwiseShape(d);
  internal::Launch<GatherKernel<Real>>(CUCTX_LAUNCH_SITE("GatherKernel"), sh.grid, sh.block, 0,
                                       stream, d, src, s, idx, kind, dst);
}

template <typename Real>
void EnsureNonzero(MatrixDim d, const Real* src, int32_t src_stride, Real epsilon, Real* dst,
                   CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  internal::CollapseIfContiguous(&d, &src_stride);
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<internal::BinaryMapKernel<Real, Real, EnsureNonzeroOp<Real>>>(
      CUCTX_LAUNCH_SITE("BinaryMapKernel(EnsureNonzero)"), s.grid, s.block, 0, stream, d, src,
      src_stride, EnsureNonzeroOp<Real>{epsilon}, dst);
}

template <typename Real>
void NormalizeRows(MatrixDim d, const Real* in, Real target_rms, bool add_log_stddev, Real* out,
                   int32_t out_stride, CuStream stream) {
  if (d.rows == 0) return;
  const bool warp = d.cols <= kWarpRowMaxCols;
  const unsigned grid = RowGrid(d.rows, warp);
  if (warp)
    internal::Launch<NormalizeRowsKernel<Real, 32>>(
        CUCTX_LAUNCH_SITE("NormalizeRowsKernel<Real, 32>"), grid, kRowThreads, 0, stream, d, in,
        target_rms, add_log_stddev, out, out_stride);
  else
    internal::Launch<NormalizeRowsKernel<Real, kRowThreads>>(
        CUCTX_LAUNCH_SITE("NormalizeRowsKernel<Real, kRowThreads>"), grid, kRowThreads, 0, stream,
        d, in, target_rms, add_log_stddev, out, out_stride);
}

template <typename Real>
void DiffNormalizeRows(MatrixDim d, const Real* in_value, const Real* out_deriv, int32_t ods,
                       Real target_rms, bool add_log_stddev, Real* in_deriv, int32_t ids,
                       CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  const bool warp = d.cols <= kWarpRowMaxCols;
  const unsigned grid = RowGrid(d.rows, warp);
  if (warp)
    internal::Launch<DiffNormalizeRowsKernel<Real, 32>>(
        CUCTX_LAUNCH_SITE("DiffNormalizeRowsKernel<Real, 32>"), grid, kRowThreads, 0, stream, d,
        in_value, out_deriv, ods, target_rms, add_log_stddev, in_deriv, ids);
  else
    internal::Launch<DiffNormalizeRowsKernel<Real, kRowThreads>>(
        CUCTX_LAUNCH_SITE("DiffNormalizeRowsKernel<Real, kRowThreads>"), grid, kRowThreads, 0,
        stream, d, in_value, out_deriv, ods, target_rms, add_log_stddev, in_deriv, ids);
}

}  // namespace

void LaunchMathGather(MatrixDim d, const float* src, MatrixDim s, const int32_t* idx,
                      GatherKind kind, float* dst, CuStream st) {
  Gather(d, src, s, idx, kind, dst, st);
}
void LaunchMathGather(MatrixDim d, const double* src, MatrixDim s, const int32_t* idx,
                      GatherKind kind, double* dst, CuStream st) {
  Gather(d, src, s, idx, kind, dst, st);
}
void LaunchEnsureNonzero(MatrixDim d, const float* src, int32_t ss, float epsilon, float* dst,
                         CuStream st) {
  EnsureNonzero(d, src, ss, epsilon, dst, st);
}
void LaunchEnsureNonzero(MatrixDim d, const double* src, int32_t ss, double epsilon, double* dst,
                         CuStream st) {
  EnsureNonzero(d, src, ss, epsilon, dst, st);
}
void LaunchNormalizePerRow(MatrixDim d, const float* in, float target_rms, bool add_log_stddev,
                           float* out, int32_t out_stride, CuStream st) {
  NormalizeRows(d, in, target_rms, add_log_stddev, out, out_stride, st);
}
void LaunchNormalizePerRow(MatrixDim d, const double* in, double target_rms, bool add_log_stddev,
                           double* out, int32_t out_stride, CuStream st) {
  NormalizeRows(d, in, target_rms, add_log_stddev, out, out_stride, st);
}
void LaunchDiffNormalizePerRow(MatrixDim d, const float* in_value, const float* out_deriv,
                               int32_t ods, float target_rms, bool add_log_stddev, float* in_deriv,
                               int32_t ids, CuStream st) {
  DiffNormalizeRows(d, in_value, out_deriv, ods, target_rms, add_log_stddev, in_deriv, ids, st);
}
void LaunchDiffNormalizePerRow(MatrixDim d, const double* in_value, const double* out_deriv,
                               int32_t ods, double target_rms, bool add_log_stddev,
                               double* in_deriv, int32_t ids, CuStream st) {
  DiffNormalizeRows(d, in_value, out_deriv, ods, target_rms, add_log_stddev, in_deriv, ids, st);
}

}  // namespace cuctx
