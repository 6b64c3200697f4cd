// matrix/matrix-lapack.cc: MatrixBase SVD, general eigendecomposition, determinant and power.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/lapack-wrappers.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace cuctx {

using internal::CheckLapackInfo;
using internal::ShapeOf;

namespace {

// The leading dimension LAPACK sees for a row-major matrix (the column-major transpose). A matrix
// of at most one row may have any stride, and LAPACK never steps by it then, but still wants it
// >= the column count.
template <typename Real>
int LapackLd(const MatrixBase<Real>& m) {
  return m.NumRows() <= 1 ? std::max<int>(1, m.NumCols()) : m.Stride();
}

template <typename Real>
void CheckFinite(const char* op, const MatrixBase<Real>& m) {
  for (MatrixIndexT r = 0; r < m.NumRows(); ++r) {
    const Real* row = m.RowData(r);
    for (MatrixIndexT c = 0; c < m.NumCols(); ++c)
      if (!std::isfinite(row[c]))
        CUCTX_ERR << op << ": input element (" << r << ", " << c << ") is " << row[c]
                  << "; LAPACK needs finite values";
  }
}

// log |det| of an n x n matrix from getrf's factors `lu` (U's diagonal) and its one-based row
// interchanges, with the determinant's sign in *sign.
double LuLogDet(const MatrixBase<double>& lu, const std::vector<int>& ipiv, int* sign) {
  double log_det = 0.0;
  *sign = 1;
  for (MatrixIndexT i = 0; i < lu.NumRows(); ++i) {
    const double u = lu(i, i);
    log_det += std::log(std::fabs(u));
    if (u < 0) *sign = -*sign;
    if (ipiv[i] != i + 1) *sign = -*sign;
  }
  return log_det;
}

template <typename Real>
void CheckNotOverlapping(const char* op, const MatrixBase<Real>* a, const char* a_name,
                         const MatrixBase<Real>* b, const char* b_name) {
  if (a != nullptr && b != nullptr && internal::Overlaps(*a, *b))
    CUCTX_ERR << op << ": " << a_name << " and " << b_name << " overlap in memory";
}

// Thin SVD of *a (destroyed) with the checks of MatrixBase::Svd, naming `op` in errors.
template <typename Real>
void SvdInPlace(const char* op, MatrixBase<Real>* a, VectorBase<Real>* s, MatrixBase<Real>* U,
                MatrixBase<Real>* Vt) {
  const MatrixIndexT m = a->NumRows(), n = a->NumCols(), k = std::min(m, n);
  CUCTX_CHECK(s != nullptr) << op << ": s must not be null";
  if (s->Dim() != k)
    CUCTX_ERR << op << ": s has dimension " << s->Dim() << " but a " << ShapeOf(*a)
              << " matrix has " << k << " singular values";
  if (U != nullptr && (U->NumRows() != m || U->NumCols() != k))
    CUCTX_ERR << op << ": U is " << ShapeOf(*U) << " but must be " << m << "x" << k << " for a "
              << ShapeOf(*a) << " matrix";
  if (Vt != nullptr && (Vt->NumRows() != k || Vt->NumCols() != n))
    CUCTX_ERR << op << ": Vt is " << ShapeOf(*Vt) << " but must be " << k << "x" << n << " for a "
              << ShapeOf(*a) << " matrix";
  CheckNotOverlapping<Real>(op, U, "U", Vt, "Vt");
  CheckNotOverlapping<Real>(op, U, "U", a, "the input");
  CheckNotOverlapping<Real>(op, Vt, "Vt", a, "the input");
  if (k == 0) return;
  CheckFinite(op, *a);
  // LAPACK sees the column-major n x m matrix A^T = V S U^T: its left vectors (n x k, column-
  // major) are the rows of our row-major Vt, and its right vectors' transpose (k x m, column-
  // major) is our row-major U. So each output is written in place with its own stride.
  const int info = internal::LapackGesvd<Real>(
      Vt != nullptr ? 'S' : 'N', U != nullptr ? 'S' : 'N', n, m, a->Data(), LapackLd(*a), s->Data(),
      Vt != nullptr ? Vt->Data() : nullptr, Vt != nullptr ? LapackLd(*Vt) : 1,
      U != nullptr ? U->Data() : nullptr, U != nullptr ? LapackLd(*U) : 1);
  CheckLapackInfo<Real>(info, op, "gesvd_", "the bidiagonal QR iteration did not converge");
}

}  // namespace

template <typename Real>
void MatrixBase<Real>::DestructiveSvd(VectorBase<Real>* s, MatrixBase<Real>* U,
                                      MatrixBase<Real>* Vt) {
  SvdInPlace("MatrixBase::DestructiveSvd", this, s, U, Vt);
}

template <typename Real>
void MatrixBase<Real>::Svd(VectorBase<Real>* s, MatrixBase<Real>* U, MatrixBase<Real>* Vt) const {
  Matrix<Real> tmp(*this);
  SvdInPlace("MatrixBase::Svd", &tmp, s, U, Vt);
}

template <typename Real>
Real MatrixBase<Real>::MinSingularValue() const {
  CUCTX_CHECK(num_rows_ > 0 && num_cols_ > 0)
      << "MatrixBase::MinSingularValue: empty " << ShapeOf(*this) << " matrix";
  Vector<Real> s(std::min(num_rows_, num_cols_));
  Svd(&s);
  return s.Min();
}

template <typename Real>
Real MatrixBase<Real>::Cond() const {
  CUCTX_CHECK(num_rows_ > 0 && num_cols_ > 0)
      << "MatrixBase::Cond: empty " << ShapeOf(*this) << " matrix";
  Vector<Real> s(std::min(num_rows_, num_cols_));
  Svd(&s);
  const Real max = s.Max(), min = s.Min();
  // Kaldi's value for a singular matrix (it overflows to inf in float).
  return min > 0 ? max / min : static_cast<Real>(1.0e+100);
}

template <typename Real>
Real MatrixBase<Real>::LogDet(Real* det_sign) const {
  static const char* const kOp = "MatrixBase::LogDet";
  CUCTX_CHECK(num_rows_ == num_cols_) << kOp << ": matrix " << ShapeOf(*this) << " is not square";
  const MatrixIndexT n = num_rows_;
  if (n == 0) {
    if (det_sign != nullptr) *det_sign = 1;
    return 0;
  }
  CheckFinite(kOp, *this);
  // det(A^T) == det(A), so the row-major copy is factored as it lies.
  Matrix<double> lu(*this);
  std::vector<int> ipiv(n);
  const int info = internal::LapackGetrf<double>(n, n, lu.Data(), LapackLd(lu), ipiv.data());
  if (info > 0) {  // An exactly zero pivot: singular.
    if (det_sign != nullptr) *det_sign = 0;
    return -std::numeric_limits<Real>::infinity();
  }
  CheckLapackInfo<double>(info, kOp, "getrf_", "");
  int sign = 1;
  const double log_det = LuLogDet(lu, ipiv, &sign);
  if (det_sign != nullptr) *det_sign = sign;
  return static_cast<Real>(log_det);
}

template <typename Real>
void MatrixBase<Real>::Invert(Real* log_det, Real* det_sign, bool inverse_needed) {
  static const char* const kOp = "MatrixBase::Invert";
  CUCTX_CHECK(num_rows_ == num_cols_) << "Invert: matrix " << ShapeOf(*this) << " is not square";
  const MatrixIndexT n = num_rows_;
  if (n == 0) {
    if (log_det != nullptr) *log_det = 0;
    if (det_sign != nullptr) *det_sign = 1;
    return;
  }
  CheckFinite(kOp, *this);
  // A row-major matrix is LAPACK's transpose: det(A^T) == det(A), and the inverse of A^T read
  // row-major is A^-1, so the copy is factored and inverted as it lies.
  Matrix<double> lu(*this);
  std::vector<int> ipiv(n);
  const int info = internal::LapackGetrf<double>(n, n, lu.Data(), LapackLd(lu), ipiv.data());
  if (info > 0) {  // An exactly zero pivot: singular.
    if (log_det != nullptr) *log_det = -std::numeric_limits<Real>::infinity();
    if (det_sign != nullptr) *det_sign = 0;
    if (inverse_needed) CUCTX_ERR << "Invert: the " << ShapeOf(*this) << " matrix is singular";
    return;
  }
  CheckLapackInfo<double>(info, kOp, "getrf_", "");
  int sign = 1;
  const double logdet = LuLogDet(lu, ipiv, &sign);
  if (log_det != nullptr) *log_det = static_cast<Real>(logdet);
  if (det_sign != nullptr) *det_sign = static_cast<Real>(sign);
  if (!inverse_needed) return;
  CheckLapackInfo<double>(internal::LapackGetriDouble(n, lu.Data(), LapackLd(lu), ipiv.data()), kOp,
                          "getri_", "the matrix is singular");
  CopyFromMat(lu);
}

template <typename Real>
void MatrixBase<Real>::Eig(MatrixBase<Real>* P, VectorBase<Real>* eigs_real,
                           VectorBase<Real>* eigs_imag) const {
  static const char* const kOp = "MatrixBase::Eig";
  CUCTX_CHECK(num_rows_ == num_cols_) << kOp << ": matrix " << ShapeOf(*this) << " is not square";
  const MatrixIndexT n = num_rows_;
  if (P != nullptr && (P->NumRows() != n || P->NumCols() != n))
    CUCTX_ERR << kOp << ": P is " << ShapeOf(*P) << " but must be " << n << "x" << n;
  if (eigs_real != nullptr && eigs_real->Dim() != n)
    CUCTX_ERR << kOp << ": eigs_real has dimension " << eigs_real->Dim() << ", not " << n;
  if (eigs_imag != nullptr && eigs_imag->Dim() != n)
    CUCTX_ERR << kOp << ": eigs_imag has dimension " << eigs_imag->Dim() << ", not " << n;
  if (n == 0) return;
  CheckFinite(kOp, *this);
  // geev needs A itself in column-major order, i.e. A^T row-major; the eigenvectors come back
  // column-major, i.e. as the rows of the row-major `vr`.
  Matrix<Real> a(*this, kTrans);
  Matrix<Real> vr(P != nullptr ? n : 0, P != nullptr ? n : 0, kUndefined);
  std::vector<Real> wr(n), wi(n);
  const int info =
      internal::LapackGeev<Real>(P != nullptr ? 'V' : 'N', n, a.Data(), LapackLd(a), wr.data(),
                                 wi.data(), vr.Data(), P != nullptr ? LapackLd(vr) : 1);
  CheckLapackInfo<Real>(info, kOp, "geev_", "the QR algorithm did not compute all eigenvalues");
  if (P != nullptr) P->CopyFromMat(vr, kTrans);
  if (eigs_real != nullptr) eigs_real->CopyFromPtr(wr.data(), n);
  if (eigs_imag != nullptr) eigs_imag->CopyFromPtr(wi.data(), n);
}

template <typename Real>
bool MatrixBase<Real>::Power(Real power) {
  static const char* const kOp = "MatrixBase::Power";
  CUCTX_CHECK(num_rows_ == num_cols_) << kOp << ": matrix " << ShapeOf(*this) << " is not square";
  const MatrixIndexT n = num_rows_;
  if (n == 0) return true;
  Matrix<Real> P(n, n);
  Vector<Real> re(n), im(n);
  Eig(&P, &re, &im);
  for (MatrixIndexT i = 0; i < n; ++i)
    if (!AttemptComplexPower(&re(i), &im(i), power)) return false;
  Matrix<Real> D(n, n);
  CreateEigenvalueMatrix(re, im, &D);
  Real sign = 0;
  P.LogDet(&sign);
  if (sign == 0)
    CUCTX_ERR << kOp << ": the eigenvector matrix of the " << ShapeOf(*this)
              << " matrix is singular (the matrix is defective)";
  Matrix<Real> PD(n, n);
  PD.AddMatMat(1.0, P, kNoTrans, D, kNoTrans, 0.0);
  P.Invert();
  AddMatMat(1.0, PD, kNoTrans, P, kNoTrans, 0.0);
  return true;
}

template <typename Real>
void MatrixBase<Real>::SymPosSemiDefEig(VectorBase<Real>* s, MatrixBase<Real>* P,
                                        Real check_thresh) {
  CUCTX_CHECK(num_rows_ == num_cols_)
      << "MatrixBase::SymPosSemiDefEig: matrix " << ShapeOf(*this) << " is not square";
  SpMatrix<Real> sym(*this, kTakeMean);
  sym.SymPosSemiDefEig(s, P, check_thresh);
}

template <typename Real>
void SortSvd(VectorBase<Real>* s, MatrixBase<Real>* U, MatrixBase<Real>* Vt,
             bool sort_on_absolute_value) {
  CUCTX_CHECK(s != nullptr) << "SortSvd: s must not be null";
  const MatrixIndexT k = s->Dim();
  if (U != nullptr && U->NumCols() != k)
    CUCTX_ERR << "SortSvd: U is " << ShapeOf(*U) << " but s has dimension " << k;
  if (Vt != nullptr && Vt->NumRows() != k)
    CUCTX_ERR << "SortSvd: Vt is " << ShapeOf(*Vt) << " but s has dimension " << k;
  std::vector<MatrixIndexT> order(k);
  std::iota(order.begin(), order.end(), 0);
  const Real* v = s->Data();
  std::stable_sort(order.begin(), order.end(), [&](MatrixIndexT a, MatrixIndexT b) {
    return sort_on_absolute_value ? std::abs(v[a]) > std::abs(v[b]) : v[a] > v[b];
  });
  const Vector<Real> s_copy(*s);
  for (MatrixIndexT i = 0; i < k; ++i) (*s)(i) = s_copy(order[i]);
  if (U != nullptr && U->NumRows() > 0 && k > 0) {
    const Matrix<Real> u_copy(*U);
    U->CopyCols(u_copy, order.data());
  }
  if (Vt != nullptr && Vt->NumCols() > 0 && k > 0) {
    const Matrix<Real> vt_copy(*Vt);
    Vt->CopyRows(vt_copy, order.data());
  }
}

template <typename Real>
void CreateEigenvalueMatrix(const VectorBase<Real>& re, const VectorBase<Real>& im,
                            MatrixBase<Real>* D) {
  const MatrixIndexT n = re.Dim();
  CUCTX_CHECK(D != nullptr) << "CreateEigenvalueMatrix: D must not be null";
  if (im.Dim() != n || D->NumRows() != n || D->NumCols() != n)
    CUCTX_ERR << "CreateEigenvalueMatrix: re has dimension " << n << ", im " << im.Dim()
              << " and D is " << ShapeOf(*D) << "; all must be " << n;
  D->SetZero();
  // Conjugates computed by LAPACK (and powered by AttemptComplexPower) match exactly; allow a
  // relative slack for pairs that were produced some other way.
  auto close = [](Real a, Real b) {
    return std::abs(a - b) <= 1.0e-3 * std::max<Real>(std::abs(a), std::abs(b));
  };
  for (MatrixIndexT j = 0; j < n;) {
    if (im(j) == 0) {
      (*D)(j, j) = re(j);
      ++j;
      continue;
    }
    if (j + 1 >= n || !close(re(j + 1), re(j)) || !close(im(j + 1), -im(j)))
      CUCTX_ERR << "CreateEigenvalueMatrix: complex eigenvalue " << j << " (" << re(j) << " + "
                << im(j) << "i) is not followed by its conjugate";
    (*D)(j, j) = re(j);
    (*D)(j, j + 1) = im(j);
    (*D)(j + 1, j) = -im(j);
    (*D)(j + 1, j + 1) = re(j);
    j += 2;
  }
}

template <typename Real>
bool AttemptComplexPower(Real* x_re, Real* x_im, Real power) {
  if (*x_im == 0 && *x_re < 0) return false;
  const Real r = std::hypot(*x_re, *x_im);
  if (r == 0 && power < 0) return false;
  const Real theta = std::atan2(*x_im, *x_re);
  const Real rp = std::pow(r, power);
  *x_re = rp * std::cos(power * theta);
  *x_im = rp * std::sin(power * theta);
  return true;
}

#define CUCTX_INSTANTIATE_MATRIX_LAPACK(Real)                                                   \
  template void MatrixBase<Real>::DestructiveSvd(VectorBase<Real>*, MatrixBase<Real>*,          \
                                                 MatrixBase<Real>*);                            \
  template void MatrixBase<Real>::Svd(VectorBase<Real>*, MatrixBase<Real>*, MatrixBase<Real>*)  \
      const;                                                                                    \
  template Real MatrixBase<Real>::MinSingularValue() const;                                     \
  template Real MatrixBase<Real>::Cond() const;                                                 \
  template Real MatrixBase<Real>::LogDet(Real*) const;                                          \
  template void MatrixBase<Real>::Invert(Real*, Real*, bool);                                   \
  template void MatrixBase<Real>::Eig(MatrixBase<Real>*, VectorBase<Real>*, VectorBase<Real>*)  \
      const;                                                                                    \
  template bool MatrixBase<Real>::Power(Real);                                                  \
  template void MatrixBase<Real>::SymPosSemiDefEig(VectorBase<Real>*, MatrixBase<Real>*, Real); \
  template void SortSvd(VectorBase<Real>*, MatrixBase<Real>*, MatrixBase<Real>*, bool);         \
  template void CreateEigenvalueMatrix(const VectorBase<Real>&, const VectorBase<Real>&,        \
                                       MatrixBase<Real>*);                                      \
  template bool AttemptComplexPower(Real*, Real*, Real);

CUCTX_INSTANTIATE_MATRIX_LAPACK(float)
CUCTX_INSTANTIATE_MATRIX_LAPACK(double)
#undef CUCTX_INSTANTIATE_MATRIX_LAPACK

}  // namespace cuctx
