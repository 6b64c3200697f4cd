// bin/cu-allocator-snapshot.cc: turns an allocator trace (--cuda-allocator-trace) into a memory
// snapshot in PyTorch's format, by replaying it on a caching allocator over host memory that keeps
// its history.
// SPDX-License-Identifier: Apache-2.0
//
// The replay's upstream is the tests' HostAllocatorUpstream (header-only), VMM-like by default so
// that the picture matches the H100's expandable regions; the addresses are host addresses.
#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-memory-snapshot.h"
#include "cutool/host-allocator-upstream.h"
#include "cutool/tool.h"

#include <cstdio>
#include <memory>
#include <string>

namespace {

const char* kUsage =
    "Replays an allocator trace (written with --cuda-allocator-trace=FILE) on a caching allocator\n"
    "over host memory and writes its memory snapshot in PyTorch's format: the segments at the end\n"
    "and the trace's events (alloc, free, segment map/unmap) as the device trace, for\n"
    "python -m torch.cuda._memory_viz trace_plot|segment_plot (tools/memory-viz.sh).\n"
    "The snapshot is taken after the trace's last record, so blocks still live then are shown\n"
    "in use.\n"
    "\n"
    "Usage: cu-allocator-snapshot [options] TRACE SNAPSHOT\n"
    " e.g.: cu-allocator-snapshot tests/data/synthetic-nnet3.trace nnet3.pickle\n";

}  // namespace

int main(int argc, char* argv[]) {
  bool vmm = true;
  bool threads = true;
  int32_t quantum_mb = 32;
  int32_t capacity_gb = 80;
  int32_t max_events = 1000000;
  return cuctx::RunTool(
      argc, argv, cuctx::ToolSpec{kUsage, 2, 2},
      [&](cuctx::ParseOptions* po) {
        po->Register("vmm", &vmm,
                     "Expandable regions (mapped in 2 MiB granules) as with the VMM upstream; "
                     "false: cudaMalloc-like regions");
        po->Register("threads", &threads,
                     "Replay each trace thread on a thread of its own (the events' stream is the "
                     "thread); false: all on one thread");
        po->Register("quantum-mb", &quantum_mb, "--cuda-region-quantum-mb of the replay");
        po->Register("capacity-gb", &capacity_gb, "Memory the replayed allocator may hold, GiB");
        po->Register("max-events", &max_events, "Events kept for the snapshot (the last ones)");
      },
      [&](const cuctx::ToolArgs& args) {
        if (capacity_gb < 1 || capacity_gb > 4096)
          throw cuctx::ToolUsageError("--capacity-gb must be in [1, 4096]");
        if (max_events < 1) throw cuctx::ToolUsageError("--max-events must be >= 1");
        cuctx::CuAllocatorOptions o;
        o.memory_proportion = 0;
        o.region_quantum_mb = quantum_mb;
        o.history_events = max_events;
        try {
          o.Check();
        } catch (const cuctx::Error& e) {
          throw cuctx::ToolUsageError(e.Message());
        }
        const size_t capacity = static_cast<size_t>(capacity_gb) << 30;
        cuctx::CuMemoryAllocator allocator(o, std::make_unique<cuctx::test::HostAllocatorUpstream>(
                                                  capacity, vmm ? size_t{2} << 20 : 0));
        // The snapshot shows the end of the trace, before the replay frees what is still live.
        cuctx::MemorySnapshot s;
        const cuctx::AllocatorReplayResult r =
            cuctx::ReplayAllocatorTraceFile(args.Arg(1), threads, &allocator, [&] {
              s = allocator.Snapshot();
              s.source = "cu-allocator-snapshot " + args.Arg(1);
            });
        cuctx::WriteMemorySnapshotFile(s, args.Arg(2));
        size_t events = 0;
        for (const auto& t : s.device_traces) events += t.size();
        std::printf(
            "%lld mallocs, %lld frees, %d threads, %lld live at the end; snapshot %s: "
            "%zu segments, %zu events\n",
            static_cast<long long>(r.num_mallocs), static_cast<long long>(r.num_frees),
            r.num_threads, static_cast<long long>(r.num_freed_at_end), args.Arg(2).c_str(),
            s.segments.size(), events);
        return cuctx::kToolExitOk;
      });
}
