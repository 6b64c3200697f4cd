#!/usr/bin/env bash
# tools/kernel-trace/probes/build.sh OUTDIR: builds the kernel probes of this folder (CUDA only, no
# cuctx) into OUTDIR, with durations.py beside them. On a GPU host, with libcupti-trace.so from
# ../build.sh:
#   CUDA_INJECTION64_PATH=.../libcupti-trace.so CUTRACE=kernels CUTRACE_OUT=/tmp/t OUTDIR/probe-rowmax
#   python3 OUTDIR/durations.py /tmp/t
# BENCHMARKS.md, runs probe-tr and probe-rm, has the results that the kernels' comments quote.
set -euo pipefail
[[ $# -eq 1 ]] || { sed -n 2,7p "$0"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd); out=$1
cuda=${CUDA_HOME:-/usr/local/cuda}; nvcc="$cuda/bin/nvcc -O3 -std=c++17 -arch=${CUDA_ARCH:-sm_90}"
mkdir -p "$out"
$nvcc -o "$out/probe-transpose" "$here/probe-transpose.cu"
$nvcc -o "$out/probe-rowmax" "$here/probe-rowmax.cu"
$nvcc -o "$out/probe-sigmoid" "$here/probe-sigmoid.cu"
$nvcc -o "$out/probe-onepass" "$here/probe-onepass.cu"
cp "$here/durations.py" "$out/"
echo "built probe-transpose, probe-rowmax, probe-sigmoid, probe-onepass into $out"
