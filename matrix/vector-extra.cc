// matrix/vector-extra.cc: VectorBase sampling (RandCategorical), packed and sparse helpers
// (CopyRowFromSp, AddSpVec, AddMatSvec), ApplyLogAndCopy and the packed SubVector view (Kaldi
// parity).
// SPDX-License-Identifier: Apache-2.0
#include "base/random.h"
#include "matrix/cblas-wrappers.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"
#include "matrix/packed-matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cmath>

namespace cuctx {

using internal::ShapeOf;

template <typename Real>
MatrixIndexT VectorBase<Real>::RandCategorical() const {
  CUCTX_CHECK(dim_ > 0) << "RandCategorical: empty vector";
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    if (!(data_[i] >= 0))
      CUCTX_ERR << "RandCategorical: element " << i << " is " << data_[i]
                << "; weights must be >= 0";
    sum += data_[i];
  }
  if (!(sum > 0) || !std::isfinite(sum))
    CUCTX_ERR << "RandCategorical: the weights sum to " << sum << "; need a positive finite sum";
  const double target = RandUniform() * sum;
  double running = 0.0;
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    running += data_[i];
    if (target < running) return i;
  }
  // Rounding can leave target just above the last partial sum: take the last nonzero weight.
  MatrixIndexT last = dim_ - 1;
  while (data_[last] == 0) --last;
  return last;
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::CopyRowFromSp(const SpMatrix<OtherReal>& S, MatrixIndexT row) {
  internal::CheckDim("CopyRowFromSp", "*this", dim_, "the SpMatrix size", S.NumRows());
  internal::CheckIndex("CopyRowFromSp", "row", row, S.NumRows());
  // Stored row `row` holds columns 0..row; the rest of the row is stored column `row` of the
  // later rows.
  const OtherReal* p = S.Data();
  const size_t start = static_cast<size_t>(row) * (row + 1) / 2;
  for (MatrixIndexT c = 0; c <= row; ++c) data_[c] = static_cast<Real>(p[start + c]);
  for (MatrixIndexT r = row + 1; r < dim_; ++r)
    data_[r] = static_cast<Real>(p[static_cast<size_t>(r) * (r + 1) / 2 + row]);
}

template <typename Real>
void VectorBase<Real>::ApplyLogAndCopy(const VectorBase<Real>& v) {
  internal::CheckDim("ApplyLogAndCopy", "v", v.Dim(), "*this", dim_);
  if (v.Data() != data_ && internal::Overlaps(*this, v))
    CUCTX_ERR << "ApplyLogAndCopy: the input overlaps the output without being the same vector";
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = std::log(v.Data()[i]);
}

template <typename Real>
void VectorBase<Real>::AddMatSvec(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType trans,
                                  const VectorBase<Real>& v, Real beta) {
  if (trans != kNoTrans && trans != kTrans)
    CUCTX_ERR << "AddMatSvec: invalid MatrixTransposeType " << static_cast<int>(trans);
  const MatrixIndexT out_dim = internal::OpRows(M, trans), in_dim = internal::OpCols(M, trans);
  if (out_dim != dim_ || in_dim != v.Dim())
    CUCTX_ERR << "AddMatSvec: shape mismatch: op(M) is " << out_dim << "x" << in_dim << " (M "
              << ShapeOf(M) << (trans == kTrans ? ", kTrans" : "") << "), v has dimension "
              << v.Dim() << ", *this has dimension " << dim_;
  if (internal::Overlaps(*this, v) || internal::Overlaps(*this, M))
    CUCTX_ERR << "AddMatSvec: an input overlaps the output vector";
  if (dim_ == 0) return;
  if (beta == 0)
    SetZero();
  else if (beta != 1)
    Scale(beta);
  const Real* x = v.Data();
  for (MatrixIndexT j = 0; j < in_dim; ++j) {
    if (x[j] == 0) continue;
    // kNoTrans adds column j of M (stride apart), kTrans adds row j.
    if (trans == kNoTrans)
      cblas_Xaxpy(dim_, alpha * x[j], M.Data() + j, std::max<MatrixIndexT>(M.Stride(), 1), data_,
                  1);
    else
      cblas_Xaxpy(dim_, alpha * x[j], M.RowData(j), 1, data_, 1);
  }
}

template <typename Real>
void VectorBase<Real>::AddSpVec(Real alpha, const SpMatrix<Real>& M, const VectorBase<Real>& v,
                                Real beta) {
  if (M.NumRows() != dim_ || v.Dim() != dim_)
    CUCTX_ERR << "AddSpVec: shape mismatch: M has size " << M.NumRows() << ", v has dimension "
              << v.Dim() << ", *this has dimension " << dim_;
  if (dim_ == 0) return;
  if (internal::Overlaps(
          *this, v)) {  // spmv may not alias: multiply a copy (Kaldi's tests pass v = *this)
    Vector<Real> v_copy(v);
    cblas_Xspmv(dim_, alpha, M.Data(), v_copy.Data(), 1, beta, data_, 1);
    return;
  }
  cblas_Xspmv(dim_, alpha, M.Data(), v.Data(), 1, beta, data_, 1);
}

template <typename Real>
SubVector<Real>::SubVector(const PackedMatrix<Real>& M) {
  const MatrixIndexT n = M.NumRows();
  this->data_ = const_cast<Real*>(M.Data());
  this->dim_ = static_cast<MatrixIndexT>(static_cast<int64>(n) * (n + 1) / 2);
}

#define CUCTX_INSTANTIATE_VECTOR_EXTRA_(R)                                               \
  template MatrixIndexT VectorBase<R>::RandCategorical() const;                          \
  template void VectorBase<R>::CopyRowFromSp(const SpMatrix<float>&, MatrixIndexT);      \
  template void VectorBase<R>::CopyRowFromSp(const SpMatrix<double>&, MatrixIndexT);     \
  template void VectorBase<R>::ApplyLogAndCopy(const VectorBase<R>&);                    \
  template void VectorBase<R>::AddMatSvec(R, const MatrixBase<R>&, MatrixTransposeType,  \
                                          const VectorBase<R>&, R);                      \
  template void VectorBase<R>::AddSpVec(R, const SpMatrix<R>&, const VectorBase<R>&, R); \
  template SubVector<R>::SubVector(const PackedMatrix<R>&);
CUCTX_INSTANTIATE_VECTOR_EXTRA_(float)
CUCTX_INSTANTIATE_VECTOR_EXTRA_(double)
#undef CUCTX_INSTANTIATE_VECTOR_EXTRA_

}  // namespace cuctx
