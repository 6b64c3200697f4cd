# bin/module.mk: command-line tools, one per source file. bin_CUDA_TOOLS are built only with CUDA=1
# (they time CUDA's own calls as baselines).
bin_TOOLS      := cuda-gpu-available.cc

# matrix tools
bin_TOOLS += copy-matrix.cc copy-vector.cc matrix-info.cc matrix-multiply.cc cuda-compiled.cc

# table I/O benchmark (CPU only: archives and scp files through util/kaldi-table.h)
bin_TOOLS += table-io-bench.cc

# health check
bin_TOOLS      += gpu-health-check.cc

# static memory plans from allocator traces
bin_TOOLS += cu-memory-plan.cc

# allocator soak (CPU mode without a GPU) and trace-to-snapshot conversion
bin_TOOLS += cu-allocator-soak.cc cu-allocator-snapshot.cc

# host FFT benchmark (CPU only: srfft against the naive DFT, ComplexFft and memcpy)
bin_TOOLS += fft-bench.cc

bin_CUDA_TOOLS := cu-allocator-bench.cc

# container benchmark
bin_CUDA_TOOLS += cu-matrix-bench.cc

# CUDA graph benchmark
bin_CUDA_TOOLS += cu-graph-bench.cc

# static memory plan benchmark
bin_CUDA_TOOLS += cu-memory-plan-bench.cc

# Kaldi's own speed tests, timed Kaldi's way, against Kaldi's H100 figures (tests/data/kaldi-speed-h100.tsv)
bin_CUDA_TOOLS += cu-kaldi-speed-bench.cc

# NCCL: a data-parallel gradient step over several GPUs, and all-reduce bandwidth against raw NCCL
# (the benchmark includes nccl.h, so it needs NCCL=1; see common.mk)
bin_CUDA_TOOLS += cu-data-parallel-example.cc
ifeq ($(NCCL),1)
  bin_CUDA_TOOLS += nccl-allreduce-bench.cc
endif

ifeq ($(CUDA),1)
  bin_TOOLS += $(bin_CUDA_TOOLS)
endif
