// cudamatrix/cu-math.h: the cu:: helper functions of Kaldi's cudamatrix (row permutation, frame
// splicing, column gather, EnsureNonzero, per-row RMS normalization and its derivative).
// SPDX-License-Identifier: Apache-2.0
//
// Free functions on Cu containers. As for the container methods, each runs one kernel on this
// thread's stream (cudaStreamPerThread) when a GPU is selected and returns before it finishes
// (none of them waits), and otherwise runs plain loops over the host data, so that both modes
// compute the same thing. Misuse (shape mismatch, forbidden overlap, bad parameter) throws
// cuctx::Error naming the shapes or the value, in both modes.
//
// NOTE ON index arrays: the CuArray arguments live on the device in GPU mode. Checking their
// entries would need a copy to the host and a wait for the stream, so only the CPU path checks
// them (an out-of-range entry throws there, before anything is written); the GPU kernels skip an
// element whose source index is out of range, leaving that destination element unchanged.
#ifndef CUCTX_CUDAMATRIX_CU_MATH_H_
#define CUCTX_CUDAMATRIX_CU_MATH_H_

#include "base/types.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"

namespace cuctx {
namespace cu {

// Row permutation: tgt->Row(r) = src.Row(copy_from_idx[r]) for r < copy_from_idx.Dim(); later
// rows of tgt are left unchanged. src and *tgt have the same shape and must not overlap;
// copy_from_idx.Dim() <= tgt->NumRows() and its entries are rows of src.
template <typename Real>
void Randomize(const CuMatrixBase<Real>& src, const CuArray<int32>& copy_from_idx,
               CuMatrixBase<Real>* tgt);

// Frame splicing: with n = src.NumCols() and K = frame_offsets.Dim(), tgt has src's rows and
// n * K columns and tgt(i, k * n + j) = src(i + frame_offsets[k], j), where a row index below 0
// or past the end is clamped to the first or last row (so any offset is valid). src and *tgt
// must not overlap.
template <typename Real>
void Splice(const CuMatrixBase<Real>& src, const CuArray<int32>& frame_offsets,
            CuMatrixBase<Real>* tgt);

// Column gather: tgt(i, j) = src(i, copy_from_indices[j]). src and *tgt have the same number of
// rows; copy_from_indices has tgt->NumCols() entries, each a column of src. src and *tgt must not
// overlap. (CuMatrixBase::CopyCols is the general form.)
template <typename Real>
void Copy(const CuMatrixBase<Real>& src, const CuArray<int32>& copy_from_indices,
          CuMatrixBase<Real>* tgt);

// dest = src with every value bounded away from zero by epsilon (> 0): x if |x| >= epsilon,
// epsilon if 0 <= x < epsilon, -epsilon if -epsilon < x < 0 (NaN stays NaN). src and *dest have
// the same shape (dimension); src is *dest itself or disjoint from it.
template <typename Real>
void EnsureNonzero(const CuMatrixBase<Real>& src, Real epsilon, CuMatrixBase<Real>* dest);
template <typename Real>
void EnsureNonzero(const CuVectorBase<Real>& src, Real epsilon, CuVectorBase<Real>* dest);

// Scales each row x of `in` (D = in.NumCols()) to root-mean-square target_rms (> 0):
// out(r, :D) = f x with f = 1 / sqrt(max(x . x / (D * target_rms^2), 2^-66)) (the ratio taken as
// 0 when D == 0; the floor keeps zero rows finite and its square root is exact in float). With
// add_log_stddev, *out has D + 1 columns and out(r, D) = log(target_rms / f), i.e.
// log(max(sqrt(x . x / D), 2^-33 target_rms)); else it has in's shape. in may be out's first D
// columns (in place: same data and stride), else must not overlap *out. GPU: one kernel, a warp
// per row for rows of at most 128 columns, else a 256-thread block per row.
template <typename Real>
void NormalizePerRow(const CuMatrixBase<Real>& in, Real target_rms, bool add_log_stddev,
                     CuMatrixBase<Real>* out);

// Back-propagation through NormalizePerRow: given its input in_value (D columns) and the
// derivative out_deriv w.r.t. its output (D + 1 columns with add_log_stddev, else D), writes
// (does not add) the derivative w.r.t. the input into *in_deriv (in_value's shape). Per row, with
// x the input, dy the first D output derivatives, p = x . x / (D * target_rms^2) and f as above:
//   in_deriv = f dy + (c (dy . x) + s) x,   c = p > 2^-66 ? -f^3 / (D * target_rms^2) : 0,
//   s = add_log_stddev ? out_deriv(r, D) / max(x . x, D * 2^-66) : 0
// (the floor of the log-stddev term follows Kaldi; it keeps zero rows finite). *in_deriv may be
// in_value itself or out_deriv's first D columns (same data and stride); otherwise it must not
// overlap either. (Kaldi's CPU path adds to *in_deriv and its GPU path writes; writing is what
// both give for an in_deriv that is zero on entry.)
template <typename Real>
void DiffNormalizePerRow(const CuMatrixBase<Real>& in_value, const CuMatrixBase<Real>& out_deriv,
                         Real target_rms, bool add_log_stddev, CuMatrixBase<Real>* in_deriv);

// ---- LSTM nonlinearity (cu-math-lstm.cc) ------------------------------------------------------
// The cell nonlinearity of Kaldi's LstmNonlinearityComponent, forward and backward.
//
// Shapes: N rows, C cells. `input` is N x 5C, the blocks (i_part, f_part, c_part, o_part, c_prev)
// of C columns each, or N x (5C + 3) whose last three columns are per-row dropout scales
// (i_scale, f_scale, o_scale; 1 without them). `params` is 3 x C: the diagonal peephole weights
// w_ic, w_fc, w_oc. Per element (row r, cell c), with sigma the logistic function:
//   i_t = sigma(i_part + w_ic c_prev)        f_t = sigma(f_part + w_fc c_prev)
//   c_t = f_scale f_t c_prev + i_scale i_t tanh(c_part)
//   o_t = sigma(o_part + w_oc c_t)           m_t = o_scale o_t tanh(c_t)
// Misuse (a width that is neither 5C nor 5C + 3, any other shape mismatch, a forbidden overlap, a
// NULL where one is not allowed) throws cuctx::Error naming the argument, in both modes. GPU: one
// thread per (row, cell) element, 32 cells of a row per warp; asynchronous on this thread's
// stream. The Cpu* forms run the host loops whatever the mode (the reference the tests use).

// *output (N x 2C) = (c_t, m_t). output must not overlap input or params.
template <typename Real>
void ComputeLstmNonlinearity(const CuMatrixBase<Real>& input, const CuMatrixBase<Real>& params,
                             CuMatrixBase<Real>* output);
template <typename Real>
void CpuComputeLstmNonlinearity(const MatrixBase<Real>& input, const MatrixBase<Real>& params,
                                MatrixBase<Real>* output);

// The backward pass of ComputeLstmNonlinearity, with Kaldi's self-repair and statistics.
// output_deriv (N x 2C) is dF/d(c_t, m_t). deriv_sum_in (5 x C) holds the running sums of the
// derivatives of the five nonlinearities, in the order (i_t, f_t, tanh(c_part), o_t, tanh(c_t)),
// over count_in rows. self_repair_config has 10 entries: thresholds t_0..t_4, then scales s_0..s_4.
// Self-repair of nonlinearity k is on for cell c when deriv_sum_in(k, c) / (1 + count_in) < t_k;
// it then subtracts s_k (2 y - 1) for a sigmoid output y, or s_k y for a tanh output y, from the
// derivative w.r.t. that nonlinearity's input, on every row.
// Outputs (each optional as stated; pass nullptr to skip):
//   input_deriv (N x input width) is *written* with dF/d(input) plus the self-repair terms; the
//     three dropout columns, if any, are left unchanged. May be `input` itself (same data and
//     stride); otherwise must not overlap any input.
//   params_deriv (3 x C) is *written* with dF/d(params) (the self-repair terms included).
//   value_sum_out (5 x C) gets the sums over the rows of the five nonlinearity values *added*.
//   deriv_sum_out (5 x C) gets the sums of their derivatives (y (1 - y), or 1 - y^2) *added*; it
//     may be deriv_sum_in itself.
//   self_repair_sum_out (5 x C) is *written*: N where self-repair of (k, c) was on, else 0.
// params_deriv, value_sum_out, deriv_sum_out and self_repair_sum_out are all nullptr or all set.
// GPU: one kernel over the rows whose blocks reduce their column sums in shared memory, then (with
// the sums) one small kernel adding the blocks' partials in a fixed order (deterministic).
template <typename Real>
void BackpropLstmNonlinearity(const CuMatrixBase<Real>& input, const CuMatrixBase<Real>& params,
                              const CuMatrixBase<Real>& output_deriv,
                              const CuMatrixBase<double>& deriv_sum_in,
                              const CuVectorBase<Real>& self_repair_config, double count_in,
                              CuMatrixBase<Real>* input_deriv, CuMatrixBase<Real>* params_deriv,
                              CuMatrixBase<double>* value_sum_out,
                              CuMatrixBase<double>* deriv_sum_out,
                              CuMatrixBase<Real>* self_repair_sum_out);
template <typename Real>
void CpuBackpropLstmNonlinearity(const MatrixBase<Real>& input, const MatrixBase<Real>& params,
                                 const MatrixBase<Real>& output_deriv,
                                 const MatrixBase<double>& deriv_sum_in,
                                 const VectorBase<Real>& self_repair_config, double count_in,
                                 MatrixBase<Real>* input_deriv, MatrixBase<Real>* params_deriv,
                                 MatrixBase<double>* value_sum_out,
                                 MatrixBase<double>* deriv_sum_out,
                                 MatrixBase<Real>* self_repair_sum_out);
// ---- end of LSTM nonlinearity -----------------------------------------------------------------

}  // namespace cu
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_MATH_H_
