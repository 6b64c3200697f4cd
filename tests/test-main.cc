// tests/test-main.cc: gtest main for every test
// binary: selects the device mode and prints the seed.
// SPDX-License-Identifier: Apache-2.0
//
// CUCTX_TEST_GPU=no|optional|yes (default optional) chooses the device of the main thread; the
// banner says "GPU: <name>" or "GPU: none (CPU fallback)", the latter followed by a note that the
// *MatchesCpu tests then check the CPU path against the matrix/ library only (GPU against CPU needs
// a GPU). Every failing test also prints the seed.
// CUCTX_TEST_DEBUG_STRIDE=1 turns on CuDevice::SetDebugStrideMode (device matrices get a larger
// pitch than needed), so code that assumes stride == cols fails.
#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-pinned.h"
#include "cudamatrix/internal/cu-readback.h"
#include "tests/testing.h"

#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <iostream>
#include <string>

namespace {

class SeedPrinter : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed())
      std::printf("  (seed %llu; rerun with CUCTX_TEST_SEED=%llu to reproduce)\n",
                  static_cast<unsigned long long>(cuctx::test::Seed()),
                  static_cast<unsigned long long>(cuctx::test::Seed()));
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  cuctx::SetProgramName(argv[0]);
  try {
    cuctx::CuDevice& device = cuctx::CuDevice::Instantiate();
    device.SelectGpuId(cuctx::test::GpuMode());
    const char* debug_stride = std::getenv("CUCTX_TEST_DEBUG_STRIDE");
    if (debug_stride != nullptr && std::string(debug_stride) == "1")
      device.SetDebugStrideMode(true);
    std::printf("GPU: %s; seed %llu%s\n",
                device.Enabled() ? device.DeviceName().c_str() : "none (CPU fallback)",
                static_cast<unsigned long long>(cuctx::test::Seed()),
                device.GetDebugStrideMode() ? "; debug stride mode" : "");
    if (!device.Enabled())
      std::printf("*MatchesCpu tests check the CPU path against the matrix library only\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "could not select the device (CUCTX_TEST_GPU=%s): %s\n",
                 cuctx::test::GpuMode().c_str(), e.what());
    return 1;
  }
  ::testing::UnitTest::GetInstance()->listeners().Append(new SeedPrinter);
  int status = RUN_ALL_TESTS();
  // Give the main thread's reduction slot and the cached device and pinned memory back, so compute-sanitizer's leak check sees only real
  // leaks (the process-wide allocators are never destroyed).
  cuctx::internal::ReleaseThreadReadbackSlots();
  if (cuctx::CuMemoryAllocator* allocator = cuctx::CuDevice::Instantiate().Allocator())
    allocator->ReleaseCachedMemory();
  cuctx::PinnedHostAllocator::ReleaseAllCaches();
  return status;
}
