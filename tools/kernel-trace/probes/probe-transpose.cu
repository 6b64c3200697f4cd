// tools/kernel-trace/probes/probe-transpose.cu: five forms of the tiled transpose at Kaldi's
// speed-test shapes, each launched 300 times, to be timed by the CUPTI trace of this folder
// (CUTRACE=kernels, then durations.py). V0: the kernel before this probe (blocks stride over the
// tiles; a 64-bit index per element). V1: one tile per block, 32-bit indices stepped per row. V2:
// V0's loops with a pointer stepped per row and untested full tiles. V3: V2's body, one tile per
// block (the form cu-device-utils.cuh took). V4: V1 with the grid's x along dst rows. V3's result
// is checked against the host ("V3 bad" counts wrong elements). Build and run: see build.sh.
// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>
struct Dim {
  int32_t rows, cols, stride;
};
constexpr int TD = 32, TR = 8;
#define CK(x)                                             \
  do {                                                    \
    cudaError_t e = (x);                                  \
    if (e != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                           \
    }                                                     \
  } while (0)

// V0: the current cuctx kernel (grid-stride tiles, size_t index per element).
template <typename S, typename D>
__global__ void __launch_bounds__(256, 8) V0(Dim d, const S* src, int32_t ss, D* dst) {
  constexpr int K = TD / TR;
  __shared__ S tile[TD][TD + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int r0 = blockIdx.y * TD; r0 < d.rows; r0 += gridDim.y * TD)
    for (int c0 = blockIdx.x * TD; c0 < d.cols; c0 += gridDim.x * TD) {
      const int sc = r0 + tx;
#pragma unroll
      for (int k = 0; k < K; ++k) {
        int j = ty + k * TR, sr = c0 + j;
        if (sr < d.cols && sc < d.rows) tile[j][tx] = src[(size_t)sr * ss + sc];
      }
      __syncthreads();
      const int c = c0 + tx;
#pragma unroll
      for (int k = 0; k < K; ++k) {
        int j = ty + k * TR, r = r0 + j;
        if (r < d.rows && c < d.cols) dst[(size_t)r * d.stride + c] = (D)tile[tx][j];
      }
      __syncthreads();
    }
}
// V1: one tile per block, no loops over tiles, 32-bit indices stepped per row.
template <typename S, typename D>
__global__ void __launch_bounds__(256, 8) V1(Dim d, const S* src, int32_t ss, D* dst) {
  constexpr int K = TD / TR;
  __shared__ S tile[TD][TD + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r0 = blockIdx.y * TD, c0 = blockIdx.x * TD;
  const int sc = r0 + tx;
  int si = (c0 + ty) * ss + sc;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int sr = c0 + ty + k * TR;
    if (sr < d.cols && sc < d.rows) tile[ty + k * TR][tx] = src[si];
    si += TR * ss;
  }
  __syncthreads();
  const int c = c0 + tx;
  int di = (r0 + ty) * d.stride + c;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int r = r0 + ty + k * TR;
    if (r < d.rows && c < d.cols) dst[di] = (D)tile[tx][ty + k * TR];
    di += TR * d.stride;
  }
}
// V2: grid-stride tiles kept, pointers stepped per row, full tiles without per-element tests.
template <typename S, typename D>
__global__ void __launch_bounds__(256, 8) V2(Dim d, const S* src, int32_t ss, D* dst) {
  constexpr int K = TD / TR;
  __shared__ S tile[TD][TD + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int r0 = blockIdx.y * TD; r0 < d.rows; r0 += gridDim.y * TD)
    for (int c0 = blockIdx.x * TD; c0 < d.cols; c0 += gridDim.x * TD) {
      const bool full = r0 + TD <= d.rows && c0 + TD <= d.cols;
      const S* s = src + (size_t)(c0 + ty) * ss + (r0 + tx);
      const size_t sstep = (size_t)TR * ss;
      if (full) {
#pragma unroll
        for (int k = 0; k < K; ++k) tile[ty + k * TR][tx] = s[k * sstep];
      } else {
        const int sc = r0 + tx;
#pragma unroll
        for (int k = 0; k < K; ++k) {
          int sr = c0 + ty + k * TR;
          if (sr < d.cols && sc < d.rows) tile[ty + k * TR][tx] = s[k * sstep];
        }
      }
      __syncthreads();
      D* o = dst + (size_t)(r0 + ty) * d.stride + (c0 + tx);
      const size_t dstep = (size_t)TR * d.stride;
      if (full) {
#pragma unroll
        for (int k = 0; k < K; ++k) o[k * dstep] = (D)tile[tx][ty + k * TR];
      } else {
        const int c = c0 + tx;
#pragma unroll
        for (int k = 0; k < K; ++k) {
          int r = r0 + ty + k * TR;
          if (r < d.rows && c < d.cols) o[k * dstep] = (D)tile[tx][ty + k * TR];
        }
      }
      __syncthreads();
    }
}
// V3: V2's body, one tile per block (grid covers the matrix).
template <typename S, typename D>
__global__ void __launch_bounds__(256, 8) V3(Dim d, const S* src, int32_t ss, D* dst) {
  constexpr int K = TD / TR;
  __shared__ S tile[TD][TD + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r0 = blockIdx.y * TD, c0 = blockIdx.x * TD;
  const bool full = r0 + TD <= d.rows && c0 + TD <= d.cols;
  const S* s = src + (size_t)(c0 + ty) * ss + (r0 + tx);
  const size_t sstep = (size_t)TR * ss;
  if (full) {
#pragma unroll
    for (int k = 0; k < K; ++k) tile[ty + k * TR][tx] = s[k * sstep];
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int sr = c0 + ty + k * TR;
      if (sr < d.cols && r0 + tx < d.rows) tile[ty + k * TR][tx] = s[k * sstep];
    }
  }
  __syncthreads();
  D* o = dst + (size_t)(r0 + ty) * d.stride + (c0 + tx);
  const size_t dstep = (size_t)TR * d.stride;
  if (full) {
#pragma unroll
    for (int k = 0; k < K; ++k) o[k * dstep] = (D)tile[tx][ty + k * TR];
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int r = r0 + ty + k * TR;
      if (r < d.rows && c0 + tx < d.cols) o[k * dstep] = (D)tile[tx][ty + k * TR];
    }
  }
}
// V4: V1 with the grid's x along dst rows' tiles swapped (x walks src columns = dst rows).
template <typename S, typename D>
__global__ void __launch_bounds__(256, 8) V4(Dim d, const S* src, int32_t ss, D* dst) {
  constexpr int K = TD / TR;
  __shared__ S tile[TD][TD + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r0 = blockIdx.x * TD, c0 = blockIdx.y * TD;
  const int sc = r0 + tx;
  int si = (c0 + ty) * ss + sc;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int sr = c0 + ty + k * TR;
    if (sr < d.cols && sc < d.rows) tile[ty + k * TR][tx] = src[si];
    si += TR * ss;
  }
  __syncthreads();
  const int c = c0 + tx;
  int di = (r0 + ty) * d.stride + c;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int r = r0 + ty + k * TR;
    if (r < d.rows && c < d.cols) dst[di] = (D)tile[tx][ty + k * TR];
    di += TR * d.stride;
  }
}

template <typename S, typename D, typename Kern>
void Launch300(Kern k, Dim d, const S* src, int ss, D* dst, bool swapgrid) {
  dim3 block(TD, TR), grid((d.cols + TD - 1) / TD, (d.rows + TD - 1) / TD);
  if (swapgrid) grid = dim3(grid.y, grid.x);
  for (int i = 0; i < 300; ++i) k<<<grid, block>>>(d, src, ss, dst);
  cudaDeviceSynchronize();
}
template <typename S, typename D>
int Case(const char* name, int drows, int dcols) {
  // dst drows x dcols (pitch rounded to 256 bytes), src dcols x drows.
  int dstride = ((dcols * (int)sizeof(D) + 255) / 256 * 256) / sizeof(D);
  int sstride = ((drows * (int)sizeof(S) + 255) / 256 * 256) / sizeof(S);
  S* src;
  D* dst;
  CK(cudaMalloc(&src, (size_t)dcols * sstride * sizeof(S)));
  CK(cudaMalloc(&dst, (size_t)drows * dstride * sizeof(D)));
  std::vector<S> h((size_t)dcols * sstride);
  for (size_t i = 0; i < h.size(); ++i) h[i] = (S)(i % 1000);
  CK(cudaMemcpy(src, h.data(), h.size() * sizeof(S), cudaMemcpyHostToDevice));
  Dim d{drows, dcols, dstride};
  Launch300<S, D>(V0<S, D>, d, src, sstride, dst, false);
  CK(cudaMemset(dst, 0, (size_t)drows * dstride * sizeof(D)));
  Launch300<S, D>(V3<S, D>, d, src, sstride, dst, false);
  std::vector<D> o((size_t)drows * dstride);
  CK(cudaMemcpy(o.data(), dst, o.size() * sizeof(D), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int r = 0; r < drows; ++r)
    for (int c = 0; c < dcols; ++c)
      if (o[(size_t)r * dstride + c] != (D)h[(size_t)c * sstride + r]) ++bad;
  Launch300<S, D>(V1<S, D>, d, src, sstride, dst, false);
  Launch300<S, D>(V2<S, D>, d, src, sstride, dst, false);
  Launch300<S, D>(V4<S, D>, d, src, sstride, dst, true);
  Launch300<S, D>(V0<S, D>, d, src, sstride, dst, false);
  std::printf("%-14s dst %4d x %-4d (V3 bad %d)\n", name, drows, dcols, bad);
  cudaFree(src);
  cudaFree(dst);
  return 0;
}
// The order of the trace: per case, V0, V3, V1, V2, V4 and V0 again (a drift check).
int main() {
  Case<float, float>("NS float", 512, 1024);
  Case<float, float>("NS float", 1024, 512);
  Case<float, float>("S float", 1024, 1024);
  Case<float, float>("S float 512", 512, 512);
  Case<double, double>("NS double", 512, 1024);
  Case<double, double>("S double", 1024, 1024);
  Case<float, double>("cross f->d", 1024, 512);
  Case<double, float>("cross d->f", 512, 1024);
  Case<float, float>("NS float 256", 128, 256);
  return 0;
}
