// bin/cu-graph-bench.cc: an nnet-style forward/backward step run eagerly and as a replayed CUDA
// graph (CuGraph), per layer, with the results compared and the graph's memory against the eager
// peak; all measured in the same run.
// SPDX-License-Identifier: Apache-2.0
//
// The step is bench::Step (bin/nnet-step.h). Every op allocates its output as real code does, so
// the eager run pays the allocator and the launches, the graph one launch.
#include "base/error.h"
#include "base/parse-options.h"
#include "base/random.h"
#include "bin/bench-table.h"
#include "bin/nnet-step.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "cutool/tool.h"
#include "matrix/matrix.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

using bench::MakeNet;
using bench::Net;
using bench::Now;
using bench::Row;
using bench::Step;
using bench::StepOutput;
using bench::Table;

// Largest |a - b| over the step's outputs, read back outside any capture.
double MaxDiff(const StepOutput& a, const StepOutput& b) {
  auto diff = [](const CuMatrixBase<float>& x, const CuMatrixBase<float>& y) {
    Matrix<float> hx(x.NumRows(), x.NumCols()), hy(y.NumRows(), y.NumCols());
    x.CopyToMat(&hx);
    y.CopyToMat(&hy);
    double m = 0;
    for (MatrixIndexT r = 0; r < hx.NumRows(); ++r)
      for (MatrixIndexT c = 0; c < hx.NumCols(); ++c)
        m = std::max(m, static_cast<double>(std::fabs(hx(r, c) - hy(r, c))));
    return m;
  };
  double m = diff(a.top, b.top);
  for (size_t l = 0; l < a.dw.size(); ++l) m = std::max(m, diff(a.dw[l], b.dw[l]));
  return m;
}

// Median over `reps` batches of `iters` calls of fn, in microseconds per call, waiting for the
// device at the end of each batch.
template <typename Fn>
double TimeUs(int reps, int iters, Fn fn) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    const double t0 = Now();
    for (int i = 0; i < iters; ++i) fn();
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    t.push_back((Now() - t0) * 1e6 / iters);
  }
  return bench::Percentile(t, 0.5);
}

void RunSize(MatrixIndexT rows, MatrixIndexT dim, int layers, double budget_s, Table* table) {
  Net net = MakeNet(dim, layers);
  CuMatrix<float> x(rows, dim, kUndefined);
  x.SetRandn();
  CuMemoryAllocator* allocator = CuDevice::Instantiate().Allocator();

  // Eager: one step for the reference and the peak memory (sizes run in increasing order, so the
  // allocator's peak after it is this step's), then timed steps.
  StepOutput eager_out;
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  const size_t in_use_before = allocator->GetStats().in_use_bytes;
  Step(net, x, &eager_out);
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  const size_t eager_peak = allocator->GetStats().peak_in_use_bytes - in_use_before;

  // One trial to size the batches to the budget.
  const double t0 = Now();
  StepOutput scratch;
  Step(net, x, &scratch);
  CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  const double once = std::max(Now() - t0, 1e-6);
  const int iters = std::max(5, std::min(2000, static_cast<int>(budget_s / 5 / once)));
  const double eager_us = TimeUs(5, iters, [&] { Step(net, x, &scratch); });

  StepOutput graph_out;
  const double c0 = Now();
  CuGraph graph = CuGraph::Capture([&] { Step(net, x, &graph_out); });
  const double capture_ms = (Now() - c0) * 1e3;
  graph.Launch();
  CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  const double max_diff = MaxDiff(eager_out, graph_out);
  const double graph_us = TimeUs(5, iters, [&] { graph.Launch(); });
  const double graph_mem = static_cast<double>(graph.MemoryBytes());

  char name[64];
  std::snprintf(name, sizeof(name), "%dx%d, %d layers", rows, dim, layers);
  const std::string target = rows == 32 ? ">= 3" : rows == 128 ? ">= 1.5" : "";
  table->Add({"graph", name, "us/layer", graph_us / layers, "eager, same step", eager_us / layers,
              eager_us / graph_us, target});
  table->Add({"graph", name, "max |diff|", max_diff, "eager result", 0.0, max_diff == 0 ? 1.0 : 0.0,
              "0 (bit-identical)"});
  // Both sides count their cuBLAS workspace: the graph's is in its pool, the eager one is the
  // capturing thread's own (set from the device allocator before its first capture, the size
  // NVIDIA recommends: 32 MiB from Hopper on, 4 MiB before).
  const double workspace = (CuDevice::Instantiate().Properties().major >= 9 ? 32.0 : 4.0) * 1048576;
  const double eager_mem = eager_peak + workspace;
  table->Add({"graph", name, "MiB", graph_mem / 1048576.0, "eager peak + cuBLAS workspace",
              eager_mem / 1048576.0, eager_mem / std::max(graph_mem, 1.0), "graph <= 1.1x"});
  std::printf(
      "    %s: %zu graph nodes, capture %.2f ms; eager %.1f us/step, graph %.1f us/step; graph "
      "pool %.1f MiB (includes a %s cuBLAS workspace), eager peak %.2f MiB\n",
      name, graph.NumNodes(), capture_ms, eager_us, graph_us, graph_mem / 1048576.0,
      CuDevice::Instantiate().Properties().major >= 9 ? "32 MiB" : "4 MiB", eager_peak / 1048576.0);
}

// ---- buckets: B graphs of the same step for B minibatch sizes ----------------------------------

// Device memory in use on the calling thread's device, as the driver reports it.
size_t UsedDeviceBytes() {
  size_t free_bytes = 0, total_bytes = 0;
  CUCTX_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return total_bytes - free_bytes;
}

// One way of holding the graphs' memory, as the bench runs it.
struct BucketMode {
  std::string name;
  CuGraphMemory memory;
  bool largest_first;  // capture order (kSharedPool: a pool's rule is to capture largest first)
};

struct BucketResult {
  double all_mib = 0, largest_mib = 0;  // device memory of all graphs, of the largest alone
  double replay_us = 0;                 // one round: every graph launched once
  double driver_reserved_mib = 0;       // kNodes: the driver's graph memory after the round
  // The floor of all graphs' memory when every graph may replay in any order: the outputs of
  // every graph stay distinct while the caller holds them, and the rest of the largest graph's
  // memory is needed once. Both parts measured: the bytes that escaped each capture
  // (CuGraph::EscapedBytes) and the largest alone. A shared pool may go slightly below it: a later
  // capture's outputs may take an earlier capture's freed temporaries, which its rule (replays in
  // capture order) allows.
  double escaped_all_mib = 0, escaped_largest_mib = 0;
  double FloorMib() const { return escaped_all_mib + (largest_mib - escaped_largest_mib); }
};

// The graphs of `rows` (one per size) in `mode`; `static_outputs`: every bucket's outputs are
// allocated before its capture (as a server keeps its output buffers), so the graphs allocate only
// temporaries; otherwise the step allocates its outputs inside and they escape the capture.
BucketResult RunBucketMode(const BucketMode& mode, const std::vector<MatrixIndexT>& rows,
                           const Net& net, const std::vector<CuMatrix<float>>& xs,
                           bool static_outputs, int rounds) {
  const MatrixIndexT dim = xs[0].NumCols();
  const int layers = static_cast<int>(net.w.size());
  const size_t n = rows.size();
  auto fresh_outputs = [&](std::vector<StepOutput>* outs) {
    outs->clear();
    outs->resize(n);
    if (!static_outputs) return;
    for (size_t b = 0; b < n; ++b) {
      (*outs)[b].top.Resize(rows[b], dim, kUndefined);
      (*outs)[b].dw.resize(layers);
      for (auto& dw : (*outs)[b].dw) dw.Resize(dim, dim, kUndefined);
    }
  };
  std::vector<size_t> order(n);
  for (size_t b = 0; b < n; ++b) order[b] = mode.largest_first ? n - 1 - b : b;
  auto capture = [&](size_t b, std::vector<StepOutput>* outs, CuGraphPool* pool) {
    auto body = [&, b] { Step(net, xs[b], &(*outs)[b]); };
    return mode.memory == CuGraphMemory::kSharedPool ? CuGraph::Capture(body, *pool)
                                                     : CuGraph::Capture(body, mode.memory);
  };
  BucketResult r;
  std::vector<StepOutput> outs;
  {
    // All graphs, captured in order, each launched once.
    fresh_outputs(&outs);
    CuGraph::ReleaseUnusedMemory();
    const size_t base = UsedDeviceBytes();
    CuGraphPool pool;
    std::vector<CuGraph> graphs(n);
    for (size_t b : order) graphs[b] = capture(b, &outs, &pool);
    for (size_t b = 0; b < n; ++b) graphs[b].Launch();
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    r.all_mib = (static_cast<double>(UsedDeviceBytes()) - base) / 1048576.0;
    for (const CuGraph& g : graphs) r.escaped_all_mib += g.EscapedBytes() / 1048576.0;
    r.driver_reserved_mib = CuGraph::DeviceGraphMemory().reserved / 1048576.0;
    // Replay rounds (the buckets in turn, as requests of every size come in).
    std::vector<double> t;
    for (int k = 0; k < 5; ++k) {
      CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
      const double t0 = Now();
      for (int i = 0; i < rounds; ++i)
        for (size_t b = 0; b < n; ++b) graphs[b].Launch();
      CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
      t.push_back((Now() - t0) * 1e6 / rounds);
    }
    r.replay_us = bench::Percentile(t, 0.5);
  }
  outs.clear();
  {
    // The largest alone.
    fresh_outputs(&outs);
    CuGraph::ReleaseUnusedMemory();
    const size_t base = UsedDeviceBytes();
    CuGraphPool pool;
    CuGraph g = capture(n - 1, &outs, &pool);
    g.Launch();
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    r.largest_mib = (static_cast<double>(UsedDeviceBytes()) - base) / 1048576.0;
    r.escaped_largest_mib = g.EscapedBytes() / 1048576.0;
  }
  outs.clear();
  CuGraph::ReleaseUnusedMemory();
  return r;
}

// `memory_target`: all graphs against the largest alone (outputs preallocated); `floor_target`:
// all graphs against the floor (BucketResult::FloorMib), for the default mode; 0: none.
void RunBuckets(const std::string& label, const std::vector<MatrixIndexT>& rows, MatrixIndexT dim,
                int layers, bool static_outputs, double memory_target, double floor_target,
                Table* table) {
  Net net = MakeNet(dim, layers);
  std::vector<CuMatrix<float>> xs;
  for (MatrixIndexT r : rows) {
    xs.emplace_back(r, dim, kUndefined);
    xs.back().SetRandn();
  }
  const int n = static_cast<int>(rows.size());
  // Warm-up: the thread's eager cuBLAS workspace, handles, kernels, one graph of each mode.
  for (CuGraphMemory m :
       {CuGraphMemory::kNodes, CuGraphMemory::kPrivatePool, CuGraphMemory::kSharedPool}) {
    StepOutput o;
    CuGraph g = CuGraph::Capture([&] { Step(net, xs[0], &o); }, m);
    g.Launch();
  }
  // Eager: every bucket's step once per round.
  std::vector<StepOutput> eager_out(rows.size());
  const int rounds = 20;
  const double eager_us = TimeUs(5, rounds, [&] {
    for (int b = 0; b < n; ++b) Step(net, xs[b], &eager_out[b]);
  });
  eager_out.clear();
  const std::vector<BucketMode> modes = {
      {"nodes", CuGraphMemory::kNodes, false},
      {"shared, largest first", CuGraphMemory::kSharedPool, true},
      {"shared, smallest first", CuGraphMemory::kSharedPool, false},
      {"private", CuGraphMemory::kPrivatePool, false},
  };
  std::vector<BucketResult> results;
  for (const BucketMode& m : modes)
    results.push_back(RunBucketMode(m, rows, net, xs, static_outputs, rounds));
  const BucketResult& priv = results.back();
  const double per_layer = 1.0 / (n * layers);
  for (size_t i = 0; i < modes.size(); ++i) {
    const BucketResult& r = results[i];
    const std::string name = label + ", " + modes[i].name;
    const bool is_default = modes[i].memory == CuGraph::DefaultMemory() && !modes[i].largest_first;
    char target[32] = "";
    if (is_default && memory_target > 0)
      std::snprintf(target, sizeof(target), "<= %.2f", memory_target);
    table->Add({"buckets", name, "MiB all", r.all_mib, "largest graph alone", r.largest_mib,
                r.all_mib / std::max(r.largest_mib, 1e-9), target});
    char floor_target_text[48] = "";
    if (is_default && floor_target > 0)
      std::snprintf(floor_target_text, sizeof(floor_target_text), "all <= %.2fx floor",
                    floor_target);
    // The ratio here is floor / all: 1 means the graphs hold no more than they must.
    table->Add({"buckets", name, "MiB all", r.all_mib, "floor: outputs + largest", r.FloorMib(),
                r.FloorMib() / std::max(r.all_mib, 1e-9), floor_target_text});
    table->Add({"buckets", name, "us/layer", r.replay_us * per_layer, "eager, same steps",
                eager_us * per_layer, eager_us / r.replay_us, ""});
    table->Add({"buckets", name, "us/layer", r.replay_us * per_layer, "private-pool graphs",
                priv.replay_us * per_layer, priv.replay_us / r.replay_us,
                is_default ? ">= 0.95" : ""});
    std::printf(
        "    %s: %d graphs hold %.1f MiB of the device (largest alone %.1f MiB), driver "
        "graph memory reserved %.1f MiB; a round of replays %.1f us, eager %.1f us\n",
        name.c_str(), n, r.all_mib, r.largest_mib, r.driver_reserved_mib, r.replay_us, eager_us);
    std::printf(
        "    %s: floor %.1f MiB = %.1f MiB escaping the %d captures + %.1f MiB of the largest "
        "graph's other memory (%.1f alone - %.1f its outputs); all = %.2fx floor = %.2fx "
        "largest alone\n",
        name.c_str(), r.FloorMib(), r.escaped_all_mib, n, r.largest_mib - r.escaped_largest_mib,
        r.largest_mib, r.escaped_largest_mib, r.all_mib / std::max(r.FloorMib(), 1e-9),
        r.all_mib / std::max(r.largest_mib, 1e-9));
    if (is_default && floor_target > 0) {
      const double x = r.all_mib / std::max(r.FloorMib(), 1e-9);
      std::printf("  buckets verdict: %s: all graphs = %.2fx their floor: %s (target <= %.2fx)\n",
                  name.c_str(), x, x <= floor_target ? "TARGET MET" : "TARGET MISSED",
                  floor_target);
    }
  }
}

// ---- a capture begun outside cuctx ------------------------------------------------------------

// cudaStreamBeginCapture around Cu code that creates temporaries, then 20 replays with eager
// matrices allocated after the capture: are they untouched, and does the graph's memory go back
// when the graph is destroyed?
void RunRawCapture(Table* table) {
  const MatrixIndexT n = 2048;
  CuMatrix<float> x(n, n, kUndefined), y(n, n, kUndefined);
  x.SetRandn();
  {
    CuMatrix<float> warm(x);
    warm.Scale(2.0f);
  }
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  CuMemoryAllocator* eager_allocator = CuDevice::Instantiate().Allocator();
  eager_allocator->ReleaseCachedMemory();
  const size_t before = UsedDeviceBytes();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUCTX_CUDA_CHECK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 8; ++i) {
    CuMatrix<float> t(x);
    t.Scale(2.0f);
    CuMatrix<float> u(n, n, kUndefined);
    u.Set(static_cast<float>(-i));
    y.CopyFromMat(t);
  }
  CUCTX_CUDA_CHECK(cudaStreamEndCapture(cudaStreamPerThread, &graph));
  CUCTX_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<CuMatrix<float>> eager;
  for (int i = 0; i < 8; ++i) {
    eager.emplace_back(n, n, kUndefined);
    eager.back().Set(7.0f);
  }
  for (int i = 0; i < 20; ++i) CUCTX_CUDA_CHECK(cudaGraphLaunch(exec, cudaStreamPerThread));
  CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  int untouched = 0;
  for (const auto& m : eager) untouched += m.Max() == 7.0f && m.Min() == 7.0f;
  eager.clear();
  eager_allocator->ReleaseCachedMemory();  // the eager matrices' memory is not the graph's
  const double held_mib = (static_cast<double>(UsedDeviceBytes()) - before) / 1048576.0;
  CUCTX_CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUCTX_CUDA_CHECK(cudaGraphDestroy(graph));
  // CUDA releases the graph's user objects asynchronously; the next allocation or this call
  // gives the pool back once it has.
  double after_mib = 0;
  for (int i = 0; i < 200; ++i) {
    CuGraph::ReleaseUnusedMemory();
    after_mib = (static_cast<double>(UsedDeviceBytes()) - before) / 1048576.0;
    if (after_mib < 1.0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  table->Add({"raw capture", "2048^2 temporaries, 20 replays", "eager intact", untouched * 1.0,
              "eager matrices", 8.0, untouched / 8.0, "8 of 8"});
  table->Add({"raw capture", "graph destroyed", "MiB still held", after_mib,
              "MiB held while it lived", held_mib, after_mib <= 2.0 ? 1.0 : 0.0, "~0"});
}

}  // namespace
}  // namespace cuctx

int main(int argc, char* argv[]) {
  using namespace cuctx;
  const char* usage =
      "Times an nnet-style forward/backward step (AddMatMat + AddVecToRows + Sigmoid forward,\n"
      "DiffSigmoid + two AddMatMat backward, outputs allocated per op) run eagerly and replayed\n"
      "as a CUDA graph (CuGraph), at 32x256, 128x1024 and 512x2048; compares the results and\n"
      "the graph's memory with the eager peak. Prints one table; ratio > 1 means the graph wins.\n"
      "Usage: cu-graph-bench [options]\n"
      "Exit status: 0 done, 1 error, 2 usage error, 3 no usable GPU.\n";
  int32 layers = 8;
  double budget = 1.0;
  bool csv = false;
  std::string only;
  auto register_options = [&](ParseOptions* po) {
    po->Register("layers", &layers, "layers in the step");
    po->Register("budget", &budget, "seconds spent per size at most (roughly)");
    po->Register("csv", &csv, "print the final table as CSV");
    po->Register("only", &only, "run one group: sizes, buckets or raw (default all)");
  };
  auto body = [&](const ToolArgs& args) {
    if (layers < 1 || layers > 64)
      throw ToolUsageError("--layers must be in [1, 64], got " + std::to_string(layers));
    RequireToolGpu(args);
    const CuDeviceProperties& p = CuDevice::Instantiate().Properties();
    std::printf("cu-graph-bench: %s (cc %d.%d), driver %d, runtime %d, %d layers\n", p.name.c_str(),
                p.major, p.minor, p.driver_version, p.runtime_version, layers);
    if (!only.empty() && only != "sizes" && only != "buckets" && only != "raw")
      throw ToolUsageError("--only must be sizes, buckets or raw, got '" + only + "'");
    std::printf("graph memory by default: %s\n", CuGraph::MemoryName(CuGraph::DefaultMemory()));
    Table table;
    if (only.empty() || only == "sizes") {
      RunSize(32, 256, layers, budget, &table);
      RunSize(128, 1024, layers, budget, &table);
      RunSize(512, 2048, layers, budget, &table);
    }
    if (only.empty() || only == "buckets") {
      std::vector<MatrixIndexT> small, large;
      for (MatrixIndexT r = 32; r <= 512; r += 32) small.push_back(r);
      for (MatrixIndexT r = 128; r <= 1024; r += 128) large.push_back(r);
      // With outputs inside, each graph's outputs stay distinct while held: the target is set
      // against the floor (the 1.25x of the largest alone is below it there).
      RunBuckets("16x(32..512)x256, outputs preallocated", small, 256, layers, true, 1.25, 1.25,
                 &table);
      RunBuckets("16x(32..512)x256, outputs inside", small, 256, layers, false, 0, 1.25, &table);
      RunBuckets("8x(128..1024)x1024, outputs preallocated", large, 1024, layers, true, 0, 0,
                 &table);
      RunBuckets("8x(128..1024)x1024, outputs inside", large, 1024, layers, false, 0, 0, &table);
    }
    if (only.empty() || only == "raw") RunRawCapture(&table);
    table.Print(csv);
    return kToolExitOk;
  };
  ToolSpec spec{usage, 0, 0, ToolGpu::kOptionsOnly, "yes"};
  return RunTool(argc, argv, spec, register_options, body);
}
