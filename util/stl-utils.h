// util/stl-utils.h: Kaldi's helpers for standard containers (sorted-vector checks, copies between
// sets, maps and vectors, pointer vectors, hash functors, summing merge of (key, value) pairs).
// SPDX-License-Identifier: Apache-2.0
//
// Names, signatures and results follow Kaldi's util/stl-utils.h, so that ported code compiles
// unchanged. All functions are templates on the element types and are thread-safe as far as the
// containers passed in are not shared with another writer. Output arguments are pointers and come
// last; a null output pointer throws cuctx::Error naming the argument.
//
// Where Kaldi only asserts in paranoid builds, the checks here are always on and throw:
// Uniq() on an unsorted vector is an error (its result would silently keep duplicates).
//
// The hash functors give the same values as Kaldi's (a polynomial in the elements with the
// multiplier 7853), so a ported program iterates its unordered containers in the same order.
#ifndef CUCTX_UTIL_STL_UTILS_H_
#define CUCTX_UTIL_STL_UTILS_H_

#include "base/common.h"
#include "base/error.h"

#include <algorithm>
#include <cassert>  // Kaldi programs that include this header use assert() from it
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace cuctx {

// True if `vec` is in non-decreasing order by operator< (empty and one-element vectors are).
template <typename T>
inline bool IsSorted(const std::vector<T>& vec) {
  for (size_t i = 1; i < vec.size(); ++i) {
    if (vec[i] < vec[i - 1]) return false;
  }
  return true;
}

// True if `vec` is strictly increasing: sorted, and no element appears twice.
template <typename T>
inline bool IsSortedAndUniq(const std::vector<T>& vec) {
  for (size_t i = 1; i < vec.size(); ++i) {
    if (!(vec[i - 1] < vec[i])) return false;
  }
  return true;
}

// Removes repeated elements from a vector that is already sorted. Throws cuctx::Error if `vec` is
// null or not sorted.
template <typename T>
inline void Uniq(std::vector<T>* vec) {
  CUCTX_CHECK(vec != nullptr) << "Uniq: the vector argument is null";
  CUCTX_CHECK(IsSorted(*vec)) << "Uniq: the vector must be sorted (use SortAndUniq)";
  vec->erase(std::unique(vec->begin(), vec->end()), vec->end());
}

// Sorts `vec` and removes repeated elements.
template <typename T>
inline void SortAndUniq(std::vector<T>* vec) {
  CUCTX_CHECK(vec != nullptr) << "SortAndUniq: the vector argument is null";
  std::sort(vec->begin(), vec->end());
  vec->erase(std::unique(vec->begin(), vec->end()), vec->end());
}

// Replaces the contents of `v` with the elements of `s`, in the set's order (ascending).
template <class T>
void CopySetToVector(const std::set<T>& s, std::vector<T>* v) {
  CUCTX_CHECK(v != nullptr) << "CopySetToVector: the output vector is null";
  v->clear();
  v->reserve(s.size());
  v->insert(v->end(), s.begin(), s.end());
}

// Replaces the contents of `v` with the elements of `s`, in the hash set's iteration order.
template <class T>
void CopySetToVector(const std::unordered_set<T>& s, std::vector<T>* v) {
  CUCTX_CHECK(v != nullptr) << "CopySetToVector: the output vector is null";
  v->clear();
  v->reserve(s.size());
  v->insert(v->end(), s.begin(), s.end());
}

// Replaces the contents of `v` with the (key, value) pairs of `m`, in ascending key order.
template <class A, class B>
void CopyMapToVector(const std::map<A, B>& m, std::vector<std::pair<A, B> >* v) {
  CUCTX_CHECK(v != nullptr) << "CopyMapToVector: the output vector is null";
  v->clear();
  v->reserve(m.size());
  for (const auto& kv : m) v->emplace_back(kv.first, kv.second);
}

// Replaces the contents of `v` with the keys of `m`, in ascending order.
template <class A, class B>
void CopyMapKeysToVector(const std::map<A, B>& m, std::vector<A>* v) {
  CUCTX_CHECK(v != nullptr) << "CopyMapKeysToVector: the output vector is null";
  v->clear();
  v->reserve(m.size());
  for (const auto& kv : m) v->push_back(kv.first);
}

// Replaces the contents of `v` with the values of `m`, in ascending order of their keys.
template <class A, class B>
void CopyMapValuesToVector(const std::map<A, B>& m, std::vector<B>* v) {
  CUCTX_CHECK(v != nullptr) << "CopyMapValuesToVector: the output vector is null";
  v->clear();
  v->reserve(m.size());
  for (const auto& kv : m) v->push_back(kv.second);
}

// Replaces the contents of `s` with the keys of `m`.
template <class A, class B>
void CopyMapKeysToSet(const std::map<A, B>& m, std::set<A>* s) {
  CUCTX_CHECK(s != nullptr) << "CopyMapKeysToSet: the output set is null";
  s->clear();
  // The keys arrive in ascending order, so hinting at the end makes each insertion O(1).
  for (const auto& kv : m) s->insert(s->end(), kv.first);
}

// Replaces the contents of `s` with the distinct values of `m`.
template <class A, class B>
void CopyMapValuesToSet(const std::map<A, B>& m, std::set<B>* s) {
  CUCTX_CHECK(s != nullptr) << "CopyMapValuesToSet: the output set is null";
  s->clear();
  for (const auto& kv : m) s->insert(kv.second);
}

// Replaces the contents of `s` with the distinct elements of `v`.
template <class A>
void CopyVectorToSet(const std::vector<A>& v, std::set<A>* s) {
  CUCTX_CHECK(s != nullptr) << "CopyVectorToSet: the output set is null";
  s->clear();
  // The end hint is free when `v` is sorted and harmless otherwise.
  for (const A& a : v) s->insert(s->end(), a);
}

// Deletes every non-null pointer in `v` and sets its entry to null; the size of `v` is unchanged.
template <class A>
void DeletePointers(std::vector<A*>* v) {
  CUCTX_CHECK(v != nullptr) << "DeletePointers: the vector argument is null";
  for (A*& p : *v) {
    delete p;
    p = nullptr;
  }
}

// True if any entry of `v` is a null pointer.
template <class A>
bool ContainsNullPointers(const std::vector<A*>& v) {
  return std::find(v.begin(), v.end(), static_cast<A*>(nullptr)) != v.end();
}

// Resizes `vec_out` to the size of `vec_in` and fills it with static_cast<B> of each element.
template <typename A, typename B>
void CopyVectorToVector(const std::vector<A>& vec_in, std::vector<B>* vec_out) {
  CUCTX_CHECK(vec_out != nullptr) << "CopyVectorToVector: the output vector is null";
  vec_out->resize(vec_in.size());
  for (size_t i = 0; i < vec_in.size(); ++i) (*vec_out)[i] = static_cast<B>(vec_in[i]);
}

// Reverses the order of the elements of `vec`.
template <typename T>
inline void ReverseVector(std::vector<T>* vec) {
  CUCTX_CHECK(vec != nullptr) << "ReverseVector: the vector argument is null";
  std::reverse(vec->begin(), vec->end());
}

// Hash of a vector of integers, for unordered containers keyed by std::vector<Int>:
// h = (...((x0) * 7853 + x1) * 7853 + ...) in size_t arithmetic.
template <typename Int>
struct VectorHasher {
  static_assert(std::is_integral<Int>::value, "VectorHasher needs an integer element type");
  size_t operator()(const std::vector<Int>& x) const noexcept {
    size_t h = 0;
    for (const Int& e : x) h = h * kMultiplier + static_cast<size_t>(e);
    return h;
  }

 private:
  static constexpr size_t kMultiplier = 7853;
};

// Hash of a pair of integers: first + second * 7853 in size_t arithmetic.
template <typename Int1, typename Int2 = Int1>
struct PairHasher {
  static_assert(std::is_integral<Int1>::value && std::is_integral<Int2>::value,
                "PairHasher needs integer element types");
  size_t operator()(const std::pair<Int1, Int2>& x) const noexcept {
    return static_cast<size_t>(x.first) + static_cast<size_t>(x.second) * kMultiplier;
  }

 private:
  static constexpr size_t kMultiplier = 7853;
};

// Hash of a string: the polynomial of VectorHasher over its (signed) chars, embedded NULs
// included.
struct StringHasher {
  size_t operator()(const std::string& str) const noexcept {
    size_t h = 0;
    for (char c : str) h = h * kMultiplier + static_cast<size_t>(c);
    return h;
  }

 private:
  static constexpr size_t kMultiplier = 7853;
};

// Orders pairs by their first member only.
template <class A, class B>
struct CompareFirstMemberOfPair {
  bool operator()(const std::pair<A, B>& p1, const std::pair<A, B>& p2) const {
    return p1.first < p2.first;
  }
};

// Treats `vec` as a sparse map from the integer I to an additive F: sorts it by key, replaces each
// run of equal keys by one pair holding the sum of their values, and drops pairs whose sum is
// zero. Values of one key are summed in their input order (the sort is stable).
template <typename I, typename F>
inline void MergePairVectorSumming(std::vector<std::pair<I, F> >* vec) {
  static_assert(std::is_integral<I>::value, "MergePairVectorSumming needs an integer key type");
  CUCTX_CHECK(vec != nullptr) << "MergePairVectorSumming: the vector argument is null";
  std::stable_sort(vec->begin(), vec->end(), CompareFirstMemberOfPair<I, F>());
  size_t out = 0;
  for (size_t in = 0; in < vec->size();) {
    std::pair<I, F> merged = (*vec)[in++];
    while (in < vec->size() && (*vec)[in].first == merged.first)
      merged.second += (*vec)[in++].second;
    if (merged.second != static_cast<F>(0)) (*vec)[out++] = merged;
  }
  vec->erase(vec->begin() + static_cast<std::ptrdiff_t>(out), vec->end());
}

}  // namespace cuctx

#endif  // CUCTX_UTIL_STL_UTILS_H_
