// cudamatrix/cu-packed-matrix.cc: CuPackedMatrix storage, copies and diagonal ops, the packed <->
// full conversions, and CuVectorBase::CopyDiagFromPacked.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-packed-matrix.h"

#include "base/error.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-rand.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace cuctx {
namespace {

// The largest n whose n (n + 1) / 2 elements fit in MatrixIndexT.
constexpr MatrixIndexT kMaxPackedRows = 65535;

size_t PackedIndex(MatrixIndexT r, MatrixIndexT c) {
  return static_cast<size_t>(r) * (static_cast<size_t>(r) + 1) / 2 + static_cast<size_t>(c);
}

}  // namespace

template <typename Real>
void CuPackedMatrix<Real>::Resize(MatrixIndexT n, MatrixResizeType resize_type) {
  internal::CuOpScope op_scope("CuPackedMatrix::Resize");
  CUCTX_CHECK(n >= 0 && n <= kMaxPackedRows)
      << "CuPackedMatrix::Resize: size " << n << " is outside [0, " << kMaxPackedRows << "]";
  if (n == num_rows_ && resize_type != kSetZero) return;
  if (n == num_rows_) {
    SetZero();
    return;
  }
  const size_t bytes = static_cast<size_t>(n) * (static_cast<size_t>(n) + 1) / 2 * sizeof(Real);
  Real* data = static_cast<Real*>(internal::AllocStorage(bytes));
  size_t kept = 0;
  if (resize_type == kCopyData) {
    // The leading k x k block is the first k (k + 1) / 2 packed elements.
    kept = std::min(bytes, SizeInBytes());
    internal::CopyStorage2D(data, kept, data_, kept, kept, 1);
  }
  if (resize_type != kUndefined)
    internal::ZeroStorage2D(data + kept / sizeof(Real), bytes - kept, bytes - kept, 1);
  Destroy();
  data_ = data;
  num_rows_ = n;
}

template <typename Real>
void CuPackedMatrix<Real>::Destroy() {
  internal::FreeStorage(data_);
  data_ = nullptr;
  num_rows_ = 0;
}

template <typename Real>
void CuPackedMatrix<Real>::Swap(CuPackedMatrix<Real>* other) {
  std::swap(data_, other->data_);
  std::swap(num_rows_, other->num_rows_);
}

template <typename Real>
void CuPackedMatrix<Real>::Swap(PackedMatrix<Real>* other) {
  PackedMatrix<Real> mine(num_rows_, kUndefined);
  CopyToPacked(&mine);
  Resize(other->NumRows(), kUndefined);
  CopyFromPacked(*other);
  other->Swap(&mine);
}

template <typename Real>
void CuPackedMatrix<Real>::SetZero() {
  internal::CuOpScope op_scope("CuPackedMatrix::SetZero");
  internal::ZeroStorage2D(data_, SizeInBytes(), SizeInBytes(), 1);
}

template <typename Real>
void CuPackedMatrix<Real>::SetUnit() {
  SetZero();
  DiagOp(PackedDiagOp::kSet, 1);
}

template <typename Real>
void CuPackedMatrix<Real>::SetRandn() {
  CuSubVector<Real> elements = Elements();
  CuRand<Real>().RandGaussian(&elements);
}

template <typename Real>
void CuPackedMatrix<Real>::SetDiag(Real alpha) {
  DiagOp(PackedDiagOp::kSet, alpha);
}

template <typename Real>
void CuPackedMatrix<Real>::AddToDiag(Real alpha) {
  DiagOp(PackedDiagOp::kAdd, alpha);
}

template <typename Real>
void CuPackedMatrix<Real>::ScaleDiag(Real alpha) {
  DiagOp(PackedDiagOp::kScale, alpha);
}

template <typename Real>
void CuPackedMatrix<Real>::Scale(Real alpha) {
  Elements().Scale(alpha);
}

template <typename Real>
Real CuPackedMatrix<Real>::Trace() const {
  CuVector<Real> diag(num_rows_, kUndefined);
  diag.CopyDiagFromPacked(*this);
  return diag.Sum();
}

template <typename Real>
void CuPackedMatrix<Real>::DiagOp(PackedDiagOp op, Real alpha) {
  internal::CuOpScope op_scope("CuPackedMatrix::DiagOp");
  if (num_rows_ == 0) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchPackedDiag(num_rows_, op, alpha, data_, nullptr, s); }))
    return;
  for (MatrixIndexT i = 0; i < num_rows_; ++i) {
    Real& d = data_[PackedIndex(i, i)];
    d = op == PackedDiagOp::kSet ? alpha : op == PackedDiagOp::kAdd ? d + alpha : d * alpha;
  }
}

template <typename Real>
void CuPackedMatrix<Real>::CopyFromPacked(const CuPackedMatrix<Real>& src) {
  internal::CuOpScope op_scope("CuPackedMatrix::CopyFromPacked");
  CUCTX_CHECK(src.NumRows() == num_rows_) << "CuPackedMatrix::CopyFromPacked: source size "
                                          << src.NumRows() << " does not match " << num_rows_;
  internal::CopyStorage2D(data_, SizeInBytes(), src.Data(), SizeInBytes(), SizeInBytes(), 1);
}

template <typename Real>
void CuPackedMatrix<Real>::CopyFromPacked(const PackedMatrix<Real>& src) {
  internal::CuOpScope op_scope("CuPackedMatrix::CopyFromPacked(from host)");
  CUCTX_CHECK(src.NumRows() == num_rows_) << "CuPackedMatrix::CopyFromPacked: source size "
                                          << src.NumRows() << " does not match " << num_rows_;
  CopyHostToDevice(data_, src.Data(), SizeInBytes());
}

template <typename Real>
void CuPackedMatrix<Real>::CopyToPacked(PackedMatrix<Real>* dst) const {
  internal::CuOpScope op_scope("CuPackedMatrix::CopyToPacked");
  CUCTX_CHECK(dst->NumRows() == num_rows_) << "CuPackedMatrix::CopyToPacked: destination size "
                                           << dst->NumRows() << " does not match " << num_rows_;
  CopyDeviceToHost(dst->Data(), data_, SizeInBytes());
}

template <typename Real>
Real CuPackedMatrix<Real>::ReadElement(size_t index) const {
  internal::CuOpScope op_scope("CuPackedMatrix::ReadElement");
  Real value = 0;
  CopyDeviceToHost(&value, data_ + index, sizeof(Real));
  return value;
}

template <typename Real>
Real CuPackedMatrix<Real>::operator()(MatrixIndexT r, MatrixIndexT c) const {
  CUCTX_CHECK(r >= 0 && r < num_rows_ && c >= 0 && c < num_rows_)
      << "CuPackedMatrix: element (" << r << ", " << c << ") is outside a " << num_rows_ << "x"
      << num_rows_ << " packed matrix";
  return ReadElement(c <= r ? PackedIndex(r, c) : PackedIndex(c, r));  // mirrored, as Kaldi
}

template <typename Real>
void CuPackedMatrix<Real>::Read(std::istream& is, bool binary) {
  PackedMatrix<Real> host;
  host.Read(is, binary);
  Resize(host.NumRows(), kUndefined);
  CopyFromPacked(host);
}

template <typename Real>
void CuPackedMatrix<Real>::Write(std::ostream& os, bool binary) const {
  PackedMatrix<Real> host(num_rows_, kUndefined);
  CopyToPacked(&host);
  host.Write(os, binary);
}

template <typename Real>
void CuVectorBase<Real>::CopyDiagFromPacked(const CuPackedMatrix<Real>& M) {
  internal::CuOpScope op_scope("CuVector::CopyDiagFromPacked");
  CUCTX_CHECK(dim_ == M.NumRows()) << "CuVector::CopyDiagFromPacked: vector of dim " << dim_
                                   << " does not match packed matrix of size " << M.NumRows();
  if (dim_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchPackedDiag(dim_, PackedDiagOp::kCopyOut, Real(0), const_cast<Real*>(M.Data()), data_,
                         s);
      }))
    return;
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = M.Data()[PackedIndex(i, i)];
}

namespace internal {

template <typename Real>
void UnpackTriangle(const Real* packed, PackedLayout layout, CuMatrixBase<Real>* dst) {
  const MatrixIndexT n = dst->NumRows();
  CUCTX_ASSERT(dst->NumCols() == n);
  CUCTX_ASSERT(n <= kMaxPackedRows);  // the kernels' packed offsets are 32-bit
  if (n == 0) return;
  if (internal::RunOnGpu([&](CuStream) {
        LaunchUnpackTriangle(dst->Dim(), packed, layout, dst->Data(), ThreadStream());
      }))
    return;
  SubMatrix<Real> m = HostView(*dst);
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c < n; ++c) {
      const bool lower = c <= r;
      switch (layout) {
        case PackedLayout::kSymmetric:
          m(r, c) = lower ? packed[PackedIndex(r, c)] : packed[PackedIndex(c, r)];
          break;
        case PackedLayout::kLower:
          m(r, c) = lower ? packed[PackedIndex(r, c)] : Real(0);
          break;
        case PackedLayout::kUpper:
          m(r, c) = r <= c ? packed[PackedIndex(c, r)] : Real(0);
          break;
      }
    }
}

template <typename Real>
void PackTriangle(const CuMatrixBase<Real>& src, PackSource source, Real* packed) {
  const MatrixIndexT n = src.NumRows();
  CUCTX_ASSERT(src.NumCols() == n);
  CUCTX_ASSERT(n <= kMaxPackedRows);  // the kernels' packed offsets are 32-bit
  if (n == 0) return;
  if (internal::RunOnGpu([&](CuStream) {
        LaunchPackTriangle(src.Dim(), src.Data(), source, packed, ThreadStream());
      }))
    return;
  const SubMatrix<Real> m = HostView(src);
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c) {
      const Real lower = m(r, c), upper = m(c, r);
      packed[PackedIndex(r, c)] = source == PackSource::kLower   ? lower
                                  : source == PackSource::kUpper ? upper
                                                                 : Real(0.5) * (lower + upper);
    }
}

template void UnpackTriangle(const float*, PackedLayout, CuMatrixBase<float>*);
template void UnpackTriangle(const double*, PackedLayout, CuMatrixBase<double>*);
template void PackTriangle(const CuMatrixBase<float>&, PackSource, float*);
template void PackTriangle(const CuMatrixBase<double>&, PackSource, double*);

}  // namespace internal

template class CuPackedMatrix<float>;
template class CuPackedMatrix<double>;
template void CuVectorBase<float>::CopyDiagFromPacked(const CuPackedMatrix<float>&);
template void CuVectorBase<double>::CopyDiagFromPacked(const CuPackedMatrix<double>&);

}  // namespace cuctx
