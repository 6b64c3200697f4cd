// cudamatrix/cu-kernels-vector-packed.cu: the element-selection kernel of
// CuVectorBase::CopyElements.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

template <typename Real>
__global__ void CopyElementsKernel(MatrixDim m, const Real* mat, bool trans, const int32_t* idx,
                                   int32_t n, Real* dst) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int32_t j = idx[i];
    const int32_t r = trans ? j : i, c = trans ? i : j;
    if (r < 0 || r >= m.rows || c < 0 || c >= m.cols) continue;
    dst[i] = mat[static_cast<size_t>(r) * m.stride + c];
  }
}

template <typename Real>
void CopyElements(MatrixDim m, const Real* mat, bool trans, const int32_t* idx, int32_t n,
                  Real* dst, CuStream stream) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = (static_cast<int64_t>(n) + kThreads - 1) / kThreads;
  internal::Launch<CopyElementsKernel<Real>>(CUCTX_LAUNCH_SITE("CopyElementsKernel"),
                                             static_cast<unsigned>(blocks < 65535 ? blocks : 65535),
                                             kThreads, 0, stream, m, mat, trans, idx, n, dst);
}

}  // namespace

void LaunchCopyElements(MatrixDim m, const float* mat, bool trans, const int32_t* idx, int32_t n,
                        float* dst, CuStream s) {
  CopyElements(m, mat, trans, idx, n, dst, s);
}
void LaunchCopyElements(MatrixDim m, const double* mat, bool trans, const int32_t* idx, int32_t n,
                        double* dst, CuStream s) {
  CopyElements(m, mat, trans, idx, n, dst, s);
}

}  // namespace cuctx
