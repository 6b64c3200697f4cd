// matrix/vector.cc: VectorBase, Vector and SubVector (CPU), and the free vector functions.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/vector.h"

#include "base/random.h"
#include "matrix/cblas-wrappers.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace cuctx {

using internal::CheckDim;
using internal::CheckIndex;
using internal::ShapeOf;

namespace {

// Throws if two vectors partially overlap (exact aliasing is allowed for element-wise ops).
template <typename Real>
void CheckElementwiseAlias(const char* op, const VectorBase<Real>& out,
                           const VectorBase<Real>& in) {
  if (out.Data() != in.Data() && internal::Overlaps(out, in))
    CUCTX_ERR << op << ": the input overlaps the output without being the same vector";
}
// Mixed precision never aliases.
template <typename Real, typename OtherReal>
void CheckElementwiseAlias(const char*, const VectorBase<Real>&, const VectorBase<OtherReal>&) {}

}  // namespace

// ---- VectorBase: views and copies
// -----------------------------------------------------------------

template <typename Real>
SubVector<Real> VectorBase<Real>::Range(MatrixIndexT origin, MatrixIndexT length) {
  return SubVector<Real>(*this, origin, length);
}

template <typename Real>
const SubVector<Real> VectorBase<Real>::Range(MatrixIndexT origin, MatrixIndexT length) const {
  return SubVector<Real>(*this, origin, length);
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::CopyFromVec(const VectorBase<OtherReal>& v) {
  CheckDim("CopyFromVec", "source", v.Dim(), "*this", dim_);
  if (static_cast<const void*>(v.Data()) == static_cast<const void*>(data_)) return;
  CheckElementwiseAlias("CopyFromVec", *this, v);
  const OtherReal* src = v.Data();
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = static_cast<Real>(src[i]);
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::CopyToVec(VectorBase<OtherReal>* v) const {
  v->CopyFromVec(*this);
}

template <typename Real>
void VectorBase<Real>::CopyFromPtr(const Real* data, MatrixIndexT size) {
  CheckDim("CopyFromPtr", "size", size, "Dim()", dim_);
  if (dim_ == 0 || data == data_) return;
  CUCTX_CHECK(data != nullptr) << "CopyFromPtr: null source for " << dim_ << " elements";
  std::memmove(data_, data, sizeof(Real) * dim_);
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::CopyRowsFromMat(const MatrixBase<OtherReal>& M) {
  CheckDim("CopyRowsFromMat", "*this", dim_, "rows * cols of the matrix",
           M.NumRows() * M.NumCols());
  Real* out = data_;
  for (MatrixIndexT r = 0; r < M.NumRows(); ++r) {
    const OtherReal* row = M.RowData(r);
    for (MatrixIndexT c = 0; c < M.NumCols(); ++c) *out++ = static_cast<Real>(row[c]);
  }
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::CopyColsFromMat(const MatrixBase<OtherReal>& M) {
  CheckDim("CopyColsFromMat", "*this", dim_, "rows * cols of the matrix",
           M.NumRows() * M.NumCols());
  const MatrixIndexT rows = M.NumRows();
  for (MatrixIndexT r = 0; r < rows; ++r) {
    const OtherReal* row = M.RowData(r);
    for (MatrixIndexT c = 0; c < M.NumCols(); ++c)
      data_[static_cast<size_t>(c) * rows + r] = static_cast<Real>(row[c]);
  }
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::CopyRowFromMat(const MatrixBase<OtherReal>& M, MatrixIndexT row) {
  CheckIndex("CopyRowFromMat", "row", row, M.NumRows());
  CheckDim("CopyRowFromMat", "*this", dim_, "matrix columns", M.NumCols());
  const OtherReal* src = M.RowData(row);
  for (MatrixIndexT c = 0; c < dim_; ++c) data_[c] = static_cast<Real>(src[c]);
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::CopyColFromMat(const MatrixBase<OtherReal>& M, MatrixIndexT col) {
  CheckIndex("CopyColFromMat", "column", col, M.NumCols());
  CheckDim("CopyColFromMat", "*this", dim_, "matrix rows", M.NumRows());
  for (MatrixIndexT r = 0; r < dim_; ++r) data_[r] = static_cast<Real>(M.RowData(r)[col]);
}

template <typename Real>
void VectorBase<Real>::CopyDiagFromMat(const MatrixBase<Real>& M) {
  if (dim_ != std::min(M.NumRows(), M.NumCols()))
    CUCTX_ERR << "CopyDiagFromMat: *this has dimension " << dim_ << " but the diagonal of "
              << ShapeOf(M) << " has " << std::min(M.NumRows(), M.NumCols());
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = M.RowData(i)[i];
}

// ---- fill and scalar ops
// --------------------------------------------------------------------------

template <typename Real>
void VectorBase<Real>::SetZero() {
  if (dim_ > 0) std::memset(data_, 0, sizeof(Real) * dim_);
}

template <typename Real>
void VectorBase<Real>::Set(Real f) {
  std::fill(data_, data_ + dim_, f);
}

template <typename Real>
void VectorBase<Real>::SetRandn() {
  RandomState state;
  MatrixIndexT i = 0;
  for (; i + 1 < dim_; i += 2) {
    float a, b;
    RandGauss2(&a, &b, &state);
    data_[i] = a;
    data_[i + 1] = b;
  }
  if (i < dim_) data_[i] = RandGauss(&state);
}

template <typename Real>
void VectorBase<Real>::SetRandUniform() {
  RandomState state;
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = RandUniform(&state);
}

template <typename Real>
void VectorBase<Real>::Add(Real c) {
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] += c;
}

template <typename Real>
void VectorBase<Real>::Scale(Real alpha) {
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] *= alpha;
}

template <typename Real>
void VectorBase<Real>::ReplaceValue(Real orig, Real changed) {
  for (MatrixIndexT i = 0; i < dim_; ++i)
    if (data_[i] == orig) data_[i] = changed;
}

// ---- element-wise
// ---------------------------------------------------------------------------------

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::AddVec(Real alpha, const VectorBase<OtherReal>& v) {
  CheckDim("AddVec", "v", v.Dim(), "*this", dim_);
  CheckElementwiseAlias("AddVec", *this, v);
  const OtherReal* src = v.Data();
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] += alpha * static_cast<Real>(src[i]);
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::AddVec2(Real alpha, const VectorBase<OtherReal>& v) {
  CheckDim("AddVec2", "v", v.Dim(), "*this", dim_);
  CheckElementwiseAlias("AddVec2", *this, v);
  const OtherReal* src = v.Data();
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    const Real x = static_cast<Real>(src[i]);
    data_[i] += alpha * x * x;
  }
}

template <typename Real>
void VectorBase<Real>::AddVecVec(Real alpha, const VectorBase<Real>& v, const VectorBase<Real>& r,
                                 Real beta) {
  CheckDim("AddVecVec", "v", v.Dim(), "*this", dim_);
  CheckDim("AddVecVec", "r", r.Dim(), "*this", dim_);
  CheckElementwiseAlias("AddVecVec", *this, v);
  CheckElementwiseAlias("AddVecVec", *this, r);
  for (MatrixIndexT i = 0; i < dim_; ++i)
    data_[i] = beta * data_[i] + alpha * v.Data()[i] * r.Data()[i];
}

template <typename Real>
void VectorBase<Real>::AddVecDivVec(Real alpha, const VectorBase<Real>& v,
                                    const VectorBase<Real>& r, Real beta) {
  CheckDim("AddVecDivVec", "v", v.Dim(), "*this", dim_);
  CheckDim("AddVecDivVec", "r", r.Dim(), "*this", dim_);
  CheckElementwiseAlias("AddVecDivVec", *this, v);
  CheckElementwiseAlias("AddVecDivVec", *this, r);
  for (MatrixIndexT i = 0; i < dim_; ++i)
    data_[i] = beta * data_[i] + alpha * v.Data()[i] / r.Data()[i];
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::MulElements(const VectorBase<OtherReal>& v) {
  CheckDim("MulElements", "v", v.Dim(), "*this", dim_);
  CheckElementwiseAlias("MulElements", *this, v);
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] *= static_cast<Real>(v.Data()[i]);
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::DivElements(const VectorBase<OtherReal>& v) {
  CheckDim("DivElements", "v", v.Dim(), "*this", dim_);
  CheckElementwiseAlias("DivElements", *this, v);
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] /= static_cast<Real>(v.Data()[i]);
}

template <typename Real>
void VectorBase<Real>::InvertElements() {
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = static_cast<Real>(1) / data_[i];
}

template <typename Real>
void VectorBase<Real>::ApplyFloor(Real floor_val, MatrixIndexT* floored_count) {
  MatrixIndexT n = 0;
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    if (data_[i] < floor_val) {
      data_[i] = floor_val;
      ++n;
    }
  }
  if (floored_count != nullptr) *floored_count = n;
}

template <typename Real>
MatrixIndexT VectorBase<Real>::ApplyFloor(const VectorBase<Real>& floor_vec) {
  CheckDim("ApplyFloor", "floor_vec", floor_vec.Dim(), "*this", dim_);
  MatrixIndexT n = 0;
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    if (data_[i] < floor_vec.Data()[i]) {
      data_[i] = floor_vec.Data()[i];
      ++n;
    }
  }
  return n;
}

template <typename Real>
void VectorBase<Real>::ApplyCeiling(Real ceil_val, MatrixIndexT* ceiled_count) {
  MatrixIndexT n = 0;
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    if (data_[i] > ceil_val) {
      data_[i] = ceil_val;
      ++n;
    }
  }
  if (ceiled_count != nullptr) *ceiled_count = n;
}

template <typename Real>
void VectorBase<Real>::ApplyPow(Real power) {
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = std::pow(data_[i], power);
}

template <typename Real>
void VectorBase<Real>::ApplyPowAbs(Real power, bool include_sign) {
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    const Real x = data_[i];
    if (x == 0) {
      // 0 also for a negative power (pow would give inf), as the matrix version does.
      data_[i] = power == 0 ? Real(1) : Real(0);
      continue;
    }
    const Real y = std::pow(std::abs(x), power);
    data_[i] = include_sign && x < 0 ? -y : y;
  }
}

template <typename Real>
void VectorBase<Real>::ApplyExp() {
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = std::exp(data_[i]);
}

template <typename Real>
void VectorBase<Real>::ApplyLog() {
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = std::log(data_[i]);
}

template <typename Real>
void VectorBase<Real>::ApplyAbs() {
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = std::abs(data_[i]);
}

template <typename Real>
Real VectorBase<Real>::ApplySoftMax() {
  CUCTX_CHECK(dim_ > 0) << "ApplySoftMax: empty vector";
  const Real max = Max();
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    data_[i] = std::exp(data_[i] - max);
    sum += data_[i];
  }
  Scale(static_cast<Real>(1.0 / sum));
  return max + static_cast<Real>(std::log(sum));
}

template <typename Real>
Real VectorBase<Real>::ApplyLogSoftMax() {
  CUCTX_CHECK(dim_ > 0) << "ApplyLogSoftMax: empty vector";
  const Real max = Max();
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < dim_; ++i) sum += std::exp(static_cast<double>(data_[i] - max));
  const Real log_sum = static_cast<Real>(std::log(sum));
  Add(-(max + log_sum));
  return max + log_sum;
}

template <typename Real>
void VectorBase<Real>::Sigmoid(const VectorBase<Real>& src) {
  CheckDim("Sigmoid", "src", src.Dim(), "*this", dim_);
  CheckElementwiseAlias("Sigmoid", *this, src);
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    // Use exp of a non-positive argument only, so neither branch overflows.
    const Real x = src.Data()[i];
    if (x >= 0) {
      data_[i] = 1 / (1 + std::exp(-x));
    } else {
      const Real e = std::exp(x);
      data_[i] = e / (1 + e);
    }
  }
}

template <typename Real>
void VectorBase<Real>::Tanh(const VectorBase<Real>& src) {
  CheckDim("Tanh", "src", src.Dim(), "*this", dim_);
  CheckElementwiseAlias("Tanh", *this, src);
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = std::tanh(src.Data()[i]);
}

// ---- with matrices
// --------------------------------------------------------------------------------

template <typename Real>
void VectorBase<Real>::AddMatVec(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType trans,
                                 const VectorBase<Real>& v, Real beta) {
  const MatrixIndexT out_dim = internal::OpRows(M, trans), in_dim = internal::OpCols(M, trans);
  if (out_dim != dim_ || in_dim != v.Dim())
    CUCTX_ERR << "AddMatVec: shape mismatch: op(M) is " << out_dim << "x" << in_dim << " (M "
              << ShapeOf(M) << (trans == kTrans ? ", kTrans" : "") << "), v has dimension "
              << v.Dim() << ", *this has dimension " << dim_;
  if (internal::Overlaps(*this, v) || internal::Overlaps(*this, M))
    CUCTX_ERR << "AddMatVec: an input overlaps the output vector";
  if (dim_ == 0) return;
  if (in_dim == 0 || M.NumRows() == 0) {
    Scale(beta);
    return;
  }
  const MatrixIndexT lda = std::max(std::max(M.Stride(), M.NumCols()), 1);
  cblas_Xgemv(trans, M.NumRows(), M.NumCols(), alpha, M.Data(), lda, v.Data(), 1, beta, data_, 1);
}

template <typename Real>
void VectorBase<Real>::AddRowSumMat(Real alpha, const MatrixBase<Real>& M, Real beta) {
  CheckDim("AddRowSumMat", "*this", dim_, "matrix columns", M.NumCols());
  if (internal::Overlaps(*this, M)) CUCTX_ERR << "AddRowSumMat: the matrix overlaps *this";
  Vector<double> sum(dim_);
  for (MatrixIndexT r = 0; r < M.NumRows(); ++r) {
    const Real* row = M.RowData(r);
    for (MatrixIndexT c = 0; c < dim_; ++c) sum.Data()[c] += row[c];
  }
  for (MatrixIndexT c = 0; c < dim_; ++c)
    data_[c] = beta * data_[c] + alpha * static_cast<Real>(sum.Data()[c]);
}

template <typename Real>
void VectorBase<Real>::AddColSumMat(Real alpha, const MatrixBase<Real>& M, Real beta) {
  CheckDim("AddColSumMat", "*this", dim_, "matrix rows", M.NumRows());
  if (internal::Overlaps(*this, M)) CUCTX_ERR << "AddColSumMat: the matrix overlaps *this";
  for (MatrixIndexT r = 0; r < dim_; ++r) {
    const Real* row = M.RowData(r);
    double sum = 0.0;
    for (MatrixIndexT c = 0; c < M.NumCols(); ++c) sum += row[c];
    data_[r] = beta * data_[r] + alpha * static_cast<Real>(sum);
  }
}

template <typename Real>
void VectorBase<Real>::AddDiagMat2(Real alpha, const MatrixBase<Real>& M, MatrixTransposeType trans,
                                   Real beta) {
  CheckDim("AddDiagMat2", "*this", dim_, trans == kNoTrans ? "matrix rows" : "matrix columns",
           internal::OpRows(M, trans));
  if (internal::Overlaps(*this, M)) CUCTX_ERR << "AddDiagMat2: the matrix overlaps *this";
  if (trans == kNoTrans) {
    for (MatrixIndexT r = 0; r < dim_; ++r) {
      const Real* row = M.RowData(r);
      double sum = 0.0;
      for (MatrixIndexT c = 0; c < M.NumCols(); ++c) sum += static_cast<double>(row[c]) * row[c];
      data_[r] = beta * data_[r] + alpha * static_cast<Real>(sum);
    }
  } else {
    Vector<double> sum(dim_);
    for (MatrixIndexT r = 0; r < M.NumRows(); ++r) {
      const Real* row = M.RowData(r);
      for (MatrixIndexT c = 0; c < dim_; ++c) sum.Data()[c] += static_cast<double>(row[c]) * row[c];
    }
    for (MatrixIndexT c = 0; c < dim_; ++c)
      data_[c] = beta * data_[c] + alpha * static_cast<Real>(sum.Data()[c]);
  }
}

template <typename Real>
void VectorBase<Real>::AddDiagMatMat(Real alpha, const MatrixBase<Real>& M,
                                     MatrixTransposeType transM, const MatrixBase<Real>& N,
                                     MatrixTransposeType transN, Real beta) {
  const MatrixIndexT m_rows = internal::OpRows(M, transM), m_cols = internal::OpCols(M, transM);
  const MatrixIndexT n_rows = internal::OpRows(N, transN), n_cols = internal::OpCols(N, transN);
  if (m_rows != dim_ || n_cols != dim_ || m_cols != n_rows)
    CUCTX_ERR << "AddDiagMatMat: shape mismatch: op(M) is " << m_rows << "x" << m_cols
              << ", op(N) is " << n_rows << "x" << n_cols << ", *this has dimension " << dim_;
  if (internal::Overlaps(*this, M) || internal::Overlaps(*this, N))
    CUCTX_ERR << "AddDiagMatMat: an input overlaps *this";
  // Element (i, k) of op(M) and (k, i) of op(N), reached through strides to avoid copies.
  const MatrixIndexT m_step_k = transM == kNoTrans ? 1 : M.Stride();
  const MatrixIndexT m_step_i = transM == kNoTrans ? M.Stride() : 1;
  const MatrixIndexT n_step_k = transN == kNoTrans ? N.Stride() : 1;
  const MatrixIndexT n_step_i = transN == kNoTrans ? 1 : N.Stride();
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    double sum = 0.0;
    const Real* mp = M.Data() + static_cast<size_t>(i) * m_step_i;
    const Real* np = N.Data() + static_cast<size_t>(i) * n_step_i;
    for (MatrixIndexT k = 0; k < m_cols; ++k)
      sum += static_cast<double>(mp[static_cast<size_t>(k) * m_step_k]) *
             np[static_cast<size_t>(k) * n_step_k];
    data_[i] = beta * data_[i] + alpha * static_cast<Real>(sum);
  }
}

// ---- reductions
// -----------------------------------------------------------------------------------

template <typename Real>
Real VectorBase<Real>::Sum() const {
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < dim_; ++i) sum += data_[i];
  return static_cast<Real>(sum);
}

template <typename Real>
Real VectorBase<Real>::SumLog() const {
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < dim_; ++i) sum += std::log(static_cast<double>(data_[i]));
  return static_cast<Real>(sum);
}

template <typename Real>
Real VectorBase<Real>::Norm(Real p) const {
  CUCTX_CHECK(p >= 0) << "Norm: p = " << p << " must be >= 0";
  if (p == 0) {
    MatrixIndexT n = 0;
    for (MatrixIndexT i = 0; i < dim_; ++i) n += data_[i] != 0;
    return static_cast<Real>(n);
  }
  if (std::isinf(p)) {
    Real m = 0;
    for (MatrixIndexT i = 0; i < dim_; ++i) m = std::max(m, std::abs(data_[i]));
    return m;
  }
  double sum = 0.0;
  if (p == 1) {
    for (MatrixIndexT i = 0; i < dim_; ++i) sum += std::abs(data_[i]);
    return static_cast<Real>(sum);
  }
  if (p == 2) {
    for (MatrixIndexT i = 0; i < dim_; ++i) sum += static_cast<double>(data_[i]) * data_[i];
    return static_cast<Real>(std::sqrt(sum));
  }
  for (MatrixIndexT i = 0; i < dim_; ++i)
    sum += std::pow(std::abs(static_cast<double>(data_[i])), p);
  return static_cast<Real>(std::pow(sum, 1.0 / p));
}

template <typename Real>
Real VectorBase<Real>::Max() const {
  MatrixIndexT index;
  return Max(&index);
}

template <typename Real>
Real VectorBase<Real>::Max(MatrixIndexT* index) const {
  CUCTX_CHECK(dim_ > 0) << "Max: empty vector";
  MatrixIndexT best = 0;
  for (MatrixIndexT i = 1; i < dim_; ++i)
    if (data_[i] > data_[best]) best = i;
  *index = best;
  return data_[best];
}

template <typename Real>
Real VectorBase<Real>::Min() const {
  MatrixIndexT index;
  return Min(&index);
}

template <typename Real>
Real VectorBase<Real>::Min(MatrixIndexT* index) const {
  CUCTX_CHECK(dim_ > 0) << "Min: empty vector";
  MatrixIndexT best = 0;
  for (MatrixIndexT i = 1; i < dim_; ++i)
    if (data_[i] < data_[best]) best = i;
  *index = best;
  return data_[best];
}

template <typename Real>
Real VectorBase<Real>::LogSumExp(Real prune) const {
  CUCTX_CHECK(dim_ > 0) << "LogSumExp: empty vector";
  const Real max = Max();
  if (std::isinf(max)) return max;
  const double cutoff =
      prune > 0 ? static_cast<double>(max) - prune : -std::numeric_limits<double>::infinity();
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < dim_; ++i)
    if (data_[i] >= cutoff) sum += std::exp(static_cast<double>(data_[i]) - max);
  return static_cast<Real>(max + std::log(sum));
}

template <typename Real>
bool VectorBase<Real>::ApproxEqual(const VectorBase<Real>& other, float tol) const {
  CheckDim("ApproxEqual", "other", other.Dim(), "*this", dim_);
  CUCTX_CHECK(tol >= 0) << "ApproxEqual: tol = " << tol << " must be >= 0";
  double diff = 0.0, norm = 0.0;
  for (MatrixIndexT i = 0; i < dim_; ++i) {
    const double d = static_cast<double>(data_[i]) - other.Data()[i];
    diff += d * d;
    norm += static_cast<double>(data_[i]) * data_[i];
  }
  return std::sqrt(diff) <= tol * std::sqrt(norm);
}

template <typename Real>
bool VectorBase<Real>::IsZero(Real cutoff) const {
  for (MatrixIndexT i = 0; i < dim_; ++i)
    if (std::abs(data_[i]) > cutoff) return false;
  return true;
}

// ---- Vector
// ---------------------------------------------------------------------------------------

template <typename Real>
void Vector<Real>::Init(MatrixIndexT dim) {
  CUCTX_CHECK(dim >= 0) << "Vector: negative dimension " << dim;
  if (dim == 0) {
    this->data_ = nullptr;
    this->dim_ = 0;
    return;
  }
  // Round the byte count up so aligned_alloc's size requirement (a multiple of 16) holds.
  const size_t bytes = (static_cast<size_t>(dim) * sizeof(Real) + 15) / 16 * 16;
  void* p = std::aligned_alloc(16, bytes);
  if (p == nullptr) throw std::bad_alloc();
  this->data_ = static_cast<Real*>(p);
  this->dim_ = dim;
}

template <typename Real>
void Vector<Real>::Destroy() {
  std::free(this->data_);
  this->data_ = nullptr;
  this->dim_ = 0;
}

template <typename Real>
Vector<Real>::Vector(MatrixIndexT dim, MatrixResizeType resize_type) {
  Resize(dim, resize_type);
}

template <typename Real>
Vector<Real>::Vector(const Vector<Real>& v) : VectorBase<Real>() {
  Resize(v.Dim(), kUndefined);
  this->CopyFromVec(v);
}

template <typename Real>
Vector<Real>::Vector(Vector<Real>&& v) noexcept : VectorBase<Real>() {
  Swap(&v);
}

template <typename Real>
Vector<Real>& Vector<Real>::operator=(Vector<Real>&& v) noexcept {
  if (this != &v) {
    Destroy();
    Swap(&v);
  }
  return *this;
}

template <typename Real>
Vector<Real>::Vector(const VectorBase<Real>& v) {
  Resize(v.Dim(), kUndefined);
  this->CopyFromVec(v);
}

template <typename Real>
template <typename OtherReal>
Vector<Real>::Vector(const VectorBase<OtherReal>& v) {
  Resize(v.Dim(), kUndefined);
  this->CopyFromVec(v);
}

template <typename Real>
Vector<Real>::~Vector() {
  Destroy();
}

template <typename Real>
Vector<Real>& Vector<Real>::operator=(const Vector<Real>& v) {
  return *this = static_cast<const VectorBase<Real>&>(v);
}

template <typename Real>
Vector<Real>& Vector<Real>::operator=(const VectorBase<Real>& v) {
  if (v.Data() == this->data_ && v.Dim() == this->dim_) return *this;
  if (v.Dim() != this->dim_) {
    // v may view our own storage; copy through a temporary before freeing it.
    Vector<Real> tmp(v);
    Swap(&tmp);
  } else {
    this->CopyFromVec(v);
  }
  return *this;
}

template <typename Real>
void Vector<Real>::Resize(MatrixIndexT dim, MatrixResizeType resize_type) {
  CUCTX_CHECK(dim >= 0) << "Resize: negative dimension " << dim;
  if (resize_type == kCopyData) {
    if (dim == this->dim_) return;
    Vector<Real> tmp(dim, kUndefined);
    const MatrixIndexT keep = std::min(dim, this->dim_);
    if (keep > 0) std::memcpy(tmp.data_, this->data_, sizeof(Real) * keep);
    if (dim > keep) std::memset(tmp.data_ + keep, 0, sizeof(Real) * (dim - keep));
    Swap(&tmp);
    return;
  }
  if (dim != this->dim_) {
    Destroy();
    Init(dim);
  }
  if (resize_type == kSetZero) this->SetZero();
}

template <typename Real>
void Vector<Real>::Swap(Vector<Real>* other) {
  std::swap(this->data_, other->data_);
  std::swap(this->dim_, other->dim_);
}

template <typename Real>
void Vector<Real>::RemoveElement(MatrixIndexT i) {
  CheckIndex("RemoveElement", "index", i, this->dim_);
  std::memmove(this->data_ + i, this->data_ + i + 1, sizeof(Real) * (this->dim_ - i - 1));
  this->dim_--;
}

// ---- SubVector
// ------------------------------------------------------------------------------------

template <typename Real>
SubVector<Real>::SubVector(const VectorBase<Real>& v, MatrixIndexT origin, MatrixIndexT length) {
  if (origin < 0 || length < 0 || static_cast<int64>(origin) + length > v.Dim())
    CUCTX_ERR << "SubVector: range [" << origin << ", " << static_cast<int64>(origin) + length
              << ") is outside a vector of dimension " << v.Dim();
  this->data_ = length == 0 ? nullptr : const_cast<Real*>(v.Data()) + origin;
  this->dim_ = length;
}

template <typename Real>
SubVector<Real>::SubVector(Real* data, MatrixIndexT length) {
  CUCTX_CHECK(length >= 0) << "SubVector: negative length " << length;
  CUCTX_CHECK(data != nullptr || length == 0) << "SubVector: null data for length " << length;
  this->data_ = data;
  this->dim_ = length;
}

template <typename Real>
SubVector<Real>::SubVector(const Real* data, MatrixIndexT length)
    : SubVector(const_cast<Real*>(data), length) {}

template <typename Real>
SubVector<Real>::SubVector(const MatrixBase<Real>& M, MatrixIndexT row) {
  CheckIndex("SubVector", "row", row, M.NumRows());
  this->data_ = const_cast<Real*>(M.RowData(row));
  this->dim_ = M.NumCols();
}

// ---- free functions
// -------------------------------------------------------------------------------

template <typename Real>
Real VecVec(const VectorBase<Real>& a, const VectorBase<Real>& b) {
  CheckDim("VecVec", "b", b.Dim(), "a", a.Dim());
  if (a.Dim() == 0) return 0;
  return cblas_Xdot(a.Dim(), a.Data(), 1, b.Data(), 1);
}

template <typename Real, typename OtherReal>
Real VecVec(const VectorBase<Real>& a, const VectorBase<OtherReal>& b) {
  CheckDim("VecVec", "b", b.Dim(), "a", a.Dim());
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < a.Dim(); ++i) sum += static_cast<double>(a.Data()[i]) * b.Data()[i];
  return static_cast<Real>(sum);
}

template <typename Real>
Real VecMatVec(const VectorBase<Real>& v1, const MatrixBase<Real>& M, const VectorBase<Real>& v2) {
  if (v1.Dim() != M.NumRows() || v2.Dim() != M.NumCols())
    CUCTX_ERR << "VecMatVec: shape mismatch: v1 has dimension " << v1.Dim() << ", M is "
              << ShapeOf(M) << ", v2 has dimension " << v2.Dim();
  Vector<Real> mv(v1.Dim());
  mv.AddMatVec(1.0, M, kNoTrans, v2, 0.0);
  return VecVec(v1, mv);
}

template <typename Real>
bool ApproxEqual(const VectorBase<Real>& a, const VectorBase<Real>& b, float tol) {
  return a.ApproxEqual(b, tol);
}

template <typename Real>
void AssertEqual(const VectorBase<Real>& a, const VectorBase<Real>& b, float tol) {
  if (!a.ApproxEqual(b, tol)) {
    Vector<Real> diff(a);
    diff.AddVec(-1.0, b);
    CUCTX_ERR << "AssertEqual: vectors differ: ||a - b|| = " << diff.Norm(2.0) << " > " << tol
              << " * ||a|| = " << tol * a.Norm(2.0);
  }
}

template <typename Real>
std::ostream& operator<<(std::ostream& os, const VectorBase<Real>& v) {
  v.Write(os, false);
  return os;
}

// ---- explicit instantiation
// -----------------------------------------------------------------------

// Member templates taking another vector or matrix; R == O included.
#define CUCTX_INSTANTIATE_VECTOR_MEMBERS_(R, O)                                    \
  template void VectorBase<R>::CopyFromVec(const VectorBase<O>&);                  \
  template void VectorBase<R>::CopyToVec(VectorBase<O>*) const;                    \
  template void VectorBase<R>::CopyRowsFromMat(const MatrixBase<O>&);              \
  template void VectorBase<R>::CopyColsFromMat(const MatrixBase<O>&);              \
  template void VectorBase<R>::CopyRowFromMat(const MatrixBase<O>&, MatrixIndexT); \
  template void VectorBase<R>::CopyColFromMat(const MatrixBase<O>&, MatrixIndexT); \
  template void VectorBase<R>::AddVec(R, const VectorBase<O>&);                    \
  template void VectorBase<R>::AddVec2(R, const VectorBase<O>&);                   \
  template void VectorBase<R>::MulElements(const VectorBase<O>&);                  \
  template void VectorBase<R>::DivElements(const VectorBase<O>&);

// Templates used only across precisions (R != O); the same-precision overloads are separate.
#define CUCTX_INSTANTIATE_VECTOR_MIXED_(R, O)       \
  template Vector<R>::Vector(const VectorBase<O>&); \
  template R VecVec(const VectorBase<R>&, const VectorBase<O>&);

#define CUCTX_INSTANTIATE_VECTOR_(R)                                                      \
  template class VectorBase<R>;                                                           \
  template class Vector<R>;                                                               \
  template class SubVector<R>;                                                            \
  template R VecVec(const VectorBase<R>&, const VectorBase<R>&);                          \
  template R VecMatVec(const VectorBase<R>&, const MatrixBase<R>&, const VectorBase<R>&); \
  template bool ApproxEqual(const VectorBase<R>&, const VectorBase<R>&, float);           \
  template void AssertEqual(const VectorBase<R>&, const VectorBase<R>&, float);           \
  template std::ostream& operator<<(std::ostream&, const VectorBase<R>&);

CUCTX_INSTANTIATE_VECTOR_(float)
CUCTX_INSTANTIATE_VECTOR_(double)
CUCTX_INSTANTIATE_VECTOR_MEMBERS_(float, float)
CUCTX_INSTANTIATE_VECTOR_MEMBERS_(float, double)
CUCTX_INSTANTIATE_VECTOR_MEMBERS_(double, float)
CUCTX_INSTANTIATE_VECTOR_MEMBERS_(double, double)
CUCTX_INSTANTIATE_VECTOR_MIXED_(float, double)
CUCTX_INSTANTIATE_VECTOR_MIXED_(double, float)

#undef CUCTX_INSTANTIATE_VECTOR_
#undef CUCTX_INSTANTIATE_VECTOR_MIXED_
#undef CUCTX_INSTANTIATE_VECTOR_MEMBERS_

}  // namespace cuctx
