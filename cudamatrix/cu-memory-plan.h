// cudamatrix/cu-memory-plan.h: CuMemoryPlan, an offline static memory plan for one recorded
// iteration: an offset in one block for every allocation of an allocator trace.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_MEMORY_PLAN_H_
#define CUCTX_CUDAMATRIX_CU_MEMORY_PLAN_H_

#include "base/types.h"

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace cuctx {

namespace test {
class CuMemoryPlanPeer;  // tests/cudamatrix/cu-memory-plan-test.cc: damages plans to test Verify()
}  // namespace test

// A static memory plan: given every allocation of one training or decoding iteration with its
// lifetime, an offset for each inside one block of PeakBytes() bytes such that no two allocations
// alive at the same time overlap. A program that repeats the same iteration can then take one
// block of PeakBytes() from the allocator and serve the i-th allocation of each iteration at
// offset Buffers()[i].offset, with no per-call allocator work and no fragmentation. This class is
// the offline part: it computes and checks the plan; it allocates no device memory.
//
// Sources. FromTrace() reads a trace written by --cuda-allocator-trace (format in the class
// comment of CuMemoryAllocator, cudamatrix/cu-allocator.h) that holds ONE iteration, and plans
// the allocations of ONE of its threads. Each non-zero Malloc ('m') or MallocPitch ('p') record of
// that thread becomes a buffer, in record order. Lifetimes are counted in steps: the m, p and f
// records of the whole trace (all threads, zero-byte requests included; s and d records are
// ignored) are numbered 0, 1, 2, ... in file order, and a buffer lives over [its m/p record's
// step, its f record's step), whichever thread freed it; a buffer never freed lives to the end
// (the number of steps). Zero-byte requests (id 0) get no buffer, so Buffers() has one entry per
// non-null pointer the thread received. FromIntervals() takes lifetimes and sizes directly (for
// tests and for plans made from other sources).
//
// Sizes. A buffer's size is its block size as CuMemoryAllocator rounds it (AllocatorImpl::Malloc
// and MallocPitch in cudamatrix/cu-allocator.cc): Malloc(bytes) takes RoundUp(bytes, 256);
// MallocPitch(row_bytes, num_rows) takes pitch * num_rows with pitch = RoundUp(row_bytes, 256)
// (the pitch outside debug stride mode). Offsets are multiples of kAlignment = 256, so every
// planned pointer has the allocator's alignment if the block's base has it.
//
// Algorithm: "greedy by size" offset assignment, as published by Pisarchyk and Lee, "Efficient
// Memory Management for Deep Neural Net Inference" (arXiv:2001.03288, 2020), its "greedy by size"
// strategy for offset calculation, and as used by TensorFlow Lite's arena planner. The buffers
// are taken by size, largest first (ties: the earlier allocation, i.e. the smaller begin step,
// then the smaller index, first). Each is placed at the smallest gap that fits it (best fit, ties
// at the lower offset) between the already-placed buffers whose lifetimes overlap its own, taken
// in offset order; if no gap fits, just above the highest of them (offset 0 if there are none).
// Placed buffers whose lifetimes do not overlap are ignored, which is how memory is reused.
// The result is not optimal in general (the problem is NP-hard), but on the nested lifetimes of
// network training it is typically within a few percent of LowerBoundBytes(), the most memory
// alive at one step, which no plan can beat. When it ends more than 1% above that bound, the same
// paper's "greedy by breadth" order (the steps with the most memory alive first, each placing its
// buffers largest first) is tried with the same placement and the smaller plan kept: on
// independent random lifetimes that lowers the mean from about 1.02 to 1.015 of the bound, but
// single sets still end 15 to 30% above it (see the property test), where the bound itself may be
// out of any placement's reach.
//
// NOTE ON SPEED: the obvious search compares each buffer with every buffer placed before it
// (O(n^2): 50 million interval tests for 10,000 allocations) and then sorts the overlapping ones
// by offset. Here the placed buffers are kept as unions of address ranges ("islands") in a
// segment tree over the (compressed) steps: under each node, the union of the buffers alive at
// all its steps and the union of those alive at some of them. The placed buffers alive during a
// new buffer's lifetime are then the union of O(log n) of those lists, merged in time linear in
// their length; adjacent buffers alive together collapse into one island, so a query reads
// islands rather than every overlapping buffer. Placing n buffers costs O(n log n) list updates
// plus, per buffer, the merge of O(log n) lists: O(n log n) when the islands stay few, and no worse
// than O(n * overlaps * log n) when they do not. On the 2-core machine this was written on, 10,000
// allocations took about 11 ms for a training step whose layers repeat their shapes, 40 ms for
// random lifetimes and 80 ms for a training step whose every buffer has a different size (which
// scatters the buffers alive together); tests/cudamatrix/cu-memory-plan-test.cc prints these. The
// result is exactly that of the obvious search (the tests compare the two).
//
// Ownership and thread-safety: a plan owns its buffer list and nothing else (no device memory,
// no reference to the trace or the allocator). It is immutable after construction, so one plan
// may be read from any number of threads at once. Move-only: a plan can be large, and sharing
// one by const reference is always enough.
class CuMemoryPlan {
 public:
  // Offsets and sizes are multiples of this; equal to CuMemoryAllocator::kAlignment.
  static constexpr size_t kAlignment = 256;
  // FromTrace(): plan the trace's only thread.
  static constexpr int32 kOnlyThread = -1;

  // One planned allocation.
  struct Buffer {
    char kind = 'm';       // 'm' Malloc, 'p' MallocPitch, 'i' an interval given to FromIntervals
    uint64 id = 0;         // the trace's pointer id ('m', 'p'); the input index ('i')
    size_t bytes = 0;      // the request: bytes ('m', 'i'); row_bytes * num_rows ('p')
    size_t row_bytes = 0;  // 'p' only: the request's row_bytes and num_rows
    size_t num_rows = 0;
    size_t pitch = 0;  // 'p' only: row_bytes rounded up to kAlignment
    size_t size = 0;   // the block size: a multiple of kAlignment, >= bytes
    int64 begin = 0;   // alive over steps [begin, end); begin < end
    int64 end = 0;
    bool freed = true;  // false: never freed in the trace (alive to the end of the iteration)
    size_t offset = 0;  // a multiple of kAlignment; offset + size <= PeakBytes()
  };

  // A lifetime and a size, for FromIntervals(). Alive over steps [begin, end).
  struct Interval {
    size_t bytes = 0;
    int64 begin = 0;
    int64 end = 0;
  };

  // Plans the allocations of trace thread `thread` (>= 0, or kOnlyThread: the trace must have
  // records of exactly one thread). Throws cuctx::Error: with the parser's "allocator trace, line N: ..."
  // message for a malformed trace; when the trace has no records; when kOnlyThread is given and
  // the trace has several threads, or `thread` has no records, naming the threads found; when a
  // request is larger than any device could serve (over 2^46 bytes, which the allocator refuses).
  static CuMemoryPlan FromTrace(std::istream& trace, int32 thread = kOnlyThread);
  // The same, reading the file `path`; cuctx::Error if it cannot be opened.
  static CuMemoryPlan FromTraceFile(const std::string& path, int32 thread = kOnlyThread);
  // Plans one buffer per interval, in the given order (Buffers()[i] is intervals[i], with kind 'i'
  // and id i). Sizes are rounded up to kAlignment, as Malloc would. Throws cuctx::Error naming the
  // interval if its bytes are 0 or over 2^46, or if begin >= end.
  static CuMemoryPlan FromIntervals(const std::vector<Interval>& intervals);

  CuMemoryPlan(CuMemoryPlan&&) = default;
  CuMemoryPlan& operator=(CuMemoryPlan&&) = default;
  CuMemoryPlan(const CuMemoryPlan&) = delete;
  CuMemoryPlan& operator=(const CuMemoryPlan&) = delete;

  // The block size the plan needs: the largest offset + size (0 without buffers).
  size_t PeakBytes() const { return peak_bytes_; }
  // The most bytes (block sizes) alive at one step: no plan of these buffers needs less.
  size_t LowerBoundBytes() const { return lower_bound_bytes_; }
  // PeakBytes() / LowerBoundBytes(); 1 when both are 0.
  double Ratio() const;
  int64 NumBuffers() const { return static_cast<int64>(buffers_.size()); }
  // Wall-clock seconds spent planning (offset assignment and lower bound), not reading the trace.
  double PlanningSeconds() const { return planning_seconds_; }
  // Every buffer, in allocation order (trace record order; FromIntervals: input order), so a
  // replay of the iteration serves its i-th non-zero allocation with Buffers()[i].
  const std::vector<Buffer>& Buffers() const { return buffers_; }

  // Checks the plan independently of how it was made: every offset and size a multiple of
  // kAlignment, size >= the request, begin < end, offset + size <= PeakBytes(), and no two
  // buffers alive at the same step overlapping in [offset, offset + size). Returns true if all
  // hold; otherwise false, with *problem (if not null) describing the first violation found.
  // O(n log n).
  bool Verify(std::string* problem) const;

  // A human-readable summary, one "name: value" per line: buffers, peak, lower bound, ratio and
  // planning time. With `with_buffers`, then a table of every buffer: index, kind, request
  // (bytes, or num_rows x row_bytes for 'p'), size, offset, begin, end.
  std::string ToString(bool with_buffers = false) const;
  // One JSON object on one line, without a newline: num_buffers, peak_bytes, lower_bound_bytes,
  // ratio, planning_seconds and, with `with_buffers`, "buffers": an array of objects (index,
  // kind, id, bytes, row_bytes, num_rows, size, offset, begin, end).
  std::string ToJson(bool with_buffers = false) const;

 private:
  friend class test::CuMemoryPlanPeer;

  // Takes buffers with kind, request, size, begin and end set; assigns offsets, computes the
  // lower bound and times both.
  explicit CuMemoryPlan(std::vector<Buffer> buffers);
  void Plan();

  std::vector<Buffer> buffers_;
  size_t peak_bytes_ = 0;
  size_t lower_bound_bytes_ = 0;
  double planning_seconds_ = 0.0;
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_MEMORY_PLAN_H_
