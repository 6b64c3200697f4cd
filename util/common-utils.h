// util/common-utils.h: Kaldi's name for base/common.h, so that ported code keeps its includes.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_UTIL_COMMON_UTILS_H_
#define CUCTX_UTIL_COMMON_UTILS_H_

#include "base/common.h"

#endif  // CUCTX_UTIL_COMMON_UTILS_H_
