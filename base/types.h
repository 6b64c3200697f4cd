// base/types.h: fixed-width integer and float typedefs shared by the whole public API.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BASE_TYPES_H_
#define CUCTX_BASE_TYPES_H_

#include <cstdint>

// Kaldi-compatible integer names. As in a Kaldi build (where OpenFst declares them), they exist at
// global scope too, so ported code that writes `int32` outside any namespace compiles unchanged.
// Identical typedefs from another library (OpenFst) are compatible redeclarations.
typedef int8_t int8;
typedef int16_t int16;
typedef int32_t int32;
typedef int64_t int64;
typedef uint8_t uint8;
typedef uint16_t uint16;
typedef uint32_t uint32;
typedef uint64_t uint64;

namespace cuctx {

using ::int16;
using ::int32;
using ::int64;
using ::int8;
using ::uint16;
using ::uint32;
using ::uint64;
using ::uint8;
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
