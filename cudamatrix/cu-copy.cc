// cudamatrix/cu-copy.cc: host<->device copies: direct for pinned memory, chunked staging otherwise.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-copy.h"

#include "base/error.h"
#include "base/options-itf.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-pinned.h"
#include "cudamatrix/internal/cu-capture-gate.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#if CUCTX_HAVE_CUDA
#include "cudamatrix/cu-check.h"
#include "cudamatrix/internal/cu-readback.h"

#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace {

// Smallest piece a staged copy is cut into unless chunk_kb is smaller: below this the per-piece
// cost (a memcpy call, an event record and a wait: several microseconds) is no longer small
// against the piece's DMA time.
constexpr size_t kMinPieceBytes = size_t{512} << 10;
constexpr size_t kPageBytes = size_t{4} << 10;
constexpr int32 kMaxChunkKb = 1 << 20;  // 1 GiB
constexpr int32 kMaxStagingBuffers = 16;
constexpr int32 kMaxMemcpyThreads = 64;
// A staging memcpy is split over threads only into slices of at least this size: below it, waking
// a worker costs more than the copy it would take over.
constexpr size_t kMinSliceBytes = size_t{256} << 10;

struct CopyOptionsState {
  std::mutex mutex;
  CuCopyOptions options;
};

CopyOptionsState& GetOptionsState() {
  static CopyOptionsState* state = new CopyOptionsState;  // leaked: used until exit
  return *state;
}

struct CopyCounters {
  std::atomic<int64> host_only{0};
  std::atomic<int64> pinned{0};
  std::atomic<int64> pageable_direct{0};
  std::atomic<int64> staged{0};
  std::atomic<int64> staged_pieces{0};
  std::atomic<int64> bytes_staged{0};
};

CopyCounters& GetCounters() {
  static CopyCounters* counters = new CopyCounters;
  return *counters;
}

// Copies `rows` rows of `width` bytes between host buffers with the given pitches.
void HostCopy2D(char* dst, size_t dst_pitch, const char* src, size_t src_pitch, size_t width,
                size_t rows) {
  if (width == 0 || rows == 0) return;
  if (dst_pitch == width && src_pitch == width) {
    std::memcpy(dst, src, width * rows);
    return;
  }
  for (size_t r = 0; r < rows; ++r) std::memcpy(dst + r * dst_pitch, src + r * src_pitch, width);
}

// Threads that help with the CPU side of staged copies. One thread's memcpy from pageable memory
// reaches only about 8 GB/s (measured on the H100 host), well below the 50+ GB/s of a pinned DMA,
// so each piece's memcpy is split over several threads. Created on first use, grown on demand,
// never destroyed (idle threads sleep on a condition variable; no static destructor touches them).
// Several copying threads share it: each Run() is a batch that any idle worker joins.
//
// Both sides spin briefly before sleeping: a staged copy hands out its next piece a few
// microseconds after the last one, and a sleep/wake-up through the kernel costs about as much as
// copying a slice, so without the spin the helpers would arrive late for every piece.
class MemcpyPool {
 public:
  static MemcpyPool& Get() {
    static MemcpyPool* pool = new MemcpyPool;  // leaked on purpose
    return *pool;
  }

  // Runs task(i) for every i in [0, n) on the calling thread and up to `threads` - 1 workers;
  // returns when all have finished. `task` must not throw.
  void Run(size_t n, int threads, const std::function<void(size_t)>& task) {
    if (n <= 1 || threads <= 1) {
      for (size_t i = 0; i < n; ++i) task(i);
      return;
    }
    Batch batch;
    batch.task = &task;
    batch.n = n;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Grow(threads - 1);
      batches_.push_back(&batch);
      generation_.fetch_add(1);
    }
    work_.notify_all();
    Drain(&batch);
    auto done = [&batch] { return batch.finished.load() == batch.n && batch.helpers.load() == 0; };
    SpinUntil(done);
    // The final check is under the mutex: helpers only join (++helpers) while holding it, so once
    // we hold it and see no helpers, nobody can still be touching the batch.
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, done);
    for (auto it = batches_.begin(); it != batches_.end(); ++it) {
      if (*it == &batch) {
        batches_.erase(it);
        break;
      }
    }
  }

 private:
  struct Batch {
    const std::function<void(size_t)>* task = nullptr;
    size_t n = 0;
    std::atomic<size_t> next{0};
    std::atomic<size_t> finished{0};
    std::atomic<int> helpers{0};  // workers inside Drain(); changed only under mutex_
  };

  // Spins (yielding) for up to about 50 microseconds until pred() holds.
  template <typename Pred>
  static bool SpinUntil(Pred pred) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::yield();
    }
    return true;
  }

  // Starts workers until there are `count` (under mutex_). A failure to start one is not an
  // error: the copy then runs on fewer threads.
  void Grow(int count) {
    while (static_cast<int>(workers_.size()) < count) {
      try {
        workers_.emplace_back([this] { WorkerLoop(); });
      } catch (const std::system_error&) {
        return;
      }
    }
  }

  void Drain(Batch* b) {
    size_t ran = 0;
    for (size_t i = b->next.fetch_add(1); i < b->n; i = b->next.fetch_add(1)) {
      (*b->task)(i);
      ++ran;
    }
    if (ran > 0 && b->finished.fetch_add(ran) + ran == b->n) {
      std::lock_guard<std::mutex> lock(mutex_);  // orders the wake-up after the waiter's check
      done_.notify_all();
    }
  }

  // A batch with unclaimed tasks, or nullptr (under mutex_).
  Batch* FindWork() const {
    for (Batch* b : batches_)
      if (b->next.load() < b->n) return b;
    return nullptr;
  }

  void WorkerLoop() {
    std::unique_lock<std::mutex> lock(mutex_);
    bool spun = false;
    for (;;) {
      Batch* b = FindWork();
      if (b == nullptr) {
        if (!spun) {
          const uint64_t seen = generation_.load();
          lock.unlock();
          SpinUntil([this, seen] { return generation_.load() != seen; });
          lock.lock();
          spun = true;
        } else {
          work_.wait(lock);
          spun = false;
        }
        continue;
      }
      spun = false;
      b->helpers.fetch_add(1);  // keeps the batch alive until we leave it below
      lock.unlock();
      Drain(b);
      lock.lock();
      if (b->helpers.fetch_sub(1) == 1 && b->finished.load() == b->n) done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_;
  std::deque<Batch*> batches_;
  std::atomic<uint64_t> generation_{0};  // counts batches submitted, for the spinning workers
  std::vector<std::thread> workers_;
};

// HostCopy2D split over up to `threads` threads: by rows when there are several, else by bytes.
void ParallelHostCopy2D(char* dst, size_t dst_pitch, const char* src, size_t src_pitch,
                        size_t width, size_t rows, int threads) {
  const size_t bytes = width * rows;
  const size_t slices =
      std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), bytes / kMinSliceBytes);
  if (slices <= 1) {
    HostCopy2D(dst, dst_pitch, src, src_pitch, width, rows);
    return;
  }
  if (rows == 1 || (dst_pitch == width && src_pitch == width)) {
    // Contiguous on both sides: split the bytes into page-multiple slices.
    const size_t slice = (bytes / slices + kPageBytes - 1) / kPageBytes * kPageBytes;
    MemcpyPool::Get().Run(slices, threads, [=](size_t i) {
      const size_t begin = std::min(bytes, i * slice);
      const size_t end = std::min(bytes, begin + slice);
      std::memcpy(dst + begin, src + begin, end - begin);
    });
    return;
  }
  const size_t parts = std::min(slices, rows);
  const size_t rows_per_part = (rows + parts - 1) / parts;
  MemcpyPool::Get().Run(parts, threads, [=](size_t i) {
    const size_t first = std::min(rows, i * rows_per_part);
    const size_t last = std::min(rows, first + rows_per_part);
    HostCopy2D(dst + first * dst_pitch, dst_pitch, src + first * src_pitch, src_pitch, width,
               last - first);
  });
}

// One copy, described from the host's point of view.
struct Transfer2D {
  bool to_device;
  char* host;  // source for host->device, destination for device->host
  size_t host_pitch;
  char* device;  // the other side
  size_t device_pitch;
  size_t row_bytes;
  size_t rows;
};

Transfer2D MakeTransfer(bool to_device, void* dst, size_t dst_pitch, const void* src,
                        size_t src_pitch, size_t row_bytes, size_t rows) {
  Transfer2D t;
  t.to_device = to_device;
  // The source is only read; the cast lets one struct describe both directions.
  t.host = static_cast<char*>(to_device ? const_cast<void*>(src) : dst);
  t.host_pitch = to_device ? src_pitch : dst_pitch;
  t.device = static_cast<char*>(to_device ? dst : const_cast<void*>(src));
  t.device_pitch = to_device ? dst_pitch : src_pitch;
  t.row_bytes = row_bytes;
  t.rows = rows;
  return t;
}

// Checks the arguments and returns false for an empty copy.
bool CheckTransfer(const char* what, const void* dst, size_t dst_pitch, const void* src,
                   size_t src_pitch, size_t row_bytes, size_t rows) {
  if (row_bytes == 0 || rows == 0) return false;
  CUCTX_CHECK(dst != nullptr && src != nullptr)
      << what << ": null " << (dst == nullptr ? "destination" : "source") << " for " << rows
      << " row(s) of " << row_bytes << " bytes";
  CUCTX_CHECK(dst_pitch >= row_bytes && src_pitch >= row_bytes)
      << what << ": pitches (destination " << dst_pitch << ", source " << src_pitch
      << ") must be >= row_bytes " << row_bytes;
  const size_t pitch = std::max(dst_pitch, src_pitch);
  CUCTX_CHECK(rows - 1 <= (SIZE_MAX - row_bytes) / pitch && rows <= SIZE_MAX / row_bytes)
      << what << ": " << rows << " rows of pitch " << pitch << " overflow the address space";
  return true;
}

// The pieces of a staged copy (see NOTE ON chunking in the header).
struct Piece {
  size_t row;    // first row
  size_t rows;   // number of rows (1 when a row is split)
  size_t col;    // byte offset in the row
  size_t width;  // bytes per row of the piece
};

class PiecePlan {
 public:
  PiecePlan(size_t row_bytes, size_t rows, size_t piece_bytes)
      : row_bytes_(row_bytes), rows_(rows) {
    if (row_bytes <= piece_bytes) {
      rows_per_piece_ = piece_bytes / row_bytes;
      parts_per_row_ = 1;
      part_bytes_ = row_bytes;
      count_ = (rows + rows_per_piece_ - 1) / rows_per_piece_;
    } else {
      rows_per_piece_ = 1;
      part_bytes_ = piece_bytes;
      parts_per_row_ = (row_bytes + piece_bytes - 1) / piece_bytes;
      count_ = rows * parts_per_row_;
    }
  }
  size_t Count() const { return count_; }
  // Bytes a staging buffer needs to hold any piece.
  size_t MaxPieceBytes() const {
    return parts_per_row_ == 1 ? std::min(rows_per_piece_, rows_) * row_bytes_ : part_bytes_;
  }
  Piece At(size_t i) const {
    if (parts_per_row_ == 1) {
      size_t row = i * rows_per_piece_;
      return Piece{row, std::min(rows_per_piece_, rows_ - row), 0, row_bytes_};
    }
    size_t col = (i % parts_per_row_) * part_bytes_;
    return Piece{i / parts_per_row_, 1, col, std::min(part_bytes_, row_bytes_ - col)};
  }

 private:
  size_t row_bytes_, rows_;
  size_t rows_per_piece_ = 1, parts_per_row_ = 1, part_bytes_ = 0, count_ = 0;
};

size_t PieceBytes(size_t total, const CuCopyOptions& opts) {
  const size_t chunk = static_cast<size_t>(opts.chunk_kb) << 10;
  const size_t quarter = ((total + 3) / 4 + kPageBytes - 1) / kPageBytes * kPageBytes;
  return std::min(chunk, std::max(kMinPieceBytes, quarter));
}

// Runs the double-buffered pipeline. `Mover` queues the DMA of a piece between a staging slot and
// the device side (Queue), waits for a slot's last queued DMA (Wait) and ends the copy (Finish,
// before the staging buffers are given back).
template <typename Mover>
void RunStaged(Transfer2D t, const CuCopyOptions& opts, PinnedHostAllocator* staging_allocator) {
  // Rows that are contiguous on both sides form one long row: fewer, fuller pieces.
  if (t.host_pitch == t.row_bytes && t.device_pitch == t.row_bytes) {
    t.row_bytes *= t.rows;
    t.rows = 1;
    t.host_pitch = t.device_pitch = t.row_bytes;
  }
  const size_t total = t.row_bytes * t.rows;
  const PiecePlan plan(t.row_bytes, t.rows, PieceBytes(total, opts));
  const size_t count = plan.Count();
  const int slots =
      static_cast<int>(std::min<size_t>(static_cast<size_t>(opts.num_staging_buffers), count));
  std::vector<PinnedBuffer> staging;
  staging.reserve(slots);
  for (int s = 0; s < slots; ++s) staging.emplace_back(plan.MaxPieceBytes(), staging_allocator);
  Mover mover(slots);

  auto host_at = [&t](const Piece& p) { return t.host + p.row * t.host_pitch + p.col; };
  auto device_at = [&t](const Piece& p) { return t.device + p.row * t.device_pitch + p.col; };
  auto stage = [&staging](size_t i) { return static_cast<char*>(staging[i].Data()); };
  if (t.to_device) {
    for (size_t i = 0; i < count; ++i) {
      const int slot = static_cast<int>(i % slots);
      if (i >= static_cast<size_t>(slots)) mover.Wait(slot);  // its previous DMA has read it
      const Piece p = plan.At(i);
      ParallelHostCopy2D(stage(slot), p.width, host_at(p), t.host_pitch, p.width, p.rows,
                         opts.memcpy_threads);
      mover.Queue(slot, device_at(p), t.device_pitch, stage(slot), p.width, p.width, p.rows);
    }
  } else {
    auto queue = [&](size_t i) {
      const int slot = static_cast<int>(i % slots);
      const Piece p = plan.At(i);
      mover.Queue(slot, stage(slot), p.width, device_at(p), t.device_pitch, p.width, p.rows);
    };
    for (size_t i = 0; i < static_cast<size_t>(slots); ++i) queue(i);
    for (size_t i = 0; i < count; ++i) {
      const int slot = static_cast<int>(i % slots);
      mover.Wait(slot);
      const Piece p = plan.At(i);
      ParallelHostCopy2D(host_at(p), t.host_pitch, stage(slot), p.width, p.width, p.rows,
                         opts.memcpy_threads);
      if (i + slots < count) queue(i + slots);
    }
  }
  mover.Finish();
  CopyCounters& c = GetCounters();
  c.staged.fetch_add(1, std::memory_order_relaxed);
  c.staged_pieces.fetch_add(static_cast<int64>(count), std::memory_order_relaxed);
  c.bytes_staged.fetch_add(static_cast<int64>(total), std::memory_order_relaxed);
}

// A stand-in for the copy engine: queued copies run in queue order, and only when a Wait or
// Finish needs them, which is what a CUDA stream guarantees and no more. A pipeline that refilled a
// staging buffer before its earlier copy ran would therefore copy wrong data in the tests.
class HostMover {
 public:
  explicit HostMover(int slots) : slot_last_(slots, 0) {}
  void Queue(int slot, char* dst, size_t dst_pitch, const char* src, size_t src_pitch, size_t width,
             size_t rows) {
    queue_.push_back(Op{dst, dst_pitch, src, src_pitch, width, rows});
    slot_last_[slot] = ++queued_;
  }
  void Wait(int slot) { RunUntil(slot_last_[slot]); }
  void Finish() { RunUntil(queued_); }

 private:
  struct Op {
    char* dst;
    size_t dst_pitch;
    const char* src;
    size_t src_pitch, width, rows;
  };
  void RunUntil(size_t n) {
    for (; done_ < n; ++done_) {
      const Op& op = queue_.front();
      HostCopy2D(op.dst, op.dst_pitch, op.src, op.src_pitch, op.width, op.rows);
      queue_.pop_front();
    }
  }
  std::deque<Op> queue_;
  std::vector<size_t> slot_last_;
  size_t queued_ = 0, done_ = 0;
};

#if CUCTX_HAVE_CUDA
// Queues one (pitched) copy on the calling thread's stream; 1D when the rows are contiguous.
void QueueCudaCopy(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                   size_t rows, cudaMemcpyKind kind) {
  if (rows == 1 || (dst_pitch == width && src_pitch == width)) {
    CUCTX_CUDA_CHECK(cudaMemcpyAsync(dst, src, width * rows, kind, cudaStreamPerThread));
  } else {
    CUCTX_CUDA_CHECK(
        cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, kind, cudaStreamPerThread));
  }
}

// The real copy engine: one event per staging slot, recorded after that slot's DMA.
template <bool kToDevice>
class CudaMover {
 public:
  explicit CudaMover(int slots) : events_(slots, nullptr) {
    for (cudaEvent_t& e : events_) {
      cudaError_t status = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
      if (status != cudaSuccess) {
        DestroyEvents();
        internal::ThrowStatus(internal::kCudaLib, static_cast<int>(status),
                              "cudaEventCreateWithFlags(&e, cudaEventDisableTiming)", __func__,
                              __FILE__, __LINE__);
      }
    }
  }
  ~CudaMover() { DestroyEvents(); }
  CudaMover(const CudaMover&) = delete;
  CudaMover& operator=(const CudaMover&) = delete;

  void Queue(int slot, char* dst, size_t dst_pitch, const char* src, size_t src_pitch, size_t width,
             size_t rows) {
    QueueCudaCopy(dst, dst_pitch, src, src_pitch, width, rows,
                  kToDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
    CUCTX_CUDA_CHECK(cudaEventRecord(events_[slot], cudaStreamPerThread));
  }
  void Wait(int slot) { CUCTX_CUDA_CHECK(cudaEventSynchronize(events_[slot])); }
  // Host->device returns without waiting for the last DMAs: the source was consumed by the
  // memcpys, and the staging buffers' reuse is guarded by the allocator's events. Device->host
  // has already waited for every piece.
  void Finish() {}

 private:
  void DestroyEvents() {
    for (cudaEvent_t& e : events_) {
      if (e != nullptr) CUCTX_CUDA_CHECK_NOTHROW(cudaEventDestroy(e));
      e = nullptr;
    }
  }
  std::vector<cudaEvent_t> events_;
};
#endif  // CUCTX_HAVE_CUDA

#if CUCTX_HAVE_CUDA
// Waits for this thread's stream and tells the caching allocator, so that blocks this thread
// freed before the wait can go to other threads without a SynchronizeGpu().
void SynchronizeThreadStream() {
  internal::CheckNotCapturing("waiting for this thread's stream");
  CUCTX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  if (CuMemoryAllocator* allocator = CuDevice::Instantiate().Allocator())
    allocator->NoteThreadStreamSynchronized();
}
#endif

void Copy(const char* what, bool to_device, void* dst, size_t dst_pitch, const void* src,
          size_t src_pitch, size_t row_bytes, size_t rows) {
  if (!CheckTransfer(what, dst, dst_pitch, src, src_pitch, row_bytes, rows)) return;
  CopyCounters& counters = GetCounters();
  if (!CuDevice::Instantiate().Enabled()) {
    HostCopy2D(static_cast<char*>(dst), dst_pitch, static_cast<const char*>(src), src_pitch,
               row_bytes, rows);
    counters.host_only.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // A transfer cannot be captured; ops that read back name themselves before they get here.
  internal::CheckNotCapturing(what);
#if CUCTX_HAVE_CUDA
  const Transfer2D t = MakeTransfer(to_device, dst, dst_pitch, src, src_pitch, row_bytes, rows);
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (!to_device && rows == 1 && row_bytes <= internal::ReadbackSlot::kCopyBytes) {
    // A few bytes (an element through CuValue, a solver's info): one copy into the thread's
    // mapped pinned slot and one wait, which costs less than the driver's pageable staging.
    internal::ThreadReadbackSlot().CopyToHost(dst, src, row_bytes, internal::ThreadStream());
    counters.pageable_direct.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const CuCopyOptions opts = GetCopyOptions();
  const bool small = row_bytes * rows < (static_cast<size_t>(opts.staging_threshold_kb) << 10);
  if (!to_device && small) {
    // Under the threshold a device->host copy is one driver copy and one wait whether or not the
    // destination is page-locked, so the memory is not asked about (a cudaPointerGetAttributes
    // call per copy, which Kaldi's copies do not make).
    QueueCudaCopy(dst, dst_pitch, src, src_pitch, row_bytes, rows, kind);
    SynchronizeThreadStream();
    counters.pageable_direct.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const char* host_last = t.host + (rows - 1) * t.host_pitch + row_bytes - 1;
  if (IsPageLocked(t.host) && IsPageLocked(host_last)) {
    QueueCudaCopy(dst, dst_pitch, src, src_pitch, row_bytes, rows, kind);
    // Also for host->device: the caller may overwrite the source as soon as we return.
    SynchronizeThreadStream();
    counters.pinned.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (small) {
    // The driver stages pageable memory itself and returns once the source has been consumed.
    QueueCudaCopy(dst, dst_pitch, src, src_pitch, row_bytes, rows, kind);
    counters.pageable_direct.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  PinnedHostAllocator* staging = &PinnedHostAllocator::Get();
  if (to_device)
    RunStaged<CudaMover<true>>(t, opts, staging);
  else
    RunStaged<CudaMover<false>>(t, opts, staging);
#else
  (void)to_device;
  CUCTX_ERR << what << ": a GPU is enabled in a build without CUDA";
#endif
}

}  // namespace

void CuCopyOptions::Register(OptionsItf* opts) {
  CUCTX_CHECK(opts != nullptr) << "CuCopyOptions::Register: null OptionsItf";
  opts->Register("cuda-copy-staging-threshold-kb", &staging_threshold_kb,
                 "Host<->device copies from/to pageable memory of at least this many KiB are "
                 "chunked through pinned staging buffers (0: all of them)");
  opts->Register("cuda-copy-chunk-kb", &chunk_kb,
                 "Largest piece of a staged host<->device copy, in KiB");
  opts->Register("cuda-copy-staging-buffers", &num_staging_buffers,
                 "Pinned staging buffers used round robin by one staged copy (2..16)");
  opts->Register("cuda-copy-memcpy-threads", &memcpy_threads,
                 "Threads (the caller included) that split the CPU memcpy of each piece of a "
                 "staged copy (1..64)");
}

void CuCopyOptions::Check() const {
  CUCTX_CHECK(staging_threshold_kb >= 0)
      << "--cuda-copy-staging-threshold-kb must be >= 0; got " << staging_threshold_kb;
  CUCTX_CHECK(chunk_kb >= 4 && chunk_kb <= kMaxChunkKb)
      << "--cuda-copy-chunk-kb must be in [4, " << kMaxChunkKb << "]; got " << chunk_kb;
  CUCTX_CHECK(num_staging_buffers >= 2 && num_staging_buffers <= kMaxStagingBuffers)
      << "--cuda-copy-staging-buffers must be in [2, " << kMaxStagingBuffers << "]; got "
      << num_staging_buffers;
  CUCTX_CHECK(memcpy_threads >= 1 && memcpy_threads <= kMaxMemcpyThreads)
      << "--cuda-copy-memcpy-threads must be in [1, " << kMaxMemcpyThreads << "]; got "
      << memcpy_threads;
}

void SetCopyOptions(const CuCopyOptions& opts) {
  opts.Check();
  CopyOptionsState& state = GetOptionsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.options = opts;
}

CuCopyOptions GetCopyOptions() {
  CopyOptionsState& state = GetOptionsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.options;
}

CuCopyStats GetCopyStats() {
  const CopyCounters& c = GetCounters();
  CuCopyStats s;
  s.num_host_only = c.host_only.load();
  s.num_pinned = c.pinned.load();
  s.num_pageable_direct = c.pageable_direct.load();
  s.num_staged = c.staged.load();
  s.num_staged_pieces = c.staged_pieces.load();
  s.bytes_staged = c.bytes_staged.load();
  return s;
}

bool IsPageLocked(const void* h_ptr) {
  if (h_ptr == nullptr || !CuDevice::Instantiate().Enabled()) return false;
#if CUCTX_HAVE_CUDA
  cudaPointerAttributes attributes;
  cudaError_t e = cudaPointerGetAttributes(&attributes, h_ptr);
  if (e != cudaSuccess) {
    // Pointers CUDA does not know are not an error here; clear the status for later checks.
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
#else
  return false;
#endif
}

void CopyHostToDevice(void* d_dst, const void* h_src, size_t bytes) {
  Copy("CopyHostToDevice", true, d_dst, bytes, h_src, bytes, bytes, 1);
}

void CopyDeviceToHost(void* h_dst, const void* d_src, size_t bytes) {
  Copy("CopyDeviceToHost", false, h_dst, bytes, d_src, bytes, bytes, 1);
}

void CopyHostToDevice2D(void* d_dst, size_t d_pitch, const void* h_src, size_t h_pitch,
                        size_t row_bytes, size_t rows) {
  Copy("CopyHostToDevice2D", true, d_dst, d_pitch, h_src, h_pitch, row_bytes, rows);
}

void CopyDeviceToHost2D(void* h_dst, size_t h_pitch, const void* d_src, size_t d_pitch,
                        size_t row_bytes, size_t rows) {
  Copy("CopyDeviceToHost2D", false, h_dst, h_pitch, d_src, d_pitch, row_bytes, rows);
}

namespace internal {

void StagedCopyOnHostForTest(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                             size_t row_bytes, size_t rows, bool to_device,
                             const CuCopyOptions& opts) {
  opts.Check();
  if (!CheckTransfer("StagedCopyOnHostForTest", dst, dst_pitch, src, src_pitch, row_bytes, rows))
    return;
  const Transfer2D t = MakeTransfer(to_device, dst, dst_pitch, src, src_pitch, row_bytes, rows);
  RunStaged<HostMover>(t, opts, &PinnedHostAllocator::ForDevice(-1));
}

}  // namespace internal
}  // namespace cuctx
