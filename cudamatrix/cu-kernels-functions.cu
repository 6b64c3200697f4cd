// cudamatrix/cu-kernels-functions.cu: element-wise functions, vector broadcasts, block sums and
// whole-matrix reductions (max, min, trace, identity test).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

using internal::MapInput;

using internal::DevExp;
using internal::DevPow;

// The comparisons below are written as std::max(x, y) == (x < y ? y : x) and std::min(x, y) ==
// (y < x ? y : x), so NaNs propagate exactly as on the CPU.
template <typename Real>
__device__ inline Real StdMax(Real x, Real y) {
  return x < y ? y : x;
}
template <typename Real>
__device__ inline Real StdMin(Real x, Real y) {
  return y < x ? y : x;
}

// ---- element-wise maps: op(&dst, src) -----------------------------------------------------------

template <typename Real>
struct MaxOp {
  __device__ void operator()(Real* d, Real x) const { *d = StdMax(*d, x); }
};
template <typename Real>
struct MinOp {
  __device__ void operator()(Real* d, Real x) const { *d = StdMin(*d, x); }
};
template <typename Real>
struct InvertOp {
  __device__ void operator()(Real* d, Real x) const { *d = Real(1) / x; }
};
template <typename Real>
struct PowOp {
  Real power;
  // Squares and identity skip pow (exact, and several times cheaper in double).
  __device__ void operator()(Real* d, Real x) const {
    *d = power == Real(2) ? x * x : power == Real(1) ? x : DevPow(x, power);
  }
};
template <typename Real>
struct PowAbsOp {
  Real power;
  bool include_sign;
  __device__ void operator()(Real* d, Real x) const {
    if (x == 0) {
      *d = power == 0 ? Real(1) : Real(0);
      return;
    }
    const Real y = DevPow(x < 0 ? -x : x, power);
    *d = include_sign && x < 0 ? -y : y;
  }
};
template <typename Real>
struct HeavisideOp {
  __device__ void operator()(Real* d, Real x) const { *d = x > 0 ? Real(1) : Real(0); }
};
template <typename Real>
struct FloorOp {
  Real floor_val;
  __device__ void operator()(Real* d, Real x) const { *d = StdMax(x, floor_val); }
};
template <typename Real>
struct CeilingOp {
  Real ceiling_val;
  __device__ void operator()(Real* d, Real x) const { *d = StdMin(x, ceiling_val); }
};
template <typename Real>
struct ExpLimitedOp {
  Real lower, upper;
  __device__ void operator()(Real* d, Real x) const {
    *d = DevExp(StdMin(StdMax(x, lower), upper));
  }
};
template <typename Real>
struct ExpSpecialOp {
  __device__ void operator()(Real* d, Real x) const { *d = x < 0 ? DevExp(x) : x + 1; }
};

template <typename Real, typename Op>
void LaunchMap(MatrixDim d, const Real* src, int32_t src_stride, Op op, Real* dst,
               CuStream stream) {
  internal::LaunchBinaryMap(d, src, src_stride, op, dst, stream, "BinaryMapKernel(function map)");
}

template <typename Real>
void FunctionMapImpl(MatrixDim d, FunctionMap map, Real a, Real b, const Real* src,
                     int32_t src_stride, Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  // One kernel instantiation per map, so each inner loop holds only its own arithmetic.
  switch (map) {
    case FunctionMap::kMax:
      return LaunchMap(d, src, src_stride, MaxOp<Real>{}, dst, stream);
    case FunctionMap::kMin:
      return LaunchMap(d, src, src_stride, MinOp<Real>{}, dst, stream);
    case FunctionMap::kInvert:
      return LaunchMap(d, src, src_stride, InvertOp<Real>{}, dst, stream);
    case FunctionMap::kPow:
      return LaunchMap(d, src, src_stride, PowOp<Real>{a}, dst, stream);
    case FunctionMap::kPowAbs:
      return LaunchMap(d, src, src_stride, PowAbsOp<Real>{a, b != 0}, dst, stream);
    case FunctionMap::kHeaviside:
      return LaunchMap(d, src, src_stride, HeavisideOp<Real>{}, dst, stream);
    case FunctionMap::kFloor:
      return LaunchMap(d, src, src_stride, FloorOp<Real>{a}, dst, stream);
    case FunctionMap::kCeiling:
      return LaunchMap(d, src, src_stride, CeilingOp<Real>{a}, dst, stream);
    case FunctionMap::kExpLimited:
      return LaunchMap(d, src, src_stride, ExpLimitedOp<Real>{a, b}, dst, stream);
    case FunctionMap::kExpSpecial:
      return LaunchMap(d, src, src_stride, ExpSpecialOp<Real>{}, dst, stream);
  }
}

// ---- vector broadcasts and block sums: op(&dst, r, c) -------------------------------------------

template <typename Real, VecBroadcast kOp>
struct BroadcastOp {
  Real alpha, beta;
  const Real* v;
  __device__ void operator()(Real* d, int32_t r, int32_t c) const {
    switch (kOp) {
      case VecBroadcast::kMulCols:
        *d *= v[c];
        break;
      case VecBroadcast::kMulRows:
        *d *= v[r];
        break;
      case VecBroadcast::kDivRows:
        // The row's reciprocal times the element, as Kaldi's kernel does. With a division per
        // element a 1024 x 1024 float DivRowsVec took 5.31 us against Kaldi's 2.82 (H200, run
        // ktrace-2; the division has a slow path for operands such as infinities and
        // subnormals, which repeated in-place divisions reach); now 2.34 against 2.85 (run
        // ktrace-3). The lanes of one row share the reciprocal. Within 1.5 ulp of x / v.
        *d *= Real(1) / v[r];
        break;
      case VecBroadcast::kAddToRows:
        *d = beta * *d + alpha * v[c];
        break;
      case VecBroadcast::kAddToCols:
        *d = beta * *d + alpha * v[r];
        break;
    }
  }
};

template <typename Real, typename Op>
void LaunchIndexed(MatrixDim d, Op op, Real* dst, CuStream stream) {
  internal::LaunchIndexedMap(d, op, dst, stream, "IndexedMapKernel");
}

template <typename Real, VecBroadcast kOp>
void Broadcast(MatrixDim d, Real alpha, const Real* v, Real beta, Real* dst, CuStream stream) {
  LaunchIndexed(d, BroadcastOp<Real, kOp>{alpha, beta, v}, dst, stream);
}

template <typename Real>
void VecBroadcastImpl(MatrixDim d, VecBroadcast op, Real alpha, const Real* v, Real beta, Real* dst,
                      CuStream stream) {
  switch (op) {
    case VecBroadcast::kMulCols:
      return Broadcast<Real, VecBroadcast::kMulCols>(d, alpha, v, beta, dst, stream);
    case VecBroadcast::kMulRows:
      return Broadcast<Real, VecBroadcast::kMulRows>(d, alpha, v, beta, dst, stream);
    case VecBroadcast::kDivRows:
      return Broadcast<Real, VecBroadcast::kDivRows>(d, alpha, v, beta, dst, stream);
    case VecBroadcast::kAddToRows:
      return Broadcast<Real, VecBroadcast::kAddToRows>(d, alpha, v, beta, dst, stream);
    case VecBroadcast::kAddToCols:
      return Broadcast<Real, VecBroadcast::kAddToCols>(d, alpha, v, beta, dst, stream);
  }
}

template <typename Real>
struct MulRowsGroupOp {
  const Real* src;
  int32_t src_stride, group;
  __device__ void operator()(Real* d, int32_t r, int32_t c) const {
    *d *= src[static_cast<size_t>(r) * src_stride + c / group];
  }
};

// Element (i, j) of op(a).
template <typename Real>
__device__ inline Real OpAt(const Real* a, int32_t stride, bool trans, int32_t i, int32_t j) {
  return trans ? a[static_cast<size_t>(j) * stride + i] : a[static_cast<size_t>(i) * stride + j];
}

// dst(r, c) += alpha * op(a)(r + i * rows, c + j * cols) over the blocks (i, j), in the CPU's
// order (block rows outer), one addition at a time.
template <typename Real>
struct SumBlocksOp {
  Real alpha;
  const Real* a;
  int32_t a_stride;
  bool trans;
  int32_t rows, cols, block_rows, block_cols;
  __device__ void operator()(Real* d, int32_t r, int32_t c) const {
    Real x = *d;
    for (int32_t i = 0; i < block_rows; ++i)
      for (int32_t j = 0; j < block_cols; ++j)
        x += alpha * OpAt(a, a_stride, trans, r + i * rows, c + j * cols);
    *d = x;
  }
};

// dst(r, c) += alpha * op(a)(r % a_rows, c % a_cols).
template <typename Real>
struct TileBlocksOp {
  Real alpha;
  const Real* a;
  int32_t a_stride;
  bool trans;
  int32_t a_rows, a_cols;
  __device__ void operator()(Real* d, int32_t r, int32_t c) const {
    *d += alpha * OpAt(a, a_stride, trans, r % a_rows, c % a_cols);
  }
};

template <typename Real>
void AddMatBlocksImpl(MatrixDim d, Real alpha, const Real* a, MatrixDim a_dim, bool trans,
                      bool sum_blocks, Real* dst, CuStream stream) {
  const int32_t a_rows = trans ? a_dim.cols : a_dim.rows, a_cols = trans ? a_dim.rows : a_dim.cols;
  if (a_rows == 0 || a_cols == 0) return;
  if (sum_blocks)
    LaunchIndexed(d,
                  SumBlocksOp<Real>{alpha, a, a_dim.stride, trans, d.rows, d.cols, a_rows / d.rows,
                                    a_cols / d.cols},
                  dst, stream);
  else
    LaunchIndexed(d, TileBlocksOp<Real>{alpha, a, a_dim.stride, trans, a_rows, a_cols}, dst,
                  stream);
}

// ---- maps over several inputs: op(&dst, a, b[, c]) ----------------------------------------------

template <typename Real>
struct AddMatMatElementsOp {
  Real alpha, beta;
  __device__ void operator()(Real* d, Real a, Real b) const { *d = beta * *d + alpha * a * b; }
};
template <typename Real>
struct MatMatDivMatOp {
  __device__ void operator()(Real* d, Real a, Real b, Real c) const { *d = c != 0 ? a * b / c : a; }
};

template <typename Real, typename Op, typename... In>
void LaunchNary(MatrixDim d, Op op, Real* dst, CuStream stream, MapInput<In>... in) {
  if (d.rows == 0 || d.cols == 0) return;
  internal::CollapseAllIfContiguous(&d, &in...);
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<internal::NaryMapKernel<Real, Op, In...>>(
      CUCTX_LAUNCH_SITE("NaryMapKernel"), s.grid, s.block, 0, stream, d, op, dst, in...);
}

// ---- diagonal -----------------------------------------------------------------------------------

// The diagonal of a matrix as a column: n rows of one element, stride + 1 apart.
MatrixDim DiagDim(MatrixDim d) {
  return MatrixDim{d.rows < d.cols ? d.rows : d.cols, 1, d.stride + 1};
}

template <typename Real>
struct AddScalarOp {
  Real alpha;
  __device__ void operator()(Real* d) const { *d += alpha; }
};

template <typename Real>
void AddToDiagImpl(MatrixDim d, Real alpha, Real* data, CuStream stream) {
  const MatrixDim diag = DiagDim(d);
  if (diag.rows == 0) return;
  // One thread per diagonal element: a 1D block down the column.
  const int64_t blocks =
      (static_cast<int64_t>(diag.rows) + kCuElementwiseThreads - 1) / kCuElementwiseThreads;
  const dim3 grid(1, static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 1);
  internal::Launch<internal::UnaryMapKernel<Real, AddScalarOp<Real>>>(
      CUCTX_LAUNCH_SITE("UnaryMapKernel(add to diagonal)"), grid, dim3(1, kCuElementwiseThreads, 1),
      0, stream, diag, AddScalarOp<Real>{alpha}, data);
}

}  // namespace

void LaunchFunctionMap(MatrixDim d, FunctionMap map, float a, float b, const float* src, int32_t ss,
                       float* dst, CuStream st) {
  FunctionMapImpl(d, map, a, b, src, ss, dst, st);
}
void LaunchFunctionMap(MatrixDim d, FunctionMap map, double a, double b, const double* src,
                       int32_t ss, double* dst, CuStream st) {
  FunctionMapImpl(d, map, a, b, src, ss, dst, st);
}
void LaunchVecBroadcast(MatrixDim d, VecBroadcast op, float alpha, const float* v, float beta,
                        float* dst, CuStream st) {
  VecBroadcastImpl(d, op, alpha, v, beta, dst, st);
}
void LaunchVecBroadcast(MatrixDim d, VecBroadcast op, double alpha, const double* v, double beta,
                        double* dst, CuStream st) {
  VecBroadcastImpl(d, op, alpha, v, beta, dst, st);
}
void LaunchMulRowsGroupMat(MatrixDim d, const float* src, int32_t ss, int32_t group, float* dst,
                           CuStream st) {
  LaunchIndexed(d, MulRowsGroupOp<float>{src, ss, group}, dst, st);
}
void LaunchMulRowsGroupMat(MatrixDim d, const double* src, int32_t ss, int32_t group, double* dst,
                           CuStream st) {
  LaunchIndexed(d, MulRowsGroupOp<double>{src, ss, group}, dst, st);
}
void LaunchAddMatBlocks(MatrixDim d, float alpha, const float* a, MatrixDim a_dim, bool trans,
                        bool sum_blocks, float* dst, CuStream st) {
  AddMatBlocksImpl(d, alpha, a, a_dim, trans, sum_blocks, dst, st);
}
void LaunchAddMatBlocks(MatrixDim d, double alpha, const double* a, MatrixDim a_dim, bool trans,
                        bool sum_blocks, double* dst, CuStream st) {
  AddMatBlocksImpl(d, alpha, a, a_dim, trans, sum_blocks, dst, st);
}
void LaunchAddMatMatElements(MatrixDim d, float alpha, const float* a, int32_t as, const float* b,
                             int32_t bs, float beta, float* dst, CuStream st) {
  LaunchNary(d, AddMatMatElementsOp<float>{alpha, beta}, dst, st, MapInput<float>{a, as},
             MapInput<float>{b, bs});
}
void LaunchAddMatMatElements(MatrixDim d, double alpha, const double* a, int32_t as,
                             const double* b, int32_t bs, double beta, double* dst, CuStream st) {
  LaunchNary(d, AddMatMatElementsOp<double>{alpha, beta}, dst, st, MapInput<double>{a, as},
             MapInput<double>{b, bs});
}
void LaunchSetMatMatDivMat(MatrixDim d, const float* a, int32_t as, const float* b, int32_t bs,
                           const float* c, int32_t cs, float* dst, CuStream st) {
  LaunchNary(d, MatMatDivMatOp<float>{}, dst, st, MapInput<float>{a, as}, MapInput<float>{b, bs},
             MapInput<float>{c, cs});
}
void LaunchSetMatMatDivMat(MatrixDim d, const double* a, int32_t as, const double* b, int32_t bs,
                           const double* c, int32_t cs, double* dst, CuStream st) {
  LaunchNary(d, MatMatDivMatOp<double>{}, dst, st, MapInput<double>{a, as}, MapInput<double>{b, bs},
             MapInput<double>{c, cs});
}
void LaunchAddToDiag(MatrixDim d, float alpha, float* data, CuStream st) {
  AddToDiagImpl(d, alpha, data, st);
}
void LaunchAddToDiag(MatrixDim d, double alpha, double* data, CuStream st) {
  AddToDiagImpl(d, alpha, data, st);
}

}  // namespace cuctx
