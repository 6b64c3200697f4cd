// cudamatrix/cu-matrix.h: CuMatrixBase / CuMatrix / CuSubMatrix, row-major matrices on the GPU.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_MATRIX_H_
#define CUCTX_CUDAMATRIX_CU_MATRIX_H_

#include "cudamatrix/cu-device.h"
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
template <typename T>
class CuArrayBase;  // index arrays and DiffXent targets (cudamatrix/cu-array.h)
template <typename Real>
class CuSpMatrix;  // CopyFromSp source (cudamatrix/cu-sp-matrix.h)
template <typename Real>
class CuTpMatrix;  // CopyFromTp source (cudamatrix/cu-tp-matrix.h)
template <typename Real>
class CuSparseMatrix;  // operand of the sparse products (cudamatrix/cu-sparse-matrix.h)
template <typename Real>
class CuBlockMatrix;  // operand of AddMatBlock / CopyFromBlock (cudamatrix/cu-block-matrix.h)

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
  MatrixDim Dim() const {
    internal::CheckObjectDevice("CuMatrix", device_, data_);
    return MatrixDim{num_rows_, num_cols_, stride_};
  }
  // Bytes spanned by the rows, stride included.
  size_t SizeInBytes() const {
    return static_cast<size_t>(num_rows_) * static_cast<size_t>(stride_) * sizeof(Real);
  }
  // Device pointer in GPU mode (host pointer otherwise); nullptr when empty.
  // Both, like Dim(), throw cuctx::Error when the calling thread uses another device than the one
  // the matrix is on (see DeviceId()).
  Real* Data() {
    internal::CheckObjectDevice("CuMatrix", device_, data_);
    return data_;
  }
  const Real* Data() const {
    internal::CheckObjectDevice("CuMatrix", device_, data_);
    return data_;
  }
  // The device the elements are on: the device of the thread that allocated them (-1: host
  // memory, without a GPU). Views share their matrix's device. A matrix is used by threads of its
  // own device; CopyFromMat and the copy constructors copy between devices.
  int DeviceId() const { return device_; }
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
  // transferred at its own precision and layout, then converted on the device. A Cu source on
  // another device is copied across, peer to peer where possible (internal::CopyAcrossDevices2D):
  // one of the two must be on the calling thread's device (this one, for a converting or
  // transposing copy). Throws if the shapes do not match, or if a transposing copy's source
  // overlaps this matrix.
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
  // Device-result form: writes the sum into `result` (an element of a CuVector or CuMatrix)
  // without waiting or a transfer, so it can be captured in a CuGraph (0 when empty).
  void Sum(CuValue<Real> result) const;
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
  // Kaldi's older spellings of SoftMaxPerRow(src) / LogSoftMaxPerRow(src), kept for ported code.
  void ApplySoftMaxPerRow(const CuMatrixBase<Real>& src) { SoftMaxPerRow(src); }
  void ApplyLogSoftMaxPerRow(const CuMatrixBase<Real>& src) { LogSoftMaxPerRow(src); }
  // Resizes *id to NumRows() and sets (*id)[r] to the column of the largest element of row r;
  // on ties the lowest such column (as Matrix::FindRowMaxId). Throws if there are rows but no
  // columns. Asynchronous; *id is filled on this thread's stream.
  void FindRowMaxId(CuArray<int32>* id) const;
  // -- back-propagation, group ops and objectives (cu-matrix-nnet-diff.cc). Inputs have the shapes
  // named below (else cuctx::Error naming both shapes); each input is *this itself (same data
  // and stride) or disjoint from it where so stated, else must not overlap it at all.

  // Back-propagation through SoftMaxPerRow given its output `value`: for each row,
  // this = value .* (diff - (value . diff)). Back-propagation through LogSoftMaxPerRow given its
  // output `out_value`: this = out_deriv - exp(out_value) * sum(out_deriv). All have this shape;
  // either input may be *this (in place) or must be disjoint from it. GPU: one kernel, a warp per
  // row for rows of at most 128 columns, else a 256-thread block per row (the row sum, then the
  // write), asynchronous.
  void DiffSoftmaxPerRow(const CuMatrixBase<Real>& value, const CuMatrixBase<Real>& diff);
  void DiffLogSoftmaxPerRow(const CuMatrixBase<Real>& out_value,
                            const CuMatrixBase<Real>& out_deriv);
  // this(r, g) = p-norm of src(r, g*G .. g*G + G - 1), G = src.NumCols() / NumCols() (which must
  // divide exactly; src has NumRows() rows). power >= 0: 1 sums |x|, 2 is the Euclidean norm,
  // infinity the largest |x|, 0 counts nonzeros, others (sum |x|^p)^(1/p). src must not overlap
  // this matrix. GPU: one thread per output element, accumulating in Real.
  void GroupPnorm(const CuMatrixBase<Real>& src, Real power);
  // Back-propagation through GroupPnorm: this (in_value's shape) = out_deriv(r, c / G) times
  // d out / d in: sign(x) for power 1; for infinity sign(x) (+1 at 0) where |x| == out, else 0;
  // otherwise sign(x) |x|^(p-1) out^(1-p), 0 where out == 0. out_value and out_deriv have
  // NumRows() rows and NumCols() / G columns and must not overlap this matrix; in_value may be
  // *this.
  void DiffGroupPnorm(const CuMatrixBase<Real>& in_value, const CuMatrixBase<Real>& out_value,
                      const CuMatrixBase<Real>& out_deriv, Real power);
  // this(r, g) = largest element of group g of src's row r (groups as GroupPnorm). src must not
  // overlap this matrix.
  void GroupMax(const CuMatrixBase<Real>& src);
  // Back-propagation through GroupMax: this (input's shape) = 1 where input(r, c) equals
  // output(r, c / G), else 0. input may be *this; output must not overlap this matrix.
  void GroupMaxDeriv(const CuMatrixBase<Real>& input, const CuMatrixBase<Real>& output);
  // Cross-entropy gradient on a posterior matrix, in place: for each row r with t = tgt[r],
  // (*log_post_tgt)(r) = log(this(r, t)), then this(r, t) -= 1. tgt has NumRows() entries in
  // [0, NumCols()); *log_post_tgt is resized to NumRows(). CPU mode: a target out of range throws
  // before the matrix changes. GPU mode: checking would need tgt on the host (a wait), so a
  // row with a target out of range is left alone and gets NaN. Asynchronous.
  void DiffXent(const CuArrayBase<int32>& tgt, CuVector<Real>* log_post_tgt);
  // For each element e: this(e.row, e.column) += e.weight / A(e.row, e.column) (repeated
  // elements add up), and returns *tot_objf = sum e.weight * log(A(e)) and *tot_weight =
  // sum e.weight (both accumulated in double). A has this shape and must not overlap it. Element
  // indices are checked on the host (cuctx::Error naming the element). GPU: the elements are
  // uploaded, one kernel adds atomically and sums per block, a second adds the block sums in a
  // fixed order; waits for the two totals.
  void CompObjfAndDeriv(const std::vector<MatrixElement<Real>>& elements, const CuMatrix<Real>& A,
                        Real* tot_objf, Real* tot_weight);
  // this = src > 0 ? alpha(c) * src : beta(c) * src per column c (alpha, beta of NumCols()).
  // src has this shape and is *this or disjoint from it; alpha and beta must not overlap it.
  void ParametricRelu(const CuMatrixBase<Real>& src, const CuVectorBase<Real>& alpha,
                      const CuVectorBase<Real>& beta);
  // Back-propagation through ParametricRelu, `value` being its input:
  // this = diff .* (value > 0 ? alpha(c) : beta(c)). value and diff as src above.
  void DiffParametricRelu(const CuMatrixBase<Real>& value, const CuMatrixBase<Real>& diff,
                          const CuVectorBase<Real>& alpha, const CuVectorBase<Real>& beta);
  // ---- end of neural-net family -----------------------------------------------------------------

  // ---- gather/scatter family (cu-matrix-gather.cc) ----------------------------------------------
  // GPU: one kernel per call on this thread's stream, asynchronous unless noted. Row gathers and
  // scatters run a warp along each row segment, so global reads and writes are coalesced.
  //
  // NOTE ON index validation: shapes, array sizes and overlaps are checked on the host in both
  // modes (cuctx::Error naming the shapes). Index *values* live in CuArrays, which in GPU mode
  // keep no host copy; checking them would mean copying the array back and waiting for the
  // stream on every call. So in GPU mode the values are checked (with the CPU path's message,
  // naming the entry and its value) only in sync-check mode (DEBUG=1 builds or
  // CUCTX_SYNC_CHECKS=1), where every launch already waits; otherwise the kernels treat a value
  // outside its valid range like -1 (or a nullptr row): it selects nothing, so no index can make
  // a kernel read or write outside its operands. Without a GPU the values are always checked.
  // Forms taking host index vectors (Lookup, AddElements) check them in both modes.

  // If v.Dim() == NumRows() * NumCols(), v holds the rows end to end; if v.Dim() == NumCols(),
  // every row becomes v; anything else throws. v must not overlap this matrix.
  void CopyRowsFromVec(const CuVectorBase<Real>& v);
  // As above from a host vector (uploaded, then copied on the device; returns once v may change).
  void CopyRowsFromVec(const VectorBase<Real>& v);
  // If v.Dim() == NumRows() * NumCols(), v holds the columns end to end; if v.Dim() == NumRows(),
  // every column becomes v; anything else throws. v must not overlap this matrix.
  void CopyColsFromVec(const CuVectorBase<Real>& v);
  // Column col = v (v.Dim() == NumRows()); throws on a bad column or a dimension mismatch.
  void CopyColFromVec(const CuVectorBase<Real>& v, MatrixIndexT col);

  // Row r = src row indexes[r], or zeros where indexes[r] < 0. indexes.Dim() == NumRows(),
  // src.NumCols() == NumCols(), entries < src.NumRows(); src must not overlap this matrix.
  void CopyRows(const CuMatrixBase<Real>& src, const CuArrayBase<MatrixIndexT>& indexes);
  // Row r = the NumCols() elements at src[r] (device pointers in GPU mode), zeros where src[r] is
  // nullptr. src.Dim() == NumRows(). The rows pointed to must not overlap this matrix (unchecked).
  void CopyRows(const CuArrayBase<const Real*>& src);
  // The NumCols() elements at dst[r] = row r, skipping nullptr entries. dst.Dim() == NumRows().
  // The rows pointed to must neither overlap this matrix nor each other (unchecked).
  void CopyToRows(const CuArrayBase<Real*>& dst) const;
  // Row r += alpha * src row indexes[r] (skipped where indexes[r] < 0). Checks as CopyRows.
  void AddRows(Real alpha, const CuMatrixBase<Real>& src, const CuArrayBase<MatrixIndexT>& indexes);
  // Row r += alpha * the NumCols() elements at src[r] (skipped where nullptr).
  void AddRows(Real alpha, const CuArrayBase<const Real*>& src);
  // dst row indexes[r] += alpha * row r (skipped where indexes[r] < 0). indexes.Dim() ==
  // NumRows(), dst->NumCols() == NumCols(), entries < dst->NumRows(); dst must not overlap this
  // matrix. Repeated indexes accumulate (GPU: atomic adds, so the order of the additions and
  // hence the rounding may vary between runs).
  void AddToRows(Real alpha, const CuArrayBase<MatrixIndexT>& indexes,
                 CuMatrixBase<Real>* dst) const;
  // The NumCols() elements at dst[r] += alpha * row r (skipped where nullptr); repeated pointers
  // accumulate (atomic adds on the GPU). The rows pointed to must not overlap this matrix.
  void AddToRows(Real alpha, const CuArrayBase<Real*>& dst) const;
  // Column c = src column indexes[c], or zeros where indexes[c] < 0. indexes.Dim() == NumCols(),
  // src.NumRows() == NumRows(), entries < src.NumCols(); src must not overlap this matrix.
  void CopyCols(const CuMatrixBase<Real>& src, const CuArrayBase<MatrixIndexT>& indexes);
  // Column c += src column indexes[c] (skipped where indexes[c] < 0). Checks as CopyCols.
  void AddCols(const CuMatrixBase<Real>& src, const CuArrayBase<MatrixIndexT>& indexes);
  // Row r .*= src row indexes[r] (unchanged where indexes[r] < 0). Checks as CopyRows.
  void MulRows(const CuMatrixBase<Real>& src, const CuArrayBase<MatrixIndexT>& indexes);
  // (*this)(r, c) += sum of src(j, c) for j in [indexes[r].first, indexes[r].second).
  // indexes.Dim() == NumRows(), src.NumCols() == NumCols(); a pair with first >= second is empty,
  // any other must lie within [0, src.NumRows()]. src must not overlap this matrix.
  void AddRowRanges(const CuMatrixBase<Real>& src, const CuArrayBase<Int32Pair>& indexes);
  // (*this)(r, c) = sum of src(r, j) for j in [indexes[c].first, indexes[c].second) (0 when
  // empty). indexes.Dim() == NumCols(), src.NumRows() == NumRows(), ranges checked as in
  // AddRowRanges against src.NumCols(). src must not overlap this matrix.
  void SumColumnRanges(const CuMatrixBase<Real>& src, const CuArrayBase<Int32Pair>& indexes);

  // Square matrices only (else throws): mirror the lower triangle onto the upper one, or the
  // reverse. GPU: in place through shared-memory tiles.
  void CopyLowerToUpper();
  void CopyUpperToLower();
  // Zeroes every (r, c) with c > r (any shape).
  void SetZeroAboveDiag();

  // output[i] = (*this)(indexes[i].first, indexes[i].second). output is host memory with room
  // for indexes.size() values. Pairs are checked on the host (throws naming the bad one). GPU:
  // uploads the pairs, gathers on the device and waits for the values.
  void Lookup(const std::vector<Int32Pair>& indexes, Real* output) const;
  // As above for indexes.Dim() pairs in a CuArray; output is device memory in GPU mode (host
  // memory otherwise) with room for indexes.Dim() values. Asynchronous. Pairs are checked as in
  // the NOTE above (an unchecked bad pair yields 0 on the GPU).
  void Lookup(const CuArrayBase<Int32Pair>& indexes, Real* output) const;
  // (*this)(e.row, e.column) += alpha * e.weight for every element (checked on the host; throws
  // naming the bad one). Repeated elements accumulate (atomic adds on the GPU).
  void AddElements(Real alpha, const std::vector<MatrixElement<Real>>& input);
  // (*this)(indexes[i].first, indexes[i].second) += alpha * input[i] for i < indexes.Dim();
  // input is host memory in both modes, as in Kaldi (copied to the device first in GPU mode).
  // Repeated pairs accumulate.
  void AddElements(Real alpha, const CuArrayBase<Int32Pair>& indexes, const Real* input);
  // (*this)(r, elements[r]) += alpha for each row r where elements[r] >= 0. elements.Dim() ==
  // NumRows(), entries < NumCols().
  void AddToElements(Real alpha, const CuArrayBase<int32>& elements);
  // *mask (resized to this shape) = 1 where (*this)(r, c) == mat(r, c), else 0. mat has this
  // shape; mask must be a matrix other than this one and mat.
  void EqualElementMask(const CuMatrixBase<Real>& mat, CuMatrix<Real>* mask) const;
  // ---- end of gather/scatter family -------------------------------------------------------------

  // ---- element-wise function family and reductions (cu-matrix-functions.cc) ---------------------
  // Each method computes exactly what the MatrixBase method of the same name computes
  // (matrix/matrix.h), in both modes. GPU: one coalesced grid-stride kernel per call, asynchronous
  // on this thread's stream (cudaStreamPerThread); the reductions Max(), Min(), Trace() and
  // IsUnit() are one single-pass kernel (block partials, the last block combines them) followed by
  // one read-back, and wait for the result. A matrix argument (src, A, B, C) of an element-wise op
  // has this shape and is either this matrix (same data and stride) or disjoint from it; a vector
  // argument must not overlap this matrix. Misuse throws cuctx::Error naming both shapes (or the
  // dimension that is wrong), in both modes, before any work is queued.

  // this = max(this, A), min(this, A) element-wise; where either is NaN, this keeps its element
  // (as std::max(x, a) / std::min(x, a)).
  void Max(const CuMatrixBase<Real>& A);
  void Min(const CuMatrixBase<Real>& A);
  // x = 1 / x (1 / 0 is inf).
  void InvertElements();
  // this(r, c) *= scale(c) (scale.Dim() == NumCols()); this(r, c) *= scale(r) and this(r, c) /=
  // div(r) (Dim() == NumRows()).
  void MulColsVec(const CuVectorBase<Real>& scale);
  void MulRowsVec(const CuVectorBase<Real>& scale);
  void DivRowsVec(const CuVectorBase<Real>& div);
  // this(r, c) *= src(r, c / G) with G = NumCols() / src.NumCols() (which must divide exactly);
  // src has NumRows() rows and must not overlap this matrix.
  void MulRowsGroupMat(const CuMatrixBase<Real>& src);
  // this = beta * this + alpha * row broadcast to every row (row.Dim() == NumCols()), or alpha *
  // col broadcast to every column (col.Dim() == NumRows()). beta == 0 still reads this (NaN stays).
  void AddVecToRows(Real alpha, const CuVectorBase<Real>& row, Real beta = 1.0);
  void AddVecToCols(Real alpha, const CuVectorBase<Real>& col, Real beta = 1.0);
  // this += alpha * op(A) blockwise: if op(A) is a whole multiple of this shape in both
  // directions, its blocks of this shape are summed into this (each element adds its blocks in
  // row-major block order, as the CPU); else if this is a whole multiple of op(A), op(A) is added
  // to every block of this. Otherwise throws. A must not overlap this matrix. GPU: one thread per
  // element of this, which adds all of its blocks (so a small this with a large op(A) has little
  // parallelism); with kTrans the reads of A are strided (not coalesced).
  void AddMatBlocks(Real alpha, const CuMatrixBase<Real>& A, MatrixTransposeType trans = kNoTrans);
  // this = beta * this + alpha * A .* B.
  void AddMatMatElements(Real alpha, const CuMatrixBase<Real>& A, const CuMatrixBase<Real>& B,
                         Real beta);
  // this = A .* B ./ C, except that where C is 0 the element is A's.
  void SetMatMatDivMat(const CuMatrixBase<Real>& A, const CuMatrixBase<Real>& B,
                       const CuMatrixBase<Real>& C);
  // this(i, i) += alpha for i < min(NumRows(), NumCols()) (any shape).
  void AddToDiag(Real alpha);

  // In-place maps. ApplyPow: pow(x, power) (a negative x with a non-integer power gives NaN; 0 to
  // a negative power gives inf). ApplyPowAbs: |x|^power, negated for x < 0 when include_sign; x ==
  // 0 gives 0 (1 when power == 0) even for a negative power. ApplyHeaviside: x > 0 ? 1 : 0 (NaN
  // gives 0). ApplyFloor: x < floor_val ? floor_val : x; ApplyCeiling: x > ceiling_val ?
  // ceiling_val : x (NaN stays NaN in both). ApplyExpLimited: exp of x clamped to [lower_limit,
  // upper_limit] (throws unless lower_limit <= upper_limit). ApplyExpSpecial: x < 0 ? exp(x) :
  // x + 1 (continuous, with slope 1 at 0). GPU results differ from the CPU's only by the last-bit
  // rounding of exp and pow.
  void ApplyPow(Real power);
  void ApplyPowAbs(Real power, bool include_sign = false);
  void ApplyHeaviside();
  void ApplyFloor(Real floor_val);
  void ApplyCeiling(Real ceiling_val);
  void ApplyExpLimited(Real lower_limit, Real upper_limit);
  void ApplyExpSpecial();
  // this = f(src) for the maps above (Exp and Log as ApplyExp and ApplyLog).
  void Exp(const CuMatrixBase<Real>& src);
  void Log(const CuMatrixBase<Real>& src);
  void Pow(const CuMatrixBase<Real>& src, Real power);
  void PowAbs(const CuMatrixBase<Real>& src, Real power, bool include_sign = false);
  void Floor(const CuMatrixBase<Real>& src, Real floor_val);
  void Ceiling(const CuMatrixBase<Real>& src, Real ceiling_val);
  void ExpLimited(const CuMatrixBase<Real>& src, Real lower_limit, Real upper_limit);
  void ExpSpecial(const CuMatrixBase<Real>& src);
  void Heaviside(const CuMatrixBase<Real>& src);

  // Largest / smallest element; throws on an empty matrix. NaN elements are skipped, except that a
  // NaN at (0, 0) is the result (the CPU starts its scan there). Waits for the result.
  Real Max() const;
  Real Min() const;
  // Sum of the diagonal (0 when empty); with check_square throws unless square. GPU: accumulated
  // in Real in a fixed tree order (the CPU adds in double). Waits for the result.
  Real Trace(bool check_square = true) const;
  // Device-result forms of Max, Min and Trace (see Sum(CuValue)): no wait, no transfer,
  // capturable; same errors as the forms above.
  void Max(CuValue<Real> result) const;
  void Min(CuValue<Real> result) const;
  void Trace(CuValue<Real> result, bool check_square = true) const;
  // True when every element is within tol (absolute) of the identity's (any shape; true when
  // empty; NaN elements are not counted as off, as on the CPU). Waits for the result.
  bool IsUnit(Real tol = 0.001) const;
  // ---- end of element-wise function family ------------------------------------------------------

  // ---- random fills, packed copies and solvers (cu-rand.cc, cu-matrix-solve.cc) -----------------
  // Standard normal / uniform values in every element, from this thread's cuRAND generator in
  // GPU mode (independent of the pitch; see CuRand in cu-rand.h) or from base/random.h on the CPU.
  // Asynchronous on this thread's stream.
  void SetRandn();
  void SetRandUniform();

  // Replaces this symmetric positive definite matrix (only the lower triangle is read) by its
  // lower Cholesky factor L, this = L L^T, with the strict upper triangle zeroed. If inv_cholesky
  // is not null it receives L^-1 (lower triangular); it must have this shape and must not overlap
  // this matrix. GPU: cuSOLVER potrf on this thread's handle, on a copy of the matrix in scratch
  // from the caching allocator, then one read-back of cuSOLVER's info (the method waits for the
  // factorization); L^-1 comes from cuSOLVER trtri (asynchronous). Throws cuctx::Error if the
  // matrix is not square or not positive definite, naming the order of the leading minor that
  // is not positive; this matrix is then unchanged.
  void Cholesky(CuMatrixBase<Real>* inv_cholesky = nullptr);
  // Replaces this symmetric positive definite matrix (lower triangle read) by its inverse, both
  // triangles filled. GPU: cuSOLVER potrf then potri on a scratch copy, one read-back of the info
  // (waits for the factorization). Throws as Cholesky does, leaving this matrix unchanged.
  void SymInvertPosDef();

  // this (square, NumRows() == M.NumRows()) = the full symmetric matrix M packs (CopyFromSp), or
  // the lower-triangular M with zeros above the diagonal, or its transpose (CopyFromTp). One
  // kernel on the GPU, asynchronous. Throws on a size mismatch.
  void CopyFromSp(const CuSpMatrix<Real>& M);
  void CopyFromTp(const CuTpMatrix<Real>& M, MatrixTransposeType trans = kNoTrans);
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

  // ---- block-diagonal and triangular products (cu-block-matrix.cc, cu-matrix-tp.cc) -------------
  // this = beta * this + alpha * op(A) op(B), B block-diagonal (see CuBlockMatrix): one GEMM per
  // block of B on the matching columns of op(A) and of this (a batched GEMM when B's blocks share
  // one shape). Shapes as AddMatMat, else throws naming them; A and B must not overlap this.
  void AddMatBlock(Real alpha, const CuMatrixBase<Real>& A, MatrixTransposeType transA,
                   const CuBlockMatrix<Real>& B, MatrixTransposeType transB, Real beta);
  // this = B (kNoTrans) or B^T (kTrans) as a full matrix, zero off the blocks. this must have
  // that shape (else throws) and must not overlap B's storage.
  void CopyFromBlock(const CuBlockMatrix<Real>& B, MatrixTransposeType trans = kNoTrans);
  // this = beta * this + alpha * op(A) op(B) with B (AddMatTp) or A (AddTpMat) lower-triangular.
  // The triangular operand is unpacked into a full scratch CuMatrix (CopyFromTp), then one
  // AddMatMat (a GEMM; the unpack costs one n x n copy, cheap next to the GEMM). Shapes as
  // AddMatMat, else throws naming them; the dense operand must not overlap this matrix.
  void AddMatTp(Real alpha, const CuMatrixBase<Real>& A, MatrixTransposeType transA,
                const CuTpMatrix<Real>& B, MatrixTransposeType transB, Real beta);
  void AddTpMat(Real alpha, const CuTpMatrix<Real>& A, MatrixTransposeType transA,
                const CuMatrixBase<Real>& B, MatrixTransposeType transB, Real beta);
  // ---- end of block-diagonal and triangular products --------------------------------------------

 protected:
  CuMatrixBase() = default;
  CuMatrixBase(Real* data, MatrixIndexT rows, MatrixIndexT cols, MatrixIndexT stride, int device)
      : data_(data), num_rows_(rows), num_cols_(cols), stride_(stride), device_(device) {}
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
  int device_ = -1;  // see DeviceId()

  // Views and copies between devices read the source without the device check.
  template <typename>
  friend class CuMatrixBase;
  friend class CuSubMatrix<Real>;
  friend class CuSubVector<Real>;
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
    try {
      this->CopyFromMat(other, trans);
    } catch (...) {  // e.g. inside a CuGraph capture: no destructor runs for a failed constructor
      Destroy();
      throw;
    }
  }
  // ---- from packed matrices (Kaldi parity; defined in cu-host-conversions.cc) ----
  // The full symmetric n x n matrix that M packs (one unpacking kernel on the GPU).
  explicit CuMatrix(const CuSpMatrix<Real>& M);
  // The lower-triangular M (zeros above the diagonal) or its transpose, either precision (a
  // precision conversion of the packed elements first when OtherReal differs).
  template <typename OtherReal>
  explicit CuMatrix(const CuTpMatrix<OtherReal>& M, MatrixTransposeType trans = kNoTrans);
  // ---- end of packed constructors ----
  // The full matrix of a block-diagonal one (or its transpose), zero off the blocks
  // (CopyFromBlock; defined in cu-block-matrix.cc).
  explicit CuMatrix(const CuBlockMatrix<Real>& other, MatrixTransposeType trans = kNoTrans);
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
