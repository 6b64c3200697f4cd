// matrix/matrix-nnet.cc: MatrixBase neural-network ops: activations, softmax, group norms (CPU).
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cuctx {

using internal::CheckDim;
using internal::CheckNoOverlap;
using internal::CheckNoPartialOverlap;
using internal::CheckSameShape;
using internal::ShapeOf;

namespace {

// *out = f(a, b) element by element; a and b must have out's shape and may be out itself.
template <typename Real, typename F>
void Combine(const char* op, MatrixBase<Real>* out, const MatrixBase<Real>& a, const char* a_name,
             const MatrixBase<Real>& b, const char* b_name, F f) {
  CheckSameShape(op, *out, "*this", a, a_name);
  CheckSameShape(op, *out, "*this", b, b_name);
  CheckNoPartialOverlap(op, *out, a, a_name);
  CheckNoPartialOverlap(op, *out, b, b_name);
  for (MatrixIndexT r = 0; r < out->NumRows(); ++r) {
    const Real* pa = a.RowData(r);
    const Real* pb = b.RowData(r);
    Real* po = out->RowData(r);
    for (MatrixIndexT c = 0; c < out->NumCols(); ++c) po[c] = f(pa[c], pb[c], c);
  }
}

// The group size G for ops mapping `wide` columns onto `narrow` columns; throws unless exact.
MatrixIndexT GroupSize(const char* op, MatrixIndexT wide, MatrixIndexT narrow) {
  if (narrow == 0 ? wide != 0 : wide % narrow != 0)
    CUCTX_ERR << op << ": " << wide << " input columns do not split into " << narrow
              << " equal groups";
  return narrow == 0 ? 0 : wide / narrow;
}

template <typename Real>
Real SigmoidOf(Real x) {
  // exp of a non-positive argument only, so neither branch overflows.
  if (x >= 0) return 1 / (1 + std::exp(-x));
  const Real e = std::exp(x);
  return e / (1 + e);
}

template <typename Real>
Real Sign(Real x) {
  return x > 0 ? Real(1) : (x < 0 ? Real(-1) : Real(0));
}

// Writes the softmax (log_output false) or log-softmax of n values; in may equal out.
template <typename Real>
void RowSoftMax(const Real* in, MatrixIndexT n, bool log_output, Real* out) {
  if (n == 0) return;
  const Real max = *std::max_element(in, in + n);
  double sum = 0.0;
  for (MatrixIndexT i = 0; i < n; ++i) sum += std::exp(static_cast<double>(in[i] - max));
  if (log_output) {
    const Real shift = max + static_cast<Real>(std::log(sum));
    for (MatrixIndexT i = 0; i < n; ++i) out[i] = in[i] - shift;
  } else {
    const double inv = 1.0 / sum;
    for (MatrixIndexT i = 0; i < n; ++i)
      out[i] = static_cast<Real>(std::exp(static_cast<double>(in[i] - max)) * inv);
  }
}

}  // namespace

template <typename Real>
void MatrixBase<Real>::Sigmoid(const MatrixBase<Real>& src) {
  Combine("Sigmoid", this, src, "src", src, "src",
          [](Real x, Real, MatrixIndexT) { return SigmoidOf(x); });
}

template <typename Real>
void MatrixBase<Real>::Tanh(const MatrixBase<Real>& src) {
  Combine("Tanh", this, src, "src", src, "src",
          [](Real x, Real, MatrixIndexT) { return std::tanh(x); });
}

template <typename Real>
void MatrixBase<Real>::SoftHinge(const MatrixBase<Real>& src) {
  // log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): no overflow for large x, no loss for small.
  Combine("SoftHinge", this, src, "src", src, "src", [](Real x, Real, MatrixIndexT) {
    return std::max(x, Real(0)) + std::log1p(std::exp(-std::abs(x)));
  });
}

template <typename Real>
void MatrixBase<Real>::DiffSigmoid(const MatrixBase<Real>& value, const MatrixBase<Real>& diff) {
  Combine("DiffSigmoid", this, value, "value", diff, "diff",
          [](Real y, Real d, MatrixIndexT) { return d * y * (1 - y); });
}

template <typename Real>
void MatrixBase<Real>::DiffTanh(const MatrixBase<Real>& value, const MatrixBase<Real>& diff) {
  Combine("DiffTanh", this, value, "value", diff, "diff",
          [](Real y, Real d, MatrixIndexT) { return d * (1 - y * y); });
}

template <typename Real>
void MatrixBase<Real>::SoftMaxPerRow(const MatrixBase<Real>& src) {
  CheckSameShape("SoftMaxPerRow", *this, "*this", src, "src");
  CheckNoPartialOverlap("SoftMaxPerRow", *this, src, "src");
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    RowSoftMax(src.RowData(r), num_cols_, false, RowData(r));
}

template <typename Real>
void MatrixBase<Real>::LogSoftMaxPerRow(const MatrixBase<Real>& src) {
  CheckSameShape("LogSoftMaxPerRow", *this, "*this", src, "src");
  CheckNoPartialOverlap("LogSoftMaxPerRow", *this, src, "src");
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    RowSoftMax(src.RowData(r), num_cols_, true, RowData(r));
}

template <typename Real>
void MatrixBase<Real>::ApplySoftMaxPerRow() {
  SoftMaxPerRow(*this);
}

template <typename Real>
void MatrixBase<Real>::ApplyLogSoftMaxPerRow() {
  LogSoftMaxPerRow(*this);
}

template <typename Real>
void MatrixBase<Real>::DiffSoftmaxPerRow(const MatrixBase<Real>& value,
                                         const MatrixBase<Real>& diff) {
  CheckSameShape("DiffSoftmaxPerRow", *this, "*this", value, "value");
  CheckSameShape("DiffSoftmaxPerRow", *this, "*this", diff, "diff");
  CheckNoPartialOverlap("DiffSoftmaxPerRow", *this, value, "value");
  CheckNoPartialOverlap("DiffSoftmaxPerRow", *this, diff, "diff");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* y = value.RowData(r);
    const Real* d = diff.RowData(r);
    double dot = 0.0;
    for (MatrixIndexT c = 0; c < num_cols_; ++c) dot += static_cast<double>(y[c]) * d[c];
    // The dot product is taken before writing, so *this may be diff (or value).
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = y[c] * (d[c] - static_cast<Real>(dot));
  }
}

template <typename Real>
void MatrixBase<Real>::DiffLogSoftmaxPerRow(const MatrixBase<Real>& out_value,
                                            const MatrixBase<Real>& out_deriv) {
  CheckSameShape("DiffLogSoftmaxPerRow", *this, "*this", out_value, "out_value");
  CheckSameShape("DiffLogSoftmaxPerRow", *this, "*this", out_deriv, "out_deriv");
  CheckNoPartialOverlap("DiffLogSoftmaxPerRow", *this, out_value, "out_value");
  CheckNoPartialOverlap("DiffLogSoftmaxPerRow", *this, out_deriv, "out_deriv");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* y = out_value.RowData(r);
    const Real* d = out_deriv.RowData(r);
    double sum = 0.0;
    for (MatrixIndexT c = 0; c < num_cols_; ++c) sum += d[c];
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c)
      out[c] = d[c] - std::exp(y[c]) * static_cast<Real>(sum);
  }
}

template <typename Real>
void MatrixBase<Real>::GroupPnorm(const MatrixBase<Real>& src, Real power) {
  CheckDim("GroupPnorm", "src rows", src.NumRows(), "NumRows()", num_rows_);
  const MatrixIndexT group = GroupSize("GroupPnorm", src.NumCols(), num_cols_);
  CUCTX_CHECK(power >= 0) << "GroupPnorm: power = " << power << " must be >= 0";
  CheckNoOverlap("GroupPnorm", *this, src, "src");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* in = src.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT g = 0; g < num_cols_; ++g)
      out[g] = SubVector<Real>(in + g * group, group).Norm(power);
  }
}

template <typename Real>
void MatrixBase<Real>::DiffGroupPnorm(const MatrixBase<Real>& in_value,
                                      const MatrixBase<Real>& out_value,
                                      const MatrixBase<Real>& out_deriv, Real power) {
  CheckSameShape("DiffGroupPnorm", *this, "*this", in_value, "in_value");
  CheckSameShape("DiffGroupPnorm", out_value, "out_value", out_deriv, "out_deriv");
  CheckDim("DiffGroupPnorm", "out_value rows", out_value.NumRows(), "NumRows()", num_rows_);
  const MatrixIndexT group = GroupSize("DiffGroupPnorm", num_cols_, out_value.NumCols());
  CUCTX_CHECK(power >= 0) << "DiffGroupPnorm: power = " << power << " must be >= 0";
  CheckNoPartialOverlap("DiffGroupPnorm", *this, in_value, "in_value");
  CheckNoOverlap("DiffGroupPnorm", *this, out_value, "out_value");
  CheckNoOverlap("DiffGroupPnorm", *this, out_deriv, "out_deriv");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* x = in_value.RowData(r);
    const Real* y = out_value.RowData(r);
    const Real* dy = out_deriv.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) {
      const Real xv = x[c], yv = y[c / group];
      Real d;
      if (power == 1) {
        d = Sign(xv);
      } else if (std::isinf(power)) {
        // Only the elements attaining the maximum magnitude carry the gradient; none does in an
        // all-zero group (Sign(0) is 0), as in Kaldi, where GroupPnormDeriv agrees.
        d = std::abs(xv) == yv ? Sign(xv) : Real(0);
      } else if (yv == 0) {
        d = 0;
      } else {
        d = Sign(xv) * std::pow(std::abs(xv), power - 1) * std::pow(yv, 1 - power);
      }
      out[c] = d * dy[c / group];
    }
  }
}

template <typename Real>
void MatrixBase<Real>::GroupMax(const MatrixBase<Real>& src) {
  CheckDim("GroupMax", "src rows", src.NumRows(), "NumRows()", num_rows_);
  const MatrixIndexT group = GroupSize("GroupMax", src.NumCols(), num_cols_);
  CheckNoOverlap("GroupMax", *this, src, "src");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* in = src.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT g = 0; g < num_cols_; ++g)
      out[g] = *std::max_element(in + g * group, in + (g + 1) * group);
  }
}

template <typename Real>
void MatrixBase<Real>::GroupMaxDeriv(const MatrixBase<Real>& input,
                                     const MatrixBase<Real>& output) {
  CheckSameShape("GroupMaxDeriv", *this, "*this", input, "input");
  CheckDim("GroupMaxDeriv", "output rows", output.NumRows(), "NumRows()", num_rows_);
  const MatrixIndexT group = GroupSize("GroupMaxDeriv", num_cols_, output.NumCols());
  CheckNoPartialOverlap("GroupMaxDeriv", *this, input, "input");
  CheckNoOverlap("GroupMaxDeriv", *this, output, "output");
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* x = input.RowData(r);
    const Real* y = output.RowData(r);
    Real* out = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = x[c] == y[c / group] ? Real(1) : Real(0);
  }
}

template <typename Real>
void MatrixBase<Real>::FindRowMaxId(std::vector<int32>* id) const {
  id->resize(num_rows_);
  if (num_rows_ > 0) FindRowMaxId(id->data());
}

template <typename Real>
void MatrixBase<Real>::FindRowMaxId(int32* id) const {
  if (num_rows_ == 0) return;
  CUCTX_CHECK(num_cols_ > 0) << "FindRowMaxId: matrix " << ShapeOf(*this) << " has no columns";
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* row = RowData(r);
    id[r] = static_cast<int32>(std::max_element(row, row + num_cols_) - row);
  }
}

template <typename Real>
void MatrixBase<Real>::DiffXent(const std::vector<int32>& tgt, Vector<Real>* log_post_tgt) {
  CheckDim("DiffXent", "tgt", static_cast<MatrixIndexT>(tgt.size()), "NumRows()", num_rows_);
  DiffXent(tgt.data(), log_post_tgt);
}

template <typename Real>
void MatrixBase<Real>::DiffXent(const int32* tgt, Vector<Real>* log_post_tgt) {
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    if (tgt[r] < 0 || tgt[r] >= num_cols_)
      CUCTX_ERR << "DiffXent: tgt[" << r << "] = " << tgt[r] << " is out of range for " << num_cols_
                << " columns";
  log_post_tgt->Resize(num_rows_, kUndefined);
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    Real& p = (*this)(r, tgt[r]);
    (*log_post_tgt)(r) = std::log(p);
    p -= 1;
  }
}

template <typename Real>
void MatrixBase<Real>::CompObjfAndDeriv(const std::vector<MatrixElement<Real>>& elements,
                                        const MatrixBase<Real>& A, Real* tot_objf,
                                        Real* tot_weight) {
  CheckSameShape("CompObjfAndDeriv", *this, "*this", A, "A");
  CheckNoPartialOverlap("CompObjfAndDeriv", *this, A, "A");
  for (size_t i = 0; i < elements.size(); ++i) {
    const MatrixElement<Real>& e = elements[i];
    if (e.row < 0 || e.row >= num_rows_ || e.column < 0 || e.column >= num_cols_)
      CUCTX_ERR << "CompObjfAndDeriv: element " << i << " = (" << e.row << ", " << e.column
                << ") is outside the " << ShapeOf(*this) << " matrix";
  }
  double objf = 0.0, weight = 0.0;
  for (const MatrixElement<Real>& e : elements) {
    const Real x = A(e.row, e.column);
    objf += e.weight * std::log(static_cast<double>(x));
    weight += e.weight;
    (*this)(e.row, e.column) += e.weight / x;
  }
  *tot_objf = static_cast<Real>(objf);
  *tot_weight = static_cast<Real>(weight);
}

template <typename Real>
void MatrixBase<Real>::ParametricRelu(const MatrixBase<Real>& src, const VectorBase<Real>& alpha,
                                      const VectorBase<Real>& beta) {
  CheckDim("ParametricRelu", "alpha", alpha.Dim(), "NumCols()", num_cols_);
  CheckDim("ParametricRelu", "beta", beta.Dim(), "NumCols()", num_cols_);
  const Real* a = alpha.Data();
  const Real* b = beta.Data();
  Combine("ParametricRelu", this, src, "src", src, "src",
          [a, b](Real x, Real, MatrixIndexT c) { return x * (x > 0 ? a[c] : b[c]); });
}

template <typename Real>
void MatrixBase<Real>::DiffParametricRelu(const MatrixBase<Real>& value,
                                          const MatrixBase<Real>& diff,
                                          const VectorBase<Real>& alpha,
                                          const VectorBase<Real>& beta) {
  CheckDim("DiffParametricRelu", "alpha", alpha.Dim(), "NumCols()", num_cols_);
  CheckDim("DiffParametricRelu", "beta", beta.Dim(), "NumCols()", num_cols_);
  const Real* a = alpha.Data();
  const Real* b = beta.Data();
  Combine("DiffParametricRelu", this, value, "value", diff, "diff",
          [a, b](Real x, Real d, MatrixIndexT c) { return d * (x > 0 ? a[c] : b[c]); });
}

// ---- explicit instantiation (class-level instantiation is in matrix.cc)
// --------------------------

#define CUCTX_INSTANTIATE_NNET_(R)                                                               \
  template void MatrixBase<R>::Sigmoid(const MatrixBase<R>&);                                    \
  template void MatrixBase<R>::Tanh(const MatrixBase<R>&);                                       \
  template void MatrixBase<R>::SoftHinge(const MatrixBase<R>&);                                  \
  template void MatrixBase<R>::DiffSigmoid(const MatrixBase<R>&, const MatrixBase<R>&);          \
  template void MatrixBase<R>::DiffTanh(const MatrixBase<R>&, const MatrixBase<R>&);             \
  template void MatrixBase<R>::SoftMaxPerRow(const MatrixBase<R>&);                              \
  template void MatrixBase<R>::LogSoftMaxPerRow(const MatrixBase<R>&);                           \
  template void MatrixBase<R>::ApplySoftMaxPerRow();                                             \
  template void MatrixBase<R>::ApplyLogSoftMaxPerRow();                                          \
  template void MatrixBase<R>::DiffSoftmaxPerRow(const MatrixBase<R>&, const MatrixBase<R>&);    \
  template void MatrixBase<R>::DiffLogSoftmaxPerRow(const MatrixBase<R>&, const MatrixBase<R>&); \
  template void MatrixBase<R>::GroupPnorm(const MatrixBase<R>&, R);                              \
  template void MatrixBase<R>::DiffGroupPnorm(const MatrixBase<R>&, const MatrixBase<R>&,        \
                                              const MatrixBase<R>&, R);                          \
  template void MatrixBase<R>::GroupMax(const MatrixBase<R>&);                                   \
  template void MatrixBase<R>::GroupMaxDeriv(const MatrixBase<R>&, const MatrixBase<R>&);        \
  template void MatrixBase<R>::FindRowMaxId(std::vector<int32>*) const;                          \
  template void MatrixBase<R>::FindRowMaxId(int32*) const;                                       \
  template void MatrixBase<R>::DiffXent(const std::vector<int32>&, Vector<R>*);                  \
  template void MatrixBase<R>::DiffXent(const int32*, Vector<R>*);                               \
  template void MatrixBase<R>::CompObjfAndDeriv(const std::vector<MatrixElement<R>>&,            \
                                                const MatrixBase<R>&, R*, R*);                   \
  template void MatrixBase<R>::ParametricRelu(const MatrixBase<R>&, const VectorBase<R>&,        \
                                              const VectorBase<R>&);                             \
  template void MatrixBase<R>::DiffParametricRelu(const MatrixBase<R>&, const MatrixBase<R>&,    \
                                                  const VectorBase<R>&, const VectorBase<R>&);

CUCTX_INSTANTIATE_NNET_(float)
CUCTX_INSTANTIATE_NNET_(double)

#undef CUCTX_INSTANTIATE_NNET_

}  // namespace cuctx
