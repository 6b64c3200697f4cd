// base/kaldi-math.h: Kaldi's name for base/math-utils.h and base/random.h, so that ported code
// keeps its includes. Like Kaldi's header of this name it also brings base/common.h (the rest of
// base/ and the standard headers Kaldi programs rely on).
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BASE_KALDI_MATH_H_
#define CUCTX_BASE_KALDI_MATH_H_

#include "base/common.h"
#include "base/math-utils.h"
#include "base/random.h"

#endif  // CUCTX_BASE_KALDI_MATH_H_
