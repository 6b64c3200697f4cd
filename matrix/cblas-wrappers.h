// matrix/cblas-wrappers.h: float/double overloads of the few CBLAS routines the matrix code uses.
// SPDX-License-Identifier: Apache-2.0
//
// Each cblas_X<name> overload forwards to cblas_s<name> or cblas_d<name> (OpenBLAS), always in
// row-major order, so templated code can call one name for both precisions. The wrappers take our
// MatrixTransposeType, whose values equal CblasNoTrans/CblasTrans. They do no checking: callers
// validate shapes and skip empty operations (BLAS rejects a leading dimension of 0). Reentrant;
// OpenBLAS may use its own thread pool inside a call.
#ifndef CUCTX_MATRIX_CBLAS_WRAPPERS_H_
#define CUCTX_MATRIX_CBLAS_WRAPPERS_H_

#include "base/types.h"
#include "matrix/matrix-common.h"

#include <cblas.h>

namespace cuctx {

inline CBLAS_TRANSPOSE ToCblas(MatrixTransposeType t) {
  return t == kTrans ? CblasTrans : CblasNoTrans;
}

// C (m x n) = beta C + alpha op(A) op(B), op(A) m x k, op(B) k x n.
inline void cblas_Xgemm(MatrixTransposeType ta, MatrixTransposeType tb, MatrixIndexT m,
                        MatrixIndexT n, MatrixIndexT k, float alpha, const float* a,
                        MatrixIndexT lda, const float* b, MatrixIndexT ldb, float beta, float* c,
                        MatrixIndexT ldc) {
  cblas_sgemm(CblasRowMajor, ToCblas(ta), ToCblas(tb), m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}
inline void cblas_Xgemm(MatrixTransposeType ta, MatrixTransposeType tb, MatrixIndexT m,
                        MatrixIndexT n, MatrixIndexT k, double alpha, const double* a,
                        MatrixIndexT lda, const double* b, MatrixIndexT ldb, double beta, double* c,
                        MatrixIndexT ldc) {
  cblas_dgemm(CblasRowMajor, ToCblas(ta), ToCblas(tb), m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

// y = beta y + alpha op(A) x, A stored m x n.
inline void cblas_Xgemv(MatrixTransposeType ta, MatrixIndexT m, MatrixIndexT n, float alpha,
                        const float* a, MatrixIndexT lda, const float* x, MatrixIndexT incx,
                        float beta, float* y, MatrixIndexT incy) {
  cblas_sgemv(CblasRowMajor, ToCblas(ta), m, n, alpha, a, lda, x, incx, beta, y, incy);
}
inline void cblas_Xgemv(MatrixTransposeType ta, MatrixIndexT m, MatrixIndexT n, double alpha,
                        const double* a, MatrixIndexT lda, const double* x, MatrixIndexT incx,
                        double beta, double* y, MatrixIndexT incy) {
  cblas_dgemv(CblasRowMajor, ToCblas(ta), m, n, alpha, a, lda, x, incx, beta, y, incy);
}

// A (m x n) += alpha x y^T.
inline void cblas_Xger(MatrixIndexT m, MatrixIndexT n, float alpha, const float* x,
                       MatrixIndexT incx, const float* y, MatrixIndexT incy, float* a,
                       MatrixIndexT lda) {
  cblas_sger(CblasRowMajor, m, n, alpha, x, incx, y, incy, a, lda);
}
inline void cblas_Xger(MatrixIndexT m, MatrixIndexT n, double alpha, const double* x,
                       MatrixIndexT incx, const double* y, MatrixIndexT incy, double* a,
                       MatrixIndexT lda) {
  cblas_dger(CblasRowMajor, m, n, alpha, x, incx, y, incy, a, lda);
}

// Lower triangle of C (n x n) = beta C + alpha op(A) op(A)^T, op(A) n x k.
inline void cblas_Xsyrk(MatrixTransposeType ta, MatrixIndexT n, MatrixIndexT k, float alpha,
                        const float* a, MatrixIndexT lda, float beta, float* c, MatrixIndexT ldc) {
  cblas_ssyrk(CblasRowMajor, CblasLower, ToCblas(ta), n, k, alpha, a, lda, beta, c, ldc);
}
inline void cblas_Xsyrk(MatrixTransposeType ta, MatrixIndexT n, MatrixIndexT k, double alpha,
                        const double* a, MatrixIndexT lda, double beta, double* c,
                        MatrixIndexT ldc) {
  cblas_dsyrk(CblasRowMajor, CblasLower, ToCblas(ta), n, k, alpha, a, lda, beta, c, ldc);
}

// x . y
inline float cblas_Xdot(MatrixIndexT n, const float* x, MatrixIndexT incx, const float* y,
                        MatrixIndexT incy) {
  return cblas_sdot(n, x, incx, y, incy);
}
inline double cblas_Xdot(MatrixIndexT n, const double* x, MatrixIndexT incx, const double* y,
                         MatrixIndexT incy) {
  return cblas_ddot(n, x, incx, y, incy);
}

// y += alpha x
inline void cblas_Xaxpy(MatrixIndexT n, float alpha, const float* x, MatrixIndexT incx, float* y,
                        MatrixIndexT incy) {
  cblas_saxpy(n, alpha, x, incx, y, incy);
}
inline void cblas_Xaxpy(MatrixIndexT n, double alpha, const double* x, MatrixIndexT incx, double* y,
                        MatrixIndexT incy) {
  cblas_daxpy(n, alpha, x, incx, y, incy);
}

// x *= alpha
inline void cblas_Xscal(MatrixIndexT n, float alpha, float* x, MatrixIndexT incx) {
  cblas_sscal(n, alpha, x, incx);
}
inline void cblas_Xscal(MatrixIndexT n, double alpha, double* x, MatrixIndexT incx) {
  cblas_dscal(n, alpha, x, incx);
}

// ---- Kaldi parity: packed symmetric (SpMatrix storage: the lower triangle row by row, which is
// CBLAS's row-major lower packed layout) ------------------------------------------------------
// y = beta y + alpha A x, A n x n symmetric packed.
inline void cblas_Xspmv(MatrixIndexT n, float alpha, const float* ap, const float* x,
                        MatrixIndexT incx, float beta, float* y, MatrixIndexT incy) {
  cblas_sspmv(CblasRowMajor, CblasLower, n, alpha, ap, x, incx, beta, y, incy);
}
inline void cblas_Xspmv(MatrixIndexT n, double alpha, const double* ap, const double* x,
                        MatrixIndexT incx, double beta, double* y, MatrixIndexT incy) {
  cblas_dspmv(CblasRowMajor, CblasLower, n, alpha, ap, x, incx, beta, y, incy);
}
// ---- packed triangular product (matrix/vector-packed.cc) ----------------------------------
// x = op(T) x for the n x n lower-triangular T stored packed row by row (row-major CblasLower,
// the layout of TpMatrix).
inline void cblas_Xtpmv(MatrixTransposeType ta, MatrixIndexT n, const float* tp, float* x,
                        MatrixIndexT incx) {
  cblas_stpmv(CblasRowMajor, CblasLower, ToCblas(ta), CblasNonUnit, n, tp, x, incx);
}
inline void cblas_Xtpmv(MatrixTransposeType ta, MatrixIndexT n, const double* tp, double* x,
                        MatrixIndexT incx) {
  cblas_dtpmv(CblasRowMajor, CblasLower, ToCblas(ta), CblasNonUnit, n, tp, x, incx);
}
// ---- end of packed triangular product ---------------------------------------------------------
// x = op(T)^-1 x, T the dim x dim lower-triangular matrix packed at t (non-unit diagonal).
inline void cblas_Xtpsv(MatrixTransposeType trans, const float* t, MatrixIndexT dim, float* x,
                        MatrixIndexT incx) {
  cblas_stpsv(CblasRowMajor, CblasLower, ToCblas(trans), CblasNonUnit, dim, t, x, incx);
}
inline void cblas_Xtpsv(MatrixTransposeType trans, const double* t, MatrixIndexT dim, double* x,
                        MatrixIndexT incx) {
  cblas_dtpsv(CblasRowMajor, CblasLower, ToCblas(trans), CblasNonUnit, dim, t, x, incx);
}
// ---- end Kaldi parity: packed Level-2 routines --------------------------------------------------

}  // namespace cuctx

#endif  // CUCTX_MATRIX_CBLAS_WRAPPERS_H_
