// cudamatrix/cu-kernels.h: host-callable kernel launchers, plain C++ (no CUDA header needed).
// SPDX-License-Identifier: Apache-2.0
//
// Each launcher computes its own grid, launches on the given stream (asynchronous; it returns
// before the kernel finishes) and checks the launch with CUCTX_CUDA_CHECK_LAUNCH. Definitions live
// in cu-kernels-<family>.cu and exist only in CUDA builds; call them under `#if CUCTX_HAVE_CUDA`.
#ifndef CUCTX_CUDAMATRIX_CU_KERNELS_H_
#define CUCTX_CUDAMATRIX_CU_KERNELS_H_

#include "cudamatrix/cu-matrixdim.h"

#include <cstddef>
#include <cstdint>

struct CUstream_st;  // the same opaque type as cudaStream_t

namespace cuctx {

using CuStream = CUstream_st*;

// Launches an empty kernel on `stream`; used on the legacy default stream by SynchronizeGpu().
void LaunchNoOp(CuStream stream);

// ---- copy family (cu-kernels-copy.cu) ----------------------------------------------------------

// Fills `count` elements of `elem_bytes` (4 or 8) bytes each with the bit pattern `pattern` (its
// low 32 bits when elem_bytes is 4). d_data must be aligned to elem_bytes.
void LaunchFill(void* d_data, int64_t count, int32_t elem_bytes, uint64_t pattern, CuStream stream);

// dst (dst_dim) = src, or src^T when `trans` (then src is dst_dim.cols x dst_dim.rows with row
// stride src_stride), converting the element type. Transposes go through shared-memory tiles so
// that reads and writes are both coalesced. src and dst must not overlap.
void LaunchCopyMat(MatrixDim dst_dim, const float* src, int32_t src_stride, bool trans, float* dst,
                   CuStream stream);
void LaunchCopyMat(MatrixDim dst_dim, const double* src, int32_t src_stride, bool trans, float* dst,
                   CuStream stream);
void LaunchCopyMat(MatrixDim dst_dim, const float* src, int32_t src_stride, bool trans, double* dst,
                   CuStream stream);
void LaunchCopyMat(MatrixDim dst_dim, const double* src, int32_t src_stride, bool trans,
                   double* dst, CuStream stream);

// Every element of the matrix (dim) = value.
void LaunchSetMat(MatrixDim dim, float value, float* data, CuStream stream);
void LaunchSetMat(MatrixDim dim, double value, double* data, CuStream stream);

// ---- element-wise family (cu-kernels-elementwise.cu) -------------------------------------------

// data *= alpha, element-wise.
void LaunchScaleMat(MatrixDim dim, float alpha, float* data, CuStream stream);
void LaunchScaleMat(MatrixDim dim, double alpha, double* data, CuStream stream);
// data += alpha, element-wise.
void LaunchAddScalarMat(MatrixDim dim, float alpha, float* data, CuStream stream);
void LaunchAddScalarMat(MatrixDim dim, double alpha, double* data, CuStream stream);
// dst = alpha * op(src) + beta * dst, op = transpose when `trans` (src is then dst_dim.cols x
// dst_dim.rows). With trans, src and dst must not overlap; without, src may equal dst.
void LaunchAddMat(MatrixDim dst_dim, float alpha, const float* src, int32_t src_stride, bool trans,
                  float beta, float* dst, CuStream stream);
void LaunchAddMat(MatrixDim dst_dim, double alpha, const double* src, int32_t src_stride,
                  bool trans, double beta, double* dst, CuStream stream);
// dst *= src (element-wise), dst /= src (element-wise); src has dst's shape and may equal dst.
void LaunchMulElements(MatrixDim dst_dim, const float* src, int32_t src_stride, float* dst,
                       CuStream stream);
void LaunchMulElements(MatrixDim dst_dim, const double* src, int32_t src_stride, double* dst,
                       CuStream stream);
void LaunchDivElements(MatrixDim dst_dim, const float* src, int32_t src_stride, float* dst,
                       CuStream stream);
void LaunchDivElements(MatrixDim dst_dim, const double* src, int32_t src_stride, double* dst,
                       CuStream stream);

// ---- reduction family (cu-kernels-reduce.cu) ---------------------------------------------------

// Bytes of device scratch a single-pass reduction needs (partials, result and a block counter).
size_t ReduceWorkspaceBytes();
// Sum of the elements of `data` (of their squares when `squares`), in one kernel launch. The
// result is left in the first sizeof(Real) bytes of d_work (ReduceWorkspaceBytes() bytes of device
// memory, aligned to 256). Accumulates in Real: per thread sequentially over a grid-strided
// subset, then a tree over the block, then a tree over the (at most kCuReduceMaxBlocks) block
// partials in a fixed order, so the result is deterministic for a given shape.
void LaunchSum(MatrixDim dim, const float* data, bool squares, void* d_work, CuStream stream);
void LaunchSum(MatrixDim dim, const double* data, bool squares, void* d_work, CuStream stream);

// ---- BLAS family (cu-kernels-blas.cu) ----------------------------------------------------------

// dst = beta * dst + alpha * diag(v) op(m): row r of op(m) scaled by v[r] (v has dst_dim.rows
// elements). op = transpose when `trans` (m is then dst_dim.cols x dst_dim.rows). m may equal dst
// without transposition.
void LaunchAddDiagVecMat(MatrixDim dst_dim, float alpha, const float* v, const float* m,
                         int32_t m_stride, bool trans, float beta, float* dst, CuStream stream);
void LaunchAddDiagVecMat(MatrixDim dst_dim, double alpha, const double* v, const double* m,
                         int32_t m_stride, bool trans, double beta, double* dst, CuStream stream);
// dst = beta * dst + alpha * op(m) diag(v): column c scaled by v[c] (v has dst_dim.cols elements).
void LaunchAddMatDiagVec(MatrixDim dst_dim, float alpha, const float* m, int32_t m_stride,
                         bool trans, const float* v, float beta, float* dst, CuStream stream);
void LaunchAddMatDiagVec(MatrixDim dst_dim, double alpha, const double* m, int32_t m_stride,
                         bool trans, const double* v, double beta, double* dst, CuStream stream);
// dst[i] = beta * dst[i] + alpha * v[i] * r[i] for i < dim; v or r may equal dst.
void LaunchAddVecVec(int32_t dim, float alpha, const float* v, const float* r, float beta,
                     float* dst, CuStream stream);
void LaunchAddVecVec(int32_t dim, double alpha, const double* v, const double* r, double beta,
                     double* dst, CuStream stream);

// ---- neural-net family (cu-kernels-nnet.cu) ----------------------------------------------------
// Element-wise maps of the neural-net family (see LaunchNnetMap).
enum class NnetMap : int32_t { kSigmoid, kTanh, kSoftHinge, kExp, kLog };
// dst = f(src) element-wise: sigmoid (exp of non-positive arguments only), tanh, soft hinge
// log(1 + exp(x)) computed as max(x, 0) + log1p(exp(-|x|)), exp or log. src has dst_dim's shape
// with row stride src_stride and may equal dst (in-place maps pass dst twice).
void LaunchNnetMap(MatrixDim dst_dim, NnetMap map, const float* src, int32_t src_stride, float* dst,
                   CuStream stream);
void LaunchNnetMap(MatrixDim dst_dim, NnetMap map, const double* src, int32_t src_stride,
                   double* dst, CuStream stream);
// dst = diff .* value .* (1 - value) (tanh false) or diff .* (1 - value .^ 2) (tanh true); value
// and diff have dst_dim's shape and may equal dst.
void LaunchDiffSigmoidTanh(MatrixDim dst_dim, const float* value, int32_t value_stride,
                           const float* diff, int32_t diff_stride, bool tanh, float* dst,
                           CuStream stream);
void LaunchDiffSigmoidTanh(MatrixDim dst_dim, const double* value, int32_t value_stride,
                           const double* diff, int32_t diff_stride, bool tanh, double* dst,
                           CuStream stream);
// Row-wise softmax (log_output false) or log-softmax of src into dst (dst_dim); one block per row
// subtracts the row maximum before exponentiating. src may equal dst.
void LaunchSoftMaxRows(MatrixDim dst_dim, const float* src, int32_t src_stride, bool log_output,
                       float* dst, CuStream stream);
void LaunchSoftMaxRows(MatrixDim dst_dim, const double* src, int32_t src_stride, bool log_output,
                       double* dst, CuStream stream);
// Reductions along each row.
enum class RowReduceOp : int32_t { kSum, kMax, kMin };
// d_out[r] = beta * d_out[r] + alpha * op(row r of data) for every row (d_out is always read, so
// it must be initialized). One block per row; an empty row reduces to 0, -inf or +inf.
void LaunchRowReduce(MatrixDim dim, const float* data, RowReduceOp op, float alpha, float beta,
                     float* d_out, CuStream stream);
void LaunchRowReduce(MatrixDim dim, const double* data, RowReduceOp op, double alpha, double beta,
                     double* d_out, CuStream stream);
// d_out[c] = beta * d_out[c] + alpha * (sum of column c of data); d_out is always read.
void LaunchColSum(MatrixDim dim, const float* data, float alpha, float beta, float* d_out,
                  CuStream stream);
void LaunchColSum(MatrixDim dim, const double* data, double alpha, double beta, double* d_out,
                  CuStream stream);
// d_id[r] = column of the largest element of row r, the lowest such column on ties; dim.cols > 0.
void LaunchFindRowMaxId(MatrixDim dim, const float* data, int32_t* d_id, CuStream stream);
void LaunchFindRowMaxId(MatrixDim dim, const double* data, int32_t* d_id, CuStream stream);
// ---- end of neural-net family -------------------------------------------------------------------

// ---- gather/scatter family (cu-kernels-gather.cu) -----------------------------------------------
// ---- end of gather/scatter family ---------------------------------------------------------------

// ---- element-wise function family (cu-kernels-functions.cu) -------------------------------------
// ---- end of element-wise function family --------------------------------------------------------

// ---- vector family (cu-kernels-vector.cu) -------------------------------------------------------
// ---- end of vector family -----------------------------------------------------------------------

// ---- random, packed and solver helpers (cu-kernels-solve.cu) ------------------------------------
// ---- end of random, packed and solver helpers ---------------------------------------------------

// ---- sparse family (cu-kernels-sparse.cu) -------------------------------------------------------
// CSR operands: `rows` rows, zero-based int32 offsets d_offsets[0..rows] into the column indexes
// d_cols and values d_values; the columns of a row are distinct.

// Bytes of device scratch LaunchExclusiveScan needs for n elements (a CUB size query; no launch).
size_t SparseScanWorkspaceBytes(int32_t n);
// d_out[i] = d_in[0] + ... + d_in[i - 1] for i < n (d_out[0] = 0). d_in and d_out must not
// overlap; d_work holds work_bytes >= SparseScanWorkspaceBytes(n) bytes.
void LaunchExclusiveScan(const int32_t* d_in, int32_t n, int32_t* d_out, void* d_work,
                         size_t work_bytes, CuStream stream);

// One-hot rows, step 1: d_counts[i] = 1 where d_indexes[i] >= 0 and (no weights or
// d_weights[i] != 0), else 0, for i < n; d_counts[n] = 0. An entry with d_indexes[i] >= dim
// counts 0 and lowers *d_bad (set to n by the caller) to the smallest such i.
void LaunchOneHotCounts(int32_t n, const int32_t* d_indexes, const float* d_weights, int32_t dim,
                        int32_t* d_counts, int32_t* d_bad, CuStream stream);
void LaunchOneHotCounts(int32_t n, const int32_t* d_indexes, const double* d_weights, int32_t dim,
                        int32_t* d_counts, int32_t* d_bad, CuStream stream);
// Step 2, given the scanned counts d_offsets (n + 1 entries): row i's element, if it has one, is
// column d_indexes[i] with value d_weights[i] (1 without weights).
void LaunchOneHotFill(int32_t n, const int32_t* d_indexes, const float* d_weights,
                      const int32_t* d_offsets, int32_t* d_cols, float* d_values, CuStream stream);
void LaunchOneHotFill(int32_t n, const int32_t* d_indexes, const double* d_weights,
                      const int32_t* d_offsets, int32_t* d_cols, double* d_values, CuStream stream);

// Row selection, step 1: d_counts[i] = the length of input row d_rows[i] for i < n, d_counts[n] =
// 0. An entry outside [0, in_rows) counts 0 and lowers *d_bad (set to n) to the smallest such i.
void LaunchSelectRowsCounts(int32_t n, const int32_t* d_rows, int32_t in_rows,
                            const int32_t* d_in_offsets, int32_t* d_counts, int32_t* d_bad,
                            CuStream stream);
// Step 2: output row i (offsets d_out_offsets) = input row d_rows[i]; one warp per row.
void LaunchSelectRowsCopy(int32_t n, const int32_t* d_rows, const int32_t* d_in_offsets,
                          const int32_t* d_in_cols, const float* d_in_values,
                          const int32_t* d_out_offsets, int32_t* d_out_cols, float* d_out_values,
                          CuStream stream);
void LaunchSelectRowsCopy(int32_t n, const int32_t* d_rows, const int32_t* d_in_offsets,
                          const int32_t* d_in_cols, const double* d_in_values,
                          const int32_t* d_out_offsets, int32_t* d_out_cols, double* d_out_values,
                          CuStream stream);

// For every stored element (r, c, v): dst(r, c) (dst(c, r) when `trans`) = alpha * v, or += alpha
// * v when `add`, converting to the destination type; other elements are untouched. One warp per
// row; each element has its own destination, so no atomics.
void LaunchCsrScatter(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                      const float* d_values, bool trans, float alpha, bool add, MatrixDim dst_dim,
                      float* dst, CuStream stream);
void LaunchCsrScatter(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                      const float* d_values, bool trans, float alpha, bool add, MatrixDim dst_dim,
                      double* dst, CuStream stream);
void LaunchCsrScatter(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                      const double* d_values, bool trans, double alpha, bool add, MatrixDim dst_dim,
                      float* dst, CuStream stream);
void LaunchCsrScatter(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                      const double* d_values, bool trans, double alpha, bool add, MatrixDim dst_dim,
                      double* dst, CuStream stream);

// d_prod[k] = v * a(r, c) (same_shape) or v * a(c, r) for the k-th stored element (r, c, v); the
// terms of a trace tr(A op(B)) whose sum LaunchSum then takes.
void LaunchCsrTraceTerms(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                         const float* d_values, MatrixDim a_dim, const float* a, bool same_shape,
                         float* d_prod, CuStream stream);
void LaunchCsrTraceTerms(int32_t rows, const int32_t* d_offsets, const int32_t* d_cols,
                         const double* d_values, MatrixDim a_dim, const double* a, bool same_shape,
                         double* d_prod, CuStream stream);
// ---- end of sparse family -----------------------------------------------------------------------

// ---- health-check family (cu-kernels-health.cu) -------------------------------------------------
// ---- end of health-check family -----------------------------------------------------------------

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_KERNELS_H_
