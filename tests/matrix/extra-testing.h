// tests/matrix/extra-testing.h: helpers for the Kaldi-parity extra tests: random packed and
// sparse operands and naive double-precision references (products, packed to dense).
// SPDX-License-Identifier: Apache-2.0
//
// The references are plain loops over element accessors, independent of the BLAS paths under
// test. Header-only; an Rng belongs to one thread.
#ifndef CUCTX_TESTS_MATRIX_EXTRA_TESTING_H_
#define CUCTX_TESTS_MATRIX_EXTRA_TESTING_H_

#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/sparse-matrix.h"
#include "matrix/tp-matrix.h"
#include "tests/matrix-testing.h"

namespace cuctx {
namespace test {

// Tolerance for products and traces: each result sums up to a few hundred terms, so float
// rounding grows past the element-wise Tol (about sqrt(k) ulps, bounded by 100 here).
template <typename Real>
double ProductTol() {
  return Tol<Real>() * 100;
}

// A random n x n symmetric matrix (values uniform in [-1, 1)).
template <typename Real>
SpMatrix<Real> RandomSp(MatrixIndexT n, Rng* rng) {
  SpMatrix<Real> s(n);
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c) s(r, c) = static_cast<Real>(rng->Uniform(-1, 1));
  return s;
}

// A random n x n lower-triangular matrix.
template <typename Real>
TpMatrix<Real> RandomTp(MatrixIndexT n, Rng* rng) {
  TpMatrix<Real> t(n);
  for (MatrixIndexT r = 0; r < n; ++r)
    for (MatrixIndexT c = 0; c <= r; ++c) t(r, c) = static_cast<Real>(rng->Uniform(-1, 1));
  return t;
}

// The full matrix of a packed one, by element access (both triangles for Sp, zeros above the
// diagonal for Tp), in double.
template <typename Real>
Matrix<double> DenseOf(const SpMatrix<Real>& s) {
  Matrix<double> m(s.NumRows(), s.NumRows());
  for (MatrixIndexT r = 0; r < s.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < s.NumRows(); ++c) m(r, c) = s(r, c);
  return m;
}
template <typename Real>
Matrix<double> DenseOf(const TpMatrix<Real>& t) {
  Matrix<double> m(t.NumRows(), t.NumRows());
  for (MatrixIndexT r = 0; r < t.NumRows(); ++r)
    for (MatrixIndexT c = 0; c <= r; ++c) m(r, c) = t(r, c);
  return m;
}

// A rows x cols matrix with about `density` of its elements nonzero (uniform in [-1, 1)).
template <typename Real>
Matrix<Real> RandomSparseDense(MatrixIndexT rows, MatrixIndexT cols, double density, Rng* rng) {
  Matrix<Real> m(rows, cols);
  for (MatrixIndexT r = 0; r < rows; ++r)
    for (MatrixIndexT c = 0; c < cols; ++c)
      if (rng->Uniform() < density) m(r, c) = static_cast<Real>(rng->Uniform(-1, 1));
  return m;
}

// op(A) (in double).
template <typename Real>
Matrix<double> Op(const MatrixBase<Real>& a, MatrixTransposeType t) {
  return Matrix<double>(a, t);
}

// a b by a triple loop in double.
inline Matrix<double> NaiveProduct(const MatrixBase<double>& a, const MatrixBase<double>& b) {
  EXPECT_EQ(a.NumCols(), b.NumRows());
  Matrix<double> out(a.NumRows(), b.NumCols());
  for (MatrixIndexT i = 0; i < a.NumRows(); ++i)
    for (MatrixIndexT j = 0; j < b.NumCols(); ++j) {
      double s = 0;
      for (MatrixIndexT l = 0; l < a.NumCols(); ++l) s += a(i, l) * b(l, j);
      out(i, j) = s;
    }
  return out;
}

// beta * c + alpha * p, element-wise in double.
inline Matrix<double> Combine(double beta, const MatrixBase<double>& c, double alpha,
                              const MatrixBase<double>& p) {
  Matrix<double> out(c.NumRows(), c.NumCols());
  for (MatrixIndexT i = 0; i < c.NumRows(); ++i)
    for (MatrixIndexT j = 0; j < c.NumCols(); ++j) out(i, j) = beta * c(i, j) + alpha * p(i, j);
  return out;
}

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_MATRIX_EXTRA_TESTING_H_
