// tests/cudamatrix/cu-allocator-options-test.cc: CuAllocatorOptions: registration and checks.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "base/options-itf.h"
#include "cudamatrix/cu-allocator.h"
#include "tests/cudamatrix/cu-allocator-testing.h"
#include "tests/testing.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace cuctx {
namespace {

using test::kMiB;
using test::MakeHarness;

// ---- options
// -------------------------------------------------------------------------------------

class RecordingOptions : public OptionsItf {
 public:
  void Register(const std::string& name, bool*, const std::string&) override {
    names.push_back(name);
  }
  void Register(const std::string& name, int32*, const std::string&) override {
    names.push_back(name);
  }
  void Register(const std::string& name, uint32*, const std::string&) override {
    names.push_back(name);
  }
  void Register(const std::string& name, float*, const std::string&) override {
    names.push_back(name);
  }
  void Register(const std::string& name, double*, const std::string&) override {
    names.push_back(name);
  }
  void Register(const std::string& name, std::string*, const std::string&) override {
    names.push_back(name);
  }
  std::vector<std::string> names;
};

TEST(CuMemoryAllocatorTest, OptionsRegisterAndCheck) {
  CuAllocatorOptions o;
  RecordingOptions r;
  o.Register(&r);
  for (const char* name : {"cuda-cache-memory", "cuda-memory-proportion", "cuda-region-quantum-mb",
                           "cuda-allocator-thread-affinity", "cuda-allocator-thread-cache-mb",
                           "cuda-allocator-thread-cache-large-blocks", "cuda-allocator-trace"})
    EXPECT_NE(std::find(r.names.begin(), r.names.end(), name), r.names.end()) << name;
  EXPECT_NO_THROW(o.Check());
  o.memory_proportion = 1.5f;
  EXPECT_THROW(o.Check(), Error);
  o.memory_proportion = 0.5f;
  o.region_quantum_mb = 0;
  EXPECT_THROW(o.Check(), Error);
  EXPECT_THROW(MakeHarness(kMiB, o), Error);
  o.region_quantum_mb = 32;
  o.thread_cache_large_blocks = -1;
  EXPECT_THROW(o.Check(), Error);
  o.thread_cache_large_blocks = 65;
  EXPECT_THROW(o.Check(), Error);
  o.thread_cache_large_blocks = 64;
  EXPECT_NO_THROW(o.Check());
  CuAllocatorOptions t;
  t.trace_file = "/nonexistent/dir/trace.txt";
  EXPECT_THROW(MakeHarness(kMiB, t), Error);
}

}  // namespace
}  // namespace cuctx
