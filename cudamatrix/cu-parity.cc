// cudamatrix/cu-parity.cc: small Kaldi-parity helpers of the Cu classes: AssertEqual for
// CuVector and CuSpMatrix, CuSpMatrix norms and ApproxEqual, TraceSpSp across precisions, and the
// free RegisterCuAllocatorOptions.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-allocator-options.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-sp-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/vector.h"

#include <cmath>
#include <cstddef>

namespace cuctx {

void RegisterCuAllocatorOptions(OptionsItf* opts) { CuDevice::RegisterCuAllocatorOptions(opts); }

template <typename Real>
void AssertEqual(const CuVectorBase<Real>& a, const CuVectorBase<Real>& b, float tol) {
  CUCTX_CHECK(a.Dim() == b.Dim()) << "AssertEqual(CuVector): dims " << a.Dim() << " and " << b.Dim()
                                  << " do not match";
  Vector<Real> ha(a.Dim(), kUndefined), hb(b.Dim(), kUndefined);
  a.CopyToVec(&ha);
  b.CopyToVec(&hb);
  AssertEqual(ha, hb, tol);  // the host form names the relative difference
}

template <typename Real>
Real CuSpMatrix<Real>::FrobeniusNorm() const {
  return std::sqrt(TraceSpSp(*this, *this));
}

namespace {

// ||A - B||_F and ||A||_F of the full symmetric matrices (sizes already checked).
template <typename Real>
void SpDiffNorms(const CuSpMatrix<Real>& A, const CuSpMatrix<Real>& B, Real* diff_norm,
                 Real* a_norm) {
  CuSpMatrix<Real> diff(A);
  diff.AddSp(-1.0, B);
  *diff_norm = diff.FrobeniusNorm();
  *a_norm = A.FrobeniusNorm();
}

}  // namespace

template <typename Real>
bool CuSpMatrix<Real>::ApproxEqual(const CuSpMatrix<Real>& other, Real tol) const {
  CUCTX_CHECK(other.NumRows() == this->num_rows_)
      << "CuSpMatrix::ApproxEqual: sizes " << this->num_rows_ << " and " << other.NumRows()
      << " do not match";
  Real diff_norm = 0, a_norm = 0;
  SpDiffNorms(*this, other, &diff_norm, &a_norm);
  return diff_norm <= tol * a_norm;
}

template <typename Real>
void AssertEqual(const CuSpMatrix<Real>& A, const CuSpMatrix<Real>& B, Real tol) {
  CUCTX_CHECK(A.NumRows() == B.NumRows()) << "AssertEqual(CuSpMatrix): sizes " << A.NumRows()
                                          << " and " << B.NumRows() << " do not match";
  Real diff_norm = 0, a_norm = 0;
  SpDiffNorms(A, B, &diff_norm, &a_norm);
  CUCTX_CHECK(diff_norm <= tol * a_norm) << "AssertEqual(CuSpMatrix): ||A - B|| = " << diff_norm
                                         << " exceeds " << tol << " * ||A|| = " << tol * a_norm;
}

template <typename Real, typename OtherReal>
Real TraceSpSp(const CuSpMatrix<Real>& A, const CuSpMatrix<OtherReal>& B) {
  const MatrixIndexT n = B.NumRows();
  CUCTX_CHECK(A.NumRows() == n) << "TraceSpSp: sizes " << A.NumRows() << " and " << n
                                << " do not match";
  // Convert B's packed elements to Real on the device (CuVectorBase's converting copy).
  const MatrixIndexT count =
      static_cast<MatrixIndexT>(static_cast<size_t>(n) * (static_cast<size_t>(n) + 1) / 2);
  CuSpMatrix<Real> converted(n, kUndefined);
  CuSubVector<Real> dst(converted.Data(), count);
  dst.CopyFromVec(CuSubVector<OtherReal>(B.Data(), count));
  return TraceSpSp(A, converted);
}

template void AssertEqual(const CuVectorBase<float>&, const CuVectorBase<float>&, float);
template void AssertEqual(const CuVectorBase<double>&, const CuVectorBase<double>&, float);
template float CuSpMatrix<float>::FrobeniusNorm() const;
template double CuSpMatrix<double>::FrobeniusNorm() const;
template bool CuSpMatrix<float>::ApproxEqual(const CuSpMatrix<float>&, float) const;
template bool CuSpMatrix<double>::ApproxEqual(const CuSpMatrix<double>&, double) const;
template void AssertEqual(const CuSpMatrix<float>&, const CuSpMatrix<float>&, float);
template void AssertEqual(const CuSpMatrix<double>&, const CuSpMatrix<double>&, double);
template float TraceSpSp(const CuSpMatrix<float>&, const CuSpMatrix<double>&);
template double TraceSpSp(const CuSpMatrix<double>&, const CuSpMatrix<float>&);

}  // namespace cuctx
