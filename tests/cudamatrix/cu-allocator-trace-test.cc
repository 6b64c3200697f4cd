// tests/cudamatrix/cu-allocator-trace-test.cc: CuMemoryAllocator's trace: recording every call and
// replaying it.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cutool/host-allocator-upstream.h"
#include "tests/cudamatrix/cu-allocator-testing.h"
#include "tests/testing.h"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

namespace cuctx {
namespace {

using test::Harness;
using test::HostAllocatorUpstream;
using test::kMiB;
using test::MakeHarness;
using test::OnDemand;

// ---- tracing and replay ------------------------------------------------------------------------

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Two simulated threads with plain, pitched and zero-byte requests and a cross-thread free.
void RecordWorkload(CuMemoryAllocator* a, HostAllocatorUpstream* up) {
  test::Rng rng = test::MakeRng(3);
  std::vector<void*> live;
  for (int i = 0; i < 400; ++i) {
    up->SimulateThread(1 + (i / 7) % 2);
    if (i % 50 == 25) a->NoteThreadStreamSynchronized();
    if (i % 100 == 60) a->SynchronizeGpu();
    const double u = rng.Uniform();
    if (live.empty() || u < 0.5) {
      size_t pitch = 0;
      if (u < 0.05)
        live.push_back(a->Malloc(0));
      else if (u < 0.15)
        live.push_back(a->MallocPitch(static_cast<size_t>(rng.Int(1, 3000)),
                                      static_cast<size_t>(rng.Int(1, 40)), &pitch));
      else
        live.push_back(a->Malloc(static_cast<size_t>(rng.Int(1, 100000))));
    } else {
      const size_t k = static_cast<size_t>(rng.Int(0, static_cast<int64_t>(live.size()) - 1));
      a->Free(live[k]);
      live.erase(live.begin() + k);
    }
  }
  up->SimulateThread(2);
  for (void* p : live) a->Free(p);
  up->SimulateThread(0);
}

TEST(CuMemoryAllocatorTest, TraceRecordsAndReplaysExactly) {
  const std::string dir = ::testing::TempDir();
  const std::string first = dir + "cu-allocator-test-trace-1.txt";
  const std::string second = dir + "cu-allocator-test-trace-2.txt";
  CuAllocatorOptions o = OnDemand();
  o.trace_file = first;
  CuAllocatorStats recorded;
  {
    Harness s = MakeHarness(256 * kMiB, o);
    RecordWorkload(s.allocator.get(), s.upstream);
    recorded = s.allocator->GetStats();
  }
  const std::string text = ReadFile(first);
  EXPECT_EQ(text.rfind("# cuctx-allocator-trace 1\n", 0), 0u) << text.substr(0, 80);
  EXPECT_NE(text.find("\nm 0 "), std::string::npos);
  EXPECT_NE(text.find("\np 1 "), std::string::npos);
  EXPECT_NE(text.find(" 0\n"), std::string::npos);  // a zero-byte request has pointer id 0
  EXPECT_NE(text.find("\nf 1 "), std::string::npos);
  EXPECT_NE(text.find("\nd "), std::string::npos);
  EXPECT_NE(text.find("\ns "), std::string::npos);

  // Threaded replay: same threads in the same order, so the replay's own trace is identical.
  o.trace_file = second;
  {
    Harness s = MakeHarness(256 * kMiB, o);
    const AllocatorReplayResult r = ReplayAllocatorTraceFile(first, true, s.allocator.get());
    EXPECT_EQ(r.num_threads, 2);
    EXPECT_EQ(r.num_freed_at_end, 0);
    EXPECT_EQ(r.num_frees, recorded.num_frees);
    const CuAllocatorStats st = s.allocator->GetStats();
    EXPECT_EQ(st.num_mallocs, recorded.num_mallocs);
    EXPECT_EQ(st.peak_in_use_bytes, recorded.peak_in_use_bytes);
    EXPECT_EQ(st.num_syncs, recorded.num_syncs);
    EXPECT_EQ(st.num_external_syncs, recorded.num_external_syncs);
    EXPECT_EQ(st.num_stream_sync_notes, recorded.num_stream_sync_notes);
  }
  EXPECT_EQ(ReadFile(second), text);

  // Serial replay: every request runs on the calling thread.
  Harness s = MakeHarness(256 * kMiB, OnDemand());
  std::istringstream in(text);
  const AllocatorReplayResult r = ReplayAllocatorTrace(in, false, s.allocator.get());
  EXPECT_EQ(r.num_frees, recorded.num_frees);
  EXPECT_EQ(s.allocator->GetStats().num_mallocs, recorded.num_mallocs);
  EXPECT_EQ(s.allocator->GetStats().num_syncs, 0);
  EXPECT_EQ(s.allocator->GetAllocatedMemory(), 0u);
  std::remove(first.c_str());
  std::remove(second.c_str());
}

TEST(CuMemoryAllocatorTest, ReplayFreesLeftoversAndRejectsMalformedTraces) {
  Harness s = MakeHarness(16 * kMiB, OnDemand());
  std::istringstream ok("# comment\nm 0 1000 1\np 1 300 2 2\nm 0 0 0\nd 1\nf 1 1\ns 0\n");
  const AllocatorReplayResult r = ReplayAllocatorTrace(ok, false, s.allocator.get());
  EXPECT_EQ(r.num_mallocs, 3);
  EXPECT_EQ(r.num_frees, 1);
  EXPECT_EQ(r.num_freed_at_end, 1);
  EXPECT_EQ(s.allocator->GetAllocatedMemory(), 0u);
  EXPECT_EQ(s.allocator->GetStats().num_external_syncs, 1);
  EXPECT_EQ(s.allocator->GetStats().num_stream_sync_notes, 1);
  for (const char* bad : {"m 0 1000 1\nf 0 2\n", "x 0 1\n", "m 0 1000\n", "m 0 1000 1\nm 0 5 1\n",
                          "m 0 0 3\n", "s\n"}) {
    std::istringstream in(bad);
    try {
      ReplayAllocatorTrace(in, false, s.allocator.get());
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("line"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(s.allocator->GetAllocatedMemory(), 0u);
  EXPECT_THROW(ReplayAllocatorTraceFile("/nonexistent/trace.txt", false, s.allocator.get()), Error);
}

}  // namespace
}  // namespace cuctx
