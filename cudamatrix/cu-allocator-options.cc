// cudamatrix/cu-allocator-options.cc: registration and range checks of CuAllocatorOptions.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/cu-allocator-options.h"

#include "base/error.h"
#include "base/options-itf.h"

namespace cuctx {

void CuAllocatorOptions::Register(OptionsItf* opts) {
  opts->Register("cuda-allocator", &backend,
                 "Device memory allocator: caching (cuctx's caching allocator, tuned by the "
                 "other --cuda-* allocator options) or async (every Malloc/Free is a "
                 "cudaMallocAsync/cudaFreeAsync on the calling thread's stream from a per-device "
                 "CUDA memory pool that keeps freed memory; of the other allocator options only "
                 "--cuda-allocator-trace applies)");
  opts->Register("cuda-cache-memory", &cache_memory,
                 "Cache device memory in large regions; false sends every allocation straight to "
                 "cudaMalloc/cudaFree (use with compute-sanitizer)");
  opts->Register("cuda-allocator-upstream", &upstream,
                 "Where device memory comes from: vmm (map memory into one reserved address "
                 "range as the cache grows; falls back to cuda where the driver or device lacks "
                 "virtual memory management) or cuda (cudaMalloc regions)");
  opts->Register("cuda-memory-proportion", &memory_proportion,
                 "Fraction of the device's free memory taken up front (Kaldi's default is 0.5); "
                 "afterwards the cache grows by what a request needs. 0 = grow on demand only");
  opts->Register("cuda-region-quantum-mb", &region_quantum_mb,
                 "Growth step in MiB: expandable (vmm) regions map this much at a time, and "
                 "cudaMalloc regions after the first are requests rounded up to it; also the "
                 "sub-region size of the allocator");
  opts->Register("cuda-allocator-thread-affinity", &thread_affinity,
                 "Prefer memory the calling thread freed itself, so that cross-thread "
                 "synchronizations are rare; false picks the lowest best fit of any thread");
  opts->Register("cuda-allocator-thread-cache-mb", &thread_cache_mb,
                 "Each thread keeps up to this many MiB of blocks it freed (16 blocks of up to 4 "
                 "MiB) and takes them back without the allocator's lock; 0 turns the whole "
                 "thread cache off");
  opts->Register("cuda-allocator-thread-cache-large-blocks", &thread_cache_large_blocks,
                 "Each thread also keeps up to this many freed blocks too large for the cache "
                 "above (any size, not counted in --cuda-allocator-thread-cache-mb) and takes "
                 "them back without the allocator's lock; 0 keeps none");
  opts->Register("cuda-allocator-trace", &trace_file,
                 "Write every device Malloc/Free to this file as text (for "
                 "ReplayAllocatorTrace and the allocator benchmark)");
  opts->Register("cuda-allocator-history", &history_events,
                 "Keep the last N allocator events (alloc, free, segment map/unmap, oom) for "
                 "memory snapshots in PyTorch's format; 0 keeps none. Turns the per-thread "
                 "caches off, as --cuda-allocator-trace does");
  opts->Register("cuda-allocator-history-frames", &history_frames,
                 "Caller frames recorded with each Malloc of the history (0-60)");
  opts->Register("cuda-allocator-snapshot-on-oom", &snapshot_on_oom,
                 "Write a memory snapshot (PyTorch's pickle format) to this file whenever the "
                 "allocator throws OutOfMemoryError");
  // A bad value is refused when the command line or config file is parsed, not later on the GPU
  // host when the first allocator is made.
  opts->RegisterValidator([this] { Check(); });
}

void CuAllocatorOptions::Check() const {
  if (backend != "caching" && backend != "async")
    CUCTX_ERR << "invalid value '" << backend << "' for option --cuda-allocator: expected caching "
              << "or async";
  if (upstream != "vmm" && upstream != "cuda")
    CUCTX_ERR << "invalid value '" << upstream << "' for option --cuda-allocator-upstream: "
              << "expected vmm or cuda";
  if (!(memory_proportion >= 0.0f && memory_proportion <= 0.99f))
    CUCTX_ERR << "invalid value " << memory_proportion << " for option --cuda-memory-proportion: "
              << "expected a fraction in [0, 0.99]";
  if (region_quantum_mb < 1 || region_quantum_mb > (1 << 20))
    CUCTX_ERR << "invalid value " << region_quantum_mb << " for option --cuda-region-quantum-mb: "
              << "expected MiB in [1, 1048576]";
  if (thread_cache_mb < 0 || thread_cache_mb > 65536)
    CUCTX_ERR << "invalid value " << thread_cache_mb << " for option "
              << "--cuda-allocator-thread-cache-mb: expected MiB in [0, 65536]";
  if (thread_cache_large_blocks < 0 || thread_cache_large_blocks > 64)
    CUCTX_ERR << "invalid value " << thread_cache_large_blocks << " for option "
              << "--cuda-allocator-thread-cache-large-blocks: expected a count in [0, 64]";
  if (history_events < 0 || history_events > 100000000)
    CUCTX_ERR << "invalid value " << history_events << " for option --cuda-allocator-history: "
              << "expected a count of events in [0, 100000000]";
  if (history_frames < 0 || history_frames > 60)
    CUCTX_ERR << "invalid value " << history_frames << " for option "
              << "--cuda-allocator-history-frames: expected a count in [0, 60]";
}

}  // namespace cuctx
