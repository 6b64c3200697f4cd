#!/usr/bin/env bash
# tools/run-tests.sh: runs test binaries and script tests, prints one summary line per binary and
# ends with exactly one line "N passed, N failed, N skipped" (CI reads it).
# Usage: tools/run-tests.sh TEST...   (gtest binaries, or *.sh scripts: exit 0 pass, 77 skip, else fail)
# Environment: CUCTX_TEST_GPU=no|optional|yes is passed to the gtest binaries; TEST_TIMEOUT (s, 600).
set -u
if [ $# -eq 0 ]; then
  echo "usage: $0 TEST..." >&2
  exit 2
fi
timeout_s=${TEST_TIMEOUT:-600}
log_dir=${BUILD:-build}/test-logs
mkdir -p "$log_dir"
total_pass=0 total_fail=0 total_skip=0

count() {  # count LABEL LOG: the N of gtest's "[  LABEL  ] N test(s)" summary line, or 0
  local n
  n=$(grep -E "^\[ +$1 +\] [0-9]+ tests?" "$2" | tail -n 1 | sed -E 's/^\[[^]]*\] ([0-9]+).*/\1/')
  echo "${n:-0}"
}

for t in "$@"; do
  name=${t#*/tests/}
  name=${name#tests/}
  log="$log_dir/$(echo "$name" | tr '/' '_').log"
  start=$(date +%s%N)
  if [[ "$t" == *.sh ]]; then
    timeout "$timeout_s" bash "$t" >"$log" 2>&1
    rc=$?
    p=0 f=0 s=0
    case $rc in 0) p=1 ;; 77) s=1 ;; *) f=1 ;; esac
  else
    timeout "$timeout_s" "$t" --gtest_color=no >"$log" 2>&1
    rc=$?
    p=$(count PASSED "$log")
    f=$(count FAILED "$log")
    s=$(count SKIPPED "$log")
    # A crash, timeout or a failure before gtest's summary still counts as one failure.
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  fi
  ms=$((($(date +%s%N) - start) / 1000000))
  if [ "$f" -gt 0 ]; then verdict=FAIL; else verdict=ok; fi
  printf '%-5s %-42s %4d passed, %d failed, %d skipped (%d.%01d s)\n' "$verdict" "$name" "$p" "$f" "$s" \
    $((ms / 1000)) $((ms % 1000 / 100))
  if [ "$f" -gt 0 ]; then
    echo "----- $name (exit $rc; full log: $log) -----"
    grep -E '^\[  FAILED  \]|Failure|error|seed|what\(\)' "$log" | head -n 40
    [ "$rc" -ge 124 ] && tail -n 20 "$log"
    echo "-----"
  fi
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
  total_skip=$((total_skip + s))
done
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
