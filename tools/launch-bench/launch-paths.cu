// tools/launch-bench/launch-paths.cu: host cost of one small kernel launch by eleven paths
// (chevrons with and without cudaGetLastError, cudaLaunchKernel, cuLaunchKernel with a CUfunction,
// a CUkernel or a packed parameter buffer with either handle, per-thread, created and legacy
// streams, and the CUfunction found per launch in a table keyed by the current context's id or
// handle, as a per-context cache in cu-launch.cuh would find it: not built, see run `ctx-fn`),
// 16 rounds of 20,000 launches, order rotated, medians and paired ratios to chevrons +
// cudaGetLastError. Behind the choice of cudamatrix/cu-launch.cuh (BENCHMARKS.md, runs `launch`
// and `ctx-fn`). Build: build.sh.
// SPDX-License-Identifier: Apache-2.0
#include <cuda.h>
#include <cuda_runtime.h>

#include "tools/launch-bench/bench-kernel.cuh"
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
// A four-slot table from a context key to the kernel's CUfunction there, read as a lock-free cache
// would read it (acquire load of the key, then the function).
template <typename Key>
struct FnTable {
  std::atomic<Key> key[4] = {};
  std::atomic<CUfunction> fn[4] = {};
  CUfunction Find(Key k) const {
    for (int i = 0; i < 4; ++i) {
      const Key have = key[i].load(std::memory_order_acquire);
      if (have == k) return fn[i].load(std::memory_order_relaxed);
      if (have == Key()) break;
    }
    return nullptr;
  }
};

int main() {
  const int N = 20000;
  float* p;
  cudaMalloc(&p, 1 << 20);
  CUfunction f;
  cudaGetFuncBySymbol((cudaFunction_t*)&f, (const void*)K);
  cudaKernel_t kk;
  cudaGetKernel(&kk, (const void*)K);
  cudaStream_t cs;
  cudaStreamCreate(&cs);
  Dim d{16, 16, 16};
  const float* src = p;
  int ss = 16;
  float* dst = p + 4096;
  void* args[] = {&d, &src, &ss, &dst};
  // The packed parameter buffer: Dim (12 bytes) at 0, src at 16, ss at 24, dst at 32; 40 bytes.
  alignas(8) char buf[40];
  memcpy(buf, &d, 12);
  memcpy(buf + 16, &src, 8);
  memcpy(buf + 24, &ss, 4);
  memcpy(buf + 32, &dst, 8);
  size_t bsz = 40;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bsz,
                   CU_LAUNCH_PARAM_END};
  dim3 g(1, 1), b(16, 16);
  // Each table holds an unrelated entry first, so a launch scans two slots.
  FnTable<unsigned long long> by_id;
  FnTable<CUcontext> by_ctx;
  unsigned long long ctx_id = 0;
  CUcontext ctx = nullptr;
  cuCtxGetId(nullptr, &ctx_id);
  cuCtxGetCurrent(&ctx);
  CUfunction kf = nullptr;
  cuKernelGetFunction(&kf, (CUkernel)kk);
  by_id.fn[0] = nullptr;
  by_id.key[0] = ~0ull;
  by_id.fn[1] = kf;
  by_id.key[1] = ctx_id;
  by_ctx.fn[0] = nullptr;
  by_ctx.key[0] = reinterpret_cast<CUcontext>(~uintptr_t(0));
  by_ctx.fn[1] = kf;
  by_ctx.key[1] = ctx;
  const char* names[] = {"chevron+gle perthread",
                         "cuLaunchKernel CUfunction perthread",
                         "cuLaunchKernel CUkernel perthread",
                         "cuLaunchKernel CUfunction packed-buffer",
                         "cuLaunchKernel CUfunction created-stream",
                         "chevron+gle created-stream",
                         "cudaLaunchKernel perthread no-gle",
                         "cuLaunchKernel CUfunction legacy-stream",
                         "cuLaunchKernel table by cuCtxGetId",
                         "cuLaunchKernel table by cuCtxGetCurrent",
                         "cuLaunchKernel CUkernel packed-buffer"};
  const int M = 11;
  auto one = [&](int m) -> int {
    switch (m) {
      case 0:
        K<<<g, b, 0, cudaStreamPerThread>>>(d, src, ss, dst);
        return cudaGetLastError();
      case 1:
        return cuLaunchKernel(f, 1, 1, 1, 16, 16, 1, 0, CU_STREAM_PER_THREAD, args, nullptr);
      case 2:
        return cuLaunchKernel((CUfunction)kk, 1, 1, 1, 16, 16, 1, 0, CU_STREAM_PER_THREAD, args,
                              nullptr);
      case 3:
        return cuLaunchKernel(f, 1, 1, 1, 16, 16, 1, 0, CU_STREAM_PER_THREAD, nullptr, extra);
      case 4:
        return cuLaunchKernel(f, 1, 1, 1, 16, 16, 1, 0, (CUstream)cs, args, nullptr);
      case 5:
        K<<<g, b, 0, cs>>>(d, src, ss, dst);
        return cudaGetLastError();
      case 6:
        return cudaLaunchKernel((const void*)K, g, b, args, 0, cudaStreamPerThread);
      case 7:
        return cuLaunchKernel(f, 1, 1, 1, 16, 16, 1, 0, (CUstream)0, args, nullptr);
      case 8: {
        unsigned long long id = 0;
        cuCtxGetId(nullptr, &id);
        return cuLaunchKernel(by_id.Find(id), 1, 1, 1, 16, 16, 1, 0, CU_STREAM_PER_THREAD, args,
                              nullptr);
      }
      case 9: {
        CUcontext c = nullptr;
        cuCtxGetCurrent(&c);
        return cuLaunchKernel(by_ctx.Find(c), 1, 1, 1, 16, 16, 1, 0, CU_STREAM_PER_THREAD, args,
                              nullptr);
      }
      case 10:
        return cuLaunchKernel((CUfunction)kk, 1, 1, 1, 16, 16, 1, 0, CU_STREAM_PER_THREAD, nullptr,
                              extra);
    }
    return 0;
  };
  for (int m = 0; m < M; ++m)
    for (int i = 0; i < 200; ++i)
      if (one(m)) {
        printf("mode %d failed\n", m);
        return 1;
      }
  cudaDeviceSynchronize();
  std::vector<double> tot[M];
  for (int round = 0; round < 16; ++round)
    for (int k = 0; k < M; ++k) {
      int m = (k + round) % M;
      double t0 = now();
      for (int i = 0; i < N; ++i) one(m);
      cudaDeviceSynchronize();
      tot[m].push_back((now() - t0) / N * 1e6);
    }
  for (int m = 0; m < M; ++m) {
    std::vector<double> r;
    for (size_t i = 0; i < tot[m].size(); ++i) r.push_back(tot[m][i] / tot[0][i]);
    std::sort(tot[m].begin(), tot[m].end());
    std::sort(r.begin(), r.end());
    printf(
        "%-42s median %.3f us (q1 %.3f q3 %.3f); paired ratio to chevron+gle median %.3f (q1 %.3f "
        "q3 %.3f)\n",
        names[m], tot[m][8], tot[m][4], tot[m][12], r[8], r[4], r[12]);
  }
  return 0;
}
