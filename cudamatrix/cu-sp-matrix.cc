// cudamatrix/cu-sp-matrix.cc: CuSpMatrix (copies, inverse, rank updates, TraceSpSp) and
// CuVectorBase::AddSpVec.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-sp-matrix.h"

#include "base/error.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"
#include "matrix/matrix.h"

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-blas-wrappers.h"

#include <cublas_v2.h>
#endif

namespace cuctx {
namespace {

using internal::HostView;
using internal::ShapeText;

#if CUCTX_HAVE_CUDA
// The packed row-by-row lower triangle is cuBLAS's column-major packed upper triangle.
cublasStatus_t Spmv(cublasHandle_t h, int n, float alpha, const float* ap, const float* x,
                    float beta, float* y) {
  return cublasSspmv(h, CUBLAS_FILL_MODE_UPPER, n, &alpha, ap, x, 1, &beta, y, 1);
}
cublasStatus_t Spmv(cublasHandle_t h, int n, double alpha, const double* ap, const double* x,
                    double beta, double* y) {
  return cublasDspmv(h, CUBLAS_FILL_MODE_UPPER, n, &alpha, ap, x, 1, &beta, y, 1);
}
#endif

// Throws if M's elements share memory with the packed storage of `packed`.
template <typename Real>
void CheckNotInPacked(const char* op, const CuMatrixBase<Real>& M,
                      const CuPackedMatrix<Real>& packed) {
  CUCTX_CHECK(!internal::SpansOverlap(M.Data(), internal::SpanBytes(M), packed.Data(),
                                      packed.SizeInBytes()))
      << op << ": matrix " << ShapeText(M) << " overlaps the packed storage";
}

}  // namespace

template <typename Real>
void CuSpMatrix<Real>::CopyFromMat(const CuMatrixBase<Real>& M, SpCopyType copy_type) {
  internal::CuOpScope op_scope("CuSpMatrix::CopyFromMat");
  CUCTX_CHECK(M.NumRows() == M.NumCols())
      << "CuSpMatrix::CopyFromMat: matrix " << ShapeText(M) << " is not square";
  CheckNotInPacked("CuSpMatrix::CopyFromMat", M, *this);
  if (copy_type == kTakeMeanAndCheck) {
    // A debugging aid: the element-wise symmetry check runs where SpMatrix already does it.
    Matrix<Real> host(M.NumRows(), M.NumCols(), kUndefined);
    M.CopyToMat(&host);
    const SpMatrix<Real> checked(host, kTakeMeanAndCheck);
    this->Resize(M.NumRows(), kUndefined);
    CopyFromSp(checked);
    return;
  }
  this->Resize(M.NumRows(), kUndefined);
  const PackSource source = copy_type == kTakeLower   ? PackSource::kLower
                            : copy_type == kTakeUpper ? PackSource::kUpper
                                                      : PackSource::kMean;
  internal::PackTriangle(M, source, this->data_);
}

template <typename Real>
void CuSpMatrix<Real>::Invert() {
  internal::CuOpScope op_scope("CuSpMatrix::Invert");
  const MatrixIndexT n = this->num_rows_;
  if (n == 0) return;
  CuMatrix<Real> full(n, n, kUndefined);
  full.CopyFromSp(*this);
  full.SymInvertPosDef();
  internal::PackTriangle(full, PackSource::kLower, this->data_);
}

template <typename Real>
void CuSpMatrix<Real>::AddMat2(Real alpha, const CuMatrixBase<Real>& M, MatrixTransposeType transM,
                               Real beta) {
  internal::CuOpScope op_scope("CuSpMatrix::AddMat2");
  const MatrixIndexT n = this->num_rows_;
  CUCTX_CHECK((transM == kNoTrans ? M.NumRows() : M.NumCols()) == n)
      << "CuSpMatrix::AddMat2: M " << ShapeText(M) << (transM == kNoTrans ? "" : " (kTrans)")
      << " does not match the " << n << "x" << n << " symmetric matrix";
  CheckNotInPacked("CuSpMatrix::AddMat2", M, *this);
  if (n == 0) return;
  CuMatrix<Real> full(n, n, kUndefined);
  if (beta != 0)
    internal::UnpackTriangle(this->data_, PackedLayout::kLower, &full);
  else
    full.SetZero();
  // SymAddMat2 updates the lower triangle only, which is all that is packed back.
  full.SymAddMat2(alpha, M, transM, beta);
  internal::PackTriangle(full, PackSource::kLower, this->data_);
}

template <typename Real>
void CuSpMatrix<Real>::AddVec2(Real alpha, const CuVectorBase<Real>& v) {
  internal::CuOpScope op_scope("CuSpMatrix::AddVec2");
  const MatrixIndexT n = this->num_rows_;
  CUCTX_CHECK(v.Dim() == n) << "CuSpMatrix::AddVec2: vector of dim " << v.Dim()
                            << " does not match the " << n << "x" << n << " symmetric matrix";
  if (n == 0) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchPackedAddVec2(n, alpha, v.Data(), this->data_, s); }))
    return;
  const SubVector<Real> x = HostView(v);
  Real* p = this->data_;
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c) *p++ += alpha * x(r) * x(c);
}

template <typename Real>
void CuSpMatrix<Real>::AddSp(Real alpha, const CuSpMatrix<Real>& S) {
  CUCTX_CHECK(S.NumRows() == this->num_rows_)
      << "CuSpMatrix::AddSp: size " << S.NumRows() << " does not match " << this->num_rows_;
  CuSubVector<Real> mine = this->Elements();
  mine.AddVec(alpha, S.Elements());
}

template <typename Real>
Real TraceSpSp(const CuSpMatrix<Real>& A, const CuSpMatrix<Real>& B) {
  const MatrixIndexT n = A.NumRows();
  CUCTX_CHECK(B.NumRows() == n) << "TraceSpSp: sizes " << n << " and " << B.NumRows()
                                << " do not match";
  if (n == 0) return 0;
  // Each off-diagonal element appears twice in the full matrices, the diagonal once.
  CuVector<Real> diag_a(n, kUndefined), diag_b(n, kUndefined);
  diag_a.CopyDiagFromPacked(A);
  diag_b.CopyDiagFromPacked(B);
  return 2 * VecVec(A.Elements(), B.Elements()) - VecVec(diag_a, diag_b);
}

template <typename Real>
void CuVectorBase<Real>::AddSpVec(Real alpha, const CuSpMatrix<Real>& M,
                                  const CuVectorBase<Real>& v, Real beta) {
  internal::CuOpScope op_scope("CuVector::AddSpVec");
  CUCTX_CHECK(M.NumRows() == dim_ && v.Dim() == dim_)
      << "CuVector::AddSpVec: symmetric matrix " << M.NumRows() << "x" << M.NumRows()
      << " times vector of dim " << v.Dim() << " into vector of dim " << dim_;
  CUCTX_CHECK(!internal::Overlap(v, *this)) << "CuVector::AddSpVec: v overlaps *this";
  if (dim_ == 0) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    CUCTX_CUBLAS_CHECK(
        Spmv(internal::ThreadCublasHandle(), dim_, alpha, M.Data(), v.Data(), beta, data_));
    return;
  }
#endif
  SpMatrix<Real> host(dim_, kUndefined);
  M.CopyToSp(&host);
  Matrix<Real> full(dim_, dim_, kUndefined);
  full.CopyFromSp(host);
  CpuView().AddMatVec(alpha, full, kNoTrans, HostView(v), beta);
}

template class CuSpMatrix<float>;
template class CuSpMatrix<double>;
template float TraceSpSp(const CuSpMatrix<float>&, const CuSpMatrix<float>&);
template double TraceSpSp(const CuSpMatrix<double>&, const CuSpMatrix<double>&);
template void CuVectorBase<float>::AddSpVec(float, const CuSpMatrix<float>&,
                                            const CuVectorBase<float>&, float);
template void CuVectorBase<double>::AddSpVec(double, const CuSpMatrix<double>&,
                                             const CuVectorBase<double>&, double);

}  // namespace cuctx
