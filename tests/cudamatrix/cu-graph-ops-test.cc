// tests/cudamatrix/cu-graph-ops-test.cc: every op family replayed by a CuGraph equals the same ops
// run eagerly.
// SPDX-License-Identifier: Apache-2.0
//
// Both modes (meaningful on the GPU): element-wise, BLAS, reductions through the device-result
// forms, nnet, copies and gathers, vector ops. Each step runs twice eagerly on one set of operands
// and is captured on an identical set and launched twice; every operand must then be identical
// (the same kernels run, so equality is exact, NaN matching NaN).
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/cudamatrix/cu-graph-testing.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <gtest/gtest.h>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

using test::Identical;
using test::ToHost;

using RealTypes = ::testing::Types<float, double>;

// Operand shapes: odd sizes, none a multiple of a block; kCols is kGroups groups of kGroupSize.
constexpr MatrixIndexT kRows = 37, kCols = 51, kInner = 29, kGroupSize = 3,
                       kGroups = kCols / kGroupSize;
constexpr MatrixIndexT kBigM = 192, kBigK = 160, kBigN = 224;  // a GEMM big enough for cuBLAS tiles
constexpr MatrixIndexT kNumResults = 12, kNumPairs = 10;

// Random contents of every operand, made once per test.
template <typename Real>
struct HostOperands {
  using Other = typename OtherReal<Real>::Real;
  explicit HostOperands(test::Rng* rng)
      : a(test::RandomMatrix<Real>(kRows, kCols, rng)),
        b(test::RandomMatrix<Real>(kRows, kCols, rng)),
        pos(test::RandomMatrix<Real>(kRows, kCols, rng, 0.5, 2.0)),
        at(test::RandomMatrix<Real>(kCols, kRows, rng)),
        rk(test::RandomMatrix<Real>(kRows, kInner, rng)),
        kr(test::RandomMatrix<Real>(kInner, kRows, rng)),
        kc(test::RandomMatrix<Real>(kInner, kCols, rng)),
        ck(test::RandomMatrix<Real>(kCols, kInner, rng)),
        sq(test::RandomMatrix<Real>(kCols, kCols, rng)),
        out(test::RandomMatrix<Real>(kRows, kCols, rng)),
        out_t(test::RandomMatrix<Real>(kCols, kRows, rng)),
        out_sq(test::RandomMatrix<Real>(kRows, kRows, rng)),
        grp(test::RandomMatrix<Real>(kRows, kGroups, rng)),
        grp2(test::RandomMatrix<Real>(kRows, kGroups, rng)),
        big_a(test::RandomMatrix<Real>(kBigM, kBigK, rng)),
        big_b(test::RandomMatrix<Real>(kBigK, kBigN, rng)),
        big_out(test::RandomMatrix<Real>(kBigM, kBigN, rng)),
        conv(test::RandomMatrix<Other>(kRows, kCols, rng)),
        vr(test::RandomVector<Real>(kRows, rng)),
        vc(test::RandomVector<Real>(kCols, rng)),
        vr_pos(test::RandomVector<Real>(kRows, rng, 0.5, 2.0)),
        vc_pos(test::RandomVector<Real>(kCols, rng, 0.5, 2.0)),
        alpha_c(test::RandomVector<Real>(kCols, rng)),
        beta_c(test::RandomVector<Real>(kCols, rng)),
        out_r(test::RandomVector<Real>(kRows, rng)),
        out_c(test::RandomVector<Real>(kCols, rng)),
        flat(test::RandomVector<Real>(kRows * kCols, rng)),
        conv_v(test::RandomVector<Other>(kRows, rng)),
        row_idx(test::RandomIndices(kRows, kRows, true, rng)),
        col_idx(test::RandomIndices(kCols, kCols, true, rng)),
        tgt(test::RandomIndices(kRows, kCols, false, rng)),
        elems(test::RandomIndices(kRows, kCols, true, rng)),
        col_elems(test::RandomIndices(kCols, kRows, false, rng)) {
    row_perm.resize(kRows);
    for (MatrixIndexT r = 0; r < kRows; ++r) row_perm[r] = r;
    std::shuffle(row_perm.begin(), row_perm.end(), rng->Engine());
    for (MatrixIndexT r = 0; r < kRows; ++r) row_ranges.push_back(RandomRange(kRows, rng));
    for (MatrixIndexT c = 0; c < kCols; ++c) col_ranges.push_back(RandomRange(kCols, rng));
    for (MatrixIndexT i = 0; i < kNumPairs; ++i)
      pairs.push_back(Int32Pair{static_cast<int32>(rng->Int(0, kRows - 1)),
                                static_cast<int32>(rng->Int(0, kCols - 1))});
  }
  // [first, second) within [0, n]; empty about a fifth of the time.
  static Int32Pair RandomRange(MatrixIndexT n, test::Rng* rng) {
    const int32 p = static_cast<int32>(rng->Int(0, n)), q = static_cast<int32>(rng->Int(0, n));
    if (rng->Uniform() < 0.2) return Int32Pair{std::max(p, q), std::min(p, q)};
    return Int32Pair{std::min(p, q), std::max(p, q)};
  }

  Matrix<Real> a, b, pos, at, rk, kr, kc, ck, sq, out, out_t, out_sq, grp, grp2, big_a, big_b,
      big_out;
  Matrix<Other> conv;
  Vector<Real> vr, vc, vr_pos, vc_pos, alpha_c, beta_c, out_r, out_c, flat;
  Vector<Other> conv_v;
  std::vector<int32> row_idx, col_idx, tgt, elems, col_elems, row_perm;
  std::vector<Int32Pair> row_ranges, col_ranges, pairs;
};

// Device copies of the host operands, plus outputs that start at zero. Index arrays are built
// here, before any capture: building one copies from the host.
template <typename Real>
struct Operands {
  using Other = typename OtherReal<Real>::Real;
  explicit Operands(const HostOperands<Real>& h)
      : a(h.a),
        b(h.b),
        pos(h.pos),
        at(h.at),
        rk(h.rk),
        kr(h.kr),
        kc(h.kc),
        ck(h.ck),
        sq(h.sq),
        out(h.out),
        out_t(h.out_t),
        out_sq(h.out_sq),
        grp(h.grp),
        grp2(h.grp2),
        big_a(h.big_a),
        big_b(h.big_b),
        big_out(h.big_out),
        mask(kRows, kCols),
        conv(h.conv),
        vr(h.vr),
        vc(h.vc),
        vr_pos(h.vr_pos),
        vc_pos(h.vc_pos),
        alpha_c(h.alpha_c),
        beta_c(h.beta_c),
        out_r(h.out_r),
        out_c(h.out_c),
        flat(h.flat),
        results(kNumResults),
        lookup(kNumPairs),
        log_post(kRows),
        conv_v(h.conv_v),
        row_idx(h.row_idx),
        col_idx(h.col_idx),
        tgt(h.tgt),
        elems(h.elems),
        col_elems(h.col_elems),
        row_perm(h.row_perm),
        ids(kRows),
        row_ranges(h.row_ranges),
        col_ranges(h.col_ranges),
        pairs(h.pairs) {}

  std::vector<std::pair<const char*, const CuMatrixBase<Real>*>> Matrices() const {
    return {{"a", &a},
            {"b", &b},
            {"pos", &pos},
            {"at", &at},
            {"rk", &rk},
            {"kr", &kr},
            {"kc", &kc},
            {"ck", &ck},
            {"sq", &sq},
            {"out", &out},
            {"out_t", &out_t},
            {"out_sq", &out_sq},
            {"grp", &grp},
            {"grp2", &grp2},
            {"big_a", &big_a},
            {"big_b", &big_b},
            {"big_out", &big_out},
            {"mask", &mask}};
  }
  std::vector<std::pair<const char*, const CuVectorBase<Real>*>> Vectors() const {
    return {{"vr", &vr},           {"vc", &vc},           {"vr_pos", &vr_pos},
            {"vc_pos", &vc_pos},   {"alpha_c", &alpha_c}, {"beta_c", &beta_c},
            {"out_r", &out_r},     {"out_c", &out_c},     {"flat", &flat},
            {"results", &results}, {"lookup", &lookup},   {"log_post", &log_post}};
  }
  std::vector<std::pair<const char*, const CuArrayBase<int32>*>> Arrays() const {
    return {{"row_idx", &row_idx},     {"col_idx", &col_idx},   {"tgt", &tgt}, {"elems", &elems},
            {"col_elems", &col_elems}, {"row_perm", &row_perm}, {"ids", &ids}};
  }

  CuMatrix<Real> a, b, pos, at, rk, kr, kc, ck, sq, out, out_t, out_sq, grp, grp2, big_a, big_b,
      big_out, mask;
  CuMatrix<Other> conv;
  CuVector<Real> vr, vc, vr_pos, vc_pos, alpha_c, beta_c, out_r, out_c, flat, results, lookup,
      log_post;
  CuVector<Other> conv_v;
  CuArray<int32> row_idx, col_idx, tgt, elems, col_elems, row_perm, ids;
  CuArray<Int32Pair> row_ranges, col_ranges, pairs;
};

template <typename Real>
void ExpectSameOperands(const Operands<Real>& eager, const Operands<Real>& replayed) {
  const auto em = eager.Matrices(), rm = replayed.Matrices();
  for (size_t i = 0; i < em.size(); ++i)
    EXPECT_TRUE(Identical(*em[i].second, *rm[i].second)) << "matrix " << em[i].first;
  const auto ev = eager.Vectors(), rv = replayed.Vectors();
  for (size_t i = 0; i < ev.size(); ++i)
    EXPECT_TRUE(Identical(*ev[i].second, *rv[i].second)) << "vector " << ev[i].first;
  const auto ea = eager.Arrays(), ra = replayed.Arrays();
  for (size_t i = 0; i < ea.size(); ++i)
    EXPECT_TRUE(Identical(*ea[i].second, *ra[i].second)) << "array " << ea[i].first;
  EXPECT_TRUE(Identical(eager.conv, replayed.conv)) << "matrix conv";
  EXPECT_TRUE(Identical(eager.conv_v, replayed.conv_v)) << "vector conv_v";
}

template <typename Real>
struct NamedStep {
  const char* name;
  std::function<void(Operands<Real>*)> run;
};

// For each step: run it twice eagerly on one set of operands; capture it on an identical set and
// launch twice; every operand must be identical. An exception (an op that cannot be captured)
// fails the step and the loop goes on.
template <typename Real>
void ExpectReplaysMatchEager(const std::vector<NamedStep<Real>>& steps) {
  constexpr int kTimes = 2;
  test::Rng rng = test::MakeRng();
  const HostOperands<Real> host(&rng);
  for (const NamedStep<Real>& step : steps) {
    SCOPED_TRACE(step.name);
    try {
      Operands<Real> eager(host), replayed(host);
      for (int i = 0; i < kTimes; ++i) step.run(&eager);
      CuGraph graph = CuGraph::Capture([&] { step.run(&replayed); });
      for (int i = 0; i < kTimes; ++i) graph.Launch();
      ExpectSameOperands(eager, replayed);
    } catch (const std::exception& e) {
      ADD_FAILURE() << step.name << " threw: " << e.what();
    }
    EXPECT_FALSE(CuGraph::Capturing());
  }
}

template <typename Real>
class CuGraphOpsTest : public ::testing::Test {};
TYPED_TEST_SUITE(CuGraphOpsTest, RealTypes);

TYPED_TEST(CuGraphOpsTest, ElementwiseReplaysMatchEager) {
  using Real = TypeParam;
  using Ops = Operands<Real>;
  ExpectReplaysMatchEager<Real>({
      {"Set", [](Ops* o) { o->out.Set(0.25); }},
      {"SetZero", [](Ops* o) { o->out.SetZero(); }},
      {"Scale", [](Ops* o) { o->a.Scale(0.5); }},
      {"Add", [](Ops* o) { o->a.Add(0.125); }},
      {"AddMat", [](Ops* o) { o->out.AddMat(0.5, o->a); }},
      {"AddMat kTrans", [](Ops* o) { o->out.AddMat(-2.0, o->at, kTrans); }},
      {"AddMat self", [](Ops* o) { o->out.AddMat(0.5, o->out); }},
      {"MulElements", [](Ops* o) { o->out.MulElements(o->a); }},
      {"DivElements", [](Ops* o) { o->out.DivElements(o->pos); }},
      {"ApplyExp", [](Ops* o) { o->a.ApplyExp(); }},
      {"Exp", [](Ops* o) { o->out.Exp(o->a); }},
      {"ApplyLog", [](Ops* o) { o->pos.ApplyLog(); }},
      {"Log", [](Ops* o) { o->out.Log(o->pos); }},
      {"Sigmoid", [](Ops* o) { o->out.Sigmoid(o->a); }},
      {"Sigmoid in place", [](Ops* o) { o->a.Sigmoid(o->a); }},
      {"Tanh", [](Ops* o) { o->out.Tanh(o->a); }},
      {"SoftHinge", [](Ops* o) { o->out.SoftHinge(o->a); }},
      {"ApplyFloor", [](Ops* o) { o->a.ApplyFloor(-0.25); }},
      {"Floor", [](Ops* o) { o->out.Floor(o->a, 0.1); }},
      {"ApplyCeiling", [](Ops* o) { o->a.ApplyCeiling(0.3); }},
      {"Ceiling", [](Ops* o) { o->out.Ceiling(o->a, 0.2); }},
      {"ApplyPow", [](Ops* o) { o->pos.ApplyPow(1.5); }},
      {"Pow", [](Ops* o) { o->out.Pow(o->pos, -0.5); }},
      {"ApplyPowAbs", [](Ops* o) { o->a.ApplyPowAbs(1.5, true); }},
      {"PowAbs", [](Ops* o) { o->out.PowAbs(o->a, 0.5); }},
      {"ApplyHeaviside", [](Ops* o) { o->a.ApplyHeaviside(); }},
      {"Heaviside", [](Ops* o) { o->out.Heaviside(o->a); }},
      {"ApplyExpLimited", [](Ops* o) { o->a.ApplyExpLimited(-0.5, 0.5); }},
      {"ExpLimited", [](Ops* o) { o->out.ExpLimited(o->a, -0.25, 0.75); }},
      {"ApplyExpSpecial", [](Ops* o) { o->a.ApplyExpSpecial(); }},
      {"ExpSpecial", [](Ops* o) { o->out.ExpSpecial(o->a); }},
      {"InvertElements", [](Ops* o) { o->pos.InvertElements(); }},
      {"Max(A)", [](Ops* o) { o->out.Max(o->a); }},
      {"Min(A)", [](Ops* o) { o->out.Min(o->a); }},
      {"MulColsVec", [](Ops* o) { o->out.MulColsVec(o->vc); }},
      {"MulRowsVec", [](Ops* o) { o->out.MulRowsVec(o->vr); }},
      {"DivRowsVec", [](Ops* o) { o->out.DivRowsVec(o->vr_pos); }},
      {"MulRowsGroupMat", [](Ops* o) { o->out.MulRowsGroupMat(o->grp); }},
      {"AddMatBlocks", [](Ops* o) { o->grp.AddMatBlocks(1.0, o->a); }},
      {"AddMatMatElements", [](Ops* o) { o->out.AddMatMatElements(0.5, o->a, o->b, 0.25); }},
      {"SetMatMatDivMat", [](Ops* o) { o->out.SetMatMatDivMat(o->a, o->b, o->pos); }},
      {"AddToDiag", [](Ops* o) { o->out.AddToDiag(1.5); }},
      {"temporary copy",
       [](Ops* o) {
         CuMatrix<Real> t(o->a);  // allocated and freed inside the capture
         t.Scale(2.0);
         t.AddMat(1.0, o->b);
         o->out.MulElements(t);
       }},
  });
}

TYPED_TEST(CuGraphOpsTest, BlasReplaysMatchEager) {
  using Real = TypeParam;
  using Ops = Operands<Real>;
  ExpectReplaysMatchEager<Real>({
      {"AddMatMat NN",
       [](Ops* o) { o->out.AddMatMat(0.5, o->rk, kNoTrans, o->kc, kNoTrans, 0.25); }},
      {"AddMatMat TN", [](Ops* o) { o->out.AddMatMat(0.5, o->kr, kTrans, o->kc, kNoTrans, 0.25); }},
      {"AddMatMat NT", [](Ops* o) { o->out.AddMatMat(0.5, o->rk, kNoTrans, o->ck, kTrans, 1.0); }},
      {"AddMatMat TT", [](Ops* o) { o->out.AddMatMat(-1.0, o->kr, kTrans, o->ck, kTrans, 0.0); }},
      {"AddMatMat big",
       [](Ops* o) { o->big_out.AddMatMat(1.0, o->big_a, kNoTrans, o->big_b, kNoTrans, 0.0); }},
      {"AddMatMat temporaries",
       [](Ops* o) {
         CuMatrix<Real> t(kRows, kRows, kUndefined);
         t.AddMatMat(1.0, o->a, kNoTrans, o->at, kNoTrans, 0.0);
         o->out.AddMatMat(1.0, t, kNoTrans, o->b, kNoTrans, 0.5);
       }},
      {"SymAddMat2", [](Ops* o) { o->out_sq.SymAddMat2(0.5, o->a, kNoTrans, 0.25); }},
      {"SymAddMat2 kTrans", [](Ops* o) { o->sq.SymAddMat2(1.0, o->a, kTrans, 0.0); }},
      {"AddMatVec", [](Ops* o) { o->out_r.AddMatVec(0.5, o->a, kNoTrans, o->vc, 0.25); }},
      {"AddMatVec kTrans", [](Ops* o) { o->out_c.AddMatVec(1.0, o->a, kTrans, o->vr, 0.0); }},
      {"AddVecVec (matrix)", [](Ops* o) { o->out.AddVecVec(0.5, o->vr, o->vc); }},
      {"AddVecVec (vector)", [](Ops* o) { o->out_r.AddVecVec(0.5, o->vr, o->vr_pos, 0.25); }},
      {"AddVecToRows", [](Ops* o) { o->out.AddVecToRows(0.5, o->vc, 0.25); }},
      {"AddVecToCols", [](Ops* o) { o->out.AddVecToCols(-1.0, o->vr); }},
      {"AddDiagVecMat", [](Ops* o) { o->out.AddDiagVecMat(0.5, o->vr, o->a, kNoTrans, 0.25); }},
      {"AddDiagVecMat kTrans", [](Ops* o) { o->out.AddDiagVecMat(1.0, o->vr, o->at, kTrans); }},
      {"AddMatDiagVec", [](Ops* o) { o->out.AddMatDiagVec(0.5, o->a, kNoTrans, o->vc, 0.25); }},
      {"AddMatDiagVec kTrans", [](Ops* o) { o->out.AddMatDiagVec(1.0, o->at, kTrans, o->vc); }},
      {"AddDiagMat2", [](Ops* o) { o->out_r.AddDiagMat2(0.5, o->a, kNoTrans, 0.25); }},
      {"AddDiagMat2 kTrans", [](Ops* o) { o->out_c.AddDiagMat2(1.0, o->a, kTrans, 1.0); }},
      {"AddDiagMatMat",
       [](Ops* o) { o->out_r.AddDiagMatMat(0.5, o->a, kNoTrans, o->at, kNoTrans, 0.25); }},
      {"AddDiagMatMat kTrans",
       [](Ops* o) { o->out_c.AddDiagMatMat(1.0, o->a, kTrans, o->a, kNoTrans, 0.0); }},
  });
}

TYPED_TEST(CuGraphOpsTest, ReductionsIntoDeviceResultsMatchEager) {
  using Real = TypeParam;
  using Ops = Operands<Real>;
  auto reductions = [](Ops* o) {
    o->a.Sum(o->results(0));
    o->a.Max(o->results(1));
    o->a.Min(o->results(2));
    o->sq.Trace(o->results(3));
    o->a.Trace(o->results(4), false);
    o->vc.Sum(o->results(5));
    o->vc.Max(o->results(6));
    o->vc.Min(o->results(7));
    CuMatrix<Real> empty;
    empty.Sum(o->results(8));  // 0
    CuMatrix<Real> t(o->b);    // a reduction of a temporary
    t.MulElements(o->b);
    t.Sum(o->results(9));
  };
  ExpectReplaysMatchEager<Real>({
      {"Sum Max Min Trace (matrix and vector)", reductions},
      {"AddRowSumMat", [](Ops* o) { o->out_c.AddRowSumMat(0.5, o->a, 0.25); }},
      {"AddColSumMat", [](Ops* o) { o->out_r.AddColSumMat(1.0, o->a, 0.0); }},
  });

  // The device results agree with the forms that return to the host (run outside any capture).
  test::Rng rng = test::MakeRng();
  const HostOperands<Real> host(&rng);
  Operands<Real> o(host);
  o.results.Set(-1.0);
  CuGraph graph = CuGraph::Capture([&] { reductions(&o); });
  graph.Launch();
  const Vector<Real> r = ToHost(o.results);
  // Sums in a different order differ in the last bits; 100 * Tol absolute for ~2000 terms of
  // magnitude below 2.
  const double tol = 100 * test::Tol<Real>();
  EXPECT_NEAR(r(0), o.a.Sum(), tol);
  EXPECT_EQ(r(1), o.a.Max());
  EXPECT_EQ(r(2), o.a.Min());
  EXPECT_NEAR(r(3), o.sq.Trace(), tol);
  EXPECT_NEAR(r(4), o.a.Trace(false), tol);
  EXPECT_NEAR(r(5), o.vc.Sum(), tol);
  EXPECT_EQ(r(6), o.vc.Max());
  EXPECT_EQ(r(7), o.vc.Min());
  EXPECT_EQ(r(8), Real(0));
  EXPECT_NEAR(r(9), o.b.FrobeniusNorm() * o.b.FrobeniusNorm(), tol);
  EXPECT_EQ(r(10), Real(-1));  // untouched
}

TYPED_TEST(CuGraphOpsTest, NnetReplaysMatchEager) {
  using Real = TypeParam;
  using Ops = Operands<Real>;
  ExpectReplaysMatchEager<Real>({
      {"SoftMaxPerRow", [](Ops* o) { o->out.SoftMaxPerRow(o->a); }},
      {"LogSoftMaxPerRow", [](Ops* o) { o->out.LogSoftMaxPerRow(o->a); }},
      {"ApplySoftMaxPerRow", [](Ops* o) { o->b.ApplySoftMaxPerRow(); }},
      {"ApplyLogSoftMaxPerRow", [](Ops* o) { o->b.ApplyLogSoftMaxPerRow(); }},
      {"DiffSigmoid", [](Ops* o) { o->out.DiffSigmoid(o->a, o->b); }},
      {"DiffTanh", [](Ops* o) { o->out.DiffTanh(o->a, o->b); }},
      {"DiffSoftmaxPerRow",
       [](Ops* o) {
         o->out.SoftMaxPerRow(o->a);
         o->pos.DiffSoftmaxPerRow(o->out, o->b);
       }},
      {"DiffLogSoftmaxPerRow",
       [](Ops* o) {
         o->out.LogSoftMaxPerRow(o->a);
         o->pos.DiffLogSoftmaxPerRow(o->out, o->b);
       }},
      {"GroupMax and GroupMaxDeriv",
       [](Ops* o) {
         o->grp.GroupMax(o->a);
         o->out.GroupMaxDeriv(o->a, o->grp);
       }},
      {"GroupPnorm and DiffGroupPnorm",
       [](Ops* o) {
         o->grp.GroupPnorm(o->a, 2.0);
         o->out.DiffGroupPnorm(o->a, o->grp, o->grp2, 2.0);
       }},
      {"GroupPnorm p=1", [](Ops* o) { o->grp.GroupPnorm(o->a, 1.0); }},
      {"ParametricRelu", [](Ops* o) { o->out.ParametricRelu(o->a, o->alpha_c, o->beta_c); }},
      {"DiffParametricRelu",
       [](Ops* o) { o->out.DiffParametricRelu(o->a, o->b, o->alpha_c, o->beta_c); }},
      {"FindRowMaxId", [](Ops* o) { o->a.FindRowMaxId(&o->ids); }},
      {"DiffXent", [](Ops* o) { o->pos.DiffXent(o->tgt, &o->log_post); }},
      {"CuVector ApplySoftMax", [](Ops* o) { o->vc.ApplySoftMax(); }},
      {"CuVector ApplyLogSoftMax", [](Ops* o) { o->vr.ApplyLogSoftMax(); }},
  });
}

TYPED_TEST(CuGraphOpsTest, CopiesAndGathersReplaysMatchEager) {
  using Real = TypeParam;
  using Ops = Operands<Real>;
  ExpectReplaysMatchEager<Real>({
      {"CopyFromMat", [](Ops* o) { o->out.CopyFromMat(o->b); }},
      {"CopyFromMat kTrans", [](Ops* o) { o->out.CopyFromMat(o->at, kTrans); }},
      {"CopyFromMat other precision", [](Ops* o) { o->out.CopyFromMat(o->conv); }},
      {"CopyFromMat to other precision, kTrans",
       [](Ops* o) { o->conv.CopyFromMat(o->at, kTrans); }},
      {"copy-constructed temporaries",
       [](Ops* o) {
         CuMatrix<Real> t(o->a, kTrans);
         CuMatrix<Real> u(t);
         u.Transpose();
         o->out_t.CopyFromMat(t);
         o->out.AddMat(1.0, u);
       }},
      {"CopyRows", [](Ops* o) { o->out.CopyRows(o->b, o->row_idx); }},
      {"AddRows", [](Ops* o) { o->out.AddRows(0.5, o->b, o->row_idx); }},
      {"CopyCols", [](Ops* o) { o->out.CopyCols(o->b, o->col_idx); }},
      {"AddCols", [](Ops* o) { o->out.AddCols(o->b, o->col_idx); }},
      {"MulRows", [](Ops* o) { o->out.MulRows(o->b, o->row_idx); }},
      // A permutation: each destination row gets one addition, so no atomics race.
      {"AddToRows", [](Ops* o) { o->a.AddToRows(0.5, o->row_perm, &o->out); }},
      {"AddRowRanges", [](Ops* o) { o->out.AddRowRanges(o->b, o->row_ranges); }},
      {"SumColumnRanges", [](Ops* o) { o->out.SumColumnRanges(o->b, o->col_ranges); }},
      {"CopyRowsFromVec", [](Ops* o) { o->out.CopyRowsFromVec(o->flat); }},
      {"CopyRowsFromVec broadcast", [](Ops* o) { o->out.CopyRowsFromVec(o->vc); }},
      {"CopyColsFromVec", [](Ops* o) { o->out.CopyColsFromVec(o->flat); }},
      {"CopyColsFromVec broadcast", [](Ops* o) { o->out.CopyColsFromVec(o->vr); }},
      {"CopyColFromVec", [](Ops* o) { o->out.CopyColFromVec(o->vr, 5); }},
      {"CopyRowsFromMat", [](Ops* o) { o->flat.CopyRowsFromMat(o->a); }},
      {"CopyColFromMat", [](Ops* o) { o->vr.CopyColFromMat(o->a, 7); }},
      {"CopyColFromMat other precision", [](Ops* o) { o->vr.CopyColFromMat(o->conv, 7); }},
      {"CopyDiagFromMat", [](Ops* o) { o->vc.CopyDiagFromMat(o->sq); }},
      {"CopyFromVec", [](Ops* o) { o->out_r.CopyFromVec(o->vr_pos); }},
      {"CopyFromVec other precision", [](Ops* o) { o->out_r.CopyFromVec(o->conv_v); }},
      {"CopyLowerToUpper", [](Ops* o) { o->sq.CopyLowerToUpper(); }},
      {"CopyUpperToLower", [](Ops* o) { o->sq.CopyUpperToLower(); }},
      {"SetZeroAboveDiag", [](Ops* o) { o->a.SetZeroAboveDiag(); }},
      {"CopyElements", [](Ops* o) { o->out_r.CopyElements(o->a, kNoTrans, o->tgt); }},
      {"CopyElements kTrans", [](Ops* o) { o->out_c.CopyElements(o->a, kTrans, o->col_elems); }},
      {"AddToElements", [](Ops* o) { o->out.AddToElements(0.5, o->elems); }},
      {"EqualElementMask",
       [](Ops* o) {
         o->out.CopyRows(o->a, o->row_idx);
         o->a.EqualElementMask(o->out, &o->mask);
       }},
      {"Lookup into device memory", [](Ops* o) { o->a.Lookup(o->pairs, o->lookup.Data()); }},
      {"Row and Range views",
       [](Ops* o) {
         CuSubMatrix<Real> block = o->out.Range(3, 10, 4, 20);
         block.AddMat(1.0, o->b.Range(1, 10, 2, 20));
         CuSubVector<Real> row = o->out.Row(7);
         row.AddVec(2.0, o->vc);
       }},
      {"CuArray Set and CopyFromArray",
       [](Ops* o) {
         o->ids.Set(3);
         o->row_idx.CopyFromArray(o->tgt);
       }},
  });
}

TYPED_TEST(CuGraphOpsTest, VectorOpsReplaysMatchEager) {
  using Real = TypeParam;
  using Ops = Operands<Real>;
  ExpectReplaysMatchEager<Real>({
      {"Set", [](Ops* o) { o->out_r.Set(0.5); }},
      {"SetZero", [](Ops* o) { o->out_r.SetZero(); }},
      {"Add", [](Ops* o) { o->vr.Add(0.25); }},
      {"Scale", [](Ops* o) { o->vr.Scale(-3.0); }},
      {"AddVec", [](Ops* o) { o->out_r.AddVec(0.5, o->vr_pos, 2.0); }},
      {"AddVec other precision", [](Ops* o) { o->out_r.AddVec(0.5, o->conv_v, 1.0); }},
      {"MulElements", [](Ops* o) { o->out_r.MulElements(o->vr); }},
      {"DivElements", [](Ops* o) { o->out_r.DivElements(o->vr_pos); }},
      {"InvertElements", [](Ops* o) { o->vr_pos.InvertElements(); }},
      {"ApplyFloor and ReplaceValue",
       [](Ops* o) {
         o->vr.ApplyFloor(0.0);
         o->vr.ReplaceValue(0.0, 5.0);
       }},
      {"ApplyCeiling", [](Ops* o) { o->vc.ApplyCeiling(0.5); }},
      {"ApplyPow", [](Ops* o) { o->vc_pos.ApplyPow(1.5); }},
      {"ApplyExp", [](Ops* o) { o->vc.ApplyExp(); }},
      {"ApplyLog", [](Ops* o) { o->vc_pos.ApplyLog(); }},
      {"temporary vector",
       [](Ops* o) {
         CuVector<Real> t(o->vr);
         t.MulElements(o->vr_pos);
         o->out_r.AddVec(1.0, t);
       }},
  });
}

}  // namespace
}  // namespace cuctx
