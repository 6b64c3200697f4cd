// bin/bench-table.h: the result table shared by the bin/*-bench tools (one row per cuctx figure
// against a baseline measured in the same run), plus small timing helpers.
// SPDX-License-Identifier: Apache-2.0
//
// Header-only; Table is used by one thread of a benchmark tool at a time, ThreadBarrier by all the
// threads of a multi-GPU one.
#ifndef CUCTX_BIN_BENCH_TABLE_H_
#define CUCTX_BIN_BENCH_TABLE_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {
namespace bench {

inline double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A reusable barrier for a fixed number of threads (std::barrier is C++20). Cancel() releases
// every waiter, now and later, with false: a thread that fails cancels it so that the others stop
// instead of waiting for it forever.
class ThreadBarrier {
 public:
  explicit ThreadBarrier(int n) : n_(n) {}
  // Blocks until all n threads have called Wait (true) or the barrier is cancelled (false).
  bool Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (cancelled_) return false;
    const long generation = generation_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return true;
    }
    cv_.wait(lock, [&] { return generation_ != generation || cancelled_; });
    return generation_ != generation;
  }
  void Cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const int n_;
  int waiting_ = 0;
  long generation_ = 0;
  bool cancelled_ = false;
};

inline double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

inline std::string SizeName(size_t bytes) {
  char buf[32];
  if (bytes >= (1u << 20))
    std::snprintf(buf, sizeof(buf), "%zuMiB", bytes >> 20);
  else if (bytes >= 1024)
    std::snprintf(buf, sizeof(buf), "%zuKiB", bytes >> 10);
  else
    std::snprintf(buf, sizeof(buf), "%zuB", bytes);
  return buf;
}

// One line of the final table: cuctx's figure against one baseline measured in the same run.
// `ratio` is always "how many times better cuctx is" (baseline time / cuctx time, or cuctx rate /
// baseline rate), so > 1 means cuctx wins.
struct Row {
  std::string group, case_name, metric;
  double cuctx;
  std::string baseline;
  double baseline_value;
  double ratio;
  std::string target;  // the target for this row, or ""
};

class Table {
 public:
  void Add(Row row) {
    std::printf("  %-10s %-30s %-14s cuctx %-10.4g %-22s %-10.4g ratio %.2f\n", row.group.c_str(),
                row.case_name.c_str(), row.metric.c_str(), row.cuctx, row.baseline.c_str(),
                row.baseline_value, row.ratio);
    std::fflush(stdout);
    rows_.push_back(std::move(row));
  }
  void Print(bool csv) const {
    if (csv) {
      std::printf("group,case,metric,cuctx,baseline,baseline_value,ratio,target\n");
      for (const Row& r : rows_)
        std::printf("%s,%s,%s,%.6g,%s,%.6g,%.4f,%s\n", r.group.c_str(), r.case_name.c_str(),
                    r.metric.c_str(), r.cuctx, r.baseline.c_str(), r.baseline_value, r.ratio,
                    r.target.c_str());
      return;
    }
    std::printf("\n%-10s | %-30s | %-16s | %10s | %-24s | %10s | %7s | %s\n", "group", "case",
                "metric", "cuctx", "baseline", "baseline", "ratio", "target");
    std::printf("%s\n", std::string(140, '-').c_str());
    for (const Row& r : rows_)
      std::printf("%-10s | %-30s | %-16s | %10.4g | %-24s | %10.4g | %7.2f | %s\n", r.group.c_str(),
                  r.case_name.c_str(), r.metric.c_str(), r.cuctx, r.baseline.c_str(),
                  r.baseline_value, r.ratio, r.target.c_str());
  }

 private:
  std::vector<Row> rows_;
};

}  // namespace bench
}  // namespace cuctx

#endif  // CUCTX_BIN_BENCH_TABLE_H_
