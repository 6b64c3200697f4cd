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

#include <type_traits>

namespace cuctx {

template <typename Real>
class MatrixBase;
template <typename Real>
class VectorBase;
template <typename Real>
class TpMatrix;

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

  // ---- Kaldi parity: congruence updates and structure tests (matrix/sp-matrix-ops.cc) ---------
  // The updates compute into scratch storage first, so the SpMatrix argument may be *this. With
  // beta == 0 the old contents are ignored (NaN included). Size mismatches throw.

  // True if ||*this - other||_F <= tol * max(||*this||_F, ||other||_F) (norms of the full
  // symmetric matrices). Throws on a size mismatch or tol < 0.
  bool ApproxEqual(const SpMatrix<Real>& other, float tol = 0.01) const;
  // *this = beta * *this + alpha * op(M) A op(M)^T: M A M^T (kNoTrans; M is NumRows() x
  // A.NumRows()) or M^T A M (kTrans; M is A.NumRows() x NumRows()). Products through BLAS gemm.
  void AddMat2Sp(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType transM,
                 const SpMatrix<Real>& A, Real beta = 0.0);
  // *this = beta * *this + alpha * diag(v) S diag(v); v.Dim() and S's size equal NumRows().
  void AddVec2Sp(Real alpha, const VectorBase<Real>& v, const SpMatrix<Real>& S, Real beta);
  // As AddMat2Sp with the lower-triangular T: alpha * T A T^T (kNoTrans) or T^T A T (kTrans).
  void AddTp2Sp(Real alpha, const TpMatrix<Real>& T, MatrixTransposeType transM,
                const SpMatrix<Real>& A, Real beta = 0.0);
  // *this = beta * *this + alpha * T T^T (kNoTrans) or T^T T (kTrans), through BLAS syrk.
  void AddTp2(Real alpha, const TpMatrix<Real>& T, MatrixTransposeType transM, Real beta = 0.0);

  // Structure tests on the full symmetric matrix (all true for the 0 x 0 matrix):
  // IsDiagonal: sum of |off-diagonal| <= cutoff * sum of |diagonal| (both triangles counted once);
  // IsUnit: every element within cutoff (absolute) of the identity; IsZero: every |element| <=
  // cutoff; IsTridiagonal: max |element| off the three central diagonals <= cutoff * max |element|
  // on them.
  bool IsDiagonal(Real cutoff = 1.0e-05) const;
  bool IsUnit(Real cutoff = 1.0e-05) const;
  bool IsZero(Real cutoff = 1.0e-05) const;
  bool IsTridiagonal(Real cutoff = 1.0e-05) const;
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

// ---- Kaldi parity: comparisons and traces (matrix/sp-matrix-ops.cc) -----------------------------

// A.ApproxEqual(B, tol). `tol` does not take part in template deduction, so a double literal works
// for float matrices too.
template <typename Real>
bool ApproxEqual(const SpMatrix<Real>& A, const SpMatrix<Real>& B,
                 typename std::common_type<Real>::type tol = 0.01);
// Throws cuctx::Error (naming the sizes and the relative difference) unless ApproxEqual(A, B, tol).
template <typename Real>
void AssertEqual(const SpMatrix<Real>& A, const SpMatrix<Real>& B,
                 typename std::common_type<Real>::type tol = 0.01);

// tr(A B) across precisions (accumulated in double, returned as Real); sizes must match. Calls
// with equal precisions pick the one-type TraceSpSp above.
template <typename Real, typename OtherReal>
Real TraceSpSp(const SpMatrix<Real>& A, const SpMatrix<OtherReal>& B);

// sum over the stored lower triangles of A(r, c) B(r, c): tr(A B) with each off-diagonal product
// counted once instead of twice (Kaldi uses it where only that sum is needed). Sizes must match.
template <typename Real>
Real TraceSpSpLower(const SpMatrix<Real>& A, const SpMatrix<Real>& B);

// tr(op(A) B op(C)), B symmetric; op(A) must be B.NumRows() columns wide and op(C) B.NumRows()
// rows high, op(A) B op(C) square (else throws).
template <typename Real>
Real TraceMatSpMat(const MatrixBase<Real>& A, MatrixTransposeType transA, const SpMatrix<Real>& B,
                   const MatrixBase<Real>& C, MatrixTransposeType transC);

// tr(op(A) B op(C) D), B and D symmetric; shapes as the product requires (else throws).
template <typename Real>
Real TraceMatSpMatSp(const MatrixBase<Real>& A, MatrixTransposeType transA, const SpMatrix<Real>& B,
                     const MatrixBase<Real>& C, MatrixTransposeType transC,
                     const SpMatrix<Real>& D);

}  // namespace cuctx

#endif  // CUCTX_MATRIX_SP_MATRIX_H_
