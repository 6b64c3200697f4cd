// cudamatrix/cu-planned-scope.cc: CuMemoryPlans and CuPlannedScope (recording an iteration,
// replaying its plan, mismatch fallback, the per-thread block).
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-planned-scope.h"

#include "base/error.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-memory-snapshot.h"
#include "cudamatrix/internal/cu-alloc-scope.h"
#include "cudamatrix/internal/cu-storage.h"

#include <algorithm>
#include <atomic>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace cuctx {

// ---- CuMemoryPlans -------------------------------------------------------------------------------

CuMemoryPlans::Entry::Entry(CuMemoryPlan p) : plan(std::move(p)) {
  // Allocation at a buffer's begin step, free at its end step if it was freed in the iteration.
  std::vector<std::pair<int64, int32>> at;
  const std::vector<CuMemoryPlan::Buffer>& buffers = plan.Buffers();
  for (size_t i = 0; i < buffers.size(); ++i) {
    at.emplace_back(buffers[i].begin, static_cast<int32>(i));
    if (buffers[i].freed) at.emplace_back(buffers[i].end, -1 - static_cast<int32>(i));
  }
  std::sort(at.begin(), at.end());
  events.reserve(at.size());
  for (const auto& e : at) events.push_back(e.second);
}

void CuMemoryPlans::Add(const std::string& key, CuMemoryPlan plan) {
  auto entry = std::make_unique<Entry>(std::move(plan));
  std::lock_guard<std::mutex> lock(mutex_);
  plans_[key] = std::move(entry);
}

CuMemoryPlans::Entry* CuMemoryPlans::FindEntry(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = plans_.find(key);
  return it == plans_.end() ? nullptr : it->second.get();
}

const CuMemoryPlan* CuMemoryPlans::Find(const std::string& key) const {
  const Entry* e = FindEntry(key);
  return e == nullptr ? nullptr : &e->plan;
}

size_t CuMemoryPlans::NumPlans() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return plans_.size();
}

CuMemoryPlans::Counters CuMemoryPlans::GetCounters(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = plans_.find(key);
  return it == plans_.end() ? Counters() : it->second->counters;
}

// ---- the block ---------------------------------------------------------------------------------

namespace {

// Device memory from an allocator that planned buffers live in. Buffers start kLead bytes in, so
// that no planned pointer is the start of the allocator's block (the allocator would take it for
// the block itself). When a scope ends with planned memory still allocated, the block becomes a
// scoped-memory owner and is freed after its last pointer.
// The block's Malloc, marked for memory snapshots (cu-memory-snapshot.h: cuctx_kind
// planned_scope), so that a snapshot tells it from an ordinary block.
char* MarkedMalloc(CuMemoryAllocator* allocator, size_t bytes) {
  ScopedSnapshotMark mark("planned_scope",
                          "CuPlannedScope block (the planned buffers of a thread's "
                          "scopes, at fixed offsets inside it)");
  return static_cast<char*>(allocator->Malloc(bytes));
}

class PlanBlock : public internal::ScopedMemoryOwner {
 public:
  static constexpr size_t kLead = CuMemoryPlan::kAlignment;

  PlanBlock(CuMemoryAllocator* allocator, size_t capacity)
      : allocator_(allocator),
        raw_(MarkedMalloc(allocator, capacity + kLead)),
        capacity_(capacity) {}
  ~PlanBlock() override {
    try {
      allocator_->Free(raw_);
    } catch (const std::exception& e) {
      CUCTX_WARN << "freeing a memory plan's block: " << e.what();
    }
  }
  char* Base() const { return raw_ + kLead; }
  size_t Capacity() const { return capacity_; }
  bool Contains(const void* p) const {
    const char* c = static_cast<const char*>(p);
    return c >= Base() && c < Base() + capacity_;
  }
  void SetLive(int64 live) { live_.store(live); }

  bool FreeIfOwned(void* p) override {
    if (!Contains(p)) return false;
    live_.fetch_sub(1);
    return true;
  }
  bool Unused() override { return live_.load() <= 0; }

 private:
  CuMemoryAllocator* allocator_;
  char* raw_;
  size_t capacity_;
  std::atomic<int64> live_{0};
};

// The calling thread's block for the device's allocator, shared by all its plans.
thread_local std::shared_ptr<PlanBlock> t_device_block;

size_t RoundUp(size_t n) {
  const size_t a = CuMemoryPlan::kAlignment;
  return (n + a - 1) / a * a;
}

}  // namespace

// ---- the scope ---------------------------------------------------------------------------------

class CuPlannedScope::Impl : public internal::AllocationScope {
 public:
  Impl(CuMemoryPlans* plans, const std::string& key, CuMemoryAllocator* allocator, bool device)
      : plans_(plans), key_(key), allocator_(allocator), device_(device) {
    CUCTX_CHECK(plans != nullptr) << "CuPlannedScope: plans must not be null";
    entry_ = plans->FindEntry(key);
    if (entry_ != nullptr) AcquireBlock();
  }

  ~Impl() override {
    if (entry_ == nullptr) {
      if (next_id_ > 1) PlanRecording();
    } else {
      std::lock_guard<std::mutex> lock(plans_->mutex_);
      CuMemoryPlans::Counters& c = entry_->counters;
      ++c.scopes;
      c.served += served_;
      c.fallbacks += fallbacks_;
      if (mismatched_) ++c.mismatched_scopes;
    }
    if (block_ != nullptr && live_ > 0) {
      if (device_) {
        // Planned memory outlives the scope: the block goes with it; the thread takes a new one.
        block_->SetLive(live_);
        internal::RegisterScopedMemoryOwner(block_);
        internal::RetireScopedMemoryOwner(block_.get());
        t_device_block.reset();
      } else {
        CUCTX_WARN << "CuPlannedScope '" << key_ << "': " << live_
                   << " planned buffer(s) still allocated at the end of the scope; their block "
                      "is kept (never freed)";
        new std::shared_ptr<PlanBlock>(block_);  // deliberately leaked, so the memory stays valid
      }
    }
  }

  void* Malloc(size_t bytes) override {
    if (bytes == 0) return nullptr;
    if (entry_ == nullptr) return Record(allocator_->Malloc(bytes), 'm', bytes, 0);
    if (!mismatched_) {
      const CuMemoryPlan::Buffer* b = NextAllocation();
      if (b != nullptr && b->kind == 'm' && RoundUp(bytes) == b->size) return Serve(*b);
      Mismatch("Malloc(" + std::to_string(bytes) + ")");
    }
    ++fallbacks_;
    return allocator_->Malloc(bytes);
  }

  void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) override {
    if (row_bytes == 0 || num_rows == 0) return allocator_->MallocPitch(row_bytes, num_rows, pitch);
    if (entry_ == nullptr)
      return Record(allocator_->MallocPitch(row_bytes, num_rows, pitch), 'p', row_bytes, num_rows);
    if (!mismatched_) {
      const CuMemoryPlan::Buffer* b = NextAllocation();
      if (b != nullptr && b->kind == 'p' && b->row_bytes == row_bytes && b->num_rows == num_rows) {
        *pitch = b->pitch;
        return Serve(*b);
      }
      Mismatch("MallocPitch(" + std::to_string(row_bytes) + ", " + std::to_string(num_rows) + ")");
    }
    ++fallbacks_;
    return allocator_->MallocPitch(row_bytes, num_rows, pitch);
  }

  bool Free(void* ptr) override {
    if (entry_ == nullptr) {
      auto it = ids_.find(ptr);
      if (it != ids_.end()) {
        trace_ << "f 0 " << it->second << "\n";
        ids_.erase(it);
      }
      return false;  // the allocator frees it
    }
    if (block_ == nullptr || !block_->Contains(ptr)) return false;
    --live_;
    if (!mismatched_) {
      const std::vector<int32>& ev = entry_->events;
      const std::vector<CuMemoryPlan::Buffer>& buffers = entry_->plan.Buffers();
      if (next_ < ev.size() && ev[next_] < 0 &&
          block_->Base() + buffers[static_cast<size_t>(-1 - ev[next_])].offset == ptr) {
        ++next_;
      } else {
        std::ostringstream what;
        what << "Free of planned buffer at offset "
             << static_cast<size_t>(static_cast<char*>(ptr) - block_->Base());
        Mismatch(what.str());
      }
    }
    return true;
  }

  CuMemoryAllocator* allocator() const { return allocator_; }
  bool recording() const { return entry_ == nullptr; }
  int64 served() const { return served_; }
  int64 fallbacks() const { return fallbacks_; }
  bool mismatched() const { return mismatched_; }

  internal::AllocationScope* previous = nullptr;  // restored when a device scope ends

 private:
  void AcquireBlock() {
    const size_t need = std::max<size_t>(entry_->plan.PeakBytes(), CuMemoryPlan::kAlignment);
    if (!device_) {
      block_ = std::make_shared<PlanBlock>(allocator_, need);
      return;
    }
    if (t_device_block == nullptr || t_device_block->Capacity() < need) {
      t_device_block.reset();  // the old block holds no planned memory: it is freed here
      t_device_block = std::make_shared<PlanBlock>(allocator_, need);
    }
    block_ = t_device_block;
  }

  // The buffer the plan allocates next, or nullptr if the plan expects a free or has ended.
  const CuMemoryPlan::Buffer* NextAllocation() const {
    const std::vector<int32>& ev = entry_->events;
    if (next_ >= ev.size() || ev[next_] < 0) return nullptr;
    return &entry_->plan.Buffers()[static_cast<size_t>(ev[next_])];
  }

  void* Serve(const CuMemoryPlan::Buffer& b) {
    ++next_;
    ++served_;
    ++live_;
    return block_->Base() + b.offset;
  }

  void Mismatch(const std::string& call) {
    mismatched_ = true;
    std::ostringstream expected;
    const std::vector<int32>& ev = entry_->events;
    if (next_ >= ev.size()) {
      expected << "the plan has no more calls";
    } else if (ev[next_] >= 0) {
      const CuMemoryPlan::Buffer& b = entry_->plan.Buffers()[static_cast<size_t>(ev[next_])];
      if (b.kind == 'p')
        expected << "the plan expects MallocPitch(" << b.row_bytes << ", " << b.num_rows << ")";
      else
        expected << "the plan expects Malloc of " << b.size << " bytes (rounded)";
    } else {
      const size_t b = static_cast<size_t>(-1 - ev[next_]);
      expected << "the plan expects the Free of planned buffer " << b << " (at offset "
               << entry_->plan.Buffers()[b].offset << ")";
    }
    CUCTX_WARN << "CuPlannedScope '" << key_ << "': call " << next_ + 1 << " (" << call
               << ") does not match the plan: " << expected.str()
               << "; the rest of this scope uses the caching allocator";
  }

  void* Record(void* p, char kind, size_t a, size_t b) {
    if (p == nullptr) return p;
    const uint64 id = next_id_++;
    ids_[p] = id;
    if (kind == 'm')
      trace_ << "m 0 " << a << " " << id << "\n";
    else
      trace_ << "p 0 " << a << " " << b << " " << id << "\n";
    return p;
  }

  void PlanRecording() {
    try {
      std::istringstream in(trace_.str());
      plans_->Add(key_, CuMemoryPlan::FromTrace(in));
    } catch (const std::exception& e) {
      CUCTX_WARN << "CuPlannedScope '" << key_
                 << "': could not plan the recorded iteration: " << e.what();
    }
  }

  CuMemoryPlans* plans_;
  std::string key_;
  CuMemoryAllocator* allocator_;
  bool device_;
  CuMemoryPlans::Entry* entry_ = nullptr;  // nullptr: recording
  std::shared_ptr<PlanBlock> block_;
  size_t next_ = 0;  // the next event of the plan
  bool mismatched_ = false;
  int64 served_ = 0, fallbacks_ = 0, live_ = 0;
  // Recording.
  std::ostringstream trace_;
  std::unordered_map<void*, uint64> ids_;
  uint64 next_id_ = 1;
};

CuPlannedScope::CuPlannedScope(CuMemoryPlans* plans, const std::string& key) {
  if (!internal::OnGpu()) return;  // CPU mode: nothing to plan
  CuDevice& device = CuDevice::Instantiate();
  if (internal::ThreadAllocationScope() != nullptr) return;  // inside a capture: leave it be
  impl_ = std::make_unique<Impl>(plans, key, device.Allocator(), true);
  impl_->previous = internal::SetThreadAllocationScope(impl_.get());
}

CuPlannedScope::CuPlannedScope(CuMemoryPlans* plans, const std::string& key,
                               CuMemoryAllocator* allocator) {
  CUCTX_CHECK(allocator != nullptr) << "CuPlannedScope: allocator must not be null";
  impl_ = std::make_unique<Impl>(plans, key, allocator, false);
}

CuPlannedScope::~CuPlannedScope() {
  if (impl_ == nullptr) return;
  if (internal::ThreadAllocationScope() == impl_.get())
    internal::SetThreadAllocationScope(impl_->previous);
  impl_.reset();
}

void* CuPlannedScope::Malloc(size_t bytes) {
  return impl_ != nullptr ? impl_->Malloc(bytes) : CuDevice::Instantiate().Malloc(bytes);
}

void* CuPlannedScope::MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) {
  return impl_ != nullptr ? impl_->MallocPitch(row_bytes, num_rows, pitch)
                          : CuDevice::Instantiate().MallocPitch(row_bytes, num_rows, pitch);
}

void CuPlannedScope::Free(void* ptr) {
  if (ptr == nullptr) return;
  if (impl_ == nullptr) {
    CuDevice::Instantiate().Free(ptr);
    return;
  }
  if (!impl_->Free(ptr)) impl_->allocator()->Free(ptr);
}

bool CuPlannedScope::Recording() const { return impl_ != nullptr && impl_->recording(); }
int64 CuPlannedScope::NumServed() const { return impl_ != nullptr ? impl_->served() : 0; }
int64 CuPlannedScope::NumFallbacks() const { return impl_ != nullptr ? impl_->fallbacks() : 0; }
bool CuPlannedScope::Mismatched() const { return impl_ != nullptr && impl_->mismatched(); }

}  // namespace cuctx
