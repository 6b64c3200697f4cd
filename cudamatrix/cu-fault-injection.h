// cudamatrix/cu-fault-injection.h: failures injected on purpose into the calls the allocator layer
// makes to the device (FaultInjector), and the upstream wrapper that applies them to a
// CuAllocatorUpstream (NewFaultInjectingUpstream).
// SPDX-License-Identifier: Apache-2.0
//
// Real drivers fail under pressure at arbitrary points: a map halfway through a growth step, a
// page-locked allocation during a staged copy, an event when the driver runs dry. To test that
// every such failure surfaces as cuctx::OutOfMemoryError or as the call's own cuctx::CudaError,
// and that nothing leaks, nothing is handed out twice and later calls succeed, the allocator
// layer asks FaultInjector before each call of these kinds (sites):
//   device   the upstream's Allocate (fails as the device being full: nullptr) and MemoryInfo
//            (throws CudaError "cudaMemGetInfo")
//   vmm      the upstream's Reserve (nullptr: no address space) and Map (false: device full)
//   stream   the upstream's SynchronizeAllStreams (throws CudaError: the sync kernel's launch)
//   pinned   a new page-locked (or, without a GPU, ordinary) block of PinnedHostAllocator
//            (fails as out of memory: the allocator releases its cache, retries, then throws
//            OutOfMemoryError)
//   event    PinnedHostAllocator's cudaEventRecord on Free and cudaEventQuery on reuse (throws
//            CudaError; a Free that fails leaves the block with its owner)
// The async backend (--cuda-allocator=async, cu-allocator-async.h) asks at the same sites inside
// its upstream: device (each cudaMallocFromPoolAsync attempt: out of memory; MemoryInfo: throws)
// and stream (its syncs: throw).
// Calls that give memory back (Release, Unmap, Unreserve, cudaFreeHost) are never failed: they
// cannot report a failure to anyone (the real ones log and go on).
//
// Off by default (one relaxed atomic load per site). Turned on:
//   - for the process, by the environment: CUCTX_FAULT_INJECT="one_in=50,seed=7,sites=device+vmm"
//     (or "nth=100"); read once, on first use. NewDeviceAllocatorUpstream() then wraps the
//     device upstreams (CuDevice's allocators and graph pools) in NewFaultInjectingUpstream, and
//     the pinned host allocators consult it;
//   - by a test, with ScopedFaultInjection (the test hook), around code using an upstream the test
//     wrapped itself.
// Modes: nth=N fails exactly the N-th call (1-based) at the selected sites, counted together;
// one_in=K fails each call with probability 1/K, decided by a hash of (seed, call number) so that
// a run is repeatable for a given order of calls. An injected CudaError says "injected fault"
// and names the call, the site and the call number.
//
// Thread-safety: every function may be called from any thread; Configure/Disable while other
// threads make calls changes the mode for calls after it.
#ifndef CUCTX_CUDAMATRIX_CU_FAULT_INJECTION_H_
#define CUCTX_CUDAMATRIX_CU_FAULT_INJECTION_H_

#include "base/types.h"
#include "cudamatrix/cu-allocator-upstream.h"

#include <memory>
#include <string>

namespace cuctx {

enum class FaultSite : int { kDevice = 0, kVmm, kStream, kPinned, kEvent, kNumSites };

// "device", "vmm", "stream", "pinned", "event".
const char* FaultSiteName(FaultSite site);

struct FaultInjectionOptions {
  int64 nth = 0;     // fail the nth selected call (1-based); 0: off
  int64 one_in = 0;  // fail each selected call with probability 1/one_in; 0: off
  uint64 seed = 1;
  std::string sites = "all";  // "all" or names joined by '+' or ','

  // Parses CUCTX_FAULT_INJECT's format, "key=value" pairs separated by ',' or ';' with keys nth,
  // one_in, seed and sites (sites joined by '+'). Throws cuctx::Error naming the bad part.
  static FaultInjectionOptions Parse(const std::string& spec);
  // Throws cuctx::Error naming the field: nth and one_in >= 0, not both set, an unknown site.
  void Check() const;
  // True when nth or one_in is set.
  bool Active() const { return nth > 0 || one_in > 0; }
};

class FaultInjector {
 public:
  // Replaces the mode (checked first) and zeroes the counters.
  static void Configure(const FaultInjectionOptions& options);
  static void Disable();
  // True while a mode is active (after CUCTX_FAULT_INJECT has been read).
  static bool Enabled();
  // Counts a call at `site` and says whether it must fail. Cheap when disabled.
  static bool ShouldFail(FaultSite site);
  // Throws the CudaError of an injected failure of `call` at `site` (see the file comment).
  [[noreturn]] static void Throw(FaultSite site, const char* call);

  struct Counters {
    int64 calls[static_cast<int>(FaultSite::kNumSites)] = {};
    int64 failures[static_cast<int>(FaultSite::kNumSites)] = {};
    int64 TotalFailures() const;
  };
  // Calls and injected failures per site since the last Configure.
  static Counters GetCounters();
};

// The test hook: injects faults as `options` say for its lifetime, then restores what was active
// before (the environment's mode, or none). Scopes do not nest across threads.
class ScopedFaultInjection {
 public:
  explicit ScopedFaultInjection(const FaultInjectionOptions& options);
  ~ScopedFaultInjection();
  ScopedFaultInjection(const ScopedFaultInjection&) = delete;
  ScopedFaultInjection& operator=(const ScopedFaultInjection&) = delete;

 private:
  FaultInjectionOptions previous_;
};

// Wraps `inner`: every call goes to it, except that the sites device, vmm and stream fail as the
// file comment says whenever FaultInjector::ShouldFail tells them to.
std::unique_ptr<CuAllocatorUpstream> NewFaultInjectingUpstream(
    std::unique_ptr<CuAllocatorUpstream> inner);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_FAULT_INJECTION_H_
