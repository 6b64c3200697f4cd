// cudamatrix/cu-matrix-functions.cc: CuMatrixBase element-wise functions, vector broadcasts, block
// sums and whole-matrix reductions (Max, Min, Trace, IsUnit).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-readback.h"
#include "cudamatrix/internal/cu-storage.h"

namespace cuctx {
namespace {

using internal::CheckSameShapeOrAlias;
using internal::HostView;
using internal::Overlap;
using internal::ShapeText;

// Throws unless the vector argument `name` has `want` elements and does not overlap m.
template <typename Real>
void CheckVec(const char* op, const CuMatrixBase<Real>& m, const CuVectorBase<Real>& v,
              const char* name, MatrixIndexT want, const char* want_name) {
  CUCTX_CHECK(v.Dim() == want) << op << ": " << name << " has dimension " << v.Dim() << " but "
                               << want_name << " of *this " << ShapeText(m) << " is " << want;
  CUCTX_CHECK(!Overlap(v, m)) << op << ": " << name << " overlaps *this (" << ShapeText(m) << ")";
}

void CheckLimits(const char* op, double lower, double upper) {
  CUCTX_CHECK(lower <= upper) << op << ": lower limit " << lower << " > upper limit " << upper;
}

// The GPU branches shared by the maps and by the broadcasts (internal::RunOnGpu): queue the kernel
// and return true in GPU mode, return false (the caller runs the CPU fallback) otherwise.
template <typename Real>
bool MapOnDevice(CuMatrixBase<Real>* dst, FunctionMap map, Real a, Real b,
                 const CuMatrixBase<Real>& src) {
  return internal::RunOnGpu([&](CuStream s) {
    LaunchFunctionMap(dst->Dim(), map, a, b, src.Data(), src.Stride(), dst->Data(), s);
  });
}

template <typename Real>
bool BroadcastOnDevice(CuMatrixBase<Real>* dst, VecBroadcast op, Real alpha,
                       const CuVectorBase<Real>& v, Real beta) {
  return internal::RunOnGpu([&](CuStream s) {
    LaunchVecBroadcast(dst->Dim(), op, alpha, v.Data(), beta, dst->Data(), s);
  });
}

}  // namespace

// ---- element-wise maps
// --------------------------------------------------------------------------- Each in-place form is
// its src form with src = *this, so one GPU branch serves both.

template <typename Real>
void CuMatrixBase<Real>::Max(const CuMatrixBase<Real>& A) {
  internal::CuOpScope op_scope("CuMatrix::Max");
  CheckSameShapeOrAlias("CuMatrix::Max", *this, A, "A");
  if (Empty()) return;
  if (MapOnDevice(this, FunctionMap::kMax, Real(0), Real(0), A)) return;
  CpuView().Max(HostView(A));
}

template <typename Real>
void CuMatrixBase<Real>::Min(const CuMatrixBase<Real>& A) {
  internal::CuOpScope op_scope("CuMatrix::Min");
  CheckSameShapeOrAlias("CuMatrix::Min", *this, A, "A");
  if (Empty()) return;
  if (MapOnDevice(this, FunctionMap::kMin, Real(0), Real(0), A)) return;
  CpuView().Min(HostView(A));
}

template <typename Real>
void CuMatrixBase<Real>::InvertElements() {
  internal::CuOpScope op_scope("CuMatrix::InvertElements");
  if (Empty()) return;
  if (MapOnDevice(this, FunctionMap::kInvert, Real(0), Real(0), *this)) return;
  CpuView().InvertElements();
}

template <typename Real>
void CuMatrixBase<Real>::Pow(const CuMatrixBase<Real>& src, Real power) {
  internal::CuOpScope op_scope("CuMatrix::Pow");
  CheckSameShapeOrAlias("CuMatrix::Pow", *this, src, "src");
  if (Empty()) return;
  if (MapOnDevice(this, FunctionMap::kPow, power, Real(0), src)) return;
  CpuView().Pow(HostView(src), power);
}

template <typename Real>
void CuMatrixBase<Real>::PowAbs(const CuMatrixBase<Real>& src, Real power, bool include_sign) {
  internal::CuOpScope op_scope("CuMatrix::PowAbs");
  CheckSameShapeOrAlias("CuMatrix::PowAbs", *this, src, "src");
  if (Empty()) return;
  if (MapOnDevice(this, FunctionMap::kPowAbs, power, Real(include_sign ? 1 : 0), src)) return;
  CpuView().PowAbs(HostView(src), power, include_sign);
}

template <typename Real>
void CuMatrixBase<Real>::Heaviside(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::Heaviside");
  CheckSameShapeOrAlias("CuMatrix::Heaviside", *this, src, "src");
  if (Empty()) return;
  if (MapOnDevice(this, FunctionMap::kHeaviside, Real(0), Real(0), src)) return;
  CpuView().Heaviside(HostView(src));
}

template <typename Real>
void CuMatrixBase<Real>::Floor(const CuMatrixBase<Real>& src, Real floor_val) {
  internal::CuOpScope op_scope("CuMatrix::Floor");
  CheckSameShapeOrAlias("CuMatrix::Floor", *this, src, "src");
  if (Empty()) return;
  if (MapOnDevice(this, FunctionMap::kFloor, floor_val, Real(0), src)) return;
  CpuView().Floor(HostView(src), floor_val);
}

template <typename Real>
void CuMatrixBase<Real>::Ceiling(const CuMatrixBase<Real>& src, Real ceiling_val) {
  internal::CuOpScope op_scope("CuMatrix::Ceiling");
  CheckSameShapeOrAlias("CuMatrix::Ceiling", *this, src, "src");
  if (Empty()) return;
  if (MapOnDevice(this, FunctionMap::kCeiling, ceiling_val, Real(0), src)) return;
  CpuView().Ceiling(HostView(src), ceiling_val);
}

template <typename Real>
void CuMatrixBase<Real>::ExpLimited(const CuMatrixBase<Real>& src, Real lower_limit,
                                    Real upper_limit) {
  internal::CuOpScope op_scope("CuMatrix::ExpLimited");
  CheckSameShapeOrAlias("CuMatrix::ExpLimited", *this, src, "src");
  CheckLimits("CuMatrix::ExpLimited", lower_limit, upper_limit);
  if (Empty()) return;
  if (MapOnDevice(this, FunctionMap::kExpLimited, lower_limit, upper_limit, src)) return;
  CpuView().ExpLimited(HostView(src), lower_limit, upper_limit);
}

template <typename Real>
void CuMatrixBase<Real>::ExpSpecial(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::ExpSpecial");
  CheckSameShapeOrAlias("CuMatrix::ExpSpecial", *this, src, "src");
  if (Empty()) return;
  if (MapOnDevice(this, FunctionMap::kExpSpecial, Real(0), Real(0), src)) return;
  CpuView().ExpSpecial(HostView(src));
}

template <typename Real>
void CuMatrixBase<Real>::Exp(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::Exp");
  CheckSameShapeOrAlias("CuMatrix::Exp", *this, src, "src");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchNnetMap(Dim(), NnetMap::kExp, src.Data(), src.Stride(), data_, s);
      }))
    return;
  CpuView().Exp(HostView(src));
}

template <typename Real>
void CuMatrixBase<Real>::Log(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::Log");
  CheckSameShapeOrAlias("CuMatrix::Log", *this, src, "src");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchNnetMap(Dim(), NnetMap::kLog, src.Data(), src.Stride(), data_, s);
      }))
    return;
  CpuView().Log(HostView(src));
}

template <typename Real>
void CuMatrixBase<Real>::ApplyPow(Real power) {
  Pow(*this, power);
}

template <typename Real>
void CuMatrixBase<Real>::ApplyPowAbs(Real power, bool include_sign) {
  PowAbs(*this, power, include_sign);
}

template <typename Real>
void CuMatrixBase<Real>::ApplyHeaviside() {
  Heaviside(*this);
}

template <typename Real>
void CuMatrixBase<Real>::ApplyFloor(Real floor_val) {
  Floor(*this, floor_val);
}

template <typename Real>
void CuMatrixBase<Real>::ApplyCeiling(Real ceiling_val) {
  Ceiling(*this, ceiling_val);
}

template <typename Real>
void CuMatrixBase<Real>::ApplyExpLimited(Real lower_limit, Real upper_limit) {
  ExpLimited(*this, lower_limit, upper_limit);
}

template <typename Real>
void CuMatrixBase<Real>::ApplyExpSpecial() {
  ExpSpecial(*this);
}

// ---- vector broadcasts
// ---------------------------------------------------------------------------

template <typename Real>
void CuMatrixBase<Real>::MulColsVec(const CuVectorBase<Real>& scale) {
  internal::CuOpScope op_scope("CuMatrix::MulColsVec");
  CheckVec("CuMatrix::MulColsVec", *this, scale, "scale", num_cols_, "NumCols()");
  if (Empty()) return;
  if (BroadcastOnDevice(this, VecBroadcast::kMulCols, Real(1), scale, Real(1))) return;
  CpuView().MulColsVec(HostView(scale));
}

template <typename Real>
void CuMatrixBase<Real>::MulRowsVec(const CuVectorBase<Real>& scale) {
  internal::CuOpScope op_scope("CuMatrix::MulRowsVec");
  CheckVec("CuMatrix::MulRowsVec", *this, scale, "scale", num_rows_, "NumRows()");
  if (Empty()) return;
  if (BroadcastOnDevice(this, VecBroadcast::kMulRows, Real(1), scale, Real(1))) return;
  CpuView().MulRowsVec(HostView(scale));
}

template <typename Real>
void CuMatrixBase<Real>::DivRowsVec(const CuVectorBase<Real>& div) {
  internal::CuOpScope op_scope("CuMatrix::DivRowsVec");
  CheckVec("CuMatrix::DivRowsVec", *this, div, "div", num_rows_, "NumRows()");
  if (Empty()) return;
  if (BroadcastOnDevice(this, VecBroadcast::kDivRows, Real(1), div, Real(1))) return;
  CpuView().DivRowsVec(HostView(div));
}

template <typename Real>
void CuMatrixBase<Real>::AddVecToRows(Real alpha, const CuVectorBase<Real>& row, Real beta) {
  internal::CuOpScope op_scope("CuMatrix::AddVecToRows");
  CheckVec("CuMatrix::AddVecToRows", *this, row, "row", num_cols_, "NumCols()");
  if (Empty()) return;
  if (BroadcastOnDevice(this, VecBroadcast::kAddToRows, alpha, row, beta)) return;
  CpuView().AddVecToRows(alpha, HostView(row), beta);
}

template <typename Real>
void CuMatrixBase<Real>::AddVecToCols(Real alpha, const CuVectorBase<Real>& col, Real beta) {
  internal::CuOpScope op_scope("CuMatrix::AddVecToCols");
  CheckVec("CuMatrix::AddVecToCols", *this, col, "col", num_rows_, "NumRows()");
  if (Empty()) return;
  if (BroadcastOnDevice(this, VecBroadcast::kAddToCols, alpha, col, beta)) return;
  CpuView().AddVecToCols(alpha, HostView(col), beta);
}

template <typename Real>
void CuMatrixBase<Real>::MulRowsGroupMat(const CuMatrixBase<Real>& src) {
  internal::CuOpScope op_scope("CuMatrix::MulRowsGroupMat");
  CUCTX_CHECK(src.NumRows() == num_rows_)
      << "CuMatrix::MulRowsGroupMat: src " << ShapeText(src) << " does not have the rows of *this "
      << ShapeText(*this);
  CUCTX_CHECK(src.NumCols() == 0 ? num_cols_ == 0 : num_cols_ % src.NumCols() == 0)
      << "CuMatrix::MulRowsGroupMat: the columns of *this " << ShapeText(*this)
      << " are not a whole number of groups for src " << ShapeText(src);
  CUCTX_CHECK(!Overlap(src, *this)) << "CuMatrix::MulRowsGroupMat: src " << ShapeText(src)
                                    << " overlaps *this " << ShapeText(*this);
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchMulRowsGroupMat(Dim(), src.Data(), src.Stride(), num_cols_ / src.NumCols(), data_, s);
      }))
    return;
  CpuView().MulRowsGroupMat(HostView(src));
}

// ---- matrix combinations
// -------------------------------------------------------------------------

template <typename Real>
void CuMatrixBase<Real>::AddMatBlocks(Real alpha, const CuMatrixBase<Real>& A,
                                      MatrixTransposeType trans) {
  internal::CuOpScope op_scope("CuMatrix::AddMatBlocks");
  const MatrixIndexT a_rows = trans == kNoTrans ? A.NumRows() : A.NumCols();
  const MatrixIndexT a_cols = trans == kNoTrans ? A.NumCols() : A.NumRows();
  const bool sum_blocks =
      num_rows_ > 0 && num_cols_ > 0 && a_rows % num_rows_ == 0 && a_cols % num_cols_ == 0;
  const bool broadcast =
      a_rows > 0 && a_cols > 0 && num_rows_ % a_rows == 0 && num_cols_ % a_cols == 0;
  const bool both_empty = Empty() && (a_rows == 0 || a_cols == 0);
  CUCTX_CHECK(sum_blocks || broadcast || both_empty)
      << "CuMatrix::AddMatBlocks: op(A) is " << ShapeText(a_rows, a_cols) << " (A " << ShapeText(A)
      << (trans == kTrans ? ", kTrans" : "") << ") and *this is " << ShapeText(*this)
      << "; one must be a whole multiple of the other in both dimensions";
  CUCTX_CHECK(!Overlap(A, *this)) << "CuMatrix::AddMatBlocks: A " << ShapeText(A)
                                  << " overlaps *this " << ShapeText(*this);
  if (Empty() || a_rows == 0 || a_cols == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchAddMatBlocks(Dim(), alpha, A.Data(), A.Dim(), trans == kTrans, sum_blocks, data_, s);
      }))
    return;
  CpuView().AddMatBlocks(alpha, HostView(A), trans);
}

template <typename Real>
void CuMatrixBase<Real>::AddMatMatElements(Real alpha, const CuMatrixBase<Real>& A,
                                           const CuMatrixBase<Real>& B, Real beta) {
  internal::CuOpScope op_scope("CuMatrix::AddMatMatElements");
  CheckSameShapeOrAlias("CuMatrix::AddMatMatElements", *this, A, "A");
  CheckSameShapeOrAlias("CuMatrix::AddMatMatElements", *this, B, "B");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchAddMatMatElements(Dim(), alpha, A.Data(), A.Stride(), B.Data(), B.Stride(), beta,
                                data_, s);
      }))
    return;
  CpuView().AddMatMatElements(alpha, HostView(A), HostView(B), beta);
}

template <typename Real>
void CuMatrixBase<Real>::SetMatMatDivMat(const CuMatrixBase<Real>& A, const CuMatrixBase<Real>& B,
                                         const CuMatrixBase<Real>& C) {
  internal::CuOpScope op_scope("CuMatrix::SetMatMatDivMat");
  CheckSameShapeOrAlias("CuMatrix::SetMatMatDivMat", *this, A, "A");
  CheckSameShapeOrAlias("CuMatrix::SetMatMatDivMat", *this, B, "B");
  CheckSameShapeOrAlias("CuMatrix::SetMatMatDivMat", *this, C, "C");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchSetMatMatDivMat(Dim(), A.Data(), A.Stride(), B.Data(), B.Stride(), C.Data(),
                              C.Stride(), data_, s);
      }))
    return;
  CpuView().SetMatMatDivMat(HostView(A), HostView(B), HostView(C));
}

template <typename Real>
void CuMatrixBase<Real>::AddToDiag(Real alpha) {
  internal::CuOpScope op_scope("CuMatrix::AddToDiag");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchAddToDiag(Dim(), alpha, data_, s); })) return;
  CpuView().AddToDiag(alpha);
}

// ---- reductions
// ----------------------------------------------------------------------------------

template <typename Real>
Real CuMatrixBase<Real>::Max() const {
  internal::CuOpScope op_scope("CuMatrix::Max");
  internal::CheckNotCapturing("CuMatrixBase::Max");
  CUCTX_CHECK(!Empty()) << "CuMatrix::Max: empty matrix " << ShapeText(*this);
  Real result = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        result = internal::MatReduceToHost(Dim(), data_, MatReduce::kMax, Real(0), s);
      }))
    return result;
  return CpuView().Max();
}

template <typename Real>
Real CuMatrixBase<Real>::Min() const {
  internal::CuOpScope op_scope("CuMatrix::Min");
  internal::CheckNotCapturing("CuMatrixBase::Min");
  CUCTX_CHECK(!Empty()) << "CuMatrix::Min: empty matrix " << ShapeText(*this);
  Real result = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        result = internal::MatReduceToHost(Dim(), data_, MatReduce::kMin, Real(0), s);
      }))
    return result;
  return CpuView().Min();
}

template <typename Real>
Real CuMatrixBase<Real>::Trace(bool check_square) const {
  internal::CuOpScope op_scope("CuMatrix::Trace");
  internal::CheckNotCapturing("CuMatrixBase::Trace");
  CUCTX_CHECK(!check_square || num_rows_ == num_cols_)
      << "CuMatrix::Trace: matrix " << ShapeText(*this) << " is not square";
  if (Empty()) return 0;
  Real result = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        result = internal::MatReduceToHost(Dim(), data_, MatReduce::kTrace, Real(0), s);
      }))
    return result;
  return CpuView().Trace(check_square);
}

template <typename Real>
void CuMatrixBase<Real>::Max(CuValue<Real> result) const {
  internal::CuOpScope op_scope("CuMatrix::Max");
  CUCTX_CHECK(!Empty()) << "CuMatrix::Max: empty matrix " << ShapeText(*this);
  if (internal::RunOnGpu([&](CuStream s) {
        internal::MatReduceOnDevice(Dim(), data_, MatReduce::kMax, result.Data(), s);
      }))
    return;
  *result.Data() = CpuView().Max();
}

template <typename Real>
void CuMatrixBase<Real>::Min(CuValue<Real> result) const {
  internal::CuOpScope op_scope("CuMatrix::Min");
  CUCTX_CHECK(!Empty()) << "CuMatrix::Min: empty matrix " << ShapeText(*this);
  if (internal::RunOnGpu([&](CuStream s) {
        internal::MatReduceOnDevice(Dim(), data_, MatReduce::kMin, result.Data(), s);
      }))
    return;
  *result.Data() = CpuView().Min();
}

template <typename Real>
void CuMatrixBase<Real>::Trace(CuValue<Real> result, bool check_square) const {
  internal::CuOpScope op_scope("CuMatrix::Trace");
  CUCTX_CHECK(!check_square || num_rows_ == num_cols_)
      << "CuMatrix::Trace: matrix " << ShapeText(*this) << " is not square";
  if (internal::RunOnGpu([&](CuStream s) {
        internal::MatReduceOnDevice(Dim(), data_, MatReduce::kTrace, result.Data(), s);
      }))
    return;
  *result.Data() = Empty() ? Real(0) : CpuView().Trace(check_square);
}

template <typename Real>
bool CuMatrixBase<Real>::IsUnit(Real tol) const {
  internal::CuOpScope op_scope("CuMatrix::IsUnit");
  internal::CheckNotCapturing("CuMatrixBase::IsUnit");
  if (Empty()) return true;
  Real off_unit = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        off_unit = internal::MatReduceToHost(Dim(), data_, MatReduce::kOffUnit, tol, s);
      }))
    return off_unit == 0;
  return CpuView().IsUnit(tol);
}

#define CUCTX_INSTANTIATE_CU_FUNCTIONS_(R)                                                       \
  template void CuMatrixBase<R>::Max(const CuMatrixBase<R>&);                                    \
  template void CuMatrixBase<R>::Min(const CuMatrixBase<R>&);                                    \
  template void CuMatrixBase<R>::InvertElements();                                               \
  template void CuMatrixBase<R>::MulColsVec(const CuVectorBase<R>&);                             \
  template void CuMatrixBase<R>::MulRowsVec(const CuVectorBase<R>&);                             \
  template void CuMatrixBase<R>::DivRowsVec(const CuVectorBase<R>&);                             \
  template void CuMatrixBase<R>::MulRowsGroupMat(const CuMatrixBase<R>&);                        \
  template void CuMatrixBase<R>::AddVecToRows(R, const CuVectorBase<R>&, R);                     \
  template void CuMatrixBase<R>::AddVecToCols(R, const CuVectorBase<R>&, R);                     \
  template void CuMatrixBase<R>::AddMatBlocks(R, const CuMatrixBase<R>&, MatrixTransposeType);   \
  template void CuMatrixBase<R>::AddMatMatElements(R, const CuMatrixBase<R>&,                    \
                                                   const CuMatrixBase<R>&, R);                   \
  template void CuMatrixBase<R>::SetMatMatDivMat(const CuMatrixBase<R>&, const CuMatrixBase<R>&, \
                                                 const CuMatrixBase<R>&);                        \
  template void CuMatrixBase<R>::AddToDiag(R);                                                   \
  template void CuMatrixBase<R>::ApplyPow(R);                                                    \
  template void CuMatrixBase<R>::ApplyPowAbs(R, bool);                                           \
  template void CuMatrixBase<R>::ApplyHeaviside();                                               \
  template void CuMatrixBase<R>::ApplyFloor(R);                                                  \
  template void CuMatrixBase<R>::ApplyCeiling(R);                                                \
  template void CuMatrixBase<R>::ApplyExpLimited(R, R);                                          \
  template void CuMatrixBase<R>::ApplyExpSpecial();                                              \
  template void CuMatrixBase<R>::Exp(const CuMatrixBase<R>&);                                    \
  template void CuMatrixBase<R>::Log(const CuMatrixBase<R>&);                                    \
  template void CuMatrixBase<R>::Pow(const CuMatrixBase<R>&, R);                                 \
  template void CuMatrixBase<R>::PowAbs(const CuMatrixBase<R>&, R, bool);                        \
  template void CuMatrixBase<R>::Floor(const CuMatrixBase<R>&, R);                               \
  template void CuMatrixBase<R>::Ceiling(const CuMatrixBase<R>&, R);                             \
  template void CuMatrixBase<R>::ExpLimited(const CuMatrixBase<R>&, R, R);                       \
  template void CuMatrixBase<R>::ExpSpecial(const CuMatrixBase<R>&);                             \
  template void CuMatrixBase<R>::Heaviside(const CuMatrixBase<R>&);                              \
  template R CuMatrixBase<R>::Max() const;                                                       \
  template R CuMatrixBase<R>::Min() const;                                                       \
  template R CuMatrixBase<R>::Trace(bool) const;                                                 \
  template void CuMatrixBase<R>::Max(CuValue<R>) const;                                          \
  template void CuMatrixBase<R>::Min(CuValue<R>) const;                                          \
  template void CuMatrixBase<R>::Trace(CuValue<R>, bool) const;                                  \
  template bool CuMatrixBase<R>::IsUnit(R) const;

CUCTX_INSTANTIATE_CU_FUNCTIONS_(float)
CUCTX_INSTANTIATE_CU_FUNCTIONS_(double)

#undef CUCTX_INSTANTIATE_CU_FUNCTIONS_

}  // namespace cuctx
