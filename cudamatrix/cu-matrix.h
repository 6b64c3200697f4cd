// cudamatrix/cu-matrix.h: CuMatrixBase / CuMatrix / CuSubMatrix, row-major matrices on the GPU.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_MATRIX_H_
#define CUCTX_CUDAMATRIX_CU_MATRIX_H_

#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/cu-value.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix-common.h"
#include "matrix/matrix.h"

#include <istream>
#include <ostream>

namespace cuctx {

template <typename Real>
class CuMatrix;
template <typename Real>
class CuSubMatrix;
template <typename T>
class CuArray;  // FindRowMaxId output (cudamatrix/cu-array.h)
template <typename Real>
class CuSparseMatrix;  // operand of the sparse products (cudamatrix/cu-sparse-matrix.h)

// A row-major NumRows() x NumCols() matrix of Real (float or double) whose row r starts
// Stride() elements after row r - 1 (Stride() >= NumCols()).
//
// Memory: when a GPU is selected (CuDevice::Enabled()) the elements live in device memory
// (CuDevice::MallocPitch, so each row starts on a 256-byte boundary; kStrideEqualNumCols uses
// CuDevice::Malloc) and every method is asynchronous on this thread's stream (cudaStreamPerThread):
// it queues kernels, copies or cuBLAS calls and returns, except methods that return a value or
// data to the host (Sum, FrobeniusNorm, ApproxEqual, CopyToMat, element reads, Write), which wait
// for that stream. Without a GPU the elements live in 16-byte aligned host memory with the
// padded stride of Matrix, and every method runs the matrix/ operation on a SubMatrix view, so
// both modes compute the same thing. The mode must not change while matrices exist.
//
// CuMatrixBase owns nothing; CuMatrix owns its memory; CuSubMatrix is a view that must not outlive
// what it views. Not thread-safe: one thread uses an object at a time. Misuse (shape mismatch,
// out-of-range index, aliasing that a method forbids) throws cuctx::Error naming both shapes or
// the bad index.
template <typename Real>
class CuMatrixBase {
 public:
  MatrixIndexT NumRows() const { return num_rows_; }
  MatrixIndexT NumCols() const { return num_cols_; }
  MatrixIndexT Stride() const { return stride_; }
  // The shape as kernels take it.
  MatrixDim Dim() const { return MatrixDim{num_rows_, num_cols_, stride_}; }
  // Bytes spanned by the rows, stride included.
  size_t SizeInBytes() const {
    return static_cast<size_t>(num_rows_) * static_cast<size_t>(stride_) * sizeof(Real);
  }
  // Device pointer in GPU mode (host pointer otherwise); nullptr when empty.
  Real* Data() { return data_; }
  const Real* Data() const { return data_; }
  // Pointer to row r; throws on a bad row.
  Real* RowData(MatrixIndexT r);
  const Real* RowData(MatrixIndexT r) const;

  // Views. All throw if the range is outside the matrix.
  CuSubVector<Real> Row(MatrixIndexT r);
  const CuSubVector<Real> Row(MatrixIndexT r) const;
  CuSubMatrix<Real> Range(MatrixIndexT ro, MatrixIndexT nr, MatrixIndexT co, MatrixIndexT nc);
  const CuSubMatrix<Real> Range(MatrixIndexT ro, MatrixIndexT nr, MatrixIndexT co,
                                MatrixIndexT nc) const;
  CuSubMatrix<Real> RowRange(MatrixIndexT ro, MatrixIndexT nr);
  const CuSubMatrix<Real> RowRange(MatrixIndexT ro, MatrixIndexT nr) const;
  CuSubMatrix<Real> ColRange(MatrixIndexT co, MatrixIndexT nc);
  const CuSubMatrix<Real> ColRange(MatrixIndexT co, MatrixIndexT nc) const;

  // One element (a transfer per access in GPU mode; see CuValue). Throws on a bad index.
  CuValue<Real> operator()(MatrixIndexT r, MatrixIndexT c);
  Real operator()(MatrixIndexT r, MatrixIndexT c) const;

  // this = src (kNoTrans) or src^T (kTrans), converting precision. A Cu source is converted and
  // transposed on the device (tiled shared-memory transpose, coalesced both ways); a host source is
  // transferred at its own precision and layout, then converted on the device. Throws if the
  // shapes do not match, or if a transposing copy's source overlaps this matrix.
  template <typename OtherReal>
  void CopyFromMat(const CuMatrixBase<OtherReal>& src, MatrixTransposeType trans = kNoTrans);
  template <typename OtherReal>
  void CopyFromMat(const MatrixBase<OtherReal>& src, MatrixTransposeType trans = kNoTrans);
  // *dst = this or this^T, converting precision; waits for the copy. Throws on a shape mismatch.
  template <typename OtherReal>
  void CopyToMat(MatrixBase<OtherReal>* dst, MatrixTransposeType trans = kNoTrans) const;

  void SetZero();
  void Set(Real value);
  // this += value, element-wise.
  void Add(Real value);
  void Scale(Real alpha);
  // this += alpha * A (kNoTrans) or alpha * A^T (kTrans). A may be this matrix only without
  // transposition; a transposed A that overlaps this matrix throws.
  void AddMat(Real alpha, const CuMatrixBase<Real>& A, MatrixTransposeType trans = kNoTrans);
  // this *= A, this /= A, element-wise; A has this shape (it may be this matrix).
  void MulElements(const CuMatrixBase<Real>& A);
  void DivElements(const CuMatrixBase<Real>& A);

  // Sum of the elements. GPU: one single-pass reduction kernel accumulating in Real (a per-thread
  // strided sum, then block and cross-block trees in a fixed order; deterministic for a shape).
  // Waits for the result.
  Real Sum() const;
  // sqrt of the sum of squares (the same reduction on squares). Waits for the result.
  Real FrobeniusNorm() const;
  // True when ||this - other|| <= tol * ||this||. Throws on a shape mismatch.
  bool ApproxEqual(const CuMatrixBase<Real>& other, float tol = 0.01) const;

  // Writes in the Kaldi matrix format (through a host Matrix).
  void Write(std::ostream& os, bool binary) const;

  // ---- BLAS family (cu-matrix-blas.cc) ---------------------------------------------------------
  // GPU: cuBLAS on this thread's handle (bound to cudaStreamPerThread; float GEMMs use TF32 only
  // with --cuda-use-tf32-compute), asynchronous unless a value returns to the host. Row-major
  // operands are handed to column-major cuBLAS as their transposes, so any stride >= cols works.
  // Shape mismatches and forbidden aliasing throw cuctx::Error naming the shapes, in both modes.

  // this = beta * this + alpha * op(A) op(B). A and B must not overlap this matrix. An empty
  // inner dimension gives this = beta * this (zeroed when beta == 0).
  void AddMatMat(Real alpha, const CuMatrixBase<Real>& A, MatrixTransposeType transA,
                 const CuMatrixBase<Real>& B, MatrixTransposeType transB, Real beta);
  // Lower triangle (diagonal included) of this square matrix = beta * this + alpha * op(A) op(A)^T,
  // as Kaldi: the strict upper triangle is left untouched on both paths (CopyLowerToUpper() on a
  // host copy, or a later symmetric op, fills it). GPU: one syrk. A must not overlap this matrix.
  void SymAddMat2(Real alpha, const CuMatrixBase<Real>& A, MatrixTransposeType transA, Real beta);
  // this = beta * this + alpha * diag(v) op(M) (v.Dim() == NumRows()). M may be this matrix
  // without transposition; v must not overlap it. GPU: one element-wise kernel.
  void AddDiagVecMat(Real alpha, const CuVectorBase<Real>& v, const CuMatrixBase<Real>& M,
                     MatrixTransposeType transM, Real beta = 1.0);
  // this = beta * this + alpha * op(M) diag(v) (v.Dim() == NumCols()); aliasing as AddDiagVecMat.
  void AddMatDiagVec(Real alpha, const CuMatrixBase<Real>& M, MatrixTransposeType transM,
                     const CuVectorBase<Real>& v, Real beta = 1.0);
  // this += alpha * a b^T (a.Dim() == NumRows(), b.Dim() == NumCols()); GPU: ger. Neither vector
  // may overlap this matrix.
  void AddVecVec(Real alpha, const CuVectorBase<Real>& a, const CuVectorBase<Real>& b);

  // Bodies of the free functions TraceMatMat, AddMatMatBatched and VecMatVec below
  // (cu-matrix-blas.cc); call those, not these.
  static Real TraceMatMatImpl(const CuMatrixBase<Real>& A, const CuMatrixBase<Real>& B,
                              MatrixTransposeType trans);
  static void AddMatMatBatchedImpl(Real alpha, std::vector<CuSubMatrix<Real>*>& C,
                                   const std::vector<CuSubMatrix<Real>*>& A,
                                   MatrixTransposeType transA,
                                   const std::vector<CuSubMatrix<Real>*>& B,
                                   MatrixTransposeType transB, Real beta);
  static Real VecMatVecImpl(const CuVectorBase<Real>& v1, const CuMatrixBase<Real>& M,
                            const CuVectorBase<Real>& v2);
  // ---- end of BLAS family -----------------------------------------------------------------------

  // ---- neural-net family (cu-matrix-nnet.cc) ----------------------------------------------------
  // this = sigmoid(src) (1 / (1 + exp(-x)), exp of non-positive arguments only), tanh(src),
  // soft hinge log(1 + exp(src)) (stable for large |x|). src has this shape and is either this
  // matrix (same data and stride) or disjoint from it. Throws cuctx::Error naming both shapes.
  void Sigmoid(const CuMatrixBase<Real>& src);
  void Tanh(const CuMatrixBase<Real>& src);
  void SoftHinge(const CuMatrixBase<Real>& src);
  // Back-propagation given the forward output `value`: this = diff .* value .* (1 - value)
  // (sigmoid) or diff .* (1 - value .^ 2) (tanh). value and diff have this shape; each is this
  // matrix or disjoint from it.
  void DiffSigmoid(const CuMatrixBase<Real>& value, const CuMatrixBase<Real>& diff);
  void DiffTanh(const CuMatrixBase<Real>& value, const CuMatrixBase<Real>& diff);
  // x = exp(x), x = log(x) element-wise (log of x <= 0 gives -inf or NaN).
  void ApplyExp();
  void ApplyLog();
  // Row-wise softmax / log-softmax of src (same shape; src is this matrix or disjoint from it).
  // GPU: one 256-thread block per row takes the row maximum, then sum exp(x - max), then writes,
  // so rows of +-1000 stay finite. The Apply forms work in place.
  void SoftMaxPerRow(const CuMatrixBase<Real>& src);
  void LogSoftMaxPerRow(const CuMatrixBase<Real>& src);
  void ApplySoftMaxPerRow();
  void ApplyLogSoftMaxPerRow();
  // Resizes *id to NumRows() and sets (*id)[r] to the column of the largest element of row r;
  // on ties the lowest such column (as Matrix::FindRowMaxId). Throws if there are rows but no
  // columns. Asynchronous; *id is filled on this thread's stream.
  void FindRowMaxId(CuArray<int32>* id) const;
  // ---- end of neural-net family -----------------------------------------------------------------

  // ---- gather/scatter family (cu-matrix-gather.cc) ----------------------------------------------
  // ---- end of gather/scatter family -------------------------------------------------------------

  // ---- element-wise function family and reductions (cu-matrix-functions.cc) ---------------------
  // ---- end of element-wise function family ------------------------------------------------------

  // ---- random fills, packed copies and solvers (cu-rand.cc, cu-matrix-solve.cc) -----------------
  // ---- end of random fills, packed copies and solvers -------------------------------------------

  // ---- sparse products (cu-sparse-matrix.cc) ----------------------------------------------------
  // GPU: cuSPARSE's generic API (cusparseSpMM on CSR, ALG_DEFAULT) on this thread's handle, bound
  // to cudaStreamPerThread, with its workspace from the caching allocator; asynchronous. Shape
  // mismatches throw cuctx::Error naming the shapes, in both modes. beta == 0 overwrites this
  // matrix (NaNs in it do not survive), as for AddMatMat.

  // this += alpha * op(A), op(A) of this shape. GPU: one scatter kernel (each stored element
  // updates its own entry, so no atomics).
  void AddSmat(Real alpha, const CuSparseMatrix<Real>& A, MatrixTransposeType trans = kNoTrans);
  // this = beta * this + alpha * op(A) B (A sparse, B dense; B must not overlap this matrix).
  void AddSmatMat(Real alpha, const CuSparseMatrix<Real>& A, MatrixTransposeType transA,
                  const CuMatrixBase<Real>& B, Real beta);
  // this = beta * this + alpha * A op(B) (A dense, B sparse; A must not overlap this matrix).
  void AddMatSmat(Real alpha, const CuMatrixBase<Real>& A, const CuSparseMatrix<Real>& B,
                  MatrixTransposeType transB, Real beta);
  // ---- end of sparse products -------------------------------------------------------------------

 protected:
  CuMatrixBase() = default;
  CuMatrixBase(Real* data, MatrixIndexT rows, MatrixIndexT cols, MatrixIndexT stride)
      : data_(data), num_rows_(rows), num_cols_(cols), stride_(stride) {}
  CuMatrixBase(const CuMatrixBase&) = default;
  CuMatrixBase& operator=(const CuMatrixBase&) = default;
  ~CuMatrixBase() = default;

  // A host view of the data; only valid without a GPU (the CPU fallback of every method).
  SubMatrix<Real> CpuView() const { return SubMatrix<Real>(data_, num_rows_, num_cols_, stride_); }
  bool Empty() const { return num_rows_ == 0 || num_cols_ == 0; }

  Real* data_ = nullptr;
  MatrixIndexT num_rows_ = 0;
  MatrixIndexT num_cols_ = 0;
  MatrixIndexT stride_ = 0;
};

// Owns a matrix (device memory in GPU mode, host memory otherwise).
// ---- free functions of the BLAS family (bodies in cu-matrix-blas.cc) ----------------------------

// tr(A op(B)); A op(B) must be square. Waits for the result. GPU: one dot when both are packed and
// trans == kTrans, else a packed copy of op(B)^T, an element-wise product and a Sum().
template <typename Real>
Real TraceMatMat(const CuMatrixBase<Real>& A, const CuMatrixBase<Real>& B,
                 MatrixTransposeType trans = kNoTrans) {
  return CuMatrixBase<Real>::TraceMatMatImpl(A, B, trans);
}

// For each i: *C[i] = beta * *C[i] + alpha * op(*A[i]) op(*B[i]). The vectors have equal sizes; all
// A[i] (and all B[i], all C[i]) share one shape and stride, and each product is checked as
// AddMatMat. GPU: one cublasGemmBatchedEx; the pointer arrays are staged through CuDevice::Malloc
// (an upload that does not wait for the GEMM).
template <typename Real>
void AddMatMatBatched(Real alpha, std::vector<CuSubMatrix<Real>*>& C,
                      const std::vector<CuSubMatrix<Real>*>& A, MatrixTransposeType transA,
                      const std::vector<CuSubMatrix<Real>*>& B, MatrixTransposeType transB,
                      Real beta) {
  CuMatrixBase<Real>::AddMatMatBatchedImpl(alpha, C, A, transA, B, transB, beta);
}

// v1^T M v2 (v1.Dim() == M.NumRows(), v2.Dim() == M.NumCols()). Waits for the result.
template <typename Real>
Real VecMatVec(const CuVectorBase<Real>& v1, const CuMatrixBase<Real>& M,
               const CuVectorBase<Real>& v2) {
  return CuMatrixBase<Real>::VecMatVecImpl(v1, M, v2);
}

template <typename Real>
class CuMatrix : public CuMatrixBase<Real> {
 public:
  CuMatrix() = default;
  // kDefaultStride pads rows (to 256 bytes on the GPU, 16 on the CPU, more in debug-stride mode);
  // kStrideEqualNumCols packs them. Throws on negative dimensions.
  CuMatrix(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type = kSetZero,
           MatrixStrideType stride_type = kDefaultStride) {
    Resize(rows, cols, resize_type, stride_type);
  }
  CuMatrix(const CuMatrix<Real>& other) : CuMatrixBase<Real>() { Assign(other, kNoTrans); }
  explicit CuMatrix(const CuMatrixBase<Real>& other, MatrixTransposeType trans = kNoTrans) {
    Assign(other, trans);
  }
  template <typename OtherReal>
  explicit CuMatrix(const CuMatrixBase<OtherReal>& other, MatrixTransposeType trans = kNoTrans) {
    ResizeFor(other.NumRows(), other.NumCols(), trans);
    this->CopyFromMat(other, trans);
  }
  template <typename OtherReal>
  explicit CuMatrix(const MatrixBase<OtherReal>& other, MatrixTransposeType trans = kNoTrans) {
    ResizeFor(other.NumRows(), other.NumCols(), trans);
    this->CopyFromMat(other, trans);
  }
  CuMatrix<Real>& operator=(const CuMatrix<Real>& other) {
    if (this != &other) Assign(other, kNoTrans);
    return *this;
  }
  CuMatrix<Real>& operator=(const CuMatrixBase<Real>& other) {
    Assign(other, kNoTrans);
    return *this;
  }
  CuMatrix<Real>& operator=(const MatrixBase<Real>& other) {
    ResizeFor(other.NumRows(), other.NumCols(), kNoTrans);
    this->CopyFromMat(other);
    return *this;
  }
  ~CuMatrix() { Destroy(); }

  // Changes the shape. kSetZero zeroes, kUndefined leaves the contents unspecified, kCopyData
  // keeps the overlapping top-left block and zeroes the rest. Throws on negative dimensions.
  void Resize(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType resize_type = kSetZero,
              MatrixStrideType stride_type = kDefaultStride);
  // Exchanges contents with another CuMatrix (no copy).
  void Swap(CuMatrix<Real>* other);
  // Exchanges contents with a host Matrix (copies both ways; waits for the copies).
  void Swap(Matrix<Real>* other);
  // this = this^T (through a transposing copy into new storage).
  void Transpose();
  // Reads the Kaldi matrix format (through a host Matrix), resizing to the data read.
  void Read(std::istream& is, bool binary);

 private:
  void Assign(const CuMatrixBase<Real>& other, MatrixTransposeType trans);
  void ResizeFor(MatrixIndexT rows, MatrixIndexT cols, MatrixTransposeType trans) {
    if (trans == kNoTrans)
      Resize(rows, cols, kUndefined);
    else
      Resize(cols, rows, kUndefined);
  }
  void Destroy();
};

// A view of a block of a CuMatrix; does not own its data. Copying a view copies the view.
template <typename Real>
class CuSubMatrix : public CuMatrixBase<Real> {
 public:
  // Rows [ro, ro + nr) and columns [co, co + nc) of m; throws if outside m.
  CuSubMatrix(const CuMatrixBase<Real>& m, MatrixIndexT ro, MatrixIndexT nr, MatrixIndexT co,
              MatrixIndexT nc);
  // A view of rows x cols elements at data with the given stride (device memory in GPU mode).
  CuSubMatrix(const Real* data, MatrixIndexT rows, MatrixIndexT cols, MatrixIndexT stride);
  CuSubMatrix(const CuSubMatrix<Real>& other) = default;
  CuSubMatrix<Real>& operator=(const CuSubMatrix<Real>&) = delete;
};

// True when ||A - B|| <= tol * ||A||. Throws on a shape mismatch.
template <typename Real>
bool ApproxEqual(const CuMatrixBase<Real>& A, const CuMatrixBase<Real>& B, float tol = 0.01) {
  return A.ApproxEqual(B, tol);
}
// Throws cuctx::Error unless ApproxEqual(A, B, tol).
template <typename Real>
void AssertEqual(const CuMatrixBase<Real>& A, const CuMatrixBase<Real>& B, float tol = 0.01);

template <typename Real, typename OtherReal>
bool SameDim(const CuMatrixBase<Real>& A, const CuMatrixBase<OtherReal>& B) {
  return A.NumRows() == B.NumRows() && A.NumCols() == B.NumCols();
}
template <typename Real, typename OtherReal>
bool SameDimAndStride(const CuMatrixBase<Real>& A, const CuMatrixBase<OtherReal>& B) {
  return SameDim(A, B) && A.Stride() == B.Stride();
}

// Prints the matrix (through a host copy) in the Kaldi text format.
template <typename Real>
std::ostream& operator<<(std::ostream& os, const CuMatrixBase<Real>& M);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_MATRIX_H_
