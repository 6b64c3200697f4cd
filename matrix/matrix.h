// matrix/matrix.h: CPU matrices: MatrixBase (a non-owning view), Matrix (owns) and SubMatrix.
// SPDX-License-Identifier: Apache-2.0
//
// Names, argument order, defaults and semantics follow Kaldi's MatrixBase/Matrix/SubMatrix and the
// CuMatrixBase method list in API.md, so CPU code and the CuMatrix CPU fallback port unchanged.
// Every class is instantiated for float and double (matrix/matrix*.cc).
//
// Layout: row-major; element (r, c) is at Data()[r * Stride() + c]. Matrix pads rows so that every
// row starts 16-byte aligned (Stride() is a multiple of 16 / sizeof(Real)) unless constructed with
// kStrideEqualNumCols. A view (SubMatrix, ColRange, ...) keeps its parent's stride, so Stride() may
// exceed NumCols() by any amount. A matrix with zero rows or columns is legal; then Data() may be
// nullptr and Stride() may be 0.
//
// Errors: caller misuse (shape mismatch, index out of range, forbidden aliasing) throws
// cuctx::Error with a message naming both shapes or the bad index; nothing here aborts. Operations
// on empty matrices are no-ops unless documented otherwise (Max/Min of nothing throw).
//
// Aliasing: element-wise ops accept an input that is *this itself (same data and stride). Ops that
// gather or multiply (CopyRows, AddMatMat, ...) throw if an input overlaps *this in memory.
//
// Thread-safety: none internally. Concurrent const calls on one matrix are safe; a call that writes
// a matrix must not run concurrently with any other call touching it. BLAS calls go to OpenBLAS,
// which may use its own threads internally.
#ifndef CUCTX_MATRIX_MATRIX_H_
#define CUCTX_MATRIX_MATRIX_H_

#include "base/error.h"
#include "base/types.h"
#include "matrix/matrix-common.h"
#include "matrix/vector.h"

#include <istream>
#include <ostream>
#include <vector>

namespace cuctx {

class CompressedMatrix;  // matrix/compressed-matrix.h
// ---- GPU-layer conversions (Kaldi parity) ----
// Forward declaration only: the members below that take a CuMatrixBase are defined in
// cudamatrix/cu-host-conversions.cc (float/double for both Real and OtherReal), so this header and
// libcuctx-matrix stay usable without the cudamatrix library; using them needs it at link time.
template <typename Real>
class CuMatrixBase;
template <typename Real>
class CuVectorBase;

// The storage and shape of a matrix that this object does not own. Derived classes decide
// ownership: Matrix allocates and frees, SubMatrix views memory owned elsewhere. A MatrixBase never
// changes its shape; only Matrix::Resize/Swap/Transpose do.
template <typename Real>
class MatrixBase {
 public:
  // ---- shape and element access ----------------------------------------------------------------

  MatrixIndexT NumRows() const { return num_rows_; }
  MatrixIndexT NumCols() const { return num_cols_; }
  // Distance in elements between the starts of consecutive rows (>= NumCols() when rows > 1).
  MatrixIndexT Stride() const { return stride_; }
  // Bytes spanned by the rows: NumRows() * Stride() * sizeof(Real).
  size_t SizeInBytes() const {
    return static_cast<size_t>(num_rows_) * static_cast<size_t>(stride_) * sizeof(Real);
  }

  // Pointer to element (0, 0); may be nullptr for an empty matrix.
  Real* Data() { return data_; }
  const Real* Data() const { return data_; }
  // Pointer to the start of row r (bounds checked by CUCTX_ASSERT only).
  Real* RowData(MatrixIndexT r) {
    CUCTX_ASSERT(static_cast<UnsignedMatrixIndexT>(r) <
                 static_cast<UnsignedMatrixIndexT>(num_rows_));
    return data_ + static_cast<size_t>(r) * stride_;
  }
  const Real* RowData(MatrixIndexT r) const {
    CUCTX_ASSERT(static_cast<UnsignedMatrixIndexT>(r) <
                 static_cast<UnsignedMatrixIndexT>(num_rows_));
    return data_ + static_cast<size_t>(r) * stride_;
  }

  // Element (r, c); bounds checked by CUCTX_ASSERT only (compiled out with NDEBUG).
  Real& operator()(MatrixIndexT r, MatrixIndexT c) {
    CUCTX_ASSERT(
        static_cast<UnsignedMatrixIndexT>(r) < static_cast<UnsignedMatrixIndexT>(num_rows_) &&
        static_cast<UnsignedMatrixIndexT>(c) < static_cast<UnsignedMatrixIndexT>(num_cols_));
    return data_[static_cast<size_t>(r) * stride_ + c];
  }
  const Real operator()(MatrixIndexT r, MatrixIndexT c) const {
    CUCTX_ASSERT(
        static_cast<UnsignedMatrixIndexT>(r) < static_cast<UnsignedMatrixIndexT>(num_rows_) &&
        static_cast<UnsignedMatrixIndexT>(c) < static_cast<UnsignedMatrixIndexT>(num_cols_));
    return data_[static_cast<size_t>(r) * stride_ + c];
  }

  // Row r as a vector view. Throws if r is out of range.
  SubVector<Real> Row(MatrixIndexT r) { return SubVector<Real>(*this, r); }
  const SubVector<Real> Row(MatrixIndexT r) const { return SubVector<Real>(*this, r); }

  // Views of a block, of rows [ro, ro + nr) or of columns [co, co + nc). Throw if out of range.
  SubMatrix<Real> Range(MatrixIndexT ro, MatrixIndexT nr, MatrixIndexT co, MatrixIndexT nc) {
    return SubMatrix<Real>(*this, ro, nr, co, nc);
  }
  const SubMatrix<Real> Range(MatrixIndexT ro, MatrixIndexT nr, MatrixIndexT co,
                              MatrixIndexT nc) const {
    return SubMatrix<Real>(*this, ro, nr, co, nc);
  }
  SubMatrix<Real> RowRange(MatrixIndexT ro, MatrixIndexT nr) {
    return SubMatrix<Real>(*this, ro, nr, 0, num_cols_);
  }
  const SubMatrix<Real> RowRange(MatrixIndexT ro, MatrixIndexT nr) const {
    return SubMatrix<Real>(*this, ro, nr, 0, num_cols_);
  }
  SubMatrix<Real> ColRange(MatrixIndexT co, MatrixIndexT nc) {
    return SubMatrix<Real>(*this, 0, num_rows_, co, nc);
  }
  const SubMatrix<Real> ColRange(MatrixIndexT co, MatrixIndexT nc) const {
    return SubMatrix<Real>(*this, 0, num_rows_, co, nc);
  }

  // ---- copies (matrix/matrix.cc) ----------------------------------------------------------------

  // *this = M or M^T (either precision). Shapes must match after the transpose. M may be *this
  // itself only with kNoTrans (a no-op); other overlap throws.
  template <typename OtherReal>
  void CopyFromMat(const MatrixBase<OtherReal>& M, MatrixTransposeType trans = kNoTrans);
  // *this = the full symmetric matrix that M packs, or the lower-triangular M (zeros above the
  // diagonal) or its transpose. Sizes must match. Defined in matrix/packed-convert.cc.
  template <typename OtherReal>
  void CopyFromSp(const SpMatrix<OtherReal>& M);
  template <typename OtherReal>
  void CopyFromTp(const TpMatrix<OtherReal>& M, MatrixTransposeType trans = kNoTrans);
  // ---- from the GPU layer (defined in cudamatrix/cu-host-conversions.cc) ----
  // *this = M or M^T (either precision), read back from the device (waits for the copy). Shapes
  // must match after the transpose, else throws cuctx::Error naming both.
  template <typename OtherReal>
  void CopyFromMat(const CuMatrixBase<OtherReal>& M, MatrixTransposeType trans = kNoTrans);
  // The rows of *this from the GPU vector v, as CopyRowsFromVec(const VectorBase&): v.Dim() is
  // NumRows() * NumCols() or NumCols() (every row gets v). Waits for the copy.
  void CopyRowsFromVec(const CuVectorBase<Real>& v);
  // ---- end of GPU-layer conversions ----
  // M = *this (the reverse of CopyFromMat, for symmetry with CuMatrixBase).
  template <typename OtherReal>
  void CopyToMat(MatrixBase<OtherReal>* M, MatrixTransposeType trans = kNoTrans) const;

  // If v.Dim() == NumRows() * NumCols(), v holds the rows end to end; if v.Dim() == NumCols(),
  // every row becomes v. Anything else throws.
  template <typename OtherReal>
  void CopyRowsFromVec(const VectorBase<OtherReal>& v);
  // If v.Dim() == NumRows() * NumCols(), v holds the columns end to end; if v.Dim() == NumRows(),
  // every column becomes v. Anything else throws.
  template <typename OtherReal>
  void CopyColsFromVec(const VectorBase<OtherReal>& v);
  // Row `row` = v / column `col` = v; throw on a dimension mismatch or a bad index.
  template <typename OtherReal>
  void CopyRowFromVec(const VectorBase<OtherReal>& v, MatrixIndexT row);
  template <typename OtherReal>
  void CopyColFromVec(const VectorBase<OtherReal>& v, MatrixIndexT col);
  // The diagonal = v; requires v.Dim() == min(NumRows(), NumCols()).
  void CopyDiagFromVec(const VectorBase<Real>& v);

  // Row r = src row indexes[r], or zero where indexes[r] < 0. `indexes` has NumRows() entries;
  // requires src.NumCols() == NumCols(); throws on an index >= src.NumRows() or if src overlaps
  // *this.
  void CopyRows(const MatrixBase<Real>& src, const MatrixIndexT* indexes);
  // Row r = the NumCols() values at src[r], or zero where src[r] is nullptr.
  void CopyRows(const Real* const* src);
  // The NumCols() values at dst[r] = row r, skipping nullptr entries.
  void CopyToRows(Real* const* dst) const;
  // Column c = src column indexes[c], or zero where indexes[c] < 0. `indexes` has NumCols()
  // entries; requires src.NumRows() == NumRows(); throws on a bad index or overlap.
  void CopyCols(const MatrixBase<Real>& src, const MatrixIndexT* indexes);
  // Row r += alpha * src row indexes[r] (skipped where indexes[r] < 0). Checks as CopyRows.
  void AddRows(Real alpha, const MatrixBase<Real>& src, const MatrixIndexT* indexes);
  // Row r += alpha * the NumCols() values at src[r] (skipped where src[r] is nullptr).
  void AddRows(Real alpha, const Real* const* src);
  // dst row indexes[r] += alpha * row r of *this (skipped where indexes[r] < 0). `indexes` has
  // NumRows() entries; requires dst->NumCols() == NumCols(); throws on a bad index or overlap.
  void AddToRows(Real alpha, const MatrixIndexT* indexes, MatrixBase<Real>* dst) const;
  // The NumCols() values at dst[r] += alpha * row r (skipped where dst[r] is nullptr).
  void AddToRows(Real alpha, Real* const* dst) const;
  // Column c += src column indexes[c] (skipped where indexes[c] < 0). Checks as CopyCols.
  void AddCols(const MatrixBase<Real>& src, const MatrixIndexT* indexes);
  // Row r .*= src row indexes[r] (unchanged where indexes[r] < 0). Checks as CopyRows.
  void MulRows(const MatrixBase<Real>& src, const MatrixIndexT* indexes);
  // (*this)(r, c) += sum_{j = indexes[r].first}^{indexes[r].second - 1} src(j, c). `indexes` has
  // NumRows() entries; a pair with first >= second (e.g. (-1, -1)) is an empty range, any other
  // must satisfy 0 <= first and second <= src.NumRows(). Requires src.NumCols() == NumCols().
  void AddRowRanges(const MatrixBase<Real>& src, const Int32Pair* indexes);
  // (*this)(r, c) = sum_{j = indexes[c].first}^{indexes[c].second - 1} src(r, j) (0 for an empty
  // range). `indexes` has NumCols() entries, checked as in AddRowRanges against src.NumCols();
  // requires src.NumRows() == NumRows().
  void SumColumnRanges(const MatrixBase<Real>& src, const Int32Pair* indexes);

  // Square matrices only (else throws): mirror one triangle onto the other.
  void CopyLowerToUpper();
  void CopyUpperToLower();
  // Zeroes every (r, c) with c > r (any shape).
  void SetZeroAboveDiag();

  // output[i] = (*this)(indexes[i].first, indexes[i].second) for i < num; throws on a bad index.
  void Lookup(const Int32Pair* indexes, MatrixIndexT num, Real* output) const;
  void Lookup(const std::vector<Int32Pair>& indexes, Real* output) const;
  // (*this)(e.row, e.column) += alpha * e.weight for each element; throws on a bad index.
  void AddElements(Real alpha, const std::vector<MatrixElement<Real>>& input);
  // (*this)(indexes[i].first, indexes[i].second) += alpha * input[i] for i < num.
  void AddElements(Real alpha, const Int32Pair* indexes, MatrixIndexT num, const Real* input);
  // (*this)(r, elements[r]) += alpha for each row r where elements[r] >= 0 (NumRows() entries).
  void AddToElements(Real alpha, const MatrixIndexT* elements);
  // *mask (resized to this shape) = 1 where (*this)(r, c) == mat(r, c), else 0.
  void EqualElementMask(const MatrixBase<Real>& mat, Matrix<Real>* mask) const;

  // ---- fill and scalar ops (matrix/matrix.cc) ---------------------------------------------------

  void SetZero();
  void Set(Real value);
  // The identity (ones on the diagonal, zeros elsewhere); any shape.
  void SetUnit();
  // Standard normal / uniform (0, 1) values from base/random.h (reproducible after SetRandomSeed).
  void SetRandn();
  void SetRandUniform();
  // Adds alpha to every element.
  void Add(Real alpha);
  void Scale(Real alpha);
  // Adds alpha to every diagonal element (any shape).
  void AddToDiag(Real alpha);

  // ---- element-wise (matrix/matrix-elementwise.cc) ----------------------------------------------
  // Inputs must have the shape of *this (else throws); an input may be *this itself.

  // *this = *this .* A, *this ./ A, max(*this, A), min(*this, A).
  void MulElements(const MatrixBase<Real>& A);
  void DivElements(const MatrixBase<Real>& A);
  void Max(const MatrixBase<Real>& A);
  void Min(const MatrixBase<Real>& A);
  // x = 1 / x.
  void InvertElements();
  // (*this)(r, c) *= scale(c); requires scale.Dim() == NumCols().
  void MulColsVec(const VectorBase<Real>& scale);
  // (*this)(r, c) *= scale(r); requires scale.Dim() == NumRows().
  void MulRowsVec(const VectorBase<Real>& scale);
  // Row r's group g (G = NumCols() / src.NumCols() columns, which must divide exactly) is scaled
  // by src(r, g); requires src.NumRows() == NumRows().
  void MulRowsGroupMat(const MatrixBase<Real>& src);
  // (*this)(r, c) /= div(r); requires div.Dim() == NumRows().
  void DivRowsVec(const VectorBase<Real>& div);
  // *this = beta * *this + alpha * (row broadcast to every row); row.Dim() == NumCols().
  void AddVecToRows(Real alpha, const VectorBase<Real>& row, Real beta = 1.0);
  // *this = beta * *this + alpha * (col broadcast to every column); col.Dim() == NumRows().
  void AddVecToCols(Real alpha, const VectorBase<Real>& col, Real beta = 1.0);
  // *this += alpha * op(A). A may be *this (with kTrans only when square); other overlap throws.
  void AddMat(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType trans = kNoTrans);
  // *this += alpha * op(A) where the shapes are block multiples of each other: if op(A) is a
  // multiple of *this in both directions, its blocks of this shape are summed into *this; if
  // *this is a multiple of op(A), op(A) is added to each block of *this. Else throws.
  void AddMatBlocks(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType trans = kNoTrans);
  // *this = beta * *this + alpha * A .* B.
  void AddMatMatElements(Real alpha, const MatrixBase<Real>& A, const MatrixBase<Real>& B,
                         Real beta);
  // *this = A .* B ./ C, except that where C is 0 the result is A. *this may be A, B or C.
  void SetMatMatDivMat(const MatrixBase<Real>& A, const MatrixBase<Real>& B,
                       const MatrixBase<Real>& C);

  // In-place maps. ApplyPow is std::pow (negative x with a non-integer power gives NaN, as on the
  // GPU); ApplyPowAbs is |x|^p, or sign(x) |x|^p with include_sign, and 0 for x == 0 even when
  // p < 0; ApplyHeaviside is x > 0 ? 1 : 0;
  // ApplyFloor/ApplyCeiling clamp from below/above; ApplyExpLimited is exp(clamp(x, lower,
  // upper)); ApplyExpSpecial is exp(x) for x < 0 and x + 1 otherwise.
  void ApplyPow(Real power);
  void ApplyPowAbs(Real power, bool include_sign = false);
  void ApplyHeaviside();
  void ApplyFloor(Real floor_val);
  void ApplyCeiling(Real ceiling_val);
  void ApplyExp();
  void ApplyExpLimited(Real lower_limit, Real upper_limit);
  void ApplyExpSpecial();
  void ApplyLog();
  // *this = f(src) for the maps above; src must have the shape of *this and may be *this.
  void Exp(const MatrixBase<Real>& src);
  void Log(const MatrixBase<Real>& src);
  void Pow(const MatrixBase<Real>& src, Real power);
  void PowAbs(const MatrixBase<Real>& src, Real power, bool include_sign = false);
  void Floor(const MatrixBase<Real>& src, Real floor_val);
  void Ceiling(const MatrixBase<Real>& src, Real ceiling_val);
  void ExpLimited(const MatrixBase<Real>& src, Real lower_limit, Real upper_limit);
  void ExpSpecial(const MatrixBase<Real>& src);
  void Heaviside(const MatrixBase<Real>& src);

  // ---- neural-net (matrix/matrix-nnet.cc) -------------------------------------------------------

  // *this = 1 / (1 + exp(-src)), tanh(src), log(1 + exp(src)); all stable for large |src|.
  void Sigmoid(const MatrixBase<Real>& src);
  void Tanh(const MatrixBase<Real>& src);
  void SoftHinge(const MatrixBase<Real>& src);
  // Back-propagation through sigmoid / tanh given their output `value`:
  // *this = diff .* value .* (1 - value), and *this = diff .* (1 - value .^ 2).
  void DiffSigmoid(const MatrixBase<Real>& value, const MatrixBase<Real>& diff);
  void DiffTanh(const MatrixBase<Real>& value, const MatrixBase<Real>& diff);
  // Row-wise softmax / log-softmax of src (stable: the row maximum is subtracted first).
  void SoftMaxPerRow(const MatrixBase<Real>& src);
  void LogSoftMaxPerRow(const MatrixBase<Real>& src);
  void ApplySoftMaxPerRow();
  void ApplyLogSoftMaxPerRow();
  // Older spellings of SoftMaxPerRow(src) / LogSoftMaxPerRow(src), kept for ported code.
  void ApplySoftMaxPerRow(const MatrixBase<Real>& src) { SoftMaxPerRow(src); }
  void ApplyLogSoftMaxPerRow(const MatrixBase<Real>& src) { LogSoftMaxPerRow(src); }
  // Back-propagation through a row softmax with output `value`:
  // (*this)(r, c) = value(r, c) * (diff(r, c) - sum_k value(r, k) diff(r, k)). *this may be diff.
  void DiffSoftmaxPerRow(const MatrixBase<Real>& value, const MatrixBase<Real>& diff);
  // Back-propagation through a row log-softmax with output `out_value`:
  // (*this)(r, c) = out_deriv(r, c) - exp(out_value(r, c)) * sum_k out_deriv(r, k). *this may be
  // out_deriv.
  void DiffLogSoftmaxPerRow(const MatrixBase<Real>& out_value, const MatrixBase<Real>& out_deriv);
  // (*this)(r, g) = p-norm of src(r, g*G .. g*G + G - 1), G = src.NumCols() / NumCols(), which must
  // divide exactly. p as in VectorBase::Norm (0 counts nonzeros, inf is max |x|).
  void GroupPnorm(const MatrixBase<Real>& src, Real power);
  // *this (shape of in_value) = derivative of GroupPnorm: out_deriv of the group times
  // d out / d in = sign(x) |x|^(p-1) out^(1-p) (0 where out == 0); for p == inf, sign(x) where
  // |x| == out, else 0; for p == 1, sign(x).
  void DiffGroupPnorm(const MatrixBase<Real>& in_value, const MatrixBase<Real>& out_value,
                      const MatrixBase<Real>& out_deriv, Real power);
  // (*this)(r, g) = max over group g of src row r (groups as GroupPnorm).
  void GroupMax(const MatrixBase<Real>& src);
  // *this (shape of input) = 1 where input(r, c) equals output(r, c / G), else 0.
  void GroupMaxDeriv(const MatrixBase<Real>& input, const MatrixBase<Real>& output);
  // id[r] = column of the largest element of row r (the first one on ties). The vector form
  // resizes *id to NumRows(); the pointer form writes NumRows() values.
  void FindRowMaxId(std::vector<int32>* id) const;
  void FindRowMaxId(int32* id) const;
  // Cross-entropy gradient in place on a posterior matrix: for each row r,
  // (*log_post_tgt)(r) = log((*this)(r, tgt[r])), then (*this)(r, tgt[r]) -= 1. `tgt` has
  // NumRows() entries in [0, NumCols()); *log_post_tgt is resized to NumRows().
  void DiffXent(const std::vector<int32>& tgt, Vector<Real>* log_post_tgt);
  void DiffXent(const int32* tgt, Vector<Real>* log_post_tgt);
  // For each element e (e.row, e.column index A; A has the shape of *this):
  // *tot_objf = sum e.weight * log(A(e)), *tot_weight = sum e.weight, and
  // (*this)(e.row, e.column) += e.weight / A(e). Throws on a bad index or shape mismatch.
  void CompObjfAndDeriv(const std::vector<MatrixElement<Real>>& elements, const MatrixBase<Real>& A,
                        Real* tot_objf, Real* tot_weight);
  // *this = src > 0 ? alpha(c) * src : beta(c) * src, per column c (alpha, beta of NumCols()).
  void ParametricRelu(const MatrixBase<Real>& src, const VectorBase<Real>& alpha,
                      const VectorBase<Real>& beta);
  // *this = diff .* (value > 0 ? alpha(c) : beta(c)), value being the input of ParametricRelu.
  void DiffParametricRelu(const MatrixBase<Real>& value, const MatrixBase<Real>& diff,
                          const VectorBase<Real>& alpha, const VectorBase<Real>& beta);

  // ---- BLAS (matrix/matrix-blas.cc)
  // --------------------------------------------------------------- Inputs must not overlap *this
  // in memory (throws); shapes must agree (throws, naming them).

  // *this = beta * *this + alpha * op(A) op(B).
  void AddMatMat(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                 const MatrixBase<Real>& B, MatrixTransposeType transB, Real beta);
  // Lower triangle of *this (square) = beta * *this + alpha * op(A) op(A)^T; the strict upper
  // triangle is left untouched (call CopyLowerToUpper() for a full symmetric matrix).
  void SymAddMat2(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA, Real beta);
  // *this = beta * *this + alpha * diag(v) op(M).
  void AddDiagVecMat(Real alpha, const VectorBase<Real>& v, const MatrixBase<Real>& M,
                     MatrixTransposeType transM, Real beta = 1.0);
  // *this = beta * *this + alpha * op(M) diag(v).
  void AddMatDiagVec(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType transM,
                     const VectorBase<Real>& v, Real beta = 1.0);
  // *this += alpha * a b^T (rank one); a.Dim() == NumRows(), b.Dim() == NumCols().
  void AddVecVec(Real alpha, const VectorBase<Real>& a, const VectorBase<Real>& b);

  // ---- solvers (matrix/matrix-blas.cc) ----------------------------------------------------------

  // Replaces a symmetric positive definite *this (only the lower triangle is read) by its lower
  // Cholesky factor L (upper triangle zeroed), *this = L L^T. If inv_cholesky is not nullptr it
  // receives L^-1 (same shape). Throws if not square or not positive definite.
  void Cholesky(MatrixBase<Real>* inv_cholesky = nullptr);
  // Inverts a symmetric positive definite *this in place (full symmetric result). Throws if not
  // square or not positive definite.
  void SymInvertPosDef();
  // General inverse by LU with partial pivoting (LAPACK getrf and getri, in double;
  // matrix/matrix-lapack.cc). If log_det / det_sign are given they receive log |det| and its sign
  // (before inversion). Throws on a singular matrix when inverse_needed, and on NaN or infinite
  // elements.
  void Invert(Real* log_det = nullptr, Real* det_sign = nullptr, bool inverse_needed = true);

  // ---- LAPACK decompositions (matrix/matrix-lapack.cc) -----------------------------------------
  // Through OpenBLAS's LAPACK in the precision of Real. Inputs are checked for NaN/inf first
  // (throws naming the element); a LAPACK failure throws naming the routine and its info value.
  // Outputs must not overlap *this or each other (throws).

  // Thin SVD *this = U diag(s) Vt for an M x N matrix, K = min(M, N): s has dimension K and gets
  // the singular values in descending order (Kaldi promises no order; LAPACK's is descending), U
  // is M x K (orthonormal columns) and Vt is K x N (orthonormal rows). For M >= N this is Kaldi's
  // rule (s: N, U: M x N, Vt: N x N); for M < N it is what Kaldi's Svd gives through the
  // transpose (s: M, U: M x M, Vt: M x N). U and/or Vt may be nullptr when not wanted (saves
  // work). Throws on a wrong output shape or if the SVD does not converge. Empty: no-op.
  void Svd(VectorBase<Real>* s, MatrixBase<Real>* U, MatrixBase<Real>* Vt) const;
  // Singular values only (descending).
  void Svd(VectorBase<Real>* s) const { Svd(s, nullptr, nullptr); }
  // As Svd, but may overwrite *this (its contents afterwards are unspecified) to save a copy.
  // Kaldi requires NumRows() >= NumCols() here; both shapes are accepted.
  void DestructiveSvd(VectorBase<Real>* s, MatrixBase<Real>* U, MatrixBase<Real>* Vt);
  // Smallest singular value; throws on an empty matrix.
  Real MinSingularValue() const;
  // Condition number: largest / smallest singular value; 1.0e+100 if the smallest is zero (as
  // Kaldi). Works for any shape; throws on an empty matrix.
  Real Cond() const;
  // log |det(*this)|, with the sign of the determinant (+1, -1, or 0 when singular; then the
  // result is -inf) in *det_sign if given. LU with partial pivoting (LAPACK getrf) in double
  // precision. Square only (throws); 0 x 0 gives 0 with sign +1.
  Real LogDet(Real* det_sign = nullptr) const;
  // Eigendecomposition of a square real matrix: *this = P D P^-1 with P real. D is block diagonal:
  // eigs_real(i) for a real eigenvalue (eigs_imag(i) == 0), and for a complex pair lambda +- i mu
  // (consecutive entries, the one with eigs_imag > 0 first) the 2x2 block [lambda, mu; -mu,
  // lambda] (see CreateEigenvalueMatrix). If *this is defective P is singular and only
  // (*this) P = P D holds. Columns of P have unit 2-norm (LAPACK geev); eigenvalues are not
  // sorted. Any output may be nullptr; P must be N x N and the vectors of dimension N (throws).
  // Throws if not square or if the QR algorithm fails.
  void Eig(MatrixBase<Real>* P, VectorBase<Real>* eigs_real, VectorBase<Real>* eigs_imag) const;
  // *this = *this ^ pow through Eig (principal branch of each eigenvalue's power). Returns false
  // and leaves *this unchanged if an eigenvalue is real and negative, or zero with pow < 0. Square
  // only (throws); throws if the eigenvector matrix is singular (a defective matrix). 0 x 0: true.
  bool Power(Real pow);
  // Eigendecomposition of a symmetric positive semidefinite *this = P diag(s) P^T (P orthogonal,
  // N x N; s of dimension N, ascending). Throws if the most negative eigenvalue is below
  // -check_thresh times the largest; negative eigenvalues within that are set to zero. Only the
  // symmetric part of *this is used; *this is not changed (non-const only to match Kaldi).
  void SymPosSemiDefEig(VectorBase<Real>* s, MatrixBase<Real>* P, Real check_thresh = 0.001);

  // ---- reductions (matrix/matrix.cc) ------------------------------------------------------------

  // Sum of the elements (0 when empty).
  Real Sum() const;
  // Largest / smallest element; throw on an empty matrix.
  Real Max() const;
  Real Min() const;
  // Sum of the diagonal; with check_square, throws unless square.
  Real Trace(bool check_square = true) const;
  // sqrt(sum of squares).
  Real FrobeniusNorm() const;
  // True if ||*this - other||_F <= tol * ||*this||_F; throws on a shape mismatch.
  bool ApproxEqual(const MatrixBase<Real>& other, float tol = 0.01) const;
  // Exact element-wise equality; throws on a shape mismatch.
  bool Equal(const MatrixBase<Real>& other) const;
  // IsUnit / IsZero: every element within `cutoff` (absolute) of the identity / of zero.
  // IsSymmetric (false unless square) / IsDiagonal: the asymmetric / off-diagonal part, summed in
  // absolute value, is at most cutoff times the symmetric / diagonal part.
  bool IsUnit(Real cutoff = 1.0e-05) const;
  bool IsZero(Real cutoff = 1.0e-05) const;
  bool IsSymmetric(Real cutoff = 1.0e-05) const;
  bool IsDiagonal(Real cutoff = 1.0e-05) const;

  // ---- from a CompressedMatrix (matrix/compressed-convert.cc) -----------------------------------
  // *this = the decoded values of M; the shapes must match (else throws, naming both).
  void CopyFromMat(const CompressedMatrix& M);
  // ---- end CompressedMatrix ----------------------------------------------------------------------

  // ---- I/O (definitions in matrix/matrix-io.cc, owned by the I/O engineer) ---------------------

  // Writes Kaldi's matrix format ("FM "/"DM " binary, " [ ... ]" text).
  // Defined in matrix/matrix-io.cc.
  void Write(std::ostream& os, bool binary) const;
  // Reads into the existing shape (throws if the stored shape differs); with add == true adds to
  // the current contents. Defined in matrix/matrix-io.cc.
  void Read(std::istream& is, bool binary, bool add = false);

  // ---- Kaldi parity: whole-matrix softmax, GroupPnormDeriv (matrix/matrix-extra.cc) ------------

  // log(sum over all elements of exp(x)), computed relative to the maximum so it cannot overflow.
  // As in Kaldi, terms more than -log(epsilon of Real) below the maximum are dropped (they cannot
  // change the result), and with prune > 0 so are terms below max - prune; prune <= 0 (the
  // default -1) prunes nothing more. A +-inf maximum is returned as is. Throws on an empty matrix.
  Real LogSumExp(Real prune = -1.0) const;
  // Softmax over all elements together: x = exp(x - m) / sum exp(x - m), m the maximum. Returns
  // log(sum of exp(x)) of the input (the normalizer). Throws on an empty matrix.
  Real ApplySoftMax();
  // *this (shape of input) = d output / d input for output = GroupPnorm(input, power), groups of
  // G = input.NumCols() / output.NumCols() columns (which must divide exactly; output.NumRows() ==
  // input.NumRows()). Element (r, c) with y = output(r, c / G), x = input(r, c): power == 1 gives
  // sign(x) (0 for x == 0); power == inf gives sign(x) where |x| == y, else 0; any other power
  // gives sign(x) |x|^(power - 1) y^(1 - power). Where y == 0 the result is 0 (except power == 1).
  // Throws on a shape mismatch.
  void GroupPnormDeriv(const MatrixBase<Real>& input, const MatrixBase<Real>& output, Real power);

  // ---- Kaldi parity: sparse operands (matrix/matrix-sparse-ops.cc) ----------------------------
  // The dense operand must not overlap *this (throws). With beta == 0 the old contents of *this are
  // ignored (NaN included), as in BLAS. Shapes must agree (throws naming them).

  // *this += alpha * op(A).
  void AddSmat(Real alpha, const SparseMatrix<Real>& A, MatrixTransposeType trans = kNoTrans);
  // *this = beta * *this + alpha * op(A) B; the work is proportional to the nonzeros of A times
  // B.NumCols() (one axpy per stored element).
  void AddSmatMat(Real alpha, const SparseMatrix<Real>& A, MatrixTransposeType transA,
                  const MatrixBase<Real>& B, Real beta);
  // *this = beta * *this + alpha * A op(B); work proportional to A.NumRows() times the nonzeros of
  // B.
  void AddMatSmat(Real alpha, const MatrixBase<Real>& A, const SparseMatrix<Real>& B,
                  MatrixTransposeType transB, Real beta);
  // The dense forms Kaldi also declares, for a dense A (or B) that merely holds many zeros: the
  // result of AddMatMat(alpha, A, transA, B, transB, beta), and computed by it (one BLAS GEMM).
  void AddSmatMat(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                  const MatrixBase<Real>& B, MatrixTransposeType transB, Real beta);
  void AddMatSmat(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                  const MatrixBase<Real>& B, MatrixTransposeType transB, Real beta);

  // ---- Kaldi parity: packed operands (matrix/matrix-packed-ops.cc) ----------------------------
  // Each unpacks its symmetric (Sp) or triangular (Tp) operands into dense scratch matrices and
  // calls AddMatMat, so shape checks, aliasing rules and beta semantics are AddMatMat's (packed
  // operands never overlap *this: they own their storage).

  // *this += alpha * S (the full symmetric matrix); S's size must equal both dimensions.
  template <typename OtherReal>
  void AddSp(Real alpha, const SpMatrix<OtherReal>& S);
  // *this = beta * *this + alpha * A op(B), A symmetric.
  void AddSpMat(Real alpha, const SpMatrix<Real>& A, const MatrixBase<Real>& B,
                MatrixTransposeType transB, Real beta);
  // *this = beta * *this + alpha * op(A) op(B), A lower triangular.
  void AddTpMat(Real alpha, const TpMatrix<Real>& A, MatrixTransposeType transA,
                const MatrixBase<Real>& B, MatrixTransposeType transB, Real beta);
  // *this = beta * *this + alpha * op(A) B, B symmetric.
  void AddMatSp(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                const SpMatrix<Real>& B, Real beta);
  // *this = beta * *this + alpha * A op(B) C, A and C symmetric.
  void AddSpMatSp(Real alpha, const SpMatrix<Real>& A, const MatrixBase<Real>& B,
                  MatrixTransposeType transB, const SpMatrix<Real>& C, Real beta);
  // *this = beta * *this + alpha * op(A) op(B), B lower triangular.
  void AddMatTp(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                const TpMatrix<Real>& B, MatrixTransposeType transB, Real beta);
  // *this = beta * *this + alpha * op(A) op(B), both lower triangular.
  void AddTpTp(Real alpha, const TpMatrix<Real>& A, MatrixTransposeType transA,
               const TpMatrix<Real>& B, MatrixTransposeType transB, Real beta);
  // *this = beta * *this + alpha * A B, both symmetric.
  void AddSpSp(Real alpha, const SpMatrix<Real>& A, const SpMatrix<Real>& B, Real beta);
  // ---- Kaldi parity: traces and products (matrix/matrix-traces.cc) -----------------------------
  // Inputs must not overlap *this (throws); shapes must agree (throws, naming them). Sp operands
  // are expanded to full matrices first.

  // *this = beta * *this + alpha * op(A) op(B) op(C). The product is associated in whichever
  // order needs fewer multiplies.
  void AddMatMatMat(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType transA,
                    const MatrixBase<Real>& B, MatrixTransposeType transB,
                    const MatrixBase<Real>& C, MatrixTransposeType transC, Real beta);
  // max |(*this)(r, c)|; 0 for an empty matrix.
  Real LargestAbsElem() const;
  // Mixed-precision forms of AddVecVec / AddVecToRows / AddVecToCols (beta is 1): *this +=
  // alpha * a b^T; row r += alpha * v (v.Dim() == NumCols()); column c += alpha * v (v.Dim() ==
  // NumRows()). Kaldi declares these as templates on OtherReal; here they are plain overloads
  // for the other precision (a template would make the same-precision explicit instantiations
  // ambiguous), so every call that compiles against Kaldi compiles here too.
  void AddVecVec(Real alpha, const VectorBase<typename OtherReal<Real>::Real>& a,
                 const VectorBase<typename OtherReal<Real>::Real>& b);
  void AddVecToRows(Real alpha, const VectorBase<typename OtherReal<Real>::Real>& v);
  void AddVecToCols(Real alpha, const VectorBase<typename OtherReal<Real>::Real>& v);
  // ---- end Kaldi parity: traces and products ----------------------------------------------------

 protected:
  // Derived classes supply (or later set) the storage; note the Kaldi argument order.
  MatrixBase(Real* data, MatrixIndexT cols, MatrixIndexT rows, MatrixIndexT stride)
      : data_(data), num_cols_(cols), num_rows_(rows), stride_(stride) {}
  MatrixBase() : data_(nullptr), num_cols_(0), num_rows_(0), stride_(0) {}
  MatrixBase(const MatrixBase&) = default;
  MatrixBase& operator=(const MatrixBase&) = default;
  ~MatrixBase() = default;

  Real* data_;
  MatrixIndexT num_cols_;
  MatrixIndexT num_rows_;
  MatrixIndexT stride_;
};

// A matrix that owns its storage (16-byte aligned rows, freed in the destructor). Deep-copyable;
// Resize, Swap and Transpose change its shape.
template <typename Real>
class Matrix : public MatrixBase<Real> {
 public:
  Matrix() {}
  // rows x cols, zeroed unless resize_type == kUndefined (kCopyData acts as kSetZero here).
  // Throws if a dimension is negative.
  Matrix(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type = kSetZero,
         MatrixStrideType stride_type = kDefaultStride);
  Matrix(const Matrix<Real>& M);
  // Takes M's storage; M is left empty (0x0).
  Matrix(Matrix<Real>&& M) noexcept;
  // A copy of M or M^T (either precision).
  explicit Matrix(const MatrixBase<Real>& M, MatrixTransposeType trans = kNoTrans);
  template <typename OtherReal>
  explicit Matrix(const MatrixBase<OtherReal>& M, MatrixTransposeType trans = kNoTrans);
  // A copy of the GPU matrix M or M^T (either precision); waits for the copy. Defined in
  // cudamatrix/cu-host-conversions.cc (link against the cudamatrix library to use it).
  template <typename OtherReal>
  explicit Matrix(const CuMatrixBase<OtherReal>& M, MatrixTransposeType trans = kNoTrans);
  // The full matrix of a packed symmetric or triangular matrix (matrix/packed-convert.cc).
  explicit Matrix(const SpMatrix<Real>& M);
  explicit Matrix(const TpMatrix<Real>& M, MatrixTransposeType trans = kNoTrans);
  // The decoded values of a compressed matrix, same shape (matrix/compressed-convert.cc).
  explicit Matrix(const CompressedMatrix& C);
  ~Matrix();

  // Deep copy; resizes *this to M's shape.
  Matrix<Real>& operator=(const Matrix<Real>& M);
  Matrix<Real>& operator=(const MatrixBase<Real>& M);
  // Takes M's storage (frees ours); M is left empty.
  Matrix<Real>& operator=(Matrix<Real>&& M) noexcept;

  // Changes the shape. kSetZero zeroes, kUndefined leaves contents undefined, kCopyData keeps the
  // overlapping top-left block and zeroes the rest. Throws if a dimension is negative.
  void Resize(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type = kSetZero,
              MatrixStrideType stride_type = kDefaultStride);
  // Exchanges storage and shape with *other (no copy).
  void Swap(Matrix<Real>* other);
  // Replaces *this by its transpose (reallocates unless square).
  void Transpose();
  // Removes row i, shifting later rows up. Throws if i is out of range.
  void RemoveRow(MatrixIndexT i);

  // Reads a matrix of any stored shape (resizing; also reads compressed CM/CM2/CM3 matrices). With
  // add == true the shape must match or *this must be empty. Defined in matrix/matrix-io.cc.
  void Read(std::istream& is, bool binary, bool add = false);

 private:
  void Init(MatrixIndexT rows, MatrixIndexT cols, MatrixStrideType stride_type);
  void Destroy();
};

// A view of a block of a matrix or of caller memory. It never owns; the storage must outlive it.
// Copying a SubMatrix copies the view. As in Kaldi, a view of a const matrix is writable: constness
// is not propagated through views.
template <typename Real>
class SubMatrix : public MatrixBase<Real> {
 public:
  // Rows [ro, ro + nr) and columns [co, co + nc) of M; throws if outside M.
  SubMatrix(const MatrixBase<Real>& M, MatrixIndexT ro, MatrixIndexT nr, MatrixIndexT co,
            MatrixIndexT nc);
  // num_rows x num_cols at `data` with the given stride (>= num_cols unless num_rows <= 1).
  // nullptr is allowed for an empty shape. Throws on negative sizes or a too-small stride.
  SubMatrix(Real* data, MatrixIndexT num_rows, MatrixIndexT num_cols, MatrixIndexT stride);
  SubMatrix(const SubMatrix<Real>& other) : MatrixBase<Real>(other) {}
  ~SubMatrix() {}

 private:
  SubMatrix<Real>& operator=(const SubMatrix<Real>&) = delete;
};

// For each i: *C[i] = beta * *C[i] + alpha * op(*A[i]) op(*B[i]). The three vectors must have
// equal sizes; each product is checked as AddMatMat.
template <typename Real>
void AddMatMatBatched(Real alpha, std::vector<SubMatrix<Real>*>& C,
                      const std::vector<SubMatrix<Real>*>& A, MatrixTransposeType transA,
                      const std::vector<SubMatrix<Real>*>& B, MatrixTransposeType transB,
                      Real beta);

// tr(A op(B)); shapes must make A op(B) square.
template <typename Real>
Real TraceMatMat(const MatrixBase<Real>& A, const MatrixBase<Real>& B,
                 MatrixTransposeType trans = kNoTrans);

// ---- Kaldi parity: traces and products (matrix/matrix-traces.cc) -------------------------------
// tr(op(A) op(B) op(C)) and tr(op(A) op(B) op(C) op(D)); the shapes must chain and close (else
// throws naming them). The cheapest pair is multiplied first; the rest is a dot-product trace.
template <typename Real>
Real TraceMatMatMat(const MatrixBase<Real>& A, MatrixTransposeType transA,
                    const MatrixBase<Real>& B, MatrixTransposeType transB,
                    const MatrixBase<Real>& C, MatrixTransposeType transC);
template <typename Real>
Real TraceMatMatMatMat(const MatrixBase<Real>& A, MatrixTransposeType transA,
                       const MatrixBase<Real>& B, MatrixTransposeType transB,
                       const MatrixBase<Real>& C, MatrixTransposeType transC,
                       const MatrixBase<Real>& D, MatrixTransposeType transD);
// ---- end Kaldi parity: traces and products -----------------------------------------------------

// ---- Kaldi parity: HTK and Sphinx feature files (matrix/htk-io.cc) -----------------------------
// HTK's 12-byte feature-file header, held in host byte order (the file stores it big-endian):
// number of frames, frame period in 100 ns units, bytes per frame (4 * columns) and the
// parameter kind (base kind in the low 6 bits plus qualifier flags such as _E 0100, _D 0400,
// _C 02000 compressed, _K 010000 checksum).
struct HtkHeader {
  int32 mNSamples;
  int32 mSamplePeriod;
  int16 mSampleSize;
  uint16 mSampleKind;
};

// Reads an HTK feature file (header, then mNSamples rows of mSampleSize / 4 big-endian floats)
// into *M (resized) and, if header_ptr is not nullptr, the header into *header_ptr (with the _K
// flag cleared; a trailing checksum is read and ignored). Returns false if the stream ends early
// or fails. Throws cuctx::Error on content it cannot represent: compressed (_C) or VQ (_V)
// features, waveform / IREFC / discrete kinds, a negative frame count, or a sample size that is
// not a positive multiple of 4.
template <typename Real>
bool ReadHtk(std::istream& is, Matrix<Real>* M, HtkHeader* header_ptr);

// Writes htk_hdr (big-endian) and then M's rows as big-endian floats. Throws unless
// htk_hdr.mNSamples == M.NumRows() and htk_hdr.mSampleSize == 4 * M.NumCols(). Returns false if
// the stream fails. The stream must be binary.
template <typename Real>
bool WriteHtk(std::ostream& os, const MatrixBase<Real>& M, HtkHeader htk_hdr);

// Writes CMU Sphinx features: the element count NumRows() * NumCols() as a host-order int32
// (Kaldi writes it unswapped), then the rows as big-endian floats. Returns false if the stream
// fails.
template <typename Real>
bool WriteSphinx(std::ostream& os, const MatrixBase<Real>& M);
// ---- end Kaldi parity: HTK and Sphinx feature files --------------------------------------------

// True if ||A - B||_F <= tol * ||A||_F (shapes must match, else throws).
template <typename Real>
bool ApproxEqual(const MatrixBase<Real>& A, const MatrixBase<Real>& B, float tol = 0.01);
// Throws cuctx::Error (naming the relative difference) unless ApproxEqual(A, B, tol).
template <typename Real>
void AssertEqual(const MatrixBase<Real>& A, const MatrixBase<Real>& B, float tol = 0.01);

// ---- Kaldi parity: trace of one matrix ----------------------------------------------------------
// A.Trace() (throws unless A is square), returned in double as Kaldi declares it.
template <typename Real>
double TraceMat(const MatrixBase<Real>& A) {
  return A.Trace();
}

// Same number of rows and columns (and stride).
template <typename Real, typename OtherReal>
bool SameDim(const MatrixBase<Real>& A, const MatrixBase<OtherReal>& B) {
  return A.NumRows() == B.NumRows() && A.NumCols() == B.NumCols();
}
template <typename Real, typename OtherReal>
bool SameDimAndStride(const MatrixBase<Real>& A, const MatrixBase<OtherReal>& B) {
  return SameDim(A, B) && A.Stride() == B.Stride();
}

// ---- eigen/SVD helpers (matrix/matrix-lapack.cc) ----------------------------------------------

// Sorts s from greatest to least |value| (or value, with sort_on_absolute_value == false), moving
// the columns of U and the rows of Vt (either may be nullptr) the same way; ties keep their order.
// Requires U->NumCols() == s->Dim() and Vt->NumRows() == s->Dim() (throws).
template <typename Real>
void SortSvd(VectorBase<Real>* s, MatrixBase<Real>* U, MatrixBase<Real>* Vt = nullptr,
             bool sort_on_absolute_value = true);

// The block-diagonal D of MatrixBase::Eig (*D is N x N, N = re.Dim() = im.Dim(), else throws):
// re(j) on the diagonal where im(j) == 0; for a complex pair at j, j + 1 the block
// [re(j), im(j); -im(j), re(j)]. Throws if a complex entry is not followed by its conjugate.
template <typename Real>
void CreateEigenvalueMatrix(const VectorBase<Real>& re, const VectorBase<Real>& im,
                            MatrixBase<Real>* D);

// Replaces x = *x_re + i *x_im by x^power on the principal branch (|x|^power at angle
// power * arg(x)). Returns false (leaving x unchanged) if x is real and negative, or zero with
// power < 0. Used by MatrixBase::Power.
template <typename Real>
bool AttemptComplexPower(Real* x_re, Real* x_im, Real power);

// Writes M in Kaldi text form (as M.Write(os, false)).
template <typename Real>
std::ostream& operator<<(std::ostream& os, const MatrixBase<Real>& M);

}  // namespace cuctx

#endif  // CUCTX_MATRIX_MATRIX_H_
