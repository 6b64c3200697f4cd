// cudamatrix/cu-planned-scope.h: serving the allocations of a repeated iteration from a static
// memory plan (CuMemoryPlan): CuMemoryPlans (plans by shape key) and CuPlannedScope.
// SPDX-License-Identifier: Apache-2.0
//
// Training and batched decoding repeat the same allocations for every minibatch of a shape. Wrap
// one iteration in a scope:
//
//   CuMemoryPlans plans;                       // one per program (or per worker)
//   for (const Minibatch& mb : minibatches) {
//     CuPlannedScope scope(&plans, ShapeKey(mb));  // e.g. "frames=128"
//     TrainStep(mb);                              // allocates and frees as usual
//   }
//
// The first iteration with a new key records its Malloc/MallocPitch/Free sequence (served by the
// caching allocator as usual) and, when its scope ends, plans it (CuMemoryPlan::FromTrace: greedy
// by size, within a few percent of the lower bound). Every later iteration with that key is served
// from the plan: the i-th allocation of the scope gets the plan's buffer i at its fixed offset in
// one block, with no search and no lock; frees of planned buffers cost a comparison. The block
// belongs to the calling thread and is shared by all its plans (they never run at the same time
// on one thread); it comes from the caching allocator and grows to the largest plan's peak.
//
// Mismatches are safe: the scope checks every call against the plan's sequence (kind, size, and
// which buffer is freed when). At the first call that differs it logs one warning naming the call
// and what the plan expected, and from then on serves the rest of the scope from the caching
// allocator (counted in NumFallbacks()); buffers already served stay valid. Planned memory still
// allocated when the scope ends (an output kept past the iteration) stays valid too: the thread's
// block is then handed over to that memory and freed after its last pointer, and the thread takes
// a new block next time.
//
// Streams: planned buffers are reused in the plan's order on the calling thread's stream, which
// orders their use exactly as the caching allocator's reuse would; work of another thread must
// not use a planned buffer after the scope's thread freed it (the same rule as for any Free).
//
// In CPU mode (no GPU) or inside another allocation scope (a CuGraph capture) a scope does
// nothing. A scope may also be given an allocator explicitly; it then installs nothing and serves
// only its own Malloc/MallocPitch/Free calls (used by tests over a host upstream).
//
// Thread-safety: CuMemoryPlans may be shared by threads (a mutex guards its map); a
// CuPlannedScope is used by the thread that made it, and scopes do not nest.
#ifndef CUCTX_CUDAMATRIX_CU_PLANNED_SCOPE_H_
#define CUCTX_CUDAMATRIX_CU_PLANNED_SCOPE_H_

#include "base/types.h"
#include "cudamatrix/cu-memory-plan.h"

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cuctx {

class CuMemoryAllocator;

// Plans by shape key, with the event order a scope checks against, and per-key counters.
class CuMemoryPlans {
 public:
  CuMemoryPlans() = default;
  CuMemoryPlans(const CuMemoryPlans&) = delete;
  CuMemoryPlans& operator=(const CuMemoryPlans&) = delete;

  // Adds (or replaces) the plan for `key`.
  void Add(const std::string& key, CuMemoryPlan plan);
  // The plan for `key`, or nullptr.
  const CuMemoryPlan* Find(const std::string& key) const;
  bool Has(const std::string& key) const { return Find(key) != nullptr; }
  size_t NumPlans() const;

  // Per-key counters, summed over the scopes that used the plan.
  struct Counters {
    int64 scopes = 0;     // scopes served from the plan
    int64 served = 0;     // allocations served from the plan
    int64 fallbacks = 0;  // allocations the caching allocator served after a mismatch
    int64 mismatched_scopes = 0;
  };
  Counters GetCounters(const std::string& key) const;

  // The plan with the order of its events (allocations and frees), as a scope replays it.
  struct Entry {
    CuMemoryPlan plan;
    // Event e: buffer events[e] >= 0 is allocated, -1 - events[e] is freed; in plan step order.
    std::vector<int32> events;
    Counters counters;
    explicit Entry(CuMemoryPlan p);
  };

 private:
  friend class CuPlannedScope;
  Entry* FindEntry(const std::string& key) const;

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Entry>> plans_;
};

class CuPlannedScope {
 public:
  // Replays `plans`' plan for `key`, or records one if it has none (see the file comment), on
  // the device's caching allocator for the calling thread's device allocations.
  CuPlannedScope(CuMemoryPlans* plans, const std::string& key);
  // The same on `allocator`, serving only this object's Malloc/MallocPitch/Free (tests).
  CuPlannedScope(CuMemoryPlans* plans, const std::string& key, CuMemoryAllocator* allocator);
  // Plans a recorded iteration (throws nothing: a failure to plan is logged); hands a block that
  // still holds planned memory over to that memory.
  ~CuPlannedScope();
  CuPlannedScope(const CuPlannedScope&) = delete;
  CuPlannedScope& operator=(const CuPlannedScope&) = delete;

  // What CuDevice::Malloc/MallocPitch/Free call while this scope is installed.
  void* Malloc(size_t bytes);
  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch);
  void Free(void* ptr);

  bool Recording() const;
  int64 NumServed() const;     // allocations served from the plan
  int64 NumFallbacks() const;  // allocations served by the caching allocator after a mismatch
  bool Mismatched() const;     // a call differed from the plan

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_PLANNED_SCOPE_H_
