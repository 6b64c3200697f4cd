// cudamatrix/cu-allocator.cc: CuMemoryAllocator's public class, construction, the Malloc/Free entry
// points and the cross-thread syncs.
// SPDX-License-Identifier: Apache-2.0
//
// No CUDA in any cu-allocator*.cc but the upstreams: the device is reached only through
// CuAllocatorUpstream, so all of this is exercised by the CPU tests with
// test::HostAllocatorUpstream. internal/cu-allocator.h lists the files and their jobs.
#include "cudamatrix/cu-allocator.h"

#include "cudamatrix/internal/cu-allocator.h"

namespace cuctx {
namespace internal {
namespace {

uint64 NextAllocatorId() {
  static std::atomic<uint64> next{1};
  return next.fetch_add(1);
}

}  // namespace

AllocatorImpl::AllocatorImpl(const CuAllocatorOptions& options,
                             std::unique_ptr<CuAllocatorUpstream> upstream)
    : options_(options),
      upstream_(std::move(upstream)),
      quantum_(options.RegionQuantumBytes()),
      id_(NextAllocatorId()) {
  options_.Check();
  CUCTX_CHECK(upstream_ != nullptr) << "CuMemoryAllocator needs an upstream";
  if (options_.history_events > 0) {
    history_ = std::make_unique<AllocatorHistory>(static_cast<size_t>(options_.history_events),
                                                  options_.history_frames);
    upstream_ = std::make_unique<RecordingUpstream>(std::move(upstream_), history_.get());
  }
  stats_.caching = options_.cache_memory;
  shared_.tree.Reset(tree_leaves_);
  unmapped_.tree.Reset(tree_leaves_);
  // Pass-through mode sends every request to Allocate(): no regions, expandable or not.
  if (options_.cache_memory) granule_ = upstream_->MapGranularity();
  CUCTX_CHECK(granule_ % kAlign == 0) << "upstream " << upstream_->Name() << ": map granularity "
                                      << granule_ << " is not a multiple of " << kAlign << " bytes";
  stats_.map_granularity = granule_;
  if (!options_.trace_file.empty()) {
    trace_ = std::fopen(options_.trace_file.c_str(), "w");
    if (trace_ == nullptr)
      CUCTX_ERR << "--cuda-allocator-trace: cannot create '" << options_.trace_file << "'";
    std::fputs("# cuctx-allocator-trace 1\n", trace_);
  }
  cache_capacity_ = static_cast<size_t>(options_.thread_cache_mb) << 20;
  small_limit_ = std::min(kMaxCachedBlock, cache_capacity_);
  large_slots_ = static_cast<size_t>(options_.thread_cache_large_blocks);
  cache_max_request_ = large_slots_ > 0 ? kMaxRequestBytes : small_limit_;
  defer_frees_ =
      options_.cache_memory && options_.thread_affinity && trace_ == nullptr && history_ == nullptr;
  fast_path_ = defer_frees_ && cache_capacity_ > 0;
#ifndef NDEBUG
  owned_alone_ = false;  // from now on the Locked methods need the mutex (AssertLocked())
#endif
}

AllocatorImpl::~AllocatorImpl() {
#ifndef NDEBUG
  owned_alone_ = true;
#endif
  if (deferred_ != nullptr) ApplyDeferredFreeLocked();
  const size_t live = NumUsed() + direct_.size();
  if (live > 0)
    CUCTX_WARN << "CuMemoryAllocator destroyed with " << live << " block(s) ("
               << Mib(stats_.in_use_bytes) << ") still in use; releasing them anyway";
  for (auto& r : regions_) {
    if (r->expandable)
      ReleaseExpandableLocked(r.get());
    else
      upstream_->Release(r->base, r->size);
  }
  for (auto& d : direct_) upstream_->Release(d.first, d.second);
  if (trace_ != nullptr) std::fclose(trace_);
}

void* AllocatorImpl::Malloc(size_t bytes) {
  if (FastPath() && bytes != 0 && bytes <= cache_max_request_) {
    if (void* ptr = CacheMalloc(RoundUp(bytes, kAlign), upstream_->CurrentThreadId())) return ptr;
  }
  if (DeferFrees() && deferred_ != nullptr && bytes != 0 && bytes <= kMaxRequestBytes) {
    if (void* ptr = TakeDeferred(RoundUp(bytes, kAlign))) return ptr;
  }
  Guard lock(this);
  if (bytes > kMaxRequestBytes) ThrowOutOfMemoryLocked(bytes, "the request is impossibly large");
  void* ptr = bytes == 0 ? nullptr : AllocateLocked(RoundUp(bytes, kAlign));
  if (history_ != nullptr && ptr != nullptr) history_->SetRequested(ptr, bytes);
  if (trace_ != nullptr) TraceAllocLocked(ptr, upstream_->CurrentThreadId(), 'm', bytes, 0);
  return ptr;
}

void* AllocatorImpl::MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
  CUCTX_CHECK(pitch != nullptr);
  size_t p = RoundUp(std::min(row_bytes, kMaxRequestBytes + 1), kAlign);
  // Alternating extras also catch code that assumes two same-shaped matrices share a pitch.
  if (debug_stride_.load(std::memory_order_relaxed))
    p += kAlign * (1 + (pitch_calls_.fetch_add(1, std::memory_order_relaxed) & 1));
  *pitch = p;
  const bool too_large =
      row_bytes > kMaxRequestBytes || (p != 0 && num_rows > kMaxRequestBytes / p);
  const bool empty = row_bytes == 0 || num_rows == 0;
  if (FastPath() && !empty && !too_large && p * num_rows <= cache_max_request_) {
    // Pitched blocks are no different once allocated; the thread cache serves them too.
    if (void* ptr = CacheMalloc(p * num_rows, upstream_->CurrentThreadId())) return ptr;
  }
  if (DeferFrees() && deferred_ != nullptr && !empty && !too_large) {
    if (void* ptr = TakeDeferred(p * num_rows)) return ptr;
  }
  Guard lock(this);
  if (too_large)
    ThrowOutOfMemoryLocked(std::numeric_limits<size_t>::max(), "pitch * num_rows overflows");
  void* ptr = empty ? nullptr : AllocateLocked(p * num_rows);
  if (history_ != nullptr && ptr != nullptr) history_->SetRequested(ptr, row_bytes * num_rows);
  if (trace_ != nullptr)
    TraceAllocLocked(ptr, upstream_->CurrentThreadId(), 'p', row_bytes, num_rows);
  return ptr;
}

bool AllocatorImpl::Free(void* ptr, bool must_own) {
  if (ptr == nullptr) return true;
  const uint64 thread = upstream_->CurrentThreadId();
  if (!options_.cache_memory) {
    Guard lock(this);
    return FreeDirectLocked(ptr, thread, must_own);
  }
  Block* b = RemoveUsed(ptr);
  if (b != nullptr && DeferFrees()) {
    if (deferred_ != nullptr) {
      Guard apply_previous(this);  // the Free before this one reaches the pools now
    }
    deferred_ = b;
    deferred_thread_ = thread;
    ++stats_.num_frees;
    return true;
  }
  if (b != nullptr && FastPath()) {
    std::vector<std::pair<Block*, bool>> evicted;
    if (CacheFree(b, thread, &evicted)) {
      if (!evicted.empty()) {
        Guard lock(this);
        for (const auto& e : evicted) FreeBlockLocked(e.first, thread, e.second);
      }
      return true;
    }
  }
  Guard lock(this);
  if (b == nullptr) {
    if (!must_own) return false;
    ThrowBadFreeLocked(ptr);
  }
  if (history_ != nullptr) history_->NoteFree(b->begin, b->size, thread);
  FreeBlockLocked(b, thread);
  ++stats_.num_frees;
  if (trace_ != nullptr) TraceFreeLocked(ptr, thread);
  return true;
}

void* AllocatorImpl::AllocateLocked(size_t size) {
  AssertLocked();
  if (!options_.cache_memory) return AllocateDirectLocked(size);
  const uint64 thread = upstream_->CurrentThreadId();
  Block* b = FindFreeLocked(size, thread);
  if (b == nullptr) b = GrowLocked(size);
  TakeLocked(b, size);
  if (history_ != nullptr) history_->NoteAlloc(b->begin, size, b->size, thread);
  return b->begin;
}

void* AllocatorImpl::AllocateDirectLocked(size_t size) {
  AssertLocked();
  void* ptr = UpstreamAllocateLocked(size);
  if (ptr == nullptr) ThrowOutOfMemoryLocked(size, "the upstream failed (pass-through mode)");
  direct_.emplace(ptr, size);
  if (history_ != nullptr) history_->NoteAlloc(ptr, size, size, upstream_->CurrentThreadId());
  ++stats_.num_regions;
  stats_.held_bytes += size;
  stats_.peak_held_bytes = std::max(stats_.peak_held_bytes, stats_.held_bytes);
  NoteInUseLocked(size);
  return ptr;
}

void AllocatorImpl::NoteInUseLocked(size_t bytes) {
  AssertLocked();
  ++stats_.num_mallocs;
  stats_.in_use_bytes += bytes;
  stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
}

bool AllocatorImpl::FreeDirectLocked(void* ptr, uint64 thread, bool must_own) {
  AssertLocked();
  auto it = direct_.find(ptr);
  if (it == direct_.end()) {
    if (!must_own) return false;
    ThrowBadFreeLocked(ptr);
  }
  const size_t size = it->second;
  direct_.erase(it);
  if (history_ != nullptr) history_->NoteFree(ptr, size, thread);
  upstream_->Release(ptr, size);
  ++stats_.num_upstream_releases;
  --stats_.num_regions;
  stats_.held_bytes -= size;
  stats_.in_use_bytes -= size;
  ++stats_.num_frees;
  if (trace_ != nullptr) TraceFreeLocked(ptr, thread);
  return true;
}

// Returns a block that is in no pool and not in the used map to the free pools: to the shared
// pool if it is `safe` for every thread, else as freed by `thread` now.
void AllocatorImpl::FreeBlockLocked(Block* b, uint64 thread, bool safe) {
  AssertLocked();
  --b->region->num_used;
  stats_.in_use_bytes -= b->size;
  Pool* pool = safe ? &shared_ : ThreadPoolLocked(thread);
  const uint64 stamp = ++free_counter_;
  b = CoalesceLocked(b, pool);
  b->thread = thread;
  b->stamp = stamp;
  pool->Insert(b);
}

// Puts the block of the last Free into the pools, as that Free would have done at once (see NOTE
// ON THE DEFERRED FREE in cu-allocator.h). Every Guard calls it first.
void AllocatorImpl::ApplyDeferredFreeLocked() {
  AssertLocked();
  Block* b = deferred_;
  deferred_ = nullptr;
  FreeBlockLocked(b, deferred_thread_);
}

void AllocatorImpl::AllowMultithreading() {
  multi_threaded_.store(true, std::memory_order_release);
  Guard apply_deferred(this);  // with the mutex: no other thread reaches the pools before it
}

void AllocatorImpl::SynchronizeGpu() {
  Guard lock(this);
  const uint64 upto = free_counter_;
  BumpCacheEpochsLocked();
  upstream_->SynchronizeAllStreams();
  ++stats_.num_external_syncs;
  NoteSynchronizedLocked(upto);
  if (trace_ != nullptr) TraceEventLocked('s', upstream_->CurrentThreadId());
}

void AllocatorImpl::NoteThreadStreamSynchronized() {
  Guard lock(this);
  const uint64 thread = upstream_->CurrentThreadId();
  ++stats_.num_stream_sync_notes;
  // Every block in this thread's pool was freed by this thread before now, so the work that used
  // it was queued before the stream sync that the caller has just waited for.
  if (Pool* p = FindThreadPoolLocked(thread)) p->safe_upto = free_counter_;
  if (ThreadCache* c = FindCacheLocked(thread)) {
    OptionalLock cache_lock(&c->mutex, Locking());
    ++c->epoch;
  }
  if (trace_ != nullptr) TraceEventLocked('d', thread);
}

}  // namespace internal

// ---- CuMemoryAllocator -----------------------------------------------------------------------

CuMemoryAllocator::CuMemoryAllocator(const CuAllocatorOptions& options,
                                     std::unique_ptr<CuAllocatorUpstream> upstream)
    : impl_(std::make_unique<internal::AllocatorImpl>(options, std::move(upstream))) {}

CuMemoryAllocator::~CuMemoryAllocator() = default;

void* CuMemoryAllocator::Malloc(size_t bytes) { return impl_->Malloc(bytes); }

void* CuMemoryAllocator::MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
  return impl_->MallocPitch(row_bytes, num_rows, pitch);
}

void CuMemoryAllocator::Free(void* ptr) { impl_->Free(ptr, true); }

bool CuMemoryAllocator::TryFree(void* ptr) { return impl_->Free(ptr, false); }

void CuMemoryAllocator::AllowMultithreading() { impl_->AllowMultithreading(); }

bool CuMemoryAllocator::MultithreadingAllowed() const { return impl_->MultithreadingAllowed(); }

bool CuMemoryAllocator::SetDebugStrideMode(bool mode) { return impl_->SetDebugStrideMode(mode); }

void CuMemoryAllocator::SynchronizeGpu() { impl_->SynchronizeGpu(); }

void CuMemoryAllocator::NoteThreadStreamSynchronized() { impl_->NoteThreadStreamSynchronized(); }

size_t CuMemoryAllocator::ReleaseCachedMemory() { return impl_->ReleaseCachedMemory(); }

size_t CuMemoryAllocator::GetAllocatedMemory() const { return impl_->GetStats().in_use_bytes; }

size_t CuMemoryAllocator::GetMaxAllocatedMemory() const {
  return impl_->GetStats().peak_in_use_bytes;
}

CuAllocatorStats CuMemoryAllocator::GetStats() const { return impl_->GetStats(); }

void CuMemoryAllocator::PrintMemoryUsage() const { CUCTX_LOG << GetStats().ToString(); }

const CuAllocatorOptions& CuMemoryAllocator::Options() const { return impl_->Options(); }

CuAllocatorUpstream& CuMemoryAllocator::Upstream() { return impl_->Upstream(); }

// ---- CuAllocatorUpstream: defaults for upstreams without expandable regions -----------------

void* CuAllocatorUpstream::Reserve(size_t) {
  CUCTX_ERR << "upstream " << Name() << " has no expandable regions (MapGranularity() is 0)";
}

bool CuAllocatorUpstream::Map(void*, size_t) {
  CUCTX_ERR << "upstream " << Name() << " has no expandable regions (MapGranularity() is 0)";
}

void CuAllocatorUpstream::Unmap(const std::vector<std::pair<void*, size_t>>&) noexcept {
  CUCTX_WARN << "upstream " << Name() << ": Unmap() without expandable regions ignored";
}

void CuAllocatorUpstream::Unreserve(void*, size_t) noexcept {
  CUCTX_WARN << "upstream " << Name() << ": Unreserve() without expandable regions ignored";
}

}  // namespace cuctx
