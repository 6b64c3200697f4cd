// cudamatrix/cu-kernels-solve.cu: helpers of the random, packed and solver family: binarizing
// probabilities, triangle fills after cuSOLVER, packed <-> full conversions and packed updates.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device-utils.cuh"
#include "cudamatrix/cu-launch.cuh"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/internal/cu-kernels.h"

#include <cstddef>
#include <cstdint>

CUCTX_KERNEL_FILE()

namespace cuctx {
namespace {

// Threads per block of the one-dimensional (diagonal) kernels.
constexpr int kDiagThreads = 256;

// Offset of (r, c), c <= r, in the packed lower triangle (row by row). A packed matrix has at
// most 65535 rows (cu-packed-matrix.h), so r (r + 1) <= 65534 * 65535 < 2^32 and unsigned 32-bit
// arithmetic is exact; it takes fewer instructions than 64-bit, which counts in the element-wise
// unpacking (one element per thread).
__device__ inline uint32_t PackedIndex(int32_t r, int32_t c) {
  const uint32_t ur = static_cast<uint32_t>(r);
  return ur * (ur + 1) / 2 + static_cast<uint32_t>(c);
}

template <typename Real>
struct BinarizeOp {
  // *d holds a uniform draw on entry.
  __device__ void operator()(Real* d, Real p) const { *d = p > *d ? Real(1) : Real(0); }
};

// The strict upper triangle of a square matrix: zeroed, or copied from the lower one. Only the
// upper triangle is written and only the lower one read, so no element is both read and written.
template <typename Real>
__global__ void FillUpperKernel(MatrixDim d, bool mirror, Real* data) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y)
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      if (c <= r) continue;
      data[static_cast<size_t>(r) * d.stride + c] =
          mirror ? data[static_cast<size_t>(c) * d.stride + r] : Real(0);
    }
}

// The layout is a template argument, so that each kernel is straight-line code for one layout.
// With that and 32-bit packed offsets, CopyFromSp<float> at 1024 took 3.81 us in place of 4.42
// (Kaldi's kernel 3.78) and CopyFromTp<float> 3.58 in place of 4.06 (H200, runs ktrace-4, -5): at
// one element per thread, the instructions per element weigh as much as the memory traffic.
template <typename Real, PackedLayout kLayout>
__global__ void UnpackKernel(MatrixDim d, const Real* packed, Real* dst) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y)
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < d.cols;
         c += gridDim.x * blockDim.x) {
      Real v;
      switch (kLayout) {
        case PackedLayout::kSymmetric:
          v = c <= r ? packed[PackedIndex(r, c)] : packed[PackedIndex(c, r)];
          break;
        case PackedLayout::kLower:
          v = c <= r ? packed[PackedIndex(r, c)] : Real(0);
          break;
        default:  // kUpper: the transpose of the lower-triangular matrix.
          v = r <= c ? packed[PackedIndex(c, r)] : Real(0);
          break;
      }
      dst[static_cast<size_t>(r) * d.stride + c] = v;
    }
}

template <typename Real>
__global__ void PackKernel(MatrixDim d, const Real* src, PackSource source, Real* packed) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < d.rows; r += gridDim.y * blockDim.y)
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c <= r && c < d.cols;
         c += gridDim.x * blockDim.x) {
      const Real lower = src[static_cast<size_t>(r) * d.stride + c];
      const Real upper = src[static_cast<size_t>(c) * d.stride + r];
      Real v;
      switch (source) {
        case PackSource::kLower:
          v = lower;
          break;
        case PackSource::kUpper:
          v = upper;
          break;
        default:  // kMean
          v = Real(0.5) * (lower + upper);
          break;
      }
      packed[PackedIndex(r, c)] = v;
    }
}

template <typename Real>
__global__ void PackedDiagKernel(int32_t n, PackedDiagOp op, Real alpha, Real* packed, Real* out) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    Real* p = packed + PackedIndex(i, i);
    switch (op) {
      case PackedDiagOp::kSet:
        *p = alpha;
        break;
      case PackedDiagOp::kAdd:
        *p += alpha;
        break;
      case PackedDiagOp::kScale:
        *p *= alpha;
        break;
      default:  // kCopyOut
        out[i] = *p;
        break;
    }
  }
}

template <typename Real>
__global__ void PackedAddVec2Kernel(int32_t n, Real alpha, const Real* v, Real* packed) {
  for (int32_t r = blockIdx.y * blockDim.y + threadIdx.y; r < n; r += gridDim.y * blockDim.y) {
    const Real av = alpha * v[r];
    for (int32_t c = blockIdx.x * blockDim.x + threadIdx.x; c <= r; c += gridDim.x * blockDim.x)
      packed[PackedIndex(r, c)] += av * v[c];
  }
}

unsigned DiagBlocks(int32_t n) {
  const int64_t blocks = (static_cast<int64_t>(n) + kDiagThreads - 1) / kDiagThreads;
  return static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
}

template <typename Real>
void Binarize(MatrixDim d, const Real* probs, int32_t probs_stride, Real* dst, CuStream stream) {
  if (d.rows == 0 || d.cols == 0) return;
  internal::CollapseIfContiguous(&d, &probs_stride);
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<internal::BinaryMapKernel<Real, Real, BinarizeOp<Real>>>(
      CUCTX_LAUNCH_SITE("BinaryMapKernel(Binarize)"), s.grid, s.block, 0, stream, d, probs,
      probs_stride, BinarizeOp<Real>(), dst);
}

template <typename Real>
void FillUpper(MatrixDim d, bool mirror, Real* data, CuStream stream) {
  if (d.rows <= 1) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<FillUpperKernel<Real>>(CUCTX_LAUNCH_SITE("FillUpperKernel"), s.grid, s.block, 0,
                                          stream, d, mirror, data);
}

template <typename Real>
void Unpack(MatrixDim d, const Real* packed, PackedLayout layout, Real* dst, CuStream stream) {
  if (d.rows == 0) return;
  // The upper and symmetric layouts read (part of) the packed data transposed; the lower one reads
  // along packed rows, where the row-wise shape was faster (1024 x 1024: 4.06 against 4.16 us).
  const internal::ElementwiseShape s = layout == PackedLayout::kLower
                                           ? internal::MakeElementwiseShape(d)
                                           : internal::MakeTransposedReadShape(d);
  switch (layout) {
    case PackedLayout::kSymmetric:
      internal::Launch<UnpackKernel<Real, PackedLayout::kSymmetric>>(
          CUCTX_LAUNCH_SITE("UnpackKernel<kSymmetric>"), s.grid, s.block, 0, stream, d, packed,
          dst);
      break;
    case PackedLayout::kLower:
      internal::Launch<UnpackKernel<Real, PackedLayout::kLower>>(
          CUCTX_LAUNCH_SITE("UnpackKernel<kLower>"), s.grid, s.block, 0, stream, d, packed, dst);
      break;
    default:
      internal::Launch<UnpackKernel<Real, PackedLayout::kUpper>>(
          CUCTX_LAUNCH_SITE("UnpackKernel<kUpper>"), s.grid, s.block, 0, stream, d, packed, dst);
      break;
  }
}

template <typename Real>
void Pack(MatrixDim d, const Real* src, PackSource source, Real* packed, CuStream stream) {
  if (d.rows == 0) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(d);
  internal::Launch<PackKernel<Real>>(CUCTX_LAUNCH_SITE("PackKernel"), s.grid, s.block, 0, stream, d,
                                     src, source, packed);
}

template <typename Real>
void PackedDiag(int32_t n, PackedDiagOp op, Real alpha, Real* packed, Real* out, CuStream stream) {
  if (n == 0) return;
  internal::Launch<PackedDiagKernel<Real>>(CUCTX_LAUNCH_SITE("PackedDiagKernel"), DiagBlocks(n),
                                           kDiagThreads, 0, stream, n, op, alpha, packed, out);
}

template <typename Real>
void PackedAddVec2(int32_t n, Real alpha, const Real* v, Real* packed, CuStream stream) {
  if (n == 0) return;
  const internal::ElementwiseShape s = internal::MakeElementwiseShape(MatrixDim{n, n, n});
  internal::Launch<PackedAddVec2Kernel<Real>>(CUCTX_LAUNCH_SITE("PackedAddVec2Kernel"), s.grid,
                                              s.block, 0, stream, n, alpha, v, packed);
}

}  // namespace

void LaunchBinarizeProbs(MatrixDim d, const float* probs, int32_t ps, float* dst, CuStream st) {
  Binarize(d, probs, ps, dst, st);
}
void LaunchBinarizeProbs(MatrixDim d, const double* probs, int32_t ps, double* dst, CuStream st) {
  Binarize(d, probs, ps, dst, st);
}
void LaunchFillUpperTriangle(MatrixDim d, bool mirror, float* data, CuStream st) {
  FillUpper(d, mirror, data, st);
}
void LaunchFillUpperTriangle(MatrixDim d, bool mirror, double* data, CuStream st) {
  FillUpper(d, mirror, data, st);
}
void LaunchUnpackTriangle(MatrixDim d, const float* packed, PackedLayout layout, float* dst,
                          CuStream st) {
  Unpack(d, packed, layout, dst, st);
}
void LaunchUnpackTriangle(MatrixDim d, const double* packed, PackedLayout layout, double* dst,
                          CuStream st) {
  Unpack(d, packed, layout, dst, st);
}
void LaunchPackTriangle(MatrixDim d, const float* src, PackSource source, float* packed,
                        CuStream st) {
  Pack(d, src, source, packed, st);
}
void LaunchPackTriangle(MatrixDim d, const double* src, PackSource source, double* packed,
                        CuStream st) {
  Pack(d, src, source, packed, st);
}
void LaunchPackedDiag(int32_t n, PackedDiagOp op, float alpha, float* packed, float* out,
                      CuStream st) {
  PackedDiag(n, op, alpha, packed, out, st);
}
void LaunchPackedDiag(int32_t n, PackedDiagOp op, double alpha, double* packed, double* out,
                      CuStream st) {
  PackedDiag(n, op, alpha, packed, out, st);
}
void LaunchPackedAddVec2(int32_t n, float alpha, const float* v, float* packed, CuStream st) {
  PackedAddVec2(n, alpha, v, packed, st);
}
void LaunchPackedAddVec2(int32_t n, double alpha, const double* v, double* packed, CuStream st) {
  PackedAddVec2(n, alpha, v, packed, st);
}

}  // namespace cuctx
