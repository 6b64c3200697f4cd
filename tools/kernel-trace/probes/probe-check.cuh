// tools/kernel-trace/probes/probe-check.cuh: PROBE_CHECK, the error check the CUDA-only probes of
// this folder share: a failed runtime call prints the call, CUDA's message and file:line, and
// exits with status 1.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_TOOLS_KERNEL_TRACE_PROBES_PROBE_CHECK_CUH_
#define CUCTX_TOOLS_KERNEL_TRACE_PROBES_PROBE_CHECK_CUH_

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define PROBE_CHECK(call)                                                                      \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, \
                   __LINE__);                                                                  \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

#endif  // CUCTX_TOOLS_KERNEL_TRACE_PROBES_PROBE_CHECK_CUH_
