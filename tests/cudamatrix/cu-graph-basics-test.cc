// tests/cudamatrix/cu-graph-basics-test.cc: CuGraph capture and replay basics.
// SPDX-License-Identifier: Apache-2.0
//
// Both modes: a replayed nnet step (forward and backward, temporaries inside the body) equals the
// same step run eagerly, bit for bit; each Launch() replays once; empty, moved and body-less
// graphs; Capture of an empty std::function throws; host-side effects of the body run once at
// capture on the GPU and at every Launch() on the CPU; launch from another thread.
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/cudamatrix/cu-graph-testing.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <exception>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <utility>

namespace cuctx {
namespace {

using test::Identical;
using test::ToHost;

using RealTypes = ::testing::Types<float, double>;

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

}  // namespace
}  // namespace cuctx
