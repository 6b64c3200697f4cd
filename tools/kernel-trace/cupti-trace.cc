// tools/kernel-trace/cupti-trace.cc: a CUPTI injection library for any CUDA program, loaded by
// the driver through CUDA_INJECTION64_PATH=libcupti-trace.so (no change to the program).
// SPDX-License-Identifier: Apache-2.0
//
// Why not nsys: on the GPU host nsys records (.qdstrm) but cannot make a report ("Unable to
// retrieve the importer version"), so kernel durations per op come from CUPTI's activity records
// here, the same source nsys reads.
//
// CUTRACE=kernels: every kernel's start and end (CLOCK_REALTIME ns), name, grid and block are kept
// in memory and written at exit to $CUTRACE_OUT.bin (records of two int64 and eight int32: start,
// end, name id, grid x/y/z, block x/y/z, 0) and $CUTRACE_OUT.names (demangled names, one a line,
// by id). bin-by-line.py groups them by the lines a program prints (Kaldi's speed tests).
// CUTRACE=api: every runtime and driver API call (enter and exit, CLOCK_REALTIME ns; its domain,
// callback id, nesting depth: a runtime call's driver calls are nested in it) kept per thread and
// written at exit to $CUTRACE_OUT.api.bin (int64 enter, int64 exit, int32 domain, cbid, depth,
// thread index) and $CUTRACE_OUT.api.names (domain, cbid, name per line); api-by-line.py counts
// them per line. The callbacks make each call dearer (both sides of a comparison alike): read the
// counts, and the time inside CUDA only as a share. "kernels,api" does both.
// CUTRACE=sync: prints the calling thread and a backtrace (module+offset, for addr2line) of every
// cuCtxSynchronize, which breaks any CUDA graph capture running at that moment; this found the
// library-handle destruction that invalidated captures of other threads.
// Thread-safety: CUPTI calls the buffer callbacks from its own thread; records are appended under
// a mutex.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <map>
#include <mutex>
#include <pthread.h>
#include <set>
#include <string>
#include <time.h>
#include <vector>

namespace {

struct Rec {
  unsigned long long start, end;
  int name;
  int grid[3], block[3];
};
std::mutex g_mu;
std::vector<Rec> g_recs;
std::map<std::string, int> g_name_ids;
std::vector<std::string> g_names;

void CUPTIAPI OnCall(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  auto* d = static_cast<const CUpti_CallbackData*>(data);
  if (d->callbackSite != CUPTI_API_ENTER) return;
  void* frames[40];
  int n = backtrace(frames, 40);
  std::string out = "CUTRACE cuCtxSynchronize thread " +
                    std::to_string(static_cast<unsigned long>(pthread_self())) + "\n";
  for (int i = 0; i < n; ++i) {
    Dl_info info;
    char line[1024];
    if (dladdr(frames[i], &info) && info.dli_fname) {
      std::string sym = info.dli_sname ? info.dli_sname : "?";
      int status = 0;
      char* dem = abi::__cxa_demangle(sym.c_str(), nullptr, nullptr, &status);
      if (status == 0 && dem) sym = dem;
      free(dem);
      snprintf(line, sizeof line, "  #%d %s+0x%lx %s\n", i, info.dli_fname,
               (unsigned long)((char*)frames[i] - (char*)info.dli_fbase),
               sym.substr(0, 200).c_str());
    } else {
      snprintf(line, sizeof line, "  #%d %p\n", i, frames[i]);
    }
    out += line;
  }
  fputs(out.c_str(), stderr);
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && r->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(r);
    std::string name = k->name ? k->name : "?";
    auto it = g_name_ids.find(name);
    int id;
    if (it == g_name_ids.end()) {
      id = static_cast<int>(g_names.size());
      g_name_ids[name] = id;
      g_names.push_back(name);
    } else {
      id = it->second;
    }
    g_recs.push_back(
        {k->start, k->end, id, {k->gridX, k->gridY, k->gridZ}, {k->blockX, k->blockY, k->blockZ}});
  }
  free(buffer);
}

long long NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

// CUTRACE=api: one buffer per thread, registered once; written at exit (the program's threads
// have stopped calling CUDA by then, or their last calls are cut off).
struct ApiRec {
  long long enter, exit;
  int domain, cbid, depth, thread;
};
struct ApiThread {
  std::vector<ApiRec> recs;
  size_t open[16];
  int depth = 0;
  int index = 0;
};
std::vector<ApiThread*> g_api_threads;
thread_local ApiThread* t_api = nullptr;

void CUPTIAPI OnApi(void*, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void* data) {
  auto* d = static_cast<const CUpti_CallbackData*>(data);
  if (t_api == nullptr) {
    t_api = new ApiThread;
    t_api->recs.reserve(1 << 20);
    std::lock_guard<std::mutex> lock(g_mu);
    t_api->index = static_cast<int>(g_api_threads.size());
    g_api_threads.push_back(t_api);
  }
  ApiThread& t = *t_api;
  if (d->callbackSite == CUPTI_API_ENTER) {
    if (t.depth < 16) t.open[t.depth] = t.recs.size();
    t.recs.push_back({NowNs(), 0, static_cast<int>(dom), static_cast<int>(id), t.depth, t.index});
    ++t.depth;
  } else if (t.depth > 0) {
    --t.depth;
    if (t.depth < 16) t.recs[t.open[t.depth]].exit = NowNs();
  }
}

void WriteApi() {
  const char* path = getenv("CUTRACE_OUT");
  std::string base = path ? path : "cutrace";
  std::lock_guard<std::mutex> lock(g_mu);
  FILE* f = fopen((base + ".api.bin").c_str(), "wb");
  if (!f) return;
  std::set<std::pair<int, int>> seen;  // (domain, cbid) of the calls written
  size_t n = 0;
  for (ApiThread* t : g_api_threads)
    for (const ApiRec& r : t->recs) {
      long long ee[2] = {r.enter, r.exit};
      int rest[4] = {r.domain, r.cbid, r.depth, r.thread};
      fwrite(ee, sizeof ee, 1, f);
      fwrite(rest, sizeof rest, 1, f);
      seen.insert({r.domain, r.cbid});
      ++n;
    }
  fclose(f);
  FILE* names = fopen((base + ".api.names").c_str(), "w");
  if (!names) return;
  for (const auto& key : seen) {
    const char* name = nullptr;
    cuptiGetCallbackName(static_cast<CUpti_CallbackDomain>(key.first), key.second, &name);
    fprintf(names, "%d\t%d\t%s\n", key.first, key.second, name ? name : "?");
  }
  fclose(names);
  fprintf(stderr, "CUTRACE wrote %zu API calls\n", n);
}

long long g_offset_ns = 0;  // CLOCK_REALTIME ns minus CUPTI's timestamp, read at start

void NoteOffset() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  g_offset_ns = NowNs() - (long long)t;
}

// Raw records: CUTRACE_OUT.bin (start and end in CLOCK_REALTIME ns, name id, grid, block as
// int64 x 2 + int32 x 7 + pad) and CUTRACE_OUT.names (one demangled name per line, by id).
void WriteKernels() {
  cuptiActivityFlushAll(1);
  const char* path = getenv("CUTRACE_OUT");
  std::string base = path ? path : "cutrace";
  std::lock_guard<std::mutex> lock(g_mu);
  FILE* f = fopen((base + ".bin").c_str(), "wb");
  if (!f) return;
  for (const Rec& r : g_recs) {
    long long se[2] = {(long long)r.start + g_offset_ns, (long long)r.end + g_offset_ns};
    int rest[8] = {r.name, r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2], 0};
    fwrite(se, sizeof se, 1, f);
    fwrite(rest, sizeof rest, 1, f);
  }
  fclose(f);
  FILE* n = fopen((base + ".names").c_str(), "w");
  for (const std::string& m : g_names) {
    int status = 0;
    char* dem = abi::__cxa_demangle(m.c_str(), nullptr, nullptr, &status);
    std::string name = status == 0 && dem ? dem : m;
    free(dem);
    for (char& c : name)
      if (c == '\n' || c == '\t') c = ' ';
    fprintf(n, "%s\n", name.substr(0, 400).c_str());
  }
  fclose(n);
  fprintf(stderr, "CUTRACE wrote %zu kernels\n", g_recs.size());
}

}  // namespace

extern "C" int InitializeInjection(void) {
  const char* mode = getenv("CUTRACE");
  if (mode && strcmp(mode, "sync") == 0) {
    CUpti_SubscriberHandle sub;
    if (cuptiSubscribe(&sub, &OnCall, nullptr) != CUPTI_SUCCESS) {
      fprintf(stderr, "CUTRACE: cuptiSubscribe failed\n");
      return 0;
    }
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize);
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2);
    fprintf(stderr, "CUTRACE: watching cuCtxSynchronize\n");
    return 1;
  }
  if (mode && strstr(mode, "kernels")) {
    cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    NoteOffset();
    atexit(WriteKernels);
    fprintf(stderr, "CUTRACE: tracing kernels\n");
  }
  if (mode && strstr(mode, "api")) {
    CUpti_SubscriberHandle sub;
    if (cuptiSubscribe(&sub, &OnApi, nullptr) != CUPTI_SUCCESS) {
      fprintf(stderr, "CUTRACE: cuptiSubscribe failed\n");
      return 0;
    }
    cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
    cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
    atexit(WriteApi);
    fprintf(stderr, "CUTRACE: tracing API calls\n");
  }
  return 1;
}
