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

}  // namespace cu
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_MATH_H_
