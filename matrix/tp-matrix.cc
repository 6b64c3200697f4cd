// matrix/tp-matrix.cc: TpMatrix: Cholesky factorization, triangular inverse and conversions.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/tp-matrix.h"

#include "base/error.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"

#include <cmath>
#include <vector>

namespace cuctx {

namespace {

inline size_t RowStart(int64 r) { return static_cast<size_t>(r * (r + 1) / 2); }

}  // namespace

namespace internal {

template <typename Real>
bool PackedCholesky(const Real* packed, MatrixIndexT n, std::vector<double>* L,
                    MatrixIndexT* bad_row, double* bad_pivot) {
  L->assign(RowStart(n), 0.0);
  double* l = L->data();
  // Row by row (Cholesky-Banachiewicz): row j of L needs only the rows above it, which matches the
  // packed row-major storage, so every inner product runs over contiguous memory.
  for (MatrixIndexT j = 0; j < n; ++j) {
    double* lj = l + RowStart(j);
    const Real* aj = packed + RowStart(j);
    for (MatrixIndexT k = 0; k < j; ++k) {
      const double* lk = l + RowStart(k);
      double s = aj[k];
      for (MatrixIndexT i = 0; i < k; ++i) s -= lj[i] * lk[i];
      lj[k] = s / lk[k];
    }
    double d = aj[j];
    for (MatrixIndexT i = 0; i < j; ++i) d -= lj[i] * lj[i];
    if (!(d > 0.0) || !std::isfinite(d)) {
      *bad_row = j;
      *bad_pivot = d;
      return false;
    }
    lj[j] = std::sqrt(d);
  }
  return true;
}

template bool PackedCholesky(const float*, MatrixIndexT, std::vector<double>*, MatrixIndexT*,
                             double*);
template bool PackedCholesky(const double*, MatrixIndexT, std::vector<double>*, MatrixIndexT*,
                             double*);

}  // namespace internal

template <typename Real>
void TpMatrix<Real>::Cholesky(const SpMatrix<Real>& orig) {
  const MatrixIndexT n = orig.NumRows();
  std::vector<double> L;
  MatrixIndexT bad_row = 0;
  double bad_pivot = 0.0;
  if (!internal::PackedCholesky(orig.Data(), n, &L, &bad_row, &bad_pivot))
    CUCTX_ERR << "TpMatrix::Cholesky: the " << n << " x " << n
              << " matrix is not positive definite (pivot " << bad_pivot << " at row " << bad_row
              << ")";
  this->Resize(n, kUndefined);
  for (size_t i = 0; i < L.size(); ++i) this->data_[i] = static_cast<Real>(L[i]);
}

template <typename Real>
void TpMatrix<Real>::Invert() {
  const MatrixIndexT n = this->num_rows_;
  const Real* l = this->data_.data();
  std::vector<double> x(this->data_.size());
  // Forward substitution, one row of the inverse at a time: row i of X = L^-1 needs row i of L
  // and the rows of X above it.
  for (MatrixIndexT i = 0; i < n; ++i) {
    const Real* li = l + RowStart(i);
    double* xi = x.data() + RowStart(i);
    const double diag = li[i];
    if (diag == 0.0 || !std::isfinite(diag))
      CUCTX_ERR << "TpMatrix::Invert: the " << n << " x " << n
                << " triangular matrix is singular (diagonal element " << diag << " at row " << i
                << ")";
    for (MatrixIndexT j = 0; j < i; ++j) {
      double s = 0.0;
      for (MatrixIndexT k = j; k < i; ++k) s += li[k] * x[RowStart(k) + j];
      xi[j] = -s / diag;
    }
    xi[i] = 1.0 / diag;
  }
  for (size_t i = 0; i < x.size(); ++i) this->data_[i] = static_cast<Real>(x[i]);
}

template <typename Real>
void TpMatrix<Real>::CopyFromMat(const MatrixBase<Real>& M, MatrixTransposeType trans) {
  if (M.NumRows() != M.NumCols())
    CUCTX_ERR << "TpMatrix::CopyFromMat: matrix is " << M.NumRows() << " x " << M.NumCols()
              << ", expected square";
  const MatrixIndexT n = M.NumRows();
  this->Resize(n, kUndefined);
  Real* p = this->data_.data();
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c) *p++ = (trans == kNoTrans ? M(r, c) : M(c, r));
}

template <typename Real>
template <typename OtherReal>
void TpMatrix<Real>::CopyToMat(MatrixBase<OtherReal>* M, MatrixTransposeType trans) const {
  CUCTX_CHECK(M != nullptr) << "null destination matrix";
  const MatrixIndexT n = this->num_rows_;
  if (M->NumRows() != n || M->NumCols() != n)
    CUCTX_ERR << "TpMatrix::CopyToMat: destination is " << M->NumRows() << " x " << M->NumCols()
              << ", expected " << n << " x " << n;
  const Real* p = this->data_.data();
  for (MatrixIndexT r = 0; r < n; ++r) {
    for (MatrixIndexT c = 0; c <= r; ++c, ++p) {
      if (trans == kNoTrans) {
        (*M)(r, c) = static_cast<OtherReal>(*p);
        if (c != r) (*M)(c, r) = OtherReal(0);
      } else {
        (*M)(c, r) = static_cast<OtherReal>(*p);
        if (c != r) (*M)(r, c) = OtherReal(0);
      }
    }
  }
}

template <typename Real>
Real TpMatrix<Real>::Determinant() const {
  double det = 1.0;
  for (MatrixIndexT i = 0; i < this->num_rows_; ++i) det *= this->data_[RowStart(i + 1) - 1];
  return static_cast<Real>(det);
}

template <typename Real>
Real TpMatrix<Real>::Sum() const {
  double sum = 0.0;
  for (Real x : this->data_) sum += x;
  return static_cast<Real>(sum);
}

template <typename Real>
Real TpMatrix<Real>::FrobeniusNorm() const {
  double sum = 0.0;
  for (Real x : this->data_) sum += static_cast<double>(x) * x;
  return static_cast<Real>(std::sqrt(sum));
}

template class TpMatrix<float>;
template class TpMatrix<double>;
template void TpMatrix<float>::CopyToMat(MatrixBase<float>*, MatrixTransposeType) const;
template void TpMatrix<float>::CopyToMat(MatrixBase<double>*, MatrixTransposeType) const;
template void TpMatrix<double>::CopyToMat(MatrixBase<float>*, MatrixTransposeType) const;
template void TpMatrix<double>::CopyToMat(MatrixBase<double>*, MatrixTransposeType) const;

}  // namespace cuctx
