// base/types.h: fixed-width integer and float typedefs shared by the whole public API.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BASE_TYPES_H_
#define CUCTX_BASE_TYPES_H_

#include <cstdint>

namespace cuctx {

// Kaldi-compatible names, so ported code compiles unchanged.
typedef int8_t int8;
typedef int16_t int16;
typedef int32_t int32;
typedef int64_t int64;
typedef uint8_t uint8;
typedef uint16_t uint16;
typedef uint32_t uint32;
typedef uint64_t uint64;
typedef float float32;
typedef double double64;

// The default floating type of models and features.
typedef float BaseFloat;

// Index and size type of matrices and vectors. Element counts that may exceed 2^31 use int64.
typedef int32 MatrixIndexT;
typedef int32 SignedMatrixIndexT;
typedef uint32 UnsignedMatrixIndexT;

}  // namespace cuctx

#endif  // CUCTX_BASE_TYPES_H_
