#!/usr/bin/env bash
# tools/gpu-bundle.sh: packs a build for a GPU host that has the CUDA runtime but no Debian packages:
# the test binaries and tools (debug info stripped) plus the shared libraries they need that such a
# host lacks (OpenBLAS and its Fortran runtime), into one compressed file.
# Usage: tools/gpu-bundle.sh [BUILD_DIR] [OUTPUT]   (defaults: build/release build/gpu-bundle.tar.xz)
# On the GPU host: tar xJf build/gpu-bundle.tar.xz -C /tmp && tools/gpu-test.sh /tmp/gpu-bundle
set -euo pipefail
build=${1:-build/release}
output=${2:-build/gpu-bundle.tar.xz}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/gpu-bundle"
mkdir -p "$root/lib"
# Only binaries whose source is still in the tree: a test file that was split or removed leaves its
# old binary in the build directory, which would otherwise travel and run as if current.
(cd "$build" && find bin tests -type f -perm -u+x ! -name '*.sh') | while read -r f; do
  if [ ! -f "$f.cc" ]; then echo "gpu-bundle: skipping $build/$f (no $f.cc: a stale binary)" >&2; continue; fi
  mkdir -p "$root/$(dirname "$f")"
  strip --strip-debug -o "$root/$f" "$build/$f"
done
# Libraries outside the CUDA toolkit and glibc/libstdc++ that the binaries link.
for bin in $(find "$root/bin" "$root/tests" -type f); do ldd "$bin"; done |
  awk '/=> \// {print $3}' | sort -u |
  grep -E 'openblas|gfortran|quadmath' | while read -r lib; do
    cp -L "$lib" "$root/lib/$(basename "$lib")"
  done
git rev-parse --short HEAD >"$root/REVISION" 2>/dev/null || echo unknown >"$root/REVISION"
tar -C "$stage" -cJf "$output" gpu-bundle
echo "wrote $output ($(du -h "$output" | cut -f1)): $(find "$root" -type f | wc -l) files"
