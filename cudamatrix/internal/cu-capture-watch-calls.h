// cudamatrix/internal/cu-capture-watch-calls.h: the CUDA calls whose CUPTI callbacks the capture
// watch subscribes to (cu-capture-gate.cc): those that can make a thread's stream start capturing
// (begin capture, and a wait on an event of a capturing stream, which joins the waiting stream to
// the capture). Shared with tools/launch-bench/cupti-cost.cu, which measures what this set costs
// each launch. Private; CUDA builds only.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_INTERNAL_CU_CAPTURE_WATCH_CALLS_H_
#define CUCTX_CUDAMATRIX_INTERNAL_CU_CAPTURE_WATCH_CALLS_H_

#if CUCTX_HAVE_CUDA
#include <cupti.h>

namespace cuctx {
namespace internal {

constexpr CUpti_CallbackId kCaptureWatchDriverCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz,
};

constexpr CUpti_CallbackId kCaptureWatchRuntimeCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000,
};

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_HAVE_CUDA
#endif  // CUCTX_CUDAMATRIX_INTERNAL_CU_CAPTURE_WATCH_CALLS_H_
