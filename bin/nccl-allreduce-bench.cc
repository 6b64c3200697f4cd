// bin/nccl-allreduce-bench.cc: all-reduce bandwidth of CuNcclComm::AllReduce on one thread per
// GPU, against raw ncclAllReduce on cudaMalloc buffers through the same NCCL library and its own
// communicators, measured in the same run.
// SPDX-License-Identifier: Apache-2.0
//
// For each size, every thread runs --warmup untimed calls, then the threads meet at a barrier and
// each queues --iters back-to-back in-place float sums on its stream and waits for it; the time of
// a size is (last thread's end - first thread's start) / iters. algbw = bytes / time and busbw =
// algbw * 2 (n - 1) / n (the bus-bandwidth definition nccl-tests uses for all-reduce: the traffic
// one link carries in a ring). This tool calls cudaMalloc and NCCL directly on purpose: they are
// the baseline (tools/lint.sh exempts bin/*-bench.cc). It never sets NCCL_NVLS_ENABLE or any
// other NCCL variable: the environment is NCCL's.
#include "base/error.h"
#include "bin/bench-table.h"
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-nccl.h"
#include "cudamatrix/cu-vector.h"
#include "cudamatrix/internal/cu-nccl-lib.h"
#include "cutool/tool.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <nccl.h>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

const char* kUsage =
    "Times in-place float all-reduce (sum) over one thread per GPU: CuNcclComm::AllReduce on a\n"
    "CuVector against raw ncclAllReduce on cudaMalloc buffers (same NCCL library, its own\n"
    "communicators), for sizes from --min-bytes to --max-bytes. Prints bytes, count, time, algbw,\n"
    "busbw = algbw * 2 (n - 1) / n (0 with one GPU), the baseline's busbw and the ratio\n"
    "cuctx / baseline, then the peak busbw. Every size's result is checked (rank r adds r + 1).\n"
    "\n"
    "Usage: nccl-allreduce-bench [options]\n"
    "  e.g. nccl-allreduce-bench --gpus=8 --max-bytes=1G --csv-out=allreduce.csv\n"
    "Exit status: 0 done; 1 error or a wrong result; 2 usage error; 3 no GPU visible.\n";

// "1G", "64K", "8" -> bytes (K, M, G are powers of 1024).
size_t ParseBytes(const std::string& option, const std::string& text) {
  size_t pos = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  const std::string suffix = pos > 0 ? text.substr(pos) : "";
  unsigned long long scale = 1;
  if (suffix == "K" || suffix == "k")
    scale = 1ull << 10;
  else if (suffix == "M" || suffix == "m")
    scale = 1ull << 20;
  else if (suffix == "G" || suffix == "g")
    scale = 1ull << 30;
  else if (!suffix.empty())
    pos = 0;
  if (pos == 0 || text[0] == '-')
    throw ToolUsageError("--" + option +
                         ": expected a number of bytes with an optional K, M or G suffix, got '" +
                         text + "'");
  return static_cast<size_t>(value * scale);
}

// Raw NCCL, through the library cuctx loaded.
struct RawNccl {
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclGetErrorString) get_error_string = nullptr;
  RawNccl() {
    internal::LoadNcclFunction("ncclCommInitAll", &comm_init_all);
    internal::LoadNcclFunction("ncclCommDestroy", &comm_destroy);
    internal::LoadNcclFunction("ncclAllReduce", &all_reduce);
    internal::LoadNcclFunction("ncclGetErrorString", &get_error_string);
  }
  void Check(ncclResult_t r, const char* call) const {
    if (r != ncclSuccess) CUCTX_ERR << call << " failed: " << get_error_string(r);
  }
};

// One size's figures: seconds per call, and whether the checked sums were right.
struct SizeResult {
  size_t bytes = 0, count = 0;
  double cuctx_s = 0, baseline_s = 0;
  bool ok = true;  // every rank's checked sum was right, for cuctx and for the baseline
};

// Everything the worker threads share. Each worker writes only its own slots, between barriers.
struct Shared {
  explicit Shared(int n) : barrier(n), start(n), end(n) {}
  std::vector<int> ids;
  std::vector<size_t> counts;
  int warmup = 0, iters = 0;
  std::vector<std::unique_ptr<CuNcclComm>>* comms = nullptr;
  std::vector<ncclComm_t> raw_comms;
  const RawNccl* raw = nullptr;
  bench::ThreadBarrier barrier;
  std::vector<double> start, end;   // per thread, of the size being timed
  std::vector<SizeResult> results;  // filled (and printed) by thread 0
  double bus_factor = 0;            // 2 (n - 1) / n, or 0 for one rank
  std::FILE* csv = nullptr;         // --csv-out, or nullptr
  std::mutex mu;
  std::vector<std::string> errors;
  void AddError(const std::string& e) {
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back(e);
  }
  size_t NumErrors() {
    std::lock_guard<std::mutex> lock(mu);
    return errors.size();
  }
};

void PrintHeader() {
  std::printf("\n%12s %12s %12s %12s %12s %14s %14s %8s %6s\n", "bytes", "count", "time_us",
              "algbw_GB/s", "busbw_GB/s", "base_time_us", "base_busbw", "ratio", "check");
}

// Prints one size's line (and its CSV line). ratio = cuctx busbw / baseline busbw, which is
// baseline time / cuctx time (so it is defined for one rank too).
void PrintRow(const SizeResult& r, const Shared& s) {
  const double algbw = r.bytes / r.cuctx_s * 1e-9, busbw = algbw * s.bus_factor;
  const double base_busbw = r.bytes / r.baseline_s * 1e-9 * s.bus_factor;
  const double ratio = r.baseline_s / r.cuctx_s;
  std::printf("%12zu %12zu %12.2f %12.3f %12.3f %14.2f %14.3f %8.3f %6s\n", r.bytes, r.count,
              r.cuctx_s * 1e6, algbw, busbw, r.baseline_s * 1e6, base_busbw, ratio,
              r.ok ? "ok" : "WRONG");
  std::fflush(stdout);
  if (s.csv != nullptr)
    std::fprintf(s.csv, "%zu,%zu,%.4f,%.5f,%.5f,%.4f,%.5f,%.5f,%s\n", r.bytes, r.count,
                 r.cuctx_s * 1e6, algbw, busbw, r.baseline_s * 1e6, base_busbw, ratio,
                 r.ok ? "ok" : "wrong");
}

// Times `call` (one all-reduce on this thread's stream) as the file comment says; returns false
// if the barrier was cancelled. Thread 0 stores the seconds per call in *seconds.
template <typename Call>
bool TimeCalls(int k, Shared* s, const Call& call, double* seconds) {
  for (int i = 0; i < s->warmup; ++i) call();
  WaitForThreadStream();
  if (!s->barrier.Wait()) return false;
  s->start[k] = bench::Now();
  for (int i = 0; i < s->iters; ++i) call();
  WaitForThreadStream();
  s->end[k] = bench::Now();
  if (!s->barrier.Wait()) return false;
  if (k == 0) {
    const double first = *std::min_element(s->start.begin(), s->start.end());
    const double last = *std::max_element(s->end.begin(), s->end.end());
    *seconds = (last - first) / s->iters;
  }
  return true;
}

// Checks that every element of v is n (n + 1) / 2 after one sum of rank + 1 over n ranks.
void CheckSum(const CuVectorBase<float>& v, int n, int rank, const char* what, Shared* s) {
  const float expected = 0.5f * n * (n + 1);
  const float lo = v.Min(), hi = v.Max();
  if (lo != expected || hi != expected) {
    char text[256];
    std::snprintf(text, sizeof(text),
                  "%s: wrong all-reduce result on rank %d for %zu floats: elements in [%g, %g], "
                  "expected all %g",
                  what, rank, static_cast<size_t>(v.Dim()), lo, hi, expected);
    s->AddError(text);
  }
}

void Worker(int k, Shared* s) {
  float* raw_buffer = nullptr;
  try {
    const int n = static_cast<int>(s->ids.size());
    CuDevice::Instantiate().SelectGpuIdForThread(s->ids[k]);
    const size_t max_count = s->counts.back();
    CuVector<float> buffer(static_cast<MatrixIndexT>(max_count), kUndefined);
    CUCTX_CUDA_CHECK(cudaMalloc(&raw_buffer, max_count * sizeof(float)));
    CuNcclComm* comm = (*s->comms)[k].get();
    ncclComm_t raw_comm = s->raw_comms[k];
    cudaStream_t stream = static_cast<cudaStream_t>(CuDevice::Instantiate().Stream());
    if (!s->barrier.Wait()) return;
    size_t errors_seen = 0;  // thread 0: errors reported before this size
    for (size_t i = 0; i < s->counts.size(); ++i) {
      const size_t count = s->counts[i];
      CuSubVector<float> v(buffer, 0, static_cast<MatrixIndexT>(count));
      CuSubVector<float> raw(raw_buffer, static_cast<MatrixIndexT>(count));
      v.Set(k + 1.0f);
      comm->AllReduce(&v);
      CheckSum(v, n, k, "cuctx", s);
      double cuctx_s = 0, baseline_s = 0;
      if (!TimeCalls(
              k, s, [&] { comm->AllReduce(&v); }, &cuctx_s))
        break;
      raw.Set(k + 1.0f);
      s->raw->Check(
          s->raw->all_reduce(raw_buffer, raw_buffer, count, ncclFloat32, ncclSum, raw_comm, stream),
          "ncclAllReduce");
      CheckSum(raw, n, k, "baseline", s);
      auto raw_call = [&] {
        s->raw->Check(s->raw->all_reduce(raw_buffer, raw_buffer, count, ncclFloat32, ncclSum,
                                         raw_comm, stream),
                      "ncclAllReduce");
      };
      if (!TimeCalls(k, s, raw_call, &baseline_s)) break;
      // Every rank's checks of this size came before the barriers in TimeCalls.
      if (k == 0) {
        const size_t errors = s->NumErrors();
        s->results.push_back(
            {count * sizeof(float), count, cuctx_s, baseline_s, errors == errors_seen});
        errors_seen = errors;
        PrintRow(s->results.back(), *s);
      }
    }
  } catch (const std::exception& e) {
    s->AddError("GPU " + std::to_string(s->ids[k]) + ": " + e.what());
    s->barrier.Cancel();
  }
  if (raw_buffer != nullptr) CUCTX_CUDA_CHECK_NOTHROW(cudaFree(raw_buffer));
}

int Run(int gpus, const std::string& min_text, const std::string& max_text, int step_factor,
        int warmup, int iters, const std::string& csv_out) {
  const size_t min_bytes = ParseBytes("min-bytes", min_text);
  const size_t max_bytes = ParseBytes("max-bytes", max_text);
  if (min_bytes < sizeof(float)) throw ToolUsageError("--min-bytes must be at least 4 (one float)");
  if (max_bytes < min_bytes) throw ToolUsageError("--max-bytes must be >= --min-bytes");
  if (max_bytes / sizeof(float) > 0x7fffffffu)
    throw ToolUsageError("--max-bytes must be below 8G (a CuVector holds < 2^31 floats)");
  if (step_factor < 2) throw ToolUsageError("--step-factor must be >= 2");
  if (warmup < 0) throw ToolUsageError("--warmup must be >= 0");
  if (iters < 1) throw ToolUsageError("--iters must be >= 1");
  if (gpus < 0) throw ToolUsageError("--gpus must be >= 0 (0: all visible)");

  const int visible = CuDevice::DeviceCount();
  if (visible == 0) {
    std::fprintf(stderr, "nccl-allreduce-bench: no GPU visible\n");
    return kToolExitNoGpu;
  }
  const int n = gpus == 0 ? visible : gpus;
  if (n > visible)
    throw ToolUsageError("--gpus=" + std::to_string(gpus) + " but only " + std::to_string(visible) +
                         " GPU(s) are visible");

  Shared s(n);
  for (int k = 0; k < n; ++k) s.ids.push_back(k);
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= step_factor) {
    s.counts.push_back(bytes / sizeof(float));
    if (bytes > max_bytes / step_factor) break;
  }
  s.warmup = warmup;
  s.iters = iters;

  CuDevice& device = CuDevice::Instantiate();
  device.SelectGpuIdForThread(s.ids[0]);
  device.AllowMultithreading();
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  std::printf(
      "nccl-allreduce-bench: %d GPU(s), NCCL %d, NCCL_NVLS_ENABLE=%s, warmup %d, iters %d\n", n,
      CuNcclComm::NcclVersion(), nvls != nullptr ? nvls : "(unset)", warmup, iters);
  for (int k = 0; k < n; ++k) {
    char name[256];
    device.DeviceGetName(name, sizeof(name), s.ids[k]);
    std::printf("  rank %d: GPU %d %s\n", k, s.ids[k], name);
  }
  if (n == 1)
    std::printf("  one GPU: busbw is 0 by definition (no data crosses a link); compare times\n");

  std::vector<std::unique_ptr<CuNcclComm>> comms = CuNcclComm::CreateForThreads(s.ids);
  s.comms = &comms;
  const RawNccl raw;
  s.raw = &raw;
  s.raw_comms.assign(n, nullptr);
  raw.Check(raw.comm_init_all(s.raw_comms.data(), n, s.ids.data()), "ncclCommInitAll");

  s.bus_factor = n > 1 ? 2.0 * (n - 1) / n : 0.0;
  if (!csv_out.empty()) {
    s.csv = std::fopen(csv_out.c_str(), "w");
    if (s.csv == nullptr) CUCTX_ERR << "cannot open '" << csv_out << "' for writing";
    std::fprintf(s.csv,
                 "bytes,count,time_us,algbw_gbps,busbw_gbps,baseline_time_us,baseline_busbw_gbps,"
                 "ratio,check\n");
  }
  PrintHeader();
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k) threads.emplace_back(Worker, k, &s);
  for (std::thread& t : threads) t.join();
  for (ncclComm_t c : s.raw_comms) {
    const ncclResult_t r = raw.comm_destroy(c);
    if (r != ncclSuccess) CUCTX_WARN << "ncclCommDestroy failed: " << raw.get_error_string(r);
  }
  comms.clear();
  if (s.csv != nullptr && std::fclose(s.csv) != 0)
    CUCTX_ERR << "failed to write '" << csv_out << "'";

  double peak = 0, peak_base = 0;
  size_t peak_bytes = 0;
  for (const SizeResult& r : s.results) {
    const double busbw = r.bytes / r.cuctx_s * 1e-9 * s.bus_factor;
    if (busbw > peak || peak_bytes == 0) {
      peak = busbw;
      peak_bytes = r.bytes;
    }
    peak_base = std::max(peak_base, r.bytes / r.baseline_s * 1e-9 * s.bus_factor);
  }
  if (!s.results.empty()) {
    const SizeResult& last = s.results.back();
    std::printf(
        "summary: %d GPU(s): peak busbw %.3f GB/s at %s (baseline peak %.3f GB/s); at the largest "
        "size (%s) cuctx/baseline = %.3f\n",
        n, peak, bench::SizeName(peak_bytes).c_str(), peak_base,
        bench::SizeName(last.bytes).c_str(), last.baseline_s / last.cuctx_s);
  }
  for (const std::string& e : s.errors)
    std::fprintf(stderr, "nccl-allreduce-bench: %s\n", e.c_str());
  return s.errors.empty() && s.results.size() == s.counts.size() ? 0 : 1;
}

}  // namespace
}  // namespace cuctx

int main(int argc, char* argv[]) {
  int32_t gpus = 0, step_factor = 2, warmup = 5, iters = 20;
  std::string min_bytes = "8", max_bytes = "1G", csv_out;
  auto register_options = [&](cuctx::ParseOptions* po) {
    po->Register("gpus", &gpus, "Number of GPUs (one thread each, devices 0..N-1); 0: all visible");
    po->Register("min-bytes", &min_bytes, "Smallest message size in bytes (K, M, G suffixes)");
    po->Register("max-bytes", &max_bytes, "Largest message size in bytes (K, M, G suffixes)");
    po->Register("step-factor", &step_factor, "Each size is this many times the previous");
    po->Register("warmup", &warmup, "Untimed all-reduce calls per size");
    po->Register("iters", &iters, "Timed back-to-back all-reduce calls per size");
    po->Register("csv-out", &csv_out, "Also write the table as CSV to this file");
  };
  cuctx::ToolSpec spec{cuctx::kUsage, 0, 0, cuctx::ToolGpu::kNone};
  return cuctx::RunTool(argc, argv, spec, register_options, [&](const cuctx::ToolArgs&) {
    return cuctx::Run(gpus, min_bytes, max_bytes, step_factor, warmup, iters, csv_out);
  });
}
