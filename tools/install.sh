#!/usr/bin/env bash
# tools/install.sh: installs headers, libraries, cuctx.pc, the CMake package (lib/cmake/cuctx) and
# the bin/ tools under a prefix (called by `make install`).
# Usage: tools/install.sh PREFIX BUILD_DIR CUDA(0|1) CUDA_HOME "MODULES"
# Only the library modules are installed (the Makefile's LIB_MODULES): their public headers (not
# internal/) and archives. cutool/ is support for bin/ and is left out; the tools built from it
# (and the rest of bin/: gpu-health-check, cuda-gpu-available, cu-memory-plan, the benchmarks,
# ...) go to PREFIX/bin, and the data the benchmarks read by default (tests/data) to
# PREFIX/share/cuctx, where the installed tools look for it (FindToolDataFile in cutool/tool.h).
# The version comes from base/version.h.
set -eu
if [ $# -ne 5 ]; then
  echo "usage: $0 PREFIX BUILD_DIR CUDA CUDA_HOME \"MODULES\"" >&2
  exit 2
fi
prefix=$1 build=$2 cuda=$3 cuda_home=$4 modules=$5
mkdir -p "$prefix/lib/pkgconfig"
prefix=$(cd "$prefix" && pwd)
version=$(sed -n 's/^#define CUCTX_VERSION "\(.*\)"$/\1/p' base/version.h)
[ -n "$version" ] || { echo "$0: no CUCTX_VERSION in base/version.h" >&2; exit 1; }
for dir in $modules; do
  mkdir -p "$prefix/include/cuctx/$dir"
  install -m 644 "$dir"/*.h "$prefix/include/cuctx/$dir/"
  install -m 644 "$build/lib/libcuctx-$dir.a" "$prefix/lib/"
done
# util/ holds only headers with Kaldi's names that forward to base/ (no archive of its own).
mkdir -p "$prefix/include/cuctx/util"
install -m 644 util/*.h "$prefix/include/cuctx/util/"
install -m 755 "$build/lib/libcuctx.so" "$prefix/lib/"
mkdir -p "$prefix/bin"
for tool in "$build"/bin/*; do
  [ -f "$tool" ] && [ -x "$tool" ] && install -m 755 "$tool" "$prefix/bin/"
done
mkdir -p "$prefix/share/cuctx"
install -m 644 tests/data/kaldi-speed-h100.tsv tests/data/synthetic-nnet3.trace "$prefix/share/cuctx/"
extra_cflags=""
if [ "$cuda" = 1 ]; then extra_cflags="-I$cuda_home/include -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1"; fi
# HAVE_CUDA is the flag Kaldi's build sets for its own programs (kaldi.mk); code ported from Kaldi
# tests it, so consumers get it with the same value as CUCTX_HAVE_CUDA. No -std flag: it would
# override a consumer's own (-std=c++20 before $(pkg-config ...)); cuctx needs C++17 or later, which
# g++ 11 and newer use by default (README says so; the CMake package sets it as a compile feature).
cat > "$prefix/lib/pkgconfig/cuctx.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include/cuctx
libdir=\${prefix}/lib

Name: cuctx
Description: Kaldi-style GPU runtime, CUDA matrices and CPU fallback
Version: $version
Cflags: -I\${includedir} -pthread -DCUCTX_HAVE_CUDA=$cuda -DHAVE_CUDA=$cuda $extra_cflags
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lcuctx -pthread
PC
# CMake package: find_package(cuctx) gives the imported target cuctx::cuctx with the same flags.
cmake_inc="" cmake_defs=""
if [ "$cuda" = 1 ]; then
  cmake_inc=";$cuda_home/include"
  cmake_defs=";CUDA_API_PER_THREAD_DEFAULT_STREAM=1"
fi
mkdir -p "$prefix/lib/cmake/cuctx"
cat > "$prefix/lib/cmake/cuctx/cuctxConfig.cmake" <<CMAKE
# cuctxConfig.cmake: find_package(cuctx) for the cuctx installed under this prefix (written by
# tools/install.sh). Defines the imported target cuctx::cuctx and cuctx_CUDA (1 if built with CUDA).
include(CMakeFindDependencyMacro)
find_dependency(Threads)
get_filename_component(_cuctx_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET cuctx::cuctx)
  add_library(cuctx::cuctx SHARED IMPORTED)
  set_target_properties(cuctx::cuctx PROPERTIES
    IMPORTED_LOCATION "\${_cuctx_prefix}/lib/libcuctx.so"
    INTERFACE_INCLUDE_DIRECTORIES "\${_cuctx_prefix}/include/cuctx$cmake_inc"
    INTERFACE_COMPILE_DEFINITIONS "CUCTX_HAVE_CUDA=$cuda;HAVE_CUDA=$cuda$cmake_defs"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
set(cuctx_CUDA $cuda)
unset(_cuctx_prefix)
CMAKE
cat > "$prefix/lib/cmake/cuctx/cuctxConfigVersion.cmake" <<CMAKE
# cuctxConfigVersion.cmake: version $version; a request is compatible when it asks for the same
# major and minor version (0.x releases may change the API) and no newer patch.
set(PACKAGE_VERSION "$version")
set(PACKAGE_VERSION_COMPATIBLE FALSE)
set(PACKAGE_VERSION_EXACT FALSE)
if(PACKAGE_FIND_VERSION_MAJOR EQUAL 0 AND PACKAGE_FIND_VERSION_MINOR EQUAL 1
   AND NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
CMAKE
echo "installed cuctx $version into $prefix (headers in include/cuctx, libraries, pkgconfig/cuctx.pc and cmake/cuctx in lib, tools in bin, benchmark data in share/cuctx)"
