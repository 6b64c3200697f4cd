// tests/cudamatrix/cu-graph-memory-test.cc: a CuGraph's private memory: aliasing with eager memory
// and giving it back.
// SPDX-License-Identifier: Apache-2.0
//
// Aliasing: temporaries of a replay never overlap eager memory allocated after the capture;
// memory resized inside the body escapes and outlives the graph (both modes). Eager memory freed
// inside the body stays with the graph (GPU only: on the CPU the body runs at Launch).
// Memory: NumNodes() / MemoryBytes() (both modes: 0 on the CPU); a destroyed graph, an abandoned
// capture and a constructor that throws inside a capture give their device memory back (GPU only,
// through cudaMemGetInfo).
#include "base/error.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/cudamatrix/cu-graph-testing.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cstddef>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <vector>

namespace cuctx {
namespace {

using test::Identical;
using test::ToHost;
#if CUCTX_HAVE_CUDA
using test::FreeDeviceBytes;
#endif

using RealTypes = ::testing::Types<float, double>;
constexpr size_t kMiB = size_t{1} << 20;

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

// EscapedBytes counts what the capture allocated and did not free (its outputs), in every mode;
// temporaries and the cuBLAS workspace do not count.
TEST(CuGraphMemoryTest, EscapedBytesCountTheOutputsOnly) {
  test::Rng rng = test::MakeRng();
  CuMatrix<float> x(test::RandomMatrix<float>(48, 96, &rng));
  for (CuGraphMemory memory :
       {CuGraphMemory::kSharedPool, CuGraphMemory::kNodes, CuGraphMemory::kPrivatePool}) {
    SCOPED_TRACE(CuGraph::MemoryName(memory));
    CuMatrix<float> y, z;  // allocated inside: they escape
    CuGraph graph = CuGraph::Capture(
        [&] {
          CuMatrix<float> t(48, 96, kUndefined);  // freed inside: does not escape
          t.CopyFromMat(x);
          t.Scale(2.0f);
          y.Resize(48, 96, kUndefined);
          y.CopyFromMat(t);
          z.Resize(5, 7);
        },
        memory);
    graph.Launch();
    EXPECT_TRUE(Identical(ToHost(y), [&] {
      Matrix<float> e = ToHost(x);
      e.Scale(2.0f);
      return e;
    }()));
    if (!test::GpuEnabled()) {
      EXPECT_EQ(graph.EscapedBytes(), 0u);
      continue;
    }
    const size_t outputs = sizeof(float) * (static_cast<size_t>(y.Stride()) * y.NumRows() +
                                            static_cast<size_t>(z.Stride()) * z.NumRows());
    EXPECT_GE(graph.EscapedBytes(), outputs);
    // Graph memory nodes round each allocation up to 256 bytes; pools count the bytes asked for.
    if (memory == CuGraphMemory::kNodes)
      EXPECT_LE(graph.EscapedBytes(), outputs + 2 * 256);
    else
      EXPECT_EQ(graph.EscapedBytes(), outputs);
  }
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
    CuGraphPool pool;  // kSharedPool mode: the memory goes with the pool
    CuGraph graph = test::CaptureOwned(BigStep(x, w, &y), &pool);
    EXPECT_GE(graph.MemoryBytes(), 64 * kMiB);
    graph.Launch();
    const size_t during = FreeDeviceBytes();
    if (test::FreeMemoryReadingsReliable()) {
      EXPECT_LT(during + 32 * kMiB, before) << "the pool's 64 MiB should be in use";
    }
  }
  const size_t after = FreeDeviceBytes();
  if (test::FreeMemoryReadingsReliable()) {
    EXPECT_GE(after + kFreeSlack, before)
        << "before " << before / kMiB << " MiB free, after destruction " << after / kMiB;
  }
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
  {
    CuGraphPool pool;  // kSharedPool mode: the memory goes with the pool
    EXPECT_THROW(test::CaptureOwned(
                     [&] {
                       BigStep(x, w, &y)();
                       CuMatrix<float> big(4096, 4096, kUndefined);
                       big.Set(2.0f);
                       (void)big.Sum();
                     },
                     &pool),
                 Error);
  }
  const size_t after_sum = FreeDeviceBytes();
  if (test::FreeMemoryReadingsReliable()) {
    EXPECT_GE(after_sum + kFreeSlack, before)
        << "before " << before / kMiB << " MiB free, after the failed capture " << after_sum / kMiB;
  }
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
  const Vector<float> host_vec(16 << 20);
  {
    CuGraphPool pool;  // kSharedPool mode: the memory goes with the pool
    EXPECT_THROW(test::CaptureOwned([&] { CuMatrix<float> from_host(host); }, &pool), Error);
    EXPECT_THROW(test::CaptureOwned([&] { CuVector<float> from_host(host_vec); }, &pool), Error);
  }
  const size_t after = FreeDeviceBytes();
  if (test::FreeMemoryReadingsReliable()) {
    EXPECT_GE(after + kFreeSlack, before)
        << "before " << before / kMiB << " MiB free, after the failed captures " << after / kMiB;
  }
  EXPECT_FALSE(CuGraph::Capturing());
#endif
}

}  // namespace
}  // namespace cuctx
