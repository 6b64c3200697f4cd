// cudamatrix/cu-allocator-options.h: the command-line options of the caching device allocator.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_CUDAMATRIX_CU_ALLOCATOR_OPTIONS_H_
#define CUCTX_CUDAMATRIX_CU_ALLOCATOR_OPTIONS_H_

#include "base/types.h"

#include <cstddef>
#include <string>

namespace cuctx {

class OptionsItf;

// Options of CuMemoryAllocator (cu-allocator.h). CuDevice registers them through
// RegisterCuAllocatorOptions(); programs normally set them on the command line:
//   --cuda-allocator                (string, caching) the backend (cu-allocator-async.h):
//                                                  "caching" is CuMemoryAllocator's own pools
//                                                  over the upstream below; "async" sends every
//                                                  Malloc/Free to cudaMallocAsync/cudaFreeAsync
//                                                  on a per-device CUDA memory pool, and of the
//                                                  options below only --cuda-allocator-trace
//                                                  applies
//   --cuda-cache-memory             (bool, true)   false: every Malloc/Free goes straight to the
//                                                  upstream (cudaMalloc/cudaFree), for
//                                                  compute-sanitizer
//   --cuda-allocator-upstream       (string, vmm)  where device memory comes from: "vmm" maps
//                                                  memory into one reserved address range as
//                                                  the pool grows (expandable; falls back to
//                                                  "cuda" where the driver or device lacks VMM),
//                                                  "cuda" takes cudaMalloc regions
//   --cuda-memory-proportion        (float, 0)     take this fraction of the device's free
//                                                  memory up front (Kaldi's default is 0.5);
//                                                  0 = grow on demand only
//   --cuda-region-quantum-mb        (int32, 32)    the growth step: expandable regions map this
//                                                  much at a time (rounded to the granule),
//                                                  cudaMalloc regions after the first are the
//                                                  request rounded up to it; it is also the
//                                                  sub-region size (32: see "Growth" in
//                                                  cu-allocator.h for the measurement)
//   --cuda-allocator-thread-affinity (bool, true)  prefer blocks the calling thread freed itself
//                                                  (see NOTE ON THREAD AFFINITY in cu-allocator.h)
//   --cuda-allocator-thread-cache-mb (int32, 16)   per-thread cache of freed blocks of up to 4 MiB
//                                                  (NOTE ON THE THREAD CACHE in cu-allocator.h);
//                                                  0 turns the whole thread cache off
//   --cuda-allocator-thread-cache-large-blocks (int32, 2)  besides those, each thread keeps this
//                                                  many freed blocks of any larger size (not
//                                                  counted in thread-cache-mb); 0: none
//   --cuda-allocator-trace          (string, "")   write every Malloc/Free to this file as text
//   --cuda-allocator-history        (int32, 0)     keep the last N allocator events for memory
//                                                  snapshots (cu-memory-snapshot.h); 0: none.
//                                                  Like the trace, turns the thread cache off
//   --cuda-allocator-history-frames (int32, 0)     caller frames captured per Malloc for the
//                                                  history (0-60; about 1 us each Malloc)
//   --cuda-allocator-snapshot-on-oom (string, "")  write a memory snapshot to this file whenever
//                                                  OutOfMemoryError is thrown (the last one wins)
struct CuAllocatorOptions {
  std::string backend = "caching";
  bool cache_memory = true;
  std::string upstream = "vmm";
  BaseFloat memory_proportion = 0.0f;
  int32 region_quantum_mb = 32;
  bool thread_affinity = true;
  int32 thread_cache_mb = 16;
  int32 thread_cache_large_blocks = 2;
  std::string trace_file;
  int32 history_events = 0;
  int32 history_frames = 0;
  std::string snapshot_on_oom;

  // Registers the options above under their --cuda-* names, and Check() as a validator, so that
  // ParseOptions refuses a bad value when it parses it (without a GPU). This object must outlive
  // opts.
  void Register(OptionsItf* opts);

  // Throws cuctx::Error naming the option and the value when a value is out of range: backend
  // must be "caching" or "async", upstream must be "vmm" or "cuda", memory_proportion in
  // [0, 0.99], region_quantum_mb in [1, 1048576], thread_cache_mb in [0, 65536],
  // thread_cache_large_blocks in [0, 64], history_events in [0, 10^8], history_frames in [0, 60].
  void Check() const;

  // region_quantum_mb in bytes.
  size_t RegionQuantumBytes() const { return static_cast<size_t>(region_quantum_mb) << 20; }
};

// Registers the options of the process-wide allocator (the ones CuDevice uses) on opts, as Kaldi
// programs call it; the same as CuDevice::RegisterCuAllocatorOptions. Defined in cu-parity.cc.
void RegisterCuAllocatorOptions(OptionsItf* opts);

}  // namespace cuctx

#endif  // CUCTX_CUDAMATRIX_CU_ALLOCATOR_OPTIONS_H_
