// base/version.h: the cuctx release version (tools/install.sh writes it into cuctx.pc and the CMake
// package; the bin/ tools print it with --version).
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BASE_VERSION_H_
#define CUCTX_BASE_VERSION_H_

#define CUCTX_VERSION_MAJOR 0
#define CUCTX_VERSION_MINOR 1
#define CUCTX_VERSION_PATCH 0
#define CUCTX_VERSION "0.1.0"

// The git revision of the build, set only for the tool frame (cutool/tool.cc) by common.mk; ""
// elsewhere. Programs print it through cuctx::CuctxVersionString() in cutool/tool.h.
#ifndef CUCTX_REVISION
#define CUCTX_REVISION ""
#endif

#endif  // CUCTX_BASE_VERSION_H_
