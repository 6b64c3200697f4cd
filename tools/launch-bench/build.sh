#!/usr/bin/env bash
# tools/launch-bench/build.sh PREFIX OUTDIR: builds the launch-cost programs of this folder into
# OUTDIR: launch-paths and cupti-cost (CUDA only) and op-cost (against the cuctx installed at
# PREFIX by `make install PREFIX=...`; it finds libcuctx.so through LD_LIBRARY_PATH). They run on a
# GPU host with no arguments (cupti-cost also takes a mode number, op-cost matrix, vector or all);
# see BENCHMARKS.md, run `launch`.
set -euo pipefail
[[ $# -eq 2 ]] || { sed -n 2,6p "$0"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd); prefix=$(cd "$1" && pwd); out=$2
root=$(cd "$here/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}; nvcc="$cuda/bin/nvcc -O2 -std=c++17 -arch=${CUDA_ARCH:-sm_90}"
mkdir -p "$out"
$nvcc -I"$root" -o "$out/launch-paths" "$here/launch-paths.cu" -L"$cuda/lib64/stubs" -lcuda
$nvcc -I"$root" -DCUCTX_HAVE_CUDA=1 -o "$out/cupti-cost" "$here/cupti-cost.cu" -L"$cuda/lib64" -lcupti -L"$cuda/lib64/stubs" -lcuda
$nvcc -I"$prefix/include/cuctx" -o "$out/op-cost" "$here/op-cost.cu" -L"$prefix/lib" -lcuctx
echo "built launch-paths, cupti-cost, op-cost into $out"
