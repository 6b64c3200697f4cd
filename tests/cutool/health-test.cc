// tests/cutool/health-test.cc: the GPU health check's result lines, JSON, verdicts,
// bandwidth thresholds, NVML fallbacks, compute checks and (on a GPU) the memory pattern kernels.
// SPDX-License-Identifier: Apache-2.0
#include "cutool/health.h"

#include "base/error.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/internal/cu-storage.h"
#include "cutool/health-kernels.h"
#include "cutool/nvml.h"
#include "tests/testing.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <vector>

namespace cuctx {
namespace {

// A strict JSON syntax check (RFC 8259 grammar, no extensions), enough to prove that the report
// is valid JSON without a JSON library.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& text) : s_(text) {}
  bool Valid() {
    Space();
    if (!Value()) return false;
    Space();
    return i_ == s_.size();
  }

 private:
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  bool Eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool Literal(const char* word) {
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }
  bool String() {
    if (!Eat('"')) return false;
    while (i_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c != '\\') continue;
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      if (e == 'u') {
        for (int k = 0; k < 4; ++k, ++i_)
          if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
      } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
        return false;
      }
    }
    return false;
  }
  bool Number() {
    const size_t start = i_;
    Eat('-');
    if (!Digits()) return false;
    if (s_[start + (s_[start] == '-')] == '0' && i_ - start > 1u + (s_[start] == '-'))
      return false;  // leading zero
    if (Eat('.') && !Digits()) return false;
    if ((Eat('e') || Eat('E')) && ((Eat('+') || Eat('-')), !Digits())) return false;
    return true;
  }
  bool Digits() {
    const size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    return i_ > start;
  }
  bool Value() {
    if (i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{':
        return Container('}', true);
      case '[':
        return Container(']', false);
      case '"':
        return String();
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number();
    }
  }
  bool Container(char close, bool object) {
    ++i_;
    Space();
    if (Eat(close)) return true;
    do {
      Space();
      if (object) {
        if (!String()) return false;
        Space();
        if (!Eat(':')) return false;
        Space();
      }
      if (!Value()) return false;
      Space();
    } while (Eat(','));
    return Eat(close);
  }

  const std::string& s_;
  size_t i_ = 0;
};

bool ValidJson(const std::string& text) { return JsonChecker(text).Valid(); }

TEST(JsonCheckerTest, AcceptsValidAndRejectsInvalid) {
  EXPECT_TRUE(ValidJson("{\"a\": [1, -2.5e3, true, null, \"x\\n\\u00e9\"], \"b\": {}}"));
  EXPECT_FALSE(ValidJson("{\"a\": 1,}"));
  EXPECT_FALSE(ValidJson("{\"a\": nan}"));
  EXPECT_FALSE(ValidJson("\"raw\nnewline\""));
  EXPECT_FALSE(ValidJson("{\"a\": 01}"));
}

TEST(HealthJsonTest, StringEscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
  EXPECT_EQ(JsonString("a\nb\tc\rd"), "\"a\\nb\\tc\\rd\"");
  EXPECT_EQ(JsonString(std::string("x\x01y\x7f", 4)), "\"x\\u0001y\\u007f\"");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // UTF-8 passes through
  EXPECT_TRUE(ValidJson(JsonString(std::string("\"\\\n\x02\x1f end", 7))));
}

TEST(HealthJsonTest, NumbersRoundTripAndNonFiniteIsNull) {
  EXPECT_EQ(std::stod(JsonNumber(0.1)), 0.1);
  EXPECT_EQ(JsonNumber(3), "3");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::infinity()), "null");
  EXPECT_TRUE(ValidJson(JsonNumber(-1.5e-300)));
}

TEST(CheckResultTest, LineFormat) {
  EXPECT_EQ(MakeResult("sgemm", true, 1e-7, "relative error 1.0e-07", "<= 1e-05").Line(),
            "PASS sgemm: relative error 1.0e-07 (expected <= 1e-05)");
  EXPECT_EQ(MakeResult("memory random", false, 3, "3 bad words in 16 MiB", "0 bad words").Line(),
            "FAIL memory random: 3 bad words in 16 MiB (expected 0 bad words)");
  CheckResult skip = MakeSkip("power", "libnvidia-ml.so.1 not found");
  EXPECT_EQ(skip.Line(), "SKIP power: libnvidia-ml.so.1 not found");
  EXPECT_FALSE(skip.has_measured);
  EXPECT_STREQ(CheckStatusName(CheckStatus::kFail), "FAIL");
}

TEST(HealthReportTest, VerdictExitCodeAndSummary) {
  HealthReport report;
  EXPECT_EQ(report.Verdict(), "healthy");
  EXPECT_EQ(report.ExitCode(), 0);
  report.Add(MakeResult("a", true, 1, "1", "1"));
  report.Add(MakeSkip("b", "why"));
  EXPECT_EQ(report.ExitCode(), 0);
  EXPECT_EQ(report.Summary(), "summary: 1 passed, 0 failed, 1 skipped; verdict healthy");
  report.Add(MakeResult("c", false, 2, "2", "1"));
  EXPECT_EQ(report.Verdict(), "unhealthy");
  EXPECT_EQ(report.ExitCode(), 1);
  EXPECT_EQ(report.Count(CheckStatus::kFail), 1);

  HealthReport none;
  none.SetNoGpu("built without CUDA");
  EXPECT_EQ(none.Verdict(), "no-gpu");
  EXPECT_EQ(none.ExitCode(), 3);
  EXPECT_TRUE(test::Contains(none.Summary(), "verdict no-gpu (built without CUDA)"));
}

TEST(HealthReportTest, SinkGetsFactsResultsAndNotesInOrder) {
  std::vector<std::string> lines;
  HealthReport report([&](const std::string& line) { lines.push_back(line); });
  report.AddFact("name", "Test GPU");
  report.Add(MakeSkip("clocks", "no NVML"));
  report.Note("progress");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "  name: Test GPU");
  EXPECT_EQ(lines[1], "SKIP clocks: no NVML");
  EXPECT_EQ(lines[2], "progress");
  EXPECT_EQ(report.Results().size(), 1u);  // notes and facts are not results
}

TEST(HealthReportTest, JsonIsValidAndHasEveryField) {
  HealthReport report;
  report.AddFact("name", "GPU \"quoted\"\nname");
  report.Add(MakeResult("sgemm", true, 1.25e-7, "relative error 1.25e-07", "<= 6e-05"));
  report.Add(MakeResult("odd", false, std::nan(""), "error: \\ bad \t thing", "no error"));
  report.Add(MakeSkip("power", "nvmlDeviceGetPowerUsage: Not Supported"));
  report.SetBurnIn(4, 61.5, 0);
  const std::string json = report.ToJson();
  EXPECT_TRUE(ValidJson(json)) << json;
  for (const char* needle :
       {"\"tool\": \"gpu-health-check\"", "\"verdict\": \"unhealthy\"", "\"exit_code\": 1",
        "\"name\": \"GPU \\\"quoted\\\"\\nname\"", "\"status\": \"PASS\"", "\"measured\": null",
        "\"value\": \"nvmlDeviceGetPowerUsage: Not Supported\"",
        "\"summary\": {\"passed\": 1, \"failed\": 1, \"skipped\": 1}",
        "\"burn_in\": {\"rounds\": 4, \"seconds\": 61.5, \"failed_checks\": 0}"})
    EXPECT_TRUE(test::Contains(json, needle)) << json;

  HealthReport none;
  none.SetNoGpu("no \"device\"");
  const std::string none_json = none.ToJson();
  EXPECT_TRUE(ValidJson(none_json)) << none_json;
  EXPECT_TRUE(test::Contains(none_json, "\"verdict\": \"no-gpu\""));
  EXPECT_TRUE(test::Contains(none_json, "\"reason\": \"no \\\"device\\\"\""));
  EXPECT_FALSE(test::Contains(none_json, "burn_in"));
}

TEST(HealthThresholdTest, DramFromBusWidthAndClock) {
  // H100 SXM: 5120-bit HBM3 at 2619 MHz.
  BandwidthThreshold t = DramThreshold(5120, 2619000, 0.5);
  EXPECT_NEAR(t.theoretical_gbps, 5120 / 8.0 * 2.619e9 * 2 / 1e9, 1e-9);
  EXPECT_NEAR(t.min_gbps, t.theoretical_gbps / 2, 1e-9);
  EXPECT_TRUE(test::Contains(t.derivation, ">= 50% of 3352 GB/s theoretical"));
  EXPECT_TRUE(test::Contains(t.derivation, "5120-bit bus x 2619 MHz x 2"));
  EXPECT_EQ(JudgeBandwidth("bw", 2800, t).status, CheckStatus::kPass);
  CheckResult slow = JudgeBandwidth("bw", 1000, t);
  EXPECT_EQ(slow.status, CheckStatus::kFail);
  EXPECT_EQ(slow.value, "1000.0 GB/s");
  EXPECT_EQ(slow.measured, 1000);
}

TEST(HealthThresholdTest, UnknownFiguresAreReportedNotJudged) {
  BandwidthThreshold t = DramThreshold(0, 2619000, 0.5);
  EXPECT_EQ(t.theoretical_gbps, 0);
  CheckResult r = JudgeBandwidth("bw", 1.0, t);
  EXPECT_EQ(r.status, CheckStatus::kPass);
  EXPECT_TRUE(test::Contains(r.Line(), "not judged"));
  EXPECT_EQ(PcieThreshold(7, 16, 0.4, true).theoretical_gbps, 0);
  EXPECT_EQ(PcieThreshold(4, 0, 0.4, true).theoretical_gbps, 0);
}

TEST(HealthThresholdTest, PcieFromGenerationAndWidth) {
  EXPECT_EQ(PcieLaneGBps(0), 0);
  EXPECT_EQ(PcieLaneGBps(1), 0.25);
  EXPECT_EQ(PcieLaneGBps(2), 0.5);
  EXPECT_NEAR(PcieLaneGBps(3), 0.9846, 1e-4);
  EXPECT_NEAR(PcieLaneGBps(4), 2 * PcieLaneGBps(3), 1e-12);
  EXPECT_NEAR(PcieLaneGBps(5), 4 * PcieLaneGBps(3), 1e-12);
  EXPECT_NEAR(PcieLaneGBps(6), 7.5625, 1e-12);
  BandwidthThreshold gen5 = PcieThreshold(5, 16, 0.4, true);
  EXPECT_NEAR(gen5.theoretical_gbps, 63.0, 0.05);
  EXPECT_NEAR(gen5.min_gbps, 0.4 * gen5.theoretical_gbps, 1e-12);
  EXPECT_TRUE(test::Contains(gen5.derivation, ">= 40% of 63.0 GB/s theoretical"));
  EXPECT_TRUE(test::Contains(gen5.derivation, "PCIe 5.0 x16 (NVML max link)"));
  BandwidthThreshold assumed = PcieThreshold(3, 16, 0.4, false);
  EXPECT_NEAR(assumed.theoretical_gbps, 15.75, 0.01);
  EXPECT_TRUE(test::Contains(assumed.derivation, "assumed"));
}

TEST(HealthOptionsTest, RejectsOutOfRangeValuesNamingTheOption) {
  test::QuietLog quiet;
  EXPECT_NO_THROW(HealthOptions().Check());
  auto with = [](auto set) {
    HealthOptions o;
    set(&o);
    return [o] { o.Check(); };
  };
  EXPECT_TRUE(test::ThrowsWith(with([](HealthOptions* o) { o->memory_fraction = 0; }),
                               "--memory-fraction"));
  EXPECT_TRUE(test::ThrowsWith(with([](HealthOptions* o) { o->memory_fraction = 0.99; }),
                               "--memory-fraction"));
  EXPECT_TRUE(test::ThrowsWith(with([](HealthOptions* o) { o->duration = -1; }), "--duration"));
  EXPECT_TRUE(test::ThrowsWith(with([](HealthOptions* o) { o->gemm_size = 5000; }), "--gemm-size"));
  EXPECT_TRUE(test::ThrowsWith(with([](HealthOptions* o) { o->kernel_cols = 0; }), "0"));
  EXPECT_TRUE(
      test::ThrowsWith(with([](HealthOptions* o) { o->dram_fraction = 1.5; }), "--dram-fraction"));
  EXPECT_TRUE(
      test::ThrowsWith(with([](HealthOptions* o) { o->pcie_fraction = 0; }), "--pcie-fraction"));
}

TEST(HealthRunGuardedTest, ExceptionBecomesOneFailLine) {
  test::QuietLog quiet;
  std::vector<CheckResult> r =
      RunGuarded("memory", []() -> std::vector<CheckResult> { CUCTX_ERR << "boom"; });
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, CheckStatus::kFail);
  EXPECT_EQ(r[0].name, "memory");
  EXPECT_TRUE(test::Contains(r[0].value, "error: boom"));
}

TEST(NvmlTest, UnavailableDeviceSkipsEveryLineWithTheReason) {
  NvmlDevice none("");
  EXPECT_FALSE(none.Available());
  EXPECT_EQ(none.UnavailableReason(), "no GPU selected");
  uint32 value = 0;
  std::string why;
  EXPECT_FALSE(none.Temperature(&value, &why));
  EXPECT_EQ(why, "no GPU selected");
  std::vector<CheckResult> lines = CheckNvml(none);
  EXPECT_EQ(lines.size(), 7u);
  for (const CheckResult& r : lines) {
    EXPECT_EQ(r.status, CheckStatus::kSkip) << r.Line();
    EXPECT_EQ(r.value, "no GPU selected");
  }
  // A bus id that exists nowhere: without the library the reason names it, with it NVML's lookup
  // fails; either way the device is unavailable and the reason says why.
  NvmlDevice bogus("ffff:ff:1f.7");
  EXPECT_FALSE(bogus.Available());
  EXPECT_FALSE(bogus.UnavailableReason().empty());
}

TEST(NvmlTest, DescribesClockEventReasons) {
  EXPECT_EQ(DescribeClockEventReasons(0), "none");
  EXPECT_EQ(DescribeClockEventReasons(0x1 | 0x4), "gpu-idle,sw-power-cap");
  EXPECT_EQ(DescribeClockEventReasons(kNvmlSlowdownReasons),
            "hw-slowdown,sw-thermal-slowdown,hw-thermal-slowdown,hw-power-brake");
  EXPECT_EQ(DescribeClockEventReasons(0x1 | 0x800), "gpu-idle,other(0x800)");
}

TEST(HealthSelectTest, UseGpuNoIsNoGpu) {
  std::string why;
  EXPECT_FALSE(SelectHealthCheckDevice(-1, "no", &why));
  EXPECT_EQ(why, "--use-gpu=no");
}

// The compute checks run on the selected GPU, or compare the CPU fallback with the host reference.
TEST(HealthComputeTest, GemmChecksPassForBothPrecisions) {
  for (GemmPrecision p : {GemmPrecision::kFloat, GemmPrecision::kDouble}) {
    CheckResult r = CheckGemm(p, 65, 7);
    EXPECT_EQ(r.status, CheckStatus::kPass) << r.Line();
    EXPECT_EQ(r.name, p == GemmPrecision::kFloat ? "sgemm" : "dgemm");
    EXPECT_TRUE(
        test::Contains(r.value, p == GemmPrecision::kFloat ? "SGEMM 65x65" : "DGEMM 65x65"));
  }
  GemmCheckResult d = RunGemmCheck(65, 7, GemmPrecision::kDouble);
  EXPECT_LT(d.rel_error, 1e-14) << d.Summary();
  EXPECT_NEAR(d.tolerance, 4.0 * 65 * std::ldexp(1.0, -53), 1e-25);
}

template <typename Real>
class HealthComputeTypedTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(HealthComputeTypedTest, RealTypes);

TYPED_TEST(HealthComputeTypedTest, SoftMaxSumAndRowSumsPass) {
  using Real = TypeParam;
  for (const test::Shape& s : {test::Shape{1, 1}, test::Shape{17, 33}, test::Shape{257, 3},
                               test::Shape{1, 4097}, test::Shape{4097, 1}}) {
    for (const CheckResult& r :
         {CheckSoftMax<Real>(s.rows, s.cols, 3), CheckSum<Real>(s.rows, s.cols, 3),
          CheckRowSums<Real>(s.rows, s.cols, 3)}) {
      EXPECT_EQ(r.status, CheckStatus::kPass) << r.Line() << " " << s;
      EXPECT_TRUE(std::isfinite(r.measured)) << r.Line();
    }
  }
}

// The softmax check is judged against its own long double softmax, not the library's CPU path (a
// CPU-only run would otherwise compare that path with itself): the line says so, and a correct
// softmax lands far inside the tolerance (a few units of rounding per element).
TYPED_TEST(HealthComputeTypedTest, SoftMaxIsComparedWithAnIndependentReference) {
  using Real = TypeParam;
  const CheckResult r = CheckSoftMax<Real>(65, 130, 5);
  EXPECT_EQ(r.status, CheckStatus::kPass) << r.Line();
  EXPECT_NE(r.value.find("long double reference"), std::string::npos) << r.Line();
  EXPECT_LT(r.measured, sizeof(Real) == sizeof(float) ? 1e-6 : 1e-14) << r.Line();
}

TEST(HealthComputeTest, ComputeChecksListEveryCheckOnce) {
  HealthOptions options;
  options.gemm_size = 33;
  options.kernel_rows = 65;
  options.kernel_cols = 130;
  std::vector<CheckResult> results = ComputeChecks(options, 11);
  std::vector<std::string> names;
  for (const CheckResult& r : results) {
    names.push_back(r.name);
    EXPECT_EQ(r.status, CheckStatus::kPass) << r.Line();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"sgemm", "dgemm", "softmax float", "softmax double",
                                             "sum float", "sum double", "row sums float",
                                             "row sums double"}));
}

TEST(HealthBurnInTest, RunsAtLeastOneRoundAndRecordsTotals) {
  HealthOptions options;
  options.gemm_size = 16;
  options.kernel_rows = 9;
  options.kernel_cols = 40;
  options.duration = 1e-3;
  std::vector<std::string> lines;
  HealthReport report([&](const std::string& line) { lines.push_back(line); });
  RunBurnIn(options, test::GpuEnabled() ? (int64{64} << 20) : 0, &report);
  EXPECT_EQ(report.Count(CheckStatus::kFail), 0);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_TRUE(test::Contains(lines[1], "burn-in round 1: "));
  EXPECT_TRUE(test::Contains(lines[1], "0 failed checks so far"));
  EXPECT_TRUE(test::Contains(lines.back(), "burn-in done: "));
  EXPECT_TRUE(test::Contains(report.ToJson(), "\"burn_in\": {\"rounds\": "));
}

TEST(HealthDeviceTest, DeviceChecksSkipWithoutGpu) {
  if (test::GpuEnabled()) GTEST_SKIP() << "covered by the GPU tests below";
  for (const CheckResult& r : CheckMemoryPatterns(1 << 20, 1)) {
    EXPECT_EQ(r.status, CheckStatus::kSkip);
    EXPECT_EQ(r.value, "no GPU selected");
  }
  NvmlDevice nvml("");
  std::vector<CheckResult> bw = CheckBandwidth(HealthOptions(), nvml);
  ASSERT_EQ(bw.size(), 3u);
  for (const CheckResult& r : bw) EXPECT_EQ(r.status, CheckStatus::kSkip);
  EXPECT_EQ(SelectedPciBusId(), "");
}

TEST(HealthDeviceTest, MemoryPatternsFindNoBadWordsOnRealMemory) {
  CUCTX_REQUIRE_GPU();
  // 16 MiB plus 24 bytes: more words than one pass of the capped grid covers, and an odd count.
  std::vector<CheckResult> results = CheckMemoryPatterns((int64{16} << 20) + 24, 5);
  ASSERT_EQ(results.size(), 3u);
  for (const CheckResult& r : results) {
    EXPECT_EQ(r.status, CheckStatus::kPass) << r.Line();
    EXPECT_EQ(r.measured, 0);
  }
}

#if CUCTX_HAVE_CUDA
// The kernels on their own: the words written are the documented patterns, and the verifier
// counts exactly the words we corrupt.
TEST(HealthDeviceTest, PatternKernelsWriteTheDocumentedWordsAndCountCorruption) {
  CUCTX_REQUIRE_GPU();
  constexpr int64_t kWords = 100003;
  const uint64_t seed = 9;
  internal::ScopedStorage buffer(kWords * 8), counter(8);
  auto* d_words = static_cast<uint64_t*>(buffer.Data());
  auto* d_bad = static_cast<unsigned long long*>(counter.Data());
  const uint64_t base = reinterpret_cast<uint64_t>(d_words);
  std::vector<uint64_t> host(kWords);
  for (MemPattern pattern :
       {MemPattern::kWalkingOnes, MemPattern::kOwnAddress, MemPattern::kRandom}) {
    LaunchMemPatternWrite(d_words, kWords, pattern, seed, internal::ThreadStream());
    CopyDeviceToHost(host.data(), d_words, kWords * 8);
    for (int64_t i = 0; i < kWords; i += 997) {
      const uint64_t addr = base + 8 * i;
      uint64_t want = host[i];  // kRandom: checked only through the verifier below
      if (pattern == MemPattern::kWalkingOnes) want = uint64_t{1} << ((addr / 8 + seed) % 64);
      if (pattern == MemPattern::kOwnAddress) want = addr ^ seed;
      EXPECT_EQ(host[i], want) << i;
    }
    if (pattern == MemPattern::kRandom) {
      EXPECT_NE(host[0], host[1]);
    }
    // Corrupt three words (first, middle, last), then verify: exactly three are counted.
    for (int64_t i : {int64_t{0}, kWords / 2, kWords - 1}) {
      const uint64_t flipped = host[i] ^ 0x10;
      CopyHostToDevice(d_words + i, &flipped, 8);
    }
    const unsigned long long zero = 0;
    CopyHostToDevice(d_bad, &zero, 8);
    LaunchMemPatternVerify(d_words, kWords, pattern, seed, d_bad, internal::ThreadStream());
    unsigned long long bad = 0;
    CopyDeviceToHost(&bad, d_bad, 8);
    EXPECT_EQ(bad, 3u);
  }
}
#endif

TEST(HealthDeviceTest, BandwidthAndFullRunOnTheGpu) {
  CUCTX_REQUIRE_GPU();
  NvmlDevice nvml(SelectedPciBusId());
  std::vector<CheckResult> bw = CheckBandwidth(HealthOptions(), nvml);
  ASSERT_EQ(bw.size(), 3u);
  // Rates are not asserted (tools such as compute-sanitizer slow copies down); they must exist.
  for (const CheckResult& r : bw) {
    EXPECT_NE(r.status, CheckStatus::kSkip) << r.Line();
    EXPECT_GT(r.measured, 0) << r.Line();
  }
  HealthOptions options;
  options.memory_fraction = 0.001;  // tens of MiB: quick also under compute-sanitizer
  options.gemm_size = 64;
  options.kernel_rows = 300;
  options.kernel_cols = 77;
  HealthReport report;
  EXPECT_GT(RunHealthChecks(options, &report), 0);
  // Bandwidth and the sensors depend on the machine and what else runs on it; the rest must pass.
  for (const CheckResult& r : report.Results()) {
    const bool environmental = r.name.rfind("bandwidth", 0) == 0 || r.name == "temperature" ||
                               r.name == "clock event reasons" || r.name == "power";
    if (environmental) continue;
    EXPECT_NE(r.status, CheckStatus::kFail) << r.Line();
  }
  EXPECT_TRUE(ValidJson(report.ToJson()));
}

}  // namespace
}  // namespace cuctx
