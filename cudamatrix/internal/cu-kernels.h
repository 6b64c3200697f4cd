// cudamatrix/internal/cu-kernels.h: host-callable kernel launchers, plain C++ (no CUDA header
// needed). Private to cudamatrix/ (not installed).
// SPDX-License-Identifier: Apache-2.0
//
// Each launcher computes its own grid, launches on the given stream (asynchronous; it returns
// before the kernel finishes) through internal::Launch (cu-launch.cuh), which checks the launch.
// Definitions live in cu-kernels-<family>.cu and exist only in CUDA builds: call them inside an
// internal::RunOnGpu lambda (cu-storage.h), which CPU-only builds never emit, or under
// `#if CUCTX_HAVE_CUDA`.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_KERNELS_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_KERNELS_H_

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

// Copies `rows` rows of `row_bytes` bytes from src (rows `src_pitch` bytes apart) to dst (rows
// `dst_pitch` bytes apart), in the widest unit (16, 8, 4 or 1 bytes) that both addresses, both
// pitches and row_bytes allow. For small device-to-device copies, where one thread's cost to issue
// the copy is the whole cost: see CopyStorage2D in cu-storage.cc. src and dst must not overlap.
void LaunchCopyBytes2D(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                       size_t row_bytes, size_t rows, CuStream stream);

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

// Where a reduction kernel posts its result for a host thread spinning on it (internal::
// ReadbackSlot): two 8-byte words of mapped pinned host memory, each carrying `seq` in its high
// half and one 32-bit half of the result's bits (low half first; a float leaves the second half
// 0). Each word is one posted store that the host sees whole, so it knows both halves arrived
// when both carry this launch's seq: no fence and no separate flag store, which would wait for
// the first store to reach the host (measured on an H100: 0.7-1.0 us less per round trip).
// `words` null: no host post.
struct HostPost {
  unsigned long long* words = nullptr;
  unsigned int seq = 0;
};

// Single-pass reductions of a whole matrix (a vector is one row) to one value. Each is one kernel
// launch: blocks reduce grid-strided parts and publish their partials, the last block to finish
// combines them in block order (deterministic for a given shape and alignment) and delivers the
// result: to the host through `post` when post.words is set (`out` unused), else to device memory
// at `out`.
// `d_work` is ReduceWorkspaceBytes() bytes of device memory whose block counter is zero on entry
// (LaunchZeroReduceWorkspace once after allocating it); every launch leaves it zero again, so one
// workspace serves any number of consecutive launches on one stream. Accumulates in Real
// (ClampCount in double); 16-byte loads where the data is one aligned run. An empty matrix stores
// the identity (0 for the sums).
size_t ReduceWorkspaceBytes();
void LaunchZeroReduceWorkspace(void* d_work, CuStream stream);
// kMax / kMin skip NaN elements but return data(0, 0) when it is NaN (as the CPU's, which start
// from that element); kTrace sums the diagonal; kOffUnit is 1 if some element differs from the
// identity's by more than `tol` (|x - [r == c]| > tol), else 0.
enum class MatReduce : int32_t { kSum, kSumSquares, kMax, kMin, kTrace, kOffUnit };
void LaunchMatReduce(MatrixDim dim, const float* data, MatReduce op, float tol, void* d_work,
                     float* out, HostPost post, CuStream stream);
void LaunchMatReduce(MatrixDim dim, const double* data, MatReduce op, double tol, void* d_work,
                     double* out, HostPost post, CuStream stream);
// Sum over (r, c) < dim of a(r, c) * b(r, c) (b_trans false: b has a's shape, row stride
// b_stride) or of a(r, c) * b(c, r) (b_trans true: b is dim.cols x dim.rows), a's stride being
// dim.stride: tr(A B^T), tr(A B) and, for one row, a dot product.
void LaunchDot(MatrixDim dim, const float* a, const float* b, int32_t b_stride, bool b_trans,
               void* d_work, float* out, HostPost post, CuStream stream);
void LaunchDot(MatrixDim dim, const double* a, const double* b, int32_t b_stride, bool b_trans,
               void* d_work, double* out, HostPost post, CuStream stream);
// x = max(x, bound) (ceiling false) or min(x, bound) on data[0, dim), storing the number of
// changed elements (a double) at `out`.
void LaunchClampCount(int32_t dim, float bound, bool ceiling, float* data, void* d_work,
                      double* out, HostPost post, CuStream stream);
void LaunchClampCount(int32_t dim, double bound, bool ceiling, double* data, void* d_work,
                      double* out, HostPost post, CuStream stream);

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
// -- back-propagation and group ops (cu-kernels-nnet-diff.cu)
// Row-wise back-propagation through a softmax (log_softmax false: dst = value .* (diff - rowsum(
// value .* diff))) or a log-softmax (dst = diff - exp(value) .* rowsum(diff)); value is the
// forward output. One pass over the inputs for rows that fit in registers (up to 8192 floats or
// 4096 doubles, 16-byte accesses when every operand's rows are 16-byte aligned; 4096 of either
// otherwise), a warp per row for short rows, else a 256-thread block; longer rows take two passes.
// Every read of a row precedes the row's reduction barrier, so dst may equal value or diff.
void LaunchDiffSoftmaxRows(MatrixDim dst_dim, const float* value, int32_t value_stride,
                           const float* diff, int32_t diff_stride, bool log_softmax, float* dst,
                           CuStream stream);
void LaunchDiffSoftmaxRows(MatrixDim dst_dim, const double* value, int32_t value_stride,
                           const double* diff, int32_t diff_stride, bool log_softmax, double* dst,
                           CuStream stream);
// dst(r, g) = p-norm (power 0 counts nonzeros, inf is max |x|) or, with `max`, the maximum of
// src(r, g * group .. g * group + group - 1); src has dst_dim.rows rows of dst_dim.cols * group
// columns and must not overlap dst. group > 0.
void LaunchGroupReduce(MatrixDim dst_dim, const float* src, int32_t src_stride, int32_t group,
                       bool max, float power, float* dst, CuStream stream);
void LaunchGroupReduce(MatrixDim dst_dim, const double* src, int32_t src_stride, int32_t group,
                       bool max, double power, double* dst, CuStream stream);
// Derivatives of LaunchGroupReduce, element-wise over dst (the shape of the group input `in`):
// with `max`, dst = (in == out(r, c / group)) ? 1 : 0; else dst = out_deriv(r, c / group) times
// d out / d in (sign(x) for power 1; sign(x) where |x| == out for inf; 0 where out == 0; else
// sign(x) |x|^(p-1) out^(1-p)). out_deriv is unused (may be null) with `max`. in may equal dst;
// out and out_deriv must not overlap dst.
void LaunchGroupReduceDeriv(MatrixDim dst_dim, const float* in, int32_t in_stride, const float* out,
                            int32_t out_stride, const float* out_deriv, int32_t out_deriv_stride,
                            int32_t group, bool max, float power, float* dst, CuStream stream);
void LaunchGroupReduceDeriv(MatrixDim dst_dim, const double* in, int32_t in_stride,
                            const double* out, int32_t out_stride, const double* out_deriv,
                            int32_t out_deriv_stride, int32_t group, bool max, double power,
                            double* dst, CuStream stream);
// For each row r with 0 <= d_tgt[r] < dim.cols: d_log_post[r] = log(data(r, tgt)) and
// data(r, tgt) -= 1; a row whose target is out of range is left alone and gets NaN.
void LaunchDiffXent(MatrixDim dim, const int32_t* d_tgt, float* data, float* d_log_post,
                    CuStream stream);
void LaunchDiffXent(MatrixDim dim, const int32_t* d_tgt, double* data, double* d_log_post,
                    CuStream stream);
// One weighted element as CompObjfAndDeriv uploads it: the layout of MatrixElement<Real>.
template <typename Real>
struct CuWeightedElement {
  int32_t row;
  int32_t column;
  Real weight;
};
// Device scratch bytes LaunchCompObjfAndDeriv needs (partials and the result).
size_t CompObjfWorkspaceBytes();
// For each of the n elements e (device array, indices already checked against dim): deriv(e) +=
// e.weight / a(e) (atomically, so repeated elements add up), and d_work[0], d_work[1] (as
// doubles) = sum e.weight * log(a(e)), sum e.weight, accumulated in double per thread, then per
// block, then over the blocks in a fixed order. a (a_stride, dim's shape) must not overlap deriv.
void LaunchCompObjfAndDeriv(MatrixDim dim, const CuWeightedElement<float>* d_elements, int64_t n,
                            const float* a, int32_t a_stride, float* deriv, void* d_work,
                            CuStream stream);
void LaunchCompObjfAndDeriv(MatrixDim dim, const CuWeightedElement<double>* d_elements, int64_t n,
                            const double* a, int32_t a_stride, double* deriv, void* d_work,
                            CuStream stream);
// dst = x * (x > 0 ? alpha[c] : beta[c]) (deriv false, x = value) or diff * (x > 0 ? alpha[c] :
// beta[c]) (deriv true), per column c. value and diff may equal dst; alpha and beta must not
// overlap it.
void LaunchParametricRelu(MatrixDim dst_dim, const float* value, int32_t value_stride,
                          const float* diff, int32_t diff_stride, const float* alpha,
                          const float* beta, bool deriv, float* dst, CuStream stream);
void LaunchParametricRelu(MatrixDim dst_dim, const double* value, int32_t value_stride,
                          const double* diff, int32_t diff_stride, const double* alpha,
                          const double* beta, bool deriv, double* dst, CuStream stream);

// -- cu:: helpers (cu-kernels-math.cu)
// Row gathers. kRandomize: dst(r, c) = src(idx[r], c) (idx has dst_dim.rows entries); kCopyCols:
// dst(r, c) = src(r, idx[c]) (idx has dst_dim.cols entries); an index outside src leaves the
// element alone. kSplice: dst(r, k * src.cols + j) = src(clamp(r + idx[k], 0, src.rows - 1), j).
// src (src_dim) must not overlap dst.
enum class GatherKind : int32_t { kRandomize, kCopyCols, kSplice };
void LaunchMathGather(MatrixDim dst_dim, const float* src, MatrixDim src_dim, const int32_t* d_idx,
                      GatherKind kind, float* dst, CuStream stream);
void LaunchMathGather(MatrixDim dst_dim, const double* src, MatrixDim src_dim, const int32_t* d_idx,
                      GatherKind kind, double* dst, CuStream stream);
// dst = src with values in (-epsilon, epsilon) moved to +epsilon (x >= 0) or -epsilon; src may
// equal dst.
void LaunchEnsureNonzero(MatrixDim dst_dim, const float* src, int32_t src_stride, float epsilon,
                         float* dst, CuStream stream);
void LaunchEnsureNonzero(MatrixDim dst_dim, const double* src, int32_t src_stride, double epsilon,
                         double* dst, CuStream stream);
// Row normalization of in (in_dim, D = in_dim.cols): out(r, :D) = in(r, :) * f with
// f = 1 / sqrt(max(sum_j in(r, j)^2 / (D * target_rms^2), 2^-66)) (the ratio taken as 0 when
// D == 0), and with add_log_stddev out(r, D) = log(target_rms) - log(f). in may be out's first D
// columns; otherwise they must not overlap.
void LaunchNormalizePerRow(MatrixDim in_dim, const float* in, float target_rms, bool add_log_stddev,
                           float* out, int32_t out_stride, CuStream stream);
void LaunchNormalizePerRow(MatrixDim in_dim, const double* in, double target_rms,
                           bool add_log_stddev, double* out, int32_t out_stride, CuStream stream);
// Back-propagation of LaunchNormalizePerRow, written (not added) to in_deriv (in_dim's shape):
// in_deriv(r, j) = f dy_j + (c * (dy . x) + s) x_j with x = in_value row, dy = the first D
// elements of the out_deriv row, f as above, c = -f^3 / (D * target_rms^2) where the ratio
// exceeds the floor (else 0), and s = out_deriv(r, D) / max(x . x, D * 2^-66) with
// add_log_stddev (else 0). in_deriv may be in_value or out_deriv's first D columns.
void LaunchDiffNormalizePerRow(MatrixDim in_dim, const float* in_value, const float* out_deriv,
                               int32_t out_deriv_stride, float target_rms, bool add_log_stddev,
                               float* in_deriv, int32_t in_deriv_stride, CuStream stream);
void LaunchDiffNormalizePerRow(MatrixDim in_dim, const double* in_value, const double* out_deriv,
                               int32_t out_deriv_stride, double target_rms, bool add_log_stddev,
                               double* in_deriv, int32_t in_deriv_stride, CuStream stream);
// ---- end of neural-net family -------------------------------------------------------------------

// ---- gather/scatter family (cu-kernels-gather.cu) -----------------------------------------------
// Index arrays (int32 row or column numbers, or (first, second) pairs laid out as Int32Pair, i.e.
// interleaved int32s) are device memory. An entry outside its valid range selects nothing: a
// gathered row or column reads as zeros (kCopy) or is skipped, a scatter or element add skips it,
// a lookup yields 0. So no index value can make these kernels access memory outside their
// operands; reporting bad indexes is the caller's job.

// How GatherRows combines a selected source row with the destination row.
enum class RowGatherOp : int32_t { kCopy, kAdd, kMul };
// dst row r = src row d_indexes[r] (kCopy; zeros for an unusable index), += alpha * that row
// (kAdd) or .*= that row (kMul); the last two leave row r alone for an unusable index. src has
// src_rows rows of dst_dim.cols elements at stride src_stride; d_indexes has dst_dim.rows
// entries. src must not overlap dst.
void LaunchGatherRows(MatrixDim dst_dim, RowGatherOp op, float alpha, const float* src,
                      int32_t src_rows, int32_t src_stride, const int32_t* d_indexes, float* dst,
                      CuStream stream);
void LaunchGatherRows(MatrixDim dst_dim, RowGatherOp op, double alpha, const double* src,
                      int32_t src_rows, int32_t src_stride, const int32_t* d_indexes, double* dst,
                      CuStream stream);
// As LaunchGatherRows with row r taken from the dst_dim.cols elements at d_src_rows[r] (a device
// array of device pointers; nullptr plays the part of an unusable index).
void LaunchGatherRowPtrs(MatrixDim dst_dim, RowGatherOp op, float alpha,
                         const float* const* d_src_rows, float* dst, CuStream stream);
void LaunchGatherRowPtrs(MatrixDim dst_dim, RowGatherOp op, double alpha,
                         const double* const* d_src_rows, double* dst, CuStream stream);
// dst row d_indexes[r] += alpha * src row r for every row r of src (src_dim); dst has dst_rows
// rows of src_dim.cols elements at dst_stride. Atomic adds, so repeated indexes accumulate (in an
// unspecified order). src must not overlap dst.
void LaunchAddToRows(MatrixDim src_dim, float alpha, const float* src, const int32_t* d_indexes,
                     int32_t dst_rows, int32_t dst_stride, float* dst, CuStream stream);
void LaunchAddToRows(MatrixDim src_dim, double alpha, const double* src, const int32_t* d_indexes,
                     int32_t dst_rows, int32_t dst_stride, double* dst, CuStream stream);
// The src_dim.cols elements at d_dst_rows[r] = src row r (add false) or += alpha * src row r
// (add true, atomic); nullptr entries are skipped.
void LaunchScatterRowPtrs(MatrixDim src_dim, bool add, float alpha, const float* src,
                          float* const* d_dst_rows, CuStream stream);
void LaunchScatterRowPtrs(MatrixDim src_dim, bool add, double alpha, const double* src,
                          double* const* d_dst_rows, CuStream stream);
// dst(r, c) = src(r, d_indexes[c]) (0 for an unusable index), or += it when `add` (skipped for an
// unusable index). src has dst_dim.rows rows of src_cols elements at src_stride.
void LaunchGatherCols(MatrixDim dst_dim, const float* src, int32_t src_cols, int32_t src_stride,
                      const int32_t* d_indexes, bool add, float* dst, CuStream stream);
void LaunchGatherCols(MatrixDim dst_dim, const double* src, int32_t src_cols, int32_t src_stride,
                      const int32_t* d_indexes, bool add, double* dst, CuStream stream);
// dst(r, c) += src(j, c) for j in [first, second) of pair r (clamped to [0, src_rows)), one row
// at a time in increasing j.
void LaunchAddRowRanges(MatrixDim dst_dim, const float* src, int32_t src_rows, int32_t src_stride,
                        const int32_t* d_pairs, float* dst, CuStream stream);
void LaunchAddRowRanges(MatrixDim dst_dim, const double* src, int32_t src_rows, int32_t src_stride,
                        const int32_t* d_pairs, double* dst, CuStream stream);
// dst(r, c) = sum of src(r, j) for j in [first, second) of pair c (clamped to [0, src_cols)).
void LaunchSumColumnRanges(MatrixDim dst_dim, const float* src, int32_t src_cols,
                           int32_t src_stride, const int32_t* d_pairs, float* dst, CuStream stream);
void LaunchSumColumnRanges(MatrixDim dst_dim, const double* src, int32_t src_cols,
                           int32_t src_stride, const int32_t* d_pairs, double* dst,
                           CuStream stream);
// Square dim only: (r, c) = (c, r) for c > r (lower_to_upper) or c < r; in place, tiled.
void LaunchCopyTriangle(MatrixDim dim, bool lower_to_upper, float* data, CuStream stream);
void LaunchCopyTriangle(MatrixDim dim, bool lower_to_upper, double* data, CuStream stream);
// (r, c) = 0 for every c > r.
void LaunchSetZeroAboveDiag(MatrixDim dim, float* data, CuStream stream);
void LaunchSetZeroAboveDiag(MatrixDim dim, double* data, CuStream stream);
// d_out[i] = element pair i of the matrix (dim, data) for i < num.
void LaunchLookup(MatrixDim dim, const float* data, const int32_t* d_pairs, int32_t num,
                  float* d_out, CuStream stream);
void LaunchLookup(MatrixDim dim, const double* data, const int32_t* d_pairs, int32_t num,
                  double* d_out, CuStream stream);
// Element pair i += alpha * d_input[i] for i < num; atomic, so repeated pairs accumulate.
void LaunchAddElements(MatrixDim dim, float alpha, const int32_t* d_pairs, const float* d_input,
                       int32_t num, float* data, CuStream stream);
void LaunchAddElements(MatrixDim dim, double alpha, const int32_t* d_pairs, const double* d_input,
                       int32_t num, double* data, CuStream stream);
// (r, d_cols[r]) += alpha for each row r (dim.rows entries).
void LaunchAddToElements(MatrixDim dim, float alpha, const int32_t* d_cols, float* data,
                         CuStream stream);
void LaunchAddToElements(MatrixDim dim, double alpha, const int32_t* d_cols, double* data,
                         CuStream stream);
// mask(r, c) = a(r, c) == b(r, c) ? 1 : 0; a has dim (stride dim.stride), b and mask their own
// strides. mask must not overlap a or b.
void LaunchEqualElementMask(MatrixDim dim, const float* a, const float* b, int32_t b_stride,
                            float* mask, int32_t mask_stride, CuStream stream);
void LaunchEqualElementMask(MatrixDim dim, const double* a, const double* b, int32_t b_stride,
                            double* mask, int32_t mask_stride, CuStream stream);
// ---- end of gather/scatter family ---------------------------------------------------------------

// ---- element-wise function family (cu-kernels-functions.cu) -------------------------------------
// Element-wise maps of this family: dst = f(src), or for kMax / kMin dst = f(dst, src). a and b are
// the map's parameters (unused ones are ignored):
//   kMax, kMin        dst < src ? src : dst, src < dst ? src : dst (dst kept where either is NaN)
//   kInvert           1 / x
//   kPow              pow(x, a)
//   kPowAbs           |x|^a, negated for x < 0 when b != 0; 0 for x == 0 (1 when a == 0)
//   kHeaviside        x > 0 ? 1 : 0
//   kFloor, kCeiling  x < a ? a : x, a < x ? a : x
//   kExpLimited       exp(min(max(x, a), b)) as (x < a ? a : x), then (b < y ? b : y); a <= b
//   kExpSpecial       x < 0 ? exp(x) : x + 1
enum class FunctionMap : int32_t {
  kMax,
  kMin,
  kInvert,
  kPow,
  kPowAbs,
  kHeaviside,
  kFloor,
  kCeiling,
  kExpLimited,
  kExpSpecial
};
// Applies `map` to every element of dst (dst_dim); src has dst's shape with row stride src_stride
// and may equal dst (the in-place forms pass dst twice).
void LaunchFunctionMap(MatrixDim dst_dim, FunctionMap map, float a, float b, const float* src,
                       int32_t src_stride, float* dst, CuStream stream);
void LaunchFunctionMap(MatrixDim dst_dim, FunctionMap map, double a, double b, const double* src,
                       int32_t src_stride, double* dst, CuStream stream);
// Vector broadcasts over dst (dst_dim); v has dst_dim.cols elements for the column-indexed ops
// (kMulCols, kAddToRows) and dst_dim.rows for the row-indexed ones; v must not overlap dst:
//   kMulCols   dst(r, c) *= v[c]          kMulRows   dst(r, c) *= v[r]
//   kDivRows   dst(r, c) /= v[r]          kAddToRows dst(r, c) = beta * dst(r, c) + alpha * v[c]
//   kAddToCols dst(r, c) = beta * dst(r, c) + alpha * v[r]
enum class VecBroadcast : int32_t { kMulCols, kMulRows, kDivRows, kAddToRows, kAddToCols };
void LaunchVecBroadcast(MatrixDim dst_dim, VecBroadcast op, float alpha, const float* v, float beta,
                        float* dst, CuStream stream);
void LaunchVecBroadcast(MatrixDim dst_dim, VecBroadcast op, double alpha, const double* v,
                        double beta, double* dst, CuStream stream);
// dst(r, c) *= src(r, c / group), src having dst_dim.rows rows (row stride src_stride) and
// dst_dim.cols / group columns; group >= 1. src must not overlap dst.
void LaunchMulRowsGroupMat(MatrixDim dst_dim, const float* src, int32_t src_stride, int32_t group,
                           float* dst, CuStream stream);
void LaunchMulRowsGroupMat(MatrixDim dst_dim, const double* src, int32_t src_stride, int32_t group,
                           double* dst, CuStream stream);
// dst += alpha * op(a) blockwise, op = transpose when `trans`; a_dim is a's stored shape. When
// op(a) is a whole multiple of dst in both directions (sum_blocks) each dst element adds its
// blocks in row-major block order; otherwise dst must be a whole multiple of op(a), which is
// added to every block. a must not overlap dst.
void LaunchAddMatBlocks(MatrixDim dst_dim, float alpha, const float* a, MatrixDim a_dim, bool trans,
                        bool sum_blocks, float* dst, CuStream stream);
void LaunchAddMatBlocks(MatrixDim dst_dim, double alpha, const double* a, MatrixDim a_dim,
                        bool trans, bool sum_blocks, double* dst, CuStream stream);
// dst = beta * dst + alpha * a .* b; a and b have dst's shape and may equal dst.
void LaunchAddMatMatElements(MatrixDim dst_dim, float alpha, const float* a, int32_t a_stride,
                             const float* b, int32_t b_stride, float beta, float* dst,
                             CuStream stream);
void LaunchAddMatMatElements(MatrixDim dst_dim, double alpha, const double* a, int32_t a_stride,
                             const double* b, int32_t b_stride, double beta, double* dst,
                             CuStream stream);
// dst = c != 0 ? a * b / c : a; a, b and c have dst's shape and may equal dst.
void LaunchSetMatMatDivMat(MatrixDim dst_dim, const float* a, int32_t a_stride, const float* b,
                           int32_t b_stride, const float* c, int32_t c_stride, float* dst,
                           CuStream stream);
void LaunchSetMatMatDivMat(MatrixDim dst_dim, const double* a, int32_t a_stride, const double* b,
                           int32_t b_stride, const double* c, int32_t c_stride, double* dst,
                           CuStream stream);
// data(i, i) += alpha for i < min(dim.rows, dim.cols).
void LaunchAddToDiag(MatrixDim dim, float alpha, float* data, CuStream stream);
void LaunchAddToDiag(MatrixDim dim, double alpha, double* data, CuStream stream);
// ---- end of element-wise function family --------------------------------------------------------

// ---- vector family (cu-kernels-vector.cu) -------------------------------------------------------
// dst[i] = src[i * src_step] for i < dim, converting the element type (a matrix column with
// src_step = stride, its diagonal with stride + 1). src and dst must not overlap.
void LaunchCopyStrided(int32_t dim, const float* src, int64_t src_step, float* dst,
                       CuStream stream);
void LaunchCopyStrided(int32_t dim, const double* src, int64_t src_step, float* dst,
                       CuStream stream);
void LaunchCopyStrided(int32_t dim, const float* src, int64_t src_step, double* dst,
                       CuStream stream);
void LaunchCopyStrided(int32_t dim, const double* src, int64_t src_step, double* dst,
                       CuStream stream);

// In-place element-wise maps of a vector (see LaunchVectorMap); a and b are their parameters.
enum class VectorMap : int32_t {
  kInvert,   // x = 1 / x
  kPow,      // x = pow(x, a)
  kFloor,    // x = max(x, a)
  kCeiling,  // x = min(x, a)
  kReplace,  // x = b where x == a
};
void LaunchVectorMap(int32_t dim, VectorMap map, float a, float b, float* data, CuStream stream);
void LaunchVectorMap(int32_t dim, VectorMap map, double a, double b, double* data, CuStream stream);

// Bytes of device scratch LaunchVectorNorm needs (block partials and the
// result).
size_t VectorReduceWorkspaceBytes();
// The p-norm of data[0, dim) (as Vector::Norm: p == 0 counts nonzeros, p == inf is max |x|),
// accumulated in double, left as a double in the first 8 bytes of d_work
// (VectorReduceWorkspaceBytes() bytes, 8-byte aligned). Two kernels: per-block partials over a
// grid-strided subset, then one block combining them in block order (deterministic).
void LaunchVectorNorm(int32_t dim, const float* data, double p, void* d_work, CuStream stream);
void LaunchVectorNorm(int32_t dim, const double* data, double p, void* d_work, CuStream stream);
// Bytes of device scratch LaunchAddDiagMatMat needs for these sizes and transpositions (0 when it
// needs none, which is the case up to at least 1024 x 1024 for every transposition).
size_t DiagMatMatWorkspaceBytes(int32_t dim, int32_t inner, bool m_trans, bool n_trans);
// out[i] = beta * out[i] + alpha * sum_k op(m)(i, k) op(n)(k, i) for i < dim, k < inner; op(m)
// is dim x inner (m is inner x dim with m_trans), op(n) inner x dim. m may equal n; neither may
// overlap out. beta == 0 still reads out (a NaN there stays), as the CPU path does. One kernel
// launch, asynchronous on `stream`; the kernel is chosen by the layouts so that every operand is
// read along its contiguous direction: op(m) rows and op(n) columns both contiguous (diag(M N^T),
// AddDiagMat2 kNoTrans): a few threads of a warp per i; both strided (diag(M^T N), AddDiagMat2
// kTrans): threads across i, k spread over the block; mixed: tiles through shared memory.
// 16-byte loads where every row of both operands is 16-byte aligned. Products are summed in
// double, in an order fixed by (dim, inner, transpositions), so results are deterministic. When
// the plan splits long inner dimensions across blocks (few outputs of long sums), the blocks
// leave their partial sums in d_work (DiagMatMatWorkspaceBytes bytes, uninitialized: the launcher
// zeroes the block counters in it with one cudaMemsetAsync first) and the last block of each
// group of outputs adds them in a fixed order within the same launch; the counters are zero
// again afterwards. d_work is unused (may be null) when the size is 0.
void LaunchAddDiagMatMat(int32_t dim, int32_t inner, float alpha, const float* m, int32_t m_stride,
                         bool m_trans, const float* n, int32_t n_stride, bool n_trans, float beta,
                         float* out, void* d_work, CuStream stream);
void LaunchAddDiagMatMat(int32_t dim, int32_t inner, double alpha, const double* m,
                         int32_t m_stride, bool m_trans, const double* n, int32_t n_stride,
                         bool n_trans, double beta, double* out, void* d_work, CuStream stream);
// ---- end of vector family -----------------------------------------------------------------------

// ---- random, packed and solver helpers (cu-kernels-solve.cu) ------------------------------------

// dst(r, c) = 1 if probs(r, c) > dst(r, c) else 0, where dst holds uniform draws on entry (the
// comparison of CuRand::BinarizeProbs). probs has dst_dim's shape and must not overlap dst.
void LaunchBinarizeProbs(MatrixDim dst_dim, const float* probs, int32_t probs_stride, float* dst,
                         CuStream stream);
void LaunchBinarizeProbs(MatrixDim dst_dim, const double* probs, int32_t probs_stride, double* dst,
                         CuStream stream);

// The strict upper triangle of the square matrix `dim`: zeroed (mirror false) or set to the
// transpose of the strict lower triangle (mirror true). The lower triangle is not written.
void LaunchFillUpperTriangle(MatrixDim dim, bool mirror, float* data, CuStream stream);
void LaunchFillUpperTriangle(MatrixDim dim, bool mirror, double* data, CuStream stream);

// Packed storage: the lower triangle of an n x n matrix row by row, (r, c) at r (r + 1) / 2 + c
// (matrix/packed-matrix.h). n <= 65535, so every offset fits in int32 arithmetic done in size_t.
//
// How a full matrix is made from a packed triangle P: kSymmetric, (r, c) = P(max, min);
// kLower, P(r, c) on and below the diagonal and 0 above; kUpper, the transpose of kLower.
enum class PackedLayout : int32_t { kSymmetric, kLower, kUpper };
// Which part of a full square matrix M a packed triangle takes: kLower, P(r, c) = M(r, c);
// kUpper, P(r, c) = M(c, r); kMean, (M(r, c) + M(c, r)) / 2.
enum class PackSource : int32_t { kLower, kUpper, kMean };
// dst (dst_dim, square) = the full matrix `layout` makes from `packed` (dst_dim.rows^2 elements
// written). packed must not overlap dst.
void LaunchUnpackTriangle(MatrixDim dst_dim, const float* packed, PackedLayout layout, float* dst,
                          CuStream stream);
void LaunchUnpackTriangle(MatrixDim dst_dim, const double* packed, PackedLayout layout, double* dst,
                          CuStream stream);
// packed = the triangle `source` takes from the square matrix src (src_dim, stride included).
// src must not overlap packed.
void LaunchPackTriangle(MatrixDim src_dim, const float* src, PackSource source, float* packed,
                        CuStream stream);
void LaunchPackTriangle(MatrixDim src_dim, const double* src, PackSource source, double* packed,
                        CuStream stream);
// Operations on the n diagonal elements of a packed matrix: set to alpha, add alpha, scale by
// alpha, or copy them to out[0, n) (the only op that uses out; the others may pass nullptr).
enum class PackedDiagOp : int32_t { kSet, kAdd, kScale, kCopyOut };
void LaunchPackedDiag(int32_t n, PackedDiagOp op, float alpha, float* packed, float* out,
                      CuStream stream);
void LaunchPackedDiag(int32_t n, PackedDiagOp op, double alpha, double* packed, double* out,
                      CuStream stream);
// packed += alpha * v v^T (the lower triangle of it); v has n elements and must not overlap packed.
void LaunchPackedAddVec2(int32_t n, float alpha, const float* v, float* packed, CuStream stream);
void LaunchPackedAddVec2(int32_t n, double alpha, const double* v, double* packed, CuStream stream);
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

// ---- element selection (cu-kernels-vector-packed.cu) --------------------------------------------
// dst[i] = mat(i, d_elements[i]) (trans false) or mat(d_elements[i], i) (trans true) for i < n;
// an index outside mat leaves dst[i] unchanged (the host checks indices only in CPU mode).
void LaunchCopyElements(MatrixDim mat_dim, const float* mat, bool trans, const int32_t* d_elements,
                        int32_t n, float* dst, CuStream stream);
void LaunchCopyElements(MatrixDim mat_dim, const double* mat, bool trans, const int32_t* d_elements,
                        int32_t n, double* dst, CuStream stream);
// ---- end of element selection -------------------------------------------------------------------

// ---- LSTM nonlinearity family (cu-kernels-lstm.cu) ----------------------------------------------
// The equations are those of cu::ComputeLstmNonlinearity / cu::BackpropLstmNonlinearity
// (cudamatrix/cu-math.h). C = cell_dim; the input has 5C columns, plus 3 dropout-mask columns when
// `dropout`. Warps run along a row (coalesced); a forward thread takes up to 16 bytes of adjacent
// cells where C, the strides and the pointers are aligned for it, a backward thread one cell.

// output (rows x 2C) = (c_t, m_t) of input (rows x 5C[+3]) and params (3 x C).
void LaunchLstmForward(int32_t rows, int32_t cell_dim, bool dropout, const float* input,
                       int32_t input_stride, const float* params, int32_t params_stride,
                       float* output, int32_t output_stride, CuStream stream);
void LaunchLstmForward(int32_t rows, int32_t cell_dim, bool dropout, const double* input,
                       int32_t input_stride, const double* params, int32_t params_stride,
                       double* output, int32_t output_stride, CuStream stream);

// The operands of the backward pass (strides in elements). input_deriv may be nullptr (not
// written); params_deriv == nullptr means none of the column sums is wanted, and then the three
// other sum outputs are nullptr too. count is 1 + count_in (rounded to Real as the CPU path does).
template <typename Real>
struct LstmBackpropArgs {
  int32_t rows, cell_dim;
  bool dropout;
  const Real* input;
  int32_t input_stride;
  const Real* params;
  int32_t params_stride;
  const Real* output_deriv;
  int32_t output_deriv_stride;
  const double* deriv_sum_in;
  int32_t deriv_sum_in_stride;
  const Real* self_repair_config;  // 10 entries: 5 thresholds, then 5 scales
  double count;
  Real* input_deriv;
  int32_t input_deriv_stride;
  Real* params_deriv;
  int32_t params_deriv_stride;
  double* value_sum_out;
  int32_t value_sum_out_stride;
  double* deriv_sum_out;
  int32_t deriv_sum_out_stride;
  Real* self_repair_sum_out;
  int32_t self_repair_sum_out_stride;
};
// Device scratch the backward pass needs for its column sums (0 when params_deriv is nullptr).
size_t LstmBackpropWorkspaceBytes(int32_t rows, int32_t cell_dim, bool want_sums);
// The backward pass: one kernel over the rows (with sums: one wave of resident blocks, each reducing
// its rows' column sums in shared memory into d_work), then, when sums are wanted, a kernel that
// adds the blocks' partials of each of the 13 x C sums in a fixed order (deterministic) and writes
// / adds the 5 x C and 3 x C outputs.
void LaunchLstmBackprop(const LstmBackpropArgs<float>& args, void* d_work, CuStream stream);
void LaunchLstmBackprop(const LstmBackpropArgs<double>& args, void* d_work, CuStream stream);
// ---- end of LSTM nonlinearity family ------------------------------------------------------------
// ---- compressed-matrix family (cu-kernels-compressed.cu) ---------------------------------------
// The element arithmetic is internal/cu-quantize.h. One thread per element, grid-striding, reads
// and writes coalesced along rows; the integer matrix is packed (row stride = src_dim.cols).
// dst(r, c) = QuantizeValue<I>(src(r, c), inv_scale, truncate) for the src_dim matrix src.
void LaunchCompressMat(MatrixDim src_dim, const float* src, float inv_scale, bool truncate,
                       int8_t* dst, CuStream stream);
void LaunchCompressMat(MatrixDim src_dim, const float* src, float inv_scale, bool truncate,
                       uint8_t* dst, CuStream stream);
void LaunchCompressMat(MatrixDim src_dim, const float* src, float inv_scale, bool truncate,
                       int16_t* dst, CuStream stream);
void LaunchCompressMat(MatrixDim src_dim, const float* src, float inv_scale, bool truncate,
                       uint16_t* dst, CuStream stream);
// dst(r, c) = QuantizePositive<I>(src(r, c)) (1 where src > 0, else 0).
void LaunchCompressMatSign(MatrixDim src_dim, const float* src, int8_t* dst, CuStream stream);
void LaunchCompressMatSign(MatrixDim src_dim, const float* src, uint8_t* dst, CuStream stream);
void LaunchCompressMatSign(MatrixDim src_dim, const float* src, int16_t* dst, CuStream stream);
void LaunchCompressMatSign(MatrixDim src_dim, const float* src, uint16_t* dst, CuStream stream);
// dst(r, c) = scale * src(r, c) for the dst_dim matrix dst (src packed, dst_dim.cols per row).
void LaunchUncompressMat(MatrixDim dst_dim, const int8_t* src, float scale, float* dst,
                         CuStream stream);
void LaunchUncompressMat(MatrixDim dst_dim, const uint8_t* src, float scale, float* dst,
                         CuStream stream);
void LaunchUncompressMat(MatrixDim dst_dim, const int16_t* src, float scale, float* dst,
                         CuStream stream);
void LaunchUncompressMat(MatrixDim dst_dim, const uint16_t* src, float scale, float* dst,
                         CuStream stream);
// ---- end of compressed-matrix family -----------------------------------------------------------

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_KERNELS_H_
