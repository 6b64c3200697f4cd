// cudamatrix/cu-kernels-copy.cu: fills, byte copies, converting copies and tiled transposing
// copies.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <algorithm>
#include <cstdint>

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

template <typename Word>
__global__ void FillKernel(Word* data, int64_t count, Word value) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step)
    data[i] = value;
}

// One unit (Word) per thread over the rows x units grid taken as one index (row = index / units),
// grid-strided: any shape, including many short rows, keeps every thread of a block busy.
template <typename Word>
__global__ void CopyWords2DKernel(Word* dst, int64_t dst_pitch, const Word* src, int64_t src_pitch,
                                  int64_t units, int64_t total) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / units, u = i - r * units;
    dst[r * dst_pitch + u] = src[r * src_pitch + u];
  }
}

template <typename Word>
void CopyWords2D(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t row_bytes,
                 size_t rows, CuStream stream) {
  constexpr int kThreads = 256;
  const int64_t units = static_cast<int64_t>(row_bytes / sizeof(Word));
  const int64_t total = units * static_cast<int64_t>(rows);
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, 1024);
  internal::Launch<CopyWords2DKernel<Word>>(
      CUCTX_LAUNCH_SITE("CopyWords2DKernel"), static_cast<unsigned>(blocks), kThreads, 0, stream,
      static_cast<Word*>(dst), dst_pitch / sizeof(Word), static_cast<const Word*>(src),
      src_pitch / sizeof(Word), units, total);
}

template <typename DstReal>
struct AssignOp {
  template <typename SrcReal>
  __device__ void operator()(DstReal* d, SrcReal s) const {
    *d = static_cast<DstReal>(s);
  }
};

template <typename Real>
struct SetOp {
  Real value;
  __device__ void operator()(Real* d) const { *d = value; }
};

template <typename SrcReal, typename DstReal>
void CopyMat(MatrixDim d, const SrcReal* src, int32_t src_stride, bool trans, DstReal* dst,
             CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  if (trans) {
    internal::LaunchTransposeMap(d, src, src_stride, AssignOp<DstReal>(), dst, stream,
                                 "TransposeMapKernel(copy)");
    return;
  }
  internal::LaunchBinaryMap(d, src, src_stride, AssignOp<DstReal>(), dst, stream,
                            "BinaryMapKernel(copy)");
}

template <typename Real>
void SetMat(MatrixDim d, Real value, Real* data, CuStream stream) {
  internal::LaunchUnaryMap(d, SetOp<Real>{value}, data, stream, "UnaryMapKernel(set)");
}

}  // namespace

void LaunchFill(void* d_data, int64_t count, int32_t elem_bytes, uint64_t pattern,
                CuStream stream) {
  if (count == 0) return;
  const int threads = 256;
  const int64_t want = (count + threads - 1) / threads;
  const int blocks = static_cast<int>(want < 4096 ? want : 4096);
  if (elem_bytes == 4) {
    internal::Launch<FillKernel<uint32_t>>(CUCTX_LAUNCH_SITE("FillKernel"), blocks, threads, 0,
                                           stream, static_cast<uint32_t*>(d_data), count,
                                           static_cast<uint32_t>(pattern));
  } else {
    internal::Launch<FillKernel<uint64_t>>(CUCTX_LAUNCH_SITE("FillKernel"), blocks, threads, 0,
                                           stream, static_cast<uint64_t*>(d_data), count, pattern);
  }
}

void LaunchCopyBytes2D(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                       size_t row_bytes, size_t rows, CuStream stream) {
  if (row_bytes == 0 || rows == 0) return;
  // Every address the kernel touches is a multiple of the unit when these are.
  const size_t all = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) |
                     (rows > 1 ? dst_pitch | src_pitch : 0) | row_bytes;
  if (all % 16 == 0)
    CopyWords2D<uint4>(dst, dst_pitch, src, src_pitch, row_bytes, rows, stream);
  else if (all % 8 == 0)
    CopyWords2D<uint2>(dst, dst_pitch, src, src_pitch, row_bytes, rows, stream);
  else if (all % 4 == 0)
    CopyWords2D<uint32_t>(dst, dst_pitch, src, src_pitch, row_bytes, rows, stream);
  else
    CopyWords2D<unsigned char>(dst, dst_pitch, src, src_pitch, row_bytes, rows, stream);
}

void LaunchCopyMat(MatrixDim d, const float* src, int32_t ss, bool t, float* dst, CuStream st) {
  CopyMat(d, src, ss, t, dst, st);
}
void LaunchCopyMat(MatrixDim d, const double* src, int32_t ss, bool t, float* dst, CuStream st) {
  CopyMat(d, src, ss, t, dst, st);
}
void LaunchCopyMat(MatrixDim d, const float* src, int32_t ss, bool t, double* dst, CuStream st) {
  CopyMat(d, src, ss, t, dst, st);
}
void LaunchCopyMat(MatrixDim d, const double* src, int32_t ss, bool t, double* dst, CuStream st) {
  CopyMat(d, src, ss, t, dst, st);
}
void LaunchSetMat(MatrixDim d, float value, float* data, CuStream st) {
  SetMat(d, value, data, st);
}
void LaunchSetMat(MatrixDim d, double value, double* data, CuStream st) {
  SetMat(d, value, data, st);
}

}  // namespace cuctx
