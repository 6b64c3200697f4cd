// cutool/health.cc: the GPU health check's results, verdict, JSON, thresholds, checks and runner.
// SPDX-License-Identifier: Apache-2.0
#include "cutool/health.h"

#include "base/error.h"
#include "base/random.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-pinned.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-storage.h"
#include "cutool/health-kernels.h"
#include "cutool/nvml.h"
#include "cutool/tool.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"

#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>

namespace cuctx {
namespace {

std::string Printf(const char* format, double a, double b = 0.0, double c = 0.0) {
  char text[128];
  std::snprintf(text, sizeof(text), format, a, b, c);
  return text;
}

// Adds RunGuarded(name, check)'s results to the report; returns how many failed.
int32 AddGuarded(const std::string& name, const std::function<std::vector<CheckResult>()>& check,
                 HealthReport* report) {
  int32 failed = 0;
  for (const CheckResult& r : RunGuarded(name, check)) {
    if (r.status == CheckStatus::kFail) ++failed;
    report->Add(r);
  }
  return failed;
}

}  // namespace

std::vector<CheckResult> RunGuarded(const std::string& name,
                                    const std::function<std::vector<CheckResult>()>& check) {
  try {
    return check();
  } catch (const std::exception& e) {
    return {MakeResult(name, false, NAN, "error: " + ToolMessage(e.what()), "no error")};
  }
}

const char* CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass:
      return "PASS";
    case CheckStatus::kFail:
      return "FAIL";
    default:
      return "SKIP";
  }
}

std::string CheckResult::Line() const {
  std::string line = std::string(CheckStatusName(status)) + " " + name + ": " + value;
  if (!expected.empty()) line += " (expected " + expected + ")";
  return line;
}

CheckResult MakeResult(const std::string& name, bool passed, double measured,
                       const std::string& value, const std::string& expected) {
  CheckResult r;
  r.name = name;
  r.status = passed ? CheckStatus::kPass : CheckStatus::kFail;
  r.value = value;
  r.expected = expected;
  r.has_measured = true;
  r.measured = measured;
  return r;
}

CheckResult MakeSkip(const std::string& name, const std::string& reason) {
  CheckResult r;
  r.name = name;
  r.status = CheckStatus::kSkip;
  r.value = reason;
  return r;
}

void HealthOptions::Check() const {
  // Plain messages (no condition text): they are shown to the tool's user as usage errors.
  if (!(memory_fraction > 0.0 && memory_fraction <= 0.95))
    CUCTX_ERR << "--memory-fraction must be in (0, 0.95], got " << memory_fraction;
  if (!(duration >= 0.0 && std::isfinite(duration)))
    CUCTX_ERR << "--duration must be >= 0 seconds, got " << duration;
  if (gemm_size < 1 || gemm_size > 4096)
    CUCTX_ERR << "--gemm-size must be in [1, 4096], got " << gemm_size;
  if (kernel_rows < 1 || kernel_cols < 1)
    CUCTX_ERR << "the softmax/reduction shape must be at least 1x1, got " << kernel_rows << "x"
              << kernel_cols;
  if (!(dram_fraction > 0.0 && dram_fraction <= 1.0))
    CUCTX_ERR << "--dram-fraction must be in (0, 1], got " << dram_fraction;
  if (!(pcie_fraction > 0.0 && pcie_fraction <= 1.0))
    CUCTX_ERR << "--pcie-fraction must be in (0, 1], got " << pcie_fraction;
}

// ---- thresholds
// ----------------------------------------------------------------------------------

BandwidthThreshold DramThreshold(int32 bus_width_bits, int32 memory_clock_khz, double fraction) {
  BandwidthThreshold t;
  if (bus_width_bits <= 0 || memory_clock_khz <= 0) {
    t.derivation = "theoretical DRAM bandwidth unknown (no memory bus width or clock); not judged";
    return t;
  }
  t.theoretical_gbps = bus_width_bits / 8.0 * memory_clock_khz * 1e3 * 2.0 / 1e9;
  t.min_gbps = fraction * t.theoretical_gbps;
  t.derivation = Printf(">= %.0f%% of %.0f GB/s theoretical", fraction * 100, t.theoretical_gbps) +
                 Printf(" = %.0f-bit bus x %.0f MHz x 2", bus_width_bits, memory_clock_khz / 1e3);
  return t;
}

double PcieLaneGBps(int32 generation) {
  switch (generation) {
    case 1:
      return 0.25;  // 2.5 GT/s, 8b/10b
    case 2:
      return 0.5;  // 5 GT/s, 8b/10b
    case 3:
      return 8.0 * 128 / 130 / 8;  // 8 GT/s, 128b/130b
    case 4:
      return 16.0 * 128 / 130 / 8;
    case 5:
      return 32.0 * 128 / 130 / 8;
    case 6:
      return 64.0 * 242 / 256 / 8;  // 64 GT/s, FLIT mode (242 payload bytes of 256)
    default:
      return 0.0;
  }
}

BandwidthThreshold PcieThreshold(int32 generation, int32 width, double fraction, bool from_nvml) {
  BandwidthThreshold t;
  const double lane = PcieLaneGBps(generation);
  if (lane <= 0.0 || width <= 0) {
    t.derivation = "theoretical PCIe bandwidth unknown (link generation " +
                   std::to_string(generation) + ", width " + std::to_string(width) +
                   "); not judged";
    return t;
  }
  t.theoretical_gbps = lane * width;
  t.min_gbps = fraction * t.theoretical_gbps;
  t.derivation = Printf(">= %.0f%% of %.1f GB/s theoretical", fraction * 100, t.theoretical_gbps) +
                 Printf(" = PCIe %.0f.0 x%.0f", generation, width) +
                 (from_nvml ? " (NVML max link)" : " (assumed: NVML not available)");
  return t;
}

CheckResult JudgeBandwidth(const std::string& name, double measured_gbps,
                           const BandwidthThreshold& threshold) {
  const bool judged = threshold.theoretical_gbps > 0.0;
  const bool passed = !judged || measured_gbps >= threshold.min_gbps;
  return MakeResult(name, passed, measured_gbps, Printf("%.1f GB/s", measured_gbps),
                    threshold.derivation);
}

// ---- report
// --------------------------------------------------------------------------------------

HealthReport::HealthReport(LineSink sink) : sink_(std::move(sink)) {}

void HealthReport::AddFact(const std::string& key, const std::string& value) {
  facts_.emplace_back(key, value);
  Note("  " + key + ": " + value);
}

void HealthReport::Add(const CheckResult& result) {
  results_.push_back(result);
  Note(result.Line());
}

void HealthReport::Note(const std::string& line) const {
  if (sink_) sink_(line);
}

void HealthReport::SetNoGpu(const std::string& reason) {
  no_gpu_ = true;
  no_gpu_reason_ = reason;
}

void HealthReport::SetBurnIn(int32 rounds, double seconds, int32 failed_checks) {
  burn_in_ = true;
  burn_in_rounds_ = rounds;
  burn_in_seconds_ = seconds;
  burn_in_failed_ = failed_checks;
}

int32 HealthReport::Count(CheckStatus status) const {
  int32 n = 0;
  for (const CheckResult& r : results_) n += r.status == status ? 1 : 0;
  return n;
}

std::string HealthReport::Verdict() const {
  if (no_gpu_) return "no-gpu";
  return Count(CheckStatus::kFail) > 0 ? "unhealthy" : "healthy";
}

int HealthReport::ExitCode() const {
  if (no_gpu_) return kToolExitNoGpu;
  return Count(CheckStatus::kFail) > 0 ? 1 : 0;
}

std::string HealthReport::Summary() const {
  std::ostringstream out;
  out << "summary: " << Count(CheckStatus::kPass) << " passed, " << Count(CheckStatus::kFail)
      << " failed, " << Count(CheckStatus::kSkip) << " skipped; verdict " << Verdict();
  if (no_gpu_) out << " (" << no_gpu_reason_ << ")";
  return out.str();
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

std::string HealthReport::ToJson() const {
  std::ostringstream out;
  out << "{\"tool\": \"gpu-health-check\", \"verdict\": " << JsonString(Verdict())
      << ", \"exit_code\": " << ExitCode();
  if (no_gpu_) out << ", \"reason\": " << JsonString(no_gpu_reason_);
  out << ", \"device\": {";
  for (size_t i = 0; i < facts_.size(); ++i)
    out << (i ? ", " : "") << JsonString(facts_[i].first) << ": " << JsonString(facts_[i].second);
  out << "}, \"checks\": [";
  for (size_t i = 0; i < results_.size(); ++i) {
    const CheckResult& r = results_[i];
    out << (i ? ", " : "") << "{\"name\": " << JsonString(r.name)
        << ", \"status\": " << JsonString(CheckStatusName(r.status))
        << ", \"value\": " << JsonString(r.value) << ", \"expected\": " << JsonString(r.expected)
        << ", \"measured\": " << (r.has_measured ? JsonNumber(r.measured) : "null") << "}";
  }
  out << "], \"summary\": {\"passed\": " << Count(CheckStatus::kPass)
      << ", \"failed\": " << Count(CheckStatus::kFail)
      << ", \"skipped\": " << Count(CheckStatus::kSkip) << "}";
  if (burn_in_)
    out << ", \"burn_in\": {\"rounds\": " << burn_in_rounds_
        << ", \"seconds\": " << JsonNumber(burn_in_seconds_)
        << ", \"failed_checks\": " << burn_in_failed_ << "}";
  out << "}";
  return out.str();
}

// ---- device facts
// --------------------------------------------------------------------------------

namespace {

std::string Mib(int64 bytes) { return Printf("%.0f MiB", bytes / 1048576.0); }

std::string CudaVersionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

const char* ComputeModeName(int mode) {
  switch (mode) {  // cudaComputeMode values
    case 0:
      return "default";
    case 1:
      return "exclusive-thread";
    case 2:
      return "prohibited";
    case 3:
      return "exclusive-process";
    default:
      return "unknown";
  }
}

}  // namespace

std::string SelectedPciBusId() {
#if CUCTX_HAVE_CUDA
  if (!CuDevice::Instantiate().Enabled()) return "";
  char bus_id[64] = {0};
  CUCTX_CUDA_CHECK(
      cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), CuDevice::Instantiate().DeviceId()));
  return bus_id;
#else
  return "";
#endif
}

int64 AddDeviceFacts(HealthReport* report) {
  const CuDeviceProperties& p = CuDevice::Instantiate().Properties();
  int64 free_bytes = 0, total_bytes = 0;
  GetFreeGpuMemory(&free_bytes, &total_bytes);
  report->AddFact("device", std::to_string(p.id));
  report->AddFact("name", p.name);
  report->AddFact("pci bus id", SelectedPciBusId());
  report->AddFact("compute capability", std::to_string(p.major) + "." + std::to_string(p.minor));
  report->AddFact("multiprocessors", std::to_string(p.multiprocessors));
  report->AddFact("memory total", Mib(total_bytes));
  report->AddFact("memory free", Mib(free_bytes));
  report->AddFact("memory bus", std::to_string(p.memory_bus_width) + " bits, " +
                                    Printf("%.0f MHz", p.memory_clock_khz / 1e3));
  report->AddFact("driver", CudaVersionText(p.driver_version));
  report->AddFact("runtime", CudaVersionText(p.runtime_version));
  report->AddFact("compute mode", ComputeModeName(p.compute_mode));
  report->AddFact("ecc", p.ecc_enabled ? "enabled" : "disabled");
  return free_bytes;
}

// ---- compute
// -------------------------------------------------------------------------------------

namespace {

template <typename Real>
const char* TypeName() {
  return sizeof(Real) == sizeof(float) ? "float" : "double";
}

// Relative error bound (Frobenius norm of the difference over that of the long double reference)
// of the softmax, sum and row-sum checks: float 1e-5 and double 1e-12, about 170 and 9000 units
// of rounding of Real. A correct softmax is off by a few units per element (exp, the row sum, the
// division); the sums leave room for the summation order (a tree on the GPU, another on the host).
template <typename Real>
double ComputeTolerance() {
  return sizeof(Real) == sizeof(float) ? 1e-5 : 1e-12;
}

// Every compute check compares the Cu result with a reference computed in the check itself in
// long double, never with the library's own CPU path (which is what Cu ops fall back to).
std::string Where() {
  return CuDevice::Instantiate().Enabled() ? "GPU vs long double reference"
                                           : "CPU fallback vs long double reference";
}

// rows x cols random values: standard normal times 4 (softmax inputs with a wide range), or
// uniform in (0, 1) (positive, so that sums have no cancellation and a relative error is fair).
template <typename Real>
Matrix<Real> RandomHostMatrix(int32 rows, int32 cols, uint64 seed, bool positive) {
  Matrix<Real> m(rows, cols, kUndefined);
  RandomState state(seed);
  for (int32 r = 0; r < rows; ++r)
    for (int32 c = 0; c < cols; ++c)
      m(r, c) = positive ? RandUniform(&state) : 4 * RandGauss(&state);
  return m;
}

// ||got - want||_F / ||want||_F over `n` values, accumulated in long double.
template <typename Real, typename GetFn, typename WantFn>
double RelativeError(int64 n, GetFn got, WantFn want) {
  long double diff2 = 0, ref2 = 0;
  for (int64 i = 0; i < n; ++i) {
    const long double w = want(i), d = static_cast<long double>(got(i)) - w;
    diff2 += d * d;
    ref2 += w * w;
  }
  return static_cast<double>(ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2));
}

template <typename Real>
CheckResult JudgeCompute(const std::string& name, double rel_error, int32 rows, int32 cols) {
  const double tol = ComputeTolerance<Real>();
  const bool passed = std::isfinite(rel_error) && rel_error <= tol;
  return MakeResult(name, passed, rel_error,
                    Printf("relative error %.2e", rel_error) + " (" + Where() + ", " +
                        std::to_string(rows) + "x" + std::to_string(cols) + " " + TypeName<Real>() +
                        ")",
                    Printf("<= %.0e", tol));
}

}  // namespace

CheckResult CheckGemm(GemmPrecision precision, int32 n, uint64 seed) {
  GemmCheckResult g = RunGemmCheck(n, seed, precision);
  return MakeResult(precision == GemmPrecision::kFloat ? "sgemm" : "dgemm", g.passed, g.rel_error,
                    g.Summary(), Printf("relative error <= %.1e = 4 n u", g.tolerance));
}

template <typename Real>
CheckResult CheckSoftMax(int32 rows, int32 cols, uint64 seed) {
  Matrix<Real> src = RandomHostMatrix<Real>(rows, cols, seed, false);
  // The reference, written out here: y_rc = exp(x_rc - max_r) / sum_c' exp(x_rc' - max_r), in
  // long double, so that it shares no code and no rounding with Matrix::SoftMaxPerRow.
  std::vector<long double> want(static_cast<size_t>(rows) * cols);
  for (int32 r = 0; r < rows; ++r) {
    long double max = src(r, 0), sum = 0;
    for (int32 c = 1; c < cols; ++c) max = std::max<long double>(max, src(r, c));
    for (int32 c = 0; c < cols; ++c) {
      const long double e = std::exp(static_cast<long double>(src(r, c)) - max);
      want[static_cast<size_t>(r) * cols + c] = e;
      sum += e;
    }
    for (int32 c = 0; c < cols; ++c) want[static_cast<size_t>(r) * cols + c] /= sum;
  }
  Matrix<Real> got(rows, cols, kUndefined);
  CuMatrix<Real> cu_src(src), cu_out(rows, cols, kUndefined);
  cu_out.SoftMaxPerRow(cu_src);
  cu_out.CopyToMat(&got);
  double err = RelativeError<Real>(
      static_cast<int64>(rows) * cols, [&](int64 i) { return got(i / cols, i % cols); },
      [&](int64 i) { return want[i]; });
  return JudgeCompute<Real>(std::string("softmax ") + TypeName<Real>(), err, rows, cols);
}

template <typename Real>
CheckResult CheckSum(int32 rows, int32 cols, uint64 seed) {
  Matrix<Real> src = RandomHostMatrix<Real>(rows, cols, seed, true);
  long double want = 0;
  for (int32 r = 0; r < rows; ++r)
    for (int32 c = 0; c < cols; ++c) want += src(r, c);
  const Real got = CuMatrix<Real>(src).Sum();
  double err = RelativeError<Real>(
      1, [&](int64) { return got; }, [&](int64) { return want; });
  return JudgeCompute<Real>(std::string("sum ") + TypeName<Real>(), err, rows, cols);
}

template <typename Real>
CheckResult CheckRowSums(int32 rows, int32 cols, uint64 seed) {
  Matrix<Real> src = RandomHostMatrix<Real>(rows, cols, seed, true);
  std::vector<long double> want(rows, 0);
  for (int32 r = 0; r < rows; ++r)
    for (int32 c = 0; c < cols; ++c) want[r] += src(r, c);
  CuVector<Real> cu_sums(rows);
  cu_sums.AddColSumMat(Real(1), CuMatrix<Real>(src), Real(0));  // Kaldi: sums along each row
  Vector<Real> got(rows, kUndefined);
  cu_sums.CopyToVec(&got);
  double err = RelativeError<Real>(
      rows, [&](int64 i) { return got(i); }, [&](int64 i) { return want[i]; });
  return JudgeCompute<Real>(std::string("row sums ") + TypeName<Real>(), err, rows, cols);
}

template CheckResult CheckSoftMax<float>(int32, int32, uint64);
template CheckResult CheckSoftMax<double>(int32, int32, uint64);
template CheckResult CheckSum<float>(int32, int32, uint64);
template CheckResult CheckSum<double>(int32, int32, uint64);
template CheckResult CheckRowSums<float>(int32, int32, uint64);
template CheckResult CheckRowSums<double>(int32, int32, uint64);

std::vector<CheckResult> ComputeChecks(const HealthOptions& options, uint64 seed) {
  const int32 rows = options.kernel_rows, cols = options.kernel_cols;
  using CheckFn = std::function<CheckResult()>;
  const std::vector<std::pair<std::string, CheckFn>> checks = {
      {"sgemm", [&] { return CheckGemm(GemmPrecision::kFloat, options.gemm_size, seed); }},
      {"dgemm", [&] { return CheckGemm(GemmPrecision::kDouble, options.gemm_size, seed); }},
      {"softmax float", [&] { return CheckSoftMax<float>(rows, cols, seed); }},
      {"softmax double", [&] { return CheckSoftMax<double>(rows, cols, seed); }},
      {"sum float", [&] { return CheckSum<float>(rows, cols, seed); }},
      {"sum double", [&] { return CheckSum<double>(rows, cols, seed); }},
      {"row sums float", [&] { return CheckRowSums<float>(rows, cols, seed); }},
      {"row sums double", [&] { return CheckRowSums<double>(rows, cols, seed); }},
  };
  std::vector<CheckResult> results;
  for (const auto& check : checks)
    for (const CheckResult& r :
         RunGuarded(check.first, [&] { return std::vector<CheckResult>{check.second()}; }))
      results.push_back(r);
  return results;
}

// ---- memory patterns and bandwidth
// ---------------------------------------------------------------

namespace {

const char* const kPatternNames[] = {"memory walking-ones", "memory own-address", "memory random"};
constexpr MemPattern kPatterns[] = {MemPattern::kWalkingOnes, MemPattern::kOwnAddress,
                                    MemPattern::kRandom};
constexpr int kNumPatterns = 3;

#if CUCTX_HAVE_CUDA
// A start/stop pair of CUDA events, destroyed on every path.
class EventPair {
 public:
  EventPair() {
    CUCTX_CUDA_CHECK(cudaEventCreate(&start_));
    if (cudaEventCreate(&stop_) != cudaSuccess) {
      CUCTX_CUDA_CHECK_NOTHROW(cudaEventDestroy(start_));
      CUCTX_ERR << "cudaEventCreate failed";
    }
  }
  ~EventPair() {
    CUCTX_CUDA_CHECK_NOTHROW(cudaEventDestroy(start_));
    CUCTX_CUDA_CHECK_NOTHROW(cudaEventDestroy(stop_));
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Seconds per copy of `bytes`, averaged over `repeats` copies on this thread's stream after one
// untimed warm-up copy; timed with CUDA events so that host overhead does not count.
double TimeCopies(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, int repeats) {
  cudaStream_t stream = cudaStreamPerThread;
  CUCTX_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  EventPair events;
  CUCTX_CUDA_CHECK(cudaEventRecord(events.start_, stream));
  for (int i = 0; i < repeats; ++i)
    CUCTX_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  CUCTX_CUDA_CHECK(cudaEventRecord(events.stop_, stream));
  CUCTX_CUDA_CHECK(cudaEventSynchronize(events.stop_));
  float ms = 0.0f;
  CUCTX_CUDA_CHECK(cudaEventElapsedTime(&ms, events.start_, events.stop_));
  return ms / 1e3 / repeats;
}
#endif

}  // namespace

std::vector<CheckResult> CheckMemoryPatterns(int64 bytes, uint64 seed) {
  std::vector<CheckResult> results;
  if (!CuDevice::Instantiate().Enabled()) {
    for (const char* name : kPatternNames) results.push_back(MakeSkip(name, "no GPU selected"));
    return results;
  }
#if CUCTX_HAVE_CUDA
  constexpr int64 kChunkBytes = int64{1} << 30;
  const int64 wanted = bytes / 8 * 8;
  std::vector<std::unique_ptr<internal::ScopedStorage>> chunks;
  std::vector<int64> chunk_words;
  std::string shortfall;
  for (int64 left = wanted; left > 0;) {
    const int64 n = std::min(left, kChunkBytes);
    try {
      chunks.push_back(std::make_unique<internal::ScopedStorage>(static_cast<size_t>(n)));
    } catch (const OutOfMemoryError&) {
      // Another process may hold memory that was free when we looked; test what we got.
      shortfall = ", only " + Mib(wanted - left) + " of " + Mib(wanted) + " could be allocated";
      break;
    }
    chunk_words.push_back(n / 8);
    left -= n;
  }
  int64 tested = 0;
  for (int64 w : chunk_words) tested += w * 8;
  if (tested == 0) {
    for (const char* name : kPatternNames)
      results.push_back(MakeSkip(name, "could not allocate any of " + Mib(wanted)));
    return results;
  }
  CuStream stream = internal::ThreadStream();
  internal::ScopedStorage counters(kNumPatterns * sizeof(unsigned long long));
  auto* d_bad = static_cast<unsigned long long*>(counters.Data());
  CUCTX_CUDA_CHECK(cudaMemsetAsync(d_bad, 0, kNumPatterns * sizeof(unsigned long long), stream));
  const auto start = std::chrono::steady_clock::now();
  // Write everything before verifying anything, so each word sits in memory while the rest of the
  // buffer is written, and a write that lands at the wrong address is seen in its victim.
  for (int p = 0; p < kNumPatterns; ++p) {
    for (size_t c = 0; c < chunks.size(); ++c)
      LaunchMemPatternWrite(static_cast<uint64_t*>(chunks[c]->Data()), chunk_words[c], kPatterns[p],
                            seed, stream);
    for (size_t c = 0; c < chunks.size(); ++c)
      LaunchMemPatternVerify(static_cast<const uint64_t*>(chunks[c]->Data()), chunk_words[c],
                             kPatterns[p], seed, d_bad + p, stream);
  }
  unsigned long long bad[kNumPatterns] = {0, 0, 0};
  CUCTX_CUDA_CHECK(cudaMemcpyAsync(bad, d_bad, sizeof(bad), cudaMemcpyDeviceToHost, stream));
  CUCTX_CUDA_CHECK(cudaStreamSynchronize(stream));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int p = 0; p < kNumPatterns; ++p)
    results.push_back(MakeResult(kPatternNames[p], bad[p] == 0, static_cast<double>(bad[p]),
                                 std::to_string(bad[p]) + " bad words in " + Mib(tested) +
                                     shortfall + Printf(" (%.2f s for all patterns)", seconds),
                                 "0 bad words"));
#else
  (void)bytes;
  (void)seed;
#endif
  return results;
}

std::vector<CheckResult> CheckBandwidth(const HealthOptions& options, const NvmlDevice& nvml) {
  const char* const names[] = {"bandwidth device-to-device", "bandwidth host-to-device",
                               "bandwidth device-to-host"};
  std::vector<CheckResult> results;
  if (!CuDevice::Instantiate().Enabled()) {
    for (const char* name : names) results.push_back(MakeSkip(name, "no GPU selected"));
    return results;
  }
#if CUCTX_HAVE_CUDA
  const CuDeviceProperties& p = CuDevice::Instantiate().Properties();
  int32 clock_khz = p.memory_clock_khz;
  uint32 nvml_mhz = 0;
  std::string why;
  if (clock_khz <= 0 && nvml.Clock(NvmlClock::kMemory, true, &nvml_mhz, &why))
    clock_khz = static_cast<int32>(nvml_mhz) * 1000;
  const BandwidthThreshold dram =
      DramThreshold(p.memory_bus_width, clock_khz, options.dram_fraction);
  uint32 gen = 3, width = 16;  // the stated assumption; PcieLink changes them only on success
  const bool from_nvml = nvml.PcieLink(true, &gen, &width, &why);
  const BandwidthThreshold pcie = PcieThreshold(static_cast<int32>(gen), static_cast<int32>(width),
                                                options.pcie_fraction, from_nvml);

  // 256 MiB (less on a small or busy device) is far past the size where copy rates level off.
  int64 free_bytes = 0;
  GetFreeGpuMemory(&free_bytes, nullptr);
  const size_t bytes = static_cast<size_t>(
      std::max<int64>(1 << 20, std::min<int64>(256 << 20, free_bytes / 8) >> 20 << 20));
  constexpr int kRepeats = 10;
  internal::ScopedStorage d_a(bytes), d_b(bytes);
  // Counting bytes read plus bytes written, as the DRAM figure does.
  const double d2d = 2.0 * bytes /
                     TimeCopies(d_b.Data(), d_a.Data(), bytes, cudaMemcpyDeviceToDevice, kRepeats) /
                     1e9;
  results.push_back(JudgeBandwidth(names[0], d2d, dram));

  PinnedBuffer host(bytes);
  std::memset(host.Data(), 0x5a, bytes);  // fault the pages in before timing
  if (!host.PageLocked()) {
    results.push_back(MakeSkip(names[1], "host buffer is not page-locked"));
    results.push_back(MakeSkip(names[2], "host buffer is not page-locked"));
    return results;
  }
  const double h2d =
      bytes / TimeCopies(d_a.Data(), host.Data(), bytes, cudaMemcpyHostToDevice, kRepeats) / 1e9;
  results.push_back(JudgeBandwidth(names[1], h2d, pcie));
  const double d2h =
      bytes / TimeCopies(host.Data(), d_a.Data(), bytes, cudaMemcpyDeviceToHost, kRepeats) / 1e9;
  results.push_back(JudgeBandwidth(names[2], d2h, pcie));
#else
  (void)options;
  (void)nvml;
#endif
  return results;
}

// ---- NVML
// ----------------------------------------------------------------------------------------

std::vector<CheckResult> CheckNvml(const NvmlDevice& nvml) {
  std::vector<CheckResult> results;
  std::string why;

  uint32 temp = 0, slowdown = 0;
  if (!nvml.Temperature(&temp, &why)) {
    results.push_back(MakeSkip("temperature", why));
  } else {
    const bool from_nvml = nvml.SlowdownTemperature(&slowdown, &why);
    // Without NVML's threshold: 85 C, below the slowdown point of current data-centre GPUs.
    const uint32 limit = from_nvml ? slowdown : 85;
    results.push_back(MakeResult(
        "temperature", temp < limit, temp, std::to_string(temp) + " C",
        "< " + std::to_string(limit) +
            (from_nvml ? " C (NVML slowdown threshold)" : " C (assumed; no NVML threshold)")));
  }

  uint32 sm = 0, sm_max = 0, mem = 0, mem_max = 0;
  if (nvml.Clock(NvmlClock::kSm, false, &sm, &why) &&
      nvml.Clock(NvmlClock::kSm, true, &sm_max, &why) &&
      nvml.Clock(NvmlClock::kMemory, false, &mem, &why) &&
      nvml.Clock(NvmlClock::kMemory, true, &mem_max, &why)) {
    results.push_back(MakeResult("clocks", true, sm,
                                 "SM " + std::to_string(sm) + "/" + std::to_string(sm_max) +
                                     " MHz, memory " + std::to_string(mem) + "/" +
                                     std::to_string(mem_max) + " MHz (current/max)",
                                 "any: informational, an idle GPU clocks down"));
  } else {
    results.push_back(MakeSkip("clocks", why));
  }

  uint64 reasons = 0;
  if (nvml.ClockEventReasons(&reasons, &why)) {
    results.push_back(MakeResult("clock event reasons", (reasons & kNvmlSlowdownReasons) == 0,
                                 static_cast<double>(reasons), DescribeClockEventReasons(reasons),
                                 "none of " + DescribeClockEventReasons(kNvmlSlowdownReasons)));
  } else {
    results.push_back(MakeSkip("clock event reasons", why));
  }

  uint64 uncorrected = 0, uncorrected_life = 0, corrected = 0, corrected_life = 0;
  if (nvml.EccErrors(true, false, &uncorrected, &why)) {
    std::string lifetime = nvml.EccErrors(true, true, &uncorrected_life, &why)
                               ? std::to_string(uncorrected_life)
                               : "unknown";
    results.push_back(MakeResult("ecc uncorrected errors", uncorrected == 0,
                                 static_cast<double>(uncorrected),
                                 std::to_string(uncorrected) + " since the driver loaded (" +
                                     lifetime + " over the device's life)",
                                 "0 since the driver loaded"));
  } else {
    results.push_back(MakeSkip("ecc uncorrected errors", why));
  }
  if (nvml.EccErrors(false, false, &corrected, &why)) {
    std::string lifetime = nvml.EccErrors(false, true, &corrected_life, &why)
                               ? std::to_string(corrected_life)
                               : "unknown";
    results.push_back(MakeResult("ecc corrected errors", true, static_cast<double>(corrected),
                                 std::to_string(corrected) + " since the driver loaded (" +
                                     lifetime + " over the device's life)",
                                 "any: informational, ECC corrected them"));
  } else {
    results.push_back(MakeSkip("ecc corrected errors", why));
  }

  uint32 power = 0, power_limit = 0;
  if (nvml.PowerUsage(&power, &why)) {
    const bool have_limit = nvml.PowerLimit(&power_limit, &why);
    // Short spikes above the limit are normal; 10% over it on an idle check is not.
    const bool passed = !have_limit || power <= power_limit * 1.1;
    results.push_back(
        MakeResult("power", passed, power / 1e3, Printf("%.1f W", power / 1e3),
                   have_limit ? Printf("<= 110%% of the %.0f W enforced limit", power_limit / 1e3)
                              : "any: no power limit reported"));
  } else {
    results.push_back(MakeSkip("power", why));
  }

  uint32 gen = 0, width = 0, max_gen = 0, max_width = 0;
  if (nvml.PcieLink(false, &gen, &width, &why) && nvml.PcieLink(true, &max_gen, &max_width, &why)) {
    results.push_back(MakeResult(
        "pcie link", true, gen,
        "PCIe " + std::to_string(gen) + ".0 x" + std::to_string(width) + " (max " +
            std::to_string(max_gen) + ".0 x" + std::to_string(max_width) + ")",
        "any: informational, idle links train down; the bandwidth lines judge the link"));
  } else {
    results.push_back(MakeSkip("pcie link", why));
  }
  return results;
}

// ---- runner
// --------------------------------------------------------------------------------------

bool SelectHealthCheckDevice(int32 device, const std::string& use_gpu, std::string* why) {
  CuDevice& cu_device = CuDevice::Instantiate();
  if (use_gpu == "no") {
    *why = "--use-gpu=no";
    return false;
  }
  try {
    if (device >= 0)
      cu_device.SelectAndInitializeGpuIdWithExistingCudaContext(device);
    else
      cu_device.SelectGpuId(use_gpu);
  } catch (const std::exception& e) {
    // As every tool's messages: the "[in Function at file:line]" origin only at --verbose >= 1.
    *why = ToolMessage(e.what());
    return false;
  }
  if (!cu_device.Enabled()) {
    *why = cu_device.NoGpuReason().empty() ? "no GPU selected" : cu_device.NoGpuReason();
    return false;
  }
  return true;
}

int64 RunHealthChecks(const HealthOptions& options, HealthReport* report) {
  options.Check();
  const int64 free_bytes = AddDeviceFacts(report);
  for (const CheckResult& r : ComputeChecks(options, options.seed)) report->Add(r);
  const int64 test_bytes = static_cast<int64>(options.memory_fraction * free_bytes);
  AddGuarded(
      "memory", [&] { return CheckMemoryPatterns(test_bytes, options.seed); }, report);
  NvmlDevice nvml(SelectedPciBusId());
  AddGuarded(
      "bandwidth", [&] { return CheckBandwidth(options, nvml); }, report);
  AddGuarded(
      "nvml", [&] { return CheckNvml(nvml); }, report);
  return free_bytes;
}

void RunBurnIn(const HealthOptions& options, int64 free_bytes, HealthReport* report) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const int64 test_bytes = static_cast<int64>(options.memory_fraction * free_bytes);
  report->Note(
      Printf("burn-in: repeating the compute and memory checks for %.0f s", options.duration));
  int32 rounds = 0, failed = 0;
  double elapsed = 0.0;
  do {
    ++rounds;
    const uint64 seed = options.seed + static_cast<uint64>(rounds);
    const std::string suffix = " [burn-in round " + std::to_string(rounds) + "]";
    // Only failures are kept; a passing burn-in is summarised by the progress lines and totals.
    HealthReport round_report;
    failed += AddGuarded(
        "compute", [&] { return ComputeChecks(options, seed); }, &round_report);
    failed += AddGuarded(
        "memory", [&] { return CheckMemoryPatterns(test_bytes, seed); }, &round_report);
    for (CheckResult r : round_report.Results()) {
      if (r.status != CheckStatus::kFail) continue;
      r.name += suffix;
      report->Add(r);
    }
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    report->Note("burn-in round " + std::to_string(rounds) + Printf(": %.1f s elapsed", elapsed) +
                 ", " + std::to_string(failed) + " failed checks so far");
  } while (elapsed < options.duration);
  report->Note("burn-in done: " + std::to_string(rounds) + " rounds in " +
               Printf("%.1f s", elapsed) + ", " + std::to_string(failed) + " failed checks");
  report->SetBurnIn(rounds, elapsed, failed);
}

}  // namespace cuctx
