// bin/cu-memory-plan.cc: plans static memory for one recorded iteration (CuMemoryPlan) and prints
// the block size it needs, the lower bound and, on request, every buffer's offset.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-memory-plan.h"

#include "cutool/tool.h"

#include <iostream>
#include <string>

namespace {

const char* kUsage =
    "Plans static memory for one recorded iteration: reads an allocator trace (written with\n"
    "--cuda-allocator-trace=FILE while the program ran one iteration) and gives every allocation "
    "of\n"
    "one thread an offset in a single block, so that no two allocations alive at the same time\n"
    "overlap (greedy by size, best fit; see cudamatrix/cu-memory-plan.h). Prints one \"name: "
    "value\"\n"
    "per line: buffers, peak (the block size the plan needs), lower bound (the most memory alive\n"
    "at once, which no plan can beat), their ratio and the planning time.\n"
    "\n"
    "Usage: cu-memory-plan [options] <trace-in>   (\"-\" is stdin)\n"
    "Exit status: 0 printed; 1 the trace could not be read or is malformed, or the thread to plan\n"
    "is missing or was not named in a trace of several threads; 2 usage error.\n";

}  // namespace

int main(int argc, char* argv[]) {
  bool json = false;
  bool list_buffers = false;
  cuctx::int32 thread = cuctx::CuMemoryPlan::kOnlyThread;
  return cuctx::RunTool(
      argc, argv, cuctx::ToolSpec{kUsage, 1, 1},
      [&](cuctx::ParseOptions* po) {
        po->Register("json", &json,
                     "Print one JSON object (num_buffers, peak_bytes, lower_bound_bytes, ratio, "
                     "planning_seconds) instead of text");
        po->Register("thread", &thread,
                     "The trace thread to plan; -1: the trace's only thread (an error if it has "
                     "several)");
        po->Register("buffers", &list_buffers,
                     "Also list every buffer: index, kind, request, size, offset and lifetime "
                     "[begin, end) in trace steps");
      },
      [&](const cuctx::ToolArgs& args) {
        if (thread < cuctx::CuMemoryPlan::kOnlyThread)
          throw cuctx::ToolUsageError(
              "--thread must be >= 0, or -1 for the trace's only thread; got " +
              std::to_string(thread));
        cuctx::CheckRxfilenameArg(args.Arg(1), "the trace");
        cuctx::ToolInput in(args.Arg(1));
        const cuctx::CuMemoryPlan plan = [&] {
          try {
            return cuctx::CuMemoryPlan::FromTrace(in.Stream(), thread);
          } catch (const cuctx::Error& e) {
            throw cuctx::Error("reading " + in.Name() + ": " + e.what());
          }
        }();
        std::string problem;
        // A failure here is a bug in the planner, not in the trace; say so rather than print a
        // plan that would corrupt memory.
        if (!plan.Verify(&problem))
          throw cuctx::Error("internal error: the plan fails its check: " + problem);
        if (json)
          std::cout << plan.ToJson(list_buffers) << "\n";
        else
          std::cout << plan.ToString(list_buffers);
        std::cout.flush();
        if (!std::cout) throw cuctx::Error("cannot write to standard output");
        return cuctx::kToolExitOk;
      });
}
