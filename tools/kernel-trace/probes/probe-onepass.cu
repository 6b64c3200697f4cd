// tools/kernel-trace/probes/probe-onepass.cu: does the loop form of cuctx's 2D kernels cost time
// where the launch shape is Kaldi's? CuMatrix::AddDiagVecMat with M transposed
// (dst(r, c) = beta * dst(r, c) + alpha * v[r] * m(c, r)) in five forms, all with 16 x 16 blocks
// covering the matrix once (the shape of cuctx's AddDiagScaledTransMatKernel and of Kaldi's
// _add_diag_vec_mat), each launched 300 times at 512 and 1024 square, float and double, to be
// timed by the CUPTI trace of this folder (CUTRACE=kernels, then durations.py):
//   V0  cuctx's kernel: rows and columns grid-strided, 64-bit row offsets, v indexed by a run-time
//       flag (by rows or by columns)
//   V1  one pass, no loops (if r < rows && c < cols), 64-bit offsets, the run-time flag
//   V2  one pass, 32-bit offsets, v by rows only (the form of Kaldi's kernel)
//   V3  V0's loops with 32-bit offsets and v by rows only
//   V4  V0 with v by rows fixed at compile time
// Each form's result after one launch on fresh data is checked against the host ("bad" counts
// elements off by more than 1e-5 relative). Build and run: see build.sh.
// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime.h>

#include "probe-check.cuh"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

struct Dim {
  int rows, cols, stride;
};

template <typename R>
__global__ void V0(Dim d, R alpha, const R* v, bool by_rows, const R* m, int m_stride, R beta,
                   R* dst) {
  for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    R* drow = dst + static_cast<size_t>(r) * d.stride;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x) {
      const R in = m[static_cast<size_t>(c) * m_stride + r];
      drow[c] = beta * drow[c] + alpha * (by_rows ? v[r] : v[c]) * in;
    }
  }
}

template <typename R>
__global__ void V1(Dim d, R alpha, const R* v, bool by_rows, const R* m, int m_stride, R beta,
                   R* dst) {
  const int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < d.rows && c < d.cols) {
    const R in = m[static_cast<size_t>(c) * m_stride + r];
    R* p = dst + static_cast<size_t>(r) * d.stride + c;
    *p = beta * *p + alpha * (by_rows ? v[r] : v[c]) * in;
  }
}

template <typename R>
__global__ void V2(Dim d, R alpha, const R* v, const R* m, int m_stride, R beta, R* dst) {
  const int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < d.rows && c < d.cols) {
    const int i = r * d.stride + c;
    dst[i] = beta * dst[i] + alpha * v[r] * m[c * m_stride + r];
  }
}

template <typename R>
__global__ void V3(Dim d, R alpha, const R* v, const R* m, int m_stride, R beta, R* dst) {
  for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y)
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x) {
      const int i = r * d.stride + c;
      dst[i] = beta * dst[i] + alpha * v[r] * m[c * m_stride + r];
    }
}

template <typename R>
__global__ void V4(Dim d, R alpha, const R* v, const R* m, int m_stride, R beta, R* dst) {
  for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y) {
    R* drow = dst + static_cast<size_t>(r) * d.stride;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols; c += gridDim.x * blockDim.x)
      drow[c] = beta * drow[c] + alpha * v[r] * m[static_cast<size_t>(c) * m_stride + r];
  }
}

template <typename R>
void Run(int dim) {
  const int n = dim * dim, reps = 300;
  const R alpha = R(0.75), beta = R(0.5);
  std::vector<R> hm(n), hd(n), hv(dim), out(n);
  std::mt19937 gen(11);
  std::normal_distribution<double> g(0.0, 1.0);
  for (R& x : hm) x = static_cast<R>(g(gen));
  for (R& x : hd) x = static_cast<R>(g(gen));
  for (R& x : hv) x = static_cast<R>(g(gen));
  R *m = nullptr, *d = nullptr, *v = nullptr;
  PROBE_CHECK(cudaMalloc(&m, n * sizeof(R)));
  PROBE_CHECK(cudaMalloc(&d, n * sizeof(R)));
  PROBE_CHECK(cudaMalloc(&v, dim * sizeof(R)));
  PROBE_CHECK(cudaMemcpy(m, hm.data(), n * sizeof(R), cudaMemcpyHostToDevice));
  PROBE_CHECK(cudaMemcpy(v, hv.data(), dim * sizeof(R), cudaMemcpyHostToDevice));
  const Dim dm{dim, dim, dim};
  const dim3 block(16, 16), grid(dim / 16, dim / 16);
  auto launch = [&](int form) {
    switch (form) {
      case 0:
        V0<R><<<grid, block>>>(dm, alpha, v, true, m, dim, beta, d);
        break;
      case 1:
        V1<R><<<grid, block>>>(dm, alpha, v, true, m, dim, beta, d);
        break;
      case 2:
        V2<R><<<grid, block>>>(dm, alpha, v, m, dim, beta, d);
        break;
      case 3:
        V3<R><<<grid, block>>>(dm, alpha, v, m, dim, beta, d);
        break;
      case 4:
        V4<R><<<grid, block>>>(dm, alpha, v, m, dim, beta, d);
        break;
    }
  };
  for (int form = 0; form < 5; ++form) {
    PROBE_CHECK(cudaMemcpy(d, hd.data(), n * sizeof(R), cudaMemcpyHostToDevice));
    launch(form);
    PROBE_CHECK(cudaMemcpy(out.data(), d, n * sizeof(R), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int r = 0; r < dim; ++r)
      for (int c = 0; c < dim; ++c) {
        const double want =
            beta * double(hd[r * dim + c]) + alpha * double(hv[r]) * double(hm[c * dim + r]);
        if (std::fabs(out[r * dim + c] - want) > 1e-5 * (1 + std::fabs(want))) ++bad;
      }
    for (int i = 0; i < reps; ++i) launch(form);
    PROBE_CHECK(cudaDeviceSynchronize());
    std::printf("%s %d V%d bad %d\n", sizeof(R) == 4 ? "float" : "double", dim, form, bad);
  }
  PROBE_CHECK(cudaFree(m));
  PROBE_CHECK(cudaFree(d));
  PROBE_CHECK(cudaFree(v));
}

int main() {
  for (int dim : {512, 1024}) {
    Run<float>(dim);
    Run<double>(dim);
  }
  return 0;
}
