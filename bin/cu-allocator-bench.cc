// bin/cu-allocator-bench.cc: device-runtime benchmarks: allocator latency and scaling, trace
// replays, growth on expandable regions, pageable/pinned copies and thread start, each against CUDA's own calls in the same run.
// SPDX-License-Identifier: Apache-2.0
//
// This tool calls cudaMalloc, cudaMallocAsync and cudaHostAlloc directly on purpose: they are the
// baselines (tools/lint.sh exempts bin/*-bench.cc).
#include "base/error.h"
#include "base/parse-options.h"
#include "base/random.h"
#include "bin/bench-table.h"
#include "cudamatrix/cu-allocator-async.h"
#include "cudamatrix/cu-allocator-options.h"
#include "cudamatrix/cu-allocator-upstream.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-pinned.h"
#include "cudamatrix/internal/cu-capture-gate.h"
#include "cudamatrix/internal/cu-kernels.h"
#include "cutool/alternating-rounds.h"
#include "cutool/tool.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

using bench::Now;
using bench::Percentile;
using bench::Row;
using bench::SizeName;
using bench::Table;

// ---- Malloc+Free pair latency ------------------------------------------------------------------

using AllocFn = std::function<void*(size_t)>;
using FreeFn = std::function<void(void*)>;

struct PairResult {
  double median_us = 0, p99_us = 0;
  double pairs_per_second = 0;  // all threads together
};

// The cost of the two clock reads around one timed pair (median of many), subtracted from every
// latency so that sub-microsecond figures measure the calls, not the clock.
double ClockOverheadUs() {
  static const double overhead = [] {
    std::vector<double> t;
    for (int i = 0; i < 100000; ++i) {
      double t0 = Now();
      double t1 = Now();
      t.push_back((t1 - t0) * 1e6);
    }
    return Percentile(t, 0.5);
  }();
  return overhead;
}

// Each of `threads` threads times Malloc+Free pairs of `bytes` one by one until it has done
// `max_pairs` or spent `budget_s`. std::function indirection is the same for every allocator.
PairResult TimePairs(size_t bytes, int threads, int max_pairs, double budget_s, AllocFn alloc,
                     FreeFn release) {
  std::vector<std::vector<double>> lat(threads);
  std::vector<int> done(threads, 0);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  double start = 0, end = 0;
  const double overhead_us = ClockOverheadUs();
  auto body = [&](int t) {
    CuDevice::Instantiate();
    // Warm-up pair so that one-time costs (first region, pool creation) stay out of the numbers.
    release(alloc(bytes));
    ready.fetch_add(1);
    while (!go.load()) std::this_thread::yield();
    double t_start = Now();
    // A thread-local vector: writing into neighbouring vector headers from all threads would
    // share cache lines and slow the very thing being measured.
    std::vector<double> mine;
    mine.reserve(max_pairs);
    for (int i = 0; i < max_pairs; ++i) {
      double t0 = Now();
      void* p = alloc(bytes);
      release(p);
      double t1 = Now();
      mine.push_back(std::max(0.0, (t1 - t0) * 1e6 - overhead_us));
      if (t1 - t_start > budget_s) break;
    }
    done[t] = static_cast<int>(mine.size());
    lat[t] = std::move(mine);
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(body, t);
  while (ready.load() < threads) std::this_thread::yield();
  start = Now();
  go.store(true);
  for (auto& th : pool) th.join();
  end = Now();
  std::vector<double> all;
  int total = 0;
  for (int t = 0; t < threads; ++t) {
    all.insert(all.end(), lat[t].begin(), lat[t].end());
    total += done[t];
  }
  PairResult r;
  r.median_us = Percentile(all, 0.5);
  r.p99_us = Percentile(all, 0.99);
  r.pairs_per_second = total / (end - start);
  return r;
}

void PairBenchmarks(const std::vector<size_t>& sizes, int max_threads, double budget_s,
                    Table* table) {
  CuDevice& device = CuDevice::Instantiate();
  cudaMemPool_t pool;
  CUCTX_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device.DeviceId()));
  uint64_t threshold = UINT64_MAX;  // keep freed memory in the pool, like a caching allocator
  CUCTX_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

  AllocFn cuctx_alloc = [](size_t b) { return CuDevice::Instantiate().Malloc(b); };
  FreeFn cuctx_free = [](void* p) { CuDevice::Instantiate().Free(p); };
  AllocFn cuda_alloc = [](size_t b) {
    void* p = nullptr;
    CUCTX_CUDA_CHECK(cudaMalloc(&p, b));
    return p;
  };
  FreeFn cuda_free = [](void* p) { CUCTX_CUDA_CHECK(cudaFree(p)); };
  AllocFn async_alloc = [](size_t b) {
    void* p = nullptr;
    CUCTX_CUDA_CHECK(cudaMallocAsync(&p, b, cudaStreamPerThread));
    return p;
  };
  FreeFn async_free = [](void* p) { CUCTX_CUDA_CHECK(cudaFreeAsync(p, cudaStreamPerThread)); };

  // The two backends of --cuda-allocator, each a fresh allocator with the device's options.
  auto time_backend = [&](const std::string& backend, size_t bytes, int threads) {
    CuAllocatorOptions options = CuDevice::AllocatorOptions();
    options.backend = backend;
    options.trace_file.clear();
    std::unique_ptr<CuMemoryAllocator> allocator = NewDeviceMemoryAllocator(
        options, [] { SynchronizeGpu(); }, nullptr);
    if (threads > 1) allocator->AllowMultithreading();
    CuMemoryAllocator* a = allocator.get();
    PairResult r = TimePairs(
        bytes, threads, 20000, budget_s, [a](size_t b) { return a->Malloc(b); },
        [a](void* p) { a->Free(p); });
    CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
    return r;
  };
  const bool device_caches = CuDevice::AllocatorOptions().backend == "caching";

  for (int threads : {1, max_threads}) {
    for (size_t bytes : sizes) {
      std::string case_name = SizeName(bytes) + ", " + std::to_string(threads) + " thr";
      PairResult c = TimePairs(bytes, threads, 20000, budget_s, cuctx_alloc, cuctx_free);
      PairResult m = TimePairs(bytes, threads, 2000, budget_s, cuda_alloc, cuda_free);
      PairResult a = TimePairs(bytes, threads, 20000, budget_s, async_alloc, async_free);
      CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
      std::string target = (threads == 1 && bytes <= (1u << 20)) ? "cuctx <= 0.2 us" : "";
      table->Add({"pair", case_name, "median us", c.median_us, "cudaMalloc+cudaFree", m.median_us,
                  m.median_us / c.median_us, target});
      table->Add({"pair", case_name, "median us", c.median_us, "cudaMallocAsync+FreeAsync",
                  a.median_us, a.median_us / c.median_us, target});
      table->Add({"pair", case_name, "p99 us", c.p99_us, "cudaMallocAsync+FreeAsync", a.p99_us,
                  a.p99_us / c.p99_us, ""});
      if (threads > 1) {
        PairResult c1 = TimePairs(bytes, 1, 20000, budget_s, cuctx_alloc, cuctx_free);
        table->Add({"scaling", case_name, "Mpairs/s", c.pairs_per_second / 1e6, "cuctx, 1 thread",
                    c1.pairs_per_second / 1e6, c.pairs_per_second / c1.pairs_per_second,
                    ">= 4 (8 thr)"});
        table->Add({"scaling", case_name, "Mpairs/s", c.pairs_per_second / 1e6, "cudaMallocAsync",
                    a.pairs_per_second / 1e6, c.pairs_per_second / a.pairs_per_second, ""});
      }
      // The async backend against the caching allocator (the device's own, unless it was started
      // with --cuda-allocator=async; then a fresh caching one).
      PairResult k = device_caches ? c : time_backend("caching", bytes, threads);
      PairResult b = time_backend("async", bytes, threads);
      table->Add({"backend", case_name, "median us", k.median_us, "--cuda-allocator=async",
                  b.median_us, b.median_us / k.median_us, ""});
      if (threads > 1)
        table->Add({"backend", case_name, "Mpairs/s", k.pairs_per_second / 1e6,
                    "--cuda-allocator=async", b.pairs_per_second / 1e6,
                    k.pairs_per_second / b.pairs_per_second, ""});
    }
  }
}

// ---- capture checks ---------------------------------------------------------------------------

// What the queries cost that tell whether the calling thread's stream is being captured (CuDevice's
// Malloc/Free ask the driver's cuStreamIsCapturing once each, so that a capture begun outside
// cuctx gets its own pool): nanoseconds per call, median of 5 batches of 1M calls.
void CaptureCheckBenchmarks(Table* table) {
  using IsCapturingFn = CUresult (*)(CUstream, CUstreamCaptureStatus*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CUCTX_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuStreamIsCapturing", &fn, 12000,
                                                    cudaEnableDefault, &found));
  CUCTX_CHECK(fn != nullptr && found == cudaDriverEntryPointSuccess) << "no cuStreamIsCapturing";
  const auto driver = reinterpret_cast<IsCapturingFn>(fn);
  CuDevice::Instantiate().Free(CuDevice::Instantiate().Malloc(256));  // context current
  auto time_ns = [](const std::function<int()>& call) {
    constexpr int kCalls = 1000000;
    std::vector<double> t;
    int sink = 0;
    for (int r = 0; r < 5; ++r) {
      const double t0 = Now();
      for (int i = 0; i < kCalls; ++i) sink += call();
      t.push_back((Now() - t0) * 1e9 / kCalls);
    }
    if (sink == -1) std::printf("(never)\n");
    return bench::Percentile(t, 0.5);
  };
  const double d = time_ns([driver] {
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    return static_cast<int>(driver(CU_STREAM_PER_THREAD, &st)) + static_cast<int>(st);
  });
  const double rt = time_ns([] {
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    return static_cast<int>(cudaStreamIsCapturing(cudaStreamPerThread, &st)) + static_cast<int>(st);
  });
  const double info = time_ns([] {
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    return static_cast<int>(cudaStreamGetCaptureInfo(cudaStreamPerThread, &st, &id)) +
           static_cast<int>(st);
  });
  table->Add({"capture", "cuStreamIsCapturing", "ns/call", d, "cudaStreamIsCapturing", rt, rt / d,
              "<= 5 ns"});
  table->Add({"capture", "cuStreamIsCapturing", "ns/call", d, "cudaStreamGetCaptureInfo", info,
              info / d, ""});
}

// ---- foreign-capture detection cost -----------------------------------------------------------

// What the foreign-capture detection adds to CuDevice's Malloc+Free pair (256 B, one thread):
// the pair with the check off, with the CUPTI watch (what the default, CUCTX_CAPTURE_WATCH=auto,
// runs once a second thread checks) and with the driver asked at every call (what auto does while
// one thread checks), in `num_rounds` rounds of one process whose order of the three rotates
// each round. A round's figure for a mode is the median of 7 batches of 20000 pairs (ns per pair,
// the batch timed as a whole); the cost of a mode is the median over rounds of its difference to
// "off" in the same round. Prints one line per mode and a verdict against the 5 ns.
void DetectBenchmarks(int num_rounds, Table* table) {
  CuDevice& device = CuDevice::Instantiate();
  const std::string initial = internal::CaptureWatchMode();
  std::vector<std::string> modes = {"off", "cupti", "query"};
  // CUPTI's own cost falls on CUDA calls, not on the pair (which makes none): with the watch off
  // from the start (CUCTX_CAPTURE_WATCH=off), no CUPTI subscriber exists yet, so a kernel launch
  // can be timed before and after subscribing (once each: the subscription cannot be undone).
  auto launch_us = [] {
    std::vector<double> t;
    for (int b = 0; b < 5; ++b) {
      CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
      const double t0 = Now();
      for (int i = 0; i < 20000; ++i) LaunchNoOp(cudaStreamPerThread);
      t.push_back((Now() - t0) * 1e6 / 20000);
    }
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    return rounds::Quantile(t, 0.5);
  };
  const double launch_before = initial == "off" ? launch_us() : 0.0;
  if (!internal::SetCaptureWatchModeForTesting("cupti")) {
    std::printf(
        "  detect: CUPTI cannot be used here (a profiler or compute-sanitizer?); "
        "measuring off and query only\n");
    modes = {"off", "query"};
  }
  constexpr size_t kBytes = 256;
  constexpr int kBatches = 7, kPairs = 20000;
  auto one_mode = [&](const std::string& mode) {
    CUCTX_CHECK(internal::SetCaptureWatchModeForTesting(mode)) << "switching to " << mode;
    for (int i = 0; i < 2000; ++i) device.Free(device.Malloc(kBytes));  // warm, and re-check once
    std::vector<double> batch;
    for (int b = 0; b < kBatches; ++b) {
      const double t0 = Now();
      for (int i = 0; i < kPairs; ++i) device.Free(device.Malloc(kBytes));
      batch.push_back((Now() - t0) * 1e9 / kPairs);
    }
    return rounds::Quantile(batch, 0.5);
  };
  std::vector<std::vector<double>> per_round(modes.size());
  for (int r = 0; r < num_rounds; ++r)
    for (int m : rounds::RoundOrder(r, static_cast<int>(modes.size())))
      per_round[m].push_back(one_mode(modes[m]));
  internal::SetCaptureWatchModeForTesting(initial);
  std::printf(
      "  detect: CuDevice Malloc+Free pair of %zu B, 1 thread, %d rounds x %zu modes "
      "(order rotated), ns per pair:\n",
      kBytes, num_rounds, modes.size());
  std::printf("  %-6s %8s %8s %8s %8s %8s | %-10s %8s %8s %8s\n", "mode", "median", "q1", "q3",
              "min", "max", "vs off", "median", "q1", "q3");
  double watch_cost = 0;
  for (size_t m = 0; m < modes.size(); ++m) {
    const rounds::Spread s = rounds::Summarize(per_round[m]);
    const rounds::Spread d =
        rounds::Summarize(rounds::PairedDifferences(per_round[m], per_round[0]));
    std::printf("  %-6s %8.2f %8.2f %8.2f %8.2f %8.2f | %-10s %+8.2f %+8.2f %+8.2f\n",
                modes[m].c_str(), s.median, s.q1, s.q3, s.min, s.max, "", d.median, d.q1, d.q3);
    if (m == 0) continue;
    table->Add({"detect", "pair 256B, check " + modes[m], "ns/pair", s.median, "check off",
                rounds::Summarize(per_round[0]).median,
                rounds::Summarize(per_round[0]).median / s.median,
                modes[m] == "cupti" ? "cost <= 5 ns" : ""});
    if (modes[m] == "cupti") watch_cost = d.median;
  }
  if (initial == "off" && modes.size() == 3) {
    const double after = launch_us();
    std::printf(
        "  detect: a no-op kernel launch takes %.3f us (host) with no CUPTI subscriber, "
        "%.3f us with the watch's (one measurement each, in this order)\n",
        launch_before, after);
  } else {
    std::printf(
        "  detect: run with CUCTX_CAPTURE_WATCH=off to also time kernel launches before "
        "and after CUPTI subscribes\n");
  }
  if (modes.size() == 3)
    std::printf(
        "  detect verdict: the CUPTI watch costs %+.2f ns per pair (median of %d paired "
        "rounds): %s (target <= 5 ns)\n",
        watch_cost, num_rounds, watch_cost <= 5.0 ? "TARGET MET" : "TARGET MISSED");
}

// ---- trace replays -----------------------------------------------------------------------------

// Writes a trace (format of cu-allocator.h) of an nnet3-like training run: long-lived parameters
// and their gradients, then minibatches of varying size whose forward pass keeps one activation
// per layer live until the backward pass frees them in reverse, with short-lived temporaries in
// between. With several threads, each runs its own minibatches and the operations interleave
// randomly, as when several training or decoding threads share a GPU.
std::string SyntheticNnetTrace(int threads, int minibatches_per_thread, uint64 seed) {
  RandomState rng(seed);
  const int kLayers = 12;
  std::vector<int> dims(kLayers + 1);
  for (int l = 0; l <= kLayers; ++l) dims[l] = 256 * RandInt(1, 8, &rng);
  std::ostringstream out;
  out << "# cuctx-allocator-trace 1\n";
  int64 next_id = 1;
  // Per-thread program: a list of operations generated lazily, one minibatch at a time.
  struct ThreadState {
    std::vector<std::string> pending;
    int minibatches_left;
  };
  std::vector<ThreadState> state(threads);
  for (int t = 0; t < threads; ++t) {
    state[t].minibatches_left = minibatches_per_thread;
    for (int l = 0; l < kLayers; ++l) {
      size_t bytes = sizeof(float) * dims[l] * dims[l + 1];
      out << "m " << t << " " << bytes << " " << next_id++ << "\n";  // parameters, never freed
      out << "m " << t << " " << bytes << " " << next_id++ << "\n";  // their gradient
    }
  }
  auto make_minibatch = [&](int t) {
    std::vector<std::string>& ops = state[t].pending;
    int frames = 64 * RandInt(1, 8, &rng);
    std::vector<int64> acts;
    for (int l = 0; l <= kLayers; ++l) {
      int64 id = next_id++;
      acts.push_back(id);
      ops.push_back("p " + std::to_string(t) + " " + std::to_string(sizeof(float) * dims[l]) + " " +
                    std::to_string(frames) + " " + std::to_string(id));
      if (RandInt(0, 2, &rng) == 0) {  // a temporary
        int64 tmp = next_id++;
        ops.push_back("m " + std::to_string(t) + " " +
                      std::to_string(4 * frames * RandInt(1, 64, &rng)) + " " +
                      std::to_string(tmp));
        ops.push_back("f " + std::to_string(t) + " " + std::to_string(tmp));
      }
    }
    for (int l = kLayers; l >= 0; --l) {
      int64 grad = next_id++;
      ops.push_back("p " + std::to_string(t) + " " + std::to_string(sizeof(float) * dims[l]) + " " +
                    std::to_string(frames) + " " + std::to_string(grad));
      ops.push_back("f " + std::to_string(t) + " " + std::to_string(acts[l]));
      ops.push_back("f " + std::to_string(t) + " " + std::to_string(grad));
    }
    std::reverse(ops.begin(), ops.end());  // consumed from the back
  };
  int live_threads = threads;
  while (live_threads > 0) {
    int t = RandInt(0, threads - 1, &rng);
    if (state[t].pending.empty()) {
      if (state[t].minibatches_left == 0) {
        bool any = false;
        for (auto& s : state) any = any || !s.pending.empty() || s.minibatches_left > 0;
        if (!any) break;
        continue;
      }
      --state[t].minibatches_left;
      make_minibatch(t);
    }
    // A few operations at a time, so threads interleave at a realistic grain.
    for (int k = RandInt(1, 6, &rng); k > 0 && !state[t].pending.empty(); --k) {
      out << state[t].pending.back() << "\n";
      state[t].pending.pop_back();
    }
  }
  return out.str();
}

// A fresh upstream for the current device: "vmm" (expandable regions) or "cuda" (cudaMalloc).
std::unique_ptr<CuAllocatorUpstream> MakeUpstream(const std::string& kind) {
  auto sync = [] { SynchronizeGpu(); };
  if (kind == "cuda") return NewCudaAllocatorUpstream(sync);
  std::string why_not;
  std::unique_ptr<CuAllocatorUpstream> vmm = NewVmmAllocatorUpstream(sync, &why_not);
  if (vmm == nullptr) CUCTX_ERR << "the VMM upstream is not available here: " << why_not;
  return vmm;
}

// The options of a fresh allocator for a benchmark: the device's, growing on demand (held memory
// then measures fragmentation), with `upstream`, no trace.
CuAllocatorOptions FreshOptions(const std::string& upstream, float proportion = 0.0f) {
  CuAllocatorOptions options = CuDevice::AllocatorOptions();
  options.trace_file.clear();
  options.memory_proportion = proportion;
  options.upstream = upstream;
  return options;
}

CuAllocatorStats ReplayOnFreshAllocator(std::istream& trace, bool use_threads,
                                        const std::string& upstream,
                                        AllocatorReplayResult* result) {
  CuMemoryAllocator allocator(FreshOptions(upstream), MakeUpstream(upstream));
  *result = ReplayAllocatorTrace(trace, use_threads, &allocator);
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  return allocator.GetStats();
}

void ReplayBenchmarks(const std::vector<std::string>& trace_files, Table* table) {
  const std::string upstream = CuDevice::AllocatorOptions().upstream;
  for (int threads : {1, 4}) {
    const std::string text = SyntheticNnetTrace(threads, 200, 17 + threads);
    std::istringstream trace(text);
    AllocatorReplayResult result;
    double start = Now();
    CuAllocatorStats s = ReplayOnFreshAllocator(trace, threads > 1, upstream, &result);
    double seconds = Now() - start;
    std::string case_name = "synthetic nnet3, " + std::to_string(threads) + " thr, " + upstream;
    table->Add({"replay", case_name, "held/peak", s.Fragmentation(), "ideal (1.0)", 1.0,
                1.0 / s.Fragmentation(), upstream == "vmm" ? "<= 1.05" : "<= 1.15"});
    table->Add({"replay", case_name, "syncs/1000 frees", s.SyncsPer1000Frees(), "", 0.0, 0.0,
                threads > 1 ? "<= 10" : ""});
    std::printf(
        "    %s: %lld mallocs, %lld frees in %.2f s; peak in use %.1f MiB, held %.1f MiB "
        "(peak %.1f), %lld regions, %lld syncs, %lld maps, %lld unmaps\n",
        case_name.c_str(), static_cast<long long>(result.num_mallocs),
        static_cast<long long>(result.num_frees), seconds, s.peak_in_use_bytes / 1048576.0,
        s.held_bytes / 1048576.0, s.peak_held_bytes / 1048576.0,
        static_cast<long long>(s.num_regions), static_cast<long long>(s.num_syncs),
        static_cast<long long>(s.num_upstream_maps), static_cast<long long>(s.num_upstream_unmaps));
    if (upstream == "vmm") {  // the same trace on cudaMalloc regions, for comparison
      std::istringstream again(text);
      CuAllocatorStats c = ReplayOnFreshAllocator(again, threads > 1, "cuda", &result);
      table->Add({"replay", case_name, "held/peak", s.Fragmentation(), "cudaMalloc regions",
                  c.Fragmentation(), c.Fragmentation() / s.Fragmentation(), ""});
    }
  }
  for (const std::string& path : trace_files) {
    AllocatorReplayResult result;
    CuMemoryAllocator allocator(FreshOptions(upstream), MakeUpstream(upstream));
    result = ReplayAllocatorTraceFile(path, true, &allocator);
    CuAllocatorStats s = allocator.GetStats();
    table->Add({"replay", path, "held/peak", s.Fragmentation(), "ideal (1.0)", 1.0,
                1.0 / s.Fragmentation(), ""});
    table->Add({"replay", path, "syncs/1000 frees", s.SyncsPer1000Frees(), "", 0.0, 0.0, ""});
  }
}

// ---- growth: expandable (VMM) regions against cudaMalloc regions ------------------------------

size_t DeviceFreeBytes() {
  size_t free_bytes = 0, total_bytes = 0;
  CUCTX_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

constexpr double kMiB = 1048576.0;

// Device memory a fresh allocator takes for its first 1 MiB Malloc, in MiB.
double FirstUseMiB(const std::string& upstream, float proportion) {
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  const size_t before = DeviceFreeBytes();
  CuMemoryAllocator allocator(FreshOptions(upstream, proportion), MakeUpstream(upstream));
  void* p = allocator.Malloc(1 << 20);
  const size_t after = DeviceFreeBytes();
  allocator.Free(p);
  return before > after ? (before - after) / kMiB : 0.0;
}

// The case expandable regions were made for: every iteration allocates tensors 5% larger than
// the last iteration's. With `overlap` false all of an iteration's tensors (two kept, one
// temporary) die at its end, as in a training step whose batch grows; with `overlap` true the
// last iteration's two are freed only after the new ones exist (a harder, pipelined pattern).
// Returns the allocator's peak held / peak in use.
double GrowingSizes(const std::string& upstream, bool overlap, CuAllocatorStats* stats) {
  CuMemoryAllocator allocator(FreshOptions(upstream), MakeUpstream(upstream));
  std::vector<void*> previous;
  double bytes = 4 << 20;
  for (int i = 0; i < 80; ++i, bytes *= 1.05) {
    if (!overlap) {
      for (void* p : previous) allocator.Free(p);
      previous.clear();
    }
    std::vector<void*> current;
    for (int k = 0; k < 2; ++k) current.push_back(allocator.Malloc(static_cast<size_t>(bytes)));
    allocator.Free(allocator.Malloc(static_cast<size_t>(bytes)));  // the temporary
    for (void* p : previous) allocator.Free(p);
    previous = current;
  }
  for (void* p : previous) allocator.Free(p);
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  *stats = allocator.GetStats();
  return static_cast<double>(stats->peak_held_bytes) / stats->peak_in_use_bytes;
}

void GrowthBenchmarks(Table* table) {
  // First use: Kaldi's default takes half of the free memory up front.
  const double kaldi = FirstUseMiB("cuda", 0.5);
  for (const char* upstream : {"vmm", "cuda"}) {
    const double mib = FirstUseMiB(upstream, 0.0f);
    table->Add({"growth", std::string("first 1 MiB Malloc, ") + upstream, "MiB taken", mib,
                "cuda, proportion 0.5 (Kaldi)", kaldi, kaldi / std::max(mib, 1e-9),
                std::string(upstream) == "vmm" ? "<= 64 MiB" : ""});
  }
  for (bool overlap : {false, true}) {
    CuAllocatorStats v, c;
    const double vmm = GrowingSizes("vmm", overlap, &v);
    const double cuda = GrowingSizes("cuda", overlap, &c);
    const std::string name =
        std::string("sizes +5%/iter") + (overlap ? ", overlapping" : "") + ", vmm";
    table->Add({"growth", name, "held/peak", vmm, "cudaMalloc regions", cuda, cuda / vmm,
                overlap ? "" : "<= 1.05"});
    std::printf(
        "    %s: peak in use %.1f MiB; vmm held %.1f MiB (%lld maps), cudaMalloc regions held "
        "%.1f MiB (%lld regions)\n",
        name.c_str(), v.peak_in_use_bytes / kMiB, v.peak_held_bytes / kMiB,
        static_cast<long long>(v.num_upstream_maps), c.peak_held_bytes / kMiB,
        static_cast<long long>(c.num_regions));
  }

  // Map and unmap cost per granule, straight on the upstream, against cudaMalloc/cudaFree of the
  // same size; then one Unmap() call for many granules (one device sync for all).
  std::unique_ptr<CuAllocatorUpstream> up = MakeUpstream("vmm");
  const size_t g = up->MapGranularity();
  const int kChunks = 128;
  char* base = static_cast<char*>(up->Reserve(g * kChunks));
  std::vector<double> map_us, unmap_us, malloc_us, free_us;
  for (int i = 0; i < kChunks; ++i) {
    double t0 = Now();
    if (!up->Map(base + i * g, g)) CUCTX_ERR << "Map of one granule failed";
    map_us.push_back((Now() - t0) * 1e6);
  }
  for (int i = 0; i < kChunks; ++i) {
    double t0 = Now();
    up->Unmap({{base + i * g, g}});
    unmap_us.push_back((Now() - t0) * 1e6);
  }
  for (int i = 0; i < kChunks; ++i) {
    void* p = nullptr;
    double t0 = Now();
    CUCTX_CUDA_CHECK(cudaMalloc(&p, g));
    malloc_us.push_back((Now() - t0) * 1e6);
    t0 = Now();
    CUCTX_CUDA_CHECK(cudaFree(p));
    free_us.push_back((Now() - t0) * 1e6);
  }
  if (!up->Map(base, g * kChunks)) CUCTX_ERR << "Map of " << kChunks << " granules failed";
  double t0 = Now();
  up->Unmap({{base, g * kChunks}});
  const double batch_unmap_us = (Now() - t0) * 1e6 / kChunks;
  up->Unreserve(base, g * kChunks);
  const std::string chunk = SizeName(g) + " chunk";
  const double map_med = Percentile(map_us, 0.5), unmap_med = Percentile(unmap_us, 0.5);
  const double malloc_med = Percentile(malloc_us, 0.5), free_med = Percentile(free_us, 0.5);
  table->Add({"growth", "map " + chunk, "median us", map_med, "cudaMalloc, same size", malloc_med,
              malloc_med / map_med, ""});
  table->Add({"growth", "unmap " + chunk + " (1 per call)", "median us", unmap_med,
              "cudaFree, same size", free_med, free_med / unmap_med, ""});
  table->Add({"growth", "unmap " + chunk + " (128 per call)", "us/chunk", batch_unmap_us,
              "cudaFree, same size", free_med, free_med / batch_unmap_us, ""});

  // Release: after freeing everything, ReleaseCachedMemory() gives the memory back to the device.
  {
    CuMemoryAllocator allocator(FreshOptions("vmm"), MakeUpstream("vmm"));
    std::vector<void*> blocks;
    RandomState rng(5);
    for (int i = 0; i < 256; ++i)
      blocks.push_back(allocator.Malloc(static_cast<size_t>(RandInt(1, 16384, &rng)) * 1024));
    for (void* p : blocks) allocator.Free(p);
    CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
    const size_t held = allocator.GetStats().held_bytes;
    const size_t before = DeviceFreeBytes();
    t0 = Now();
    const size_t released = allocator.ReleaseCachedMemory();
    const double release_ms = (Now() - t0) * 1e3;
    const size_t after = DeviceFreeBytes();
    const double rise = after > before ? (after - before) / kMiB : 0.0;
    table->Add({"growth", "release after freeing all, vmm", "device MiB back", rise,
                "ReleaseCachedMemory() result", released / kMiB, rise / (released / kMiB),
                ">= 0.99"});
    std::printf(
        "    release: held %.1f MiB, ReleaseCachedMemory() %.1f MiB in %.2f ms, device free "
        "memory rose %.1f MiB, still held %.1f MiB\n",
        held / kMiB, released / kMiB, release_ms, rise, allocator.GetStats().held_bytes / kMiB);
  }
}

// ---- host<->device copies ----------------------------------------------------------------------

double MedianSeconds(int reps, const std::function<void()>& fn) {
  fn();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    double t0 = Now();
    fn();
    t.push_back(Now() - t0);
  }
  return Percentile(t, 0.5);
}

void CopyBenchmarks(size_t bytes, Table* table) {
  CuDevice& device = CuDevice::Instantiate();
  void* d_buf = device.Malloc(bytes);
  std::vector<char> pageable(bytes);
  for (size_t i = 0; i < bytes; i += 4096) pageable[i] = static_cast<char>(i >> 12);
  void* h_pinned = nullptr;
  CUCTX_CUDA_CHECK(cudaHostAlloc(&h_pinned, bytes, cudaHostAllocDefault));
  std::memset(h_pinned, 1, bytes);
  const int kReps = 15;
  double gb = bytes / 1e9;

  double c_h2d = MedianSeconds(kReps, [&] { CopyHostToDevice(d_buf, pageable.data(), bytes); });
  double p_h2d = MedianSeconds(kReps, [&] {
    CUCTX_CUDA_CHECK(cudaMemcpy(d_buf, pageable.data(), bytes, cudaMemcpyHostToDevice));
  });
  double n_h2d = MedianSeconds(
      kReps, [&] { CUCTX_CUDA_CHECK(cudaMemcpy(d_buf, h_pinned, bytes, cudaMemcpyHostToDevice)); });
  double c_d2h = MedianSeconds(kReps, [&] { CopyDeviceToHost(pageable.data(), d_buf, bytes); });
  double p_d2h = MedianSeconds(kReps, [&] {
    CUCTX_CUDA_CHECK(cudaMemcpy(pageable.data(), d_buf, bytes, cudaMemcpyDeviceToHost));
  });
  double n_d2h = MedianSeconds(
      kReps, [&] { CUCTX_CUDA_CHECK(cudaMemcpy(h_pinned, d_buf, bytes, cudaMemcpyDeviceToHost)); });
  std::string name = SizeName(bytes) + " from pageable";
  table->Add({"copy H2D", name, "GB/s", gb / c_h2d, "cudaMemcpy pageable", gb / p_h2d,
              p_h2d / c_h2d, ">= 2"});
  table->Add(
      {"copy H2D", name, "GB/s", gb / c_h2d, "cudaMemcpy pinned", gb / n_h2d, n_h2d / c_h2d, ""});
  name = SizeName(bytes) + " to pageable";
  table->Add(
      {"copy D2H", name, "GB/s", gb / c_d2h, "cudaMemcpy pageable", gb / p_d2h, p_d2h / c_d2h, ""});
  table->Add(
      {"copy D2H", name, "GB/s", gb / c_d2h, "cudaMemcpy pinned", gb / n_d2h, n_d2h / c_d2h, ""});
  // How the staged copy scales with the threads that split the CPU memcpy
  // (--cuda-copy-memcpy-threads).
  CuCopyOptions saved = GetCopyOptions();
  for (int32 memcpy_threads : {1, 2, 4, 8, 16}) {
    CuCopyOptions opts = saved;
    opts.memcpy_threads = memcpy_threads;
    SetCopyOptions(opts);
    double t = MedianSeconds(kReps, [&] { CopyHostToDevice(d_buf, pageable.data(), bytes); });
    table->Add({"copy H2D", SizeName(bytes) + ", " + std::to_string(memcpy_threads) + " memcpy thr",
                "GB/s", gb / t, "cudaMemcpy pageable", gb / p_h2d, p_h2d / t, ""});
  }
  SetCopyOptions(saved);
  CUCTX_CUDA_CHECK(cudaFreeHost(h_pinned));
  device.Free(d_buf);
}

// ---- thread start ------------------------------------------------------------------------------

// Median time, inside a new thread, from its first line to the end of a small op: cuctx's
// Instantiate + Malloc + memset + Free + stream sync (optionally + a cuBLAS call), against the same
// op done with plain CUDA calls on a buffer allocated in advance.
void ThreadStartBenchmarks(Table* table) {
  const int kThreads = 30;
  const size_t kBytes = 4096;
  void* shared = CuDevice::Instantiate().Malloc(kBytes);
  auto measure = [&](int mode) {
    std::vector<double> t;
    for (int i = 0; i < kThreads; ++i) {
      double elapsed = 0;
      std::thread th([&] {
        double t0 = Now();
        if (mode == 0) {  // plain CUDA baseline
          CUCTX_CUDA_CHECK(cudaMemsetAsync(shared, 0, kBytes, cudaStreamPerThread));
          CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
        } else {
          CuDevice& device = CuDevice::Instantiate();
          void* p = device.Malloc(kBytes);
          CUCTX_CUDA_CHECK(cudaMemsetAsync(p, 0, kBytes, cudaStreamPerThread));
          if (mode == 2) {
            const float two = 2.0f;
            CUCTX_CUBLAS_CHECK(cublasSscal(device.GetCublasHandle(), kBytes / sizeof(float), &two,
                                           static_cast<float*>(p), 1));
          }
          CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
          device.Free(p);
        }
        elapsed = Now() - t0;
      });
      th.join();
      t.push_back(elapsed * 1e3);
    }
    return Percentile(t, 0.5);
  };
  CuDevice::Instantiate().AllowMultithreading();
  double base = measure(0);
  double plain = measure(1);
  double blas = measure(2);
  table->Add({"thread", "Instantiate+small op", "median ms", plain, "plain CUDA, same op", base,
              base / plain, "<= 0.2 ms"});
  table->Add({"thread", "... + cuBLAS handle + call", "median ms", blas, "plain CUDA, same op",
              base, base / blas, ""});
  CuDevice::Instantiate().Free(shared);
}

}  // namespace
}  // namespace cuctx

int main(int argc, char* argv[]) {
  using namespace cuctx;
  const char* usage =
      "Benchmarks cuctx's device runtime against CUDA's own calls, measured in the same run:\n"
      "Malloc+Free pair latency and multi-thread scaling (vs cudaMalloc and cudaMallocAsync,\n"
      "and the caching allocator vs the --cuda-allocator=async backend: rows 'backend'),\n"
      "replays of a synthetic nnet3-like allocation trace and of recorded trace files\n"
      "(--cuda-allocator-trace), growth on expandable (VMM) regions against cudaMalloc regions\n"
      "(first-use footprint, growing sizes, map/unmap cost, release), pageable/pinned copies\n"
      "and thread start. Prints one table;\n"
      "ratio > 1 means cuctx is better.\n"
      "Usage: cu-allocator-bench [options] [trace-file ...]\n"
      "Exit status: 0 done, 1 error, 2 usage error, 3 no usable GPU.\n";
  int32 threads = 8;
  int32 copy_mb = 64;
  double budget = 0.2;
  bool csv = false;
  std::string only;
  int32 detect_rounds = 30;
  auto register_options = [&](ParseOptions* po) {
    po->Register("threads", &threads, "threads for the multi-thread pair benchmark");
    po->Register("copy-mb", &copy_mb, "size of the host<->device copies, MiB");
    po->Register("budget", &budget, "seconds spent per pair-latency case at most");
    po->Register("csv", &csv, "print the final table as CSV");
    po->Register("only", &only,
                 "run one group: pair, capture, detect, replay, growth, copy or thread (default "
                 "all)");
    po->Register("rounds", &detect_rounds, "alternating rounds of the detect group");
  };
  auto body = [&](const ToolArgs& args) {
    if (threads < 1 || threads > 256)
      throw ToolUsageError("--threads must be in [1, 256], got " + std::to_string(threads));
    if (copy_mb < 1) throw ToolUsageError("--copy-mb must be >= 1, got " + std::to_string(copy_mb));
    if (!only.empty() && only != "pair" && only != "replay" && only != "growth" && only != "copy" &&
        only != "capture" && only != "detect" && only != "thread")
      throw ToolUsageError(
          "--only must be pair, capture, detect, replay, growth, copy or thread, got '" + only +
          "'");
    if (detect_rounds < 3 || detect_rounds > 10000)
      throw ToolUsageError("--rounds must be in [3, 10000], got " + std::to_string(detect_rounds));
    RequireToolGpu(args);
    CuDevice& device = CuDevice::Instantiate();
    device.AllowMultithreading();
    const CuDeviceProperties& p = device.Properties();
    std::printf(
        "cu-allocator-bench: %s (cc %d.%d), driver %d, runtime %d; clock-read overhead "
        "%.3f us, subtracted from pair latencies\n",
        p.name.c_str(), p.major, p.minor, p.driver_version, p.runtime_version, ClockOverheadUs());
    Table table;
    std::vector<std::string> traces;
    for (int i = 1; i <= args.NumArgs(); ++i) traces.push_back(args.Arg(i));
    if (only.empty() || only == "pair") {
      std::vector<size_t> sizes = {256, 4096, 65536, 1u << 20, 16u << 20, 256u << 20};
      PairBenchmarks(sizes, threads, budget, &table);
    }
    if (only.empty() || only == "capture") CaptureCheckBenchmarks(&table);
    if (only.empty() || only == "detect") DetectBenchmarks(detect_rounds, &table);
    if (only.empty() || only == "replay") ReplayBenchmarks(traces, &table);
    if (only.empty() || only == "growth") GrowthBenchmarks(&table);
    if (only.empty() || only == "copy") CopyBenchmarks(static_cast<size_t>(copy_mb) << 20, &table);
    if (only.empty() || only == "thread") ThreadStartBenchmarks(&table);
    table.Print(csv);
    device.PrintMemoryUsage();
    return kToolExitOk;
  };
  ToolSpec spec{usage, 0, -1, ToolGpu::kOptionsOnly, "yes"};
  return RunTool(argc, argv, spec, register_options, body);
}
