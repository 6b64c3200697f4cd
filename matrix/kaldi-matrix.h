// matrix/kaldi-matrix.h: Kaldi's name for matrix/matrix.h, so that ported code keeps its includes.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_MATRIX_KALDI_MATRIX_H_
#define CUCTX_MATRIX_KALDI_MATRIX_H_

#include "matrix/matrix.h"

#endif  // CUCTX_MATRIX_KALDI_MATRIX_H_
