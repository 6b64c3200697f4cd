// cudamatrix/cu-kernels-blas.cu: the BLAS-family kernels cuBLAS has no exact match for
// (diagonal scalings with beta, element-wise vector products).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <algorithm>
#include <cstdint>

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

// dst(r, c) = beta * dst(r, c) + alpha * s * m(c, r), s = v[r] (by_rows) or v[c]: m is read with
// stride m_stride along dst's rows, in square blocks (MakeTransposedReadShape) so that each block
// uses whole sectors of m through L1.
template <typename Real>
__global__ void AddDiagScaledTransMatKernel(MatrixDim d, Real alpha, const Real* v, bool by_rows,
                                            const Real* m, int32_t m_stride, Real beta, Real* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    Real* drow = dst + static_cast<size_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      const Real in = m[static_cast<size_t>(c) * m_stride + r];
      drow[c] = beta * drow[c] + alpha * (by_rows ? v[r] : v[c]) * in;
    }
  }
}

// The same with m not transposed, as an indexed binary map (16-byte accesses to dst and m where
// their rows are aligned): the one-element-per-thread kernel took 4.96 us for a 1024 x 1024 float
// AddDiagVecMat against 3.94 us for Kaldi's (H200, run ktrace-2), this one 2.91 against 3.91 (run
// ktrace-3).
template <typename Real>
struct AddDiagScaledOp {
  static constexpr bool kIndexed = true;
  Real alpha, beta;
  const Real* v;
  bool by_rows;
  __device__ void operator()(Real* d, Real in, int32_t r, int32_t c) const {
    *d = beta * *d + alpha * (by_rows ? v[r] : v[c]) * in;
  }
};

template <typename Real>
void AddDiagScaledMat(MatrixDim d, Real alpha, const Real* v, bool by_rows, const Real* m,
                      int32_t m_stride, bool trans, Real beta, Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  if (!trans) {
    internal::LaunchBinaryMap(d, m, m_stride, AddDiagScaledOp<Real>{alpha, beta, v, by_rows}, dst,
                              stream, "AddDiagScaledMat");
    return;
  }
  const internal::ElementwiseShape s = internal::MakeTransposedReadShape(d);
  internal::Launch<AddDiagScaledTransMatKernel<Real>>(
      CUCTX_LAUNCH_SITE("AddDiagScaledTransMatKernel"), s.grid, s.block, 0, stream, d, alpha, v,
      by_rows, m, m_stride, beta, dst);
}

// dst[i] = beta * dst[i] + alpha * v[i] * r[i]; v or r may be dst (each thread reads its own
// element before writing it).
template <typename Real>
__global__ void AddVecVecKernel(int32_t dim, Real alpha, const Real* v, const Real* r, Real beta,
                                Real* dst) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < dim; i += gridDim.x * blockDim.x)
    dst[i] = beta * dst[i] + alpha * v[i] * r[i];
}

template <typename Real>
void AddVecVec(int32_t dim, Real alpha, const Real* v, const Real* r, Real beta, Real* dst,
               CuStream stream) {
  if (dim == 0) return;
  const int32_t blocks = static_cast<int32_t>(std::min<int64_t>(
      (static_cast<int64_t>(dim) + kCuElementwiseThreads - 1) / kCuElementwiseThreads, 65535));
  internal::Launch<AddVecVecKernel<Real>>(CUCTX_LAUNCH_SITE("AddVecVecKernel"), blocks,
                                          kCuElementwiseThreads, 0, stream, dim, alpha, v, r, beta,
                                          dst);
}

}  // namespace

void LaunchAddDiagVecMat(MatrixDim dst_dim, float alpha, const float* v, const float* m,
                         int32_t m_stride, bool trans, float beta, float* dst, CuStream stream) {
  AddDiagScaledMat(dst_dim, alpha, v, true, m, m_stride, trans, beta, dst, stream);
}
void LaunchAddDiagVecMat(MatrixDim dst_dim, double alpha, const double* v, const double* m,
                         int32_t m_stride, bool trans, double beta, double* dst, CuStream stream) {
  AddDiagScaledMat(dst_dim, alpha, v, true, m, m_stride, trans, beta, dst, stream);
}
void LaunchAddMatDiagVec(MatrixDim dst_dim, float alpha, const float* m, int32_t m_stride,
                         bool trans, const float* v, float beta, float* dst, CuStream stream) {
  AddDiagScaledMat(dst_dim, alpha, v, false, m, m_stride, trans, beta, dst, stream);
}
void LaunchAddMatDiagVec(MatrixDim dst_dim, double alpha, const double* m, int32_t m_stride,
                         bool trans, const double* v, double beta, double* dst, CuStream stream) {
  AddDiagScaledMat(dst_dim, alpha, v, false, m, m_stride, trans, beta, dst, stream);
}
void LaunchAddVecVec(int32_t dim, float alpha, const float* v, const float* r, float beta,
                     float* dst, CuStream stream) {
  AddVecVec(dim, alpha, v, r, beta, dst, stream);
}
void LaunchAddVecVec(int32_t dim, double alpha, const double* v, const double* r, double beta,
                     double* dst, CuStream stream) {
  AddVecVec(dim, alpha, v, r, beta, dst, stream);
}

}  // namespace cuctx
