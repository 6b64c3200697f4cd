// tools/kernel-trace/probes/probe-rowmax.cu: FindRowMaxId with 256, 128, 64 or 32 threads per
// row (a block of 256 threads does 256 / that many rows at a time; 16-byte loads), each launched
// 300 times at Kaldi's speed-test shapes on data with many ties, to be timed by the CUPTI trace of
// this folder (CUTRACE=kernels, then durations.py). Each form's result is checked against the
// host ("bad" counts wrong rows). Build and run: see build.sh.
// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>
struct Dim {
  int32_t rows, cols, stride;
};
template <typename R>
struct V16;
template <>
struct V16<float> {
  using T = float4;
  static constexpr int L = 4;
};
template <>
struct V16<double> {
  using T = double2;
  static constexpr int L = 2;
};
template <typename R>
__device__ inline void Better(R ov, int oi, R* v, int* i) {
  if (oi != INT_MAX && (*i == INT_MAX || ov > *v || (ov == *v && oi < *i))) {
    *v = ov;
    *i = oi;
  }
}
template <typename R, int TPR, int UNR>
__global__ void __launch_bounds__(256) M(Dim d, const R* data, int* id) {
  constexpr int RPB = 256 / TPR, WPR = TPR / 32;
  __shared__ R sv[256 / 32];
  __shared__ int si[256 / 32];
  using VT = typename V16<R>::T;
  constexpr int L = V16<R>::L;
  const int lane = threadIdx.x % TPR, sub = threadIdx.x / TPR;
  for (int r0 = blockIdx.x * RPB; r0 < d.rows; r0 += gridDim.x * RPB) {
    const int r = r0 + sub;
    R v = -INFINITY;
    int i = INT_MAX;
    if (r < d.rows) {
      const R* row = data + (size_t)r * d.stride;
      const int nvec = d.cols / L;
#pragma unroll UNR
      for (int u = lane; u < nvec; u += TPR) {
        VT x = reinterpret_cast<const VT*>(row)[u];
        const R* e = reinterpret_cast<const R*>(&x);
#pragma unroll
        for (int k = 0; k < L; ++k)
          if (e[k] > v || i == INT_MAX) {
            v = e[k];
            i = u * L + k;
          }
      }
      const int c = nvec * L + lane;
      if (lane < d.cols - nvec * L) {
        R x = row[c];
        if (x > v || i == INT_MAX) {
          v = x;
          i = c;
        }
      }
    }
    for (int o = 16; o > 0; o /= 2)
      Better(__shfl_xor_sync(~0u, v, o), __shfl_xor_sync(~0u, i, o), &v, &i);
    if constexpr (WPR > 1) {
      const int w = threadIdx.x / 32;
      if (threadIdx.x % 32 == 0) {
        sv[w] = v;
        si[w] = i;
      }
      __syncthreads();
      if (threadIdx.x % TPR == 0) {
        for (int k = 1; k < WPR; ++k) Better(sv[w + k], si[w + k], &v, &i);
      }
      __syncthreads();
    }
    if (lane == 0 && r < d.rows) id[r] = i == INT_MAX ? 0 : i;
  }
}
#define CK(x)                                             \
  do {                                                    \
    cudaError_t e = (x);                                  \
    if (e != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                           \
    }                                                     \
  } while (0)
template <typename R, int TPR, int UNR>
int Run(const char* tag, Dim d, const R* dev, int* did, const std::vector<R>& h) {
  constexpr int RPB = 256 / TPR;
  unsigned grid = (d.rows + RPB - 1) / RPB;
  if (grid > 65535) grid = 65535;
  for (int k = 0; k < 300; ++k) M<R, TPR, UNR><<<grid, 256>>>(d, dev, did);
  CK(cudaDeviceSynchronize());
  std::vector<int> got(d.rows);
  CK(cudaMemcpy(got.data(), did, d.rows * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int r = 0; r < d.rows; ++r) {
    int b = 0;
    for (int c = 1; c < d.cols; ++c)
      if (h[(size_t)r * d.stride + c] > h[(size_t)r * d.stride + b]) b = c;
    if (got[r] != b) ++bad;
  }
  std::printf("%s rows %d cols %d TPR %d UNR %d bad %d\n", tag, d.rows, d.cols, TPR, UNR, bad);
  return 0;
}
template <typename R>
int Shape(const char* tag, int rows, int cols) {
  int stride = ((cols * (int)sizeof(R) + 255) / 256 * 256) / sizeof(R);
  std::vector<R> h((size_t)rows * stride);
  std::mt19937 g(7);
  std::uniform_int_distribution<int> u(0, 50);  // ties on purpose
  for (auto& x : h) x = (R)u(g);
  R* dev;
  int* did;
  CK(cudaMalloc(&dev, h.size() * sizeof(R)));
  CK(cudaMalloc(&did, rows * sizeof(int)));
  CK(cudaMemcpy(dev, h.data(), h.size() * sizeof(R), cudaMemcpyHostToDevice));
  Dim d{rows, cols, stride};
  Run<R, 256, 2>(tag, d, dev, did, h);
  Run<R, 128, 2>(tag, d, dev, did, h);
  Run<R, 64, 4>(tag, d, dev, did, h);
  Run<R, 32, 4>(tag, d, dev, did, h);
  Run<R, 256, 2>(tag, d, dev, did, h);
  cudaFree(dev);
  cudaFree(did);
  return 0;
}
int main() {
  Shape<float>("float", 1024, 1024);
  Shape<float>("float", 512, 512);
  Shape<double>("double", 1024, 1024);
  Shape<double>("double", 512, 512);
  Shape<float>("float", 256, 256);
  return 0;
}
