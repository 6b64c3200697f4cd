// cudamatrix/cu-kernels-gather.cu: row and column gathers and scatters (by index or by row
// pointer), row/column range sums, triangle copies, element lookups and element-wise adds.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <cstdint>

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

// Entry i of an index array is usable when it lies in [0, limit). Everything else (-1 by
// contract, or a bad index that reached the device unchecked) selects nothing, so no kernel here
// can touch memory outside its operands whatever the index arrays hold.
__device__ inline bool InRange(int32_t i, int32_t limit) { return i >= 0 && i < limit; }

// Threads per block of GatherColsStagedKernel, and the largest source row (in bytes) it stages
// in shared memory (the default dynamic limit, so no opt-in attribute is needed).
constexpr int32_t kGatherColsThreads = 256;
constexpr size_t kGatherColsStagedBytes = 48 * 1024;

// Row r of a matrix chosen by an index array: base row indexes[r], or nullptr.
template <typename Ptr>
struct IndexedRows {
  Ptr base;
  int32_t rows;
  int32_t stride;
  const int32_t* indexes;
  __device__ Ptr operator()(int32_t r) const {
    const int32_t i = indexes[r];
    return InRange(i, rows) ? base + static_cast<int64_t>(i) * stride : nullptr;
  }
};

// Row r given directly by a pointer array (nullptr entries allowed).
template <typename Ptr>
struct PointerRows {
  const Ptr* rows;
  __device__ Ptr operator()(int32_t r) const { return rows[r]; }
};

// The gathers and scatters below (but the staged column gather) walk their matrix with the 2D
// element-wise shape: the block's x extent runs along a row, so each warp reads and writes
// consecutive columns of one row (the source or destination row looked up once per row, a
// broadcast load from cache).

template <typename Real>
__device__ inline bool Aligned16(const Real* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Vector units (16 bytes) each thread of the row gathers handles per row on large matrices, so
// that it has several independent loads in flight (GatherShape).
constexpr int32_t kGatherUnroll = 4;

// out (op)= in, lane by lane, for T a Real or a 16-byte vector of Reals.
template <RowGatherOp kOp, typename T, typename Real>
__device__ inline T GatherOp(Real alpha, T in, T out) {
  Real* o = reinterpret_cast<Real*>(&out);
  const Real* x = reinterpret_cast<const Real*>(&in);
#pragma unroll
  for (int32_t i = 0; i < static_cast<int32_t>(sizeof(T) / sizeof(Real)); ++i) {
    switch (kOp) {
      case RowGatherOp::kCopy:
        o[i] = x[i];
        break;
      case RowGatherOp::kAdd:
        o[i] += alpha * x[i];
        break;
      case RowGatherOp::kMul:
        o[i] *= x[i];
        break;
    }
  }
  return out;
}

template <typename T, typename Real>
__device__ inline T Zeros() {
  T z;
  Real* lanes = reinterpret_cast<Real*>(&z);
#pragma unroll
  for (int32_t i = 0; i < static_cast<int32_t>(sizeof(T) / sizeof(Real)); ++i) lanes[i] = Real(0);
  return z;
}

// out[u] (op)= in[u] for u = begin, begin + step, ... < n (T: elements or 16-byte vectors; in ==
// nullptr reads zeros), kUnroll at a time with every load issued before the stores, so a thread
// keeps several loads in flight.
template <RowGatherOp kOp, int kUnroll, typename T, typename Real>
__device__ void GatherRun(Real alpha, const T* in, T* out, int32_t begin, int32_t n, int32_t step) {
  for (int32_t u0 = begin; u0 < n; u0 += kUnroll * step) {
    T x[kUnroll], y[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int32_t u = u0 + k * step;
      if (u < n) {
        x[k] = in != nullptr ? in[u] : Zeros<T, Real>();
        y[k] = kOp == RowGatherOp::kCopy ? x[k] : out[u];
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int32_t u = u0 + k * step;
      if (u < n) out[u] = GatherOp<kOp, T, Real>(alpha, x[k], y[k]);
    }
  }
}

// dst row r (kOp)= the row `rows(r)` returns; a missing row gives zeros for kCopy and leaves the
// destination row alone otherwise. Where both rows start 16-byte aligned (checked per row, since
// pointer arrays may mix alignments) the row moves as 16-byte vectors, then the columns after the
// last whole vector one by one; other rows go element by element. A row belongs to whole warps
// (x extent >= 32), so the per-row choice does not diverge within a warp.
// kUnroll: vector units per thread and row step (kGatherUnroll on large matrices, 1 otherwise: the
// unrolled form holds 2 x kGatherUnroll vectors per thread, 56-92 registers, which left a 1024 x
// 1024 double AddRows at 22% occupancy against 75% for Kaldi's 16-register kernel; Nsight Compute
// on an H200, run ncu-gather).
template <RowGatherOp kOp, int kUnroll, typename Real, typename Rows>
__global__ void GatherRowsKernel(MatrixDim d, Real alpha, Rows rows, Real* dst) {
  using V = typename internal::Vec16<Real>::Type;
  constexpr int32_t w = internal::Vec16<Real>::kLanes;
  const int32_t nvec = d.cols / w;
  const int32_t x0 = blockIdx.x * blockDim.x + threadIdx.x;
  const int32_t step = gridDim.x * blockDim.x;
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    const Real* in = rows(r);
    if (in == nullptr && kOp != RowGatherOp::kCopy) continue;
    Real* out = dst + static_cast<int64_t>(r) * d.stride;
    if (Aligned16(in) && Aligned16(out)) {
      GatherRun<kOp, kUnroll, V, Real>(alpha, reinterpret_cast<const V*>(in),
                                       reinterpret_cast<V*>(out), x0, nvec, step);
      GatherRun<kOp, kUnroll, Real, Real>(alpha, in, out, nvec * w + x0, d.cols, step);
    } else {
      GatherRun<kOp, kUnroll, Real, Real>(alpha, in, out, x0, d.cols, step);
    }
  }
}

// The row `rows(r)` returns (skipped when nullptr) = row r of src, or += alpha * row r. Several
// source rows may name one destination row, so the add is atomic.
template <typename Real, typename Rows>
__global__ void ScatterRowsKernel(MatrixDim d, const Real* src, bool add, Real alpha, Rows rows) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    Real* out = rows(r);
    if (out == nullptr) continue;
    const Real* in = src + static_cast<int64_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      if (add)
        atomicAdd(out + c, alpha * in[c]);
      else
        out[c] = in[c];
    }
  }
}

// dst(r, c) = src(r, indexes[c]) (0 for a missing column), or += src(r, indexes[c]).
template <typename Real>
__global__ void GatherColsKernel(MatrixDim d, const Real* src, int32_t src_cols, int32_t src_stride,
                                 const int32_t* indexes, bool add, Real* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    const Real* in = src + static_cast<int64_t>(r) * src_stride;
    Real* out = dst + static_cast<int64_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      const int32_t j = indexes[c];
      const bool ok = InRange(j, src_cols);
      if (add) {
        if (ok) out[c] += in[j];
      } else {
        out[c] = ok ? in[j] : Real(0);
      }
    }
  }
}

// 32-bit lanes of a 16-byte Real vector's indexes: int4 for 4 floats, int2 for 2 doubles.
template <int32_t kLanes>
struct IndexVec;
template <>
struct IndexVec<4> {
  using Type = int4;
};
template <>
struct IndexVec<2> {
  using Type = int2;
};

// GatherColsKernel for source rows that fit in shared memory: a block per row (grid-strided)
// copies the source row into shared memory with coalesced (16-byte when aligned) loads, then
// gathers from there, writing the destination row as 16-byte vectors when it and the index array
// are aligned. A random column gather straight from global memory costs a separate sector access
// per element, which caps it well below copy bandwidth; from shared memory it costs at most bank
// conflicts, and each source element crosses DRAM once. Dynamic shared memory: src_cols Reals.
template <typename Real>
__global__ void __launch_bounds__(kGatherColsThreads)
    GatherColsStagedKernel(MatrixDim d, const Real* src, int32_t src_cols, int32_t src_stride,
                           const int32_t* indexes, bool add, Real* dst) {
  using V = typename internal::Vec16<Real>::Type;
  constexpr int32_t w = internal::Vec16<Real>::kLanes;
  using I = typename IndexVec<w>::Type;
  extern __shared__ __align__(16) unsigned char staged_bytes[];
  Real* staged = reinterpret_cast<Real*>(staged_bytes);
  const int32_t src_vec = src_cols / w, dst_vec = d.cols / w;
  const bool vector_out = Aligned16(dst) &&
                          (static_cast<size_t>(d.stride) * sizeof(Real)) % 16 == 0 &&
                          reinterpret_cast<uintptr_t>(indexes) % sizeof(I) == 0;
  for (int32_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    const Real* in = src + static_cast<int64_t>(r) * src_stride;
    int32_t c0 = threadIdx.x;
    if (Aligned16(in)) {
      for (int32_t u = threadIdx.x; u < src_vec; u += blockDim.x)
        reinterpret_cast<V*>(staged)[u] = reinterpret_cast<const V*>(in)[u];
      c0 = src_vec * w + threadIdx.x;
    }
    for (int32_t c = c0; c < src_cols; c += blockDim.x) staged[c] = in[c];
    __syncthreads();
    Real* out = dst + static_cast<int64_t>(r) * d.stride;
    c0 = threadIdx.x;
    if (vector_out) {
      for (int32_t u = threadIdx.x; u < dst_vec; u += blockDim.x) {
        const I iv = reinterpret_cast<const I*>(indexes)[u];
        const int32_t* idx = reinterpret_cast<const int32_t*>(&iv);
        V v = add ? reinterpret_cast<const V*>(out)[u] : Zeros<V, Real>();
        Real* lanes = reinterpret_cast<Real*>(&v);
#pragma unroll
        for (int32_t i = 0; i < w; ++i)
          if (InRange(idx[i], src_cols))
            lanes[i] = add ? lanes[i] + staged[idx[i]] : staged[idx[i]];
        reinterpret_cast<V*>(out)[u] = v;
      }
      c0 = dst_vec * w + threadIdx.x;
    }
    for (int32_t c = c0; c < d.cols; c += blockDim.x) {
      const int32_t j = indexes[c];
      const bool ok = InRange(j, src_cols);
      if (add) {
        if (ok) out[c] += staged[j];
      } else {
        out[c] = ok ? staged[j] : Real(0);
      }
    }
    // The next row's staging must wait until every thread has gathered from this one.
    __syncthreads();
  }
}

// The part of [first, second) inside [0, limit); empty when first >= second.
__device__ inline void ClampRange(const int32_t* pairs, int32_t i, int32_t limit, int32_t* lo,
                                  int32_t* hi) {
  const int32_t first = pairs[2 * static_cast<int64_t>(i)];
  const int32_t second = pairs[2 * static_cast<int64_t>(i) + 1];
  *lo = first > 0 ? first : 0;
  *hi = second < limit ? second : limit;
}

// out[u] += sum of the rows in[j * stride + u], j in [lo, hi), for u = begin, begin + step, ...
// < n (T: elements or 16-byte vectors; `stride` in units of T), added lane by lane one source row
// at a time in increasing j.
template <typename T, typename Real>
__device__ void AddRowRangeRun(const T* in, int64_t stride, int32_t lo, int32_t hi, T* out,
                               int32_t begin, int32_t n, int32_t step) {
  constexpr int32_t kLanes = static_cast<int32_t>(sizeof(T) / sizeof(Real));
  for (int32_t u = begin; u < n; u += step) {
    T v = out[u];
    Real* acc = reinterpret_cast<Real*>(&v);
    for (int32_t j = lo; j < hi; ++j) {
      const T x = in[j * stride + u];
      const Real* xs = reinterpret_cast<const Real*>(&x);
#pragma unroll
      for (int32_t i = 0; i < kLanes; ++i) acc[i] += xs[i];
    }
    out[u] = v;
  }
}

// dst(r, c) += src(j, c) for j in range r, added one source row at a time in increasing j (the
// CPU's order, so both paths round alike). Where the source's pitch is a whole number of 16-byte
// vectors and both rows start aligned, a row moves as 16-byte vectors, then the columns after the
// last whole vector one by one (a row belongs to whole warps, so the choice does not diverge).
template <typename Real>
__global__ void AddRowRangesKernel(MatrixDim d, const Real* src, int32_t src_rows,
                                   int32_t src_stride, const int32_t* pairs, Real* dst) {
  using V = typename internal::Vec16<Real>::Type;
  constexpr int32_t w = internal::Vec16<Real>::kLanes;
  const int32_t nvec = d.cols / w;
  const int32_t x0 = blockIdx.x * blockDim.x + threadIdx.x;
  const int32_t step = gridDim.x * blockDim.x;
  const bool vec_pitch = src_stride % w == 0;
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    int32_t lo, hi;
    ClampRange(pairs, r, src_rows, &lo, &hi);
    if (lo >= hi) continue;
    Real* out = dst + static_cast<int64_t>(r) * d.stride;
    if (vec_pitch && Aligned16(src) && Aligned16(out)) {
      AddRowRangeRun<V, Real>(reinterpret_cast<const V*>(src), src_stride / w, lo, hi,
                              reinterpret_cast<V*>(out), x0, nvec, step);
      AddRowRangeRun<Real, Real>(src, src_stride, lo, hi, out, nvec * w + x0, d.cols, step);
    } else {
      AddRowRangeRun<Real, Real>(src, src_stride, lo, hi, out, x0, d.cols, step);
    }
  }
}

// dst(r, c) = sum of src(r, j) for j in range c (0 when empty), summed in increasing j.
template <typename Real>
__global__ void SumColumnRangesKernel(MatrixDim d, const Real* src, int32_t src_cols,
                                      int32_t src_stride, const int32_t* pairs, Real* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    const Real* in = src + static_cast<int64_t>(r) * src_stride;
    Real* out = dst + static_cast<int64_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      int32_t lo, hi;
      ClampRange(pairs, c, src_cols, &lo, &hi);
      Real v = 0;
      for (int32_t j = lo; j < hi; ++j) v += in[j];
      out[c] = v;
    }
  }
}

// Mirrors one triangle of the n x n matrix onto the other, tile by tile. A block owns the
// destination tile (tr, tc) on the written side and reads the mirror tile (tc, tr) through shared
// memory (coalesced both ways). Off-diagonal mirror tiles are never written, and a diagonal tile
// is read completely before the barrier and written after it by its one block, so no element is
// read and written concurrently. Tiles on the read side are skipped by whole blocks, so the
// barriers stay uniform. Tiles are kTriangleTileBytes wide (64 floats, 32 doubles), so that one
// warp access covers a tile row of two 128-byte lines: with kPair (floats whose rows allow 8-byte
// accesses) each lane moves a float2, else kTile / 32 single elements. The block is 32 x
// kCuTileRows threads. Whole tiles (all but those on the matrix's last rows and columns) go
// without bounds checks, so that each thread has several loads in flight: with a check and a
// branch per load the compiler kept one, and the kernel reached 0.70 of cudaMemcpy D2D instead of
// 0.88 (H100, 4096 x 4096 floats). The odd row pitch of the shared tile keeps the transposed reads
// free of bank conflicts (2-way with kPair). Where the wide tiles would leave most SMs idle (fewer
// than kTriangleMinWideTiles tiles on the written side), floats take 128-byte tiles (32 x 32, one
// element per lane), as doubles do: a 512 x 512 float matrix has 36 wide tiles, and its kernel took
// 2.02 us with them and 1.57 us with narrow ones, against 1.66 us for Kaldi's (H200, runs ktrace-4,
// -5).
constexpr int32_t kTriangleTileBytes = 256;
constexpr int64_t kTriangleMinWideTiles = 128;

template <typename Real, bool kPair, int32_t kTileBytes = kTriangleTileBytes>
__global__ void CopyTriangleKernel(int32_t n, int32_t stride, bool lower_to_upper, Real* data) {
  constexpr int32_t kTile = kTileBytes / static_cast<int32_t>(sizeof(Real));
  constexpr int32_t kLanes = kTile / 32;           // columns per thread and tile row
  constexpr int32_t kIters = kTile / kCuTileRows;  // tile rows per thread
  static_assert(kLanes >= 1, "a tile row is at least one element per lane");
  static_assert(!kPair || (sizeof(Real) == 4 && kLanes == 2), "pairs are float2");
  __shared__ Real tile[kTile][kTile + 1];
  const int32_t tx = threadIdx.x, ty = threadIdx.y;
  // Column offset within the tile of lane k of this thread.
  auto col = [&](int32_t k) { return kPair ? kLanes * tx + k : tx + 32 * k; };
  auto written = [&](int32_t r, int32_t c) { return c < n && (lower_to_upper ? c > r : c < r); };
  for (int32_t r0 = blockIdx.y * kTile; r0 < n; r0 += gridDim.y * kTile) {
    for (int32_t c0 = blockIdx.x * kTile; c0 < n; c0 += gridDim.x * kTile) {
      if (lower_to_upper ? c0 < r0 : c0 > r0) continue;
      const bool whole = r0 + kTile <= n && c0 + kTile <= n;
      // Read the mirror tile: rows c0.., columns r0.. of the matrix.
      if (whole) {
        Real v[kIters][kLanes];
#pragma unroll
        for (int32_t i = 0; i < kIters; ++i) {
          const Real* row = data + static_cast<int64_t>(c0 + ty + i * kCuTileRows) * stride + r0;
          if constexpr (kPair) {
            const float2 p = *reinterpret_cast<const float2*>(row + col(0));
            v[i][0] = p.x;
            v[i][1] = p.y;
          } else {
#pragma unroll
            for (int32_t k = 0; k < kLanes; ++k) v[i][k] = row[col(k)];
          }
        }
#pragma unroll
        for (int32_t i = 0; i < kIters; ++i)
#pragma unroll
          for (int32_t k = 0; k < kLanes; ++k) tile[ty + i * kCuTileRows][col(k)] = v[i][k];
      } else {
        for (int32_t i = 0; i < kIters; ++i) {
          const int32_t j = ty + i * kCuTileRows, sr = c0 + j;
          if (sr >= n) break;
          const Real* row = data + static_cast<int64_t>(sr) * stride + r0;
          for (int32_t k = 0; k < kLanes; ++k)
            if (r0 + col(k) < n) tile[j][col(k)] = row[col(k)];
        }
      }
      __syncthreads();
      // Write the tile: rows r0.., columns c0..; a diagonal tile only on the written side.
      if (whole && r0 != c0) {
#pragma unroll
        for (int32_t i = 0; i < kIters; ++i) {
          const int32_t j = ty + i * kCuTileRows;
          Real* row = data + static_cast<int64_t>(r0 + j) * stride + c0;
          if constexpr (kPair) {
            *reinterpret_cast<float2*>(row + col(0)) =
                make_float2(tile[col(0)][j], tile[col(1)][j]);
          } else {
#pragma unroll
            for (int32_t k = 0; k < kLanes; ++k) row[col(k)] = tile[col(k)][j];
          }
        }
      } else {
        for (int32_t i = 0; i < kIters; ++i) {
          const int32_t j = ty + i * kCuTileRows, r = r0 + j;
          if (r >= n) break;
          Real* row = data + static_cast<int64_t>(r) * stride + c0;
          for (int32_t k = 0; k < kLanes; ++k)
            if (written(r, c0 + col(k))) row[col(k)] = tile[col(k)][j];
        }
      }
      __syncthreads();
    }
  }
}

template <typename Real>
__global__ void SetZeroAboveDiagKernel(MatrixDim d, Real* data) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    Real* row = data + static_cast<int64_t>(r) * d.stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      if (c > r) row[c] = Real(0);
  }
}

// out[i] = data(pairs[i]) (0 for a pair outside the matrix).
template <typename Real>
__global__ void LookupKernel(MatrixDim d, const Real* data, const int32_t* pairs, int32_t num,
                             Real* out) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < num; i += gridDim.x * blockDim.x) {
    const int32_t r = pairs[2 * static_cast<int64_t>(i)];
    const int32_t c = pairs[2 * static_cast<int64_t>(i) + 1];
    out[i] = InRange(r, d.rows) && InRange(c, d.cols) ? data[static_cast<int64_t>(r) * d.stride + c]
                                                      : Real(0);
  }
}

// data(pairs[i]) += alpha * input[i]; atomic because pairs may repeat.
template <typename Real>
__global__ void AddElementsKernel(MatrixDim d, Real alpha, const int32_t* pairs, const Real* input,
                                  int32_t num, Real* data) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < num; i += gridDim.x * blockDim.x) {
    const int32_t r = pairs[2 * static_cast<int64_t>(i)];
    const int32_t c = pairs[2 * static_cast<int64_t>(i) + 1];
    if (InRange(r, d.rows) && InRange(c, d.cols))
      atomicAdd(data + static_cast<int64_t>(r) * d.stride + c, alpha * input[i]);
  }
}

// data(r, cols[r]) += alpha; one element per row, so no two threads share an element.
template <typename Real>
__global__ void AddToElementsKernel(MatrixDim d, Real alpha, const int32_t* cols, Real* data) {
  for (int32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < d.rows; r += gridDim.x * blockDim.x) {
    const int32_t c = cols[r];
    if (InRange(c, d.cols)) data[static_cast<int64_t>(r) * d.stride + c] += alpha;
  }
}

template <typename Real>
__global__ void EqualElementMaskKernel(MatrixDim d, const Real* a, const Real* b, int32_t b_stride,
                                       Real* mask, int32_t mask_stride) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    const Real* arow = a + static_cast<int64_t>(r) * d.stride;
    const Real* brow = b + static_cast<int64_t>(r) * b_stride;
    Real* out = mask + static_cast<int64_t>(r) * mask_stride;
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      out[c] = arow[c] == brow[c] ? Real(1) : Real(0);
  }
}

// A 1D grid for `n` independent items, capped (the kernels grid-stride past the cap).
unsigned Blocks1D(int64_t n) {
  const int64_t want = (n + kCuElementwiseThreads - 1) / kCuElementwiseThreads;
  return static_cast<unsigned>(want < 4096 ? want : 4096);
}

bool Empty(MatrixDim d) { return d.rows == 0 || d.cols == 0; }

// Matrices of at least this many 16-byte units launch a quarter of the threads for the row
// gathers, each taking kGatherUnroll units per row (enough threads remain to fill an H100).
constexpr int64_t kGatherUnrollMinUnits = int64_t{1} << 21;

// Whether GatherRowsKernel takes kGatherUnroll units per thread and row (large matrices).
template <typename Real>
bool GatherUnrolled(MatrixDim d) {
  return static_cast<int64_t>(d.rows) * internal::VecUnits<Real>(d.cols) >= kGatherUnrollMinUnits;
}

// Launch shape of GatherRowsKernel: the element-wise shape over a row's 16-byte units, with
// `per_thread` units per thread.
template <typename Real>
internal::ElementwiseShape GatherShape(MatrixDim d, int64_t per_thread) {
  const int64_t units = internal::VecUnits<Real>(d.cols);
  const int64_t cols = (units + per_thread - 1) / per_thread;
  return internal::MakeElementwiseShape(MatrixDim{d.rows, static_cast<int32_t>(cols), 0});
}

template <RowGatherOp kOp, typename Real, typename Rows>
void LaunchGatherRowsOp(MatrixDim d, Real alpha, Rows rows, Real* dst, CuStream stream) {
  if (GatherUnrolled<Real>(d)) {
    const internal::ElementwiseShape s = GatherShape<Real>(d, kGatherUnroll);
    internal::Launch<GatherRowsKernel<kOp, kGatherUnroll, Real, Rows>>(
        CUCTX_LAUNCH_SITE("GatherRowsKernel"), s.grid, s.block, 0, stream, d, alpha, rows, dst);
  } else {
    const internal::ElementwiseShape s = GatherShape<Real>(d, 1);
    internal::Launch<GatherRowsKernel<kOp, 1, Real, Rows>>(
        CUCTX_LAUNCH_SITE("GatherRowsKernel"), s.grid, s.block, 0, stream, d, alpha, rows, dst);
  }
}

// Launches GatherRowsKernel with the op as a template argument (no per-element switch).
template <typename Real, typename Rows>
void LaunchGatherRowsKernel(MatrixDim d, RowGatherOp op, Real alpha, Rows rows, Real* dst,
                            CuStream stream) {
  switch (op) {
    case RowGatherOp::kCopy:
      return LaunchGatherRowsOp<RowGatherOp::kCopy>(d, alpha, rows, dst, stream);
    case RowGatherOp::kAdd:
      return LaunchGatherRowsOp<RowGatherOp::kAdd>(d, alpha, rows, dst, stream);
    case RowGatherOp::kMul:
      return LaunchGatherRowsOp<RowGatherOp::kMul>(d, alpha, rows, dst, stream);
  }
}

template <typename Real>
void GatherRows(MatrixDim d, RowGatherOp op, Real alpha, const Real* src, int32_t src_rows,
                int32_t src_stride, const int32_t* d_indexes, Real* dst, CuStream stream) {
  if (Empty(d)) return;
  LaunchGatherRowsKernel(
      d, op, alpha, IndexedRows<const Real*>{src, src_rows, src_stride, d_indexes}, dst, stream);
}

template <typename Real>
void GatherRowPtrs(MatrixDim d, RowGatherOp op, Real alpha, const Real* const* d_src_rows,
                   Real* dst, CuStream stream) {
  if (Empty(d)) return;
  LaunchGatherRowsKernel(d, op, alpha, PointerRows<const Real*>{d_src_rows}, dst, stream);
}

template <typename Real>
void AddToRows(MatrixDim d, Real alpha, const Real* src, const int32_t* d_indexes, int32_t dst_rows,
               int32_t dst_stride, Real* dst, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<ScatterRowsKernel<Real, IndexedRows<Real*>>>(
      CUCTX_LAUNCH_SITE("ScatterRowsKernel(indexes)"), s.grid, s.block, 0, stream, d, src, true,
      alpha, IndexedRows<Real*>{dst, dst_rows, dst_stride, d_indexes});
}

template <typename Real>
void ScatterRowPtrs(MatrixDim d, bool add, Real alpha, const Real* src, Real* const* d_dst_rows,
                    CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<ScatterRowsKernel<Real, PointerRows<Real*>>>(
      CUCTX_LAUNCH_SITE("ScatterRowsKernel(pointers)"), s.grid, s.block, 0, stream, d, src, add,
      alpha, PointerRows<Real*>{d_dst_rows});
}

// GatherColsStagedKernel needs the source row in shared memory, and pays for reading all of it:
// used when it fits, when most of it is likely to be gathered (at most kGatherColsStagedRatio
// source columns per destination column) and when there are rows enough to spread over the SMs.
constexpr int32_t kGatherColsStagedRatio = 4;
constexpr int32_t kGatherColsStagedMinRows = 64;

template <typename Real>
void GatherCols(MatrixDim d, const Real* src, int32_t src_cols, int32_t src_stride,
                const int32_t* d_indexes, bool add, Real* dst, CuStream stream) {
  if (Empty(d)) return;
  const size_t staged_bytes = static_cast<size_t>(src_cols) * sizeof(Real);
  if (staged_bytes <= kGatherColsStagedBytes &&
      static_cast<int64_t>(src_cols) <= static_cast<int64_t>(kGatherColsStagedRatio) * d.cols &&
      d.rows >= kGatherColsStagedMinRows) {
    const unsigned grid = static_cast<unsigned>(d.rows < 65535 ? d.rows : 65535);
    internal::Launch<GatherColsStagedKernel<Real>>(
        CUCTX_LAUNCH_SITE("GatherColsStagedKernel"), grid, kGatherColsThreads, staged_bytes, stream,
        d, src, src_cols, src_stride, d_indexes, add, dst);
    return;
  }
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<GatherColsKernel<Real>>(CUCTX_LAUNCH_SITE("GatherColsKernel"), s.grid, s.block,
                                           0, stream, d, src, src_cols, src_stride, d_indexes, add,
                                           dst);
}

template <typename Real>
void AddRowRanges(MatrixDim d, const Real* src, int32_t src_rows, int32_t src_stride,
                  const int32_t* d_pairs, Real* dst, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s =
      GatherShape<Real>(d, GatherUnrolled<Real>(d) ? kGatherUnroll : 1);
  internal::Launch<AddRowRangesKernel<Real>>(CUCTX_LAUNCH_SITE("AddRowRangesKernel"), s.grid,
                                             s.block, 0, stream, d, src, src_rows, src_stride,
                                             d_pairs, dst);
}

template <typename Real>
void SumColumnRanges(MatrixDim d, const Real* src, int32_t src_cols, int32_t src_stride,
                     const int32_t* d_pairs, Real* dst, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<SumColumnRangesKernel<Real>>(CUCTX_LAUNCH_SITE("SumColumnRangesKernel"), s.grid,
                                                s.block, 0, stream, d, src, src_cols, src_stride,
                                                d_pairs, dst);
}

template <typename Real>
void CopyTriangle(MatrixDim d, bool lower_to_upper, Real* data, CuStream stream) {
  if (d.rows <= 1) return;
  auto grid_of = [&](int64_t tile) {
    const int64_t tiles = (static_cast<int64_t>(d.rows) + tile - 1) / tile;
    const unsigned g = static_cast<unsigned>(tiles < 65535 ? tiles : 65535);
    return dim3(g, g, 1);
  };
  constexpr int64_t kTile = kTriangleTileBytes / sizeof(Real);
  const dim3 grid = grid_of(kTile), block(32, kCuTileRows, 1);
  if constexpr (sizeof(Real) == 4) {
    const int64_t wide_tiles = static_cast<int64_t>(grid.x) * (grid.x + 1) / 2;
    if (wide_tiles < kTriangleMinWideTiles) {
      internal::Launch<CopyTriangleKernel<Real, false, kTriangleTileBytes / 2>>(
          CUCTX_LAUNCH_SITE("CopyTriangleKernel<Real, false, narrow>"), grid_of(kTile / 2), block,
          0, stream, d.rows, d.stride, lower_to_upper, data);
      return;
    }
    if (reinterpret_cast<uintptr_t>(data) % 8 == 0 && d.stride % 2 == 0) {
      internal::Launch<CopyTriangleKernel<Real, true>>(
          CUCTX_LAUNCH_SITE("CopyTriangleKernel<Real, true>"), grid, block, 0, stream, d.rows,
          d.stride, lower_to_upper, data);
      return;
    }
  }
  internal::Launch<CopyTriangleKernel<Real, false>>(
      CUCTX_LAUNCH_SITE("CopyTriangleKernel<Real, false>"), grid, block, 0, stream, d.rows,
      d.stride, lower_to_upper, data);
}

template <typename Real>
void SetZeroAboveDiag(MatrixDim d, Real* data, CuStream stream) {
  if (d.rows == 0 || d.cols <= 1) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<SetZeroAboveDiagKernel<Real>>(CUCTX_LAUNCH_SITE("SetZeroAboveDiagKernel"),
                                                 s.grid, s.block, 0, stream, d, data);
}

template <typename Real>
void Lookup(MatrixDim d, const Real* data, const int32_t* d_pairs, int32_t num, Real* d_out,
            CuStream stream) {
  if (num == 0) return;
  internal::Launch<LookupKernel<Real>>(CUCTX_LAUNCH_SITE("LookupKernel"), Blocks1D(num),
                                       kCuElementwiseThreads, 0, stream, d, data, d_pairs, num,
                                       d_out);
}

template <typename Real>
void AddElements(MatrixDim d, Real alpha, const int32_t* d_pairs, const Real* d_input, int32_t num,
                 Real* data, CuStream stream) {
  if (num == 0) return;
  internal::Launch<AddElementsKernel<Real>>(CUCTX_LAUNCH_SITE("AddElementsKernel"), Blocks1D(num),
                                            kCuElementwiseThreads, 0, stream, d, alpha, d_pairs,
                                            d_input, num, data);
}

template <typename Real>
void AddToElements(MatrixDim d, Real alpha, const int32_t* d_cols, Real* data, CuStream stream) {
  if (Empty(d)) return;
  internal::Launch<AddToElementsKernel<Real>>(CUCTX_LAUNCH_SITE("AddToElementsKernel"),
                                              Blocks1D(d.rows), kCuElementwiseThreads, 0, stream, d,
                                              alpha, d_cols, data);
}

template <typename Real>
void EqualElementMask(MatrixDim d, const Real* a, const Real* b, int32_t b_stride, Real* mask,
                      int32_t mask_stride, CuStream stream) {
  if (Empty(d)) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<EqualElementMaskKernel<Real>>(CUCTX_LAUNCH_SITE("EqualElementMaskKernel"),
                                                 s.grid, s.block, 0, stream, d, a, b, b_stride,
                                                 mask, mask_stride);
}

}  // namespace

void LaunchGatherRows(MatrixDim d, RowGatherOp op, float alpha, const float* src, int32_t sr,
                      int32_t ss, const int32_t* idx, float* dst, CuStream st) {
  GatherRows(d, op, alpha, src, sr, ss, idx, dst, st);
}
void LaunchGatherRows(MatrixDim d, RowGatherOp op, double alpha, const double* src, int32_t sr,
                      int32_t ss, const int32_t* idx, double* dst, CuStream st) {
  GatherRows(d, op, alpha, src, sr, ss, idx, dst, st);
}
void LaunchGatherRowPtrs(MatrixDim d, RowGatherOp op, float alpha, const float* const* rows,
                         float* dst, CuStream st) {
  GatherRowPtrs(d, op, alpha, rows, dst, st);
}
void LaunchGatherRowPtrs(MatrixDim d, RowGatherOp op, double alpha, const double* const* rows,
                         double* dst, CuStream st) {
  GatherRowPtrs(d, op, alpha, rows, dst, st);
}
void LaunchAddToRows(MatrixDim d, float alpha, const float* src, const int32_t* idx, int32_t dr,
                     int32_t ds, float* dst, CuStream st) {
  AddToRows(d, alpha, src, idx, dr, ds, dst, st);
}
void LaunchAddToRows(MatrixDim d, double alpha, const double* src, const int32_t* idx, int32_t dr,
                     int32_t ds, double* dst, CuStream st) {
  AddToRows(d, alpha, src, idx, dr, ds, dst, st);
}
void LaunchScatterRowPtrs(MatrixDim d, bool add, float alpha, const float* src, float* const* rows,
                          CuStream st) {
  ScatterRowPtrs(d, add, alpha, src, rows, st);
}
void LaunchScatterRowPtrs(MatrixDim d, bool add, double alpha, const double* src,
                          double* const* rows, CuStream st) {
  ScatterRowPtrs(d, add, alpha, src, rows, st);
}
void LaunchGatherCols(MatrixDim d, const float* src, int32_t sc, int32_t ss, const int32_t* idx,
                      bool add, float* dst, CuStream st) {
  GatherCols(d, src, sc, ss, idx, add, dst, st);
}
void LaunchGatherCols(MatrixDim d, const double* src, int32_t sc, int32_t ss, const int32_t* idx,
                      bool add, double* dst, CuStream st) {
  GatherCols(d, src, sc, ss, idx, add, dst, st);
}
void LaunchAddRowRanges(MatrixDim d, const float* src, int32_t sr, int32_t ss, const int32_t* pairs,
                        float* dst, CuStream st) {
  AddRowRanges(d, src, sr, ss, pairs, dst, st);
}
void LaunchAddRowRanges(MatrixDim d, const double* src, int32_t sr, int32_t ss,
                        const int32_t* pairs, double* dst, CuStream st) {
  AddRowRanges(d, src, sr, ss, pairs, dst, st);
}
void LaunchSumColumnRanges(MatrixDim d, const float* src, int32_t sc, int32_t ss,
                           const int32_t* pairs, float* dst, CuStream st) {
  SumColumnRanges(d, src, sc, ss, pairs, dst, st);
}
void LaunchSumColumnRanges(MatrixDim d, const double* src, int32_t sc, int32_t ss,
                           const int32_t* pairs, double* dst, CuStream st) {
  SumColumnRanges(d, src, sc, ss, pairs, dst, st);
}
void LaunchCopyTriangle(MatrixDim d, bool lower_to_upper, float* data, CuStream st) {
  CopyTriangle(d, lower_to_upper, data, st);
}
void LaunchCopyTriangle(MatrixDim d, bool lower_to_upper, double* data, CuStream st) {
  CopyTriangle(d, lower_to_upper, data, st);
}
void LaunchSetZeroAboveDiag(MatrixDim d, float* data, CuStream st) {
  SetZeroAboveDiag(d, data, st);
}
void LaunchSetZeroAboveDiag(MatrixDim d, double* data, CuStream st) {
  SetZeroAboveDiag(d, data, st);
}
void LaunchLookup(MatrixDim d, const float* data, const int32_t* pairs, int32_t num, float* out,
                  CuStream st) {
  Lookup(d, data, pairs, num, out, st);
}
void LaunchLookup(MatrixDim d, const double* data, const int32_t* pairs, int32_t num, double* out,
                  CuStream st) {
  Lookup(d, data, pairs, num, out, st);
}
void LaunchAddElements(MatrixDim d, float alpha, const int32_t* pairs, const float* input,
                       int32_t num, float* data, CuStream st) {
  AddElements(d, alpha, pairs, input, num, data, st);
}
void LaunchAddElements(MatrixDim d, double alpha, const int32_t* pairs, const double* input,
                       int32_t num, double* data, CuStream st) {
  AddElements(d, alpha, pairs, input, num, data, st);
}
void LaunchAddToElements(MatrixDim d, float alpha, const int32_t* cols, float* data, CuStream st) {
  AddToElements(d, alpha, cols, data, st);
}
void LaunchAddToElements(MatrixDim d, double alpha, const int32_t* cols, double* data,
                         CuStream st) {
  AddToElements(d, alpha, cols, data, st);
}
void LaunchEqualElementMask(MatrixDim d, const float* a, const float* b, int32_t bs, float* mask,
                            int32_t ms, CuStream st) {
  EqualElementMask(d, a, b, bs, mask, ms, st);
}
void LaunchEqualElementMask(MatrixDim d, const double* a, const double* b, int32_t bs, double* mask,
                            int32_t ms, CuStream st) {
  EqualElementMask(d, a, b, bs, mask, ms, st);
}

}  // namespace cuctx
