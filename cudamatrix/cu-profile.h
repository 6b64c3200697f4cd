// cudamatrix/cu-profile.h: per-op profiling of the Cu classes (CUDA events, host clock, NVTX).
// SPDX-License-Identifier: Apache-2.0
//
// At --verbose >= 1 (GetVerboseLevel() >= 1) every public Cu op records itself under a qualified
// name ("CuMatrix::AddMatMat", "CuVector::AddVec", "cu::Splice"): one call and the time it took
// are added to the process-wide totals that CuDevice::PrintProfile prints and CuDevice::GetProfile
// returns. Ops do this with one line, the first statement of the method:
//   internal::CuOpScope op_scope("CuMatrix::Sigmoid");
// Methods that only forward to another public op (ApplyPow to Pow, SetRandn to CuRand) are
// recorded under the op they forward to. Nested ops are recorded each under its own name, so a
// parent's time includes its children's.
//
// What is measured:
//   GPU selected   the GPU time between two CUDA events recorded on this thread's stream around the
//                  op: the op's device work plus any idle gap while the host was still issuing it.
//   no GPU         host seconds (the CPU fallback is synchronous).
// Nothing is recorded while the calling thread captures a CUDA graph (CuGraph::Capturing()): the
// captured work has no time until the graph is launched.
//
// NOTE ON PROFILING WITHOUT SYNCHRONISATION: a profiled op never waits for the GPU. Its two events
// (cudaEventDefault, timing enabled) come from a pool that belongs to the calling thread and the
// current device, and are reused; the (name, start, end) triple is queued on the thread's pending
// list. Pending pairs are resolved (cudaEventElapsedTime) and folded into the totals
//   * when every event of the pool is in use: the oldest pairs whose end event has completed
//     (cudaEventQuery) are resolved, which frees their events; if none has, the pool grows, and
//     only at its limit (kDefaultProfileEventPool events: the host is then that many / 2 ops
//     ahead of the GPU) does the thread wait for the oldest end event;
//   * in PrintProfile / GetProfile, for every thread, waiting for the GPU as needed;
//   * when the thread exits (its events are destroyed; a CUDA runtime that is already unloading
//     at process exit is not called).
// A thread's pool is guarded by its own mutex: uncontended for the thread itself, taken by
// PrintProfile from another thread. Pools are kept per device id, so that a thread that uses
// several devices records each op's events on the device it runs on.
//
// Cost: profiling off, an op pays one relaxed load of the verbose level and one predictable branch
// when the scope opens, and one branch on a flag of the scope object when it closes: no clock
// read, no thread-local lookup, no CUDA call. Profiling on, an op pays two cudaEventRecord calls,
// an NVTX push and pop, and a few thread-local and map operations (CPU mode: two clock reads).
// Measured on an H100 (cu-matrix-bench --only=profile): off, under a nanosecond per op (within
// noise); on, about 3.5 us more host time per op (Sigmoid 32x256: 4.0 -> 7.5 us per call).
//
// NVTX: in CUDA builds every profiled op also opens an NVTX range named like the op, in the
// "cuctx" domain, so that `nsys profile` timelines name cuctx ops (run with --verbose=1; nvtx3 is
// header-only and costs nothing without a tool attached). Builds without CUDA have no NVTX.
#ifndef CUCTX_CUDAMATRIX_CU_PROFILE_H_
#define CUCTX_CUDAMATRIX_CU_PROFILE_H_

#include "base/error.h"
#include "base/types.h"

#include <map>
#include <string>

namespace cuctx {

// One op's accumulated profile.
struct CuProfileEntry {
  double seconds = 0.0;  // summed time (GPU time with a GPU selected, host time without)
  int64 calls = 0;
};

namespace internal {

// Events in one thread's pool for one device (two per op in flight).
constexpr int kDefaultProfileEventPool = 4096;

// True when Cu ops profile themselves (verbose level >= 1). One relaxed load of a global.
inline bool ProfilingOn() { return GetVerboseLevel() >= 1; }

// Where a started measurement began: a start event of the calling thread's pool for `device`
// (GPU), or a host time (no GPU: device < 0). Filled by BeginProfileMark.
struct ProfileMark {
  int device;
  int slot;
  double host_start;
};

// Starts a measurement on the calling thread: with a GPU selected, takes an event from the
// thread's pool for the current device and records it on the thread's stream; otherwise reads the
// host clock. Returns false, recording nothing, while the thread captures a CUDA graph or when
// CUDA refuses the event (a sticky error of an earlier launch; the op itself reports it). Never
// throws. A mark that was started must be given to ReleaseProfileMark exactly once.
bool BeginProfileMark(ProfileMark* mark) noexcept;

// Records one call of `name` from `mark` to now: with a GPU, records an end event and queues the
// pair (asynchronous; the time is resolved later); without, adds the host time. Nothing while the
// thread captures. `name` must live as long as the process (a string literal) unless `copy_name`
// is true, in which case it is copied once into a process-wide table. Never throws. May be called
// several times for one mark (CuDevice::AccuProfile with one CuTimer).
void QueueProfileMark(const char* name, bool copy_name, const ProfileMark& mark) noexcept;

// Gives back the mark's start event (no-op for a host mark). Never throws.
void ReleaseProfileMark(ProfileMark* mark) noexcept;

// Resolves every thread's pending measurements (waiting for the GPU) and returns the totals by op
// name. Inside a graph capture, returns the totals resolved so far without calling CUDA.
std::map<std::string, CuProfileEntry> CollectProfile();

// Sets the number of events per thread and device after which pending pairs are resolved
// (tests use a small pool to exercise that path); returns the previous limit. Values < 4 are
// taken as 4.
int SetProfileEventPoolLimit(int events);

// The profiling scope of one Cu op; see the file comment. Construct it as the first statement of
// the op with a string literal. Must be destroyed on the thread that created it (it is a local).
class CuOpScope {
 public:
  explicit CuOpScope(const char* name) {
    if (ProfilingOn()) Begin(name);
  }
  ~CuOpScope() {
    if (active_) End();
  }
  CuOpScope(const CuOpScope&) = delete;
  CuOpScope& operator=(const CuOpScope&) = delete;

 private:
  // Out of line, so that the inline part is only the two tests.
  void Begin(const char* name) noexcept;
  void End() noexcept;

  bool active_ = false;
  // Set only by Begin (left unset, so the profiling-off path writes nothing else).
  const char* name_;
  ProfileMark mark_;
};

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_PROFILE_H_
