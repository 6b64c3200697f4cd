// matrix/sp-matrix.cc: SpMatrix conversions, rank updates, inversion, reductions and traces.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/sp-matrix.h"

#include "base/error.h"
#include "matrix/matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace cuctx {

namespace {

inline size_t RowStart(int64 r) { return static_cast<size_t>(r * (r + 1) / 2); }

// Gauss-Jordan elimination with partial pivoting on the full n x n matrix `a` (row-major, double),
// accumulating log|det| and the sign. With `inverse` not null it also turns *inverse (which must
// start as the identity) into a^-1. Returns false if a pivot is numerically zero: smaller than
// n * DBL_EPSILON times the largest |element| of the input.
bool GaussJordan(MatrixIndexT n, std::vector<double>* a, std::vector<double>* inverse,
                 double* log_det, double* sign) {
  double* m = a->data();
  double* inv = inverse ? inverse->data() : nullptr;
  double max_abs = 0.0;
  for (double x : *a) max_abs = std::max(max_abs, std::fabs(x));
  const double threshold = static_cast<double>(n) * DBL_EPSILON * max_abs;
  *log_det = 0.0;
  *sign = 1.0;
  for (MatrixIndexT col = 0; col < n; ++col) {
    MatrixIndexT pivot = col;
    for (MatrixIndexT r = col + 1; r < n; ++r)
      if (std::fabs(m[r * n + col]) > std::fabs(m[pivot * n + col])) pivot = r;
    const double p = m[pivot * n + col];
    if (!(std::fabs(p) > threshold) || !std::isfinite(p)) return false;
    if (pivot != col) {
      for (MatrixIndexT c = 0; c < n; ++c) std::swap(m[pivot * n + c], m[col * n + c]);
      if (inv)
        for (MatrixIndexT c = 0; c < n; ++c) std::swap(inv[pivot * n + c], inv[col * n + c]);
      *sign = -*sign;
    }
    *log_det += std::log(std::fabs(p));
    if (p < 0) *sign = -*sign;
    const double scale = 1.0 / p;
    for (MatrixIndexT c = 0; c < n; ++c) m[col * n + c] *= scale;
    if (inv)
      for (MatrixIndexT c = 0; c < n; ++c) inv[col * n + c] *= scale;
    // Without an inverse only the rows below need eliminating (that is enough for the determinant).
    for (MatrixIndexT r = inv ? 0 : col + 1; r < n; ++r) {
      if (r == col) continue;
      const double f = m[r * n + col];
      if (f == 0.0) continue;
      for (MatrixIndexT c = col; c < n; ++c) m[r * n + c] -= f * m[col * n + c];
      if (inv)
        for (MatrixIndexT c = 0; c < n; ++c) inv[r * n + c] -= f * inv[col * n + c];
    }
  }
  return true;
}

template <typename Real>
std::vector<double> FullFromPacked(const Real* packed, MatrixIndexT n) {
  std::vector<double> full(static_cast<size_t>(n) * n);
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c)
      full[static_cast<size_t>(r) * n + c] = full[static_cast<size_t>(c) * n + r] =
          packed[RowStart(r) + c];
  return full;
}

}  // namespace

template <typename Real>
void SpMatrix<Real>::CopyFromMat(const MatrixBase<Real>& M, SpCopyType copy_type) {
  if (M.NumRows() != M.NumCols())
    CUCTX_ERR << "SpMatrix::CopyFromMat: matrix is " << M.NumRows() << " x " << M.NumCols()
              << ", expected square";
  if (copy_type != kTakeLower && copy_type != kTakeUpper && copy_type != kTakeMean &&
      copy_type != kTakeMeanAndCheck)
    CUCTX_ERR << "SpMatrix::CopyFromMat: invalid SpCopyType " << static_cast<int>(copy_type);
  const MatrixIndexT n = M.NumRows();
  if (copy_type == kTakeMeanAndCheck) {
    for (MatrixIndexT r = 0; r < n; ++r) {
      for (MatrixIndexT c = 0; c < r; ++c) {
        const double a = M(r, c), b = M(c, r);
        if (std::fabs(a - b) > 1.0e-04 * (std::fabs(a) + std::fabs(b)) + 1.0e-20)
          CUCTX_ERR << "SpMatrix::CopyFromMat(kTakeMeanAndCheck): matrix is not symmetric: M(" << r
                    << ", " << c << ") = " << a << " but M(" << c << ", " << r << ") = " << b;
      }
    }
  }
  this->Resize(n, kUndefined);
  Real* p = this->data_.data();
  for (MatrixIndexT r = 0; r < n; ++r) {
    for (MatrixIndexT c = 0; c <= r; ++c) {
      switch (copy_type) {
        case kTakeLower:
          *p++ = M(r, c);
          break;
        case kTakeUpper:
          *p++ = M(c, r);
          break;
        default:
          *p++ = static_cast<Real>(0.5) * (M(r, c) + M(c, r));
          break;
      }
    }
  }
}

template <typename Real>
template <typename OtherReal>
void SpMatrix<Real>::CopyToMat(MatrixBase<OtherReal>* M) const {
  CUCTX_CHECK(M != nullptr) << "null destination matrix";
  const MatrixIndexT n = this->num_rows_;
  if (M->NumRows() != n || M->NumCols() != n)
    CUCTX_ERR << "SpMatrix::CopyToMat: destination is " << M->NumRows() << " x " << M->NumCols()
              << ", expected " << n << " x " << n;
  const Real* p = this->data_.data();
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c, ++p) (*M)(r, c) = (*M)(c, r) = static_cast<OtherReal>(*p);
}

template <typename Real>
void SpMatrix<Real>::AddMat2(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType transM,
                             Real beta) {
  const MatrixIndexT n = this->num_rows_;
  const MatrixIndexT m_rows = (transM == kNoTrans ? M.NumRows() : M.NumCols());
  const MatrixIndexT k = (transM == kNoTrans ? M.NumCols() : M.NumRows());
  if (transM != kNoTrans && transM != kTrans)
    CUCTX_ERR << "SpMatrix::AddMat2: invalid transpose value " << static_cast<int>(transM);
  if (m_rows != n)
    CUCTX_ERR << "SpMatrix::AddMat2: M is " << M.NumRows() << " x " << M.NumCols()
              << (transM == kTrans ? " (transposed)" : "") << ", incompatible with size " << n;
  if (n == 0) return;
  // BLAS syrk computes the lower triangle of the product into a dense scratch matrix.
  Matrix<Real> product(n, n);
  if (k > 0) product.SymAddMat2(alpha, M, transM, Real(0));
  Real* p = this->data_.data();
  for (MatrixIndexT r = 0; r < n; ++r) {
    const Real* row = product.RowData(r);
    for (MatrixIndexT c = 0; c <= r; ++c, ++p)
      *p = (beta == Real(0) ? Real(0) : beta * *p) + row[c];
  }
}

template <typename Real>
template <typename OtherReal>
void SpMatrix<Real>::AddVec2(Real alpha, const VectorBase<OtherReal>& v) {
  const MatrixIndexT n = this->num_rows_;
  if (v.Dim() != n)
    CUCTX_ERR << "SpMatrix::AddVec2: vector dim " << v.Dim() << ", matrix size " << n;
  const OtherReal* x = v.Data();
  Real* p = this->data_.data();
  for (MatrixIndexT r = 0; r < n; ++r) {
    const Real ar = alpha * static_cast<Real>(x[r]);
    for (MatrixIndexT c = 0; c <= r; ++c) *p++ += ar * static_cast<Real>(x[c]);
  }
}

template <typename Real>
void SpMatrix<Real>::AddVecVec(Real alpha, const VectorBase<Real>& v, const VectorBase<Real>& w) {
  const MatrixIndexT n = this->num_rows_;
  if (v.Dim() != n || w.Dim() != n)
    CUCTX_ERR << "SpMatrix::AddVecVec: vector dims " << v.Dim() << " and " << w.Dim()
              << ", matrix size " << n;
  Real* p = this->data_.data();
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c) *p++ += alpha * (v(r) * w(c) + w(r) * v(c));
}

template <typename Real>
template <typename OtherReal>
void SpMatrix<Real>::AddDiagVec(Real alpha, const VectorBase<OtherReal>& v) {
  const MatrixIndexT n = this->num_rows_;
  if (v.Dim() != n)
    CUCTX_ERR << "SpMatrix::AddDiagVec: vector dim " << v.Dim() << ", matrix size " << n;
  for (MatrixIndexT i = 0; i < n; ++i)
    this->data_[RowStart(i + 1) - 1] += alpha * static_cast<Real>(v(i));
}

template <typename Real>
void SpMatrix<Real>::Invert(Real* log_det, Real* det_sign, bool inverse_needed) {
  const MatrixIndexT n = this->num_rows_;
  if (n == 0) {
    if (log_det) *log_det = 0;
    if (det_sign) *det_sign = 1;
    return;
  }
  std::vector<double> a = FullFromPacked(this->data_.data(), n);
  std::vector<double> inv;
  if (inverse_needed) {
    inv.assign(static_cast<size_t>(n) * n, 0.0);
    for (MatrixIndexT i = 0; i < n; ++i) inv[static_cast<size_t>(i) * n + i] = 1.0;
  }
  double ld = 0.0, sign = 1.0;
  if (!GaussJordan(n, &a, inverse_needed ? &inv : nullptr, &ld, &sign)) {
    if (inverse_needed)
      CUCTX_ERR << "SpMatrix::Invert: the " << n << " x " << n << " matrix is singular";
    if (log_det) *log_det = -std::numeric_limits<Real>::infinity();
    if (det_sign) *det_sign = 0;
    return;
  }
  if (log_det) *log_det = static_cast<Real>(ld);
  if (det_sign) *det_sign = static_cast<Real>(sign);
  if (!inverse_needed) return;
  // The exact inverse is symmetric; averaging the two triangles removes rounding asymmetry.
  Real* p = this->data_.data();
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c)
      *p++ = static_cast<Real>(
          0.5 * (inv[static_cast<size_t>(r) * n + c] + inv[static_cast<size_t>(c) * n + r]));
}

template <typename Real>
Real SpMatrix<Real>::LogDet(Real* det_sign) const {
  Real log_det = 0;
  SpMatrix<Real> copy(*this);
  copy.Invert(&log_det, det_sign, false);
  return log_det;
}

template <typename Real>
Real SpMatrix<Real>::LogPosDefDet() const {
  std::vector<double> L;
  MatrixIndexT bad_row = 0;
  double bad_pivot = 0.0;
  if (!internal::PackedCholesky(this->data_.data(), this->num_rows_, &L, &bad_row, &bad_pivot))
    CUCTX_ERR << "SpMatrix::LogPosDefDet: the " << this->num_rows_ << " x " << this->num_rows_
              << " matrix is not positive definite (pivot " << bad_pivot << " at row " << bad_row
              << ")";
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < this->num_rows_; ++i) sum += std::log(L[RowStart(i + 1) - 1]);
  return static_cast<Real>(2.0 * sum);
}

template <typename Real>
bool SpMatrix<Real>::IsPosDef() const {
  std::vector<double> L;
  MatrixIndexT bad_row = 0;
  double bad_pivot = 0.0;
  return internal::PackedCholesky(this->data_.data(), this->num_rows_, &L, &bad_row, &bad_pivot);
}

template <typename Real>
Real SpMatrix<Real>::Sum() const {
  double diag = 0.0, off = 0.0;
  const Real* p = this->data_.data();
  for (MatrixIndexT r = 0; r < this->num_rows_; ++r) {
    for (MatrixIndexT c = 0; c < r; ++c) off += *p++;
    diag += *p++;
  }
  return static_cast<Real>(diag + 2.0 * off);
}

template <typename Real>
Real SpMatrix<Real>::FrobeniusNorm() const {
  // Accumulated and rooted in double: through TraceSpSp's Real result the sum of squares of a
  // float matrix with entries near 1e-27 would underflow to 0 although the norm itself is
  // representable (Kaldi's matrix test compares such matrices).
  double diag = 0.0, off = 0.0;
  const Real* p = this->Data();
  for (MatrixIndexT r = 0; r < this->num_rows_; ++r) {
    for (MatrixIndexT c = 0; c < r; ++c, ++p) off += static_cast<double>(*p) * *p;
    diag += static_cast<double>(*p) * *p;
    ++p;
  }
  return static_cast<Real>(std::sqrt(diag + 2.0 * off));
}

template <typename Real>
Real TraceSpSp(const SpMatrix<Real>& A, const SpMatrix<Real>& B) {
  if (A.NumRows() != B.NumRows())
    CUCTX_ERR << "TraceSpSp: sizes " << A.NumRows() << " and " << B.NumRows() << " differ";
  double diag = 0.0, off = 0.0;
  const Real *a = A.Data(), *b = B.Data();
  for (MatrixIndexT r = 0; r < A.NumRows(); ++r) {
    for (MatrixIndexT c = 0; c < r; ++c) off += static_cast<double>(*a++) * *b++;
    diag += static_cast<double>(*a++) * *b++;
  }
  return static_cast<Real>(diag + 2.0 * off);
}

template <typename Real>
Real VecSpVec(const VectorBase<Real>& v1, const SpMatrix<Real>& S, const VectorBase<Real>& v2) {
  const MatrixIndexT n = S.NumRows();
  if (v1.Dim() != n || v2.Dim() != n)
    CUCTX_ERR << "VecSpVec: vector dims " << v1.Dim() << " and " << v2.Dim() << ", matrix size "
              << n;
  double sum = 0.0;
  const Real* p = S.Data();
  for (MatrixIndexT r = 0; r < n; ++r) {
    for (MatrixIndexT c = 0; c < r; ++c, ++p)
      sum += static_cast<double>(*p) *
             (static_cast<double>(v1(r)) * v2(c) + static_cast<double>(v1(c)) * v2(r));
    sum += static_cast<double>(*p++) * v1(r) * v2(r);
  }
  return static_cast<Real>(sum);
}

template <typename Real>
Real TraceSpMat(const SpMatrix<Real>& S, const MatrixBase<Real>& M) {
  const MatrixIndexT n = S.NumRows();
  if (M.NumRows() != n || M.NumCols() != n)
    CUCTX_ERR << "TraceSpMat: matrix is " << M.NumRows() << " x " << M.NumCols()
              << ", SpMatrix size " << n;
  double sum = 0.0;
  const Real* p = S.Data();
  for (MatrixIndexT r = 0; r < n; ++r) {
    for (MatrixIndexT c = 0; c < r; ++c, ++p)
      sum += static_cast<double>(*p) * (static_cast<double>(M(r, c)) + M(c, r));
    sum += static_cast<double>(*p++) * M(r, r);
  }
  return static_cast<Real>(sum);
}

#define CUCTX_INSTANTIATE_SP_(Real)                                                                \
  template class SpMatrix<Real>;                                                                   \
  template void SpMatrix<Real>::CopyToMat(MatrixBase<float>*) const;                               \
  template void SpMatrix<Real>::CopyToMat(MatrixBase<double>*) const;                              \
  template void SpMatrix<Real>::AddVec2(Real, const VectorBase<float>&);                           \
  template void SpMatrix<Real>::AddVec2(Real, const VectorBase<double>&);                          \
  template void SpMatrix<Real>::AddDiagVec(Real, const VectorBase<float>&);                        \
  template void SpMatrix<Real>::AddDiagVec(Real, const VectorBase<double>&);                       \
  template Real TraceSpSp(const SpMatrix<Real>&, const SpMatrix<Real>&);                           \
  template Real VecSpVec(const VectorBase<Real>&, const SpMatrix<Real>&, const VectorBase<Real>&); \
  template Real TraceSpMat(const SpMatrix<Real>&, const MatrixBase<Real>&)
CUCTX_INSTANTIATE_SP_(float);
CUCTX_INSTANTIATE_SP_(double);
#undef CUCTX_INSTANTIATE_SP_

}  // namespace cuctx
