// cutool/alloc-stress.cc: RunAllocStress (see alloc-stress.h).
// SPDX-License-Identifier: Apache-2.0
#include "cutool/alloc-stress.h"

#include "base/error.h"
#include "cudamatrix/cu-allocator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"

#include <cuda_runtime.h>
#endif

namespace cuctx {

namespace {

constexpr size_t kCheckBytes = 4096;  // checked at each end of a device block
constexpr size_t kMaxErrors = 8;

struct Live {
  unsigned char* ptr;
  size_t bytes;
  unsigned char fill;
};

// Live blocks of all threads by address, to catch a block handed out twice.
class Registry {
 public:
  bool Insert(const Live& b) {
    std::lock_guard<std::mutex> lock(mutex_);
    const uintptr_t begin = reinterpret_cast<uintptr_t>(b.ptr), end = begin + b.bytes;
    auto next = ranges_.lower_bound(begin);
    bool overlap = next != ranges_.end() && next->first < end;
    if (next != ranges_.begin()) overlap = overlap || std::prev(next)->second > begin;
    ranges_[begin] = end;
    return !overlap;
  }
  void Erase(const Live& b) {
    std::lock_guard<std::mutex> lock(mutex_);
    ranges_.erase(reinterpret_cast<uintptr_t>(b.ptr));
  }

 private:
  std::mutex mutex_;
  std::map<uintptr_t, uintptr_t> ranges_;
};

struct Shared {
  CuMemoryAllocator* allocator;
  const AllocStressOptions* options;
  Registry registry;
  std::vector<std::mutex> mailbox_mutex;
  std::vector<std::vector<Live>> mailbox;  // blocks handed to thread i
  std::mutex result_mutex;
  AllocStressResult result;
  std::chrono::steady_clock::time_point deadline;

  explicit Shared(int threads) : mailbox_mutex(threads), mailbox(threads) {}
  void Error(const std::string& what) {
    std::lock_guard<std::mutex> lock(result_mutex);
    if (result.errors.size() < kMaxErrors) result.errors.push_back(what);
  }
};

void Fill(const Live& b, bool device) {
#if CUCTX_HAVE_CUDA
  if (device) {
    CUCTX_CUDA_CHECK(cudaMemsetAsync(b.ptr, b.fill, b.bytes, cudaStreamPerThread));
    return;
  }
#endif
  (void)device;
  std::memset(b.ptr, b.fill, b.bytes);
}

bool Intact(const Live& b, bool device, std::vector<unsigned char>* host) {
#if CUCTX_HAVE_CUDA
  if (device) {
    const size_t n = std::min(b.bytes, kCheckBytes);
    host->resize(2 * n);
    CUCTX_CUDA_CHECK(
        cudaMemcpyAsync(host->data(), b.ptr, n, cudaMemcpyDeviceToHost, cudaStreamPerThread));
    CUCTX_CUDA_CHECK(cudaMemcpyAsync(host->data() + n, b.ptr + b.bytes - n, n,
                                     cudaMemcpyDeviceToHost, cudaStreamPerThread));
    CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    for (unsigned char c : *host)
      if (c != b.fill) return false;
    return true;
  }
#endif
  (void)device;
  (void)host;
  for (size_t i = 0; i < b.bytes; ++i)
    if (b.ptr[i] != b.fill) return false;
  return true;
}

void WaitForStream(bool device) {
#if CUCTX_HAVE_CUDA
  if (device) CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
#endif
  (void)device;
}

// Adds the wall time of `body` to `work`.
template <typename F>
void Timed(AllocStressResult::Work* work, F&& body) {
  const auto start = std::chrono::steady_clock::now();
  struct Done {
    AllocStressResult::Work* work;
    std::chrono::steady_clock::time_point start;
    ~Done() {
      ++work->count;
      work->seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  } done{work, start};
  body();
}

void Worker(Shared* sh, int t) {
  const AllocStressOptions& o = *sh->options;
  if (o.thread_init) o.thread_init();
  const bool device = o.device_memory;
  std::mt19937_64 rng(o.seed * 1000003u + static_cast<uint64>(t));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  AllocStressResult r;
  std::vector<Live> live;
  std::vector<unsigned char> host;
  unsigned char next_fill = static_cast<unsigned char>(16 * (t % 15) + 1);
  auto free_block = [&](const Live& b, bool check) {
    bool intact = true;
    if (check) Timed(&r.check_work, [&] { intact = Intact(b, device, &host); });
    if (!intact) {
      ++r.corruptions;
      sh->Error("thread " + std::to_string(t) + ": block of " + std::to_string(b.bytes) +
                " bytes lost its pattern");
    }
    sh->registry.Erase(b);
    Timed(&r.free_work, [&] { sh->allocator->Free(b.ptr); });
    ++r.frees;
  };
  for (int64 step = 0;; ++step) {
    if (o.seconds > 0 ? std::chrono::steady_clock::now() >= sh->deadline
                      : step >= o.steps_per_thread)
      break;
    // Blocks other threads handed over: check and free them here.
    std::vector<Live> mail;
    {
      std::lock_guard<std::mutex> lock(sh->mailbox_mutex[t]);
      mail.swap(sh->mailbox[t]);
    }
    for (const Live& b : mail) {
      free_block(b, true);
      ++r.cross_thread_frees;
    }
    const double u = unit(rng);
    if (live.empty() || (u < 0.55 && static_cast<int>(live.size()) < o.max_live_per_thread)) {
      const size_t cap = unit(rng) < 0.7 ? std::min<size_t>(o.max_bytes, 4096) : o.max_bytes;
      const size_t bytes = 1 + static_cast<size_t>(rng() % cap);
      try {
        void* p = nullptr;
        Timed(&r.malloc_work, [&] { p = sh->allocator->Malloc(bytes); });
        Live b{static_cast<unsigned char*>(p), bytes, next_fill};
        next_fill = static_cast<unsigned char>(next_fill % 254 + 1);
        ++r.mallocs;
        r.bytes_allocated += static_cast<int64>(bytes);
        if (!sh->registry.Insert(b)) {
          ++r.double_handouts;
          sh->Error("thread " + std::to_string(t) + ": Malloc(" + std::to_string(bytes) +
                    ") returned memory that overlaps a live block");
        }
        Timed(&r.fill_work, [&] { Fill(b, device); });
        live.push_back(b);
      } catch (const OutOfMemoryError&) {
        ++r.malloc_failures;
        ++r.oom_errors;
      } catch (const CudaError&) {
        ++r.malloc_failures;
      }
    } else {
      const size_t i = static_cast<size_t>(rng() % live.size());
      const Live b = live[i];
      live[i] = live.back();
      live.pop_back();
      const double v = unit(rng);
      if (v < o.cross_thread_fraction && o.threads > 1) {
        // The next thread's stream does not wait for this one.
        Timed(&r.handoff_work, [&] { WaitForStream(device); });
        const int to = (t + 1) % o.threads;
        std::lock_guard<std::mutex> lock(sh->mailbox_mutex[to]);
        sh->mailbox[to].push_back(b);
      } else if (v < o.cross_thread_fraction + o.free_unchecked_fraction) {
        // Overwrite and free without waiting: a block handed out before this write lands would
        // lose its next owner's pattern.
        Live garbage = b;
        garbage.fill = 0xEE;
        Timed(&r.fill_work, [&] { Fill(garbage, device); });
        free_block(b, false);
      } else {
        free_block(b, true);
      }
    }
    try {
      auto every = [step](int64 n) { return n > 0 && step % n == n - 1; };
      if (every(o.sync_every)) Timed(&r.sync_work, [&] { sh->allocator->SynchronizeGpu(); });
      if (every(o.drained_every)) {
        Timed(&r.drain_work, [&] {
          WaitForStream(device);
          sh->allocator->NoteThreadStreamSynchronized();
        });
      }
      if (every(o.release_every))
        Timed(&r.release_work, [&] { sh->allocator->ReleaseCachedMemory(); });
    } catch (const CudaError&) {
      ++r.other_failures;
    }
    if (o.hook && o.hook_every > 0 && step % o.hook_every == o.hook_every - 1) {
      ++r.hook_calls;
      try {
        Timed(&r.hook_work, [&] { o.hook(t, &rng); });
      } catch (const std::exception& e) {
        ++r.hook_errors;
        sh->Error("thread " + std::to_string(t) + " hook: " + e.what());
      }
    }
  }
  for (const Live& b : live) free_block(b, true);
  std::lock_guard<std::mutex> lock(sh->result_mutex);
  AllocStressResult& s = sh->result;
  s.mallocs += r.mallocs;
  s.frees += r.frees;
  s.cross_thread_frees += r.cross_thread_frees;
  s.bytes_allocated += r.bytes_allocated;
  s.malloc_failures += r.malloc_failures;
  s.oom_errors += r.oom_errors;
  s.other_failures += r.other_failures;
  s.corruptions += r.corruptions;
  s.double_handouts += r.double_handouts;
  s.hook_calls += r.hook_calls;
  s.hook_errors += r.hook_errors;
  s.malloc_work.Add(r.malloc_work);
  s.free_work.Add(r.free_work);
  s.fill_work.Add(r.fill_work);
  s.check_work.Add(r.check_work);
  s.handoff_work.Add(r.handoff_work);
  s.sync_work.Add(r.sync_work);
  s.drain_work.Add(r.drain_work);
  s.release_work.Add(r.release_work);
  s.hook_work.Add(r.hook_work);
}

}  // namespace

AllocStressResult RunAllocStress(CuMemoryAllocator* allocator, const AllocStressOptions& options) {
  CUCTX_CHECK(allocator != nullptr) << "RunAllocStress needs an allocator";
  CUCTX_CHECK(options.threads >= 1 && options.max_bytes >= 1 && options.max_live_per_thread >= 1)
      << "RunAllocStress: threads, max_bytes and max_live_per_thread must be >= 1";
  allocator->AllowMultithreading();
  Shared sh(options.threads);
  sh.allocator = allocator;
  sh.options = &options;
  const auto start = std::chrono::steady_clock::now();
  sh.deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(options.seconds));
  std::vector<std::thread> threads;
  for (int t = 0; t < options.threads; ++t) {
    threads.emplace_back([&sh, t] {
      try {
        Worker(&sh, t);
      } catch (const std::exception& e) {
        // A failed fill or check (a CUDA error): the thread stops; its blocks are not freed.
        sh.Error("thread " + std::to_string(t) + " stopped: " + e.what());
      }
    });
  }
  for (std::thread& th : threads) th.join();
  // Blocks still in mailboxes (their receiver finished first) are checked and freed here.
  std::vector<unsigned char> host;
  for (int t = 0; t < options.threads; ++t) {
    for (const Live& b : sh.mailbox[t]) {
      if (!Intact(b, options.device_memory, &host)) ++sh.result.corruptions;
      sh.registry.Erase(b);
      allocator->Free(b.ptr);
      ++sh.result.frees;
      ++sh.result.cross_thread_frees;
    }
  }
  sh.result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sh.result;
}

}  // namespace cuctx
