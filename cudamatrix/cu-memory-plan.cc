// cudamatrix/cu-memory-plan.cc: CuMemoryPlan: reading a trace into buffers, greedy-by-size offset
// assignment, the lower bound, the independent check and the reports.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-memory-plan.h"

#include "base/error.h"
#include "base/timer.h"
#include "cudamatrix/cu-allocator.h"
#include "cudamatrix/internal/cu-allocator-trace.h"

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <istream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace cuctx {

static_assert(CuMemoryPlan::kAlignment == CuMemoryAllocator::kAlignment,
              "a plan must align as the allocator does");

namespace {

// The allocator refuses larger requests (kMaxRequestBytes in internal/cu-allocator.h, private
// to the allocator's files), so a trace cannot hold one; the bound also keeps pitch * num_rows
// from overflowing.
constexpr size_t kMaxBytes = size_t{1} << 46;

size_t RoundUpToAlignment(size_t n) {
  return (n + CuMemoryPlan::kAlignment - 1) / CuMemoryPlan::kAlignment * CuMemoryPlan::kAlignment;
}

std::string ThreadList(const std::vector<uint32>& threads) {
  std::ostringstream os;
  for (size_t i = 0; i < threads.size(); ++i) os << (i > 0 ? ", " : "") << threads[i];
  return os.str();
}

std::string Mib(size_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << bytes / 1048576.0 << " MiB";
  return os.str();
}

// Address ranges [lo, hi), sorted, disjoint and coalesced: touching ranges are merged, since a gap
// of 0 bytes holds nothing. Buffers are never unplaced, so a union needs no counts.
using Ranges = std::vector<std::pair<size_t, size_t>>;

void AddRange(size_t lo, size_t hi, Ranges* ranges) {
  auto first =
      std::partition_point(ranges->begin(), ranges->end(),
                           [&](const std::pair<size_t, size_t>& r) { return r.second < lo; });
  // A new range usually joins at most one or two islands, so this scan is short.
  auto last = first;
  while (last != ranges->end() && last->first <= hi) ++last;
  if (first == last) {
    ranges->emplace(first, lo, hi);
    return;
  }
  first->first = std::min(lo, first->first);
  first->second = std::max(hi, std::prev(last)->second);
  ranges->erase(std::next(first), last);
}

// Where the placed buffers are: rectangles [begin, end) x [offset, offset + size) over the
// (compressed) steps and the addresses, in a segment tree over the steps with `leaves_` (a power of
// two) leaves. A buffer is filed under the O(log n) nodes that tile its steps (cover_), and its
// address range is added to any_ of those nodes and of every node on the paths from its first and
// last leaf to the root. So any_[x] holds only buffers alive somewhere in x's steps, and every
// buffer filed at or below x; cover_[x] holds buffers alive at all of x's steps. The buffers alive somewhere in a query's steps are then exactly those in any_ of the
// query's tiling nodes or in cover_ of a node on the paths from the query's first and last leaf to
// the root (a node that holds part of the query and part outside it holds one of those leaves).
// Keeping unions instead of buffer lists is what makes this fast: a query reads O(log n) lists of
// islands (runs of adjacent buffers) rather than every buffer that overlaps it, and buffers alive
// together tend to be placed next to each other.
class Occupancy {
 public:
  explicit Occupancy(size_t num_steps) {
    while (leaves_ < num_steps) leaves_ *= 2;
    cover_.resize(2 * leaves_);
    any_.resize(2 * leaves_);
  }

  void Add(size_t begin, size_t end, size_t lo, size_t hi) {
    for (size_t l = begin + leaves_, r = end + leaves_; l < r; l /= 2, r /= 2) {
      if (l & 1) {
        AddRange(lo, hi, &cover_[l]);
        AddRange(lo, hi, &any_[l++]);
      }
      if (r & 1) {
        AddRange(lo, hi, &cover_[--r]);
        AddRange(lo, hi, &any_[r]);
      }
    }
    ForEachOnPaths(begin, end, 1, [&](size_t x) { AddRange(lo, hi, &any_[x]); });
  }

  // Sets *lists to the non-empty lists whose union is the address ranges of the buffers alive
  // somewhere in steps [begin, end).
  void Collect(size_t begin, size_t end, std::vector<const Ranges*>* lists) const {
    lists->clear();
    auto add = [&](const Ranges& ranges) {
      if (!ranges.empty()) lists->push_back(&ranges);
    };
    for (size_t l = begin + leaves_, r = end + leaves_; l < r; l /= 2, r /= 2) {
      if (l & 1) add(any_[l++]);
      if (r & 1) add(any_[--r]);
    }
    ForEachOnPaths(begin, end, 0, [&](size_t x) { add(cover_[x]); });
  }

 private:
  // Calls f once for each node on the paths from the leaves of steps `begin` and `end - 1` to the
  // root, leaving out the lowest `skip` levels.
  template <typename F>
  void ForEachOnPaths(size_t begin, size_t end, int skip, F f) const {
    size_t a = (begin + leaves_) >> skip, b = (end - 1 + leaves_) >> skip;
    for (; a >= 1; a /= 2, b /= 2) {
      f(a);
      if (b != a) f(b);
    }
  }

  size_t leaves_ = 1;
  std::vector<Ranges> cover_, any_;
};

// Computes unions of lists of Ranges, keeping its working space from one call to the next.
class RangeUnion {
 public:
  // The union of `lists` (each sorted and coalesced), sorted and coalesced; valid until the next
  // call. Merges the lists into the union one by one, shortest first: the lists overlap a lot
  // (the union is typically several times shorter than their total), so the running union stays
  // short and each merge costs little more than the list merged in.
  const Ranges& Of(const std::vector<const Ranges*>& lists) {
    if (lists.size() == 1) return *lists[0];
    sorted_.assign(lists.begin(), lists.end());
    std::sort(sorted_.begin(), sorted_.end(),
              [](const Ranges* x, const Ranges* y) { return x->size() < y->size(); });
    out_.clear();
    for (const Ranges* list : sorted_) {
      pool_.clear();
      Merge(out_.data(), out_.data() + out_.size(), list->data(), list->data() + list->size(),
            &pool_);
      out_.swap(pool_);
    }
    return out_;
  }

 private:
  using Range = std::pair<size_t, size_t>;
  // Appends the union of [a, a_end) and [b, b_end) to *out, coalesced.
  static void Merge(const Range* a, const Range* a_end, const Range* b, const Range* b_end,
                    Ranges* out) {
    const size_t start = out->size();
    auto push = [&](const Range& r) {
      if (out->size() > start && out->back().second >= r.first)
        out->back().second = std::max(out->back().second, r.second);
      else
        out->push_back(r);
    };
    while (a != a_end && b != b_end) push(a->first <= b->first ? *a++ : *b++);
    for (; a != a_end; ++a) push(*a);
    for (; b != b_end; ++b) push(*b);
  }

  Ranges out_, pool_;
  std::vector<const Ranges*> sorted_;
};

}  // namespace

CuMemoryPlan CuMemoryPlan::FromTrace(std::istream& trace, int32 thread) {
  CUCTX_CHECK(thread >= 0 || thread == kOnlyThread)
      << "memory plan: thread must be >= 0 or kOnlyThread, got " << thread;
  std::vector<uint32> threads;
  const std::vector<internal::TraceOp> ops = internal::ParseTrace(trace, &threads);
  if (threads.empty()) CUCTX_ERR << "allocator trace has no records: nothing to plan";
  uint32 selected = threads[0];
  if (thread == kOnlyThread) {
    if (threads.size() != 1)
      CUCTX_ERR << "allocator trace has records of " << threads.size() << " threads ("
                << ThreadList(threads)
                << "); a memory plan is for one thread: select one (--thread=N)";
  } else {
    selected = static_cast<uint32>(thread);
    if (std::find(threads.begin(), threads.end(), selected) == threads.end())
      CUCTX_ERR << "allocator trace has no records of thread " << thread
                << " (threads found: " << ThreadList(threads) << ")";
  }

  std::vector<Buffer> buffers;
  std::unordered_map<uint64, size_t> live;  // pointer id -> buffer, for the selected thread's ids
  int64 step = 0;
  for (const internal::TraceOp& op : ops) {
    if (op.kind == 's' || op.kind == 'd') continue;
    if (op.kind == 'f') {
      auto it = live.find(op.id);
      if (it != live.end()) {
        buffers[it->second].end = step;
        live.erase(it);
      }
    } else if (op.thread == selected && op.id != 0) {
      Buffer b;
      b.kind = op.kind;
      b.id = op.id;
      if (op.kind == 'm') {
        if (op.a > kMaxBytes)
          CUCTX_ERR << "allocator trace: request of " << op.a << " bytes (pointer id " << op.id
                    << ") is larger than the allocator serves (2^46 bytes)";
        b.bytes = op.a;
        b.size = RoundUpToAlignment(op.a);
      } else {
        b.row_bytes = op.a;
        b.num_rows = op.b;
        b.pitch = RoundUpToAlignment(std::min(op.a, kMaxBytes + 1));
        if (op.a > kMaxBytes || op.b > kMaxBytes / b.pitch)
          CUCTX_ERR << "allocator trace: pitched request of " << op.b << " rows of " << op.a
                    << " bytes (pointer id " << op.id
                    << ") is larger than the allocator serves (2^46 bytes)";
        b.bytes = op.a * op.b;
        b.size = b.pitch * op.b;
      }
      b.begin = step;
      live.emplace(op.id, buffers.size());
      buffers.push_back(b);
    }
    ++step;
  }
  for (const auto& entry : live) {
    buffers[entry.second].end = step;
    buffers[entry.second].freed = false;
  }
  return CuMemoryPlan(std::move(buffers));
}

CuMemoryPlan CuMemoryPlan::FromTraceFile(const std::string& path, int32 thread) {
  std::ifstream in(path);
  if (!in) CUCTX_ERR << "cannot open allocator trace '" << path << "'";
  return FromTrace(in, thread);
}

CuMemoryPlan CuMemoryPlan::FromIntervals(const std::vector<Interval>& intervals) {
  std::vector<Buffer> buffers(intervals.size());
  for (size_t i = 0; i < intervals.size(); ++i) {
    const Interval& in = intervals[i];
    CUCTX_CHECK(in.bytes > 0 && in.bytes <= kMaxBytes)
        << "memory plan: interval " << i << " has " << in.bytes << " bytes (must be in [1, 2^46])";
    CUCTX_CHECK(in.begin < in.end)
        << "memory plan: interval " << i << " is empty: [" << in.begin << ", " << in.end << ")";
    Buffer& b = buffers[i];
    b.kind = 'i';
    b.id = i;
    b.bytes = in.bytes;
    b.size = RoundUpToAlignment(in.bytes);
    b.begin = in.begin;
    b.end = in.end;
  }
  return CuMemoryPlan(std::move(buffers));
}

CuMemoryPlan::CuMemoryPlan(std::vector<Buffer> buffers) : buffers_(std::move(buffers)) {
  CUCTX_CHECK(buffers_.size() < std::numeric_limits<uint32>::max())
      << "memory plan: too many buffers (" << buffers_.size() << ")";
  size_t total = 0;
  for (const Buffer& b : buffers_) {
    CUCTX_CHECK(total <= std::numeric_limits<size_t>::max() - b.size)
        << "memory plan: the buffers' sizes add up to more than 2^64 bytes";
    total += b.size;
  }
  Plan();
}

void CuMemoryPlan::Plan() {
  Timer timer;
  const size_t n = buffers_.size();
  // Only the order of steps matters, so steps are renumbered densely; the trees then have O(n)
  // leaves whatever the steps were.
  std::vector<int64> steps;
  steps.reserve(2 * n);
  for (const Buffer& b : buffers_) {
    steps.push_back(b.begin);
    steps.push_back(b.end);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  auto dense = [&](int64 step) {
    return static_cast<size_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
  };
  std::vector<size_t> begin(n), end(n);
  for (size_t i = 0; i < n; ++i) {
    begin[i] = dense(buffers_[i].begin);
    end[i] = dense(buffers_[i].end);
  }

  // The lower bound: the largest sum of sizes alive at one step. Unsigned wrap-around in the
  // differences is harmless: every prefix sum is a true total.
  std::vector<size_t> delta(steps.size() + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    delta[begin[i]] += buffers_[i].size;
    delta[end[i]] -= buffers_[i].size;
  }
  size_t alive = 0;
  lower_bound_bytes_ = 0;
  for (size_t s : delta) lower_bound_bytes_ = std::max(lower_bound_bytes_, alive += s);

  // Places the buffers in `order`, each at the best-fitting gap among the placed buffers alive
  // with it; returns the peak and leaves the offsets in `offsets`.
  auto place = [&](const std::vector<uint32>& order, std::vector<size_t>* offsets) {
    Occupancy occupancy(steps.size());
    std::vector<const Ranges*> lists;
    RangeUnion union_of;
    size_t peak = 0;
    offsets->assign(n, 0);
    for (uint32 i : order) {
      const size_t size = buffers_[i].size;
      occupancy.Collect(begin[i], end[i], &lists);
      // The address ranges of the placed buffers alive with this one.
      const Ranges& near = union_of.Of(lists);
      // Best fit: the smallest gap between the ranges that holds this buffer (the lowest such
      // on a tie); `top` is the highest end so far, so only true gaps of the union count.
      size_t top = 0, best = 0, best_waste = std::numeric_limits<size_t>::max();
      bool found = false;
      for (const auto& range : near) {
        if (range.first > top && range.first - top >= size &&
            range.first - top - size < best_waste) {
          best = top;
          best_waste = range.first - top - size;
          found = true;
        }
        top = std::max(top, range.second);
      }
      const size_t offset = found ? best : top;
      (*offsets)[i] = offset;
      peak = std::max(peak, offset + size);
      occupancy.Add(begin[i], end[i], offset, offset + size);
    }
    return peak;
  };

  // Greedy by size: largest first (ties: the earlier allocation, then the smaller index).
  std::vector<uint32> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32 x, uint32 y) {
    const Buffer& a = buffers_[x];
    const Buffer& b = buffers_[y];
    return std::make_tuple(b.size, a.begin, x) < std::make_tuple(a.size, b.begin, y);
  });
  std::vector<size_t> offsets;
  peak_bytes_ = place(order, &offsets);

  // Where greedy by size ends more than 1% above the lower bound (independent lifetimes, rarely
  // the nested ones of a training step), the same paper's "greedy by breadth" often does better:
  // the steps with the most memory alive first, each placing its buffers largest first. A buffer
  // belongs to the step of its lifetime with the most memory alive (a range maximum over the
  // prefix sums of `delta`, from a sparse table). The better plan is kept.
  if (peak_bytes_ > lower_bound_bytes_ + lower_bound_bytes_ / 100) {  // more than 1% above
    const size_t m = steps.size();
    std::vector<std::vector<std::pair<size_t, size_t>>> table(1);  // (alive, step), max
    table[0].resize(m);
    size_t sum = 0;
    for (size_t t = 0; t < m; ++t) table[0][t] = {sum += delta[t], t};
    for (size_t k = 1; (size_t{1} << k) <= m; ++k) {
      table.emplace_back(m - (size_t{1} << k) + 1);
      for (size_t t = 0; t + (size_t{1} << k) <= m; ++t)
        table[k][t] = std::max(table[k - 1][t], table[k - 1][t + (size_t{1} << (k - 1))]);
    }
    auto busiest = [&](size_t lo, size_t hi) {  // max over steps [lo, hi), hi > lo
      size_t k = 0;
      while ((size_t{2} << k) <= hi - lo) ++k;
      return std::max(table[k][lo], table[k][hi - (size_t{1} << k)]);
    };
    std::vector<std::pair<size_t, size_t>> home(n);
    for (size_t i = 0; i < n; ++i) home[i] = busiest(begin[i], end[i]);
    std::vector<uint32> by_breadth(n);
    std::iota(by_breadth.begin(), by_breadth.end(), 0u);
    std::sort(by_breadth.begin(), by_breadth.end(), [&](uint32 x, uint32 y) {
      // Busiest step first (its step number breaks ties), then larger buffers, then index.
      return std::make_tuple(home[y].first, home[x].second, buffers_[y].size, x) <
             std::make_tuple(home[x].first, home[y].second, buffers_[x].size, y);
    });
    std::vector<size_t> breadth_offsets;
    const size_t breadth_peak = place(by_breadth, &breadth_offsets);
    if (breadth_peak < peak_bytes_) {
      peak_bytes_ = breadth_peak;
      offsets.swap(breadth_offsets);
    }
  }
  for (size_t i = 0; i < n; ++i) buffers_[i].offset = offsets[i];
  planning_seconds_ = timer.Elapsed();
}

double CuMemoryPlan::Ratio() const {
  if (lower_bound_bytes_ == 0) return 1.0;
  return static_cast<double>(peak_bytes_) / static_cast<double>(lower_bound_bytes_);
}

bool CuMemoryPlan::Verify(std::string* problem) const {
  std::ostringstream why;
  auto fail = [&]() {
    if (problem != nullptr) *problem = why.str();
    return false;
  };
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (b.size == 0 || b.size % kAlignment != 0 || b.offset % kAlignment != 0)
      why << "buffer " << i << ": size " << b.size << " or offset " << b.offset
          << " is not a positive multiple of " << kAlignment;
    else if (b.size < b.bytes)
      why << "buffer " << i << ": size " << b.size << " is less than the request of " << b.bytes
          << " bytes";
    else if (b.begin >= b.end)
      why << "buffer " << i << ": empty lifetime [" << b.begin << ", " << b.end << ")";
    else if (b.offset > peak_bytes_ || b.size > peak_bytes_ - b.offset)
      why << "buffer " << i << ": [" << b.offset << ", " << b.offset + b.size
          << ") ends past the peak of " << peak_bytes_ << " bytes";
    if (!why.str().empty()) return fail();
  }
  // Sweep the steps; ends before begins at the same step, since lifetimes are half-open. The
  // buffers alive are disjoint (checked as each arrives), so a new one overlaps one of them
  // exactly when it overlaps its neighbour below or above in address order.
  std::vector<std::tuple<int64, int, size_t>> events;  // step, 0 = end / 1 = begin, buffer
  events.reserve(2 * buffers_.size());
  for (size_t i = 0; i < buffers_.size(); ++i) {
    events.emplace_back(buffers_[i].begin, 1, i);
    events.emplace_back(buffers_[i].end, 0, i);
  }
  std::sort(events.begin(), events.end());
  std::map<size_t, size_t> alive;  // offset -> buffer
  for (const auto& event : events) {
    const size_t i = std::get<2>(event);
    const Buffer& b = buffers_[i];
    if (std::get<1>(event) == 0) {
      alive.erase(b.offset);
      continue;
    }
    auto above = alive.lower_bound(b.offset);
    size_t other = buffers_.size();
    if (above != alive.end() && above->first < b.offset + b.size) other = above->second;
    if (above != alive.begin()) {
      const Buffer& below = buffers_[std::prev(above)->second];
      if (below.offset + below.size > b.offset) other = std::prev(above)->second;
    }
    if (other != buffers_.size()) {
      const Buffer& o = buffers_[other];
      why << "buffers " << other << " and " << i << " are both alive at step " << b.begin
          << " and overlap: [" << o.offset << ", " << o.offset + o.size << ") and [" << b.offset
          << ", " << b.offset + b.size << ")";
      return fail();
    }
    alive.emplace(b.offset, i);
  }
  return true;
}

std::string CuMemoryPlan::ToString(bool with_buffers) const {
  std::ostringstream os;
  os << "buffers: " << buffers_.size() << "\n"
     << "peak: " << peak_bytes_ << " bytes (" << Mib(peak_bytes_) << ")\n"
     << "lower bound: " << lower_bound_bytes_ << " bytes (" << Mib(lower_bound_bytes_) << ")\n"
     << "ratio (peak / lower bound): " << std::fixed << std::setprecision(4) << Ratio() << "\n"
     << "planning time: " << std::setprecision(3) << planning_seconds_ * 1e3 << " ms\n";
  if (!with_buffers) return os.str();
  os << std::setw(7) << "index"
     << " kind " << std::setw(22) << "request" << std::setw(14) << "size" << std::setw(14)
     << "offset" << std::setw(9) << "begin" << std::setw(9) << "end"
     << "\n";
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    std::string request = std::to_string(b.bytes);
    if (b.kind == 'p') request = std::to_string(b.num_rows) + "x" + std::to_string(b.row_bytes);
    os << std::setw(7) << i << "    " << b.kind << " " << std::setw(22) << request << std::setw(14)
       << b.size << std::setw(14) << b.offset << std::setw(9) << b.begin << std::setw(9) << b.end
       << "\n";
  }
  return os.str();
}

std::string CuMemoryPlan::ToJson(bool with_buffers) const {
  std::ostringstream os;
  os << "{\"num_buffers\":" << buffers_.size() << ",\"peak_bytes\":" << peak_bytes_
     << ",\"lower_bound_bytes\":" << lower_bound_bytes_ << std::setprecision(9)
     << ",\"ratio\":" << Ratio() << ",\"planning_seconds\":" << planning_seconds_;
  if (with_buffers) {
    os << ",\"buffers\":[";
    for (size_t i = 0; i < buffers_.size(); ++i) {
      const Buffer& b = buffers_[i];
      os << (i > 0 ? "," : "") << "{\"index\":" << i << ",\"kind\":\"" << b.kind
         << "\",\"id\":" << b.id << ",\"bytes\":" << b.bytes << ",\"row_bytes\":" << b.row_bytes
         << ",\"num_rows\":" << b.num_rows << ",\"size\":" << b.size << ",\"offset\":" << b.offset
         << ",\"begin\":" << b.begin << ",\"end\":" << b.end << "}";
    }
    os << "]";
  }
  os << "}";
  return os.str();
}

}  // namespace cuctx
