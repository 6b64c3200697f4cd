// matrix/sp-matrix-extra.cc: Kaldi-parity SpMatrix products (AddMat2Vec, AddSmat2Sp), LAPACK
// tridiagonalization and symmetric QR, and Log/Exp through SpMatrix::Eig.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/lapack-extra.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"
#include "matrix/packed-matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/vector.h"

#include <cmath>
#include <vector>

namespace cuctx {

using internal::OpCols;
using internal::OpRows;
using internal::ShapeOf;

namespace {

// *S = beta * *S + alpha * (lower triangle of the symmetric n x n F); with beta == 0 the old
// contents are not read.
template <typename Real>
void AddLowerScaled(Real alpha, const MatrixBase<Real>& F, Real beta, SpMatrix<Real>* S) {
  Real* p = S->Data();
  for (MatrixIndexT r = 0; r < F.NumRows(); ++r, p += r) {
    const Real* f = F.RowData(r);
    for (MatrixIndexT c = 0; c <= r; ++c)
      p[c] = (beta == Real(0) ? Real(0) : beta * p[c]) + alpha * f[c];
  }
}

// *S = P diag(f(w)) P^T with S = P diag(w) P^T, computed in double for both precisions through
// SpMatrix<double>::Eig (LAPACK syevr); `name` labels errors, `log` selects f = log (which needs
// w > 0), else f = exp.
template <typename Real>
void ApplyEigenFunction(const char* name, bool log, SpMatrix<Real>* S) {
  const MatrixIndexT n = S->NumRows();
  if (n == 0) return;
  const SpMatrix<double> s_double(*S);
  Vector<double> w(n);
  Matrix<double> p(n, n);
  s_double.Eig(&w, &p);
  for (MatrixIndexT j = 0; j < n; ++j) {
    if (log && !(w(j) > 0.0))
      CUCTX_ERR << name << ": the " << n << "x" << n << " matrix is not positive definite "
                << "(eigenvalue " << w(j) << ")";
    w(j) = log ? std::log(w(j)) : std::exp(w(j));
  }
  Matrix<double> scaled(p);  // column j = f(w_j) * eigenvector j
  scaled.MulColsVec(w);
  Matrix<double> result(n, n, kUndefined);
  result.AddMatMat(1.0, scaled, kNoTrans, p, kTrans, 0.0);
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c) (*S)(r, c) = static_cast<Real>(result(r, c));
}

}  // namespace

template <typename Real>
void SpMatrix<Real>::AddMat2Vec(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType transM,
                                const VectorBase<Real>& v, Real beta) {
  const MatrixIndexT n = this->NumRows();
  if (OpRows(M, transM) != n || OpCols(M, transM) != v.Dim())
    CUCTX_ERR << "AddMat2Vec: shape mismatch: *this is " << n << "x" << n << ", M"
              << (transM == kTrans ? "^T" : "") << " is " << OpRows(M, transM) << "x"
              << OpCols(M, transM) << ", v has dimension " << v.Dim();
  if (n == 0) return;
  // op(M) diag(v) op(M)^T = (op(M) scaled per column by v) op(M)^T.
  Matrix<Real> Mv(M, transM);
  Mv.MulColsVec(v);
  Matrix<Real> full(n, n, kUndefined);
  full.AddMatMat(1.0, Mv, kNoTrans, M, transM == kNoTrans ? kTrans : kNoTrans, 0.0);
  AddLowerScaled(alpha, full, beta, this);
}

template <typename Real>
void SpMatrix<Real>::AddSmat2Sp(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType transM,
                                const SpMatrix<Real>& A, Real beta) {
  const MatrixIndexT n = this->NumRows();
  if (OpRows(M, transM) != n || OpCols(M, transM) != A.NumRows())
    CUCTX_ERR << "AddSmat2Sp: shape mismatch: *this is " << n << "x" << n << ", M"
              << (transM == kTrans ? "^T" : "") << " is " << OpRows(M, transM) << "x"
              << OpCols(M, transM) << ", A is " << A.NumRows() << "x" << A.NumRows();
  if (n == 0) return;
  // A is expanded before *this is written, so A may be *this.
  const Matrix<Real> Af(A);
  Matrix<Real> MA(n, A.NumRows(), kUndefined);
  MA.AddMatMat(1.0, M, transM, Af, kNoTrans, 0.0);
  Matrix<Real> full(n, n, kUndefined);
  full.AddMatMat(1.0, MA, kNoTrans, M, transM == kNoTrans ? kTrans : kNoTrans, 0.0);
  AddLowerScaled(alpha, full, beta, this);
}

template <typename Real>
void SpMatrix<Real>::Tridiagonalize(MatrixBase<Real>* Q) {
  const MatrixIndexT n = this->NumRows();
  if (Q != nullptr && (Q->NumRows() != n || Q->NumCols() != n))
    CUCTX_ERR << "Tridiagonalize: Q is " << ShapeOf(*Q) << " but must be " << n << "x" << n;
  if (n == 0) return;
  std::vector<Real> d(n), e(n), tau(n);
  int info = internal::LapackSptrd(n, this->Data(), d.data(), e.data(), tau.data());
  if (info != 0) CUCTX_ERR << "Tridiagonalize: LAPACK sptrd failed (info " << info << ")";
  if (Q != nullptr) {
    // LAPACK gives S = Ql T Ql^T with Ql column-major; the same array read row-major is Ql^T,
    // which is Kaldi's Q (T = Q S Q^T).
    std::vector<Real> q(static_cast<size_t>(n) * n);
    info = internal::LapackOpgtr(n, this->Data(), tau.data(), q.data());
    if (info != 0) CUCTX_ERR << "Tridiagonalize: LAPACK opgtr failed (info " << info << ")";
    Q->CopyFromMat(SubMatrix<Real>(q.data(), n, n, n));
  }
  this->SetZero();
  for (MatrixIndexT i = 0; i < n; ++i) {
    (*this)(i, i) = d[i];
    if (i + 1 < n) (*this)(i + 1, i) = e[i];
  }
}

template <typename Real>
void SpMatrix<Real>::Qr(MatrixBase<Real>* Q) {
  const MatrixIndexT n = this->NumRows();
  if (Q != nullptr && Q->NumRows() != n)
    CUCTX_ERR << "Qr: Q is " << ShapeOf(*Q) << " but must have " << n << " rows";
  for (MatrixIndexT r = 2; r < n; ++r)
    for (MatrixIndexT c = 0; c + 1 < r; ++c)
      if ((*this)(r, c) != Real(0))
        CUCTX_ERR << "Qr: the matrix is not tridiagonal (element (" << r << ", " << c << ") is "
                  << (*this)(r, c) << ")";
  if (n == 0) return;
  std::vector<Real> d(n), e(n);
  for (MatrixIndexT i = 0; i < n; ++i) {
    d[i] = (*this)(i, i);
    e[i] = i + 1 < n ? (*this)(i + 1, i) : Real(0);
  }
  std::vector<Real> z(Q != nullptr ? static_cast<size_t>(n) * n : 0);
  const int info = internal::LapackSteqr(n, d.data(), e.data(), Q != nullptr ? z.data() : nullptr);
  if (info != 0)
    CUCTX_ERR << "Qr: LAPACK steqr did not converge (" << info << " off-diagonal elements left)";
  if (Q != nullptr) {
    // steqr gives T = Z D Z^T with Z column-major, so the array read row-major is Z^T, and
    // Q^T T Q = (Z^T Q)^T D (Z^T Q).
    const SubMatrix<Real> Zt(z.data(), n, n, n);
    const Matrix<Real> Q_old(*Q);
    Q->AddMatMat(1.0, Zt, kNoTrans, Q_old, kNoTrans, 0.0);
  }
  this->SetZero();
  for (MatrixIndexT i = 0; i < n; ++i) (*this)(i, i) = d[i];
}

template <typename Real>
void SpMatrix<Real>::Log() {
  ApplyEigenFunction("SpMatrix::Log", true, this);
}

template <typename Real>
void SpMatrix<Real>::Exp() {
  ApplyEigenFunction("SpMatrix::Exp", false, this);
}

#define CUCTX_INSTANTIATE_SP_EXTRA(R)                                                 \
  template void SpMatrix<R>::AddMat2Vec(R, const MatrixBase<R>&, MatrixTransposeType, \
                                        const VectorBase<R>&, R);                     \
  template void SpMatrix<R>::AddSmat2Sp(R, const MatrixBase<R>&, MatrixTransposeType, \
                                        const SpMatrix<R>&, R);                       \
  template void SpMatrix<R>::Tridiagonalize(MatrixBase<R>*);                          \
  template void SpMatrix<R>::Qr(MatrixBase<R>*);                                      \
  template void SpMatrix<R>::Log();                                                   \
  template void SpMatrix<R>::Exp()

CUCTX_INSTANTIATE_SP_EXTRA(float);
CUCTX_INSTANTIATE_SP_EXTRA(double);

}  // namespace cuctx
