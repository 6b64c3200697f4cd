// cudamatrix/cu-kernels-elementwise.cu: element-wise matrix kernels (scale, add, mul, div).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

template <typename Real>
struct ScaleOp {
  Real alpha;
  __device__ void operator()(Real* d) const { *d *= alpha; }
};
template <typename Real>
struct AddScalarOp {
  Real alpha;
  __device__ void operator()(Real* d) const { *d += alpha; }
};
template <typename Real>
struct AxpbyOp {
  Real alpha, beta;
  __device__ void operator()(Real* d, Real s) const { *d = alpha * s + beta * *d; }
};
template <typename Real>
struct MulOp {
  __device__ void operator()(Real* d, Real s) const { *d *= s; }
};
template <typename Real>
struct DivOp {
  __device__ void operator()(Real* d, Real s) const { *d /= s; }
};

template <typename Real, typename Op>
void Unary(MatrixDim d, Op op, Real* data, CuStream stream, const char* name) {
  internal::LaunchUnaryMap(d, op, data, stream, name);
}

template <typename Real, typename Op>
void Binary(MatrixDim d, const Real* src, int32_t src_stride, Op op, Real* dst, CuStream stream,
            const char* name) {
  internal::LaunchBinaryMap(d, src, src_stride, op, dst, stream, name);
}

template <typename Real>
void AddMat(MatrixDim d, Real alpha, const Real* src, int32_t src_stride, bool trans, Real beta,
            Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  if (!trans) {
    Binary(d, src, src_stride, AxpbyOp<Real>{alpha, beta}, dst, stream, "BinaryMapKernel(addmat)");
    return;
  }
  internal::LaunchTransposeMap(d, src, src_stride, AxpbyOp<Real>{alpha, beta}, dst, stream,
                               "TransposeMapKernel(addmat)");
}

}  // namespace

void LaunchScaleMat(MatrixDim d, float a, float* data, CuStream st) {
  Unary(d, ScaleOp<float>{a}, data, st, "UnaryMapKernel(scale)");
}
void LaunchScaleMat(MatrixDim d, double a, double* data, CuStream st) {
  Unary(d, ScaleOp<double>{a}, data, st, "UnaryMapKernel(scale)");
}
void LaunchAddScalarMat(MatrixDim d, float a, float* data, CuStream st) {
  Unary(d, AddScalarOp<float>{a}, data, st, "UnaryMapKernel(add)");
}
void LaunchAddScalarMat(MatrixDim d, double a, double* data, CuStream st) {
  Unary(d, AddScalarOp<double>{a}, data, st, "UnaryMapKernel(add)");
}
void LaunchAddMat(MatrixDim d, float alpha, const float* src, int32_t ss, bool trans, float beta,
                  float* dst, CuStream st) {
  AddMat(d, alpha, src, ss, trans, beta, dst, st);
}
void LaunchAddMat(MatrixDim d, double alpha, const double* src, int32_t ss, bool trans, double beta,
                  double* dst, CuStream st) {
  AddMat(d, alpha, src, ss, trans, beta, dst, st);
}
void LaunchMulElements(MatrixDim d, const float* src, int32_t ss, float* dst, CuStream st) {
  Binary(d, src, ss, MulOp<float>(), dst, st, "BinaryMapKernel(mul)");
}
void LaunchMulElements(MatrixDim d, const double* src, int32_t ss, double* dst, CuStream st) {
  Binary(d, src, ss, MulOp<double>(), dst, st, "BinaryMapKernel(mul)");
}
void LaunchDivElements(MatrixDim d, const float* src, int32_t ss, float* dst, CuStream st) {
  Binary(d, src, ss, DivOp<float>(), dst, st, "BinaryMapKernel(div)");
}
void LaunchDivElements(MatrixDim d, const double* src, int32_t ss, double* dst, CuStream st) {
  Binary(d, src, ss, DivOp<double>(), dst, st, "BinaryMapKernel(div)");
}

}  // namespace cuctx
