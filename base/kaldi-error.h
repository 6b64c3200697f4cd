// base/kaldi-error.h: Kaldi's name for base/error.h, so that ported code keeps its includes.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BASE_KALDI_ERROR_H_
#define CUCTX_BASE_KALDI_ERROR_H_

#include "base/error.h"

#endif  // CUCTX_BASE_KALDI_ERROR_H_
