// cudamatrix/cu-allocator-snapshot.cc: CuMemoryAllocator's memory snapshots: its regions and
// blocks as PyTorch's segments and blocks, its history as the device trace, and the snapshot
// written when OutOfMemoryError is thrown. The format and the mapping of cuctx's concepts onto
// it are in cu-memory-snapshot.h.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-memory-snapshot.h"
#include "cudamatrix/internal/cu-allocator.h"

#include <unordered_set>

namespace cuctx {
namespace internal {

void AllocatorImpl::SetSnapshotLabel(int device, int64 pool_id, const std::string& kind,
                                     int64 pool_id_shared, const std::string& description) {
  Guard lock(this);
  snapshot_device_ = device;
  snapshot_pool_ = pool_id;
  snapshot_pool_shared_ = pool_id_shared;
  snapshot_kind_ = kind;
  snapshot_description_ = description;
}

void AllocatorImpl::Snapshot(MemorySnapshot* out, bool note_event) {
  Guard lock(this);
  if (history_ != nullptr && note_event)
    history_->Record("snapshot", nullptr, 0, 0, upstream_->CurrentThreadId());
  SnapshotLocked(out);
}

void AllocatorImpl::SnapshotLocked(MemorySnapshot* out) {
  AssertLocked();
  // Blocks parked in thread caches count as in use for the pools but are free for the program.
  std::unordered_set<const Block*> parked;
  for (auto& c : caches_) {
    OptionalLock cache_lock(&c->mutex, Locking());
    for (const Parked& p : c->small.blocks) parked.insert(p.block);
    for (const Parked& p : c->large.blocks) parked.insert(p.block);
  }
  auto block_of = [&](const void* addr, size_t size, bool in_use) {
    SnapshotBlock sb;
    sb.address = reinterpret_cast<uintptr_t>(addr);
    sb.size = size;
    sb.requested_size = size;
    sb.state = in_use ? "active_allocated" : "inactive";
    const AllocatorHistory::Live* live =
        in_use && history_ != nullptr ? history_->FindLive(addr) : nullptr;
    if (live != nullptr && live->mark != nullptr) {
      sb.kind = live->mark->kind;
      sb.frames.push_back(MarkFrame(live->mark->description));
    }
    if (!snapshot_description_.empty()) sb.frames.push_back(MarkFrame(snapshot_description_));
    if (live != nullptr) {
      sb.requested_size = live->requested;
      for (SnapshotFrame& f : live->frames.Symbolize()) sb.frames.push_back(std::move(f));
    }
    return sb;
  };
  auto new_segment = [&](const void* addr, const char* kind, bool expandable) {
    SnapshotSegment s;
    s.device = snapshot_device_;
    s.address = reinterpret_cast<uintptr_t>(addr);
    s.pool_id = snapshot_pool_;
    s.pool_id_shared = snapshot_pool_shared_;
    s.kind = snapshot_kind_.empty() ? kind : snapshot_kind_;
    s.is_expandable = expandable;
    if (!snapshot_description_.empty()) s.frames.push_back(MarkFrame(snapshot_description_));
    return s;
  };
  for (const auto& d : direct_) {
    SnapshotSegment s = new_segment(d.first, "direct", false);
    s.total_size = d.second;
    s.blocks.push_back(block_of(d.first, d.second, true));
    out->segments.push_back(std::move(s));
  }
  for (const auto& r : regions_) {
    if (!r->expandable) {
      SnapshotSegment s = new_segment(r->base, "region", false);
      s.total_size = r->size;
      for (const Block* b = r->first; b != nullptr; b = b->next)
        s.blocks.push_back(block_of(b->begin, b->size, b->pool == nullptr && parked.count(b) == 0));
      out->segments.push_back(std::move(s));
      continue;
    }
    // One segment per run of mapped blocks: unmapped address space holds no memory.
    SnapshotSegment s;
    bool open = false;
    for (const Block* b = r->first; b != nullptr; b = b->next) {
      if (!b->mapped) {
        if (open) out->segments.push_back(std::move(s));
        open = false;
        continue;
      }
      if (!open) {
        s = new_segment(b->begin, "expandable", true);
        open = true;
      }
      s.total_size += b->size;
      s.blocks.push_back(block_of(b->begin, b->size, b->pool == nullptr && parked.count(b) == 0));
    }
    if (open) out->segments.push_back(std::move(s));
  }
  std::vector<SnapshotEvent>& trace = out->Trace(snapshot_device_);
  if (history_ != nullptr) history_->AppendEvents(&trace, snapshot_description_);
}

void AllocatorImpl::NoteOutOfMemoryLocked(size_t bytes, size_t device_free) noexcept {
  AssertLocked();
  try {
    const uint64 thread = upstream_->CurrentThreadId();
    if (history_ != nullptr)
      history_->Record("oom", nullptr, bytes, thread, thread,
                       SnapshotFrames::Capture(2, history_->FrameDepth()), device_free);
    if (options_.snapshot_on_oom.empty()) return;
    MemorySnapshot snapshot;
    snapshot.source = "CuMemoryAllocator (out of memory)";
    SnapshotLocked(&snapshot);
    if (history_ == nullptr) {
      // Without a history the trace holds the oom alone, so the viewers still show it.
      SnapshotEvent e;
      e.action = "oom";
      e.size = bytes;
      e.stream = thread;
      e.thread = thread;
      e.time_us = SnapshotTimeUs();
      e.device_free = device_free;
      e.seq = NextSnapshotSeq();
      snapshot.Trace(snapshot_device_).push_back(std::move(e));
    }
    WriteMemorySnapshotFile(snapshot, options_.snapshot_on_oom);
  } catch (const std::exception& e) {
    // The OutOfMemoryError matters more than its snapshot.
    CUCTX_WARN << "--cuda-allocator-snapshot-on-oom: no snapshot written: " << e.what();
  }
}

}  // namespace internal

MemorySnapshot CuMemoryAllocator::Snapshot() {
  MemorySnapshot snapshot;
  snapshot.source = "CuMemoryAllocator";
  impl_->Snapshot(&snapshot, true);
  return snapshot;
}

void CuMemoryAllocator::AppendSnapshot(MemorySnapshot* out) {
  CUCTX_CHECK(out != nullptr) << "CuMemoryAllocator::AppendSnapshot needs a snapshot";
  impl_->Snapshot(out, false);
}

void CuMemoryAllocator::WriteSnapshot(const std::string& path) {
  WriteMemorySnapshotFile(Snapshot(), path);
}

void CuMemoryAllocator::SetSnapshotLabel(int device, int64 pool_id, const std::string& kind,
                                         int64 pool_id_shared, const std::string& description) {
  CUCTX_CHECK(device >= 0) << "SetSnapshotLabel: device " << device << " is not a device index";
  impl_->SetSnapshotLabel(device, pool_id, kind, pool_id_shared, description);
}

}  // namespace cuctx
