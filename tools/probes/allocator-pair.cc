// tools/probes/allocator-pair.cc: ns per MallocPitch+Free pair of one shape on a single-thread
// CuMemoryAllocator (the device's default options) over a host upstream with 2 MiB granules,
// the loop of Kaldi's TestCuMatrixResize without the device. No GPU needed. Build against the
// static libraries and run old and new builds alternately (BENCHMARKS.md, run alloc-pair):
//   g++ -O2 -std=c++17 -I. -I/usr/local/cuda/include -DCUCTX_HAVE_CUDA=1 \
//     tools/probes/allocator-pair.cc build/release/lib/libcuctx-{cutool,cudamatrix,matrix}.a \
//     build/release/lib/libcuctx-{util,base}.a -L/usr/local/cuda/lib64 \
//     -lopenblas -lcusolver -lcusparse -lcurand -lcublas -lcudart -lm -ldl -pthread -o /tmp/pair
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cutool/host-allocator-upstream.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

int main(int argc, char** argv) {
  using namespace cuctx;
  const long n = argc > 1 ? std::atol(argv[1]) : 2000000;
  auto upstream = std::make_unique<test::HostAllocatorUpstream>(size_t{4} << 30, size_t{2} << 20);
  CuMemoryAllocator allocator(CuDevice::AllocatorOptions(), std::move(upstream));
  for (int dim : {16, 256, 1024}) {
    size_t pitch = 0;
    allocator.Free(allocator.MallocPitch(dim * sizeof(double), dim, &pitch));  // first growth
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i)
      allocator.Free(allocator.MallocPitch(dim * sizeof(double), dim, &pitch));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("dim %4d: %6.1f ns per MallocPitch+Free\n", dim, s / n * 1e9);
  }
  return 0;
}
