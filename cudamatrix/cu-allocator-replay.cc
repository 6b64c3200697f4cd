// cudamatrix/cu-allocator-replay.cc: ReplayAllocatorTrace(): drives a CuMemoryAllocator with a recorded trace,
// on one thread or on one thread per recorded thread in the recorded order.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-allocator-trace.h"
#include "cudamatrix/internal/cu-allocator.h"

#include <condition_variable>
#include <exception>
#include <fstream>
#include <istream>

namespace cuctx {

using internal::ParseTrace;
using internal::TraceOp;

AllocatorReplayResult ReplayAllocatorTrace(std::istream& trace, bool use_threads,
                                           CuMemoryAllocator* allocator,
                                           const std::function<void()>& at_end) {
  CUCTX_CHECK(allocator != nullptr);
  std::vector<uint32> threads;
  const std::vector<TraceOp> ops = ParseTrace(trace, &threads);
  AllocatorReplayResult result;
  result.num_threads = static_cast<int32>(threads.size());
  for (const TraceOp& op : ops) {
    if (op.kind == 'f') ++result.num_frees;
    if (op.kind == 'm' || op.kind == 'p') ++result.num_mallocs;
  }

  std::unordered_map<uint64, void*> ptrs;  // only touched by the thread whose turn it is
  auto run = [&](const TraceOp& op) {
    if (op.kind == 'm') {
      void* p = allocator->Malloc(op.a);
      if (op.id != 0) ptrs[op.id] = p;
    } else if (op.kind == 'p') {
      size_t pitch = 0;
      void* p = allocator->MallocPitch(op.a, op.b, &pitch);
      if (op.id != 0) ptrs[op.id] = p;
    } else if (op.kind == 'f') {
      auto it = ptrs.find(op.id);
      allocator->Free(it->second);
      ptrs.erase(it);
    } else if (op.kind == 's') {
      allocator->SynchronizeGpu();
    } else {
      allocator->NoteThreadStreamSynchronized();
    }
  };

  std::exception_ptr error;
  if (!use_threads || threads.size() <= 1) {
    try {
      for (const TraceOp& op : ops) run(op);
    } catch (...) {
      error = std::current_exception();
    }
  } else {
    allocator->AllowMultithreading();
    // Turn-taking: op i runs once `next` == i, on the worker of its trace thread, which is woken
    // through its own condition variable, so each hand-over wakes exactly one thread.
    const size_t num_workers = threads.size();
    std::vector<size_t> worker_of(ops.size());
    std::vector<std::vector<size_t>> mine(num_workers);
    for (size_t i = 0; i < ops.size(); ++i) {
      worker_of[i] = std::find(threads.begin(), threads.end(), ops[i].thread) - threads.begin();
      mine[worker_of[i]].push_back(i);
    }
    std::mutex mutex;
    std::vector<std::condition_variable> turn(num_workers);
    size_t next = 0;
    bool failed = false;
    auto worker = [&](size_t w) {
      for (size_t i : mine[w]) {
        {
          std::unique_lock<std::mutex> lock(mutex);
          turn[w].wait(lock, [&] { return next == i || failed; });
          if (failed) return;
        }
        try {
          run(ops[i]);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!error) error = std::current_exception();
          failed = true;
          for (auto& cv : turn) cv.notify_all();
          return;
        }
        std::lock_guard<std::mutex> lock(mutex);
        next = i + 1;
        if (next < ops.size()) turn[worker_of[next]].notify_one();
      }
    };
    std::vector<std::thread> pool;
    for (size_t w = 0; w < num_workers; ++w) pool.emplace_back(worker, w);
    for (std::thread& t : pool) t.join();
  }
  result.num_freed_at_end = static_cast<int64>(ptrs.size());
  if (!error && at_end) {
    try {
      at_end();
    } catch (...) {
      error = std::current_exception();
    }
  }
  for (auto& entry : ptrs) {
    try {
      allocator->Free(entry.second);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return result;
}

AllocatorReplayResult ReplayAllocatorTraceFile(const std::string& path, bool use_threads,
                                               CuMemoryAllocator* allocator,
                                               const std::function<void()>& at_end) {
  std::ifstream in(path);
  if (!in) CUCTX_ERR << "cannot open allocator trace '" << path << "'";
  return ReplayAllocatorTrace(in, use_threads, allocator, at_end);
}
}  // namespace cuctx
