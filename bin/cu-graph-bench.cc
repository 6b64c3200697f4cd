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
#include <cmath>
#include <cstdio>
#include <string>
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
  auto register_options = [&](ParseOptions* po) {
    po->Register("layers", &layers, "layers in the step");
    po->Register("budget", &budget, "seconds spent per size at most (roughly)");
    po->Register("csv", &csv, "print the final table as CSV");
  };
  auto body = [&](const ToolArgs& args) {
    if (layers < 1 || layers > 64)
      throw ToolUsageError("--layers must be in [1, 64], got " + std::to_string(layers));
    RequireToolGpu(args);
    const CuDeviceProperties& p = CuDevice::Instantiate().Properties();
    std::printf("cu-graph-bench: %s (cc %d.%d), driver %d, runtime %d, %d layers\n", p.name.c_str(),
                p.major, p.minor, p.driver_version, p.runtime_version, layers);
    Table table;
    RunSize(32, 256, layers, budget, &table);
    RunSize(128, 1024, layers, budget, &table);
    RunSize(512, 2048, layers, budget, &table);
    table.Print(csv);
    return kToolExitOk;
  };
  ToolSpec spec{usage, 0, 0, ToolGpu::kOptionsOnly, "yes"};
  return RunTool(argc, argv, spec, register_options, body);
}
