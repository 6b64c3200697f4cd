// base/kaldi-types.h: Kaldi's name for base/types.h, so that ported code keeps its includes.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BASE_KALDI_TYPES_H_
#define CUCTX_BASE_KALDI_TYPES_H_

#include "base/types.h"

#endif  // CUCTX_BASE_KALDI_TYPES_H_
