// cudamatrix/cu-gemm-check.cc: a seeded SGEMM on the GPU (or CPU) checked against a double
// reference. SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-gemm-check.h"

#include "base/error.h"
#include "base/random.h"
#include "cudamatrix/cu-device.h"
#include "matrix/matrix.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

#if CUCTX_HAVE_CUDA
// Device memory for the duration of the check, returned to the allocator on every path.
class ScopedDeviceBuffer {
 public:
  explicit ScopedDeviceBuffer(size_t bytes) : ptr_(CuDevice::Instantiate().Malloc(bytes)) {}
  ~ScopedDeviceBuffer() { CuDevice::Instantiate().Free(ptr_); }
  float* Get() const { return static_cast<float*>(ptr_); }
  ScopedDeviceBuffer(const ScopedDeviceBuffer&) = delete;
  ScopedDeviceBuffer& operator=(const ScopedDeviceBuffer&) = delete;

 private:
  void* ptr_;
};

// C = A * B for row-major n x n matrices stored contiguously. cuBLAS is column-major, so this
// computes C^T = B^T * A^T, which has the same bytes.
void GpuSgemm(int32 n, const Matrix<float>& a, const Matrix<float>& b, Matrix<float>* c) {
  size_t bytes = sizeof(float) * n * n;
  ScopedDeviceBuffer d_a(bytes), d_b(bytes), d_c(bytes);
  CUCTX_CUDA_CHECK(cudaMemcpy(d_a.Get(), a.Data(), bytes, cudaMemcpyHostToDevice));
  CUCTX_CUDA_CHECK(cudaMemcpy(d_b.Get(), b.Data(), bytes, cudaMemcpyHostToDevice));
  const float one = 1.0f, zero = 0.0f;
  CUCTX_CUBLAS_CHECK(cublasSgemm(CuDevice::Instantiate().GetCublasHandle(), CUBLAS_OP_N,
                                 CUBLAS_OP_N, n, n, n, &one, d_b.Get(), n, d_a.Get(), n, &zero,
                                 d_c.Get(), n));
  CUCTX_CUDA_CHECK(cudaMemcpy(c->Data(), d_c.Get(), bytes, cudaMemcpyDeviceToHost));
}
#endif

}  // namespace

std::string GemmCheckResult::Summary() const {
  char line[256];
  std::snprintf(line, sizeof(line), "SGEMM %dx%d on %s: relative error %.2e (limit %.1e), %.2f ms",
                n, n, on_gpu ? "GPU" : "CPU", rel_error, tolerance, seconds * 1e3);
  return line;
}

GemmCheckResult RunGemmCheck(int32 n, uint64 seed) {
  CUCTX_CHECK(n >= 1 && n <= 4096) << "RunGemmCheck: n must be in [1, 4096], got " << n;
  // Contiguous rows keep the GPU transfer a single copy.
  Matrix<float> a(n, n, kUndefined, kStrideEqualNumCols), b(n, n, kUndefined, kStrideEqualNumCols),
      c(n, n, kSetZero, kStrideEqualNumCols);
  RandomState state(seed);
  for (int32 i = 0; i < n; ++i)
    for (int32 j = 0; j < n; ++j) {
      a(i, j) = RandGauss(&state);
      b(i, j) = RandGauss(&state);
    }

  GemmCheckResult result;
  result.n = n;
  result.on_gpu = CuDevice::Instantiate().Enabled();
  auto start = std::chrono::steady_clock::now();
#if CUCTX_HAVE_CUDA
  if (result.on_gpu)
    GpuSgemm(n, a, b, &c);
  else
#endif
    c.AddMatMat(1.0f, a, kNoTrans, b, kNoTrans, 0.0f);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Reference in double, row by row, so it does not share code with either path above.
  double diff2 = 0.0, ref2 = 0.0;
  std::vector<double> row(n);
  for (int32 i = 0; i < n; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int32 k = 0; k < n; ++k) {
      double aik = a(i, k);
      const float* b_row = b.RowData(k);
      for (int32 j = 0; j < n; ++j) row[j] += aik * b_row[j];
    }
    for (int32 j = 0; j < n; ++j) {
      double d = c(i, j) - row[j];
      diff2 += d * d;
      ref2 += row[j] * row[j];
    }
  }
  result.rel_error = ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  result.tolerance = 4.0 * n * std::ldexp(1.0, -24);
  result.passed = std::isfinite(result.rel_error) && result.rel_error <= result.tolerance;
  return result;
}

}  // namespace cuctx
