// matrix/matrix.cc: Matrix/SubMatrix storage, copies and gathers, fills and reductions (CPU).
// SPDX-License-Identifier: Apache-2.0
//
// Element-wise maps live in matrix-elementwise.cc, neural-net ops in matrix-nnet.cc and BLAS-backed
// products and solvers in matrix-blas.cc.
#include "matrix/matrix.h"

#include "base/random.h"
#include "matrix/matrix-check.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace cuctx {

using internal::CheckDim;
using internal::CheckIndex;
using internal::CheckNoOverlap;
using internal::CheckSameShape;
using internal::ShapeOf;

// ---- Matrix storage
// -------------------------------------------------------------------------------

template <typename Real>
void Matrix<Real>::Init(MatrixIndexT rows, MatrixIndexT cols, MatrixStrideType stride_type) {
  if (rows < 0 || cols < 0) CUCTX_ERR << "Matrix: negative dimension " << rows << "x" << cols;
  // With kDefaultStride a row holds a whole number of 16-byte units, so every row is aligned.
  constexpr MatrixIndexT kUnit = 16 / sizeof(Real);
  const MatrixIndexT stride =
      stride_type == kDefaultStride ? (cols + kUnit - 1) / kUnit * kUnit : cols;
  this->num_rows_ = rows;
  this->num_cols_ = cols;
  this->stride_ = stride;
  this->data_ = nullptr;
  if (rows == 0 || cols == 0) return;
  const size_t bytes =
      (static_cast<size_t>(rows) * static_cast<size_t>(stride) * sizeof(Real) + 15) / 16 * 16;
  void* p = std::aligned_alloc(16, bytes);
  if (p == nullptr) throw std::bad_alloc();
  this->data_ = static_cast<Real*>(p);
}

template <typename Real>
void Matrix<Real>::Destroy() {
  std::free(this->data_);
  this->data_ = nullptr;
  this->num_rows_ = this->num_cols_ = this->stride_ = 0;
}

template <typename Real>
Matrix<Real>::Matrix(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type,
                     MatrixStrideType stride_type) {
  Init(rows, cols, stride_type);
  if (resize_type != kUndefined) this->SetZero();
}

template <typename Real>
Matrix<Real>::Matrix(const Matrix<Real>& M) : MatrixBase<Real>() {
  Init(M.NumRows(), M.NumCols(), kDefaultStride);
  this->CopyFromMat(M);
}

template <typename Real>
Matrix<Real>::Matrix(Matrix<Real>&& M) noexcept : MatrixBase<Real>() {
  Swap(&M);
}

template <typename Real>
Matrix<Real>& Matrix<Real>::operator=(Matrix<Real>&& M) noexcept {
  if (this != &M) {
    Destroy();
    Swap(&M);
  }
  return *this;
}

template <typename Real>
Matrix<Real>::Matrix(const MatrixBase<Real>& M, MatrixTransposeType trans) {
  if (trans == kNoTrans)
    Init(M.NumRows(), M.NumCols(), kDefaultStride);
  else
    Init(M.NumCols(), M.NumRows(), kDefaultStride);
  this->CopyFromMat(M, trans);
}

template <typename Real>
template <typename OtherReal>
Matrix<Real>::Matrix(const MatrixBase<OtherReal>& M, MatrixTransposeType trans) {
  if (trans == kNoTrans)
    Init(M.NumRows(), M.NumCols(), kDefaultStride);
  else
    Init(M.NumCols(), M.NumRows(), kDefaultStride);
  this->CopyFromMat(M, trans);
}

template <typename Real>
Matrix<Real>::~Matrix() {
  Destroy();
}

template <typename Real>
Matrix<Real>& Matrix<Real>::operator=(const Matrix<Real>& M) {
  return *this = static_cast<const MatrixBase<Real>&>(M);
}

template <typename Real>
Matrix<Real>& Matrix<Real>::operator=(const MatrixBase<Real>& M) {
  if (internal::SameView(*this, M)) return *this;
  if (SameDim(*this, M) && !internal::Overlaps(*this, M)) {
    this->CopyFromMat(M);
  } else {
    // M may view part of our own storage: build the copy before releasing it.
    Matrix<Real> tmp(M);
    Swap(&tmp);
  }
  return *this;
}

template <typename Real>
void Matrix<Real>::Resize(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type,
                          MatrixStrideType stride_type) {
  if (rows < 0 || cols < 0) CUCTX_ERR << "Resize: negative dimension " << rows << "x" << cols;
  // The storage can stay as it is: same shape, and packed if packed storage was asked for.
  const bool reuse = rows == this->num_rows_ && cols == this->num_cols_ &&
                     (stride_type == kDefaultStride || this->stride_ == cols);
  if (resize_type == kCopyData) {
    if (reuse) return;
    Matrix<Real> tmp(rows, cols, kSetZero, stride_type);
    const MatrixIndexT keep_rows = std::min(rows, this->num_rows_);
    const MatrixIndexT keep_cols = std::min(cols, this->num_cols_);
    if (keep_rows > 0 && keep_cols > 0)
      tmp.Range(0, keep_rows, 0, keep_cols).CopyFromMat(this->Range(0, keep_rows, 0, keep_cols));
    Swap(&tmp);
    return;
  }
  if (!reuse) {
    Destroy();
    Init(rows, cols, stride_type);
  }
  if (resize_type == kSetZero) this->SetZero();
}

template <typename Real>
void Matrix<Real>::Swap(Matrix<Real>* other) {
  std::swap(this->data_, other->data_);
  std::swap(this->num_rows_, other->num_rows_);
  std::swap(this->num_cols_, other->num_cols_);
  std::swap(this->stride_, other->stride_);
}

template <typename Real>
void Matrix<Real>::Transpose() {
  if (this->num_rows_ == this->num_cols_) {
    for (MatrixIndexT r = 0; r < this->num_rows_; ++r)
      for (MatrixIndexT c = 0; c < r; ++c) std::swap((*this)(r, c), (*this)(c, r));
    return;
  }
  Matrix<Real> tmp(*this, kTrans);
  Swap(&tmp);
}

template <typename Real>
void Matrix<Real>::RemoveRow(MatrixIndexT i) {
  CheckIndex("RemoveRow", "row", i, this->num_rows_);
  for (MatrixIndexT r = i; r + 1 < this->num_rows_; ++r)
    std::memcpy(this->RowData(r), this->RowData(r + 1), sizeof(Real) * this->num_cols_);
  this->num_rows_--;
  if (this->num_rows_ == 0) Destroy();
}

// ---- SubMatrix
// ------------------------------------------------------------------------------------

template <typename Real>
SubMatrix<Real>::SubMatrix(const MatrixBase<Real>& M, MatrixIndexT ro, MatrixIndexT nr,
                           MatrixIndexT co, MatrixIndexT nc) {
  if (ro < 0 || nr < 0 || co < 0 || nc < 0 || static_cast<int64>(ro) + nr > M.NumRows() ||
      static_cast<int64>(co) + nc > M.NumCols())
    CUCTX_ERR << "SubMatrix: rows [" << ro << ", " << static_cast<int64>(ro) + nr << ") x cols ["
              << co << ", " << static_cast<int64>(co) + nc << ") is outside a " << ShapeOf(M)
              << " matrix";
  this->num_rows_ = nr;
  this->num_cols_ = nc;
  this->stride_ = M.Stride();
  // The offset stays within (or one past) M's storage even for empty views.
  this->data_ = M.Data() == nullptr
                    ? nullptr
                    : const_cast<Real*>(M.Data()) + static_cast<size_t>(ro) * M.Stride() + co;
}

template <typename Real>
SubMatrix<Real>::SubMatrix(Real* data, MatrixIndexT num_rows, MatrixIndexT num_cols,
                           MatrixIndexT stride) {
  if (num_rows < 0 || num_cols < 0 || stride < 0)
    CUCTX_ERR << "SubMatrix: negative size " << num_rows << "x" << num_cols << " stride " << stride;
  if (num_rows > 1 && stride < num_cols)
    CUCTX_ERR << "SubMatrix: stride " << stride << " is smaller than the " << num_cols
              << " columns of a " << num_rows << "-row view";
  if (data == nullptr && num_rows > 0 && num_cols > 0)
    CUCTX_ERR << "SubMatrix: null data for a " << num_rows << "x" << num_cols << " view";
  this->data_ = data;
  this->num_rows_ = num_rows;
  this->num_cols_ = num_cols;
  this->stride_ = stride;
}

// ---- copies
// ---------------------------------------------------------------------------------------

template <typename Real>
template <typename OtherReal>
void MatrixBase<Real>::CopyFromMat(const MatrixBase<OtherReal>& M, MatrixTransposeType trans) {
  if (trans == kNoTrans) {
    CheckSameShape("CopyFromMat", *this, "*this", M, "M");
  } else if (M.NumRows() != num_cols_ || M.NumCols() != num_rows_) {
    CUCTX_ERR << "CopyFromMat: shape mismatch: *this is " << ShapeOf(*this) << " but M^T of M "
              << ShapeOf(M) << " is " << M.NumCols() << "x" << M.NumRows();
  }
  if (num_rows_ == 0 || num_cols_ == 0) return;
  if constexpr (std::is_same_v<Real, OtherReal>) {
    if (internal::Overlaps(*this, M)) {
      if (internal::SameView(*this, M)) {
        if (trans == kNoTrans) return;
        // In-place transpose of a square matrix.
        for (MatrixIndexT r = 0; r < num_rows_; ++r)
          for (MatrixIndexT c = 0; c < r; ++c) std::swap((*this)(r, c), (*this)(c, r));
        return;
      }
      CheckNoOverlap("CopyFromMat", *this, M, "M");
    }
    if (trans == kNoTrans) {
      for (MatrixIndexT r = 0; r < num_rows_; ++r)
        std::memcpy(RowData(r), M.RowData(r), sizeof(Real) * num_cols_);
      return;
    }
  }
  if (trans == kNoTrans) {
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      const OtherReal* src = M.RowData(r);
      Real* dst = RowData(r);
      for (MatrixIndexT c = 0; c < num_cols_; ++c) dst[c] = static_cast<Real>(src[c]);
    }
    return;
  }
  // Transposed copy in tiles, so that both matrices are walked with some locality.
  constexpr MatrixIndexT kTile = 32;
  for (MatrixIndexT r0 = 0; r0 < num_rows_; r0 += kTile) {
    const MatrixIndexT r1 = std::min(r0 + kTile, num_rows_);
    for (MatrixIndexT c0 = 0; c0 < num_cols_; c0 += kTile) {
      const MatrixIndexT c1 = std::min(c0 + kTile, num_cols_);
      for (MatrixIndexT r = r0; r < r1; ++r) {
        Real* dst = RowData(r);
        for (MatrixIndexT c = c0; c < c1; ++c) dst[c] = static_cast<Real>(M.RowData(c)[r]);
      }
    }
  }
}

template <typename Real>
template <typename OtherReal>
void MatrixBase<Real>::CopyToMat(MatrixBase<OtherReal>* M, MatrixTransposeType trans) const {
  if (trans == kNoTrans) {
    M->CopyFromMat(*this);
  } else {
    // M = (*this)^T, i.e. M^T = *this.
    if (M->NumRows() != num_cols_ || M->NumCols() != num_rows_)
      CUCTX_ERR << "CopyToMat: shape mismatch: *this is " << ShapeOf(*this) << ", M is "
                << ShapeOf(*M) << " (kTrans)";
    M->CopyFromMat(*this, kTrans);
  }
}

template <typename Real>
template <typename OtherReal>
void MatrixBase<Real>::CopyRowsFromVec(const VectorBase<OtherReal>& v) {
  const OtherReal* src = v.Data();
  if (v.Dim() == static_cast<int64>(num_rows_) * num_cols_) {
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      Real* dst = RowData(r);
      for (MatrixIndexT c = 0; c < num_cols_; ++c)
        dst[c] = static_cast<Real>(src[static_cast<size_t>(r) * num_cols_ + c]);
    }
  } else if (v.Dim() == num_cols_) {
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      Real* dst = RowData(r);
      for (MatrixIndexT c = 0; c < num_cols_; ++c) dst[c] = static_cast<Real>(src[c]);
    }
  } else {
    CUCTX_ERR << "CopyRowsFromVec: vector dimension " << v.Dim() << " is neither rows * cols nor"
              << " cols of " << ShapeOf(*this);
  }
}

template <typename Real>
template <typename OtherReal>
void MatrixBase<Real>::CopyColsFromVec(const VectorBase<OtherReal>& v) {
  const OtherReal* src = v.Data();
  if (v.Dim() == static_cast<int64>(num_rows_) * num_cols_) {
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      Real* dst = RowData(r);
      for (MatrixIndexT c = 0; c < num_cols_; ++c)
        dst[c] = static_cast<Real>(src[static_cast<size_t>(c) * num_rows_ + r]);
    }
  } else if (v.Dim() == num_rows_) {
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      Real* dst = RowData(r);
      const Real value = static_cast<Real>(src[r]);
      for (MatrixIndexT c = 0; c < num_cols_; ++c) dst[c] = value;
    }
  } else {
    CUCTX_ERR << "CopyColsFromVec: vector dimension " << v.Dim() << " is neither rows * cols nor"
              << " rows of " << ShapeOf(*this);
  }
}

template <typename Real>
template <typename OtherReal>
void MatrixBase<Real>::CopyRowFromVec(const VectorBase<OtherReal>& v, MatrixIndexT row) {
  CheckIndex("CopyRowFromVec", "row", row, num_rows_);
  CheckDim("CopyRowFromVec", "v", v.Dim(), "NumCols()", num_cols_);
  Real* dst = RowData(row);
  for (MatrixIndexT c = 0; c < num_cols_; ++c) dst[c] = static_cast<Real>(v.Data()[c]);
}

template <typename Real>
template <typename OtherReal>
void MatrixBase<Real>::CopyColFromVec(const VectorBase<OtherReal>& v, MatrixIndexT col) {
  CheckIndex("CopyColFromVec", "column", col, num_cols_);
  CheckDim("CopyColFromVec", "v", v.Dim(), "NumRows()", num_rows_);
  for (MatrixIndexT r = 0; r < num_rows_; ++r) RowData(r)[col] = static_cast<Real>(v.Data()[r]);
}

template <typename Real>
void MatrixBase<Real>::CopyDiagFromVec(const VectorBase<Real>& v) {
  CheckDim("CopyDiagFromVec", "v", v.Dim(), "min(rows, cols)", std::min(num_rows_, num_cols_));
  for (MatrixIndexT i = 0; i < v.Dim(); ++i) (*this)(i, i) = v(i);
}

namespace {

// Validates a row or column index array: entries < 0 mean "skip", others must be < limit.
void CheckIndexArray(const char* op, const MatrixIndexT* indexes, MatrixIndexT count,
                     MatrixIndexT limit, const char* limit_name) {
  if (count == 0) return;
  CUCTX_CHECK(indexes != nullptr) << op << ": null index array for " << count << " entries";
  for (MatrixIndexT i = 0; i < count; ++i)
    if (indexes[i] >= limit)
      CUCTX_ERR << op << ": indexes[" << i << "] = " << indexes[i] << " is out of range for "
                << limit << " " << limit_name;
}

}  // namespace

template <typename Real>
void MatrixBase<Real>::CopyRows(const MatrixBase<Real>& src, const MatrixIndexT* indexes) {
  CheckDim("CopyRows", "src columns", src.NumCols(), "NumCols()", num_cols_);
  CheckNoOverlap("CopyRows", *this, src, "src");
  CheckIndexArray("CopyRows", indexes, num_rows_, src.NumRows(), "source rows");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    if (indexes[r] < 0)
      std::fill(RowData(r), RowData(r) + num_cols_, Real(0));
    else if (num_cols_ > 0)
      std::memcpy(RowData(r), src.RowData(indexes[r]), sizeof(Real) * num_cols_);
  }
}

template <typename Real>
void MatrixBase<Real>::CopyRows(const Real* const* src) {
  if (num_rows_ == 0 || num_cols_ == 0) return;
  CUCTX_CHECK(src != nullptr) << "CopyRows: null pointer array";
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    if (src[r] == nullptr)
      std::fill(RowData(r), RowData(r) + num_cols_, Real(0));
    else
      std::memmove(RowData(r), src[r], sizeof(Real) * num_cols_);
  }
}

template <typename Real>
void MatrixBase<Real>::CopyToRows(Real* const* dst) const {
  if (num_rows_ == 0 || num_cols_ == 0) return;
  CUCTX_CHECK(dst != nullptr) << "CopyToRows: null pointer array";
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    if (dst[r] != nullptr) std::memmove(dst[r], RowData(r), sizeof(Real) * num_cols_);
}

template <typename Real>
void MatrixBase<Real>::CopyCols(const MatrixBase<Real>& src, const MatrixIndexT* indexes) {
  CheckDim("CopyCols", "src rows", src.NumRows(), "NumRows()", num_rows_);
  CheckNoOverlap("CopyCols", *this, src, "src");
  CheckIndexArray("CopyCols", indexes, num_cols_, src.NumCols(), "source columns");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* in = src.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = indexes[c] < 0 ? Real(0) : in[indexes[c]];
  }
}

template <typename Real>
void MatrixBase<Real>::AddRows(Real alpha, const MatrixBase<Real>& src,
                               const MatrixIndexT* indexes) {
  CheckDim("AddRows", "src columns", src.NumCols(), "NumCols()", num_cols_);
  CheckNoOverlap("AddRows", *this, src, "src");
  CheckIndexArray("AddRows", indexes, num_rows_, src.NumRows(), "source rows");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    if (indexes[r] < 0) continue;
    const Real* in = src.RowData(indexes[r]);
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] += alpha * in[c];
  }
}

template <typename Real>
void MatrixBase<Real>::AddRows(Real alpha, const Real* const* src) {
  if (num_rows_ == 0 || num_cols_ == 0) return;
  CUCTX_CHECK(src != nullptr) << "AddRows: null pointer array";
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    if (src[r] == nullptr) continue;
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] += alpha * src[r][c];
  }
}

template <typename Real>
void MatrixBase<Real>::AddToRows(Real alpha, const MatrixIndexT* indexes,
                                 MatrixBase<Real>* dst) const {
  CheckDim("AddToRows", "dst columns", dst->NumCols(), "NumCols()", num_cols_);
  CheckNoOverlap("AddToRows", *dst, *this, "*this");
  CheckIndexArray("AddToRows", indexes, num_rows_, dst->NumRows(), "destination rows");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    if (indexes[r] < 0) continue;
    const Real* in = RowData(r);
    Real* out = dst->RowData(indexes[r]);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] += alpha * in[c];
  }
}

template <typename Real>
void MatrixBase<Real>::AddToRows(Real alpha, Real* const* dst) const {
  if (num_rows_ == 0 || num_cols_ == 0) return;
  CUCTX_CHECK(dst != nullptr) << "AddToRows: null pointer array";
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    if (dst[r] == nullptr) continue;
    const Real* in = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) dst[r][c] += alpha * in[c];
  }
}

template <typename Real>
void MatrixBase<Real>::AddCols(const MatrixBase<Real>& src, const MatrixIndexT* indexes) {
  CheckDim("AddCols", "src rows", src.NumRows(), "NumRows()", num_rows_);
  CheckNoOverlap("AddCols", *this, src, "src");
  CheckIndexArray("AddCols", indexes, num_cols_, src.NumCols(), "source columns");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* in = src.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c)
      if (indexes[c] >= 0) out[c] += in[indexes[c]];
  }
}

template <typename Real>
void MatrixBase<Real>::MulRows(const MatrixBase<Real>& src, const MatrixIndexT* indexes) {
  CheckDim("MulRows", "src columns", src.NumCols(), "NumCols()", num_cols_);
  CheckNoOverlap("MulRows", *this, src, "src");
  CheckIndexArray("MulRows", indexes, num_rows_, src.NumRows(), "source rows");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    if (indexes[r] < 0) continue;
    const Real* in = src.RowData(indexes[r]);
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] *= in[c];
  }
}

namespace {

// Validates [first, second) ranges within [0, limit); first >= second is an empty range.
void CheckRangeArray(const char* op, const Int32Pair* ranges, MatrixIndexT count,
                     MatrixIndexT limit) {
  if (count == 0) return;
  CUCTX_CHECK(ranges != nullptr) << op << ": null range array for " << count << " entries";
  for (MatrixIndexT i = 0; i < count; ++i)
    if (ranges[i].first < ranges[i].second && (ranges[i].first < 0 || ranges[i].second > limit))
      CUCTX_ERR << op << ": range " << i << " = [" << ranges[i].first << ", " << ranges[i].second
                << ") is not a valid range within [0, " << limit << ")";
}

}  // namespace

template <typename Real>
void MatrixBase<Real>::AddRowRanges(const MatrixBase<Real>& src, const Int32Pair* indexes) {
  CheckDim("AddRowRanges", "src columns", src.NumCols(), "NumCols()", num_cols_);
  CheckNoOverlap("AddRowRanges", *this, src, "src");
  CheckRangeArray("AddRowRanges", indexes, num_rows_, src.NumRows());
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* out = RowData(r);
    for (MatrixIndexT j = indexes[r].first; j < indexes[r].second; ++j) {
      const Real* in = src.RowData(j);
      for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] += in[c];
    }
  }
}

template <typename Real>
void MatrixBase<Real>::SumColumnRanges(const MatrixBase<Real>& src, const Int32Pair* indexes) {
  CheckDim("SumColumnRanges", "src rows", src.NumRows(), "NumRows()", num_rows_);
  CheckNoOverlap("SumColumnRanges", *this, src, "src");
  CheckRangeArray("SumColumnRanges", indexes, num_cols_, src.NumCols());
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* in = src.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) {
      Real sum = 0;
      for (MatrixIndexT j = indexes[c].first; j < indexes[c].second; ++j) sum += in[j];
      out[c] = sum;
    }
  }
}

template <typename Real>
void MatrixBase<Real>::CopyLowerToUpper() {
  CUCTX_CHECK(num_rows_ == num_cols_)
      << "CopyLowerToUpper: matrix " << ShapeOf(*this) << " is not square";
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    for (MatrixIndexT c = 0; c < r; ++c) (*this)(c, r) = (*this)(r, c);
}

template <typename Real>
void MatrixBase<Real>::CopyUpperToLower() {
  CUCTX_CHECK(num_rows_ == num_cols_)
      << "CopyUpperToLower: matrix " << ShapeOf(*this) << " is not square";
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    for (MatrixIndexT c = 0; c < r; ++c) (*this)(r, c) = (*this)(c, r);
}

template <typename Real>
void MatrixBase<Real>::SetZeroAboveDiag() {
  for (MatrixIndexT r = 0; r < num_rows_ && r + 1 < num_cols_; ++r)
    std::fill(RowData(r) + r + 1, RowData(r) + num_cols_, Real(0));
}

namespace {

// Validates (row, column) pairs against a shape.
template <typename Real>
void CheckPairs(const char* op, const Int32Pair* indexes, MatrixIndexT num,
                const MatrixBase<Real>& m) {
  if (num == 0) return;
  CUCTX_CHECK(num > 0 && indexes != nullptr) << op << ": bad index array (" << num << " entries)";
  for (MatrixIndexT i = 0; i < num; ++i)
    if (indexes[i].first < 0 || indexes[i].first >= m.NumRows() || indexes[i].second < 0 ||
        indexes[i].second >= m.NumCols())
      CUCTX_ERR << op << ": element " << i << " = (" << indexes[i].first << ", "
                << indexes[i].second << ") is outside the " << ShapeOf(m) << " matrix";
}

}  // namespace

template <typename Real>
void MatrixBase<Real>::Lookup(const Int32Pair* indexes, MatrixIndexT num, Real* output) const {
  CheckPairs("Lookup", indexes, num, *this);
  for (MatrixIndexT i = 0; i < num; ++i) output[i] = (*this)(indexes[i].first, indexes[i].second);
}

template <typename Real>
void MatrixBase<Real>::Lookup(const std::vector<Int32Pair>& indexes, Real* output) const {
  Lookup(indexes.data(), static_cast<MatrixIndexT>(indexes.size()), output);
}

template <typename Real>
void MatrixBase<Real>::AddElements(Real alpha, const std::vector<MatrixElement<Real>>& input) {
  for (size_t i = 0; i < input.size(); ++i) {
    const MatrixElement<Real>& e = input[i];
    if (e.row < 0 || e.row >= num_rows_ || e.column < 0 || e.column >= num_cols_)
      CUCTX_ERR << "AddElements: element " << i << " = (" << e.row << ", " << e.column
                << ") is outside the " << ShapeOf(*this) << " matrix";
  }
  for (const MatrixElement<Real>& e : input) (*this)(e.row, e.column) += alpha * e.weight;
}

template <typename Real>
void MatrixBase<Real>::AddElements(Real alpha, const Int32Pair* indexes, MatrixIndexT num,
                                   const Real* input) {
  CheckPairs("AddElements", indexes, num, *this);
  for (MatrixIndexT i = 0; i < num; ++i)
    (*this)(indexes[i].first, indexes[i].second) += alpha * input[i];
}

template <typename Real>
void MatrixBase<Real>::AddToElements(Real alpha, const MatrixIndexT* elements) {
  CheckIndexArray("AddToElements", elements, num_rows_, num_cols_, "columns");
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    if (elements[r] >= 0) (*this)(r, elements[r]) += alpha;
}

template <typename Real>
void MatrixBase<Real>::EqualElementMask(const MatrixBase<Real>& mat, Matrix<Real>* mask) const {
  CheckSameShape("EqualElementMask", *this, "*this", mat, "mat");
  CUCTX_CHECK(static_cast<const MatrixBase<Real>*>(mask) != this &&
              static_cast<const MatrixBase<Real>*>(mask) != &mat)
      << "EqualElementMask: mask must be a separate matrix";
  mask->Resize(num_rows_, num_cols_, kUndefined);
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* a = RowData(r);
    const Real* b = mat.RowData(r);
    Real* out = mask->RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = a[c] == b[c] ? Real(1) : Real(0);
  }
}

// ---- fill and scalar ops
// --------------------------------------------------------------------------

template <typename Real>
void MatrixBase<Real>::SetZero() {
  if (num_rows_ == 0 || num_cols_ == 0) return;
  if (num_cols_ == stride_) {
    std::memset(data_, 0, sizeof(Real) * static_cast<size_t>(num_rows_) * num_cols_);
    return;
  }
  for (MatrixIndexT r = 0; r < num_rows_; ++r) std::memset(RowData(r), 0, sizeof(Real) * num_cols_);
}

template <typename Real>
void MatrixBase<Real>::Set(Real value) {
  for (MatrixIndexT r = 0; r < num_rows_; ++r) std::fill(RowData(r), RowData(r) + num_cols_, value);
}

template <typename Real>
void MatrixBase<Real>::SetUnit() {
  SetZero();
  for (MatrixIndexT i = 0; i < std::min(num_rows_, num_cols_); ++i) (*this)(i, i) = 1;
}

template <typename Real>
void MatrixBase<Real>::SetRandn() {
  RandomState state;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* row = RowData(r);
    MatrixIndexT c = 0;
    for (; c + 1 < num_cols_; c += 2) {
      float a, b;
      RandGauss2(&a, &b, &state);
      row[c] = a;
      row[c + 1] = b;
    }
    if (c < num_cols_) row[c] = RandGauss(&state);
  }
}

template <typename Real>
void MatrixBase<Real>::SetRandUniform() {
  RandomState state;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) row[c] = RandUniform(&state);
  }
}

template <typename Real>
void MatrixBase<Real>::Add(Real alpha) {
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) row[c] += alpha;
  }
}

template <typename Real>
void MatrixBase<Real>::Scale(Real alpha) {
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) row[c] *= alpha;
  }
}

template <typename Real>
void MatrixBase<Real>::AddToDiag(Real alpha) {
  for (MatrixIndexT i = 0; i < std::min(num_rows_, num_cols_); ++i) (*this)(i, i) += alpha;
}

// ---- reductions
// -----------------------------------------------------------------------------------

template <typename Real>
Real MatrixBase<Real>::Sum() const {
  double sum = 0.0;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) sum += row[c];
  }
  return static_cast<Real>(sum);
}

template <typename Real>
Real MatrixBase<Real>::Max() const {
  CUCTX_CHECK(num_rows_ > 0 && num_cols_ > 0) << "Max: empty matrix " << ShapeOf(*this);
  Real best = (*this)(0, 0);
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) best = std::max(best, row[c]);
  }
  return best;
}

template <typename Real>
Real MatrixBase<Real>::Min() const {
  CUCTX_CHECK(num_rows_ > 0 && num_cols_ > 0) << "Min: empty matrix " << ShapeOf(*this);
  Real best = (*this)(0, 0);
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) best = std::min(best, row[c]);
  }
  return best;
}

template <typename Real>
Real MatrixBase<Real>::Trace(bool check_square) const {
  CUCTX_CHECK(!check_square || num_rows_ == num_cols_)
      << "Trace: matrix " << ShapeOf(*this) << " is not square";
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < std::min(num_rows_, num_cols_); ++i) sum += (*this)(i, i);
  return static_cast<Real>(sum);
}

template <typename Real>
Real MatrixBase<Real>::FrobeniusNorm() const {
  double sum = 0.0;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) sum += static_cast<double>(row[c]) * row[c];
  }
  return static_cast<Real>(std::sqrt(sum));
}

template <typename Real>
bool MatrixBase<Real>::ApproxEqual(const MatrixBase<Real>& other, float tol) const {
  CheckSameShape("ApproxEqual", *this, "*this", other, "other");
  CUCTX_CHECK(tol >= 0) << "ApproxEqual: tol = " << tol << " must be >= 0";
  double diff = 0.0, norm = 0.0;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* a = RowData(r);
    const Real* b = other.RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) {
      const double d = static_cast<double>(a[c]) - b[c];
      diff += d * d;
      norm += static_cast<double>(a[c]) * a[c];
    }
  }
  return std::sqrt(diff) <= tol * std::sqrt(norm);
}

template <typename Real>
bool MatrixBase<Real>::Equal(const MatrixBase<Real>& other) const {
  CheckSameShape("Equal", *this, "*this", other, "other");
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    for (MatrixIndexT c = 0; c < num_cols_; ++c)
      if ((*this)(r, c) != other(r, c)) return false;
  return true;
}

template <typename Real>
bool MatrixBase<Real>::IsUnit(Real cutoff) const {
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    for (MatrixIndexT c = 0; c < num_cols_; ++c)
      if (std::abs((*this)(r, c) - (r == c ? Real(1) : Real(0))) > cutoff) return false;
  return true;
}

template <typename Real>
bool MatrixBase<Real>::IsZero(Real cutoff) const {
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    for (MatrixIndexT c = 0; c < num_cols_; ++c)
      if (std::abs((*this)(r, c)) > cutoff) return false;
  return true;
}

template <typename Real>
bool MatrixBase<Real>::IsSymmetric(Real cutoff) const {
  if (num_rows_ != num_cols_) return false;
  double bad = 0.0, good = 0.0;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    for (MatrixIndexT c = 0; c <= r; ++c) {
      const double a = (*this)(r, c), b = (*this)(c, r);
      bad += std::abs(a - b) / 2;
      good += std::abs(a + b) / 2;
    }
  }
  return bad <= good * cutoff;
}

template <typename Real>
bool MatrixBase<Real>::IsDiagonal(Real cutoff) const {
  double bad = 0.0, good = 0.0;
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    for (MatrixIndexT c = 0; c < num_cols_; ++c) (r == c ? good : bad) += std::abs((*this)(r, c));
  return bad <= good * cutoff;
}

// ---- free functions
// -------------------------------------------------------------------------------

template <typename Real>
bool ApproxEqual(const MatrixBase<Real>& A, const MatrixBase<Real>& B, float tol) {
  return A.ApproxEqual(B, tol);
}

template <typename Real>
void AssertEqual(const MatrixBase<Real>& A, const MatrixBase<Real>& B, float tol) {
  if (!A.ApproxEqual(B, tol)) {
    Matrix<Real> diff(A);
    diff.AddMat(-1.0, B);
    CUCTX_ERR << "AssertEqual: " << ShapeOf(A)
              << " matrices differ: ||A - B|| = " << diff.FrobeniusNorm() << " > " << tol
              << " * ||A|| = " << tol * A.FrobeniusNorm();
  }
}

template <typename Real>
std::ostream& operator<<(std::ostream& os, const MatrixBase<Real>& M) {
  M.Write(os, false);
  return os;
}

// ---- explicit instantiation
// -----------------------------------------------------------------------

#define CUCTX_INSTANTIATE_MATRIX_MEMBERS_(R, O)                                        \
  template void MatrixBase<R>::CopyFromMat(const MatrixBase<O>&, MatrixTransposeType); \
  template void MatrixBase<R>::CopyToMat(MatrixBase<O>*, MatrixTransposeType) const;   \
  template void MatrixBase<R>::CopyRowsFromVec(const VectorBase<O>&);                  \
  template void MatrixBase<R>::CopyColsFromVec(const VectorBase<O>&);                  \
  template void MatrixBase<R>::CopyRowFromVec(const VectorBase<O>&, MatrixIndexT);     \
  template void MatrixBase<R>::CopyColFromVec(const VectorBase<O>&, MatrixIndexT);

#define CUCTX_INSTANTIATE_MATRIX_(R)                                            \
  template class MatrixBase<R>;                                                 \
  template class Matrix<R>;                                                     \
  template class SubMatrix<R>;                                                  \
  template bool ApproxEqual(const MatrixBase<R>&, const MatrixBase<R>&, float); \
  template void AssertEqual(const MatrixBase<R>&, const MatrixBase<R>&, float); \
  template std::ostream& operator<<(std::ostream&, const MatrixBase<R>&);

CUCTX_INSTANTIATE_MATRIX_(float)
CUCTX_INSTANTIATE_MATRIX_(double)
CUCTX_INSTANTIATE_MATRIX_MEMBERS_(float, float)
CUCTX_INSTANTIATE_MATRIX_MEMBERS_(float, double)
CUCTX_INSTANTIATE_MATRIX_MEMBERS_(double, float)
CUCTX_INSTANTIATE_MATRIX_MEMBERS_(double, double)
template Matrix<float>::Matrix(const MatrixBase<double>&, MatrixTransposeType);
template Matrix<double>::Matrix(const MatrixBase<float>&, MatrixTransposeType);

#undef CUCTX_INSTANTIATE_MATRIX_
#undef CUCTX_INSTANTIATE_MATRIX_MEMBERS_

}  // namespace cuctx
