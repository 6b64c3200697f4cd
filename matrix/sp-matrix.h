// matrix/sp-matrix.h: SpMatrix, a symmetric matrix stored as its packed lower triangle.
// SPDX-License-Identifier: Apache-2.0
//
// Storage and the on-disk format are PackedMatrix's (matrix/packed-matrix.h): "FP "/"DP ", the
// size, the lower triangle row by row. The functions here treat the object as the full symmetric
// matrix A with A(r, c) = A(c, r); Sum() and FrobeniusNorm() count both triangles.
//
// The numerical routines (Invert, LogDet) work in double precision internally, whatever Real is,
// and run in plain C++ loops (only CBLAS is guaranteed, not LAPACK); AddMat2 goes through BLAS.
// The eigenvalue routines and quadratic solvers (their own blocks below) use LAPACK through
// matrix/lapack-wrappers.h.
#ifndef CUCTX_MATRIX_SP_MATRIX_H_
#define CUCTX_MATRIX_SP_MATRIX_H_

#include "base/types.h"
#include "matrix/matrix-common.h"
#include "matrix/packed-matrix.h"

#include <string>
#include <type_traits>

namespace cuctx {

template <typename Real>
class MatrixBase;
template <typename Real>
class VectorBase;
template <typename Real>
class TpMatrix;
template <typename Real>
class CuSpMatrix;  // GPU-layer conversion below (cudamatrix/cu-host-conversions.cc)

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

  // A copy of the GPU matrix cu (waits for the copy). Defined in cudamatrix/cu-host-conversions.cc.
  explicit SpMatrix(const CuSpMatrix<Real>& cu);

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

  // ---- eigenvalue routines (matrix/sp-matrix-eig.cc) -------------------------------------------
  // Through LAPACK's symmetric solver (syevr) in the precision of Real. NaN/inf input throws
  // (naming the element); a LAPACK failure throws naming the routine and its info value.

  // *this = P diag(s) P^T with P orthogonal. s must have dimension NumRows(); P (nullptr if not
  // wanted) must be NumRows() x NumRows(), else throws. The eigenvalues come in ascending order
  // (Kaldi's QR method leaves them unsorted; use SortSvd for descending). Empty: no-op.
  void Eig(VectorBase<Real>* s, MatrixBase<Real>* P = nullptr) const;
  // The s->Dim() eigenvalues of largest |value| and their eigenvectors (columns of P, which must
  // be NumRows() x s->Dim(); s->Dim() <= NumRows(), else throws), sorted from greatest to least
  // |value|, so that P diag(s) P^T is the best rank-s->Dim() reconstruction. Kaldi finds these
  // approximately by Lanczos iteration; here every eigenpair is computed exactly (syevr) and the
  // top ones kept, which meets Kaldi's contract exactly. lanczos_dim (the Krylov dimension in
  // Kaldi) is accepted and ignored. s->Dim() == 0: no-op.
  void TopEigs(VectorBase<Real>* s, MatrixBase<Real>* P, MatrixIndexT lanczos_dim = 0) const;
  // As Eig (P may be nullptr), for a positive semidefinite matrix: throws if the most negative
  // eigenvalue is below -tolerance times the largest eigenvalue; negative eigenvalues within the
  // tolerance are set to zero.
  void SymPosSemiDefEig(VectorBase<Real>* s, MatrixBase<Real>* P, Real tolerance = 0.001) const;
  // Largest |eigenvalue| (0 for an empty matrix).
  Real MaxAbsEig() const;
  // Ratio of the largest to the smallest singular value (= |eigenvalue|), as MatrixBase::Cond:
  // 1.0e+100 if singular; throws if empty.
  Real Cond() const;
  // *this = P diag(s^exponent) P^T through SymPosSemiDefEig (so throws if *this is not positive
  // semidefinite within 0.001); throws if a zero eigenvalue meets a negative exponent. exponent ==
  // 1 is a no-op, as is an empty matrix.
  void ApplyPow(Real exponent);
  // Floors *this so that afterwards x^T (*this) x >= x^T (alpha C) x for every x: with
  // alpha C = L L^T (Cholesky), the eigenvalues of L^-1 (*this) L^-T below 1 are raised to 1.
  // Requires C positive definite of the same size and alpha > 0 (throws). With verbose, logs the
  // eigenvalues before flooring. Returns how many eigenvalues were floored.
  int ApplyFloor(const SpMatrix<Real>& C, Real alpha = 1.0, bool verbose = false);
  // Raises every eigenvalue below `floor` to `floor`; returns how many were raised.
  int ApplyFloor(Real floor);
  // Limits the condition number of a positive semidefinite *this (throws otherwise, as
  // SymPosSemiDefEig) to maxcond (> 1, else throws) by flooring the eigenvalues at
  // max(largest / maxcond, 1.0e-40); with invert, *this then becomes the inverse of that floored
  // matrix. Returns how many eigenvalues were at or below the floor.
  MatrixIndexT LimitCond(Real maxcond = 1.0e+5, bool invert = false);
  // As LimitCond, computed in double precision.
  MatrixIndexT LimitCondDouble(Real maxcond = 1.0e+5, bool invert = false);

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
// ---- quadratic solvers (matrix/sp-matrix-solve.cc) ---------------------------------------------
// Numerically stable maximizers of quadratic auxiliary functions, as in the SGMM paper ("The
// subspace Gaussian mixture model -- a structured model for speech recognition"). Each starts
// from the current *x / *M, returns the improvement of the objective (>= 0) and leaves the
// argument unchanged (returning 0) if the new value would be worse.

// Options of the solvers below. K is the largest condition number allowed for the quadratic term
// (its eigenvalues are floored at max(eps, largest / K)); optimize_delta solves for the change
// from the current value rather than the value itself; diagonal_precondition first rescales the
// problem by the square root of the quadratic term's diagonal (helps when dimensions differ in
// scale); print_debug_output logs how many eigenvalues were floored. name appears in messages.
struct SolverOptions {
  BaseFloat K;
  BaseFloat eps;
  std::string name;
  bool optimize_delta;
  bool diagonal_precondition;
  bool print_debug_output;
  explicit SolverOptions(const std::string& solver_name)
      : K(1.0e+4),
        eps(1.0e-40),
        name(solver_name),
        optimize_delta(true),
        diagonal_precondition(false),
        print_debug_output(true) {}
  SolverOptions() : SolverOptions("[unknown]") {}
  // Throws unless K > 10 and eps < 1.0e-10.
  void Check() const;
};

// Maximizes Q(x) = x^T g - 0.5 x^T H x over x (H positive semidefinite; the optimum is H^-1 g
// when H is positive definite and its condition is below opts.K). Requires H.NumRows() == g.Dim()
// == x->Dim() > 0 (throws); throws if H is not positive semidefinite within 0.001 (relative). If
// H is exactly zero, warns and returns 0. Computed in double precision.
template <typename Real>
Real SolveQuadraticProblem(const SpMatrix<Real>& H, const VectorBase<Real>& g,
                           const SolverOptions& opts, VectorBase<Real>* x);

// Maximizes Q(M) = tr(M^T P Y) - 0.5 tr(P M Q M^T) over the R x C matrix M (Q: C x C and P: R x R
// positive semidefinite; Y: R x C); like a stable M = Y Q^-1. Requires C > 0 and matching sizes
// (throws). If Q is exactly zero, warns and returns 0.
template <typename Real>
Real SolveQuadraticMatrixProblem(const SpMatrix<Real>& Q, const MatrixBase<Real>& Y,
                                 const SpMatrix<Real>& P, const SolverOptions& opts,
                                 MatrixBase<Real>* M);

// Maximizes Q(M) = tr(M^T G) - 0.5 tr(P1 M Q1 M^T) - 0.5 tr(P2 M Q2 M^T) over the R x C matrix
// M, with P1 positive definite (throws otherwise), P2 positive semidefinite, and Q1, Q2 positive
// semidefinite with Q1 + d Q2 positive definite for d >= 0 (rows whose problem is not are solved
// as SolveQuadraticProblem does). Requires C > 0 and matching sizes (throws).
template <typename Real>
Real SolveDoubleQuadraticMatrixProblem(const MatrixBase<Real>& G, const SpMatrix<Real>& P1,
                                       const SpMatrix<Real>& P2, const SpMatrix<Real>& Q1,
                                       const SpMatrix<Real>& Q2, const SolverOptions& opts,
                                       MatrixBase<Real>* M);

}  // namespace cuctx

#endif  // CUCTX_MATRIX_SP_MATRIX_H_
