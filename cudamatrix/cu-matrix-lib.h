// cudamatrix/cu-matrix-lib.h: umbrella header for the Cu containers. As Kaldi's header of this
// name does, it also brings base/ (base/common.h) and the CPU matrix library (matrix/matrix-lib.h).
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_MATRIX_LIB_H_
#define CUCTX_CUDAMATRIX_CU_MATRIX_LIB_H_

#include "base/common.h"
#include "cudamatrix/cu-array.h"
#include "cudamatrix/cu-block-matrix.h"
#include "cudamatrix/cu-compressed-matrix.h"
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-math.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-matrixdim.h"
#include "cudamatrix/cu-packed-matrix.h"
#include "cudamatrix/cu-rand.h"
#include "cudamatrix/cu-sp-matrix.h"
#include "cudamatrix/cu-sparse-matrix.h"
#include "cudamatrix/cu-tp-matrix.h"
#include "cudamatrix/cu-value.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/matrix-lib.h"

#endif  // CUCTX_CUDAMATRIX_CU_MATRIX_LIB_H_
