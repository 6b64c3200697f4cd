#!/usr/bin/env bash
# tools/lint.sh: checks that need no compiler run of the whole tree:
#   1. every header (public, internal/ and cutool/) compiles on its own with CUDA=0 flags;
#   2. cudaMalloc/cudaFree (and cudaMallocAsync/cudaFreeAsync) appear only in the allocator and its
#      upstreams (cu-allocator-cuda.cc, cu-allocator-async.cc) and the per-thread reduction
#      workspace (cu-readback.cc, which says why), the driver's cuMem* (VMM) only in
#      cu-allocator-vmm.cc, cudaHostAlloc/cudaHostRegister only in cu-pinned.cc (benchmarks that
#      time the raw calls as baselines are exempt, and say so);
#   3. the include layers (tools/check-layers.sh): no include points up the module order or the
#      runtime's layers declared in cudamatrix/layers.txt, and no include cycle between units;
#   4. every .cu file of the library that defines kernels registers them with CUCTX_KERNEL_FILE()
#      (internal/cu-launch.h), so that SelectGpuId loads them before their first launch.
# Usage: tools/lint.sh   (exit 1 on any finding)
set -u
cd "$(dirname "$0")/.."
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for h in base/*.h matrix/*.h cudamatrix/*.h cudamatrix/internal/*.h cutool/*.h util/*.h; do
  echo "#include \"$h\"" >"$tmp/t.cc"
  if ! g++ -std=c++17 -I. -DCUCTX_HAVE_CUDA=0 -fsyntax-only -Wall -Wextra "$tmp/t.cc" 2>"$tmp/err"; then
    echo "lint: $h does not compile on its own:"; head -5 "$tmp/err"; fail=1
  fi
done
raw_device=$(grep -nE '\bcuda(Malloc|Free|MallocPitch|MallocAsync|FreeAsync)\(' --include='*.cc' --include='*.cu' -r base matrix cudamatrix cutool bin |
  grep -vE '^cudamatrix/cu-(allocator(-cuda|-async)?|readback|graph-nodes)\.cc:' | grep -vE '^bin/[a-z-]+-bench\.cc:')
raw_host=$(grep -nE '\bcuda(HostAlloc|FreeHost|HostRegister|HostUnregister|MallocHost)\(' --include='*.cc' --include='*.cu' -r base matrix cudamatrix cutool bin |
  grep -vE '^cudamatrix/cu-pinned\.cc:' | grep -vE '^bin/[a-z-]+-bench\.cc:')
raw_vmm=$(grep -nE '\bcuMem[A-Z][A-Za-z]*\b' --include='*.cc' --include='*.cu' --include='*.h' -r base matrix cudamatrix cutool bin |
  grep -vE '^cudamatrix/cu-allocator-vmm\.cc:' | grep -vE '^[^:]+:[0-9]+: *//')
if [ -n "$raw_device$raw_host$raw_vmm" ]; then
  echo "lint: raw CUDA allocation outside the allocators:"
  printf '%s\n' "$raw_device" "$raw_host" "$raw_vmm" | grep -v '^$'; fail=1
fi
for f in cudamatrix/*.cu cutool/*.cu; do
  if grep -q '__global__' "$f" && ! grep -q '^CUCTX_KERNEL_FILE()' "$f"; then
    echo "lint: $f defines kernels but lacks CUCTX_KERNEL_FILE() after its includes"; fail=1
  fi
done
if ! tools/check-layers.sh; then
  echo "lint: include layers: see above (the order is declared in cudamatrix/layers.txt)"; fail=1
fi
[ $fail -eq 0 ] && echo "lint: ok"
exit $fail
