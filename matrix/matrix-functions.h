// matrix/matrix-functions.h: free functions on matrices and vectors (Kaldi's matrix-functions.h).
// SPDX-License-Identifier: Apache-2.0
//
// Each family below is its own block; definitions live in matrix/matrix-functions-<family>.cc.
#ifndef CUCTX_MATRIX_MATRIX_FUNCTIONS_H_
#define CUCTX_MATRIX_MATRIX_FUNCTIONS_H_

#include "base/types.h"
#include "matrix/matrix-common.h"
#include "matrix/matrix-exponential.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

#include <cmath>

namespace cuctx {

// ---- FFT and DCT (matrix/matrix-functions-fft.cc) ----------------------------------------------
//
// Complex data is stored interleaved in a real vector: v = (re_0, im_0, re_1, im_1, ...), so a
// vector of dimension 2N holds N complex points. Conventions (as Kaldi):
//   forward:  X_m = sum_n x_n exp(-2 pi i m n / N);
//   inverse:  x_n = sum_m X_m exp(+2 pi i m n / N), WITHOUT the 1/N factor, so a forward then an
//             inverse transform returns N times the input.
// NOTE ON THE ALGORITHMS: ComplexFft is our own mixed-radix (Cooley-Tukey by the smallest prime
// factor, recursively) decimation-in-time FFT, O(N * sum of the prime factors of N); it accepts
// any N (Kaldi's header says powers of two, but its code, like ours, handles any N). Measured
// reason for hand-writing it (no FFT library is linked): for N = 512 it takes tens of
// microseconds against milliseconds for the naive ComplexFt (double, -O2, one core;
// bin/fft-bench prints both).
// For repeated power-of-two transforms SplitRadixComplexFft / SplitRadixRealFft (matrix/srfft.h)
// are faster still.

// In-place FFT of the v->Dim() / 2 complex points in *v (forward or unnormalized inverse, see
// above). `tmp_work`, if given, is used (and resized) as scratch so repeated calls do not
// allocate. Throws cuctx::Error if v->Dim() is odd. Dimension 0 or 2 (one point) is a no-op.
template <typename Real>
void ComplexFft(VectorBase<Real>* v, bool forward, Vector<Real>* tmp_work = nullptr);

// The same transform computed directly from the definition, O(N^2), accumulated in double; meant
// for testing. *out must have in.Dim() (even) and must not overlap `in`; throws otherwise.
template <typename Real>
void ComplexFt(const VectorBase<Real>& in, VectorBase<Real>* out, bool forward);

// FFT of N = v->Dim() real points (N even, else throws; N == 0 is a no-op), in place, using a
// complex FFT of N/2 points. Output layout (Kaldi's): the N/2 + 1 independent complex values
// packed into N reals as
//   [ re X_0, re X_{N/2}, re X_1, im X_1, re X_2, im X_2, ..., re X_{N/2-1}, im X_{N/2-1} ]
// (X_0 and X_{N/2} are real for real input). With forward == false the input is read in that
// layout and the output is N times the real signal, so forward then inverse times 1/N is the
// identity.
template <typename Real>
void RealFft(VectorBase<Real>* v, bool forward);

// RealFft's contract computed through a full N-point complex FFT; meant for testing.
template <typename Real>
void RealFftInefficient(VectorBase<Real>* v, bool forward);

// Fills *M (K x N, K >= 1, N >= 1, else throws) with the first K rows of the orthonormal N-point
// DCT-II matrix, so (*M) * x is the DCT of x:
//   M(0, n) = sqrt(1 / N),  M(k, n) = sqrt(2 / N) cos(pi / N * (n + 1/2) * k)  for k >= 1.
// For K == N the matrix is orthogonal: its transpose is the inverse DCT. (Kaldi's comment calls
// this "type III"; the rows are the DCT-II basis.)
template <typename Real>
void ComputeDctMatrix(Matrix<Real>* M);

// *b = a * b for complex a = (a_re, a_im), b = (*b_re, *b_im).
template <typename Real>
inline void ComplexMul(const Real& a_re, const Real& a_im, Real* b_re, Real* b_im) {
  const Real re = a_re * *b_re - a_im * *b_im;
  *b_im = a_re * *b_im + a_im * *b_re;
  *b_re = re;
}

// *c += a * b for complex a, b, c.
template <typename Real>
inline void ComplexAddProduct(const Real& a_re, const Real& a_im, const Real& b_re,
                              const Real& b_im, Real* c_re, Real* c_im) {
  *c_re += a_re * b_re - a_im * b_im;
  *c_im += a_re * b_im + a_im * b_re;
}

// *a = exp(i x) = cos x + i sin x.
template <typename Real>
inline void ComplexImExp(Real x, Real* a_re, Real* a_im) {
  *a_re = std::cos(x);
  *a_im = std::sin(x);
}

// ---- end FFT and DCT ---------------------------------------------------------------------------

// ---- Kaldi parity: signed outer product (matrix/matrix-extra.cc) --------------------------------

// Splits the rank-one update alpha a b^T by sign: *plus += max(0, alpha a b^T) and
// *minus += max(0, -alpha a b^T), element-wise (so both only grow). Requires a.Dim() == rows and
// b.Dim() == columns of both *plus and *minus; plus and minus must not overlap each other, a or b
// (all checked; throws cuctx::Error naming the shapes).
template <typename Real>
void AddOuterProductPlusMinus(Real alpha, const VectorBase<Real>& a, const VectorBase<Real>& b,
                              MatrixBase<Real>* plus, MatrixBase<Real>* minus);

template <typename Real>
class MatrixBase;

// ---- PCA (matrix/matrix-functions-pca.cc) -------------------------------------------------------

// Principal components of the N points that are the rows of the N x D matrix X, without
// subtracting a mean (as Kaldi): the G rows of *U (G x D, G = U->NumRows()) become an orthonormal
// basis of the top-G eigenvectors of X^T X, in order of decreasing eigenvalue, and *A (N x G, or
// nullptr) the coefficients A = X U^T, so X ~= A U. Requires G <= N and G <= D (throws). Works on
// X^T X when D < N and on the inner products X X^T otherwise; in the latter case directions with
// zero (or, from rounding, negative) eigenvalues are filled with arbitrary orthonormal vectors.
// Each basis vector's sign is arbitrary. With print_eigs the eigenvalues are logged. Kaldi uses
// Lanczos iteration when exact == false; here the eigenvalues are always computed exactly, so
// `exact` only changes the log text.
template <typename Real>
void ComputePca(const MatrixBase<Real>& X, MatrixBase<Real>* U, MatrixBase<Real>* A,
                bool print_eigs = false, bool exact = true);

}  // namespace cuctx

#endif  // CUCTX_MATRIX_MATRIX_FUNCTIONS_H_
