// bin/cuda-gpu-available.cc: says whether a usable GPU is present, describes it, and checks a GEMM.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-gemm-check.h"
#include "cutool/tool.h"

#include <cstdio>
#include <exception>
#include <string>
#include <unistd.h>

namespace {

// Exit codes: Kaldi's 1 for a build without CUDA; 2 is cuctx::kToolExitUsage; no usable GPU is
// cuctx's kToolExitNoGpu (3) as in every tool (Kaldi's cuda-gpu-available returns -1, i.e. 255,
// which collides with scripts' "-1" conventions).
constexpr int kExitOk = 0;
constexpr int kExitNoCuda = 1;
constexpr int kExitNoGpu = cuctx::kToolExitNoGpu;

const char* kUsage =
    "Checks whether a usable CUDA GPU is present: selects one as --use-gpu says, prints the host,\n"
    "the device and the CUDA versions, and checks a small matrix product against the CPU.\n"
    "\n"
    "Usage: cuda-gpu-available [options]\n"
    "Exit status: 0 the GPU works (or, with --use-gpu=optional|no, the CPU computation passed);\n"
    "  1 cuctx was built without CUDA; 2 usage error; 3 no usable GPU or the computation "
    "failed.\n";

std::string FormatVersion(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The status for a run whose check passed: a CPU-only build always answers 1.
constexpr int kExitPassed = CUCTX_HAVE_CUDA ? kExitOk : kExitNoCuda;

void PrintDevice(cuctx::CuDevice& device) {
  const cuctx::CuDeviceProperties& p = device.Properties();
  int64_t free_bytes = 0, total_bytes = 0;
  std::string memory = cuctx::GetFreeGpuMemory(&free_bytes, &total_bytes);
  std::printf("GPU %d: %s\n", p.id, p.name.c_str());
  std::printf("  compute capability %d.%d, %d SMs\n", p.major, p.minor, p.multiprocessors);
  std::printf("  memory: %s\n", memory.c_str());
  std::printf("  CUDA driver %s, runtime %s\n", FormatVersion(p.driver_version).c_str(),
              FormatVersion(p.runtime_version).c_str());
}

int Body(const cuctx::ToolArgs& args) {
  char host[256] = "unknown";
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  std::printf("host: %s\n", host);
  if (!CUCTX_HAVE_CUDA)
    std::printf("cuctx was built without CUDA (make CUDA=0): no GPU can be used\n");

  cuctx::CuDevice& device = cuctx::CuDevice::Instantiate();
  try {
    device.SelectGpuId(args.UseGpu());
  } catch (const std::exception& e) {
    std::printf("GPU: none: %s\n", cuctx::ToolMessage(e.what()).c_str());
    return CUCTX_HAVE_CUDA ? kExitNoGpu : kExitNoCuda;
  }
  // Every failure from here on means the device (or the CPU fallback) does not work: 3, not the
  // generic 1, which this tool reserves for "built without CUDA".
  try {
    if (device.Enabled())
      PrintDevice(device);
    else
      std::printf("GPU: none (%s); running the check on the CPU\n", device.NoGpuReason().c_str());
    cuctx::GemmCheckResult check = cuctx::RunGemmCheck(256, 1234);
    std::printf("check: %s: %s\n", check.Summary().c_str(), check.passed ? "OK" : "FAILED");
    if (!check.passed) return kExitNoGpu;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "cuda-gpu-available: %s\n", cuctx::ToolMessage(e.what()).c_str());
    return kExitNoGpu;
  }
  return kExitPassed;
}

}  // namespace

int main(int argc, char* argv[]) {
  cuctx::ToolSpec spec{kUsage, 0, 0, cuctx::ToolGpu::kOptionsOnly, "yes"};
  return cuctx::RunTool(argc, argv, spec, nullptr, Body);
}
