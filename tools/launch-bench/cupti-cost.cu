// tools/launch-bench/cupti-cost.cu: launch cost with and without a CUPTI subscriber (cuctx's capture
// watch set, runtime or driver ids only, a resource callback only), and whether the resource
// domain's GRAPH_CREATED fires at cudaStreamBeginCapture / cuStreamBeginCapture and at a
// cross-stream join. `cupti-cost N` runs mode N alone (one mode per process); `cupti-cost domains`
// checks which domain sees a capture begun through the runtime. Build: build.sh.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-capture-watch-calls.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include "tools/launch-bench/bench-kernel.cuh"
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cupti.h>
#include <string>
#include <thread>
#include <vector>
std::atomic<int> hits{0};
thread_local int t_hits = 0;
void CUPTIAPI Cb(void*, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void*) {
  ++hits;
  ++t_hits;
}
CUpti_SubscriberHandle sub;
void Enable(int mode) {
  if (mode == 0) return;
  if (cuptiSubscribe(&sub, Cb, nullptr) != CUPTI_SUCCESS) {
    printf("subscribe failed\n");
    exit(1);
  }
  if (mode == 1 || mode == 3)
    for (auto id : cuctx::internal::kCaptureWatchDriverCalls)
      cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
  if (mode == 1 || mode == 2)
    for (auto id : cuctx::internal::kCaptureWatchRuntimeCalls)
      cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
  if (mode == 4)
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPH_CREATED);
  if (mode == 5) {
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent);
  }
}
void Disable(int mode) {
  if (mode) cuptiUnsubscribe(sub);
}
// `cupti-cost domains`: with only the driver ids of cuctx's set enabled (mode 3), does a capture
// begun or joined through the runtime (cudaStreamBeginCapture, cudaStreamWaitEvent) reach the
// callback, on the calling thread? Prints the hits per call.
int CheckDomains() {
  Enable(3);
  std::thread th([] {
    cudaSetDevice(0);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    int before = t_hits;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    printf("driver ids only: cudaStreamBeginCapture -> %d callback(s) on this thread\n",
           t_hits - before);
    cudaEvent_t e;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    cudaEventRecord(e, s);
    before = t_hits;
    cudaStreamWaitEvent(cudaStreamPerThread, e, 0);
    printf("driver ids only: cudaStreamWaitEvent -> %d callback(s) on this thread\n",
           t_hits - before);
    cudaEventRecord(e, cudaStreamPerThread);
    cudaStreamWaitEvent(s, e, 0);
    cudaGraph_t gr;
    cudaStreamEndCapture(s, &gr);
    before = t_hits;
    cuStreamBeginCapture((CUstream)s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    printf("driver ids only: cuStreamBeginCapture -> %d callback(s) on this thread\n",
           t_hits - before);
    cuStreamEndCapture((CUstream)s, (CUgraph*)&gr);
  });
  th.join();
  Disable(3);
  return 0;
}

int main(int argc, char** argv) {
  const int N = 20000;
  if (argc > 1 && std::string(argv[1]) == "domains") return CheckDomains();
  const int only = argc > 1 ? atoi(argv[1]) : -1;
  float* p;
  cudaMalloc(&p, 1 << 20);
  cudaKernel_t kk;
  cudaGetKernel(&kk, (const void*)K);
  Dim d{16, 16, 16};
  const float* src = p;
  int ss = 16;
  float* dst = p + 4096;
  void* args[] = {&d, &src, &ss, &dst};
  dim3 g(1, 1), b(16, 16);
  const char* names[] = {
      "no subscriber",     "cuctx set (driver+runtime)",  "runtime cbids only",
      "driver cbids only", "resource GRAPH_CREATED only", "one driver cbid (cuStreamWaitEvent)"};
  const int M = 6;
  std::vector<double> tl[M], tc[M], tm[M];
  for (int i = 0; i < 500; ++i)
    cuLaunchKernel((CUfunction)kk, 1, 1, 1, 16, 16, 1, 0, CU_STREAM_PER_THREAD, args, nullptr);
  cudaDeviceSynchronize();
  // Microseconds per launch of N launches through the driver with the CUkernel, or through the
  // chevrons with cudaGetLastError, each batch followed by a wait.
  auto time_driver = [&] {
    const double t0 = now();
    for (int i = 0; i < N; ++i)
      cuLaunchKernel((CUfunction)kk, 1, 1, 1, 16, 16, 1, 0, CU_STREAM_PER_THREAD, args, nullptr);
    cudaDeviceSynchronize();
    return (now() - t0) / N * 1e6;
  };
  auto time_chevron = [&] {
    const double t0 = now();
    for (int i = 0; i < N; ++i) {
      K<<<g, b, 0, cudaStreamPerThread>>>(d, src, ss, dst);
      cudaGetLastError();
    }
    cudaDeviceSynchronize();
    return (now() - t0) / N * 1e6;
  };
  if (only >= 0) {
    Enable(only);
    std::vector<double> a, c;
    for (int rep = 0; rep < 9; ++rep) {
      a.push_back(time_driver());
      c.push_back(time_chevron());
    }
    std::sort(a.begin(), a.end());
    std::sort(c.begin(), c.end());
    printf("process mode %d (%s): cuLaunchKernel %.3f us chevron %.3f us\n", only, names[only],
           a[4], c[4]);
    return 0;
  }
  for (int round = 0; round < 12; ++round)
    for (int k = 0; k < M; ++k) {
      int m = (k + round) % M;
      Enable(m);
      tl[m].push_back(time_driver());
      tc[m].push_back(time_chevron());
      const double t0 = now();
      for (int i = 0; i < N; ++i) cudaMemsetAsync(dst, 0, 1024, cudaStreamPerThread);
      cudaDeviceSynchronize();
      tm[m].push_back((now() - t0) / N * 1e6);
      Disable(m);
    }
  for (int m = 0; m < M; ++m) {
    std::vector<double> r1, r2, r3;
    for (size_t i = 0; i < tl[m].size(); ++i) {
      r1.push_back(tl[m][i] / tl[0][i]);
      r2.push_back(tc[m][i] / tc[0][i]);
      r3.push_back(tm[m][i] / tm[0][i]);
    }
    for (auto* v : {&tl[m], &tc[m], &tm[m], &r1, &r2, &r3}) std::sort(v->begin(), v->end());
    printf(
        "%-38s cuLaunchKernel %.3f us (x%.3f)  chevron %.3f us (x%.3f)  memsetAsync %.3f us "
        "(x%.3f)\n",
        names[m], tl[m][6], r1[6], tc[m][6], r2[6], tm[m][6], r3[6]);
  }
  // Does GRAPH_CREATED fire at begin capture, and on which thread?
  Enable(4);
  for (int api = 0; api < 2; ++api) {
    std::thread th([&] {
      cudaSetDevice(0);
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      int before = t_hits, global_before = hits.load();
      if (api == 0)
        cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      else
        cuStreamBeginCapture((CUstream)s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      int at_begin = t_hits - before, global_at_begin = hits.load() - global_before;
      K<<<g, b, 0, s>>>(d, src, ss, dst);
      cudaGraph_t gr;
      cudaStreamEndCapture(s, &gr);
      cudaGraphExec_t ge;
      cudaGraphInstantiate(&ge, gr, 0);
      printf(
          "%s: GRAPH_CREATED on this thread at begin: %d (all threads %d); after end+instantiate: "
          "%d\n",
          api ? "cuStreamBeginCapture" : "cudaStreamBeginCapture", at_begin, global_at_begin,
          t_hits - before);
      // cross-stream join: per-thread stream waits on an event of the capturing stream
      cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      int b2 = t_hits;
      cudaEvent_t e;
      cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
      cudaEventRecord(e, s);
      cudaStreamWaitEvent(cudaStreamPerThread, e, 0);
      cudaStreamCaptureStatus st;
      cudaStreamIsCapturing(cudaStreamPerThread, &st);
      printf(
          "  join via cudaStreamWaitEvent: per-thread stream capturing=%d, GRAPH_CREATED hits "
          "since begin: %d\n",
          (int)st, t_hits - b2);
      K<<<g, b, 0, cudaStreamPerThread>>>(d, src, ss, dst);
      cudaEventRecord(e, cudaStreamPerThread);
      cudaStreamWaitEvent(s, e, 0);
      cudaStreamEndCapture(s, &gr);
    });
    th.join();
  }
  Disable(4);
  return 0;
}
