// cudamatrix/cu-matrix-solve.cc: CuMatrixBase solvers (Cholesky, SymInvertPosDef) through
// cuSOLVER on the GPU and matrix/ on the CPU.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-packed-matrix.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-sp-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"
#include "matrix/matrix.h"

#include <algorithm>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-solver-wrappers.h"

#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

using internal::HostView;
using internal::Overlap;
using internal::ShapeText;

#if CUCTX_HAVE_CUDA
// A row-major matrix read as column-major is its transpose, so the row-major lower triangle is
// cuSOLVER's upper one: every call below passes CUBLAS_FILL_MODE_UPPER, and cuSOLVER's U with
// A = U^T U is, read row-major, our L with A = L L^T.
constexpr cublasFillMode_t kRowMajorLower = CUBLAS_FILL_MODE_UPPER;

// Factors the n x n matrix `a` (row pitch `lda` elements) in place with potrf and, with
// `invert`, replaces the factor by the inverse with potri. Both infos land in one device buffer
// that is read back once (a few bytes: through the thread's read-back slot; this waits for the
// stream). Returns potrf's info (0, or k > 0 when the leading minor of order k is not positive
// definite), else potri's (k > 0: the factor has a zero diagonal element).
template <typename Real>
int FactorOnDevice(Real* a, int n, int lda, bool invert) {
  cusolverDnHandle_t h = internal::ThreadCusolverDnHandle();
  int lwork = 0;
  CUCTX_CUSOLVER_CHECK(internal::CusolverPotrfBufferSize(h, kRowMajorLower, n, a, lda, &lwork));
  if (invert) {
    int lwork_inv = 0;
    CUCTX_CUSOLVER_CHECK(
        internal::CusolverPotriBufferSize(h, kRowMajorLower, n, a, lda, &lwork_inv));
    lwork = std::max(lwork, lwork_inv);
  }
  internal::ScopedStorage work(static_cast<size_t>(std::max(lwork, 1)) * sizeof(Real));
  internal::ScopedStorage info(2 * sizeof(int));
  Real* d_work = static_cast<Real*>(work.Data());
  int* d_info = static_cast<int*>(info.Data());
  // potrf and potri always store their info, so the buffer needs no clearing.
  CUCTX_CUSOLVER_CHECK(
      internal::CusolverPotrf(h, kRowMajorLower, n, a, lda, d_work, lwork, d_info));
  // potri runs even when potrf failed (its result is then discarded), so that one read-back
  // serves both calls.
  if (invert)
    CUCTX_CUSOLVER_CHECK(
        internal::CusolverPotri(h, kRowMajorLower, n, a, lda, d_work, lwork, d_info + 1));
  int h_info[2] = {0, 0};
  CopyDeviceToHost(h_info, d_info, (invert ? 2 : 1) * sizeof(int));
  return h_info[0] != 0 ? h_info[0] : h_info[1];
}

// Throws unless `info` (cuSOLVER's potrf info) is 0.
void CheckPosDef(const char* op, MatrixIndexT n, int info) {
  if (info == 0) return;
  CUCTX_CHECK(info > 0) << op << ": cuSOLVER rejected argument " << -info;
  CUCTX_ERR << op << ": the " << n << "x" << n << " matrix is not positive definite (its leading "
            << "minor of order " << info << " is not positive)";
}

// Matrices up to this size are factored (and inverted) on the host, between one download and one
// upload, by the CPU library (LAPACK, in double): cuSOLVER's potrf and potri launch several kernels
// each and ask for workspace sizes first, and the info read-back waits for the device anyway.
// Measured on an H100 host with bin/cu-kaldi-speed-bench, three runs alternating with the previous
// binary in one call, as ratios to Kaldi's figures:
//   host path against cuSOLVER: Cholesky at 32, 0.90-0.93 -> 1.57-2.20; InvertPosDef<double> at 64,
//   1.56-1.68 -> 2.27-2.64, <float> 1.97-2.12 -> 3.13-3.16; Cholesky<double> at 128, 2.97-3.17 ->
//   2.04-2.22 (a loss: larger sizes use cuSOLVER);
//   the host's unblocked LAPACK against its blocked, threaded one (see matrix/lapack-wrappers.h):
//   Cholesky<double> at 64, 0.73-0.86 -> 1.26-1.37; InvertPosDef<double> at 32, 1.34-1.68 ->
//   2.96-3.03.
constexpr MatrixIndexT kHostSolveMaxDim = 64;

// The host path: *m is left unchanged when it is not positive definite (the CPU library factors
// a copy), and inv_cholesky (Cholesky only) gets the inverse factor.
template <typename Real>
void SolveOnHost(CuMatrixBase<Real>* m, bool invert, CuMatrixBase<Real>* inv_cholesky) {
  const MatrixIndexT n = m->NumRows();
  Matrix<Real> host(n, n, kUndefined);
  m->CopyToMat(&host);
  if (invert) {
    host.SymInvertPosDef();
  } else if (inv_cholesky != nullptr) {
    Matrix<Real> inv(n, n, kUndefined);
    host.Cholesky(&inv);
    inv_cholesky->CopyFromMat(inv);
  } else {
    host.Cholesky();
  }
  m->CopyFromMat(host);
}

// Factors (and with `invert` inverts) the square matrix `m` in place, keeping a packed copy of it
// that is written back when the factorization fails, so that a failure leaves `m` unchanged;
// then throws for that failure (CheckPosDef). One device copy on success, where factoring a copy
// and writing the result back took two.
template <typename Real>
void FactorInPlaceOrRestore(const char* op, CuMatrixBase<Real>* m, bool invert) {
  const MatrixIndexT n = m->NumRows();
  const size_t row_bytes = static_cast<size_t>(n) * sizeof(Real);
  const size_t pitch = static_cast<size_t>(m->Stride()) * sizeof(Real);
  internal::ScopedStorage backup(row_bytes * static_cast<size_t>(n));
  internal::CopyStorage2D(backup.Data(), row_bytes, m->Data(), pitch, row_bytes, n);
  const int info = FactorOnDevice(m->Data(), n, m->Stride(), invert);
  if (info != 0) internal::CopyStorage2D(m->Data(), pitch, backup.Data(), row_bytes, row_bytes, n);
  CheckPosDef(op, n, info);
}
#endif

void CheckSquare(const char* op, MatrixIndexT rows, MatrixIndexT cols) {
  CUCTX_CHECK(rows == cols) << op << ": matrix " << ShapeText(rows, cols) << " is not square";
}

}  // namespace

namespace internal {

#if CUCTX_HAVE_CUDA
// Declared in cu-tp-matrix.h.
template <typename Real>
void InvertLowerOnDevice(Real* data, MatrixIndexT n, MatrixIndexT stride, int* d_info) {
  if (n == 0) return;
  cusolverDnHandle_t h = ThreadCusolverDnHandle();
  size_t device_bytes = 0, host_bytes = 0;
  CUCTX_CUSOLVER_CHECK(cusolverDnXtrtri_bufferSize(h, kRowMajorLower, CUBLAS_DIAG_NON_UNIT, n,
                                                   CusolverDataType(data), data, stride,
                                                   &device_bytes, &host_bytes));
  ScopedStorage work(std::max<size_t>(device_bytes, 1));
  std::vector<char> host_work(std::max<size_t>(host_bytes, 1));
  CUCTX_CUSOLVER_CHECK(cusolverDnXtrtri(h, kRowMajorLower, CUBLAS_DIAG_NON_UNIT, n,
                                        CusolverDataType(data), data, stride, work.Data(),
                                        device_bytes, host_work.data(), host_bytes, d_info));
  // cuSOLVER does not say when it is done with a host workspace; none is asked for today, but
  // if one is, keep it alive until the work on the stream has finished.
  if (host_bytes > 0) CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}

template void InvertLowerOnDevice(float*, MatrixIndexT, MatrixIndexT, int*);
template void InvertLowerOnDevice(double*, MatrixIndexT, MatrixIndexT, int*);
#endif

}  // namespace internal

template <typename Real>
void CuMatrixBase<Real>::Cholesky(CuMatrixBase<Real>* inv_cholesky) {
  internal::CuOpScope op_scope("CuMatrix::Cholesky");
  CheckSquare("CuMatrix::Cholesky", num_rows_, num_cols_);
  if (inv_cholesky != nullptr) {
    CUCTX_CHECK(inv_cholesky->NumRows() == num_rows_ && inv_cholesky->NumCols() == num_cols_)
        << "CuMatrix::Cholesky: inv_cholesky " << ShapeText(*inv_cholesky)
        << " does not match *this " << ShapeText(*this);
    CUCTX_CHECK(!Overlap(*this, *inv_cholesky))
        << "CuMatrix::Cholesky: inv_cholesky overlaps *this (" << ShapeText(*this) << ")";
  }
  if (num_rows_ == 0) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu() && num_rows_ <= kHostSolveMaxDim) {
    SolveOnHost(this, false, inv_cholesky);
    return;
  }
  if (internal::OnGpu()) {
    FactorInPlaceOrRestore("CuMatrix::Cholesky", this, false);
    LaunchFillUpperTriangle(Dim(), false, data_, internal::ThreadStream());
    if (inv_cholesky != nullptr) {
      inv_cholesky->CopyFromMat(*this);
      // The factor's diagonal is positive, so trtri cannot fail and its info is not read.
      internal::ScopedStorage info(sizeof(int));
      internal::InvertLowerOnDevice(inv_cholesky->Data(), num_rows_, inv_cholesky->Stride(),
                                    static_cast<int*>(info.Data()));
    }
    return;
  }
#endif
  if (inv_cholesky != nullptr) {
    SubMatrix<Real> inv = HostView(*inv_cholesky);
    CpuView().Cholesky(&inv);
  } else {
    CpuView().Cholesky();
  }
}

template <typename Real>
void CuMatrixBase<Real>::SymInvertPosDef() {
  internal::CuOpScope op_scope("CuMatrix::SymInvertPosDef");
  CheckSquare("CuMatrix::SymInvertPosDef", num_rows_, num_cols_);
  if (num_rows_ == 0) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu() && num_rows_ <= kHostSolveMaxDim) {
    SolveOnHost(this, true, static_cast<CuMatrixBase<Real>*>(nullptr));
    return;
  }
  if (internal::OnGpu()) {
    FactorInPlaceOrRestore("CuMatrix::SymInvertPosDef", this, true);
    // potri leaves the inverse in the lower triangle only.
    LaunchFillUpperTriangle(Dim(), true, data_, internal::ThreadStream());
    return;
  }
#endif
  CpuView().SymInvertPosDef();
}

namespace {

// The checks CopyFromSp and CopyFromTp share.
template <typename Real>
void CheckUnpackTarget(const char* op, const CuMatrixBase<Real>& dst,
                       const CuPackedMatrix<Real>& M) {
  CUCTX_CHECK(dst.NumRows() == M.NumRows() && dst.NumCols() == M.NumRows())
      << op << ": packed matrix of size " << M.NumRows() << " does not match *this "
      << ShapeText(dst);
  CUCTX_CHECK(
      !internal::SpansOverlap(dst.Data(), internal::SpanBytes(dst), M.Data(), M.SizeInBytes()))
      << op << ": *this " << ShapeText(dst) << " overlaps the packed storage";
}

}  // namespace

template <typename Real>
void CuMatrixBase<Real>::CopyFromSp(const CuSpMatrix<Real>& M) {
  internal::CuOpScope op_scope("CuMatrix::CopyFromSp");
  CheckUnpackTarget("CuMatrix::CopyFromSp", *this, M);
  internal::UnpackTriangle(M.Data(), PackedLayout::kSymmetric, this);
}

template <typename Real>
void CuMatrixBase<Real>::CopyFromTp(const CuTpMatrix<Real>& M, MatrixTransposeType trans) {
  internal::CuOpScope op_scope("CuMatrix::CopyFromTp");
  CheckUnpackTarget("CuMatrix::CopyFromTp", *this, M);
  internal::UnpackTriangle(M.Data(),
                           trans == kNoTrans ? PackedLayout::kLower : PackedLayout::kUpper, this);
}

#define CUCTX_INSTANTIATE_CU_SOLVE_(R)                             \
  template void CuMatrixBase<R>::Cholesky(CuMatrixBase<R>*);       \
  template void CuMatrixBase<R>::SymInvertPosDef();                \
  template void CuMatrixBase<R>::CopyFromSp(const CuSpMatrix<R>&); \
  template void CuMatrixBase<R>::CopyFromTp(const CuTpMatrix<R>&, MatrixTransposeType);

CUCTX_INSTANTIATE_CU_SOLVE_(float)
CUCTX_INSTANTIATE_CU_SOLVE_(double)

#undef CUCTX_INSTANTIATE_CU_SOLVE_

}  // namespace cuctx
