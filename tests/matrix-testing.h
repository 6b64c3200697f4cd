// tests/matrix-testing.h: matrix and vector test helpers: random data, strided views, ExpectNear.
// SPDX-License-Identifier: Apache-2.0
//
// All helpers draw from a caller's test::Rng (tests/testing.h), so data is reproducible from the
// seed. ExpectNear is a relative Frobenius check that reports the worst element on failure; use it
// as EXPECT_TRUE(ExpectNear(actual, expected, tol)) << s; (or with ASSERT_TRUE).
// Header-only; not thread-safe (an Rng belongs to one thread).
#ifndef CUCTX_TESTS_MATRIX_TESTING_H_
#define CUCTX_TESTS_MATRIX_TESTING_H_

#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/testing.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

namespace cuctx {
namespace test {

// A rows x cols matrix of values uniform in [lo, hi).
template <typename Real>
Matrix<Real> RandomMatrix(MatrixIndexT rows, MatrixIndexT cols, Rng* rng, double lo = -1.0,
                          double hi = 1.0) {
  Matrix<Real> m(rows, cols, kUndefined);
  for (MatrixIndexT r = 0; r < rows; ++r)
    for (MatrixIndexT c = 0; c < cols; ++c) m(r, c) = static_cast<Real>(rng->Uniform(lo, hi));
  return m;
}

// A vector of values uniform in [lo, hi).
template <typename Real>
Vector<Real> RandomVector(MatrixIndexT dim, Rng* rng, double lo = -1.0, double hi = 1.0) {
  Vector<Real> v(dim, kUndefined);
  for (MatrixIndexT i = 0; i < dim; ++i) v(i) = static_cast<Real>(rng->Uniform(lo, hi));
  return v;
}

// Fills *m row by row (or *v in order) with standard normal values.
template <typename Real>
void FillGauss(MatrixBase<Real>* m, Rng* rng) {
  for (MatrixIndexT r = 0; r < m->NumRows(); ++r)
    for (MatrixIndexT c = 0; c < m->NumCols(); ++c) (*m)(r, c) = static_cast<Real>(rng->Gauss());
}
template <typename Real>
void FillGauss(VectorBase<Real>* v, Rng* rng) {
  for (MatrixIndexT i = 0; i < v->Dim(); ++i) (*v)(i) = static_cast<Real>(rng->Gauss());
}

// A rows x cols matrix of standard normal values, drawn row by row.
template <typename Real>
Matrix<Real> GaussMatrix(MatrixIndexT rows, MatrixIndexT cols, Rng* rng) {
  Matrix<Real> m(rows, cols);
  FillGauss(&m, rng);
  return m;
}

// A random rows x cols matrix reached through a SubMatrix view. With strided == true the view is
// a column range inside a wider matrix (stride != cols, with random padding on both sides that
// PaddingUnchanged() checks); otherwise the storage is packed (stride == cols). Owns its storage.
template <typename Real>
class TestMatrix {
 public:
  TestMatrix(MatrixIndexT rows, MatrixIndexT cols, bool strided, Rng* rng, double lo = -1.0,
             double hi = 1.0)
      : storage_(Make(rows, cols, strided, rng, lo, hi)),
        original_(storage_),
        view_(storage_, 0, rows, strided ? kPadLeft : 0, cols) {}
  TestMatrix(const TestMatrix&) = delete;
  TestMatrix& operator=(const TestMatrix&) = delete;

  SubMatrix<Real>& View() { return view_; }
  const SubMatrix<Real>& View() const { return view_; }

  // True if no element outside the view changed since construction.
  ::testing::AssertionResult PaddingUnchanged() const {
    for (MatrixIndexT r = 0; r < storage_.NumRows(); ++r) {
      for (MatrixIndexT c = 0; c < storage_.NumCols(); ++c) {
        const bool inside = c >= ViewOffset() && c < ViewOffset() + view_.NumCols();
        if (!inside && !(storage_(r, c) == original_(r, c) ||
                         (std::isnan(storage_(r, c)) && std::isnan(original_(r, c)))))
          return ::testing::AssertionFailure()
                 << "padding element (" << r << ", " << c << ") changed from " << original_(r, c)
                 << " to " << storage_(r, c);
      }
    }
    return ::testing::AssertionSuccess();
  }

 private:
  static constexpr MatrixIndexT kPadLeft = 3;
  static constexpr MatrixIndexT kPadRight = 5;
  MatrixIndexT ViewOffset() const { return storage_.NumCols() == view_.NumCols() ? 0 : kPadLeft; }
  static Matrix<Real> Make(MatrixIndexT rows, MatrixIndexT cols, bool strided, Rng* rng, double lo,
                           double hi) {
    const MatrixIndexT total = strided ? cols + kPadLeft + kPadRight : cols;
    Matrix<Real> m(rows, total, kUndefined, strided ? kDefaultStride : kStrideEqualNumCols);
    for (MatrixIndexT r = 0; r < rows; ++r)
      for (MatrixIndexT c = 0; c < total; ++c) m(r, c) = static_cast<Real>(rng->Uniform(lo, hi));
    return m;
  }

  Matrix<Real> storage_;
  Matrix<Real> original_;
  SubMatrix<Real> view_;
};

// Calls f(shape, strided) for every test::kEdgeShapes entry, once with packed storage and once
// through a strided view, with a SCOPED_TRACE naming the case.
template <typename F>
void ForEachShape(F f) {
  for (const Shape& s : kEdgeShapes) {
    for (bool strided : {false, true}) {
      std::ostringstream name;
      name << s << (strided ? " strided" : " packed");
      SCOPED_TRACE(name.str());
      f(s, strided);
    }
  }
}

// A copy in double precision (references are computed in double).
template <typename Real>
Matrix<double> ToDouble(const MatrixBase<Real>& m) {
  return Matrix<double>(m);
}
template <typename Real>
Vector<double> ToDouble(const VectorBase<Real>& v) {
  return Vector<double>(v);
}

// Passes if ||actual - expected||_F <= tol * max(||expected||_F, ||actual||_F) and the shapes
// match; NaNs match only NaNs at the same place. On failure reports the shapes, the norms and the
// worst element.
template <typename RealA, typename RealB>
::testing::AssertionResult ExpectNear(const MatrixBase<RealA>& actual,
                                      const MatrixBase<RealB>& expected, double tol) {
  if (actual.NumRows() != expected.NumRows() || actual.NumCols() != expected.NumCols())
    return ::testing::AssertionFailure()
           << "shape mismatch: actual " << actual.NumRows() << "x" << actual.NumCols()
           << ", expected " << expected.NumRows() << "x" << expected.NumCols();
  double diff2 = 0.0, norm_e2 = 0.0, norm_a2 = 0.0, worst = -1.0;
  MatrixIndexT wr = 0, wc = 0;
  for (MatrixIndexT r = 0; r < actual.NumRows(); ++r) {
    for (MatrixIndexT c = 0; c < actual.NumCols(); ++c) {
      const double a = actual(r, c), e = expected(r, c);
      if (std::isnan(a) || std::isnan(e)) {
        if (std::isnan(a) && std::isnan(e)) continue;
        return ::testing::AssertionFailure()
               << "NaN mismatch at (" << r << ", " << c << "): actual " << a << ", expected " << e;
      }
      if (std::isinf(a) || std::isinf(e)) {
        if (a == e) continue;
        return ::testing::AssertionFailure() << "infinity mismatch at (" << r << ", " << c
                                             << "): actual " << a << ", expected " << e;
      }
      const double d = std::abs(a - e);
      diff2 += d * d;
      norm_e2 += e * e;
      norm_a2 += a * a;
      if (d > worst) {
        worst = d;
        wr = r;
        wc = c;
      }
    }
  }
  const double diff = std::sqrt(diff2);
  const double scale = std::max(std::sqrt(norm_e2), std::sqrt(norm_a2));
  if (diff <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << actual.NumRows() << "x" << actual.NumCols() << ": ||actual - expected|| = " << diff
         << " > tol " << tol << " * " << scale << "; worst element (" << wr << ", " << wc
         << "): actual " << actual(wr, wc) << ", expected " << expected(wr, wc);
}

template <typename RealA, typename RealB>
::testing::AssertionResult ExpectNear(const VectorBase<RealA>& actual,
                                      const VectorBase<RealB>& expected, double tol) {
  if (actual.Dim() != expected.Dim())
    return ::testing::AssertionFailure()
           << "dimension mismatch: actual " << actual.Dim() << ", expected " << expected.Dim();
  // A vector is checked as a one-row matrix.
  SubMatrix<RealA> a(const_cast<RealA*>(actual.Data()), actual.Dim() > 0 ? 1 : 0, actual.Dim(),
                     actual.Dim());
  SubMatrix<RealB> e(const_cast<RealB*>(expected.Data()), expected.Dim() > 0 ? 1 : 0,
                     expected.Dim(), expected.Dim());
  return ExpectNear(a, e, tol);
}

// Passes if a and b have the same shape and exactly the same elements (NaN matches nothing);
// otherwise reports the shapes or the first differing element.
template <typename Real>
::testing::AssertionResult SameElements(const MatrixBase<Real>& a, const MatrixBase<Real>& b) {
  if (a.NumRows() != b.NumRows() || a.NumCols() != b.NumCols())
    return ::testing::AssertionFailure() << "shape mismatch: " << a.NumRows() << "x" << a.NumCols()
                                         << " vs " << b.NumRows() << "x" << b.NumCols();
  for (MatrixIndexT r = 0; r < a.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < a.NumCols(); ++c)
      if (a(r, c) != b(r, c))
        return ::testing::AssertionFailure()
               << "element (" << r << ", " << c << "): " << a(r, c) << " vs " << b(r, c);
  return ::testing::AssertionSuccess();
}

// Relative closeness of two scalars: |a - e| <= tol * max(|a|, |e|, 1e-30).
inline ::testing::AssertionResult ScalarNear(double actual, double expected, double tol) {
  const double scale = std::max(std::max(std::abs(actual), std::abs(expected)), 1e-30);
  if (std::abs(actual - expected) <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "actual " << actual << ", expected " << expected << " (relative tol " << tol << ")";
}

// Op checks over test::kEdgeShapes (packed and strided), with references in double:
// CheckInPlaceMap: x random in [lo, hi), op(&view) == ref(x). CheckSrcMap: op(&out, src) ==
// ref(src), also in place (out == src), and a shape mismatch throws. CheckBinary: op(&m, A) ==
// ref(m, A) with A random in [alo, ahi), and a shape mismatch throws.
//
// For every shape: x = random in [lo, hi) through a (possibly strided) view, op(&view), and compare
// with ref(x) computed in double.
template <typename Real, typename Op, typename Ref>
void CheckInPlaceMap(Op op, Ref ref, double lo, double hi, double tol) {
  Rng rng = MakeRng();
  ForEachShape([&](const Shape& s, bool strided) {
    TestMatrix<Real> m(s.rows, s.cols, strided, &rng, lo, hi);
    Matrix<double> expected = ToDouble(m.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) expected(r, c) = ref(expected(r, c));
    op(&m.View());
    EXPECT_TRUE(ExpectNear(m.View(), expected, tol));
    EXPECT_TRUE(m.PaddingUnchanged());
  });
}

// As CheckInPlaceMap for the src-taking form op(&out, src): once into a separate output, once in
// place (out == src).
template <typename Real, typename Op, typename Ref>
void CheckSrcMap(Op op, Ref ref, double lo, double hi, double tol) {
  Rng rng = MakeRng();
  ForEachShape([&](const Shape& s, bool strided) {
    TestMatrix<Real> src(s.rows, s.cols, strided, &rng, lo, hi);
    TestMatrix<Real> out(s.rows, s.cols, !strided, &rng);
    Matrix<double> expected = ToDouble(src.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c) expected(r, c) = ref(expected(r, c));
    op(&out.View(), src.View());
    EXPECT_TRUE(ExpectNear(out.View(), expected, tol));
    EXPECT_TRUE(out.PaddingUnchanged());
    op(&src.View(), src.View());
    EXPECT_TRUE(ExpectNear(src.View(), expected, tol));
  });
  Matrix<Real> a(2, 3), b(3, 2);
  EXPECT_TRUE(ThrowsWith([&] { op(&a, b); }, "3x2"));
}

// *this = f(*this, A) for every shape, A random in [alo, ahi).
template <typename Real, typename Op, typename Ref>
void CheckBinary(Op op, Ref ref, double alo, double ahi, double tol) {
  Rng rng = MakeRng();
  ForEachShape([&](const Shape& s, bool strided) {
    TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    TestMatrix<Real> a(s.rows, s.cols, !strided, &rng, alo, ahi);
    Matrix<double> expected = ToDouble(m.View());
    for (MatrixIndexT r = 0; r < s.rows; ++r)
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        expected(r, c) = ref(expected(r, c), static_cast<double>(a.View()(r, c)));
    op(&m.View(), a.View());
    EXPECT_TRUE(ExpectNear(m.View(), expected, tol));
    EXPECT_TRUE(m.PaddingUnchanged());
  });
  Matrix<Real> x(4, 5), y(5, 4);
  EXPECT_TRUE(ThrowsWith([&] { op(&x, y); }, "5x4"));
}

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_MATRIX_TESTING_H_
