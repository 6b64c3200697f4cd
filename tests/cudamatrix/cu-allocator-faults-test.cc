// tests/cudamatrix/cu-allocator-faults-test.cc: failures injected into the allocator layer's
// device calls (cu-fault-injection.h): each surfaces as OutOfMemoryError or the call's own
// CudaError, nothing leaks, no block is handed out twice and later allocations succeed.
// SPDX-License-Identifier: Apache-2.0
//
// Without a GPU everything runs over HostAllocatorUpstream (plain regions and VMM-like
// expandable regions) and the no-GPU pinned allocator; with one (CUCTX_TEST_GPU=yes) the 8-thread
// stress repeats over the real device upstream (VMM, else cudaMalloc regions) with poison checks
// on device memory, and over the page-locked allocator with its events.
#include "base/error.h"
#include "cudamatrix/cu-allocator-async.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-fault-injection.h"
#include "cudamatrix/cu-pinned.h"
#include "cutool/alloc-stress.h"
#include "cutool/host-allocator-upstream.h"
#include "tests/cudamatrix/cu-allocator-testing.h"
#include "tests/testing.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

using test::HostAllocatorUpstream;
using test::kKiB;
using test::kMiB;

FaultInjectionOptions OneIn(int64 k, uint64 seed, const std::string& sites = "all") {
  FaultInjectionOptions o;
  o.one_in = k;
  o.seed = seed;
  o.sites = sites;
  return o;
}

FaultInjectionOptions Nth(int64 n, const std::string& sites = "all") {
  FaultInjectionOptions o;
  o.nth = n;
  o.sites = sites;
  return o;
}

// An allocator over a fault-injecting host upstream; `host` keeps a view of the host upstream.
struct Faulty {
  HostAllocatorUpstream* host = nullptr;
  std::unique_ptr<CuMemoryAllocator> allocator;
};

Faulty MakeFaulty(size_t capacity, size_t granularity, CuAllocatorOptions o) {
  auto host = std::make_unique<HostAllocatorUpstream>(capacity, granularity);
  Faulty f;
  f.host = host.get();
  f.allocator = std::make_unique<CuMemoryAllocator>(o, NewFaultInjectingUpstream(std::move(host)));
  return f;
}

void PrintResult(const char* what, const AllocStressResult& r) {
  std::printf(
      "  %s: %lld mallocs, %lld frees (%lld cross-thread), %lld Malloc failures (%lld out of "
      "memory), %lld other failures, %lld corruptions, %lld double hand-outs, %.2f s\n",
      what, static_cast<long long>(r.mallocs), static_cast<long long>(r.frees),
      static_cast<long long>(r.cross_thread_frees), static_cast<long long>(r.malloc_failures),
      static_cast<long long>(r.oom_errors), static_cast<long long>(r.other_failures),
      static_cast<long long>(r.corruptions), static_cast<long long>(r.double_handouts), r.seconds);
  for (const std::string& e : r.errors) std::printf("    error: %s\n", e.c_str());
}

TEST(FaultInjectionTest, ParsesTheEnvironmentFormat) {
  FaultInjectionOptions o = FaultInjectionOptions::Parse("one_in=50,seed=7,sites=device+vmm");
  EXPECT_EQ(o.one_in, 50);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_EQ(o.sites, "device+vmm");
  o = FaultInjectionOptions::Parse("nth=3;sites=stream");
  EXPECT_EQ(o.nth, 3);
  EXPECT_TRUE(o.Active());
  test::QuietLog quiet;
  EXPECT_TRUE(test::ThrowsWith([] { FaultInjectionOptions::Parse("one_in=x"); }, "integer"));
  EXPECT_TRUE(test::ThrowsWith([] { FaultInjectionOptions::Parse("often=3"); }, "unknown key"));
  EXPECT_TRUE(
      test::ThrowsWith([] { FaultInjectionOptions::Parse("nth=1,sites=disk"); }, "unknown site"));
  EXPECT_TRUE(test::ThrowsWith([] { FaultInjectionOptions::Parse("nth=1,one_in=2"); }, "both set"));
  EXPECT_TRUE(test::ThrowsWith([] { FaultInjectionOptions::Parse("nth=-1"); }, ">= 0"));
}

TEST(FaultInjectionTest, NthCallFailsOnceAndOneInKIsSeeded) {
  {
    ScopedFaultInjection scope(Nth(3, "device"));
    std::vector<bool> fails;
    for (int i = 0; i < 6; ++i) fails.push_back(FaultInjector::ShouldFail(FaultSite::kDevice));
    EXPECT_EQ(fails, std::vector<bool>({false, false, true, false, false, false}));
    EXPECT_FALSE(FaultInjector::ShouldFail(FaultSite::kVmm));  // not selected
    const FaultInjector::Counters c = FaultInjector::GetCounters();
    EXPECT_EQ(c.calls[static_cast<int>(FaultSite::kDevice)], 6);
    EXPECT_EQ(c.calls[static_cast<int>(FaultSite::kVmm)], 1);
    EXPECT_EQ(c.TotalFailures(), 1);
  }
  EXPECT_FALSE(FaultInjector::ShouldFail(FaultSite::kDevice));  // the scope restored "off"
  auto pattern = [](uint64 seed) {
    ScopedFaultInjection scope(OneIn(10, seed));
    std::vector<bool> fails;
    for (int i = 0; i < 2000; ++i) fails.push_back(FaultInjector::ShouldFail(FaultSite::kEvent));
    return fails;
  };
  const std::vector<bool> a = pattern(5), b = pattern(5), c = pattern(6);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const int64 failures = std::count(a.begin(), a.end(), true);
  EXPECT_GT(failures, 140);  // 200 expected
  EXPECT_LT(failures, 260);
}

TEST(FaultInjectionTest, InjectedErrorsNameTheCallAndSite) {
  test::QuietLog quiet;
  ScopedFaultInjection scope(Nth(1, "stream"));
  auto up = NewFaultInjectingUpstream(std::make_unique<HostAllocatorUpstream>(kMiB));
  try {
    up->SynchronizeAllStreams();
    FAIL() << "no error thrown";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(test::Contains(what, "injected fault")) << what;
    EXPECT_TRUE(test::Contains(what, "SynchronizeAllStreams")) << what;
    EXPECT_TRUE(test::Contains(what, "site stream, call #1")) << what;
  }
  EXPECT_NO_THROW(up->SynchronizeAllStreams());  // only the first call fails
}

// Every call number in turn fails once while a fixed sequence of allocations runs: each run ends
// in success or a CudaError, the allocator is left consistent (everything freed gives all memory
// back) and an allocation afterwards succeeds.
TEST(FaultInjectionTest, EveryCallOfASequenceMayFail) {
  test::QuietLog quiet;
  for (size_t granularity : {size_t{0}, 2 * kMiB}) {
    int64 injected = 0, surfaced = 0, calls = 0;
    for (int64 n = 0; n <= 60; ++n) {  // n = 0: no failure, the baseline
      SCOPED_TRACE(testing::Message() << "granularity " << granularity << ", call " << n);
      CuAllocatorOptions o = test::OnDemand();
      o.region_quantum_mb = 2;
      Faulty f = MakeFaulty(128 * kMiB, granularity, o);  // room for the sequence
      std::vector<void*> live;
      int64 errors = 0;
      {
        ScopedFaultInjection scope(Nth(n == 0 ? int64{1} << 40 : n));  // 0: counts only
        for (int i = 0; i < 30; ++i) {
          try {
            live.push_back(f.allocator->Malloc(static_cast<size_t>(i % 7 + 1) * 700 * kKiB));
            if (i % 2 == 1) {
              f.allocator->Free(live.front());
              live.erase(live.begin());
            }
            if (i % 4 == 3) f.allocator->SynchronizeGpu();
            if (i % 10 == 7) f.allocator->ReleaseCachedMemory();
          } catch (const CudaError&) {
            ++errors;
          }
        }
        EXPECT_LE(errors, n == 0 ? 0 : 1) << "one injected failure, at most one error";
        const FaultInjector::Counters c = FaultInjector::GetCounters();
        injected += c.TotalFailures();
        surfaced += errors;
        if (n == 0)
          for (int64 k : c.calls) calls += k;
      }
      for (void* p : live) f.allocator->Free(p);
      f.allocator->ReleaseCachedMemory();
      EXPECT_EQ(f.allocator->GetStats().in_use_bytes, 0u);
      EXPECT_EQ(f.host->HeldBytes(), 0u);
      EXPECT_EQ(f.host->MappedBytes(), 0u);
      EXPECT_EQ(f.host->NumContractViolations(), 0);
      void* p = f.allocator->Malloc(3 * kMiB);
      EXPECT_NE(p, nullptr);
      f.allocator->Free(p);
    }
    std::printf(
        "  granularity %zu: the sequence makes %lld device calls; %lld failed on "
        "purpose, %lld surfaced as errors (the others were recovered from)\n",
        granularity, static_cast<long long>(calls), static_cast<long long>(injected),
        static_cast<long long>(surfaced));
    // Run n fails call n if the run gets that far (a run with an earlier failure may make fewer).
    EXPECT_GE(injected, calls / 2);
  }
}

// Runs the stress with 1 in 50 of the calls at `sites` failing (seeded by the test's seed) and
// returns its result, with the injector's counters in *counters.
AllocStressResult StressOneIn50(CuMemoryAllocator* allocator, const AllocStressOptions& options,
                                const char* sites, FaultInjector::Counters* counters) {
  ScopedFaultInjection scope(OneIn(50, test::Seed(), sites));
  AllocStressResult result = RunAllocStress(allocator, options);
  *counters = FaultInjector::GetCounters();
  return result;
}

// The CI stress: 8 threads over the host upstream with 1 in 50 device, vmm and stream calls
// failing; poison patterns, cross-thread frees, the registry of live blocks; then everything
// freed and released gives the upstream's memory back (0 leaks) and allocation works again.
TEST(FaultInjectionTest, EightThreadStressOverHostUpstreamOneIn50) {
  test::QuietLog quiet;  // out-of-memory errors are expected
  for (size_t granularity : {size_t{0}, 2 * kMiB}) {
    SCOPED_TRACE(testing::Message() << "granularity " << granularity);
    CuAllocatorOptions o;
    o.memory_proportion = 0;
    o.region_quantum_mb = 2;
    Faulty f = MakeFaulty(24 * kMiB, granularity, o);  // tight: growth, release, real OOM
    AllocStressOptions so;
    so.threads = 8;
    so.steps_per_thread = 3000;
    so.max_bytes = 512 * kKiB;
    so.seed = test::Seed();
    so.release_every = 53;  // give memory back often, so that growth calls the upstream often
    FaultInjector::Counters c;
    const AllocStressResult r = StressOneIn50(f.allocator.get(), so, "device+vmm+stream", &c);
    PrintResult(granularity == 0 ? "regions" : "expandable", r);
    std::printf("    injected failures: %lld (device calls %lld, vmm %lld, stream %lld)\n",
                static_cast<long long>(c.TotalFailures()),
                static_cast<long long>(c.calls[static_cast<int>(FaultSite::kDevice)]),
                static_cast<long long>(c.calls[static_cast<int>(FaultSite::kVmm)]),
                static_cast<long long>(c.calls[static_cast<int>(FaultSite::kStream)]));
    EXPECT_GT(c.TotalFailures(), 0) << "the stress made too few device calls to fail any";
    EXPECT_GT(r.mallocs, 8 * 1000);
    EXPECT_EQ(r.corruptions, 0);
    EXPECT_EQ(r.double_handouts, 0);
    EXPECT_EQ(r.mallocs, r.frees);
    EXPECT_TRUE(r.errors.empty());
    const CuAllocatorStats st = f.allocator->GetStats();
    EXPECT_EQ(st.in_use_bytes, 0u);
    f.allocator->ReleaseCachedMemory();
    EXPECT_EQ(f.host->HeldBytes(), 0u) << "leak";
    EXPECT_EQ(f.host->MappedBytes(), 0u) << "leak";
    EXPECT_EQ(f.host->NumContractViolations(), 0);
    void* p = f.allocator->Malloc(8 * kMiB);
    EXPECT_NE(p, nullptr);
    f.allocator->Free(p);
  }
}

// Pinned host blocks (the no-GPU fallback here; page-locked with events on a GPU): failures of
// new blocks and of events surface as OutOfMemoryError or CudaError, and after the blocks are
// freed and the cache released the allocator holds nothing.
void PinnedStress(int device_id) {
  PinnedHostAllocator pinned(device_id);
  std::atomic<int64> ok{0}, errors{0}, corrupt{0};
  FaultInjector::Counters counters;
  {
    ScopedFaultInjection scope(OneIn(50, test::Seed() + 1, "pinned+event"));
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        test::Rng rng = test::MakeRng(300 + t);
        std::vector<std::pair<unsigned char*, size_t>> live;
        for (int step = 0; step < 400; ++step) {
          // Emptying the cache now and then makes new blocks, so that the pinned site is asked
          // often: with the cache alone a run could make too few new blocks to see a failure.
          if (step % 40 == 39) {
            try {
              pinned.ReleaseCache();
            } catch (const CudaError&) {
              ++errors;
            }
          }
          if (live.empty() || (rng.Uniform() < 0.55 && live.size() < 8)) {
            const size_t bytes = static_cast<size_t>(rng.Int(1, 3 * 1024 * 1024));
            try {
              auto* p = static_cast<unsigned char*>(pinned.Allocate(bytes));
              std::memset(p, 0x40 + t, bytes);
              live.emplace_back(p, bytes);
              ++ok;
            } catch (const CudaError&) {
              ++errors;
            }
          } else {
            const size_t i = static_cast<size_t>(rng.Int(0, static_cast<int64_t>(live.size()) - 1));
            auto b = live[i];
            for (size_t k = 0; k < b.second; k += 4093)
              if (b.first[k] != 0x40 + t) ++corrupt;
            try {
              pinned.Free(b.first);  // may fail (event); the block then stays ours
              live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
            } catch (const CudaError&) {
              ++errors;
            }
          }
        }
        for (auto& b : live) {
          for (;;) {  // faults are still on: retry a Free that failed
            try {
              pinned.Free(b.first);
              break;
            } catch (const CudaError&) {
              ++errors;
            }
          }
        }
      });
    }
    for (std::thread& th : threads) th.join();
    counters = FaultInjector::GetCounters();
  }
  std::printf("  pinned (device %d): %lld blocks, %lld injected errors surfaced, %lld corrupt\n",
              device_id, static_cast<long long>(ok.load()), static_cast<long long>(errors.load()),
              static_cast<long long>(corrupt.load()));
  // A failed new block is retried once after the cache is released, so with 1 in 50 failing
  // most are absorbed; events (GPU only) fail visibly.
  EXPECT_GT(counters.failures[static_cast<int>(FaultSite::kPinned)], 0);
  if (device_id >= 0) {
    EXPECT_GT(errors.load(), 0);
  }
  EXPECT_GT(pinned.Stats().num_oom_retries, 0);
  EXPECT_EQ(corrupt.load(), 0);
  pinned.ReleaseCache();
  const PinnedAllocatorStats st = pinned.Stats();
  EXPECT_EQ(st.bytes_in_use, 0);
  EXPECT_EQ(st.bytes_held, 0) << "leak";
  void* p = pinned.Allocate(kMiB);
  EXPECT_NE(p, nullptr);
  pinned.Free(p);
}

TEST(FaultInjectionTest, PinnedHostFailuresSurfaceAndLeakNothing) {
  test::QuietLog quiet;
  PinnedStress(-1);
}

TEST(FaultInjectionTest, PinnedHostFailingTwiceIsOutOfMemory) {
  test::QuietLog quiet;
  PinnedHostAllocator pinned(-1);
  {
    ScopedFaultInjection scope(OneIn(1, 1, "pinned"));  // every new block fails
    EXPECT_THROW(pinned.Allocate(kMiB), OutOfMemoryError);
    EXPECT_EQ(FaultInjector::GetCounters().failures[static_cast<int>(FaultSite::kPinned)], 2);
  }
  EXPECT_EQ(pinned.Stats().bytes_held, 0);
  void* p = pinned.Allocate(kMiB);
  EXPECT_NE(p, nullptr);
  pinned.Free(p);
}

// ---- on the GPU (CUCTX_TEST_GPU=yes): the same stress over the real upstreams -----------------

// The 8-thread stress over device memory that the GPU fault tests run; fewer steps under
// compute-sanitizer (tools/gpu-test.sh sets CUCTX_TEST_QUICK=1 there).
AllocStressOptions DeviceStressOptions() {
  AllocStressOptions so;
  so.threads = 8;
  so.steps_per_thread = std::getenv("CUCTX_TEST_QUICK") != nullptr ? 300 : 1500;
  so.thread_init = [] { CuDevice::Instantiate(); };
  so.max_bytes = 4 * kMiB;
  so.seed = test::Seed();
  so.release_every = 101;
  so.device_memory = true;
  return so;
}

TEST(FaultInjectionTest, EightThreadStressOverDeviceUpstreamOneIn50) {
  CUCTX_REQUIRE_GPU();
  test::QuietLog quiet;
  for (const char* kind : {"vmm", "cuda"}) {
    SCOPED_TRACE(kind);
    CuDevice::Instantiate();
    CuAllocatorOptions o;
    o.memory_proportion = 0;
    o.region_quantum_mb = 2;
    std::string note;
    auto a = std::make_unique<CuMemoryAllocator>(
        o, NewFaultInjectingUpstream(NewDeviceAllocatorUpstream(kind, nullptr, &note)));
    const AllocStressOptions so = DeviceStressOptions();
    FaultInjector::Counters c;
    const AllocStressResult r = StressOneIn50(a.get(), so, "device+vmm+stream", &c);
    PrintResult(kind, r);
    std::printf("    injected failures: %lld%s%s\n", static_cast<long long>(c.TotalFailures()),
                note.empty() ? "" : "; fell back: ", note.c_str());
    EXPECT_GT(c.TotalFailures(), 0);
    EXPECT_EQ(r.corruptions, 0);
    EXPECT_EQ(r.double_handouts, 0);
    EXPECT_EQ(r.mallocs, r.frees);
    EXPECT_TRUE(r.errors.empty());
    a->ReleaseCachedMemory();
    const CuAllocatorStats st = a->GetStats();
    EXPECT_EQ(st.in_use_bytes, 0u);
    EXPECT_EQ(st.held_bytes, 0u) << "leak";
    void* p = a->Malloc(64 * kMiB);
    EXPECT_NE(p, nullptr);
    a->Free(p);
  }
}

// --cuda-allocator=async: the cudaMallocAsync upstream asks the same sites (cu-allocator-async.h):
// a failed pool allocation is retried after a sync and a trim, two in a row are OutOfMemoryError,
// a failed sync is the call's CudaError; nothing is handed out twice and nothing stays allocated.
TEST(FaultInjectionTest, EightThreadStressOverAsyncBackendOneIn50) {
  CUCTX_REQUIRE_GPU();
  test::QuietLog quiet;
  CuDevice::Instantiate();
  CuAllocatorOptions o;
  o.backend = "async";
  std::string note;
  std::unique_ptr<CuMemoryAllocator> a = NewDeviceMemoryAllocator(o, nullptr, &note);
  const AllocStressOptions so = DeviceStressOptions();
  FaultInjector::Counters c;
  const AllocStressResult r = StressOneIn50(a.get(), so, "device+stream", &c);
  PrintResult("async", r);
  std::printf("    injected failures: %lld (device calls %lld, stream calls %lld)\n",
              static_cast<long long>(c.TotalFailures()),
              static_cast<long long>(c.calls[static_cast<int>(FaultSite::kDevice)]),
              static_cast<long long>(c.calls[static_cast<int>(FaultSite::kStream)]));
  EXPECT_GT(c.failures[static_cast<int>(FaultSite::kDevice)], 0)
      << "the stress made too few pool allocations to fail any";
  EXPECT_EQ(r.corruptions, 0);
  EXPECT_EQ(r.double_handouts, 0);
  EXPECT_EQ(r.mallocs, r.frees);
  EXPECT_TRUE(r.errors.empty());
  const CuAllocatorStats st = a->GetStats();
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_EQ(st.held_bytes, 0u) << "leak";
  // Every pool allocation failing: OutOfMemoryError (after one retry), and nothing is held.
  {
    ScopedFaultInjection scope(OneIn(1, 1, "device"));
    EXPECT_THROW(a->Malloc(kMiB), OutOfMemoryError);
  }
  // The sync before the retry failing: the call's own error, naming it.
  {
    ScopedFaultInjection scope(OneIn(1, 1, "device+stream"));  // the allocation, then the sync
    EXPECT_TRUE(test::ThrowsWith([&] { a->Malloc(kMiB); }, "injected fault"));
  }
  EXPECT_EQ(a->GetStats().held_bytes, 0u) << "leak";
  void* p = a->Malloc(64 * kMiB);
  EXPECT_NE(p, nullptr);
  a->Free(p);
  EXPECT_EQ(a->GetStats().held_bytes, 0u);
}

TEST(FaultInjectionTest, PinnedPageLockedFailuresSurfaceAndLeakNothing) {
  CUCTX_REQUIRE_GPU();
  test::QuietLog quiet;
  CuDevice::Instantiate();
  PinnedStress(0);
}

}  // namespace
}  // namespace cuctx
