// bin/bench-table.h: the result table shared by the bin/*-bench tools (one row per cuctx figure
// against a baseline measured in the same run), plus small timing helpers.
// SPDX-License-Identifier: Apache-2.0
//
// Header-only; used by one thread of a benchmark tool at a time.
#ifndef CUCTX_BIN_BENCH_TABLE_H_
#define CUCTX_BIN_BENCH_TABLE_H_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {
namespace bench {

inline double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
