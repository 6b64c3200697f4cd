// matrix/matrix-extra.cc: whole-matrix LogSumExp and softmax, GroupPnormDeriv, the signed outer
// product AddOuterProductPlusMinus (Kaldi parity).
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix-check.h"
#include "matrix/matrix-functions.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

#include <cfloat>
#include <cmath>
#include <initializer_list>
#include <limits>

namespace cuctx {

using internal::CheckDim;
using internal::CheckNoOverlap;
using internal::CheckNoPartialOverlap;
using internal::CheckSameShape;
using internal::ShapeOf;

namespace {

// log(epsilon) of Real: a term exp(x - max) below epsilon cannot change a sum that contains 1.
template <typename Real>
double LogEpsilon() {
  return std::log(static_cast<double>(std::numeric_limits<Real>::epsilon()));
}

}  // namespace

template <typename Real>
Real MatrixBase<Real>::LogSumExp(Real prune) const {
  CUCTX_CHECK(num_rows_ > 0 && num_cols_ > 0)
      << "MatrixBase::LogSumExp: empty matrix " << ShapeOf(*this);
  const Real max = Max();
  if (std::isinf(max)) return max;
  double cutoff = static_cast<double>(max) + LogEpsilon<Real>();
  if (prune > 0 && static_cast<double>(max) - prune > cutoff)
    cutoff = static_cast<double>(max) - prune;
  double sum = 0.0;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c)
      if (row[c] >= cutoff) sum += std::exp(static_cast<double>(row[c]) - max);
  }
  return static_cast<Real>(max + std::log(sum));
}

template <typename Real>
Real MatrixBase<Real>::ApplySoftMax() {
  CUCTX_CHECK(num_rows_ > 0 && num_cols_ > 0)
      << "MatrixBase::ApplySoftMax: empty matrix " << ShapeOf(*this);
  const Real max = Max();
  double sum = 0.0;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) {
      row[c] = static_cast<Real>(std::exp(static_cast<double>(row[c]) - max));
      sum += row[c];
    }
  }
  Scale(static_cast<Real>(1.0 / sum));
  return static_cast<Real>(max + std::log(sum));
}

template <typename Real>
void MatrixBase<Real>::GroupPnormDeriv(const MatrixBase<Real>& input,
                                       const MatrixBase<Real>& output, Real power) {
  CheckSameShape("GroupPnormDeriv", *this, "*this", input, "input");
  CheckDim("GroupPnormDeriv", "output rows", output.NumRows(), "NumRows()", num_rows_);
  const MatrixIndexT groups = output.NumCols();
  if (groups == 0 ? num_cols_ != 0 : num_cols_ % groups != 0)
    CUCTX_ERR << "GroupPnormDeriv: " << num_cols_ << " input columns do not split into " << groups
              << " output columns (input " << ShapeOf(input) << ", output " << ShapeOf(output)
              << ")";
  CUCTX_CHECK(power >= 0) << "GroupPnormDeriv: power = " << power << " must be >= 0";
  CheckNoPartialOverlap("GroupPnormDeriv", *this, input, "input");
  CheckNoOverlap("GroupPnormDeriv", *this, output, "output");
  if (num_rows_ == 0 || num_cols_ == 0) return;
  const MatrixIndexT group = num_cols_ / groups;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* x = input.RowData(r);
    const Real* y = output.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) {
      const Real xv = x[c], yv = y[c / group];
      // Kaldi's convention: x == 0 takes the + sign except for power 1, where sign(0) = 0.
      const Real sign = xv >= 0 ? Real(1) : Real(-1);
      if (power == 1)
        out[c] = xv == 0 ? Real(0) : sign;
      else if (yv == 0)
        out[c] = 0;
      else if (std::isinf(power))
        out[c] = std::abs(xv) == yv ? sign : Real(0);
      else
        out[c] = sign * std::pow(std::abs(xv), power - 1) * std::pow(yv, 1 - power);
    }
  }
}

template <typename Real>
void AddOuterProductPlusMinus(Real alpha, const VectorBase<Real>& a, const VectorBase<Real>& b,
                              MatrixBase<Real>* plus, MatrixBase<Real>* minus) {
  CUCTX_CHECK(plus != nullptr && minus != nullptr)
      << "AddOuterProductPlusMinus: null output matrix";
  for (const MatrixBase<Real>* m : {plus, minus})
    if (m->NumRows() != a.Dim() || m->NumCols() != b.Dim())
      CUCTX_ERR << "AddOuterProductPlusMinus: shape mismatch: a has dimension " << a.Dim()
                << " and b " << b.Dim() << " but plus is " << ShapeOf(*plus) << " and minus "
                << ShapeOf(*minus);
  CheckNoOverlap("AddOuterProductPlusMinus", *plus, *minus, "minus");
  for (const MatrixBase<Real>* m : {plus, minus})
    if (internal::Overlaps(a, *m) || internal::Overlaps(b, *m))
      CUCTX_ERR << "AddOuterProductPlusMinus: a or b overlaps an output matrix; use a copy";
  const Real* bd = b.Data();
  for (MatrixIndexT r = 0; r < a.Dim(); ++r) {
    const Real scale = alpha * a(r);
    Real* p = plus->RowData(r);
    Real* m = minus->RowData(r);
    for (MatrixIndexT c = 0; c < b.Dim(); ++c) {
      const Real v = scale * bd[c];
      if (v > 0)
        p[c] += v;
      else
        m[c] -= v;
    }
  }
}

#define CUCTX_INSTANTIATE_MATRIX_EXTRA_(R)                                                     \
  template R MatrixBase<R>::LogSumExp(R) const;                                                \
  template R MatrixBase<R>::ApplySoftMax();                                                    \
  template void MatrixBase<R>::GroupPnormDeriv(const MatrixBase<R>&, const MatrixBase<R>&, R); \
  template void AddOuterProductPlusMinus(R, const VectorBase<R>&, const VectorBase<R>&,        \
                                         MatrixBase<R>*, MatrixBase<R>*);
CUCTX_INSTANTIATE_MATRIX_EXTRA_(float)
CUCTX_INSTANTIATE_MATRIX_EXTRA_(double)
#undef CUCTX_INSTANTIATE_MATRIX_EXTRA_

}  // namespace cuctx
