// bin/cu-memory-plan-bench.cc: static memory plans (CuMemoryPlan, CuPlannedScope) against the
// caching allocator, measured in the same run: plan peak / lower bound on recorded traces,
// planning time, per-allocation cost inside a planned scope, and an nnet step run under its plan
// (wall time, device memory).
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "base/parse-options.h"
#include "base/random.h"
#include "bin/bench-table.h"
#include "bin/nnet-step.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-check.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-memory-plan.h"
#include "cudamatrix/cu-planned-scope.h"
#include "cutool/tool.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace cuctx {
namespace {

using bench::Now;
using bench::Percentile;
using bench::Row;
using bench::Table;

constexpr double kMiB = 1048576.0;

void PlanRows(const std::string& what, const CuMemoryPlan& plan, Table* table) {
  table->Add({"plan", what, "peak/lower bound", plan.Ratio(), "lower bound (ideal)", 1.0,
              1.0 / plan.Ratio(), "<= 1.02"});
  std::printf("    %s: %lld buffers, peak %.2f MiB, lower bound %.2f MiB, planned in %.3f ms\n",
              what.c_str(), static_cast<long long>(plan.NumBuffers()), plan.PeakBytes() / kMiB,
              plan.LowerBoundBytes() / kMiB, plan.PlanningSeconds() * 1e3);
}

// A one-thread trace of `n` allocations with nested and overlapping lifetimes (a stack of
// activations freed in reverse plus short-lived temporaries), sizes 256 B .. 4 MiB.
std::string SyntheticTrace(int n, uint64 seed) {
  RandomState rng(seed);
  std::ostringstream out;
  out << "# cuctx-allocator-trace 1\n";
  std::vector<int64> stack;
  int64 id = 1;
  while (id <= n) {
    const size_t bytes = static_cast<size_t>(256) << RandInt(0, 14, &rng);
    out << "m 0 " << bytes << " " << id << "\n";
    if (RandInt(0, 2, &rng) == 0) {
      out << "f 0 " << id << "\n";  // a temporary
    } else {
      stack.push_back(id);
    }
    ++id;
    if (stack.size() > 64 || (RandInt(0, 9, &rng) == 0 && !stack.empty())) {
      for (int k = RandInt(1, static_cast<int>(stack.size()), &rng); k > 0; --k) {
        out << "f 0 " << stack.back() << "\n";
        stack.pop_back();
      }
    }
  }
  return out.str();
}

// The Malloc/Free sequence of an iteration replayed on the device through CuDevice (so through
// a planned scope when one is installed); no kernels.
struct Op {
  bool malloc;
  size_t bytes;
  int64 id;
};

std::vector<Op> ParseOps(const std::string& trace) {
  std::vector<Op> ops;
  std::istringstream in(trace);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    char kind = 0;
    f >> kind;
    Op op{};
    int thread = 0;
    if (kind == 'm') {
      op.malloc = true;
      f >> thread >> op.bytes >> op.id;
    } else if (kind == 'f') {
      f >> thread >> op.id;
    } else {
      continue;
    }
    ops.push_back(op);
  }
  return ops;
}

double RunOpsUs(const std::vector<Op>& ops, int64 max_id, CuMemoryPlans* plans) {
  CuDevice& device = CuDevice::Instantiate();
  std::vector<void*> ptr(static_cast<size_t>(max_id + 1), nullptr);
  int64 mallocs = 0;
  for (const Op& op : ops) mallocs += op.malloc ? 1 : 0;
  const double t0 = Now();
  {
    std::unique_ptr<CuPlannedScope> scope;
    if (plans != nullptr) scope = std::make_unique<CuPlannedScope>(plans, "ops");
    for (const Op& op : ops) {
      void*& p = ptr[static_cast<size_t>(op.id)];
      if (op.malloc) {
        p = device.Malloc(op.bytes);
      } else {
        device.Free(p);
        p = nullptr;
      }
    }
    for (void*& p : ptr) {
      device.Free(p);
      p = nullptr;
    }
  }
  return (Now() - t0) * 1e6 / mallocs;
}

void AllocationCostRows(Table* table) {
  const std::string trace = SyntheticTrace(2000, 11);
  const std::vector<Op> ops = ParseOps(trace);
  int64 max_id = 0;
  for (const Op& op : ops) max_id = std::max(max_id, op.id);
  CuMemoryPlans plans;
  RunOpsUs(ops, max_id, &plans);  // records and plans
  std::vector<double> planned, caching;
  for (int rep = 0; rep < 31; ++rep) {
    planned.push_back(RunOpsUs(ops, max_id, &plans));
    caching.push_back(RunOpsUs(ops, max_id, nullptr));
  }
  const CuMemoryPlans::Counters c = plans.GetCounters("ops");
  const double p = Percentile(planned, 0.5), k = Percentile(caching, 0.5);
  table->Add({"scope", "2000-alloc iteration, Malloc+Free", "us/pair", p,
              "caching allocator, same calls", k, k / p, "<= 0.05 us"});
  std::printf("    planned scopes: %lld, served %lld, fallbacks %lld, mismatched scopes %lld\n",
              static_cast<long long>(c.scopes), static_cast<long long>(c.served),
              static_cast<long long>(c.fallbacks), static_cast<long long>(c.mismatched_scopes));
}

// The nnet step under its plan against the caching allocator: wall time per step and memory.
void StepRows(MatrixIndexT rows, MatrixIndexT dim, int layers, Table* table) {
  bench::Net net = bench::MakeNet(dim, layers);
  CuMatrix<float> x(rows, dim, kUndefined);
  x.SetRandn();
  CuMemoryAllocator* allocator = CuDevice::Instantiate().Allocator();
  // The outputs are sized by a first step and reused, in every run below: the plan then covers
  // the step's own allocations, and the caching allocator's peak is measured on the same ones.
  bench::StepOutput out;
  bench::Step(net, x, &out);
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  const size_t before = allocator->GetStats().in_use_bytes;
  bench::Step(net, x, &out);
  CUCTX_CUDA_CHECK(cudaDeviceSynchronize());
  const size_t eager_peak = allocator->GetStats().peak_in_use_bytes - before;
  CuMemoryPlans plans;
  const std::string key = std::to_string(rows) + "x" + std::to_string(dim);
  {
    CuPlannedScope record(&plans, key);
    bench::Step(net, x, &out);
  }
  const CuMemoryPlan& plan = *plans.Find(key);
  char name[64];
  std::snprintf(name, sizeof(name), "nnet step %dx%d, %d layers", rows, dim, layers);
  PlanRows(std::string("recorded ") + name, plan, table);
  auto time_us = [&](bool planned) {
    std::vector<double> t;
    for (int rep = 0; rep < 9; ++rep) {
      CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
      const double t0 = Now();
      for (int i = 0; i < 20; ++i) {
        std::unique_ptr<CuPlannedScope> scope;
        if (planned) scope = std::make_unique<CuPlannedScope>(&plans, key);
        bench::Step(net, x, &out);
      }
      CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
      t.push_back((Now() - t0) * 1e6 / 20);
    }
    return Percentile(t, 0.5);
  };
  const double caching_us = time_us(false);
  const double planned_us = time_us(true);
  const CuMemoryPlans::Counters c = plans.GetCounters(key);
  table->Add({"step", name, "us/step", planned_us, "caching allocator", caching_us,
              caching_us / planned_us, ""});
  table->Add({"step", name, "MiB", plan.PeakBytes() / kMiB, "caching allocator peak in use",
              eager_peak / kMiB, eager_peak / std::max(1.0, double(plan.PeakBytes())), ""});
  std::printf("    %s: %lld scopes served %lld allocations, %lld fallbacks\n", name,
              static_cast<long long>(c.scopes), static_cast<long long>(c.served),
              static_cast<long long>(c.fallbacks));
}

}  // namespace
}  // namespace cuctx

int main(int argc, char* argv[]) {
  using namespace cuctx;
  const char* usage =
      "Benchmarks static memory plans (CuMemoryPlan, CuPlannedScope) against the caching\n"
      "allocator in the same run: plan peak / lower bound on a trace file and on a recorded nnet\n"
      "step, planning time for 10,000 allocations, cost per allocation inside a planned scope,\n"
      "and the nnet step run under its plan (wall time, memory). Prints one table.\n"
      "Usage: cu-memory-plan-bench [options]\n"
      "Exit status: 0 done, 1 error, 2 usage error, 3 no usable GPU.\n";
  std::string trace = "synthetic-nnet3.trace";
  int32 layers = 8;
  bool csv = false;
  auto register_options = [&](ParseOptions* po) {
    po->Register("trace", &trace,
                 "a one-thread allocator trace to plan (empty: skip); a bare file name is also "
                 "looked for in the data shipped with cuctx (tests/data, PREFIX/share/cuctx)");
    po->Register("layers", &layers, "layers of the nnet step");
    po->Register("csv", &csv, "print the final table as CSV");
  };
  auto body = [&](const ToolArgs& args) {
    if (layers < 1 || layers > 64)
      throw ToolUsageError("--layers must be in [1, 64], got " + std::to_string(layers));
    Table table;
    if (!trace.empty()) {
      const std::string path = FindToolDataFile(trace);
      PlanRows(path, CuMemoryPlan::FromTraceFile(path), &table);
    }
    {
      const std::string t = SyntheticTrace(10000, 3);
      std::istringstream in(t);
      const double t0 = Now();
      CuMemoryPlan plan = CuMemoryPlan::FromTrace(in);
      const double total_ms = (Now() - t0) * 1e3;
      table.Add({"plan", "10,000 allocations", "ms to plan", plan.PlanningSeconds() * 1e3,
                 "parse + plan", total_ms, total_ms / (plan.PlanningSeconds() * 1e3), "<= 50 ms"});
      PlanRows("synthetic 10,000 allocations", plan, &table);
    }
    RequireToolGpu(args);
    const CuDeviceProperties& p = CuDevice::Instantiate().Properties();
    std::printf("cu-memory-plan-bench: %s (cc %d.%d)\n", p.name.c_str(), p.major, p.minor);
    // Steps first, in increasing size, so that the allocator's peak after each is that step's.
    StepRows(32, 256, layers, &table);
    StepRows(128, 1024, layers, &table);
    StepRows(512, 2048, layers, &table);
    AllocationCostRows(&table);
    table.Print(csv);
    return kToolExitOk;
  };
  ToolSpec spec{usage, 0, 0, ToolGpu::kOptionsOnly, "yes"};
  return RunTool(argc, argv, spec, register_options, body);
}
