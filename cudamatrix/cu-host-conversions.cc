// cudamatrix/cu-host-conversions.cc: conversions between the matrix/ classes and the Cu classes
// that matrix/ headers declare with forward declarations only (Kaldi parity), plus the Cu
// constructors from packed matrices and CuSubVector of a matrix row.
// SPDX-License-Identifier: Apache-2.0
//
// Every host transfer goes through the Cu classes' own CopyToMat / CopyToVec / CopyToPacked,
// which stage through the pinned buffers of cu-copy.h; nothing here touches the CUDA runtime.
#include "base/error.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-sp-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-operand.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"

#include <cstddef>
#include <type_traits>

namespace cuctx {
namespace {

using internal::ShapeText;

// The packed element count of an n x n packed matrix.
MatrixIndexT PackedCount(MatrixIndexT n) {
  return static_cast<MatrixIndexT>(static_cast<size_t>(n) * (static_cast<size_t>(n) + 1) / 2);
}

}  // namespace

// ---- matrix/ side -------------------------------------------------------------------------------

template <typename Real>
template <typename OtherReal>
void MatrixBase<Real>::CopyFromMat(const CuMatrixBase<OtherReal>& M, MatrixTransposeType trans) {
  const MatrixIndexT rows = trans == kNoTrans ? M.NumRows() : M.NumCols();
  const MatrixIndexT cols = trans == kNoTrans ? M.NumCols() : M.NumRows();
  CUCTX_CHECK(rows == num_rows_ && cols == num_cols_)
      << "MatrixBase::CopyFromMat: CuMatrix " << ShapeText(M)
      << (trans == kNoTrans ? "" : " (transposed)") << " does not match matrix "
      << ShapeText(num_rows_, num_cols_);
  M.CopyToMat(this, trans);
}

template <typename Real>
template <typename OtherReal>
Matrix<Real>::Matrix(const CuMatrixBase<OtherReal>& M, MatrixTransposeType trans) {
  if (trans == kNoTrans)
    this->Resize(M.NumRows(), M.NumCols(), kUndefined);
  else
    this->Resize(M.NumCols(), M.NumRows(), kUndefined);
  this->CopyFromMat(M, trans);
}

template <typename Real>
template <typename OtherReal>
void VectorBase<Real>::CopyFromVec(const CuVectorBase<OtherReal>& v) {
  CUCTX_CHECK(v.Dim() == dim_) << "VectorBase::CopyFromVec: CuVector of dim " << v.Dim()
                               << " does not match vector of dim " << dim_;
  v.CopyToVec(this);
}

template <typename Real>
template <typename OtherReal>
Vector<Real>::Vector(const CuVectorBase<OtherReal>& v) {
  this->Resize(v.Dim(), kUndefined);
  this->CopyFromVec(v);
}

template <typename Real>
SpMatrix<Real>::SpMatrix(const CuSpMatrix<Real>& cu) {
  this->Resize(cu.NumRows(), kUndefined);
  cu.CopyToSp(this);
}

template <typename Real>
TpMatrix<Real>::TpMatrix(const CuTpMatrix<Real>& cu) {
  this->Resize(cu.NumRows(), kUndefined);
  cu.CopyToPacked(this);
}

// ---- cudamatrix/ side ---------------------------------------------------------------------------

template <typename Real>
CuMatrix<Real>::CuMatrix(const CuSpMatrix<Real>& M) {
  Resize(M.NumRows(), M.NumRows(), kUndefined);
  this->CopyFromSp(M);
}

template <typename Real>
template <typename OtherReal>
CuMatrix<Real>::CuMatrix(const CuTpMatrix<OtherReal>& M, MatrixTransposeType trans) {
  const MatrixIndexT n = M.NumRows();
  Resize(n, n, kUndefined);
  if constexpr (std::is_same<Real, OtherReal>::value) {
    this->CopyFromTp(M, trans);
  } else {
    // Convert the packed elements on the device (CuVectorBase's converting copy), then unpack.
    CuTpMatrix<Real> converted(n, kUndefined);
    CuSubVector<Real> dst(converted.Data(), PackedCount(n));
    dst.CopyFromVec(CuSubVector<OtherReal>(M.Data(), PackedCount(n)));
    this->CopyFromTp(converted, trans);
  }
}

namespace {

// The address of row `row` of m, after checking it (nullptr for a row of no columns).
template <typename Real>
const Real* CheckedRow(const CuMatrixBase<Real>& m, MatrixIndexT row) {
  CUCTX_CHECK(row >= 0 && row < m.NumRows())
      << "CuSubVector: row " << row << " is outside a " << ShapeText(m) << " matrix";
  return m.NumCols() == 0 ? nullptr : m.RowData(row);
}

}  // namespace

template <typename Real>
CuSubVector<Real>::CuSubVector(const CuMatrixBase<Real>& matrix, MatrixIndexT row)
    : CuVectorBase<Real>(const_cast<Real*>(CheckedRow(matrix, row)), matrix.NumCols(),
                         matrix.DeviceId()) {}

// ---- instantiations -----------------------------------------------------------------------------

template <typename Real>
void VectorBase<Real>::CopyRowsFromMat(const CuMatrixBase<Real>& M) {
  CUCTX_CHECK(static_cast<int64>(M.NumRows()) * M.NumCols() == dim_)
      << "Vector::CopyRowsFromMat: M is " << M.NumRows() << "x" << M.NumCols()
      << " but the vector has dimension " << dim_;
  if (dim_ == 0) return;
  // The vector viewed as a matrix with M's shape and no padding: one device-to-host copy.
  SubMatrix<Real> rows(data_, M.NumRows(), M.NumCols(), M.NumCols());
  M.CopyToMat(&rows);
}

template <typename Real>
void MatrixBase<Real>::CopyRowsFromVec(const CuVectorBase<Real>& v) {
  Vector<Real> host(v);  // read back once; the host form checks the dimension
  CopyRowsFromVec(host);
}

#define CUCTX_INSTANTIATE_CONVERSIONS_(R, O)                                             \
  template void MatrixBase<R>::CopyFromMat(const CuMatrixBase<O>&, MatrixTransposeType); \
  template Matrix<R>::Matrix(const CuMatrixBase<O>&, MatrixTransposeType);               \
  template void VectorBase<R>::CopyFromVec(const CuVectorBase<O>&);                      \
  template Vector<R>::Vector(const CuVectorBase<O>&);                                    \
  template CuMatrix<R>::CuMatrix(const CuTpMatrix<O>&, MatrixTransposeType)
CUCTX_INSTANTIATE_CONVERSIONS_(float, float);
CUCTX_INSTANTIATE_CONVERSIONS_(float, double);
CUCTX_INSTANTIATE_CONVERSIONS_(double, float);
CUCTX_INSTANTIATE_CONVERSIONS_(double, double);
#undef CUCTX_INSTANTIATE_CONVERSIONS_

template SpMatrix<float>::SpMatrix(const CuSpMatrix<float>&);
template SpMatrix<double>::SpMatrix(const CuSpMatrix<double>&);
template TpMatrix<float>::TpMatrix(const CuTpMatrix<float>&);
template TpMatrix<double>::TpMatrix(const CuTpMatrix<double>&);
template CuMatrix<float>::CuMatrix(const CuSpMatrix<float>&);
template CuMatrix<double>::CuMatrix(const CuSpMatrix<double>&);
template CuSubVector<float>::CuSubVector(const CuMatrixBase<float>&, MatrixIndexT);
template CuSubVector<double>::CuSubVector(const CuMatrixBase<double>&, MatrixIndexT);
template void VectorBase<float>::CopyRowsFromMat(const CuMatrixBase<float>&);
template void VectorBase<double>::CopyRowsFromMat(const CuMatrixBase<double>&);
template void MatrixBase<float>::CopyRowsFromVec(const CuVectorBase<float>&);
template void MatrixBase<double>::CopyRowsFromVec(const CuVectorBase<double>&);

}  // namespace cuctx
