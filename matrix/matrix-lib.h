// matrix/matrix-lib.h: umbrella header for the CPU matrix library.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_MATRIX_MATRIX_LIB_H_
#define CUCTX_MATRIX_MATRIX_LIB_H_

#include "base/common.h"
#include "matrix/cblas-wrappers.h"
#include "matrix/compressed-matrix.h"
#include "matrix/general-matrix.h"
#include "matrix/matrix-common.h"
#include "matrix/matrix-exponential.h"
#include "matrix/matrix-functions.h"
#include "matrix/matrix.h"
#include "matrix/optimization.h"
#include "matrix/packed-matrix.h"
#include "matrix/sp-matrix.h"
#include "matrix/sparse-matrix.h"
#include "matrix/srfft.h"
#include "matrix/tp-matrix.h"
#include "matrix/vector.h"

#endif  // CUCTX_MATRIX_MATRIX_LIB_H_
