// tests/cudamatrix/cu-graph-foreign-test.cc: captures begun outside cuctx (a cudaStreamBeginCapture
// of the thread's stream around Cu code, as a user who knows CUDA or another framework would
// write it) are safe: the memory cuctx allocates during them belongs to the captured graph, eager
// allocations made afterwards never receive it, eager memory freed during the capture is kept
// until the graph is gone, the graph's memory goes back when CUDA destroys the graph, and ops that
// cannot be captured throw the same errors as inside CuGraph::Capture. GPU only (the CPU mode has
// no streams to capture). Each test runs under the check's two ways of seeing such a capture: the
// automatic mode with one thread (the driver asked at every Malloc and Free) and the CUPTI watch
// (callbacks on the calls that begin or join a capture, what runs once several threads check).
#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-sparse-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-foreign-capture.h"
#include "matrix/matrix.h"
#include "matrix/sparse-matrix.h"
#include "tests/cu-matrix-testing.h"
#include "tests/cudamatrix/cu-graph-testing.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if CUCTX_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

#if CUCTX_HAVE_CUDA
using test::FreeDeviceBytes;
using test::Identical;
using test::ToHost;

constexpr size_t kMiB = size_t{1} << 20;
// Driver bookkeeping (graph executables, loaded modules) that may stay after a graph goes.
constexpr size_t kFreeSlack = 16 * kMiB;

// A graph captured with the CUDA runtime alone, the way code that does not know cuctx does it.
class RawGraph {
 public:
  // Captures `body` on the calling thread's stream in `mode`.
  template <typename Body>
  static RawGraph Capture(Body body, cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal) {
    RawGraph g;
    EXPECT_EQ(cudaStreamBeginCapture(cudaStreamPerThread, mode), cudaSuccess);
    try {
      body();
    } catch (...) {
      cudaGraph_t abandoned = nullptr;
      if (cudaStreamEndCapture(cudaStreamPerThread, &abandoned) == cudaSuccess &&
          abandoned != nullptr)
        cudaGraphDestroy(abandoned);
      throw;
    }
    EXPECT_EQ(cudaStreamEndCapture(cudaStreamPerThread, &g.graph_), cudaSuccess);
    EXPECT_EQ(cudaGraphInstantiate(&g.exec_, g.graph_, 0), cudaSuccess);
    return g;
  }
  RawGraph(RawGraph&& o) noexcept : graph_(o.graph_), exec_(o.exec_) {
    o.graph_ = nullptr;
    o.exec_ = nullptr;
  }
  ~RawGraph() { Destroy(); }
  void Launch() { EXPECT_EQ(cudaGraphLaunch(exec_, cudaStreamPerThread), cudaSuccess); }
  void Destroy() {
    if (exec_ != nullptr) {
      EXPECT_EQ(cudaGraphExecDestroy(exec_), cudaSuccess);
    }
    if (graph_ != nullptr) {
      EXPECT_EQ(cudaGraphDestroy(graph_), cudaSuccess);
    }
    exec_ = nullptr;
    graph_ = nullptr;
  }

 private:
  RawGraph() = default;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// CUDA releases a destroyed graph's user objects asynchronously: waits (up to 5 s) until the
// pools of foreign captures are back to `alive`, giving back what is released meanwhile.
bool WaitForForeignPools(int alive) {
  for (int i = 0; i < 500; ++i) {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    internal::ReleaseDeadForeignPools();
    if (internal::ForeignPoolsAlive() <= alive) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Eager matrices of several sizes, each Set(value), allocated now.
std::vector<std::unique_ptr<CuMatrix<float>>> FilledEager(float value) {
  std::vector<std::unique_ptr<CuMatrix<float>>> ms;
  for (MatrixIndexT n : {64, 128, 256, 512, 1024, 2048}) {
    ms.push_back(std::make_unique<CuMatrix<float>>(n, n, kUndefined));
    ms.back()->Set(value);
  }
  return ms;
}

void ExpectAllHold(const std::vector<std::unique_ptr<CuMatrix<float>>>& ms, float value) {
  for (const auto& m : ms)
    EXPECT_EQ(m->Sum(), value * m->NumRows() * m->NumCols()) << m->NumRows() << "x" << m->NumCols();
}
#endif

class CuGraphForeignTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    initial_ = internal::CaptureWatchMode();
    if (!internal::SetCaptureWatchModeForTesting(GetParam()))
      GTEST_SKIP() << "the CUPTI watch cannot run here (no libcupti, or another subscriber)";
  }
  void TearDown() override { internal::SetCaptureWatchModeForTesting(initial_); }

 private:
  std::string initial_;
};
INSTANTIATE_TEST_SUITE_P(Watch, CuGraphForeignTest, ::testing::Values("auto", "cupti"));

TEST_P(CuGraphForeignTest, RawCaptureTemporariesNeverLandOnLaterEagerMemory) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  std::printf("capture watch: %s\n", internal::CaptureWatchMode());
  for (cudaStreamCaptureMode mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
                                     cudaStreamCaptureModeRelaxed}) {
    SCOPED_TRACE("capture mode " + std::to_string(static_cast<int>(mode)));
    test::Rng rng = test::MakeRng();
    const Matrix<float> hx = test::RandomMatrix<float>(512, 512, &rng);
    CuMatrix<float> x(hx), y(512, 512);
    {
      CuMatrix<float> warm(x);  // kernels loaded, thread set up before the capture
      warm.Scale(2.0f);
    }
    const int alive = internal::ForeignPoolsAlive();
    CuDevice::Instantiate().Allocator()->ReleaseCachedMemory();
    const size_t before = FreeDeviceBytes();
    {
      RawGraph graph = RawGraph::Capture(
          [&] {
            // Temporaries made and freed inside the capture, 64 MiB of them alive at once.
            for (int k = 0; k < 2; ++k) {
              std::vector<CuMatrix<float>> ts;
              for (int i = 0; i < 4; ++i) {
                ts.emplace_back(2048, 2048, kUndefined);
                ts.back().Set(static_cast<float>(-i));
              }
              CuMatrix<float> u(x);
              u.Scale(2.0f);
              y.CopyFromMat(u);
            }
          },
          mode);
      EXPECT_EQ(internal::ForeignPoolsAlive(), alive + 1);
      ASSERT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
      if (test::FreeMemoryReadingsReliable()) {
        EXPECT_LT(FreeDeviceBytes() + 48 * kMiB, before) << "the graph's 64 MiB should be in use";
      }
      // Eager memory made after the capture, then 20 replays.
      const auto eager = FilledEager(7.0f);
      for (int i = 0; i < 20; ++i) graph.Launch();
      ASSERT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
      ExpectAllHold(eager, 7.0f);
      Matrix<float> expected(hx);
      expected.Scale(2.0f);
      EXPECT_TRUE(Identical(ToHost(y), expected));
    }  // ~RawGraph: cudaGraphExecDestroy + cudaGraphDestroy
    EXPECT_TRUE(WaitForForeignPools(alive)) << "the destroyed graph's pool was never released";
    // The eager matrices made after the capture went to the eager cache; give that back too.
    CuDevice::Instantiate().Allocator()->ReleaseCachedMemory();
    const size_t after = FreeDeviceBytes();
    if (test::FreeMemoryReadingsReliable()) {
      EXPECT_GE(after + kFreeSlack, before)
          << "before " << before / kMiB << " MiB free, after the graph went " << after / kMiB;
    }
  }
#endif
}

TEST_P(CuGraphForeignTest, EagerMemoryFreedDuringARawCaptureWaitsForTheGraph) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  const int alive = internal::ForeignPoolsAlive();
  CuMatrix<float> y(256, 256);
  auto doomed = std::make_unique<CuMatrix<float>>(256, 256, kUndefined);
  doomed->Set(3.0f);
  const void* doomed_data = doomed->Data();
  RawGraph graph = RawGraph::Capture([&] {
    y.CopyFromMat(*doomed);  // the graph reads it at every replay...
    doomed.reset();          // ...though it is freed during the capture
  });
  // While the graph lives, no eager allocation of that size gets the freed memory.
  std::vector<std::unique_ptr<CuMatrix<float>>> later;
  for (int i = 0; i < 8; ++i) {
    later.push_back(std::make_unique<CuMatrix<float>>(256, 256, kUndefined));
    EXPECT_NE(static_cast<const void*>(later.back()->Data()), doomed_data);
    later.back()->Set(9.0f);
  }
  graph.Launch();
  ASSERT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
  EXPECT_EQ(y.Sum(), 3.0f * 256 * 256);
  graph.Destroy();
  EXPECT_TRUE(WaitForForeignPools(alive));
#endif
}

TEST_P(CuGraphForeignTest, MemoryThatEscapesARawCaptureStaysValidAndNeverGoesEager) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  const int alive = internal::ForeignPoolsAlive();
  CuMatrix<float> out;  // resized inside the capture: its memory escapes
  {
    RawGraph graph = RawGraph::Capture([&] {
      out.Resize(128, 128, kUndefined);
      out.Set(5.0f);
    });
    graph.Launch();
    ASSERT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
    EXPECT_EQ(out.Sum(), 5.0f * 128 * 128);
  }
  EXPECT_TRUE(WaitForForeignPools(alive));
  const void* escaped = out.Data();
  out.Scale(2.0f);  // still valid and writable after the graph is gone
  EXPECT_EQ(out.Sum(), 10.0f * 128 * 128);
  out.Resize(0, 0);  // back to its pool, which is dropped now; never to the eager allocator
  for (int i = 0; i < 8; ++i) {
    CuMatrix<float> m(128, 128, kUndefined);
    EXPECT_NE(static_cast<const void*>(m.Data()), escaped);
  }
#endif
}

TEST_P(CuGraphForeignTest, UncapturableOpsThrowTheCaptureErrorInARawCapture) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  test::QuietLog quiet;
  const int alive = internal::ForeignPoolsAlive();
  CuMatrix<float> x(64, 64);
  x.Set(1.0f);
  EXPECT_FALSE(internal::ThreadStreamCapturing());
  {
    RawGraph graph = RawGraph::Capture(
        [&] {
          EXPECT_TRUE(internal::ThreadStreamCapturing());
          std::string what;
          try {
            (void)x.Sum();
          } catch (const Error& e) {
            what = e.what();
          }
          EXPECT_NE(what.find("CuMatrixBase::Sum"), std::string::npos) << what;
          EXPECT_NE(what.find("captures a CUDA graph"), std::string::npos) << what;
          EXPECT_THROW(x.SetRandn(), Error);
          Matrix<float> host(64, 64);
          EXPECT_THROW(x.CopyToMat(&host), Error);
          EXPECT_THROW(SynchronizeGpu(), Error);
          // The capture survived the refused ops: its work still replays.
          x.Scale(2.0f);
        },
        cudaStreamCaptureModeThreadLocal);
    EXPECT_FALSE(internal::ThreadStreamCapturing());
    graph.Launch();
    EXPECT_EQ(x.Sum(), 2.0f * 64 * 64);
  }  // ~RawGraph
  EXPECT_TRUE(WaitForForeignPools(alive));
#endif
}

// The checks that used to look at CuGraph's own capture flag only (the sparse transpose cache,
// the sync-check waits, profile marks) see a raw capture too: an op that cannot be captured
// throws the capture error, and one with a capturable form takes it.
TEST_P(CuGraphForeignTest, CaptureOnlyChecksSeeARawCapture) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  test::QuietLog quiet;
  const int alive = internal::ForeignPoolsAlive();
  test::Rng rng = test::MakeRng();
  // B (12 x 10) with 1 to 3 entries a row, C = 2 A B.
  std::vector<std::vector<std::pair<MatrixIndexT, float>>> rows(12);
  Matrix<float> dense_b(12, 10);
  for (int r = 0; r < 12; ++r)
    for (int k = 0; k < 1 + r % 3; ++k) {
      const MatrixIndexT c = (3 * r + 4 * k) % 10;
      const float v = static_cast<float>(rng.Uniform(-1.0, 1.0));
      rows[r].emplace_back(c, v);
      dense_b(r, c) = v;
    }
  for (auto& row : rows) std::sort(row.begin(), row.end());  // columns in increasing order
  const CuSparseMatrix<float> B(SparseMatrix<float>(10, rows));
  const Matrix<float> a = test::RandomMatrix<float>(8, 12, &rng);
  const CuMatrix<float> A(a);
  CuMatrix<float> C(8, 10);
  C.AddMatSmat(1.0f, A, B, kNoTrans, 0.0f);  // eager: the thread's cuSPARSE handle exists now
  EXPECT_FALSE(internal::ThreadCapturesAnyGraph());
  {
    RawGraph graph = RawGraph::Capture(
        [&] {
          EXPECT_TRUE(internal::ThreadCapturesAnyGraph());
          EXPECT_FALSE(CuGraph::Capturing());  // cuctx's own flag: not its capture
          std::string what;
          try {
            (void)B.CachedTranspose();  // would copy and wait: refused with the capture error
          } catch (const Error& e) {
            what = e.what();
          }
          EXPECT_NE(what.find("captures a CUDA graph"), std::string::npos) << what;
          C.AddMatSmat(2.0f, A, B, kNoTrans, 0.0f);  // the capturable (transposed-op) form
        },
        cudaStreamCaptureModeThreadLocal);
    EXPECT_FALSE(internal::ThreadCapturesAnyGraph());
    graph.Launch();
    Matrix<float> expected(8, 10);
    expected.AddMatMat(2.0f, a, kNoTrans, dense_b, kNoTrans, 0.0f);
    // float rounding over at most 12 terms.
    EXPECT_TRUE(test::ExpectNear(ToHost(C), expected, 1e-5));
  }  // ~RawGraph
  EXPECT_TRUE(WaitForForeignPools(alive));
#endif
}

}  // namespace
}  // namespace cuctx
