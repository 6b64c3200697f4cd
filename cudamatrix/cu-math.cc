// cudamatrix/cu-math.cc: the cu:: helpers: GPU kernels through cu-kernels.h, CPU loops otherwise.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-math.h"

#include "base/error.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"

#include <algorithm>
#include <cmath>

namespace cuctx {
namespace cu {
namespace {

using internal::HostView;
using internal::Overlap;
using internal::SameView;
using internal::ShapeText;

// 2^-66, the floor of the mean square in NormalizePerRow (its square root is exact in float).
constexpr double kSquaredNormFloor = 1.3552527156068805425e-20;

// Throws if the named operands share memory.
template <typename A, typename B>
void CheckDisjoint(const char* op, const A& a, const char* a_name, const B& b, const char* b_name) {
  CUCTX_CHECK(!Overlap(a, b)) << op << ": " << a_name << " overlaps " << b_name;
}

// CPU mode only (see the NOTE in cu-math.h): throws unless every entry of idx is in [0, bound).
void CheckIndices(const char* op, const CuArray<int32>& idx, const char* idx_name,
                  MatrixIndexT bound, const char* what) {
  const int32* p = idx.Data();
  for (MatrixIndexT i = 0; i < idx.Dim(); ++i)
    CUCTX_CHECK(p[i] >= 0 && p[i] < bound) << op << ": " << idx_name << "[" << i << "] = " << p[i]
                                           << " is not one of the " << bound << " " << what;
}

template <typename Real>
Real Nonzero(Real x, Real epsilon) {
  if (x <= -epsilon || x >= epsilon) return x;
  return x >= 0 ? epsilon : -epsilon;
}

}  // namespace

template <typename Real>
void Randomize(const CuMatrixBase<Real>& src, const CuArray<int32>& copy_from_idx,
               CuMatrixBase<Real>* tgt) {
  internal::CuOpScope op_scope("cu::Randomize");
  const char* op = "cu::Randomize";
  CUCTX_CHECK(tgt != nullptr) << op << ": null tgt";
  CUCTX_CHECK(SameDim(src, *tgt)) << op << ": src " << ShapeText(src) << " does not match tgt "
                                  << ShapeText(*tgt);
  CUCTX_CHECK(copy_from_idx.Dim() <= tgt->NumRows())
      << op << ": copy_from_idx has " << copy_from_idx.Dim()
      << " entries, more than the rows of tgt " << ShapeText(*tgt);
  CheckDisjoint(op, src, "src", *tgt, "tgt");
  if (copy_from_idx.Dim() == 0 || tgt->NumCols() == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        const MatrixDim d{copy_from_idx.Dim(), tgt->NumCols(), tgt->Stride()};
        LaunchMathGather(d, src.Data(), src.Dim(), copy_from_idx.Data(), GatherKind::kRandomize,
                         tgt->Data(), s);
      }))
    return;
  CheckIndices(op, copy_from_idx, "copy_from_idx", src.NumRows(), "rows of src");
  const SubMatrix<Real> s = HostView(src);
  SubMatrix<Real> t = HostView(*tgt);
  const int32* idx = copy_from_idx.Data();
  for (MatrixIndexT r = 0; r < copy_from_idx.Dim(); ++r) t.Row(r).CopyFromVec(s.Row(idx[r]));
}

template <typename Real>
void Splice(const CuMatrixBase<Real>& src, const CuArray<int32>& frame_offsets,
            CuMatrixBase<Real>* tgt) {
  internal::CuOpScope op_scope("cu::Splice");
  const char* op = "cu::Splice";
  CUCTX_CHECK(tgt != nullptr) << op << ": null tgt";
  const int64 cols = static_cast<int64>(src.NumCols()) * frame_offsets.Dim();
  CUCTX_CHECK(src.NumRows() == tgt->NumRows() && cols == tgt->NumCols())
      << op << ": tgt " << ShapeText(*tgt) << " is not src " << ShapeText(src) << " with "
      << frame_offsets.Dim() << " frame offsets";
  CheckDisjoint(op, src, "src", *tgt, "tgt");
  if (tgt->NumRows() == 0 || tgt->NumCols() == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchMathGather(tgt->Dim(), src.Data(), src.Dim(), frame_offsets.Data(),
                         GatherKind::kSplice, tgt->Data(), s);
      }))
    return;
  const SubMatrix<Real> s = HostView(src);
  SubMatrix<Real> t = HostView(*tgt);
  const int32* offsets = frame_offsets.Data();
  const MatrixIndexT n = src.NumCols(), last = src.NumRows() - 1;
  for (MatrixIndexT r = 0; r < t.NumRows(); ++r) {
    for (MatrixIndexT k = 0; k < frame_offsets.Dim(); ++k) {
      const int64 wanted = static_cast<int64>(r) + offsets[k];
      const MatrixIndexT from =
          static_cast<MatrixIndexT>(std::min<int64>(std::max<int64>(wanted, 0), last));
      t.Row(r).Range(k * n, n).CopyFromVec(s.Row(from));
    }
  }
}

template <typename Real>
void Copy(const CuMatrixBase<Real>& src, const CuArray<int32>& copy_from_indices,
          CuMatrixBase<Real>* tgt) {
  internal::CuOpScope op_scope("cu::Copy");
  const char* op = "cu::Copy";
  CUCTX_CHECK(tgt != nullptr) << op << ": null tgt";
  CUCTX_CHECK(src.NumRows() == tgt->NumRows() && copy_from_indices.Dim() == tgt->NumCols())
      << op << ": src " << ShapeText(src) << ", tgt " << ShapeText(*tgt) << " and "
      << copy_from_indices.Dim() << " copy_from_indices do not fit (rows must agree, one index per "
      << "column of tgt)";
  CheckDisjoint(op, src, "src", *tgt, "tgt");
  if (tgt->NumRows() == 0 || tgt->NumCols() == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchMathGather(tgt->Dim(), src.Data(), src.Dim(), copy_from_indices.Data(),
                         GatherKind::kCopyCols, tgt->Data(), s);
      }))
    return;
  CheckIndices(op, copy_from_indices, "copy_from_indices", src.NumCols(), "columns of src");
  const SubMatrix<Real> s = HostView(src);
  SubMatrix<Real> t = HostView(*tgt);
  const int32* idx = copy_from_indices.Data();
  for (MatrixIndexT r = 0; r < t.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < t.NumCols(); ++c) t(r, c) = s(r, idx[c]);
}

template <typename Real>
void EnsureNonzero(const CuMatrixBase<Real>& src, Real epsilon, CuMatrixBase<Real>* dest) {
  internal::CuOpScope op_scope("cu::EnsureNonzero");
  const char* op = "cu::EnsureNonzero";
  CUCTX_CHECK(dest != nullptr) << op << ": null dest";
  CUCTX_CHECK(SameDim(src, *dest))
      << op << ": src " << ShapeText(src) << " does not match dest " << ShapeText(*dest);
  CUCTX_CHECK(epsilon > 0) << op << ": epsilon = " << epsilon << " must be > 0";
  if (!SameView(src, *dest)) CheckDisjoint(op, src, "src", *dest, "dest");
  if (dest->NumRows() == 0 || dest->NumCols() == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchEnsureNonzero(dest->Dim(), src.Data(), src.Stride(), epsilon, dest->Data(), s);
      }))
    return;
  const SubMatrix<Real> s = HostView(src);
  SubMatrix<Real> d = HostView(*dest);
  for (MatrixIndexT r = 0; r < d.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < d.NumCols(); ++c) d(r, c) = Nonzero(s(r, c), epsilon);
}

template <typename Real>
void EnsureNonzero(const CuVectorBase<Real>& src, Real epsilon, CuVectorBase<Real>* dest) {
  internal::CuOpScope op_scope("cu::EnsureNonzero");
  const char* op = "cu::EnsureNonzero";
  CUCTX_CHECK(dest != nullptr) << op << ": null dest";
  CUCTX_CHECK(src.Dim() == dest->Dim())
      << op << ": src dimension " << src.Dim() << " does not match dest " << dest->Dim();
  CUCTX_CHECK(epsilon > 0) << op << ": epsilon = " << epsilon << " must be > 0";
  if (src.Data() != dest->Data()) CheckDisjoint(op, src, "src", *dest, "dest");
  if (dest->Dim() == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchEnsureNonzero(internal::VecDim(dest->Dim()), src.Data(), src.Dim(), epsilon,
                            dest->Data(), s);
      }))
    return;
  const SubVector<Real> s = HostView(src);
  SubVector<Real> d = HostView(*dest);
  for (MatrixIndexT i = 0; i < d.Dim(); ++i) d(i) = Nonzero(s(i), epsilon);
}

template <typename Real>
void NormalizePerRow(const CuMatrixBase<Real>& in, Real target_rms, bool add_log_stddev,
                     CuMatrixBase<Real>* out) {
  internal::CuOpScope op_scope("cu::NormalizePerRow");
  const char* op = "cu::NormalizePerRow";
  CUCTX_CHECK(out != nullptr) << op << ": null out";
  const MatrixIndexT dim = in.NumCols();
  CUCTX_CHECK(out->NumRows() == in.NumRows() && out->NumCols() == dim + (add_log_stddev ? 1 : 0))
      << op << ": out " << ShapeText(*out) << " does not fit in " << ShapeText(in)
      << (add_log_stddev ? " plus the log-stddev column" : "");
  CUCTX_CHECK(target_rms > 0) << op << ": target_rms = " << target_rms << " must be > 0";
  const CuSubMatrix<Real> out_main = out->ColRange(0, dim);
  if (!SameView(in, out_main)) CheckDisjoint(op, in, "in", *out, "out");
  if (out->NumRows() == 0 || out->NumCols() == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchNormalizePerRow(in.Dim(), in.Data(), target_rms, add_log_stddev, out->Data(),
                              out->Stride(), s);
      }))
    return;
  const SubMatrix<Real> x = HostView(in);
  SubMatrix<Real> y = HostView(*out);
  const double d_scaled = static_cast<double>(dim) * target_rms * target_rms;
  for (MatrixIndexT r = 0; r < x.NumRows(); ++r) {
    double ss = 0;
    for (MatrixIndexT c = 0; c < dim; ++c) ss += static_cast<double>(x(r, c)) * x(r, c);
    const double p = dim > 0 ? ss / d_scaled : 0.0;
    const Real f = static_cast<Real>(1.0 / std::sqrt(std::max(p, kSquaredNormFloor)));
    for (MatrixIndexT c = 0; c < dim; ++c) y(r, c) = x(r, c) * f;
    if (add_log_stddev) y(r, dim) = std::log(target_rms) - std::log(f);
  }
}

template <typename Real>
void DiffNormalizePerRow(const CuMatrixBase<Real>& in_value, const CuMatrixBase<Real>& out_deriv,
                         Real target_rms, bool add_log_stddev, CuMatrixBase<Real>* in_deriv) {
  internal::CuOpScope op_scope("cu::DiffNormalizePerRow");
  const char* op = "cu::DiffNormalizePerRow";
  CUCTX_CHECK(in_deriv != nullptr) << op << ": null in_deriv";
  const MatrixIndexT dim = in_value.NumCols();
  CUCTX_CHECK(SameDim(in_value, *in_deriv)) << op << ": in_deriv " << ShapeText(*in_deriv)
                                            << " does not match in_value " << ShapeText(in_value);
  CUCTX_CHECK(out_deriv.NumRows() == in_value.NumRows() &&
              out_deriv.NumCols() == dim + (add_log_stddev ? 1 : 0))
      << op << ": out_deriv " << ShapeText(out_deriv) << " does not fit in_value "
      << ShapeText(in_value) << (add_log_stddev ? " plus the log-stddev column" : "");
  CUCTX_CHECK(target_rms > 0) << op << ": target_rms = " << target_rms << " must be > 0";
  const CuSubMatrix<Real> out_deriv_main = out_deriv.ColRange(0, dim);
  const bool on_value = SameView(in_value, *in_deriv);
  const bool on_deriv = SameView(out_deriv_main, *in_deriv);
  if (!on_value) CheckDisjoint(op, in_value, "in_value", *in_deriv, "in_deriv");
  if (!on_deriv) CheckDisjoint(op, out_deriv, "out_deriv", *in_deriv, "in_deriv");
  if (in_deriv->NumRows() == 0 || dim == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchDiffNormalizePerRow(in_value.Dim(), in_value.Data(), out_deriv.Data(),
                                  out_deriv.Stride(), target_rms, add_log_stddev, in_deriv->Data(),
                                  in_deriv->Stride(), s);
      }))
    return;
  const SubMatrix<Real> x = HostView(in_value), dy = HostView(out_deriv);
  SubMatrix<Real> dx = HostView(*in_deriv);
  const double d_scaled = static_cast<double>(dim) * target_rms * target_rms;
  for (MatrixIndexT r = 0; r < x.NumRows(); ++r) {
    double ss = 0, dot = 0;
    for (MatrixIndexT c = 0; c < dim; ++c) {
      ss += static_cast<double>(x(r, c)) * x(r, c);
      dot += static_cast<double>(dy(r, c)) * x(r, c);
    }
    const double p = ss / d_scaled;
    const double f = 1.0 / std::sqrt(std::max(p, kSquaredNormFloor));
    const double coef = p > kSquaredNormFloor ? -f * f * f / d_scaled : 0.0;
    const double s = add_log_stddev ? dy(r, dim) / std::max(ss, dim * kSquaredNormFloor) : 0.0;
    const double xs = coef * dot + s;
    // The row's sums are complete, so writing dx (which may be x or dy) is safe.
    for (MatrixIndexT c = 0; c < dim; ++c)
      dx(r, c) = static_cast<Real>(f * dy(r, c) + xs * x(r, c));
  }
}

#define CUCTX_INSTANTIATE_CU_MATH_(R)                                                        \
  template void Randomize(const CuMatrixBase<R>&, const CuArray<int32>&, CuMatrixBase<R>*);  \
  template void Splice(const CuMatrixBase<R>&, const CuArray<int32>&, CuMatrixBase<R>*);     \
  template void Copy(const CuMatrixBase<R>&, const CuArray<int32>&, CuMatrixBase<R>*);       \
  template void EnsureNonzero(const CuMatrixBase<R>&, R, CuMatrixBase<R>*);                  \
  template void EnsureNonzero(const CuVectorBase<R>&, R, CuVectorBase<R>*);                  \
  template void NormalizePerRow(const CuMatrixBase<R>&, R, bool, CuMatrixBase<R>*);          \
  template void DiffNormalizePerRow(const CuMatrixBase<R>&, const CuMatrixBase<R>&, R, bool, \
                                    CuMatrixBase<R>*);

CUCTX_INSTANTIATE_CU_MATH_(float)
CUCTX_INSTANTIATE_CU_MATH_(double)

#undef CUCTX_INSTANTIATE_CU_MATH_

}  // namespace cu
}  // namespace cuctx
