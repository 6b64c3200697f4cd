// cudamatrix/cu-allocator-replay.cc: ReplayAllocatorTrace(): drives a CuMemoryAllocator with a recorded trace,
// on one thread or on one thread per recorded thread in the recorded order.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-allocator-impl.h"

#include <condition_variable>
#include <exception>
#include <fstream>
#include <istream>

namespace cuctx {

namespace {

struct TraceOp {
  char kind = 0;  // 'm', 'p', 'f', 's' or 'd'
  uint32 thread = 0;
  size_t a = 0, b = 0;  // bytes, or row_bytes and num_rows
  uint64 id = 0;
};

std::vector<TraceOp> ParseTrace(std::istream& in, std::vector<uint32>* threads) {
  std::vector<TraceOp> ops;
  std::unordered_map<uint64, bool> live;
  std::string line;
  for (int64 line_no = 1; std::getline(in, line); ++line_no) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    std::istringstream fields(line);
    TraceOp op;
    fields >> op.kind;
    if (op.kind == 'm')
      fields >> op.thread >> op.a >> op.id;
    else if (op.kind == 'p')
      fields >> op.thread >> op.a >> op.b >> op.id;
    else if (op.kind == 'f')
      fields >> op.thread >> op.id;
    else if (op.kind == 's' || op.kind == 'd')
      fields >> op.thread;
    const char* problem = nullptr;
    if (std::string("mpfsd").find(op.kind) == std::string::npos) {
      problem = "unknown record (expected m, p, f, s or d)";
    } else if (fields.fail() || !(fields >> std::ws).eof()) {
      problem = "wrong number or type of fields";
    } else if (op.kind == 'f') {
      if (op.id == 0 || live.erase(op.id) == 0) problem = "free of a pointer id that is not live";
    } else if (op.kind == 'm' || op.kind == 'p') {
      const bool empty = op.a == 0 || (op.kind == 'p' && op.b == 0);
      if (empty != (op.id == 0))
        problem = "pointer id must be 0 exactly for zero-byte requests";
      else if (!empty && !live.emplace(op.id, true).second)
        problem = "pointer id allocated twice";
    }
    if (problem != nullptr)
      CUCTX_ERR << "allocator trace, line " << line_no << ": " << problem << ": '" << line << "'";
    if (std::find(threads->begin(), threads->end(), op.thread) == threads->end())
      threads->push_back(op.thread);
    ops.push_back(op);
  }
  CUCTX_CHECK(!in.bad()) << "error reading the allocator trace";
  return ops;
}

}  // namespace

AllocatorReplayResult ReplayAllocatorTrace(std::istream& trace, bool use_threads,
                                           CuMemoryAllocator* allocator) {
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
                                               CuMemoryAllocator* allocator) {
  std::ifstream in(path);
  if (!in) CUCTX_ERR << "cannot open allocator trace '" << path << "'";
  return ReplayAllocatorTrace(in, use_threads, allocator);
}
}  // namespace cuctx
