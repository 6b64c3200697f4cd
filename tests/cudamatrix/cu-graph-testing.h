// tests/cudamatrix/cu-graph-testing.h: what the cu-graph-*-test.cc files share: exact comparisons
// (NaN matches NaN; a replay and an eager run execute the same kernels) of host and device
// matrices, vectors and index arrays, and the driver's free device memory.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_TESTS_CUDAMATRIX_CU_GRAPH_TESTING_H_
#define CUCTX_TESTS_CUDAMATRIX_CU_GRAPH_TESTING_H_

#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-graph.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix.h"
#include "matrix/vector.h"
#include "tests/cu-matrix-testing.h"

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <gtest/gtest.h>
#include <vector>

#if CUCTX_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace cuctx {
namespace test {

template <typename Real>
bool SameValue(Real a, Real b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

template <typename Real>
::testing::AssertionResult Identical(const MatrixBase<Real>& a, const MatrixBase<Real>& b) {
  if (a.NumRows() != b.NumRows() || a.NumCols() != b.NumCols())
    return ::testing::AssertionFailure() << "shape mismatch: " << a.NumRows() << "x" << a.NumCols()
                                         << " vs " << b.NumRows() << "x" << b.NumCols();
  for (MatrixIndexT r = 0; r < a.NumRows(); ++r)
    for (MatrixIndexT c = 0; c < a.NumCols(); ++c)
      if (!SameValue(a(r, c), b(r, c)))
        return ::testing::AssertionFailure()
               << "element (" << r << ", " << c << "): " << a(r, c) << " vs " << b(r, c);
  return ::testing::AssertionSuccess();
}

template <typename Real>
::testing::AssertionResult Identical(const CuMatrixBase<Real>& a, const CuMatrixBase<Real>& b) {
  return Identical(ToHost(a), ToHost(b));
}

template <typename Real>
::testing::AssertionResult Identical(const VectorBase<Real>& a, const VectorBase<Real>& b) {
  if (a.Dim() != b.Dim())
    return ::testing::AssertionFailure() << "dimension mismatch: " << a.Dim() << " vs " << b.Dim();
  for (MatrixIndexT i = 0; i < a.Dim(); ++i)
    if (!SameValue(a(i), b(i)))
      return ::testing::AssertionFailure() << "element " << i << ": " << a(i) << " vs " << b(i);
  return ::testing::AssertionSuccess();
}

template <typename Real>
::testing::AssertionResult Identical(const CuVectorBase<Real>& a, const CuVectorBase<Real>& b) {
  return Identical(ToHost(a), ToHost(b));
}

inline ::testing::AssertionResult Identical(const CuArrayBase<int32>& a,
                                            const CuArrayBase<int32>& b) {
  std::vector<int32> ha, hb;
  a.CopyToVec(&ha);
  b.CopyToVec(&hb);
  if (ha.size() != hb.size())
    return ::testing::AssertionFailure()
           << "dimension mismatch: " << ha.size() << " vs " << hb.size();
  for (size_t i = 0; i < ha.size(); ++i)
    if (ha[i] != hb[i])
      return ::testing::AssertionFailure() << "element " << i << ": " << ha[i] << " vs " << hb[i];
  return ::testing::AssertionSuccess();
}

// Captures `body` in the default memory mode (CuGraph::DefaultMemory(), which CUCTX_GRAPH_MEMORY
// sets, so that every graph test runs in each mode); in kSharedPool mode into `pool`, a pool the
// test owns, so that the graph's memory goes back when the test drops both.
inline CuGraph CaptureOwned(const std::function<void()>& body, CuGraphPool* pool) {
  if (CuGraph::DefaultMemory() == CuGraphMemory::kSharedPool) return CuGraph::Capture(body, *pool);
  return CuGraph::Capture(body);
}

// False under compute-sanitizer (tools/gpu-test.sh sets CUCTX_TEST_QUICK=1 there): the tool's own
// device allocations move the driver's free-memory readings by hundreds of MiB, so the tests that
// compare such readings skip those comparisons.
inline bool FreeMemoryReadingsReliable() { return std::getenv("CUCTX_TEST_QUICK") == nullptr; }

#if CUCTX_HAVE_CUDA
// Free device memory as the driver reports it (includes memory other processes use, so compare
// only nearby readings, leniently).
inline size_t FreeDeviceBytes() {
  size_t free_bytes = 0, total_bytes = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  return free_bytes;
}
#endif

}  // namespace test
}  // namespace cuctx

#endif  // CUCTX_TESTS_CUDAMATRIX_CU_GRAPH_TESTING_H_
