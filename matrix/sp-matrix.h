// matrix/sp-matrix.h: SpMatrix, a symmetric matrix stored as its packed lower triangle.
// SPDX-License-Identifier: Apache-2.0
//
// Storage and the on-disk format are PackedMatrix's (matrix/packed-matrix.h): "FP "/"DP ", the
// size, the lower triangle row by row. The functions here treat the object as the full symmetric
// matrix A with A(r, c) = A(c, r); Sum() and FrobeniusNorm() count both triangles.
//
// The numerical routines (Invert, LogDet) work in double precision internally, whatever Real is,
// and run in plain C++ loops (only CBLAS is guaranteed, not LAPACK); AddMat2 goes through BLAS.
#ifndef CUCTX_MATRIX_SP_MATRIX_H_
#define CUCTX_MATRIX_SP_MATRIX_H_

#include "base/types.h"
#include "matrix/matrix-common.h"
#include "matrix/packed-matrix.h"

namespace cuctx {

template <typename Real>
class MatrixBase;
template <typename Real>
class VectorBase;

// A symmetric n x n matrix; owns its n(n+1)/2 elements. Not thread-safe for concurrent
// modification; const methods may run concurrently. Misuse (size mismatch, bad index, singular or
// indefinite input where that is not allowed) throws cuctx::Error naming the sizes or the problem.
template <typename Real>
class SpMatrix : public PackedMatrix<Real> {
 public:
  SpMatrix() = default;
  explicit SpMatrix(MatrixIndexT n, MatrixResizeType resize_type = kSetZero)
      : PackedMatrix<Real>(n, resize_type) {}
  SpMatrix(const SpMatrix<Real>&) = default;
  SpMatrix& operator=(const SpMatrix<Real>&) = default;
  template <typename OtherReal>
  explicit SpMatrix(const SpMatrix<OtherReal>& other) {
    this->Resize(other.NumRows(), kUndefined);
    this->CopyFromPacked(other);
  }
  // The symmetric matrix made from the square matrix M as CopyFromMat does.
  explicit SpMatrix(const MatrixBase<Real>& M, SpCopyType copy_type = kTakeMean) {
    CopyFromMat(M, copy_type);
  }

  // Element (r, c) of the full symmetric matrix (either triangle; (r, c) and (c, r) are the same
  // storage). Throws if an index is out of range.
  Real operator()(MatrixIndexT r, MatrixIndexT c) const {
    return r >= c ? PackedMatrix<Real>::operator()(r, c) : PackedMatrix<Real>::operator()(c, r);
  }
  Real& operator()(MatrixIndexT r, MatrixIndexT c) {
    return r >= c ? PackedMatrix<Real>::operator()(r, c) : PackedMatrix<Real>::operator()(c, r);
  }

  // Copies another SpMatrix of the same size (either precision).
  template <typename OtherReal>
  void CopyFromSp(const SpMatrix<OtherReal>& other) {
    this->CopyFromPacked(other);
  }

  // Resizes *this to M's size (M must be square, else throws) and takes its lower triangle
  // (kTakeLower), its upper triangle (kTakeUpper) or the mean of the two (kTakeMean).
  // kTakeMeanAndCheck also throws if M is not symmetric, i.e. if some |M(r,c) - M(c,r)| exceeds
  // 1e-4 * (|M(r,c)| + |M(c,r)|) + 1e-20, naming the element.
  void CopyFromMat(const MatrixBase<Real>& M, SpCopyType copy_type = kTakeMean);

  // Writes the full symmetric matrix into M, which must be NumRows() x NumRows() (else throws).
  // (Kaldi spells this Matrix<Real>(const SpMatrix&) / MatrixBase::CopyFromSp.)
  template <typename OtherReal>
  void CopyToMat(MatrixBase<OtherReal>* M) const;

  // *this = beta * *this + alpha * M M^T (transM == kNoTrans; M.NumRows() == NumRows()) or
  // alpha * M^T M (kTrans; M.NumCols() == NumRows()). With beta == 0 the old contents are ignored
  // (even NaN). Throws on a size mismatch.
  void AddMat2(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType transM, Real beta);
  // *this += alpha * v v^T; requires v.Dim() == NumRows().
  template <typename OtherReal>
  void AddVec2(Real alpha, const VectorBase<OtherReal>& v);
  // *this += alpha * (v w^T + w v^T).
  void AddVecVec(Real alpha, const VectorBase<Real>& v, const VectorBase<Real>& w);
  // *this += alpha * diag(v).
  template <typename OtherReal>
  void AddDiagVec(Real alpha, const VectorBase<OtherReal>& v);
  // *this += alpha * S; sizes must match.
  void AddSp(Real alpha, const SpMatrix<Real>& S) { this->AddPacked(alpha, S); }

  // Inverts *this in place. The matrix must be symmetric and nonsingular, but need not be
  // positive definite (LU with partial pivoting in double precision). If log_det / det_sign are
  // given they receive log|det| and the sign of the determinant (of the matrix before inversion).
  // A singular matrix throws "singular" when inverse_needed; otherwise it leaves *this unchanged
  // and reports log_det = -inf, det_sign = 0.
  void Invert(Real* log_det = nullptr, Real* det_sign = nullptr, bool inverse_needed = true);
  // As Invert; the arithmetic is double precision for both Real types already.
  void InvertDouble(Real* log_det = nullptr, Real* det_sign = nullptr, bool inverse_needed = true) {
    Invert(log_det, det_sign, inverse_needed);
  }
  // log|det| (and its sign through det_sign); -inf (sign 0) for a singular matrix.
  Real LogDet(Real* det_sign = nullptr) const;
  // log det of a positive definite matrix (through Cholesky); throws if not positive definite.
  Real LogPosDefDet() const;
  // True if Cholesky succeeds (the matrix is numerically positive definite).
  bool IsPosDef() const;

  // Sum of all n^2 elements of the symmetric matrix.
  Real Sum() const;
  // sqrt(sum of the squares of all n^2 elements).
  Real FrobeniusNorm() const;

  // ---- Kaldi parity: products and decompositions (matrix/sp-matrix-extra.cc) --------------------

  // *this = beta * *this + alpha * M diag(v) M^T (transM == kNoTrans; M is NumRows() x v.Dim())
  // or alpha * M^T diag(v) M (kTrans; M is v.Dim() x NumRows()). With beta == 0 the old contents
  // are ignored. Throws on a size mismatch.
  void AddMat2Vec(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType transM,
                  const VectorBase<Real>& v, Real beta = 0.0);
  // *this = beta * *this + alpha * M A M^T (kNoTrans; M is NumRows() x A.NumRows()) or
  // alpha * M^T A M (kTrans). A may be *this. (Kaldi's variant for a sparse M; here M is used
  // densely, with the same result.) Throws on a size mismatch.
  void AddSmat2Sp(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType transM,
                  const SpMatrix<Real>& A, Real beta = 0.0);

  // Tridiagonalizes *this by an orthogonal similarity (LAPACK sptrd, opgtr). If *this is S on
  // entry, on exit it is the tridiagonal T = Q S Q^T, i.e. S = Q^T T Q (note: Q's rows, not its
  // columns, are the basis; this is Kaldi's convention). Q may be nullptr; otherwise it must be
  // NumRows() x NumRows() (else throws) and receives the orthogonal Q.
  void Tridiagonalize(MatrixBase<Real>* Q);
  // The symmetric QR algorithm (LAPACK steqr): *this must be tridiagonal on entry (every element
  // more than one place off the diagonal exactly zero, else throws) and is made diagonal by an
  // orthogonal similarity T = Z D Z^T, with the eigenvalues in ascending order. If Q is not
  // nullptr it must have NumRows() rows and is replaced by Z^T Q, so that Q^T *this Q is the
  // same before and after (after Tridiagonalize(&Q), S == Q^T D Q). Throws if LAPACK fails to
  // converge.
  void Qr(MatrixBase<Real>* Q);
  // The matrix logarithm / exponential through the symmetric eigendecomposition *this = P D P^T
  // (LAPACK syevr, in double precision): *this = P f(D) P^T. Log throws if an eigenvalue is not
  // positive (the matrix is not positive definite).
  void Log();
  void Exp();
  // ---- end Kaldi parity: products and decompositions --------------------------------------------
};

// tr(A B) = sum over all (r, c) of A(r, c) B(r, c); sizes must match.
template <typename Real>
Real TraceSpSp(const SpMatrix<Real>& A, const SpMatrix<Real>& B);

// v1^T S v2; requires v1.Dim() == v2.Dim() == S.NumRows().
template <typename Real>
Real VecSpVec(const VectorBase<Real>& v1, const SpMatrix<Real>& S, const VectorBase<Real>& v2);

// tr(S M) for a square M of S's size.
template <typename Real>
Real TraceSpMat(const SpMatrix<Real>& S, const MatrixBase<Real>& M);

// ---- Kaldi parity: traces with symmetric factors (matrix/matrix-traces.cc) ----------------------
// tr(op(A) B op(C)) and tr(op(A) B op(C) D), B and D symmetric; the shapes must chain and close
// (else throws naming them).
template <typename Real>
Real TraceMatSpMat(const MatrixBase<Real>& A, MatrixTransposeType transA, const SpMatrix<Real>& B,
                   const MatrixBase<Real>& C, MatrixTransposeType transC);
template <typename Real>
Real TraceMatSpMatSp(const MatrixBase<Real>& A, MatrixTransposeType transA, const SpMatrix<Real>& B,
                     const MatrixBase<Real>& C, MatrixTransposeType transC,
                     const SpMatrix<Real>& D);
// ---- end Kaldi parity: traces with symmetric factors --------------------------------------------

}  // namespace cuctx

#endif  // CUCTX_MATRIX_SP_MATRIX_H_
