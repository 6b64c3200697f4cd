// cudamatrix/cu-memory-snapshot.cc: the pickle of a MemorySnapshot and the caller frames.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-memory-snapshot.h"

#include "base/error.h"
#include "base/pickle-writer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fstream>
#include <sstream>

namespace cuctx {

namespace {

void WriteFrames(const std::vector<SnapshotFrame>& frames, PickleWriter* w) {
  w->BeginList();
  for (const SnapshotFrame& f : frames) {
    w->BeginDict();
    w->Str("filename");
    w->Str(f.filename);
    w->Str("line");
    w->Int(f.line);
    w->Str("name");
    w->Str(f.name);
    w->EndDict();
  }
  w->EndList();
}

void WriteSegment(const SnapshotSegment& s, PickleWriter* w) {
  size_t tiled = 0, allocated = 0, active = 0, requested = 0;
  for (const SnapshotBlock& b : s.blocks) {
    tiled += b.size;
    if (b.state == "active_allocated") {
      allocated += b.size;
      requested += b.requested_size;
    }
    if (b.state != "inactive") active += b.size;
  }
  if (tiled != s.total_size)
    CUCTX_ERR << "memory snapshot: the blocks of the segment at 0x" << std::hex << s.address
              << std::dec << " (" << s.kind << ", " << s.total_size << " bytes) add up to " << tiled
              << " bytes";
  w->BeginDict();
  w->Str("device");
  w->Int(s.device);
  w->Str("address");
  w->UInt(s.address);
  w->Str("total_size");
  w->UInt(s.total_size);
  w->Str("allocated_size");
  w->UInt(allocated);
  w->Str("active_size");
  w->UInt(active);
  w->Str("requested_size");
  w->UInt(requested);
  w->Str("stream");
  w->UInt(s.stream);
  w->Str("segment_type");
  w->Str(s.segment_type);
  w->Str("segment_pool_id");
  w->Int(s.pool_id);
  w->Int(s.pool_id_shared);
  w->Tuple2();
  w->Str("is_expandable");
  w->Bool(s.is_expandable);
  w->Str("cuctx_kind");
  w->Str(s.kind);
  w->Str("frames");
  WriteFrames(s.frames, w);
  w->Str("blocks");
  w->BeginList();
  for (const SnapshotBlock& b : s.blocks) {
    w->BeginDict();
    w->Str("address");
    w->UInt(b.address);
    w->Str("size");
    w->UInt(b.size);
    w->Str("requested_size");
    w->UInt(b.requested_size);
    w->Str("state");
    w->Str(b.state);
    if (!b.kind.empty()) {
      w->Str("cuctx_kind");
      w->Str(b.kind);
    }
    w->Str("frames");
    WriteFrames(b.frames, w);
    w->EndDict();
  }
  w->EndList();
  w->EndDict();
}

void WriteEvent(const SnapshotEvent& e, PickleWriter* w) {
  w->BeginDict();
  w->Str("action");
  w->Str(e.action);
  w->Str("addr");
  w->UInt(e.addr);
  w->Str("size");
  w->UInt(e.size);
  w->Str("stream");
  w->UInt(e.stream);
  w->Str("time_us");
  w->Int(e.time_us);
  if (e.action == "oom") {
    w->Str("device_free");
    w->UInt(e.device_free);
  }
  w->Str("thread");
  w->UInt(e.thread);
  w->Str("frames");
  WriteFrames(e.frames, w);
  w->EndDict();
}

}  // namespace

SnapshotFrames SnapshotFrames::Capture(int skip, int depth) {
  SnapshotFrames f;
  if (depth <= 0) return f;
  void* pcs[64];
  const int want = std::min(64, depth + skip + 1);
  const int n = backtrace(pcs, want);
  for (int i = skip + 1; i < n; ++i) f.pcs.push_back(pcs[i]);  // +1: this function
  return f;
}

std::vector<SnapshotFrame> SnapshotFrames::Symbolize() const {
  std::vector<SnapshotFrame> out;
  out.reserve(pcs.size());
  for (void* pc : pcs) {
    SnapshotFrame f;
    Dl_info info;
    std::ostringstream addr;
    addr << pc;
    if (dladdr(pc, &info) != 0) {
      if (info.dli_fname != nullptr) f.filename = info.dli_fname;
      // The line field carries the offset into the object, which addr2line -e FILE turns
      // into a source line.
      if (info.dli_fbase != nullptr)
        f.line = static_cast<int64>(static_cast<char*>(pc) - static_cast<char*>(info.dli_fbase));
      if (info.dli_sname != nullptr) {
        int status = 0;
        char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
        f.name = status == 0 && demangled != nullptr ? demangled : info.dli_sname;
        std::free(demangled);
      }
    }
    if (f.filename.empty()) f.filename = "??";
    if (f.name.empty()) f.name = addr.str();
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<SnapshotEvent>& MemorySnapshot::Trace(int device) {
  CUCTX_CHECK(device >= 0) << "memory snapshot: no trace for device " << device;
  if (device_traces.size() <= static_cast<size_t>(device))
    device_traces.resize(static_cast<size_t>(device) + 1);
  return device_traces[static_cast<size_t>(device)];
}

void MemorySnapshot::OrderTraces() {
  for (std::vector<SnapshotEvent>& trace : device_traces) {
    std::stable_sort(trace.begin(), trace.end(),
                     [](const SnapshotEvent& a, const SnapshotEvent& b) { return a.seq < b.seq; });
    for (size_t i = 1; i < trace.size(); ++i)
      trace[i].time_us = std::max(trace[i].time_us, trace[i - 1].time_us);
  }
}

uint64 NextSnapshotSeq() {
  static std::atomic<uint64> seq{0};
  return seq.fetch_add(1, std::memory_order_relaxed) + 1;
}

SnapshotFrame MarkFrame(const std::string& what) {
  SnapshotFrame f;
  f.filename = "cuctx";
  f.line = 0;
  f.name = what;
  return f;
}

namespace {
thread_local std::shared_ptr<const SnapshotMark> t_mark;
}  // namespace

ScopedSnapshotMark::ScopedSnapshotMark(std::string kind, std::string description)
    : previous_(std::move(t_mark)) {
  t_mark =
      std::make_shared<const SnapshotMark>(SnapshotMark{std::move(kind), std::move(description)});
}

ScopedSnapshotMark::~ScopedSnapshotMark() { t_mark = std::move(previous_); }

std::shared_ptr<const SnapshotMark> ScopedSnapshotMark::Current() { return t_mark; }

int64 SnapshotTimeUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void WriteMemorySnapshot(const MemorySnapshot& snapshot, std::ostream& os) {
  PickleWriter w(&os);
  w.BeginDict();
  w.Str("segments");
  w.BeginList();
  for (const SnapshotSegment& s : snapshot.segments) WriteSegment(s, &w);
  w.EndList();
  w.Str("device_traces");
  w.BeginList();
  // At least one device, so that viewers asking for device 0 find a (possibly empty) trace.
  const size_t num_devices = std::max<size_t>(1, snapshot.device_traces.size());
  for (size_t d = 0; d < num_devices; ++d) {
    w.BeginList();
    if (d < snapshot.device_traces.size())
      for (const SnapshotEvent& e : snapshot.device_traces[d]) WriteEvent(e, &w);
    w.EndList();
  }
  w.EndList();
  w.Str("cuctx");
  w.BeginDict();
  w.Str("version");
  w.Int(1);
  w.Str("source");
  w.Str(snapshot.source);
  w.EndDict();
  w.EndDict();
  w.Finish();
}

void WriteMemorySnapshotFile(const MemorySnapshot& snapshot, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream os(tmp, std::ios::binary | std::ios::trunc);
    if (!os) CUCTX_ERR << "memory snapshot: cannot create '" << tmp << "'";
    try {
      WriteMemorySnapshot(snapshot, os);
    } catch (...) {
      os.close();
      std::remove(tmp.c_str());
      throw;
    }
    os.flush();
    if (!os) {
      std::remove(tmp.c_str());
      CUCTX_ERR << "memory snapshot: writing '" << tmp << "' failed";
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    CUCTX_ERR << "memory snapshot: cannot rename '" << tmp << "' to '" << path << "'";
  }
}

}  // namespace cuctx
