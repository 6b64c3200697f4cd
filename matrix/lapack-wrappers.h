// matrix/lapack-wrappers.h: private float/double overloads of the few LAPACK routines we call.
// SPDX-License-Identifier: Apache-2.0
//
// Not part of the public API (matrix/*.cc only). The Fortran symbols (sgesvd_/dgesvd_,
// ssyevr_/dsyevr_, sgeev_/dgeev_, sgetrf_/dgetrf_, dgetri_, dpotrf_/dpotri_/dtrtri_ and their unblocked
// dpotf2_/dtrti2_/dlauu2_) come from OpenBLAS, which bundles reference
// LAPACK built with 32-bit integers; we declare them here ourselves rather than include lapack.h,
// whose presence and spelling differ between distributions. Every character argument is followed
// by its hidden Fortran length (always 1), as gfortran expects.
//
// LAPACK is column-major. A row-major matrix with stride s is, to LAPACK, its transpose with
// leading dimension s; callers use that instead of copying where they can (see matrix-lapack.cc).
//
// The Lapack* helpers below do the workspace query, allocate the workspace and return LAPACK's
// `info` unchanged; CheckLapackInfo turns a nonzero info into a cuctx::Error naming the caller,
// the routine and the info value. They do no shape checks: callers validate shapes, skip empty
// problems (LAPACK rejects a leading dimension of 0) and reject non-finite input first (LAPACK's
// behaviour on NaN is unspecified; some routines loop or return garbage with info == 0).
// Reentrant; OpenBLAS may use its own threads inside a call.
#ifndef CUCTX_MATRIX_LAPACK_WRAPPERS_H_
#define CUCTX_MATRIX_LAPACK_WRAPPERS_H_

#include "base/error.h"
#include "base/types.h"

#include <algorithm>
#include <cstddef>
#include <vector>

extern "C" {
void sgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, float* a,
             const int* lda, float* s, float* u, const int* ldu, float* vt, const int* ldvt,
             float* work, const int* lwork, int* info, size_t jobu_len, size_t jobvt_len);
void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a,
             const int* lda, double* s, double* u, const int* ldu, double* vt, const int* ldvt,
             double* work, const int* lwork, int* info, size_t jobu_len, size_t jobvt_len);
void ssyevr_(const char* jobz, const char* range, const char* uplo, const int* n, float* a,
             const int* lda, const float* vl, const float* vu, const int* il, const int* iu,
             const float* abstol, int* m, float* w, float* z, const int* ldz, int* isuppz,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info,
             size_t jobz_len, size_t range_len, size_t uplo_len);
void dsyevr_(const char* jobz, const char* range, const char* uplo, const int* n, double* a,
             const int* lda, const double* vl, const double* vu, const int* il, const int* iu,
             const double* abstol, int* m, double* w, double* z, const int* ldz, int* isuppz,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info,
             size_t jobz_len, size_t range_len, size_t uplo_len);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr,
            float* wi, float* vl, const int* ldvl, float* vr, const int* ldvr, float* work,
            const int* lwork, int* info, size_t jobvl_len, size_t jobvr_len);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
            double* wr, double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr,
            double* work, const int* lwork, int* info, size_t jobvl_len, size_t jobvr_len);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void dtrtri_(const char* uplo, const char* diag, const int* n, double* a, const int* lda, int* info,
             size_t uplo_len, size_t diag_len);
void dpotf2_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void dtrti2_(const char* uplo, const char* diag, const int* n, double* a, const int* lda, int* info,
             size_t uplo_len, size_t diag_len);
void dlauu2_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
}

namespace cuctx {
namespace internal {

// 's' or 'd': the prefix of the LAPACK routine used for Real (for error messages).
inline char LapackPrefix(float) { return 's'; }
inline char LapackPrefix(double) { return 'd'; }

// ---- raw overloads (one name for both precisions)

inline void LapackXgesvd(char jobu, char jobvt, int m, int n, float* a, int lda, float* s, float* u,
                         int ldu, float* vt, int ldvt, float* work, int lwork, int* info) {
  sgesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1, 1);
}
inline void LapackXgesvd(char jobu, char jobvt, int m, int n, double* a, int lda, double* s,
                         double* u, int ldu, double* vt, int ldvt, double* work, int lwork,
                         int* info) {
  dgesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1, 1);
}
inline void LapackXsyevr(char jobz, int n, float* a, int lda, int* m, float* w, float* z, int ldz,
                         int* isuppz, float* work, int lwork, int* iwork, int liwork, int* info) {
  const char range = 'A', uplo = 'L';
  const float zero = 0;
  const int ione = 1;
  ssyevr_(&jobz, &range, &uplo, &n, a, &lda, &zero, &zero, &ione, &ione, &zero, m, w, z, &ldz,
          isuppz, work, &lwork, iwork, &liwork, info, 1, 1, 1);
}
inline void LapackXsyevr(char jobz, int n, double* a, int lda, int* m, double* w, double* z,
                         int ldz, int* isuppz, double* work, int lwork, int* iwork, int liwork,
                         int* info) {
  const char range = 'A', uplo = 'L';
  const double zero = 0;
  const int ione = 1;
  dsyevr_(&jobz, &range, &uplo, &n, a, &lda, &zero, &zero, &ione, &ione, &zero, m, w, z, &ldz,
          isuppz, work, &lwork, iwork, &liwork, info, 1, 1, 1);
}
inline void LapackXgeev(char jobvr, int n, float* a, int lda, float* wr, float* wi, float* vr,
                        int ldvr, float* work, int lwork, int* info) {
  const char jobvl = 'N';
  const int ldvl = 1;
  float* vl = nullptr;
  sgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, info, 1, 1);
}
inline void LapackXgeev(char jobvr, int n, double* a, int lda, double* wr, double* wi, double* vr,
                        int ldvr, double* work, int lwork, int* info) {
  const char jobvl = 'N';
  const int ldvl = 1;
  double* vl = nullptr;
  dgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, info, 1, 1);
}
inline void LapackXgetrf(int m, int n, float* a, int lda, int* ipiv, int* info) {
  sgetrf_(&m, &n, a, &lda, ipiv, info);
}
inline void LapackXgetrf(int m, int n, double* a, int lda, int* ipiv, int* info) {
  dgetrf_(&m, &n, a, &lda, ipiv, info);
}

// Cholesky (potrf), inverse from the Cholesky factor (potri) and triangular inverse with a
// non-unit diagonal (trtri) of the column-major n x n `a`, on its upper triangle ('U'), which is
// a row-major matrix's lower triangle. Double only: the CPU solvers factor in double.
//
// Below kLapackUnblockedMaxDim they call LAPACK's unblocked forms of the same algorithms (dpotf2;
// dtrti2; dtrti2 + dlauu2, which is what dpotri does blockwise). Measured with Debian's OpenBLAS
// 0.3.21 (pthread), best of 200 calls, n = 64: dpotrf 19.0 us against dpotf2 7.7 us on a 2-core
// host and 38 us against about 8 us on the 16-core H100 host; dpotrf + dpotri 62 us against 30 us.
// OpenBLAS hands these routines to its thread pool from n = 64, which costs more than the work at
// these sizes; at 128 the two forms are even (66 us each) and above it the blocked ones win.
constexpr int kLapackUnblockedMaxDim = 127;

inline int LapackPotrfUpper(int n, double* a, int lda) {
  int info = 0;
  if (n <= kLapackUnblockedMaxDim)
    dpotf2_("U", &n, a, &lda, &info, 1);
  else
    dpotrf_("U", &n, a, &lda, &info, 1);
  return info;
}
inline int LapackTrtriUpper(int n, double* a, int lda) {
  int info = 0;
  if (n <= kLapackUnblockedMaxDim)
    dtrti2_("U", "N", &n, a, &lda, &info, 1, 1);
  else
    dtrtri_("U", "N", &n, a, &lda, &info, 1, 1);
  return info;
}
inline int LapackPotriUpper(int n, double* a, int lda) {
  int info = 0;
  if (n > kLapackUnblockedMaxDim) {
    dpotri_("U", &n, a, &lda, &info, 1);
    return info;
  }
  info = LapackTrtriUpper(n, a, lda);
  if (info == 0) dlauu2_("U", &n, a, &lda, &info, 1);
  return info;
}

// The size LAPACK asked for in a workspace query (returned as a floating-point value).
template <typename Real>
int WorkSize(Real query) {
  return std::max(1, static_cast<int>(query + Real(0.5)));
}

// ---- helpers that own the workspace; each returns LAPACK's info

// Thin SVD of the column-major m x n `a` (destroyed): s gets min(m, n) values in descending
// order; jobu/jobvt are 'S' (write the min(m, n) vectors to u / vt) or 'N' (u / vt unused, but
// ldu / ldvt must still be >= 1).
template <typename Real>
int LapackGesvd(char jobu, char jobvt, int m, int n, Real* a, int lda, Real* s, Real* u, int ldu,
                Real* vt, int ldvt) {
  int info = 0;
  Real query = 0;
  LapackXgesvd(jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, &query, -1, &info);
  if (info != 0) return info;
  std::vector<Real> work(WorkSize(query));
  LapackXgesvd(jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work.data(),
               static_cast<int>(work.size()), &info);
  return info;
}

// All eigenvalues (ascending, into w) and, with jobz == 'V', the orthonormal eigenvectors (column
// j of the column-major z, leading dimension ldz >= n) of the symmetric n x n `a` (destroyed;
// only its lower triangle in column-major terms is read).
template <typename Real>
int LapackSyevr(char jobz, int n, Real* a, int lda, Real* w, Real* z, int ldz) {
  int info = 0, m = 0, iwork_query = 0;
  Real query = 0;
  std::vector<int> isuppz(2 * static_cast<size_t>(std::max(1, n)));
  LapackXsyevr(jobz, n, a, lda, &m, w, z, ldz, isuppz.data(), &query, -1, &iwork_query, -1, &info);
  if (info != 0) return info;
  std::vector<Real> work(WorkSize(query));
  std::vector<int> iwork(std::max(1, iwork_query));
  LapackXsyevr(jobz, n, a, lda, &m, w, z, ldz, isuppz.data(), work.data(),
               static_cast<int>(work.size()), iwork.data(), static_cast<int>(iwork.size()), &info);
  return info;
}

// Eigenvalues (wr + i wi; a complex pair comes as two entries, the one with wi > 0 first) and,
// with jobvr == 'V', the right eigenvectors of the general column-major n x n `a` (destroyed).
template <typename Real>
int LapackGeev(char jobvr, int n, Real* a, int lda, Real* wr, Real* wi, Real* vr, int ldvr) {
  int info = 0;
  Real query = 0;
  LapackXgeev(jobvr, n, a, lda, wr, wi, vr, ldvr, &query, -1, &info);
  if (info != 0) return info;
  std::vector<Real> work(WorkSize(query));
  LapackXgeev(jobvr, n, a, lda, wr, wi, vr, ldvr, work.data(), static_cast<int>(work.size()),
              &info);
  return info;
}

// LU factorization with partial pivoting of the column-major m x n `a` (overwritten by L and U);
// ipiv gets min(m, n) one-based row interchanges. info > 0: U(info, info) is exactly zero.
template <typename Real>
int LapackGetrf(int m, int n, Real* a, int lda, int* ipiv) {
  int info = 0;
  LapackXgetrf(m, n, a, lda, ipiv, &info);
  return info;
}

// The inverse of the column-major n x n `a` from its getrf factors and row interchanges, in
// place (double only: the CPU inverse works in double). info > 0: the matrix is singular.
inline int LapackGetriDouble(int n, double* a, int lda, const int* ipiv) {
  int info = 0, lwork = -1;
  double query = 0;
  dgetri_(&n, a, &lda, ipiv, &query, &lwork, &info);
  if (info != 0) return info;
  lwork = WorkSize(query);
  std::vector<double> work(static_cast<size_t>(lwork));
  dgetri_(&n, a, &lda, ipiv, work.data(), &lwork, &info);
  return info;
}

// Throws cuctx::Error unless info == 0: "<caller>: LAPACK <p><routine> failed (info = <info>):
// <why>", where why is `positive_meaning` for info > 0 and names the bad argument for info < 0.
template <typename Real>
void CheckLapackInfo(int info, const char* caller, const char* routine,
                     const char* positive_meaning) {
  if (info == 0) return;
  if (info < 0)
    CUCTX_ERR << caller << ": LAPACK " << LapackPrefix(Real()) << routine
              << " failed (info = " << info << "): argument " << -info << " had an illegal value";
  CUCTX_ERR << caller << ": LAPACK " << LapackPrefix(Real()) << routine
            << " failed (info = " << info << "): " << positive_meaning;
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_MATRIX_LAPACK_WRAPPERS_H_
