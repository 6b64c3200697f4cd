// cudamatrix/cu-gemm-check.h: the small GEMM computation
// used to check that a device computes right.
// SPDX-License-Identifier: Apache-2.0
//
// Shared by bin/cuda-gpu-available, CuDevice health checks and bin/gpu-health-check so that all of
// them check the same thing the same way.
#ifndef CUCTX_CUDAMATRIX_CU_GEMM_CHECK_H_
#define CUCTX_CUDAMATRIX_CU_GEMM_CHECK_H_

#include "base/types.h"

#include <string>

namespace cuctx {

// The element type of the checked product.
enum class GemmPrecision { kFloat, kDouble };

struct GemmCheckResult {
  GemmPrecision precision = GemmPrecision::kFloat;
  bool on_gpu = false;     // the product was computed by cuBLAS on the selected GPU
  int n = 0;               // square size
  double rel_error = 0.0;  // ||C - C_ref||_F / ||C_ref||_F
  double tolerance = 0.0;  // the bound rel_error was held to
  double seconds = 0.0;    // wall time of the checked product (including transfers)
  bool passed = false;
  // One line, e.g. "SGEMM 256x256 on GPU: relative error 3.1e-07 (limit 6.1e-05), 1.20 ms".
  std::string Summary() const;
};

// Multiplies two random n x n matrices of `precision` (seeded with `seed`) on the selected GPU with
// cuBLAS (cublasSgemm / cublasDgemm), or on the CPU through matrix/ (OpenBLAS) when no GPU is
// selected, and compares the result with a reference computed on the host by plain loops in a
// wider type (double for float, long double for double). The tolerance is 4 * n * unit roundoff
// (2^-24 for float, 2^-53 for double): the rounding of an n-term dot product, with margin. Waits
// for the GPU. Throws cuctx::Error on bad n (< 1 or > 4096) and cuctx::CudaError if a CUDA call
// fails; a wrong result is reported in the result, not thrown.
GemmCheckResult RunGemmCheck(int32 n, uint64 seed, GemmPrecision precision = GemmPrecision::kFloat);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_GEMM_CHECK_H_
