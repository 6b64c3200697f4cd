// cudamatrix/internal/cu-allocator-trace.h: the parser of allocator traces (--cuda-allocator-trace),
// shared by ReplayAllocatorTrace() and CuMemoryPlan.
// SPDX-License-Identifier: Apache-2.0
//
// Private: included only by cudamatrix/*.cc, never installed. The format is documented near the
// end of CuMemoryAllocator's class comment in cudamatrix/cu-allocator.h.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_TRACE_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_TRACE_H_

#include "base/types.h"

#include <cstddef>
#include <istream>
#include <vector>

namespace cuctx {
namespace internal {

// One record of a trace.
struct TraceOp {
  char kind = 0;  // 'm', 'p', 'f', 's' or 'd'
  uint32 thread = 0;
  size_t a = 0, b = 0;  // 'm': bytes and 0; 'p': row_bytes and num_rows; else 0
  uint64 id = 0;        // 'm', 'p', 'f': the pointer id (0 for a zero-byte request); else 0
};

// Reads a whole trace from `in` and returns its records in order, skipping blank lines and '#'
// comments. Appends each <thread> number not yet in *threads to it, in order of first appearance
// (so *threads is normally passed empty). Checks what a replay relies on: known record kinds,
// field counts and types, id 0 exactly for zero-byte requests, no id allocated twice while live,
// and frees only of live ids. Throws cuctx::Error "allocator trace, line N: <problem>: '<line>'"
// for the first bad line, and cuctx::Error if the stream fails for a reason other than its end.
std::vector<TraceOp> ParseTrace(std::istream& in, std::vector<uint32>* threads);

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_TRACE_H_
