#!/usr/bin/env bash
# tools/kaldi-speed/pack.sh PREFIX DIR: here (no GPU), fills DIR with what one GPU call needs to
# measure cuctx against Kaldi's own speed tests: Kaldi's build (../shared/kaldi-speed's
# kaldi-speed-bin.tar.xz), the three tests built against the cuctx installed at PREFIX (`make
# install PREFIX=...`), that libcuctx.so stripped and xz-compressed, the kernel tracer
# (tools/kernel-trace), tools/launch-bench's programs and the scripts card.sh and rounds.py.
# About 12 MB; carry DIR (an ignored path such as .gpu) and run DIR/card.sh there. Takes 1-2
# minutes on 2 cores. DIR/REVISION is this checkout's HEAD when packed: install from the same tree
# first.
set -euo pipefail
[[ $# -eq 2 ]] || { sed -n 2,9p "$0"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shared=${KALDI_SPEED_DIR:-$root/../shared/kaldi-speed}
prefix=$(cd "$1" && pwd)
dir=$2
[[ -f $prefix/lib/libcuctx.so ]] || { echo "pack.sh: no $prefix/lib/libcuctx.so (run make install PREFIX=$1)" >&2; exit 1; }
[[ -f $shared/kaldi-speed-bin.tar.xz ]] || { echo "pack.sh: no $shared/kaldi-speed-bin.tar.xz (set KALDI_SPEED_DIR)" >&2; exit 1; }
mkdir -p "$dir/lib"
rm -rf "$dir/kaldi-speed" "$dir/kaldi" "$dir/lib/libcuctx.so"
"$shared/build.sh" "$prefix" "$dir/kaldi-speed"
cp "$shared/kaldi-speed-bin.tar.xz" "$dir/"
tmp=$(mktemp)
strip --strip-debug -o "$tmp" "$prefix/lib/libcuctx.so"
xz -T2 -c "$tmp" > "$dir/lib/libcuctx.so.xz"
rm -f "$tmp"
"$root/tools/kernel-trace/build.sh" "$dir/kt" > /dev/null
"$root/tools/launch-bench/build.sh" "$prefix" "$dir/lb" > /dev/null
cp "$here/card.sh" "$here/rounds.py" "$dir/"
git -C "$root" rev-parse --short HEAD > "$dir/REVISION" 2>/dev/null || echo unknown > "$dir/REVISION"
echo "packed $(cat "$dir/REVISION") into $dir ($(du -sh "$dir" | cut -f1))"
