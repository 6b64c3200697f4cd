// cudamatrix/internal/cu-allocator-history.h: the recent events of one CuMemoryAllocator, kept for
// its memory snapshots (AllocatorHistory), and the upstream wrapper that records the segment
// events (RecordingUpstream).
// SPDX-License-Identifier: Apache-2.0
//
// Private to the allocator (cu-allocator*.cc). With --cuda-allocator-history=N > 0 the allocator
// owns an AllocatorHistory: the last N events in PyTorch's snapshot vocabulary
// (cu-memory-snapshot.h), plus, for every block in use, the size asked for and the caller frames
// of its Malloc. Malloc/Free note themselves (cu-allocator.cc); everything the allocator asks of
// the device goes through a RecordingUpstream around its upstream, which notes segment_alloc /
// segment_free (Allocate/Release) and segment_map / segment_unmap (Map/Unmap). Reserve and
// Unreserve are address space, not memory, and are not events.
//
// Thread-safety: none of its own. Every call is made with the allocator's mutex held (upstream
// calls are, see NOTE ON LOCKING in cu-allocator.h), or with the allocator owned by one thread
// (construction, destruction). History turns the allocator's thread caches off, as tracing does,
// so every Malloc and Free takes that mutex.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_HISTORY_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_HISTORY_H_

#include "base/types.h"
#include "cudamatrix/cu-allocator-upstream.h"
#include "cudamatrix/cu-memory-snapshot.h"

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cuctx {
namespace internal {

class AllocatorHistory {
 public:
  // Keeps the last `max_events` (> 0) events; captures up to `frame_depth` caller frames per
  // Malloc (0: none).
  AllocatorHistory(size_t max_events, int frame_depth);

  // Appends one event; frames are those of `frames` (may be empty).
  void Record(const char* action, const void* addr, size_t size, uint64 stream, uint64 thread,
              SnapshotFrames frames = SnapshotFrames(), size_t device_free = 0);
  // A block of `size` bytes at `addr` was handed to `thread` for a request of `requested` bytes.
  void NoteAlloc(const void* addr, size_t requested, size_t size, uint64 thread);
  // Corrects the request of the live block at `addr` to the bytes the caller asked for (NoteAlloc
  // saw them rounded up).
  void SetRequested(const void* addr, size_t requested);
  // The block of `size` bytes at `addr` was freed by `thread`.
  void NoteFree(const void* addr, size_t size, uint64 thread);

  // The request, frames and mark (ScopedSnapshotMark at its Malloc, or null) of the live block
  // at `addr`, or nullptr if its Malloc was not seen.
  struct Live {
    size_t requested = 0;
    SnapshotFrames frames;
    std::shared_ptr<const SnapshotMark> mark;
  };
  const Live* FindLive(const void* addr) const;

  // The kept events, oldest first, with their frames symbolized; a marked block's events start
  // with its mark's frame, then `label` (if not empty: the allocator's own mark).
  void AppendEvents(std::vector<SnapshotEvent>* out, const std::string& label) const;
  size_t NumEvents() const { return events_.size(); }
  int FrameDepth() const { return frame_depth_; }

 private:
  struct Entry {
    const char* action;
    uintptr_t addr;
    size_t size;
    uint64 stream;
    uint64 thread;
    int64 time_us;
    size_t device_free;
    uint64 seq;
    SnapshotFrames frames;
    std::shared_ptr<const SnapshotMark> mark;
  };
  void Push(const char* action, const void* addr, size_t size, uint64 stream, uint64 thread,
            SnapshotFrames frames, size_t device_free, std::shared_ptr<const SnapshotMark> mark);
  size_t max_events_;
  int frame_depth_;
  std::deque<Entry> events_;
  std::unordered_map<const void*, Live> live_;
};

// A CuAllocatorUpstream that forwards every call to `inner` and notes the segment events in
// `history` (which must outlive it).
class RecordingUpstream : public CuAllocatorUpstream {
 public:
  RecordingUpstream(std::unique_ptr<CuAllocatorUpstream> inner, AllocatorHistory* history)
      : inner_(std::move(inner)), history_(history) {}

  void* Allocate(size_t bytes) override;
  void Release(void* ptr, size_t bytes) noexcept override;
  void SynchronizeAllStreams() override { inner_->SynchronizeAllStreams(); }
  void MemoryInfo(size_t* free_bytes, size_t* total_bytes) override {
    inner_->MemoryInfo(free_bytes, total_bytes);
  }
  uint64 CurrentThreadId() override { return inner_->CurrentThreadId(); }
  std::string Name() const override { return inner_->Name(); }
  void GrantPeerAccess(int peer) override { inner_->GrantPeerAccess(peer); }
  size_t MapGranularity() const override { return inner_->MapGranularity(); }
  void* Reserve(size_t bytes) override { return inner_->Reserve(bytes); }
  bool Map(void* addr, size_t bytes) override;
  void Unmap(const std::vector<std::pair<void*, size_t>>& ranges) noexcept override;
  void Unreserve(void* base, size_t bytes) noexcept override { inner_->Unreserve(base, bytes); }

  CuAllocatorUpstream& Inner() { return *inner_; }

 private:
  std::unique_ptr<CuAllocatorUpstream> inner_;
  AllocatorHistory* history_;
};

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOCATOR_HISTORY_H_
