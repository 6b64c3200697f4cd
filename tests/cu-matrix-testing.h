// tests/cu-matrix-testing.h: test helpers for the Cu container classes.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_TESTS_CU_MATRIX_TESTING_H_
#define CUCTX_TESTS_CU_MATRIX_TESTING_H_

#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <gtest/gtest.h>

namespace cuctx {
namespace test {

// Host copies of a Cu matrix or vector (a transfer that waits for this thread's stream).
template <typename Real>
Matrix<Real> ToHost(const CuMatrixBase<Real>& m) {
  Matrix<Real> h(m.NumRows(), m.NumCols(), kUndefined);
  m.CopyToMat(&h);
  return h;
}
template <typename Real>
Vector<Real> ToHost(const CuVectorBase<Real>& v) {
  Vector<Real> h(v.Dim(), kUndefined);
  v.CopyToVec(&h);
  return h;
}

// A device matrix under test: a whole CuMatrix, or (strided) a view of a larger one whose border
// of random sentinels must be unchanged afterwards (catches out-of-bounds writes).
template <typename Real>
struct GuardedCuMatrix {
  static constexpr int kTop = 1, kLeft = 3, kExtraRows = 2, kExtraCols = 8;
  GuardedCuMatrix(int rows, int cols, bool strided, Rng* rng, double lo = -1, double hi = 1)
      : top(strided ? kTop : 0),
        left(strided ? kLeft : 0),
        original(RandomMatrix<Real>(rows + (strided ? kExtraRows : 0),
                                    cols + (strided ? kExtraCols : 0), rng, lo, hi)),
        storage(original),
        view(storage, top, rows, left, cols) {}
  // The view's initial contents, on the host.
  Matrix<Real> Host() const {
    return Matrix<Real>(original.Range(top, view.NumRows(), left, view.NumCols()));
  }
  ::testing::AssertionResult BorderUnchanged() const {
    Matrix<Real> now(storage.NumRows(), storage.NumCols(), kUndefined);
    storage.CopyToMat(&now);
    for (int r = 0; r < now.NumRows(); ++r)
      for (int c = 0; c < now.NumCols(); ++c) {
        const bool inside =
            r >= top && r < top + view.NumRows() && c >= left && c < left + view.NumCols();
        if (!inside && now(r, c) != original(r, c))
          return ::testing::AssertionFailure() << "sentinel (" << r << ", " << c << ") changed";
      }
    return ::testing::AssertionSuccess();
  }
  int top, left;
  Matrix<Real> original;
  CuMatrix<Real> storage;
  CuSubMatrix<Real> view;
};

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_CU_MATRIX_TESTING_H_
