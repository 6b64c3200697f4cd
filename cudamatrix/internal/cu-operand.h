// cudamatrix/internal/cu-operand.h: argument checks and small views shared by the Cu container
// sources (shape text for error messages, overlap tests, host views for the CPU fallback).
// SPDX-License-Identifier: Apache-2.0
//
// Internal to the cudamatrix/*.cc files; not part of the public API. Everything here is a pure
// function of its arguments (no device work, no state), so it is safe from any thread.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_OPERAND_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_OPERAND_H_

#include "base/error.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

#include <cstddef>
#include <functional>
#include <sstream>
#include <string>

namespace cuctx {
namespace internal {

// "RxC", as error messages print shapes.
inline std::string ShapeText(MatrixIndexT rows, MatrixIndexT cols) {
  std::ostringstream os;
  os << rows << "x" << cols;
  return os.str();
}
template <typename Real>
std::string ShapeText(const CuMatrixBase<Real>& m) {
  return ShapeText(m.NumRows(), m.NumCols());
}

// "kTrans" or "kNoTrans", as error messages print a transpose argument.
inline const char* TransName(MatrixTransposeType t) { return t == kTrans ? "kTrans" : "kNoTrans"; }

// Rows and columns of op(m), where op is the identity or the transpose.
template <typename Real>
MatrixIndexT OpRows(const CuMatrixBase<Real>& m, MatrixTransposeType t) {
  return t == kNoTrans ? m.NumRows() : m.NumCols();
}
template <typename Real>
MatrixIndexT OpCols(const CuMatrixBase<Real>& m, MatrixTransposeType t) {
  return t == kNoTrans ? m.NumCols() : m.NumRows();
}

// True when the byte spans [a, a + a_bytes) and [b, b + b_bytes) intersect.
inline bool SpansOverlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  const char* a0 = static_cast<const char*>(a);
  const char* b0 = static_cast<const char*>(b);
  std::less<const char*> lt;
  return lt(a0, b0 + b_bytes) && lt(b0, a0 + a_bytes);
}

// Bytes from the first element of a matrix to just past its last one (0 when empty).
template <typename Real>
size_t SpanBytes(const CuMatrixBase<Real>& m) {
  if (m.NumRows() == 0 || m.NumCols() == 0) return 0;
  return (static_cast<size_t>(m.NumRows() - 1) * m.Stride() + m.NumCols()) * sizeof(Real);
}
template <typename Real>
size_t SpanBytes(const CuVectorBase<Real>& v) {
  return static_cast<size_t>(v.Dim()) * sizeof(Real);
}

// True when the element spans of two operands (matrices or vectors, any precision) intersect.
template <typename A, typename B>
bool Overlap(const A& a, const B& b) {
  return SpansOverlap(a.Data(), SpanBytes(a), b.Data(), SpanBytes(b));
}

// True when a and b view exactly the same elements (same data, shape and, for several rows,
// stride): the only overlap an in-place kernel handles.
template <typename Real>
bool SameView(const CuMatrixBase<Real>& a, const CuMatrixBase<Real>& b) {
  return a.Data() == b.Data() && a.NumRows() == b.NumRows() && a.NumCols() == b.NumCols() &&
         (a.NumRows() <= 1 || a.Stride() == b.Stride());
}

// Throws unless `in` has out's shape and is either exactly `out` or disjoint from it (element-wise
// kernels may run in place but not on a shifted copy of their output).
template <typename Real>
void CheckSameShapeOrAlias(const char* op, const CuMatrixBase<Real>& out,
                           const CuMatrixBase<Real>& in, const char* in_name) {
  CUCTX_CHECK(in.NumRows() == out.NumRows() && in.NumCols() == out.NumCols())
      << op << ": " << in_name << " " << ShapeText(in) << " does not match *this "
      << ShapeText(out);
  if (SameView(in, out)) return;
  CUCTX_CHECK(!Overlap(in, out)) << op << ": " << in_name << " partially overlaps *this ("
                                 << ShapeText(out) << ")";
}

// A vector as the one-row matrix the kernels take.
inline MatrixDim VecDim(MatrixIndexT dim) { return MatrixDim{1, dim, dim}; }

// Host views of the elements; valid only in CPU mode (the fallback of every method).
template <typename Real>
SubMatrix<Real> HostView(const CuMatrixBase<Real>& m) {
  return SubMatrix<Real>(const_cast<Real*>(m.Data()), m.NumRows(), m.NumCols(), m.Stride());
}
template <typename Real>
SubVector<Real> HostView(const CuVectorBase<Real>& v) {
  return SubVector<Real>(const_cast<Real*>(v.Data()), v.Dim());
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_OPERAND_H_
