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

// Memory layouts that select different kernel paths (16-byte vector accesses need every row of
// every operand to start 16-byte aligned):
//   kPacked:        a whole CuMatrix (rows aligned);
//   kAlignedView:   a view one row down and 4 columns right in a larger matrix (rows aligned,
//                   stride != cols);
//   kUnalignedView: a view one row down and one column right (no row aligned);
//   kOddStride:     a kStrideEqualNumCols matrix with an odd stride (every other row unaligned;
//                   one extra column when cols is even).
enum class Layout { kPacked, kAlignedView, kUnalignedView, kOddStride };
inline const char* LayoutName(Layout l) {
  switch (l) {
    case Layout::kPacked:
      return "packed";
    case Layout::kAlignedView:
      return "aligned view";
    case Layout::kUnalignedView:
      return "unaligned view";
    case Layout::kOddStride:
      return "odd stride";
  }
  return "?";
}
constexpr Layout kAllLayouts[] = {Layout::kPacked, Layout::kAlignedView, Layout::kUnalignedView,
                                  Layout::kOddStride};

// A device matrix holding `init` in the given layout; `view` is the matrix under test and the
// rest of `storage` holds zeros.
template <typename Real>
struct LayoutCuMatrix {
  LayoutCuMatrix(const MatrixBase<Real>& init, Layout layout)
      : top(layout == Layout::kAlignedView || layout == Layout::kUnalignedView ? 1 : 0),
        left(layout == Layout::kAlignedView ? 4 : (layout == Layout::kUnalignedView ? 1 : 0)),
        storage(init.NumRows() + top, StorageCols(init.NumCols(), layout), kSetZero,
                layout == Layout::kOddStride ? kStrideEqualNumCols : kDefaultStride),
        view(storage, top, init.NumRows(), left, init.NumCols()) {
    view.CopyFromMat(init);
  }
  static MatrixIndexT StorageCols(MatrixIndexT cols, Layout l) {
    switch (l) {
      case Layout::kAlignedView:
        return cols + 8;
      case Layout::kUnalignedView:
        return cols + 3;
      case Layout::kOddStride:
        return cols % 2 == 0 ? cols + 1 : cols;
      default:
        return cols;
    }
  }
  // Whether the storage around the view still holds zeros (catches out-of-bounds writes).
  ::testing::AssertionResult OutsideUnchanged() const {
    Matrix<Real> now(storage.NumRows(), storage.NumCols(), kUndefined);
    storage.CopyToMat(&now);
    for (MatrixIndexT r = 0; r < now.NumRows(); ++r)
      for (MatrixIndexT c = 0; c < now.NumCols(); ++c) {
        const bool inside =
            r >= top && r < top + view.NumRows() && c >= left && c < left + view.NumCols();
        if (!inside && now(r, c) != 0)
          return ::testing::AssertionFailure()
                 << "element (" << r << ", " << c << ") outside the view is " << now(r, c);
      }
    return ::testing::AssertionSuccess();
  }
  MatrixIndexT top, left;
  CuMatrix<Real> storage;
  CuSubMatrix<Real> view;
};

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_CU_MATRIX_TESTING_H_
