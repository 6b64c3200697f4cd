// bin/gpu-health-check.cc: checks one GPU thoroughly (compute, memory, bandwidth, NVML sensors)
// and says whether it is healthy, for people, cluster prologues and monitoring.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "cutool/health.h"
#include "cutool/tool.h"

#include <cstdio>
#include <fstream>
#include <string>

namespace {

const char* kUsage =
    "Checks one GPU: device facts; SGEMM, DGEMM, softmax and reductions against the CPU; a\n"
    "memory pattern test (walking ones, address-in-address, random) over a fraction of the free\n"
    "memory; device-to-device and pinned host<->device bandwidth against thresholds derived from\n"
    "the device's own theoretical figures; and, where libnvidia-ml.so.1 is available, "
    "temperature,\n"
    "clocks, throttle reasons, ECC error counts, power and the PCIe link. Each check prints one\n"
    "line 'PASS|FAIL|SKIP name: measured value (expected ...)', then a summary.\n"
    "\n"
    "Usage: gpu-health-check [options]\n"
    "  e.g. gpu-health-check --device=1 --duration=60 --json > health.json\n"
    "Exit status: 0 healthy; 1 a check failed; 2 usage error; 3 no usable GPU (or cuctx was built\n"
    "  without CUDA).\n";

}  // namespace

int main(int argc, char* argv[]) {
  cuctx::HealthOptions options;
  int32_t device = -1;
  bool json = false;
  std::string json_file;
  auto register_options = [&](cuctx::ParseOptions* po) {
    po->Register("device", &device,
                 "CUDA device ordinal to check (after CUDA_VISIBLE_DEVICES); -1: the one "
                 "--use-gpu selects");
    po->Register("memory-fraction", &options.memory_fraction,
                 "Fraction of the free device memory the pattern test covers, in (0, 0.95]");
    po->Register("duration", &options.duration,
                 "Burn-in: after the first pass, repeat the compute and memory checks for this "
                 "many seconds (0: no burn-in)");
    po->Register("gemm-size", &options.gemm_size, "n of the n x n SGEMM and DGEMM checks");
    po->Register("dram-fraction", &options.dram_fraction,
                 "Least device-to-device copy rate, as a fraction of the theoretical DRAM rate");
    po->Register("pcie-fraction", &options.pcie_fraction,
                 "Least host<->device copy rate, as a fraction of the theoretical PCIe rate");
    po->Register("json", &json,
                 "Write one JSON object (facts, checks, verdict) to stdout; the check lines then "
                 "go to stderr");
    po->Register("json-file", &json_file,
                 "Write the JSON object to this file instead (the lines stay on stdout)");
  };

  auto body = [&](const cuctx::ToolArgs& args) {
    try {
      options.Check();
    } catch (const cuctx::Error& e) {
      throw cuctx::ToolUsageError(e.what());
    }
    if (device < -1) throw cuctx::ToolUsageError("--device must be >= -1");
    std::FILE* lines = json && json_file.empty() ? stderr : stdout;
    cuctx::HealthReport report([lines](const std::string& line) {
      std::fprintf(lines, "%s\n", line.c_str());
      std::fflush(lines);
    });

    std::string why;
    if (cuctx::SelectHealthCheckDevice(device, args.UseGpu(), &why)) {
      const int64_t free_bytes = cuctx::RunHealthChecks(options, &report);
      if (options.duration > 0) cuctx::RunBurnIn(options, free_bytes, &report);
    } else {
      report.SetNoGpu(why);
      report.Note("no usable GPU: " + why);
    }
    report.Note(report.Summary());

    if (!json_file.empty()) {
      std::ofstream out(json_file);
      out << report.ToJson() << "\n";
      out.close();
      if (!out) CUCTX_ERR << "could not write the JSON report to '" << json_file << "'";
    } else if (json) {
      std::printf("%s\n", report.ToJson().c_str());
    }
    return report.ExitCode();  // 0 healthy, 1 a check failed, 3 no usable GPU
  };

  cuctx::ToolSpec spec{kUsage, 0, 0, cuctx::ToolGpu::kOptionsOnly, "yes"};
  return cuctx::RunTool(argc, argv, spec, register_options, body);
}
