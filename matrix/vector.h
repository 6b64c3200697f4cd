// matrix/vector.h: CPU vectors: VectorBase (a non-owning view), Vector (owns) and SubVector (view).
// SPDX-License-Identifier: Apache-2.0
//
// The names, argument order, defaults and semantics follow Kaldi's VectorBase/Vector/SubVector, so
// CPU code and the CuVector CPU fallback port unchanged. Every class is instantiated for float and
// double (explicit instantiation in matrix/vector.cc).
//
// Errors: misuse by the caller (dimension mismatch, index out of range, bad argument) throws
// cuctx::Error with a message naming both dimensions or the bad index; nothing here aborts.
// Operations on empty (dimension 0) vectors are no-ops unless documented otherwise.
//
// Thread-safety: none internally. Concurrent const calls on one vector are safe; any call that
// writes a vector must not run concurrently with another call touching that vector.
#ifndef CUCTX_MATRIX_VECTOR_H_
#define CUCTX_MATRIX_VECTOR_H_

#include "base/error.h"
#include "base/types.h"
#include "matrix/matrix-common.h"

#include <istream>
#include <ostream>
#include <vector>

namespace cuctx {

template <typename Real>
class VectorBase;
template <typename Real>
class Vector;
template <typename Real>
class SubVector;
template <typename Real>
class MatrixBase;
template <typename Real>
class Matrix;
template <typename Real>
class SubMatrix;
template <typename Real>
class SpMatrix;  // packed classes: matrix/sp-matrix.h (other owner)
template <typename Real>
class TpMatrix;
template <typename Real>
class SparseMatrix;  // matrix/sparse-matrix.h (other owner)
template <typename Real>
class PackedMatrix;  // matrix/packed-matrix.h
// GPU-layer conversions (Kaldi parity): declared here, defined in
// cudamatrix/cu-host-conversions.cc, so this header needs no cudamatrix include.
template <typename Real>
class CuVectorBase;
template <typename Real>
class CuMatrixBase;

// A contiguous run of Dim() elements that this object does not own. The derived classes decide
// ownership: Vector allocates (16-byte aligned) and frees, SubVector only points into memory owned
// elsewhere. VectorBase itself cannot be constructed directly and never changes its size; only
// Vector::Resize/Swap do. Copying a VectorBase by value is not possible (copy is protected).
template <typename Real>
class VectorBase {
 public:
  // ---- shape and element access ----------------------------------------------------------------

  MatrixIndexT Dim() const { return dim_; }
  // Size of the storage in bytes (Dim() * sizeof(Real)).
  size_t SizeInBytes() const { return static_cast<size_t>(dim_) * sizeof(Real); }
  // Pointer to the first element; may be nullptr when Dim() == 0.
  Real* Data() { return data_; }
  const Real* Data() const { return data_; }

  // Element i. Bounds are checked only in builds without NDEBUG (CUCTX_ASSERT).
  Real& operator()(MatrixIndexT i) {
    CUCTX_ASSERT(static_cast<UnsignedMatrixIndexT>(i) < static_cast<UnsignedMatrixIndexT>(dim_));
    return data_[i];
  }
  Real operator()(MatrixIndexT i) const {
    CUCTX_ASSERT(static_cast<UnsignedMatrixIndexT>(i) < static_cast<UnsignedMatrixIndexT>(dim_));
    return data_[i];
  }

  // A view of elements [origin, origin + length). Throws if the range is outside [0, Dim()).
  SubVector<Real> Range(MatrixIndexT origin, MatrixIndexT length);
  const SubVector<Real> Range(MatrixIndexT origin, MatrixIndexT length) const;

  // ---- copies -----------------------------------------------------------------------------------

  // Copies v (either precision); throws unless v.Dim() == Dim(). Overlapping different ranges of
  // the same storage is not allowed; v == *this is a no-op.
  template <typename OtherReal>
  void CopyFromVec(const VectorBase<OtherReal>& v);
  // Copies the GPU vector v (either precision), waiting for the copy; throws unless v.Dim() ==
  // Dim(). Defined in cudamatrix/cu-host-conversions.cc.
  template <typename OtherReal>
  void CopyFromVec(const CuVectorBase<OtherReal>& v);
  // The rows of the GPU matrix M, one after another (M.NumRows() * M.NumCols() must be Dim(), else
  // throws); waits for the copy. Defined in cudamatrix/cu-host-conversions.cc.
  void CopyRowsFromMat(const CuMatrixBase<Real>& M);
  // Copies v into *this (the reverse of CopyFromVec, for symmetry with CuVectorBase).
  template <typename OtherReal>
  void CopyToVec(VectorBase<OtherReal>* v) const;
  // Copies Dim() elements starting at `data` (which must not be nullptr unless Dim() == 0).
  void CopyFromPtr(const Real* data, MatrixIndexT size);

  // The rows of M laid end to end; requires Dim() == M.NumRows() * M.NumCols().
  template <typename OtherReal>
  void CopyRowsFromMat(const MatrixBase<OtherReal>& M);
  // The columns of M laid end to end; requires Dim() == M.NumRows() * M.NumCols().
  template <typename OtherReal>
  void CopyColsFromMat(const MatrixBase<OtherReal>& M);
  // Row `row` of M; requires Dim() == M.NumCols() and row in range.
  template <typename OtherReal>
  void CopyRowFromMat(const MatrixBase<OtherReal>& M, MatrixIndexT row);
  // Column `col` of M; requires Dim() == M.NumRows() and col in range.
  template <typename OtherReal>
  void CopyColFromMat(const MatrixBase<OtherReal>& M, MatrixIndexT col);
  // The diagonal of M; requires Dim() == min(M.NumRows(), M.NumCols()).
  void CopyDiagFromMat(const MatrixBase<Real>& M);

  // ---- fill and scalar ops ----------------------------------------------------------------------

  void SetZero();
  void Set(Real f);
  // Standard normal values / uniform values in (0, 1), drawn from base/random.h (reproducible after
  // SetRandomSeed()).
  void SetRandn();
  void SetRandUniform();
  // Adds c to every element.
  void Add(Real c);
  void Scale(Real alpha);
  // Replaces every element equal to `orig` by `changed`.
  void ReplaceValue(Real orig, Real changed);

  // ---- element-wise -----------------------------------------------------------------------------

  // *this += alpha * v (either precision); throws on a dimension mismatch.
  template <typename OtherReal>
  void AddVec(Real alpha, const VectorBase<OtherReal>& v);
  // *this += alpha * v .^ 2.
  template <typename OtherReal>
  void AddVec2(Real alpha, const VectorBase<OtherReal>& v);
  // *this = beta * *this + alpha * v .* r (element-wise product).
  void AddVecVec(Real alpha, const VectorBase<Real>& v, const VectorBase<Real>& r, Real beta);
  // *this = beta * *this + alpha * v ./ r (element-wise quotient).
  void AddVecDivVec(Real alpha, const VectorBase<Real>& v, const VectorBase<Real>& r, Real beta);
  // *this = *this .* v / ./ v; throws on a dimension mismatch.
  template <typename OtherReal>
  void MulElements(const VectorBase<OtherReal>& v);
  template <typename OtherReal>
  void DivElements(const VectorBase<OtherReal>& v);
  // x = 1 / x.
  void InvertElements();

  // x = max(x, floor_val). If floored_count is not nullptr it receives the number of elements that
  // were changed.
  void ApplyFloor(Real floor_val, MatrixIndexT* floored_count = nullptr);
  // x = max(x, floor_vec(i)); returns the number of elements changed.
  MatrixIndexT ApplyFloor(const VectorBase<Real>& floor_vec);
  // x = min(x, ceil_val); optional count of changed elements as for ApplyFloor.
  void ApplyCeiling(Real ceil_val, MatrixIndexT* ceiled_count = nullptr);
  // x = pow(x, power) as std::pow computes it (a negative x with a non-integer power gives NaN,
  // as on the GPU).
  void ApplyPow(Real power);
  // x = |x|^power, or sign(x) |x|^power when include_sign is true; 0 stays 0 (also for power < 0).
  void ApplyPowAbs(Real power, bool include_sign = false);
  void ApplyExp();
  void ApplyLog();
  void ApplyAbs();
  // Softmax in place: x_i = exp(x_i - m) / sum_j exp(x_j - m), m the maximum (stable for large
  // inputs). Returns log(sum_j exp(x_j)) of the input. Throws on an empty vector.
  Real ApplySoftMax();
  // x_i = x_i - log(sum_j exp(x_j)), computed stably; returns the log-sum-exp. Throws if empty.
  Real ApplyLogSoftMax();
  // *this = sigmoid(src) / tanh(src), element-wise; src may be *this.
  void Sigmoid(const VectorBase<Real>& src);
  void Tanh(const VectorBase<Real>& src);

  // ---- with matrices (BLAS where it pays) -------------------------------------------------------

  // *this = beta * *this + alpha * op(M) v. Dimensions must agree; v must not alias *this.
  void AddMatVec(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType trans,
                 const VectorBase<Real>& v, Real beta);
  // *this = beta * *this + alpha * (sum of the rows of M); requires Dim() == M.NumCols().
  void AddRowSumMat(Real alpha, const MatrixBase<Real>& M, Real beta = 1.0);
  // *this = beta * *this + alpha * (sum of the columns of M); requires Dim() == M.NumRows().
  void AddColSumMat(Real alpha, const MatrixBase<Real>& M, Real beta = 1.0);
  // *this = beta * *this + alpha * diag(M M^T) (trans == kNoTrans, Dim() == M.NumRows()) or
  // alpha * diag(M^T M) (trans == kTrans, Dim() == M.NumCols()).
  void AddDiagMat2(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType trans = kNoTrans,
                   Real beta = 1.0);
  // *this = beta * *this + alpha * diag(op(M) op(N)); op(M) op(N) must be square with size Dim().
  void AddDiagMatMat(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType transM,
                     const MatrixBase<Real>& N, MatrixTransposeType transN, Real beta = 1.0);

  // ---- packed triangular products (matrix/vector-packed.cc) ------------------------------------

  // *this = op(M) *this for the lower-triangular M (M.NumRows() == Dim(), else throws); op(M) is
  // M^T with trans == kTrans. (Kaldi's comment reads "*this <-- *this * M"; the product it
  // computes, and this one, is op(M) times the vector.) CBLAS tpmv.
  void MulTp(const TpMatrix<Real>& M, MatrixTransposeType trans);
  // *this = beta * *this + alpha * op(M) v for the lower-triangular M (M.NumRows() == v.Dim() ==
  // Dim(), else throws). v may be *this. With beta == 0 the old contents are not read (a NaN there
  // does not propagate), as in Kaldi.
  void AddTpVec(Real alpha, const TpMatrix<Real>& M, MatrixTransposeType trans,
                const VectorBase<Real>& v, Real beta);
  // ---- end of packed triangular products ------------------------------------------------------

  // ---- reductions -------------------------------------------------------------------------------

  // Sum of the elements (0 when empty).
  Real Sum() const;
  // Sum of log(x) (with x <= 0 giving -inf or NaN as std::log does).
  Real SumLog() const;
  // The p-norm: p == 0 counts nonzeros, p == inf is max |x|, otherwise (sum |x|^p)^(1/p).
  // Throws if p < 0.
  Real Norm(Real p) const;
  // Maximum / minimum; the index forms also return the position of the first extreme element.
  // Throw on an empty vector.
  Real Max() const;
  Real Max(MatrixIndexT* index) const;
  Real Min() const;
  Real Min(MatrixIndexT* index) const;
  // log(sum_i exp(x_i)), stable; with prune > 0, terms below max - prune are ignored. Throws if
  // empty.
  Real LogSumExp(Real prune = -1.0) const;
  // True if ||*this - other||_2 <= tol * ||*this||_2; throws on a dimension mismatch.
  bool ApproxEqual(const VectorBase<Real>& other, float tol = 0.01) const;
  // True if every |x| <= cutoff.
  bool IsZero(Real cutoff = 1.0e-06) const;

  // ---- I/O (definitions in matrix/matrix-io.cc, owned by the I/O engineer) ---------------------

  // Writes Kaldi's vector format ("FV "/"DV " binary, " [ ... ]" text).
  // Defined in matrix/matrix-io.cc.
  void Write(std::ostream& os, bool binary) const;
  // Reads into the existing size (throws if the stored dimension differs); with add == true adds
  // to the current contents. Defined in matrix/matrix-io.cc.
  void Read(std::istream& is, bool binary, bool add = false);

  // ---- Kaldi parity: sampling, packed and sparse helpers (matrix/vector-extra.cc) --------------

  // A random index i drawn with probability (*this)(i) / Sum(), from the process-wide generator
  // of base/random.h (reproducible after SetRandomSeed). Elements equal to 0 are never drawn.
  // Throws if the vector is empty, has a negative element or sums to 0 (or to a non-finite value).
  MatrixIndexT RandCategorical() const;
  // *this = row `row` of the full symmetric matrix S (either precision); requires
  // Dim() == S.NumRows() and row in range (else throws).
  template <typename OtherReal>
  void CopyRowFromSp(const SpMatrix<OtherReal>& S, MatrixIndexT row);
  // *this = log(v), element-wise (log of a negative number is NaN, of 0 is -inf, as std::log).
  // v may be *this; other overlap and a dimension mismatch throw.
  void ApplyLogAndCopy(const VectorBase<Real>& v);
  // As AddMatVec (*this = beta * *this + alpha * op(M) v) but skipping the zero elements of v,
  // so it is cheap when v is mostly zeros. v must not overlap *this (throws); with beta == 0 the
  // old contents are ignored.
  void AddMatSvec(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType trans,
                  const VectorBase<Real>& v, Real beta);
  // *this = beta * *this + alpha * M v, M symmetric (BLAS spmv). Requires Dim() == v.Dim() ==
  // M.NumRows(). v may be *this (it is copied first).
  void AddSpVec(Real alpha, const SpMatrix<Real>& M, const VectorBase<Real>& v, Real beta);
  // ---- Kaldi parity: packed operands (matrix/matrix-traces.cc) ----------------------------------

  // The diagonal of a packed (Sp or Tp) matrix; requires Dim() == M.NumRows().
  void CopyDiagFromPacked(const PackedMatrix<Real>& M);
  void CopyDiagFromSp(const SpMatrix<Real>& M);
  void CopyDiagFromTp(const TpMatrix<Real>& M);
  // *this = op(M)^-1 *this, M lower triangular (CBLAS tpsv); requires M.NumRows() == Dim().
  // Throws if M has a zero on its diagonal (singular).
  void Solve(const TpMatrix<Real>& M, MatrixTransposeType trans);
  // ---- end Kaldi parity: packed operands -------------------------------------------------------

 protected:
  // Only derived classes create or destroy a VectorBase; they own (or not) the storage.
  VectorBase() : data_(nullptr), dim_(0) {}
  VectorBase(const VectorBase&) = default;
  VectorBase& operator=(const VectorBase&) = default;
  ~VectorBase() = default;

  Real* data_;
  MatrixIndexT dim_;
};

// A vector that owns its storage (16-byte aligned, freed in the destructor). Copyable (deep copy)
// and movable by Swap. Resize changes the dimension.
template <typename Real>
class Vector : public VectorBase<Real> {
 public:
  Vector() {}
  // A vector of `dim` elements, zeroed unless resize_type == kUndefined. Throws if dim < 0.
  explicit Vector(MatrixIndexT dim, MatrixResizeType resize_type = kSetZero);
  Vector(const Vector<Real>& v);
  // Takes v's storage; v is left empty.
  Vector(Vector<Real>&& v) noexcept;
  explicit Vector(const VectorBase<Real>& v);
  template <typename OtherReal>
  explicit Vector(const VectorBase<OtherReal>& v);
  // A copy of the GPU vector v (either precision); waits for the copy. Defined in
  // cudamatrix/cu-host-conversions.cc.
  template <typename OtherReal>
  explicit Vector(const CuVectorBase<OtherReal>& v);
  ~Vector();

  // Deep copy; resizes *this to v's dimension.
  Vector<Real>& operator=(const Vector<Real>& v);
  Vector<Real>& operator=(const VectorBase<Real>& v);
  // Takes v's storage (frees ours); v is left empty.
  Vector<Real>& operator=(Vector<Real>&& v) noexcept;

  // Changes the dimension. kSetZero zeroes, kUndefined leaves the contents undefined, kCopyData
  // keeps the first min(old, new) elements and zeroes the rest. Throws if dim < 0.
  void Resize(MatrixIndexT dim, MatrixResizeType resize_type = kSetZero);
  // Exchanges the storage of two vectors (no copy).
  void Swap(Vector<Real>* other);
  // Removes element i, shifting the rest down. Throws if i is out of range.
  void RemoveElement(MatrixIndexT i);

  // Reads a vector of any stored size (resizes; with add == true the size must match or *this must
  // be empty). Defined in matrix/matrix-io.cc.
  void Read(std::istream& is, bool binary, bool add = false);

 private:
  void Init(MatrixIndexT dim);
  void Destroy();
};

// A view of memory owned elsewhere (a Vector, a matrix row, a caller's buffer). It never owns;
// the viewed storage must outlive it. Copying a SubVector copies the view, not the data.
template <typename Real>
class SubVector : public VectorBase<Real> {
 public:
  // Elements [origin, origin + length) of v. Throws if the range is out of bounds. The view is
  // writable even though v is const (as in Kaldi): constness is not propagated through views.
  SubVector(const VectorBase<Real>& v, MatrixIndexT origin, MatrixIndexT length);
  // A view of `length` elements at `data` (nullptr allowed when length == 0).
  SubVector(Real* data, MatrixIndexT length);
  // A view of `length` elements at const `data`; the caller must not write through it.
  SubVector(const Real* data, MatrixIndexT length);
  // Row `row` of M. Throws if row is out of range.
  SubVector(const MatrixBase<Real>& M, MatrixIndexT row);
  // Kaldi parity: a view of the M.NumRows() * (M.NumRows() + 1) / 2 packed elements of M (an
  // SpMatrix or TpMatrix), in storage order (matrix/packed-matrix.h). Writable (constness is not
  // propagated, as above); invalidated when M is resized. Defined in matrix/vector-extra.cc.
  explicit SubVector(const PackedMatrix<Real>& M);
  SubVector(const SubVector& other) : VectorBase<Real>(other) {}
  ~SubVector() {}

 private:
  SubVector& operator=(const SubVector&) = delete;
};

// Dot product a . b (either precision mix); throws on a dimension mismatch.
template <typename Real>
Real VecVec(const VectorBase<Real>& a, const VectorBase<Real>& b);
template <typename Real, typename OtherReal>
Real VecVec(const VectorBase<Real>& a, const VectorBase<OtherReal>& b);

// v1^T M v2; requires v1.Dim() == M.NumRows() and v2.Dim() == M.NumCols().
template <typename Real>
Real VecMatVec(const VectorBase<Real>& v1, const MatrixBase<Real>& M, const VectorBase<Real>& v2);

// True if a and b agree within tol (relative 2-norm, as VectorBase::ApproxEqual).
template <typename Real>
bool ApproxEqual(const VectorBase<Real>& a, const VectorBase<Real>& b, float tol = 0.01);
// Throws cuctx::Error unless ApproxEqual(a, b, tol).
template <typename Real>
void AssertEqual(const VectorBase<Real>& a, const VectorBase<Real>& b, float tol = 0.01);

// Writes v in Kaldi text form (as v.Write(os, false)).
template <typename Real>
std::ostream& operator<<(std::ostream& os, const VectorBase<Real>& v);

}  // namespace cuctx

#endif  // CUCTX_MATRIX_VECTOR_H_
