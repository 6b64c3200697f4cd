// cudamatrix/cu-memory-snapshot.h: memory snapshots in PyTorch's format (MemorySnapshot) and the
// cheap caller frames they may carry (SnapshotFrames).
// SPDX-License-Identifier: Apache-2.0
//
// A snapshot is one pickled dict, the one torch.cuda.memory._snapshot() returns, so that PyTorch's
// viewers draw cuctx's allocator: `python -m torch.cuda._memory_viz trace_plot|segment_plot FILE
// -o out.html` (tools/memory-viz.sh), the hosted MemoryViz page, and the forks and tools that read
// the same file. Written from C++, no Python involved (base/pickle-writer.h):
//   {'segments': [segment, ...], 'device_traces': [[event, ...] per device],
//    'cuctx': {'version': 1, 'source': ...}}
//   segment = {'device', 'address', 'total_size', 'allocated_size', 'active_size',
//              'requested_size', 'stream', 'segment_type', 'segment_pool_id' (a 2-tuple),
//              'is_expandable', 'frames', 'blocks', and cuctx's own 'cuctx_kind'}
//   block   = {'address', 'size', 'requested_size', 'state', 'frames'}; the blocks of a segment
//             tile it in address order (their sizes add up to total_size)
//   event   = {'action', 'addr', 'size', 'stream', 'time_us', 'frames', and for 'oom'
//             'device_free'; cuctx adds 'thread'}
//   frame   = {'filename', 'line', 'name'}
// PyTorch's viewers replay the events backwards from the segments and blocks, so a snapshot's
// events must end in the state its segments show; CuMemoryAllocator's writer keeps them so.
//
// How cuctx's concepts map onto the fields (what the viewer calls segments are the pieces of
// memory the allocator got from the device):
//   caching allocator region (cudaMalloc)  one segment, cuctx_kind 'region', segment_type 'large'
//   expandable (VMM) region                 one segment per mapped run of granules (unmapped
//                                           address space is no memory), is_expandable True,
//                                           cuctx_kind 'expandable'; growth and release are the
//                                           events 'segment_map' / 'segment_unmap'
//   pass-through allocation                 one segment holding one block, cuctx_kind 'direct'
//   a CuGraph's private pool                its allocator's segments, once labelled with
//                                           CuMemoryAllocator::SetSnapshotLabel(device, pool,
//                                           "graph_pool"): segment_pool_id (pool, 0)
//   a planned scope's block                 one 'active_allocated' block of the allocator (with
//                                           --cuda-allocator-history-frames, its frames are
//                                           those of the scope's Malloc)
//   pinned host pool                        PinnedHostAllocator::AppendSnapshot: one segment per
//                                           page-locked block, cuctx_kind 'pinned_host',
//                                           segment_type 'pinned', pool (-1, 0), on a device
//                                           index of the caller's choice (the viewer draws one
//                                           device at a time)
//   block in use                            state 'active_allocated'
//   block parked in a thread cache          state 'inactive' (free for the program; only its
//                                           thread takes it back)
//   free block                              state 'inactive'
//   thread                                  'stream' of alloc/free events: the allocator's thread
//                                           key (every thread works on its own per-thread stream);
//                                           segments and segment events have stream 0, since a
//                                           region belongs to no stream
//   Malloc / Free                           'alloc' / 'free_requested' then 'free_completed'
//                                           (cuctx's Free is complete at once: the cross-thread
//                                           rule, not a deferred free, orders reuse)
//   upstream Allocate / Release             'segment_alloc' / 'segment_free'
//   OutOfMemoryError                        'oom' with 'device_free' (the upstream's free bytes)
//   SnapshotNow                             'snapshot'
// requested_size is the size asked for when the allocator's history knows it, else the block size
// (a multiple of 256). time_us is microseconds on the system clock.
#ifndef CUCTX_CUDAMATRIX_CU_MEMORY_SNAPSHOT_H_
#define CUCTX_CUDAMATRIX_CU_MEMORY_SNAPSHOT_H_

#include "base/types.h"

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace cuctx {

// One caller frame as the viewers print it ("filename:line:name").
struct SnapshotFrame {
  std::string filename;
  int64 line = 0;
  std::string name;
};

// Return addresses of a call stack, captured cheaply (SnapshotFrames::Capture: one backtrace(),
// about a microsecond) and turned into names only when a snapshot is written (Symbolize: dladdr,
// so names are found for shared libraries and for programs linked with -rdynamic; otherwise the
// name is the address, for addr2line).
struct SnapshotFrames {
  std::vector<void*> pcs;

  // The calling thread's stack, at most `depth` frames, without the innermost `skip`.
  static SnapshotFrames Capture(int skip, int depth);
  std::vector<SnapshotFrame> Symbolize() const;
};

struct SnapshotBlock {
  uint64 address = 0;
  size_t size = 0;
  size_t requested_size = 0;
  std::string state;  // "active_allocated", "active_pending_free" or "inactive"
  std::vector<SnapshotFrame> frames;
};

struct SnapshotSegment {
  int device = 0;
  uint64 address = 0;
  size_t total_size = 0;
  // allocated_size, active_size and requested_size are computed from the blocks by the writer.
  uint64 stream = 0;
  std::string segment_type = "large";
  int64 pool_id = 0;  // segment_pool_id is (pool_id, 0); 0 is the device's main pool
  bool is_expandable = false;
  std::string kind;  // cuctx_kind: region, expandable, direct, graph_pool, pinned_host
  std::vector<SnapshotFrame> frames;
  std::vector<SnapshotBlock> blocks;
};

struct SnapshotEvent {
  std::string action;  // alloc, free_requested, free_completed, segment_alloc, segment_free,
                       // segment_map, segment_unmap, snapshot, oom
  uint64 addr = 0;
  size_t size = 0;
  uint64 stream = 0;
  int64 time_us = 0;
  size_t device_free = 0;  // oom only
  uint64 thread = 0;
  std::vector<SnapshotFrame> frames;
};

// A whole snapshot: what the pickle holds.
struct MemorySnapshot {
  std::vector<SnapshotSegment> segments;
  std::vector<std::vector<SnapshotEvent>> device_traces;  // index = device
  std::string source;  // what wrote it, e.g. "CuMemoryAllocator" or "cu-allocator-snapshot"

  // The trace of `device`, made (empty) together with those of lower devices if missing.
  std::vector<SnapshotEvent>& Trace(int device);
};

// Microseconds on the system clock, as the events' time_us.
int64 SnapshotTimeUs();

// Writes `snapshot` as a pickle (format in the file comment). Throws cuctx::Error when a segment's
// blocks do not tile it (their sizes must add up to total_size), naming the segment.
void WriteMemorySnapshot(const MemorySnapshot& snapshot, std::ostream& os);
// The same into the file `path` (written whole or not at all: a temporary file is renamed);
// cuctx::Error naming the path if it cannot be written.
void WriteMemorySnapshotFile(const MemorySnapshot& snapshot, const std::string& path);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_MEMORY_SNAPSHOT_H_
