#!/usr/bin/env bash
# tests/cmake-test.sh: `make install` into a temp dir, then configure, build and run an outside CMake
# project that finds cuctx with find_package(cuctx) and links the imported target cuctx::cuctx.
# Run by `make test`: exit 0 pass, 77 skip (no cmake), else fail.
set -eu
command -v cmake >/dev/null 2>&1 || { echo "skipped: cmake is not installed"; exit 77; }
make_cmd=${MAKE:-make}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$make_cmd --no-print-directory install PREFIX="$tmp/prefix" BUILD="${BUILD:?}" CUDA="${CUDA:?}" >"$tmp/install.log"
for f in cuctxConfig.cmake cuctxConfigVersion.cmake; do
  [ -f "$tmp/prefix/lib/cmake/cuctx/$f" ] || { echo "lib/cmake/cuctx/$f was not installed"; exit 1; }
done
mkdir -p "$tmp/project"
cat > "$tmp/project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(uses_cuctx CXX)
find_package(cuctx 0.1 REQUIRED)
add_executable(uses_cuctx main.cc)
target_link_libraries(uses_cuctx PRIVATE cuctx::cuctx)
CMAKE
cat > "$tmp/project/main.cc" <<'CC'
#include <cstdio>
#include "cudamatrix/cu-device.h"
#include "cudamatrix/cu-matrix.h"
#include "matrix/cblas-wrappers.h"
#include "matrix/matrix.h"
int main() {
  cuctx::CuDevice::Instantiate().SelectGpuId("optional");
  // An inline function of the installed BLAS wrapper header: the target must link OpenBLAS.
  float packed[3] = {2, 1, 3}, x[2] = {1, 1}, y[2] = {0, 0};
  cuctx::cblas_Xspmv(2, 1.0f, packed, x, 1, 0.0f, y, 1);
  if (y[0] != 3 || y[1] != 4) return 1;
  cuctx::CuMatrix<float> a(3, 4);
  a.Set(2.0f);
  cuctx::CuMatrix<float> c(3, 3);
  c.AddMatMat(1.0f, a, cuctx::kNoTrans, a, cuctx::kTrans, 0.0f);  // every element 16
  std::printf("sum %.1f\n", static_cast<double>(c.Sum()));
  return 0;
}
CC
cmake -S "$tmp/project" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/configure.log" 2>&1 ||
  { echo "configuring the outside CMake project failed:"; tail -20 "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build" >"$tmp/build.log" 2>&1 ||
  { echo "building the outside CMake project failed:"; tail -20 "$tmp/build.log"; exit 1; }
"$tmp/build/uses_cuctx" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  { echo "the outside CMake program failed:"; cat "$tmp/out.txt" "$tmp/err.txt"; exit 1; }
grep -qx "sum 144.0" "$tmp/out.txt" ||
  { echo "the outside CMake program printed something unexpected:"; cat "$tmp/out.txt"; exit 1; }
# A version the package does not provide is refused.
sed -i 's/find_package(cuctx 0.1 REQUIRED)/find_package(cuctx 9.0 REQUIRED)/' "$tmp/project/CMakeLists.txt"
if cmake -S "$tmp/project" -B "$tmp/build9" -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/c9.log" 2>&1; then
  echo "find_package(cuctx 9.0) succeeded against version 0.1.0"; exit 1
fi
echo "an outside CMake project found cuctx with find_package, built against cuctx::cuctx and ran"
