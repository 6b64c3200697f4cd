// cudamatrix/cu-kernels-vector.cu: vector kernels: strided gathers (matrix column, diagonal),
// in-place maps, norms and clamp counts, and the diagonal of a matrix product.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

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
  CopyStridedKernel<<<Blocks1d(dim), kThreads, 0, stream>>>(dim, src, src_step, dst);
  CUCTX_CUDA_CHECK_LAUNCH("CopyStridedKernel");
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
  VectorMapKernel<<<Blocks1d(dim), kThreads, 0, stream>>>(dim, VectorMapOp<Real>{map, a, b}, data);
  CUCTX_CUDA_CHECK_LAUNCH("VectorMapKernel");
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

// Clamps the element and counts it when it changed.
template <typename Real>
struct ClampTerm {
  Real bound;
  bool ceiling;
  __device__ double operator()(Real* x) const {
    const Real v = *x;
    if (ceiling ? v > bound : v < bound) {
      *x = bound;
      return 1.0;
    }
    return 0.0;
  }
  __device__ double Finish(double s) const { return s; }
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
  PartialKernel<kMax><<<blocks, kThreads, 0, stream>>>(dim, data, term, partials);
  CUCTX_CUDA_CHECK_LAUNCH("PartialKernel");
  FinishKernel<kMax><<<1, kThreads, 0, stream>>>(blocks, partials, term, result);
  CUCTX_CUDA_CHECK_LAUNCH("FinishKernel");
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

// One operand of the product as the kernel reads it: element (i, k) of op(M), or of op(N)^T, sits
// at data[i * stride + k] when i_major, else at data[k * stride + i].
template <typename Real>
struct DiagOperand {
  const Real* data;
  int32_t stride;
  bool i_major;
};

constexpr int kTile = 32;     // i and k extent of a tile
constexpr int kTileRows = 8;  // threadIdx.y extent
// Each k-split should cover at least this many k, so that its tiles outweigh the extra pass.
constexpr int64_t kMinSplitK = 256;
// Enough blocks to fill an H100 (132 SMs) several times over.
constexpr int64_t kTargetBlocks = 1024;
constexpr int64_t kMaxStripes = 65535;

// tile[ii][kk] = element (i0 + ii, k0 + kk), 0 outside [0, dim) x [k0, k_end). A warp (fixed
// threadIdx.y) reads 32 consecutive addresses in either layout.
template <typename Real>
__device__ void LoadTile(const DiagOperand<Real>& op, int32_t dim, int32_t i0, int32_t k0,
                         int32_t k_end, Real (*tile)[kTile + 1]) {
  const int tx = threadIdx.x;
  for (int j = threadIdx.y; j < kTile; j += kTileRows) {
    if (op.i_major) {
      const int64_t i = int64_t{i0} + j, k = int64_t{k0} + tx;
      tile[j][tx] = (i < dim && k < k_end) ? op.data[i * op.stride + k] : Real(0);
    } else {
      const int64_t i = int64_t{i0} + tx, k = int64_t{k0} + j;
      tile[tx][j] = (i < dim && k < k_end) ? op.data[k * op.stride + i] : Real(0);
    }
  }
}

// Block (x, y) owns stripes of 32 i (grid-strided over x) and k in [y * k_per_split, ...). With
// one split it writes out directly; with several, each writes its sums to partials[y * dim + i].
template <typename Real>
__global__ void DiagMatMatKernel(int32_t dim, int32_t inner, int64_t k_per_split,
                                 DiagOperand<Real> a, DiagOperand<Real> b, Real alpha, Real beta,
                                 Real* out, double* partials) {
  __shared__ Real ta[kTile][kTile + 1];
  __shared__ Real tb[kTile][kTile + 1];
  __shared__ double sums[kTileRows][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  // The planner makes every split start inside [0, inner); the clamps only guard the arithmetic.
  const int64_t k_first = int64_t{blockIdx.y} * k_per_split;
  const int64_t k_last = k_first + k_per_split;
  const int32_t k_begin = static_cast<int32_t>(k_first < inner ? k_first : inner);
  const int32_t k_end = static_cast<int32_t>(k_last < inner ? k_last : inner);
  for (int64_t i0 = int64_t{blockIdx.x} * kTile; i0 < dim; i0 += int64_t{gridDim.x} * kTile) {
    double acc = 0;
    for (int64_t k0 = k_begin; k0 < k_end; k0 += kTile) {
      LoadTile(a, dim, static_cast<int32_t>(i0), static_cast<int32_t>(k0), k_end, ta);
      LoadTile(b, dim, static_cast<int32_t>(i0), static_cast<int32_t>(k0), k_end, tb);
      __syncthreads();
      for (int kk = ty; kk < kTile; kk += kTileRows)
        acc += static_cast<double>(ta[tx][kk]) * static_cast<double>(tb[tx][kk]);
      __syncthreads();  // the tiles are reloaded next iteration
    }
    sums[ty][tx] = acc;
    __syncthreads();
    const int64_t i = i0 + tx;
    if (ty == 0 && i < dim) {
      double s = sums[0][tx];
      for (int j = 1; j < kTileRows; ++j) s += sums[j][tx];
      if (partials == nullptr)
        out[i] = beta * out[i] + alpha * static_cast<Real>(s);
      else
        partials[int64_t{blockIdx.y} * dim + i] = s;
    }
    __syncthreads();  // sums is rewritten for the next stripe
  }
}

template <typename Real>
__global__ void DiagCombineKernel(int32_t dim, int32_t splits, const double* partials, Real alpha,
                                  Real beta, Real* out) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < dim;
       i += int64_t{gridDim.x} * blockDim.x) {
    double s = 0;
    for (int32_t y = 0; y < splits; ++y) s += partials[int64_t{y} * dim + i];
    out[i] = beta * out[i] + alpha * static_cast<Real>(s);
  }
}

struct DiagPlan {
  int64_t stripes;      // grid.x
  int32_t splits;       // grid.y
  int64_t k_per_split;  // a multiple of kTile (64-bit: rounding up may pass 2^31 - 1)
};

DiagPlan PlanDiag(int32_t dim, int32_t inner) {
  DiagPlan plan;
  const int64_t need = (static_cast<int64_t>(dim) + kTile - 1) / kTile;
  plan.stripes = std::min(need, kMaxStripes);
  int64_t splits = std::min((static_cast<int64_t>(inner) + kMinSplitK - 1) / kMinSplitK,
                            (kTargetBlocks + need - 1) / need);
  splits = std::max<int64_t>(splits, 1);
  int64_t per = (static_cast<int64_t>(inner) + splits - 1) / splits;
  per = std::max<int64_t>((per + kTile - 1) / kTile * kTile, kTile);
  plan.k_per_split = per;
  plan.splits = static_cast<int32_t>(std::max<int64_t>(1, (inner + per - 1) / per));
  return plan;
}

template <typename Real>
void AddDiagMatMat(int32_t dim, int32_t inner, Real alpha, const Real* m, int32_t m_stride,
                   bool m_trans, const Real* n, int32_t n_stride, bool n_trans, Real beta,
                   Real* out, void* d_work, CuStream stream) {
  if (dim <= 0) return;
  const DiagPlan plan = PlanDiag(dim, inner);
  // op(m)(i, k) is m(i, k) untransposed; op(n)(k, i) is n(i, k) transposed.
  const DiagOperand<Real> a{m, m_stride, !m_trans};
  const DiagOperand<Real> b{n, n_stride, n_trans};
  double* partials = plan.splits > 1 ? static_cast<double*>(d_work) : nullptr;
  const dim3 grid(static_cast<unsigned>(plan.stripes), static_cast<unsigned>(plan.splits), 1);
  const dim3 block(kTile, kTileRows, 1);
  DiagMatMatKernel<<<grid, block, 0, stream>>>(dim, inner, plan.k_per_split, a, b, alpha, beta, out,
                                               partials);
  CUCTX_CUDA_CHECK_LAUNCH("DiagMatMatKernel");
  if (partials == nullptr) return;
  DiagCombineKernel<<<Blocks1d(dim), kThreads, 0, stream>>>(dim, plan.splits, partials, alpha, beta,
                                                            out);
  CUCTX_CUDA_CHECK_LAUNCH("DiagCombineKernel");
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

void LaunchClampCount(int32_t dim, float bound, bool ceiling, float* data, void* d_work,
                      CuStream st) {
  Reduce<false>(dim, data, ClampTerm<float>{bound, ceiling}, d_work, st);
}
void LaunchClampCount(int32_t dim, double bound, bool ceiling, double* data, void* d_work,
                      CuStream st) {
  Reduce<false>(dim, data, ClampTerm<double>{bound, ceiling}, d_work, st);
}

size_t DiagMatMatWorkspaceBytes(int32_t dim, int32_t inner) {
  if (dim <= 0) return 0;
  const DiagPlan plan = PlanDiag(dim, inner);
  if (plan.splits <= 1) return 0;
  return static_cast<size_t>(plan.splits) * static_cast<size_t>(dim) * sizeof(double);
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
