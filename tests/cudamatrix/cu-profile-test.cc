// tests/cudamatrix/cu-profile-test.cc: per-op profiling: names, call counts, the verbose switch,
// the full-pool path, CuTimer/AccuProfile, graph captures and several threads.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-profile.h"

#include "base/error.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "tests/testing.h"

#include <future>
#include <gtest/gtest.h>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cuctx {
namespace {

// Calls of `name` in the profile (0 if absent).
int64 Calls(const std::map<std::string, CuProfileEntry>& profile, const std::string& name) {
  auto it = profile.find(name);
  return it == profile.end() ? 0 : it->second.calls;
}

int64 CallsNow(const std::string& name) {
  return Calls(CuDevice::Instantiate().GetProfile(), name);
}

// Runs each test at a chosen verbose level and restores the old one (and the pool limit).
class CuProfileTest : public ::testing::Test {
 protected:
  void SetUp() override { old_level_ = GetVerboseLevel(); }
  void TearDown() override {
    SetVerboseLevel(old_level_);
    internal::SetProfileEventPoolLimit(internal::kDefaultProfileEventPool);
  }

 private:
  int old_level_ = 0;
};

// Collects log lines while in scope.
class LogLines {
 public:
  LogLines() { old_ = SetLogHandler(&LogLines::Handle); }
  ~LogLines() { SetLogHandler(old_); }
  static std::string Text() {
    std::lock_guard<std::mutex> lock(Mutex());
    return Storage();
  }

 private:
  static std::mutex& Mutex() {
    static std::mutex mutex;
    return mutex;
  }
  static std::string& Storage() {
    static std::string text;
    return text;
  }
  static void Handle(const LogMessageEnvelope&, const char* message) {
    std::lock_guard<std::mutex> lock(Mutex());
    Storage() += message;
    Storage() += "\n";
  }
  LogHandler old_;
};

TEST_F(CuProfileTest, RecordsEachOpAtVerboseOne) {
  SetVerboseLevel(1);
  CuMatrix<float> x(17, 33), y(17, 33);
  CuVector<float> v(33), w(33);
  x.SetRandn();
  const std::map<std::string, CuProfileEntry> before = CuDevice::Instantiate().GetProfile();
  for (int i = 0; i < 3; ++i) y.Set(0.5f);
  for (int i = 0; i < 2; ++i) y.Sigmoid(x);
  v.AddVec(1.0f, w);
  const std::map<std::string, CuProfileEntry> after = CuDevice::Instantiate().GetProfile();
  EXPECT_EQ(Calls(after, "CuMatrix::Set") - Calls(before, "CuMatrix::Set"), 3);
  EXPECT_EQ(Calls(after, "CuMatrix::Sigmoid") - Calls(before, "CuMatrix::Sigmoid"), 2);
  EXPECT_EQ(Calls(after, "CuVector::AddVec") - Calls(before, "CuVector::AddVec"), 1);
  EXPECT_GE(after.at("CuMatrix::Sigmoid").seconds, 0.0);

  LogLines log;
  CuDevice::Instantiate().PrintProfile();
  const std::string text = LogLines::Text();
  EXPECT_NE(text.find("CuMatrix::Sigmoid"), std::string::npos) << text;
  EXPECT_NE(text.find("us/call"), std::string::npos) << text;
}

TEST_F(CuProfileTest, RecordsNothingAtVerboseZero) {
  SetVerboseLevel(0);
  CuMatrix<float> x(8, 8);
  const int64 before = CallsNow("CuMatrix::Scale");
  for (int i = 0; i < 5; ++i) x.Scale(2.0f);
  EXPECT_EQ(CallsNow("CuMatrix::Scale"), before);
  CuTimer timer;
  EXPECT_FALSE(timer.Active());
  CuDevice::Instantiate().AccuProfile("CuProfileTest::Inactive", timer);
  EXPECT_EQ(CallsNow("CuProfileTest::Inactive"), 0);
}

TEST_F(CuProfileTest, FullPoolResolvesEveryCall) {
  SetVerboseLevel(1);
  // Eight events hold four ops in flight: each further op first resolves the completed ones
  // (or waits for the oldest).
  internal::SetProfileEventPoolLimit(8);
  CuMatrix<float> x(64, 64);
  CuTimer timer;  // holds one event of the pool all along
  const int64 before = CallsNow("CuMatrix::Add");
  for (int i = 0; i < 100; ++i) x.Add(1.0f);
  CuDevice::Instantiate().AccuProfile("CuProfileTest::Stretch", timer);
  EXPECT_EQ(CallsNow("CuMatrix::Add") - before, 100);
  EXPECT_EQ(CallsNow("CuProfileTest::Stretch"), 1);
}

TEST_F(CuProfileTest, AccuProfileCopiesTheName) {
  SetVerboseLevel(1);
  CuMatrix<float> x(32, 32);
  CuTimer timer;
  EXPECT_TRUE(timer.Active());
  x.Scale(3.0f);
  {
    std::string name = "CuProfileTest::Copied";
    CuDevice::Instantiate().AccuProfile(name.c_str(), timer);
    CuDevice::Instantiate().AccuProfile(name.c_str(), timer);
    name.assign(name.size(), 'x');  // the profile must have its own copy
  }
  const std::map<std::string, CuProfileEntry> profile = CuDevice::Instantiate().GetProfile();
  EXPECT_EQ(Calls(profile, "CuProfileTest::Copied"), 2);
  EXPECT_GE(profile.at("CuProfileTest::Copied").seconds, 0.0);
}

TEST_F(CuProfileTest, CaptureRecordsNothing) {
  SetVerboseLevel(1);
  CuMatrix<float> x(16, 16);
  const int64 before = CallsNow("CuMatrix::MulElements");
  CuGraph graph = CuGraph::Capture([&] { x.MulElements(x); });
  graph.Launch();
  graph.Launch();
  EXPECT_EQ(CallsNow("CuMatrix::MulElements"), before);
  x.MulElements(x);  // outside the capture it records again
  EXPECT_EQ(CallsNow("CuMatrix::MulElements"), before + 1);
}

TEST_F(CuProfileTest, TwoThreadsProfileAtOnce) {
  SetVerboseLevel(1);
  CuDevice::Instantiate().AllowMultithreading();
  const int64 scale_before = CallsNow("CuMatrix::Scale");
  const int64 add_before = CallsNow("CuVector::Add");
  internal::SetProfileEventPoolLimit(16);
  // Thread `a` exits before the profile is read (its records are folded at exit); thread `b` is
  // still alive, so GetProfile resolves its pending pairs from this thread.
  std::promise<void> b_done, b_may_exit;
  std::shared_future<void> may_exit = b_may_exit.get_future().share();
  std::thread a([] {
    CuMatrix<float> x(32, 32);
    for (int i = 0; i < 50; ++i) x.Scale(1.5f);
  });
  std::thread b([&] {
    CuVector<float> v(100);
    for (int i = 0; i < 70; ++i) v.Add(1.0f);
    b_done.set_value();
    may_exit.wait();
  });
  a.join();
  b_done.get_future().wait();
  EXPECT_EQ(CallsNow("CuMatrix::Scale") - scale_before, 50);
  EXPECT_EQ(CallsNow("CuVector::Add") - add_before, 70);
  b_may_exit.set_value();
  b.join();
  EXPECT_EQ(CallsNow("CuVector::Add") - add_before, 70);
}

}  // namespace
}  // namespace cuctx
