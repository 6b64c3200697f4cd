// tools/kernel-trace/probes/probe-diag.cu: why cuctx's diagonal-product kernels run longer than
// Kaldi's at the vector speed test's small sizes (BENCHMARKS.md, run `vtrace`: 2.2-2.3 us against
// 1.4-2.0 at 32 and 64). Each form is launched 300 times per shape, to be timed by the CUPTI trace
// of this folder (CUTRACE=kernels, then durations.py):
//   cuctx     CuVector::AddDiagMatMat through the library, for the three pairings
//             (DiagColsKernel, DiagRowsKernel, DiagMixedKernel until the library took
//             DiagSmall*Kernel for inner dimensions up to 128)
//   Empty<B>  one block of 256 threads that only touches B bytes of static shared memory and
//             synchronizes once: the fixed cost of a block with that much shared memory
//   Cols<Acc, X, Y>  both operands k-major, X x Y threads per block and one block per X outputs,
//             the Y k-lanes summed through shared memory in Acc (<float, 16, 16> is Kaldi's
//             launch shape for this pairing)
//   RowsWarp  both i-major, one warp per output, summed in double by shuffles
//   Mixed16   one of each, 16 x 16 threads, one output per 16 lanes, summed in double
// Square float matrices of 32, 64 and 128. Each hand-written form is checked against the host.
// Build against an installed cuctx (make install PREFIX=...):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I$PREFIX/include/cuctx tools/kernel-trace/probes/probe-diag.cu
//     -L$PREFIX/lib -lcuctx -o probe-diag
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

namespace {

constexpr int kLaunches = 300;

template <int kBytes>
__global__ void Empty(float* out) {
  __shared__ float s[kBytes > 0 ? kBytes / 4 : 1];
  s[threadIdx.x % (kBytes > 0 ? kBytes / 4 : 1)] = static_cast<float>(threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) out[0] = s[blockDim.x % (kBytes > 0 ? kBytes / 4 : 1)];
}

// Both operands k-major: out[i] += sum_k a[k * as + i] * b[k * bs + i]. kX x kY threads per block,
// one block per kX outputs, kY k-lanes summed through shared memory, in Acc.
template <typename Acc, int kX, int kY>
__global__ void Cols(int dim, int inner, const float* a, int as, const float* b, int bs,
                     float* out) {
  __shared__ Acc part[kY][kX + 1];
  const int i = blockIdx.x * kX + threadIdx.x;
  Acc acc = 0;
  if (i < dim)
    for (int k = threadIdx.y; k < inner; k += kY)
      acc += static_cast<Acc>(a[k * as + i]) * static_cast<Acc>(b[k * bs + i]);
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  for (int half = kY / 2; half > 0; half /= 2) {
    if (threadIdx.y < half) part[threadIdx.y][threadIdx.x] += part[threadIdx.y + half][threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.y == 0 && i < dim) out[i] += static_cast<float>(part[0][threadIdx.x]);
}

// Both operands i-major: out[i] += sum_k a[i * as + k] * b[i * bs + k]; one warp per output, 8
// outputs per 256-thread block, summed in double by shuffles.
__global__ void RowsWarp(int dim, int inner, const float* a, int as, const float* b, int bs,
                         float* out) {
  const int i = blockIdx.x * 8 + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (i >= dim) return;
  double acc = 0;
  for (int k = lane; k < inner; k += 32)
    acc += static_cast<double>(a[i * as + k]) * static_cast<double>(b[i * bs + k]);
  for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0) out[i] += static_cast<float>(acc);
}

// a i-major, b k-major: out[i] += sum_k a[i * as + k] * b[k * bs + i]; 16 x 16 threads, ty picks
// the output, tx the k-lane (a read along k, b across rows), summed in double by shuffles.
__global__ void Mixed16(int dim, int inner, const float* a, int as, const float* b, int bs,
                        float* out) {
  const int i = blockIdx.x * 16 + threadIdx.y;
  double acc = 0;
  if (i < dim)
    for (int k = threadIdx.x; k < inner; k += 16)
      acc += static_cast<double>(a[i * as + k]) * static_cast<double>(b[k * bs + i]);
  for (int off = 8; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off, 16);
  if (threadIdx.x == 0 && i < dim) out[i] += static_cast<float>(acc);
}

template <typename Launch>
void Repeat(Launch launch) {
  for (int r = 0; r < kLaunches; ++r) launch();
  cudaDeviceSynchronize();
}

}  // namespace

int main() {
  using namespace cuctx;
  CuDevice::Instantiate().SelectGpuId("yes");
  float* scratch = nullptr;
  cudaMalloc(&scratch, 1 << 20);
  Repeat([&] { Empty<0><<<1, 256>>>(scratch); });
  Repeat([&] { Empty<1024><<<1, 256>>>(scratch); });
  Repeat([&] { Empty<8192><<<1, 256>>>(scratch); });
  Repeat([&] { Empty<36864><<<1, 256>>>(scratch); });
  int bad = 0;
  for (int dim : {32, 64, 128}) {
    CuVector<float> v(dim);
    CuMatrix<float> n(dim, dim), o(dim, dim);
    n.SetRandn();
    o.SetRandn();
    const MatrixTransposeType pairs[3][2] = {
        {kTrans, kNoTrans}, {kNoTrans, kTrans}, {kNoTrans, kNoTrans}};
    for (const auto& p : pairs) Repeat([&] { v.AddDiagMatMat(1.0, n, p[0], o, p[1], 1.0); });
    // The hand-written forms, each checked on one launch against the host.
    Matrix<float> hn(dim, dim), ho(dim, dim);
    n.CopyToMat(&hn);
    o.CopyToMat(&ho);
    const float* nd = n.Data();
    const float* od = o.Data();
    const int ns = n.Stride(), os = o.Stride();
    float* vd = v.Data();
    // Each form with the product it computes: 0 n^T o (both k-major), 1 n o^T (both i-major),
    // 2 n o (n i-major, o k-major).
    struct Form {
      int product;
      std::function<void()> launch;
    };
    const Form forms[] = {
        {0,
         [&] {
           Cols<float, 16, 16><<<(dim + 15) / 16, dim3(16, 16)>>>(dim, dim, nd, ns, od, os, vd);
         }},
        {0,
         [&] {
           Cols<double, 16, 16><<<(dim + 15) / 16, dim3(16, 16)>>>(dim, dim, nd, ns, od, os, vd);
         }},
        {0,
         [&] {
           Cols<double, 32, 8><<<(dim + 31) / 32, dim3(32, 8)>>>(dim, dim, nd, ns, od, os, vd);
         }},
        {0,
         [&] {
           Cols<double, 8, 32><<<(dim + 7) / 8, dim3(8, 32)>>>(dim, dim, nd, ns, od, os, vd);
         }},
        {1, [&] { RowsWarp<<<(dim + 7) / 8, 256>>>(dim, dim, nd, ns, od, os, vd); }},
        {2, [&] { Mixed16<<<(dim + 15) / 16, dim3(16, 16)>>>(dim, dim, nd, ns, od, os, vd); }},
    };
    for (const Form& f : forms) {
      v.SetZero();
      f.launch();
      Vector<float> got(dim);
      v.CopyToVec(&got);
      for (int i = 0; i < dim; ++i) {
        double want = 0;
        for (int k = 0; k < dim; ++k) {
          const double x = f.product == 0 ? hn(k, i) : hn(i, k);
          const double y = f.product == 1 ? ho(i, k) : ho(k, i);
          want += x * y;
        }
        if (std::fabs(got(i) - want) > 1e-3 * (1 + std::fabs(want))) ++bad;
      }
      Repeat(f.launch);
    }
  }
  cudaFree(scratch);
  std::printf("probe-diag: %d launches per form and shape; elements off: %d\n", kLaunches, bad);
  return bad == 0 ? 0 : 1;
}
