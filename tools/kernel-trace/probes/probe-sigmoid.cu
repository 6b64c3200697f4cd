// tools/kernel-trace/probes/probe-sigmoid.cu: the sigmoid map of a contiguous matrix in six
// forms, each launched 300 times at Kaldi's speed-test shapes (512 and 1024 square, float and
// double), to be timed by the CUPTI trace of this folder (CUTRACE=kernels, then durations.py):
//   V0  16-byte vectors per thread over the matrix as one flat array (cuctx's FlatMapVecKernel)
//   V1  one element per thread over the matrix as one flat array
//   V2  V0 with __launch_bounds__(256, 8): at most 32 registers, so 8 blocks fit an SM
//   V3  one element per thread, 16 x 16 blocks over rows and columns (Kaldi's launch shape)
//   V4  BinaryMapVecKernel's loops: rows (y) and 16-byte units (x) grid-strided with a scalar
//       tail per row, the matrix as one row of 256-thread blocks (cuctx's form before d37abc0)
//   V5  V4 with its scalar tail loop kept rolled (#pragma unroll 1): fewer registers, no faster
// Every form's result is checked against the host ("bad" counts elements off by more than 1e-5
// relative). Build and run: see build.sh.
// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime.h>

#include "probe-check.cuh"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

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

__device__ inline float Exp(float x) { return expf(x); }
__device__ inline double Exp(double x) { return exp(x); }

// cuctx's NnetMapOp<kSigmoid>: one exp of a non-positive argument and one division.
template <typename R>
__device__ __forceinline__ R Sigmoid(R x) {
  const R e = Exp(x >= 0 ? -x : x);
  const R s = R(1) / (R(1) + e);
  return x >= 0 ? s : e * s;
}

template <typename R>
__device__ __forceinline__ void VecBody(int n, const R* src, R* dst) {
  using VT = typename V16<R>::T;
  constexpr int L = V16<R>::L;
  const int nvec = n / L;
  for (int u = blockIdx.x * blockDim.x + threadIdx.x; u < nvec; u += gridDim.x * blockDim.x) {
    VT v = reinterpret_cast<const VT*>(src)[u];
    R* e = reinterpret_cast<R*>(&v);
#pragma unroll
    for (int k = 0; k < L; ++k) e[k] = Sigmoid(e[k]);
    reinterpret_cast<VT*>(dst)[u] = v;
  }
}

template <typename R>
__global__ void V0(int n, const R* src, R* dst) {
  VecBody(n, src, dst);
}

template <typename R>
__global__ void V1(int n, const R* src, R* dst) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    dst[i] = Sigmoid(src[i]);
}

template <typename R>
__global__ void __launch_bounds__(256, 8) V2(int n, const R* src, R* dst) {
  VecBody(n, src, dst);
}

template <typename R>
__global__ void V3(int rows, int cols, const R* src, R* dst) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) dst[r * cols + c] = Sigmoid(src[r * cols + c]);
}

template <typename R, bool kRolled>
__device__ __forceinline__ void MapBody(int rows, int cols, int stride, const R* src, R* dst) {
  using VT = typename V16<R>::T;
  constexpr int L = V16<R>::L;
  const int nvec = cols / L, units = nvec + (cols % L != 0 ? 1 : 0);
  for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < rows; r += gridDim.y * blockDim.y) {
    R* drow = dst + static_cast<size_t>(r) * stride;
    const R* srow = src + static_cast<size_t>(r) * stride;
    auto unit = [&](int u) {
      if (u < nvec) {
        VT v = reinterpret_cast<const VT*>(srow)[u];
        R* e = reinterpret_cast<R*>(&v);
#pragma unroll
        for (int k = 0; k < L; ++k) e[k] = Sigmoid(e[k]);
        reinterpret_cast<VT*>(drow)[u] = v;
      } else {
        if constexpr (kRolled) {
#pragma unroll 1
          for (int c = nvec * L; c < cols; ++c) drow[c] = Sigmoid(srow[c]);
        } else {
          for (int c = nvec * L; c < cols; ++c) drow[c] = Sigmoid(srow[c]);
        }
      }
    };
    for (int u = blockIdx.x * blockDim.x + threadIdx.x; u < units; u += gridDim.x * blockDim.x)
      unit(u);
  }
}

template <typename R>
__global__ void V4(int rows, int cols, int stride, const R* src, R* dst) {
  MapBody<R, false>(rows, cols, stride, src, dst);
}

template <typename R>
__global__ void V5(int rows, int cols, int stride, const R* src, R* dst) {
  MapBody<R, true>(rows, cols, stride, src, dst);
}

template <typename R>
void Run(int dim) {
  const int n = dim * dim, reps = 300;
  std::vector<R> h(n), out(n);
  std::mt19937 gen(7);
  std::normal_distribution<double> g(0.0, 4.0);
  for (R& x : h) x = static_cast<R>(g(gen));
  R *src = nullptr, *dst = nullptr;
  PROBE_CHECK(cudaMalloc(&src, n * sizeof(R)));
  PROBE_CHECK(cudaMalloc(&dst, n * sizeof(R)));
  PROBE_CHECK(cudaMemcpy(src, h.data(), n * sizeof(R), cudaMemcpyHostToDevice));
  const int units = n / V16<R>::L;
  for (int form = 0; form < 6; ++form) {
    PROBE_CHECK(cudaMemset(dst, 0, n * sizeof(R)));
    for (int i = 0; i < reps; ++i) {
      if (form == 0) V0<R><<<(units + 255) / 256, 256>>>(n, src, dst);
      if (form == 1) V1<R><<<(n + 255) / 256, 256>>>(n, src, dst);
      if (form == 2) V2<R><<<(units + 255) / 256, 256>>>(n, src, dst);
      if (form == 3)
        V3<R><<<dim3((dim + 15) / 16, (dim + 15) / 16), dim3(16, 16)>>>(dim, dim, src, dst);
      if (form == 4) V4<R><<<(units + 255) / 256, 256>>>(1, n, n, src, dst);
      if (form == 5) V5<R><<<(units + 255) / 256, 256>>>(1, n, n, src, dst);
    }
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaMemcpy(out.data(), dst, n * sizeof(R), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      const double want = 1.0 / (1.0 + std::exp(-static_cast<double>(h[i])));
      if (std::fabs(out[i] - want) > 1e-5 * std::fabs(want) + 1e-30) ++bad;
    }
    std::printf("%s %d V%d: bad %d\n", sizeof(R) == 4 ? "float" : "double", dim, form, bad);
  }
  PROBE_CHECK(cudaFree(src));
  PROBE_CHECK(cudaFree(dst));
}

int main() {
  for (int dim : {512, 1024}) {
    Run<float>(dim);
    Run<double>(dim);
  }
  return 0;
}
