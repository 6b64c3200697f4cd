// tests/cudamatrix/cu-allocator-options-parse-test.cc: the allocator's --cuda-* options are checked when
// they are parsed, without a GPU.
// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"
#include "base/parse-options.h"
#include "cudamatrix/cu-allocator-options.h"
#include "tests/testing.h"

#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

namespace cuctx {
namespace {

// Parses {"prog", args...} into *o through a fresh ParseOptions.
void Parse(std::vector<std::string> args, CuAllocatorOptions* o) {
  ParseOptions po("test");
  std::ostringstream quiet;
  po.SetMessageStream(&quiet);
  o->Register(&po);
  args.insert(args.begin(), "prog");
  args.insert(args.begin() + 1, "--print-args=false");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  po.Read(static_cast<int>(argv.size()), argv.data());
}

// The text of the error Parse throws (a test failure if it throws none).
std::string ParseError(const std::vector<std::string>& args, CuAllocatorOptions* o) {
  return test::ErrorText([&] {
    test::QuietLog q;
    Parse(args, o);
  });
}

TEST(CuAllocatorOptionsTest, BadValuesAreRefusedWhenParsed) {
  struct Case {
    const char* arg;
    const char* needle;
  };
  const Case cases[] = {
      {"--cuda-allocator=foo", "invalid value 'foo' for option --cuda-allocator"},
      {"--cuda-allocator-upstream=mmap",
       "invalid value 'mmap' for option --cuda-allocator-upstream"},
      {"--cuda-memory-proportion=-1", "invalid value -1 for option --cuda-memory-proportion"},
      {"--cuda-memory-proportion=1", "for option --cuda-memory-proportion: expected a fraction"},
      {"--cuda-region-quantum-mb=-5", "invalid value -5 for option --cuda-region-quantum-mb"},
      {"--cuda-region-quantum-mb=0", "option --cuda-region-quantum-mb"},
      {"--cuda-allocator-thread-cache-mb=-1", "option --cuda-allocator-thread-cache-mb"},
      {"--cuda-allocator-thread-cache-large-blocks=65",
       "option --cuda-allocator-thread-cache-large-blocks"},
  };
  for (const Case& c : cases) {
    CuAllocatorOptions o;
    const std::string text = ParseError({c.arg}, &o);
    EXPECT_TRUE(test::Contains(text, c.needle)) << c.arg << ": '" << text << "'";
    EXPECT_FALSE(test::Contains(text, "Check failed")) << text;
  }
  CuAllocatorOptions o;
  EXPECT_TRUE(test::Contains(ParseError({"--cuda-allocator=foo", "--cuda-memory-proportion=-1",
                                         "--cuda-region-quantum-mb=-5"},
                                        &o),
                             "--cuda-allocator"));
}

TEST(CuAllocatorOptionsTest, GoodValuesParse) {
  CuAllocatorOptions o;
  EXPECT_NO_THROW(Parse(
      {"--cuda-allocator=async", "--cuda-allocator-upstream=cuda", "--cuda-memory-proportion=0.5",
       "--cuda-region-quantum-mb=64", "--cuda-allocator-thread-cache-mb=0"},
      &o));
  EXPECT_EQ(o.backend, "async");
  EXPECT_EQ(o.upstream, "cuda");
  EXPECT_EQ(o.memory_proportion, 0.5f);
  EXPECT_EQ(o.region_quantum_mb, 64);
  EXPECT_EQ(o.thread_cache_mb, 0);
}

}  // namespace
}  // namespace cuctx
