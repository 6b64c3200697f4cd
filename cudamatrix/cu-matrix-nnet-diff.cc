// cudamatrix/cu-matrix-nnet-diff.cc: CuMatrixBase neural-net back-propagation (softmax, group
// p-norm and max, parametric ReLU), cross-entropy gradient and weighted log-likelihood objective.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"

#include <cstddef>
#include <vector>

namespace cuctx {
namespace {

using internal::CheckSameShapeOrAlias;
using internal::HostView;
using internal::Overlap;
using internal::ShapeText;

// Throws if `in` shares any memory with `out` (kernels that read it while writing `out`).
template <typename A, typename B>
void CheckDisjoint(const char* op, const A& out, const B& in, const char* in_name) {
  CUCTX_CHECK(!Overlap(in, out)) << op << ": " << in_name << " overlaps *this";
}

// The group size G of an op mapping `wide` (rows x G*n) onto `narrow` (rows x n); throws unless
// the rows agree and the columns split exactly.
template <typename Real>
MatrixIndexT CheckGroups(const char* op, const CuMatrixBase<Real>& wide, const char* wide_name,
                         const CuMatrixBase<Real>& narrow, const char* narrow_name) {
  const MatrixIndexT w = wide.NumCols(), n = narrow.NumCols();
  CUCTX_CHECK(wide.NumRows() == narrow.NumRows() && (n == 0 ? w == 0 : w % n == 0))
      << op << ": " << wide_name << " " << ShapeText(wide) << " does not split into groups of "
      << narrow_name << " " << ShapeText(narrow);
  return n == 0 ? 0 : w / n;
}

// Throws unless the per-column parameters of a parametric ReLU fit `m` and are disjoint from it.
template <typename Real>
void CheckReluParams(const char* op, const CuMatrixBase<Real>& m, const CuVectorBase<Real>& alpha,
                     const CuVectorBase<Real>& beta) {
  CUCTX_CHECK(alpha.Dim() == m.NumCols() && beta.Dim() == m.NumCols())
      << op << ": alpha (" << alpha.Dim() << ") and beta (" << beta.Dim()
      << ") must have NumCols() = " << m.NumCols() << " elements (*this " << ShapeText(m) << ")";
  CheckDisjoint(op, m, alpha, "alpha");
  CheckDisjoint(op, m, beta, "beta");
}

// CompObjfAndDeriv uploads MatrixElement<Real> as they are and reads them as CuWeightedElement.
template <typename Real>
constexpr bool SameElementLayout() {
  return sizeof(MatrixElement<Real>) == sizeof(CuWeightedElement<Real>) &&
         offsetof(MatrixElement<Real>, row) == offsetof(CuWeightedElement<Real>, row) &&
         offsetof(MatrixElement<Real>, column) == offsetof(CuWeightedElement<Real>, column) &&
         offsetof(MatrixElement<Real>, weight) == offsetof(CuWeightedElement<Real>, weight);
}
static_assert(SameElementLayout<float>() && SameElementLayout<double>(),
              "MatrixElement and CuWeightedElement layouts differ");

}  // namespace

template <typename Real>
void CuMatrixBase<Real>::DiffSoftmaxPerRow(const CuMatrixBase<Real>& value,
                                           const CuMatrixBase<Real>& diff) {
  internal::CuOpScope op_scope("CuMatrix::DiffSoftmaxPerRow");
  CheckSameShapeOrAlias("CuMatrix::DiffSoftmaxPerRow", *this, value, "value");
  CheckSameShapeOrAlias("CuMatrix::DiffSoftmaxPerRow", *this, diff, "diff");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchDiffSoftmaxRows(Dim(), value.Data(), value.Stride(), diff.Data(), diff.Stride(),
                              false, data_, s);
      }))
    return;
  CpuView().DiffSoftmaxPerRow(value.CpuView(), diff.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::DiffLogSoftmaxPerRow(const CuMatrixBase<Real>& out_value,
                                              const CuMatrixBase<Real>& out_deriv) {
  internal::CuOpScope op_scope("CuMatrix::DiffLogSoftmaxPerRow");
  CheckSameShapeOrAlias("CuMatrix::DiffLogSoftmaxPerRow", *this, out_value, "out_value");
  CheckSameShapeOrAlias("CuMatrix::DiffLogSoftmaxPerRow", *this, out_deriv, "out_deriv");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchDiffSoftmaxRows(Dim(), out_value.Data(), out_value.Stride(), out_deriv.Data(),
                              out_deriv.Stride(), true, data_, s);
      }))
    return;
  CpuView().DiffLogSoftmaxPerRow(out_value.CpuView(), out_deriv.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::GroupPnorm(const CuMatrixBase<Real>& src, Real power) {
  internal::CuOpScope op_scope("CuMatrix::GroupPnorm");
  [[maybe_unused]] const MatrixIndexT group =
      CheckGroups("CuMatrix::GroupPnorm", src, "src", *this, "*this");
  CUCTX_CHECK(power >= 0) << "CuMatrix::GroupPnorm: power = " << power << " must be >= 0";
  CheckDisjoint("CuMatrix::GroupPnorm", *this, src, "src");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchGroupReduce(Dim(), src.Data(), src.Stride(), group, false, power, data_, s);
      }))
    return;
  CpuView().GroupPnorm(src.CpuView(), power);
}

template <typename Real>
void CuMatrixBase<Real>::DiffGroupPnorm(const CuMatrixBase<Real>& in_value,
                                        const CuMatrixBase<Real>& out_value,
                                        const CuMatrixBase<Real>& out_deriv, Real power) {
  internal::CuOpScope op_scope("CuMatrix::DiffGroupPnorm");
  const char* op = "CuMatrix::DiffGroupPnorm";
  CheckSameShapeOrAlias(op, *this, in_value, "in_value");
  [[maybe_unused]] const MatrixIndexT group =
      CheckGroups(op, *this, "*this", out_value, "out_value");
  CUCTX_CHECK(SameDim(out_value, out_deriv))
      << op << ": out_deriv " << ShapeText(out_deriv) << " does not match out_value "
      << ShapeText(out_value);
  CUCTX_CHECK(power >= 0) << op << ": power = " << power << " must be >= 0";
  CheckDisjoint(op, *this, out_value, "out_value");
  CheckDisjoint(op, *this, out_deriv, "out_deriv");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchGroupReduceDeriv(Dim(), in_value.Data(), in_value.Stride(), out_value.Data(),
                               out_value.Stride(), out_deriv.Data(), out_deriv.Stride(), group,
                               false, power, data_, s);
      }))
    return;
  CpuView().DiffGroupPnorm(in_value.CpuView(), out_value.CpuView(), out_deriv.CpuView(), power);
}

template <typename Real>
void CuMatrixBase<Real>::GroupMax(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::GroupMax");
  [[maybe_unused]] const MatrixIndexT group =
      CheckGroups("CuMatrix::GroupMax", src, "src", *this, "*this");
  CheckDisjoint("CuMatrix::GroupMax", *this, src, "src");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchGroupReduce(Dim(), src.Data(), src.Stride(), group, true, Real(0), data_, s);
      }))
    return;
  CpuView().GroupMax(src.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::GroupMaxDeriv(const CuMatrixBase<Real>& input,
                                       const CuMatrixBase<Real>& output) {
  internal::CuOpScope op_scope("CuMatrix::GroupMaxDeriv");
  CheckSameShapeOrAlias("CuMatrix::GroupMaxDeriv", *this, input, "input");
  [[maybe_unused]] const MatrixIndexT group =
      CheckGroups("CuMatrix::GroupMaxDeriv", *this, "*this", output, "output");
  CheckDisjoint("CuMatrix::GroupMaxDeriv", *this, output, "output");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchGroupReduceDeriv(Dim(), input.Data(), input.Stride(), output.Data(), output.Stride(),
                               nullptr, 0, group, true, Real(0), data_, s);
      }))
    return;
  CpuView().GroupMaxDeriv(input.CpuView(), output.CpuView());
}

template <typename Real>
void CuMatrixBase<Real>::DiffXent(const CuArrayBase<int32>& tgt, CuVector<Real>* log_post_tgt) {
  internal::CuOpScope op_scope("CuMatrix::DiffXent");
  CUCTX_CHECK(log_post_tgt != nullptr) << "CuMatrix::DiffXent: null log_post_tgt";
  CUCTX_CHECK(tgt.Dim() == num_rows_)
      << "CuMatrix::DiffXent: tgt has " << tgt.Dim() << " entries but *this is "
      << ShapeText(num_rows_, num_cols_);
  log_post_tgt->Resize(num_rows_, kUndefined);
  if (num_rows_ == 0) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchDiffXent(Dim(), tgt.Data(), data_, log_post_tgt->Data(), s); }))
    return;
  const int32* t = tgt.Data();
  for (MatrixIndexT r = 0; r < num_rows_; ++r)
    CUCTX_CHECK(t[r] >= 0 && t[r] < num_cols_)
        << "CuMatrix::DiffXent: tgt[" << r << "] = " << t[r] << " is out of range for *this "
        << ShapeText(num_rows_, num_cols_);
  Vector<Real> log_post;
  CpuView().DiffXent(t, &log_post);
  HostView(*log_post_tgt).CopyFromVec(log_post);
}

template <typename Real>
void CuMatrixBase<Real>::CompObjfAndDeriv(const std::vector<MatrixElement<Real>>& elements,
                                          const CuMatrix<Real>& A, Real* tot_objf,
                                          Real* tot_weight) {
  internal::CuOpScope op_scope("CuMatrix::CompObjfAndDeriv");
  const char* op = "CuMatrix::CompObjfAndDeriv";
  CUCTX_CHECK(tot_objf != nullptr && tot_weight != nullptr) << op << ": null output";
  CUCTX_CHECK(SameDim(*this, A)) << op << ": A " << ShapeText(A) << " does not match *this "
                                 << ShapeText(*this);
  CheckDisjoint(op, *this, A, "A");
  for (size_t i = 0; i < elements.size(); ++i) {
    const MatrixElement<Real>& e = elements[i];
    CUCTX_CHECK(e.row >= 0 && e.row < num_rows_ && e.column >= 0 && e.column < num_cols_)
        << op << ": element " << i << " = (" << e.row << ", " << e.column << ") is outside *this "
        << ShapeText(*this);
  }
  *tot_objf = 0;
  *tot_weight = 0;
  if (elements.empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        const size_t bytes = elements.size() * sizeof(MatrixElement<Real>);
        internal::ScopedStorage d_elements(bytes);
        internal::ScopedStorage work(CompObjfWorkspaceBytes());
        CopyHostToDevice(d_elements.Data(), elements.data(), bytes);
        LaunchCompObjfAndDeriv(
            Dim(), static_cast<const CuWeightedElement<Real>*>(d_elements.Data()),
            static_cast<int64_t>(elements.size()), A.Data(), A.Stride(), data_, work.Data(), s);
        double totals[2] = {0, 0};
        // Waits for the kernels, so the scratch is idle when it goes back to the allocator.
        CopyDeviceToHost(totals, work.Data(), sizeof(totals));
        *tot_objf = static_cast<Real>(totals[0]);
        *tot_weight = static_cast<Real>(totals[1]);
      }))
    return;
  CpuView().CompObjfAndDeriv(elements, A.CpuView(), tot_objf, tot_weight);
}

template <typename Real>
void CuMatrixBase<Real>::ParametricRelu(const CuMatrixBase<Real>& src,
                                        const CuVectorBase<Real>& alpha,
                                        const CuVectorBase<Real>& beta) {
  internal::CuOpScope op_scope("CuMatrix::ParametricRelu");
  CheckSameShapeOrAlias("CuMatrix::ParametricRelu", *this, src, "src");
  CheckReluParams("CuMatrix::ParametricRelu", *this, alpha, beta);
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchParametricRelu(Dim(), src.Data(), src.Stride(), src.Data(), src.Stride(),
                             alpha.Data(), beta.Data(), false, data_, s);
      }))
    return;
  CpuView().ParametricRelu(src.CpuView(), HostView(alpha), HostView(beta));
}

template <typename Real>
void CuMatrixBase<Real>::DiffParametricRelu(const CuMatrixBase<Real>& value,
                                            const CuMatrixBase<Real>& diff,
                                            const CuVectorBase<Real>& alpha,
                                            const CuVectorBase<Real>& beta) {
  internal::CuOpScope op_scope("CuMatrix::DiffParametricRelu");
  CheckSameShapeOrAlias("CuMatrix::DiffParametricRelu", *this, value, "value");
  CheckSameShapeOrAlias("CuMatrix::DiffParametricRelu", *this, diff, "diff");
  CheckReluParams("CuMatrix::DiffParametricRelu", *this, alpha, beta);
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchParametricRelu(Dim(), value.Data(), value.Stride(), diff.Data(), diff.Stride(),
                             alpha.Data(), beta.Data(), true, data_, s);
      }))
    return;
  CpuView().DiffParametricRelu(value.CpuView(), diff.CpuView(), HostView(alpha), HostView(beta));
}

#define CUCTX_INSTANTIATE_CU_NNET_DIFF_(R)                                                      \
  template void CuMatrixBase<R>::DiffSoftmaxPerRow(const CuMatrixBase<R>&,                      \
                                                   const CuMatrixBase<R>&);                     \
  template void CuMatrixBase<R>::DiffLogSoftmaxPerRow(const CuMatrixBase<R>&,                   \
                                                      const CuMatrixBase<R>&);                  \
  template void CuMatrixBase<R>::GroupPnorm(const CuMatrixBase<R>&, R);                         \
  template void CuMatrixBase<R>::DiffGroupPnorm(const CuMatrixBase<R>&, const CuMatrixBase<R>&, \
                                                const CuMatrixBase<R>&, R);                     \
  template void CuMatrixBase<R>::GroupMax(const CuMatrixBase<R>&);                              \
  template void CuMatrixBase<R>::GroupMaxDeriv(const CuMatrixBase<R>&, const CuMatrixBase<R>&); \
  template void CuMatrixBase<R>::DiffXent(const CuArrayBase<int32>&, CuVector<R>*);             \
  template void CuMatrixBase<R>::CompObjfAndDeriv(const std::vector<MatrixElement<R>>&,         \
                                                  const CuMatrix<R>&, R*, R*);                  \
  template void CuMatrixBase<R>::ParametricRelu(const CuMatrixBase<R>&, const CuVectorBase<R>&, \
                                                const CuVectorBase<R>&);                        \
  template void CuMatrixBase<R>::DiffParametricRelu(                                            \
      const CuMatrixBase<R>&, const CuMatrixBase<R>&, const CuVectorBase<R>&,                   \
      const CuVectorBase<R>&);

CUCTX_INSTANTIATE_CU_NNET_DIFF_(float)
CUCTX_INSTANTIATE_CU_NNET_DIFF_(double)

#undef CUCTX_INSTANTIATE_CU_NNET_DIFF_

}  // namespace cuctx
