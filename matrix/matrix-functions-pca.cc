// matrix/matrix-functions-pca.cc: ComputePca (uncentred PCA through a symmetric eigensolver).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix-check.h"
#include "matrix/matrix-functions.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/vector.h"

#include <cmath>

namespace cuctx {

namespace {

// Orthonormalizes the rows of *U in order (Gram-Schmidt, two passes per row). A row that is zero
// or nearly dependent on the earlier rows (it loses over 90% of its norm to them) is replaced by
// the next unit vector e_0, e_1, ... that is not, so the result always has orthonormal rows.
template <typename Real>
void OrthonormalizeRows(MatrixBase<Real>* U) {
  const MatrixIndexT rows = U->NumRows(), cols = U->NumCols();
  MatrixIndexT next_unit = 0;
  for (MatrixIndexT g = 0; g < rows; ++g) {
    SubVector<Real> row(*U, g);
    for (;;) {
      const Real before = std::sqrt(VecVec(row, row));
      for (int pass = 0; pass < 2; ++pass) {
        for (MatrixIndexT h = 0; h < g; ++h) {
          const SubVector<Real> prev(*U, h);
          row.AddVec(-VecVec(row, prev), prev);
        }
      }
      const Real after = std::sqrt(VecVec(row, row));
      if (before > 0 && after > Real(0.1) * before) {
        row.Scale(1 / after);
        break;
      }
      // G <= D rows always fit: some unit vector is independent of fewer than D earlier rows.
      CUCTX_ASSERT(next_unit < cols);
      row.SetZero();
      row(next_unit++) = 1;
    }
  }
}

}  // namespace

template <typename Real>
void ComputePca(const MatrixBase<Real>& X, MatrixBase<Real>* U, MatrixBase<Real>* A,
                bool print_eigs, bool exact) {
  CUCTX_CHECK(U != nullptr) << "ComputePca: U must not be null";
  const MatrixIndexT N = X.NumRows(), D = X.NumCols(), G = U->NumRows();
  if (U->NumCols() != D)
    CUCTX_ERR << "ComputePca: U is " << internal::ShapeOf(*U) << " but X is "
              << internal::ShapeOf(X) << "; U needs " << D << " columns";
  if (A != nullptr && (A->NumRows() != N || A->NumCols() != G))
    CUCTX_ERR << "ComputePca: A is " << internal::ShapeOf(*A) << " but must be " << N << "x" << G;
  if (G > N || G > D)
    CUCTX_ERR << "ComputePca: asked for " << G << " components of " << N << " points of dimension "
              << D << "; need G <= N and G <= D";
  if (G == 0) return;
  const char* const retained = exact ? "" : "retained ";
  if (D < N) {
    // Outer products: the eigenvectors of X^T X are the basis itself.
    SpMatrix<Real> scatter(D);
    scatter.AddMat2(1.0, X, kTrans, 0.0);
    Vector<Real> l(D);
    Matrix<Real> P(D, D);
    scatter.Eig(&l, &P);
    SortSvd(&l, &P);
    for (MatrixIndexT g = 0; g < G; ++g) U->Row(g).CopyColFromMat(P, g);
    if (print_eigs) CUCTX_LOG << "ComputePca: " << retained << "PCA eigenvalues are " << l;
  } else {
    // Inner products: X X^T = V diag(l) V^T gives the basis rows X^T v_g / sqrt(l_g).
    SpMatrix<Real> gram(N);
    gram.AddMat2(1.0, X, kNoTrans, 0.0);
    Vector<Real> l(N);
    Matrix<Real> V(N, N);
    gram.Eig(&l, &V);
    // X X^T is positive semidefinite; negative eigenvalues are rounding (common when the rank is
    // below N), so they are zeroed quietly.
    for (MatrixIndexT i = 0; i < N; ++i) {
      if (l(i) < 0) {
        CUCTX_VLOG(1) << "ComputePca: setting eigenvalue " << l(i) << " to zero";
        l(i) = 0;
      }
    }
    SortSvd(&l, &V, static_cast<MatrixBase<Real>*>(nullptr), false);
    for (MatrixIndexT g = 0; g < G; ++g) {
      SubVector<Real> row(*U, g);
      if (l(g) > 0) {
        Vector<Real> v(N);
        v.CopyColFromMat(V, g);
        row.AddMatVec(1 / std::sqrt(l(g)), X, kTrans, v, 0.0);
      } else {
        row.SetZero();  // Filled by OrthonormalizeRows.
      }
    }
    if (print_eigs)
      CUCTX_LOG << "ComputePca: " << retained << "(inner-product) PCA eigenvalues are " << l;
  }
  OrthonormalizeRows(U);
  if (A != nullptr) A->AddMatMat(1.0, X, kNoTrans, *U, kTrans, 0.0);
}

template void ComputePca(const MatrixBase<float>&, MatrixBase<float>*, MatrixBase<float>*, bool,
                         bool);
template void ComputePca(const MatrixBase<double>&, MatrixBase<double>*, MatrixBase<double>*, bool,
                         bool);

}  // namespace cuctx
