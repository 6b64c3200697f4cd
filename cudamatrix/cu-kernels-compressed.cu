// cudamatrix/cu-kernels-compressed.cu: CuCompressedMatrix kernels (float <-> 8/16-bit integers).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-quantize.h"

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

template <typename I>
struct CompressOp {
  float inv_scale;
  bool truncate;
  __device__ void operator()(I* d, float s) const {
    *d = internal::QuantizeValue<I>(s, inv_scale, truncate);
  }
};
template <typename I>
struct CompressSignOp {
  __device__ void operator()(I* d, float s) const { *d = internal::QuantizePositive<I>(s); }
};
template <typename I>
struct UncompressOp {
  float scale;
  __device__ void operator()(float* d, I s) const { *d = internal::DequantizeValue<I>(s, scale); }
};

// The integer side is packed, so its shape is the float matrix's with stride = cols; the shared
// binary-map launcher collapses both to one long row when the float side is packed too.
template <typename I>
void Compress(MatrixDim src_dim, const float* src, float inv_scale, bool truncate, I* dst,
              CuStream stream) {
  const MatrixDim dst_dim{src_dim.rows, src_dim.cols, src_dim.cols};
  internal::LaunchBinaryMap(dst_dim, src, src_dim.stride, CompressOp<I>{inv_scale, truncate}, dst,
                            stream, "BinaryMapKernel(compress)");
}

template <typename I>
void CompressSign(MatrixDim d, const float* src, I* dst, CuStream stream) {
  const MatrixDim dst_dim{d.rows, d.cols, d.cols};
  internal::LaunchBinaryMap(dst_dim, src, d.stride, CompressSignOp<I>{}, dst, stream,
                            "BinaryMapKernel(compress-sign)");
}

template <typename I>
void Uncompress(MatrixDim dst_dim, const I* src, float scale, float* dst, CuStream stream) {
  internal::LaunchBinaryMap(dst_dim, src, dst_dim.cols, UncompressOp<I>{scale}, dst, stream,
                            "BinaryMapKernel(uncompress)");
}

}  // namespace

void LaunchCompressMat(MatrixDim d, const float* src, float inv_scale, bool truncate, int8_t* dst,
                       CuStream stream) {
  Compress(d, src, inv_scale, truncate, dst, stream);
}
void LaunchCompressMat(MatrixDim d, const float* src, float inv_scale, bool truncate, uint8_t* dst,
                       CuStream stream) {
  Compress(d, src, inv_scale, truncate, dst, stream);
}
void LaunchCompressMat(MatrixDim d, const float* src, float inv_scale, bool truncate, int16_t* dst,
                       CuStream stream) {
  Compress(d, src, inv_scale, truncate, dst, stream);
}
void LaunchCompressMat(MatrixDim d, const float* src, float inv_scale, bool truncate, uint16_t* dst,
                       CuStream stream) {
  Compress(d, src, inv_scale, truncate, dst, stream);
}
void LaunchCompressMatSign(MatrixDim d, const float* src, int8_t* dst, CuStream stream) {
  CompressSign(d, src, dst, stream);
}
void LaunchCompressMatSign(MatrixDim d, const float* src, uint8_t* dst, CuStream stream) {
  CompressSign(d, src, dst, stream);
}
void LaunchCompressMatSign(MatrixDim d, const float* src, int16_t* dst, CuStream stream) {
  CompressSign(d, src, dst, stream);
}
void LaunchCompressMatSign(MatrixDim d, const float* src, uint16_t* dst, CuStream stream) {
  CompressSign(d, src, dst, stream);
}
void LaunchUncompressMat(MatrixDim d, const int8_t* src, float scale, float* dst, CuStream stream) {
  Uncompress(d, src, scale, dst, stream);
}
void LaunchUncompressMat(MatrixDim d, const uint8_t* src, float scale, float* dst,
                         CuStream stream) {
  Uncompress(d, src, scale, dst, stream);
}
void LaunchUncompressMat(MatrixDim d, const int16_t* src, float scale, float* dst,
                         CuStream stream) {
  Uncompress(d, src, scale, dst, stream);
}
void LaunchUncompressMat(MatrixDim d, const uint16_t* src, float scale, float* dst,
                         CuStream stream) {
  Uncompress(d, src, scale, dst, stream);
}

}  // namespace cuctx
