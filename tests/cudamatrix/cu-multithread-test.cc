// tests/cudamatrix/cu-multithread-test.cc: four threads doing mixed Cu work at once
// (AllowMultithreading), each checked against the CPU, with matrices handed between threads so that
// the allocator frees blocks that another thread allocated.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"
#include "tests/matrix-testing.h"
#include "tests/testing.h"

#include <cstdlib>
#include <deque>
#include <gtest/gtest.h>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

using test::ToHost;

// A matrix made on one thread, with the host copy it must still equal on the thread that frees it.
struct Parcel {
  std::unique_ptr<CuMatrix<float>> device;
  Matrix<float> expected;
};

// A mutex-guarded queue of parcels that every worker pushes to and pops from.
class Exchange {
 public:
  void Push(Parcel p) {
    std::lock_guard<std::mutex> lock(mu_);
    parcels_.push_back(std::move(p));
  }
  bool TryPop(Parcel* p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (parcels_.empty()) return false;
    *p = std::move(parcels_.front());
    parcels_.pop_front();
    return true;
  }
  void DrainAndCheck() {
    Parcel p;
    while (TryPop(&p))
      EXPECT_TRUE(test::ExpectNear(ToHost(*p.device), p.expected, 0.0)) << "parcel changed";
  }

 private:
  std::mutex mu_;
  std::deque<Parcel> parcels_;
};

// One worker's rounds: GEMM, softmax, element-wise ops, reductions and host copies on matrices of
// varying sizes (so the allocator splits and merges), against the same steps on the CPU.
void Worker(int id, int rounds, Exchange* exchange, int* failures) {
  CuDevice::Instantiate();  // this thread's runtime (shares the selected device)
  test::Rng rng = test::MakeRng(1000 + id);
  int bad = 0;
  for (int round = 0; round < rounds; ++round) {
    const MatrixIndexT m = 1 + rng.Int(0, 96), k = 1 + rng.Int(0, 96), n = 1 + rng.Int(0, 96);
    Matrix<float> a = test::RandomMatrix<float>(m, k, &rng);
    Matrix<float> b = test::RandomMatrix<float>(k, n, &rng);
    Matrix<float> c_ref(m, n);
    c_ref.AddMatMat(1.0, a, kNoTrans, b, kNoTrans, 0.0);
    Matrix<float> s_ref(c_ref);
    s_ref.ApplySoftMaxPerRow();
    Matrix<float> e_ref(c_ref);
    e_ref.Scale(0.5);
    e_ref.AddMat(2.0, s_ref);
    e_ref.MulElements(s_ref);

    CuMatrix<float> ca(a), cb(b), cc(m, n);
    cc.AddMatMat(1.0, ca, kNoTrans, cb, kNoTrans, 0.0);
    CuMatrix<float> cs(m, n, kUndefined);
    cs.SoftMaxPerRow(cc);
    CuMatrix<float> ce(cc);
    ce.Scale(0.5);
    ce.AddMat(2.0, cs);
    ce.MulElements(cs);
    CuVector<double> row_sums(m);
    CuMatrix<double> cs_double(cs);
    row_sums.AddColSumMat(1.0, cs_double, 0.0);

    if (!test::ExpectNear(ToHost(cc), c_ref, 1e-5)) ++bad;
    if (!test::ExpectNear(ToHost(cs), s_ref, 1e-5)) ++bad;
    if (!test::ExpectNear(ToHost(ce), e_ref, 1e-5)) ++bad;
    Vector<double> sums(m);
    row_sums.CopyToVec(&sums);
    for (MatrixIndexT r = 0; r < m; ++r)
      if (std::abs(sums(r) - 1.0) > 1e-5) ++bad;
    if (std::abs(cc.Sum() - c_ref.Sum()) > 1e-4 * (1 + std::abs(c_ref.Sum()))) ++bad;

    // Hand one matrix to whichever thread pops it next, and free one made elsewhere.
    Parcel mine;
    mine.device.reset(new CuMatrix<float>(ce));
    mine.expected = ToHost(*mine.device);  // also waits, so the data is complete when handed over
    exchange->Push(std::move(mine));
    Parcel theirs;
    if (exchange->TryPop(&theirs)) {
      if (!test::ExpectNear(ToHost(*theirs.device), theirs.expected, 0.0)) ++bad;
      theirs.device.reset();  // freed on this thread
    }
  }
  *failures = bad;
}

TEST(CuMultithreadTest, FourThreadsMixedWorkMatchCpu) {
  CuDevice& device = CuDevice::Instantiate();
  device.AllowMultithreading();
  // Fewer rounds under compute-sanitizer (tools/gpu-test.sh sets CUCTX_TEST_QUICK=1 there).
  const char* quick = std::getenv("CUCTX_TEST_QUICK");
  const int kThreads = 4, kRounds = quick != nullptr && quick[0] == '1' ? 4 : 40;
  Exchange exchange;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(Worker, t, kRounds, &exchange, &failures[t]);
  for (std::thread& t : threads) t.join();
  exchange.DrainAndCheck();  // the last parcels are freed here, on the main thread
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t << " had mismatches against the CPU";
}

}  // namespace
}  // namespace cuctx
