// tests/matrix/matrix-functions-extra-test.cc: SortSvd ordering and permutation,
// CreateEigenvalueMatrix blocks, AttemptComplexPower vs std::pow on std::complex.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "matrix/matrix-functions.h"
#include "matrix/matrix.h"
#include "tests/matrix-testing.h"

#include <complex>
#include <gtest/gtest.h>

namespace cuctx {
namespace {

template <typename Real>
class MatrixFunctionsExtraTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixFunctionsExtraTest, RealTypes);

TYPED_TEST(MatrixFunctionsExtraTest, SortSvdOrdersAndPermutesTogether) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (bool by_abs : {true, false}) {
    Vector<Real> s(5);
    s(0) = 1;
    s(1) = -7;
    s(2) = 3;
    s(3) = 0;
    s(4) = 5;
    Matrix<Real> U = test::GaussMatrix<Real>(4, 5, &rng), Vt = test::GaussMatrix<Real>(5, 6, &rng);
    // Tag column/row i of U/Vt with s(i) so the permutation can be checked.
    for (int i = 0; i < 5; ++i) {
      U(0, i) = s(i);
      Vt(i, 0) = s(i);
    }
    Matrix<Real> U_in(U), Vt_in(Vt);
    SortSvd(&s, &U, &Vt, by_abs);
    for (int i = 0; i + 1 < 5; ++i)
      EXPECT_GE(by_abs ? std::abs(s(i)) : s(i), by_abs ? std::abs(s(i + 1)) : s(i + 1));
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(U(0, i), s(i));
      EXPECT_EQ(Vt(i, 0), s(i));
    }
    // U diag(s) Vt is unchanged by the permutation.
    Vector<Real> s_in(5);
    for (int i = 0; i < 5; ++i) s_in(i) = U_in(0, i);
    Matrix<Real> before(4, 6), after(4, 6), Us(U_in);
    Us.MulColsVec(s_in);
    before.AddMatMat(1.0, Us, kNoTrans, Vt_in, kNoTrans, 0.0);
    Us = U;
    Us.MulColsVec(s);
    after.AddMatMat(1.0, Us, kNoTrans, Vt, kNoTrans, 0.0);
    EXPECT_TRUE(test::ExpectNear(after, before, 10 * test::Tol<Real>()));
  }
  Vector<Real> s(3);
  SortSvd(&s, static_cast<MatrixBase<Real>*>(nullptr));
  Matrix<Real> bad_u(3, 2), bad_vt(2, 3);
  EXPECT_THROW(SortSvd(&s, &bad_u), Error);
  EXPECT_THROW(SortSvd(&s, static_cast<MatrixBase<Real>*>(nullptr), &bad_vt), Error);
}

TYPED_TEST(MatrixFunctionsExtraTest, CreateEigenvalueMatrixBuildsBlocks) {
  using Real = TypeParam;
  Vector<Real> re(3), im(3);
  re(0) = 2;
  re(1) = 1;
  im(1) = 3;
  re(2) = 1;
  im(2) = -3;
  Matrix<Real> D(3, 3);
  D.Set(9);
  CreateEigenvalueMatrix(re, im, &D);
  const Real expected[3][3] = {{2, 0, 0}, {0, 1, 3}, {0, -3, 1}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(D(r, c), expected[r][c]);
  im(2) = 3;  // not a conjugate pair
  EXPECT_THROW(CreateEigenvalueMatrix(re, im, &D), Error);
  Matrix<Real> wrong(2, 2);
  EXPECT_THROW(CreateEigenvalueMatrix(re, im, &wrong), Error);
}

TYPED_TEST(MatrixFunctionsExtraTest, AttemptComplexPowerMatchesPrincipalPower) {
  using Real = TypeParam;
  const double cases[][3] = {
      {1, 1, 0.5}, {0.3, -2, 1.7}, {2, 0, -0.25}, {0, 0, 2}, {-1, 1e-3, 0.5}};
  for (const auto& c : cases) {
    Real re = c[0], im = c[1];
    ASSERT_TRUE(AttemptComplexPower(&re, &im, Real(c[2])));
    const std::complex<double> expected = std::pow(std::complex<double>(c[0], c[1]), c[2]);
    EXPECT_TRUE(test::ScalarNear(re, expected.real(), 10 * test::Tol<Real>()) ||
                std::abs(re - expected.real()) < 1e-6);
    EXPECT_TRUE(test::ScalarNear(im, expected.imag(), 10 * test::Tol<Real>()) ||
                std::abs(im - expected.imag()) < 1e-6);
  }
  Real re = -2, im = 0;
  EXPECT_FALSE(AttemptComplexPower(&re, &im, Real(0.5)));
  EXPECT_EQ(re, Real(-2));
  re = 0;
  EXPECT_FALSE(AttemptComplexPower(&re, &im, Real(-1)));
}

}  // namespace
}  // namespace cuctx
