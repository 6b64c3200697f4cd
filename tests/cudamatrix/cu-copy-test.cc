// tests/cudamatrix/cu-copy-test.cc: host<->device copies: pinned, pageable, staged, pitched.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-copy.h"

#include "base/error.h"
#include "base/parse-options.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-pinned.h"
#include "tests/testing.h"

#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if CUCTX_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGuard = 4 * kKiB;  // sentinel bytes on each side of a destination
constexpr unsigned char kSentinel = 0xa5;

std::vector<unsigned char> RandomBytes(size_t n, test::Rng* rng) {
  std::vector<unsigned char> out(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = rng->Engine()();
    std::memcpy(&out[i], &v, 8);
  }
  for (; i < n; ++i) out[i] = static_cast<unsigned char>(rng->Engine()());
  return out;
}

// Device memory with a GPU, host memory without one (as the Cu classes' CPU fallback stores its
// data). Fill/Read move bytes with plain cudaMemcpy, independent of the code under test.
class DeviceBytes {
 public:
  explicit DeviceBytes(size_t n) : size_(n) {
    if (test::GpuEnabled()) {
      data_ = CuDevice::Instantiate().Malloc(n);
    } else {
      host_.resize(n);
      data_ = host_.data();
    }
  }
  ~DeviceBytes() {
    if (test::GpuEnabled()) CuDevice::Instantiate().Free(data_);
  }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;

  unsigned char* Data() { return static_cast<unsigned char*>(data_); }
  void Fill(const std::vector<unsigned char>& bytes) {
    ASSERT_EQ(bytes.size(), size_);
    if (size_ == 0) return;
#if CUCTX_HAVE_CUDA
    if (test::GpuEnabled()) {
      ASSERT_EQ(cudaMemcpy(data_, bytes.data(), size_, cudaMemcpyHostToDevice), cudaSuccess);
      return;
    }
#endif
    std::memcpy(data_, bytes.data(), size_);
  }
  std::vector<unsigned char> Read() {
    std::vector<unsigned char> out(size_);
    if (size_ == 0) return out;
#if CUCTX_HAVE_CUDA
    if (test::GpuEnabled()) {
      // Synchronous, and (per-thread default stream build) ordered after this thread's work.
      EXPECT_EQ(cudaMemcpy(out.data(), data_, size_, cudaMemcpyDeviceToHost), cudaSuccess);
      return out;
    }
#endif
    std::memcpy(out.data(), data_, size_);
    return out;
  }

 private:
  size_t size_;
  void* data_ = nullptr;
  std::vector<unsigned char> host_;
};

// Installs copy options for the scope and restores the previous ones.
class ScopedCopyOptions {
 public:
  explicit ScopedCopyOptions(const CuCopyOptions& opts) : old_(GetCopyOptions()) {
    SetCopyOptions(opts);
  }
  ~ScopedCopyOptions() { SetCopyOptions(old_); }

 private:
  CuCopyOptions old_;
};

// Reports the first byte where `actual` differs from `expected` over [begin, end).
::testing::AssertionResult SameBytes(const unsigned char* actual, const unsigned char* expected,
                                     size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (actual[i] != expected[i])
      return ::testing::AssertionFailure()
             << "byte " << i << " of " << n << ": " << int(actual[i]) << " != " << int(expected[i]);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult AllSentinel(const unsigned char* p, size_t n, const char* where) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != kSentinel)
      return ::testing::AssertionFailure() << where << " sentinel byte " << i << " overwritten";
  return ::testing::AssertionSuccess();
}

// Checks `rows` pitched rows of `row_bytes`: each row of `dst` equals that row of `src`, and the
// bytes between a row's end and dst's pitch (`gap`, for the message) still hold the sentinel.
::testing::AssertionResult SameRows(const unsigned char* dst, size_t dst_pitch,
                                    const unsigned char* src, size_t src_pitch, size_t row_bytes,
                                    size_t rows, const char* gap) {
  for (size_t r = 0; r < rows; ++r) {
    ::testing::AssertionResult same =
        SameBytes(dst + r * dst_pitch, src + r * src_pitch, row_bytes);
    if (!same) return same << " (row " << r << ")";
    ::testing::AssertionResult kept =
        AllSentinel(dst + r * dst_pitch + row_bytes, dst_pitch - row_bytes, gap);
    if (!kept) return kept << " (row " << r << ")";
  }
  return ::testing::AssertionSuccess();
}

// The option sets every round trip runs under: the defaults, and tiny pieces with three buffers
// and no threshold, so that even small copies take many trips through the staging pipeline.
std::vector<CuCopyOptions> OptionSets() {
  CuCopyOptions tiny;
  tiny.staging_threshold_kb = 0;
  tiny.chunk_kb = 4;
  tiny.num_staging_buffers = 3;
  return {CuCopyOptions(), tiny};
}

const std::vector<size_t> kSizes = {0, 1, 255, kMiB - 1, kMiB + 1, 37 * kMiB};

// Host->device then device->host of `n` random bytes with the host side in `h_src`/`h_dst`
// (pageable or pinned), checking the data and the sentinels around both destinations.
void RoundTrip(size_t n, unsigned char* h_src, unsigned char* h_dst_with_guards, test::Rng* rng) {
  std::vector<unsigned char> data = RandomBytes(n, rng);
  if (n > 0) std::memcpy(h_src, data.data(), n);
  DeviceBytes dev(n + 2 * kGuard);
  dev.Fill(std::vector<unsigned char>(n + 2 * kGuard, kSentinel));
  CopyHostToDevice(dev.Data() + kGuard, h_src, n);
  if (n > 0) std::memset(h_src, 0, n);  // the source may be reused as soon as the call returns
  std::vector<unsigned char> on_device = dev.Read();
  EXPECT_TRUE(AllSentinel(on_device.data(), kGuard, "device front"));
  EXPECT_TRUE(SameBytes(on_device.data() + kGuard, data.data(), n));
  EXPECT_TRUE(AllSentinel(on_device.data() + kGuard + n, kGuard, "device back"));

  std::memset(h_dst_with_guards, kSentinel, n + 2 * kGuard);
  CopyDeviceToHost(h_dst_with_guards + kGuard, dev.Data() + kGuard, n);
  EXPECT_TRUE(AllSentinel(h_dst_with_guards, kGuard, "host front"));
  EXPECT_TRUE(SameBytes(h_dst_with_guards + kGuard, data.data(), n));
  EXPECT_TRUE(AllSentinel(h_dst_with_guards + kGuard + n, kGuard, "host back"));
}

TEST(CuCopyTest, PageableRoundTripsKeepDataAndSentinels) {
  test::Rng rng = test::MakeRng();
  for (const CuCopyOptions& opts : OptionSets()) {
    ScopedCopyOptions scoped(opts);
    for (size_t n : kSizes) {
      // 37 MiB in 4 KiB pieces adds nothing over 1 MiB + 1 but time.
      if (n > 2 * kMiB && opts.chunk_kb < 64) continue;
      SCOPED_TRACE(::testing::Message() << n << " bytes, chunk " << opts.chunk_kb << " KiB");
      std::vector<unsigned char> src(n + 1), dst(n + 2 * kGuard);
      RoundTrip(n, src.data() + 1, dst.data(), &rng);  // +1: a misaligned source
    }
  }
}

TEST(CuCopyTest, PinnedRoundTripsKeepDataAndSentinels) {
  test::Rng rng = test::MakeRng(1);
  for (size_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << n << " bytes");
    PinnedBuffer src(n + 1), dst(n + 2 * kGuard);
    RoundTrip(n, static_cast<unsigned char*>(src.Data()), static_cast<unsigned char*>(dst.Data()),
              &rng);
  }
}

TEST(CuCopyTest, TakesThePathThatFitsTheMemory) {
  ScopedCopyOptions defaults{CuCopyOptions()};
  test::Rng rng = test::MakeRng(2);
  const size_t big = 3 * kMiB, small = 1000;
  std::vector<unsigned char> pageable = RandomBytes(big, &rng);
  PinnedBuffer pinned(big);
  DeviceBytes dev(big);
  CuCopyStats before = GetCopyStats();
  CopyHostToDevice(dev.Data(), pageable.data(), big);    // staged with a GPU
  CopyDeviceToHost(pageable.data(), dev.Data(), small);  // driver-staged with a GPU
  CopyHostToDevice(dev.Data(), pinned.Data(), big);      // direct with a GPU
  CuCopyStats after = GetCopyStats();
  if (test::GpuEnabled()) {
    EXPECT_EQ(after.num_staged - before.num_staged, 1);
    EXPECT_EQ(after.bytes_staged - before.bytes_staged, static_cast<int64>(big));
    EXPECT_GE(after.num_staged_pieces - before.num_staged_pieces, 2);
    EXPECT_EQ(after.num_pageable_direct - before.num_pageable_direct, 1);
    EXPECT_EQ(after.num_pinned - before.num_pinned, 1);
    EXPECT_EQ(after.num_host_only, before.num_host_only);
  } else {
    EXPECT_EQ(after.num_host_only - before.num_host_only, 3);
    EXPECT_EQ(after.num_staged, before.num_staged);
  }
}

// 2D copies whose pitches differ from the row size on both sides; the bytes between a row's end
// and the next row's start must be left alone on the destination.
struct Pitched {
  size_t row_bytes, rows, host_pitch, device_pitch;
};

void PitchedRoundTrip(const Pitched& p, test::Rng* rng) {
  SCOPED_TRACE(::testing::Message() << p.rows << " rows of " << p.row_bytes << " bytes, pitches "
                                    << p.host_pitch << "/" << p.device_pitch);
  const size_t host_span = p.rows * p.host_pitch, device_span = p.rows * p.device_pitch;
  std::vector<unsigned char> src = RandomBytes(host_span, rng);
  DeviceBytes dev(device_span);
  dev.Fill(std::vector<unsigned char>(device_span, kSentinel));
  CopyHostToDevice2D(dev.Data(), p.device_pitch, src.data(), p.host_pitch, p.row_bytes, p.rows);
  std::vector<unsigned char> on_device = dev.Read();
  ASSERT_TRUE(SameRows(on_device.data(), p.device_pitch, src.data(), p.host_pitch, p.row_bytes,
                       p.rows, "device pitch gap"));
  std::vector<unsigned char> back(host_span, kSentinel);
  CopyDeviceToHost2D(back.data(), p.host_pitch, dev.Data(), p.device_pitch, p.row_bytes, p.rows);
  ASSERT_TRUE(SameRows(back.data(), p.host_pitch, src.data(), p.host_pitch, p.row_bytes, p.rows,
                       "host pitch gap"));
}

// Runs a pitched copy through the staged pipeline on the host (internal::StagedCopyOnHostForTest)
// into a sentinel-filled destination and checks it with SameRows. With to_device, the host pitch
// is the source's.
::testing::AssertionResult StagedPitchedCopyOnHost(const Pitched& p, bool to_device,
                                                   const CuCopyOptions& opts, test::Rng* rng) {
  const size_t src_pitch = to_device ? p.host_pitch : p.device_pitch;
  const size_t dst_pitch = to_device ? p.device_pitch : p.host_pitch;
  std::vector<unsigned char> src = RandomBytes(p.rows * src_pitch, rng);
  std::vector<unsigned char> dst(p.rows * dst_pitch, kSentinel);
  internal::StagedCopyOnHostForTest(dst.data(), dst_pitch, src.data(), src_pitch, p.row_bytes,
                                    p.rows, to_device, opts);
  return SameRows(dst.data(), dst_pitch, src.data(), src_pitch, p.row_bytes, p.rows, "pitch gap");
}

const std::vector<Pitched> kPitchedCases = {
    {1, 1, 1, 1},                                      // trivially small
    {1000, 37, 1032, 1280},                            // below the staging threshold
    {1500, 3000, 1536, 2048},                          // 4.3 MiB: staged as runs of whole rows
    {5 * kMiB + 3, 3, 5 * kMiB + 64, 5 * kMiB + 512},  // rows longer than a piece: split rows
    {4096, 300, 4096, 4096 + 256},                     // one side contiguous
};

TEST(CuCopyTest, PitchedCopiesTouchOnlyTheRows) {
  test::Rng rng = test::MakeRng(3);
  for (const CuCopyOptions& opts : OptionSets()) {
    ScopedCopyOptions scoped(opts);
    for (const Pitched& p : kPitchedCases) PitchedRoundTrip(p, &rng);
  }
}

TEST(CuCopyTest, ConcurrentThreadsCopyIndependently) {
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      CuDevice::Instantiate();  // attach this thread to the selected device
      test::Rng rng = test::MakeRng(10 + t);
      for (int round = 0; round < 3; ++round) {
        const size_t n = 2 * kMiB + static_cast<size_t>(rng.Int(0, 4096));
        std::vector<unsigned char> src = RandomBytes(n, &rng), back(n, 0);
        DeviceBytes dev(n);
        CopyHostToDevice(dev.Data(), src.data(), n);
        CopyDeviceToHost(back.data(), dev.Data(), n);
        if (back != src) ++failures[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

// The staged pipeline itself, run with memcpy as the copy engine (in stream order, deferred until
// waited for), so that its piece arithmetic is checked on every machine.
TEST(CuCopyTest, StagedPipelineOnHostCopiesEveryPieceOnce) {
  test::Rng rng = test::MakeRng(4);
  CuCopyOptions tiny;
  tiny.chunk_kb = 4;
  for (int buffers : {2, 3, 5}) {
    tiny.num_staging_buffers = buffers;
    for (bool to_device : {true, false}) {
      for (size_t n : {size_t{1}, size_t{4095}, size_t{4097}, 5 * kKiB * 7, kMiB + 1}) {
        SCOPED_TRACE(::testing::Message()
                     << n << " bytes, " << buffers << " buffers, " << (to_device ? "H2D" : "D2H"));
        std::vector<unsigned char> src = RandomBytes(n, &rng);
        std::vector<unsigned char> dst(n + 2 * kGuard, kSentinel);
        internal::StagedCopyOnHostForTest(dst.data() + kGuard, n, src.data(), n, n, 1, to_device,
                                          tiny);
        ASSERT_TRUE(AllSentinel(dst.data(), kGuard, "front"));
        ASSERT_TRUE(SameBytes(dst.data() + kGuard, src.data(), n));
        ASSERT_TRUE(AllSentinel(dst.data() + kGuard + n, kGuard, "back"));
      }
      for (const Pitched& p : std::vector<Pitched>{{1000, 37, 1032, 1280},
                                                   {5000, 9, 5008, 5120},  // rows split in two
                                                   {4096, 5, 4096, 4096},
                                                   {3, 2000, 7, 3}}) {
        SCOPED_TRACE(::testing::Message()
                     << p.rows << " rows of " << p.row_bytes << ", " << buffers << " buffers");
        ASSERT_TRUE(StagedPitchedCopyOnHost(p, to_device, tiny, &rng));
      }
    }
  }
  // The default options cut a 37 MiB copy into 8 MiB pieces, each memcpy split over 8 threads.
  const size_t n = 37 * kMiB;
  std::vector<unsigned char> src = RandomBytes(n, &rng), dst(n, 0);
  internal::StagedCopyOnHostForTest(dst.data(), n, src.data(), n, n, 1, true, CuCopyOptions());
  EXPECT_TRUE(SameBytes(dst.data(), src.data(), n));
}

// Pieces large enough for the memcpy to be split over threads: by rows (pitched runs of rows) and
// by bytes (a part of one long row), with one, three and more threads than slices.
TEST(CuCopyTest, StagedPipelineSplitsTheMemcpyOverThreads) {
  test::Rng rng = test::MakeRng(7);
  CuCopyOptions opts;
  opts.chunk_kb = 1024;
  for (int threads : {1, 3, 16}) {
    opts.memcpy_threads = threads;
    for (bool to_device : {true, false}) {
      for (const Pitched& p : std::vector<Pitched>{{5000, 1000, 5008, 5120},
                                                   {3 * kMiB + 5, 2, 3 * kMiB + 5, 3 * kMiB + 64},
                                                   {2 * kMiB + 3, 1, 2 * kMiB + 3, 2 * kMiB + 3}}) {
        SCOPED_TRACE(::testing::Message() << p.rows << " rows of " << p.row_bytes << ", " << threads
                                          << " threads, " << (to_device ? "H2D" : "D2H"));
        ASSERT_TRUE(StagedPitchedCopyOnHost(p, to_device, opts, &rng));
      }
    }
  }
}

// Several threads share the memcpy helper pool at once.
TEST(CuCopyTest, StagedPipelinesOnSeveralThreadsShareTheHelpers) {
  constexpr int kThreads = 4;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      test::Rng rng = test::MakeRng(20 + t);
      CuCopyOptions opts;
      opts.chunk_kb = 1024;
      opts.memcpy_threads = 3;
      for (int round = 0; round < 4; ++round) {
        const size_t n = 3 * kMiB + static_cast<size_t>(rng.Int(0, 5000));
        std::vector<unsigned char> src = RandomBytes(n, &rng), dst(n, 0);
        internal::StagedCopyOnHostForTest(dst.data(), n, src.data(), n, n, 1, round % 2 == 0, opts);
        if (dst != src) ++failures[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

// An empty copy (0 bytes, 0 rows or 0 bytes per row) neither throws (null pointers and pitches
// below row_bytes included), nor takes any copy path, nor touches a real destination.
TEST(CuCopyTest, EmptyCopiesAreNoOpsEvenWithNullPointers) {
  const CuCopyStats before = GetCopyStats();
  EXPECT_NO_THROW(CopyHostToDevice(nullptr, nullptr, 0));
  EXPECT_NO_THROW(CopyDeviceToHost(nullptr, nullptr, 0));
  EXPECT_NO_THROW(CopyHostToDevice2D(nullptr, 0, nullptr, 0, 0, 10));
  EXPECT_NO_THROW(CopyDeviceToHost2D(nullptr, 8, nullptr, 8, 8, 0));

  const std::vector<unsigned char> sentinel(32, 0xAB), source(32, 0x11);
  DeviceBytes dev(32);
  dev.Fill(sentinel);
  std::vector<unsigned char> host = sentinel;
  EXPECT_NO_THROW(CopyHostToDevice(dev.Data(), source.data(), 0));
  EXPECT_NO_THROW(CopyHostToDevice2D(dev.Data(), 8, source.data(), 8, 8, 0));
  EXPECT_NO_THROW(CopyHostToDevice2D(dev.Data(), 8, source.data(), 8, 0, 4));
  EXPECT_NO_THROW(CopyDeviceToHost(host.data(), dev.Data(), 0));
  EXPECT_NO_THROW(CopyDeviceToHost2D(host.data(), 8, dev.Data(), 8, 8, 0));
  EXPECT_NO_THROW(CopyDeviceToHost2D(host.data(), 8, dev.Data(), 8, 0, 4));
  EXPECT_EQ(dev.Read(), sentinel);
  EXPECT_EQ(host, sentinel);

  const CuCopyStats after = GetCopyStats();
  EXPECT_EQ(after.num_host_only, before.num_host_only);
  EXPECT_EQ(after.num_pinned, before.num_pinned);
  EXPECT_EQ(after.num_pageable_direct, before.num_pageable_direct);
  EXPECT_EQ(after.num_staged, before.num_staged);
  EXPECT_EQ(after.bytes_staged, before.bytes_staged);
}

TEST(CuCopyTest, RejectsBadArguments) {
  std::vector<unsigned char> host(64);
  DeviceBytes dev(64);
  EXPECT_THROW(CopyHostToDevice(nullptr, host.data(), 8), Error);
  EXPECT_THROW(CopyHostToDevice(dev.Data(), nullptr, 8), Error);
  EXPECT_THROW(CopyDeviceToHost(nullptr, dev.Data(), 8), Error);
  try {
    CopyHostToDevice2D(dev.Data(), 8, host.data(), 16, 12, 2);
    ADD_FAILURE() << "no exception for a pitch below row_bytes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row_bytes 12"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CopyDeviceToHost2D(host.data(), 4, dev.Data(), 16, 8, 2), Error);
  EXPECT_THROW(CopyHostToDevice2D(dev.Data(), SIZE_MAX / 2, host.data(), 8, 8, 4), Error)
      << "rows * pitch overflows";
}

TEST(CuCopyOptionsTest, RegistersParsesAndChecksTheOptions) {
  CuCopyOptions opts;
  ParseOptions po("test");
  std::ostringstream quiet;
  po.SetMessageStream(&quiet);
  opts.Register(&po);
  const char* argv[] = {"prog", "--cuda-copy-staging-threshold-kb=0", "--cuda-copy-chunk-kb=64",
                        "--cuda-copy-staging-buffers=4", "--cuda-copy-memcpy-threads=8"};
  po.Read(5, argv);
  EXPECT_EQ(opts.staging_threshold_kb, 0);
  EXPECT_EQ(opts.chunk_kb, 64);
  EXPECT_EQ(opts.num_staging_buffers, 4);
  EXPECT_EQ(opts.memcpy_threads, 8);
  {
    ScopedCopyOptions scoped(opts);
    EXPECT_EQ(GetCopyOptions().chunk_kb, 64);
  }
  EXPECT_EQ(GetCopyOptions().chunk_kb, CuCopyOptions().chunk_kb);

  const CuCopyOptions before = GetCopyOptions();
  auto expect_rejected = [&before](CuCopyOptions bad, const std::string& name) {
    try {
      SetCopyOptions(bad);
      ADD_FAILURE() << "no exception for bad " << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
    EXPECT_EQ(GetCopyOptions().chunk_kb, before.chunk_kb) << "options unchanged after an error";
  };
  CuCopyOptions bad = before;
  bad.staging_threshold_kb = -1;
  expect_rejected(bad, "--cuda-copy-staging-threshold-kb");
  bad = before;
  bad.chunk_kb = 3;
  expect_rejected(bad, "--cuda-copy-chunk-kb");
  bad = before;
  bad.num_staging_buffers = 1;
  expect_rejected(bad, "--cuda-copy-staging-buffers");
  bad = before;
  bad.memcpy_threads = 0;
  expect_rejected(bad, "--cuda-copy-memcpy-threads");
}

TEST(CuCopyTest, IsPageLockedOnlyForPinnedMemoryOfADevice) {
  std::vector<unsigned char> ordinary(100);
  EXPECT_FALSE(IsPageLocked(nullptr));
  EXPECT_FALSE(IsPageLocked(ordinary.data()));
  PinnedBuffer pinned(100);
  EXPECT_EQ(IsPageLocked(pinned.Data()), test::GpuEnabled());
  EXPECT_EQ(IsPageLocked(static_cast<char*>(pinned.Data()) + 99), test::GpuEnabled());
}

// ---- GPU only
// ------------------------------------------------------------------------------------

TEST(CuCopyTest, RegisteredBackendBuffersAreCopiedDirectly) {
  CUCTX_REQUIRE_GPU();
  PinnedAllocatorOptions opts;
  opts.backend = "register";
  PinnedHostAllocator alloc(CuDevice::Instantiate().DeviceId(), opts);
  test::Rng rng = test::MakeRng(5);
  const size_t n = 9 * kMiB + 5;
  PinnedBuffer src(n, &alloc), dst(n + 2 * kGuard, &alloc);
  CuCopyStats before = GetCopyStats();
  RoundTrip(n, static_cast<unsigned char*>(src.Data()), static_cast<unsigned char*>(dst.Data()),
            &rng);
  EXPECT_EQ(GetCopyStats().num_pinned - before.num_pinned, 2);
  EXPECT_EQ(GetCopyStats().num_staged, before.num_staged);
}

TEST(CuCopyTest, DeviceToHostWaitsForWorkQueuedOnTheStream) {
  CUCTX_REQUIRE_GPU();
#if CUCTX_HAVE_CUDA
  // An asynchronous device-to-device copy queued on this thread's stream must be finished before
  // CopyDeviceToHost reads its destination, on every path.
  test::Rng rng = test::MakeRng(6);
  for (size_t n : {size_t{1000}, 6 * kMiB}) {
    std::vector<unsigned char> data = RandomBytes(n, &rng);
    DeviceBytes a(n), b(n);
    a.Fill(data);
    b.Fill(std::vector<unsigned char>(n, 0));
    ASSERT_EQ(cudaMemcpyAsync(b.Data(), a.Data(), n, cudaMemcpyDeviceToDevice, cudaStreamPerThread),
              cudaSuccess);
    std::vector<unsigned char> pageable(n);
    CopyDeviceToHost(pageable.data(), b.Data(), n);
    EXPECT_TRUE(SameBytes(pageable.data(), data.data(), n)) << n;
  }
#endif
}

}  // namespace
}  // namespace cuctx
