// matrix/matrix-packed-ops.cc: MatrixBase updates with symmetric (Sp) and triangular (Tp)
// operands (Kaldi parity): AddSp and the AddSpMat / AddTpMat / ... product family.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"

#include <initializer_list>

namespace cuctx {

using internal::ShapeOf;

namespace {

const char* TransText(MatrixTransposeType t) { return t == kTrans ? "kTrans" : "kNoTrans"; }

// Throws, naming `op` and all shapes, unless op(A) op(B) is NumRows() x NumCols() of *out. The
// packed operands are unpacked before this check, so the dense shapes say everything.
template <typename Real>
void CheckProduct(const char* op, const MatrixBase<Real>& out, const MatrixBase<Real>& A,
                  MatrixTransposeType transA, const MatrixBase<Real>& B,
                  MatrixTransposeType transB) {
  for (MatrixTransposeType t : {transA, transB})
    if (t != kNoTrans && t != kTrans)
      CUCTX_ERR << op << ": invalid MatrixTransposeType " << static_cast<int>(t);
  using internal::OpCols;
  using internal::OpRows;
  if (OpRows(A, transA) != out.NumRows() || OpCols(B, transB) != out.NumCols() ||
      OpCols(A, transA) != OpRows(B, transB))
    CUCTX_ERR << op << ": shape mismatch: A " << ShapeOf(A) << " (" << TransText(transA)
              << ") times B " << ShapeOf(B) << " (" << TransText(transB) << ") into *this "
              << ShapeOf(out);
}

}  // namespace

template <typename Real>
template <typename OtherReal>
void MatrixBase<Real>::AddSp(Real alpha, const SpMatrix<OtherReal>& S) {
  const MatrixIndexT n = S.NumRows();
  if (num_rows_ != n || num_cols_ != n)
    CUCTX_ERR << "AddSp: shape mismatch: S is " << n << "x" << n << " but *this is "
              << ShapeOf(*this);
  const OtherReal* p = S.Data();
  for (MatrixIndexT r = 0; r < n; ++r) {
    for (MatrixIndexT c = 0; c < r; ++c, ++p) {
      const Real v = alpha * static_cast<Real>(*p);
      (*this)(r, c) += v;
      (*this)(c, r) += v;
    }
    (*this)(r, r) += alpha * static_cast<Real>(*p++);
  }
}

template <typename Real>
void MatrixBase<Real>::AddSpMat(Real alpha, const SpMatrix<Real>& A, const MatrixBase<Real>& B,
                                MatrixTransposeType transB, Real beta) {
  const Matrix<Real> a(A);
  CheckProduct("AddSpMat", *this, a, kNoTrans, B, transB);
  AddMatMat(alpha, a, kNoTrans, B, transB, beta);
}

template <typename Real>
void MatrixBase<Real>::AddTpMat(Real alpha, const TpMatrix<Real>& A, MatrixTransposeType transA,
                                const MatrixBase<Real>& B, MatrixTransposeType transB, Real beta) {
  const Matrix<Real> a(A);
  CheckProduct("AddTpMat", *this, a, transA, B, transB);
  AddMatMat(alpha, a, transA, B, transB, beta);
}

template <typename Real>
void MatrixBase<Real>::AddMatSp(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                                const SpMatrix<Real>& B, Real beta) {
  const Matrix<Real> b(B);
  CheckProduct("AddMatSp", *this, A, transA, b, kNoTrans);
  AddMatMat(alpha, A, transA, b, kNoTrans, beta);
}

template <typename Real>
void MatrixBase<Real>::AddSpMatSp(Real alpha, const SpMatrix<Real>& A, const MatrixBase<Real>& B,
                                  MatrixTransposeType transB, const SpMatrix<Real>& C, Real beta) {
  if (transB != kNoTrans && transB != kTrans)
    CUCTX_ERR << "AddSpMatSp: invalid MatrixTransposeType " << static_cast<int>(transB);
  if (internal::OpRows(B, transB) != A.NumRows() || internal::OpCols(B, transB) != C.NumRows() ||
      num_rows_ != A.NumRows() || num_cols_ != C.NumRows())
    CUCTX_ERR << "AddSpMatSp: shape mismatch: symmetric A of size " << A.NumRows() << " times B "
              << ShapeOf(B) << " (" << TransText(transB) << ") times symmetric C of size "
              << C.NumRows() << " into *this " << ShapeOf(*this);
  internal::CheckNoOverlap("AddSpMatSp", *this, B, "B");
  // A op(B) first (A's size by C's size), then times C into *this.
  Matrix<Real> ab(A.NumRows(), C.NumRows(), kUndefined);
  const Matrix<Real> a(A), c(C);
  ab.AddMatMat(1.0, a, kNoTrans, B, transB, 0.0);
  AddMatMat(alpha, ab, kNoTrans, c, kNoTrans, beta);
}

template <typename Real>
void MatrixBase<Real>::AddMatTp(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                                const TpMatrix<Real>& B, MatrixTransposeType transB, Real beta) {
  const Matrix<Real> b(B);
  CheckProduct("AddMatTp", *this, A, transA, b, transB);
  AddMatMat(alpha, A, transA, b, transB, beta);
}

template <typename Real>
void MatrixBase<Real>::AddTpTp(Real alpha, const TpMatrix<Real>& A, MatrixTransposeType transA,
                               const TpMatrix<Real>& B, MatrixTransposeType transB, Real beta) {
  const Matrix<Real> a(A), b(B);
  CheckProduct("AddTpTp", *this, a, transA, b, transB);
  AddMatMat(alpha, a, transA, b, transB, beta);
}

template <typename Real>
void MatrixBase<Real>::AddSpSp(Real alpha, const SpMatrix<Real>& A, const SpMatrix<Real>& B,
                               Real beta) {
  const Matrix<Real> a(A), b(B);
  CheckProduct("AddSpSp", *this, a, kNoTrans, b, kNoTrans);
  AddMatMat(alpha, a, kNoTrans, b, kNoTrans, beta);
}

#define CUCTX_INSTANTIATE_PACKED_OPS_(R)                                               \
  template void MatrixBase<R>::AddSp(R, const SpMatrix<float>&);                       \
  template void MatrixBase<R>::AddSp(R, const SpMatrix<double>&);                      \
  template void MatrixBase<R>::AddSpMat(R, const SpMatrix<R>&, const MatrixBase<R>&,   \
                                        MatrixTransposeType, R);                       \
  template void MatrixBase<R>::AddTpMat(R, const TpMatrix<R>&, MatrixTransposeType,    \
                                        const MatrixBase<R>&, MatrixTransposeType, R); \
  template void MatrixBase<R>::AddMatSp(R, const MatrixBase<R>&, MatrixTransposeType,  \
                                        const SpMatrix<R>&, R);                        \
  template void MatrixBase<R>::AddSpMatSp(R, const SpMatrix<R>&, const MatrixBase<R>&, \
                                          MatrixTransposeType, const SpMatrix<R>&, R); \
  template void MatrixBase<R>::AddMatTp(R, const MatrixBase<R>&, MatrixTransposeType,  \
                                        const TpMatrix<R>&, MatrixTransposeType, R);   \
  template void MatrixBase<R>::AddTpTp(R, const TpMatrix<R>&, MatrixTransposeType,     \
                                       const TpMatrix<R>&, MatrixTransposeType, R);    \
  template void MatrixBase<R>::AddSpSp(R, const SpMatrix<R>&, const SpMatrix<R>&, R);
CUCTX_INSTANTIATE_PACKED_OPS_(float)
CUCTX_INSTANTIATE_PACKED_OPS_(double)
#undef CUCTX_INSTANTIATE_PACKED_OPS_

}  // namespace cuctx
