// cudamatrix/cu-device-snapshot.cc: DeviceMemorySnapshot and its parts (cu-device-snapshot.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-device-snapshot.h"

#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-pinned.h"
#include "cudamatrix/internal/cu-alloc-scope.h"

#include <algorithm>
#include <sstream>

namespace cuctx {

namespace {

// Above every user-space address (x86-64 and the GPU's unified address space stop at 2^47) and
// exact in a JavaScript number (below 2^53), so the viewer draws it where nothing else is.
constexpr uint64 kGraphNodesBase = uint64{1} << 52;
constexpr int kGraphNodesDeviceShift = 44;

}  // namespace

MemorySnapshot AllocatorAndPoolsSnapshot(CuMemoryAllocator* allocator, int device,
                                         bool graph_pools) {
  CUCTX_CHECK(allocator != nullptr) << "AllocatorAndPoolsSnapshot needs an allocator";
  CUCTX_CHECK(device >= 0) << "AllocatorAndPoolsSnapshot: device " << device
                           << " is not a device index";
  MemorySnapshot s = allocator->Snapshot();
  s.source = "DeviceMemorySnapshot";
  s.Trace(device);
  if (graph_pools) internal::AppendScopedMemorySnapshots(device, &s);
  s.OrderTraces();
  return s;
}

void AppendGraphNodesSegment(int device, size_t used, size_t reserved, MemorySnapshot* out) {
  CUCTX_CHECK(out != nullptr) << "AppendGraphNodesSegment needs a snapshot";
  CUCTX_CHECK(device >= 0 && device < 256)
      << "AppendGraphNodesSegment: device " << device << " is not a device index";
  if (reserved == 0) return;
  used = std::min(used, reserved);
  SnapshotSegment seg;
  seg.device = device;
  seg.address = kGraphNodesBase + (static_cast<uint64>(device) << kGraphNodesDeviceShift);
  seg.total_size = reserved;
  seg.pool_id = -2;
  seg.kind = "graph_nodes";
  std::ostringstream what;
  what << "graph memory nodes of device " << device << " (the driver's, for kNodes graphs: " << used
       << " bytes used of " << reserved
       << " reserved; the address is a placeholder, the memory has no fixed place)";
  seg.frames.push_back(MarkFrame(what.str()));
  auto block = [&](size_t size, bool in_use) {
    SnapshotBlock b;
    b.address = seg.address + (in_use ? 0 : used);
    b.size = size;
    b.requested_size = size;
    b.state = in_use ? "active_allocated" : "inactive";
    b.kind = in_use ? "graph_nodes" : "";
    b.frames = seg.frames;
    seg.blocks.push_back(std::move(b));
  };
  if (used > 0) block(used, true);
  if (reserved > used) block(reserved - used, false);
  out->segments.push_back(std::move(seg));
  out->Trace(device);
}

MemorySnapshot DeviceMemorySnapshot(const DeviceSnapshotOptions& options) {
  CuDevice& device = CuDevice::Instantiate();
  CUCTX_CHECK(device.Enabled() && device.Allocator() != nullptr)
      << "DeviceMemorySnapshot: no GPU is selected on this thread (without a GPU, snapshot a "
         "CuMemoryAllocator with its Snapshot() or AllocatorAndPoolsSnapshot())";
  const int id = device.DeviceId();
  MemorySnapshot s = AllocatorAndPoolsSnapshot(device.Allocator(), id, options.graph_pools);
  if (options.graph_nodes) {
    const CuGraph::DriverMemory m = CuGraph::DeviceGraphMemory();
    AppendGraphNodesSegment(id, m.used, m.reserved, &s);
  }
  if (options.pinned_host) PinnedHostAllocator::ForDevice(id).AppendSnapshot(id, &s);
  return s;
}

void WriteDeviceMemorySnapshot(const std::string& path, const DeviceSnapshotOptions& options) {
  WriteMemorySnapshotFile(DeviceMemorySnapshot(options), path);
}

}  // namespace cuctx
