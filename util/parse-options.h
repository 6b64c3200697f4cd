// util/parse-options.h: Kaldi's name for base/parse-options.h, so that ported code keeps its
// includes. Like Kaldi's header of this name it also brings base/common.h.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_UTIL_PARSE_OPTIONS_H_
#define CUCTX_UTIL_PARSE_OPTIONS_H_

#include "base/common.h"
#include "base/parse-options.h"

#endif  // CUCTX_UTIL_PARSE_OPTIONS_H_
