// cudamatrix/cu-sparse-matrix.h: CuSparseMatrix, a CSR sparse matrix on the GPU, and TraceMatSmat.
// SPDX-License-Identifier: Apache-2.0
//
// The products with dense matrices (CuMatrixBase::AddSmat, AddSmatMat, AddMatSmat) are declared in
// cu-matrix.h ("sparse products") and defined in cu-sparse-matrix.cc.
#ifndef CUCTX_CUDAMATRIX_CU_SPARSE_MATRIX_H_
#define CUCTX_CUDAMATRIX_CU_SPARSE_MATRIX_H_

#include "base/types.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix-common.h"
#include "matrix/sparse-matrix.h"

#include <istream>
#include <memory>
#include <ostream>

namespace cuctx {

// A NumRows() x NumCols() sparse matrix of Real (float or double) holding NumElements() stored
// values; as SparseMatrix, a matrix with no rows reports NumCols() == 0.
//
// Storage: with a GPU selected (CuDevice::Enabled()) the matrix is CSR (compressed sparse row,
// zero-based int32 indexes) in device memory from the caching allocator: NumRows() + 1 row
// offsets, then a column index and a value per stored element, rows in order and the columns of
// each row strictly increasing. Without a GPU it is a matrix/ SparseMatrix<Real> and every method
// runs the CPU code, so both modes compute the same thing. The mode must not change while
// matrices exist. Explicit zeros are not stored by the constructors here (a zero weight gives an
// empty row, as SparseMatrix does).
//
// Streams: GPU work runs on this thread's stream (cudaStreamPerThread) and the cuSPARSE handle
// bound to it. Methods that only queue work (CopyToMat, the products) return before it finishes;
// methods that must know a count on the host (the index-array constructors and SelectRows, which
// need the number of stored elements to allocate) or return data (Sum, FrobeniusNorm,
// CopyToSmat, Write) wait for the stream.
//
// Not thread-safe: one thread uses an object at a time, const methods included (see the NOTE ON
// the transpose cache). Copies (constructor, operator=, CopyFromSmat) are deep and do not copy
// the cache; Swap exchanges contents, caches included. Misuse throws cuctx::Error naming the
// shapes or the bad index, in both modes.
//
// NOTE ON the transpose cache: cuSPARSE multiplies a sparse matrix on the left only, and
// CuMatrixBase::AddMatSmat (dense times sparse) is computed as the transposed product C^T =
// op(B)^T A^T, which for transB == kNoTrans needs B^T as CSR. cuSPARSE can apply a transpose
// itself, but that path is many times slower than the plain one, so the GPU mode keeps B^T
// (cusparseCsr2cscEx2, deterministic) next to B: built by the first AddMatSmat that needs it,
// reused by the next ones, and dropped by every change of this matrix (CopyFromSmat, operator=,
// Read, SelectRows, the index-array constructors and both Swaps go through the two private
// functions that drop it). It doubles the device memory of a matrix that is used that way. While
// a CUDA graph is being captured the cache is neither used nor built, and AddMatSmat with kNoTrans
// uses cuSPARSE's transposed product (slow, but it reads B's current values at every replay and
// no cache that a later change of B would free); the transpose itself (cusparseCsr2cscEx2) is
// not captured, as it does not replay correctly (CopyFromSmat with kTrans throws in a capture).
template <typename Real>
class CuSparseMatrix {
 public:
  CuSparseMatrix() = default;
  // A copy of smat, converting the precision.
  template <typename OtherReal>
  explicit CuSparseMatrix(const SparseMatrix<OtherReal>& smat) {
    CopyFromSmat(smat);
  }
  // One-hot rows: with trans == kNoTrans, row i has a 1 at column indexes[i] (or is empty where
  // indexes[i] < 0), and there are `dim` columns; with kTrans the result is transposed (dim rows,
  // indexes.Dim() columns). Throws, naming the entry, if an index is >= dim; throws if dim < 0.
  // GPU: built on the device; waits once to learn the number of stored elements.
  CuSparseMatrix(const CuArray<int32>& indexes, int32 dim, MatrixTransposeType trans = kNoTrans);
  // As above with the value weights(i) instead of 1 (weights.Dim() == indexes.Dim(), else
  // throws); a zero weight gives an empty row.
  CuSparseMatrix(const CuArray<int32>& indexes, const CuVectorBase<Real>& weights, int32 dim,
                 MatrixTransposeType trans = kNoTrans);
  // A copy of smat (kNoTrans) or of its transpose (kTrans); as CopyFromSmat, asynchronous. Not
  // explicit, as in Kaldi, so that it is also the copy constructor.
  CuSparseMatrix(const CuSparseMatrix<Real>& smat, MatrixTransposeType trans = kNoTrans) {
    CopyFromSmat(smat, trans);
  }
  CuSparseMatrix& operator=(const CuSparseMatrix<Real>& smat) {
    if (this != &smat) CopyFromSmat(smat);
    return *this;
  }
  // this = smat (same precision), as CopyFromSmat.
  CuSparseMatrix& operator=(const SparseMatrix<Real>& smat) {
    CopyFromSmat(smat);
    return *this;
  }
  ~CuSparseMatrix() = default;

  MatrixIndexT NumRows() const { return num_rows_; }
  MatrixIndexT NumCols() const { return num_cols_; }
  // Number of stored values.
  MatrixIndexT NumElements() const { return nnz_; }

  // Sum of the stored values; waits for the result. GPU: the single-pass reduction of the reduce
  // family over the values, accumulating in Real (the CPU accumulates in double).
  Real Sum() const;
  // sqrt of the sum of squares of the stored values; waits for the result.
  Real FrobeniusNorm() const;

  // *M = this (kNoTrans) or this^T (kTrans), zeros included, converting the precision. M must
  // have that shape (else throws naming both). GPU: a zero fill and one scatter kernel;
  // asynchronous.
  template <typename OtherReal>
  void CopyToMat(CuMatrixBase<OtherReal>* M, MatrixTransposeType trans = kNoTrans) const;
  // *smat = this (converting the precision); waits for the copies. In GPU mode the rows are
  // rebuilt through SparseVector's pair constructor, so explicitly stored zeros (possible only
  // in a matrix read from a stream) are dropped.
  template <typename OtherReal>
  void CopyToSmat(SparseMatrix<OtherReal>* smat) const;
  // this = smat, converting the precision. GPU: CSR built on the host and uploaded.
  template <typename OtherReal>
  void CopyFromSmat(const SparseMatrix<OtherReal>& smat);
  // this = other (kNoTrans) or other^T (kTrans); other may be this matrix. GPU: device copies,
  // or cusparseCsr2cscEx2 for the transpose (deterministic; throws during a CUDA graph capture,
  // see the NOTE ON the transpose cache); asynchronous.
  void CopyFromSmat(const CuSparseMatrix<Real>& other, MatrixTransposeType trans = kNoTrans);

  // this = the rows row_indexes[i] of input, in that order (each 0 <= row_indexes[i] <
  // input.NumRows(), else throws naming the entry); the result has input.NumCols() columns (0
  // when row_indexes is empty). input must not be this matrix. GPU: a count kernel, a prefix
  // sum, one wait for the number of stored elements, then a copy kernel.
  void SelectRows(const CuArray<int32>& row_indexes, const CuSparseMatrix<Real>& input);

  // Exchanges contents with *other (no copy).
  void Swap(CuSparseMatrix<Real>* other);
  // Exchanges contents with a host sparse matrix: *smat receives this matrix and this matrix
  // receives the old *smat. CPU mode: no copy. GPU mode: *smat is uploaded and this matrix is
  // copied back into *smat (waits for the copies). Defined in cu-sparse-swap.cc.
  void Swap(SparseMatrix<Real>* smat);

  // Kaldi's sparse matrix format ("SM ", see matrix/sparse-matrix.h), through a host
  // SparseMatrix<Real>. Read throws on bad input as SparseMatrix::Read does.
  void Write(std::ostream& os, bool binary) const;
  void Read(std::istream& is, bool binary);

  // ---- device CSR, for the products in cu-sparse-matrix.cc (GPU mode only; nullptr when empty).
  const int32* CsrRowOffsets() const { return row_offsets_.Data(); }
  const int32* CsrColIndexes() const { return col_indexes_.Data(); }
  const Real* CsrValues() const { return values_.Data(); }
  // The host copy (CPU mode only).
  const SparseMatrix<Real>& HostMatrix() const { return host_; }
  // This matrix's transpose (NumCols() x NumRows()), from the transpose cache: built on the first
  // call after a change of this matrix (asynchronous, like CopyFromSmat with kTrans), then
  // returned as it is. The reference stays valid until this matrix changes. Throws cuctx::Error
  // while this thread captures a CUDA graph (see the NOTE above).
  const CuSparseMatrix<Real>& CachedTranspose() const;

 private:
  // Builds the one-hot matrix (weights may be nullptr for all ones).
  void InitOneHot(const CuArray<int32>& indexes, const CuVectorBase<Real>* weights, int32 dim,
                  MatrixTransposeType trans);
  // Takes the shape from host_ (CPU mode).
  void ShapeFromHost();
  // Sets the shape and allocates device CSR for nnz elements (contents undefined).
  void AllocateCsr(MatrixIndexT rows, MatrixIndexT cols, MatrixIndexT nnz);

  MatrixIndexT num_rows_ = 0;
  MatrixIndexT num_cols_ = 0;
  MatrixIndexT nnz_ = 0;
  // GPU mode: NumRows() + 1 offsets (none when there are no rows), nnz column indexes and values.
  CuArray<int32> row_offsets_;
  CuArray<int32> col_indexes_;
  CuVector<Real> values_;
  // CPU mode.
  SparseMatrix<Real> host_;
  // GPU mode: this matrix's transpose once CachedTranspose() has built it; null until then and
  // after every change (AllocateCsr resets it, Swap exchanges it).
  mutable std::unique_ptr<CuSparseMatrix<Real>> transpose_;
};

// tr(A op(B)); op(B) must have A's transposed shape (kNoTrans: B is A.NumCols() x A.NumRows();
// kTrans: B has A's shape), else throws naming both. Waits for the result. GPU: one kernel forms
// the products of B's values with the matching elements of A, then the reduce family sums them.
template <typename Real>
Real TraceMatSmat(const CuMatrixBase<Real>& A, const CuSparseMatrix<Real>& B,
                  MatrixTransposeType trans = kNoTrans);

namespace internal {
// How CuMatrixBase::AddMatSmat (C = beta C + alpha A op(B), B sparse) runs on the GPU. Every path
// computes C^T = op(B)^T A^T with cusparseSpMM; S below is op(B)^T as CSR: B itself for kTrans,
// the transpose cache for kNoTrans.
//   kRowMajor (the default): A^T and then C^T are materialized as row-major temporaries, so the
//     product is the same row-major SpMM as AddSmatMat's (S times A^T); then C = beta C + (C^T)^T
//     with a tiled transpose. Costs 5 or 6 dense matrix passes and the two temporaries on top of
//     the SpMM.
//   kColMajor: S times A read as column-major (A^T, no copy), into C read as column-major; no
//     temporaries, but cuSPARSE's column-major SpMM gathers A's elements one by one.
//   kTransposeOp: B's own CSR with CUSPARSE_OPERATION_TRANSPOSE, column-major (no cache); also
//     what kNoTrans uses inside a CUDA graph capture, whatever the setting.
// Measured with bin/cu-matrix-bench on the H100 (n = 4096, 1% and 10% nonzero), as the speed of
// AddSmatMat on the same shapes over AddMatSmat's: kRowMajor 0.78-0.81 at 1% and 0.99 at 10%,
// kColMajor 0.14-0.27, kTransposeOp 0.05-0.11. Kept selectable so that the benchmark can compare
// them; all give the same results up to rounding. Process-wide; set it while no other thread runs
// AddMatSmat.
enum class MatSmatPath : int { kRowMajor, kColMajor, kTransposeOp };
void SetMatSmatPath(MatSmatPath path);
MatSmatPath GetMatSmatPath();
}  // namespace internal

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_SPARSE_MATRIX_H_
