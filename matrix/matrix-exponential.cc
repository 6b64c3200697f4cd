// matrix/matrix-exponential.cc: MatrixExponential by scaling and squaring of a Horner-evaluated
// Taylor polynomial, and its reverse-mode derivative (see the header for the algorithm).
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix-exponential.h"

#include "matrix/matrix-check.h"

#include <cmath>
#include <type_traits>

namespace cuctx {

using internal::ShapeOf;

namespace {

// Taylor degree K for ||P||_inf <= 1/2 (header: truncation error below the rounding unit).
template <typename Real>
int TaylorDegree() {
  return std::is_same<Real, float>::value ? 9 : 14;
}

// The infinity norm (largest absolute row sum), which bounds the spectral radius; NaN or inf
// if M holds one.
template <typename Real>
double InfNorm(const MatrixBase<Real>& M) {
  double norm = 0.0;
  for (MatrixIndexT r = 0; r < M.NumRows(); ++r) {
    double sum = 0.0;
    for (MatrixIndexT c = 0; c < M.NumCols(); ++c) sum += std::abs(M(r, c));
    if (!std::isfinite(sum)) return sum;  // std::max would drop a NaN
    norm = std::max(norm, sum);
  }
  return norm;
}

}  // namespace

template <typename Real>
void MatrixExponential<Real>::Compute(const MatrixBase<Real>& M, MatrixBase<Real>* X) {
  const MatrixIndexT n = M.NumRows();
  if (M.NumCols() != n)
    CUCTX_ERR << "MatrixExponential::Compute: M is " << ShapeOf(M) << ", not square";
  internal::CheckSameShape("MatrixExponential::Compute", *X, "X", M, "M");
  internal::CheckNoOverlap("MatrixExponential::Compute", *X, M, "M");
  const double norm = InfNorm(M);
  if (!std::isfinite(norm))
    CUCTX_ERR << "MatrixExponential::Compute: M (" << ShapeOf(M) << ") holds a NaN or infinity";

  dim_ = n;
  num_squarings_ = 0;
  // Halve until ||M|| / 2^s <= 1/2; frexp gives the binary exponent without a loop.
  if (norm > 0.5) {
    int exponent = 0;
    std::frexp(norm / 0.5, &exponent);  // norm / 0.5 in [2^(e-1), 2^e)
    num_squarings_ = exponent;
  }
  scale_ = static_cast<Real>(std::ldexp(1.0, -num_squarings_));
  P_ = Matrix<Real>(M);
  P_.Scale(scale_);

  const int K = TaylorDegree<Real>();
  horner_.assign(K + 1, Matrix<Real>());
  horner_[K].Resize(n, n);
  horner_[K].SetUnit();
  Matrix<Real> H(n, n, kUndefined);
  for (int k = K; k >= 1; --k) {
    // H_{k-1} = I + P H_k / k.
    H.AddMatMat(Real(1.0 / k), P_, kNoTrans, horner_[k], kNoTrans, 0.0);
    H.AddToDiag(1.0);
    if (k > 1) horner_[k - 1] = H;
  }
  squares_.assign(num_squarings_, Matrix<Real>());
  for (int j = 0; j < num_squarings_; ++j) {
    squares_[j] = H;
    H.AddMatMat(1.0, squares_[j], kNoTrans, squares_[j], kNoTrans, 0.0);
  }
  X->CopyFromMat(H);
}

template <typename Real>
void MatrixExponential<Real>::Backprop(const MatrixBase<Real>& hX, MatrixBase<Real>* hM) const {
  if (dim_ < 0) CUCTX_ERR << "MatrixExponential::Backprop: Compute was never called";
  if (hX.NumRows() != dim_ || hX.NumCols() != dim_ || hM->NumRows() != dim_ ||
      hM->NumCols() != dim_)
    CUCTX_ERR << "MatrixExponential::Backprop: hX is " << ShapeOf(hX) << " and hM is "
              << ShapeOf(*hM) << " but the last Compute was " << dim_ << "x" << dim_;
  const MatrixIndexT n = dim_;
  // Squarings backwards: Y = E E gives dE = dY E^T + E^T dY.
  Matrix<Real> grad(hX), next(n, n, kUndefined);
  for (int j = num_squarings_ - 1; j >= 0; --j) {
    next.AddMatMat(1.0, grad, kNoTrans, squares_[j], kTrans, 0.0);
    next.AddMatMat(1.0, squares_[j], kTrans, grad, kNoTrans, 1.0);
    grad.Swap(&next);
  }
  // Horner steps backwards: H_{k-1} = I + P H_k / k gives dP += dH_{k-1} H_k^T / k and
  // dH_k = P^T dH_{k-1} / k; grad holds dH_{k-1} on entry to step k.
  const int K = TaylorDegree<Real>();
  Matrix<Real> dP(n, n);
  for (int k = 1; k <= K; ++k) {
    dP.AddMatMat(Real(1.0 / k), grad, kNoTrans, horner_[k], kTrans, 1.0);
    if (k < K) {
      next.AddMatMat(Real(1.0 / k), P_, kTrans, grad, kNoTrans, 0.0);
      grad.Swap(&next);
    }
  }
  // P = M * 2^-s.
  hM->CopyFromMat(dP);
  hM->Scale(scale_);
}

template class MatrixExponential<float>;
template class MatrixExponential<double>;

}  // namespace cuctx
