// matrix/sp-matrix-eig.cc: SpMatrix symmetric eigendecomposition and the functions built on it.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/lapack-wrappers.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace cuctx {

namespace {

// All eigenvalues (ascending, into w[0..n)) and, if P is not null, the eigenvectors (columns of
// the n x n *P) of the symmetric A. Throws naming `op` on non-finite input or a LAPACK failure.
template <typename Real>
void SymmetricEig(const char* op, const SpMatrix<Real>& A, Real* w, MatrixBase<Real>* P) {
  const MatrixIndexT n = A.NumRows();
  // The full symmetric matrix: its column-major and row-major forms are the same.
  std::vector<Real> a(static_cast<size_t>(n) * n);
  for (MatrixIndexT r = 0; r < n; ++r) {
    for (MatrixIndexT c = 0; c <= r; ++c) {
      const Real v = A(r, c);
      if (!std::isfinite(v))
        CUCTX_ERR << op << ": element (" << r << ", " << c << ") is " << v
                  << "; LAPACK needs finite values";
      a[static_cast<size_t>(r) * n + c] = a[static_cast<size_t>(c) * n + r] = v;
    }
  }
  std::vector<Real> z(P != nullptr ? static_cast<size_t>(n) * n : 1);
  const int info =
      internal::LapackSyevr<Real>(P != nullptr ? 'V' : 'N', n, a.data(), n, w, z.data(), n);
  internal::CheckLapackInfo<Real>(info, op, "syevr_", "internal error in the MRRR algorithm");
  if (P == nullptr) return;
  // z holds the eigenvectors column-major: eigenvector j is z[j * n .. j * n + n).
  for (MatrixIndexT i = 0; i < n; ++i) {
    Real* row = P->RowData(i);
    for (MatrixIndexT j = 0; j < n; ++j) row[j] = z[static_cast<size_t>(j) * n + i];
  }
}

// *out = P diag(s) P^T (P square, s of its size), symmetrized.
template <typename Real>
void Reconstruct(const MatrixBase<Real>& P, const VectorBase<Real>& s, SpMatrix<Real>* out) {
  const MatrixIndexT n = P.NumRows();
  Matrix<Real> ps(P);
  ps.MulColsVec(s);
  Matrix<Real> full(n, n);
  full.AddMatMat(1.0, ps, kNoTrans, P, kTrans, 0.0);
  out->CopyFromMat(full, kTakeMean);
}

}  // namespace

template <typename Real>
void SpMatrix<Real>::Eig(VectorBase<Real>* s, MatrixBase<Real>* P) const {
  const MatrixIndexT n = this->NumRows();
  CUCTX_CHECK(s != nullptr) << "SpMatrix::Eig: s must not be null";
  if (s->Dim() != n)
    CUCTX_ERR << "SpMatrix::Eig: s has dimension " << s->Dim() << " but the matrix is " << n << "x"
              << n;
  if (P != nullptr && (P->NumRows() != n || P->NumCols() != n))
    CUCTX_ERR << "SpMatrix::Eig: P is " << internal::ShapeOf(*P) << " but must be " << n << "x"
              << n;
  if (n == 0) return;
  SymmetricEig("SpMatrix::Eig", *this, s->Data(), P);
}

template <typename Real>
void SpMatrix<Real>::TopEigs(VectorBase<Real>* s, MatrixBase<Real>* P,
                             MatrixIndexT /*lanczos_dim*/) const {
  const MatrixIndexT n = this->NumRows();
  CUCTX_CHECK(s != nullptr && P != nullptr) << "SpMatrix::TopEigs: s and P must not be null";
  const MatrixIndexT e = s->Dim();
  if (e > n)
    CUCTX_ERR << "SpMatrix::TopEigs: asked for " << e << " eigenvalues of a " << n << "x" << n
              << " matrix";
  if (P->NumRows() != n || P->NumCols() != e)
    CUCTX_ERR << "SpMatrix::TopEigs: P is " << internal::ShapeOf(*P) << " but must be " << n << "x"
              << e;
  if (e == 0) return;
  Vector<Real> w(n);
  Matrix<Real> all(n, n);
  SymmetricEig("SpMatrix::TopEigs", *this, w.Data(), &all);
  std::vector<MatrixIndexT> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](MatrixIndexT a, MatrixIndexT b) { return std::abs(w(a)) > std::abs(w(b)); });
  for (MatrixIndexT j = 0; j < e; ++j) {
    (*s)(j) = w(order[j]);
    for (MatrixIndexT i = 0; i < n; ++i) (*P)(i, j) = all(i, order[j]);
  }
}

template <typename Real>
void SpMatrix<Real>::SymPosSemiDefEig(VectorBase<Real>* s, MatrixBase<Real>* P,
                                      Real tolerance) const {
  Eig(s, P);
  if (s->Dim() == 0) return;
  const Real max = s->Max(), min = s->Min();
  if (!(-min <= tolerance * max))
    CUCTX_ERR << "SpMatrix::SymPosSemiDefEig: the matrix is not positive semidefinite: smallest "
              << "eigenvalue " << min << ", largest " << max << " (tolerance " << tolerance << ")";
  s->ApplyFloor(0.0);
}

template <typename Real>
Real SpMatrix<Real>::MaxAbsEig() const {
  if (this->NumRows() == 0) return 0;
  Vector<Real> s(this->NumRows());
  Eig(&s, nullptr);
  return std::max(s.Max(), -s.Min());
}

template <typename Real>
Real SpMatrix<Real>::Cond() const {
  Matrix<Real> full(this->NumRows(), this->NumRows());
  CopyToMat(&full);
  return full.Cond();
}

template <typename Real>
void SpMatrix<Real>::ApplyPow(Real exponent) {
  const MatrixIndexT n = this->NumRows();
  if (exponent == 1 || n == 0) return;
  Vector<Real> l(n);
  Matrix<Real> P(n, n);
  SymPosSemiDefEig(&l, &P);
  for (MatrixIndexT i = 0; i < n; ++i) {
    if (l(i) == 0 && exponent < 0)
      CUCTX_ERR << "SpMatrix::ApplyPow: eigenvalue " << i << " is zero and the exponent "
                << exponent << " is negative";
    l(i) = std::pow(l(i), exponent);
  }
  Reconstruct(P, l, this);
}

template <typename Real>
int SpMatrix<Real>::ApplyFloor(const SpMatrix<Real>& C, Real alpha, bool verbose) {
  const MatrixIndexT n = this->NumRows();
  if (C.NumRows() != n)
    CUCTX_ERR << "SpMatrix::ApplyFloor: floor matrix is " << C.NumRows() << "x" << C.NumRows()
              << " but *this is " << n << "x" << n;
  CUCTX_CHECK(alpha > 0) << "SpMatrix::ApplyFloor: alpha must be positive, got " << alpha;
  if (n == 0) return 0;
  if (!C.IsPosDef()) CUCTX_ERR << "SpMatrix::ApplyFloor: the floor matrix is not positive definite";
  // In the basis where alpha C is the identity (alpha C = L L^T), flooring *this at alpha C is
  // flooring the eigenvalues of D = L^-1 (*this) L^-T at 1. Done in double precision.
  TpMatrix<double> L(n);
  L.Cholesky(SpMatrix<double>(C));
  L.Scale(std::sqrt(static_cast<double>(alpha)));
  TpMatrix<double> l_inv(L);
  l_inv.Invert();
  Matrix<double> l_full(n, n), l_inv_full(n, n), a(n, n), tmp(n, n), d_full(n, n);
  L.CopyToMat(&l_full);
  l_inv.CopyToMat(&l_inv_full);
  CopyToMat(&a);
  tmp.AddMatMat(1.0, l_inv_full, kNoTrans, a, kNoTrans, 0.0);
  d_full.AddMatMat(1.0, tmp, kNoTrans, l_inv_full, kTrans, 0.0);
  SpMatrix<double> D(d_full, kTakeMean);
  Vector<double> l(n);
  Matrix<double> U(n, n);
  D.Eig(&l, &U);
  if (verbose) CUCTX_LOG << "ApplyFloor: flooring the following eigenvalues to 1: " << l;
  int floored = 0;
  for (MatrixIndexT i = 0; i < n; ++i) {
    if (l(i) < 1.0) {
      l(i) = 1.0;
      ++floored;
    }
  }
  Reconstruct(U, l, &D);
  D.CopyToMat(&d_full);
  tmp.AddMatMat(1.0, l_full, kNoTrans, d_full, kNoTrans, 0.0);
  a.AddMatMat(1.0, tmp, kNoTrans, l_full, kTrans, 0.0);
  CopyFromMat(Matrix<Real>(a), kTakeMean);
  return floored;
}

template <typename Real>
int SpMatrix<Real>::ApplyFloor(Real floor) {
  const MatrixIndexT n = this->NumRows();
  if (n == 0) return 0;
  Vector<Real> s(n);
  Matrix<Real> P(n, n);
  Eig(&s, &P);
  int floored = 0;
  for (MatrixIndexT i = 0; i < n; ++i) {
    if (s(i) < floor) {
      s(i) = floor;
      ++floored;
    }
  }
  Reconstruct(P, s, this);
  return floored;
}

template <typename Real>
MatrixIndexT SpMatrix<Real>::LimitCond(Real maxcond, bool invert) {
  CUCTX_CHECK(maxcond > 1) << "SpMatrix::LimitCond: maxcond must exceed 1, got " << maxcond;
  const MatrixIndexT n = this->NumRows();
  if (n == 0) return 0;
  Vector<Real> s(n);
  Matrix<Real> P(n, n);
  SymPosSemiDefEig(&s, &P);
  Real floor = std::max<Real>(s.Max() / maxcond, 0);
  if (floor < static_cast<Real>(1.0e-40)) {
    CUCTX_WARN << "SpMatrix::LimitCond: limiting the eigenvalue floor " << floor << " to 1.0e-40";
    floor = static_cast<Real>(1.0e-40);
  }
  MatrixIndexT floored = 0;
  for (MatrixIndexT i = 0; i < n; ++i) {
    if (s(i) <= floor) ++floored;
    const Real v = std::max(s(i), floor);
    s(i) = invert ? 1 / v : v;
  }
  Reconstruct(P, s, this);
  return floored;
}

template <typename Real>
MatrixIndexT SpMatrix<Real>::LimitCondDouble(Real maxcond, bool invert) {
  SpMatrix<double> d(*this);
  const MatrixIndexT floored = d.LimitCond(maxcond, invert);
  this->CopyFromPacked(d);
  return floored;
}

#define CUCTX_INSTANTIATE_SP_EIG(Real)                                                             \
  template void SpMatrix<Real>::Eig(VectorBase<Real>*, MatrixBase<Real>*) const;                   \
  template void SpMatrix<Real>::TopEigs(VectorBase<Real>*, MatrixBase<Real>*, MatrixIndexT) const; \
  template void SpMatrix<Real>::SymPosSemiDefEig(VectorBase<Real>*, MatrixBase<Real>*, Real)       \
      const;                                                                                       \
  template Real SpMatrix<Real>::MaxAbsEig() const;                                                 \
  template Real SpMatrix<Real>::Cond() const;                                                      \
  template void SpMatrix<Real>::ApplyPow(Real);                                                    \
  template int SpMatrix<Real>::ApplyFloor(const SpMatrix<Real>&, Real, bool);                      \
  template int SpMatrix<Real>::ApplyFloor(Real);                                                   \
  template MatrixIndexT SpMatrix<Real>::LimitCond(Real, bool);                                     \
  template MatrixIndexT SpMatrix<Real>::LimitCondDouble(Real, bool);

CUCTX_INSTANTIATE_SP_EIG(float)
CUCTX_INSTANTIATE_SP_EIG(double)
#undef CUCTX_INSTANTIATE_SP_EIG

}  // namespace cuctx
