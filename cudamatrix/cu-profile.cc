// cudamatrix/cu-profile.cc: event pools, pending measurements and the process-wide op totals.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-profile.h"

#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/internal/cu-capture-gate.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#if CUCTX_HAVE_CUDA
#include <cuda_runtime.h>

#include <nvtx3/nvToolsExt.h>
#endif

namespace cuctx {
namespace internal {
namespace {

double HostSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Totals of one thread not yet folded into the registry, keyed by the name's address (the names
// are literals or interned copies, so equal addresses mean equal names; equal names at different
// addresses meet again when folded).
using LocalTotals = std::unordered_map<const char*, CuProfileEntry>;

void AddCall(const char* name, double seconds, LocalTotals* totals) {
  CuProfileEntry& entry = (*totals)[name];
  entry.seconds += seconds;
  entry.calls += 1;
}

#if CUCTX_HAVE_CUDA
// One measured op waiting for its end event.
struct PendingPair {
  const char* name;
  int start;
  int end;
};

// One thread's events on one device. An event is referenced by the mark that recorded it and by
// every pending pair that uses it; it goes back to `free_slots` when the last one lets go.
struct DeviceEvents {
  explicit DeviceEvents(int dev) : device(dev) {}
  int device;
  std::vector<cudaEvent_t> events;
  std::vector<int> refs;
  std::vector<int> free_slots;
  std::deque<PendingPair> pending;  // oldest first: the order of their end events on the stream
};

void Unref(DeviceEvents* d, int slot) {
  if (--d->refs[slot] == 0) d->free_slots.push_back(slot);
}

// True if `status` is cudaSuccess. Otherwise the failure of a profiling call must not surface as
// the failure of the next kernel (the launch checks read cudaGetLastError()), so it is cleared;
// a sticky error (a faulted context) is reported again by the next CUDA call anyway.
bool Succeeded(cudaError_t status) {
  if (status == cudaSuccess) return true;
  if (cudaPeekAtLastError() == status) (void)cudaGetLastError();
  return false;
}

// Resolves pending pairs oldest first. With `wait`, first waits for the newest end event, so all
// of them resolve; otherwise stops at the first pair whose end event has not completed
// (cudaEventQuery's "not ready" is an answer, not a failure). A pair CUDA cannot time (a faulted
// context, an unloading runtime) is dropped uncounted. Returns false if CUDA failed while waiting
// (all pairs are then dropped).
bool Resolve(DeviceEvents* d, bool wait, LocalTotals* totals) {
  if (d->pending.empty()) return true;
  const bool ok = !wait || Succeeded(cudaEventSynchronize(d->events[d->pending.back().end]));
  while (!d->pending.empty()) {
    const PendingPair p = d->pending.front();
    if (ok && !wait) {
      cudaError_t e = cudaEventQuery(d->events[p.end]);
      if (e == cudaErrorNotReady) {
        Succeeded(e);
        break;
      }
    }
    float ms = 0.0f;
    if (ok && Succeeded(cudaEventElapsedTime(&ms, d->events[p.start], d->events[p.end])))
      AddCall(p.name, ms * 1e-3, totals);
    d->pending.pop_front();
    Unref(d, p.start);
    Unref(d, p.end);
  }
  return ok;
}
#endif

struct ThreadProfile;

// Shared by all threads; leaked on purpose (no CUDA call from a static destructor).
struct ProfileRegistry {
  std::mutex mutex;
  std::vector<ThreadProfile*> threads;  // every thread that has profiled and not yet exited
  std::map<std::string, CuProfileEntry> totals;
  std::unordered_set<std::string> names;  // names copied for QueueProfileMark(copy_name = true)
  std::atomic<int> pool_limit{kDefaultProfileEventPool};
};

ProfileRegistry& GetProfileRegistry() {
  static ProfileRegistry* registry = new ProfileRegistry;
  return *registry;
}

void FoldLocked(LocalTotals* local, ProfileRegistry* r) {
  for (const auto& item : *local) {
    CuProfileEntry& entry = r->totals[item.first];
    entry.seconds += item.second.seconds;
    entry.calls += item.second.calls;
  }
  local->clear();
}

// The calling thread's profiling state. `mutex` guards everything but `nvtx_names` (owner only):
// the owner takes it around each record, PrintProfile from another thread to resolve and fold.
// Lock order: the registry's mutex first.
struct ThreadProfile {
  ThreadProfile() {
    ProfileRegistry& r = GetProfileRegistry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.threads.push_back(this);
  }
  ~ThreadProfile();

  // Folds everything into the registry; waits for the GPU unless the thread captures a graph
  // (CUDA forbids the wait then; the pending pairs are left for later). Caller holds both mutexes.
  void ResolveAllLocked(bool capturing, ProfileRegistry* r) {
#if CUCTX_HAVE_CUDA
    if (!capturing)
      for (auto& d : devices)
        if (d) Resolve(d.get(), /*wait=*/true, &totals);
#else
    (void)capturing;
#endif
    FoldLocked(&totals, r);
  }

  std::mutex mutex;
  LocalTotals totals;
#if CUCTX_HAVE_CUDA
  std::vector<std::unique_ptr<DeviceEvents>> devices;  // indexed by device id
  std::unordered_map<const char*, nvtxStringHandle_t> nvtx_names;
#endif
};

// Set when the thread's ThreadProfile is destroyed, so that an op run later by another
// thread_local's destructor records nothing instead of touching a dead object.
thread_local bool t_profile_gone = false;

ThreadProfile* ThisThreadProfile() {
  if (t_profile_gone) return nullptr;
  thread_local ThreadProfile state;
  return &state;
}

ThreadProfile::~ThreadProfile() {
  t_profile_gone = true;
  ProfileRegistry& r = GetProfileRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.threads.erase(std::find(r.threads.begin(), r.threads.end(), this));
  std::lock_guard<std::mutex> own(mutex);
#if CUCTX_HAVE_CUDA
  // A thread exits with its work queued: wait for it so that no record is lost. If the runtime is
  // already going away (a thread outliving main), CUDA answers with an error and the pairs are
  // dropped; events are then not destroyed either (the driver reclaims them with the context).
  const bool capturing = internal::ThreadCapturesAnyGraph();
  for (auto& d : devices) {
    if (!d) continue;
    bool ok = !capturing && Resolve(d.get(), /*wait=*/true, &totals);
    if (!ok) continue;
    for (cudaEvent_t e : d->events) Succeeded(cudaEventDestroy(e));
  }
#endif
  FoldLocked(&totals, &r);
}

#if CUCTX_HAVE_CUDA
nvtxDomainHandle_t NvtxDomain() {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("cuctx");
  return domain;
}

// Opens an NVTX range named `name`; the string is registered once per thread and name.
void PushNvtx(ThreadProfile* t, const char* name) {
  nvtxDomainHandle_t domain = NvtxDomain();
  auto it = t->nvtx_names.find(name);
  if (it == t->nvtx_names.end())
    it = t->nvtx_names.emplace(name, nvtxDomainRegisterStringA(domain, name)).first;
  nvtxEventAttributes_t attributes = {};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = it->second;
  nvtxDomainRangePushEx(domain, &attributes);
}

DeviceEvents* EventsFor(ThreadProfile* t, int device) {
  if (static_cast<size_t>(device) >= t->devices.size()) t->devices.resize(device + 1);
  if (!t->devices[device]) t->devices[device] = std::make_unique<DeviceEvents>(device);
  return t->devices[device].get();
}

// A free event of `d`, with one reference. When every event is in use, the pairs whose end events
// have completed are resolved first (usually the oldest ones have: the GPU keeps up), so that the
// pool stays small and events are reused; if none has, a new event is created while the pool is
// below its limit, and at the limit the thread waits for the oldest pair. Returns -1 if CUDA
// refuses. Caller holds the mutex.
int AcquireEvent(ThreadProfile* t, DeviceEvents* d) {
  if (d->free_slots.empty() && !d->pending.empty()) {
    Resolve(d, /*wait=*/false, &t->totals);
    const size_t limit = static_cast<size_t>(GetProfileRegistry().pool_limit.load());
    if (d->free_slots.empty() && d->events.size() >= limit) {
      Succeeded(cudaEventSynchronize(d->events[d->pending.front().end]));
      Resolve(d, /*wait=*/false, &t->totals);
    }
  }
  if (d->free_slots.empty()) {
    // Below the limit, or every event is held by an open mark: grow. (The caller made sure that
    // d->device is the current device, to which the new event then belongs.)
    cudaEvent_t e = nullptr;
    if (!Succeeded(cudaEventCreateWithFlags(&e, cudaEventDefault))) return -1;
    d->events.push_back(e);
    d->refs.push_back(0);
    d->free_slots.push_back(static_cast<int>(d->events.size()) - 1);
  }
  const int slot = d->free_slots.back();
  d->free_slots.pop_back();
  d->refs[slot] = 1;
  return slot;
}

// An acquired event recorded on the thread's stream, or -1 (nothing held) if CUDA refuses.
int RecordEvent(ThreadProfile* t, DeviceEvents* d) {
  const int slot = AcquireEvent(t, d);
  if (slot < 0) return -1;
  if (!Succeeded(cudaEventRecord(d->events[slot], cudaStreamPerThread))) {
    Unref(d, slot);
    return -1;
  }
  return slot;
}
#endif

const char* CopiedName(const char* name) {
  ProfileRegistry& r = GetProfileRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.names.insert(name).first->c_str();
}

}  // namespace

bool BeginProfileMark(ProfileMark* mark) noexcept {
  mark->device = -1;
  mark->slot = -1;
  mark->host_start = 0.0;
  if (internal::ThreadCapturesAnyGraph()) return false;
  try {
    ThreadProfile* t = ThisThreadProfile();
    if (t == nullptr) return false;
#if CUCTX_HAVE_CUDA
    // The events go to the current device, the one whose per-thread stream the op's work uses.
    if (internal::ThreadDevice() >= 0) {  // CuDevice::Enabled(), without the layer above
      int device = -1;
      if (!Succeeded(cudaGetDevice(&device))) return false;
      std::lock_guard<std::mutex> lock(t->mutex);
      const int slot = RecordEvent(t, EventsFor(t, device));
      if (slot < 0) return false;
      mark->device = device;
      mark->slot = slot;
      return true;
    }
#endif
    mark->host_start = HostSeconds();
    return true;
  } catch (...) {
    return false;  // out of host memory: the op runs unprofiled
  }
}

void QueueProfileMark(const char* name, bool copy_name, const ProfileMark& mark) noexcept {
  if (internal::ThreadCapturesAnyGraph()) return;
  try {
    ThreadProfile* t = ThisThreadProfile();
    if (t == nullptr) return;
    const double end = mark.device < 0 ? HostSeconds() : 0.0;
    if (copy_name) name = CopiedName(name);
    std::lock_guard<std::mutex> lock(t->mutex);
#if CUCTX_HAVE_CUDA
    if (mark.device >= 0) {
      DeviceEvents* d = EventsFor(t, mark.device);
      const int slot = RecordEvent(t, d);
      if (slot < 0) return;
      d->refs[mark.slot] += 1;
      d->pending.push_back(PendingPair{name, mark.slot, slot});
      return;
    }
#endif
    AddCall(name, end - mark.host_start, &t->totals);
  } catch (...) {
    // out of host memory: this call goes unrecorded
  }
}

void ReleaseProfileMark(ProfileMark* mark) noexcept {
#if CUCTX_HAVE_CUDA
  if (mark->device < 0 || mark->slot < 0) return;
  ThreadProfile* t = ThisThreadProfile();
  if (t == nullptr) return;
  std::lock_guard<std::mutex> lock(t->mutex);
  Unref(t->devices[mark->device].get(), mark->slot);
  mark->slot = -1;
#else
  (void)mark;
#endif
}

std::map<std::string, CuProfileEntry> CollectProfile() {
  const bool capturing = internal::ThreadCapturesAnyGraph();
  ProfileRegistry& r = GetProfileRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (ThreadProfile* t : r.threads) {
    std::lock_guard<std::mutex> own(t->mutex);
    t->ResolveAllLocked(capturing, &r);
  }
  return r.totals;
}

int SetProfileEventPoolLimit(int events) {
  return GetProfileRegistry().pool_limit.exchange(std::max(events, 4));
}

void CuOpScope::Begin(const char* name) noexcept {
  name_ = name;
  active_ = BeginProfileMark(&mark_);
#if CUCTX_HAVE_CUDA
  if (active_) {
    try {
      PushNvtx(ThisThreadProfile(), name);
    } catch (...) {
      ReleaseProfileMark(&mark_);
      active_ = false;
    }
  }
#endif
}

void CuOpScope::End() noexcept {
  QueueProfileMark(name_, /*copy_name=*/false, mark_);
  ReleaseProfileMark(&mark_);
#if CUCTX_HAVE_CUDA
  nvtxDomainRangePop(NvtxDomain());
#endif
}

}  // namespace internal
}  // namespace cuctx
