// matrix/matrix-common.h: enums and small structs shared by the CPU and GPU matrix classes.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_MATRIX_MATRIX_COMMON_H_
#define CUCTX_MATRIX_MATRIX_COMMON_H_

#include "base/types.h"

namespace cuctx {

// What Resize does with the contents: zero them, leave them undefined, or keep the overlap.
enum MatrixResizeType { kSetZero, kUndefined, kCopyData };

// Whether an operand is used as stored or transposed. The values match CBLAS (111, 112).
enum MatrixTransposeType { kNoTrans = 111, kTrans = 112 };

// kDefaultStride pads rows for alignment; kStrideEqualNumCols stores rows back to back.
enum MatrixStrideType { kDefaultStride, kStrideEqualNumCols };

// How a symmetric matrix is made from a general one.
enum SpCopyType { kTakeLower, kTakeUpper, kTakeMean, kTakeMeanAndCheck };

// A pair of int32, laid out as two consecutive int32 (also on the GPU).
struct Int32Pair {
  int32 first;
  int32 second;
};

// ---- Kaldi parity: ordering of Int32Pair ------------------------------------------------------
// Lexicographic order (first, then second), as Kaldi defines it, so pairs can be sorted and used
// as std::map / std::set keys.
inline bool operator<(const Int32Pair& a, const Int32Pair& b) {
  return a.first < b.first || (a.first == b.first && a.second < b.second);
}

// One weighted element of a matrix, used by AddElements and friends.
template <typename Real>
struct MatrixElement {
  MatrixIndexT row;
  MatrixIndexT column;
  Real weight;
};

// ---- Kaldi parity: the other precision ---------------------------------------------------------
// OtherReal<float>::Real is double and OtherReal<double>::Real is float, for code templated on one
// precision that needs the other (e.g. a double accumulator for a float matrix).
template <typename Real>
struct OtherReal;
template <>
struct OtherReal<float> {
  using Real = double;
};
template <>
struct OtherReal<double> {
  using Real = float;
};
// ---- end Kaldi parity: the other precision -----------------------------------------------------

}  // namespace cuctx

#endif  // CUCTX_MATRIX_MATRIX_COMMON_H_
