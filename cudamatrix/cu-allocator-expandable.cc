// cudamatrix/cu-allocator-expandable.cc: expandable (VMM) regions of CuMemoryAllocator: growth by
// mapping granules into reserved address space next to free blocks, and giving free granules back.
// SPDX-License-Identifier: Apache-2.0
//
// With an upstream whose MapGranularity() is non-zero, a region is a reservation of address space
// (by default the size of the device's memory) whose blocks are either mapped (in use, or free in
// a pool like any other) or unmapped (free address space, in the pool unmapped_, which requests
// never see). Mapped and unmapped blocks meet only at granule boundaries. Growth maps just enough
// granules next to a free block that the caller may use (its own or a shared one) for the joined
// block to serve the request, so a pool that grows step by step stays one contiguous block; a
// release cuts the granule-aligned middle out of every free block and unmaps it.
#include "cudamatrix/internal/cu-allocator.h"

#include <chrono>

namespace cuctx {
namespace internal {

// Where to map memory for a request: `bytes` at `offset` into the unmapped block `space`, then
// joined with the free mapped neighbours `left` and/or `right` (nullptr: none).
struct AllocatorImpl::MapPlan {
  Block* space = nullptr;
  size_t offset = 0;
  size_t bytes = 0;
  Block* left = nullptr;
  Block* right = nullptr;
};

Block* AllocatorImpl::GrowExpandableLocked(size_t size) {
  AssertLocked();
  size_t want = size;
  if (!first_region_done_) {
    first_region_done_ = true;
    if (options_.memory_proportion > 0) {
      // The optional up-front reservation: map that much now, as one free block.
      size_t free_bytes = 0, total_bytes = 0;
      upstream_->MemoryInfo(&free_bytes, &total_bytes);
      const size_t share =
          static_cast<size_t>(free_bytes * static_cast<double>(options_.memory_proportion));
      want = std::max(size, share / granule_ * granule_);
    }
  }
  MapPlan plan;
  // More address space is reserved only when no unmapped block can serve the request.
  auto make_plan = [&](size_t bytes, size_t step) {
    return PlanMappingLocked(bytes, step, &plan) ||
           (ReserveRegionLocked(bytes) != nullptr && PlanMappingLocked(bytes, step, &plan));
  };
  // Growth maps whole steps (--cuda-region-quantum-mb): the slack serves the next small requests
  // of any thread without another map, or a sync to take memory another thread freed.
  const size_t step = std::max(granule_, RoundUp(quantum_, granule_));
  if (make_plan(want, step))
    if (Block* b = MapAndJoinLocked(plan)) return b;
  if (make_plan(size, granule_))
    if (Block* b = MapAndJoinLocked(plan)) return b;
  // Recovery, cheapest first: join what other threads freed (which may also make a neighbour
  // usable), then unmap every free granule, so that its memory can be mapped where the request
  // fits in one piece.
  if (Block* b = ShareForGrowthLocked(size)) return b;
  if (make_plan(size, granule_))
    if (Block* b = MapAndJoinLocked(plan)) return b;
  if (UnmapFreeGranulesLocked() > 0 && make_plan(size, granule_))
    if (Block* b = MapAndJoinLocked(plan)) return b;
  ThrowOutOfMemoryLocked(size,
                         plan.space == nullptr
                             ? "no address space is left to reserve"
                             : "the device has no memory left to map, even after releasing the "
                               "cache");
}

// Picks the mapping that serves `size`, mapping multiples of `step` (a multiple of the granule)
// where it can, with the fewest new bytes (ties: the one that joins more
// free neighbours, so that free memory stays in one piece; then the lowest address): for
// each unmapped block, map granules at its start after a usable free left neighbour, at its end
// before a usable right neighbour, all of it between two, or at its start alone. A neighbour is
// usable when the calling thread may take it without a sync (its own pool or the shared one).
bool AllocatorImpl::PlanMappingLocked(size_t size, size_t step, MapPlan* plan) {
  AssertLocked();
  Pool* own = FindThreadPoolLocked(upstream_->CurrentThreadId());
  auto usable = [&](Block* n) {
    return n != nullptr && n->mapped && n->pool != nullptr &&
           (n->pool == &shared_ || (own != nullptr && n->pool == own));
  };
  *plan = MapPlan();
  auto joins = [](const Block* left, const Block* right) {
    return (left != nullptr ? 1 : 0) + (right != nullptr ? 1 : 0);
  };
  auto consider = [&](Block* space, size_t offset, size_t bytes, Block* left, Block* right) {
    if (bytes == 0 || bytes > space->size) return;
    if (plan->space != nullptr) {
      const char* at = space->begin + offset;
      const char* best_at = plan->space->begin + plan->offset;
      const int j = joins(left, right), best_j = joins(plan->left, plan->right);
      if (bytes > plan->bytes) return;
      if (bytes == plan->bytes && (j < best_j || (j == best_j && at >= best_at))) return;
    }
    *plan = MapPlan{space, offset, bytes, left, right};
  };
  auto missing = [&](size_t have) { return have >= size ? 0 : RoundUp(size - have, step); };
  for (const FreeEntry& e : unmapped_.blocks) {
    Block* space = e.block;
    Block* left = usable(space->prev) ? space->prev : nullptr;
    Block* right = usable(space->next) ? space->next : nullptr;
    consider(space, 0, missing(0), nullptr, nullptr);
    if (left != nullptr) consider(space, 0, missing(left->size), left, nullptr);
    if (right != nullptr) {
      const size_t bytes = missing(right->size);
      if (bytes != 0 && bytes <= space->size)
        consider(space, space->size - bytes, bytes, nullptr, right);
    }
    if (left != nullptr && right != nullptr && left->size + space->size + right->size >= size)
      consider(space, 0, space->size, left, right);
  }
  return plan->space != nullptr;
}

// Maps what `plan` says and returns the joined free block, in the pool of the calling thread if a
// neighbour came from there, else in the shared pool (fresh memory is safe for every thread).
// nullptr, with nothing changed, when the device is out of memory.
Block* AllocatorImpl::MapAndJoinLocked(const MapPlan& plan) {
  AssertLocked();
  Block* space = plan.space;
  char* at = space->begin + plan.offset;
  const auto start = std::chrono::steady_clock::now();
  const bool mapped = upstream_->Map(at, plan.bytes);
  stats_.upstream_alloc_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!mapped) {
    ++stats_.num_upstream_map_failures;
    return nullptr;
  }
  ++stats_.num_upstream_maps;
  space->region->mapped_bytes += plan.bytes;
  stats_.held_bytes += plan.bytes;
  stats_.peak_held_bytes = std::max(stats_.peak_held_bytes, stats_.held_bytes);

  unmapped_.Erase(space);
  Block* b = space;
  if (plan.offset > 0) {
    b = SplitOffLocked(space, plan.offset);
    unmapped_.Insert(space);
  }
  if (b->size > plan.bytes) unmapped_.Insert(SplitOffLocked(b, plan.bytes));
  b->mapped = true;
  b->thread = 0;
  b->stamp = 0;
  Pool* pool = &shared_;
  for (Block* n : {plan.left, plan.right})
    if (n != nullptr && n->pool != &shared_) pool = n->pool;
  if (plan.left != nullptr) {
    plan.left->pool->Erase(plan.left);
    b = JoinLocked(plan.left, b);
  }
  if (plan.right != nullptr) {
    plan.right->pool->Erase(plan.right);
    b = JoinLocked(b, plan.right);
  }
  b->thread = pool->thread;
  pool->Insert(b);
  return b;
}

// Reserves a new expandable region large enough for `size`: the device's total memory, so that
// one region normally serves the whole process. nullptr when no address space is left.
Block* AllocatorImpl::ReserveRegionLocked(size_t size) {
  AssertLocked();
  size_t free_bytes = 0, total_bytes = 0;
  upstream_->MemoryInfo(&free_bytes, &total_bytes);
  const size_t bytes = RoundUp(std::max(size, total_bytes), granule_);
  void* base = upstream_->Reserve(bytes);
  if (base == nullptr) return nullptr;
  CUCTX_CHECK(reinterpret_cast<uintptr_t>(base) % granule_ == 0)
      << "upstream " << upstream_->Name() << " reserved " << base << ", not aligned to its "
      << granule_ << "-byte granularity";
  return AddRegionLocked(static_cast<char*>(base), bytes, true);
}

// Unmaps the granule-aligned middle of every free mapped block (any pool: the upstream waits for
// the device first); the edges of less than a granule stay mapped and free. Returns the bytes.
size_t AllocatorImpl::UnmapFreeGranulesLocked() {
  AssertLocked();
  std::vector<std::pair<void*, size_t>> ranges;
  size_t unmapped = 0;
  for (auto& region : regions_) {
    Region* r = region.get();
    for (Block* b = r->first; b != nullptr;) {
      if (!b->mapped || b->pool == nullptr) {
        b = b->next;
        continue;
      }
      const size_t lo = RoundUp(static_cast<size_t>(b->begin - r->base), granule_);
      const size_t hi = static_cast<size_t>(b->begin + b->size - r->base) / granule_ * granule_;
      if (hi <= lo) {
        b = b->next;
        continue;
      }
      Pool* pool = b->pool;
      pool->Erase(b);
      Block* middle = b;
      if (r->base + lo > b->begin) {
        middle = SplitOffLocked(b, static_cast<size_t>(r->base + lo - b->begin));
        pool->Insert(b);
      }
      Block* tail = nullptr;
      if (r->base + hi < middle->begin + middle->size) {
        tail = SplitOffLocked(middle, static_cast<size_t>(r->base + hi - middle->begin));
        pool->Insert(tail);
      }
      ranges.emplace_back(middle->begin, middle->size);
      unmapped += middle->size;
      r->mapped_bytes -= middle->size;
      middle->mapped = false;
      middle->thread = 0;
      middle->stamp = 0;
      Block* joined = CoalesceLocked(middle, &unmapped_);
      unmapped_.Insert(joined);
      b = tail != nullptr ? tail->next : joined->next;
    }
  }
  if (!ranges.empty()) {
    upstream_->Unmap(ranges);
    stats_.num_upstream_unmaps += static_cast<int64>(ranges.size());
    stats_.unmapped_bytes_total += unmapped;
    stats_.held_bytes -= unmapped;
  }
  return unmapped;
}

// Gives back the address space of every expandable region but the first that has nothing mapped
// (a reservation costs no memory, and the first one is kept for the next growth).
size_t AllocatorImpl::UnreserveEmptyRegionsLocked() {
  AssertLocked();
  size_t released = 0;
  for (auto it = regions_.begin(); it != regions_.end();) {
    Region* r = it->get();
    if (it == regions_.begin() || !r->expandable || r->mapped_bytes != 0) {
      ++it;
      continue;
    }
    CUCTX_ASSERT(r->first->next == nullptr && r->first->pool == &unmapped_);
    unmapped_.Erase(r->first);
    RecycleBlockLocked(r->first);
    upstream_->Unreserve(r->base, r->size);
    stats_.reserved_bytes -= r->size;
    released += r->size;
    it = regions_.erase(it);
  }
  if (released > 0) RenumberLocked();
  return released;
}

// Destruction: unmaps every mapped run of the region (blocks in use too) and gives back its
// address space.
void AllocatorImpl::ReleaseExpandableLocked(Region* r) noexcept {
  AssertLocked();
  std::vector<std::pair<void*, size_t>> ranges;
  for (Block* b = r->first; b != nullptr; b = b->next) {
    if (!b->mapped) continue;
    if (!ranges.empty() &&
        static_cast<char*>(ranges.back().first) + ranges.back().second == b->begin)
      ranges.back().second += b->size;
    else
      ranges.emplace_back(b->begin, b->size);
  }
  if (!ranges.empty()) upstream_->Unmap(ranges);
  upstream_->Unreserve(r->base, r->size);
}

}  // namespace internal
}  // namespace cuctx
