// bin/cu-allocator-soak.cc: a long multi-threaded soak of the caching allocator with poison
// checks, graphs, growth and release, deliberate out-of-memory and planned scopes; prints what it
// found and writes a memory snapshot at the end.
// SPDX-License-Identifier: Apache-2.0
//
// With a GPU (--use-gpu=yes or optional with one) it soaks the selected device's allocator (the
// one CuDevice uses, with the --cuda-* allocator options); without one, a CuMemoryAllocator over
// host memory with the same options (a VMM-like host upstream, --cpu-capacity-mb), so that the
// tool and its checks run anywhere. The upstream in CPU mode is the tests' HostAllocatorUpstream
// (header-only), so that the soak and the tests exercise the same double.
#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device-snapshot.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-fault-injection.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-memory-snapshot.h"
#include "cudamatrix/cu-planned-scope.h"
#include "cutool/alloc-stress.h"
#include "cutool/host-allocator-upstream.h"
#include "cutool/tool.h"
#include "matrix/matrix.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace {

const char* kUsage =
    "Soaks the caching allocator: --threads threads mix Malloc/Free of random sizes with poison\n"
    "checks and cross-thread frees; every few steps a thread also captures, launches and destroys\n"
    "a CUDA graph (checking its result), grows the pool by a large block and releases the cache,\n"
    "provokes an out-of-memory error and checks that allocation recovers, or runs a planned "
    "scope.\n"
    "Prints operations, corruptions (must be 0), double hand-outs (0), leaks (0), syncs per 1000\n"
    "frees, peak held / peak in use and where the threads' time went (by kind of work and of\n"
    "action), and writes a memory snapshot (PyTorch's format) at the end: on a GPU of the whole\n"
    "device, its graph pools marked.\n"
    "Exit 0 when every check passed, 1 otherwise, 3 with --use-gpu=yes and no GPU.\n"
    "Without a GPU it soaks an allocator over host memory with the same options.\n"
    "\n"
    "Usage: cu-allocator-soak [options]\n"
    " e.g.: cu-allocator-soak --use-gpu=yes --seconds=480 --snapshot=soak.pickle\n";

using cuctx::int64;

// Wall time of the extra actions, per kind (summed over the threads).
enum ActionKind { kGraph, kGrowth, kOom, kRecovery, kPlanned, kNumActionKinds };
const char* const kActionNames[kNumActionKinds] = {"action: graph", "action: growth+release",
                                                   "action: provoked OOM", "action: OOM recovery",
                                                   "action: planned"};

class ActionTimes {
 public:
  template <typename F>
  void Time(ActionKind kind, F&& body) {
    const auto start = std::chrono::steady_clock::now();
    struct Done {
      ActionTimes* self;
      ActionKind kind;
      std::chrono::steady_clock::time_point start;
      ~Done() {
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::lock_guard<std::mutex> lock(self->mutex_);
        ++self->work_[kind].count;
        self->work_[kind].seconds += s;
      }
    } done{this, kind, start};
    body();
  }
  cuctx::AllocStressResult::Work Get(ActionKind kind) {
    std::lock_guard<std::mutex> lock(mutex_);
    return work_[kind];
  }

 private:
  std::mutex mutex_;
  cuctx::AllocStressResult::Work work_[kNumActionKinds];
};

struct Counters {
  std::atomic<int64> graphs{0}, graph_mismatches{0}, growths{0}, ooms_provoked{0},
      oom_not_thrown{0}, recoveries{0}, recovery_failures{0}, planned_scopes{0}, planned_served{0},
      injected_surfaced{0};
};

// Captures y = 2 * x + 1 (a temporary inside the capture), launches it twice, checks y.
void GraphAction(Counters* c, std::mt19937_64* rng) {
  const int rows = 8 + static_cast<int>((*rng)() % 56), cols = 16 + static_cast<int>((*rng)() % 48);
  cuctx::Matrix<float> host(rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < cols; ++k) host(r, k) = static_cast<float>((r * 31 + k * 7) % 97) / 97.0f;
  cuctx::CuMatrix<float> x(host), y(rows, cols);
  {
    cuctx::CuGraph graph = cuctx::CuGraph::Capture([&] {
      cuctx::CuMatrix<float> t(rows, cols, cuctx::kUndefined);
      t.CopyFromMat(x);
      t.Scale(2.0f);
      t.Add(1.0f);
      y.CopyFromMat(t);
    });
    graph.Launch();
    graph.Launch();
  }  // destroyed here: waits for the device and gives its pool back
  cuctx::Matrix<float> back(rows, cols);
  y.CopyToMat(&back);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < cols; ++k)
      if (std::abs(back(r, k) - (2.0f * host(r, k) + 1.0f)) > 1e-5f) {
        ++c->graph_mismatches;
        return;
      }
  ++c->graphs;
}

}  // namespace

int main(int argc, char* argv[]) {
  double seconds = 480;
  int32_t threads = 8;
  int32_t max_request_kb = 4096;
  int32_t growth_mb = 256;
  int32_t cpu_capacity_mb = 2048;
  int32_t hook_every = 64;
  int32_t seed = 20261127;
  std::string snapshot = "cu-allocator-soak.pickle";
  // The snapshot's trace needs the allocator's history; --cuda-allocator-history=0 keeps the
  // thread caches on instead (the snapshot then has segments and blocks only).
  cuctx::CuDevice::AllocatorOptions().history_events = 200000;
  cuctx::ToolSpec spec{kUsage, 0, 0, cuctx::ToolGpu::kSelect};
  return cuctx::RunTool(
      argc, argv, spec,
      [&](cuctx::ParseOptions* po) {
        po->Register("seconds", &seconds, "How long to soak, in seconds");
        po->Register("threads", &threads, "Threads allocating at once");
        po->Register("max-request-kb", &max_request_kb,
                     "Largest random request, in KiB (70% of requests are at most 4 KiB)");
        po->Register("growth-mb", &growth_mb,
                     "Size of the large block that grows the pool, in MiB (CPU mode: at most an "
                     "eighth of --cpu-capacity-mb)");
        po->Register("cpu-capacity-mb", &cpu_capacity_mb,
                     "Without a GPU: the host memory the soaked allocator may hold, in MiB");
        po->Register("action-every", &hook_every,
                     "Steps between a thread's extra actions (graph, growth, out of memory, "
                     "planned scope)");
        po->Register("seed", &seed, "Seed of the threads' random generators");
        po->Register("snapshot", &snapshot,
                     "Write a memory snapshot (PyTorch's pickle format) here at the end; empty: "
                     "none");
      },
      [&](const cuctx::ToolArgs&) {
        if (!(seconds > 0)) throw cuctx::ToolUsageError("--seconds must be > 0");
        if (threads < 1 || threads > 256)
          throw cuctx::ToolUsageError("--threads must be in [1, 256]");
        if (max_request_kb < 1) throw cuctx::ToolUsageError("--max-request-kb must be >= 1");
        if (growth_mb < 1 || cpu_capacity_mb < 64)
          throw cuctx::ToolUsageError("--growth-mb must be >= 1 and --cpu-capacity-mb >= 64");
        if (hook_every < 1) throw cuctx::ToolUsageError("--action-every must be >= 1");
        cuctx::CuDevice& device = cuctx::CuDevice::Instantiate();
        const bool gpu = device.Enabled();
        std::unique_ptr<cuctx::CuMemoryAllocator> own;
        cuctx::test::HostAllocatorUpstream* host = nullptr;
        cuctx::CuMemoryAllocator* allocator = nullptr;
        size_t total_bytes = 0;
        if (gpu) {
          device.AllowMultithreading();
          allocator = device.Allocator();
          size_t free_bytes = 0;
          allocator->Upstream().MemoryInfo(&free_bytes, &total_bytes);
        } else {
          total_bytes = static_cast<size_t>(cpu_capacity_mb) << 20;
          auto up = std::make_unique<cuctx::test::HostAllocatorUpstream>(total_bytes, 2 << 20);
          host = up.get();
          // CUCTX_FAULT_INJECT applies here as to a device's upstream.
          std::unique_ptr<cuctx::CuAllocatorUpstream> wrapped = std::move(up);
          if (cuctx::FaultInjector::Enabled())
            wrapped = cuctx::NewFaultInjectingUpstream(std::move(wrapped));
          own = std::make_unique<cuctx::CuMemoryAllocator>(cuctx::CuDevice::AllocatorOptions(),
                                                           std::move(wrapped));
          allocator = own.get();
          growth_mb = std::min(growth_mb, cpu_capacity_mb / 8);
        }
        const size_t growth_bytes = static_cast<size_t>(growth_mb) << 20;
        const cuctx::CuAllocatorStats before = allocator->GetStats();
        Counters c;
        ActionTimes times;
        cuctx::CuMemoryPlans plans;
        cuctx::AllocStressOptions so;
        so.threads = threads;
        so.seconds = seconds;
        so.max_bytes = static_cast<size_t>(max_request_kb) << 10;
        so.seed = static_cast<cuctx::uint64>(seed);
        so.device_memory = gpu;
        so.hook_every = hook_every;
        so.thread_init = [] { cuctx::CuDevice::Instantiate(); };
        const bool faults = cuctx::FaultInjector::Enabled();
        // With CUCTX_FAULT_INJECT an action may fail on purpose: an OutOfMemoryError or an error
        // saying "injected fault" (also inside a failed graph capture) is counted, not an error.
        auto action = [&](const std::function<void()>& body) {
          try {
            body();
          } catch (const cuctx::Error& e) {
            const std::string what = e.what();
            if (!faults || (what.find("injected fault") == std::string::npos &&
                            what.find("out of") == std::string::npos))
              throw;
            ++c.injected_surfaced;
          }
        };
        so.hook = [&](int, std::mt19937_64* rng) {
          switch ((*rng)() % 4) {
            case 0:
              times.Time(kGraph, [&] { action([&] { GraphAction(&c, rng); }); });
              break;
            case 1: {  // grow by a large block, then give the cache back
              times.Time(kGrowth, [&] {
                action([&] {
                  void* p = allocator->Malloc(growth_bytes);
                  allocator->Free(p);
                  allocator->ReleaseCachedMemory();
                  ++c.growths;
                });
              });
              break;
            }
            case 2: {  // ask for more than the device has, then check that allocation recovers
              times.Time(kOom, [&] {
                action([&] {
                  try {
                    void* p = allocator->Malloc(2 * total_bytes);
                    allocator->Free(p);
                    ++c.oom_not_thrown;
                  } catch (const cuctx::OutOfMemoryError&) {
                    ++c.ooms_provoked;
                  }
                });
              });
              times.Time(kRecovery, [&] {
                try {
                  action([&] {
                    allocator->Free(allocator->Malloc(1 << 20));
                    ++c.recoveries;
                  });
                } catch (const cuctx::OutOfMemoryError&) {
                  ++c.recovery_failures;  // possible only if the other threads hold it all
                }
              });
              break;
            }
            default: {  // a planned iteration: the same requests every time for each key
              const int key = static_cast<int>((*rng)() % 3);
              times.Time(kPlanned, [&] {
                action([&] {
                  cuctx::CuPlannedScope scope(&plans, "soak=" + std::to_string(key), allocator);
                  void* held[3] = {nullptr, nullptr, nullptr};  // freed here if a Malloc throws
                  try {
                    held[0] = scope.Malloc(static_cast<size_t>(key + 1) << 16);
                    held[1] = scope.Malloc(static_cast<size_t>(3 - key) << 14);
                    scope.Free(held[0]);
                    held[0] = nullptr;
                    held[2] = scope.Malloc(static_cast<size_t>(key + 2) << 15);
                  } catch (...) {
                    for (void* p : held) scope.Free(p);
                    throw;
                  }
                  scope.Free(held[1]);
                  scope.Free(held[2]);
                  ++c.planned_scopes;
                  c.planned_served += scope.NumServed();
                });
              });
              break;
            }
          }
        };
        std::fprintf(stderr, "cu-allocator-soak: %d threads for %.0f s on %s\n", threads, seconds,
                     gpu ? "the GPU's allocator" : "an allocator over host memory (no GPU)");
        // The snapshot is taken near the end, while the threads still hold their blocks.
        std::atomic<bool> done{false};
        std::string snapshot_error;
        std::thread snapper([&] {
          const auto at =
              std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds * 0.95);
          while (!done.load() && std::chrono::steady_clock::now() < at)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          if (snapshot.empty() || done.load()) return;
          try {
            // On a GPU the whole device: its allocator, the threads' graph pools, graph nodes and
            // pinned host blocks (cu-device-snapshot.h).
            cuctx::MemorySnapshot s = gpu ? cuctx::DeviceMemorySnapshot() : allocator->Snapshot();
            s.source = "cu-allocator-soak";
            cuctx::WriteMemorySnapshotFile(s, snapshot);
          } catch (const std::exception& e) {
            snapshot_error = e.what();
          }
        });
        const cuctx::AllocStressResult r = cuctx::RunAllocStress(allocator, so);
        done.store(true);
        snapper.join();
        // The accounting below releases the cache, which waits for the streams: with injection
        // still on, that wait could fail on purpose outside any action and end the soak with an
        // error (seen once in `make test` on 2 cores). The run's injections are counted first.
        cuctx::FaultInjector::Counters injected;
        if (faults) {
          injected = cuctx::FaultInjector::GetCounters();
          cuctx::FaultInjector::Disable();
        }
        const cuctx::CuAllocatorStats after = allocator->GetStats();
        const int64 leaked_in_use =
            static_cast<int64>(after.in_use_bytes) - static_cast<int64>(before.in_use_bytes);
        allocator->ReleaseCachedMemory();
        const cuctx::CuAllocatorStats released = allocator->GetStats();
        // Held after releasing the cache: the upstream's own count in CPU mode.
        const int64 held_after = host != nullptr
                                     ? static_cast<int64>(host->HeldBytes() + host->MappedBytes())
                                     : static_cast<int64>(released.held_bytes);
        const int64 leaks = leaked_in_use + (before.in_use_bytes == 0 ? held_after : 0);
        const int64 operations = r.mallocs + r.frees + r.hook_calls;
        std::printf(
            "operations: %lld (%lld Malloc, %lld Free of which %lld cross-thread, %lld "
            "actions) in %.1f s\n",
            static_cast<long long>(operations), static_cast<long long>(r.mallocs),
            static_cast<long long>(r.frees), static_cast<long long>(r.cross_thread_frees),
            static_cast<long long>(r.hook_calls), r.seconds);
        std::printf(
            "actions: %lld graphs (%lld wrong results), %lld growths, %lld OOM provoked "
            "(%lld not thrown), %lld recoveries (%lld failed), %lld planned scopes "
            "(%lld allocations from plans)\n",
            static_cast<long long>(c.graphs.load()),
            static_cast<long long>(c.graph_mismatches.load()),
            static_cast<long long>(c.growths.load()),
            static_cast<long long>(c.ooms_provoked.load()),
            static_cast<long long>(c.oom_not_thrown.load()),
            static_cast<long long>(c.recoveries.load()),
            static_cast<long long>(c.recovery_failures.load()),
            static_cast<long long>(c.planned_scopes.load()),
            static_cast<long long>(c.planned_served.load()));
        std::printf("malloc failures: %lld (%lld out of memory)\n",
                    static_cast<long long>(r.malloc_failures),
                    static_cast<long long>(r.oom_errors));
        {
          // Where the time went: the threads' wall time by kind of work (the actions' kinds
          // also add up to "hook").
          std::printf(
              "time by kind (wall seconds summed over %d threads, of %.0f thread-seconds in "
              "all):\n",
              threads, r.seconds * threads);
          auto row = [](const char* name, const cuctx::AllocStressResult::Work& w) {
            std::printf("  %-24s %9lld calls %10.2f s %10.3f ms each\n", name,
                        static_cast<long long>(w.count), w.seconds,
                        w.count > 0 ? 1e3 * w.seconds / w.count : 0.0);
          };
          row("malloc", r.malloc_work);
          row("free", r.free_work);
          row("fill (poison)", r.fill_work);
          row("poison check", r.check_work);
          row("hand-off stream wait", r.handoff_work);
          row("SynchronizeGpu", r.sync_work);
          row("stream drained", r.drain_work);
          row("ReleaseCachedMemory", r.release_work);
          row("hook (all actions)", r.hook_work);
          for (int k = 0; k < kNumActionKinds; ++k)
            row(kActionNames[k], times.Get(static_cast<ActionKind>(k)));
          // The allocator's own side: its calls to the upstream (cudaMalloc or VMM map) and the
          // syncs its cross-thread rule forced.
          std::printf(
              "upstream: %lld allocations and %lld maps (%lld failed) in %.2f s, %lld unmapped "
              "ranges, %lld releases; %lld cross-thread syncs, %lld out-of-memory errors\n",
              static_cast<long long>(after.num_upstream_allocs),
              static_cast<long long>(after.num_upstream_maps),
              static_cast<long long>(after.num_upstream_map_failures + after.num_upstream_failures),
              after.upstream_alloc_seconds, static_cast<long long>(after.num_upstream_unmaps),
              static_cast<long long>(after.num_upstream_releases),
              static_cast<long long>(after.num_syncs),
              static_cast<long long>(after.num_oom_errors));
        }
        if (faults) {
          std::printf(
              "injected failures (CUCTX_FAULT_INJECT): %lld; failed actions: %lld, failed "
              "syncs or releases: %lld\n",
              static_cast<long long>(injected.TotalFailures()),
              static_cast<long long>(c.injected_surfaced.load()),
              static_cast<long long>(r.other_failures));
        }
        std::printf("corruptions: %lld\n", static_cast<long long>(r.corruptions));
        std::printf("double hand-outs: %lld\n", static_cast<long long>(r.double_handouts));
        std::printf("leaks: %lld bytes\n", static_cast<long long>(leaks));
        std::printf("syncs per 1000 frees: %.2f\n", after.SyncsPer1000Frees());
        std::printf("peak held / peak in use: %.3f (peak held %.1f MiB, peak in use %.1f MiB)\n",
                    after.peak_in_use_bytes > 0
                        ? static_cast<double>(after.peak_held_bytes) / after.peak_in_use_bytes
                        : 0.0,
                    after.peak_held_bytes / 1048576.0, after.peak_in_use_bytes / 1048576.0);
        if (!snapshot.empty())
          std::printf("snapshot: %s\n",
                      snapshot_error.empty() ? snapshot.c_str() : snapshot_error.c_str());
        for (const std::string& e : r.errors) std::printf("error: %s\n", e.c_str());
        std::fflush(stdout);
        const bool ok = r.corruptions == 0 && r.double_handouts == 0 && leaks == 0 &&
                        r.errors.empty() && c.graph_mismatches == 0 && c.oom_not_thrown == 0 &&
                        snapshot_error.empty();
        if (!ok) throw cuctx::Error("the soak found problems (see the lines above)");
        return cuctx::kToolExitOk;
      });
}
