// cudamatrix/cu-device-utils.cuh: device-side helpers shared by the kernel files (.cu only).
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_DEVICE_UTILS_CUH_
#define CUCTX_CUDAMATRIX_CU_DEVICE_UTILS_CUH_

#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace cuctx {
namespace internal {

// Precision overloads of the math functions, so templates over Real call the float functions
// for float.
__device__ inline float DevExp(float x) { return expf(x); }
__device__ inline double DevExp(double x) { return exp(x); }
__device__ inline float DevLog(float x) { return logf(x); }
__device__ inline double DevLog(double x) { return log(x); }
__device__ inline float DevLog1p(float x) { return log1pf(x); }
__device__ inline double DevLog1p(double x) { return log1p(x); }
__device__ inline float DevTanh(float x) { return tanhf(x); }
__device__ inline double DevTanh(double x) { return tanh(x); }
__device__ inline float DevSqrt(float x) { return sqrtf(x); }
__device__ inline double DevSqrt(double x) { return sqrt(x); }
__device__ inline float DevPow(float x, float y) { return powf(x, y); }
__device__ inline double DevPow(double x, double y) { return pow(x, y); }
__device__ inline float DevAbs(float x) { return fabsf(x); }
__device__ inline double DevAbs(double x) { return fabs(x); }

// Launch shape of the element-wise kernels: a 2D block of kCuElementwiseThreads threads whose x
// extent covers a row segment (so a warp touches consecutive addresses), grid-stride loops in both
// directions, and a grid capped so huge matrices do not need huge grids.
struct ElementwiseShape {
  dim3 grid;
  dim3 block;
};

// The grid that covers `cols` x `rows` with blocks of `covers_x` x `covers_y` elements, each
// extent capped at 65535 blocks (the kernels grid-stride past it).
inline dim3 CappedGrid(int32_t cols, int32_t rows, int32_t covers_x, int32_t covers_y) {
  const int64_t gx = (static_cast<int64_t>(cols) + covers_x - 1) / covers_x;
  const int64_t gy = (static_cast<int64_t>(rows) + covers_y - 1) / covers_y;
  return dim3(static_cast<unsigned>(gx < 65535 ? gx : 65535),
              static_cast<unsigned>(gy < 65535 ? gy : 65535), 1);
}

inline ElementwiseShape MakeElementwiseShape(MatrixDim d) {
  ElementwiseShape s;
  int32_t bx = 32;
  while (bx < d.cols && bx < kCuElementwiseThreads) bx *= 2;
  const int32_t by = kCuElementwiseThreads / bx;
  s.block = dim3(bx, by, 1);
  s.grid = CappedGrid(d.cols, d.rows, bx, by);
  return s;
}

// Launch shape of element-wise kernels that read one operand transposed (element (c, r) for dst
// element (r, c)) without a shared-memory tile: a square 16 x 16 block, so that for each column
// the block's 16 rows read 16 consecutive elements of the transposed operand, which other warps of
// the block find in L1. With the 256 x 1 shape of MakeElementwiseShape every such read used 4 or 8
// bytes of its 32-byte sector: unpacking a 1024 x 1024 float SpMatrix took 5.60 us against 3.78
// us for Kaldi's 16 x 16 kernel (H200, kernel trace of Kaldi's cu-matrix-speed-test).
inline ElementwiseShape MakeTransposedReadShape(MatrixDim d) {
  constexpr int32_t kEdge = 16;
  ElementwiseShape s;
  s.block = dim3(kEdge, kEdge, 1);
  s.grid = CappedGrid(d.cols, d.rows, kEdge, kEdge);
  return s;
}

// A matrix whose rows are contiguous (stride == cols, and the same for a second operand) is
// processed as one long row, which keeps every lane busy for narrow shapes such as 4097x1.
inline void CollapseIfContiguous(MatrixDim* d, int32_t* other_stride) {
  if (d->rows <= 1 || d->stride != d->cols) return;
  if (other_stride != nullptr && *other_stride != d->cols) return;
  const int64_t n = static_cast<int64_t>(d->rows) * d->cols;
  // Leave headroom so that a grid-stride step past the end cannot overflow int32.
  if (n > (int64_t{1} << 30)) return;
  *d = MatrixDim{1, static_cast<int32_t>(n), static_cast<int32_t>(n)};
  if (other_stride != nullptr) *other_stride = static_cast<int32_t>(n);
}

// Calls op(&dst(r, c)) for every element, grid-striding over rows (y) and columns (x).
template <typename Real, typename Op>
__global__ void UnaryMapKernel(MatrixDim d, Op op, Real* data) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    Real* row = data + static_cast<size_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      op(&row[c]);
  }
}

// A binary map op that also needs the element's row and column (to broadcast a vector) declares
// `static constexpr bool kIndexed = true;` and is called as op(&dst(r, c), src(r, c), r, c); the
// binary launchers then keep the matrix's true shape (no collapsing to one row).
template <typename Op, typename = void>
struct IsIndexedOp : std::false_type {};
template <typename Op>
struct IsIndexedOp<Op, std::void_t<decltype(Op::kIndexed)>> : std::bool_constant<Op::kIndexed> {};

template <typename Op, typename DstReal, typename SrcReal>
__device__ __forceinline__ void ApplyBinaryOp(const Op& op, DstReal* d, SrcReal s, int32_t r,
                                              int32_t c) {
  if constexpr (IsIndexedOp<Op>::value)
    op(d, s, r, c);
  else
    op(d, s);
}

// Calls op(&dst(r, c), src(r, c)) for every element; SrcReal may differ from DstReal.
template <typename SrcReal, typename DstReal, typename Op>
__global__ void BinaryMapKernel(MatrixDim d, const SrcReal* src, int32_t src_stride, Op op,
                                DstReal* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    DstReal* drow = dst + static_cast<size_t>(r) * d.stride;
    const SrcReal* srow = src + static_cast<size_t>(r) * src_stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      ApplyBinaryOp(op, &drow[c], srow[c], r, c);
  }
}

// 16-byte vector accesses: element-wise kernels move whole 16-byte vectors (4 floats or 2
// doubles) per thread where every row starts on a 16-byte boundary, which keeps more bytes in
// flight per thread than scalar accesses.

template <typename Real>
struct Vec16;
template <>
struct Vec16<float> {
  using Type = float4;
  static constexpr int32_t kLanes = 4;
};
template <>
struct Vec16<double> {
  using Type = double2;
  static constexpr int32_t kLanes = 2;
};

// True when every row of a matrix at `data` with row stride `stride` starts 16-byte aligned.
template <typename Real>
inline bool RowsAligned16(const Real* data, int32_t stride) {
  return reinterpret_cast<uintptr_t>(data) % 16 == 0 &&
         (static_cast<size_t>(stride) * sizeof(Real)) % 16 == 0;
}

// Work units per row of the vector kernels: one per whole vector, plus one for a scalar tail.
template <typename Real>
__host__ __device__ inline int32_t VecUnits(int32_t cols) {
  constexpr int32_t w = Vec16<Real>::kLanes;
  return cols / w + (cols % w != 0 ? 1 : 0);
}

// BinaryMapKernel with 16-byte accesses (one element type); both operands' rows must be aligned.
template <typename Real, typename Op>
__global__ void BinaryMapVecKernel(MatrixDim d, const Real* src, int32_t src_stride, Op op,
                                   Real* dst) {
  using V = typename Vec16<Real>::Type;
  constexpr int32_t w = Vec16<Real>::kLanes;
  const int32_t nvec = d.cols / w, units = VecUnits<Real>(d.cols);
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    Real* drow = dst + static_cast<size_t>(r) * d.stride;
    const Real* srow = src + static_cast<size_t>(r) * src_stride;
    for (int32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < units;
         u += gridDim.x * blockDim.x) {
      if (u < nvec) {
        const V sv = reinterpret_cast<const V*>(srow)[u];
        V dv = reinterpret_cast<const V*>(drow)[u];
        const Real* sl = reinterpret_cast<const Real*>(&sv);
        Real* dl = reinterpret_cast<Real*>(&dv);
#pragma unroll
        for (int32_t i = 0; i < w; ++i) ApplyBinaryOp(op, &dl[i], sl[i], r, u * w + i);
        reinterpret_cast<V*>(drow)[u] = dv;
      } else {
        for (int32_t c = nvec * w; c < d.cols; ++c) ApplyBinaryOp(op, &drow[c], srow[c], r, c);
      }
    }
  }
}

// BinaryMapVecKernel for one row (typically a matrix that CollapseIfContiguous made one row) and
// an op without indices: one grid-strided loop over the 16-byte units, and the scalar tail (fewer
// than w elements) on the first threads of block 0. Without the row loop and the per-unit tail
// test a thread spends far fewer instructions on indexing, which shows when each thread maps one
// unit: on an H200 (run `probe-sigmap` in BENCHMARKS.md) the sigmoid of 1024 x 1024 doubles took
// 4160 ns in this form against 4896 ns in BinaryMapVecKernel's and 4768 ns in Kaldi's (one
// element per thread, 16 x 16 blocks); floats 2496 ns against 2944 and 3872.
template <typename Real, typename Op>
__global__ void FlatMapVecKernel(int32_t n, const Real* src, Op op, Real* dst) {
  using V = typename Vec16<Real>::Type;
  constexpr int32_t w = Vec16<Real>::kLanes;
  const int32_t nvec = n / w;
  for (int32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < nvec; u += gridDim.x * blockDim.x) {
    const V sv = reinterpret_cast<const V*>(src)[u];
    V dv = reinterpret_cast<const V*>(dst)[u];
    const Real* sl = reinterpret_cast<const Real*>(&sv);
    Real* dl = reinterpret_cast<Real*>(&dv);
#pragma unroll
    for (int32_t i = 0; i < w; ++i) op(&dl[i], sl[i]);
    reinterpret_cast<V*>(dst)[u] = dv;
  }
  const int32_t tail = nvec * w + static_cast<int32_t>(threadIdx.x);
  if (blockIdx.x == 0 && tail < n) op(&dst[tail], src[tail]);
}

// The launch shape of FlatMapVecKernel for `n` elements: one row of blocks of up to
// kCuElementwiseThreads threads (at least 32, so block 0 covers any tail).
template <typename Real>
inline ElementwiseShape MakeFlatShape(int32_t n) {
  const int32_t units = VecUnits<Real>(n);
  int32_t bx = 32;
  while (bx < units && bx < kCuElementwiseThreads) bx *= 2;
  ElementwiseShape s;
  s.block = dim3(bx, 1, 1);
  s.grid = CappedGrid(units, 1, bx, 1);
  return s;
}

// An element op (op(&x)) as a binary op that ignores its source, for FlatMapVecKernel.
template <typename Op>
struct IgnoreSource {
  Op op;
  template <typename Real>
  __device__ void operator()(Real* d, Real) const {
    op(d);
  }
};

// IndexedMapKernel with 16-byte accesses; rows must be 16-byte aligned (RowsAligned16).
template <typename Real, typename Op>
__global__ void IndexedMapVecKernel(MatrixDim d, Op op, Real* dst) {
  using V = typename Vec16<Real>::Type;
  constexpr int32_t w = Vec16<Real>::kLanes;
  const int32_t nvec = d.cols / w, units = VecUnits<Real>(d.cols);
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    Real* row = dst + static_cast<size_t>(r) * d.stride;
    for (int32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < units;
         u += gridDim.x * blockDim.x) {
      if (u < nvec) {
        V v = reinterpret_cast<const V*>(row)[u];
        Real* lanes = reinterpret_cast<Real*>(&v);
#pragma unroll
        for (int32_t i = 0; i < w; ++i) op(&lanes[i], r, u * w + i);
        reinterpret_cast<V*>(row)[u] = v;
      } else {
        for (int32_t c = nvec * w; c < d.cols; ++c) op(&row[c], r, c);
      }
    }
  }
}

// An element op (op(&x)) as an indexed op, for IndexedMapVecKernel.
template <typename Op>
struct IgnoreIndex {
  Op op;
  template <typename Real>
  __device__ void operator()(Real* d, int32_t, int32_t) const {
    op(d);
  }
};

// Launches op(&data(r, c)) over a matrix: a contiguous matrix is collapsed to one row, and 16-byte
// vector accesses are used when the rows are aligned. Asynchronous on `stream`; `name` labels a
// launch failure.
template <typename Real, typename Op>
void LaunchUnaryMap(MatrixDim d, Op op, Real* data, CuStream stream, const char* name) {
  if (d.rows == 0 || d.cols == 0) return;
  CollapseIfContiguous(&d, nullptr);
  if (d.rows == 1 && RowsAligned16(data, d.stride)) {
    const ElementwiseShape s = MakeFlatShape<Real>(d.cols);
    Launch<FlatMapVecKernel<Real, IgnoreSource<Op>>>(CUCTX_LAUNCH_SITE(name), s.grid, s.block, 0,
                                                     stream, d.cols, data, IgnoreSource<Op>{op},
                                                     data);
  } else if (RowsAligned16(data, d.stride)) {
    const ElementwiseShape s = MakeElementwiseShape(MatrixDim{d.rows, VecUnits<Real>(d.cols), 0});
    Launch<IndexedMapVecKernel<Real, IgnoreIndex<Op>>>(CUCTX_LAUNCH_SITE(name), s.grid, s.block, 0,
                                                       stream, d, IgnoreIndex<Op>{op}, data);
  } else {
    const ElementwiseShape s = MakeElementwiseShape(d);
    Launch<UnaryMapKernel<Real, Op>>(CUCTX_LAUNCH_SITE(name), s.grid, s.block, 0, stream, d, op,
                                     data);
  }
}

// Launches op(&dst(r, c), src(r, c)) (src has dst's shape, row stride src_stride; SrcReal may
// differ from DstReal), with the same collapsing (not for an indexed op) and, for one element
// type, vector accesses.
template <typename SrcReal, typename DstReal, typename Op>
void LaunchBinaryMap(MatrixDim d, const SrcReal* src, int32_t src_stride, Op op, DstReal* dst,
                     CuStream stream, const char* name) {
  if (d.rows == 0 || d.cols == 0) return;
  if constexpr (!IsIndexedOp<Op>::value) CollapseIfContiguous(&d, &src_stride);
  bool launched = false;
  if constexpr (std::is_same<SrcReal, DstReal>::value) {
    if constexpr (!IsIndexedOp<Op>::value) {
      if (d.rows == 1 && RowsAligned16(dst, d.stride) && RowsAligned16(src, src_stride)) {
        const ElementwiseShape s = MakeFlatShape<DstReal>(d.cols);
        Launch<FlatMapVecKernel<DstReal, Op>>(CUCTX_LAUNCH_SITE(name), s.grid, s.block, 0, stream,
                                              d.cols, src, op, dst);
        return;
      }
    }
    if (RowsAligned16(dst, d.stride) && RowsAligned16(src, src_stride)) {
      const ElementwiseShape s =
          MakeElementwiseShape(MatrixDim{d.rows, VecUnits<DstReal>(d.cols), 0});
      Launch<BinaryMapVecKernel<DstReal, Op>>(CUCTX_LAUNCH_SITE(name), s.grid, s.block, 0, stream,
                                              d, src, src_stride, op, dst);
      launched = true;
    }
  }
  if (!launched) {
    const ElementwiseShape s = MakeElementwiseShape(d);
    Launch<BinaryMapKernel<SrcReal, DstReal, Op>>(CUCTX_LAUNCH_SITE(name), s.grid, s.block, 0,
                                                  stream, d, src, src_stride, op, dst);
  }
}

// Transposing map: calls op(&dst(r, c), src(c, r)). A block of kCuTileDim x kCuTileRows threads
// moves kCuTileDim x kCuTileDim tiles: a tile is read along src rows into shared memory and written
// along dst rows, so both global accesses are coalesced; the +1 column avoids shared-memory bank
// conflicts. A thread's kCuTileDim / kCuTileRows loads of a tile are issued before any is used (a
// loop with a constant trip count, unrolled), its addresses are stepped from one base pointer, and
// a tile wholly inside the matrix skips the per-element bounds tests.
template <typename SrcReal, typename DstReal, typename Op>
__device__ __forceinline__ void TransposeTile(MatrixDim d, const SrcReal* src, int32_t src_stride,
                                              Op op, DstReal* dst, int32_t r0, int32_t c0,
                                              SrcReal (*tile)[kCuTileDim + 1]) {
  constexpr int32_t kSteps = kCuTileDim / kCuTileRows;
  const int32_t tx = threadIdx.x, ty = threadIdx.y;
  const bool full = r0 + kCuTileDim <= d.rows && c0 + kCuTileDim <= d.cols;
  // src row index = dst column, src column = dst row.
  const SrcReal* s = src + static_cast<size_t>(c0 + ty) * src_stride + (r0 + tx);
  const size_t s_step = static_cast<size_t>(kCuTileRows) * src_stride;
  if (full) {
#pragma unroll
    for (int32_t k = 0; k < kSteps; ++k) tile[ty + k * kCuTileRows][tx] = s[k * s_step];
  } else {
#pragma unroll
    for (int32_t k = 0; k < kSteps; ++k)
      if (c0 + ty + k * kCuTileRows < d.cols && r0 + tx < d.rows)
        tile[ty + k * kCuTileRows][tx] = s[k * s_step];
  }
  __syncthreads();
  DstReal* o = dst + static_cast<size_t>(r0 + ty) * d.stride + (c0 + tx);
  const size_t o_step = static_cast<size_t>(kCuTileRows) * d.stride;
  if (full) {
#pragma unroll
    for (int32_t k = 0; k < kSteps; ++k) op(&o[k * o_step], tile[tx][ty + k * kCuTileRows]);
  } else {
#pragma unroll
    for (int32_t k = 0; k < kSteps; ++k)
      if (r0 + ty + k * kCuTileRows < d.rows && c0 + tx < d.cols)
        op(&o[k * o_step], tile[tx][ty + k * kCuTileRows]);
  }
}

// The transposing map's kernel. kOneTile: the grid covers the matrix, one tile per block, no loop.
// Otherwise (a grid capped at 65535 blocks in a dimension) blocks stride over the tiles. The loop
// cost more than the tile at Kaldi's sizes: a 512 x 1024 float transpose took 2048 ns with it and
// 1664 ns with one tile per block, 1024 x 1024 floats 2720 and 2529 ns (H100, CUPTI kernel
// durations, run probe-tr); in Kaldi's speed test, 1024 x 512 floats took 2240 ns against 1792 ns
// for Kaldi's kernel before (kaldi-pin-h100-3) and 1696 ns against 1760 ns after (ktrace-7). At
// most 32 registers (8 blocks of 256 threads per SM): without the bound the kernel took 40, which
// limited an SM to 6 blocks and 55-63% occupancy against 70-80% for Kaldi's 24-register kernel at
// 1024 (Nsight Compute on an H200, run ncu-gather).
template <typename SrcReal, typename DstReal, typename Op, bool kOneTile>
__global__ void __launch_bounds__(kCuTileDim* kCuTileRows, 8)
    TransposeMapKernel(MatrixDim d, const SrcReal* src, int32_t src_stride, Op op, DstReal* dst) {
  __shared__ SrcReal tile[kCuTileDim][kCuTileDim + 1];
  if constexpr (kOneTile) {
    TransposeTile(d, src, src_stride, op, dst, blockIdx.y * kCuTileDim, blockIdx.x * kCuTileDim,
                  tile);
  } else {
    for (int32_t r0 = blockIdx.y * kCuTileDim; r0 < d.rows; r0 += gridDim.y * kCuTileDim) {
      for (int32_t c0 = blockIdx.x * kCuTileDim; c0 < d.cols; c0 += gridDim.x * kCuTileDim) {
        TransposeTile(d, src, src_stride, op, dst, r0, c0, tile);
        __syncthreads();  // the tile is read before the next one overwrites it
      }
    }
  }
}

// Launches op(&dst(r, c), src(c, r)) over a dst of shape d (src has d's transposed shape, row
// stride src_stride), asynchronously on `stream`.
template <typename SrcReal, typename DstReal, typename Op>
void LaunchTransposeMap(MatrixDim d, const SrcReal* src, int32_t src_stride, Op op, DstReal* dst,
                        CuStream stream, const char* name) {
  if (d.rows == 0 || d.cols == 0) return;
  const dim3 block(kCuTileDim, kCuTileRows, 1);
  const dim3 grid = CappedGrid(d.cols, d.rows, kCuTileDim, kCuTileDim);
  const bool covers = static_cast<int64_t>(grid.x) * kCuTileDim >= d.cols &&
                      static_cast<int64_t>(grid.y) * kCuTileDim >= d.rows;
  if (covers)
    Launch<TransposeMapKernel<SrcReal, DstReal, Op, true>>(CUCTX_LAUNCH_SITE(name), grid, block, 0,
                                                           stream, d, src, src_stride, op, dst);
  else
    Launch<TransposeMapKernel<SrcReal, DstReal, Op, false>>(CUCTX_LAUNCH_SITE(name), grid, block, 0,
                                                            stream, d, src, src_stride, op, dst);
}

// Calls op(&dst(r, c), r, c) for every element (ops that broadcast vectors or index other
// operands themselves), grid-striding as UnaryMapKernel.
template <typename Real, typename Op>
__global__ void IndexedMapKernel(MatrixDim d, Op op, Real* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    Real* row = dst + static_cast<size_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      op(&row[c], r, c);
  }
}

// Launches op(&dst(r, c), r, c) over a matrix, with 16-byte accesses when its rows are aligned.
// (No collapsing: the op needs the true row and column.) Asynchronous on `stream`.
template <typename Real, typename Op>
void LaunchIndexedMap(MatrixDim d, Op op, Real* dst, CuStream stream, const char* name) {
  if (d.rows == 0 || d.cols == 0) return;
  if (RowsAligned16(dst, d.stride)) {
    const ElementwiseShape s = MakeElementwiseShape(MatrixDim{d.rows, VecUnits<Real>(d.cols), 0});
    Launch<IndexedMapVecKernel<Real, Op>>(CUCTX_LAUNCH_SITE(name), s.grid, s.block, 0, stream, d,
                                          op, dst);
  } else {
    const ElementwiseShape s = MakeElementwiseShape(d);
    Launch<IndexedMapKernel<Real, Op>>(CUCTX_LAUNCH_SITE(name), s.grid, s.block, 0, stream, d, op,
                                       dst);
  }
}

// A read-only operand of NaryMapKernel with dst's shape: element (r, c) is data[r * stride + c].
template <typename Real>
struct MapInput {
  const Real* data;
  int32_t stride;
};

// Calls op(&dst(r, c), in_0(r, c), in_1(r, c), ...) for every element, for any number of inputs.
template <typename Real, typename Op, typename... In>
__global__ void NaryMapKernel(MatrixDim d, Op op, Real* dst, MapInput<In>... in) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    const size_t row = static_cast<size_t>(r);
    Real* drow = dst + row * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      op(&drow[c], in.data[row * in.stride + c]...);
  }
}

// CollapseIfContiguous for NaryMapKernel: collapses only when dst and every input are packed.
template <typename... In>
void CollapseAllIfContiguous(MatrixDim* d, MapInput<In>*... in) {
  const bool packed = d->stride == d->cols && ((in->stride == d->cols) && ... && true);
  if (!packed) return;
  // Every stride equals cols, so each input's stride follows dst's whether or not it collapsed.
  CollapseIfContiguous(d, nullptr);
  ((in->stride = d->stride), ...);
}

// Single-pass reductions.

// Combine functors for reductions. MaxCombine / MinCombine skip NaNs when the accumulator starts
// at -inf / +inf: a NaN never compares greater or smaller, so it never replaces the accumulator.
struct SumCombine {
  template <typename Real>
  __device__ Real operator()(Real acc, Real x) const {
    return acc + x;
  }
};
struct MaxCombine {
  template <typename Real>
  __device__ Real operator()(Real acc, Real x) const {
    return x > acc ? x : acc;
  }
};
struct MinCombine {
  template <typename Real>
  __device__ Real operator()(Real acc, Real x) const {
    return x < acc ? x : acc;
  }
};

// Combines one value per thread of a kCuReduceThreads-thread block (tid = flat thread index) in a
// fixed tree order, so the result is deterministic; every thread gets it. `buf` is shared memory
// for kCuReduceThreads values. Call from every thread of the block.
template <typename Real, typename Combine>
__device__ Real BlockTreeReduce(Real* buf, Real v, Combine combine, int tid) {
  __syncthreads();  // a previous call's readers of buf must finish before it is overwritten
  buf[tid] = v;
  __syncthreads();
  for (int half = kCuReduceThreads / 2; half > 0; half /= 2) {
    if (tid < half) buf[tid] = combine(buf[tid], buf[tid + half]);
    __syncthreads();
  }
  return buf[0];
}

// The cross-block step of a single-pass reduction: thread 0 stores the block's result in
// partials[block index] and counts the block on *counter with a fenced atomic. Returns true, in
// every thread, only in the last block to finish, which then sees every block's partial (read them
// through a volatile pointer) and which resets *counter to 0 for the next launch. Call from every
// thread of the block.
template <typename Real>
__device__ bool PublishPartialIsLast(Real block_result, Real* partials, unsigned int* counter,
                                     int tid) {
  __shared__ bool is_last;
  const unsigned int nblocks = gridDim.x * gridDim.y;
  if (tid == 0) {
    partials[blockIdx.y * gridDim.x + blockIdx.x] = block_result;
    __threadfence();
    is_last = (atomicAdd(counter, 1u) == nblocks - 1);
    if (is_last) *counter = 0;
  }
  __syncthreads();
  if (is_last) __threadfence();
  return is_last;
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_DEVICE_UTILS_CUH_
