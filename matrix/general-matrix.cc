// matrix/general-matrix.cc: GeneralMatrix (full / compressed / sparse wrapper).
// SPDX-License-Identifier: Apache-2.0
#include "matrix/general-matrix.h"

#include "base/error.h"

#include <algorithm>

namespace cuctx {

namespace {

const char* TypeName(GeneralMatrixType t) {
  switch (t) {
    case kFullMatrix:
      return "kFullMatrix";
    case kCompressedMatrix:
      return "kCompressedMatrix";
    default:
      return "kSparseMatrix";
  }
}

}  // namespace

GeneralMatrix& GeneralMatrix::operator=(const MatrixBase<BaseFloat>& mat) {
  Matrix<BaseFloat> copy(mat);  // copy first: mat may be (a view of) our own mat_
  Clear();
  mat_.Swap(&copy);
  return *this;
}

GeneralMatrix& GeneralMatrix::operator=(const CompressedMatrix& cmat) {
  CompressedMatrix copy(cmat);
  Clear();
  cmat_.Swap(&copy);
  return *this;
}

GeneralMatrix& GeneralMatrix::operator=(const SparseMatrix<BaseFloat>& smat) {
  SparseMatrix<BaseFloat> copy(smat);
  Clear();
  smat_.Swap(&copy);
  return *this;
}

GeneralMatrixType GeneralMatrix::Type() const {
  if (smat_.NumRows() != 0) return kSparseMatrix;
  if (cmat_.NumRows() != 0) return kCompressedMatrix;
  return kFullMatrix;
}

MatrixIndexT GeneralMatrix::NumRows() const {
  return std::max({mat_.NumRows(), cmat_.NumRows(), smat_.NumRows()});
}

MatrixIndexT GeneralMatrix::NumCols() const {
  switch (Type()) {
    case kSparseMatrix:
      return smat_.NumCols();
    case kCompressedMatrix:
      return cmat_.NumCols();
    default:
      return mat_.NumCols();
  }
}

void GeneralMatrix::Compress() {
  if (mat_.NumRows() == 0 || mat_.NumCols() == 0) return;
  cmat_.CopyFromMat(mat_);
  mat_.Resize(0, 0);
}

void GeneralMatrix::Uncompress() {
  if (cmat_.NumRows() == 0) return;
  Matrix<BaseFloat> full(cmat_);
  cmat_.Clear();
  mat_.Swap(&full);
}

void GeneralMatrix::Write(std::ostream& os, bool binary) const {
  switch (Type()) {
    case kSparseMatrix:
      smat_.Write(os, binary);
      break;
    case kCompressedMatrix:
      cmat_.Write(os, binary);
      break;
    default:
      mat_.Write(os, binary);
  }
}

void GeneralMatrix::Read(std::istream& is, bool binary) {
  Clear();
  int first;
  if (binary) {
    first = is.peek();
  } else {
    is >> std::ws;
    first = is.peek();
  }
  if (binary && first == 'C')
    cmat_.Read(is, binary);
  else if ((binary && first == 'S') || (!binary && first == 'r'))
    smat_.Read(is, binary);
  else
    mat_.Read(is, binary);
}

const SparseMatrix<BaseFloat>& GeneralMatrix::GetSparseMatrix() const {
  CUCTX_CHECK(Type() == kSparseMatrix || NumRows() == 0)
      << "GeneralMatrix::GetSparseMatrix: matrix is of type " << TypeName(Type());
  return smat_;
}

const CompressedMatrix& GeneralMatrix::GetCompressedMatrix() const {
  CUCTX_CHECK(Type() == kCompressedMatrix || NumRows() == 0)
      << "GeneralMatrix::GetCompressedMatrix: matrix is of type " << TypeName(Type());
  return cmat_;
}

const Matrix<BaseFloat>& GeneralMatrix::GetFullMatrix() const {
  CUCTX_CHECK(Type() == kFullMatrix || NumRows() == 0)
      << "GeneralMatrix::GetFullMatrix: matrix is of type " << TypeName(Type());
  return mat_;
}

void GeneralMatrix::SwapSparseMatrix(SparseMatrix<BaseFloat>* smat) {
  CUCTX_CHECK(smat != nullptr) << "GeneralMatrix::SwapSparseMatrix: null argument";
  CUCTX_CHECK(Type() == kSparseMatrix || NumRows() == 0)
      << "GeneralMatrix::SwapSparseMatrix: matrix is of type " << TypeName(Type());
  smat_.Swap(smat);
}

void GeneralMatrix::SwapCompressedMatrix(CompressedMatrix* cmat) {
  CUCTX_CHECK(cmat != nullptr) << "GeneralMatrix::SwapCompressedMatrix: null argument";
  CUCTX_CHECK(Type() == kCompressedMatrix || NumRows() == 0)
      << "GeneralMatrix::SwapCompressedMatrix: matrix is of type " << TypeName(Type());
  cmat_.Swap(cmat);
}

void GeneralMatrix::SwapFullMatrix(Matrix<BaseFloat>* mat) {
  CUCTX_CHECK(mat != nullptr) << "GeneralMatrix::SwapFullMatrix: null argument";
  CUCTX_CHECK(Type() == kFullMatrix || NumRows() == 0)
      << "GeneralMatrix::SwapFullMatrix: matrix is of type " << TypeName(Type());
  mat_.Swap(mat);
}

void GeneralMatrix::GetMatrix(Matrix<BaseFloat>* mat) const {
  CUCTX_CHECK(mat != nullptr) << "GeneralMatrix::GetMatrix: null argument";
  if (Type() == kFullMatrix) {
    *mat = mat_;
    return;
  }
  mat->Resize(NumRows(), NumCols(), kUndefined);
  CopyToMat(mat);
}

void GeneralMatrix::CopyToMat(MatrixBase<BaseFloat>* mat, MatrixTransposeType trans) const {
  CUCTX_CHECK(mat != nullptr) << "GeneralMatrix::CopyToMat: null argument";
  switch (Type()) {
    case kSparseMatrix:
      smat_.CopyToMat(mat, trans);
      break;
    case kCompressedMatrix:
      cmat_.CopyToMat(mat, trans);
      break;
    default:
      mat->CopyFromMat(mat_, trans);
  }
}

void GeneralMatrix::AddToMat(BaseFloat alpha, MatrixBase<BaseFloat>* mat,
                             MatrixTransposeType trans) const {
  CUCTX_CHECK(mat != nullptr) << "GeneralMatrix::AddToMat: null argument";
  switch (Type()) {
    case kSparseMatrix:
      smat_.AddToMat(alpha, mat, trans);
      break;
    case kCompressedMatrix: {
      const Matrix<BaseFloat> full(cmat_);
      mat->AddMat(alpha, full, trans);
      break;
    }
    default:
      mat->AddMat(alpha, mat_, trans);
  }
}

void GeneralMatrix::Scale(BaseFloat alpha) {
  switch (Type()) {
    case kSparseMatrix:
      smat_.Scale(alpha);
      break;
    case kCompressedMatrix:
      cmat_.Scale(alpha);
      break;
    default:
      mat_.Scale(alpha);
  }
}

void GeneralMatrix::Clear() {
  mat_.Resize(0, 0);
  cmat_.Clear();
  smat_.Resize(0, 0);
}

void ExtractRowRangeWithPadding(const GeneralMatrix& in, int32 row_offset, int32 num_rows,
                                GeneralMatrix* out) {
  CUCTX_CHECK(out != nullptr && out != &in)
      << "ExtractRowRangeWithPadding: the output must be a GeneralMatrix other than the input";
  CUCTX_CHECK(num_rows >= 0) << "ExtractRowRangeWithPadding: num_rows = " << num_rows << " < 0";
  const int32 in_rows = in.NumRows(), num_cols = in.NumCols();
  CUCTX_CHECK(num_rows == 0 || in_rows > 0)
      << "ExtractRowRangeWithPadding: cannot take " << num_rows << " rows from an empty matrix";
  // The source row of output row r: clamped into [0, in_rows), which repeats the edge rows.
  auto source_row = [&](int32 r) {
    const int64 i = static_cast<int64>(row_offset) + r;
    return static_cast<MatrixIndexT>(std::min<int64>(std::max<int64>(i, 0), in_rows - 1));
  };
  out->Clear();
  if (num_rows == 0) return;  // an empty (0 x 0) full matrix
  switch (in.Type()) {
    case kCompressedMatrix: {
      CompressedMatrix cut(in.GetCompressedMatrix(), row_offset, num_rows, 0, num_cols,
                           /*allow_padding=*/true);
      out->SwapCompressedMatrix(&cut);
      return;
    }
    case kSparseMatrix: {
      const SparseMatrix<BaseFloat>& src = in.GetSparseMatrix();
      SparseMatrix<BaseFloat> cut(num_rows, num_cols);
      for (int32 r = 0; r < num_rows; ++r) cut.SetRow(r, src.Row(source_row(r)));
      out->SwapSparseMatrix(&cut);
      return;
    }
    default: {
      const Matrix<BaseFloat>& src = in.GetFullMatrix();
      Matrix<BaseFloat> cut(num_rows, num_cols, kUndefined);
      for (int32 r = 0; r < num_rows; ++r) cut.Row(r).CopyFromVec(src.Row(source_row(r)));
      out->SwapFullMatrix(&cut);
    }
  }
}

void GeneralMatrix::Swap(GeneralMatrix* other) {
  CUCTX_CHECK(other != nullptr) << "GeneralMatrix::Swap: null argument";
  mat_.Swap(&other->mat_);
  cmat_.Swap(&other->cmat_);
  smat_.Swap(&other->smat_);
}

}  // namespace cuctx
