// cudamatrix/internal/cu-alloc-scope.h: a per-thread hook that serves CuDevice::Malloc,
// MallocPitch and Free from somewhere other than the device's caching allocator while it is
// installed (a graph capture's private pool: cu-graph.cc; a planned scope: cu-planned-scope.cc),
// and the owners of memory that outlives such a scope. Private to cudamatrix/.
//
// Thread-safety: the hook is thread_local; a scope is installed and used by one thread. The owner
// list is process-wide behind a mutex.
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOC_SCOPE_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOC_SCOPE_H_

#include <cstddef>
#include <memory>

namespace cuctx {

struct MemorySnapshot;  // cudamatrix/cu-memory-snapshot.h

namespace internal {

class AllocationScope {
 public:
  virtual void* Malloc(size_t bytes) = 0;
  virtual void* MallocPitch(size_t row_bytes, size_t num_rows, size_t* pitch) = 0;
  // Takes `ptr` (not null) if this scope serves or must keep it, and returns true; false: the
  // caller frees it as it would without the scope.
  virtual bool Free(void* ptr) = 0;

  virtual ~AllocationScope() = default;
};

// Installs `scope` (or nullptr) for the calling thread and returns the one it replaces, which the
// caller puts back when its scope ends.
AllocationScope* SetThreadAllocationScope(AllocationScope* scope);
AllocationScope* ThreadAllocationScope();

// An owner of device memory that may outlive the scope that handed it out (an output of a
// captured graph, a planned buffer still allocated when its scope ends): CuDevice::Free offers
// it every pointer that the device's allocator does not know.
class ScopedMemoryOwner {
 public:
  virtual ~ScopedMemoryOwner() = default;
  // Takes `ptr` and returns true if it is this owner's memory in use; thread-safe.
  virtual bool FreeIfOwned(void* ptr) = 0;
  // True when none of the owner's memory is in use any more; thread-safe.
  virtual bool Unused() = 0;
  // Appends the owner's segments and events of device `device` to `out` (a memory snapshot:
  // cu-device-snapshot.h); thread-safe. Default: nothing (its memory is a block of an allocator
  // that the snapshot shows anyway).
  virtual void AppendSnapshot(int device, MemorySnapshot* out) {
    (void)device;
    (void)out;
  }
};

// Process-wide list of owners (cu-alloc-scope.cc). Register an owner while its memory can be
// freed from outside its scope; Retire() it when its scope is gone: it is dropped (destroyed,
// outside the list's lock, by whichever call drops the last reference) at once if unused, else
// after its last pointer is freed.
void RegisterScopedMemoryOwner(std::shared_ptr<ScopedMemoryOwner> owner);
void RetireScopedMemoryOwner(ScopedMemoryOwner* owner);

// Device memory that outlived the scope that allocated it: returns true when `ptr` was such
// memory and its owner took it back. One relaxed atomic load while no owner is registered.
bool FreeScopedMemory(void* ptr);

// Every registered owner's AppendSnapshot(device, out) (the graph pools of `device`).
void AppendScopedMemorySnapshots(int device, MemorySnapshot* out);

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_ALLOC_SCOPE_H_
