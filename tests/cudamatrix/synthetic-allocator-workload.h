// tests/cudamatrix/synthetic-allocator-workload.h: a deterministic nnet3-like allocation workload
// of several simulated threads, for the allocator's sync and fragmentation tests.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_TESTS_CUDAMATRIX_SYNTHETIC_ALLOCATOR_WORKLOAD_H_
#define CUCTX_TESTS_CUDAMATRIX_SYNTHETIC_ALLOCATOR_WORKLOAD_H_

#include "cudamatrix/cu-allocator.h"
#include "cutool/host-allocator-upstream.h"
#include "tests/testing.h"

#include <gtest/gtest.h>
#include <memory>
#include <vector>

namespace cuctx {
namespace test {

// One thread of an nnet3-like program: a few long-lived parameter matrices, then minibatches of
// varying size that allocate a chain of activations plus a temporary per layer, copy the output
// to the host (a stream sync, reported with NoteThreadStreamSynchronized() when `note_drains`),
// and free everything in reverse (backprop) order.
class SyntheticWorker {
 public:
  SyntheticWorker(int index, bool note_drains, CuMemoryAllocator* allocator)
      : rng_(MakeRng(1000 + index)), note_drains_(note_drains), allocator_(allocator) {}

  void Start() {
    for (size_t d : {40 * 512, 512 * 512, 512 * 512}) params_.push_back(allocator_->Malloc(d * 4));
  }
  // Performs one operation; returns false when the worker is done.
  bool Step() {
    if (pending_.empty()) {
      if (minibatches_left_-- == 0) return false;
      Plan();
    }
    const Op op = pending_.back();
    pending_.pop_back();
    if (op.kind == Op::kMalloc) {
      live_.push_back(allocator_->Malloc(op.bytes));
    } else if (op.kind == Op::kFree) {
      allocator_->Free(live_.back());
      live_.pop_back();
    } else if (note_drains_) {
      allocator_->NoteThreadStreamSynchronized();
    }
    return true;
  }
  void Finish() {
    for (void* p : live_) allocator_->Free(p);
    for (void* p : params_) allocator_->Free(p);
  }

 private:
  struct Op {
    enum Kind { kMalloc, kFree, kDrain } kind;
    size_t bytes;
  };
  void Plan() {
    const size_t rows = static_cast<size_t>(rng_.Int(32, 128));
    static const size_t kDims[] = {40, 512, 512, 1024, 512, 2000};
    std::vector<Op> ops;
    for (size_t d : kDims) {
      ops.push_back({Op::kMalloc, rows * d * 4});        // activation, kept
      ops.push_back({Op::kMalloc, rows * d * 4 + 256});  // temporary
      ops.push_back({Op::kFree, 0});
    }
    ops.push_back({Op::kDrain, 0});  // the output goes to the host
    for (size_t i = 0; i < sizeof(kDims) / sizeof(kDims[0]); ++i) ops.push_back({Op::kFree, 0});
    pending_.assign(ops.rbegin(), ops.rend());
  }

  Rng rng_;
  bool note_drains_;
  CuMemoryAllocator* allocator_;
  int minibatches_left_ = 120;
  std::vector<Op> pending_;
  std::vector<void*> live_;
  std::vector<void*> params_;
};

// `num_threads` simulated threads, interleaved at random from one test thread (deterministic),
// on an allocator over a 1 GiB host upstream (expandable regions when `map_granularity` > 0).
// With `thread_caches` multithreading is allowed, which turns the per-thread caches on.
inline CuAllocatorStats RunSimulatedThreads(int num_threads, bool affinity, bool note_drains,
                                            float proportion, bool thread_caches = false,
                                            size_t map_granularity = 0) {
  CuAllocatorOptions o;
  o.memory_proportion = proportion;
  o.region_quantum_mb = 1;
  o.thread_affinity = affinity;
  auto owned = std::make_unique<HostAllocatorUpstream>(size_t{1} << 30, map_granularity);
  HostAllocatorUpstream* upstream = owned.get();
  CuMemoryAllocator allocator(o, std::move(owned));
  if (thread_caches) allocator.AllowMultithreading();
  std::vector<std::unique_ptr<SyntheticWorker>> workers;
  std::vector<int> running;
  for (int t = 0; t < num_threads; ++t) {
    running.push_back(t);
    workers.push_back(std::make_unique<SyntheticWorker>(t, note_drains, &allocator));
    upstream->SimulateThread(t + 1);
    workers.back()->Start();
  }
  Rng rng = MakeRng(7);
  while (!running.empty()) {
    const size_t k = static_cast<size_t>(rng.Int(0, static_cast<int64_t>(running.size()) - 1));
    upstream->SimulateThread(running[k] + 1);
    // Threads run in bursts between context switches; a few operations per turn.
    for (int burst = static_cast<int>(rng.Int(1, 8)); burst > 0; --burst) {
      if (!workers[running[k]]->Step()) {
        workers[running[k]]->Finish();
        running.erase(running.begin() + k);
        break;
      }
    }
  }
  upstream->SimulateThread(0);
  EXPECT_EQ(upstream->NumContractViolations(), 0);
  return allocator.GetStats();
}

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_CUDAMATRIX_SYNTHETIC_ALLOCATOR_WORKLOAD_H_
