#!/usr/bin/env bash
# tools/kernel-trace/build.sh OUTDIR: builds OUTDIR/libcupti-trace.so here (CUDA's headers and
# libcupti from /usr/local/cuda), to be carried to the GPU host with the two Python scripts.
set -eu
out=${1:?usage: build.sh OUTDIR}
cuda=${CUDA_HOME:-/usr/local/cuda}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
g++ -std=c++17 -O2 -Wall -shared -fPIC -o "$out/libcupti-trace.so" "$here/cupti-trace.cc" \
  -I"$cuda/include" -L"$cuda/lib64" -lcupti -ldl -pthread \
  -Wl,-rpath,"$cuda/lib64:$cuda/extras/CUPTI/lib64"
cp "$here/stamp-lines.py" "$here/bin-by-line.py" "$here/compare.py" "$here/api-by-line.py" \
  "$here/speedlog.py" "$here/ceiling.py" \
  "$here/api-compare.py" "$out/"
echo "built $out/libcupti-trace.so"
