// matrix/matrix-functions.h: free functions on matrices and vectors (Kaldi's matrix-functions.h).
// SPDX-License-Identifier: Apache-2.0
//
// Each block below is one family, with its definitions in the source file it names.
#ifndef CUCTX_MATRIX_MATRIX_FUNCTIONS_H_
#define CUCTX_MATRIX_MATRIX_FUNCTIONS_H_

#include "matrix/matrix.h"
#include "matrix/vector.h"

namespace cuctx {

// ---- Kaldi parity: signed outer product (matrix/matrix-extra.cc) --------------------------------

// Splits the rank-one update alpha a b^T by sign: *plus += max(0, alpha a b^T) and
// *minus += max(0, -alpha a b^T), element-wise (so both only grow). Requires a.Dim() == rows and
// b.Dim() == columns of both *plus and *minus; plus and minus must not overlap each other, a or b
// (all checked; throws cuctx::Error naming the shapes).
template <typename Real>
void AddOuterProductPlusMinus(Real alpha, const VectorBase<Real>& a, const VectorBase<Real>& b,
                              MatrixBase<Real>* plus, MatrixBase<Real>* minus);

}  // namespace cuctx

#endif  // CUCTX_MATRIX_MATRIX_FUNCTIONS_H_
