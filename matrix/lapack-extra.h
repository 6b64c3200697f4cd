// matrix/lapack-extra.h: private float/double wrappers of the few LAPACK routines that the packed
// tridiagonalization and symmetric QR use (not installed); the SVD and eigen routines are in
// matrix/lapack-wrappers.h.
// SPDX-License-Identifier: Apache-2.0
//
// The Fortran symbols come from OpenBLAS (already linked with -lopenblas). All arrays are
// column-major as LAPACK expects; packed arrays use uplo 'U', which is the same memory layout as
// our row-major packed lower triangle (matrix/packed-matrix.h). The wrappers return LAPACK's info
// (0 on success) and do no other checking; callers validate sizes and skip n == 0.
#ifndef CUCTX_MATRIX_LAPACK_EXTRA_H_
#define CUCTX_MATRIX_LAPACK_EXTRA_H_

#include <cstddef>
#include <vector>

extern "C" {
void ssptrd_(const char* uplo, const int* n, float* ap, float* d, float* e, float* tau, int* info);
void dsptrd_(const char* uplo, const int* n, double* ap, double* d, double* e, double* tau,
             int* info);
void sopgtr_(const char* uplo, const int* n, const float* ap, const float* tau, float* q,
             const int* ldq, float* work, int* info);
void dopgtr_(const char* uplo, const int* n, const double* ap, const double* tau, double* q,
             const int* ldq, double* work, int* info);
void ssteqr_(const char* compz, const int* n, float* d, float* e, float* z, const int* ldz,
             float* work, int* info);
void dsteqr_(const char* compz, const int* n, double* d, double* e, double* z, const int* ldz,
             double* work, int* info);
}

namespace cuctx {
namespace internal {

// Reduces the packed symmetric matrix ap (uplo 'U') to tridiagonal form: diagonal d (n), off-
// diagonal e (n - 1), reflector scalars tau (n - 1); ap then holds the reflectors.
inline int LapackSptrd(int n, float* ap, float* d, float* e, float* tau) {
  int info = 0;
  ssptrd_("U", &n, ap, d, e, tau, &info);
  return info;
}
inline int LapackSptrd(int n, double* ap, double* d, double* e, double* tau) {
  int info = 0;
  dsptrd_("U", &n, ap, d, e, tau, &info);
  return info;
}

// The orthogonal Q (n x n, column-major, leading dimension n) of a LapackSptrd call.
inline int LapackOpgtr(int n, const float* ap, const float* tau, float* q) {
  int info = 0;
  std::vector<float> work(n > 1 ? n - 1 : 1);
  sopgtr_("U", &n, ap, tau, q, &n, work.data(), &info);
  return info;
}
inline int LapackOpgtr(int n, const double* ap, const double* tau, double* q) {
  int info = 0;
  std::vector<double> work(n > 1 ? n - 1 : 1);
  dopgtr_("U", &n, ap, tau, q, &n, work.data(), &info);
  return info;
}

// Eigenvalues (into d, ascending) of the symmetric tridiagonal (d, e) by implicit QL/QR; with
// z != nullptr also the eigenvectors of the tridiagonal matrix (compz 'I': z is set to them,
// column-major n x n).
inline int LapackSteqr(int n, float* d, float* e, float* z) {
  int info = 0, ldz = n > 0 ? n : 1;
  std::vector<float> work(z != nullptr && n > 1 ? 2 * n - 2 : 1);
  ssteqr_(z != nullptr ? "I" : "N", &n, d, e, z, &ldz, work.data(), &info);
  return info;
}
inline int LapackSteqr(int n, double* d, double* e, double* z) {
  int info = 0, ldz = n > 0 ? n : 1;
  std::vector<double> work(z != nullptr && n > 1 ? 2 * n - 2 : 1);
  dsteqr_(z != nullptr ? "I" : "N", &n, d, e, z, &ldz, work.data(), &info);
  return info;
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_MATRIX_LAPACK_EXTRA_H_
