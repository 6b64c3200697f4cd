// cudamatrix/cu-kernels-lstm.cu: kernels of cu::ComputeLstmNonlinearity and
// cu::BackpropLstmNonlinearity.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

namespace cuctx {
namespace {

using internal::DevExp;
using internal::DevTanh;

// A block is 32 cells (one warp, so every load and store of a warp is one contiguous run of a row)
// by 8 rows.
constexpr int kCellsPerBlock = 32;
constexpr int kRowsPerBlock = 8;
// Column sums per cell: 3 parameter derivatives, 5 value sums, 5 derivative sums.
constexpr int kNumSums = 13;
// The backward pass with column sums runs about this many blocks (enough to fill an H100 several
// times over); fewer blocks would lose memory parallelism, more would grow the partial sums.
constexpr int64_t kBackpropTargetBlocks = 2048;

template <typename Real>
__device__ Real Sigmoid(Real x) {
  // exp of a non-positive argument only, so neither branch overflows.
  if (x > 0) return Real(1) / (Real(1) + DevExp(-x));
  const Real e = DevExp(x);
  return e / (e + Real(1));
}

unsigned CellBlocks(int32_t cell_dim) {
  return static_cast<unsigned>((cell_dim + kCellsPerBlock - 1) / kCellsPerBlock);
}

template <typename Real>
__global__ void LstmForwardKernel(int32_t rows, int32_t C, bool dropout, const Real* in,
                                  int32_t in_stride, const Real* params, int32_t ps, Real* out,
                                  int32_t out_stride) {
  const int32_t c = blockIdx.x * kCellsPerBlock + threadIdx.x;
  if (c >= C) return;
  const Real w_ic = params[c], w_fc = params[ps + c],
             w_oc = params[2 * static_cast<size_t>(ps) + c];
  for (int32_t r = blockIdx.y * kRowsPerBlock + threadIdx.y; r < rows;
       r += gridDim.y * kRowsPerBlock) {
    const Real* x = in + static_cast<size_t>(r) * in_stride;
    Real i_scale = 1, f_scale = 1, o_scale = 1;
    if (dropout) {
      i_scale = x[5 * C];
      f_scale = x[5 * C + 1];
      o_scale = x[5 * C + 2];
    }
    const Real c_prev = x[4 * C + c];
    const Real i_t = Sigmoid(x[c] + w_ic * c_prev);
    const Real f_t = Sigmoid(x[C + c] + w_fc * c_prev);
    const Real c_t = f_t * f_scale * c_prev + i_t * i_scale * DevTanh(x[2 * C + c]);
    const Real o_t = Sigmoid(x[3 * C + c] + w_oc * c_t);
    Real* y = out + static_cast<size_t>(r) * out_stride;
    y[c] = c_t;
    y[C + c] = o_t * o_scale * DevTanh(c_t);
  }
}

template <typename Real, bool kSums>
__global__ void LstmBackpropKernel(LstmBackpropArgs<Real> a, double* partials) {
  const int32_t C = a.cell_dim;
  const int32_t c = blockIdx.x * kCellsPerBlock + threadIdx.x;
  const bool active = c < C;
  double sums[kNumSums];
#pragma unroll
  for (int k = 0; k < kNumSums; ++k) sums[k] = 0;
  if (active) {
    const Real w_ic = a.params[c], w_fc = a.params[a.params_stride + c],
               w_oc = a.params[2 * static_cast<size_t>(a.params_stride) + c];
    // Self-repair of nonlinearity i is on for this cell when its average derivative so far is
    // below threshold i; it then pulls the input towards 0 with strength scale i.
    Real repair[5];
#pragma unroll
    for (int i = 0; i < 5; ++i)
      repair[i] = a.deriv_sum_in[static_cast<size_t>(i) * a.deriv_sum_in_stride + c] / a.count <
                          static_cast<double>(a.self_repair_config[i])
                      ? a.self_repair_config[5 + i]
                      : Real(0);
    for (int32_t r = blockIdx.y * kRowsPerBlock + threadIdx.y; r < a.rows;
         r += gridDim.y * kRowsPerBlock) {
      const Real* x = a.input + static_cast<size_t>(r) * a.input_stride;
      Real i_scale = 1, f_scale = 1, o_scale = 1;
      if (a.dropout) {
        i_scale = x[5 * C];
        f_scale = x[5 * C + 1];
        o_scale = x[5 * C + 2];
      }
      const Real c_prev = x[4 * C + c];
      const Real i_t = Sigmoid(x[c] + w_ic * c_prev);
      const Real f_t = Sigmoid(x[C + c] + w_fc * c_prev);
      const Real g = DevTanh(x[2 * C + c]);
      const Real c_t = f_t * f_scale * c_prev + i_t * i_scale * g;
      const Real o_t = Sigmoid(x[3 * C + c] + w_oc * c_t);
      const Real h = DevTanh(c_t);
      const Real* dy = a.output_deriv + static_cast<size_t>(r) * a.output_deriv_stride;
      const Real dc_out = dy[c], dm = dy[C + c];
      const Real i_d = i_t * (1 - i_t), f_d = f_t * (1 - f_t), g_d = 1 - g * g,
                 o_d = o_t * (1 - o_t), h_d = 1 - h * h;
      const Real do_in = o_d * (o_scale * h * dm) - (2 * o_t - 1) * repair[3];
      const Real dc = h_d * (o_t * o_scale * dm) + dc_out + do_in * w_oc - h * repair[4];
      const Real df_in = f_d * (dc * f_scale * c_prev) - (2 * f_t - 1) * repair[1];
      const Real di_in = i_d * (dc * i_scale * g) - (2 * i_t - 1) * repair[0];
      if (a.input_deriv != nullptr) {
        Real* dx = a.input_deriv + static_cast<size_t>(r) * a.input_deriv_stride;
        dx[c] = di_in;
        dx[C + c] = df_in;
        dx[2 * C + c] = g_d * (i_t * i_scale * dc) - g * repair[2];
        dx[3 * C + c] = do_in;
        dx[4 * C + c] = w_ic * di_in + w_fc * df_in + f_t * f_scale * dc;
      }
      if constexpr (kSums) {
        sums[0] += c_prev * di_in;
        sums[1] += c_prev * df_in;
        sums[2] += c_t * do_in;
        sums[3] += i_t;
        sums[4] += f_t;
        sums[5] += g;
        sums[6] += o_t;
        sums[7] += h;
        sums[8] += i_d;
        sums[9] += f_d;
        sums[10] += g_d;
        sums[11] += o_d;
        sums[12] += h_d;
      }
    }
  }
  if constexpr (kSums) {
    // Block reduction over the 8 rows of threads, then one partial per (block row, sum, cell).
    __shared__ double sh[kNumSums][kRowsPerBlock][kCellsPerBlock];
#pragma unroll
    for (int k = 0; k < kNumSums; ++k) sh[k][threadIdx.y][threadIdx.x] = sums[k];
    __syncthreads();
    const int tid = threadIdx.y * kCellsPerBlock + threadIdx.x;
    for (int j = tid; j < kNumSums * kCellsPerBlock; j += kRowsPerBlock * kCellsPerBlock) {
      const int k = j / kCellsPerBlock, x = j % kCellsPerBlock;
      const int32_t cell = blockIdx.x * kCellsPerBlock + x;
      if (cell >= C) continue;
      double s = 0;
#pragma unroll
      for (int y = 0; y < kRowsPerBlock; ++y) s += sh[k][y][x];
      partials[(static_cast<size_t>(blockIdx.y) * kNumSums + k) * C + cell] = s;
    }
  }
}

// One thread per cell: adds the partials of the row blocks in order and writes the outputs.
template <typename Real>
__global__ void LstmBackpropSumsKernel(LstmBackpropArgs<Real> a, const double* partials,
                                       int32_t row_blocks) {
  const int32_t C = a.cell_dim;
  const int32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  double s[kNumSums];
#pragma unroll
  for (int k = 0; k < kNumSums; ++k) s[k] = 0;
  for (int32_t b = 0; b < row_blocks; ++b)
#pragma unroll
    for (int k = 0; k < kNumSums; ++k)
      s[k] += partials[(static_cast<size_t>(b) * kNumSums + k) * C + c];
  for (int i = 0; i < 3; ++i)
    a.params_deriv[static_cast<size_t>(i) * a.params_deriv_stride + c] = static_cast<Real>(s[i]);
  for (int i = 0; i < 5; ++i) {
    a.value_sum_out[static_cast<size_t>(i) * a.value_sum_out_stride + c] += s[3 + i];
    // deriv_sum_out may be deriv_sum_in: the count is decided before the sum is updated.
    const double* din = a.deriv_sum_in + static_cast<size_t>(i) * a.deriv_sum_in_stride + c;
    a.self_repair_sum_out[static_cast<size_t>(i) * a.self_repair_sum_out_stride + c] =
        *din / a.count < static_cast<double>(a.self_repair_config[i]) ? static_cast<Real>(a.rows)
                                                                      : Real(0);
    a.deriv_sum_out[static_cast<size_t>(i) * a.deriv_sum_out_stride + c] += s[8 + i];
  }
}

int32_t BackpropRowBlocks(int32_t rows, int32_t cell_dim, bool want_sums) {
  const int64_t needed = (static_cast<int64_t>(rows) + kRowsPerBlock - 1) / kRowsPerBlock;
  int64_t cap = 65535;
  if (want_sums) {
    const int64_t target = kBackpropTargetBlocks / CellBlocks(cell_dim);
    cap = target > 1 ? target : 1;
  }
  return static_cast<int32_t>(needed < cap ? needed : cap);
}

template <typename Real>
void Forward(int32_t rows, int32_t C, bool dropout, const Real* in, int32_t in_stride,
             const Real* params, int32_t ps, Real* out, int32_t out_stride, CuStream stream) {
  if (rows == 0 || C == 0) return;
  const int64_t row_blocks = (static_cast<int64_t>(rows) + kRowsPerBlock - 1) / kRowsPerBlock;
  const dim3 grid(CellBlocks(C), static_cast<unsigned>(row_blocks < 65535 ? row_blocks : 65535));
  LstmForwardKernel<<<grid, dim3(kCellsPerBlock, kRowsPerBlock), 0, stream>>>(
      rows, C, dropout, in, in_stride, params, ps, out, out_stride);
  CUCTX_CUDA_CHECK_LAUNCH("LstmForwardKernel");
}

template <typename Real>
void Backprop(const LstmBackpropArgs<Real>& a, void* d_work, CuStream stream) {
  if (a.cell_dim == 0) return;
  const bool sums = a.params_deriv != nullptr;
  const int32_t row_blocks = BackpropRowBlocks(a.rows, a.cell_dim, sums);
  double* partials = static_cast<double*>(d_work);
  if (row_blocks > 0) {
    const dim3 grid(CellBlocks(a.cell_dim), static_cast<unsigned>(row_blocks));
    const dim3 block(kCellsPerBlock, kRowsPerBlock);
    if (sums)
      LstmBackpropKernel<Real, true><<<grid, block, 0, stream>>>(a, partials);
    else
      LstmBackpropKernel<Real, false><<<grid, block, 0, stream>>>(a, nullptr);
    CUCTX_CUDA_CHECK_LAUNCH("LstmBackpropKernel");
  }
  if (sums) {
    // Also with no rows: the outputs are still written (zero derivatives, zero counts).
    constexpr int kThreads = 256;
    LstmBackpropSumsKernel<<<(a.cell_dim + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
        a, partials, row_blocks);
    CUCTX_CUDA_CHECK_LAUNCH("LstmBackpropSumsKernel");
  }
}

}  // namespace

size_t LstmBackpropWorkspaceBytes(int32_t rows, int32_t cell_dim, bool want_sums) {
  if (!want_sums || cell_dim == 0) return 0;
  return static_cast<size_t>(BackpropRowBlocks(rows, cell_dim, true)) * kNumSums * cell_dim *
         sizeof(double);
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
