// tests/matrix/matrix-nnet-test.cc: MatrixBase activations, softmax, group norms and losses.
// SPDX-License-Identifier: Apache-2.0
#include "matrix/matrix.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace cuctx {
namespace {

template <typename Real>
class MatrixNnetTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixNnetTest, RealTypes);

// ---- activations
// ---------------------------------------------------------------------------------------

TYPED_TEST(MatrixNnetTest, SigmoidMatchesReferenceForLargeInputs) {
  using Real = TypeParam;
  test::CheckSrcMap<Real>([](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Sigmoid(s); },
                          [](double x) { return 1 / (1 + std::exp(-x)); }, -60, 60,
                          test::Tol<Real>());
}

TYPED_TEST(MatrixNnetTest, TanhMatchesReference) {
  using Real = TypeParam;
  test::CheckSrcMap<Real>([](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->Tanh(s); },
                          [](double x) { return std::tanh(x); }, -20, 20, test::Tol<Real>());
}

TYPED_TEST(MatrixNnetTest, SoftHingeMatchesReferenceForLargeInputs) {
  using Real = TypeParam;
  test::CheckSrcMap<Real>([](MatrixBase<Real>* o, const MatrixBase<Real>& s) { o->SoftHinge(s); },
                          [](double x) { return x > 30 ? x : std::log1p(std::exp(x)); }, -100, 100,
                          test::Tol<Real>());
  Matrix<Real> big(1, 1);
  big(0, 0) = 1000;
  big.SoftHinge(big);
  EXPECT_EQ(big(0, 0), 1000);
}

TYPED_TEST(MatrixNnetTest, DiffSigmoidAndDiffTanhMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> value(s.rows, s.cols, strided, &rng, 0, 1);
    Matrix<Real> diff = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    Matrix<double> e_sig(s.rows, s.cols), e_tanh(s.rows, s.cols);
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      for (MatrixIndexT c = 0; c < s.cols; ++c) {
        const double y = value.View()(r, c), d = diff(r, c);
        e_sig(r, c) = d * y * (1 - y);
        e_tanh(r, c) = d * (1 - y * y);
      }
    }
    test::TestMatrix<Real> out(s.rows, s.cols, !strided, &rng);
    out.View().DiffSigmoid(value.View(), diff);
    EXPECT_TRUE(test::ExpectNear(out.View(), e_sig, 3 * test::Tol<Real>()));
    EXPECT_TRUE(out.PaddingUnchanged());
    diff.DiffTanh(value.View(), diff);  // in place on diff
    EXPECT_TRUE(test::ExpectNear(diff, e_tanh, 3 * test::Tol<Real>()));
  });
  Matrix<Real> a(2, 3), b(2, 3), c(3, 2);
  EXPECT_TRUE(test::ThrowsWith([&] { a.DiffSigmoid(b, c); }, "3x2"));
}

// ---- softmax
// ---------------------------------------------------------------------------------------------

// Row-wise softmax and log-softmax of x in double.
void ReferenceSoftMax(const Matrix<double>& x, Matrix<double>* soft, Matrix<double>* logsoft) {
  soft->Resize(x.NumRows(), x.NumCols());
  logsoft->Resize(x.NumRows(), x.NumCols());
  for (MatrixIndexT r = 0; r < x.NumRows(); ++r) {
    double max = -std::numeric_limits<double>::infinity(), sum = 0;
    for (MatrixIndexT c = 0; c < x.NumCols(); ++c) max = std::max(max, x(r, c));
    for (MatrixIndexT c = 0; c < x.NumCols(); ++c) sum += std::exp(x(r, c) - max);
    for (MatrixIndexT c = 0; c < x.NumCols(); ++c) {
      (*logsoft)(r, c) = x(r, c) - max - std::log(sum);
      (*soft)(r, c) = std::exp((*logsoft)(r, c));
    }
  }
}

TYPED_TEST(MatrixNnetTest, SoftMaxPerRowIsStableForLargeInputs) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (double offset : {0.0, 700.0, -700.0}) {
    test::ForEachShape([&](const test::Shape& s, bool strided) {
      test::TestMatrix<Real> x(s.rows, s.cols, strided, &rng, offset - 20, offset + 20);
      Matrix<double> soft, logsoft;
      ReferenceSoftMax(test::ToDouble(x.View()), &soft, &logsoft);
      test::TestMatrix<Real> out(s.rows, s.cols, !strided, &rng);
      out.View().SoftMaxPerRow(x.View());
      EXPECT_TRUE(test::ExpectNear(out.View(), soft, 10 * test::Tol<Real>())) << offset;
      EXPECT_TRUE(out.PaddingUnchanged());
      // Float log-probabilities relative to inputs near 700 carry that magnitude's rounding.
      const double log_tol = (offset == 0 ? 10 : 1000) * test::Tol<Real>();
      out.View().LogSoftMaxPerRow(x.View());
      EXPECT_TRUE(test::ExpectNear(out.View(), logsoft, log_tol)) << offset;
      Matrix<Real> in_place(x.View());
      in_place.ApplySoftMaxPerRow();
      EXPECT_TRUE(test::ExpectNear(in_place, soft, 10 * test::Tol<Real>()));
      in_place.CopyFromMat(x.View());
      in_place.ApplyLogSoftMaxPerRow();
      EXPECT_TRUE(test::ExpectNear(in_place, logsoft, log_tol));
      in_place.ApplySoftMaxPerRow(x.View());
      EXPECT_TRUE(test::ExpectNear(in_place, soft, 10 * test::Tol<Real>()));
      in_place.ApplyLogSoftMaxPerRow(x.View());
      EXPECT_TRUE(test::ExpectNear(in_place, logsoft, log_tol));
    });
  }
  Matrix<Real> a(2, 3), b(3, 3);
  EXPECT_TRUE(test::ThrowsWith([&] { a.SoftMaxPerRow(b); }, "3x3"));
}

TYPED_TEST(MatrixNnetTest, DiffSoftmaxPerRowMatchesReferenceInPlace) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Matrix<Real> value = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    value.ApplySoftMaxPerRow();
    test::TestMatrix<Real> diff(s.rows, s.cols, strided, &rng);
    Matrix<double> expected(s.rows, s.cols);
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      double dot = 0;
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        dot += static_cast<double>(value(r, c)) * diff.View()(r, c);
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        expected(r, c) = value(r, c) * (diff.View()(r, c) - dot);
    }
    Matrix<Real> out(s.rows, s.cols);
    out.DiffSoftmaxPerRow(value, diff.View());
    EXPECT_TRUE(test::ExpectNear(out, expected, 10 * test::Tol<Real>()));
    diff.View().DiffSoftmaxPerRow(value, diff.View());
    EXPECT_TRUE(test::ExpectNear(diff.View(), expected, 10 * test::Tol<Real>()));
    EXPECT_TRUE(diff.PaddingUnchanged());
  });
}

TYPED_TEST(MatrixNnetTest, DiffLogSoftmaxPerRowMatchesReferenceInPlace) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    Matrix<Real> value = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    value.ApplyLogSoftMaxPerRow();
    test::TestMatrix<Real> deriv(s.rows, s.cols, strided, &rng);
    Matrix<double> expected(s.rows, s.cols);
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      double sum = 0;
      for (MatrixIndexT c = 0; c < s.cols; ++c) sum += deriv.View()(r, c);
      for (MatrixIndexT c = 0; c < s.cols; ++c)
        expected(r, c) = deriv.View()(r, c) - std::exp(static_cast<double>(value(r, c))) * sum;
    }
    deriv.View().DiffLogSoftmaxPerRow(value, deriv.View());
    // Row sums over up to 4097 terms are rounded once to Real before use.
    EXPECT_TRUE(test::ExpectNear(deriv.View(), expected, 10 * test::Tol<Real>()));
    EXPECT_TRUE(deriv.PaddingUnchanged());
  });
}

// ---- group ops
// ---------------------------------------------------------------------------------------------

// The p-norm in double, with the Norm conventions.
double ReferencePNorm(const std::vector<double>& x, double p) {
  double acc = 0;
  if (p == 0) {
    for (double v : x) acc += v != 0;
    return acc;
  }
  if (std::isinf(p)) {
    for (double v : x) acc = std::max(acc, std::abs(v));
    return acc;
  }
  for (double v : x) acc += std::pow(std::abs(v), p);
  return std::pow(acc, 1 / p);
}

TYPED_TEST(MatrixNnetTest, GroupPnormMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Real inf = std::numeric_limits<Real>::infinity();
  for (Real p : {Real(0), Real(1), Real(2), Real(3), inf}) {
    test::ForEachShape([&](const test::Shape& s, bool strided) {
      const MatrixIndexT group = 3;
      test::TestMatrix<Real> src(s.rows, s.cols * group, strided, &rng);
      if (s.rows > 0 && s.cols > 0) src.View()(0, 0) = 0;
      test::TestMatrix<Real> out(s.rows, s.cols, !strided, &rng);
      Matrix<double> expected(s.rows, s.cols);
      for (MatrixIndexT r = 0; r < s.rows; ++r) {
        for (MatrixIndexT g = 0; g < s.cols; ++g) {
          std::vector<double> x;
          for (MatrixIndexT k = 0; k < group; ++k) x.push_back(src.View()(r, g * group + k));
          expected(r, g) = ReferencePNorm(x, p);
        }
      }
      out.View().GroupPnorm(src.View(), p);
      EXPECT_TRUE(test::ExpectNear(out.View(), expected, test::Tol<Real>())) << "p " << p;
      EXPECT_TRUE(out.PaddingUnchanged());
    });
  }
  Matrix<Real> out(2, 3), bad(2, 7);
  EXPECT_TRUE(test::ThrowsWith([&] { out.GroupPnorm(bad, 2); }, "7 input columns"));
  EXPECT_THROW(out.GroupPnorm(Matrix<Real>(3, 6), 2), Error);
}

TYPED_TEST(MatrixNnetTest, DiffGroupPnormMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Real inf = std::numeric_limits<Real>::infinity();
  for (Real p : {Real(1), Real(2), Real(3), inf}) {
    test::ForEachShape([&](const test::Shape& s, bool strided) {
      const MatrixIndexT group = 4;
      Matrix<Real> in = test::RandomMatrix<Real>(s.rows, s.cols * group, &rng);
      Matrix<Real> out(s.rows, s.cols);
      out.GroupPnorm(in, p);
      Matrix<Real> out_deriv = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
      Matrix<double> expected(s.rows, s.cols * group);
      for (MatrixIndexT r = 0; r < s.rows; ++r) {
        for (MatrixIndexT c = 0; c < s.cols * group; ++c) {
          const double x = in(r, c), y = out(r, c / group), sign = x > 0 ? 1 : (x < 0 ? -1 : 0);
          double d;
          if (p == 1)
            d = sign;
          else if (std::isinf(p))
            d = std::abs(in(r, c)) == out(r, c / group) ? (x >= 0 ? 1 : -1) : 0;
          else
            d = y == 0 ? 0 : sign * std::pow(std::abs(x), p - 1) * std::pow(y, 1 - p);
          expected(r, c) = d * out_deriv(r, c / group);
        }
      }
      test::TestMatrix<Real> in_deriv(s.rows, s.cols * group, strided, &rng);
      in_deriv.View().DiffGroupPnorm(in, out, out_deriv, p);
      EXPECT_TRUE(test::ExpectNear(in_deriv.View(), expected, 10 * test::Tol<Real>())) << p;
      EXPECT_TRUE(in_deriv.PaddingUnchanged());
    });
  }
}

TYPED_TEST(MatrixNnetTest, DiffGroupPnormMatchesFiniteDifferences) {
  // Checks the formula itself (not only the loop) against central differences in double.
  test::Rng rng = test::MakeRng();
  for (double p : {2.0, 3.0}) {
    Matrix<double> in = test::RandomMatrix<double>(3, 6, &rng);
    Matrix<double> out(3, 2), out_deriv = test::RandomMatrix<double>(3, 2, &rng);
    out.GroupPnorm(in, p);
    Matrix<double> grad(3, 6);
    grad.DiffGroupPnorm(in, out, out_deriv, p);
    const double h = 1e-6;
    for (MatrixIndexT r = 0; r < 3; ++r) {
      for (MatrixIndexT c = 0; c < 6; ++c) {
        Matrix<double> plus(in), minus(in), out_p(3, 2), out_m(3, 2);
        plus(r, c) += h;
        minus(r, c) -= h;
        out_p.GroupPnorm(plus, p);
        out_m.GroupPnorm(minus, p);
        out_p.AddMat(-1.0, out_m);
        const double numeric = TraceMatMat(out_p, out_deriv, kTrans) / (2 * h);
        EXPECT_NEAR(grad(r, c), numeric, 1e-6) << "p " << p << " at " << r << "," << c;
      }
    }
  }
}

TYPED_TEST(MatrixNnetTest, GroupMaxAndDerivMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    const MatrixIndexT group = 2;
    test::TestMatrix<Real> src(s.rows, s.cols * group, strided, &rng);
    Matrix<Real> out(s.rows, s.cols);
    out.GroupMax(src.View());
    Matrix<double> expected(s.rows, s.cols), e_deriv(s.rows, s.cols * group);
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      for (MatrixIndexT g = 0; g < s.cols; ++g) {
        expected(r, g) = std::max(src.View()(r, 2 * g), src.View()(r, 2 * g + 1));
        for (MatrixIndexT k = 0; k < 2; ++k)
          e_deriv(r, 2 * g + k) = src.View()(r, 2 * g + k) == expected(r, g) ? 1 : 0;
      }
    }
    EXPECT_TRUE(test::ExpectNear(out, expected, 0));
    test::TestMatrix<Real> deriv(s.rows, s.cols * group, !strided, &rng);
    deriv.View().GroupMaxDeriv(src.View(), out);
    EXPECT_TRUE(test::ExpectNear(deriv.View(), e_deriv, 0));
    EXPECT_TRUE(deriv.PaddingUnchanged());
  });
  Matrix<Real> out(2, 2), bad(2, 5);
  EXPECT_THROW(out.GroupMax(bad), Error);
  EXPECT_THROW(bad.GroupMaxDeriv(bad, out), Error);
}

TYPED_TEST(MatrixNnetTest, FindRowMaxIdMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.cols == 0 && s.rows > 0) return;
    test::TestMatrix<Real> m(s.rows, s.cols, strided, &rng);
    std::vector<int32> ids;
    m.View().FindRowMaxId(&ids);
    ASSERT_EQ(ids.size(), static_cast<size_t>(s.rows));
    std::vector<int32> raw(s.rows);
    m.View().FindRowMaxId(raw.data());
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      MatrixIndexT best = 0;
      for (MatrixIndexT c = 1; c < s.cols; ++c)
        if (m.View()(r, c) > m.View()(r, best)) best = c;
      ASSERT_EQ(ids[r], best);
      ASSERT_EQ(raw[r], best);
    }
  });
  Matrix<Real> ties(1, 4);
  ties(0, 1) = 2;
  ties(0, 3) = 2;
  std::vector<int32> ids;
  ties.FindRowMaxId(&ids);
  EXPECT_EQ(ids[0], 1);
  Matrix<Real> no_cols(3, 0);
  EXPECT_THROW(no_cols.FindRowMaxId(&ids), Error);
}

// ---- losses
// ------------------------------------------------------------------------------------------------

TYPED_TEST(MatrixNnetTest, DiffXentMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.cols == 0 && s.rows > 0) return;
    test::TestMatrix<Real> post(s.rows, s.cols, strided, &rng, 0.01, 1);
    std::vector<int32> tgt = test::RandomIndices(s.rows, s.cols, false, &rng);
    Matrix<double> expected = test::ToDouble(post.View());
    Vector<double> e_log(s.rows);
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      e_log(r) = std::log(expected(r, tgt[r]));
      expected(r, tgt[r]) -= 1;
    }
    Vector<Real> log_post;
    post.View().DiffXent(tgt, &log_post);
    EXPECT_TRUE(test::ExpectNear(post.View(), expected, test::Tol<Real>()));
    EXPECT_TRUE(test::ExpectNear(log_post, e_log, test::Tol<Real>()));
    EXPECT_TRUE(post.PaddingUnchanged());
  });
  Matrix<Real> m(2, 3);
  Vector<Real> log_post;
  EXPECT_TRUE(test::ThrowsWith(
      [&] {
        m.DiffXent(std::vector<int32>{0, 3}, &log_post);
      },
      "tgt[1] = 3"));
  EXPECT_THROW(m.DiffXent(std::vector<int32>{0}, &log_post), Error);
}

TYPED_TEST(MatrixNnetTest, CompObjfAndDerivMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    if (s.rows == 0 || s.cols == 0) return;
    Matrix<Real> A = test::RandomMatrix<Real>(s.rows, s.cols, &rng, 0.1, 1);
    test::TestMatrix<Real> deriv(s.rows, s.cols, strided, &rng);
    Matrix<double> expected = test::ToDouble(deriv.View());
    std::vector<MatrixElement<Real>> elems;
    double objf = 0, weight = 0;
    for (MatrixIndexT r = 0; r < s.rows; r += 2) {
      const MatrixIndexT c = static_cast<MatrixIndexT>(rng.Int(0, s.cols - 1));
      const Real w = static_cast<Real>(rng.Uniform(0, 2));
      elems.push_back({r, c, w});
      objf += w * std::log(static_cast<double>(A(r, c)));
      weight += w;
      expected(r, c) += w / static_cast<double>(A(r, c));
    }
    Real tot_objf = 0, tot_weight = 0;
    deriv.View().CompObjfAndDeriv(elems, A, &tot_objf, &tot_weight);
    EXPECT_TRUE(test::ExpectNear(deriv.View(), expected, test::Tol<Real>()));
    EXPECT_TRUE(test::ScalarNear(tot_objf, objf, 10 * test::Tol<Real>()));
    EXPECT_TRUE(test::ScalarNear(tot_weight, weight, 10 * test::Tol<Real>()));
  });
  Matrix<Real> d(2, 2), A(2, 2);
  A.Set(0.5);
  Real objf, weight;
  std::vector<MatrixElement<Real>> bad = {{2, 0, Real(1)}};
  EXPECT_TRUE(test::ThrowsWith([&] { d.CompObjfAndDeriv(bad, A, &objf, &weight); }, "(2, 0)"));
}

TYPED_TEST(MatrixNnetTest, ParametricReluAndDerivativeMatchReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  test::ForEachShape([&](const test::Shape& s, bool strided) {
    test::TestMatrix<Real> x(s.rows, s.cols, strided, &rng);
    if (s.rows > 0 && s.cols > 0) x.View()(0, 0) = 0;
    Vector<Real> alpha = test::RandomVector<Real>(s.cols, &rng, 0.5, 1.5);
    Vector<Real> beta = test::RandomVector<Real>(s.cols, &rng, 0, 0.5);
    Matrix<Real> diff = test::RandomMatrix<Real>(s.rows, s.cols, &rng);
    Matrix<double> e_y(s.rows, s.cols), e_d(s.rows, s.cols);
    for (MatrixIndexT r = 0; r < s.rows; ++r) {
      for (MatrixIndexT c = 0; c < s.cols; ++c) {
        const double v = x.View()(r, c), scale = v > 0 ? alpha(c) : beta(c);
        e_y(r, c) = v * scale;
        e_d(r, c) = diff(r, c) * scale;
      }
    }
    Matrix<Real> y(s.rows, s.cols);
    y.ParametricRelu(x.View(), alpha, beta);
    EXPECT_TRUE(test::ExpectNear(y, e_y, test::Tol<Real>()));
    diff.DiffParametricRelu(x.View(), diff, alpha, beta);
    EXPECT_TRUE(test::ExpectNear(diff, e_d, test::Tol<Real>()));
  });
  Matrix<Real> m(2, 3);
  Vector<Real> v2(2), v3(3);
  EXPECT_TRUE(test::ThrowsWith([&] { m.ParametricRelu(m, v2, v3); }, "dimension 2"));
  EXPECT_THROW(m.DiffParametricRelu(m, m, v3, v2), Error);
}

}  // namespace
}  // namespace cuctx
