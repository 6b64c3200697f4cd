// tests/cudamatrix/cu-math-lstm-test.cc: cu::ComputeLstmNonlinearity / BackpropLstmNonlinearity
// (and their Cpu* forms) against a per-element reference written here in double, and the backward
// pass against finite differences of the forward one.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-math.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

template <typename Real>
using Guarded = test::GuardedCuMatrix<Real>;

template <typename Real>
class CuMathLstmTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CuMathLstmTest, RealTypes);

// exp and tanh differ in their last bits between the host library and the device, and errors of
// a few ulps pass through up to three nonlinearities in a row.
template <typename Real>
double LstmTol() {
  return 20 * test::Tol<Real>();
}

// ---- reference: the equations of cu-math.h, one element at a time in double

double Sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Gates {
  double c_prev, i_s, f_s, o_s, i, f, g, c, o, h;
};

Gates ForwardElement(const Matrix<double>& in, const Matrix<double>& p, int r, int c) {
  const int C = p.NumCols();
  const bool dropout = in.NumCols() == 5 * C + 3;
  Gates z;
  z.c_prev = in(r, 4 * C + c);
  z.i_s = dropout ? in(r, 5 * C) : 1.0;
  z.f_s = dropout ? in(r, 5 * C + 1) : 1.0;
  z.o_s = dropout ? in(r, 5 * C + 2) : 1.0;
  z.i = Sig(in(r, c) + p(0, c) * z.c_prev);
  z.f = Sig(in(r, C + c) + p(1, c) * z.c_prev);
  z.g = std::tanh(in(r, 2 * C + c));
  z.c = z.f_s * z.f * z.c_prev + z.i_s * z.i * z.g;
  z.o = Sig(in(r, 3 * C + c) + p(2, c) * z.c);
  z.h = std::tanh(z.c);
  return z;
}

Matrix<double> ForwardReference(const Matrix<double>& in, const Matrix<double>& p) {
  const int C = p.NumCols();
  Matrix<double> out(in.NumRows(), 2 * C);
  for (int r = 0; r < in.NumRows(); ++r)
    for (int c = 0; c < C; ++c) {
      const Gates z = ForwardElement(in, p, r, c);
      out(r, c) = z.c;
      out(r, C + c) = z.o_s * z.o * z.h;
    }
  return out;
}

struct BackpropResult {
  Matrix<double> input_deriv, params_deriv, value_sum, deriv_sum, self_repair_sum;
};

// value_sum and deriv_sum start from the given matrices (they are added to); input_deriv starts
// as a copy of `input_deriv_before` so that the untouched dropout columns can be compared.
BackpropResult BackpropReference(const Matrix<double>& in, const Matrix<double>& p,
                                 const Matrix<double>& dy, const Matrix<double>& deriv_sum_in,
                                 const Vector<double>& cfg, double count_in, bool float_count,
                                 const Matrix<double>& input_deriv_before,
                                 const Matrix<double>& value_sum_before) {
  const int C = p.NumCols(), N = in.NumRows();
  BackpropResult res{input_deriv_before, Matrix<double>(3, C), value_sum_before, deriv_sum_in,
                     Matrix<double>(5, C)};
  const double count =
      float_count ? static_cast<float>(1.0 + count_in) : 1.0 + count_in;  // as the code rounds it
  for (int c = 0; c < C; ++c) {
    double scale[5];
    for (int k = 0; k < 5; ++k) {
      const bool on = deriv_sum_in(k, c) / count < cfg(k);
      scale[k] = on ? cfg(5 + k) : 0.0;
      res.self_repair_sum(k, c) = on ? N : 0;
    }
    for (int r = 0; r < N; ++r) {
      const Gates z = ForwardElement(in, p, r, c);
      // dF/dc_t from both outputs, then through o_t's peephole.
      const double dm = dy(r, C + c);
      const double d_o_in = z.o * (1 - z.o) * z.o_s * z.h * dm - scale[3] * (2 * z.o - 1);
      const double d_c =
          dy(r, c) + (1 - z.h * z.h) * z.o_s * z.o * dm + p(2, c) * d_o_in - scale[4] * z.h;
      const double d_i_in = z.i * (1 - z.i) * z.i_s * z.g * d_c - scale[0] * (2 * z.i - 1);
      const double d_f_in = z.f * (1 - z.f) * z.f_s * z.c_prev * d_c - scale[1] * (2 * z.f - 1);
      const double d_c_part = (1 - z.g * z.g) * z.i_s * z.i * d_c - scale[2] * z.g;
      res.input_deriv(r, c) = d_i_in;
      res.input_deriv(r, C + c) = d_f_in;
      res.input_deriv(r, 2 * C + c) = d_c_part;
      res.input_deriv(r, 3 * C + c) = d_o_in;
      res.input_deriv(r, 4 * C + c) = p(0, c) * d_i_in + p(1, c) * d_f_in + z.f_s * z.f * d_c;
      res.params_deriv(0, c) += z.c_prev * d_i_in;
      res.params_deriv(1, c) += z.c_prev * d_f_in;
      res.params_deriv(2, c) += z.c * d_o_in;
      const double values[5] = {z.i, z.f, z.g, z.o, z.h};
      const double derivs[5] = {z.i * (1 - z.i), z.f * (1 - z.f), 1 - z.g * z.g, z.o * (1 - z.o),
                                1 - z.h * z.h};
      for (int k = 0; k < 5; ++k) {
        res.value_sum(k, c) += values[k];
        res.deriv_sum(k, c) += derivs[k];
      }
    }
  }
  return res;
}

// ---- random operands

template <typename Real>
Matrix<Real> RandomInput(int rows, int C, bool dropout, test::Rng* rng) {
  Matrix<Real> in = test::RandomMatrix<Real>(rows, 5 * C + (dropout ? 3 : 0), rng, -2, 2);
  if (dropout)
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < 3; ++k) in(r, 5 * C + k) = static_cast<Real>(rng->Uniform(0, 2));
  return in;
}

// Thresholds and scales; with `repair` a count of 10 and derivative sums in [0, 3) make some of
// the 5 x C units fall below their thresholds (about a third) and some not.
template <typename Real>
Vector<Real> RepairConfig(bool repair) {
  Vector<Real> cfg(10);
  const double thresholds[5] = {0.1, 0.1, 0.1, 0.1, 0.1};
  for (int k = 0; k < 5; ++k) {
    cfg(k) = static_cast<Real>(thresholds[k]);
    cfg(5 + k) = static_cast<Real>(repair ? 0.05 * (k + 1) : 0.0);
  }
  return cfg;
}

constexpr double kCountIn = 10;

struct Case {
  int rows, cells;
  bool dropout;
};
const std::vector<Case> kCases = {{1, 1, false},
                                  {1, 3, true},
                                  {17, 5, false},
                                  {17, 7, true},
                                  {257, 3, false},
                                  {257, 9, true},
                                  {0, 4, false},
                                  {4, 33, true},
                                  // Cell counts that allow the GPU's 2- and 4-wide accesses,
                                  // spanning several thread blocks (the last one partial).
                                  {33, 64, false},
                                  {9, 132, true},
                                  {257, 260, false}};

std::string Describe(const Case& k, bool strided) {
  return std::to_string(k.rows) + " rows, C = " + std::to_string(k.cells) +
         (k.dropout ? ", dropout" : "") + (strided ? ", strided" : "") + ", seed " +
         std::to_string(test::Seed());
}

TYPED_TEST(CuMathLstmTest, ForwardMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  for (const Case& k : kCases) {
    for (bool strided : {false, true}) {
      const Matrix<Real> in = RandomInput<Real>(k.rows, k.cells, k.dropout, &rng);
      const Matrix<Real> p = test::RandomMatrix<Real>(3, k.cells, &rng);
      const Matrix<double> want = ForwardReference(Matrix<double>(in), Matrix<double>(p));
      Guarded<Real> out(k.rows, 2 * k.cells, strided, &rng);
      cu::ComputeLstmNonlinearity(CuMatrix<Real>(in), CuMatrix<Real>(p), &out.view);
      EXPECT_TRUE(test::ExpectNear(ToHost(out.view), want, LstmTol<Real>()))
          << Describe(k, strided);
      EXPECT_TRUE(out.BorderUnchanged()) << Describe(k, strided);
      Matrix<Real> cpu(k.rows, 2 * k.cells);
      cu::CpuComputeLstmNonlinearity(in, p, &cpu);
      EXPECT_TRUE(test::ExpectNear(cpu, want, LstmTol<Real>())) << Describe(k, strided);
    }
  }
}

TYPED_TEST(CuMathLstmTest, ForwardIsFiniteForLargeInputs) {
  using Real = TypeParam;
  Matrix<Real> in(2, 5);
  in.Set(800);  // exp(800) overflows in both precisions; the sigmoid must not
  in.Row(1).Set(-800);
  Matrix<Real> p(3, 1);
  p.Set(1);
  CuMatrix<Real> out(2, 2);
  cu::ComputeLstmNonlinearity(CuMatrix<Real>(in), CuMatrix<Real>(p), &out);
  const Matrix<Real> got = ToHost(out);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) EXPECT_TRUE(std::isfinite(got(r, c))) << r << ", " << c;
}

// Runs the Cu backward pass with every output and compares each with the reference.
template <typename Real>
void CheckBackprop(const Case& k, bool strided, bool repair, test::Rng* rng) {
  const int C = k.cells, N = k.rows, W = 5 * C + (k.dropout ? 3 : 0);
  const Matrix<Real> in = RandomInput<Real>(N, C, k.dropout, rng);
  const Matrix<Real> p = test::RandomMatrix<Real>(3, C, rng);
  const Matrix<Real> dy = test::RandomMatrix<Real>(N, 2 * C, rng);
  const Matrix<double> dsum_in = test::RandomMatrix<double>(5, C, rng, 0, 3);
  const Matrix<double> vsum_before = test::RandomMatrix<double>(5, C, rng);
  const Vector<Real> cfg = RepairConfig<Real>(repair);
  Guarded<Real> in_deriv(N, W, strided, rng), p_deriv(3, C, strided, rng),
      sr_sum(5, C, strided, rng);
  Guarded<double> vsum(5, C, strided, rng), dsum(5, C, strided, rng);
  vsum.view.CopyFromMat(vsum_before);
  dsum.view.CopyFromMat(dsum_in);
  // deriv_sum_out is a separate copy of deriv_sum_in here; the in-place case is tested below.
  const CuMatrix<double> cu_dsum_in(dsum_in);
  cu::BackpropLstmNonlinearity(CuMatrix<Real>(in), CuMatrix<Real>(p), CuMatrix<Real>(dy),
                               cu_dsum_in, CuVector<Real>(cfg), kCountIn, &in_deriv.view,
                               &p_deriv.view, &vsum.view, &dsum.view, &sr_sum.view);
  const BackpropResult want = BackpropReference(
      Matrix<double>(in), Matrix<double>(p), Matrix<double>(dy), dsum_in, Vector<double>(cfg),
      kCountIn, sizeof(Real) == 4, Matrix<double>(in_deriv.Host()), vsum_before);
  const std::string what = Describe(k, strided) + (repair ? ", self-repair" : "");
  const double tol = LstmTol<Real>();
  EXPECT_TRUE(test::ExpectNear(ToHost(in_deriv.view), want.input_deriv, tol)) << what;
  // The parameter derivatives and the sums add up to 257 terms.
  EXPECT_TRUE(test::ExpectNear(ToHost(p_deriv.view), want.params_deriv, 10 * tol)) << what;
  EXPECT_TRUE(test::ExpectNear(ToHost(vsum.view), want.value_sum, 10 * tol)) << what;
  EXPECT_TRUE(test::ExpectNear(ToHost(dsum.view), want.deriv_sum, 10 * tol)) << what;
  EXPECT_TRUE(test::SameElements(ToHost(sr_sum.view), Matrix<Real>(want.self_repair_sum))) << what;
  if (repair && N > 0) {
    // The configuration must really exercise both branches.
    const double total = want.self_repair_sum.Sum() / N;
    EXPECT_GT(total, 0) << what;
    EXPECT_LT(total, 5 * C) << what;
  }
  for (const auto* g : {&in_deriv, &p_deriv, &sr_sum}) EXPECT_TRUE(g->BorderUnchanged()) << what;
  for (const auto* g : {&vsum, &dsum}) EXPECT_TRUE(g->BorderUnchanged()) << what;
}

TYPED_TEST(CuMathLstmTest, BackpropMatchesReference) {
  test::Rng rng = test::MakeRng();
  for (const Case& k : kCases)
    for (bool strided : {false, true})
      for (bool repair : {false, true}) CheckBackprop<TypeParam>(k, strided, repair, &rng);
}

// The column sums are added in a fixed order: two identical calls give identical bits.
TYPED_TEST(CuMathLstmTest, BackpropIsDeterministic) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const int N = 257, C = 260;
  const CuMatrix<Real> in(RandomInput<Real>(N, C, false, &rng)),
      p(test::RandomMatrix<Real>(3, C, &rng)), dy(test::RandomMatrix<Real>(N, 2 * C, &rng));
  const CuMatrix<double> dsum_in(test::RandomMatrix<double>(5, C, &rng, 0, 3));
  const CuVector<Real> cfg(RepairConfig<Real>(true));
  Matrix<Real> first_p;
  Matrix<double> first_v;
  for (int run = 0; run < 2; ++run) {
    CuMatrix<Real> in_deriv(N, 5 * C), p_deriv(3, C), sr_sum(5, C);
    CuMatrix<double> vsum(5, C), dsum(5, C);
    cu::BackpropLstmNonlinearity(in, p, dy, dsum_in, cfg, kCountIn, &in_deriv, &p_deriv, &vsum,
                                 &dsum, &sr_sum);
    if (run == 0) {
      first_p = ToHost(p_deriv);
      first_v = ToHost(vsum);
    } else {
      EXPECT_TRUE(test::SameElements(ToHost(p_deriv), first_p)) << "seed " << test::Seed();
      EXPECT_TRUE(test::SameElements(ToHost(vsum), first_v)) << "seed " << test::Seed();
    }
  }
}

// The Cpu* form against the same reference (it is what the CPU fallback calls, but is public).
TYPED_TEST(CuMathLstmTest, CpuBackpropMatchesReference) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const int N = 17, C = 5;
  const Matrix<Real> in = RandomInput<Real>(N, C, true, &rng);
  const Matrix<Real> p = test::RandomMatrix<Real>(3, C, &rng);
  const Matrix<Real> dy = test::RandomMatrix<Real>(N, 2 * C, &rng);
  const Matrix<double> dsum_in = test::RandomMatrix<double>(5, C, &rng, 0, 3);
  const Vector<Real> cfg = RepairConfig<Real>(true);
  Matrix<Real> in_deriv(N, 5 * C + 3), p_deriv(3, C), sr_sum(5, C);
  Matrix<double> vsum(5, C), dsum(dsum_in);
  cu::CpuBackpropLstmNonlinearity(in, p, dy, dsum_in, cfg, kCountIn, &in_deriv, &p_deriv, &vsum,
                                  &dsum, &sr_sum);
  const BackpropResult want = BackpropReference(
      Matrix<double>(in), Matrix<double>(p), Matrix<double>(dy), dsum_in, Vector<double>(cfg),
      kCountIn, sizeof(Real) == 4, Matrix<double>(N, 5 * C + 3), Matrix<double>(5, C));
  EXPECT_TRUE(test::ExpectNear(in_deriv, want.input_deriv, LstmTol<Real>()));
  EXPECT_TRUE(test::ExpectNear(p_deriv, want.params_deriv, 10 * LstmTol<Real>()));
  EXPECT_TRUE(test::ExpectNear(vsum, want.value_sum, 10 * LstmTol<Real>()));
  EXPECT_TRUE(test::ExpectNear(dsum, want.deriv_sum, 10 * LstmTol<Real>()));
  EXPECT_TRUE(test::SameElements(sr_sum, Matrix<Real>(want.self_repair_sum)));
}

// The optional outputs: each subset gives the same values as the full call, and what is skipped is
// left alone.
TYPED_TEST(CuMathLstmTest, BackpropNullOutputsGiveTheSameValues) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const int N = 17, C = 7;
  const CuMatrix<Real> in(RandomInput<Real>(N, C, false, &rng));
  const CuMatrix<Real> p(test::RandomMatrix<Real>(3, C, &rng));
  const CuMatrix<Real> dy(test::RandomMatrix<Real>(N, 2 * C, &rng));
  const CuMatrix<double> dsum_in(test::RandomMatrix<double>(5, C, &rng, 0, 3));
  const CuVector<Real> cfg(RepairConfig<Real>(true));
  CuMatrix<Real> in_deriv(N, 5 * C), p_deriv(3, C), sr_sum(5, C);
  CuMatrix<double> vsum(5, C), dsum(5, C);
  cu::BackpropLstmNonlinearity(in, p, dy, dsum_in, cfg, kCountIn, &in_deriv, &p_deriv, &vsum, &dsum,
                               &sr_sum);

  CuMatrix<Real> in_deriv2(N, 5 * C);
  cu::BackpropLstmNonlinearity<Real>(in, p, dy, dsum_in, cfg, kCountIn, &in_deriv2, nullptr,
                                     nullptr, nullptr, nullptr);
  EXPECT_TRUE(test::SameElements(ToHost(in_deriv2), ToHost(in_deriv)));

  CuMatrix<Real> p_deriv2(3, C), sr_sum2(5, C);
  CuMatrix<double> vsum2(5, C), dsum2(5, C);
  cu::BackpropLstmNonlinearity<Real>(in, p, dy, dsum_in, cfg, kCountIn, nullptr, &p_deriv2, &vsum2,
                                     &dsum2, &sr_sum2);
  EXPECT_TRUE(test::SameElements(ToHost(p_deriv2), ToHost(p_deriv)));
  EXPECT_TRUE(test::SameElements(ToHost(vsum2), ToHost(vsum)));
  EXPECT_TRUE(test::SameElements(ToHost(dsum2), ToHost(dsum)));
  EXPECT_TRUE(test::SameElements(ToHost(sr_sum2), ToHost(sr_sum)));

  // Nothing requested: a no-op that must not fail.
  cu::BackpropLstmNonlinearity<Real>(in, p, dy, dsum_in, cfg, kCountIn, nullptr, nullptr, nullptr,
                                     nullptr, nullptr);
}

// deriv_sum_out may be deriv_sum_in, and input_deriv may be input.
TYPED_TEST(CuMathLstmTest, BackpropInPlaceMatchesSeparateOutputs) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const int N = 17, C = 5;
  const Matrix<Real> in_host = RandomInput<Real>(N, C, true, &rng);
  const CuMatrix<Real> in(in_host);
  const CuMatrix<Real> p(test::RandomMatrix<Real>(3, C, &rng));
  const CuMatrix<Real> dy(test::RandomMatrix<Real>(N, 2 * C, &rng));
  const Matrix<double> dsum_host = test::RandomMatrix<double>(5, C, &rng, 0, 3);
  const CuMatrix<double> dsum_in(dsum_host);
  const CuVector<Real> cfg(RepairConfig<Real>(true));
  CuMatrix<Real> in_deriv(N, 5 * C + 3), p_deriv(3, C), sr_sum(5, C);
  CuMatrix<double> vsum(5, C), dsum(dsum_host);
  cu::BackpropLstmNonlinearity(in, p, dy, dsum_in, cfg, kCountIn, &in_deriv, &p_deriv, &vsum, &dsum,
                               &sr_sum);

  CuMatrix<Real> in_place(in_host), p_deriv2(3, C), sr_sum2(5, C);
  CuMatrix<double> vsum2(5, C), dsum_shared(dsum_host);
  cu::BackpropLstmNonlinearity(in_place, p, dy, dsum_shared, cfg, kCountIn, &in_place, &p_deriv2,
                               &vsum2, &dsum_shared, &sr_sum2);
  Matrix<Real> want = ToHost(in_deriv);
  // The dropout columns are not written, so in place they keep the input's masks.
  for (int r = 0; r < N; ++r)
    for (int k = 0; k < 3; ++k) want(r, 5 * C + k) = in_host(r, 5 * C + k);
  EXPECT_TRUE(test::SameElements(ToHost(in_place), want));
  EXPECT_TRUE(test::SameElements(ToHost(dsum_shared), ToHost(dsum)));
  EXPECT_TRUE(test::SameElements(ToHost(sr_sum2), ToHost(sr_sum)));
}

// With no rows the parameter derivative and the repair counts are still written (zero) and the
// sums are unchanged.
TYPED_TEST(CuMathLstmTest, BackpropWithNoRowsWritesZeros) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const int C = 3;
  const Matrix<double> before = test::RandomMatrix<double>(5, C, &rng, 0, 3);
  CuMatrix<Real> p_deriv(test::RandomMatrix<Real>(3, C, &rng)),
      sr_sum(test::RandomMatrix<Real>(5, C, &rng));
  CuMatrix<double> vsum(before), dsum(before);
  cu::BackpropLstmNonlinearity(
      CuMatrix<Real>(0, 5 * C), CuMatrix<Real>(3, C), CuMatrix<Real>(0, 2 * C),
      CuMatrix<double>(before), CuVector<Real>(RepairConfig<Real>(true)), kCountIn,
      static_cast<CuMatrixBase<Real>*>(nullptr), &p_deriv, &vsum, &dsum, &sr_sum);
  EXPECT_TRUE(test::SameElements(ToHost(p_deriv), Matrix<Real>(3, C)));
  EXPECT_TRUE(test::SameElements(ToHost(sr_sum), Matrix<Real>(5, C)));
  EXPECT_TRUE(test::SameElements(ToHost(vsum), before));
  EXPECT_TRUE(test::SameElements(ToHost(dsum), before));
}

// Without self-repair the backward pass is the gradient of F = sum(output .* dy): compared with
// central differences of the forward pass, in double, for every input and parameter.
TEST(CuMathLstmGradientTest, BackpropMatchesFiniteDifferences) {
  test::Rng rng = test::MakeRng();
  for (bool dropout : {false, true}) {
    const int N = 3, C = 3, W = 5 * C + (dropout ? 3 : 0);
    Matrix<double> in = RandomInput<double>(N, C, dropout, &rng);
    Matrix<double> p = test::RandomMatrix<double>(3, C, &rng);
    const Matrix<double> dy = test::RandomMatrix<double>(N, 2 * C, &rng);
    const Matrix<double> dsum_in = test::RandomMatrix<double>(5, C, &rng, 0, 3);
    CuMatrix<double> in_deriv(N, W), p_deriv(3, C), sr_sum(5, C), vsum(5, C), dsum(5, C);
    cu::BackpropLstmNonlinearity(CuMatrix<double>(in), CuMatrix<double>(p), CuMatrix<double>(dy),
                                 CuMatrix<double>(dsum_in),
                                 CuVector<double>(RepairConfig<double>(false)), kCountIn, &in_deriv,
                                 &p_deriv, &vsum, &dsum, &sr_sum);
    const Matrix<double> got_in = ToHost(in_deriv), got_p = ToHost(p_deriv);
    auto objective = [&]() {
      CuMatrix<double> out(N, 2 * C);
      cu::ComputeLstmNonlinearity(CuMatrix<double>(in), CuMatrix<double>(p), &out);
      return TraceMatMat(ToHost(out), dy, kTrans);
    };
    const double h = 1e-6;
    auto numeric = [&](double* x) {
      const double saved = *x;
      *x = saved + h;
      const double up = objective();
      *x = saved - h;
      const double down = objective();
      *x = saved;
      return (up - down) / (2 * h);
    };
    // The derivatives w.r.t. the dropout scales are not computed (their columns are left alone).
    for (int r = 0; r < N; ++r)
      for (int c = 0; c < 5 * C; ++c)
        EXPECT_NEAR(got_in(r, c), numeric(&in(r, c)), 1e-7) << "input (" << r << ", " << c << ")";
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < C; ++c)
        EXPECT_NEAR(got_p(r, c), numeric(&p(r, c)), 1e-7) << "params (" << r << ", " << c << ")";
  }
}

// ---- misuse

TYPED_TEST(CuMathLstmTest, ForwardThrowsOnBadShapes) {
  using Real = TypeParam;
  test::QuietLog quiet;
  CuMatrix<Real> p(3, 4), out(2, 8);
  EXPECT_TRUE(test::ThrowsWith([&] { cu::ComputeLstmNonlinearity(CuMatrix<Real>(2, 21), p, &out); },
                               "input"));
  EXPECT_TRUE(test::ThrowsWith(
      [&] { cu::ComputeLstmNonlinearity(CuMatrix<Real>(2, 20), CuMatrix<Real>(3, 5), &out); },
      "params"));
  CuMatrix<Real> bad_out(2, 7);
  EXPECT_TRUE(test::ThrowsWith(
      [&] { cu::ComputeLstmNonlinearity(CuMatrix<Real>(2, 20), p, &bad_out); }, "output"));
  EXPECT_TRUE(test::ThrowsWith(
      [&] { cu::ComputeLstmNonlinearity<Real>(CuMatrix<Real>(2, 20), p, nullptr); }, "output"));
  Matrix<Real> host_out(2, 8);
  EXPECT_TRUE(test::ThrowsWith(
      [&] { cu::CpuComputeLstmNonlinearity(Matrix<Real>(2, 22), Matrix<Real>(3, 4), &host_out); },
      "input"));
  // Output overlapping the input.
  CuMatrix<Real> both(2, 28);
  CuSubMatrix<Real> in_part = both.ColRange(0, 20), out_part = both.ColRange(12, 8);
  EXPECT_TRUE(
      test::ThrowsWith([&] { cu::ComputeLstmNonlinearity(in_part, p, &out_part); }, "overlaps"));
}

TYPED_TEST(CuMathLstmTest, BackpropThrowsOnBadArguments) {
  using Real = TypeParam;
  test::QuietLog quiet;
  const int N = 2, C = 4;
  const CuMatrix<Real> in(N, 5 * C), p(3, C), dy(N, 2 * C);
  const CuMatrix<double> dsum_in(5, C);
  const CuVector<Real> cfg(10);
  CuMatrix<Real> in_deriv(N, 5 * C), p_deriv(3, C), sr_sum(5, C);
  CuMatrix<double> vsum(5, C), dsum(5, C);
  auto run = [&](const CuMatrixBase<Real>& input, const CuMatrixBase<Real>& params,
                 const CuMatrixBase<Real>& od, const CuMatrixBase<double>& din,
                 const CuVectorBase<Real>& config, CuMatrixBase<Real>* id, CuMatrixBase<Real>* pd,
                 CuMatrixBase<double>* vs, CuMatrixBase<double>* ds, CuMatrixBase<Real>* srs) {
    cu::BackpropLstmNonlinearity(input, params, od, din, config, 0.0, id, pd, vs, ds, srs);
  };
  EXPECT_TRUE(test::ThrowsWith(
      [&] {
        run(CuMatrix<Real>(N, 5 * C + 1), p, dy, dsum_in, cfg, nullptr, &p_deriv, &vsum, &dsum,
            &sr_sum);
      },
      "input"));
  EXPECT_TRUE(test::ThrowsWith(
      [&] {
        run(in, CuMatrix<Real>(2, C), dy, dsum_in, cfg, &in_deriv, nullptr, nullptr, nullptr,
            nullptr);
      },
      "params"));
  EXPECT_TRUE(test::ThrowsWith(
      [&] {
        run(in, p, CuMatrix<Real>(N, C), dsum_in, cfg, &in_deriv, nullptr, nullptr, nullptr,
            nullptr);
      },
      "output_deriv"));
  EXPECT_TRUE(test::ThrowsWith(
      [&] {
        run(in, p, dy, CuMatrix<double>(4, C), cfg, &in_deriv, nullptr, nullptr, nullptr, nullptr);
      },
      "deriv_sum_in"));
  EXPECT_TRUE(test::ThrowsWith(
      [&] {
        run(in, p, dy, dsum_in, CuVector<Real>(9), &in_deriv, nullptr, nullptr, nullptr, nullptr);
      },
      "self_repair_config"));
  CuMatrix<Real> bad_id(N, 5 * C + 3);
  EXPECT_TRUE(test::ThrowsWith(
      [&] { run(in, p, dy, dsum_in, cfg, &bad_id, nullptr, nullptr, nullptr, nullptr); },
      "input_deriv"));
  EXPECT_TRUE(test::ThrowsWith(
      [&] { run(in, p, dy, dsum_in, cfg, &in_deriv, &p_deriv, nullptr, &dsum, &sr_sum); },
      "all NULL"));
  CuMatrix<double> bad_sum(5, C + 1);
  EXPECT_TRUE(test::ThrowsWith(
      [&] { run(in, p, dy, dsum_in, cfg, &in_deriv, &p_deriv, &bad_sum, &dsum, &sr_sum); },
      "value_sum_out"));
  EXPECT_TRUE(test::ThrowsWith(
      [&] { run(in, p, dy, dsum_in, cfg, &in_deriv, &p_deriv, &vsum, &vsum, &sr_sum); },
      "overlaps"));
  // input_deriv overlapping output_deriv.
  CuMatrix<Real> shared(N, 5 * C);
  const CuSubMatrix<Real> od_view = shared.ColRange(0, 2 * C);
  EXPECT_TRUE(test::ThrowsWith(
      [&] { run(in, p, od_view, dsum_in, cfg, &shared, nullptr, nullptr, nullptr, nullptr); },
      "overlaps"));
}

}  // namespace
}  // namespace cuctx
