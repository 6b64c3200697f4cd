// base/kaldi-utils.h: Kaldi's name for base/common.h, so that ported code keeps its includes.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BASE_KALDI_UTILS_H_
#define CUCTX_BASE_KALDI_UTILS_H_

#include "base/common.h"

#endif  // CUCTX_BASE_KALDI_UTILS_H_
