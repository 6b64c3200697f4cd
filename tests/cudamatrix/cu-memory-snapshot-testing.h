// tests/cudamatrix/cu-memory-snapshot-testing.h: helpers shared by the memory snapshot tests
// (cu-allocator-snapshot-test.cc, cu-device-snapshot-test.cc): a temporary pickle path, and the
// Python checker (tests/check-memory-snapshot.py) run on a written snapshot.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_TESTS_CUDAMATRIX_CU_MEMORY_SNAPSHOT_TESTING_H_
#define CUCTX_TESTS_CUDAMATRIX_CU_MEMORY_SNAPSHOT_TESTING_H_

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace cuctx {
namespace test {

inline bool HavePython() {
  static const bool have = std::system("python3 -c 'import pickle' >/dev/null 2>&1") == 0;
  return have;
}

inline std::string SnapshotTempPath(const std::string& name) {
  return "/tmp/cuctx-snapshot-test-" + std::to_string(getpid()) + "-" + name + ".pickle";
}

// Runs the Python checker on `path` with `flags`; true when it passes (or python3 is missing, or
// the test does not run from the source tree's root, where `make test` and tools/gpu-test.sh run
// it: both say so).
inline ::testing::AssertionResult PythonAccepts(const std::string& path,
                                                const std::string& flags = "") {
  if (!HavePython()) {
    std::printf("  python3 not found: %s not read back\n", path.c_str());
    return ::testing::AssertionSuccess();
  }
  if (std::ifstream("tests/check-memory-snapshot.py").fail()) {
    std::printf(
        "  tests/check-memory-snapshot.py not found (not run from the source tree's root): "
        "%s not read back\n",
        path.c_str());
    return ::testing::AssertionSuccess();
  }
  const std::string cmd =
      "python3 tests/check-memory-snapshot.py " + flags + " '" + path + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return ::testing::AssertionFailure() << "cannot run " << cmd;
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  const int rc = pclose(p);
  std::printf("  %s", out.c_str());
  if (rc != 0) return ::testing::AssertionFailure() << cmd << ": " << out;
  return ::testing::AssertionSuccess();
}

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_CUDAMATRIX_CU_MEMORY_SNAPSHOT_TESTING_H_
