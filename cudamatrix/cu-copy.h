// cudamatrix/cu-copy.h: host<->device copies, staged through pinned buffers when the host side is
// ordinary (pageable) memory.
// SPDX-License-Identifier: Apache-2.0
//
// Every host<->device copy of the Cu classes goes through these functions. They are kernel-free
// host code (cu-copy.cc) and run on the calling thread's cudaStreamPerThread.
//
// Contract, the same for every function here:
//   * Host->device (CopyHostToDevice*) returns once the host source may be reused or freed. The
//     device destination is written in order on the calling thread's stream: later work queued on
//     that stream sees the data; another thread or stream must synchronize first (e.g.
//     SynchronizeGpu()).
//   * Device->host (CopyDeviceToHost*) returns once the host destination holds the data; it first
//     waits, in stream order, for work already queued on the calling thread's stream.
//   * bytes == 0 (or rows == 0 or row_bytes == 0) is a no-op and the pointers may then be null.
//     A null pointer with a non-empty copy, or a pitch smaller than row_bytes, is a cuctx::Error.
//     CUDA failures are cuctx::CudaError.
//   * Without a GPU selected (CuDevice::Instantiate().Enabled() is false), "device" pointers are
//     host memory, as in the CPU fallback of the Cu classes, and the copies are plain memcpy.
//
// NOTE ON the three paths (with a GPU):
//   1. The host side is page-locked (cudaPointerGetAttributes says registered or cudaHostAlloc'd
//      host memory, checked at its first and last byte): one cudaMemcpy(2D)Async straight from or
//      to it, then a stream synchronize (so that the source may be reused, or the destination
//      read, when the function returns).
//   2. Smaller than CuCopyOptions::staging_threshold_kb and pageable, or device->host whatever the
//      host memory: one cudaMemcpy(2D)Async, which the driver stages itself for pageable memory
//      (a synchronize follows for device->host). A device->host copy this small is one copy and
//      one wait on every kind of host memory, so it is not asked about (each question is a
//      cudaPointerGetAttributes call); one of at most 32 bytes in one row goes through the
//      thread's mapped read-back slot instead.
//   3. Pageable and at least the threshold: chunked and double-buffered through pinned staging
//      buffers from PinnedHostAllocator::Get(), so that the CPU memcpy of one chunk overlaps the
//      DMA of the previous one (see NOTE ON chunking).
//
// NOTE ON chunking: the copy is cut into pieces of at most chunk_kb KiB. A piece is a run of
// whole rows (packed densely in the staging buffer, then one cudaMemcpy2DAsync) when a row fits in
// a chunk, else a part of one row; a 1D copy, or a 2D copy whose pitches both equal row_bytes, is
// one long row. Small copies use smaller pieces (a quarter of the copy, at least 512 KiB) so that
// even a copy just above the threshold has something to overlap. num_staging_buffers buffers are
// used round robin, each with a CUDA event recorded after its DMA:
//   host->device: wait for buffer k's previous DMA (its event), memcpy piece i into buffer k,
//                 queue its DMA and record the event; the host returns after the last memcpy,
//                 while the last DMAs may still run (the staging buffers are given back to the
//                 allocator, which does not reuse them until those DMAs are done).
//   device->host: queue the first num_staging_buffers DMAs; then for each piece wait for its
//                 event, memcpy it out, and queue the DMA of the piece num_staging_buffers later.
// The CPU memcpy, not the DMA, is the bottleneck: one thread copies pageable memory at about
// 8 GB/s on the H100 host, a pinned DMA runs at about 54 GB/s. So each piece's memcpy is split
// over memcpy_threads threads (the caller and a process-wide pool of helpers). Measured there for
// 64 MiB (median of 11): plain cudaMemcpy from pageable memory 8-15 GB/s; staged with 8 MiB
// pieces and 1 / 4 / 8 threads about 11 / 20 / 31-40 GB/s; pinned 54 GB/s. The defaults (8 MiB,
// 8 threads) trade up to 7 busy helper threads during a copy for about 3x the pageable bandwidth;
// --cuda-copy-memcpy-threads=1 keeps copies on the calling thread.
#ifndef CUCTX_CUDAMATRIX_CU_COPY_H_
#define CUCTX_CUDAMATRIX_CU_COPY_H_

#include "base/types.h"

#include <cstddef>

namespace cuctx {

class OptionsItf;

// Options of the copy helpers, process-wide. Register() them with a ParseOptions, parse, then
// apply with SetCopyOptions().
struct CuCopyOptions {
  // Pageable copies of at least this many KiB are staged through pinned buffers (>= 0; 0 stages
  // every pageable copy).
  int32 staging_threshold_kb = 1024;
  // Largest piece of a staged copy, in KiB (4..1048576).
  int32 chunk_kb = 8192;
  // Staging buffers used round robin by one staged copy (2..16).
  int32 num_staging_buffers = 2;
  // Threads, the calling one included, that split the CPU memcpy of each piece (1..64). One
  // thread's memcpy from pageable memory (about 8 GB/s) is what limits a staged copy; the helpers
  // are a process-wide pool shared by all copying threads, started on first use, so the process
  // never has more than memcpy_threads - 1 of them.
  int32 memcpy_threads = 8;

  // Registers --cuda-copy-staging-threshold-kb, --cuda-copy-chunk-kb,
  // --cuda-copy-staging-buffers, --cuda-copy-memcpy-threads.
  void Register(OptionsItf* opts);
  // Throws cuctx::Error naming the option if a value is out of range.
  void Check() const;
};

// Checks (throws cuctx::Error) and installs the process-wide copy options. Thread-safe; copies
// already running keep the options they started with.
void SetCopyOptions(const CuCopyOptions& opts);
CuCopyOptions GetCopyOptions();

// Counters of the paths taken since the process started (all threads); for tests and tuning.
struct CuCopyStats {
  int64 num_host_only = 0;        // copies done with memcpy because no GPU is selected
  int64 num_pinned = 0;           // path 1: the host side was page-locked
  int64 num_pageable_direct = 0;  // path 2: small copies handed to the driver: pageable ones, and
                                  // every device->host copy under the threshold (of at most 32
                                  // bytes: through the read-back slot)
  int64 num_staged = 0;           // path 3: chunked through staging buffers
  int64 num_staged_pieces = 0;    // pieces of those staged copies
  int64 bytes_staged = 0;
};
CuCopyStats GetCopyStats();

// True if `h_ptr` is page-locked host memory that CUDA can DMA from or to directly (cudaHostAlloc,
// cudaHostRegister, or a PinnedHostAllocator block of a device). False without a GPU, for null,
// and for ordinary memory. Costs one cudaPointerGetAttributes call (about a microsecond).
bool IsPageLocked(const void* h_ptr);

// Copies `bytes` bytes from host memory h_src to device memory d_dst (see the contract above).
void CopyHostToDevice(void* d_dst, const void* h_src, size_t bytes);
// Copies `bytes` bytes from device memory d_src to host memory h_dst.
void CopyDeviceToHost(void* h_dst, const void* d_src, size_t bytes);

// Pitched forms: `rows` rows of `row_bytes` bytes; row r of the source starts at
// src + r * src_pitch and goes to dst + r * dst_pitch. Both pitches must be >= row_bytes. The bytes
// between row_bytes and the pitch are not touched on either side.
void CopyHostToDevice2D(void* d_dst, size_t d_pitch, const void* h_src, size_t h_pitch,
                        size_t row_bytes, size_t rows);
void CopyDeviceToHost2D(void* h_dst, size_t h_pitch, const void* d_src, size_t d_pitch,
                        size_t row_bytes, size_t rows);

namespace internal {

// The staged pipeline of path 3 with std::memcpy standing in for the DMA engine and staging
// buffers from the no-GPU allocator, so that CPU-only CI checks the piece arithmetic (rows per
// piece, rows split into parts, slot reuse) with the options given. `to_device` picks the
// host->device order of work, else device->host; both sides are host memory. Not for production
// use: it copies everything twice.
void StagedCopyOnHostForTest(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                             size_t row_bytes, size_t rows, bool to_device,
                             const CuCopyOptions& opts);

}  // namespace internal
}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_COPY_H_
