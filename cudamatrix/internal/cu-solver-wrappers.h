// cudamatrix/internal/cu-solver-wrappers.h: float/double overloads of the cuSOLVER calls the
// solver family uses.
// SPDX-License-Identifier: Apache-2.0
//
// Private to cudamatrix/ (cu-matrix-solve.cc). As in cu-blas-wrappers.h, each overload forwards to
// the S or D routine of the same name and returns its status, so that callers stay templated on
// Real and CUCTX_CUSOLVER_CHECK still names the call. cuSOLVER is column-major; callers translate
// row-major shapes and pick `uplo` accordingly. In a build without CUDA this header declares
// nothing.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_SOLVER_WRAPPERS_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_SOLVER_WRAPPERS_H_

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-device.h"

#include <cusolverDn.h>

namespace cuctx {
namespace internal {

// The calling thread's cuSOLVER dense handle (bound to its cudaStreamPerThread).
inline cusolverDnHandle_t ThreadCusolverDnHandle() {
  return CuDevice::Instantiate().GetCusolverDnHandle();
}

// Workspace size, in elements, for potrf (Cholesky factorization) of the n x n matrix a.
inline cusolverStatus_t CusolverPotrfBufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n,
                                                float* a, int lda, int* lwork) {
  return cusolverDnSpotrf_bufferSize(h, uplo, n, a, lda, lwork);
}
inline cusolverStatus_t CusolverPotrfBufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n,
                                                double* a, int lda, int* lwork) {
  return cusolverDnDpotrf_bufferSize(h, uplo, n, a, lda, lwork);
}

// The factorization itself; *d_info (device memory) receives 0 or the order of the first leading
// minor that is not positive definite.
inline cusolverStatus_t CusolverPotrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float* a,
                                      int lda, float* work, int lwork, int* d_info) {
  return cusolverDnSpotrf(h, uplo, n, a, lda, work, lwork, d_info);
}
inline cusolverStatus_t CusolverPotrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double* a,
                                      int lda, double* work, int lwork, int* d_info) {
  return cusolverDnDpotrf(h, uplo, n, a, lda, work, lwork, d_info);
}

// Workspace size, in elements, for potri (inverse from a potrf factor).
inline cusolverStatus_t CusolverPotriBufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n,
                                                float* a, int lda, int* lwork) {
  return cusolverDnSpotri_bufferSize(h, uplo, n, a, lda, lwork);
}
inline cusolverStatus_t CusolverPotriBufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n,
                                                double* a, int lda, int* lwork) {
  return cusolverDnDpotri_bufferSize(h, uplo, n, a, lda, lwork);
}

// Replaces the factor in `uplo` by that triangle of the inverse; *d_info as for potrf.
inline cusolverStatus_t CusolverPotri(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float* a,
                                      int lda, float* work, int lwork, int* d_info) {
  return cusolverDnSpotri(h, uplo, n, a, lda, work, lwork, d_info);
}
inline cusolverStatus_t CusolverPotri(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double* a,
                                      int lda, double* work, int lwork, int* d_info) {
  return cusolverDnDpotri(h, uplo, n, a, lda, work, lwork, d_info);
}

// Data type of the generic (cusolverDnX*) calls.
inline cudaDataType CusolverDataType(const float*) { return CUDA_R_32F; }
inline cudaDataType CusolverDataType(const double*) { return CUDA_R_64F; }

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_HAVE_CUDA
#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_SOLVER_WRAPPERS_H_
