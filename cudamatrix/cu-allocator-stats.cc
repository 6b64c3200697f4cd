// cudamatrix/cu-allocator-stats.cc: statistics, error messages and the trace writer of CuMemoryAllocator.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-allocator.h"

#include <cinttypes>
#include <exception>

namespace cuctx {
namespace internal {

CuAllocatorStats AllocatorImpl::GetStats() {
  Guard lock(this);
  CuAllocatorStats s = stats_;
  if (options_.cache_memory) {
    s.num_regions = static_cast<int64>(regions_.size());
    s.num_used_blocks = static_cast<int64>(NumUsed());
    for (auto& c : caches_) {
      OptionalLock cache_lock(&c->mutex, Locking());
      const size_t parked_bytes = c->small.bytes + c->large.bytes;
      s.in_use_bytes -= parked_bytes;
      s.cached_bytes += parked_bytes;
      s.cached_large_bytes += c->large.bytes;
      s.num_cached_blocks += static_cast<int64>(c->small.blocks.size() + c->large.blocks.size());
      s.num_cached_large_blocks += static_cast<int64>(c->large.blocks.size());
      s.num_cache_hits += c->hits;
      s.num_mallocs += c->hits;
      s.num_frees += c->parked;
    }
    s.num_free_blocks = num_blocks_ - s.num_used_blocks - s.num_cached_blocks -
                        static_cast<int64>(unmapped_.blocks.size());
    s.largest_free_block = LargestFreeBlockLocked();
  } else {
    s.num_used_blocks = static_cast<int64>(direct_.size());
  }
  return s;
}

void AllocatorImpl::ThrowOutOfMemoryLocked(size_t bytes, const char* why) {
  AssertLocked();
  ++stats_.num_oom_errors;
  size_t free_bytes = 0, total_bytes = 0;
  bool have_info = true;
  try {
    upstream_->MemoryInfo(&free_bytes, &total_bytes);
  } catch (const std::exception&) {
    have_info = false;
  }
  NoteOutOfMemoryLocked(bytes, have_info ? free_bytes : 0);
  std::ostringstream msg;
  msg << "out of device memory: cannot allocate ";
  if (bytes == std::numeric_limits<size_t>::max())
    msg << "a pitched block";
  else
    msg << Mib(bytes) << " (" << bytes << " bytes)";
  msg << " (" << why << "). Allocator: held " << Mib(stats_.held_bytes);
  if (granule_ != 0) msg << " (mapped, of " << Mib(stats_.reserved_bytes) << " reserved)";
  msg << " in " << (options_.cache_memory ? regions_.size() : direct_.size())
      << " region(s), in use " << Mib(stats_.in_use_bytes) << " (peak "
      << Mib(stats_.peak_in_use_bytes) << "), largest free block " << Mib(LargestFreeBlockLocked())
      << "; " << upstream_->Name() << ": ";
  if (have_info)
    msg << Mib(free_bytes) << " free of " << Mib(total_bytes) << " total.";
  else
    msg << "free/total unknown.";
  msg << " Hint: other processes or libraries may hold the rest; lower --cuda-memory-proportion "
         "(or set it to 0 to grow on demand), or reduce the batch/minibatch size.";
  throw OutOfMemoryError(internal::WithOrigin(msg.str(), __func__, __FILE__, __LINE__),
                         kOutOfMemoryStatus);
}

void AllocatorImpl::ThrowBadFreeLocked(void* ptr) {
  AssertLocked();
  const char* what = "was not allocated by this allocator";
  const char* p = static_cast<const char*>(ptr);
  bool parked = false;
  for (auto& c : caches_) {
    OptionalLock lock(&c->mutex, Locking());
    parked |= c->small.Holds(p) || c->large.Holds(p);
  }
  for (const auto& r : regions_) {
    if (p < r->base || p >= r->base + r->size) continue;
    what = "lies inside a region of this allocator but is not the start of a block in use";
    for (const Block* b = r->first; b != nullptr; b = b->next) {
      if (p < b->begin || p >= b->begin + b->size) continue;
      if (!b->mapped)
        what =
            "lies in address space of this allocator that has no memory mapped (freed and "
            "given back to the device, or never allocated)";
      else if (b->pool != nullptr || parked)
        what = "is in a free block: it was already freed (double free) or never allocated";
      else
        what = "points inside a block in use, not at its start";
    }
  }
  CUCTX_ERR << "CuMemoryAllocator::Free(" << ptr << "): the pointer " << what
            << (options_.cache_memory ? ""
                                      : " (pass-through mode: unknown pointer or double free)");
}

size_t AllocatorImpl::TraceThreadLocked(uint64 thread) {
  AssertLocked();
  const size_t t =
      std::find(trace_threads_.begin(), trace_threads_.end(), thread) - trace_threads_.begin();
  if (t == trace_threads_.size()) trace_threads_.push_back(thread);
  return t;
}

void AllocatorImpl::TraceAllocLocked(void* ptr, uint64 thread, char kind, size_t a, size_t b) {
  AssertLocked();
  uint64 id = 0;
  if (ptr != nullptr) {
    id = next_trace_id_++;
    trace_ids_[ptr] = id;
  }
  const size_t t = TraceThreadLocked(thread);
  if (kind == 'm')
    std::fprintf(trace_, "m %zu %zu %" PRIu64 "\n", t, a, id);
  else
    std::fprintf(trace_, "p %zu %zu %zu %" PRIu64 "\n", t, a, b, id);
}

void AllocatorImpl::TraceFreeLocked(void* ptr, uint64 thread) {
  AssertLocked();
  auto it = trace_ids_.find(ptr);
  CUCTX_ASSERT(it != trace_ids_.end());  // tracing starts with the allocator
  std::fprintf(trace_, "f %zu %" PRIu64 "\n", TraceThreadLocked(thread), it->second);
  trace_ids_.erase(it);
}

void AllocatorImpl::TraceEventLocked(char kind, uint64 thread) {
  AssertLocked();
  std::fprintf(trace_, "%c %zu\n", kind, TraceThreadLocked(thread));
}

}  // namespace internal

// ---- CuAllocatorStats ------------------------------------------------------------------------

using internal::Mib;

double CuAllocatorStats::Fragmentation() const {
  return peak_in_use_bytes == 0 ? 0.0 : static_cast<double>(held_bytes) / peak_in_use_bytes;
}

double CuAllocatorStats::SyncsPer1000Frees() const {
  return num_frees == 0 ? 0.0 : 1000.0 * num_syncs / num_frees;
}

std::string CuAllocatorStats::ToJson() const {
  std::ostringstream os;
  os << "{\"caching\":" << (caching ? "true" : "false") << ",\"held_bytes\":" << held_bytes
     << ",\"peak_held_bytes\":" << peak_held_bytes << ",\"in_use_bytes\":" << in_use_bytes
     << ",\"peak_in_use_bytes\":" << peak_in_use_bytes
     << ",\"largest_free_block\":" << largest_free_block << ",\"cached_bytes\":" << cached_bytes
     << ",\"cached_large_bytes\":" << cached_large_bytes
     << ",\"num_used_blocks\":" << num_used_blocks << ",\"num_free_blocks\":" << num_free_blocks
     << ",\"num_cached_blocks\":" << num_cached_blocks
     << ",\"num_cached_large_blocks\":" << num_cached_large_blocks
     << ",\"num_regions\":" << num_regions << ",\"num_mallocs\":" << num_mallocs
     << ",\"num_frees\":" << num_frees << ",\"num_cache_hits\":" << num_cache_hits
     << ",\"num_syncs\":" << num_syncs << ",\"num_external_syncs\":" << num_external_syncs
     << ",\"num_stream_sync_notes\":" << num_stream_sync_notes
     << ",\"num_upstream_allocs\":" << num_upstream_allocs
     << ",\"num_upstream_failures\":" << num_upstream_failures
     << ",\"num_upstream_releases\":" << num_upstream_releases
     << ",\"map_granularity\":" << map_granularity << ",\"reserved_bytes\":" << reserved_bytes
     << ",\"num_upstream_maps\":" << num_upstream_maps
     << ",\"num_upstream_map_failures\":" << num_upstream_map_failures
     << ",\"num_upstream_unmaps\":" << num_upstream_unmaps
     << ",\"unmapped_bytes_total\":" << unmapped_bytes_total
     << ",\"num_oom_errors\":" << num_oom_errors << std::setprecision(9)
     << ",\"upstream_alloc_seconds\":" << upstream_alloc_seconds
     << ",\"fragmentation\":" << Fragmentation()
     << ",\"syncs_per_1000_frees\":" << SyncsPer1000Frees() << "}";
  return os.str();
}

std::string CuAllocatorStats::ToString() const {
  std::ostringstream os;
  os << "Device memory allocator (" << (caching ? "caching" : "pass-through") << "): held "
     << Mib(held_bytes) << " in " << num_regions << " region(s) (peak " << Mib(peak_held_bytes)
     << "); in use " << Mib(in_use_bytes) << " (peak " << Mib(peak_in_use_bytes) << ") in "
     << num_used_blocks << " block(s); " << num_free_blocks << " free block(s), largest "
     << Mib(largest_free_block) << "; " << num_cached_blocks << " block(s) (" << Mib(cached_bytes)
     << ") in thread caches (" << num_cached_large_blocks << " large, " << Mib(cached_large_bytes)
     << "); fragmentation (held / peak in use) " << std::fixed << std::setprecision(3)
     << Fragmentation() << "\n"
     << "  " << num_mallocs << " mallocs (" << num_cache_hits << " from thread caches), "
     << num_frees << " frees, " << num_syncs << " cross-thread syncs (" << std::setprecision(2)
     << SyncsPer1000Frees() << " per 1000 frees), " << num_external_syncs << " other syncs, "
     << num_stream_sync_notes << " drained-stream notes; upstream: " << num_upstream_allocs
     << " allocations in " << std::setprecision(4) << upstream_alloc_seconds << " s, "
     << num_upstream_failures << " failed, " << num_upstream_releases << " releases";
  if (map_granularity != 0)
    os << "; expandable: " << Mib(reserved_bytes) << " reserved, " << num_upstream_maps << " maps ("
       << num_upstream_map_failures << " failed), " << num_upstream_unmaps << " unmapped ranges ("
       << Mib(unmapped_bytes_total) << ") in " << Mib(map_granularity) << " granules";
  os << "; " << num_oom_errors << " out-of-memory errors";
  return os.str();
}

}  // namespace cuctx
