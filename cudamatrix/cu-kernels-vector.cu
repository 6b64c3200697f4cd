// cudamatrix/cu-kernels-vector.cu: vector kernels: strided gathers (matrix column, diagonal),
// in-place maps, norms, and the diagonal of a matrix product.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

constexpr int kThreads = 256;  // 1D kernels
constexpr int kWarps = kThreads / 32;
constexpr int64_t kMaxBlocks1d = 65535;

unsigned Blocks1d(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks1d));
}

// ---- strided gather

template <typename SrcReal, typename DstReal>
__global__ void CopyStridedKernel(int32_t dim, const SrcReal* src, int64_t src_step, DstReal* dst) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < dim;
       i += int64_t{gridDim.x} * blockDim.x)
    dst[i] = static_cast<DstReal>(src[i * src_step]);
}

template <typename SrcReal, typename DstReal>
void CopyStrided(int32_t dim, const SrcReal* src, int64_t src_step, DstReal* dst, CuStream stream) {
  if (dim <= 0) return;
  internal::Launch<CopyStridedKernel<SrcReal, DstReal>>(CUCTX_LAUNCH_SITE("CopyStridedKernel"),
                                                        Blocks1d(dim), kThreads, 0, stream, dim,
                                                        src, src_step, dst);
}

// ---- in-place maps

using internal::DevPow;

template <typename Real>
struct VectorMapOp {
  VectorMap map;
  Real a, b;
  __device__ void operator()(Real* x) const {
    const Real v = *x;
    switch (map) {
      case VectorMap::kInvert:
        *x = Real(1) / v;
        break;
      case VectorMap::kPow:
        *x = DevPow(v, a);
        break;
      case VectorMap::kFloor:
        if (v < a) *x = a;
        break;
      case VectorMap::kCeiling:
        if (v > a) *x = a;
        break;
      case VectorMap::kReplace:
        if (v == a) *x = b;
        break;
    }
  }
};

// 1D with 64-bit indices, so that the grid stride cannot overflow near 2^31 elements.
template <typename Real>
__global__ void VectorMapKernel(int32_t dim, VectorMapOp<Real> op, Real* data) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < dim;
       i += int64_t{gridDim.x} * blockDim.x)
    op(data + i);
}

template <typename Real>
void VectorMapImpl(int32_t dim, VectorMap map, Real a, Real b, Real* data, CuStream stream) {
  if (dim <= 0) return;
  internal::Launch<VectorMapKernel<Real>>(CUCTX_LAUNCH_SITE("VectorMapKernel"), Blocks1d(dim),
                                          kThreads, 0, stream, dim, VectorMapOp<Real>{map, a, b},
                                          data);
}

// ---- reductions to one double: per-block partials, then one block combining them

// Workspace: the result at byte 0, the partials of at most kCuReduceMaxBlocks blocks after it.
constexpr size_t kPartialsOffset = sizeof(double);

// Sum (kMax false) or maximum of one double per thread over the block; thread 0 gets the result.
// `sh` holds kWarps values. The partials are non-negative, so 0 is an identity for both.
template <bool kMax>
__device__ double BlockCombine(double v, double* sh) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const double o = __shfl_down_sync(0xffffffffu, v, offset);
    v = kMax ? (o > v ? o : v) : v + o;
  }
  if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
  __syncthreads();
  double total = 0;
  if (threadIdx.x == 0) {
    for (int w = 0; w < kWarps; ++w) total = kMax ? (sh[w] > total ? sh[w] : total) : total + sh[w];
  }
  return total;
}

// Per-element terms of the p-norm. mode 0: x != 0; 1: |x|; 2: x^2; 3: |x| (maximum); 4: |x|^p.
template <typename Real>
struct NormTerm {
  int mode;
  double p;
  __device__ double operator()(const Real* x) const {
    const double v = static_cast<double>(*x);
    switch (mode) {
      case 0:
        return v != 0 ? 1.0 : 0.0;
      case 1:
      case 3:
        return fabs(v);
      case 2:
        return v * v;
      default:
        return pow(fabs(v), p);
    }
  }
  __device__ double Finish(double s) const {
    if (mode == 2) return sqrt(s);
    if (mode == 4) return pow(s, 1.0 / p);
    return s;
  }
};

template <bool kMax, typename Ptr, typename Term>
__global__ void PartialKernel(int32_t dim, Ptr data, Term term, double* partials) {
  __shared__ double sh[kWarps];
  double acc = 0;
  for (int64_t i = blockIdx.x * int64_t{kThreads} + threadIdx.x; i < dim;
       i += int64_t{gridDim.x} * kThreads) {
    const double t = term(data + i);
    acc = kMax ? (t > acc ? t : acc) : acc + t;
  }
  const double total = BlockCombine<kMax>(acc, sh);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <bool kMax, typename Term>
__global__ void FinishKernel(int32_t num_partials, const double* partials, Term term,
                             double* result) {
  __shared__ double sh[kWarps];
  const double v = static_cast<int32_t>(threadIdx.x) < num_partials ? partials[threadIdx.x] : 0.0;
  const double total = BlockCombine<kMax>(v, sh);
  if (threadIdx.x == 0) *result = term.Finish(total);
}

template <bool kMax, typename Ptr, typename Term>
void Reduce(int32_t dim, Ptr data, Term term, void* d_work, CuStream stream) {
  static_assert(kThreads >= kCuReduceMaxBlocks, "the finishing block reads one partial a thread");
  double* result = static_cast<double*>(d_work);
  double* partials = reinterpret_cast<double*>(static_cast<char*>(d_work) + kPartialsOffset);
  // An empty vector still gets a result (term.Finish(0)), from a single zero partial.
  const int64_t want = (static_cast<int64_t>(dim) + kThreads - 1) / kThreads;
  const int32_t blocks =
      static_cast<int32_t>(std::max<int64_t>(1, std::min<int64_t>(want, kCuReduceMaxBlocks)));
  internal::Launch<PartialKernel<kMax, Ptr, Term>>(CUCTX_LAUNCH_SITE("PartialKernel"), blocks,
                                                   kThreads, 0, stream, dim, data, term, partials);
  internal::Launch<FinishKernel<kMax, Term>>(CUCTX_LAUNCH_SITE("FinishKernel"), 1, kThreads, 0,
                                             stream, blocks, partials, term, result);
}

template <typename Real>
void VectorNorm(int32_t dim, const Real* data, double p, void* d_work, CuStream stream) {
  int mode = 4;
  if (p == 0)
    mode = 0;
  else if (p == 1)
    mode = 1;
  else if (p == 2)
    mode = 2;
  else if (std::isinf(p))
    mode = 3;
  const NormTerm<Real> term{mode, p};
  if (mode == 3)
    Reduce<true>(dim, data, term, d_work, stream);
  else
    Reduce<false>(dim, data, term, d_work, stream);
}

// ---- diagonal of a matrix product

// out[i] = beta * out[i] + alpha * sum_k op(M)(i, k) op(N)(k, i). Each operand is read in one of
// two layouts: "i-major" (element (i, k) at p[i * stride + k]: M untransposed, N transposed) or
// "k-major" (at p[k * stride + i]). One kernel per pairing, each reading every operand along its
// contiguous direction:
//   DiagRowsKernel  (both i-major): out[i] is the dot product of two contiguous rows; `lanes`
//                   (1..32) threads of one warp per i, combined by shuffles.
//   DiagColsKernel  (both k-major): threads across i (4 consecutive i each), the rest of the
//                   block's threads across k; the k-lanes are combined through shared memory.
//   DiagMixedKernel (one of each): chunks of `width` i x `chunk` k of both operands pass through
//                   shared memory, each loaded along its own contiguous direction.
// A thread takes 4 consecutive elements per step: one 16-byte load of floats or two of doubles
// where every row of both operands starts 16-byte aligned, else scalar loads. Which thread sums
// which terms, and in what order, depends only on the shape (not on alignment). Products are
// summed in double, as on the CPU.
//
// Inner dimensions up to kSmallInner take three plain kernels instead (see DiagSmallRowsKernel).
//
// Always one launch. A "unit" is the set of outputs one block owns. Normally a block covers its
// unit's whole k range and writes out directly; when units are few and long (see PlanDiag), k is
// split into `splits` ranges on separate blocks: each stores its partial sums in the workspace,
// then counts itself on its unit's counter, and the last block of the unit to arrive adds the
// partials in split order (so the result does not depend on arrival order), writes out and resets
// the counter to zero.

constexpr int kDiagThreads = 256;
constexpr int kDiagWarps = kDiagThreads / 32;
constexpr int kQuad = 4;    // consecutive elements per thread and step
constexpr int kUnroll = 4;  // steps whose loads are issued together (memory-level parallelism)
// kMixed: elements of each operand per chunk (kMixedPer per thread), and the tile size with room
// for the bank padding (width * pad <= 64).
constexpr int kMixedChunk = 2048;
constexpr int kMixedPer = kMixedChunk / kDiagThreads;
constexpr int kMixedTile = kMixedChunk + 64;

// Split policy. Below kFillBlocks units (one block per SM of an H100) a unit longer than
// kMaxUnsplitWork elements per operand is split, into pieces of about kSplitWork elements but no
// more than needed for kTargetBlocks blocks. A split costs a cudaMemsetAsync of the counters (about
// 1 us of host time), so the sizes that are launch-bound anyway (up to 1024 x 1024) never split:
// their units (at most 8 x 1024 elements) finish in a few microseconds without it.
constexpr int64_t kFillBlocks = 132;
constexpr int64_t kTargetBlocks = 2 * kFillBlocks;
constexpr int64_t kMaxUnsplitWork = 16384;
constexpr int64_t kSplitWork = 4096;
constexpr int64_t kSplitGrain = 256;  // k per split is a multiple of this (and of kQuad, chunk)

enum class DiagKind { kRows, kCols, kMixed };

struct DiagPlan {
  DiagKind kind;
  // Threads sharing a group of outputs: kRows, per i; kCols, across one k row (width / 4);
  // kMixed, across one k of the tile (width).
  int32_t lanes;
  int32_t width;  // outputs per unit
  int32_t chunk;  // kMixed: k per chunk (width * chunk == kMixedChunk)
  int64_t units;
  int64_t splits;
  int64_t k_per_split;
};

template <typename Real>
struct DiagJob {
  DiagPlan plan;
  int32_t dim, inner;
  const Real* a;  // kMixed: the i-major operand
  int64_t a_stride;
  const Real* b;  // kMixed: the k-major operand
  int64_t b_stride;
  Real alpha, beta;
  Real* out;
  double* partials;        // splits x dim, with splits > 1
  unsigned int* counters;  // one per unit, zero on entry and on exit, with splits > 1
};

template <typename Real>
struct Quad {
  Real v[kQuad];
};

// The kQuad elements at p, or only the first n of them (the rest 0) when n < kQuad. kVec: p is
// 16-byte aligned.
template <bool kVec, typename Real>
__device__ __forceinline__ Quad<Real> LoadQuad(const Real* p, int64_t n) {
  Quad<Real> q;
  if (kVec && n >= kQuad) {
    if constexpr (sizeof(Real) == sizeof(float)) {
      const float4 x = *reinterpret_cast<const float4*>(p);
      q.v[0] = x.x, q.v[1] = x.y, q.v[2] = x.z, q.v[3] = x.w;
    } else {
      const double2 x = reinterpret_cast<const double2*>(p)[0];
      const double2 y = reinterpret_cast<const double2*>(p)[1];
      q.v[0] = x.x, q.v[1] = x.y, q.v[2] = y.x, q.v[3] = y.y;
    }
    return q;
  }
#pragma unroll
  for (int j = 0; j < kQuad; ++j) q.v[j] = j < n ? p[j] : Real(0);
  return q;
}

template <typename Real>
__device__ __forceinline__ double DotQuad(double acc, const Quad<Real>& x, const Quad<Real>& y) {
#pragma unroll
  for (int j = 0; j < kQuad; ++j)
    acc = fma(static_cast<double>(x.v[j]), static_cast<double>(y.v[j]), acc);
  return acc;
}

// Over the block's threads t with equal t % lanes (lanes a power of two), sums their kPer values;
// value j of thread t belongs to output (t % lanes) * kPer + j. Thread o < lanes * kPer returns
// output o's sum, in an order fixed by lanes. `red` holds kDiagThreads * kPer doubles. Call from
// every thread.
template <int kPer>
__device__ double ReduceLanes(double (&v)[kPer], int lanes, double* red) {
  const int t = threadIdx.x;
  for (int off = lanes; off < 32; off *= 2)
#pragma unroll
    for (int j = 0; j < kPer; ++j) v[j] += __shfl_xor_sync(0xffffffffu, v[j], off);
  // One slot per warp (its lanes below `lanes` hold the warp's sums) or, for lanes >= 32, per
  // thread group.
  const int slots = lanes < 32 ? kDiagWarps : kDiagThreads / lanes;
  const int slot = lanes < 32 ? t / 32 : t / lanes;
  const int outputs = lanes * kPer;
  if (lanes >= 32 || t % 32 < lanes) {
#pragma unroll
    for (int j = 0; j < kPer; ++j) red[slot * outputs + (t % lanes) * kPer + j] = v[j];
  }
  __syncthreads();
  double s = 0;
  if (t < outputs)
    for (int q = 0; q < slots; ++q) s += red[q * outputs + t];
  return s;
}

// out[i] from the full sum s. beta == 0 still reads out[i] (a NaN there stays), as the CPU path
// and Kaldi do (see CuVectorBase::AddDiagMatMat).
template <typename Real>
__device__ __forceinline__ void StoreDiag(const DiagJob<Real>& job, int64_t i, double s) {
  job.out[i] = job.beta * job.out[i] + job.alpha * static_cast<Real>(s);
}

// The end of every kernel: owner threads hold output i's sum over this block's k range. Without
// splits they store it. With splits they publish it; the last block of the unit to count itself
// adds the splits' partials in split order and stores the result. Call from every thread.
template <typename Real>
__device__ void FinishDiag(const DiagJob<Real>& job, unsigned unit, unsigned split, bool owner,
                           int64_t i, double s) {
  if (job.plan.splits == 1) {
    if (owner) StoreDiag(job, i, s);
    return;
  }
  __shared__ bool is_last;
  if (owner) {
    job.partials[int64_t{split} * job.dim + i] = s;
    __threadfence();  // the partial is visible device-wide before the block is counted
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned prev = atomicAdd(job.counters + unit, 1u);
    is_last = prev + 1 == static_cast<unsigned>(job.plan.splits);
    if (is_last) job.counters[unit] = 0;  // every split has counted: ready for the next launch
  }
  __syncthreads();
  if (!is_last || !owner) return;
  __threadfence();
  double total = 0;
  for (int64_t sp = 0; sp < job.plan.splits; ++sp)
    total += __ldcg(job.partials + sp * job.dim + i);  // L2: other blocks wrote these
  StoreDiag(job, i, total);
}

// The block's unit and split, and its k range [*k_begin, *k_end).
template <typename Real>
__device__ __forceinline__ void BlockRange(const DiagJob<Real>& job, unsigned* unit,
                                           unsigned* split, int64_t* k_begin, int64_t* k_end) {
  const unsigned units = static_cast<unsigned>(job.plan.units);
  *unit = blockIdx.x % units;
  *split = blockIdx.x / units;
  *k_begin = int64_t{*split} * job.plan.k_per_split;
  const int64_t end = *k_begin + job.plan.k_per_split;
  *k_end = end < job.inner ? end : int64_t{job.inner};
}

// kUnroll steps of one thread of DiagRowsKernel from k (step apart), all loads issued before the
// first product. kFull: every step lies inside [.., k_end); else steps past it read nothing.
template <bool kFull, bool kVec, bool kSquare, typename Real>
__device__ __forceinline__ double RowSteps(const Real* a, const Real* b, int64_t k, int64_t step,
                                           int64_t k_end, double acc) {
  Quad<Real> x[kUnroll], y[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int64_t kk = k + u * step;
    x[u] = LoadQuad<kVec>(a + kk, kFull ? kQuad : k_end - kk);
    if constexpr (!kSquare) y[u] = LoadQuad<kVec>(b + kk, kFull ? kQuad : k_end - kk);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    if constexpr (kSquare)
      acc = DotQuad(acc, x[u], x[u]);
    else
      acc = DotQuad(acc, x[u], y[u]);
  }
  return acc;
}

// Both i-major: `lanes` consecutive threads per i, each taking every lanes-th quad of the row.
// kSquare: b is a (same data and stride), loaded once.
template <typename Real, bool kVec, bool kSquare>
__global__ void __launch_bounds__(kDiagThreads) DiagRowsKernel(DiagJob<Real> job) {
  unsigned unit, split;
  int64_t k_begin, k_end;
  BlockRange(job, &unit, &split, &k_begin, &k_end);
  const int lanes = job.plan.lanes;
  const int lane = threadIdx.x & (lanes - 1);
  const int64_t i = int64_t{unit} * job.plan.width + threadIdx.x / lanes;
  double acc = 0;
  if (i < job.dim) {
    const Real* a = job.a + i * job.a_stride;
    const Real* b = kSquare ? a : job.b + i * job.b_stride;
    const int64_t step = int64_t{kQuad} * lanes;
    int64_t k = k_begin + int64_t{kQuad} * lane;
    for (; k + (kUnroll - 1) * step + kQuad <= k_end; k += kUnroll * step)
      acc = RowSteps<true, kVec, kSquare>(a, b, k, step, k_end, acc);
    // At most kUnroll steps are left (the last maybe partial).
    if (k < k_end) acc = RowSteps<false, kVec, kSquare>(a, b, k, step, k_end, acc);
  }
  for (int off = lanes / 2; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  FinishDiag(job, unit, split, lane == 0 && i < job.dim, i, acc);
}

// kUnroll steps of one thread of DiagColsKernel: k rows k, k + k_lanes, ..., each adding
// `valid` (up to kQuad) elements from a and b to acc[0..3]; all loads issued before the first
// product. kFull: every row is below k_end; else rows from k_end on read nothing.
template <bool kFull, bool kVec, bool kSquare, typename Real>
__device__ __forceinline__ void ColSteps(const Real* a, int64_t a_stride, const Real* b,
                                         int64_t b_stride, int64_t k, int k_lanes, int64_t k_end,
                                         int64_t valid, double (&acc)[kQuad]) {
  Quad<Real> x[kUnroll], y[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int64_t kk = k + u * k_lanes;
    const int64_t n = kFull || kk < k_end ? valid : 0;
    x[u] = LoadQuad<kVec>(a + kk * a_stride, n);
    if constexpr (!kSquare) y[u] = LoadQuad<kVec>(b + kk * b_stride, n);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
#pragma unroll
    for (int j = 0; j < kQuad; ++j) {
      const double x_j = x[u].v[j];
      if constexpr (kSquare)
        acc[j] = fma(x_j, x_j, acc[j]);
      else
        acc[j] = fma(x_j, static_cast<double>(y[u].v[j]), acc[j]);
    }
}

// Both k-major. Thread t owns i = unit * width + 4 * (t % lanes) + (0..3) and the k rows equal to
// t / lanes modulo the block's kDiagThreads / lanes k-lanes.
template <typename Real, bool kVec, bool kSquare>
__global__ void __launch_bounds__(kDiagThreads) DiagColsKernel(DiagJob<Real> job) {
  __shared__ double red[kDiagThreads * kQuad];
  unsigned unit, split;
  int64_t k_begin, k_end;
  BlockRange(job, &unit, &split, &k_begin, &k_end);
  const int lanes = job.plan.lanes;
  const int k_lanes = kDiagThreads / lanes;
  const int64_t i0 = int64_t{unit} * job.plan.width;
  const int64_t i = i0 + kQuad * (threadIdx.x & (lanes - 1));
  const int64_t valid = job.dim - i;  // elements of this thread's quad inside the vector
  double acc[kQuad] = {};
  if (valid > 0) {
    const Real* a = job.a + i;
    const Real* b = kSquare ? a : job.b + i;
    int64_t k = k_begin + threadIdx.x / lanes;
    for (; k + (kUnroll - 1) * k_lanes < k_end; k += kUnroll * k_lanes)
      ColSteps<true, kVec, kSquare>(a, job.a_stride, b, job.b_stride, k, k_lanes, k_end, valid,
                                    acc);
    // Fewer than kUnroll rows are left.
    if (k < k_end)
      ColSteps<false, kVec, kSquare>(a, job.a_stride, b, job.b_stride, k, k_lanes, k_end, valid,
                                     acc);
  }
  const double s = ReduceLanes(acc, lanes, red);
  const int64_t o = i0 + threadIdx.x;
  FinishDiag(job, unit, split, static_cast<int>(threadIdx.x) < job.plan.width && o < job.dim, o, s);
}

// One i-major operand (a) and one k-major (b). Per chunk of k, each thread loads kMixedPer
// elements of each operand into tiles tile[ii * pitch + kk] (ii = i - i0, kk = k - chunk start):
// of a, column t % chunk of rows t / chunk + e * (256 / chunk); of b, column t % width of k rows
// t / width + e * (256 / width), so that a warp reads along each operand's contiguous direction.
// The padding keeps both the stores and the reads free of bank conflicts. The next chunk's loads
// are issued before this chunk's products.
template <typename Real>
__global__ void __launch_bounds__(kDiagThreads) DiagMixedKernel(DiagJob<Real> job) {
  __shared__ Real a_tile[kMixedTile];
  __shared__ Real b_tile[kMixedTile];
  __shared__ double red[kDiagThreads];
  unsigned unit, split;
  int64_t k_begin, k_end;
  BlockRange(job, &unit, &split, &k_begin, &k_end);
  const int t = threadIdx.x;
  const int width = job.plan.width, chunk = job.plan.chunk;
  const int width_log = __ffs(width) - 1, chunk_log = __ffs(chunk) - 1;
  const int banks = 128 / static_cast<int>(sizeof(Real));  // elements per 128-byte bank row
  const int pitch = chunk + (width < banks ? banks / width : 1);
  const int64_t i0 = int64_t{unit} * width;
  const int a_row = t >> chunk_log, a_col = t & (chunk - 1), a_rows = kDiagThreads >> chunk_log;
  const int b_row = t >> width_log, b_col = t & (width - 1), b_rows = kDiagThreads >> width_log;
  const int64_t a_left = job.dim - i0 - a_row;  // a: rows e * a_rows < a_left are in range
  const bool b_in = i0 + b_col < job.dim;
  const Real* a = job.a + (i0 + a_row) * job.a_stride + a_col;
  const Real* b = job.b + int64_t{b_row} * job.b_stride + i0 + b_col;
  Real xa[kMixedPer], xb[kMixedPer];
  auto load = [&](int64_t k0) {
    const bool a_in = k0 + a_col < k_end;
#pragma unroll
    for (int e = 0; e < kMixedPer; ++e) {
      xa[e] = a_in && e * a_rows < a_left ? a[int64_t{e} * a_rows * job.a_stride + k0] : Real(0);
      const int64_t kb = k0 + b_row + e * b_rows;
      xb[e] = b_in && kb < k_end ? b[(k0 + int64_t{e} * b_rows) * job.b_stride] : Real(0);
    }
  };
  double acc[1] = {0};
  if (k_begin < k_end) load(k_begin);
  for (int64_t k0 = k_begin; k0 < k_end; k0 += chunk) {
#pragma unroll
    for (int e = 0; e < kMixedPer; ++e) {
      a_tile[(a_row + e * a_rows) * pitch + a_col] = xa[e];
      b_tile[b_col * pitch + b_row + e * b_rows] = xb[e];
    }
    __syncthreads();
    if (k0 + chunk < k_end) load(k0 + chunk);
    for (int kk = b_row; kk < chunk; kk += b_rows)
      acc[0] = fma(static_cast<double>(a_tile[b_col * pitch + kk]),
                   static_cast<double>(b_tile[b_col * pitch + kk]), acc[0]);
    __syncthreads();  // the tiles are rewritten next chunk
  }
  const double s = ReduceLanes(acc, width, red);
  const int64_t o = i0 + t;
  FinishDiag(job, unit, split, t < width && o < job.dim, o, s);
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
// Short inner dimensions (up to kSmallInner) take three plain kernels instead: on square float
// matrices of 32-128 the kernels above ran 1.60-2.43 us a launch and these run 1.18-2.02 us, the
// same pairing faster at every size (H200, tools/kernel-trace/probes/probe-diag.cu, run
// `probe-diag`: the set-up, the shape-dependent lanes and the unrolled tails of the kernels above
// cost more than the few terms each thread sums here).
// Each thread sums at most kSmallInner / 16 terms in double; results as above (StoreDiag).
//   DiagSmallRowsKernel  (both i-major): one warp per output, combined by shuffles.
//   DiagSmallColsKernel  (both k-major): 8 outputs x 32 k-lanes per block (a warp reads 8
//                        consecutive outputs of 4 k rows), the k-lanes combined in shared memory.
//   DiagSmallMixedKernel (a i-major, b k-major): 16 outputs x 16 k-lanes per block, a read along
//                        k, the 16 lanes of an output combined by shuffles.
constexpr int32_t kSmallInner = 128;
constexpr int kSmallColsOutputs = 8;  // DiagSmallColsKernel: outputs per block
constexpr int kSmallMixedLanes = 16;  // DiagSmallMixedKernel: k-lanes per output

template <typename Real>
__global__ void __launch_bounds__(kDiagThreads) DiagSmallRowsKernel(DiagJob<Real> job) {
  const int64_t i = int64_t{blockIdx.x} * kDiagWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (i >= job.dim) return;  // whole warps
  const Real* a = job.a + i * job.a_stride;
  const Real* b = job.b + i * job.b_stride;
  double acc = 0;
  for (int k = lane; k < job.inner; k += 32)
    acc = fma(static_cast<double>(a[k]), static_cast<double>(b[k]), acc);
  for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0) StoreDiag(job, i, acc);
}

template <typename Real>
__global__ void __launch_bounds__(kDiagThreads) DiagSmallColsKernel(DiagJob<Real> job) {
  constexpr int kOutputs = kSmallColsOutputs, kLanes = kDiagThreads / kOutputs;
  __shared__ double part[kLanes][kOutputs + 1];
  const int x = threadIdx.x % kOutputs, y = threadIdx.x / kOutputs;
  const int64_t i = int64_t{blockIdx.x} * kOutputs + x;
  double acc = 0;
  if (i < job.dim)
    for (int64_t k = y; k < job.inner; k += kLanes)
      acc = fma(static_cast<double>(job.a[k * job.a_stride + i]),
                static_cast<double>(job.b[k * job.b_stride + i]), acc);
  part[y][x] = acc;
  __syncthreads();
  for (int half = kLanes / 2; half > 0; half /= 2) {
    if (y < half) part[y][x] += part[y + half][x];
    __syncthreads();
  }
  if (y == 0 && i < job.dim) StoreDiag(job, i, part[0][x]);
}

template <typename Real>
__global__ void __launch_bounds__(kDiagThreads) DiagSmallMixedKernel(DiagJob<Real> job) {
  constexpr int kLanes = kSmallMixedLanes;
  const int lane = threadIdx.x % kLanes;
  const int64_t i = int64_t{blockIdx.x} * (kDiagThreads / kLanes) + threadIdx.x / kLanes;
  double acc = 0;
  if (i < job.dim)
    for (int64_t k = lane; k < job.inner; k += kLanes)
      acc = fma(static_cast<double>(job.a[i * job.a_stride + k]),
                static_cast<double>(job.b[k * job.b_stride + i]), acc);
  for (int off = kLanes / 2; off > 0; off /= 2)
    acc += __shfl_xor_sync(0xffffffffu, acc, off, kLanes);
  if (lane == 0 && i < job.dim) StoreDiag(job, i, acc);
}

// job's operands as AddDiagMatMat sets them (a i-major for kMixed), for inner <= kSmallInner.
template <typename Real>
void LaunchSmallDiag(const DiagJob<Real>& job, DiagKind kind, CuStream stream) {
  switch (kind) {
    case DiagKind::kRows:
      internal::Launch<DiagSmallRowsKernel<Real>>(
          CUCTX_LAUNCH_SITE("DiagSmallRowsKernel<Real>"),
          static_cast<unsigned>(CeilDiv(job.dim, kDiagWarps)), kDiagThreads, 0, stream, job);
      return;
    case DiagKind::kCols:
      internal::Launch<DiagSmallColsKernel<Real>>(
          CUCTX_LAUNCH_SITE("DiagSmallColsKernel<Real>"),
          static_cast<unsigned>(CeilDiv(job.dim, kSmallColsOutputs)), kDiagThreads, 0, stream, job);
      return;
    case DiagKind::kMixed:
      internal::Launch<DiagSmallMixedKernel<Real>>(
          CUCTX_LAUNCH_SITE("DiagSmallMixedKernel<Real>"),
          static_cast<unsigned>(CeilDiv(job.dim, kDiagThreads / kSmallMixedLanes)), kDiagThreads, 0,
          stream, job);
      return;
  }
}

int64_t Pow2AtLeast(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// op(m)(i, k) is i-major unless m is transposed; op(n)(k, i) is i-major when n is transposed.
DiagKind KindOf(bool m_trans, bool n_trans) {
  if (!m_trans && n_trans) return DiagKind::kRows;
  if (m_trans && !n_trans) return DiagKind::kCols;
  return DiagKind::kMixed;
}

// The block shape of each kind follows the inner dimension, so that short rows do not leave
// threads idle and long ones give every thread several steps:
//   kRows:  lanes = inner / 8 rounded up to a power of two, in [1, 32] (each thread at least two
//           quads); 256 / lanes rows per block.
//   kCols:  width = 1024 / inner rounded up to a power of two, in [8, 256] (a whole block pass
//           covers about 1024 elements; 8 floats = one 32-byte sector per k row at the least);
//           lanes = width / 4.
//   kMixed: chunk = inner rounded up to a power of two, in [32, 256] (a warp reads at least 32
//           consecutive k of a row); width = 2048 / chunk, in [8, 64].
// For square 1024 this gives 128 blocks of 8 outputs x 1024 k (kRows 8 rows, kCols and kMixed 8
// columns), 64 at 512 and 32 at 256. Then the split policy above decides on splitting k.
// Since inner dimensions up to kSmallInner go to the small kernels, these rules give one shape per
// kind (lanes 32 for kRows, width 8 for kCols, chunk 256 for kMixed); the rules are kept because
// the kernels read the shape at run time (a template constant instead is a GPU change to measure).
DiagPlan PlanDiag(int32_t dim, int32_t inner, DiagKind kind) {
  DiagPlan plan{};
  plan.kind = kind;
  const int64_t n = std::max<int32_t>(inner, 1);
  switch (kind) {
    case DiagKind::kRows:
      plan.lanes = static_cast<int32_t>(std::clamp<int64_t>(Pow2AtLeast(CeilDiv(n, 8)), 1, 32));
      plan.width = kDiagThreads / plan.lanes;
      break;
    case DiagKind::kCols:
      plan.width =
          static_cast<int32_t>(std::clamp<int64_t>(Pow2AtLeast(CeilDiv(1024, n)), 8, kDiagThreads));
      plan.lanes = plan.width / kQuad;
      break;
    case DiagKind::kMixed:
      plan.chunk = static_cast<int32_t>(std::clamp<int64_t>(Pow2AtLeast(n), 32, 256));
      plan.width = kMixedChunk / plan.chunk;
      plan.lanes = plan.width;
      break;
  }
  plan.units = CeilDiv(dim, plan.width);
  plan.splits = 1;
  plan.k_per_split = n;
  const int64_t work = int64_t{plan.width} * inner;
  if (plan.units < kFillBlocks && work > kMaxUnsplitWork) {
    const int64_t want = std::min(CeilDiv(work, kSplitWork), CeilDiv(kTargetBlocks, plan.units));
    plan.k_per_split = CeilDiv(CeilDiv(inner, want), kSplitGrain) * kSplitGrain;
    plan.splits = CeilDiv(inner, plan.k_per_split);
  }
  return plan;
}

size_t DiagWorkBytes(const DiagPlan& plan, int32_t dim) {
  if (plan.splits <= 1) return 0;
  return static_cast<size_t>(plan.splits) * static_cast<size_t>(dim) * sizeof(double) +
         static_cast<size_t>(plan.units) * sizeof(unsigned int);
}

// Every row starts 16-byte aligned.
template <typename Real>
bool RowsAligned(const Real* p, int64_t stride) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (stride * sizeof(Real)) % 16 == 0;
}

template <typename Real, bool kVec, bool kSquare>
void LaunchRowsOrCols(const DiagJob<Real>& job, unsigned blocks, CuStream stream) {
  if (job.plan.kind == DiagKind::kRows) {
    internal::Launch<DiagRowsKernel<Real, kVec, kSquare>>(
        CUCTX_LAUNCH_SITE("DiagRowsKernel<Real, kVec, kSquare>"), blocks, kDiagThreads, 0, stream,
        job);
  } else {
    internal::Launch<DiagColsKernel<Real, kVec, kSquare>>(
        CUCTX_LAUNCH_SITE("DiagColsKernel<Real, kVec, kSquare>"), blocks, kDiagThreads, 0, stream,
        job);
  }
}

template <typename Real>
void AddDiagMatMat(int32_t dim, int32_t inner, Real alpha, const Real* m, int32_t m_stride,
                   bool m_trans, const Real* n, int32_t n_stride, bool n_trans, Real beta,
                   Real* out, void* d_work, CuStream stream) {
  if (dim <= 0) return;
  const DiagKind kind = KindOf(m_trans, n_trans);
  DiagJob<Real> job{};
  job.dim = dim;
  job.inner = inner;
  job.a = m;
  job.a_stride = m_stride;
  job.b = n;
  job.b_stride = n_stride;
  if (kind == DiagKind::kMixed && m_trans) {  // the kernel wants the i-major one as a
    std::swap(job.a, job.b);
    std::swap(job.a_stride, job.b_stride);
  }
  job.alpha = alpha;
  job.beta = beta;
  job.out = out;
  if (inner <= kSmallInner) {  // no plan: the small kernels' shapes are fixed
    LaunchSmallDiag(job, kind, stream);
    return;
  }
  job.plan = PlanDiag(dim, inner, kind);
  if (job.plan.splits > 1) {
    job.partials = static_cast<double*>(d_work);
    job.counters = reinterpret_cast<unsigned int*>(job.partials + job.plan.splits * dim);
    CUCTX_CUDA_CHECK(
        cudaMemsetAsync(job.counters, 0, job.plan.units * sizeof(unsigned int), stream));
  }
  const unsigned blocks = static_cast<unsigned>(job.plan.units * job.plan.splits);
  if (job.plan.kind == DiagKind::kMixed) {
    internal::Launch<DiagMixedKernel<Real>>(CUCTX_LAUNCH_SITE("DiagMixedKernel<Real>"), blocks,
                                            kDiagThreads, 0, stream, job);
    return;
  }
  const bool vec = RowsAligned(job.a, job.a_stride) && RowsAligned(job.b, job.b_stride);
  const bool square = job.a == job.b && job.a_stride == job.b_stride;
  if (vec && square)
    LaunchRowsOrCols<Real, true, true>(job, blocks, stream);
  else if (vec)
    LaunchRowsOrCols<Real, true, false>(job, blocks, stream);
  else if (square)
    LaunchRowsOrCols<Real, false, true>(job, blocks, stream);
  else
    LaunchRowsOrCols<Real, false, false>(job, blocks, stream);
}

}  // namespace

void LaunchCopyStrided(int32_t dim, const float* src, int64_t step, float* dst, CuStream st) {
  CopyStrided(dim, src, step, dst, st);
}
void LaunchCopyStrided(int32_t dim, const double* src, int64_t step, float* dst, CuStream st) {
  CopyStrided(dim, src, step, dst, st);
}
void LaunchCopyStrided(int32_t dim, const float* src, int64_t step, double* dst, CuStream st) {
  CopyStrided(dim, src, step, dst, st);
}
void LaunchCopyStrided(int32_t dim, const double* src, int64_t step, double* dst, CuStream st) {
  CopyStrided(dim, src, step, dst, st);
}

void LaunchVectorMap(int32_t dim, VectorMap map, float a, float b, float* data, CuStream st) {
  VectorMapImpl(dim, map, a, b, data, st);
}
void LaunchVectorMap(int32_t dim, VectorMap map, double a, double b, double* data, CuStream st) {
  VectorMapImpl(dim, map, a, b, data, st);
}

size_t VectorReduceWorkspaceBytes() {
  return kPartialsOffset + kCuReduceMaxBlocks * sizeof(double);
}

void LaunchVectorNorm(int32_t dim, const float* data, double p, void* d_work, CuStream st) {
  VectorNorm(dim, data, p, d_work, st);
}
void LaunchVectorNorm(int32_t dim, const double* data, double p, void* d_work, CuStream st) {
  VectorNorm(dim, data, p, d_work, st);
}

size_t DiagMatMatWorkspaceBytes(int32_t dim, int32_t inner, bool m_trans, bool n_trans) {
  if (dim <= 0 || inner <= kSmallInner) return 0;
  return DiagWorkBytes(PlanDiag(dim, inner, KindOf(m_trans, n_trans)), dim);
}

void LaunchAddDiagMatMat(int32_t dim, int32_t inner, float alpha, const float* m, int32_t ms,
                         bool mt, const float* n, int32_t ns, bool nt, float beta, float* out,
                         void* d_work, CuStream st) {
  AddDiagMatMat(dim, inner, alpha, m, ms, mt, n, ns, nt, beta, out, d_work, st);
}
void LaunchAddDiagMatMat(int32_t dim, int32_t inner, double alpha, const double* m, int32_t ms,
                         bool mt, const double* n, int32_t ns, bool nt, double beta, double* out,
                         void* d_work, CuStream st) {
  AddDiagMatMat(dim, inner, alpha, m, ms, mt, n, ns, nt, beta, out, d_work, st);
}

}  // namespace cuctx
