// tests/cudamatrix/cu-allocator-async-test.cc: the stream-ordered backend (--cuda-allocator=async,
// cu-allocator-async.cc) and NewDeviceMemoryAllocator's choice of backend. The option cases run
// everywhere; the rest need a GPU.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-allocator-async.h"

#include "base/error.h"
#include "base/parse-options.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "tests/cudamatrix/allocator-conformance.h"
#include "tests/testing.h"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"

#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

CuAllocatorOptions AsyncOptions() {
  CuAllocatorOptions o;
  o.backend = "async";
  return o;
}

// The device's total memory (0 without CUDA; only called where a GPU was selected).
size_t DeviceTotalBytes() {
  size_t total_bytes = 0;
#if CUCTX_HAVE_CUDA
  size_t free_bytes = 0;
  CUCTX_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
#endif
  return total_bytes;
}

// ---- the conformance suite over the async backend ----------------------------------------------

struct AsyncCudaTraits {
  using Allocator = CuMemoryAllocator;
  static std::unique_ptr<Allocator> Make() {
    std::unique_ptr<CuMemoryAllocator> a =
        NewDeviceMemoryAllocator(AsyncOptions(), nullptr, nullptr);
    a->AllowMultithreading();
    return a;
  }
  static size_t LimitBytes() { return DeviceTotalBytes(); }
  static bool HostAccessible() { return false; }
  static bool NeedsGpu() { return true; }
};

}  // namespace

namespace test {
INSTANTIATE_TYPED_TEST_SUITE_P(AsyncCuda, AllocatorConformanceTest,
                               ::testing::Types<AsyncCudaTraits>);
}  // namespace test

namespace {

// ---- options (everywhere) ----------------------------------------------------------------------

TEST(CuAllocatorAsyncTest, OptionParsesAndChecks) {
  CuAllocatorOptions o;
  EXPECT_EQ(o.backend, "caching");
  ParseOptions po("test");
  std::ostringstream quiet;
  po.SetMessageStream(&quiet);
  o.Register(&po);
  const char* argv[] = {"prog", "--cuda-allocator=async"};
  po.Read(2, argv);
  EXPECT_EQ(o.backend, "async");
  EXPECT_NO_THROW(o.Check());
  o.backend = "caching";
  EXPECT_NO_THROW(o.Check());
  for (const char* bad : {"", "Async", "cudaMallocAsync", "vmm"}) {
    o.backend = bad;
    const std::string text = test::ErrorText([&] {
      test::QuietLog q;
      o.Check();
    });
    EXPECT_TRUE(test::Contains(text, "--cuda-allocator"));
    EXPECT_TRUE(test::Contains(text, std::string("'") + bad + "'"));
  }
  // A bad backend is rejected before any device is touched.
  test::ExpectErrorContaining([&] { NewDeviceMemoryAllocator(o, nullptr, nullptr); },
#if CUCTX_HAVE_CUDA
                              "--cuda-allocator"
#else
                              "built without CUDA"
#endif
  );
}

#if !CUCTX_HAVE_CUDA
TEST(CuAllocatorAsyncTest, WithoutCudaSaysSo) {
  test::ExpectErrorContaining([] { NewAsyncAllocatorUpstream(); }, "built without CUDA");
  test::ExpectErrorContaining([] { NewDeviceMemoryAllocator(AsyncOptions(), nullptr, nullptr); },
                              "built without CUDA");
  test::ExpectErrorContaining(
      [] { NewDeviceMemoryAllocator(CuAllocatorOptions(), nullptr, nullptr); },
      "built without CUDA");
}
#endif

// ---- the backend on a GPU ----------------------------------------------------------------------

TEST(CuAllocatorAsyncTest, PicksPassThroughForAsyncAndCachingOtherwise) {
  CUCTX_REQUIRE_GPU();
  std::string note = "unchanged";
  std::unique_ptr<CuMemoryAllocator> a = NewDeviceMemoryAllocator(AsyncOptions(), nullptr, &note);
  EXPECT_FALSE(a->GetStats().caching);
  EXPECT_FALSE(a->Options().cache_memory);
  EXPECT_EQ(a->Options().backend, "async");
  EXPECT_EQ(a->Upstream().MapGranularity(), 0u);
  EXPECT_TRUE(test::Contains(a->Upstream().Name(), "cudaMallocAsync pool"));
  EXPECT_TRUE(note.empty()) << note;

  for (const char* upstream : {"cuda", "vmm"}) {
    CuAllocatorOptions o;
    o.upstream = upstream;
    note = "unchanged";
    std::unique_ptr<CuMemoryAllocator> c = NewDeviceMemoryAllocator(o, nullptr, &note);
    EXPECT_TRUE(c->GetStats().caching) << upstream;
    EXPECT_FALSE(test::Contains(c->Upstream().Name(), "cudaMallocAsync"));
    if (std::string(upstream) == "cuda") {
      EXPECT_TRUE(note.empty()) << note;
      EXPECT_EQ(c->Upstream().MapGranularity(), 0u);
    } else {
      // VMM, or the reason why not (and cudaMalloc regions).
      EXPECT_TRUE(c->Upstream().MapGranularity() > 0 || !note.empty()) << note;
      EXPECT_NE(note, "unchanged");
    }
    void* p = c->Malloc(kMiB);
    EXPECT_NE(p, nullptr);
    c->Free(p);
  }
}

TEST(CuAllocatorAsyncTest, StatisticsCountMallocsFreesAndPeak) {
  CUCTX_REQUIRE_GPU();
  std::unique_ptr<CuMemoryAllocator> a = NewDeviceMemoryAllocator(AsyncOptions(), nullptr, nullptr);
  void* p = a->Malloc(1000);  // 1024 bytes, rounded to 256
  void* q = a->Malloc(3 * kMiB);
  size_t pitch = 0;
  void* r = a->MallocPitch(100, 7, &pitch);  // 256 * 7
  EXPECT_EQ(pitch, 256u);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(a->Malloc(0), nullptr);
  const size_t all = 1024 + 3 * kMiB + 256 * 7;
  CuAllocatorStats s = a->GetStats();
  EXPECT_EQ(s.num_mallocs, 3);
  EXPECT_EQ(s.num_frees, 0);
  EXPECT_EQ(s.in_use_bytes, all);
  EXPECT_EQ(s.held_bytes, all);
  EXPECT_EQ(s.num_regions, 3);
  EXPECT_EQ(s.num_upstream_allocs, 3);
  EXPECT_EQ(a->GetAllocatedMemory(), all);
  a->Free(q);
  a->Free(nullptr);
  void* t = a->Malloc(kMiB);
  a->Free(t);
  a->Free(r);
  a->Free(p);
  s = a->GetStats();
  EXPECT_EQ(s.num_mallocs, 4);
  EXPECT_EQ(s.num_frees, 4);
  EXPECT_EQ(s.num_upstream_releases, 4);
  EXPECT_EQ(s.in_use_bytes, 0u);
  EXPECT_EQ(s.held_bytes, 0u);
  EXPECT_EQ(s.peak_in_use_bytes, all);
  EXPECT_EQ(a->GetMaxAllocatedMemory(), all);
  EXPECT_EQ(s.num_oom_errors, 0);
  // A pointer it never handed out is refused, and the allocator is unchanged.
  int on_stack = 0;
  test::ExpectErrorContaining([&] { a->Free(&on_stack); }, "pass-through");
  EXPECT_EQ(a->GetStats().num_frees, 4);
}

TEST(CuAllocatorAsyncTest, OutOfMemoryNamesTheRequestAndRecovers) {
  CUCTX_REQUIRE_GPU();
  std::unique_ptr<CuMemoryAllocator> a = NewDeviceMemoryAllocator(AsyncOptions(), nullptr, nullptr);
  void* small = a->Malloc(kMiB);
  const size_t bytes = (DeviceTotalBytes() / 256 + 1) * 256 + kMiB;  // more than the device has
  try {
    test::QuietLog quiet;
    a->Malloc(bytes);
    FAIL() << "no exception for " << bytes << " bytes";
  } catch (const OutOfMemoryError& e) {
    const std::string text = e.what();
    EXPECT_TRUE(test::Contains(text, std::to_string(bytes) + " bytes"));
    EXPECT_TRUE(test::Contains(text, "cudaMallocAsync pool"));
    EXPECT_TRUE(test::Contains(text, "total"));
  }
  CuAllocatorStats s = a->GetStats();
  EXPECT_EQ(s.num_oom_errors, 1);
  EXPECT_GE(s.num_upstream_failures, 1);
  EXPECT_EQ(s.in_use_bytes, kMiB);
  // Still usable: the device accepts work on new memory and nothing is left in the error state.
  void* p = a->Malloc(4 * kMiB);
  ASSERT_NE(p, nullptr);
#if CUCTX_HAVE_CUDA
  CUCTX_CUDA_CHECK(cudaMemsetAsync(p, 1, 4 * kMiB, cudaStreamPerThread));
  CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
#endif
  a->Free(p);
  a->Free(small);
  EXPECT_EQ(a->GetAllocatedMemory(), 0u);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CuAllocatorAsyncTest, TraceWritesMallocsAndFrees) {
  CUCTX_REQUIRE_GPU();
  const std::string path = ::testing::TempDir() + "cu-allocator-async-test-trace.txt";
  CuAllocatorOptions o = AsyncOptions();
  o.trace_file = path;
  {
    std::unique_ptr<CuMemoryAllocator> a = NewDeviceMemoryAllocator(o, nullptr, nullptr);
    void* p = a->Malloc(5000);
    size_t pitch = 0;
    void* q = a->MallocPitch(300, 4, &pitch);
    a->Free(p);
    a->Free(q);
    a->SynchronizeGpu();
  }
  const std::string text = ReadFile(path);
  EXPECT_EQ(text, "# cuctx-allocator-trace 1\nm 0 5000 1\np 0 300 4 2\nf 0 1\nf 0 2\ns 0\n");
  // The trace replays on the async backend as on any other.
  std::unique_ptr<CuMemoryAllocator> b = NewDeviceMemoryAllocator(AsyncOptions(), nullptr, nullptr);
  const AllocatorReplayResult r = ReplayAllocatorTraceFile(path, false, b.get());
  EXPECT_EQ(r.num_mallocs, 2);
  EXPECT_EQ(r.num_frees, 2);
  EXPECT_EQ(b->GetStats().num_mallocs, 2);
  EXPECT_EQ(b->GetAllocatedMemory(), 0u);
  std::remove(path.c_str());
}

// Eight threads allocate, write on their own streams, read back and free through one allocator,
// reusing each other's freed memory from the pool: the pool's stream ordering must keep every
// block's contents as its owner wrote them.
TEST(CuAllocatorAsyncTest, ConcurrentThreadsWriteCheckAndFree) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  std::unique_ptr<CuMemoryAllocator> a = NewDeviceMemoryAllocator(AsyncOptions(), nullptr, nullptr);
  a->AllowMultithreading();
  constexpr int kThreads = 8;
  constexpr int kSteps = 300;
  std::atomic<int> failures{0};
  auto body = [&](int t) {
    CuDevice::Instantiate();  // the selected device for this thread
    test::Rng rng = test::MakeRng(200 + t);
    struct Live {
      unsigned char* ptr;
      size_t bytes;
      unsigned char fill;
    };
    std::vector<Live> live;
    std::vector<unsigned char> host;
    auto intact = [&](const Live& b) {
      const size_t n = std::min<size_t>(b.bytes, 4096);
      host.resize(2 * n);
      CUCTX_CUDA_CHECK(
          cudaMemcpyAsync(host.data(), b.ptr, n, cudaMemcpyDeviceToHost, cudaStreamPerThread));
      CUCTX_CUDA_CHECK(cudaMemcpyAsync(host.data() + n, b.ptr + b.bytes - n, n,
                                       cudaMemcpyDeviceToHost, cudaStreamPerThread));
      CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
      for (unsigned char c : host)
        if (c != b.fill) return false;
      return true;
    };
    for (int step = 0; step < kSteps; ++step) {
      if (live.empty() || (rng.Uniform() < 0.55 && live.size() < 16)) {
        const size_t bytes = test::RandomRequest(2 * kMiB, &rng);
        Live b{static_cast<unsigned char*>(a->Malloc(bytes)), bytes,
               static_cast<unsigned char>(16 * t + rng.Int(1, 15))};
        if (b.ptr == nullptr) {
          ++failures;
          continue;
        }
        CUCTX_CUDA_CHECK(cudaMemsetAsync(b.ptr, b.fill, bytes, cudaStreamPerThread));
        live.push_back(b);
      } else {
        const size_t i = static_cast<size_t>(rng.Int(0, static_cast<int64_t>(live.size()) - 1));
        if (!intact(live[i])) ++failures;
        a->Free(live[i].ptr);
        live[i] = live.back();
        live.pop_back();
      }
    }
    for (const Live& b : live) {
      if (!intact(b)) ++failures;
      a->Free(b.ptr);
    }
  };
  // A CUDA error on a thread is a failure of the test, not a std::terminate.
  auto work = [&](int t) {
    try {
      body(t);
    } catch (const std::exception& e) {
      ++failures;
      ADD_FAILURE() << "thread " << t << ": " << e.what();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  const CuAllocatorStats s = a->GetStats();
  EXPECT_EQ(s.num_mallocs, s.num_frees);
  EXPECT_EQ(s.in_use_bytes, 0u);
  EXPECT_GT(s.num_mallocs, kThreads * kSteps / 3);
#endif
}

}  // namespace
}  // namespace cuctx
