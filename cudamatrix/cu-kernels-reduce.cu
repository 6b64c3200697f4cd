// cudamatrix/cu-kernels-reduce.cu: single-pass reductions of a whole matrix to one value (sum,
// sum of squares, max, min, trace, identity test, dot products and traces of products, clamp
// counts), each one kernel launch that ends with the result already where the caller wants it.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

constexpr int kThreads = kCuReduceThreads;
static_assert(kThreads == 256, "the block shapes below assume 256 threads");

// At most this many blocks: about 8 per SM on a 132-SM GPU, enough to keep memory busy, few
// enough that the last block's pass over the partials is short.
constexpr int32_t kMaxBlocks = 1024;

// Workspace layout: kMaxBlocks partials (8 bytes each), then the block counter. The counter is
// zero between launches: LaunchZeroReduceWorkspace sets it once, and the last block of every
// launch resets it.
constexpr size_t kCounterOffset = kMaxBlocks * sizeof(double);

int32_t CapBlocks(int64_t want) {
  return static_cast<int32_t>(std::max<int64_t>(1, std::min<int64_t>(want, kMaxBlocks)));
}

// ---- block and grid combination ------------------------------------------------------------------

// Combines one value per thread of the block (flat index tid) in a fixed order (within each warp
// by shuffles, then over the warps), so the result is deterministic. Thread 0 gets the result.
template <typename T, typename Combine>
__device__ T BlockReduce(T v, Combine combine, int tid) {
  __shared__ T warp_values[kThreads / 32];
#pragma unroll
  for (int off = 16; off > 0; off /= 2) v = combine(v, __shfl_down_sync(0xffffffffu, v, off));
  __syncthreads();  // a previous call's readers of warp_values are done
  if (tid % 32 == 0) warp_values[tid / 32] = v;
  __syncthreads();
  if (tid < 32) {
    v = warp_values[tid % (kThreads / 32)];
#pragma unroll
    for (int off = kThreads / 64; off > 0; off /= 2)
      v = combine(v, __shfl_down_sync(0xffffffffu, v, off));
  }
  return v;
}

// Posts `value` to the host as HostPost describes: two self-tagged 8-byte words, no fence.
template <typename T>
__device__ void PostToHost(HostPost post, T value) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "a result is 4 or 8 bytes");
  unsigned long long bits = 0;
  memcpy(&bits, &value, sizeof(T));
  const unsigned long long tag = static_cast<unsigned long long>(post.seq) << 32;
  volatile unsigned long long* words = post.words;
  words[0] = tag | (bits & 0xffffffffull);
  words[1] = tag | (bits >> 32);
}

// The grid-wide step: with one block, thread 0 delivers the result; otherwise every block
// publishes its partial and the last to finish combines the partials in block order and delivers
// the result: to the host through `post` when post.words is set, else to `out`.
// nan_origin: a NaN there is the result (the CPU's Max()/Min() start from that element).
template <typename T, typename Combine>
__device__ void FinishReduce(T block_value, Combine combine, T identity, char* work, T* out,
                             HostPost post, int tid, const T* nan_origin) {
  T total = block_value;
  if (gridDim.x * gridDim.y > 1) {
    T* partials = reinterpret_cast<T*>(work);
    unsigned int* counter = reinterpret_cast<unsigned int*>(work + kCounterOffset);
    if (!internal::PublishPartialIsLast(block_value, partials, counter, tid)) return;
    const volatile T* vp = partials;
    const unsigned int nblocks = gridDim.x * gridDim.y;
    T v = identity;
    for (unsigned int b = tid; b < nblocks; b += kThreads) v = combine(v, vp[b]);
    total = BlockReduce(v, combine, tid);
  }
  if (tid == 0) {
    if (nan_origin != nullptr && *nan_origin != *nan_origin) total = *nan_origin;
    if (post.words != nullptr)
      PostToHost(post, total);
    else
      *out = total;
  }
}

// ---- element sources -----------------------------------------------------------------------------

// What element (r, c) contributes. Each has the matrix shape's element count of terms.
template <typename Real>
struct ValueTerm {
  const Real* data;
  int32_t stride;
  __device__ Real operator()(int32_t r, int32_t c) const {
    return data[static_cast<size_t>(r) * stride + c];
  }
  __device__ Real Lane(Real x) const { return x; }
};
template <typename Real>
struct SquareTerm {
  const Real* data;
  int32_t stride;
  __device__ Real operator()(int32_t r, int32_t c) const {
    const Real x = data[static_cast<size_t>(r) * stride + c];
    return x * x;
  }
  __device__ Real Lane(Real x) const { return x * x; }
};
// 1 where the element differs from the identity matrix's by more than tol, else 0.
template <typename Real>
struct OffUnitTerm {
  const Real* data;
  int32_t stride;
  Real tol;
  __device__ Real operator()(int32_t r, int32_t c) const {
    const Real diff = data[static_cast<size_t>(r) * stride + c] - (r == c ? Real(1) : Real(0));
    return (diff < 0 ? -diff : diff) > tol ? Real(1) : Real(0);
  }
};
// a(r, c) * b(r, c).
template <typename Real>
struct ProductTerm {
  const Real* a;
  int32_t a_stride;
  const Real* b;
  int32_t b_stride;
  __device__ Real operator()(int32_t r, int32_t c) const {
    return a[static_cast<size_t>(r) * a_stride + c] * b[static_cast<size_t>(r) * b_stride + c];
  }
};

// ---- kernels -------------------------------------------------------------------------------------

// Pitched matrices: a 2D block whose x extent follows the row length (so narrow matrices keep
// their threads busy), blocks grid-striding over row segments (x) and rows (y).
template <typename T, typename Term, typename Combine>
__global__ void Reduce2DKernel(MatrixDim d, Term term, Combine combine, T identity, char* work,
                               T* out, HostPost post, const T* nan_origin) {
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  T acc = identity;
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y)
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      acc = combine(acc, term(r, c));
  FinishReduce(BlockReduce(acc, combine, tid), combine, identity, work, out, post, tid, nan_origin);
}

// Contiguous, 16-byte aligned data of n elements (value or square terms): grid-strided 16-byte
// loads, two in flight per thread, marked evict-first (__ldcs: the data is read once; measured
// about 0.2 us less per 64 MB pass on an H100); the n % lanes tail is read by the first threads of
// block 0.
template <typename Real, typename Term, typename Combine>
__global__ void ReduceVecKernel(int64_t n, const Real* data, Term term, Combine combine,
                                Real identity, char* work, Real* out, HostPost post,
                                const Real* nan_origin) {
  using V = typename internal::Vec16<Real>::Type;
  constexpr int32_t w = internal::Vec16<Real>::kLanes;
  const int tid = threadIdx.x;
  const int64_t nvec = n / w;
  const V* vdata = reinterpret_cast<const V*>(data);
  Real acc0 = identity, acc1 = identity;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  int64_t u = static_cast<int64_t>(blockIdx.x) * kThreads + tid;
  for (; u + step < nvec; u += 2 * step) {
    const V v0 = __ldcs(vdata + u), v1 = __ldcs(vdata + u + step);
    const Real* l0 = reinterpret_cast<const Real*>(&v0);
    const Real* l1 = reinterpret_cast<const Real*>(&v1);
#pragma unroll
    for (int32_t i = 0; i < w; ++i) {
      acc0 = combine(acc0, term.Lane(l0[i]));
      acc1 = combine(acc1, term.Lane(l1[i]));
    }
  }
  if (u < nvec) {
    const V v0 = __ldcs(vdata + u);
    const Real* l0 = reinterpret_cast<const Real*>(&v0);
#pragma unroll
    for (int32_t i = 0; i < w; ++i) acc0 = combine(acc0, term.Lane(l0[i]));
  }
  if (blockIdx.x == 0 && tid < n - nvec * w) acc1 = combine(acc1, term.Lane(data[nvec * w + tid]));
  FinishReduce(BlockReduce(combine(acc0, acc1), combine, tid), combine, identity, work, out, post,
               tid, nan_origin);
}

// Contiguous, 16-byte aligned a and b of n elements: sum of a[i] * b[i].
template <typename Real>
__global__ void DotVecKernel(int64_t n, const Real* a, const Real* b, char* work, Real* out,
                             HostPost post) {
  using V = typename internal::Vec16<Real>::Type;
  constexpr int32_t w = internal::Vec16<Real>::kLanes;
  const int tid = threadIdx.x;
  const int64_t nvec = n / w;
  const V* va = reinterpret_cast<const V*>(a);
  const V* vb = reinterpret_cast<const V*>(b);
  Real acc = 0;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * kThreads + tid; u < nvec; u += step) {
    const V x = va[u], y = vb[u];
    const Real* lx = reinterpret_cast<const Real*>(&x);
    const Real* ly = reinterpret_cast<const Real*>(&y);
#pragma unroll
    for (int32_t i = 0; i < w; ++i) acc += lx[i] * ly[i];
  }
  if (blockIdx.x == 0 && tid < n - nvec * w) acc += a[nvec * w + tid] * b[nvec * w + tid];
  FinishReduce(BlockReduce(acc, internal::SumCombine(), tid), internal::SumCombine(), Real(0), work,
               out, post, tid, static_cast<const Real*>(nullptr));
}

// sum of a(r, c) * b(c, r) over d (a is d.rows x d.cols, b is d.cols x d.rows): 32 x 32 tiles;
// the b tile is read along b's rows (coalesced) into shared memory and used transposed. Blocks
// of 32 x 8 threads grid-stride over the tiles.
constexpr int kTile = 32;
template <typename Real>
__global__ void DotTransKernel(MatrixDim d, const Real* a, const Real* b, int32_t b_stride,
                               char* work, Real* out, HostPost post) {
  __shared__ Real tile[kTile][kTile + 1];  // tile[c - c0][r - r0] = b(c, r)
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTile + tx;
  const int32_t tiles_c = (d.cols + kTile - 1) / kTile;
  const int64_t tiles = static_cast<int64_t>((d.rows + kTile - 1) / kTile) * tiles_c;
  Real acc = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int32_t r0 = static_cast<int32_t>(t / tiles_c) * kTile;
    const int32_t c0 = static_cast<int32_t>(t % tiles_c) * kTile;
    __syncthreads();  // the previous tile's readers are done
    for (int j = ty; j < kTile; j += kTile / 4) {
      const int32_t c = c0 + j, r = r0 + tx;
      tile[j][tx] = (c < d.cols && r < d.rows) ? b[static_cast<size_t>(c) * b_stride + r] : Real(0);
    }
    __syncthreads();
    for (int j = ty; j < kTile; j += kTile / 4) {
      const int32_t r = r0 + j, c = c0 + tx;
      if (r < d.rows && c < d.cols) acc += a[static_cast<size_t>(r) * d.stride + c] * tile[tx][j];
    }
  }
  FinishReduce(BlockReduce(acc, internal::SumCombine(), tid), internal::SumCombine(), Real(0), work,
               out, post, tid, static_cast<const Real*>(nullptr));
}

// x = max(x, bound) (ceiling false) or min(x, bound) on data[0, dim); the number of changed
// elements (as a double) goes to *out.
template <typename Real>
__global__ void ClampCountKernel(int32_t dim, Real bound, bool ceiling, Real* data, char* work,
                                 double* out, HostPost post) {
  const int tid = threadIdx.x;
  double count = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + tid; i < dim;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const Real v = data[i];
    if (ceiling ? v > bound : v < bound) {
      data[i] = bound;
      count += 1;
    }
  }
  FinishReduce(BlockReduce(count, internal::SumCombine(), tid), internal::SumCombine(), 0.0, work,
               out, post, tid, static_cast<const double*>(nullptr));
}

// ---- launchers -----------------------------------------------------------------------------------

// Block and grid for Reduce2DKernel: the block's x extent follows the row length (up to the whole
// block for long rows); blocks cover the columns first, then the rows, up to kMaxBlocks.
void Shape2D(MatrixDim d, dim3* grid, dim3* block) {
  int32_t bx = 1;
  while (bx < d.cols && bx < kThreads) bx *= 2;
  const int32_t by = kThreads / bx;
  int64_t gx = (static_cast<int64_t>(d.cols) + bx - 1) / bx;
  if (gx > kMaxBlocks) gx = kMaxBlocks;
  if (gx < 1) gx = 1;
  int64_t gy = (static_cast<int64_t>(d.rows) + by - 1) / by;
  if (gy > kMaxBlocks / gx) gy = kMaxBlocks / gx;
  if (gy < 1) gy = 1;
  *grid = dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), 1);
  *block = dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by), 1);
}

template <typename T, typename Term, typename Combine>
void Launch2D(MatrixDim d, Term term, Combine combine, T identity, char* work, T* out,
              HostPost post, const T* nan_origin, CuStream stream) {
  dim3 grid, block;
  Shape2D(d, &grid, &block);
  internal::Launch<Reduce2DKernel<T, Term, Combine>>(CUCTX_LAUNCH_SITE("Reduce2DKernel"), grid,
                                                     block, 0, stream, d, term, combine, identity,
                                                     work, out, post, nan_origin);
}

// Value or square terms: the vector kernel when the data is one aligned run, else the 2D one.
template <typename Real, template <typename> class Term, typename Combine>
void LaunchElements(MatrixDim d, const Real* data, Combine combine, Real identity, char* work,
                    Real* out, HostPost post, const Real* nan_origin, CuStream stream) {
  const bool contiguous = d.rows <= 1 || d.stride == d.cols;
  if (contiguous && internal::RowsAligned16(data, 0)) {
    const int64_t n = static_cast<int64_t>(d.rows) * d.cols;
    const int64_t units = n / internal::Vec16<Real>::kLanes;
    // Half the blocks a unit per thread would want: each thread keeps two loads in flight.
    const int32_t blocks = CapBlocks((units + 2 * kThreads - 1) / (2 * kThreads));
    internal::Launch<ReduceVecKernel<Real, Term<Real>, Combine>>(
        CUCTX_LAUNCH_SITE("ReduceVecKernel"), blocks, kThreads, 0, stream, n, data,
        Term<Real>{data, 0}, combine, identity, work, out, post, nan_origin);
    return;
  }
  Launch2D(d, Term<Real>{data, d.stride}, combine, identity, work, out, post, nan_origin, stream);
}

// The diagonal of a matrix as a column: n rows of one element, stride + 1 apart.
MatrixDim DiagDim(MatrixDim d) {
  return MatrixDim{d.rows < d.cols ? d.rows : d.cols, 1, d.stride + 1};
}

template <typename Real>
void MatReduceImpl(MatrixDim d, const Real* data, MatReduce op, Real tol, void* d_work, Real* out,
                   HostPost post, CuStream stream) {
  char* work = static_cast<char*>(d_work);
  const Real* none = nullptr;
  // An empty matrix still gets a launch (of one block), which stores the identity.
  switch (op) {
    case MatReduce::kSum:
      return LaunchElements<Real, ValueTerm>(d, data, internal::SumCombine(), Real(0), work, out,
                                             post, none, stream);
    case MatReduce::kSumSquares:
      return LaunchElements<Real, SquareTerm>(d, data, internal::SumCombine(), Real(0), work, out,
                                              post, none, stream);
    case MatReduce::kMax:
      return LaunchElements<Real, ValueTerm>(d, data, internal::MaxCombine(), Real(-INFINITY), work,
                                             out, post, data, stream);
    case MatReduce::kMin:
      return LaunchElements<Real, ValueTerm>(d, data, internal::MinCombine(), Real(INFINITY), work,
                                             out, post, data, stream);
    case MatReduce::kTrace: {
      const MatrixDim diag = DiagDim(d);
      return Launch2D(diag, ValueTerm<Real>{data, diag.stride}, internal::SumCombine(), Real(0),
                      work, out, post, none, stream);
    }
    case MatReduce::kOffUnit:
      return Launch2D(d, OffUnitTerm<Real>{data, d.stride, tol}, internal::MaxCombine(), Real(0),
                      work, out, post, none, stream);
  }
}

template <typename Real>
void DotImpl(MatrixDim d, const Real* a, const Real* b, int32_t b_stride, bool b_trans,
             void* d_work, Real* out, HostPost post, CuStream stream) {
  char* work = static_cast<char*>(d_work);
  if (b_trans) {
    const int64_t tiles = static_cast<int64_t>((d.rows + kTile - 1) / kTile) *
                          ((static_cast<int64_t>(d.cols) + kTile - 1) / kTile);
    internal::Launch<DotTransKernel<Real>>(CUCTX_LAUNCH_SITE("DotTransKernel"), CapBlocks(tiles),
                                           dim3(kTile, kThreads / kTile, 1), 0, stream, d, a, b,
                                           b_stride, work, out, post);
    return;
  }
  const bool packed = d.rows <= 1 || (d.stride == d.cols && b_stride == d.cols);
  if (packed && internal::RowsAligned16(a, 0) && internal::RowsAligned16(b, 0)) {
    const int64_t n = static_cast<int64_t>(d.rows) * d.cols;
    const int64_t units = n / internal::Vec16<Real>::kLanes;
    internal::Launch<DotVecKernel<Real>>(CUCTX_LAUNCH_SITE("DotVecKernel"),
                                         CapBlocks((units + kThreads - 1) / kThreads), kThreads, 0,
                                         stream, n, a, b, work, out, post);
    return;
  }
  Launch2D(d, ProductTerm<Real>{a, d.stride, b, b_stride}, internal::SumCombine(), Real(0), work,
           out, post, static_cast<const Real*>(nullptr), stream);
}

template <typename Real>
void ClampCountImpl(int32_t dim, Real bound, bool ceiling, Real* data, void* d_work, double* out,
                    HostPost post, CuStream stream) {
  const int32_t blocks = CapBlocks((static_cast<int64_t>(dim) + kThreads - 1) / kThreads);
  internal::Launch<ClampCountKernel<Real>>(CUCTX_LAUNCH_SITE("ClampCountKernel"), blocks, kThreads,
                                           0, stream, dim, bound, ceiling, data,
                                           static_cast<char*>(d_work), out, post);
}

}  // namespace

size_t ReduceWorkspaceBytes() { return kCounterOffset + 16; }

void LaunchZeroReduceWorkspace(void* d_work, CuStream stream) {
  CUCTX_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(d_work) + kCounterOffset, 0,
                                   sizeof(unsigned int), stream));
}

void LaunchMatReduce(MatrixDim dim, const float* data, MatReduce op, float tol, void* d_work,
                     float* out, HostPost post, CuStream stream) {
  MatReduceImpl(dim, data, op, tol, d_work, out, post, stream);
}
void LaunchMatReduce(MatrixDim dim, const double* data, MatReduce op, double tol, void* d_work,
                     double* out, HostPost post, CuStream stream) {
  MatReduceImpl(dim, data, op, tol, d_work, out, post, stream);
}

void LaunchDot(MatrixDim dim, const float* a, const float* b, int32_t b_stride, bool b_trans,
               void* d_work, float* out, HostPost post, CuStream stream) {
  DotImpl(dim, a, b, b_stride, b_trans, d_work, out, post, stream);
}
void LaunchDot(MatrixDim dim, const double* a, const double* b, int32_t b_stride, bool b_trans,
               void* d_work, double* out, HostPost post, CuStream stream) {
  DotImpl(dim, a, b, b_stride, b_trans, d_work, out, post, stream);
}

void LaunchClampCount(int32_t dim, float bound, bool ceiling, float* data, void* d_work,
                      double* out, HostPost post, CuStream stream) {
  ClampCountImpl(dim, bound, ceiling, data, d_work, out, post, stream);
}
void LaunchClampCount(int32_t dim, double bound, bool ceiling, double* data, void* d_work,
                      double* out, HostPost post, CuStream stream) {
  ClampCountImpl(dim, bound, ceiling, data, d_work, out, post, stream);
}

}  // namespace cuctx
