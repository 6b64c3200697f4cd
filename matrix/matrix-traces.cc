// matrix/matrix-traces.cc: Kaldi-parity traces of products, triple products, products with
// symmetric factors, mixed-precision rank-one/broadcast adds, and vector ops on packed matrices.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/cblas-wrappers.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"

#include <algorithm>
#include <cmath>

namespace cuctx {

using internal::CheckDim;
using internal::CheckNoOverlap;
using internal::OpCols;
using internal::OpRows;
using internal::ShapeOf;

namespace {

const char* TransName(MatrixTransposeType t) { return t == kTrans ? "^T" : ""; }

// op(A) op(B) as a new matrix (shapes already checked by the caller).
template <typename Real>
Matrix<Real> Product(const MatrixBase<Real>& A, MatrixTransposeType tA, const MatrixBase<Real>& B,
                     MatrixTransposeType tB) {
  Matrix<Real> out(OpRows(A, tA), OpCols(B, tB), kUndefined);
  out.AddMatMat(1.0, A, tA, B, tB, 0.0);
  return out;
}

}  // namespace

// ---- traces ----------------------------------------------------------------------------------

template <typename Real>
Real TraceMatMatMat(const MatrixBase<Real>& A, MatrixTransposeType tA, const MatrixBase<Real>& B,
                    MatrixTransposeType tB, const MatrixBase<Real>& C, MatrixTransposeType tC) {
  const int64 ar = OpRows(A, tA), ac = OpCols(A, tA), br = OpRows(B, tB), bc = OpCols(B, tB),
              cr = OpRows(C, tC), cc = OpCols(C, tC);
  if (ac != br || bc != cr || cc != ar)
    CUCTX_ERR << "TraceMatMatMat: shapes do not chain into a square product: A" << TransName(tA)
              << " is " << ar << "x" << ac << ", B" << TransName(tB) << " is " << br << "x" << bc
              << ", C" << TransName(tC) << " is " << cr << "x" << cc;
  // tr(XYZ) = tr(YZX) = tr(ZXY): form the smallest of the three pairwise products, then a trace
  // of two factors (an O(size) dot product).
  const int64 ab = ar * bc, bcn = br * cc, ca = cr * ac;
  if (ab <= bcn && ab <= ca) return TraceMatMat(Product(A, tA, B, tB), C, tC);
  if (bcn <= ca) return TraceMatMat(Product(B, tB, C, tC), A, tA);
  return TraceMatMat(Product(C, tC, A, tA), B, tB);
}

template <typename Real>
Real TraceMatMatMatMat(const MatrixBase<Real>& A, MatrixTransposeType tA, const MatrixBase<Real>& B,
                       MatrixTransposeType tB, const MatrixBase<Real>& C, MatrixTransposeType tC,
                       const MatrixBase<Real>& D, MatrixTransposeType tD) {
  const int64 ar = OpRows(A, tA), ac = OpCols(A, tA), br = OpRows(B, tB), bc = OpCols(B, tB),
              cr = OpRows(C, tC), cc = OpCols(C, tC), dr = OpRows(D, tD), dc = OpCols(D, tD);
  if (ac != br || bc != cr || cc != dr || dc != ar)
    CUCTX_ERR << "TraceMatMatMatMat: shapes do not chain into a square product: A" << TransName(tA)
              << " is " << ar << "x" << ac << ", B" << TransName(tB) << " is " << br << "x" << bc
              << ", C" << TransName(tC) << " is " << cr << "x" << cc << ", D" << TransName(tD)
              << " is " << dr << "x" << dc;
  // Multiply the cyclically adjacent pair with the smallest product, then a triple trace.
  const int64 ab = ar * bc, bcn = br * cc, cd = cr * dc, da = dr * ac;
  const int64 best = std::min(std::min(ab, bcn), std::min(cd, da));
  if (ab == best) return TraceMatMatMat(Product(A, tA, B, tB), kNoTrans, C, tC, D, tD);
  if (bcn == best) return TraceMatMatMat(Product(B, tB, C, tC), kNoTrans, D, tD, A, tA);
  if (cd == best) return TraceMatMatMat(Product(C, tC, D, tD), kNoTrans, A, tA, B, tB);
  return TraceMatMatMat(Product(D, tD, A, tA), kNoTrans, B, tB, C, tC);
}

// ---- MatrixBase products ---------------------------------------------------------------------

template <typename Real>
void MatrixBase<Real>::AddMatMatMat(Real alpha, const MatrixBase<Real>& A, MatrixTransposeType tA,
                                    const MatrixBase<Real>& B, MatrixTransposeType tB,
                                    const MatrixBase<Real>& C, MatrixTransposeType tC, Real beta) {
  const int64 ar = OpRows(A, tA), ac = OpCols(A, tA), br = OpRows(B, tB), bc = OpCols(B, tB),
              cr = OpRows(C, tC), cc = OpCols(C, tC);
  if (ac != br || bc != cr || ar != num_rows_ || cc != num_cols_)
    CUCTX_ERR << "AddMatMatMat: shape mismatch: *this is " << ShapeOf(*this) << ", A"
              << TransName(tA) << " is " << ar << "x" << ac << ", B" << TransName(tB) << " is "
              << br << "x" << bc << ", C" << TransName(tC) << " is " << cr << "x" << cc;
  CheckNoOverlap("AddMatMatMat", *this, A, "A");
  CheckNoOverlap("AddMatMatMat", *this, B, "B");
  CheckNoOverlap("AddMatMatMat", *this, C, "C");
  // (AB)C costs ar*br*bc + ar*bc*cc multiplies; A(BC) costs br*bc*cc + ar*ac*cc.
  if (ar * br * bc + ar * bc * cc <= br * bc * cc + ar * ac * cc)
    AddMatMat(alpha, Product(A, tA, B, tB), kNoTrans, C, tC, beta);
  else
    AddMatMat(alpha, A, tA, Product(B, tB, C, tC), kNoTrans, beta);
}

template <typename Real>
Real MatrixBase<Real>::LargestAbsElem() const {
  Real largest = 0;
  for (MatrixIndexT r = 0; r < num_rows_; ++r) {
    const Real* row = RowData(r);
    for (MatrixIndexT c = 0; c < num_cols_; ++c) largest = std::max(largest, std::abs(row[c]));
  }
  return largest;
}

template <typename Real>
void MatrixBase<Real>::AddVecVec(Real alpha, const VectorBase<typename OtherReal<Real>::Real>& a,
                                 const VectorBase<typename OtherReal<Real>::Real>& b) {
  // Converting first keeps one checked implementation (BLAS ger) for both precisions.
  AddVecVec(alpha, Vector<Real>(a), Vector<Real>(b));
}

template <typename Real>
void MatrixBase<Real>::AddVecToRows(Real alpha,
                                    const VectorBase<typename OtherReal<Real>::Real>& v) {
  AddVecToRows(alpha, Vector<Real>(v), Real(1));
}

template <typename Real>
void MatrixBase<Real>::AddVecToCols(Real alpha,
                                    const VectorBase<typename OtherReal<Real>::Real>& v) {
  AddVecToCols(alpha, Vector<Real>(v), Real(1));
}

// ---- VectorBase with packed operands ---------------------------------------------------------

template <typename Real>
void VectorBase<Real>::CopyDiagFromPacked(const PackedMatrix<Real>& M) {
  CheckDim("CopyDiagFromPacked", "*this", dim_, "M.NumRows()", M.NumRows());
  const Real* p = M.Data();
  for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = p[static_cast<size_t>(i) * (i + 1) / 2 + i];
}

template <typename Real>
void VectorBase<Real>::CopyDiagFromSp(const SpMatrix<Real>& M) {
  CopyDiagFromPacked(M);
}

template <typename Real>
void VectorBase<Real>::CopyDiagFromTp(const TpMatrix<Real>& M) {
  CopyDiagFromPacked(M);
}

template <typename Real>
void VectorBase<Real>::Solve(const TpMatrix<Real>& M, MatrixTransposeType trans) {
  CheckDim("Solve", "*this", dim_, "M.NumRows()", M.NumRows());
  for (MatrixIndexT i = 0; i < dim_; ++i)
    if (M(i, i) == Real(0))
      CUCTX_ERR << "Solve: the triangular matrix is singular (diagonal element " << i << " is 0)";
  if (dim_ == 0) return;
  cblas_Xtpsv(trans, M.Data(), dim_, data_, 1);
}

#define CUCTX_INSTANTIATE_TRACES(R, O)                                                          \
  template R TraceMatMatMat(const MatrixBase<R>&, MatrixTransposeType, const MatrixBase<R>&,    \
                            MatrixTransposeType, const MatrixBase<R>&, MatrixTransposeType);    \
  template R TraceMatMatMatMat(const MatrixBase<R>&, MatrixTransposeType, const MatrixBase<R>&, \
                               MatrixTransposeType, const MatrixBase<R>&, MatrixTransposeType,  \
                               const MatrixBase<R>&, MatrixTransposeType);                      \
  template void MatrixBase<R>::AddVecVec(R, const VectorBase<O>&, const VectorBase<O>&);        \
  template void MatrixBase<R>::AddVecToRows(R, const VectorBase<O>&);                           \
  template void MatrixBase<R>::AddVecToCols(R, const VectorBase<O>&);                           \
  template void MatrixBase<R>::AddMatMatMat(R, const MatrixBase<R>&, MatrixTransposeType,       \
                                            const MatrixBase<R>&, MatrixTransposeType,          \
                                            const MatrixBase<R>&, MatrixTransposeType, R);      \
  template R MatrixBase<R>::LargestAbsElem() const;                                             \
  template void VectorBase<R>::CopyDiagFromPacked(const PackedMatrix<R>&);                      \
  template void VectorBase<R>::CopyDiagFromSp(const SpMatrix<R>&);                              \
  template void VectorBase<R>::CopyDiagFromTp(const TpMatrix<R>&);                              \
  template void VectorBase<R>::Solve(const TpMatrix<R>&, MatrixTransposeType)

CUCTX_INSTANTIATE_TRACES(float, double);
CUCTX_INSTANTIATE_TRACES(double, float);

}  // namespace cuctx
