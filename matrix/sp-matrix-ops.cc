// matrix/sp-matrix-ops.cc: SpMatrix congruence updates (AddMat2Sp, AddTp2Sp, ...), structure
// tests, comparisons, the extra trace functions and the packed stream operators (Kaldi parity).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cmath>
#include <istream>
#include <ostream>

namespace cuctx {

using internal::ShapeOf;

namespace {

const char* TransText(MatrixTransposeType t) { return t == kTrans ? "kTrans" : "kNoTrans"; }

// *packed = beta * *packed + alpha * (lower triangle of the square `full`); beta == 0 ignores the
// old contents.
template <typename Real>
void AddLowerOf(Real alpha, const MatrixBase<Real>& full, Real beta, SpMatrix<Real>* packed) {
  Real* p = packed->Data();
  for (MatrixIndexT r = 0; r < packed->NumRows(); ++r) {
    const Real* row = full.RowData(r);
    for (MatrixIndexT c = 0; c <= r; ++c, ++p)
      *p = (beta == 0 ? Real(0) : beta * *p) + alpha * row[c];
  }
}

// sum of the products of corresponding stored (lower-triangle) elements, in double; off-diagonal
// products are weighted by `off_weight` (2 for the full trace, 1 for the lower triangle only).
template <typename Real, typename OtherReal>
double PackedDot(const SpMatrix<Real>& A, const SpMatrix<OtherReal>& B, double off_weight,
                 const char* op) {
  if (A.NumRows() != B.NumRows())
    CUCTX_ERR << op << ": sizes " << A.NumRows() << " and " << B.NumRows() << " differ";
  double diag = 0.0, off = 0.0;
  const Real* a = A.Data();
  const OtherReal* b = B.Data();
  for (MatrixIndexT r = 0; r < A.NumRows(); ++r) {
    for (MatrixIndexT c = 0; c < r; ++c) off += static_cast<double>(*a++) * *b++;
    diag += static_cast<double>(*a++) * *b++;
  }
  return diag + off_weight * off;
}

}  // namespace

template <typename Real>
bool SpMatrix<Real>::ApproxEqual(const SpMatrix<Real>& other, float tol) const {
  if (this->num_rows_ != other.NumRows())
    CUCTX_ERR << "SpMatrix::ApproxEqual: sizes " << this->num_rows_ << " and " << other.NumRows()
              << " differ";
  CUCTX_CHECK(tol >= 0) << "SpMatrix::ApproxEqual: tol = " << tol << " must be >= 0";
  SpMatrix<double> diff(*this);
  diff.AddSp(-1.0, SpMatrix<double>(other));
  const double scale = std::max<double>(FrobeniusNorm(), other.FrobeniusNorm());
  return diff.FrobeniusNorm() <= tol * scale;
}

template <typename Real>
void SpMatrix<Real>::AddMat2Sp(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType transM,
                               const SpMatrix<Real>& A, Real beta) {
  if (transM != kNoTrans && transM != kTrans)
    CUCTX_ERR << "SpMatrix::AddMat2Sp: invalid MatrixTransposeType " << static_cast<int>(transM);
  const MatrixIndexT n = this->num_rows_, k = A.NumRows();
  if (internal::OpRows(M, transM) != n || internal::OpCols(M, transM) != k)
    CUCTX_ERR << "SpMatrix::AddMat2Sp: shape mismatch: M is " << ShapeOf(M) << " ("
              << TransText(transM) << "), A has size " << k << ", *this has size " << n;
  if (n == 0) return;
  // op(M) A, then (op(M) A) op(M)^T; A is unpacked first, so A may be *this.
  const Matrix<Real> a(A);
  Matrix<Real> ma(n, k, kUndefined), full(n, n, kUndefined);
  ma.AddMatMat(1.0, M, transM, a, kNoTrans, 0.0);
  full.AddMatMat(1.0, ma, kNoTrans, M, transM == kNoTrans ? kTrans : kNoTrans, 0.0);
  AddLowerOf(alpha, full, beta, this);
}

template <typename Real>
void SpMatrix<Real>::AddVec2Sp(Real alpha, const VectorBase<Real>& v, const SpMatrix<Real>& S,
                               Real beta) {
  const MatrixIndexT n = this->num_rows_;
  if (v.Dim() != n || S.NumRows() != n)
    CUCTX_ERR << "SpMatrix::AddVec2Sp: v has dimension " << v.Dim() << ", S has size "
              << S.NumRows() << ", *this has size " << n;
  // Element-wise in storage order, so S may be *this.
  const Real* s = S.Data();
  Real* p = this->Data();
  for (MatrixIndexT r = 0; r < n; ++r) {
    const Real avr = alpha * v(r);
    for (MatrixIndexT c = 0; c <= r; ++c, ++p, ++s)
      *p = (beta == 0 ? Real(0) : beta * *p) + avr * *s * v(c);
  }
}

template <typename Real>
void SpMatrix<Real>::AddTp2Sp(Real alpha, const TpMatrix<Real>& T, MatrixTransposeType transM,
                              const SpMatrix<Real>& A, Real beta) {
  AddMat2Sp(alpha, Matrix<Real>(T), transM, A, beta);
}

template <typename Real>
void SpMatrix<Real>::AddTp2(Real alpha, const TpMatrix<Real>& T, MatrixTransposeType transM,
                            Real beta) {
  if (T.NumRows() != this->num_rows_)
    CUCTX_ERR << "SpMatrix::AddTp2: T has size " << T.NumRows() << ", *this has size "
              << this->num_rows_;
  AddMat2(alpha, Matrix<Real>(T), transM, beta);
}

template <typename Real>
bool SpMatrix<Real>::IsDiagonal(Real cutoff) const {
  double good = 0.0, bad = 0.0;
  const Real* p = this->Data();
  for (MatrixIndexT r = 0; r < this->num_rows_; ++r) {
    for (MatrixIndexT c = 0; c < r; ++c) bad += std::abs(*p++);
    good += std::abs(*p++);
  }
  return !(bad > good * cutoff);
}

template <typename Real>
bool SpMatrix<Real>::IsUnit(Real cutoff) const {
  const Real* p = this->Data();
  for (MatrixIndexT r = 0; r < this->num_rows_; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c, ++p)
      if (!(std::abs(*p - (r == c ? Real(1) : Real(0))) <= cutoff)) return false;
  return true;
}

template <typename Real>
bool SpMatrix<Real>::IsZero(Real cutoff) const {
  for (const Real x : this->data_)
    if (!(std::abs(x) <= cutoff)) return false;
  return true;
}

template <typename Real>
bool SpMatrix<Real>::IsTridiagonal(Real cutoff) const {
  Real band = 0, outside = 0;
  const Real* p = this->Data();
  for (MatrixIndexT r = 0; r < this->num_rows_; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c, ++p) {
      Real& slot = c + 1 < r ? outside : band;
      slot = std::max(slot, std::abs(*p));
    }
  return outside <= cutoff * band;
}

template <typename Real>
bool ApproxEqual(const SpMatrix<Real>& A, const SpMatrix<Real>& B,
                 typename std::common_type<Real>::type tol) {
  return A.ApproxEqual(B, static_cast<float>(tol));
}

template <typename Real>
void AssertEqual(const SpMatrix<Real>& A, const SpMatrix<Real>& B,
                 typename std::common_type<Real>::type tol) {
  if (!A.ApproxEqual(B, static_cast<float>(tol))) {
    SpMatrix<double> diff(A);
    diff.AddSp(-1.0, SpMatrix<double>(B));
    CUCTX_ERR << "AssertEqual: symmetric matrices of size " << A.NumRows()
              << " differ: ||A - B|| = " << diff.FrobeniusNorm() << " > tol " << tol
              << " * max(||A||, ||B||) = "
              << tol * std::max<double>(A.FrobeniusNorm(), B.FrobeniusNorm());
  }
}

template <typename Real, typename OtherReal>
Real TraceSpSp(const SpMatrix<Real>& A, const SpMatrix<OtherReal>& B) {
  return static_cast<Real>(PackedDot(A, B, 2.0, "TraceSpSp"));
}

template <typename Real>
Real TraceSpSpLower(const SpMatrix<Real>& A, const SpMatrix<Real>& B) {
  return static_cast<Real>(PackedDot(A, B, 1.0, "TraceSpSpLower"));
}

template <typename Real>
Real TraceMatSpMat(const MatrixBase<Real>& A, MatrixTransposeType transA, const SpMatrix<Real>& B,
                   const MatrixBase<Real>& C, MatrixTransposeType transC) {
  const MatrixIndexT n = B.NumRows();
  using internal::OpCols;
  using internal::OpRows;
  if (OpCols(A, transA) != n || OpRows(C, transC) != n || OpRows(A, transA) != OpCols(C, transC))
    CUCTX_ERR << "TraceMatSpMat: shape mismatch: A " << ShapeOf(A) << " (" << TransText(transA)
              << "), B of size " << n << ", C " << ShapeOf(C) << " (" << TransText(transC) << ")";
  // tr(op(A) B op(C)) = tr((B op(C)) op(A)): form B op(C) (n x m), then the trace of a product.
  Matrix<Real> bc(n, OpCols(C, transC), kUndefined);
  bc.AddSpMat(1.0, B, C, transC, 0.0);
  return TraceMatMat(bc, A, transA);
}

template <typename Real>
Real TraceMatSpMatSp(const MatrixBase<Real>& A, MatrixTransposeType transA, const SpMatrix<Real>& B,
                     const MatrixBase<Real>& C, MatrixTransposeType transC,
                     const SpMatrix<Real>& D) {
  using internal::OpCols;
  using internal::OpRows;
  if (OpCols(A, transA) != B.NumRows() || OpRows(C, transC) != B.NumRows() ||
      OpCols(C, transC) != D.NumRows() || OpRows(A, transA) != D.NumRows())
    CUCTX_ERR << "TraceMatSpMatSp: shape mismatch: A " << ShapeOf(A) << " (" << TransText(transA)
              << "), B of size " << B.NumRows() << ", C " << ShapeOf(C) << " (" << TransText(transC)
              << "), D of size " << D.NumRows();
  // tr(op(A) B op(C) D) = tr((B op(C) D) op(A)).
  Matrix<Real> bcd(B.NumRows(), D.NumRows(), kUndefined);
  bcd.AddSpMatSp(1.0, B, C, transC, D, 0.0);
  return TraceMatMat(bcd, A, transA);
}

template <typename Real>
std::ostream& operator<<(std::ostream& os, const PackedMatrix<Real>& M) {
  M.Write(os, false);
  return os;
}

template <typename Real>
std::istream& operator>>(std::istream& is, PackedMatrix<Real>& M) {
  M.Read(is, false);
  return is;
}

// Explicit template arguments: with deduction, R == O would name the one-type TraceSpSp instead.
#define CUCTX_INSTANTIATE_SP_OPS_(R, O) \
  template R TraceSpSp<R, O>(const SpMatrix<R>&, const SpMatrix<O>&);

#define CUCTX_INSTANTIATE_SP_EXTRA_(R)                                                       \
  template bool ApproxEqual(const SpMatrix<R>&, const SpMatrix<R>&, R);                      \
  template void AssertEqual(const SpMatrix<R>&, const SpMatrix<R>&, R);                      \
  template R TraceSpSpLower(const SpMatrix<R>&, const SpMatrix<R>&);                         \
  template R TraceMatSpMat(const MatrixBase<R>&, MatrixTransposeType, const SpMatrix<R>&,    \
                           const MatrixBase<R>&, MatrixTransposeType);                       \
  template R TraceMatSpMatSp(const MatrixBase<R>&, MatrixTransposeType, const SpMatrix<R>&,  \
                             const MatrixBase<R>&, MatrixTransposeType, const SpMatrix<R>&); \
  template std::ostream& operator<<(std::ostream&, const PackedMatrix<R>&);                  \
  template std::istream& operator>>(std::istream&, PackedMatrix<R>&);                        \
  template bool SpMatrix<R>::ApproxEqual(const SpMatrix<R>&, float) const;                   \
  template void SpMatrix<R>::AddMat2Sp(R, const MatrixBase<R>&, MatrixTransposeType,         \
                                       const SpMatrix<R>&, R);                               \
  template void SpMatrix<R>::AddVec2Sp(R, const VectorBase<R>&, const SpMatrix<R>&, R);      \
  template void SpMatrix<R>::AddTp2Sp(R, const TpMatrix<R>&, MatrixTransposeType,            \
                                      const SpMatrix<R>&, R);                                \
  template void SpMatrix<R>::AddTp2(R, const TpMatrix<R>&, MatrixTransposeType, R);          \
  template bool SpMatrix<R>::IsDiagonal(R) const;                                            \
  template bool SpMatrix<R>::IsUnit(R) const;                                                \
  template bool SpMatrix<R>::IsZero(R) const;                                                \
  template bool SpMatrix<R>::IsTridiagonal(R) const;
CUCTX_INSTANTIATE_SP_EXTRA_(float)
CUCTX_INSTANTIATE_SP_EXTRA_(double)
CUCTX_INSTANTIATE_SP_OPS_(float, float)
CUCTX_INSTANTIATE_SP_OPS_(float, double)
CUCTX_INSTANTIATE_SP_OPS_(double, float)
CUCTX_INSTANTIATE_SP_OPS_(double, double)
#undef CUCTX_INSTANTIATE_SP_EXTRA_
#undef CUCTX_INSTANTIATE_SP_OPS_

}  // namespace cuctx
