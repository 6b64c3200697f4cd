// matrix/matrix-exponential.h: MatrixExponential, exp(M) of a square matrix and its exact
// reverse-mode derivative.
// SPDX-License-Identifier: Apache-2.0
//
// ALGORITHM: scaling and squaring with a truncated Taylor series, method 3 of C. Moler and
// C. Van Loan, "Nineteen dubious ways to compute the exponential of a matrix, twenty-five years
// later", SIAM Review 45(1), 2003. With s the smallest integer >= 0 such that
// ||M||_inf / 2^s <= 1/2, P = M / 2^s, exp(P) is the degree-K Taylor polynomial evaluated by
// Horner's rule (H_K = I, H_{k-1} = I + P H_k / k, exp(P) ~= H_0), and exp(M) = exp(P)^(2^s)
// by s squarings. K = 14 for double and 9 for float keeps the truncation error
// ||P||^(K+1) / (K+1)! below the precision's rounding unit (for ||P|| <= 1/2).
//
// Backprop differentiates exactly this computation (not the true exponential): it runs the
// squarings and the Horner steps backwards, using the intermediate matrices that Compute kept.
// So its result agrees with a finite difference of Compute to rounding.
#ifndef CUCTX_MATRIX_MATRIX_EXPONENTIAL_H_
#define CUCTX_MATRIX_MATRIX_EXPONENTIAL_H_

#include "base/types.h"
#include "matrix/matrix.h"

#include <vector>

namespace cuctx {

// Computes X = exp(M) and back-propagates through it. Keeps the intermediate matrices of the
// last Compute (about (K + s + 1) n^2 elements) for Backprop. Not thread-safe; one object per
// thread.
template <typename Real>
class MatrixExponential {
 public:
  MatrixExponential() = default;

  // *X = exp(M). M must be square and X of M's shape (else throws); X must not overlap M.
  // Throws if M holds a NaN or an infinity.
  void Compute(const MatrixBase<Real>& M, MatrixBase<Real>* X);

  // Given hX = df/dX (element (i, j) is the derivative of a scalar f with respect to X(i, j)),
  // sets *hM = df/dM (same convention) for the M and X of the most recent Compute. Throws if
  // Compute was never called or the shapes differ from it.
  void Backprop(const MatrixBase<Real>& hX, MatrixBase<Real>* hM) const;

 private:
  MatrixIndexT dim_ = -1;              // size of the last Compute's M; -1 before any
  int num_squarings_ = 0;              // s
  Real scale_ = 1;                     // 2^-s
  Matrix<Real> P_;                     // M / 2^s
  std::vector<Matrix<Real>> horner_;   // horner_[k] = H_k, k = 1..K (index 0 unused)
  std::vector<Matrix<Real>> squares_;  // squares_[j] = exp(P)^(2^j), j = 0..s-1
};

}  // namespace cuctx

#endif  // CUCTX_MATRIX_MATRIX_EXPONENTIAL_H_
