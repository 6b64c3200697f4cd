// base/kaldi-math.h: Kaldi's name for base/math-utils.h, base/random.h, so that ported code keeps
// its includes.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BASE_KALDI_MATH_H_
#define CUCTX_BASE_KALDI_MATH_H_

#include "base/math-utils.h"
#include "base/random.h"

#endif  // CUCTX_BASE_KALDI_MATH_H_
