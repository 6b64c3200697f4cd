// cutool/health.h: the checks of bin/gpu-health-check,
// their results, the verdict and the JSON report.
// SPDX-License-Identifier: Apache-2.0
//
// Each check is a small function returning one or more CheckResult values; RunHealthChecks runs
// them all on the selected device in a fixed order, and RunBurnIn repeats the compute and memory
// checks for a given time. HealthReport collects the results, prints each as one line
//   PASS|FAIL|SKIP name: measured value (expected ...)
// as it arrives, and gives the verdict, the exit code and a JSON object for monitoring.
//
// Devices and streams: every check works on the device selected through CuDevice (select it first,
// e.g. with SelectHealthCheckDevice) and on the calling thread's stream (cudaStreamPerThread).
// Checks wait for the GPU (they must read results back). The compute checks also run without a GPU
// (they then compare the CPU fallback of the Cu classes with the host reference); the memory,
// bandwidth and NVML checks return SKIP lines saying why.
//
// NOTE ON bandwidth thresholds: they come from the device's own theoretical figures, so the same
// binary judges an H100 and a laptop GPU fairly, and every line says how its bound was derived:
//   DRAM (device-to-device copy, counting the bytes read plus the bytes written):
//     memory bus width (bits) / 8 x memory clock (kHz, from CUDA; else NVML's maximum memory clock)
//     x 2 (double data rate), e.g. 5120 / 8 x 2619 MHz x 2 = 3352 GB/s on an H100 SXM; a copy
//     must reach HealthOptions::dram_fraction (50%) of it.
//   PCIe (pinned host<->device, each direction): lanes x the per-lane rate of the link generation
//     after line encoding (PcieLaneGBps), using NVML's maximum link generation and width for this
//     device in this system. Without NVML we assume PCIe 3.0 x16 (15.8 GB/s), the slowest link a
//     data-centre GPU normally sits on, and say so. A copy must reach pcie_fraction (40%) of it.
// The fractions leave room for protocol overhead (a good PCIe link gives 75-85% of its raw rate,
// a device-to-device copy 80-90% of the DRAM peak) while still catching a link trained at a lower
// generation or width, or memory running at a reduced clock.
#ifndef CUCTX_CUTOOL_HEALTH_H_
#define CUCTX_CUTOOL_HEALTH_H_

#include "base/types.h"
#include "cudamatrix/cu-gemm-check.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {

class NvmlDevice;

enum class CheckStatus { kPass, kFail, kSkip };

// "PASS", "FAIL" or "SKIP".
const char* CheckStatusName(CheckStatus status);

// The outcome of one check.
struct CheckResult {
  std::string name;  // e.g. "sgemm", "memory walking-ones", "bandwidth host-to-device"
  CheckStatus status = CheckStatus::kSkip;
  std::string value;     // what was measured, human-readable ("2891.4 GB/s"); for SKIP the reason
  std::string expected;  // the criterion and how it was derived; empty for SKIP
  bool has_measured = false;  // `measured` holds the main number of `value`, for the JSON
  double measured = 0.0;

  // "PASS name: value (expected ...)"; "SKIP name: reason" for SKIP.
  std::string Line() const;
};

// Makes a result; `passed` chooses PASS or FAIL. The measured number goes to the JSON.
CheckResult MakeResult(const std::string& name, bool passed, double measured,
                       const std::string& value, const std::string& expected);
// Makes a SKIP result with its reason.
CheckResult MakeSkip(const std::string& name, const std::string& reason);

// Runs `check`; if it throws, returns one FAIL result named `name` whose value is "error: " and
// the exception's text, so that one broken check (or a sticky CUDA error) still leaves a complete
// report.
std::vector<CheckResult> RunGuarded(const std::string& name,
                                    const std::function<std::vector<CheckResult>()>& check);

// Options of the checks (the tool's command-line options).
struct HealthOptions {
  double memory_fraction = 0.25;  // of the free device memory found at the start, in (0, 0.95]
  double duration = 0.0;          // burn-in seconds after the first pass (0: none)
  int32 gemm_size = 1024;         // n of the n x n SGEMM and DGEMM, in [1, 4096]
  // Shape of the softmax and reduction checks (>= 1 each); 1000 x 999 is off every block and
  // warp multiple. Not a command-line option: tests make it small.
  int32 kernel_rows = 1000;
  int32 kernel_cols = 999;
  uint64 seed = 20261122;      // random data of the compute checks, seed of the patterns
  double dram_fraction = 0.5;  // see NOTE ON bandwidth thresholds, in (0, 1]
  double pcie_fraction = 0.4;
  // Throws cuctx::Error naming the option when a value is out of range.
  void Check() const;
};

// A bandwidth bound: the theoretical figure, the least acceptable rate and how both were derived.
struct BandwidthThreshold {
  double theoretical_gbps = 0.0;  // 0: unknown (the rate is then reported but not judged)
  double min_gbps = 0.0;
  std::string derivation;  // e.g. "50% of 3352 GB/s theoretical (5120-bit bus x 2619 MHz x 2)"
};

// DRAM: bus_width_bits / 8 * memory_clock_khz * 1e3 * 2 bytes/s. Unknown (theoretical 0) when
// either figure is 0 or less.
BandwidthThreshold DramThreshold(int32 bus_width_bits, int32 memory_clock_khz, double fraction);
// GB/s per lane per direction of a PCIe generation after encoding: 1.0: 0.25, 2.0: 0.5,
// 3.0: 0.985 (8 GT/s, 128b/130b), 4.0: 1.969, 5.0: 3.938, 6.0: 7.563 (64 GT/s, FLIT); 0 for others.
double PcieLaneGBps(int32 generation);
// PCIe: lanes x PcieLaneGBps(generation). `from_nvml` false means the figures are the stated
// assumption (PCIe 3.0 x16), which the derivation then says.
BandwidthThreshold PcieThreshold(int32 generation, int32 width, double fraction, bool from_nvml);
// PASS when measured_gbps >= threshold.min_gbps (always PASS when the theoretical figure is
// unknown, saying so); the value is "<rate> GB/s".
CheckResult JudgeBandwidth(const std::string& name, double measured_gbps,
                           const BandwidthThreshold& threshold);

// HealthReport: the facts and results of one run, in order, and what they add up to.
//
// Not thread-safe. The line sink (if any) gets each fact and result line as it is added, so a
// long run shows progress; the caller chooses the stream (stdout, or stderr when JSON goes to
// stdout).
class HealthReport {
 public:
  using LineSink = std::function<void(const std::string& line)>;
  explicit HealthReport(LineSink sink = LineSink());

  // A device fact ("name", "compute capability", ...), printed as "  key: value".
  void AddFact(const std::string& key, const std::string& value);
  void Add(const CheckResult& result);
  // Prints a free-form line (progress) through the sink; not stored.
  void Note(const std::string& line) const;
  // Marks the run as "no usable GPU" with CUDA's or the build's reason.
  void SetNoGpu(const std::string& reason);
  // Records the burn-in's totals (see RunBurnIn).
  void SetBurnIn(int32 rounds, double seconds, int32 failed_checks);

  const std::vector<CheckResult>& Results() const { return results_; }
  int32 Count(CheckStatus status) const;
  // "no-gpu", "unhealthy" (any FAIL) or "healthy".
  std::string Verdict() const;
  // 3 no GPU, 1 a check failed, 0 healthy.
  int ExitCode() const;
  // "summary: 17 passed, 0 failed, 4 skipped; verdict healthy".
  std::string Summary() const;
  // One JSON object: {"tool", "verdict", "exit_code", "reason" (no GPU only), "device": {facts},
  // "checks": [{"name", "status", "value", "expected", "measured"}], "summary": {counts},
  // "burn_in": {...} (only after a burn-in)}. Strings are escaped; a non-finite number is null.
  std::string ToJson() const;

 private:
  LineSink sink_;
  std::vector<std::pair<std::string, std::string>> facts_;
  std::vector<CheckResult> results_;
  bool no_gpu_ = false;
  std::string no_gpu_reason_;
  bool burn_in_ = false;
  int32 burn_in_rounds_ = 0;
  double burn_in_seconds_ = 0.0;
  int32 burn_in_failed_ = 0;
};

// `text` as a JSON string literal, quotes included: ", \ and control characters escaped (\n, \t,
// \u00XX); other bytes (UTF-8 included) pass through.
std::string JsonString(const std::string& text);
// A JSON number with round-trip precision, or null when not finite.
std::string JsonNumber(double value);

// Selects the GPU to check: device >= 0 takes that CUDA ordinal, otherwise CuDevice::SelectGpuId
// (use_gpu, normally "yes"). Returns false with CUDA's or the build's reason in *why when no GPU
// can be used (including --use-gpu=no and builds without CUDA); never throws for that.
bool SelectHealthCheckDevice(int32 device, const std::string& use_gpu, std::string* why);

// ---- the checks (each one waits for the GPU; exceptions from CUDA propagate) --------------------

// Adds the selected device's facts to the report (name, compute capability, SMs, memory, driver
// and runtime versions, compute mode, ECC state, PCI bus id, memory bus and clock) and returns
// the free device memory in bytes at this moment.
int64 AddDeviceFacts(HealthReport* report);
// The PCI bus id of the selected device ("0000:3B:00.0"), or "" without a GPU.
std::string SelectedPciBusId();

// SGEMM or DGEMM (RunGemmCheck) of n x n random matrices against the host reference.
CheckResult CheckGemm(GemmPrecision precision, int32 n, uint64 seed);
// CuMatrix::SoftMaxPerRow on rows x cols random data (standard normal times 4) against a softmax
// computed in the check itself in long double (not the library's CPU path, which a CPU-only run
// of CuMatrix would otherwise compare with itself); passes at a relative error <= 1e-5 (float) or
// 1e-12 (double).
template <typename Real>
CheckResult CheckSoftMax(int32 rows, int32 cols, uint64 seed);
// CuMatrix::Sum and CuVector::AddColSumMat (the sum of each row, in Kaldi's naming) against host
// sums in a wider type.
template <typename Real>
CheckResult CheckSum(int32 rows, int32 cols, uint64 seed);
template <typename Real>
CheckResult CheckRowSums(int32 rows, int32 cols, uint64 seed);
// All compute checks above, in order, with the options' sizes and `seed`, each through RunGuarded.
std::vector<CheckResult> ComputeChecks(const HealthOptions& options, uint64 seed);

// Walking ones, own address and random pattern over `bytes` of device memory taken from the
// caching allocator in chunks of at most 1 GiB (fewer if memory runs out; the value says so):
// every chunk is written, then every chunk verified, per pattern. One result per pattern; FAIL on
// any bad word. `seed` varies the patterns between burn-in rounds. SKIP without a GPU.
std::vector<CheckResult> CheckMemoryPatterns(int64 bytes, uint64 seed);

// Device-to-device, host-to-device and device-to-host copy rates (pinned host memory), judged as
// in NOTE ON bandwidth thresholds; `nvml` (may be unavailable) supplies the PCIe link and, when
// CUDA does not report it, the memory clock. SKIP without a GPU.
std::vector<CheckResult> CheckBandwidth(const HealthOptions& options, const NvmlDevice& nvml);

// Temperature, clocks, clock-event (throttle) reasons, ECC error counts, power and PCIe link from
// NVML. Each line is SKIP with the reason when NVML or the query is not available.
std::vector<CheckResult> CheckNvml(const NvmlDevice& nvml);

// Runs every check once on the selected device (facts, compute, memory, bandwidth, NVML), adding
// them to *report. A check that throws becomes a FAIL line with the exception's text. Returns the
// free device memory found at the start (for RunBurnIn).
int64 RunHealthChecks(const HealthOptions& options, HealthReport* report);

// Repeats the compute and memory checks until options.duration seconds have passed (at least one
// round when duration > 0), printing a progress line per round ("burn-in round 3: 12.4 s,
// 0 failed checks so far") and adding only the failing results (named "... [burn-in round N]").
// `free_bytes` is the free memory found at the start. Records the totals with SetBurnIn.
void RunBurnIn(const HealthOptions& options, int64 free_bytes, HealthReport* report);

}  // namespace cuctx

#endif  // CUCTX_CUTOOL_HEALTH_H_
