// tests/cudamatrix/cu-graph-sharing-test.cc: the memory modes of CuGraph (graph memory nodes, a
// shared CuGraphPool, private pools): each replays like eager code; graphs of one device share
// memory in the first two modes (GPU: through cudaMemGetInfo and the pool's size); an output that
// escapes a kNodes graph survives relaunches and frees; a shared pool's graphs stay on its thread;
// the default mode's setter and names.
#include "base/error.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "matrix/matrix.h"
#include "tests/cu-matrix-testing.h"
#include "tests/cudamatrix/cu-graph-testing.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cstddef>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

using test::Identical;
using test::ToHost;

constexpr size_t kMiB = size_t{1} << 20;
constexpr CuGraphMemory kModes[] = {CuGraphMemory::kNodes, CuGraphMemory::kSharedPool,
                                    CuGraphMemory::kPrivatePool};

// y = sigmoid(x w) + 1 through two temporaries of `rows` x `cols`.
std::function<void()> Step(const CuMatrix<float>& x, const CuMatrix<float>& w, CuMatrix<float>* y) {
  return [&x, &w, y] {
    CuMatrix<float> t(x.NumRows(), w.NumCols(), kUndefined);
    t.AddMatMat(1.0f, x, kNoTrans, w, kNoTrans, 0.0f);
    CuMatrix<float> s(t.NumRows(), t.NumCols(), kUndefined);
    s.Sigmoid(t);
    s.Add(1.0f);
    y->CopyFromMat(s);
  };
}

TEST(CuGraphSharingTest, EveryModeReplaysLikeEagerCode) {
  test::Rng rng = test::MakeRng();
  const MatrixIndexT rows = 96, cols = 160;
  CuMatrix<float> x(test::RandomMatrix<float>(rows, cols, &rng));
  CuMatrix<float> w(test::RandomMatrix<float>(cols, cols, &rng));
  CuMatrix<float> expected(rows, cols);
  Step(x, w, &expected)();
  for (CuGraphMemory mode : kModes) {
    SCOPED_TRACE(CuGraph::MemoryName(mode));
    CuMatrix<float> y(rows, cols);
    CuGraph graph = CuGraph::Capture(Step(x, w, &y), mode);
    EXPECT_EQ(graph.Memory(), mode);
    for (int i = 0; i < 3; ++i) graph.Launch();
    EXPECT_TRUE(Identical(ToHost(y), ToHost(expected)));
  }
}

TEST(CuGraphSharingTest, GraphsOfOnePoolReuseItsMemory) {
  test::Rng rng = test::MakeRng();
  CuGraphPool pool;
  CuMatrix<float> w(test::RandomMatrix<float>(512, 512, &rng));
  std::vector<std::unique_ptr<CuMatrix<float>>> xs, ys;
  std::vector<CuGraph> graphs;
  size_t first = 0;
  // Largest first, as servers capture their buckets.
  for (MatrixIndexT rows = 1024; rows >= 128; rows -= 128) {
    xs.push_back(std::make_unique<CuMatrix<float>>(test::RandomMatrix<float>(rows, 512, &rng)));
    ys.push_back(std::make_unique<CuMatrix<float>>(rows, 512));
    graphs.push_back(CuGraph::Capture(Step(*xs.back(), w, ys.back().get()), pool));
    if (first == 0) first = pool.MemoryBytes();
  }
  for (size_t i = 0; i < graphs.size(); ++i) {
    graphs[i].Launch();
    CuMatrix<float> expected(ys[i]->NumRows(), ys[i]->NumCols());
    Step(*xs[i], w, &expected)();
    EXPECT_TRUE(Identical(ToHost(*ys[i]), ToHost(expected))) << "graph " << i;
  }
  if (test::GpuEnabled()) {
    EXPECT_GT(first, 0u);
    // One cuBLAS workspace and the largest graph's temporaries serve all eight.
    EXPECT_EQ(pool.MemoryBytes(), first)
        << "first " << first / kMiB << " MiB, all " << pool.MemoryBytes() / kMiB << " MiB";
    EXPECT_EQ(graphs[3].MemoryBytes(), pool.MemoryBytes());
  } else {
    EXPECT_EQ(pool.MemoryBytes(), 0u);
  }
}

TEST(CuGraphSharingTest, NodeGraphsSharePhysicalMemory) {
  CUCTX_REQUIRE_GPU();
  if (!test::FreeMemoryReadingsReliable()) GTEST_SKIP() << "skipped: free-memory readings";
#if CUCTX_HAVE_CUDA
  test::Rng rng = test::MakeRng();
  CuMatrix<float> w(test::RandomMatrix<float>(1024, 1024, &rng));
  auto x = std::make_unique<CuMatrix<float>>(test::RandomMatrix<float>(4096, 1024, &rng));
  CuMatrix<float> y(4096, 1024);
  {
    CuGraph warm = CuGraph::Capture(Step(*x, w, &y), CuGraphMemory::kNodes);
    warm.Launch();
  }
  CuGraph::ReleaseUnusedMemory();
  const size_t before = test::FreeDeviceBytes();
  std::vector<CuGraph> graphs;
  for (int i = 0; i < 8; ++i) {
    graphs.push_back(CuGraph::Capture(Step(*x, w, &y), CuGraphMemory::kNodes));
    graphs.back().Launch();
    ASSERT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
  }
  const size_t one = graphs[0].MemoryBytes();  // 32 MiB of temporaries, the cuBLAS workspace
  EXPECT_GE(one, 32 * kMiB);
  const CuGraph::DriverMemory driver = CuGraph::DeviceGraphMemory();
  const size_t used = before - test::FreeDeviceBytes();
  EXPECT_LT(used, 2 * one) << "8 graphs of " << one / kMiB << " MiB each hold " << used / kMiB
                           << " MiB of the device";
  EXPECT_LT(driver.reserved, 2 * one) << "the driver reserves " << driver.reserved / kMiB << " MiB";
  CuMatrix<float> expected(4096, 1024);
  Step(*x, w, &expected)();
  for (CuGraph& g : graphs) {
    y.SetZero();
    g.Launch();
    EXPECT_TRUE(Identical(ToHost(y), ToHost(expected)));
  }
  graphs.clear();  // the last destruction trims what no graph uses
  EXPECT_LT(CuGraph::DeviceGraphMemory().reserved, 4 * kMiB);
#endif
}

TEST(CuGraphSharingTest, OutputEscapingANodeGraphSurvivesRelaunchesAndFrees) {
  test::Rng rng = test::MakeRng();
  const Matrix<float> hx = test::RandomMatrix<float>(200, 300, &rng);
  CuMatrix<float> x(hx);
  CuMatrix<float> y;  // resized inside: an allocation of the graph that escapes it
  Matrix<float> doubled(hx);
  doubled.Scale(2.0f);
  CuGraph graph = CuGraph::Capture(
      [&] {
        y.Resize(200, 300, kUndefined);
        y.CopyFromMat(x);
        y.Scale(2.0f);
      },
      CuGraphMemory::kNodes);
  graph.Launch();
  EXPECT_TRUE(Identical(ToHost(y), doubled));
  x.Scale(0.5f);  // a relaunch frees and allocates y again at the same address
  const void* where = y.Data();
  graph.Launch();
  EXPECT_EQ(static_cast<const void*>(y.Data()), where);
  EXPECT_TRUE(Identical(ToHost(y), hx));
  y.Resize(0, 0);  // the user frees it; the graph still relaunches, allocating it each time
  for (int i = 0; i < 3; ++i) graph.Launch();
  CuMatrix<float> eager(200, 300);
  eager.Set(4.0f);
  graph.Launch();
  EXPECT_EQ(eager.Sum(), 4.0f * 200 * 300);
  graph = CuGraph();  // its destruction frees the last launch's copy
  if (test::GpuEnabled()) {
    EXPECT_LT(CuGraph::DeviceGraphMemory().reserved, 4 * kMiB);
  }
}

TEST(CuGraphSharingTest, APoolTakesOneCaptureAtATime) {
  test::QuietLog quiet;
  CuMatrix<float> a(32, 32), b(32, 32);
  CuGraphPool pool;
  std::string error;
  CuGraph graph = CuGraph::Capture(
      [&] {
        a.Add(1.0f);
        // Another thread capturing into the same pool meanwhile is refused.
        std::thread other([&] {
          try {
            CuGraph::Capture([&] { b.Add(1.0f); }, pool);
          } catch (const Error& e) {
            error = e.what();
          }
        });
        other.join();
      },
      pool);
  graph.Launch();
  EXPECT_EQ(a.Sum(), 1.0f * 32 * 32);
  if (test::GpuEnabled()) {
    EXPECT_NE(error.find("another thread is capturing into this CuGraphPool"), std::string::npos)
        << error;
  }
  // Once it is done, the pool takes the next capture, from any thread, and its graphs launch
  // from any thread (one at a time).
  std::thread later([&] {
    CuGraph g = CuGraph::Capture([&] { b.Add(2.0f); }, pool);
    g.Launch();
    graph.Launch();
  });
  later.join();
  EXPECT_EQ(a.Sum(), 2.0f * 32 * 32);
  EXPECT_EQ(b.Sum(), 2.0f * 32 * 32);
}

TEST(CuGraphSharingTest, FreedOutputOfAPoolGraphIsNotReusedWhileTheGraphLives) {
  test::Rng rng = test::MakeRng();
  const Matrix<float> hx = test::RandomMatrix<float>(64, 64, &rng);
  CuMatrix<float> x(hx);
  CuGraphPool pool;
  CuMatrix<float> y;  // escapes graph a
  CuGraph a = CuGraph::Capture(
      [&] {
        y.Resize(64, 64, kUndefined);
        y.CopyFromMat(x);
      },
      pool);
  const void* y_data = y.Data();
  y.Resize(0, 0);  // freed by its user; graph a still writes it at every replay
  CuMatrix<float> z;
  CuGraph b = CuGraph::Capture(
      [&] {
        z.Resize(64, 64, kUndefined);
        z.Set(3.0f);
      },
      pool);
  if (test::GpuEnabled()) {
    EXPECT_NE(static_cast<const void*>(z.Data()), y_data);
  }
  b.Launch();
  a.Launch();  // must not overwrite z
  EXPECT_EQ(z.Sum(), 3.0f * 64 * 64);
}

TEST(CuGraphSharingTest, DefaultMemoryCanBeSetAndNamed) {
  const CuGraphMemory saved = CuGraph::DefaultMemory();
  for (CuGraphMemory mode : kModes) {
    CuGraph::SetDefaultMemory(mode);
    EXPECT_EQ(CuGraph::DefaultMemory(), mode);
    CuMatrix<float> a(8, 8);
    CuGraph g = CuGraph::Capture([&] { a.Add(1.0f); });
    EXPECT_EQ(g.Memory(), mode);
  }
  CuGraph::SetDefaultMemory(saved);
  EXPECT_STREQ(CuGraph::MemoryName(CuGraphMemory::kNodes), "nodes");
  EXPECT_STREQ(CuGraph::MemoryName(CuGraphMemory::kSharedPool), "shared");
  EXPECT_STREQ(CuGraph::MemoryName(CuGraphMemory::kPrivatePool), "private");
}

}  // namespace
}  // namespace cuctx
