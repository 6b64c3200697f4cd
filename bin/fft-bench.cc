// bin/fft-bench.cc: times SplitRadixComplexFft (matrix/srfft.h) on the host against the naive DFT,
// the mixed-radix ComplexFft and a memcpy of the same bytes, all measured in the same run.
// SPDX-License-Identifier: Apache-2.0
//
// CPU only (no GPU, built with CUDA=0 as well): it backs the figures in matrix/srfft.h and
// matrix/matrix-functions.h. Each figure is the median over --rounds rounds of the time per call.
#include "base/error.h"
#include "base/kaldi-math.h"
#include "base/text-utils.h"
#include "bin/bench-table.h"
#include "cutool/tool.h"
#include "matrix/matrix-functions.h"
#include "matrix/srfft.h"
#include "matrix/vector.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace cuctx {
namespace {

const char* kUsage =
    "Times the split-radix complex FFT (SplitRadixComplexFft::Compute, in place, interleaved)\n"
    "for each power-of-two size in --sizes, in float and double, against three baselines\n"
    "measured in the same run: the naive O(N^2) DFT (ComplexFt; sizes up to --naive-max-size),\n"
    "the general mixed-radix ComplexFft, and a memcpy of the same 2N values (the floor: an FFT\n"
    "reads and writes its data at least once). Every in-place transform starts from a copy of\n"
    "the same input, so the times of the in-place ones include that copy-in, which is also\n"
    "measured alone and subtracted. Each result is checked against the naive DFT (or\n"
    "ComplexFft above --naive-max-size). Prints one row per figure, then one table; ratio > 1\n"
    "means the split-radix FFT is faster.\n"
    "\n"
    "Usage: fft-bench [options]\n"
    "  e.g. fft-bench --sizes=64,512,4096 --rounds=7\n"
    "Exit status: 0 done; 1 a transform disagreed with its reference; 2 usage error.\n";

struct Options {
  std::string sizes = "64,512,4096";
  int32 rounds = 5;
  double budget = 0.05;
  int32 naive_max_size = 4096;
  bool csv = false;
};

// The CPU's model name from /proc/cpuinfo, or "unknown".
std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, 10, "model name") == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "unknown";
}

// Median over `rounds` rounds of the seconds per call of `fn`. A first call sizes the rounds so
// that all of them together take about `budget` seconds (at least one call per round).
template <typename Fn>
double MedianSecondsPerCall(int32 rounds, double budget, Fn fn) {
  double t0 = bench::Now();
  fn();
  const double once = std::max(bench::Now() - t0, 1e-9);
  const int64 reps = std::max<int64>(1, static_cast<int64>(budget / rounds / once));
  std::vector<double> per_call;
  for (int32 r = 0; r < rounds; ++r) {
    t0 = bench::Now();
    for (int64 i = 0; i < reps; ++i) fn();
    per_call.push_back((bench::Now() - t0) / static_cast<double>(reps));
  }
  return bench::Percentile(per_call, 0.5);
}

// ||got - want||_F / ||want||_F over 2N interleaved values, in double.
template <typename Real>
double RelativeError(const Real* got, const Real* want, int64 n) {
  double diff2 = 0, ref2 = 0;
  for (int64 i = 0; i < n; ++i) {
    const double d = static_cast<double>(got[i]) - static_cast<double>(want[i]);
    diff2 += d * d;
    ref2 += static_cast<double>(want[i]) * want[i];
  }
  return ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
}

// Runs every figure for one size and precision; returns false if a transform was wrong.
template <typename Real>
bool BenchSize(int32 n, const Options& o, bench::Table* table) {
  const char* type = sizeof(Real) == sizeof(float) ? "float" : "double";
  const std::string case_name = "N=" + std::to_string(n) + " " + type;
  const int64 values = 2 * static_cast<int64>(n);
  Vector<Real> input(values, kUndefined), work(values, kUndefined), scratch;
  RandomState state(17);
  for (int64 i = 0; i < values; ++i) input(i) = static_cast<Real>(RandGauss(&state));
  const size_t bytes = values * sizeof(Real);

  SplitRadixComplexFft<Real> fft(n);
  auto copy_in = [&] { std::memcpy(work.Data(), input.Data(), bytes); };
  const double t_copy = MedianSecondsPerCall(o.rounds, o.budget, copy_in);
  const double t_split_copy = MedianSecondsPerCall(o.rounds, o.budget, [&] {
    copy_in();
    fft.Compute(work.Data(), true);
  });
  const double t_mixed_copy = MedianSecondsPerCall(o.rounds, o.budget, [&] {
    copy_in();
    ComplexFft(&work, true, &scratch);
  });
  // Subtracting two medians can come out at or below zero for a tiny transform on a noisy host;
  // a figure that small is reported as the copy time itself rather than as nonsense.
  const double t_split = std::max(t_split_copy - t_copy, t_copy);
  const double t_mixed = std::max(t_mixed_copy - t_copy, t_copy);

  // Correctness: the split-radix result against the naive DFT (or ComplexFft for large n).
  copy_in();
  fft.Compute(work.Data(), true);
  Vector<Real> split_out(work), reference(values, kUndefined);
  const bool naive = n <= o.naive_max_size;
  double t_naive = 0;
  if (naive) {
    t_naive = MedianSecondsPerCall(o.rounds, o.budget, [&] { ComplexFt(input, &reference, true); });
  } else {
    reference.CopyFromVec(input);
    ComplexFft(&reference, true, &scratch);
  }
  const double err = RelativeError(split_out.Data(), reference.Data(), values);
  // The split-radix FFT rounds each value O(log N) times; the naive DFT sums in double, so its
  // own error is far below that (ComplexFft's, above --naive-max-size, is of the same order).
  const double eps = sizeof(Real) == sizeof(float) ? 1.19e-7 : 2.22e-16;
  const double tol = 8 * eps * std::log2(2.0 * n);
  std::printf("  %-14s split-radix against %s: relative error %.2e (tolerance %.1e)%s\n",
              case_name.c_str(), naive ? "the naive DFT" : "ComplexFft", err, tol,
              err <= tol ? "" : "  WRONG");

  const double us = 1e6;
  if (naive)
    table->Add({"fft", case_name, "us per call", t_split * us, "ComplexFt (naive DFT)",
                t_naive * us, t_naive / t_split, ""});
  table->Add({"fft", case_name, "us per call", t_split * us, "ComplexFft (mixed radix)",
              t_mixed * us, t_mixed / t_split, ""});
  table->Add({"fft", case_name, "us per call", t_split * us,
              "memcpy " + bench::SizeName(bytes) + " (floor)", t_copy * us, t_copy / t_split, ""});
  return std::isfinite(err) && err <= tol;
}

int Run(const Options& o) {
  std::vector<int32> sizes;
  if (!SplitStringToIntegers(o.sizes, ",", false, &sizes) || sizes.empty())
    throw ToolUsageError("--sizes must be a comma-separated list of sizes, got '" + o.sizes + "'");
  for (int32 n : sizes)
    if (n < 1 || (n & (n - 1)) != 0)
      throw ToolUsageError("--sizes: every size must be a power of two >= 1, got " +
                           std::to_string(n));
  if (o.rounds < 1) throw ToolUsageError("--rounds must be >= 1, got " + std::to_string(o.rounds));
  if (!(o.budget > 0)) throw ToolUsageError("--budget must be > 0 seconds");

  std::printf("fft-bench: CPU %s, one thread; median of %d rounds per figure\n", CpuModel().c_str(),
              o.rounds);
  bench::Table table;
  bool ok = true;
  for (int32 n : sizes) {
    ok = BenchSize<float>(n, o, &table) && ok;
    ok = BenchSize<double>(n, o, &table) && ok;
  }
  table.Print(o.csv);
  if (!ok) std::fprintf(stderr, "fft-bench: a transform disagreed with its reference\n");
  return ok ? kToolExitOk : 1;
}

}  // namespace
}  // namespace cuctx

int main(int argc, char* argv[]) {
  cuctx::Options o;
  auto register_options = [&](cuctx::ParseOptions* po) {
    po->Register("sizes", &o.sizes, "Comma-separated FFT sizes (complex points, powers of two)");
    po->Register("rounds", &o.rounds, "Timed rounds per figure; the median is reported");
    po->Register("budget", &o.budget, "Seconds per figure, all rounds together (roughly)");
    po->Register("naive-max-size", &o.naive_max_size,
                 "Largest size timed with the naive O(N^2) DFT (larger sizes are checked against "
                 "ComplexFft)");
    po->Register("csv", &o.csv, "Print the final table as CSV");
  };
  return cuctx::RunTool(argc, argv, cuctx::ToolSpec{cuctx::kUsage, 0, 0}, register_options,
                        [&](const cuctx::ToolArgs&) { return cuctx::Run(o); });
}
