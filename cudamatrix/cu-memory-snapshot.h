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
// memory the allocator got from the device). segment_pool_id is PyTorch's MempoolId_t: (0, 0) the
// device's main pool, (n, 0) a pool a graph made for itself, (0, n) a pool made to be shared by
// captures (PyTorch's graph_pool_handle()); cuctx numbers its graph pools from 1 in the order they
// are made and uses negative first ids for memory that is no caching pool of the device. Marked
// memory carries a first frame "cuctx:0:<what it is>", which the viewer prints on hover (segment
// map: the segment's frames; timeline: the block's or event's frames):
//   caching allocator region (cudaMalloc)  one segment, cuctx_kind 'region', segment_type 'large'
//   expandable (VMM) region                 one segment per mapped run of granules (unmapped
//                                           address space is no memory), is_expandable True,
//                                           cuctx_kind 'expandable'; growth and release are the
//                                           events 'segment_map' / 'segment_unmap'
//   pass-through allocation                 one segment holding one block, cuctx_kind 'direct'
//   graph pools (internal/cu-capture-pool.h: each is a caching allocator of its own, whose
//   regions are segments as above, its Malloc/Free and growth events in the device's trace):
//     a CuGraphPool (kSharedPool; also the   cuctx_kind 'graph_pool_shared', pool (0, n)
//     capturing thread's default pool)
//     a CuGraph's private pool (kPrivatePool) cuctx_kind 'graph_pool_private', pool (n, 0)
//     the pool of a capture begun outside    cuctx_kind 'graph_pool_foreign', pool (n, 0)
//     cuctx (cu-foreign-capture.h)
//   graph memory nodes (kNodes)             the driver's, not cuctx's: one summary segment per
//                                           device, cuctx_kind 'graph_nodes', pool (-2, 0), of
//                                           the driver's reserved graph memory with one active
//                                           block of the memory graphs use
//                                           (cudaDeviceGetGraphMemAttribute); its address is a
//                                           placeholder above every real one (2^52 + device *
//                                           2^44), and no event refers to it
//   a planned scope's block (CuPlannedScope) one 'active_allocated' block of the main pool (its
//                                           planned buffers are offsets inside it, not blocks);
//                                           with --cuda-allocator-history (which keeps the marks)
//                                           the block has cuctx_kind 'planned_scope' and its mark,
//                                           and so do its alloc/free events
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
// A device's whole picture (main pool, graph pools, graph nodes, pinned host) is
// DeviceMemorySnapshot() (cu-device-snapshot.h); the events of its several allocators are merged
// into one trace in the order they happened (a process-wide sequence number).
// requested_size is the size asked for when the allocator's history knows it, else the block size
// (a multiple of 256). time_us is microseconds on the system clock.
#ifndef CUCTX_CUDAMATRIX_CU_MEMORY_SNAPSHOT_H_
#define CUCTX_CUDAMATRIX_CU_MEMORY_SNAPSHOT_H_

#include "base/types.h"

#include <cstddef>
#include <iosfwd>
#include <memory>
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
  std::string kind;   // cuctx_kind of a marked block (e.g. planned_scope); empty: not written
  std::vector<SnapshotFrame> frames;
};

struct SnapshotSegment {
  int device = 0;
  uint64 address = 0;
  size_t total_size = 0;
  // allocated_size, active_size and requested_size are computed from the blocks by the writer.
  uint64 stream = 0;
  std::string segment_type = "large";
  // segment_pool_id is (pool_id, pool_id_shared); (0, 0) is the device's main pool.
  int64 pool_id = 0;
  int64 pool_id_shared = 0;
  bool is_expandable = false;
  std::string kind;  // cuctx_kind: region, expandable, direct, graph_pool_*, graph_nodes, ...
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
  uint64 seq = 0;  // process-wide order of recording (NextSnapshotSeq); not written
  std::vector<SnapshotFrame> frames;
};

// A whole snapshot: what the pickle holds.
struct MemorySnapshot {
  std::vector<SnapshotSegment> segments;
  std::vector<std::vector<SnapshotEvent>> device_traces;  // index = device
  std::string source;  // what wrote it, e.g. "CuMemoryAllocator" or "cu-allocator-snapshot"

  // The trace of `device`, made (empty) together with those of lower devices if missing.
  std::vector<SnapshotEvent>& Trace(int device);
  // Puts each device's events in the order they were recorded (by seq; events of several
  // allocators appended one allocator after the other become one history) and makes time_us
  // non-decreasing along it (two threads may read the clock in the other order, by a few us).
  void OrderTraces();
};

// The next value of the process-wide event sequence (AllocatorHistory numbers its events with it).
uint64 NextSnapshotSeq();

// The frame that marks memory: {"cuctx", 0, what} (printed by the viewer as "cuctx:0:<what>").
SnapshotFrame MarkFrame(const std::string& what);

// What a mark says: the cuctx_kind of the blocks and a description for their first frame.
struct SnapshotMark {
  std::string kind;
  std::string description;
};

// Marks the allocations the calling thread makes while it lives: an allocator with a history
// (--cuda-allocator-history) keeps the mark with each block it hands out then, and its
// snapshots show it (the block's cuctx_kind and a first frame MarkFrame(description), also on
// the block's alloc and free events). CuPlannedScope marks its block this way. Scopes nest (the
// innermost wins); one thread_local pointer, so cheap. Thread-safety: per thread.
class ScopedSnapshotMark {
 public:
  ScopedSnapshotMark(std::string kind, std::string description);
  ~ScopedSnapshotMark();
  ScopedSnapshotMark(const ScopedSnapshotMark&) = delete;
  ScopedSnapshotMark& operator=(const ScopedSnapshotMark&) = delete;

  // The calling thread's innermost mark, or null.
  static std::shared_ptr<const SnapshotMark> Current();

 private:
  std::shared_ptr<const SnapshotMark> previous_;
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
