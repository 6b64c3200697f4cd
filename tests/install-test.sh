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
# No -std in the flags: a consumer's own standard (here C++20, for std::span) must win.
if pkg-config --cflags cuctx | grep -q -- '-std='; then
  echo "pkg-config --cflags cuctx sets the language standard: $(pkg-config --cflags cuctx)"; exit 1
fi
cat > "$tmp/cxx20.cc" <<'CC'
#include <span>
#include "matrix/matrix.h"
int main() {
  cuctx::Matrix<float> m(2, 3);
  std::span<const float> row(m.RowData(0), m.NumCols());
  return static_cast<int>(row.size()) == 3 ? 0 : 1;
}
CC
g++ -std=c++20 "$tmp/cxx20.cc" $(pkg-config --cflags --libs cuctx) -o "$tmp/cxx20" 2>"$tmp/cxx20.err" ||
  { echo "g++ -std=c++20 with pkg-config's flags fails:"; head -5 "$tmp/cxx20.err"; exit 1; }
"$tmp/cxx20" || { echo "the C++20 program failed"; exit 1; }
g++ -std=c++17 "$tmp/prog.cc" $(pkg-config --cflags --libs cuctx) -o "$tmp/prog"
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
# As in Kaldi, --help prints the usage (with the --cuda-* options RegisterDeviceOptions and
# RegisterCuAllocatorOptions add) and exits 0 without computing anything.
"$tmp/porting" --help >"$tmp/porting-help.out" 2>&1 ||
  { echo "README's porting example: --help exits $?"; cat "$tmp/porting-help.out"; exit 1; }
if grep -q "mean row sum" "$tmp/porting-help.out" ||
  ! grep -q -- "--cuda-use-tf32-compute" "$tmp/porting-help.out" ||
  ! grep -q -- "--cuda-memory-proportion" "$tmp/porting-help.out"; then
  echo "README's porting example: --help went on to compute or lacks the --cuda-* options:"
  cat "$tmp/porting-help.out"; exit 1
fi
"$tmp/porting" --cuda-memory-proportion=-1 >"$tmp/porting-bad.out" 2>&1 &&
  { echo "README's porting example accepted --cuda-memory-proportion=-1"; exit 1; }
grep -q -- "--cuda-memory-proportion" "$tmp/porting-bad.out" ||
  { echo "README's porting example: bad option message:"; cat "$tmp/porting-bad.out"; exit 1; }

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
"$tmp/prefix/bin/cu-memory-plan" --version | grep -qE '^cu-memory-plan \(cuctx [0-9.]+, revision ' ||
  { echo "installed cu-memory-plan --version: $("$tmp/prefix/bin/cu-memory-plan" --version)"; exit 1; }

# The installed benchmarks find their data (installed in PREFIX/share/cuctx) from any folder.
for f in kaldi-speed-h100.tsv synthetic-nnet3.trace; do
  cmp -s "tests/data/$f" "$tmp/prefix/share/cuctx/$f" || { echo "$f not installed in share/cuctx"; exit 1; }
done
if [ "$CUDA" = 1 ]; then
  (cd "$tmp" && "$tmp/prefix/bin/cu-kaldi-speed-bench" --print-args=false --use-gpu=no --time=0.001 \
    --dims=32 --only='CuVector::Sum<float>' >"$tmp/kaldi.out" 2>&1) ||
    { echo "installed cu-kaldi-speed-bench, run outside the source tree:"; cat "$tmp/kaldi.out"; exit 1; }
  grep -q "Rows from $tmp/prefix/bin/../share/cuctx/kaldi-speed-h100.tsv" "$tmp/kaldi.out" ||
    { echo "installed cu-kaldi-speed-bench did not use the installed table:"; head -5 "$tmp/kaldi.out"; exit 1; }
  # Without a GPU it stops with exit 3 after planning the trace; a missing trace would be exit 1.
  rc=0
  (cd "$tmp" && CUDA_VISIBLE_DEVICES= "$tmp/prefix/bin/cu-memory-plan-bench" --print-args=false \
    >"$tmp/planbench.out" 2>&1) || rc=$?
  [ "$rc" -eq 3 ] || { echo "installed cu-memory-plan-bench: exit $rc"; cat "$tmp/planbench.out"; exit 1; }
fi

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
