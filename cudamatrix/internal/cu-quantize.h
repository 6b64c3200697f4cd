// cudamatrix/internal/cu-quantize.h: the element arithmetic of CuCompressedMatrix, shared by the
// kernels (cu-kernels-compressed.cu) and the CPU fallback (cu-compressed-matrix.cc).
// SPDX-License-Identifier: Apache-2.0
//
// Plain C++ that nvcc also compiles for the device, so both paths quantize every element with the
// same float operations and round identically (rintf: to nearest, ties to even, on the host in
// the default rounding mode and on the device). Internal to cudamatrix/.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_QUANTIZE_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_QUANTIZE_H_

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define CUCTX_QUANT_FN __host__ __device__ inline
#else
#define CUCTX_QUANT_FN inline
#endif

namespace cuctx {
namespace internal {

// The range of each integer type as floats (std::numeric_limits is not usable in device code
// without --expt-relaxed-constexpr).
template <typename I>
struct QuantRange;
template <>
struct QuantRange<int8_t> {
  static constexpr float kMin = -128.0f, kMax = 127.0f;
};
template <>
struct QuantRange<uint8_t> {
  static constexpr float kMin = 0.0f, kMax = 255.0f;
};
template <>
struct QuantRange<int16_t> {
  static constexpr float kMin = -32768.0f, kMax = 32767.0f;
};
template <>
struct QuantRange<uint16_t> {
  static constexpr float kMin = 0.0f, kMax = 65535.0f;
};

// x * inv_scale rounded to the nearest integer (ties to even). With truncate the value is first
// clamped to I's range (a NaN becomes I's minimum). Without truncate an out-of-range value wraps
// modulo 2^bits of I, as Kaldi documents; it is clamped to int32's range first only so that the
// conversion stays defined (a NaN becomes 0).
template <typename I>
CUCTX_QUANT_FN I QuantizeValue(float x, float inv_scale, bool truncate) {
  float y = x * inv_scale;
  if (truncate) {
    y = fminf(fmaxf(y, QuantRange<I>::kMin), QuantRange<I>::kMax);
  } else {
    // 2147483520 is the largest float below 2^31.
    y = fminf(fmaxf(y, -2147483648.0f), 2147483520.0f);
  }
  const int32_t i = static_cast<int32_t>(rintf(y));
  return static_cast<I>(static_cast<uint32_t>(i));
}

// Range 0 (Kaldi's sign-only mode, any integer type): 1 where x > 0, else 0 (a NaN gives 0), so
// the matrix comes back as Heaviside(x). nnet3 keeps ReLU masks this way, in uint8.
template <typename I>
CUCTX_QUANT_FN I QuantizePositive(float x) {
  return static_cast<I>(x > 0.0f ? 1 : 0);
}

// The value an integer stands for: scale * i.
template <typename I>
CUCTX_QUANT_FN float DequantizeValue(I i, float scale) {
  return scale * static_cast<float>(i);
}

}  // namespace internal
}  // namespace cuctx

#undef CUCTX_QUANT_FN

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_QUANTIZE_H_
