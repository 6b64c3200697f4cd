// matrix/kaldi-vector.h: Kaldi's name for matrix/vector.h, so that ported code keeps its includes.
// Like Kaldi's header of this name it also brings base/common.h.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_MATRIX_KALDI_VECTOR_H_
#define CUCTX_MATRIX_KALDI_VECTOR_H_

#include "base/common.h"
#include "matrix/vector.h"

#endif  // CUCTX_MATRIX_KALDI_VECTOR_H_
