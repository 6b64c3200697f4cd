#!/usr/bin/env bash
# tools/gpu-graph-check.sh: the CUDA-graph checks of issue 26 on a GPU host, self-checking.
#   1. every graph test (tests/cudamatrix/cu-graph-*-test, cu-capture-gate-test) in each memory
#      mode (CUCTX_GRAPH_MEMORY=shared|nodes|private), GPU mode;
#   2. the multi-threaded capture test LOOPS times (default 50) in the default shared mode, with
#      CUDA_LOG_FILE=stderr (the driver's error log, CUDA 12.9+: it says why a capture was
#      invalidated); each failing run's log is kept and its driver lines are printed;
#   3. compute-sanitizer memcheck and racecheck on the graph tests (skipped without it);
#   4. cu-graph-bench --only=buckets and CUCTX_CAPTURE_WATCH=off cu-allocator-bench --only=detect
#      (their own verdict lines).
# Writes one log per step under OUT and a summary; exits non-zero if any step failed.
# Usage: tools/gpu-graph-check.sh [ROOT]   ROOT holds bin/ and tests/ (default build/release).
# Environment: OUT (default ROOT/gpu-graph-check), LOOPS (default 50); SKIP_MODES=1, SKIP_LOOP=1,
#   SKIP_SANITIZER=1, SKIP_BENCH=1 leave out parts 1-4 (to split the run into shorter calls).
set -u
root=${1:-build/release}
out=${OUT:-$root/gpu-graph-check}
loops=${LOOPS:-50}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/gpu-steps.sh
source "$here/gpu-steps.sh"
t=$root/tests/cudamatrix
graph_tests=$(ls "$t"/cu-graph-*-test "$t"/cu-capture-gate-test)

for mode in shared nodes private; do
  [ "${SKIP_MODES:-0}" = 1 ] && break
  for g in $graph_tests; do
    step "$mode $(basename "$g")" "$mode-$(basename "$g").log" \
      env CUCTX_TEST_GPU=yes CUCTX_GRAPH_MEMORY=$mode "$g" --gtest_brief=1
  done
done

# The intermittent capture invalidation: LOOPS runs of the threads test in the default mode.
loop_threads() {
  local failed=0 i
  for ((i = 1; i <= loops; i++)); do
    if ! env CUCTX_TEST_GPU=yes CUCTX_GRAPH_MEMORY=shared CUDA_LOG_FILE=stderr \
      "$t/cu-graph-threads-test" --gtest_brief=1 >"$out/threads-run-$i.log" 2>&1; then
      failed=$((failed + 1))
      echo "run $i FAILED; its failures and driver log lines:"
      grep -E 'Failure|threw|CUDA|cuda|capture|Capture' "$out/threads-run-$i.log" | head -20
    else
      rm -f "$out/threads-run-$i.log"
    fi
  done
  echo "cu-graph-threads-test, shared mode: $failed of $loops runs failed"
  [ $failed -eq 0 ]
}
[ "${SKIP_LOOP:-0}" != 1 ] && step "threads test x$loops, shared" threads-loop.log loop_threads

if [ "${SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    for g in $graph_tests; do
      extra=""
      [ $tool = memcheck ] && extra="--leak-check full"
      # shellcheck disable=SC2086
      step "$tool $(basename "$g")" "$tool-$(basename "$g").log" env CUCTX_TEST_GPU=yes \
        CUCTX_TEST_QUICK=1 CUCTX_CUDA_CACHE_MEMORY=false compute-sanitizer --tool $tool $extra \
        --report-api-errors no --error-exitcode 86 "$g" --gtest_brief=1
    done
  done
fi

if [ "${SKIP_BENCH:-0}" != 1 ]; then
step "cu-graph-bench --only=buckets" bench-graph-buckets.log "$root/bin/cu-graph-bench" --only=buckets
# Started with the watch off, so that it also times kernel launches before and after CUPTI
# subscribes; its rounds switch the check at run time.
step "cu-allocator-bench --only=detect" bench-alloc-detect.log env CUCTX_CAPTURE_WATCH=off \
  "$root/bin/cu-allocator-bench" --only=detect
fi

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
echo "revision: $(cat "$root/REVISION" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null)"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
grep -h -E 'verdict|floor' "$out/bench-graph-buckets.log" "$out/bench-alloc-detect.log" 2>/dev/null
grep -h -A5 'detect: CuDevice' "$out/bench-alloc-detect.log" 2>/dev/null
grep -h 'kernel launch' "$out/bench-alloc-detect.log" 2>/dev/null
! grep -q FAIL "$out/summary.txt"
