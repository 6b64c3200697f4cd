// cudamatrix/cu-sparse-matrix.cc: CuSparseMatrix (CSR on the GPU, SparseMatrix on the CPU), the
// sparse products of CuMatrixBase (cuSPARSE generic API) and TraceMatSmat.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-sparse-matrix.h"

#include "base/error.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"

#include <cuda_runtime.h>
#include <cusparse.h>
#endif

namespace cuctx {
namespace {

using internal::HostView;
using internal::Overlap;
using internal::ShapeText;

using internal::TransName;

// True when op(S) can be a rows x cols matrix. A sparse matrix without rows reports 0 columns
// (as SparseMatrix does), so its column count is not compared.
template <typename Real>
bool OpShapeIs(const CuSparseMatrix<Real>& S, MatrixTransposeType t, MatrixIndexT rows,
               MatrixIndexT cols) {
  const MatrixIndexT want_rows = t == kNoTrans ? rows : cols;
  const MatrixIndexT want_cols = t == kNoTrans ? cols : rows;
  return S.NumRows() == want_rows && (S.NumRows() == 0 || S.NumCols() == want_cols);
}

template <typename Real>
std::string SparseText(const CuSparseMatrix<Real>& S, MatrixTransposeType t) {
  return "sparse " + ShapeText(S.NumRows(), S.NumCols()) + " (" + TransName(t) + ")";
}

// Calls f(r, c, v) for every stored element of a host sparse matrix, row by row (the CPU
// fallback of the products; alpha stays in Real, unlike SparseMatrix::AddToMat's BaseFloat).
template <typename Real, typename F>
void ForEachElement(const SparseMatrix<Real>& S, F f) {
  for (MatrixIndexT r = 0; r < S.NumRows(); ++r) {
    const SparseVector<Real>& row = S.Row(r);
    for (MatrixIndexT i = 0; i < row.NumElements(); ++i)
      f(r, row.Data()[i].first, row.Data()[i].second);
  }
}

// this = beta * this, with beta == 0 clearing (NaNs included), as GEMM does.
template <typename Real>
void ScaleOrZero(Real beta, CuMatrixBase<Real>* M) {
  if (beta == 0)
    M->SetZero();
  else if (beta != 1)
    M->Scale(beta);
}

int32 ReadDeviceInt(const int32* d_ptr) {
  int32 h = 0;
  CopyDeviceToHost(&h, d_ptr, sizeof(int32));  // waits for the stream
  return h;
}

#if CUCTX_HAVE_CUDA
template <typename Real>
cudaDataType CudaType();
template <>
cudaDataType CudaType<float>() {
  return CUDA_R_32F;
}
template <>
cudaDataType CudaType<double>() {
  return CUDA_R_64F;
}

// Owners of cuSPARSE descriptors (destroyed even when a later call throws).
class SpMatDescr {
 public:
  template <typename Real>
  explicit SpMatDescr(const CuSparseMatrix<Real>& S) {
    CUCTX_CUSPARSE_CHECK(cusparseCreateConstCsr(&d_, S.NumRows(), S.NumCols(), S.NumElements(),
                                                S.CsrRowOffsets(), S.CsrColIndexes(), S.CsrValues(),
                                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                                CUSPARSE_INDEX_BASE_ZERO, CudaType<Real>()));
  }
  ~SpMatDescr() {
    if (d_ == nullptr) return;
    const cusparseStatus_t s = cusparseDestroySpMat(d_);
    if (s != CUSPARSE_STATUS_SUCCESS)
      internal::WarnStatus(internal::kCusparseLib, s, "cusparseDestroySpMat", __func__, __FILE__,
                           __LINE__);
  }
  SpMatDescr(const SpMatDescr&) = delete;
  SpMatDescr& operator=(const SpMatDescr&) = delete;
  cusparseConstSpMatDescr_t Get() const { return d_; }

 private:
  cusparseConstSpMatDescr_t d_ = nullptr;
};

// A dense descriptor of a row-major CuMatrixBase. order == CUSPARSE_ORDER_ROW describes it as it
// is (rows x cols, ld = stride >= cols); CUSPARSE_ORDER_COL describes the same memory as its
// transpose (cols x rows column-major, ld = stride >= cols, the new row count).
class DnMatDescr {
 public:
  template <typename Real>
  DnMatDescr(const CuMatrixBase<Real>& M, cusparseOrder_t order) {
    const bool row = order == CUSPARSE_ORDER_ROW;
    CUCTX_CUSPARSE_CHECK(cusparseCreateDnMat(&d_, row ? M.NumRows() : M.NumCols(),
                                             row ? M.NumCols() : M.NumRows(), M.Stride(),
                                             const_cast<Real*>(M.Data()), CudaType<Real>(), order));
  }
  ~DnMatDescr() {
    if (d_ == nullptr) return;
    const cusparseStatus_t s = cusparseDestroyDnMat(d_);
    if (s != CUSPARSE_STATUS_SUCCESS)
      internal::WarnStatus(internal::kCusparseLib, s, "cusparseDestroyDnMat", __func__, __FILE__,
                           __LINE__);
  }
  DnMatDescr(const DnMatDescr&) = delete;
  DnMatDescr& operator=(const DnMatDescr&) = delete;
  cusparseDnMatDescr_t Get() const { return d_; }

 private:
  cusparseDnMatDescr_t d_ = nullptr;
};

// C = alpha * op(S) B + beta * C through cusparseSpMM, with the workspace from the caching
// allocator. The caller has made every operand non-empty and S.NumElements() > 0.
template <typename Real>
void SpMM(cusparseOperation_t op_s, Real alpha, const CuSparseMatrix<Real>& S,
          const CuMatrixBase<Real>& B, Real beta, CuMatrixBase<Real>* C, cusparseOrder_t order) {
  cusparseHandle_t handle = GetCusparseHandle();
  SpMatDescr s(S);
  DnMatDescr b(B, order), c(*C, order);
  const cusparseOperation_t op_b = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t bytes = 0;
  const cusparseStatus_t status =
      cusparseSpMM_bufferSize(handle, op_s, op_b, &alpha, s.Get(), b.Get(), &beta, c.Get(),
                              CudaType<Real>(), CUSPARSE_SPMM_ALG_DEFAULT, &bytes);
  if (status == CUSPARSE_STATUS_NOT_SUPPORTED && op_s == CUSPARSE_OPERATION_TRANSPOSE) {
    // Should a cuSPARSE version not offer op(A) = A^T for this layout, multiply by an explicit
    // transpose (csr2csc) instead.
    CuSparseMatrix<Real> transposed;
    transposed.CopyFromSmat(S, kTrans);
    SpMM(CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, transposed, B, beta, C, order);
    return;
  }
  if (status != CUSPARSE_STATUS_SUCCESS)
    internal::ThrowStatus(internal::kCusparseLib, status, "cusparseSpMM_bufferSize", __func__,
                          __FILE__, __LINE__);
  // The allocator hands this block out again only to work ordered after the SpMM on this stream.
  internal::ScopedStorage work(bytes);
  CUCTX_CUSPARSE_CHECK(cusparseSpMM(handle, op_s, op_b, &alpha, s.Get(), b.Get(), &beta, c.Get(),
                                    CudaType<Real>(), CUSPARSE_SPMM_ALG_DEFAULT, work.Data()));
}

// The GPU branch of CuMatrixBase::AddMatSmat (see internal::MatSmatPath): C (m x n) = beta * C +
// alpha * A (m x k) op(B). cuSPARSE multiplies sparse on the left, so every path computes C^T =
// op(B)^T A^T. A row-major matrix read as column-major with the same ld is its transpose, so A^T
// and C^T are A and C described with CUSPARSE_ORDER_COL (k x m and n x m, ld = stride). op(B)^T
// is B^T for kNoTrans and B itself for kTrans. The caller has made every operand non-empty and
// B.NumElements() > 0.
template <typename Real>
void MatSmatOnGpu(Real alpha, const CuMatrixBase<Real>& A, const CuSparseMatrix<Real>& B,
                  MatrixTransposeType transB, Real beta, CuMatrixBase<Real>* C) {
  const internal::MatSmatPath path = internal::GetMatSmatPath();
  if (path == internal::MatSmatPath::kTransposeOp) {
    if (beta == 0) C->SetZero();  // cuSPARSE may read C even when beta == 0
    SpMM(transB == kTrans ? CUSPARSE_OPERATION_NON_TRANSPOSE : CUSPARSE_OPERATION_TRANSPOSE, alpha,
         B, A, beta, C, CUSPARSE_ORDER_COL);
    return;
  }
  // S = op(B)^T as CSR, multiplied untransposed. While a graph is captured, kNoTrans takes
  // cuSPARSE's transposed product instead (see the NOTE ON the transpose cache in
  // cu-sparse-matrix.h).
  const CuSparseMatrix<Real>* S = &B;
  if (transB == kNoTrans) {
    if (internal::ThreadCapturesAnyGraph()) {
      if (beta == 0) C->SetZero();
      SpMM(CUSPARSE_OPERATION_TRANSPOSE, alpha, B, A, beta, C, CUSPARSE_ORDER_COL);
      return;
    }
    S = &B.CachedTranspose();
  }
  if (path == internal::MatSmatPath::kColMajor) {
    if (beta == 0) C->SetZero();
    SpMM(CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, *S, A, beta, C, CUSPARSE_ORDER_COL);
    return;
  }
  // kRowMajor: the same row-major SpMM as AddSmatMat, S (n x k) times A^T (k x m) into C^T
  // (n x m), on transposed copies; then C = beta * C + (C^T)^T, the tiled transpose of the
  // element-wise family (which also clears NaNs in C for beta == 0).
  const MatrixIndexT m = A.NumRows(), k = A.NumCols(), n = C->NumCols();
  CuMatrix<Real> a_t(k, m, kUndefined);
  a_t.CopyFromMat(A, kTrans);
  CuMatrix<Real> c_t(n, m, kSetZero);  // zeroed: cuSPARSE may read C even when beta == 0
  SpMM(CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, *S, a_t, Real(0), &c_t, CUSPARSE_ORDER_ROW);
  if (beta == 0)
    C->CopyFromMat(c_t, kTrans);
  else
    LaunchAddMat(C->Dim(), Real(1), c_t.Data(), c_t.Stride(), true, beta, C->Data(),
                 internal::ThreadStream());
}
#endif  // CUCTX_HAVE_CUDA

// The path of CuMatrixBase::AddMatSmat on the GPU (internal::MatSmatPath), process-wide.
std::atomic<int>& MatSmatPathSetting() {
  static std::atomic<int> path{static_cast<int>(internal::MatSmatPath::kRowMajor)};
  return path;
}

}  // namespace

// ---- construction and shape -------------------------------------------------------------------

template <typename Real>
void CuSparseMatrix<Real>::ShapeFromHost() {
  num_rows_ = host_.NumRows();
  num_cols_ = host_.NumCols();
  nnz_ = host_.NumElements();
}

template <typename Real>
void CuSparseMatrix<Real>::AllocateCsr(MatrixIndexT rows, MatrixIndexT cols, MatrixIndexT nnz) {
  transpose_.reset();
  num_rows_ = rows;
  num_cols_ = rows > 0 ? cols : 0;
  nnz_ = nnz;
  row_offsets_.Resize(rows > 0 ? rows + 1 : 0, kUndefined);
  col_indexes_.Resize(nnz, kUndefined);
  values_.Resize(nnz, kUndefined);
}

template <typename Real>
CuSparseMatrix<Real>::CuSparseMatrix(const CuArray<int32>& indexes, int32 dim,
                                     MatrixTransposeType trans) {
  InitOneHot(indexes, nullptr, dim, trans);
}

template <typename Real>
CuSparseMatrix<Real>::CuSparseMatrix(const CuArray<int32>& indexes,
                                     const CuVectorBase<Real>& weights, int32 dim,
                                     MatrixTransposeType trans) {
  CUCTX_CHECK(weights.Dim() == indexes.Dim())
      << "CuSparseMatrix: " << indexes.Dim() << " indexes but " << weights.Dim() << " weights";
  InitOneHot(indexes, &weights, dim, trans);
}

template <typename Real>
void CuSparseMatrix<Real>::InitOneHot(const CuArray<int32>& indexes,
                                      const CuVectorBase<Real>* weights, int32 dim,
                                      MatrixTransposeType trans) {
  internal::CuOpScope op_scope("CuSparseMatrix::InitOneHot");
  CUCTX_CHECK(dim >= 0) << "CuSparseMatrix: negative dimension " << dim;
  const int32 n = indexes.Dim();
  // The first entry at or above dim, for the error message (n when there is none).
  int32 bad = n;
  if (internal::RunOnGpu([&](CuStream s) {
        if (n == 0) {
          AllocateCsr(0, 0, 0);
          return;
        }
        CuArray<int32> counts(n + 1, kUndefined);
        internal::ScopedStorage d_bad(sizeof(int32));
        LaunchFill(d_bad.Data(), 1, sizeof(int32), static_cast<uint64_t>(n), s);
        const Real* w = weights != nullptr ? weights->Data() : nullptr;
        LaunchOneHotCounts(n, indexes.Data(), w, dim, counts.Data(),
                           static_cast<int32*>(d_bad.Data()), s);
        // The rows of the untransposed matrix (n x dim).
        CuSparseMatrix<Real> rows;
        rows.row_offsets_.Resize(n + 1, kUndefined);
        const size_t scan_bytes = SparseScanWorkspaceBytes(n + 1);
        internal::ScopedStorage scan(scan_bytes);
        LaunchExclusiveScan(counts.Data(), n + 1, rows.row_offsets_.Data(), scan.Data(), scan_bytes,
                            s);
        bad = ReadDeviceInt(static_cast<const int32*>(d_bad.Data()));
        if (bad < n) {
          CUCTX_ERR << "CuSparseMatrix: indexes[" << bad
                    << "] = " << ReadDeviceInt(indexes.Data() + bad)
                    << " is out of range for dimension " << dim;
        }
        const int32 nnz = ReadDeviceInt(rows.row_offsets_.Data() + n);
        rows.num_rows_ = n;
        rows.num_cols_ = dim;
        rows.nnz_ = nnz;
        rows.col_indexes_.Resize(nnz, kUndefined);
        rows.values_.Resize(nnz, kUndefined);
        LaunchOneHotFill(n, indexes.Data(), w, rows.row_offsets_.Data(), rows.col_indexes_.Data(),
                         rows.values_.Data(), s);
        if (trans == kNoTrans)
          Swap(&rows);
        else
          CopyFromSmat(rows, kTrans);
      }))
    return;
  std::vector<int32> h_indexes;
  indexes.CopyToVec(&h_indexes);
  for (int32 i = 0; i < n && bad == n; ++i)
    if (h_indexes[i] >= dim) bad = i;
  if (bad < n) {
    CUCTX_ERR << "CuSparseMatrix: indexes[" << bad << "] = " << h_indexes[bad]
              << " is out of range for dimension " << dim;
  }
  SparseMatrix<Real> m = weights != nullptr
                             ? SparseMatrix<Real>(h_indexes, HostView(*weights), dim, trans)
                             : SparseMatrix<Real>(h_indexes, dim, trans);
  host_.Swap(&m);
  ShapeFromHost();
}

template <typename Real>
template <typename OtherReal>
void CuSparseMatrix<Real>::CopyFromSmat(const SparseMatrix<OtherReal>& smat) {
  internal::CuOpScope op_scope("CuSparseMatrix::CopyFromSmat(from host)");
  if (internal::RunOnGpu([&](CuStream) {
        const MatrixIndexT rows = smat.NumRows(), nnz = smat.NumElements();
        std::vector<int32> h_offsets(rows > 0 ? rows + 1 : 0), h_cols(nnz);
        Vector<Real> h_values(nnz, kUndefined);
        MatrixIndexT k = 0;
        for (MatrixIndexT r = 0; r < rows; ++r) {
          h_offsets[r] = k;
          const SparseVector<OtherReal>& row = smat.Row(r);
          for (MatrixIndexT i = 0; i < row.NumElements(); ++i, ++k) {
            h_cols[k] = row.Data()[i].first;
            h_values(k) = static_cast<Real>(row.Data()[i].second);
          }
        }
        if (rows > 0) h_offsets[rows] = k;
        AllocateCsr(rows, smat.NumCols(), nnz);
        row_offsets_.CopyFromVec(h_offsets);
        col_indexes_.CopyFromVec(h_cols);
        values_.CopyFromVec(h_values);
      }))
    return;
  host_.CopyFromSmat(smat);
  ShapeFromHost();
}

template <typename Real>
void CuSparseMatrix<Real>::CopyFromSmat(const CuSparseMatrix<Real>& other,
                                        MatrixTransposeType trans) {
  internal::CuOpScope op_scope("CuSparseMatrix::CopyFromSmat");
  if (&other == this && trans == kNoTrans) return;
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    CuSparseMatrix<Real> out;
    if (trans == kNoTrans) {
      out.AllocateCsr(other.num_rows_, other.num_cols_, other.nnz_);
      out.row_offsets_.CopyFromArray(other.row_offsets_);
      out.col_indexes_.CopyFromArray(other.col_indexes_);
      out.values_.CopyFromVec(other.values_);
      Swap(&out);
      return;
    }
    // cusparseCsr2cscEx2 does not replay correctly from a CUDA graph (CUDA 13.0: its scatter
    // kernel reads out of bounds at replay), so it is not captured.
    if (internal::ThreadCapturesAnyGraph())
      CUCTX_ERR << "CuSparseMatrix::CopyFromSmat(kTrans): a sparse transpose cannot be captured "
                   "in a CUDA graph (cusparseCsr2cscEx2 does not replay correctly); transpose "
                   "before the capture";
    // The CSC form of a matrix is the CSR form of its transpose, the rows of each column in
    // increasing order.
    out.AllocateCsr(other.num_cols_, other.num_rows_, other.nnz_);
    if (out.num_rows_ > 0 && out.nnz_ == 0) out.row_offsets_.SetZero();
    if (out.nnz_ > 0) {
      cusparseHandle_t handle = GetCusparseHandle();
      size_t bytes = 0;
      CUCTX_CUSPARSE_CHECK(cusparseCsr2cscEx2_bufferSize(
          handle, other.num_rows_, other.num_cols_, other.nnz_, other.values_.Data(),
          other.row_offsets_.Data(), other.col_indexes_.Data(), out.values_.Data(),
          out.row_offsets_.Data(), out.col_indexes_.Data(), CudaType<Real>(),
          CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG_DEFAULT, &bytes));
      internal::ScopedStorage work(bytes);
      CUCTX_CUSPARSE_CHECK(
          cusparseCsr2cscEx2(handle, other.num_rows_, other.num_cols_, other.nnz_,
                             other.values_.Data(), other.row_offsets_.Data(),
                             other.col_indexes_.Data(), out.values_.Data(), out.row_offsets_.Data(),
                             out.col_indexes_.Data(), CudaType<Real>(), CUSPARSE_ACTION_NUMERIC,
                             CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG_DEFAULT, work.Data()));
    }
    Swap(&out);
    return;
  }
#endif
  SparseMatrix<Real> h(other.host_, trans);
  host_.Swap(&h);
  ShapeFromHost();
}

template <typename Real>
template <typename OtherReal>
void CuSparseMatrix<Real>::CopyToSmat(SparseMatrix<OtherReal>* smat) const {
  internal::CuOpScope op_scope("CuSparseMatrix::CopyToSmat");
  CUCTX_CHECK(smat != nullptr) << "CuSparseMatrix::CopyToSmat: null destination";
  if (internal::RunOnGpu([&](CuStream) {
        std::vector<int32> h_offsets, h_cols;
        row_offsets_.CopyToVec(&h_offsets);
        col_indexes_.CopyToVec(&h_cols);
        Vector<Real> h_values(nnz_, kUndefined);
        values_.CopyToVec(&h_values);
        std::vector<std::vector<std::pair<MatrixIndexT, OtherReal>>> pairs(num_rows_);
        for (MatrixIndexT r = 0; r < num_rows_; ++r) {
          pairs[r].reserve(h_offsets[r + 1] - h_offsets[r]);
          for (int32 k = h_offsets[r]; k < h_offsets[r + 1]; ++k)
            pairs[r].emplace_back(h_cols[k], static_cast<OtherReal>(h_values(k)));
        }
        SparseMatrix<OtherReal> result(num_cols_, pairs);
        smat->Swap(&result);
      }))
    return;
  smat->CopyFromSmat(host_);
}

template <typename Real>
void CuSparseMatrix<Real>::SelectRows(const CuArray<int32>& row_indexes,
                                      const CuSparseMatrix<Real>& input) {
  internal::CuOpScope op_scope("CuSparseMatrix::SelectRows");
  CUCTX_CHECK(&input != this) << "CuSparseMatrix::SelectRows: input must not be *this";
  const int32 n = row_indexes.Dim();
  int32 bad = n;
  if (internal::RunOnGpu([&](CuStream s) {
        CuSparseMatrix<Real> out;
        if (n == 0) {
          Swap(&out);
          return;
        }
        CuArray<int32> counts(n + 1, kUndefined);
        internal::ScopedStorage d_bad(sizeof(int32));
        LaunchFill(d_bad.Data(), 1, sizeof(int32), static_cast<uint64_t>(n), s);
        LaunchSelectRowsCounts(n, row_indexes.Data(), input.num_rows_, input.CsrRowOffsets(),
                               counts.Data(), static_cast<int32*>(d_bad.Data()), s);
        out.row_offsets_.Resize(n + 1, kUndefined);
        const size_t scan_bytes = SparseScanWorkspaceBytes(n + 1);
        internal::ScopedStorage scan(scan_bytes);
        LaunchExclusiveScan(counts.Data(), n + 1, out.row_offsets_.Data(), scan.Data(), scan_bytes,
                            s);
        bad = ReadDeviceInt(static_cast<const int32*>(d_bad.Data()));
        if (bad < n) {
          CUCTX_ERR << "CuSparseMatrix::SelectRows: row_indexes[" << bad
                    << "] = " << ReadDeviceInt(row_indexes.Data() + bad)
                    << " is outside the input's rows [0, " << input.num_rows_ << ")";
        }
        out.num_rows_ = n;
        out.num_cols_ = input.num_cols_;
        out.nnz_ = ReadDeviceInt(out.row_offsets_.Data() + n);
        out.col_indexes_.Resize(out.nnz_, kUndefined);
        out.values_.Resize(out.nnz_, kUndefined);
        LaunchSelectRowsCopy(n, row_indexes.Data(), input.CsrRowOffsets(), input.CsrColIndexes(),
                             input.CsrValues(), out.row_offsets_.Data(), out.col_indexes_.Data(),
                             out.values_.Data(), s);
        Swap(&out);
      }))
    return;
  std::vector<int32> h_rows;
  row_indexes.CopyToVec(&h_rows);
  for (int32 i = 0; i < n && bad == n; ++i)
    if (h_rows[i] < 0 || h_rows[i] >= input.num_rows_) bad = i;
  if (bad < n) {
    CUCTX_ERR << "CuSparseMatrix::SelectRows: row_indexes[" << bad << "] = " << h_rows[bad]
              << " is outside the input's rows [0, " << input.num_rows_ << ")";
  }
  SparseMatrix<Real> out;
  out.SelectRows(h_rows, input.host_);
  host_.Swap(&out);
  ShapeFromHost();
}

template <typename Real>
void CuSparseMatrix<Real>::Swap(CuSparseMatrix<Real>* other) {
  std::swap(num_rows_, other->num_rows_);
  std::swap(num_cols_, other->num_cols_);
  std::swap(nnz_, other->nnz_);
  row_offsets_.Swap(&other->row_offsets_);
  col_indexes_.Swap(&other->col_indexes_);
  values_.Swap(&other->values_);
  host_.Swap(&other->host_);
  transpose_.swap(other->transpose_);
}

template <typename Real>
const CuSparseMatrix<Real>& CuSparseMatrix<Real>::CachedTranspose() const {
  if (internal::ThreadCapturesAnyGraph())
    CUCTX_ERR << "CuSparseMatrix::CachedTranspose: not available while this thread captures a "
                 "CUDA graph (see the NOTE ON the transpose cache)";
  if (transpose_ == nullptr) {
    auto t = std::make_unique<CuSparseMatrix<Real>>();
    t->CopyFromSmat(*this, kTrans);
    transpose_ = std::move(t);
  }
  return *transpose_;
}

// ---- reductions, copies and I/O ----------------------------------------------------------------

template <typename Real>
Real CuSparseMatrix<Real>::Sum() const {
  internal::CuOpScope op_scope("CuSparseMatrix::Sum");
  if (nnz_ == 0) return 0;
  if (internal::OnGpu()) return values_.Sum();
  return host_.Sum();
}

template <typename Real>
Real CuSparseMatrix<Real>::FrobeniusNorm() const {
  internal::CuOpScope op_scope("CuSparseMatrix::FrobeniusNorm");
  if (nnz_ == 0) return 0;
  if (internal::OnGpu()) return std::sqrt(VecVec(values_, values_));
  return host_.FrobeniusNorm();
}

template <typename Real>
template <typename OtherReal>
void CuSparseMatrix<Real>::CopyToMat(CuMatrixBase<OtherReal>* M, MatrixTransposeType trans) const {
  internal::CuOpScope op_scope("CuSparseMatrix::CopyToMat");
  CUCTX_CHECK(M != nullptr) << "CuSparseMatrix::CopyToMat: null destination";
  CUCTX_CHECK(OpShapeIs(*this, trans, M->NumRows(), M->NumCols()))
      << "CuSparseMatrix::CopyToMat: " << SparseText(*this, trans)
      << " does not match the destination " << ShapeText(*M);
  if (M->NumRows() == 0 || M->NumCols() == 0) return;
  M->SetZero();
  if (nnz_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchCsrScatter(num_rows_, CsrRowOffsets(), CsrColIndexes(), CsrValues(), trans == kTrans,
                         Real(1), false, M->Dim(), M->Data(), s);
      }))
    return;
  SubMatrix<OtherReal> view = HostView(*M);
  host_.CopyToMat(&view, trans);
}

template <typename Real>
void CuSparseMatrix<Real>::Write(std::ostream& os, bool binary) const {
  if (internal::RunOnGpu([&](CuStream) {
        SparseMatrix<Real> h;
        CopyToSmat(&h);
        h.Write(os, binary);
      }))
    return;
  host_.Write(os, binary);
}

template <typename Real>
void CuSparseMatrix<Real>::Read(std::istream& is, bool binary) {
  SparseMatrix<Real> h;
  h.Read(is, binary);
  CopyFromSmat(h);
}

// ---- products with dense matrices --------------------------------------------------------------

template <typename Real>
void CuMatrixBase<Real>::AddSmat(Real alpha, const CuSparseMatrix<Real>& A,
                                 MatrixTransposeType trans) {
  internal::CuOpScope op_scope("CuMatrix::AddSmat");
  CUCTX_CHECK(OpShapeIs(A, trans, num_rows_, num_cols_))
      << "CuMatrix::AddSmat: " << SparseText(A, trans) << " does not match *this "
      << ShapeText(*this);
  if (Empty() || A.NumElements() == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchCsrScatter(A.NumRows(), A.CsrRowOffsets(), A.CsrColIndexes(), A.CsrValues(),
                         trans == kTrans, alpha, true, Dim(), data_, s);
      }))
    return;
  SubMatrix<Real> view = CpuView();
  ForEachElement(A.HostMatrix(), [&](MatrixIndexT r, MatrixIndexT c, Real v) {
    if (trans == kTrans)
      view(c, r) += alpha * v;
    else
      view(r, c) += alpha * v;
  });
}

template <typename Real>
void CuMatrixBase<Real>::AddSmatMat(Real alpha, const CuSparseMatrix<Real>& A,
                                    MatrixTransposeType transA, const CuMatrixBase<Real>& B,
                                    Real beta) {
  internal::CuOpScope op_scope("CuMatrix::AddSmatMat");
  CUCTX_CHECK(OpShapeIs(A, transA, num_rows_, B.NumRows()) && B.NumCols() == num_cols_)
      << "CuMatrix::AddSmatMat: shape mismatch: " << SparseText(A, transA) << " times B "
      << ShapeText(B) << " into " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(*this, B)) << "CuMatrix::AddSmatMat: output " << ShapeText(*this)
                                  << " overlaps input B " << ShapeText(B);
  if (Empty()) return;
  if (A.NumElements() == 0) {
    ScaleOrZero(beta, this);
    return;
  }
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    if (beta == 0) SetZero();  // cuSPARSE may read C even when beta == 0
    // Row-major throughout: C (m x n, ld = stride) = alpha * op(A) B + C, with B k x n row-major
    // (ld = B.Stride()).
    SpMM(transA == kTrans ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE, alpha,
         A, B, beta, this, CUSPARSE_ORDER_ROW);
    return;
  }
#endif
  ScaleOrZero(beta, this);
  SubMatrix<Real> c = CpuView();
  const SubMatrix<Real> b = HostView(B);
  // Stored element (r, s, v) of A adds alpha * v * (row s of B) to row r of this (kNoTrans), or
  // alpha * v * (row r of B) to row s (kTrans).
  ForEachElement(A.HostMatrix(), [&](MatrixIndexT r, MatrixIndexT s, Real v) {
    const MatrixIndexT out = transA == kTrans ? s : r, in = transA == kTrans ? r : s;
    c.Row(out).AddVec(alpha * v, b.Row(in));
  });
}

template <typename Real>
void CuMatrixBase<Real>::AddMatSmat(Real alpha, const CuMatrixBase<Real>& A,
                                    const CuSparseMatrix<Real>& B, MatrixTransposeType transB,
                                    Real beta) {
  internal::CuOpScope op_scope("CuMatrix::AddMatSmat");
  CUCTX_CHECK(OpShapeIs(B, transB, A.NumCols(), num_cols_) && A.NumRows() == num_rows_)
      << "CuMatrix::AddMatSmat: shape mismatch: A " << ShapeText(A) << " times "
      << SparseText(B, transB) << " into " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(*this, A)) << "CuMatrix::AddMatSmat: output " << ShapeText(*this)
                                  << " overlaps input A " << ShapeText(A);
  if (Empty()) return;
  if (B.NumElements() == 0) {
    ScaleOrZero(beta, this);
    return;
  }
#if CUCTX_HAVE_CUDA
  if (internal::OnGpu()) {
    MatSmatOnGpu(alpha, A, B, transB, beta, this);
    return;
  }
#endif
  ScaleOrZero(beta, this);
  SubMatrix<Real> c = CpuView();
  const SubMatrix<Real> a = HostView(A);
  // Stored element (r, s, v) of B is op(B)(r, s) (kNoTrans) or op(B)(s, r) (kTrans); op(B)(i, j)
  // adds alpha * v * (column i of A) to column j of this.
  ForEachElement(B.HostMatrix(), [&](MatrixIndexT r, MatrixIndexT s, Real v) {
    const MatrixIndexT i = transB == kTrans ? s : r, j = transB == kTrans ? r : s;
    for (MatrixIndexT row = 0; row < num_rows_; ++row) c(row, j) += alpha * v * a(row, i);
  });
}

namespace internal {
void SetMatSmatPath(MatSmatPath path) {
  MatSmatPathSetting().store(static_cast<int>(path), std::memory_order_relaxed);
}
MatSmatPath GetMatSmatPath() {
  return static_cast<MatSmatPath>(MatSmatPathSetting().load(std::memory_order_relaxed));
}
}  // namespace internal

template <typename Real>
Real TraceMatSmat(const CuMatrixBase<Real>& A, const CuSparseMatrix<Real>& B,
                  MatrixTransposeType trans) {
  internal::CuOpScope op_scope("TraceMatSmat");
  internal::CheckNotCapturing("TraceMatSmat");
  CUCTX_CHECK(OpShapeIs(B, trans, A.NumCols(), A.NumRows()))
      << "TraceMatSmat: A " << ShapeText(A) << " times " << SparseText(B, trans)
      << " is not square";
  if (B.NumElements() == 0) return 0;
  Real trace = 0;
  if (internal::RunOnGpu([&](CuStream s) {
        CuVector<Real> terms(B.NumElements(), kUndefined);
        LaunchCsrTraceTerms(B.NumRows(), B.CsrRowOffsets(), B.CsrColIndexes(), B.CsrValues(),
                            A.Dim(), A.Data(), trans == kTrans, terms.Data(), s);
        trace = terms.Sum();
      }))
    return trace;
  return TraceMatSmat(HostView(A), B.HostMatrix(), trans);
}

#define CUCTX_INSTANTIATE_CU_SPARSE_(R)                                                          \
  template class CuSparseMatrix<R>;                                                              \
  template CuSparseMatrix<R>::CuSparseMatrix(const SparseMatrix<float>&);                        \
  template CuSparseMatrix<R>::CuSparseMatrix(const SparseMatrix<double>&);                       \
  template void CuSparseMatrix<R>::CopyToMat(CuMatrixBase<float>*, MatrixTransposeType) const;   \
  template void CuSparseMatrix<R>::CopyToMat(CuMatrixBase<double>*, MatrixTransposeType) const;  \
  template void CuSparseMatrix<R>::CopyToSmat(SparseMatrix<float>*) const;                       \
  template void CuSparseMatrix<R>::CopyToSmat(SparseMatrix<double>*) const;                      \
  template void CuSparseMatrix<R>::CopyFromSmat(const SparseMatrix<float>&);                     \
  template void CuSparseMatrix<R>::CopyFromSmat(const SparseMatrix<double>&);                    \
  template void CuMatrixBase<R>::AddSmat(R, const CuSparseMatrix<R>&, MatrixTransposeType);      \
  template void CuMatrixBase<R>::AddSmatMat(R, const CuSparseMatrix<R>&, MatrixTransposeType,    \
                                            const CuMatrixBase<R>&, R);                          \
  template void CuMatrixBase<R>::AddMatSmat(R, const CuMatrixBase<R>&, const CuSparseMatrix<R>&, \
                                            MatrixTransposeType, R);                             \
  template R TraceMatSmat(const CuMatrixBase<R>&, const CuSparseMatrix<R>&, MatrixTransposeType);
CUCTX_INSTANTIATE_CU_SPARSE_(float)
CUCTX_INSTANTIATE_CU_SPARSE_(double)
#undef CUCTX_INSTANTIATE_CU_SPARSE_

}  // namespace cuctx
