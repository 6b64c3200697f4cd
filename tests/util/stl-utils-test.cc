// tests/util/stl-utils-test.cc: Kaldi's container helpers (util/stl-utils.h) against hand-written
// expectations and against the standard algorithms on seeded random data.
// SPDX-License-Identifier: Apache-2.0
#include "util/stl-utils.h"

#include "tests/testing.h"

#include <gtest/gtest.h>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace cuctx {
namespace {

using Ints = std::vector<int>;

Ints RandomInts(test::Rng* rng, int max_len, int max_value) {
  Ints v(static_cast<size_t>(rng->Int(0, max_len)));
  for (int& x : v) x = static_cast<int>(rng->Int(0, max_value));
  return v;
}

TEST(StlUtilsTest, IsSortedAllowsEqualNeighbours) {
  EXPECT_TRUE(IsSorted(Ints{}));
  EXPECT_TRUE(IsSorted(Ints{4}));
  EXPECT_TRUE(IsSorted(Ints{1, 1, 2, 5}));
  EXPECT_FALSE(IsSorted(Ints{2, 1}));
  EXPECT_FALSE(IsSorted(Ints{1, 3, 2, 4}));
}

TEST(StlUtilsTest, IsSortedAndUniqNeedsStrictOrder) {
  EXPECT_TRUE(IsSortedAndUniq(Ints{}));
  EXPECT_TRUE(IsSortedAndUniq(Ints{7}));
  EXPECT_TRUE(IsSortedAndUniq(Ints{1, 2, 5}));
  EXPECT_FALSE(IsSortedAndUniq(Ints{1, 1, 2}));
  EXPECT_FALSE(IsSortedAndUniq(Ints{3, 2}));
}

TEST(StlUtilsTest, SortednessChecksMatchTheStandardAlgorithms) {
  test::Rng rng = test::MakeRng();
  for (int trial = 0; trial < 200; ++trial) {
    Ints v = RandomInts(&rng, 6, 9);
    EXPECT_EQ(IsSorted(v), std::is_sorted(v.begin(), v.end()));
    bool strict =
        std::adjacent_find(v.begin(), v.end(), [](int a, int b) { return a >= b; }) == v.end();
    EXPECT_EQ(IsSortedAndUniq(v), strict);
  }
}

TEST(StlUtilsTest, UniqRemovesRepeatsOfASortedVector) {
  Ints v{1, 1, 1, 3, 4, 4, 9};
  Uniq(&v);
  EXPECT_EQ(v, (Ints{1, 3, 4, 9}));
  Ints empty;
  Uniq(&empty);
  EXPECT_TRUE(empty.empty());
}

TEST(StlUtilsTest, UniqRefusesAnUnsortedVector) {
  Ints v{3, 1, 3};
  test::ExpectErrorContaining([&] { Uniq(&v); }, "must be sorted");
  test::ExpectErrorContaining([] { Uniq<int>(nullptr); }, "null");
}

TEST(StlUtilsTest, SortAndUniqGivesTheDistinctElementsInOrder) {
  test::Rng rng = test::MakeRng();
  for (int trial = 0; trial < 200; ++trial) {
    Ints v = RandomInts(&rng, 12, 20);
    std::set<int> distinct(v.begin(), v.end());
    SortAndUniq(&v);
    EXPECT_EQ(v, Ints(distinct.begin(), distinct.end()));
  }
}

TEST(StlUtilsTest, CopySetToVectorKeepsTheSetOrder) {
  std::vector<std::string> v{"stale"};
  CopySetToVector(std::set<std::string>{"b", "a", "c"}, &v);
  EXPECT_EQ(v, (std::vector<std::string>{"a", "b", "c"}));
  CopySetToVector(std::set<std::string>{}, &v);
  EXPECT_TRUE(v.empty());
}

TEST(StlUtilsTest, CopySetToVectorTakesAnUnorderedSet) {
  std::unordered_set<int> s{5, 2, 8};
  Ints v;
  CopySetToVector(s, &v);
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, (Ints{2, 5, 8}));
}

TEST(StlUtilsTest, MapCopiesFollowKeyOrder) {
  const std::map<int, std::string> m{{3, "c"}, {1, "a"}, {2, "a"}};
  std::vector<std::pair<int, std::string>> pairs{{9, "stale"}};
  CopyMapToVector(m, &pairs);
  EXPECT_EQ(pairs, (std::vector<std::pair<int, std::string>>{{1, "a"}, {2, "a"}, {3, "c"}}));
  Ints keys{42};
  CopyMapKeysToVector(m, &keys);
  EXPECT_EQ(keys, (Ints{1, 2, 3}));
  std::vector<std::string> values;
  CopyMapValuesToVector(m, &values);
  EXPECT_EQ(values, (std::vector<std::string>{"a", "a", "c"}));
  std::set<int> key_set{77};
  CopyMapKeysToSet(m, &key_set);
  EXPECT_EQ(key_set, (std::set<int>{1, 2, 3}));
  std::set<std::string> value_set{"stale"};
  CopyMapValuesToSet(m, &value_set);
  EXPECT_EQ(value_set, (std::set<std::string>{"a", "c"}));
}

TEST(StlUtilsTest, CopyVectorToSetReplacesTheSet) {
  std::set<int> s{100};
  CopyVectorToSet(Ints{4, 1, 4, 2}, &s);
  EXPECT_EQ(s, (std::set<int>{1, 2, 4}));
}

TEST(StlUtilsTest, NullOutputsThrowNamingTheFunction) {
  const std::map<int, int> m{{1, 2}};
  test::ExpectErrorContaining([&] { CopyMapKeysToVector<int, int>(m, nullptr); },
                              "CopyMapKeysToVector: the output vector is null");
  test::ExpectErrorContaining([&] { CopyVectorToSet<int>(Ints{1}, nullptr); },
                              "CopyVectorToSet: the output set is null");
  test::ExpectErrorContaining([] { ReverseVector<int>(nullptr); }, "ReverseVector");
}

// Counts its destructions, to check that DeletePointers deletes each object once.
struct Counted {
  explicit Counted(int* deaths) : deaths_(deaths) {}
  ~Counted() { ++*deaths_; }
  int* deaths_;
};

TEST(StlUtilsTest, DeletePointersDeletesEachAndLeavesNulls) {
  int deaths = 0;
  std::vector<Counted*> v{new Counted(&deaths), nullptr, new Counted(&deaths)};
  EXPECT_TRUE(ContainsNullPointers(v));
  DeletePointers(&v);
  EXPECT_EQ(deaths, 2);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], nullptr);
  EXPECT_EQ(v[2], nullptr);
  DeletePointers(&v);  // all null now: nothing more is deleted
  EXPECT_EQ(deaths, 2);
}

TEST(StlUtilsTest, ContainsNullPointersFindsAnyNull) {
  int a = 0, b = 0;
  EXPECT_FALSE(ContainsNullPointers(std::vector<int*>{}));
  EXPECT_FALSE(ContainsNullPointers(std::vector<int*>{&a, &b}));
  EXPECT_TRUE(ContainsNullPointers(std::vector<int*>{&a, nullptr}));
}

TEST(StlUtilsTest, CopyVectorToVectorConvertsEachElement) {
  std::vector<double> in{1.75, -2.5, 3.0};
  Ints out{9, 9, 9, 9, 9};
  CopyVectorToVector(in, &out);
  EXPECT_EQ(out, (Ints{1, -2, 3}));  // static_cast truncates toward zero
}

TEST(StlUtilsTest, ReverseVectorReversesAnyLength) {
  for (size_t n = 0; n < 6; ++n) {
    Ints v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
    ReverseVector(&v);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(v[i], static_cast<int>(n - 1 - i));
  }
}

TEST(StlUtilsTest, HashersGiveThePolynomialValues) {
  // Expected values written out: h = ((x0 * 7853) + x1) * 7853 + x2, etc.
  EXPECT_EQ(VectorHasher<int>()(Ints{}), 0u);
  EXPECT_EQ(VectorHasher<int>()(Ints{3, 5}), 3u * 7853u + 5u);
  EXPECT_EQ(VectorHasher<int>()(Ints{1, 2, 3}), (1u * 7853u + 2u) * 7853u + 3u);
  EXPECT_EQ((PairHasher<int>()(std::make_pair(4, 2))), 4u + 2u * 7853u);
  EXPECT_EQ((PairHasher<int, long>()(std::make_pair(1, 10L))), 1u + 10u * 7853u);
  EXPECT_EQ(StringHasher()("ab"), static_cast<size_t>('a') * 7853u + 'b');
  EXPECT_NE(StringHasher()(std::string("a\0b", 3)), StringHasher()("a"));
}

TEST(StlUtilsTest, HashersWorkAsUnorderedContainerHashes) {
  std::unordered_map<std::vector<int>, int, VectorHasher<int>> by_vector;
  by_vector[{1, 2}] = 3;
  by_vector[{2, 1}] = 4;
  EXPECT_EQ(by_vector.at({1, 2}), 3);
  std::unordered_set<std::pair<int, int>, PairHasher<int>> pairs{{1, 2}, {2, 1}, {1, 2}};
  EXPECT_EQ(pairs.size(), 2u);
  std::unordered_map<std::string, int, StringHasher> words{{"x", 1}};
  EXPECT_EQ(words.count("x"), 1u);
}

TEST(StlUtilsTest, MergePairVectorSummingSumsAndDropsZeros) {
  std::vector<std::pair<int, double>> v{{3, 1.0}, {1, 2.0}, {3, 0.5}, {2, 4.0}, {2, -4.0}};
  MergePairVectorSumming(&v);
  EXPECT_EQ(v, (std::vector<std::pair<int, double>>{{1, 2.0}, {3, 1.5}}));
  std::vector<std::pair<int, int>> empty;
  MergePairVectorSumming(&empty);
  EXPECT_TRUE(empty.empty());
}

TEST(StlUtilsTest, MergePairVectorSummingMatchesAMapReference) {
  test::Rng rng = test::MakeRng();
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::pair<int, int>> v(static_cast<size_t>(rng.Int(0, 12)));
    std::map<int, int> reference;
    for (auto& p : v) {
      p = {static_cast<int>(rng.Int(0, 5)), static_cast<int>(rng.Int(-2, 2))};
      reference[p.first] += p.second;
    }
    std::vector<std::pair<int, int>> expected;
    for (const auto& kv : reference) {
      if (kv.second != 0) expected.push_back(kv);
    }
    MergePairVectorSumming(&v);
    EXPECT_EQ(v, expected);
  }
}

}  // namespace
}  // namespace cuctx
