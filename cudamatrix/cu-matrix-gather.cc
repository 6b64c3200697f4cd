// cudamatrix/cu-matrix-gather.cc: CuMatrixBase gather/scatter family (row and column gathers by
// index or pointer, row/column range sums, triangle copies, element lookups and adds).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-profile.h"
#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cudamatrix/internal/cu-operand.h"
#include "cudamatrix/internal/cu-storage.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace cuctx {
namespace {

using internal::HostView;
using internal::Overlap;
using internal::ShapeText;

// The kernels take Int32Pair arrays as interleaved int32s.
static_assert(sizeof(Int32Pair) == 2 * sizeof(int32) &&
                  offsetof(Int32Pair, second) == sizeof(int32),
              "Int32Pair must be two packed int32s");

// Throws naming the first pair outside a rows x cols matrix.
void CheckPairs(const char* op, const Int32Pair* pairs, size_t num, MatrixIndexT rows,
                MatrixIndexT cols) {
  for (size_t i = 0; i < num; ++i)
    CUCTX_CHECK(pairs[i].first >= 0 && pairs[i].first < rows && pairs[i].second >= 0 &&
                pairs[i].second < cols)
        << op << ": element " << i << " = (" << pairs[i].first << ", " << pairs[i].second
        << ") is outside the " << ShapeText(rows, cols) << " matrix";
}

// Throws unless `count` entries were passed for `what`.
void CheckCount(const char* op, const char* array, MatrixIndexT dim, MatrixIndexT want,
                const char* what) {
  CUCTX_CHECK(dim == want) << op << ": " << array << " has " << dim << " entries, expected " << want
                           << " (" << what << ")";
}

const int32_t* PairData(const CuArrayBase<Int32Pair>& a) {
  return reinterpret_cast<const int32_t*>(a.Data());
}

// The value checks of the NOTE ON index validation (cu-matrix.h): in sync-check mode only, the
// index array is copied back (waiting for the stream) and checked as the CPU path checks it;
// never while capturing a CuGraph (the indexes are read when the graph runs).
bool ValidateNow() { return internal::SyncChecksEnabled() && !internal::ThreadCapturesAnyGraph(); }

void ValidateIndexes(const char* op, const CuArrayBase<MatrixIndexT>& indexes, MatrixIndexT limit,
                     const char* limit_name) {
  if (!ValidateNow()) return;
  std::vector<MatrixIndexT> h;
  indexes.CopyToVec(&h);
  for (size_t i = 0; i < h.size(); ++i)
    CUCTX_CHECK(h[i] < limit) << op << ": indexes[" << i << "] = " << h[i]
                              << " is out of range for " << limit << " " << limit_name;
}

void ValidateRanges(const char* op, const CuArrayBase<Int32Pair>& ranges, MatrixIndexT limit) {
  if (!ValidateNow()) return;
  std::vector<Int32Pair> h;
  ranges.CopyToVec(&h);
  for (size_t i = 0; i < h.size(); ++i)
    CUCTX_CHECK(h[i].first >= h[i].second || (h[i].first >= 0 && h[i].second <= limit))
        << op << ": range " << i << " = [" << h[i].first << ", " << h[i].second
        << ") is not a valid range within [0, " << limit << ")";
}

void ValidatePairs(const char* op, const CuArrayBase<Int32Pair>& pairs, MatrixIndexT rows,
                   MatrixIndexT cols) {
  if (!ValidateNow()) return;
  std::vector<Int32Pair> h;
  pairs.CopyToVec(&h);
  CheckPairs(op, h.data(), h.size(), rows, cols);
}

// Checks of the by-index row ops (CopyRows, AddRows, MulRows): src rows have this matrix's
// width, one index per row, src disjoint from this matrix.
template <typename Real>
void CheckRowGather(const char* op, const CuMatrixBase<Real>& dst, const CuMatrixBase<Real>& src,
                    const CuArrayBase<MatrixIndexT>& indexes) {
  CUCTX_CHECK(src.NumCols() == dst.NumCols())
      << op << ": src " << ShapeText(src) << " has a different number of columns than *this "
      << ShapeText(dst);
  CheckCount(op, "indexes", indexes.Dim(), dst.NumRows(), "rows of *this");
  CUCTX_CHECK(!Overlap(src, dst)) << op << ": src " << ShapeText(src) << " overlaps *this "
                                  << ShapeText(dst);
}

// The same for the by-index column ops (CopyCols, AddCols).
template <typename Real>
void CheckColGather(const char* op, const CuMatrixBase<Real>& dst, const CuMatrixBase<Real>& src,
                    MatrixIndexT num_indexes) {
  CUCTX_CHECK(src.NumRows() == dst.NumRows())
      << op << ": src " << ShapeText(src) << " has a different number of rows than *this "
      << ShapeText(dst);
  CheckCount(op, "indexes", num_indexes, dst.NumCols(), "columns of *this");
  CUCTX_CHECK(!Overlap(src, dst)) << op << ": src " << ShapeText(src) << " overlaps *this "
                                  << ShapeText(dst);
}

// The GPU branches of the by-index row and column gathers (internal::RunOnGpu): in GPU mode they
// check the indexes (sync-check mode only), queue the gather and return true.
template <typename Real>
bool GatherRowsOnDevice(const char* op, RowGatherOp kind, Real alpha, const CuMatrixBase<Real>& src,
                        const CuArrayBase<MatrixIndexT>& indexes, CuMatrixBase<Real>* dst) {
  return internal::RunOnGpu([&](CuStream s) {
    ValidateIndexes(op, indexes, src.NumRows(), "source rows");
    LaunchGatherRows(dst->Dim(), kind, alpha, src.Data(), src.NumRows(), src.Stride(),
                     indexes.Data(), dst->Data(), s);
  });
}

template <typename Real>
bool GatherColsOnDevice(const char* op, bool add, const CuMatrixBase<Real>& src,
                        const CuArrayBase<MatrixIndexT>& indexes, CuMatrixBase<Real>* dst) {
  return internal::RunOnGpu([&](CuStream s) {
    ValidateIndexes(op, indexes, src.NumCols(), "source columns");
    LaunchGatherCols(dst->Dim(), src.Data(), src.NumCols(), src.Stride(), indexes.Data(), add,
                     dst->Data(), s);
  });
}

}  // namespace

// ---- copies from vectors -----------------------------------------------------------------------

template <typename Real>
void CuMatrixBase<Real>::CopyRowsFromVec(const CuVectorBase<Real>& v) {
  internal::CuOpScope op_scope("CuMatrix::CopyRowsFromVec");
  const int64 size = static_cast<int64>(num_rows_) * num_cols_;
  CUCTX_CHECK(v.Dim() == size || v.Dim() == num_cols_)
      << "CuMatrix::CopyRowsFromVec: vector dimension " << v.Dim()
      << " is neither rows * cols nor cols of " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(v, *this)) << "CuMatrix::CopyRowsFromVec: v overlaps *this "
                                  << ShapeText(*this);
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        if (v.Dim() == size)
          internal::CopyStorage2D(data_, stride_ * sizeof(Real), v.Data(), num_cols_ * sizeof(Real),
                                  num_cols_ * sizeof(Real), num_rows_);
        else  // every row reads the same elements: a source stride of 0
          LaunchCopyMat(Dim(), v.Data(), 0, false, data_, s);
      }))
    return;
  CpuView().CopyRowsFromVec(HostView(v));
}

template <typename Real>
void CuMatrixBase<Real>::CopyRowsFromVec(const VectorBase<Real>& v) {
  internal::CuOpScope op_scope("CuMatrix::CopyRowsFromVec(from host)");
  const int64 size = static_cast<int64>(num_rows_) * num_cols_;
  CUCTX_CHECK(v.Dim() == size || v.Dim() == num_cols_)
      << "CuMatrix::CopyRowsFromVec: vector dimension " << v.Dim()
      << " is neither rows * cols nor cols of " << ShapeText(*this);
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream) {
        if (v.Dim() == size) {
          CopyHostToDevice2D(data_, stride_ * sizeof(Real), v.Data(), num_cols_ * sizeof(Real),
                             num_cols_ * sizeof(Real), num_rows_);
        } else {
          CuVector<Real> staged(v);
          CopyRowsFromVec(staged);
        }
      }))
    return;
  CpuView().CopyRowsFromVec(v);
}

template <typename Real>
void CuMatrixBase<Real>::CopyColsFromVec(const CuVectorBase<Real>& v) {
  internal::CuOpScope op_scope("CuMatrix::CopyColsFromVec");
  const int64 size = static_cast<int64>(num_rows_) * num_cols_;
  CUCTX_CHECK(v.Dim() == size || v.Dim() == num_rows_)
      << "CuMatrix::CopyColsFromVec: vector dimension " << v.Dim()
      << " is neither rows * cols nor rows of " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(v, *this)) << "CuMatrix::CopyColsFromVec: v overlaps *this "
                                  << ShapeText(*this);
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        // v read as a NumCols() x NumRows() matrix (stride NumRows(), or 0 when every column is v)
        // and copied transposed.
        const int32_t src_stride = v.Dim() == size ? num_rows_ : 0;
        LaunchCopyMat(Dim(), v.Data(), src_stride, true, data_, s);
      }))
    return;
  CpuView().CopyColsFromVec(HostView(v));
}

template <typename Real>
void CuMatrixBase<Real>::CopyColFromVec(const CuVectorBase<Real>& v, MatrixIndexT col) {
  internal::CuOpScope op_scope("CuMatrix::CopyColFromVec");
  CUCTX_CHECK(col >= 0 && col < num_cols_)
      << "CuMatrix::CopyColFromVec: column " << col << " out of range for " << ShapeText(*this);
  CUCTX_CHECK(v.Dim() == num_rows_) << "CuMatrix::CopyColFromVec: v has dimension " << v.Dim()
                                    << ", expected NumRows() of " << ShapeText(*this);
  CUCTX_CHECK(!Overlap(v, *this)) << "CuMatrix::CopyColFromVec: v overlaps *this "
                                  << ShapeText(*this);
  if (num_rows_ == 0) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchCopyMat(MatrixDim{num_rows_, 1, stride_}, v.Data(), 1, false, data_ + col, s);
      }))
    return;
  CpuView().CopyColFromVec(HostView(v), col);
}

// ---- row gathers and scatters ------------------------------------------------------------------

template <typename Real>
void CuMatrixBase<Real>::CopyRows(const CuMatrixBase<Real>& src,
                                  const CuArrayBase<MatrixIndexT>& indexes) {
  internal::CuOpScope op_scope("CuMatrix::CopyRows");
  CheckRowGather("CuMatrix::CopyRows", *this, src, indexes);
  if (Empty()) return;
  if (GatherRowsOnDevice("CuMatrix::CopyRows", RowGatherOp::kCopy, Real(0), src, indexes, this))
    return;
  CpuView().CopyRows(HostView(src), indexes.Data());
}

template <typename Real>
void CuMatrixBase<Real>::AddRows(Real alpha, const CuMatrixBase<Real>& src,
                                 const CuArrayBase<MatrixIndexT>& indexes) {
  internal::CuOpScope op_scope("CuMatrix::AddRows");
  CheckRowGather("CuMatrix::AddRows", *this, src, indexes);
  if (Empty()) return;
  if (GatherRowsOnDevice("CuMatrix::AddRows", RowGatherOp::kAdd, alpha, src, indexes, this)) return;
  CpuView().AddRows(alpha, HostView(src), indexes.Data());
}

template <typename Real>
void CuMatrixBase<Real>::MulRows(const CuMatrixBase<Real>& src,
                                 const CuArrayBase<MatrixIndexT>& indexes) {
  internal::CuOpScope op_scope("CuMatrix::MulRows");
  CheckRowGather("CuMatrix::MulRows", *this, src, indexes);
  if (Empty()) return;
  if (GatherRowsOnDevice("CuMatrix::MulRows", RowGatherOp::kMul, Real(1), src, indexes, this))
    return;
  CpuView().MulRows(HostView(src), indexes.Data());
}

template <typename Real>
void CuMatrixBase<Real>::CopyRows(const CuArrayBase<const Real*>& src) {
  internal::CuOpScope op_scope("CuMatrix::CopyRows");
  CheckCount("CuMatrix::CopyRows", "src", src.Dim(), num_rows_, "rows of *this");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchGatherRowPtrs(Dim(), RowGatherOp::kCopy, Real(0), src.Data(), data_, s);
      }))
    return;
  CpuView().CopyRows(src.Data());
}

template <typename Real>
void CuMatrixBase<Real>::AddRows(Real alpha, const CuArrayBase<const Real*>& src) {
  internal::CuOpScope op_scope("CuMatrix::AddRows");
  CheckCount("CuMatrix::AddRows", "src", src.Dim(), num_rows_, "rows of *this");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchGatherRowPtrs(Dim(), RowGatherOp::kAdd, alpha, src.Data(), data_, s);
      }))
    return;
  CpuView().AddRows(alpha, src.Data());
}

template <typename Real>
void CuMatrixBase<Real>::CopyToRows(const CuArrayBase<Real*>& dst) const {
  internal::CuOpScope op_scope("CuMatrix::CopyToRows");
  CheckCount("CuMatrix::CopyToRows", "dst", dst.Dim(), num_rows_, "rows of *this");
  if (Empty()) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchScatterRowPtrs(Dim(), false, Real(0), data_, dst.Data(), s); }))
    return;
  CpuView().CopyToRows(dst.Data());
}

template <typename Real>
void CuMatrixBase<Real>::AddToRows(Real alpha, const CuArrayBase<Real*>& dst) const {
  internal::CuOpScope op_scope("CuMatrix::AddToRows");
  CheckCount("CuMatrix::AddToRows", "dst", dst.Dim(), num_rows_, "rows of *this");
  if (Empty()) return;
  if (internal::RunOnGpu(
          [&](CuStream s) { LaunchScatterRowPtrs(Dim(), true, alpha, data_, dst.Data(), s); }))
    return;
  CpuView().AddToRows(alpha, dst.Data());
}

template <typename Real>
void CuMatrixBase<Real>::AddToRows(Real alpha, const CuArrayBase<MatrixIndexT>& indexes,
                                   CuMatrixBase<Real>* dst) const {
  internal::CuOpScope op_scope("CuMatrix::AddToRows");
  CUCTX_CHECK(dst != nullptr) << "CuMatrix::AddToRows: null destination";
  CUCTX_CHECK(dst->NumCols() == num_cols_)
      << "CuMatrix::AddToRows: dst " << ShapeText(*dst)
      << " has a different number of columns than *this " << ShapeText(*this);
  CheckCount("CuMatrix::AddToRows", "indexes", indexes.Dim(), num_rows_, "rows of *this");
  CUCTX_CHECK(!Overlap(*dst, *this))
      << "CuMatrix::AddToRows: dst " << ShapeText(*dst) << " overlaps *this " << ShapeText(*this);
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        ValidateIndexes("CuMatrix::AddToRows", indexes, dst->NumRows(), "destination rows");
        LaunchAddToRows(Dim(), alpha, data_, indexes.Data(), dst->NumRows(), dst->Stride(),
                        dst->Data(), s);
      }))
    return;
  SubMatrix<Real> host_dst = HostView(*dst);
  CpuView().AddToRows(alpha, indexes.Data(), &host_dst);
}

// ---- column gathers and range sums -------------------------------------------------------------

template <typename Real>
void CuMatrixBase<Real>::CopyCols(const CuMatrixBase<Real>& src,
                                  const CuArrayBase<MatrixIndexT>& indexes) {
  internal::CuOpScope op_scope("CuMatrix::CopyCols");
  CheckColGather("CuMatrix::CopyCols", *this, src, indexes.Dim());
  if (Empty()) return;
  if (GatherColsOnDevice("CuMatrix::CopyCols", false, src, indexes, this)) return;
  CpuView().CopyCols(HostView(src), indexes.Data());
}

template <typename Real>
void CuMatrixBase<Real>::AddCols(const CuMatrixBase<Real>& src,
                                 const CuArrayBase<MatrixIndexT>& indexes) {
  internal::CuOpScope op_scope("CuMatrix::AddCols");
  CheckColGather("CuMatrix::AddCols", *this, src, indexes.Dim());
  if (Empty()) return;
  if (GatherColsOnDevice("CuMatrix::AddCols", true, src, indexes, this)) return;
  CpuView().AddCols(HostView(src), indexes.Data());
}

template <typename Real>
void CuMatrixBase<Real>::AddRowRanges(const CuMatrixBase<Real>& src,
                                      const CuArrayBase<Int32Pair>& indexes) {
  internal::CuOpScope op_scope("CuMatrix::AddRowRanges");
  CUCTX_CHECK(src.NumCols() == num_cols_)
      << "CuMatrix::AddRowRanges: src " << ShapeText(src)
      << " has a different number of columns than *this " << ShapeText(*this);
  CheckCount("CuMatrix::AddRowRanges", "indexes", indexes.Dim(), num_rows_, "rows of *this");
  CUCTX_CHECK(!Overlap(src, *this))
      << "CuMatrix::AddRowRanges: src " << ShapeText(src) << " overlaps *this " << ShapeText(*this);
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        ValidateRanges("CuMatrix::AddRowRanges", indexes, src.NumRows());
        LaunchAddRowRanges(Dim(), src.Data(), src.NumRows(), src.Stride(), PairData(indexes), data_,
                           s);
      }))
    return;
  CpuView().AddRowRanges(HostView(src), indexes.Data());
}

template <typename Real>
void CuMatrixBase<Real>::SumColumnRanges(const CuMatrixBase<Real>& src,
                                         const CuArrayBase<Int32Pair>& indexes) {
  internal::CuOpScope op_scope("CuMatrix::SumColumnRanges");
  CheckColGather("CuMatrix::SumColumnRanges", *this, src, indexes.Dim());
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        ValidateRanges("CuMatrix::SumColumnRanges", indexes, src.NumCols());
        LaunchSumColumnRanges(Dim(), src.Data(), src.NumCols(), src.Stride(), PairData(indexes),
                              data_, s);
      }))
    return;
  CpuView().SumColumnRanges(HostView(src), indexes.Data());
}

// ---- triangles ---------------------------------------------------------------------------------

template <typename Real>
void CuMatrixBase<Real>::CopyLowerToUpper() {
  internal::CuOpScope op_scope("CuMatrix::CopyLowerToUpper");
  CUCTX_CHECK(num_rows_ == num_cols_)
      << "CuMatrix::CopyLowerToUpper: matrix " << ShapeText(*this) << " is not square";
  if (num_rows_ <= 1) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchCopyTriangle(Dim(), true, data_, s); })) return;
  CpuView().CopyLowerToUpper();
}

template <typename Real>
void CuMatrixBase<Real>::CopyUpperToLower() {
  internal::CuOpScope op_scope("CuMatrix::CopyUpperToLower");
  CUCTX_CHECK(num_rows_ == num_cols_)
      << "CuMatrix::CopyUpperToLower: matrix " << ShapeText(*this) << " is not square";
  if (num_rows_ <= 1) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchCopyTriangle(Dim(), false, data_, s); })) return;
  CpuView().CopyUpperToLower();
}

template <typename Real>
void CuMatrixBase<Real>::SetZeroAboveDiag() {
  internal::CuOpScope op_scope("CuMatrix::SetZeroAboveDiag");
  if (num_rows_ == 0 || num_cols_ <= 1) return;
  if (internal::RunOnGpu([&](CuStream s) { LaunchSetZeroAboveDiag(Dim(), data_, s); })) return;
  CpuView().SetZeroAboveDiag();
}

// ---- element lookups and adds ------------------------------------------------------------------

template <typename Real>
void CuMatrixBase<Real>::Lookup(const std::vector<Int32Pair>& indexes, Real* output) const {
  internal::CuOpScope op_scope("CuMatrix::Lookup");
  CheckPairs("CuMatrix::Lookup", indexes.data(), indexes.size(), num_rows_, num_cols_);
  if (indexes.empty()) return;
  CUCTX_CHECK(output != nullptr) << "CuMatrix::Lookup: null output for " << indexes.size()
                                 << " values";
  if (internal::RunOnGpu([&](CuStream s) {
        CuArray<Int32Pair> d_indexes(indexes);
        CuArray<Real> d_output(d_indexes.Dim(), kUndefined);
        LaunchLookup(Dim(), data_, PairData(d_indexes), d_indexes.Dim(), d_output.Data(), s);
        d_output.CopyToHost(output);  // waits for the gather
      }))
    return;
  CpuView().Lookup(indexes, output);
}

template <typename Real>
void CuMatrixBase<Real>::Lookup(const CuArrayBase<Int32Pair>& indexes, Real* output) const {
  internal::CuOpScope op_scope("CuMatrix::Lookup");
  if (indexes.Dim() == 0) return;
  CUCTX_CHECK(output != nullptr) << "CuMatrix::Lookup: null output for " << indexes.Dim()
                                 << " values";
  if (internal::RunOnGpu([&](CuStream s) {
        ValidatePairs("CuMatrix::Lookup", indexes, num_rows_, num_cols_);
        LaunchLookup(Dim(), data_, PairData(indexes), indexes.Dim(), output, s);
      }))
    return;
  CpuView().Lookup(indexes.Data(), indexes.Dim(), output);
}

template <typename Real>
void CuMatrixBase<Real>::AddElements(Real alpha, const std::vector<MatrixElement<Real>>& input) {
  internal::CuOpScope op_scope("CuMatrix::AddElements");
  std::vector<Int32Pair> pairs(input.size());
  for (size_t i = 0; i < input.size(); ++i) pairs[i] = Int32Pair{input[i].row, input[i].column};
  CheckPairs("CuMatrix::AddElements", pairs.data(), pairs.size(), num_rows_, num_cols_);
  if (input.empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        std::vector<Real> weights(input.size());
        for (size_t i = 0; i < input.size(); ++i) weights[i] = input[i].weight;
        CuArray<Int32Pair> d_pairs(pairs);
        CuArray<Real> d_weights(weights);
        LaunchAddElements(Dim(), alpha, PairData(d_pairs), d_weights.Data(), d_pairs.Dim(), data_,
                          s);
      }))
    return;
  CpuView().AddElements(alpha, input);
}

template <typename Real>
void CuMatrixBase<Real>::AddElements(Real alpha, const CuArrayBase<Int32Pair>& indexes,
                                     const Real* input) {
  internal::CuOpScope op_scope("CuMatrix::AddElements");
  if (indexes.Dim() == 0) return;
  CUCTX_CHECK(input != nullptr) << "CuMatrix::AddElements: null input for " << indexes.Dim()
                                << " elements";
  if (internal::RunOnGpu([&](CuStream s) {
        ValidatePairs("CuMatrix::AddElements", indexes, num_rows_, num_cols_);
        const CuVector<Real> d_input(SubVector<Real>(const_cast<Real*>(input), indexes.Dim()));
        LaunchAddElements(Dim(), alpha, PairData(indexes), d_input.Data(), indexes.Dim(), data_, s);
      }))
    return;
  CpuView().AddElements(alpha, indexes.Data(), indexes.Dim(), input);
}

template <typename Real>
void CuMatrixBase<Real>::AddToElements(Real alpha, const CuArrayBase<int32>& elements) {
  internal::CuOpScope op_scope("CuMatrix::AddToElements");
  CheckCount("CuMatrix::AddToElements", "elements", elements.Dim(), num_rows_, "rows of *this");
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        ValidateIndexes("CuMatrix::AddToElements", elements, num_cols_, "columns");
        LaunchAddToElements(Dim(), alpha, elements.Data(), data_, s);
      }))
    return;
  CpuView().AddToElements(alpha, elements.Data());
}

template <typename Real>
void CuMatrixBase<Real>::EqualElementMask(const CuMatrixBase<Real>& mat,
                                          CuMatrix<Real>* mask) const {
  internal::CuOpScope op_scope("CuMatrix::EqualElementMask");
  CUCTX_CHECK(mat.NumRows() == num_rows_ && mat.NumCols() == num_cols_)
      << "CuMatrix::EqualElementMask: mat " << ShapeText(mat) << " does not match *this "
      << ShapeText(*this);
  CUCTX_CHECK(mask != nullptr) << "CuMatrix::EqualElementMask: null mask";
  const CuMatrixBase<Real>* m = mask;
  CUCTX_CHECK(m != this && m != &mat && !Overlap(*m, *this) && !Overlap(*m, mat))
      << "CuMatrix::EqualElementMask: mask must be a separate matrix";
  mask->Resize(num_rows_, num_cols_, kUndefined);
  if (Empty()) return;
  if (internal::RunOnGpu([&](CuStream s) {
        LaunchEqualElementMask(Dim(), data_, mat.Data(), mat.Stride(), mask->Data(), mask->Stride(),
                               s);
      }))
    return;
  Matrix<Real> host_mask;
  CpuView().EqualElementMask(HostView(mat), &host_mask);
  mask->CopyFromMat(host_mask);
}

#define CUCTX_INSTANTIATE_CU_GATHER_(R)                                                           \
  template void CuMatrixBase<R>::CopyRowsFromVec(const CuVectorBase<R>&);                         \
  template void CuMatrixBase<R>::CopyRowsFromVec(const VectorBase<R>&);                           \
  template void CuMatrixBase<R>::CopyColsFromVec(const CuVectorBase<R>&);                         \
  template void CuMatrixBase<R>::CopyColFromVec(const CuVectorBase<R>&, MatrixIndexT);            \
  template void CuMatrixBase<R>::CopyRows(const CuMatrixBase<R>&,                                 \
                                          const CuArrayBase<MatrixIndexT>&);                      \
  template void CuMatrixBase<R>::CopyRows(const CuArrayBase<const R*>&);                          \
  template void CuMatrixBase<R>::CopyToRows(const CuArrayBase<R*>&) const;                        \
  template void CuMatrixBase<R>::AddRows(R, const CuMatrixBase<R>&,                               \
                                         const CuArrayBase<MatrixIndexT>&);                       \
  template void CuMatrixBase<R>::AddRows(R, const CuArrayBase<const R*>&);                        \
  template void CuMatrixBase<R>::AddToRows(R, const CuArrayBase<MatrixIndexT>&, CuMatrixBase<R>*) \
      const;                                                                                      \
  template void CuMatrixBase<R>::AddToRows(R, const CuArrayBase<R*>&) const;                      \
  template void CuMatrixBase<R>::CopyCols(const CuMatrixBase<R>&,                                 \
                                          const CuArrayBase<MatrixIndexT>&);                      \
  template void CuMatrixBase<R>::AddCols(const CuMatrixBase<R>&,                                  \
                                         const CuArrayBase<MatrixIndexT>&);                       \
  template void CuMatrixBase<R>::MulRows(const CuMatrixBase<R>&,                                  \
                                         const CuArrayBase<MatrixIndexT>&);                       \
  template void CuMatrixBase<R>::AddRowRanges(const CuMatrixBase<R>&,                             \
                                              const CuArrayBase<Int32Pair>&);                     \
  template void CuMatrixBase<R>::SumColumnRanges(const CuMatrixBase<R>&,                          \
                                                 const CuArrayBase<Int32Pair>&);                  \
  template void CuMatrixBase<R>::CopyLowerToUpper();                                              \
  template void CuMatrixBase<R>::CopyUpperToLower();                                              \
  template void CuMatrixBase<R>::SetZeroAboveDiag();                                              \
  template void CuMatrixBase<R>::Lookup(const std::vector<Int32Pair>&, R*) const;                 \
  template void CuMatrixBase<R>::Lookup(const CuArrayBase<Int32Pair>&, R*) const;                 \
  template void CuMatrixBase<R>::AddElements(R, const std::vector<MatrixElement<R>>&);            \
  template void CuMatrixBase<R>::AddElements(R, const CuArrayBase<Int32Pair>&, const R*);         \
  template void CuMatrixBase<R>::AddToElements(R, const CuArrayBase<int32>&);                     \
  template void CuMatrixBase<R>::EqualElementMask(const CuMatrixBase<R>&, CuMatrix<R>*) const;

CUCTX_INSTANTIATE_CU_GATHER_(float)
CUCTX_INSTANTIATE_CU_GATHER_(double)

#undef CUCTX_INSTANTIATE_CU_GATHER_

}  // namespace cuctx
