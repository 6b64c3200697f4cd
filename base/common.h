// base/common.h: umbrella header for the whole of base/ (types, logging and errors, I/O primitives,
// options, randomness, text and math utilities, timing).
// SPDX-License-Identifier: Apache-2.0
//
// Include this for convenience in tools and tests; library sources include the headers they use.
// Like Kaldi's base/kaldi-common.h it also brings the standard headers that Kaldi programs take for
// granted (assert() from <cassert>, DBL_EPSILON from <cfloat>, <map>, <set>, ...), the CUCTX_ forms
// of Kaldi's base macros (base/utils.h, base/math-utils.h, base/error.h), and the unordered
// containers by their short names inside namespace cuctx.
#ifndef CUCTX_BASE_COMMON_H_
#define CUCTX_BASE_COMMON_H_

#include "base/config-line.h"
#include "base/error.h"
#include "base/io-funcs.h"
#include "base/math-utils.h"
#include "base/options-itf.h"
#include "base/parse-options.h"
#include "base/random.h"
#include "base/text-utils.h"
#include "base/timer.h"
#include "base/types.h"
#include "base/utils.h"

#include <algorithm>
#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>  // unlink(), which Kaldi programs get through its timer header
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace cuctx {
using std::unordered_map;
using std::unordered_set;
}  // namespace cuctx

#endif  // CUCTX_BASE_COMMON_H_
