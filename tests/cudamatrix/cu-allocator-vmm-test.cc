// tests/cudamatrix/cu-allocator-vmm-test.cc: the CUDA VMM upstream (cu-allocator-vmm.cc) and the
// choice between it and cudaMalloc regions. Most cases need a GPU; the rest (what happens without
// a driver, bad option values) run everywhere.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cudamatrix/cu-allocator-upstream.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "tests/testing.h"

#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"

#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(CuAllocatorVmmTest, SaysWhyWhenUnavailable) {
  std::string why_not = "unchanged";
  std::unique_ptr<CuAllocatorUpstream> vmm = NewVmmAllocatorUpstream(nullptr, &why_not);
  if (vmm == nullptr) {
    // No driver here (CI), or a build without CUDA: the reason names what is missing.
    EXPECT_FALSE(why_not.empty());
    EXPECT_NE(why_not, "unchanged");
  } else {
    EXPECT_GT(vmm->MapGranularity(), 0u);
    EXPECT_EQ(vmm->MapGranularity() % 256, 0u);
    EXPECT_NE(vmm->Name().find("VMM"), std::string::npos) << vmm->Name();
  }
}

TEST(CuAllocatorVmmTest, UnknownUpstreamKindIsAnError) {
  try {
    NewDeviceAllocatorUpstream("cudamalloc", nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vmm or cuda"), std::string::npos) << e.what();
  }
  CuAllocatorOptions o;
  o.upstream = "mmap";
  EXPECT_THROW(o.Check(), Error);
}

#if CUCTX_HAVE_CUDA

std::unique_ptr<CuAllocatorUpstream> VmmOrFail() {
  std::string why_not;
  std::unique_ptr<CuAllocatorUpstream> vmm = NewVmmAllocatorUpstream(nullptr, &why_not);
  CUCTX_CHECK(vmm != nullptr) << "this GPU has no VMM: " << why_not;
  return vmm;
}

size_t DeviceFreeBytes() {
  size_t free_bytes = 0, total_bytes = 0;
  CUCTX_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

// True when all `bytes` at device address `d` equal `value` (read back through the host).
bool DeviceHolds(const void* d, size_t bytes, unsigned char value) {
  std::vector<unsigned char> h(bytes);
  CopyDeviceToHost(h.data(), d, bytes);
  for (unsigned char c : h)
    if (c != value) return false;
  return true;
}

TEST(CuAllocatorVmmTest, ChoosesTheUpstreamTheOptionNames) {
  CUCTX_REQUIRE_GPU();
  std::string why = "unchanged";
  EXPECT_EQ(NewDeviceAllocatorUpstream("cuda", nullptr, &why)->MapGranularity(), 0u);
  EXPECT_TRUE(why.empty());
  EXPECT_GT(NewDeviceAllocatorUpstream("vmm", nullptr, &why)->MapGranularity(), 0u) << why;
  // The device's own allocator follows --cuda-allocator-upstream (default vmm), unless caching
  // is off (compute-sanitizer runs), where every call goes to cudaMalloc.
  const CuAllocatorStats s = CuDevice::Instantiate().Allocator()->GetStats();
  if (s.caching && CuDevice::AllocatorOptions().upstream == "vmm") {
    EXPECT_GT(s.map_granularity, 0u);
  } else {
    EXPECT_EQ(s.map_granularity, 0u);
  }
}

TEST(CuAllocatorVmmTest, MappedMemoryIsReadableAndWritableByTheDevice) {
  CUCTX_REQUIRE_GPU();
  std::unique_ptr<CuAllocatorUpstream> up = VmmOrFail();
  const size_t g = up->MapGranularity();
  char* base = static_cast<char*>(up->Reserve(8 * g));
  ASSERT_NE(base, nullptr);
  // Two separate Map() calls side by side act as one contiguous range.
  ASSERT_TRUE(up->Map(base, 2 * g));
  ASSERT_TRUE(up->Map(base + 2 * g, 2 * g));
  CUCTX_CUDA_CHECK(cudaMemset(base, 0x5a, 2 * g));
  CUCTX_CUDA_CHECK(cudaMemcpy(base + 2 * g, base, 2 * g, cudaMemcpyDeviceToDevice));
  // A copy that straddles the boundary between the two mappings.
  CUCTX_CUDA_CHECK(cudaMemset(base + g, 0x33, 2 * g));
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(DeviceHolds(base, g, 0x5a));
  EXPECT_TRUE(DeviceHolds(base + g, 2 * g, 0x33));
  EXPECT_TRUE(DeviceHolds(base + 3 * g, g, 0x5a));
  // Unmapping one granule of a multi-granule Map() leaves its neighbours intact.
  up->Unmap({{base + g, g}});
  EXPECT_TRUE(DeviceHolds(base, g, 0x5a));
  EXPECT_TRUE(DeviceHolds(base + 2 * g, g, 0x33));
  up->Unmap({{base, g}, {base + 2 * g, 2 * g}});
  up->Unreserve(base, 8 * g);
}

TEST(CuAllocatorVmmTest, ReleaseGivesMemoryBackToTheDevice) {
  CUCTX_REQUIRE_GPU();
  CuAllocatorOptions o;
  CuMemoryAllocator a(o, VmmOrFail());
  std::vector<void*> blocks;
  test::Rng rng = test::MakeRng(11);
  for (int i = 0; i < 64; ++i)
    blocks.push_back(a.Malloc(static_cast<size_t>(rng.Int(1, 16 * 1024)) * 1024));
  for (void* p : blocks) a.Free(p);
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  const size_t held = a.GetStats().held_bytes;
  const size_t before = DeviceFreeBytes();
  const size_t released = a.ReleaseCachedMemory();
  const size_t after = DeviceFreeBytes();
  EXPECT_EQ(released, held);
  EXPECT_EQ(a.GetStats().held_bytes, 0u);
  ASSERT_GT(after, before);
  // cudaMemGetInfo counts in the driver's own units; allow one granule either way.
  const double rise = static_cast<double>(after - before);
  EXPECT_NEAR(rise, static_cast<double>(released), 2.0 * kMiB)
      << "released " << released << " bytes, device free memory rose " << (after - before);
}

TEST(CuAllocatorVmmTest, OutOfMemoryIsRecoverable) {
  CUCTX_REQUIRE_GPU();
  // Under compute-sanitizer (CUCTX_TEST_QUICK) filling the whole device takes too long.
  const char* quick = std::getenv("CUCTX_TEST_QUICK");
  if (quick != nullptr && std::string(quick) == "1") GTEST_SKIP() << "skipped: quick mode";
  CuAllocatorOptions o;
  o.thread_cache_mb = 0;
  CuMemoryAllocator a(o, VmmOrFail());
  const size_t kBlock = 1024 * kMiB;
  std::vector<void*> blocks;
  try {
    for (;;) blocks.push_back(a.Malloc(kBlock));
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("reserved"), std::string::npos) << e.what();
  }
  ASSERT_GE(blocks.size(), 4u);
  // Free every other block: the holes are 1 GiB each, so a 2 GiB request can only be served by
  // unmapping free granules and mapping them again in one piece.
  for (size_t i = 0; i < blocks.size(); i += 2) {
    a.Free(blocks[i]);
    blocks[i] = nullptr;
  }
  void* big = nullptr;
  ASSERT_NO_THROW(big = a.Malloc(2 * kBlock));
  CUCTX_CUDA_CHECK(cudaMemset(big, 0x7e, 2 * kBlock));
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(DeviceHolds(static_cast<char*>(big) + 2 * kBlock - kMiB, kMiB, 0x7e));
  a.Free(big);
  for (void* p : blocks) a.Free(p);
  EXPECT_EQ(a.GetStats().in_use_bytes, 0u);
  EXPECT_GT(a.ReleaseCachedMemory(), 0u);
}

#endif  // CUCTX_HAVE_CUDA

}  // namespace
}  // namespace cuctx
