// tests/cudamatrix/cu-graph-threads-test.cc: CuGraph capture and replay from several threads at
// once.
// SPDX-License-Identifier: Apache-2.0
//
// Both modes: two threads capture and replay their own graphs while a third runs eager work with
// SynchronizeGpu() now and then; and threads that start, make their library handles (cuBLAS,
// cuRAND), work and exit (destroying them), with SynchronizeGpu() in between, while two others
// capture over and over. Making or destroying a handle may wait for the device or use the legacy
// default stream, and SynchronizeGpu() queues work there; either invalidates another thread's
// capture unless cuctx keeps them apart (the intermittent cudaErrorStreamCaptureInvalidated of
// issue 26).
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

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <gtest/gtest.h>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

using test::Identical;
using test::ToHost;

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

// A thread that ends while another thread captures: destroying its library handles synchronizes
// the context inside cuBLAS/cuSOLVER, which broke the capture (cudaErrorStreamCaptureInvalidated)
// until handle destruction waited for captures to end. The ending thread is released from inside
// the capture and the capture keeps going for a while, so the destruction overlaps it.
TEST(CuGraphThreadTest, ThreadEndingDuringAnotherThreadsCapture) {
  CUCTX_REQUIRE_GPU();
  CuDevice::Instantiate().AllowMultithreading();
  std::atomic<bool> handle_made{false}, may_end{false};
  std::thread ending([&] {
    CuMatrix<float> a(16, 16), c(16, 16);
    a.Set(1.0f);
    c.AddMatMat(1.0f, a, kNoTrans, a, kNoTrans, 0.0f);  // makes this thread's cuBLAS handle
    SynchronizeGpu();
    handle_made = true;
    while (!may_end) std::this_thread::yield();
  });  // its CuDevice, with the handles, is destroyed as it ends
  while (!handle_made) std::this_thread::yield();
  CuMatrix<float> x(32, 32), y(32, 32);
  x.Set(2.0f);
  CuGraph graph = CuGraph::Capture([&] {
    y.AddMatMat(1.0f, x, kNoTrans, x, kNoTrans, 0.0f);
    may_end = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    y.Add(1.0f);
  });
  graph.Launch();
  ending.join();
  // Every element: 32 products of 2 x 2, plus 1.
  EXPECT_EQ(y.Sum(), 32.0f * 32.0f * (32.0f * 4.0f + 1.0f));
}

// One short-lived thread: makes its handles (first use of cuRAND and cuBLAS on the thread), runs a
// GEMM of random matrices checked against the CPU, and exits, which destroys its handles.
void ShortLivedWorker(int index, Failures* failures) {
  try {
    CuDevice::Instantiate();
    const MatrixIndexT n = 8 + index % 24;
    CuMatrix<float> a(n, n, kUndefined), b(n, n, kUndefined), c(n, n);
    a.SetRandn();
    b.SetRandUniform();
    c.AddMatMat(1.0f, a, kNoTrans, b, kNoTrans, 0.0f);
    Matrix<float> ref(n, n);
    ref.AddMatMat(1.0f, ToHost(a), kNoTrans, ToHost(b), kNoTrans, 0.0f);
    // float rounding over at most 31 terms of |a| < ~5, b < 1.
    if (!test::ExpectNear(ToHost(c), ref, 1e-4))
      failures->Add("short-lived thread " + std::to_string(index) + ": GEMM wrong");
  } catch (const std::exception& e) {
    failures->Add("short-lived thread " + std::to_string(index) + " threw: " + e.what());
  }
}

// A capturing thread that captures, launches and destroys small graphs 40 times (10 under
// compute-sanitizer, CUCTX_TEST_QUICK), each checked.
void RepeatedCaptureWorker(int id, std::atomic<int>* ready, Failures* failures) {
  const int kRounds = std::getenv("CUCTX_TEST_QUICK") == nullptr ? 40 : 10;
  try {
    CuDevice::Instantiate();
    CuMatrix<float> warm(4, 4);
    warm.SetRandn();  // its own handles exist before the churn starts
    ready->fetch_add(1);
    for (int round = 0; round < kRounds; ++round) {
      CuMatrix<float> out(8, 8), w(8, 8);
      w.Set(1.0f);
      CuGraph g = CuGraph::Capture([&] {
        CuMatrix<float> t(64, 64);
        t.Set(float(round + id));
        out.AddMatMat(1.0f, t.Range(0, 8, 0, 8), kNoTrans, w, kNoTrans, 0.0f);
      });
      g.Launch();
      const float want = 64.0f * 8 * (round + id);  // 64 entries, each 8 * (round + id)
      if (out.Sum() != want)
        failures->Add("capturing thread " + std::to_string(id) + " round " + std::to_string(round) +
                      ": sum " + std::to_string(out.Sum()) + ", want " + std::to_string(want));
    }
  } catch (const std::exception& e) {
    failures->Add("capturing thread " + std::to_string(id) + " threw: " + e.what());
    ready->fetch_add(1);
  }
}

TEST(CuGraphThreadTest, ThreadsMakeAndDestroyHandlesWhileOthersCapture) {
  CuDevice::Instantiate().AllowMultithreading();
  std::atomic<int> ready{0}, finished{0};
  Failures failures;
  std::vector<std::thread> capturing;
  for (int id = 0; id < 2; ++id)
    capturing.emplace_back([&, id] {
      RepeatedCaptureWorker(id, &ready, &failures);
      finished.fetch_add(1);
    });
  while (ready.load() < 2) std::this_thread::yield();
  // Short-lived threads, two at a time, until both capturing threads are done (at least 8), with a
  // SynchronizeGpu() after each pair.
  int started = 0;
  while (started < 8 || finished.load() < 2) {
    std::thread a(ShortLivedWorker, started, &failures);
    std::thread b(ShortLivedWorker, started + 1, &failures);
    a.join();
    b.join();
    // A no-op on the legacy stream (after the gate), still pending when the next capture begins.
    SynchronizeGpu();
    started += 2;
  }
  for (std::thread& t : capturing) t.join();
  for (const std::string& f : failures.Take()) ADD_FAILURE() << f;
  EXPECT_FALSE(CuGraph::Capturing());
}

}  // namespace
}  // namespace cuctx
