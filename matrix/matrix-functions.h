// matrix/matrix-functions.h: free matrix functions after Kaldi's matrix-functions.h (by topic).
// SPDX-License-Identifier: Apache-2.0
//
// Each block below is self-contained and names the source file that defines it. Every function is
// instantiated for float and double.
#ifndef CUCTX_MATRIX_MATRIX_FUNCTIONS_H_
#define CUCTX_MATRIX_MATRIX_FUNCTIONS_H_

#include "base/types.h"
#include "matrix/matrix-common.h"

namespace cuctx {

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
