// tools/probes/allocator-pair.cc: ns per MallocPitch+Free pair on a single-thread
// CuMemoryAllocator (the device's default options) over a host upstream with 2 MiB granules, in
// the order of Kaldi's TestCuMatrixResize: square float matrices of 16, 32, ..., 1024 rows, then
// double ones, each shape a loop of pairs. The float pass runs on a fresh allocator and the double
// pass after it, where each shape's block is cut from the freed blocks of the earlier shapes. No
// GPU needed. Build against the static libraries, and run old and new builds alternately
// (BENCHMARKS.md, run alloc-pair):
//   g++ -O2 -std=c++17 -I. -I/usr/local/cuda/include -DCUCTX_HAVE_CUDA=1 \
//     tools/probes/allocator-pair.cc build/release/lib/libcuctx-{cutool,cudamatrix,matrix}.a \
//     build/release/lib/libcuctx-{util,base}.a -L/usr/local/cuda/lib64 \
//     -lopenblas -lcusolver -lcusparse -lcurand -lcublas -lcudart -lm -ldl -pthread -o /tmp/pair
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cutool/host-allocator-upstream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

int main() {
  using namespace cuctx;
  auto upstream = std::make_unique<test::HostAllocatorUpstream>(size_t{4} << 30, size_t{2} << 20);
  CuMemoryAllocator allocator(CuDevice::AllocatorOptions(), std::move(upstream));
  for (size_t elem : {sizeof(float), sizeof(double)}) {
    std::printf("%-6s", elem == sizeof(float) ? "float" : "double");
    for (size_t dim = 16; dim <= 1024; dim *= 2) {
      // The median of 5 batches of 100,000 pairs.
      std::vector<double> ns;
      for (int batch = 0; batch < 5; ++batch) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 100000; ++i) {
          size_t pitch = 0;
          allocator.Free(allocator.MallocPitch(dim * elem, dim, &pitch));
        }
        const std::chrono::duration<double, std::nano> t = std::chrono::steady_clock::now() - t0;
        ns.push_back(t.count() / 100000);
      }
      std::sort(ns.begin(), ns.end());
      std::printf("  %zu: %5.1f", dim, ns[2]);
    }
    std::printf("  (ns per pair)\n");
  }
  return 0;
}
