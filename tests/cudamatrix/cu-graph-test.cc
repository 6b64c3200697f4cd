// tests/cudamatrix/cu-graph-test.cc: CuGraph capture and replay compared with eager runs, the
// graphs' private memory, the ops that cannot be captured, and capturing threads.
// SPDX-License-Identifier: Apache-2.0
//
// What is tested, in the order of this file:
//  1. Basics (both modes): a replayed nnet step (forward and backward, temporaries inside the body)
//     equals the same step run eagerly, bit for bit; each Launch() replays once; empty, moved and
//     body-less graphs; Capture of an empty std::function throws; host-side effects of the body
//     run once at capture on the GPU and at every Launch() on the CPU; launch from another thread.
//  2. Every op family (both modes; meaningful on the GPU): element-wise, BLAS, reductions through
//     the device-result forms, nnet, copies and gathers, vector ops. Each step runs twice eagerly
//     on one set of operands and is captured on an identical set and launched twice; every operand
//     must then be identical (the same kernels run, so equality is exact, NaN matching NaN).
//  3. Aliasing: temporaries of a replay never overlap eager memory allocated after the capture;
//     memory resized inside the body escapes and outlives the graph (both modes). Eager memory
//     freed inside the body stays with the graph (GPU only: on the CPU the body runs at Launch).
//  4. Errors (GPU only: in CPU mode nothing is captured, so nothing throws): every op that waits
//     for the device or copies to or from the host throws cuctx::Error naming itself; afterwards
//     the thread is no longer capturing, eager ops work and a new capture succeeds. Nested
//     captures and Launch() inside a capture throw. Random fills replay the same numbers (GPU
//     only), also without a reseed just before the capture. A new thread's first cuBLAS and
//     cuRAND use can be captured (both modes).
//  5. Threads (both modes): two threads capture and replay their own graphs while a third runs
//     eager work with SynchronizeGpu() now and then.
//  6. Memory: NumNodes() / MemoryBytes() (both modes: 0 on the CPU); a destroyed graph, an
//     abandoned capture and a constructor that throws inside a capture give their device memory
//     back (GPU only, through cudaMemGetInfo).
#include "cudamatrix/cu-graph.h"

#include "base/error.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <exception>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if CUCTX_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

using test::ToHost;

using RealTypes = ::testing::Types<float, double>;

constexpr size_t kMiB = size_t{1} << 20;

// ---- exact comparisons (NaN matches NaN; replayed and eager runs execute the same kernels) ----

template <typename Real>
bool SameValue(Real a, Real b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

template <typename Real>
::testing::AssertionResult Identical(const MatrixBase<Real>& a, const MatrixBase<Real>& b) {
  if (a.NumRows() != b.NumRows() || a.NumCols() != b.NumCols())
    return ::testing::AssertionFailure() << "shape mismatch: " << a.NumRows() << "x" << a.NumCols()
                                         << " vs " << b.NumRows() << "x" << b.NumCols();
  for (MatrixIndexT r = 0; r < a.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < a.NumCols(); ++c)
      if (!SameValue(a(r, c), b(r, c)))
        return ::testing::AssertionFailure()
               << "element (" << r << ", " << c << "): " << a(r, c) << " vs " << b(r, c);
  return ::testing::AssertionSuccess();
}

template <typename Real>
::testing::AssertionResult Identical(const CuMatrixBase<Real>& a, const CuMatrixBase<Real>& b) {
  return Identical(ToHost(a), ToHost(b));
}

template <typename Real>
::testing::AssertionResult Identical(const VectorBase<Real>& a, const VectorBase<Real>& b) {
  if (a.Dim() != b.Dim())
    return ::testing::AssertionFailure() << "dimension mismatch: " << a.Dim() << " vs " << b.Dim();
  for (MatrixIndexT i = 0; i < a.Dim(); ++i)
    if (!SameValue(a(i), b(i)))
      return ::testing::AssertionFailure() << "element " << i << ": " << a(i) << " vs " << b(i);
  return ::testing::AssertionSuccess();
}

template <typename Real>
::testing::AssertionResult Identical(const CuVectorBase<Real>& a, const CuVectorBase<Real>& b) {
  return Identical(ToHost(a), ToHost(b));
}

::testing::AssertionResult Identical(const CuArrayBase<int32>& a, const CuArrayBase<int32>& b) {
  std::vector<int32> ha, hb;
  a.CopyToVec(&ha);
  b.CopyToVec(&hb);
  if (ha.size() != hb.size())
    return ::testing::AssertionFailure()
           << "dimension mismatch: " << ha.size() << " vs " << hb.size();
  for (size_t i = 0; i < ha.size(); ++i)
    if (ha[i] != hb[i])
      return ::testing::AssertionFailure() << "element " << i << ": " << ha[i] << " vs " << hb[i];
  return ::testing::AssertionSuccess();
}

#if CUCTX_HAVE_CUDA
// Free device memory as the driver reports it (includes memory other processes use, so compare
// only nearby readings, leniently).
size_t FreeDeviceBytes() {
  size_t free_bytes = 0, total_bytes = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  return free_bytes;
}
#endif

// =================================================================================================
// 1. Basics (both modes)
// =================================================================================================

template <typename Real>
class CuGraphTest : public ::testing::Test {};
TYPED_TEST_SUITE(CuGraphTest, RealTypes);

// A fully connected sigmoid layer of kBatch x kIn inputs and kOut outputs: host data, then two
// identical device copies (one run eagerly, one captured and replayed).
constexpr MatrixIndexT kBatch = 32, kIn = 48, kOut = 40;

template <typename Real>
struct HostLayer {
  explicit HostLayer(test::Rng* rng)
      : x(test::RandomMatrix<Real>(kBatch, kIn, rng)),
        w(test::RandomMatrix<Real>(kOut, kIn, rng, -0.2, 0.2)),
        bias(test::RandomVector<Real>(kOut, rng)),
        out_deriv(test::RandomMatrix<Real>(kBatch, kOut, rng)) {}
  Matrix<Real> x, w;
  Vector<Real> bias;
  Matrix<Real> out_deriv;
};

template <typename Real>
struct Layer {
  explicit Layer(const HostLayer<Real>& h)
      : x(h.x),
        w(h.w),
        bias(h.bias),
        out_deriv(h.out_deriv),
        in_deriv(kBatch, kIn),
        w_grad(kOut, kIn),
        b_grad(kOut) {}
  // Inputs.
  CuMatrix<Real> x, w;
  CuVector<Real> bias;
  CuMatrix<Real> out_deriv;
  // Outputs: y is resized by the step (inside a capture its memory escapes the graph), the others
  // are allocated here.
  CuMatrix<Real> y, in_deriv, w_grad;
  CuVector<Real> b_grad;
};

// Forward y = sigmoid(x w^T + bias); backward d = y (1 - y) .* out_deriv, w_grad = d^T x,
// in_deriv = d w, b_grad = column sums of d. z and d are temporaries of the step.
template <typename Real>
void LayerStep(Layer<Real>* l) {
  CuMatrix<Real> z(kBatch, kOut, kUndefined);
  z.AddMatMat(1.0, l->x, kNoTrans, l->w, kTrans, 0.0);
  z.AddVecToRows(1.0, l->bias);
  l->y.Resize(kBatch, kOut, kUndefined);
  l->y.Sigmoid(z);
  CuMatrix<Real> d(kBatch, kOut, kUndefined);
  d.DiffSigmoid(l->y, l->out_deriv);
  l->w_grad.AddMatMat(1.0, d, kTrans, l->x, kNoTrans, 0.0);
  l->in_deriv.AddMatMat(1.0, d, kNoTrans, l->w, kNoTrans, 0.0);
  l->b_grad.AddRowSumMat(1.0, d, 0.0);
}

template <typename Real>
void ExpectSameLayer(const Layer<Real>& eager, const Layer<Real>& replayed) {
  EXPECT_TRUE(Identical(eager.y, replayed.y)) << "y";
  EXPECT_TRUE(Identical(eager.in_deriv, replayed.in_deriv)) << "in_deriv";
  EXPECT_TRUE(Identical(eager.w_grad, replayed.w_grad)) << "w_grad";
  EXPECT_TRUE(Identical(eager.b_grad, replayed.b_grad)) << "b_grad";
}

TYPED_TEST(CuGraphTest, ReplayedNnetStepEqualsEagerStepExactly) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const HostLayer<Real> host(&rng);
  Layer<Real> eager(host), replayed(host);

  LayerStep(&eager);
  CuGraph graph = CuGraph::Capture([&] { LayerStep(&replayed); });
  EXPECT_FALSE(graph.Empty());
  EXPECT_FALSE(CuGraph::Capturing());
  // Capturing records the work without running it (on the CPU the body is only stored).
  EXPECT_TRUE(Identical(ToHost(replayed.w_grad), Matrix<Real>(kOut, kIn)));
  EXPECT_TRUE(Identical(ToHost(replayed.in_deriv), Matrix<Real>(kBatch, kIn)));
  graph.Launch();
  ExpectSameLayer(eager, replayed);

  // New inputs are written into the matrices the graph reads; the replay sees them.
  const Matrix<Real> x2 = test::RandomMatrix<Real>(kBatch, kIn, &rng);
  const Matrix<Real> d2 = test::RandomMatrix<Real>(kBatch, kOut, &rng);
  for (Layer<Real>* l : {&eager, &replayed}) {
    l->x.CopyFromMat(x2);
    l->out_deriv.CopyFromMat(d2);
  }
  LayerStep(&eager);
  graph.Launch();
  ExpectSameLayer(eager, replayed);
  EXPECT_FALSE(Identical(ToHost(replayed.x), host.x));  // the inputs did change
}

TYPED_TEST(CuGraphTest, EachLaunchReplaysTheWorkOnce) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> hx = test::RandomMatrix<Real>(19, 23, &rng);
  CuMatrix<Real> x(hx), y(19, 23);
  CuGraph graph = CuGraph::Capture([&] { y.AddMat(1.0, x); });
  EXPECT_TRUE(Identical(ToHost(y), Matrix<Real>(19, 23)));
  for (int i = 0; i < 3; ++i) graph.Launch();
  // x + x is exact and (2x) + x rounds once, as 3 * x does.
  Matrix<Real> expected(hx);
  expected.Scale(3.0);
  EXPECT_TRUE(Identical(ToHost(y), expected));
}

TEST(CuGraphBasicsTest, EmptyGraphLaunchIsANoop) {
  CuGraph graph;
  EXPECT_TRUE(graph.Empty());
  EXPECT_EQ(graph.NumNodes(), 0u);
  EXPECT_EQ(graph.MemoryBytes(), 0u);
  graph.Launch();
  graph.Launch();
  EXPECT_FALSE(CuGraph::Capturing());
}

TEST(CuGraphBasicsTest, CaptureOfAnEmptyFunctionThrows) {
  std::function<void()> none;
  test::ExpectErrorContaining([&] { CuGraph::Capture(none); }, "body is empty");
  test::ExpectErrorContaining([&] { CuGraph::Capture(nullptr); }, "body is empty");
  EXPECT_FALSE(CuGraph::Capturing());
  CuVector<float> v(4);
  CuGraph graph = CuGraph::Capture([&] { v.Add(1.0f); });
  graph.Launch();
  EXPECT_EQ(v.Sum(), 4.0f);
}

TEST(CuGraphBasicsTest, BodyWithoutDeviceWorkCapturesAndLaunches) {
  bool capturing_inside = false;
  CuGraph graph = CuGraph::Capture([&] { capturing_inside = CuGraph::Capturing(); });
  EXPECT_FALSE(graph.Empty());
  EXPECT_FALSE(CuGraph::Capturing());
  graph.Launch();
  graph.Launch();
  // The GPU runs the body once, capturing; the CPU runs it at every Launch(), under the same
  // rules (Capturing() is true there too).
  EXPECT_TRUE(capturing_inside);
}

TEST(CuGraphBasicsTest, HostSideEffectsRunOnceAtCaptureOnGpuAndAtEachLaunchOnCpu) {
  int calls = 0;
  CuVector<float> v(8);
  CuGraph graph = CuGraph::Capture([&] {
    ++calls;
    v.Add(1.0f);
  });
  const int calls_after_capture = calls;
  graph.Launch();
  graph.Launch();
  if (test::GpuEnabled()) {
    EXPECT_EQ(calls_after_capture, 1);
    EXPECT_EQ(calls, 1);
  } else {
    EXPECT_EQ(calls_after_capture, 0);
    EXPECT_EQ(calls, 2);
  }
  EXPECT_EQ(v.Sum(), 16.0f);  // the device work ran once per Launch() in both modes
}

TEST(CuGraphBasicsTest, MovedGraphKeepsItsWork) {
  CuMatrix<float> y(5, 7);
  CuGraph first = CuGraph::Capture([&] { y.Add(1.0f); });
  CuGraph second(std::move(first));
  EXPECT_TRUE(first.Empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  first.Launch();              // a no-op
  second.Launch();
  CuGraph third;
  third = std::move(second);
  EXPECT_TRUE(second.Empty());  // NOLINT(bugprone-use-after-move)
  third.Launch();
  // Assigning over a graph destroys the old one.
  third = CuGraph::Capture([&] { y.Scale(10.0f); });
  third.Launch();
  Matrix<float> expected(5, 7);
  expected.Set(20.0f);
  EXPECT_TRUE(Identical(ToHost(y), expected));
}

TEST(CuGraphBasicsTest, LaunchesFromAnotherThread) {
  CuDevice::Instantiate().AllowMultithreading();
  test::Rng rng = test::MakeRng();
  const Matrix<float> hx = test::RandomMatrix<float>(33, 17, &rng);
  CuMatrix<float> x(hx), y(33, 17);
  CuGraph graph = CuGraph::Capture([&] { y.AddMat(2.0f, x); });
  SynchronizeGpu();  // x and y were written on this thread's stream
  std::string error;
  Matrix<float> seen;
  std::thread other([&] {
    try {
      CuDevice::Instantiate();
      graph.Launch();  // on this thread's stream
      seen = ToHost(y);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  other.join();
  EXPECT_EQ(error, "");
  Matrix<float> expected(hx);
  expected.Scale(2.0f);
  EXPECT_TRUE(Identical(seen, expected));
}

// =================================================================================================
// 2. Every op family: replayed == eager
// =================================================================================================

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

// =================================================================================================
// 3. Aliasing: the graph's memory and eager memory never overlap
// =================================================================================================

constexpr MatrixIndexT kAliasSizes[] = {64, 128, 256, 512, 1024};

// Eager matrices of every alias size, padded and packed, each Set(value).
template <typename Real>
std::vector<std::unique_ptr<CuMatrix<Real>>> FilledEagerMatrices(Real value) {
  std::vector<std::unique_ptr<CuMatrix<Real>>> ms;
  for (MatrixStrideType stride : {kDefaultStride, kStrideEqualNumCols})
    for (MatrixIndexT n : kAliasSizes) {
      ms.push_back(std::make_unique<CuMatrix<Real>>(n, n, kUndefined, stride));
      ms.back()->Set(value);
    }
  return ms;
}

// Every matrix still holds `value` everywhere: its sum is exactly value * rows * cols (small
// integers, so every partial sum is exact in float too).
template <typename Real>
void ExpectAllHold(const std::vector<std::unique_ptr<CuMatrix<Real>>>& ms, Real value) {
  for (const auto& m : ms)
    EXPECT_EQ(m->Sum(), value * m->NumRows() * m->NumCols())
        << m->NumRows() << "x" << m->NumCols() << " stride " << m->Stride();
}

template <typename Real>
class CuGraphAliasTest : public ::testing::Test {};
TYPED_TEST_SUITE(CuGraphAliasTest, RealTypes);

TYPED_TEST(CuGraphAliasTest, ReplayedTemporariesNeverOverwriteLaterEagerMatrices) {
  using Real = TypeParam;
  constexpr int kLaunches = 5, kTemporaries = 2 * 5;
  CuMatrix<Real> probe(1, 64);  // each temporary adds its first 64 elements here
  CuGraph graph = CuGraph::Capture([&] {
    // One at a time: each is freed before the next is allocated, so the pool reuses blocks.
    for (MatrixIndexT n : kAliasSizes) {
      CuMatrix<Real> t(n, n, kUndefined);
      t.Set(1.0);
      probe.AddMat(1.0, t.Range(0, 1, 0, 64));
    }
    // All alive together, then freed together.
    std::vector<std::unique_ptr<CuMatrix<Real>>> alive;
    for (MatrixIndexT n : kAliasSizes) {
      alive.push_back(std::make_unique<CuMatrix<Real>>(n, n, kUndefined, kStrideEqualNumCols));
      alive.back()->Set(1.0);
      probe.AddMat(1.0, alive.back()->Range(0, 1, 0, 64));
    }
  });
  // Allocated after the capture, while the graph (and its temporaries' memory) lives.
  const auto eager = FilledEagerMatrices<Real>(7.0);
  for (int i = 0; i < kLaunches; ++i) graph.Launch();
  ExpectAllHold(eager, Real(7.0));
  Matrix<Real> expected(1, 64);
  expected.Set(kLaunches * kTemporaries);
  EXPECT_TRUE(Identical(ToHost(probe), expected));
}

TYPED_TEST(CuGraphAliasTest, MemoryResizedInsideTheBodyOutlivesTheGraph) {
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> hx = test::RandomMatrix<Real>(300, 200, &rng);
  CuMatrix<Real> x(hx);
  CuMatrix<Real> y;  // resized inside the body: its memory escapes the capture
  CuVector<Real> v;
  Matrix<Real> expected(hx);
  expected.Scale(2.0);
  {
    CuGraph graph = CuGraph::Capture([&] {
      y.Resize(300, 200, kUndefined);
      y.CopyFromMat(x);
      y.Scale(2.0);
      v.Resize(200);
      v.CopyFromVec(y.Row(0));
    });
    graph.Launch();
    EXPECT_TRUE(Identical(ToHost(y), expected));
    graph.Launch();
    EXPECT_TRUE(Identical(ToHost(y), expected));
  }  // the graph is gone; y and v stay valid until freed
  EXPECT_TRUE(Identical(ToHost(y), expected));
  EXPECT_TRUE(Identical(ToHost(v), Vector<Real>(expected.Row(0))));
  const auto eager = FilledEagerMatrices<Real>(7.0);
  ExpectAllHold(eager, Real(7.0));
  EXPECT_TRUE(Identical(ToHost(y), expected));  // eager allocations did not land on y
  y.Scale(0.5);                                 // still writable
  EXPECT_TRUE(Identical(ToHost(y), hx));
  ExpectAllHold(eager, Real(7.0));
  // Freeing the escaped memory (the last of the graph's pool) and allocating again.
  y.Resize(0, 0);
  v.Resize(0);
  const auto again = FilledEagerMatrices<Real>(3.0);
  ExpectAllHold(again, Real(3.0));
  ExpectAllHold(eager, Real(7.0));
  y.Resize(300, 200, kUndefined);
  y.CopyFromMat(hx);
  EXPECT_TRUE(Identical(ToHost(y), hx));
}

TYPED_TEST(CuGraphAliasTest, EagerMemoryFreedInsideTheBodyStaysWithTheGraph) {
  // On the CPU the body runs at each Launch(), so the eager matrix is freed at the first one.
  CUCTX_REQUIRE_GPU();
  using Real = TypeParam;
  constexpr int kLaunches = 5;
  CuMatrix<Real> victim(512, 512);  // eager memory, freed during the capture
  victim.Set(5.0);
  CuMatrix<Real> probe(1, 64);
  CuGraph graph = CuGraph::Capture([&] {
    CuMatrix<Real> local;
    local.Swap(&victim);  // CuMatrix has no move constructor: Swap moves the memory
    local.Set(1.0);
    probe.AddMat(1.0, local.Range(0, 1, 0, 64));
  });  // `local` gave the eager block back here; replays still write it
  EXPECT_EQ(victim.NumRows(), 0);
  const auto eager = FilledEagerMatrices<Real>(7.0);  // includes 512 x 512, padded and packed
  for (int i = 0; i < kLaunches; ++i) graph.Launch();
  ExpectAllHold(eager, Real(7.0));
  Matrix<Real> expected(1, 64);
  expected.Set(kLaunches);
  EXPECT_TRUE(Identical(ToHost(probe), expected));
}

// =================================================================================================
// 4. Errors (GPU only) and random fills
// =================================================================================================

template <typename Real>
class CuGraphErrorTest : public ::testing::Test {};
TYPED_TEST_SUITE(CuGraphErrorTest, RealTypes);

// After a failed capture: the thread is no longer capturing, eager ops (including host reads)
// work, and a new capture succeeds.
template <typename Real>
void ExpectRecovered(const Matrix<Real>& hx, const CuMatrix<Real>& x) {
  EXPECT_FALSE(CuGraph::Capturing());
  CuMatrix<Real> ones(20, 30);
  ones.Set(1.0);
  EXPECT_EQ(ones.Sum(), Real(600));
  SynchronizeGpu();
  CuMatrix<Real> y(x.NumRows(), x.NumCols());
  CuGraph graph = CuGraph::Capture([&] { y.AddMat(1.0, x); });
  graph.Launch();
  EXPECT_TRUE(Identical(ToHost(y), hx));
}

TYPED_TEST(CuGraphErrorTest, OpsThatWaitOrCopyToHostThrowNamingThemselves) {
  CUCTX_REQUIRE_GPU();
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> hx = test::RandomMatrix<Real>(kRows, kCols, &rng);
  CuMatrix<Real> m(hx), m2(hx), sq(kCols, kCols);
  sq.SetRandn();
  CuVector<Real> vc(test::RandomVector<Real>(kCols, &rng)), vr(kRows);
  const CuMatrixBase<Real>& cm = m;
  const CuVectorBase<Real>& cv = vc;
  Matrix<Real> host(kRows, kCols);
  Vector<Real> hv(kCols);
  const std::vector<int32> idx(kRows, 0);
  MatrixIndexT count = 0;

  struct Forbidden {
    const char* needle;  // what the message must contain besides "captures a CUDA graph"
    std::function<void()> op;
  };
  const std::vector<Forbidden> forbidden = {
      {"CuMatrixBase::Sum", [&] { (void)m.Sum(); }},
      {"CuMatrixBase::Max", [&] { (void)m.Max(); }},
      {"CuMatrixBase::Min", [&] { (void)m.Min(); }},
      {"CuMatrixBase::Trace", [&] { (void)sq.Trace(); }},
      {"CuMatrixBase::FrobeniusNorm", [&] { (void)m.FrobeniusNorm(); }},
      {"CuMatrixBase::ApproxEqual", [&] { (void)m.ApproxEqual(m2); }},
      {"CuMatrixBase::IsUnit", [&] { (void)sq.IsUnit(); }},
      {"CuMatrixBase::CopyToMat", [&] { m.CopyToMat(&host); }},
      {"operator()", [&] { (void)cm(0, 0); }},
      {"CuVectorBase::Sum", [&] { (void)vc.Sum(); }},
      {"CuVectorBase::Max", [&] { (void)vc.Max(); }},
      {"CuVectorBase::Min", [&] { (void)vc.Min(); }},
      {"CuVectorBase::Norm", [&] { (void)vc.Norm(2.0); }},
      {"CuVectorBase::ApproxEqual", [&] { (void)vc.ApproxEqual(vc); }},
      {"CuVectorBase::CopyToVec", [&] { vc.CopyToVec(&hv); }},
      {"operator()", [&] { (void)cv(0); }},
      {"SynchronizeGpu", [&] { SynchronizeGpu(); }},
      {"TraceMatMat", [&] { (void)TraceMatMat(m, m2, kTrans); }},
      {"VecVec", [&] { (void)VecVec(vc, vc); }},
      {"VecMatVec", [&] { (void)VecMatVec(vr, m, vc); }},
      // These reach the host through a CuValue or a plain host copy, which names itself.
      {"CopyDeviceToHost", [&] { (void)static_cast<Real>(m(0, 0)); }},
      {"CopyHostToDevice", [&] { m(0, 0) = Real(1); }},
      {"CopyHostToDevice", [&] { m.CopyFromMat(host); }},
      {"CopyHostToDevice", [&] { vc.CopyFromVec(hv); }},
      {"CopyHostToDevice", [&] { CuArray<int32> a(idx); }},
      {"CuVectorBase::ApplyFloor with a count", [&] { vc.ApplyFloor(0.0, &count); }},
  };
  test::QuietLog quiet;
  for (const Forbidden& f : forbidden) {
    SCOPED_TRACE(f.needle);
    // Device work before the forbidden op, and a temporary alive when it throws.
    const std::string what = test::ErrorText([&] {
      CuGraph::Capture([&] {
        CuMatrix<Real> t(m);
        t.Scale(2.0);
        f.op();
      });
    });
    EXPECT_TRUE(test::Contains(what, f.needle));
    EXPECT_TRUE(test::Contains(what, "captures a CUDA graph"));
    ExpectRecovered(hx, m);
  }
  // Nothing was written by the abandoned captures.
  EXPECT_TRUE(Identical(ToHost(m), hx));
}

TYPED_TEST(CuGraphErrorTest, NestedCaptureThrows) {
  CUCTX_REQUIRE_GPU();
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> hx = test::RandomMatrix<Real>(9, 11, &rng);
  CuMatrix<Real> x(hx), y(9, 11);
  bool inner_returned = false;
  test::ExpectErrorContaining(
      [&] {
        CuGraph::Capture([&] {
          y.Add(1.0);
          CuGraph inner = CuGraph::Capture([&] { y.Add(2.0); });
          inner_returned = true;
        });
      },
      "already capturing");
  EXPECT_FALSE(inner_returned);
  EXPECT_TRUE(Identical(ToHost(y), Matrix<Real>(9, 11)));
  ExpectRecovered(hx, x);
}

TYPED_TEST(CuGraphErrorTest, LaunchInsideACaptureThrows) {
  CUCTX_REQUIRE_GPU();
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> hx = test::RandomMatrix<Real>(9, 11, &rng);
  CuMatrix<Real> x(hx), y(9, 11);
  CuGraph first = CuGraph::Capture([&] { y.Add(1.0); });
  test::ExpectErrorContaining([&] { CuGraph::Capture([&] { first.Launch(); }); },
                              "CuGraph::Launch");
  ExpectRecovered(hx, x);
  first.Launch();  // the first graph is unharmed
  Matrix<Real> ones(9, 11);
  ones.Set(1.0);
  EXPECT_TRUE(Identical(ToHost(y), ones));
}

TYPED_TEST(CuGraphErrorTest, OtherExceptionsFromTheBodyPassThrough) {
  CUCTX_REQUIRE_GPU();
  using Real = TypeParam;
  test::Rng rng = test::MakeRng();
  const Matrix<Real> hx = test::RandomMatrix<Real>(9, 11, &rng);
  CuMatrix<Real> x(hx);
  EXPECT_THROW(CuGraph::Capture([&] {
                 CuMatrix<Real> t(256, 256);
                 t.Add(1.0);
                 throw std::runtime_error("from the body");
               }),
               std::runtime_error);
  ExpectRecovered(hx, x);
  // A shape error inside the body is a cuctx::Error like any other.
  CuMatrix<Real> wrong(3, 4);
  test::ExpectErrorContaining([&] { CuGraph::Capture([&] { wrong.AddMat(1.0, x); }); }, "3x4");
  ExpectRecovered(hx, x);
}

TYPED_TEST(CuGraphErrorTest, RandomFillsCannotBeCaptured) {
  // cuRAND's host API is not capturable (measured on the H100: its kernels fail to launch, or it
  // allocates); the fills say so, naming themselves, on the GPU and the CPU alike.
  using Real = TypeParam;
  CuMatrix<Real> m(40, 60);
  CuVector<Real> v(100);
  test::ExpectErrorContaining([&] { CuGraph::Capture([&] { m.SetRandn(); }).Launch(); },
                              "CuRand::RandGaussian");
  test::ExpectErrorContaining([&] { CuGraph::Capture([&] { v.SetRandUniform(); }).Launch(); },
                              "CuRand::RandUniform");
  EXPECT_FALSE(CuGraph::Capturing());
  m.SetRandn();  // eager fills still work
  EXPECT_GT(m.FrobeniusNorm(), Real(10));
}

TEST(CuGraphFreshThreadTest, FirstLibraryUseOfAThreadCanBeCaptured) {
  // A new thread has no cuBLAS handle yet: the capture must not create it while capturing
  // (creation allocates and synchronizes).
  CuDevice::Instantiate().AllowMultithreading();
  test::Rng rng = test::MakeRng();
  const Matrix<float> ha = test::RandomMatrix<float>(24, 32, &rng);
  std::string error;
  bool same_product = false;
  std::thread fresh([&] {
    try {
      CuDevice::Instantiate();
      CuMatrix<float> a(ha), p(24, 24), eager_p(24, 24);
      CuGraph graph = CuGraph::Capture([&] { p.AddMatMat(1.0f, a, kNoTrans, a, kTrans, 0.0f); });
      graph.Launch();
      graph.Launch();
      eager_p.AddMatMat(1.0f, a, kNoTrans, a, kTrans, 0.0f);
      same_product = Identical(eager_p, p);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  fresh.join();
  EXPECT_EQ(error, "");
  EXPECT_TRUE(same_product);
}

// =================================================================================================
// 5. Threads: two capturing threads and an eager one
// =================================================================================================

// Collects failures from worker threads, reported on the main thread.
class Failures {
 public:
  void Add(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    list_.push_back(what);
  }
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(list_);
  }

 private:
  std::mutex mu_;
  std::vector<std::string> list_;
};

// One capturing thread: a graph of a sigmoid layer plus two accumulators, replayed kBatches x
// kPerBatch times against the same ops run eagerly on separate matrices; a fresh input per batch,
// and a throwaway graph captured and destroyed per batch (captures overlap other threads' work).
void CapturingWorker(int id, std::atomic<int>* started, Failures* failures) {
  constexpr int kBatches = 5, kPerBatch = 10;
  started->fetch_add(1);
  while (started->load() < 3) std::this_thread::yield();  // capture while the others run
  try {
    CuDevice::Instantiate();
    test::Rng rng = test::MakeRng(100 + id);
    const MatrixIndexT n = 24 + 8 * id, in = 64, out = 96;
    const Matrix<float> hw = test::RandomMatrix<float>(out, in, &rng, -0.3, 0.3);
    const Vector<float> hb = test::RandomVector<float>(out, &rng);
    CuMatrix<float> x(n, in), w(hw), y, acc(n, out), count(1, 1);
    CuVector<float> bias(hb);
    CuMatrix<float> ex(n, in), ew(hw), ey(n, out), eacc(n, out), ez(n, out);
    CuVector<float> ebias(hb);

    CuGraph graph = CuGraph::Capture([&] {
      CuMatrix<float> z(n, out, kUndefined);
      z.AddMatMat(1.0f, x, kNoTrans, w, kTrans, 0.0f);
      z.AddVecToRows(1.0f, bias);
      y.Resize(n, out, kUndefined);
      y.Sigmoid(z);
      acc.AddMat(1.0f, y);
      count.Add(1.0f);
    });
    for (int batch = 0; batch < kBatches; ++batch) {
      const Matrix<float> hx = test::RandomMatrix<float>(n, in, &rng);
      x.CopyFromMat(hx);
      ex.CopyFromMat(hx);
      for (int i = 0; i < kPerBatch; ++i) {
        graph.Launch();
        ez.AddMatMat(1.0f, ex, kNoTrans, ew, kTrans, 0.0f);
        ez.AddVecToRows(1.0f, ebias);
        ey.Sigmoid(ez);
        eacc.AddMat(1.0f, ey);
      }
      {
        CuMatrix<float> scratch_out(8, 8);
        CuGraph throwaway = CuGraph::Capture([&] {
          CuMatrix<float> t(128, 128);
          t.Set(float(batch));
          scratch_out.AddMat(1.0f, t.Range(0, 8, 0, 8));
        });
        throwaway.Launch();
        if (scratch_out.Sum() != 64.0f * batch) failures->Add("throwaway graph result wrong");
      }
      const std::string where =
          "thread " + std::to_string(id) + " batch " + std::to_string(batch) + ": ";
      if (!Identical(ToHost(y), ToHost(ey))) failures->Add(where + "y differs from eager");
      if (!Identical(ToHost(acc), ToHost(eacc))) failures->Add(where + "acc differs from eager");
      const float launches = static_cast<float>((batch + 1) * kPerBatch);
      if (ToHost(count)(0, 0) != launches) failures->Add(where + "launch count wrong");
    }
  } catch (const std::exception& e) {
    failures->Add("capturing thread " + std::to_string(id) + " threw: " + e.what());
  }
}

// The eager thread: GEMMs checked against the CPU, and matrices of varying sizes allocated,
// filled, summed and freed, with SynchronizeGpu() now and then, until both capturing threads are
// done (and at least kMinRounds rounds).
void EagerWorker(std::atomic<int>* started, const std::atomic<int>* finished, Failures* failures) {
  constexpr int kMinRounds = 20;
  started->fetch_add(1);
  try {
    CuDevice::Instantiate();
    test::Rng rng = test::MakeRng(300);
    for (int round = 0; round < kMinRounds || finished->load() < 2; ++round) {
      const MatrixIndexT m = 1 + rng.Int(0, 95), k = 1 + rng.Int(0, 95), n = 1 + rng.Int(0, 95);
      const Matrix<float> a = test::RandomMatrix<float>(m, k, &rng);
      const Matrix<float> b = test::RandomMatrix<float>(k, n, &rng);
      Matrix<float> ref(m, n);
      ref.AddMatMat(1.0f, a, kNoTrans, b, kNoTrans, 0.0f);
      CuMatrix<float> ca(a), cb(b), cc(m, n);
      cc.AddMatMat(1.0f, ca, kNoTrans, cb, kNoTrans, 0.0f);
      // GEMM on the device against the CPU: float rounding over at most 96 terms.
      if (!test::ExpectNear(ToHost(cc), ref, 1e-4))
        failures->Add("eager GEMM round " + std::to_string(round) + " wrong");
      std::vector<std::unique_ptr<CuMatrix<float>>> held;
      for (int i = 0; i < 4; ++i) {
        const MatrixIndexT r = 1 + rng.Int(0, 300), c = 1 + rng.Int(0, 300);
        held.push_back(std::make_unique<CuMatrix<float>>(r, c, kUndefined));
        held.back()->Set(float(i + 1));
      }
      for (size_t i = 0; i < held.size(); ++i)
        if (held[i]->Sum() != float(i + 1) * held[i]->NumRows() * held[i]->NumCols())
          failures->Add("eager fill round " + std::to_string(round) + " overwritten");
      if (round % 4 == 0) SynchronizeGpu();
    }
  } catch (const std::exception& e) {
    failures->Add(std::string("eager thread threw: ") + e.what());
  }
}

TEST(CuGraphThreadTest, TwoCapturingThreadsAndAnEagerThread) {
  CuDevice::Instantiate().AllowMultithreading();
  std::atomic<int> started{0}, finished{0};
  Failures failures;
  std::thread eager(EagerWorker, &started, &finished, &failures);
  std::vector<std::thread> capturing;
  for (int id = 0; id < 2; ++id)
    capturing.emplace_back([&, id] {
      CapturingWorker(id, &started, &failures);
      finished.fetch_add(1);
    });
  for (std::thread& t : capturing) t.join();
  eager.join();
  for (const std::string& f : failures.Take()) ADD_FAILURE() << f;
  EXPECT_FALSE(CuGraph::Capturing());
}

// =================================================================================================
// 6. Memory
// =================================================================================================

TEST(CuGraphMemoryTest, GemmStepReportsNodesAndMemory) {
  test::Rng rng = test::MakeRng();
  CuMatrix<float> x(test::RandomMatrix<float>(64, 256, &rng));
  CuMatrix<float> w(test::RandomMatrix<float>(256, 256, &rng));
  CuMatrix<float> y(64, 256);
  CuGraph graph = CuGraph::Capture([&] {
    CuMatrix<float> t(64, 256, kUndefined);
    t.AddMatMat(1.0f, x, kNoTrans, w, kNoTrans, 0.0f);
    y.Sigmoid(t);
  });
  if (test::GpuEnabled()) {
    EXPECT_GT(graph.NumNodes(), 0u);
    EXPECT_GT(graph.MemoryBytes(), 0u);
  } else {
    EXPECT_EQ(graph.NumNodes(), 0u);
    EXPECT_EQ(graph.MemoryBytes(), 0u);
  }
  graph.Launch();
  CuMatrix<float> expected(64, 256);
  expected.AddMatMat(1.0f, x, kNoTrans, w, kNoTrans, 0.0f);
  expected.Sigmoid(expected);
  EXPECT_TRUE(Identical(expected, y));
}

#if CUCTX_HAVE_CUDA
// Device memory the driver may keep after a graph goes (graph executables, lazily loaded
// modules): readings within this margin count as "given back".
constexpr size_t kFreeSlack = 16 * kMiB;

// A step with a 64 MiB temporary and a GEMM; y must be allocated by the caller.
std::function<void()> BigStep(const CuMatrix<float>& x, const CuMatrix<float>& w,
                              CuMatrix<float>* y) {
  return [&x, &w, y] {
    CuMatrix<float> big(4096, 4096, kUndefined);
    big.Set(1.0f);
    CuMatrix<float> t(x.NumRows(), w.NumCols(), kUndefined);
    t.AddMatMat(1.0f, x, kNoTrans, w, kNoTrans, 0.0f);
    t.AddMat(1.0f, big.Range(0, t.NumRows(), 0, t.NumCols()));
    y->Sigmoid(t);
  };
}
#endif

TEST(CuGraphMemoryTest, DestroyedGraphGivesItsMemoryBack) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  test::Rng rng = test::MakeRng();
  CuMatrix<float> x(test::RandomMatrix<float>(64, 512, &rng));
  CuMatrix<float> w(test::RandomMatrix<float>(512, 512, &rng));
  CuMatrix<float> y(64, 512);
  {
    // The first capture of a thread sets up what stays: its eager cuBLAS workspace, handles,
    // loaded kernels.
    CuGraph warm = CuGraph::Capture(BigStep(x, w, &y));
    warm.Launch();
  }
  const size_t before = FreeDeviceBytes();
  {
    CuGraph graph = CuGraph::Capture(BigStep(x, w, &y));
    EXPECT_GE(graph.MemoryBytes(), 64 * kMiB);
    graph.Launch();
    const size_t during = FreeDeviceBytes();
    EXPECT_LT(during + 32 * kMiB, before) << "the pool's 64 MiB should be in use";
  }
  const size_t after = FreeDeviceBytes();
  EXPECT_GE(after + kFreeSlack, before)
      << "before " << before / kMiB << " MiB free, after destruction " << after / kMiB;
#endif
}

TEST(CuGraphMemoryTest, AbandonedCaptureGivesItsMemoryBack) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  test::Rng rng = test::MakeRng();
  CuMatrix<float> x(test::RandomMatrix<float>(64, 512, &rng));
  CuMatrix<float> w(test::RandomMatrix<float>(512, 512, &rng));
  CuMatrix<float> y(64, 512);
  {
    CuGraph warm = CuGraph::Capture(BigStep(x, w, &y));
    warm.Launch();
  }
  test::QuietLog quiet;
  const size_t before = FreeDeviceBytes();
  // A forbidden op after 64 MiB of temporaries.
  EXPECT_THROW(CuGraph::Capture([&] {
                 BigStep(x, w, &y)();
                 CuMatrix<float> big(4096, 4096, kUndefined);
                 big.Set(2.0f);
                 (void)big.Sum();
               }),
               Error);
  const size_t after_sum = FreeDeviceBytes();
  EXPECT_GE(after_sum + kFreeSlack, before)
      << "before " << before / kMiB << " MiB free, after the failed capture " << after_sum / kMiB;
  EXPECT_FALSE(CuGraph::Capturing());
#endif
}

TEST(CuGraphMemoryTest, ConstructorThrowingInsideACaptureLeavesNoMemoryBehind) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  {
    CuMatrix<float> warm_up(16, 16);
    CuGraph warm = CuGraph::Capture([&] { warm_up.Add(1.0f); });
  }
  test::QuietLog quiet;
  const size_t before = FreeDeviceBytes();
  // A matrix built from host data allocates (from the graph's pool) before its host copy throws;
  // the half-built matrix's memory must still go back with the abandoned capture.
  const Matrix<float> host(4096, 4096);
  EXPECT_THROW(CuGraph::Capture([&] { CuMatrix<float> from_host(host); }), Error);
  const Vector<float> host_vec(16 << 20);
  EXPECT_THROW(CuGraph::Capture([&] { CuVector<float> from_host(host_vec); }), Error);
  const size_t after = FreeDeviceBytes();
  EXPECT_GE(after + kFreeSlack, before)
      << "before " << before / kMiB << " MiB free, after the failed captures " << after / kMiB;
  EXPECT_FALSE(CuGraph::Capturing());
#endif
}

}  // namespace
}  // namespace cuctx
