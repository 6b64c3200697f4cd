// cudamatrix/internal/cu-blas-wrappers.h: float/double overloads of the cuBLAS calls the BLAS
// family uses.
// SPDX-License-Identifier: Apache-2.0
//
// Private to cudamatrix/ (cu-matrix-blas.cc, cu-vector-blas.cc). Each overload forwards to the
// S or D routine of the same name and returns its status, so that callers stay templated on Real
// and CUCTX_CUBLAS_CHECK still names the call. Everything is column-major, as cuBLAS is; callers
// translate row-major shapes. Scalars are passed by host pointer, so the handle must be in
// CUBLAS_POINTER_MODE_HOST (cuBLAS's default, and the only mode CuDevice uses). In a build
// without CUDA this header declares nothing.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_BLAS_WRAPPERS_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_BLAS_WRAPPERS_H_

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-device.h"

#include <cublas_v2.h>

namespace cuctx {
namespace internal {

// The calling thread's cuBLAS handle (bound to its cudaStreamPerThread).
inline cublasHandle_t ThreadCublasHandle() { return CuDevice::Instantiate().GetCublasHandle(); }

inline cublasStatus_t CublasGemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                 int m, int n, int k, float alpha, const float* a, int lda,
                                 const float* b, int ldb, float beta, float* c, int ldc) {
  return cublasSgemm(h, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
inline cublasStatus_t CublasGemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                 int m, int n, int k, double alpha, const double* a, int lda,
                                 const double* b, int ldb, double beta, double* c, int ldc) {
  return cublasDgemm(h, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

inline cublasStatus_t CublasSyrk(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t t,
                                 int n, int k, float alpha, const float* a, int lda, float beta,
                                 float* c, int ldc) {
  return cublasSsyrk(h, uplo, t, n, k, &alpha, a, lda, &beta, c, ldc);
}
inline cublasStatus_t CublasSyrk(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t t,
                                 int n, int k, double alpha, const double* a, int lda, double beta,
                                 double* c, int ldc) {
  return cublasDsyrk(h, uplo, t, n, k, &alpha, a, lda, &beta, c, ldc);
}

inline cublasStatus_t CublasGemv(cublasHandle_t h, cublasOperation_t t, int m, int n, float alpha,
                                 const float* a, int lda, const float* x, int incx, float beta,
                                 float* y, int incy) {
  return cublasSgemv(h, t, m, n, &alpha, a, lda, x, incx, &beta, y, incy);
}
inline cublasStatus_t CublasGemv(cublasHandle_t h, cublasOperation_t t, int m, int n, double alpha,
                                 const double* a, int lda, const double* x, int incx, double beta,
                                 double* y, int incy) {
  return cublasDgemv(h, t, m, n, &alpha, a, lda, x, incx, &beta, y, incy);
}

inline cublasStatus_t CublasGer(cublasHandle_t h, int m, int n, float alpha, const float* x,
                                int incx, const float* y, int incy, float* a, int lda) {
  return cublasSger(h, m, n, &alpha, x, incx, y, incy, a, lda);
}
inline cublasStatus_t CublasGer(cublasHandle_t h, int m, int n, double alpha, const double* x,
                                int incx, const double* y, int incy, double* a, int lda) {
  return cublasDger(h, m, n, &alpha, x, incx, y, incy, a, lda);
}

// The result is written to host memory, so these wait for the stream.
inline cublasStatus_t CublasDot(cublasHandle_t h, int n, const float* x, int incx, const float* y,
                                int incy, float* result) {
  return cublasSdot(h, n, x, incx, y, incy, result);
}
inline cublasStatus_t CublasDot(cublasHandle_t h, int n, const double* x, int incx, const double* y,
                                int incy, double* result) {
  return cublasDdot(h, n, x, incx, y, incy, result);
}

// Data and compute types for cublasGemmBatchedEx. Float uses CUBLAS_COMPUTE_32F so that the
// handle's math mode (TF32 only with --cuda-use-tf32-compute) decides, as for cublasSgemm.
inline cudaDataType_t CublasDataType(float) { return CUDA_R_32F; }
inline cudaDataType_t CublasDataType(double) { return CUDA_R_64F; }
inline cublasComputeType_t CublasComputeType(float) { return CUBLAS_COMPUTE_32F; }
inline cublasComputeType_t CublasComputeType(double) { return CUBLAS_COMPUTE_64F; }

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_HAVE_CUDA
#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_BLAS_WRAPPERS_H_
