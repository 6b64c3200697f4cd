// cudamatrix/cu-kernels-lstm.cu: kernels of cu::ComputeLstmNonlinearity and
// cu::BackpropLstmNonlinearity.
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

using internal::DevExp;
using internal::DevTanh;

// A block is 32 threads along the cells (one warp, so each load and store of a warp is one
// contiguous run of a row) by 8 rows. A forward thread handles V adjacent cells with one V-wide
// (16-byte where possible) load per matrix and row when the cell count, strides and pointers allow
// (see Packable): scalar accesses left the forward kernel at 0.7 of the memory bandwidth on an
// H100. The backward pass with column sums runs one wave of resident blocks that grid-stride over
// the rows (more blocks only grow the partials; fewer leave the memory system idle).
constexpr int kThreadsX = 32;
constexpr int kRowsPerBlock = 8;
constexpr int kThreadsPerBlock = kThreadsX * kRowsPerBlock;
// Column sums per cell: 3 parameter derivatives, 5 value sums, 5 derivative sums.
constexpr int kNumSums = 13;
// Cells per thread of the backward pass. One (scalar loads) measured faster than two on an H100
// (cu-matrix-bench --only=lstm, ratio to cudaMemcpy D2D: float 0.80 / 0.90 against 0.75 / 0.85 at
// 2048 / 16384 x 1024 rows, double 0.83 / 0.90 against 0.72 / 0.78): the doubled column-sum
// accumulators cost more occupancy than the wider accesses gain.
constexpr int kBackpropWidth = 1;

template <typename Real, int V>
struct alignas(sizeof(Real) * V) Pack {
  Real v[V];
};

template <typename Real, int V>
__device__ __forceinline__ Pack<Real, V> LoadPack(const Real* p) {
  return *reinterpret_cast<const Pack<Real, V>*>(p);
}
template <typename Real, int V>
__device__ __forceinline__ void StorePack(Real* p, const Pack<Real, V>& x) {
  *reinterpret_cast<Pack<Real, V>*>(p) = x;
}

template <typename Real>
__device__ Real Sigmoid(Real x) {
  // exp of a non-positive argument only, so neither branch overflows.
  if (x > 0) return Real(1) / (Real(1) + DevExp(-x));
  const Real e = DevExp(x);
  return e / (e + Real(1));
}

unsigned CellBlocks(int32_t cell_dim, int width) {
  const int per_block = kThreadsX * width;
  return static_cast<unsigned>((cell_dim + per_block - 1) / per_block);
}

// True when V-wide accesses at column offsets that are multiples of V are aligned for p with
// row stride `stride` (p may be nullptr: an absent matrix allows any width).
template <typename Real>
bool Packable(int width, const Real* p, int32_t stride) {
  if (p == nullptr) return true;
  return reinterpret_cast<uintptr_t>(p) % (sizeof(Real) * width) == 0 && stride % width == 0;
}

template <typename Real, int V>
__global__ void __launch_bounds__(kThreadsPerBlock)
    LstmForwardKernel(int32_t rows, int32_t C, bool dropout, const Real* in, int32_t in_stride,
                      const Real* params, int32_t ps, Real* out, int32_t out_stride) {
  // C is a multiple of V, so a thread's V cells are all inside or all outside.
  const int32_t c = (blockIdx.x * kThreadsX + threadIdx.x) * V;
  if (c >= C) return;
  Real w_ic[V], w_fc[V], w_oc[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    w_ic[v] = params[c + v];
    w_fc[v] = params[ps + c + v];
    w_oc[v] = params[2 * static_cast<size_t>(ps) + c + v];
  }
  for (int32_t r = blockIdx.y * kRowsPerBlock + threadIdx.y; r < rows;
       r += gridDim.y * kRowsPerBlock) {
    const Real* x = in + static_cast<size_t>(r) * in_stride;
    Real i_scale = 1, f_scale = 1, o_scale = 1;
    if (dropout) {
      i_scale = x[5 * C];
      f_scale = x[5 * C + 1];
      o_scale = x[5 * C + 2];
    }
    const Pack<Real, V> xi = LoadPack<Real, V>(x + c), xf = LoadPack<Real, V>(x + C + c),
                        xg = LoadPack<Real, V>(x + 2 * C + c),
                        xo = LoadPack<Real, V>(x + 3 * C + c),
                        xc = LoadPack<Real, V>(x + 4 * C + c);
    Pack<Real, V> yc, ym;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const Real c_prev = xc.v[v];
      const Real i_t = Sigmoid(xi.v[v] + w_ic[v] * c_prev);
      const Real f_t = Sigmoid(xf.v[v] + w_fc[v] * c_prev);
      const Real c_t = f_t * f_scale * c_prev + i_t * i_scale * DevTanh(xg.v[v]);
      const Real o_t = Sigmoid(xo.v[v] + w_oc[v] * c_t);
      yc.v[v] = c_t;
      ym.v[v] = o_t * o_scale * DevTanh(c_t);
    }
    Real* y = out + static_cast<size_t>(r) * out_stride;
    StorePack<Real, V>(y + c, yc);
    StorePack<Real, V>(y + C + c, ym);
  }
}

template <typename Real, int V, bool kSums>
__global__ void __launch_bounds__(kThreadsPerBlock)
    LstmBackpropKernel(LstmBackpropArgs<Real> a, double* partials) {
  const int32_t C = a.cell_dim;
  const int32_t c = (blockIdx.x * kThreadsX + threadIdx.x) * V;
  const bool active = c < C;  // C is a multiple of V
  double sums[kNumSums][V];
#pragma unroll
  for (int k = 0; k < kNumSums; ++k)
#pragma unroll
    for (int v = 0; v < V; ++v) sums[k][v] = 0;
  if (active) {
    Real w_ic[V], w_fc[V], w_oc[V];
    // Self-repair of nonlinearity i is on for a cell when its average derivative so far is below
    // threshold i; it then pulls the input towards 0 with strength scale i.
    Real repair[5][V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      w_ic[v] = a.params[c + v];
      w_fc[v] = a.params[a.params_stride + c + v];
      w_oc[v] = a.params[2 * static_cast<size_t>(a.params_stride) + c + v];
#pragma unroll
      for (int i = 0; i < 5; ++i)
        repair[i][v] =
            a.deriv_sum_in[static_cast<size_t>(i) * a.deriv_sum_in_stride + c + v] / a.count <
                    static_cast<double>(a.self_repair_config[i])
                ? a.self_repair_config[5 + i]
                : Real(0);
    }
    for (int32_t r = blockIdx.y * kRowsPerBlock + threadIdx.y; r < a.rows;
         r += gridDim.y * kRowsPerBlock) {
      const Real* x = a.input + static_cast<size_t>(r) * a.input_stride;
      const Real* dy = a.output_deriv + static_cast<size_t>(r) * a.output_deriv_stride;
      Real i_scale = 1, f_scale = 1, o_scale = 1;
      if (a.dropout) {
        i_scale = x[5 * C];
        f_scale = x[5 * C + 1];
        o_scale = x[5 * C + 2];
      }
      const Pack<Real, V> xi = LoadPack<Real, V>(x + c), xf = LoadPack<Real, V>(x + C + c),
                          xg = LoadPack<Real, V>(x + 2 * C + c),
                          xo = LoadPack<Real, V>(x + 3 * C + c),
                          xc = LoadPack<Real, V>(x + 4 * C + c), dyc = LoadPack<Real, V>(dy + c),
                          dym = LoadPack<Real, V>(dy + C + c);
      Pack<Real, V> d0, d1, d2, d3, d4;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const Real c_prev = xc.v[v];
        const Real i_t = Sigmoid(xi.v[v] + w_ic[v] * c_prev);
        const Real f_t = Sigmoid(xf.v[v] + w_fc[v] * c_prev);
        const Real g = DevTanh(xg.v[v]);
        const Real c_t = f_t * f_scale * c_prev + i_t * i_scale * g;
        const Real o_t = Sigmoid(xo.v[v] + w_oc[v] * c_t);
        const Real h = DevTanh(c_t);
        const Real dc_out = dyc.v[v], dm = dym.v[v];
        const Real i_d = i_t * (1 - i_t), f_d = f_t * (1 - f_t), g_d = 1 - g * g,
                   o_d = o_t * (1 - o_t), h_d = 1 - h * h;
        const Real do_in = o_d * (o_scale * h * dm) - (2 * o_t - 1) * repair[3][v];
        const Real dc = h_d * (o_t * o_scale * dm) + dc_out + do_in * w_oc[v] - h * repair[4][v];
        const Real df_in = f_d * (dc * f_scale * c_prev) - (2 * f_t - 1) * repair[1][v];
        const Real di_in = i_d * (dc * i_scale * g) - (2 * i_t - 1) * repair[0][v];
        d0.v[v] = di_in;
        d1.v[v] = df_in;
        d2.v[v] = g_d * (i_t * i_scale * dc) - g * repair[2][v];
        d3.v[v] = do_in;
        d4.v[v] = w_ic[v] * di_in + w_fc[v] * df_in + f_t * f_scale * dc;
        if constexpr (kSums) {
          sums[0][v] += c_prev * di_in;
          sums[1][v] += c_prev * df_in;
          sums[2][v] += c_t * do_in;
          sums[3][v] += i_t;
          sums[4][v] += f_t;
          sums[5][v] += g;
          sums[6][v] += o_t;
          sums[7][v] += h;
          sums[8][v] += i_d;
          sums[9][v] += f_d;
          sums[10][v] += g_d;
          sums[11][v] += o_d;
          sums[12][v] += h_d;
        }
      }
      if (a.input_deriv != nullptr) {
        Real* dx = a.input_deriv + static_cast<size_t>(r) * a.input_deriv_stride;
        StorePack<Real, V>(dx + c, d0);
        StorePack<Real, V>(dx + C + c, d1);
        StorePack<Real, V>(dx + 2 * C + c, d2);
        StorePack<Real, V>(dx + 3 * C + c, d3);
        StorePack<Real, V>(dx + 4 * C + c, d4);
      }
    }
  }
  if constexpr (kSums) {
    // Block reduction over the 8 rows of threads, one sum at a time (a small shared buffer keeps
    // occupancy up), then one partial per (block row, sum, cell), added in row order.
    constexpr int kCols = kThreadsX * V;
    __shared__ double sh[kRowsPerBlock][kCols];
    const int tid = threadIdx.y * kThreadsX + threadIdx.x;
    const int32_t cell = blockIdx.x * kCols + tid;
#pragma unroll
    for (int k = 0; k < kNumSums; ++k) {
#pragma unroll
      for (int v = 0; v < V; ++v) sh[threadIdx.y][threadIdx.x * V + v] = sums[k][v];
      __syncthreads();
      if (tid < kCols && cell < C) {
        double s = 0;
#pragma unroll
        for (int y = 0; y < kRowsPerBlock; ++y) s += sh[y][tid];
        partials[(static_cast<size_t>(blockIdx.y) * kNumSums + k) * C + cell] = s;
      }
      __syncthreads();
    }
  }
}

// One output column sum (sum k of cell c, j = k * C + c) per column of 32 x 8 threads: the 8
// threads add every 8th row block's partial in order, then the first adds their 8 results in
// order (fixed order: deterministic), and writes / adds the output.
template <typename Real>
__global__ void __launch_bounds__(kThreadsPerBlock)
    LstmBackpropSumsKernel(LstmBackpropArgs<Real> a, const double* partials, int32_t row_blocks) {
  const int32_t C = a.cell_dim;
  const int64_t n = static_cast<int64_t>(kNumSums) * C;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kThreadsX + threadIdx.x;
  const bool active = j < n;
  double s = 0;
  if (active)
    for (int32_t b = threadIdx.y; b < row_blocks; b += kRowsPerBlock)
      s += partials[static_cast<size_t>(b) * n + j];
  __shared__ double sh[kRowsPerBlock][kThreadsX];
  sh[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || !active) return;
  double total = 0;
#pragma unroll
  for (int y = 0; y < kRowsPerBlock; ++y) total += sh[y][threadIdx.x];
  const int k = static_cast<int>(j / C);
  const int32_t c = static_cast<int32_t>(j % C);
  if (k < 3) {
    a.params_deriv[static_cast<size_t>(k) * a.params_deriv_stride + c] = static_cast<Real>(total);
  } else if (k < 8) {
    a.value_sum_out[static_cast<size_t>(k - 3) * a.value_sum_out_stride + c] += total;
  } else {
    const int i = k - 8;
    // deriv_sum_out may be deriv_sum_in: the count is decided (by this same thread) before the
    // sum is updated.
    const double din = a.deriv_sum_in[static_cast<size_t>(i) * a.deriv_sum_in_stride + c];
    a.self_repair_sum_out[static_cast<size_t>(i) * a.self_repair_sum_out_stride + c] =
        din / a.count < static_cast<double>(a.self_repair_config[i]) ? static_cast<Real>(a.rows)
                                                                     : Real(0);
    a.deriv_sum_out[static_cast<size_t>(i) * a.deriv_sum_out_stride + c] += total;
  }
}

// Blocks of the summing backward kernel that fit on the device at once.
template <typename Real>
int64_t ResidentBackpropBlocks() {
  static const int per_sm = [] {
    int n = 0;
    CUCTX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &n, LstmBackpropKernel<Real, kBackpropWidth, true>, kThreadsPerBlock, 0));
    return n > 0 ? n : 1;
  }();
  int dev = 0, sms = 0;
  CUCTX_CUDA_CHECK(cudaGetDevice(&dev));
  CUCTX_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return static_cast<int64_t>(per_sm) * (sms > 0 ? sms : 1);
}

// Row blocks of the backward kernel. With column sums: one full wave of resident blocks (every
// block then grid-strides over many rows, so the partials stay small and no block waits in a
// tail); without: one block per 8 rows.
template <typename Real>
int32_t BackpropRowBlocks(int32_t rows, int32_t cell_dim, bool want_sums) {
  const int64_t needed = (static_cast<int64_t>(rows) + kRowsPerBlock - 1) / kRowsPerBlock;
  int64_t cap = 65535;
  if (want_sums) {
    const int64_t target = ResidentBackpropBlocks<Real>() / CellBlocks(cell_dim, kBackpropWidth);
    cap = target > 1 ? (target < 65535 ? target : 65535) : 1;
  }
  return static_cast<int32_t>(needed < cap ? needed : cap);
}

template <typename Real, int V>
void ForwardAt(int32_t rows, int32_t C, bool dropout, const Real* in, int32_t in_stride,
               const Real* params, int32_t ps, Real* out, int32_t out_stride, CuStream stream) {
  const int64_t row_blocks = (static_cast<int64_t>(rows) + kRowsPerBlock - 1) / kRowsPerBlock;
  const dim3 grid(CellBlocks(C, V), static_cast<unsigned>(row_blocks < 65535 ? row_blocks : 65535));
  internal::Launch<LstmForwardKernel<Real, V>>(
      CUCTX_LAUNCH_SITE("LstmForwardKernel<Real, V>"), grid, dim3(kThreadsX, kRowsPerBlock), 0,
      stream, rows, C, dropout, in, in_stride, params, ps, out, out_stride);
}

template <typename Real>
void Forward(int32_t rows, int32_t C, bool dropout, const Real* in, int32_t in_stride,
             const Real* params, int32_t ps, Real* out, int32_t out_stride, CuStream stream) {
  if (rows == 0 || C == 0) return;
  auto fits = [&](int w) {
    return C % w == 0 && Packable(w, in, in_stride) && Packable(w, out, out_stride);
  };
  // 16-byte accesses where possible.
  constexpr int kWide = 16 / sizeof(Real);
  if (fits(kWide))
    ForwardAt<Real, kWide>(rows, C, dropout, in, in_stride, params, ps, out, out_stride, stream);
  else if (kWide > 2 && fits(2))
    ForwardAt<Real, 2>(rows, C, dropout, in, in_stride, params, ps, out, out_stride, stream);
  else
    ForwardAt<Real, 1>(rows, C, dropout, in, in_stride, params, ps, out, out_stride, stream);
}

template <typename Real, int V>
void BackpropAt(const LstmBackpropArgs<Real>& a, double* partials, int32_t row_blocks, bool sums,
                CuStream stream) {
  const dim3 grid(CellBlocks(a.cell_dim, V), static_cast<unsigned>(row_blocks));
  const dim3 block(kThreadsX, kRowsPerBlock);
  if (sums)
    internal::Launch<LstmBackpropKernel<Real, V, true>>(
        CUCTX_LAUNCH_SITE("LstmBackpropKernel<Real, V, true>"), grid, block, 0, stream, a,
        partials);
  else
    internal::Launch<LstmBackpropKernel<Real, V, false>>(
        CUCTX_LAUNCH_SITE("LstmBackpropKernel<Real, V, false>"), grid, block, 0, stream, a,
        nullptr);
}

template <typename Real>
void Backprop(const LstmBackpropArgs<Real>& a, void* d_work, CuStream stream) {
  if (a.cell_dim == 0) return;
  const bool sums = a.params_deriv != nullptr;
  const int32_t row_blocks = BackpropRowBlocks<Real>(a.rows, a.cell_dim, sums);
  double* partials = static_cast<double*>(d_work);
  if (row_blocks > 0) {
    BackpropAt<Real, kBackpropWidth>(a, partials, row_blocks, sums, stream);
  }
  if (sums) {
    // Also with no rows: the outputs are still written (zero derivatives, zero counts).
    const int64_t n = static_cast<int64_t>(kNumSums) * a.cell_dim;
    internal::Launch<LstmBackpropSumsKernel<Real>>(
        CUCTX_LAUNCH_SITE("LstmBackpropSumsKernel"),
        static_cast<unsigned>((n + kThreadsX - 1) / kThreadsX), dim3(kThreadsX, kRowsPerBlock), 0,
        stream, a, partials, row_blocks);
  }
}

}  // namespace

size_t LstmBackpropWorkspaceBytes(int32_t rows, int32_t cell_dim, bool want_sums) {
  if (!want_sums || cell_dim == 0) return 0;
  // The caller does not say the element type: room for the larger of the two launches.
  const int32_t f = BackpropRowBlocks<float>(rows, cell_dim, true);
  const int32_t d = BackpropRowBlocks<double>(rows, cell_dim, true);
  return static_cast<size_t>(f > d ? f : d) * kNumSums * cell_dim * sizeof(double);
}

void LaunchLstmForward(int32_t rows, int32_t C, bool dropout, const float* in, int32_t in_stride,
                       const float* params, int32_t ps, float* out, int32_t out_stride,
                       CuStream s) {
  Forward(rows, C, dropout, in, in_stride, params, ps, out, out_stride, s);
}
void LaunchLstmForward(int32_t rows, int32_t C, bool dropout, const double* in, int32_t in_stride,
                       const double* params, int32_t ps, double* out, int32_t out_stride,
                       CuStream s) {
  Forward(rows, C, dropout, in, in_stride, params, ps, out, out_stride, s);
}
void LaunchLstmBackprop(const LstmBackpropArgs<float>& a, void* d_work, CuStream s) {
  Backprop(a, d_work, s);
}
void LaunchLstmBackprop(const LstmBackpropArgs<double>& a, void* d_work, CuStream s) {
  Backprop(a, d_work, s);
}

}  // namespace cuctx
