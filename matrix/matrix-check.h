// matrix/matrix-check.h: private shape, index and aliasing checks shared by matrix/*.cc.
// SPDX-License-Identifier: Apache-2.0
//
// Not part of the public API (not included by matrix.h). Every check throws cuctx::Error with a
// message that starts with the operation name and names both shapes or the bad index. The checks
// are O(1) (overlap tests look at addresses only), so they are always on.
#ifndef CUCTX_MATRIX_MATRIX_CHECK_H_
#define CUCTX_MATRIX_MATRIX_CHECK_H_

#include "base/error.h"
#include "matrix/matrix.h"

#include <cstddef>
#include <sstream>
#include <string>

namespace cuctx {
namespace internal {

// "RxC" (with the stride when it differs from the column count).
template <typename Real>
std::string ShapeOf(const MatrixBase<Real>& m) {
  std::ostringstream os;
  os << m.NumRows() << "x" << m.NumCols();
  if (m.NumRows() > 1 && m.Stride() != m.NumCols()) os << " (stride " << m.Stride() << ")";
  return os.str();
}

// Rows and columns of op(M).
template <typename Real>
MatrixIndexT OpRows(const MatrixBase<Real>& m, MatrixTransposeType t) {
  return t == kNoTrans ? m.NumRows() : m.NumCols();
}
template <typename Real>
MatrixIndexT OpCols(const MatrixBase<Real>& m, MatrixTransposeType t) {
  return t == kNoTrans ? m.NumCols() : m.NumRows();
}

// Throws unless a and b have equal rows and columns.
template <typename Real, typename OtherReal>
void CheckSameShape(const char* op, const MatrixBase<Real>& a, const char* a_name,
                    const MatrixBase<OtherReal>& b, const char* b_name) {
  if (a.NumRows() != b.NumRows() || a.NumCols() != b.NumCols())
    CUCTX_ERR << op << ": shape mismatch: " << a_name << " is " << ShapeOf(a) << " but " << b_name
              << " is " << ShapeOf(b);
}

// Throws unless `dim` equals `want`.
inline void CheckDim(const char* op, const char* what, MatrixIndexT dim, const char* want_what,
                     MatrixIndexT want) {
  if (dim != want)
    CUCTX_ERR << op << ": dimension mismatch: " << what << " has dimension " << dim << " but "
              << want_what << " is " << want;
}

// Throws unless 0 <= index < size.
inline void CheckIndex(const char* op, const char* what, MatrixIndexT index, MatrixIndexT size) {
  if (index < 0 || index >= size)
    CUCTX_ERR << op << ": " << what << " " << index << " out of range [0, " << size << ")";
}

// One past the last element a matrix touches, relative to Data().
template <typename Real>
std::ptrdiff_t Extent(const MatrixBase<Real>& m) {
  return static_cast<std::ptrdiff_t>(m.NumRows() - 1) * m.Stride() + m.NumCols();
}

// True if some element of a is also an element of b. Exact for equal strides (views of one
// matrix, e.g. disjoint column ranges, do not overlap); conservative (address range) otherwise.
template <typename Real>
bool Overlaps(const MatrixBase<Real>& a, const MatrixBase<Real>& b) {
  if (a.NumRows() == 0 || a.NumCols() == 0 || b.NumRows() == 0 || b.NumCols() == 0) return false;
  const Real* a0 = a.Data();
  const Real* b0 = b.Data();
  if (a0 + Extent(a) <= b0 || b0 + Extent(b) <= a0) return false;
  const MatrixIndexT s = a.Stride();
  if (s != b.Stride() || s <= 0 || a.NumCols() > s || b.NumCols() > s) return true;
  // Let `lo` start first; hi's element (r, c) lies at lo-relative offset (q + r) s + rem + c.
  const MatrixBase<Real>& lo = a0 <= b0 ? a : b;
  const MatrixBase<Real>& hi = a0 <= b0 ? b : a;
  const std::ptrdiff_t d = hi.Data() - lo.Data();
  const std::ptrdiff_t q = d / s, rem = d % s;
  // The part of hi's row that stays in lo-row q + r: columns [rem, min(rem + cols, s)).
  if (rem < lo.NumCols() && q < lo.NumRows()) return true;
  // The part that wraps into lo-row q + r + 1: columns [0, rem + cols - s).
  if (rem + hi.NumCols() > s && q + 1 < lo.NumRows()) return true;
  return false;
}

// True if a and b are the same view (same data, shape and stride).
template <typename Real>
bool SameView(const MatrixBase<Real>& a, const MatrixBase<Real>& b) {
  return a.Data() == b.Data() && a.NumRows() == b.NumRows() && a.NumCols() == b.NumCols() &&
         (a.NumRows() <= 1 || a.Stride() == b.Stride());
}

// Throws if `in` overlaps `out` (any sharing is forbidden for this op).
template <typename Real>
void CheckNoOverlap(const char* op, const MatrixBase<Real>& out, const MatrixBase<Real>& in,
                    const char* in_name) {
  if (Overlaps(out, in))
    CUCTX_ERR << op << ": " << in_name << " (" << ShapeOf(in) << ") overlaps the output *this ("
              << ShapeOf(out) << "); use a copy";
}

// For element-wise ops: `in` may be exactly `out`, but not partially overlap it.
template <typename Real>
void CheckNoPartialOverlap(const char* op, const MatrixBase<Real>& out, const MatrixBase<Real>& in,
                           const char* in_name) {
  if (!SameView(out, in)) CheckNoOverlap(op, out, in, in_name);
}

// Vectors: true if the element ranges intersect.
template <typename Real>
bool Overlaps(const VectorBase<Real>& a, const VectorBase<Real>& b) {
  if (a.Dim() == 0 || b.Dim() == 0) return false;
  return !(a.Data() + a.Dim() <= b.Data() || b.Data() + b.Dim() <= a.Data());
}

// A vector and a matrix share an element (conservative: address ranges).
template <typename Real>
bool Overlaps(const VectorBase<Real>& v, const MatrixBase<Real>& m) {
  if (v.Dim() == 0 || m.NumRows() == 0 || m.NumCols() == 0) return false;
  const Real* m0 = m.Data();
  return !(v.Data() + v.Dim() <= m0 || m0 + Extent(m) <= v.Data());
}

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_MATRIX_MATRIX_CHECK_H_
