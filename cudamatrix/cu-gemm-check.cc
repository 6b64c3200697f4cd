// cudamatrix/cu-gemm-check.cc: a seeded SGEMM or DGEMM on the
// GPU (or CPU) checked against a reference in a wider type.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-gemm-check.h"

#include "base/error.h"
#include "base/random.h"
#include "cudamatrix/cu-device.h"
#include "matrix/matrix.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-blas-wrappers.h"
#include "cudamatrix/internal/cu-storage.h"

#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

#if CUCTX_HAVE_CUDA
// C = A * B for row-major n x n matrices stored contiguously. cuBLAS is column-major, so this
// computes C^T = B^T * A^T, which has the same bytes.
template <typename Real>
void GpuGemm(int32 n, const Matrix<Real>& a, const Matrix<Real>& b, Matrix<Real>* c) {
  size_t bytes = sizeof(Real) * n * n;
  internal::ScopedStorage d_a(bytes), d_b(bytes), d_c(bytes);
  Real* pa = static_cast<Real*>(d_a.Data());
  Real* pb = static_cast<Real*>(d_b.Data());
  Real* pc = static_cast<Real*>(d_c.Data());
  CUCTX_CUDA_CHECK(cudaMemcpy(pa, a.Data(), bytes, cudaMemcpyHostToDevice));
  CUCTX_CUDA_CHECK(cudaMemcpy(pb, b.Data(), bytes, cudaMemcpyHostToDevice));
  CUCTX_CUBLAS_CHECK(internal::CublasGemm(internal::ThreadCublasHandle(), CUBLAS_OP_N, CUBLAS_OP_N,
                                          n, n, n, Real(1), pb, n, pa, n, Real(0), pc, n));
  CUCTX_CUDA_CHECK(cudaMemcpy(c->Data(), pc, bytes, cudaMemcpyDeviceToHost));
}
#endif

// Accumulation type of the host reference: wider than Real so that it does not share Real's
// rounding (long double is the 80-bit x87 type on x86-64).
template <typename Real>
struct WiderType;
template <>
struct WiderType<float> {
  using Type = double;
};
template <>
struct WiderType<double> {
  using Type = long double;
};

template <typename Real>
GemmCheckResult RunTypedGemmCheck(int32 n, uint64 seed) {
  using Wide = typename WiderType<Real>::Type;
  // Contiguous rows keep the GPU transfer a single copy.
  Matrix<Real> a(n, n, kUndefined, kStrideEqualNumCols), b(n, n, kUndefined, kStrideEqualNumCols),
      c(n, n, kSetZero, kStrideEqualNumCols);
  RandomState state(seed);
  for (int32 i = 0; i < n; ++i)
    for (int32 j = 0; j < n; ++j) {
      a(i, j) = RandGauss(&state);
      b(i, j) = RandGauss(&state);
    }

  GemmCheckResult result;
  result.precision = sizeof(Real) == sizeof(float) ? GemmPrecision::kFloat : GemmPrecision::kDouble;
  result.n = n;
  result.on_gpu = CuDevice::Instantiate().Enabled();
  auto start = std::chrono::steady_clock::now();
#if CUCTX_HAVE_CUDA
  if (result.on_gpu)
    GpuGemm(n, a, b, &c);
  else
#endif
    c.AddMatMat(Real(1), a, kNoTrans, b, kNoTrans, Real(0));
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Reference row by row with plain loops, so it does not share code with either path above.
  Wide diff2 = 0, ref2 = 0;
  std::vector<Wide> row(n);
  for (int32 i = 0; i < n; ++i) {
    std::fill(row.begin(), row.end(), Wide(0));
    for (int32 k = 0; k < n; ++k) {
      Wide aik = a(i, k);
      const Real* b_row = b.RowData(k);
      for (int32 j = 0; j < n; ++j) row[j] += aik * b_row[j];
    }
    for (int32 j = 0; j < n; ++j) {
      Wide d = c(i, j) - row[j];
      diff2 += d * d;
      ref2 += row[j] * row[j];
    }
  }
  result.rel_error = static_cast<double>(ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2));
  const int mantissa_bits = std::numeric_limits<Real>::digits;  // 24 or 53
  result.tolerance = 4.0 * n * std::ldexp(1.0, -mantissa_bits);
  result.passed = std::isfinite(result.rel_error) && result.rel_error <= result.tolerance;
  return result;
}

}  // namespace

std::string GemmCheckResult::Summary() const {
  char line[256];
  std::snprintf(line, sizeof(line), "%s %dx%d on %s: relative error %.2e (limit %.1e), %.2f ms",
                precision == GemmPrecision::kFloat ? "SGEMM" : "DGEMM", n, n,
                on_gpu ? "GPU" : "CPU", rel_error, tolerance, seconds * 1e3);
  return line;
}

GemmCheckResult RunGemmCheck(int32 n, uint64 seed, GemmPrecision precision) {
  CUCTX_CHECK(n >= 1 && n <= 4096) << "RunGemmCheck: n must be in [1, 4096], got " << n;
  return precision == GemmPrecision::kFloat ? RunTypedGemmCheck<float>(n, seed)
                                            : RunTypedGemmCheck<double>(n, seed);
}

// A CuDevice method, defined here rather than in cu-device.cc so that the facade (a lower layer)
// does not include the check it runs.
void CuDevice::CheckGpuHealth() {
  if (!Enabled()) return;
  CuTimer timer;
  GemmCheckResult check = RunGemmCheck(512, 20261122);
  if (!check.passed)
    CUCTX_ERR << "GPU health check failed: " << check.Summary()
              << "; the GPU computes a matrix product differently from the CPU";
  CUCTX_VLOG(1) << "GPU health check passed: " << check.Summary();
  AccuProfile("CuDevice::CheckGpuHealth", timer);
}

}  // namespace cuctx
