// tests/cudamatrix/cu-device-test.cc: device selection,
// per-thread instances, profiling, health check.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-device.h"

#include "base/error.h"
#include "base/options-itf.h"
#include "base/parse-options.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-gemm-check.h"
#include "cudamatrix/internal/cu-launch.h"
#include "tests/testing.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

// Collects log messages while in scope.
class LogCapture {
 public:
  LogCapture() {
    old_ = SetLogHandler(&LogCapture::Handle);
    Lines().clear();
  }
  ~LogCapture() { SetLogHandler(old_); }
  static std::vector<std::string>& Lines() {
    static std::vector<std::string> lines;
    return lines;
  }
  static bool Contains(const std::string& needle) {
    std::lock_guard<std::mutex> lock(Mutex());
    for (const std::string& line : Lines())
      if (line.find(needle) != std::string::npos) return true;
    return false;
  }

 private:
  static std::mutex& Mutex() {
    static std::mutex mutex;
    return mutex;
  }
  static void Handle(const LogMessageEnvelope& e, const char* message) {
    std::lock_guard<std::mutex> lock(Mutex());
    Lines().push_back(FormatLogLine(e, message));
  }
  LogHandler old_;
};

TEST(CuDeviceTest, RejectsUnknownModeListingTheFour) {
  try {
    CuDevice::Instantiate().SelectGpuId("maybe");
    FAIL() << "no exception";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("maybe"), std::string::npos) << what;
    EXPECT_NE(what.find("yes, no, optional or wait"), std::string::npos) << what;
  }
}

TEST(CuDeviceTest, SelectingYesFailsWithTheReasonOrWhenAlreadySelected) {
  CuDevice& device = CuDevice::Instantiate();
  if (test::GpuMode() == "no") {
    // There may be a GPU, and "yes" would take it; CPU mode records why it is not used instead.
    EXPECT_EQ(device.NoGpuReason(), "--use-gpu=no");
    return;
  }
  try {
    device.SelectGpuId("yes");
    FAIL() << "no exception";
  } catch (const Error& e) {
    std::string what = e.what();
    if (test::GpuEnabled()) {
      EXPECT_NE(what.find("already selected"), std::string::npos) << what;
    } else {
      // "optional" found no GPU, so "yes" must fail and say why (CUDA's reason, or no CUDA).
      EXPECT_NE(what.find("--use-gpu=yes but"), std::string::npos) << what;
      EXPECT_FALSE(device.NoGpuReason().empty());
    }
  }
}

TEST(CuDeviceTest, CpuModeWorksWithoutGpu) {
  CuDevice& device = CuDevice::Instantiate();
  if (test::GpuEnabled()) {
    // Once a GPU is selected, any further selection is an error.
    EXPECT_THROW(device.SelectGpuId("no"), Error);
    return;
  }
  EXPECT_NO_THROW(device.SelectGpuId("no"));
  // "optional" is safe to repeat only where it already found no GPU.
  if (test::GpuMode() != "no") {
    EXPECT_NO_THROW(device.SelectGpuId("optional"));
  }
  EXPECT_FALSE(device.Enabled());
  EXPECT_EQ(device.DeviceId(), -1);
  EXPECT_EQ(device.DeviceName(), "none");
  EXPECT_EQ(device.GetMatrixAlignment(), 0);
  // Kaldi's tests run their double pass only when this is true; the CPU path has double.
  EXPECT_TRUE(device.DoublePrecisionSupported());
  EXPECT_EQ(device.Allocator(), nullptr);
  EXPECT_THROW(device.Properties(), Error);
  EXPECT_THROW(device.GetCublasHandle(), Error);
  EXPECT_THROW(device.Malloc(16), Error);
  EXPECT_THROW(GetFreeGpuMemory(nullptr, nullptr), Error);
  EXPECT_NO_THROW(device.Free(nullptr));
  EXPECT_NO_THROW(SynchronizeGpu());
  EXPECT_NO_THROW(device.CheckGpuHealth());
  EXPECT_NO_THROW(device.SeedGpu(7));
  EXPECT_NO_THROW(device.PrintMemoryUsage());
}

TEST(CuDeviceTest, DebugStrideModeIsProcessWide) {
  CuDevice& device = CuDevice::Instantiate();
  bool old = device.SetDebugStrideMode(true);
  EXPECT_TRUE(device.GetDebugStrideMode());
  EXPECT_TRUE(device.SetDebugStrideMode(old));
  EXPECT_EQ(device.GetDebugStrideMode(), old);
}

TEST(CuDeviceTest, MallocGoesThroughTheCachingAllocator) {
  CUCTX_REQUIRE_GPU();
  CuDevice& device = CuDevice::Instantiate();
  ASSERT_NE(device.Allocator(), nullptr);
  size_t before = device.Allocator()->GetAllocatedMemory();
  void* p = device.Malloc(1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  EXPECT_EQ(device.Allocator()->GetAllocatedMemory(), before + 1024);
  size_t pitch = 0;
  void* q = device.MallocPitch(100, 7, &pitch);
  EXPECT_EQ(pitch % 256, 0u);
  EXPECT_GE(pitch, 100u);
  device.Free(q);
  device.Free(p);
  EXPECT_EQ(device.Allocator()->GetAllocatedMemory(), before);
  EXPECT_THROW(device.Free(p), Error);  // a double free is an error, not a crash
  EXPECT_EQ(device.Malloc(0), nullptr);
}

TEST(CuDeviceTest, EachThreadHasItsOwnInstanceOnTheSameDevice) {
  CuDevice* main_instance = &CuDevice::Instantiate();
  CuDevice* other_instance = nullptr;
  int other_id = -2;
  bool other_enabled = false;
  std::thread t([&] {
    other_instance = &CuDevice::Instantiate();
    other_id = other_instance->DeviceId();
    other_enabled = other_instance->Enabled();
  });
  t.join();
  EXPECT_NE(main_instance, other_instance);
  EXPECT_EQ(other_id, main_instance->DeviceId());
  EXPECT_EQ(other_enabled, main_instance->Enabled());
}

TEST(CuDeviceTest, GpuPropertiesAreFilledIn) {
  CUCTX_REQUIRE_GPU();
  const CuDeviceProperties& p = CuDevice::Instantiate().Properties();
  EXPECT_GE(p.id, 0);
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.major, 5);
  EXPECT_TRUE(CuDevice::Instantiate().DoublePrecisionSupported());  // every card since 1.3
  EXPECT_GT(p.multiprocessors, 0);
  EXPECT_GT(p.total_memory, int64{1} << 30);
  EXPECT_GE(p.driver_version, p.runtime_version / 1000 * 1000);
  int64 free_bytes = 0, total_bytes = 0;
  std::string summary = GetFreeGpuMemory(&free_bytes, &total_bytes);
  EXPECT_GT(free_bytes, 0);
  EXPECT_LE(free_bytes, total_bytes);
  EXPECT_NE(summary.find("free/total:"), std::string::npos) << summary;
  char name[256];
  CuDevice::Instantiate().DeviceGetName(name, sizeof(name), p.id);
  EXPECT_EQ(p.name, name);
  EXPECT_EQ(CuDevice::Instantiate().GetMatrixAlignment(), 256);
}

// Must run before any test that calls AllowMultithreading (gtest keeps file order).
TEST(CuDeviceTest, SecondThreadWithoutAllowMultithreadingWarns) {
  CUCTX_REQUIRE_GPU();
  LogCapture capture;
  EXPECT_NE(CuDevice::Instantiate().GetCublasHandle(), nullptr);  // main thread uses it first
  std::thread t([] { EXPECT_NE(CuDevice::Instantiate().GetCublasHandle(), nullptr); });
  t.join();
  EXPECT_TRUE(LogCapture::Contains("without CuDevice::AllowMultithreading()"));
}

TEST(CuDeviceTest, HandlesAreCreatedPerThreadAndReused) {
  CUCTX_REQUIRE_GPU();
  CuDevice& device = CuDevice::Instantiate();
  device.AllowMultithreading();
  cublasContext* first = device.GetCublasHandle();
  EXPECT_EQ(first, device.GetCublasHandle());
  EXPECT_NE(device.GetCusparseHandle(), nullptr);
  EXPECT_NE(device.GetCurandHandle(), nullptr);
  EXPECT_NE(device.GetCusolverDnHandle(), nullptr);
  cublasContext* other = nullptr;
  std::thread t([&] { other = CuDevice::Instantiate().GetCublasHandle(); });
  t.join();
  EXPECT_NE(other, nullptr);
  EXPECT_NE(other, first);
}

TEST(CuDeviceTest, SelectGpuIdLoadedTheKernelsOfEveryKernelFile) {
  CUCTX_REQUIRE_GPU();
  // The test's main called SelectGpuId, which loaded every kernel of the kernel files linked into
  // this program (CUDA_MODULE_LOADING is left as it is, lazy by default): a second pass finds them
  // all loaded.
  internal::KernelLoadSummary summary;
  std::string why_not;
  ASSERT_TRUE(internal::LoadCuctxKernels(&summary, &why_not)) << why_not;
  EXPECT_GE(summary.files, 1);
  EXPECT_GT(summary.kernels, summary.files);
  EXPECT_EQ(summary.loaded, 0) << "of " << summary.kernels << " kernels in " << summary.files
                               << " files";
}

TEST(CuDeviceTest, HealthCheckAndGemmCheckPass) {
  EXPECT_NO_THROW(CuDevice::Instantiate().CheckGpuHealth());
  GemmCheckResult r = RunGemmCheck(33, 5);
  EXPECT_TRUE(r.passed) << r.Summary();
  EXPECT_EQ(r.on_gpu, test::GpuEnabled());
  EXPECT_LT(r.rel_error, 1e-5) << r.Summary();
  EXPECT_THROW(RunGemmCheck(0, 1), Error);
  EXPECT_THROW(RunGemmCheck(5000, 1), Error);
}

TEST(CuDeviceTest, ProfileAccumulatesAtVerboseOne) {
  int old_level = GetVerboseLevel();
  SetVerboseLevel(1);
  {
    LogCapture capture;
    CuDevice& device = CuDevice::Instantiate();
    CuTimer timer;
    EXPECT_TRUE(timer.Active());
    device.AccuProfile("ProfiledThing", timer);
    device.AccuProfile("ProfiledThing", timer);
    device.PrintProfile();
    EXPECT_TRUE(LogCapture::Contains("ProfiledThing")) << "profile not printed";
    EXPECT_TRUE(LogCapture::Contains("(2 calls)"));
  }
  SetVerboseLevel(0);
  CuTimer inactive;
  EXPECT_FALSE(inactive.Active());
  SetVerboseLevel(old_level);
}

TEST(CuDeviceTest, DeviceOptionsRegister) {
  ParseOptions po("test");
  CuDevice::RegisterDeviceOptions(&po);
  const char* argv[] = {"prog", "--cuda-use-tf32-compute=true", "--cuda-use-tensor-cores=false"};
  CuDeviceOptions saved = CuDevice::DeviceOptions();
  po.Read(3, const_cast<char**>(argv));
  EXPECT_TRUE(CuDevice::DeviceOptions().use_tf32_compute);
  EXPECT_FALSE(CuDevice::DeviceOptions().use_tensor_cores);
  CuDevice::DeviceOptions() = saved;
}

}  // namespace
}  // namespace cuctx
