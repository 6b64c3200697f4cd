// tests/cudamatrix/cu-device-snapshot-test.cc: one memory snapshot of several allocators
// (cu-device-snapshot.h): graph pools, planned scopes and graph memory nodes marked as
// cu-memory-snapshot.h maps them, and the events of all allocators merged into one trace that
// PyTorch's viewer replays against the segments (checked by tests/check-memory-snapshot.py).
// SPDX-License-Identifier: Apache-2.0
//
// Without a GPU the pieces run over HostAllocatorUpstream (a graph pool is a caching allocator of
// its own, labelled as CapturePool labels its allocator); with one (CUCTX_TEST_GPU=yes) the
// device's snapshot holds real CuGraphPool, private, foreign-capture and graph-node memory.
#include "cudamatrix/cu-device-snapshot.h"

#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-memory-snapshot.h"
#include "cudamatrix/cu-planned-scope.h"
#include "cudamatrix/internal/cu-alloc-scope.h"
#include "cutool/host-allocator-upstream.h"
#include "tests/cudamatrix/cu-allocator-testing.h"
#include "tests/cudamatrix/cu-memory-snapshot-testing.h"
#include "tests/testing.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#if CUCTX_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

using test::HostAllocatorUpstream;
using test::kKiB;
using test::kMiB;
using test::PythonAccepts;

CuAllocatorOptions WithHistory() {
  CuAllocatorOptions o = test::OnDemand();
  o.history_events = 10000;
  return o;
}

bool Marked(const std::vector<SnapshotFrame>& frames, const std::string& text) {
  return !frames.empty() && frames[0].filename == "cuctx" && frames[0].line == 0 &&
         frames[0].name.find(text) != std::string::npos;
}

TEST(DeviceSnapshotTest, OrderTracesSortsBySequenceAndKeepsTimeMonotonic) {
  MemorySnapshot s;
  std::vector<SnapshotEvent>& t = s.Trace(0);
  for (uint64 seq : {3u, 1u, 2u}) {
    SnapshotEvent e;
    e.action = "snapshot";
    e.seq = seq;
    e.time_us = 100 - static_cast<int64>(seq);  // recorded in seq order, clocks read the other way
    t.push_back(e);
  }
  s.OrderTraces();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].seq, 1u);
  EXPECT_EQ(t[1].seq, 2u);
  EXPECT_EQ(t[2].seq, 3u);
  EXPECT_EQ(t[0].time_us, 99);
  EXPECT_EQ(t[1].time_us, 99);  // raised to its predecessor's
  EXPECT_EQ(t[2].time_us, 99);
}

// A graph pool beside the main pool: its segments and blocks carry its pool id and mark, and its
// events join the main pool's in the order they happened.
TEST(DeviceSnapshotTest, EventsOfSeveralAllocatorsMergeInOrder) {
  CuMemoryAllocator main(WithHistory(), std::make_unique<HostAllocatorUpstream>(16 * kMiB));
  CuMemoryAllocator pool(WithHistory(), std::make_unique<HostAllocatorUpstream>(16 * kMiB));
  pool.SetSnapshotLabel(0, 0, "graph_pool_shared", 5, "graph pool 5 (a CuGraphPool)");
  std::vector<void*> order;  // allocations in the order made, alternating allocators
  void* a1 = main.Malloc(10 * kKiB);
  void* b1 = pool.Malloc(20 * kKiB);
  void* a2 = main.Malloc(30 * kKiB);
  void* b2 = pool.Malloc(40 * kKiB);
  main.Free(a1);
  pool.Free(b1);
  MemorySnapshot s = main.Snapshot();
  pool.AppendSnapshot(&s);
  s.OrderTraces();
  std::vector<void*> allocs;
  uint64 last_seq = 0;
  int64 last_time = 0;
  for (const SnapshotEvent& e : s.device_traces.at(0)) {
    EXPECT_GT(e.seq, last_seq);
    EXPECT_GE(e.time_us, last_time);
    last_seq = e.seq;
    last_time = e.time_us;
    if (e.action == "alloc") allocs.push_back(reinterpret_cast<void*>(e.addr));
    const bool of_pool =
        e.addr == reinterpret_cast<uintptr_t>(b1) || e.addr == reinterpret_cast<uintptr_t>(b2);
    if (e.action == "alloc" || e.action == "free_completed") {
      EXPECT_EQ(Marked(e.frames, "graph pool 5"), of_pool);
    }
  }
  EXPECT_EQ(allocs, (std::vector<void*>{a1, b1, a2, b2}));
  int pool_segments = 0;
  for (const SnapshotSegment& seg : s.segments) {
    if (seg.kind != "graph_pool_shared") {
      EXPECT_EQ(seg.pool_id, 0);
      EXPECT_EQ(seg.pool_id_shared, 0);
      continue;
    }
    ++pool_segments;
    EXPECT_EQ(seg.pool_id, 0);
    EXPECT_EQ(seg.pool_id_shared, 5);
    EXPECT_TRUE(Marked(seg.frames, "graph pool 5"));
    for (const SnapshotBlock& b : seg.blocks)
      if (b.state == "active_allocated") {
        EXPECT_TRUE(Marked(b.frames, "graph pool 5"));
      }
  }
  EXPECT_EQ(pool_segments, 1);
  const std::string path = test::SnapshotTempPath("merged");
  WriteMemorySnapshotFile(s, path);
  EXPECT_TRUE(PythonAccepts(path,
                            "--expect-events --expect-active --expect-kind graph_pool_shared "
                            "--expect-kind region --expect-mark 'graph pool 5'"));
  main.Free(a2);
  pool.Free(b2);
  std::remove(path.c_str());
}

// A scoped-memory owner (what a graph pool is) adds its segments to the snapshots of its device.
class FakePoolOwner : public internal::ScopedMemoryOwner {
 public:
  FakePoolOwner() : allocator(WithHistory(), std::make_unique<HostAllocatorUpstream>(8 * kMiB)) {
    allocator.SetSnapshotLabel(0, 9, "graph_pool_foreign", 0, "graph pool 9 (a foreign capture)");
  }
  bool FreeIfOwned(void*) override { return false; }
  bool Unused() override { return true; }
  void AppendSnapshot(int device, MemorySnapshot* out) override {
    if (device == 0) allocator.AppendSnapshot(out);
  }
  CuMemoryAllocator allocator;
};

TEST(DeviceSnapshotTest, GraphPoolsOfTheDeviceJoinItsSnapshot) {
  CuMemoryAllocator main(WithHistory(), std::make_unique<HostAllocatorUpstream>(16 * kMiB));
  void* m = main.Malloc(kMiB);
  auto owner = std::make_shared<FakePoolOwner>();
  void* p = owner->allocator.Malloc(100 * kKiB);
  internal::RegisterScopedMemoryOwner(owner);
  auto kinds = [](const MemorySnapshot& s) {
    std::multiset<std::string> k;
    for (const SnapshotSegment& seg : s.segments) k.insert(seg.kind);
    return k;
  };
  const MemorySnapshot with = AllocatorAndPoolsSnapshot(&main, 0);
  EXPECT_EQ(kinds(with).count("graph_pool_foreign"), 1u);
  EXPECT_EQ(kinds(AllocatorAndPoolsSnapshot(&main, 1)).count("graph_pool_foreign"), 0u);
  EXPECT_EQ(kinds(AllocatorAndPoolsSnapshot(&main, 0, false)).count("graph_pool_foreign"), 0u);
  size_t snapshots = 0;
  for (const SnapshotEvent& e : with.device_traces.at(0)) snapshots += e.action == "snapshot";
  EXPECT_EQ(snapshots, 1u);  // the main pool's; the graph pools add none
  const std::string path = test::SnapshotTempPath("owners");
  WriteMemorySnapshotFile(with, path);
  EXPECT_TRUE(PythonAccepts(
      path, "--expect-events --expect-kind graph_pool_foreign --expect-mark 'graph pool 9'"));
  internal::RetireScopedMemoryOwner(owner.get());
  owner->allocator.Free(p);
  main.Free(m);
  std::remove(path.c_str());
  test::QuietLog quiet;
  EXPECT_TRUE(test::ThrowsWith([&] { AllocatorAndPoolsSnapshot(nullptr, 0); }, "allocator"));
  EXPECT_TRUE(test::ThrowsWith([&] { AllocatorAndPoolsSnapshot(&main, -1); }, "device -1"));
}

// A planned scope's block is one block of the allocator, marked planned_scope, and so are its
// alloc and free events.
TEST(DeviceSnapshotTest, PlannedScopeBlockIsMarked) {
  CuMemoryAllocator a(WithHistory(), std::make_unique<HostAllocatorUpstream>(16 * kMiB));
  CuMemoryPlans plans;
  auto iteration = [&](CuPlannedScope* scope, MemorySnapshot* inside) {
    void* x = scope->Malloc(1000);
    void* y = scope->Malloc(50 * kKiB);
    scope->Free(x);
    if (inside != nullptr) *inside = a.Snapshot();
    scope->Free(y);
  };
  {
    CuPlannedScope recording(&plans, "k", &a);
    iteration(&recording, nullptr);
  }
  MemorySnapshot inside;
  {
    CuPlannedScope replay(&plans, "k", &a);
    ASSERT_FALSE(replay.Recording());
    iteration(&replay, &inside);
    EXPECT_EQ(replay.NumServed(), 2);
  }
  int marked = 0;
  for (const SnapshotSegment& seg : inside.segments)
    for (const SnapshotBlock& b : seg.blocks)
      if (b.kind == "planned_scope") {
        ++marked;
        EXPECT_EQ(b.state, "active_allocated");
        EXPECT_TRUE(Marked(b.frames, "CuPlannedScope block"));
      }
  EXPECT_EQ(marked, 1);  // the block, not its planned buffers
  const MemorySnapshot after = a.Snapshot();
  int marked_events = 0;
  for (const SnapshotEvent& e : after.device_traces.at(0))
    if (Marked(e.frames, "CuPlannedScope block")) ++marked_events;
  EXPECT_EQ(marked_events, 3);  // its alloc, free_requested and free_completed
  const std::string path = test::SnapshotTempPath("planned");
  WriteMemorySnapshotFile(inside, path);
  EXPECT_TRUE(PythonAccepts(path,
                            "--expect-events --expect-active --expect-kind planned_scope "
                            "--expect-mark 'CuPlannedScope block'"));
  std::remove(path.c_str());
}

TEST(DeviceSnapshotTest, GraphNodesSummarySegment) {
  MemorySnapshot s;
  AppendGraphNodesSegment(1, 3 * kMiB, 8 * kMiB, &s);
  AppendGraphNodesSegment(0, 0, 0, &s);  // no graph memory: nothing
  ASSERT_EQ(s.segments.size(), 1u);
  const SnapshotSegment& seg = s.segments[0];
  EXPECT_EQ(seg.kind, "graph_nodes");
  EXPECT_EQ(seg.device, 1);
  EXPECT_EQ(seg.pool_id, -2);
  EXPECT_EQ(seg.address, (uint64{1} << 52) + (uint64{1} << 44));
  EXPECT_EQ(seg.total_size, 8 * kMiB);
  ASSERT_EQ(seg.blocks.size(), 2u);
  EXPECT_EQ(seg.blocks[0].state, "active_allocated");
  EXPECT_EQ(seg.blocks[0].size, 3 * kMiB);
  EXPECT_EQ(seg.blocks[1].state, "inactive");
  EXPECT_EQ(seg.blocks[1].address, seg.address + 3 * kMiB);
  EXPECT_TRUE(Marked(seg.frames, "graph memory nodes of device 1"));
  ASSERT_EQ(s.device_traces.size(), 2u);
  MemorySnapshot clamped;
  AppendGraphNodesSegment(0, 9 * kMiB, 2 * kMiB, &clamped);  // used beyond reserved: all used
  ASSERT_EQ(clamped.segments.at(0).blocks.size(), 1u);
  EXPECT_EQ(clamped.segments[0].blocks[0].size, 2 * kMiB);
  const std::string path = test::SnapshotTempPath("nodes");
  WriteMemorySnapshotFile(s, path);
  EXPECT_TRUE(PythonAccepts(path, "--expect-active --expect-kind graph_nodes"));
  std::remove(path.c_str());
  test::QuietLog quiet;
  EXPECT_TRUE(test::ThrowsWith([&] { AppendGraphNodesSegment(-1, 1, 1, &s); }, "device -1"));
}

TEST(DeviceSnapshotTest, WithoutAGpuSaysWhatToUse) {
  if (CuDevice::Instantiate().Enabled()) GTEST_SKIP() << "a GPU is selected";
  test::QuietLog quiet;
  EXPECT_TRUE(test::ThrowsWith([] { DeviceMemorySnapshot(); }, "AllocatorAndPoolsSnapshot"));
}

// ---- on the GPU (CUCTX_TEST_GPU=yes) -----------------------------------------------------------

TEST(DeviceSnapshotTest, DeviceSnapshotMarksEveryGraphPool) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  CuDevice::Instantiate();
  // Graph pools copy the device's allocator options when they are made: with a history their
  // events join the device's trace.
  const int32 saved_history = CuDevice::AllocatorOptions().history_events;
  CuDevice::AllocatorOptions().history_events = 10000;
  {
    CuMatrix<float> x(16, 32), y_shared, y_private, y_nodes;
    x.SetRandn();
    auto body = [&](CuMatrix<float>* y) {
      return [&x, y] {
        y->Resize(16, 32, kUndefined);
        CuMatrix<float> t(16, 32, kUndefined);
        t.CopyFromMat(x);
        t.Scale(2.0f);
        y->CopyFromMat(t);
      };
    };
    CuGraphPool pool;
    CuGraph shared = CuGraph::Capture(body(&y_shared), pool);
    CuGraph own = CuGraph::Capture(body(&y_private), CuGraphMemory::kPrivatePool);
    CuGraph nodes = CuGraph::Capture(body(&y_nodes), CuGraphMemory::kNodes);
    for (CuGraph* g : {&shared, &own, &nodes}) g->Launch();
    // A capture begun outside cuctx: its allocations go to a foreign-capture pool.
    cudaGraph_t raw = nullptr;
    cudaGraphExec_t raw_exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal),
              cudaSuccess);
    {
      CuMatrix<float> t(8, 8, kUndefined);
      t.Set(1.0f);
    }
    ASSERT_EQ(cudaStreamEndCapture(cudaStreamPerThread, &raw), cudaSuccess);
    ASSERT_EQ(cudaGraphInstantiate(&raw_exec, raw, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(raw_exec, cudaStreamPerThread), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);

    const MemorySnapshot s = DeviceMemorySnapshot();
    std::map<std::string, int> kinds;
    for (const SnapshotSegment& seg : s.segments) {
      ++kinds[seg.kind];
      if (seg.kind == "graph_pool_shared") {
        EXPECT_EQ(seg.pool_id, 0);
        EXPECT_GT(seg.pool_id_shared, 0);
      } else if (seg.kind == "graph_pool_private" || seg.kind == "graph_pool_foreign") {
        EXPECT_GT(seg.pool_id, 0);
        EXPECT_EQ(seg.pool_id_shared, 0);
      }
      if (seg.kind.rfind("graph_", 0) == 0) {
        EXPECT_TRUE(Marked(seg.frames, "graph"));
      }
    }
    for (const auto& k : kinds)
      std::printf("  %d segment(s) of kind %s\n", k.second, k.first.c_str());
    EXPECT_GT(kinds["graph_pool_shared"], 0);
    EXPECT_GT(kinds["graph_pool_private"], 0);
    EXPECT_GT(kinds["graph_pool_foreign"], 0);
    if (CuGraph::DeviceGraphMemory().reserved > 0) {
      EXPECT_EQ(kinds["graph_nodes"], 1);
    }
    const std::string path = test::SnapshotTempPath("device-graphs");
    WriteMemorySnapshotFile(s, path);
    EXPECT_TRUE(PythonAccepts(path,
                              "--expect-events --expect-active --expect-kind graph_pool_shared "
                              "--expect-kind graph_pool_private --expect-kind graph_pool_foreign "
                              "--expect-mark 'graph pool'"));
    std::remove(path.c_str());
    ASSERT_EQ(cudaGraphExecDestroy(raw_exec), cudaSuccess);
    ASSERT_EQ(cudaGraphDestroy(raw), cudaSuccess);
  }
  CuGraph::ReleaseUnusedMemory();
  CuDevice::AllocatorOptions().history_events = saved_history;
#endif
}

}  // namespace
}  // namespace cuctx
