// matrix/matrix-sparse-ops.cc: MatrixBase products with a SparseMatrix operand (Kaldi parity):
// AddSmat, AddSmatMat, AddMatSmat.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/cblas-wrappers.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"
#include "matrix/sparse-matrix.h"

#include <string>

namespace cuctx {

using internal::ShapeOf;

namespace {

const char* TransText(MatrixTransposeType t) { return t == kTrans ? "kTrans" : "kNoTrans"; }

// Throws unless t is one of the two enumerators (a cast integer would silently act as kNoTrans).
void CheckTrans(const char* op, MatrixTransposeType t) {
  if (t != kNoTrans && t != kTrans)
    CUCTX_ERR << op << ": invalid MatrixTransposeType " << static_cast<int>(t);
}

// "RxC sparse".
template <typename Real>
std::string SparseShape(const SparseMatrix<Real>& s) {
  return std::to_string(s.NumRows()) + "x" + std::to_string(s.NumCols()) + " sparse";
}

// The rows (or columns) of op(S) for a sparse S, or -1 when unknown: a SparseMatrix with no rows
// reports 0 columns whatever it was built with, so its column count matches any dimension.
template <typename Real>
MatrixIndexT OpRowsOf(const SparseMatrix<Real>& s, MatrixTransposeType t) {
  if (t == kNoTrans) return s.NumRows();
  return s.NumRows() == 0 ? -1 : s.NumCols();
}
template <typename Real>
MatrixIndexT OpColsOf(const SparseMatrix<Real>& s, MatrixTransposeType t) {
  if (t == kTrans) return s.NumRows();
  return s.NumRows() == 0 ? -1 : s.NumCols();
}
// True if a dimension from OpRowsOf/OpColsOf (maybe -1, unknown) agrees with `want`.
bool Agrees(MatrixIndexT dim, MatrixIndexT want) { return dim < 0 || dim == want; }

// *m = beta * *m, where beta == 0 overwrites with zeros (BLAS semantics: NaN does not survive).
template <typename Real>
void ScaleOrZero(Real beta, MatrixBase<Real>* m) {
  if (beta == 0)
    m->SetZero();
  else if (beta != 1)
    m->Scale(beta);
}

}  // namespace

template <typename Real>
void MatrixBase<Real>::AddSmat(Real alpha, const SparseMatrix<Real>& A, MatrixTransposeType trans) {
  CheckTrans("AddSmat", trans);
  if (!Agrees(OpRowsOf(A, trans), num_rows_) || !Agrees(OpColsOf(A, trans), num_cols_))
    CUCTX_ERR << "AddSmat: shape mismatch: A is " << SparseShape(A) << " (" << TransText(trans)
              << ") but *this is " << ShapeOf(*this);
  for (MatrixIndexT r = 0; r < A.NumRows(); ++r) {
    const SparseVector<Real>& row = A.Row(r);
    const std::pair<MatrixIndexT, Real>* e = row.Data();
    for (MatrixIndexT i = 0; i < row.NumElements(); ++i) {
      if (trans == kNoTrans)
        (*this)(r, e[i].first) += alpha * e[i].second;
      else
        (*this)(e[i].first, r) += alpha * e[i].second;
    }
  }
}

template <typename Real>
void MatrixBase<Real>::AddSmatMat(Real alpha, const SparseMatrix<Real>& A,
                                  MatrixTransposeType transA, const MatrixBase<Real>& B,
                                  Real beta) {
  CheckTrans("AddSmatMat", transA);
  const bool ok = Agrees(OpRowsOf(A, transA), num_rows_) &&
                  Agrees(OpColsOf(A, transA), B.NumRows()) && B.NumCols() == num_cols_;
  if (!ok)
    CUCTX_ERR << "AddSmatMat: shape mismatch: A " << SparseShape(A) << " (" << TransText(transA)
              << ") times B " << ShapeOf(B) << " into *this " << ShapeOf(*this);
  internal::CheckNoOverlap("AddSmatMat", *this, B, "B");
  if (num_rows_ == 0 || num_cols_ == 0) return;
  ScaleOrZero(beta, this);
  for (MatrixIndexT r = 0; r < A.NumRows(); ++r) {
    const SparseVector<Real>& row = A.Row(r);
    const std::pair<MatrixIndexT, Real>* e = row.Data();
    for (MatrixIndexT i = 0; i < row.NumElements(); ++i) {
      // kNoTrans: A(r, j) scales row j of B into row r; kTrans: op(A)(j, r) scales row r of B
      // into row j.
      const MatrixIndexT src = transA == kNoTrans ? e[i].first : r;
      const MatrixIndexT dst = transA == kNoTrans ? r : e[i].first;
      cblas_Xaxpy(num_cols_, alpha * e[i].second, B.RowData(src), 1, RowData(dst), 1);
    }
  }
}

template <typename Real>
void MatrixBase<Real>::AddMatSmat(Real alpha, const MatrixBase<Real>& A,
                                  const SparseMatrix<Real>& B, MatrixTransposeType transB,
                                  Real beta) {
  CheckTrans("AddMatSmat", transB);
  const bool ok = A.NumRows() == num_rows_ && Agrees(OpRowsOf(B, transB), A.NumCols()) &&
                  Agrees(OpColsOf(B, transB), num_cols_);
  if (!ok)
    CUCTX_ERR << "AddMatSmat: shape mismatch: A " << ShapeOf(A) << " times B " << SparseShape(B)
              << " (" << TransText(transB) << ") into *this " << ShapeOf(*this);
  internal::CheckNoOverlap("AddMatSmat", *this, A, "A");
  if (num_rows_ == 0 || num_cols_ == 0) return;
  ScaleOrZero(beta, this);
  // Row-oriented: each stored B element touches one column of A and one column of *this, visited
  // row by row so every pass reads contiguous rows.
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* a = A.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT br = 0; br < B.NumRows(); ++br) {
      const SparseVector<Real>& row = B.Row(br);
      const std::pair<MatrixIndexT, Real>* e = row.Data();
      if (transB == kNoTrans) {
        // op(B)(br, j) = B(br, j): out(r, j) += alpha * A(r, br) * B(br, j).
        const Real s = alpha * a[br];
        if (s == 0) continue;
        for (MatrixIndexT i = 0; i < row.NumElements(); ++i) out[e[i].first] += s * e[i].second;
      } else {
        // op(B)(j, br) = B(br, j): out(r, br) += alpha * sum_j A(r, j) * B(br, j).
        Real sum = 0;
        for (MatrixIndexT i = 0; i < row.NumElements(); ++i) sum += a[e[i].first] * e[i].second;
        out[br] += alpha * sum;
      }
    }
  }
}

template <typename Real>
void MatrixBase<Real>::AddSmatMat(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                                  const MatrixBase<Real>& B, MatrixTransposeType transB,
                                  Real beta) {
  AddMatMat(alpha, A, transA, B, transB, beta);
}

template <typename Real>
void MatrixBase<Real>::AddMatSmat(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                                  const MatrixBase<Real>& B, MatrixTransposeType transB,
                                  Real beta) {
  AddMatMat(alpha, A, transA, B, transB, beta);
}

#define CUCTX_INSTANTIATE_SPARSE_OPS_(R)                                                   \
  template void MatrixBase<R>::AddSmat(R, const SparseMatrix<R>&, MatrixTransposeType);    \
  template void MatrixBase<R>::AddSmatMat(R, const SparseMatrix<R>&, MatrixTransposeType,  \
                                          const MatrixBase<R>&, R);                        \
  template void MatrixBase<R>::AddMatSmat(R, const MatrixBase<R>&, const SparseMatrix<R>&, \
                                          MatrixTransposeType, R);                         \
  template void MatrixBase<R>::AddSmatMat(R, const MatrixBase<R>&, MatrixTransposeType,    \
                                          const MatrixBase<R>&, MatrixTransposeType, R);   \
  template void MatrixBase<R>::AddMatSmat(R, const MatrixBase<R>&, MatrixTransposeType,    \
                                          const MatrixBase<R>&, MatrixTransposeType, R);
CUCTX_INSTANTIATE_SPARSE_OPS_(float)
CUCTX_INSTANTIATE_SPARSE_OPS_(double)
#undef CUCTX_INSTANTIATE_SPARSE_OPS_

}  // namespace cuctx
