// cudamatrix/cu-allocator-history.cc: AllocatorHistory and RecordingUpstream (see
// internal/cu-allocator-history.h).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-allocator-history.h"

#include "base/error.h"

namespace cuctx {
namespace internal {

AllocatorHistory::AllocatorHistory(size_t max_events, int frame_depth)
    : max_events_(max_events), frame_depth_(frame_depth) {
  CUCTX_CHECK(max_events_ > 0) << "AllocatorHistory needs room for at least one event";
}

void AllocatorHistory::Push(const char* action, const void* addr, size_t size, uint64 stream,
                            uint64 thread, SnapshotFrames frames, size_t device_free,
                            std::shared_ptr<const SnapshotMark> mark) {
  if (events_.size() == max_events_) events_.pop_front();
  events_.push_back(Entry{action, reinterpret_cast<uintptr_t>(addr), size, stream, thread,
                          SnapshotTimeUs(), device_free, NextSnapshotSeq(), std::move(frames),
                          std::move(mark)});
}

void AllocatorHistory::Record(const char* action, const void* addr, size_t size, uint64 stream,
                              uint64 thread, SnapshotFrames frames, size_t device_free) {
  Push(action, addr, size, stream, thread, std::move(frames), device_free, nullptr);
}

void AllocatorHistory::NoteAlloc(const void* addr, size_t requested, size_t size, uint64 thread) {
  // Skip this function, the allocator's Locked method and its entry point.
  SnapshotFrames frames = SnapshotFrames::Capture(3, frame_depth_);
  Live& live = live_[addr];
  live.requested = requested;
  live.frames = frames;
  live.mark = ScopedSnapshotMark::Current();
  Push("alloc", addr, size, thread, thread, std::move(frames), 0, live.mark);
}

void AllocatorHistory::NoteFree(const void* addr, size_t size, uint64 thread) {
  SnapshotFrames frames;
  std::shared_ptr<const SnapshotMark> mark;
  auto it = live_.find(addr);
  if (it != live_.end()) {
    frames = std::move(it->second.frames);
    mark = std::move(it->second.mark);
    live_.erase(it);
  }
  // A cuctx Free completes at once; the viewers join the pair into one "free".
  Push("free_requested", addr, size, thread, thread, frames, 0, mark);
  Push("free_completed", addr, size, thread, thread, std::move(frames), 0, std::move(mark));
}

void AllocatorHistory::SetRequested(const void* addr, size_t requested) {
  auto it = live_.find(addr);
  if (it != live_.end()) it->second.requested = requested;
}

const AllocatorHistory::Live* AllocatorHistory::FindLive(const void* addr) const {
  auto it = live_.find(addr);
  return it == live_.end() ? nullptr : &it->second;
}

void AllocatorHistory::AppendEvents(std::vector<SnapshotEvent>* out,
                                    const std::string& label) const {
  for (const Entry& e : events_) {
    SnapshotEvent s;
    s.action = e.action;
    s.addr = e.addr;
    s.size = e.size;
    s.stream = e.stream;
    s.thread = e.thread;
    s.time_us = e.time_us;
    s.device_free = e.device_free;
    s.seq = e.seq;
    if (e.mark != nullptr) s.frames.push_back(MarkFrame(e.mark->description));
    if (!label.empty()) s.frames.push_back(MarkFrame(label));
    for (SnapshotFrame& f : e.frames.Symbolize()) s.frames.push_back(std::move(f));
    out->push_back(std::move(s));
  }
}

void* RecordingUpstream::Allocate(size_t bytes) {
  void* ptr = inner_->Allocate(bytes);
  if (ptr != nullptr) history_->Record("segment_alloc", ptr, bytes, 0, inner_->CurrentThreadId());
  return ptr;
}

void RecordingUpstream::Release(void* ptr, size_t bytes) noexcept {
  try {
    history_->Record("segment_free", ptr, bytes, 0, inner_->CurrentThreadId());
  } catch (...) {
    // Out of host memory for the history: the release itself must still happen.
  }
  inner_->Release(ptr, bytes);
}

bool RecordingUpstream::Map(void* addr, size_t bytes) {
  const bool mapped = inner_->Map(addr, bytes);
  if (mapped) history_->Record("segment_map", addr, bytes, 0, inner_->CurrentThreadId());
  return mapped;
}

void RecordingUpstream::Unmap(const std::vector<std::pair<void*, size_t>>& ranges) noexcept {
  try {
    for (const auto& r : ranges)
      history_->Record("segment_unmap", r.first, r.second, 0, inner_->CurrentThreadId());
  } catch (...) {
    // As in Release.
  }
  inner_->Unmap(ranges);
}

}  // namespace internal
}  // namespace cuctx
