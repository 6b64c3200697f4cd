// matrix/matrix-functions.h: free functions on matrices that are not class methods (Kaldi's
// matrix-functions.h and the helper functions at the end of kaldi-matrix.h).
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_MATRIX_MATRIX_FUNCTIONS_H_
#define CUCTX_MATRIX_MATRIX_FUNCTIONS_H_

#include "base/types.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

namespace cuctx {

// ---- Kaldi parity: SVD / eigenvalue helpers (matrix/matrix-functions-extra.cc) ----------------

// Sorts a singular value decomposition from the largest value down: by |s(i)| when
// sort_on_absolute_value, else by s(i). The columns of U and the rows of Vt (either may be
// nullptr) are permuted with s. Requires U->NumCols() == s->Dim() and Vt->NumRows() == s->Dim()
// (else throws). Ties keep their original order.
template <typename Real>
void SortSvd(VectorBase<Real>* s, MatrixBase<Real>* U, MatrixBase<Real>* Vt = nullptr,
             bool sort_on_absolute_value = true);

// D (n x n, n = real.Dim() == imag.Dim()) = the real block-diagonal eigenvalue matrix of a real
// nonsymmetric eigendecomposition: real(j) on the diagonal where imag(j) == 0, and for a complex
// pair (j, j + 1) the 2 x 2 block [re, im; -im, re] with re = real(j), im = imag(j). Throws on a
// size mismatch or an unpaired complex value (imag(j + 1) must be -imag(j) and real(j + 1) ==
// real(j), within a relative 1e-4).
template <typename Real>
void CreateEigenvalueMatrix(const VectorBase<Real>& real, const VectorBase<Real>& imag,
                            MatrixBase<Real>* D);

// x = x^power for the complex x = *x_re + i *x_im, on the principal branch (argument in
// (-pi, pi]). Returns false, leaving x unchanged, where that is ill-defined: x real and negative,
// or x == 0 with power < 0.
template <typename Real>
bool AttemptComplexPower(Real* x_re, Real* x_im, Real power);
// ---- end Kaldi parity: SVD / eigenvalue helpers ----------------------------------------------

}  // namespace cuctx

// ---- Kaldi parity: matrix exponential --------------------------------------------------------
#include "matrix/matrix-exponential.h"
// ---- end Kaldi parity: matrix exponential ----------------------------------------------------

#endif  // CUCTX_MATRIX_MATRIX_FUNCTIONS_H_
