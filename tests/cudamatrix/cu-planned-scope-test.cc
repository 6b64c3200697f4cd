// tests/cudamatrix/cu-planned-scope-test.cc: CuMemoryPlans and CuPlannedScope: recording an
// iteration, replaying its plan, mismatch fallback, several shape keys, no overlap of live
// buffers. Most cases run everywhere over a caching allocator on host memory (the scope's
// explicit-allocator mode); the device-mode cases need a GPU.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-planned-scope.h"

#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cutool/host-allocator-upstream.h"
#include "tests/testing.h"

#include <algorithm>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

std::unique_ptr<CuMemoryAllocator> HostAllocator() {
  CuAllocatorOptions o;
  o.memory_proportion = 0;
  o.region_quantum_mb = 1;
  o.thread_cache_mb = 0;
  return std::make_unique<CuMemoryAllocator>(
      o, std::make_unique<test::HostAllocatorUpstream>(256 * kMiB));
}

// One live allocation of an iteration: where, how many bytes, and the byte it was filled with.
struct Live {
  unsigned char* p;
  size_t bytes;
  unsigned char fill;
};

bool Holds(const Live& l) {
  for (size_t i = 0; i < l.bytes; ++i)
    if (l.p[i] != l.fill) return false;
  return true;
}

// A deterministic iteration for `shape` (the seed of its sizes and lifetimes): allocations of
// random sizes (some pitched), each filled with its own byte, frees in a random order but the
// same every time; every allocation's contents are checked when it is freed, so a planned buffer
// that overlapped a live one is caught. Returns the number of corrupt buffers. `extra` bytes are
// added to the allocation numbered `change_at` (to provoke a mismatch).
int RunIteration(CuPlannedScope* scope, uint64 shape, int change_at = -1, size_t extra = 0) {
  test::Rng rng(1000 + shape);
  std::vector<Live> live;
  int corrupt = 0, n = 0;
  for (int step = 0; step < 300; ++step) {
    if (live.empty() || rng.Uniform() < 0.55) {
      Live l;
      l.fill = static_cast<unsigned char>(1 + n % 250);
      if (rng.Uniform() < 0.3) {
        const size_t row = static_cast<size_t>(rng.Int(1, 4000)), rows = rng.Int(1, 40);
        size_t pitch = 0;
        l.p = static_cast<unsigned char*>(scope->MallocPitch(row, rows, &pitch));
        EXPECT_GE(pitch, row);
        l.bytes = pitch * rows;
      } else {
        l.bytes = static_cast<size_t>(rng.Int(1, 200000)) + (n == change_at ? extra : 0);
        l.p = static_cast<unsigned char*>(scope->Malloc(l.bytes));
      }
      ++n;
      std::memset(l.p, l.fill, l.bytes);
      live.push_back(l);
    } else {
      const size_t k = static_cast<size_t>(rng.Int(0, static_cast<int64_t>(live.size()) - 1));
      if (!Holds(live[k])) ++corrupt;
      scope->Free(live[k].p);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  for (const Live& l : live) {
    if (!Holds(l)) ++corrupt;
    scope->Free(l.p);
  }
  return corrupt;
}

// Records iteration `shape` under `key` (the first scope of a key records and plans).
void RecordIteration(CuMemoryPlans* plans, const std::string& key, CuMemoryAllocator* allocator,
                     uint64 shape) {
  CuPlannedScope record(plans, key, allocator);
  ASSERT_TRUE(record.Recording());
  EXPECT_EQ(RunIteration(&record, shape), 0);
}

TEST(CuPlannedScopeTest, RecordsTheFirstIterationThenReplaysItsPlan) {
  auto allocator = HostAllocator();
  CuMemoryPlans plans;
  {
    CuPlannedScope scope(&plans, "frames=64", allocator.get());
    EXPECT_TRUE(scope.Recording());
    EXPECT_EQ(RunIteration(&scope, 1), 0);
    EXPECT_EQ(scope.NumServed(), 0);
  }
  ASSERT_TRUE(plans.Has("frames=64"));
  const CuMemoryPlan& plan = *plans.Find("frames=64");
  std::printf("  recorded iteration: %lld buffers, peak %zu, lower bound %zu (%.4f)\n",
              static_cast<long long>(plan.NumBuffers()), plan.PeakBytes(), plan.LowerBoundBytes(),
              plan.Ratio());
  EXPECT_GT(plan.NumBuffers(), 100);
  EXPECT_LE(plan.Ratio(), 1.1);
  for (int rep = 0; rep < 3; ++rep) {
    CuPlannedScope scope(&plans, "frames=64", allocator.get());
    EXPECT_FALSE(scope.Recording());
    EXPECT_EQ(RunIteration(&scope, 1), 0) << "rep " << rep;
    EXPECT_EQ(scope.NumServed(), plan.NumBuffers());
    EXPECT_EQ(scope.NumFallbacks(), 0);
    EXPECT_FALSE(scope.Mismatched());
  }
  const CuMemoryPlans::Counters c = plans.GetCounters("frames=64");
  EXPECT_EQ(c.scopes, 3);
  EXPECT_EQ(c.served, 3 * plan.NumBuffers());
  EXPECT_EQ(c.mismatched_scopes, 0);
  EXPECT_EQ(allocator->GetStats().in_use_bytes, 0u);
}

TEST(CuPlannedScopeTest, ASizeMismatchFallsBackToTheCachingAllocator) {
  auto allocator = HostAllocator();
  CuMemoryPlans plans;
  RecordIteration(&plans, "k", allocator.get(), 2);
  const int64 n = plans.Find("k")->NumBuffers();
  CuPlannedScope scope(&plans, "k", allocator.get());
  // The 20th allocation is one alignment unit larger than planned.
  EXPECT_EQ(RunIteration(&scope, 2, 20, 256), 0);
  EXPECT_TRUE(scope.Mismatched());
  EXPECT_GT(scope.NumServed(), 0);
  EXPECT_LE(scope.NumServed(), 20);
  EXPECT_EQ(scope.NumServed() + scope.NumFallbacks(), n);
}

TEST(CuPlannedScopeTest, AFreeOutOfOrderEndsThePlanSafely) {
  auto allocator = HostAllocator();
  CuMemoryPlans plans;
  auto iteration = [&](CuPlannedScope* s, bool swap) {
    Live a{static_cast<unsigned char*>(s->Malloc(1000)), 1000, 1};
    Live b{static_cast<unsigned char*>(s->Malloc(2000)), 2000, 2};
    std::memset(a.p, a.fill, a.bytes);
    std::memset(b.p, b.fill, b.bytes);
    s->Free(swap ? b.p : a.p);
    Live c{static_cast<unsigned char*>(s->Malloc(1000)), 1000, 3};  // planned into a's place
    std::memset(c.p, c.fill, c.bytes);
    const bool ok = Holds(swap ? a : b) && Holds(c);
    s->Free(swap ? a.p : b.p);
    s->Free(c.p);
    return ok;
  };
  {
    CuPlannedScope record(&plans, "k", allocator.get());
    EXPECT_TRUE(iteration(&record, false));
  }
  {
    CuPlannedScope replay(&plans, "k", allocator.get());
    EXPECT_TRUE(iteration(&replay, false));
    EXPECT_FALSE(replay.Mismatched());
  }
  // Freeing b first would let c land on a, which is still alive: the scope must notice at the
  // free and serve c elsewhere.
  CuPlannedScope replay(&plans, "k", allocator.get());
  EXPECT_TRUE(iteration(&replay, true));
  EXPECT_TRUE(replay.Mismatched());
  EXPECT_EQ(replay.NumFallbacks(), 1);
}

TEST(CuPlannedScopeTest, EachShapeKeyHasItsOwnPlan) {
  auto allocator = HostAllocator();
  CuMemoryPlans plans;
  const std::vector<uint64> shapes = {3, 4, 5};
  for (int round = 0; round < 3; ++round) {
    for (uint64 shape : shapes) {
      CuPlannedScope scope(&plans, "shape" + std::to_string(shape), allocator.get());
      EXPECT_EQ(scope.Recording(), round == 0);
      EXPECT_EQ(RunIteration(&scope, shape), 0);
      EXPECT_FALSE(scope.Mismatched()) << "shape " << shape << " round " << round;
    }
  }
  EXPECT_EQ(plans.NumPlans(), 3u);
  for (uint64 shape : shapes) {
    const CuMemoryPlans::Counters c = plans.GetCounters("shape" + std::to_string(shape));
    EXPECT_EQ(c.scopes, 2);
    EXPECT_EQ(c.fallbacks, 0);
  }
}

TEST(CuPlannedScopeTest, ReplayedPlanTakesOneBlockOfThePlansPeak) {
  auto allocator = HostAllocator();
  CuMemoryPlans plans;
  RecordIteration(&plans, "k", allocator.get(), 6);
  const size_t peak = plans.Find("k")->PeakBytes();
  const int64 mallocs_before = allocator->GetStats().num_mallocs;
  CuPlannedScope scope(&plans, "k", allocator.get());
  EXPECT_EQ(RunIteration(&scope, 6), 0);
  // One Malloc for the block (plus the lead of one alignment unit); nothing per allocation. The
  // caching allocator may hand out a block up to 1/8 larger than asked (it does not split off
  // less).
  EXPECT_EQ(allocator->GetStats().num_mallocs - mallocs_before, 1);
  EXPECT_GE(allocator->GetStats().in_use_bytes, peak);
  EXPECT_LE(allocator->GetStats().in_use_bytes, peak + peak / 8 + 2 * CuMemoryPlan::kAlignment);
}

TEST(CuPlannedScopeTest, NullPlansIsAnError) {
  auto allocator = HostAllocator();
  EXPECT_THROW(CuPlannedScope(nullptr, "k", allocator.get()), Error);
}

// ---- device mode (GPU) -------------------------------------------------------------------------

// An nnet-like step on the device: every op allocates its output.
template <typename Real>
void DeviceStep(const CuMatrix<Real>& x, const CuMatrix<Real>& w, CuMatrix<Real>* out) {
  CuMatrix<Real> z(x.NumRows(), w.NumRows(), kUndefined);
  z.AddMatMat(1.0, x, kNoTrans, w, kTrans, 0.0);
  CuMatrix<Real> a(z.NumRows(), z.NumCols(), kUndefined);
  a.Sigmoid(z);
  CuMatrix<Real> d(a);
  d.MulElements(a);
  out->Resize(d.NumRows(), d.NumCols(), kUndefined);
  out->CopyFromMat(d);
}

TEST(CuPlannedScopeTest, DeviceStepsAreServedFromThePlanWithEqualResults) {
  CUCTX_REQUIRE_GPU();
  CuMatrix<float> x(64, 256), w(512, 256);
  x.SetRandn();
  w.SetRandn();
  CuMatrix<float> eager;
  DeviceStep(x, w, &eager);
  CuMemoryPlans plans;
  for (int rep = 0; rep < 3; ++rep) {
    CuMatrix<float> out;
    int64 served = 0;
    {
      CuPlannedScope scope(&plans, "64x256");
      DeviceStep(x, w, &out);
      served = scope.NumServed();
      EXPECT_FALSE(scope.Mismatched());
      EXPECT_EQ(scope.Recording(), rep == 0);
    }
    if (rep > 0) {
      EXPECT_GT(served, 0);
    }
    // `out` was allocated in the scope and outlives it: it stays valid and equal to eager.
    Matrix<float> a(eager.NumRows(), eager.NumCols()), b(out.NumRows(), out.NumCols());
    eager.CopyToMat(&a);
    out.CopyToMat(&b);
    EXPECT_TRUE(a.ApproxEqual(b, 0.0f)) << "rep " << rep;
  }
}

}  // namespace
}  // namespace cuctx
