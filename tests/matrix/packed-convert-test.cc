// tests/matrix/packed-convert-test.cc: Matrix from SpMatrix/TpMatrix and CopyFromSp/CopyFromTp.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/tp-matrix.h"
#include "tests/testing.h"

#include <gtest/gtest.h>

namespace cuctx {
namespace {

template <typename Real>
class PackedConvertTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PackedConvertTest, RealTypes);

TYPED_TEST(PackedConvertTest, MatrixFromSpIsSymmetricAndFromTpIsLower) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (int n : {0, 1, 5, 17}) {
    SpMatrix<Real> sp(n);
    TpMatrix<Real> tp(n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        sp(i, j) = static_cast<Real>(rng.Gauss());
        tp(i, j) = static_cast<Real>(rng.Gauss());
      }
    Matrix<Real> from_sp(sp), from_tp(tp), from_tp_t(tp, kTrans);
    Matrix<double> other(n, n);
    other.CopyFromSp(sp);
    Matrix<Real> copied(n, n);
    copied.CopyFromTp(tp);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        Real s = i >= j ? sp(i, j) : sp(j, i);
        Real t = i >= j ? tp(i, j) : Real(0);
        EXPECT_EQ(from_sp(i, j), s) << "n=" << n << " (" << i << "," << j << ")";
        EXPECT_EQ(other(i, j), static_cast<double>(s));
        EXPECT_EQ(from_tp(i, j), t);
        EXPECT_EQ(copied(i, j), t);
        EXPECT_EQ(from_tp_t(j, i), t);
      }
  }
}

TYPED_TEST(PackedConvertTest, ThrowsOnSizeMismatch) {
  using Real = TypeParam;
  SpMatrix<Real> sp(3);
  TpMatrix<Real> tp(3);
  Matrix<Real> wrong(3, 4);
  EXPECT_THROW(wrong.CopyFromSp(sp), Error);
  EXPECT_THROW(wrong.CopyFromTp(tp), Error);
}

}  // namespace
}  // namespace cuctx
