#!/usr/bin/env bash
# tools/kaldi-variant/run.sh: a stand-in for Kaldi's run.sh, so that ../shared/kaldi-speed/compare.sh
# compares cuctx against a variant of itself. Copy this folder next to build.sh's OUTDIR (both under
# one folder, OUTDIR named kaldi-speed) and pass it as KALDI_DIR; compare.py then prints cuctx as
# given / the variant. The variant is the same binary with, when set:
#   WMODE  -> CUCTX_CAPTURE_WATCH, WDOM -> CUCTX_CAPTURE_WATCH_DOMAINS,
#   LIBDIR -> put first on LD_LIBRARY_PATH (another libcuctx.so build).
# Runs `tls` and `tls-4` in BENCHMARKS.md used it, e.g.
#   LIBDIR=$PWD/lib2 taskset -c 3 kaldi-speed/compare.sh kaldi-variant kaldi-speed OUT 3 "matrix vector"
set -u
t=${1%-env}
[ -n "${WMODE:-}" ] && export CUCTX_CAPTURE_WATCH=$WMODE
[ -n "${WDOM:-}" ] && export CUCTX_CAPTURE_WATCH_DOMAINS=$WDOM
[ -n "${LIBDIR:-}" ] && export LD_LIBRARY_PATH=$LIBDIR:${LD_LIBRARY_PATH:-}
exec "$(dirname "$0")/../kaldi-speed/$t" yes "${KALDI_SPEED_VERBOSE:-0}"
