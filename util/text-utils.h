// util/text-utils.h: Kaldi's name for base/text-utils.h and base/config-line.h (ConfigLine,
// ReadConfigLines), so that ported code keeps its includes.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_UTIL_TEXT_UTILS_H_
#define CUCTX_UTIL_TEXT_UTILS_H_

#include "base/common.h"
#include "base/config-line.h"
#include "base/text-utils.h"

#endif  // CUCTX_UTIL_TEXT_UTILS_H_
