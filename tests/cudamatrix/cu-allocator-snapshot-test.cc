// tests/cudamatrix/cu-allocator-snapshot-test.cc: CuMemoryAllocator's memory snapshots in
// PyTorch's format: segments and blocks of every region kind, the history as the device trace,
// the snapshot written on OutOfMemoryError, and the pickle read back by Python.
// SPDX-License-Identifier: Apache-2.0
//
// Runs without a GPU, over HostAllocatorUpstream (plain regions, VMM-like expandable regions,
// pass-through). Every snapshot written is checked by tests/check-memory-snapshot.py with Python's
// own pickle module (schema, tiling, and the trace replayed backwards against the segments, as
// PyTorch's viewer does); without python3 those checks are skipped, saying so.
#include "base/pickle-writer.h"
#include "cudamatrix/cu-allocator-async.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-memory-snapshot.h"
#include "cudamatrix/cu-pinned.h"
#include "cutool/host-allocator-upstream.h"
#include "tests/cudamatrix/cu-allocator-testing.h"
#include "tests/cudamatrix/cu-memory-snapshot-testing.h"
#include "tests/testing.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cuctx {
namespace {

using test::HostAllocatorUpstream;
using test::kKiB;
using test::kMiB;

using test::HavePython;
using test::PythonAccepts;

std::string TempPath(const std::string& name) { return test::SnapshotTempPath(name); }

CuAllocatorOptions WithHistory(CuAllocatorOptions o, int events = 10000) {
  o.history_events = events;
  return o;
}

// Sums of one snapshot by state, and a check that every segment's blocks tile it.
struct Tally {
  size_t segments = 0, active_blocks = 0, active_bytes = 0, inactive_bytes = 0, total = 0;
};
Tally TallyOf(const MemorySnapshot& s) {
  Tally t;
  for (const SnapshotSegment& seg : s.segments) {
    ++t.segments;
    uint64 addr = seg.address;
    for (const SnapshotBlock& b : seg.blocks) {
      EXPECT_EQ(b.address, addr) << "blocks must tile the segment";
      addr += b.size;
      if (b.state == "active_allocated") {
        ++t.active_blocks;
        t.active_bytes += b.size;
      } else {
        EXPECT_EQ(b.state, "inactive");
        t.inactive_bytes += b.size;
      }
    }
    EXPECT_EQ(addr - seg.address, seg.total_size);
    t.total += seg.total_size;
  }
  return t;
}

TEST(PickleWriterTest, PythonReadsEveryValueKind) {
  const std::string path = TempPath("values");
  {
    std::ofstream os(path, std::ios::binary);
    PickleWriter w(&os);
    w.BeginDict();
    w.Str("ints");
    w.BeginList();
    for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{2147483647}, int64_t{2147483648},
                      int64_t{-2147483649LL}, int64_t{INT64_MIN}, int64_t{INT64_MAX}})
      w.Int(v);
    w.UInt(UINT64_MAX);
    w.EndList();
    w.Str("float");
    w.Float(0.15625);
    w.Str("flags");
    w.BeginList();
    w.Bool(true);
    w.Bool(false);
    w.None();
    w.EndList();
    w.Str("pair");
    w.Int(3);
    w.Int(4);
    w.Tuple2();
    w.Str("text \xc3\xa9");
    w.Str("");
    w.Str("empty");
    w.BeginDict();
    w.EndDict();
    w.EndDict();
    w.Finish();
  }
  if (!HavePython()) GTEST_SKIP() << "python3 not found";
  const std::string cmd =
      "python3 -c \"import pickle,sys; d=pickle.load(open(sys.argv[1],'rb')); "
      "assert d=={'ints':[0,-1,2**31-1,2**31,-2**31-1,-2**63,2**63-1,2**64-1],'float':0.15625,"
      "'flags':[True,False,None],'pair':(3,4),'text \\u00e9':'','empty':{}}, d\" '" +
      path + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::remove(path.c_str());
}

TEST(PickleWriterTest, FinishRefusesUnbalancedOrMissingValues) {
  test::QuietLog quiet;
  std::ostringstream os;
  PickleWriter open(&os);
  open.BeginList();
  EXPECT_TRUE(test::ThrowsWith([&] { open.Finish(); }, "still open"));
  PickleWriter two(&os);
  two.Int(1);
  two.Int(2);
  EXPECT_TRUE(test::ThrowsWith([&] { two.Finish(); }, "expected exactly 1"));
  PickleWriter wrong(&os);
  wrong.BeginDict();
  EXPECT_TRUE(test::ThrowsWith([&] { wrong.EndList(); }, "EndList without BeginList"));
}

TEST(CuAllocatorSnapshotTest, RegionsBlocksAndHistory) {
  auto upstream = std::make_unique<HostAllocatorUpstream>(64 * kMiB);
  HostAllocatorUpstream& up = *upstream;
  CuMemoryAllocator a(WithHistory(test::OnDemand()), std::move(upstream));
  std::vector<void*> live;
  for (size_t bytes : {1000 * size_t{1}, 300 * kKiB, 2 * kMiB + 5, 700 * kKiB})
    live.push_back(a.Malloc(bytes));
  size_t pitch = 0;
  live.push_back(a.MallocPitch(1000, 3, &pitch));
  a.Free(live[1]);
  a.Free(live[3]);
  const MemorySnapshot s = a.Snapshot();
  const Tally t = TallyOf(s);
  const CuAllocatorStats st = a.GetStats();
  EXPECT_EQ(t.segments, static_cast<size_t>(st.num_regions));
  EXPECT_EQ(t.total, st.held_bytes);
  EXPECT_EQ(t.total, up.HeldBytes());
  EXPECT_EQ(t.active_blocks, 3u);
  EXPECT_EQ(t.active_bytes, st.in_use_bytes);
  // Requests as asked, blocks as rounded; frames are off by default.
  std::map<uint64, const SnapshotBlock*> by_addr;
  for (const SnapshotSegment& seg : s.segments) {
    EXPECT_EQ(seg.kind, "region");
    EXPECT_FALSE(seg.is_expandable);
    for (const SnapshotBlock& b : seg.blocks) by_addr[b.address] = &b;
  }
  const SnapshotBlock* first = by_addr[reinterpret_cast<uintptr_t>(live[0])];
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->requested_size, 1000u);
  EXPECT_EQ(first->size, 1024u);
  EXPECT_EQ(by_addr[reinterpret_cast<uintptr_t>(live[4])]->requested_size, 3000u);
  // The trace: segment_alloc before the first alloc in it, each Free as a requested/completed
  // pair, and the snapshot event last.
  ASSERT_EQ(s.device_traces.size(), 1u);
  const std::vector<SnapshotEvent>& trace = s.device_traces[0];
  std::map<std::string, int> count;
  for (const SnapshotEvent& e : trace) ++count[e.action];
  EXPECT_EQ(count["alloc"], 5);
  EXPECT_EQ(count["free_requested"], 2);
  EXPECT_EQ(count["free_completed"], 2);
  EXPECT_EQ(count["segment_alloc"], static_cast<int>(st.num_upstream_allocs));
  EXPECT_EQ(trace.front().action, "segment_alloc");
  EXPECT_EQ(trace.back().action, "snapshot");
  const std::string path = TempPath("regions");
  a.WriteSnapshot(path);
  EXPECT_TRUE(PythonAccepts(path, "--expect-events --expect-active --expect-kind region"));
  // Everything freed and given back: the trace ends with the segments freed.
  a.Free(live[0]);
  a.Free(live[2]);
  a.Free(live[4]);
  EXPECT_GT(a.ReleaseCachedMemory(), 0u);
  const MemorySnapshot empty = a.Snapshot();
  EXPECT_TRUE(empty.segments.empty());
  int segment_frees = 0;
  for (const SnapshotEvent& e : empty.device_traces[0]) segment_frees += e.action == "segment_free";
  EXPECT_EQ(segment_frees, static_cast<int>(st.num_upstream_allocs));
  a.WriteSnapshot(path);
  EXPECT_TRUE(PythonAccepts(path, "--expect-events"));
  std::remove(path.c_str());
}

TEST(CuAllocatorSnapshotTest, ExpandableRegionsAreMappedRuns) {
  auto upstream = std::make_unique<HostAllocatorUpstream>(64 * kMiB, 2 * kMiB);
  CuAllocatorOptions o = WithHistory(test::OnDemand());
  o.region_quantum_mb = 2;
  CuMemoryAllocator a(o, std::move(upstream));
  std::vector<void*> live;
  for (int i = 0; i < 6; ++i) live.push_back(a.Malloc((i + 1) * 700 * kKiB));
  for (int i = 0; i < 6; i += 2) a.Free(live[i]);
  a.ReleaseCachedMemory();  // unmaps the whole free granules between the live blocks
  const MemorySnapshot s = a.Snapshot();
  const Tally t = TallyOf(s);
  const CuAllocatorStats st = a.GetStats();
  EXPECT_EQ(t.total, st.held_bytes);  // mapped bytes only
  EXPECT_EQ(t.active_blocks, 3u);
  for (const SnapshotSegment& seg : s.segments) {
    EXPECT_TRUE(seg.is_expandable);
    EXPECT_EQ(seg.kind, "expandable");
  }
  std::map<std::string, int> count;
  for (const SnapshotEvent& e : s.device_traces[0]) ++count[e.action];
  EXPECT_GT(count["segment_map"], 0);
  EXPECT_EQ(count["segment_unmap"], static_cast<int>(st.num_upstream_unmaps));
  const std::string path = TempPath("expandable");
  a.WriteSnapshot(path);
  EXPECT_TRUE(PythonAccepts(path, "--expect-events --expect-active --expect-kind expandable"));
  for (int i = 1; i < 6; i += 2) a.Free(live[i]);
  std::remove(path.c_str());
}

TEST(CuAllocatorSnapshotTest, PassThroughBlocksAreSegments) {
  CuAllocatorOptions o = WithHistory(test::OnDemand());
  o.cache_memory = false;
  CuMemoryAllocator a(o, std::make_unique<HostAllocatorUpstream>(16 * kMiB));
  void* p = a.Malloc(5000);
  void* q = a.Malloc(kMiB);
  a.Free(p);
  const MemorySnapshot s = a.Snapshot();
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.segments[0].kind, "direct");
  EXPECT_EQ(s.segments[0].blocks.size(), 1u);
  EXPECT_EQ(s.segments[0].blocks[0].requested_size, kMiB);
  const std::string path = TempPath("direct");
  a.WriteSnapshot(path);
  EXPECT_TRUE(PythonAccepts(path, "--expect-events --expect-active --expect-kind direct"));
  a.Free(q);
  std::remove(path.c_str());
}

TEST(CuAllocatorSnapshotTest, OutOfMemoryWritesASnapshotWithTheOomEvent) {
  for (int history : {0, 1000}) {
    SCOPED_TRACE(history);
    const std::string path = TempPath("oom");
    std::remove(path.c_str());
    CuAllocatorOptions o = WithHistory(test::OnDemand(), history);
    o.snapshot_on_oom = path;
    CuMemoryAllocator a(o, std::make_unique<HostAllocatorUpstream>(4 * kMiB));
    void* p = a.Malloc(3 * kMiB);
    {
      test::QuietLog quiet;
      EXPECT_THROW(a.Malloc(2 * kMiB), OutOfMemoryError);
    }
    EXPECT_EQ(a.GetStats().num_oom_errors, 1);
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in.good()) << "no snapshot at " << path;
    EXPECT_TRUE(PythonAccepts(path, "--expect-oom --expect-active --expect-kind region"));
    a.Free(p);
    std::remove(path.c_str());
  }
}

TEST(CuAllocatorSnapshotTest, OutOfMemorySnapshotFailureKeepsTheOutOfMemoryError) {
  CuAllocatorOptions o = test::OnDemand();
  o.snapshot_on_oom = "/nonexistent-dir/cuctx/oom.pickle";
  CuMemoryAllocator a(o, std::make_unique<HostAllocatorUpstream>(kMiB));
  test::QuietLog quiet;
  EXPECT_THROW(a.Malloc(2 * kMiB), OutOfMemoryError);
  EXPECT_EQ(a.Malloc(0), nullptr);
}

TEST(CuAllocatorSnapshotTest, ParkedBlocksAreInactive) {
  CuAllocatorOptions o = test::OnDemand();
  o.thread_cache_mb = 16;  // no history: the thread caches stay on
  CuMemoryAllocator a(o, std::make_unique<HostAllocatorUpstream>(64 * kMiB));
  a.AllowMultithreading();
  void* kept = a.Malloc(64 * kKiB);
  void* parked = a.Malloc(64 * kKiB);
  a.Free(parked);  // parked in this thread's cache: in use for the pools, free for the program
  ASSERT_EQ(a.GetStats().num_cached_blocks, 1);
  const MemorySnapshot s = a.Snapshot();
  const Tally t = TallyOf(s);
  EXPECT_EQ(t.active_blocks, 1u);
  EXPECT_EQ(t.active_bytes, 64 * kKiB);
  EXPECT_TRUE(s.device_traces.empty() || s.device_traces[0].empty());
  const std::string path = TempPath("parked");
  a.WriteSnapshot(path);
  EXPECT_TRUE(PythonAccepts(path, "--expect-active"));
  a.Free(kept);
  std::remove(path.c_str());
}

TEST(CuAllocatorSnapshotTest, FramesAndLabels) {
  CuAllocatorOptions o = WithHistory(test::OnDemand());
  o.history_frames = 8;
  CuMemoryAllocator a(o, std::make_unique<HostAllocatorUpstream>(16 * kMiB));
  a.SetSnapshotLabel(2, 7, "graph_pool_private", 0, "graph pool 7 (a test's)");
  void* p = a.Malloc(kKiB);
  const MemorySnapshot s = a.Snapshot();
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.segments[0].device, 2);
  EXPECT_EQ(s.segments[0].pool_id, 7);
  EXPECT_EQ(s.segments[0].pool_id_shared, 0);
  EXPECT_EQ(s.segments[0].kind, "graph_pool_private");
  ASSERT_EQ(s.segments[0].frames.size(), 1u);  // the mark
  EXPECT_EQ(s.segments[0].frames[0].filename, "cuctx");
  EXPECT_EQ(s.segments[0].frames[0].name, "graph pool 7 (a test's)");
  ASSERT_EQ(s.device_traces.size(), 3u);  // devices 0 and 1 have empty traces
  EXPECT_TRUE(s.device_traces[0].empty());
  const SnapshotBlock& b = s.segments[0].blocks[0];
  EXPECT_EQ(b.state, "active_allocated");
  ASSERT_GE(b.frames.size(), 2u);  // the mark, then the caller frames
  EXPECT_LE(b.frames.size(), 1u + 8u);
  EXPECT_EQ(b.frames[0].name, "graph pool 7 (a test's)");
  for (const SnapshotFrame& f : b.frames) EXPECT_FALSE(f.name.empty());
  for (const SnapshotEvent& e : s.device_traces[2])
    if (e.action == "alloc") {
      EXPECT_EQ(e.frames.at(0).name, "graph pool 7 (a test's)");
    }
  const std::string path = TempPath("frames");
  a.WriteSnapshot(path);
  EXPECT_TRUE(PythonAccepts(
      path, "--expect-events --expect-kind graph_pool_private --expect-mark 'graph pool 7'"));
  a.Free(p);
  std::remove(path.c_str());
  test::QuietLog quiet;
  EXPECT_TRUE(test::ThrowsWith([&] { a.SetSnapshotLabel(-1, 0, ""); }, "not a device index"));
}

TEST(CuAllocatorSnapshotTest, HistoryKeepsTheLastEventsOnly) {
  CuMemoryAllocator a(WithHistory(test::OnDemand(), 50),
                      std::make_unique<HostAllocatorUpstream>(16 * kMiB));
  for (int i = 0; i < 200; ++i) a.Free(a.Malloc(static_cast<size_t>(i + 1) * kKiB));
  void* p = a.Malloc(3 * kKiB);
  const MemorySnapshot s = a.Snapshot();
  EXPECT_EQ(s.device_traces[0].size(), 50u);
  const std::string path = TempPath("window");
  a.WriteSnapshot(path);
  // A window of the trace still replays against the segments.
  EXPECT_TRUE(PythonAccepts(path, "--expect-events --expect-active"));
  a.Free(p);
  std::remove(path.c_str());
}

TEST(CuAllocatorSnapshotTest, PinnedHostBlocksJoinASnapshot) {
  PinnedHostAllocator pinned(-1);  // the no-GPU allocator: same blocks, ordinary memory
  void* used = pinned.Allocate(5000);
  void* cached = pinned.Allocate(3 * kMiB);
  pinned.Free(cached);
  CuMemoryAllocator a(WithHistory(test::OnDemand()),
                      std::make_unique<HostAllocatorUpstream>(16 * kMiB));
  void* p = a.Malloc(kMiB);
  MemorySnapshot s = a.Snapshot();
  pinned.AppendSnapshot(1, &s);
  int pinned_segments = 0;
  for (const SnapshotSegment& seg : s.segments) {
    if (seg.kind != "pinned_host") continue;
    ++pinned_segments;
    EXPECT_EQ(seg.device, 1);
    EXPECT_EQ(seg.pool_id, -1);
    ASSERT_EQ(seg.blocks.size(), 1u);
    const SnapshotBlock& b = seg.blocks[0];
    if (b.address == reinterpret_cast<uintptr_t>(used)) {
      EXPECT_EQ(b.state, "active_allocated");
      EXPECT_EQ(b.requested_size, 5000u);
      EXPECT_EQ(b.size, PinnedHostAllocator::RoundUpSize(5000));
    } else {
      EXPECT_EQ(b.state, "inactive");
    }
  }
  EXPECT_EQ(pinned_segments, 2);
  const std::string path = TempPath("pinned");
  WriteMemorySnapshotFile(s, path);
  EXPECT_TRUE(
      PythonAccepts(path, "--expect-events --expect-kind pinned_host --expect-kind region"));
  a.Free(p);
  pinned.Free(used);
  std::remove(path.c_str());
}

// On the GPU (CUCTX_TEST_GPU=yes): snapshots of the device allocators, VMM and cudaMalloc
// regions, with a provoked out-of-memory; where PyTorch is installed the checker also runs its
// readers on them (tests/check-memory-snapshot.py).
TEST(CuAllocatorSnapshotTest, DeviceAllocatorSnapshots) {
  CUCTX_REQUIRE_GPU();
  CuDevice::Instantiate();
  for (const char* upstream : {"vmm", "cuda"}) {
    SCOPED_TRACE(upstream);
    const std::string oom_path = TempPath(std::string("device-oom-") + upstream);
    CuAllocatorOptions o = WithHistory(CuAllocatorOptions());
    o.upstream = upstream;
    o.region_quantum_mb = 2;
    o.history_frames = 4;
    o.snapshot_on_oom = oom_path;
    std::string note;
    std::unique_ptr<CuMemoryAllocator> a = NewDeviceMemoryAllocator(o, nullptr, &note);
    std::vector<void*> live;
    for (size_t bytes : {size_t{1000}, 3 * kMiB, 700 * kKiB, 40 * kMiB})
      live.push_back(a->Malloc(bytes));
    a->Free(live[1]);
    size_t free_bytes = 0, total_bytes = 0;
    a->Upstream().MemoryInfo(&free_bytes, &total_bytes);
    {
      test::QuietLog quiet;
      EXPECT_THROW(a->Malloc(2 * total_bytes), OutOfMemoryError);
    }
    const MemorySnapshot s = a->Snapshot();
    const Tally t = TallyOf(s);
    EXPECT_EQ(t.active_blocks, 3u);
    EXPECT_EQ(t.total, a->GetStats().held_bytes);
    const std::string kind =
        std::string(upstream) == "vmm" && note.empty() ? "expandable" : "region";
    const std::string path = TempPath(std::string("device-") + upstream);
    a->WriteSnapshot(path);
    EXPECT_TRUE(PythonAccepts(path, "--expect-events --expect-active --expect-kind " + kind));
    EXPECT_TRUE(PythonAccepts(oom_path, "--expect-events --expect-oom --expect-active"));
    for (size_t i = 0; i < live.size(); ++i)
      if (i != 1) a->Free(live[i]);
    std::remove(path.c_str());
    std::remove(oom_path.c_str());
  }
}

// A trace's final state: ReplayAllocatorTrace's at_end runs before the live pointers are freed.
TEST(CuAllocatorSnapshotTest, ReplaySnapshotShowsTheTraceEnd) {
  CuMemoryAllocator a(WithHistory(test::OnDemand()),
                      std::make_unique<HostAllocatorUpstream>(16 * kMiB));
  std::istringstream trace(
      "# cuctx-allocator-trace 1\nm 0 5000 1\nm 1 300000 2\nf 0 1\np 0 1000 3 3\n");
  MemorySnapshot s;
  const AllocatorReplayResult r = ReplayAllocatorTrace(trace, true, &a, [&] { s = a.Snapshot(); });
  EXPECT_EQ(r.num_freed_at_end, 2);
  EXPECT_EQ(a.GetAllocatedMemory(), 0u);  // freed after at_end
  const Tally t = TallyOf(s);
  EXPECT_EQ(t.active_blocks, 2u);
  std::map<uint64, int> streams;  // the two trace threads replayed on two threads
  for (const SnapshotEvent& e : s.device_traces[0])
    if (e.action == "alloc") ++streams[e.stream];
  EXPECT_EQ(streams.size(), 2u);
  const std::string path = TempPath("replay");
  WriteMemorySnapshotFile(s, path);
  EXPECT_TRUE(PythonAccepts(path, "--expect-events --expect-active"));
  std::remove(path.c_str());
}

TEST(CuAllocatorSnapshotTest, BadOptionsAreRefused) {
  test::QuietLog quiet;
  CuAllocatorOptions o;
  o.history_events = -1;
  EXPECT_TRUE(test::ThrowsWith([&] { o.Check(); }, "--cuda-allocator-history"));
  o.history_events = 10;
  o.history_frames = 61;
  EXPECT_TRUE(test::ThrowsWith([&] { o.Check(); }, "--cuda-allocator-history-frames"));
}

}  // namespace
}  // namespace cuctx
