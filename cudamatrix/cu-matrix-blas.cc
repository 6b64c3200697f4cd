// cudamatrix/cu-matrix-blas.cc: the CuMatrixBase BLAS family (cuBLAS on the GPU, matrix/ on the
// CPU) and its free functions TraceMatMat, AddMatMatBatched and VecMatVec.
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

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-blas-wrappers.h"
#endif

namespace cuctx {
namespace {

#if CUCTX_HAVE_CUDA
// A row-major operand is its own transpose in column-major order, so op(X) of a row-major
// product maps to the opposite cuBLAS operation on the stored matrix.
cublasOperation_t CublasOp(MatrixTransposeType t) {
  return t == kTrans ? CUBLAS_OP_T : CUBLAS_OP_N;
}
#endif

using internal::OpCols;
using internal::OpRows;
using internal::TransName;

using internal::HostView;
using internal::Overlap;
using internal::SameView;
using internal::ShapeText;

// The checks AddMatMat and each AddMatMatBatched entry share.
template <typename Real>
void CheckGemm(const char* what, const CuMatrixBase<Real>& C, const CuMatrixBase<Real>& A,
               MatrixTransposeType transA, const CuMatrixBase<Real>& B,
               MatrixTransposeType transB) {
  CUCTX_CHECK(OpRows(A, transA) == C.NumRows() && OpCols(B, transB) == C.NumCols() &&
              OpCols(A, transA) == OpRows(B, transB))
      << what << ": shape mismatch: A " << ShapeText(A) << " (" << TransName(transA) << ") times B "
      << ShapeText(B) << " (" << TransName(transB) << ") into " << ShapeText(C);
  CUCTX_CHECK(!Overlap(C, A) && !Overlap(C, B))
      << what << ": output " << ShapeText(C) << " overlaps input " << (Overlap(C, A) ? "A " : "B ")
      << (Overlap(C, A) ? ShapeText(A) : ShapeText(B));
}

}  // namespace

template <typename Real>
void CuMatrixBase<Real>::AddMatMat(Real alpha, const CuMatrixBase<Real>& A,
                                   MatrixTransposeType transA, const CuMatrixBase<Real>& B,
                                   MatrixTransposeType transB, Real beta) {
  internal::CuOpScope op_scope("CuMatrix::AddMatMat");
  CheckGemm("CuMatrix::AddMatMat", *this, A, transA, B, transB);
  if (Empty()) return;
  const MatrixIndexT k = OpCols(A, transA);
  if (k == 0) {  // no product: only the beta scaling (cuBLAS may skip it for k == 0)
    if (beta == 0)
      SetZero();
    else
      Scale(beta);
    return;
  }
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, with the stored row-major
    // B and A read as column-major B^T and A^T; so B comes first and the ops keep their sense.
    CUCTX_CUBLAS_CHECK(internal::CublasGemm(
        internal::ThreadCublasHandle(), CublasOp(transB), CublasOp(transA), num_cols_, num_rows_, k,
        alpha, B.Data(), B.Stride(), A.Data(), A.Stride(), beta, data_, stride_));
    return;
  }
#endif
  CpuView().AddMatMat(alpha, HostView(A), transA, HostView(B), transB, beta);
}

template <typename Real>
void CuMatrixBase<Real>::SymAddMat2(Real alpha, const CuMatrixBase<Real>& A,
                                    MatrixTransposeType transA, Real beta) {
  internal::CuOpScope op_scope("CuMatrix::SymAddMat2");
  CUCTX_CHECK(num_rows_ == num_cols_ && OpRows(A, transA) == num_rows_)
      << "CuMatrix::SymAddMat2: shape mismatch: this " << ShapeText(*this)
      << " must be square with the rows of op(A), A " << ShapeText(A) << " (" << TransName(transA)
      << ")";
  CUCTX_CHECK(!Overlap(*this, A)) << "CuMatrix::SymAddMat2: output " << ShapeText(*this)
                                  << " overlaps input A " << ShapeText(A);
  if (num_rows_ == 0) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    // The row-major lower triangle is the column-major upper one. In column-major terms A is
    // stored as A^T, so op(A) op(A)^T is A_cm^T A_cm for kNoTrans (CUBLAS_OP_T) and A_cm A_cm^T
    // for kTrans (CUBLAS_OP_N). syrk with k == 0 scales the triangle by beta, as BLAS specifies.
    const MatrixIndexT k = OpCols(A, transA);
    const int lda = A.Stride() > 0 ? A.Stride() : 1;
    CUCTX_CUBLAS_CHECK(internal::CublasSyrk(internal::ThreadCublasHandle(), CUBLAS_FILL_MODE_UPPER,
                                            transA == kNoTrans ? CUBLAS_OP_T : CUBLAS_OP_N,
                                            num_rows_, k, alpha, A.Data(), lda, beta, data_,
                                            stride_));
    return;
  }
#endif
  CpuView().SymAddMat2(alpha, HostView(A), transA, beta);
}

template <typename Real>
void CuMatrixBase<Real>::AddDiagVecMat(Real alpha, const CuVectorBase<Real>& v,
                                       const CuMatrixBase<Real>& M, MatrixTransposeType transM,
                                       Real beta) {
  internal::CuOpScope op_scope("CuMatrix::AddDiagVecMat");
  CUCTX_CHECK(OpRows(M, transM) == num_rows_ && OpCols(M, transM) == num_cols_ &&
              v.Dim() == num_rows_)
      << "CuMatrix::AddDiagVecMat: shape mismatch: v has dimension " << v.Dim() << ", M is "
      << ShapeText(M) << " (" << TransName(transM) << "), this is " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(*this, v)) << "CuMatrix::AddDiagVecMat: v (dimension " << v.Dim()
                                  << ") overlaps this " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(*this, M) || (transM == kNoTrans && SameView(*this, M)))
      << "CuMatrix::AddDiagVecMat: M " << ShapeText(M) << " (" << TransName(transM)
      << ") overlaps this " << ShapeText(*this) << " other than as the same matrix";
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchAddDiagVecMat(Dim(), alpha, v.Data(), M.Data(), M.Stride(), transM == kTrans, beta,
                            data_, s);
      }))
    return;
  CpuView().AddDiagVecMat(alpha, HostView(v), HostView(M), transM, beta);
}

template <typename Real>
void CuMatrixBase<Real>::AddMatDiagVec(Real alpha, const CuMatrixBase<Real>& M,
                                       MatrixTransposeType transM, const CuVectorBase<Real>& v,
                                       Real beta) {
  internal::CuOpScope op_scope("CuMatrix::AddMatDiagVec");
  CUCTX_CHECK(OpRows(M, transM) == num_rows_ && OpCols(M, transM) == num_cols_ &&
              v.Dim() == num_cols_)
      << "CuMatrix::AddMatDiagVec: shape mismatch: M is " << ShapeText(M) << " ("
      << TransName(transM) << "), v has dimension " << v.Dim() << ", this is " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(*this, v)) << "CuMatrix::AddMatDiagVec: v (dimension " << v.Dim()
                                  << ") overlaps this " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(*this, M) || (transM == kNoTrans && SameView(*this, M)))
      << "CuMatrix::AddMatDiagVec: M " << ShapeText(M) << " (" << TransName(transM)
      << ") overlaps this " << ShapeText(*this) << " other than as the same matrix";
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchAddMatDiagVec(Dim(), alpha, M.Data(), M.Stride(), transM == kTrans, v.Data(), beta,
                            data_, s);
      }))
    return;
  CpuView().AddMatDiagVec(alpha, HostView(M), transM, HostView(v), beta);
}

template <typename Real>
void CuMatrixBase<Real>::AddVecVec(Real alpha, const CuVectorBase<Real>& a,
                                   const CuVectorBase<Real>& b) {
  internal::CuOpScope op_scope("CuMatrix::AddVecVec");
  CUCTX_CHECK(a.Dim() == num_rows_ && b.Dim() == num_cols_)
      << "CuMatrix::AddVecVec: shape mismatch: a has dimension " << a.Dim() << ", b has dimension "
      << b.Dim() << ", this is " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(*this, a) && !Overlap(*this, b))
      << "CuMatrix::AddVecVec: an input vector overlaps this " << ShapeText(*this);
  if (Empty()) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    // Column-major C^T (cols x rows) += alpha * b a^T.
    CUCTX_CUBLAS_CHECK(internal::CublasGer(internal::ThreadCublasHandle(), num_cols_, num_rows_,
                                           alpha, b.Data(), 1, a.Data(), 1, data_, stride_));
    return;
  }
#endif
  CpuView().AddVecVec(alpha, HostView(a), HostView(b));
}

template <typename Real>
Real CuMatrixBase<Real>::TraceMatMatImpl(const CuMatrixBase<Real>& A, const CuMatrixBase<Real>& B,
                                         MatrixTransposeType trans) {
  internal::CuOpScope op_scope("TraceMatMat");
  internal::CheckNotCapturing("TraceMatMat");
  CUCTX_CHECK(OpRows(B, trans) == A.NumCols() && OpCols(B, trans) == A.NumRows())
      << "TraceMatMat: A " << ShapeText(A) << " times B " << ShapeText(B) << " ("
      << TransName(trans) << ") is not square";
  if (A.Empty()) return 0;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    // tr(A B^T) = sum of A .* B; tr(A B) = sum of A .* B^T (B read in tiles): one fused pass.
    return internal::ReduceToHost<Real>([&](void* work, HostPost post) {
      LaunchDot(A.Dim(), A.Data(), B.Data(), B.Stride(), trans == kNoTrans, work, nullptr, post,
                internal::ThreadStream());
    });
  }
#endif
  return TraceMatMat(HostView(A), HostView(B), trans);
}

template <typename Real>
void CuMatrixBase<Real>::AddMatMatBatchedImpl(Real alpha, std::vector<CuSubMatrix<Real>*>& C,
                                              const std::vector<CuSubMatrix<Real>*>& A,
                                              MatrixTransposeType transA,
                                              const std::vector<CuSubMatrix<Real>*>& B,
                                              MatrixTransposeType transB, Real beta) {
  internal::CuOpScope op_scope("AddMatMatBatched");
  CUCTX_CHECK(A.size() == C.size() && B.size() == C.size())
      << "AddMatMatBatched: batch sizes differ: C has " << C.size() << ", A has " << A.size()
      << ", B has " << B.size();
  for (size_t i = 0; i < C.size(); ++i) {
    CUCTX_CHECK(A[i] != nullptr && B[i] != nullptr && C[i] != nullptr)
        << "AddMatMatBatched: null matrix in batch entry " << i;
    CheckGemm("AddMatMatBatched", *C[i], *A[i], transA, *B[i], transB);
    CUCTX_CHECK(SameDimAndStride(*A[i], *A[0]) && SameDimAndStride(*B[i], *B[0]) &&
                SameDimAndStride(*C[i], *C[0]))
        << "AddMatMatBatched: entry " << i << " (A " << ShapeText(*A[i]) << ", B "
        << ShapeText(*B[i]) << ", C " << ShapeText(*C[i])
        << ") differs in shape or stride from entry 0 (A " << ShapeText(*A[0]) << ", B "
        << ShapeText(*B[0]) << ", C " << ShapeText(*C[0]) << ")";
  }
  if (C.empty() || C[0]->Empty()) return;
#if CUCTX_HAVE_CUDA
  const MatrixIndexT k = OpCols(*A[0], transA);
  if (internal::OnGpu() && k > 0) {
    const size_t n = C.size();
    // One array [B..., A..., C...] of device pointers; B first, as in AddMatMat.
    std::vector<const void*> h_ptrs(3 * n);
    for (size_t i = 0; i < n; ++i) {
      h_ptrs[i] = B[i]->Data();
      h_ptrs[n + i] = A[i]->Data();
      h_ptrs[2 * n + i] = C[i]->Data();
    }
    void* d_ptrs = CuDevice::Instantiate().Malloc(h_ptrs.size() * sizeof(void*));
    // The upload returns once h_ptrs may be freed; the GEMM reads d_ptrs in stream order, and
    // the allocator hands d_ptrs out again only to work ordered after it on this stream.
    try {
      CopyHostToDevice(d_ptrs, h_ptrs.data(), h_ptrs.size() * sizeof(void*));
      const void* const* d_b = static_cast<const void* const*>(d_ptrs);
      void* const* d_c = static_cast<void* const*>(d_ptrs) + 2 * n;
      CUCTX_CUBLAS_CHECK(cublasGemmBatchedEx(
          internal::ThreadCublasHandle(), CublasOp(transB), CublasOp(transA), C[0]->NumCols(),
          C[0]->NumRows(), k, &alpha, d_b, internal::CublasDataType(Real()), B[0]->Stride(),
          d_b + n, internal::CublasDataType(Real()), A[0]->Stride(), &beta, d_c,
          internal::CublasDataType(Real()), C[0]->Stride(), static_cast<int>(n),
          internal::CublasComputeType(Real()), CUBLAS_GEMM_DEFAULT));
    } catch (...) {
      CuDevice::Instantiate().Free(d_ptrs);
      throw;
    }
    CuDevice::Instantiate().Free(d_ptrs);
    return;
  }
#endif
  for (size_t i = 0; i < C.size(); ++i) C[i]->AddMatMat(alpha, *A[i], transA, *B[i], transB, beta);
}

template <typename Real>
Real CuMatrixBase<Real>::VecMatVecImpl(const CuVectorBase<Real>& v1, const CuMatrixBase<Real>& M,
                                       const CuVectorBase<Real>& v2) {
  internal::CuOpScope op_scope("VecMatVec");
  internal::CheckNotCapturing("VecMatVec");
  CUCTX_CHECK(v1.Dim() == M.NumRows() && v2.Dim() == M.NumCols())
      << "VecMatVec: shape mismatch: v1 has dimension " << v1.Dim() << ", M is " << ShapeText(M)
      << ", v2 has dimension " << v2.Dim();
  Real result = 0;
  if (internal::RunOnGpu([&](CuStream) {
        CuVector<Real> mv(M.NumRows(), kUndefined);
        mv.AddMatVec(1, M, kNoTrans, v2, 0);
        result = VecVec(v1, mv);
      }))
    return result;
  return VecMatVec(HostView(v1), HostView(M), HostView(v2));
}

#define CUCTX_INSTANTIATE_BLAS_(R)                                                                \
  template void CuMatrixBase<R>::AddMatMat(R, const CuMatrixBase<R>&, MatrixTransposeType,        \
                                           const CuMatrixBase<R>&, MatrixTransposeType, R);       \
  template void CuMatrixBase<R>::SymAddMat2(R, const CuMatrixBase<R>&, MatrixTransposeType, R);   \
  template void CuMatrixBase<R>::AddDiagVecMat(R, const CuVectorBase<R>&, const CuMatrixBase<R>&, \
                                               MatrixTransposeType, R);                           \
  template void CuMatrixBase<R>::AddMatDiagVec(R, const CuMatrixBase<R>&, MatrixTransposeType,    \
                                               const CuVectorBase<R>&, R);                        \
  template void CuMatrixBase<R>::AddVecVec(R, const CuVectorBase<R>&, const CuVectorBase<R>&);    \
  template R CuMatrixBase<R>::TraceMatMatImpl(const CuMatrixBase<R>&, const CuMatrixBase<R>&,     \
                                              MatrixTransposeType);                               \
  template void CuMatrixBase<R>::AddMatMatBatchedImpl(                                            \
      R, std::vector<CuSubMatrix<R>*>&, const std::vector<CuSubMatrix<R>*>&, MatrixTransposeType, \
      const std::vector<CuSubMatrix<R>*>&, MatrixTransposeType, R);                               \
  template R CuMatrixBase<R>::VecMatVecImpl(const CuVectorBase<R>&, const CuMatrixBase<R>&,       \
                                            const CuVectorBase<R>&);
CUCTX_INSTANTIATE_BLAS_(float)
CUCTX_INSTANTIATE_BLAS_(double)
#undef CUCTX_INSTANTIATE_BLAS_

}  // namespace cuctx
