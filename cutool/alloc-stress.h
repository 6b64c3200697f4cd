// cutool/alloc-stress.h: a multi-threaded Malloc/Free workload with poison checks over one
// CuMemoryAllocator (RunAllocStress), shared by the soak tool (bin/cu-allocator-soak) and the
// fault-injection test (tests/cudamatrix/cu-allocator-faults-test.cc).
// SPDX-License-Identifier: Apache-2.0
//
// Each of `threads` threads repeats, from its own seeded generator: allocate a block of a random
// size (70% up to 4 KiB, the rest up to max_bytes) and fill it with a byte of its own (the poison
// pattern), or free one of its live blocks after checking that every byte checked still holds
// its pattern; some blocks are handed to the next thread, which checks and frees them (cross-
// thread frees), and some are overwritten and freed at once, without waiting for the write, so
// that a block reused too early is caught by the next owner's check. Every live block is also in
// one registry of address ranges: a Malloc that returns memory overlapping a live block counts as
// a double hand-out. A Malloc, SynchronizeGpu or ReleaseCachedMemory that throws cuctx::CudaError
// (OutOfMemoryError or an injected fault) is counted and the thread goes on.
//
// Host memory (device_memory = false) is filled and checked whole; device memory (a GPU
// allocator) is filled with cudaMemsetAsync on the thread's stream and its first and last 4 KiB
// are checked by copies, so the stream order of the allocator's reuse is what is tested. A block
// handed to another thread is first waited for (cudaStreamSynchronize), as a program must.
// Thread-safety: RunAllocStress starts and joins its own threads; the allocator must allow
// multithreading (it calls AllowMultithreading()).
#ifndef CUCTX_CUTOOL_ALLOC_STRESS_H_
#define CUCTX_CUTOOL_ALLOC_STRESS_H_

#include "base/types.h"

#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace cuctx {

class CuMemoryAllocator;

struct AllocStressOptions {
  int threads = 8;
  int64 steps_per_thread = 2000;  // operations per thread, unless `seconds` > 0
  double seconds = 0;             // > 0: run for this long instead
  size_t max_bytes = size_t{1} << 20;
  int max_live_per_thread = 24;
  double cross_thread_fraction = 0.2;  // of the frees
  double free_unchecked_fraction = 0.1;
  uint64 seed = 1;
  bool device_memory = false;
  // Every this many steps a thread calls SynchronizeGpu / NoteThreadStreamSynchronized (after
  // waiting for its stream) / ReleaseCachedMemory (0: never).
  int64 sync_every = 211;
  int64 drained_every = 307;
  int64 release_every = 997;
  // Called first on each thread (e.g. CuDevice::Instantiate(), so that the thread works on the
  // selected device); may be empty.
  std::function<void()> thread_init;
  // Called by each thread every `hook_every` steps (0: never) with the thread index and its
  // generator, after its own step: the soak tool's extra actions. Exceptions are counted as
  // hook_errors and reported in errors; the run goes on.
  std::function<void(int thread, std::mt19937_64* rng)> hook;
  int64 hook_every = 0;
};

struct AllocStressResult {
  int64 mallocs = 0;
  int64 frees = 0;
  int64 cross_thread_frees = 0;
  int64 bytes_allocated = 0;
  int64 malloc_failures = 0;  // CudaError from Malloc (out of memory or an injected fault)
  int64 oom_errors = 0;       // ... of which OutOfMemoryError
  int64 other_failures = 0;   // CudaError from SynchronizeGpu or ReleaseCachedMemory
  int64 corruptions = 0;      // blocks whose pattern was found changed
  int64 double_handouts = 0;  // blocks handed out while overlapping a live block
  int64 hook_calls = 0;
  int64 hook_errors = 0;
  std::vector<std::string> errors;  // the first few unexpected errors, for the report
  double seconds = 0;
  // Where the threads' time went: wall seconds summed over the threads, per kind of work, and how
  // many times each ran (a slow run names its cause: see the soak tool's "time by kind" table).
  struct Work {
    int64 count = 0;
    double seconds = 0;
    void Add(const Work& o) {
      count += o.count;
      seconds += o.seconds;
    }
  };
  Work malloc_work;   // Malloc (including growth and out-of-memory recovery inside it)
  Work free_work;     // Free
  Work fill_work;     // filling a block with its pattern (device: cudaMemsetAsync)
  Work check_work;    // checking a block's pattern (device: two copies and a stream wait)
  Work handoff_work;  // waiting for the stream before handing a block to another thread
  Work sync_work;     // SynchronizeGpu
  Work drain_work;    // stream wait + NoteThreadStreamSynchronized
  Work release_work;  // ReleaseCachedMemory
  Work hook_work;     // the hook (the soak's extra actions)
};

AllocStressResult RunAllocStress(CuMemoryAllocator* allocator, const AllocStressOptions& options);

}  // namespace cuctx

#endif  // CUCTX_CUTOOL_ALLOC_STRESS_H_
