// matrix/matrix-functions-extra.cc: Kaldi-parity SVD/eigenvalue helpers (SortSvd,
// CreateEigenvalueMatrix, AttemptComplexPower).
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix-check.h"
#include "matrix/matrix-functions.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace cuctx {

using internal::ShapeOf;

template <typename Real>
void SortSvd(VectorBase<Real>* s, MatrixBase<Real>* U, MatrixBase<Real>* Vt,
             bool sort_on_absolute_value) {
  const MatrixIndexT n = s->Dim();
  if (U != nullptr && U->NumCols() != n)
    CUCTX_ERR << "SortSvd: U is " << ShapeOf(*U) << " but s has dimension " << n;
  if (Vt != nullptr && Vt->NumRows() != n)
    CUCTX_ERR << "SortSvd: Vt is " << ShapeOf(*Vt) << " but s has dimension " << n;
  std::vector<MatrixIndexT> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](MatrixIndexT i) { return sort_on_absolute_value ? std::abs((*s)(i)) : (*s)(i); };
  std::stable_sort(order.begin(), order.end(),
                   [&](MatrixIndexT a, MatrixIndexT b) { return key(a) > key(b); });
  const Vector<Real> s_old(*s);
  for (MatrixIndexT i = 0; i < n; ++i) (*s)(i) = s_old(order[i]);
  if (U != nullptr) {
    const Matrix<Real> U_old(*U);
    for (MatrixIndexT i = 0; i < n; ++i)
      for (MatrixIndexT r = 0; r < U->NumRows(); ++r) (*U)(r, i) = U_old(r, order[i]);
  }
  if (Vt != nullptr) {
    const Matrix<Real> Vt_old(*Vt);
    for (MatrixIndexT i = 0; i < n; ++i) Vt->Row(i).CopyFromVec(Vt_old.Row(order[i]));
  }
}

template <typename Real>
void CreateEigenvalueMatrix(const VectorBase<Real>& real, const VectorBase<Real>& imag,
                            MatrixBase<Real>* D) {
  const MatrixIndexT n = real.Dim();
  if (imag.Dim() != n || D->NumRows() != n || D->NumCols() != n)
    CUCTX_ERR << "CreateEigenvalueMatrix: real has dimension " << n << ", imag " << imag.Dim()
              << ", D is " << ShapeOf(*D);
  auto close = [](Real a, Real b) { return std::abs(a - b) <= 1e-4 * (std::abs(a) + std::abs(b)); };
  D->SetZero();
  for (MatrixIndexT j = 0; j < n;) {
    if (imag(j) == 0) {
      (*D)(j, j) = real(j);
      ++j;
      continue;
    }
    if (j + 1 >= n || !close(imag(j + 1), -imag(j)) || !close(real(j + 1), real(j)))
      CUCTX_ERR << "CreateEigenvalueMatrix: complex eigenvalue " << j << " (" << real(j) << ", "
                << imag(j) << ") is not followed by its conjugate";
    const Real re = real(j), im = imag(j);
    (*D)(j, j) = re;
    (*D)(j, j + 1) = im;
    (*D)(j + 1, j) = -im;
    (*D)(j + 1, j + 1) = re;
    j += 2;
  }
}

template <typename Real>
bool AttemptComplexPower(Real* x_re, Real* x_im, Real power) {
  if (*x_re < 0 && *x_im == 0) return false;  // on the branch cut: no principal value
  const Real radius = std::hypot(*x_re, *x_im);
  if (radius == 0 && power < 0) return false;
  const Real angle = std::atan2(*x_im, *x_re) * power;
  const Real new_radius = std::pow(radius, power);
  *x_re = new_radius * std::cos(angle);
  *x_im = new_radius * std::sin(angle);
  return true;
}

#define CUCTX_INSTANTIATE_FUNCTIONS_EXTRA(R)                                       \
  template void SortSvd(VectorBase<R>*, MatrixBase<R>*, MatrixBase<R>*, bool);     \
  template void CreateEigenvalueMatrix(const VectorBase<R>&, const VectorBase<R>&, \
                                       MatrixBase<R>*);                            \
  template bool AttemptComplexPower(R*, R*, R)

CUCTX_INSTANTIATE_FUNCTIONS_EXTRA(float);
CUCTX_INSTANTIATE_FUNCTIONS_EXTRA(double);

}  // namespace cuctx
