// cudamatrix/cu-pinned.cc: the caching page-locked host allocator and PinnedBuffer.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-pinned.h"

#include "base/error.h"
#include "base/options-itf.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-fault-injection.h"
#include "cudamatrix/cu-memory-snapshot.h"
#include "cudamatrix/cu-thread-state.h"
#include "cudamatrix/internal/cu-capture-gate.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <iomanip>
#include <map>
#include <mutex>
#include <sstream>
#include <sys/mman.h>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-device-scope.h"

#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

constexpr size_t kPageBytes = size_t{4} << 10;
constexpr size_t kHugeBytes = size_t{2} << 20;
// Blocks this large get their pages pre-faulted by several threads (register backend); below it
// the cost of starting threads exceeds the faults saved.
constexpr size_t kParallelPrefaultBytes = size_t{8} << 20;
constexpr int kMaxPrefaultThreads = 256;

// Set once exit() has begun (an atexit handler installed with the first process-wide allocator).
// From then on blocks are neither recorded nor released: the CUDA runtime may be tearing down.
std::atomic<bool> g_exiting{false};
void MarkExiting() { g_exiting.store(true); }

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string Mib(int64 bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return out.str();
}

// Where a block's memory came from; decides how it is given back.
enum class BlockKind { kOrdinary, kHostAlloc, kRegistered };

struct Block {
  void* ptr = nullptr;
  size_t size = 0;       // the size class
  size_t requested = 0;  // what the current owner asked for (while in use)
  BlockKind kind = BlockKind::kOrdinary;
  bool in_flight = false;  // an event was recorded at the last Free and has not been seen done
#if CUCTX_HAVE_CUDA
  cudaEvent_t event = nullptr;
#endif
};

#if CUCTX_HAVE_CUDA
// Writes one byte per page so that the kernel maps every page now, splitting large ranges over
// several threads (page faults on different pages scale across cores).
void Prefault(char* begin, size_t bytes, int max_threads) {
  auto touch = [](char* from, char* to) {
    for (volatile char* p = from; p < to; p += kPageBytes) *p = 0;
  };
  size_t threads = std::min<size_t>(std::max(max_threads, 1), bytes / kParallelPrefaultBytes);
  if (threads <= 1) {
    touch(begin, begin + bytes);
    return;
  }
  size_t slice = (bytes / threads + kPageBytes - 1) / kPageBytes * kPageBytes;
  std::vector<std::thread> workers;
  size_t done = slice;  // this thread takes the first slice
  try {
    for (size_t t = 1; t < threads && done < bytes; ++t) {
      size_t len = std::min(slice, bytes - done);
      workers.emplace_back(touch, begin + done, begin + done + len);
      done += len;
    }
  } catch (const std::system_error&) {
    // Could not start another thread: the remaining pages are touched here instead.
  }
  touch(begin, begin + std::min(slice, bytes));
  touch(begin + done, begin + bytes);
  for (std::thread& w : workers) w.join();
}
#endif  // CUCTX_HAVE_CUDA

// Process-wide allocators by device id (-1 is the fallback). Leaked on purpose (see header).
struct AllocatorRegistry {
  static constexpr int kFastSlots = 64;  // ids -1..62 are found without the mutex
  std::mutex mutex;
  PinnedAllocatorOptions defaults;
  std::map<int, PinnedHostAllocator*> allocators;
  std::array<std::atomic<PinnedHostAllocator*>, kFastSlots> fast{};
};

AllocatorRegistry& GetAllocatorRegistry() {
  static AllocatorRegistry* registry = new AllocatorRegistry;
  return *registry;
}

void CheckDeviceId(int device_id) {
  CUCTX_CHECK(device_id >= -1) << "pinned allocator: device id " << device_id
                               << " (use -1 for the no-GPU fallback)";
#if CUCTX_HAVE_CUDA
  if (device_id >= 0) {
    int count = 0;
    CUCTX_CUDA_CHECK(cudaGetDeviceCount(&count));
    CUCTX_CHECK(device_id < count) << "pinned allocator: device " << device_id
                                   << " does not exist (" << count << " CUDA device(s))";
  }
#else
  CUCTX_CHECK(device_id < 0) << "pinned allocator for device " << device_id
                             << ": cuctx was built without CUDA";
#endif
}

}  // namespace

// ---- options and statistics
// ----------------------------------------------------------------------

void PinnedAllocatorOptions::Register(OptionsItf* opts) {
  CUCTX_CHECK(opts != nullptr) << "PinnedAllocatorOptions::Register: null OptionsItf";
  opts->Register("cuda-pinned-backend", &backend,
                 "How page-locked host memory is made: 'alloc' (cudaHostAlloc) or 'register' "
                 "(malloc, parallel page pre-fault, cudaHostRegister)");
  opts->Register("cuda-pinned-cache-limit-mb", &cache_limit_mb,
                 "Most freed page-locked host memory kept for reuse, in MiB (0: keep none)");
  opts->Register("cuda-pinned-prefault-threads", &prefault_threads,
                 "Threads that pre-fault a large new block with --cuda-pinned-backend=register");
}

PinnedBackend PinnedAllocatorOptions::Backend() const {
  if (backend == "alloc") return PinnedBackend::kHostAlloc;
  if (backend == "register") return PinnedBackend::kRegister;
  CUCTX_ERR << "--cuda-pinned-backend must be 'alloc' or 'register'; got '" << backend << "'";
}

void PinnedAllocatorOptions::Check() const {
  Backend();
  CUCTX_CHECK(cache_limit_mb >= 0)
      << "--cuda-pinned-cache-limit-mb must be >= 0; got " << cache_limit_mb;
  CUCTX_CHECK(prefault_threads >= 1 && prefault_threads <= kMaxPrefaultThreads)
      << "--cuda-pinned-prefault-threads must be in [1, " << kMaxPrefaultThreads << "]; got "
      << prefault_threads;
}

std::string PinnedAllocatorStats::ToString() const {
  std::ostringstream out;
  out << "pinned host allocator (device " << device_id << ", "
      << (page_locked ? "page-locked" : "ordinary memory") << "): held " << Mib(bytes_held)
      << ", in use " << Mib(bytes_in_use) << " (requested " << Mib(bytes_requested) << "), cached "
      << Mib(bytes_cached) << ", peak in use " << Mib(peak_bytes_in_use) << ", peak held "
      << Mib(peak_bytes_held) << "; allocations " << num_allocations << " (from cache "
      << num_from_cache << ", new " << num_new_blocks << "), frees " << num_frees << ", released "
      << num_released << ", not-ready skips " << num_not_ready << ", OOM retries "
      << num_oom_retries << "; seconds allocating " << seconds_allocating << " (pre-faulting "
      << seconds_prefaulting << "), releasing " << seconds_releasing;
  return out.str();
}

// ---- the allocator
// -------------------------------------------------------------------------------

struct PinnedHostAllocator::Impl {
  int device_id = -1;
  mutable std::mutex mutex;
  PinnedAllocatorOptions options;
  PinnedBackend backend = PinnedBackend::kHostAlloc;
  std::unordered_map<const void*, Block*> in_use;
  std::map<size_t, std::deque<Block*>> cached;  // by size; each deque oldest free first
  PinnedAllocatorStats stats;

  bool PageLocked() const { return device_id >= 0; }
  // True if the block's last recorded event has completed (never blocks).
  bool ReadyLocked(Block* b);
  // A completed cached block whose size is in [size, 2 * size], or nullptr.
  Block* TakeCachedLocked(size_t size);
  // Removes completed cached blocks, largest first, while the cache exceeds its limit.
  void CollectOverLimitLocked(std::vector<Block*>* out);
  void AddInUseLocked(Block* b, size_t requested);
  void RecordFreeLocked(Block* b);
  // Makes a block; nullptr when the system is out of memory; throws on other failures.
  Block* NewBlock(size_t size, PinnedBackend how, int prefault_threads);
  // Gives a block back to the system; never throws. With `wait`, first waits for its event.
  void ReleaseBlock(Block* b, bool wait);
  void ReleaseBlocks(const std::vector<Block*>& blocks, bool wait);
};

bool PinnedHostAllocator::Impl::ReadyLocked(Block* b) {
  if (!b->in_flight) return true;
#if CUCTX_HAVE_CUDA
  if (FaultInjector::ShouldFail(FaultSite::kEvent))
    FaultInjector::Throw(FaultSite::kEvent, "cudaEventQuery(block event)");
  cudaError_t e = cudaEventQuery(b->event);
  if (e == cudaSuccess) {
    b->in_flight = false;
    return true;
  }
  if (e == cudaErrorNotReady) {
    // "Not ready" is an answer, not a failure; clear it so that a later cudaGetLastError() (the
    // launch checks) does not report it as the failure of an unrelated kernel.
    (void)cudaGetLastError();
    return false;
  }
  internal::ThrowStatus(internal::kCudaLib, static_cast<int>(e), "cudaEventQuery(block event)",
                        __func__, __FILE__, __LINE__);
#else
  return true;
#endif
}

Block* PinnedHostAllocator::Impl::TakeCachedLocked(size_t size) {
  for (auto it = cached.lower_bound(size); it != cached.end() && it->first <= 2 * size; ++it) {
    std::deque<Block*>& blocks = it->second;
    for (auto b = blocks.begin(); b != blocks.end(); ++b) {
      if (!ReadyLocked(*b)) {
        ++stats.num_not_ready;
        continue;
      }
      Block* found = *b;
      blocks.erase(b);
      if (blocks.empty()) cached.erase(it);
      stats.bytes_cached -= static_cast<int64>(found->size);
      return found;
    }
  }
  return nullptr;
}

void PinnedHostAllocator::Impl::CollectOverLimitLocked(std::vector<Block*>* out) {
  const int64 limit = static_cast<int64>(options.cache_limit_mb) << 20;
  for (auto it = cached.end(); it != cached.begin() && stats.bytes_cached > limit;) {
    --it;
    std::deque<Block*>& blocks = it->second;
    for (auto b = blocks.begin(); b != blocks.end() && stats.bytes_cached > limit;) {
      if (!ReadyLocked(*b)) {
        ++b;
        continue;
      }
      out->push_back(*b);
      stats.bytes_cached -= static_cast<int64>((*b)->size);
      stats.bytes_held -= static_cast<int64>((*b)->size);
      ++stats.num_released;
      b = blocks.erase(b);
    }
    if (blocks.empty()) it = cached.erase(it);
  }
}

void PinnedHostAllocator::Impl::AddInUseLocked(Block* b, size_t requested) {
  b->requested = requested;
  in_use.emplace(b->ptr, b);
  stats.bytes_in_use += static_cast<int64>(b->size);
  stats.bytes_requested += static_cast<int64>(requested);
  stats.peak_bytes_in_use = std::max(stats.peak_bytes_in_use, stats.bytes_in_use);
  stats.peak_bytes_held = std::max(stats.peak_bytes_held, stats.bytes_held);
}

void PinnedHostAllocator::Impl::RecordFreeLocked(Block* b) {
#if CUCTX_HAVE_CUDA
  if (!PageLocked()) return;
  internal::DeviceScope device(device_id);
  CUCTX_CUDA_CHECK(device.Status());
  if (FaultInjector::ShouldFail(FaultSite::kEvent))
    FaultInjector::Throw(FaultSite::kEvent, "cudaEventRecord(b->event, cudaStreamPerThread)");
  if (b->event == nullptr)
    CUCTX_CUDA_CHECK(cudaEventCreateWithFlags(&b->event, cudaEventDisableTiming));
  CUCTX_CUDA_CHECK(cudaEventRecord(b->event, cudaStreamPerThread));
  b->in_flight = true;
#else
  (void)b;
#endif
}

Block* PinnedHostAllocator::Impl::NewBlock(size_t size, PinnedBackend how, int prefault_threads) {
  const size_t alignment = size >= kHugeBytes ? kHugeBytes : kPageBytes;
  auto start = std::chrono::steady_clock::now();
  double prefault_seconds = 0.0;
  void* ptr = nullptr;
  BlockKind kind = BlockKind::kOrdinary;
  // An injected failure is the system being out of memory (cu-fault-injection.h).
  if (FaultInjector::ShouldFail(FaultSite::kPinned)) return nullptr;
  if (!PageLocked()) {
    ptr = std::aligned_alloc(alignment, size);
    if (ptr == nullptr) return nullptr;
  } else {
#if CUCTX_HAVE_CUDA
    internal::DeviceScope device(device_id);
    CUCTX_CUDA_CHECK(device.Status());
    if (how == PinnedBackend::kHostAlloc) {
      kind = BlockKind::kHostAlloc;
      cudaError_t e = cudaHostAlloc(&ptr, size, cudaHostAllocPortable);
      if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return nullptr;
      }
      if (e != cudaSuccess)
        internal::ThrowStatus(internal::kCudaLib, static_cast<int>(e),
                              "cudaHostAlloc(&ptr, size, cudaHostAllocPortable)", __func__,
                              __FILE__, __LINE__);
    } else {
      kind = BlockKind::kRegistered;
      ptr = std::aligned_alloc(alignment, size);
      if (ptr == nullptr) return nullptr;
#ifdef MADV_HUGEPAGE
      // Only a hint: without transparent huge pages the call fails and nothing changes.
      if (size >= kHugeBytes) (void)madvise(ptr, size, MADV_HUGEPAGE);
#endif
      auto prefault_start = std::chrono::steady_clock::now();
      Prefault(static_cast<char*>(ptr), size, prefault_threads);
      prefault_seconds = SecondsSince(prefault_start);
      cudaError_t e = cudaHostRegister(ptr, size, cudaHostRegisterPortable);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();
        std::free(ptr);
        if (e == cudaErrorMemoryAllocation) return nullptr;
        internal::ThrowStatus(internal::kCudaLib, static_cast<int>(e),
                              "cudaHostRegister(ptr, size, cudaHostRegisterPortable)", __func__,
                              __FILE__, __LINE__);
      }
    }
#else
    (void)how;
    (void)prefault_threads;
#endif
  }
  Block* b = new Block;
  b->ptr = ptr;
  b->size = size;
  b->kind = kind;
  double seconds = SecondsSince(start);
  std::lock_guard<std::mutex> lock(mutex);
  stats.seconds_allocating += seconds;
  stats.seconds_prefaulting += prefault_seconds;
  return b;
}

void PinnedHostAllocator::Impl::ReleaseBlock(Block* b, bool wait) {
#if CUCTX_HAVE_CUDA
  if (b->kind != BlockKind::kOrdinary || b->event != nullptr) {
    internal::DeviceScope device(device_id);
    CUCTX_CUDA_CHECK_NOTHROW(device.Status());
    if (b->event != nullptr) {
      if (b->in_flight && wait) CUCTX_CUDA_CHECK_NOTHROW(cudaEventSynchronize(b->event));
      CUCTX_CUDA_CHECK_NOTHROW(cudaEventDestroy(b->event));
    }
    if (b->kind == BlockKind::kHostAlloc) CUCTX_CUDA_CHECK_NOTHROW(cudaFreeHost(b->ptr));
    if (b->kind == BlockKind::kRegistered) CUCTX_CUDA_CHECK_NOTHROW(cudaHostUnregister(b->ptr));
  }
#else
  (void)wait;
#endif
  if (b->kind != BlockKind::kHostAlloc) std::free(b->ptr);
  delete b;
}

void PinnedHostAllocator::Impl::ReleaseBlocks(const std::vector<Block*>& blocks, bool wait) {
  if (blocks.empty()) return;
  auto start = std::chrono::steady_clock::now();
  auto release = [&] {
    for (Block* b : blocks) ReleaseBlock(b, wait);
  };
  // cudaFreeHost and cudaHostUnregister synchronize the device, which would break a CUDA-graph
  // capture running on another thread: wait until none runs (on a capturing thread itself the
  // blocks go at once, as before: it cannot wait for its own capture).
  if (internal::ThreadCapturing()) {
    release();
  } else {
    try {
      internal::OutsideAllCaptures(release);
    } catch (const std::exception& e) {
      CUCTX_WARN << "releasing page-locked memory: " << e.what();
    }
  }
  double seconds = SecondsSince(start);
  std::lock_guard<std::mutex> lock(mutex);
  stats.seconds_releasing += seconds;
}

size_t PinnedHostAllocator::RoundUpSize(size_t bytes) {
  if (bytes == 0) return 0;
  CUCTX_CHECK(bytes <= SIZE_MAX / 2 - kHugeBytes)
      << "pinned allocation of " << bytes << " bytes is too large";
  if (bytes <= kPageBytes) return kPageBytes;
  if (bytes <= kHugeBytes) {
    size_t size = kPageBytes;
    while (size < bytes) size *= 2;
    return size;
  }
  return (bytes + kHugeBytes - 1) / kHugeBytes * kHugeBytes;
}

PinnedHostAllocator::PinnedHostAllocator(int device_id, const PinnedAllocatorOptions& opts)
    : impl_(new Impl) {
  CheckDeviceId(device_id);
  opts.Check();
  impl_->device_id = device_id;
  impl_->options = opts;
  impl_->backend = opts.Backend();
  impl_->stats.device_id = device_id;
  impl_->stats.page_locked = impl_->PageLocked();
}

PinnedHostAllocator::~PinnedHostAllocator() {
  if (g_exiting.load()) return;  // the runtime may be going away: leave everything to the OS
  std::vector<Block*> blocks;
  size_t live = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    for (auto& entry : impl_->cached)
      for (Block* b : entry.second) blocks.push_back(b);
    impl_->cached.clear();
    live = impl_->in_use.size();
  }
  impl_->ReleaseBlocks(blocks, /*wait=*/true);
  if (live > 0)
    CUCTX_WARN << "pinned allocator for device " << impl_->device_id << " destroyed with " << live
               << " block(s) still in use; leaking them";
}

PinnedHostAllocator& PinnedHostAllocator::ForDevice(int device_id) {
  AllocatorRegistry& r = GetAllocatorRegistry();
  const int slot = device_id + 1;
  if (slot >= 0 && slot < AllocatorRegistry::kFastSlots) {
    PinnedHostAllocator* a = r.fast[slot].load(std::memory_order_acquire);
    if (a != nullptr) return *a;
  }
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.allocators.find(device_id);
  if (it != r.allocators.end()) return *it->second;
  static std::once_flag exit_hook;
  std::call_once(exit_hook, [] { std::atexit(MarkExiting); });
  PinnedHostAllocator* a = new PinnedHostAllocator(device_id, r.defaults);  // never deleted
  r.allocators.emplace(device_id, a);
  if (slot >= 0 && slot < AllocatorRegistry::kFastSlots)
    r.fast[slot].store(a, std::memory_order_release);
  return *a;
}

PinnedHostAllocator& PinnedHostAllocator::Get() {
  return ForDevice(CuDevice::Instantiate().DeviceId());
}

void PinnedHostAllocator::SetDefaultOptions(const PinnedAllocatorOptions& opts) {
  opts.Check();
  std::vector<PinnedHostAllocator*> existing;
  {
    AllocatorRegistry& r = GetAllocatorRegistry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.defaults = opts;
    for (auto& entry : r.allocators) existing.push_back(entry.second);
  }
  for (PinnedHostAllocator* a : existing) a->SetOptions(opts);
}

size_t PinnedHostAllocator::ReleaseAllCaches() {
  std::vector<PinnedHostAllocator*> existing;
  {
    AllocatorRegistry& r = GetAllocatorRegistry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto& entry : r.allocators) existing.push_back(entry.second);
  }
  size_t bytes = 0;
  for (PinnedHostAllocator* a : existing) bytes += a->ReleaseCache();
  return bytes;
}

PinnedAllocatorOptions PinnedHostAllocator::DefaultOptions() {
  AllocatorRegistry& r = GetAllocatorRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.defaults;
}

void* PinnedHostAllocator::Allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t size = RoundUpSize(bytes);
  PinnedBackend how;
  int prefault_threads;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    ++impl_->stats.num_allocations;
    if (Block* b = impl_->TakeCachedLocked(size)) {
      ++impl_->stats.num_from_cache;
      impl_->AddInUseLocked(b, bytes);
      return b->ptr;
    }
    how = impl_->backend;
    prefault_threads = impl_->options.prefault_threads;
  }
  Block* b = impl_->NewBlock(size, how, prefault_threads);
  if (b == nullptr) {
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      ++impl_->stats.num_oom_retries;
    }
    size_t released = ReleaseCache();
    b = impl_->NewBlock(size, how, prefault_threads);
    if (b == nullptr) {
      PinnedAllocatorStats s = Stats();
      std::ostringstream msg;
      msg << "out of " << (s.page_locked ? "page-locked" : "host") << " memory: could not allocate "
          << size << " bytes (request " << bytes << ") after releasing " << released
          << " cached bytes; allocator holds " << Mib(s.bytes_held) << ", in use "
          << Mib(s.bytes_in_use)
          << ". Free some PinnedBuffers or lower --cuda-pinned-cache-limit-mb";
      internal::EmitLog(LogMessageEnvelope{kLogError, __func__, __FILE__, __LINE__}, msg.str());
      throw OutOfMemoryError(internal::WithOrigin(msg.str(), __func__, __FILE__, __LINE__),
                             /*cudaErrorMemoryAllocation*/ 2);
    }
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  ++impl_->stats.num_new_blocks;
  impl_->stats.bytes_held += static_cast<int64>(size);
  impl_->AddInUseLocked(b, bytes);
  return b->ptr;
}

void PinnedHostAllocator::Free(void* ptr) {
  if (ptr == nullptr) return;
  std::vector<Block*> release;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    auto it = impl_->in_use.find(ptr);
    if (it == impl_->in_use.end())
      CUCTX_ERR << "PinnedHostAllocator::Free(" << ptr << "): not a live block of the pinned "
                << "allocator for device " << impl_->device_id
                << " (never allocated there, or freed twice)";
    Block* b = it->second;
    const bool exiting = g_exiting.load();
    if (!exiting) impl_->RecordFreeLocked(b);  // may throw; the block then stays in use
    impl_->in_use.erase(it);
    ++impl_->stats.num_frees;
    impl_->stats.bytes_in_use -= static_cast<int64>(b->size);
    impl_->stats.bytes_requested -= static_cast<int64>(b->requested);
    if (exiting) return;  // leaked: no CUDA call once exit() has begun
    impl_->cached[b->size].push_back(b);
    impl_->stats.bytes_cached += static_cast<int64>(b->size);
    impl_->CollectOverLimitLocked(&release);
  }
  impl_->ReleaseBlocks(release, /*wait=*/false);
}

void PinnedHostAllocator::AppendSnapshot(int snapshot_device, MemorySnapshot* snapshot) const {
  CUCTX_CHECK(snapshot != nullptr) << "AppendSnapshot needs a snapshot";
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto add = [&](const Block* b, bool in_use) {
    SnapshotSegment s;
    s.device = snapshot_device;
    s.address = reinterpret_cast<uintptr_t>(b->ptr);
    s.total_size = b->size;
    s.segment_type = "pinned";
    s.pool_id = -1;
    s.kind = "pinned_host";
    SnapshotBlock block;
    block.address = s.address;
    block.size = b->size;
    block.requested_size = in_use ? b->requested : b->size;
    block.state = in_use ? "active_allocated" : "inactive";
    s.blocks.push_back(std::move(block));
    snapshot->segments.push_back(std::move(s));
  };
  for (const auto& entry : impl_->in_use) add(entry.second, true);
  for (const auto& entry : impl_->cached)
    for (const Block* b : entry.second) add(b, false);
}

size_t PinnedHostAllocator::BlockSize(const void* ptr) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->in_use.find(ptr);
  if (it == impl_->in_use.end())
    CUCTX_ERR << "PinnedHostAllocator::BlockSize(" << ptr << "): not a live block of the pinned "
              << "allocator for device " << impl_->device_id;
  return it->second->size;
}

size_t PinnedHostAllocator::ReleaseCache() {
  std::vector<Block*> blocks;
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    for (auto& entry : impl_->cached) {
      for (Block* b : entry.second) {
        blocks.push_back(b);
        bytes += b->size;
      }
    }
    impl_->cached.clear();
    impl_->stats.bytes_cached = 0;
    impl_->stats.bytes_held -= static_cast<int64>(bytes);
    impl_->stats.num_released += static_cast<int64>(blocks.size());
  }
  impl_->ReleaseBlocks(blocks, /*wait=*/true);
  return bytes;
}

void PinnedHostAllocator::SetOptions(const PinnedAllocatorOptions& opts) {
  opts.Check();
  std::vector<Block*> release;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->options = opts;
    impl_->backend = opts.Backend();
    impl_->CollectOverLimitLocked(&release);
  }
  impl_->ReleaseBlocks(release, /*wait=*/false);
}

PinnedAllocatorOptions PinnedHostAllocator::Options() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->options;
}

PinnedAllocatorStats PinnedHostAllocator::Stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

void PinnedHostAllocator::ResetPeaks() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->stats.peak_bytes_in_use = impl_->stats.bytes_in_use;
  impl_->stats.peak_bytes_held = impl_->stats.bytes_held;
}

int PinnedHostAllocator::DeviceId() const { return impl_->device_id; }

bool PinnedHostAllocator::PageLocked() const { return impl_->PageLocked(); }

// ---- PinnedBuffer
// --------------------------------------------------------------------------------

PinnedBuffer::PinnedBuffer(size_t bytes) : PinnedBuffer(bytes, &PinnedHostAllocator::Get()) {}

PinnedBuffer::PinnedBuffer(size_t bytes, PinnedHostAllocator* allocator) {
  CUCTX_CHECK(allocator != nullptr) << "PinnedBuffer: null allocator";
  if (bytes == 0) return;
  data_ = allocator->Allocate(bytes);
  size_ = bytes;
  capacity_ = PinnedHostAllocator::RoundUpSize(bytes);
  allocator_ = allocator;
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ == nullptr) return;
  try {
    allocator_->Free(data_);
  } catch (const std::exception& e) {
    CUCTX_WARN << "PinnedBuffer: could not return " << size_ << " bytes: " << e.what();
  }
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept { Swap(&other); }

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    PinnedBuffer old(std::move(*this));  // returns our block when it goes out of scope
    Swap(&other);
  }
  return *this;
}

bool PinnedBuffer::PageLocked() const { return allocator_ != nullptr && allocator_->PageLocked(); }

void PinnedBuffer::Reset() {
  if (data_ == nullptr) return;
  allocator_->Free(data_);
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
  allocator_ = nullptr;
}

void PinnedBuffer::Swap(PinnedBuffer* other) noexcept {
  std::swap(data_, other->data_);
  std::swap(size_, other->size_);
  std::swap(capacity_, other->capacity_);
  std::swap(allocator_, other->allocator_);
}

}  // namespace cuctx
