// tests/testing.cc: the seed, edge shapes and index helpers declared in tests/testing.h.
// SPDX-License-Identifier: Apache-2.0
#include "tests/testing.h"

#include <cstdlib>

#include "cudamatrix/cu-device.h"

namespace cuctx {
namespace test {

uint64_t Seed() {
  static const uint64_t seed = [] {
    const char* env = std::getenv("CUCTX_TEST_SEED");
    return env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10) : 20261122ull;
  }();
  return seed;
}

const std::vector<Shape> kEdgeShapes = {{0, 0}, {0, 5}, {1, 1},   {17, 33}, {257, 3},
                                        {1, 4097}, {4097, 1}, {64, 64}, {5, 130}};

std::vector<int32_t> RandomIndices(int count, int n, bool allow_minus_one, Rng* rng) {
  std::vector<int32_t> out(count);
  for (int i = 0; i < count; ++i) {
    if (n == 0 || (allow_minus_one && rng->Uniform() < 0.2))
      out[i] = -1;
    else
      out[i] = static_cast<int32_t>(rng->Int(0, n - 1));
  }
  return out;
}

std::string GpuMode() {
  const char* env = std::getenv("CUCTX_TEST_GPU");
  return env != nullptr && *env != '\0' ? env : "optional";
}

bool GpuEnabled() { return CuDevice::Instantiate().Enabled(); }

}  // namespace test
}  // namespace cuctx
