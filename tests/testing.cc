// tests/testing.cc: the seed, edge shapes and index helpers declared in tests/testing.h.
// SPDX-License-Identifier: Apache-2.0
#include "tests/testing.h"

#include "cudamatrix/cu-device.h"

#include <cstdlib>

namespace cuctx {
namespace test {

uint64_t Seed() {
  static const uint64_t seed = [] {
    const char* env = std::getenv("CUCTX_TEST_SEED");
    return env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10) : 20261122ull;
  }();
  return seed;
}

const std::vector<Shape> kEdgeShapes = {{0, 0},    {0, 5},    {1, 1},   {17, 33}, {257, 3},
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

::testing::AssertionResult Contains(const std::string& text, const std::string& needle) {
  if (text.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << needle << "\" not found in: " << text;
}

std::string Bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

std::string Int32(int32_t value) { return Bytes({4}) + RawInt32(value); }

std::string RawInt32(int32_t value) {
  const uint32_t v = static_cast<uint32_t>(value);
  return Bytes({static_cast<int>(v & 0xff), static_cast<int>((v >> 8) & 0xff),
                static_cast<int>((v >> 16) & 0xff), static_cast<int>((v >> 24) & 0xff)});
}

namespace {

// The first n of the `width`-byte values in `all`, which holds six.
std::string FirstValues(const std::string& all, size_t width, int n) {
  if (n < 0 || n > 6) {
    ADD_FAILURE() << "OneToNBytes: n = " << n << " is outside 0..6";
    return "";
  }
  return all.substr(0, width * static_cast<size_t>(n));
}

}  // namespace

template <>
std::string OneToNBytes<float>(int n) {
  static const std::string kAll = Bytes({0x00, 0x00, 0x80, 0x3f,    // 1
                                         0x00, 0x00, 0x00, 0x40,    // 2
                                         0x00, 0x00, 0x40, 0x40,    // 3
                                         0x00, 0x00, 0x80, 0x40,    // 4
                                         0x00, 0x00, 0xa0, 0x40,    // 5
                                         0x00, 0x00, 0xc0, 0x40});  // 6
  return FirstValues(kAll, 4, n);
}

template <>
std::string OneToNBytes<double>(int n) {
  static const std::string kAll = Bytes({0, 0, 0, 0, 0, 0, 0xf0, 0x3f,    // 1
                                         0, 0, 0, 0, 0, 0, 0x00, 0x40,    // 2
                                         0, 0, 0, 0, 0, 0, 0x08, 0x40,    // 3
                                         0, 0, 0, 0, 0, 0, 0x10, 0x40,    // 4
                                         0, 0, 0, 0, 0, 0, 0x14, 0x40,    // 5
                                         0, 0, 0, 0, 0, 0, 0x18, 0x40});  // 6
  return FirstValues(kAll, 8, n);
}

}  // namespace test
}  // namespace cuctx
