#!/usr/bin/env bash
# card.sh MODE [ROUNDS]: on the GPU host, in a folder made by tools/kaldi-speed/pack.sh, measures
# cuctx against Kaldi's build of its own speed tests; results go to $OUT (at most 8 files).
#   card.sh "matrix" 4                 CONTROL=1 compare.sh, pinned to core 3 (about 7.5 minutes)
#   card.sh "vector sp-matrix" 4       the same for those tests (about 2.5 minutes)
#   card.sh trace                      kernel time per call of cu-matrix-speed-test at 512 and 1024,
#                                      Kaldi's build then cuctx's under tools/kernel-trace, then
#                                      three processes of launch-paths (all pinned; 2 minutes)
# Writes card.txt (the card, driver and revision), then compare.txt (compare.sh's output),
# all.txt (compare.py --all), rounds.txt (rounds.py) and logs.tgz; or trace.txt, trace.tgz and
# launch.txt. With the logs of a `card.sh matrix` run on the same host, trace.tgz and launch.txt
# give tools/kernel-trace/ceiling.py what it needs.
set -u
mode=${1:?usage: card.sh MODE [ROUNDS]}
rounds=${2:-4}
out=${OUT:?card.sh writes to \$OUT}
cd "$(dirname "$0")" || exit 1
[ -d kaldi ] || tar xJf kaldi-speed-bin.tar.xz
[ -f lib/libcuctx.so ] || xz -dc lib/libcuctx.so.xz > lib/libcuctx.so
export LD_LIBRARY_PATH=$PWD/lib:$PWD/kaldi/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "cuctx $(cat REVISION)"; } | tee "$out/card.txt"
if [ "$mode" = trace ]; then
  mkdir -p "$out/trace"
  for side in kaldi cuctx; do
    if [ $side = kaldi ]; then cmd=(kaldi/run.sh cu-matrix-speed-test-env); else cmd=(kaldi-speed/cu-matrix-speed-test yes 0); fi
    KALDI_SPEED_VERBOSE=0 CUDA_INJECTION64_PATH=$PWD/kt/libcupti-trace.so CUTRACE=kernels CUTRACE_OUT=/tmp/card-$side \
      taskset -c 3 "${cmd[@]}" 2>&1 | python3 kt/stamp-lines.py > "$out/trace/$side.log"
    python3 kt/bin-by-line.py /tmp/card-$side "$out/trace/$side.log" "$out/trace/$side.tsv"
  done
  python3 kt/compare.py "$out/trace/kaldi.tsv" "$out/trace/cuctx.tsv" 512 > "$out/trace.txt" 2>&1
  tail -n 5 "$out/trace.txt"
  tar czf "$out/trace.tgz" -C "$out" trace && rm -rf "$out/trace"
  for i in 1 2 3; do taskset -c 3 lb/launch-paths; done > "$out/launch.txt" 2>&1
  exit 0
fi
CONTROL=1 taskset -c 3 bash kaldi-speed/compare.sh kaldi kaldi-speed "$out/logs" "$rounds" "$mode" > "$out/compare.txt" 2>&1
rc=$?
grep -E "TOTAL|CONTROL|per size" "$out/compare.txt"
python3 kaldi-speed/compare.py "$out/logs" --all > "$out/all.txt" 2>&1
python3 rounds.py "$out/logs" > "$out/rounds.txt" 2>&1 && cat "$out/rounds.txt"
tar czf "$out/logs.tgz" -C "$out" logs && rm -rf "$out/logs"
exit $rc
