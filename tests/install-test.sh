#!/usr/bin/env bash
# tests/install-test.sh: `make install` into a temp dir, then build and run an outside program with
# `g++ prog.cc $(pkg-config --cflags --libs cuctx)`. Run by `make test` (exit 0 pass, else fail).
set -eu
make_cmd=${MAKE:-make}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$make_cmd --no-print-directory install PREFIX="$tmp/prefix" BUILD="${BUILD:?}" CUDA="${CUDA:?}" >"$tmp/install.log"
cat > "$tmp/prog.cc" <<'CC'
#include <cstdio>
#include <sstream>
#include "base/error.h"
#include "cudamatrix/cu-device.h"
#include "matrix/matrix.h"
int main() {
  cuctx::CuDevice::Instantiate().SelectGpuId("no");
  cuctx::Matrix<float> a(2, 3), b(3, 2), c(2, 2);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) a(i, j) = b(j, i) = static_cast<float>(i + j);
  c.AddMatMat(1.0f, a, cuctx::kNoTrans, b, cuctx::kNoTrans, 0.0f);
  std::ostringstream out;
  c.Write(out, false);
  std::printf("%s", out.str().c_str());
  try {
    cuctx::Matrix<float> bad(2, 2);
    bad.AddMatMat(1.0f, a, cuctx::kNoTrans, a, cuctx::kNoTrans, 0.0f);
  } catch (const cuctx::Error&) {
    std::printf("caught\n");
  }
  return 0;
}
CC
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
g++ "$tmp/prog.cc" $(pkg-config --cflags --libs cuctx) -o "$tmp/prog"
"$tmp/prog" 2>/dev/null >"$tmp/out.txt"
expected=$' [\n  5 8 \n  8 14 ]\ncaught'
if [ "$(cat "$tmp/out.txt")" != "$expected" ]; then
  echo "unexpected output from the outside program:"; cat "$tmp/out.txt"
  exit 1
fi
# pkg-config --libs carries what the installed headers need at link time: a program that calls an
# inline function of matrix/cblas-wrappers.h (it calls cblas_sspmv) links with the flags alone.
cat > "$tmp/blas.cc" <<'CC'
#include <cstdio>
#include "matrix/cblas-wrappers.h"
int main() {
  float packed[3] = {2, 1, 3};  // lower-packed [[2, 1], [1, 3]]
  float x[2] = {1, 1}, y[2] = {0, 0};
  cuctx::cblas_Xspmv(2, 1.0f, packed, x, 1, 0.0f, y, 1);
  std::printf("%g %g\n", y[0], y[1]);
  return 0;
}
CC
g++ "$tmp/blas.cc" $(pkg-config --cflags --libs cuctx) -o "$tmp/blas" 2>"$tmp/blas.err" ||
  { echo "a program using matrix/cblas-wrappers.h does not link with pkg-config --libs cuctx:";
    head -20 "$tmp/blas.err"; exit 1; }
[ "$("$tmp/blas")" = "3 4" ] || { echo "cblas_Xspmv through the installed header gave: $("$tmp/blas")"; exit 1; }

# README's porting example, as a user would build it: extracted from the README, compiled against
# the installed headers with pkg-config, run (optional GPU: the CPU when there is none).
readme=$(dirname "$0")/../README.md
awk '/^<!-- porting-example/ {on = 1; next} on && /^```cpp/ {code = 1; next} code && /^```/ {exit}
     code {print}' "$readme" >"$tmp/porting.cc"
if [ ! -s "$tmp/porting.cc" ]; then
  echo "no porting example found in README.md"; exit 1
fi
g++ "$tmp/porting.cc" $(pkg-config --cflags --libs cuctx) -o "$tmp/porting" 2>"$tmp/porting.err" ||
  { echo "README's porting example does not compile:"; head -20 "$tmp/porting.err"; exit 1; }
"$tmp/porting" --use-gpu=optional >"$tmp/porting.out" 2>&1 ||
  { echo "README's porting example failed:"; cat "$tmp/porting.out"; exit 1; }
grep -q "mean row sum 1" "$tmp/porting.out" ||
  { echo "README's porting example printed something unexpected:"; cat "$tmp/porting.out"; exit 1; }

# The tools are installed and run from there.
for tool in cuda-gpu-available gpu-health-check cu-memory-plan; do
  if [ ! -x "$tmp/prefix/bin/$tool" ]; then
    echo "tool $tool was not installed into PREFIX/bin"; exit 1
  fi
done
if ! "$tmp/prefix/bin/cu-memory-plan" --json tests/data/synthetic-nnet3.trace >"$tmp/plan.json"; then
  echo "installed cu-memory-plan failed"; exit 1
fi
grep -q '"peak_bytes"' "$tmp/plan.json" || { echo "installed cu-memory-plan: no JSON"; exit 1; }

# The public headers stand alone for an outside program; the private ones are not installed.
inc="$tmp/prefix/include/cuctx"
if [ -e "$inc/cudamatrix/internal" ] || [ -n "$(find "$inc" -name '*-internal.h' -o -name '*.cuh')" ]; then
  echo "private headers were installed:"; find "$inc" -path '*internal*' -o -name '*.cuh'
  exit 1
fi
# cutool/ (the bin/ tools' frame and health check) is not part of the installed library.
if [ -e "$inc/cutool" ] || [ -e "$tmp/prefix/lib/libcuctx-cutool.a" ]; then
  echo "cutool/ was installed:"; find "$inc/cutool" "$tmp/prefix/lib" -name '*cutool*'
  exit 1
fi
for h in $(cd "$inc" && find . -name '*.h' | sed 's#^\./##' | sort); do
  echo "#include \"$h\"" >"$tmp/one.cc"
  if ! g++ -fsyntax-only "$tmp/one.cc" $(pkg-config --cflags cuctx) 2>"$tmp/one.err"; then
    echo "installed header $h does not compile on its own:"; head -5 "$tmp/one.err"
    exit 1
  fi
done
echo '#include "cudamatrix/internal/cu-kernels.h"' >"$tmp/private.cc"
if g++ -fsyntax-only "$tmp/private.cc" $(pkg-config --cflags cuctx) 2>/dev/null; then
  echo "an outside program could include cudamatrix/internal/cu-kernels.h"
  exit 1
fi
echo "outside programs built with pkg-config and ran correctly (README porting example too; public headers stand alone, private ones unreachable)"
