#!/usr/bin/env bash
# tools/install-deps.sh: installs the Debian packages cuctx needs, only those that are missing.
# Usage: tools/install-deps.sh [--if-missing] [--check]
#   --check       list what is missing and exit 1 if anything is (installs nothing)
#   --if-missing  quiet when nothing is missing (used by make)
# Packages come from Debian's archive only (apt-get); nothing is downloaded from anywhere else.
# The CUDA toolkit is not a Debian package here: it is used when $CUDA_HOME/bin/nvcc exists.
set -eu
packages=(g++ make pkg-config cmake libopenblas-dev libgtest-dev libbenchmark-dev clang-format)
mode=install
quiet=0
for arg in "$@"; do
  case $arg in
    --check) mode=check ;;
    --if-missing) quiet=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown argument '$arg' (expected --check or --if-missing)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  [ "$quiet" -eq 1 ] || echo "install-deps: all ${#packages[@]} packages present (${packages[*]})"
  exit 0
fi
if [ "$mode" = check ]; then
  echo "install-deps: missing: ${missing[*]}"
  exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"; then
  echo "install-deps: refreshing the package lists and retrying"
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
echo "install-deps: installed ${missing[*]}"
