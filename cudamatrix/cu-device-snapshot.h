// cudamatrix/cu-device-snapshot.h: the memory snapshot of a whole device: its caching allocator,
// its graph pools, the driver's graph memory and its pinned host pool, marked, in PyTorch's format.
// SPDX-License-Identifier: Apache-2.0
//
// CuMemoryAllocator::Snapshot() shows one allocator. A device's memory lies in several: the
// device's allocator (the main pool), one caching allocator per graph pool (CuGraphPool, private
// pools, the pools of captures begun outside cuctx), the driver's graph memory of kNodes graphs,
// and page-locked host blocks. DeviceMemorySnapshot() puts them in one snapshot, each segment
// marked (cuctx_kind, segment_pool_id, a first frame naming it: the mapping is in
// cu-memory-snapshot.h), and merges the histories of the allocators into the device's trace in
// the order the events happened, so that PyTorch's viewer replays graph-pool events against the
// graph-pool segments as it does the main pool's.
//
// Thread-safety: may be called from any thread at any time (each allocator is read under its own
// lock; the graph pools under the list of scoped-memory owners' lock, in the runtime's lock
// order). Costs a walk over every block of every pool.
#ifndef CUCTX_CUDAMATRIX_CU_DEVICE_SNAPSHOT_H_
#define CUCTX_CUDAMATRIX_CU_DEVICE_SNAPSHOT_H_

#include "cudamatrix/cu-memory-snapshot.h"

#include <cstddef>
#include <string>

namespace cuctx {

class CuMemoryAllocator;

struct DeviceSnapshotOptions {
  bool graph_pools = true;  // the device's graph pools (segments and events)
  bool graph_nodes = true;  // a summary segment of the driver's graph memory (kNodes graphs)
  bool pinned_host = true;  // the pinned host allocator of the device (PinnedHostAllocator)
};

// The calling thread's device (a GPU must be selected: cuctx::Error otherwise, naming what to use
// instead). A "snapshot" event is added to the main pool's history first.
MemorySnapshot DeviceMemorySnapshot(const DeviceSnapshotOptions& options = DeviceSnapshotOptions());
// The same written to `path` (whole or not at all); cuctx::Error naming the path on failure.
void WriteDeviceMemorySnapshot(const std::string& path,
                               const DeviceSnapshotOptions& options = DeviceSnapshotOptions());

// The part that needs no GPU: `allocator`'s snapshot (with a "snapshot" event) plus, if
// `graph_pools`, the graph pools of `device`, in one ordered trace. DeviceMemorySnapshot is this
// for the device's allocator, plus graph nodes and pinned host memory.
MemorySnapshot AllocatorAndPoolsSnapshot(CuMemoryAllocator* allocator, int device,
                                         bool graph_pools = true);

// Appends the summary segment of the driver's graph memory of `device` (see cu-memory-snapshot.h:
// cuctx_kind graph_nodes, pool (-2, 0), a placeholder address): `reserved` bytes holding one
// active block of `used` bytes (clamped to `reserved`). Nothing when `reserved` is 0.
void AppendGraphNodesSegment(int device, size_t used, size_t reserved, MemorySnapshot* out);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_DEVICE_SNAPSHOT_H_
