// tests/cudamatrix/cu-memory-plan-test.cc: CuMemoryPlan: exact small plans, properties on random
// interval sets against a slow reference, trace reading and its errors, the reports and speed.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-memory-plan.h"

#include "base/error.h"
#include "tests/testing.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <numeric>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace cuctx {
namespace test {

// Reaches into a plan, so that the tests can damage it and check that Verify() notices.
class CuMemoryPlanPeer {
 public:
  static CuMemoryPlan::Buffer& Buffer(CuMemoryPlan* plan, size_t i) { return plan->buffers_[i]; }
  static void SetPeak(CuMemoryPlan* plan, size_t bytes) { plan->peak_bytes_ = bytes; }
};

}  // namespace test

namespace {

using Interval = CuMemoryPlan::Interval;

// Relative to the repository root, where `make test` runs the tests.
const char* kSyntheticTrace = "tests/data/synthetic-nnet3.trace";

CuMemoryPlan PlanText(const std::string& trace, int32 thread = CuMemoryPlan::kOnlyThread) {
  std::istringstream in(trace);
  return CuMemoryPlan::FromTrace(in, thread);
}

std::vector<size_t> Offsets(const CuMemoryPlan& plan) {
  std::vector<size_t> offsets;
  for (const CuMemoryPlan::Buffer& b : plan.Buffers()) offsets.push_back(b.offset);
  return offsets;
}

// The same greedy-by-size placement written the slow, obvious way (every placed buffer is
// compared with every new one, O(n^2)), to check the planner's fast search against.
std::vector<size_t> ReferenceOffsets(const std::vector<Interval>& in) {
  const size_t n = in.size();
  std::vector<size_t> size(n), offset(n, 0), order(n);
  for (size_t i = 0; i < n; ++i) size[i] = (in[i].bytes + 255) / 256 * 256;
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_tuple(size[b], in[a].begin, a) < std::make_tuple(size[a], in[b].begin, b);
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    std::vector<std::pair<size_t, size_t>> near;
    for (size_t j : placed)
      if (in[j].begin < in[i].end && in[i].begin < in[j].end)
        near.emplace_back(offset[j], offset[j] + size[j]);
    std::sort(near.begin(), near.end());
    size_t top = 0, best = 0, best_waste = SIZE_MAX;
    bool found = false;
    for (const auto& r : near) {
      if (r.first > top && r.first - top >= size[i] && r.first - top - size[i] < best_waste) {
        best = top;
        best_waste = r.first - top - size[i];
        found = true;
      }
      top = std::max(top, r.second);
    }
    offset[i] = found ? best : top;
    placed.push_back(i);
  }
  return offset;
}

// No two buffers alive at one step overlap, checked pair by pair (independent of Verify()).
::testing::AssertionResult NoLiveOverlaps(const CuMemoryPlan& plan) {
  const auto& b = plan.Buffers();
  for (size_t i = 0; i < b.size(); ++i)
    for (size_t j = i + 1; j < b.size(); ++j)
      if (b[i].begin < b[j].end && b[j].begin < b[i].end && b[i].offset < b[j].offset + b[j].size &&
          b[j].offset < b[i].offset + b[i].size)
        return ::testing::AssertionFailure() << "buffers " << i << " and " << j << " overlap";
  return ::testing::AssertionSuccess();
}

// Random interval sets of three shapes: 0, independent lifetimes and log-uniform sizes; 1,
// nested lifetimes as in a forward and backward pass, with temporaries; 2, a few distinct sizes
// (many ties).
std::vector<Interval> RandomIntervals(int shape, test::Rng* rng) {
  const int n = static_cast<int>(rng->Int(1, 200));
  std::vector<Interval> v;
  if (shape == 0 || shape == 2) {
    for (int i = 0; i < n; ++i) {
      Interval in;
      in.bytes = shape == 0 ? static_cast<size_t>(std::exp2(rng->Uniform(0.0, 24.0)))
                            : static_cast<size_t>(256 << rng->Int(0, 3));
      in.begin = rng->Int(0, 2 * n);
      in.end = in.begin + rng->Int(1, n);
      v.push_back(in);
    }
    return v;
  }
  int64 step = 0;
  std::vector<size_t> stack;
  for (int i = 0; i < n; ++i) {
    if (rng->Uniform() < 0.3)  // a temporary
      v.push_back({static_cast<size_t>(rng->Int(1, 1 << 20)), step, step + rng->Int(1, 3)});
    else  // kept until the mirror-image step of the backward pass
      stack.push_back(static_cast<size_t>(rng->Int(1, 1 << 22)));
    ++step;
  }
  const int64 turn = step;
  for (size_t k = 0; k < stack.size(); ++k) {
    const int64 begin = turn - static_cast<int64>(stack.size()) + static_cast<int64>(k);
    v.push_back({stack[k], begin, 2 * turn - begin + 1});
  }
  return v;
}

// A training step of about `num_allocations` allocations, as intervals: parameters alive
// throughout, then layers whose forward outputs live until their backward pass, with temporaries
// of a few steps on both passes. With `same_shapes` every layer allocates the same sizes, as the
// identical blocks of a TDNN-F or transformer network do; otherwise every size is drawn anew,
// which scatters the buffers alive together over the address space (a harder case for the
// planner's speed).
std::vector<Interval> TrainingStepIntervals(int num_allocations, bool same_shapes, test::Rng* rng) {
  std::vector<Interval> v;
  const int num_layers = num_allocations / 20;
  int64 step = 0;
  const int64 kEnd = int64{1} << 40;
  std::vector<size_t> shapes(18);
  auto size = [&](int k, int64 lo, int64 hi) {
    if (!same_shapes || shapes[k] == 0) shapes[k] = static_cast<size_t>(rng->Int(lo, hi));
    return shapes[k];
  };
  for (int i = 0; i < 2 * num_layers; ++i)  // parameters, allocated first and never freed
    v.push_back({size(i % 2, 1 << 10, 4 << 20), step++, kEnd});
  std::vector<std::vector<size_t>> kept(num_layers);
  for (int l = 0; l < num_layers; ++l) {
    for (int k = 0; k < 9; ++k, ++step) {
      if (k % 3 == 2) {
        v.push_back({size(2 + k, 64 << 10, 4 << 20), step, step + 2});
      } else {
        kept[l].push_back(v.size());
        v.push_back({size(2 + k, 1 << 20, 64 << 20), step, kEnd});
      }
    }
  }
  for (int l = num_layers - 1; l >= 0; --l) {
    for (int k = 0; k < 9; ++k, ++step)
      v.push_back({size(11 + k % 7, 256 << 10, 32 << 20), step, step + 3});
    for (auto it = kept[l].rbegin(); it != kept[l].rend(); ++it) v[*it].end = step++;
  }
  for (Interval& in : v)
    if (in.end == kEnd) in.end = step + 1;
  return v;
}

TEST(CuMemoryPlanTest, BuffersNeverAliveTogetherShareOffsetZero) {
  const CuMemoryPlan plan = CuMemoryPlan::FromIntervals({{1000, 0, 2}, {500, 2, 4}});
  ASSERT_EQ(plan.NumBuffers(), 2);
  EXPECT_EQ(Offsets(plan), (std::vector<size_t>{0, 0}));
  EXPECT_EQ(plan.Buffers()[0].size, 1024u);
  EXPECT_EQ(plan.Buffers()[1].size, 512u);
  EXPECT_EQ(plan.PeakBytes(), 1024u);
  EXPECT_EQ(plan.LowerBoundBytes(), 1024u);
  EXPECT_DOUBLE_EQ(plan.Ratio(), 1.0);
  EXPECT_EQ(plan.Buffers()[1].kind, 'i');
  EXPECT_EQ(plan.Buffers()[1].id, 1u);
}

TEST(CuMemoryPlanTest, OverlappingBuffersAreStackedLargestFirst) {
  const CuMemoryPlan plan = CuMemoryPlan::FromIntervals({{500, 1, 4}, {1000, 0, 3}});
  EXPECT_EQ(Offsets(plan), (std::vector<size_t>{1024, 0}));
  EXPECT_EQ(plan.PeakBytes(), 1536u);
  EXPECT_EQ(plan.LowerBoundBytes(), 1536u);
}

TEST(CuMemoryPlanTest, EqualSizesPlaceTheEarlierAllocationFirst) {
  const CuMemoryPlan plan = CuMemoryPlan::FromIntervals({{512, 5, 10}, {512, 0, 10}});
  EXPECT_EQ(Offsets(plan), (std::vector<size_t>{512, 0}));
}

TEST(CuMemoryPlanTest, PicksTheSmallestGapThatFits) {
  // A..E leave two gaps for F's steps [5, 7): [3072, 5120) where B was and [6656, 7680) where D
  // was. First fit would take the lower, larger one; best fit takes the one F fills best.
  const CuMemoryPlan plan = CuMemoryPlan::FromIntervals(
      {{3072, 0, 10}, {2048, 0, 2}, {1536, 0, 10}, {1024, 0, 2}, {768, 0, 10}, {512, 5, 7}});
  EXPECT_EQ(Offsets(plan), (std::vector<size_t>{0, 3072, 5120, 6656, 7680, 6656}));
  EXPECT_EQ(plan.PeakBytes(), 8448u);
  EXPECT_EQ(plan.LowerBoundBytes(), 8448u);
}

TEST(CuMemoryPlanTest, EmptyPlan) {
  const CuMemoryPlan plan = CuMemoryPlan::FromIntervals({});
  EXPECT_EQ(plan.NumBuffers(), 0);
  EXPECT_EQ(plan.PeakBytes(), 0u);
  EXPECT_EQ(plan.LowerBoundBytes(), 0u);
  EXPECT_DOUBLE_EQ(plan.Ratio(), 1.0);
  std::string problem;
  EXPECT_TRUE(plan.Verify(&problem)) << problem;
  EXPECT_TRUE(test::Contains(plan.ToJson(true), "\"num_buffers\":0,"));
  EXPECT_TRUE(test::Contains(plan.ToJson(true), ",\"buffers\":[]}"));
}

TEST(CuMemoryPlanTest, VerifyFindsEachKindOfDamage) {
  using Peer = test::CuMemoryPlanPeer;
  // Offsets 0, 1024 and 0; buffer 1 is alive with buffer 0 at step 1 and with buffer 2 at step 3.
  const std::vector<Interval> in = {{1000, 0, 2}, {500, 1, 4}, {300, 3, 5}};
  std::string problem = "untouched";
  EXPECT_TRUE(CuMemoryPlan::FromIntervals(in).Verify(&problem));
  EXPECT_EQ(problem, "untouched");
  EXPECT_TRUE(CuMemoryPlan::FromIntervals(in).Verify(nullptr));
  const std::pair<std::function<void(CuMemoryPlan*)>, const char*> cases[] = {
      {[](CuMemoryPlan* p) { Peer::Buffer(p, 1).offset = 512; },
       "buffers 0 and 1 are both alive at step 1 and overlap: [0, 1024) and [512, 1024)"},
      {[](CuMemoryPlan* p) { Peer::Buffer(p, 2).offset = 1024; },
       "buffers 1 and 2 are both alive at step 3 and overlap: [1024, 1536) and [1024, 1536)"},
      {[](CuMemoryPlan* p) { Peer::Buffer(p, 0).offset = 100; },
       "buffer 0: size 1024 or offset 100 is not a positive multiple of 256"},
      {[](CuMemoryPlan* p) { Peer::Buffer(p, 0).size = 768; },
       "buffer 0: size 768 is less than the request of 1000 bytes"},
      {[](CuMemoryPlan* p) { Peer::Buffer(p, 2).end = 3; }, "buffer 2: empty lifetime [3, 3)"},
      {[](CuMemoryPlan* p) { Peer::SetPeak(p, 1024); },
       "buffer 1: [1024, 1536) ends past the peak of 1024 bytes"},
  };
  for (const auto& c : cases) {
    CuMemoryPlan plan = CuMemoryPlan::FromIntervals(in);
    c.first(&plan);
    problem.clear();
    EXPECT_FALSE(plan.Verify(&problem)) << c.second;
    EXPECT_EQ(problem, c.second);
  }
}

TEST(CuMemoryPlanTest, RejectsBadIntervals) {
  test::ExpectErrorContaining(
      [] {
        CuMemoryPlan::FromIntervals({{256, 0, 1}, {0, 0, 1}});
      },
      "interval 1 has 0 bytes");
  test::ExpectErrorContaining(
      [] {
        CuMemoryPlan::FromIntervals({{256, 3, 3}});
      },
      "interval 0 is empty: [3, 3)");
  test::ExpectErrorContaining(
      [] {
        CuMemoryPlan::FromIntervals({{(size_t{1} << 46) + 1, 0, 1}});
      },
      "must be in [1, 2^46]");
}

TEST(CuMemoryPlanTest, RandomIntervalSetsAreValidAndNearTheLowerBound) {
  test::Rng rng = test::MakeRng();
  const char* kShapes[] = {"independent lifetimes", "nested lifetimes", "few sizes"};
  // Greedy by size (with greedy by breadth tried where it ends more than 1% above the lower
  // bound) is a heuristic, and the lower bound (the most bytes alive at one step) need not be
  // reachable by any placement. With nested lifetimes, as in training, the plans stay within
  // 10% of it (the worst of 300 sets was at most 1.016 for each of 13 seeds tried). With
  // independent random lifetimes they do not: about one set in 15 ends above 1.1, the worst of
  // 300 at 1.12 to 1.35 depending on the seed, while the mean stays at 1.02 to 1.03; those shapes
  // get a loose bound on the worst set and a tight one on the mean.
  const double kWorstBound[] = {1.5, 1.1, 1.5};
  const double kMeanBound[] = {1.05, 1.01, 1.05};
  for (int shape = 0; shape < 3; ++shape) {
    double worst = 1.0, sum = 0.0;
    int gains = 0;  // sets where greedy by breadth beat greedy by size
    const int kSets = 300;
    for (int set = 0; set < kSets; ++set) {
      const std::vector<Interval> in = RandomIntervals(shape, &rng);
      const CuMemoryPlan plan = CuMemoryPlan::FromIntervals(in);
      SCOPED_TRACE(testing::Message()
                   << kShapes[shape] << ", set " << set << " of " << in.size() << " intervals");
      std::string problem;
      ASSERT_TRUE(plan.Verify(&problem)) << problem;
      ASSERT_TRUE(NoLiveOverlaps(plan));
      // Greedy by size is kept unless greedy by breadth needs strictly less.
      const std::vector<size_t> reference = ReferenceOffsets(in);
      size_t reference_peak = 0;
      for (size_t i = 0; i < reference.size(); ++i)
        reference_peak = std::max(reference_peak, reference[i] + plan.Buffers()[i].size);
      ASSERT_LE(plan.PeakBytes(), reference_peak);
      if (plan.PeakBytes() == reference_peak) {
        ASSERT_EQ(Offsets(plan), reference);
      }
      gains += plan.PeakBytes() < reference_peak ? 1 : 0;
      for (const CuMemoryPlan::Buffer& b : plan.Buffers()) {
        ASSERT_EQ(b.offset % CuMemoryPlan::kAlignment, 0u);
        ASSERT_LE(b.offset + b.size, plan.PeakBytes());
      }
      ASSERT_GE(plan.PeakBytes(), plan.LowerBoundBytes());
      EXPECT_LE(plan.Ratio(), kWorstBound[shape]);
      worst = std::max(worst, plan.Ratio());
      sum += plan.Ratio();
    }
    std::printf(
        "  %s: peak / lower bound over %d sets: mean %.4f, worst %.4f; greedy by breadth better "
        "on %d\n",
        kShapes[shape], kSets, sum / kSets, worst, gains);
    EXPECT_LE(sum / kSets, kMeanBound[shape]) << kShapes[shape];
  }
}

TEST(CuMemoryPlanTest, TraceBuffersHaveTheAllocatorsBlockSizes) {
  const CuMemoryPlan plan = PlanText(
      "# cuctx-allocator-trace 1\nm 0 1 1\np 0 300 3 2\np 0 256 2 3\np 0 257 1 4\n"
      "m 0 256 5\nm 0 257 6\n");
  ASSERT_EQ(plan.NumBuffers(), 6);
  const auto& b = plan.Buffers();
  EXPECT_EQ(b[0].kind, 'm');
  EXPECT_EQ(b[0].bytes, 1u);
  EXPECT_EQ(b[0].size, 256u);
  EXPECT_EQ(b[1].kind, 'p');
  EXPECT_EQ(b[1].row_bytes, 300u);
  EXPECT_EQ(b[1].num_rows, 3u);
  EXPECT_EQ(b[1].bytes, 900u);
  EXPECT_EQ(b[1].pitch, 512u);
  EXPECT_EQ(b[1].size, 1536u);
  EXPECT_EQ(b[2].pitch, 256u);
  EXPECT_EQ(b[2].size, 512u);
  EXPECT_EQ(b[3].pitch, 512u);
  EXPECT_EQ(b[3].size, 512u);
  EXPECT_EQ(b[4].size, 256u);
  EXPECT_EQ(b[5].size, 512u);
  for (size_t i = 0; i < b.size(); ++i) EXPECT_EQ(b[i].id, i + 1);
  EXPECT_EQ(plan.LowerBoundBytes(), 256u + 1536 + 512 + 512 + 256 + 512);
}

TEST(CuMemoryPlanTest, TraceLifetimesCountAllocationsAndFreesOnly) {
  // Steps: m1 0, m2 1, (s, d ignored), f1 2, m0 (zero bytes, no buffer) 3, m3 4; end 5.
  const CuMemoryPlan plan =
      PlanText("m 0 1000 1\nm 0 1000 2\ns 0\nd 0\nf 0 1\nm 0 0 0\nm 0 1000 3\n");
  ASSERT_EQ(plan.NumBuffers(), 3);
  const auto& b = plan.Buffers();
  const std::vector<int64> lifetimes = {b[0].begin, b[0].end,   b[1].begin,
                                        b[1].end,   b[2].begin, b[2].end};
  EXPECT_EQ(lifetimes, (std::vector<int64>{0, 2, 1, 5, 4, 5}));
  EXPECT_EQ(b[2].id, 3u);
  EXPECT_EQ(Offsets(plan), (std::vector<size_t>{0, 1024, 0}));  // 3 reuses 1's memory
  EXPECT_EQ(plan.PeakBytes(), 2048u);
}

TEST(CuMemoryPlanTest, ZeroByteRequestsGetNoBuffer) {
  const CuMemoryPlan plan = PlanText("m 0 0 0\np 0 0 5 0\np 0 5 0 0\n");
  EXPECT_EQ(plan.NumBuffers(), 0);
  EXPECT_EQ(plan.PeakBytes(), 0u);
}

TEST(CuMemoryPlanTest, SelectsOneThread) {
  // Thread 1 frees thread 0's pointer: the lifetime ends there, whoever frees it.
  const std::string trace = "m 0 1000 1\nm 1 2000 2\nf 1 1\nm 1 100 3\nf 0 2\n";
  test::ExpectErrorContaining([&] { PlanText(trace); },
                              "allocator trace has records of 2 threads (0, 1)");
  const CuMemoryPlan t0 = PlanText(trace, 0);
  ASSERT_EQ(t0.NumBuffers(), 1);
  EXPECT_EQ(t0.Buffers()[0].begin, 0);
  EXPECT_EQ(t0.Buffers()[0].end, 2);
  const CuMemoryPlan t1 = PlanText(trace, 1);
  ASSERT_EQ(t1.NumBuffers(), 2);
  EXPECT_EQ(t1.Buffers()[0].size, 2048u);
  EXPECT_EQ(t1.Buffers()[0].begin, 1);
  EXPECT_EQ(t1.Buffers()[0].end, 4);
  EXPECT_EQ(t1.Buffers()[1].end, 5);  // never freed: alive to the end
  test::ExpectErrorContaining([&] { PlanText(trace, 5); },
                              "no records of thread 5 (threads found: 0, 1)");
  test::ExpectErrorContaining([&] { PlanText(trace, -2); }, "got -2");
  test::ExpectErrorContaining([] { PlanText("# only a comment\n\n"); }, "no records");
  // A thread that only frees or syncs has records but nothing to plan.
  EXPECT_EQ(PlanText("m 0 1000 1\ns 1\nf 0 1\n", 1).NumBuffers(), 0);
}

TEST(CuMemoryPlanTest, RejectsMalformedTraces) {
  const std::pair<const char*, const char*> cases[] = {
      {"x 0 1\n", "allocator trace, line 1: unknown record"},
      {"m 0 1000 1\nf 0 2\n", "line 2: free of a pointer id that is not live"},
      {"m 0 1000\n", "line 1: wrong number or type of fields"},
      {"m 0 1000 1\nm 0 5 1\n", "line 2: pointer id allocated twice"},
      {"m 0 0 3\n", "pointer id must be 0 exactly for zero-byte requests"},
      {"m 0 70368744177665 1\n", "larger than the allocator serves"},
      {"p 0 1000000 100000000000 1\n", "larger than the allocator serves"},
  };
  for (const auto& c : cases) test::ExpectErrorContaining([&] { PlanText(c.first); }, c.second);
  test::ExpectErrorContaining([] { CuMemoryPlan::FromTraceFile("/nonexistent/trace.txt"); },
                              "cannot open allocator trace '/nonexistent/trace.txt'");
}

TEST(CuMemoryPlanTest, SyntheticNnet3TraceIsPlannedWithinTwoPercentOfTheLowerBound) {
  std::ifstream file(kSyntheticTrace);
  ASSERT_TRUE(file.good()) << "cannot open " << kSyntheticTrace
                           << " (run from the repository root)";
  std::stringstream text;
  text << file.rdbuf();
  // The buffers the trace should give: every m/p record with a non-zero id, in file order.
  std::vector<uint64> ids;
  std::istringstream lines(text.str());
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || (line[0] != 'm' && line[0] != 'p')) continue;
    const uint64 id = std::stoull(line.substr(line.find_last_of(' ') + 1));
    if (id != 0) ids.push_back(id);
  }
  ASSERT_GT(ids.size(), 300u);

  const CuMemoryPlan plan = CuMemoryPlan::FromTraceFile(kSyntheticTrace);
  ASSERT_EQ(plan.NumBuffers(), static_cast<int64>(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(plan.Buffers()[i].id, ids[i]) << i;
  std::string problem;
  EXPECT_TRUE(plan.Verify(&problem)) << problem;
  EXPECT_TRUE(NoLiveOverlaps(plan));
  EXPECT_GE(plan.PeakBytes(), plan.LowerBoundBytes());
  EXPECT_LE(plan.Ratio(), 1.02);
  std::printf("  %s: %lld buffers, peak %zu, lower bound %zu, ratio %.4f, planned in %.3f ms\n",
              kSyntheticTrace, static_cast<long long>(plan.NumBuffers()), plan.PeakBytes(),
              plan.LowerBoundBytes(), plan.Ratio(), plan.PlanningSeconds() * 1e3);
}

TEST(CuMemoryPlanTest, PlansTenThousandAllocationsQuickly) {
  test::Rng rng = test::MakeRng();
  const std::vector<Interval> same = TrainingStepIntervals(10000, true, &rng);
  const std::vector<Interval> mixed = TrainingStepIntervals(10000, false, &rng);
  std::vector<Interval> random;  // lifetimes of up to 400 steps among 20,000
  for (int i = 0; i < 10000; ++i) {
    const int64 begin = rng.Int(0, 20000);
    random.push_back({static_cast<size_t>(rng.Int(1, 16 << 20)), begin, begin + rng.Int(1, 400)});
  }
  // The bounds are loose, so that a slow or busy CI machine (or an ASan build, about 5 times
  // slower) cannot fail them; the printed times are the measurement (see the NOTE ON SPEED in
  // cu-memory-plan.h). The two harder shapes, several times slower, get more room.
  struct Case {
    const char* name;
    const std::vector<Interval>* intervals;
    double bound_seconds;
  };
  const Case cases[] = {{"training step, repeated layer shapes", &same, 0.5},
                        {"training step, every size different", &mixed, 5.0},
                        {"random lifetimes and sizes", &random, 5.0}};
  for (const Case& c : cases) {
    const CuMemoryPlan plan = CuMemoryPlan::FromIntervals(*c.intervals);
    std::string problem;
    EXPECT_TRUE(plan.Verify(&problem)) << problem;
    std::printf("  %zu allocations (%s): planned in %.2f ms, peak / lower bound %.4f\n",
                c.intervals->size(), c.name, plan.PlanningSeconds() * 1e3, plan.Ratio());
    EXPECT_LT(plan.PlanningSeconds(), c.bound_seconds) << c.name;
  }
}

TEST(CuMemoryPlanTest, ReportsNameTheirFields) {
  const CuMemoryPlan plan = CuMemoryPlan::FromIntervals({{1000, 0, 2}, {500, 1, 4}, {300, 3, 5}});
  const std::string json = plan.ToJson();
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  for (const char* key : {"\"peak_bytes\":1536", "\"lower_bound_bytes\":1536", "\"num_buffers\":3",
                          "\"planning_seconds\":", "\"ratio\":1"})
    EXPECT_TRUE(test::Contains(json, key)) << json;
  EXPECT_EQ(json.find("buffers\":["), std::string::npos);
  const std::string with_buffers = plan.ToJson(true);
  EXPECT_TRUE(test::Contains(with_buffers,
                             "\"buffers\":[{\"index\":0,\"kind\":\"i\",\"id\":0,\"bytes\":1000,"
                             "\"row_bytes\":0,\"num_rows\":0,\"size\":1024,\"offset\":0,"
                             "\"begin\":0,\"end\":2},"));
  const std::string text = plan.ToString();
  for (const char* line :
       {"buffers: 3\n", "peak: 1536 bytes (0.0 MiB)\n", "lower bound: 1536 bytes (0.0 MiB)\n",
        "ratio (peak / lower bound): 1.0000\n", "planning time: "})
    EXPECT_TRUE(test::Contains(text, line)) << text;
  const std::string table = plan.ToString(true);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 5 + 1 + 3) << table;
}

}  // namespace
}  // namespace cuctx
