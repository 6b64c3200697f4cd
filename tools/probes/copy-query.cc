// tools/probes/copy-query.cc: what asking CUDA whether host memory is page-locked costs, against
// the small copies it is asked for, on a GPU host. For pageable (malloc), cudaHostAlloc'd and
// cudaHostRegister'ed buffers, ns per call (median of 7 batches of 20,000 calls) of:
//   runtime  cudaPointerGetAttributes (what cuctx's IsPageLocked calls)
//   driver   cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
// with the type each reports, then ns per copy of 8 bytes and 4 KiB device->host
// (cudaMemcpyAsync + cudaStreamSynchronize on the per-thread stream, Kaldi's pattern) and of the
// same through cuctx::CopyDeviceToHost, and 4 KiB host->device through both.
// Build against an installed cuctx (make install PREFIX=...):
//   g++ -O2 -std=c++17 -I$PREFIX/include/cuctx -I/usr/local/cuda/include \
//     tools/probes/copy-query.cc -L$PREFIX/lib -lcuctx -L/usr/local/cuda/lib64 -lcudart -lcuda \
//     -o copy-query
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-copy.h"
#include "cudamatrix/cu-device.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

double NsPerCall(int calls, const std::function<void()>& f) {
  std::vector<double> batches;
  for (int b = 0; b < 7; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    const auto t1 = std::chrono::steady_clock::now();
    batches.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / calls);
  }
  std::sort(batches.begin(), batches.end());
  return batches[3];
}

}  // namespace

int main() {
  cuctx::CuDevice::Instantiate().SelectGpuId("yes");
  const size_t kBuf = 64 << 10;
  char* pageable = static_cast<char*>(std::malloc(kBuf));
  char* allocated = nullptr;
  cudaHostAlloc(reinterpret_cast<void**>(&allocated), kBuf, cudaHostAllocDefault);
  char* registered = static_cast<char*>(std::aligned_alloc(4096, kBuf));
  cudaHostRegister(registered, kBuf, cudaHostRegisterDefault);
  struct Buf {
    const char* name;
    char* p;
  } bufs[] = {{"pageable", pageable}, {"cudaHostAlloc", allocated}, {"registered", registered}};
  for (const Buf& b : bufs) {
    cudaPointerAttributes a{};
    cudaError_t re = cudaPointerGetAttributes(&a, b.p + 100);
    (void)cudaGetLastError();
    unsigned int type = 0;
    CUresult de = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        reinterpret_cast<CUdeviceptr>(b.p + 100));
    const double rt = NsPerCall(20000, [&] {
      cudaPointerAttributes x;
      if (cudaPointerGetAttributes(&x, b.p) != cudaSuccess) (void)cudaGetLastError();
    });
    const double dr = NsPerCall(20000, [&] {
      unsigned int t;
      cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                            reinterpret_cast<CUdeviceptr>(b.p));
    });
    std::printf(
        "%-14s runtime %7.1f ns (status %d, type %d)  driver %7.1f ns (status %d, type %u)\n",
        b.name, rt, static_cast<int>(re), static_cast<int>(a.type), dr, static_cast<int>(de), type);
  }
  void* dev = cuctx::CuDevice::Instantiate().Malloc(kBuf);
  for (size_t bytes : {size_t{8}, size_t{4096}}) {
    for (const Buf& b : bufs) {
      const double raw = NsPerCall(2000, [&] {
        cudaMemcpyAsync(b.p, dev, bytes, cudaMemcpyDeviceToHost, cudaStreamPerThread);
        cudaStreamSynchronize(cudaStreamPerThread);
      });
      const double cu = NsPerCall(2000, [&] { cuctx::CopyDeviceToHost(b.p, dev, bytes); });
      std::printf("D2H %5zu B %-14s cudaMemcpyAsync+sync %7.1f ns  cuctx %7.1f ns  ratio %.3f\n",
                  bytes, b.name, raw, cu, raw / cu);
    }
  }
  for (const Buf& b : bufs) {
    const double raw = NsPerCall(2000, [&] {
      cudaMemcpyAsync(dev, b.p, 4096, cudaMemcpyHostToDevice, cudaStreamPerThread);
      cudaStreamSynchronize(cudaStreamPerThread);
    });
    const double cu = NsPerCall(2000, [&] { cuctx::CopyHostToDevice(dev, b.p, 4096); });
    std::printf("H2D  4096 B %-14s cudaMemcpyAsync+sync %7.1f ns  cuctx %7.1f ns  ratio %.3f\n",
                b.name, raw, cu, raw / cu);
  }
  cuctx::CuDevice::Instantiate().Free(dev);
  return 0;
}
