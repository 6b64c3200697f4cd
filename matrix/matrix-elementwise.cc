// matrix/matrix-elementwise.cc: MatrixBase element-wise ops, broadcasts and in-place maps (CPU).
// SPDX-License-Identifier: Apache-2.0
#include "matrix/cblas-wrappers.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"

#include <algorithm>
#include <cmath>

namespace cuctx {

using internal::CheckDim;
using internal::CheckNoOverlap;
using internal::CheckNoPartialOverlap;
using internal::CheckSameShape;
using internal::ShapeOf;

namespace {

// *out = f(*out), element by element.
template <typename Real, typename F>
void MapInPlace(MatrixBase<Real>* out, F f) {
  for (MatrixIndexT r = 0; r < out->NumRows(); ++r) {
    Real* row = out->RowData(r);
    for (MatrixIndexT c = 0; c < out->NumCols(); ++c) row[c] = f(row[c]);
  }
}

// *out = f(src) element by element; src must have out's shape and may be out itself.
template <typename Real, typename F>
void MapFrom(const char* op, MatrixBase<Real>* out, const MatrixBase<Real>& src, F f) {
  CheckSameShape(op, *out, "*this", src, "src");
  CheckNoPartialOverlap(op, *out, src, "src");
  for (MatrixIndexT r = 0; r < out->NumRows(); ++r) {
    const Real* in = src.RowData(r);
    Real* row = out->RowData(r);
    for (MatrixIndexT c = 0; c < out->NumCols(); ++c) row[c] = f(in[c]);
  }
}

// *out = f(*out, a) element by element; a must have out's shape and may be out itself.
template <typename Real, typename F>
void ZipWith(const char* op, MatrixBase<Real>* out, const MatrixBase<Real>& a, F f) {
  CheckSameShape(op, *out, "*this", a, "A");
  CheckNoPartialOverlap(op, *out, a, "A");
  for (MatrixIndexT r = 0; r < out->NumRows(); ++r) {
    const Real* in = a.RowData(r);
    Real* row = out->RowData(r);
    for (MatrixIndexT c = 0; c < out->NumCols(); ++c) row[c] = f(row[c], in[c]);
  }
}

// Throws if a vector argument shares memory with the matrix being written.
template <typename Real>
void CheckVecNoOverlap(const char* op, const MatrixBase<Real>& out, const VectorBase<Real>& v) {
  if (internal::Overlaps(v, out))
    CUCTX_ERR << op << ": the vector argument overlaps the output matrix " << ShapeOf(out);
}

// |x|^p with the sign of x if asked; 0 for x == 0 also when p < 0 (where pow gives inf).
template <typename Real>
Real PowAbsOf(Real x, Real power, bool include_sign) {
  if (x == 0) return power == 0 ? Real(1) : Real(0);
  const Real y = std::pow(std::abs(x), power);
  return include_sign && x < 0 ? -y : y;
}

template <typename Real>
Real ExpSpecialOf(Real x) {
  return x < 0 ? std::exp(x) : x + 1;
}

}  // namespace

template <typename Real>
void MatrixBase<Real>::MulElements(const MatrixBase<Real>& A) {
  ZipWith("MulElements", this, A, [](Real x, Real a) { return x * a; });
}

template <typename Real>
void MatrixBase<Real>::DivElements(const MatrixBase<Real>& A) {
  ZipWith("DivElements", this, A, [](Real x, Real a) { return x / a; });
}

template <typename Real>
void MatrixBase<Real>::Max(const MatrixBase<Real>& A) {
  ZipWith("Max", this, A, [](Real x, Real a) { return std::max(x, a); });
}

template <typename Real>
void MatrixBase<Real>::Min(const MatrixBase<Real>& A) {
  ZipWith("Min", this, A, [](Real x, Real a) { return std::min(x, a); });
}

template <typename Real>
void MatrixBase<Real>::InvertElements() {
  MapInPlace(this, [](Real x) { return Real(1) / x; });
}

template <typename Real>
void MatrixBase<Real>::MulColsVec(const VectorBase<Real>& scale) {
  CheckDim("MulColsVec", "scale", scale.Dim(), "NumCols()", num_cols_);
  CheckVecNoOverlap("MulColsVec", *this, scale);
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) row[c] *= scale.Data()[c];
  }
}

template <typename Real>
void MatrixBase<Real>::MulRowsVec(const VectorBase<Real>& scale) {
  CheckDim("MulRowsVec", "scale", scale.Dim(), "NumRows()", num_rows_);
  CheckVecNoOverlap("MulRowsVec", *this, scale);
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* row = RowData(r);
    const Real s = scale.Data()[r];
    for (MatrixIndexT c = 0; c < num_cols_; ++c) row[c] *= s;
  }
}

template <typename Real>
void MatrixBase<Real>::MulRowsGroupMat(const MatrixBase<Real>& src) {
  CheckDim("MulRowsGroupMat", "src rows", src.NumRows(), "NumRows()", num_rows_);
  if (src.NumCols() == 0 ? num_cols_ != 0 : num_cols_ % src.NumCols() != 0)
    CUCTX_ERR << "MulRowsGroupMat: the " << num_cols_ << " columns of *this are not a whole "
              << "number of groups for the " << src.NumCols() << " columns of src";
  CheckNoOverlap("MulRowsGroupMat", *this, src, "src");
  if (num_cols_ == 0) return;
  const MatrixIndexT group = num_cols_ / src.NumCols();
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* scale = src.RowData(r);
    Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) row[c] *= scale[c / group];
  }
}

template <typename Real>
void MatrixBase<Real>::DivRowsVec(const VectorBase<Real>& div) {
  CheckDim("DivRowsVec", "div", div.Dim(), "NumRows()", num_rows_);
  CheckVecNoOverlap("DivRowsVec", *this, div);
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* row = RowData(r);
    const Real d = div.Data()[r];
    for (MatrixIndexT c = 0; c < num_cols_; ++c) row[c] /= d;
  }
}

template <typename Real>
void MatrixBase<Real>::AddVecToRows(Real alpha, const VectorBase<Real>& row, Real beta) {
  CheckDim("AddVecToRows", "row", row.Dim(), "NumCols()", num_cols_);
  CheckVecNoOverlap("AddVecToRows", *this, row);
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = beta * out[c] + alpha * row.Data()[c];
  }
}

template <typename Real>
void MatrixBase<Real>::AddVecToCols(Real alpha, const VectorBase<Real>& col, Real beta) {
  CheckDim("AddVecToCols", "col", col.Dim(), "NumRows()", num_rows_);
  CheckVecNoOverlap("AddVecToCols", *this, col);
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* out = RowData(r);
    const Real v = alpha * col.Data()[r];
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = beta * out[c] + v;
  }
}

template <typename Real>
void MatrixBase<Real>::AddMat(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType trans) {
  if (trans == kNoTrans) {
    CheckSameShape("AddMat", *this, "*this", A, "A");
    if (internal::SameView(*this, A)) {
      Scale(1 + alpha);
      return;
    }
    CheckNoOverlap("AddMat", *this, A, "A");
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      const Real* in = A.RowData(r);
      Real* out = RowData(r);
      for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] += alpha * in[c];
    }
    return;
  }
  if (A.NumRows() != num_cols_ || A.NumCols() != num_rows_)
    CUCTX_ERR << "AddMat: shape mismatch: *this is " << ShapeOf(*this) << " but A^T of A "
              << ShapeOf(A) << " is " << A.NumCols() << "x" << A.NumRows();
  if (internal::SameView(*this, A)) {
    // *this += alpha * (*this)^T on a square matrix: update each (r, c), (c, r) pair together.
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      for (MatrixIndexT c = 0; c < r; ++c) {
        Real& x = (*this)(r, c);
        Real& y = (*this)(c, r);
        const Real x0 = x, y0 = y;
        x = x0 + alpha * y0;
        y = y0 + alpha * x0;
      }
      (*this)(r, r) *= 1 + alpha;
    }
    return;
  }
  CheckNoOverlap("AddMat", *this, A, "A");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] += alpha * A.RowData(c)[r];
  }
}

template <typename Real>
void MatrixBase<Real>::AddMatBlocks(Real alpha, const MatrixBase<Real>& A,
                                    MatrixTransposeType trans) {
  const MatrixIndexT a_rows = internal::OpRows(A, trans), a_cols = internal::OpCols(A, trans);
  const bool sum_blocks =
      num_rows_ > 0 && num_cols_ > 0 && a_rows % num_rows_ == 0 && a_cols % num_cols_ == 0;
  const bool broadcast =
      a_rows > 0 && a_cols > 0 && num_rows_ % a_rows == 0 && num_cols_ % a_cols == 0;
  const bool both_empty = (num_rows_ == 0 || num_cols_ == 0) && (a_rows == 0 || a_cols == 0);
  if (!sum_blocks && !broadcast && !both_empty)
    CUCTX_ERR << "AddMatBlocks: op(A) is " << a_rows << "x" << a_cols << " (A " << ShapeOf(A)
              << (trans == kTrans ? ", kTrans" : "") << ") and *this is " << ShapeOf(*this)
              << "; one must be a whole multiple of the other in both dimensions";
  if (both_empty) return;
  CheckNoOverlap("AddMatBlocks", *this, A, "A");
  // Element (i, j) of op(A).
  auto a_at = [&A, trans](MatrixIndexT i, MatrixIndexT j) {
    return trans == kNoTrans ? A.RowData(i)[j] : A.RowData(j)[i];
  };
  if (sum_blocks) {
    for (MatrixIndexT i = 0; i < a_rows; ++i) {
      Real* out = RowData(i % num_rows_);
      for (MatrixIndexT j = 0; j < a_cols; ++j) out[j % num_cols_] += alpha * a_at(i, j);
    }
  } else {
    for (MatrixIndexT r = 0; r < num_rows_; ++r) {
      Real* out = RowData(r);
      for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] += alpha * a_at(r % a_rows, c % a_cols);
    }
  }
}

template <typename Real>
void MatrixBase<Real>::AddMatMatElements(Real alpha, const MatrixBase<Real>& A,
                                         const MatrixBase<Real>& B, Real beta) {
  CheckSameShape("AddMatMatElements", *this, "*this", A, "A");
  CheckSameShape("AddMatMatElements", *this, "*this", B, "B");
  CheckNoPartialOverlap("AddMatMatElements", *this, A, "A");
  CheckNoPartialOverlap("AddMatMatElements", *this, B, "B");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* a = A.RowData(r);
    const Real* b = B.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = beta * out[c] + alpha * a[c] * b[c];
  }
}

template <typename Real>
void MatrixBase<Real>::SetMatMatDivMat(const MatrixBase<Real>& A, const MatrixBase<Real>& B,
                                       const MatrixBase<Real>& C) {
  CheckSameShape("SetMatMatDivMat", *this, "*this", A, "A");
  CheckSameShape("SetMatMatDivMat", *this, "*this", B, "B");
  CheckSameShape("SetMatMatDivMat", *this, "*this", C, "C");
  CheckNoPartialOverlap("SetMatMatDivMat", *this, A, "A");
  CheckNoPartialOverlap("SetMatMatDivMat", *this, B, "B");
  CheckNoPartialOverlap("SetMatMatDivMat", *this, C, "C");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* a = A.RowData(r);
    const Real* b = B.RowData(r);
    const Real* d = C.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = d[c] != 0 ? a[c] * b[c] / d[c] : a[c];
  }
}

// ---- in-place maps
// --------------------------------------------------------------------------------

template <typename Real>
void MatrixBase<Real>::ApplyPow(Real power) {
  MapInPlace(this, [power](Real x) { return std::pow(x, power); });
}

template <typename Real>
void MatrixBase<Real>::ApplyPowAbs(Real power, bool include_sign) {
  MapInPlace(this, [=](Real x) { return PowAbsOf(x, power, include_sign); });
}

template <typename Real>
void MatrixBase<Real>::ApplyHeaviside() {
  MapInPlace(this, [](Real x) { return x > 0 ? Real(1) : Real(0); });
}

template <typename Real>
void MatrixBase<Real>::ApplyFloor(Real floor_val) {
  MapInPlace(this, [floor_val](Real x) { return std::max(x, floor_val); });
}

template <typename Real>
void MatrixBase<Real>::ApplyCeiling(Real ceiling_val) {
  MapInPlace(this, [ceiling_val](Real x) { return std::min(x, ceiling_val); });
}

template <typename Real>
void MatrixBase<Real>::ApplyExp() {
  MapInPlace(this, [](Real x) { return std::exp(x); });
}

template <typename Real>
void MatrixBase<Real>::ApplyExpLimited(Real lower_limit, Real upper_limit) {
  CUCTX_CHECK(lower_limit <= upper_limit)
      << "ApplyExpLimited: lower limit " << lower_limit << " > upper limit " << upper_limit;
  MapInPlace(this,
             [=](Real x) { return std::exp(std::min(std::max(x, lower_limit), upper_limit)); });
}

template <typename Real>
void MatrixBase<Real>::ApplyExpSpecial() {
  MapInPlace(this, [](Real x) { return ExpSpecialOf(x); });
}

template <typename Real>
void MatrixBase<Real>::ApplyLog() {
  MapInPlace(this, [](Real x) { return std::log(x); });
}

// ---- maps from a source
// ---------------------------------------------------------------------------

template <typename Real>
void MatrixBase<Real>::Exp(const MatrixBase<Real>& src) {
  MapFrom("Exp", this, src, [](Real x) { return std::exp(x); });
}

template <typename Real>
void MatrixBase<Real>::Log(const MatrixBase<Real>& src) {
  MapFrom("Log", this, src, [](Real x) { return std::log(x); });
}

template <typename Real>
void MatrixBase<Real>::Pow(const MatrixBase<Real>& src, Real power) {
  MapFrom("Pow", this, src, [power](Real x) { return std::pow(x, power); });
}

template <typename Real>
void MatrixBase<Real>::PowAbs(const MatrixBase<Real>& src, Real power, bool include_sign) {
  MapFrom("PowAbs", this, src, [=](Real x) { return PowAbsOf(x, power, include_sign); });
}

template <typename Real>
void MatrixBase<Real>::Floor(const MatrixBase<Real>& src, Real floor_val) {
  MapFrom("Floor", this, src, [floor_val](Real x) { return std::max(x, floor_val); });
}

template <typename Real>
void MatrixBase<Real>::Ceiling(const MatrixBase<Real>& src, Real ceiling_val) {
  MapFrom("Ceiling", this, src, [ceiling_val](Real x) { return std::min(x, ceiling_val); });
}

template <typename Real>
void MatrixBase<Real>::ExpLimited(const MatrixBase<Real>& src, Real lower_limit, Real upper_limit) {
  CUCTX_CHECK(lower_limit <= upper_limit)
      << "ExpLimited: lower limit " << lower_limit << " > upper limit " << upper_limit;
  MapFrom("ExpLimited", this, src,
          [=](Real x) { return std::exp(std::min(std::max(x, lower_limit), upper_limit)); });
}

template <typename Real>
void MatrixBase<Real>::ExpSpecial(const MatrixBase<Real>& src) {
  MapFrom("ExpSpecial", this, src, [](Real x) { return ExpSpecialOf(x); });
}

template <typename Real>
void MatrixBase<Real>::Heaviside(const MatrixBase<Real>& src) {
  MapFrom("Heaviside", this, src, [](Real x) { return x > 0 ? Real(1) : Real(0); });
}

// ---- explicit instantiation (class-level instantiation is in matrix.cc)
// --------------------------

#define CUCTX_INSTANTIATE_ELEMENTWISE_(R)                                                       \
  template void MatrixBase<R>::MulElements(const MatrixBase<R>&);                               \
  template void MatrixBase<R>::DivElements(const MatrixBase<R>&);                               \
  template void MatrixBase<R>::Max(const MatrixBase<R>&);                                       \
  template void MatrixBase<R>::Min(const MatrixBase<R>&);                                       \
  template void MatrixBase<R>::InvertElements();                                                \
  template void MatrixBase<R>::MulColsVec(const VectorBase<R>&);                                \
  template void MatrixBase<R>::MulRowsVec(const VectorBase<R>&);                                \
  template void MatrixBase<R>::MulRowsGroupMat(const MatrixBase<R>&);                           \
  template void MatrixBase<R>::DivRowsVec(const VectorBase<R>&);                                \
  template void MatrixBase<R>::AddVecToRows(R, const VectorBase<R>&, R);                        \
  template void MatrixBase<R>::AddVecToCols(R, const VectorBase<R>&, R);                        \
  template void MatrixBase<R>::AddMat(R, const MatrixBase<R>&, MatrixTransposeType);            \
  template void MatrixBase<R>::AddMatBlocks(R, const MatrixBase<R>&, MatrixTransposeType);      \
  template void MatrixBase<R>::AddMatMatElements(R, const MatrixBase<R>&, const MatrixBase<R>&, \
                                                 R);                                            \
  template void MatrixBase<R>::SetMatMatDivMat(const MatrixBase<R>&, const MatrixBase<R>&,      \
                                               const MatrixBase<R>&);                           \
  template void MatrixBase<R>::ApplyPow(R);                                                     \
  template void MatrixBase<R>::ApplyPowAbs(R, bool);                                            \
  template void MatrixBase<R>::ApplyHeaviside();                                                \
  template void MatrixBase<R>::ApplyFloor(R);                                                   \
  template void MatrixBase<R>::ApplyCeiling(R);                                                 \
  template void MatrixBase<R>::ApplyExp();                                                      \
  template void MatrixBase<R>::ApplyExpLimited(R, R);                                           \
  template void MatrixBase<R>::ApplyExpSpecial();                                               \
  template void MatrixBase<R>::ApplyLog();                                                      \
  template void MatrixBase<R>::Exp(const MatrixBase<R>&);                                       \
  template void MatrixBase<R>::Log(const MatrixBase<R>&);                                       \
  template void MatrixBase<R>::Pow(const MatrixBase<R>&, R);                                    \
  template void MatrixBase<R>::PowAbs(const MatrixBase<R>&, R, bool);                           \
  template void MatrixBase<R>::Floor(const MatrixBase<R>&, R);                                  \
  template void MatrixBase<R>::Ceiling(const MatrixBase<R>&, R);                                \
  template void MatrixBase<R>::ExpLimited(const MatrixBase<R>&, R, R);                          \
  template void MatrixBase<R>::ExpSpecial(const MatrixBase<R>&);                                \
  template void MatrixBase<R>::Heaviside(const MatrixBase<R>&);

CUCTX_INSTANTIATE_ELEMENTWISE_(float)
CUCTX_INSTANTIATE_ELEMENTWISE_(double)

#undef CUCTX_INSTANTIATE_ELEMENTWISE_

}  // namespace cuctx
