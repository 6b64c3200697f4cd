// matrix/matrix-blas.cc: MatrixBase products through CBLAS, traces, and dense solvers (CPU;
// Cholesky and SymInvertPosDef through LAPACK).
// SPDX-License-Identifier: Apache-2.0
#include "matrix/cblas-wrappers.h"
#include "matrix/lapack-wrappers.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace cuctx {

using internal::CheckDim;
using internal::CheckNoOverlap;
using internal::CheckNoPartialOverlap;
using internal::OpCols;
using internal::OpRows;
using internal::ShapeOf;

namespace {

// BLAS wants a leading dimension >= max(1, stored columns); a one-row view may carry a smaller
// stride, which BLAS never uses to step, so the larger value is equivalent.
template <typename Real>
MatrixIndexT LeadingDim(const MatrixBase<Real>& m) {
  return std::max(std::max(m.Stride(), m.NumCols()), MatrixIndexT(1));
}

const char* TransName(MatrixTransposeType t) { return t == kTrans ? "kTrans" : "kNoTrans"; }

// x . y accumulated in double (a float sdot loses the relative accuracy of a sum whose terms
// cancel): ddot for double; for float a loop of our own, not BLAS's dsdot, because OpenBLAS 0.3.21
// (Debian 12's, DYNAMIC_ARCH, Zen core) accumulates dsdot in float at unit stride from 32
// elements on: on the build machine's AMD EPYC, 32 elements (a pair 1e8, -1e8, one 3e-3 and ones)
// gave 16 for an exact 29.003, while n < 32 and stride 2 were right. Four partial sums keep the
// loop from waiting on one addition chain.
double DotInDouble(MatrixIndexT n, const float* x, MatrixIndexT incx, const float* y,
                   MatrixIndexT incy) {
  const std::ptrdiff_t dx = incx, dy = incy;  // offsets may pass 2^31 elements
  double s[4] = {0, 0, 0, 0};
  std::ptrdiff_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k)
      s[k] += static_cast<double>(x[(i + k) * dx]) * static_cast<double>(y[(i + k) * dy]);
  for (; i < n; ++i) s[0] += static_cast<double>(x[i * dx]) * static_cast<double>(y[i * dy]);
  return (s[0] + s[1]) + (s[2] + s[3]);
}
double DotInDouble(MatrixIndexT n, const double* x, MatrixIndexT incx, const double* y,
                   MatrixIndexT incy) {
  return cblas_ddot(n, x, incx, y, incy);
}

template <typename Real>
void CheckVecNoOverlap(const char* op, const MatrixBase<Real>& out, const VectorBase<Real>& v) {
  if (internal::Overlaps(v, out))
    CUCTX_ERR << op << ": the vector argument overlaps the output matrix " << ShapeOf(out);
}

// Throws unless every element of the lower triangle of the square `a` is finite (LAPACK's
// behaviour on NaN is unspecified): such a matrix is not positive definite either.
void CheckLowerFinite(const char* op, const MatrixBase<double>& a) {
  const MatrixIndexT n = a.NumRows();
  for (MatrixIndexT r = 0; r < n; ++r) {
    const double* row = a.RowData(r);
    for (MatrixIndexT c = 0; c <= r; ++c)
      if (!std::isfinite(row[c]))
        CUCTX_ERR << op << ": the " << n << "x" << n
                  << " matrix is not positive definite (element (" << r << ", " << c << ") is "
                  << row[c] << ")";
  }
}

// Factors the lower triangle of the symmetric positive definite `a` (n >= 1) in place as L L^T
// with LAPACK's Cholesky (dpotf2 or dpotrf, see lapack-wrappers.h; a row-major lower triangle is LAPACK's upper one), upper triangle
// zeroed. Throws naming the leading minor that is not positive, as cuSOLVER's path does.
void CholeskyInPlace(const char* op, MatrixBase<double>* a) {
  const MatrixIndexT n = a->NumRows();
  CheckLowerFinite(op, *a);
  const int info = internal::LapackPotrfUpper(n, a->Data(), LeadingDim(*a));
  CUCTX_CHECK(info >= 0) << op << ": LAPACK's Cholesky rejected argument " << -info;
  if (info > 0)
    CUCTX_ERR << op << ": the " << n << "x" << n << " matrix is not positive definite (its "
              << "leading minor of order " << info << " is not positive)";
  a->SetZeroAboveDiag();
}

// The inverse of a lower-triangular L with a nonzero diagonal (LAPACK's dtrti2 or dtrtri), into inv.
// LAPACK touches only the lower triangle, so L's zero upper triangle stays zero.
void InvertLower(const MatrixBase<double>& L, MatrixBase<double>* inv) {
  inv->CopyFromMat(L);
  const int info = internal::LapackTrtriUpper(L.NumRows(), inv->Data(), LeadingDim(*inv));
  CUCTX_CHECK(info == 0) << "InvertLower: LAPACK's triangular inverse returned info " << info;
}

}  // namespace

template <typename Real>
void MatrixBase<Real>::AddMatMat(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                                 const MatrixBase<Real>& B, MatrixTransposeType transB, Real beta) {
  const MatrixIndexT k = OpCols(A, transA);
  if (OpRows(A, transA) != num_rows_ || OpCols(B, transB) != num_cols_ || OpRows(B, transB) != k)
    CUCTX_ERR << "AddMatMat: shape mismatch: A " << ShapeOf(A) << " (" << TransName(transA)
              << ") times B " << ShapeOf(B) << " (" << TransName(transB) << ") into *this "
              << ShapeOf(*this);
  CheckNoOverlap("AddMatMat", *this, A, "A");
  CheckNoOverlap("AddMatMat", *this, B, "B");
  if (num_rows_ == 0 || num_cols_ == 0) return;
  if (k == 0) {
    // An empty inner dimension: the product is zero, and BLAS semantics make beta == 0 overwrite.
    if (beta == 0)
      SetZero();
    else
      Scale(beta);
    return;
  }
  cblas_Xgemm(transA, transB, num_rows_, num_cols_, k, alpha, A.Data(), LeadingDim(A), B.Data(),
              LeadingDim(B), beta, data_, LeadingDim(*this));
}

template <typename Real>
void MatrixBase<Real>::SymAddMat2(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                                  Real beta) {
  const MatrixIndexT k = OpCols(A, transA);
  if (num_rows_ != num_cols_ || OpRows(A, transA) != num_rows_)
    CUCTX_ERR << "SymAddMat2: shape mismatch: *this " << ShapeOf(*this)
              << " must be square with the rows of op(A), A " << ShapeOf(A) << " ("
              << TransName(transA) << ")";
  CheckNoOverlap("SymAddMat2", *this, A, "A");
  if (num_rows_ == 0) return;
  if (k == 0) {
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      Real* row = RowData(r);
      for (MatrixIndexT c = 0; c <= r; ++c) row[c] = beta == 0 ? Real(0) : beta * row[c];
    }
    return;
  }
  cblas_Xsyrk(transA, num_rows_, k, alpha, A.Data(), LeadingDim(A), beta, data_, LeadingDim(*this));
}

template <typename Real>
void MatrixBase<Real>::AddDiagVecMat(Real alpha, const VectorBase<Real>& v,
                                     const MatrixBase<Real>& M, MatrixTransposeType transM,
                                     Real beta) {
  if (OpRows(M, transM) != num_rows_ || OpCols(M, transM) != num_cols_ || v.Dim() != num_rows_)
    CUCTX_ERR << "AddDiagVecMat: shape mismatch: v has dimension " << v.Dim() << ", M is "
              << ShapeOf(M) << " (" << TransName(transM) << "), *this is " << ShapeOf(*this);
  CheckVecNoOverlap("AddDiagVecMat", *this, v);
  if (transM == kNoTrans)
    CheckNoPartialOverlap("AddDiagVecMat", *this, M, "M");
  else
    CheckNoOverlap("AddDiagVecMat", *this, M, "M");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* out = RowData(r);
    const Real s = alpha * v.Data()[r];
    if (transM == kNoTrans) {
      const Real* in = M.RowData(r);
      for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = beta * out[c] + s * in[c];
    } else {
      for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = beta * out[c] + s * M.RowData(c)[r];
    }
  }
}

template <typename Real>
void MatrixBase<Real>::AddMatDiagVec(Real alpha, const MatrixBase<Real>& M,
                                     MatrixTransposeType transM, const VectorBase<Real>& v,
                                     Real beta) {
  if (OpRows(M, transM) != num_rows_ || OpCols(M, transM) != num_cols_ || v.Dim() != num_cols_)
    CUCTX_ERR << "AddMatDiagVec: shape mismatch: M is " << ShapeOf(M) << " (" << TransName(transM)
              << "), v has dimension " << v.Dim() << ", *this is " << ShapeOf(*this);
  CheckVecNoOverlap("AddMatDiagVec", *this, v);
  if (transM == kNoTrans)
    CheckNoPartialOverlap("AddMatDiagVec", *this, M, "M");
  else
    CheckNoOverlap("AddMatDiagVec", *this, M, "M");
  const Real* s = v.Data();
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* out = RowData(r);
    if (transM == kNoTrans) {
      const Real* in = M.RowData(r);
      for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = beta * out[c] + alpha * in[c] * s[c];
    } else {
      for (MatrixIndexT c = 0; c < num_cols_; ++c)
        out[c] = beta * out[c] + alpha * M.RowData(c)[r] * s[c];
    }
  }
}

template <typename Real>
void MatrixBase<Real>::AddVecVec(Real alpha, const VectorBase<Real>& a, const VectorBase<Real>& b) {
  if (a.Dim() != num_rows_ || b.Dim() != num_cols_)
    CUCTX_ERR << "AddVecVec: shape mismatch: a has dimension " << a.Dim() << ", b has dimension "
              << b.Dim() << ", *this is " << ShapeOf(*this);
  CheckVecNoOverlap("AddVecVec", *this, a);
  CheckVecNoOverlap("AddVecVec", *this, b);
  if (num_rows_ == 0 || num_cols_ == 0) return;
  cblas_Xger(num_rows_, num_cols_, alpha, a.Data(), 1, b.Data(), 1, data_, LeadingDim(*this));
}

// ---- solvers
// --------------------------------------------------------------------------------------

template <typename Real>
void MatrixBase<Real>::Cholesky(MatrixBase<Real>* inv_cholesky) {
  CUCTX_CHECK(num_rows_ == num_cols_) << "Cholesky: matrix " << ShapeOf(*this) << " is not square";
  if (inv_cholesky != nullptr) {
    internal::CheckSameShape("Cholesky", *this, "*this", *inv_cholesky, "inv_cholesky");
    CheckNoOverlap("Cholesky", *this, *inv_cholesky, "inv_cholesky");
  }
  // Factor in double on a copy, so *this is untouched if the matrix is not positive definite.
  Matrix<double> L(*this);
  CholeskyInPlace("Cholesky", &L);
  if (inv_cholesky != nullptr) {
    Matrix<double> inv(num_rows_, num_rows_);
    InvertLower(L, &inv);
    inv_cholesky->CopyFromMat(inv);
  }
  CopyFromMat(L);
}

template <typename Real>
void MatrixBase<Real>::SymInvertPosDef() {
  CUCTX_CHECK(num_rows_ == num_cols_)
      << "SymInvertPosDef: matrix " << ShapeOf(*this) << " is not square";
  if (num_rows_ == 0) return;
  Matrix<double> L(*this);
  CholeskyInPlace("SymInvertPosDef", &L);
  // A^-1 = L^-T L^-1 from the factor (LAPACK's dpotri, or dtrti2 + dlauu2), in the lower triangle; mirrored.
  const int info = internal::LapackPotriUpper(num_rows_, L.Data(), LeadingDim(L));
  CUCTX_CHECK(info == 0) << "SymInvertPosDef: LAPACK's inverse from the factor returned info "
                         << info;
  L.CopyLowerToUpper();
  CopyFromMat(L);
}

// ---- free functions
// -------------------------------------------------------------------------------

template <typename Real>
void AddMatMatBatched(Real alpha, std::vector<SubMatrix<Real>*>& C,
                      const std::vector<SubMatrix<Real>*>& A, MatrixTransposeType transA,
                      const std::vector<SubMatrix<Real>*>& B, MatrixTransposeType transB,
                      Real beta) {
  if (A.size() != C.size() || B.size() != C.size())
    CUCTX_ERR << "AddMatMatBatched: batch sizes differ: C has " << C.size() << ", A has "
              << A.size() << ", B has " << B.size();
  for (size_t i = 0; i < C.size(); ++i) {
    CUCTX_CHECK(A[i] != nullptr && B[i] != nullptr && C[i] != nullptr)
        << "AddMatMatBatched: null matrix in batch entry " << i;
    C[i]->AddMatMat(alpha, *A[i], transA, *B[i], transB, beta);
  }
}

template <typename Real>
Real TraceMatMat(const MatrixBase<Real>& A, const MatrixBase<Real>& B, MatrixTransposeType trans) {
  if (OpRows(B, trans) != A.NumCols() || OpCols(B, trans) != A.NumRows())
    CUCTX_ERR << "TraceMatMat: A " << ShapeOf(A) << " times B " << ShapeOf(B) << " ("
              << TransName(trans) << ") is not square";
  const MatrixIndexT k = A.NumCols();
  if (k == 0) return 0;
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < A.NumRows(); ++i) {
    // Row i of A times column i of op(B): a column of B (strided) or a row of B.
    if (trans == kNoTrans)
      sum += DotInDouble(k, A.RowData(i), 1, B.Data() + i, B.Stride());
    else
      sum += DotInDouble(k, A.RowData(i), 1, B.RowData(i), 1);
  }
  return static_cast<Real>(sum);
}

// ---- explicit instantiation (class-level instantiation is in matrix.cc)
// --------------------------

#define CUCTX_INSTANTIATE_BLAS_(R)                                                           \
  template void MatrixBase<R>::AddMatMat(R, const MatrixBase<R>&, MatrixTransposeType,       \
                                         const MatrixBase<R>&, MatrixTransposeType, R);      \
  template void MatrixBase<R>::SymAddMat2(R, const MatrixBase<R>&, MatrixTransposeType, R);  \
  template void MatrixBase<R>::AddDiagVecMat(R, const VectorBase<R>&, const MatrixBase<R>&,  \
                                             MatrixTransposeType, R);                        \
  template void MatrixBase<R>::AddMatDiagVec(R, const MatrixBase<R>&, MatrixTransposeType,   \
                                             const VectorBase<R>&, R);                       \
  template void MatrixBase<R>::AddVecVec(R, const VectorBase<R>&, const VectorBase<R>&);     \
  template void MatrixBase<R>::Cholesky(MatrixBase<R>*);                                     \
  template void MatrixBase<R>::SymInvertPosDef();                                            \
  template void AddMatMatBatched(R, std::vector<SubMatrix<R>*>&,                             \
                                 const std::vector<SubMatrix<R>*>&, MatrixTransposeType,     \
                                 const std::vector<SubMatrix<R>*>&, MatrixTransposeType, R); \
  template R TraceMatMat(const MatrixBase<R>&, const MatrixBase<R>&, MatrixTransposeType);

CUCTX_INSTANTIATE_BLAS_(float)
CUCTX_INSTANTIATE_BLAS_(double)

#undef CUCTX_INSTANTIATE_BLAS_

}  // namespace cuctx
