// tools/probes/resize-layers.cc: where the host time of Kaldi's TestCuMatrixResize goes, on a GPU
// host. For square float matrices of 16, 32, ..., 1024 rows and then double ones (Kaldi's order),
// ns per iteration of four loops, each the median of 5 batches of 20,000 iterations:
//   alloc   the device's caching allocator, MallocPitch + Free
//   device  CuDevice::MallocPitch + Free (the layer every CuMatrix uses)
//   matrix  a CuMatrix<Real>(dim, dim, kUndefined) made and destroyed
//   kaldi   the same with Kaldi's loop around it (a Timer read every iteration)
// The loops of one shape run one after the other, so all but the first reuse the block the
// first cut. Run it twice per process (`resize-layers 2`) to see a second pass over warm pools.
// Build against an installed cuctx (make install PREFIX=...):
//   g++ -O2 -std=c++17 -I$PREFIX/include/cuctx tools/probes/resize-layers.cc -L$PREFIX/lib \
//     -lcuctx -o resize-layers
// SPDX-License-Identifier: Apache-2.0
#include "base/timer.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kBatch = 20000;

// Median ns per iteration of `body` over 5 batches.
template <typename Body>
double MedianNs(Body&& body) {
  std::vector<double> ns;
  for (int batch = 0; batch < 5; ++batch) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i) body();
    const std::chrono::duration<double, std::nano> t = std::chrono::steady_clock::now() - t0;
    ns.push_back(t.count() / kBatch);
  }
  std::sort(ns.begin(), ns.end());
  return ns[2];
}

template <typename Real>
void Pass(const char* name) {
  using namespace cuctx;
  CuDevice& device = CuDevice::Instantiate();
  CuMemoryAllocator* allocator = device.Allocator();
  for (int dim = 16; dim <= 1024; dim *= 2) {
    const size_t row_bytes = dim * sizeof(Real);
    size_t pitch = 0;
    const double alloc =
        MedianNs([&] { allocator->Free(allocator->MallocPitch(row_bytes, dim, &pitch)); });
    const double dev = MedianNs([&] { device.Free(device.MallocPitch(row_bytes, dim, &pitch)); });
    const double matrix = MedianNs([&] { CuMatrix<Real> m(dim, dim, kUndefined); });
    Timer timer;
    double sink = 0;
    const double kaldi = MedianNs([&] {
      CuMatrix<Real> m(dim, dim, kUndefined);
      sink += timer.Elapsed();
    });
    std::printf("%-6s %4d  alloc %6.1f  device %6.1f  matrix %6.1f  kaldi %6.1f  (ns)%s\n", name,
                dim, alloc, dev, matrix, kaldi, sink < 0 ? " " : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int passes = argc > 1 ? std::atoi(argv[1]) : 1;
  cuctx::CuDevice::Instantiate().SelectGpuId("yes");
  for (int p = 1; p <= passes; ++p) {
    std::printf("pass %d\n", p);
    Pass<float>("float");
    Pass<double>("double");
  }
  return 0;
}
