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

// Bytes of device scratch LaunchVectorNorm and LaunchClampCount need (block partials and the
// result).
size_t VectorReduceWorkspaceBytes();
// The p-norm of data[0, dim) (as Vector::Norm: p == 0 counts nonzeros, p == inf is max |x|),
// accumulated in double, left as a double in the first 8 bytes of d_work
// (VectorReduceWorkspaceBytes() bytes, 8-byte aligned). Two kernels: per-block partials over a
// grid-strided subset, then one block combining them in block order (deterministic).
void LaunchVectorNorm(int32_t dim, const float* data, double p, void* d_work, CuStream stream);
void LaunchVectorNorm(int32_t dim, const double* data, double p, void* d_work, CuStream stream);
// x = max(x, bound) (ceiling false) or min(x, bound) on data[0, dim), leaving the number of
// changed elements as a double in the first 8 bytes of d_work, as LaunchVectorNorm.
void LaunchClampCount(int32_t dim, float bound, bool ceiling, float* data, void* d_work,
                      CuStream stream);
void LaunchClampCount(int32_t dim, double bound, bool ceiling, double* data, void* d_work,
                      CuStream stream);

// Bytes of device scratch LaunchAddDiagMatMat needs for these sizes (0 when it needs none).
size_t DiagMatMatWorkspaceBytes(int32_t dim, int32_t inner);
// out[i] = beta * out[i] + alpha * sum_k op(m)(i, k) op(n)(k, i) for i < dim, k < inner; op(m)
// is dim x inner (m is inner x dim with m_trans), op(n) inner x dim. m may equal n; neither may
// overlap out. Blocks of 32 x 8 threads own 32 consecutive i and a range of k; tiles of both
// operands go through shared memory in their coalesced direction and products are summed in
// double. When inner is long next to dim, k is split over blockIdx.y and a second kernel adds the
// splits' partials (in d_work, DiagMatMatWorkspaceBytes bytes) in a fixed order.
void LaunchAddDiagMatMat(int32_t dim, int32_t inner, float alpha, const float* m, int32_t m_stride,
                         bool m_trans, const float* n, int32_t n_stride, bool n_trans, float beta,
                         float* out, void* d_work, CuStream stream);
void LaunchAddDiagMatMat(int32_t dim, int32_t inner, double alpha, const double* m,
                         int32_t m_stride, bool m_trans, const double* n, int32_t n_stride,
                         bool n_trans, double beta, double* out, void* d_work, CuStream stream);
// ---- end of vector family -----------------------------------------------------------------------

// ---- random, packed and solver helpers (cu-kernels-solve.cu) ------------------------------------
// ---- end of random, packed and solver helpers ---------------------------------------------------

// ---- sparse family (cu-kernels-sparse.cu) -------------------------------------------------------
// ---- end of sparse family -----------------------------------------------------------------------

// ---- health-check family (cu-kernels-health.cu) -------------------------------------------------
// ---- end of health-check family -----------------------------------------------------------------

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_KERNELS_H_
